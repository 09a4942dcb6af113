//! Fault injection for outgoing datagrams: a software stand-in for
//! `tc qdisc add dev lo root netem delay 10ms 3ms loss 1%` where `netem` is not available
//! (containers without `CAP_NET_ADMIN`, CI runners), used to emulate a slower link such as a
//! local 5G hop to an edge server (docs/experiments.md, the service round trips over local 5G).
//!
//! Layers, bottom up:
//! - [`FaultConfig`]: the impairment, parsed from text like `delay_ms=10,jitter_ms=3,loss=0.01,seed=7`
//!   (the value of [`FAULT_INJECTION_ENV`]); clear errors ([`FaultParseError`]) for bad text.
//! - [`FaultModel`]: the sans-IO core. Datagrams go in with the current time
//!   ([`FaultModel::handle_datagram`]); each is dropped, or given a release time (delay plus a
//!   uniform jitter), and possibly duplicated; [`FaultModel::poll_transmit`] hands out those whose
//!   release time has come, earliest first, and [`FaultModel::poll_timeout`] says when the next
//!   one is due. Every random draw comes from a SplitMix64 generator seeded by the config, so a
//!   sequence of inputs always gives the same drops and delays. No clock, no threads.
//! - [`FaultInjector`]: one thread that drives a [`FaultModel`] on `CLOCK_MONOTONIC` and hands
//!   released datagrams to a send closure. It sleeps on a condition variable until the next
//!   release time or a new datagram (no polling).
//!
//! Like `netem`, a jitter larger than the gap between two datagrams reorders them: datagrams
//! leave in order of release time (ties in order of arrival).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt;
use std::net::SocketAddrV4;
use std::str::FromStr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::udp::monotonic_ns;

/// The environment variable a roslite process reads its outgoing-link impairment from when its
/// RTPS network starts; unset or empty means no injection. Example:
/// `ROSLITE_FAULT_INJECTION=delay_ms=10,jitter_ms=3,loss=0.01,seed=7`.
pub const FAULT_INJECTION_ENV: &str = "ROSLITE_FAULT_INJECTION";

/// Datagrams held at once by default before new ones are dropped (`netem`'s default `limit`).
pub const DEFAULT_QUEUE_LIMIT: usize = 1000;

/// An impairment of outgoing datagrams.
///
/// Text form: comma-separated `key=value` items, any order, each key at most once:
///
/// | key | meaning | default |
/// |---|---|---|
/// | `delay_ms`, `delay_us` | fixed delay added to every datagram | 0 |
/// | `jitter_ms`, `jitter_us` | a uniform random offset in `[-jitter, +jitter]` added to the delay (clamped at zero) | 0 |
/// | `loss` | probability that a datagram is dropped: `0.01` or `1%` | 0 |
/// | `duplicate` | probability that a datagram is sent twice (each copy with its own delay) | 0 |
/// | `seed` | seed of the random draws | 0 |
/// | `limit` | datagrams held at once; more are dropped | 1000 |
#[derive(Clone, Debug, PartialEq)]
pub struct FaultConfig {
    pub delay: Duration,
    pub jitter: Duration,
    /// In `[0, 1]`.
    pub loss: f64,
    /// In `[0, 1]`.
    pub duplicate: f64,
    pub seed: u64,
    /// At least 1.
    pub limit: usize,
}

impl Default for FaultConfig {
    fn default() -> Self {
        Self {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: 0.0,
            duplicate: 0.0,
            seed: 0,
            limit: DEFAULT_QUEUE_LIMIT,
        }
    }
}

impl FaultConfig {
    /// The impairment in [`FAULT_INJECTION_ENV`]: `Ok(None)` when it is unset or empty.
    ///
    /// # Errors
    /// [`FaultParseError`] for a value that does not parse (or is not UTF-8).
    pub fn from_env() -> Result<Option<Self>, FaultParseError> {
        match std::env::var(FAULT_INJECTION_ENV) {
            Ok(text) if text.trim().is_empty() => Ok(None),
            Ok(text) => text.parse().map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(FaultParseError::NotUnicode),
        }
    }
}

/// Keys of the text form, for error messages.
const KEYS: &str = "delay_ms, delay_us, jitter_ms, jitter_us, loss, duplicate, seed, limit";

