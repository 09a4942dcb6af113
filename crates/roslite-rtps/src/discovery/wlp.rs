//! WLP, the Writer Liveliness Protocol (RTPS 2.5 §8.4.13): the `ParticipantMessageData` that
//! the builtin participant-message writer (`ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_WRITER`,
//! 0x000200c2) sends to the remote readers (0x000200c7).
//!
//! ```text
//! 0...2...........8...............16..............24..............32
//! | encapsulation (CDR_LE 0x0001 / CDR_BE 0x0000) | options       |
//! +---------------+---------------+---------------+---------------+
//! |                participantGuidPrefix (12 octets)              |
//! +---------------+---------------+---------------+---------------+
//! |                kind (octet[4]: 00 00 00 01 / 00 00 00 02)     |
//! +---------------+---------------+---------------+---------------+
//! |                data.length (unsigned long, in the payload's endianness)
//! +---------------+---------------+---------------+---------------+
//! ~                data (length octets)                           ~
//! ```
//!
//! RTPS 2.5 §9.6.2.1 defines two kinds: `PARTICIPANT_MESSAGE_DATA_KIND_AUTOMATIC_LIVELINESS_UPDATE`
//! (asserts every AUTOMATIC writer of the participant) and
//! `PARTICIPANT_MESSAGE_DATA_KIND_MANUAL_LIVELINESS_UPDATE` (asserts every
//! MANUAL_BY_PARTICIPANT writer). Kinds with the high bit set are vendor-specific; they are
//! accepted (not malformed) and ignored. The instance key is `participantGuidPrefix + kind`,
//! also sent as `PID_KEY_HASH`.
//!
//! Cyclone DDS sends an AUTOMATIC update with one octet of data (`00`) when a participant with
//! automatic writers of finite lease appears (see `tests/captures.rs`); Fast DDS sends them only
//! when such writers exist.

use roslite_cdr::Endianness;

use crate::bytes::Reader;
use crate::error::ParseError;
use crate::parameter_list::{pid, ParameterListWriter};
use crate::types::GuidPrefix;

/// `ParticipantMessageData.kind` (RTPS 2.5 §9.6.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParticipantMessageKind(pub [u8; 4]);

impl ParticipantMessageKind {
    pub const UNKNOWN: Self = Self([0, 0, 0, 0]);
    pub const AUTOMATIC_LIVELINESS_UPDATE: Self = Self([0, 0, 0, 1]);
    pub const MANUAL_LIVELINESS_UPDATE: Self = Self([0, 0, 0, 2]);

    /// Kinds with the high bit set belong to a vendor (RTPS 2.5 §9.6.2.1).
    pub const fn is_vendor_specific(self) -> bool {
        self.0[0] & 0x80 != 0
    }
}

/// Largest `data` accepted from the wire; both vendors send at most a few octets.
pub const MAX_DATA_LEN: usize = 1024;

/// A decoded `ParticipantMessageData`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParticipantMessageData {
    pub participant: GuidPrefix,
    pub kind: ParticipantMessageKind,
    pub data: Vec<u8>,
}

impl ParticipantMessageData {
    pub fn new(participant: GuidPrefix, kind: ParticipantMessageKind) -> Self {
        ParticipantMessageData {
            participant,
            kind,
            data: Vec::new(),
        }
    }

