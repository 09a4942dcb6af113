//! Reliable delivery: every sample exactly once, in order, whatever the network does.

use std::time::Duration;

use super::*;
use crate::endpoint::WriteError;
use crate::sim::LinkConfig;

/// Writes `count` samples of `len` bytes, one every `interval`, blocking on a full history,
/// then runs until the reader has them all (or a minute of virtual time passed).
fn write_and_drain(pair: &mut Pair, count: u32, len: usize, interval: Duration) {
    for i in 0..count {
        pair.write_blocking(payload(i, len), Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("write {i} failed: {e}"));
        pair.run_for(interval);
    }
    let all = pair.run_while_not(Duration::from_secs(60), |p| {
        p.readers[0].received.len() >= count as usize
    });
    let got = pair.readers[0].received.len();
    assert!(all, "only {got} of {count} samples arrived by {}", pair.now);
    // Let the last repairs and duplicates settle, then check nothing more arrives.
    pair.run_for(Duration::from_secs(2));
}

#[test]
fn keep_all_small_samples_at_20_percent_loss() {
    for seed in [1, 2, 3] {
        let mut pair = rough_pair(seed, 0.2, 256);
        write_and_drain(&mut pair, 1000, 64, MS);
        let received = &pair.readers[0].received;
        assert_eq!(sns(received), (1..=1000).collect::<Vec<_>>(), "seed {seed}");
        assert_in_order_and_intact(received, 64);
        let ws = pair.writer.stats();
        let rs = pair.readers[0].reader.stats();
        assert!(
            ws.samples_resent > 0,
            "seed {seed}: loss must cause repairs"
        );
        assert!(
            rs.duplicates > 0,
            "seed {seed}: duplication must be filtered"
        );
        assert!(pair.writer.is_acked_by_all(sn(1000)), "seed {seed}");
        assert_eq!(
            pair.writer.history_len(),
            0,
            "volatile KEEP_ALL releases acked samples"
        );
        assert_eq!(
            pair.writer.poll_timeout(),
            None,
            "heartbeats stop once all is acked"
        );
    }
}

#[test]
fn keep_all_fragmented_samples_at_20_percent_loss() {
    for seed in [11, 12, 13] {
        let mut pair = rough_pair(seed, 0.2, 8);
        write_and_drain(&mut pair, 20, 300_000, 5 * MS);
        let received = &pair.readers[0].received;
        assert_eq!(sns(received), (1..=20).collect::<Vec<_>>(), "seed {seed}");
        assert_in_order_and_intact(received, 300_000);
        let ws = pair.writer.stats();
        assert!(
            ws.fragments_resent > 0 || ws.samples_resent > 0,
            "seed {seed}"
        );
        assert!(
            pair.readers[0].reader.stats().nack_frags_sent > 0,
            "seed {seed}"
        );
    }
}

#[test]
fn several_fragments_per_submessage_at_20_percent_loss() {
    // 300 KB in 1000-byte fragments, 64 per DATA_FRAG: a lost datagram loses a run of them.
    let mut pair = rough_pair(21, 0.2, 8);
    let mut config = pair.writer.config().clone();
    config.fragment_size = 1000;
    pair.writer = crate::endpoint::Writer::new(config);
    let mut proxy = crate::endpoint::ReaderProxyInfo::new(
        pair.readers[0].reader.guid(),
        vec![pair.readers[0].locator],
    );
    proxy.reliable = true;
    pair.writer.add_reader(pair.now, proxy);
    write_and_drain(&mut pair, 20, 300_000, 5 * MS);
    let received = &pair.readers[0].received;
    assert_eq!(sns(received), (1..=20).collect::<Vec<_>>());
    assert_in_order_and_intact(received, 300_000);
    assert!(pair.readers[0].reader.stats().data_frags_received >= 20 * 5);
}

#[test]
fn no_retransmissions_without_loss() {
    for (count, len) in [(1000u32, 64usize), (20, 300_000)] {
        let mut pair = rough_pair(5, 0.0, 256);
        pair.set_links(0, LinkConfig::PERFECT, LinkConfig::PERFECT);
        write_and_drain(&mut pair, count, len, MS);
        let received = &pair.readers[0].received;
        assert_eq!(received.len(), count as usize);
        assert_in_order_and_intact(received, len);
        let ws = pair.writer.stats();
        assert_eq!(ws.samples_resent, 0, "{ws:?}");
        assert_eq!(ws.fragments_resent, 0, "{ws:?}");
        assert_eq!(ws.gaps_sent, 0, "{ws:?}");
        let rs = pair.readers[0].reader.stats();
        assert_eq!(rs.duplicates, 0, "{rs:?}");
        assert_eq!(rs.nack_frags_sent, 0, "{rs:?}");
        assert_eq!(ws.acknacks_stale, 0);
    }
}

