//! Scripted hostile and broken peers (docs/robustness.md §1): every case is handled in time and
//! memory independent of the numbers on the wire, counted, and otherwise ignored.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::endpoint::{
    Reader, ReaderProxyInfo, Transmit, WriteError, Writer, WriterConfig, WriterProxyInfo,
};
use crate::instant::Instant;
use crate::types::{Count, FragmentNumber, FragmentNumberSet, Guid, Locator, SequenceNumberSet};
use crate::wire::{
    AckNackRepr, DataFragRepr, DataRepr, GapRepr, HeartbeatFragRepr, HeartbeatRepr, NackFragRepr,
    PayloadKind, SerializedPayload, Submessage, SubmessageHeader,
};

const T0: Instant = Instant::ZERO;

fn loc(n: u8) -> Locator {
    Locator::udpv4(Ipv4Addr::new(10, 0, 0, n), 7411)
}

fn writer_guid() -> Guid {
    writer_config(true, HistoryKind::KeepLast(1)).guid
}

fn reliable_reader() -> Reader {
    let mut r = Reader::new(reader_config(
        0,
        true,
        HistoryKind::KeepAll { max_samples: 100 },
    ));
    r.add_writer(T0, WriterProxyInfo::new(writer_guid(), vec![loc(1)]));
    r
}

fn heartbeat(first: i64, last: i64, count: i32, final_flag: bool) -> HeartbeatRepr {
    HeartbeatRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        first_sn: sn(first),
        last_sn: sn(last),
        count: Count(count),
        final_flag,
        liveliness_flag: false,
    }
}

fn data(sn_: i64, bytes: &[u8]) -> DataRepr<'_> {
    DataRepr {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        writer_sn: sn(sn_),
        inline_qos: None,
        payload: Some(SerializedPayload {
            kind: PayloadKind::Data,
            bytes,
        }),
        non_standard_payload: false,
    }
}

fn frag(sn_: i64, start: u32, size: u16, sample: u32, bytes: &[u8]) -> DataFragRepr<'_> {
    let count = bytes.len().div_ceil(usize::from(size)) as u16;
    DataFragRepr {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        writer_sn: sn(sn_),
        fragment_starting_num: FragmentNumber(start),
        fragments_in_submessage: count.max(1),
        fragment_size: size,
        sample_size: sample,
        inline_qos: None,
        key: false,
        non_standard_payload: false,
        data: bytes,
    }
}

/// Every submessage of every transmit, parsed back.
fn for_each_submessage(ts: &[Transmit], mut f: impl FnMut(&Submessage<'_>)) {
    for t in ts {
        for sm in &t.submessages {
            let bytes = sm.to_vec();
            let h = SubmessageHeader::parse(&bytes).unwrap();
            let body = &bytes[4..];
            let sm = Submessage::parse(&h, body).unwrap().unwrap();
            f(&sm);
        }
    }
}

fn drain_reader(r: &mut Reader, now: Instant) -> Vec<Transmit> {
    std::iter::from_fn(|| r.poll_transmit(now)).collect()
}

fn drain_writer(w: &mut Writer, now: Instant) -> Vec<Transmit> {
    std::iter::from_fn(|| w.poll_transmit(now)).collect()
}

fn acknacks(ts: &[Transmit]) -> Vec<AckNackRepr> {
    let mut out = Vec::new();
    for_each_submessage(ts, |sm| {
        if let Submessage::AckNack(a) = sm {
            out.push(*a);
        }
    });
    out
}

#[test]
fn heartbeat_with_last_sn_2_pow_62_is_an_interval() {
    let mut r = reliable_reader();
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 1 << 62, 1, false));
    let at = r.poll_timeout().unwrap();
    let acks = acknacks(&drain_reader(&mut r, at));
    let ack = acks.last().unwrap();
    assert_eq!(ack.reader_sn_state.base(), sn(1));
    assert_eq!(
        ack.reader_sn_state.num_bits(),
        256,
        "at most 256 numbers requested"
    );
    assert_eq!(ack.reader_sn_state.iter().count(), 256);
    // And one announcing that everything below 2^62 is gone is a single jump.
    r.handle_heartbeat(at, writer_guid(), &heartbeat(1 << 62, 1 << 62, 2, false));
    assert_eq!(r.stats().irrelevant_skipped, (1 << 62) - 1);
    let p = [0u8, 1, 0, 0];
    r.handle_data(at, writer_guid(), &data(1 << 62, &p), None);
    assert_eq!(
        r.poll_sample().map(|s| s.sequence_number),
        Some(sn(1 << 62))
    );
}

