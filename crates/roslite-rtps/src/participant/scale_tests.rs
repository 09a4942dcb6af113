//! What a participant's work grows with: deterministic simulations that count the endpoints
//! visited ([`WorkStats`]) at two sizes of the same graph. A datagram, a timeout or a sample
//! must cost the endpoints it concerns, and matching a new endpoint the endpoints of its
//! topic, however many other endpoints the participant holds.

use std::time::Duration;

use super::tests::{ms, string_payload, Swarm, STRING};
use super::*;

/// Keyless options on `topic` with the ROS default QoS.
fn on(topic: &str) -> EndpointOptions {
    EndpointOptions::new(topic, STRING)
}

/// Two participants: node 0 holds `idle` readers and node 1 their writers, one pair per topic
/// of its own, all matched and silent; plus one busy pair on `rt/busy`. Returns the swarm
/// after discovery settled, with the busy writer and reader.
fn graph(idle: usize) -> (Swarm, WriterId, ReaderId) {
    let mut s = Swarm::new(2, 11);
    let now = s.now;
    for k in 0..idle {
        let topic = format!("rt/idle_{k}");
        s.p(0).create_reader(now, on(&topic)).unwrap();
        s.p(1).create_writer(now, on(&topic)).unwrap();
    }
    let reader = s.p(0).create_reader(now, on("rt/busy")).unwrap();
    let writer = s.p(1).create_writer(now, on("rt/busy")).unwrap();
    s.run_for(Duration::from_secs(2));
    assert_eq!(
        s.p(1).writer_matches(writer).count(),
        1,
        "the busy pair matched"
    );
    let matched: usize = (0..idle)
        .map(|k| {
            let id = EntityId::new(
                [0, 0, u8::try_from(k + 1).unwrap()],
                EntityId::KIND_READER_NO_KEY,
            );
            s.p(0).reader_matches(ReaderId(id)).count()
        })
        .sum();
    assert_eq!(matched, idle, "every idle pair matched");
    (s, writer, reader)
}

/// Node 0's work while one sample crosses the busy pair and is acknowledged.
fn work_of_one_sample(idle: usize) -> WorkStats {
    let (mut s, writer, _) = graph(idle);
    let _ = s.samples(0);
    let before = s.p(0).work();
    let now = s.now;
    s.p(1)
        .write(now, writer, string_payload("one"), None)
        .unwrap();
    s.run_for(ms(50));
    assert_eq!(s.samples(0), ["one"]);
    let after = s.p(0).work();
    WorkStats {
        transmit_polls: after.transmit_polls - before.transmit_polls,
        timer_checks: after.timer_checks - before.timer_checks,
        sample_checks: after.sample_checks - before.sample_checks,
        pairs_evaluated: after.pairs_evaluated - before.pairs_evaluated,
    }
}

#[test]
fn a_sample_costs_the_endpoints_it_reaches_not_every_endpoint() {
    let small = work_of_one_sample(4);
    let large = work_of_one_sample(128);
    // Receiving the DATA, delivering it, acknowledging it and planning the next timer visit
    // the busy reader only: the same work with 4 or 128 idle readers beside it.
    assert_eq!(small, large, "4 idle readers: {small:?}, 128: {large:?}");
    assert!(
        small.transmit_polls >= 1 && small.sample_checks >= 1,
        "{small:?}"
    );
    assert_eq!(small.pairs_evaluated, 0);
}

#[test]
fn matching_costs_the_endpoints_of_the_topic() {
    let pairs = |idle: usize| {
        let (mut s, _, _) = graph(idle);
        (s.p(0).work().pairs_evaluated, s.p(1).work().pairs_evaluated)
    };
    // Each remote endpoint is evaluated against the one local endpoint of its topic (the
    // idle pairs plus the busy one), once: linear in the endpoints, not their square.
    let expected = |idle: usize| (idle + 1) as u64;
    assert_eq!(pairs(4), (expected(4), expected(4)));
    assert_eq!(pairs(128), (expected(128), expected(128)));
}

#[test]
fn timeouts_visit_the_endpoints_due() {
    let work = |idle: usize| {
        let (mut s, _, _) = graph(idle);
        let before = s.p(0).work().timer_checks;
        // Ten seconds of an idle graph: SPDP announcements and lease checks only.
        s.run_for(Duration::from_secs(10));
        s.p(0).work().timer_checks - before
    };
    assert_eq!(work(4), work(128));
}

