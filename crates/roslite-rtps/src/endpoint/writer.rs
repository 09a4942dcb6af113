//! The stateful writer (RTPS 2.5 §8.4.7–§8.4.9): best-effort and reliable.
//!
//! Ownership: the [`Writer`] owns its history cache and one `ReaderProxy` per matched reader.
//! Samples are `Arc`s shared with the caller; submessages are emitted only when polled.
//!
//! Sending:
//! - New samples are pushed once to every matched reader (§8.4.9.1.1 "pushing"): to one
//!   multicast locator if all readers share one, else to each reader's unicast locators
//!   (deduplicated), with `readerId = ENTITYID_UNKNOWN`. A reliable writer appends a Final
//!   HEARTBEAT, so readers that lost the last sample ask for it without waiting for the
//!   period.
//! - Everything aimed at one reader (the history a transient-local late joiner missed, repairs,
//!   GAPs, its HEARTBEATs) is directed: INFO_DST + that reader's locators and entity id. So is
//!   the GAP for a number the application gave up ([`Writer::give_up_number`]), to each
//!   reader: Cyclone DDS ignores a GAP with `readerId = ENTITYID_UNKNOWN`.
//! - While some reliable reader has unacknowledged samples, or has not yet answered any
//!   HEARTBEAT (so does not know where the numbering stands: `ReaderProxy::synced`), every
//!   `heartbeat_period` each such reader gets a non-Final HEARTBEAT (§8.4.9.2.7).
//! - Batching: samples written in a burst share datagrams. A sample written `batch_window` or
//!   more after the last push goes out at the next poll (a lone sample waits for nothing), and
//!   so does one written after the caller handled input since that push (a reply to a request
//!   or a ping; [`Writer::set_inputs_seen`]). Others wait until `batch_window` after the last
//!   push, or until `batch_max_bytes` of them wait, and then go out together: several DATA
//!   (each after its INFO_TS) and one HEARTBEAT in one RTPS message, as RTPS 2.5 §8.3.4 and
//!   §9.4.1 allow any number of submessages after the header. A stream slower than one sample
//!   per `batch_window` never waits; a faster one waits at most `batch_window`.
//!
//! Receiving (§8.4.9.2.8, docs/robustness.md §1): ACKNACKs with stale counts are dropped; bases
//! beyond the last written sequence number are clamped; a lowered base never un-acknowledges;
//! requested numbers outside the writer's range are ignored; the Fast DDS pre-emptive ACKNACK
//! (`bitmapBase = 0, numBits = 0`) is answered with a HEARTBEAT. Repairs wait
//! `nack_response_delay` (so several NACKs coalesce) and numbers no longer in the history, or
//! irrelevant to a volatile reader, are answered with one GAP interval.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use roslite_cdr::key::KeyStruct;
use roslite_cdr::Endianness;

use crate::instant::Instant;
use crate::parameter_list::ParameterList;
use crate::quirks;
use crate::types::{Count, EntityId, Guid, Locator, SequenceNumber, SequenceNumberSet, Time};
use crate::wire::{
    AckNackRepr, DataRepr, GapRepr, HeartbeatRepr, NackFragRepr, PayloadKind, SerializedPayload,
    Submessage,
};

use super::fragments::{push_data_frags, FragmentLayout};
use super::history::{CacheChange, HistoryKind, InstanceKey, WriterHistory, MAX_KEPT_INSTANCES};
use super::key_hash::{with_key_hash, KeyHasher};
use super::numbers::{count_is_newer, count_next, sn_add, sn_next};
use super::proxies::{ReaderProxy, ReaderProxyInfo, RepairState};
use super::range_set::RangeSet;
use super::transmit::{directed_locators, push_unique, Transmit, TransmitBuilder};

/// Why [`Writer::write`] refused a sample. Always caller-side: peers cannot cause these,
/// except [`WriteError::Full`], which is flow control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteError {
    /// KEEP_ALL history holds `max_samples` samples not yet acknowledged by every reliable
    /// reader. The runtime may wait up to `max_blocking_time` (feeding ACKNACKs in) and retry.
    Full,
    /// The payload is 1–3 bytes (it must start with a 4-byte encapsulation header), or empty
    /// without inline QoS to carry a dispose/unregister.
    PayloadTooShort { len: usize },
    /// `sampleSize` is a 32-bit field (RTPS 2.5 §9.4.5.4).
    PayloadTooLarge { len: usize, max: usize },
    /// The inline QoS is not a valid little-endian parameter list ending in a sentinel, or is
    /// larger than [`MAX_INLINE_QOS`].
    InvalidInlineQos,
    /// A keyed writer's sample does not hold its type's key members: the payload is not of
    /// the writer's type.
    KeyNotFound(roslite_cdr::DecodeError),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("writer history is full of unacknowledged samples"),
            Self::PayloadTooShort { len } => write!(
                f,
                "serialized payload of {len} bytes has no 4-byte encapsulation header"
            ),
            Self::PayloadTooLarge { len, max } => {
                write!(f, "serialized payload of {len} bytes exceeds {max} bytes")
            }
            Self::InvalidInlineQos => f.write_str("inline QoS is not a valid parameter list"),
            Self::KeyNotFound(e) => write!(
                f,
                "the sample is not of the keyed writer's type, its key cannot be read: {e}"
            ),
        }
    }
}

impl std::error::Error for WriteError {}

/// Largest inline QoS parameter list a writer accepts, sentinel included. Keeps every
/// DATA/DATA_FRAG inside one datagram next to `max_data_size` bytes of payload.
pub const MAX_INLINE_QOS: usize = 1024;

/// Payload bytes a single [`Transmit`] aims for; at least one whole sample is always included.
const TRANSMIT_BUDGET: usize = 1 << 20;

/// An ACKNACK whose count is not newer than the last accepted one is stale, unless the last
/// accepted one is at least this old: then the reader restarted its count (Cyclone DDS's
/// timeout in `accept_ack_or_hb_w_timeout`), and its proxy starts afresh.
pub const ACKNACK_COUNT_RESET_AFTER: Duration = Duration::from_secs(2);

