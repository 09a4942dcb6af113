//! `roslite bench soak`: many streams for a long time, to see whether every message is either
//! delivered or reported lost, whether memory stays flat, and whether anything panics.
//!
//! Each stream is one publisher process and one subscriber process (this binary again, as
//! `roslite bench soak-peer`), on one path: shared memory, a Unix socket, or RTPS/UDP with 5 %
//! of outgoing datagrams dropped by the fault injector (`ROSLITE_FAULT_INJECTION`, which keeps
//! a process on UDP). Sizes are mixed (64 B, 100 KB, 1 MB), most streams reliable and some best
//! effort, all keep-last 10 (the ROS default profile). Every message carries its sequence
//! number in its first 8 bytes. Meanwhile short-lived participants join each path's domain,
//! subscribe to its streams for a few seconds and leave, half of them by exiting and half
//! killed (SIGKILL), so the long-lived writers see readers come and go.
//!
//! Everything stays on this host: LOCALHOST discovery (unicast to 127.0.0.1, no multicast).
//!
//! Per stream the bench reports messages sent, delivered (distinct sequence numbers),
//! reported lost (`Subscription::message_lost_status`), duplicates, and what is left over:
//! `sent - delivered - lost`, which must be 0, except that a best-effort reader cannot report
//! what was lost before the first or after the last message it received. Per process it samples VmRSS and fits a line
//! through the samples after the warm-up: growth in MiB per hour. A child that panics (a
//! `panicked at` line on its stderr) or exits with an error is reported.

use std::io::{BufRead, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Context, QosProfile, Reliability};
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::memory::ProcMemory;
use crate::toolkit::process::{collect_lines, die_with_parent, self_command, Helper};
use crate::toolkit::units::size_label;

#[derive(clap::Args)]
pub struct SoakArgs {
    /// How long the streams publish, in minutes (fractions allowed: 0.1 is 6 s).
    #[arg(long, default_value_t = 1.0)]
    minutes: f64,
    /// RSS samples before this point are the warm-up, left out of the growth figure
    /// (default: a quarter of the run, at most 5 minutes).
    #[arg(long)]
    warmup_minutes: Option<f64>,
    /// Percentage of outgoing datagrams the fault injector drops on the UDP streams.
    #[arg(long, default_value_t = 5.0)]
    loss_percent: f64,
    /// First of the three ROS domains (shm, uds, udp); default 200 to 227, from the process
    /// id.
    #[arg(long)]
    domain: Option<u32>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// `roslite bench soak-peer`: one publisher, subscriber or short-lived participant.
#[derive(clap::Args)]
pub struct PeerArgs {
    /// `pub`, `sub` or `churn`.
    #[arg(long)]
    role: String,
    /// Topics: one for `pub` and `sub`, every stream of the path for `churn`.
    #[arg(long, value_delimiter = ',')]
    topics: Vec<String>,
    #[arg(long, default_value_t = 64)]
    size: usize,
    #[arg(long, default_value_t = 10)]
    hz: u32,
    #[arg(long)]
    best_effort: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Path {
    Shm,
    Uds,
    Udp,
}

impl Path {
    const ALL: [Path; 3] = [Path::Shm, Path::Uds, Path::Udp];

    fn name(self) -> &'static str {
        match self {
            Path::Shm => "shm",
            Path::Uds => "uds",
            Path::Udp => "udp",
        }
    }
}

/// One stream of the soak.
struct Stream {
    path: Path,
    size: usize,
    hz: u32,
    best_effort: bool,
}

const STREAMS: &[Stream] = &[
    Stream {
        path: Path::Shm,
        size: 64,
        hz: 100,
        best_effort: false,
    },
    Stream {
        path: Path::Shm,
        size: 1 << 20,
        hz: 10,
        best_effort: false,
    },
    Stream {
        path: Path::Shm,
        size: 100 << 10,
        hz: 20,
        best_effort: true,
    },
    Stream {
        path: Path::Uds,
        size: 100 << 10,
        hz: 20,
        best_effort: false,
    },
    Stream {
        path: Path::Uds,
        size: 64,
        hz: 100,
        best_effort: true,
    },
    Stream {
        path: Path::Udp,
        size: 64,
        hz: 50,
        best_effort: false,
    },
    Stream {
        path: Path::Udp,
        size: 100 << 10,
        hz: 10,
        best_effort: false,
    },
    Stream {
        path: Path::Udp,
        size: 64,
        hz: 50,
        best_effort: true,
    },
];

impl Stream {
    fn topic(&self, index: usize) -> String {
        format!(
            "soak_{index}_{}_{}",
            self.path.name(),
            if self.best_effort { "be" } else { "rel" }
        )
    }

