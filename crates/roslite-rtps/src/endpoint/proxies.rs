//! Per-peer state: the writer's `ReaderProxy` (RTPS 2.5 §8.4.7.5, driven by §8.4.9.2) and the
//! reader's `WriterProxy` (§8.4.10.4, driven by §8.4.12.2), both storing ranges from the wire as
//! intervals ([`RangeSet`]).
//!
//! Each proxy is built from what discovery reports of its peer: [`ReaderProxyInfo`] and
//! [`WriterProxyInfo`].
//!
//! The spec describes a proxy as a list of `ChangeForReader`/`ChangeFromWriter` entries, one
//! per sequence number. Stored literally that is proportional to whatever sequence numbers a
//! peer names (CVE-2025-64438), so both proxies compact it, as §8.4.15.1 suggests:
//! - `ReaderProxy`: `acked_below` (every change below is acknowledged or irrelevant, i.e.
//!   `highestAckedSeqNum + 1`), the catch-up range of unsent changes, and the requested
//!   changes, each requested number validated against the writer's own range.
//! - `WriterProxy`: `next_expected` (everything below is received, delivered or irrelevant),
//!   a bounded map of out-of-order samples, an interval set of irrelevant numbers (GAP,
//!   HEARTBEAT `firstSN`) and the highest number the writer announced.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::instant::Instant;
use crate::types::{Count, Guid, Locator, SequenceNumber};

use super::fragments::{Reassembler, SharedBudgets};
use super::range_set::RangeSet;
use super::received::ReceivedSample;

/// A matched reader as discovery reports it (SEDP `DATA(r)`, §8.5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaderProxyInfo {
    pub guid: Guid,
    pub unicast: Vec<Locator>,
    pub multicast: Vec<Locator>,
    pub reliable: bool,
    pub transient_local: bool,
    pub expects_inline_qos: bool,
}

impl ReaderProxyInfo {
    /// A reliable, volatile reader reachable at `unicast`.
    pub fn new(guid: Guid, unicast: Vec<Locator>) -> Self {
        ReaderProxyInfo {
            guid,
            unicast,
            multicast: Vec::new(),
            reliable: true,
            transient_local: false,
            expects_inline_qos: false,
        }
    }
}

/// A matched writer as discovery reports it (SEDP `DATA(w)`, §8.5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterProxyInfo {
    pub guid: Guid,
    pub unicast: Vec<Locator>,
    pub multicast: Vec<Locator>,
    pub reliable: bool,
}

impl WriterProxyInfo {
    /// A reliable writer reachable at `unicast`.
    pub fn new(guid: Guid, unicast: Vec<Locator>) -> Self {
        WriterProxyInfo {
            guid,
            unicast,
            multicast: Vec::new(),
            reliable: true,
        }
    }
}

/// Where a reader proxy is in the repair cycle of RTPS 2.5 §8.4.9.2 (Figure 8.19: reliable
/// StatefulWriter behaviour with respect to each matched reader).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RepairState {
    /// No requested changes.
    Waiting,
    /// An ACKNACK/NACK_FRAG requested changes (T8/T10); repair at `at`, after
    /// `nackResponseDelay` (T11).
    MustRepair { at: Instant },
    /// Sending the requested changes (T12) until none are left (T13).
    Repairing,
}

impl fmt::Display for RepairState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Waiting => f.write_str("waiting"),
            Self::MustRepair { at } => write!(f, "must_repair (at {at})"),
            Self::Repairing => f.write_str("repairing"),
        }
    }
}

/// The writer's view of one matched reader.
#[derive(Clone, Debug)]
pub(crate) struct ReaderProxy {
    pub info: ReaderProxyInfo,
    /// Every sequence number below is acknowledged or irrelevant to this reader.
    pub acked_below: SequenceNumber,
    /// The highest `readerSNState.base` this reader itself sent, to spot lowered bases.
    pub reader_acked: SequenceNumber,
    /// Volatile readers start at the writer's next sequence number at match time; earlier
    /// ones are irrelevant to them (answered with GAP).
    pub first_relevant: SequenceNumber,
    /// Changes still to push to this reader alone: the history a transient-local reader
    /// joined too late to receive with everyone else, `[unsent.0, unsent.1)`.
    pub unsent: (SequenceNumber, SequenceNumber),
    /// Changes the reader asked for (`requested_changes`), and numbers given up since that it
    /// is to be sent a GAP for; all within the writer's range.
    pub requested: BTreeSet<SequenceNumber>,
    /// Fragments the reader asked for, per sequence number.
    pub requested_frags: BTreeMap<SequenceNumber, RangeSet<u32>>,
    pub last_acknack: Option<Count>,
    /// When `last_acknack` was accepted.
    pub last_acknack_at: Option<Instant>,
    pub last_nack_frag: Option<Count>,
    pub repair: RepairState,
    /// A directed HEARTBEAT is due (new reader, pre-emptive ACKNACK, periodic timer).
    pub heartbeat_wanted: bool,
    /// The reader answered a HEARTBEAT (an ACKNACK other than Fast DDS's pre-emptive one): it
    /// knows where this writer's numbering stands. Until then a volatile reader of Cyclone DDS
    /// (and Fast DDS) takes the first HEARTBEAT it gets as the start of the stream and treats
    /// every number it covers as written before the reader matched: a sample lost on its first
    /// transmission then is acknowledged and never delivered.
    pub synced: bool,
}

