//! Throughput between two processes: one publisher, one subscriber, reliable, as fast as the
//! subscriber keeps up, for each same-host path (shared memory, Unix socket) and RTPS/UDP on
//! 127.0.0.1, keep-last and keep-all, next to Cyclone DDS's `ddsperf pub`/`ddsperf sub` in
//! the same run.
//!
//! roslite: both sides are this binary again (the hidden `roslite bench throughput-peer`), each
//! an ordinary networked context with LOCALHOST discovery in a domain of its own and
//! `ROSLITE_TRANSPORTS` restricted to the path measured. The publisher sends
//! `std_msgs/UInt8MultiArray` messages of the requested size back to back from one thread:
//! its first 8 bytes carry a sequence number, the 9th the phase (warm-up, measured, done).
//! Keep-all: a `publish` that finds the subscriber without room waits up to
//! `max_blocking_time` and is then retried with the same number, so the subscriber's pace is
//! the publisher's. Keep-last (depth `--depth`): nothing waits; what the subscriber had no
//! room for is overwritten and shows as loss. After a warm-up the publisher says `START`,
//! publishes for `--duration`, says `END`, then sends a `done` message every 20 ms until it is
//! stopped. The subscriber counts the measured messages, their bytes, gaps in the numbers, and
//! the times of the first and last one; the rate is its count over that span. CPU time
//! (user + system, all threads, from `/proc`) of both processes is read when the publisher says
//! `START` and `END`: the publisher's per message published, the subscriber's per message
//! received.
//!
//! Cyclone: `ddsperf sub` and `ddsperf pub size N` (its KeyedSeq type: a 12-byte header plus
//! the octets), reliable, `-k all` or `-k <depth>`, confined to 127.0.0.1 as the rtt bench
//! runs it; see [`crate::toolkit::cyclone::throughput`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Executor, Instant, LocalTransports, PublishError, QosProfile};
use serde::Serialize;

use crate::toolkit::context::{localhost_context_with, remote_publisher_path};
use crate::toolkit::cpu::CpuReading;
use crate::toolkit::cyclone::{self, cyclone_version, find_ddsperf};
use crate::toolkit::process::{die_with_parent, self_command, Conversation};
use crate::toolkit::units::{parse_duration, parse_size, size_label};
use crate::toolkit::{json, plot};

const TOPIC: &str = "roslite_bench/throughput";
/// Bytes at the start of every message: the sequence number, then the phase.
const HEADER: usize = 9;
const PHASE_WARMUP: u8 = 0;
const PHASE_MEASURED: u8 = 1;
const PHASE_DONE: u8 = 2;
/// How long each side waits for the other to be discovered and matched.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(clap::Args)]
pub struct ThroughputArgs {
    /// Payload sizes (the message's `data` array), comma-separated: bytes, or with a k/KiB/M/MiB
    /// suffix (powers of 1024); at least 16 B.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_size,
        default_value = "64,1KiB,16KiB,64KiB,256KiB,1MiB,4MiB"
    )]
    sizes: Vec<usize>,
    /// roslite paths to measure: shm (shared memory), uds (Unix socket), udp (RTPS on
    /// 127.0.0.1).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "shm,uds,udp")]
    paths: Vec<Path_>,
    /// Histories to measure (both reliable).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "keep-all,keep-last"
    )]
    histories: Vec<HistoryArg>,
    /// Depth of the keep-last runs (roslite's and Cyclone's).
    #[arg(long, default_value_t = 10)]
    depth: u32,
    /// How long each point is measured, after a warm-up of a fifth of it (at least 200 ms).
    /// Cyclone's points take whole seconds (ddsperf reports once a second).
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    duration: Duration,
    /// ROS domain of the roslite pairs; Cyclone runs in the next one.
    #[arg(long, default_value_t = 200)]
    domain: u32,
    /// Skip Cyclone even if `ddsperf` is installed.
    #[arg(long)]
    no_cyclone: bool,
    /// Where to write the SVG chart of throughput against size.
    #[arg(long, default_value = "bench-results/throughput.svg")]
    svg: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// A roslite path (`Path_`: `Path` is the file-system path type imported here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Path_ {
    Shm,
    Uds,
    Udp,
}

