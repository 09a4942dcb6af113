//! `roslite bench rtt --transport intra|shm|uds|udp|shm-loan|all`: the sweep of the IPC
//! framework comparison for ROS 2 local communication (round-trip time against payload size,
//! 10 Hz and 100 messages per size, or back to back) for every path the user API can take
//! between two roslite endpoints on one host, next to this machine's floors and two DDS
//! implementations, all measured in the same run.
//!
//! Series, in the order they are measured (interleaving would restart every peer per size):
//! - **roslite through the user API**, one per transport: a ping node publishes
//!   `std_msgs/UInt8MultiArray` (its `uint8[]` is decoded as a view on the receive side), a pong
//!   node echoes each sample from its subscription callback (in another process it takes the
//!   message by value and `publish`es it; in the ping's own process, which still holds the
//!   ping, it takes the `Arc` and uses `publish_shared`: each the shape that copies nothing
//!   there), and the round trip is `publish` to the start of the ping node's subscription
//!   callback for the echo.
//!   At a rate a wall timer on the ping node publishes each ping (as the comparison's
//!   publisher node does), so the ping node's executor both sends the pings and takes the echoes; a
//!   ping not echoed by the next tick is lost. Back to back the echo's callback publishes the
//!   next one itself (as `ddsperf ping` and the floors do: two threads woken per round trip,
//!   not three). Reliable, keep-last 1. `intra`: both nodes in this process, one context without network,
//!   each node on its own executor thread. `shm`, `uds`, `udp`: the pong node runs in a second
//!   process (the hidden `roslite bench rtt-sweep-pong`); both processes get the transport in
//!   `ROSLITE_TRANSPORTS` (`shm`, `uds` or `udp`; UDP stays on for discovery), use LOCALHOST
//!   discovery in a domain of their own, and the path the pair really took is read back from
//!   the ping side's graph (`GraphEndpoint::transport` of the remote pong publisher) and printed:
//!   a build without the same-host wiring falls back to UDP, and the table says so.
//! - **transport only** (`toolkit::transport::rtt`): the same ping-pong on a bare `ShmWriter`/
//!   `ShmReader` or `UdsWriter`/`UdsReader` pair, no serialization and no executor.
//! - **floors** (`toolkit::transport`): futex ping-pong through shared memory (no payload),
//!   a raw SOCK_SEQPACKET socket pair carrying the payload both ways, and one memcpy of the
//!   payload. Floors run back to back; in rate mode the futex and raw socket floors are also
//!   measured at 64 B paced like the series (`futex @10Hz`, `raw UDS @10Hz`), and the goals
//!   are given against both. Back to back, the 64 B floor goals (shm against the futex floor,
//!   uds against the raw socket floor, through the API and as transport only) are measured
//!   again in `--rounds` rounds, each the floor and right after it the path, and judged on the
//!   round with the median ratio: this shared VM drifts between fast and slow phases lasting
//!   seconds, so only a floor measured next to the path is a fair comparison.
//! - **Cyclone DDS** `ddsperf ping`/`pong` (see `toolkit::cyclone` for its configuration and the
//!   doubling of its half round trips), at the same rate in rate mode.
//! - **Fast DDS 2.9**: `interop/cpp/fastdds_pingpong.cpp` (see `toolkit::fastdds`), UDP on
//!   127.0.0.1 only, no shared memory, no multicast; same topics, type, QoS and pacing.
//! - **shm-loan** (`loan`): shared memory with loaned messages on both sides.
//!
//! RSS is the sending (ping) process's VmRSS after each size; in `intra` that one process holds
//! both nodes. At a rate, `echo pages` is the echo process's pages touched per ping (median
//! over the warm-up pings, `toolkit::memory::TouchedPages`): the pong process, the bare
//! transports' and the floors' echoes (not `intra`, whose pong shares this process, nor the
//! loan series). The DDS pongs are counted alike over pings that are not measured, in windows
//! of one period not aligned with their pings (Cyclone: in the first second, which is dropped;
//! Fast DDS: during the warm-up). The goals are ratios between series of this run, never
//! absolute times.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{
    Context, ContextOptions, Executor, Instant, LocalTransports, NetworkMode, Node, Publisher,
    Subscription,
};
use serde::Serialize;

use crate::toolkit::context::{
    localhost_context, localhost_context_with, remote_publisher_path, spin_on_thread,
};
use crate::toolkit::cyclone::{self, cyclone_version, find_ddsperf};
use crate::toolkit::memory::{mb, TouchedPages};
use crate::toolkit::pingpong::{
    await_echo, first_ping_number, pacing_timer, ping_message, qos, Chain, Echo, Point,
    ECHO_TIMEOUT, MATCH_TIMEOUT, PING_TOPIC, PONG_TOPIC, SEQ_LEN,
};
use crate::toolkit::process::{die_with_parent, self_command, Helper};
use crate::toolkit::stats::{median_round, Summary};
use crate::toolkit::transport::{self, BenchTransport};
use crate::toolkit::units::size_label;
use crate::toolkit::{fastdds, json, plot};

pub mod loan;

/// The sweep's sizes when `--sizes` is not given: the IPC framework comparison's 256 B to
/// 4 MiB, plus 64 B for the comparison with the floors.
pub const DEFAULT_SIZES: &str = "64,256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB";
/// The sweep's chart when `--svg` is not given.
pub const DEFAULT_SVG: &str = "target/bench-rtt/rtt.svg";

/// How pings are paced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// `--count` pings per size at `--hz` (the IPC framework comparison sent 100 at 10 Hz).
    Rate,
    /// `--count` pings per size, each sent as soon as the previous echo arrived.
    BackToBack,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Rate => "rate",
            Mode::BackToBack => "back-to-back",
        }
    }
}

/// Which roslite paths to sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Intra,
    Shm,
    Uds,
    Udp,
    /// Shared memory with loaned messages on both sides ([`loan`]).
    ShmLoan,
}

impl Route {
    pub const ALL: [Route; 5] = [
        Route::Intra,
        Route::Shm,
        Route::Uds,
        Route::Udp,
        Route::ShmLoan,
    ];

    fn name(self) -> &'static str {
        match self {
            Route::Intra => "intra",
            Route::Shm => "shm",
            Route::Uds => "uds",
            Route::Udp => "udp",
            Route::ShmLoan => "shm-loan",
        }
    }
}

/// What `bench rtt` hands over for the sweep.
pub struct Options<'a> {
    pub routes: Vec<Route>,
    pub sizes: &'a [usize],
    pub domain: u32,
    pub cyclone_duration: Duration,
    pub no_cyclone: bool,
    pub svg: &'a Path,
    pub json: bool,
    pub mode: Mode,
    /// Round trips measured per size and series.
    pub count: usize,
    /// Pings per second in [`Mode::Rate`].
    pub hz: u32,
    pub no_fastdds: bool,
    /// Back-to-back mode: interleaved rounds for the 64 B floor goals (see
    /// [`measure_floor_rounds`]).
    pub rounds: usize,
}

/// Domains used from `--domain` on: one per roslite path, then Cyclone, then Fast DDS, then
/// shm-loan (added last, so the others keep their domains).
pub const DOMAINS_USED: u32 = 7;

// ---------------------------------------------------------------------------------------------
// Results.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// roslite through the user API.
    Api,
    /// A bare roslite-shm transport.
    Transport,
    Floor,
    /// Another DDS implementation.
    Peer,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Api => "roslite",
            Kind::Transport => "transport",
            Kind::Floor => "floor",
            Kind::Peer => "peer",
        }
    }
}

struct Series {
    name: String,
    kind: Kind,
    /// For [`Kind::Api`]: the path asked for and the one the pair took.
    requested: Option<&'static str>,
    observed: Option<String>,
    points: Vec<Point>,
}

