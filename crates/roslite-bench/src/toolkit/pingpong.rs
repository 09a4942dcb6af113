//! roslite's ping-pong through the user API, shared by `bench rtt`'s UDP run and its sweep.
//!
//! A ping is a `std_msgs/UInt8MultiArray` whose first [`SEQ_LEN`] bytes carry its sequence
//! number and whose rest is a fill pattern the ping side checks on the echo ([`read_echo`]).
//! [`Pings`] counts one measured run (the ping in flight, losses, stale echoes, latencies);
//! a [`Chain`] sends them: back to back, each next ping from the echo's callback (as `ddsperf
//! ping` does), or paced by a timer on the ping node ([`pacing_timer`]), as a ROS node
//! publishing at a rate sends them. A series' result per size is a [`Point`].

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Instant, Publisher, QosProfile};

use super::memory::{ProcMemory, TouchedPages};
use super::stats::Summary;

/// Bytes of sequence number at the start of every ping.
pub const SEQ_LEN: usize = 8;
/// The rest of a ping's bytes.
const FILL: u8 = 0xa5;
/// Compared against block by block (a `memcmp`, not a byte loop).
const FILL_BLOCK: [u8; 4096] = [FILL; 4096];
/// A ping whose echo has not arrived by then is lost.
pub const ECHO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the ping side waits for the pong side to be discovered and matched.
pub const MATCH_TIMEOUT: Duration = Duration::from_secs(30);
/// The topics of the pings and of their echoes.
pub const PING_TOPIC: &str = "roslite_bench/rtt/ping";
pub const PONG_TOPIC: &str = "roslite_bench/rtt/pong";

/// The ping-pong's QoS on both topics.
pub fn qos() -> QosProfile {
    // Reliable, volatile, keep-last 1: as ddsperf's ping/pong endpoints.
    QosProfile::keep_last(1)
}

/// What the ping side's subscription saw last.
#[derive(Clone, Copy)]
pub struct Echo {
    pub at: Instant,
    pub seq: u64,
    pub len: usize,
    pub intact: bool,
}

impl Echo {
    /// Reads an echo that arrived `at` (its callback's start).
    pub fn of(at: Instant, data: &[u8]) -> Self {
        let (seq, intact) = read_echo(data);
        Self {
            at,
            seq,
            len: data.len(),
            intact,
        }
    }
}

/// The count of one measured run of pings: the one in flight and since when, how many are
/// left to send, and what came back. Shared by the chains (UDP run and the sweep) and the
/// sweep's loan series, which send their pings differently.
pub struct Pings {
    /// The sequence number of the ping in flight (or last sent) and when it was sent.
    pub seq: u64,
    pub start: Instant,
    /// Pings still to send.
    pub left: usize,
    /// Echoes still to discard as warm-up.
    warmup: usize,
    pub latencies: Vec<Duration>,
    /// Awaited echoes received, and pings given up on.
    pub echoed: usize,
    pub lost: usize,
    /// The first corrupted echo, if any.
    pub error: Option<String>,
    pub stale: usize,
    /// The ping in flight has not been echoed yet.
    in_flight: bool,
}

impl Pings {
    /// `total` pings numbered from `first_seq`, the first `warmup` echoes not timed.
    pub fn new(first_seq: u64, total: usize, warmup: usize) -> Self {
        Self {
            // `number_next` numbers the first ping `first_seq`.
            seq: first_seq.wrapping_sub(1),
            start: Instant::monotonic_now(),
            left: total,
            warmup,
            latencies: Vec::with_capacity(total.saturating_sub(warmup)),
            echoed: 0,
            lost: 0,
            error: None,
            stale: 0,
            in_flight: false,
        }
    }

    /// Numbers the next ping, in flight from now on; the caller stamps `start` and sends it.
    pub fn number_next(&mut self) -> u64 {
        self.seq = self.seq.wrapping_add(1);
        self.in_flight = true;
        self.seq
    }

