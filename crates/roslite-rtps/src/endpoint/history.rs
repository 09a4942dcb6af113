//! History caches: the writer's `HistoryCache` of RTPS 2.5 §8.2.2 / §8.4.7 and the reader's
//! queue of samples ready for the application.
//!
//! [`WriterHistory`] holds its changes in sequence-number order. Changes leave from the front
//! (KEEP_LAST overwrites the oldest; acknowledged changes are released oldest first, and
//! "acknowledged by all readers" is a prefix property because every reader acknowledges a
//! prefix), so an unkeyed history holds consecutive numbers `first_sn() ..= last_sn()` and a
//! lookup is an index computation. A keyed KEEP_LAST history keeps `depth` changes *per
//! instance* (DDS 1.4 §2.2.3.18: "on a per-instance basis"), so overwriting the oldest of one
//! instance can leave a hole between changes of others: a lookup then falls back to a binary
//! search, and a number in a hole is gone, as one below `first_sn()` is (readers get a GAP).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::types::{SequenceNumber, Time};

use super::numbers::{sn_next, sn_prev};

/// DDS `HISTORY` QoS (DDS 1.4 §2.2.3.18), in spec order (`KEEP_LAST_HISTORY_QOS` = 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HistoryKind {
    /// Keep the newest `depth` samples; older ones are overwritten even when unacknowledged
    /// (the reader then receives a GAP). A depth of 0 is treated as 1.
    KeepLast(usize),
    /// Keep every sample until all reliable readers acknowledged it, at most `max_samples`
    /// (DDS `RESOURCE_LIMITS.max_samples`); beyond that a write fails with
    /// [`WriteError::Full`](super::writer::WriteError::Full).
    KeepAll { max_samples: usize },
}

impl HistoryKind {
    /// How many samples the cache holds at most (at least 1).
    pub fn capacity(self) -> usize {
        match self {
            Self::KeepLast(depth) => depth.max(1),
            Self::KeepAll { max_samples } => max_samples.max(1),
        }
    }

    pub fn is_keep_all(self) -> bool {
        matches!(self, Self::KeepAll { .. })
    }

    /// How many samples the cache of a keyed topic holds at most, over all instances: KEEP_LAST
    /// keeps `depth` per instance for up to `max_instances` instances ([`MAX_KEPT_INSTANCES`]
    /// by default); KEEP_ALL is bound by `max_samples` as for an unkeyed topic.
    pub fn keyed_capacity(self, max_instances: usize) -> usize {
        match self {
            Self::KeepLast(depth) => depth.max(1).saturating_mul(max_instances.max(1)),
            Self::KeepAll { .. } => self.capacity(),
        }
    }
}

/// The instances whose newest `depth` samples a keyed KEEP_LAST writer or reader keeps in full
/// by default (DDS `RESOURCE_LIMITS.max_instances`, which is unlimited in DDS's default and 10
/// in Fast DDS's; [`WriterConfig::max_instances`](super::WriterConfig::max_instances)): its
/// history holds at most `depth` x this many samples, and beyond that the oldest sample goes
/// whatever its instance (counted in
/// [`WriterStats::instance_limit_overwritten`](super::writer::WriterStats::instance_limit_overwritten)).
pub const MAX_KEPT_INSTANCES: usize = 1024;

/// The key of a sample's instance: its key members serialized on their own
/// ([`roslite_cdr::key::KeyStruct::key_of`]), which tell instances apart exactly (a key hash
/// may be a digest).
pub(crate) type InstanceKey = Arc<[u8]>;

impl Default for HistoryKind {
    /// The ROS 2 default profile: KEEP_LAST 10.
    fn default() -> Self {
        Self::KeepLast(10)
    }
}

/// One sample in the writer's history (RTPS 2.5 §8.2.2 `CacheChange`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheChange {
    pub sn: SequenceNumber,
    /// Serialized payload including the encapsulation header; empty for a dispose/unregister
    /// that travels as inline QoS only.
    pub payload: Arc<[u8]>,
    /// Encoded little-endian parameter list, sentinel included.
    pub inline_qos: Option<Arc<[u8]>>,
    pub source_timestamp: Option<Time>,
    /// A number the application gave up ([`super::Writer::give_up_number`]): nothing was
    /// written under it, and it goes to readers as a GAP.
    pub given_up: bool,
    /// The instance of a sample of a keyed KEEP_LAST writer, whose history keeps `depth`
    /// samples per instance; `None` otherwise.
    pub instance: Option<InstanceKey>,
}

