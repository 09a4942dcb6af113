//! [`Instant`]: a point on a monotonic time line in nanoseconds.
//!
//! Its own module, below both [`crate::clock`] and [`crate::parker`]: the clock waits through
//! the parker, and the parker's deadlines are instants.

use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

/// Nanoseconds on a monotonic clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);

    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `CLOCK_MONOTONIC` now.
    pub fn monotonic_now() -> Self {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        // CLOCK_MONOTONIC is never negative.
        Self(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }
}

impl Sub for Instant {
    type Output = Duration;
    /// Saturating: a later `rhs` gives zero.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}
