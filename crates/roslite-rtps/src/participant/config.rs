//! Configuration of a [`Participant`](super::Participant) and of the endpoints it creates.
//!
//! The runtime supplies everything that depends on the host: the GUID prefix (vendor/host
//! bytes plus fresh random bytes, never reused across restarts: Fast-DDS#1534), the locators
//! its transport bound, and where to send SPDP announcements. [`ports`] computes the
//! well-known port numbers of RTPS 2.5 §9.6.1.1.

use std::net::Ipv4Addr;
use std::time::Duration;

use roslite_cdr::key::KeyStruct;

use crate::discovery::{History, LivelinessKind};
use crate::types::{GuidPrefix, Locator};

/// Well-known UDP ports (RTPS 2.5 §9.6.1.1, "Default Port Numbers"; docs/ros2-interop.md §10):
/// `PB + DG·domain + offset (+ PG·participant_id)` with PB = 7400, DG = 250, PG = 2 and
/// offsets d0 = 0, d1 = 10, d2 = 1, d3 = 11.
pub mod ports {
    const PB: u32 = 7400;
    const DG: u32 = 250;
    const PG: u32 = 2;
    const D0: u32 = 0;
    const D1: u32 = 10;
    const D2: u32 = 1;
    const D3: u32 = 11;

    /// The highest domain id whose ports fit in 16 bits (232 with participant ids < 120).
    pub const MAX_DOMAIN_ID: u32 = 232;

    fn port(v: u32) -> Option<u16> {
        u16::try_from(v).ok()
    }

    /// SPDP multicast (and the destination of unicast SPDP probes' multicast twin): 7400 for
    /// domain 0.
    pub fn spdp_multicast(domain_id: u32) -> Option<u16> {
        port(
            PB.checked_add(DG.checked_mul(domain_id)?)?
                .checked_add(D0)?,
        )
    }

    /// Metatraffic (SPDP/SEDP) unicast of participant `participant_id`: 7410, 7412, …
    pub fn metatraffic_unicast(domain_id: u32, participant_id: u32) -> Option<u16> {
        port(
            PB.checked_add(DG.checked_mul(domain_id)?)?
                .checked_add(D1)?
                .checked_add(PG.checked_mul(participant_id)?)?,
        )
    }

    /// User-traffic multicast: 7401 for domain 0.
    pub fn user_multicast(domain_id: u32) -> Option<u16> {
        port(
            PB.checked_add(DG.checked_mul(domain_id)?)?
                .checked_add(D2)?,
        )
    }

    /// User-traffic unicast of participant `participant_id`: 7411, 7413, …
    pub fn user_unicast(domain_id: u32, participant_id: u32) -> Option<u16> {
        port(
            PB.checked_add(DG.checked_mul(domain_id)?)?
                .checked_add(D3)?
                .checked_add(PG.checked_mul(participant_id)?)?,
        )
    }
}

/// The default SPDP multicast group, 239.255.0.1.
pub const SPDP_MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);

/// Timing knobs of the writers a participant creates (user writers and the SEDP announcers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterDefaults {
    /// Period of HEARTBEATs while samples are unacknowledged (Cyclone: 100 ms).
    pub heartbeat_period: Duration,
    /// Delay before answering an ACKNACK with repairs (RTPS 2.5 §8.4.7.1.1: 200 ms; Cyclone
    /// and Fast DDS use less).
    pub nack_response_delay: Duration,
    /// DDS RELIABILITY `max_blocking_time`, announced in SEDP (DDS default 100 ms).
    pub max_blocking_time: Duration,
    /// DATA_FRAG fragment size for samples over the datagram budget.
    pub fragment_size: usize,
    /// Send new samples at once (true) or only announce them with HEARTBEAT (false).
    pub push_mode: bool,
    /// `max_samples` of KEEP_ALL writers.
    pub keep_all_max_samples: usize,
    /// Payload bytes a KEEP_ALL writer's history holds at most
    /// ([`WriterConfig::max_history_bytes`](crate::WriterConfig::max_history_bytes)).
    pub keep_all_max_bytes: usize,
    /// How long after a push the samples a writer keeps writing wait for more, so that a burst
    /// shares datagrams ([`WriterConfig::batch_window`](crate::WriterConfig::batch_window)):
    /// 50 us. A lone sample, a stream slower than one sample per window and a sample written
    /// after input arrived (a reply) go out at once. Zero turns batching off.
    pub batch_window: Duration,
    /// Waiting payload bytes that send a batch at once
    /// ([`WriterConfig::batch_max_bytes`](crate::WriterConfig::batch_max_bytes)).
    pub batch_max_bytes: usize,
}

