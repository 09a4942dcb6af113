//! RTPS wall-clock timestamps and durations (RTPS 2.5 §9.3.2, "Mapping of the Types that
//! Appear Within Submessages or Built-in Topic Data").
//!
//! Both use a 32-bit fraction of a second (units of 2^-32 s), not nanoseconds. [`Time`] is a
//! wall-clock value as carried in INFO_TS; it is deliberately unrelated to any monotonic clock
//! type, and this crate never reads a clock: callers pass timestamps in.

use roslite_cdr::Endianness;

use crate::bytes::{put_i32, put_u32, Reader};
use crate::error::ParseError;

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// 2^-32 s units → nanoseconds, rounded to nearest (may yield exactly 10^9).
fn fraction_to_nanos(fraction: u32) -> u64 {
    // < 2^32 · 10^9 + 2^31 < 2^62: cannot overflow.
    u64::from(fraction)
        .saturating_mul(NANOS_PER_SEC)
        .saturating_add(1 << 31)
        >> 32
}

/// Nanoseconds (< 10^9) → 2^-32 s units, rounded to nearest. Exact inverse of
/// [`fraction_to_nanos`] for every nanosecond value, because 2^32 > 10^9.
fn nanos_to_fraction(nanos: u32) -> u32 {
    let nanos = u64::from(nanos.min(999_999_999));
    // nanos · 2^32 < 2^62, and the quotient is < 2^32 for nanos < 10^9.
    ((nanos << 32).saturating_add(NANOS_PER_SEC / 2) / NANOS_PER_SEC) as u32
}

/// `Time_t`: seconds since the UNIX epoch plus a binary fraction.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |                    unsigned long seconds                      |
/// +---------------+---------------+---------------+---------------+
/// |                    unsigned long fraction                     |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// RTPS 2.5 made `seconds` unsigned (2.3 and earlier: signed); the bit patterns of the
/// special values are the same in both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Time {
    pub seconds: u32,
    pub fraction: u32,
}

impl Time {
    pub const ZERO: Time = Time {
        seconds: 0,
        fraction: 0,
    };
    /// `TIME_INVALID`.
    pub const INVALID: Time = Time {
        seconds: u32::MAX,
        fraction: u32::MAX,
    };
    /// `TIME_INFINITE` (RTPS 2.5 value).
    pub const INFINITE: Time = Time {
        seconds: u32::MAX,
        fraction: u32::MAX - 1,
    };

    /// A timestamp `since_epoch` after 1970-01-01T00:00:00Z; saturates at the largest finite
    /// representable time.
    pub fn from_unix(since_epoch: std::time::Duration) -> Self {
        match u32::try_from(since_epoch.as_secs()) {
            Ok(seconds) if seconds < u32::MAX => Time {
                seconds,
                fraction: nanos_to_fraction(since_epoch.subsec_nanos()),
            },
            _ => Time {
                seconds: u32::MAX - 1,
                fraction: u32::MAX,
            },
        }
    }

    /// Time since the UNIX epoch; `None` for [`Time::INVALID`] and [`Time::INFINITE`].
    pub fn to_unix(self) -> Option<std::time::Duration> {
        if self == Self::INVALID || self == Self::INFINITE {
            return None;
        }
        std::time::Duration::from_secs(u64::from(self.seconds)).checked_add(
            std::time::Duration::from_nanos(fraction_to_nanos(self.fraction)),
        )
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, ParseError> {
        Ok(Time {
            seconds: r.u32()?,
            fraction: r.u32()?,
        })
    }

    pub(crate) fn write(self, buf: &mut Vec<u8>, e: Endianness) {
        put_u32(buf, e, self.seconds);
        put_u32(buf, e, self.fraction);
    }
}

/// `Duration_t`: signed seconds plus a binary fraction; used for lease durations and QoS.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |                          long seconds                         |
/// +---------------+---------------+---------------+---------------+
/// |                    unsigned long fraction                     |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// Ordering is numeric for valid (non-negative) durations, with [`Duration::INFINITE`]
/// greater than every finite one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Duration {
    pub seconds: i32,
    pub fraction: u32,
}

