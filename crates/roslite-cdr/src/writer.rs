use std::any::TypeId;
use std::mem::MaybeUninit;
use std::ops::Range;

use crate::{Encapsulation, EncodeError, Endianness, Prim, Seq};

/// Writes plain CDR into a growable buffer, into a caller's slice (a shared-memory chunk), or
/// nowhere, only counting (to learn the encoded size before loaning a buffer of that size).
///
/// Alignment is measured from `origin`, the first byte after the encapsulation header, so a
/// writer can also append to a buffer that already holds other data (an RTPS submessage).
/// Padding bytes are written as zeros; readers must not depend on that (Fast CDR leaves garbage).
///
/// All three outputs go through the same `encode` code, so the count of
/// [`CdrWriter::counting`] is exactly what the other two write.
///
/// A reserved sequence ([`Seq::reserved`]) has no elements to write. Only a writer made by
/// [`CdrWriter::into_slice_leaving_holes`] accepts one: it writes the length and alignment,
/// leaves the element bytes as they are and records where they are ([`ReservedRange`]), so
/// the caller fills them in place afterwards. Counting counts them like any elements. Every
/// other writer fails with [`EncodeError::ReservedSequence`]: it would have to invent contents.
pub struct CdrWriter<'a> {
    /// The caller's slice of [`CdrWriter::into_slice`] (and its variant leaving holes), written
    /// straight from [`CdrWriter::put`]; empty for every other output, whose bytes all take
    /// [`CdrWriter::put_slow`]. Kept apart from `out` so that the common case, a primitive into
    /// a shared-memory loan, is a bounds check and a store, with no look at the output kind
    /// (matching the enum cost about 25 instructions per primitive).
    window: &'a mut [u8],
    out: Out<'a>,
    /// Where the next byte goes, from the start of the buffer: the length of a `Vec`; for a
    /// fixed buffer the logical position, which keeps counting past its end (nothing more is
    /// written then) so `finish_len` can say how much was needed. Kept here rather than in
    /// each `Out` so that alignment needs no look at the output (per primitive written).
    pos: usize,
    origin: usize,
    endianness: Endianness,
}

enum Out<'a> {
    Vec(Vec<u8>),
    /// Into `window`.
    Slice {
        /// `Some` when reserved sequences are welcome, with the ranges left for them so far.
        holes: Option<Vec<ReservedRange>>,
    },
    /// As `Slice` without holes, into memory not yet initialized: bytes are written strictly
    /// in order from the start, so after a successful finish every byte before `pos` is
    /// initialized (what [`CdrWriter::into_uninit`] promises).
    Uninit(&'a mut [MaybeUninit<u8>]),
    Count,
}

