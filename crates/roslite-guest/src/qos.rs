//! QoS profiles, as `roslite::QosProfile` has them, and their `roslite_qos` form.

use std::time::Duration;

use crate::error::{Error, ErrorCode};
use crate::sys::RawQos;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum History {
    /// Keep the most recent `depth` samples.
    KeepLast(usize),
    KeepAll,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reliability {
    BestEffort,
    Reliable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Durability {
    Volatile,
    TransientLocal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Liveliness {
    Automatic,
    ManualByTopic,
}

/// A complete QoS profile. Durations of `None` mean "infinite". The host validates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QosProfile {
    pub history: History,
    pub reliability: Reliability,
    pub durability: Durability,
    pub deadline: Option<Duration>,
    pub lifespan: Option<Duration>,
    pub liveliness: Liveliness,
    pub liveliness_lease: Option<Duration>,
}

impl QosProfile {
    /// `rmw_qos_profile_default`: keep last 10, reliable, volatile.
    pub const DEFAULT: QosProfile = QosProfile {
        history: History::KeepLast(10),
        reliability: Reliability::Reliable,
        durability: Durability::Volatile,
        deadline: None,
        lifespan: None,
        liveliness: Liveliness::Automatic,
        liveliness_lease: None,
    };

    /// `rmw_qos_profile_sensor_data`: keep last 5, best effort, volatile.
    pub const SENSOR_DATA: QosProfile = QosProfile {
        history: History::KeepLast(5),
        reliability: Reliability::BestEffort,
        ..Self::DEFAULT
    };

    /// `rmw_qos_profile_services_default`: keep last 10, reliable, volatile.
    pub const SERVICES_DEFAULT: QosProfile = Self::DEFAULT;

    /// `rmw_qos_profile_parameters`: keep last 1000, reliable, volatile.
    pub const PARAMETERS: QosProfile = QosProfile {
        history: History::KeepLast(1000),
        ..Self::DEFAULT
    };

    pub const fn keep_last(depth: usize) -> Self {
        QosProfile {
            history: History::KeepLast(depth),
            ..Self::DEFAULT
        }
    }

    pub fn reliable(mut self) -> Self {
        self.reliability = Reliability::Reliable;
        self
    }

    pub fn best_effort(mut self) -> Self {
        self.reliability = Reliability::BestEffort;
        self
    }

    pub fn transient_local(mut self) -> Self {
        self.durability = Durability::TransientLocal;
        self
    }

    pub fn volatile(mut self) -> Self {
        self.durability = Durability::Volatile;
        self
    }

    pub fn keep_all(mut self) -> Self {
        self.history = History::KeepAll;
        self
    }

    pub fn deadline(mut self, period: Duration) -> Self {
        self.deadline = Some(period);
        self
    }

    pub fn lifespan(mut self, lifespan: Duration) -> Self {
        self.lifespan = Some(lifespan);
        self
    }

    pub fn liveliness(mut self, kind: Liveliness, lease: Option<Duration>) -> Self {
        self.liveliness = kind;
        self.liveliness_lease = lease;
        self
    }

    /// The `roslite_qos` of this profile. The C ABI writes "infinite" as 0 ns, so a zero
    /// duration (which roslite refuses) would silently turn infinite there: it is refused here.
    pub(crate) fn to_raw(self) -> Result<RawQos, Error> {
        for (policy, duration) in [
            ("deadline", self.deadline),
            ("lifespan", self.lifespan),
            ("liveliness lease", self.liveliness_lease),
        ] {
            if duration == Some(Duration::ZERO) {
                return Err(Error::new(
                    ErrorCode::InvalidQos,
                    format!("QoS {policy} of zero: use None for infinite"),
                ));
            }
        }
        let (history, depth) = match self.history {
            // A depth beyond u32 is no real queue; the host refuses 0, not a saturated one.
            History::KeepLast(depth) => (0, u32::try_from(depth).unwrap_or(u32::MAX)),
            History::KeepAll => (1, 0),
        };
        Ok(RawQos {
            history,
            depth,
            reliability: match self.reliability {
                Reliability::Reliable => 0,
                Reliability::BestEffort => 1,
            },
            durability: match self.durability {
                Durability::Volatile => 0,
                Durability::TransientLocal => 1,
            },
            deadline_ns: duration_ns(self.deadline),
            lifespan_ns: duration_ns(self.lifespan),
            liveliness: match self.liveliness {
                Liveliness::Automatic => 0,
                Liveliness::ManualByTopic => 1,
            },
            liveliness_lease_ns: duration_ns(self.liveliness_lease),
        })
    }
}

impl Default for QosProfile {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// As in rclcpp, a history depth alone is a profile.
impl From<usize> for QosProfile {
    fn from(depth: usize) -> Self {
        Self::keep_last(depth)
    }
}

/// `None` (infinite) is the C ABI's 0 ns.
fn duration_ns(duration: Option<Duration>) -> i64 {
    duration.map_or(0, nanoseconds)
}

/// A duration as the C ABI's signed nanoseconds, saturating.
pub(crate) fn nanoseconds(duration: Duration) -> i64 {
    i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_becomes_the_c_numbering() {
        let raw = QosProfile::SENSOR_DATA
            .transient_local()
            .deadline(Duration::from_millis(5))
            .to_raw()
            .unwrap();
        assert_eq!((raw.history, raw.depth), (0, 5));
        assert_eq!(raw.reliability, 1);
        assert_eq!(raw.durability, 1);
        assert_eq!(raw.deadline_ns, 5_000_000);
        assert_eq!(raw.lifespan_ns, 0);
        assert_eq!(QosProfile::from(7).keep_all().to_raw().unwrap().history, 1);
        let zero_deadline = QosProfile::DEFAULT.deadline(Duration::ZERO).to_raw();
        assert_eq!(zero_deadline.unwrap_err().code, ErrorCode::InvalidQos);
    }
}
