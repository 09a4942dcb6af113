//! The stateful reader (RTPS 2.5 §8.4.10–§8.4.12): best-effort and reliable.
//!
//! Ownership: the [`Reader`] owns one `WriterProxy` per matched writer and the queue of
//! samples ready for the application ([`Reader::poll_sample`]).
//!
//! - Best effort (§8.4.12.1): a sample is delivered if its sequence number is above every one
//!   delivered from that writer (T2); HEARTBEAT and GAP are ignored (a GAP cannot change what
//!   a best-effort reader accepts) and nothing is ever requested.
//! - Reliable (§8.4.12): samples are delivered strictly in order per writer, each once.
//!   Out-of-order samples wait in a bounded buffer; GAPs and a HEARTBEAT's `firstSN` mark
//!   numbers irrelevant as intervals, so a GAP of 2^40 numbers is one jump
//!   (CVE-2025-64438). A HEARTBEAT without the Final flag, or one announcing data we lack, is
//!   answered after `heartbeat_response_delay` with an ACKNACK (at most 256 numbers) and
//!   NACK_FRAGs for partly received samples.
//!
//! Bounds on what a writer can make us hold (per writer): [`Reader::MAX_OUT_OF_ORDER`] samples
//! and `max_sample_size` bytes of out-of-order samples, `max_samples_in_reassembly_per_writer`
//! reassemblies sharing `max_sample_size` bytes, [`Reader::MAX_IRRELEVANT_RANGES`] GAP
//! intervals. A sample that does not fit is dropped unacknowledged, so a reliable writer sends
//! it again later. A sample whose `sampleSize` exceeds `max_sample_size` can never fit: it is
//! lost, and a reliable reader treats its number as irrelevant (acknowledged, never requested)
//! so the writer's later samples still flow.
//!
//! Forged control traffic (docs/robustness.md §1): a HEARTBEAT or GAP reaching beyond what the
//! writer can plausibly have written ([`Reader::MAX_SN_ADVANCE`]) is dropped as malformed, and
//! a HEARTBEAT whose `lastSN` is below numbers skipped since the last delivered sample undoes
//! that skip (a writer's numbers only grow, RTPS 2.5 §8.3.8.6.3), so the real writer's next
//! HEARTBEAT recovers a stream a forged one had moved.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use roslite_cdr::key::KeyStruct;
use roslite_cdr::Endianness;

use crate::instant::Instant;
use crate::parameter_list::ParameterList;
use crate::types::{Guid, GuidPrefix, SequenceNumber, SequenceNumberSet, Time};
use crate::wire::{
    AckNackRepr, DataFragRepr, DataRepr, GapRepr, HeartbeatFragRepr, HeartbeatRepr, NackFragRepr,
    PayloadKind, Submessage,
};

use super::fragments::{FragOutcome, ReassemblyLimits, SharedBudgets};
use super::history::{HistoryKind, InstanceKey, MAX_KEPT_INSTANCES};
use super::numbers::{count_is_newer, count_next, sn_add, sn_next};
use super::proxies::{AckState, WriterProxy, WriterProxyInfo};
use super::range_set::RangeSet;
use super::received::ReceivedSample;
use super::transmit::{directed_locators, Transmit, TransmitBuilder};

/// Reader configuration (DDS QoS mapped onto RTPS 2.5 §8.4.10.1 attributes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaderConfig {
    pub guid: Guid,
    pub reliable: bool,
    pub transient_local: bool,
    /// Bounds the queue of samples not yet taken with [`Reader::poll_sample`]: KEEP_LAST
    /// drops the oldest (of the sample's instance, for a keyed topic: DDS 1.4 §2.2.3.18);
    /// KEEP_ALL stops delivering (reliable samples stay unacknowledged so the writer holds
    /// them; best-effort ones are dropped).
    pub history: HistoryKind,
    /// The key members of a keyed topic's type, which tell its instances apart; `None` for a
    /// keyless topic.
    pub key: Option<&'static KeyStruct>,
    /// For a keyed topic: the instances whose newest `depth` samples a KEEP_LAST queue keeps
    /// ([`HistoryKind::keyed_capacity`]); default [`MAX_KEPT_INSTANCES`].
    pub max_instances: usize,
    /// `heartbeatResponseDelay` (§8.4.10.1); default 5 ms.
    pub heartbeat_response_delay: Duration,
    /// Concurrent DATA_FRAG reassemblies per writer; 16 reliable / 4 best effort (Cyclone).
    pub max_samples_in_reassembly_per_writer: usize,
    /// Largest `sampleSize` accepted; default 256 MiB. Also the byte budget of one writer's
    /// reassemblies and of its out-of-order samples.
    pub max_sample_size: usize,
    /// A reassembly without a new fragment for this long is dropped; default 10 s.
    pub reassembly_timeout: Duration,
    /// Remember where an unmatched writer's stream stood, so that when the same writer
    /// matches again its stream continues from there: what it wrote in between is counted
    /// lost and nothing is delivered twice ([`Reader::remove_writer`]). Default false: a
    /// discovery reader must be handed everything again after its peer was lost.
    pub remember_unmatched_writers: bool,
}

impl ReaderConfig {
    /// Volatile, KEEP_LAST 10, with the defaults documented on each field.
    pub fn new(guid: Guid, reliable: bool) -> Self {
        ReaderConfig {
            guid,
            reliable,
            transient_local: false,
            history: HistoryKind::default(),
            heartbeat_response_delay: Duration::from_millis(5),
            max_samples_in_reassembly_per_writer: if reliable { 16 } else { 4 },
            max_sample_size: 256 << 20,
            reassembly_timeout: Duration::from_secs(10),
            remember_unmatched_writers: false,
            key: None,
            max_instances: MAX_KEPT_INSTANCES,
        }
    }
}

