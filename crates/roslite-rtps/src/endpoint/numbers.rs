//! Arithmetic on the numbers endpoints exchange: sequence numbers (saturating) and `Count_t`
//! (serial-number comparison, RTPS 2.5 §9.4.2.7).

use crate::types::{Count, SequenceNumber};

/// `sn + n`, saturating (sequence numbers never get near `i64::MAX` in practice; a peer's
/// values are clamped before they get here).
pub(crate) fn sn_add(sn: SequenceNumber, n: i64) -> SequenceNumber {
    SequenceNumber(sn.0.saturating_add(n))
}

pub(crate) fn sn_next(sn: SequenceNumber) -> SequenceNumber {
    sn_add(sn, 1)
}

pub(crate) fn sn_prev(sn: SequenceNumber) -> SequenceNumber {
    SequenceNumber(sn.0.saturating_sub(1))
}

/// How far behind the last count a count may be and still be a duplicate or reordered
/// message; further behind, it is taken as newer (see [`count_is_newer`]).
pub(crate) const COUNT_RESYNC: i32 = 1024;

/// Serial-number comparison of `Count_t` (RTPS 2.5 §9.4.2.7: counts increase and may wrap):
/// whether `new` is later than `last`. The first count from a peer is always new.
///
/// A count more than [`COUNT_RESYNC`] behind the last is new as well: a peer's counts advance
/// by one per message, so the last one was forged (one datagram naming a writer with a count
/// far ahead would otherwise make every genuine HEARTBEAT or ACKNACK stale;
/// docs/robustness.md §1) or the peer started counting again.
pub(crate) fn count_is_newer(new: Count, last: Option<Count>) -> bool {
    match last {
        None => true,
        Some(last) => {
            let d = new.0.wrapping_sub(last.0);
            d > 0 || d < COUNT_RESYNC.wrapping_neg()
        }
    }
}

/// `count + 1`, wrapping.
pub(crate) fn count_next(count: Count) -> Count {
    Count(count.0.wrapping_add(1))
}
