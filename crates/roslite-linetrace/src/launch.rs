//! Runs one configuration of the application (which implementation plays the robot and which
//! the follower, in separate processes or one) on this host only, and collects its figures.
//!
//! Every process is told to stay on loopback: roslite processes build a LOCALHOST-discovery
//! context (unicast to 127.0.0.1, no multicast), rclpy processes run Fast DDS with a profile
//! that whitelists 127.0.0.1 and turns shared memory off, and all of them get
//! `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` and a domain of the caller's choice
//! ([`domain_for_run`] picks one per run).
//!
//! The processes stop when the robot reports enough `/cmd_vel` messages: the launcher writes
//! `stop` to their standard input (and a process whose input closes stops too), each writes its
//! trace file ([`crate::nodes::Trace`]), and the launcher joins the traces.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::node_program::NodeProgram;
use crate::nodes::NodeOptions;

/// The rclpy robot and follower (same logic and message flow as [`crate::nodes`]).
pub const RCLPY_SCRIPT: &str = include_str!("../../../interop/python/linetrace/linetrace.py");
/// Generates and builds raspimouse_msgs' typesupport into a Python environment with rclpy.
pub const BUILD_MSGS_SCRIPT: &str =
    include_str!("../../../interop/python/linetrace/build_raspimouse_msgs.py");

/// Keeps Fast DDS on 127.0.0.1 and off shared memory: its UDPv4 transport whitelists
/// 127.0.0.1 only, the built-in transports (shared memory among them) are off, and data
/// sharing is off for every writer and reader. The same profile serves `roslite bench`'s rclpy
/// baselines.
pub const FASTDDS_LOOPBACK_PROFILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com"><profiles>
  <transport_descriptors><transport_descriptor>
    <transport_id>udp_lo</transport_id><type>UDPv4</type>
    <interfaceWhiteList><address>127.0.0.1</address></interfaceWhiteList>
  </transport_descriptor></transport_descriptors>
  <participant profile_name="lo_only" is_default_profile="true"><rtps>
    <useBuiltinTransports>false</useBuiltinTransports>
    <userTransports><transport_id>udp_lo</transport_id></userTransports>
    <builtin><initialPeersList><locator><udpv4><address>127.0.0.1</address></udpv4></locator></initialPeersList></builtin>
  </rtps></participant>
  <data_writer profile_name="dw" is_default_profile="true"><qos><data_sharing><kind>OFF</kind></data_sharing></qos></data_writer>
  <data_reader profile_name="dr" is_default_profile="true"><qos><data_sharing><kind>OFF</kind></data_sharing></qos></data_reader>
</profiles></dds>
"#;

/// Which engine of roslite's Wasm host runs the Wasm follower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WasmEngine {
    /// wasmtime, running the module compiled ahead of time (`.cwasm`).
    WasmtimeAot,
    /// wasmi, interpreting the `.wasm`.
    Wasmi,
}

impl WasmEngine {
    /// The host's `--engine` value.
    pub fn flag(self) -> &'static str {
        match self {
            Self::WasmtimeAot => "wasmtime",
            Self::Wasmi => "wasmi",
        }
    }

    /// How the tables name it.
    pub fn label(self) -> &'static str {
        match self {
            Self::WasmtimeAot => "wasmtime AOT",
            Self::Wasmi => "wasmi",
        }
    }
}

/// The Wasm follower's files ([`crate::wasm_build`] makes them, with feature `wasm`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WasmFollower {
    /// The lean `roslite-wasm-host` for wasmtime (its runtime only).
    pub wasmtime_host: PathBuf,
    /// The lean `roslite-wasm-host` for wasmi (wasmtime's runtime and wasmi).
    pub wasmi_host: PathBuf,
    /// The C++ follower compiled to `wasm32-wasip1` (for wasmi).
    pub wasm: PathBuf,
    /// The same compiled ahead of time for this machine (for wasmtime).
    pub cwasm: PathBuf,
}

/// Which implementation plays a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Roslite,
    /// The C++ follower on roslite's mROS 2 API (`cpp/follower.cpp`,
    /// [`crate::cpp_build::FOLLOWER`]); it plays the follower only.
    RosliteCpp,
    /// The same C++ follower compiled to WebAssembly, run by roslite's lean Wasm host on one
    /// engine; it plays the follower only.
    RosliteWasm(WasmEngine),
    Rclpy,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Self::Roslite => "roslite",
            Self::RosliteCpp => "roslite C++",
            Self::RosliteWasm(WasmEngine::WasmtimeAot) => "roslite Wasm (wasmtime AOT)",
            Self::RosliteWasm(WasmEngine::Wasmi) => "roslite Wasm (wasmi)",
            Self::Rclpy => "rclpy",
        }
    }

    /// The name of its follower process in [`RunResult::memory`].
    pub fn follower_process(self) -> String {
        format!("follower ({})", self.name())
    }
}

