//! The text part of the ROS 2 conformance suite, against real rclpy (Kilted, Fast DDS) and the
//! fixtures its `test_msgs` ships plus edge values (`interop/python/repr_conformance.py`):
//!
//! - `topic pub repr`: for every `test_msgs` message case, `roslite topic pub`'s
//!   `publishing #1:` line is exactly rclpy's `repr` of the message; a bounded string rclpy
//!   would send (its bound counted in characters) but roslite refuses to (bytes) is refused
//!   with the error that says so.
//! - `call request repr`, `call response repr`: `roslite service call` against an rclpy server
//!   of every `test_msgs` service prints the request as rclpy's `repr` of it and the response
//!   as rclpy's `repr` of the response a client receives.
//! - `echo non-ASCII`: `roslite topic echo` reads what rclpy sends in bounded strings counted
//!   in characters (22 `ö` in a `string<=22`) and wide strings outside the Basic Multilingual
//!   Plane.
//!
//! The network parts run in a network namespace made for the test. The suite prints a table of
//! type x direction, passed/total (`cargo test -p roslite-cli --test conformance_text --
//! --nocapture`), then fails listing every case that did not pass.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use roslite_transport::netns::NetNs;
use serde_json::Value;

mod common;
use common::{
    ament_prefix, call_lines, difference, field, parallel_map, roslite_in, text, Peer, Tally,
};

const DOMAIN: u32 = 0;
/// Processes of the `topic pub` direction running at once.
const PARALLEL: usize = 3;
const SCRIPT: &str = "repr_conformance.py";

/// `roslite topic pub` of one case with its values on stdin, only in this process (no
/// discovery, no waiting): the line it prints or the error it refuses with.
fn publish(case: &Value) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args([
            "topic",
            "pub",
            "--stdin",
            "-w",
            "0",
            "--once",
            "--keep-alive",
            "0",
        ])
        .args(["/conformance/repr", field(case, "type")])
        .env("AMENT_PREFIX_PATH", ament_prefix())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROSLITE_NETWORK")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run roslite");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(field(case, "yaml").as_bytes())
        .expect("write the values");
    drop(stdin);
    child.wait_with_output().expect("wait for roslite")
}

fn check_publish(case: &Value, output: &Output) -> Option<String> {
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    if let Some(refused) = case["refused"].as_str() {
        let expected = format!("field `{refused}` holds");
        return if output.status.success() {
            Some(format!("published what it must refuse: {stdout}"))
        } else if stderr.contains(&expected) && stderr.contains("as rclcpp counts it") {
            None
        } else {
            Some(format!("refused, but not saying why: {stderr}"))
        };
    }
    if !output.status.success() {
        return Some(format!("failed: {stderr}"));
    }
    let Some(line) = stdout
        .split_once("publishing #1: ")
        .and_then(|(_, rest)| rest.split_once("\n\n"))
        .map(|(line, _)| line)
    else {
        return Some(format!("no publishing line in: {stdout}"));
    };
    let expected = field(case, "repr");
    (line != expected).then(|| difference(expected, line))
}

fn service_directions(ns: &NetNs, cases: &[Value], tally: &mut Tally) {
    let server = Peer::start(ns, DOMAIN, SCRIPT, "serve", 300);
    let calls: Vec<&Value> = cases.iter().filter(|c| c["kind"] == "srv").collect();
    let outputs = parallel_map(&calls, PARALLEL, |case| {
        let ty = field(case, "type");
        let service = format!("/conformance/{}", ty.rsplit('/').next().unwrap_or_default());
        let args = ["service", "call", &service, ty, field(case, "yaml")];
        roslite_in(ns, DOMAIN, &[&args[..], &["--timeout", "30"]].concat())
    });
    for (case, output) in calls.iter().zip(outputs) {
        let (ty, label) = (field(case, "type"), field(case, "case"));
        let stdout = text(&output.stdout);
        match call_lines(&stdout) {
            Some((request, response)) if output.status.success() => {
                let expected = field(case, "request_repr");
                let failure = (request != expected).then(|| difference(expected, request));
                tally.record(ty, "call request repr", label, failure);
                let expected = field(case, "response_repr");
                let failure = (response != expected).then(|| difference(expected, response));
                tally.record(ty, "call response repr", label, failure);
            }
            _ => {
                let why = format!("call failed: {stdout}{}", text(&output.stderr));
                tally.record(ty, "call request repr", label, Some(why.clone()));
                tally.record(ty, "call response repr", label, Some(why));
            }
        }
    }
    server.stop();
}

/// Lines `topic echo` must print for what the rclpy talker sends (its `TEXT_CASES`), as
/// `ros2 topic echo` (PyYAML with unicode allowed) prints them.
const ECHOED: &[(&str, &str, &[&str])] = &[
    (
        "/conformance/strings",
        "test_msgs/msg/Strings",
        &[
            "string_value: 😀😀😀",
            "bounded_string_value: öööööööööööööööööööööö",
        ],
    ),
    (
        "/conformance/wstrings",
        "test_msgs/msg/WStrings",
        &[
            "wstring_value: 😀ハロー",
            "array_of_wstrings:\n- 😀\n- ö\n- 三",
            "bounded_sequence_of_wstrings:\n- 😀😀",
        ],
    ),
];

fn echo_direction(ns: &NetNs, tally: &mut Tally) {
    let talker = Peer::start(ns, DOMAIN, SCRIPT, "talk", 300);
    for (topic, ty, lines) in ECHOED {
        let output = roslite_in(
            ns,
            DOMAIN,
            &["topic", "echo", "--once", "--timeout", "30", topic, ty],
        );
        let stdout = text(&output.stdout);
        let failure = if !output.status.success() || stdout.is_empty() {
            Some(format!("echo failed: {stdout}{}", text(&output.stderr)))
        } else {
            lines
                .iter()
                .find(|line| !stdout.contains(*line))
                .map(|line| format!("`{line}` missing from:\n{stdout}"))
        };
        tally.record(ty, "echo non-ASCII", "rclpy talker", failure);
    }
    talker.stop();
}

#[test]
fn text_conformance_against_rclpy() {
    let cases = common::cases(SCRIPT);
    let mut tally = Tally::default();

    let messages: Vec<&Value> = cases.iter().filter(|c| c["kind"] == "msg").collect();
    assert!(
        messages.len() > 50,
        "too few message cases: {}",
        messages.len()
    );
    let results = parallel_map(&messages, PARALLEL, |case| {
        check_publish(case, &publish(case))
    });
    for (case, failure) in messages.iter().zip(results) {
        tally.record(
            field(case, "type"),
            "topic pub repr",
            field(case, "case"),
            failure,
        );
    }

    let ns = NetNs::create("text-conf").expect("create a network namespace");
    service_directions(&ns, &cases, &mut tally);
    echo_direction(&ns, &mut tally);

    tally.finish();
}
