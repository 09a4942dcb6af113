//! Actions: in one process (no network), and between two roslite processes on this host
//! (LOCALHOST discovery; their services and topics ride the same-host links): a goal to
//! completion with every feedback, a rejected goal, a canceled goal, two goals at once, and a
//! server that goes away mid-goal.

use roslite::action::ActionError;
use roslite::msgs::test_msgs::action::{Fibonacci, Fibonacci_Goal};
use roslite::{
    ActionClient, Context, ContextOptions, Executor, LocalTransports, NetworkMode, Node,
};

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
