//! PL_CDR parameter lists: SPDP/SEDP data and inline QoS (RTPS 2.5 §9.4.2.11, §9.6.2.2).
//!
//! [`ParameterList`] is a validated view: [`ParameterList::parse_prefix`] walks the list once,
//! checking every length against the remaining bytes, the 4-byte alignment of every length,
//! and the presence of `PID_SENTINEL`. Iterating afterwards cannot fail. The values stay
//! opaque bytes in the list's byte order; typed decoding lives in [`crate::discovery`] and in
//! the inline-QoS accessors below.

use roslite_cdr::{Encapsulation, Endianness};

use crate::bytes::{pad4, put_i16, put_i32, put_u16, put_u32, Reader};
use crate::error::{EmitError, ParseError};
use crate::quirks;
use crate::types::{Duration, Guid, Locator, SampleIdentity, SequenceNumber, VendorId};

/// A parameter id. Bit 15 marks the vendor-specific range, bit 14 "must understand"
/// (RTPS 2.5 §9.6.2.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParameterId(pub u16);

impl ParameterId {
    pub const VENDOR_SPECIFIC_BIT: u16 = 0x8000;
    pub const MUST_UNDERSTAND_BIT: u16 = 0x4000;

    /// Meaningful only to the vendor that sent it: interpret only when the sender's vendor
    /// id is known to match (0x8007 is Fast DDS `NETWORK_CONFIGURATION_SET` but Cyclone's
    /// participant version info; Fast-DDS#2285).
    pub const fn is_vendor_specific(self) -> bool {
        self.0 & Self::VENDOR_SPECIFIC_BIT != 0
    }

    /// RTPS 2.5 §9.6.2.2.1: a receiver that does not understand a parameter with this bit set
    /// must reject the whole parameter list (and the sample carrying it).
    pub const fn must_understand(self) -> bool {
        self.0 & Self::MUST_UNDERSTAND_BIT != 0
    }
}

/// Parameter ids (RTPS 2.5 §9.6.2.2 and §9.6.3; DDS-XTypes 1.3 §7.6.3.3;
/// DDS-RPC 1.0 §7.8.2), plus the vendor-specific ones this crate names.
pub mod pid {
    use super::ParameterId;

