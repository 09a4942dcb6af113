//! roslite's generated keyed types (test_msgs' IDL types with `@key`) against rclpy on Fast DDS,
//! inside a network namespace made for the test (only `lo`, multicast on).
//!
//! A roslite publisher and an rclpy publisher of `test_msgs/msg/KeyedString` each send the same
//! keys in the same order to a subscription of the other side, and `interop/python/
//! keyed_peer.py sniff` reads every sample's `PID_KEY_HASH` off `lo`: roslite's must be those
//! Fast DDS sent, plain while the keys fit 16 bytes and MD5 once a longer one went out. A
//! roslite subscription also receives rclpy's `ComplexNestedKey` (keys nested in a keyless
//! struct).
//!
//! KEEP_LAST depth is per instance (DDS 1.4 §2.2.3.18): a transient-local KEEP_LAST(1) writer
//! of five keys hands a late joiner the newest sample of each, roslite's to rclpy and rclpy's
//! to roslite, whose subscription of depth 1 keeps one message of each key while its
//! callback has not run.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::test_msgs::msg::{ComplexNestedKey, KeyedLong, KeyedString};
use roslite::{Executor, Message, QosProfile};
use roslite_transport::netns::NetNs;

mod common;
use common::LinePeer;

const DOMAIN: u32 = 177;

/// The keys `keyed_peer.py strings` sends, in its order (`KEYED_STRING_KEYS`).
const KEYS: [&str; 4] = ["ab", "0123456789abcdefXYZ", "ab", "k"];

#[test]
fn generated_keyed_types_send_the_key_hashes_rclpy_sends() {
    let ns = NetNs::create("keyed").expect("create a network namespace (needs root and iproute2)");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut sniffer = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "keyed_peer.py",
        &["sniff", "30"],
    ));
    let mut listener = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "keyed_peer.py",
        &["sub", "/from_roslite", "30", "KeyedString"],
    ));
    let talker = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "keyed_peer.py",
        &["strings", "/from_rclpy", "30"],
    ));
    let complex_talker = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "keyed_peer.py",
        &["pub", "/keyed", "30"],
    ));

    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("keyed_node").unwrap();
    let from_rclpy: Arc<Mutex<Vec<KeyedString>>> = Arc::default();
    let _strings = node
        .create_subscription("/from_rclpy", 10, {
            let got = from_rclpy.clone();
            move |m: KeyedString| got.lock().unwrap().push(m)
        })
        .unwrap();
    let complex: Arc<Mutex<Vec<ComplexNestedKey>>> = Arc::default();
    let _complex = node
        .create_subscription("/keyed_complex", 10, {
            let got = complex.clone();
            move |m: ComplexNestedKey| got.lock().unwrap().push(m)
        })
        .unwrap();
    let publisher = node
        .create_publisher::<KeyedString>("/from_roslite", 10)
        .unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let spin_until = |done: &dyn Fn() -> bool| {
        while !done() && Instant::now() < deadline {
            executor.spin_once(Some(Duration::from_millis(50)));
        }
        done()
    };

    assert!(
        spin_until(&|| publisher.subscription_count() > 0),
        "rclpy's KeyedString subscription did not match roslite's keyed publisher"
    );
    for key in KEYS {
        publisher
            .publish(KeyedString {
                key: key.into(),
                value: "v".into(),
            })
            .unwrap();
        executor.spin_once(Some(Duration::from_millis(100)));
    }
    for key in KEYS {
        let line = listener.wait_line(deadline, |l| l.starts_with("got "));
        assert_eq!(
            line.as_deref(),
            Some(format!("got key={key} value=v").as_str()),
            "rclpy's subscription"
        );
    }
    assert!(
        spin_until(&|| from_rclpy.lock().unwrap().len() >= KEYS.len()),
        "roslite received {:?}",
        from_rclpy.lock().unwrap()
    );
    let keys: Vec<String> = from_rclpy
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.key.clone())
        .collect();
    assert_eq!(keys, KEYS);
    assert!(
        spin_until(&|| !complex.lock().unwrap().is_empty()),
        "no ComplexNestedKey from rclpy"
    );
    let first = complex.lock().unwrap()[0].clone();
    assert_eq!(
        (
            first.uint32_key,
            first.nested_keys.nested_data.key.as_str(),
            first.nested_keys.nested_data.value.as_str(),
            first.float64_value
        ),
        (7, "nk", "nv", 1.5)
    );
    drop(talker);
    drop(complex_talker);

    // Each user writer's key hashes in sequence-number order (builtin writers, entity kinds
    // 0xc_, announce endpoints by GUID and are left out).
    // Everything was received, so every sample went over `lo` already.
    sniffer.kill();
    let sniffed = sniffer.finish(deadline);
    let mut by_writer: BTreeMap<String, BTreeMap<u64, String>> = BTreeMap::new();
    for line in &sniffed.stdout {
        let mut parts = line.split(' ').skip(1);
        let (Some(guid), Some(sn), Some(hash)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if guid.ends_with('2') && !guid.ends_with("c2") {
            by_writer
                .entry(guid.to_owned())
                .or_default()
                .insert(sn.parse().unwrap(), hash.to_owned());
        }
    }
    let md5_long = "bd6375765c890a4b0d780abbef67b565";
    let strings: Vec<Vec<&String>> = by_writer
        .values()
        .map(|hashes| hashes.values().collect::<Vec<_>>())
        .filter(|hashes| hashes.iter().any(|h| *h == md5_long))
        .collect();
    assert_eq!(
        strings.len(),
        2,
        "expected the KeyedString writers of rclpy and roslite: {by_writer:?}\n{sniffed}"
    );
    // "ab" plain (length 3, "ab\0"), then everything hashed: Fast DDS's bound grew past 16.
    assert_eq!(
        strings[0][..2],
        [
            &"03000000616200000000000000000000".to_owned(),
            &md5_long.to_owned()
        ],
        "{by_writer:?}"
    );
    assert_eq!(
        strings[0], strings[1],
        "roslite's key hashes differ from rclpy's"
    );
    assert_eq!(strings[0].len(), KEYS.len(), "{by_writer:?}");
    assert!(KeyedString::KEY.is_some());
}