/// Writer configuration (DDS QoS mapped onto RTPS 2.5 §8.4.7.1 attributes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterConfig {
    pub guid: Guid,
    pub reliable: bool,
    /// Keep the history for late-joining transient-local readers.
    pub transient_local: bool,
    pub history: HistoryKind,
    /// `heartbeatPeriod` (§8.4.7.1); default 100 ms like Cyclone.
    pub heartbeat_period: Duration,
    /// `nackResponseDelay`; default 10 ms.
    pub nack_response_delay: Duration,
    /// How long the runtime lets `write` wait on a full KEEP_ALL history before giving up
    /// (this crate returns [`WriteError::Full`] at once; it never blocks).
    pub max_blocking_time: Duration,
    /// DATA_FRAG fragment size, at most 65535 (a 16-bit field) and at most `max_data_size`;
    /// default 64000.
    pub fragment_size: usize,
    /// Largest payload sent unfragmented in one DATA, and the payload bytes per DATA_FRAG
    /// submessage (which packs `max_data_size / fragment_size` fragments); default 64000.
    pub max_data_size: usize,
    /// `pushMode` (§8.4.7.1): send new samples at once. If false, only HEARTBEATs announce
    /// them and readers pull with ACKNACK.
    pub push_mode: bool,
    /// Payload bytes the history holds at most (a byte bound beside KEEP_ALL's `max_samples`,
    /// as DDS `RESOURCE_LIMITS` bounds samples): a write that would go beyond it while the
    /// oldest sample is unacknowledged fails with [`WriteError::Full`], so one stalled reader
    /// cannot make the writer hold gigabytes. A sample larger than the bound is still taken
    /// into an empty history. KEEP_LAST histories overwrite their oldest sample instead.
    /// Default: unbounded (`usize::MAX`); a participant's writers get
    /// [`KEEP_ALL_MAX_BYTES`] unless configured otherwise.
    pub max_history_bytes: usize,
    /// How long after a push new samples wait for more to share their datagram (module
    /// documentation, "Batching"). Zero (the default here; a participant's writers get
    /// [`WriterDefaults::batch_window`](crate::participant::WriterDefaults::batch_window))
    /// sends every sample at the next poll.
    pub batch_window: Duration,
    /// Payload bytes of waiting samples that end the wait at once: a batch's datagram stays
    /// near this size, and a sample this large never waits. Default
    /// [`BATCH_MAX_BYTES`].
    pub batch_max_bytes: usize,
    /// The key members of a keyed topic's type: each sample then carries its key hash
    /// (`PID_KEY_HASH`, RTPS 2.5 §9.6.3.8) in its inline QoS, as Fast DDS sends it
    /// ([`KeyHasher`]). `None` for a keyless topic (all ROS 2 types but IDL ones with `@key`).
    pub key: Option<&'static KeyStruct>,
    /// For a keyed topic: the instances whose newest `depth` samples a KEEP_LAST history keeps
    /// ([`HistoryKind::keyed_capacity`]); default [`MAX_KEPT_INSTANCES`].
    pub max_instances: usize,
}

/// The default byte bound of a KEEP_ALL writer's history (64 MiB; see
/// [`WriterConfig::max_history_bytes`]).
pub const KEEP_ALL_MAX_BYTES: usize = 64 << 20;

/// The default [`WriterConfig::batch_max_bytes`], 16 KiB: about Cyclone DDS's default
/// `MaxMessageSize` (14 720 bytes), the datagram its write batching fills. Fast DDS sends up to
/// 65 500 bytes, but on a network with a 1500-byte MTU one lost IP fragment of a 64 KiB
/// datagram loses every sample in it; ten fragments lose less.
pub const BATCH_MAX_BYTES: usize = 16 << 10;

impl WriterConfig {
    /// Reliable, volatile, KEEP_LAST 10 (the ROS 2 default profile) with the timer and size
    /// defaults documented on each field.
    pub fn new(guid: Guid) -> Self {
        WriterConfig {
            guid,
            reliable: true,
            transient_local: false,
            history: HistoryKind::default(),
            heartbeat_period: Duration::from_millis(100),
            nack_response_delay: Duration::from_millis(10),
            max_blocking_time: Duration::from_millis(100),
            fragment_size: 64_000,
            max_data_size: 64_000,
            push_mode: true,
            max_history_bytes: usize::MAX,
            batch_window: Duration::ZERO,
            batch_max_bytes: BATCH_MAX_BYTES,
            key: None,
            max_instances: MAX_KEPT_INSTANCES,
        }
    }
}

/// What a writer did and what its readers did wrong. Peer misbehaviour is counted here and
/// otherwise ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    pub samples_written: u64,
    /// DATA submessages sent (new, catch-up and repairs).
    pub data_sent: u64,
    /// DATA_FRAG submessages sent (new, catch-up and repairs).
    pub data_frag_sent: u64,
    /// Whole samples sent again because an ACKNACK requested them.
    pub samples_resent: u64,
    /// DATA_FRAG submessages sent because a NACK_FRAG requested fragments.
    pub fragments_resent: u64,
    pub heartbeats_sent: u64,
    pub gaps_sent: u64,
    /// `write` calls refused with [`WriteError::Full`].
    pub write_full: u64,
    /// KEEP_LAST samples overwritten before every reliable reader acknowledged them.
    pub overwritten_unacked: u64,
    /// Samples of a keyed KEEP_LAST writer that went to make room for another instance's,
    /// not their own instance's newer ones: the history held `depth` samples of
    /// [`WriterConfig::max_instances`] instances.
    pub instance_limit_overwritten: u64,
    pub acknacks_received: u64,
    /// ACKNACKs whose count was not newer than the last one (duplicates, reordering).
    pub acknacks_stale: u64,
    /// Readers whose ACKNACK count went back after [`ACKNACK_COUNT_RESET_AFTER`] of silence:
    /// they lost this writer (their participant's lease of ours ran out) and matched it
    /// again, so their proxy was started afresh.
    pub readers_restarted: u64,
    /// ACKNACK/NACK_FRAG from a reader that is not matched.
    pub unknown_reader: u64,
    /// ACKNACKs acknowledging or requesting beyond the last written sequence number (clamped).
    pub acknacks_beyond_max: u64,
    /// ACKNACKs whose base was lower than the reader's earlier base (not un-acknowledged).
    pub acknacks_lowered_base: u64,
    /// Fast DDS/RTI pre-emptive ACKNACKs (`bitmapBase = 0`), answered with a HEARTBEAT.
    pub acknacks_preemptive: u64,
    pub nack_frags_received: u64,
    pub nack_frags_stale: u64,
    /// NACK_FRAGs naming a sample or fragments that do not exist (ignored).
    pub nack_frags_invalid: u64,
    /// ACKNACK/NACK_FRAG addressed to another writer.
    pub not_for_us: u64,
}

/// A sample another writer wrote, for [`Writer::adopt_history`]: its serialized payload (with
/// its encapsulation header) and the source timestamp it was written with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdoptedSample {
    pub payload: Arc<[u8]>,
    pub source_timestamp: Option<Time>,
}

/// A sample's inline QoS (key hash merged in) and, for a keyed KEEP_LAST writer, its
/// instance ([`Writer::write`]'s checks).
type CheckedSample = (Option<Arc<[u8]>>, Option<InstanceKey>);

/// Why [`Writer::adopt_history`] refused a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdoptError {
    /// The writer already numbered samples up to `next - 1` (or `first` was not a sample's
    /// number): a history is adopted by a writer that has written nothing yet, from its next
    /// number on.
    NotFresh { next: SequenceNumber },
    /// The sample to be numbered `sn` is unusable, as [`Writer::write`] would refuse it.
    Sample {
        sn: SequenceNumber,
        error: WriteError,
    },
    /// No such writer (from [`crate::participant::Participant::adopt_history`]).
    UnknownWriter,
}

impl std::fmt::Display for AdoptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFresh { next } => write!(
                f,
                "the writer numbers its next sample {}: it takes a history only before it writes, from that number on",
                next.0
            ),
            Self::Sample { sn, error } => write!(f, "sample {} of the history: {error}", sn.0),
            Self::UnknownWriter => f.write_str("no such writer"),
        }
    }
}

