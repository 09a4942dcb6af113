//! What an endpoint sends: [`Transmit`] (submessages for a set of destinations, packed into
//! RTPS messages by [`Transmit::datagrams`]), the [`TransmitBuilder`] that endpoints emit into,
//! and the choice of destinations for directed traffic.

use std::ops::Range;
use std::sync::Arc;

use crate::message::{PayloadTail, WireBytes};
use crate::types::{GuidPrefix, Locator, Time};
use crate::wire::{
    DataFragRepr, HeaderRepr, InfoDstRepr, InfoTsRepr, Submessage, SubmessageHeader, SubmessageId,
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

/// Bytes of RTPS header, INFO_DST, INFO_TS and DATA_FRAG fixed fields around a fragment run:
/// 20 + 16 + 12 + 36, rounded up. A submessage of `max_data_size` payload bytes plus inline QoS
/// fits a datagram of `max_data_size + MAX_INLINE_QOS + DATAGRAM_OVERHEAD` bytes.
pub const DATAGRAM_OVERHEAD: usize = 96;

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
