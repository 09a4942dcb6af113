//! Content filters against real rclpy (Kilted, Fast DDS), both ways, inside a network
//! namespace made for each test (only `lo`): `interop/python/content_filter_peer.py`.
//!
//! - rclpy publishes, a roslite subscription filters. roslite announces its filter in its
//!   SEDP data as rmw_fastrtps does, so the Fast DDS writer filters for it: it sends the
//!   filtered-out samples as GAPs (reliable) or not at all (best effort), and marks the others
//!   with the reader's filter signature. What reaches the roslite callback is exactly what
//!   passes, nothing is counted lost, and an unfiltered roslite subscription of the same
//!   participant still gets everything.
//! - roslite publishes, an rclpy subscription made with `content_filter_options` filters
//!   (roslite's writer sends every sample; the Fast DDS reader filters), and follows its
//!   `set_content_filter`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::Int32;
use roslite::{ContentFilterOptions, QosProfile, Subscription, SubscriptionOptions};
use roslite_transport::netns::NetNs;

mod common;
use common::LinePeer;

const DOMAIN: u32 = 179;
const MARKER: i32 = 1000;

type Received = Arc<Mutex<Vec<i32>>>;

fn subscribe(
    node: &roslite::Node,
    qos: QosProfile,
    filter: ContentFilterOptions,
) -> (Subscription<Int32>, Received) {
    let received = Received::default();
    let sink = received.clone();
    let options = SubscriptionOptions {
        content_filter_options: filter,
        ..SubscriptionOptions::default()
    };
    let subscription = node
        .create_subscription_with_options(
            "numbers",
            qos,
            move |m: Int32| sink.lock().unwrap().push(m.data),
            options,
        )
        .unwrap();
    (subscription, received)
}

fn markers(received: &Received) -> usize {
    received
        .lock()
        .unwrap()
        .iter()
        .filter(|&&v| v == MARKER)
        .count()
}

fn with_marker(values: impl IntoIterator<Item = i32>) -> Vec<i32> {
    values.into_iter().chain([MARKER]).collect()
}

/// rclpy talks `0..30` and then `0..10` (each ending with the marker); a filtered and an
/// unfiltered roslite subscription listen, the filtered one changing its filter in between.
fn rclpy_talks_to_a_filtered_roslite_subscription(qos: QosProfile, peer_args: &[&str]) {
    let ns = NetNs::create("cft_in").expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("filtered_listener").unwrap();
    let filter = ContentFilterOptions::new("data BETWEEN %0 AND %1 OR data = 1000", ["5", "14"]);
    let (filtered, got) = subscribe(&node, qos, filter);
    let (unfiltered, all) = subscribe(&node, qos, ContentFilterOptions::default());
    assert!(filtered.is_cft_enabled() && !unfiltered.is_cft_enabled());
    let spinner = common::spin_in_background(&ctx, &node);
    let mut args = vec!["talk"];
    args.extend_from_slice(peer_args);
    let mut talker = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "content_filter_peer.py",
        &args,
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    assert!(talker.wait_line(deadline, |l| l == "MATCHED").is_some());
    // Both subscriptions must be known to the writer before it writes (a volatile writer
    // sends nothing from before a match).
    assert!(common::wait_until(Duration::from_secs(30), || {
        filtered.acknowledged_publisher_count() == 1
            && unfiltered.acknowledged_publisher_count() == 1
    }));
    // Sends a round and waits for its marker on both subscriptions (emptied before).
    let send = |talker: &mut LinePeer, range: &str| {
        talker.send_line(&format!("SEND {range}"));
        let arrived = common::wait_until(Duration::from_secs(30), || {
            markers(&got) >= 1 && markers(&all) >= 1
        });
        assert!(arrived, "{range}: {:?}", got.lock().unwrap());
    };
    send(&mut talker, "0 30");
    assert_eq!(*got.lock().unwrap(), with_marker(5..=14));
    assert_eq!(*all.lock().unwrap(), with_marker(0..30));
    // The Fast DDS writer filtered for the roslite reader (it knew the filter from the
    // reader's SEDP data before it matched): the 20 numbers the filter drops never reached the
    // subscription, whose own filter found nothing to drop.
    let first_round = filtered.stats();
    assert_eq!(first_round.filtered_out, 0, "{first_round:?}");

    filtered
        .set_content_filter("data < %0 OR data = 1000", &["3"])
        .unwrap();
    // The reader announced its new filter: once the writer's participant acknowledged that
    // announcement (the count falls back until then), the writer has it.
    assert!(common::wait_until(Duration::from_secs(30), || {
        filtered.acknowledged_publisher_count() == 1
    }));
    got.lock().unwrap().clear();
    all.lock().unwrap().clear();
    send(&mut talker, "0 10");
    // Until the writer has the new filter it may still drop what the new one lets through,
    // and send what it drops (it filters with the filter it last learned); roslite filters
    // with the new one itself.
    let second = got.lock().unwrap().clone();
    assert!(
        second.iter().all(|v| *v < 3 || *v == MARKER) && second.ends_with(&[MARKER]),
        "{second:?}"
    );
    assert_eq!(*all.lock().unwrap(), with_marker(0..10));

    let filtered_lost = filtered.message_lost_status().total_count;
    let unfiltered_lost = unfiltered.message_lost_status().total_count;
    let malformed = filtered.stats().malformed;
    ctx.shutdown();
    spinner.join().unwrap();
    talker.send_line("END");
    drop(talker);
    assert_eq!(
        filtered_lost, 0,
        "what the Fast DDS writer filtered out is not lost"
    );
    assert_eq!(unfiltered_lost, 0);
    assert_eq!(malformed, 0);
}