impl std::error::Error for AdoptError {}

/// A best-effort or reliable stateful writer. See the module documentation.
#[derive(Clone, Debug)]
pub struct Writer {
    config: WriterConfig,
    fragment_size: u16,
    history: WriterHistory,
    readers: BTreeMap<Guid, ReaderProxy>,
    /// The first sequence number not yet pushed to the matched readers.
    next_push: SequenceNumber,
    /// Payload bytes of the samples from `next_push` on (an upper bound: KEEP_LAST may have
    /// dropped some); 0 when none wait.
    waiting_bytes: usize,
    /// When new samples were last pushed (batching), and [`Writer::set_inputs_seen`]'s count
    /// then.
    last_push: Option<Instant>,
    inputs_at_last_push: u64,
    /// The caller's count of inputs handled, as of the last write.
    inputs_seen: u64,
    heartbeat_count: Count,
    /// Periodic HEARTBEAT timer, armed while a reliable reader has unacknowledged samples.
    next_heartbeat: Option<Instant>,
    /// [`Writer::assert_liveliness`] was called: the next poll sends a HEARTBEAT with the
    /// liveliness flag to every matched reader.
    liveliness_pending: bool,
    /// Set for a keyed topic ([`WriterConfig::key`]).
    key_hasher: Option<KeyHasher>,
    stats: WriterStats,
}

impl Writer {
    /// A writer with no readers and an empty history. `max_data_size` is raised to at least 1
    /// and `fragment_size` clamped to `1 ..= min(65535, max_data_size)` (RTPS 2.5 §8.4.14.1:
    /// "fragment size <= 65536"; a DATA_FRAG carries at least one fragment); see
    /// [`Writer::config`] for the values in use.
    pub fn new(config: WriterConfig) -> Self {
        let max_data_size = config.max_data_size.max(1);
        let fragment_size = config.fragment_size.clamp(1, max_data_size);
        let fragment_size = u16::try_from(fragment_size).unwrap_or(u16::MAX);
        let config = WriterConfig {
            max_data_size,
            fragment_size: usize::from(fragment_size),
            ..config
        };
        Writer {
            key_hasher: config.key.map(KeyHasher::new),
            config,
            fragment_size,
            history: WriterHistory::new(),
            readers: BTreeMap::new(),
            next_push: SequenceNumber::FIRST,
            waiting_bytes: 0,
            last_push: None,
            inputs_at_last_push: 0,
            inputs_seen: 0,
            heartbeat_count: Count(0),
            next_heartbeat: None,
            liveliness_pending: false,
            stats: WriterStats::default(),
        }
    }

    /// Asserts the writer's liveliness to its matched readers without writing a sample
    /// (DDS `assert_liveliness` for MANUAL_BY_TOPIC): the next [`Writer::poll_transmit`] sends
    /// a Final HEARTBEAT with the liveliness flag (RTPS 2.5 §8.3.8.5, §8.4.13.5) to all of
    /// them, best-effort ones included.
    pub fn assert_liveliness(&mut self) {
        self.liveliness_pending = !self.readers.is_empty();
    }

    pub fn guid(&self) -> Guid {
        self.config.guid
    }

    pub fn config(&self) -> &WriterConfig {
        &self.config
    }

    pub fn stats(&self) -> WriterStats {
        self.stats
    }

    /// Whether this keyed writer ever dropped a sample for another instance's because it held
    /// `depth` samples of [`WriterConfig::max_instances`] instances (read after every write,
    /// so without copying the stats).
    pub fn instance_limit_reached(&self) -> bool {
        self.stats.instance_limit_overwritten > 0
    }

    /// The last sequence number written (0 before the first write).
    pub fn last_sequence_number(&self) -> SequenceNumber {
        self.history.last_sn()
    }

    /// Samples currently held in the history cache.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// Payload bytes currently held in the history cache.
    pub fn history_bytes(&self) -> usize {
        self.history.bytes()
    }

    pub fn matched_readers(&self) -> impl Iterator<Item = &Guid> {
        self.readers.keys()
    }

    /// The application gave up a publication this writer was to number (a KEEP_ALL write that
    /// found the history full until `max_blocking_time`, [`WriteError::Full`]): its number is
    /// used up all the same, so that the writer's numbers stay the application's publication
    /// numbers, which its other paths (same-host transports) deliver the publication under.
    /// Each reader is sent a GAP for it (RTPS 2.5 §8.3.7.4), addressed to it, and roslite's
    /// readers count it lost (DDS SAMPLE_LOST), as a same-host subscription counts the gap in
    /// its numbering. The number stands in the history as a change without payload (beyond
    /// `max_samples`, which was full) until every reader acknowledged it: a reader that asks
    /// for it again gets the GAP again.
    ///
    /// Used to be left out of the numbering instead, so that readers would not count a
    /// message never written to them; the writer's numbers then ran behind the publication
    /// numbers by one per give-up, and a node moving between a host that received this writer
    /// over RTPS and one that received it on the same host compared numbers naming different
    /// messages (docs/migration.md, "Each message exactly once").
    pub fn give_up_number(&mut self, now: Instant) {
        self.history.push_given_up();
        self.after_push(now, 0);
    }

    /// Numbers the next sample `next` if that is ahead, when the application's samples in
    /// between went only to readers served elsewhere: keeps sequence numbers equal to the
    /// application's publication count. Ignored by a writer that must keep and send every
    /// sample: non-volatile, or with samples some reader has not acknowledged (readers that
    /// ask for the numbers skipped get a GAP, as for any sample gone from the history; a
    /// reader matched since the last write counts the samples before it as acknowledged).
    pub fn skip_to(&mut self, next: SequenceNumber) {
        self.release_acked();
        if self.config.transient_local || (!self.readers.is_empty() && self.history.len() > 0) {
            return;
        }
        if next > self.history.next_sn() {
            self.history.skip_to(next);
            self.next_push = self.history.next_sn();
            self.waiting_bytes = 0;
        }
    }

