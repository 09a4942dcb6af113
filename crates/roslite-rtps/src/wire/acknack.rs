//! ACKNACK: a reader acknowledges and requests sequence numbers (RTPS 2.5 §8.3.8.1,
//! §9.4.5.2).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, put_i32, Reader};
use crate::error::ParseError;
use crate::types::{Count, EntityId, SequenceNumberSet};

/// F: the writer need not answer with a HEARTBEAT.
pub const FLAG_F: u8 = 0x02;

/// An ACKNACK submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// | ACKNACK 0x06  |X|X|X|X|X|X|F|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId readerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId writerId                       |
/// +---------------+---------------+---------------+---------------+
/// ~               SequenceNumberSet readerSNState                 ~
/// +---------------+---------------+---------------+---------------+
/// |                          Count count                          |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// `readerSNState.base − 1` is acknowledged; set members are requested again. Fast DDS sends
/// *pre-emptive* ACKNACKs with `bitmapBase = 0, numBits = 0` (invalid per §8.3.5.5; 49 of them
/// in the reference captures). They are accepted and keep base 0; see
/// [`crate::quirks::is_preemptive_acknack`]. Consumers must still clamp the acknowledged
/// sequence number to what the writer has sent (docs/robustness.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub reader_sn_state: SequenceNumberSet,
    pub count: Count,
    pub final_flag: bool,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if the body ends early; [`ParseError::Malformed`] for an
    /// invalid `readerSNState` (RTPS 2.5 §8.3.8.1.3).
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let reader_sn_state = SequenceNumberSet::read(&mut r, true)?;
        let count = Count(r.i32()?);
        Ok(Repr {
            reader_id,
            writer_id,
            reader_sn_state,
            count,
            final_flag: flags & FLAG_F != 0,
        })
    }

    pub fn flags(&self) -> u8 {
        if self.final_flag {
            FLAG_F
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        self.reader_sn_state.wire_len().saturating_add(12)
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::ACKNACK, self.flags(), self.body_len(), e);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.reader_sn_state.write(buf, e);
        put_i32(buf, e, self.count.0);
    }
}
