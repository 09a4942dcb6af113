//! GAP: sequence numbers that will never be sent (RTPS 2.5 §8.3.8.4, §9.4.5.5).

use std::ops::Range;

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, Reader};
use crate::error::ParseError;
use crate::types::{EntityId, SequenceNumber, SequenceNumberSet};

/// A GAP submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |   GAP 0x08    |X|X|X|X|X|F|G|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId readerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId writerId                       |
/// +---------------+---------------+---------------+---------------+
/// +                  SequenceNumber gapStart (8 octets)           +
/// +---------------+---------------+---------------+---------------+
/// ~                  SequenceNumberSet gapList                    ~
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// Irrelevant: `gapStart .. gapList.base` (an interval, possibly of 2^40 numbers: never
/// iterate it, CVE-2025-64438) plus the members of `gapList`. The RTPS 2.5 group-info and
/// filtered-count fields (G and F flags) are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub gap_start: SequenceNumber,
    pub gap_list: SequenceNumberSet,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if the body ends early; [`ParseError::Malformed`] per
    /// RTPS 2.5 §8.3.8.4.3 if `gapStart ≤ 0` or `gapList` is invalid. `gapStart > gapList.base`
    /// is accepted as an empty interval (Cyclone treats it the same way).
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let gap_start = SequenceNumber::read(&mut r)?;
        let gap_list = SequenceNumberSet::read(&mut r, false)?;
        if !gap_start.is_valid_sample() {
            return Err(ParseError::Malformed);
        }
        Ok(Repr {
            reader_id,
            writer_id,
            gap_start,
            gap_list,
        })
    }

    /// The contiguous irrelevant interval `gapStart .. gapList.base` (empty if reversed).
    pub fn irrelevant_range(&self) -> Range<SequenceNumber> {
        self.gap_start..self.gap_list.base().max(self.gap_start)
    }

    fn body_len(&self) -> usize {
        self.gap_list.wire_len().saturating_add(16)
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::GAP, 0, self.body_len(), e);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.gap_start.write(buf, e);
        self.gap_list.write(buf, e);
    }
}