macro_rules! write_num {
    ($($name:ident: $t:ty;)*) => {$(
        #[inline(always)]
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
            window: &mut [],
            out: Out::Vec(buf),
            pos: origin,
            origin,
            endianness,
        }
    }

    /// Writes the encapsulation header and then the value into `buf`, from its first byte (a
    /// loaned shared-memory chunk sized with [`CdrWriter::counting`]). [`Self::finish_len`]
    /// says how many bytes were used, or that `buf` was too small.
    pub fn into_slice(buf: &'a mut [u8], endianness: Endianness) -> Self {
        Self::slice_writer(buf, endianness, None)
    }

    /// As [`Self::into_slice`], but a reserved sequence ([`Seq::reserved`]) is welcome: its
    /// length is written, its element bytes are skipped (left as `buf` holds them) and their
    /// range is recorded; [`Self::finish_with_holes`] returns the ranges in encode order. This
    /// is how a message is serialized into a loaned buffer whose bulk data the application then
    /// writes in place. The holes hold elements in `endianness`: filling them with native
    /// values is right when it is [`Endianness::NATIVE`].
    pub fn into_slice_leaving_holes(buf: &'a mut [u8], endianness: Endianness) -> Self {
        Self::slice_writer(buf, endianness, Some(Vec::new()))
    }

    /// As [`Self::into_slice`], into memory not yet initialized (a fresh allocation, so that a
    /// large message is not first zero-filled and then overwritten). After [`Self::finish_len`]
    /// returns `Ok(n)`, the first `n` bytes of `buf` are initialized: bytes are only ever
    /// written in order, padding included, and a reserved sequence is refused.
    pub fn into_uninit(buf: &'a mut [MaybeUninit<u8>], endianness: Endianness) -> Self {
        let mut w = Self {
            window: &mut [],
            out: Out::Uninit(buf),
            pos: 0,
            origin: 0,
            endianness,
        };
        w.put(&header(endianness));
        w.origin = Encapsulation::HEADER_LEN;
        w
    }

    fn slice_writer(
        buf: &'a mut [u8],
        endianness: Endianness,
        holes: Option<Vec<ReservedRange>>,
    ) -> Self {
        let mut w = Self {
            window: buf,
            out: Out::Slice { holes },
            pos: 0,
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
            window: &mut [],
            out: Out::Count,
            pos: Encapsulation::HEADER_LEN,
            origin: Encapsulation::HEADER_LEN,
            endianness,
        }
    }

    /// A writer with no encapsulation header whose alignment origin is the end of `buf`; used
    /// for nested encodings such as parameter lists.
    pub fn without_header(buf: Vec<u8>, endianness: Endianness) -> Self {
        let origin = buf.len();
        Self {
            window: &mut [],
            out: Out::Vec(buf),
            pos: origin,
            origin,
            endianness,
        }
    }

    pub fn endianness(&self) -> Endianness {
        self.endianness
    }

    /// Bytes written after the origin.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos - self.origin
    }

    /// Moves the position `len` bytes on; returns where they start.
    #[inline]
    fn advance(&mut self, len: usize) -> (usize, usize) {
        let start = self.pos;
        self.pos = start.saturating_add(len);
        (start, self.pos)
    }

    /// Appends `bytes`. Into a slice without room for all of them, writes none and only
    /// advances the logical position (`finish_len` reports the shortfall).
    ///
    /// Inlined into every `write_*` (and those into generated encoders): a primitive into a
    /// slice is then a bounds check and a store.
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.next_in_window(bytes.len()) {
            dst.copy_from_slice(bytes);
        } else {
            self.put_slow(bytes);
        }
    }

    /// The next `len` bytes of the caller's slice, the position moved past them; `None` (the
    /// position unmoved) when the window has no room for them, or is empty (other outputs).
    #[inline(always)]
    fn next_in_window(&mut self, len: usize) -> Option<&mut [u8]> {
        let start = self.pos;
        let end = start.checked_add(len)?;
        let dst = self.window.get_mut(start..end)?;
        self.pos = end;
        Some(dst)
    }

    /// [`Self::put`] for every output but a slice with room.
    #[inline(never)]
    fn put_slow(&mut self, bytes: &[u8]) {
        let (start, end) = self.advance(bytes.len());
        match &mut self.out {
            // No room left in the window (only the logical position moves).
            Out::Slice { .. } | Out::Count => {}
            Out::Vec(buf) => buf.extend_from_slice(bytes),
            Out::Uninit(buf) => {
                if let Some(dst) = buf.get_mut(start..end) {
                    // Compiles to one memcpy.
                    for (d, s) in dst.iter_mut().zip(bytes) {
                        d.write(*s);
                    }
                }
            }
        }
    }

    /// Alignment padding, out of line: most members need none, and the check for it stays
    /// inlined in [`Self::align`].
    #[inline(never)]
    fn put_zeros(&mut self, count: usize) {
        if let Some(dst) = self.next_in_window(count) {
            dst.fill(0);
            return;
        }
        let (start, end) = self.advance(count);
        match &mut self.out {
            Out::Slice { .. } | Out::Count => {}
            Out::Vec(buf) => buf.resize(end, 0),
            Out::Uninit(buf) => {
                if let Some(dst) = buf.get_mut(start..end) {
                    dst.fill(MaybeUninit::new(0));
                }
            }
        }
    }

    /// Reserves capacity for `additional` more bytes (growable buffers only).
    pub fn reserve(&mut self, additional: usize) {
        if let Out::Vec(buf) = &mut self.out {
            buf.reserve(additional);
        }
    }

    /// Pads with zeros to a multiple of `alignment` (a power of two) from the origin.
    #[inline(always)]
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
    #[inline(always)]
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

    /// A `string<=bound`, the bound counted the strict way: in bytes of UTF-8, not counting
    /// the NUL, as rclcpp counts it (rclpy counts characters), so every ROS 2 client library
    /// accepts what this writes.
    ///
    /// # Errors
    /// As [`Self::write_string`], plus [`EncodeError::StringBoundExceeded`].
    pub fn write_bounded_string(&mut self, s: &str, bound: usize) -> Result<(), EncodeError> {
        if s.len() > bound {
            return Err(EncodeError::StringBoundExceeded {
                bytes: s.len(),
                chars: s.chars().count(),
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

    /// A `wstring<=bound`, the bound counted the strict way: in UTF-16 code units, as rclcpp
    /// counts it (rclpy counts characters, and one outside the Basic Multilingual Plane is two
    /// units).
    ///
    /// # Errors
    /// As [`Self::write_wstring`], plus [`EncodeError::WStringBoundExceeded`].
    pub fn write_bounded_wstring(&mut self, s: &str, bound: usize) -> Result<(), EncodeError> {
        let units = s.encode_utf16().count();
        if units > bound {
            return Err(EncodeError::WStringBoundExceeded {
                units,
                chars: s.chars().count(),
                bound,
            });
        }
        self.write_wstring(s)
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
        } else if let Out::Count = self.out {
            self.advance(std::mem::size_of_val(values));
        } else {
            self.reserve(std::mem::size_of_val(values));
            for v in values {
                let mut swapped = *v;
                bytemuck::bytes_of_mut(&mut swapped).reverse();
                self.put(bytemuck::bytes_of(&swapped));
            }
        }
    }

    /// Writes an unbounded primitive sequence: its length, then its elements as
    /// [`Self::write_prim_slice`] does. A reserved sequence's elements are skipped (see the
    /// type's documentation).
    ///
    /// # Errors
    /// [`EncodeError::TooLong`]; [`EncodeError::ReservedSequence`] for a reserved sequence
    /// when this writer does not leave holes.
    pub fn write_prim_seq<T: Prim>(&mut self, seq: &Seq<T>) -> Result<(), EncodeError> {
        match seq.reserved_len() {
            None => {
                self.write_len(seq.len())?;
                self.write_prim_slice(seq.as_slice());
                Ok(())
            }
            Some(len) => {
                self.write_len(len)?;
                self.skip_reserved::<T>(len)
            }
        }
    }

    /// [`Self::write_prim_seq`] for a sequence declared with an upper bound.
    ///
    /// # Errors
    /// As [`Self::write_prim_seq`], plus [`EncodeError::BoundExceeded`].
    pub fn write_bounded_prim_seq<T: Prim>(
        &mut self,
        seq: &Seq<T>,
        bound: usize,
    ) -> Result<(), EncodeError> {
        let len = seq.reserved_len().unwrap_or(seq.len());
        if len > bound {
            return Err(EncodeError::BoundExceeded { len, bound });
        }
        self.write_prim_seq(seq)
    }

    /// Leaves room for `len` elements of `T` after the length just written, aligned (or not at
    /// all for none, as [`Self::write_prim_slice`] writes an empty body), without touching it.
    fn skip_reserved<T: Prim>(&mut self, len: usize) -> Result<(), EncodeError> {
        let size = len.checked_mul(T::SIZE).ok_or(EncodeError::TooLong(len))?;
        match &self.out {
            Out::Vec(_) | Out::Slice { holes: None, .. } | Out::Uninit(_) => {
                return Err(EncodeError::ReservedSequence { len })
            }
            Out::Slice { holes: Some(_), .. } | Out::Count => {}
        }
        if len > 0 {
            self.align(T::SIZE);
        }
        let (start, end) = self.advance(size);
        match &mut self.out {
            Out::Count => {}
            Out::Slice {
                holes: Some(holes), ..
            } => {
                holes.push(ReservedRange {
                    bytes: start..end,
                    elements: len,
                    element: TypeId::of::<T>(),
                    element_name: std::any::type_name::<T>(),
                });
            }
            Out::Vec(_) | Out::Slice { holes: None, .. } | Out::Uninit(_) => {
                unreachable!("internal bug: checked above")
            }
        }
        Ok(())
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
            Out::Slice { .. } | Out::Uninit(_) | Out::Count => Vec::new(),
        }
    }

    /// Ends the stream and returns its length in bytes from the start of the buffer (header
    /// included): what was written into the slice, or counted.
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] when the slice of [`Self::into_slice`] could not hold
    /// the value (its contents are then unspecified).
    pub fn finish_len(self) -> Result<usize, EncodeError> {
        let pos = self.pos;
        let capacity = match self.out {
            Out::Vec(_) | Out::Count => return Ok(pos),
            Out::Slice { .. } => self.window.len(),
            Out::Uninit(buf) => buf.len(),
        };
        if pos > capacity {
            return Err(EncodeError::BufferTooSmall {
                needed: pos,
                capacity,
            });
        }
        Ok(pos)
    }

    /// [`Self::finish_len`] plus, for a writer made by [`Self::into_slice_leaving_holes`], the
    /// ranges left for reserved sequences, in encode order (empty for other writers).
    ///
    /// # Errors
    /// As [`Self::finish_len`].
    pub fn finish_with_holes(mut self) -> Result<(usize, Vec<ReservedRange>), EncodeError> {
        let holes = match &mut self.out {
            Out::Slice { holes, .. } => holes.take().unwrap_or_default(),
            Out::Vec(_) | Out::Uninit(_) | Out::Count => Vec::new(),
        };
        Ok((self.finish_len()?, holes))
    }
}

/// Where [`CdrWriter::into_slice_leaving_holes`] left the elements of one reserved sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservedRange {
    /// Byte range in the writer's buffer, counted from its first byte (the encapsulation
    /// header's), aligned for the element type relative to the CDR origin.
    pub bytes: Range<usize>,
    /// Number of elements.
    pub elements: usize,
    /// `TypeId` of the element type, to check a typed view of the range.
    pub element: TypeId,
    /// The element type's name (`u8`, `f32`, ...), for error messages.
    pub element_name: &'static str,
}
