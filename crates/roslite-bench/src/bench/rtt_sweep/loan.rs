//! `roslite bench rtt --transport shm-loan`: the sweep's ping-pong over shared memory with
//! loaned messages on both sides (`Publisher::loan`), so the figures are the cost of the
//! zero-copy transfer itself, which should not grow with the payload.
//!
//! Ping and pong each loan a `std_msgs/UInt8MultiArray` of the size with its `data` reserved,
//! write only a 9-byte header into the chunk in place (the ping's sequence number, and a byte
//! saying whether the loan was shared memory), and leave the rest of the payload as the chunk
//! holds it: nothing writes, copies or checks those bytes. The round trip runs from the ping's
//! `loan` call to the start of its subscription callback for the echo, so it includes both
//! sides' loans. The pong is a second process (the hidden `roslite bench rtt-loan-pong`);
//! both use `ROSLITE_TRANSPORTS=shm` and LOCALHOST discovery in a domain of their own, like the
//! sweep's `shm` series, and an echo whose loan was not in shared memory counts as lost. At a
//! rate, a timer on the ping node sends the pings, as in the sweep's other series; back to
//! back, the measuring thread sends each ping once the last echo is in.

use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::cdr::Seq;
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Context, Executor, Instant, LocalTransports, Publisher, QosProfile, Subscription};

use crate::toolkit::context::{
    localhost_context, localhost_context_with, remote_publisher_path, spin_on_thread,
};
use crate::toolkit::pingpong::{await_echo, first_ping_number, pacing_timer, Pings, Point};
use crate::toolkit::process::{die_with_parent, self_command, Helper};

const PING_TOPIC: &str = "roslite_bench/rtt_loan/ping";
const PONG_TOPIC: &str = "roslite_bench/rtt_loan/pong";
/// Sequence number (8 bytes, little endian), then 1 if the sender's loan was shared memory.
const HEADER_LEN: usize = 9;
const ECHO_TIMEOUT: Duration = Duration::from_secs(5);
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);
/// Both processes carry user topics over shared memory only (UDP stays on for discovery).
const TRANSPORTS: &str = "shm";

fn qos() -> QosProfile {
    QosProfile::keep_last(1)
}

/// The hidden `roslite bench rtt-loan-pong`.
#[derive(clap::Args)]
pub struct PongArgs {
    #[arg(long)]
    domain: u32,
}

/// A loaned message of `size` payload bytes carrying `seq` in its header, the rest untouched.
fn loaned_message(
    publisher: &Publisher<UInt8MultiArray>,
    size: usize,
    seq: u64,
) -> anyhow::Result<roslite::LoanedMessage<'_, UInt8MultiArray>> {
    let mut loan = publisher.loan(UInt8MultiArray {
        data: Seq::reserved(size),
        ..Default::default()
    })?;
    let in_shared_memory = loan.is_shared_memory();
    let data = loan.sequence_mut::<u8>(0)?;
    let header = data
        .get_mut(..HEADER_LEN)
        .context("internal bug: a payload shorter than the header")?;
    header[..8].copy_from_slice(&seq.to_le_bytes());
    header[8] = u8::from(in_shared_memory);
    Ok(loan)
}

fn read_header(data: &[u8]) -> Option<(u64, bool)> {
    let header = data.get(..HEADER_LEN)?;
    let seq = u64::from_le_bytes(header[..8].try_into().ok()?);
    Some((seq, header[8] == 1))
}

/// The pong process: echoes every ping through a loan of the same size until killed.
pub fn pong(args: &PongArgs) -> anyhow::Result<()> {
    die_with_parent();
    // The path under test comes in `ROSLITE_TRANSPORTS`, which every context honours.
    let ctx = localhost_context(args.domain)?;
    let node = ctx.create_node("roslite_bench_rtt_loan_pong")?;
    let publisher = node.create_publisher::<UInt8MultiArray>(PONG_TOPIC, qos())?;
    let _subscription =
        node.create_subscription(PING_TOPIC, qos(), move |ping: &UInt8MultiArray| {
            let Some((seq, _)) = read_header(&ping.data) else {
                return;
            };
            // Ignoring an error: the ping side counts a missing echo as lost.
            if let Ok(loan) = loaned_message(&publisher, ping.data.len(), seq) {
                let _ = loan.publish();
            }
        })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}

#[derive(Clone, Copy)]
struct Echo {
    at: Instant,
    seq: u64,
    len: usize,
    shared_memory: bool,
}

type EchoSlot = Arc<(Mutex<Option<Echo>>, Condvar)>;

/// Pings a timer sends at the sweep's rate (the ping node's own executor sends each ping and
/// takes each echo, as a ROS node publishing on a timer would).
struct Paced {
    size: usize,
    pings: Pings,
    /// Whether the loan of the ping in flight was shared memory.
    in_shared_memory: bool,
}