impl Path_ {
    fn name(self) -> &'static str {
        match self {
            Path_::Shm => "shm",
            Path_::Uds => "uds",
            Path_::Udp => "udp",
        }
    }

    /// The `ROSLITE_TRANSPORTS` value that leaves only this path.
    fn transports(self) -> &'static str {
        self.name()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryArg {
    KeepAll,
    KeepLast,
}

impl HistoryArg {
    fn name(self) -> &'static str {
        match self {
            HistoryArg::KeepAll => "keep_all",
            HistoryArg::KeepLast => "keep_last",
        }
    }
}

/// The hidden `roslite bench throughput-peer`: one side of a roslite pair.
#[derive(clap::Args)]
pub struct PeerArgs {
    #[arg(long, value_enum)]
    role: Role,
    #[arg(long)]
    domain: u32,
    #[arg(long, value_enum)]
    path: Path_,
    #[arg(long, value_enum)]
    history: HistoryArg,
    #[arg(long)]
    depth: u32,
    #[arg(long)]
    size: usize,
    #[arg(long)]
    warmup_ms: u64,
    #[arg(long)]
    duration_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    Publisher,
    Subscriber,
}

fn qos(history: HistoryArg, depth: u32) -> QosProfile {
    match history {
        HistoryArg::KeepAll => QosProfile::keep_last(1).keep_all(),
        HistoryArg::KeepLast => QosProfile::keep_last(depth as usize),
    }
}

/// Runs one side of a roslite pair until stopped.
pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    let transports = LocalTransports::parse(args.path.transports())?;
    let ctx = localhost_context_with(args.domain, transports)?;
    let node = ctx.create_node(match args.role {
        Role::Publisher => "roslite_bench_throughput_pub",
        Role::Subscriber => "roslite_bench_throughput_sub",
    })?;
    let qos = qos(args.history, args.depth);
    match args.role {
        Role::Publisher => publish(args, &node, qos),
        Role::Subscriber => {
            let counts = Arc::new(Mutex::new(Counts::default()));
            let sink = counts.clone();
            let _subscription =
                node.create_subscription(TOPIC, qos, move |msg: &UInt8MultiArray| {
                    let at = Instant::monotonic_now();
                    sink.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record(at, &msg.data[..]);
                })?;
            println!("READY");
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            loop {
                // `spin_for`, not `spin_once`: a callback the receiving thread runs on the
                // sleeping executor's lent turn does not wake this thread, as in `spin`
                // (`spin_once` returns after each callback: a wake-up of this thread a message).
                executor.spin_for(Duration::from_millis(50));
                let mut counts = counts.lock().unwrap_or_else(PoisonError::into_inner);
                if counts.done && !counts.reported {
                    counts.reported = true;
                    println!(
                        "RESULT received={} bytes={} gaps={} out_of_order={} span_ns={} path={}",
                        counts.received,
                        counts.bytes,
                        counts.gaps,
                        counts.out_of_order,
                        counts.span().as_nanos(),
                        remote_publisher_path(&ctx, TOPIC),
                    );
                }
            }
        }
    }
}

/// What the subscriber saw of the measured phase.
#[derive(Default)]
struct Counts {
    received: u64,
    bytes: u64,
    gaps: u64,
    out_of_order: u64,
    first: Option<Instant>,
    last: Option<Instant>,
    last_seq: Option<u64>,
    done: bool,
    reported: bool,
}

impl Counts {
    fn record(&mut self, at: Instant, data: &[u8]) {
        let Some((seq, phase)) = read_header(data) else {
            return;
        };
        match phase {
            PHASE_MEASURED => {
                self.received += 1;
                self.bytes += data.len() as u64;
                self.first.get_or_insert(at);
                self.last = Some(at);
                match self.last_seq {
                    Some(last) if seq <= last => self.out_of_order += 1,
                    Some(last) => self.gaps += seq - last - 1,
                    None => {}
                }
                self.last_seq = Some(seq.max(self.last_seq.unwrap_or(0)));
            }
            PHASE_DONE => self.done = true,
            _ => {}
        }
    }

