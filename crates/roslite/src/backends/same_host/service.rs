//! Services between roslite participants on one host, over the same links as topics.
//!
//! A service's request topic (`rq/<service>Request`) and reply topic (`rr/<service>Reply`) are
//! carried like any volatile topic: the client's request writer and the server's reply writer
//! get a shared-memory and a Unix-socket writer, and the server's request reader and the
//! client's reply reader get a link thread per same-host writer they match. What RTPS carries
//! beside the payload, the `related_sample_identity` inline QoS that correlates a reply with
//! its request (`backends/rtps/services.rs`, `roslite_rtps::discovery::rpc`), travels in a lead before the payload instead:
//!
//! ```text
//! 0..16   GUID   the client's reply reader (the reader the reply is for)
//! 16..24  i64 LE the request's sequence number (its RTPS writer's, so a reply over either
//!                path completes the same call)
//! 24..28  zero   keeps the CDR body 8-aligned, as the topics' 4-byte lead does
//! ```
//!
//! The client writes the identity the reply must carry; the server copies it into the reply
//! unchanged. Every client's reply reader gets every reply of a server (as over RTPS) and keeps
//! those that name it.
//!
//! That identity is also the request's over RTPS (a roslite client's request names its reply
//! reader in `related_sample_identity`, and both paths number it by the RTPS writer), so a
//! server sees one request id and one reply address (`rtps::encode_route`'s tag 1) for a
//! request whichever path it came by: a node moved to another process tells the requests its
//! old host answered from new ones, and answers those the old host had not, over whichever
//! path reaches the client from there ([`SameHostReply`], `backend.rs`'s `reply_channel`).
//!
//! A request arrives on its link thread, which may run the server's callback on a lent
//! executor turn and send the reply from there: a same-host call takes no lock of the network.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use roslite_cdr::SharedBuf;
use roslite_executor::Instant as MonoInstant;
use roslite_rtps::discovery::rpc::ReplyRoute;
use roslite_rtps::types::{Guid, SampleIdentity, SequenceNumber};
use roslite_shm::{ShmWriter, UdsWriter};

use crate::backends::rtps::encode_route;
use crate::seam::service::{
    ReplyChannel, ReplyOutcome, ReplySink, RequestId, RequestKey, RequestSink,
};
use crate::seam::{give_back_send_buffer, take_send_buffer};

/// Bytes before a service sample's CDR payload (module docs).
pub(super) const SERVICE_LEAD: usize = 28;

fn write_lead(lead: &mut [u8], identity: SampleIdentity) {
    lead[..16].copy_from_slice(&identity.writer_guid.to_bytes());
    lead[16..24].copy_from_slice(&identity.sequence_number.0.to_le_bytes());
    lead[24..SERVICE_LEAD].fill(0);
}

/// The identity in a sample's lead, and the payload after it; `None` for a sample too short
/// to hold the lead (not from a roslite writer).
fn split_lead(sample: SharedBuf) -> Option<(SampleIdentity, SharedBuf)> {
    let lead = sample.bytes().get(..SERVICE_LEAD)?;
    let guid: [u8; 16] = lead[..16].try_into().ok()?;
    let seq: [u8; 8] = lead[16..24].try_into().ok()?;
    let identity = SampleIdentity {
        writer_guid: Guid::from_bytes(guid),
        sequence_number: SequenceNumber(i64::from_le_bytes(seq)),
    };
    let len = sample.len();
    Some((identity, sample.into_slice(SERVICE_LEAD..len)?))
}

/// Same-host service traffic that was dropped, for [`crate::seam::service::ServiceDrops`].
#[derive(Debug, Default)]
pub(crate) struct SameHostServiceStats {
    pub(crate) malformed: AtomicU64,
    pub(crate) replies_for_other_clients: AtomicU64,
}

/// The same-host writers of a client's request writer or a server's reply writer (only the
/// transports offered).
pub(crate) struct ServiceWriters {
    pub(super) shm: Option<ShmWriter>,
    pub(super) uds: Option<UdsWriter>,
}

impl ServiceWriters {
    /// Readers connected over either transport.
    pub(crate) fn readers(&self) -> usize {
        self.shm.as_ref().map_or(0, ShmWriter::reader_count)
            + self.uds.as_ref().map_or(0, UdsWriter::reader_count)
    }

    /// Sends `payload` (CDR with its encapsulation header) after a lead carrying `identity`
    /// to every connected reader. A reader that cannot take it (no memory for a segment, or a
    /// KEEP_ALL queue full for `max_blocking_time`) loses it, as a lost RTPS sample would be;
    /// the call times out on the client.
    pub(crate) fn send(&self, identity: SampleIdentity, payload: &[u8]) {
        let timestamp_ns = MonoInstant::monotonic_now().as_nanos();
        if let Some(shm) = self.shm.as_ref().filter(|w| w.reader_count() > 0) {
            if let Ok(loan) = shm.loan(SERVICE_LEAD + payload.len()) {
                let written = loan.write_with(|chunk| {
                    let (lead, body) = chunk.split_at_mut(SERVICE_LEAD);
                    write_lead(lead, identity);
                    body[..payload.len()].copy_from_slice(payload);
                    Ok::<_, std::convert::Infallible>(SERVICE_LEAD + payload.len())
                });
                let loan = written.unwrap_or_else(|never| match never {});
                let _ = loan.send(timestamp_ns);
            }
        }
        if let Some(uds) = self.uds.as_ref().filter(|w| w.reader_count() > 0) {
            // Assembled in this thread's reused buffer, as topics' small messages are.
            let mut frame = take_send_buffer();
            frame.clear();
            frame.resize(SERVICE_LEAD, 0);
            write_lead(&mut frame, identity);
            frame.extend_from_slice(payload);
            let _ = uds.send(&frame, timestamp_ns);
            give_back_send_buffer(frame);
        }
    }
}

