//! Deterministic network simulation for tests of the sans-IO state machines (after
//! quinn-proto's `Pair` and smoltcp's netsim).
//!
//! - [`SimRng`]: a tiny seeded PRNG (SplitMix64), so runs are reproducible and this crate needs
//!   no randomness from the OS or from a dependency.
//! - [`SimNetwork`]: datagrams in flight between [`Locator`]s on a virtual clock, with per
//!   direction [`LinkConfig`] (loss, duplication, reordering, latency, jitter). It knows
//!   nothing about RTPS: it only delays, drops and copies bytes.
//! - [`Pair`]: one [`Writer`](crate::Writer) and any number of
//!   [`Reader`](crate::Reader)s wired through a `SimNetwork`, packing `Transmit`s into
//!   datagrams, parsing deliveries with [`parse_message`](crate::parse_message) and
//!   dispatching them to the right `handle_*`. The clock jumps from event to event (the
//!   minimum of every `poll_timeout` and the next delivery), so minutes of protocol time run
//!   in milliseconds.
//!
//! Same seed, same inputs → same outcome, bit for bit: there are no hash maps iterated, no
//! threads and no real time in here.

mod pair;

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::time::Duration;

use crate::instant::Instant;
use crate::types::Locator;

pub use pair::{guid, Pair, SimReader};

/// SplitMix64 (Steele, Lea, Flood 2014): 64 bits of state, passes BigCrush, trivially seeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimRng {
    state: u64,
}

impl SimRng {
    pub fn new(seed: u64) -> Self {
        SimRng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        // 53 random mantissa bits.
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (clamped to `[0, 1]`); draws nothing when `p <= 0`, so a
    /// perfect link consumes no randomness.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }

    /// Uniform in `[0, n)`; 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }

    /// Uniform in `[0, max]` at nanosecond resolution.
    pub fn duration_up_to(&mut self, max: Duration) -> Duration {
        let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(self.below(nanos.saturating_add(1)))
    }
}

/// Behaviour of one direction of a link. Probabilities are per datagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConfig {
    pub loss: f64,
    pub duplicate: f64,
    /// Probability that a datagram is held back long enough for later ones to overtake it.
    pub reorder: f64,
    pub latency: Duration,
    /// Extra delay, uniform in `[0, jitter]`.
    pub jitter: Duration,
}

impl LinkConfig {
    /// No loss, duplication or reordering; 1 ms latency.
    pub const PERFECT: LinkConfig = LinkConfig {
        loss: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
        latency: Duration::from_millis(1),
        jitter: Duration::ZERO,
    };

    /// [`LinkConfig::PERFECT`] with a loss probability.
    pub fn lossy(loss: f64) -> Self {
        LinkConfig {
            loss,
            ..Self::PERFECT
        }
    }

    /// Loss plus 5 % duplication, 5 % reordering and 0.5 ms jitter: a hostile LAN.
    pub fn rough(loss: f64) -> Self {
        LinkConfig {
            loss,
            duplicate: 0.05,
            reorder: 0.05,
            latency: Duration::from_millis(1),
            jitter: Duration::from_micros(500),
        }
    }
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self::PERFECT
    }
}

/// Counters of a [`SimNetwork`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetworkStats {
    pub sent: u64,
    pub bytes_sent: u64,
    pub dropped: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub delivered: u64,
}

#[derive(Debug)]
struct InFlight {
    at: Instant,
    /// Send order, to break ties deterministically (FIFO).
    seq: u64,
    from: Locator,
    to: Locator,
    data: Vec<u8>,
}

