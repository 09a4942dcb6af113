use crate::{DecodeError, Encapsulation, Endianness, Prim, Seq, SharedBuf};

/// Reads plain CDR from a borrowed buffer.
///
/// Invariant: `pos <= data.len()`. Every read first checks that enough bytes remain, so no read
/// can index out of bounds, and every sequence length is checked against the remaining bytes
/// (times the smallest possible element size) before any allocation.
pub struct CdrReader<'a> {
    data: &'a [u8],
    /// The byte alignment is measured from (just after the encapsulation header).
    origin: usize,
    pos: usize,
    endianness: Endianness,
    /// When set, `data` is exactly `shared.bytes()`, and primitive sequences may be views into it.
    shared: Option<&'a SharedBuf>,
}

macro_rules! read_num {
    ($($name:ident: $t:ty;)*) => {$(
        #[inline]
        pub fn $name(&mut self) -> Result<$t, DecodeError> {
            const N: usize = std::mem::size_of::<$t>();
            self.align(N)?;
            let bytes: [u8; N] = self.take(N)?.try_into().map_err(|_| DecodeError::InvalidValue)?;
            Ok(match self.endianness {
                Endianness::Little => <$t>::from_le_bytes(bytes),
                Endianness::Big => <$t>::from_be_bytes(bytes),
            })
        }
    )*};
}

impl<'a> CdrReader<'a> {
    /// A reader over a payload that starts with a plain-CDR encapsulation header.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] for fewer than 4 bytes,
    /// [`DecodeError::UnsupportedEncapsulation`] for anything but CDR_BE/CDR_LE.
    pub fn new(payload: &'a [u8]) -> Result<Self, DecodeError> {
        let endianness = Self::parse_header(payload)?;
        Ok(Self {
            data: payload,
            origin: Encapsulation::HEADER_LEN,
            pos: Encapsulation::HEADER_LEN,
            endianness,
            shared: None,
        })
    }