    /// A timer tick: a ping still not echoed is given up on; the number of the next ping to
    /// send, if any is left.
    pub fn tick(&mut self) -> Option<u64> {
        if std::mem::take(&mut self.in_flight) {
            self.lost += 1;
        }
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.number_next())
    }

    /// The ping just numbered could not be sent: it is lost.
    pub fn unsent(&mut self) {
        self.in_flight = false;
        self.lost += 1;
    }

    /// An echo of ping `seq` that arrived `at`; returns whether it was the awaited one. An
    /// echo of another ping, or a second one, is stale; an awaited one that is not `usable`
    /// (for the loan series, not through shared memory) is lost.
    pub fn echo(&mut self, seq: u64, at: Instant, usable: bool) -> bool {
        if seq != self.seq || !std::mem::take(&mut self.in_flight) {
            self.stale += 1;
            return false;
        }
        if !usable {
            self.lost += 1;
        } else if self.warmup > 0 {
            self.echoed += 1;
            self.warmup -= 1;
        } else {
            self.echoed += 1;
            self.latencies.push(at - self.start);
        }
        true
    }

    /// Every ping echoed or given up on.
    pub fn is_done(&self) -> bool {
        self.left == 0 && !self.in_flight
    }
}

/// A wall timer on `node` that runs `tick` on the state in `slot` every `period` and wakes
/// the slot's waiter when `tick` says the run is over: pings sent from the node's own executor,
/// as a ROS node publishing at a rate sends them.
pub fn pacing_timer<S: Send + 'static>(
    node: &roslite::Node,
    period: Duration,
    slot: &Arc<(Mutex<S>, Condvar)>,
    mut tick: impl FnMut(&mut S) -> bool + Send + 'static,
) -> anyhow::Result<roslite::Timer> {
    let slot = slot.clone();
    Ok(node.create_wall_timer(period, move || {
        let (lock, ready) = &*slot;
        if tick(&mut lock.lock().unwrap_or_else(PoisonError::into_inner)) {
            ready.notify_all();
        }
    })?)
}

/// A chain of measured pings of one message, driven by the echo callback (the UDP run of
/// `bench rtt`, and the sweep's back-to-back mode), or by a timer ([`Self::paced`]).
pub struct Chain {
    message: Arc<UInt8MultiArray>,
    pub pings: Pings,
    /// Paced by a timer ([`Self::on_tick`]) instead of sending each next ping from the echo.
    paced: bool,
    /// Paced: the warm-up pings, and how many pings the timer has sent.
    warmup: usize,
    sent: usize,
    /// Paced, when asked for ([`Self::counting_echo_pages`]): the echo process's pages touched
    /// per warm-up ping.
    pub echo_pages: Option<TouchedPages>,
}

impl Chain {
    /// `total` pings of `size` bytes numbered from `first_seq`, the first `warmup` echoes not
    /// counted; nothing is sent before [`Self::send_next`], and `pings.left` counts the pings
    /// after that first one.
    pub fn new(size: usize, first_seq: u64, total: usize, warmup: usize) -> Self {
        let mut pings = Pings::new(first_seq, total, warmup);
        pings.left = total.saturating_sub(1);
        Self {
            message: Arc::new(ping_message(size)),
            pings,
            paced: false,
            warmup,
            sent: 0,
            echo_pages: None,
        }
    }

    /// A chain whose pings a timer sends, one per [`Self::on_tick`]; the first tick sends the
    /// first ping.
    pub fn paced(size: usize, first_seq: u64, total: usize, warmup: usize) -> Self {
        Self {
            message: Arc::new(ping_message(size)),
            pings: Pings::new(first_seq, total, warmup),
            paced: true,
            warmup,
            sent: 0,
            echo_pages: None,
        }
    }

    /// Also counts the pages the echo process `pid` touches per ping, one window per warm-up
    /// ping, each opened right before the ping goes out (see [`TouchedPages`]): clearing the
    /// accessed bits flushes the echo's TLB, so no measured ping is disturbed.
    pub fn counting_echo_pages(mut self, pid: u32) -> Self {
        self.echo_pages = Some(TouchedPages::of(pid));
        self
    }

    /// A timer tick of a paced chain: a ping still not echoed is given up on, and the next one
    /// goes out. Returns whether every ping has been echoed or given up on.
    pub fn on_tick(&mut self, publisher: &Publisher<UInt8MultiArray>) -> bool {
        if self.pings.tick().is_some() {
            if let Some(pages) = &mut self.echo_pages {
                pages.before_ping(self.sent, self.warmup);
            }
            self.sent += 1;
            if self.publish(publisher).is_err() {
                self.pings.unsent();
            }
        }
        self.is_done()
    }

