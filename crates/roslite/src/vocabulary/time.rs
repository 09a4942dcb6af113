//! ROS time: the time stamped into messages and returned by `Node::now`.
//!
//! Without simulation it is the system clock (`CLOCK_REALTIME`, like rclcpp's `RCL_ROS_TIME`
//! with `use_sim_time` off); with `use_sim_time:=true` it is whatever the last `/clock` message
//! said. Timers never run on the system clock: they use steady time, or simulated time when
//! enabled, so a wall-clock step cannot stall or burst them.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use roslite_executor::{Instant, SimClock};

use roslite_msgs::builtin_interfaces::msg::Time as TimeMsg;

/// A point in ROS time, in nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    pub nanos: i64,
}

impl Time {
    pub const fn from_nanos(nanos: i64) -> Self {
        Self { nanos }
    }

    /// The system clock now.
    pub fn system_now() -> Self {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            nanos: i64::try_from(since_epoch.as_nanos()).unwrap_or(i64::MAX),
        }
    }

    /// As a `builtin_interfaces/msg/Time` (for `header.stamp`).
    pub fn to_msg(self) -> TimeMsg {
        TimeMsg {
            sec: i32::try_from(self.nanos.div_euclid(1_000_000_000)).unwrap_or(i32::MAX),
            nanosec: self.nanos.rem_euclid(1_000_000_000) as u32,
        }
    }

    pub fn from_msg(msg: &TimeMsg) -> Self {
        Self {
            nanos: i64::from(msg.sec) * 1_000_000_000 + i64::from(msg.nanosec),
        }
    }

    /// Time elapsed since `earlier`, zero if it is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(u64::try_from(self.nanos - earlier.nanos).unwrap_or(0))
    }
}

/// The wall-clock time since the Unix epoch now (zero before it).
pub(crate) fn wall_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// `instant`, on this process's monotonic clock, as wall-clock time since the Unix epoch:
/// what a time crossing to another process carries, whose monotonic clock has nothing in
/// common with ours (RTPS INFO_TS, a moved publisher's kept messages).
pub(crate) fn monotonic_to_wall(instant: Instant) -> Duration {
    let age = Instant::monotonic_now()
        .as_nanos()
        .saturating_sub(instant.as_nanos());
    wall_now().saturating_sub(Duration::from_nanos(age))
}

/// A wall-clock time since the epoch as an instant on this process's monotonic clock, given
/// the monotonic time `now`; a time in the future (two hosts' clocks apart) counts as now.
pub(crate) fn wall_to_monotonic(since_epoch: Duration, now: Instant) -> Instant {
    let age = wall_now().saturating_sub(since_epoch);
    let age = u64::try_from(age.as_nanos()).unwrap_or(u64::MAX);
    Instant::from_nanos(now.as_nanos().saturating_sub(age))
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = self.to_msg();
        write!(f, "{}.{:09}", msg.sec, msg.nanosec)
    }
}

/// Where a node's ROS time comes from.
#[derive(Clone)]
pub enum RosClockSource {
    System,
    Simulated(Arc<SimClock>),
}

impl RosClockSource {
    pub fn now(&self) -> Time {
        match self {
            Self::System => Time::system_now(),
            Self::Simulated(clock) => Time::from_nanos(
                i64::try_from(roslite_executor::Clock::now(&**clock).as_nanos())
                    .unwrap_or(i64::MAX),
            ),
        }
    }

    pub fn is_simulated(&self) -> bool {
        matches!(self, Self::Simulated(_))
    }
}

/// Converts a `/clock` stamp into the simulated clock's instant (negative times clamp to 0).
pub(crate) fn sim_instant(msg: &TimeMsg) -> Instant {
    Instant::from_nanos(u64::try_from(Time::from_msg(msg).nanos).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_conversion_round_trips_including_negative_times() {
        for nanos in [
            0,
            1,
            1_999_999_999,
            -1,
            -1_000_000_001,
            1_700_000_000_123_456_789,
        ] {
            let t = Time::from_nanos(nanos);
            assert_eq!(Time::from_msg(&t.to_msg()), t, "{nanos}");
        }
        assert_eq!(
            Time::from_nanos(-1).to_msg(),
            TimeMsg {
                sec: -1,
                nanosec: 999_999_999
            }
        );
    }
}
