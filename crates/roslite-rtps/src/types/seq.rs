//! Sequence numbers, fragment numbers and their bitmap sets (RTPS 2.5 §9.4.2.5–§9.4.2.9).
//!
//! The sets hold at most 256 bits (a fixed `[u32; 8]`), so iterating a set is bounded by 256
//! whatever the wire says. Ranges implied by *other* fields (HEARTBEAT first..last, GAP
//! start..base) are never iterated here; they stay intervals.

use roslite_cdr::Endianness;

use crate::bytes::{put_i32, put_u32, Reader};
use crate::error::ParseError;

/// A writer's 64-bit sample sequence number (RTPS 2.5 §9.4.2.5).
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |                           long high                           |
/// +---------------+---------------+---------------+---------------+
/// |                      unsigned long low                        |
/// +---------------+---------------+---------------+---------------+
/// value = high * 2^32 + low
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SequenceNumber(pub i64);

impl SequenceNumber {
    /// `SEQUENCENUMBER_UNKNOWN` = {high: -1, low: 0}.
    pub const UNKNOWN: SequenceNumber = SequenceNumber(-(1i64 << 32));
    pub const ZERO: SequenceNumber = SequenceNumber(0);
    /// The first sequence number a writer uses.
    pub const FIRST: SequenceNumber = SequenceNumber(1);
    pub const MAX: SequenceNumber = SequenceNumber(i64::MAX);

    pub const fn from_high_low(high: i32, low: u32) -> Self {
        Self((high as i64).wrapping_shl(32) | low as i64)
    }

    pub const fn high(self) -> i32 {
        (self.0 >> 32) as i32
    }

    pub const fn low(self) -> u32 {
        self.0 as u32
    }

    /// RTPS 2.5 §8.3.5.4: sequence numbers of samples are strictly positive.
    pub const fn is_valid_sample(self) -> bool {
        self.0 >= 1
    }

    pub fn checked_add(self, n: i64) -> Option<Self> {
        self.0.checked_add(n).map(Self)
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, ParseError> {
        let high = r.i32()?;
        let low = r.u32()?;
        Ok(Self::from_high_low(high, low))
    }

    pub(crate) fn write(self, buf: &mut Vec<u8>, e: Endianness) {
        put_i32(buf, e, self.high());
        put_u32(buf, e, self.low());
    }
}

impl From<i64> for SequenceNumber {
    fn from(v: i64) -> Self {
        Self(v)
    }
}

/// A fragment number, counting from 1 (RTPS 2.5 §9.4.2.8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FragmentNumber(pub u32);

/// Up to 256 bits; bits at or above `num_bits` are always zero (normalized on parse).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Bitmap {
    num_bits: u32,
    words: [u32; 8],
}

impl Bitmap {
    const MAX_BITS: u32 = 256;

    fn get(&self, i: u32) -> bool {
        if i >= self.num_bits {
            return false;
        }
        let word = self.words.get((i / 32) as usize).copied().unwrap_or(0);
        word & (0x8000_0000 >> (i % 32)) != 0
    }

    /// Sets bit `i`, growing `num_bits` to cover it. Returns false if `i` ≥ 256.
    fn set(&mut self, i: u32) -> bool {
        let Some(word) = self.words.get_mut((i / 32) as usize) else {
            return false;
        };
        *word |= 0x8000_0000 >> (i % 32);
        self.num_bits = self.num_bits.max(i.saturating_add(1));
        true
    }

    fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.num_bits).filter(move |&i| self.get(i))
    }

    fn word_count(num_bits: u32) -> usize {
        num_bits.div_ceil(32) as usize
    }

    /// Reads `numBits` and the bitmap words; the caller validates the base.
    fn read(r: &mut Reader<'_>) -> Result<Self, ParseError> {
        let num_bits = r.u32()?;
        // RTPS 2.5 §9.4.2.6: "0 <= numBits <= 256"; 0xFFFFFFFF must not drive a loop or
        // an allocation (RustDDS #287).
        if num_bits > Self::MAX_BITS {
            return Err(ParseError::Malformed);
        }
        let mut bm = Bitmap {
            num_bits,
            words: [0; 8],
        };
        for word in bm.words.iter_mut().take(Self::word_count(num_bits)) {
            *word = r.u32()?;
        }
        // Bits past numBits carry no meaning; clear them so equal sets compare equal.
        let used = num_bits % 32;
        if used != 0 {
            if let Some(last) = bm.words.get_mut((num_bits / 32) as usize) {
                *last &= !(u32::MAX >> used);
            }
        }
        Ok(bm)
    }

    fn write(&self, buf: &mut Vec<u8>, e: Endianness) {
        put_u32(buf, e, self.num_bits);
        for word in self.words.iter().take(Self::word_count(self.num_bits)) {
            put_u32(buf, e, *word);
        }
    }

    fn wire_len(&self) -> usize {
        4usize.saturating_add(Self::word_count(self.num_bits).saturating_mul(4))
    }
}

/// `SequenceNumberSet`: a base and up to 256 bits, bit *i* standing for `base + i`
/// (RTPS 2.5 §9.4.2.6).
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |                 SequenceNumber bitmapBase (high)              |
/// +---------------+---------------+---------------+---------------+
/// |                 SequenceNumber bitmapBase (low)               |
/// +---------------+---------------+---------------+---------------+
/// |                      unsigned long numBits                    |
/// +---------------+---------------+---------------+---------------+
/// ~             long bitmap[(numBits + 31) / 32], MSB first       ~
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SequenceNumberSet {
    base: SequenceNumber,
    bits: Bitmap,
}

impl SequenceNumberSet {
    /// An empty set (`numBits = 0`) at `base`.
    pub fn empty(base: SequenceNumber) -> Self {
        Self {
            base,
            bits: Bitmap::default(),
        }
    }

    /// A set with `num_bits` bits, all clear; `None` if `num_bits > 256`.
    pub fn with_num_bits(base: SequenceNumber, num_bits: u32) -> Option<Self> {
        (num_bits <= Bitmap::MAX_BITS).then_some(Self {
            base,
            bits: Bitmap {
                num_bits,
                words: [0; 8],
            },
        })
    }

    /// The set `{base}` ∪ `members`, with `numBits` just large enough for the largest member.
    /// `None` if a member lies outside `base ..= base + 255`.
    pub fn from_members(
        base: SequenceNumber,
        members: impl IntoIterator<Item = SequenceNumber>,
    ) -> Option<Self> {
        let mut set = Self::empty(base);
        for sn in members {
            if !set.insert(sn) {
                return None;
            }
        }
        Some(set)
    }

    /// Adds `sn`, growing `numBits` if needed. Returns false (and changes nothing) when `sn`
    /// is outside `base ..= base + 255`.
    pub fn insert(&mut self, sn: SequenceNumber) -> bool {
        match sn.0.checked_sub(self.base.0) {
            Some(off @ 0..=255) => self.bits.set(off as u32),
            _ => false,
        }
    }

    pub fn base(&self) -> SequenceNumber {
        self.base
    }

    pub fn num_bits(&self) -> u32 {
        self.bits.num_bits
    }