/// What a reader received, delivered and dropped. Writer misbehaviour is counted here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderStats {
    /// Samples put in the queue for [`Reader::poll_sample`].
    pub samples_delivered: u64,
    /// Samples already delivered, already buffered or irrelevant.
    pub duplicates: u64,
    /// Samples too far ahead of the next expected one, or over the out-of-order byte budget.
    pub out_of_window: u64,
    /// Submessages from a writer that is not matched.
    pub unknown_writer: u64,
    /// Submessages addressed to another reader.
    pub not_for_us: u64,
    pub heartbeats_received: u64,
    /// HEARTBEAT/HEARTBEAT_FRAG with a count not newer than the last one.
    pub heartbeats_stale: u64,
    /// HEARTBEATs whose `lastSN`, and GAPs whose range, reach beyond what the writer can
    /// plausibly have written ([`Reader::MAX_SN_ADVANCE`]): dropped as malformed.
    pub implausible_sequence_numbers: u64,
    /// HEARTBEATs saying the writer has not written numbers this reader had skipped as
    /// irrelevant (so a forged GAP or HEARTBEAT had moved it): the skip was undone.
    pub skips_undone: u64,
    pub heartbeat_frags_received: u64,
    pub gaps_received: u64,
    /// Sequence numbers skipped as irrelevant (GAP, or below a HEARTBEAT's `firstSN`).
    pub irrelevant_skipped: u64,
    /// Sequence numbers that will never be delivered, from the first sample of their writer
    /// on (see [`ReceivedSample::lost_before`]).
    pub samples_lost: u64,
    pub acknacks_sent: u64,
    pub nack_frags_sent: u64,
    /// DATA_FRAG submessages received.
    pub data_frags_received: u64,
    /// DATA_FRAG whose `sampleSize`, `fragmentSize` or key flag contradict earlier fragments.
    pub fragments_inconsistent: u64,
    /// DATA_FRAG with `sampleSize` above `max_sample_size` (a reliable reader sees only the
    /// first of such a sample: it then skips the sample as lost).
    pub samples_too_large: u64,
    /// DATA_FRAG dropped for lack of a reassembly slot or room in the writer's byte budget.
    pub reassembly_no_room: u64,
    /// DATA_FRAG dropped for lack of room in a shared byte budget (the remote participant's or
    /// the local participant's total).
    pub reassembly_no_shared_room: u64,
    /// Reassemblies dropped to make room for a more urgent one.
    pub reassembly_evicted: u64,
    pub reassembly_timed_out: u64,
    /// Best-effort samples dropped because a KEEP_ALL queue was full.
    pub samples_rejected: u64,
    /// Undelivered samples dropped from a full KEEP_LAST queue.
    pub samples_overwritten: u64,
    /// Of those, samples of a keyed KEEP_LAST reader that went to make room for another
    /// instance's: the queue held `depth` samples of [`ReaderConfig::max_instances`] instances.
    pub instance_limit_overwritten: u64,
    /// Inline QoS whose key hash or status info could not be read (sample still delivered).
    pub invalid_inline_qos: u64,
    /// Sequence numbers skipped (GAP, or overtaken) of writers that filter for this reader
    /// (their samples carry its content filter signature, [`Reader::set_content_filter`]):
    /// filtered out by the writer, so not counted in `samples_lost`. A GAP does not say why
    /// a number is irrelevant, so a sample such a writer dropped for another reason is
    /// counted here too.
    pub samples_filtered_by_writer: u64,
}

/// The application-side queue and its policy.
#[derive(Clone, Debug)]
struct Delivery {
    /// Each sample with its instance, once read (for a keyed KEEP_LAST reader:
    /// [`Delivery::make_instance_room`]).
    ready: VecDeque<(ReceivedSample, Option<InstanceKey>)>,
    history: HistoryKind,
    key: Option<&'static KeyStruct>,
    max_instances: usize,
    /// A KEEP_ALL queue filled up and in-order samples are waiting.
    blocked: bool,
}

impl Delivery {
    fn has_room(&self) -> bool {
        !self.history.is_keep_all() || self.ready.len() < self.history.capacity()
    }

    fn push(&mut self, sample: ReceivedSample, stats: &mut ReaderStats) {
        let capacity = match (self.history, self.key) {
            (HistoryKind::KeepLast(depth), Some(key)) => {
                self.make_instance_room(&sample, depth.max(1), key, stats);
                self.history.keyed_capacity(self.max_instances)
            }
            (_, Some(_)) => self.history.keyed_capacity(self.max_instances),
            (_, None) => self.history.capacity(),
        };
        if self.ready.len() >= capacity {
            if self.history.is_keep_all() {
                stats.samples_rejected = stats.samples_rejected.saturating_add(1);
                return;
            }
            self.ready.pop_front();
            stats.samples_overwritten = stats.samples_overwritten.saturating_add(1);
            if self.key.is_some() {
                stats.instance_limit_overwritten =
                    stats.instance_limit_overwritten.saturating_add(1);
            }
        }
        self.ready.push_back((sample, None));
        stats.samples_delivered = stats.samples_delivered.saturating_add(1);
    }

    /// Makes room for `sample` among the queued samples of its instance (a keyed KEEP_LAST
    /// queue of `depth`): drops the oldest of them if there are `depth`. Keys are read only
    /// once the queue holds `depth` samples, the least an instance needs to be full: a queue
    /// taken from at once, as the runtime takes it, never reads one. A sample whose key
    /// cannot be read (a dispose or unregister has no payload) takes no instance's place.
    fn make_instance_room(
        &mut self,
        sample: &ReceivedSample,
        depth: usize,
        key: &'static KeyStruct,
        stats: &mut ReaderStats,
    ) {
        if self.ready.len() < depth {
            return;
        }
        let Ok(instance) = key.key_of(&sample.payload) else {
            return;
        };
        let mut same: usize = 0;
        let mut oldest = None;
        for (index, (queued, known)) in self.ready.iter_mut().enumerate() {
            if known.is_none() {
                *known = key.key_of(&queued.payload).ok().map(InstanceKey::from);
            }
            if known.as_deref() == Some(&instance[..]) {
                same = same.saturating_add(1);
                oldest = oldest.or(Some(index));
            }
        }
        if same >= depth {
            if let Some(index) = oldest {
                self.ready.remove(index);
                stats.samples_overwritten = stats.samples_overwritten.saturating_add(1);
            }
        }
    }
}

