//! The memory a backend may lend a publisher for one message, in the two kinds that exist: a
//! chunk of shared memory the readers map and read in place ([`ShmLoan`]), and a buffer this
//! thread reuses that a socket write copies from ([`UdsLoan`]). Both sit behind [`Lent`] as
//! they are, so that a publish allocates nothing for its loan.
//!
//! [`Lent`]: super::outlet::Lent

use std::sync::Arc;

use roslite_cdr::EncodeError;
use roslite_shm::{Loan, LoanUninit, UdsWriter};

use super::outlet::{give_back_send_buffer, OutletLoan, SendTimeout, WriteInto};
use super::MessageInfo;

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
