//! Round-trip time between two roslite participants over RTPS/UDP on 127.0.0.1, next to Cyclone
//! DDS's `ddsperf` measured in the same run, size by size.
//!
//! roslite: this process is the ping side; a second process (this binary again, as the hidden
//! `roslite bench rtt-pong`) echoes every message back. Both are ordinary networked contexts
//! with LOCALHOST discovery (unicast to 127.0.0.1 only, no multicast, no static peers) in a
//! domain of their own, with reliable keep-last-1 endpoints, exchanging `std_msgs/UInt8MultiArray`
//! whose `data` has the requested size; its first 8 bytes carry a sequence number and the rest a
//! fill pattern the ping side checks. As in `ddsperf ping` (listener mode, its default), the
//! next ping goes out from the echo's subscription callback itself; the ping side spins its
//! executor on the measuring thread, and a round trip is `publish` to the start of the echo's
//! subscription callback: serialization, fragmentation, both processes' receive threads and
//! executors, and deserialization on both sides. Both sides use ordinary single-threaded
//! executors; a callback runs on the receive thread when its executor sleeps (see
//! `CallbackGroup::try_run_inline`), as a DDS listener does. A ping whose echo has not come
//! back within `ECHO_TIMEOUT` is counted as lost and the next one sent.
//!
//! Cyclone: `ddsperf pong` and `ddsperf ping size N` (reliable, keep-last 1) for a fixed time per
//! size, confined to 127.0.0.1 and given the socket buffer sizes roslite asks for; its half round
//! trips are doubled and its per-second percentiles combined as `toolkit::cyclone` describes.
//! Each size is measured in `--rounds` rounds, roslite then Cyclone, and the round with the
//! median ratio is reported.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Context, Executor, Instant, Publisher, Subscription};
use serde::Serialize;

use crate::toolkit::context::localhost_context_with;
use crate::toolkit::cyclone::{self, cyclone_version, find_ddsperf, CycloneRtt};
use crate::toolkit::memory::{mb, ProcMemory};
use crate::toolkit::pingpong::{
    first_ping_number, ping_message, qos, Chain, Echo, ECHO_TIMEOUT, MATCH_TIMEOUT, PING_TOPIC,
    PONG_TOPIC, SEQ_LEN,
};
use crate::toolkit::process::{die_with_parent, self_command, Helper};
use crate::toolkit::stats::{median_round, Summary};
use crate::toolkit::units::size_label;
use crate::toolkit::{json, plot};

/// What `bench rtt` hands over for the UDP run.
pub struct Options<'a> {
    pub sizes: &'a [usize],
    pub samples: usize,
    pub domain: u32,
    pub cyclone_duration: Duration,
    pub rounds: usize,
    pub no_cyclone: bool,
    pub svg: &'a Path,
    pub json: bool,
}

/// The hidden `roslite bench rtt-pong`: the echoing side, started by `bench rtt`.
#[derive(clap::Args)]
pub struct PongArgs {
    #[arg(long)]
    domain: u32,
}

/// The pong side: echoes every ping until killed (or its parent ends).
pub fn pong(args: &PongArgs) -> anyhow::Result<()> {
    die_with_parent();
    let ctx = localhost_context_with(args.domain, roslite::LocalTransports::UDP_ONLY)?;
    let node = ctx.create_node("roslite_bench_rtt_pong")?;
    let publisher = node.create_publisher::<UInt8MultiArray>(PONG_TOPIC, qos())?;
    let _subscription =
        node.create_subscription(PING_TOPIC, qos(), move |ping: Arc<UInt8MultiArray>| {
            // Ignoring an error: the ping side counts a missing echo as lost.
            let _ = publisher.publish_shared(ping);
        })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}

struct PingSession {
    // Field order is drop order: endpoints, then the context, then the pong process.
    executor: Executor,
    publisher: Arc<Publisher<UInt8MultiArray>>,
    /// Set while [`measure_roslite`] runs a chain.
    chain: Arc<Mutex<Option<Chain>>>,
    _subscription: Subscription<UInt8MultiArray>,
    ctx: Context,
    pong: Helper,
    echo: Arc<Mutex<Option<Echo>>>,
    next_seq: u64,
    /// Echoes that arrived after their ping had been given up on.
    stale: usize,
}

