//! Actions: in one process (no network), and between two roslite processes on this host
//! (LOCALHOST discovery; their services and topics ride the same-host links, or RTPS over UDP
//! alone with those links off): a goal to completion with every feedback, a rejected goal, a
//! canceled goal, two goals at once, a server that goes away mid-goal, a client process killed
//! mid-goal, and results forgotten `result_timeout` after their goal ended; and, in a network
//! namespace of its own, feedback that a goal published before its client's feedback
//! subscription was discovered.

use std::io::BufRead;
use std::time::{Duration, Instant};

use roslite::action::ActionError;
use roslite::msgs::action_msgs::msg::GoalStatusArray;
use roslite::msgs::rosgraph_msgs::msg::Clock;
use roslite::msgs::test_msgs::action::{
    Fibonacci, Fibonacci_FeedbackMessage, Fibonacci_GetResult, Fibonacci_GetResult_Request,
    Fibonacci_Goal, Fibonacci_SendGoal, Fibonacci_SendGoal_Request,
};
use roslite::msgs::unique_identifier_msgs::msg::UUID;
use roslite::{
    ActionClient, Context, ContextOptions, Executor, GoalStatusCode, LocalTransports, NetworkMode,
    Node, RosArgs, Time,
};
use roslite_transport::netns::NetNs;

mod common;

use common::fibonacci::*;

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
    assert_eq!(
        client_node.action_names_and_types(),
        [(
            "/fibonacci".to_owned(),
            vec!["test_msgs/action/Fibonacci".to_owned()]
        )]
    );
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
fn in_one_process_a_dropped_client_fails_its_goals_futures() {
    let ctx = offline();
    let node = ctx.create_node("fibonacci").unwrap();
    let server = fibonacci_server(&node);
    let client = node.create_action_client::<Fibonacci>("fibonacci").unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_action_server(PATIENCE));
    let (goal, _log) = start_held_goal(&client);
    let result = goal.result();
    drop(client);
    assert_eq!(result.wait(PATIENCE).unwrap_err(), ActionError::ClientGone);
    // The server still has the goal; a client disconnecting does not end it.
    assert!(goal.goal_id() != roslite::GoalId::default());
    assert_eq!(server.goal_count(), 1);
    ctx.shutdown();
    spinner.join().unwrap();
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