/// A best-effort or reliable stateful reader. See the module documentation.
#[derive(Clone, Debug)]
pub struct Reader {
    config: ReaderConfig,
    writers: BTreeMap<Guid, WriterProxy>,
    /// Where the streams of writers unmatched lately stood, oldest first.
    remembered: VecDeque<RememberedWriter>,
    delivery: Delivery,
    stats: ReaderStats,
    /// A DATA_FRAG found a shared budget full since [`Reader::take_wants_shared_room`].
    wants_shared_room: bool,
    /// The signatures of this reader's content filter, the current one last (see
    /// [`Reader::set_content_filter`]).
    filter_signatures: Vec<[u8; 16]>,
}

/// How many of a reader's past content filter signatures it still recognises in samples: a
/// writer goes on filtering with the previous filter until it learns the new one.
const REMEMBERED_FILTER_SIGNATURES: usize = 4;

/// Where an unmatched writer's stream stood (see [`Reader::remove_writer`]).
#[derive(Clone, Copy, Debug)]
struct RememberedWriter {
    guid: Guid,
    next_expected: SequenceNumber,
    lost_pending: u64,
}

impl Reader {
    /// Out-of-order samples buffered per writer.
    pub const MAX_OUT_OF_ORDER: i64 = 1024;
    /// Disjoint irrelevant intervals (from GAPs) remembered per writer; further ones are
    /// forgotten and answered again by the writer when requested.
    pub const MAX_IRRELEVANT_RANGES: usize = 1024;
    /// NACK_FRAG bitmaps (of up to 256 fragments) sent per writer in one response.
    pub const MAX_NACK_FRAG_WINDOWS: usize = 32;
    /// How far beyond the highest number a writer has shown (an accepted HEARTBEAT's `lastSN`
    /// or a DATA within the window) a HEARTBEAT or GAP may reach at once, plus
    /// [`Reader::MAX_SN_RATE`] per second since it was shown; beyond, it is malformed
    /// (docs/robustness.md §1). Before anything was shown there is no bound.
    pub const MAX_SN_ADVANCE: i64 = 1 << 16;
    /// Samples per second a writer is assumed to write at most (see
    /// [`Reader::MAX_SN_ADVANCE`]).
    pub const MAX_SN_RATE: i64 = 1 << 20;
    /// Unmatched writers whose position is remembered ([`Self::remove_writer`]).
    pub const MAX_REMEMBERED_WRITERS: usize = 64;

    pub fn new(config: ReaderConfig) -> Self {
        let delivery = Delivery {
            ready: VecDeque::new(),
            history: config.history,
            key: config.key,
            max_instances: config.max_instances,
            blocked: false,
        };
        Reader {
            config,
            writers: BTreeMap::new(),
            remembered: VecDeque::new(),
            delivery,
            stats: ReaderStats::default(),
            wants_shared_room: false,
            filter_signatures: Vec::new(),
        }
    }

    /// Sets the signature of the content filter this reader announces
    /// ([`ContentFilterProperty::signature`](crate::discovery::ContentFilterProperty::signature)),
    /// `None` for none. A writer whose samples carry it in `PID_CONTENT_FILTER_INFO` filters
    /// for this reader, and the numbers it skips are counted as filtered, not lost
    /// ([`ReaderStats::samples_filtered_by_writer`]). A new filter keeps the last few
    /// signatures recognised, as writers move to it one by one; no filter forgets them and
    /// which writers filtered.
    pub fn set_content_filter(&mut self, signature: Option<[u8; 16]>) {
        let Some(signature) = signature else {
            self.filter_signatures.clear();
            self.writers
                .values_mut()
                .for_each(|p| p.filters_for_reader = false);
            return;
        };
        self.filter_signatures.retain(|s| *s != signature);
        if self.filter_signatures.len() >= REMEMBERED_FILTER_SIGNATURES {
            self.filter_signatures.remove(0);
        }
        self.filter_signatures.push(signature);
    }

    pub fn guid(&self) -> Guid {
        self.config.guid
    }

    pub fn config(&self) -> &ReaderConfig {
        &self.config
    }

    pub fn stats(&self) -> ReaderStats {
        self.stats
    }

    /// Whether this keyed reader's queue ever dropped a sample for another instance's because
    /// it held `depth` samples of [`ReaderConfig::max_instances`] instances (read after every
    /// sample taken, so without copying the stats).
    pub fn instance_limit_reached(&self) -> bool {
        self.stats.instance_limit_overwritten > 0
    }

    pub fn matched_writers(&self) -> impl Iterator<Item = &Guid> {
        self.writers.keys()
    }

    /// Samples waiting in the queue.
    pub fn ready_len(&self) -> usize {
        self.delivery.ready.len()
    }

    /// Matches a writer (§8.4.12.2 T1; the proxy as in §8.4.10.4). A reliable reader sends a
    /// pre-emptive ACKNACK after `heartbeat_response_delay` so the writer announces itself.
    /// Adding a known writer updates its locators only.
    pub fn add_writer(&mut self, now: Instant, writer: WriterProxyInfo) {
        self.add_writer_with_budgets(now, writer, SharedBudgets::default());
    }

