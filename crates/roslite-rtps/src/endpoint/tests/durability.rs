//! DURABILITY: transient-local late joiners get the kept history, volatile ones only new data.

use std::time::Duration;

use super::*;
use crate::sim::LinkConfig;

/// Writes `range` (indices) one per millisecond and lets the network settle.
fn write_range(pair: &mut Pair, range: std::ops::Range<u32>) {
    for i in range {
        pair.write(payload(i, 48)).unwrap();
        pair.run_for(MS);
    }
    pair.run_for(Duration::from_millis(500));
}

fn late_joiner_pair(seed: u64, history: HistoryKind, loss: f64) -> Pair {
    let mut w = writer_config(true, history);
    w.transient_local = true;
    let mut r = reader_config(0, true, HistoryKind::KeepAll { max_samples: 1000 });
    r.transient_local = true;
    let mut pair = Pair::new(seed, w, r);
    pair.set_links(0, LinkConfig::rough(loss), LinkConfig::rough(loss));
    pair
}

fn add_late_reader(pair: &mut Pair, transient_local: bool, loss: f64) -> usize {
    let mut r = reader_config(1, true, HistoryKind::KeepAll { max_samples: 1000 });
    r.transient_local = transient_local;
    let index = pair.add_reader(r);
    pair.set_links(index, LinkConfig::rough(loss), LinkConfig::rough(loss));
    index
}

#[test]
fn transient_local_late_joiner_gets_kept_history_then_live_data() {
    for seed in [61, 62] {
        let mut pair = late_joiner_pair(seed, HistoryKind::KeepLast(10), 0.1);
        write_range(&mut pair, 0..30);
        let late = add_late_reader(&mut pair, true, 0.1);
        pair.run_for(Duration::from_millis(300));
        write_range(&mut pair, 30..40);
        let done = pair.run_while_not(Duration::from_secs(10), |p| {
            p.readers[late].received.len() >= 20
        });
        assert!(done, "seed {seed}: {:?}", sns(&pair.readers[late].received));
        let got = &pair.readers[late].received;
        assert_eq!(sns(got), (21..=40).collect::<Vec<_>>(), "seed {seed}");
        assert_in_order_and_intact(got, 48);
        // Samples 1-20 left the history before it joined: skipped, not lost.
        let late_stats = pair.readers[late].reader.stats();
        assert!(late_stats.irrelevant_skipped >= 20, "{late_stats:?}");
        assert_eq!(late_stats.samples_lost, 0);
        // The first reader may have lost overwritten samples (KEEP_LAST 10, 10 % loss).
        let first = &pair.readers[0].received;
        assert_in_order_and_intact(first, 48);
        assert_eq!(first.last().map(|s| s.sequence_number), Some(sn(40)));
    }
}

#[test]
fn transient_local_keep_all_late_joiner_starts_at_sample_one() {
    // As the OMG dds-rtps Test_Durability_17: the first sample a late TRANSIENT_LOCAL,
    // KEEP_ALL reader sees is sample 1.
    let mut pair = late_joiner_pair(63, HistoryKind::KeepAll { max_samples: 100 }, 0.2);
    write_range(&mut pair, 0..30);
    let late = add_late_reader(&mut pair, true, 0.2);
    write_range(&mut pair, 30..35);
    let done = pair.run_while_not(Duration::from_secs(10), |p| {
        p.readers[late].received.len() >= 35
    });
    assert!(done);
    let got = &pair.readers[late].received;
    assert_eq!(sns(got), (1..=35).collect::<Vec<_>>());
    assert_in_order_and_intact(got, 48);
}

#[test]
fn volatile_late_joiner_gets_only_new_data() {
    for seed in [64, 65] {
        let mut pair = late_joiner_pair(seed, HistoryKind::KeepLast(10), 0.1);
        write_range(&mut pair, 0..30);
        let late = add_late_reader(&mut pair, false, 0.1);
        pair.run_for(Duration::from_millis(300));
        assert!(pair.readers[late].received.is_empty());
        write_range(&mut pair, 30..40);
        let done = pair.run_while_not(Duration::from_secs(10), |p| {
            p.readers[late].received.len() >= 10
        });
        assert!(done, "seed {seed}");
        pair.run_for(Duration::from_secs(1));
        let got = &pair.readers[late].received;
        assert_eq!(sns(got), (31..=40).collect::<Vec<_>>(), "seed {seed}");
        assert_in_order_and_intact(got, 48);
    }
}

