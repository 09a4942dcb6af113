//! How roslite's cost grows with the graph: N processes, each with one node holding M
//! publishers and M subscriptions of `std_msgs/String` on the shared topics `scale/topic_0` ..
//! `scale/topic_<M-1>` (QoS depth 10: reliable, volatile), started together, next to the same
//! graph of rclpy processes (Fast DDS) for one size.
//!
//! Each graph runs in a network namespace of its own (`lo` only, multicast on), so discovery is
//! the ROS default (SPDP multicast, `SUBNET`) and everything on the wire is the graph's:
//! 1. every process is started and readies itself (rclpy: the interpreter imports rclpy;
//!    roslite: nothing to do), then waits for a `go` line;
//! 2. the capture starts ([`crate::toolkit::capture`]), every process is told `go` and starts
//!    ROS (context, node, endpoints) at once;
//! 3. each process polls every 10 ms until each publisher counts N subscriptions and each
//!    subscription N publishers (its own process's included), then says `MATCHED` with the
//!    time (CLOCK_MONOTONIC, which the bench reads too). A roslite process counts the
//!    acknowledged ones (`acknowledged_subscription_count`: over a same-host link, once the
//!    link's reader is attached at the writer), so that a message published after `MATCHED`
//!    reaches every subscription; rclpy offers discovery's counts only. Time to match is the last process's
//!    `MATCHED` after `go`; the discovery traffic is what the capture counted until then;
//! 4. after `--settle` (its traffic is `settling` in the JSON), the steady state: for
//!    `--steady`, the CPU time of every process (its threads' `schedstat`, nanoseconds) and
//!    the traffic (all RTPS, by kind) while the graph sits idle; then each process's VmRSS.
//!
//! Each window's traffic is sorted by kind at the end, with every SEDP announcement the capture
//! saw ([`crate::toolkit::capture::Snapshot`]): Fast DDS announces its `ros_discovery_info`
//! writer after the node's other endpoints, and that writer's first samples come before.
//!
//! roslite processes are this binary again (the hidden `roslite bench scale-peer`), with the
//! process environment's defaults (shared memory between them on this host); rclpy processes
//! run `python/rclpy_scale.py` with a Fast DDS profile that keeps everything on UDP (no shared
//! memory transport, no data sharing), so the capture sees all of their discovery too.
//!
//! RSS growth per matched remote endpoint is the least-squares slope of roslite's mean RSS per
//! process against the remote endpoints each process matched (2 x M x (N - 1)) over the sizes
//! measured.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Context, Executor, Instant};
use roslite_transport::netns::NetNs;
use serde::Serialize;

use crate::toolkit::capture::{Capture, Counts, Tally};
use crate::toolkit::cpu::CpuReading;
use crate::toolkit::memory::ProcMemory;
use crate::toolkit::process::{die_with_parent, self_command, Conversation};
use crate::toolkit::rclpy::{fastdds_version, find_python};
use crate::toolkit::units::parse_duration;
use crate::toolkit::{json, plot};

/// A Fast DDS profile for the rclpy graph: UDPv4 only (no shared-memory transport), data
/// sharing off, discovery as by default (SPDP multicast).
const FASTDDS_UDP_PROFILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com"><profiles>
  <transport_descriptors><transport_descriptor>
    <transport_id>udp</transport_id><type>UDPv4</type>
  </transport_descriptor></transport_descriptors>
  <participant profile_name="udp_only" is_default_profile="true"><rtps>
    <useBuiltinTransports>false</useBuiltinTransports>
    <userTransports><transport_id>udp</transport_id></userTransports>
  </rtps></participant>
  <data_writer profile_name="dw" is_default_profile="true"><qos><data_sharing><kind>OFF</kind></data_sharing></qos></data_writer>
  <data_reader profile_name="dr" is_default_profile="true"><qos><data_sharing><kind>OFF</kind></data_sharing></qos></data_reader>
</profiles></dds>
"#;

const TOPIC_PREFIX: &str = "scale/topic_";
/// How long a process may take to ready itself (sixteen Python interpreters importing rclpy on
/// two cores take seconds).
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a process looks at its match counts.
const POLL: Duration = Duration::from_millis(10);

