//! The caps on what the RTPS network holds, and the environment variables that raise them.
//!
//! Each cap protects this process from a network that asks too much of it (a flood of
//! participants or endpoints, fragments of huge samples, docs/robustness.md §1), and each is a
//! ceiling a large ROS graph can honestly reach. Reaching one is not an error: the participant
//! keeps working with what it holds and refuses the rest, and the runtime says so once, naming
//! the variable that raises it (`backends/rtps/events.rs`).
//!
//! | variable                                   | cap                                   | default |
//! |--------------------------------------------|---------------------------------------|---------|
//! | `ROSLITE_MAX_REMOTE_PARTICIPANTS`           | participants discovered               | 256     |
//! | `ROSLITE_MAX_REMOTE_ENDPOINTS`              | endpoints of all of them              | 16384   |
//! | `ROSLITE_MAX_LOCAL_ENDPOINTS`               | this context's RTPS writers + readers | 4096    |
//! | `ROSLITE_REASSEMBLY_MAX_BYTES`              | fragments held, all peers             | 256M    |
//! | `ROSLITE_REASSEMBLY_MAX_BYTES_PER_PARTICIPANT` | fragments held, one peer           | 128M    |
//! | `ROSLITE_MAX_KEPT_INSTANCES`                | instances of a keyed topic whose newest `depth` messages a KEEP_LAST history keeps | 1024 |
//!
//! A value is a count, optionally with the suffix K, M or G (powers of 1024), from 1 to 1 Ti.
//! A malformed value fails context creation with [`InitError::InvalidLimit`].
//!
//! The kept instances bound every keyed KEEP_LAST history of the process alike: the RTPS
//! writers' and readers', subscriptions' queues and transient-local publishers' histories in
//! the process.

use roslite_rtps::participant::{Limit, ParticipantConfig};

use crate::vocabulary::config::InitError;
use crate::vocabulary::qos::parse_keep_all_max_bytes;

/// The caps, as the environment sets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkLimits {
    pub max_remote_participants: usize,
    pub max_remote_endpoints: usize,
    pub max_local_endpoints: usize,
    pub reassembly_bytes_total: usize,
    pub reassembly_bytes_per_participant: usize,
    pub max_kept_instances: usize,
}

pub const MAX_REMOTE_PARTICIPANTS_ENV: &str = "ROSLITE_MAX_REMOTE_PARTICIPANTS";
pub const MAX_REMOTE_ENDPOINTS_ENV: &str = "ROSLITE_MAX_REMOTE_ENDPOINTS";
pub const MAX_LOCAL_ENDPOINTS_ENV: &str = "ROSLITE_MAX_LOCAL_ENDPOINTS";
pub const REASSEMBLY_MAX_BYTES_ENV: &str = "ROSLITE_REASSEMBLY_MAX_BYTES";
pub const REASSEMBLY_MAX_BYTES_PER_PARTICIPANT_ENV: &str =
    "ROSLITE_REASSEMBLY_MAX_BYTES_PER_PARTICIPANT";
pub const MAX_KEPT_INSTANCES_ENV: &str = "ROSLITE_MAX_KEPT_INSTANCES";

/// The instances of a keyed topic whose newest `depth` messages a KEEP_LAST history of this
/// process keeps ([`MAX_KEPT_INSTANCES_ENV`], read once; a malformed value keeps the default,
/// and fails context creation).
pub(crate) fn kept_instances() -> usize {
    static KEPT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *KEPT.get_or_init(|| {
        NetworkLimits::from_env().map_or(roslite_rtps::endpoint::MAX_KEPT_INSTANCES, |l| {
            l.max_kept_instances
        })
    })
}

impl Default for NetworkLimits {
    /// The RTPS participant's own defaults.
    fn default() -> Self {
        let c = ParticipantConfig::new(roslite_rtps::types::GuidPrefix([0; 12]), 0, 0);
        Self {
            max_remote_participants: c.max_remote_participants,
            max_remote_endpoints: c.max_remote_endpoints,
            max_local_endpoints: c.max_local_endpoints,
            reassembly_bytes_total: c.reader_defaults.reassembly_bytes_total,
            reassembly_bytes_per_participant: c.reader_defaults.reassembly_bytes_per_participant,
            max_kept_instances: c.max_kept_instances,
        }
    }
}