#[test]
fn keep_last_writer_with_slow_lossy_reader_gaps_overwritten_samples() {
    for seed in [31, 32] {
        let mut pair = Pair::new(
            seed,
            writer_config(true, HistoryKind::KeepLast(5)),
            reader_config(0, true, HistoryKind::KeepLast(1000)),
        );
        pair.set_links(0, LinkConfig::rough(0.4), LinkConfig::rough(0.4));
        // Faster than repairs can keep up with: 200 samples, one every 0.2 ms.
        for i in 0..200 {
            pair.write(payload(i, 32)).unwrap();
            pair.run_for(Duration::from_micros(200));
        }
        let done = pair.run_while_not(Duration::from_secs(30), |p| {
            p.readers[0].received.last().map(|s| s.sequence_number) == Some(sn(200))
        });
        assert!(done, "the newest sample must arrive (seed {seed})");
        let received = &pair.readers[0].received;
        assert_in_order_and_intact(received, 32);
        assert!(received.len() < 200, "some samples were overwritten");
        let rs = pair.readers[0].reader.stats();
        assert!(rs.irrelevant_skipped > 0, "{rs:?}");
        let ws = pair.writer.stats();
        assert!(ws.overwritten_unacked > 0 || ws.gaps_sent > 0, "{ws:?}");
        assert_every_number_delivered_or_lost(received, rs.samples_lost);
        let count = received.len();
        pair.run_for(Duration::from_secs(1));
        assert_eq!(
            pair.readers[0].received.len(),
            count,
            "nothing after the last"
        );
    }
}

#[test]
fn keep_all_write_fails_when_reader_never_acknowledges() {
    let mut pair = Pair::new(
        41,
        writer_config(true, HistoryKind::KeepAll { max_samples: 10 }),
        reader_config(0, true, HistoryKind::KeepAll { max_samples: 100 }),
    );
    // Data flows, ACKNACKs never come back.
    pair.set_links(0, LinkConfig::PERFECT, LinkConfig::lossy(1.0));
    for i in 0..10 {
        pair.write(payload(i, 16)).unwrap();
        pair.run_for(MS);
    }
    pair.run_for(Duration::from_millis(500));
    assert_eq!(pair.write(payload(10, 16)), Err(WriteError::Full));
    assert_eq!(pair.writer.stats().write_full, 1);
    assert_eq!(
        pair.readers[0].received.len(),
        10,
        "the reader did get the data"
    );
    assert!(
        pair.writer.stats().heartbeats_sent > 3,
        "it keeps asking for acks"
    );
    // Once ACKNACKs get through, the history drains and writing resumes.
    pair.set_links(0, LinkConfig::PERFECT, LinkConfig::PERFECT);
    let sn11 = pair
        .write_blocking(payload(10, 16), Duration::from_secs(1))
        .unwrap();
    assert_eq!(sn11, sn(11));
}

#[test]
fn nack_response_delay_coalesces_and_repairs_promptly() {
    // Scripted: sample 2 of 3 is lost; the Final HEARTBEAT after sample 3 makes the reader NACK
    // it after heartbeat_response_delay, and the writer repairs it nack_response_delay later.
    let mut pair = rough_pair(51, 0.0, 16);
    pair.set_links(0, LinkConfig::PERFECT, LinkConfig::PERFECT);
    pair.run_for(Duration::from_millis(50)); // matching traffic settles
    pair.write(payload(0, 16)).unwrap();
    pair.write(payload(1, 16)).unwrap();
    let mut first = true;
    let writer_locator = pair.writer_locator;
    let dropped = pair.network.drop_in_flight(|from, _, _| {
        let hit = from == writer_locator && !first;
        first = false;
        hit
    });
    assert_eq!(dropped, 1);
    pair.write(payload(2, 16)).unwrap();
    let t0 = pair.now;
    let done = pair.run_while_not(Duration::from_secs(1), |p| p.readers[0].received.len() == 3);
    assert!(done);
    // latency 1 ms + response delay 5 ms + latency 1 ms + nack delay 10 ms + latency 1 ms.
    let took = pair.now - t0;
    assert!(took <= Duration::from_millis(20), "repair took {took:?}");
    assert_eq!(pair.writer.stats().samples_resent, 1);
    assert_in_order_and_intact(&pair.readers[0].received, 16);
}

