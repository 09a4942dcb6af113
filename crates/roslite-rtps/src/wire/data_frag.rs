//! DATA_FRAG: consecutive fragments of one large sample (RTPS 2.5 §8.3.8.3, §9.4.5.4).

use roslite_cdr::Endianness;

use super::data::after_octets_to_inline_qos;
use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, pad4, put_u16, put_u32, Reader};
use crate::error::ParseError;
use crate::parameter_list::ParameterList;
use crate::types::{EntityId, FragmentNumber, SequenceNumber};

/// Q: an inline QoS parameter list precedes the fragments.
pub const FLAG_Q: u8 = 0x02;
/// K: the fragments are of the serialized key, not the data.
pub const FLAG_K: u8 = 0x04;
/// N: non-standard payload format.
pub const FLAG_N: u8 = 0x08;

/// readerId .. sampleSize after octetsToInlineQos.
const OCTETS_TO_INLINE_QOS: u16 = 28;
const FIXED_LEN: usize = 32;

/// A DATA_FRAG submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |DATA_FRAG 0x16 |X|X|X|X|N|K|Q|E|      octetsToNextHeader       |
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
/// |             FragmentNumber fragmentStartingNum                |
/// +---------------+---------------+---------------+---------------+
/// | ushort fragmentsInSubmessage  |     ushort fragmentSize       |
/// +---------------+---------------+---------------+---------------+
/// |                   unsigned long sampleSize                    |
/// +---------------+---------------+---------------+---------------+
/// ~          ParameterList inlineQos  [only if Q == 1]            ~
/// +---------------+---------------+---------------+---------------+
/// ~   octet fragments[]: fragmentsInSubmessage × fragmentSize,    ~
/// ~   the last one cut at sampleSize                              ~
/// +---------------+---------------+---------------+---------------+
/// ```
///
/// Fragment *n* (1-based) covers sample bytes `(n-1)·fragmentSize ..
/// min(n·fragmentSize, sampleSize)`. `data` holds exactly the bytes of the fragments in this
/// submessage (padding removed); [`Repr::fragments`] splits it. Fast DDS sends one 65324-byte
/// fragment per submessage; other senders put several in one (int2DDS#183 misassembled those).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr<'a> {
    pub extra_flags: u16,
    pub reader_id: EntityId,
    pub writer_id: EntityId,
    pub writer_sn: SequenceNumber,
    pub fragment_starting_num: FragmentNumber,
    pub fragments_in_submessage: u16,
    pub fragment_size: u16,
    pub sample_size: u32,
    /// Must be in the byte order the submessage is emitted with.
    pub inline_qos: Option<ParameterList<'a>>,
    pub key: bool,
    pub non_standard_payload: bool,
    pub data: &'a [u8],
}

impl<'a> Repr<'a> {
    /// Parses a DATA_FRAG body.
    ///
    /// # Errors
    /// [`ParseError::Truncated`] if the fixed fields are cut; [`ParseError::Malformed`]
    /// (RTPS 2.5 §8.3.8.3.3, Cyclone `validate_DataFrag`, docs/robustness.md §1) if writerSN
    /// ≤ 0; fragmentSize, fragmentStartingNum or fragmentsInSubmessage is 0; the last fragment
    /// number overflows 32 bits; the last fragment would start at or beyond sampleSize; the
    /// inline QoS pointer or list is invalid; or the body holds fewer bytes than the
    /// fragments it announces.
    pub fn parse(body: &'a [u8], flags: u8) -> Result<Self, ParseError> {
        let e = endianness_of(flags);
        let mut r = Reader::new(body, e);
        let extra_flags = r.u16()?;
        let octets_to_inline_qos = r.u16()?;
        let reader_id = EntityId::from_bytes(r.array()?);
        let writer_id = EntityId::from_bytes(r.array()?);
        let writer_sn = SequenceNumber::read(&mut r)?;
        let fragment_starting_num = FragmentNumber(r.u32()?);
        let fragments_in_submessage = r.u16()?;
        let fragment_size = r.u16()?;
        let sample_size = r.u32()?;

        if !writer_sn.is_valid_sample()
            || fragment_size == 0
            || fragment_starting_num.0 == 0
            || fragments_in_submessage == 0
        {
            return Err(ParseError::Malformed);
        }
        let last = fragment_starting_num
            .0
            .checked_add(u32::from(fragments_in_submessage.saturating_sub(1)))
            .ok_or(ParseError::Malformed)?;
        // Start offset of the last fragment must lie inside the sample (this also rejects
        // sampleSize == 0). The product is < 2^48, so saturation never happens.
        let last_offset =
            u64::from(last.saturating_sub(1)).saturating_mul(u64::from(fragment_size));
        if last_offset >= u64::from(sample_size) {
            return Err(ParseError::Malformed);
        }

        let mut rest =
            after_octets_to_inline_qos(body, octets_to_inline_qos, OCTETS_TO_INLINE_QOS)?;
        let mut inline_qos = None;
        if flags & FLAG_Q != 0 {
            let (qos, used) = ParameterList::parse_prefix(rest, e)?;
            inline_qos = Some(qos);
            rest = rest.get(used..).ok_or(ParseError::Malformed)?;
        }
        let expected = expected_len(
            fragment_starting_num,
            fragments_in_submessage,
            fragment_size,
            sample_size,
        );
        // A short final fragment is fine only if it reaches the end of the sample; padding
        // after the fragments is dropped here.
        let data = usize::try_from(expected)
            .ok()
            .and_then(|n| rest.get(..n))
            .ok_or(ParseError::Malformed)?;
        Ok(Repr {
            extra_flags,
            reader_id,
            writer_id,
            writer_sn,
            fragment_starting_num,
            fragments_in_submessage,
            fragment_size,
            sample_size,
            inline_qos,
            key: flags & FLAG_K != 0,
            non_standard_payload: flags & FLAG_N != 0,
            data,
        })
    }