    /// [`Reader::add_writer`], charging the writer's reassemblies to `budgets` as well as to
    /// its own (a new proxy only; a known writer keeps its budgets).
    pub fn add_writer_with_budgets(
        &mut self,
        now: Instant,
        writer: WriterProxyInfo,
        budgets: SharedBudgets,
    ) {
        if let Some(p) = self.writers.get_mut(&writer.guid) {
            p.info = writer;
            return;
        }
        let mut proxy = WriterProxy::new(now, writer, budgets);
        if let Some(at) = self
            .remembered
            .iter()
            .position(|r| r.guid == proxy.info.guid)
        {
            if let Some(r) = self.remembered.remove(at) {
                proxy.next_expected = r.next_expected;
                proxy.lost_pending = r.lost_pending;
                proxy.delivered_any = true;
            }
        }
        if self.config.reliable {
            proxy.schedule_ack(
                now.saturating_add(self.config.heartbeat_response_delay),
                true,
            );
        }
        self.writers.insert(proxy.info.guid, proxy);
    }

    /// Unmatches a writer; its buffered and partly reassembled samples are dropped. Where
    /// its stream stood is remembered (the newest [`Self::MAX_REMEMBERED_WRITERS`]): when the
    /// same writer matches again (its participant's lease ran out while this process was
    /// stopped, say, and it was discovered again), what it wrote in between and will never
    /// deliver is counted lost ([`ReceivedSample::lost_before`]) instead of passing unseen.
    pub fn remove_writer(&mut self, guid: &Guid) {
        let Some(p) = self.writers.remove(guid) else {
            return;
        };
        if self.config.remember_unmatched_writers && p.delivered_any {
            self.remembered.retain(|r| r.guid != *guid);
            if self.remembered.len() >= Self::MAX_REMEMBERED_WRITERS {
                self.remembered.pop_front();
            }
            self.remembered.push_back(RememberedWriter {
                guid: *guid,
                next_expected: p.next_expected,
                lost_pending: p.lost_pending,
            });
        }
    }

    /// Whether a DATA_FRAG was dropped for a full shared budget since the last call.
    pub fn take_wants_shared_room(&mut self) -> bool {
        std::mem::take(&mut self.wants_shared_room)
    }

    /// Drops the partly reassembled samples of every writer of participant `prefix`
    /// (counted as evicted). Returns how many.
    pub fn discard_reassemblies_from(&mut self, prefix: GuidPrefix) -> usize {
        let mut n = 0usize;
        for (_, p) in self
            .writers
            .range_mut(Guid::new(prefix, crate::types::EntityId::UNKNOWN)..)
            .take_while(|(g, _)| g.prefix == prefix)
        {
            n = n.saturating_add(p.reassembly.clear());
        }
        let count = u64::try_from(n).unwrap_or(u64::MAX);
        self.stats.reassembly_evicted = self.stats.reassembly_evicted.saturating_add(count);
        n
    }

    /// Bytes of fragments held for writers of participant `prefix`.
    pub fn reassembly_bytes_from(&self, prefix: GuidPrefix) -> usize {
        self.writers
            .range(Guid::new(prefix, crate::types::EntityId::UNKNOWN)..)
            .take_while(|(g, _)| g.prefix == prefix)
            .fold(0usize, |a, (_, p)| a.saturating_add(p.reassembly.bytes()))
    }

    /// Looks up the proxy of `writer` and checks that `reader_id` addresses this reader.
    fn proxy(
        &mut self,
        writer: Guid,
        reader_id: crate::types::EntityId,
    ) -> Option<&mut WriterProxy> {
        let own = self.config.guid.entity_id;
        find_proxy(&mut self.writers, &mut self.stats, own, writer, reader_id)
    }

    /// Processes a DATA from `writer` (§8.4.12.1 T2 best effort, §8.4.12.2 T8 reliable).
    pub fn handle_data(
        &mut self,
        _now: Instant,
        writer: Guid,
        data: &DataRepr<'_>,
        source_timestamp: Option<Time>,
    ) {
        let reliable = self.config.reliable;
        let Reader {
            writers,
            delivery,
            stats,
            config,
            filter_signatures,
            ..
        } = self;
        if !data.reader_id.is_unknown() && data.reader_id != config.guid.entity_id {
            stats.not_for_us = stats.not_for_us.saturating_add(1);
            return;
        }
        let Some(p) = writers.get_mut(&writer) else {
            stats.unknown_writer = stats.unknown_writer.saturating_add(1);
            return;
        };
        if !accepts(p, data.writer_sn, reliable, stats) {
            return;
        }
        shown(p, _now, data.writer_sn);
        let payload = match data.payload {
            Some(pl) if pl.kind == PayloadKind::Data => pl.bytes.to_vec(),
            _ => Vec::new(),
        };
        let qos = data.inline_qos.map(|q| {
            let mut bytes = Vec::with_capacity(q.buffer_len());
            q.emit(&mut bytes);
            (bytes, q.endianness())
        });
        let sample = make_sample(
            writer,
            data.writer_sn,
            payload,
            qos,
            source_timestamp,
            stats,
        );
        note_writer_filtering(p, &sample, filter_signatures);
        on_sample(p, sample, reliable, config, delivery, stats);
    }

