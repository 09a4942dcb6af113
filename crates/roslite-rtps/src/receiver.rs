//! The message receiver (RTPS 2.5 §8.3.4): walks one datagram, keeps the receiver state that
//! INFO_* submessages change, and hands every valid submessage to the caller together with
//! that state.
//!
//! Rules (RTPS 2.5 §8.3.4.1, the "rules followed by the Message Receiver"):
//! - an invalid header drops the whole message;
//! - a submessage header that does not fit, or an `octetsToNextHeader` reaching past the end,
//!   invalidates the rest of the message;
//! - a submessage with an unknown id (including vendor-specific ids 0x80–0xff, whose meaning
//!   depends on a vendor we do not implement) is skipped by its length;
//! - a known submessage that fails validation invalidates the rest of the message.
//!   Submessages before it have already been delivered.
//!
//! Nothing here allocates per submessage except INFO_REPLY's locator lists (capped).

use crate::error::ParseError;
use crate::types::{Guid, GuidPrefix, Locator, ProtocolVersion, Time, VendorId};
use crate::wire::{HeaderRepr, Submessage, SubmessageHeader, SubmessageId};

/// State carried from submessage to submessage within one message (RTPS 2.5 §8.3.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiverState {
    pub source_version: ProtocolVersion,
    pub source_vendor_id: VendorId,
    pub source_guid_prefix: GuidPrefix,
    /// `GuidPrefix::UNKNOWN` until an INFO_DST names a participant: "for every participant
    /// that receives this message". The spec initialises it to the receiving participant's
    /// prefix, which this layer does not know; compare with [`ReceiverState::is_for`].
    pub dest_guid_prefix: GuidPrefix,
    /// Set by INFO_REPLY; empty means "reply to the datagram's source address or to the
    /// locators discovered for the sender" (the spec's initial value is the source address,
    /// which only the transport knows).
    pub unicast_reply_locators: Vec<Locator>,
    pub multicast_reply_locators: Vec<Locator>,
    /// The source timestamp from the last INFO_TS, if any and not invalidated.
    pub timestamp: Option<Time>,
}

impl ReceiverState {
    /// The initial state for a message with header `h`.
    pub fn new(h: &HeaderRepr) -> Self {
        ReceiverState {
            source_version: h.version,
            source_vendor_id: h.vendor_id,
            source_guid_prefix: h.guid_prefix,
            dest_guid_prefix: GuidPrefix::UNKNOWN,
            unicast_reply_locators: Vec::new(),
            multicast_reply_locators: Vec::new(),
            timestamp: None,
        }
    }

    /// Whether the current submessages are addressed to the participant `local`.
    pub fn is_for(&self, local: GuidPrefix) -> bool {
        self.dest_guid_prefix.is_unknown() || self.dest_guid_prefix == local
    }

    /// The GUID of a remote entity named in the current submessage (a writerId in DATA, a
    /// readerId in ACKNACK, ...).
    pub fn source_guid(&self, entity_id: crate::types::EntityId) -> Guid {
        Guid::new(self.source_guid_prefix, entity_id)
    }

    /// Applies an INFO_* submessage (RTPS 2.5 §8.3.8.7–§8.3.8.10); others change nothing.
    fn apply(&mut self, sm: &Submessage<'_>) {
        match sm {
            Submessage::InfoDst(d) => self.dest_guid_prefix = d.guid_prefix,
            Submessage::InfoSrc(s) => {
                self.source_version = s.version;
                self.source_vendor_id = s.vendor_id;
                self.source_guid_prefix = s.guid_prefix;
                self.unicast_reply_locators.clear();
                self.multicast_reply_locators.clear();
                self.timestamp = None;
            }
            Submessage::InfoReply(r) => {
                self.unicast_reply_locators.clone_from(&r.unicast_locators);
                self.multicast_reply_locators = r.multicast_locators.clone().unwrap_or_default();
            }
            Submessage::InfoTs(t) => self.timestamp = t.timestamp,
            _ => {}
        }
    }
}

/// One valid submessage with the receiver state that applies to it.
#[derive(Clone, Copy, Debug)]
pub struct ReceivedSubmessage<'a> {
    pub receiver: &'a ReceiverState,
    pub submessage: &'a Submessage<'a>,
}

/// Per-submessage-kind counts of *invalid* (known but failed validation) submessages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InvalidCounts {
    pub acknack: u64,
    pub data: u64,
    pub data_frag: u64,
    pub gap: u64,
    pub heartbeat: u64,
    pub heartbeat_frag: u64,
    pub info_dst: u64,
    pub info_reply: u64,
    pub info_src: u64,
    pub info_ts: u64,
    pub nack_frag: u64,
    pub pad: u64,
}

