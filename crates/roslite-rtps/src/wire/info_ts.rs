//! INFO_TS: source timestamp for the following submessages (RTPS 2.5 §8.3.8.10, §9.4.5.11).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, Reader};
use crate::error::ParseError;
use crate::types::Time;

/// I: invalidate; no timestamp follows and the receiver forgets the current one.
pub const FLAG_I: u8 = 0x02;

/// An INFO_TS submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// | INFO_TS 0x09  |X|X|X|X|X|X|I|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// +            Time timestamp (8 octets)  [only if I == 0]        +
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// `octetsToNextHeader = 0` is a literal empty body here (RTPS 2.5 §9.4.5.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    /// `None` when the I flag is set.
    pub timestamp: Option<Time>,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if I is clear and fewer than 8 bytes follow;
    /// [`ParseError::Malformed`] for `TIME_INVALID` (as Cyclone's `validate_InfoTS`).
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        if flags & FLAG_I != 0 {
            return Ok(Repr { timestamp: None });
        }
        let t = Time::read(&mut Reader::new(body, endianness_of(flags)))?;
        if t == Time::INVALID {
            return Err(ParseError::Malformed);
        }
        Ok(Repr { timestamp: Some(t) })
    }

    pub fn flags(&self) -> u8 {
        if self.timestamp.is_none() {
            FLAG_I
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        if self.timestamp.is_some() {
            8
        } else {
            0
        }
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::INFO_TS, self.flags(), self.body_len(), e);
        if let Some(t) = self.timestamp {
            t.write(buf, e);
        }
    }
}