    /// Processes a DATA_FRAG from `writer` (§8.4.14.1): stores its fragments and delivers the
    /// sample once complete.
    pub fn handle_data_frag(
        &mut self,
        now: Instant,
        writer: Guid,
        frag: &DataFragRepr<'_>,
        source_timestamp: Option<Time>,
    ) {
        let reliable = self.config.reliable;
        let limits = ReassemblyLimits {
            max_samples: self.config.max_samples_in_reassembly_per_writer,
            max_sample_size: self.config.max_sample_size,
            max_bytes: self.config.max_sample_size,
            keep_oldest: reliable,
        };
        let Reader {
            writers,
            delivery,
            stats,
            config,
            wants_shared_room,
            filter_signatures,
            ..
        } = self;
        stats.data_frags_received = stats.data_frags_received.saturating_add(1);
        if !frag.reader_id.is_unknown() && frag.reader_id != config.guid.entity_id {
            stats.not_for_us = stats.not_for_us.saturating_add(1);
            return;
        }
        let Some(p) = writers.get_mut(&writer) else {
            stats.unknown_writer = stats.unknown_writer.saturating_add(1);
            return;
        };
        if !accepts(p, frag.writer_sn, reliable, stats) {
            return;
        }
        shown(p, now, frag.writer_sn);
        let outcome = p.reassembly.insert(
            now,
            frag,
            source_timestamp,
            &limits,
            &mut stats.reassembly_evicted,
        );
        let counter = match outcome {
            FragOutcome::Complete(done) => {
                let payload = if done.key { Vec::new() } else { done.payload };
                let sample = make_sample(
                    writer,
                    frag.writer_sn,
                    payload,
                    done.inline_qos,
                    done.source_timestamp,
                    stats,
                );
                note_writer_filtering(p, &sample, filter_signatures);
                on_sample(p, sample, reliable, config, delivery, stats);
                return;
            }
            FragOutcome::Incomplete => return,
            FragOutcome::Inconsistent => &mut stats.fragments_inconsistent,
            FragOutcome::NoRoom => &mut stats.reassembly_no_room,
            FragOutcome::NoSharedRoom => {
                *wants_shared_room = true;
                &mut stats.reassembly_no_shared_room
            }
            FragOutcome::TooLarge => {
                // This reader can never accept the sample: it is lost (DDS SAMPLE_LOST), not
                // missing. A reliable reader marks it irrelevant, as if GAPped, so the
                // ACKNACK base moves past it: otherwise the writer resends the whole sample
                // at every HEARTBEAT and every later sample waits behind it forever.
                stats.samples_too_large = stats.samples_too_large.saturating_add(1);
                if reliable {
                    let sn = frag.writer_sn;
                    p.irrelevant.insert(sn, sn_next(sn));
                    p.irrelevant.truncate(Self::MAX_IRRELEVANT_RANGES);
                    advance(p, delivery, stats);
                }
                return;
            }
        };
        *counter = counter.saturating_add(1);
    }

    /// Processes a HEARTBEAT (§8.4.12.2 T2, T7): `firstSN` marks older unreceived numbers lost,
    /// `lastSN` is remembered as a number (never expanded), and an ACKNACK is scheduled.
    pub fn handle_heartbeat(&mut self, now: Instant, writer: Guid, hb: &HeartbeatRepr) {
        self.stats.heartbeats_received = self.stats.heartbeats_received.saturating_add(1);
        if !self.config.reliable {
            return;
        }
        let own = self.config.guid.entity_id;
        let delay = self.config.heartbeat_response_delay;
        let Reader { writers, stats, .. } = self;
        let Some(p) = find_proxy(writers, stats, own, writer, hb.reader_id) else {
            return;
        };
        if !plausible(p, now, hb.last_sn) {
            stats.implausible_sequence_numbers =
                stats.implausible_sequence_numbers.saturating_add(1);
            return;
        }
        // RTPS 2.5 §8.3.8.6.3: lastSN is the writer's newest sequence number, and a writer's
        // numbers only grow. If it has not written numbers we skipped as irrelevant, the
        // skip came from someone else (one forged GAP or HEARTBEAT): take it back, so its
        // samples are requested again. Checked before the count, which may be forged too.
        if sn_next(hb.last_sn) < p.next_expected && p.delivered_next < p.next_expected {
            undo_skips(p, stats);
            p.last_heartbeat = None;
        }
        if !count_is_newer(hb.count, p.last_heartbeat) {
            stats.heartbeats_stale = stats.heartbeats_stale.saturating_add(1);
            return;
        }
        p.last_heartbeat = Some(hb.count);
        p.heartbeat_seen = true;
        // A lower lastSN than an earlier HEARTBEAT's: the earlier one was not the writer's.
        p.max_available = hb.last_sn;
        p.shown = p.shown.max(hb.last_sn);
        p.shown_at = now;
        if hb.first_sn > p.next_expected {
            let start = p.next_expected;
            p.irrelevant.insert(start, hb.first_sn);
            p.reassembly.discard_range(start, hb.first_sn);
        }
        let at = now.saturating_add(delay);
        if !hb.final_flag {
            p.schedule_ack(at, true);
        } else if p.has_missing() {
            p.schedule_ack(at, false);
        }
        self.advance(writer);
    }

    /// Processes a HEARTBEAT_FRAG (§8.4.14.1): the writer has fragments up to
    /// `lastFragmentNum` of one sample; missing ones are requested with NACK_FRAG.
    pub fn handle_heartbeat_frag(&mut self, now: Instant, writer: Guid, hb: &HeartbeatFragRepr) {
        self.stats.heartbeat_frags_received = self.stats.heartbeat_frags_received.saturating_add(1);
        if !self.config.reliable {
            return;
        }
        let delay = self.config.heartbeat_response_delay;
        let Some(p) = self.proxy(writer, hb.reader_id) else {
            return;
        };
        if !count_is_newer(hb.count, p.last_heartbeat_frag) {
            self.stats.heartbeats_stale = self.stats.heartbeats_stale.saturating_add(1);
            return;
        }
        p.last_heartbeat_frag = Some(hb.count);
        if hb.writer_sn >= p.next_expected
            && p.reassembly.announce(hb.writer_sn, hb.last_fragment_num.0)
        {
            p.schedule_ack(now.saturating_add(delay), false);
        }
    }

