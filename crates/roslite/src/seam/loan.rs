//! The memory a backend may lend a publisher for one message, in the two kinds that exist: a
//! chunk of shared memory the readers map and read in place ([`ShmLoan`]), and a buffer this
//! thread reuses that a socket write copies from ([`UdsLoan`]). Both sit behind [`Lent`] as
//! they are, so that a publish allocates nothing for its loan.
//!

use std::sync::Arc;

use roslite_cdr::EncodeError;
use roslite_shm::{Loan, LoanUninit, UdsWriter};

use super::{MessageInfo, SendTimeout};

/// Serializes a message into the buffer it is given and returns how many bytes it used: what a
/// publisher hands an outlet's memory ([`OutletLoan::write`], [`Outlet::send_in_place`](super::Outlet::send_in_place)).
pub type WriteInto<'a> = dyn FnMut(&mut [u8]) -> Result<usize, EncodeError> + 'a;

/// A buffer loaned by an [`Outlet`](super::Outlet) for one message. Dropping it unsent gives it back.
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
    /// As [`Outlet::send`](super::Outlet::send).
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

/// A buffer an [`Outlet`](super::Outlet) lent: a shared-memory chunk held as it is, so that a publish
/// allocates nothing for it (one allocation in three of a same-host echo), any other kind
/// boxed.
pub enum Lent {
    SharedMemory(ShmLoan),
    /// A buffer the socket copies from: serialized into without an allocation, but not shared.
    UnixSocket(UdsLoan),
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

/// Bytes before the serialized message in a shared-memory chunk. Chunks start page- or
/// power-of-two-aligned; the CDR body follows a 4-byte encapsulation header and aligns 8-byte
/// values from its own start, so a 4-byte lead puts that start on 8 bytes and `uint64[]`/
/// `float64[]` arrays decode as views in place instead of being copied.
pub(crate) const SAMPLE_LEAD: usize = 4;

/// A same-host send's outcome as the publisher sees it: a keep-all reader that stayed full for
/// `max_blocking_time` (the sample then went to none of the writer's readers) is a timeout;
/// any other failure (a socket error of a reader that is going away) loses the sample for the
/// readers concerned only, who count the gap as lost.
pub(crate) fn timed_out(result: Result<u64, roslite_shm::SendError>) -> Result<(), SendTimeout> {
    match result {
        Err(roslite_shm::SendError::Timeout) => Err(SendTimeout),
        Ok(_) | Err(_) => Ok(()),
    }
}

/// Lets `write` fill a chunk after the [`SAMPLE_LEAD`] zero bytes that put the CDR body on an
/// 8-byte boundary; returns the bytes used, lead included.
pub(crate) fn write_after_lead(
    chunk: &mut [u8],
    write: &mut WriteInto<'_>,
) -> Result<usize, EncodeError> {
    let (lead, rest) = chunk.split_at_mut(SAMPLE_LEAD);
    lead.fill(0);
    write(rest).map(|used| SAMPLE_LEAD + used)
}

/// A shared-memory chunk the publisher serializes into: loaned, then written, then sent,
/// numbered as the publisher numbers its messages (see `ShmWriter::number_from`).
pub struct ShmLoan(ShmLoanState);

impl ShmLoan {
    pub(crate) fn new(loan: LoanUninit) -> Self {
        Self(ShmLoanState::Uninit(loan))
    }
}

enum ShmLoanState {
    Uninit(LoanUninit),
    Written(Loan),
    /// Writing failed (the chunk went back to the pool), or the chunk was sent.
    Spent,
}

impl OutletLoan for ShmLoan {
    fn write(&mut self, write: &mut WriteInto<'_>) -> Result<(), EncodeError> {
        match std::mem::replace(&mut self.0, ShmLoanState::Spent) {
            ShmLoanState::Uninit(loan) => {
                let loan = loan.write_with(|chunk| write_after_lead(chunk, write))?;
                self.0 = ShmLoanState::Written(loan);
                Ok(())
            }
            // A second write: keep what the first one wrote.
            other => {
                self.0 = other;
                Ok(())
            }
        }
    }

    fn written(&self) -> &[u8] {
        match &self.0 {
            ShmLoanState::Written(loan) => loan.payload().get(SAMPLE_LEAD..).unwrap_or(&[]),
            ShmLoanState::Uninit(_) | ShmLoanState::Spent => &[],
        }
    }

    fn written_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            ShmLoanState::Written(loan) => {
                loan.payload_mut().get_mut(SAMPLE_LEAD..).unwrap_or(&mut [])
            }
            ShmLoanState::Uninit(_) | ShmLoanState::Spent => &mut [],
        }
    }

    fn send(&mut self, info: &MessageInfo) -> Result<(), SendTimeout> {
        match std::mem::replace(&mut self.0, ShmLoanState::Spent) {
            ShmLoanState::Written(loan) => timed_out(loan.send_numbered(
                info.publication_sequence_number,
                info.source_timestamp.as_nanos(),
            )),
            ShmLoanState::Uninit(_) | ShmLoanState::Spent => Ok(()),
        }
    }
}

/// `bytes` sent to `writer`'s readers, numbered and stamped as the publish `info` says.
pub(crate) fn send_uds(
    writer: &UdsWriter,
    bytes: &[u8],
    info: &MessageInfo,
) -> Result<(), SendTimeout> {
    timed_out(writer.send_numbered(
        info.publication_sequence_number,
        bytes,
        info.source_timestamp.as_nanos(),
    ))
}

/// A message serialized for a Unix socket into the thread's reused buffer, after a lead of
/// `SAMPLE_LEAD` (4) bytes that keeps the CDR body 8-aligned as in a shared-memory chunk.
pub struct UdsLoan {
    writer: Arc<UdsWriter>,
    buf: Vec<u8>,
    len: usize,
    /// Bytes written; `None` until written, and once sent.
    used: Option<usize>,
}

impl UdsLoan {
    /// `buf` (this thread's reused send buffer, at least [`SAMPLE_LEAD`] + `len` bytes) lent
    /// for a message of `len` bytes to `writer`.
    pub(crate) fn new(writer: Arc<UdsWriter>, buf: Vec<u8>, len: usize) -> Self {
        Self {
            writer,
            buf,
            len,
            used: None,
        }
    }
}

impl OutletLoan for UdsLoan {
    fn write(&mut self, write: &mut WriteInto<'_>) -> Result<(), EncodeError> {
        if self.used.is_none() {
            let used = write(&mut self.buf[SAMPLE_LEAD..SAMPLE_LEAD + self.len])?;
            self.used = Some(used.min(self.len));
        }
        Ok(())
    }

    fn written(&self) -> &[u8] {
        let used = self.used.unwrap_or(0);
        &self.buf[SAMPLE_LEAD..SAMPLE_LEAD + used]
    }

    fn written_mut(&mut self) -> &mut [u8] {
        let used = self.used.unwrap_or(0);
        &mut self.buf[SAMPLE_LEAD..SAMPLE_LEAD + used]
    }

    fn send(&mut self, info: &MessageInfo) -> Result<(), SendTimeout> {
        if self.used.is_none() {
            return Ok(());
        }
        let result = send_uds(&self.writer, self.written(), info);
        self.used = None;
        result
    }
}

impl Drop for UdsLoan {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        give_back_send_buffer(buf);
    }
}
