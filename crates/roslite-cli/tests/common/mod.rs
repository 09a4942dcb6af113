//! Shared by the conformance suites against real rclpy (`conformance_text.rs`,
//! `conformance.rs`): the cases the rclpy side lists, the peers it runs in a network namespace,
//! `roslite` run there, and the type x direction table of results.

#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read as _};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use roslite_transport::netns::{stop_gracefully, NetNs, STOP_GRACE};
use serde_json::Value;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's Python, where `cargo xtask test` installs rclpy and test_msgs.
pub fn python() -> PathBuf {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs rclpy",
        python.display()
    );
    python
}

/// `interop/python/<name>`.
pub fn script(name: &str) -> PathBuf {
    workspace().join("interop/python").join(name)
}

/// The venv holds test_msgs' interface files under share/.
pub fn ament_prefix() -> PathBuf {
    workspace().join(".venv")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The cases the rclpy side lists (`<script> cases`, from `interop/python/test_msgs_cases.py`):
/// one JSON object each; a case's number is its place in this list.
pub fn cases(script_name: &str) -> Vec<Value> {
    let output = Command::new(python())
        .arg(script(script_name))
        .arg("cases")
        .output()
        .expect("run the rclpy side");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON case"))
        .collect()
}

/// `f` of every item, on `workers` threads at once, in the items' order.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let result = f(item);
                results.lock().unwrap()[i] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was mapped"))
        .collect()
}

/// A text member of a case or report (empty if absent).
pub fn field<'a>(case: &'a Value, name: &str) -> &'a str {
    case[name].as_str().unwrap_or_default()
}

/// A report member that is null when the check passed and says what differed otherwise.
pub fn failure(report: &Value, name: &str) -> Option<String> {
    match &report[name] {
        Value::Null => None,
        Value::String(why) => Some(why.clone()),
        other => Some(format!("unexpected report {other}")),
    }
}

