//! `roslite action list|type|info|send_goal` against a real ROS 2 action server (rclpy over
//! Fast DDS, `interop/python/action_peer.py`), inside a network namespace made for the test.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};

use roslite_transport::netns::{stop_gracefully, NetNs, STOP_GRACE};

const DOMAIN: u32 = 0;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rclpy_server(ns: &NetNs) -> Child {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs rclpy",
        python.display()
    );
    let mut child = ns
        .command(python)
        .arg(workspace().join("interop/python/action_peer.py"))
        .args(["serve", "120"])
        .env("ROS_DOMAIN_ID", DOMAIN.to_string())
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l == "READY")),
        "the rclpy action server did not start"
    );
    // Its further lines (GOAL ...) are not read; a pipe holds far more than they fill.
    std::mem::forget(lines);
    child
}

fn roslite(ns: &NetNs, args: &[&str]) -> String {
    let output = ns
        .command(env!("CARGO_BIN_EXE_roslite"))
        .args(args)
        .env("ROS_DOMAIN_ID", DOMAIN.to_string())
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("AMENT_PREFIX_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "roslite {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn action_commands_see_and_drive_an_rclpy_server() {
    let ns = NetNs::create("act-cli").expect("create a network namespace");
    let mut server = rclpy_server(&ns);
    // Node names come with ros_discovery_info: a longer spin than the default is allowed.
    let list = roslite(&ns, &["action", "list", "-t", "--spin-time", "10"]);
    assert_eq!(list, "/fibonacci [test_msgs/action/Fibonacci]\n");
    assert_eq!(
        roslite(&ns, &["action", "type", "/fibonacci", "--spin-time", "10"]),
        "test_msgs/action/Fibonacci\n"
    );
    assert_eq!(
        roslite(
            &ns,
            &[
                "action",
                "find",
                "test_msgs/action/Fibonacci",
                "--spin-time",
                "10"
            ]
        ),
        "/fibonacci\n"
    );
    assert_eq!(
        roslite(
            &ns,
            &[
                "action",
                "find",
                "example_interfaces/Fibonacci",
                "-c",
                "--spin-time",
                "0.5"
            ]
        ),
        "0\n",
        "another type of the same name is another type"
    );
    assert_eq!(
        roslite(
            &ns,
            &["action", "info", "/fibonacci", "-t", "--spin-time", "10"]
        ),
        "Action: /fibonacci\nAction clients: 0\nAction servers: 1\n    \
         /py_action_serve [test_msgs/action/Fibonacci]\n"
    );
    let sent = roslite(
        &ns,
        &[
            "action",
            "send_goal",
            "/fibonacci",
            "test_msgs/action/Fibonacci",
            "{order: 3}",
            "--feedback",
        ],
    );
    let id = sent
        .lines()
        .find_map(|l| l.strip_prefix("Goal accepted with ID: "))
        .unwrap_or_else(|| panic!("no goal id in:\n{sent}"));
    assert_eq!(id.len(), 32, "{id}");
    let expected = format!(
        "Waiting for an action server to become available...\n\
         Sending goal:\n     order: 3\n\n\
         Goal accepted with ID: {id}\n\n\
         Feedback:\n    sequence:\n- 0\n- 1\n- 1\n\n\
         Feedback:\n    sequence:\n- 0\n- 1\n- 1\n- 2\n\n\
         Result:\n    sequence:\n- 0\n- 1\n- 1\n- 2\n\n\
         Goal finished with status: SUCCEEDED\n"
    );
    assert_eq!(sent, expected);
    let rejected = roslite(
        &ns,
        &[
            "action",
            "send_goal",
            "fibonacci",
            "test_msgs/Fibonacci",
            "{order: -1}",
        ],
    );
    assert!(rejected.ends_with("Goal was rejected.\n"), "{rejected}");
    let _ = stop_gracefully(&mut server, STOP_GRACE);
}
