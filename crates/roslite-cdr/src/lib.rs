//! Plain CDR (OMG CDR / DDS-XTypes 1.3 "XCDR1") for ROS 2 payloads.
//!
//! Layers, bottom up:
//! - [`Encapsulation`]: the 4-byte RTPS serialized-payload header (DDSI-RTPS 2.5 §10.5,
//!   Table 10.3) that selects the representation and byte order.
//! - [`CdrWriter`] / [`CdrReader`]: primitive encoding (into a growable buffer, into a caller's
//!   slice such as a shared-memory loan, or only counting: [`encoded_len`]) with alignment
//!   measured from the first byte after the encapsulation header (DDS-XTypes 1.3 §7.4.1.1
//!   "alignment is relative to the beginning of the serialized stream"), strings with a length that counts the NUL, and
//!   sequence lengths that are always checked against the bytes that remain.
//! - [`CdrEncode`] / [`CdrDecode`]: implemented by generated message types.
//! - [`Seq`] and [`SharedBuf`]: primitive sequences that a decoder can hand out as a view into the
//!   received buffer instead of a copy (the `uint8[] data` of an image or point cloud), or that
//!   a sender *reserves* ([`Seq::reserved`]): [`to_slice_leaving_holes`] then encodes their
//!   lengths and leaves their elements for the application to write in place (a loaned
//!   shared-memory chunk).
//!
//! - [`key`]: the key members of a keyed type's sample, serialized on their own (what a DDS
//!   key hash digests).
//!
//! Decoding never panics on any input and never allocates more than the input could describe:
//! every length read from the stream is checked against the remaining bytes before anything is
//! reserved.

#![forbid(unsafe_code)]

mod error;
pub mod key;
mod reader;
mod seq;
mod writer;

pub use error::{DecodeError, EncodeError};
pub use reader::CdrReader;
pub use seq::{Backing, Prim, Seq, SharedBuf};
pub use writer::{CdrWriter, ReservedRange};

/// Byte order of a CDR stream, selected by the encapsulation header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endianness {
    Big,
    Little,
}

impl Endianness {
    /// The byte order of the machine running this code.
    pub const NATIVE: Endianness = if cfg!(target_endian = "little") {
        Endianness::Little
    } else {
        Endianness::Big
    };
}

/// RTPS serialized-payload representation identifiers (DDSI-RTPS 2.5 §10.5, Table 10.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Encapsulation {
    CdrBe = 0x0000,
    CdrLe = 0x0001,
    PlCdrBe = 0x0002,
    PlCdrLe = 0x0003,
}

impl Encapsulation {
    /// Length of the encapsulation header: 2 bytes identifier, 2 bytes options.
    pub const HEADER_LEN: usize = 4;

    pub fn from_id(id: u16) -> Option<Self> {
        match id {
            0x0000 => Some(Self::CdrBe),
            0x0001 => Some(Self::CdrLe),
            0x0002 => Some(Self::PlCdrBe),
            0x0003 => Some(Self::PlCdrLe),
            _ => None,
        }
    }

    pub fn endianness(self) -> Endianness {
        match self {
            Self::CdrBe | Self::PlCdrBe => Endianness::Big,
            Self::CdrLe | Self::PlCdrLe => Endianness::Little,
        }
    }

    /// Plain CDR in the given byte order.
    pub fn plain(endianness: Endianness) -> Self {
        match endianness {
            Endianness::Big => Self::CdrBe,
            Endianness::Little => Self::CdrLe,
        }
    }
}

/// A value that writes itself as plain CDR.
pub trait CdrEncode {
    /// Appends this value to `w`.
    ///
    /// # Errors
    /// [`EncodeError::BoundExceeded`] when a bounded string or sequence is longer than its
    /// bound; [`EncodeError::ReservedSequence`] when a reserved sequence meets a writer that
    /// does not leave holes.
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError>;
}

/// A value that reads itself from plain CDR.
pub trait CdrDecode: Sized {
    /// Reads one value from `r`.
    ///
    /// # Errors
    /// Any [`DecodeError`]; the reader's position is unspecified afterwards.
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError>;
}

/// Serializes `value` with an encapsulation header into a new buffer.
///
/// # Errors
/// As [`CdrEncode::encode`]; a reserved sequence ([`Seq::reserved`]) is
/// [`EncodeError::ReservedSequence`]: a new buffer has no contents to leave in its place.
pub fn to_vec<T: CdrEncode + ?Sized>(
    value: &T,
    endianness: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    let mut w = CdrWriter::new(endianness);
    value.encode(&mut w)?;
    Ok(w.finish())
}