/// One configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    pub robot: Side,
    pub follower: Side,
    /// Both nodes in one roslite process (intra-process delivery); needs both sides roslite.
    pub one_process: bool,
}

impl Setup {
    pub const ROSLITE: Self = Self {
        robot: Side::Roslite,
        follower: Side::Roslite,
        one_process: false,
    };
    pub const MIXED: Self = Self {
        robot: Side::Rclpy,
        follower: Side::Roslite,
        one_process: false,
    };
    pub const RCLPY: Self = Self {
        robot: Side::Rclpy,
        follower: Side::Rclpy,
        one_process: false,
    };
    /// The C++ follower (mROS 2 API) with the roslite robot.
    pub const CPP_FOLLOWER: Self = Self {
        robot: Side::Roslite,
        follower: Side::RosliteCpp,
        one_process: false,
    };
    /// The C++ follower as a Wasm node on wasmtime (AOT) with the roslite robot.
    pub const WASM_WASMTIME: Self = Self {
        robot: Side::Roslite,
        follower: Side::RosliteWasm(WasmEngine::WasmtimeAot),
        one_process: false,
    };
    /// The C++ follower as a Wasm node on wasmi with the roslite robot.
    pub const WASM_WASMI: Self = Self {
        robot: Side::Roslite,
        follower: Side::RosliteWasm(WasmEngine::Wasmi),
        one_process: false,
    };
    pub const ONE_PROCESS: Self = Self {
        robot: Side::Roslite,
        follower: Side::Roslite,
        one_process: true,
    };

    /// `follower <-> robot` as the tables name it.
    pub fn label(&self) -> String {
        if self.one_process {
            "roslite, one process".into()
        } else if let Side::RosliteWasm(engine) = self.follower {
            format!(
                "roslite Wasm follower ({}) <-> {} robot",
                engine.label(),
                self.robot.name()
            )
        } else {
            format!(
                "{} follower <-> {} robot",
                self.follower.name(),
                self.robot.name()
            )
        }
    }

    fn needs_python(&self) -> bool {
        self.robot == Side::Rclpy || self.follower == Side::Rclpy
    }
}

/// How to run a configuration.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// What runs the roslite processes ([`crate::node_program::resolve`] picks it).
    pub node_program: NodeProgram,
    /// A Python with rclpy (the repository's `.venv/bin/python`), for rclpy sides.
    pub python: Option<PathBuf>,
    /// The C++ follower's executable ([`crate::cpp_build::build`] of
    /// [`crate::cpp_build::FOLLOWER`]), for a [`Side::RosliteCpp`] follower.
    pub cpp_follower: Option<PathBuf>,
    /// The Wasm follower's host and modules, for a [`Side::RosliteWasm`] follower.
    pub wasm_follower: Option<WasmFollower>,
    /// Where traces, logs and helper files go.
    pub work_dir: PathBuf,
    pub domain: u32,
    pub node: NodeOptions,
    /// Latency samples per topic (the mROS 2 line-follower evaluation took 1000).
    pub samples: usize,
    /// Also wait until the robot has completed this many laps.
    pub min_laps: u32,
    /// Give up after this long.
    pub timeout: Duration,
}

/// Resident memory of one process, from `/proc/<pid>/status`, in KiB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    pub process: String,
    /// `VmRSS`: all resident pages (= RssAnon + RssFile + RssShmem).
    pub vm_rss: u64,
    pub rss_anon: u64,
    pub rss_file: u64,
    pub rss_shmem: u64,
    /// `VmHWM`: the peak of VmRSS.
    pub vm_hwm: u64,
}

