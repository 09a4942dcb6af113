//! Memory footprint of a minimal publisher: `std_msgs/String` on `/chatter` at 10 Hz, with one
//! matched subscriber in another process, after a few seconds of steady state.
//!
//! Each stack runs as a pair of fresh processes, one after the other, all confined to
//! 127.0.0.1 and to a domain of its own:
//! - roslite (CLI binary): this binary as the hidden `roslite bench footprint-peer --role
//!   talker|listener`, dispatched before any argument parsing (see [`peer_before_clap`]): a
//!   networked context with LOCALHOST discovery, one node, a reliable depth-10 publisher driven
//!   by a 100 ms timer on a single-threaded executor (what `examples/talker.rs` does, without
//!   the logging). Its resident code is the CLI's, which carries far more than a publisher;
//! - roslite (`examples/talker`), when that binary was built next to this one (`cargo build
//!   --release -p roslite --example talker`): the same publisher as a program of its own; and
//!   the same built as for a small board, which this bench builds itself (unless `--no-build`):
//!   the size profile (opt-level "s", fat LTO, panic=abort, stripped), statically linked
//!   against musl where the machine has it, glibc otherwise (see
//!   `roslite_linetrace::small_build`);
//! - roslite C++ (`crates/roslite-bench/cpp/talker.cpp`, ros2/examples' minimal_publisher on
//!   roslite's rclcpp-shaped API): the C ABI's static library in the size profile, `c++ -Os
//!   -static`, stripped (see `roslite_linetrace::cpp_build`), which this bench builds itself
//!   (unless `--no-build`); it logs each message as that example does (to a closed stderr);
//! - Cyclone DDS: `ddsperf pub 10Hz size 32` with `ddsperf sub` (ddsperf also creates its
//!   ping/pong endpoints and a statistics writer, so this is a little above a bare C
//!   publisher);
//! - rclpy over Fast DDS (`./.venv`, ROS 2 Kilted from PyPI): a Python talker and listener,
//!   with data sharing off and UDP on 127.0.0.1 only. This is Python plus rclpy plus Fast DDS,
//!   not Fast DDS alone; Debian's Fast DDS 2.9 ships no ready publisher binary to compare.
//!
//! The publisher's `/proc/<pid>/status` gives VmRSS, VmHWM and their anonymous / file / shmem
//! split, `/proc/<pid>/smaps_rollup` its PSS (shared pages divided among the processes mapping
//! them), and `/proc/<pid>/smaps` summed by what each mapping is shows where the RSS goes
//! (`toolkit::memory`).
//! Kernel socket buffers are not part of any of these.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::bail;
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Executor, Instant};
use roslite_linetrace::{cpp_build, small_build};
use serde::Serialize;

use crate::toolkit::context::localhost_context;
use crate::toolkit::cyclone::{self, cyclone_version, ddsperf_command, find_ddsperf};
use crate::toolkit::json;
use crate::toolkit::memory::{mb, read_pss_kib, smaps_breakdown, Part, ProcMemory};
use crate::toolkit::process::{die_with_parent, self_command, Helper};
use crate::toolkit::rclpy::{fastdds_version, find_python, FASTDDS_LOOPBACK_PROFILE};
use crate::toolkit::units::parse_duration;

