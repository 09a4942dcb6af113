//! Same-host paths chosen per peer: two roslite participants on one host exchange volatile
//! topics over shared memory (or a Unix socket, or UDP, as configured), never twice; and
//! survive a peer SIGKILLed mid-stream. Loopback only (LOCALHOST discovery), a domain per test.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::backends::same_host::LinkKind;
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{LocalTransports, QosProfile};

mod common;

/// A domain of its own for each test (`offset` below 25), varied by process so that two runs
/// at once do not meet; at most 224, within ROS's port range.
fn test_domain(offset: u32) -> u32 {
    assert!(offset < 25, "test domain offsets are below 25");
    100 + (std::process::id() % 5) * 25 + offset
}

/// Publishes 50 strings from one context to another and returns what arrived, the path the
/// publisher's match took `(rtps, same-host)`, and the transport the graph shows.
fn exchange(
    domain: u32,
    talker_transports: LocalTransports,
    listener_transports: LocalTransports,
    qos: QosProfile,
) -> (Vec<String>, (usize, usize), &'static str) {
    let talker_ctx = common::localhost_context(domain, talker_transports);
    let listener_ctx = common::localhost_context(domain, listener_transports);
    let talker = talker_ctx.create_node("talker").unwrap();
    let listener = listener_ctx.create_node("listener").unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let _sub = listener
        .create_subscription("chatter", qos, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data)
        })
        .unwrap();
    let spinner = common::spin_in_background(&listener_ctx, &listener);
    let publisher = talker
        .create_publisher::<StringMsg>("chatter", qos)
        .unwrap();
    let net = talker_ctx.graph();
    // The listener's link may connect before this side has read the listener's SEDP
    // announcement: wait for the graph to show its subscription too.
    let in_graph = || {
        net.endpoints()
            .iter()
            .any(|e| !e.local && e.topic == "/chatter")
    };
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            let (rtps, local) = net.remote_subscriptions_by_path("/chatter");
            rtps + local == 1 && in_graph()
        }),
        "the listener never matched"
    );
    let path = net.remote_subscriptions_by_path("/chatter");
    let transport = net
        .endpoints()
        .into_iter()
        .find(|e| !e.local && e.topic == "/chatter")
        .map_or("none", |e| e.transport);
    for i in 0..50 {
        publisher
            .publish(StringMsg {
                data: format!("msg {i}"),
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    common::wait_until(Duration::from_secs(10), || {
        received.lock().unwrap().len() >= 50
    });
    // Anything sent twice (over both paths) would show up here.
    std::thread::sleep(Duration::from_millis(100));
    listener_ctx.shutdown();
    spinner.join().unwrap();
    let got = received.lock().unwrap().clone();
    (got, path, transport)
}

fn expected() -> Vec<String> {
    (0..50).map(|i| format!("msg {i}")).collect()
}

#[test]
fn same_host_roslite_peers_use_shared_memory_and_not_udp() {
    let all = LocalTransports::default();
    let (got, path, transport) = exchange(test_domain(0), all, all, QosProfile::keep_last(100));
    assert_eq!(got, expected());
    assert_eq!(path, (0, 1), "expected the match on shared memory only");
    assert_eq!(transport, "shm");
}

#[test]
fn without_shared_memory_on_one_side_they_use_a_unix_socket() {
    let uds_only = LocalTransports {
        shm: false,
        uds: true,
        ..LocalTransports::default()
    };
    let (got, path, transport) = exchange(
        test_domain(1),
        LocalTransports::default(),
        uds_only,
        QosProfile::keep_last(100),
    );
    assert_eq!(got, expected());
    assert_eq!(path, (0, 1));
    assert_eq!(transport, "uds");
}

#[test]
fn udp_only_keeps_rtps() {
    let (got, path, transport) = exchange(
        test_domain(2),
        LocalTransports::UDP_ONLY,
        LocalTransports::default(),
        QosProfile::keep_last(100),
    );
    assert_eq!(got, expected());
    assert_eq!(path, (1, 0));
    assert_eq!(transport, "udp");
}

/// A TRANSIENT_LOCAL KEEP_LAST writer whose samples never expire keeps its history on the
/// same-host link (late joiners: the conformance suite); KEEP_ALL or expiring histories stay
/// RTPS's job.
#[test]
fn transient_local_topics_use_shared_memory_unless_their_history_is_keep_all_or_expires() {
    let all = LocalTransports::default();
    let keep_last = QosProfile::keep_last(100).transient_local();
    let cases = [
        (keep_last, (0, 1), "shm"),
        (
            QosProfile::DEFAULT.keep_all().transient_local(),
            (1, 0),
            "udp",
        ),
        (keep_last.lifespan(Duration::from_secs(60)), (1, 0), "udp"),
    ];
    for (offset, (qos, expected_path, expected_transport)) in [3, 17, 18].into_iter().zip(cases) {
        let (got, path, transport) = exchange(test_domain(offset), all, all, qos);
        assert_eq!(got, expected(), "{qos:?}");
        assert_eq!(path, expected_path, "{qos:?}");
        assert_eq!(transport, expected_transport, "{qos:?}");
    }
}

#[test]
fn a_unix_socket_carries_a_large_message() {
    use roslite::msgs::sensor_msgs::msg::Image;
    let uds_only = LocalTransports {
        shm: false,
        uds: true,
        ..LocalTransports::default()
    };
    for (offset, transports) in [(4, uds_only), (5, LocalTransports::default())] {
        let domain = test_domain(offset);
        let a = common::localhost_context(domain, transports);
        let b = common::localhost_context(domain, transports);
        let pub_node = a.create_node("camera").unwrap();
        let sub_node = b.create_node("viewer").unwrap();
        let got = Arc::new(Mutex::new(None));
        let sink = got.clone();
        let _sub = sub_node
            .create_subscription("image", 2, move |m: Image| {
                *sink.lock().unwrap() = Some(m);
            })
            .unwrap();
        let spinner = common::spin_in_background(&b, &sub_node);
        let publisher = pub_node.create_publisher::<Image>("image", 2).unwrap();
        let net = a.graph();
        assert!(common::wait_until(Duration::from_secs(10), || {
            net.remote_subscriptions_by_path("/image").1 == 1
        }));
        let data: Vec<u8> = (0..8 << 20).map(|i: u32| (i % 251) as u8).collect();
        let image = Image {
            height: 2048,
            width: 1024,
            encoding: "rgba8".into(),
            step: 4096,
            data: data.clone().into(),
            ..Default::default()
        };
        publisher.publish(image).unwrap();
        assert!(common::wait_until(Duration::from_secs(20), || got
            .lock()
            .unwrap()
            .is_some()));
        let image = got.lock().unwrap().take().unwrap();
        assert_eq!(image.data.as_slice(), &data[..]);
        b.shutdown();
        spinner.join().unwrap();
    }
}

/// The child role of the crash test: publishes on /crash until killed.
fn crash_child_publisher(domain: u32) {
    let ctx = common::localhost_context(domain, LocalTransports::default());
    let node = ctx.create_node("doomed").unwrap();
    let publisher = node.create_publisher::<StringMsg>("crash", 10).unwrap();
    let mut n = 0u64;
    loop {
        n += 1;
        let _ = publisher.publish(StringMsg {
            data: format!("{n}"),
        });
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_subscriber_survives_publishers_killed_mid_stream() {
    if let Ok(domain) = std::env::var("ROSLITE_CRASH_CHILD_DOMAIN") {
        crash_child_publisher(domain.parse().unwrap());
        return;
    }
    let domain = test_domain(6);
    let ctx = common::localhost_context(domain, LocalTransports::default());
    let node = ctx.create_node("survivor").unwrap();
    let count = Arc::new(Mutex::new(0usize));
    let sink = count.clone();
    let _sub = node
        .create_subscription("crash", 10, move |_: StringMsg| *sink.lock().unwrap() += 1)
        .unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    let net = ctx.graph();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_subscriber_survives_publishers_killed_mid_stream",
                "--nocapture",
            ])
            .env("ROSLITE_CRASH_CHILD_DOMAIN", domain.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let before = *count.lock().unwrap();
        assert!(
            common::wait_until(Duration::from_secs(15), || *count.lock().unwrap()
                >= before + 20),
            "round {round}: no samples from the new publisher"
        );
        // The child's messages came over shared memory.
        let link = net
            .endpoints()
            .into_iter()
            .find(|e| !e.local && e.topic == "/crash")
            .map(|e| e.transport);
        assert_eq!(link, Some("shm"), "round {round}");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    // The survivor still works for local traffic and nothing is stuck.
    let publisher = node.create_publisher::<StringMsg>("crash", 10).unwrap();
    let before = *count.lock().unwrap();
    publisher
        .publish(StringMsg {
            data: "after".into(),
        })
        .unwrap();
    assert!(common::wait_until(Duration::from_secs(5), || *count
        .lock()
        .unwrap()
        > before));
    let _ = LinkKind::SharedMemory;
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn uint64_arrays_over_shared_memory_are_decoded_in_place() {
    use roslite::msgs::std_msgs::msg::UInt64MultiArray;
    let domain = test_domain(7);
    let all = LocalTransports::default();
    let a = common::localhost_context(domain, all);
    let b = common::localhost_context(domain, all);
    let pub_node = a.create_node("array_pub").unwrap();
    let sub_node = b.create_node("array_sub").unwrap();
    let got = Arc::new(Mutex::new(None));
    let sink = got.clone();
    let _sub = sub_node
        .create_subscription("array", 2, move |m: UInt64MultiArray| {
            *sink.lock().unwrap() = Some(m);
        })
        .unwrap();
    let spinner = common::spin_in_background(&b, &sub_node);
    let publisher = pub_node
        .create_publisher::<UInt64MultiArray>("array", 2)
        .unwrap();
    let net = a.graph();
    assert!(common::wait_until(Duration::from_secs(10), || {
        net.remote_subscriptions_by_path("/array") == (0, 1)
    }));
    let data: Vec<u64> = (0..1_000_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    publisher
        .publish(UInt64MultiArray {
            data: data.clone().into(),
            ..Default::default()
        })
        .unwrap();
    assert!(common::wait_until(Duration::from_secs(10), || got
        .lock()
        .unwrap()
        .is_some()));
    let message = got.lock().unwrap().take().unwrap();
    assert_eq!(message.data.as_slice(), &data[..]);
    assert!(
        message.data.is_view(),
        "the elements were copied out of shared memory"
    );
    b.shutdown();
    spinner.join().unwrap();
}

/// A Unix-socket reader thread blocks in `recv` without a timeout; dropping its subscription
/// must still wake and end it (by shutting its socket down), or it would wait forever.
#[test]
fn dropping_a_subscription_ends_its_unix_socket_reader() {
    let uds_only = LocalTransports {
        shm: false,
        uds: true,
        ..LocalTransports::default()
    };
    assert_dropping_a_subscription_ends_its_reader(test_domain(8), uds_only, "uds");
}

/// A shared-memory reader thread waits on its channel's futex without a timeout; dropping its
/// subscription must still wake and end it (through its interrupter).
#[test]
fn dropping_a_subscription_ends_its_shared_memory_reader() {
    let shm_only = LocalTransports {
        shm: true,
        uds: false,
        ..LocalTransports::default()
    };
    assert_dropping_a_subscription_ends_its_reader(test_domain(10), shm_only, "shm");
}

/// The reader thread owns the connection to the publisher's outlet, so the outlet's reader
/// count falls to 0 only once that thread has ended (counting threads by name instead would
/// see the reader threads of tests running alongside).
fn assert_dropping_a_subscription_ends_its_reader(
    domain: u32,
    transports: LocalTransports,
    transport: &str,
) {
    let talker_ctx = common::localhost_context(domain, transports);
    let listener_ctx = common::localhost_context(domain, transports);
    let talker = talker_ctx.create_node("talker").unwrap();
    let listener = listener_ctx.create_node("listener").unwrap();
    let received = Arc::new(Mutex::new(0usize));
    let sink = received.clone();
    let sub = listener
        .create_subscription("wake", QosProfile::keep_last(10), move |_: StringMsg| {
            *sink.lock().unwrap() += 1
        })
        .unwrap();
    let spinner = common::spin_in_background(&listener_ctx, &listener);
    let publisher = talker
        .create_publisher::<StringMsg>("wake", QosProfile::keep_last(10))
        .unwrap();
    let readers = || {
        publisher
            .send_stats()
            .outlets
            .iter()
            .find(|o| o.transport == transport)
            .map_or(0, |o| o.readers)
    };
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            publisher.publish(StringMsg::default()).unwrap();
            *received.lock().unwrap() > 0
        }),
        "nothing arrived over {transport}"
    );
    assert_eq!(readers(), 1, "one {transport} reader");
    // Lets the reader thread finish with the last sample and block again, so that only a
    // wake-up from the drop can end it (a thread still busy would see the stop request anyway).
    std::thread::sleep(Duration::from_millis(200));
    drop(sub);
    assert!(
        common::wait_until(Duration::from_secs(10), || readers() == 0),
        "the {transport} reader thread is still running after its subscription was dropped"
    );
    listener_ctx.shutdown();
    spinner.join().unwrap();
}

/// A publication that goes only over shared memory (no RTPS reader matched) is recorded
/// without the network lock; RTPS subscribers that join later, the second one after the
/// first left (the writer's history then still holds samples), still see the publisher's own
/// numbering, and the shared-memory subscriber sees the same numbers. On every path the
/// publisher has the same global id (its writer's GUID), so a message is named alike wherever
/// it arrives.
#[test]
fn rtps_numbers_follow_publications_that_only_went_over_shared_memory() {
    type Seen = Arc<Mutex<Vec<(String, u64)>>>;
    type Gids = Arc<Mutex<std::collections::BTreeSet<[u8; 16]>>>;
    let gids: Gids = Arc::default();
    let subscribe = |node: &roslite::Node, seen: &Seen| -> roslite::Subscription<StringMsg> {
        let (seen, gids) = (seen.clone(), gids.clone());
        node.create_subscription(
            "numbered",
            QosProfile::keep_last(100),
            move |m: StringMsg, info: &roslite::MessageInfo| {
                gids.lock().unwrap().insert(info.publisher_gid);
                seen.lock()
                    .unwrap()
                    .push((m.data, info.publication_sequence_number))
            },
        )
        .unwrap()
    };
    fn assert_numbered_as_published(seen: &Seen, who: &str) {
        for (data, number) in seen.lock().unwrap().iter() {
            assert_eq!(
                *data,
                format!("msg {number}"),
                "{who}: numbered unlike its publication"
            );
        }
    }
    let domain = test_domain(9);
    let talker_ctx = common::localhost_context(domain, LocalTransports::default());
    let shm_ctx = common::localhost_context(domain, LocalTransports::default());
    let talker = talker_ctx.create_node("talker").unwrap();
    let shm_node = shm_ctx.create_node("shm_listener").unwrap();
    let over_shm: Seen = Arc::default();
    let _shm_sub = subscribe(&shm_node, &over_shm);
    let shm_spinner = common::spin_in_background(&shm_ctx, &shm_node);
    let publisher = talker
        .create_publisher::<StringMsg>("numbered", QosProfile::keep_last(100))
        .unwrap();
    let net = talker_ctx.graph();
    let matched = |paths: (usize, usize)| {
        common::wait_until(Duration::from_secs(10), || {
            net.remote_subscriptions_by_path("/numbered") == paths
        })
    };
    assert!(matched((0, 1)), "the shared-memory listener never matched");
    let mut published = 0u64;
    let mut publish = || {
        published += 1;
        publisher
            .publish(StringMsg {
                data: format!("msg {published}"),
            })
            .unwrap();
        published
    };
    for udp_listener in 0..2 {
        for _ in 0..5 {
            publish();
        }
        let udp_ctx = common::localhost_context(domain, LocalTransports::UDP_ONLY);
        let udp_node = udp_ctx.create_node("udp_listener").unwrap();
        let over_udp: Seen = Arc::default();
        let _udp_sub = subscribe(&udp_node, &over_udp);
        let udp_spinner = common::spin_in_background(&udp_ctx, &udp_node);
        assert!(matched((1, 1)), "UDP listener {udp_listener} never matched");
        // Matching may complete on one side before the other: publish until the listener
        // hears something, then once more.
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                publish();
                std::thread::sleep(Duration::from_millis(20));
                !over_udp.lock().unwrap().is_empty()
            }),
            "nothing arrived at UDP listener {udp_listener}"
        );
        let last = publish();
        assert!(common::wait_until(Duration::from_secs(10), || {
            over_udp.lock().unwrap().last().map(|(_, n)| *n) == Some(last)
        }));
        assert_numbered_as_published(&over_udp, &format!("UDP listener {udp_listener}"));
        udp_ctx.shutdown();
        udp_spinner.join().unwrap();
        drop((_udp_sub, udp_node, udp_ctx));
        assert!(matched((0, 1)), "UDP listener {udp_listener} never left");
    }
    assert!(common::wait_until(Duration::from_secs(10), || {
        over_shm.lock().unwrap().len() as u64 == published
    }));
    assert_numbered_as_published(&over_shm, "shared-memory listener");
    let gids = gids.lock().unwrap().clone();
    assert_eq!(
        gids.len(),
        1,
        "one publisher, one id on every path: {gids:?}"
    );
    assert_ne!(
        gids.first(),
        Some(&[0; 16]),
        "a remote publisher's id is known"
    );
    shm_ctx.shutdown();
    shm_spinner.join().unwrap();
}

