//! Best effort: no repairs, order kept, incomplete fragmented samples dropped.

use std::time::Duration;

use super::*;
use crate::sim::LinkConfig;

fn best_effort_pair(seed: u64, link: LinkConfig) -> Pair {
    let mut pair = Pair::new(
        seed,
        writer_config(false, HistoryKind::KeepLast(1)),
        reader_config(0, false, HistoryKind::KeepLast(1000)),
    );
    pair.set_links(0, link, link);
    pair
}

#[test]
fn lost_samples_are_not_repaired_and_order_is_kept() {
    for seed in [71, 72, 73] {
        let mut pair = best_effort_pair(seed, LinkConfig::rough(0.2));
        for i in 0..500 {
            pair.write(payload(i, 40)).unwrap();
            pair.run_for(MS);
        }
        pair.run_for(Duration::from_secs(1));
        let got = &pair.readers[0].received;
        assert_in_order_and_intact(got, 40);
        assert!(
            got.len() < 480 && got.len() > 300,
            "seed {seed}: {}",
            got.len()
        );
        let ws = pair.writer.stats();
        assert_eq!(
            (ws.samples_resent, ws.heartbeats_sent, ws.gaps_sent),
            (0, 0, 0)
        );
        let rs = pair.readers[0].reader.stats();
        assert_eq!(rs.acknacks_sent, 0);
        assert_every_number_delivered_or_lost(got, rs.samples_lost);
        assert_eq!(pair.reader_datagrams, 0, "a best-effort reader never sends");
    }
}

#[test]
fn fragmented_sample_missing_one_fragment_is_dropped_and_next_arrives() {
    let mut pair = best_effort_pair(74, LinkConfig::PERFECT);
    // A first sample arrives whole: numbers skipped after it count as lost.
    pair.write(payload(0, 300_000)).unwrap();
    pair.run_for(Duration::from_millis(10));
    pair.write(payload(1, 300_000)).unwrap();
    // Five 64000-byte fragments are in flight, one datagram each; lose the third.
    let mut n = 0;
    let dropped = pair.network.drop_in_flight(|_, _, _| {
        n += 1;
        n == 3
    });
    assert_eq!(dropped, 1);
    pair.run_for(Duration::from_millis(10));
    assert_eq!(sns(&pair.readers[0].received), vec![1]);
    pair.write(payload(2, 300_000)).unwrap();
    pair.run_for(Duration::from_millis(10));
    let got = &pair.readers[0].received;
    assert_eq!(sns(got), vec![1, 3]);
    assert_in_order_and_intact(got, 300_000);
    assert_eq!(pair.readers[0].reader.stats().samples_lost, 1);
    let lost_before: Vec<u64> = got.iter().map(|s| s.lost_before).collect();
    assert_eq!(
        lost_before,
        vec![0, 1],
        "the loss is reported with the sample after it"
    );
    // Nothing is left half-reassembled, and nothing is ever requested.
    let r = &pair.readers[0].reader;
    assert_eq!(r.poll_timeout(), None);
    assert_eq!(pair.reader_datagrams, 0);
}

#[test]
fn reader_keep_last_queue_overwrites_unread_samples() {
    let mut pair = Pair::new(
        75,
        writer_config(false, HistoryKind::KeepLast(1)),
        reader_config(0, false, HistoryKind::KeepLast(3)),
    );
    let r = &mut pair.readers[0].reader;
    let writer = pair.writer.guid();
    let now = pair.now;
    // Feed the reader directly so nothing polls its queue in between.
    for i in 1..=5u32 {
        let p = payload(i - 1, 16);
        let data = crate::wire::DataRepr {
            extra_flags: 0,
            reader_id: EntityId::UNKNOWN,
            writer_id: writer.entity_id,
            writer_sn: sn(i64::from(i)),
            inline_qos: None,
            payload: Some(crate::wire::SerializedPayload {
                kind: crate::wire::PayloadKind::Data,
                bytes: &p,
            }),
            non_standard_payload: false,
        };
        r.handle_data(now, writer, &data, None);
    }
    let mut got = Vec::new();
    while let Some(s) = r.poll_sample() {
        got.push(s.sequence_number.0);
    }
    assert_eq!(got, vec![3, 4, 5]);
    assert_eq!(r.stats().samples_overwritten, 2);
}

/// A keyed writer's samples carry their key hash in the inline QoS (RTPS 2.5 §9.6.3.8), the
/// reader sees it, and a sample that does not hold the key is refused at `write`.
#[test]
fn keyed_writers_send_the_key_hash_of_each_sample() {
    let mut pair = Pair::new(
        75,
        WriterConfig {
            key: Some(&KEYED),
            ..writer_config(true, HistoryKind::KeepLast(10))
        },
        reader_config(0, true, HistoryKind::KeepLast(10)),
    );
    // KeyedLong { key: 0x01020304, value: 7 } as rclpy serializes it.
    let sample = vec![0, 1, 0, 0, 4, 3, 2, 1, 7, 0, 0, 0];
    pair.write(sample.clone()).unwrap();
    pair.run_for(Duration::from_millis(50));
    let got = &pair.readers[0].received;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].payload[..sample.len()], sample[..]);
    let mut expected = [0u8; 16];
    expected[..4].copy_from_slice(&[4, 3, 2, 1]);
    assert_eq!(got[0].key_hash, Some(expected));
    assert!(matches!(
        pair.write(vec![0, 1, 0, 0, 4]),
        Err(crate::endpoint::WriteError::KeyNotFound(_))
    ));
}
