//! What a publisher hands its messages to: an [`Outlet`] per backend path, which may lend its
//! own memory ([`Lent`]) for the message to be serialized into.

use std::sync::Arc;

use roslite_cdr::EncodeError;

use super::MessageInfo;

/// Receives the serialized messages of one local publisher.
///
/// Per publish, the publisher asks every outlet [`Self::is_active`]; if any is, it asks the
/// active outlets, in attach order, for a [`Self::loan`] big enough for the message (sized
/// from the last message's length, or counted). The first loan is serialized into, in place,
/// and sent with [`OutletLoan::send`]; every other active outlet gets [`Self::send`] with the
/// same bytes (copied out of the loan once, only when there is such an outlet). When exactly
/// one outlet is active and no subscription in this process takes the message, the publisher
/// first offers it [`Self::send_in_place`], the three steps in one call.
pub trait Outlet: Send + Sync {
    /// `payload` is the whole serialized message, shared by every outlet of this publish.
    ///
    /// # Errors
    /// [`SendTimeout`] when a reliable keep-all reader had no room for `max_blocking_time`.
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout>;

    /// Whether a message published now would go anywhere through this outlet. `publish` skips
    /// outlets that say no, and serializes nothing when none says yes. The answer may be stale
    /// by the time the message is sent (a reader may come or go); the outlet copes either way.
    fn is_active(&self) -> bool {
        true
    }

    /// A buffer of `len` bytes in the outlet's own memory (a shared-memory chunk) for the
    /// publisher to serialize into, which may use less of it; `None` (the default): give me
    /// the bytes with [`Self::send`].
    fn loan(&self, _len: usize) -> Option<Lent> {
        None
    }

    /// [`Self::loan`], [`OutletLoan::write`] and [`OutletLoan::send`] in one call, for a
    /// publish that goes through this outlet alone (nobody else needs the written bytes), so
    /// that no loan is held between the steps: `write` fills `len` bytes and returns how many
    /// it used. `None` (the default) when the outlet lends no memory, or has none now: the
    /// publisher then takes the general path.
    fn send_in_place(
        &self,
        _len: usize,
        _write: &mut WriteInto<'_>,
        _info: &MessageInfo,
    ) -> Option<Result<SentInPlace, EncodeError>> {
        None
    }

    /// Counters for tests and tools; `None` when the outlet keeps none.
    fn stats(&self) -> Option<OutletStats> {
        None
    }
}

/// Serializes a message into the buffer it is given and returns how many bytes it used: what a
/// publisher hands an outlet's memory ([`OutletLoan::write`], [`Outlet::send_in_place`]).
pub type WriteInto<'a> = dyn FnMut(&mut [u8]) -> Result<usize, EncodeError> + 'a;

/// A message [`Outlet::send_in_place`] wrote into the outlet's memory and sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentInPlace {
    /// As [`Outlet::send`]'s.
    pub result: Result<(), SendTimeout>,
    /// Whether the subscribers read the very bytes written (shared memory), as opposed to a
    /// copy the transport makes.
    pub shared_memory: bool,
}