impl Series {
    fn p50(&self, size: usize) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.size == size)?
            .summary
            .map(|s| s.p50_us)
    }

    /// Whether an API series ran on the path it asked for.
    fn on_requested_path(&self) -> bool {
        match (self.requested, &self.observed) {
            (Some(want), Some(got)) => want == got,
            _ => true,
        }
    }
}

fn us_summary(s: &transport::Summary) -> Option<Summary> {
    // The bare transports report p50/p99/max only; the other fields stay unknown (NaN is printed as
    // null in JSON and never compared).
    (s.samples > 0).then_some(Summary {
        count: s.samples,
        min_us: f64::NAN,
        mean_us: f64::NAN,
        p50_us: s.p50_us,
        p99_us: s.p99_us,
        max_us: s.max_us,
        stddev_us: f64::NAN,
    })
}

// ---------------------------------------------------------------------------------------------
// roslite through the user API.

/// The hidden `roslite bench rtt-sweep-pong`.
#[derive(clap::Args)]
pub struct PongArgs {
    #[arg(long)]
    domain: u32,
}

/// Creates the echoing node: every ping goes straight back from the subscription callback.
///
/// The callback takes the shape a relay node would for where it runs. In the ping's own process
/// the ping side still holds the message it sent, so the echo shares it (`Arc` in,
/// `publish_shared` out: nothing copied at any size). In another process the echo owns the
/// decoded message outright, so it takes it by value and publishes it (`publish`: no `Arc` is
/// made for it).
fn echo_node(
    ctx: &Context,
    name: &str,
    in_ping_process: bool,
) -> anyhow::Result<(Node, Subscription<UInt8MultiArray>)> {
    let node = ctx.create_node(name)?;
    let publisher = node.create_publisher::<UInt8MultiArray>(PONG_TOPIC, qos())?;
    // Ignoring a publish error: the ping side counts a missing echo as lost.
    let subscription = if in_ping_process {
        node.create_subscription(PING_TOPIC, qos(), move |ping: Arc<UInt8MultiArray>| {
            let _ = publisher.publish_shared(ping);
        })?
    } else {
        node.create_subscription(PING_TOPIC, qos(), move |ping: UInt8MultiArray| {
            let _ = publisher.publish(ping);
        })?
    };
    Ok((node, subscription))
}

/// The pong process: transports from `ROSLITE_TRANSPORTS`, echoes until killed.
pub fn pong(args: &PongArgs) -> anyhow::Result<()> {
    die_with_parent();
    // The path under test comes in `ROSLITE_TRANSPORTS`, which every context honours.
    let ctx = localhost_context(args.domain)?;
    let (node, _subscription) = echo_node(&ctx, "roslite_bench_rtt_sweep_pong", false)?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}

/// What the ping side's echo callback works with.
#[derive(Default)]
struct PingState {
    /// The last echo outside a chain, for the measuring thread (the probes that wait for the
    /// match).
    echo: Option<Echo>,
    /// The pings being measured: sent by the echo callback itself (back to back) or by the
    /// ping node's timer (at a rate).
    chain: Option<Chain>,
}

type EchoSlot = Arc<(Mutex<PingState>, Condvar)>;

/// The ping side of one path.
struct ApiSession {
    // Field order is drop order.
    publisher: Arc<Publisher<UInt8MultiArray>>,
    _subscription: Subscription<UInt8MultiArray>,
    _pacer: Option<roslite::Timer>,
    _echo_subscription: Option<Subscription<UInt8MultiArray>>,
    echo: EchoSlot,
    ctx: Context,
    spinners: Vec<JoinHandle<()>>,
    pong: Option<Helper>,
    next_seq: u64,
}

impl ApiSession {
    /// With `period`, a wall timer on the ping node sends the pings of a paced chain
    /// ([`Self::measure_paced`]), as a ROS node publishing at a rate would.
    fn start(path: Route, domain: u32, period: Option<Duration>) -> anyhow::Result<Self> {
        let (ctx, pong) = match path {
            Route::Intra => (
                Context::new(ContextOptions {
                    network: NetworkMode::Off,
                    ..Default::default()
                })?,
                None,
            ),
            _ => {
                let pong = Helper::spawn(
                    "the pong process (roslite bench rtt-sweep-pong)",
                    self_command(&["bench", "rtt-sweep-pong", "--domain", &domain.to_string()])?
                        .env(LocalTransports::ENV, path.name())
                        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                        .stdin(Stdio::null())
                        .stdout(Stdio::null()),
                )?;
                let transports = LocalTransports::parse(path.name())?;
                (localhost_context_with(domain, transports)?, Some(pong))
            }
        };
        let mut spinners = Vec::new();
        let echo_subscription = if path == Route::Intra {
            let (node, subscription) = echo_node(&ctx, "roslite_bench_rtt_sweep_pong", true)?;
            spinners.push(spin_on_thread(&ctx, node));
            Some(subscription)
        } else {
            None
        };
        let node = ctx.create_node("roslite_bench_rtt_sweep_ping")?;
        let publisher = Arc::new(node.create_publisher::<UInt8MultiArray>(PING_TOPIC, qos())?);
        let echo: EchoSlot = Arc::new((Mutex::new(PingState::default()), Condvar::new()));
        let (slot, chain_publisher) = (echo.clone(), publisher.clone());
        let subscription =
            node.create_subscription(PONG_TOPIC, qos(), move |msg: &UInt8MultiArray| {
                let echo = Echo::of(Instant::monotonic_now(), &msg.data[..]);
                let (lock, ready) = &*slot;
                let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(chain) = state.chain.as_mut() {
                    // Back to back, the next ping leaves from here; the measuring thread is
                    // woken only when the last echo is in.
                    let last = chain.pings.left == 0;
                    if chain.on_echo(echo, &chain_publisher) && last && chain.is_done() {
                        ready.notify_all();
                    }
                    return;
                }
                state.echo = Some(echo);
                ready.notify_all();
            })?;
        let pacer = period
            .map(|period| {
                let publisher = publisher.clone();
                pacing_timer(&node, period, &echo, move |state: &mut PingState| {
                    state
                        .chain
                        .as_mut()
                        .filter(|c| !c.is_done())
                        .is_some_and(|chain| chain.on_tick(&publisher))
                })
            })
            .transpose()?;
        spinners.push(spin_on_thread(&ctx, node));
        Ok(Self {
            publisher,
            _subscription: subscription,
            _pacer: pacer,
            _echo_subscription: echo_subscription,
            echo,
            ctx,
            spinners,
            pong,
            next_seq: first_ping_number(),
        })
    }

    /// One ping; `Ok(None)` if no echo within `timeout`.
    fn round_trip(
        &mut self,
        message: &mut Arc<UInt8MultiArray>,
        timeout: Duration,
    ) -> anyhow::Result<Option<Duration>> {
        let seq = self.next_seq;
        self.next_seq += 1;
        // Copies only if an earlier sample still holds the message.
        let data = Arc::make_mut(message).data.to_mut();
        data[..SEQ_LEN].copy_from_slice(&seq.to_le_bytes());
        let size = data.len();
        let start = Instant::monotonic_now();
        self.publisher.publish_shared(message.clone())?;
        let deadline = std::time::Instant::now() + timeout;
        let Some(echo) = await_echo(&self.echo, deadline, |slot| {
            slot.echo.take().filter(|e| e.seq == seq)
        }) else {
            return Ok(None);
        };
        anyhow::ensure!(
            echo.len == size && echo.intact,
            "the echo of a {size}-byte ping came back as {} bytes{}",
            echo.len,
            if echo.intact { "" } else { ", corrupted" }
        );
        Ok(Some(echo.at - start))
    }

