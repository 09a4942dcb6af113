//! Two contexts, each with its own RTPS participant, talking over UDP on 127.0.0.1 with
//! LOCALHOST discovery (unicast probes, no multicast), as two processes would.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Context, ContextOptions, Executor, NetworkMode, Node, QosProfile, RosDistro};
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

mod common;
use common::wait_until;

/// How long a test waits for discovery to show something.
const DISCOVERY: Duration = Duration::from_secs(10);

/// A domain of its own per test process, so parallel runs do not discover each other.
fn test_domain(offset: u32) -> u32 {
    40 + (std::process::id() % 50) + offset
}

fn networked(domain_id: u32) -> Context {
    networked_as(domain_id, RosDistro::default())
}

fn networked_as(domain_id: u32, ros_distro: RosDistro) -> Context {
    let discovery = DiscoveryConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..Default::default()
    };
    Context::new(ContextOptions {
        domain_id,
        network: NetworkMode::Rtps(TransportConfig::new(discovery)),
        ros_distro,
        // These tests are about RTPS: keep same-host shared memory out of the way.
        local_transports: roslite::LocalTransports::UDP_ONLY,
        ..Default::default()
    })
    .expect("start an RTPS network on loopback")
}

/// Two participants in `domain`, each with one node: `(talker's context, talker, listener's
/// context, listener)`.
fn two_participants(domain: u32, talker: &str, listener: &str) -> (Context, Node, Context, Node) {
    let talker_ctx = networked(domain);
    let listener_ctx = networked(domain);
    let talker_node = talker_ctx.create_node(talker).unwrap();
    let listener_node = listener_ctx.create_node(listener).unwrap();
    (talker_ctx, talker_node, listener_ctx, listener_node)
}

/// Waits (up to 10 s) until a publisher of `ctx` on `topic` has matched a subscription of
/// another participant.
fn await_remote_subscription(ctx: &Context, topic: &str) {
    let net = ctx.graph();
    assert!(
        wait_until(DISCOVERY, || net.matched_remote_subscriptions(topic) > 0),
        "{topic} never matched"
    );
}