    /// Processes a GAP (§8.4.12.2 T9): `gapStart .. gapList.base` as one interval plus the
    /// (at most 256) members of `gapList`.
    pub fn handle_gap(&mut self, now: Instant, writer: Guid, gap: &GapRepr) {
        self.stats.gaps_received = self.stats.gaps_received.saturating_add(1);
        if !self.config.reliable {
            return;
        }
        let Some(p) = self.proxy(writer, gap.reader_id) else {
            return;
        };
        let range = gap.irrelevant_range();
        let highest = gap
            .gap_list
            .iter()
            .last()
            .unwrap_or(range.end)
            .max(SequenceNumber(range.end.0.saturating_sub(1)));
        if !plausible(p, now, highest) {
            self.stats.implausible_sequence_numbers =
                self.stats.implausible_sequence_numbers.saturating_add(1);
            return;
        }
        let start = range.start.max(p.next_expected);
        if start < range.end {
            p.irrelevant.insert(start, range.end);
            p.reassembly.discard_range(start, range.end);
        }
        for sn in gap.gap_list.iter() {
            if sn >= p.next_expected {
                p.irrelevant.insert(sn, sn_next(sn));
                p.reassembly.discard(sn);
            }
        }
        p.irrelevant.truncate(Self::MAX_IRRELEVANT_RANGES);
        self.advance(writer);
    }

    /// Delivers what became deliverable from `writer`.
    fn advance(&mut self, writer: Guid) {
        if let Some(p) = self.writers.get_mut(&writer) {
            advance(p, &mut self.delivery, &mut self.stats);
        }
    }

    /// Expires stale reassemblies.
    pub fn handle_timeout(&mut self, now: Instant) {
        let timeout = self.config.reassembly_timeout;
        for p in self.writers.values_mut() {
            let n = p.reassembly.expire(now, timeout);
            let n = u64::try_from(n).unwrap_or(u64::MAX);
            self.stats.reassembly_timed_out = self.stats.reassembly_timed_out.saturating_add(n);
        }
    }

    /// The next ACKNACK deadline or reassembly expiry.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let timeout = self.config.reassembly_timeout;
        self.writers
            .values()
            .flat_map(|p| {
                p.ack
                    .deadline()
                    .into_iter()
                    .chain(p.reassembly.next_expiry(timeout))
            })
            .min()
    }

    /// The next ACKNACK (with NACK_FRAGs) to send, if one is due. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let reader_id = self.config.guid.entity_id;
        for p in self.writers.values_mut() {
            let must = match p.ack {
                AckState::MustSendAck { at } if at <= now => true,
                AckState::MaySendAck { at } if at <= now => false,
                _ => continue,
            };
            p.ack = AckState::Waiting;
            let set = missing_set(p);
            let windows = nack_frag_windows(p);
            if !must && set.is_empty() && windows.is_empty() {
                continue;
            }
            let writer_id = p.info.guid.entity_id;
            let mut tx = TransmitBuilder::default();
            p.acknack_count = count_next(p.acknack_count);
            tx.push(&Submessage::AckNack(AckNackRepr {
                reader_id,
                writer_id,
                // Before any HEARTBEAT the ACKNACK is pre-emptive and asks for one (F = 0).
                final_flag: set.is_empty() && p.heartbeat_seen,
                reader_sn_state: set,
                count: p.acknack_count,
            }));
            self.stats.acknacks_sent = self.stats.acknacks_sent.saturating_add(1);
            for (sn, fragment_number_state) in windows {
                p.nack_frag_count = count_next(p.nack_frag_count);
                tx.push(&Submessage::NackFrag(NackFragRepr {
                    reader_id,
                    writer_id,
                    writer_sn: sn,
                    fragment_number_state,
                    count: p.nack_frag_count,
                }));
                self.stats.nack_frags_sent = self.stats.nack_frags_sent.saturating_add(1);
            }
            let destinations = directed_locators(&p.info.unicast, &p.info.multicast);
            if let Some(t) = tx.finish(destinations, Some(p.info.guid.prefix)) {
                return Some(t);
            }
        }
        None
    }

    /// The next sample for the application: in order per writer, each once.
    pub fn poll_sample(&mut self) -> Option<ReceivedSample> {
        let (sample, _) = self.delivery.ready.pop_front()?;
        if self.delivery.blocked {
            self.delivery.blocked = false;
            for p in self.writers.values_mut() {
                advance(p, &mut self.delivery, &mut self.stats);
            }
        }
        Some(sample)
    }
}

/// The proxy of `writer`, if `reader_id` addresses reader `own` (counted otherwise).
fn find_proxy<'a>(
    writers: &'a mut BTreeMap<Guid, WriterProxy>,
    stats: &mut ReaderStats,
    own: crate::types::EntityId,
    writer: Guid,
    reader_id: crate::types::EntityId,
) -> Option<&'a mut WriterProxy> {
    if !reader_id.is_unknown() && reader_id != own {
        stats.not_for_us = stats.not_for_us.saturating_add(1);
        return None;
    }
    let p = writers.get_mut(&writer);
    if p.is_none() {
        stats.unknown_writer = stats.unknown_writer.saturating_add(1);
    }
    p
}

/// Records that the writer has written `sn` (a DATA that [`accepts`] let through, so within
/// [`Reader::MAX_OUT_OF_ORDER`] of what was delivered).
fn shown(p: &mut WriterProxy, now: Instant, sn: SequenceNumber) {
    if sn > p.shown {
        p.shown = sn;
        p.shown_at = now;
    }
}