    fn wait_for_match(&mut self) -> anyhow::Result<()> {
        let mut probe = Arc::new(ping_message(64));
        let start = Instant::monotonic_now();
        while self
            .round_trip(&mut probe, Duration::from_millis(200))?
            .is_none()
        {
            if let Some(pong) = &mut self.pong {
                pong.check_running()?;
            }
            if Instant::monotonic_now() - start > MATCH_TIMEOUT {
                bail!("the pong side did not answer within {MATCH_TIMEOUT:?}");
            }
        }
        Ok(())
    }

    /// The path the remote pong publisher's samples take to this context.
    fn observed_path(&self) -> String {
        remote_publisher_path(&self.ctx, PONG_TOPIC)
    }

    /// Back to back: each ping after the first is published by the echo callback of the one
    /// before (as `ddsperf ping` does), so a round trip wakes the same two threads as the
    /// floors' ping-pong do; this thread only waits for the chain to end and gives up on
    /// lost pings.
    fn measure_chained(&mut self, size: usize, pace: Pace) -> anyhow::Result<Point> {
        let total = pace.warmup + pace.count;
        let (lock, ready) = &*self.echo;
        {
            // Stored before the first echo can arrive: the callback waits for this lock.
            let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
            let chain = state
                .chain
                .insert(Chain::new(size, self.next_seq, total, pace.warmup));
            chain.send_next(&self.publisher)?;
        }
        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let chain = state.chain.as_mut().context("internal bug: no chain")?;
            if chain.pings.echoed + chain.pings.lost >= total {
                break;
            }
            if Instant::monotonic_now() - chain.pings.start > ECHO_TIMEOUT {
                chain.pings.lost += 1;
                if chain.pings.left == 0 {
                    break;
                }
                chain.pings.left -= 1;
                chain.send_next(&self.publisher)?;
                if let Some(pong) = &mut self.pong {
                    pong.check_running()?;
                }
            }
            state = ready
                .wait_timeout(state, Duration::from_millis(50))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let chain = state.chain.take().context("internal bug: no chain")?;
        drop(state);
        self.finish(size, chain)
    }

    /// The point of a finished chain; its numbering goes on from the last ping.
    fn finish(&mut self, size: usize, chain: Chain) -> anyhow::Result<Point> {
        self.next_seq = chain.pings.seq.wrapping_add(1);
        if let Some(error) = chain.pings.error {
            bail!(error);
        }
        Ok(Point {
            echo_pages: chain.echo_pages.as_ref().and_then(TouchedPages::median),
            ..Point::measured(size, &chain.pings.latencies, chain.pings.lost)
        })
    }

    fn measure(&mut self, size: usize, pace: Pace) -> anyhow::Result<Point> {
        match pace.mode {
            Mode::BackToBack => self.measure_chained(size, pace),
            Mode::Rate => self.measure_paced(size, pace),
        }
    }

    /// At a rate: the ping node's timer sends each ping and the echo callback, on the same
    /// executor, takes the time; a ping not echoed by the next tick is lost. This thread only
    /// waits for the chain to end.
    fn measure_paced(&mut self, size: usize, pace: Pace) -> anyhow::Result<Point> {
        let total = pace.warmup + pace.count;
        let (lock, ready) = &*self.echo;
        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let chain = Chain::paced(size, self.next_seq, total, pace.warmup);
        // The pong process's pages; intra has none of its own (its pong shares this process).
        state.chain = Some(match &self.pong {
            Some(pong) => chain.counting_echo_pages(pong.pid()),
            None => chain,
        });
        let period = pace
            .period
            .context("internal bug: a rate without a period")?;
        let limit = period * (total as u32 + 10) + ECHO_TIMEOUT;
        let start = std::time::Instant::now();
        while !state.chain.as_ref().is_some_and(Chain::is_done) {
            anyhow::ensure!(
                start.elapsed() < limit,
                "the ping timer did not finish {total} pings within {limit:?}"
            );
            if let Some(pong) = &mut self.pong {
                pong.check_running()?;
            }
            state = ready
                .wait_timeout(state, Duration::from_millis(200))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let chain = state.chain.take().context("internal bug: no chain")?;
        drop(state);
        self.finish(size, chain)
    }
}

impl Drop for ApiSession {
    fn drop(&mut self) {
        self.ctx.shutdown();
        for spinner in self.spinners.drain(..) {
            let _ = spinner.join();
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Pace {
    mode: Mode,
    hz: u32,
    count: usize,
    warmup: usize,
    period: Option<Duration>,
}

impl Pace {
    /// The time between pings at a rate.
    fn ping_period(self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.hz.max(1)))
    }

    fn transport(self) -> transport::Pace {
        match self.mode {
            Mode::Rate => transport::Pace::Rate {
                hz: self.hz,
                count: self.count,
            },
            Mode::BackToBack => transport::Pace::BackToBack { count: self.count },
        }
    }
}

fn measure_api(path: Route, domain: u32, sizes: &[usize], pace: Pace) -> anyhow::Result<Series> {
    if path == Route::ShmLoan {
        let (observed, points) =
            loan::measure(domain, sizes, pace.count, pace.warmup, pace.period)?;
        return Ok(Series {
            name: path.name().to_owned(),
            kind: Kind::Api,
            requested: Some("shm"),
            observed: Some(observed),
            points,
        });
    }
    let mut session = ApiSession::start(path, domain, pace.period)
        .with_context(|| format!("starting the {} ping-pong", path.name()))?;
    session
        .wait_for_match()
        .with_context(|| format!("{} ping-pong", path.name()))?;
    let observed = session.observed_path();
    let mut points = Vec::new();
    for &size in sizes {
        points.push(
            session
                .measure(size, pace)
                .with_context(|| format!("the {} series at {size} B", path.name()))?,
        );
    }
    Ok(Series {
        name: path.name().to_owned(),
        kind: Kind::Api,
        requested: Some(path.name()),
        observed: Some(observed),
        points,
    })
}

// ---------------------------------------------------------------------------------------------
// roslite-shm transports and floors.

fn measure_transport(
    transport: transport::BenchTransport,
    sizes: &[usize],
    pace: Pace,
) -> anyhow::Result<Series> {
    let rows = transport::rtt(transport, sizes, pace.transport(), pace.warmup)
        .with_context(|| format!("{} transport ping-pong", transport.name()))?;
    Ok(Series {
        name: format!("{} (transport only)", transport.name()),
        kind: Kind::Transport,
        requested: None,
        observed: None,
        points: rows
            .iter()
            .map(|r| Point {
                size: r.size,
                summary: us_summary(&r.rtt),
                lost: 0,
                sender_rss_kib: Some(r.sender_rss_kib),
                echo_pages: r.rtt.echo_pages_per_ping,
            })
            .collect(),
    })
}

/// Name of the futex floor paced like the series (rate mode only).
fn paced_futex_name(hz: u32) -> String {
    format!("futex @{hz}Hz")
}

/// Name of the raw socket floor paced like the series (rate mode only).
fn paced_raw_uds_name(hz: u32) -> String {
    format!("raw UDS @{hz}Hz")
}

/// The floors back to back (the machine's best case), and in rate mode also paced like the
/// series, at 64 B: a ping every 100 ms meets cold caches and idle CPUs, for the floor as for
/// roslite, so only a floor paced alike says what roslite adds at that rate.
fn measure_floors(sizes: &[usize], pace: Pace) -> anyhow::Result<Vec<Series>> {
    let count = pace.count;
    let futex = transport::futex_floor(count.max(1000)).context("futex floor")?;
    let floor = |name: &str, points: Vec<Point>| Series {
        name: name.to_owned(),
        kind: Kind::Floor,
        requested: None,
        observed: None,
        points,
    };
    let point = |size, s: &transport::Summary| Point {
        size,
        summary: us_summary(s),
        lost: 0,
        sender_rss_kib: None,
        echo_pages: s.echo_pages_per_ping,
    };
    let mut raw = Vec::new();
    let mut memcpy = Vec::new();
    for &size in sizes {
        let uds = transport::raw_uds_floor(size, count.max(200)).context("raw UDS floor")?;
        raw.push(point(size, &uds));
        memcpy.push(point(size, &transport::memcpy_floor(size, 200)));
    }
    // The futex floor carries no payload: the same figure at every size.
    let futex_points = sizes.iter().map(|&size| point(size, &futex)).collect();
    let mut floors = vec![
        floor("futex floor", futex_points),
        floor("raw UDS floor", raw),
        floor("memcpy", memcpy),
    ];
    if pace.mode == Mode::Rate && sizes.contains(&64) {
        let paced = pace.transport();
        let futex =
            transport::futex_floor_paced(paced, pace.warmup).context("paced futex floor")?;
        let futex_points = sizes.iter().map(|&size| point(size, &futex)).collect();
        floors.push(floor(&paced_futex_name(pace.hz), futex_points));
        let uds = transport::raw_uds_floor_paced(64, paced, pace.warmup)
            .context("paced raw UDS floor")?;
        floors.push(floor(&paced_raw_uds_name(pace.hz), vec![point(64, &uds)]));
    }
    Ok(floors)
}

/// One 64 B floor goal measured in alternating rounds (back-to-back mode): per round the floor,
/// then the series judged against it right after it. This shared VM drifts between fast and
/// slow phases lasting seconds; measured minutes apart in the sweep, a floor and a path can
/// land in different phases and their ratio says more about the phase than about roslite.
struct FloorRounds {
    /// The series judged, named as in the sweep (`shm`, `uds (transport only)`, ...).
    series: String,
    floor: &'static str,
    /// Per round, in measuring order: `(series p50, floor p50)`, `None` where a side
    /// completed no round trip.
    rounds: Vec<(Option<f64>, Option<f64>)>,
    /// Why no round was measured (the path fell back to another transport).
    why_not: Option<String>,
}

impl FloorRounds {
    fn new(series: String, floor: &'static str) -> Self {
        Self {
            series,
            floor,
            rounds: Vec::new(),
            why_not: None,
        }
    }

