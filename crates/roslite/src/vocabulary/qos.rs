//! Quality of service: profiles, the standard ROS 2 presets, and request-vs-offered matching.
//!
//! Presets follow `ros2/rmw: rmw/include/rmw/qos_profiles.h`; compatibility follows
//! `ros2/rmw_dds_common: src/qos.cpp` (`qos_profile_check_compatible`), which applies the DDS 1.4
//! §2.2.3 request-vs-offered rules.

use std::fmt;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum History {
    /// Keep the most recent `depth` samples.
    KeepLast(usize),
    /// Keep every sample until it is taken (bounded by resource limits).
    KeepAll,
}

/// How long a publish waits for a reliable keep-all reader with no room before it gives up on
/// it (DDS `RELIABILITY.max_blocking_time`, 100 ms by default, as Fast DDS and Cyclone DDS
/// have it; ROS 2 does not expose it).
pub(crate) const MAX_BLOCKING_TIME: std::time::Duration = std::time::Duration::from_millis(100);

/// How many messages a keep-all subscription holds for its callback before the paths stop
/// handing it more (DDS `RESOURCE_LIMITS.max_samples`, 5000 as Fast DDS has it, and the same
/// bound as a keep-all publisher's history). Nothing is dropped silently: the network leaves
/// the reader's samples unacknowledged, a shared-memory or Unix-socket link stops reading,
/// and a publisher in the same process waits for room, so the publisher is held back and its
/// publish times out after `max_blocking_time`. A best-effort subscription in the same
/// process loses (and counts) what finds no room.
pub const KEEP_ALL_MAX_SAMPLES: usize = 5000;

/// How many payload bytes a reliable keep-all publisher holds at most for a subscriber that
/// has not taken or acknowledged them (DDS `RESOURCE_LIMITS`, in bytes): the RTPS writer's
/// history, and what a shared-memory or Unix-socket writer queued for one reader. Beyond it
/// a publish waits `max_blocking_time` and then times out, as at [`KEEP_ALL_MAX_SAMPLES`].
/// One message larger than the bound still goes out when nothing is held. 64 MiB by
/// default; [`KEEP_ALL_MAX_BYTES_ENV`] changes it for the process.
pub const KEEP_ALL_MAX_BYTES: usize = 64 << 20;

/// The environment variable that sets [`KEEP_ALL_MAX_BYTES`] for every publisher created
/// after: bytes, or a number with the suffix `K`, `M` or `G` (KiB, MiB, GiB), at least 1 and
/// at most 1 TiB (`ROSLITE_KEEP_ALL_MAX_BYTES=256M`). A malformed value fails context
/// creation.
pub const KEEP_ALL_MAX_BYTES_ENV: &str = "ROSLITE_KEEP_ALL_MAX_BYTES";

