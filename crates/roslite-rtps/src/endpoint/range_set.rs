//! [`RangeSet`]: the interval set that both proxies and the fragment reassembler use, so that
//! ranges named on the wire (GAP, HEARTBEAT `firstSN`, fragment numbers) are stored as
//! intervals and never expanded (CVE-2025-64438).

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open intervals `[start, end)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RangeSet<K> {
    map: BTreeMap<K, K>,
}

impl<K> Default for RangeSet<K> {
    fn default() -> Self {
        RangeSet {
            map: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Copy> RangeSet<K> {
    /// Adds `[start, end)`, merging with overlapping and adjacent intervals. `O(log n)` per
    /// interval merged away.
    pub(crate) fn insert(&mut self, start: K, end: K) {
        if start >= end {
            return;
        }
        let (mut s, mut e) = (start, end);
        if let Some((&ps, &pe)) = self.map.range(..=s).next_back() {
            if pe >= s {
                s = ps;
                e = e.max(pe);
            }
        }
        // Each iteration removes one interval.
        while let Some((&k, &v)) = self.map.range(s..=e).next() {
            self.map.remove(&k);
            e = e.max(v);
        }
        self.map.insert(s, e);
    }

    /// The interval containing `k`.
    pub(crate) fn containing(&self, k: K) -> Option<(K, K)> {
        self.map
            .range(..=k)
            .next_back()
            .filter(|(_, e)| **e > k)
            .map(|(s, e)| (*s, *e))
    }

    pub(crate) fn contains(&self, k: K) -> bool {
        self.containing(k).is_some()
    }

    /// The intervals that overlap `[start, end)`, ascending. `O(log n)` plus one step per
    /// interval returned.
    pub(crate) fn overlapping(&self, start: K, end: K) -> impl Iterator<Item = (K, K)> + '_ {
        let before = self
            .map
            .range(..start)
            .next_back()
            .filter(|(_, e)| **e > start)
            .map(|(s, e)| (*s, *e));
        let from = before.map_or(start, |(s, _)| s);
        before.into_iter().chain(
            self.map
                .range(from..)
                .skip(usize::from(before.is_some()))
                .take_while(move |(s, _)| **s < end)
                .map(|(s, e)| (*s, *e)),
        )
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of intervals.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (K, K)> + '_ {
        self.map.iter().map(|(s, e)| (*s, *e))
    }

    /// Forgets everything below `k`.
    pub(crate) fn remove_below(&mut self, k: K) {
        while let Some((&s, &e)) = self.map.iter().next() {
            if s >= k {
                break;
            }
            self.map.remove(&s);
            if e > k {
                self.map.insert(k, e);
                break;
            }
        }
    }

    /// Drops the highest intervals until at most `max` remain.
    pub(crate) fn truncate(&mut self, max: usize) {
        while self.map.len() > max {
            self.map.pop_last();
        }
    }
}