impl NetworkLimits {
    /// The caps from the process environment.
    ///
    /// # Errors
    /// [`InitError::InvalidLimit`] naming the first malformed variable.
    pub fn from_env() -> Result<Self, InitError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The caps from `get(variable)`; unset or empty variables keep the defaults.
    ///
    /// # Errors
    /// [`InitError::InvalidLimit`] naming the first malformed variable.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, InitError> {
        let mut limits = Self::default();
        for (name, slot) in [
            (
                MAX_REMOTE_PARTICIPANTS_ENV,
                &mut limits.max_remote_participants,
            ),
            (MAX_REMOTE_ENDPOINTS_ENV, &mut limits.max_remote_endpoints),
            (MAX_LOCAL_ENDPOINTS_ENV, &mut limits.max_local_endpoints),
            (REASSEMBLY_MAX_BYTES_ENV, &mut limits.reassembly_bytes_total),
            (
                REASSEMBLY_MAX_BYTES_PER_PARTICIPANT_ENV,
                &mut limits.reassembly_bytes_per_participant,
            ),
            (MAX_KEPT_INSTANCES_ENV, &mut limits.max_kept_instances),
        ] {
            match get(name) {
                Some(text) if !text.trim().is_empty() => {
                    *slot = parse_keep_all_max_bytes(&text).ok_or(InitError::InvalidLimit {
                        variable: name,
                        value: text,
                    })?;
                }
                _ => {}
            }
        }
        Ok(limits)
    }

    /// Puts the caps into a participant's configuration.
    pub(crate) fn apply(&self, config: &mut ParticipantConfig) {
        config.max_remote_participants = self.max_remote_participants;
        config.max_remote_endpoints = self.max_remote_endpoints;
        config.max_local_endpoints = self.max_local_endpoints;
        config.reader_defaults.reassembly_bytes_total = self.reassembly_bytes_total;
        config.reader_defaults.reassembly_bytes_per_participant =
            self.reassembly_bytes_per_participant;
        config.max_kept_instances = self.max_kept_instances;
    }
}

/// The variable that raises a cap the RTPS participant reported reaching.
pub(crate) fn variable_of(limit: Limit) -> &'static str {
    match limit {
        Limit::MaxRemoteEndpoints => MAX_REMOTE_ENDPOINTS_ENV,
        Limit::MaxRemoteParticipants => MAX_REMOTE_PARTICIPANTS_ENV,
        Limit::ReassemblyBytesPerParticipant => REASSEMBLY_MAX_BYTES_PER_PARTICIPANT_ENV,
        Limit::ReassemblyBytesTotal => REASSEMBLY_MAX_BYTES_ENV,
        Limit::MaxKeptInstances => MAX_KEPT_INSTANCES_ENV,
        // A cap added to the participant later: its configuration field.
        _ => limit.setting(),
    }
}

/// What reaching a cap means for the graph, in the warning.
pub(crate) fn consequence_of(limit: Limit) -> &'static str {
    match limit {
        Limit::MaxRemoteParticipants => {
            "further participants are ignored (or ones that never answered make room); this \
             process keeps talking to those it holds"
        }
        Limit::MaxRemoteEndpoints => {
            "further remote endpoints are ignored; those already known keep working"
        }
        Limit::ReassemblyBytesPerParticipant => {
            "fragments beyond it from that participant are dropped (a reliable writer repairs \
             them later); smaller samples keep flowing"
        }
        Limit::ReassemblyBytesTotal => {
            "the participant holding the most fragments gives them up for others; smaller \
             samples keep flowing"
        }
        Limit::MaxKeptInstances => {
            "a keyed topic's keep-last history that holds `depth` messages of that many keys \
             drops its oldest message, whatever its key, for a new key's"
        }
        _ => "further ones are refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_come_from_the_environment_and_malformed_ones_are_named() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(
            NetworkLimits::from_vars(vars(&[])).unwrap(),
            NetworkLimits::default()
        );
        let set = NetworkLimits::from_vars(vars(&[
            (MAX_REMOTE_PARTICIPANTS_ENV, "1024"),
            (REASSEMBLY_MAX_BYTES_ENV, "1G"),
            (MAX_LOCAL_ENDPOINTS_ENV, " "),
            (MAX_KEPT_INSTANCES_ENV, "4K"),
        ]))
        .unwrap();
        assert_eq!(set.max_remote_participants, 1024);
        assert_eq!(set.max_kept_instances, 4096);
        let mut config = ParticipantConfig::new(roslite_rtps::types::GuidPrefix([0; 12]), 0, 0);
        set.apply(&mut config);
        assert_eq!(config.max_kept_instances, 4096);
        assert_eq!(set.reassembly_bytes_total, 1 << 30);
        assert_eq!(
            set.max_local_endpoints,
            NetworkLimits::default().max_local_endpoints
        );
        let err =
            NetworkLimits::from_vars(vars(&[(MAX_REMOTE_ENDPOINTS_ENV, "lots")])).unwrap_err();
        assert!(
            err.to_string().contains(MAX_REMOTE_ENDPOINTS_ENV) && err.to_string().contains("lots"),
            "{err}"
        );
        assert_eq!(
            variable_of(Limit::MaxRemoteParticipants),
            MAX_REMOTE_PARTICIPANTS_ENV
        );
        assert_eq!(variable_of(Limit::MaxKeptInstances), MAX_KEPT_INSTANCES_ENV);
    }
}
