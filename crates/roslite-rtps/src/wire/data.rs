//! DATA: one sample or its key from a writer (RTPS 2.5 §8.3.8.2, §9.4.5.3).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, pad4, pad4_from, put_u16, Reader};
use crate::error::ParseError;
use crate::parameter_list::ParameterList;
use crate::types::{EntityId, SequenceNumber};

/// Q: an inline QoS parameter list follows writerSN.
pub const FLAG_Q: u8 = 0x02;
/// D: the serialized payload is the sample's data.
pub const FLAG_D: u8 = 0x04;
/// K: the serialized payload is the sample's key.
pub const FLAG_K: u8 = 0x08;
/// N: the payload is not formatted per RTPS 2.5 §10 ("NonStandardPayloadFlag").
pub const FLAG_N: u8 = 0x10;

/// `octetsToInlineQos` counts from the byte after itself; the fields in between
/// (readerId, writerId, writerSN) take 16 bytes.
const OCTETS_TO_INLINE_QOS: u16 = 16;
/// extraFlags + octetsToInlineQos + readerId + writerId + writerSN.
const FIXED_LEN: usize = 20;

/// Whether the payload is the sample data (D) or its serialized key (K).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    Data,
    Key,
}

/// The serialized payload: a 4-byte encapsulation header and the encoded sample. It extends
/// to the end of the submessage, so it may include the sender's padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SerializedPayload<'a> {
    pub kind: PayloadKind,
    pub bytes: &'a [u8],
}

/// A DATA submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |   DATA 0x15   |X|X|X|N|K|D|Q|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |       Flags extraFlags        |   ushort octetsToInlineQos    |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId readerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                       EntityId writerId                       |
/// +---------------+---------------+---------------+---------------+
/// |                                                               |
/// +                   SequenceNumber writerSN                     +
/// |                                                               |
/// +---------------+---------------+---------------+---------------+
/// ~          ParameterList inlineQos  [only if Q == 1]            ~
/// +---------------+---------------+---------------+---------------+
/// ~  SerializedPayload serializedPayload  [only if D or K == 1]   ~
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// `reader_id` is often `ENTITYID_UNKNOWN` (all matched readers). A DATA with neither D nor K
/// carries only inline QoS: Fast DDS announces endpoint deletion this way (`PID_KEY_HASH` +
/// `PID_STATUS_INFO` = disposed|unregistered, seen in the talker/listener capture).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr<'a> {
    pub extra_flags: u16,
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub writer_sn: SequenceNumber,
    /// Must be in the byte order the submessage is emitted with.
    pub inline_qos: Option<ParameterList<'a>>,
    pub payload: Option<SerializedPayload<'a>>,
    pub non_standard_payload: bool,
}

impl<'a> Repr<'a> {
    /// Parses a DATA body.
    ///
    /// # Errors
    /// - [`ParseError::Truncated`]: shorter than the fixed fields.
    /// - [`ParseError::Malformed`] (RTPS 2.5 §8.3.8.2.3 and docs/robustness.md §1): writerSN not
    ///   strictly positive (SEQUENCENUMBER_UNKNOWN included); D and K both set;
    ///   `octetsToInlineQos` below 16, not a multiple of 4 or pointing past the body when
    ///   inline QoS or payload follow; an invalid inline QoS list; a payload too short for its
    ///   4-byte encapsulation header.
    pub fn parse(body: &'a [u8], flags: u8) -> Result<Self, ParseError> {
        let e = endianness_of(flags);
        let mut r = Reader::new(body, e);
        let extra_flags = r.u16()?;
        let octets_to_inline_qos = r.u16()?;
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let writer_sn = SequenceNumber::read(&mut r)?;
        if !writer_sn.is_valid_sample() {
            return Err(ParseError::Malformed);
        }
        let has_qos = flags & FLAG_Q != 0;
        let kind = match (flags & FLAG_D != 0, flags & FLAG_K != 0) {
            (true, true) => return Err(ParseError::Malformed),
            (true, false) => Some(PayloadKind::Data),
            (false, true) => Some(PayloadKind::Key),
            (false, false) => None,
        };
        let mut repr = Repr {
            extra_flags,
            reader_id,
            writer_id,
            writer_sn,
            inline_qos: None,
            payload: None,
            non_standard_payload: flags & FLAG_N != 0,
        };
        if !has_qos && kind.is_none() {
            // Nothing follows writerSN, so octetsToInlineQos is never used.
            return Ok(repr);
        }
        let mut rest =
            after_octets_to_inline_qos(body, octets_to_inline_qos, OCTETS_TO_INLINE_QOS)?;
        if has_qos {
            let (qos, used) = ParameterList::parse_prefix(rest, e)?;
            repr.inline_qos = Some(qos);
            rest = rest.get(used..).ok_or(ParseError::Malformed)?;
        }
        if let Some(kind) = kind {
            // The payload starts with the 4-byte encapsulation header (RTPS 2.5 §10).
            if rest.len() < 4 {
                return Err(ParseError::Malformed);
            }
            repr.payload = Some(SerializedPayload { kind, bytes: rest });
        }
        Ok(repr)
    }

