//! Very large samples through the simulated network.

use std::time::Duration;

use super::*;
use crate::endpoint::Writer;
use crate::sim::LinkConfig;

/// One `size`-byte sample over a reliable pair with 5 % loss (and duplication/reordering)
/// each way, in `fragment_size`-byte fragments packed up to 64000 bytes per DATA_FRAG.
fn large_sample(seed: u64, size: usize, fragment_size: usize) {
    let mut pair = rough_pair(seed, 0.05, 4);
    let mut config = pair.writer.config().clone();
    config.fragment_size = fragment_size;
    pair.writer = Writer::new(config);
    let mut proxy = crate::endpoint::ReaderProxyInfo::new(
        pair.readers[0].reader.guid(),
        vec![pair.readers[0].locator],
    );
    proxy.reliable = true;
    pair.writer.add_reader(pair.now, proxy);
    let p = payload(0, size);
    pair.write(p.clone()).unwrap();
    let done = pair.run_while_not(Duration::from_secs(120), |p| {
        !p.readers[0].received.is_empty()
    });
    assert!(done, "not delivered by {}", pair.now);
    let got = &pair.readers[0].received;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].payload.len(), p.len());
    assert!(got[0].payload == p, "payload corrupted");
    let rs = pair.readers[0].reader.stats();
    assert!(
        rs.nack_frags_sent > 0,
        "5 % loss of ~1000 datagrams must need NACK_FRAG"
    );
    assert_eq!(rs.samples_too_large + rs.reassembly_no_room, 0, "{rs:?}");
    let done = pair.run_while_not(Duration::from_secs(10), |p| p.writer.is_acked_by_all(sn(1)));
    assert!(done, "the writer learns the sample was received");
}

/// 64 MiB in 16000-byte fragments, four per DATA_FRAG: 4195 fragments in 1049 datagrams.
/// About 2 s in a debug build, well under one in release.
#[test]
fn sample_of_64_mib_at_5_percent_loss() {
    large_sample(82, 64 << 20, 16_000);
}

/// 8 MiB in Cyclone's default 1344-byte fragments, 47 per DATA_FRAG (6242 fragments).
#[test]
fn sample_of_8_mib_in_small_fragments_at_5_percent_loss() {
    large_sample(81, 8 << 20, 1344);
}

#[test]
fn samples_larger_than_max_sample_size_are_rejected() {
    let mut pair = rough_pair(83, 0.0, 4);
    pair.set_links(0, LinkConfig::PERFECT, LinkConfig::PERFECT);
    let mut config = pair.readers[0].reader.config().clone();
    config.max_sample_size = 1 << 20;
    pair.readers[0].reader = crate::endpoint::Reader::new(config);
    let mut wp =
        crate::endpoint::WriterProxyInfo::new(pair.writer.guid(), vec![pair.writer_locator]);
    wp.reliable = true;
    pair.readers[0].reader.add_writer(pair.now, wp);
    pair.write(payload(0, 2 << 20)).unwrap();
    pair.run_for(Duration::from_millis(300));
    assert!(pair.readers[0].received.is_empty());
    assert!(pair.readers[0].reader.stats().samples_too_large > 0);
}

/// A reliable reader that can never accept a sample (over `max_sample_size`) must not stall
/// the stream behind it nor make the writer resend it forever: the sample is lost (counted),
/// acknowledged as irrelevant, and later samples flow. Before the fix the reader requested
/// the whole sample at every HEARTBEAT, so a 64 MiB image was resent every 100 ms and nothing
/// after it was ever delivered.
#[test]
fn oversize_sample_is_skipped_not_requested_forever() {
    let mut pair = rough_pair(84, 0.0, 16);
    pair.set_links(0, LinkConfig::PERFECT, LinkConfig::PERFECT);
    let mut config = pair.readers[0].reader.config().clone();
    config.max_sample_size = 1 << 20;
    pair.readers[0].reader = crate::endpoint::Reader::new(config);
    let mut wp =
        crate::endpoint::WriterProxyInfo::new(pair.writer.guid(), vec![pair.writer_locator]);
    wp.reliable = true;
    pair.readers[0].reader.add_writer(pair.now, wp);
    pair.write(payload(0, 2 << 20)).unwrap();
    pair.write(payload(1, 100)).unwrap();
    let delivered = pair.run_while_not(Duration::from_secs(2), |p| {
        !p.readers[0].received.is_empty()
    });
    assert!(delivered, "the sample after the oversize one never arrived");
    assert_eq!(sns(&pair.readers[0].received), [2]);
    assert_in_order_and_intact(&pair.readers[0].received, 100);
    let done = pair.run_while_not(Duration::from_secs(2), |p| p.writer.is_acked_by_all(sn(2)));
    assert!(done, "the writer must learn both samples are done with");
    let sent = pair.writer.stats().data_frag_sent;
    pair.run_for(Duration::from_secs(5));
    let ws = pair.writer.stats();
    assert_eq!(
        ws.data_frag_sent, sent,
        "nothing resent once acknowledged: {ws:?}"
    );
    assert_eq!(ws.samples_resent, 0, "{ws:?}");
    let rs = pair.readers[0].reader.stats();
    assert!(rs.samples_too_large > 0, "{rs:?}");
}
