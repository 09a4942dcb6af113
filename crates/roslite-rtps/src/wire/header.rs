//! The RTPS message header (RTPS 2.5 §8.3.3, §9.4.4).

use crate::bytes::Reader;
use crate::error::ParseError;
use crate::types::{GuidPrefix, ProtocolVersion, VendorId};

/// The fixed 20-byte header that starts every RTPS message.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |      'R'      |      'T'      |      'P'      |      'S'      |
/// +---------------+---------------+---------------+---------------+
/// | ProtocolVersion version       | VendorId vendorId             |
/// +---------------+---------------+---------------+---------------+
/// |                                                               |
/// +                                                               +
/// |                     GuidPrefix guidPrefix                     |
/// +                                                               +
/// |                                                               |
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// The header has no endianness: every field is a byte array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    pub version: ProtocolVersion,
    pub vendor_id: VendorId,
    pub guid_prefix: GuidPrefix,
}

impl Repr {
    pub const LEN: usize = 20;
    pub const MAGIC: [u8; 4] = *b"RTPS";

    /// A header for messages sent by this implementation.
    pub fn new(guid_prefix: GuidPrefix) -> Self {
        Repr {
            version: ProtocolVersion::CURRENT,
            vendor_id: VendorId::ROSLITE,
            guid_prefix,
        }
    }

    /// Parses and validates the header at the start of `message`.
    ///
    /// # Errors
    /// - [`ParseError::Truncated`]: fewer than 20 bytes.
    /// - [`ParseError::Malformed`]: the magic is not `RTPS`.
    /// - [`ParseError::Unsupported`]: major version ≠ 2. RTPS 2.5 §8.3.6.3: a message whose
    ///   major version is greater than ours is invalid; major 1 is a different wire format.
    ///   Any 2.x minor is accepted (Fast DDS sends 2.2, Cyclone 2.5).
    pub fn parse(message: &[u8]) -> Result<Self, ParseError> {
        // The header is byte-oriented, so the cursor's endianness is irrelevant.
        let mut r = Reader::new(message, roslite_cdr::Endianness::Big);
        let magic: [u8; 4] = r.array()?;
        let [major, minor] = r.array()?;
        let vendor_id = VendorId(r.array()?);
        let guid_prefix = GuidPrefix(r.array()?);
        if magic != Self::MAGIC {
            return Err(ParseError::Malformed);
        }
        if major != 2 {
            return Err(ParseError::Unsupported);
        }
        Ok(Repr {
            version: ProtocolVersion { major, minor },
            vendor_id,
            guid_prefix,
        })
    }

    pub fn emit(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&Self::MAGIC);
        buf.extend_from_slice(&[self.version.major, self.version.minor]);
        buf.extend_from_slice(&self.vendor_id.0);
        buf.extend_from_slice(&self.guid_prefix.0);
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_validation() {
        let h = Repr {
            version: ProtocolVersion::V2_2,
            vendor_id: VendorId::EPROSIMA,
            guid_prefix: GuidPrefix([1; 12]),
        };
        let mut b = Vec::new();
        h.emit(&mut b);
        assert_eq!(b.len(), h.buffer_len());
        assert_eq!(Repr::parse(&b), Ok(h));
        assert_eq!(
            Repr::parse(b.get(..19).unwrap()),
            Err(ParseError::Truncated)
        );
        let mut bad = b.clone();
        bad[0] = b'X';
        assert_eq!(Repr::parse(&bad), Err(ParseError::Malformed));
        let mut v3 = b.clone();
        v3[4] = 3;
        assert_eq!(Repr::parse(&v3), Err(ParseError::Unsupported));
        let mut v1 = b;
        v1[4] = 1;
        assert_eq!(Repr::parse(&v1), Err(ParseError::Unsupported));
        assert_eq!(Repr::new(GuidPrefix::UNKNOWN).vendor_id, VendorId::ROSLITE);
    }
}