/// Whether the writer can plausibly have written `sn` (docs/robustness.md §1): at most
/// [`Reader::MAX_SN_ADVANCE`] beyond what it has shown, plus [`Reader::MAX_SN_RATE`] per
/// second since. Anything is plausible before it has shown something.
fn plausible(p: &WriterProxy, now: Instant, sn: SequenceNumber) -> bool {
    let base = p
        .shown
        .max(SequenceNumber(p.next_expected.0.saturating_sub(1)));
    if base <= SequenceNumber::ZERO {
        return true;
    }
    let secs = now.saturating_duration_since(p.shown_at).as_secs();
    let rate = Reader::MAX_SN_RATE.saturating_mul(i64::try_from(secs).unwrap_or(i64::MAX));
    let limit = base
        .0
        .saturating_add(Reader::MAX_SN_ADVANCE)
        .saturating_add(rate);
    sn.0 <= limit
}

/// Takes back the numbers skipped as irrelevant since the last delivered sample: they are
/// expected (and requested) again, and no longer counted as skipped or lost. Samples the
/// writer really dropped are skipped again at its next HEARTBEAT or GAP.
fn undo_skips(p: &mut WriterProxy, stats: &mut ReaderStats) {
    stats.irrelevant_skipped = stats
        .irrelevant_skipped
        .saturating_sub(std::mem::take(&mut p.skipped_since_delivery));
    stats.samples_lost = stats
        .samples_lost
        .saturating_sub(std::mem::take(&mut p.lost_pending));
    p.next_expected = p.delivered_next;
    p.irrelevant = RangeSet::default();
    p.max_available = p.max_available.min(p.delivered_next);
    p.shown = SequenceNumber(p.delivered_next.0.saturating_sub(1));
    stats.skips_undone = stats.skips_undone.saturating_add(1);
}

/// Whether a sample (or fragment) numbered `sn` is new and within bounds.
fn accepts(p: &WriterProxy, sn: SequenceNumber, reliable: bool, stats: &mut ReaderStats) -> bool {
    let counter = if sn < p.next_expected
        || (reliable && (p.pending.contains_key(&sn) || p.irrelevant.contains(sn)))
    {
        &mut stats.duplicates
    } else if reliable && sn >= sn_add(p.next_expected, Reader::MAX_OUT_OF_ORDER) {
        &mut stats.out_of_window
    } else {
        return true;
    };
    *counter = counter.saturating_add(1);
    false
}

fn make_sample(
    writer: Guid,
    sn: SequenceNumber,
    payload: Vec<u8>,
    qos: Option<(Vec<u8>, Endianness)>,
    source_timestamp: Option<Time>,
    stats: &mut ReaderStats,
) -> ReceivedSample {
    let (mut key_hash, mut status_info) = (None, None);
    if let Some((bytes, e)) = &qos {
        let parsed =
            ParameterList::parse(bytes, *e).and_then(|l| Ok((l.key_hash()?, l.status_info()?)));
        match parsed {
            Ok((k, s)) => (key_hash, status_info) = (k, s),
            Err(_) => stats.invalid_inline_qos = stats.invalid_inline_qos.saturating_add(1),
        }
    }
    let inline_qos_endianness = qos.as_ref().map_or(Endianness::Little, |(_, e)| *e);
    ReceivedSample {
        writer,
        sequence_number: sn,
        payload,
        inline_qos: qos.map(|(b, _)| b),
        inline_qos_endianness,
        source_timestamp,
        key_hash,
        status_info,
        lost_before: 0,
    }
}

/// Marks `p`'s writer as filtering for this reader when `sample`'s inline QoS carries one of
/// the reader's content filter signatures (`PID_CONTENT_FILTER_INFO`).
fn note_writer_filtering(p: &mut WriterProxy, sample: &ReceivedSample, signatures: &[[u8; 16]]) {
    if p.filters_for_reader || signatures.is_empty() {
        return;
    }
    let Some(qos) = &sample.inline_qos else {
        return;
    };
    let Ok(list) = ParameterList::parse(qos, sample.inline_qos_endianness) else {
        return;
    };
    p.filters_for_reader = signatures
        .iter()
        .any(|s| list.content_filter_result(s).is_some());
}

/// Counts `skipped` numbers of `p`'s writer that will never be delivered as lost, unless no
/// sample of it was delivered yet (see [`WriterProxy::delivered_any`]), or as filtered by a
/// writer that filters for this reader.
fn count_lost(p: &mut WriterProxy, skipped: u64, stats: &mut ReaderStats) {
    if p.filters_for_reader {
        stats.samples_filtered_by_writer = stats.samples_filtered_by_writer.saturating_add(skipped);
        return;
    }
    if p.delivered_any && skipped > 0 {
        p.lost_pending = p.lost_pending.saturating_add(skipped);
        stats.samples_lost = stats.samples_lost.saturating_add(skipped);
    }
}

/// Hands `sample` of `p`'s writer to the application with the losses just before it.
fn deliver(
    p: &mut WriterProxy,
    mut sample: ReceivedSample,
    delivery: &mut Delivery,
    stats: &mut ReaderStats,
) {
    sample.lost_before = std::mem::take(&mut p.lost_pending);
    p.delivered_any = true;
    delivery.push(sample, stats);
}

/// A complete sample from `p` that [`accepts`] let through.
fn on_sample(
    p: &mut WriterProxy,
    sample: ReceivedSample,
    reliable: bool,
    config: &ReaderConfig,
    delivery: &mut Delivery,
    stats: &mut ReaderStats,
) {
    let sn = sample.sequence_number;
    if !reliable {
        // §8.4.11.1: best effort keeps order by dropping anything older.
        let skipped = sn.0.saturating_sub(p.next_expected.0);
        count_lost(p, u64::try_from(skipped).unwrap_or(0), stats);
        p.next_expected = sn_next(sn);
        p.reassembly
            .discard_range(SequenceNumber(i64::MIN), p.next_expected);
        if delivery.has_room() {
            deliver(p, sample, delivery, stats);
        } else {
            stats.samples_rejected = stats.samples_rejected.saturating_add(1);
        }
        return;
    }
    let len = sample.payload_len();
    if sn != p.next_expected && p.pending_bytes.saturating_add(len) > config.max_sample_size {
        stats.out_of_window = stats.out_of_window.saturating_add(1);
        return;
    }
    p.pending_bytes = p.pending_bytes.saturating_add(len);
    p.reassembly.discard(sn);
    p.pending.insert(sn, sample);
    advance(p, delivery, stats);
}

