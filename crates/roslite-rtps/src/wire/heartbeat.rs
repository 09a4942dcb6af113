//! HEARTBEAT: a writer announces which sequence numbers it has (RTPS 2.5 §8.3.8.5, §9.4.5.6).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, put_i32, Reader};
use crate::error::ParseError;
use crate::types::{Count, EntityId, SequenceNumber};

/// F: the reader need not answer with an ACKNACK.
pub const FLAG_F: u8 = 0x02;
/// L: the writer asserts its liveliness.
pub const FLAG_L: u8 = 0x04;

const BODY_LEN: usize = 28;

/// A HEARTBEAT submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |HEARTBEAT 0x07 |X|X|X|X|G|L|F|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId readerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId writerId                       |
/// +---------------+---------------+---------------+---------------+
/// +                   SequenceNumber firstSN  (8 octets)          +
/// +---------------+---------------+---------------+---------------+
/// +                   SequenceNumber lastSN   (8 octets)          +
/// +---------------+---------------+---------------+---------------+
/// |                          Count count                          |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// `first_sn ..= last_sn` is an interval; `last_sn = first_sn − 1` means "nothing available"
/// (Cyclone and Fast DDS both send 1/0 for an empty writer). The RTPS 2.5 group-info fields
/// (G flag) that may follow `count` are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub first_sn: SequenceNumber,
    pub last_sn: SequenceNumber,
    pub count: Count,
    pub final_flag: bool,
    pub liveliness_flag: bool,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if shorter than 28 bytes; [`ParseError::Malformed`] per
    /// RTPS 2.5 §8.3.8.5.3: `firstSN ≤ 0`, `lastSN < 0` or `lastSN < firstSN − 1`. A huge
    /// `lastSN` is valid; consumers must treat the range as an interval.
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let first_sn = SequenceNumber::read(&mut r)?;
        let last_sn = SequenceNumber::read(&mut r)?;
        let count = Count(r.i32()?);
        // Checked left to right: firstSN ≥ 1 before firstSN − 1 is computed.
        if first_sn.0 < 1 || last_sn.0 < 0 || last_sn.0 < first_sn.0.saturating_sub(1) {
            return Err(ParseError::Malformed);
        }
        Ok(Repr {
            reader_id,
            writer_id,
            first_sn,
            last_sn,
            count,
            final_flag: flags & FLAG_F != 0,
            liveliness_flag: flags & FLAG_L != 0,
        })
    }

    pub fn flags(&self) -> u8 {
        (if self.final_flag { FLAG_F } else { 0 }) | (if self.liveliness_flag { FLAG_L } else { 0 })
    }

    pub fn buffer_len(&self) -> usize {
        BODY_LEN + 4
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::HEARTBEAT, self.flags(), BODY_LEN, e);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.first_sn.write(buf, e);
        self.last_sn.write(buf, e);
        put_i32(buf, e, self.count.0);
    }
}
