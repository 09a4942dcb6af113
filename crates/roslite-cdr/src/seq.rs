//! Primitive sequences that may borrow from a received buffer.
//!
//! Ownership: a [`SharedBuf`] is a reference-counted window onto bytes some transport received
//! (a heap buffer today, a shared-memory chunk later). A [`Seq`] decoded from it holds a clone
//! of that handle, so the bytes stay alive as long as any message still points into them, and
//! the message type itself carries no lifetime.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

use crate::Endianness;

/// Memory that can back a [`SharedBuf`].
///
/// Contract: `bytes()` returns the same slice (same address, same length) on every call for
/// the life of the value. Views decoded from it check alignment once, at decode time.
pub trait Backing: Send + Sync + 'static {
    fn bytes(&self) -> &[u8];
}

impl Backing for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl Backing for Box<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// Lets one serialized message be shared by several receivers without a copy.
impl Backing for Arc<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A cheaply clonable window onto received bytes.
#[derive(Clone)]
pub struct SharedBuf {
    backing: Store,
    range: Range<usize>,
}

/// What a [`SharedBuf`] keeps alive.
#[derive(Clone)]
enum Store {
    /// Bytes in one reference-counted allocation, taken as they are ([`SharedBuf::from_arc`]):
    /// no second allocation to hold them, and no call through a vtable to read them.
    Bytes(Arc<[u8]>),
    Other(Arc<dyn Backing>),
}

impl SharedBuf {
    /// Allocates once to hold `backing` (for an `Arc<[u8]>` already made, see
    /// [`Self::from_arc`], which does not).
    pub fn new(backing: impl Backing) -> Self {
        let len = backing.bytes().len();
        Self {
            backing: Store::Other(Arc::new(backing)),
            range: 0..len,
        }
    }

    pub fn from_vec(bytes: Vec<u8>) -> Self {
        Self::new(bytes)
    }

    /// The shared bytes themselves, with no allocation of their own (received messages that
    /// arrive in one piece are kept so, and a payload shared by several receivers is one).
    pub fn from_arc(bytes: Arc<[u8]>) -> Self {
        let len = bytes.len();
        Self {
            backing: Store::Bytes(bytes),
            range: 0..len,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        let all = match &self.backing {
            Store::Bytes(bytes) => bytes,
            Store::Other(backing) => backing.bytes(),
        };
        all.get(self.range.clone())
            .expect("Backing contract broken: bytes() changed length")
    }

    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// A sub-window, or `None` if `range` is outside this window.
    pub fn slice(&self, range: Range<usize>) -> Option<SharedBuf> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        let start = self.range.start + range.start;
        Some(Self {
            backing: self.backing.clone(),
            range: start..start + range.len(),
        })
    }

    /// [`Self::slice`] of a buffer no longer needed whole: the same backing, without another
    /// reference count taken and dropped; `None` (the buffer is dropped) if `range` is outside
    /// this window.
    pub fn into_slice(mut self, range: Range<usize>) -> Option<SharedBuf> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        let start = self.range.start + range.start;
        self.range = start..start + range.len();
        Some(self)
    }
}

impl fmt::Debug for SharedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedBuf({} bytes)", self.len())
    }
}

/// A CDR primitive that can be viewed in place: fixed size, any bit pattern valid.
/// (`bool` is not one: only 0 and 1 are valid.)
pub trait Prim:
    bytemuck::Pod + Default + PartialEq + PartialOrd + fmt::Debug + Send + Sync + 'static
{
    const SIZE: usize;
    fn from_bytes(chunk: &[u8], endianness: Endianness) -> Self;
}

macro_rules! prim {
    ($($t:ty),*) => {$(
        impl Prim for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn from_bytes(chunk: &[u8], endianness: Endianness) -> Self {
                let mut bytes = [0u8; std::mem::size_of::<$t>()];
                bytes.copy_from_slice(chunk);
                match endianness {
                    Endianness::Little => <$t>::from_le_bytes(bytes),
                    Endianness::Big => <$t>::from_be_bytes(bytes),
                }
            }
        }
    )*};
}

prim!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// A sequence of primitives: owned, a view into a received [`SharedBuf`], or *reserved*.
///
/// Dereferences to `[T]` in every state. Mutation through [`Seq::to_mut`] copies a view first.
///
/// A reserved sequence ([`Seq::reserved`]) has a length and no elements: it stands for data the
/// application writes later, in place, into the buffer the message is serialized into (a
/// publisher's shared-memory loan, see `roslite::Publisher::loan`). It is meant to be encoded
/// by [`CdrWriter::into_slice_leaving_holes`](crate::CdrWriter::into_slice_leaving_holes), which
/// writes its length and skips its elements. Read as a slice it is *empty*: `as_slice`, `Deref`
/// (so `len()` and iteration), `Debug`'s elements, `into_vec` and `to_mut` all see no elements;
/// [`Seq::reserved_len`] gives the reserved length. Nothing about it panics.
pub struct Seq<T: Prim>(Repr<T>);

