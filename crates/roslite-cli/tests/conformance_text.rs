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

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use roslite_transport::netns::NetNs;
use serde_json::Value;

const DOMAIN: u32 = 0;
/// Processes of the `topic pub` direction running at once.
const PARALLEL: usize = 3;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs rclpy",
        python.display()
    );
    python
}

fn script() -> PathBuf {
    workspace().join("interop/python/repr_conformance.py")
}

/// The venv holds test_msgs' interface files under share/.
fn ament_prefix() -> PathBuf {
    workspace().join(".venv")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Passed and total per (type, direction), and what failed.
#[derive(Default)]
struct Tally {
    rows: BTreeMap<(String, &'static str), (u32, u32)>,
    failures: Vec<String>,
}

impl Tally {
    fn record(&mut self, ty: &str, direction: &'static str, case: &str, failure: Option<String>) {
        let row = self.rows.entry((ty.to_owned(), direction)).or_default();
        row.1 += 1;
        match failure {
            None => row.0 += 1,
            Some(why) => self
                .failures
                .push(format!("{ty} [{direction}] {case}: {why}")),
        }
    }

    fn table(&self) -> String {
        let mut out = format!("{:<38} {:<20} {:>8}\n", "type", "direction", "passed");
        let (mut passed, mut total) = (0, 0);
        for ((ty, direction), (p, t)) in &self.rows {
            out.push_str(&format!(
                "{ty:<38} {direction:<20} {:>8}\n",
                format!("{p}/{t}")
            ));
            passed += p;
            total += t;
        }
        out.push_str(&format!(
            "{:<38} {:<20} {:>8}\n",
            "all",
            "",
            format!("{passed}/{total}")
        ));
        out
    }
}

/// The cases rclpy describes: one JSON object each.
fn cases() -> Vec<Value> {
    let output = Command::new(python())
        .arg(script())
        .arg("cases")
        .output()
        .expect("run the rclpy side");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON case"))
        .collect()
}

fn field<'a>(case: &'a Value, name: &str) -> &'a str {
    case[name].as_str().unwrap_or_default()
}

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

/// What printed differently: the first differing character and a window around it.
fn difference(expected: &str, got: &str) -> String {
    let at = expected
        .char_indices()
        .zip(got.chars())
        .find(|((_, a), b)| a != b)
        .map_or(expected.len().min(got.len()), |((i, _), _)| i);
    let window = |s: &str| {
        let start = s.floor_char_boundary(at.saturating_sub(40));
        let end = s.ceil_char_boundary((at + 40).min(s.len()));
        s[start..end].to_owned()
    };
    format!(
        "differs at byte {at}: rclpy `{}`, roslite `{}`",
        window(expected),
        window(got)
    )
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

/// Starts the rclpy side in `ns` in `mode` and waits for its READY.
fn rclpy(ns: &NetNs, mode: &str) -> Child {
    let mut child = ns
        .command(python())
        .arg(script())
        .args([mode, "300"])
        .env("ROS_DOMAIN_ID", DOMAIN.to_string())
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rclpy");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l == "READY")),
        "the rclpy {mode} peer did not start"
    );
    child
}

/// `roslite <args>` in `ns`.
fn roslite_in(ns: &NetNs, args: &[&str]) -> Output {
    ns.command(env!("CARGO_BIN_EXE_roslite"))
        .args(args)
        .env("ROS_DOMAIN_ID", DOMAIN.to_string())
        .env("AMENT_PREFIX_PATH", ament_prefix())
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROSLITE_NETWORK")
        .output()
        .expect("run roslite")
}

/// The request and response lines of `roslite service call`'s output.
fn call_lines(stdout: &str) -> Option<(&str, &str)> {
    let (_, rest) = stdout.split_once("requester: making request: ")?;
    let (request, rest) = rest.split_once("\n\nresponse:\n")?;
    let (response, _) = rest.split_once("\n\n")?;
    Some((request, response))
}

fn service_directions(ns: &NetNs, cases: &[Value], tally: &mut Tally) {
    let mut server = rclpy(ns, "serve");
    for case in cases.iter().filter(|c| c["kind"] == "srv") {
        let ty = field(case, "type");
        let name = ty.rsplit('/').next().unwrap_or_default();
        let service = format!("/conformance/{name}");
        let output = roslite_in(
            ns,
            &[
                "service",
                "call",
                &service,
                ty,
                field(case, "yaml"),
                "--timeout",
                "30",
            ],
        );
        let stdout = text(&output.stdout);
        let label = field(case, "case");
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
    let _ = server.kill();
    let _ = server.wait();
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
    let mut talker = rclpy(ns, "talk");
    for (topic, ty, lines) in ECHOED {
        let output = roslite_in(
            ns,
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
    let _ = talker.kill();
    let _ = talker.wait();
}

#[test]
fn text_conformance_against_rclpy() {
    let cases = cases();
    let mut tally = Tally::default();

    let messages: Vec<&Value> = cases.iter().filter(|c| c["kind"] == "msg").collect();
    assert!(
        messages.len() > 50,
        "too few message cases: {}",
        messages.len()
    );
    let results: Vec<Option<String>> = std::thread::scope(|scope| {
        let chunks: Vec<_> = messages
            .chunks(messages.len().div_ceil(PARALLEL))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|case| check_publish(case, &publish(case)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|h| h.join().expect("a publishing thread"))
            .collect()
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

    println!("{}", tally.table());
    assert!(
        tally.failures.is_empty(),
        "{}\n{} failed:\n{}",
        tally.table(),
        tally.failures.len(),
        tally.failures.join("\n")
    );
}