/// A subscription whose callbacks keep every message (each a view into the publisher's shared
/// memory) reaches its quota of held samples; its reader then sleeps until the application
/// lets go of them, and takes the newest sample at once.
#[test]
fn a_subscriber_that_keeps_every_sample_gets_more_once_it_lets_go() {
    use roslite::msgs::std_msgs::msg::UInt8MultiArray;
    let shm_only = LocalTransports {
        shm: true,
        uds: false,
        ..LocalTransports::default()
    };
    let domain = test_domain(11);
    let a = common::localhost_context(domain, shm_only);
    let b = common::localhost_context(domain, shm_only);
    let pub_node = a.create_node("keeper_pub").unwrap();
    let sub_node = b.create_node("keeper_sub").unwrap();
    let kept: Arc<Mutex<Vec<Arc<UInt8MultiArray>>>> = Arc::default();
    let sink = kept.clone();
    let _sub = sub_node
        .create_subscription("kept", 1, move |m: Arc<UInt8MultiArray>| {
            sink.lock().unwrap().push(m);
        })
        .unwrap();
    let spinner = common::spin_in_background(&b, &sub_node);
    let publisher = pub_node
        .create_publisher::<UInt8MultiArray>("kept", 1)
        .unwrap();
    let publish = |n: u8| {
        publisher
            .publish(UInt8MultiArray {
                data: vec![n; 4096].into(),
                ..Default::default()
            })
            .unwrap()
    };
    let kept_len = || kept.lock().unwrap().len();
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            publish(0);
            kept_len() > 0
        }),
        "nothing arrived over shared memory"
    );
    assert!(
        kept.lock().unwrap()[0].data.is_view(),
        "the message was copied out of shared memory, so it holds no sample"
    );
    // Depth 1 plus the runtime's slack of 32: the reader may hold 33 samples.
    let quota = 33;
    held_quota_stops_the_link_until_let_go(&kept, quota, publish, "the reader");
    b.shutdown();
    spinner.join().unwrap();
}