#[test]
fn volatile_writer_gives_late_joiner_nothing_old() {
    // A volatile writer keeps nothing for a transient-local reader.
    let mut pair = Pair::new(
        66,
        writer_config(true, HistoryKind::KeepLast(10)),
        reader_config(0, true, HistoryKind::KeepAll { max_samples: 100 }),
    );
    write_range(&mut pair, 0..5);
    let late = add_late_reader(&mut pair, true, 0.0);
    write_range(&mut pair, 5..7);
    pair.run_for(Duration::from_secs(1));
    assert_eq!(sns(&pair.readers[late].received), vec![6, 7]);
}

/// The samples another writer wrote as `first..`, for [`Writer::adopt_history`]: the payloads
/// [`payload`] makes for the indices `first - 1 ..`, so that [`assert_in_order_and_intact`]
/// holds for them under their adopted numbers.
fn adopted(pair: &Pair, first: u32, count: u32) -> Vec<crate::endpoint::AdoptedSample> {
    (first - 1..first - 1 + count)
        .map(|index| crate::endpoint::AdoptedSample {
            payload: payload(index, 48).into(),
            source_timestamp: Some(pair.wall_clock()),
        })
        .collect()
}

/// A transient-local writer that takes over another's history (a node moved here): the reader
/// matched before (it had those samples from the other writer) is sent none of them, even
/// over a lossy link where it asks for what it lacks; a transient-local reader matched after
/// gets the newest `depth` under their original numbers, and the numbers before them are
/// skipped as irrelevant, not lost; a volatile one gets none. New samples go on numbered
/// after them, to everyone.
#[test]
fn an_adopted_history_goes_only_to_readers_matched_after_it() {
    for (seed, loss) in [(67, 0.0), (68, 0.2)] {
        let mut pair = late_joiner_pair(seed, HistoryKind::KeepLast(3), loss);
        pair.run_for(Duration::from_millis(300));
        let samples = adopted(&pair, 11, 5);
        let next = pair
            .writer
            .adopt_history(pair.now, sn(11), samples)
            .unwrap();
        assert_eq!(next, sn(16), "seed {seed}");
        assert_eq!(pair.writer.history_len(), 3, "the newest depth are kept");
        assert_eq!(
            pair.writer
                .adopt_history(pair.now, sn(16), adopted(&pair, 16, 1)),
            Err(crate::endpoint::AdoptError::NotFresh { next: sn(16) }),
            "a history is taken only into an empty one"
        );
        pair.flush();
        pair.run_for(Duration::from_secs(1));
        assert_eq!(pair.writer.stats().data_sent, 0, "seed {seed}");
        assert!(pair.readers[0].received.is_empty(), "seed {seed}");

        let late = add_late_reader(&mut pair, true, loss);
        let volatile = {
            let r = reader_config(2, true, HistoryKind::KeepAll { max_samples: 1000 });
            let index = pair.add_reader(r);
            pair.set_links(index, LinkConfig::rough(loss), LinkConfig::rough(loss));
            index
        };
        let done = pair.run_while_not(Duration::from_secs(10), |p| {
            p.readers[late].received.len() >= 3
        });
        assert!(done, "seed {seed}: {:?}", sns(&pair.readers[late].received));
        pair.run_for(Duration::from_secs(1));
        assert_eq!(sns(&pair.readers[late].received), vec![13, 14, 15]);
        assert_in_order_and_intact(&pair.readers[late].received, 48);
        assert!(pair.readers[volatile].received.is_empty());
        assert!(pair.readers[0].received.is_empty(), "seed {seed}");

        write_range(&mut pair, 15..17);
        let done = pair.run_while_not(Duration::from_secs(10), |p| {
            p.readers
                .iter()
                .all(|r| r.received.last().map(|s| s.sequence_number) == Some(sn(17)))
        });
        assert!(done, "seed {seed}");
        assert_eq!(sns(&pair.readers[0].received), vec![16, 17], "seed {seed}");
        assert_eq!(sns(&pair.readers[late].received), vec![13, 14, 15, 16, 17]);
        assert_eq!(sns(&pair.readers[volatile].received), vec![16, 17]);
        for (i, r) in pair.readers.iter().enumerate() {
            assert_in_order_and_intact(&r.received, 48);
            let stats = r.reader.stats();
            assert_eq!(stats.samples_lost, 0, "seed {seed}, reader {i}: {stats:?}");
        }
        // Reader 0 and the late joiner skipped the numbers before theirs as irrelevant.
        assert!(pair.readers[late].reader.stats().irrelevant_skipped >= 12);
        assert!(pair.readers[0].reader.stats().irrelevant_skipped >= 15);
    }
}