impl PartialEq for InFlight {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for InFlight {}

impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for InFlight {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// Datagrams in flight on a virtual clock.
#[derive(Debug)]
pub struct SimNetwork {
    rng: SimRng,
    default_link: LinkConfig,
    links: BTreeMap<(Locator, Locator), LinkConfig>,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    stats: NetworkStats,
}

impl SimNetwork {
    /// A network whose links are all [`LinkConfig::PERFECT`] until configured.
    pub fn new(seed: u64) -> Self {
        SimNetwork {
            rng: SimRng::new(seed),
            default_link: LinkConfig::PERFECT,
            links: BTreeMap::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            stats: NetworkStats::default(),
        }
    }

    /// The configuration of every direction without its own.
    pub fn set_default_link(&mut self, link: LinkConfig) {
        self.default_link = link;
    }

    /// The configuration of datagrams sent from `from` to `to`.
    pub fn set_link(&mut self, from: Locator, to: Locator, link: LinkConfig) {
        self.links.insert((from, to), link);
    }

    pub fn link(&self, from: Locator, to: Locator) -> LinkConfig {
        self.links
            .get(&(from, to))
            .copied()
            .unwrap_or(self.default_link)
    }

    pub fn stats(&self) -> NetworkStats {
        self.stats
    }

    /// Datagrams sent and not yet delivered or dropped.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// The network's random source, for tests that need more randomness.
    pub fn rng(&mut self) -> &mut SimRng {
        &mut self.rng
    }

    /// Hands a datagram to the network at `now`.
    pub fn send(&mut self, from: Locator, to: Locator, datagram: Vec<u8>, now: Instant) {
        let link = self.link(from, to);
        self.stats.sent = self.stats.sent.saturating_add(1);
        let len = u64::try_from(datagram.len()).unwrap_or(u64::MAX);
        self.stats.bytes_sent = self.stats.bytes_sent.saturating_add(len);
        if self.rng.chance(link.loss) {
            self.stats.dropped = self.stats.dropped.saturating_add(1);
            return;
        }
        if self.rng.chance(link.duplicate) {
            self.stats.duplicated = self.stats.duplicated.saturating_add(1);
            self.enqueue(&link, from, to, datagram.clone(), now);
        }
        self.enqueue(&link, from, to, datagram, now);
    }

    fn enqueue(
        &mut self,
        link: &LinkConfig,
        from: Locator,
        to: Locator,
        data: Vec<u8>,
        now: Instant,
    ) {
        let mut delay = link
            .latency
            .saturating_add(self.rng.duration_up_to(link.jitter));
        if self.rng.chance(link.reorder) {
            self.stats.reordered = self.stats.reordered.saturating_add(1);
            // Held back by one to three link delays (at least 1 ms), so that datagrams sent
            // after it overtake it.
            let base = link
                .latency
                .saturating_add(link.jitter)
                .max(Duration::from_millis(1));
            let extra = self
                .rng
                .duration_up_to(base.saturating_mul(2))
                .saturating_add(base);
            delay = delay.saturating_add(extra);
        }
        self.seq = self.seq.wrapping_add(1);
        self.queue.push(Reverse(InFlight {
            at: now.saturating_add(delay),
            seq: self.seq,
            from,
            to,
            data,
        }));
    }

    /// Drops the datagrams in flight for which `doomed(from, to, bytes)` holds, for scripted
    /// tests ("the third fragment is lost"). Returns how many.
    pub fn drop_in_flight(
        &mut self,
        mut doomed: impl FnMut(Locator, Locator, &[u8]) -> bool,
    ) -> usize {
        let before = self.queue.len();
        let mut all: Vec<InFlight> = std::mem::take(&mut self.queue)
            .into_vec()
            .into_iter()
            .map(|Reverse(d)| d)
            .collect();
        // Decide in arrival order so that "the n-th datagram" means what it says.
        all.sort();
        all.retain(|d| !doomed(d.from, d.to, &d.data));
        self.queue = all.into_iter().map(Reverse).collect();
        let dropped = before.saturating_sub(self.queue.len());
        self.stats.dropped = self
            .stats
            .dropped
            .saturating_add(u64::try_from(dropped).unwrap_or(u64::MAX));
        dropped
    }

    /// When the next datagram arrives.
    pub fn next_delivery_time(&self) -> Option<Instant> {
        self.queue.peek().map(|Reverse(d)| d.at)
    }

    /// The next datagram due at or before `now`: `(from, to, bytes)`.
    pub fn poll_delivery(&mut self, now: Instant) -> Option<(Locator, Locator, Vec<u8>)> {
        if self.next_delivery_time()? > now {
            return None;
        }
        let Reverse(d) = self.queue.pop()?;
        self.stats.delivered = self.stats.delivered.saturating_add(1);
        Some((d.from, d.to, d.data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn loc(n: u8) -> Locator {
        Locator::udpv4(Ipv4Addr::new(10, 0, 0, n), 7400)
    }

    #[test]
    fn rng_is_deterministic_and_uniform_enough() {
        let mut a = SimRng::new(42);
        let mut b = SimRng::new(42);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(SimRng::new(1).next_u64(), SimRng::new(2).next_u64());
        let hits = (0..100_000).filter(|_| a.chance(0.2)).count();
        assert!((19_000..21_000).contains(&hits), "{hits}");
        assert!((0..1000).all(|_| a.below(7) < 7));
        assert_eq!(a.below(0), 0);
    }

    #[test]
    fn delivers_in_order_after_latency() {
        let mut net = SimNetwork::new(1);
        let t0 = Instant::from_nanos(1_000);
        net.send(loc(1), loc(2), vec![1], t0);
        net.send(loc(1), loc(2), vec![2], t0);
        assert_eq!(
            net.next_delivery_time(),
            Some(t0 + Duration::from_millis(1))
        );
        assert!(net.poll_delivery(t0).is_none());
        let t1 = t0 + Duration::from_millis(1);
        assert_eq!(net.poll_delivery(t1), Some((loc(1), loc(2), vec![1])));
        assert_eq!(net.poll_delivery(t1), Some((loc(1), loc(2), vec![2])));
        assert!(net.poll_delivery(t1).is_none());
        assert_eq!(net.next_delivery_time(), None);
    }

    #[test]
    fn loss_duplication_and_reordering_per_direction() {
        let mut net = SimNetwork::new(7);
        net.set_link(loc(1), loc(2), LinkConfig::lossy(1.0));
        net.set_link(
            loc(2),
            loc(1),
            LinkConfig {
                duplicate: 1.0,
                ..LinkConfig::PERFECT
            },
        );
        let t = Instant::ZERO;
        net.send(loc(1), loc(2), vec![1], t);
        net.send(loc(2), loc(1), vec![2], t);
        assert_eq!(net.stats().dropped, 1);
        assert_eq!(net.in_flight(), 2);
        let mut reorder = SimNetwork::new(3);
        reorder.set_default_link(LinkConfig {
            reorder: 0.5,
            ..LinkConfig::PERFECT
        });
        for i in 0..100u8 {
            reorder.send(loc(1), loc(2), vec![i], t);
        }
        let mut order = Vec::new();
        while let Some((_, _, d)) = reorder.poll_delivery(Instant::MAX) {
            order.extend(d);
        }
        assert_eq!(order.len(), 100);
        assert!(order.windows(2).any(|w| w[0] > w[1]), "some overtaking");
    }
}
