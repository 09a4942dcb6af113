//! LOCALHOST discovery range on the host's own `lo`, outside any namespace: unicast probes to
//! 127.0.0.1 only, no multicast socket. Needs no privileges.

use std::net::{Ipv4Addr, SocketAddrV4};

use roslite_transport::{
    monotonic_ns, DiscoveryConfig, DiscoveryRange, RecvEvent, SendError, SocketKind,
    TransportConfig, UdpTransport, RECV_BUFFER_LEN, SPDP_MULTICAST_GROUP, USER_RECV_TIMEOUT,
};

/// A domain in 0..=101 (below the ephemeral port range) unlikely to be used by another test run
/// on this machine at the same time.
fn test_domain() -> u32 {
    40 + std::process::id() % 60
}

fn localhost(domain_id: u32) -> TransportConfig {
    TransportConfig::new(DiscoveryConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..DiscoveryConfig::default()
    })
}

/// Waits up to 2 s for a datagram from `from`, skipping strangers (another participant that
/// happens to use the same domain on this host).
fn receive_from(t: &UdpTransport, from: SocketAddrV4, payload: &[u8]) {
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    let deadline = monotonic_ns() + 2_000_000_000;
    loop {
        match t.recv(&mut buf, Some(deadline)).unwrap() {
            RecvEvent::Datagram(r) if r.source == from => {
                assert_eq!(r.kind, SocketKind::Metatraffic);
                assert_eq!(&buf[..r.len], payload);
                return;
            }
            RecvEvent::Datagram(_) => {}
            other => panic!(
                "participant {} heard nothing from {from}: {other:?}",
                t.participant_id()
            ),
        }
    }
}

#[test]
fn two_participants_find_each_other_by_unicast_probes() {
    let config = localhost(test_domain());
    let a = UdpTransport::bind(&config).unwrap_or_else(|e| panic!("{e}"));
    let b = UdpTransport::bind(&config).unwrap_or_else(|e| panic!("{e}"));
    for t in [&a, &b] {
        let probes = config.discovery.localhost_probe_count;
        assert!(
            t.participant_id() < probes,
            "id {} is beyond the probes",
            t.participant_id()
        );
        assert_eq!(t.interface(), Ipv4Addr::LOCALHOST);
        let locators = t.local_locators();
        assert_eq!(
            locators.metatraffic_multicast, None,
            "LOCALHOST must not join multicast"
        );
        assert_eq!(locators.default_multicast, None);
        for address in locators.iter() {
            assert_eq!(*address.ip(), Ipv4Addr::LOCALHOST, "{locators:?}");
        }
        // Every probe goes to 127.0.0.1, one per other participant id.
        assert_eq!(t.spdp_destinations().len(), probes as usize - 1);
        assert!(t
            .spdp_destinations()
            .iter()
            .all(|d| *d.ip() == Ipv4Addr::LOCALHOST));
        assert!(!t
            .spdp_destinations()
            .contains(&locators.metatraffic_unicast));
        assert!(
            t.notes()
                .iter()
                .all(|n| !n.to_string().contains("interface")),
            "{:?}",
            t.notes()
        );
    }

    for destination in a.spdp_destinations() {
        a.send_metatraffic(*destination, b"SPDP a").unwrap();
    }
    receive_from(&b, a.local_locators().metatraffic_unicast, b"SPDP a");
    for destination in b.spdp_destinations() {
        b.send_metatraffic(*destination, b"SPDP b").unwrap();
    }
    receive_from(&a, b.local_locators().metatraffic_unicast, b"SPDP b");
}