#[test]
fn results_are_kept_result_timeout_of_ros_time_then_answered_as_unknown() {
    // Simulated time: the test moves the server's clock; nothing depends on how fast it runs.
    let ctx = Context::new(ContextOptions {
        network: NetworkMode::Off,
        args: RosArgs::parse(["actions", "--ros-args", "-p", "use_sim_time:=true"]).unwrap(),
        ..Default::default()
    })
    .unwrap();
    let server_node = ctx.create_node("fibonacci_server").unwrap();
    let client_node = ctx.create_node("fibonacci_client").unwrap();
    let timeout = Duration::from_secs(10);
    let server = server_node
        .create_action_server_with::<Fibonacci>(
            server_node.default_callback_group(),
            "fibonacci",
            timeout,
            |_, _| roslite::GoalResponse::AcceptAndExecute,
            |_| roslite::CancelResponse::Accept,
            |handle| {
                std::thread::spawn(move || execute(&handle));
            },
        )
        .unwrap();
    let client = client_node
        .create_action_client::<Fibonacci>("fibonacci")
        .unwrap();
    // What any ROS 2 client sends: a get_result request naming the goal.
    let get_result = client_node
        .create_client::<Fibonacci_GetResult>("/fibonacci/_action/get_result")
        .unwrap();
    let clock = client_node.create_publisher::<Clock>("/clock", 10).unwrap();
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
    let set_clock = |nanos: i64| {
        let time = Time::from_nanos(nanos);
        clock
            .publish(Clock {
                clock: time.to_msg(),
            })
            .unwrap();
        assert!(
            common::wait_until(PATIENCE, || server_node.now() == time),
            "the server's clock did not reach {time}"
        );
    };
    let start = 100_000_000_000;
    set_clock(start);
    assert!(client.wait_for_action_server(PATIENCE));
    let goal = send(&client, 5).0.wait(PATIENCE).unwrap();
    let result = goal.result().wait(PATIENCE).unwrap();
    assert_eq!(result.status, GoalStatusCode::Succeeded);
    let ask = || {
        get_result
            .call(
                Fibonacci_GetResult_Request {
                    goal_id: goal.goal_id().to_msg(),
                },
                PATIENCE,
            )
            .unwrap()
    };
    // It ended at `start` on the server's clock.
    let answer = ask();
    assert_eq!(answer.status, GoalStatusCode::Succeeded.code());
    assert_eq!(answer.result.sequence.to_vec(), fibonacci(5));
    // Just before result_timeout has passed: still kept.
    let timeout_ns = i64::try_from(timeout.as_nanos()).unwrap();
    set_clock(start + timeout_ns - 1_000_000);
    let answer = ask();
    assert_eq!(answer.status, GoalStatusCode::Succeeded.code());
    assert_eq!(answer.result.sequence.to_vec(), fibonacci(5));
    assert_eq!(server.goal_count(), 1);
    // Once it has passed: forgotten, and answered as rcl_action answers for a goal it does
    // not know (status UNKNOWN, an empty result).
    set_clock(start + timeout_ns + 1_000_000);
    let answer = ask();
    assert_eq!(answer.status, GoalStatusCode::Unknown.code());
    assert!(answer.result.sequence.is_empty());
    assert_eq!(server.goal_count(), 0);
    ctx.shutdown();
    spinner.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Two processes: this test binary again, as the server or the client.

/// The child serves /fibonacci; its value: the domain, then `udp` for RTPS alone.
const SERVER_ROLE: &str = "ROSLITE_ACTION_SERVER_DOMAIN";
/// The child starts a goal on /fibonacci and holds it; its value: the domain.
const CLIENT_ROLE: &str = "ROSLITE_ACTION_CLIENT_DOMAIN";

fn transports_named(name: Option<&str>) -> LocalTransports {
    match name {
        Some("udp") => LocalTransports::UDP_ONLY,
        _ => LocalTransports::default(),
    }
}

/// The server child's role: serves /fibonacci until its stdin closes, then exits.
fn serve_in_child(role: &str) {
    let mut words = role.split_whitespace();
    let domain = words.next().unwrap().parse().unwrap();
    let ctx = common::localhost_context(domain, transports_named(words.next()));
    let node = ctx.create_node("fibonacci_server").unwrap();
    let _server = fibonacci_server(&node);
    let _spinner = common::spin_in_background(&ctx, &node);
    println!("serving");
    wait_for_stdin_to_close();
}

/// The client child's role: starts a goal the server executes until canceled, says
/// `executing <goal id>` once its first feedback came, then waits for its stdin to close
/// (or to be killed).
fn hold_a_goal_in_child(role: &str) {
    let domain = role.trim().parse().unwrap();
    let (ctx, node, client) = client_context(domain, LocalTransports::default());
    let _spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_action_server(PATIENCE));
    let (goal, _log) = start_goal_until_canceled(&client);
    println!("executing {}", goal.goal_id());
    wait_for_stdin_to_close();
}

fn wait_for_stdin_to_close() -> ! {
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
    }
    std::process::exit(0);
}

/// Runs `test` of this binary in a child with `role` set to `value`; returns it once it
/// printed a line ending in `ready`, and that line.
fn spawn_child(test: &str, role: &str, value: &str, ready: &str) -> (std::process::Child, String) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(role, value)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let line = lines
        .find_map(|l| l.ok().filter(|l| l.contains(ready)))
        .unwrap_or_else(|| panic!("the {role} child never said {ready:?}"));
    (child, line)
}

fn spawn_server(test: &str, domain: u32, transports: &str) -> std::process::Child {
    spawn_child(
        test,
        SERVER_ROLE,
        &format!("{domain} {transports}"),
        "serving",
    )
    .0
}

