//! Shared by the tests that run real peers (rclpy, Cyclone) inside a network namespace.

#![allow(dead_code)] // each test binary uses a different subset

pub mod fibonacci;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use roslite::{Context, ContextOptions, NetworkMode};
use roslite_transport::netns::{stop_gracefully, NetNs, STOP_GRACE};
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's Python, where `cargo xtask test` installs rclpy and cyclonedds.
pub fn python() -> PathBuf {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs the ROS 2 and Cyclone DDS peers",
        python.display()
    );
    python
}

/// `interop/python/<script> <args>` under rclpy with Fast DDS, inside `ns`, with default
/// (SUBNET) discovery: inside the namespace that is `lo` only. Stdout and stderr are piped.
pub fn rclpy_script(ns: &NetNs, domain: u32, script: &str, args: &[&str]) -> Command {
    let mut command = ns.command(python());
    command
        .arg(workspace().join("interop/python").join(script))
        .args(args)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A context whose sockets live in `ns` (created on a thread that entered it), with default
/// (SUBNET, multicast) discovery.
pub fn networked_in(ns: &NetNs, domain: u32) -> Context {
    ns.run(|| {
        let discovery = DiscoveryConfig {
            domain_id: domain,
            range: DiscoveryRange::Subnet,
            ..Default::default()
        };
        Context::new(ContextOptions {
            domain_id: domain,
            network: NetworkMode::Rtps(TransportConfig::new(discovery)),
            ..Default::default()
        })
    })
    .expect("enter the test namespace")
    .expect("start RTPS inside the namespace")
}

/// A context like [`networked_in`] that follows `distro`'s wire conventions.
pub fn networked_in_distro(ns: &NetNs, domain: u32, distro: roslite::RosDistro) -> Context {
    ns.run(|| {
        let discovery = DiscoveryConfig {
            domain_id: domain,
            range: DiscoveryRange::Subnet,
            ..Default::default()
        };
        Context::new(ContextOptions {
            domain_id: domain,
            network: NetworkMode::Rtps(TransportConfig::new(discovery)),
            ros_distro: distro,
            ..Default::default()
        })
    })
    .expect("enter the test namespace")
    .expect("start RTPS inside the namespace")
}

/// Spins `executor` until `done` holds or `limit` passes; whether it held.
pub fn spin_until(
    executor: &roslite::Executor,
    limit: std::time::Duration,
    done: impl Fn() -> bool,
) -> bool {
    let start = std::time::Instant::now();
    while !done() && start.elapsed() < limit {
        executor.spin_once(Some(std::time::Duration::from_millis(20)));
    }
    done()
}

/// Polls `done` every 10 ms until it holds or `timeout` passes; whether it held.
pub fn wait_until(timeout: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= timeout {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A running peer process whose stdout is read line by line as it comes (so a test can wait
/// for what the peer reports and answer on its stdin), and whose stderr is drained on a thread.
/// Stopped and reaped when dropped, even if the test panics first: SIGINT, then SIGKILL if it
/// is still running 2 s later (`roslite_transport::netns::stop_gracefully`: a killed rclpy
/// peer leaves Fast DDS's shared-memory files in `/dev/shm`).
pub struct LinePeer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    /// Every stdout line so far, including those handed out by [`Self::wait_line`].
    seen: Vec<String>,
    stdout: Option<std::thread::JoinHandle<()>>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

/// How a [`LinePeer`] ended.
pub struct PeerOutput {
    pub success: bool,
    /// It was still running at the deadline and was killed.
    pub timed_out: bool,
    pub stdout: Vec<String>,
    pub stderr: String,
}

impl PeerOutput {
    /// The rest of each stdout line that starts with `prefix`.
    pub fn values(&self, prefix: &str) -> Vec<String> {
        self.stdout
            .iter()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(str::to_owned)
            .collect()
    }
}

impl std::fmt::Display for PeerOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "(exit ok: {}, timed out: {})\n--- stdout\n{}\n--- stderr\n{}",
            self.success,
            self.timed_out,
            self.stdout.join("\n"),
            self.stderr
        )
    }
}

impl LinePeer {
    /// Starts `command` with piped stdin, stdout and stderr.
    pub fn spawn(mut command: Command) -> LinePeer {
        use std::io::{BufRead, Read};
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("start {command:?}: {e}"));
        let stdin = child.stdin.take();
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().map(|pipe| {
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
        });
        let stderr = child.stderr.take().map(|mut pipe| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
        });
        LinePeer {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            stdout,
            stderr,
        }
    }

    /// The next stdout line (after those already returned) that satisfies `want`, waiting
    /// until `deadline`; `None` if none came by then or the peer closed its stdout.
    pub fn wait_line(
        &mut self,
        deadline: std::time::Instant,
        mut want: impl FnMut(&str) -> bool,
    ) -> Option<String> {
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Writes `line` to the peer's stdin (ignored if the peer has exited).
    pub fn send_line(&mut self, line: &str) {
        use std::io::Write;
        if let Some(stdin) = &mut self.stdin {
            let _ = writeln!(stdin, "{line}");
            let _ = stdin.flush();
        }
    }

    /// Kills the peer (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the peer to exit by itself until `deadline`, then stops it (as on drop). Its
    /// stdin stays open until it has exited (a peer may take EOF as a command to stop).
    pub fn finish(mut self, deadline: std::time::Instant) -> PeerOutput {
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("poll the peer") {
                break status;
            }
            if std::time::Instant::now() >= deadline {
                timed_out = true;
                break stop_gracefully(&mut self.child, STOP_GRACE).expect("stop the peer");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        drop(self.stdin.take());
        if let Some(t) = self.stdout.take() {
            let _ = t.join();
        }
        let mut stdout = std::mem::take(&mut self.seen);
        stdout.extend(self.lines.try_iter());
        let stderr = self
            .stderr
            .take()
            .map(|t| t.join().unwrap_or_default())
            .unwrap_or_default();
        PeerOutput {
            success: status.success() && !timed_out,
            timed_out,
            stdout,
            stderr,
        }
    }
}

impl Drop for LinePeer {
    fn drop(&mut self) {
        let _ = stop_gracefully(&mut self.child, STOP_GRACE);
    }
}

/// Whether the environment says this is a CI run (`CI` set to anything but empty, `0` or
/// `false`), where a missing interop peer is a failure rather than a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// For tests whose peer needs a Debian package: `Ok(())` if `present`; otherwise, outside CI,
/// prints why the test is skipped and returns `Err(())`; in CI, fails the test.
pub fn require_package(present: bool, package: &str, what: &str) -> Result<(), ()> {
    if present {
        return Ok(());
    }
    assert!(
        !in_ci(),
        "CI is set but {what} is missing: install the Debian package {package} (`cargo xtask \
         test` installs it)"
    );
    eprintln!(
        "SKIPPED: {what} is missing; install the Debian package {package} to run this test \
         (in CI, with CI=true, this is a failure)"
    );
    Err(())
}

/// A context on loopback (LOCALHOST discovery, no multicast) in `domain_id`, offering the given
/// same-host transports: two of them in one process behave as two processes on one host.
pub fn localhost_context(domain_id: u32, local_transports: roslite::LocalTransports) -> Context {
    Context::new(ContextOptions {
        local_transports,
        ..ContextOptions::localhost(domain_id)
    })
    .expect("start an RTPS network on loopback")
}

/// Spins `node` on a thread of its own until `ctx` shuts down.
pub fn spin_in_background(ctx: &Context, node: &roslite::Node) -> std::thread::JoinHandle<()> {
    let ctx = ctx.clone();
    let node = node.clone();
    std::thread::spawn(move || {
        let executor = roslite::Executor::new(&ctx);
        executor.add_node(&node);
        executor.spin();
    })
}

/// An x/y/z/intensity (FLOAT32) point cloud with `bytes` bytes of data, the pattern not periodic
/// in 8 bytes (a shifted or reordered word changes a checksum); `salt` makes messages differ.
pub fn xyzi_cloud(bytes: usize, salt: u8) -> roslite::msgs::sensor_msgs::msg::PointCloud2 {
    use roslite::msgs::sensor_msgs::msg::{PointCloud2, PointField};
    let point_step = 16u32;
    let points = (bytes / point_step as usize) as u32;
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: 7, // FLOAT32
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points,
        fields: vec![
            field("x", 0),
            field("y", 4),
            field("z", 8),
            field("intensity", 12),
        ],
        point_step,
        row_step: points * point_step,
        data: (0..points as usize * point_step as usize)
            .map(|i| (i % 251) as u8 ^ salt)
            .collect(),
        is_dense: true,
        ..Default::default()
    }
}

/// The shared-memory outlet's counters of `publisher` (which must have one: a same-host
/// subscriber over shared memory was matched at some point).
pub fn shm_stats<T: roslite::msgs::Message>(
    publisher: &roslite::Publisher<T>,
) -> roslite::seam::OutletStats {
    publisher
        .send_stats()
        .outlets
        .into_iter()
        .find(|o| o.transport == "shm")
        .expect("the publisher has a shared-memory outlet")
}
