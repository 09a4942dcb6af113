//! Wire formats: the RTPS header, the submessage header and every submessage kind.
//!
//! Each submessage kind lives in its own module with a `Repr`:
//!
//! - `Repr::parse(body, flags)` validates the body (the bytes after the 4-byte submessage
//!   header, as delimited by `octetsToNextHeader`) against the validity rules of
//!   RTPS 2.5 §8.3.7–§8.3.8 and docs/robustness.md §1. The E flag in `flags` selects the
//!   byte order. Flags the kind does not define are ignored. Bytes after the fields a kind
//!   defines are ignored too (RTPS 2.5 §8.3.4.1: a submessage may be extended in later
//!   minor versions).
//! - `Repr::emit(&self, buf, endianness)` appends the submessage header and body, padded to a
//!   multiple of 4 so the next submessage starts aligned (RTPS 2.5 §9.4.1).
//! - `Repr::buffer_len()` is what `emit` appends.
//!
//! A `Repr` does not record its byte order, so one value can be emitted in either order and
//! compares equal to what either order parses back to. Payload-carrying reprs (DATA,
//! DATA_FRAG) borrow the received datagram.

pub mod acknack;
pub mod data;
pub mod data_frag;
pub mod gap;
pub mod header;
pub mod heartbeat;
pub mod heartbeat_frag;
pub mod info_dst;
pub mod info_reply;
pub mod info_src;
pub mod info_ts;
pub mod nack_frag;
pub mod pad;
mod submessage;

use roslite_cdr::Endianness;

pub use acknack::Repr as AckNackRepr;
pub use data::{PayloadKind, Repr as DataRepr, SerializedPayload};
pub use data_frag::Repr as DataFragRepr;
pub use gap::Repr as GapRepr;
pub use header::Repr as HeaderRepr;
pub use heartbeat::Repr as HeartbeatRepr;
pub use heartbeat_frag::Repr as HeartbeatFragRepr;
pub use info_dst::Repr as InfoDstRepr;
pub use info_reply::Repr as InfoReplyRepr;
pub use info_src::Repr as InfoSrcRepr;
pub use info_ts::Repr as InfoTsRepr;
pub use nack_frag::Repr as NackFragRepr;
pub use pad::Repr as PadRepr;
pub use submessage::{SubmessageHeader, SubmessageId};

use crate::error::ParseError;

pub use crate::bytes::FLAG_E;

/// Appends a submessage header for a body of `body_len` bytes.
pub(crate) fn emit_header(
    buf: &mut Vec<u8>,
    id: SubmessageId,
    flags: u8,
    body_len: usize,
    e: Endianness,
) {
    let flags = (flags & !FLAG_E) | crate::bytes::e_flag(e);
    SubmessageHeader::for_body(id, flags, body_len).emit(buf);
}

