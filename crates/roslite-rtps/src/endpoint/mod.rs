//! RTPS writers and readers: the behaviour module of RTPS 2.5 §8.4.
//!
//! - [`Writer`] (`writer.rs`): a best-effort or reliable *stateful* writer (§8.4.7–§8.4.9).
//!   It keeps a history cache of [`HistoryKind`] depth (`history.rs`) and one `ReaderProxy` per
//!   matched reader (`proxies.rs`), pushes new samples, announces them with HEARTBEAT and
//!   answers ACKNACK/NACK_FRAG with repairs (fragmented again when larger than
//!   `max_data_size`) or GAP.
//! - [`Reader`] (`reader.rs`): a best-effort or reliable *stateful* reader (§8.4.10–§8.4.12)
//!   with one `WriterProxy` per matched writer. It delivers samples in order without
//!   duplicates, answers HEARTBEATs with ACKNACK/NACK_FRAG and reassembles DATA_FRAG
//!   (`fragments.rs`, §8.4.14.1).
//!
//! The simulation harness that exercises both over a lossy network is [`crate::sim`].
//!
//! Both are sans-IO, in the style of quinn-proto: inputs are `handle_*` methods and `write`,
//! outputs are [`Transmit`]s from `poll_transmit` and samples from [`Reader::poll_sample`],
//! and `poll_timeout` says when `handle_timeout` must be called next. Time is an argument.
//! After any input (including `add_reader`/`add_writer`, `write` and `handle_timeout`) the
//! caller drains `poll_transmit` until it returns `None`; `poll_timeout` covers only timers.
//!
//! Neither side trusts its peer. Ranges from the wire (HEARTBEAT `firstSN..lastSN`, GAP
//! `gapStart..gapList.base`, ACKNACK bases) stay intervals and are never iterated; sets are
//! bitmaps of at most 256 members; everything a peer can make us store is capped by
//! configuration. A misbehaving peer is counted in [`WriterStats`]/[`ReaderStats`] and its
//! message dropped, never reported as an error (docs/robustness.md §2).

mod drained;
mod fragments;
mod history;
mod key_hash;
mod proxies;
mod range_set;
mod reader;
mod received;
mod writer;

#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::message::{PayloadTail, WireBytes};

use crate::types::{Count, GuidPrefix, Locator, SequenceNumber, Time};
use crate::wire::{
    DataFragRepr, HeaderRepr, InfoDstRepr, InfoTsRepr, Submessage, SubmessageHeader, SubmessageId,
};

pub use drained::{Drained, Transmitter};
pub use fragments::{ByteBudget, SharedBudgets};
pub use history::HistoryKind;
pub use key_hash::KeyHasher;
pub use proxies::{ReaderProxyInfo, WriterProxyInfo};
pub use reader::{Reader, ReaderConfig, ReaderStats};
pub use received::ReceivedSample;
pub use writer::{
    AdoptError, AdoptedSample, Writer, WriterConfig, WriterStats, ACKNACK_COUNT_RESET_AFTER,
    BATCH_MAX_BYTES, KEEP_ALL_MAX_BYTES,
};

/// Something an endpoint wants sent: the same submessages to every destination.
///
/// Each submessage is a complete submessage (little endian) small enough for one datagram
/// together with the RTPS header and INFO_DST; a DATA_FRAG sent from the writer's history has
/// its fragment data in the tail. An INFO_TS always
/// directly precedes the DATA/DATA_FRAG it applies to. Use [`Transmit::datagrams`] to pack
/// them into RTPS messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transmit {
    /// Where to send every datagram (deduplicated).
    pub destinations: Vec<Locator>,
    /// `Some` for directed traffic: an INFO_DST with this participant prefix must precede the
    /// submessages ([`Transmit::datagrams`] adds it). `None`: for every participant.
    pub dst_prefix: Option<GuidPrefix>,
    pub submessages: Vec<WireBytes>,
}

impl Transmit {
    /// Total bytes of the submessages.
    pub fn submessage_bytes(&self) -> usize {
        self.submessages
            .iter()
            .fold(0usize, |a, s| a.saturating_add(s.len()))
    }

