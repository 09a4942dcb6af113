//! A keep-all publication that timed out, met by a reader of another vendor: Cyclone DDS 11
//! (PyPI `cyclonedds`, `interop/python/cyclone_chatter.py stream-all`) and Fast DDS under rclpy
//! (`interop/python/qos_peer.py listen --keep-all`), both in ./.venv, which `cargo xtask test`
//! installs.
//!
//! A roslite writer uses up the number of a publication it gave up on: each matched reader is
//! sent a GAP for it (RTPS 2.5 §8.3.7.4), addressed to that reader, as repairs are. Cyclone
//! applies a GAP only to the reader it names; Fast DDS also takes one with `readerId =
//! ENTITYID_UNKNOWN`. The reader must skip that number: every other message arrives once and
//! in order, and the stream goes on after it.
//!
//! The scenario, by nftables rules on the roslite participant's user-traffic unicast port (where
//! the peer's ACKNACKs go):
//! 1. every ACKNACK is dropped: the writer's history fills with unacknowledged samples
//!    (`KEEP_ALL_MAX_SAMPLES`) while the peer still receives them, and a publish times out;
//! 2. only an ACKNACK that asks for the given-up number is dropped, so the GAP sent with the
//!    timeout is the only way the peer can learn of it, as when that ACKNACK is lost. The others
//!    acknowledge the history, and publishing goes on.
//!
//! Sent with `readerId = ENTITYID_UNKNOWN` instead, the GAP left the Cyclone reader asking for
//! the number in step 2 for ever, and the messages after it never arrived.
//!
//! Each test runs in a network namespace made for it (only `lo`, with multicast), so nothing
//! leaves the machine.

use std::process::Command;
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::qos::KEEP_ALL_MAX_SAMPLES;
use roslite::{PublishError, QosProfile};
use roslite_transport::netns::NetNs;
use roslite_transport::ports::user_unicast_port;

mod common;

use common::{LinePeer, PeerOutput};

/// Longest a test waits for one step of its peer.
const STEP: Duration = Duration::from_secs(30);

/// Messages published after the one that timed out.
const AFTER: u64 = 10;

/// Cyclone on `lo` only, with multicast (SPDP to 239.255.0.1 works inside the namespace).
const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>"#;

/// The nftables table of the test's rules.
const TABLE: &str = "roslite_given_up";

#[test]
fn a_cyclone_reader_skips_a_publication_given_up_and_gets_the_rest() {
    let domain = 45;
    let ns = NetNs::create("given-up-cyclone")
        .expect("create a network namespace (needs root and iproute2)");
    let out = given_up_against(&ns, domain, |ns| {
        let mut command = ns.command(common::python());
        command
            .arg(common::workspace().join("interop/python/cyclone_chatter.py"))
            .args(["stream-all", "120"])
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
            .env("PYTHONUNBUFFERED", "1");
        command
    });
    // Cyclone takes a GAP as "irrelevant", not as SAMPLE_LOST.
    println!("Cyclone reported lost: {:?}", out.values("LOST "));
}

#[test]
fn an_rclpy_reader_skips_a_publication_given_up_and_gets_the_rest() {
    let domain = 46;
    let ns = NetNs::create("given-up-rclpy")
        .expect("create a network namespace (needs root and iproute2)");
    let out = given_up_against(&ns, domain, |ns| {
        common::rclpy_script(
            ns,
            domain,
            "qos_peer.py",
            &[
                "listen",
                "chatter",
                "string",
                "--keep-all",
                "--until",
                "end",
                "--seconds",
                "120",
            ],
        )
    });
    // Fast DDS counts the hellos published before it matched, but not a number a GAP
    // declared irrelevant.
    println!("rclpy reported lost: {:?}", out.values("LOST "));
}

/// Runs the scenario against the peer `listener` starts (a keep-all reader of `/chatter` that
/// prints `HEARD <data>` as it takes each sample and stops after `end`), and checks what it
/// heard; returns its output.
fn given_up_against(
    ns: &NetNs,
    domain: u32,
    listener: impl FnOnce(&NetNs) -> Command,
) -> PeerOutput {
    // The first participant in the namespace: participant id 0 (ports are tried from 0 up).
    let ctx = common::networked_in(ns, domain);
    let ack_port = user_unicast_port(domain, 0).unwrap();
    let node = ctx.create_node("roslite_given_up").unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("chatter", QosProfile::DEFAULT.keep_all())
        .unwrap();
    let publish = |data: String| publisher.publish(StringMsg { data });
    let mut peer = LinePeer::spawn(listener(ns));

    // Matched both ways once a message is heard: a volatile reader that has not yet matched
    // our writer would miss the first ones.
    let start = Instant::now();
    let mut hellos = 0u64;
    let heard_hello = loop {
        if start.elapsed() > STEP {
            break false;
        }
        hellos += 1;
        publish(format!("hello {hellos}")).unwrap();
        let heard = peer.wait_line(Instant::now() + Duration::from_millis(200), |l| {
            l.starts_with("HEARD hello ")
        });
        if heard.is_some() {
            break true;
        }
    };
    assert!(
        heard_hello,
        "the peer never heard us\n{}",
        peer.finish(Instant::now())
    );

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