impl FromStr for FaultConfig {
    type Err = FaultParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut config = FaultConfig::default();
        let mut seen: Vec<&str> = Vec::new();
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(FaultParseError::MissingValue {
                    item: item.to_owned(),
                });
            };
            let (key, value) = (key.trim(), value.trim());
            // `delay_ms` and `delay_us` set the same thing.
            let canonical = key.split('_').next().unwrap_or(key);
            if seen.contains(&canonical) {
                return Err(FaultParseError::Repeated {
                    key: key.to_owned(),
                });
            }
            seen.push(canonical);
            let bad = || FaultParseError::BadValue {
                key: key.to_owned(),
                value: value.to_owned(),
                expected: expected(key),
            };
            match key {
                "delay_ms" | "delay_us" | "jitter_ms" | "jitter_us" => {
                    let number: f64 = value.parse().map_err(|_| bad())?;
                    let scale = if key.ends_with("_ms") { 1e-3 } else { 1e-6 };
                    let seconds = number * scale;
                    // An hour is far beyond any link worth emulating, and keeps the
                    // nanosecond arithmetic well inside u64.
                    if !(seconds.is_finite() && (0.0..=3600.0).contains(&seconds)) {
                        return Err(bad());
                    }
                    let duration = Duration::from_secs_f64(seconds);
                    if key.starts_with("delay") {
                        config.delay = duration;
                    } else {
                        config.jitter = duration;
                    }
                }
                "loss" | "duplicate" => {
                    let probability = match value.strip_suffix('%') {
                        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
                        None => value.parse::<f64>(),
                    }
                    .map_err(|_| bad())?;
                    if !(0.0..=1.0).contains(&probability) {
                        return Err(bad());
                    }
                    if key == "loss" {
                        config.loss = probability;
                    } else {
                        config.duplicate = probability;
                    }
                }
                "seed" => config.seed = value.parse().map_err(|_| bad())?,
                "limit" => {
                    config.limit = value.parse().map_err(|_| bad())?;
                    if config.limit == 0 {
                        return Err(bad());
                    }
                }
                _ => {
                    return Err(FaultParseError::UnknownKey {
                        key: key.to_owned(),
                    })
                }
            }
        }
        if seen.is_empty() {
            return Err(FaultParseError::Empty);
        }
        Ok(config)
    }
}

fn expected(key: &str) -> &'static str {
    match key {
        "delay_ms" | "jitter_ms" => "milliseconds from 0 to 3600000, e.g. 10 or 2.5",
        "delay_us" | "jitter_us" => "microseconds from 0 to 3600000000, e.g. 500",
        "loss" | "duplicate" => "a probability from 0 to 1, e.g. 0.01, or a percentage like 1%",
        "seed" => "an unsigned 64-bit integer",
        "limit" => "a positive number of datagrams",
        _ => "a value",
    }
}

impl fmt::Display for FaultConfig {
    /// The text form, which parses back to the same config (durations in microseconds).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "delay_us={},jitter_us={},loss={},duplicate={},seed={},limit={}",
            self.delay.as_secs_f64() * 1e6,
            self.jitter.as_secs_f64() * 1e6,
            self.loss,
            self.duplicate,
            self.seed,
            self.limit
        )
    }
}

/// Why a fault-injection spec did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultParseError {
    /// No `key=value` item at all.
    Empty,
    /// An item without `=`.
    MissingValue {
        item: String,
    },
    UnknownKey {
        key: String,
    },
    /// A key given twice (`delay_ms` and `delay_us` count as the same key).
    Repeated {
        key: String,
    },
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
    /// The environment variable is not valid UTF-8.
    NotUnicode,
}

impl fmt::Display for FaultParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fault injection spec: ")?;
        match self {
            Self::Empty => write!(
                f,
                "no settings; write key=value items separated by commas, e.g. \
                 delay_ms=10,jitter_ms=3,loss=0.01,seed=7 (keys: {KEYS})"
            ),
            Self::MissingValue { item } => {
                write!(f, "'{item}' has no value; write it as key=value")
            }
            Self::UnknownKey { key } => write!(f, "unknown key '{key}' (keys: {KEYS})"),
            Self::Repeated { key } => write!(f, "'{key}' is set twice"),
            Self::BadValue {
                key,
                value,
                expected,
            } => write!(f, "{key}='{value}': expected {expected}"),
            Self::NotUnicode => write!(f, "{FAULT_INJECTION_ENV} is not valid UTF-8"),
        }
    }
}

impl std::error::Error for FaultParseError {}

// ---------------------------------------------------------------------------------------------
// The sans-IO model.

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, seedable, and good enough for drop decisions.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, from the top 53 bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What [`FaultModel::handle_datagram`] did with a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultVerdict {
    /// Queued for release at this time (monotonic nanoseconds).
    Delayed { release_ns: u64 },
    /// Queued twice, each copy with its own release time.
    Duplicated { release_ns: [u64; 2] },
    /// Dropped by the loss draw.
    Lost,
    /// Dropped because `limit` datagrams were already held.
    Overflow,
}