enum Repr<T: Prim> {
    Owned(Vec<T>),
    /// Invariant: `buf.bytes()[offset..offset + len * T::SIZE]` exists and is aligned for `T`
    /// (checked in [`Seq::view`]; `Backing` promises the bytes never move).
    View {
        buf: SharedBuf,
        offset: usize,
        len: usize,
    },
    /// `len` elements to be written in place after encoding; no storage here.
    Reserved {
        len: usize,
    },
}

impl<T: Prim> Seq<T> {
    pub const fn new() -> Self {
        Self(Repr::Owned(Vec::new()))
    }

    /// A sequence of `len` elements whose contents the caller writes later, in place, into the
    /// buffer the message is encoded into (see the type's documentation). Allocates nothing.
    pub const fn reserved(len: usize) -> Self {
        Self(Repr::Reserved { len })
    }

    /// A view of `len` elements at byte `offset` of `buf`, if they are in range and aligned.
    pub fn view(buf: &SharedBuf, offset: usize, len: usize) -> Option<Self> {
        let end = offset.checked_add(len.checked_mul(T::SIZE)?)?;
        let bytes = buf.bytes().get(offset..end)?;
        bytemuck::try_cast_slice::<u8, T>(bytes).ok()?;
        Some(Self(Repr::View {
            buf: buf.clone(),
            offset,
            len,
        }))
    }

    /// True if this sequence points into a received buffer rather than owning its elements.
    pub fn is_view(&self) -> bool {
        matches!(self.0, Repr::View { .. })
    }

    /// True if this sequence was made by [`Seq::reserved`].
    pub fn is_reserved(&self) -> bool {
        matches!(self.0, Repr::Reserved { .. })
    }

    /// The length given to [`Seq::reserved`]; `None` for an owned sequence or a view.
    pub fn reserved_len(&self) -> Option<usize> {
        match self.0 {
            Repr::Reserved { len } => Some(len),
            Repr::Owned(_) | Repr::View { .. } => None,
        }
    }

    /// The elements; empty for a reserved sequence (it has none until encoded and filled).
    pub fn as_slice(&self) -> &[T] {
        match &self.0 {
            Repr::Owned(v) => v,
            Repr::View { buf, offset, len } => {
                let bytes = &buf.bytes()[*offset..*offset + *len * T::SIZE];
                // Alignment and range were checked in `view` and the backing never moves.
                bytemuck::cast_slice(bytes)
            }
            Repr::Reserved { .. } => &[],
        }
    }

    /// Mutable access; a view is copied into an owned vector first. A reserved sequence
    /// becomes an owned empty one (its reservation is given up, nothing is allocated for it).
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if !matches!(self.0, Repr::Owned(_)) {
            self.0 = Repr::Owned(self.as_slice().to_vec());
        }
        match &mut self.0 {
            Repr::Owned(v) => v,
            Repr::View { .. } | Repr::Reserved { .. } => {
                unreachable!("internal bug: view or reservation was just replaced")
            }
        }
    }

    /// The elements as a vector: a view is copied, a reserved sequence gives an empty one.
    pub fn into_vec(self) -> Vec<T> {
        match self.0 {
            Repr::Owned(v) => v,
            Repr::View { .. } | Repr::Reserved { .. } => self.as_slice().to_vec(),
        }
    }
}

impl<T: Prim> Deref for Seq<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Prim> Default for Seq<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Prim> Clone for Seq<T> {
    fn clone(&self) -> Self {
        match &self.0 {
            Repr::Owned(v) => Self(Repr::Owned(v.clone())),
            Repr::View { buf, offset, len } => Self(Repr::View {
                buf: buf.clone(),
                offset: *offset,
                len: *len,
            }),
            Repr::Reserved { len } => Self(Repr::Reserved { len: *len }),
        }
    }
}

impl<T: Prim> fmt::Debug for Seq<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Reserved { len } => write!(f, "Seq::reserved({len})"),
            Repr::Owned(_) | Repr::View { .. } => fmt::Debug::fmt(self.as_slice(), f),
        }
    }
}

/// Elements compare as slices; a reserved sequence equals only a reserved one of the same
/// length (not the empty sequence it reads as).
impl<T: Prim> PartialEq for Seq<T> {
    fn eq(&self, other: &Self) -> bool {
        self.reserved_len() == other.reserved_len() && self.as_slice() == other.as_slice()
    }
}

/// A reserved sequence equals no slice.
impl<T: Prim> PartialEq<[T]> for Seq<T> {
    fn eq(&self, other: &[T]) -> bool {
        !self.is_reserved() && self.as_slice() == other
    }
}

/// A reserved sequence equals no vector.
impl<T: Prim> PartialEq<Vec<T>> for Seq<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        !self.is_reserved() && self.as_slice() == other.as_slice()
    }
}

impl<T: Prim> From<Vec<T>> for Seq<T> {
    fn from(v: Vec<T>) -> Self {
        Self(Repr::Owned(v))
    }
}

impl<T: Prim> From<&[T]> for Seq<T> {
    fn from(v: &[T]) -> Self {
        Self(Repr::Owned(v.to_vec()))
    }
}

impl<T: Prim> FromIterator<T> for Seq<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self(Repr::Owned(iter.into_iter().collect()))
    }
}