impl PingSession {
    fn start(domain: u32) -> anyhow::Result<Self> {
        let pong = Helper::spawn(
            "the pong process (roslite bench rtt-pong)",
            self_command(&["bench", "rtt-pong", "--domain", &domain.to_string()])?
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        )?;
        let ctx = localhost_context_with(domain, roslite::LocalTransports::UDP_ONLY)?;
        let node = ctx.create_node("roslite_bench_rtt_ping")?;
        let publisher = Arc::new(node.create_publisher::<UInt8MultiArray>(PING_TOPIC, qos())?);
        let echo = Arc::new(Mutex::new(None));
        let slot = echo.clone();
        let chain: Arc<Mutex<Option<Chain>>> = Arc::new(Mutex::new(None));
        let (chain_slot, chain_publisher) = (chain.clone(), publisher.clone());
        let subscription =
            node.create_subscription(PONG_TOPIC, qos(), move |msg: &UInt8MultiArray| {
                let echo = Echo::of(Instant::monotonic_now(), &msg.data[..]);
                let mut chain = chain_slot.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(chain) = chain.as_mut() {
                    chain.on_echo(echo, &chain_publisher);
                    return;
                }
                drop(chain);
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(echo);
            })?;
        let executor = Executor::new(&ctx);
        executor.add_node(&node);
        Ok(Self {
            executor,
            publisher,
            chain,
            _subscription: subscription,
            ctx,
            pong,
            echo,
            next_seq: first_ping_number(),
            stale: 0,
        })
    }

    /// One ping; `None` if its echo did not arrive within `timeout`.
    fn round_trip(
        &mut self,
        message: &mut Arc<UInt8MultiArray>,
        timeout: Duration,
    ) -> anyhow::Result<Option<Duration>> {
        let seq = self.next_seq;
        self.next_seq += 1;
        // No copy once the previous publish has let go of the message.
        let data = Arc::make_mut(message).data.to_mut();
        data[..SEQ_LEN].copy_from_slice(&seq.to_le_bytes());
        let size = data.len();
        *self.echo.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let start = Instant::monotonic_now();
        self.publisher.publish_shared(message.clone())?;
        let deadline = start + timeout;
        loop {
            let echo = self
                .echo
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(echo) = echo {
                if echo.seq != seq {
                    self.stale += 1;
                    continue;
                }
                anyhow::ensure!(
                    echo.len == size && echo.intact,
                    "the echo of a {size}-byte ping came back as {} bytes{}",
                    echo.len,
                    if echo.intact { "" } else { ", corrupted" }
                );
                return Ok(Some(echo.at - start));
            }
            let now = Instant::monotonic_now();
            if now >= deadline {
                return Ok(None);
            }
            self.executor.spin_once(Some(deadline - now));
        }
    }

    /// Pings until the pong side answers: discovery and matching of both topics.
    fn wait_for_match(&mut self) -> anyhow::Result<()> {
        let mut probe = Arc::new(ping_message(64));
        let start = Instant::monotonic_now();
        loop {
            if self
                .round_trip(&mut probe, Duration::from_millis(200))?
                .is_some()
            {
                // Echoes of probes sent before the match completed are not late samples.
                self.stale = 0;
                return Ok(());
            }
            self.pong.check_running()?;
            if Instant::monotonic_now() - start > MATCH_TIMEOUT {
                bail!(
                    "the pong process did not answer within {MATCH_TIMEOUT:?}: discovery on \
                     127.0.0.1 failed (are UDP ports 7400 + 250 x domain free?)"
                );
            }
        }
    }
}

impl Drop for PingSession {
    fn drop(&mut self) {
        self.ctx.shutdown();
    }
}

struct RoslitePoint {
    summary: Option<Summary>,
    lost: usize,
    sender: ProcMemory,
    pong: Option<ProcMemory>,
}