/// Parses the [`KEEP_ALL_MAX_BYTES_ENV`] syntax; `None` when malformed or out of range.
pub fn parse_keep_all_max_bytes(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (at, 'K' | 'k') => (&text[..at], 10),
        (at, 'M' | 'm') => (&text[..at], 20),
        (at, 'G' | 'g') => (&text[..at], 30),
        _ => (text, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    let bytes = n.checked_mul(1u64 << shift)?;
    (1..=1u64 << 40)
        .contains(&bytes)
        .then(|| usize::try_from(bytes).ok())
        .flatten()
}

/// [`KEEP_ALL_MAX_BYTES`], or what [`KEEP_ALL_MAX_BYTES_ENV`] sets.
///
/// # Errors
/// [`InitError::InvalidKeepAllMaxBytes`](crate::InitError::InvalidKeepAllMaxBytes) with the
/// malformed value.
pub fn keep_all_max_bytes() -> Result<usize, crate::vocabulary::config::InitError> {
    match std::env::var(KEEP_ALL_MAX_BYTES_ENV) {
        Ok(text) if !text.trim().is_empty() => parse_keep_all_max_bytes(&text)
            .ok_or(crate::vocabulary::config::InitError::InvalidKeepAllMaxBytes(text)),
        _ => Ok(KEEP_ALL_MAX_BYTES),
    }
}

impl History {
    /// Appends `item`, first dropping the oldest entries a KEEP_LAST queue has no room for;
    /// returns how many were dropped.
    pub(crate) fn push<T>(self, queue: &mut std::collections::VecDeque<T>, item: T) -> u64 {
        let mut dropped = 0;
        if let History::KeepLast(depth) = self {
            while queue.len() >= depth {
                queue.pop_front();
                dropped += 1;
            }
        }
        queue.push_back(item);
        dropped
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reliability {
    BestEffort,
    Reliable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Durability {
    Volatile,
    TransientLocal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Liveliness {
    Automatic,
    ManualByTopic,
}

/// A complete QoS profile. Durations of `None` mean "infinite" (the DDS default).
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

    /// `rmw_qos_profile_parameter_events`: keep last 1000, reliable, volatile.
    pub const PARAMETER_EVENTS: QosProfile = Self::PARAMETERS;

    /// `rmw_qos_profile_system_default`. ROS leaves these to the middleware; roslite's
    /// middleware defaults are the DDS writer defaults: keep last 1, reliable, volatile.
    pub const SYSTEM_DEFAULT: QosProfile = QosProfile {
        history: History::KeepLast(1),
        ..Self::DEFAULT
    };

    /// rosout's profile (`ros2/rcl: logging_rosout.h`): keep last 1000, reliable,
    /// transient local, lifespan 10 s.
    pub const ROSOUT: QosProfile = QosProfile {
        history: History::KeepLast(1000),
        durability: Durability::TransientLocal,
        lifespan: Some(Duration::from_secs(10)),
        ..Self::DEFAULT
    };

    /// `rclcpp::QoS(depth)`: the default profile with another depth.
    pub const fn keep_last(depth: usize) -> Self {
        QosProfile {
            history: History::KeepLast(depth),
            ..Self::DEFAULT
        }
    }

    /// The standard profiles by the names the `ros2` CLI accepts for `--qos-profile`.
    pub fn by_name(name: &str) -> Option<Self> {
        Some(match name {
            "default" => Self::DEFAULT,
            "sensor_data" => Self::SENSOR_DATA,
            "services_default" => Self::SERVICES_DEFAULT,
            "parameters" => Self::PARAMETERS,
            "parameter_events" => Self::PARAMETER_EVENTS,
            "system_default" => Self::SYSTEM_DEFAULT,
            "rosout" => Self::ROSOUT,
            _ => return None,
        })
    }

    pub const PROFILE_NAMES: &'static [&'static str] = &[
        "default",
        "sensor_data",
        "services_default",
        "parameters",
        "parameter_events",
        "system_default",
        "rosout",
    ];

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

    /// Checks values that make no sense on their own.
    ///
    /// # Errors
    /// [`QosError`] naming the policy and how to fix it.
    pub fn validate(&self) -> Result<(), QosError> {
        if self.history == History::KeepLast(0) {
            return Err(QosError::ZeroDepth);
        }
        for (policy, value) in [
            (QosPolicyKind::Deadline, self.deadline),
            (QosPolicyKind::Lifespan, self.lifespan),
            (QosPolicyKind::Liveliness, self.liveliness_lease),
        ] {
            if value == Some(Duration::ZERO) {
                return Err(QosError::ZeroDuration(policy));
            }
        }
        Ok(())
    }
}

impl Default for QosProfile {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `create_publisher(topic, 10)` as in rclcpp: a depth means the default profile with it.
impl From<usize> for QosProfile {
    fn from(depth: usize) -> Self {
        Self::keep_last(depth)
    }
}

/// A QoS profile that is invalid on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QosError {
    ZeroDepth,
    ZeroDuration(QosPolicyKind),
}

impl fmt::Display for QosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroDepth => f.write_str(
                "history KEEP_LAST with depth 0 can hold no sample; use a depth of at least 1 \
                 or KEEP_ALL",
            ),
            Self::ZeroDuration(policy) => write!(
                f,
                "{policy} of zero is invalid; leave it unset for infinite, or give a positive \
                 duration"
            ),
        }
    }
}

impl std::error::Error for QosError {}

/// A QoS policy, as named in incompatibility reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QosPolicyKind {
    /// Only from remote peers: they announce a data representation we do not speak.
    DataRepresentation,
    Deadline,
    Durability,
    Lifespan,
    Liveliness,
    /// A policy the RTPS layer reports that has no name here yet.
    Other,
    /// Only from remote peers: EXCLUSIVE ownership on one side.
    Ownership,
    Reliability,
}

impl fmt::Display for QosPolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::DataRepresentation => "DATA_REPRESENTATION",
            Self::Deadline => "DEADLINE",
            Self::Durability => "DURABILITY",
            Self::Lifespan => "LIFESPAN",
            Self::Liveliness => "LIVELINESS",
            Self::Other => "UNKNOWN",
            Self::Ownership => "OWNERSHIP",
            Self::Reliability => "RELIABILITY",
        })
    }
}

