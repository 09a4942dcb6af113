//! roslite actions against real ROS 2 (rclpy over Fast DDS), both ways, inside a network
//! namespace made for the test (only `lo`, with multicast): a roslite server driven by an
//! rclpy action client, and an rclpy action server driven by a roslite client, with
//! `test_msgs/action/Fibonacci` (PyPI `ros-test-msgs`). rclpy's graph lists the roslite
//! server as an action.

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