    fn ratios(&self) -> Vec<Option<f64>> {
        self.rounds
            .iter()
            .map(|&(ours, floor)| Some(ours? / floor?))
            .collect()
    }

    /// The goal "`series` 64 B p50 <= 1.3x `floor`" (the sweep's wording), judged on the round
    /// with the median ratio, every round's ratio carried along.
    fn goal(&self) -> Goal {
        let text = format!("{} 64 B p50 <= 1.3x {}", self.series, self.floor);
        let ratios = self.ratios();
        let median = median_round(&ratios).and_then(|index| {
            let (ours, floor) = self.rounds[index];
            Some(MedianRound {
                index,
                p50_us: ours?,
                floor_p50_us: floor?,
            })
        });
        Goal {
            text,
            ratio: median.map(|m| (m.p50_us / m.floor_p50_us, FLOOR_LIMIT)),
            why_not: match (&self.why_not, median) {
                (Some(why), _) => Some(why.clone()),
                (None, None) => Some("not measured".to_owned()),
                (None, Some(_)) => None,
            },
            rounds: Some(GoalRounds { ratios, median }),
            bound: None,
        }
    }
}

/// How much slower than its floor a 64 B round trip may be.
const FLOOR_LIMIT: f64 = 1.3;

/// The back-to-back floor that `path`'s 64 B goal is judged against, with the sweep's counts
/// ([`measure_floors`]), so a round's floor is the sweep's floor measured again.
fn floor_p50_64(path: Route, pace: Pace) -> anyhow::Result<Option<f64>> {
    let floor = match path {
        Route::Shm => transport::futex_floor(pace.count.max(1000)).context("futex floor")?,
        _ => transport::raw_uds_floor(64, pace.count.max(200)).context("raw UDS floor")?,
    };
    Ok(us_summary(&floor).map(|s| s.p50_us))
}

/// The 64 B floor goals of shm (futex floor) and uds (raw UDS floor), through the API and as
/// transport only, in `rounds` rounds per path: the floor, then the path through the API, then
/// the bare transport (the API path, the goal proper, is the one right after its floor).
fn measure_floor_rounds(
    routes: &[Route],
    domain: u32,
    pace: Pace,
    rounds: usize,
) -> anyhow::Result<Vec<FloorRounds>> {
    let mut out = Vec::new();
    for (index, &path) in Route::ALL.iter().enumerate() {
        let (floor, transport) = match path {
            Route::Shm => ("futex floor", transport::BenchTransport::Shm),
            Route::Uds => ("raw UDS floor", transport::BenchTransport::Uds),
            _ => continue,
        };
        if !routes.contains(&path) {
            continue;
        }
        let mut api = FloorRounds::new(path.name().to_owned(), floor);
        let mut bare = FloorRounds::new(format!("{} (transport only)", transport.name()), floor);
        // The sweep's own session for this path has ended: its domain is free again.
        let mut session = ApiSession::start(path, domain + index as u32, pace.period)
            .with_context(|| format!("starting the {} ping-pong again", path.name()))?;
        session.wait_for_match()?;
        let observed = session.observed_path();
        let mut session = if observed == path.name() {
            Some(session)
        } else {
            api.why_not = Some(format!(
                "not measured: {} fell back to {observed}",
                path.name()
            ));
            None
        };
        for _ in 0..rounds {
            let floor = floor_p50_64(path, pace)?;
            if let Some(session) = &mut session {
                let ours = session.measure(64, pace)?.summary.map(|s| s.p50_us);
                api.rounds.push((ours, floor));
            }
            let row = transport::rtt(transport, &[64], pace.transport(), pace.warmup)
                .with_context(|| format!("{} transport ping-pong", transport.name()))?;
            let ours = row
                .first()
                .and_then(|r| us_summary(&r.rtt))
                .map(|s| s.p50_us);
            bare.rounds.push((ours, floor));
        }
        out.push(api);
        out.push(bare);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Cyclone's ddsperf.

/// At a rate, a DDS pong's pages touched per ping, counted as the roslite echoes are (median
/// of windows of one period each, [`TouchedPages`]), `windows` of them after a `skip`. These
/// pings are not ours to time, so the windows are not aligned with them, but a window of one
/// period holds one ping. The caller places the windows over pings that are not measured (so
/// that clearing the accessed bits never lands on a measured round trip).
fn dds_pong_pages(pong: u32, pace: Pace, skip: Duration, windows: usize) -> Option<u64> {
    if windows == 0 {
        return None;
    }
    std::thread::sleep(skip);
    let mut pages = TouchedPages::of(pong);
    for _ in 0..windows {
        pages.next_window();
        std::thread::sleep(pace.ping_period());
    }
    pages.close_window();
    pages.median()
}

fn measure_cyclone(
    ddsperf: &Path,
    domain: u32,
    sizes: &[usize],
    pace: Pace,
    duration: Duration,
) -> anyhow::Result<Series> {
    let mut points = Vec::new();
    for &size in sizes {
        // In rate mode: the pings of one series plus the dropped first second.
        let (hz, duration) = match pace.mode {
            Mode::Rate => (
                Some(pace.hz),
                Duration::from_secs_f64(pace.count as f64 / f64::from(pace.hz) + 1.5),
            ),
            Mode::BackToBack => (None, duration),
        };
        // The windows fall in ddsperf's first second, which it reports but we drop (see
        // `CycloneRtt::from_intervals`); by 0.4 s the pair has matched on loopback.
        let count_pages = |pong: u32| match pace.mode {
            Mode::Rate => {
                let skip = Duration::from_millis(400);
                let room = Duration::from_secs(1) - skip;
                let windows = (room.as_secs_f64() * f64::from(pace.hz)) as usize;
                dds_pong_pages(pong, pace, skip, windows.min(pace.warmup))
            }
            Mode::BackToBack => None,
        };
        let ping = cyclone::ping(ddsperf, domain, size, hz, duration, count_pages)?;
        let summary = ping.rtt.ok().map(|c| Summary {
            count: usize::try_from(c.round_trips).unwrap_or(usize::MAX),
            min_us: c.min_us,
            mean_us: c.mean_us,
            p50_us: c.p50_us,
            p99_us: c.p99_us,
            max_us: c.max_us,
            stddev_us: f64::NAN,
        });
        points.push(Point {
            size,
            summary,
            lost: 0,
            sender_rss_kib: ping.sender.map(|m| m.vm_rss_kib),
            echo_pages: ping.during,
        });
    }
    let name = match cyclone_version() {
        Some(v) => format!("Cyclone {v}"),
        None => "Cyclone".to_owned(),
    };
    Ok(Series {
        name,
        kind: Kind::Peer,
        requested: None,
        observed: None,
        points,
    })
}

// ---------------------------------------------------------------------------------------------
// Fast DDS.

fn measure_fastdds(
    binary: &Path,
    version: &str,
    domain: u32,
    sizes: &[usize],
    pace: Pace,
) -> anyhow::Result<Series> {
    let pacing = fastdds::Pacing {
        hz: (pace.mode == Mode::Rate).then_some(pace.hz),
        count: pace.count,
        warmup: pace.warmup,
    };
    // The ping announces a size right before its first warm-up ping of that size; a window
    // per warm-up ping but the last, which would close on a measured one.
    let points = fastdds::ping_pong(binary, domain, sizes, pacing, |pong| match pace.mode {
        Mode::Rate => {
            let windows = pace.warmup.saturating_sub(1);
            dds_pong_pages(pong, pace, Duration::ZERO, windows)
        }
        Mode::BackToBack => None,
    })?;
    Ok(Series {
        name: format!("Fast DDS {version}"),
        kind: Kind::Peer,
        requested: None,
        observed: None,
        points,
    })
}

// ---------------------------------------------------------------------------------------------
// The sweep.

struct Skipped {
    name: String,
    reason: String,
}

struct Goal {
    text: String,
    /// `(measured ratio, limit)`.
    ratio: Option<(f64, f64)>,
    /// Why it could not be evaluated.
    why_not: Option<String>,
    /// For a goal measured in interleaved rounds ([`FloorRounds`]).
    rounds: Option<GoalRounds>,
    /// The best ratio this run's floors leave the measured path, with why, where the floors
    /// set one ([`owned_copy_bound`]).
    bound: Option<Bound>,
}

/// The lowest ratio a goal's path could reach on this run's floors.
struct Bound {
    ratio: f64,
    why: String,
}

/// Every round of a [`FloorRounds`] goal and the one it is judged on.
struct GoalRounds {
    /// p50 ratio of each round, in measuring order.
    ratios: Vec<Option<f64>>,
    median: Option<MedianRound>,
}

#[derive(Clone, Copy, Debug)]
struct MedianRound {
    /// From 0, in measuring order.
    index: usize,
    p50_us: f64,
    floor_p50_us: f64,
}

impl Goal {
    fn met(&self) -> Option<bool> {
        self.ratio.map(|(r, limit)| r <= limit)
    }
}

fn find<'a>(series: &'a [Series], name: &str) -> Option<&'a Series> {
    series.iter().find(|s| s.name == name)
}

/// `a` at `size_a` over `b` at `size_b`, as a goal with `limit`.
fn ratio_goal(
    text: String,
    limit: f64,
    a: Option<&Series>,
    size_a: usize,
    b: Option<&Series>,
    size_b: usize,
) -> Goal {
    let why_not = match (a, b) {
        (None, _) | (_, None) => Some("not measured".to_owned()),
        (Some(a), _) if !a.on_requested_path() => Some(format!(
            "not measured: {} fell back to {}",
            a.name,
            a.observed.as_deref().unwrap_or("?")
        )),
        _ => None,
    };
    let ratio = (|| Some((a?.p50(size_a)? / b?.p50(size_b)?, limit)))();
    Goal {
        text,
        ratio: if why_not.is_some() { None } else { ratio },
        why_not: if ratio.is_none() && why_not.is_none() {
            Some(format!(
                "not measured (needs {} and {})",
                size_label(size_a),
                size_label(size_b)
            ))
        } else {
            why_not
        },
        rounds: None,
        bound: None,
    }
}

/// What the owned `publish(msg)` of 4 MiB must cost at least, against the same path's 64 B,
/// on this run's memcpy floor.
///
/// The message lives in the publisher's private memory, so reaching shared memory copies its
/// payload once on each side of a round trip (the ping's publish and the pong's re-publish):
/// `(shm 64 B + 2 x memcpy 4 MiB) / shm 64 B`, however lean the rest. The zero-copy reading of
/// the goal is the loaned path's (`shm-loan`), which writes the payload in place.
fn owned_copy_bound(shm: Option<&Series>, memcpy: Option<&Series>) -> Option<Bound> {
    let small = shm?.p50(64)?;
    let copy = memcpy?.p50(4 << 20)?;
    (small > 0.0).then(|| Bound {
        ratio: (small + 2.0 * copy) / small,
        why: format!(
            "an owned message is copied into shared memory on each side: two 4 MiB memcpys \
             ({copy:.1} us each in this run) make at least this; the zero-copy path is shm-loan's"
        ),
    })
}

fn goals(series: &[Series]) -> Vec<Goal> {
    let futex = find(series, "futex floor");
    let raw = find(series, "raw UDS floor");
    let memcpy = find(series, "memcpy");
    let paced = |prefix: &str| {
        series
            .iter()
            .find(|s| s.kind == Kind::Floor && s.name.starts_with(prefix))
    };
    let (paced_futex, paced_raw) = (paced("futex @"), paced("raw UDS @"));
    let mut out = Vec::new();
    for (name, suffix) in [("shm", ""), ("shm (transport only)", " (transport only)")] {
        let shm = find(series, name);
        out.push(ratio_goal(
            format!("shm{suffix} 64 B p50 <= 1.3x futex floor"),
            1.3,
            shm,
            64,
            futex,
            64,
        ));
        if let Some(floor) = paced_futex {
            out.push(ratio_goal(
                format!("shm{suffix} 64 B p50 <= 1.3x {}", floor.name),
                1.3,
                shm,
                64,
                Some(floor),
                64,
            ));
        }
        let mut owned = ratio_goal(
            format!("shm{suffix} 4 MiB p50 <= 2x shm{suffix} 64 B"),
            2.0,
            shm,
            4 << 20,
            shm,
            64,
        );
        if suffix.is_empty() {
            owned.bound = owned_copy_bound(shm, memcpy);
        }
        out.push(owned);
    }
    if let Some(loaned) = find(series, "shm-loan") {
        out.push(ratio_goal(
            "shm-loan 4 MiB p50 <= 2x shm-loan 64 B".to_owned(),
            2.0,
            Some(loaned),
            4 << 20,
            Some(loaned),
            64,
        ));
    }
    for (name, suffix) in [("uds", ""), ("uds (transport only)", " (transport only)")] {
        out.push(ratio_goal(
            format!("uds{suffix} 64 B p50 <= 1.3x raw UDS floor"),
            1.3,
            find(series, name),
            64,
            raw,
            64,
        ));
        if let Some(floor) = paced_raw {
            out.push(ratio_goal(
                format!("uds{suffix} 64 B p50 <= 1.3x {}", floor.name),
                1.3,
                find(series, name),
                64,
                Some(floor),
                64,
            ));
        }
    }
    // Every same-host path through the API beats Cyclone at every size: the worst ratio.
    let cyclone = series
        .iter()
        .find(|s| s.kind == Kind::Peer && s.name.starts_with("Cyclone"));
    for path in ["intra", "shm", "uds"] {
        let text = format!("{path} p50 < Cyclone p50 at every size");
        let Some(ours) = find(series, path) else {
            continue;
        };
        let Some(cyclone) = cyclone else {
            out.push(Goal {
                text,
                ratio: None,
                why_not: Some("not measured (no Cyclone)".to_owned()),
                rounds: None,
                bound: None,
            });
            continue;
        };
        if !ours.on_requested_path() {
            out.push(ratio_goal(text, 1.0, Some(ours), 0, Some(cyclone), 0));
            continue;
        }
        let worst = ours
            .points
            .iter()
            .filter_map(|p| Some(p.summary?.p50_us / cyclone.p50(p.size)?))
            .fold(None, |w: Option<f64>, r| Some(w.map_or(r, |w| w.max(r))));
        out.push(Goal {
            text: format!("{text} (worst ratio shown)"),
            ratio: worst.map(|r| (r, 0.999_999)),
            why_not: worst.is_none().then(|| "not measured".to_owned()),
            rounds: None,
            bound: None,
        });
    }
    out
}

/// Runs the sweep over `options.routes`, then prints the table or the JSON object and writes
/// the chart.
pub fn run(options: &Options<'_>) -> anyhow::Result<()> {
    let (mode, count, hz) = (options.mode, options.count, options.hz);
    anyhow::ensure!(count >= 1, "--count must be at least 1");
    anyhow::ensure!(hz >= 1, "--hz must be at least 1");
    anyhow::ensure!(!options.sizes.is_empty(), "--sizes is empty");
    anyhow::ensure!(
        options.domain + DOMAINS_USED <= roslite::context::MAX_DOMAIN_ID + 1,
        "--domain must be at most {} (the sweep uses {DOMAINS_USED} domains from it)",
        roslite::context::MAX_DOMAIN_ID + 1 - DOMAINS_USED
    );
    let pace = Pace {
        mode,
        hz,
        count,
        warmup: (count / 10).max(1),
        period: (mode == Mode::Rate).then(|| Duration::from_secs(1) / hz),
    };
    let sizes = options.sizes;
    let mut series = Vec::new();
    let mut skipped = Vec::new();
    for (index, &path) in Route::ALL.iter().enumerate() {
        if options.routes.contains(&path) {
            let offset = if path == Route::ShmLoan {
                6
            } else {
                index as u32
            };
            series.push(measure_api(path, options.domain + offset, sizes, pace)?);
        }
    }
    for (path, transport) in [
        (Route::Shm, BenchTransport::Shm),
        (Route::Uds, BenchTransport::Uds),
    ] {
        if options.routes.contains(&path) {
            series.push(measure_transport(transport, sizes, pace)?);
        }
    }
    series.extend(measure_floors(sizes, pace)?);
    let floor_rounds = if mode == Mode::BackToBack && sizes.contains(&64) && options.rounds > 0 {
        Some(measure_floor_rounds(
            &options.routes,
            options.domain,
            pace,
            options.rounds,
        )?)
    } else {
        None
    };
    let cyclone_domain = options.domain + 4;
    if options.no_cyclone {
        skipped.push(Skipped {
            name: "Cyclone".into(),
            reason: "skipped (--no-cyclone)".into(),
        });
    } else if let Some(ddsperf) = find_ddsperf() {
        match measure_cyclone(
            &ddsperf,
            cyclone_domain,
            sizes,
            pace,
            options.cyclone_duration,
        ) {
            Ok(s) => series.push(s),
            Err(e) => skipped.push(Skipped {
                name: "Cyclone".into(),
                reason: format!("failed: {e:#}"),
            }),
        }
    } else {
        skipped.push(Skipped {
            name: "Cyclone".into(),
            reason: cyclone::NOT_INSTALLED.into(),
        });
    }
    if options.no_fastdds {
        skipped.push(Skipped {
            name: "Fast DDS".into(),
            reason: "skipped (--no-fastdds)".into(),
        });
    } else {
        match fastdds::peer() {
            Ok((binary, version)) => {
                match measure_fastdds(&binary, &version, options.domain + 5, sizes, pace) {
                    Ok(s) => series.push(s),
                    Err(e) => skipped.push(Skipped {
                        name: "Fast DDS".into(),
                        reason: format!("failed: {e:#}"),
                    }),
                }
            }
            Err(reason) => skipped.push(Skipped {
                name: "Fast DDS".into(),
                reason,
            }),
        }
    }
    let mut goals = goals(&series);
    // Interleaved rounds replace the sweep's ratio of the same goal: its floor and path were
    // measured minutes apart.
    for goal in floor_rounds.iter().flatten().map(FloorRounds::goal) {
        match goals.iter_mut().find(|g| g.text == goal.text) {
            Some(slot) => *slot = goal,
            None => goals.push(goal),
        }
    }
    write_svg(options.svg, &series, sizes, pace)?;
    if options.json {
        json::print(&to_json(options, pace, &series, &skipped, &goals));
    } else {
        print!("{}", table(options, pace, &series, &skipped, &goals));
    }
    Ok(())
}

fn pace_text(pace: Pace) -> String {
    match pace.mode {
        Mode::Rate => format!(
            "{} pings per size at {} Hz after {} warm-up, sent by a timer on roslite's ping \
             node",
            pace.count, pace.hz, pace.warmup
        ),
        Mode::BackToBack => format!(
            "{} pings per size back to back after {} warm-up; roslite's next ping is published \
             from the echo's callback, as ddsperf's",
            pace.count, pace.warmup
        ),
    }
}

fn table(
    options: &Options<'_>,
    pace: Pace,
    series: &[Series],
    skipped: &[Skipped],
    goals: &[Goal],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "round-trip time against size, same host ({}; floors back to back{}), reliable \
         keep-last 1, std_msgs/UInt8MultiArray",
        pace_text(pace),
        match pace.mode {
            Mode::Rate => format!(", and those named @{}Hz paced alike at 64 B", pace.hz),
            Mode::BackToBack => String::new(),
        }
    );
    if pace.mode == Mode::BackToBack && options.rounds > 0 && options.sizes.contains(&64) {
        let _ = writeln!(
            out,
            "64 B floor goals: shm against the futex floor, uds against the raw UDS floor, all \
             back to back, in {} rounds of the floor, then the path through the API, then the \
             bare transport; judged on the round with the median ratio (even count: the upper \
             middle), every round's ratio listed",
            options.rounds
        );
    }
    for s in series.iter().filter(|s| s.kind == Kind::Api) {
        let observed = s.observed.as_deref().unwrap_or("?");
        let note = if s.on_requested_path() {
            String::new()
        } else {
            " (NOT the requested path: the same-host wiring is missing or refused)".to_owned()
        };
        let _ = writeln!(
            out,
            "path: {} requested, {observed} used{note}",
            s.requested.unwrap_or("?")
        );
    }
    if find(series, "shm-loan").is_some() {
        let _ = writeln!(
            out,
            "shm-loan: ping and pong loan each message and write only a 9-byte header in place; \
             the rest of the payload stays as the chunk holds it (zero-copy transfer cost, \
             independent of the payload's fill); the time includes both loans"
        );
    }
    if pace.mode == Mode::Rate {
        let _ = writeln!(
            out,
            "echo pages: the echo process's pages (code, data, stacks, shared memory) touched per \
             ping, median over the warm-up pings (accessed bits cleared through \
             /proc/<pid>/clear_refs before each; for the DDS pongs, windows of one period over \
             pings not measured); at a rate each one meets a cold TLB and caches"
        );
    }
    let _ = writeln!(
        out,
        "{:<22} {:>8} {:>7} {:>4} {:>10} {:>10} {:>10} {:>9} {:>11}",
        "series", "size", "samples", "lost", "p50 us", "p99 us", "max us", "RSS MB", "echo pages"
    );
    for s in series {
        for p in &s.points {
            let figures = match p.summary {
                Some(m) => format!(
                    "{:>7} {:>4} {:>10.2} {:>10.2} {:>10.2}",
                    m.count, p.lost, m.p50_us, m.p99_us, m.max_us
                ),
                None => format!("{:>7} {:>4} {:>32}", 0, p.lost, "no round trip"),
            };
            let rss = p
                .sender_rss_kib
                .map_or("-".to_owned(), |k| format!("{:.1}", mb(k)));
            let pages = p.echo_pages.map_or("-".to_owned(), |n| n.to_string());
            let _ = writeln!(
                out,
                "{:<22} {:>8} {figures} {rss:>9} {pages:>11}",
                s.name,
                size_label(p.size)
            );
        }
    }
    // p50 side by side.
    let _ = write!(out, "\np50 us   {:>8}", "size");
    for s in series {
        let _ = write!(out, " {:>14}", short(&s.name));
    }
    out.push('\n');
    for &size in options.sizes {
        let _ = write!(out, "         {:>8}", size_label(size));
        for s in series {
            let cell = s.p50(size).map_or("-".to_owned(), |v| format!("{v:.1}"));
            let _ = write!(out, " {cell:>14}");
        }
        out.push('\n');
    }
    for s in skipped {
        let _ = writeln!(out, "{}: {}", s.name, s.reason);
    }
    for g in goals {
        let verdict = match (g.met(), &g.why_not) {
            (Some(true), _) => "met".to_owned(),
            (Some(false), _) => "NOT met".to_owned(),
            (None, Some(why)) => why.clone(),
            (None, None) => "not measured".to_owned(),
        };
        let ratio = g.ratio.map_or(String::new(), |(r, limit)| {
            format!(" ({r:.2}x, limit {limit:.2}x)")
        });
        let rounds = g.rounds.as_ref().map_or(String::new(), rounds_text);
        let bound = g.bound.as_ref().map_or(String::new(), |b| {
            format!("  (at best {:.2}x: {})", b.ratio, b.why)
        });
        let _ = writeln!(out, "goal: {}{ratio} -> {verdict}{rounds}{bound}", g.text);
    }
    let _ = writeln!(out, "chart: {}", options.svg.display());
    out
}

/// Every round's ratio and the round judged, for the table.
fn rounds_text(rounds: &GoalRounds) -> String {
    let each: Vec<String> = rounds
        .ratios
        .iter()
        .map(|r| r.map_or("-".to_owned(), |r| format!("{r:.2}")))
        .collect();
    let judged = rounds.median.map_or(String::new(), |m| {
        format!(
            "; median round {}: {:.2} us vs {:.2} us",
            m.index + 1,
            m.p50_us,
            m.floor_p50_us
        )
    });
    format!("  (rounds: {}{judged})", each.join(" "))
}

/// A column heading of at most 14 characters.
fn short(name: &str) -> String {
    let name = name.replace(" (transport only)", " tr.");
    name.chars().take(14).collect()
}

/// `--json`: every series with its points, the skipped peers, and the goals.
#[derive(Serialize)]
struct Json<'a> {
    bench: &'static str,
    sweep: bool,
    transports: Vec<&'static str>,
    mode: &'static str,
    hz: u32,
    count: usize,
    warmup: usize,
    domain: u32,
    sizes: &'a [usize],
    svg: String,
    series: Vec<JsonSeries<'a>>,
    skipped: Vec<JsonSkipped<'a>>,
    goals: Vec<JsonGoal<'a>>,
}