    /// Takes `samples` into an empty history as the writer's samples `first`, `first + 1`, ...
    /// (in order), counted as acknowledged by and sent to every reader matched now: only
    /// readers matched later, transient-local late joiners of a transient-local writer, are
    /// sent them, under these numbers. The writer's next sample is numbered after them (with
    /// no samples, `first`: a numbering continued, as [`Writer::skip_to`] but for any writer).
    ///
    /// What it is for: a node that moved from another process (docs/migration.md) goes on as
    /// this new writer, with the history and the numbering the writer it had there left off
    /// with. Its subscribers that matched this writer while the node moved had those samples
    /// from the old writer and get none of them again (nor a repair: a request for them is
    /// answered with GAP); a late joiner gets them as from the old writer, numbers included.
    /// The numbers before `first` were never this writer's: a HEARTBEAT's `firstSN` tells
    /// every reader so (RTPS 2.5 §8.3.8.5), and a reader that asks for one gets a GAP.
    ///
    /// A history of fewer samples than given (KEEP_LAST or `max_samples`) keeps the newest.
    ///
    /// # Errors
    /// [`AdoptError::NotFresh`] if the writer's history holds samples, or `first` is below its
    /// next number; [`AdoptError::Sample`] if a sample is unusable as [`Writer::write`]
    /// would refuse it. Nothing changes on error.
    pub fn adopt_history(
        &mut self,
        now: Instant,
        first: SequenceNumber,
        samples: Vec<AdoptedSample>,
    ) -> Result<SequenceNumber, AdoptError> {
        let next = self.history.next_sn();
        if self.history.len() > 0 || first < next || !first.is_valid_sample() {
            return Err(AdoptError::NotFresh { next });
        }
        let count = i64::try_from(samples.len()).unwrap_or(i64::MAX);
        let end = first
            .checked_add(count)
            .ok_or(AdoptError::NotFresh { next })?;
        // Only the newest the history holds are kept.
        let keep = samples.len().min(self.history_capacity());
        let skipped = samples.len().saturating_sub(keep);
        let mut kept = Vec::with_capacity(keep);
        for (index, sample) in samples.into_iter().enumerate().skip(skipped) {
            let sn = sn_add(first, i64::try_from(index).unwrap_or(i64::MAX));
            let checked = self
                .checked_sample(&sample.payload, None)
                .map_err(|error| AdoptError::Sample { sn, error })?;
            kept.push((sample, checked));
        }
        self.history
            .skip_to(sn_add(first, i64::try_from(skipped).unwrap_or(i64::MAX)));
        // Every reader matched now counts them as acknowledged and sent: nothing for it, not
        // even on request (`first_relevant`).
        for p in self.readers.values_mut() {
            p.acked_below = p.acked_below.max(end);
            p.first_relevant = p.first_relevant.max(end);
            p.unsent = (end, end);
            p.prune_requests();
        }
        self.next_push = end;
        self.waiting_bytes = 0;
        for (sample, (inline_qos, instance)) in kept {
            // Every sample is acknowledged by every reader matched and counted sent, so room is
            // made by dropping the oldest, whatever the history kind.
            if self
                .make_room(sample.payload.len(), instance.as_deref())
                .is_err()
            {
                self.history.pop_front();
            }
            self.history.push(
                sample.payload,
                inline_qos,
                sample.source_timestamp,
                instance,
            );
        }
        debug_assert_eq!(self.history.next_sn(), end);
        self.arm_heartbeat(now);
        Ok(end)
    }

    /// Adds a new sample (RTPS 2.5 §8.4.7.1 `new_change`, §8.2.2 `add_change`; §8.4.9.2 T14).
    ///
    /// `payload` is the serialized payload including its 4-byte encapsulation header; it may
    /// be empty only when `inline_qos` (a little-endian parameter list with sentinel) carries a
    /// dispose/unregister. KEEP_LAST overwrites the oldest sample even when unacknowledged.
    ///
    /// # Errors
    /// [`WriteError::Full`] if KEEP_ALL holds `max_samples` unacknowledged samples; the other
    /// variants for an unusable payload or inline QoS. Nothing is stored on error.
    pub fn write(
        &mut self,
        now: Instant,
        payload: Arc<[u8]>,
        inline_qos: Option<Arc<[u8]>>,
        source_timestamp: Option<Time>,
    ) -> Result<SequenceNumber, WriteError> {
        let len = payload.len();
        let (inline_qos, instance) = self.checked_sample(&payload, inline_qos)?;
        self.make_room(len, instance.as_deref())?;
        let sn = self
            .history
            .push(payload, inline_qos, source_timestamp, instance);
        self.stats.samples_written = self.stats.samples_written.saturating_add(1);
        self.after_push(now, len);
        Ok(sn)
    }

    /// After a change of `len` payload bytes joined the history: pushed now or with the batch,
    /// or announced (pull mode), and the HEARTBEAT armed.
    fn after_push(&mut self, now: Instant, len: usize) {
        let pull = !self.config.push_mode && self.config.reliable;
        if pull || self.readers.is_empty() {
            self.next_push = self.history.next_sn();
            self.waiting_bytes = 0;
        } else {
            self.waiting_bytes = self.waiting_bytes.saturating_add(len.max(1));
        }
        if pull {
            // §8.4.9.2.4: without push mode new changes are only announced.
            for p in self.readers.values_mut().filter(|p| p.info.reliable) {
                p.heartbeat_wanted = true;
            }
        }
        self.release_acked();
        self.arm_heartbeat(now);
    }

    /// Checks a sample as [`Self::write`] takes it (a payload with its encapsulation header,
    /// or empty for a dispose/unregister named in `inline_qos`; inline QoS a little-endian
    /// parameter list) and returns its inline QoS with the key hash of a keyed topic merged in,
    /// and for a keyed KEEP_LAST writer its instance ([`CacheChange::instance`]).
    fn checked_sample(
        &mut self,
        payload: &[u8],
        inline_qos: Option<Arc<[u8]>>,
    ) -> Result<CheckedSample, WriteError> {
        let len = payload.len();
        if len < 4 && !(len == 0 && inline_qos.is_some()) {
            return Err(WriteError::PayloadTooShort { len });
        }
        let max = usize::try_from(u32::MAX).unwrap_or(usize::MAX);
        if len > max {
            return Err(WriteError::PayloadTooLarge { len, max });
        }
        if let Some(q) = &inline_qos {
            if q.len() > MAX_INLINE_QOS || ParameterList::parse(q, Endianness::Little).is_err() {
                return Err(WriteError::InvalidInlineQos);
            }
        }
        // A sample of a keyed topic names its instance (RTPS 2.5 §9.6.3.8); an empty payload
        // (a dispose or unregister) already does so in the caller's inline QoS.
        match &mut self.key_hasher {
            Some(hasher) if len > 0 => {
                let (key, hash) = hasher
                    .key_and_hash(payload)
                    .map_err(WriteError::KeyNotFound)?;
                let merged = with_key_hash(hash, inline_qos.as_deref());
                if merged.len() > MAX_INLINE_QOS {
                    return Err(WriteError::InvalidInlineQos);
                }
                let per_instance = !self.config.history.is_keep_all();
                let instance = per_instance.then(|| InstanceKey::from(key));
                Ok((Some(Arc::from(merged)), instance))
            }
            _ => Ok((inline_qos, None)),
        }
    }

    /// How many samples the history holds at most ([`HistoryKind::keyed_capacity`] for a
    /// keyed topic).
    pub fn history_capacity(&self) -> usize {
        if self.key_hasher.is_some() {
            self.config
                .history
                .keyed_capacity(self.config.max_instances)
        } else {
            self.config.history.capacity()
        }
    }

