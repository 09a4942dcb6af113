//! History caches: the writer's `HistoryCache` of RTPS 2.5 §8.2.2 / §8.4.7 and the reader's
//! queue of samples ready for the application.
//!
//! Invariant of [`WriterHistory`]: the cached changes always have consecutive sequence numbers
//! `first_sn() ..= last_sn()`. Changes only leave from the front (KEEP_LAST overwrites the
//! oldest; acknowledged changes are released oldest first, and "acknowledged by all readers" is
//! a prefix property because every reader acknowledges a prefix). So a lookup by sequence
//! number is an index computation, and the writer never stores a gap.

use std::collections::VecDeque;
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
}

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
}

/// The writer's cache: consecutive sequence numbers, oldest first.
#[derive(Clone, Debug)]
pub(crate) struct WriterHistory {
    changes: VecDeque<CacheChange>,
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
        let index = usize::try_from(sn.0.checked_sub(self.first_sn().0)?).ok()?;
        let change = self.changes.get(index)?;
        debug_assert_eq!(change.sn, sn, "internal bug: history not consecutive");
        Some(change)
    }

    /// Appends a change with the next sequence number and returns that number.
    pub(crate) fn push(
        &mut self,
        payload: Arc<[u8]>,
        inline_qos: Option<Arc<[u8]>>,
        source_timestamp: Option<Time>,
    ) -> SequenceNumber {
        self.push_change(payload, inline_qos, source_timestamp, false)
    }

    /// Appends a given-up number ([`CacheChange::given_up`]) and returns it.
    pub(crate) fn push_given_up(&mut self) -> SequenceNumber {
        self.push_change(Arc::from([]), None, None, true)
    }

    fn push_change(
        &mut self,
        payload: Arc<[u8]>,
        inline_qos: Option<Arc<[u8]>>,
        source_timestamp: Option<Time>,
        given_up: bool,
    ) -> SequenceNumber {
        let sn = self.next_sn;
        self.bytes = self.bytes.saturating_add(payload.len());
        self.changes.push_back(CacheChange {
            sn,
            payload,
            inline_qos,
            source_timestamp,
            given_up,
        });
        self.next_sn = sn_next(sn);
        sn
    }

    /// Uses up the next sequence number without a change, dropping the cached ones (only for
    /// a writer nobody reads: the history stays consecutive, and readers that match later are
    /// told what is gone by HEARTBEAT/GAP).
    /// Forgets every change and numbers the next one `next` if that is ahead.
    pub(crate) fn skip_to(&mut self, next: SequenceNumber) {
        self.changes.clear();
        self.bytes = 0;
        self.next_sn = self.next_sn.max(next);
    }

    pub(crate) fn front_sn(&self) -> Option<SequenceNumber> {
        self.changes.front().map(|c| c.sn)
    }

    pub(crate) fn pop_front(&mut self) -> Option<CacheChange> {
        let change = self.changes.pop_front()?;
        self.bytes = self.bytes.saturating_sub(change.payload.len());
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
            assert_eq!(h.push(p.clone(), None, None), SequenceNumber(i));
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
}
