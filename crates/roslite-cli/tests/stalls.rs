//! A subscriber process that stops (SIGSTOP) and runs again (SIGCONT), as a user's `roslite
//! topic echo` and `roslite topic pub` see it (docs/robustness.md §6):
//! - a reliable keep-all publisher's memory stays within `ROSLITE_KEEP_ALL_MAX_BYTES` while its
//!   subscriber is stopped, on every path, and the stream resumes afterwards;
//! - a reliable stream resumes after a stop longer than the participant lease (20 s), and what
//!   the subscriber missed is reported lost.
//!
//! Every process uses LOCALHOST discovery (loopback only) and a domain of its own.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn domain(offset: u32) -> u32 {
    20 + (std::process::id() % 10) * 8 + offset
}

fn roslite(domain: u32, transports: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roslite"));
    command
        .args(args)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("ROSLITE_TRANSPORTS", transports)
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK");
    command
}

/// A child killed when the test ends, however it ends.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `topic echo` with its output counted as it comes: messages (`---` lines) and the lines
/// reporting lost messages.
struct Echo {
    process: Background,
    messages: Arc<AtomicUsize>,
    lost_reports: Arc<Mutex<Vec<String>>>,
}

impl Echo {
    fn start(mut command: Command) -> Echo {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let messages = Arc::new(AtomicUsize::new(0));
        let lost_reports = Arc::new(Mutex::new(Vec::new()));
        {
            let (messages, lost_reports) = (messages.clone(), lost_reports.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if line.starts_with("data:") {
                        messages.fetch_add(1, Ordering::Relaxed);
                    } else if line.contains("total count:") {
                        lost_reports.lock().unwrap().push(line);
                    }
                }
            });
        }
        Echo {
            process: Background(child),
            messages,
            lost_reports,
        }
    }

    fn received(&self) -> usize {
        self.messages.load(Ordering::Relaxed)
    }

    fn wait_for(&self, count: usize, limit: Duration) -> bool {
        self.wait_until(limit, || self.received() >= count)
    }

    /// Waits until `done` holds, at most `limit`; whether it held.
    fn wait_until(&self, limit: Duration, done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }

    fn lost_reported(&self) -> bool {
        !self.lost_reports.lock().unwrap().is_empty()
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.process.0.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// A YAML file with one std_msgs/String of `size` bytes.
fn message_file(name: &str, size: usize) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, format!("data: {}\n", "x".repeat(size))).unwrap();
    path
}

fn publisher(command: &mut Command, message: &PathBuf) -> Background {
    Background(
        command
            .stdin(std::fs::File::open(message).unwrap())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

#[test]
fn keep_all_publisher_stays_bounded_while_its_subscriber_is_stopped() {
    const KEEP_ALL: [&str; 4] = ["--qos-profile", "default", "--qos-history", "keep_all"];
    let message = message_file("stall_1mb.yaml", 1_000_000);
    for (offset, transports) in [(0, "shm"), (1, "uds"), (2, "udp")] {
        let d = domain(offset);
        let mut echo_args = vec!["topic", "echo", "/stall", "std_msgs/msg/String", "-l", "8"];
        echo_args.extend(KEEP_ALL);
        let echo = Echo::start(roslite(d, transports, &echo_args));
        let mut pub_args = vec!["topic", "pub", "/stall", "std_msgs/msg/String", "-r", "20"];
        pub_args.extend(["-p", "0", "--stdin"]);
        pub_args.extend(KEEP_ALL);
        let mut command = roslite(d, transports, &pub_args);
        command.env("ROSLITE_KEEP_ALL_MAX_BYTES", "8M");
        let publishing = publisher(&mut command, &message);
        assert!(
            echo.wait_for(3, Duration::from_secs(30)),
            "{transports}: the stream never started"
        );
        let before = rss_kib(publishing.0.id());
        echo.signal("STOP");
        // Unbounded, 8 s at 20 Hz would hold 160 MB for the stopped subscriber.
        let mut peak = before;
        let stopped = Instant::now();
        while stopped.elapsed() < Duration::from_secs(8) {
            std::thread::sleep(Duration::from_millis(250));
            peak = peak.max(rss_kib(publishing.0.id()));
        }
        let at_stop = echo.received();
        echo.signal("CONT");
        let resumed = echo.wait_for(at_stop + 10, Duration::from_secs(30));
        let grew_mib = peak.saturating_sub(before) / 1024;
        assert!(
            grew_mib < 64,
            "{transports}: the publisher grew {grew_mib} MiB while its subscriber was stopped"
        );
        assert!(
            resumed,
            "{transports}: {} messages before the stop, {} 30 s after it ended",
            at_stop,
            echo.received()
        );
    }
}

#[test]
fn a_reliable_stream_resumes_after_a_stop_longer_than_the_lease() {
    let message = message_file("stall_100kb.yaml", 100_000);
    let d = domain(3);
    let echo = Echo::start(roslite(
        d,
        "udp",
        &["topic", "echo", "/lease", "std_msgs/msg/String", "-l", "8"],
    ));
    let _publishing = publisher(
        &mut roslite(
            d,
            "udp",
            &[
                "topic",
                "pub",
                "/lease",
                "std_msgs/msg/String",
                "-r",
                "20",
                "-p",
                "0",
                "--stdin",
            ],
        ),
        &message,
    );
    assert!(
        echo.wait_for(3, Duration::from_secs(30)),
        "the stream never started"
    );
    echo.signal("STOP");
    // Past the 20 s participant lease: the publisher drops the stopped subscriber.
    std::thread::sleep(Duration::from_secs(24));
    let at_stop = echo.received();
    echo.signal("CONT");
    // The subscriber first reads what waited in its socket buffer (4 MiB requested: some 80
    // of these messages); the gap, and its report, come after those.
    let resumed = echo.wait_until(Duration::from_secs(40), || {
        echo.lost_reported() && echo.received() >= at_stop + 40
    });
    assert!(
        echo.received() >= at_stop + 40,
        "the stream did not resume: {} messages at the stop, {} after",
        at_stop,
        echo.received()
    );
    assert!(
        resumed,
        "what the subscriber missed was not reported lost ({} messages after the stop)",
        echo.received() - at_stop
    );
}