    pub const PAD: ParameterId = ParameterId(0x0000);
    pub const SENTINEL: ParameterId = ParameterId(0x0001);
    pub const PARTICIPANT_LEASE_DURATION: ParameterId = ParameterId(0x0002);
    pub const TIME_BASED_FILTER: ParameterId = ParameterId(0x0004);
    pub const TOPIC_NAME: ParameterId = ParameterId(0x0005);
    pub const OWNERSHIP_STRENGTH: ParameterId = ParameterId(0x0006);
    pub const TYPE_NAME: ParameterId = ParameterId(0x0007);
    pub const DOMAIN_ID: ParameterId = ParameterId(0x000f);
    pub const PROTOCOL_VERSION: ParameterId = ParameterId(0x0015);
    pub const VENDORID: ParameterId = ParameterId(0x0016);
    pub const RELIABILITY: ParameterId = ParameterId(0x001a);
    pub const LIVELINESS: ParameterId = ParameterId(0x001b);
    pub const DURABILITY: ParameterId = ParameterId(0x001d);
    pub const DURABILITY_SERVICE: ParameterId = ParameterId(0x001e);
    pub const OWNERSHIP: ParameterId = ParameterId(0x001f);
    pub const PRESENTATION: ParameterId = ParameterId(0x0021);
    pub const DEADLINE: ParameterId = ParameterId(0x0023);
    pub const DESTINATION_ORDER: ParameterId = ParameterId(0x0025);
    pub const LATENCY_BUDGET: ParameterId = ParameterId(0x0027);
    pub const PARTITION: ParameterId = ParameterId(0x0029);
    pub const LIFESPAN: ParameterId = ParameterId(0x002b);
    pub const USER_DATA: ParameterId = ParameterId(0x002c);
    pub const GROUP_DATA: ParameterId = ParameterId(0x002d);
    pub const TOPIC_DATA: ParameterId = ParameterId(0x002e);
    pub const UNICAST_LOCATOR: ParameterId = ParameterId(0x002f);
    pub const MULTICAST_LOCATOR: ParameterId = ParameterId(0x0030);
    pub const DEFAULT_UNICAST_LOCATOR: ParameterId = ParameterId(0x0031);
    pub const METATRAFFIC_UNICAST_LOCATOR: ParameterId = ParameterId(0x0032);
    pub const METATRAFFIC_MULTICAST_LOCATOR: ParameterId = ParameterId(0x0033);
    pub const PARTICIPANT_MANUAL_LIVELINESS_COUNT: ParameterId = ParameterId(0x0034);
    pub const CONTENT_FILTER_PROPERTY: ParameterId = ParameterId(0x0035);
    pub const HISTORY: ParameterId = ParameterId(0x0040);
    pub const RESOURCE_LIMITS: ParameterId = ParameterId(0x0041);
    pub const EXPECTS_INLINE_QOS: ParameterId = ParameterId(0x0043);
    pub const DEFAULT_MULTICAST_LOCATOR: ParameterId = ParameterId(0x0048);
    pub const TRANSPORT_PRIORITY: ParameterId = ParameterId(0x0049);
    pub const PARTICIPANT_GUID: ParameterId = ParameterId(0x0050);
    pub const GROUP_GUID: ParameterId = ParameterId(0x0052);
    pub const CONTENT_FILTER_INFO: ParameterId = ParameterId(0x0055);
    pub const COHERENT_SET: ParameterId = ParameterId(0x0056);
    pub const DIRECTED_WRITE: ParameterId = ParameterId(0x0057);
    pub const BUILTIN_ENDPOINT_SET: ParameterId = ParameterId(0x0058);
    pub const PROPERTY_LIST: ParameterId = ParameterId(0x0059);
    pub const ENDPOINT_GUID: ParameterId = ParameterId(0x005a);
    pub const TYPE_MAX_SIZE_SERIALIZED: ParameterId = ParameterId(0x0060);
    pub const ORIGINAL_WRITER_INFO: ParameterId = ParameterId(0x0061);
    pub const ENTITY_NAME: ParameterId = ParameterId(0x0062);
    pub const KEY_HASH: ParameterId = ParameterId(0x0070);
    pub const STATUS_INFO: ParameterId = ParameterId(0x0071);
    pub const DATA_REPRESENTATION: ParameterId = ParameterId(0x0073);
    pub const TYPE_CONSISTENCY: ParameterId = ParameterId(0x0074);
    /// XTypes TypeInformation, XCDR2-encoded; skipped (Fast-DDS#1762).
    pub const TYPE_INFORMATION: ParameterId = ParameterId(0x0075);
    pub const BUILTIN_ENDPOINT_QOS: ParameterId = ParameterId(0x0077);
    /// DDS-RPC 1.0 `related_sample_identity` (inline QoS of service requests and replies).
    pub const RELATED_SAMPLE_IDENTITY: ParameterId = ParameterId(0x0083);
    /// RTPS 2.5 §9.6.2.2: domain tag; carries the must-understand bit.
    pub const DOMAIN_TAG: ParameterId = ParameterId(0x4014);

    /// eProsima (vendor 0x010f) legacy related-sample-identity; Fast DDS ≤ 2.6 sends only this,
    /// later versions send it next to 0x0083 (docs/ros2-interop.md §5).
    pub const FASTDDS_RELATED_SAMPLE_IDENTITY: ParameterId = ParameterId(0x800f);
}

/// One `(pid, value)` entry. `value` is `parameterLength` bytes, padding included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parameter<'a> {
    pub id: ParameterId,
    pub value: &'a [u8],
}