#[derive(clap::Args)]
pub struct FootprintArgs {
    /// Steady state after the subscriber heard the first message, before measuring.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    steady: Duration,
    /// ROS domain of the roslite pair; Cyclone uses the next one, rclpy the one after.
    #[arg(long, default_value_t = 214)]
    domain: u32,
    /// Python interpreter with rclpy (default: $ROSLITE_PYTHON, else ./.venv/bin/python).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip Cyclone even if `ddsperf` is installed.
    #[arg(long)]
    no_cyclone: bool,
    /// Skip the rclpy (Fast DDS) reference.
    #[arg(long)]
    no_rclpy: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Do not build the statically linked, size-optimised talkers (Rust: `cargo rustc --profile
    /// release-small -p roslite [--target <arch>-unknown-linux-musl] --example talker -- -C
    /// target-feature=+crt-static -C relocation-model=static`, musl where installed; C++: `crates/roslite-bench/cpp/talker.cpp`, `c++ -Os -static`
    /// against the C ABI's static library in the same profile); measure them only if already
    /// built.
    #[arg(long)]
    no_build: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    Talker,
    Listener,
}

/// The hidden `roslite bench footprint-peer`.
#[derive(clap::Args)]
pub struct PeerArgs {
    #[arg(long, value_enum)]
    role: Role,
    #[arg(long)]
    domain: u32,
}

const TOPIC: &str = "chatter";
const PERIOD: Duration = Duration::from_millis(100);
/// The bench's goal for roslite's publisher built for a small board (the size profile,
/// statically linked; Rust and C++), in MB (10^6 bytes). The other builds have none.
const GOAL_MB: f64 = 3.0;
/// How long to wait for the first message to cross.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs a talker or a listener until killed (or its parent ends). The listener prints one line
/// per message, which is how the bench knows the pair is matched and data flows.
pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    let ctx = localhost_context(args.domain)?;
    let executor = Executor::new(&ctx);
    match args.role {
        Role::Talker => {
            let node = ctx.create_node("talker")?;
            let publisher = node.create_publisher::<StringMsg>(TOPIC, 10)?;
            let mut count = 0u64;
            let _timer = node.create_timer(PERIOD, move || {
                count += 1;
                // Ignoring an error: the listener's count shows whether messages flow.
                let _ = publisher.publish(StringMsg {
                    data: format!("Hello World: {count}"),
                });
            })?;
            executor.add_node(&node);
            executor.spin();
        }
        Role::Listener => {
            let node = ctx.create_node("listener")?;
            let _subscription = node.create_subscription(TOPIC, 10, |msg: &StringMsg| {
                println!("heard {}", msg.data);
            })?;
            executor.add_node(&node);
            executor.spin();
        }
    }
    Ok(())
}

/// `roslite bench footprint-peer --role talker|listener --domain D` exactly, recognised before
/// clap parses anything: the measured publisher then maps only the code a minimal publisher
/// runs, not the argument parser of the whole CLI (about 1 MB more resident code pages).
/// `None` for any other command line.
pub fn peer_before_clap(args: &[String]) -> Option<anyhow::Result<()>> {
    let [bench, command, role_flag, role, domain_flag, domain] = args else {
        return None;
    };
    if bench != "bench" || command != "footprint-peer" || role_flag != "--role" {
        return None;
    }
    let role = match role.as_str() {
        "talker" => Role::Talker,
        "listener" => Role::Listener,
        _ => return None,
    };
    if domain_flag != "--domain" {
        return None;
    }
    let domain = domain.parse().ok()?;
    Some(peer(&PeerArgs { role, domain }))
}

/// One stack's measured publisher.
struct Measured {
    memory: ProcMemory,
    /// Proportional set size (shared pages divided among the processes mapping them).
    pss_kib: Option<u64>,
    /// Messages the subscriber received during the steady state.
    received: usize,
    breakdown: Vec<Part>,
}

struct Stack {
    name: String,
    result: Result<Measured, String>,
    /// Whether the goal applies (the builds for a small board).
    goal: bool,
}

/// The minimal C++ publisher (ros2/examples' minimal_publisher on roslite's rclcpp API).
const CPP_TALKER: cpp_build::CppProgram<'static> = cpp_build::CppProgram {
    name: "footprint-talker",
    source: "crates/roslite-bench/cpp/talker.cpp",
    packages: &["std_msgs"],
};

