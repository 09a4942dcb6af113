//! Large samples: splitting into DATA_FRAG on the writer side and reassembly on the reader side
//! (RTPS 2.5 §8.4.14.1 "Large Data", §8.3.8.3, §9.4.5.4).
//!
//! Fragment *n* (1-based) of a sample of `sampleSize` bytes covers bytes
//! `(n-1)·fragmentSize .. min(n·fragmentSize, sampleSize)`; a DATA_FRAG carries
//! `fragmentsInSubmessage` consecutive fragments.
//!
//! Reassembly ([`Reassembler`], one per writer proxy) is keyed by sequence number and trusts
//! nothing in a fragment:
//! - `sampleSize` above the reader's `max_sample_size` is rejected before anything is stored;
//! - the buffer for the whole sample is reserved when a fragment first needs it, and charged in
//!   full to a byte budget that all reassemblies of one writer share (no room: the fragment is
//!   dropped and counted); its pages are only touched as fragments fill it, and it is never
//!   regrown;
//! - the first fragment fixes `sampleSize`, `fragmentSize` and the key flag; a fragment that
//!   disagrees is dropped and counted;
//! - duplicate and overlapping fragments are harmless: received fragments are an interval set
//!   (`O(log n)` per insert, memory proportional to the number of holes);
//! - at most `max_samples` reassemblies run per writer, and stale ones time out.

use std::collections::BTreeMap;
use std::time::Duration;

use roslite_cdr::Endianness;

use crate::instant::Instant;
use crate::parameter_list::ParameterList;
use crate::types::{EntityId, FragmentNumber, FragmentNumberSet, SequenceNumber, Time};
use crate::wire::DataFragRepr;

use super::history::CacheChange;
use super::proxies::RangeSet;
use super::TransmitBuilder;

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
    /// Bytes of buffers all reassemblies of one writer may hold together.
    pub max_bytes: usize,
    /// Reliable readers keep the lowest sequence numbers when out of room (they are needed
    /// first); best-effort readers keep the newest.
    pub keep_oldest: bool,
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
    /// No reassembly slot or byte budget left.
    NoRoom,
    /// `sampleSize` exceeds `max_sample_size`.
    TooLarge,
}

#[derive(Clone, Debug)]
struct Reassembly {
    sample_size: u32,
    fragment_size: u16,
    total: u32,
    key: bool,
    buf: Vec<u8>,
    /// Received fragment numbers as half-open runs.
    received: RangeSet<u32>,
    inline_qos: Option<(Vec<u8>, Endianness)>,
    source_timestamp: Option<Time>,
    last_activity: Instant,
    /// `lastFragmentNum` of the newest HEARTBEAT_FRAG for this sample.
    announced: u32,
}

impl Reassembly {
    fn is_complete(&self) -> bool {
        self.received.containing(1) == Some((1, self.total.saturating_add(1)))
    }
}

/// The reassemblies of one writer.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reassembler {
    samples: BTreeMap<SequenceNumber, Reassembly>,
    /// Sum of the buffer capacities.
    bytes: usize,
}

impl Reassembler {
    /// Stores the fragments of `frag`.
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
        if !self.samples.contains_key(&sn) && !self.make_slot(sn, limits, evictions) {
            return FragOutcome::NoRoom;
        }
        let entry = self.samples.entry(sn).or_insert_with(|| Reassembly {
            sample_size: frag.sample_size,
            fragment_size: frag.fragment_size,
            total: frag.total_fragments(),
            key: frag.key,
            buf: Vec::new(),
            received: RangeSet::default(),
            inline_qos: None,
            source_timestamp: None,
            last_activity: now,
            announced: 0,
        });
        if entry.sample_size != frag.sample_size
            || entry.fragment_size != frag.fragment_size
            || entry.key != frag.key
        {
            return FragOutcome::Inconsistent;
        }
        // RTPS 2.5 §8.3.8.3.3 as validated by the parser: the run starts inside the sample and
        // `data` holds exactly its bytes, the last fragment possibly short.
        let offset = usize::try_from(frag.sample_offset()).unwrap_or(usize::MAX);
        let end = offset.saturating_add(frag.data.len());
        let old_capacity = entry.buf.capacity();
        // The whole sample at once: the buffer is never moved while it fills (growing by
        // doubling copied a 4 MiB sample's bytes once more). Pages are only touched as fragments
        // arrive, and the byte budget is charged the full size up front; a writer could claim
        // as much already by sending its last fragment first.
        let target = if end > old_capacity {
            sample_len
        } else {
            old_capacity
        };
        let extra = target.saturating_sub(old_capacity);
        if extra > 0 && !self.make_bytes(sn, extra, limits, evictions) {
            if self.samples.get(&sn).is_some_and(|r| r.received.is_empty()) {
                self.remove(sn);
            }
            return FragOutcome::NoRoom;
        }
        let Some(entry) = self.samples.get_mut(&sn) else {
            return FragOutcome::NoRoom;
        };
        if extra > 0 {
            entry
                .buf
                .reserve_exact(target.saturating_sub(entry.buf.len()));
            let added = entry.buf.capacity().saturating_sub(old_capacity);
            self.bytes = self.bytes.saturating_add(added);
        }
        if offset == entry.buf.len() {
            // In order (the usual case): append, without zero-filling bytes about to be
            // overwritten.
            entry.buf.extend_from_slice(frag.data);
        } else {
            if end > entry.buf.len() {
                entry.buf.resize(end, 0);
            }
            if let Some(dst) = entry.buf.get_mut(offset..end) {
                dst.copy_from_slice(frag.data);
            }
        }
        let first = frag.fragment_starting_num.0;
        let stop = first
            .saturating_add(u32::from(frag.fragments_in_submessage))
            .min(entry.total.saturating_add(1));
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
            Some(r) => FragOutcome::Complete(CompletedSample {
                payload: r.buf,
                inline_qos: r.inline_qos,
                source_timestamp: r.source_timestamp,
                key: r.key,
            }),
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

    /// Frees byte budget for `extra` more bytes of `sn`'s buffer, evicting other
    /// reassemblies per `limits.keep_oldest`.
    fn make_bytes(
        &mut self,
        sn: SequenceNumber,
        extra: usize,
        limits: &ReassemblyLimits,
        evictions: &mut u64,
    ) -> bool {
        // Each iteration removes one reassembly, so this ends.
        while self.bytes.saturating_add(extra) > limits.max_bytes {
            let victim = if limits.keep_oldest {
                self.samples.keys().next_back().copied().filter(|v| *v > sn)
            } else {
                self.samples.keys().next().copied().filter(|v| *v < sn)
            };
            let Some(v) = victim else { return false };
            self.remove(v);
            *evictions = evictions.saturating_add(1);
        }
        true
    }

    fn remove(&mut self, sn: SequenceNumber) -> Option<Reassembly> {
        let r = self.samples.remove(&sn)?;
        self.bytes = self.bytes.saturating_sub(r.buf.capacity());
        Some(r)
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
                r.announced = r.announced.max(last.min(r.total));
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
        let limit = if whole_sample { r.total } else { r.announced };
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