impl ReaderProxy {
    /// Whether the writer has anything to send to this reader alone: catch-up samples, a
    /// repair round, or a HEARTBEAT (the conditions `Writer::poll_directed` acts on).
    pub(crate) fn has_directed_work(&self) -> bool {
        self.unsent.0 < self.unsent.1
            || self.repair == RepairState::Repairing
            || self.heartbeat_wanted
    }

    pub(crate) fn new(info: ReaderProxyInfo, first_relevant: SequenceNumber) -> Self {
        ReaderProxy {
            info,
            acked_below: first_relevant,
            reader_acked: SequenceNumber::ZERO,
            first_relevant,
            unsent: (first_relevant, first_relevant),
            requested: BTreeSet::new(),
            requested_frags: BTreeMap::new(),
            last_acknack: None,
            last_acknack_at: None,
            last_nack_frag: None,
            repair: RepairState::Waiting,
            heartbeat_wanted: false,
            synced: false,
        }
    }

    /// Whether the periodic HEARTBEAT is for this reader: it has something up to `last` to
    /// acknowledge, or has not yet answered any HEARTBEAT ([`Self::synced`]), so that it
    /// learns where the stream stands before the next sample, not after losing it.
    pub(crate) fn wants_periodic_heartbeat(&self, last: SequenceNumber) -> bool {
        self.info.reliable && (self.acked_below <= last || !self.synced)
    }

    pub(crate) fn has_requests(&self) -> bool {
        !self.requested.is_empty() || !self.requested_frags.is_empty()
    }

    /// Schedules a repair at `at` unless one is already scheduled or running.
    pub(crate) fn schedule_repair(&mut self, at: Instant) {
        if self.repair == RepairState::Waiting {
            self.repair = RepairState::MustRepair { at };
        }
    }

    /// Forgets requests below the acknowledged point.
    pub(crate) fn prune_requests(&mut self) {
        let keep = self.acked_below;
        self.requested = self.requested.split_off(&keep);
        self.requested_frags = self.requested_frags.split_off(&keep);
        if !self.has_requests() {
            self.repair = RepairState::Waiting;
        }
    }
}

/// Where a writer proxy is in the acknowledgement cycle of RTPS 2.5 §8.4.12.2 (Figure 8.26:
/// reliable StatefulReader behaviour with respect to each matched writer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckState {
    Waiting,
    /// A HEARTBEAT without the Final flag, or a new match (pre-emptive ACKNACK): an ACKNACK
    /// is owed at `at`, `heartbeatResponseDelay` later (T2, T5).
    MustSendAck {
        at: Instant,
    },
    /// A Final HEARTBEAT while data is missing: at `at` an ACKNACK goes out if data is still
    /// missing (T4 → T5), else nothing (T3).
    MaySendAck {
        at: Instant,
    },
}

impl AckState {
    pub(crate) fn deadline(self) -> Option<Instant> {
        match self {
            Self::Waiting => None,
            Self::MustSendAck { at } | Self::MaySendAck { at } => Some(at),
        }
    }
}

impl fmt::Display for AckState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Waiting => f.write_str("waiting"),
            Self::MustSendAck { at } => write!(f, "must_send_ack (at {at})"),
            Self::MaySendAck { at } => write!(f, "may_send_ack (at {at})"),
        }
    }
}