impl Default for WriterDefaults {
    fn default() -> Self {
        WriterDefaults {
            heartbeat_period: Duration::from_millis(100),
            nack_response_delay: Duration::from_millis(10),
            max_blocking_time: Duration::from_millis(100),
            fragment_size: 8192,
            push_mode: true,
            keep_all_max_samples: 5000,
            keep_all_max_bytes: crate::endpoint::KEEP_ALL_MAX_BYTES,
            batch_window: Duration::from_micros(50),
            batch_max_bytes: crate::endpoint::BATCH_MAX_BYTES,
        }
    }
}

/// Timing knobs and caps of the readers a participant creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaderDefaults {
    /// Delay before answering a HEARTBEAT with ACKNACK (RTPS 2.5 §8.4.11.1: 500 ms; Cyclone's
    /// NackDelay is 100 ms, less keeps repair latency down).
    pub heartbeat_response_delay: Duration,
    /// Concurrent reassemblies per writer (Cyclone: 16 reliable / 4 best effort).
    pub max_samples_in_reassembly_per_writer: usize,
    /// Largest sample a reader reassembles or accepts.
    pub max_sample_size: usize,
    /// A sample whose fragments stop arriving is dropped after this long.
    pub reassembly_timeout: Duration,
    /// Bytes of fragments all reassemblies of one remote participant's writers may hold
    /// together, over all local readers (docs/robustness.md §1).
    pub reassembly_bytes_per_participant: usize,
    /// Bytes of fragments all reassemblies of this participant may hold together. When it is
    /// full, the remote participant holding the most gives up its reassemblies for another
    /// that holds less, so strangers cannot keep it for themselves.
    pub reassembly_bytes_total: usize,
    /// Queue bound of KEEP_ALL readers.
    pub keep_all_max_samples: usize,
}

impl Default for ReaderDefaults {
    fn default() -> Self {
        ReaderDefaults {
            heartbeat_response_delay: Duration::from_millis(5),
            max_samples_in_reassembly_per_writer: 16,
            max_sample_size: 64 * 1024 * 1024,
            reassembly_timeout: Duration::from_secs(10),
            reassembly_bytes_per_participant: 128 * 1024 * 1024,
            reassembly_bytes_total: 256 * 1024 * 1024,
            keep_all_max_samples: 5000,
        }
    }
}

/// Everything a [`Participant`](super::Participant) needs from the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParticipantConfig {
    /// Our GUID prefix: vendor/host bytes plus random bytes, fresh for every run
    /// (docs/ros2-interop.md §13).
    pub guid_prefix: GuidPrefix,
    pub domain_id: u32,
    /// `PID_DOMAIN_TAG`; participants with different tags ignore each other. Empty by default.
    pub domain_tag: String,
    /// The participant index whose ports the transport bound ([`ports`]).
    pub participant_id: u32,
    /// Where we receive SPDP/SEDP: announced as METATRAFFIC_UNICAST/MULTICAST_LOCATOR.
    pub metatraffic_unicast: Vec<Locator>,
    pub metatraffic_multicast: Vec<Locator>,
    /// Where we receive user data: announced as DEFAULT_UNICAST/MULTICAST_LOCATOR.
    pub default_unicast: Vec<Locator>,
    pub default_multicast: Vec<Locator>,
    /// Where to send SPDP announcements: the multicast group, unicast probes of the
    /// well-known metatraffic ports on LOCALHOST, static peers.
    pub spdp_destinations: Vec<Locator>,
    /// Our lease (`PID_PARTICIPANT_LEASE_DURATION`): peers drop us if silent this long.
    pub lease_duration: Duration,
    /// Period of SPDP announcements. Must be well under `lease_duration`.
    pub announce_period: Duration,
    /// The first announcements go out faster: this many, `initial_announce_period` apart
    /// (Fast DDS `initial_announcements`: 5 × 100 ms), so a lost first DATA(p) costs
    /// milliseconds, not a full period (docs/ros2-interop.md §13).
    pub initial_announcements: u32,
    pub initial_announce_period: Duration,
    /// Participant USER_DATA, `enclave=/;` for ROS 2.
    pub user_data: Vec<u8>,
    /// `PID_ENTITY_NAME` (Fast DDS shows it as the participant name).
    pub entity_name: Option<String>,
    /// Remote participants kept at most; beyond, unverified ones are evicted oldest first,
    /// else newcomers are ignored (docs/robustness.md §1, "participant exhaustion").
    pub max_remote_participants: usize,
    /// Remote endpoints kept at most, over all participants; beyond, new ones are ignored.
    pub max_remote_endpoints: usize,
    /// Local writers plus readers.
    pub max_local_endpoints: usize,
    /// Instances of a keyed topic whose newest `depth` samples each KEEP_LAST writer and
    /// reader keeps in full: its history holds at most `depth` x this many samples, and beyond
    /// them the oldest goes whatever its instance ([`Limit::MaxKeptInstances`](super::events::Limit::MaxKeptInstances)).
    pub max_kept_instances: usize,
    /// Largest datagram [`Participant::poll_transmit`](super::Participant::poll_transmit)
    /// returns (UDP over IPv4 allows 65507).
    pub max_datagram_size: usize,
    /// Discovery events kept for [`Participant::poll_event`](super::Participant::poll_event);
    /// beyond, the oldest are dropped and counted.
    pub max_pending_events: usize,
    pub writer_defaults: WriterDefaults,
    pub reader_defaults: ReaderDefaults,
}

