//! [`ReceivedSample`]: what a reader delivers, and what a writer proxy holds while it waits
//! for the numbers before it.

use roslite_cdr::Endianness;

use crate::types::{Guid, SequenceNumber, Time};

/// A sample delivered to the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedSample {
    pub writer: Guid,
    pub sequence_number: SequenceNumber,
    /// Serialized payload including the encapsulation header; empty for a dispose/unregister
    /// (DATA without the D flag). A DATA payload may end in up to 3 padding bytes (RTPS 2.5
    /// §9.4.5.3 pads submessages to 4; the encapsulation options say how many); a reassembled
    /// one is exactly `sampleSize` bytes.
    pub payload: Vec<u8>,
    /// The inline QoS parameter list as received (sentinel included), in
    /// `inline_qos_endianness`.
    pub inline_qos: Option<Vec<u8>>,
    pub inline_qos_endianness: Endianness,
    pub source_timestamp: Option<Time>,
    /// `PID_KEY_HASH` from the inline QoS.
    pub key_hash: Option<[u8; 16]>,
    /// `PID_STATUS_INFO` from the inline QoS (bit 0 disposed, bit 1 unregistered).
    pub status_info: Option<u32>,
    /// Sequence numbers of the same writer skipped right before this sample that will never
    /// be delivered (DDS `SAMPLE_LOST`): best effort, those a later sample overtook; reliable,
    /// those the writer declared irrelevant (GAP, or a HEARTBEAT's `firstSN` past them, which
    /// is what a keep-last writer does when its history dropped them before this reader got
    /// them). Counted only from the first sample delivered from that writer on, and never for
    /// a writer that filters for this reader (a content filter: those numbers were filtered
    /// out, [`ReaderStats::samples_filtered_by_writer`](super::ReaderStats)).
    pub lost_before: u64,
}

impl ReceivedSample {
    pub(super) fn payload_len(&self) -> usize {
        self.payload.len()
    }

    /// Sample `sn` of `writer` with `payload` and nothing else, for tests.
    #[cfg(test)]
    pub(crate) fn for_test(writer: Guid, sn: SequenceNumber, payload: Vec<u8>) -> Self {
        ReceivedSample {
            writer,
            sequence_number: sn,
            payload,
            inline_qos: None,
            inline_qos_endianness: Endianness::Little,
            source_timestamp: None,
            key_hash: None,
            status_info: None,
            lost_before: 0,
        }
    }
}
