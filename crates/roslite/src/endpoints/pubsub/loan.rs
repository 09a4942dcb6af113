//! Loaned messages: the application writes bulk data straight into the buffer that is sent.
//!
//! [`Publisher::loan`] serializes a message whose large primitive arrays are reserved
//! ([`Seq::reserved`](roslite_cdr::Seq::reserved)) into memory an outlet loans (a
//! shared-memory chunk), leaving a hole for
//! each reserved array; [`LoanedMessage::sequence_mut`] hands a hole out as `&mut [E]`, and
//! [`LoanedMessage::publish`] sends the chunk as it is. Nothing is copied on the way to
//! same-host subscribers, which decode the arrays as views into the same chunk.
//!
//! Ownership: the loan holds the chunk (count 1 in the shared-memory writer) until `publish`
//! hands it to the writer's readers or dropping the loan gives it back. Sequence numbers are
//! taken at `publish`, so a dropped loan leaves no gap. Which outlets take part is decided
//! again at `publish`, as for [`Publisher::publish`]: the lending outlet sends the chunk, every
//! other active outlet gets one copy of the filled bytes, inactive ones are told they sat the
//! message out, and subscriptions in this process get the message decoded from the filled
//! bytes.
//!
//! Without an outlet that loans (no same-host subscriber over shared memory), the buffer is an
//! 8-aligned heap allocation: the API works the same, [`LoanedMessage::is_shared_memory`] says
//! false, and local subscriptions then decode their arrays as views into that allocation.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use roslite_cdr::{Backing, Endianness, Prim, ReservedRange, SharedBuf};
use roslite_msgs::Message;

use super::{Outgoing, PublishError, Publisher, PublisherShared};
use crate::seam::Lent;

/// Loans are encoded in the machine's byte order, so that the application's native values
/// written into a hole are the right bytes (publish uses little endian; readers accept both).
const LOAN_ORDER: Endianness = Endianness::NATIVE;

/// Bytes before the serialized message in a heap loan, as in a shared-memory chunk: with the
/// 4-byte encapsulation header after them, the CDR body starts 8-aligned.
const HEAP_LEAD: usize = 4;

impl<T: Message> Publisher<T> {
    /// Loans a buffer for `message` and serializes the message into it, leaving a hole for
    /// every reserved sequence ([`Seq::reserved`](roslite_cdr::Seq::reserved)) for the caller
    /// to fill in place ([`LoanedMessage::sequence_mut`]) before
    /// [`LoanedMessage::publish`]. rclcpp calls this `borrow_loaned_message`.
    ///
    /// The buffer is a shared-memory chunk when a subscriber on this host reads this topic
    /// over shared memory (the first active outlet that loans, in attach order), otherwise a
    /// heap allocation ([`LoanedMessage::is_shared_memory`]). Everything but the holes is
    /// written now, once; a hole holds unspecified bytes (a reused chunk's older sample, or
    /// zeros on the heap) until written. The message is encoded in the machine's byte order.
    ///
    /// ```no_run
    /// # use roslite::msgs::std_msgs::msg::UInt8MultiArray;
    /// # use roslite::msgs::cdr::Seq;
    /// # fn run(publisher: &roslite::Publisher<UInt8MultiArray>) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut loan = publisher.loan(UInt8MultiArray {
    ///     data: Seq::reserved(4 << 20),
    ///     ..Default::default()
    /// })?;
    /// loan.sequence_mut::<u8>(0)?.fill(7); // written in place, in shared memory if possible
    /// loan.publish()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`PublishError::Serialize`] if the message cannot be serialized (a bounded string or
    /// sequence over its bound).
    pub fn loan(&self, message: T) -> Result<LoanedMessage<'_, T>, PublishError> {
        let shared = &*self.shared;
        let len =
            roslite_cdr::encoded_len(&message, LOAN_ORDER).map_err(PublishError::Serialize)?;
        // Asked outside the lock, from a snapshot, as `publish` does.
        for (id, outlet) in shared.outlets().iter() {
            let id = *id;
            if !outlet.is_active() {
                continue;
            }
            // Only shared memory is worth it: any other outlet copies the bytes anyway.
            let Some(mut outlet_loan) = outlet.loan(len).filter(Lent::is_shared_memory) else {
                continue;
            };
            let mut holes = Vec::new();
            outlet_loan
                .write(&mut |buf| {
                    let (used, ranges) =
                        roslite_cdr::to_slice_leaving_holes(&message, LOAN_ORDER, buf)?;
                    holes = ranges;
                    Ok(used)
                })
                .map_err(PublishError::Serialize)?;
            return Ok(LoanedMessage {
                publisher: shared,
                buffer: LoanBuffer::Outlet {
                    lender: id,
                    loan: outlet_loan,
                },
                holes,
                _type: PhantomData,
            });
        }
        let mut heap = HeapBytes::zeroed(len);
        let (used, holes) =
            roslite_cdr::to_slice_leaving_holes(&message, LOAN_ORDER, heap.bytes_mut())
                .map_err(PublishError::Serialize)?;
        heap.len = used;
        Ok(LoanedMessage {
            publisher: shared,
            buffer: LoanBuffer::Heap(heap),
            holes,
            _type: PhantomData,
        })
    }
}