pub fn run(args: &FootprintArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.domain + 2 <= roslite::context::MAX_DOMAIN_ID,
        "--domain must be at most {} (Cyclone and rclpy use the next two)",
        roslite::context::MAX_DOMAIN_ID - 2
    );
    let mut stacks = vec![Stack {
        name: "roslite (CLI binary)".to_owned(),
        result: Ok(measure_roslite(args, None)?),
        goal: false,
    }];
    for (path, talker) in example_talkers(args) {
        stacks.push(Stack {
            name: format!("roslite ({})", path.display()),
            result: measure_roslite(args, Some(talker)).map_err(|e| format!("{e:#}")),
            goal: false,
        });
    }
    let lean = if args.no_build {
        lean_talker_built()
    } else {
        if !args.json {
            eprintln!("building `{}` ...", LEAN_TALKER.cargo_command());
        }
        small_build::build(LEAN_TALKER)
    };
    stacks.push(Stack {
        name: "roslite (talker: size profile, static)".to_owned(),
        result: lean.and_then(|path| {
            let (_, talker) = example_talker(args, path);
            measure_roslite(args, Some(talker)).map_err(|e| format!("{e:#}"))
        }),
        goal: true,
    });
    let cpp = if args.no_build {
        cpp_talker_built()
    } else {
        if !args.json {
            eprintln!(
                "building the C++ talker (`{}`, then c++ {}) ...",
                cpp_build::library_command(small_build::PROFILE),
                cpp_build::CXX_FLAGS.join(" ")
            );
        }
        cpp_build::build(CPP_TALKER, small_build::PROFILE)
    };
    stacks.push(Stack {
        name: "roslite C++ (rclcpp API: -Os, static)".to_owned(),
        result: cpp.and_then(|path| {
            let (_, talker) = example_talker(args, path);
            measure_roslite(args, Some(talker)).map_err(|e| format!("{e:#}"))
        }),
        goal: true,
    });
    let cyclone_name = match cyclone_version() {
        Some(v) => format!("Cyclone {v} (ddsperf pub)"),
        None => "Cyclone (ddsperf pub)".to_owned(),
    };
    stacks.push(Stack {
        result: if args.no_cyclone {
            Err("skipped (--no-cyclone)".to_owned())
        } else {
            match find_ddsperf() {
                Some(ddsperf) => measure_cyclone(args, &ddsperf).map_err(|e| format!("{e:#}")),
                None => Err(cyclone::NOT_INSTALLED.to_owned()),
            }
        },
        name: cyclone_name,
        goal: false,
    });
    if !args.no_rclpy {
        let python = find_python(args.python.as_deref());
        let name = match python.as_ref().ok().and_then(|p| fastdds_version(p)) {
            Some(v) => format!("rclpy (Fast DDS {v})"),
            None => "rclpy (Fast DDS)".to_owned(),
        };
        stacks.push(Stack {
            name,
            result: python
                .and_then(|p| measure_rclpy(args, &p))
                .map_err(|e| format!("{e:#}")),
            goal: false,
        });
    }
    if args.json {
        print_json(args, &stacks);
    } else {
        print_table(args, &stacks);
    }
    Ok(())
}

/// `examples/talker` built next to this binary (`cargo build --release -p roslite --example
/// talker`), if there is one: the same publisher as a program of its own, without the CLI's
/// code. It reads its settings from the environment, so they are set to LOCALHOST discovery in
/// the bench's domain here.
fn example_talkers(args: &FootprintArgs) -> Vec<(PathBuf, Command)> {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("examples").join("talker")))
        .filter(|path| path.is_file())
        .map(|path| example_talker(args, path))
        .into_iter()
        .collect()
}

/// The talker as a small board would run it (see `small_build`).
const LEAN_TALKER: small_build::Program<'static> = small_build::Program::Example {
    package: "roslite",
    name: "talker",
};

/// The lean talker if an earlier run built it (`--no-build`).
fn lean_talker_built() -> Result<PathBuf, String> {
    small_build::built(LEAN_TALKER)
        .ok_or_else(|| format!("not built (--no-build; `{}`)", LEAN_TALKER.cargo_command()))
}

/// The C++ talker if an earlier run built it (`--no-build`).
fn cpp_talker_built() -> Result<PathBuf, String> {
    cpp_build::executable(CPP_TALKER, small_build::PROFILE)
        .filter(|path| path.is_file())
        .ok_or_else(|| "not built (--no-build)".to_owned())
}

fn example_talker(args: &FootprintArgs, path: PathBuf) -> (PathBuf, Command) {
    let mut command = Command::new(&path);
    command
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", args.domain.to_string())
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROS_LOCALHOST_ONLY")
        .env_remove("ROSLITE_NETWORK")
        // It logs every message; only its memory is of interest.
        .stderr(Stdio::null())
        // A safety net: it ends on its own even if this process is killed.
        .env(
            "TALKER_SECONDS",
            format!("{:.0}", args.steady.as_secs_f64() + 60.0),
        );
    let shown = std::env::current_dir()
        .ok()
        .and_then(|dir| path.strip_prefix(dir).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.clone());
    (shown, command)
}