    /// Decodes a serialized payload (with its encapsulation header).
    ///
    /// # Errors
    /// [`ParseError::Truncated`] for a short payload or `data` longer than what follows,
    /// [`ParseError::Unsupported`] for an encapsulation other than CDR_BE/CDR_LE,
    /// [`ParseError::Malformed`] for `data` over [`MAX_DATA_LEN`].
    pub fn from_payload(payload: &[u8]) -> Result<Self, ParseError> {
        let endianness = match payload.get(..2) {
            Some([0x00, 0x00]) => Endianness::Big,
            Some([0x00, 0x01]) => Endianness::Little,
            Some(_) => return Err(ParseError::Unsupported),
            None => return Err(ParseError::Truncated),
        };
        let body = payload.get(4..).ok_or(ParseError::Truncated)?;
        let mut r = Reader::new(body, endianness);
        let participant = GuidPrefix(r.array::<12>()?);
        let kind = ParticipantMessageKind(r.array::<4>()?);
        let len = usize::try_from(r.u32()?).map_err(|_| ParseError::Malformed)?;
        if len > MAX_DATA_LEN {
            return Err(ParseError::Malformed);
        }
        let data = r.take(len)?.to_vec();
        Ok(ParticipantMessageData {
            participant,
            kind,
            data,
        })
    }

    /// The CDR_LE payload, encapsulation header included.
    pub fn to_payload(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24usize.saturating_add(self.data.len()));
        out.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
        out.extend_from_slice(&self.participant.0);
        out.extend_from_slice(&self.kind.0);
        let data = self.data.get(..MAX_DATA_LEN).unwrap_or(&self.data);
        let len = u32::try_from(data.len()).unwrap_or(0);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(data);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out
    }

    /// Inline QoS with the instance's `PID_KEY_HASH` (`participantGuidPrefix + kind`),
    /// little-endian, with sentinel.
    pub fn inline_qos(&self) -> Vec<u8> {
        let mut key = [0u8; 16];
        key[..12].copy_from_slice(&self.participant.0);
        key[12..].copy_from_slice(&self.kind.0);
        let mut buf = Vec::new();
        let mut w = ParameterListWriter::new(&mut buf, Endianness::Little);
        // A fixed 16-byte value: cannot exceed a parameter's length limit.
        let _ = w.raw(pid::KEY_HASH, &key);
        w.finish();
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_cyclone_layout() {
        let prefix = GuidPrefix([
            0x01, 0x10, 0x4a, 0x17, 0x7c, 0x0a, 0x00, 0x1c, 0x82, 0xfa, 0xc5, 0x2e,
        ]);
        // Cyclone 11's automatic update from the reference capture (frame 241).
        let mut cyclone = vec![0x00, 0x01, 0x00, 0x00];
        cyclone.extend_from_slice(&prefix.0);
        cyclone.extend_from_slice(&[0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
        let got = ParticipantMessageData::from_payload(&cyclone).unwrap();
        assert_eq!(got.participant, prefix);
        assert_eq!(
            got.kind,
            ParticipantMessageKind::AUTOMATIC_LIVELINESS_UPDATE
        );
        assert_eq!(got.data, vec![0]);

        let ours =
            ParticipantMessageData::new(prefix, ParticipantMessageKind::MANUAL_LIVELINESS_UPDATE);
        let payload = ours.to_payload();
        assert_eq!(payload.len(), 24);
        assert_eq!(ParticipantMessageData::from_payload(&payload), Ok(ours));
    }

    #[test]
    fn hostile_payloads_are_errors_not_panics() {
        assert_eq!(
            ParticipantMessageData::from_payload(&[0, 1]),
            Err(ParseError::Truncated)
        );
        assert_eq!(
            ParticipantMessageData::from_payload(&[0, 3, 0, 0]),
            Err(ParseError::Unsupported)
        );
        let mut huge = vec![0x00, 0x00, 0x00, 0x00];
        huge.extend_from_slice(&[7; 12]);
        huge.extend_from_slice(&[0x80, 0, 0, 9]);
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            ParticipantMessageData::from_payload(&huge),
            Err(ParseError::Malformed)
        );
        let n = huge.len();
        huge[n - 4..].copy_from_slice(&8u32.to_be_bytes());
        assert_eq!(
            ParticipantMessageData::from_payload(&huge),
            Err(ParseError::Truncated)
        );
        huge.extend_from_slice(&[1; 8]);
        let vendor = ParticipantMessageData::from_payload(&huge).unwrap();
        assert!(vendor.kind.is_vendor_specific());
    }
}
