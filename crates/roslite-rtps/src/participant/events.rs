//! What a [`Participant`](super::Participant) reports: handles, events, errors and counters.

use std::fmt;

use crate::discovery::matching::QosPolicy;
use crate::endpoint::ReceivedSample;
use crate::error::EmitError;
use crate::receiver::ReceiveStats;
use crate::types::{EntityId, Guid, GuidPrefix};

/// A local writer. Its entity id is unique within the participant and never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriterId(pub(crate) EntityId);

/// A local reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReaderId(pub(crate) EntityId);

impl WriterId {
    pub fn entity_id(self) -> EntityId {
        self.0
    }

    /// The GUID of this writer in participant `prefix` (its ROS "gid").
    pub fn guid(self, prefix: GuidPrefix) -> Guid {
        Guid::new(prefix, self.0)
    }
}

impl ReaderId {
    pub fn entity_id(self) -> EntityId {
        self.0
    }

    /// The GUID of this reader in participant `prefix`.
    pub fn guid(self, prefix: GuidPrefix) -> Guid {
        Guid::new(prefix, self.0)
    }
}

/// A local writer or reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EndpointRef {
    Reader(ReaderId),
    Writer(WriterId),
}

/// Something the application (or the runtime's graph cache) should know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A remote participant announced itself for the first time (or again after it was lost).
    ParticipantDiscovered(Guid),
    /// A remote participant left: it disposed its SPDP data, its lease ran out, or it was
    /// evicted to stay within `max_remote_participants`. Its endpoints were unmatched first.
    ParticipantLost(Guid),
    /// Local reader `reader` now receives from remote writer `remote`.
    WriterMatched { reader: ReaderId, remote: Guid },
    /// Local writer `writer` now sends to remote reader `remote`.
    ReaderMatched { writer: WriterId, remote: Guid },
    /// The remote writer is gone (deleted, its participant lost, or its QoS changed).
    WriterUnmatched { reader: ReaderId, remote: Guid },
    /// The remote reader is gone.
    ReaderUnmatched { writer: WriterId, remote: Guid },
    /// A remote endpoint on the same topic and type cannot be matched: `policy` is what the
    /// reader requests and the writer does not offer. Reported once per pair.
    IncompatibleQos {
        local: EndpointRef,
        remote: Guid,
        policy: QosPolicy,
    },
    /// A sample for a local reader.
    Sample {
        reader: ReaderId,
        sample: ReceivedSample,
    },
    /// The set of remote endpoints (or remote participants' data) changed: refresh graph
    /// queries such as `ros2 topic list`. Coalesced: at most one per input.
    RemoteEndpointChanged,
    /// DDS LIVELINESS_CHANGED (DDS 1.4 §2.2.4.1): matched remote writer `writer` of local
    /// reader `reader` became not alive (its liveliness lease ran out without an assertion)
    /// or alive again (RTPS 2.5 §8.4.13). The counts are over the writers matched with
    /// `reader` after the change; a writer counts as alive from its match on, and writers
    /// with an infinite lease are always alive. Unmatching changes the counts silently.
    LivelinessChanged {
        reader: ReaderId,
        writer: Guid,
        alive: bool,
        alive_count: u32,
        not_alive_count: u32,
    },
    /// DDS LIVELINESS_LOST: local MANUAL_BY_PARTICIPANT or MANUAL_BY_TOPIC writer `writer`
    /// did not assert its liveliness (by writing or `assert_*_liveliness`) within its lease.
    /// Reported once per lapse.
    LivelinessLost { writer: WriterId },
    /// A cap on what peers can make us hold was reached: what it protects is now refused or
    /// evicted (and counted in [`ParticipantStats`]). Reported once per cap and participant,
    /// so the runtime can say which setting to raise (docs/robustness.md §1).
    LimitReached { limit: Limit, value: usize },
}

