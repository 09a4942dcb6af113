//! NACK_FRAG: a reader requests missing fragments of one sample (RTPS 2.5 §8.3.8.12,
//! §9.4.5.13).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, put_i32, Reader};
use crate::error::ParseError;
use crate::types::{Count, EntityId, FragmentNumberSet, SequenceNumber};

/// A NACK_FRAG submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |NACK_FRAG 0x12 |X|X|X|X|X|X|X|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId readerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId writerId                       |
/// +---------------+---------------+---------------+---------------+
/// +                   SequenceNumber writerSN (8 octets)          +
/// +---------------+---------------+---------------+---------------+
/// ~             FragmentNumberSet fragmentNumberState             ~
/// +---------------+---------------+---------------+---------------+
/// |                          Count count                          |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// A remote reader may name fragments that do not exist; the writer must ignore those rather
/// than assert (Cyclone `ddsi_transmit.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub writer_sn: SequenceNumber,
    pub fragment_number_state: FragmentNumberSet,
    pub count: Count,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if the body ends early; [`ParseError::Malformed`] per
    /// RTPS 2.5 §8.3.8.12.3 if `writerSN ≤ 0` or the fragment set is invalid.
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let writer_sn = SequenceNumber::read(&mut r)?;
        let fragment_number_state = FragmentNumberSet::read(&mut r)?;
        let count = Count(r.i32()?);
        if !writer_sn.is_valid_sample() {
            return Err(ParseError::Malformed);
        }
        Ok(Repr {
            reader_id,
            writer_id,
            writer_sn,
            fragment_number_state,
            count,
        })
    }

    fn body_len(&self) -> usize {
        self.fragment_number_state.wire_len().saturating_add(20)
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::NACK_FRAG, 0, self.body_len(), e);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.writer_sn.write(buf, e);
        self.fragment_number_state.write(buf, e);
        put_i32(buf, e, self.count.0);
    }
}