/// A validated parameter list.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |     ParameterId parameterId   |   ushort parameterLength (%4) |
/// +---------------+---------------+---------------+---------------+
/// ~                 octet value[parameterLength]                  ~
/// +---------------+---------------+---------------+---------------+
/// ~                  ... more parameters ...                      ~
/// +---------------+---------------+---------------+---------------+
/// |     PID_SENTINEL (0x0001)     |       ignored (sent as 0)     |
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParameterList<'a> {
    /// The parameters, without the sentinel.
    bytes: &'a [u8],
    endianness: Endianness,
}

impl<'a> ParameterList<'a> {
    /// Largest `parameterLength` a writer can produce (16-bit, multiple of 4).
    pub const MAX_VALUE_LEN: usize = 0xfffc;

    /// An empty list in the given byte order (emits just a sentinel).
    pub fn empty(endianness: Endianness) -> Self {
        ParameterList {
            bytes: &[],
            endianness,
        }
    }

    /// Validates the list at the start of `bytes` and returns it with the number of bytes it
    /// occupies, sentinel included. Trailing bytes are not looked at.
    ///
    /// # Errors
    /// [`ParseError::Malformed`] for a length that is not a multiple of 4 or runs past the end
    /// of `bytes`, and for a missing sentinel; [`ParseError::Truncated`] if `bytes` ends in
    /// the middle of a parameter header.
    pub fn parse_prefix(
        bytes: &'a [u8],
        endianness: Endianness,
    ) -> Result<(Self, usize), ParseError> {
        let mut r = Reader::new(bytes, endianness);
        // Each iteration consumes at least 4 bytes, so the loop is bounded by bytes.len() / 4.
        loop {
            let start = r.position();
            if r.remaining() == 0 {
                // RTPS 2.5 §9.4.2.11: the list is terminated by PID_SENTINEL.
                return Err(ParseError::Malformed);
            }
            let id = ParameterId(r.u16()?);
            let len = usize::from(r.u16()?);
            if id == pid::SENTINEL {
                // "The length of PID_SENTINEL is ignored."
                let params = bytes.get(..start).ok_or(ParseError::Malformed)?;
                return Ok((
                    ParameterList {
                        bytes: params,
                        endianness,
                    },
                    r.position(),
                ));
            }
            if len % 4 != 0 {
                return Err(ParseError::Malformed);
            }
            r.skip(len).map_err(|_| ParseError::Malformed)?;
        }
    }

    /// Validates a list that starts at `bytes[0]`; bytes after the sentinel are ignored.
    ///
    /// # Errors
    /// As [`ParameterList::parse_prefix`].
    pub fn parse(bytes: &'a [u8], endianness: Endianness) -> Result<Self, ParseError> {
        Self::parse_prefix(bytes, endianness).map(|(list, _)| list)
    }