impl Paced {
    /// A timer tick: a ping still not echoed is lost, and the next one goes out.
    fn on_tick(&mut self, publisher: &Publisher<UInt8MultiArray>) {
        let Some(seq) = self.pings.tick() else {
            return;
        };
        self.pings.start = Instant::monotonic_now();
        let sent = loaned_message(publisher, self.size, seq).and_then(|loan| {
            let in_shared_memory = loan.is_shared_memory();
            loan.publish()?;
            Ok(in_shared_memory)
        });
        match sent {
            Ok(in_shared_memory) => self.in_shared_memory = in_shared_memory,
            Err(e) => {
                self.pings.unsent();
                self.pings
                    .error
                    .get_or_insert_with(|| format!("publishing a ping: {e:#}"));
            }
        }
    }

    /// An echo: the awaited one is timed if both loans were shared memory, else lost.
    fn on_echo(&mut self, echo: &Echo) {
        let usable = self.in_shared_memory && echo.shared_memory;
        if self.pings.echo(echo.seq, echo.at, usable) && echo.len != self.size {
            let size = self.size;
            self.pings.error.get_or_insert_with(|| {
                format!(
                    "the echo of a {size}-byte ping came back as {} bytes",
                    echo.len
                )
            });
        }
    }
}

type PacedSlot = Arc<(Mutex<Option<Paced>>, Condvar)>;

/// The ping side.
struct Session {
    // Field order is drop order.
    publisher: Arc<Publisher<UInt8MultiArray>>,
    _subscription: Subscription<UInt8MultiArray>,
    _pacer: Option<roslite::Timer>,
    paced: PacedSlot,
    echo: EchoSlot,
    ctx: Context,
    spinner: Option<JoinHandle<()>>,
    pong: Helper,
    next_seq: u64,
}