/// Counters of a [`FaultModel`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Datagrams handed in.
    pub offered: u64,
    pub lost: u64,
    pub overflowed: u64,
    /// Extra copies queued.
    pub duplicated: u64,
    /// Datagrams (and copies) handed out by `poll_transmit`.
    pub released: u64,
}

/// One held datagram; the heap's order is earliest release first, then first queued.
struct Held<T> {
    release_ns: u64,
    order: u64,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.release_ns, self.order) == (other.release_ns, other.order)
    }
}

impl<T> Eq for Held<T> {}

impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap and the earliest must come out first.
        (other.release_ns, other.order).cmp(&(self.release_ns, self.order))
    }
}

/// The deterministic core of the injector: which datagrams to drop, and when to release the
/// others. Times are nanoseconds of one monotonic clock, passed in by the caller.
pub struct FaultModel<T> {
    config: FaultConfig,
    rng: SplitMix64,
    held: BinaryHeap<Held<T>>,
    next_order: u64,
    stats: FaultStats,
}

impl<T: Clone> FaultModel<T> {
    pub fn new(config: FaultConfig) -> Self {
        Self {
            rng: SplitMix64(config.seed),
            config,
            held: BinaryHeap::new(),
            next_order: 0,
            stats: FaultStats::default(),
        }
    }

    pub fn config(&self) -> &FaultConfig {
        &self.config
    }

    pub fn stats(&self) -> FaultStats {
        self.stats
    }

    /// Datagrams held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Decides the fate of one datagram sent at `now_ns`. The same seed and the same sequence
    /// of calls give the same verdicts (three draws per datagram, whatever the settings).
    pub fn handle_datagram(&mut self, now_ns: u64, item: T) -> FaultVerdict {
        self.stats.offered += 1;
        let lose = self.rng.next_f64() < self.config.loss;
        let duplicate = self.rng.next_f64() < self.config.duplicate;
        let first = self.release_time(now_ns);
        if lose {
            self.stats.lost += 1;
            return FaultVerdict::Lost;
        }
        if self.held.len() >= self.config.limit {
            self.stats.overflowed += 1;
            return FaultVerdict::Overflow;
        }
        if duplicate && self.held.len() + 1 < self.config.limit {
            let second = self.release_time(now_ns);
            self.push(first, item.clone());
            self.push(second, item);
            self.stats.duplicated += 1;
            return FaultVerdict::Duplicated {
                release_ns: [first, second],
            };
        }
        self.push(first, item);
        FaultVerdict::Delayed { release_ns: first }
    }

    /// The next datagram whose release time is at or before `now_ns`, earliest first.
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<T> {
        if self.held.peek()?.release_ns > now_ns {
            return None;
        }
        let held = self.held.pop()?;
        self.stats.released += 1;
        Some(held.item)
    }

    /// When the earliest held datagram is due; `None` when nothing is held.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.held.peek().map(|h| h.release_ns)
    }

    fn release_time(&mut self, now_ns: u64) -> u64 {
        let delay = self.config.delay.as_nanos() as f64;
        let jitter = self.config.jitter.as_nanos() as f64;
        // Uniform in [-jitter, +jitter]; always drawn, so the draws per datagram stay fixed.
        let offset = (self.rng.next_f64() * 2.0 - 1.0) * jitter;
        now_ns.saturating_add((delay + offset).max(0.0).round() as u64)
    }

    fn push(&mut self, release_ns: u64, item: T) {
        self.held.push(Held {
            release_ns,
            order: self.next_order,
            item,
        });
        self.next_order += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// The threaded injector.

struct InjectorState {
    model: FaultModel<(SocketAddrV4, Vec<u8>)>,
    stop: bool,
}

struct InjectorShared {
    state: Mutex<InjectorState>,
    wake: Condvar,
}

impl InjectorShared {
    fn lock(&self) -> MutexGuard<'_, InjectorState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A [`FaultModel`] on `CLOCK_MONOTONIC`, with one thread (`roslite-fault`) that sends each
/// datagram through the closure given to [`FaultInjector::spawn`] when its release time comes.
/// Dropping the injector stops the thread; datagrams still held are discarded.
pub struct FaultInjector {
    shared: Arc<InjectorShared>,
    config: FaultConfig,
    thread: Option<JoinHandle<()>>,
}

impl FaultInjector {
    /// Starts the release thread. `send` runs on it, without any lock of the injector held.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn spawn(
        config: FaultConfig,
        send: impl FnMut(SocketAddrV4, &[u8]) + Send + 'static,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(InjectorShared {
            state: Mutex::new(InjectorState {
                model: FaultModel::new(config.clone()),
                stop: false,
            }),
            wake: Condvar::new(),
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("roslite-fault".into())
                .spawn(move || release_loop(&shared, send))?
        };
        Ok(Self {
            shared,
            config,
            thread: Some(thread),
        })
    }

    pub fn config(&self) -> &FaultConfig {
        &self.config
    }

    pub fn stats(&self) -> FaultStats {
        self.shared.lock().model.stats()
    }

    /// Hands one datagram to the link; it is sent later, or never.
    pub fn submit(&self, destination: SocketAddrV4, datagram: &[u8]) {
        let mut state = self.shared.lock();
        let before = state.model.poll_timeout();
        let verdict = state
            .model
            .handle_datagram(monotonic_ns(), (destination, datagram.to_vec()));
        let earliest = match verdict {
            FaultVerdict::Delayed { release_ns } => release_ns,
            FaultVerdict::Duplicated { release_ns } => release_ns[0].min(release_ns[1]),
            FaultVerdict::Lost | FaultVerdict::Overflow => return,
        };
        drop(state);
        // The thread sleeps until `before`; it must re-plan only for an earlier datagram.
        let replan = match before {
            Some(t) => earliest < t,
            None => true,
        };
        if replan {
            self.shared.wake.notify_one();
        }
    }
}

