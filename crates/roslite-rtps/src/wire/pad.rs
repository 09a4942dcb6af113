//! PAD: filler for alignment (RTPS 2.5 §8.3.8.11, §9.4.5.12).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::error::ParseError;

/// A PAD submessage; its body has no meaning.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |   PAD 0x01    |X|X|X|X|X|X|X|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// ~                 octet padding[octetsToNextHeader]             ~
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// `octetsToNextHeader = 0` is a literal empty body here (RTPS 2.5 §9.4.5.1.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Body length in bytes (at most 65535).
    pub len: u16,
}

impl Repr {
    /// Never fails: any body is valid padding.
    ///
    /// # Errors
    /// None; the `Result` keeps the signature uniform with the other kinds.
    pub fn parse(body: &[u8], _flags: u8) -> Result<Self, ParseError> {
        Ok(Repr {
            len: u16::try_from(body.len()).unwrap_or(u16::MAX),
        })
    }

    pub fn buffer_len(&self) -> usize {
        usize::from(self.len).saturating_add(4)
    }

    /// Appends the submessage with a zero-filled body.
    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::PAD, 0, usize::from(self.len), e);
        buf.resize(buf.len().saturating_add(usize::from(self.len)), 0);
    }
}