/// A volatile writer that continues another's numbering (no history to adopt) while a reader
/// is already matched: that reader's first sample is the continued number, nothing counted
/// lost; and a writer with samples of its own refuses a history.
#[test]
fn a_continued_numbering_reaches_a_reader_matched_before_it() {
    let mut pair = Pair::new(
        69,
        writer_config(true, HistoryKind::KeepLast(10)),
        reader_config(0, true, HistoryKind::KeepAll { max_samples: 100 }),
    );
    pair.set_links(0, LinkConfig::rough(0.2), LinkConfig::rough(0.2));
    pair.run_for(Duration::from_millis(300));
    let next = pair.writer.adopt_history(pair.now, sn(41), Vec::new());
    assert_eq!(next, Ok(sn(41)));
    pair.flush();
    write_range(&mut pair, 40..45);
    let done = pair.run_while_not(Duration::from_secs(10), |p| {
        p.readers[0].received.len() >= 5
    });
    assert!(done);
    assert_eq!(sns(&pair.readers[0].received), vec![41, 42, 43, 44, 45]);
    assert_in_order_and_intact(&pair.readers[0].received, 48);
    assert_eq!(pair.readers[0].reader.stats().samples_lost, 0);

    let refused = pair
        .writer
        .adopt_history(pair.now, sn(45), adopted(&pair, 45, 1));
    assert_eq!(
        refused,
        Err(crate::endpoint::AdoptError::NotFresh { next: sn(46) }),
        "a history never takes numbers the writer used"
    );
    let mut fresh = crate::endpoint::Writer::new(writer_config(true, HistoryKind::KeepLast(10)));
    let short = vec![crate::endpoint::AdoptedSample {
        payload: vec![0u8, 1].into(),
        source_timestamp: None,
    }];
    assert!(matches!(
        fresh.adopt_history(pair.now, sn(3), short),
        Err(crate::endpoint::AdoptError::Sample { sn: s, .. }) if s == sn(3)
    ));
    assert_eq!(fresh.last_sequence_number(), sn(0), "nothing changed");
}

#[test]
fn keyed_keep_last_late_joiner_gets_the_newest_of_each_instance() {
    // DDS 1.4 §2.2.3.18: KEEP_LAST depth applies per instance. Instance 9 is written once,
    // first; instances 0, 1 and 2 forty times after it. A late joiner gets sample 1 and the
    // newest two of each other instance, whatever was lost on the way.
    for seed in [66, 67] {
        let mut r = reader_config(0, true, HistoryKind::KeepAll { max_samples: 1000 });
        r.transient_local = true;
        let mut pair = Pair::new(seed, keyed_writer(HistoryKind::KeepLast(2)), r);
        pair.set_links(0, LinkConfig::rough(0.1), LinkConfig::rough(0.1));
        pair.write(keyed_payload(9, 0)).unwrap();
        for i in 1..=40 {
            pair.write(keyed_payload(i % 3, i)).unwrap();
            pair.run_for(MS);
        }
        pair.run_for(Duration::from_millis(500));
        assert_eq!(pair.writer.history_len(), 7, "seed {seed}");
        let late = add_late_reader(&mut pair, true, 0.1);
        let done = pair.run_while_not(Duration::from_secs(10), |p| {
            p.readers[late].received.len() >= 7
        });
        assert!(done, "seed {seed}: {:?}", sns(&pair.readers[late].received));
        pair.run_for(Duration::from_millis(500));
        let got = &pair.readers[late].received;
        assert_eq!(sns(got), [1, 36, 37, 38, 39, 40, 41], "seed {seed}");
        let keys: Vec<u8> = got.iter().map(|s| s.payload[4]).collect();
        assert_eq!(keys, [9, 2, 0, 1, 2, 0, 1], "seed {seed}");
        // roslite's readers count a GAP after their first sample as lost, as a same-host
        // subscription counts a gap in its numbering: every number is delivered or lost.
        let stats = pair.readers[late].reader.stats();
        assert_eq!(stats.samples_lost, 34, "seed {seed}: {stats:?}");
        // The hole between sample 1 and 36 goes as one GAP, not one per number.
        assert!(
            pair.writer.stats().gaps_sent < 20,
            "{:?}",
            pair.writer.stats()
        );
    }
}