    fn span(&self) -> Duration {
        match (self.first, self.last) {
            (Some(first), Some(last)) => last - first,
            _ => Duration::ZERO,
        }
    }
}

fn read_header(data: &[u8]) -> Option<(u64, u8)> {
    let seq = u64::from_le_bytes(data.get(..8)?.try_into().ok()?);
    Some((seq, *data.get(8)?))
}

fn publish(args: &PeerArgs, node: &roslite::Node, qos: QosProfile) -> anyhow::Result<()> {
    let publisher = node.create_publisher::<UInt8MultiArray>(TOPIC, qos)?;
    let start = Instant::monotonic_now();
    while publisher.subscription_count() == 0 {
        if Instant::monotonic_now() - start > MATCH_TIMEOUT {
            bail!("no subscriber matched within {MATCH_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut message = Arc::new(UInt8MultiArray {
        data: vec![0x5a; args.size.max(HEADER)].into(),
        ..Default::default()
    });
    let mut seq = 0u64;
    let mut send = |phase: u8, seq: u64| -> anyhow::Result<bool> {
        let data = Arc::make_mut(&mut message).data.to_mut();
        data[..8].copy_from_slice(&seq.to_le_bytes());
        data[8] = phase;
        match publisher.publish_shared(message.clone()) {
            Ok(()) => Ok(true),
            // Keep-all: the subscriber had no room for max_blocking_time; send it again.
            Err(PublishError::Timeout) => Ok(false),
            Err(e) => Err(e.into()),
        }
    };
    let warmup_end = Instant::monotonic_now() + Duration::from_millis(args.warmup_ms);
    while Instant::monotonic_now() < warmup_end {
        if send(PHASE_WARMUP, seq)? {
            seq += 1;
        }
    }
    println!("START");
    let started = Instant::monotonic_now();
    let end = started + Duration::from_millis(args.duration_ms);
    let mut sent = 0u64;
    // The clock is read every 64 messages: at 64 B a read per message would be a noticeable
    // share of the publisher's own cost.
    loop {
        if sent % 64 == 0 && Instant::monotonic_now() >= end {
            break;
        }
        if send(PHASE_MEASURED, seq)? {
            seq += 1;
            sent += 1;
        }
    }
    let seconds = (Instant::monotonic_now() - started).as_secs_f64();
    println!("END sent={sent} seconds={seconds}");
    loop {
        let _ = send(PHASE_DONE, seq)?;
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
struct Point {
    system: &'static str,
    path: &'static str,
    /// The path the subscriber's graph reported for the publisher (roslite only).
    #[serde(skip_serializing_if = "Option::is_none")]
    observed_path: Option<String>,
    history: &'static str,
    size_bytes: usize,
    #[serde(serialize_with = "json::fixed1")]
    messages_per_s: f64,
    #[serde(serialize_with = "json::fixed3")]
    mb_per_s: f64,
    /// Messages published in the window (`null` where the peer does not say).
    sent: Option<u64>,
    received: u64,
    lost: u64,
    #[serde(serialize_with = "json::fixed3")]
    lost_percent: f64,
    #[serde(serialize_with = "json::fixed3_opt")]
    pub_cpu_us_per_msg: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    sub_cpu_us_per_msg: Option<f64>,
    /// Why there are no figures (`messages_per_s` is then 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Point {
    fn failed(
        system: &'static str,
        path: &'static str,
        history: HistoryArg,
        size: usize,
        why: String,
    ) -> Self {
        Self {
            system,
            path,
            observed_path: None,
            history: history.name(),
            size_bytes: size,
            messages_per_s: 0.0,
            mb_per_s: 0.0,
            sent: None,
            received: 0,
            lost: 0,
            lost_percent: 0.0,
            pub_cpu_us_per_msg: None,
            sub_cpu_us_per_msg: None,
            error: Some(why),
        }
    }

    fn ok(&self) -> bool {
        self.error.is_none() && self.messages_per_s > 0.0
    }
}

/// `bench throughput`.
pub fn run(args: &ThroughputArgs) -> anyhow::Result<()> {
    anyhow::ensure!(!args.sizes.is_empty(), "--sizes is empty");
    if let Some(small) = args.sizes.iter().find(|s| **s < 16) {
        bail!("--sizes: {small} B is too small; every message carries a 9-byte header, use at least 16");
    }
    anyhow::ensure!(args.depth >= 1, "--depth must be at least 1");
    anyhow::ensure!(
        args.domain < roslite::context::MAX_DOMAIN_ID,
        "--domain must be below {} (Cyclone runs in the next domain)",
        roslite::context::MAX_DOMAIN_ID
    );
    let warmup = (args.duration / 5).max(Duration::from_millis(200));
    let mut points = Vec::new();
    for &history in &args.histories {
        for &path in &args.paths {
            for &size in &args.sizes {
                let point = match roslite_point(args, path, history, size, warmup) {
                    Ok(point) => point,
                    Err(e) => {
                        Point::failed("roslite", path.name(), history, size, format!("{e:#}"))
                    }
                };
                if !args.json {
                    eprintln!("{}", progress(&point));
                }
                points.push(point);
            }
        }
    }
    let ddsperf = if args.no_cyclone {
        None
    } else {
        find_ddsperf()
    };
    let cyclone_skipped = if args.no_cyclone {
        Some("--no-cyclone".to_owned())
    } else if ddsperf.is_none() {
        Some(cyclone::NOT_INSTALLED.to_owned())
    } else {
        None
    };
    if let Some(ddsperf) = &ddsperf {
        for &history in &args.histories {
            for &size in &args.sizes {
                let point = cyclone_point(ddsperf, args, history, size);
                if !args.json {
                    eprintln!("{}", progress(&point));
                }
                points.push(point);
            }
        }
    }
    let goals = goals(&points, &args.histories);
    let chart = chart(&points, &args.sizes)?;
    plot::write_svg(&args.svg, &chart)?;
    if args.json {
        json::print(&Json {
            bench: "throughput",
            duration_s: args.duration.as_secs_f64(),
            depth: args.depth,
            cyclone: ddsperf
                .as_ref()
                .map(|_| cyclone_version().unwrap_or_else(|| "?".into())),
            cyclone_skipped,
            results: points,
            goals,
            svg: args.svg.display().to_string(),
        });
        return Ok(());
    }
    print!(
        "{}",
        table(args, &points, &goals, cyclone_skipped.as_deref())
    );
    println!("chart: {}", args.svg.display());
    Ok(())
}

fn progress(p: &Point) -> String {
    match &p.error {
        Some(e) => format!(
            "{} {} {} {}: {e}",
            p.system,
            p.path,
            p.history,
            size_label(p.size_bytes)
        ),
        None => format!(
            "{} {} {} {}: {:.0} msg/s",
            p.system,
            p.path,
            p.history,
            size_label(p.size_bytes),
            p.messages_per_s
        ),
    }
}

fn roslite_point(
    args: &ThroughputArgs,
    path: Path_,
    history: HistoryArg,
    size: usize,
    warmup: Duration,
) -> anyhow::Result<Point> {
    let peer = |role: &str| -> anyhow::Result<Conversation> {
        let mut command = self_command(&[
            "bench",
            "throughput-peer",
            "--role",
            role,
            "--domain",
            &args.domain.to_string(),
            "--path",
            path.name(),
            "--history",
            match history {
                HistoryArg::KeepAll => "keep-all",
                HistoryArg::KeepLast => "keep-last",
            },
            "--depth",
            &args.depth.to_string(),
            "--size",
            &size.to_string(),
            "--warmup-ms",
            &warmup.as_millis().to_string(),
            "--duration-ms",
            &args.duration.as_millis().to_string(),
        ])?;
        // The peers read the paths from their arguments, not from this environment.
        command.env_remove(LocalTransports::ENV);
        Conversation::spawn(&format!("the throughput {role}"), &mut command)
    };
    let mut sub = peer("subscriber")?;
    sub.expect("READY", MATCH_TIMEOUT)?;
    let mut publisher = peer("publisher")?;
    let pids = [publisher.pid(), sub.pid()];
    publisher.expect("START", MATCH_TIMEOUT + warmup)?;
    let start = CpuReading::of(&pids);
    let end_line = publisher.expect("END", args.duration + Duration::from_secs(30))?;
    let end = CpuReading::of(&pids);
    let sent = field(&end_line, "sent")?;
    let result = sub.expect("RESULT", Duration::from_secs(60))?;
    drop(publisher);
    drop(sub);
    let received = field(&result, "received")?;
    let bytes = field(&result, "bytes")?;
    let span = Duration::from_nanos(field(&result, "span_ns")?);
    let observed = result
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("path="))
        .map(str::to_owned);
    let out_of_order = field(&result, "out_of_order")?;
    anyhow::ensure!(
        out_of_order == 0,
        "{out_of_order} messages arrived out of order"
    );
    anyhow::ensure!(
        received >= 2,
        "the subscriber received {received} measured messages"
    );
    let seconds = span.as_secs_f64();
    // Messages between the first and the last arrival: the span covers received - 1 gaps.
    let rate = (received - 1) as f64 / seconds;
    let used = end.used_since(&start);
    let per = |cpu: Option<Duration>, count: u64| {
        cpu.filter(|_| count > 0)
            .map(|c| c.as_secs_f64() * 1e6 / count as f64)
    };
    let lost = sent.saturating_sub(received);
    Ok(Point {
        system: "roslite",
        path: path.name(),
        observed_path: observed,
        history: history.name(),
        size_bytes: size,
        messages_per_s: rate,
        mb_per_s: rate * (bytes as f64 / received as f64) / 1e6,
        sent: Some(sent),
        received,
        lost,
        lost_percent: if sent > 0 {
            100.0 * lost as f64 / sent as f64
        } else {
            0.0
        },
        pub_cpu_us_per_msg: per(used[0], sent),
        sub_cpu_us_per_msg: per(used[1], received),
        error: None,
    })
}

/// The number after `key=` in a helper's line.
fn field(line: &str, key: &str) -> anyhow::Result<u64> {
    let prefix = format!("{key}=");
    let text = line
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(prefix.as_str()))
        .with_context(|| format!("no {key}= in {line:?}"))?;
    // `seconds=` is fractional; every counted field is whole.
    text.split('.')
        .next()
        .unwrap_or(text)
        .parse()
        .with_context(|| format!("{key}= is no number in {line:?}"))
}

fn cyclone_point(ddsperf: &Path, args: &ThroughputArgs, history: HistoryArg, size: usize) -> Point {
    let depth = match history {
        HistoryArg::KeepAll => None,
        HistoryArg::KeepLast => Some(args.depth),
    };
    let measured = cyclone::throughput(ddsperf, args.domain + 1, size, depth, args.duration);
    match measured {
        Ok(Ok(t)) => {
            let sent = t
                .published_per_s
                .map(|r| (r * t.received as f64 / t.messages_per_s).round() as u64);
            Point {
                system: "cyclone",
                path: "udp",
                observed_path: None,
                history: history.name(),
                size_bytes: size,
                messages_per_s: t.messages_per_s,
                // ddsperf's sample carries the octets and a 12-byte header; sizes below 12 are
                // sent as 12.
                mb_per_s: t.messages_per_s * size.max(12) as f64 / 1e6,
                sent,
                received: t.received,
                lost: t.lost,
                lost_percent: if t.received + t.lost > 0 {
                    100.0 * t.lost as f64 / (t.received + t.lost) as f64
                } else {
                    0.0
                },
                pub_cpu_us_per_msg: t.pub_cpu_us_per_msg,
                sub_cpu_us_per_msg: t.sub_cpu_us_per_msg,
                error: None,
            }
        }
        Ok(Err(why)) => Point::failed("cyclone", "udp", history, size, why),
        Err(e) => Point::failed("cyclone", "udp", history, size, format!("{e:#}")),
    }
}

fn find<'a>(
    points: &'a [Point],
    system: &str,
    path: &str,
    history: HistoryArg,
    size: usize,
) -> Option<&'a Point> {
    points.iter().find(|p| {
        p.system == system
            && p.path == path
            && p.history == history.name()
            && p.size_bytes == size
            && p.ok()
    })
}