/// The reader's view of one matched writer.
#[derive(Clone, Debug)]
pub(crate) struct WriterProxy {
    pub info: WriterProxyInfo,
    /// Every sequence number below has been delivered or is irrelevant
    /// (`available_changes_max + 1` of §8.4.10.4, when everything is in order).
    pub next_expected: SequenceNumber,
    /// Received out of order, waiting for `next_expected` (reliable only; bounded).
    pub pending: BTreeMap<SequenceNumber, ReceivedSample>,
    /// Payload bytes in `pending`.
    pub pending_bytes: usize,
    /// Irrelevant numbers at or above `next_expected` (GAP), as intervals.
    pub irrelevant: RangeSet<SequenceNumber>,
    /// The highest `lastSN` announced by a HEARTBEAT (just a number: never iterated).
    pub max_available: SequenceNumber,
    pub last_heartbeat: Option<Count>,
    pub last_heartbeat_frag: Option<Count>,
    pub heartbeat_seen: bool,
    pub ack: AckState,
    pub acknack_count: Count,
    pub nack_frag_count: Count,
    pub reassembly: Reassembler,
    /// A sample from this writer was delivered: numbers skipped from then on are lost. Those
    /// skipped before it were published before the match (or are older than the writer's
    /// history), which DDS does not count as lost.
    pub delivered_any: bool,
    /// Numbers lost since the last delivered sample, reported with the next one
    /// ([`ReceivedSample::lost_before`](super::received::ReceivedSample::lost_before)).
    pub lost_pending: u64,
    /// The number after the last sample delivered (1 before any): `next_expected` is beyond
    /// it only by numbers skipped as irrelevant since, which a contradicting HEARTBEAT undoes.
    pub delivered_next: SequenceNumber,
    /// Numbers skipped as irrelevant since the last delivered sample (counted in
    /// `irrelevant_skipped`; taken back when undone).
    pub skipped_since_delivery: u64,
    /// The highest sequence number the writer has credibly shown (an accepted HEARTBEAT's
    /// `lastSN`, a DATA within the window) and when: the base of what it may plausibly
    /// announce next.
    pub shown: SequenceNumber,
    pub shown_at: Instant,
    /// The writer's samples carry this reader's content filter signature: it filters for the
    /// reader, and the numbers it skips are filtered out, not lost.
    pub filters_for_reader: bool,
}

impl WriterProxy {
    pub(crate) fn new(now: Instant, info: WriterProxyInfo, budgets: SharedBudgets) -> Self {
        WriterProxy {
            info,
            next_expected: SequenceNumber::FIRST,
            pending: BTreeMap::new(),
            pending_bytes: 0,
            irrelevant: RangeSet::default(),
            max_available: SequenceNumber::ZERO,
            last_heartbeat: None,
            last_heartbeat_frag: None,
            heartbeat_seen: false,
            ack: AckState::Waiting,
            acknack_count: Count(0),
            nack_frag_count: Count(0),
            reassembly: Reassembler::with_budgets(budgets),
            delivered_any: false,
            lost_pending: 0,
            delivered_next: SequenceNumber::FIRST,
            skipped_since_delivery: 0,
            shown: SequenceNumber::ZERO,
            shown_at: now,
            filters_for_reader: false,
        }
    }

    /// Whether some announced sequence number has not been received.
    pub(crate) fn has_missing(&self) -> bool {
        self.next_expected <= self.max_available
    }

    /// Asks for an ACKNACK at `at`: `must` (T2 without Final), or only if data is still
    /// missing then (T3/T4). An earlier deadline already set is kept.
    pub(crate) fn schedule_ack(&mut self, at: Instant, must: bool) {
        self.ack = match self.ack {
            AckState::Waiting if must => AckState::MustSendAck { at },
            AckState::Waiting => AckState::MaySendAck { at },
            AckState::MaySendAck { at: old } if must => AckState::MustSendAck { at: old.min(at) },
            other => other,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_set_merges_and_trims() {
        let mut r: RangeSet<u32> = RangeSet::default();
        r.insert(5, 7);
        r.insert(1, 2);
        r.insert(10, 12);
        assert_eq!(r.len(), 3);
        r.insert(2, 5); // adjacent on both sides
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(1, 7), (10, 12)]);
        r.insert(0, 100);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(0, 100)]);
        assert_eq!(r.containing(99), Some((0, 100)));
        assert_eq!(r.containing(100), None);
        r.remove_below(50);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(50, 100)]);
        r.insert(200, 201);
        r.truncate(1);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(50, 100)]);
        r.insert(7, 7);
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn huge_sequence_ranges_are_one_interval() {
        let mut r: RangeSet<SequenceNumber> = RangeSet::default();
        r.insert(SequenceNumber(1), SequenceNumber(1 << 40));
        r.insert(SequenceNumber(1 << 20), SequenceNumber(1 << 62));
        assert_eq!(r.len(), 1);
        assert!(r.contains(SequenceNumber(1 << 50)));
    }
}
