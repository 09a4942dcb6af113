//! INFO_DST: the participant the following submessages are for (RTPS 2.5 §8.3.8.7,
//! §9.4.5.8).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, Reader};
use crate::error::ParseError;
use crate::types::GuidPrefix;

/// An INFO_DST submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// | INFO_DST 0x0e |X|X|X|X|X|X|X|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                                                               |
/// +                     GuidPrefix guidPrefix                     +
/// |                                                               |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// `GUIDPREFIX_UNKNOWN` addresses every participant; Cyclone sends it in front of SPDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub guid_prefix: GuidPrefix,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if shorter than 12 bytes.
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        Ok(Repr {
            guid_prefix: GuidPrefix(r.array()?),
        })
    }

    pub fn buffer_len(&self) -> usize {
        16
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::INFO_DST, 0, 12, e);
        buf.extend_from_slice(&self.guid_prefix.0);
    }
}