fn measure_roslite(
    session: &mut PingSession,
    size: usize,
    samples: usize,
) -> anyhow::Result<RoslitePoint> {
    let warmup = (samples / 10).clamp(2, 50);
    let total = warmup + samples;
    // The first ping is numbered `next_seq + 1`, as before this chain was shared.
    let chain = Chain::new(size, session.next_seq + 1, total, warmup);
    {
        // Stored before the first echo can arrive: the callback waits for this lock.
        let mut slot = session.chain.lock().unwrap_or_else(PoisonError::into_inner);
        let chain = slot.insert(chain);
        chain.send_next(&session.publisher)?;
    }
    // The echo callback sends every further ping; this thread spins the executor (which lends
    // its turn to the receive thread while it sleeps) and gives up on lost pings.
    loop {
        {
            let mut slot = session.chain.lock().unwrap_or_else(PoisonError::into_inner);
            let chain = slot.as_mut().context("internal bug: no chain")?;
            if chain.pings.echoed + chain.pings.lost >= total {
                break;
            }
            if Instant::monotonic_now() - chain.pings.start > ECHO_TIMEOUT {
                chain.pings.lost += 1;
                session.pong.check_running()?;
                if chain.pings.left > 0 {
                    chain.pings.left -= 1;
                    chain.send_next(&session.publisher)?;
                } else {
                    break;
                }
            }
        }
        // `spin_for`, not `spin_once`: a callback run on a lent turn need not wake this thread.
        session.executor.spin_for(Duration::from_millis(50));
    }
    let chain = session
        .chain
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .context("internal bug: no chain")?;
    session.next_seq = chain.pings.seq + 1;
    session.stale += chain.pings.stale;
    if let Some(error) = chain.pings.error {
        bail!(error);
    }
    let (latencies, lost) = (chain.pings.latencies, chain.pings.lost);
    Ok(RoslitePoint {
        summary: Summary::of(&latencies),
        lost,
        sender: ProcMemory::of(None)?,
        pong: ProcMemory::of(Some(session.pong.pid())).ok(),
    })
}

// ---------------------------------------------------------------------------------------------
// Cyclone's ddsperf.

struct CyclonePoint {
    rtt: CycloneRtt,
    sender: Option<ProcMemory>,
}

fn measure_cyclone(
    ddsperf: &Path,
    domain: u32,
    size: usize,
    duration: Duration,
) -> anyhow::Result<CyclonePoint> {
    let ping = cyclone::ping(ddsperf, domain, size, None, duration, |_| ())?;
    Ok(CyclonePoint {
        rtt: ping.rtt.map_err(anyhow::Error::msg)?,
        sender: ping.sender,
    })
}

// ---------------------------------------------------------------------------------------------
// The bench.

struct Row {
    size: usize,
    roslite: RoslitePoint,
    cyclone: Result<CyclonePoint, String>,
    /// The p50 ratio of every round of this size, in measuring order (empty for a row that
    /// is one round).
    round_ratios: Vec<Option<f64>>,
}

impl Row {
    /// The round whose ratio is the median (for an even count the upper middle, the one less
    /// flattering to roslite; rounds without a ratio sort last), carrying every round's ratio;
    /// the first round when none has a ratio.
    fn median_round(mut rounds: Vec<Row>) -> Row {
        let ratios: Vec<Option<f64>> = rounds.iter().map(Row::ratio).collect();
        let pick = median_round(&ratios).unwrap_or(0);
        let lost: usize = rounds.iter().map(|r| r.roslite.lost).sum();
        let mut row = rounds.swap_remove(pick);
        // Losses count over every round, not only the reported one.
        row.roslite.lost = lost;
        row.round_ratios = ratios;
        row
    }

    fn ratio(&self) -> Option<f64> {
        let roslite = self.roslite.summary?;
        let cyclone = self.cyclone.as_ref().ok()?;
        Some(roslite.p50_us / cyclone.rtt.p50_us)
    }
}

/// The bench's goals: `(size, largest allowed p50 ratio roslite/Cyclone, text)`.
const GOALS: [(usize, f64, &str); 3] = [
    (64, 1.0, "64 B p50 no worse than Cyclone's"),
    (1 << 20, 0.5, "1 MiB p50 at most half of Cyclone's"),
    (4 << 20, 0.5, "4 MiB p50 at most half of Cyclone's"),
];

/// `Some(met)` for a goal whose size was measured on both sides.
fn goal_met(rows: &[Row], size: usize, limit: f64) -> Option<bool> {
    let row = rows.iter().find(|r| r.size == size)?;
    Some(row.ratio()? <= limit)
}