impl Drop for FaultInjector {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            // The send closure may hold (a weak reference to) the injector's owner; if the last
            // reference went away on the release thread itself, it cannot join itself.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

fn release_loop(shared: &InjectorShared, mut send: impl FnMut(SocketAddrV4, &[u8])) {
    let mut due = Vec::new();
    let mut state = shared.lock();
    loop {
        if state.stop {
            return;
        }
        let now = monotonic_ns();
        while let Some(datagram) = state.model.poll_transmit(now) {
            due.push(datagram);
        }
        if !due.is_empty() {
            drop(state);
            for (destination, bytes) in due.drain(..) {
                send(destination, &bytes);
            }
            state = shared.lock();
            continue;
        }
        state = match state.model.poll_timeout() {
            Some(release_ns) => {
                let wait = Duration::from_nanos(release_ns.saturating_sub(now));
                shared
                    .wake
                    .wait_timeout(state, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => shared
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn config(text: &str) -> FaultConfig {
        text.parse().unwrap()
    }

    #[test]
    fn parses_the_documented_spec() {
        let c = config("delay_ms=10,jitter_ms=3,loss=0.01,seed=7");
        assert_eq!(c.delay, Duration::from_millis(10));
        assert_eq!(c.jitter, Duration::from_millis(3));
        assert_eq!((c.loss, c.duplicate, c.seed), (0.01, 0.0, 7));
        assert_eq!(c.limit, DEFAULT_QUEUE_LIMIT);
        let c = config(" delay_us=250 , loss=2.5% ,duplicate=0.1,limit=50,");
        assert_eq!(c.delay, Duration::from_micros(250));
        assert_eq!((c.loss, c.duplicate, c.limit), (0.025, 0.1, 50));
        // Display gives text that parses back to the same config.
        let c = config("delay_ms=10.5,jitter_us=3,loss=0.25,duplicate=0.5,seed=9,limit=7");
        assert_eq!(config(&c.to_string()), c);
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let err = |text: &str| text.parse::<FaultConfig>().unwrap_err();
        assert_eq!(err(""), FaultParseError::Empty);
        assert_eq!(err(" , "), FaultParseError::Empty);
        assert_eq!(
            err("delay_ms"),
            FaultParseError::MissingValue {
                item: "delay_ms".into()
            }
        );
        assert_eq!(
            err("dealy_ms=10"),
            FaultParseError::UnknownKey {
                key: "dealy_ms".into()
            }
        );
        assert_eq!(
            err("delay_ms=10,delay_us=5"),
            FaultParseError::Repeated {
                key: "delay_us".into()
            }
        );
        assert!(matches!(err("loss=1.5"), FaultParseError::BadValue { .. }));
        assert!(matches!(err("loss=x"), FaultParseError::BadValue { .. }));
        assert!(matches!(
            err("delay_ms=-1"),
            FaultParseError::BadValue { .. }
        ));
        assert!(matches!(err("seed=-1"), FaultParseError::BadValue { .. }));
        assert!(matches!(err("limit=0"), FaultParseError::BadValue { .. }));
        let text = err("loss=150%").to_string();
        assert!(
            text.contains("loss='150%'") && text.contains("probability"),
            "{text}"
        );
        assert!(err("x=1").to_string().contains("delay_ms"));
    }

    /// The drop pattern of `n` datagrams offered at t = 0.
    fn drops(config: &FaultConfig, n: u32) -> Vec<bool> {
        let mut model = FaultModel::new(config.clone());
        (0..n)
            .map(|i| model.handle_datagram(0, i) == FaultVerdict::Lost)
            .collect()
    }

    #[test]
    fn loss_rate_follows_the_seed() {
        let c = config("loss=0.1,seed=7");
        let pattern = drops(&c, 10_000);
        let lost = pattern.iter().filter(|l| **l).count();
        assert!((900..=1100).contains(&lost), "{lost} of 10000 lost at 10%");
        // Deterministic: the same seed drops the same datagrams, another seed others.
        assert_eq!(drops(&c, 10_000), pattern);
        assert_ne!(drops(&config("loss=0.1,seed=8"), 10_000), pattern);
        assert!(!drops(&config("loss=0"), 1000).contains(&true));
        assert!(!drops(&config("loss=1"), 1000).contains(&false));
    }

    #[test]
    fn datagrams_leave_by_release_time_never_early() {
        let mut model = FaultModel::new(config("delay_ms=10,jitter_ms=5,seed=3"));
        let mut release = Vec::new();
        for i in 0..200u64 {
            // One datagram every 100 us: jitter of +-5 ms reorders them.
            match model.handle_datagram(i * MS / 10, i) {
                FaultVerdict::Delayed { release_ns } => release.push(release_ns),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(release
            .iter()
            .enumerate()
            .all(|(i, r)| (5 * MS..=15 * MS).contains(&(r - i as u64 * MS / 10))));
        assert_eq!(model.poll_timeout(), release.iter().copied().min());
        let mut out = Vec::new();
        let mut now = 0;
        while let Some(next) = model.poll_timeout() {
            // Nothing comes out before its time.
            assert_eq!(model.poll_transmit(next - 1), None);
            now = now.max(next);
            while let Some(i) = model.poll_transmit(now) {
                assert!(release[i as usize] <= now);
                out.push(i);
            }
        }
        let times: Vec<u64> = out.iter().map(|&i| release[i as usize]).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "not by release time"
        );
        assert_ne!(out, (0..200).collect::<Vec<_>>(), "jitter should reorder");
        let mut sorted = out.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..200).collect::<Vec<_>>(), "each exactly once");
        assert_eq!(model.stats().released, 200);
    }

    #[test]
    fn no_impairment_releases_at_once_in_order() {
        let mut model = FaultModel::new(config("seed=1"));
        for i in 0..5 {
            model.handle_datagram(42, i);
        }
        assert_eq!(model.poll_timeout(), Some(42));
        let out: Vec<i32> = std::iter::from_fn(|| model.poll_transmit(42)).collect();
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
        assert_eq!(model.poll_timeout(), None);
    }

    #[test]
    fn duplicates_and_overflow_are_counted() {
        let mut model = FaultModel::new(config("duplicate=1,limit=5"));
        assert!(matches!(
            model.handle_datagram(0, 'a'),
            FaultVerdict::Duplicated { .. }
        ));
        model.handle_datagram(0, 'b');
        // Four held; the fifth slot cannot take a pair, so 'c' goes once; then it is full.
        assert!(matches!(
            model.handle_datagram(0, 'c'),
            FaultVerdict::Delayed { .. }
        ));
        assert_eq!(model.handle_datagram(0, 'd'), FaultVerdict::Overflow);
        let out: String = std::iter::from_fn(|| model.poll_transmit(0)).collect();
        assert_eq!(out, "aabbc");
        let stats = model.stats();
        assert_eq!(
            (
                stats.offered,
                stats.duplicated,
                stats.overflowed,
                stats.released
            ),
            (4, 2, 1, 5)
        );
    }

    #[test]
    fn injector_thread_sends_after_the_delay() {
        let (tx, rx) = std::sync::mpsc::channel();
        let injector = FaultInjector::spawn(config("delay_ms=20"), move |to, bytes: &[u8]| {
            let _ = tx.send((monotonic_ns(), to, bytes.to_vec()));
        })
        .unwrap();
        let to = SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 7400);
        let sent = monotonic_ns();
        injector.submit(to, b"one");
        injector.submit(to, b"two");
        for expected in [&b"one"[..], b"two"] {
            let (at, dest, bytes) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!((dest, &bytes[..]), (to, expected));
            assert!(at - sent >= 20 * MS, "released early");
        }
        assert_eq!(injector.stats().released, 2);
        drop(injector);
    }
}
