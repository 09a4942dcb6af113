//! Large samples: splitting into DATA_FRAG on the writer side and reassembly on the reader side
//! (RTPS 2.5 §8.4.14.1 "Large Data", §8.3.8.3, §9.4.5.4).
//!
//! Fragment *n* (1-based) of a sample of `sampleSize` bytes covers bytes
//! `(n-1)·fragmentSize .. min(n·fragmentSize, sampleSize)`; a DATA_FRAG carries
//! `fragmentsInSubmessage` consecutive fragments.
//!
//! Reassembly ([`Reassembler`], one per writer proxy) is keyed by sequence number and trusts
//! nothing in a fragment (docs/robustness.md §1, "DATA and DATA_FRAG"):
//! - `sampleSize` above the reader's `max_sample_size` is rejected before anything is stored;
//! - memory grows with the bytes received, not with `sampleSize` or the fragment numbers:
//!   fragments received in order from the first are appended to one buffer that becomes the
//!   payload (its capacity doubles as it fills, at most up to `sampleSize`); a fragment further
//!   ahead is kept on its own until that buffer reaches it. Nothing is zero-filled, so one
//!   DATA_FRAG claiming the last fragment of a 60 MiB sample costs its own bytes;
//! - the bytes received are charged, before they are stored, to a budget of the writer's and
//!   to [`SharedBudgets`] (its remote participant's and the local participant's total); when
//!   one is full, other reassemblies of the same writer are evicted (reliable readers keep the
//!   lowest sequence numbers) or the fragment is dropped and counted;
//! - the first fragment fixes `sampleSize`, `fragmentSize` and the key flag; a fragment that
//!   disagrees is dropped and counted;
//! - duplicate and overlapping fragments are harmless: received fragments are an interval set
//!   (`O(log n)` per insert, memory proportional to the number of holes), and only the parts
//!   not yet received are stored;
//! - at most `max_samples` reassemblies run per writer, and stale ones time out.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roslite_cdr::Endianness;

use crate::instant::Instant;
use crate::parameter_list::ParameterList;
use crate::types::{EntityId, FragmentNumber, FragmentNumberSet, SequenceNumber, Time};
use crate::wire::DataFragRepr;

use super::history::CacheChange;
use super::range_set::RangeSet;
use super::transmit::TransmitBuilder;

/// How a sample of a given size is cut into fragments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FragmentLayout {
    pub fragment_size: u16,
    /// Fragments packed into one DATA_FRAG.
    pub per_submessage: u16,
    /// Number of fragments, ⌈sampleSize / fragmentSize⌉.
    pub total: u32,
    pub sample_size: u32,
}

impl FragmentLayout {
    /// The layout for `len` payload bytes; `None` if `len` is 0 or over `u32::MAX`.
    pub(crate) fn new(len: usize, fragment_size: u16, max_data_size: usize) -> Option<Self> {
        let sample_size = u32::try_from(len).ok().filter(|s| *s > 0)?;
        let fragment_size = fragment_size.max(1);
        let per = max_data_size
            .checked_div(usize::from(fragment_size))
            .unwrap_or(1)
            .clamp(1, usize::from(u16::MAX));
        Some(FragmentLayout {
            fragment_size,
            per_submessage: u16::try_from(per).unwrap_or(u16::MAX),
            total: sample_size.div_ceil(u32::from(fragment_size)),
            sample_size,
        })
    }

    /// The layout if `len` payload bytes must be fragmented, i.e. exceed `max_data_size`
    /// (§8.4.14.1: "data must only be fragmented if required").
    pub(crate) fn if_needed(len: usize, fragment_size: u16, max_data_size: usize) -> Option<Self> {
        (len > max_data_size)
            .then(|| Self::new(len, fragment_size, max_data_size))
            .flatten()
    }

    /// Byte range of the fragments `first .. end` (1-based, end exclusive), cut at the sample
    /// size.
    fn byte_range(&self, first: u32, end: u32) -> std::ops::Range<usize> {
        let size = u64::from(self.fragment_size);
        let sample = u64::from(self.sample_size);
        let start = u64::from(first.saturating_sub(1))
            .saturating_mul(size)
            .min(sample);
        let stop = u64::from(end.saturating_sub(1))
            .saturating_mul(size)
            .min(sample);
        usize::try_from(start).unwrap_or(usize::MAX)..usize::try_from(stop).unwrap_or(usize::MAX)
    }
}

