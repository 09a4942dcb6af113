//! Writer/reader tests on the simulated network ([`crate::sim::Pair`]) and scripted hostile
//! inputs. Everything runs on a virtual clock: no sleeps, no sockets.

mod best_effort;
mod content_filter;
mod drained;
mod durability;
mod hostile;
mod large;
mod reliable;
mod transmit;

use std::time::Duration;

use crate::endpoint::{HistoryKind, ReaderConfig, ReceivedSample, WriterConfig};
use crate::sim::{guid, LinkConfig, Pair};
use crate::types::{EntityId, SequenceNumber};

/// A user writer (no key) of participant 1.
pub(super) fn writer_config(reliable: bool, history: HistoryKind) -> WriterConfig {
    WriterConfig {
        reliable,
        history,
        ..WriterConfig::new(guid(1, 1, EntityId::KIND_WRITER_NO_KEY))
    }
}

/// A user reader (no key) of participant `2 + n`.
pub(super) fn reader_config(n: u8, reliable: bool, history: HistoryKind) -> ReaderConfig {
    ReaderConfig {
        history,
        ..ReaderConfig::new(guid(2 + n, 7, EntityId::KIND_READER_NO_KEY), reliable)
    }
}

/// A keyed type of two `uint32` members, the first the key.
pub(super) static KEYED: roslite_cdr::key::KeyStruct = {
    use roslite_cdr::key::{KeyCollection, KeyElement, KeyMember};
    roslite_cdr::key::KeyStruct {
        members: &[
            KeyMember {
                in_key: true,
                element: KeyElement::Primitive { size: 4 },
                collection: KeyCollection::Single,
            },
            KeyMember {
                in_key: false,
                element: KeyElement::Primitive { size: 4 },
                collection: KeyCollection::Single,
            },
        ],
    }
};

/// A sample of [`KEYED`]: encapsulation header, `key`, `index`.
pub(super) fn keyed_payload(key: u32, index: u32) -> Vec<u8> {
    let mut p = vec![0x00, 0x01, 0x00, 0x00];
    p.extend_from_slice(&key.to_le_bytes());
    p.extend_from_slice(&index.to_le_bytes());
    p
}

/// A reliable transient-local writer of [`KEYED`] (participant 1).
pub(super) fn keyed_writer(history: HistoryKind) -> WriterConfig {
    WriterConfig {
        reliable: true,
        transient_local: true,
        history,
        key: Some(&KEYED),
        ..WriterConfig::new(guid(1, 1, EntityId::KIND_WRITER_WITH_KEY))
    }
}

/// A recognisable payload: CDR_LE encapsulation header, the index, then a pattern derived
/// from the index. `len` is rounded up to a multiple of 4 (at least 8).
pub(super) fn payload(index: u32, len: usize) -> Vec<u8> {
    let len = len.max(8).next_multiple_of(4);
    let mut p = vec![0u8; len];
    p[..4].copy_from_slice(&[0x00, 0x01, 0x00, 0x00]);
    p[4..8].copy_from_slice(&index.to_le_bytes());
    for (j, b) in p.iter_mut().enumerate().skip(8) {
        *b = (index as usize)
            .wrapping_mul(31)
            .wrapping_add(j.wrapping_mul(7)) as u8;
    }
    p
}

/// The index written into a [`payload`].
pub(super) fn index_of(sample: &ReceivedSample) -> u32 {
    u32::from_le_bytes(sample.payload[4..8].try_into().unwrap())
}

/// Asserts sequence numbers strictly increase (in order, no duplicates) and every payload is
/// the one written for its sequence number (`index = sn - 1`, length `len`).
/// SAMPLE_LOST accounting: from the first sample received on, every sequence number of the
/// writer was either delivered or counted as lost (`samples_lost` of the reader's stats), and
/// each loss was reported with the sample after it.
pub(super) fn assert_every_number_delivered_or_lost(
    received: &[ReceivedSample],
    samples_lost: u64,
) {
    let (Some(first), Some(last)) = (received.first(), received.last()) else {
        panic!("nothing received");
    };
    let span = u64::try_from(last.sequence_number.0 - first.sequence_number.0 + 1).unwrap();
    assert!(
        samples_lost > 0,
        "the run must lose samples to test their count"
    );
    assert_eq!(
        received.len() as u64 + samples_lost,
        span,
        "delivered + lost"
    );
    assert_eq!(
        first.lost_before, 0,
        "nothing is lost before the first sample"
    );
    let reported: u64 = received.iter().map(|s| s.lost_before).sum();
    assert_eq!(
        reported, samples_lost,
        "each loss reported with the next sample"
    );
    for pair in received.windows(2) {
        let gap = u64::try_from(pair[1].sequence_number.0 - pair[0].sequence_number.0 - 1).unwrap();
        assert_eq!(pair[1].lost_before, gap, "at {:?}", pair[1].sequence_number);
    }
}

pub(super) fn assert_in_order_and_intact(received: &[ReceivedSample], len: usize) {
    for w in received.windows(2) {
        assert!(
            w[0].sequence_number < w[1].sequence_number,
            "out of order or duplicate: {:?} then {:?}",
            w[0].sequence_number,
            w[1].sequence_number
        );
    }
    for s in received {
        let index = u32::try_from(s.sequence_number.0 - 1).unwrap();
        assert_eq!(index_of(s), index);
        assert!(
            s.payload == payload(index, len),
            "payload of {index} corrupted"
        );
        assert!(s.source_timestamp.is_some());
    }
}

pub(super) fn sns(received: &[ReceivedSample]) -> Vec<i64> {
    received.iter().map(|s| s.sequence_number.0).collect()
}

pub(super) fn sn(v: i64) -> SequenceNumber {
    SequenceNumber(v)
}

/// A reliable KEEP_ALL pair with `loss` (plus duplication and reordering) in both directions.
pub(super) fn rough_pair(seed: u64, loss: f64, max_samples: usize) -> Pair {
    let h = HistoryKind::KeepAll { max_samples };
    let mut pair = Pair::new(
        seed,
        writer_config(true, h),
        reader_config(
            0,
            true,
            HistoryKind::KeepAll {
                max_samples: 100_000,
            },
        ),
    );
    pair.set_links(0, LinkConfig::rough(loss), LinkConfig::rough(loss));
    pair
}

pub(super) const MS: Duration = Duration::from_millis(1);
