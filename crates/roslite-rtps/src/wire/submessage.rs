//! The submessage header and submessage ids (RTPS 2.5 §8.3.3.2, §9.4.5.1).

use std::fmt;

use roslite_cdr::Endianness;

use crate::bytes::{endianness_of, put_u16, Reader};
use crate::error::ParseError;

/// A submessage kind. Unknown ids are preserved so the receiver can skip and count them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubmessageId(pub u8);

impl SubmessageId {
    // RTPS 2.5 §9.4.5.1.1 (DDS-Security 1.1 §7.3.6 for SEC_*/SRTPS_*).
    pub const PAD: SubmessageId = SubmessageId(0x01);
    pub const ACKNACK: SubmessageId = SubmessageId(0x06);
    pub const HEARTBEAT: SubmessageId = SubmessageId(0x07);
    pub const GAP: SubmessageId = SubmessageId(0x08);
    pub const INFO_TS: SubmessageId = SubmessageId(0x09);
    pub const INFO_SRC: SubmessageId = SubmessageId(0x0c);
    pub const INFO_REPLY_IP4: SubmessageId = SubmessageId(0x0d);
    pub const INFO_DST: SubmessageId = SubmessageId(0x0e);
    pub const INFO_REPLY: SubmessageId = SubmessageId(0x0f);
    pub const NACK_FRAG: SubmessageId = SubmessageId(0x12);
    pub const HEARTBEAT_FRAG: SubmessageId = SubmessageId(0x13);
    pub const DATA: SubmessageId = SubmessageId(0x15);
    pub const DATA_FRAG: SubmessageId = SubmessageId(0x16);
    pub const SEC_BODY: SubmessageId = SubmessageId(0x30);
    pub const SEC_PREFIX: SubmessageId = SubmessageId(0x31);
    pub const SEC_POSTFIX: SubmessageId = SubmessageId(0x32);
    pub const SRTPS_PREFIX: SubmessageId = SubmessageId(0x33);
    pub const SRTPS_POSTFIX: SubmessageId = SubmessageId(0x34);

    /// RTPS 2.5 §9.4.5.1.1: ids 0x80–0xff are vendor-specific; "the meaning is determined
    /// by the vendorId" of the message. Fast DDS 3 appends a 0x80 submessage to nearly every
    /// datagram (all 624 RTPS datagrams in the reference captures that came from Fast DDS).
    pub fn is_vendor_specific(self) -> bool {
        self.0 >= 0x80
    }

    /// RTPS 2.5 §9.4.5.1.3: for these two kinds `octetsToNextHeader == 0` is an ordinary
    /// zero-length body, not "extends to the end of the message".
    pub fn zero_length_is_literal(self) -> bool {
        self == Self::PAD || self == Self::INFO_TS
    }
}

impl fmt::Display for SubmessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            Self::PAD => "PAD",
            Self::ACKNACK => "ACKNACK",
            Self::HEARTBEAT => "HEARTBEAT",
            Self::GAP => "GAP",
            Self::INFO_TS => "INFO_TS",
            Self::INFO_SRC => "INFO_SRC",
            Self::INFO_REPLY_IP4 => "INFO_REPLY_IP4",
            Self::INFO_DST => "INFO_DST",
            Self::INFO_REPLY => "INFO_REPLY",
            Self::NACK_FRAG => "NACK_FRAG",
            Self::HEARTBEAT_FRAG => "HEARTBEAT_FRAG",
            Self::DATA => "DATA",
            Self::DATA_FRAG => "DATA_FRAG",
            _ => return write!(f, "submessage 0x{:02x}", self.0),
        };
        f.write_str(name)
    }
}

/// The 4-byte header in front of every submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// | submessageId  |X|X|X|X|X|X|X|E|   ushort octetsToNextHeader   |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// E (bit 0 of the flags) selects the byte order of `octetsToNextHeader` and of the whole
/// body; it may differ between submessages of one message. The other flags are defined per
/// submessage kind; unknown flags are ignored (RTPS 2.5 §8.3.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SubmessageHeader {
    pub id: SubmessageId,
    pub flags: u8,
    pub octets_to_next_header: u16,
}

