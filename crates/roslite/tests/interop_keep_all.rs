//! Reliable keep-all against readers and writers of other vendors: Cyclone DDS 11 (PyPI
//! `cyclonedds`, `interop/python/cyclone_chatter.py`) and Fast DDS under rclpy
//! (`interop/python/keep_all_peer.py`), both in ./.venv, which `cargo xtask test` installs.
//! Each test runs in a network namespace made for it (only `lo`, with multicast), so nothing
//! leaves the machine.
//!
//! **Under loss.** nftables drops 10 % of the namespace's UDP datagrams, each way, while 1000
//! messages go one a millisecond, every 100th of 100 KB (fragmented: DATA_FRAG, and NACK_FRAG
//! for what is lost). Both directions, both vendors: the reader gets every message once, in
//! order and whole, and counts nothing lost; the peer's writer sees all acknowledged.
//!
//! **A publication given up.** A roslite writer uses up the number of a publication it gave up
//! on: each matched reader is sent a GAP for it (RTPS 2.5 §8.3.7.4), addressed to that reader,
//! as repairs are. Cyclone applies a GAP only to the reader it names; Fast DDS also takes one
//! with `readerId = ENTITYID_UNKNOWN`. The reader must skip that number: every other message
//! arrives once and in order, and the stream goes on after it. The scenario, by nftables rules
//! on the roslite participant's user-traffic unicast port (where the peer's ACKNACKs go):
//! 1. every ACKNACK is dropped: the writer's history fills with unacknowledged samples
//!    (`KEEP_ALL_MAX_SAMPLES`) while the peer still receives them, and a publish times out;
//! 2. only an ACKNACK that asks for the given-up number is dropped, so the GAP sent with the
//!    timeout is the only way the peer can learn of it, as when that ACKNACK is lost. The
//!    others acknowledge the history, and publishing goes on.
//!
//! Sent with `readerId = ENTITYID_UNKNOWN` instead, the GAP left the Cyclone reader asking for
//! the number in step 2 for ever, and the messages after it never arrived.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::qos::KEEP_ALL_MAX_SAMPLES;
use roslite::{Executor, PublishError, QosProfile};
use roslite_transport::netns::NetNs;
use roslite_transport::ports::user_unicast_port;

mod common;

use common::{LinePeer, PeerOutput};

/// Longest a test waits for one step of its peer.
const STEP: Duration = Duration::from_secs(30);

/// Longest a stream under loss may take to arrive whole.
const LOSSY_STREAM: Duration = Duration::from_secs(90);

/// Messages published after the one that timed out.
const AFTER: u64 = 10;

/// The stream sent under loss: messages, every how many one is big, and its padding.
const LOSSY_COUNT: u64 = 1000;
const BIG_EVERY: u64 = 100;
const BIG_SIZE: usize = 100_000;

/// Datagrams nftables drops under loss, in percent, each way.
const LOSS_PERCENT: u8 = 10;

/// Cyclone on `lo` only, with multicast (SPDP to 239.255.0.1 works inside the namespace).
const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>"#;

/// The nftables table of the given-up tests' rules.
const TABLE: &str = "roslite_given_up";

/// The other side's implementation.
#[derive(Clone, Copy, Debug)]
enum Vendor {
    Cyclone,
    Rclpy,
}

impl Vendor {
    /// A keep-all reader of `/chatter` that prints `READY`, then `HEARD <data>` as it takes each
    /// message and `LOST <total>` when its DDS reports messages lost; it stops after `end`.
    fn listener(self, ns: &NetNs, domain: u32) -> Command {
        match self {
            Vendor::Cyclone => cyclone(ns, domain, &["stream-all", "120"]),
            Vendor::Rclpy => {
                common::rclpy_script(ns, domain, "keep_all_peer.py", &["listen", "120"])
            }
        }
    }