#[derive(Clone, Debug, Serialize)]
struct Goal {
    goal: String,
    history: &'static str,
    /// The measured ratio and the one required.
    #[serde(serialize_with = "json::fixed3")]
    ratio: f64,
    #[serde(serialize_with = "json::fixed3")]
    required: f64,
    met: bool,
}

/// The goals, each only where both of its figures were measured in this run.
fn goals(points: &[Point], histories: &[HistoryArg]) -> Vec<Goal> {
    let mut out = Vec::new();
    for &history in histories {
        let mut goal = |text: &str, a: Option<&Point>, b: Option<&Point>, required: f64| {
            if let (Some(a), Some(b)) = (a, b) {
                let ratio = a.messages_per_s / b.messages_per_s;
                out.push(Goal {
                    goal: text.to_owned(),
                    history: history.name(),
                    ratio,
                    required,
                    met: ratio >= required,
                });
            }
        };
        goal(
            "UDP 64 B: roslite at least Cyclone's messages/s",
            find(points, "roslite", "udp", history, 64),
            find(points, "cyclone", "udp", history, 64),
            1.0,
        );
        goal(
            "UDP 1 MiB: roslite at least 2x Cyclone's messages/s",
            find(points, "roslite", "udp", history, 1 << 20),
            find(points, "cyclone", "udp", history, 1 << 20),
            2.0,
        );
        goal(
            "shared memory 64 B: at least 5x roslite's own UDP messages/s",
            find(points, "roslite", "shm", history, 64),
            find(points, "roslite", "udp", history, 64),
            5.0,
        );
    }
    out
}