#[derive(clap::Args)]
pub struct ScaleArgs {
    /// Graph sizes, comma-separated, each PROCESSESxENDPOINTS: that many processes, each with
    /// ENDPOINTS publishers and ENDPOINTS subscriptions (processes 2 to 64, endpoints 1 to 500).
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_graph_size,
        default_value = "2x1,4x10,8x10,8x50,16x50"
    )]
    sizes: Vec<GraphSize>,
    /// The size also measured with rclpy processes (default: the largest of --sizes).
    #[arg(long, value_parser = parse_graph_size)]
    rclpy_size: Option<GraphSize>,
    /// Skip the rclpy (Fast DDS) graph.
    #[arg(long)]
    no_rclpy: bool,
    /// Python interpreter with rclpy (default: $ROSLITE_PYTHON, else ./.venv/bin/python).
    #[arg(long)]
    python: Option<PathBuf>,
    /// How long a graph may take to match before it is reported as not matched.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    match_timeout: Duration,
    /// Wait after matching before the steady state is measured.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    settle: Duration,
    /// How long the steady state (idle CPU, idle traffic) is measured (CPU: each thread's
    /// time on a CPU, to the nanosecond).
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    steady: Duration,
    /// Same-host transports the roslite processes may use (`ROSLITE_TRANSPORTS`: `udp` keeps
    /// everything on RTPS); default: the environment's default (shared memory, then a Unix
    /// socket, between roslite processes).
    #[arg(long)]
    transports: Option<String>,
    /// ROS domain of the graphs (each runs in a network namespace of its own).
    #[arg(long, default_value_t = 0)]
    domain: u32,
    /// Where the charts go (one SVG per figure).
    #[arg(long, default_value = "bench-results/scale")]
    out_dir: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// N processes with M publishers and M subscriptions each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct GraphSize {
    pub processes: u32,
    pub endpoints: u32,
}

impl GraphSize {
    fn label(self) -> String {
        format!("{}x{}", self.processes, self.endpoints)
    }

    /// N x M, the x axis of the charts.
    fn product(self) -> u32 {
        self.processes * self.endpoints
    }

    /// The remote endpoints each process matches: each of its M publishers the N - 1 remote
    /// subscriptions of its topic, and each of its M subscriptions the N - 1 remote publishers.
    fn matched_remote_per_process(self) -> u64 {
        2 * u64::from(self.endpoints) * u64::from(self.processes - 1)
    }
}

fn parse_graph_size(text: &str) -> Result<GraphSize, String> {
    let (n, m) = text.trim().split_once(['x', 'X']).ok_or_else(|| {
        format!("'{text}' is not a size; write it PROCESSESxENDPOINTS, like 16x50")
    })?;
    let number = |s: &str, what: &str, range: std::ops::RangeInclusive<u32>| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| range.contains(v))
            .ok_or_else(|| {
                format!(
                    "'{text}': {what} must be a number from {} to {}",
                    range.start(),
                    range.end()
                )
            })
    };
    Ok(GraphSize {
        processes: number(n, "processes", 2..=64)?,
        endpoints: number(m, "endpoints", 1..=500)?,
    })
}

/// The hidden `roslite bench scale-peer`: one roslite process of a graph.
#[derive(clap::Args)]
pub struct PeerArgs {
    #[arg(long)]
    index: u32,
    #[arg(long)]
    processes: u32,
    #[arg(long)]
    endpoints: u32,
}