/// Any submessage kind this crate understands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Submessage<'a> {
    AckNack(AckNackRepr),
    Data(DataRepr<'a>),
    DataFrag(DataFragRepr<'a>),
    Gap(GapRepr),
    Heartbeat(HeartbeatRepr),
    HeartbeatFrag(HeartbeatFragRepr),
    InfoDst(InfoDstRepr),
    InfoReply(InfoReplyRepr),
    InfoSrc(InfoSrcRepr),
    InfoTs(InfoTsRepr),
    NackFrag(NackFragRepr),
    Pad(PadRepr),
}

impl<'a> Submessage<'a> {
    /// Parses a body of the kind named by `header`.
    ///
    /// Returns `Ok(None)` for ids this crate does not know (including vendor-specific
    /// 0x80–0xff and the security submessages), which the receiver skips.
    ///
    /// # Errors
    /// The error of the kind's `Repr::parse`: a known but invalid submessage.
    pub fn parse(header: &SubmessageHeader, body: &'a [u8]) -> Result<Option<Self>, ParseError> {
        let f = header.flags;
        Ok(Some(match header.id {
            SubmessageId::ACKNACK => Self::AckNack(AckNackRepr::parse(body, f)?),
            SubmessageId::DATA => Self::Data(DataRepr::parse(body, f)?),
            SubmessageId::DATA_FRAG => Self::DataFrag(DataFragRepr::parse(body, f)?),
            SubmessageId::GAP => Self::Gap(GapRepr::parse(body, f)?),
            SubmessageId::HEARTBEAT => Self::Heartbeat(HeartbeatRepr::parse(body, f)?),
            SubmessageId::HEARTBEAT_FRAG => Self::HeartbeatFrag(HeartbeatFragRepr::parse(body, f)?),
            SubmessageId::INFO_DST => Self::InfoDst(InfoDstRepr::parse(body, f)?),
            SubmessageId::INFO_REPLY => Self::InfoReply(InfoReplyRepr::parse(body, f)?),
            SubmessageId::INFO_SRC => Self::InfoSrc(InfoSrcRepr::parse(body, f)?),
            SubmessageId::INFO_TS => Self::InfoTs(InfoTsRepr::parse(body, f)?),
            SubmessageId::NACK_FRAG => Self::NackFrag(NackFragRepr::parse(body, f)?),
            SubmessageId::PAD => Self::Pad(PadRepr::parse(body, f)?),
            _ => return Ok(None),
        }))
    }

    pub fn id(&self) -> SubmessageId {
        match self {
            Self::AckNack(_) => SubmessageId::ACKNACK,
            Self::Data(_) => SubmessageId::DATA,
            Self::DataFrag(_) => SubmessageId::DATA_FRAG,
            Self::Gap(_) => SubmessageId::GAP,
            Self::Heartbeat(_) => SubmessageId::HEARTBEAT,
            Self::HeartbeatFrag(_) => SubmessageId::HEARTBEAT_FRAG,
            Self::InfoDst(_) => SubmessageId::INFO_DST,
            Self::InfoReply(_) => SubmessageId::INFO_REPLY,
            Self::InfoSrc(_) => SubmessageId::INFO_SRC,
            Self::InfoTs(_) => SubmessageId::INFO_TS,
            Self::NackFrag(_) => SubmessageId::NACK_FRAG,
            Self::Pad(_) => SubmessageId::PAD,
        }
    }

    /// Appends header and body in byte order `e`.
    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        match self {
            Self::AckNack(r) => r.emit(buf, e),
            Self::Data(r) => r.emit(buf, e),
            Self::DataFrag(r) => r.emit(buf, e),
            Self::Gap(r) => r.emit(buf, e),
            Self::Heartbeat(r) => r.emit(buf, e),
            Self::HeartbeatFrag(r) => r.emit(buf, e),
            Self::InfoDst(r) => r.emit(buf, e),
            Self::InfoReply(r) => r.emit(buf, e),
            Self::InfoSrc(r) => r.emit(buf, e),
            Self::InfoTs(r) => r.emit(buf, e),
            Self::NackFrag(r) => r.emit(buf, e),
            Self::Pad(r) => r.emit(buf, e),
        }
    }

    /// Bytes `emit` appends, submessage header included.
    pub fn buffer_len(&self) -> usize {
        match self {
            Self::AckNack(r) => r.buffer_len(),
            Self::Data(r) => r.buffer_len(),
            Self::DataFrag(r) => r.buffer_len(),
            Self::Gap(r) => r.buffer_len(),
            Self::Heartbeat(r) => r.buffer_len(),
            Self::HeartbeatFrag(r) => r.buffer_len(),
            Self::InfoDst(r) => r.buffer_len(),
            Self::InfoReply(r) => r.buffer_len(),
            Self::InfoSrc(r) => r.buffer_len(),
            Self::InfoTs(r) => r.buffer_len(),
            Self::NackFrag(r) => r.buffer_len(),
            Self::Pad(r) => r.buffer_len(),
        }
    }
}
