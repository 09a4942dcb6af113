//! Batching of small samples (`endpoint::writer`, "Batching"), counted on the virtual clock:
//! a burst of writes shares datagrams, a lone write and a write answering input go out at once,
//! and no sample waits longer than the batch window.

use std::time::Duration;

use super::tests::{chatter, spdp_datagram, string_payload, Swarm};
use super::*;

const MICROSECOND: Duration = Duration::from_micros(1);

/// Two matched participants, a writer of `writer_history` on node 0 and a keep-all reader on
/// node 1, quiet (discovery done, nothing waiting to be acknowledged).
fn matched(writer_history: History) -> (Swarm, WriterId) {
    let mut s = Swarm::new(2, 11);
    let w = s
        .p(0)
        .create_writer(
            Instant::ZERO,
            chatter(EndpointQos {
                history: writer_history,
                ..EndpointQos::ros_default()
            }),
        )
        .unwrap();
    s.p(1)
        .create_reader(
            Instant::ZERO,
            chatter(EndpointQos {
                history: History::KeepAll,
                ..EndpointQos::ros_default()
            }),
        )
        .unwrap();
    s.run_for(Duration::from_secs(2));
    assert_eq!(s.p(0).writer_matches(w).count(), 1);
    (s, w)
}

fn datagrams_sent(s: &mut Swarm) -> u64 {
    s.p(0).stats().datagrams_sent
}

/// Writes `n` samples `"<tag> <i>"` one microsecond apart, sending what node 0 wants sent after
/// each (as the runtime's publish does). After each write, checks that no sample written a
/// batch window ago or earlier still waits. Returns the datagrams node 0 sent meanwhile.
fn burst(s: &mut Swarm, w: WriterId, tag: &str, n: u64) -> u64 {
    let window = s.p(0).config().writer_defaults.batch_window;
    let before = datagrams_sent(s);
    let sent_before = s.p(0).writer_stats(w).unwrap().data_sent;
    let mut written_at = Vec::new();
    for i in 0..n {
        s.now += MICROSECOND;
        let now = s.now;
        s.p(0)
            .write(now, w, string_payload(&format!("{tag} {i}")), None)
            .unwrap();
        written_at.push(now);
        s.flush();
        let sent = s.p(0).writer_stats(w).unwrap().data_sent - sent_before;
        let overdue = written_at
            .iter()
            .filter(|t| now.saturating_duration_since(**t) >= window)
            .count();
        assert!(
            sent >= overdue as u64,
            "at write {i}: {overdue} samples are a batch window old, only {sent} went out"
        );
    }
    // The rest goes out when the window closes (the participant's timer).
    s.run_for(window);
    datagrams_sent(s) - before
}

#[test]
fn a_burst_of_small_writes_shares_datagrams_and_a_lone_write_goes_out_at_once() {
    let (mut s, w) = matched(History::KeepAll);
    let window = s.p(0).config().writer_defaults.batch_window;
    assert!(window >= 10 * MICROSECOND, "batching is on by default");

    // A lone write: its datagram leaves at the instant of the write.
    let before = datagrams_sent(&mut s);
    let now = s.now;
    s.p(0).write(now, w, string_payload("lone"), None).unwrap();
    s.flush();
    assert_eq!(
        datagrams_sent(&mut s) - before,
        1,
        "a lone write goes out at once"
    );
    s.run_for(ms(5));
    assert_eq!(s.samples(1), ["lone"]);

    // A burst: 200 writes in 200 us. Without batching each would be a datagram of its own.
    let n = 200;
    s.run_for(ms(1));
    let datagrams = burst(&mut s, w, "burst", n);
    assert!(
        datagrams <= n / 20,
        "{n} samples written in a burst went out in {datagrams} datagrams"
    );
    s.run_for(ms(20));
    let want: Vec<String> = (0..n).map(|i| format!("burst {i}")).collect();
    assert_eq!(s.samples(1), want, "every sample of the burst, in order");
    // One HEARTBEAT per batch, not per sample.
    let heartbeats = s.p(0).writer_stats(w).unwrap().heartbeats_sent;
    assert!(
        heartbeats < n / 10,
        "{heartbeats} HEARTBEATs for {n} samples"
    );
}

