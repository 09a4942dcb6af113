//! The outlets a local publisher's same-host writers sit behind: a shared-memory outlet that
//! lends chunks to serialize into, and a Unix-socket outlet that lends the thread's reused
//! buffer for small messages.

use std::sync::{Arc, Weak};

use roslite_cdr::EncodeError;
use roslite_shm::{ShmWriter, UdsWriter};

use super::LinkKind;
use crate::seam::loan::{send_uds, timed_out, write_after_lead, ShmLoan, UdsLoan, SAMPLE_LEAD};
use crate::seam::{
    take_send_buffer, Lent, MessageInfo, Outlet, OutletLoan, OutletStats, SendTimeout, SentInPlace,
    WriteInto, SEND_BUFFER_MAX,
};

pub(super) struct ShmOutlet {
    pub(super) writer: Weak<ShmWriter>,
    pub(super) readers: roslite_shm::ReaderCount,
    /// The writer keeps samples for late joiners: every publish goes to it, readers or not.
    pub(super) keeps: bool,
}

impl ShmOutlet {
    pub(super) fn new(writer: &Arc<ShmWriter>, keeps: bool) -> Self {
        Self {
            writer: Arc::downgrade(writer),
            readers: writer.reader_count_handle(),
            keeps,
        }
    }
}

impl Outlet for ShmOutlet {
    /// The path taken only when the loan failed (no memory for a segment) or another outlet
    /// got the loan: the serialized bytes are copied into a chunk.
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout> {
        let Some(writer) = self.writer.upgrade() else {
            return Ok(());
        };
        if writer.reader_count() == 0 && !self.keeps {
            return Ok(());
        }
        match writer.loan(SAMPLE_LEAD + payload.len()) {
            Ok(loan) => timed_out(loan.copy_from_after(SAMPLE_LEAD, payload).send_numbered(
                info.publication_sequence_number,
                info.source_timestamp.as_nanos(),
            )),
            // No memory for a segment: the same-host readers lose this sample (and count it
            // lost by the gap in the numbering).
            Err(_) => Ok(()),
        }
    }

    /// The kept messages go into the writer's chunks for late joiners alone.
    fn adopt(&self, published: u64, kept: &[(Arc<[u8]>, MessageInfo)]) {
        let Some(writer) = self.writer.upgrade() else {
            return;
        };
        for (payload, info) in kept {
            // No memory for a segment: late joiners here miss this one.
            if let Ok(loan) = writer.loan(SAMPLE_LEAD + payload.len()) {
                loan.copy_from_after(SAMPLE_LEAD, payload).keep_numbered(
                    info.publication_sequence_number,
                    info.source_timestamp.as_nanos(),
                );
            }
        }
        writer.number_from(published.saturating_add(1));
    }

    /// Per publish: an atomic load, not the writer's lock (zero once the writer is gone).
    fn is_active(&self) -> bool {
        self.keeps || self.readers.get() > 0
    }

    fn loan(&self, len: usize) -> Option<Lent> {
        let writer = self.writer.upgrade()?;
        let loan = writer.loan(SAMPLE_LEAD + len).ok()?;
        Some(Lent::SharedMemory(ShmLoan::new(loan)))
    }

    fn send_in_place(
        &self,
        len: usize,
        write: &mut WriteInto<'_>,
        info: &MessageInfo,
    ) -> Option<Result<SentInPlace, EncodeError>> {
        let writer = self.writer.upgrade()?;
        let sent = writer.send_in_place(
            SAMPLE_LEAD + len,
            |chunk| write_after_lead(chunk, write),
            Some(info.publication_sequence_number),
            info.source_timestamp.as_nanos(),
        );
        let result = match sent {
            Ok(_) => Ok(()),
            Err(roslite_shm::InPlaceError::Write(e)) => return Some(Err(e)),
            Err(roslite_shm::InPlaceError::Send(roslite_shm::SendError::Timeout)) => {
                Err(SendTimeout)
            }
            // No memory for a segment: the general path copes (or loses the sample as it does).
            Err(roslite_shm::InPlaceError::Send(_)) => return None,
        };
        Some(Ok(SentInPlace {
            result,
            shared_memory: true,
        }))
    }

    fn stats(&self) -> Option<OutletStats> {
        let stats = self.writer.upgrade()?.stats();
        Some(OutletStats {
            transport: LinkKind::SharedMemory.name(),
            readers: stats.readers,
            sent: stats.sent,
            sent_bytes: stats.sent_bytes,
            in_place_bytes: stats.sent_bytes - stats.copied_bytes,
            copied_bytes: stats.copied_bytes,
            buffers_in_use: stats.chunks_in_use,
        })
    }
}

pub(super) struct UdsOutlet {
    pub(super) writer: Weak<UdsWriter>,
    pub(super) readers: roslite_shm::ReaderCount,
    /// As [`ShmOutlet::keeps`].
    pub(super) keeps: bool,
}

impl UdsOutlet {
    pub(super) fn new(writer: &Arc<UdsWriter>, keeps: bool) -> Self {
        Self {
            writer: Arc::downgrade(writer),
            readers: writer.reader_count_handle(),
            keeps,
        }
    }

    /// This thread's reused buffer with room for `len` bytes after [`SAMPLE_LEAD`], lent with
    /// the writer; `None` beyond [`SEND_BUFFER_MAX`] (a large buffer would stay allocated for
    /// the thread's life) or once the writer is gone.
    fn lend(&self, len: usize) -> Option<UdsLoan> {
        if len > SEND_BUFFER_MAX {
            return None;
        }
        let writer = self.writer.upgrade()?;
        let mut buf = take_send_buffer();
        if buf.len() < SAMPLE_LEAD + len {
            buf.resize(SAMPLE_LEAD + len, 0);
        }
        Some(UdsLoan::new(writer, buf, len))
    }
}