    fn label(&self) -> String {
        format!(
            "{} {} {}",
            self.path.name(),
            size_label(self.size),
            if self.best_effort {
                "best-effort"
            } else {
                "reliable"
            }
        )
    }
}

fn qos(best_effort: bool) -> QosProfile {
    let mut qos = QosProfile::DEFAULT;
    if best_effort {
        qos.reliability = Reliability::BestEffort;
    }
    qos
}

// ---------------------------------------------------------------------------------------------
// The helper processes

/// Time a helper waits for its match before giving up.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The helper processes. `pub` prints `MATCHED` once its subscriber matched, publishes from the
/// `GO` line on stdin until `STOP`, then prints `SENT <n>` and lingers (repairing) until stdin
/// closes. `sub` prints `MATCHED` once its publisher matched, and `COUNTS ...` for every
/// `REPORT` line. `churn` subscribes to every topic given until stdin closes.
pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    let ctx = Context::from_env()?;
    match args.role.as_str() {
        "pub" => publish(&ctx, args),
        "sub" => subscribe(&ctx, args),
        "churn" => churn(&ctx, args),
        other => bail!("--role pub|sub|churn, not {other}"),
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > MATCH_TIMEOUT {
            bail!("{what} within {MATCH_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn publish(ctx: &Context, args: &PeerArgs) -> anyhow::Result<()> {
    let topic = args.topics.first().context("--topics")?;
    let node = ctx.create_node("roslite_soak_pub")?;
    let publisher = node.create_publisher::<UInt8MultiArray>(topic, qos(args.best_effort))?;
    let graph = ctx.graph();
    let topic_fqn = format!("/{topic}");
    wait_until("no subscription matched", || {
        graph.matched_remote_subscriptions(&topic_fqn) > 0
    })?;
    println!("MATCHED");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go)?;
    if go.trim() != "GO" {
        bail!("expected GO on stdin");
    }
    // STOP arrives on stdin while publishing: a thread watches for it.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut lines = std::io::stdin().lock().lines();
            let _ = lines.next();
            stop.store(true, Ordering::Relaxed);
            // The rest of stdin: its end tells the publisher to leave.
            for _ in lines {}
        })
    };
    let period = Duration::from_secs_f64(1.0 / f64::from(args.hz.max(1)));
    let start = Instant::now();
    let mut sent: u64 = 0;
    let mut failed: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut data = vec![0u8; args.size.max(8)];
        data[..8].copy_from_slice(&sent.to_le_bytes());
        let message = UInt8MultiArray {
            data: data.into(),
            ..Default::default()
        };
        match publisher.publish(message) {
            Ok(()) => sent += 1,
            Err(e) => {
                // Counted apart: a publish that failed sent nothing.
                failed += 1;
                eprintln!("publish failed: {e}");
            }
        }
        let next = start + period * u32::try_from(sent + failed).unwrap_or(u32::MAX);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    println!("SENT {sent} {failed}");
    // Linger: a reliable writer repairs what the reader still misses until we are told to go.
    let _ = watcher.join();
    drop(publisher);
    drop(node);
    Ok(())
}

/// What a subscriber has seen.
#[derive(Default)]
struct Seen {
    delivered: u64,
    duplicates: u64,
    out_of_order: u64,
    highest: Option<u64>,
    first: Option<u64>,
    /// Sequence numbers received, as a bitmap (one bit each).
    bits: Vec<u64>,
}

impl Seen {
    fn record(&mut self, seq: u64) {
        let Ok(index) = usize::try_from(seq / 64) else {
            return;
        };
        if index >= self.bits.len() {
            self.bits.resize(index + 1, 0);
        }
        let bit = 1u64 << (seq % 64);
        if self.bits[index] & bit != 0 {
            self.duplicates += 1;
            return;
        }
        self.bits[index] |= bit;
        self.delivered += 1;
        self.first.get_or_insert(seq);
        match self.highest {
            Some(h) if seq < h => self.out_of_order += 1,
            _ => self.highest = Some(seq),
        }
    }
}