#[test]
fn gap_of_2_pow_40_numbers_is_constant_time() {
    let mut r = reliable_reader();
    let gap = GapRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        gap_start: sn(1),
        gap_list: SequenceNumberSet::from_members(sn((1 << 40) + 1), [sn((1 << 40) + 2)]).unwrap(),
    };
    // Irrelevant: 1 ..= 2^40 (an interval) and 2^40 + 2 (a bit).
    r.handle_gap(T0, writer_guid(), &gap);
    assert_eq!(r.stats().irrelevant_skipped, 1 << 40);
    let p = [0u8, 1, 0, 0];
    r.handle_data(T0, writer_guid(), &data((1 << 40) + 1, &p), None);
    r.handle_data(T0, writer_guid(), &data((1 << 40) + 3, &p), None);
    let got: Vec<i64> = std::iter::from_fn(|| r.poll_sample())
        .map(|s| s.sequence_number.0)
        .collect();
    assert_eq!(got, vec![(1 << 40) + 1, (1 << 40) + 3]);
    // Many disjoint GAPs far ahead are capped, not accumulated.
    for i in 0..5000i64 {
        let start = (1 << 41) + 4 * i;
        let gap = GapRepr {
            gap_start: sn(start),
            gap_list: SequenceNumberSet::empty(sn(start + 1)),
            ..gap
        };
        r.handle_gap(T0, writer_guid(), &gap);
    }
    assert_eq!(r.stats().gaps_received, 5001);
}

#[test]
fn stale_heartbeat_counts_and_foreign_submessages_are_ignored() {
    let mut r = reliable_reader();
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 3, 5, true));
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 9, 5, true));
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 9, 4, true));
    assert_eq!(r.stats().heartbeats_stale, 2);
    let stranger = guid(9, 9, EntityId::KIND_WRITER_NO_KEY);
    r.handle_heartbeat(T0, stranger, &heartbeat(1, 9, 6, true));
    assert_eq!(r.stats().unknown_writer, 1);
    let p = [0u8, 1, 0, 0];
    let mut d = data(1, &p);
    d.reader_id = EntityId::new([1, 2, 3], EntityId::KIND_READER_NO_KEY);
    r.handle_data(T0, writer_guid(), &d, None);
    assert_eq!(r.stats().not_for_us, 1);
    assert!(r.poll_sample().is_none());
}

fn writer_with_reader(config: WriterConfig) -> (Writer, Guid) {
    let mut w = Writer::new(config);
    let reader = reader_config(0, true, HistoryKind::KeepLast(1)).guid;
    w.add_reader(T0, ReaderProxyInfo::new(reader, vec![loc(2)]));
    drain_writer(&mut w, T0);
    (w, reader)
}

fn acknack(base: i64, members: &[i64], count: i32) -> AckNackRepr {
    let mut set = SequenceNumberSet::empty(sn(base));
    for m in members {
        assert!(set.insert(sn(*m)));
    }
    AckNackRepr {
        reader_id: reader_config(0, true, HistoryKind::KeepLast(1))
            .guid
            .entity_id,
        writer_id: writer_guid().entity_id,
        reader_sn_state: set,
        count: Count(count),
        final_flag: false,
    }
}

fn write_n(w: &mut Writer, n: u32, len: usize) {
    for i in 0..n {
        w.write(T0, Arc::from(payload(i, len)), None, None).unwrap();
    }
    drain_writer(w, T0);
}

#[test]
fn acknack_beyond_max_is_clamped_and_bases_never_lower() {
    let (mut w, reader) = writer_with_reader(writer_config(
        true,
        HistoryKind::KeepAll { max_samples: 50 },
    ));
    write_n(&mut w, 3, 16);
    w.handle_acknack(T0, reader, &acknack(1000, &[1000, 1100], 1));
    let s = w.stats();
    assert_eq!(s.acknacks_beyond_max, 1);
    assert!(w.is_acked_by_all(sn(3)));
    w.write(T0, Arc::from(payload(3, 16)), None, None).unwrap();
    assert!(
        !w.is_acked_by_all(sn(4)),
        "acking the future does not ack sample 4"
    );
    // Lowering the base does not un-acknowledge, and NACKs below the ack are ignored.
    w.handle_acknack(T0, reader, &acknack(2, &[2, 3], 2));
    assert_eq!(w.stats().acknacks_lowered_base, 1);
    assert!(w.is_acked_by_all(sn(3)));
    let later = T0 + Duration::from_secs(1);
    let mut resent = 0;
    for_each_submessage(&drain_writer(&mut w, later), |sm| {
        if let Submessage::Data(d) = sm {
            assert_eq!(
                d.writer_sn,
                sn(4),
                "only sample 4 (never acked) may be sent"
            );
            resent += 1;
        }
    });
    assert_eq!(w.stats().samples_resent, 0);
    // A stale count is dropped whole.
    w.handle_acknack(later, reader, &acknack(1, &[1], 2));
    assert_eq!(w.stats().acknacks_stale, 1);
    assert!(resent <= 1);
}