    /// Frees a slot (and `len` payload bytes) in the history for one more sample, per the
    /// history kind: of `instance`'s own for a keyed KEEP_LAST writer, then overall.
    fn make_room(&mut self, len: usize, instance: Option<&[u8]>) -> Result<(), WriteError> {
        if let (HistoryKind::KeepLast(depth), Some(instance)) = (self.config.history, instance) {
            while self.history.instance_len(instance) >= depth.max(1) {
                let Some(oldest) = self.history.oldest_of(instance) else {
                    break;
                };
                self.overwrite(oldest);
            }
        }
        let capacity = self.history_capacity();
        let max_bytes = self.config.max_history_bytes;
        while self.history.len() >= capacity
            || (self.history.len() > 0 && self.history.bytes().saturating_add(len) > max_bytes)
        {
            let Some(front) = self.history.front_sn() else {
                break;
            };
            let acked = self.is_acked_by_all(front);
            match self.config.history {
                HistoryKind::KeepAll { .. } if !acked || front >= self.next_push => {
                    self.stats.write_full = self.stats.write_full.saturating_add(1);
                    return Err(WriteError::Full);
                }
                _ => {
                    if instance.is_some() {
                        self.stats.instance_limit_overwritten =
                            self.stats.instance_limit_overwritten.saturating_add(1);
                    }
                    self.overwrite(front);
                }
            }
        }
        Ok(())
    }

    /// Drops KEEP_LAST sample `sn` for a newer one. Readers that did not have it get a GAP: at
    /// once if it never went out, else when they ask for it.
    fn overwrite(&mut self, sn: SequenceNumber) {
        if !self.is_acked_by_all(sn) {
            self.stats.overwritten_unacked = self.stats.overwritten_unacked.saturating_add(1);
        }
        self.history.remove(sn);
        if sn >= self.next_push {
            self.gap_to_each_reader(sn);
        }
    }

    /// Volatile writers drop samples once every reliable reader acknowledged them (and they
    /// were pushed); transient-local writers keep them for late joiners.
    fn release_acked(&mut self) {
        if self.config.transient_local {
            return;
        }
        while let Some(front) = self.history.front_sn() {
            if front >= self.next_push || !self.is_acked_by_all(front) {
                break;
            }
            self.history.pop_front();
        }
    }

    fn arm_heartbeat(&mut self, now: Instant) {
        let last = self.history.last_sn();
        if self.config.reliable
            && self.next_heartbeat.is_none()
            && self
                .readers
                .values()
                .any(|p| p.wants_periodic_heartbeat(last))
        {
            self.next_heartbeat = Some(now.saturating_add(self.config.heartbeat_period));
        }
    }

    /// Whether every matched reliable reader acknowledged `sn` (vacuously true without any).
    pub fn is_acked_by_all(&self, sn: SequenceNumber) -> bool {
        self.readers
            .values()
            .filter(|p| p.info.reliable)
            .all(|p| p.acked_below > sn)
    }

    /// Whether some matched reliable reader answered a HEARTBEAT of this writer
    /// (`ReaderProxy::synced`): a sample written now is live to it, not history it skips.
    pub fn has_synced_reader(&self) -> bool {
        self.readers.values().any(|p| p.info.reliable && p.synced)
    }

    /// Whether matched reader `reader` acknowledged `sn` (false for a reader not matched).
    pub fn is_acked_by(&self, reader: &Guid, sn: SequenceNumber) -> bool {
        self.readers.get(reader).is_some_and(|p| p.acked_below > sn)
    }

    /// Matches a reader (RTPS 2.5 §8.4.9.2 T1; the proxy as in §8.4.7.5). A reliable reader
    /// gets a HEARTBEAT at once. A transient-local reader of a transient-local writer is sent the
    /// whole history (in push mode) and the HEARTBEAT covers it; a volatile reader starts at
    /// the next sample. Adding a known reader updates its locators and flags only.
    pub fn add_reader(&mut self, now: Instant, reader: ReaderProxyInfo) {
        if let Some(p) = self.readers.get_mut(&reader.guid) {
            p.info = reader;
            return;
        }
        let proxy = self.fresh_proxy(reader);
        self.readers.insert(proxy.info.guid, proxy);
        self.arm_heartbeat(now);
    }

    /// The proxy of a reader matched now: a volatile one starts at the next sample, a
    /// transient-local one (of a transient-local writer) is owed the whole history.
    fn fresh_proxy(&self, reader: ReaderProxyInfo) -> ReaderProxy {
        let late_joiner = self.config.transient_local && reader.transient_local;
        let first_relevant = if late_joiner {
            SequenceNumber::FIRST
        } else {
            self.next_push
        };
        let mut proxy = ReaderProxy::new(reader, first_relevant);
        if late_joiner {
            // Older numbers are gone: the HEARTBEAT's firstSN tells the reader so.
            proxy.acked_below = self.history.first_sn();
            if self.config.push_mode {
                proxy.unsent = (self.history.first_sn(), self.next_push);
            }
        }
        proxy.heartbeat_wanted = self.config.reliable && proxy.info.reliable;
        proxy
    }

    /// Unmatches a reader (§8.4.9.2 T16); samples only it had not
    /// acknowledged may then be released.
    pub fn remove_reader(&mut self, guid: &Guid) {
        if self.readers.remove(guid).is_some() {
            self.release_acked();
        }
    }

    /// Processes an ACKNACK from `reader` (RTPS 2.5 §8.4.9.2.8, transition T8: acknowledge
    /// `base − 1`, request the set members), validated as described in the module docs.
    pub fn handle_acknack(&mut self, now: Instant, reader: Guid, acknack: &AckNackRepr) {
        let stats = &mut self.stats;
        stats.acknacks_received = stats.acknacks_received.saturating_add(1);
        if acknack.writer_id != self.config.guid.entity_id && !acknack.writer_id.is_unknown() {
            stats.not_for_us = stats.not_for_us.saturating_add(1);
            return;
        }
        let last = self.history.last_sn();
        let Some(p) = self.readers.get_mut(&reader) else {
            stats.unknown_reader = stats.unknown_reader.saturating_add(1);
            return;
        };
        if !self.config.reliable || !p.info.reliable {
            return;
        }
        if !count_is_newer(acknack.count, p.last_acknack) {
            // A count that went back after a silence is a reader that forgot us: its process
            // lost our participant (lease) and found it again, while we kept its proxy, so it
            // numbers its ACKNACKs afresh from a new proxy and expects what a new reader gets.
            // Cyclone DDS (`accept_ack_or_hb_w_timeout`, `ddsi_receive.c`) likewise accepts
            // any count 2 s after the last accepted one, "to allow continuing after an
            // asymmetrical disconnection". Without this the stale counts were dropped, the
            // reader never got a HEARTBEAT or its SEDP data again, and the stream stopped
            // for good (docs/robustness.md §6).
            let silent = p
                .last_acknack_at
                .is_some_and(|at| now.saturating_duration_since(at) >= ACKNACK_COUNT_RESET_AFTER);
            if !silent {
                stats.acknacks_stale = stats.acknacks_stale.saturating_add(1);
                return;
            }
            stats.readers_restarted = stats.readers_restarted.saturating_add(1);
            let (info, first_relevant) = (p.info.clone(), p.first_relevant);
            let mut fresh = self.fresh_proxy(info);
            if fresh.unsent.0 == fresh.unsent.1 {
                // A volatile reader stays owed what it was matched for and the history still
                // holds: it asks for what it lacks once the HEARTBEAT tells it what there is.
                fresh.first_relevant = fresh.first_relevant.min(first_relevant);
                fresh.acked_below = fresh
                    .first_relevant
                    .max(self.history.first_sn())
                    .min(self.history.next_sn());
                fresh.unsent = (fresh.acked_below, fresh.acked_below);
            }
            self.readers.insert(reader, fresh);
            self.handle_acknack_counted(now, reader, acknack, last);
            self.arm_heartbeat(now);
            return;
        }
        self.handle_acknack_counted(now, reader, acknack, last);
    }