/// The long back-to-back run over RTPS/UDP, against Cyclone; [`Options`] are checked by
/// `bench rtt`'s dispatch, which also picks between this run and the sweep.
pub fn run(args: &Options<'_>) -> anyhow::Result<()> {
    anyhow::ensure!(args.rounds >= 1, "--rounds must be at least 1");
    let ddsperf = if args.no_cyclone {
        Err("skipped (--no-cyclone)".to_owned())
    } else {
        find_ddsperf().ok_or_else(|| cyclone::NOT_INSTALLED.to_owned())
    };
    let mut session = PingSession::start(args.domain)?;
    session.wait_for_match()?;
    let mut rows = Vec::new();
    for &size in args.sizes {
        let samples = if size >= 1 << 20 {
            (args.samples / 10).max(5)
        } else {
            args.samples
        };
        let mut rounds = Vec::with_capacity(args.rounds);
        for _ in 0..args.rounds {
            let roslite = measure_roslite(&mut session, size, samples)?;
            // Interleaved size by size and round by round, so the drifts of a shared machine
            // fall on both alike.
            let cyclone = match &ddsperf {
                Ok(path) => measure_cyclone(path, args.domain + 1, size, args.cyclone_duration)
                    .map_err(|e| format!("failed: {e:#}")),
                Err(why) => Err(why.clone()),
            };
            rounds.push(Row {
                size,
                roslite,
                cyclone,
                round_ratios: Vec::new(),
            });
        }
        rows.push(Row::median_round(rounds));
    }
    let stale = session.stale;
    drop(session);
    let version = ddsperf.is_ok().then(cyclone_version).flatten();
    let cyclone_name = match &version {
        Some(v) => format!("Cyclone {v} (ddsperf)"),
        None => "Cyclone (ddsperf)".to_owned(),
    };
    write_svg(args, &rows, &cyclone_name)?;
    if args.json {
        print_json(args, &rows, stale, &cyclone_name);
    } else {
        print_table(args, &rows, stale, &cyclone_name);
    }
    Ok(())
}

fn write_svg(args: &Options<'_>, rows: &[Row], cyclone_name: &str) -> anyhow::Result<()> {
    let points = |pick: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| Some((r.size as f64, pick(r)?)))
            .collect()
    };
    let line = |name: String, points, color, stroke| plot::Line {
        name,
        points,
        color,
        stroke,
    };
    let mut series = vec![
        line(
            "roslite p50".to_owned(),
            points(&|r| r.roslite.summary.map(|s| s.p50_us)),
            0,
            plot::Stroke::Solid,
        ),
        line(
            "roslite p99".to_owned(),
            points(&|r| r.roslite.summary.map(|s| s.p99_us)),
            0,
            plot::Stroke::Dashed,
        ),
    ];
    if rows.iter().any(|r| r.cyclone.is_ok()) {
        series.push(line(
            format!("{cyclone_name} p50"),
            points(&|r| r.cyclone.as_ref().ok().map(|c| c.rtt.p50_us)),
            1,
            plot::Stroke::Solid,
        ));
        series.push(line(
            format!("{cyclone_name} p99"),
            points(&|r| r.cyclone.as_ref().ok().map(|c| c.rtt.p99_us)),
            1,
            plot::Stroke::Dashed,
        ));
    }
    let ticks: Vec<(f64, String)> = rows
        .iter()
        .map(|r| (r.size as f64, size_label(r.size)))
        .collect();
    let chart = plot::log_log_lines(
        "Round-trip time over RTPS/UDP on 127.0.0.1 (reliable, keep-last 1)",
        "payload size (log scale)",
        "round-trip time (us, log scale)",
        &ticks,
        &series,
    )?;
    plot::write_svg(args.svg, &chart)
}

fn met(flag: Option<bool>) -> &'static str {
    match flag {
        Some(true) => "met",
        Some(false) => "NOT met",
        None => "not measured",
    }
}