fn client_context(
    domain: u32,
    transports: LocalTransports,
) -> (Context, Node, ActionClient<Fibonacci>) {
    let ctx = common::localhost_context(domain, transports);
    let node = ctx.create_node("fibonacci_client").unwrap();
    let client = node.create_action_client::<Fibonacci>("fibonacci").unwrap();
    (ctx, node, client)
}

/// A goal the test server executes until a cancel request comes, once it executes.
fn start_goal_until_canceled(
    client: &ActionClient<Fibonacci>,
) -> (roslite::action::ClientGoalHandle<Fibonacci>, FeedbackLog) {
    let (future, log) = send(client, UNTIL_CANCELED);
    let goal = future.wait(PATIENCE).unwrap();
    assert!(common::wait_until(PATIENCE, || !log
        .lock()
        .unwrap()
        .is_empty()));
    (goal, log)
}

/// The remote feedback endpoint's transport, as this context sees it.
fn feedback_transport(ctx: &Context) -> Option<&'static str> {
    ctx.graph()
        .endpoints()
        .iter()
        .find(|e| !e.local && e.topic == "/fibonacci/_action/feedback")
        .map(|e| e.transport)
}

fn goals_complete_between_two_processes(test: &str, domain: u32, udp_only: bool) {
    let (transports, name) = if udp_only {
        (LocalTransports::UDP_ONLY, "udp")
    } else {
        (LocalTransports::default(), "default")
    };
    let mut server = spawn_server(test, domain, name);
    let (ctx, node, client) = client_context(domain, transports);
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_action_server(PATIENCE));
    // Shared memory unless the links are off; then RTPS over UDP, requests and replies
    // correlated by sample identity.
    assert!(common::wait_until(PATIENCE, || feedback_transport(&ctx).is_some()));
    assert_eq!(
        feedback_transport(&ctx),
        Some(if udp_only { "udp" } else { "shm" })
    );
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
fn between_two_processes_goals_complete_are_rejected_canceled_and_run_at_once() {
    const TEST: &str = "between_two_processes_goals_complete_are_rejected_canceled_and_run_at_once";
    if let Ok(role) = std::env::var(SERVER_ROLE) {
        return serve_in_child(&role);
    }
    goals_complete_between_two_processes(TEST, test_domain(0), false);
}

#[test]
fn between_two_processes_over_rtps_alone_goals_complete_are_rejected_canceled_and_run_at_once() {
    const TEST: &str =
        "between_two_processes_over_rtps_alone_goals_complete_are_rejected_canceled_and_run_at_once";
    if let Ok(role) = std::env::var(SERVER_ROLE) {
        return serve_in_child(&role);
    }
    goals_complete_between_two_processes(TEST, test_domain(2), true);
}