impl ParticipantConfig {
    /// A configuration with the defaults and no locators: the runtime fills in the
    /// locators its transport bound and the SPDP destinations.
    pub fn new(guid_prefix: GuidPrefix, domain_id: u32, participant_id: u32) -> Self {
        ParticipantConfig {
            guid_prefix,
            domain_id,
            domain_tag: String::new(),
            participant_id,
            metatraffic_unicast: Vec::new(),
            metatraffic_multicast: Vec::new(),
            default_unicast: Vec::new(),
            default_multicast: Vec::new(),
            spdp_destinations: Vec::new(),
            lease_duration: Duration::from_secs(20),
            announce_period: Duration::from_secs(3),
            initial_announcements: 5,
            initial_announce_period: Duration::from_millis(100),
            user_data: b"enclave=/;".to_vec(),
            entity_name: None,
            max_remote_participants: 256,
            max_remote_endpoints: 16_384,
            max_local_endpoints: 4096,
            max_kept_instances: crate::endpoint::MAX_KEPT_INSTANCES,
            max_datagram_size: 65_000,
            max_pending_events: 65_536,
            writer_defaults: WriterDefaults::default(),
            reader_defaults: ReaderDefaults::default(),
        }
    }

    /// Everything on 127.0.0.1, as `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`
    /// (docs/ros2-interop.md §9): unicast locators on the well-known ports of `participant_id`,
    /// SPDP sent to the metatraffic ports of participant ids `0..localhost_probes` (Linux `lo`
    /// has no multicast by default, so Fast DDS and RustDDS probe the same way).
    pub fn localhost(
        guid_prefix: GuidPrefix,
        domain_id: u32,
        participant_id: u32,
        localhost_probes: u32,
    ) -> Self {
        let mut c = Self::new(guid_prefix, domain_id, participant_id);
        let lo = |port: Option<u16>| port.map(|p| Locator::udpv4(Ipv4Addr::LOCALHOST, p));
        c.metatraffic_unicast
            .extend(lo(ports::metatraffic_unicast(domain_id, participant_id)));
        c.default_unicast
            .extend(lo(ports::user_unicast(domain_id, participant_id)));
        c.spdp_destinations = (0..localhost_probes)
            .filter_map(|i| lo(ports::metatraffic_unicast(domain_id, i)))
            .collect();
        c
    }
}

/// The QoS of a local writer or reader, in ROS terms (docs/ros2-interop.md §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndpointQos {
    /// RELIABLE (true) or BEST_EFFORT.
    pub reliable: bool,
    /// TRANSIENT_LOCAL (true) or VOLATILE.
    pub transient_local: bool,
    pub history: History,
    /// DEADLINE period; `None` = infinite.
    pub deadline: Option<Duration>,
    /// LIFESPAN; `None` = infinite. Announced only (samples are not expired by age).
    pub lifespan: Option<Duration>,
    pub liveliness: LivelinessKind,
    /// Liveliness lease; `None` = infinite.
    pub liveliness_lease: Option<Duration>,
}

impl EndpointQos {
    /// `rmw_qos_profile_default` (`QoS(10)`): KEEP_LAST 10, RELIABLE, VOLATILE.
    pub const fn ros_default() -> Self {
        EndpointQos {
            reliable: true,
            transient_local: false,
            history: History::KeepLast { depth: 10 },
            deadline: None,
            lifespan: None,
            liveliness: LivelinessKind::Automatic,
            liveliness_lease: None,
        }
    }

