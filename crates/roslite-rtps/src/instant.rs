//! Monotonic time as seen by the state machines.
//!
//! [`Instant`] is a count of nanoseconds on a monotonic clock chosen by the caller (the runtime
//! feeds `CLOCK_MONOTONIC`; simulations feed a virtual clock starting at zero). It is never
//! read here: every `handle_*`/`poll_*` method takes `now` as an argument.
//!
//! It is deliberately a different type from the wire timestamp [`Time`](crate::Time)
//! (RTPS 2.5 §9.3.2 `Time_t`, wall clock, 2^-32 s fractions): timers, deadlines and leases use
//! `Instant`; source timestamps use `Time`. Cyclone keeps the same split (`ddsrt_mtime_t` vs
//! `ddsrt_wctime_t`).
//!
//! All arithmetic saturates: an `Instant` never wraps, and "infinitely far" deadlines are
//! [`Instant::MAX`].

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point on a monotonic clock, in nanoseconds since an arbitrary origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instant(u64);

/// Nanoseconds in a [`Duration`], saturating at `u64::MAX` (about 584 years).
fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Instant {
    /// The origin of the clock.
    pub const ZERO: Instant = Instant(0);
    /// The latest representable instant; used for "never".
    pub const MAX: Instant = Instant(u64::MAX);

    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, or `None` if that is past [`Instant::MAX`].
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|n| self.0.checked_add(n))
            .map(Instant)
    }

    /// `self - d`, or `None` if that is before the origin.
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|n| self.0.checked_sub(n))
            .map(Instant)
    }

    /// `self + d`, saturating at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos(d)))
    }

    /// `self - d`, saturating at [`Instant::ZERO`].
    pub fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_nanos(d)))
    }

    /// The time elapsed from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0).map(Duration::from_nanos)
    }

    /// The time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// Saturating: `Instant::MAX + d == Instant::MAX`.
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = self.saturating_add(d);
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// Saturating at [`Instant::ZERO`].
    fn sub(self, d: Duration) -> Instant {
        self.saturating_sub(d)
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// Saturating: zero if `earlier` is later than `self`.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl fmt::Display for Instant {
    /// Seconds with millisecond precision, e.g. `12.345s`, for test output and logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / 1_000_000_000;
        let millis = (self.0 % 1_000_000_000) / 1_000_000;
        write!(f, "{secs}.{millis:03}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_nanos(1_500_000_000);
        assert_eq!((t + Duration::from_millis(500)).as_nanos(), 2_000_000_000);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(Instant::MAX.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(Instant::ZERO - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(Instant::ZERO.checked_sub(Duration::from_nanos(1)), None);
        assert_eq!(t.checked_add(Duration::MAX), None);
        let mut u = t;
        u += Duration::from_secs(1);
        assert_eq!(u - t, Duration::from_secs(1));
        assert_eq!(t - u, Duration::ZERO);
        assert_eq!(t.checked_duration_since(u), None);
        assert_eq!(u.checked_duration_since(t), Some(Duration::from_secs(1)));
        assert!(t < u && u < Instant::MAX);
        assert_eq!(t.to_string(), "1.500s");
    }
}