#[test]
fn localhost_range_refuses_multicast_sends() {
    let t = UdpTransport::bind(&localhost(test_domain() + 1)).unwrap_or_else(|e| panic!("{e}"));
    let group = SocketAddrV4::new(SPDP_MULTICAST_GROUP, 7400);
    let err = t.send_metatraffic(group, b"x").unwrap_err();
    assert!(
        matches!(err, SendError::MulticastDisabled { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "cannot send to multicast 239.255.0.1:7400: ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST does \
         not use multicast; send to the peer's unicast locators instead"
    );
    let err = t
        .send(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 7410), b"x")
        .unwrap_err();
    assert!(
        matches!(err, SendError::InvalidDestination { .. }),
        "{err:?}"
    );
    let stats = t.stats();
    assert_eq!((stats.send_errors, stats.datagrams_sent), (2, 0));
}

#[test]
fn socket_buffers_are_reported() {
    let t = UdpTransport::bind(&localhost(test_domain() + 2)).unwrap_or_else(|e| panic!("{e}"));
    let sizes = t.socket_buffers();
    eprintln!("socket buffers: {sizes:?}; notes: {:?}", t.notes());
    assert_eq!(sizes.recv_requested, 4 << 20);
    assert_eq!(sizes.send_requested, 1 << 20);
    assert!(sizes.recv_granted > 0 && sizes.send_granted > 0);
    let capped = t
        .notes()
        .iter()
        .any(|n| n.to_string().starts_with("receive buffer capped"));
    assert_eq!(
        capped,
        sizes.recv_granted < 2 * sizes.recv_requested,
        "{:?}",
        t.notes()
    );
}

#[test]
fn deadlines_below_and_above_a_millisecond_are_never_cut_short() {
    // Waits of whole milliseconds go to epoll_wait (millisecond timeouts, rounded down), the
    // rest to ppoll: every deadline must still be reached, not returned from early.
    let t = UdpTransport::bind(&localhost(test_domain() - 30)).unwrap();
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    for wait_ns in [300_000, 1_500_000, 7_250_000, 20_000_001] {
        let deadline = monotonic_ns() + wait_ns;
        loop {
            match t.recv(&mut buf, Some(deadline)).unwrap() {
                RecvEvent::DeadlineReached => break,
                // A stranger's probe on this domain: keep waiting for the same deadline.
                RecvEvent::Datagram(_) => {}
                RecvEvent::Woken => panic!("nobody woke this transport"),
            }
        }
        let now = monotonic_ns();
        assert!(
            now >= deadline,
            "{wait_ns} ns wait returned {} ns early",
            deadline - now
        );
    }
}

#[test]
fn a_dedicated_user_socket_is_read_by_recv_user_only() {
    let mut t = UdpTransport::bind(&localhost(test_domain() - 20)).unwrap();
    t.dedicate_user_socket().unwrap();
    let own = t.local_locators().default_unicast;
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    t.send(own, b"user data").unwrap();
    // The driver's recv no longer sees user traffic...
    let deadline = monotonic_ns() + 50_000_000;
    loop {
        match t.recv(&mut buf, Some(deadline)).unwrap() {
            RecvEvent::DeadlineReached => break,
            RecvEvent::Datagram(r) => assert_ne!(r.kind, SocketKind::User, "{r:?}"),
            RecvEvent::Woken => panic!("nobody woke this transport"),
        }
    }
    // ...the dedicated reader does, blocking until it is there.
    let r = t
        .recv_user(&mut buf)
        .unwrap()
        .expect("the datagram sent to the user port");
    assert_eq!(r.kind, SocketKind::User);
    assert_eq!(&buf[..r.len], b"user data");
    // Released, it returns without data from then on (its thread can stop).
    t.release_user_receiver();
    assert!(t.recv_user(&mut buf).unwrap().is_none());
    assert!(t.recv_user(&mut buf).unwrap().is_none());
}

/// The release wakes a thread blocked in `recv_user` (its timeout is only a safety net, and
/// long): the thread returns without data long before the timeout could have run out.
#[test]
fn a_thread_blocked_in_recv_user_returns_when_released() {
    let mut t = UdpTransport::bind(&localhost(test_domain() - 15)).unwrap();
    t.dedicate_user_socket().unwrap();
    let t = std::sync::Arc::new(t);
    let blocked = {
        let t = t.clone();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut buf = vec![0u8; RECV_BUFFER_LEN];
            let received = t.recv_user(&mut buf).unwrap();
            (received.map(|r| r.len), started.elapsed())
        })
    };
    // Let it block (if it has not yet, the release makes its recv return at once anyway).
    std::thread::sleep(std::time::Duration::from_millis(50));
    t.release_user_receiver();
    let (received, waited) = blocked.join().unwrap();
    assert_eq!(received, None);
    assert!(
        waited < USER_RECV_TIMEOUT,
        "recv_user returned after {waited:?}, at its timeout, not at the release"
    );
}

#[test]
fn a_datagram_sent_in_parts_arrives_whole() {
    let mut t = UdpTransport::bind(&localhost(test_domain() - 25)).unwrap();
    t.dedicate_user_socket().unwrap();
    let own = t.local_locators().default_unicast;
    let mut buf = vec![0u8; RECV_BUFFER_LEN];
    let payload: Vec<u8> = (0..60_001u32).map(|i| (i % 251) as u8).collect();
    let expect = |t: &UdpTransport, buf: &mut [u8], whole: &[u8]| {
        let r = t.recv_user(buf).unwrap().expect("a datagram");
        assert_eq!(&buf[..r.len], whole);
    };
    // Header, payload in place, padding: one datagram.
    t.send_parts(own, &[b"head", &payload, &[0, 0, 0]]).unwrap();
    expect(&t, &mut buf, &[&b"head"[..], &payload, &[0, 0, 0]].concat());
    // Empty parts are skipped; one part is a plain send.
    t.send_parts(own, &[b"", b"only", b""]).unwrap();
    expect(&t, &mut buf, b"only");
    // More parts than the send path keeps on its stack, empty ones among them.
    let many: [&[u8]; 7] = [b"a", b"", b"bc", b"def", b"", b"ghij", b"k"];
    t.send_parts(own, &many).unwrap();
    expect(&t, &mut buf, b"abcdefghijk");
    let stats = t.stats();
    assert_eq!(stats.datagrams_sent, 3);
    assert_eq!(stats.bytes_sent, (4 + payload.len() + 3 + 4 + 11) as u64);
    // The size limit counts every part.
    let big = vec![0u8; 40_000];
    assert!(matches!(
        t.send_parts(own, &[&big, &big]),
        Err(SendError::TooLarge { len: 80_000 })
    ));
}