/// Appends DATA_FRAGs carrying fragments `first .. end` of `change` (clipped to the sample).
/// Inline QoS rides on the submessage that holds fragment 1. Returns the number of
/// submessages.
pub(crate) fn push_data_frags(
    tx: &mut TransmitBuilder,
    ids: (EntityId, EntityId),
    change: &CacheChange,
    layout: &FragmentLayout,
    first: u32,
    end: u32,
) -> u64 {
    let (reader_id, writer_id) = ids;
    let qos = change
        .inline_qos
        .as_deref()
        .and_then(|q| ParameterList::parse(q, Endianness::Little).ok());
    let end = end.min(layout.total.saturating_add(1));
    let mut f = first.max(1);
    let mut pushed = 0u64;
    tx.set_timestamp(change.source_timestamp);
    while f < end {
        let n = end.saturating_sub(f).min(u32::from(layout.per_submessage));
        let next = f.saturating_add(n);
        let range = layout.byte_range(f, next);
        let Some(data) = change.payload.get(range.clone()) else {
            debug_assert!(false, "internal bug: fragment range outside the payload");
            break;
        };
        let frag = DataFragRepr {
            extra_flags: 0,
            reader_id,
            writer_id,
            writer_sn: change.sn,
            fragment_starting_num: FragmentNumber(f),
            fragments_in_submessage: u16::try_from(n).unwrap_or(u16::MAX),
            fragment_size: layout.fragment_size,
            sample_size: layout.sample_size,
            inline_qos: if f == 1 { qos } else { None },
            key: false,
            non_standard_payload: false,
            data,
        };
        tx.push_data_frag(&frag, &change.payload, range);
        pushed = pushed.saturating_add(1);
        f = next;
    }
    pushed
}

/// Limits a reader applies to one writer's reassemblies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReassemblyLimits {
    pub max_samples: usize,
    pub max_sample_size: usize,
    /// Bytes of fragments all reassemblies of one writer may hold together.
    pub max_bytes: usize,
    /// Reliable readers keep the lowest sequence numbers when out of room (they are needed
    /// first); best-effort readers keep the newest.
    pub keep_oldest: bool,
}

/// A byte budget that several reassemblers share: those of every writer of one remote
/// participant, or those of every reader of a local participant (docs/robustness.md §1).
/// Reassemblers charge it for the fragment bytes they hold and credit it when they let go.
#[derive(Debug)]
pub struct ByteBudget {
    limit: usize,
    used: AtomicUsize,
}

impl ByteBudget {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(ByteBudget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes charged now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn fits(&self, n: usize) -> bool {
        self.used().saturating_add(n) <= self.limit
    }

    fn charge(&self, n: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_add(n))
            });
    }

    fn credit(&self, n: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_sub(n))
            });
    }
}

/// The shared budgets one writer's reassemblies are charged to besides its own.
#[derive(Clone, Debug, Default)]
pub struct SharedBudgets(Vec<Arc<ByteBudget>>);

impl SharedBudgets {
    pub fn new(budgets: Vec<Arc<ByteBudget>>) -> Self {
        SharedBudgets(budgets)
    }

    fn fits(&self, n: usize) -> bool {
        self.0.iter().all(|b| b.fits(n))
    }

    fn charge(&self, n: usize) {
        self.0.iter().for_each(|b| b.charge(n));
    }

    fn credit(&self, n: usize) {
        self.0.iter().for_each(|b| b.credit(n));
    }
}

/// A reassembled sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CompletedSample {
    pub payload: Vec<u8>,
    pub inline_qos: Option<(Vec<u8>, Endianness)>,
    pub source_timestamp: Option<Time>,
    pub key: bool,
}

/// What happened to one DATA_FRAG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FragOutcome {
    Complete(CompletedSample),
    /// Stored (or a duplicate); the sample is still incomplete.
    Incomplete,
    /// `sampleSize`, `fragmentSize` or the key flag differ from the first fragment's.
    Inconsistent,
    /// No reassembly slot, or no room in this writer's byte budget.
    NoRoom,
    /// No room in a shared budget (the remote participant's or the local total).
    NoSharedRoom,
    /// `sampleSize` exceeds `max_sample_size`.
    TooLarge,
}

/// Smallest capacity the in-order prefix grows to.
const MIN_PREFIX_CAPACITY: usize = 64 * 1024;