impl Outlet for UdsOutlet {
    fn is_active(&self) -> bool {
        self.keeps || self.readers.get() > 0
    }

    /// A small message is serialized into a buffer this thread reuses and sent from there: no
    /// shared buffer to allocate and fill for the socket to copy again. A large one is not
    /// (`None`): its buffer would stay allocated for the thread's life.
    fn loan(&self, len: usize) -> Option<Lent> {
        self.lend(len).map(Lent::UnixSocket)
    }

    /// [`Self::loan`], written and sent in one call.
    fn send_in_place(
        &self,
        len: usize,
        write: &mut WriteInto<'_>,
        info: &MessageInfo,
    ) -> Option<Result<SentInPlace, EncodeError>> {
        let mut loan = self.lend(len)?;
        Some(loan.write(write).map(|()| SentInPlace {
            result: loan.send(info),
            shared_memory: false,
        }))
    }

    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo) -> Result<(), SendTimeout> {
        let Some(writer) = self.writer.upgrade() else {
            return Ok(());
        };
        send_uds(&writer, payload, info)
    }

    /// The kept messages go into the writer's history for late joiners alone.
    fn adopt(&self, published: u64, kept: &[(Arc<[u8]>, MessageInfo)]) {
        let Some(writer) = self.writer.upgrade() else {
            return;
        };
        for (payload, info) in kept {
            writer.keep_for_late_joiners(
                info.publication_sequence_number,
                payload,
                info.source_timestamp.as_nanos(),
            );
        }
        writer.number_from(published.saturating_add(1));
    }

    fn stats(&self) -> Option<OutletStats> {
        let stats = self.writer.upgrade()?.stats();
        Some(OutletStats {
            transport: LinkKind::UnixSocket.name(),
            readers: stats.readers,
            sent: stats.sent,
            sent_bytes: stats.sent_bytes,
            in_place_bytes: 0,
            // The socket copies every byte out of the serialized message.
            copied_bytes: stats.sent_bytes,
            buffers_in_use: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use roslite_shm::{Endpoint, UdsWriterConfig, WriterKey};

    use super::super::links::info_for;
    use super::*;

    fn uds_outlet() -> (Endpoint, Arc<UdsWriter>, UdsOutlet) {
        let endpoint = Endpoint::bind().expect("bind");
        let writer = Arc::new(
            UdsWriter::create(
                &endpoint,
                WriterKey::from(3u128),
                UdsWriterConfig::default(),
            )
            .expect("writer"),
        );
        let outlet = UdsOutlet::new(&writer, false);
        (endpoint, writer, outlet)
    }

    #[test]
    fn a_unix_socket_lends_its_threads_reused_buffer_for_small_messages_only() {
        let (_endpoint, _writer, outlet) = uds_outlet();
        let written_at = |len: usize| {
            let mut loan = outlet.loan(len).expect("a small message gets a loan");
            assert!(!loan.is_shared_memory());
            loan.write(&mut |buf| {
                assert_eq!(buf.len(), len);
                buf.fill(7);
                Ok(len - 1)
            })
            .unwrap();
            assert_eq!(loan.written(), &vec![7; len - 1][..]);
            // The body after the 4-byte encapsulation header is 8-aligned, as in a chunk.
            assert_eq!((loan.written().as_ptr() as usize + 4) % 8, 0);
            loan.written().as_ptr()
        };
        let first = written_at(100);
        assert_eq!(
            written_at(80),
            first,
            "the buffer is reused, not reallocated"
        );
        assert!(outlet.loan(SEND_BUFFER_MAX).is_some());
        assert!(
            outlet.loan(SEND_BUFFER_MAX + 1).is_none(),
            "a large message is not kept in a thread's buffer"
        );
    }

    #[test]
    fn a_unix_socket_sends_a_small_message_from_its_threads_buffer_in_one_call() {
        let (endpoint, writer, outlet) = uds_outlet();
        let reader = roslite_shm::UdsReader::connect(
            endpoint.address(),
            WriterKey::from(3u128),
            roslite_shm::UdsReaderConfig::default(),
        )
        .expect("connect");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while writer.reader_count() == 0 {
            assert!(std::time::Instant::now() < deadline, "never attached");
            std::thread::sleep(Duration::from_millis(1));
        }
        let info = info_for(5, 9, roslite_rtps::types::Guid::UNKNOWN);
        let sent = outlet
            .send_in_place(
                100,
                &mut |buf| {
                    assert_eq!(buf.len(), 100);
                    // The body after the 4-byte encapsulation header is 8-aligned.
                    assert_eq!((buf.as_ptr() as usize + 4) % 8, 0);
                    buf[..3].copy_from_slice(b"abc");
                    Ok(3)
                },
                &info,
            )
            .expect("a small message is sent in place")
            .expect("written");
        assert_eq!(
            sent,
            SentInPlace {
                result: Ok(()),
                shared_memory: false,
            }
        );
        let sample = reader
            .receive_timeout(Duration::from_secs(10))
            .expect("receive")
            .expect("a sample");
        assert_eq!(&sample[..], b"abc", "exactly the bytes written");
        assert!(
            outlet
                .send_in_place(SEND_BUFFER_MAX + 1, &mut |_| Ok(0), &info)
                .is_none(),
            "a large message takes the general path"
        );
    }
}