#[test]
fn reliable_and_best_effort_readers_of_one_writer() {
    // The best-effort reader neither acknowledges nor holds the KEEP_ALL writer back.
    let mut pair = rough_pair(91, 0.2, 20);
    let be = pair.add_reader(reader_config(1, false, HistoryKind::KeepLast(1000)));
    let slow = pair.add_reader(reader_config(
        2,
        true,
        HistoryKind::KeepAll { max_samples: 1000 },
    ));
    pair.set_links(be, LinkConfig::rough(0.2), LinkConfig::rough(0.2));
    pair.set_links(slow, LinkConfig::rough(0.4), LinkConfig::rough(0.4));
    write_and_drain(&mut pair, 100, 100, Duration::from_micros(500));
    for r in [0, slow] {
        assert_eq!(
            sns(&pair.readers[r].received),
            (1..=100).collect::<Vec<_>>()
        );
    }
    let got = &pair.readers[be].received;
    assert_in_order_and_intact(got, 100);
    assert!(got.len() < 100);
    assert_eq!(pair.readers[be].reader.stats().acknacks_sent, 0);
}

#[test]
fn same_seed_same_run() {
    let run = |seed| {
        let mut pair = rough_pair(seed, 0.2, 32);
        write_and_drain(&mut pair, 200, 64, MS);
        (
            pair.now,
            pair.writer.stats(),
            pair.readers[0].reader.stats(),
            pair.network.stats(),
        )
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7).3, run(8).3);
}

/// Keep-all publications given up under loss, duplication and reordering: with a history of 4
/// and 20 % loss each way, a publication waits at most 20 ms (virtual) for room and is then
/// given up, as `publish` does after `max_blocking_time`. Every publication keeps its number;
/// the reader gets each written one once, in order and intact, and counts exactly the
/// given-up ones lost, though their GAPs are lost, repeated and repaired like samples.
#[test]
fn publications_given_up_under_loss_keep_their_numbers_and_are_each_counted_lost() {
    for seed in [21, 22, 23] {
        let mut pair = rough_pair(seed, 0.2, 4);
        let mut given_up = Vec::new();
        for publication in 1..=300i64 {
            pair.writer.skip_to(sn(publication));
            let index = u32::try_from(publication - 1).unwrap();
            match pair.write_blocking(payload(index, 64), Duration::from_millis(20)) {
                Ok(number) => assert_eq!(number, sn(publication), "seed {seed}"),
                Err(WriteError::Full) => {
                    let now = pair.now;
                    pair.writer.give_up_number(now);
                    given_up.push(publication);
                }
                Err(e) => panic!("seed {seed}: publication {publication}: {e}"),
            }
            pair.run_for(MS);
        }
        assert!(
            !given_up.is_empty(),
            "seed {seed}: no publication waited 20 ms"
        );
        let expected: Vec<i64> = (1..=300).filter(|p| !given_up.contains(p)).collect();
        let all = pair.run_while_not(Duration::from_secs(60), |p| {
            p.readers[0].received.len() >= expected.len()
        });
        assert!(all, "seed {seed}: not everything written arrived");
        pair.run_for(Duration::from_secs(2));
        let reader = &pair.readers[0];
        assert_eq!(sns(&reader.received), expected, "seed {seed}");
        assert_in_order_and_intact(&reader.received, 64);
        assert_eq!(
            reader.reader.stats().samples_lost,
            given_up.len() as u64,
            "seed {seed}: {} given up",
            given_up.len()
        );
    }
}