/// The writer's cache, oldest first (module documentation: consecutive numbers but for a keyed
/// KEEP_LAST history).
#[derive(Clone, Debug)]
pub(crate) struct WriterHistory {
    changes: VecDeque<CacheChange>,
    /// The numbers of the cached changes of each instance ([`CacheChange::instance`]), oldest
    /// first.
    instances: HashMap<InstanceKey, VecDeque<SequenceNumber>>,
    /// The sequence number the next write gets (RTPS 2.5 §8.4.7.1 `lastChangeSequenceNumber`
    /// + 1).
    next_sn: SequenceNumber,
    /// Payload bytes of the cached changes.
    bytes: usize,
}

impl WriterHistory {
    pub(crate) fn new() -> Self {
        WriterHistory {
            changes: VecDeque::new(),
            instances: HashMap::new(),
            next_sn: SequenceNumber::FIRST,
            bytes: 0,
        }
    }

    /// The oldest cached sequence number; `next_sn()` when the cache is empty, so that
    /// `first_sn() ..= last_sn()` is then empty (a HEARTBEAT of `first = last + 1`).
    pub(crate) fn first_sn(&self) -> SequenceNumber {
        self.changes.front().map_or(self.next_sn, |c| c.sn)
    }

    /// The last sequence number ever written (0 before the first write).
    pub(crate) fn last_sn(&self) -> SequenceNumber {
        sn_prev(self.next_sn)
    }

    pub(crate) fn next_sn(&self) -> SequenceNumber {
        self.next_sn
    }

    pub(crate) fn len(&self) -> usize {
        self.changes.len()
    }

