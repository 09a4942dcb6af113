//! The "nothing to send" memo of [`Drained`]: it never hides a transmit the endpoint itself
//! would produce, whether the cause is an input or a timer.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::endpoint::{Drained, ReaderProxyInfo, Writer};
use crate::instant::Instant;
use crate::types::Locator;

const T0: Instant = Instant::ZERO;

fn reader_locator() -> Locator {
    Locator::udpv4(Ipv4Addr::new(127, 0, 0, 2), 7411)
}

/// A reliable writer matched with one reader, drained at T0.
fn drained_writer() -> Drained<Writer> {
    let mut w = Drained::new(Writer::new(writer_config(true, HistoryKind::KeepLast(4))));
    let reader = reader_config(0, true, HistoryKind::KeepLast(4)).guid;
    w.add_reader(T0, ReaderProxyInfo::new(reader, vec![reader_locator()]));
    while w.poll_transmit(T0).is_some() {}
    w
}

fn count(w: &mut Drained<Writer>, now: Instant) -> usize {
    std::iter::from_fn(|| w.poll_transmit(now)).count()
}

#[test]
fn a_write_after_the_memo_is_sent() {
    let mut w = drained_writer();
    assert_eq!(count(&mut w, T0), 0);
    w.write(T0, Arc::from(payload(1, 16)), None, None).unwrap();
    assert_eq!(
        count(&mut w, T0),
        1,
        "the new sample must not be hidden by the memo"
    );
    assert_eq!(w.stats().data_sent, 1);
}

#[test]
fn the_memo_ends_at_the_endpoints_own_timer() {
    let mut w = drained_writer();
    w.write(T0, Arc::from(payload(1, 16)), None, None).unwrap();
    assert_eq!(count(&mut w, T0), 1);
    // Unacknowledged data arms the periodic HEARTBEAT; the memo records that deadline.
    let heartbeat_at = w.poll_timeout().expect("a heartbeat is armed");
    assert!(heartbeat_at > T0);
    let just_before = Instant::from_nanos(heartbeat_at.as_nanos() - 1);
    assert_eq!(count(&mut w, just_before), 0);
    // Same as asking the writer itself, at and after the deadline.
    let mut plain = Writer::new(writer_config(true, HistoryKind::KeepLast(4)));
    let reader = reader_config(0, true, HistoryKind::KeepLast(4)).guid;
    plain.add_reader(T0, ReaderProxyInfo::new(reader, vec![reader_locator()]));
    while plain.poll_transmit(T0).is_some() {}
    plain
        .write(T0, Arc::from(payload(1, 16)), None, None)
        .unwrap();
    while plain.poll_transmit(T0).is_some() {}
    let later = heartbeat_at.saturating_add(Duration::from_millis(1));
    let expected = std::iter::from_fn(|| plain.poll_transmit(later)).count();
    assert!(expected > 0, "the plain writer sends its HEARTBEAT");
    assert_eq!(count(&mut w, later), expected);
}

#[test]
fn reads_keep_the_memo_and_writes_forget_it() {
    let mut w = drained_writer();
    let _ = w.stats();
    let _ = w.poll_timeout();
    assert_eq!(count(&mut w, T0), 0);
    w.assert_liveliness();
    // A liveliness assertion is an input: the writer announces it with a HEARTBEAT.
    assert_eq!(count(&mut w, T0), 1);
}

/// `handle_timeout_if_due` does what the endpoint's own `handle_timeout` does, before the
/// deadline and at it.
#[test]
fn timers_if_due_match_the_endpoints_own() {
    let armed = || {
        let mut w = drained_writer();
        w.write(T0, Arc::from(payload(1, 16)), None, None).unwrap();
        assert_eq!(count(&mut w, T0), 1);
        w
    };
    let (mut memo, mut plain) = (armed(), armed());
    let heartbeat_at = memo.poll_timeout().expect("a heartbeat is armed");
    let just_before = Instant::from_nanos(heartbeat_at.as_nanos() - 1);
    for now in [just_before, heartbeat_at] {
        memo.handle_timeout_if_due(now);
        plain.handle_timeout(now);
        assert_eq!(memo.poll_timeout(), plain.poll_timeout());
        assert_eq!(count(&mut memo, now), count(&mut plain, now));
    }
    assert_eq!(memo.stats().heartbeats_sent, plain.stats().heartbeats_sent);
    assert!(memo.stats().heartbeats_sent > 0);
}