/// The application numbers its publications and the writer follows (`Writer::skip_to`). A
/// publication the application gave up (a keep-all write that found the history full until
/// its max_blocking_time) keeps its number, as on the application's same-host paths, and the
/// reader is told by a GAP and counts it lost, whether the history was acknowledged by the
/// next publication or not. Session 38's writer gave the number to the next publication
/// instead (its numbers then ran one behind the publication numbers); before that, whether
/// the number was skipped depended on timing (a flaky conformance test over UDP).
#[test]
fn a_publication_given_up_keeps_its_number_and_is_counted_lost_however_acknowledged() {
    for acknowledged_first in [true, false] {
        let mut pair = Pair::new(
            71,
            writer_config(true, HistoryKind::KeepAll { max_samples: 3 }),
            reader_config(0, true, HistoryKind::KeepAll { max_samples: 100 }),
        );
        pair.run_for(Duration::from_millis(100));
        for publication in 1..=3 {
            pair.writer.skip_to(sn(publication));
            pair.write(payload(publication as u32, 48)).unwrap();
        }
        assert_eq!(
            pair.write(payload(4, 48)),
            Err(WriteError::Full),
            "the history holds 3 unacknowledged samples"
        );
        let now = pair.now;
        pair.writer.give_up_number(now);
        if acknowledged_first {
            let acked = pair.run_while_not(Duration::from_secs(5), |p| p.writer.history_len() == 0);
            assert!(
                acked,
                "the reader acknowledged samples 1 to 3 and the given-up 4"
            );
        }
        pair.writer.skip_to(sn(5));
        assert_eq!(
            pair.write_blocking(payload(5, 48), Duration::from_secs(5)),
            Ok(sn(5)),
            "publication 5 keeps number 5 (acknowledged first: {acknowledged_first})"
        );
        pair.run_for(Duration::from_millis(500));
        let reader = &pair.readers[0];
        assert_eq!(sns(&reader.received), vec![1, 2, 3, 5]);
        assert_eq!(reader.reader.stats().samples_lost, 1);
        assert_eq!(
            reader
                .received
                .iter()
                .map(|s| s.lost_before)
                .collect::<Vec<_>>(),
            vec![0, 0, 0, 1]
        );
        assert_eq!(pair.writer.history_len(), 0, "everything acknowledged");
    }
}

/// The GAP for a given-up number goes to each matched reader addressed to it (INFO_DST with
/// its prefix, readerId its entity id), never with `readerId = ENTITYID_UNKNOWN`: Cyclone DDS
/// applies a GAP only to the reader it names, and its reader would otherwise wait for the
/// number until its ACKNACK brought a directed one. The samples themselves still go out once
/// to everyone.
#[test]
fn a_given_up_number_is_sent_to_each_reader_as_a_gap_addressed_to_it() {
    use crate::endpoint::{ReaderProxyInfo, Writer};
    use crate::message::MessageBuilder;
    use crate::receiver::{parse_message, ReceiveStats};
    use crate::sim::guid;
    use crate::types::{GuidPrefix, Locator};
    use crate::wire::{HeaderRepr, Submessage};
    use std::net::Ipv4Addr;

    let now = crate::instant::Instant::ZERO;
    let mut writer = Writer::new(writer_config(true, HistoryKind::KeepAll { max_samples: 2 }));
    let readers = [
        guid(2, 7, EntityId::KIND_READER_NO_KEY),
        guid(3, 9, EntityId::KIND_READER_NO_KEY),
    ];
    for (i, reader) in readers.iter().enumerate() {
        let host = u8::try_from(i + 2).unwrap();
        let locator = Locator::udpv4(Ipv4Addr::new(10, 0, 0, host), 7411);
        writer.add_reader(now, ReaderProxyInfo::new(*reader, vec![locator]));
    }
    // (destination prefix, readerId, gapStart) of every GAP the writer sends, and the
    // numbers of the DATA it sends to everyone.
    let drain = |writer: &mut Writer| {
        let header = HeaderRepr::new(writer.guid().prefix);
        let (mut gaps, mut broadcast_data) = (Vec::new(), Vec::new());
        while let Some(t) = writer.poll_transmit(now) {
            for datagram in t.datagrams(&header, MessageBuilder::UDP_MAX_PAYLOAD) {
                let mut stats = ReceiveStats::default();
                parse_message(&datagram, &mut stats, |rx| match rx.submessage {
                    Submessage::Gap(gap) => {
                        gaps.push((rx.receiver.dest_guid_prefix, gap.reader_id, gap.gap_start.0))
                    }
                    Submessage::Data(data) if data.reader_id == EntityId::UNKNOWN => {
                        broadcast_data.push(data.writer_sn.0);
                    }
                    _ => {}
                })
                .unwrap();
            }
        }
        gaps.sort();
        (gaps, broadcast_data)
    };
    drain(&mut writer);
    for index in 0..2 {
        writer
            .write(now, payload(index, 48).into(), None, None)
            .unwrap();
    }
    assert_eq!(
        writer.write(now, payload(2, 48).into(), None, None),
        Err(WriteError::Full),
        "nobody acknowledged the 2 samples"
    );
    writer.give_up_number(now);
    let (gaps, broadcast_data) = drain(&mut writer);
    assert_eq!(
        broadcast_data,
        vec![1, 2],
        "the samples went out once, to everyone"
    );
    let expected: Vec<(GuidPrefix, EntityId, i64)> =
        readers.iter().map(|r| (r.prefix, r.entity_id, 3)).collect();
    assert_eq!(
        gaps, expected,
        "one GAP for number 3 to each reader, addressed to it"
    );
}