/// Peers on shared memory or a Unix socket count as matched like any other: each side sees
/// the other (the RTPS writer and reader leave such pairs to the same-host link), and a
/// subscription leaving is counted off.
#[test]
fn same_host_matches_are_counted_on_both_sides() {
    for (offset, transports) in [
        (15, LocalTransports::default()),
        (
            16,
            LocalTransports {
                shm: false,
                uds: true,
                ..LocalTransports::default()
            },
        ),
    ] {
        let domain = test_domain(offset);
        let talker_ctx = common::localhost_context(domain, transports);
        let listener_ctx = common::localhost_context(domain, transports);
        let talker = talker_ctx.create_node("counted_talker").unwrap();
        let listener = listener_ctx.create_node("counted_listener").unwrap();
        let publisher = talker.create_publisher::<StringMsg>("counted", 10).unwrap();
        let subscription = listener
            .create_subscription("counted", 10, |_: StringMsg| {})
            .unwrap();
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                publisher.subscription_count() == 1 && subscription.publisher_count() == 1
            }),
            "never matched: {:?} {:?}",
            publisher.matched_status(),
            subscription.matched_status()
        );
        // Discovery matched them; the link itself connects right after.
        let net = talker_ctx.graph();
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                net.remote_subscriptions_by_path("/counted") == (0, 1)
            }),
            "{:?}",
            net.remote_subscriptions_by_path("/counted")
        );
        drop(subscription);
        assert!(
            common::wait_until(Duration::from_secs(10), || publisher.subscription_count()
                == 0),
            "still matched: {:?}",
            publisher.matched_status()
        );
        let status = publisher.matched_status();
        assert_eq!((status.total_count, status.current_count), (1, 0));
    }
}