    /// The flags this repr is emitted with, E excluded.
    pub fn flags(&self) -> u8 {
        let mut flags = 0;
        if self.inline_qos.is_some() {
            flags |= FLAG_Q;
        }
        match self.payload.map(|p| p.kind) {
            Some(PayloadKind::Data) => flags |= FLAG_D,
            Some(PayloadKind::Key) => flags |= FLAG_K,
            None => {}
        }
        if self.non_standard_payload {
            flags |= FLAG_N;
        }
        flags
    }

    fn body_len(&self) -> usize {
        let qos = self.inline_qos.map_or(0, |q| q.buffer_len());
        let payload = self.payload.map_or(0, |p| p.bytes.len());
        pad4(FIXED_LEN.saturating_add(qos).saturating_add(payload))
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    /// Appends the submessage, payload padded to a multiple of 4.
    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(buf, SubmessageId::DATA, self.flags(), self.body_len(), e);
        let start = buf.len();
        put_u16(buf, e, self.extra_flags);
        put_u16(buf, e, OCTETS_TO_INLINE_QOS);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.writer_sn.write(buf, e);
        if let Some(qos) = &self.inline_qos {
            debug_assert_eq!(
                qos.endianness(),
                e,
                "inline QoS must use the submessage byte order"
            );
            qos.emit(buf);
        }
        if let Some(payload) = &self.payload {
            buf.extend_from_slice(payload.bytes);
        }
        pad4_from(buf, start);
    }
}

/// The bytes `octetsToInlineQos` points at: shared by DATA and DATA_FRAG, whose first four
/// body bytes are extraFlags and octetsToInlineQos. `min` is the size of the fixed fields
/// that follow octetsToInlineQos.
pub(super) fn after_octets_to_inline_qos(
    body: &[u8],
    octets: u16,
    min: u16,
) -> Result<&[u8], ParseError> {
    // Cyclone's validate_Data also requires a multiple of 4 (RustDDS #277 crashed on 0).
    if octets < min || octets % 4 != 0 {
        return Err(ParseError::Malformed);
    }
    body.get(usize::from(octets).saturating_add(4)..)
        .ok_or(ParseError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(payload: &[u8]) -> Repr<'_> {
        Repr {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::new([0, 0, 0x12], 0x03),
            writer_sn: SequenceNumber(7),
            inline_qos: None,
            payload: Some(SerializedPayload {
                kind: PayloadKind::Data,
                bytes: payload,
            }),
            non_standard_payload: false,
        }
    }

    #[test]
    fn pads_unaligned_payload() {
        let payload = [0, 1, 0, 0, 9, 0, 0, 0, b'h', b'i', 0];
        let repr = sample(&payload);
        let mut buf = Vec::new();
        repr.emit(&mut buf, Endianness::Little);
        assert_eq!(buf.len(), repr.buffer_len());
        assert_eq!(buf.len() % 4, 0);
        let back = Repr::parse(buf.get(4..).unwrap(), buf[1]).unwrap();
        assert_eq!(
            back.payload.unwrap().bytes.get(..payload.len()),
            Some(&payload[..])
        );
        assert_eq!(back.payload.unwrap().bytes.len(), 12);
    }

    #[test]
    fn skips_extension_before_inline_qos() {
        // octetsToInlineQos = 20: four unknown bytes before the payload (a later minor
        // version may add fields there).
        let mut buf = Vec::new();
        sample(&[0, 1, 0, 0]).emit(&mut buf, Endianness::Big);
        buf[6..8].copy_from_slice(&20u16.to_be_bytes());
        buf.splice(24..24, [0xaa; 4]);
        let back = Repr::parse(buf.get(4..).unwrap(), buf[1]).unwrap();
        assert_eq!(back.payload.unwrap().bytes, &[0, 1, 0, 0]);
    }
}