/// `(key, value)` of the newest of `keyed_peer.py latched`'s three rounds for each key.
const NEWEST_OF_EACH_KEY: [(i32, i32); 5] = [(0, 20), (1, 21), (2, 22), (3, 23), (4, 24)];

#[test]
fn transient_local_late_joiners_get_the_newest_sample_of_each_key() {
    let ns =
        NetNs::create("keyedtl").expect("create a network namespace (needs root and iproute2)");
    let deadline = Instant::now() + Duration::from_secs(60);
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("keyed_latched").unwrap();
    let latched = QosProfile::keep_last(1).reliable().transient_local();

    // roslite's writer to rclpy's late joiner.
    let publisher = node
        .create_publisher::<KeyedLong>("/latched_roslite", latched)
        .unwrap();
    for round in 0..3 {
        for key in 0..5 {
            let value = 10 * round + key;
            publisher.publish(KeyedLong { key, value }).unwrap();
        }
    }
    let mut late = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "keyed_peer.py",
        &["late", "/latched_roslite", "30"],
    ));
    for _ in NEWEST_OF_EACH_KEY {
        if late
            .wait_line(deadline, |l| l.starts_with("got "))
            .is_none()
        {
            break;
        }
    }
    // Anything more would have come right behind.
    std::thread::sleep(Duration::from_secs(1));
    late.kill();
    let finished = late.finish(deadline);
    let got: Vec<&String> = finished
        .stdout
        .iter()
        .filter(|l| l.starts_with("got "))
        .collect();
    let expected: Vec<String> = NEWEST_OF_EACH_KEY
        .iter()
        .map(|(key, value)| format!("got key={key} value={value}"))
        .collect();
    assert_eq!(
        got,
        expected.iter().collect::<Vec<_>>(),
        "rclpy's late joiner\n{finished}"
    );

    // rclpy's writer to roslite's late joiner, whose callback runs only once all arrived.
    let mut talker = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "keyed_peer.py",
        &["latched", "/latched_rclpy", "30"],
    ));
    assert!(
        talker.wait_line(deadline, |l| l == "PUBLISHED").is_some(),
        "rclpy's latched publisher did not start"
    );
    let received: Arc<Mutex<Vec<(i32, i32)>>> = Arc::default();
    let subscription = node
        .create_subscription("/latched_rclpy", latched, {
            let received = received.clone();
            move |m: KeyedLong| received.lock().unwrap().push((m.key, m.value))
        })
        .unwrap();
    // Not spun yet: what arrives waits in the subscription's queue.
    while subscription.stats().received < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(1));
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    for _ in 0..10 {
        executor.spin_once(Some(Duration::from_millis(20)));
    }
    drop(talker);
    let stats = subscription.stats();
    assert_eq!(
        *received.lock().unwrap(),
        NEWEST_OF_EACH_KEY,
        "roslite's late joiner: {stats:?}"
    );
    assert_eq!(stats.overwritten, 0, "{stats:?}");
}