    pub fn contains(&self, sn: SequenceNumber) -> bool {
        match sn.0.checked_sub(self.base.0) {
            Some(off @ 0..=255) => self.bits.get(off as u32),
            _ => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The members in increasing order (at most 256).
    pub fn iter(&self) -> impl Iterator<Item = SequenceNumber> + '_ {
        let base = self.base.0;
        self.bits
            .ones()
            .map(move |i| SequenceNumber(base.saturating_add(i64::from(i))))
    }

    /// `base + numBits`: the first sequence number past the bitmap.
    pub fn end(&self) -> SequenceNumber {
        SequenceNumber(self.base.0.saturating_add(i64::from(self.bits.num_bits)))
    }

    /// Reads and validates a set (RTPS 2.5 §8.3.5.5: `bitmapBase >= 1`, `numBits <= 256`;
    /// like Cyclone we also reject sets reaching past `i64::MAX`).
    ///
    /// `allow_preemptive` accepts `bitmapBase = 0, numBits = 0`, which Fast DDS (observed in
    /// all three reference captures) and RTI send in pre-emptive ACKNACKs.
    pub(crate) fn read(r: &mut Reader<'_>, allow_preemptive: bool) -> Result<Self, ParseError> {
        let base = SequenceNumber::read(r)?;
        let bits = Bitmap::read(r)?;
        let preemptive = allow_preemptive && base.0 == 0 && bits.num_bits == 0;
        if base.0 < 1 && !preemptive {
            return Err(ParseError::Malformed);
        }
        if base
            .0
            .checked_add(i64::from(bits.num_bits.saturating_sub(1)))
            .is_none()
        {
            return Err(ParseError::Malformed);
        }
        Ok(Self { base, bits })
    }

    pub(crate) fn write(&self, buf: &mut Vec<u8>, e: Endianness) {
        self.base.write(buf, e);
        self.bits.write(buf, e);
    }

    pub(crate) fn wire_len(&self) -> usize {
        8usize.saturating_add(self.bits.wire_len())
    }
}

/// `FragmentNumberSet` (RTPS 2.5 §9.4.2.9): like [`SequenceNumberSet`] with a 32-bit
/// unsigned `bitmapBase`.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |                unsigned long bitmapBase (>= 1)                |
/// +---------------+---------------+---------------+---------------+
/// |                      unsigned long numBits                    |
/// +---------------+---------------+---------------+---------------+
/// ~             long bitmap[(numBits + 31) / 32], MSB first       ~
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FragmentNumberSet {
    base: FragmentNumber,
    bits: Bitmap,
}

impl FragmentNumberSet {
    pub fn empty(base: FragmentNumber) -> Self {
        Self {
            base,
            bits: Bitmap::default(),
        }
    }

    /// `None` if a member lies outside `base ..= base + 255`.
    pub fn from_members(
        base: FragmentNumber,
        members: impl IntoIterator<Item = FragmentNumber>,
    ) -> Option<Self> {
        let mut set = Self::empty(base);
        for fragment in members {
            if !set.insert(fragment) {
                return None;
            }
        }
        Some(set)
    }

    pub fn insert(&mut self, fragment: FragmentNumber) -> bool {
        match fragment.0.checked_sub(self.base.0) {
            Some(off @ 0..=255) => self.bits.set(off),
            _ => false,
        }
    }

    pub fn base(&self) -> FragmentNumber {
        self.base
    }

    pub fn num_bits(&self) -> u32 {
        self.bits.num_bits
    }

    pub fn contains(&self, fragment: FragmentNumber) -> bool {
        match fragment.0.checked_sub(self.base.0) {
            Some(off @ 0..=255) => self.bits.get(off),
            _ => false,
        }
    }

    /// The members in increasing order (at most 256).
    pub fn iter(&self) -> impl Iterator<Item = FragmentNumber> + '_ {
        let base = self.base.0;
        self.bits
            .ones()
            .map(move |i| FragmentNumber(base.saturating_add(i)))
    }