impl ProcessMemory {
    /// Reads `/proc/<pid>/status`; `None` when the process is gone.
    pub fn read(pid: u32, process: &str) -> Option<Self> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        Some(Self {
            process: process.to_owned(),
            vm_rss: field("VmRSS:"),
            rss_anon: field("RssAnon:"),
            rss_file: field("RssFile:"),
            rss_shmem: field("RssShmem:"),
            vm_hwm: field("VmHWM:"),
        })
    }

    /// Resident pages private to the process (the "RES" column of the mROS 2 line-follower
    /// evaluation: RSS minus SHR).
    pub fn res(&self) -> u64 {
        self.rss_anon
    }

    /// Resident pages that can be shared: file-backed and shared memory (`top`'s SHR).
    pub fn shr(&self) -> u64 {
        self.rss_file + self.rss_shmem
    }
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub label: String,
    /// One-way latencies in microseconds, the first `samples` after the follower started
    /// following.
    pub light_sensors_us: Vec<f64>,
    pub cmd_vel_us: Vec<f64>,
    /// Each process, sampled while the robot was following the line.
    pub memory: Vec<ProcessMemory>,
    /// The robot's axle centre every 100 ms of simulated time while the motors were on.
    pub path: Vec<(f64, f64)>,
    /// Points of the path to mark: where the follower moved to another host.
    pub path_marks: Vec<(f64, f64)>,
    pub laps: f64,
    pub max_cross_track_m: f64,
    /// `count` lines of all traces (messages per topic and service calls seen by each side).
    pub counts: BTreeMap<String, u64>,
    /// Subscriber records whose publication was not found (should be 0).
    pub unmatched: usize,
    pub wall_s: f64,
}

/// Why a run failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum LaunchError {
    /// A helper process could not be started.
    Spawn {
        what: String,
        error: std::io::Error,
    },
    /// A helper process ended before the run was complete.
    Exited {
        what: String,
        log: String,
    },
    /// Not enough messages within the time limit.
    Timeout {
        waited: Duration,
        detail: String,
    },
    /// rclpy cannot use raspimouse_msgs and building its typesupport failed.
    Messages(String),
    /// A trace file is missing or malformed.
    Trace(String),
    /// A side's program was not given (the C++ follower's executable) or cannot play its role.
    Program(String),
    Io(std::io::Error),
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn { what, error } => write!(f, "cannot start {what}: {error}"),
            Self::Exited { what, log } => {
                write!(
                    f,
                    "{what} exited before the run was complete; its log:\n{log}"
                )
            }
            Self::Timeout { waited, detail } => write!(
                f,
                "the run did not collect enough samples within {waited:?} ({detail}); \
                 raise the time limit or lower the sample count"
            ),
            Self::Messages(e) => write!(f, "raspimouse_msgs for rclpy: {e}"),
            Self::Trace(e) => write!(f, "trace: {e}"),
            Self::Program(e) => e.fmt(f),
            Self::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LaunchError {}

impl From<std::io::Error> for LaunchError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

pub(crate) struct Proc {
    pub(crate) name: String,
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    log: PathBuf,
    pub(crate) trace: PathBuf,
}