/// One roslite process of a graph: see the module docs. Runs until killed.
pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    println!("READY");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    if line.trim() != "go" {
        return Ok(());
    }
    let ctx = Context::from_env()?;
    let node = ctx.create_node(&format!("scale_{}", args.index))?;
    let topics: Vec<String> = (0..args.endpoints)
        .map(|k| format!("{TOPIC_PREFIX}{k}"))
        .collect();
    let publishers = topics
        .iter()
        .map(|t| node.create_publisher::<StringMsg>(t, 10))
        .collect::<Result<Vec<_>, _>>()?;
    let subscriptions = topics
        .iter()
        .map(|t| node.create_subscription(t, 10, |_: StringMsg| {}))
        .collect::<Result<Vec<_>, _>>()?;
    println!("CREATED {}", Instant::monotonic_now().as_nanos());
    let n = args.processes as usize;
    let expected = 2 * args.endpoints as usize * n;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let mut last = None;
    loop {
        let count: usize = publishers
            .iter()
            .map(|p| p.acknowledged_subscription_count().min(n))
            .chain(
                subscriptions
                    .iter()
                    .map(|s| s.acknowledged_publisher_count().min(n)),
            )
            .sum();
        if last != Some(count) {
            last = Some(count);
            println!("COUNT {count} {expected}");
        }
        if count >= expected {
            println!("MATCHED {}", Instant::monotonic_now().as_nanos());
            break;
        }
        let until = Instant::monotonic_now() + POLL;
        while Instant::monotonic_now() < until {
            executor.spin_once(Some(until - Instant::monotonic_now()));
        }
    }
    executor.spin();
    Ok(())
}

/// Which processes a graph is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Stack {
    Roslite,
    Rclpy,
}

impl Stack {
    fn name(self) -> &'static str {
        match self {
            Stack::Roslite => "roslite",
            Stack::Rclpy => "rclpy",
        }
    }
}

/// What one graph measured.
#[derive(Clone, Debug, Serialize)]
struct Run {
    stack: Stack,
    processes: u32,
    /// Publishers per process, and as many subscriptions.
    endpoints: u32,
    matched_remote_endpoints_per_process: u64,
    /// Every process matched all its endpoints within `--match-timeout`.
    matched: bool,
    /// Processes that did.
    processes_matched: u32,
    /// Sum over processes of their matched counts, and what full matching gives.
    match_count: u64,
    match_count_expected: u64,
    /// From `go` to the last process's `MATCHED` (`null` if not all matched).
    #[serde(serialize_with = "json::fixed1_opt")]
    time_to_match_ms: Option<f64>,
    /// From `go` to the last process's endpoints created.
    #[serde(serialize_with = "json::fixed1_opt")]
    time_to_create_ms: Option<f64>,
    /// Traffic from `go` to matched (or to the timeout).
    discovery: Counts,
    /// Traffic from matched to the start of the steady state (`--settle`).
    settling: Counts,
    /// Traffic during the steady state, by kind, and per second.
    idle: Counts,
    #[serde(serialize_with = "json::fixed1")]
    idle_bytes_per_s: f64,
    #[serde(serialize_with = "json::fixed1")]
    idle_datagrams_per_s: f64,
    /// CPU of one process during the steady state, percent of one core: mean and max over
    /// processes, and the sum (the whole graph).
    #[serde(serialize_with = "json::fixed3")]
    idle_cpu_percent_mean: f64,
    #[serde(serialize_with = "json::fixed3")]
    idle_cpu_percent_max: f64,
    #[serde(serialize_with = "json::fixed3")]
    idle_cpu_percent_total: f64,
    rss_kib_mean: u64,
    rss_kib_max: u64,
    threads_mean: u64,
    /// Packets the capture missed (its figures are then low by about that many datagrams).
    capture_missed: u64,
}

