//! The sweep's series through the user API: a ping node in this process and a pong node in
//! another (the hidden `roslite bench rtt-sweep-pong`) or in this one (`intra`); the loaned
//! series is [`super::loan`]'s.

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

use super::loan;
use super::model::{Kind, Mode, Pace, Route, Series};
use crate::toolkit::context::{
    localhost_context, localhost_context_with, remote_publisher_path, spin_on_thread,
};
use crate::toolkit::memory::TouchedPages;
use crate::toolkit::pingpong::{
    await_echo, first_ping_number, pacing_timer, ping_message, qos, Chain, Echo, Point,
    ECHO_TIMEOUT, MATCH_TIMEOUT, PING_TOPIC, PONG_TOPIC, SEQ_LEN,
};
use crate::toolkit::process::{die_with_parent, self_command, Helper};

/// The hidden `roslite bench rtt-sweep-pong`.
#[derive(clap::Args)]
pub struct PongArgs {
    #[arg(long)]
    pub(super) domain: u32,
}

/// Creates the echoing node: every ping goes straight back from the subscription callback.
///
/// The callback takes the shape a relay node would for where it runs. In the ping's own process
/// the ping side still holds the message it sent, so the echo shares it (`Arc` in,
/// `publish_shared` out: nothing copied at any size). In another process the echo owns the
/// decoded message outright, so it takes it by value and publishes it (`publish`: no `Arc` is
/// made for it).
pub(super) fn echo_node(
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
pub(super) struct PingState {
    /// The last echo outside a chain, for the measuring thread (the probes that wait for the
    /// match).
    pub(super) echo: Option<Echo>,
    /// The pings being measured: sent by the echo callback itself (back to back) or by the
    /// ping node's timer (at a rate).
    pub(super) chain: Option<Chain>,
}

pub(super) type EchoSlot = Arc<(Mutex<PingState>, Condvar)>;

/// The ping side of one path.
pub(super) struct ApiSession {
    // Field order is drop order.
    pub(super) publisher: Arc<Publisher<UInt8MultiArray>>,
    pub(super) _subscription: Subscription<UInt8MultiArray>,
    pub(super) _pacer: Option<roslite::Timer>,
    pub(super) _echo_subscription: Option<Subscription<UInt8MultiArray>>,
    pub(super) echo: EchoSlot,
    pub(super) ctx: Context,
    pub(super) spinners: Vec<JoinHandle<()>>,
    pub(super) pong: Option<Helper>,
    pub(super) next_seq: u64,
}

impl ApiSession {
    /// With `period`, a wall timer on the ping node sends the pings of a paced chain
    /// ([`Self::measure_paced`]), as a ROS node publishing at a rate would.
    pub(super) fn start(
        path: Route,
        domain: u32,
        period: Option<Duration>,
    ) -> anyhow::Result<Self> {
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
    pub(super) fn round_trip(
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

    pub(super) fn wait_for_match(&mut self) -> anyhow::Result<()> {
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
    pub(super) fn observed_path(&self) -> String {
        remote_publisher_path(&self.ctx, PONG_TOPIC)
    }

    /// Back to back: each ping after the first is published by the echo callback of the one
    /// before (as `ddsperf ping` does), so a round trip wakes the same two threads as the
    /// floors' ping-pong do; this thread only waits for the chain to end and gives up on
    /// lost pings.
    pub(super) fn measure_chained(&mut self, size: usize, pace: Pace) -> anyhow::Result<Point> {
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
    pub(super) fn finish(&mut self, size: usize, chain: Chain) -> anyhow::Result<Point> {
        self.next_seq = chain.pings.seq.wrapping_add(1);
        if let Some(error) = chain.pings.error {
            bail!(error);
        }
        Ok(Point {
            echo_pages: chain.echo_pages.as_ref().and_then(TouchedPages::median),
            ..Point::measured(size, &chain.pings.latencies, chain.pings.lost)
        })
    }

    pub(super) fn measure(&mut self, size: usize, pace: Pace) -> anyhow::Result<Point> {
        match pace.mode {
            Mode::BackToBack => self.measure_chained(size, pace),
            Mode::Rate => self.measure_paced(size, pace),
        }
    }

    /// At a rate: the ping node's timer sends each ping and the echo callback, on the same
    /// executor, takes the time; a ping not echoed by the next tick is lost. This thread only
    /// waits for the chain to end.
    pub(super) fn measure_paced(&mut self, size: usize, pace: Pace) -> anyhow::Result<Point> {
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

pub(super) fn measure_api(
    path: Route,
    domain: u32,
    sizes: &[usize],
    pace: Pace,
) -> anyhow::Result<Series> {
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
