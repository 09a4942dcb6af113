//! UDP transport tests inside throw-away network namespaces holding only `lo` (multicast on).
//!
//! These need root (or CAP_SYS_ADMIN + CAP_NET_ADMIN) and iproute2; the drop test also needs
//! nftables. Without them they fail with the harness's error, they do not skip.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use roslite_transport::netns::NetNs;
use roslite_transport::{
    monotonic_ns, BindError, DiscoveryConfig, DiscoveryRange, Received, RecvEvent, SocketKind,
    TransportConfig, UdpTransport, RECV_BUFFER_LEN, SPDP_MULTICAST_GROUP,
};

const MS: u64 = 1_000_000;

fn namespace(prefix: &str) -> NetNs {
    NetNs::create(prefix).unwrap_or_else(|e| panic!("cannot create a network namespace: {e}"))
}

fn in_namespace<T: Send>(prefix: &str, f: impl FnOnce() -> T + Send) -> T {
    let ns = namespace(prefix);
    ns.run(f).unwrap_or_else(|e| panic!("{e}"))
}

fn subnet(domain_id: u32) -> TransportConfig {
    TransportConfig::new(DiscoveryConfig {
        domain_id,
        range: DiscoveryRange::Subnet,
        interface: Some(Ipv4Addr::LOCALHOST),
        ..DiscoveryConfig::default()
    })
}

