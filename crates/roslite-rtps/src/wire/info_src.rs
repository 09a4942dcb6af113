//! INFO_SRC: the participant that sent the following submessages (RTPS 2.5 §8.3.8.9,
//! §9.4.5.10).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, Reader};
use crate::error::ParseError;
use crate::types::{GuidPrefix, ProtocolVersion, VendorId};

/// An INFO_SRC submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// | INFO_SRC 0x0c |X|X|X|X|X|X|X|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                         long unused                           |
/// +---------------+---------------+---------------+---------------+
/// | ProtocolVersion version       | VendorId vendorId             |
/// +---------------+---------------+---------------+---------------+
/// |                                                               |
/// +                     GuidPrefix guidPrefix                     +
/// |                                                               |
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub version: ProtocolVersion,
    pub vendor_id: VendorId,
    pub guid_prefix: GuidPrefix,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if shorter than 20 bytes; [`ParseError::Unsupported`] for a
    /// major version other than 2 (the same rule as the message header).
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        r.skip(4)?;
        let [major, minor] = r.array()?;
        let vendor_id = VendorId(r.array()?);
        let guid_prefix = GuidPrefix(r.array()?);
        if major != 2 {
            return Err(ParseError::Unsupported);
        }
        Ok(Repr {
            version: ProtocolVersion { major, minor },
            vendor_id,
            guid_prefix,
        })
    }

    pub fn buffer_len(&self) -> usize {
        24
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::INFO_SRC, 0, 20, e);
        buf.extend_from_slice(&[0; 4]);
        buf.extend_from_slice(&[self.version.major, self.version.minor]);
        buf.extend_from_slice(&self.vendor_id.0);
        buf.extend_from_slice(&self.guid_prefix.0);
    }
}