    /// Byte offset of the first fragment in the reassembled sample.
    pub fn sample_offset(&self) -> u64 {
        u64::from(self.fragment_starting_num.0.saturating_sub(1))
            .saturating_mul(u64::from(self.fragment_size))
    }

    /// Total number of fragments of the sample: ⌈sampleSize / fragmentSize⌉.
    pub fn total_fragments(&self) -> u32 {
        self.sample_size
            .div_ceil(u32::from(self.fragment_size.max(1)))
    }

    /// The fragments in this submessage with their numbers.
    pub fn fragments(&self) -> impl Iterator<Item = (FragmentNumber, &'a [u8])> + '_ {
        let first = self.fragment_starting_num.0;
        self.data
            .chunks(usize::from(self.fragment_size.max(1)))
            .enumerate()
            .map(move |(i, chunk)| {
                let n = u32::try_from(i).map_or(u32::MAX, |i| first.saturating_add(i));
                (FragmentNumber(n), chunk)
            })
    }

    pub fn flags(&self) -> u8 {
        let mut flags = 0;
        if self.inline_qos.is_some() {
            flags |= FLAG_Q;
        }
        if self.key {
            flags |= FLAG_K;
        }
        if self.non_standard_payload {
            flags |= FLAG_N;
        }
        flags
    }

    fn body_len(&self) -> usize {
        let qos = self.inline_qos.map_or(0, |q| q.buffer_len());
        pad4(
            FIXED_LEN
                .saturating_add(qos)
                .saturating_add(self.data.len()),
        )
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    /// Appends the submessage. The caller keeps `data` consistent with the fragment fields
    /// (as [`Repr::parse`] guarantees for received ones).
    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        let padding = self.emit_head(buf, e);
        buf.extend_from_slice(self.data);
        buf.resize(buf.len().saturating_add(padding), 0);
    }

    /// Appends the submessage up to its fragment data: the header (whose length counts the
    /// data and its padding), the fixed fields and the inline QoS. Returns how many zero bytes
    /// of padding must follow `data`; head, `data` and padding together are what
    /// [`Repr::emit`] writes. Lets a writer send the data from where its history keeps it.
    pub fn emit_head(&self, buf: &mut Vec<u8>, e: Endianness) -> usize {
        emit_header(
            buf,
            SubmessageId::DATA_FRAG,
            self.flags(),
            self.body_len(),
            e,
        );
        let start = buf.len();
        put_u16(buf, e, self.extra_flags);
        put_u16(buf, e, OCTETS_TO_INLINE_QOS);
        buf.extend_from_slice(&self.reader_id.to_bytes());
        buf.extend_from_slice(&self.writer_id.to_bytes());
        self.writer_sn.write(buf, e);
        put_u32(buf, e, self.fragment_starting_num.0);
        put_u16(buf, e, self.fragments_in_submessage);
        put_u16(buf, e, self.fragment_size);
        put_u32(buf, e, self.sample_size);
        if let Some(qos) = &self.inline_qos {
            debug_assert_eq!(
                qos.endianness(),
                e,
                "inline QoS must use the submessage byte order"
            );
            qos.emit(buf);
        }
        let unpadded = buf
            .len()
            .saturating_sub(start)
            .saturating_add(self.data.len());
        pad4(unpadded).saturating_sub(unpadded)
    }
}

/// Bytes covered by `count` fragments from `start`, cut at `sample_size`. Callers have checked
/// that fragment `start` begins inside the sample.
fn expected_len(start: FragmentNumber, count: u16, size: u16, sample_size: u32) -> u64 {
    let offset = u64::from(start.0.saturating_sub(1)).saturating_mul(u64::from(size));
    let full = u64::from(count).saturating_mul(u64::from(size));
    full.min(u64::from(sample_size).saturating_sub(offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(start: u32, count: u16, size: u16, sample: u32, data: &[u8]) -> Repr<'_> {
        Repr {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::new([0, 0, 0x13], 0x03),
            writer_sn: SequenceNumber(4),
            fragment_starting_num: FragmentNumber(start),
            fragments_in_submessage: count,
            fragment_size: size,
            sample_size: sample,
            inline_qos: None,
            key: false,
            non_standard_payload: false,
            data,
        }
    }

    #[test]
    fn several_fragments_and_a_short_last_one() {
        let data: Vec<u8> = (0..10).collect();
        // Sample of 14 bytes in fragments of 4: this submessage has fragments 2, 3 and 4,
        // the last holding 2 bytes.
        let repr = frag(2, 3, 4, 14, &data);
        let mut buf = Vec::new();
        repr.emit(&mut buf, Endianness::Big);
        assert_eq!(buf.len() % 4, 0);
        let back = Repr::parse(buf.get(4..).unwrap(), buf[1]).unwrap();
        assert_eq!(back, repr);
        let frags: Vec<_> = back.fragments().collect();
        assert_eq!(frags.len(), 3);
        assert_eq!(frags[2], (FragmentNumber(4), &data[8..10]));
        assert_eq!(back.sample_offset(), 4);
        assert_eq!(back.total_fragments(), 4);
    }

    #[test]
    fn rejects_body_shorter_than_announced() {
        let data = [0u8; 8];
        let mut buf = Vec::new();
        frag(1, 3, 4, 14, &data).emit(&mut buf, Endianness::Little);
        assert_eq!(
            Repr::parse(buf.get(4..).unwrap(), buf[1]),
            Err(ParseError::Malformed)
        );
    }
}