    /// Payload bytes of the cached changes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn get(&self, sn: SequenceNumber) -> Option<&CacheChange> {
        self.index_of(sn).ok().and_then(|i| self.changes.get(i))
    }

    /// Where change `sn` is (`Ok`), or where it would be (`Err`): by index while the numbers
    /// are consecutive, by binary search across holes.
    fn index_of(&self, sn: SequenceNumber) -> Result<usize, usize> {
        let guess =
            sn.0.checked_sub(self.first_sn().0)
                .and_then(|offset| usize::try_from(offset).ok());
        if let Some(change) = guess.and_then(|i| self.changes.get(i)) {
            if change.sn == sn {
                return guess.ok_or(0);
            }
        }
        self.changes.binary_search_by_key(&sn, |c| c.sn)
    }

    /// The first cached number at or after `sn`, or `next_sn()` if none is: a GAP for `sn`
    /// covers everything up to it.
    pub(crate) fn next_present(&self, sn: SequenceNumber) -> SequenceNumber {
        let index = self.index_of(sn).unwrap_or_else(|i| i);
        self.changes.get(index).map_or(self.next_sn, |c| c.sn)
    }

    /// How many changes of `instance` are cached.
    pub(crate) fn instance_len(&self, instance: &[u8]) -> usize {
        self.instances.get(instance).map_or(0, VecDeque::len)
    }

    /// The oldest cached change of `instance`.
    pub(crate) fn oldest_of(&self, instance: &[u8]) -> Option<SequenceNumber> {
        self.instances.get(instance)?.front().copied()
    }

    /// Takes change `sn` out of the cache, wherever it is, leaving a hole in the numbers.
    pub(crate) fn remove(&mut self, sn: SequenceNumber) -> Option<CacheChange> {
        let index = self.index_of(sn).ok()?;
        let change = self.changes.remove(index)?;
        self.forget(&change);
        Some(change)
    }

    /// Accounts for `change` having left the cache.
    fn forget(&mut self, change: &CacheChange) {
        self.bytes = self.bytes.saturating_sub(change.payload.len());
        let Some(instance) = &change.instance else {
            return;
        };
        if let Some(numbers) = self.instances.get_mut(instance) {
            numbers.retain(|&sn| sn != change.sn);
            if numbers.is_empty() {
                self.instances.remove(instance);
            }
        }
    }

    /// Appends a change with the next sequence number and returns that number.
    pub(crate) fn push(
        &mut self,
        payload: Arc<[u8]>,
        inline_qos: Option<Arc<[u8]>>,
        source_timestamp: Option<Time>,
        instance: Option<InstanceKey>,
    ) -> SequenceNumber {
        self.push_change(CacheChange {
            sn: self.next_sn,
            payload,
            inline_qos,
            source_timestamp,
            given_up: false,
            instance,
        })
    }

    /// Appends a given-up number ([`CacheChange::given_up`]) and returns it.
    pub(crate) fn push_given_up(&mut self) -> SequenceNumber {
        self.push_change(CacheChange {
            sn: self.next_sn,
            payload: Arc::from([]),
            inline_qos: None,
            source_timestamp: None,
            given_up: true,
            instance: None,
        })
    }

    fn push_change(&mut self, change: CacheChange) -> SequenceNumber {
        let sn = change.sn;
        self.bytes = self.bytes.saturating_add(change.payload.len());
        if let Some(instance) = &change.instance {
            self.instances
                .entry(instance.clone())
                .or_default()
                .push_back(sn);
        }
        self.changes.push_back(change);
        self.next_sn = sn_next(sn);
        sn
    }

    /// Uses up the next sequence number without a change, dropping the cached ones (only for
    /// a writer nobody reads: the history stays consecutive, and readers that match later are
    /// told what is gone by HEARTBEAT/GAP).
    /// Forgets every change and numbers the next one `next` if that is ahead.
    pub(crate) fn skip_to(&mut self, next: SequenceNumber) {
        self.changes.clear();
        self.instances.clear();
        self.bytes = 0;
        self.next_sn = self.next_sn.max(next);
    }

    pub(crate) fn front_sn(&self) -> Option<SequenceNumber> {
        self.changes.front().map(|c| c.sn)
    }

    pub(crate) fn pop_front(&mut self) -> Option<CacheChange> {
        let change = self.changes.pop_front()?;
        self.forget(&change);
        Some(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_numbers_and_lookup() {
        let mut h = WriterHistory::new();
        assert_eq!(h.first_sn(), SequenceNumber(1));
        assert_eq!(h.last_sn(), SequenceNumber(0));
        let p: Arc<[u8]> = Arc::from(vec![0u8, 1, 0, 0]);
        for i in 1..=5 {
            assert_eq!(h.push(p.clone(), None, None, None), SequenceNumber(i));
        }
        assert_eq!(h.pop_front().map(|c| c.sn), Some(SequenceNumber(1)));
        assert_eq!(h.first_sn(), SequenceNumber(2));
        assert_eq!(
            h.get(SequenceNumber(4)).map(|c| c.sn),
            Some(SequenceNumber(4))
        );
        assert!(h.get(SequenceNumber(1)).is_none());
        assert!(h.get(SequenceNumber(6)).is_none());
        assert!(h.get(SequenceNumber(i64::MIN)).is_none());
        while h.pop_front().is_some() {}
        assert_eq!(h.first_sn(), SequenceNumber(6));
        assert_eq!(h.last_sn(), SequenceNumber(5));
        assert_eq!(HistoryKind::KeepLast(0).capacity(), 1);
    }

    #[test]
    fn holes_left_by_removed_instances_are_skipped_by_lookups() {
        let mut h = WriterHistory::new();
        let p: Arc<[u8]> = Arc::from(vec![0u8, 1, 0, 0]);
        let (a, b): (InstanceKey, InstanceKey) = (Arc::from([1u8]), Arc::from([2u8]));
        for i in 1..=6 {
            let instance = if i % 2 == 0 { b.clone() } else { a.clone() };
            h.push(p.clone(), None, None, Some(instance));
        }
        assert_eq!(h.instance_len(&a), 3);
        assert_eq!(h.oldest_of(&b), Some(SequenceNumber(2)));
        // Instance b keeps only its newest: 2 and 4 leave holes among a's 1, 3, 5.
        for sn in [2, 4] {
            assert_eq!(
                h.remove(SequenceNumber(sn)).map(|c| c.sn),
                Some(SequenceNumber(sn))
            );
        }
        assert_eq!(h.len(), 4);
        assert_eq!(h.bytes(), 16);
        assert_eq!(h.instance_len(&b), 1);
        assert!(h.get(SequenceNumber(4)).is_none());
        assert_eq!(
            h.get(SequenceNumber(5)).map(|c| c.sn),
            Some(SequenceNumber(5))
        );
        assert_eq!(h.next_present(SequenceNumber(2)), SequenceNumber(3));
        assert_eq!(h.next_present(SequenceNumber(4)), SequenceNumber(5));
        assert_eq!(h.next_present(SequenceNumber(7)), SequenceNumber(7));
        assert_eq!(h.next_present(SequenceNumber(0)), SequenceNumber(1));
        assert_eq!(h.pop_front().map(|c| c.sn), Some(SequenceNumber(1)));
        assert_eq!(h.oldest_of(&a), Some(SequenceNumber(3)));
        while h.pop_front().is_some() {}
        assert_eq!((h.instance_len(&a), h.instance_len(&b)), (0, 0));
        assert_eq!(h.first_sn(), SequenceNumber(7));
    }
}