fn print_table(args: &Options<'_>, rows: &[Row], stale: usize, cyclone_name: &str) {
    println!(
        "round-trip time, roslite <-> roslite over RTPS/UDP on 127.0.0.1 (two processes, \
         domain {}), reliable keep-last 1; per size {} round(s) of roslite then Cyclone, the \
         round with the median ratio shown",
        args.domain, args.rounds
    );
    println!(
        "{:>8} | {:>7} {:>4} {:>9} {:>9} {:>9} {:>8} | {:>9} {:>9} {:>9} {:>8} | {:>7}",
        "size",
        "samples",
        "lost",
        "p50 us",
        "p99 us",
        "max us",
        "RSS MB",
        "Cy p50",
        "Cy p99",
        "Cy max",
        "Cy RSS",
        "p50 r/C"
    );
    for row in rows {
        let r = &row.roslite;
        let roslite = match r.summary {
            Some(s) => format!(
                "{:>7} {:>4} {:>9.1} {:>9.1} {:>9.1} {:>8.1}",
                s.count,
                r.lost,
                s.p50_us,
                s.p99_us,
                s.max_us,
                mb(r.sender.vm_rss_kib)
            ),
            None => format!("{:>7} {:>4} {:>40}", 0, r.lost, "no round trip completed"),
        };
        let cyclone = match &row.cyclone {
            Ok(c) => format!(
                "{:>9.1} {:>9.1} {:>9.1} {:>8}",
                c.rtt.p50_us,
                c.rtt.p99_us,
                c.rtt.max_us,
                c.sender
                    .map_or("?".to_owned(), |m| format!("{:.1}", mb(m.vm_rss_kib)))
            ),
            Err(_) => format!("{:>38}", "-"),
        };
        let ratio = row.ratio().map_or("-".to_owned(), |r| format!("{r:.2}x"));
        let rounds = if row.round_ratios.len() > 1 {
            let each: Vec<String> = row
                .round_ratios
                .iter()
                .map(|r| r.map_or("-".to_owned(), |r| format!("{r:.2}")))
                .collect();
            format!("  (rounds: {})", each.join(" "))
        } else {
            String::new()
        };
        println!(
            "{:>8} | {roslite} | {cyclone} | {ratio:>7}{rounds}",
            size_label(row.size)
        );
    }
    let lost: usize = rows.iter().map(|r| r.roslite.lost).sum();
    println!(
        "roslite: RSS is the ping process's VmRSS after each size (pong process: {}); \
         lost samples: {lost}{}",
        rows.last()
            .and_then(|r| r.roslite.pong)
            .map_or("?".to_owned(), |m| format!(
                "{:.1} MB, HWM {:.1} MB",
                mb(m.vm_rss_kib),
                mb(m.vm_hwm_kib)
            )),
        if stale > 0 {
            format!(" ({stale} late echoes)")
        } else {
            String::new()
        }
    );
    match rows.iter().find_map(|r| r.cyclone.as_ref().err()) {
        Some(why) => println!("{cyclone_name}: {why}"),
        None => println!(
            "{cyclone_name}: ddsperf ping/pong for {:?} per size, loopback only, 4 MiB/1 MiB \
             socket buffers; its half round trips doubled; p50/p99 are medians of its \
             per-second figures",
            args.cyclone_duration
        ),
    }
    for (size, limit, text) in GOALS {
        println!(
            "goal: {text} -> {}",
            met(goal_met(rows, size, limit)) //
        );
    }
    println!(
        "goal: no sample lost -> {}",
        if lost == 0 { "met" } else { "NOT met" }
    );
    println!("chart: {}", args.svg.display());
}

/// `--json`: one object per size, and the goals.
#[derive(Serialize)]
struct Json<'a> {
    bench: &'static str,
    transport: &'static str,
    domain: u32,
    cyclone: &'a str,
    #[serde(serialize_with = "json::number")]
    cyclone_duration_s: f64,
    svg: String,
    lost_samples: usize,
    late_echoes: usize,
    results: Vec<JsonRow>,
    goals: Vec<JsonGoal>,
}

#[derive(Serialize)]
struct JsonRow {
    size_bytes: usize,
    roslite: JsonRoslite,
    cyclone: JsonCyclone,
    #[serde(serialize_with = "json::fixed3_opt")]
    p50_ratio_roslite_to_cyclone: Option<f64>,
    #[serde(serialize_with = "json::fixed3_each")]
    p50_ratio_each_round: Vec<Option<f64>>,
}

#[derive(Serialize)]
struct JsonRoslite {
    samples: usize,
    lost_samples: usize,
    #[serde(flatten)]
    latency: Option<JsonLatency>,
    sender_vm_rss_kib: u64,
    sender_vm_hwm_kib: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pong_vm_rss_kib: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pong_vm_hwm_kib: Option<u64>,
}

#[derive(Serialize)]
struct JsonLatency {
    #[serde(serialize_with = "json::fixed3")]
    min_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    mean_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    p50_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    p99_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    max_us: f64,
}

#[derive(Serialize)]
#[serde(untagged)]
enum JsonCyclone {
    Measured {
        intervals: usize,
        round_trips: u64,
        #[serde(flatten)]
        latency: JsonLatency,
        #[serde(skip_serializing_if = "Option::is_none")]
        sender_vm_rss_kib: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        sender_vm_hwm_kib: Option<u64>,
    },
    Skipped {
        skipped: String,
    },
}

#[derive(Serialize)]
struct JsonGoal {
    goal: &'static str,
    met: Option<bool>,
}