#[test]
fn preemptive_acknack_is_answered_with_a_heartbeat() {
    let (mut w, reader) = writer_with_reader(writer_config(true, HistoryKind::KeepLast(5)));
    write_n(&mut w, 2, 16);
    let mut pre = acknack(1, &[], 1);
    pre.reader_sn_state = SequenceNumberSet::empty(sn(0));
    w.handle_acknack(T0, reader, &pre);
    assert_eq!(w.stats().acknacks_preemptive, 1);
    let mut hbs = Vec::new();
    for_each_submessage(&drain_writer(&mut w, T0), |sm| {
        if let Submessage::Heartbeat(h) = sm {
            hbs.push((h.first_sn, h.last_sn, h.final_flag));
        }
    });
    assert_eq!(hbs, vec![(sn(1), sn(2), false)]);
}

#[test]
fn nack_frag_for_nonexistent_fragments_is_ignored_and_counted() {
    let mut config = writer_config(true, HistoryKind::KeepLast(5));
    config.fragment_size = 1000;
    config.max_data_size = 4000;
    let (mut w, reader) = writer_with_reader(config);
    write_n(&mut w, 1, 5000); // five fragments, packed four per DATA_FRAG
    let nack = |fragments: &[u32], sn_: i64, count: i32| NackFragRepr {
        reader_id: reader.entity_id,
        writer_id: writer_guid().entity_id,
        writer_sn: sn(sn_),
        fragment_number_state: FragmentNumberSet::from_members(
            FragmentNumber(fragments[0]),
            fragments.iter().map(|f| FragmentNumber(*f)),
        )
        .unwrap(),
        count: Count(count),
    };
    w.handle_nack_frag(T0, reader, &nack(&[6, 7, 200], 1, 1));
    w.handle_nack_frag(T0, reader, &nack(&[1], 99, 2));
    assert_eq!(w.stats().nack_frags_invalid, 2);
    assert_eq!(
        w.poll_timeout().map(|t| t > T0 + Duration::from_millis(50)),
        Some(true)
    );
    assert!(drain_writer(&mut w, T0 + Duration::from_millis(20)).is_empty());
    // A real request is served: just fragment 2, after nack_response_delay.
    w.handle_nack_frag(T0, reader, &nack(&[2, 9], 1, 3));
    assert_eq!(w.stats().nack_frags_invalid, 3);
    let repaired = drain_writer(&mut w, T0 + Duration::from_millis(10));
    let mut frags = Vec::new();
    for_each_submessage(&repaired, |sm| {
        if let Submessage::DataFrag(f) = sm {
            frags.push((
                f.fragment_starting_num.0,
                f.fragments_in_submessage,
                f.data.len(),
            ));
        }
    });
    assert_eq!(frags, vec![(2, 1, 1000)]);
    assert_eq!(w.stats().fragments_resent, 1);
}

#[test]
fn data_frag_with_4_gib_sample_size_is_rejected_without_allocating() {
    let mut r = reliable_reader();
    let bytes = vec![0u8; 1024];
    r.handle_data_frag(T0, writer_guid(), &frag(1, 1, 1024, u32::MAX, &bytes), None);
    assert_eq!(r.stats().samples_too_large, 1);
    assert_eq!(
        r.poll_timeout(),
        Some(T0 + Duration::from_millis(5)),
        "only the ACKNACK timer"
    );
}