/// A message serialized into a loaned buffer, with holes for its reserved sequences that the
/// application fills in place; made by [`Publisher::loan`]. [`Self::publish`] sends it;
/// dropping it unpublished gives the buffer back (no sequence number is used up).
pub struct LoanedMessage<'p, T: Message> {
    publisher: &'p PublisherShared<T>,
    buffer: LoanBuffer,
    /// One per reserved sequence, in encode order; ranges index the serialized bytes.
    holes: Vec<ReservedRange>,
    _type: PhantomData<fn(T)>,
}

enum LoanBuffer {
    /// Memory of the outlet attached under id `lender` (a shared-memory chunk), written.
    Outlet {
        lender: u64,
        loan: Lent,
    },
    Heap(HeapBytes),
}

impl LoanBuffer {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Outlet { loan, .. } => loan.written(),
            Self::Heap(heap) => heap.bytes(),
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Self::Outlet { loan, .. } => loan.written_mut(),
            Self::Heap(heap) => heap.bytes_mut(),
        }
    }
}

impl<T: Message> LoanedMessage<'_, T> {
    /// The reserved sequence `index` (counted in encode order, that is field order, from 0)
    /// as elements of `E`, to write in place. Its contents are unspecified until written.
    ///
    /// # Errors
    /// [`LoanError::NoSuchSequence`] past the last reserved sequence;
    /// [`LoanError::ElementType`] when that sequence's elements are not `E`;
    /// [`LoanError::Misaligned`] if the loaned memory does not align it for `E` (an outlet
    /// breaking the alignment contract of [`OutletLoan`](crate::seam::OutletLoan)).
    pub fn sequence_mut<E: Prim>(&mut self, index: usize) -> Result<&mut [E], LoanError> {
        let hole = self.holes.get(index).ok_or(LoanError::NoSuchSequence {
            index,
            reserved: self.holes.len(),
        })?;
        if hole.element != TypeId::of::<E>() {
            return Err(LoanError::ElementType {
                index,
                reserved: hole.element_name,
                requested: std::any::type_name::<E>(),
            });
        }
        let range = hole.bytes.clone();
        let bytes = self
            .buffer
            .bytes_mut()
            .get_mut(range)
            // Invariant: the writer recorded the range inside the bytes it reported as used,
            // and the buffer keeps exactly those bytes.
            .expect("internal bug: a reserved range lies outside the loaned message");
        let address = bytes.as_ptr() as usize;
        bytemuck::try_cast_slice_mut(bytes).map_err(|_| LoanError::Misaligned {
            index,
            address,
            alignment: std::mem::align_of::<E>(),
        })
    }

    /// The reserved sequences, in encode order: element type, count and byte range.
    pub fn reserved(&self) -> &[ReservedRange] {
        &self.holes
    }

    /// The serialized message as it stands (encapsulation header included; holes as filled).
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.bytes()
    }

    /// True when the buffer is memory a transport loaned (a shared-memory chunk that same-host
    /// subscribers will read in place); false for the heap fallback.
    pub fn is_shared_memory(&self) -> bool {
        matches!(self.buffer, LoanBuffer::Outlet { .. })
    }

    /// Publishes the message as filled: numbered and timestamped now, like
    /// [`Publisher::publish`]. The lending outlet sends the buffer itself (no copy); every
    /// other active outlet (RTPS, a Unix socket) gets one copy of the bytes; subscriptions in
    /// this process get the message decoded from them: from a copy when the buffer is shared
    /// memory (the chunk belongs to the readers once sent), in place otherwise.
    ///
    /// # Errors
    /// [`PublishError::LoanNotDecodable`] if the bytes do not decode as `T` (only possible when
    /// `T`'s encoder and decoder disagree); subscribers elsewhere have received it even then.
    /// [`PublishError::Timeout`] as [`Publisher::publish`]; local subscriptions have received
    /// it even then.
    pub fn publish(self) -> Result<(), PublishError> {
        let Self {
            publisher, buffer, ..
        } = self;
        let info = publisher.next_info();
        let lender = match &buffer {
            LoanBuffer::Outlet { lender, .. } => Some(*lender),
            LoanBuffer::Heap(_) => None,
        };
        let others = publisher.active_outlets(lender);
        let counters = &publisher.send_counters;
        counters.loans_published.fetch_add(1, Ordering::Relaxed);
        if lender.is_some() || !others.is_empty() {
            counters.count_serialized(lender.is_some());
        }
        let payload = (!others.is_empty()).then(|| counters.copy_out(buffer.bytes()));
        let remote_info = info.as_serialized();
        let wants_local = publisher.wants_local();
        let (loan, local) = match buffer {
            LoanBuffer::Outlet { loan, .. } => {
                // Copied before the chunk is sent: from then on it belongs to its readers.
                let copy = wants_local.then(|| SharedBuf::new(HeapBytes::copy_of(loan.written())));
                (Some(loan), copy)
            }
            // Nobody writes the heap buffer any more: local subscriptions view it in place.
            LoanBuffer::Heap(heap) => (None, wants_local.then(|| SharedBuf::new(heap))),
        };
        let sent = Outgoing {
            loan,
            payload,
            others,
        }
        .send(&remote_info);
        if let Some(bytes) = local {
            let message =
                roslite_cdr::from_shared::<T>(&bytes).map_err(PublishError::LoanNotDecodable)?;
            let delivered = publisher.deliver_local(Arc::new(message), info, None);
            return sent.and(delivered.map_err(PublishError::from));
        }
        sent
    }
}