/// Whether a publisher offering `offered` can serve a subscription requesting `requested`.
/// Returns the first incompatible policy, in the order rmw_dds_common checks them.
pub fn check_compatible(offered: &QosProfile, requested: &QosProfile) -> Result<(), QosPolicyKind> {
    if offered.reliability == Reliability::BestEffort
        && requested.reliability == Reliability::Reliable
    {
        return Err(QosPolicyKind::Reliability);
    }
    if offered.durability == Durability::Volatile
        && requested.durability == Durability::TransientLocal
    {
        return Err(QosPolicyKind::Durability);
    }
    // A finite requested period needs an offered period at most as long; infinite offers
    // nothing.
    let shorter =
        |requested: Option<Duration>, offered: Option<Duration>| match (requested, offered) {
            (Some(_), None) => true,
            (Some(r), Some(o)) => r < o,
            (None, _) => false,
        };
    if shorter(requested.deadline, offered.deadline) {
        return Err(QosPolicyKind::Deadline);
    }
    if offered.liveliness == Liveliness::Automatic
        && requested.liveliness == Liveliness::ManualByTopic
    {
        return Err(QosPolicyKind::Liveliness);
    }
    if shorter(requested.liveliness_lease, offered.liveliness_lease) {
        return Err(QosPolicyKind::Liveliness);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_all_max_bytes_parses_counts_and_binary_suffixes() {
        assert_eq!(parse_keep_all_max_bytes("1048576"), Some(1 << 20));
        assert_eq!(parse_keep_all_max_bytes(" 256M "), Some(256 << 20));
        assert_eq!(parse_keep_all_max_bytes("4k"), Some(4096));
        assert_eq!(parse_keep_all_max_bytes("1G"), Some(1 << 30));
        for bad in ["", "0", "-1", "12MB", "M", "2000G", "1.5M"] {
            assert_eq!(parse_keep_all_max_bytes(bad), None, "{bad:?}");
        }
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn presets() {
        assert_eq!(QosProfile::SENSOR_DATA.history, History::KeepLast(5));
        assert_eq!(QosProfile::SENSOR_DATA.reliability, Reliability::BestEffort);
        assert_eq!(QosProfile::PARAMETERS.history, History::KeepLast(1000));
        assert_eq!(QosProfile::from(7), QosProfile::keep_last(7));
        for name in QosProfile::PROFILE_NAMES {
            assert!(QosProfile::by_name(name).is_some());
        }
    }

    #[test]
    fn request_vs_offered() {
        let d = QosProfile::DEFAULT;
        assert_eq!(check_compatible(&d, &d), Ok(()));
        assert_eq!(
            check_compatible(&d.best_effort(), &d),
            Err(QosPolicyKind::Reliability)
        );
        assert_eq!(check_compatible(&d, &d.best_effort()), Ok(()));
        assert_eq!(
            check_compatible(&d, &d.transient_local()),
            Err(QosPolicyKind::Durability)
        );
        assert_eq!(check_compatible(&d.transient_local(), &d), Ok(()));
        assert_eq!(
            check_compatible(&d, &d.deadline(S)),
            Err(QosPolicyKind::Deadline)
        );
        assert_eq!(
            check_compatible(&d.deadline(2 * S), &d.deadline(S)),
            Err(QosPolicyKind::Deadline)
        );
        assert_eq!(check_compatible(&d.deadline(S), &d.deadline(2 * S)), Ok(()));
        assert_eq!(check_compatible(&d.deadline(S), &d), Ok(()));
        let manual = d.liveliness(Liveliness::ManualByTopic, None);
        assert_eq!(
            check_compatible(&d, &manual),
            Err(QosPolicyKind::Liveliness)
        );
        assert_eq!(check_compatible(&manual, &d), Ok(()));
        let lease = |s| d.liveliness(Liveliness::Automatic, Some(s));
        assert_eq!(
            check_compatible(&d, &lease(S)),
            Err(QosPolicyKind::Liveliness)
        );
        assert_eq!(
            check_compatible(&lease(2 * S), &lease(S)),
            Err(QosPolicyKind::Liveliness)
        );
        assert_eq!(check_compatible(&lease(S), &lease(2 * S)), Ok(()));
    }

    #[test]
    fn invalid_profiles_say_how_to_fix() {
        let e = QosProfile::keep_last(0).validate().unwrap_err();
        assert!(e.to_string().contains("depth of at least 1"));
        let e = QosProfile::DEFAULT
            .deadline(Duration::ZERO)
            .validate()
            .unwrap_err();
        assert!(e.to_string().starts_with("DEADLINE of zero"), "{e}");
    }
}