impl Proc {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Makes sure `python` can import raspimouse_msgs with its typesupport, building it into that
/// environment once if not (`interop/python/linetrace/build_raspimouse_msgs.py`).
///
/// # Errors
/// [`LaunchError::Messages`] with the build's output.
pub fn ensure_raspimouse_msgs(python: &Path, work_dir: &Path) -> Result<(), LaunchError> {
    let probe = Command::new(python)
        .args([
            "-c",
            "from raspimouse_msgs.msg import LightSensors as L; L.__class__.__import_type_support__()",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| LaunchError::Messages(format!("cannot run {}: {e}", python.display())))?;
    if probe.success() {
        return Ok(());
    }
    let script = work_dir.join("build_raspimouse_msgs.py");
    std::fs::write(&script, BUILD_MSGS_SCRIPT)?;
    eprintln!(
        "building raspimouse_msgs typesupport for {} (once)...",
        python.display()
    );
    let out = Command::new(python)
        .arg(&script)
        .output()
        .map_err(|e| LaunchError::Messages(format!("cannot run {}: {e}", python.display())))?;
    if !out.status.success() {
        return Err(LaunchError::Messages(format!(
            "{} {} failed:\n{}{}",
            python.display(),
            script.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

pub(crate) fn spawn(
    name: &str,
    command: Command,
    options: &LaunchOptions,
    events: &mpsc::Sender<(String, String)>,
) -> Result<Proc, LaunchError> {
    spawn_tracing(name, command, options, events, TraceTo::File)
}

/// Where a node writes its trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TraceTo {
    /// A file it opens (`--trace FILE`).
    File,
    /// Its standard output (`--trace -`), which the launcher writes to the trace file: a
    /// Wasm node that moves between hosts opens no file, and its output follows it.
    #[cfg_attr(not(feature = "wasm"), allow(dead_code))]
    Stdout,
}

pub(crate) fn spawn_tracing(
    name: &str,
    mut command: Command,
    options: &LaunchOptions,
    events: &mpsc::Sender<(String, String)>,
    trace_to: TraceTo,
) -> Result<Proc, LaunchError> {
    let file_name = name.replace([' ', '(', ')', '+'], "_");
    let log = options.work_dir.join(format!("{file_name}.log"));
    let trace = options.work_dir.join(format!("{file_name}.trace"));
    let _ = std::fs::remove_file(&trace);
    command.arg("--trace");
    match trace_to {
        TraceTo::File => command.arg(&trace),
        TraceTo::Stdout => command.arg("-"),
    };
    command
        .arg("--speed")
        .arg(options.node.speed.to_string())
        .arg("--seed")
        .arg(options.node.seed.to_string());
    if options.node.twist_stamped {
        command.arg("--twist-stamped");
    }
    command
        .env("ROS_DOMAIN_ID", options.domain.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("ROS_LOCALHOST_ONLY")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .stdin(Stdio::piped())
        .stderr(std::fs::File::create(&log)?);
    match trace_to {
        TraceTo::File => command.stdout(Stdio::piped()),
        TraceTo::Stdout => command.stdout(std::fs::File::create(&trace)?),
    };
    let mut child = command.spawn().map_err(|error| LaunchError::Spawn {
        what: name.to_owned(),
        error,
    })?;
    if let Some(stdout) = child.stdout.take() {
        let sender = events.clone();
        let tag = name.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send((tag.clone(), line)).is_err() {
                    break;
                }
            }
        });
    }
    Ok(Proc {
        name: name.to_owned(),
        stdin: child.stdin.take(),
        child,
        log,
        trace,
    })
}

pub(crate) fn command_for(
    side: Side,
    role: &str,
    options: &LaunchOptions,
    script: &Path,
) -> Result<Command, LaunchError> {
    Ok(match side {
        Side::Roslite => {
            let mut c = options.node_program.command(role);
            c.arg("--domain").arg(options.domain.to_string());
            c
        }
        Side::RosliteCpp => {
            if role != "follower" {
                return Err(LaunchError::Program(format!(
                    "the C++ node plays the follower only, not the {role}"
                )));
            }
            let exe = options.cpp_follower.as_deref().ok_or_else(|| {
                LaunchError::Program("no C++ follower executable was given".into())
            })?;
            let mut c = Command::new(exe);
            c.arg(role).arg("--domain").arg(options.domain.to_string());
            c
        }
        Side::RosliteWasm(engine) => {
            if role != "follower" {
                return Err(LaunchError::Program(format!(
                    "the Wasm node plays the follower only, not the {role}"
                )));
            }
            let files = options.wasm_follower.as_ref().ok_or_else(|| {
                LaunchError::Program("no Wasm follower (host and modules) was given".into())
            })?;
            let (host, module) = match engine {
                WasmEngine::WasmtimeAot => (&files.wasmtime_host, &files.cwasm),
                WasmEngine::Wasmi => (&files.wasmi_host, &files.wasm),
            };
            // The guest writes its trace into the work directory, granted under its own
            // (absolute) path; after `--`, the C++ follower's own command line, to which
            // `spawn` adds the rest.
            let dir = options.work_dir.display();
            let mut c = Command::new(host);
            c.args(["--engine", engine.flag(), "--stop-on-stdin", "--allow-dir"])
                .arg(format!("{dir}:{dir}:rw"))
                .arg(module)
                .arg("--")
                .arg(role)
                .arg("--domain")
                .arg(options.domain.to_string());
            c
        }
        Side::Rclpy => {
            let python = options.python.as_deref().unwrap_or(Path::new("python3"));
            let mut c = Command::new(python);
            c.arg(script)
                .arg(role)
                .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
                .env(
                    "FASTDDS_DEFAULT_PROFILES_FILE",
                    options.work_dir.join("fastdds_loopback.xml"),
                )
                .env("PYTHONUNBUFFERED", "1");
            c
        }
    })
}

/// A domain for one run's processes: 10..=99 by this process's id (domains 0..=101 keep
/// their ports below Linux's ephemeral range), so concurrent runs rarely meet; `offset` keeps
/// the several runs of one process apart.
pub fn domain_for_run(offset: u32) -> u32 {
    10 + (std::process::id() + offset) % 90
}

/// Runs `setup` until the robot has received enough `/cmd_vel` messages, then stops it and
/// returns the joined measurements.
///
/// # Errors
/// [`LaunchError`] saying which process failed and its log.
pub fn run(setup: Setup, options: &LaunchOptions) -> Result<RunResult, LaunchError> {
    std::fs::create_dir_all(&options.work_dir)?;
    // Absolute, so that a Wasm follower finds its trace under the directory it is granted.
    let options = &LaunchOptions {
        work_dir: std::fs::canonicalize(&options.work_dir)?,
        ..options.clone()
    };
    let script = options.work_dir.join("linetrace.py");
    if setup.needs_python() {
        let python = options.python.as_deref().ok_or_else(|| {
            LaunchError::Messages("no Python with rclpy was given for the rclpy side".into())
        })?;
        std::fs::write(&script, RCLPY_SCRIPT)?;
        std::fs::write(
            options.work_dir.join("fastdds_loopback.xml"),
            FASTDDS_LOOPBACK_PROFILE,
        )?;
        ensure_raspimouse_msgs(python, &options.work_dir)?;
    }
    let started = Instant::now();
    let (events_tx, events) = mpsc::channel();
    let mut procs = Vec::new();
    let robot_name;
    if setup.one_process {
        robot_name = "raspimouse+follower (roslite)".to_owned();
        let c = command_for(Side::Roslite, "both", options, &script)?;
        procs.push(spawn(&robot_name, c, options, &events_tx)?);
    } else {
        robot_name = format!("raspimouse ({})", setup.robot.name());
        let follower_name = setup.follower.follower_process();
        let c = command_for(setup.robot, "robot", options, &script)?;
        procs.push(spawn(&robot_name, c, options, &events_tx)?);
        let c = command_for(setup.follower, "follower", options, &script)?;
        procs.push(spawn(&follower_name, c, options, &events_tx)?);
    }
    drop(events_tx);

    let outcome = watch(
        &mut procs,
        &events,
        &robot_name,
        options,
        started,
        &mut |_| true,
    );
    stop(&mut procs);
    let memory = outcome?;
    let mut result = join_traces(&procs, options.samples)?;
    result.label = setup.label();
    result.memory = memory;
    result.wall_s = started.elapsed().as_secs_f64();
    Ok(result)
}

/// Tells every process to stop (a line `stop`), and kills those still running 10 s later.
pub(crate) fn stop(procs: &mut [Proc]) {
    for p in procs.iter_mut() {
        if let Some(mut stdin) = p.stdin.take() {
            let _ = stdin.write_all(b"stop\n");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    for p in procs.iter_mut() {
        loop {
            match p.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = p.child.kill();
                    let _ = p.child.wait();
                    break;
                }
            }
        }
    }
}

/// Waits for the robot's `/cmd_vel` count, sampling each process's memory once the motors are
/// on.
/// `done_too(powered)` is asked each round whether the caller's own work is done as well
/// (and told whether the motors are on).
pub(crate) fn watch(
    procs: &mut [Proc],
    events: &mpsc::Receiver<(String, String)>,
    robot_name: &str,
    options: &LaunchOptions,
    started: Instant,
    done_too: &mut dyn FnMut(bool) -> bool,
) -> Result<Vec<ProcessMemory>, LaunchError> {
    let target = (options.samples + 100) as u64;
    let mut memory: Vec<Option<ProcessMemory>> = vec![None; procs.len()];
    let mut powered = false;
    let mut cmd_vel = 0;
    let mut laps = 0;
    let mut last_sample = Instant::now();
    loop {
        if started.elapsed() > options.timeout {
            return Err(LaunchError::Timeout {
                waited: options.timeout,
                detail: format!(
                    "motors {}, {cmd_vel} /cmd_vel received of {target}, {laps} laps of {}; \
                     logs in {}",
                    if powered { "on" } else { "never switched on" },
                    options.min_laps,
                    options.work_dir.display()
                ),
            });
        }
        for p in procs.iter_mut() {
            if let Ok(Some(status)) = p.child.try_wait() {
                return Err(LaunchError::Exited {
                    what: format!("{} ({status})", p.name),
                    log: p.log_tail(),
                });
            }
        }
        match events.recv_timeout(Duration::from_millis(100)) {
            Ok((from, line)) if from == robot_name => {
                let mut words = line.split_whitespace();
                match (words.next(), words.next(), words.next()) {
                    (Some("event"), Some("motor_power"), Some(state)) => powered = state == "on",
                    (Some("event"), Some("cmd_vel"), Some(n)) => {
                        cmd_vel = n.parse().unwrap_or(cmd_vel);
                    }
                    (Some("event"), Some("lap"), Some(n)) => laps = n.parse().unwrap_or(laps),
                    _ => {}
                }
            }
            _ => {}
        }
        if powered && last_sample.elapsed() >= Duration::from_millis(250) {
            last_sample = Instant::now();
            for (slot, p) in memory.iter_mut().zip(procs.iter()) {
                if let Some(m) = ProcessMemory::read(p.child.id(), &p.name) {
                    *slot = Some(m);
                }
            }
        }
        let own_done = done_too(powered);
        if own_done
            && cmd_vel >= target
            && laps >= options.min_laps
            && memory.iter().all(Option::is_some)
        {
            return Ok(memory.into_iter().flatten().collect());
        }
    }
}

/// The join of publisher and subscriber records by (topic, sequence number).
pub(crate) fn join_traces(procs: &[Proc], samples: usize) -> Result<RunResult, LaunchError> {
    join_traces_on(procs, samples, samples, &|_, t| t)
}

/// [`join_traces`] keeping up to `keep` latency samples per topic (at least `samples`), with
/// each time a process traced read through `host_clock(index of the process in procs,
/// time)`: for a node whose clock is not the machine's (a WebAssembly node that moved between
/// hosts skips the time its moves took).
pub(crate) fn join_traces_on(
    procs: &[Proc],
    samples: usize,
    keep: usize,
    host_clock: &dyn Fn(usize, u64) -> u64,
) -> Result<RunResult, LaunchError> {
    let mut published: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut received: Vec<(String, u64, u64)> = Vec::new();
    let mut following_since = None;
    let mut result = RunResult::default();
    for (index, p) in procs.iter().enumerate() {
        let text = std::fs::read_to_string(&p.trace).map_err(|e| {
            LaunchError::Trace(format!(
                "{} wrote no trace {} ({e}); its log:\n{}",
                p.name,
                p.trace.display(),
                p.log_tail()
            ))
        })?;
        for line in text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let num = |i: usize| w.get(i).and_then(|s| s.parse::<u64>().ok());
            let time = |i: usize| num(i).map(|t| host_clock(index, t));
            let float = |i: usize| w.get(i).and_then(|s| s.parse::<f64>().ok());
            match w.first().copied() {
                Some("pub") => {
                    if let (Some(seq), Some(t)) = (num(2), time(3)) {
                        published.insert((w[1].to_owned(), seq), t);
                    }
                }
                Some("sub") => {
                    if let (Some(seq), Some(t)) = (num(2), time(3)) {
                        received.push((w[1].to_owned(), seq, t));
                    }
                }
                Some("mark") if w.get(1) == Some(&"following") => following_since = time(2),
                Some("count") => {
                    if let (Some(name), Some(n)) = (w.get(1), num(2)) {
                        *result.counts.entry((*name).to_owned()).or_default() += n;
                    }
                }
                Some("pose") => {
                    if let (Some(x), Some(y)) = (float(2), float(3)) {
                        result.path.push((x, y));
                    }
                }
                Some("summary") => match (w.get(1).copied(), float(2)) {
                    (Some("laps"), Some(v)) => result.laps = v,
                    (Some("max_cross_track_m"), Some(v)) => result.max_cross_track_m = v,
                    _ => {}
                },
                _ => {}
            }
        }
    }
    let since = following_since.ok_or_else(|| {
        LaunchError::Trace("the follower never started following (no `mark following`)".into())
    })?;
    received.sort_by_key(|(_, _, t)| *t);
    for (topic, seq, t_sub) in received {
        let Some(&t_pub) = published.get(&(topic.clone(), seq)) else {
            result.unmatched += 1;
            continue;
        };
        if t_pub < since {
            continue;
        }
        let us = t_sub.saturating_sub(t_pub) as f64 / 1000.0;
        let list = match topic.as_str() {
            "light_sensors" => &mut result.light_sensors_us,
            "cmd_vel" => &mut result.cmd_vel_us,
            _ => continue,
        };
        if list.len() < keep.max(samples) {
            list.push(us);
        }
    }
    for (name, list) in [
        ("/light_sensors", &result.light_sensors_us),
        ("/cmd_vel", &result.cmd_vel_us),
    ] {
        if list.len() < samples {
            return Err(LaunchError::Trace(format!(
                "only {} of {samples} {name} samples after the follower started",
                list.len()
            )));
        }
    }
    Ok(result)
}