#[derive(Serialize)]
struct JsonSeries<'a> {
    name: &'a str,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    requested: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observed: Option<&'a str>,
    points: Vec<JsonPoint>,
}

#[derive(Serialize)]
struct JsonPoint {
    size_bytes: usize,
    lost: usize,
    samples: usize,
    #[serde(flatten)]
    latency: Option<JsonLatency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sender_vm_rss_kib: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    echo_pages_per_ping: Option<u64>,
}

#[derive(Serialize)]
struct JsonLatency {
    #[serde(serialize_with = "json::fixed3")]
    p50_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    p99_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    max_us: f64,
}

#[derive(Serialize)]
struct JsonSkipped<'a> {
    name: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct JsonGoal<'a> {
    goal: &'a str,
    #[serde(serialize_with = "json::fixed3_opt")]
    ratio: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    limit: Option<f64>,
    met: Option<bool>,
    #[serde(flatten)]
    bound: Option<JsonBound<'a>>,
    #[serde(flatten)]
    rounds: Option<JsonRounds>,
}

#[derive(Serialize)]
struct JsonBound<'a> {
    #[serde(serialize_with = "json::fixed3")]
    bound_ratio: f64,
    bound: &'a str,
}

#[derive(Serialize)]
struct JsonRounds {
    rounds: usize,
    #[serde(serialize_with = "json::fixed3_each")]
    p50_ratio_each_round: Vec<Option<f64>>,
    #[serde(flatten)]
    median: Option<JsonMedianRound>,
}

