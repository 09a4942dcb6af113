use crate::{Encapsulation, EncodeError, Endianness, Prim};

/// Appends plain CDR to a byte buffer.
///
/// Alignment is measured from `origin`, the first byte after the encapsulation header, so a
/// writer can also append to a buffer that already holds other data (an RTPS submessage).
/// Padding bytes are written as zeros; readers must not depend on that (Fast CDR leaves garbage).
pub struct CdrWriter {
    buf: Vec<u8>,
    origin: usize,
    endianness: Endianness,
}

macro_rules! write_num {
    ($($name:ident: $t:ty;)*) => {$(
        #[inline]
        pub fn $name(&mut self, v: $t) {
            self.align(std::mem::size_of::<$t>());
            let bytes = match self.endianness {
                Endianness::Little => v.to_le_bytes(),
                Endianness::Big => v.to_be_bytes(),
            };
            self.buf.extend_from_slice(&bytes);
        }
    )*};
}

impl CdrWriter {
    /// A new buffer starting with the plain-CDR encapsulation header for `endianness`.
    pub fn new(endianness: Endianness) -> Self {
        Self::with_buffer(Vec::new(), endianness)
    }

    /// Appends an encapsulation header to `buf` (which may already hold other bytes) and
    /// measures alignment from the byte after it.
    pub fn with_buffer(mut buf: Vec<u8>, endianness: Endianness) -> Self {
        let id = Encapsulation::plain(endianness) as u16;
        buf.extend_from_slice(&id.to_be_bytes());
        buf.extend_from_slice(&[0, 0]);
        let origin = buf.len();
        Self {
            buf,
            origin,
            endianness,
        }
    }

    /// A writer with no encapsulation header whose alignment origin is the end of `buf`; used
    /// for nested encodings such as parameter lists.
    pub fn without_header(buf: Vec<u8>, endianness: Endianness) -> Self {
        let origin = buf.len();
        Self {
            buf,
            origin,
            endianness,
        }
    }

    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Bytes written after the origin.
    pub fn position(&self) -> usize {
        self.buf.len() - self.origin
    }

    /// Reserves capacity for `additional` more bytes.
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve(additional);
    }

    /// Pads with zeros to a multiple of `alignment` (a power of two) from the origin.
    #[inline]
    pub fn align(&mut self, alignment: usize) {
        let misalignment = self.position() & (alignment - 1);
        if misalignment != 0 {
            let pad = alignment - misalignment;
            self.buf.resize(self.buf.len() + pad, 0);
        }
    }

    #[inline]
    pub fn write_u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    #[inline]
    pub fn write_i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    #[inline]
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    write_num! {
        write_u16: u16;
        write_i16: i16;
        write_u32: u32;
        write_i32: i32;
        write_u64: u64;
        write_i64: i64;
        write_f32: f32;
        write_f64: f64;
    }

    /// Writes a sequence or string length.
    ///
    /// # Errors
    /// [`EncodeError::TooLong`] when `len` does not fit in a `u32`.
    pub fn write_len(&mut self, len: usize) -> Result<(), EncodeError> {
        let len = u32::try_from(len).map_err(|_| EncodeError::TooLong(len))?;
        self.write_u32(len);
        Ok(())
    }

    /// Checks a bounded length before writing it.
    ///
    /// # Errors
    /// [`EncodeError::BoundExceeded`] when `len > bound`.
    pub fn write_bounded_len(&mut self, len: usize, bound: usize) -> Result<(), EncodeError> {
        if len > bound {
            return Err(EncodeError::BoundExceeded { len, bound });
        }
        self.write_len(len)
    }

    /// Writes a CDR string: `u32` length including the NUL, the bytes, the NUL.
    ///
    /// # Errors
    /// [`EncodeError::InteriorNul`] when `s` holds a NUL; [`EncodeError::TooLong`].
    pub fn write_string(&mut self, s: &str) -> Result<(), EncodeError> {
        if s.as_bytes().contains(&0) {
            return Err(EncodeError::InteriorNul);
        }
        self.write_len(s.len() + 1)?;
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        Ok(())
    }

    /// A string with an upper bound on its length in bytes (not counting the NUL).
    ///
    /// # Errors
    /// As [`Self::write_string`], plus [`EncodeError::BoundExceeded`].
    pub fn write_bounded_string(&mut self, s: &str, bound: usize) -> Result<(), EncodeError> {
        if s.len() > bound {
            return Err(EncodeError::BoundExceeded {
                len: s.len(),
                bound,
            });
        }
        self.write_string(s)
    }

    /// Writes a wide string the way Fast DDS's ROS 2 type support does: `u32` count of UTF-16
    /// code units (no terminator) followed by each unit widened to 4 bytes.
    ///
    /// # Errors
    /// [`EncodeError::TooLong`].
    pub fn write_wstring(&mut self, s: &str) -> Result<(), EncodeError> {
        let units: Vec<u16> = s.encode_utf16().collect();
        self.write_len(units.len())?;
        for unit in units {
            self.write_u32(u32::from(unit));
        }
        Ok(())
    }

    /// Writes the elements of a primitive array or sequence body (no length), aligned once.
    /// Same-endianness data is one `memcpy`. No elements means no bytes at all, not even
    /// alignment padding, as Fast CDR (`serializeArray` returns early for zero elements) and
    /// Cyclone write empty sequences.
    pub fn write_prim_slice<T: Prim>(&mut self, values: &[T]) {
        if values.is_empty() {
            return;
        }
        self.align(T::SIZE);
        if self.endianness == crate::Endianness::NATIVE {
            self.buf.extend_from_slice(bytemuck::cast_slice(values));
        } else {
            self.buf.reserve(std::mem::size_of_val(values));
            for v in values {
                v.write_swapped(&mut self.buf);
            }
        }
    }

    /// Writes raw bytes with no alignment.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The encoding of a struct with no members: one dummy byte (Cyclone and Fast DDS both do
    /// this so that every type has a non-zero size).
    pub fn write_empty_struct(&mut self) {
        self.buf.push(0);
    }

    /// Ends the stream and returns the whole buffer including the header.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}
