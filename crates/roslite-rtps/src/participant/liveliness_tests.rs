//! Liveliness (RTPS 2.5 §8.4.13, DDS 1.4 §2.2.3.11) on the virtual clock: writers that stop
//! asserting are seen as not alive after their lease and alive again when they resume.

use super::*;
use crate::discovery::LivelinessKind;
use crate::types::BuiltinEndpointSet;

fn qos(kind: LivelinessKind, lease: Duration) -> EndpointQos {
    EndpointQos {
        liveliness: kind,
        liveliness_lease: Some(lease),
        ..EndpointQos::ros_default()
    }
}

fn topic(name: &str, qos: EndpointQos) -> EndpointOptions {
    EndpointOptions::new(name, STRING).with_qos(qos)
}

/// `(alive, alive_count, not_alive_count)` of every LivelinessChanged for `reader`.
fn changes(events: &[Event], reader: ReaderId) -> Vec<(bool, u32, u32)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::LivelinessChanged {
                reader: r,
                alive,
                alive_count,
                not_alive_count,
                ..
            } if *r == reader => Some((*alive, *alive_count, *not_alive_count)),
            _ => None,
        })
        .collect()
}

fn lost(events: &[Event], writer: WriterId) -> usize {
    events
        .iter()
        .filter(|e| **e == Event::LivelinessLost { writer })
        .count()
}

/// A writer on node 0 and a reader on node 1 with the same liveliness QoS, matched.
fn pair(kind: LivelinessKind, lease: Duration) -> (Swarm, WriterId, ReaderId) {
    let mut s = Swarm::new(2, 11);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, topic(CHATTER, qos(kind, lease)))
        .unwrap();
    let r = s
        .p(1)
        .create_reader(Instant::ZERO, topic(CHATTER, qos(kind, lease)))
        .unwrap();
    s.run_for(ms(300));
    let wg = w.guid(s.p(0).guid_prefix());
    assert!(s.events(1).contains(&Event::WriterMatched {
        reader: r,
        remote: wg
    }));
    s.events(0);
    (s, w, r)
}

#[test]
fn we_announce_and_match_the_participant_message_endpoints() {
    let mut s = Swarm::new(2, 5);
    s.run_for(ms(300));
    let own = s.p(0).local_data.builtin_endpoints;
    assert!(own.contains(BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_WRITER));
    assert!(own.contains(BuiltinEndpointSet::PARTICIPANT_MESSAGE_DATA_READER));
    let other = s.p(1).guid_prefix();
    let w = &s.p(0).wlp.writer;
    assert!(w
        .matched_readers()
        .any(|g| *g == Guid::new(other, EntityId::PARTICIPANT_MESSAGE_READER)));
    assert!(s
        .p(0)
        .wlp
        .reader
        .matched_writers()
        .any(|g| *g == Guid::new(other, EntityId::PARTICIPANT_MESSAGE_WRITER)));
}

#[test]
fn manual_by_topic_writer_lapses_and_recovers() {
    let lease = ms(1000);
    let (mut s, w, r) = pair(LivelinessKind::ManualByTopic, lease);
    let wg = w.guid(s.p(0).guid_prefix());
    // Writing every 200 ms keeps it alive.
    for i in 0..10 {
        let now = s.now;
        s.p(0)
            .write(now, w, string_payload(&format!("m{i}")), None)
            .unwrap();
        s.run_for(ms(200));
    }
    let e1 = s.events(1);
    assert!(changes(&e1, r).is_empty(), "{e1:?}");
    assert_eq!(lost(&s.events(0), w), 0);
    assert_eq!(s.p(1).liveliness_status(r), Some((1, 0)));

    // Silence: at most one lease (plus the 1 ms link) after the last write, the reader sees
    // the writer as not alive and the writer reports its lease lost, once.
    let last_write = s.now - ms(200);
    s.run_until(last_write + lease - ms(10));
    assert!(changes(&s.events(1), r).is_empty(), "not before the lease");
    s.run_until(last_write + lease + ms(20));
    let e1 = s.events(1);
    assert_eq!(changes(&e1, r), vec![(false, 0, 1)], "{e1:?}");
    assert!(e1.iter().any(|e| matches!(
        e,
        Event::LivelinessChanged { writer, .. } if *writer == wg
    )));
    assert_eq!(lost(&s.events(0), w), 1);
    s.run_for(ms(3000));
    assert!(changes(&s.events(1), r).is_empty(), "reported once");
    assert_eq!(lost(&s.events(0), w), 0, "lost once per lapse");
    assert_eq!(s.p(1).liveliness_status(r), Some((0, 1)));

    // An explicit assertion (HEARTBEAT with the liveliness flag) revives it.
    let now = s.now;
    s.p(0).assert_writer_liveliness(now, w).unwrap();
    s.run_for(ms(20));
    assert_eq!(changes(&s.events(1), r), vec![(true, 1, 0)]);
    // Then a lapse again, and a write revives it.
    s.run_for(lease + ms(20));
    assert_eq!(changes(&s.events(1), r), vec![(false, 0, 1)]);
    assert_eq!(lost(&s.events(0), w), 1);
    let now = s.now;
    s.p(0).write(now, w, string_payload("back"), None).unwrap();
    s.run_for(ms(20));
    let e1 = s.events(1);
    assert_eq!(changes(&e1, r), vec![(true, 1, 0)]);
    assert!(has(&e1, |e| matches!(e, Event::Sample { .. })));
    assert_eq!(s.p(1).stats().receive.malformed(), 0);
}

