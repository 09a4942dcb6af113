//! roslite actions against real ROS 2 (rclpy over Fast DDS), both ways, inside a network
//! namespace made for the test (only `lo`, with multicast): a roslite server driven by an
//! rclpy action client, and an rclpy action server driven by a roslite client, with
//! `test_msgs/action/Fibonacci` (PyPI `ros-test-msgs`). rclpy's graph lists the roslite
//! server as an action.
//!
//! The same both ways against a plain Cyclone DDS peer (PyPI `cyclonedds`,
//! `interop/python/cyclone_action.py`) that lays the action out as rcl_action does and
//! correlates its services as rmw_cyclonedds does, with the request header in the payload
//! rather than Fast DDS's sample identity: no ROS 2 wheel ships rmw_cyclonedds_cpp.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use roslite::msgs::test_msgs::action::Fibonacci;
use roslite_transport::netns::NetNs;

mod common;

use common::fibonacci::*;

const DOMAIN: u32 = 0;

#[test]
fn an_rclpy_client_drives_a_roslite_server() {
    let ns = NetNs::create("act-rclpy-cli").expect("create a network namespace");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("roslite_fibonacci").unwrap();
    let server = fibonacci_server(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    let client = common::LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "action_peer.py",
        &["client", "60"],
    ));
    let out = client.finish(Instant::now() + Duration::from_secs(90));
    ctx.shutdown();
    spinner.join().unwrap();
    assert!(out.success, "the rclpy client failed: {out}");
    assert_eq!(out.values("FEEDBACK_COUNT "), ["9 OK"], "{out}");
    // GoalStatus codes: 4 succeeded, 5 canceled; CancelGoal: 0 ERROR_NONE.
    assert_eq!(
        out.values("RESULT "),
        ["4 [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55]"],
        "{out}"
    );
    assert_eq!(out.values("REJECTED"), [""], "{out}");
    assert_eq!(out.values("CANCEL "), ["0 1"], "{out}");
    assert_eq!(out.values("CANCELED_RESULT "), ["5 [0, 1]"], "{out}");
    assert_eq!(
        out.values("PARALLEL_RESULT "),
        ["4 [0, 1, 1, 2, 3, 5, 8, 13, 21] 7"],
        "{out}"
    );
    // The held goal was executing (2) when the other ended.
    assert_eq!(out.values("CANCEL_HELD "), ["2 0"], "{out}");
    assert_eq!(out.values("HELD_RESULT "), ["5"], "{out}");
    assert_eq!(
        out.values("ACTIONS "),
        ["/fibonacci test_msgs/action/Fibonacci"],
        "{out}"
    );
    assert_eq!(out.values("DONE"), [""], "{out}");
    assert_eq!(server.goal_count(), 4);
}

#[test]
fn a_roslite_client_drives_an_rclpy_server() {
    let ns = NetNs::create("act-rclpy-srv").expect("create a network namespace");
    let mut server = common::LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "action_peer.py",
        &["serve", "120"],
    ));
    assert!(
        server
            .wait_line(Instant::now() + Duration::from_secs(30), |l| l == "READY")
            .is_some(),
        "the rclpy server did not start"
    );
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("roslite_client").unwrap();
    let client = node.create_action_client::<Fibonacci>("fibonacci").unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(
        client.wait_for_action_server(PATIENCE),
        "the rclpy action server never appeared"
    );
    assert_succeeds_with_every_feedback(&client, 10);
    assert_rejected(&client);
    assert_canceled(&client);
    assert_two_goals_run_at_once(&client);
    // The rclpy process dies mid-goal: the result future fails, saying so.
    let (goal, _log) = start_held_goal(&client);
    server.kill();
    assert_server_gone(goal.result().wait(PATIENCE), goal.goal_id());
    assert!(!client.action_server_is_ready());
    ctx.shutdown();
    spinner.join().unwrap();
}

const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>"#;

fn cyclone(ns: &NetNs, args: &[&str]) -> Command {
    let mut command = ns.command(common::python());
    command
        .arg(common::workspace().join("interop/python/cyclone_action.py"))
        .args(args)
        .env("ROS_DOMAIN_ID", DOMAIN.to_string())
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[test]
fn a_cyclone_style_client_drives_a_roslite_server() {
    let ns = NetNs::create("act-cyc-cli").expect("create a network namespace");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("roslite_fibonacci").unwrap();
    let server = fibonacci_server(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    let client = common::LinePeer::spawn(cyclone(&ns, &["client", "60"]));
    let out = client.finish(Instant::now() + Duration::from_secs(90));
    ctx.shutdown();
    spinner.join().unwrap();
    // Every request carried the request header (a request without one does not decode here),
    // and every reply came back with the client's id and sequence.
    assert!(out.success, "the Cyclone client failed: {out}");
    assert_eq!(out.values("FEEDBACK_COUNT "), ["9 OK"], "{out}");
    assert_eq!(
        out.values("RESULT "),
        ["4 [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55]"],
        "{out}"
    );
    assert_eq!(out.values("REJECTED"), [""], "{out}");
    // CancelGoal: 0 ERROR_NONE, one goal, the one asked for; then 3 ERROR_GOAL_TERMINATED.
    assert_eq!(out.values("CANCEL "), ["0 1 SAME"], "{out}");
    assert_eq!(out.values("CANCELED_RESULT "), ["5 [0, 1]"], "{out}");
    assert_eq!(out.values("CANCEL_AGAIN "), ["3"], "{out}");
    assert_eq!(out.values("FOREIGN "), ["0"], "{out}");
    assert_eq!(out.values("DONE"), [""], "{out}");
    assert_eq!(server.goal_count(), 2);
}

#[test]
fn a_roslite_client_drives_a_cyclone_style_server() {
    let ns = NetNs::create("act-cyc-srv").expect("create a network namespace");
    let mut server = common::LinePeer::spawn(cyclone(&ns, &["serve", "120"]));
    assert!(
        server
            .wait_line(Instant::now() + Duration::from_secs(30), |l| l == "READY")
            .is_some(),
        "the Cyclone server did not start"
    );
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("roslite_client").unwrap();
    let client = node.create_action_client::<Fibonacci>("fibonacci").unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(
        client.wait_for_action_server(PATIENCE),
        "the Cyclone action server never appeared"
    );
    // Its volatile readers take requests, and its feedback reaches us, only once it matched
    // our endpoints too.
    assert!(
        server
            .wait_line(Instant::now() + PATIENCE, |l| l == "MATCHED")
            .is_some(),
        "the Cyclone server never matched the client"
    );
    // Each request goes out with the request header (the server decodes nothing else), and
    // each reply is taken by its header.
    assert_succeeds_with_every_feedback(&client, 10);
    assert_rejected(&client);
    assert_canceled(&client);
    assert_two_goals_run_at_once(&client);
    // The Cyclone process dies mid-goal: the result future fails, saying so (when discovery
    // gives up on the participant: no same-host link tells us sooner).
    let (goal, _log) = start_held_goal(&client);
    server.kill();
    assert_server_gone(goal.result().wait(PATIENCE), goal.goal_id());
    assert!(!client.action_server_is_ready());
    ctx.shutdown();
    spinner.join().unwrap();
}