#[test]
fn inconsistent_fragments_and_reassembly_caps() {
    let mut r = reliable_reader();
    let bytes = vec![7u8; 1000];
    r.handle_data_frag(T0, writer_guid(), &frag(1, 1, 1000, 3000, &bytes), None);
    // Same sample, other fragment size or sample size.
    r.handle_data_frag(
        T0,
        writer_guid(),
        &frag(1, 2, 500, 3000, &bytes[..500]),
        None,
    );
    r.handle_data_frag(T0, writer_guid(), &frag(1, 2, 1000, 4000, &bytes), None);
    assert_eq!(r.stats().fragments_inconsistent, 2);
    // Overlapping and duplicate fragments are fine.
    r.handle_data_frag(T0, writer_guid(), &frag(1, 1, 1000, 3000, &bytes), None);
    // Sixteen reassemblies at most (reliable keeps the lowest numbers).
    for s in 2..=20 {
        r.handle_data_frag(T0, writer_guid(), &frag(s, 1, 1000, 3000, &bytes), None);
    }
    assert_eq!(r.stats().reassembly_no_room, 4);
    // Completing sample 1 (fragments 2 and 3, one submessage) delivers it.
    let rest = vec![7u8; 2000];
    r.handle_data_frag(T0, writer_guid(), &frag(1, 2, 1000, 3000, &rest), None);
    let s = r.poll_sample().unwrap();
    assert_eq!((s.sequence_number, s.payload.len()), (sn(1), 3000));
    // Stale reassemblies time out.
    let later = T0 + Duration::from_secs(11);
    r.handle_timeout(later);
    assert_eq!(r.stats().reassembly_timed_out, 15);
}

#[test]
fn nack_frag_requests_only_missing_fragments_of_announced_samples() {
    let mut r = reliable_reader();
    let bytes = vec![1u8; 100];
    // Fragments 1 and 3 of a 5-fragment sample 1.
    r.handle_data_frag(T0, writer_guid(), &frag(1, 1, 100, 500, &bytes), None);
    r.handle_data_frag(T0, writer_guid(), &frag(1, 3, 100, 500, &bytes), None);
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 2, 1, true));
    let at = r.poll_timeout().unwrap();
    let ts = drain_reader(&mut r, at);
    let mut nacks = Vec::new();
    let mut acks = Vec::new();
    for_each_submessage(&ts, |sm| match sm {
        Submessage::NackFrag(n) => nacks.push((
            n.writer_sn,
            n.fragment_number_state
                .iter()
                .map(|f| f.0)
                .collect::<Vec<_>>(),
        )),
        Submessage::AckNack(a) => acks.push(a.reader_sn_state.iter().collect::<Vec<_>>()),
        _ => {}
    });
    assert_eq!(nacks, vec![(sn(1), vec![2, 4, 5])]);
    assert_eq!(
        acks,
        vec![vec![sn(2)]],
        "sample 1 is NACK_FRAGed, not NACKed"
    );
    // A HEARTBEAT_FRAG for a sample not yet covered by a HEARTBEAT: only announced
    // fragments are requested.
    r.handle_data_frag(at, writer_guid(), &frag(3, 2, 100, 500, &bytes), None);
    let hbf = HeartbeatFragRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer_guid().entity_id,
        writer_sn: sn(3),
        last_fragment_num: FragmentNumber(3),
        count: Count(1),
    };
    r.handle_heartbeat_frag(at, writer_guid(), &hbf);
    r.handle_heartbeat_frag(at, writer_guid(), &hbf);
    assert_eq!(r.stats().heartbeats_stale, 1);
    let due = r.poll_timeout().unwrap();
    let ts = drain_reader(&mut r, due);
    let mut nacks = Vec::new();
    for_each_submessage(&ts, |sm| {
        if let Submessage::NackFrag(n) = sm {
            nacks.push((
                n.writer_sn.0,
                n.fragment_number_state.iter().map(|f| f.0).collect(),
            ));
        }
    });
    assert_eq!(nacks, vec![(1, vec![2, 4, 5]), (3, vec![1, 3])]);
}