#[derive(Serialize)]
struct JsonMedianRound {
    /// From 1, in measuring order.
    median_round: usize,
    #[serde(serialize_with = "json::fixed3")]
    p50_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    floor_p50_us: f64,
}

fn to_json<'a>(
    options: &'a Options<'_>,
    pace: Pace,
    series: &'a [Series],
    skipped: &'a [Skipped],
    goals: &'a [Goal],
) -> Json<'a> {
    let series = series
        .iter()
        .map(|s| JsonSeries {
            name: &s.name,
            kind: s.kind.name(),
            requested: s.requested,
            observed: s
                .requested
                .map(|_| s.observed.as_deref().unwrap_or("unknown")),
            points: s
                .points
                .iter()
                .map(|p| JsonPoint {
                    size_bytes: p.size,
                    lost: p.lost,
                    samples: p.summary.map_or(0, |m| m.count),
                    latency: p.summary.map(|m| JsonLatency {
                        p50_us: m.p50_us,
                        p99_us: m.p99_us,
                        max_us: m.max_us,
                    }),
                    sender_vm_rss_kib: p.sender_rss_kib,
                    echo_pages_per_ping: p.echo_pages,
                })
                .collect(),
        })
        .collect();
    let skipped = skipped
        .iter()
        .map(|s| JsonSkipped {
            name: &s.name,
            reason: &s.reason,
        })
        .collect();
    let goals = goals
        .iter()
        .map(|g| JsonGoal {
            goal: &g.text,
            ratio: g.ratio.map(|(r, _)| r),
            limit: g.ratio.map(|(_, l)| l),
            met: g.met(),
            bound: g.bound.as_ref().map(|b| JsonBound {
                bound_ratio: b.ratio,
                bound: &b.why,
            }),
            rounds: g.rounds.as_ref().map(|r| JsonRounds {
                rounds: r.ratios.len(),
                p50_ratio_each_round: r.ratios.clone(),
                median: r.median.map(|m| JsonMedianRound {
                    median_round: m.index + 1,
                    p50_us: m.p50_us,
                    floor_p50_us: m.floor_p50_us,
                }),
            }),
        })
        .collect();
    Json {
        bench: "rtt",
        sweep: true,
        transports: options.routes.iter().map(|r| r.name()).collect(),
        mode: pace.mode.name(),
        hz: pace.hz,
        count: pace.count,
        warmup: pace.warmup,
        domain: options.domain,
        sizes: options.sizes,
        svg: options.svg.display().to_string(),
        series,
        skipped,
        goals,
    }
}