/// What printed differently: the first differing character and a window around it.
pub fn difference(expected: &str, got: &str) -> String {
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

/// The request and response lines of `roslite service call`'s output.
pub fn call_lines(stdout: &str) -> Option<(&str, &str)> {
    let (_, rest) = stdout.split_once("requester: making request: ")?;
    let (request, rest) = rest.split_once("\n\nresponse:\n")?;
    let (response, _) = rest.split_once("\n\n")?;
    Some((request, response))
}

/// Passed and total per (type, direction), and what failed.
#[derive(Default)]
pub struct Tally {
    rows: BTreeMap<(String, &'static str), (u32, u32)>,
    failures: Vec<String>,
}

impl Tally {
    pub fn record(
        &mut self,
        ty: &str,
        direction: &'static str,
        case: &str,
        failure: Option<String>,
    ) {
        let row = self.rows.entry((ty.to_owned(), direction)).or_default();
        row.1 += 1;
        match failure {
            None => row.0 += 1,
            Some(why) => self
                .failures
                .push(format!("{ty} [{direction}] {case}: {why}")),
        }
    }

    pub fn table(&self) -> String {
        let type_width = self
            .rows
            .keys()
            .map(|(t, _)| t.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let direction_width = self
            .rows
            .keys()
            .map(|(_, d)| d.len())
            .max()
            .unwrap_or(9)
            .max(9);
        let line = |ty: &str, direction: &str, passed: &str| {
            format!("{ty:<type_width$}  {direction:<direction_width$}  {passed:>8}\n")
        };
        let mut out = line("type", "direction", "passed");
        let (mut passed, mut total) = (0, 0);
        for ((ty, direction), (p, t)) in &self.rows {
            out.push_str(&line(ty, direction, &format!("{p}/{t}")));
            passed += p;
            total += t;
        }
        out.push_str(&line("all", "", &format!("{passed}/{total}")));
        out
    }

    /// Prints the table, then fails listing every case that did not pass.
    pub fn finish(self) {
        println!("{}", self.table());
        assert!(
            self.failures.is_empty(),
            "{}\n{} failed:\n{}",
            self.table(),
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// `roslite` inside `ns`, in ROS domain `domain`, with test_msgs on `AMENT_PREFIX_PATH`.
pub fn roslite_command(ns: &NetNs, domain: u32) -> Command {
    let mut command = ns.command(env!("CARGO_BIN_EXE_roslite"));
    command
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("AMENT_PREFIX_PATH", ament_prefix())
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROSLITE_NETWORK");
    command
}

/// `roslite <args>` in `ns`, to its end.
pub fn roslite_in(ns: &NetNs, domain: u32, args: &[&str]) -> Output {
    roslite_command(ns, domain)
        .args(args)
        .output()
        .expect("run roslite")
}

/// An rclpy side (`interop/python/<script> <mode> <seconds>`) running in a network namespace:
/// its stdout lines are collected as they come, JSON ones as reports.
pub struct Peer {
    child: Child,
    state: Arc<(Mutex<PeerOutput>, Condvar)>,
    stderr: Arc<Mutex<String>>,
}

#[derive(Default)]
struct PeerOutput {
    reports: Vec<Value>,
    lines: Vec<String>,
    ended: bool,
}

impl Peer {
    /// Starts the peer under rclpy with Fast DDS and waits for its READY line.
    pub fn start(ns: &NetNs, domain: u32, script_name: &str, mode: &str, seconds: u32) -> Peer {
        let mut child = ns
            .command(python())
            .arg(script(script_name))
            .args([mode, &seconds.to_string()])
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
            .env("PYTHONUNBUFFERED", "1")
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rclpy");
        let state = Arc::new((Mutex::new(PeerOutput::default()), Condvar::new()));
        let stdout = child.stdout.take().expect("stdout");
        {
            let state = state.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let (lock, changed) = &*state;
                    let mut out = lock.lock().unwrap();
                    match serde_json::from_str::<Value>(&line) {
                        Ok(report @ Value::Object(_)) => out.reports.push(report),
                        _ => out.lines.push(line),
                    }
                    changed.notify_all();
                }
                let (lock, changed) = &*state;
                lock.lock().unwrap().ended = true;
                changed.notify_all();
            });
        }
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut stream = child.stderr.take().expect("stderr");
        {
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let _ = stream.read_to_end(&mut all);
                *stderr.lock().unwrap() = text(&all);
            });
        }
        let peer = Peer {
            child,
            state,
            stderr,
        };
        let ready = peer.wait(Duration::from_secs(60), |out| {
            out.lines.iter().any(|l| l == "READY")
        });
        assert!(
            ready,
            "the rclpy {mode} peer did not start: {}",
            peer.stderr.lock().unwrap()
        );
        peer
    }

    /// Waits until `done` holds for the output so far, the peer ends, or `timeout` passes;
    /// whether `done` held.
    fn wait(&self, timeout: Duration, done: impl Fn(&PeerOutput) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let (lock, changed) = &*self.state;
        let mut out = lock.lock().unwrap();
        loop {
            if done(&out) {
                return true;
            }
            let now = Instant::now();
            if out.ended || now >= deadline {
                return false;
            }
            out = changed.wait_timeout(out, deadline - now).unwrap().0;
        }
    }

    /// Waits for a report that `matches`, at most `timeout`; the report.
    pub fn wait_report(
        &self,
        timeout: Duration,
        matches: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        self.wait(timeout, |out| out.reports.iter().any(&matches));
        let out = self.state.0.lock().unwrap();
        out.reports.iter().find(|r| matches(r)).cloned()
    }

    /// Waits for the line `line` (such as DONE), at most `timeout`; whether it came.
    pub fn wait_line(&self, timeout: Duration, line: &str) -> bool {
        self.wait(timeout, |out| out.lines.iter().any(|l| l == line))
    }

    /// Every report so far.
    pub fn reports(&self) -> Vec<Value> {
        self.state.0.lock().unwrap().reports.clone()
    }

    /// What the peer wrote on stderr, once it ended.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Ends the peer (as dropping it does).
    pub fn stop(self) {}
}

impl Drop for Peer {
    fn drop(&mut self) {
        // SIGINT first: a killed rclpy peer leaves Fast DDS's shared-memory files in /dev/shm.
        let _ = stop_gracefully(&mut self.child, STOP_GRACE);
    }
}