fn subscribe(ctx: &Context, args: &PeerArgs) -> anyhow::Result<()> {
    let topic = args.topics.first().context("--topics")?;
    let node = ctx.create_node("roslite_soak_sub")?;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink = seen.clone();
    let malformed = Arc::new(AtomicU64::new(0));
    let bad = malformed.clone();
    let subscription = node.create_subscription::<UInt8MultiArray, _>(
        topic,
        qos(args.best_effort),
        move |message: &UInt8MultiArray| {
            let Some(seq) = message.data.get(..8) else {
                bad.fetch_add(1, Ordering::Relaxed);
                return;
            };
            let seq = u64::from_le_bytes(seq.try_into().expect("8 bytes"));
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .record(seq);
        },
    )?;
    let spinner = crate::toolkit::context::spin_on_thread(ctx, node);
    wait_until("no publisher matched", || {
        subscription.publisher_count() > 0
    })?;
    println!("MATCHED");
    let mut lost_total = 0;
    for line in std::io::stdin().lock().lines() {
        if line? != "REPORT" {
            break;
        }
        lost_total = subscription
            .message_lost_status()
            .total_count
            .max(lost_total);
        let stats = subscription.stats();
        let s = seen.lock().unwrap_or_else(PoisonError::into_inner);
        println!(
            "COUNTS {} {} {} {} {} {} {} {}",
            s.delivered,
            lost_total,
            s.duplicates,
            s.out_of_order,
            s.first.map_or(-1, |f| i64::try_from(f).unwrap_or(i64::MAX)),
            s.highest
                .map_or(-1, |h| i64::try_from(h).unwrap_or(i64::MAX)),
            malformed.load(Ordering::Relaxed),
            stats.overwritten + stats.expired + stats.malformed
        );
        std::io::stdout().flush()?;
    }
    ctx.shutdown();
    let _ = spinner.join();
    Ok(())
}