impl Duration {
    pub const ZERO: Duration = Duration {
        seconds: 0,
        fraction: 0,
    };
    /// `DURATION_INFINITE` = {0x7fffffff, 0xffffffff}; what Fast DDS sends for an infinite
    /// deadline, lifespan and liveliness lease.
    pub const INFINITE: Duration = Duration {
        seconds: i32::MAX,
        fraction: u32::MAX,
    };

    pub const fn from_secs(seconds: i32) -> Self {
        Duration {
            seconds,
            fraction: 0,
        }
    }

    pub fn from_millis(millis: u32) -> Self {
        Self::from_std(std::time::Duration::from_millis(u64::from(millis)))
    }

    pub fn is_infinite(self) -> bool {
        self == Self::INFINITE
    }

    /// Converts, saturating to [`Duration::INFINITE`] at or beyond 2^31 − 1 seconds.
    pub fn from_std(d: std::time::Duration) -> Self {
        match i32::try_from(d.as_secs()) {
            Ok(seconds) if seconds < i32::MAX => Duration {
                seconds,
                fraction: nanos_to_fraction(d.subsec_nanos()),
            },
            _ => Self::INFINITE,
        }
    }

    /// `None` for [`Duration::INFINITE`] and for negative durations.
    pub fn to_std(self) -> Option<std::time::Duration> {
        if self.is_infinite() {
            return None;
        }
        let secs = u64::try_from(self.seconds).ok()?;
        std::time::Duration::from_secs(secs).checked_add(std::time::Duration::from_nanos(
            fraction_to_nanos(self.fraction),
        ))
    }

    pub(crate) fn write(self, buf: &mut Vec<u8>, e: Endianness) {
        put_i32(buf, e, self.seconds);
        put_u32(buf, e, self.fraction);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration as StdDuration;

    #[test]
    fn fraction_conversion_is_exact_for_nanos() {
        for nanos in [0, 1, 2, 499_999_999, 500_000_000, 999_999_998, 999_999_999] {
            assert_eq!(
                fraction_to_nanos(nanos_to_fraction(nanos)),
                u64::from(nanos)
            );
        }
        assert_eq!(nanos_to_fraction(500_000_000), 1 << 31);
    }

    #[test]
    fn duration_std_round_trip() {
        let d = StdDuration::new(20, 123_456_789);
        assert_eq!(Duration::from_std(d).to_std(), Some(d));
        assert_eq!(
            Duration::from_secs(20).to_std(),
            Some(StdDuration::from_secs(20))
        );
        assert_eq!(
            Duration::from_millis(100).to_std(),
            Some(StdDuration::from_millis(100))
        );
        assert_eq!(Duration::INFINITE.to_std(), None);
        assert_eq!(Duration::from_secs(-1).to_std(), None);
        assert_eq!(
            Duration::from_std(StdDuration::from_secs(1 << 40)),
            Duration::INFINITE
        );
        assert_eq!(Duration::from_std(StdDuration::MAX), Duration::INFINITE);
        // An almost-one fraction rounds up into the next second instead of panicking.
        let almost = Duration {
            seconds: 1,
            fraction: u32::MAX,
        };
        assert_eq!(almost.to_std(), Some(StdDuration::from_secs(2)));
    }

    #[test]
    fn duration_order_puts_infinite_last() {
        assert!(Duration::from_secs(10) < Duration::from_secs(20));
        assert!(Duration::from_secs(i32::MAX - 1) < Duration::INFINITE);
        assert!(Duration::ZERO < Duration::from_millis(1));
    }

    #[test]
    fn time_unix_round_trip() {
        let t = StdDuration::new(1_795_315_967, 339_728_088);
        assert_eq!(Time::from_unix(t).to_unix(), Some(t));
        assert_eq!(Time::INVALID.to_unix(), None);
        assert_eq!(Time::INFINITE.to_unix(), None);
        assert!(Time::from_unix(StdDuration::MAX).to_unix().is_some());
    }
}