    /// Packs the submessages into RTPS messages of at most `max_size` bytes, each starting
    /// with `header` and, if directed, an INFO_DST.
    ///
    /// Receiver state does not survive a message boundary (RTPS 2.5 §8.3.4), so an INFO_TS in
    /// effect is repeated at the start of the next datagram, and an INFO_TS is never separated
    /// from the submessage that follows it. A submessage body over 64 KiB (encoded with
    /// `octetsToNextHeader = 0`, §9.4.5.1.3) ends its message. A submessage that does not fit
    /// even in an empty datagram gets a datagram of its own (larger than `max_size`); the
    /// writer's configuration keeps that from happening.
    pub fn datagrams(&self, header: &HeaderRepr, max_size: usize) -> Vec<Vec<u8>> {
        let submessages: Vec<Vec<u8>> = self.submessages.iter().map(WireBytes::to_vec).collect();
        let mut out = Vec::new();
        let mut current: Vec<u8> = Vec::new();
        let mut sealed = false;
        // The INFO_TS in effect in `current`, to repeat in the next datagram.
        let mut ts_in_effect: Option<&[u8]> = None;
        let mut i = 0;
        while let Some(first) = submessages.get(i) {
            let is_ts = submessage_id(first) == Some(SubmessageId::INFO_TS);
            let unit_end = if is_ts {
                i.saturating_add(2).min(submessages.len())
            } else {
                i.saturating_add(1)
            };
            let unit = submessages.get(i..unit_end).unwrap_or(&[]);
            let unit_len = unit.iter().fold(0usize, |a, s| a.saturating_add(s.len()));
            if !current.is_empty() && (sealed || current.len().saturating_add(unit_len) > max_size)
            {
                out.push(std::mem::take(&mut current));
                sealed = false;
            }
            if current.is_empty() {
                header.emit(&mut current);
                if let Some(prefix) = self.dst_prefix {
                    InfoDstRepr {
                        guid_prefix: prefix,
                    }
                    .emit(&mut current, roslite_cdr::Endianness::Little);
                }
                if let (false, Some(ts)) = (is_ts, ts_in_effect) {
                    current.extend_from_slice(ts);
                }
            }
            for sm in unit {
                current.extend_from_slice(sm);
                if submessage_id(sm) == Some(SubmessageId::INFO_TS) {
                    ts_in_effect = (sm.len() > SubmessageHeader::LEN).then_some(sm.as_slice());
                }
                sealed = sm.len().saturating_sub(SubmessageHeader::LEN) > usize::from(u16::MAX);
            }
            i = unit_end;
        }
        if !current.is_empty() {
            out.push(current);
        }
        out
    }
}

fn submessage_id(sm: &[u8]) -> Option<SubmessageId> {
    sm.first().map(|b| SubmessageId(*b))
}

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

/// Bytes of RTPS header, INFO_DST, INFO_TS and DATA_FRAG fixed fields around a fragment run:
/// 20 + 16 + 12 + 36, rounded up. A submessage of `max_data_size` payload bytes plus inline QoS
/// fits a datagram of `max_data_size + MAX_INLINE_QOS + DATAGRAM_OVERHEAD` bytes.
pub const DATAGRAM_OVERHEAD: usize = 96;

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

/// Accumulates emitted submessages for one [`Transmit`], inserting INFO_TS where the source
/// timestamp changes.
#[derive(Debug, Default)]
pub(crate) struct TransmitBuilder {
    submessages: Vec<WireBytes>,
    timestamp: Option<Time>,
    bytes: usize,
}

impl TransmitBuilder {
    /// Sets the source timestamp for the following DATA/DATA_FRAG: an INFO_TS with the time,
    /// or one with the I flag if an earlier timestamp is in effect (RTPS 2.5 §8.3.8.10).
    pub(crate) fn set_timestamp(&mut self, timestamp: Option<Time>) {
        if timestamp != self.timestamp {
            self.push(&Submessage::InfoTs(InfoTsRepr { timestamp }));
            self.timestamp = timestamp;
        }
    }

    pub(crate) fn push(&mut self, sm: &Submessage<'_>) {
        let mut buf = Vec::with_capacity(sm.buffer_len());
        sm.emit(&mut buf, roslite_cdr::Endianness::Little);
        self.bytes = self.bytes.saturating_add(buf.len());
        self.submessages.push(WireBytes::whole(buf));
    }

    /// Appends a DATA_FRAG whose `data` is `range` of `payload`: only its head is emitted,
    /// the data stays in `payload` ([`PayloadTail`]).
    pub(crate) fn push_data_frag(
        &mut self,
        frag: &DataFragRepr<'_>,
        payload: &Arc<[u8]>,
        range: Range<usize>,
    ) {
        // The same bytes, not merely equal ones (comparing them would double the work).
        debug_assert_eq!(
            payload.get(range.clone()).map(<[u8]>::as_ptr),
            Some(frag.data.as_ptr())
        );
        let mut head = Vec::with_capacity(frag.buffer_len().saturating_sub(frag.data.len()));
        let padding = frag.emit_head(&mut head, roslite_cdr::Endianness::Little);
        let Some(tail) = PayloadTail::new(Arc::clone(payload), range, padding) else {
            debug_assert!(false, "internal bug: fragment range outside the payload");
            return;
        };
        let emitted = WireBytes {
            head,
            tail: Some(tail),
        };
        self.bytes = self.bytes.saturating_add(emitted.len());
        self.submessages.push(emitted);
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.submessages.is_empty()
    }

    pub(crate) fn finish(
        self,
        destinations: Vec<Locator>,
        dst_prefix: Option<GuidPrefix>,
    ) -> Option<Transmit> {
        (!self.submessages.is_empty() && !destinations.is_empty()).then_some(Transmit {
            destinations,
            dst_prefix,
            submessages: self.submessages,
        })
    }
}

/// Unicast locators if there are any, else multicast ones (RTPS 2.5 §8.4.9.1: a proxy's
/// `unicastLocatorList` is preferred for directed traffic).
pub(crate) fn directed_locators(unicast: &[Locator], multicast: &[Locator]) -> Vec<Locator> {
    let mut out = Vec::new();
    let source = if unicast.is_empty() {
        multicast
    } else {
        unicast
    };
    for l in source {
        push_unique(&mut out, *l);
    }
    out
}

pub(crate) fn push_unique(v: &mut Vec<Locator>, l: Locator) {
    if !v.contains(&l) {
        v.push(l);
    }
}