#[test]
fn a_write_after_input_goes_out_at_once_even_inside_the_window() {
    let (mut s, w) = matched(History::KeepAll);
    let before = datagrams_sent(&mut s);
    let now = s.now;
    s.p(0)
        .write(now, w, string_payload("ping 1"), None)
        .unwrap();
    s.flush();
    // A datagram from a peer arrives (here an SPDP announcement; in a ping-pong, the pong),
    // and the next sample answers it one microsecond later, well inside the batch window.
    s.now += MICROSECOND;
    let now = s.now;
    let peer = GuidPrefix([0x77; 12]);
    let localhost = Locator::udpv4(std::net::Ipv4Addr::LOCALHOST, 9999);
    s.p(0)
        .handle_datagram(now, Some(localhost), &spdp_datagram(peer, 0));
    s.now += MICROSECOND;
    let now = s.now;
    s.p(0)
        .write(now, w, string_payload("ping 2"), None)
        .unwrap();
    let sent_before = s.p(0).writer_stats(w).unwrap().data_sent;
    s.flush();
    assert_eq!(
        s.p(0).writer_stats(w).unwrap().data_sent - sent_before,
        1,
        "the answer to input did not wait for a batch"
    );
    // Without input in between, the next write inside the window waits.
    s.now += MICROSECOND;
    let now = s.now;
    s.p(0)
        .write(now, w, string_payload("ping 3"), None)
        .unwrap();
    s.flush();
    assert_eq!(s.p(0).writer_stats(w).unwrap().data_sent - sent_before, 1);
    s.run_for(ms(5));
    assert!(datagrams_sent(&mut s) - before >= 3);
    assert_eq!(s.samples(1), ["ping 1", "ping 2", "ping 3"]);
}

#[test]
fn a_keep_last_burst_never_overwrites_a_sample_that_did_not_go_out() {
    // Depth 10 against 300 writes in 300 us: a batch ends when ten samples wait, so the
    // history overwrites only samples already sent, and the keep-all reader gets all of them.
    let (mut s, w) = matched(History::KeepLast { depth: 10 });
    let n = 300;
    let datagrams = burst(&mut s, w, "kl", n);
    assert!(datagrams < n / 5, "{datagrams} datagrams for {n} samples");
    s.run_for(ms(50));
    let want: Vec<String> = (0..n).map(|i| format!("kl {i}")).collect();
    assert_eq!(s.samples(1), want);
}

#[test]
fn batching_off_sends_every_sample_at_once() {
    let mut s = Swarm::new_with(2, 11, |c| c.writer_defaults.batch_window = Duration::ZERO);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.p(1)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(Duration::from_secs(2));
    let sent_before = s.p(0).writer_stats(w).unwrap().data_sent;
    for i in 0..20u64 {
        s.now += MICROSECOND;
        let now = s.now;
        s.p(0)
            .write(now, w, string_payload(&format!("m{i}")), None)
            .unwrap();
        s.flush();
        assert_eq!(
            s.p(0).writer_stats(w).unwrap().data_sent - sent_before,
            i + 1
        );
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn deleting_a_writer_or_shutting_down_sends_the_samples_waiting_for_a_batch() {
    for shutdown in [false, true] {
        let (mut s, w) = matched(History::KeepAll);
        for i in 0..5 {
            s.now += MICROSECOND;
            let now = s.now;
            s.p(0)
                .write(now, w, string_payload(&format!("tail {i}")), None)
                .unwrap();
            s.flush();
        }
        let sent = s.p(0).writer_stats(w).unwrap().data_sent;
        assert_eq!(sent, 1, "the first went at once, four wait for the batch");
        let now = s.now;
        if shutdown {
            s.p(0).shutdown(now);
        } else {
            s.p(0).delete_writer(now, w);
        }
        s.flush();
        s.run_for(ms(5));
        let want: Vec<String> = (0..5).map(|i| format!("tail {i}")).collect();
        assert_eq!(s.samples(1), want, "shutdown: {shutdown}");
    }
}