    /// [`Self::handle_acknack`] once its count was accepted.
    fn handle_acknack_counted(
        &mut self,
        now: Instant,
        reader: Guid,
        acknack: &AckNackRepr,
        last: SequenceNumber,
    ) {
        let stats = &mut self.stats;
        let Some(p) = self.readers.get_mut(&reader) else {
            return;
        };
        let first_acknack = p.last_acknack.is_none();
        p.last_acknack = Some(acknack.count);
        p.last_acknack_at = Some(now);
        if quirks::is_preemptive_acknack(&acknack.reader_sn_state) {
            stats.acknacks_preemptive = stats.acknacks_preemptive.saturating_add(1);
            p.heartbeat_wanted = true;
            return;
        }
        p.synced = true;
        let set = &acknack.reader_sn_state;
        let mut base = set.base();
        let mut beyond = false;
        // Cyclone: "Prevent a reader from ACKing future samples".
        if base > sn_next(last) {
            beyond = true;
            base = sn_next(last);
        }
        // Cyclone: "Prevent a malicious reader from lowering the min. sequence number
        // retained in the WHC".
        if base < p.reader_acked {
            stats.acknacks_lowered_base = stats.acknacks_lowered_base.saturating_add(1);
        } else {
            p.reader_acked = base;
        }
        p.acked_below = p.acked_below.max(base);
        // At most 256 members.
        for sn in set.iter() {
            if sn > last {
                beyond = true;
            } else if sn >= p.acked_below {
                p.requested.insert(sn);
            }
        }
        if beyond {
            stats.acknacks_beyond_max = stats.acknacks_beyond_max.saturating_add(1);
        }
        p.prune_requests();
        if p.has_requests() {
            p.schedule_repair(now.saturating_add(self.config.nack_response_delay));
        } else if !acknack.final_flag && (first_acknack || p.acked_below <= last) {
            // §8.4.9.2.8: a non-Final ACKNACK asks for a HEARTBEAT. Only answered while the
            // reader lags (or on first contact) so two peers cannot ping-pong forever.
            p.heartbeat_wanted = true;
        }
        self.release_acked();
    }

    /// Processes a NACK_FRAG from `reader` (RTPS 2.5 §8.4.14.1): requested fragments of a sample
    /// in the history are resent after `nack_response_delay`; fragments and samples that do not
    /// exist are ignored and counted (Cyclone `ddsi_transmit.c`).
    pub fn handle_nack_frag(&mut self, now: Instant, reader: Guid, nack_frag: &NackFragRepr) {
        let stats = &mut self.stats;
        stats.nack_frags_received = stats.nack_frags_received.saturating_add(1);
        if nack_frag.writer_id != self.config.guid.entity_id && !nack_frag.writer_id.is_unknown() {
            stats.not_for_us = stats.not_for_us.saturating_add(1);
            return;
        }
        let last = self.history.last_sn();
        let Some(p) = self.readers.get_mut(&reader) else {
            stats.unknown_reader = stats.unknown_reader.saturating_add(1);
            return;
        };
        if !self.config.reliable || !p.info.reliable {
            return;
        }
        if !count_is_newer(nack_frag.count, p.last_nack_frag) {
            stats.nack_frags_stale = stats.nack_frags_stale.saturating_add(1);
            return;
        }
        p.last_nack_frag = Some(nack_frag.count);
        let sn = nack_frag.writer_sn;
        if sn > last || sn < p.acked_below {
            stats.nack_frags_invalid = stats.nack_frags_invalid.saturating_add(1);
            return;
        }
        let change = self.history.get(sn).filter(|_| sn >= p.first_relevant);
        let Some(change) = change else {
            // Gone or irrelevant to this reader: a GAP answers it.
            p.requested.insert(sn);
            p.schedule_repair(now.saturating_add(self.config.nack_response_delay));
            return;
        };
        let max_data_size = self.config.max_data_size;
        let layout =
            FragmentLayout::if_needed(change.payload.len(), self.fragment_size, max_data_size);
        let Some(layout) = layout else {
            stats.nack_frags_invalid = stats.nack_frags_invalid.saturating_add(1);
            return;
        };
        let mut invalid = false;
        let mut wanted = RangeSet::default();
        for f in nack_frag.fragment_number_state.iter() {
            if (1..=layout.total).contains(&f.0) {
                wanted.insert(f.0, f.0.saturating_add(1));
            } else {
                invalid = true;
            }
        }
        if invalid {
            stats.nack_frags_invalid = stats.nack_frags_invalid.saturating_add(1);
        }
        if wanted.is_empty() {
            return;
        }
        let entry = p.requested_frags.entry(sn).or_default();
        for (a, b) in wanted.iter() {
            entry.insert(a, b);
        }
        p.schedule_repair(now.saturating_add(self.config.nack_response_delay));
    }

