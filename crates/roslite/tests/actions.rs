//! Actions: in one process (no network), and between two roslite processes on this host
//! (LOCALHOST discovery; their services and topics ride the same-host links): a goal to
//! completion with every feedback, a rejected goal, a canceled goal, two goals at once, and a
//! server that goes away mid-goal.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::action::{ActionError, GoalResponse, ServerGoalHandle, WrappedResult};
use roslite::msgs::action_msgs::srv::CancelGoal_Response;
use roslite::msgs::test_msgs::action::{Fibonacci, Fibonacci_Goal, Fibonacci_Result};
use roslite::{
    ActionClient, ActionServer, CancelResponse, Context, ContextOptions, Executor, GoalStatusCode,
    LocalTransports, NetworkMode, Node,
};

mod common;

/// Long enough for anything that works; the tests wait for events, never for time.
const PATIENCE: Duration = Duration::from_secs(30);
/// A goal the test server executes until a cancel request comes.
const UNTIL_CANCELED: i32 = 1000;
/// A goal the test server holds until the server goes away.
const HOLD: i32 = 2000;

fn test_domain(offset: u32) -> u32 {
    assert!(offset < 4, "test domain offsets are below 4");
    220 + (std::process::id() % 3) * 4 + offset
}

fn offline() -> Context {
    Context::new(ContextOptions {
        network: NetworkMode::Off,
        ..Default::default()
    })
    .unwrap()
}

/// The sequence `order` Fibonacci steps long, from `[0, 1]`.
fn fibonacci(order: i32) -> Vec<i32> {
    let mut sequence = vec![0, 1];
    for i in 1..order.max(1) as usize {
        sequence.push(sequence[i] + sequence[i - 1]);
    }
    sequence
}

/// The test server: rejects negative orders; executes each goal on a thread of its own,
/// publishing the sequence after every step.
fn fibonacci_server(node: &Node) -> ActionServer<Fibonacci> {
    node.create_action_server::<Fibonacci>(
        "fibonacci",
        |_, goal| {
            if goal.order < 0 {
                GoalResponse::Reject
            } else {
                GoalResponse::AcceptAndExecute
            }
        },
        |_| CancelResponse::Accept,
        |handle| {
            std::thread::spawn(move || execute(&handle));
        },
    )
    .unwrap()
}