fn print_json(args: &Options<'_>, rows: &[Row], stale: usize, cyclone_name: &str) {
    let results = rows
        .iter()
        .map(|row| {
            let r = &row.roslite;
            let roslite = JsonRoslite {
                samples: r.summary.map_or(0, |s| s.count),
                lost_samples: r.lost,
                latency: r.summary.map(|s| JsonLatency {
                    min_us: s.min_us,
                    mean_us: s.mean_us,
                    p50_us: s.p50_us,
                    p99_us: s.p99_us,
                    max_us: s.max_us,
                }),
                sender_vm_rss_kib: r.sender.vm_rss_kib,
                sender_vm_hwm_kib: r.sender.vm_hwm_kib,
                pong_vm_rss_kib: r.pong.map(|m| m.vm_rss_kib),
                pong_vm_hwm_kib: r.pong.map(|m| m.vm_hwm_kib),
            };
            let cyclone = match &row.cyclone {
                Ok(c) => JsonCyclone::Measured {
                    intervals: c.rtt.intervals,
                    round_trips: c.rtt.round_trips,
                    latency: JsonLatency {
                        min_us: c.rtt.min_us,
                        mean_us: c.rtt.mean_us,
                        p50_us: c.rtt.p50_us,
                        p99_us: c.rtt.p99_us,
                        max_us: c.rtt.max_us,
                    },
                    sender_vm_rss_kib: c.sender.map(|m| m.vm_rss_kib),
                    sender_vm_hwm_kib: c.sender.map(|m| m.vm_hwm_kib),
                },
                Err(why) => JsonCyclone::Skipped {
                    skipped: why.replace('\n', " "),
                },
            };
            JsonRow {
                size_bytes: row.size,
                roslite,
                cyclone,
                p50_ratio_roslite_to_cyclone: row.ratio(),
                p50_ratio_each_round: row.round_ratios.clone(),
            }
        })
        .collect();
    let goals = GOALS
        .iter()
        .map(|&(size, limit, text)| JsonGoal {
            goal: text,
            met: goal_met(rows, size, limit),
        })
        .collect();
    json::print(&Json {
        bench: "rtt",
        transport: "udp",
        domain: args.domain,
        cyclone: cyclone_name,
        cyclone_duration_s: args.cyclone_duration.as_secs_f64(),
        svg: args.svg.display().to_string(),
        lost_samples: rows.iter().map(|r| r.roslite.lost).sum(),
        late_echoes: stale,
        results,
        goals,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(roslite_p50: f64, cyclone_p50: Option<f64>, lost: usize) -> Row {
        let summary = Summary::of(&[Duration::from_secs_f64(roslite_p50 / 1e6)]);
        Row {
            size: 64,
            roslite: RoslitePoint {
                summary,
                lost,
                sender: ProcMemory::default(),
                pong: None,
            },
            cyclone: cyclone_p50
                .map(|p50_us| CyclonePoint {
                    rtt: CycloneRtt {
                        intervals: 1,
                        round_trips: 1,
                        min_us: p50_us,
                        mean_us: p50_us,
                        p50_us,
                        p99_us: p50_us,
                        max_us: p50_us,
                    },
                    sender: None,
                })
                .ok_or_else(|| "skipped".to_owned()),
            round_ratios: Vec::new(),
        }
    }

    #[test]
    fn the_round_with_the_median_ratio_is_reported_with_every_ratio_and_all_losses() {
        let row = Row::median_round(vec![
            round(40.0, Some(20.0), 0), // 2.0
            round(20.0, Some(25.0), 1), // 0.8
            round(30.0, Some(30.0), 2), // 1.0
        ]);
        assert_eq!(row.ratio(), Some(1.0));
        assert_eq!(row.round_ratios, [Some(2.0), Some(0.8), Some(1.0)]);
        assert_eq!(row.roslite.lost, 3);
        // Even count: the upper middle, which the goal then judges.
        let row = Row::median_round(vec![round(30.0, Some(20.0), 0), round(20.0, Some(20.0), 0)]);
        assert_eq!(row.ratio(), Some(1.5));
        // Without Cyclone: the first round, no ratio.
        let row = Row::median_round(vec![round(30.0, None, 0), round(20.0, None, 0)]);
        assert_eq!(row.ratio(), None);
        assert_eq!(row.roslite.summary.unwrap().p50_us, 30.0);
    }
}