    /// Validates a serialized payload holding a parameter list: the 4-byte encapsulation
    /// header `PL_CDR_BE` (0x0002) or `PL_CDR_LE` (0x0003), options (ignored), then the list.
    /// This is the form of SPDP and SEDP samples (RTPS 2.5 §9.6.2.2; identifiers in §10.5).
    ///
    /// # Errors
    /// [`ParseError::Unsupported`] for any other encapsulation; otherwise as
    /// [`ParameterList::parse_prefix`].
    pub fn from_payload(payload: &'a [u8]) -> Result<Self, ParseError> {
        let mut r = Reader::new(payload, Endianness::Big);
        let id = r.u16()?;
        let _options = r.u16()?;
        let endianness = match Encapsulation::from_id(id) {
            Some(enc @ (Encapsulation::PlCdrBe | Encapsulation::PlCdrLe)) => enc.endianness(),
            _ => return Err(ParseError::Unsupported),
        };
        Self::parse(r.rest(), endianness)
    }

    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// The parameters in wire order, `PID_PAD` entries skipped.
    pub fn iter(&self) -> ParameterIter<'a> {
        ParameterIter {
            r: Reader::new(self.bytes, self.endianness),
        }
    }

    /// The value of the first parameter with id `id`.
    pub fn get(&self, id: ParameterId) -> Option<&'a [u8]> {
        self.iter().find(|p| p.id == id).map(|p| p.value)
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// Bytes on the wire, sentinel included.
    pub fn buffer_len(&self) -> usize {
        self.bytes.len().saturating_add(4)
    }

    /// Writes the list (in its own byte order) and a sentinel.
    pub fn emit(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(self.bytes);
        put_u16(buf, self.endianness, pid::SENTINEL.0);
        put_u16(buf, self.endianness, 0);
    }

    /// `PID_KEY_HASH` (RTPS 2.5 §9.6.3.8): 16 bytes; in SEDP disposals it is the endpoint GUID.
    ///
    /// # Errors
    /// [`ParseError::Malformed`] if the value is shorter than 16 bytes.
    pub fn key_hash(&self) -> Result<Option<[u8; 16]>, ParseError> {
        self.get(pid::KEY_HASH)
            .map(|v| {
                Reader::new(v, self.endianness)
                    .array()
                    .map_err(|_| ParseError::Malformed)
            })
            .transpose()
    }

    /// `PID_STATUS_INFO` (RTPS 2.5 §9.6.3.9): 4 octets, the flags in the last one
    /// (bit 0 disposed, bit 1 unregistered, bit 2 filtered); byte order independent.
    ///
    /// # Errors
    /// [`ParseError::Malformed`] if the value is shorter than 4 bytes.
    /// What `PID_CONTENT_FILTER_INFO` says of the filter with `signature`: `Some(passed)`
    /// when the writer evaluated that filter, `None` when it did not (no such parameter, the
    /// signature not in it, or a value that does not decode: ignored, as Fast DDS ignores it).
    pub fn content_filter_result(&self, signature: &[u8; 16]) -> Option<bool> {
        self.iter()
            .filter(|p| p.id == pid::CONTENT_FILTER_INFO)
            .find_map(|p| {
                let mut r = Reader::new(p.value, self.endianness());
                let bitmaps = usize::try_from(r.u32().ok()?).ok()?;
                let results = r.take(bitmaps.checked_mul(4)?).ok()?;
                let signatures = usize::try_from(r.u32().ok()?).ok()?;
                // One bit per signature, in 32-bit bitmaps (RTPS 2.5 §9.6.3.1 FilterResult_t).
                if signatures.div_ceil(32) != bitmaps {
                    return None;
                }
                let index = r
                    .take(signatures.checked_mul(16)?)
                    .ok()?
                    .chunks_exact(16)
                    .position(|s| s == signature)?;
                let word = results.get((index / 32).checked_mul(4)?..)?;
                let bitmap = Reader::new(word, self.endianness()).u32().ok()?;
                // The first filter is the bitmap's most significant bit.
                let bit = 0x8000_0000u32.checked_shr(u32::try_from(index % 32).ok()?)?;
                Some(bitmap & bit != 0)
            })
    }

    pub fn status_info(&self) -> Result<Option<u32>, ParseError> {
        self.get(pid::STATUS_INFO)
            .map(|v| {
                let b: [u8; 4] = Reader::new(v, self.endianness)
                    .array()
                    .map_err(|_| ParseError::Malformed)?;
                Ok(u32::from_be_bytes(b))
            })
            .transpose()
    }

    /// The related sample identity of a service request/reply: standard PID 0x0083 from any
    /// vendor, else eProsima's legacy 0x800f if (and only if) `sender` is eProsima.
    ///
    /// # Errors
    /// [`ParseError::Malformed`] if the value is shorter than 24 bytes.
    pub fn related_sample_identity(
        &self,
        sender: VendorId,
    ) -> Result<Option<SampleIdentity>, ParseError> {
        let value = self.get(pid::RELATED_SAMPLE_IDENTITY).or_else(|| {
            quirks::interprets_vendor_pid(sender, VendorId::EPROSIMA)
                .then(|| self.get(pid::FASTDDS_RELATED_SAMPLE_IDENTITY))
                .flatten()
        });
        let Some(value) = value else { return Ok(None) };
        let mut r = Reader::new(value, self.endianness);
        let guid = Guid::from_bytes(r.array().map_err(|_| ParseError::Malformed)?);
        let sn = SequenceNumber::read(&mut r).map_err(|_| ParseError::Malformed)?;
        Ok(Some(SampleIdentity {
            writer_guid: guid,
            sequence_number: sn,
        }))
    }
}