fn table(
    args: &ThroughputArgs,
    points: &[Point],
    goals: &[Goal],
    cyclone_skipped: Option<&str>,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "throughput, one publisher and one subscriber in two processes, reliable, as fast as \
         the subscriber keeps up (keep-last depth {}), {} measured per point after a warm-up; \
         std_msgs/UInt8MultiArray (Cyclone: ddsperf's KeyedSeq); CPU is user + system of all \
         threads, the publisher's per message sent, the subscriber's per message received",
        args.depth,
        humantime(args.duration)
    );
    if let Some(why) = cyclone_skipped {
        let _ = writeln!(out, "Cyclone DDS: skipped ({why})");
    }
    let _ = writeln!(
        out,
        "{:<8} {:<5} {:<9} {:>8} {:>12} {:>10} {:>10} {:>8} {:>12} {:>12}",
        "system",
        "path",
        "history",
        "size",
        "msg/s",
        "MB/s",
        "lost",
        "lost %",
        "pub us/msg",
        "sub us/msg"
    );
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"));
    for p in points {
        if let Some(e) = &p.error {
            let _ = writeln!(
                out,
                "{:<8} {:<5} {:<9} {:>8}  failed: {e}",
                p.system,
                p.path,
                p.history,
                size_label(p.size_bytes)
            );
            continue;
        }
        let path = match &p.observed_path {
            Some(observed) if observed != p.path => format!("{}!{observed}", p.path),
            _ => p.path.to_owned(),
        };
        let _ = writeln!(
            out,
            "{:<8} {:<5} {:<9} {:>8} {:>12.0} {:>10.2} {:>10} {:>8.3} {:>12} {:>12}",
            p.system,
            path,
            p.history,
            size_label(p.size_bytes),
            p.messages_per_s,
            p.mb_per_s,
            p.lost,
            p.lost_percent,
            opt(p.pub_cpu_us_per_msg),
            opt(p.sub_cpu_us_per_msg),
        );
    }
    if points
        .iter()
        .any(|p| p.observed_path.as_deref().is_some_and(|o| o != p.path))
    {
        let _ = writeln!(
            out,
            "a path written requested!used: the pair did not take the path asked for"
        );
    }
    for g in goals {
        let _ = writeln!(
            out,
            "goal ({}): {} -> {} ({:.2}x, needs {:.1}x)",
            g.history,
            g.goal,
            if g.met { "met" } else { "NOT met" },
            g.ratio,
            g.required
        );
    }
    out
}

