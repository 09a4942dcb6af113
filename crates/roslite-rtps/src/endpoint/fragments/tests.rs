use std::sync::Arc;

use super::*;
use crate::types::Locator;
use crate::wire::{Submessage, SubmessageHeader};

fn limits() -> ReassemblyLimits {
    ReassemblyLimits {
        max_samples: 4,
        max_sample_size: 1 << 20,
        max_bytes: 1 << 20,
        keep_oldest: true,
    }
}

fn frag(sn: i64, start: u32, count: u16, size: u16, sample: u32, data: &[u8]) -> DataFragRepr<'_> {
    DataFragRepr {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId::new([0, 0, 1], 0x03),
        writer_sn: SequenceNumber(sn),
        fragment_starting_num: FragmentNumber(start),
        fragments_in_submessage: count,
        fragment_size: size,
        sample_size: sample,
        inline_qos: None,
        key: false,
        non_standard_payload: false,
        data,
    }
}

#[test]
fn layout_packs_fragments_and_cuts_the_last() {
    let l = FragmentLayout::new(10_001, 1000, 4000).unwrap();
    assert_eq!((l.total, l.per_submessage, l.sample_size), (11, 4, 10_001));
    assert_eq!(l.byte_range(11, 12), 10_000..10_001);
    assert_eq!(l.byte_range(1, 5), 0..4000);
    assert!(FragmentLayout::new(0, 1000, 4000).is_none());
    assert_eq!(FragmentLayout::new(10, 0, 0).unwrap().per_submessage, 1);
}

#[test]
fn writer_fragments_round_trip_through_the_wire_and_reassembler() {
    let payload: Vec<u8> = (0..10_001u32).map(|i| (i % 251) as u8).collect();
    let change = CacheChange {
        sn: SequenceNumber(3),
        payload: Arc::from(payload.clone()),
        inline_qos: None,
        source_timestamp: None,
    };
    let layout = FragmentLayout::new(payload.len(), 1000, 4000).unwrap();
    let mut tx = TransmitBuilder::default();
    let ids = (EntityId::UNKNOWN, EntityId::new([0, 0, 1], 0x03));
    assert_eq!(push_data_frags(&mut tx, ids, &change, &layout, 1, 12), 3);
    let t = tx.finish(vec![Locator::INVALID], None).unwrap();
    let mut r = Reassembler::default();
    let mut evictions = 0;
    let mut done = None;
    // Deliver in reverse order, plus a duplicate of the first.
    let mut subs = t.submessages.clone();
    subs.reverse();
    subs.push(subs[0].clone());
    for sm in &subs {
        let bytes = sm.to_vec();
        let h = SubmessageHeader::parse(&bytes).unwrap();
        let Some(Submessage::DataFrag(f)) = Submessage::parse(&h, &bytes[4..]).unwrap() else {
            panic!("not a DATA_FRAG");
        };
        match r.insert(Instant::ZERO, &f, None, &limits(), &mut evictions) {
            FragOutcome::Complete(c) => done = Some(c),
            FragOutcome::Incomplete => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(done.unwrap().payload, payload);
    // A fragment after completion would start over; the reader filters those by sequence
    // number before they get here.
    assert!(r.contains(SequenceNumber(3)));
}

#[test]
fn missing_windows_are_bounded() {
    let mut r = Reassembler::default();
    let mut ev = 0;
    let data = [0u8; 10];
    // Fragment 1000 of a 100 000-byte sample in 10-byte fragments (10 000 of them).
    let f = frag(1, 1000, 1, 10, 100_000, &data);
    assert_eq!(
        r.insert(Instant::ZERO, &f, None, &limits(), &mut ev),
        FragOutcome::Incomplete
    );
    let w = r.missing(SequenceNumber(1), true, 3);
    assert_eq!(w.len(), 3);
    assert_eq!(w[0].base(), FragmentNumber(1));
    assert_eq!(w[0].iter().count(), 256);
    assert_eq!(w[2].base(), FragmentNumber(513));
    // Only announced fragments count without a HEARTBEAT covering the sample.
    assert!(r.missing(SequenceNumber(1), false, 3).is_empty());
    assert!(r.announce(SequenceNumber(1), 3));
    let w = r.missing(SequenceNumber(1), false, 3);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 2, 3]);
    // The buffer is sized for the whole sample at once (charged to the byte budget).
    assert_eq!(r.bytes, 100_000);
}

#[test]
fn byte_budget_evicts_later_samples_for_earlier_ones() {
    let mut r = Reassembler::default();
    let mut ev = 0;
    let small = ReassemblyLimits {
        max_bytes: 3000,
        ..limits()
    };
    let data = vec![1u8; 1000];
    let last = |sn| frag(sn, 2, 1, 1000, 2000, &data[..1000]);
    assert_eq!(
        r.insert(Instant::ZERO, &last(5), None, &small, &mut ev),
        FragOutcome::Incomplete
    );
    // Sample 4 needs 2000 more bytes than the budget leaves: sample 5 is evicted.
    assert_eq!(
        r.insert(Instant::ZERO, &last(4), None, &small, &mut ev),
        FragOutcome::Incomplete
    );
    assert_eq!(ev, 1);
    assert!(!r.contains(SequenceNumber(5)));
    // A later sample cannot evict an earlier one.
    assert_eq!(
        r.insert(Instant::ZERO, &last(6), None, &small, &mut ev),
        FragOutcome::NoRoom
    );
    assert!(!r.contains(SequenceNumber(6)));
    assert_eq!(r.len(), 1);
}