fn execute(handle: &ServerGoalHandle<Fibonacci>) {
    let order = handle.goal().order;
    let feedback = |sequence: &[i32]| {
        handle.publish_feedback(roslite::msgs::test_msgs::action::Fibonacci_Feedback {
            sequence: sequence.to_vec().into(),
        })
    };
    match order {
        UNTIL_CANCELED | HOLD => {
            let sequence = fibonacci(1);
            feedback(&sequence).unwrap();
            while !(order == UNTIL_CANCELED && handle.is_canceling()) {
                if handle.status() == GoalStatusCode::Unknown {
                    return; // the server is gone
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            handle
                .canceled(Fibonacci_Result {
                    sequence: sequence.into(),
                })
                .unwrap();
        }
        _ => {
            let mut sequence = vec![0, 1];
            for i in 1..order as usize {
                sequence.push(sequence[i] + sequence[i - 1]);
                feedback(&sequence).unwrap();
            }
            handle
                .succeed(Fibonacci_Result {
                    sequence: sequence.into(),
                })
                .unwrap();
        }
    }
}

type FeedbackLog = Arc<Mutex<Vec<Vec<i32>>>>;

/// Sends a goal of `order`, logging its feedback.
fn send(
    client: &ActionClient<Fibonacci>,
    order: i32,
) -> (roslite::action::GoalFuture<Fibonacci>, FeedbackLog) {
    let log = FeedbackLog::default();
    let sink = log.clone();
    let future = client
        .send_goal_with_feedback(Fibonacci_Goal { order }, move |_, feedback| {
            sink.lock().unwrap().push(feedback.sequence.to_vec());
        })
        .unwrap();
    (future, log)
}

fn expected_feedback(order: i32) -> Vec<Vec<i32>> {
    (2..=order).map(|n| fibonacci(n)).collect()
}

fn assert_succeeds_with_every_feedback(client: &ActionClient<Fibonacci>, order: i32) {
    let (future, log) = send(client, order);
    let goal = future.wait(PATIENCE).expect("the goal is accepted");
    let result: WrappedResult<Fibonacci> = goal.result().wait(PATIENCE).unwrap();
    assert_eq!(result.status, GoalStatusCode::Succeeded);
    assert_eq!(result.goal_id, goal.goal_id());
    assert_eq!(result.result.sequence.to_vec(), fibonacci(order));
    // Feedback travels on its topic, the result as a service reply: the last feedback may
    // still be on its way.
    let expected = expected_feedback(order);
    assert!(
        common::wait_until(PATIENCE, || log.lock().unwrap().len() >= expected.len()),
        "feedback so far: {:?}",
        log.lock().unwrap()
    );
    assert_eq!(*log.lock().unwrap(), expected);
}

fn assert_rejected(client: &ActionClient<Fibonacci>) {
    let (future, log) = send(client, -1);
    let id = future.goal_id();
    match future.wait(PATIENCE) {
        Err(ActionError::Rejected { action, goal }) => {
            assert_eq!(action, "/fibonacci");
            assert_eq!(goal, id);
        }
        other => panic!("expected a rejection, got {:?}", other.map(|g| g.goal_id())),
    }
    assert!(log.lock().unwrap().is_empty());
}

fn assert_canceled(client: &ActionClient<Fibonacci>) {
    let (future, log) = send(client, UNTIL_CANCELED);
    let goal = future.wait(PATIENCE).unwrap();
    // Executing once its first feedback is here.
    assert!(common::wait_until(PATIENCE, || !log
        .lock()
        .unwrap()
        .is_empty()));
    let answer = client.cancel_goal(&goal).unwrap().wait(PATIENCE).unwrap();
    assert_eq!(answer.return_code, CancelGoal_Response::ERROR_NONE);
    assert_eq!(answer.goals_canceling.len(), 1);
    assert_eq!(answer.goals_canceling[0].goal_id, goal.goal_id().to_msg());
    let result = client.get_result(&goal).wait(PATIENCE).unwrap();
    assert_eq!(result.status, GoalStatusCode::Canceled);
    assert_eq!(result.result.sequence.to_vec(), fibonacci(1));
    // A second cancel finds the goal ended.
    let again = client.cancel_goal(&goal).unwrap().wait(PATIENCE).unwrap();
    assert_eq!(
        again.return_code,
        CancelGoal_Response::ERROR_GOAL_TERMINATED
    );
}

fn assert_two_goals_run_at_once(client: &ActionClient<Fibonacci>) {
    // One goal holds until canceled while the other runs to its end: they overlap.
    let (held, held_log) = send(client, UNTIL_CANCELED);
    let (quick, quick_log) = send(client, 8);
    let held = held.wait(PATIENCE).unwrap();
    let quick = quick.wait(PATIENCE).unwrap();
    assert_ne!(held.goal_id(), quick.goal_id());
    let quick_result = quick.result().wait(PATIENCE).unwrap();
    assert_eq!(quick_result.status, GoalStatusCode::Succeeded);
    assert_eq!(quick_result.result.sequence.to_vec(), fibonacci(8));
    assert!(held.status().is_active(), "{:?}", held.status());
    assert!(common::wait_until(PATIENCE, || quick_log
        .lock()
        .unwrap()
        .len()
        == 7));
    assert_eq!(*quick_log.lock().unwrap(), expected_feedback(8));
    let answer = client.cancel_all_goals().unwrap().wait(PATIENCE).unwrap();
    assert_eq!(answer.return_code, CancelGoal_Response::ERROR_NONE);
    assert_eq!(
        answer.goals_canceling.len(),
        1,
        "only the held goal was active"
    );
    let held_result = held.result().wait(PATIENCE).unwrap();
    assert_eq!(held_result.status, GoalStatusCode::Canceled);
    assert_eq!(*held_log.lock().unwrap(), vec![fibonacci(1)]);
}

/// Starts a goal the server holds and returns its result future once the goal executes.
fn start_held_goal(
    client: &ActionClient<Fibonacci>,
) -> (roslite::action::ClientGoalHandle<Fibonacci>, FeedbackLog) {
    let (future, log) = send(client, HOLD);
    let goal = future.wait(PATIENCE).unwrap();
    assert!(common::wait_until(PATIENCE, || !log
        .lock()
        .unwrap()
        .is_empty()));
    (goal, log)
}

fn assert_server_gone(result: Result<WrappedResult<Fibonacci>, ActionError>, id: roslite::GoalId) {
    match result {
        Err(error @ ActionError::ServerGone { .. }) => {
            assert_eq!(
                error,
                ActionError::ServerGone {
                    action: "/fibonacci".into(),
                    goal: id
                }
            );
            assert!(error.to_string().contains("went away"), "{error}");
        }
        other => panic!("expected ServerGone, got {other:?}"),
    }
}

#[test]
fn in_one_process_goals_complete_are_rejected_canceled_and_run_at_once() {
    let ctx = offline();
    let server_node = ctx.create_node("fibonacci_server").unwrap();
    let client_node = ctx.create_node("fibonacci_client").unwrap();
    let server = fibonacci_server(&server_node);
    assert_eq!(
        server.service_names(),
        [
            "/fibonacci/_action/send_goal",
            "/fibonacci/_action/cancel_goal",
            "/fibonacci/_action/get_result"
        ]
    );
    let client = client_node
        .create_action_client::<Fibonacci>("fibonacci")
        .unwrap();
    let spinner = {
        let ctx = ctx.clone();
        let (a, b) = (server_node.clone(), client_node.clone());
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&a);
            executor.add_node(&b);
            executor.spin();
        })
    };
    assert!(client.wait_for_action_server(PATIENCE));
    assert_succeeds_with_every_feedback(&client, 10);
    assert_rejected(&client);
    assert_canceled(&client);
    assert_two_goals_run_at_once(&client);
    // Ended goals are kept for their result_timeout (10 s): the four accepted ones.
    assert_eq!(server.goal_count(), 4);
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn in_one_process_a_dropped_server_fails_the_result_future() {
    let ctx = offline();
    let server_node = ctx.create_node("fibonacci_server").unwrap();
    let client_node = ctx.create_node("fibonacci_client").unwrap();
    let server = fibonacci_server(&server_node);
    let client = client_node
        .create_action_client::<Fibonacci>("fibonacci")
        .unwrap();
    let spinner = common::spin_in_background(&ctx, &server_node);
    let client_spinner = common::spin_in_background(&ctx, &client_node);
    assert!(client.wait_for_action_server(PATIENCE));
    let (goal, _log) = start_held_goal(&client);
    drop(server);
    assert_server_gone(goal.result().wait(PATIENCE), goal.goal_id());
    assert!(!client.action_server_is_ready());
    ctx.shutdown();
    spinner.join().unwrap();
    client_spinner.join().unwrap();
}