/// The length of [`to_vec`]'s result, computed without writing anything (a primitive sequence
/// costs O(1)): to size a buffer, e.g. a shared-memory loan, before [`to_slice`]. A reserved
/// sequence counts as many bytes as its elements will occupy.
///
/// # Errors
/// As [`CdrEncode::encode`].
pub fn encoded_len<T: CdrEncode + ?Sized>(
    value: &T,
    endianness: Endianness,
) -> Result<usize, EncodeError> {
    let mut w = CdrWriter::counting(endianness);
    value.encode(&mut w)?;
    w.finish_len()
}

/// Serializes `value` with an encapsulation header into the start of `buf`; returns the bytes
/// used (the same bytes [`to_vec`] returns).
///
/// # Errors
/// As [`CdrEncode::encode`]; [`EncodeError::BufferTooSmall`] when `buf` is shorter than
/// [`encoded_len`].
pub fn to_slice<T: CdrEncode + ?Sized>(
    value: &T,
    endianness: Endianness,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let mut w = CdrWriter::into_slice(buf, endianness);
    value.encode(&mut w)?;
    w.finish_len()
}

/// [`to_slice`] into memory not yet initialized: on `Ok(n)`, the first `n` bytes of `buf` are
/// initialized ([`CdrWriter::into_uninit`]). For a large message in a fresh allocation this
/// saves zero-filling it first.
///
/// # Errors
/// As [`to_slice`]; [`EncodeError::ReservedSequence`] for a reserved sequence.
pub fn to_uninit_slice<T: CdrEncode + ?Sized>(
    value: &T,
    endianness: Endianness,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> Result<usize, EncodeError> {
    let mut w = CdrWriter::into_uninit(buf, endianness);
    value.encode(&mut w)?;
    w.finish_len()
}

/// [`to_slice`] for a value holding reserved sequences ([`Seq::reserved`]): their lengths are
/// written, their element bytes in `buf` are left as they are, and the ranges those elements
/// occupy are returned in encode order, for the caller to fill in place.
///
/// # Errors
/// As [`to_slice`].
pub fn to_slice_leaving_holes<T: CdrEncode + ?Sized>(
    value: &T,
    endianness: Endianness,
    buf: &mut [u8],
) -> Result<(usize, Vec<ReservedRange>), EncodeError> {
    let mut w = CdrWriter::into_slice_leaving_holes(buf, endianness);
    value.encode(&mut w)?;
    w.finish_with_holes()
}

/// Deserializes one value from a payload that starts with an encapsulation header.
///
/// Primitive sequences are copied; use [`from_shared`] to decode them as views.
///
/// # Errors
/// As [`CdrDecode::decode`], plus header errors.
pub fn from_bytes<T: CdrDecode>(payload: &[u8]) -> Result<T, DecodeError> {
    let mut r = CdrReader::new(payload)?;
    T::decode(&mut r)
}

/// Deserializes one value from a shared buffer; large primitive sequences become views into it
/// (no copy) where alignment and byte order allow.
///
/// # Errors
/// As [`from_bytes`].
pub fn from_shared<T: CdrDecode>(payload: &SharedBuf) -> Result<T, DecodeError> {
    let mut r = CdrReader::new_shared(payload)?;
    T::decode(&mut r)
}

macro_rules! prim_codec {
    ($($t:ty => $w:ident, $r:ident;)*) => {$(
        impl CdrEncode for $t {
            fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
                w.$w(*self);
                Ok(())
            }
        }
        impl CdrDecode for $t {
            fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
                r.$r()
            }
        }
    )*};
}

prim_codec! {
    bool => write_bool, read_bool;
    u8 => write_u8, read_u8;
    i8 => write_i8, read_i8;
    u16 => write_u16, read_u16;
    i16 => write_i16, read_i16;
    u32 => write_u32, read_u32;
    i32 => write_i32, read_i32;
    u64 => write_u64, read_u64;
    i64 => write_i64, read_i64;
    f32 => write_f32, read_f32;
    f64 => write_f64, read_f64;
}

impl CdrEncode for String {
    fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
        w.write_string(self)
    }
}

impl CdrDecode for String {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        r.read_string().map(str::to_owned)
    }
}

impl<T: Prim> CdrEncode for Seq<T> {
    fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
        w.write_prim_seq(self)
    }
}

impl<T: Prim> CdrDecode for Seq<T> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        let len = r.read_len(T::SIZE)?;
        r.read_prim_seq(len)
    }
}

/// Unbounded sequences of non-primitive elements (structs, strings, bools).
impl<T: CdrEncode> CdrEncode for Vec<T> {
    fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
        w.write_len(self.len())?;
        self.iter().try_for_each(|item| item.encode(w))
    }
}

impl<T: CdrDecode> CdrDecode for Vec<T> {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        // Every element occupies at least one byte, so `len` is bounded by the input size.
        let len = r.read_len(1)?;
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            items.push(T::decode(r)?);
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests;