    /// Like [`Self::new`], but primitive sequences decoded through [`Self::read_prim_seq`]
    /// borrow from `payload` instead of being copied.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn new_shared(payload: &'a SharedBuf) -> Result<Self, DecodeError> {
        let mut reader = Self::new(payload.bytes())?;
        reader.shared = Some(payload);
        Ok(reader)
    }

    /// A reader with no encapsulation header (the caller already parsed it).
    pub fn without_header(data: &'a [u8], endianness: Endianness) -> Self {
        Self {
            data,
            origin: 0,
            pos: 0,
            endianness,
            shared: None,
        }
    }

    fn parse_header(payload: &[u8]) -> Result<Endianness, DecodeError> {
        let Some(header) = payload.get(..Encapsulation::HEADER_LEN) else {
            return Err(DecodeError::Truncated {
                needed: Encapsulation::HEADER_LEN,
                remaining: payload.len(),
            });
        };
        let id = u16::from_be_bytes([header[0], header[1]]);
        match Encapsulation::from_id(id) {
            Some(enc @ (Encapsulation::CdrBe | Encapsulation::CdrLe)) => Ok(enc.endianness()),
            _ => Err(DecodeError::UnsupportedEncapsulation(id)),
        }
    }

    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Bytes consumed since the origin.
    pub fn position(&self) -> usize {
        self.pos - self.origin
    }

    /// Skips padding up to a multiple of `alignment` (a power of two). Padding contents are
    /// ignored. Trailing padding may be absent at the end of the stream (Cyclone omits it).
    #[inline]
    pub fn align(&mut self, alignment: usize) -> Result<(), DecodeError> {
        let misalignment = self.position() & (alignment - 1);
        if misalignment != 0 {
            self.take(alignment - misalignment)?;
        }
        Ok(())
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                needed: n,
                remaining: self.remaining(),
            });
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    #[inline]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        Ok(self.read_u8()? as i8)
    }

    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(DecodeError::InvalidBool(other)),
        }
    }

    read_num! {
        read_u16: u16;
        read_i16: i16;
        read_u32: u32;
        read_i32: i32;
        read_u64: u64;
        read_i64: i64;
        read_f32: f32;
        read_f64: f64;
    }

    /// Reads a sequence length and checks that `len * min_element_size` bytes remain, so the
    /// caller may reserve `len` elements without trusting the wire.
    ///
    /// `min_element_size` is the smallest number of bytes one element can occupy (1 for
    /// structs, which are at least one byte; the primitive size for primitives).
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] when the claimed elements cannot fit.
    pub fn read_len(&mut self, min_element_size: usize) -> Result<usize, DecodeError> {
        let len = self.read_u32()? as usize;
        let needed = len.saturating_mul(min_element_size);
        if needed > self.remaining() {
            return Err(DecodeError::Truncated {
                needed,
                remaining: self.remaining(),
            });
        }
        Ok(len)
    }

    /// As [`Self::read_len`], also enforcing a declared bound.
    ///
    /// # Errors
    /// [`DecodeError::BoundExceeded`], [`DecodeError::Truncated`].
    pub fn read_bounded_len(
        &mut self,
        min_element_size: usize,
        bound: usize,
    ) -> Result<usize, DecodeError> {
        let len = self.read_len(min_element_size)?;
        if len > bound {
            return Err(DecodeError::BoundExceeded { len, bound });
        }
        Ok(len)
    }

    /// Reads a CDR string as a view into the buffer.
    ///
    /// # Errors
    /// [`DecodeError::MalformedString`] for a zero length or missing NUL,
    /// [`DecodeError::InvalidUtf8`], [`DecodeError::Truncated`].
    pub fn read_string(&mut self) -> Result<&'a str, DecodeError> {
        let len = self.read_len(1)?;
        let bytes = self.take(len)?;
        let Some((&0, text)) = bytes.split_last() else {
            return Err(DecodeError::MalformedString);
        };
        std::str::from_utf8(text).map_err(|_| DecodeError::InvalidUtf8)
    }

    /// Reads a `string<=bound`. The bound is read as leniently as any ROS 2 client library
    /// writes it: rclcpp counts it in bytes, rclpy in characters, so a text of `bound`
    /// characters is accepted even when its UTF-8 takes more bytes (up to 4 a character,
    /// which bounds what an accepted string can hold).
    ///
    /// # Errors
    /// As [`Self::read_string`], plus [`DecodeError::StringBoundExceeded`].
    pub fn read_bounded_string(&mut self, bound: usize) -> Result<&'a str, DecodeError> {
        let s = self.read_string()?;
        // ASCII and short texts need no count: a character is at least one byte.
        if s.len() > bound {
            let chars = s.chars().count();
            if chars > bound {
                return Err(DecodeError::StringBoundExceeded { chars, bound });
            }
        }
        Ok(s)
    }

    /// Reads a wide string in the Fast DDS layout (see `CdrWriter::write_wstring`).
    ///
    /// # Errors
    /// [`DecodeError::InvalidValue`] for unpaired surrogates or units above 0xffff.
    pub fn read_wstring(&mut self) -> Result<String, DecodeError> {
        let len = self.read_len(4)?;
        self.read_wstring_units(len)
    }

    /// Reads a `wstring<=bound`, read as leniently as any ROS 2 client library writes it:
    /// rclcpp counts UTF-16 code units, rclpy characters, so `bound` characters outside the
    /// Basic Multilingual Plane (two units each) are accepted. More than `2 * bound` units
    /// cannot be that many characters and are refused before anything is allocated.
    ///
    /// # Errors
    /// As [`Self::read_wstring`], plus [`DecodeError::StringBoundExceeded`].
    pub fn read_bounded_wstring(&mut self, bound: usize) -> Result<String, DecodeError> {
        let len = self.read_len(4)?;
        if len > bound.saturating_mul(2) {
            // Count the characters for the error without keeping the units: each unit that is
            // not the second half of a surrogate pair starts one.
            let mut chars = 0;
            for _ in 0..len {
                let unit = self.read_u32()?;
                chars += usize::from(!(0xdc00..0xe000).contains(&unit));
            }
            return Err(DecodeError::StringBoundExceeded { chars, bound });
        }
        let text = self.read_wstring_units(len)?;
        if len > bound {
            let chars = text.chars().count();
            if chars > bound {
                return Err(DecodeError::StringBoundExceeded { chars, bound });
            }
        }
        Ok(text)
    }

    fn read_wstring_units(&mut self, len: usize) -> Result<String, DecodeError> {
        let mut units = Vec::with_capacity(len);
        for _ in 0..len {
            let unit = u16::try_from(self.read_u32()?).map_err(|_| DecodeError::InvalidValue)?;
            units.push(unit);
        }
        String::from_utf16(&units).map_err(|_| DecodeError::InvalidValue)
    }

    /// Reads `len` primitives (the body of an array or sequence, length already read).
    ///
    /// On a shared reader with native byte order and a suitably aligned buffer the result is a
    /// view into the received payload; otherwise the values are copied (and byte-swapped).
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn read_prim_seq<T: Prim>(&mut self, len: usize) -> Result<Seq<T>, DecodeError> {
        if len == 0 {
            // Writers emit no alignment padding for an empty body.
            return Ok(Seq::new());
        }
        self.align(T::SIZE)?;
        let byte_len = len.checked_mul(T::SIZE).ok_or(DecodeError::Truncated {
            needed: usize::MAX,
            remaining: self.remaining(),
        })?;
        let start = self.pos;
        let bytes = self.take(byte_len)?;
        if self.endianness == Endianness::NATIVE {
            if let Some(shared) = self.shared {
                if let Some(view) = Seq::view(shared, start, len) {
                    return Ok(view);
                }
            }
        }
        Ok(Seq::from(self.copy_prims::<T>(bytes)))
    }

    /// Reads `len` primitives into a vector (always a copy).
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn read_prim_vec<T: Prim>(&mut self, len: usize) -> Result<Vec<T>, DecodeError> {
        if len == 0 {
            return Ok(Vec::new());
        }
        self.align(T::SIZE)?;
        let byte_len = len.checked_mul(T::SIZE).ok_or(DecodeError::Truncated {
            needed: usize::MAX,
            remaining: self.remaining(),
        })?;
        let bytes = self.take(byte_len)?;
        Ok(self.copy_prims(bytes))
    }

    /// Fills a fixed-size array of primitives.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn read_prim_array<T: Prim, const N: usize>(&mut self) -> Result<[T; N], DecodeError> {
        self.align(T::SIZE)?;
        let bytes = self.take(N * T::SIZE)?;
        let mut out = [T::zeroed(); N];
        for (slot, chunk) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *slot = T::from_bytes(chunk, self.endianness);
        }
        Ok(out)
    }

    fn copy_prims<T: Prim>(&self, bytes: &[u8]) -> Vec<T> {
        if self.endianness == Endianness::NATIVE {
            if let Ok(aligned) = bytemuck::try_cast_slice::<u8, T>(bytes) {
                return aligned.to_vec();
            }
        }
        bytes
            .chunks_exact(T::SIZE)
            .map(|chunk| T::from_bytes(chunk, self.endianness))
            .collect()
    }

    /// Reads raw bytes with no alignment.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        self.take(n)
    }

    /// Reads the one dummy byte of a struct with no members.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn read_empty_struct(&mut self) -> Result<(), DecodeError> {
        self.take(1).map(|_| ())
    }
}