#[test]
fn automatic_writer_is_asserted_by_its_participant_until_the_process_stops() {
    let lease = ms(1000);
    let (mut s, w, r) = pair(LivelinessKind::Automatic, lease);
    // No writes at all for 5 leases: the participant asserts it (SPDP every 3 s would not
    // suffice; WLP AUTOMATIC updates every third of the lease do).
    s.run_for(ms(5000));
    assert!(changes(&s.events(1), r).is_empty());
    assert_eq!(lost(&s.events(0), w), 0, "automatic writers are never lost");
    assert!(s.p(0).stats().wlp.written >= 14, "{:?}", s.p(0).stats().wlp);
    assert!(
        s.p(1).stats().wlp.automatic >= 14,
        "{:?}",
        s.p(1).stats().wlp
    );
    assert_eq!(s.p(1).stats().wlp.malformed, 0);

    // The process stops (the participant lease is 20 s): not alive after the writer lease.
    s.nodes[0].alive = false;
    let stopped = s.now;
    s.run_for(lease + ms(10));
    assert_eq!(changes(&s.events(1), r), vec![(false, 0, 1)]);
    assert!(s.now - stopped <= lease + ms(10));
    let first = s.nodes[0].p.guid_prefix();
    assert!(s.p(1).remote_participant(first).is_some());

    // It resumes: its next AUTOMATIC update (or any datagram) makes the writer alive again.
    s.nodes[0].alive = true;
    s.run_for(ms(500));
    assert_eq!(changes(&s.events(1), r), vec![(true, 1, 0)]);
    s.run_for(ms(3000));
    assert!(changes(&s.events(1), r).is_empty());
}

#[test]
fn manual_by_participant_writes_on_one_writer_assert_all() {
    let lease = ms(1000);
    let mut s = Swarm::new(2, 13);
    let kind = LivelinessKind::ManualByParticipant;
    let a = s
        .p(0)
        .create_writer(Instant::ZERO, topic("rt/a", qos(kind, lease)))
        .unwrap();
    let b = s
        .p(0)
        .create_writer(Instant::ZERO, topic("rt/b", qos(kind, lease)))
        .unwrap();
    let rb = s
        .p(1)
        .create_reader(Instant::ZERO, topic("rt/b", qos(kind, lease)))
        .unwrap();
    s.run_for(ms(300));
    s.events(0);
    s.events(1);
    // Only `a` is written; `b` stays alive for its remote reader through WLP MANUAL updates.
    for i in 0..20 {
        let now = s.now;
        s.p(0)
            .write(now, a, string_payload(&format!("a{i}")), None)
            .unwrap();
        s.run_for(ms(200));
    }
    assert!(changes(&s.events(1), rb).is_empty());
    let e0 = s.events(0);
    assert_eq!((lost(&e0, a), lost(&e0, b)), (0, 0), "{e0:?}");
    assert!(s.p(1).stats().wlp.manual > 0);
    // Silence: both writers lapse locally, and `b` remotely.
    s.run_for(lease + ms(50));
    let e0 = s.events(0);
    assert_eq!((lost(&e0, a), lost(&e0, b)), (1, 1));
    assert_eq!(changes(&s.events(1), rb), vec![(false, 0, 1)]);
    // DomainParticipant::assert_liveliness revives both.
    let now = s.now;
    s.p(0).assert_liveliness(now);
    s.run_for(ms(20));
    assert_eq!(changes(&s.events(1), rb), vec![(true, 1, 0)]);
}

#[test]
fn infinite_leases_are_not_tracked() {
    let mut s = Swarm::new(2, 17);
    let w = s
        .p(0)
        .create_writer(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    let r = s
        .p(1)
        .create_reader(Instant::ZERO, chatter(EndpointQos::ros_default()))
        .unwrap();
    s.run_for(ms(30_000));
    assert!(s.p(1).wlp.tracked_writers() == 0);
    assert_eq!(s.p(0).stats().wlp.written, 0, "no automatic updates needed");
    assert_eq!(s.p(1).liveliness_status(r), Some((1, 0)));
    assert_eq!(lost(&s.events(0), w), 0);
    assert!(changes(&s.events(1), r).is_empty());
}

#[test]
fn participant_lease_expiry_unmatches_and_untracks() {
    let mut s = Swarm::new(1, 19);
    let mut c = config(1);
    c.lease_duration = Duration::from_secs(2);
    c.announce_period = ms(500);
    let b = s.add(c);
    let lease = ms(500);
    let w = s
        .p(b)
        .create_writer(
            Instant::ZERO,
            topic(CHATTER, qos(LivelinessKind::Automatic, lease)),
        )
        .unwrap();
    let r = s
        .p(0)
        .create_reader(
            Instant::ZERO,
            topic(CHATTER, qos(LivelinessKind::Automatic, lease)),
        )
        .unwrap();
    s.run_for(ms(1000));
    let wg = w.guid(s.p(b).guid_prefix());
    assert!(s.events(0).contains(&Event::WriterMatched {
        reader: r,
        remote: wg
    }));
    s.nodes[b].alive = false;
    s.run_for(ms(2100));
    let e0 = s.events(0);
    // First the writer lease (500 ms), then the participant lease (2 s) unmatches it.
    let not_alive = e0
        .iter()
        .position(|e| matches!(e, Event::LivelinessChanged { alive: false, .. }))
        .expect("not alive first");
    let unmatched = e0
        .iter()
        .position(|e| {
            *e == Event::WriterUnmatched {
                reader: r,
                remote: wg,
            }
        })
        .expect("unmatched");
    assert!(not_alive < unmatched, "{e0:?}");
    assert!(s.p(0).wlp.tracked_writers() == 0);
    assert_eq!(s.p(0).liveliness_status(r), Some((0, 0)));
    assert_eq!(s.p(0).remote_endpoints().count(), 0);
}