impl SubmessageHeader {
    pub const LEN: usize = 4;

    /// Parses the header at the start of `bytes`.
    ///
    /// # Errors
    /// [`ParseError::Truncated`] if fewer than 4 bytes remain ("a partial submessage header
    /// invalidates the rest of the message").
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(bytes, Endianness::Big);
        let id = SubmessageId(r.u8()?);
        let flags = r.u8()?;
        let mut r = Reader::new(r.rest(), endianness_of(flags));
        Ok(SubmessageHeader {
            id,
            flags,
            octets_to_next_header: r.u16()?,
        })
    }

    /// A header for a body of `body_len` bytes. A body longer than 65535 bytes is encoded as
    /// `octetsToNextHeader = 0` (RTPS 2.5 §9.4.5.1.3), which is only valid for the last
    /// submessage of a message; [`MessageBuilder`](crate::MessageBuilder) ensures that.
    pub fn for_body(id: SubmessageId, flags: u8, body_len: usize) -> Self {
        let octets_to_next_header = u16::try_from(body_len).unwrap_or(0);
        debug_assert!(
            body_len <= usize::from(u16::MAX) || !id.zero_length_is_literal(),
            "internal bug: a {id} body over 64 KiB cannot be encoded"
        );
        SubmessageHeader {
            id,
            flags,
            octets_to_next_header,
        }
    }

    pub fn endianness(&self) -> Endianness {
        endianness_of(self.flags)
    }

    /// The length of the body, given `available` bytes after this header in the message.
    ///
    /// # Errors
    /// [`ParseError::Malformed`] if `octetsToNextHeader` points past the end of the message.
    pub fn body_len(&self, available: usize) -> Result<usize, ParseError> {
        let len = usize::from(self.octets_to_next_header);
        if len == 0 && !self.id.zero_length_is_literal() {
            // RTPS 2.5 §9.4.5.1.3: "the Submessage is the last Submessage in the Message and
            // extends up to the end of the Message".
            Ok(available)
        } else if len > available {
            Err(ParseError::Malformed)
        } else {
            Ok(len)
        }
    }

    pub fn emit(&self, buf: &mut Vec<u8>) {
        buf.push(self.id.0);
        buf.push(self.flags);
        put_u16(buf, self.endianness(), self.octets_to_next_header);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_both_endiannesses() {
        let le = SubmessageHeader::parse(&[0x15, 0x05, 0x40, 0x01]).unwrap();
        assert_eq!(le.id, SubmessageId::DATA);
        assert_eq!(le.octets_to_next_header, 0x0140);
        assert_eq!(le.endianness(), Endianness::Little);
        let be = SubmessageHeader::parse(&[0x15, 0x04, 0x01, 0x40]).unwrap();
        assert_eq!(be.octets_to_next_header, 0x0140);
        assert_eq!(
            SubmessageHeader::parse(&[0x15, 0x05, 0x40]),
            Err(ParseError::Truncated)
        );
        let mut b = Vec::new();
        le.emit(&mut b);
        assert_eq!(b, [0x15, 0x05, 0x40, 0x01]);
    }

    #[test]
    fn zero_length_rule() {
        let data = SubmessageHeader::for_body(SubmessageId::DATA, 1, 0x1_0000);
        assert_eq!(data.octets_to_next_header, 0);
        assert_eq!(data.body_len(100), Ok(100));
        let pad = SubmessageHeader::for_body(SubmessageId::PAD, 1, 0);
        assert_eq!(pad.body_len(100), Ok(0));
        let ts = SubmessageHeader::for_body(SubmessageId::INFO_TS, 3, 0);
        assert_eq!(ts.body_len(100), Ok(0));
        let hb = SubmessageHeader::for_body(SubmessageId::HEARTBEAT, 1, 28);
        assert_eq!(hb.body_len(27), Err(ParseError::Malformed));
        assert_eq!(hb.body_len(28), Ok(28));
        assert!(SubmessageId(0x80).is_vendor_specific());
        assert_eq!(SubmessageId(0x42).to_string(), "submessage 0x42");
    }
}