#[test]
fn between_two_processes_a_server_that_dies_fails_the_result_future() {
    const TEST: &str = "between_two_processes_a_server_that_dies_fails_the_result_future";
    if let Ok(role) = std::env::var(SERVER_ROLE) {
        return serve_in_child(&role);
    }
    let domain = test_domain(1);
    let mut server = spawn_server(TEST, domain, "default");
    let (ctx, node, client) = client_context(domain, LocalTransports::default());
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_action_server(PATIENCE));
    let (goal, _log) = start_held_goal(&client);
    let (waiting, _waiting_log) = send(&client, HOLD);
    let waiting = waiting.wait(PATIENCE).unwrap();
    let killed = Instant::now();
    server.kill().unwrap(); // SIGKILL: no goodbye on any path
    server.wait().unwrap();
    assert_server_gone(goal.result().wait(PATIENCE), goal.goal_id());
    // The same-host links closed with the process, which told discovery: well before the
    // server's 20 s lease would have run out.
    let noticed = killed.elapsed();
    assert!(
        noticed < Duration::from_secs(10),
        "the dead server was noticed only after {noticed:?}"
    );
    assert_server_gone(waiting.result().wait(PATIENCE), waiting.goal_id());
    assert!(!client.action_server_is_ready());
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn between_two_processes_a_killed_client_leaves_its_goal_running_and_others_are_served() {
    const TEST: &str =
        "between_two_processes_a_killed_client_leaves_its_goal_running_and_others_are_served";
    if let Ok(role) = std::env::var(CLIENT_ROLE) {
        return hold_a_goal_in_child(&role);
    }
    let domain = test_domain(3);
    // The server in this process, results kept for a short while: the orphaned goal's result
    // must be forgotten in the end.
    let ctx = common::localhost_context(domain, LocalTransports::default());
    let node = ctx.create_node("fibonacci_server").unwrap();
    let handles = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = {
        let handles = handles.clone();
        node.create_action_server_with::<Fibonacci>(
            node.default_callback_group(),
            "fibonacci",
            Duration::from_millis(500),
            |_, goal| {
                if goal.order < 0 {
                    roslite::GoalResponse::Reject
                } else {
                    roslite::GoalResponse::AcceptAndExecute
                }
            },
            |_| roslite::CancelResponse::Accept,
            move |handle| {
                handles.lock().unwrap().push(handle.clone());
                std::thread::spawn(move || execute(&handle));
            },
        )
        .unwrap()
    };
    let spinner = common::spin_in_background(&ctx, &node);
    let (mut child, line) = spawn_child(TEST, CLIENT_ROLE, &domain.to_string(), "executing ");
    let orphan = handles.lock().unwrap()[0].clone();
    assert!(line.ends_with(&orphan.goal_id().to_string()), "{line}");
    child.kill().unwrap(); // SIGKILL, mid-goal
    child.wait().unwrap();
    // The server learns the client is gone (its same-host links closed with it)...
    let graph = ctx.graph();
    assert!(
        common::wait_until(PATIENCE, || !graph
            .endpoints()
            .iter()
            .any(|e| !e.local && e.topic.starts_with("/fibonacci/_action/"))),
        "the server still sees the killed client"
    );
    // ...and keeps its goal executing, as rclcpp and rclpy do: nothing cancels it.
    assert_eq!(orphan.status(), GoalStatusCode::Executing);
    assert_eq!(server.goal_count(), 1);
    // Another client is served as before, the orphaned goal still running beside its goals.
    let (other_ctx, other_node, client) = client_context(domain, LocalTransports::default());
    let other_spinner = common::spin_in_background(&other_ctx, &other_node);
    assert!(client.wait_for_action_server(PATIENCE));
    assert_succeeds_with_every_feedback(&client, 6);
    assert_rejected(&client);
    assert_eq!(orphan.status(), GoalStatusCode::Executing);
    // Canceling every goal reaches the orphan too; it ends canceled, and its result is
    // forgotten once result_timeout has passed (the only goal left then is none).
    let answer = client.cancel_all_goals().unwrap().wait(PATIENCE).unwrap();
    assert_eq!(answer.goals_canceling.len(), 1);
    assert_eq!(answer.goals_canceling[0].goal_id, orphan.goal_id().to_msg());
    assert!(common::wait_until(PATIENCE, || orphan.status()
        == GoalStatusCode::Canceled
        || orphan.status() == GoalStatusCode::Unknown));
    assert!(common::wait_until(PATIENCE, || server.goal_count() == 0));
    assert_eq!(orphan.status(), GoalStatusCode::Unknown);
    other_ctx.shutdown();
    other_spinner.join().unwrap();
    ctx.shutdown();
    spinner.join().unwrap();
}

/// A context offering `transports` beside UDP, on the calling thread's network namespace.
fn networked(domain: u32, transports: LocalTransports) -> Context {
    let discovery = roslite_transport::DiscoveryConfig {
        domain_id: domain,
        range: roslite_transport::DiscoveryRange::Subnet,
        ..Default::default()
    };
    Context::new(ContextOptions {
        domain_id: domain,
        network: NetworkMode::Rtps(roslite_transport::TransportConfig::new(discovery)),
        local_transports: transports,
        ..Default::default()
    })
    .expect("start RTPS inside the namespace")
}