fn humantime(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

fn chart(points: &[Point], sizes: &[usize]) -> anyhow::Result<String> {
    let mut series: Vec<plot::Line> = Vec::new();
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for p in points.iter().filter(|p| p.ok()) {
        let key = (p.system, p.path, p.history);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (system, path, history) in keys {
        let color = match (system, path) {
            ("roslite", "shm") => 0,
            ("roslite", "uds") => 1,
            ("roslite", _) => 2,
            _ => 3,
        };
        series.push(plot::Line {
            name: format!(
                "{system} {path} {}",
                if history == "keep_all" {
                    "keep-all"
                } else {
                    "keep-last"
                }
            ),
            points: points
                .iter()
                .filter(|p| p.ok() && (p.system, p.path, p.history) == (system, path, history))
                .map(|p| (p.size_bytes as f64, p.mb_per_s))
                .collect(),
            color,
            stroke: if history == "keep_all" {
                plot::Stroke::Solid
            } else {
                plot::Stroke::Dashed
            },
        });
    }
    let ticks: Vec<(f64, String)> = sizes.iter().map(|s| (*s as f64, size_label(*s))).collect();
    plot::log_log_lines(
        "Throughput between two processes against message size (reliable, as fast as the \
         subscriber keeps up)",
        "payload size",
        "MB/s received",
        &ticks,
        &series,
    )
}

#[derive(Serialize)]
struct Json {
    bench: &'static str,
    #[serde(serialize_with = "json::number")]
    duration_s: f64,
    depth: u32,
    cyclone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cyclone_skipped: Option<String>,
    results: Vec<Point>,
    goals: Vec<Goal>,
    svg: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(system: &'static str, path: &'static str, size: usize, rate: f64) -> Point {
        Point {
            messages_per_s: rate,
            error: None,
            ..Point::failed(system, path, HistoryArg::KeepAll, size, String::new())
        }
    }

    #[test]
    fn goals_need_both_figures_of_the_same_run() {
        let points = vec![
            point("roslite", "udp", 64, 100.0),
            point("roslite", "shm", 64, 600.0),
            point("cyclone", "udp", 64, 120.0),
            point("roslite", "udp", 1 << 20, 10.0),
        ];
        let goals = goals(&points, &[HistoryArg::KeepAll, HistoryArg::KeepLast]);
        // No Cyclone 1 MiB figure and nothing keep-last: two goals only.
        assert_eq!(goals.len(), 2, "{goals:?}");
        assert!(!goals[0].met && (goals[0].ratio - 100.0 / 120.0).abs() < 1e-9);
        assert!(goals[1].met && (goals[1].ratio - 6.0).abs() < 1e-9);
    }

    #[test]
    fn the_subscriber_counts_gaps_and_the_measured_phase_only() {
        let mut counts = Counts::default();
        let message = |seq: u64, phase: u8| {
            let mut m = vec![0u8; 16];
            m[..8].copy_from_slice(&seq.to_le_bytes());
            m[8] = phase;
            m
        };
        let t = Instant::monotonic_now();
        counts.record(t, &message(0, PHASE_WARMUP));
        counts.record(t, &message(1, PHASE_MEASURED));
        counts.record(t + Duration::from_millis(1), &message(2, PHASE_MEASURED));
        counts.record(t + Duration::from_millis(3), &message(5, PHASE_MEASURED));
        counts.record(t + Duration::from_millis(4), &message(4, PHASE_MEASURED));
        assert_eq!(
            (
                counts.received,
                counts.gaps,
                counts.out_of_order,
                counts.done
            ),
            (4, 2, 1, false)
        );
        assert_eq!(counts.span(), Duration::from_millis(4));
        counts.record(t, &message(6, PHASE_DONE));
        assert!(counts.done);
        assert_eq!(field("END sent=42 seconds=2.0001", "seconds").unwrap(), 2);
        assert_eq!(field("END sent=42 seconds=2.0001", "sent").unwrap(), 42);
    }
}