/// A configured cap on what remote peers can make a participant hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// `ParticipantConfig::max_remote_endpoints`: new remote endpoints are ignored.
    MaxRemoteEndpoints,
    /// `ParticipantConfig::max_remote_participants`: unverified ones are evicted, else new
    /// ones ignored.
    MaxRemoteParticipants,
    /// `ReaderDefaults::reassembly_bytes_per_participant`: fragments of that participant are
    /// dropped.
    ReassemblyBytesPerParticipant,
    /// `ReaderDefaults::reassembly_bytes_total`: the participant holding the most gives way.
    ReassemblyBytesTotal,
    /// `ParticipantConfig::max_kept_instances`: a keyed topic's KEEP_LAST writer or reader
    /// held `depth` samples of that many instances, and dropped its oldest sample for a new
    /// instance's.
    MaxKeptInstances,
}

impl Limit {
    /// The configuration field that sets it.
    pub fn setting(self) -> &'static str {
        match self {
            Limit::MaxRemoteEndpoints => "ParticipantConfig::max_remote_endpoints",
            Limit::MaxRemoteParticipants => "ParticipantConfig::max_remote_participants",
            Limit::ReassemblyBytesPerParticipant => {
                "ReaderDefaults::reassembly_bytes_per_participant"
            }
            Limit::ReassemblyBytesTotal => "ReaderDefaults::reassembly_bytes_total",
            Limit::MaxKeptInstances => "ParticipantConfig::max_kept_instances",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Limit::MaxRemoteEndpoints => "remote endpoints",
            Limit::MaxRemoteParticipants => "remote participants",
            Limit::ReassemblyBytesPerParticipant => "bytes in reassembly for one participant",
            Limit::ReassemblyBytesTotal => "bytes in reassembly",
            Limit::MaxKeptInstances => "instances kept per keyed topic",
        };
        write!(f, "{what} (cap {})", self.setting())
    }
}

/// Why [`Participant::new`](super::Participant::new) refused a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `max_datagram_size` leaves no room for a sample next to the RTPS framing.
    DatagramTooSmall { size: usize, min: usize },
    /// Our SPDP data cannot be encoded (a NUL in the entity name, oversize USER_DATA).
    Encode(EmitError),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DatagramTooSmall { size, min } => write!(
                f,
                "max_datagram_size {size} is below the minimum of {min} bytes"
            ),
            Self::Encode(e) => write!(f, "participant data cannot be encoded: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Why a writer or reader could not be created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CreateError {
    /// `max_local_endpoints` writers and readers exist already.
    TooManyEndpoints { max: usize },
    /// All 2^24 entity keys were used (keys are never reused).
    EntityIdsExhausted,
    /// Empty topic or type name.
    EmptyName,
    /// The SEDP announcement cannot be encoded (a NUL in a name, a name or USER_DATA too long).
    Encode(EmitError),
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyEndpoints { max } => {
                write!(f, "the participant already has {max} endpoints")
            }
            Self::EntityIdsExhausted => f.write_str("all entity ids of the participant are used"),
            Self::EmptyName => f.write_str("topic and type names must not be empty"),
            Self::Encode(e) => write!(f, "endpoint data cannot be encoded: {e}"),
        }
    }
}

impl std::error::Error for CreateError {}

/// Why [`Participant::write`](super::Participant::write) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// No such writer (deleted, or from another participant).
    UnknownWriter,
    /// The writer refused the sample (history full, payload without encapsulation, ...).
    Writer(crate::endpoint::WriteError),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownWriter => f.write_str("unknown writer"),
            Self::Writer(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteError {}

/// SPDP input, by outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpdpStats {
    /// DATA(p) announcements accepted (new and known participants).
    pub announcements: u64,
    /// SPDP disposals accepted.
    pub disposals: u64,
    /// Invalid DATA(p) (bad parameter list, no GUID, ...).
    pub malformed: u64,
    /// Announced GUID prefix differs from the message's source.
    pub prefix_mismatch: u64,
    /// Another domain id or domain tag.
    pub foreign_domain: u64,
    /// Our own announcements coming back.
    pub own: u64,
    /// Direct SPDP replies sent to new or not yet verified participants.
    pub replies: u64,
}