    /// A keep-all writer of `/chatter` that waits for a match, sends the lossy stream and `end`,
    /// and prints `DONE True` once every reader acknowledged it all.
    fn talker(self, ns: &NetNs, domain: u32) -> Command {
        let args = [
            LOSSY_COUNT.to_string(),
            BIG_EVERY.to_string(),
            BIG_SIZE.to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match self {
            Vendor::Cyclone => cyclone(ns, domain, &[&["talk-all"], &args[..]].concat()),
            Vendor::Rclpy => common::rclpy_script(
                ns,
                domain,
                "keep_all_peer.py",
                &[&["talk"], &args[..]].concat(),
            ),
        }
    }
}

fn cyclone(ns: &NetNs, domain: u32, args: &[&str]) -> Command {
    let mut command = ns.command(common::python());
    command
        .arg(common::workspace().join("interop/python/cyclone_chatter.py"))
        .args(args)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .env("PYTHONUNBUFFERED", "1");
    command
}

#[test]
fn a_cyclone_reader_gets_a_keep_all_stream_whole_through_loss() {
    roslite_to_peer_through_loss(Vendor::Cyclone, 47, "loss-to-cyclone");
}

#[test]
fn an_rclpy_reader_gets_a_keep_all_stream_whole_through_loss() {
    roslite_to_peer_through_loss(Vendor::Rclpy, 48, "loss-to-rclpy");
}

#[test]
fn a_cyclone_writer_s_keep_all_stream_arrives_whole_through_loss() {
    peer_to_roslite_through_loss(Vendor::Cyclone, 49, "loss-from-cyclone");
}

#[test]
fn an_rclpy_writer_s_keep_all_stream_arrives_whole_through_loss() {
    peer_to_roslite_through_loss(Vendor::Rclpy, 50, "loss-from-rclpy");
}

#[test]
fn a_cyclone_reader_skips_a_publication_given_up_and_gets_the_rest() {
    let ns = namespace("given-up-cyclone");
    let out = given_up_against(&ns, 45, Vendor::Cyclone);
    // Cyclone takes a GAP as "irrelevant", not as SAMPLE_LOST.
    println!("Cyclone reported lost: {:?}", out.values("LOST "));
}

#[test]
fn an_rclpy_reader_skips_a_publication_given_up_and_gets_the_rest() {
    let ns = namespace("given-up-rclpy");
    let out = given_up_against(&ns, 46, Vendor::Rclpy);
    // Fast DDS counts the hellos published before it matched, but not a number a GAP
    // declared irrelevant.
    println!("rclpy reported lost: {:?}", out.values("LOST "));
}

fn namespace(prefix: &str) -> NetNs {
    NetNs::create(prefix).expect("create a network namespace (needs root and iproute2)")
}

/// Message `n` of the lossy stream.
fn lossy_message(n: u64) -> String {
    if n.is_multiple_of(BIG_EVERY) {
        format!("n {n} {}", "x".repeat(BIG_SIZE))
    } else {
        format!("n {n}")
    }
}

/// Checks that `received` is the lossy stream, whole, once and in order.
fn assert_lossy_stream(vendor: Vendor, received: &[String]) {
    let expected: Vec<String> = (1..=LOSSY_COUNT).map(lossy_message).collect();
    if received != expected {
        let number = |m: &String| -> Option<u64> { m.split(' ').nth(1)?.parse().ok() };
        let numbers: Vec<Option<u64>> = received.iter().map(number).collect();
        let missing: Vec<u64> = (1..=LOSSY_COUNT)
            .filter(|n| !numbers.contains(&Some(*n)))
            .collect();
        let damaged: Vec<u64> = received
            .iter()
            .filter(|m| number(m).is_some_and(|n| **m != lossy_message(n)))
            .filter_map(number)
            .collect();
        let out_of_order = numbers.windows(2).filter(|w| w[1] <= w[0]).count();
        panic!(
            "{vendor:?}: {} of {LOSSY_COUNT} messages; missing {missing:?}; damaged \
             {damaged:?}; {out_of_order} out of order or repeated",
            received.len()
        );
    }
}

/// A roslite keep-all publisher sends the lossy stream to `vendor`'s keep-all reader while 10 %
/// of the datagrams each way are dropped.
fn roslite_to_peer_through_loss(vendor: Vendor, domain: u32, name: &str) {
    let ns = namespace(name);
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_lossy_talker").unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("chatter", QosProfile::DEFAULT.keep_all())
        .unwrap();
    let publish = |data: String| publisher.publish(StringMsg { data });
    let mut peer = LinePeer::spawn(vendor.listener(&ns, domain));
    let hellos = handshake(&publish, &mut peer);
    ns.drop_udp_percent(LOSS_PERCENT)
        .expect("nftables in the test namespace");
    let start = Instant::now();
    for n in 1..=LOSSY_COUNT {
        publish(lossy_message(n)).unwrap_or_else(|e| panic!("publish {n}: {e}"));
        std::thread::sleep(Duration::from_millis(1));
    }
    publish("end".to_owned()).unwrap();
    let out = peer.finish(Instant::now() + LOSSY_STREAM);
    let took = start.elapsed();
    ns.drop_udp_percent(0)
        .expect("nftables in the test namespace");
    assert!(out.success, "{vendor:?} did not hear `end`\n{out}");
    let received: Vec<String> = out
        .values("HEARD ")
        .into_iter()
        .filter(|m| m.starts_with("n "))
        .collect();
    assert_lossy_stream(vendor, &received);
    // Fast DDS counts the hellos it missed before its reader matched; nothing else may be.
    let lost = out
        .values("LOST ")
        .last()
        .map_or(0, |n| n.parse().unwrap_or(u64::MAX));
    assert!(
        lost < hellos,
        "{vendor:?} reported {lost} messages lost, and only {} hellos went unheard",
        hellos - 1
    );
    println!("{vendor:?} got the stream whole through {LOSS_PERCENT} % loss in {took:?}");
}

/// `vendor`'s keep-all writer sends the lossy stream to a roslite keep-all subscription while
/// 10 % of the datagrams each way are dropped.
fn peer_to_roslite_through_loss(vendor: Vendor, domain: u32, name: &str) {
    let ns = namespace(name);
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_lossy_listener").unwrap();
    let received: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = received.clone();
    let subscription = node
        .create_subscription(
            "chatter",
            QosProfile::DEFAULT.keep_all(),
            move |m: StringMsg| sink.lock().unwrap().push(m.data),
        )
        .unwrap();
    let mut peer = LinePeer::spawn(vendor.talker(&ns, domain));
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let spin_until = |limit, done: &dyn Fn() -> bool| common::spin_until(&executor, limit, done);
    let matched = spin_until(STEP, &|| subscription.publisher_count() > 0);
    assert!(matched, "{vendor:?}'s writer never matched");
    // The peer starts half a second after its own match.
    ns.drop_udp_percent(LOSS_PERCENT)
        .expect("nftables in the test namespace");
    let start = Instant::now();
    let ended = spin_until(LOSSY_STREAM, &|| {
        received.lock().unwrap().last().map(String::as_str) == Some("end")
    });
    let took = start.elapsed();
    ns.drop_udp_percent(0)
        .expect("nftables in the test namespace");
    let acknowledged = peer.wait_line(Instant::now() + STEP, |l| l.starts_with("DONE "));
    let out = peer.finish(Instant::now() + STEP);
    let mut received = received.lock().unwrap().clone();
    assert!(
        ended,
        "`end` did not arrive from {vendor:?} ({} messages did)\n{out}",
        received.len()
    );
    received.pop();
    assert_lossy_stream(vendor, &received);
    let lost = subscription.message_lost_status();
    assert_eq!(lost.total_count, 0, "{vendor:?}'s stream: {lost:?}");
    assert_eq!(
        acknowledged.as_deref(),
        Some("DONE True"),
        "{vendor:?}'s writer did not see every message acknowledged\n{out}"
    );
    println!("{vendor:?}'s stream arrived whole through {LOSS_PERCENT} % loss in {took:?}");
}

/// Publishes `hello 1`, `hello 2`, ... until the peer hears one: then both sides matched (a
/// volatile reader that has not yet matched our writer would miss the first messages). Returns
/// how many were published.
fn handshake(publish: &dyn Fn(String) -> Result<(), PublishError>, peer: &mut LinePeer) -> u64 {
    let start = Instant::now();
    let mut hellos = 0u64;
    loop {
        assert!(start.elapsed() < STEP, "the peer never heard us");
        hellos += 1;
        publish(format!("hello {hellos}")).unwrap();
        let heard = peer.wait_line(Instant::now() + Duration::from_millis(200), |l| {
            l.starts_with("HEARD hello ")
        });
        if heard.is_some() {
            return hellos;
        }
    }
}

/// Runs the given-up scenario against `vendor`'s keep-all reader and checks what it heard;
/// returns its output.
fn given_up_against(ns: &NetNs, domain: u32, vendor: Vendor) -> PeerOutput {
    // The first participant in the namespace: participant id 0 (ports are tried from 0 up).
    let ctx = common::networked_in(ns, domain);
    let ack_port = user_unicast_port(domain, 0).unwrap();
    let node = ctx.create_node("roslite_given_up").unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("chatter", QosProfile::DEFAULT.keep_all())
        .unwrap();
    let publish = |data: String| publisher.publish(StringMsg { data });
    let mut peer = LinePeer::spawn(vendor.listener(ns, domain));
    let hellos = handshake(&publish, &mut peer);

    // 1. No ACKNACK reaches the writer.
    set_rules(ns, &format!("udp dport {ack_port} counter drop"));
    let mut timed_out = None;
    for n in 1..=3 * KEEP_ALL_MAX_SAMPLES as u64 {
        match publish(format!("n {n}")) {
            Ok(()) => {}
            Err(PublishError::Timeout) => {
                timed_out = Some(n);
                break;
            }
            Err(e) => panic!("publish {n}: {e}"),
        }
        // A burst the peer's socket takes without overflowing: what it loses now it cannot
        // ask for again until step 2.
        if n % 100 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let acks_dropped = nft_counter(ns);
    let Some(timed_out) = timed_out else {
        panic!(
            "no publish timed out though the peer's ACKNACKs were dropped ({acks_dropped} \
             datagrams to port {ack_port})\n{}",
            peer.finish(Instant::now())
        )
    };
    // Publication numbers are the writer's sequence numbers.
    let given_up_sn = hellos + timed_out;
    println!(
        "publish {timed_out} (number {given_up_sn}) timed out; {acks_dropped} datagrams to port \
         {ack_port} dropped"
    );

    // 2. Only an ACKNACK asking for the given-up number is dropped: RTPS header (20 bytes),
    // INFO_DST (16), then the ACKNACK (id 0x06 at byte 36; readerSNState's bitmapBase at
    // 48, little-endian as both peers send it; numBits at 56). `@th` counts bits from the UDP
    // header (8 bytes).
    let base_low = u32::try_from(given_up_sn).unwrap().swap_bytes();
    set_rules(
        ns,
        &format!(
            "udp dport {ack_port} @th,352,8 0x06 @th,448,32 0 @th,480,32 {base_low:#010x} \
             @th,512,32 != 0 counter drop"
        ),
    );
    for n in timed_out + 1..=timed_out + AFTER {
        publish(format!("n {n}")).unwrap_or_else(|e| {
            panic!(
                "publish {n} after the timeout: {e} (the history was not acknowledged: is the \
                 peer asking for number {given_up_sn}? its requests for it are dropped, {} so \
                 far)",
                nft_counter(ns)
            )
        });
    }
    publish("end".to_owned()).unwrap();
    let out = peer.finish(Instant::now() + STEP);
    let requests_dropped = nft_counter(ns);
    assert!(
        out.success,
        "the peer did not hear `end` ({requests_dropped} requests for number {given_up_sn} \
         dropped)\n{out}"
    );

    let heard: Vec<u64> = out
        .values("HEARD ")
        .iter()
        .filter_map(|data| data.strip_prefix("n "))
        .map(|n| {
            n.parse()
                .unwrap_or_else(|_| panic!("unexpected message n {n}"))
        })
        .collect();
    let expected: Vec<u64> = (1..=timed_out + AFTER)
        .filter(|&n| n != timed_out)
        .collect();
    if heard != expected {
        let missing: Vec<u64> = expected
            .iter()
            .filter(|n| !heard.contains(n))
            .copied()
            .collect();
        let out_of_order = heard.windows(2).filter(|w| w[1] <= w[0]).count();
        panic!(
            "heard {} messages, expected {} (all but {timed_out}): missing {missing:?}, {} out of \
             order or repeated, given-up one heard: {}\n--- stderr\n{}",
            heard.len(),
            expected.len(),
            out_of_order,
            heard.contains(&timed_out),
            out.stderr
        );
    }
    out
}

/// Replaces the test's nftables rules with `rule`, in the namespace's input hook.
fn set_rules(ns: &NetNs, rule: &str) {
    ns.nft(&format!(
        "table inet {TABLE} {{}}\ndelete table inet {TABLE}\ntable inet {TABLE} {{\n  chain \
         input {{\n    type filter hook input priority 0; policy accept;\n    {rule}\n  }}\n}}\n"
    ))
    .expect("nftables in the test namespace");
}

/// Packets the test's rule has dropped since it was set.
fn nft_counter(ns: &NetNs) -> u64 {
    let listed = ns
        .command("nft")
        .args(["list", "table", "inet", TABLE])
        .output()
        .expect("run nft in the test namespace");
    String::from_utf8_lossy(&listed.stdout)
        .split("counter packets ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