impl InvalidCounts {
    pub fn total(&self) -> u64 {
        [
            self.acknack,
            self.data,
            self.data_frag,
            self.gap,
            self.heartbeat,
            self.heartbeat_frag,
            self.info_dst,
            self.info_reply,
            self.info_src,
            self.info_ts,
            self.nack_frag,
            self.pad,
        ]
        .iter()
        .fold(0u64, |a, b| a.saturating_add(*b))
    }

    fn bump(&mut self, id: SubmessageId) {
        let slot = match id {
            SubmessageId::ACKNACK => &mut self.acknack,
            SubmessageId::DATA => &mut self.data,
            SubmessageId::DATA_FRAG => &mut self.data_frag,
            SubmessageId::GAP => &mut self.gap,
            SubmessageId::HEARTBEAT => &mut self.heartbeat,
            SubmessageId::HEARTBEAT_FRAG => &mut self.heartbeat_frag,
            SubmessageId::INFO_DST => &mut self.info_dst,
            SubmessageId::INFO_REPLY => &mut self.info_reply,
            SubmessageId::INFO_SRC => &mut self.info_src,
            SubmessageId::INFO_TS => &mut self.info_ts,
            SubmessageId::NACK_FRAG => &mut self.nack_frag,
            _ => &mut self.pad,
        };
        *slot = slot.saturating_add(1);
    }
}

/// What the receiver saw, by outcome. Peer misbehaviour is counted here, never returned to the
/// application as an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveStats {
    /// Datagrams passed to [`parse_message`].
    pub datagrams: u64,
    /// Valid submessages delivered.
    pub submessages: u64,
    /// Datagram shorter than the 20-byte RTPS header.
    pub truncated_header: u64,
    /// First four bytes not `RTPS`.
    pub bad_magic: u64,
    /// Protocol major version other than 2.
    pub unsupported_version: u64,
    /// A partial submessage header, or `octetsToNextHeader` past the end of the datagram.
    pub bad_submessage_length: u64,
    /// Known submessages that failed validation, by kind.
    pub invalid: InvalidCounts,
    /// Submessages with an unknown standard id (0x00–0x7f), skipped.
    pub unknown_skipped: u64,
    /// Vendor-specific submessages (0x80–0xff), skipped.
    pub vendor_skipped: u64,
}

impl ReceiveStats {
    /// Every count of malformed input (header, framing and invalid submessages). Skipped
    /// unknown and vendor submessages are not malformed.
    pub fn malformed(&self) -> u64 {
        [
            self.truncated_header,
            self.bad_magic,
            self.unsupported_version,
            self.bad_submessage_length,
            self.invalid.total(),
        ]
        .iter()
        .fold(0u64, |a, b| a.saturating_add(*b))
    }
}

fn bump(counter: &mut u64) {
    *counter = counter.saturating_add(1);
}

/// Parses one RTPS message and calls `out` for every valid submessage, in order, after
/// applying it to the receiver state (so an INFO_TS is delivered with the new timestamp).
///
/// # Errors
/// The reason the message, or its remainder, was dropped; already counted in `stats`.
/// Submessages before the failure point have been delivered.
pub fn parse_message(
    datagram: &[u8],
    stats: &mut ReceiveStats,
    mut out: impl FnMut(ReceivedSubmessage<'_>),
) -> Result<(), ParseError> {
    bump(&mut stats.datagrams);
    let header = match HeaderRepr::parse(datagram) {
        Ok(h) => h,
        Err(e) => {
            bump(match e {
                ParseError::Truncated => &mut stats.truncated_header,
                ParseError::Malformed => &mut stats.bad_magic,
                ParseError::Unsupported => &mut stats.unsupported_version,
            });
            return Err(e);
        }
    };
    let mut state = ReceiverState::new(&header);
    let mut rest = datagram.get(HeaderRepr::LEN..).unwrap_or(&[]);
    // Each iteration consumes at least the 4-byte submessage header.
    while !rest.is_empty() {
        let sh = SubmessageHeader::parse(rest).inspect_err(|_| {
            bump(&mut stats.bad_submessage_length);
        })?;
        let after_header = rest.get(SubmessageHeader::LEN..).unwrap_or(&[]);
        let body_len = sh.body_len(after_header.len()).inspect_err(|_| {
            bump(&mut stats.bad_submessage_length);
        })?;
        let (body, next) = after_header.split_at_checked(body_len).ok_or_else(|| {
            bump(&mut stats.bad_submessage_length);
            ParseError::Malformed
        })?;
        rest = next;
        match Submessage::parse(&sh, body) {
            Ok(Some(sm)) => {
                state.apply(&sm);
                bump(&mut stats.submessages);
                out(ReceivedSubmessage {
                    receiver: &state,
                    submessage: &sm,
                });
            }
            Ok(None) if sh.id.is_vendor_specific() => bump(&mut stats.vendor_skipped),
            Ok(None) => bump(&mut stats.unknown_skipped),
            Err(e) => {
                stats.invalid.bump(sh.id);
                return Err(e);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