#[derive(Clone, Debug)]
struct Reassembly {
    layout: FragmentLayout,
    key: bool,
    /// Bytes `0 .. prefix.len()` of the sample: fragments received in order from the first.
    /// Its capacity grows by doubling, at most to `sampleSize`, so it is at most twice what
    /// was received (plus [`MIN_PREFIX_CAPACITY`]); it becomes the payload.
    prefix: Vec<u8>,
    /// Fragments received beyond the prefix, by byte offset: disjoint, none touching the
    /// prefix. Joined to the prefix when it reaches them.
    chunks: BTreeMap<usize, Vec<u8>>,
    /// Received fragment numbers as half-open runs.
    received: RangeSet<u32>,
    /// Bytes received and held (`prefix.len()` plus the chunks): what the budgets carry.
    held: usize,
    inline_qos: Option<(Vec<u8>, Endianness)>,
    source_timestamp: Option<Time>,
    last_activity: Instant,
    /// `lastFragmentNum` of the newest HEARTBEAT_FRAG for this sample.
    announced: u32,
}

impl Reassembly {
    fn is_complete(&self) -> bool {
        self.received.containing(1) == Some((1, self.layout.total.saturating_add(1)))
    }

    /// Stores bytes `offset ..` (fragment aligned, not yet received) and joins chunks the
    /// prefix reaches.
    fn store(&mut self, offset: usize, data: &[u8]) {
        if offset != self.prefix.len() {
            self.chunks.insert(offset, data.to_vec());
            return;
        }
        self.append(data);
        while let Some(chunk) = self.chunks.remove(&self.prefix.len()) {
            self.append(&chunk);
        }
    }

    fn append(&mut self, data: &[u8]) {
        let needed = self.prefix.len().saturating_add(data.len());
        if needed > self.prefix.capacity() {
            let sample = usize::try_from(self.layout.sample_size).unwrap_or(usize::MAX);
            let target = needed
                .max(self.prefix.capacity().saturating_mul(2))
                .max(MIN_PREFIX_CAPACITY)
                .min(sample)
                .max(needed);
            self.prefix
                .reserve_exact(target.saturating_sub(self.prefix.len()));
        }
        self.prefix.extend_from_slice(data);
    }
}

/// The reassemblies of one writer.
#[derive(Debug, Default)]
pub(crate) struct Reassembler {
    samples: BTreeMap<SequenceNumber, Reassembly>,
    /// Sum of the reassemblies' `held` bytes, charged to `shared` too.
    bytes: usize,
    shared: SharedBudgets,
}

impl Clone for Reassembler {
    /// A copy is not charged to the shared budgets (and does not credit them).
    fn clone(&self) -> Self {
        Reassembler {
            samples: self.samples.clone(),
            bytes: self.bytes,
            shared: SharedBudgets::default(),
        }
    }
}

impl Drop for Reassembler {
    fn drop(&mut self) {
        self.shared.credit(self.bytes);
    }
}

impl Reassembler {
    /// A reassembler whose bytes are also charged to `shared`.
    pub(crate) fn with_budgets(shared: SharedBudgets) -> Self {
        Reassembler {
            samples: BTreeMap::new(),
            bytes: 0,
            shared,
        }
    }