#[test]
fn rclpy_reliable_publisher_to_filtered_roslite_subscription() {
    rclpy_talks_to_a_filtered_roslite_subscription(QosProfile::keep_last(100), &[]);
}

#[test]
fn rclpy_best_effort_publisher_to_filtered_roslite_subscription() {
    rclpy_talks_to_a_filtered_roslite_subscription(
        QosProfile::keep_last(100).best_effort(),
        &["best_effort"],
    );
}

#[test]
fn roslite_publisher_to_rclpy_subscription_with_content_filter_options() {
    let ns =
        NetNs::create("cft_out").expect("create a network namespace (needs root and iproute2)");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("talker").unwrap();
    let publisher = node
        .create_publisher::<Int32>("numbers", QosProfile::keep_last(100))
        .unwrap();
    let mut listener = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "content_filter_peer.py",
        &[
            "listen",
            "data > %0 AND data <= %1 OR data = 1000",
            "20",
            "25",
        ],
    ));
    // Fast DDS takes AND and OR side by side, left to right: (a AND b) OR c here. (roslite
    // asks for the parentheses.)
    let deadline = Instant::now() + Duration::from_secs(60);
    let cft = listener.wait_line(deadline, |l| l.starts_with("CFT "));
    let filter = listener.wait_line(deadline, |l| l.starts_with("FILTER "));
    assert!(
        common::wait_until(Duration::from_secs(30), || {
            publisher.acknowledged_subscription_count() == 1
        }),
        "the rclpy subscription never matched"
    );
    let heard_markers = |listener: &mut LinePeer, n: usize| {
        for _ in 0..n {
            let line = listener.wait_line(deadline, |l| l == "HEARD 1000");
            assert!(line.is_some(), "marker never heard");
        }
    };
    for data in (0..40).chain([MARKER]) {
        publisher.publish(Int32 { data }).unwrap();
    }
    heard_markers(&mut listener, 1);
    listener.send_line("SET data = %0 OR data = %1|7|1000");
    assert!(listener
        .wait_line(deadline, |l| l.starts_with("SET "))
        .is_some());
    for data in (0..10).chain([MARKER]) {
        publisher.publish(Int32 { data }).unwrap();
    }
    heard_markers(&mut listener, 1);
    listener.send_line("END");
    let out = listener.finish(Instant::now() + Duration::from_secs(10));
    ctx.shutdown();
    assert_eq!(cft.as_deref(), Some("CFT True"));
    assert_eq!(
        filter.as_deref(),
        Some("FILTER data > %0 AND data <= %1 OR data = 1000|20|25")
    );
    let heard: Vec<i32> = out
        .values("HEARD ")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    let mut expected: Vec<i32> = with_marker(21..=25);
    expected.extend(with_marker([7]));
    assert_eq!(heard, expected, "{}", out);
    assert_eq!(out.values("SET "), ["True"]);
}