fn bind_three(config: &TransportConfig) -> Vec<UdpTransport> {
    (0..3)
        .map(|_| UdpTransport::bind(config).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The next datagram within 2 s.
fn recv_one(transport: &UdpTransport, buf: &mut [u8]) -> Received {
    match transport.recv(buf, Some(monotonic_ns() + 2000 * MS)) {
        Ok(RecvEvent::Datagram(received)) => received,
        other => panic!(
            "participant {}: expected a datagram, got {other:?}",
            transport.participant_id()
        ),
    }
}

fn expect_silence(transport: &UdpTransport, buf: &mut [u8], ms: u64) {
    match transport.recv(buf, Some(monotonic_ns() + ms * MS)) {
        Ok(RecvEvent::DeadlineReached) => {}
        other => panic!(
            "participant {}: expected nothing for {ms} ms, got {other:?}",
            transport.participant_id()
        ),
    }
}

fn lo(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
}

#[test]
fn participants_take_ids_upward_and_advertise_their_ports() {
    in_namespace("ids", || {
        let transports = bind_three(&subnet(0));
        for (i, t) in transports.iter().enumerate() {
            let i = i as u16;
            assert_eq!(t.participant_id(), u32::from(i));
            let locators = t.local_locators();
            assert_eq!(locators.metatraffic_unicast, lo(7410 + 2 * i));
            assert_eq!(locators.default_unicast, lo(7411 + 2 * i));
            assert_eq!(
                locators.metatraffic_multicast,
                Some(SocketAddrV4::new(SPDP_MULTICAST_GROUP, 7400))
            );
            assert_eq!(locators.default_multicast, None);
            assert_eq!(
                t.spdp_destinations(),
                [SocketAddrV4::new(SPDP_MULTICAST_GROUP, 7400)]
            );
        }
        // Domain 1 is independent of domain 0.
        let other = UdpTransport::bind(&subnet(1)).unwrap();
        assert_eq!(other.participant_id(), 0);
        assert_eq!(other.local_locators().metatraffic_unicast, lo(7660));
    });
}

#[test]
fn spdp_multicast_reaches_every_participant_including_the_sender() {
    in_namespace("spdp", || {
        let transports = bind_three(&subnet(0));
        let mut buf = vec![0u8; RECV_BUFFER_LEN];
        let announcement = b"RTPS SPDP from participant 0";
        let group = SocketAddrV4::new(SPDP_MULTICAST_GROUP, 7400);
        transports[0].send_metatraffic(group, announcement).unwrap();
        let sender = transports[0].local_locators().metatraffic_unicast;
        // On `lo` every member receives the datagram once, the sender included (see
        // `UdpTransport::bind`): the RTPS layer drops its own announcements by GUID prefix.
        for t in &transports {
            let received = recv_one(t, &mut buf);
            assert_eq!(received.kind, SocketKind::Multicast);
            assert_eq!(received.source, sender);
            assert_eq!(&buf[..received.len], announcement);
        }
        for t in &transports {
            expect_silence(t, &mut buf, 100);
        }
        let stats = transports[0].stats();
        assert_eq!(
            (stats.datagrams_sent, stats.bytes_sent),
            (1, announcement.len() as u64)
        );
        assert_eq!(stats.datagrams_received, 1);
    });
}

#[test]
fn unicast_metatraffic_and_user_traffic() {
    in_namespace("unicast", || {
        let t = bind_three(&subnet(0));
        let mut buf = vec![0u8; RECV_BUFFER_LEN];

        let to_2 = t[2].local_locators().metatraffic_unicast;
        t[1].send_metatraffic(to_2, b"SEDP 1->2").unwrap();
        let r = recv_one(&t[2], &mut buf);
        assert_eq!(r.kind, SocketKind::Metatraffic);
        assert_eq!(r.source, t[1].local_locators().metatraffic_unicast);
        assert_eq!(&buf[..r.len], b"SEDP 1->2");

        let to_0 = t[0].local_locators().default_unicast;
        t[2].send(to_0, b"DATA 2->0").unwrap();
        let r = recv_one(&t[0], &mut buf);
        assert_eq!(r.kind, SocketKind::User);
        assert_eq!(r.source, t[2].local_locators().default_unicast);
        assert_eq!(&buf[..r.len], b"DATA 2->0");

        // A 65000-byte datagram passes whole.
        let big: Vec<u8> = (0..65_000u32).map(|i| (i % 251) as u8).collect();
        t[0].send(t[1].local_locators().default_unicast, &big)
            .unwrap();
        let r = recv_one(&t[1], &mut buf);
        assert_eq!(r.len, 65_000);
        assert!(buf[..r.len] == big[..], "65000-byte datagram corrupted");

        // Too large for UDPv4: refused before the kernel sees it.
        let too_big = vec![0u8; 65_508];
        let err = t[0].send(to_0, &too_big).unwrap_err();
        assert!(
            err.to_string()
                .contains("exceeds the UDPv4 maximum of 65507"),
            "{err}"
        );
        assert_eq!(t[0].stats().send_errors, 1);

        // Bigger than the receive buffer: dropped and counted, the next one is fine.
        let to_1 = t[1].local_locators().default_unicast;
        t[0].send(to_1, &[7u8; 2000]).unwrap();
        t[0].send(to_1, b"small").unwrap();
        let mut small = [0u8; 1000];
        let r = recv_one(&t[1], &mut small);
        assert_eq!(&small[..r.len], b"small");
        assert_eq!(t[1].stats().truncated, 1);
        expect_silence(&t[1], &mut small, 50);

        let s = t[1].stats();
        assert_eq!(s.datagrams_received, 2);
        assert_eq!(s.bytes_received, 65_000 + 5);
        assert_eq!(s.recv_errors, 0);
    });
}

#[test]
fn busy_sockets_are_served_round_robin() {
    in_namespace("fair", || {
        let t = bind_three(&subnet(0));
        let mut buf = vec![0u8; RECV_BUFFER_LEN];
        let meta = t[0].local_locators().metatraffic_unicast;
        let user = t[0].local_locators().default_unicast;
        for _ in 0..5 {
            t[1].send_metatraffic(meta, b"m").unwrap();
            t[1].send(user, b"u").unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
        let kinds: Vec<SocketKind> = (0..10).map(|_| recv_one(&t[0], &mut buf).kind).collect();
        let metas = kinds
            .iter()
            .filter(|k| **k == SocketKind::Metatraffic)
            .count();
        assert_eq!(metas, 5, "{kinds:?}");
        // Alternating once both sockets are known to be readable.
        assert!(
            kinds.windows(2).filter(|w| w[0] == w[1]).count() <= 2,
            "{kinds:?}"
        );
    });
}

#[test]
fn deadline_and_waker() {
    in_namespace("wake", || {
        let t = UdpTransport::bind(&subnet(0)).unwrap();
        let mut buf = vec![0u8; RECV_BUFFER_LEN];

        // A deadline with nothing to receive returns at the deadline, not before.
        let start = monotonic_ns();
        let deadline = start + 100 * MS;
        assert_eq!(
            t.recv(&mut buf, Some(deadline)).unwrap(),
            RecvEvent::DeadlineReached
        );
        let end = monotonic_ns();
        assert!(end >= deadline, "returned {} ns early", deadline - end);
        assert!(
            end - deadline < 200 * MS,
            "returned {} ms late",
            (end - deadline) / MS
        );
        // A deadline in the past returns at once.
        assert_eq!(
            t.recv(&mut buf, Some(start)).unwrap(),
            RecvEvent::DeadlineReached
        );

        // A wake from another thread ends a recv without deadline.
        let waker = t.waker();
        let wake_at = monotonic_ns() + 100 * MS;
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            waker.wake();
        });
        assert_eq!(t.recv(&mut buf, None).unwrap(), RecvEvent::Woken);
        assert!(monotonic_ns() >= wake_at);
        thread.join().unwrap();

        // Wakes before the recv are not lost, and several collapse into one.
        let waker = t.waker();
        waker.wake();
        waker.clone().wake();
        assert_eq!(t.recv(&mut buf, None).unwrap(), RecvEvent::Woken);
        expect_silence(&t, &mut buf, 50);

        // A wake is reported before queued datagrams, which stay queued.
        let own = t.local_locators().default_unicast;
        for _ in 0..3 {
            t.send(own, b"queued").unwrap();
        }
        assert!(matches!(recv_one(&t, &mut buf).kind, SocketKind::User));
        t.waker().wake();
        assert_eq!(t.recv(&mut buf, None).unwrap(), RecvEvent::Woken);
        for _ in 0..2 {
            let r = recv_one(&t, &mut buf);
            assert_eq!(&buf[..r.len], b"queued");
        }
        expect_silence(&t, &mut buf, 50);
    });
}

#[test]
fn running_out_of_participant_ids_says_what_to_do() {
    in_namespace("full", || {
        let config = TransportConfig {
            participant_id_limit: 3,
            ..subnet(0)
        };
        let _held = bind_three(&config);
        let err = UdpTransport::bind(&config).unwrap_err();
        assert!(
            matches!(
                err,
                BindError::NoFreeParticipantId {
                    domain_id: 0,
                    tried: 3,
                    limit: 3
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "all participant ids 0..3 for domain 0 are in use (ports 7410..7416); set \
             ROS_DOMAIN_ID to another domain or stop other participants, or raise \
             TransportConfig::participant_id_limit"
        );
        // A foreign socket on the user port of id 0 makes the next participant skip id 0.
        drop(_held);
        let squatter = std::net::UdpSocket::bind(lo(7411)).unwrap();
        let t = UdpTransport::bind(&config).unwrap();
        assert_eq!(t.participant_id(), 1);
        drop(squatter);
    });
}

#[test]
fn interface_defaults_to_the_multicast_route_source() {
    in_namespace("route", || {
        let config = TransportConfig::new(DiscoveryConfig::default());
        let t = UdpTransport::bind(&config).unwrap();
        // The only route to 239.255.0.1 in the namespace goes through `lo`.
        assert_eq!(t.interface(), Ipv4Addr::LOCALHOST);
        assert!(t
            .local_locators()
            .iter()
            .all(|a| a.ip().is_loopback() || a.ip().is_multicast()));
        assert!(
            t.notes()
                .iter()
                .all(|n| !n.to_string().contains("no route")),
            "{:?}",
            t.notes()
        );
    });
}

#[test]
fn nft_drop_rule_loses_every_udp_datagram() {
    let ns = namespace("drop");
    ns.drop_udp_percent(100).unwrap_or_else(|e| panic!("{e}"));
    ns.run(|| {
        let t = bind_three(&subnet(0));
        let mut buf = vec![0u8; RECV_BUFFER_LEN];
        let to_1 = t[1].local_locators().default_unicast;
        for _ in 0..10 {
            t[0].send(to_1, b"lost").unwrap();
        }
        expect_silence(&t[1], &mut buf, 100);
        assert_eq!(t[0].stats().datagrams_sent, 10);
        assert_eq!(t[1].stats().datagrams_received, 0);
    })
    .unwrap_or_else(|e| panic!("{e}"));
    ns.drop_udp_percent(0).unwrap_or_else(|e| panic!("{e}"));
    ns.run(|| {
        let t = bind_three(&subnet(0));
        let mut buf = vec![0u8; RECV_BUFFER_LEN];
        t[0].send(t[1].local_locators().default_unicast, b"delivered")
            .unwrap();
        let r = recv_one(&t[1], &mut buf);
        assert_eq!(&buf[..r.len], b"delivered");
    })
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn commands_run_inside_the_namespace() {
    let ns = namespace("exec");
    let output = ns
        .command("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let links = String::from_utf8_lossy(&output.stdout);
    assert_eq!(links.lines().count(), 1, "only lo expected:\n{links}");
    assert!(
        links.contains("lo:") && links.contains("MULTICAST"),
        "{links}"
    );

    let mut cat = std::process::Command::new("cat");
    cat.arg("/proc/net/igmp");
    let child = ns.spawn(&cat).unwrap();
    assert!(child.wait_with_output().unwrap().status.success());

    let name = ns.name().to_owned();
    drop(ns);
    let list = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains(&name),
        "{name} not deleted"
    );
}

#[test]
fn one_thread_receives_while_others_send() {
    in_namespace("shared", || {
        let t = std::sync::Arc::new(UdpTransport::bind(&subnet(0)).unwrap());
        let own = t.local_locators().default_unicast;
        let senders: Vec<_> = (0..2u8)
            .map(|n| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        t.send(own, &[n]).unwrap();
                    }
                })
            })
            .collect();
        let mut buf = vec![0u8; RECV_BUFFER_LEN];
        let mut per_sender = [0u32; 2];
        for _ in 0..100 {
            let r = recv_one(&t, &mut buf);
            per_sender[usize::from(buf[0])] += 1;
            assert_eq!(r.len, 1);
        }
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(per_sender, [50, 50]);
        assert_eq!(t.stats().datagrams_sent, 100);
    });
}