impl Session {
    /// With `period`, a wall timer on the ping node sends the pings of [`Self::measure_paced`].
    fn start(domain: u32, period: Option<Duration>) -> anyhow::Result<Self> {
        let pong = Helper::spawn(
            "the pong process (roslite bench rtt-loan-pong)",
            self_command(&["bench", "rtt-loan-pong", "--domain", &domain.to_string()])?
                .env(LocalTransports::ENV, TRANSPORTS)
                .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        )?;
        let ctx = localhost_context_with(domain, LocalTransports::parse(TRANSPORTS)?)?;
        let node = ctx.create_node("roslite_bench_rtt_loan_ping")?;
        let publisher = Arc::new(node.create_publisher::<UInt8MultiArray>(PING_TOPIC, qos())?);
        let echo: EchoSlot = Arc::new((Mutex::new(None), Condvar::new()));
        let paced: PacedSlot = Arc::new((Mutex::new(None), Condvar::new()));
        let (slot, paced_slot) = (echo.clone(), paced.clone());
        let subscription =
            node.create_subscription(PONG_TOPIC, qos(), move |msg: &UInt8MultiArray| {
                let at = Instant::monotonic_now();
                let (seq, shared_memory) = read_header(&msg.data).unwrap_or((u64::MAX, false));
                let echo = Echo {
                    at,
                    seq,
                    len: msg.data.len(),
                    shared_memory,
                };
                let (lock, ready) = &*paced_slot;
                if let Some(paced) = lock.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
                    paced.on_echo(&echo);
                    if paced.pings.is_done() {
                        ready.notify_all();
                    }
                    return;
                }
                let (lock, ready) = &*slot;
                *lock.lock().unwrap_or_else(PoisonError::into_inner) = Some(echo);
                ready.notify_all();
            })?;
        let pacer = period
            .map(|period| {
                let publisher = publisher.clone();
                pacing_timer(&node, period, &paced, move |paced: &mut Option<Paced>| {
                    paced
                        .as_mut()
                        .filter(|p| !p.pings.is_done())
                        .is_some_and(|p| {
                            p.on_tick(&publisher);
                            p.pings.is_done()
                        })
                })
            })
            .transpose()?;
        let spinner = Some(spin_on_thread(&ctx, node));
        Ok(Self {
            publisher,
            _subscription: subscription,
            _pacer: pacer,
            paced,
            echo,
            ctx,
            spinner,
            pong,
            next_seq: first_ping_number(),
        })
    }

    /// One ping of `size` bytes; `Ok(None)` if no echo within `timeout`, or if either side's
    /// loan was not shared memory (`require_shared_memory`; off while the link comes up).
    fn round_trip(
        &mut self,
        size: usize,
        timeout: Duration,
        require_shared_memory: bool,
    ) -> anyhow::Result<Option<Duration>> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let start = Instant::monotonic_now();
        let loan = loaned_message(&self.publisher, size, seq)?;
        let ping_in_shared_memory = loan.is_shared_memory();
        loan.publish()?;
        let deadline = std::time::Instant::now() + timeout;
        let Some(echo) = await_echo(&self.echo, deadline, |slot| {
            slot.take().filter(|e| e.seq == seq)
        }) else {
            return Ok(None);
        };
        anyhow::ensure!(
            echo.len == size,
            "the echo of a {size}-byte ping came back as {} bytes",
            echo.len
        );
        let zero_copy = ping_in_shared_memory && echo.shared_memory;
        Ok((zero_copy || !require_shared_memory).then(|| echo.at - start))
    }

    /// Pings until one comes back through shared-memory loans on both sides.
    fn wait_for_match(&mut self) -> anyhow::Result<()> {
        let start = Instant::monotonic_now();
        while self
            .round_trip(64, Duration::from_millis(200), true)?
            .is_none()
        {
            self.pong.check_running()?;
            if Instant::monotonic_now() - start > MATCH_TIMEOUT {
                bail!("no echo through shared-memory loans on both sides within {MATCH_TIMEOUT:?}");
            }
        }
        Ok(())
    }

    /// The path the remote pong publisher's samples take to this context.
    fn observed_path(&self) -> String {
        remote_publisher_path(&self.ctx, PONG_TOPIC)
    }

    fn measure(
        &mut self,
        size: usize,
        count: usize,
        warmup: usize,
        period: Option<Duration>,
    ) -> anyhow::Result<Point> {
        if let Some(period) = period {
            return self.measure_paced(size, count, warmup, period);
        }
        let mut latencies = Vec::with_capacity(count);
        let mut lost = 0;
        for i in 0..warmup + count {
            match self.round_trip(size, ECHO_TIMEOUT, true)? {
                Some(rtt) if i >= warmup => latencies.push(rtt),
                Some(_) => {}
                None => {
                    lost += 1;
                    self.pong.check_running()?;
                }
            }
        }
        Ok(Point::measured(size, &latencies, lost))
    }

    /// At a rate: the ping node's timer sends each ping and its echo callback takes the time;
    /// a ping not echoed by the next tick is lost. This thread only waits for the end.
    fn measure_paced(
        &mut self,
        size: usize,
        count: usize,
        warmup: usize,
        period: Duration,
    ) -> anyhow::Result<Point> {
        let total = warmup + count;
        let (lock, ready) = &*self.paced;
        let mut paced = lock.lock().unwrap_or_else(PoisonError::into_inner);
        // The first ping is numbered `next_seq + 1`, after the probes of the match.
        *paced = Some(Paced {
            size,
            pings: Pings::new(self.next_seq + 1, total, warmup),
            in_shared_memory: false,
        });
        let limit = period * (total as u32 + 10) + ECHO_TIMEOUT;
        let start = std::time::Instant::now();
        while !paced.as_ref().is_some_and(|p| p.pings.is_done()) {
            anyhow::ensure!(
                start.elapsed() < limit,
                "the ping timer did not finish {total} pings within {limit:?}"
            );
            self.pong.check_running()?;
            paced = ready
                .wait_timeout(paced, Duration::from_millis(200))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let done = paced.take().context("internal bug: no paced run")?.pings;
        drop(paced);
        self.next_seq = done.seq + 1;
        if let Some(error) = done.error {
            bail!(error);
        }
        Ok(Point::measured(size, &done.latencies, done.lost))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.ctx.shutdown();
        if let Some(spinner) = self.spinner.take() {
            let _ = spinner.join();
        }
    }
}

/// Runs the loaned ping-pong for every size: `count` round trips after `warmup`, sent by a
/// timer of `period` on the ping node, or back to back (each ping after the last echo)
/// without. Returns the path the pair took and one point per size.
pub fn measure(
    domain: u32,
    sizes: &[usize],
    count: usize,
    warmup: usize,
    period: Option<Duration>,
) -> anyhow::Result<(String, Vec<Point>)> {
    if let Some(&small) = sizes.iter().find(|&&s| s < HEADER_LEN) {
        bail!("shm-loan needs payloads of at least {HEADER_LEN} bytes (its header), not {small}");
    }
    let mut session = Session::start(domain, period).context("starting the shm-loan ping-pong")?;
    session.wait_for_match().context("shm-loan ping-pong")?;
    let observed = session.observed_path();
    let mut points = Vec::new();
    for &size in sizes {
        points.push(session.measure(size, count, warmup, period)?);
    }
    Ok((observed, points))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_round_trips_and_short_payloads_have_none() {
        let mut data = vec![0xee; 32];
        data[..8].copy_from_slice(&42u64.to_le_bytes());
        data[8] = 1;
        assert_eq!(read_header(&data), Some((42, true)));
        data[8] = 0;
        assert_eq!(read_header(&data), Some((42, false)));
        assert_eq!(read_header(&data[..HEADER_LEN - 1]), None);
    }
}