    /// `rmw_qos_profile_sensor_data`: KEEP_LAST 5, BEST_EFFORT, VOLATILE.
    pub const fn sensor_data() -> Self {
        EndpointQos {
            reliable: false,
            history: History::KeepLast { depth: 5 },
            ..Self::ros_default()
        }
    }

    /// The `ros_discovery_info` writer: RELIABLE, TRANSIENT_LOCAL, KEEP_LAST 1.
    pub const fn discovery_info_writer() -> Self {
        EndpointQos {
            transient_local: true,
            history: History::KeepLast { depth: 1 },
            ..Self::ros_default()
        }
    }

    /// The `ros_discovery_info` reader: RELIABLE, TRANSIENT_LOCAL, KEEP_ALL.
    pub const fn discovery_info_reader() -> Self {
        EndpointQos {
            transient_local: true,
            history: History::KeepAll,
            ..Self::ros_default()
        }
    }
}

impl Default for EndpointQos {
    fn default() -> Self {
        Self::ros_default()
    }
}

/// What to create: a DDS topic name, type name, QoS and USER_DATA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointOptions {
    /// The DDS topic name, e.g. `rt/chatter` ([`crate::discovery::ros::topic_to_dds`]).
    pub topic_name: String,
    /// The DDS type name, e.g. `std_msgs::msg::dds_::String_`.
    pub type_name: String,
    pub qos: EndpointQos,
    /// Endpoint USER_DATA, e.g. `typehash=RIHS01_…;`
    /// ([`crate::discovery::ros::typehash_user_data`]).
    pub user_data: Vec<u8>,
    /// The key members of a keyed type (IDL `@key`): the endpoint then has an entity kind
    /// with key (0x02/0x07 instead of 0x03/0x04, RTPS 2.5 §9.3.1.2), which Fast DDS requires
    /// of both sides of a keyed topic, and a writer sends each sample's key hash. ROS topics
    /// are keyless but for such types (docs/ros2-interop.md §8).
    pub key: Option<&'static KeyStruct>,
    /// A reader's content filter, announced in its SEDP data (`PID_CONTENT_FILTER_PROPERTY`):
    /// a writer may then filter for the reader ([`crate::discovery::content_filter`]). Ignored
    /// for writers.
    pub content_filter: Option<crate::discovery::ContentFilterProperty>,
}

impl EndpointOptions {
    /// Keyless options with the ROS default QoS and no USER_DATA.
    pub fn new(topic_name: &str, type_name: &str) -> Self {
        EndpointOptions {
            topic_name: topic_name.to_owned(),
            type_name: type_name.to_owned(),
            qos: EndpointQos::ros_default(),
            user_data: Vec::new(),
            key: None,
            content_filter: None,
        }
    }

    pub fn with_qos(mut self, qos: EndpointQos) -> Self {
        self.qos = qos;
        self
    }

    pub fn with_user_data(mut self, user_data: Vec<u8>) -> Self {
        self.user_data = user_data;
        self
    }

    /// Options for a keyed type whose key members `key` describes.
    pub fn with_key(mut self, key: Option<&'static KeyStruct>) -> Self {
        self.key = key;
        self
    }

    /// Options for a reader announcing `filter` (see [`Self::content_filter`]).
    pub fn with_content_filter(
        mut self,
        filter: Option<crate::discovery::ContentFilterProperty>,
    ) -> Self {
        self.content_filter = filter;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_ports() {
        assert_eq!(ports::spdp_multicast(0), Some(7400));
        assert_eq!(ports::user_multicast(0), Some(7401));
        assert_eq!(ports::metatraffic_unicast(0, 0), Some(7410));
        assert_eq!(ports::metatraffic_unicast(0, 1), Some(7412));
        assert_eq!(ports::user_unicast(0, 1), Some(7413));
        assert_eq!(ports::spdp_multicast(1), Some(7650));
        assert_eq!(
            ports::metatraffic_unicast(ports::MAX_DOMAIN_ID, 0),
            Some(65410)
        );
        assert_eq!(ports::spdp_multicast(300), None);
        assert_eq!(ports::metatraffic_unicast(0, u32::MAX), None);
    }

    #[test]
    fn localhost_config() {
        let c = ParticipantConfig::localhost(GuidPrefix([1; 12]), 0, 2, 4);
        assert_eq!(
            c.metatraffic_unicast,
            vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7414)]
        );
        assert_eq!(
            c.default_unicast,
            vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7415)]
        );
        assert_eq!(c.spdp_destinations.len(), 4);
        assert_eq!(c.user_data, b"enclave=/;");
    }
}