/// `acknowledged_subscription_count` / `acknowledged_publisher_count` over each path: never
/// above the matched count, 1 once the other side knows the endpoint, and then a message
/// published at once arrives (the subscription's side has matched the publisher, over RTPS
/// because its participant acknowledged the publisher's announcement, over a same-host link
/// because its reader attached to the publisher's writer).
#[test]
fn a_message_published_once_the_subscription_knows_the_publisher_arrives() {
    let shm_only = LocalTransports {
        uds: false,
        ..LocalTransports::default()
    };
    let uds_only = LocalTransports {
        shm: false,
        ..LocalTransports::default()
    };
    for (offset, transports, path) in [
        (12, shm_only, (0, 1)),
        (13, uds_only, (0, 1)),
        (14, LocalTransports::UDP_ONLY, (1, 0)),
    ] {
        let domain = test_domain(offset);
        let talker_ctx = common::localhost_context(domain, transports);
        let listener_ctx = common::localhost_context(domain, transports);
        let talker = talker_ctx.create_node("known_talker").unwrap();
        let listener = listener_ctx.create_node("known_listener").unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        let subscription = listener
            .create_subscription("known", 10, move |m: StringMsg| {
                sink.lock().unwrap().push(m.data)
            })
            .unwrap();
        let spinner = common::spin_in_background(&listener_ctx, &listener);
        let net = talker_ctx.graph();
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                net.endpoints()
                    .iter()
                    .any(|e| !e.local && e.topic == "/known")
            }),
            "{transports:?}: the talker never discovered the subscription"
        );
        let publisher = talker.create_publisher::<StringMsg>("known", 10).unwrap();
        let mut never_above = true;
        let known = common::wait_until(Duration::from_secs(10), || {
            let (acknowledged, matched) = (
                publisher.acknowledged_subscription_count(),
                publisher.subscription_count(),
            );
            never_above &= acknowledged <= matched;
            acknowledged == 1
        });
        assert!(never_above, "{transports:?}: acknowledged above matched");
        assert!(
            known,
            "{transports:?}: the subscription never knew the publisher ({} matched)",
            publisher.subscription_count()
        );
        publisher
            .publish(StringMsg {
                data: "first".into(),
            })
            .unwrap();
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                received.lock().unwrap().len() == 1
            }),
            "{transports:?}: the first message never arrived"
        );
        assert_eq!(net.remote_subscriptions_by_path("/known"), path);
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                subscription.acknowledged_publisher_count() == 1
            }),
            "{transports:?}: the publisher never knew the subscription ({} matched)",
            subscription.publisher_count()
        );
        assert!(subscription.acknowledged_publisher_count() <= subscription.publisher_count());
        drop(subscription);
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                publisher.acknowledged_subscription_count() == 0
            }),
            "{transports:?}: still counted after the subscription went"
        );
        listener_ctx.shutdown();
        spinner.join().unwrap();
    }
}