    /// Stores the fragments of `frag`. Memory grows with the bytes received, never with what
    /// `sampleSize` or the fragment numbers claim: a fragment far ahead is kept on its own.
    pub(crate) fn insert(
        &mut self,
        now: Instant,
        frag: &DataFragRepr<'_>,
        source_timestamp: Option<Time>,
        limits: &ReassemblyLimits,
        evictions: &mut u64,
    ) -> FragOutcome {
        let sn = frag.writer_sn;
        let sample_len = usize::try_from(frag.sample_size).unwrap_or(usize::MAX);
        if sample_len > limits.max_sample_size {
            return FragOutcome::TooLarge;
        }
        let layout = FragmentLayout {
            fragment_size: frag.fragment_size,
            per_submessage: frag.fragments_in_submessage,
            total: frag.total_fragments(),
            sample_size: frag.sample_size,
        };
        if let Some(r) = self.samples.get(&sn) {
            if r.layout.sample_size != frag.sample_size
                || r.layout.fragment_size != frag.fragment_size
                || r.key != frag.key
            {
                return FragOutcome::Inconsistent;
            }
        }
        // RTPS 2.5 §8.3.8.3.3 as validated by the parser: the run starts inside the sample and
        // `data` holds exactly its bytes, the last fragment possibly short.
        let first = frag.fragment_starting_num.0;
        let stop = first
            .saturating_add(u32::from(frag.fragments_in_submessage))
            .min(layout.total.saturating_add(1));
        let base = layout.byte_range(first, first).start;
        // The parts of the run not received yet, as (offset, bytes).
        let mut new_parts: Vec<(usize, &[u8])> = Vec::new();
        let received = self.samples.get(&sn).map(|r| &r.received);
        let mut cursor = first;
        let covered = received
            .into_iter()
            .flat_map(|set| set.overlapping(first, stop))
            .chain(std::iter::once((stop, stop)));
        for (s, e) in covered {
            if s > cursor {
                let bytes = layout.byte_range(cursor, s.min(stop));
                let rel = bytes.start.saturating_sub(base)..bytes.end.saturating_sub(base);
                if let Some(part) = frag.data.get(rel) {
                    new_parts.push((bytes.start, part));
                }
            }
            cursor = cursor.max(e);
            if cursor >= stop {
                break;
            }
        }
        let extra = new_parts
            .iter()
            .fold(0usize, |a, (_, p)| a.saturating_add(p.len()));
        if !self.samples.contains_key(&sn) && !self.make_slot(sn, limits, evictions) {
            return FragOutcome::NoRoom;
        }
        if extra > 0 {
            if let Err(outcome) = self.make_bytes(sn, extra, limits, evictions) {
                return outcome;
            }
        }
        let entry = self.samples.entry(sn).or_insert_with(|| Reassembly {
            layout,
            key: frag.key,
            prefix: Vec::new(),
            chunks: BTreeMap::new(),
            received: RangeSet::default(),
            held: 0,
            inline_qos: None,
            source_timestamp: None,
            last_activity: now,
            announced: 0,
        });
        for (offset, part) in new_parts {
            entry.store(offset, part);
        }
        entry.held = entry.held.saturating_add(extra);
        self.bytes = self.bytes.saturating_add(extra);
        self.shared.charge(extra);
        entry.received.insert(first, stop);
        entry.last_activity = now;
        if entry.inline_qos.is_none() {
            if let Some(q) = &frag.inline_qos {
                let mut bytes = Vec::with_capacity(q.buffer_len());
                q.emit(&mut bytes);
                entry.inline_qos = Some((bytes, q.endianness()));
            }
        }
        if entry.source_timestamp.is_none() {
            entry.source_timestamp = source_timestamp;
        }
        if !entry.is_complete() {
            return FragOutcome::Incomplete;
        }
        match self.remove(sn) {
            Some(r) => {
                debug_assert!(r.chunks.is_empty(), "internal bug: complete with chunks");
                FragOutcome::Complete(CompletedSample {
                    payload: r.prefix,
                    inline_qos: r.inline_qos,
                    source_timestamp: r.source_timestamp,
                    key: r.key,
                })
            }
            None => FragOutcome::Incomplete,
        }
    }

    /// Makes room for a new reassembly of `sn`, evicting per `limits.keep_oldest`.
    fn make_slot(
        &mut self,
        sn: SequenceNumber,
        limits: &ReassemblyLimits,
        evictions: &mut u64,
    ) -> bool {
        if self.samples.len() < limits.max_samples.max(1) {
            return true;
        }
        let victim = if limits.keep_oldest {
            self.samples.keys().next_back().copied().filter(|v| *v > sn)
        } else {
            self.samples.keys().next().copied().filter(|v| *v < sn)
        };
        match victim {
            Some(v) => {
                self.remove(v);
                *evictions = evictions.saturating_add(1);
                true
            }
            None => false,
        }
    }

    /// Frees byte budget for `extra` more bytes of `sn`, evicting other reassemblies of this
    /// writer per `limits.keep_oldest`.
    fn make_bytes(
        &mut self,
        sn: SequenceNumber,
        extra: usize,
        limits: &ReassemblyLimits,
        evictions: &mut u64,
    ) -> Result<(), FragOutcome> {
        // Each iteration removes one reassembly, so this ends.
        loop {
            let own = self.bytes.saturating_add(extra) <= limits.max_bytes;
            let shared = self.shared.fits(extra);
            if own && shared {
                return Ok(());
            }
            let victim = if limits.keep_oldest {
                self.samples.keys().next_back().copied().filter(|v| *v > sn)
            } else {
                self.samples.keys().next().copied().filter(|v| *v < sn)
            };
            let Some(v) = victim else {
                if self.samples.get(&sn).is_some_and(|r| r.received.is_empty()) {
                    self.remove(sn);
                }
                return Err(if own {
                    FragOutcome::NoSharedRoom
                } else {
                    FragOutcome::NoRoom
                });
            };
            self.remove(v);
            *evictions = evictions.saturating_add(1);
        }
    }