/// A buffer loaned by an [`Outlet`] for one message. Dropping it unsent gives it back.
///
/// Its address matters to loaned messages: the bytes of [`Self::write`]'s buffer should start
/// 4 bytes past an 8-byte boundary, so that the CDR body after the 4-byte encapsulation header
/// is 8-aligned and `uint64[]`/`float64[]` holes can be handed out as typed slices.
pub trait OutletLoan: Send {
    /// Lets `write` fill the buffer (exactly the loaned length) in place; `write` returns how
    /// many bytes it used. Called at most once.
    ///
    /// # Errors
    /// Whatever `write` returns.
    fn write(&mut self, write: &mut WriteInto<'_>) -> Result<(), EncodeError>;

    /// The bytes written so far (empty before [`Self::write`]).
    fn written(&self) -> &[u8];

    /// The same bytes, writable: a loaned message
    /// ([`Publisher::loan`](crate::Publisher::loan)) leaves holes for its reserved sequences
    /// that the application fills here before sending. Must be the very memory that
    /// [`Self::send`] sends (no copy in between), with the same address as [`Self::written`].
    fn written_mut(&mut self) -> &mut [u8];

    /// Sends the written bytes through the outlet that loaned the buffer. Called at most
    /// once: the loan is spent afterwards (it sends nothing more and gives nothing back).
    ///
    /// # Errors
    /// As [`Outlet::send`].
    fn send(&mut self, info: &MessageInfo) -> Result<(), SendTimeout>;
}

/// Largest message a thread serializes into its reused buffer ([`take_send_buffer`]) to send
/// from it.
pub(crate) const SEND_BUFFER_MAX: usize = 64 * 1024;

thread_local! {
    /// The buffer this thread serializes small messages into before they are copied or sent;
    /// empty while in use (a second use at once gets a new one).
    static SEND_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// This thread's reused serialization buffer, with its contents of last time; give it back
/// with [`give_back_send_buffer`].
pub(crate) fn take_send_buffer() -> Vec<u8> {
    SEND_BUFFER.with(std::cell::Cell::take)
}

/// Keeps `buf` for this thread's next [`take_send_buffer`], unless it grew well beyond
/// [`SEND_BUFFER_MAX`] (the first message of a topic, of a size not known yet, may have been
/// large): a thread does not hold on to more than twice that.
pub(crate) fn give_back_send_buffer(buf: Vec<u8>) {
    if buf.capacity() <= 2 * SEND_BUFFER_MAX {
        SEND_BUFFER.with(|b| b.set(buf));
    }
}

/// A buffer an [`Outlet`] lent: a shared-memory chunk held as it is, so that a publish
/// allocates nothing for it (one allocation in three of a same-host echo), any other kind
/// boxed.
pub enum Lent {
    SharedMemory(super::loan::ShmLoan),
    /// A buffer the socket copies from: serialized into without an allocation, but not shared.
    UnixSocket(super::loan::UdsLoan),
    Other(Box<dyn OutletLoan>),
}

impl Lent {
    /// Whether the subscribers read the very bytes written (shared memory), as opposed to a
    /// copy the transport makes.
    pub fn is_shared_memory(&self) -> bool {
        matches!(self, Self::SharedMemory(_))
    }
}

impl std::ops::Deref for Lent {
    type Target = dyn OutletLoan;

    fn deref(&self) -> &Self::Target {
        match self {
            Self::SharedMemory(loan) => loan,
            Self::UnixSocket(loan) => loan,
            Self::Other(loan) => &**loan,
        }
    }
}

impl std::ops::DerefMut for Lent {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Self::SharedMemory(loan) => loan,
            Self::UnixSocket(loan) => loan,
            Self::Other(loan) => &mut **loan,
        }
    }
}

/// A reliable keep-all reader of an outlet had no room for the message during the whole
/// `max_blocking_time` (`qos::MAX_BLOCKING_TIME`, 100 ms), so it did not
/// get it (DDS `write` returning `TIMEOUT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendTimeout;

/// Sends `payload` through each of `outlets`, also through those after one that timed out.
///
/// # Errors
/// [`SendTimeout`] if any of them timed out.
pub(crate) fn send_to_each<'a>(
    outlets: impl IntoIterator<Item = &'a Arc<dyn Outlet>>,
    payload: &Arc<[u8]>,
    info: &MessageInfo,
) -> Result<(), SendTimeout> {
    let mut timed_out = false;
    for outlet in outlets {
        timed_out |= outlet.send(payload, info).is_err();
    }
    if timed_out {
        return Err(SendTimeout);
    }
    Ok(())
}

/// What an outlet has carried, by how the bytes reached its own memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutletStats {
    /// `shm`, `uds`, ...
    pub transport: &'static str,
    /// Readers attached now (a subscription that is gone, or whose process died, is no longer
    /// counted once the outlet has seen its connection close).
    pub readers: usize,
    /// Messages sent.
    pub sent: u64,
    /// Bytes of the messages sent.
    pub sent_bytes: u64,
    /// Of `sent_bytes`, those serialized straight into the outlet's loaned memory.
    pub in_place_bytes: u64,
    /// Of `sent_bytes`, those the outlet copied from a buffer it was handed.
    pub copied_bytes: u64,
    /// Buffers of the outlet's own memory in use now (loaned, or held by readers): a gauge
    /// that returns to 0 when nothing is loaned or held (shared memory; 0 for other outlets).
    pub buffers_in_use: usize,
}
