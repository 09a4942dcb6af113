//! Time as the executor sees it.
//!
//! [`Instant`] is a point on a monotonic time line in nanoseconds. The real clock is
//! `CLOCK_MONOTONIC` (never stepped by NTP or `date`; ROS 2's "steady time"), so timers are immune
//! to wall-clock steps, and instants taken in different processes on one host are comparable,
//! which the latency measurements rely on. [`VirtualClock`] replaces it in tests: time only
//! moves when the executor would otherwise sleep, so hours of timer behaviour run in
//! milliseconds and every run is identical.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use crate::instant::Instant;
use crate::parker::Parker;

/// A source of monotonic time that also knows how to wait for it.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Instant;

    /// True if this clock advances with the executor's own clock, so the executor can sleep
    /// until a deadline on it; false for simulated time, which only messages advance.
    fn is_steady(&self) -> bool {
        true
    }

    /// Blocks until `deadline` (or forever if `None`) or until `parker` is unparked, whichever
    /// comes first.
    fn wait_until(&self, parker: &Parker, deadline: Option<Instant>);
}

/// `CLOCK_MONOTONIC`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SteadyClock;

impl Clock for SteadyClock {
    fn now(&self) -> Instant {
        Instant::monotonic_now()
    }

    fn wait_until(&self, parker: &Parker, deadline: Option<Instant>) {
        parker.park_until(deadline);
    }
}

/// A clock that stands still until the executor has nothing to do, then jumps to the next
/// deadline. For deterministic tests of timer behaviour.
#[derive(Debug, Default)]
pub struct VirtualClock {
    now: AtomicU64,
}

impl VirtualClock {
    pub fn new(start: Instant) -> Self {
        Self {
            now: AtomicU64::new(start.as_nanos()),
        }
    }

    /// Moves time forward (never backward), as if a callback had taken this long.
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.now.fetch_add(by, Ordering::SeqCst);
    }

    pub fn set(&self, to: Instant) {
        self.now.fetch_max(to.as_nanos(), Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.now.load(Ordering::SeqCst))
    }

    fn wait_until(&self, parker: &Parker, deadline: Option<Instant>) {
        // Pending work wins; otherwise "sleep" by jumping to the deadline. With no deadline and
        // no work, a virtual executor would sleep forever: return and let spin_once time out.
        if parker.take_notification() {
            return;
        }
        if let Some(deadline) = deadline {
            self.set(deadline);
        }
    }
}
