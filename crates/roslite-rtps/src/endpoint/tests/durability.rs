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