/// Two servers of one service in two contexts and a client in a third, all on one same-host
/// path (as a node moving between processes leaves them for a moment): the client's request
/// reaches both servers over their links under the one request id it has over RTPS (the
/// client identity it names and its number), with a reply address the other server can
/// answer from. The second server answers it from that address alone, over the same path, and
/// the client gets exactly that one answer. The servers count the client as matched, and as
/// known once both halves of its links are attached.
#[test]
fn a_request_over_a_same_host_path_is_known_by_the_same_id_to_every_server() {
    use roslite::msgs::std_srvs::srv::{Trigger, Trigger_Request, Trigger_Response};
    use roslite::{RequestId, ServiceResponder, TypeInfo};
    use std::sync::mpsc;
    for (offset, kind, transports) in [
        (
            12,
            LinkKind::SharedMemory,
            LocalTransports {
                uds: false,
                ..LocalTransports::default()
            },
        ),
        (
            13,
            LinkKind::UnixSocket,
            LocalTransports {
                shm: false,
                ..LocalTransports::default()
            },
        ),
    ] {
        let domain = test_domain(offset);
        let types = (
            TypeInfo::of::<roslite::msgs::std_srvs::srv::Trigger_Request>(),
            TypeInfo::of::<roslite::msgs::std_srvs::srv::Trigger_Response>(),
        );
        let (taken, requests) = mpsc::channel::<(usize, ServiceResponder)>();
        let contexts: Vec<_> = (0..3)
            .map(|_| common::localhost_context(domain, transports))
            .collect();
        let mut servers = Vec::new();
        let mut spinners = Vec::new();
        for (i, ctx) in contexts[..2].iter().enumerate() {
            let node = ctx.create_node(&format!("server_{i}")).unwrap();
            let taken = taken.clone();
            let server = node
                .create_serialized_service(
                    "trigger",
                    "std_srvs/srv/Trigger",
                    types,
                    QosProfile::SERVICES_DEFAULT,
                    move |_, responder| {
                        // Kept, not answered: the test decides who answers.
                        let _ = taken.send((i, responder));
                    },
                )
                .unwrap();
            spinners.push(common::spin_in_background(ctx, &node));
            servers.push((node, server));
        }
        let client_node = contexts[2].create_node("client").unwrap();
        let client = client_node.create_client::<Trigger>("trigger").unwrap();
        spinners.push(common::spin_in_background(&contexts[2], &client_node));
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while servers
            .iter()
            .any(|(_, s)| s.acknowledged_client_count() < 1)
            || contexts[2].graph().service_servers_by_path("/trigger").1 < 2
        {
            assert!(
                std::time::Instant::now() < deadline,
                "{kind:?}: the client and both servers did not meet"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        for (_, server) in &servers {
            assert_eq!(server.client_count(), 1, "{kind:?}");
        }

        let (answered, answer) = mpsc::channel();
        client
            .call_with(Trigger_Request::default(), move |r| {
                let _ = answered.send(r);
            })
            .unwrap();
        let mut received: Vec<(usize, ServiceResponder)> = (0..2)
            .map(|_| {
                requests
                    .recv_timeout(Duration::from_secs(10))
                    .unwrap_or_else(|_| panic!("{kind:?}: a server did not get the request"))
            })
            .collect();
        received.sort_by_key(|(i, _)| *i);
        let ids: Vec<Option<RequestId>> = received.iter().map(|(_, r)| r.request_id()).collect();
        assert!(ids[0].is_some(), "{kind:?}: no request id over the link");
        assert_eq!(ids[0], ids[1], "{kind:?}: two ids for one request");
        let address = received[0].1.reply_address().expect("a reply address");
        assert_eq!(received[1].1.reply_address().as_deref(), Some(&address[..]));
        // Neither server answers what it received itself: the second answers from the
        // first's address, as a node moved there answers what waited on its old host.
        drop(received);
        let responder = servers[1]
            .1
            .responder_to(&address)
            .expect("the second server can answer at the first's reply address");
        assert_eq!(responder.request_id(), ids[0]);
        let response = Trigger_Response {
            message: "from the other server".into(),
            ..Default::default()
        };
        responder.send(&roslite_cdr::to_vec(&response, roslite_cdr::Endianness::Little).unwrap());
        let got = answer
            .recv_timeout(Duration::from_secs(10))
            .expect("the call ended")
            .expect("the client got the other server's answer");
        assert_eq!(got.message, "from the other server", "{kind:?}");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(client.stats().unmatched_replies, 0, "{kind:?}");
        assert_eq!(client.stats().replies_received, 1, "{kind:?}");
        for ctx in &contexts {
            ctx.shutdown();
        }
        for spinner in spinners {
            spinner.join().unwrap();
        }
    }
}

/// What one listener received from `writers` talker contexts on one host, each publishing
/// `per_writer` strings "k i" (writer k, message i) on /many: by writer, in arrival order. The
/// talkers join one after the other, each once the listener has heard from the one before, so
/// the first writer's link is the listener's first.
fn many_writers_to_one_reader(
    domain: u32,
    transports: LocalTransports,
    writers: usize,
    per_writer: usize,
    qos: QosProfile,
    on_received: impl FnOnce(),
) -> Vec<Vec<usize>> {
    let listener_ctx = common::localhost_context(domain, transports);
    let listener = listener_ctx.create_node("many_listener").unwrap();
    let received: Arc<Mutex<Vec<Vec<usize>>>> = Arc::new(Mutex::new(vec![Vec::new(); writers]));
    let sink = received.clone();
    let sub = listener
        .create_subscription("many", qos, move |m: StringMsg| {
            let mut words = m.data.split(' ').map(|w| w.parse::<usize>().unwrap());
            let (k, i) = (words.next().unwrap(), words.next().unwrap());
            sink.lock().unwrap()[k].push(i);
        })
        .unwrap();
    let spinner = common::spin_in_background(&listener_ctx, &listener);
    let mut talkers = Vec::new();
    let mut publishers = Vec::new();
    for k in 0..writers {
        let ctx = common::localhost_context(domain, transports);
        let node = ctx.create_node(&format!("many_talker_{k}")).unwrap();
        let publisher = node.create_publisher::<StringMsg>("many", qos).unwrap();
        assert!(
            common::wait_until(Duration::from_secs(20), || {
                sub.publisher_count() == k + 1 && publisher.subscription_count() == 1
            }),
            "talker {k} never matched the listener"
        );
        // The first message may go before the link is attached: wait until one arrives.
        assert!(
            common::wait_until(Duration::from_secs(20), || {
                publisher
                    .publish(StringMsg {
                        data: format!("{k} {PROBE}"),
                    })
                    .unwrap();
                !received.lock().unwrap()[k].is_empty()
            }),
            "nothing arrived from talker {k}"
        );
        talkers.push(ctx);
        publishers.push(publisher);
    }
    for i in 0..per_writer {
        for (k, publisher) in publishers.iter().enumerate() {
            publisher
                .publish(StringMsg {
                    data: format!("{k} {i}"),
                })
                .unwrap();
        }
        if i % 10 == 9 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    common::wait_until(Duration::from_secs(20), || {
        received
            .lock()
            .unwrap()
            .iter()
            .all(|r| r.len() >= per_writer)
    });
    // Anything delivered twice would show up here.
    std::thread::sleep(Duration::from_millis(100));
    on_received();
    listener_ctx.shutdown();
    spinner.join().unwrap();
    drop(talkers);
    let got = received
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.iter().copied().filter(|i| *i != PROBE).collect())
        .collect();
    got
}

/// The index of the messages a talker publishes until the listener hears one.
const PROBE: usize = 1_000_000;

/// A subscription matched with a publisher in each of five other participants on this host
/// gets every message of each, in each one's order, once: its first link on a thread of its
/// own and the others on the thread they share (`same_host/shared_thread.rs`).
#[test]
fn a_subscription_matched_with_many_same_host_publishers_gets_each_ones_messages_in_order() {
    let uds_only = LocalTransports {
        shm: false,
        uds: true,
        ..LocalTransports::default()
    };
    let keep_last = QosProfile::keep_last(1000);
    for (offset, transports, qos) in [
        (19, LocalTransports::default(), keep_last),
        (20, uds_only, keep_last),
        (24, LocalTransports::default(), keep_last.keep_all()),
    ] {
        let got = many_writers_to_one_reader(test_domain(offset), transports, 5, 200, qos, || {});
        for (k, from_k) in got.iter().enumerate() {
            assert_eq!(
                *from_k,
                (0..200).collect::<Vec<_>>(),
                "writer {k}'s messages over {transports:?} with {qos:?}"
            );
        }
    }
}

/// Threads of this process whose name starts with `prefix`.
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

/// A local reader matched with many writers on this host costs two link threads (its first
/// link's and the one the others share), with 2 writers as with 8. Counted in a process of its
/// own: the test binary's other tests start link threads of their own.
#[test]
fn a_subscription_costs_two_link_threads_whatever_the_number_of_same_host_publishers() {
    if let Ok(writers) = std::env::var("ROSLITE_LINK_THREADS_CHILD") {
        let writers: usize = writers.parse().unwrap();
        let domain = test_domain(if writers == 2 { 21 } else { 22 });
        let qos = QosProfile::keep_last(1000);
        let got = many_writers_to_one_reader(
            domain,
            LocalTransports::default(),
            writers,
            20,
            qos,
            || {
                // The thread that attaches links ends once none is left to attach.
                common::wait_until(Duration::from_secs(5), || {
                    threads_named("roslite-attach") == 0
                });
                println!(
                    "THREADS {} {} {}",
                    threads_named("roslite-local-r"),
                    threads_named("roslite-rx-many"),
                    threads_named("roslite-attach")
                );
            },
        );
        assert!(got.iter().all(|r| r.len() == 20), "messages lost: {got:?}");
        return;
    }
    let mut counts = Vec::new();
    for writers in [2, 8] {
        let output = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_subscription_costs_two_link_threads_whatever_the_number_of_same_host_publishers",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("ROSLITE_LINK_THREADS_CHILD", writers.to_string())
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{writers} writers: {stdout}");
        let line = stdout
            .lines()
            .find_map(|l| Some(l.split_once("THREADS ")?.1))
            .unwrap_or_else(|| panic!("{writers} writers: no thread count in {stdout}"));
        counts.push((writers, line.to_string()));
    }
    // One thread for the first link, one shared by the others; none left attaching.
    assert_eq!(
        counts,
        [(2, "1 1 0".to_string()), (8, "1 1 0".to_string())],
        "link threads (first link's, shared, attaching) with 2 and 8 publishers"
    );
}

/// A subscription's link on the shared thread takes no sample beyond its reader's quota of
/// held samples (depth 1 plus 32), and resumes once they are let go, as a link's own thread
/// does (`a_subscriber_that_keeps_every_sample_gets_more_once_it_lets_go`).
#[test]
fn a_shared_link_thread_resumes_a_link_once_its_held_samples_are_let_go() {
    use roslite::msgs::std_msgs::msg::UInt8MultiArray;
    let shm_only = LocalTransports {
        shm: true,
        uds: false,
        ..LocalTransports::default()
    };
    let domain = test_domain(23);
    let sub_ctx = common::localhost_context(domain, shm_only);
    let first_ctx = common::localhost_context(domain, shm_only);
    let second_ctx = common::localhost_context(domain, shm_only);
    let sub_node = sub_ctx.create_node("held_sub").unwrap();
    let kept: Arc<Mutex<Vec<Arc<UInt8MultiArray>>>> = Arc::default();
    let sink = kept.clone();
    let sub = sub_node
        .create_subscription("held", 1, move |m: Arc<UInt8MultiArray>| {
            sink.lock().unwrap().push(m);
        })
        .unwrap();
    let spinner = common::spin_in_background(&sub_ctx, &sub_node);
    let message = |n: u8| UInt8MultiArray {
        data: vec![n; 4096].into(),
        ..Default::default()
    };
    // The first publisher's link is the subscription's first: its own thread.
    let first_node = first_ctx.create_node("held_first").unwrap();
    let first = first_node
        .create_publisher::<UInt8MultiArray>("held", 1)
        .unwrap();
    let kept_from = |n: u8| kept.lock().unwrap().iter().any(|m| m.data[0] == n);
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            first.publish(message(200)).unwrap();
            kept_from(200)
        }),
        "nothing arrived from the first publisher"
    );
    // The second's goes to the shared thread.
    let second_node = second_ctx.create_node("held_second").unwrap();
    let second = second_node
        .create_publisher::<UInt8MultiArray>("held", 1)
        .unwrap();
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            second.publish(message(0)).unwrap();
            kept_from(0)
        }),
        "nothing arrived from the second publisher"
    );
    assert_eq!(sub.publisher_count(), 2);
    assert!(
        kept.lock().unwrap().iter().all(|m| m.data.is_view()),
        "copied out of shared memory"
    );
    // Late probes arrive; letting them go leaves the second link holding nothing.
    std::thread::sleep(Duration::from_millis(200));
    kept.lock().unwrap().clear();
    let quota = 33;
    held_quota_stops_the_link_until_let_go(
        &kept,
        quota,
        |n| second.publish(message(n)).unwrap(),
        "the shared thread",
    );
    sub_ctx.shutdown();
    spinner.join().unwrap();
}

/// Publishes (with `publish(n)`, n from 1) until the subscription keeps `quota` samples of
/// shared memory, each arriving below the quota; then sample 100, which must not be taken
/// while they are held; lets them all go and expects sample 100 alone: `reader` (what
/// delivers them) resumed the link once it was below its quota again.
fn held_quota_stops_the_link_until_let_go(
    kept: &Mutex<Vec<Arc<roslite::msgs::std_msgs::msg::UInt8MultiArray>>>,
    quota: usize,
    publish: impl Fn(u8),
    reader: &str,
) {
    let kept_len = || kept.lock().unwrap().len();
    let mut n = 0u8;
    while kept_len() < quota {
        n += 1;
        let before = kept_len();
        publish(n);
        assert!(
            common::wait_until(Duration::from_secs(10), || kept_len() > before),
            "sample {n} did not arrive below the quota"
        );
    }
    publish(100);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(kept_len(), quota, "a sample beyond the quota was taken");
    kept.lock().unwrap().clear();
    assert!(
        common::wait_until(Duration::from_secs(10), || kept_len() == 1),
        "{reader} did not resume the link once its samples were let go"
    );
    assert_eq!(
        kept.lock().unwrap()[0].data[0],
        100,
        "not the newest sample"
    );
}
