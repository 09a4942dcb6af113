//! HEARTBEAT_FRAG: which fragments of a sample a writer has (RTPS 2.5 §8.3.8.6, §9.4.5.7).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, put_i32, put_u32, Reader};
use crate::error::ParseError;
use crate::types::{Count, EntityId, FragmentNumber, SequenceNumber};

const BODY_LEN: usize = 24;

/// A HEARTBEAT_FRAG submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |HB_FRAG 0x13   |X|X|X|X|X|X|X|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId readerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId writerId                       |
/// +---------------+---------------+---------------+---------------+
/// +                   SequenceNumber writerSN (8 octets)          +
/// +---------------+---------------+---------------+---------------+
/// |                FragmentNumber lastFragmentNum                 |
/// +---------------+---------------+---------------+---------------+
/// |                          Count count                          |
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub writer_sn: SequenceNumber,
    pub last_fragment_num: FragmentNumber,
    pub count: Count,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if shorter than 24 bytes; [`ParseError::Malformed`] per
    /// RTPS 2.5 §8.3.8.6.3 if `writerSN ≤ 0` or `lastFragmentNum = 0`.
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let writer_sn = SequenceNumber::read(&mut r)?;
        let last_fragment_num = FragmentNumber(r.u32()?);
        let count = Count(r.i32()?);
        if !writer_sn.is_valid_sample() || last_fragment_num.0 == 0 {
            return Err(ParseError::Malformed);
        }
        Ok(Repr {
            reader_id,
            writer_id,
            writer_sn,
            last_fragment_num,
            count,
        })
    }

    pub fn buffer_len(&self) -> usize {
        BODY_LEN + 4
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::HEARTBEAT_FRAG, 0, BODY_LEN, e);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.writer_sn.write(buf, e);
        put_u32(buf, e, self.last_fragment_num.0);
        put_i32(buf, e, self.count.0);
    }
}