/// A client in another process that sends a goal before this process discovered its
/// feedback subscription (as an rclpy client can, when its subscription's announcement comes
/// late): the server executes at once, and its feedback, which a volatile topic would have
/// lost, waits for the subscription; the client gets all of it, and the result after it. The
/// client here subscribes to the feedback only after its goal ended.
/// Runs in a network namespace of its own (all of it: a same-host link is set up from the
/// thread that asks for it, and its sockets are the namespace's).
fn feedback_published_before_the_client_subscribed_reaches_it(
    ns_name: &str,
    transports: LocalTransports,
) {
    let ns = NetNs::create(ns_name).expect("create a network namespace");
    ns.run(|| late_feedback_subscriber(transports))
        .expect("run in the test namespace");
}

fn late_feedback_subscriber(transports: LocalTransports) {
    const DOMAIN: u32 = 7;
    let server_ctx = networked(DOMAIN, transports);
    let server_node = server_ctx.create_node("fibonacci_server").unwrap();
    let server = fibonacci_server(&server_node);
    let server_spinner = common::spin_in_background(&server_ctx, &server_node);
    let ctx = networked(DOMAIN, transports);
    let node = ctx.create_node("late_listener").unwrap();
    let send_goal = node
        .create_client::<Fibonacci_SendGoal>("/fibonacci/_action/send_goal")
        .unwrap();
    let get_result = node
        .create_client::<Fibonacci_GetResult>("/fibonacci/_action/get_result")
        .unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(send_goal.wait_for_service(PATIENCE));
    assert!(get_result.wait_for_service(PATIENCE));
    let goal_id = UUID { uuid: [9; 16] };
    let accepted = send_goal
        .call(
            Fibonacci_SendGoal_Request {
                goal_id: goal_id.clone(),
                goal: Fibonacci_Goal { order: 10 },
            },
            PATIENCE,
        )
        .unwrap();
    assert!(accepted.accepted);
    // The goal's execution publishes its feedback and succeeds at once; the status topic
    // (transient local) says when it ended. Without its feedback subscription the client
    // would have lost that feedback by then.
    let succeeded = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _status = {
        let succeeded = succeeded.clone();
        let goal_id = goal_id.clone();
        node.create_subscription(
            "/fibonacci/_action/status",
            roslite::action::action_status_qos(),
            move |m: GoalStatusArray| {
                let ended = m.status_list.iter().any(|s| {
                    s.goal_info.goal_id == goal_id && s.status == GoalStatusCode::Succeeded.code()
                });
                if ended {
                    succeeded.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            },
        )
        .unwrap()
    };
    assert!(
        common::wait_until(PATIENCE, || succeeded
            .load(std::sync::atomic::Ordering::SeqCst)),
        "the goal did not succeed"
    );
    assert_eq!(server.goal_count(), 1);
    std::thread::sleep(Duration::from_millis(200));
    let feedback = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let _subscription = {
        let feedback = feedback.clone();
        node.create_subscription(
            "/fibonacci/_action/feedback",
            roslite::action::action_feedback_qos(),
            move |m: Fibonacci_FeedbackMessage| {
                feedback.lock().unwrap().push(m.feedback.sequence.to_vec());
            },
        )
        .unwrap()
    };
    let result = get_result
        .call(Fibonacci_GetResult_Request { goal_id }, PATIENCE)
        .unwrap();
    assert_eq!(result.status, GoalStatusCode::Succeeded.code());
    assert!(
        common::wait_until(PATIENCE, || feedback.lock().unwrap().len() == 9),
        "feedback received: {:?}",
        feedback.lock().unwrap()
    );
    let expected: Vec<Vec<i32>> = (2..=10).map(fibonacci).collect();
    assert_eq!(*feedback.lock().unwrap(), expected);
    ctx.shutdown();
    server_ctx.shutdown();
    spinner.join().unwrap();
    server_spinner.join().unwrap();
}

#[test]
fn feedback_published_before_the_client_subscribed_reaches_it_over_rtps() {
    feedback_published_before_the_client_subscribed_reaches_it(
        "act-late-udp",
        LocalTransports::UDP_ONLY,
    );
}

#[test]
fn feedback_published_before_the_client_subscribed_reaches_it_over_shared_memory() {
    feedback_published_before_the_client_subscribed_reaches_it(
        "act-late-shm",
        LocalTransports::default(),
    );
}