/// Where the samples of a service's local reader go.
pub(crate) enum ServiceInlet {
    /// A server's request reader: requests go to its queue, replies back over `replies`.
    Requests {
        sink: Arc<dyn RequestSink>,
        replies: Weak<ServiceWriters>,
    },
    /// A client's reply reader (GUID `reply_reader`): replies addressed to it complete the
    /// client's calls.
    Replies {
        sink: Arc<dyn ReplySink>,
        reply_reader: Guid,
    },
}

/// A service's local reader as its same-host links see it.
pub(crate) struct ServiceReader {
    pub(super) inlet: ServiceInlet,
    /// Links connected to a writer now: a client is ready over a same-host link once its
    /// reply reader is connected to a server's reply writer.
    connected: AtomicUsize,
    stats: Arc<SameHostServiceStats>,
}

impl ServiceReader {
    pub(crate) fn new(inlet: ServiceInlet, stats: Arc<SameHostServiceStats>) -> Self {
        Self {
            inlet,
            connected: AtomicUsize::new(0),
            stats,
        }
    }

    pub(crate) fn connected_links(&self) -> usize {
        self.connected.load(Ordering::Acquire)
    }

    /// Counts a link as connected for as long as the guard lives.
    pub(super) fn link_connected(self: &Arc<Self>) -> ConnectedLink {
        self.connected.fetch_add(1, Ordering::AcqRel);
        ConnectedLink(self.clone())
    }

    /// Hands over one sample (lead and payload) that arrived on a link.
    pub(super) fn deliver(&self, sample: SharedBuf) {
        let Some((identity, payload)) = split_lead(sample) else {
            self.stats.malformed.fetch_add(1, Ordering::Relaxed);
            return;
        };
        match &self.inlet {
            ServiceInlet::Requests { sink, replies } => {
                let reply = Box::new(SameHostReply {
                    writers: replies.clone(),
                    identity,
                });
                // A sleeping single-threaded executor lends its turn to this thread: the
                // callback runs here and its reply leaves at once.
                crate::seam::with_inline_dispatch(|| sink.deliver_request(&payload, reply));
            }
            ServiceInlet::Replies { sink, reply_reader } => {
                if identity.writer_guid != *reply_reader {
                    self.stats
                        .replies_for_other_clients
                        .fetch_add(1, Ordering::Relaxed);
                    return;
                }
                let key = RequestKey::WriterSn(identity.sequence_number.0);
                let _: ReplyOutcome = sink.deliver_reply(key, &payload);
            }
        }
    }
}

/// Keeps a link counted in [`ServiceReader::connected_links`].
pub(super) struct ConnectedLink(Arc<ServiceReader>);

impl Drop for ConnectedLink {
    fn drop(&mut self) {
        self.0.connected.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sends a server's reply back over its reply writer's same-host writers, marked with the
/// identity its request carried.
struct SameHostReply {
    writers: Weak<ServiceWriters>,
    /// The client's reply reader and the request's sequence number.
    identity: SampleIdentity,
}

impl ReplyChannel for SameHostReply {
    fn send(self: Box<Self>, payload: Vec<u8>) {
        if let Some(writers) = self.writers.upgrade() {
            writers.send(self.identity, &payload);
        }
    }

    fn request_id(&self) -> Option<RequestId> {
        Some(request_id(self.identity))
    }

    fn reply_address(&self) -> Option<Vec<u8>> {
        Some(reply_address(self.identity))
    }
}

/// The id of the request whose lead carried `identity`: as over RTPS, the client identity its
/// request names (its reply reader) and the request's number from that client.
pub(super) fn request_id(identity: SampleIdentity) -> RequestId {
    RequestId {
        writer_guid: identity.writer_guid.to_bytes(),
        sequence_number: identity.sequence_number.0,
    }
}

/// The reply address of the request whose lead carried `identity`: the RTPS network's for the
/// same request (`rtps::encode_route`, tag 1), so a server of either path can answer it.
pub(super) fn reply_address(identity: SampleIdentity) -> Vec<u8> {
    encode_route(&ReplyRoute::SampleIdentity { related: identity })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_carries_the_identity_and_keeps_the_payload_aligned() {
        let identity = SampleIdentity {
            writer_guid: Guid::from_bytes(std::array::from_fn(|i| i as u8 + 1)),
            sequence_number: SequenceNumber(0x0102_0304_0506),
        };
        let mut bytes = vec![0xff; SERVICE_LEAD];
        write_lead(&mut bytes, identity);
        assert_eq!(&bytes[24..], &[0; 4]);
        bytes.extend_from_slice(&[0, 1, 0, 0, 42]);
        let (read, payload) = split_lead(SharedBuf::from_vec(bytes)).unwrap();
        assert_eq!(read, identity);
        assert_eq!(payload.bytes(), &[0, 1, 0, 0, 42]);
        // The CDR body (after the 4-byte encapsulation header) starts 8-aligned.
        assert_eq!((SERVICE_LEAD + 4) % 8, 0);
        assert!(split_lead(SharedBuf::from_vec(vec![0; SERVICE_LEAD - 1])).is_none());
    }
}