#[test]
fn reliable_messages_cross_between_participants_over_udp() {
    let (talker_ctx, talker, listener_ctx, listener) =
        two_participants(test_domain(0), "talker", "listener");
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let _sub = listener
        .create_subscription(
            "chatter",
            QosProfile::keep_last(100),
            move |m: StringMsg| sink.lock().unwrap().push(m.data),
        )
        .unwrap();
    let spinner = {
        let ctx = listener_ctx.clone();
        let node = listener.clone();
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let publisher = talker
        .create_publisher::<StringMsg>("chatter", QosProfile::keep_last(100))
        .unwrap();
    // Discovery first: publish probes until one arrives.
    let start = Instant::now();
    while received.lock().unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no message crossed within 20 s"
        );
        publisher
            .publish(StringMsg {
                data: "probe".into(),
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    // Matched: every reliable message now arrives, in order.
    for n in 0..50 {
        publisher
            .publish(StringMsg {
                data: format!("hello {n}"),
            })
            .unwrap();
    }
    let start = Instant::now();
    loop {
        let got: Vec<String> = received
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.starts_with("hello"))
            .cloned()
            .collect();
        if got.len() == 50 {
            let expected: Vec<String> = (0..50).map(|n| format!("hello {n}")).collect();
            assert_eq!(got, expected);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "only {} of 50 arrived",
            got.len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    listener_ctx.shutdown();
    spinner.join().unwrap();
    let topics = talker_ctx.graph().remote_topics();
    assert!(
        topics.contains(&("/chatter".to_owned(), "std_msgs/msg/String".to_owned())),
        "{topics:?}"
    );
}

#[test]
fn humble_and_iron_graph_layouts_understand_each_other() {
    let domain = test_domain(1);
    let humble = networked_as(domain, RosDistro::Humble);
    let kilted = networked_as(domain, RosDistro::IronOrLater);
    let _old = humble.create_node("humble_node").unwrap();
    let _new = kilted.create_node("kilted_node").unwrap();
    let knows = |ctx: &Context, name: &str| {
        ctx.graph()
            .node_names()
            .contains(&("/".to_owned(), name.to_owned()))
    };
    let start = Instant::now();
    while !(knows(&humble, "kilted_node") && knows(&kilted, "humble_node")) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "humble sees {:?}, kilted sees {:?}",
            humble.graph().node_names(),
            kilted.graph().node_names()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn remote_qos_incompatibility_is_reported_on_both_local_endpoints() {
    let domain = test_domain(2);
    let talker_ctx = networked(domain);
    let listener_ctx = networked(domain);
    let publisher = talker_ctx
        .create_node("be_talker")
        .unwrap()
        .create_publisher::<StringMsg>("mismatch", QosProfile::SENSOR_DATA)
        .unwrap();
    let subscription = listener_ctx
        .create_node("reliable_listener")
        .unwrap()
        .create_subscription("mismatch", QosProfile::DEFAULT, |_: StringMsg| {})
        .unwrap();
    let start = Instant::now();
    let (mut sub_status, mut pub_status) = (Default::default(), Default::default());
    while start.elapsed() < Duration::from_secs(20) {
        sub_status = subscription.incompatible_qos_status();
        pub_status = publisher.incompatible_qos_status();
        if sub_status.total_count >= 1 && pub_status.total_count >= 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        sub_status.last_policy,
        Some(roslite::QosPolicyKind::Reliability),
        "{sub_status:?}"
    );
    assert_eq!(
        pub_status.last_policy,
        Some(roslite::QosPolicyKind::Reliability),
        "{pub_status:?}"
    );
}

#[test]
fn liveliness_lapses_when_a_manual_publisher_goes_quiet_and_returns_when_it_publishes() {
    use roslite::Liveliness;
    let (talker_ctx, talker, _listener_ctx, listener) =
        two_participants(test_domain(3), "lively_talker", "lively_listener");
    let lease = Duration::from_millis(300);
    let qos = QosProfile::keep_last(10).liveliness(Liveliness::ManualByTopic, Some(lease));
    let changes = Arc::new(Mutex::new(Vec::new()));
    let sink = changes.clone();
    let sub = listener
        .create_subscription("lively", qos, |_: StringMsg| {})
        .unwrap();
    sub.on_liveliness_changed(move |s| {
        sink.lock().unwrap().push((
            s.alive_count,
            s.not_alive_count,
            (s.alive_count_change, s.not_alive_count_change),
        ))
    });
    let publisher = talker.create_publisher::<StringMsg>("lively", qos).unwrap();
    await_remote_subscription(&talker_ctx, "/lively");
    let say = |n: u32| {
        publisher
            .publish(StringMsg {
                data: format!("{n}"),
            })
            .unwrap()
    };
    say(1);
    // Quiet for several leases: the listener must see the publisher lapse, and the publisher
    // must learn it lost its liveliness.
    let lapsed = || {
        changes
            .lock()
            .unwrap()
            .iter()
            .any(|&(_, dead, _)| dead == 1)
    };
    let start = Instant::now();
    while !lapsed() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lapsed(), "no lapse seen: {:?}", changes.lock().unwrap());
    assert!(publisher.liveliness_lost_status().total_count >= 1);
    // Publishing asserts it again.
    say(2);
    let back = || {
        changes
            .lock()
            .unwrap()
            .last()
            .is_some_and(|&(alive, dead, _)| (alive, dead) == (1, 0))
    };
    let start = Instant::now();
    while !back() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(back(), "not alive again: {:?}", changes.lock().unwrap());
    let status = sub.liveliness_changed_status();
    assert_eq!((status.alive_count, status.not_alive_count), (1, 0));
    // Each callback was handed the change since the one before (DDS change counts).
    let changes = changes.lock().unwrap().clone();
    assert_eq!(
        changes.iter().take(3).copied().collect::<Vec<_>>(),
        [(1, 0, (1, 0)), (0, 1, (-1, 1)), (1, 0, (1, -1))],
        "alive from the match on, then lapsed, then back"
    );
    let mut before = (0, 0);
    for &(alive, not_alive, changed) in &changes {
        let expected = (
            alive as i32 - before.0 as i32,
            not_alive as i32 - before.1 as i32,
        );
        assert_eq!(changed, expected, "{changes:?}");
        before = (alive, not_alive);
    }
}

#[test]
fn deadline_misses_are_counted_across_participants_once_messages_stop() {
    let (talker_ctx, talker, listener_ctx, listener) =
        two_participants(test_domain(5), "deadline_talker", "deadline_listener");
    let period = Duration::from_millis(1000);
    let qos = QosProfile::keep_last(10).deadline(period);
    let requested = Arc::new(Mutex::new(Vec::new()));
    let offered = Arc::new(Mutex::new(Vec::new()));
    let sub = listener
        .create_subscription("deadline", qos, |_: StringMsg| {})
        .unwrap();
    let sink = requested.clone();
    sub.on_deadline_missed(move |s| sink.lock().unwrap().push((Instant::now(), s)));
    let publisher = talker
        .create_publisher::<StringMsg>("deadline", qos)
        .unwrap();
    let sink = offered.clone();
    publisher.on_deadline_missed(move |s| sink.lock().unwrap().push((Instant::now(), s)));
    // Each side's events run in the executor spinning its node.
    let spin = |ctx: &Context, node: &roslite::Node| {
        let (ctx, node) = (ctx.clone(), node.clone());
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let talker_thread = spin(&talker_ctx, &talker);
    let listener_thread = spin(&listener_ctx, &listener);
    await_remote_subscription(&talker_ctx, "/deadline");
    // Twenty times per period for a while: nothing is missed.
    let mut last = Instant::now();
    for n in 0..20 {
        last = Instant::now();
        publisher
            .publish(StringMsg {
                data: format!("{n}"),
            })
            .unwrap();
        std::thread::sleep(period / 20);
    }
    assert_eq!(sub.deadline_missed_status().total_count, 0);
    assert_eq!(publisher.deadline_missed_status().total_count, 0);
    // Then quiet: both ends report the period that ended without a message, not before.
    wait_until(Duration::from_secs(10), || {
        !requested.lock().unwrap().is_empty() && !offered.lock().unwrap().is_empty()
    });
    for (end, seen) in [("subscription", &requested), ("publisher", &offered)] {
        let seen = seen.lock().unwrap();
        let Some(&(at, status)) = seen.first() else {
            panic!("{end}: no deadline miss reported");
        };
        assert!(
            at - last >= period,
            "{end}: {:?} after the last publish",
            at - last
        );
        assert!(status.total_count >= 1 && status.total_count == status.total_count_change);
    }
    talker_ctx.shutdown();
    listener_ctx.shutdown();
    talker_thread.join().unwrap();
    listener_thread.join().unwrap();
}

#[test]
fn matches_with_another_participant_are_counted_and_uncounted() {
    let (_talker_ctx, talker, _listener_ctx, listener) =
        two_participants(test_domain(6), "matched_talker", "matched_listener");
    let publisher = talker.create_publisher::<StringMsg>("matched", 10).unwrap();
    let subscription = listener
        .create_subscription("matched", 10, |_: StringMsg| {})
        .unwrap();
    let both = || publisher.subscription_count() == 1 && subscription.publisher_count() == 1;
    assert!(
        wait_until(DISCOVERY, both),
        "never matched: {:?} {:?}",
        publisher.matched_status(),
        subscription.matched_status()
    );
    let status = publisher.matched_status();
    assert_eq!((status.total_count, status.current_count), (1, 1));
    // The subscription leaves: its reader is disposed and the publisher counts it gone.
    drop(subscription);
    assert!(
        wait_until(DISCOVERY, || publisher.subscription_count() == 0),
        "still matched: {:?}",
        publisher.matched_status()
    );
    let status = publisher.matched_status();
    assert_eq!(
        (
            status.total_count,
            status.current_count,
            status.current_count_change
        ),
        (1, 0, -1)
    );
}

#[test]
fn a_node_sees_the_whole_graph_not_only_its_own_context() {
    let (_talker_ctx, talker, _listener_ctx, listener) =
        two_participants(test_domain(7), "graph_talker", "graph_listener");
    let _publisher = talker
        .create_publisher::<StringMsg>("graph_chatter", QosProfile::keep_last(7))
        .unwrap();
    let _subscription = listener
        .create_subscription("graph_chatter", 10, |_: StringMsg| {})
        .unwrap();
    assert!(
        wait_until(DISCOVERY, || {
            listener.count_publishers("graph_chatter") > 0
                && listener.node_names().contains(&"/graph_talker".to_owned())
        }),
        "{:?} {:?}",
        listener.topic_names_and_types(),
        listener.node_names()
    );
    assert!(listener.topic_names_and_types().contains(&(
        "/graph_chatter".to_owned(),
        vec!["std_msgs/msg/String".to_owned()]
    )));
    assert_eq!(listener.count_subscribers("graph_chatter"), 1);
    let remote = &listener.publishers_info_by_topic("/graph_chatter")[0];
    assert!(!remote.local);
    assert_eq!(remote.transport, "udp");
    assert_eq!(remote.type_name, "std_msgs/msg/String");
    assert_eq!(
        remote.qos.history,
        Some(roslite::History::KeepLast(7)),
        "roslite announces its history"
    );
    // The node of a discovered endpoint comes with the peer's ros_discovery_info.
    assert!(
        wait_until(DISCOVERY, || {
            listener.publishers_info_by_topic("/graph_chatter")[0]
                .node
                .is_some()
        }),
        "no node for the publisher"
    );
    assert_eq!(
        listener.publishers_info_by_topic("/graph_chatter")[0].node,
        Some(("/".to_owned(), "graph_talker".to_owned()))
    );
    // The other process's services too (every node serves the parameter services).
    let wanted = (
        "/graph_talker/set_parameters".to_owned(),
        vec!["rcl_interfaces/srv/SetParameters".to_owned()],
    );
    assert!(
        wait_until(DISCOVERY, || listener
            .service_names_and_types()
            .contains(&wanted)),
        "{:?}",
        listener.service_names_and_types()
    );
}

#[test]
fn sequence_numbers_count_every_publish_even_those_nobody_received() {
    let domain = test_domain(4);
    let talker_ctx = networked(domain);
    let talker = talker_ctx.create_node("counting_talker").unwrap();
    let publisher = talker.create_publisher::<StringMsg>("counted", 10).unwrap();
    let say = |n: u32| {
        publisher
            .publish(StringMsg {
                data: format!("{n}"),
            })
            .unwrap()
    };
    for n in 1..=5 {
        say(n); // nobody listens yet
    }
    let listener_ctx = networked(domain);
    let listener = listener_ctx.create_node("counting_listener").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let _sub = listener
        .create_subscription(
            "counted",
            10,
            move |m: StringMsg, info: &roslite::MessageInfo| {
                sink.lock()
                    .unwrap()
                    .push((m.data, info.publication_sequence_number))
            },
        )
        .unwrap();
    await_remote_subscription(&talker_ctx, "/counted");
    for n in 6..=8 {
        say(n);
    }
    let executor = Executor::new(&listener_ctx);
    executor.add_node(&listener);
    let start = Instant::now();
    while seen.lock().unwrap().len() < 3 && start.elapsed() < Duration::from_secs(10) {
        executor.spin_for(Duration::from_millis(20));
    }
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<(String, u64)> = (6u64..=8).map(|n| (format!("{n}"), n)).collect();
    assert_eq!(seen, expected);
}
