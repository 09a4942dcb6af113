//! Content-filtered subscriptions from C and C++: `tests/c/content_filter.c` over the C ABI
//! and `tests/cpp/content_filter.cpp`, an rclcpp content-filtering subscriber in the shape of
//! ROS 2's demo, each fed by a roslite publisher in this test process (loopback only, a
//! domain per test). Each program says what it heard; rounds end with a marker value, and the
//! test waits for the program's own lines, never on time.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::{Float32, Int32};
use roslite::{Message, QosProfile};

mod common;
use common::context;

fn domain(offset: u32) -> u32 {
    assert!(offset < 5);
    190 + (std::process::id() % 2) * 5 + offset
}

fn c_program() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_content_filter");
        let status = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&out)
            .arg(manifest.join("tests/c/content_filter.c"))
            .arg("-I")
            .arg(manifest.join("include"))
            .arg(common::static_library())
            .args(common::NATIVE_LIBS)
            .status()
            .expect("cc runs (the C compiler is installed by cargo xtask test)");
        assert!(
            status.success(),
            "compiling tests/c/content_filter.c failed"
        );
        out
    })
}

fn cpp_program() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let generated = common::generated_cpp(&["std_msgs"], "generated_cpp_content_filter");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp_content_filter");
        common::compile_cpp(
            &manifest.join("tests/cpp/content_filter.cpp"),
            &generated,
            &out,
        );
        out
    })
}

/// A running program whose stdout lines arrive on a channel.
struct Program {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Program {
    fn start(path: &Path, domain_id: u32, args: &[&str]) -> Self {
        let mut child = Command::new(path)
            .args(args)
            .env("ROS_DOMAIN_ID", domain_id.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env_remove("ROS_STATIC_PEERS")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (at most a minute) for the line `wanted`.
    fn wait_for(&mut self, wanted: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line == wanted {
                        return;
                    }
                }
                Err(_) => panic!("`{wanted}` never came; the program said {:?}", self.seen),
            }
        }
    }

    /// Every line, once the program ended by itself (at most a minute).
    fn finish(mut self) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the program did not end: {:?}",
                self.seen
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        assert!(status.success(), "{status:?}: {:?}", self.seen);
        std::mem::take(&mut self.seen)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines starting with `prefix`, without it.
fn values(lines: &[String], prefix: &str) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_c_subscription_filters_changes_and_drops_its_filter() {
    let domain_id = domain(0);
    let ctx = context(domain_id);
    let node = ctx.create_node("numbers_talker").unwrap();
    let publisher = node
        .create_publisher::<Int32>("numbers", QosProfile::keep_last(100))
        .unwrap();
    let mut program = Program::start(c_program(), domain_id, &[Int32::TYPE_HASH]);
    program.wait_for("READY");
    let deadline = Instant::now() + Duration::from_secs(60);
    while publisher.acknowledged_subscription_count() < 1 {
        assert!(
            Instant::now() < deadline,
            "the C subscription never matched"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    for data in (0..30).chain([1000]) {
        publisher.publish(Int32 { data }).unwrap();
    }
    program.wait_for("SET");
    for data in (0..10).chain([1000]) {
        publisher.publish(Int32 { data }).unwrap();
    }
    let lines = program.finish();
    let heard: Vec<i32> = values(&lines, "HEARD ")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    let mut expected: Vec<i32> = (11..20).chain([1000]).collect();
    expected.extend([3, 1000]);
    assert_eq!(heard, expected, "{lines:?}");
    assert_eq!(values(&lines, "CFT "), ["1", "1", "1"], "{lines:?}");
    assert_eq!(
        values(&lines, "FILTER "),
        [
            "(data > %0 AND data < %1) OR data = 1000|10|20",
            "(data > %0 AND data < %1) OR data = 1000|10|20",
            "data = %0|1",
        ]
    );
    let refused = values(&lines, "REFUSED ");
    assert_eq!(refused.len(), 3, "{lines:?}");
    assert!(
        refused[0].starts_with(
            "create 2 content filter expression, column 1: std_msgs/msg/Int32 has no field `dat`"
        ),
        "{refused:?}"
    );
    assert!(
        refused[1].starts_with("read 1 the subscription has no content filter"),
        "{refused:?}"
    );
    assert!(
        refused[2].starts_with("set 2 content filter parameter %0:")
            || refused[2].starts_with("set 2 content filter expression"),
        "{refused:?}"
    );
    assert!(refused[2].contains("cannot be compared"), "{refused:?}");
    assert_eq!(values(&lines, "UNSET "), ["0"]);
}

#[test]
fn an_rclcpp_content_filtering_subscriber_builds_and_filters() {
    let domain_id = domain(1);
    let ctx = context(domain_id);
    let node = ctx.create_node("temperature_talker").unwrap();
    let publisher = node
        .create_publisher::<Float32>("temperature", QosProfile::keep_last(100))
        .unwrap();
    let mut program = Program::start(cpp_program(), domain_id, &[]);
    program.wait_for("READY");
    let deadline = Instant::now() + Duration::from_secs(60);
    while publisher.acknowledged_subscription_count() < 2 {
        assert!(
            Instant::now() < deadline,
            "the C++ subscriptions never matched"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // -100, -90, ..., 150 as the demo's publisher sends them, then the marker.
    for data in (-10..=15).map(|t| t as f32 * 10.0).chain([1000.0]) {
        publisher.publish(Float32 { data }).unwrap();
    }
    program.wait_for("SET");
    for data in [10.0, 55.5, 100.0, 1000.0] {
        publisher.publish(Float32 { data }).unwrap();
    }
    let lines = program.finish();
    let mut expected: Vec<String> = (-10..=-3)
        .chain(11..=15)
        .map(|t| format!("{:.1}", t as f32 * 10.0))
        .collect();
    expected.extend(["1000.0", "55.5", "1000.0"].map(String::from));
    assert_eq!(values(&lines, "HEARD "), expected, "{lines:?}");
    assert_eq!(values(&lines, "CFT "), ["1"]);
    assert_eq!(
        values(&lines, "FILTER "),
        ["data < %0 OR data > %1|-20.000000|100.000000"]
    );
    let refused = values(&lines, "REFUSED ");
    assert_eq!(refused.len(), 1, "{lines:?}");
    assert!(
        refused[0].starts_with("set_content_filter: content filter expression"),
        "{refused:?}"
    );
    assert_eq!(values(&lines, "STILL "), ["1 data < %0 OR data > %1"]);
    assert_eq!(values(&lines, "PLAIN "), ["0"]);
}