    /// Fires due timers: the periodic HEARTBEAT (§8.4.9.2.7, T7; sent per reader, directed, so
    /// each gets the `firstSN` that suits it) and repairs whose `nackResponseDelay` elapsed
    /// (§8.4.9.2.11, T11).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.next_heartbeat.is_some_and(|t| t <= now) {
            let last = self.history.last_sn();
            let mut any = false;
            for p in self
                .readers
                .values_mut()
                .filter(|p| p.wants_periodic_heartbeat(last))
            {
                p.heartbeat_wanted = true;
                any = true;
            }
            self.next_heartbeat = any.then(|| now.saturating_add(self.config.heartbeat_period));
        }
        for p in self.readers.values_mut() {
            if let RepairState::MustRepair { at } = p.repair {
                if at <= now {
                    p.repair = RepairState::Repairing;
                }
            }
        }
    }

    /// The next instant [`Writer::handle_timeout`] has work (or waiting samples of a burst
    /// are due to go out).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let repairs = self.readers.values().filter_map(|p| match p.repair {
            RepairState::MustRepair { at } => Some(at),
            _ => None,
        });
        self.next_heartbeat
            .into_iter()
            .chain(repairs)
            .chain(self.batch_deadline())
            .min()
    }

    /// When the samples waiting for a batch go out, if some wait for one: `batch_window` after
    /// the last push, when no input came since it, fewer than `batch_max_bytes` wait and
    /// the history has room for another (a KEEP_LAST history must not overwrite a sample that
    /// never went out, nor a KEEP_ALL one refuse a write while samples wait).
    fn batch_deadline(&self) -> Option<Instant> {
        let waiting = self.history.next_sn().0.saturating_sub(self.next_push.0);
        let capacity = self.config.history.capacity();
        let full = match self.config.history {
            HistoryKind::KeepAll { .. } => self.history.len() >= capacity,
            HistoryKind::KeepLast(_) => usize::try_from(waiting).unwrap_or(usize::MAX) >= capacity,
        };
        if waiting <= 0
            || full
            || self.waiting_bytes >= self.config.batch_max_bytes
            || self.config.batch_window.is_zero()
        {
            return None;
        }
        if self.inputs_seen != self.inputs_at_last_push {
            return None;
        }
        Some(self.last_push?.saturating_add(self.config.batch_window))
    }

    /// Ends the wait for a batch: samples waiting go out at the next poll (before the writer
    /// is deleted or its participant shuts down, so that batching loses nothing there).
    pub fn end_batch(&mut self) {
        self.last_push = None;
    }

    /// Tells the writer how many inputs (datagrams) its caller has handled so far, before a
    /// write: a sample written after new input is an answer to it (a reply, a pong) and is
    /// sent without waiting for a batch, however soon after the last push it comes.
    pub fn set_inputs_seen(&mut self, inputs: u64) {
        self.inputs_seen = inputs;
    }

    /// The next datagram content to send, if any. Call until `None` after every input.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.handle_timeout(now);
        if let Some(t) = self.poll_new_data(now) {
            return Some(t);
        }
        if std::mem::take(&mut self.liveliness_pending) {
            let first = self
                .broadcast_heartbeat_first()
                .unwrap_or_else(|| self.history.first_sn());
            let mut hb = self.heartbeat(EntityId::UNKNOWN, first, true);
            hb.liveliness_flag = true;
            let mut tx = TransmitBuilder::default();
            tx.push(&Submessage::Heartbeat(hb));
            if let Some(t) = tx.finish(self.broadcast_destinations(), None) {
                return Some(t);
            }
        }
        // Each reader with directed work once, in GUID order; readers without any are skipped
        // without touching (or moving) their proxies.
        let mut after: Option<Guid> = None;
        loop {
            let next = match after {
                None => self.readers.range(..),
                Some(g) => self
                    .readers
                    .range((std::ops::Bound::Excluded(g), std::ops::Bound::Unbounded)),
            }
            .find(|(_, p)| p.has_directed_work())
            .map(|(g, _)| *g)?;
            if let Some(t) = self.poll_directed(next) {
                return Some(t);
            }
            after = Some(next);
        }
    }

    /// Pushes samples written since the last poll to every matched reader (§8.4.9.2.4, T4, with
    /// `readerId = ENTITYID_UNKNOWN` as §8.4.15.5 encourages) and piggybacks one HEARTBEAT per
    /// transmit (§8.4.15.4), not per sample. In a burst, waits for the batch first (module
    /// documentation).
    fn poll_new_data(&mut self, now: Instant) -> Option<Transmit> {
        if self.next_push < self.history.next_sn() {
            if self.batch_deadline().is_some_and(|t| now < t) {
                return None;
            }
            self.last_push = Some(now);
            self.inputs_at_last_push = self.inputs_seen;
            self.waiting_bytes = 0;
        }
        while self.next_push < self.history.next_sn() {
            let mut tx = TransmitBuilder::default();
            let ids = (EntityId::UNKNOWN, self.config.guid.entity_id);
            let mut sn = self.next_push;
            while sn < self.history.next_sn() && (tx.is_empty() || tx.bytes() < TRANSMIT_BUDGET) {
                match self.history.get(sn) {
                    Some(change) if change.given_up => self.gap_to_each_reader(sn),
                    Some(change) => self.push_sample(&mut tx, change.clone(), ids),
                    None => {
                        // Overwritten before it went out (a GAP is on its way).
                        sn = self.history.next_present(sn).max(sn_next(sn));
                        continue;
                    }
                }
                sn = sn_next(sn);
            }
            self.next_push = sn;
            if let Some(first) = self.broadcast_heartbeat_first() {
                let final_flag = !self.needs_acknowledgements();
                let hb = self.heartbeat(EntityId::UNKNOWN, first, final_flag);
                tx.push(&Submessage::Heartbeat(hb));
            }
            if let Some(t) = tx.finish(self.broadcast_destinations(), None) {
                return Some(t);
            }
        }
        None
    }

    /// Queues a GAP for the given-up number `sn` to every matched reader that has not
    /// acknowledged it, addressed to that reader (INFO_DST and its readerId), as a repair
    /// would be. Not one GAP with `readerId = ENTITYID_UNKNOWN` like new DATA: RTPS 2.5
    /// §8.3.8.4 allows it, and Fast DDS and roslite's readers take it, but Cyclone DDS 11
    /// applies a GAP only to the reader it names. Its reader ignored the broadcast one and
    /// went on asking for the number, holding back every later sample until its ACKNACK
    /// brought a directed GAP: a heartbeat round trip, or never while its ACKNACKs are lost.
    fn gap_to_each_reader(&mut self, sn: SequenceNumber) {
        for p in self.readers.values_mut() {
            if sn < p.first_relevant || sn < p.acked_below {
                continue;
            }
            p.requested.insert(sn);
            if p.repair == RepairState::Waiting {
                p.repair = RepairState::Repairing;
            }
        }
    }

    /// Whether a KEEP_ALL history is half full (of samples or bytes): then the HEARTBEAT
    /// pushed with new samples is not Final, so readers acknowledge them now (RTPS 2.5
    /// §8.3.8.5: only the FinalFlag lets a reader leave a HEARTBEAT unanswered) rather than at
    /// the next periodic HEARTBEAT, which would leave a fast writer full and waiting for most
    /// of `heartbeat_period` (a history of 5000 samples a period caps a stream at 50 000
    /// samples a second).
    fn needs_acknowledgements(&self) -> bool {
        if !self.config.history.is_keep_all() {
            return false;
        }
        let half = |n: usize| n.div_ceil(2);
        self.history.len() >= half(self.config.history.capacity())
            || self.history.bytes() >= half(self.config.max_history_bytes)
    }

    /// Everything for one reader: catch-up, repairs, GAPs and its HEARTBEAT.
    fn poll_directed(&mut self, guid: Guid) -> Option<Transmit> {
        let mut tx = TransmitBuilder::default();
        let mut p = self.readers.remove(&guid)?;
        let ids = (p.info.guid.entity_id, self.config.guid.entity_id);
        let mut repaired = false;
        // Catch-up of a transient-local late joiner.
        while p.unsent.0 < p.unsent.1 && tx.bytes() < TRANSMIT_BUDGET {
            let sn = p.unsent.0;
            match self.history.get(sn) {
                Some(change) => {
                    self.push_sample(&mut tx, change.clone(), ids);
                    p.unsent.0 = sn_next(sn);
                }
                None => {
                    let end = self.history.next_present(sn).clamp(sn_next(sn), p.unsent.1);
                    self.push_gap(&mut tx, ids, sn, end);
                    p.unsent.0 = end;
                }
            }
        }
        if p.repair == RepairState::Repairing {
            repaired = true;
            self.push_repairs(&mut tx, &mut p, ids);
        }
        let wants_hb = p.heartbeat_wanted || (repaired && p.repair == RepairState::Waiting);
        if wants_hb && self.config.reliable && p.info.reliable {
            let last = self.history.last_sn();
            let first = self
                .history
                .first_sn()
                .max(p.acked_below)
                .min(sn_next(last));
            // Final only for the HEARTBEAT that closes a repair round.
            let hb = self.heartbeat(ids.0, first, !p.heartbeat_wanted);
            tx.push(&Submessage::Heartbeat(hb));
        }
        p.heartbeat_wanted = false;
        let destinations = directed_locators(&p.info.unicast, &p.info.multicast);
        let prefix = p.info.guid.prefix;
        self.readers.insert(guid, p);
        tx.finish(destinations, Some(prefix))
    }

    /// Sends requested samples and fragments (§8.4.9.2.12, T12), GAP for those not available
    /// ("efficient implementations will combine multiple irrelevant sequence numbers as much as
    /// possible into a single GAP").
    fn push_repairs(
        &mut self,
        tx: &mut TransmitBuilder,
        p: &mut ReaderProxy,
        ids: (EntityId, EntityId),
    ) {
        while tx.bytes() < TRANSMIT_BUDGET {
            let Some(sn) = p.requested.pop_first() else {
                break;
            };
            p.requested_frags.remove(&sn);
            let change = self.history.get(sn).filter(|_| sn >= p.first_relevant);
            if let Some(change) = change {
                if !change.given_up {
                    self.stats.samples_resent = self.stats.samples_resent.saturating_add(1);
                }
                self.push_sample(tx, change.clone(), ids);
                continue;
            }
            // Irrelevant to this reader: everything up to where samples become available
            // again, as one interval (never iterated).
            // (Below the history, or in a hole a keyed KEEP_LAST history left.)
            let mut end = self.history.next_present(sn).max(sn_next(sn));
            if sn < p.first_relevant {
                end = end.max(p.first_relevant);
            }
            let end = end.min(sn_next(self.history.last_sn())).max(sn_next(sn));
            // Drop requests the GAP covers, and extend over requested irrelevant neighbours.
            p.requested = p.requested.split_off(&end);
            let doomed: Vec<SequenceNumber> =
                p.requested_frags.range(..end).map(|(k, _)| *k).collect();
            for k in doomed {
                p.requested_frags.remove(&k);
            }
            self.push_gap(tx, ids, sn, end);
        }
        while tx.bytes() < TRANSMIT_BUDGET {
            let Some((sn, frags)) = p.requested_frags.pop_first() else {
                break;
            };
            let Some(change) = self
                .history
                .get(sn)
                .filter(|_| sn >= p.first_relevant)
                .cloned()
            else {
                self.push_gap(tx, ids, sn, sn_next(sn));
                continue;
            };
            let max_data_size = self.config.max_data_size;
            let len = change.payload.len();
            let Some(layout) = FragmentLayout::if_needed(len, self.fragment_size, max_data_size)
            else {
                continue;
            };
            for (a, b) in frags.iter() {
                let n = push_data_frags(tx, ids, &change, &layout, a, b);
                self.stats.data_frag_sent = self.stats.data_frag_sent.saturating_add(n);
                self.stats.fragments_resent = self.stats.fragments_resent.saturating_add(n);
            }
        }
        if !p.has_requests() {
            p.repair = RepairState::Waiting;
        }
    }

    /// Appends one sample as DATA, or as DATA_FRAGs if larger than `max_data_size`.
    fn push_sample(
        &mut self,
        tx: &mut TransmitBuilder,
        change: CacheChange,
        ids: (EntityId, EntityId),
    ) {
        if change.given_up {
            self.push_gap(tx, ids, change.sn, sn_next(change.sn));
            return;
        }
        let len = change.payload.len();
        let layout = FragmentLayout::if_needed(len, self.fragment_size, self.config.max_data_size);
        if let Some(layout) = layout {
            let n = push_data_frags(tx, ids, &change, &layout, 1, layout.total.saturating_add(1));
            self.stats.data_frag_sent = self.stats.data_frag_sent.saturating_add(n);
            return;
        }
        let qos = change
            .inline_qos
            .as_deref()
            .and_then(|q| ParameterList::parse(q, Endianness::Little).ok());
        let payload = (!change.payload.is_empty()).then_some(SerializedPayload {
            kind: PayloadKind::Data,
            bytes: &change.payload,
        });
        tx.set_timestamp(change.source_timestamp);
        tx.push(&Submessage::Data(DataRepr {
            extra_flags: 0,
            reader_id: ids.0,
            writer_id: ids.1,
            writer_sn: change.sn,
            inline_qos: qos,
            payload,
            non_standard_payload: false,
        }));
        self.stats.data_sent = self.stats.data_sent.saturating_add(1);
    }

    /// Appends a GAP marking `start .. end` irrelevant (§8.3.8.4: `gapStart` and a
    /// `gapList` with base `end` and no bits).
    fn push_gap(
        &mut self,
        tx: &mut TransmitBuilder,
        ids: (EntityId, EntityId),
        start: SequenceNumber,
        end: SequenceNumber,
    ) {
        if start >= end || !start.is_valid_sample() {
            return;
        }
        tx.push(&Submessage::Gap(GapRepr {
            reader_id: ids.0,
            writer_id: ids.1,
            gap_start: start,
            gap_list: SequenceNumberSet::empty(end),
        }));
        self.stats.gaps_sent = self.stats.gaps_sent.saturating_add(1);
    }

    /// A HEARTBEAT for `first ..= last_sn` with the next count (§8.3.8.5).
    fn heartbeat(
        &mut self,
        reader_id: EntityId,
        first: SequenceNumber,
        final_flag: bool,
    ) -> HeartbeatRepr {
        self.heartbeat_count = count_next(self.heartbeat_count);
        self.stats.heartbeats_sent = self.stats.heartbeats_sent.saturating_add(1);
        let last = self.history.last_sn();
        HeartbeatRepr {
            reader_id,
            writer_id: self.config.guid.entity_id,
            // firstSN ≥ 1 and lastSN ≥ firstSN − 1 (§8.3.8.5.3).
            first_sn: first.clamp(SequenceNumber::FIRST, sn_next(last)),
            last_sn: last,
            count: self.heartbeat_count,
            final_flag,
            liveliness_flag: false,
        }
    }

    /// `firstSN` of a HEARTBEAT to all readers: nothing below what every reliable reader
    /// acknowledged needs announcing (so volatile late joiners do not ask for samples from
    /// before their time). `None` if no reliable reader is matched.
    fn broadcast_heartbeat_first(&self) -> Option<SequenceNumber> {
        if !self.config.reliable {
            return None;
        }
        let min_acked = self
            .readers
            .values()
            .filter(|p| p.info.reliable)
            .map(|p| p.acked_below)
            .min()?;
        Some(self.history.first_sn().max(min_acked))
    }

    /// Where samples for every reader go: one multicast locator shared by all readers, else
    /// the union of their directed locators.
    fn broadcast_destinations(&self) -> Vec<Locator> {
        let mut readers = self.readers.values();
        if self.readers.len() > 1 {
            if let Some(first) = readers.next() {
                let shared = first
                    .info
                    .multicast
                    .iter()
                    .find(|m| self.readers.values().all(|p| p.info.multicast.contains(m)));
                if let Some(m) = shared {
                    return vec![*m];
                }
            }
        }
        let mut out = Vec::new();
        for p in self.readers.values() {
            for l in directed_locators(&p.info.unicast, &p.info.multicast) {
                push_unique(&mut out, l);
            }
        }
        out
    }
}