    fn remove(&mut self, sn: SequenceNumber) -> Option<Reassembly> {
        let r = self.samples.remove(&sn)?;
        self.bytes = self.bytes.saturating_sub(r.held);
        self.shared.credit(r.held);
        Some(r)
    }

    /// Bytes held by all reassemblies of this writer.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Drops every reassembly. Returns how many.
    pub(crate) fn clear(&mut self) -> usize {
        let n = self.samples.len();
        let all: Vec<SequenceNumber> = self.samples.keys().copied().collect();
        for sn in all {
            self.remove(sn);
        }
        n
    }

    pub(crate) fn contains(&self, sn: SequenceNumber) -> bool {
        self.samples.contains_key(&sn)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.samples.len()
    }

    /// Drops the reassembly of `sn`, if any.
    pub(crate) fn discard(&mut self, sn: SequenceNumber) -> bool {
        self.remove(sn).is_some()
    }

    /// Drops reassemblies of sequence numbers in `start .. end`. Returns how many.
    pub(crate) fn discard_range(&mut self, start: SequenceNumber, end: SequenceNumber) -> usize {
        if start >= end {
            return 0;
        }
        let doomed: Vec<SequenceNumber> = self.samples.range(start..end).map(|(k, _)| *k).collect();
        for sn in &doomed {
            self.remove(*sn);
        }
        doomed.len()
    }

    /// Drops reassemblies idle for `timeout` or longer. Returns how many.
    pub(crate) fn expire(&mut self, now: Instant, timeout: Duration) -> usize {
        let doomed: Vec<SequenceNumber> = self
            .samples
            .iter()
            .filter(|(_, r)| r.last_activity.saturating_add(timeout) <= now)
            .map(|(k, _)| *k)
            .collect();
        for sn in &doomed {
            self.remove(*sn);
        }
        doomed.len()
    }

    /// When the oldest idle reassembly times out.
    pub(crate) fn next_expiry(&self, timeout: Duration) -> Option<Instant> {
        self.samples
            .values()
            .map(|r| r.last_activity.saturating_add(timeout))
            .min()
    }

    /// Records a HEARTBEAT_FRAG: the writer has fragments up to `last` of `sn`. Returns whether
    /// a reassembly of `sn` exists.
    pub(crate) fn announce(&mut self, sn: SequenceNumber, last: u32) -> bool {
        match self.samples.get_mut(&sn) {
            Some(r) => {
                r.announced = r.announced.max(last.min(r.layout.total));
                true
            }
            None => false,
        }
    }

    /// Sequence numbers being reassembled, ascending.
    pub(crate) fn sequence_numbers(&self) -> impl Iterator<Item = SequenceNumber> + '_ {
        self.samples.keys().copied()
    }

    /// The missing fragments of `sn` as at most `max_windows` NACK_FRAG bitmaps. If
    /// `whole_sample` the writer has announced the complete sample (HEARTBEAT); otherwise
    /// only fragments up to the last HEARTBEAT_FRAG count as available.
    pub(crate) fn missing(
        &self,
        sn: SequenceNumber,
        whole_sample: bool,
        max_windows: usize,
    ) -> Vec<FragmentNumberSet> {
        let mut windows: Vec<FragmentNumberSet> = Vec::new();
        let Some(r) = self.samples.get(&sn) else {
            return windows;
        };
        let limit = if whole_sample {
            r.layout.total
        } else {
            r.announced
        };
        let stop = limit.saturating_add(1);
        let mut cursor = 1u32;
        let mut current: Option<FragmentNumberSet> = None;
        let runs = r.received.iter().chain(std::iter::once((stop, stop)));
        'holes: for (start, end) in runs {
            // The hole cursor .. start; each step either fills a window or opens a new one,
            // so this is bounded by max_windows × 256 whatever the hole size.
            let mut f = cursor;
            while f < start.min(stop) {
                let inserted = current
                    .as_mut()
                    .is_some_and(|w| w.insert(FragmentNumber(f)));
                if !inserted {
                    if let Some(w) = current.take() {
                        windows.push(w);
                    }
                    if windows.len() >= max_windows {
                        break 'holes;
                    }
                    current =
                        FragmentNumberSet::from_members(FragmentNumber(f), [FragmentNumber(f)]);
                }
                f = f.saturating_add(1);
            }
            cursor = cursor.max(end);
            if cursor >= stop {
                break;
            }
        }
        if let Some(w) = current {
            if windows.len() < max_windows {
                windows.push(w);
            }
        }
        windows
    }
}

#[cfg(test)]
mod tests;