/// Waits until `lines` has at least one line, while `helpers` keep running.
fn wait_for_first_line(
    lines: &Mutex<Vec<String>>,
    what: &str,
    helpers: &mut [&mut Helper],
) -> anyhow::Result<()> {
    let start = Instant::monotonic_now();
    loop {
        if !lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
        {
            return Ok(());
        }
        for helper in helpers.iter_mut() {
            helper.check_running()?;
        }
        if Instant::monotonic_now() - start > MATCH_TIMEOUT {
            bail!("{what} within {MATCH_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn line_count(lines: &Arc<Mutex<Vec<String>>>) -> usize {
    lines.lock().unwrap_or_else(PoisonError::into_inner).len()
}

/// `talker` is the publisher to measure (by default this binary's `footprint-peer` role).
fn measure_roslite(args: &FootprintArgs, talker: Option<Command>) -> anyhow::Result<Measured> {
    let domain = args.domain.to_string();
    let peer = |role: &str| {
        self_command(&[
            "bench",
            "footprint-peer",
            "--role",
            role,
            "--domain",
            &domain,
        ])
    };
    let mut talker = match talker {
        Some(command) => command,
        None => peer("talker")?,
    };
    let (mut listener, heard) = Helper::spawn_reading(
        "the roslite listener",
        peer("listener")?.stdin(Stdio::null()),
    )?;
    let mut talker = Helper::spawn(
        "the roslite talker",
        talker.stdin(Stdio::null()).stdout(Stdio::null()),
    )?;
    wait_for_first_line(
        &heard,
        "the roslite listener heard nothing from the talker",
        &mut [&mut listener, &mut talker],
    )?;
    let before = line_count(&heard);
    std::thread::sleep(args.steady);
    talker.check_running()?;
    let memory = ProcMemory::of(Some(talker.pid()))?;
    let pss_kib = read_pss_kib(talker.pid());
    let breakdown = smaps_breakdown(talker.pid()).unwrap_or_default();
    Ok(Measured {
        memory,
        pss_kib,
        received: line_count(&heard) - before,
        breakdown,
    })
}

fn measure_cyclone(args: &FootprintArgs, ddsperf: &Path) -> anyhow::Result<Measured> {
    let domain = args.domain + 1;
    // A safety net: both end on their own even if this process is killed.
    let seconds = format!("{:.0}", args.steady.as_secs_f64() + 60.0);
    let mut sub = ddsperf_command(ddsperf, domain);
    sub.args(["-D", &seconds, "sub"]).stdin(Stdio::null());
    let (mut sub, lines) = Helper::spawn_reading("ddsperf sub", &mut sub)?;
    let mut publisher = ddsperf_command(ddsperf, domain);
    publisher
        .args(["-D", &seconds, "pub", "10Hz", "size", "32"])
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let mut publisher = Helper::spawn("ddsperf pub", &mut publisher)?;
    // `ddsperf sub` prints "... size 32 total N lost L delta ..." each second data arrived.
    let data_lines = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::monotonic_now();
    while data_lines
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_empty()
    {
        *data_lines.lock().unwrap_or_else(PoisonError::into_inner) = received_totals(&lines);
        sub.check_running()?;
        publisher.check_running()?;
        if Instant::monotonic_now() - start > MATCH_TIMEOUT {
            bail!("ddsperf sub received nothing from ddsperf pub within {MATCH_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = received_totals(&lines).last().copied().unwrap_or(0);
    std::thread::sleep(args.steady);
    publisher.check_running()?;
    let memory = ProcMemory::of(Some(publisher.pid()))?;
    let pss_kib = read_pss_kib(publisher.pid());
    let after = received_totals(&lines).last().copied().unwrap_or(0);
    Ok(Measured {
        memory,
        pss_kib,
        received: usize::try_from(after.saturating_sub(before)).unwrap_or(usize::MAX),
        breakdown: smaps_breakdown(publisher.pid()).unwrap_or_default(),
    })
}

/// The running totals `ddsperf sub` printed so far.
fn received_totals(lines: &Arc<Mutex<Vec<String>>>) -> Vec<u64> {
    lines
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(|line| {
            let mut tokens = line.split_whitespace();
            tokens.find(|t| *t == "total")?;
            tokens.next()?.parse().ok()
        })
        .collect()
}

/// The rclpy talker and listener: a standard ROS 2 talker (depth 10, 100 ms timer).
const RCLPY_PEER: &str = r#"import ctypes, sys
# Die with the bench (PR_SET_PDEATHSIG = 1, SIGKILL = 9).
ctypes.CDLL(None).prctl(1, 9)
import rclpy
from std_msgs.msg import String

role = sys.argv[1]
rclpy.init()
node = rclpy.create_node(role)
if role == "talker":
    publisher = node.create_publisher(String, "chatter", 10)
    count = 0

    def tick():
        global count
        count += 1
        publisher.publish(String(data=f"Hello World: {count}"))

    node.create_timer(0.1, tick)
else:
    node.create_subscription(String, "chatter", lambda m: print("heard " + m.data, flush=True), 10)
rclpy.spin(node)
"#;

fn measure_rclpy(args: &FootprintArgs, python: &Path) -> anyhow::Result<Measured> {
    let dir = std::env::temp_dir().join(format!("roslite-bench-footprint-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("rclpy_peer.py");
    std::fs::write(&script, RCLPY_PEER)?;
    let profile = dir.join("fastdds-loopback.xml");
    std::fs::write(&profile, FASTDDS_LOOPBACK_PROFILE)?;
    let result = (|| {
        let domain = (args.domain + 2).to_string();
        let command = |role: &str| {
            let mut command = Command::new(python);
            command
                .arg(&script)
                .arg(role)
                .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
                .env("FASTDDS_DEFAULT_PROFILES_FILE", &profile)
                .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                .env("ROS_DOMAIN_ID", &domain)
                .env_remove("ROS_STATIC_PEERS")
                .env_remove("ROS_LOCALHOST_ONLY")
                .stdin(Stdio::null());
            command
        };
        let (mut listener, heard) =
            Helper::spawn_reading("the rclpy listener", &mut command("listener"))?;
        let mut talker =
            Helper::spawn("the rclpy talker", command("talker").stdout(Stdio::null()))?;
        wait_for_first_line(
            &heard,
            "the rclpy listener heard nothing from the rclpy talker",
            &mut [&mut listener, &mut talker],
        )?;
        let before = line_count(&heard);
        std::thread::sleep(args.steady);
        talker.check_running()?;
        let memory = ProcMemory::of(Some(talker.pid()))?;
        let pss_kib = read_pss_kib(talker.pid());
        Ok(Measured {
            memory,
            pss_kib,
            received: line_count(&heard) - before,
            breakdown: smaps_breakdown(talker.pid()).unwrap_or_default(),
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn print_table(args: &FootprintArgs, stacks: &[Stack]) {
    println!(
        "footprint of a minimal publisher (std_msgs/String on /chatter at 10 Hz, one matched \
         subscriber in another process), after {:?} of steady state; MB = 10^6 bytes",
        args.steady
    );
    println!(
        "{:<48} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8}",
        "publisher", "VmRSS", "VmHWM", "anon", "file", "shmem", "PSS", "threads", "received"
    );
    for stack in stacks {
        match &stack.result {
            Ok(m) => println!(
                "{:<48} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7} {:>7} {:>8}",
                stack.name,
                mb(m.memory.vm_rss_kib),
                mb(m.memory.vm_hwm_kib),
                mb(m.memory.rss_anon_kib),
                mb(m.memory.rss_file_kib),
                mb(m.memory.rss_shmem_kib),
                m.pss_kib
                    .map_or("?".to_owned(), |p| format!("{:.2}", mb(p))),
                m.memory.threads,
                m.received
            ),
            Err(why) => println!("{:<48} {why}", stack.name),
        }
    }
    for stack in stacks {
        let Ok(m) = &stack.result else { continue };
        if m.breakdown.is_empty() {
            continue;
        }
        let parts: Vec<String> = m
            .breakdown
            .iter()
            .take(8)
            .map(|p| format!("{} {:.2}", p.name, mb(p.rss_kib)))
            .collect();
        let rest: u64 = m.breakdown.iter().skip(8).map(|p| p.rss_kib).sum();
        println!(
            "{} VmRSS by mapping (MB, /proc/<pid>/smaps): {}{}",
            stack.name,
            parts.join(", "),
            if rest > 0 {
                format!(", rest {:.2}", mb(rest))
            } else {
                String::new()
            }
        );
    }
    println!(
        "C library of the static builds: the Rust talker {}, the C++ talker glibc",
        small_build::libc().name()
    );
    if let Some(note) = small_build::glibc_note() {
        println!("note: {note}");
    }
    for stack in stacks.iter().filter(|s| s.goal) {
        if let Ok(m) = &stack.result {
            let rss = mb(m.memory.vm_rss_kib);
            println!(
                "goal: {} publisher VmRSS at most {GOAL_MB} MB -> {} ({rss:.2} MB)",
                stack.name,
                if rss <= GOAL_MB { "met" } else { "NOT met" }
            );
        }
    }
}

/// `--json`: one object per stack, measured or skipped, and whether the builds for a small
/// board met the goal.
#[derive(Serialize)]
struct Json {
    bench: &'static str,
    rate_hz: u32,
    #[serde(serialize_with = "json::number")]
    steady_s: f64,
    #[serde(serialize_with = "json::number")]
    goal_vm_rss_mb: f64,
    goal_met: Option<bool>,
    /// The C library the Rust talker for a small board is linked with (`glibc` or `musl`).
    lean_rust_libc: &'static str,
    results: Vec<JsonStack>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum JsonStack {
    Measured {
        publisher: String,
        vm_rss_kib: u64,
        vm_hwm_kib: u64,
        #[serde(serialize_with = "json::fixed3")]
        vm_rss_mb: f64,
        #[serde(serialize_with = "json::fixed3")]
        vm_hwm_mb: f64,
        rss_anon_kib: u64,
        rss_file_kib: u64,
        rss_shmem_kib: u64,
        pss_kib: Option<u64>,
        threads: u64,
        messages_received: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        goal_met: Option<bool>,
        breakdown: Vec<JsonPart>,
    },
    Skipped {
        publisher: String,
        skipped: String,
    },
}

#[derive(Serialize)]
struct JsonPart {
    part: String,
    rss_kib: u64,
}

fn print_json(args: &FootprintArgs, stacks: &[Stack]) {
    let results = stacks
        .iter()
        .map(|stack| match &stack.result {
            Ok(m) => JsonStack::Measured {
                publisher: stack.name.clone(),
                vm_rss_kib: m.memory.vm_rss_kib,
                vm_hwm_kib: m.memory.vm_hwm_kib,
                vm_rss_mb: mb(m.memory.vm_rss_kib),
                vm_hwm_mb: mb(m.memory.vm_hwm_kib),
                rss_anon_kib: m.memory.rss_anon_kib,
                rss_file_kib: m.memory.rss_file_kib,
                rss_shmem_kib: m.memory.rss_shmem_kib,
                pss_kib: m.pss_kib,
                threads: m.memory.threads,
                messages_received: m.received,
                goal_met: stack.goal.then(|| mb(m.memory.vm_rss_kib) <= GOAL_MB),
                breakdown: m
                    .breakdown
                    .iter()
                    .map(|p| JsonPart {
                        part: p.name.clone(),
                        rss_kib: p.rss_kib,
                    })
                    .collect(),
            },
            Err(why) => JsonStack::Skipped {
                publisher: stack.name.clone(),
                skipped: why.replace('\n', " "),
            },
        })
        .collect();
    // Every build the goal applies to met it; `null` when none was measured.
    let measured: Vec<bool> = stacks
        .iter()
        .filter(|s| s.goal)
        .filter_map(|s| s.result.as_ref().ok())
        .map(|m| mb(m.memory.vm_rss_kib) <= GOAL_MB)
        .collect();
    let goal_met = (!measured.is_empty()).then(|| measured.iter().all(|met| *met));
    json::print(&Json {
        bench: "footprint",
        rate_hz: 10,
        steady_s: args.steady.as_secs_f64(),
        goal_vm_rss_mb: GOAL_MB,
        goal_met,
        lean_rust_libc: small_build::libc().name(),
        results,
    });
}