/// A writer streaming 10 samples a second; one forged HEARTBEAT or GAP naming it is injected
/// into the reader after sample 20; the stream must go on, every sample delivered once, in
/// order, none counted lost (issue 34 item 2, docs/robustness.md §1).
#[test]
fn forged_heartbeat_or_gap_does_not_silence_a_streaming_writer() {
    let huge = sn(1 << 62);
    let near = sn(5000);
    let writer = writer_guid();
    let forged_hb = |first, last, count| {
        let mut h = heartbeat(0, 0, count, false);
        (h.first_sn, h.last_sn) = (first, last);
        h
    };
    let forged_gap = move |end: SequenceNumber| GapRepr {
        reader_id: EntityId::UNKNOWN,
        writer_id: writer.entity_id,
        gap_start: sn(1),
        gap_list: SequenceNumberSet::empty(end),
    };
    type Inject = Box<dyn Fn(&mut Reader, Instant)>;
    let cases: Vec<(&str, Inject, bool)> = vec![
        (
            "HEARTBEAT 2^62",
            Box::new(move |r, t| {
                r.handle_heartbeat(t, writer, &forged_hb(huge, huge, 0x3fff_ffff))
            }),
            true,
        ),
        (
            "HEARTBEAT within reach, count ahead",
            Box::new(move |r, t| r.handle_heartbeat(t, writer, &forged_hb(near, near, 1000))),
            false,
        ),
        (
            "GAP 2^62",
            Box::new(move |r, t| r.handle_gap(t, writer, &forged_gap(huge))),
            true,
        ),
        (
            "GAP within reach",
            Box::new(move |r, t| r.handle_gap(t, writer, &forged_gap(near))),
            false,
        ),
    ];
    for (what, inject, implausible) in cases {
        let mut pair = Pair::new(
            34,
            writer_config(true, HistoryKind::KeepAll { max_samples: 100 }),
            reader_config(0, true, HistoryKind::KeepAll { max_samples: 1000 }),
        );
        for i in 0..40u32 {
            if i == 20 {
                let now = pair.now;
                inject(&mut pair.readers[0].reader, now);
            }
            pair.write_blocking(payload(i, 32), Duration::from_secs(5))
                .unwrap();
            pair.run_for(Duration::from_millis(100));
        }
        let all = pair.run_while_not(Duration::from_secs(10), |p| {
            p.readers[0].received.len() >= 40
        });
        let received = &pair.readers[0].received;
        assert!(all, "{what}: {} of 40 delivered", received.len());
        assert_eq!(sns(received), (1..=40).collect::<Vec<_>>(), "{what}");
        let s = pair.readers[0].reader.stats();
        assert_eq!(s.samples_lost, 0, "{what}");
        assert_eq!(s.irrelevant_skipped, 0, "{what}");
        if implausible {
            assert_eq!(
                s.implausible_sequence_numbers, 1,
                "{what}: dropped as malformed"
            );
        } else {
            assert_eq!(
                s.skips_undone, 1,
                "{what}: undone by the writer's next HEARTBEAT"
            );
        }
    }
}

#[test]
fn count_far_behind_the_last_resynchronises() {
    let mut r = reliable_reader();
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 1, 0x3fff_ffff, true));
    // 1024 behind: a duplicate or reordered HEARTBEAT.
    r.handle_heartbeat(
        T0,
        writer_guid(),
        &heartbeat(1, 1, 0x3fff_ffff - 1024, true),
    );
    assert_eq!(r.stats().heartbeats_stale, 1);
    // Further behind: the last count was not the writer's.
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 2, 3, true));
    r.handle_heartbeat(T0, writer_guid(), &heartbeat(1, 2, 4, true));
    assert_eq!(r.stats().heartbeats_stale, 1);
}

/// A reader that never acknowledges holds a KEEP_ALL writer at its byte bound
/// (`max_history_bytes`), not only at `max_samples`: the write beyond it fails with `Full`
/// (the runtime then blocks up to `max_blocking_time` and times out), and once the reader
/// acknowledges, writes go on.
#[test]
fn a_keep_all_history_is_bounded_in_bytes() {
    let config = WriterConfig {
        max_history_bytes: 1000,
        ..writer_config(true, HistoryKind::KeepAll { max_samples: 5000 })
    };
    let (mut w, reader) = writer_with_reader(config);
    write_n(&mut w, 3, 300);
    assert_eq!(
        w.write(T0, Arc::from(payload(3, 300)), None, None),
        Err(WriteError::Full),
        "900 bytes held, 300 more would pass 1000"
    );
    assert_eq!(w.history_len(), 3);
    w.handle_acknack(T0, reader, &acknack(3, &[], 2));
    w.write(T0, Arc::from(payload(3, 300)), None, None)
        .expect("room once samples 1 and 2 were acknowledged");
    // A sample larger than the bound still goes into an empty history.
    let (mut w, _) = writer_with_reader(WriterConfig {
        max_history_bytes: 100,
        ..writer_config(true, HistoryKind::KeepAll { max_samples: 5000 })
    });
    w.write(T0, Arc::from(payload(0, 300)), None, None)
        .expect("one sample always fits");
}