fn churn(ctx: &Context, args: &PeerArgs) -> anyhow::Result<()> {
    let node = ctx.create_node("roslite_soak_churn")?;
    let mut subscriptions = Vec::new();
    for (i, topic) in args.topics.iter().enumerate() {
        // Alternate reliable and best-effort readers: a best-effort reader matches both.
        let qos = qos(i % 2 == 1);
        subscriptions.push(node.create_subscription::<UInt8MultiArray, _>(
            topic,
            qos,
            |_: &UInt8MultiArray| {},
        )?);
    }
    let spinner = crate::toolkit::context::spin_on_thread(ctx, node);
    for _ in std::io::stdin().lock().lines() {}
    ctx.shutdown();
    let _ = spinner.join();
    drop(subscriptions);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The bench

/// A helper of the soak with its stdin, stdout and stderr.
struct Child {
    helper: Helper,
    stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
    rss: Vec<(f64, u64)>,
}

impl Child {
    fn spawn(name: String, mut command: Command) -> anyhow::Result<Self> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut helper = Helper::spawn(&name, &mut command)?;
        let stdin = helper.child.stdin.take();
        let stdout = collect_lines(helper.child.stdout.take().context("stdout")?);
        let stderr = collect_lines(helper.child.stderr.take().context("stderr")?);
        Ok(Self {
            helper,
            stdin,
            stdout,
            stderr,
            rss: Vec::new(),
        })
    }

    fn send(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin closed")?;
        writeln!(stdin, "{line}").with_context(|| format!("writing to {}", self.helper.name))?;
        stdin.flush()?;
        Ok(())
    }

    /// Waits for a stdout line starting with `prefix`; the words after it.
    fn expect(&mut self, prefix: &str, timeout: Duration) -> anyhow::Result<Vec<String>> {
        let start = Instant::now();
        loop {
            {
                let mut lines = self.stdout.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(i) = lines.iter().position(|l| l.starts_with(prefix)) {
                    let line = lines.remove(i);
                    lines.drain(..i);
                    return Ok(line.split_whitespace().skip(1).map(str::to_owned).collect());
                }
            }
            if start.elapsed() > timeout {
                let stderr = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
                bail!(
                    "{} did not print {prefix} within {timeout:?}; its stderr:\n{}",
                    self.helper.name,
                    stderr.join("\n")
                );
            }
            self.helper.check_running().with_context(|| {
                let stderr = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
                format!("its stderr:\n{}", stderr.join("\n"))
            })?;
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn sample_rss(&mut self, t: f64) {
        if let Ok(m) = ProcMemory::of(Some(self.helper.pid())) {
            self.rss.push((t, m.vm_rss_kib));
        }
    }

    fn panics(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|l| l.contains("panicked"))
            .cloned()
            .collect()
    }

    /// Closes stdin and waits up to `timeout` for a clean exit; an error message otherwise.
    fn finish(&mut self, timeout: Duration) -> Option<String> {
        self.stdin = None;
        let start = Instant::now();
        loop {
            match self.helper.child.try_wait() {
                Ok(Some(status)) if status.success() => return None,
                Ok(Some(status)) => {
                    return Some(format!("{} exited with {status}", self.helper.name))
                }
                Ok(None) if start.elapsed() > timeout => {
                    return Some(format!(
                        "{} did not exit within {timeout:?}",
                        self.helper.name
                    ))
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Some(format!("{}: {e}", self.helper.name)),
            }
        }
    }
}

fn peer_command(
    path: Path,
    domain: u32,
    loss_percent: f64,
    args: &[&str],
) -> anyhow::Result<Command> {
    let mut all = vec!["bench", "soak-peer"];
    all.extend_from_slice(args);
    let mut command = self_command(&all)?;
    command
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .env("ROSLITE_PARAMETER_SERVICES", "off");
    match path {
        Path::Shm => command
            .env("ROSLITE_TRANSPORTS", "shm,udp")
            .env_remove("ROSLITE_FAULT_INJECTION"),
        Path::Uds => command
            .env("ROSLITE_TRANSPORTS", "uds,udp")
            .env_remove("ROSLITE_FAULT_INJECTION"),
        Path::Udp => command.env("ROSLITE_TRANSPORTS", "udp").env(
            "ROSLITE_FAULT_INJECTION",
            format!("loss={},seed={}", loss_percent / 100.0, std::process::id()),
        ),
    };
    Ok(command)
}

/// The `--json` output and the table's figures.
#[derive(Serialize)]
struct Report {
    bench: &'static str,
    minutes: f64,
    warmup_minutes: f64,
    loss_percent_udp: f64,
    streams: Vec<StreamReport>,
    processes: Vec<ProcessReport>,
    churn_joined: u64,
    churn_killed: u64,
    panics: Vec<String>,
    abnormal_exits: Vec<String>,
    all_add_up: bool,
}

#[derive(Serialize)]
struct StreamReport {
    topic: String,
    path: Path,
    size_bytes: usize,
    rate_hz: u32,
    reliable: bool,
    sent: u64,
    publish_failed: u64,
    delivered: u64,
    reported_lost: u64,
    duplicates: u64,
    out_of_order: u64,
    first_received_seq: i64,
    highest_received_seq: i64,
    malformed: u64,
    /// Dropped from the subscription's own queue (`Subscription::stats`: a full keep-last
    /// queue overwritten before the callback ran, expired, undecodable). DDS does not count
    /// these as SAMPLE_LOST, so `message_lost_status` does not either.
    dropped_in_queue: u64,
    /// `sent - delivered - reported_lost - dropped_in_queue`: messages neither delivered nor
    /// reported (negative: more reported than missing).
    unaccounted: i64,
    /// Messages before the first one received. A reader counts losses only from the first
    /// sample it gets from a writer on (it cannot tell which earlier numbers were meant for
    /// it), so a best-effort reader cannot report these; a reliable reader receives them.
    unreported_head: i64,
    /// Messages after the highest one received. A best-effort reader learns of a loss only
    /// when a later message arrives, so losses here cannot be reported; a reliable reader
    /// must have none after the drain.
    unreported_tail: i64,
    /// `unaccounted` is 0, or for best effort, no more than the unreportable head and tail.
    adds_up: bool,
}

#[derive(Serialize)]
struct ProcessReport {
    name: String,
    pid: u32,
    rss_samples: usize,
    rss_first_after_warmup_kib: u64,
    rss_last_kib: u64,
    rss_max_kib: u64,
    #[serde(serialize_with = "json::fixed3")]
    rss_growth_mib_per_hour: f64,
}

pub fn run(args: &SoakArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.minutes > 0.0, "--minutes must be positive");
    anyhow::ensure!(
        (0.0..=100.0).contains(&args.loss_percent),
        "--loss-percent must be 0 to 100"
    );
    let run_for = Duration::from_secs_f64(args.minutes * 60.0);
    let warmup = Duration::from_secs_f64(
        args.warmup_minutes
            .map_or((args.minutes * 60.0 / 4.0).min(300.0), |m| m * 60.0),
    );
    let base = args.domain.unwrap_or(200 + (std::process::id() % 10) * 3);
    anyhow::ensure!(
        base + 2 < roslite::context::MAX_DOMAIN_ID,
        "--domain must be below {}",
        roslite::context::MAX_DOMAIN_ID - 2
    );
    let domain_of =
        |path: Path| base + Path::ALL.iter().position(|p| *p == path).unwrap_or(0) as u32;
    let progress = |text: &str| {
        if !args.json {
            eprintln!("soak: {text}");
        }
    };

    // Subscribers first, then publishers; each pair must match before the run starts.
    let mut subs = Vec::new();
    let mut pubs = Vec::new();
    for (i, s) in STREAMS.iter().enumerate() {
        let topic = s.topic(i);
        let size = s.size.to_string();
        let hz = s.hz.to_string();
        let mut common = vec!["--topics", &topic, "--size", &size, "--hz", &hz];
        if s.best_effort {
            common.push("--best-effort");
        }
        let mut sub_args = vec!["--role", "sub"];
        sub_args.extend_from_slice(&common);
        let mut pub_args = vec!["--role", "pub"];
        pub_args.extend_from_slice(&common);
        let domain = domain_of(s.path);
        subs.push(Child::spawn(
            format!("sub {}", s.label()),
            peer_command(s.path, domain, args.loss_percent, &sub_args)?,
        )?);
        pubs.push(Child::spawn(
            format!("pub {}", s.label()),
            peer_command(s.path, domain, args.loss_percent, &pub_args)?,
        )?);
    }
    progress("waiting for the streams to match");
    for child in subs.iter_mut().chain(pubs.iter_mut()) {
        child.expect("MATCHED", MATCH_TIMEOUT + Duration::from_secs(5))?;
    }
    progress(&format!(
        "{} streams matched; publishing for {:.1} min",
        STREAMS.len(),
        args.minutes
    ));
    for p in &mut pubs {
        p.send("GO")?;
    }
    let start = Instant::now();
    let sample_every = Duration::from_secs_f64((run_for.as_secs_f64() / 120.0).clamp(1.0, 10.0));
    let churn_every = Duration::from_secs(4);
    let churn_life = Duration::from_secs(6);
    let mut next_sample = start;
    let mut next_churn = start + Duration::from_secs(1);
    let mut churners: Vec<(Child, Instant, bool)> = Vec::new();
    let mut churn_joined = 0u64;
    let mut churn_killed = 0u64;
    let mut churn_panics = Vec::new();
    let mut abnormal = Vec::new();
    while start.elapsed() < run_for {
        let now = Instant::now();
        if now >= next_sample {
            let t = start.elapsed().as_secs_f64();
            for child in subs.iter_mut().chain(pubs.iter_mut()) {
                child.sample_rss(t);
            }
            next_sample += sample_every;
        }
        if now >= next_churn {
            let path = Path::ALL[usize::try_from(churn_joined).unwrap_or(0) % Path::ALL.len()];
            let topics: Vec<String> = STREAMS
                .iter()
                .enumerate()
                .filter(|(_, s)| s.path == path)
                .map(|(i, s)| s.topic(i))
                .collect();
            let topics = topics.join(",");
            let command = peer_command(
                path,
                domain_of(path),
                args.loss_percent,
                &["--role", "churn", "--topics", &topics],
            )?;
            let kill = churn_joined % 2 == 1;
            churners.push((
                Child::spawn(format!("churn {} #{churn_joined}", path.name()), command)?,
                now + churn_life,
                kill,
            ));
            churn_joined += 1;
            next_churn += churn_every;
        }
        let mut i = 0;
        while i < churners.len() {
            if churners[i].1 <= now {
                let (mut child, _, kill) = churners.swap_remove(i);
                if kill {
                    // Dropping the helper kills it (SIGKILL): a crashed participant.
                    churn_killed += 1;
                } else if let Some(problem) = child.finish(Duration::from_secs(10)) {
                    abnormal.push(problem);
                }
                churn_panics.extend(child.panics());
            } else {
                i += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (mut child, _, _) in churners.drain(..) {
        if let Some(problem) = child.finish(Duration::from_secs(10)) {
            abnormal.push(problem);
        }
        churn_panics.extend(child.panics());
    }
    progress("stopping the publishers; waiting for repairs");
    let mut sent = Vec::new();
    for p in &mut pubs {
        p.send("STOP")?;
    }
    for p in &mut pubs {
        let words = p.expect("SENT", Duration::from_secs(30))?;
        let n: u64 = words.first().context("SENT count")?.parse()?;
        let failed: u64 = words.get(1).map_or(Ok(0), |w| w.parse())?;
        sent.push((n, failed));
    }
    // Reliable readers may still be repairing; ask until the counts stop moving (at most 20 s
    // once they are complete or stable for 3 s).
    let mut counts: Vec<Vec<i64>> = vec![Vec::new(); subs.len()];
    let drain_start = Instant::now();
    let mut stable_since = Instant::now();
    loop {
        let mut changed = false;
        for (i, sub) in subs.iter_mut().enumerate() {
            sub.send("REPORT")?;
            let words = sub.expect("COUNTS", Duration::from_secs(10))?;
            let now: Vec<i64> = words.iter().map(|w| w.parse().unwrap_or(-1)).collect();
            if now != counts[i] {
                changed = true;
                counts[i] = now;
            }
        }
        let complete = counts.iter().zip(&sent).all(|(c, (n, _))| {
            let reported: i64 = [0, 1, 7]
                .iter()
                .map(|&k| c.get(k).copied().unwrap_or(0))
                .sum();
            reported >= i64::try_from(*n).unwrap_or(i64::MAX)
        });
        if changed {
            stable_since = Instant::now();
        }
        if complete
            || stable_since.elapsed() > Duration::from_secs(3)
            || drain_start.elapsed() > Duration::from_secs(20)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let t = start.elapsed().as_secs_f64();
    for child in subs.iter_mut().chain(pubs.iter_mut()) {
        child.sample_rss(t);
    }

    let mut streams = Vec::new();
    for (i, s) in STREAMS.iter().enumerate() {
        let c = &counts[i];
        let at = |k: usize| c.get(k).copied().unwrap_or(0);
        let (n, failed) = sent[i];
        let delivered = u64::try_from(at(0)).unwrap_or(0);
        let lost = u64::try_from(at(1)).unwrap_or(0);
        let unaccounted = i64::try_from(n).unwrap_or(i64::MAX) - at(0) - at(1) - at(7);
        // The first sequence number is 0 and the highest sent - 1; -1 means nothing arrived,
        // and then the tail is everything.
        let head = at(4).max(0);
        let tail = i64::try_from(n).unwrap_or(i64::MAX) - 1 - at(5);
        streams.push(StreamReport {
            topic: s.topic(i),
            path: s.path,
            size_bytes: s.size,
            rate_hz: s.hz,
            reliable: !s.best_effort,
            sent: n,
            publish_failed: failed,
            delivered,
            reported_lost: lost,
            duplicates: u64::try_from(at(2)).unwrap_or(0),
            out_of_order: u64::try_from(at(3)).unwrap_or(0),
            first_received_seq: at(4),
            highest_received_seq: at(5),
            malformed: u64::try_from(at(6)).unwrap_or(0),
            dropped_in_queue: u64::try_from(at(7)).unwrap_or(0),
            unaccounted,
            unreported_head: head,
            unreported_tail: tail,
            adds_up: unaccounted == 0
                || (s.best_effort && (0..=head + tail).contains(&unaccounted)),
        });
    }
    let warmup_s = warmup.as_secs_f64();
    let processes = subs
        .iter()
        .chain(&pubs)
        .map(|child| process_report(child, warmup_s))
        .collect();
    let mut panics = churn_panics;
    for child in subs.iter_mut().chain(pubs.iter_mut()) {
        if let Some(problem) = child.finish(Duration::from_secs(15)) {
            abnormal.push(problem);
        }
        panics.extend(child.panics());
    }
    let all_add_up = streams.iter().all(|s| s.adds_up);
    let report = Report {
        bench: "soak",
        minutes: args.minutes,
        warmup_minutes: warmup_s / 60.0,
        loss_percent_udp: args.loss_percent,
        streams,
        processes,
        churn_joined,
        churn_killed,
        panics,
        abnormal_exits: abnormal,
        all_add_up,
    };
    if args.json {
        json::print(&report);
    } else {
        print_table(&report);
    }
    Ok(())
}

/// RSS figures of one process; the growth is the least-squares slope of the samples after the
/// warm-up.
fn process_report(child: &Child, warmup_s: f64) -> ProcessReport {
    let after: Vec<(f64, u64)> = child
        .rss
        .iter()
        .copied()
        .filter(|(t, _)| *t >= warmup_s)
        .collect();
    let n = after.len() as f64;
    let slope_kib_per_s = if after.len() >= 2 {
        let mean_t = after.iter().map(|(t, _)| t).sum::<f64>() / n;
        let mean_r = after.iter().map(|(_, r)| *r as f64).sum::<f64>() / n;
        let num: f64 = after
            .iter()
            .map(|(t, r)| (t - mean_t) * (*r as f64 - mean_r))
            .sum();
        let den: f64 = after.iter().map(|(t, _)| (t - mean_t).powi(2)).sum();
        if den > 0.0 {
            num / den
        } else {
            f64::NAN
        }
    } else {
        f64::NAN
    };
    ProcessReport {
        name: child.helper.name.clone(),
        pid: child.helper.pid(),
        rss_samples: child.rss.len(),
        rss_first_after_warmup_kib: after.first().map_or(0, |(_, r)| *r),
        rss_last_kib: child.rss.last().map_or(0, |(_, r)| *r),
        rss_max_kib: child.rss.iter().map(|(_, r)| *r).max().unwrap_or(0),
        rss_growth_mib_per_hour: slope_kib_per_s * 3600.0 / 1024.0,
    }
}

fn print_table(r: &Report) {
    println!(
        "soak: {:.1} min, {} streams, {} short-lived participants joined and left ({} of them \
         killed), {}% of outgoing datagrams dropped on the UDP streams",
        r.minutes,
        r.streams.len(),
        r.churn_joined,
        r.churn_killed,
        r.loss_percent_udp
    );
    println!(
        "{:<5} {:>8} {:>5} {:<11} {:>8} {:>10} {:>8} {:>6} {:>5} {:>7} {:>11} {:>5} {:>5} {:>7}",
        "path",
        "size",
        "Hz",
        "qos",
        "sent",
        "delivered",
        "lost",
        "queue",
        "dup",
        "reorder",
        "unaccounted",
        "head",
        "tail",
        "adds up"
    );
    for s in &r.streams {
        println!(
            "{:<5} {:>8} {:>5} {:<11} {:>8} {:>10} {:>8} {:>6} {:>5} {:>7} {:>11} {:>5} {:>5} {:>7}",
            s.path.name(),
            size_label(s.size_bytes),
            s.rate_hz,
            if s.reliable {
                "reliable"
            } else {
                "best-effort"
            },
            s.sent,
            s.delivered,
            s.reported_lost,
            s.dropped_in_queue,
            s.duplicates,
            s.out_of_order,
            s.unaccounted,
            s.unreported_head,
            s.unreported_tail,
            if s.adds_up { "yes" } else { "NO" }
        );
    }
    println!();
    println!(
        "RSS (VmRSS), growth fitted over the samples after a {:.1} min warm-up",
        r.warmup_minutes
    );
    println!(
        "{:<32} {:>7} {:>14} {:>10} {:>10} {:>8}",
        "process", "samples", "after warm-up", "last", "max", "MiB/h"
    );
    for p in &r.processes {
        println!(
            "{:<32} {:>7} {:>10.1} MiB {:>6.1} MiB {:>6.1} MiB {:>8.2}",
            p.name,
            p.rss_samples,
            p.rss_first_after_warmup_kib as f64 / 1024.0,
            p.rss_last_kib as f64 / 1024.0,
            p.rss_max_kib as f64 / 1024.0,
            p.rss_growth_mib_per_hour
        );
    }
    println!();
    if r.panics.is_empty() {
        println!("panics: none");
    } else {
        println!("panics:");
        for p in &r.panics {
            println!("  {p}");
        }
    }
    if !r.abnormal_exits.is_empty() {
        println!("abnormal exits:");
        for a in &r.abnormal_exits {
            println!("  {a}");
        }
    }
    println!(
        "lost: message_lost_status; queue: dropped from the subscription's own queue \
         (Subscription::stats); head, tail: sent before the first and after the last message \
         received (a best-effort reader cannot know those were lost)\naccounting (sent = \
         delivered + lost + queue, every stream; best effort may leave at most its head and \
         tail unreported): {}",
        if r.all_add_up {
            "adds up"
        } else {
            "does NOT add up"
        }
    );
}
