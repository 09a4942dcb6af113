use crate::{Encapsulation, EncodeError, Endianness, Prim};

/// Writes plain CDR into a growable buffer, into a caller's slice (a shared-memory chunk), or
/// nowhere, only counting (to learn the encoded size before loaning a buffer of that size).
///
/// Alignment is measured from `origin`, the first byte after the encapsulation header, so a
/// writer can also append to a buffer that already holds other data (an RTPS submessage).
/// Padding bytes are written as zeros; readers must not depend on that (Fast CDR leaves garbage).
///
/// All three outputs go through the same `encode` code, so the count of
/// [`CdrWriter::counting`] is exactly what the other two write.
pub struct CdrWriter<'a> {
    out: Out<'a>,
    origin: usize,
    endianness: Endianness,
}

enum Out<'a> {
    Vec(Vec<u8>),
    /// `pos` is the logical position: it keeps counting past the end of `buf` (nothing more is
    /// written then) so `finish_len` can say how much was needed.
    Slice {
        buf: &'a mut [u8],
        pos: usize,
    },
    Count(usize),
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
            self.put(&bytes);
        }
    )*};
}

fn header(endianness: Endianness) -> [u8; Encapsulation::HEADER_LEN] {
    let id = (Encapsulation::plain(endianness) as u16).to_be_bytes();
    [id[0], id[1], 0, 0]
}

impl<'a> CdrWriter<'a> {
    /// A new buffer starting with the plain-CDR encapsulation header for `endianness`.
    pub fn new(endianness: Endianness) -> Self {
        Self::with_buffer(Vec::new(), endianness)
    }

    /// Appends an encapsulation header to `buf` (which may already hold other bytes) and
    /// measures alignment from the byte after it.
    pub fn with_buffer(mut buf: Vec<u8>, endianness: Endianness) -> Self {
        buf.extend_from_slice(&header(endianness));
        let origin = buf.len();
        Self {
            out: Out::Vec(buf),
            origin,
            endianness,
        }
    }

    /// Writes the encapsulation header and then the value into `buf`, from its first byte (a
    /// loaned shared-memory chunk sized with [`CdrWriter::counting`]). [`Self::finish_len`]
    /// says how many bytes were used, or that `buf` was too small.
    pub fn into_slice(buf: &'a mut [u8], endianness: Endianness) -> Self {
        let mut w = Self {
            out: Out::Slice { buf, pos: 0 },
            origin: 0,
            endianness,
        };
        w.put(&header(endianness));
        w.origin = Encapsulation::HEADER_LEN;
        w
    }

    /// Writes nothing and counts the bytes, encapsulation header included, that the same
    /// calls would write: [`Self::finish_len`]. Primitive sequences cost O(1) to count.
    pub fn counting(endianness: Endianness) -> Self {
        Self {
            out: Out::Count(Encapsulation::HEADER_LEN),
            origin: Encapsulation::HEADER_LEN,
            endianness,
        }
    }

    /// A writer with no encapsulation header whose alignment origin is the end of `buf`; used
    /// for nested encodings such as parameter lists.
    pub fn without_header(buf: Vec<u8>, endianness: Endianness) -> Self {
        let origin = buf.len();
        Self {
            out: Out::Vec(buf),
            origin,
            endianness,
        }
    }

    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Bytes written after the origin.
    pub fn position(&self) -> usize {
        self.end() - self.origin
    }

    /// Where the next byte goes, from the start of the buffer (logical for a short slice).
    #[inline]
    fn end(&self) -> usize {
        match &self.out {
            Out::Vec(buf) => buf.len(),
            Out::Slice { pos, .. } => *pos,
            Out::Count(n) => *n,
        }
    }

    /// Appends `bytes`. Into a slice without room for all of them, writes none and only
    /// advances the logical position (`finish_len` reports the shortfall).
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        match &mut self.out {
            Out::Vec(buf) => buf.extend_from_slice(bytes),
            Out::Slice { buf, pos } => {
                let end = pos.saturating_add(bytes.len());
                if let Some(dst) = buf.get_mut(*pos..end) {
                    dst.copy_from_slice(bytes);
                }
                *pos = end;
            }
            Out::Count(n) => *n = n.saturating_add(bytes.len()),
        }
    }

    #[inline]
    fn put_zeros(&mut self, count: usize) {
        match &mut self.out {
            Out::Vec(buf) => buf.resize(buf.len() + count, 0),
            Out::Slice { buf, pos } => {
                let end = pos.saturating_add(count);
                if let Some(dst) = buf.get_mut(*pos..end) {
                    dst.fill(0);
                }
                *pos = end;
            }
            Out::Count(n) => *n = n.saturating_add(count),
        }
    }

    /// Reserves capacity for `additional` more bytes (growable buffers only).
    pub fn reserve(&mut self, additional: usize) {
        if let Out::Vec(buf) = &mut self.out {
            buf.reserve(additional);
        }
    }

    /// Pads with zeros to a multiple of `alignment` (a power of two) from the origin.
    #[inline]
    pub fn align(&mut self, alignment: usize) {
        let misalignment = self.position() & (alignment - 1);
        if misalignment != 0 {
            self.put_zeros(alignment - misalignment);
        }
    }

    #[inline]
    pub fn write_u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    #[inline]
    pub fn write_i8(&mut self, v: i8) {
        self.put(&[v as u8]);
    }

    #[inline]
    pub fn write_bool(&mut self, v: bool) {
        self.put(&[u8::from(v)]);
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
        self.put(s.as_bytes());
        self.put(&[0]);
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
        if self.endianness == crate::Endianness::NATIVE || T::SIZE == 1 {
            self.put(bytemuck::cast_slice(values));
        } else if let Out::Count(n) = &mut self.out {
            *n = n.saturating_add(std::mem::size_of_val(values));
        } else {
            self.reserve(std::mem::size_of_val(values));
            for v in values {
                let mut swapped = *v;
                bytemuck::bytes_of_mut(&mut swapped).reverse();
                self.put(bytemuck::bytes_of(&swapped));
            }
        }
    }

    /// Writes raw bytes with no alignment.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.put(bytes);
    }

    /// The encoding of a struct with no members: one dummy byte (Cyclone and Fast DDS both do
    /// this so that every type has a non-zero size).
    pub fn write_empty_struct(&mut self) {
        self.put(&[0]);
    }

    /// Ends the stream and returns the whole buffer including the header. Only a writer made
    /// by [`Self::new`], [`Self::with_buffer`] or [`Self::without_header`] has one; the others
    /// return an empty vector (use [`Self::finish_len`]).
    pub fn finish(self) -> Vec<u8> {
        match self.out {
            Out::Vec(buf) => buf,
            Out::Slice { .. } | Out::Count(_) => Vec::new(),
        }
    }

    /// Ends the stream and returns its length in bytes from the start of the buffer (header
    /// included): what was written into the slice, or counted.
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] when the slice of [`Self::into_slice`] could not hold
    /// the value (its contents are then unspecified).
    pub fn finish_len(self) -> Result<usize, EncodeError> {
        match self.out {
            Out::Vec(buf) => Ok(buf.len()),
            Out::Slice { buf, pos } if pos > buf.len() => Err(EncodeError::BufferTooSmall {
                needed: pos,
                capacity: buf.len(),
            }),
            Out::Slice { pos, .. } => Ok(pos),
            Out::Count(n) => Ok(n),
        }
    }
}