/// Delivers in-order samples and skips irrelevant intervals (§8.4.12.2: "changes ... are made
/// available to the application in order"). Each iteration delivers one buffered sample or
/// jumps over one interval, so the loop is bounded by what is stored, not by the numbers.
fn advance(p: &mut WriterProxy, delivery: &mut Delivery, stats: &mut ReaderStats) {
    loop {
        let next = p.next_expected;
        if p.pending.first_key_value().is_some_and(|(k, _)| *k == next) {
            if !delivery.has_room() {
                delivery.blocked = true;
                break;
            }
            if let Some(sample) = p.pending.remove(&next) {
                p.pending_bytes = p.pending_bytes.saturating_sub(sample.payload_len());
                deliver(p, sample, delivery, stats);
            }
            p.next_expected = sn_next(next);
            p.delivered_next = p.next_expected;
            p.skipped_since_delivery = 0;
            continue;
        }
        if let Some((_, end)) = p.irrelevant.containing(next) {
            let stop = p
                .pending
                .range(next..)
                .next()
                .map_or(end, |(k, _)| (*k).min(end));
            let skipped = u64::try_from(stop.0.saturating_sub(next.0)).unwrap_or(0);
            stats.irrelevant_skipped = stats.irrelevant_skipped.saturating_add(skipped);
            p.skipped_since_delivery = p.skipped_since_delivery.saturating_add(skipped);
            count_lost(p, skipped, stats);
            p.next_expected = stop;
            continue;
        }
        break;
    }
    p.irrelevant.remove_below(p.next_expected);
    p.reassembly
        .discard_range(SequenceNumber(i64::MIN), p.next_expected);
}

/// The ACKNACK `readerSNState` (§8.4.12.2 T5): base = the first number not yet delivered or
/// irrelevant; bits for announced numbers neither buffered, irrelevant nor partly reassembled
/// (§8.4.14.1: "negatively acknowledged only when all fragments are missing"; those get
/// NACK_FRAG). At most 256 numbers, the lowest, as T5 asks.
fn missing_set(p: &WriterProxy) -> SequenceNumberSet {
    let base = p.next_expected;
    if p.max_available < base {
        return SequenceNumberSet::empty(base);
    }
    let end = p.max_available.min(sn_add(base, 255));
    let span = u32::try_from(end.0.saturating_sub(base.0).saturating_add(1)).unwrap_or(256);
    let mut set = SequenceNumberSet::with_num_bits(base, span.min(256))
        .unwrap_or_else(|| SequenceNumberSet::empty(base));
    let mut sn = base;
    while sn <= end {
        if !p.pending.contains_key(&sn) && !p.irrelevant.contains(sn) && !p.reassembly.contains(sn)
        {
            set.insert(sn);
        }
        sn = sn_next(sn);
    }
    set
}

/// NACK_FRAG bitmaps for partly reassembled samples the writer announced.
fn nack_frag_windows(p: &WriterProxy) -> Vec<(SequenceNumber, crate::types::FragmentNumberSet)> {
    let mut out = Vec::new();
    for sn in p.reassembly.sequence_numbers() {
        let left = Reader::MAX_NACK_FRAG_WINDOWS.saturating_sub(out.len());
        if left == 0 {
            break;
        }
        let whole = sn <= p.max_available;
        for w in p.reassembly.missing(sn, whole, left) {
            out.push((sn, w));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::tests::{keyed_payload, KEYED};

    fn sample(key: u32, index: u32) -> ReceivedSample {
        let sn = SequenceNumber(i64::from(index) + 1);
        ReceivedSample::for_test(Guid::UNKNOWN, sn, keyed_payload(key, index))
    }

    /// DDS 1.4 §2.2.3.18: a keyed topic's KEEP_LAST depth applies per instance, so samples
    /// of five keys that arrive together (a late joiner's history, in one datagram) all wait
    /// in a queue of depth 1; a keyless reader's keeps the last one only.
    #[test]
    fn a_keyed_keep_last_queue_keeps_the_newest_of_each_instance() {
        let queue = |key| Delivery {
            ready: VecDeque::new(),
            history: HistoryKind::KeepLast(1),
            key,
            max_instances: MAX_KEPT_INSTANCES,
            blocked: false,
        };
        let (mut keyed, mut keyless) = (queue(Some(&KEYED)), queue(None));
        let (mut keyed_stats, mut keyless_stats) = (ReaderStats::default(), ReaderStats::default());
        for index in 0..15 {
            keyed.push(sample(index % 5, index), &mut keyed_stats);
            keyless.push(sample(index % 5, index), &mut keyless_stats);
        }
        let indices = |d: &Delivery| {
            d.ready
                .iter()
                .map(|(s, _)| u32::from_le_bytes(s.payload[8..12].try_into().unwrap()))
                .collect::<Vec<_>>()
        };
        assert_eq!(indices(&keyed), [10, 11, 12, 13, 14]);
        assert_eq!(keyed_stats.samples_overwritten, 10);
        assert_eq!(indices(&keyless), [14]);
        assert_eq!(keyless_stats.samples_overwritten, 14);
        // A dispose (no payload, so no key to read) takes no other instance's place.
        let mut dispose = sample(0, 15);
        dispose.payload.clear();
        keyed.push(dispose, &mut keyed_stats);
        assert_eq!(keyed.ready.len(), 6);
        assert_eq!(keyed_stats.samples_overwritten, 10);
    }
}