    /// Every ping echoed or given up on.
    pub fn is_done(&self) -> bool {
        self.pings.is_done()
    }

    /// Stamps the next sequence number into the message and publishes it.
    pub fn send_next(&mut self, publisher: &Publisher<UInt8MultiArray>) -> anyhow::Result<()> {
        self.pings.number_next();
        self.publish(publisher)
    }

    /// Stamps the ping in flight's number into the message and publishes it.
    fn publish(&mut self, publisher: &Publisher<UInt8MultiArray>) -> anyhow::Result<()> {
        let data = Arc::make_mut(&mut self.message).data.to_mut();
        data[..SEQ_LEN].copy_from_slice(&self.pings.seq.to_le_bytes());
        self.pings.start = Instant::monotonic_now();
        publisher.publish_shared(self.message.clone())?;
        Ok(())
    }

    /// Handles an echo; returns whether it was the awaited one.
    pub fn on_echo(&mut self, echo: Echo, publisher: &Publisher<UInt8MultiArray>) -> bool {
        if echo.seq != self.pings.seq {
            self.pings.stale += 1;
            return false;
        }
        let size = self.message.data.len();
        if (echo.len != size || !echo.intact) && self.pings.error.is_none() {
            self.pings.error = Some(format!(
                "the echo of a {size}-byte ping came back as {} bytes{}",
                echo.len,
                if echo.intact { "" } else { ", corrupted" }
            ));
        }
        if !self.pings.echo(echo.seq, echo.at, true) {
            return false; // a second echo of one ping
        }
        if self.paced {
            return true;
        }
        if self.pings.left > 0 {
            self.pings.left -= 1;
            // Ignoring an error: the measuring thread sees no progress and counts a loss.
            let _ = self.send_next(publisher);
        }
        true
    }
}

/// A ping of `size` bytes: the sequence number goes in its first bytes, the rest is `FILL`.
pub fn ping_message(size: usize) -> UInt8MultiArray {
    UInt8MultiArray {
        data: vec![FILL; size].into(),
        ..Default::default()
    }
}

/// The number of a run's first ping: this process's id times 2^32, so that two benchmarks
/// running at the same time in the same domains (their pings and echoes then reach each
/// other) number theirs in disjoint ranges, and each takes the other's echoes for stale ones
/// instead of its own. Two such runs once failed with "the echo of a 256-byte ping came back
/// as 64 bytes": both numbered from 1.
pub fn first_ping_number() -> u64 {
    u64::from(std::process::id()) << 32
}

/// An echo's sequence number (`u64::MAX` if too short) and whether the rest is intact.
/// Block by block (a memcmp): a byte loop over 4 MiB would hold the sample, and a core, for
/// milliseconds while the next ping is under way.
pub fn read_echo(data: &[u8]) -> (u64, bool) {
    let seq = data
        .get(..SEQ_LEN)
        .and_then(|b| b.try_into().ok())
        .map_or(u64::MAX, u64::from_le_bytes);
    let intact = data.len() >= SEQ_LEN
        && data[SEQ_LEN..]
            .chunks(FILL_BLOCK.len())
            .all(|chunk| chunk == &FILL_BLOCK[..chunk.len()]);
    (seq, intact)
}

/// One size of one series.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub size: usize,
    pub summary: Option<Summary>,
    /// Pings without an echo in time (for the loan series, also those echoed through a loan
    /// that was not shared memory).
    pub lost: usize,
    /// The sending process's VmRSS after the size, when known.
    pub sender_rss_kib: Option<u64>,
    /// At a rate: the echo process's pages touched per ping (median over the warm-up pings,
    /// see [`TouchedPages`]), where counted.
    pub echo_pages: Option<u64>,
}

impl Point {
    /// The point of a size just measured in this (the sending) process.
    pub fn measured(size: usize, latencies: &[Duration], lost: usize) -> Self {
        Self {
            size,
            summary: Summary::of(latencies),
            lost,
            sender_rss_kib: ProcMemory::of(None).ok().map(|m| m.vm_rss_kib),
            echo_pages: None,
        }
    }
}