    /// RTPS 2.5 §8.3.5.7 validity: `bitmapBase >= 1`, `numBits <= 256`, and (Cyclone) the
    /// last bit must be a representable fragment number.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, ParseError> {
        let base = FragmentNumber(r.u32()?);
        let bits = Bitmap::read(r)?;
        if base.0 == 0
            || base
                .0
                .checked_add(bits.num_bits.saturating_sub(1))
                .is_none()
        {
            return Err(ParseError::Malformed);
        }
        Ok(Self { base, bits })
    }

    pub(crate) fn write(&self, buf: &mut Vec<u8>, e: Endianness) {
        put_u32(buf, e, self.base.0);
        self.bits.write(buf, e);
    }

    pub(crate) fn wire_len(&self) -> usize {
        4usize.saturating_add(self.bits.wire_len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sn(v: i64) -> SequenceNumber {
        SequenceNumber(v)
    }

    #[test]
    fn high_low_form() {
        assert_eq!(SequenceNumber::from_high_low(0, 5), sn(5));
        assert_eq!(SequenceNumber::from_high_low(1, 0), sn(1 << 32));
        assert_eq!(
            SequenceNumber::from_high_low(-1, 0),
            SequenceNumber::UNKNOWN
        );
        assert_eq!(SequenceNumber::UNKNOWN.high(), -1);
        assert_eq!(SequenceNumber::UNKNOWN.low(), 0);
        let big = sn(0x1234_5678_9abc_def0);
        assert_eq!(SequenceNumber::from_high_low(big.high(), big.low()), big);
    }

    #[test]
    fn set_members_and_bounds() {
        let set = SequenceNumberSet::from_members(sn(10), [sn(10), sn(12), sn(265)]).unwrap();
        assert_eq!(set.num_bits(), 256);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![sn(10), sn(12), sn(265)]
        );
        assert!(set.contains(sn(12)) && !set.contains(sn(11)) && !set.contains(sn(9)));
        assert!(SequenceNumberSet::from_members(sn(10), [sn(266)]).is_none());
        assert!(SequenceNumberSet::from_members(sn(10), [sn(9)]).is_none());
        assert!(SequenceNumberSet::empty(sn(3)).is_empty());
        assert_eq!(
            SequenceNumberSet::with_num_bits(sn(3), 5).unwrap().end(),
            sn(8)
        );
        assert!(SequenceNumberSet::with_num_bits(sn(3), 257).is_none());
    }

    #[test]
    fn parse_rejects_invalid_sets() {
        let e = Endianness::Big;
        let encode = |high: i32, low: u32, num_bits: u32, words: usize| {
            let mut b = Vec::new();
            put_i32(&mut b, e, high);
            put_u32(&mut b, e, low);
            put_u32(&mut b, e, num_bits);
            b.resize(b.len() + 4 * words, 0xff);
            b
        };
        let parse = |b: &[u8], pre| SequenceNumberSet::read(&mut Reader::new(b, e), pre);
        assert!(parse(&encode(0, 1, 33, 2), false).is_ok());
        assert_eq!(
            parse(&encode(0, 1, 257, 9), false),
            Err(ParseError::Malformed)
        );
        assert_eq!(
            parse(&encode(0, 1, u32::MAX, 0), false),
            Err(ParseError::Malformed)
        );
        assert_eq!(
            parse(&encode(0, 0, 1, 1), false),
            Err(ParseError::Malformed)
        );
        assert_eq!(
            parse(&encode(-1, 0, 0, 0), false),
            Err(ParseError::Malformed)
        );
        assert_eq!(
            parse(&encode(0, 1, 64, 1), false),
            Err(ParseError::Truncated)
        );
        assert_eq!(
            parse(&encode(i32::MAX, u32::MAX, 8, 1), false),
            Err(ParseError::Malformed)
        );
        assert!(parse(&encode(i32::MAX, u32::MAX, 1, 1), false).is_ok());
        // Fast DDS pre-emptive ACKNACK shape.
        assert_eq!(
            parse(&encode(0, 0, 0, 0), false),
            Err(ParseError::Malformed)
        );
        assert_eq!(parse(&encode(0, 0, 0, 0), true).unwrap().base(), sn(0));
        // Bits past numBits are cleared.
        let set = parse(&encode(0, 1, 33, 2), false).unwrap();
        assert_eq!(set.iter().count(), 33);
    }

    #[test]
    fn fragment_sets() {
        let f = FragmentNumber;
        let set = FragmentNumberSet::from_members(f(3), [f(4), f(7)]).unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![f(4), f(7)]);
        assert_eq!(set.num_bits(), 5);
        let mut b = Vec::new();
        set.write(&mut b, Endianness::Little);
        assert_eq!(b.len(), set.wire_len());
        let back = FragmentNumberSet::read(&mut Reader::new(&b, Endianness::Little)).unwrap();
        assert_eq!(back, set);
        let mut bad = Vec::new();
        FragmentNumberSet::empty(f(0)).write(&mut bad, Endianness::Little);
        let r = FragmentNumberSet::read(&mut Reader::new(&bad, Endianness::Little));
        assert_eq!(r, Err(ParseError::Malformed));
        let mut overflow = Vec::new();
        FragmentNumberSet::from_members(f(u32::MAX - 1), [f(u32::MAX)])
            .unwrap()
            .write(&mut overflow, Endianness::Big);
        assert!(FragmentNumberSet::read(&mut Reader::new(&overflow, Endianness::Big)).is_ok());
    }
}
