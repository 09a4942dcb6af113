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
        given_up: false,
        instance: None,
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
    // Only the bytes received are held and charged, not the 100 000 the header claims.
    assert_eq!(r.bytes, 10);
}

#[test]
fn byte_budget_evicts_later_samples_for_earlier_ones() {
    let mut r = Reassembler::default();
    let mut ev = 0;
    let small = ReassemblyLimits {
        max_bytes: 1500,
        ..limits()
    };
    let data = vec![1u8; 1000];
    let last = |sn| frag(sn, 2, 1, 1000, 2000, &data[..1000]);
    assert_eq!(
        r.insert(Instant::ZERO, &last(5), None, &small, &mut ev),
        FragOutcome::Incomplete
    );
    // Sample 4 needs 1000 more bytes than the budget leaves: sample 5 is evicted.
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

#[test]
fn last_fragment_of_a_60_mib_sample_costs_its_own_bytes() {
    let mut r = Reassembler::default();
    let mut ev = 0;
    let big = ReassemblyLimits {
        max_sample_size: 64 << 20,
        max_bytes: 64 << 20,
        ..limits()
    };
    let tail = [9u8; 16];
    let sample = (60 << 20) + 16;
    let last = (60 << 20) / 1024 + 1;
    for sn in 1..=4 {
        let f = frag(sn, last, 1, 1024, sample, &tail);
        assert_eq!(
            r.insert(Instant::ZERO, &f, None, &big, &mut ev),
            FragOutcome::Incomplete
        );
    }
    assert_eq!(
        r.bytes,
        4 * 16,
        "held: what was received, nothing zero-filled"
    );
    let s = &r.samples[&SequenceNumber(1)];
    assert_eq!((s.prefix.capacity(), s.chunks.len()), (0, 1));
}

#[test]
fn fragments_in_any_order_reassemble_from_sparse_chunks() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let payload: Vec<u8> = (0..10_007u32).map(|i| (i % 253) as u8).collect();
    let mut order: Vec<u32> = (1..=11).collect();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(34);
    for round in 0..20 {
        order.shuffle(&mut rng);
        let mut r = Reassembler::default();
        let mut ev = 0;
        let mut done = None;
        for (i, f) in order.iter().enumerate() {
            // Two fragments per submessage now and then, overlapping what came before.
            let count = if i % 3 == 0 && *f < 11 { 2 } else { 1 };
            let start = (*f as usize - 1) * 1000;
            let end = (start + 1000 * count as usize).min(payload.len());
            let sub = frag(1, *f, count, 1000, 10_007, &payload[start..end]);
            match r.insert(Instant::ZERO, &sub, None, &limits(), &mut ev) {
                FragOutcome::Complete(c) => {
                    done = Some(c.payload);
                    break;
                }
                FragOutcome::Incomplete => {}
                other => panic!("round {round}: {other:?}"),
            }
            assert!(
                r.bytes <= payload.len(),
                "round {round}: nothing held twice"
            );
        }
        assert_eq!(done.as_deref(), Some(&payload[..]), "round {round}");
        assert_eq!(r.bytes, 0);
    }
}

#[test]
fn shared_budget_is_charged_across_writers_and_credited_when_they_go() {
    let shared = ByteBudget::new(2500);
    let budgets = || SharedBudgets::new(vec![shared.clone()]);
    let mut a = Reassembler::with_budgets(budgets());
    let mut b = Reassembler::with_budgets(budgets());
    let mut ev = 0;
    let data = vec![1u8; 1000];
    let f = |sn| frag(sn, 2, 1, 1000, 3000, &data);
    assert_eq!(
        a.insert(Instant::ZERO, &f(1), None, &limits(), &mut ev),
        FragOutcome::Incomplete
    );
    assert_eq!(
        a.insert(Instant::ZERO, &f(2), None, &limits(), &mut ev),
        FragOutcome::Incomplete
    );
    assert_eq!(shared.used(), 2000);
    // The other writer finds the shared budget full; its own is not the reason.
    assert_eq!(
        b.insert(Instant::ZERO, &f(1), None, &limits(), &mut ev),
        FragOutcome::NoSharedRoom
    );
    assert!(a.discard(SequenceNumber(2)));
    assert_eq!(shared.used(), 1000);
    assert_eq!(
        b.insert(Instant::ZERO, &f(1), None, &limits(), &mut ev),
        FragOutcome::Incomplete
    );
    drop(a);
    assert_eq!(shared.used(), 1000, "a's bytes credited when it went");
    assert_eq!(b.clear(), 1);
    assert_eq!(shared.used(), 0);
}