/// Iterator over a validated [`ParameterList`].
#[derive(Clone, Debug)]
pub struct ParameterIter<'a> {
    r: Reader<'a>,
}

impl<'a> Iterator for ParameterIter<'a> {
    type Item = Parameter<'a>;

    fn next(&mut self) -> Option<Parameter<'a>> {
        loop {
            // The list was validated, so these reads only fail at the end.
            let id = ParameterId(self.r.u16().ok()?);
            let len = usize::from(self.r.u16().ok()?);
            let value = self.r.take(len).ok()?;
            if id != pid::PAD {
                return Some(Parameter { id, value });
            }
        }
    }
}

/// Appends a parameter list to a buffer. Call [`ParameterListWriter::finish`] to write the
/// sentinel.
#[derive(Debug)]
pub struct ParameterListWriter<'b> {
    buf: &'b mut Vec<u8>,
    endianness: Endianness,
}

impl<'b> ParameterListWriter<'b> {
    pub fn new(buf: &'b mut Vec<u8>, endianness: Endianness) -> Self {
        ParameterListWriter { buf, endianness }
    }

    /// Writes `PL_CDR_BE`/`PL_CDR_LE` encapsulation header and returns the writer for the list.
    pub fn with_encapsulation(buf: &'b mut Vec<u8>, endianness: Endianness) -> Self {
        let id = match endianness {
            Endianness::Big => Encapsulation::PlCdrBe,
            Endianness::Little => Encapsulation::PlCdrLe,
        };
        buf.extend_from_slice(&(id as u16).to_be_bytes());
        buf.extend_from_slice(&[0, 0]);
        Self::new(buf, endianness)
    }

    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Appends a parameter whose value is produced by `f`, padded to a multiple of 4.
    ///
    /// # Errors
    /// [`EmitError::TooLong`] if the value exceeds [`ParameterList::MAX_VALUE_LEN`], or any
    /// error from `f`; on error nothing is appended.
    pub fn param(
        &mut self,
        id: ParameterId,
        f: impl FnOnce(&mut ValueWriter<'_>) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        let start = self.buf.len();
        put_u16(self.buf, self.endianness, id.0);
        put_u16(self.buf, self.endianness, 0);
        let value_start = self.buf.len();
        let mut w = ValueWriter {
            buf: self.buf,
            e: self.endianness,
            start: value_start,
        };
        let result = f(&mut w).and_then(|()| {
            let len = pad4(self.buf.len().saturating_sub(value_start));
            if len > ParameterList::MAX_VALUE_LEN {
                return Err(EmitError::TooLong {
                    len,
                    max: ParameterList::MAX_VALUE_LEN,
                });
            }
            self.buf.resize(value_start.saturating_add(len), 0);
            Ok(len)
        });
        match result {
            Ok(len) => {
                // `len` ≤ 0xfffc was checked above.
                let bytes = match self.endianness {
                    Endianness::Big => (len as u16).to_be_bytes(),
                    Endianness::Little => (len as u16).to_le_bytes(),
                };
                if let Some(slot) = self.buf.get_mut(start.saturating_add(2)..value_start) {
                    slot.copy_from_slice(&bytes);
                }
                Ok(())
            }
            Err(e) => {
                self.buf.truncate(start);
                Err(e)
            }
        }
    }

    /// Appends a parameter with raw value bytes.
    ///
    /// # Errors
    /// As [`ParameterListWriter::param`].
    pub fn raw(&mut self, id: ParameterId, value: &[u8]) -> Result<(), EmitError> {
        self.param(id, |w| {
            w.bytes(value);
            Ok(())
        })
    }

    /// Writes the sentinel.
    pub fn finish(self) {
        put_u16(self.buf, self.endianness, pid::SENTINEL.0);
        put_u16(self.buf, self.endianness, 0);
    }
}

/// Writes one parameter value; alignment is relative to the start of the value, which is
/// 4-aligned relative to the CDR stream.
#[derive(Debug)]
pub struct ValueWriter<'w> {
    buf: &'w mut Vec<u8>,
    e: Endianness,
    start: usize,
}