/// A reader whose ACKNACK count goes back after `ACKNACK_COUNT_RESET_AFTER` of silence lost
/// this writer and matched it again (its participant's lease of ours ran out): its proxy
/// starts afresh and it gets a HEARTBEAT (at once, and repairs of what it asks for), where
/// the stale count used to be dropped for good. Within the timeout a stale count is still
/// dropped (see `acknack_beyond_max_is_clamped_and_bases_never_lower`).
#[test]
fn a_reader_that_restarted_its_count_after_a_silence_is_served_again() {
    let (mut w, reader) = writer_with_reader(writer_config(true, HistoryKind::KeepLast(10)));
    write_n(&mut w, 5, 16);
    w.handle_acknack(T0, reader, &acknack(6, &[], 40));
    assert!(w.is_acked_by_all(sn(5)));
    write_n(&mut w, 3, 16);
    let later = T0 + crate::endpoint::ACKNACK_COUNT_RESET_AFTER;
    // The reader's fresh proxy of us: count 1, nothing received (its pre-emptive ACKNACK).
    w.handle_acknack(later, reader, &acknack(1, &[], 1));
    assert_eq!(w.stats().readers_restarted, 1);
    assert_eq!(w.stats().acknacks_stale, 0);
    let mut hbs = Vec::new();
    for_each_submessage(&drain_writer(&mut w, later), |sm| {
        if let Submessage::Heartbeat(h) = sm {
            hbs.push((h.first_sn, h.last_sn));
        }
    });
    assert_eq!(
        hbs,
        vec![(sn(6), sn(8))],
        "what the history still holds (1 to 5 were acknowledged and released)"
    );
    // It asks for what it lacks and gets what is left (the HEARTBEAT's firstSN already told
    // it that 1 to 5 are gone).
    w.handle_acknack(later, reader, &acknack(1, &[1, 2, 3, 4, 5, 6, 7, 8], 2));
    let at = w.poll_timeout().expect("a repair is scheduled");
    let mut resent = Vec::new();
    for_each_submessage(&drain_writer(&mut w, at), |sm| {
        if let Submessage::Data(d) = sm {
            resent.push(d.writer_sn);
        }
    });
    assert_eq!(resent, (6..=8).map(sn).collect::<Vec<_>>());
}

/// A reliable reader that has not answered a HEARTBEAT gets one every `heartbeat_period`,
/// even while nothing is written: until it answers, it does not know where the writer's
/// numbering stands, and a volatile Cyclone DDS (or Fast DDS) reader takes the first HEARTBEAT
/// it gets as the start of the stream, skipping a sample lost before. Fast DDS's pre-emptive
/// ACKNACK is no answer; the first real one makes the reader synced
/// (`Writer::has_synced_reader`) and the writer quiet while nothing is unacknowledged.
#[test]
fn a_reader_gets_heartbeats_until_it_answers_one() {
    let (mut w, reader) = writer_with_reader(writer_config(true, HistoryKind::KeepLast(10)));
    let period = w.config().heartbeat_period;
    let heartbeats = |w: &mut Writer, at: Instant| {
        w.handle_timeout(at);
        let mut n = 0;
        for_each_submessage(&drain_writer(w, at), |sm| {
            n += usize::from(matches!(sm, Submessage::Heartbeat(_)));
        });
        n
    };
    assert!(!w.has_synced_reader());
    assert_eq!(
        w.poll_timeout(),
        Some(T0 + period),
        "the next HEARTBEAT is armed"
    );
    assert_eq!(heartbeats(&mut w, T0 + period), 1);
    assert_eq!(heartbeats(&mut w, T0 + period * 2), 1);
    // The pre-emptive ACKNACK (base 0) is answered with a HEARTBEAT, but is no answer itself.
    w.handle_acknack(T0 + period * 2, reader, &acknack(0, &[], 1));
    assert!(!w.has_synced_reader());
    assert_eq!(heartbeats(&mut w, T0 + period * 3), 1);
    w.handle_acknack(T0 + period * 3, reader, &acknack(1, &[], 2));
    assert!(w.has_synced_reader());
    assert_eq!(heartbeats(&mut w, T0 + period * 4), 0);
    assert_eq!(
        w.poll_timeout(),
        None,
        "quiet: nothing unacknowledged, the reader synced"
    );
}