#[test]
fn a_keyed_keep_last_history_keeps_depth_of_each_instance_up_to_its_instance_limit() {
    use crate::endpoint::{Writer, MAX_KEPT_INSTANCES};
    use crate::instant::Instant;
    let mut writer = Writer::new(keyed_writer(HistoryKind::KeepLast(1)));
    for i in 0..100 {
        writer
            .write(Instant::ZERO, keyed_payload(7, i).into(), None, None)
            .unwrap();
    }
    assert_eq!(writer.history_len(), 1);
    assert_eq!(writer.stats().instance_limit_overwritten, 0);
    let instances = u32::try_from(MAX_KEPT_INSTANCES).unwrap() + 10;
    for key in 0..instances {
        writer
            .write(
                Instant::ZERO,
                keyed_payload(1000 + key, key).into(),
                None,
                None,
            )
            .unwrap();
    }
    assert_eq!(writer.history_len(), MAX_KEPT_INSTANCES);
    assert_eq!(writer.stats().instance_limit_overwritten, 11);
    // An unkeyed writer of the same depth keeps one sample in all.
    let mut unkeyed = Writer::new(WriterConfig {
        key: None,
        ..keyed_writer(HistoryKind::KeepLast(1))
    });
    for key in 0..10 {
        unkeyed
            .write(Instant::ZERO, keyed_payload(key, key).into(), None, None)
            .unwrap();
    }
    assert_eq!(unkeyed.history_len(), 1);
}

/// A keyed writer that takes over another's history (a node that moved here) keeps `depth` of
/// each instance of it, under the original numbers: a late joiner gets the newest of each key,
/// through 10 % loss.
#[test]
fn an_adopted_keyed_history_keeps_the_newest_of_each_instance() {
    use crate::endpoint::AdoptedSample;
    let mut r = reader_config(0, true, HistoryKind::KeepAll { max_samples: 1000 });
    r.transient_local = true;
    let mut pair = Pair::new(69, keyed_writer(HistoryKind::KeepLast(1)), r);
    pair.set_links(0, LinkConfig::rough(0.1), LinkConfig::rough(0.1));
    // Numbers 11 to 19 of a writer of keys 0, 1, 2 in turn; key 7 wrote 12 alone.
    let samples: Vec<AdoptedSample> = (0..9u32)
        .map(|i| AdoptedSample {
            payload: keyed_payload(if i == 1 { 7 } else { i % 3 }, i).into(),
            source_timestamp: Some(pair.wall_clock()),
        })
        .collect();
    let now = pair.now;
    assert_eq!(pair.writer.adopt_history(now, sn(11), samples), Ok(sn(20)));
    assert_eq!(pair.writer.history_len(), 4);
    let late = add_late_reader(&mut pair, true, 0.1);
    let done = pair.run_while_not(Duration::from_secs(10), |p| {
        p.readers[late].received.len() >= 4
    });
    assert!(done, "{:?}", sns(&pair.readers[late].received));
    pair.run_for(Duration::from_secs(1));
    assert_eq!(sns(&pair.readers[late].received), [12, 17, 18, 19]);
}