impl<T: Message> fmt::Debug for LoanedMessage<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoanedMessage")
            .field("type", &T::TYPE_NAME)
            .field("len", &self.buffer.bytes().len())
            .field("shared_memory", &self.is_shared_memory())
            .field("reserved", &self.holes)
            .finish()
    }
}

/// Why [`LoanedMessage::sequence_mut`] cannot hand out a reserved sequence. API misuse, except
/// `Misaligned`, which a transport's loan would cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoanError {
    /// The message has only `reserved` reserved sequences.
    NoSuchSequence { index: usize, reserved: usize },
    /// Reserved sequence `index` holds `reserved` elements, not the `requested` type.
    ElementType {
        index: usize,
        reserved: &'static str,
        requested: &'static str,
    },
    /// Reserved sequence `index` starts at `address`, not a multiple of the element type's
    /// `alignment`.
    Misaligned {
        index: usize,
        address: usize,
        alignment: usize,
    },
}

impl fmt::Display for LoanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchSequence { index, reserved } => write!(
                f,
                "no reserved sequence {index}: the message has {reserved} (counted from 0 in \
                 field order)"
            ),
            Self::ElementType {
                index,
                reserved,
                requested,
            } => write!(
                f,
                "reserved sequence {index} holds {reserved} elements, not {requested}"
            ),
            Self::Misaligned {
                index,
                address,
                alignment,
            } => write!(
                f,
                "reserved sequence {index} starts at {address:#x}, which is not {alignment}-byte \
                 aligned in the loaned memory"
            ),
        }
    }
}

impl std::error::Error for LoanError {}

/// Heap memory for a serialized message whose CDR body is 8-aligned: `len` bytes starting
/// [`HEAP_LEAD`] bytes into `u64` storage (the allocator aligns it for `u64`).
struct HeapBytes {
    words: Box<[u64]>,
    len: usize,
}

impl HeapBytes {
    /// Zeroed room for `len` bytes (the allocator hands out fresh zero pages for large ones).
    fn zeroed(len: usize) -> Self {
        Self {
            words: vec![0u64; (HEAP_LEAD + len).div_ceil(8)].into_boxed_slice(),
            len,
        }
    }

    fn copy_of(bytes: &[u8]) -> Self {
        let mut heap = Self::zeroed(bytes.len());
        heap.bytes_mut().copy_from_slice(bytes);
        heap
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[HEAP_LEAD..HEAP_LEAD + self.len]
    }
}

impl Backing for HeapBytes {
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[HEAP_LEAD..HEAP_LEAD + self.len]
    }
}