pub fn run(args: &ScaleArgs) -> anyhow::Result<()> {
    anyhow::ensure!(!args.sizes.is_empty(), "--sizes is empty");
    anyhow::ensure!(
        args.domain <= roslite::context::MAX_DOMAIN_ID,
        "--domain must be at most {}",
        roslite::context::MAX_DOMAIN_ID
    );
    if let Some(transports) = &args.transports {
        roslite::LocalTransports::parse(transports)
            .map_err(|e| anyhow::anyhow!("--transports: {e}"))?;
    }
    let mut sizes = args.sizes.clone();
    sizes.sort_by_key(|s| (s.product(), *s));
    sizes.dedup();
    let rclpy_size = args
        .rclpy_size
        .or_else(|| sizes.iter().copied().max_by_key(|s| (s.product(), *s)));
    let python = if args.no_rclpy {
        None
    } else {
        Some(find_python(args.python.as_deref())?)
    };
    let work = std::env::temp_dir().join(format!("roslite-bench-scale-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let result = measure_all(args, &sizes, rclpy_size, python.as_deref(), &work);
    let _ = std::fs::remove_dir_all(&work);
    let runs = result?;
    let slope = rss_slope(&runs);
    let goals = goals(&runs, slope);
    let charts = write_charts(&runs, &args.out_dir)?;
    if args.json {
        json::print(&Json {
            bench: "scale",
            steady_s: args.steady.as_secs_f64(),
            fastdds: python.as_deref().and_then(fastdds_version),
            transports: args.transports.as_deref(),
            runs: &runs,
            rss_kib_per_matched_remote_endpoint: slope,
            goals: &goals,
            charts,
        });
        return Ok(());
    }
    print!("{}", table(args, &runs, slope, &goals));
    for chart in charts {
        println!("chart: {chart}");
    }
    Ok(())
}

fn measure_all(
    args: &ScaleArgs,
    sizes: &[GraphSize],
    rclpy_size: Option<GraphSize>,
    python: Option<&Path>,
    work: &Path,
) -> anyhow::Result<Vec<Run>> {
    let mut runs = Vec::new();
    for &size in sizes {
        let run = measure(args, Stack::Roslite, size, None, work)
            .with_context(|| format!("roslite graph {}", size.label()))?;
        if !args.json {
            eprintln!("{}", progress(&run));
        }
        runs.push(run);
    }
    if let (Some(python), Some(size)) = (python, rclpy_size) {
        std::fs::write(
            work.join("rclpy_scale.py"),
            include_str!("../../python/rclpy_scale.py"),
        )?;
        std::fs::write(work.join("fastdds-udp.xml"), FASTDDS_UDP_PROFILE)?;
        // Absolute for `ip netns exec`, but not resolved: a venv's interpreter is a symlink
        // whose own path tells Python where the venv is.
        let python =
            std::path::absolute(python).with_context(|| format!("finding {}", python.display()))?;
        let run = measure(args, Stack::Rclpy, size, Some(&python), work)
            .with_context(|| format!("rclpy graph {} (needs rclpy in the venv)", size.label()))?;
        if !args.json {
            eprintln!("{}", progress(&run));
        }
        runs.push(run);
    }
    Ok(runs)
}

fn progress(run: &Run) -> String {
    format!(
        "{} {}: {}",
        run.stack.name(),
        GraphSize {
            processes: run.processes,
            endpoints: run.endpoints
        }
        .label(),
        match run.time_to_match_ms {
            Some(ms) => format!("matched in {ms:.0} ms"),
            None => format!(
                "NOT matched ({} of {} matches)",
                run.match_count, run.match_count_expected
            ),
        }
    )
}

/// One graph, start to end (see the module docs).
fn measure(
    args: &ScaleArgs,
    stack: Stack,
    size: GraphSize,
    python: Option<&Path>,
    work: &Path,
) -> anyhow::Result<Run> {
    let ns = NetNs::create("scale").context("creating a network namespace (needs root)")?;
    let mut processes = Vec::new();
    for index in 0..size.processes {
        let mut command = match (stack, python) {
            (Stack::Roslite, _) => {
                let template = self_command(&[
                    "bench",
                    "scale-peer",
                    "--index",
                    &index.to_string(),
                    "--processes",
                    &size.processes.to_string(),
                    "--endpoints",
                    &size.endpoints.to_string(),
                ])?;
                let mut command = in_namespace(&ns, &template);
                if let Some(transports) = &args.transports {
                    command.env(roslite::LocalTransports::ENV, transports);
                }
                command
            }
            (Stack::Rclpy, Some(python)) => {
                let mut command = ns.command(python);
                command
                    .arg(work.join("rclpy_scale.py"))
                    .args([
                        index.to_string(),
                        size.processes.to_string(),
                        size.endpoints.to_string(),
                    ])
                    .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
                    .env(
                        "FASTDDS_DEFAULT_PROFILES_FILE",
                        work.join("fastdds-udp.xml"),
                    )
                    .env("ROS_LOG_DIR", work.join("log"))
                    .env("PYTHONUNBUFFERED", "1");
                command
            }
            (Stack::Rclpy, None) => bail!("internal bug: an rclpy graph without Python"),
        };
        command
            .env("ROS_DOMAIN_ID", args.domain.to_string())
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env_remove("ROS_STATIC_PEERS")
            .env_remove("ROS_LOCALHOST_ONLY")
            .env_remove("ROSLITE_NETWORK");
        if args.transports.is_none() || stack == Stack::Rclpy {
            command.env_remove(roslite::LocalTransports::ENV);
        }
        let name = format!("{} process {index}", stack.name());
        processes.push(Conversation::spawn(&name, &mut command)?);
    }
    for p in &mut processes {
        p.expect("READY", READY_TIMEOUT)?;
    }
    let capture = Capture::start_in(&ns)?;
    let go = Instant::monotonic_now();
    for p in &mut processes {
        p.say("go")?;
    }
    let deadline = std::time::Instant::now() + args.match_timeout;
    let mut matched_at = Vec::new();
    let mut created_at = Vec::new();
    let mut counts = vec![0u64; processes.len()];
    for (i, p) in processes.iter_mut().enumerate() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if let Ok(created) = p.expect("CREATED", left.max(Duration::from_millis(1))) {
            created_at.push(created.parse::<u64>().ok());
        }
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(line) = p.expect("", left.max(Duration::from_millis(1))) else {
                break;
            };
            if let Some(count) = line.strip_prefix("COUNT ") {
                counts[i] = count
                    .split_whitespace()
                    .next()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(counts[i]);
            } else if let Some(at) = line.strip_prefix("MATCHED ") {
                matched_at.push(at.trim().parse::<u64>().ok());
                break;
            }
        }
    }
    let at_match = capture.snapshot();
    let all_matched = matched_at.len() == processes.len() && matched_at.iter().all(Option::is_some);
    let since_go = |times: &[Option<u64>]| -> Option<f64> {
        let last = times
            .iter()
            .copied()
            .collect::<Option<Vec<u64>>>()?
            .into_iter()
            .max()?;
        Some(last.saturating_sub(go.as_nanos()) as f64 / 1e6)
    };
    let time_to_match_ms = if all_matched {
        since_go(&matched_at)
    } else {
        None
    };
    let time_to_create_ms = if created_at.len() == processes.len() {
        since_go(&created_at)
    } else {
        None
    };
    let expected_per_process = 2 * u64::from(size.endpoints) * u64::from(size.processes);
    if all_matched {
        counts.iter_mut().for_each(|c| *c = expected_per_process);
    }
    std::thread::sleep(args.settle);
    let pids: Vec<u32> = processes.iter().map(Conversation::pid).collect();
    let before_cpu = CpuReading::of_threads(&pids);
    let before_steady = capture.snapshot();
    std::thread::sleep(args.steady);
    let after_cpu = CpuReading::of_threads(&pids);
    let after_steady = capture.snapshot();
    let memory: Vec<ProcMemory> = pids
        .iter()
        .map(|pid| ProcMemory::of(Some(*pid)))
        .collect::<anyhow::Result<_>>()
        .context("a process of the graph exited")?;
    // All at once: each then ends while the others do, not in turn as they are dropped.
    processes.iter().for_each(Conversation::interrupt);
    drop(processes);
    // Sorted only now, with every announcement the capture saw (see `Snapshot`).
    let discovery = capture.resolve(&at_match);
    let before_steady = capture.resolve(&before_steady);
    let settling = before_steady.since(&discovery);
    let steady_traffic = capture.resolve(&after_steady).since(&before_steady);
    let missed = capture.counts().missed;
    drop(capture);
    let shares: Vec<f64> = after_cpu
        .share_since(&before_cpu)
        .into_iter()
        .map(|s| s.unwrap_or(0.0) * 100.0)
        .collect();
    let seconds = args.steady.as_secs_f64();
    let idle: Tally = steady_traffic.rtps();
    let n = memory.len().max(1) as u64;
    Ok(Run {
        stack,
        processes: size.processes,
        endpoints: size.endpoints,
        matched_remote_endpoints_per_process: size.matched_remote_per_process(),
        matched: all_matched,
        processes_matched: matched_at.iter().filter(|m| m.is_some()).count() as u32,
        match_count: counts.iter().sum(),
        match_count_expected: expected_per_process * u64::from(size.processes),
        time_to_match_ms,
        time_to_create_ms,
        discovery,
        settling,
        idle: steady_traffic,
        idle_bytes_per_s: idle.bytes as f64 / seconds,
        idle_datagrams_per_s: idle.datagrams as f64 / seconds,
        idle_cpu_percent_mean: shares.iter().sum::<f64>() / shares.len().max(1) as f64,
        idle_cpu_percent_max: shares.iter().copied().fold(0.0, f64::max),
        idle_cpu_percent_total: shares.iter().sum(),
        rss_kib_mean: memory.iter().map(|m| m.vm_rss_kib).sum::<u64>() / n,
        rss_kib_max: memory.iter().map(|m| m.vm_rss_kib).max().unwrap_or(0),
        threads_mean: memory.iter().map(|m| m.threads).sum::<u64>() / n,
        capture_missed: missed,
    })
}