impl ValueWriter<'_> {
    pub fn align(&mut self, n: usize) {
        let len = self.buf.len().saturating_sub(self.start);
        let rem = len.checked_rem(n).unwrap_or(0);
        if rem != 0 {
            self.buf
                .resize(self.buf.len().saturating_add(n.saturating_sub(rem)), 0);
        }
    }

    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn u16(&mut self, v: u16) {
        self.align(2);
        put_u16(self.buf, self.e, v);
    }

    pub fn i16(&mut self, v: i16) {
        self.align(2);
        put_i16(self.buf, self.e, v);
    }

    pub fn u32(&mut self, v: u32) {
        self.align(4);
        put_u32(self.buf, self.e, v);
    }

    pub fn i32(&mut self, v: i32) {
        self.align(4);
        put_i32(self.buf, self.e, v);
    }

    pub fn bytes(&mut self, v: &[u8]) {
        self.buf.extend_from_slice(v);
    }

    /// CDR string: `u32` length counting the NUL, the bytes, a NUL.
    ///
    /// # Errors
    /// [`EmitError::InteriorNul`] if `s` contains a NUL; [`EmitError::TooLong`] if it cannot
    /// fit in one parameter.
    pub fn string(&mut self, s: &str) -> Result<(), EmitError> {
        if s.as_bytes().contains(&0) {
            return Err(EmitError::InteriorNul);
        }
        let len = s.len().saturating_add(1);
        let len32 = u32::try_from(len)
            .ok()
            .filter(|l| (*l as usize) < ParameterList::MAX_VALUE_LEN)
            .ok_or(EmitError::TooLong {
                len,
                max: ParameterList::MAX_VALUE_LEN,
            })?;
        self.u32(len32);
        self.bytes(s.as_bytes());
        self.u8(0);
        Ok(())
    }

    /// CDR `sequence<octet>`: `u32` count, the bytes.
    ///
    /// # Errors
    /// [`EmitError::TooLong`] if `v` cannot fit in one parameter.
    pub fn octet_seq(&mut self, v: &[u8]) -> Result<(), EmitError> {
        let len = u32::try_from(v.len())
            .ok()
            .filter(|l| (*l as usize) < ParameterList::MAX_VALUE_LEN)
            .ok_or(EmitError::TooLong {
                len: v.len(),
                max: ParameterList::MAX_VALUE_LEN,
            })?;
        self.u32(len);
        self.bytes(v);
        Ok(())
    }

    pub fn locator(&mut self, l: &Locator) {
        self.align(4);
        l.write(self.buf, self.e);
    }

    pub fn duration(&mut self, d: Duration) {
        self.align(4);
        d.write(self.buf, self.e);
    }

    pub fn guid(&mut self, g: Guid) {
        self.bytes(&g.to_bytes());
    }
}

#[cfg(test)]
mod tests;
