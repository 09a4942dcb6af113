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
//! sweep's `shm` series, and an echo whose loan was not in shared memory counts as lost.

use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::cdr::Seq;
use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{
    Context, Executor, Instant, LocalTransports, Node, Publisher, QosProfile, Subscription,
};

use super::rtt::{self, die_with_parent, self_command, Helper, ProcMemory};
use super::rtt_sweep::Point;
use crate::stats::Summary;

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
    let ctx = rtt::localhost_context(args.domain)?;
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

/// The ping side.
struct Session {
    // Field order is drop order.
    publisher: Publisher<UInt8MultiArray>,
    _subscription: Subscription<UInt8MultiArray>,
    echo: EchoSlot,
    ctx: Context,
    spinner: Option<JoinHandle<()>>,
    pong: Helper,
    next_seq: u64,
}

fn spin_on_thread(ctx: &Context, node: Node) -> JoinHandle<()> {
    let ctx = ctx.clone();
    std::thread::spawn(move || {
        let executor = Executor::new(&ctx);
        executor.add_node(&node);
        executor.spin();
    })
}

impl Session {
    fn start(domain: u32) -> anyhow::Result<Self> {
        let pong = Helper::spawn(
            "the pong process (roslite bench rtt-loan-pong)",
            self_command(&["bench", "rtt-loan-pong", "--domain", &domain.to_string()])?
                .env(LocalTransports::ENV, TRANSPORTS)
                .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                .stdin(Stdio::null())
                .stdout(Stdio::null()),
        )?;
        let ctx = rtt::localhost_context_with(domain, LocalTransports::parse(TRANSPORTS)?)?;
        let node = ctx.create_node("roslite_bench_rtt_loan_ping")?;
        let publisher = node.create_publisher::<UInt8MultiArray>(PING_TOPIC, qos())?;
        let echo: EchoSlot = Arc::new((Mutex::new(None), Condvar::new()));
        let slot = echo.clone();
        let subscription =
            node.create_subscription(PONG_TOPIC, qos(), move |msg: &UInt8MultiArray| {
                let at = Instant::monotonic_now();
                let (seq, shared_memory) = read_header(&msg.data).unwrap_or((u64::MAX, false));
                let (lock, ready) = &*slot;
                *lock.lock().unwrap_or_else(PoisonError::into_inner) = Some(Echo {
                    at,
                    seq,
                    len: msg.data.len(),
                    shared_memory,
                });
                ready.notify_all();
            })?;
        let spinner = Some(spin_on_thread(&ctx, node));
        Ok(Self {
            publisher,
            _subscription: subscription,
            echo,
            ctx,
            spinner,
            pong,
            next_seq: 1,
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
        let Some(echo) = super::rtt_sweep::await_echo(&self.echo, deadline, |slot| {
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
        super::rtt_sweep::pong_path(&self.ctx, PONG_TOPIC)
    }

    fn measure(
        &mut self,
        size: usize,
        count: usize,
        warmup: usize,
        period: Option<Duration>,
    ) -> anyhow::Result<Point> {
        let mut latencies = Vec::with_capacity(count);
        let mut lost = 0;
        let mut next = std::time::Instant::now();
        for i in 0..warmup + count {
            if let Some(period) = period {
                let now = std::time::Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                }
                next += period;
            }
            match self.round_trip(size, ECHO_TIMEOUT, true)? {
                Some(rtt) if i >= warmup => latencies.push(rtt),
                Some(_) => {}
                None => {
                    lost += 1;
                    self.pong.check_running()?;
                }
            }
        }
        Ok(Point {
            size,
            summary: Summary::of(&latencies),
            lost,
            sender_rss_kib: ProcMemory::of(None).ok().map(|m| m.vm_rss_kib),
        })
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

/// Runs the loaned ping-pong for every size: `count` round trips after `warmup`, paced by
/// `period` (back to back without). Returns the path the pair took and one point per size.
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
    let mut session = Session::start(domain).context("starting the shm-loan ping-pong")?;
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