/// SEDP input, by outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SedpStats {
    /// Endpoint announcements accepted (new or changed).
    pub announcements: u64,
    /// Repeated announcements without change.
    pub unchanged: u64,
    /// Endpoint disposals accepted.
    pub disposals: u64,
    /// Samples that do not decode.
    pub malformed: u64,
    /// An endpoint GUID whose prefix is not its announcer's participant.
    pub prefix_mismatch: u64,
    /// Reader announcements whose `PID_CONTENT_FILTER_PROPERTY` does not decode: the filter
    /// was dropped, the reader kept ([`EndpointData::content_filter_malformed`]).
    ///
    /// [`EndpointData::content_filter_malformed`]: crate::EndpointData::content_filter_malformed
    pub content_filters_malformed: u64,
}

/// WLP input and output (RTPS 2.5 §8.4.13), by outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WlpStats {
    /// AUTOMATIC_LIVELINESS_UPDATE messages received.
    pub automatic: u64,
    /// MANUAL_LIVELINESS_UPDATE messages received.
    pub manual: u64,
    /// Vendor-specific or unknown kinds, accepted and ignored.
    pub other_kind: u64,
    /// Payloads that do not decode.
    pub malformed: u64,
    /// A participant asserting another participant's liveliness (ignored).
    pub prefix_mismatch: u64,
    /// Our ParticipantMessageData samples written.
    pub written: u64,
}

/// How much a participant walked over its endpoints, so tests can tell what grows with the
/// number of endpoints from what grows with the input (see `scale_tests.rs`). Read it with
/// [`super::Participant::work`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkStats {
    /// Local endpoints asked for datagrams by `poll_transmit`.
    pub transmit_polls: u64,
    /// Local endpoints whose timers `poll_timeout` and `handle_timeout` looked at.
    pub timer_checks: u64,
    /// Local readers `poll_event` looked at for samples.
    pub sample_checks: u64,
    /// (local, remote) endpoint pairs matching evaluated.
    pub pairs_evaluated: u64,
}

/// Counters of a participant. Peer misbehaviour is counted here and never returned as an
/// error (docs/robustness.md §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParticipantStats {
    /// The message receiver: datagrams, submessages, malformed input.
    pub receive: ReceiveStats,
    /// Datagrams from ourselves (multicast loopback), ignored.
    pub own_datagrams: u64,
    /// Submessages after an INFO_DST naming another participant.
    pub not_for_us: u64,
    /// Submessages for no local endpoint, or from a writer/reader not matched with the one
    /// they name.
    pub unroutable: u64,
    /// Submessages from participants we do not know (other than SPDP).
    pub from_unknown_participant: u64,
    /// HEARTBEAT, HEARTBEAT_FRAG and GAP from an address the writer's participant was not
    /// discovered at and did not announce (ignored).
    pub control_from_elsewhere: u64,
    pub spdp: SpdpStats,
    pub sedp: SedpStats,
    pub wlp: WlpStats,
    /// Remote participants added, and removed for each reason.
    pub participants_discovered: u64,
    pub participants_disposed: u64,
    pub participants_expired: u64,
    pub participants_evicted: u64,
    /// Removed because the caller learned that their process is gone
    /// ([`super::Participant::remove_remote_participant`]).
    pub participants_gone: u64,
    /// New participants ignored because the table was full of verified ones.
    pub participants_rejected: u64,
    /// New remote endpoints ignored because `max_remote_endpoints` were known.
    pub endpoints_rejected: u64,
    /// Oldest events dropped because `max_pending_events` were pending.
    pub events_dropped: u64,
    /// Datagrams and bytes handed out by `poll_transmit`.
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    /// Submessages that fit no datagram, or transmits without any destination.
    pub transmit_dropped: u64,
    /// Times the remote participant holding the most reassembly bytes gave them all up so
    /// that a DATA_FRAG of another one fit the total budget.
    pub reassembly_hog_evictions: u64,
    /// Destinations left out of a datagram because they had not shown to be live and their
    /// announcer's allowance (3 bytes per byte it sent us) was spent.
    pub amplification_limited: u64,
    /// Bytes sent to locators that had not shown to be live.
    pub bytes_to_unvalidated: u64,
    /// Work done over endpoints; read through `Participant::work`, which adds what
    /// `poll_timeout` (`&self`) looked at.
    pub work: WorkStats,
}