/// Waits on `cell`'s condition variable until `take` finds what it waits for in the guarded
/// state, or `deadline` passes (`None`).
pub fn await_echo<S, T>(
    cell: &(Mutex<S>, Condvar),
    deadline: std::time::Instant,
    mut take: impl FnMut(&mut S) -> Option<T>,
) -> Option<T> {
    let (lock, ready) = cell;
    let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if let Some(found) = take(&mut slot) {
            return Some(found);
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return None;
        }
        slot = ready
            .wait_timeout(slot, deadline - now)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

#[cfg(test)]
mod tests {
    use roslite::{Context, ContextOptions, NetworkMode};

    use super::*;

    fn publisher() -> (Context, Publisher<UInt8MultiArray>) {
        let ctx = Context::new(ContextOptions {
            network: NetworkMode::Off,
            ..Default::default()
        })
        .expect("context");
        let node = ctx.create_node("chain_test").expect("node");
        let publisher = node
            .create_publisher::<UInt8MultiArray>("chain_test", qos())
            .expect("publisher");
        (ctx, publisher)
    }

    fn echo_of(chain: &Chain, at: Instant) -> Echo {
        Echo {
            at,
            seq: chain.pings.seq,
            len: chain.message.data.len(),
            intact: true,
        }
    }

    /// A paced chain: each tick sends one ping, a ping not echoed by the next tick is lost,
    /// an echo of an older ping or a second echo of one is stale, and the chain is done once
    /// every ping was echoed or given up on.
    #[test]
    fn a_paced_chain_counts_echoes_losses_and_stale_echoes() {
        let (_ctx, publisher) = publisher();
        let mut chain = Chain::paced(64, 10, 4, 1);
        assert!(!chain.is_done());
        assert!(!chain.on_tick(&publisher)); // ping 10 out
        assert_eq!(chain.pings.seq, 10);
        let warm = echo_of(&chain, chain.pings.start + Duration::from_micros(50));
        assert!(chain.on_echo(warm, &publisher)); // warm-up, not timed
        assert!(!chain.on_echo(echo_of(&chain, chain.pings.start), &publisher)); // twice: stale
        assert!(!chain.on_tick(&publisher)); // ping 11 out, never echoed
        assert!(!chain.on_tick(&publisher)); // 11 lost, ping 12 out
        let late = Echo {
            seq: 11,
            ..echo_of(&chain, chain.pings.start)
        };
        assert!(!chain.on_echo(late, &publisher)); // 11 came too late: stale
        let timed = echo_of(&chain, chain.pings.start + Duration::from_micros(80));
        assert!(chain.on_echo(timed, &publisher));
        assert!(!chain.on_tick(&publisher)); // ping 13 out, the last
        assert!(!chain.is_done());
        assert!(chain.on_tick(&publisher)); // 13 lost: done, nothing more sent
        assert_eq!(chain.pings.seq, 13);
        assert_eq!(
            (chain.pings.echoed, chain.pings.lost, chain.pings.stale),
            (2, 2, 2)
        );
        assert_eq!(chain.pings.latencies, [Duration::from_micros(80)]);
        assert!(chain.pings.error.is_none());
        assert!(chain.echo_pages.is_none());
    }

    /// Counting the echo's pages (here this process's own): one window per warm-up ping, each
    /// opened right before its ping; the measured pings are left alone.
    #[test]
    fn a_paced_chain_counts_echo_pages_over_its_warm_up_pings_only() {
        let (_ctx, publisher) = publisher();
        let mut chain = Chain::paced(64, 1, 6, 3).counting_echo_pages(std::process::id());
        // Pages never touched before, so that each tick's are counted whatever the TLB holds.
        let mut memory = vec![0u8; 6 * 64 * 4096];
        for tick in 0..6 {
            assert!(!chain.on_tick(&publisher) || tick == 5);
            let echo = echo_of(&chain, chain.pings.start + Duration::from_micros(10));
            assert!(chain.on_echo(echo, &publisher));
            for page in tick * 64..(tick + 1) * 64 {
                memory[page * 4096] = 1;
            }
            std::hint::black_box(&mut memory);
            let windows = chain.echo_pages.as_ref().map(|p| p.counts().len());
            // Window k closes when ping k+1 goes out; the third when the first measured does.
            assert_eq!(windows, Some(tick.min(3)), "after tick {tick}");
        }
        let pages = chain.echo_pages.as_ref().and_then(TouchedPages::median);
        assert!(pages.is_some_and(|p| p >= 64), "{pages:?}");
        assert_eq!(chain.pings.latencies.len(), 3);
    }
}