#[test]
fn remote_endpoint_changes_are_reported_once_each() {
    let (mut s, writer, _) = graph(3);
    let prefix = s.p(1).guid_prefix();
    let changes = s.p(0).take_remote_endpoint_changes().unwrap();
    // Three idle writers and the busy one.
    assert_eq!(changes.len(), 4, "{changes:?}");
    assert!(changes.iter().all(|g| g.prefix == prefix));
    assert_eq!(s.p(0).take_remote_endpoint_changes(), Some(Vec::new()));
    let now = s.now;
    s.p(1).delete_writer(now, writer);
    s.run_for(ms(100));
    assert_eq!(
        s.p(0).take_remote_endpoint_changes(),
        Some(vec![writer.guid(prefix)])
    );
}

/// A participant that discovers by multicast on 239.255.0.1:7400, as the ROS default does.
fn multicast_participant(i: u8) -> Participant {
    use std::net::Ipv4Addr;
    let group = Locator::udpv4(Ipv4Addr::new(239, 255, 0, 1), 7400);
    let mut c = ParticipantConfig::new(GuidPrefix([i; 12]), 0, u32::from(i));
    c.metatraffic_unicast = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7410 + 2 * u16::from(i))];
    c.default_unicast = vec![Locator::udpv4(Ipv4Addr::LOCALHOST, 7411 + 2 * u16::from(i))];
    c.metatraffic_multicast = vec![group];
    c.spdp_destinations = vec![group];
    Participant::new(c, Instant::ZERO).unwrap()
}

/// Whether `datagram` holds an SPDP participant announcement.
fn is_spdp_announcement(datagram: &[u8]) -> bool {
    let mut found = false;
    let mut stats = crate::receiver::ReceiveStats::default();
    let _ = crate::receiver::parse_message(datagram, &mut stats, |rx| {
        if let crate::wire::Submessage::Data(data) = rx.submessage {
            found |= data.writer_id == EntityId::SPDP_PARTICIPANT_ANNOUNCER;
        }
    });
    found
}

/// Destinations of participant 0's first periodic announcement after `peers` peers were
/// heard once, at t = 1 s, over multicast (`multicast`) or unicast; and of the one after two
/// periods without hearing them again (their leases still run).
fn announcement_destinations(peers: u8, multicast: bool) -> (usize, usize) {
    let mut us = multicast_participant(100);
    while us.poll_transmit(Instant::ZERO).is_some() {}
    let heard = Instant::ZERO + Duration::from_secs(1);
    for i in 0..peers {
        let mut peer = multicast_participant(i);
        let spdp = peer.poll_transmit(Instant::ZERO).unwrap();
        let source = Some(peer.config().metatraffic_unicast[0]);
        let bytes = spdp.bytes.to_vec();
        if multicast {
            us.handle_multicast_datagram(heard, source, &bytes);
        } else {
            us.handle_datagram(heard, source, &bytes);
        }
        while us.poll_transmit(heard).is_some() {}
    }
    // The SPDP announcement among what is due (the SEDP writers also send HEARTBEATs to the
    // peers' readers, which never answer here).
    let next_announcement = |us: &mut Participant, after: Instant| loop {
        let t = us.poll_timeout().unwrap().max(after);
        us.handle_timeout(t);
        let mut announcement = None;
        while let Some(d) = us.poll_transmit(t) {
            if announcement.is_none() && is_spdp_announcement(&d.bytes.to_vec()) {
                announcement = Some(d.destinations.len());
            }
        }
        if let Some(destinations) = announcement {
            return (t, destinations);
        }
    };
    let (t, first) = next_announcement(&mut us, heard);
    // Keep the peers alive without any multicast from them: only their leases are renewed.
    let mut now = t;
    let mut later = first;
    while now.saturating_duration_since(heard) <= us.config().announce_period * 3 {
        (now, later) = next_announcement(&mut us, now + ms(1));
    }
    (first, later)
}

#[test]
fn periodic_announcements_reach_multicast_peers_once() {
    // Peers heard over multicast get the multicast announcement only: one destination
    // whether 4 or 32 peers listen; a copy per peer would make every period cost the graph
    // N (N - 1) datagrams more. Peers that stopped being heard there get unicast copies
    // again, as do peers only ever heard over unicast.
    assert_eq!(announcement_destinations(4, true), (1, 5));
    assert_eq!(announcement_destinations(32, true), (1, 33));
    assert_eq!(announcement_destinations(4, false), (5, 5));
}