/// `template` (program, arguments, environment) run inside `ns`.
fn in_namespace(ns: &NetNs, template: &Command) -> Command {
    let mut command = ns.command(template.get_program());
    command.args(template.get_args());
    command
}

/// Least-squares slope of roslite's mean RSS per process (KiB) against the remote endpoints
/// each process matched, over the sizes that matched; `None` with fewer than two distinct.
fn rss_slope(runs: &[Run]) -> Option<f64> {
    let points: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| r.stack == Stack::Roslite && r.matched)
        .map(|r| {
            (
                r.matched_remote_endpoints_per_process as f64,
                r.rss_kib_mean as f64,
            )
        })
        .collect();
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[derive(Clone, Debug, Serialize)]
struct Goal {
    goal: String,
    #[serde(serialize_with = "json::fixed3")]
    value: f64,
    #[serde(serialize_with = "json::fixed3")]
    limit: f64,
    met: bool,
}

/// The issue's scale goals, each only where its same-run comparison exists: both graphs of
/// 16 x 50 measured and fully matched (a graph still discovering is not idle).
fn goals(runs: &[Run], slope: Option<f64>) -> Vec<Goal> {
    let mut out = Vec::new();
    let at = |stack: Stack| {
        runs.iter()
            .find(|r| r.stack == stack && r.processes == 16 && r.endpoints == 50 && r.matched)
    };
    if let (Some(ours), Some(theirs)) = (at(Stack::Roslite), at(Stack::Rclpy)) {
        if let (Some(a), Some(b)) = (ours.time_to_match_ms, theirs.time_to_match_ms) {
            out.push(Goal {
                goal: "16 x 50 fully matched in at most half rclpy's time (ratio)".into(),
                value: a / b,
                limit: 0.5,
                met: a / b <= 0.5,
            });
        }
        if theirs.idle_cpu_percent_total > 0.0 {
            let ratio = ours.idle_cpu_percent_total / theirs.idle_cpu_percent_total;
            out.push(Goal {
                goal: "16 x 50 idle CPU at most a quarter of rclpy's (ratio)".into(),
                value: ratio,
                limit: 0.25,
                met: ratio <= 0.25,
            });
        }
    }
    if let Some(slope) = slope {
        out.push(Goal {
            goal: "roslite RSS growth per matched remote endpoint, KiB".into(),
            value: slope,
            limit: 4.0,
            met: slope <= 4.0,
        });
    }
    out
}