fn write_svg(path: &Path, series: &[Series], sizes: &[usize], pace: Pace) -> anyhow::Result<()> {
    // A colour per series: p50 solid and p99 dashed for each roslite path and peer; the
    // transport-only series and the floors (p50 only) dotted, as references.
    let line = |s: &Series, pick: fn(&Summary) -> f64, name: String, color, stroke| plot::Line {
        name,
        points: s
            .points
            .iter()
            .filter_map(|p| Some((p.size as f64, pick(&p.summary?))))
            .collect(),
        color,
        stroke,
    };
    let measured = series
        .iter()
        .filter(|s| matches!(s.kind, Kind::Api | Kind::Peer));
    let references = series
        .iter()
        .filter(|s| matches!(s.kind, Kind::Transport | Kind::Floor));
    let mut lines = Vec::new();
    for (color, s) in measured.enumerate() {
        let name = match (s.kind, &s.observed) {
            (Kind::Api, Some(observed)) if !s.on_requested_path() => {
                format!("{} (took {observed})", s.name)
            }
            (Kind::Api, _) => format!("roslite {}", s.name),
            _ => s.name.clone(),
        };
        lines.push(line(
            s,
            |m| m.p50_us,
            format!("{name} p50"),
            color,
            plot::Stroke::Solid,
        ));
        lines.push(line(
            s,
            |m| m.p99_us,
            format!("{name} p99"),
            color,
            plot::Stroke::Dashed,
        ));
    }
    let first_reference = lines.len() / 2;
    for (offset, s) in references.enumerate() {
        let name = format!("{} p50", s.name);
        let color = first_reference + offset;
        lines.push(line(s, |m| m.p50_us, name, color, plot::Stroke::Dotted));
    }
    let ticks: Vec<(f64, String)> = sizes.iter().map(|&s| (s as f64, size_label(s))).collect();
    let chart = plot::log_log_lines(
        &format!(
            "Round-trip time on one host ({}), reliable keep-last 1",
            pace_text(pace)
        ),
        "payload size (log scale)",
        "round-trip time (us, log scale)",
        &ticks,
        &lines,
    )?;
    plot::write_svg(path, &chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, kind: Kind, observed: Option<&str>, p50: &[(usize, f64)]) -> Series {
        Series {
            name: name.to_owned(),
            kind,
            requested: observed.map(|_| match name {
                "shm" => "shm",
                "uds" => "uds",
                _ => "intra",
            }),
            observed: observed.map(str::to_owned),
            points: p50
                .iter()
                .map(|&(size, us)| Point {
                    size,
                    summary: Summary::of(&[Duration::from_secs_f64(us / 1e6)]),
                    lost: 0,
                    sender_rss_kib: None,
                    echo_pages: None,
                })
                .collect(),
        }
    }

    #[test]
    fn goals_are_ratios_and_fallbacks_are_not_counted() {
        let all = vec![
            series(
                "shm",
                Kind::Api,
                Some("shm"),
                &[(64, 12.0), (4 << 20, 20.0)],
            ),
            series("uds", Kind::Api, Some("udp"), &[(64, 30.0)]),
            series("futex floor", Kind::Floor, None, &[(64, 10.0)]),
            series("raw UDS floor", Kind::Floor, None, &[(64, 15.0)]),
            series(
                "Cyclone 0.10.2",
                Kind::Peer,
                None,
                &[(64, 24.0), (4 << 20, 10.0)],
            ),
        ];
        let goals = goals(&all);
        let by = |text: &str| goals.iter().find(|g| g.text.starts_with(text)).unwrap();
        let shm = by("shm 64 B p50 <= 1.3x futex");
        assert_eq!(shm.met(), Some(true));
        assert!((shm.ratio.unwrap().0 - 1.2).abs() < 1e-9);
        assert_eq!(by("shm 4 MiB").met(), Some(true));
        // uds fell back to UDP: not evaluated.
        let uds = by("uds 64 B");
        assert_eq!(uds.met(), None);
        assert!(uds.why_not.as_deref().unwrap().contains("fell back to udp"));
        // shm is slower than Cyclone at 4 MiB: 20 / 10.
        let cyclone = by("shm p50 < Cyclone");
        assert_eq!(cyclone.met(), Some(false));
        assert!((cyclone.ratio.unwrap().0 - 2.0).abs() < 1e-9);
        // No transport-only series in this run.
        assert_eq!(by("shm (transport only) 64 B").met(), None);
        // No memcpy floor in this run: no bound.
        assert!(by("shm 4 MiB").bound.is_none());
    }

    #[test]
    fn the_owned_4_mib_goal_carries_the_bound_of_its_two_copies() {
        let all = vec![
            series(
                "shm",
                Kind::Api,
                Some("shm"),
                &[(64, 10.0), (4 << 20, 700.0)],
            ),
            series("memcpy", Kind::Floor, None, &[(64, 0.02), (4 << 20, 285.0)]),
        ];
        let goals = goals(&all);
        let owned = goals
            .iter()
            .find(|g| g.text == "shm 4 MiB p50 <= 2x shm 64 B")
            .unwrap();
        assert_eq!(owned.met(), Some(false));
        // (10 + 2 x 285) / 10.
        let bound = owned.bound.as_ref().unwrap();
        assert!((bound.ratio - 58.0).abs() < 1e-9, "{}", bound.ratio);
        assert!(bound.why.contains("285.0 us"));
        // The bare transport copies nothing: no bound on its goal.
        let bare = goals
            .iter()
            .find(|g| g.text.starts_with("shm (transport only) 4 MiB"))
            .unwrap();
        assert!(bare.bound.is_none());
    }

    #[test]
    fn floor_rounds_are_judged_on_the_median_round() {
        let mut shm = FloorRounds::new("shm".to_owned(), "futex floor");
        shm.rounds = vec![
            (Some(13.0), Some(10.0)), // 1.3
            (Some(8.0), Some(10.0)),  // 0.8
            (None, Some(10.0)),       // no round trip: not a candidate
            (Some(16.0), Some(10.0)), // 1.6
        ];
        let goal = shm.goal();
        assert_eq!(goal.text, "shm 64 B p50 <= 1.3x futex floor");
        // Three ratios: the middle one, the first round.
        let (ratio, limit) = goal.ratio.unwrap();
        assert!((ratio - 1.3).abs() < 1e-9 && limit == FLOOR_LIMIT);
        let rounds = goal.rounds.unwrap();
        assert_eq!(rounds.ratios.len(), 4);
        assert_eq!(rounds.ratios[2], None);
        let median = rounds.median.unwrap();
        assert_eq!((median.index, median.p50_us), (0, 13.0));
        // Even count: the upper middle, the less flattering one.
        shm.rounds.truncate(2);
        assert_eq!(shm.goal().met(), Some(true));
        shm.rounds.push((Some(14.0), Some(10.0)));
        shm.rounds.push((Some(7.0), Some(10.0)));
        let goal = shm.goal();
        assert!((goal.ratio.unwrap().0 - 1.3).abs() < 1e-9);
        // A path that fell back is not judged.
        let mut uds = FloorRounds::new("uds".to_owned(), "raw UDS floor");
        uds.why_not = Some("not measured: uds fell back to udp".to_owned());
        let goal = uds.goal();
        assert_eq!(goal.met(), None);
        assert!(goal.why_not.unwrap().contains("fell back"));
    }

    #[test]
    fn default_sizes_parse() {
        let sizes: Vec<usize> = DEFAULT_SIZES
            .split(',')
            .map(|s| crate::toolkit::units::parse_size(s).unwrap())
            .collect();
        assert_eq!(sizes, transport::DEFAULT_SIZES);
    }
}