#[test]
fn a_goal_for_an_action_nobody_serves_fails_at_once_without_a_network() {
    let ctx = offline();
    let node = ctx.create_node("lonely").unwrap();
    let client = node.create_action_client::<Fibonacci>("fibonacci").unwrap();
    assert!(!client.action_server_is_ready());
    match client.send_goal(Fibonacci_Goal { order: 3 }) {
        Err(ActionError::Call(roslite::CallError::NoServer { service })) => {
            assert_eq!(service, "/fibonacci/_action/send_goal");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a goal left without a server"),
    }
}

// ---------------------------------------------------------------------------------------------
// Two processes: this test binary again, as the server.

const SERVER_ROLE: &str = "ROSLITE_ACTION_SERVER_DOMAIN";

/// The child's role: serves /fibonacci until its stdin closes, then exits.
fn serve_in_child(domain: u32) {
    let ctx = common::localhost_context(domain, LocalTransports::default());
    let node = ctx.create_node("fibonacci_server").unwrap();
    let _server = fibonacci_server(&node);
    let _spinner = common::spin_in_background(&ctx, &node);
    println!("serving");
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
    }
    std::process::exit(0);
}

fn spawn_server(test: &str, domain: u32) -> std::process::Child {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(SERVER_ROLE, domain.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.ends_with("serving"))),
        "the server process did not start"
    );
    child
}

fn client_context(domain: u32) -> (Context, Node, ActionClient<Fibonacci>) {
    let ctx = common::localhost_context(domain, LocalTransports::default());
    let node = ctx.create_node("fibonacci_client").unwrap();
    let client = node.create_action_client::<Fibonacci>("fibonacci").unwrap();
    (ctx, node, client)
}

#[test]
fn between_two_processes_goals_complete_are_rejected_canceled_and_run_at_once() {
    const TEST: &str = "between_two_processes_goals_complete_are_rejected_canceled_and_run_at_once";
    if let Ok(domain) = std::env::var(SERVER_ROLE) {
        return serve_in_child(domain.parse().unwrap());
    }
    let domain = test_domain(0);
    let mut server = spawn_server(TEST, domain);
    let (ctx, node, client) = client_context(domain);
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_action_server(PATIENCE));
    // The goal's services ride the same-host links, not RTPS.
    let graph = ctx.graph();
    assert!(common::wait_until(PATIENCE, || graph
        .endpoints()
        .iter()
        .any(|e| !e.local && e.topic == "/fibonacci/_action/feedback")));
    assert_succeeds_with_every_feedback(&client, 10);
    assert_rejected(&client);
    assert_canceled(&client);
    assert_two_goals_run_at_once(&client);
    ctx.shutdown();
    spinner.join().unwrap();
    drop(server.stdin.take());
    server.wait().unwrap();
}

#[test]
fn between_two_processes_a_server_that_dies_fails_the_result_future() {
    const TEST: &str = "between_two_processes_a_server_that_dies_fails_the_result_future";
    if let Ok(domain) = std::env::var(SERVER_ROLE) {
        return serve_in_child(domain.parse().unwrap());
    }
    let domain = test_domain(1);
    let mut server = spawn_server(TEST, domain);
    let (ctx, node, client) = client_context(domain);
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_action_server(PATIENCE));
    let (goal, _log) = start_held_goal(&client);
    server.kill().unwrap(); // SIGKILL: no goodbye on any path
    server.wait().unwrap();
    assert_server_gone(goal.result().wait(PATIENCE), goal.goal_id());
    ctx.shutdown();
    spinner.join().unwrap();
}