fn table(args: &ScaleArgs, runs: &[Run], slope: Option<f64>, goals: &[Goal]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scale: N processes x M publishers and M subscriptions each (std_msgs/String, depth 10) \
         on M shared topics, started together in a network namespace; matched = every \
         publisher counts N subscriptions and every subscription N publishers (roslite: \
         acknowledged ones, each same-host link attached); discovery = \
         SPDP + SEDP + ros_discovery_info datagrams until matched (UDP payload bytes); idle = \
         {} of steady state after {} settling",
        secs(args.steady),
        secs(args.settle)
    );
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "stack",
        "NxM",
        "remote",
        "match ms",
        "disc kB",
        "disc dg",
        "SEDP kB",
        "info kB",
        "idle kB/s",
        "CPU %/pr",
        "RSS MiB",
        "threads"
    );
    for r in runs {
        let size = GraphSize {
            processes: r.processes,
            endpoints: r.endpoints,
        };
        let d = r.discovery.discovery();
        let _ = writeln!(
            out,
            "{:<8} {:>5} {:>7} {:>10} {:>9.1} {:>9} {:>9.1} {:>9.1} {:>9.2} {:>9.3} {:>9.1} {:>8}",
            r.stack.name(),
            size.label(),
            r.matched_remote_endpoints_per_process,
            r.time_to_match_ms.map_or_else(
                || format!("NO {}/{}", r.match_count, r.match_count_expected),
                |ms| format!("{ms:.0}")
            ),
            d.bytes as f64 / 1e3,
            d.datagrams,
            r.discovery.sedp.bytes as f64 / 1e3,
            r.discovery.ros_discovery_info.bytes as f64 / 1e3,
            r.idle_bytes_per_s / 1e3,
            r.idle_cpu_percent_mean,
            r.rss_kib_mean as f64 / 1024.0,
            r.threads_mean,
        );
        if r.capture_missed > 0 {
            let _ = writeln!(
                out,
                "  (the capture missed {} packets of this graph: its traffic figures are low)",
                r.capture_missed
            );
        }
    }
    let _ = writeln!(
        out,
        "remote = remote endpoints each process matches, 2 x M x (N - 1); CPU %/pr = mean idle \
         CPU of one process, percent of a core; roslite paths: {}",
        args.transports.as_deref().map_or(
            "the default (same-host links between roslite processes)".to_owned(),
            |t| { format!("ROSLITE_TRANSPORTS={t}") }
        )
    );
    match slope {
        Some(s) => {
            let _ = writeln!(
                out,
                "roslite RSS per matched remote endpoint (least squares over the sizes): {s:.2} KiB"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "roslite RSS per matched remote endpoint: needs two sizes that matched"
            );
        }
    }
    for g in goals {
        let _ = writeln!(
            out,
            "goal: {} -> {} ({:.3}, limit {:.3})",
            g.goal,
            if g.met { "met" } else { "NOT met" },
            g.value,
            g.limit
        );
    }
    out
}

fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// One chart per figure against N x M; returns their paths.
fn write_charts(runs: &[Run], dir: &Path) -> anyhow::Result<Vec<String>> {
    type Figure = fn(&Run) -> Option<f64>;
    let figures: [(&str, &str, &str, Figure); 4] = [
        (
            "match",
            "Time from start until every endpoint matched",
            "ms",
            |r| r.time_to_match_ms,
        ),
        (
            "discovery",
            "Discovery traffic until matched (SPDP, SEDP, ros_discovery_info)",
            "kB (UDP payload)",
            |r| Some(r.discovery.discovery().bytes as f64 / 1e3),
        ),
        (
            "cpu",
            "Idle CPU per process in steady state",
            "% of one core (mean over processes)",
            |r| Some(r.idle_cpu_percent_mean),
        ),
        (
            "rss",
            "Resident memory per process",
            "MiB (mean over processes)",
            |r| Some(r.rss_kib_mean as f64 / 1024.0),
        ),
    ];
    let mut products: Vec<u32> = runs.iter().map(|r| r.processes * r.endpoints).collect();
    products.sort_unstable();
    products.dedup();
    let ticks: Vec<(f64, String)> = products
        .iter()
        .map(|p| (f64::from(*p), p.to_string()))
        .collect();
    let mut paths = Vec::new();
    for (name, title, unit, figure) in figures {
        let series: Vec<plot::Line> = [Stack::Roslite, Stack::Rclpy]
            .into_iter()
            .enumerate()
            .filter_map(|(color, stack)| {
                let mut points: Vec<(f64, f64)> = runs
                    .iter()
                    .filter(|r| r.stack == stack)
                    .filter_map(|r| Some((f64::from(r.processes * r.endpoints), figure(r)?)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (!points.is_empty()).then(|| plot::Line {
                    name: stack.name().to_owned(),
                    points,
                    color,
                    stroke: plot::Stroke::Solid,
                })
            })
            .collect();
        let svg = plot::log_log_lines(
            &format!("{title}, against N processes x M publishers (and M subscriptions) each"),
            "N x M",
            unit,
            &ticks,
            &series,
        )?;
        let path = dir.join(format!("scale-{name}.svg"));
        plot::write_svg(&path, &svg)?;
        paths.push(path.display().to_string());
    }
    Ok(paths)
}

#[derive(Serialize)]
struct Json<'a> {
    bench: &'static str,
    #[serde(serialize_with = "json::number")]
    steady_s: f64,
    fastdds: Option<String>,
    /// `ROSLITE_TRANSPORTS` of the roslite processes (`null`: the default).
    transports: Option<&'a str>,
    runs: &'a [Run],
    #[serde(serialize_with = "json::fixed3_opt")]
    rss_kib_per_matched_remote_endpoint: Option<f64>,
    goals: &'a [Goal],
    charts: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_sizes_parse_and_say_what_is_wrong() {
        assert_eq!(
            parse_graph_size("16x50"),
            Ok(GraphSize {
                processes: 16,
                endpoints: 50
            })
        );
        assert!(parse_graph_size("16")
            .unwrap_err()
            .contains("PROCESSESxENDPOINTS"));
        assert!(parse_graph_size("1x5").unwrap_err().contains("processes"));
        assert!(parse_graph_size("4x0").unwrap_err().contains("endpoints"));
        let size = parse_graph_size("4X10").unwrap();
        assert_eq!(
            (size.product(), size.matched_remote_per_process()),
            (40, 60)
        );
    }

    fn run(processes: u32, endpoints: u32, rss_kib_mean: u64) -> Run {
        let size = GraphSize {
            processes,
            endpoints,
        };
        Run {
            stack: Stack::Roslite,
            processes,
            endpoints,
            matched_remote_endpoints_per_process: size.matched_remote_per_process(),
            matched: true,
            processes_matched: processes,
            match_count: 0,
            match_count_expected: 0,
            time_to_match_ms: Some(1.0),
            time_to_create_ms: Some(1.0),
            discovery: Counts::default(),
            settling: Counts::default(),
            idle: Counts::default(),
            idle_bytes_per_s: 0.0,
            idle_datagrams_per_s: 0.0,
            idle_cpu_percent_mean: 0.0,
            idle_cpu_percent_max: 0.0,
            idle_cpu_percent_total: 0.0,
            rss_kib_mean,
            rss_kib_max: rss_kib_mean,
            threads_mean: 1,
            capture_missed: 0,
        }
    }

    #[test]
    fn rss_slope_is_per_matched_remote_endpoint() {
        // 2 KiB per remote endpoint on top of 4000 KiB: 2x1 matches 2, 4x10 matches 60.
        let runs = vec![run(2, 1, 4004), run(4, 10, 4120), run(8, 10, 4280)];
        let slope = rss_slope(&runs).unwrap();
        assert!((slope - 2.0).abs() < 1e-9, "{slope}");
        assert_eq!(rss_slope(&runs[..1]), None);
        let memory_only = goals(&runs, Some(slope));
        // No rclpy run: only the memory goal has its figures.
        assert_eq!(memory_only.len(), 1);
        assert!(memory_only[0].met);
        // The 16 x 50 goals need both graphs matched.
        let mut ours = run(16, 50, 9000);
        let mut theirs = Run {
            stack: Stack::Rclpy,
            idle_cpu_percent_total: 1.0,
            ..run(16, 50, 80000)
        };
        assert_eq!(goals(&[ours.clone(), theirs.clone()], None).len(), 2);
        theirs.matched = false;
        assert!(goals(&[ours.clone(), theirs.clone()], None).is_empty());
        theirs.matched = true;
        ours.matched = false;
        assert!(goals(&[ours, theirs], None).is_empty());
    }
}
