//! roslite against real ROS 2 (rclpy over Fast DDS, from the PyPI wheels in ./.venv, which
//! `cargo xtask test` installs), inside a network namespace made for each test: only `lo`,
//! with multicast, so default (SUBNET) discovery works and nothing can leave the machine. Each
//! test also has a ROS domain of its own.
//!
//! - std_msgs/String and geometry_msgs/Twist, both directions, reliable (values compared
//!   exactly, no loss, no reordering);
//! - best effort: both sides best effort, and each side's best-effort subscription on the
//!   other's reliable publisher, both directions;
//! - transient local: a late-joining rclpy subscription gets the last N samples of a roslite
//!   publisher's KEEP_LAST N history, then live data; and the reverse;
//! - incompatible QoS: roslite's `incompatible_qos_status()` counts an rclpy endpoint whose QoS
//!   cannot match (reliability either way, durability), names the policy, and no data flows;
//!   rclpy reports the same pair from its side;
//! - rclpy's graph API lists roslite's node, its topics with their types, and attributes the
//!   endpoints (with their QoS) to the node;
//! - sensor_msgs/Image over 1 MiB (DATA_FRAG), both directions, intact (CRC-32).
//! - one roslite publisher serving a roslite subscription over shared memory and an rclpy one
//!   over UDP at once;
//! - deadline: when the talker (rclpy or roslite) goes quiet, both sides report the missed
//!   deadline, roslite through `on_deadline_missed`; and roslite counts the rclpy endpoint as
//!   matched;
//! - message lost: with nftables dropping datagrams, a roslite subscription counts the
//!   messages a reliable keep-last(1) rclpy talker replaced before it could repair them;
//! - liveliness: an rclpy talker with a finite MANUAL_BY_TOPIC lease is alive from its match
//!   on, lapses when it goes quiet and returns when it publishes, one callback per change;
//! - `/rosout`: a roslite node's log lines, with their function, file and line.
//! - source timestamps: rclpy's `MessageInfo` reports the publish time of a roslite message
//!   (INFO_TS), and roslite's `MessageInfo::source_timestamp` that of an rclpy message, both
//!   for a sample taken from a transient-local history well after it was published.
//!
//! The peers are `interop/python/{chatter_listener,chatter_talker,qos_peer,graph_peer,
//! image_peer,stamp_peer}.py`.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use roslite::msgs::geometry_msgs::msg::{Twist, Vector3};
use roslite::msgs::sensor_msgs::msg::Image;
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{
    Context, Executor, IncompatibleQosStatus, Liveliness, Message, Node, Publisher, QosPolicyKind,
    QosProfile,
};
use roslite_transport::netns::NetNs;

mod common;
use common::{LinePeer, PeerOutput};

/// Longest a test waits for one step (discovery plus a few samples); rclpy needs ~1 s to start.
const STEP: Duration = Duration::from_secs(25);

fn rclpy(ns: &NetNs, domain: u32, script: &str, args: &[&str]) -> Command {
    common::rclpy_script(ns, domain, script, args)
}

fn namespace(prefix: &str) -> NetNs {
    NetNs::create(prefix).expect("create a network namespace (needs root and iproute2)")
}

/// Publishes `make(n)` for n = 1, 2, ... every 100 ms on a thread until dropped.
struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start<T: Message + 'static>(
        publisher: Arc<Publisher<T>>,
        make: impl Fn(u32) -> T + Send + 'static,
    ) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    publisher.publish(make(n)).unwrap();
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Ticker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Spins `node` on this thread until `done` holds or `timeout` passes; whether it held.
fn spin_until(
    ctx: &Context,
    node: &Node,
    timeout: Duration,
    mut done: impl FnMut() -> bool,
) -> bool {
    let executor = Executor::new(ctx);
    executor.add_node(node);
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= timeout {
            return false;
        }
        executor.spin_once(Some(Duration::from_millis(50)));
    }
}

/// A subscription callback's sink.
fn collector<T>() -> (Arc<Mutex<Vec<T>>>, impl Fn(T) + Send + 'static)
where
    T: Send + 'static,
{
    let all: Arc<Mutex<Vec<T>>> = Arc::default();
    let sink = all.clone();
    (all, move |item| sink.lock().unwrap().push(item))
}

/// The counters `n` of messages `"<prefix><n>"`; panics on any other content.
fn counters(messages: &[String], prefix: &str) -> Vec<u32> {
    messages
        .iter()
        .map(|m| {
            m.strip_prefix(prefix)
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected message {m:?} in {messages:?}"))
        })
        .collect()
}

fn assert_increasing(counters: &[u32], context: &dyn std::fmt::Display) {
    assert!(
        counters.windows(2).all(|w| w[0] < w[1]),
        "repeated or out of order: {counters:?}\n{context}"
    );
}

fn assert_consecutive(counters: &[u32], context: &dyn std::fmt::Display) {
    assert!(
        counters.windows(2).all(|w| w[1] == w[0] + 1),
        "lost, repeated or out of order: {counters:?}\n{context}"
    );
}

fn string(data: String) -> StringMsg {
    StringMsg { data }
}

/// The Twist `qos_peer.py` sends as sample `n` (`z` = -1 for history, +1 for live samples).
fn twist(n: u32, z: f64) -> Twist {
    let n = f64::from(n);
    Twist {
        linear: Vector3 {
            x: n,
            y: n + 0.5,
            z,
        },
        angular: Vector3 {
            x: n / 4.0,
            y: -n / 8.0,
            z: n / 1000.0,
        },
    }
}

/// A `HEARD` line of `qos_peer.py` for a Twist: its six values.
fn parse_twist(line: &str) -> Twist {
    let v: Vec<f64> = line
        .split_whitespace()
        .map(|x| {
            x.parse()
                .unwrap_or_else(|_| panic!("bad Twist line {line:?}"))
        })
        .collect();
    assert_eq!(v.len(), 6, "bad Twist line {line:?}");
    Twist {
        linear: Vector3 {
            x: v[0],
            y: v[1],
            z: v[2],
        },
        angular: Vector3 {
            x: v[3],
            y: v[4],
            z: v[5],
        },
    }
}

/// Checks the Twists are live samples 1, 2, ... of `qos_peer.py`/[`twist`], consecutive from
/// the first, with exactly the values sent; returns their counters.
fn check_twists(got: &[Twist], context: &dyn std::fmt::Display) -> Vec<u32> {
    let counters: Vec<u32> = got.iter().map(|t| t.linear.x as u32).collect();
    for (t, n) in got.iter().zip(&counters) {
        assert_eq!(*t, twist(*n, 1.0), "Twist {n} altered\n{context}");
    }
    assert_consecutive(&counters, context);
    counters
}

/// `qos_peer.py <args>`, running in `ns`.
fn qos_peer(ns: &NetNs, domain: u32, args: &[&str]) -> LinePeer {
    LinePeer::spawn(rclpy(ns, domain, "qos_peer.py", args))
}

/// Waits for the peer to print `INCOMPATIBLE <policy> ...`.
fn await_peer_incompatible(peer: &mut LinePeer, policy: &str) -> Option<String> {
    let prefix = format!("INCOMPATIBLE {policy} ");
    peer.wait_line(Instant::now() + STEP, |l| l.starts_with(&prefix))
}

// -------------------------------------------------------------------------------------------
// std_msgs/String (with node visibility), geometry_msgs/Twist

#[test]
fn rclpy_listener_hears_a_roslite_talker_and_sees_its_node() {
    let domain = 1;
    let ns = namespace("rclpy-listen");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_talker").unwrap();
    let publisher = Arc::new(node.create_publisher::<StringMsg>("chatter", 10).unwrap());
    let listener = LinePeer::spawn(rclpy(&ns, domain, "chatter_listener.py", &["20", "5"]));
    let talker = Ticker::start(publisher, |n| string(format!("from roslite {n}")));
    let out = listener.finish(Instant::now() + STEP);
    drop(talker);
    assert!(out.success, "rclpy failed: {out}");
    assert!(out.values("RESULT ") == ["5"], "{out}");
    let heard = out.values("HEARD ");
    assert_consecutive(&counters(&heard, "from roslite "), &out);
    let nodes = out.values("NODES ").concat();
    assert!(
        nodes.split(' ').any(|n| n == "/roslite_talker"),
        "rclpy's graph lacks the roslite node: {out}"
    );
}

#[test]
fn roslite_listener_hears_an_rclpy_talker_and_sees_its_node() {
    let domain = 2;
    let ns = namespace("rclpy-talk");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_listener").unwrap();
    let (heard, sink) = collector();
    let _sub = node
        .create_subscription("chatter", 10, move |m: StringMsg| sink(m.data))
        .unwrap();
    let talker = LinePeer::spawn(rclpy(&ns, domain, "chatter_talker.py", &["30"]));
    // The talker's graph entry comes as transient-local history once discovery completes.
    let py_talker = ("/".to_owned(), "py_talker".to_owned());
    let net = ctx.graph();
    let done = spin_until(&ctx, &node, STEP, || {
        heard.lock().unwrap().len() >= 5 && net.node_names().contains(&py_talker)
    });
    let out = talker.finish(Instant::now());
    let heard = heard.lock().unwrap().clone();
    assert!(done, "heard {heard:?}, nodes {:?}\n{out}", net.node_names());
    assert_consecutive(&counters(&heard, "from rclpy "), &out);
}

#[test]
fn rclpy_listener_receives_roslite_twists() {
    let domain = 3;
    let ns = namespace("rclpy-twist-l");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_driver").unwrap();
    let publisher = Arc::new(node.create_publisher::<Twist>("cmd_vel", 10).unwrap());
    let listener = qos_peer(&ns, domain, &["listen", "cmd_vel", "twist", "--count", "5"]);
    let talker = Ticker::start(publisher, |n| twist(n, 1.0));
    let out = listener.finish(Instant::now() + STEP);
    drop(talker);
    assert!(out.success && out.values("RESULT ") == ["5"], "{out}");
    let got: Vec<Twist> = out
        .values("HEARD ")
        .iter()
        .map(|l| parse_twist(l))
        .collect();
    check_twists(&got, &out);
    assert!(
        out.values("TOPIC ")
            .contains(&"/cmd_vel geometry_msgs/msg/Twist".to_owned()),
        "{out}"
    );
}

#[test]
fn roslite_listener_receives_rclpy_twists() {
    let domain = 4;
    let ns = namespace("rclpy-twist-t");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_base").unwrap();
    let (got, sink) = collector();
    let _sub = node
        .create_subscription("cmd_vel", 10, move |t: Twist| sink(t))
        .unwrap();
    let talker = qos_peer(&ns, domain, &["talk", "cmd_vel", "twist"]);
    let done = spin_until(&ctx, &node, STEP, || got.lock().unwrap().len() >= 5);
    let out = talker.finish(Instant::now());
    let got = got.lock().unwrap().clone();
    assert!(done, "got {got:?}\n{out}");
    check_twists(&got, &out);
}

/// A burst of small samples written back to back goes out batched (several DATA in one RTPS
/// message, docs/scale.md), and Fast DDS (rclpy, a reliable subscription deep enough to hold
/// the burst) takes every one of them, in order.
#[test]
fn rclpy_listener_receives_every_message_of_a_batched_burst() {
    const BURST: u32 = 2000;
    let domain = 44;
    let ns = namespace("rclpy-burst");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_burst").unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("burst", QosProfile::DEFAULT.keep_all())
        .unwrap();
    let count = BURST.to_string();
    let listener = qos_peer(
        &ns,
        domain,
        &[
            "listen", "burst", "string", "--count", &count, "--depth", "5000",
        ],
    );
    assert!(
        common::wait_until(STEP, || publisher.subscription_count() == 1),
        "rclpy's subscription never matched"
    );
    // rclpy matches our writer from our SEDP announcement, which may trail its own.
    std::thread::sleep(Duration::from_millis(500));
    for n in 1..=BURST {
        publisher.publish(string(format!("burst {n}"))).unwrap();
    }
    let out = listener.finish(Instant::now() + STEP);
    assert!(out.success && out.values("RESULT ") == [count], "{out}");
    let counters = counters(&out.values("HEARD "), "burst ");
    assert_eq!(counters.first(), Some(&1), "{out}");
    assert_consecutive(&counters, &out);
}

// -------------------------------------------------------------------------------------------
// Best effort

/// roslite publishes with `pub_qos`; rclpy subscribes with `listener_flags`; rclpy must hear 5
/// messages, in order, without repeats (best effort may lose some, loopback rarely does).
fn rclpy_hears_roslite(domain: u32, tag: &str, pub_qos: QosProfile, listener_flags: &[&str]) {
    let ns = namespace(tag);
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_talker").unwrap();
    let publisher = Arc::new(node.create_publisher::<StringMsg>("scan", pub_qos).unwrap());
    let mut args = vec!["listen", "scan", "string", "--count", "5"];
    args.extend_from_slice(listener_flags);
    let listener = qos_peer(&ns, domain, &args);
    let talker = Ticker::start(publisher, |n| string(format!("from roslite {n}")));
    let out = listener.finish(Instant::now() + STEP);
    drop(talker);
    assert!(out.success && out.values("RESULT ") == ["5"], "{out}");
    assert_increasing(&counters(&out.values("HEARD "), "from roslite "), &out);
    assert!(out.values("INCOMPATIBLE ").is_empty(), "{out}");
}

/// rclpy publishes with `talker_flags`; roslite subscribes with `sub_qos` and must hear 5
/// messages, in order, without repeats.
fn roslite_hears_rclpy(domain: u32, tag: &str, sub_qos: QosProfile, talker_flags: &[&str]) {
    let ns = namespace(tag);
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_listener").unwrap();
    let (heard, sink) = collector();
    let sub = node
        .create_subscription("scan", sub_qos, move |m: StringMsg| sink(m.data))
        .unwrap();
    let mut args = vec!["talk", "scan", "string"];
    args.extend_from_slice(talker_flags);
    let talker = qos_peer(&ns, domain, &args);
    let done = spin_until(&ctx, &node, STEP, || heard.lock().unwrap().len() >= 5);
    let out = talker.finish(Instant::now());
    let heard = heard.lock().unwrap().clone();
    assert!(done, "heard {heard:?}\n{out}");
    assert_increasing(&counters(&heard, "from rclpy "), &out);
    assert_eq!(sub.incompatible_qos_status().total_count, 0);
}

#[test]
fn best_effort_rclpy_listener_hears_best_effort_roslite_talker() {
    rclpy_hears_roslite(5, "be-l", QosProfile::SENSOR_DATA, &["--best-effort"]);
}

#[test]
fn best_effort_roslite_listener_hears_best_effort_rclpy_talker() {
    roslite_hears_rclpy(6, "be-t", QosProfile::SENSOR_DATA, &["--best-effort"]);
}

#[test]
fn best_effort_rclpy_listener_hears_reliable_roslite_talker() {
    rclpy_hears_roslite(7, "be-rel-l", QosProfile::DEFAULT, &["--best-effort"]);
}

#[test]
fn best_effort_roslite_listener_hears_reliable_rclpy_talker() {
    roslite_hears_rclpy(8, "be-rel-t", QosProfile::SENSOR_DATA, &[]);
}

// -------------------------------------------------------------------------------------------
// Transient local

/// A roslite publisher (transient local, KEEP_LAST 3) publishes `hist 1..5` before rclpy even
/// starts; rclpy's transient-local subscription must get `hist 3..5`, then live data.
#[test]
fn late_rclpy_subscription_gets_roslite_transient_local_history_then_live_data() {
    let domain = 9;
    let ns = namespace("tl-l");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_latch").unwrap();
    let qos = QosProfile::keep_last(3).transient_local();
    let publisher = Arc::new(node.create_publisher::<StringMsg>("latched", qos).unwrap());
    for n in 1..=5 {
        publisher.publish(string(format!("hist {n}"))).unwrap();
    }
    let mut listener = qos_peer(
        &ns,
        domain,
        &[
            "listen",
            "latched",
            "string",
            "--transient-local",
            "--count",
            "6",
        ],
    );
    let deadline = Instant::now() + STEP;
    let history: Vec<String> = (0..3)
        .map_while(|_| listener.wait_line(deadline, |l| l.starts_with("HEARD ")))
        .collect();
    let expected: Vec<String> = (3..=5).map(|n| format!("HEARD hist {n}")).collect();
    if history != expected {
        let out = listener.finish(Instant::now());
        panic!("rclpy's late joiner got {history:?}, expected {expected:?}\n{out}");
    }
    // Live data only now: the history the reader got is exactly the writer's last three.
    let talker = Ticker::start(publisher, |n| string(format!("live {n}")));
    let out = listener.finish(Instant::now() + STEP);
    drop(talker);
    assert!(out.success && out.values("RESULT ") == ["6"], "{out}");
    let heard = out.values("HEARD ");
    assert_eq!(heard[..3], ["hist 3", "hist 4", "hist 5"], "{out}");
    let live = counters(&heard[3..], "live ");
    assert_eq!(live, [1, 2, 3], "live data after the history:\n{out}");
}

/// rclpy (transient local, KEEP_LAST 3) publishes `hist 1..5`; only then does roslite start a
/// participant and a transient-local subscription, which must get `hist 3..5`, then live data.
#[test]
fn late_roslite_subscription_gets_rclpy_transient_local_history_then_live_data() {
    let domain = 10;
    let ns = namespace("tl-t");
    let mut talker = qos_peer(
        &ns,
        domain,
        &[
            "talk",
            "latched",
            "string",
            "--transient-local",
            "--depth",
            "3",
            "--history",
            "5",
        ],
    );
    if talker
        .wait_line(Instant::now() + STEP, |l| l == "HISTORY 5")
        .is_none()
    {
        panic!(
            "rclpy did not publish its history\n{}",
            talker.finish(Instant::now())
        );
    }
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_late").unwrap();
    let (heard, sink) = collector();
    let _sub = node
        .create_subscription(
            "latched",
            QosProfile::keep_last(10).transient_local(),
            move |m: StringMsg| sink(m.data),
        )
        .unwrap();
    let got_history = spin_until(&ctx, &node, STEP, || heard.lock().unwrap().len() >= 3);
    let history = heard.lock().unwrap().clone();
    if !got_history || history != ["hist 3", "hist 4", "hist 5"] {
        let out = talker.finish(Instant::now());
        panic!("roslite's late joiner got {history:?}, expected hist 3..5\n{out}");
    }
    talker.send_line("go");
    let got_live = spin_until(&ctx, &node, STEP, || heard.lock().unwrap().len() >= 6);
    let out = talker.finish(Instant::now());
    let heard = heard.lock().unwrap().clone();
    assert!(got_live, "no live data after the history: {heard:?}\n{out}");
    assert_eq!(heard[..3], ["hist 3", "hist 4", "hist 5"]);
    assert_eq!(
        counters(&heard[3..6], "from rclpy "),
        [1, 2, 3],
        "live data after the history: {heard:?}\n{out}"
    );
}

// -------------------------------------------------------------------------------------------
// Incompatible QoS

/// rclpy publishes best effort; roslite's reliable subscription must count the publisher as
/// incompatible (RELIABILITY) and receive nothing; rclpy reports the pair from its side.
#[test]
fn roslite_subscription_reports_best_effort_rclpy_publisher() {
    let domain = 11;
    let ns = namespace("qos-sub");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_strict").unwrap();
    let (heard, sink) = collector();
    let sub = node
        .create_subscription(
            "mismatch",
            QosProfile::keep_last(10).reliable(),
            move |m: StringMsg| sink(m.data),
        )
        .unwrap();
    let reported = Arc::new(Mutex::new(Vec::new()));
    {
        let reported = reported.clone();
        sub.on_incompatible_qos(move |s| reported.lock().unwrap().push(s));
    }
    let mut talker = qos_peer(
        &ns,
        domain,
        &["talk", "mismatch", "string", "--best-effort"],
    );
    let mut total = 0;
    let mut last = None;
    let counted = spin_until(&ctx, &node, STEP, || {
        // The callback takes the change counts (DDS): the read shows the total.
        let status = sub.incompatible_qos_status();
        total = status.total_count;
        last = status.last_policy;
        total >= 1
    });
    let peer_saw = await_peer_incompatible(&mut talker, "RELIABILITY");
    // rclpy publishes at 10 Hz all along: a second more gives it ten chances to get through.
    spin_until(&ctx, &node, Duration::from_secs(1), || false);
    let out = talker.finish(Instant::now());
    assert!(
        counted,
        "roslite did not report the best-effort publisher\n{out}"
    );
    assert_eq!(total, 1, "one incompatible publisher");
    assert_eq!(last, Some(QosPolicyKind::Reliability));
    let reported = reported.lock().unwrap().clone();
    assert_eq!(
        reported,
        [IncompatibleQosStatus {
            total_count: 1,
            total_count_change: 1,
            last_policy: Some(QosPolicyKind::Reliability),
        }],
        "what the callback saw"
    );
    assert!(peer_saw.is_some(), "rclpy did not report the pair\n{out}");
    let heard = heard.lock().unwrap();
    assert!(
        heard.is_empty(),
        "an incompatible pair exchanged data: {heard:?}"
    );
}

/// roslite publishes with `pub_qos`; rclpy subscribes with `listener_flags`, which cannot
/// match; roslite's publisher must report `policy` (rclpy too), and rclpy must hear nothing.
fn roslite_publisher_reports(
    domain: u32,
    tag: &str,
    pub_qos: QosProfile,
    listener_flags: &[&str],
    policy: QosPolicyKind,
) {
    let ns = namespace(tag);
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_loose").unwrap();
    let publisher = Arc::new(
        node.create_publisher::<StringMsg>("mismatch", pub_qos)
            .unwrap(),
    );
    let mut args = vec!["listen", "mismatch", "string"];
    args.extend_from_slice(listener_flags);
    let mut listener = qos_peer(&ns, domain, &args);
    let talker = Ticker::start(publisher.clone(), |n| string(format!("unheard {n}")));
    let mut total = 0;
    let mut last = None;
    let counted = common::wait_until(STEP, || {
        let status = publisher.incompatible_qos_status();
        total += status.total_count_change;
        last = status.last_policy;
        total >= 1
    });
    let peer_saw = await_peer_incompatible(&mut listener, &policy.to_string());
    // Ten more samples rclpy must not receive.
    std::thread::sleep(Duration::from_secs(1));
    listener.send_line("stop");
    let out = listener.finish(Instant::now() + Duration::from_secs(10));
    drop(talker);
    assert!(counted, "roslite did not report the subscription\n{out}");
    assert_eq!(total, 1, "one incompatible subscription\n{out}");
    assert_eq!(last, Some(policy));
    assert!(peer_saw.is_some(), "rclpy did not report the pair\n{out}");
    assert!(out.success && out.values("RESULT ") == ["0"], "{out}");
}

#[test]
fn roslite_best_effort_publisher_reports_reliable_rclpy_subscription() {
    roslite_publisher_reports(
        12,
        "qos-pub-rel",
        QosProfile::SENSOR_DATA,
        &[],
        QosPolicyKind::Reliability,
    );
}

#[test]
fn roslite_volatile_publisher_reports_transient_local_rclpy_subscription() {
    roslite_publisher_reports(
        13,
        "qos-pub-dur",
        QosProfile::DEFAULT,
        &["--transient-local"],
        QosPolicyKind::Durability,
    );
}

// -------------------------------------------------------------------------------------------
// Graph

/// rclpy's graph API (an rclpy node with no endpoints of its own) lists roslite's node, its
/// topics with their types, the endpoints by node, and each endpoint's node and QoS.
#[test]
fn rclpy_graph_lists_roslite_nodes_topics_and_types() {
    let domain = 14;
    let ns = namespace("graph");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx
        .create_node_with_namespace("graph_probe", "/interop")
        .unwrap();
    let _publisher = node
        .create_publisher::<Twist>("graph_twist", QosProfile::keep_last(5).transient_local())
        .unwrap();
    let _sub = node
        .create_subscription("graph_string", QosProfile::SENSOR_DATA, |_: StringMsg| {})
        .unwrap();
    let observer = LinePeer::spawn(rclpy(
        &ns,
        domain,
        "graph_peer.py",
        &["20", "/interop", "graph_probe"],
    ));
    let out = observer.finish(Instant::now() + STEP);
    assert!(out.success && out.values("RESULT ") == ["found"], "{out}");
    let has = |prefix: &str, line: &str| out.values(prefix).iter().any(|l| l == line);
    let nodes = out.values("NODES ").concat();
    assert!(
        nodes.split(' ').any(|n| n == "/interop/graph_probe"),
        "{out}"
    );
    for (prefix, line) in [
        ("TOPIC ", "/interop/graph_twist geometry_msgs/msg/Twist"),
        ("TOPIC ", "/interop/graph_string std_msgs/msg/String"),
        ("NODE_PUB ", "/interop/graph_twist geometry_msgs/msg/Twist"),
        ("NODE_SUB ", "/interop/graph_string std_msgs/msg/String"),
        (
            "PUB_INFO ",
            "/interop/graph_twist /interop/graph_probe geometry_msgs/msg/Twist RELIABLE \
             TRANSIENT_LOCAL",
        ),
        (
            "SUB_INFO ",
            "/interop/graph_string /interop/graph_probe std_msgs/msg/String BEST_EFFORT \
             VOLATILE",
        ),
    ] {
        assert!(has(prefix, line), "rclpy lacks `{prefix}{line}`:\n{out}");
    }
    // Nothing attributed to the node that it does not have.
    assert!(
        !has("NODE_SUB ", "/interop/graph_twist geometry_msgs/msg/Twist")
            && !has("NODE_PUB ", "/interop/graph_string std_msgs/msg/String"),
        "{out}"
    );
}

// -------------------------------------------------------------------------------------------
// Large data: sensor_msgs/Image over 1 MiB (DATA_FRAG), reliable

/// 1024x342 rgb8: 1 050 624 bytes, just over 1 MiB.
const IMAGE_WIDTH: u32 = 1024;
const IMAGE_HEIGHT: u32 = 342;
const IMAGE_BYTES: usize = (IMAGE_WIDTH * IMAGE_HEIGHT * 3) as usize;

/// CRC-32 (IEEE 802.3, as Python's `zlib.crc32`), table-driven.
fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut crc = !0u32;
    for b in bytes {
        crc = table[((crc ^ u32::from(*b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Image bytes both sides recompute (`image_peer.py`): `(i * 7 + seed) mod 256`.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(7).wrapping_add(seed) as u8)
        .collect()
}

fn image(seed: u32) -> Image {
    let mut msg = Image {
        height: IMAGE_HEIGHT,
        width: IMAGE_WIDTH,
        encoding: "rgb8".to_owned(),
        step: IMAGE_WIDTH * 3,
        data: pattern(IMAGE_BYTES, seed).into(),
        ..Default::default()
    };
    msg.header.frame_id = format!("frame{seed}");
    msg
}

fn seed_of(frame: &str) -> u32 {
    frame
        .strip_prefix("frame")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("unexpected frame id {frame:?}"))
}

#[test]
fn roslite_receives_rclpy_1mib_images_intact() {
    let domain = 15;
    let ns = namespace("img-l");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_viewer").unwrap();
    let (got, sink) = collector();
    let _sub = node
        .create_subscription("image", 10, move |m: Image| {
            sink((m.header.frame_id.clone(), m.data.len(), crc32(&m.data)))
        })
        .unwrap();
    let (w, h) = (IMAGE_WIDTH.to_string(), IMAGE_HEIGHT.to_string());
    let talker = LinePeer::spawn(rclpy(&ns, domain, "image_peer.py", &["talk", "30", &w, &h]));
    let done = spin_until(&ctx, &node, STEP, || got.lock().unwrap().len() >= 3);
    let out = talker.finish(Instant::now());
    let got = got.lock().unwrap().clone();
    assert!(done, "only {} images from rclpy: {got:?}\n{out}", got.len());
    let seeds: Vec<u32> = got.iter().map(|(f, _, _)| seed_of(f)).collect();
    assert_increasing(&seeds, &out);
    for (frame, len, crc) in &got {
        assert_eq!(*len, IMAGE_BYTES, "{frame}");
        assert_eq!(
            *crc,
            crc32(&pattern(*len, seed_of(frame))),
            "{frame} corrupted"
        );
    }
}

#[test]
fn rclpy_receives_roslite_1mib_images_intact() {
    let domain = 16;
    let ns = namespace("img-t");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_camera").unwrap();
    let publisher = Arc::new(node.create_publisher::<Image>("image", 10).unwrap());
    let listener = LinePeer::spawn(rclpy(&ns, domain, "image_peer.py", &["listen", "25", "3"]));
    let talker = Ticker::start(publisher, image);
    let out: PeerOutput = listener.finish(Instant::now() + STEP + Duration::from_secs(5));
    drop(talker);
    assert!(out.success && out.values("RESULT ") == ["3"], "{out}");
    let images = out.values("IMAGE ");
    let mut seeds = Vec::new();
    for line in &images {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 3, "{out}");
        let seed = seed_of(f[0]);
        seeds.push(seed);
        assert_eq!(f[1].parse::<usize>().unwrap(), IMAGE_BYTES, "{line}");
        assert_eq!(
            f[2].parse::<u32>().unwrap(),
            crc32(&pattern(IMAGE_BYTES, seed)),
            "{line} corrupted"
        );
    }
    assert_increasing(&seeds, &out);
}

/// One roslite publisher serves a roslite subscription in another participant of this host
/// over shared memory and an rclpy subscription over UDP, on the same topic, at once.
#[test]
fn one_publisher_serves_roslite_over_shared_memory_and_rclpy_over_udp() {
    let domain = 20;
    let ns = namespace("rclpy-mixed");
    let talker_ctx = common::networked_in(&ns, domain);
    let listener_ctx = common::networked_in(&ns, domain);
    let talker = talker_ctx.create_node("roslite_talker").unwrap();
    let listener = listener_ctx.create_node("roslite_listener").unwrap();
    let (heard, sink) = collector();
    let _sub = listener
        .create_subscription("chatter", 10, move |m: StringMsg| sink(m.data))
        .unwrap();
    let publisher = Arc::new(talker.create_publisher::<StringMsg>("chatter", 10).unwrap());
    let py = LinePeer::spawn(rclpy(&ns, domain, "chatter_listener.py", &["20", "5"]));
    let net = talker_ctx.graph();
    assert!(
        common::wait_until(STEP, || net.remote_subscriptions_by_path("/chatter")
            == (1, 1)),
        "expected one subscription over RTPS and one over shared memory, got {:?}",
        net.remote_subscriptions_by_path("/chatter")
    );
    // The graph says which path each subscription gets (read while rclpy still runs).
    let kinds: Vec<&str> = net
        .endpoints()
        .into_iter()
        .filter(|e| !e.local && e.topic == "/chatter")
        .map(|e| e.transport)
        .collect();
    let ticker = Ticker::start(publisher, |n| string(format!("mixed {n}")));
    let roslite_done = spin_until(&listener_ctx, &listener, STEP, || {
        heard.lock().unwrap().len() >= 5
    });
    let out = py.finish(Instant::now() + STEP);
    drop(ticker);
    assert!(out.success, "rclpy failed: {out}");
    assert!(out.values("RESULT ") == ["5"], "{out}");
    assert!(
        roslite_done,
        "the roslite listener heard {:?}",
        heard.lock().unwrap()
    );
    assert_consecutive(&counters(&heard.lock().unwrap(), "mixed "), &out);
    assert!(
        kinds.contains(&"shm") && kinds.contains(&"udp"),
        "{kinds:?}"
    );
}

// -------------------------------------------------------------------------------------------
// Deadline

/// A deadline period that both sides use: five of the talkers' 100 ms ticks.
const DEADLINE: Duration = Duration::from_millis(500);

/// An rclpy talker with a deadline publishes, then goes quiet: roslite's subscription counts
/// the periods that end without a sample (REQUESTED_DEADLINE_MISSED), and rclpy its own
/// (OFFERED_DEADLINE_MISSED), so the two agree on the policy they matched with.
#[test]
fn roslite_subscription_reports_missed_deadlines_of_an_rclpy_talker() {
    let domain = 21;
    let ns = namespace("rclpy-deadline-t");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_watchdog").unwrap();
    let qos = QosProfile::keep_last(10).deadline(DEADLINE);
    let (heard, sink) = collector();
    let sub = node
        .create_subscription("beat", qos, move |m: StringMsg| {
            sink((Instant::now(), m.data))
        })
        .unwrap();
    let (missed, on_missed) = collector();
    sub.on_deadline_missed(move |s| on_missed((Instant::now(), s)));
    let mut talker = qos_peer(
        &ns,
        domain,
        &["talk", "beat", "string", "--deadline", "0.5"],
    );
    let flowing = spin_until(&ctx, &node, STEP, || heard.lock().unwrap().len() >= 5);
    // The rclpy talker counts as this subscription's one matched publisher.
    let publishers = sub.publisher_count();
    talker.send_line("quiet");
    let reported = spin_until(&ctx, &node, STEP, || !missed.lock().unwrap().is_empty());
    let offered = talker.wait_line(Instant::now() + STEP, |l| l.starts_with("DEADLINE "));
    talker.send_line("stop");
    let out = talker.finish(Instant::now() + STEP);
    assert!(flowing, "heard {:?}\n{out}", heard.lock().unwrap());
    assert_eq!(publishers, 1, "{:?}", sub.matched_status());
    assert!(reported, "no deadline miss reported\n{out}");
    assert!(
        offered.is_some(),
        "rclpy reported no missed deadline\n{out}"
    );
    assert!(out.values("INCOMPATIBLE ").is_empty(), "{out}");
    let (last_heard, _) = *heard.lock().unwrap().last().unwrap();
    let (missed_at, status) = missed.lock().unwrap()[0];
    // A period after the last sample, not before (less the callback's own delay).
    assert!(
        missed_at - last_heard >= DEADLINE - Duration::from_millis(50),
        "{:?} after the last sample",
        missed_at - last_heard
    );
    assert!(status.total_count >= 1 && status.total_count == status.total_count_change);
    assert!(sub.deadline_missed_status().total_count >= 1);
}

/// LIVELINESS_CHANGED from a real Fast DDS writer: an rclpy talker with liveliness
/// MANUAL_BY_TOPIC and a 0.5 s lease counts as alive from its match on, not alive once it goes
/// quiet for a lease, and alive again when it publishes; roslite's callback sees each change
/// once, as DDS counts them.
#[test]
fn roslite_subscription_follows_the_liveliness_of_an_rclpy_talker() {
    let domain = 25;
    let ns = namespace("rclpy-lively");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_lively").unwrap();
    let qos = QosProfile::keep_last(10)
        .liveliness(Liveliness::ManualByTopic, Some(Duration::from_secs(1)));
    let (heard, sink) = collector();
    let sub = node
        .create_subscription("lively", qos, move |m: StringMsg| sink(m.data))
        .unwrap();
    let (changes, on_changed) = collector();
    sub.on_liveliness_changed(move |s| {
        on_changed((
            s.alive_count,
            s.not_alive_count,
            s.alive_count_change,
            s.not_alive_count_change,
        ))
    });
    let mut talker = qos_peer(
        &ns,
        domain,
        &["talk", "lively", "string", "--liveliness-lease", "0.5"],
    );
    let saw = |want: (u32, u32, i32, i32)| {
        let changes = changes.clone();
        move || changes.lock().unwrap().contains(&want)
    };
    let alive = spin_until(&ctx, &node, STEP, saw((1, 0, 1, 0)));
    let flowing = spin_until(&ctx, &node, STEP, || heard.lock().unwrap().len() >= 3);
    talker.send_line("quiet");
    let lapsed = spin_until(&ctx, &node, STEP, saw((0, 1, -1, 1)));
    talker.send_line("go");
    let back = spin_until(&ctx, &node, STEP, saw((1, 0, 1, -1)));
    talker.send_line("stop");
    let out = talker.finish(Instant::now() + STEP);
    let seen = changes.lock().unwrap().clone();
    assert!(alive, "not alive at the match: {seen:?}\n{out}");
    assert!(flowing, "heard {:?}\n{out}", heard.lock().unwrap());
    assert!(lapsed, "no lapse seen: {seen:?}\n{out}");
    assert!(back, "not alive again: {seen:?}\n{out}");
    assert_eq!(
        seen[..3],
        [(1, 0, 1, 0), (0, 1, -1, 1), (1, 0, 1, -1)],
        "one report per change\n{out}"
    );
    assert!(out.values("INCOMPATIBLE ").is_empty(), "{out}");
}

/// SAMPLE_LOST from a real Fast DDS writer: an rclpy reliable keep-last(1) talker bursts 300
/// strings of 4 KB at a roslite keep-last(1) subscription while nftables drops 30 % of the
/// namespace's UDP datagrams. A writer that keeps only its newest sample cannot repair what
/// it already replaced: it declares those numbers gone (GAP, or a HEARTBEAT past them), and
/// roslite counts them lost. Once the drops stop, the last message arrives; from the first
/// message on, each one was received or counted (`message_lost_status`, `on_message_lost`).
#[test]
fn roslite_subscription_counts_messages_an_rclpy_talker_dropped() {
    let domain = 24;
    let ns = namespace("rclpy-lost");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_lossy").unwrap();
    let (heard, sink) = collector();
    let sub = node
        .create_subscription("burst", QosProfile::keep_last(1), move |m: StringMsg| {
            let n: u32 = m
                .data
                .strip_prefix("from rclpy ")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected message {:.40}", m.data));
            sink(n);
        })
        .unwrap();
    let (reports, on_lost) = collector();
    sub.on_message_lost(on_lost);
    let mut talker = qos_peer(
        &ns,
        domain,
        &[
            "talk", "burst", "string", "--depth", "1", "--burst", "300", "--size", "4000",
        ],
    );
    let last_heard = |heard: &Arc<Mutex<Vec<u32>>>| heard.lock().unwrap().last().copied();
    let flowing = spin_until(&ctx, &node, STEP, || heard.lock().unwrap().len() >= 2);
    talker.send_line("quiet");
    // Let the live samples in flight arrive; the next ones are the burst.
    let mut settled = (last_heard(&heard), Instant::now());
    spin_until(&ctx, &node, STEP, || {
        let now = last_heard(&heard);
        if now != settled.0 {
            settled = (now, Instant::now());
        }
        settled.1.elapsed() > Duration::from_millis(500)
    });
    ns.drop_udp_percent(30)
        .expect("nftables in the test namespace");
    talker.send_line("burst");
    let burst_end: Option<u32> = talker
        .wait_line(Instant::now() + STEP, |l| l.starts_with("BURST "))
        .and_then(|l| l.strip_prefix("BURST ")?.trim().parse().ok());
    spin_until(&ctx, &node, Duration::from_millis(500), || false);
    ns.drop_udp_percent(0)
        .expect("nftables in the test namespace");
    let last = burst_end.unwrap_or(u32::MAX);
    let arrived = spin_until(&ctx, &node, STEP, || last_heard(&heard) == Some(last));
    talker.send_line("stop");
    let out = talker.finish(Instant::now() + STEP);
    assert!(flowing, "heard {:?}\n{out}", heard.lock().unwrap());
    assert!(burst_end.is_some(), "no BURST line\n{out}");
    assert!(
        arrived,
        "last heard {:?}, burst ended at {last}\n{out}",
        last_heard(&heard)
    );
    let first = heard.lock().unwrap()[0];
    let stats = sub.stats();
    let lost = sub.message_lost_status();
    println!(
        "heard {} of {first}..={last}: {stats:?} {lost:?}",
        heard.lock().unwrap().len()
    );
    assert!(
        lost.total_count > 0,
        "dropped datagrams must cost samples: {stats:?}\n{out}"
    );
    assert_eq!(
        stats.received + lost.total_count,
        u64::from(last - first + 1),
        "every message from the first on received or counted lost: {stats:?} {lost:?}"
    );
    assert_eq!(
        reports.lock().unwrap().last().map(|s| s.total_count),
        Some(lost.total_count),
        "the callback saw every loss"
    );
}

/// The reverse: a roslite publisher with a deadline stops; its OFFERED_DEADLINE_MISSED counts,
/// and the rclpy subscription with the same deadline reports its requested one.
#[test]
fn rclpy_listener_reports_missed_deadlines_of_a_roslite_talker() {
    let domain = 22;
    let ns = namespace("rclpy-deadline-l");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_beat").unwrap();
    let qos = QosProfile::keep_last(10).deadline(DEADLINE);
    let publisher = Arc::new(node.create_publisher::<StringMsg>("beat", qos).unwrap());
    let (missed, on_missed) = collector();
    publisher.on_deadline_missed(on_missed);
    let mut listener = qos_peer(
        &ns,
        domain,
        &["listen", "beat", "string", "--deadline", "0.5"],
    );
    let talker = Ticker::start(publisher.clone(), |n| string(format!("from roslite {n}")));
    // Volatile: rclpy hears from whichever sample follows its match on.
    let mut count = 0;
    let heard = listener.wait_line(Instant::now() + STEP, |l| {
        count += usize::from(l.starts_with("HEARD from roslite "));
        count == 5
    });
    drop(talker);
    // The rclpy listener counts as the publisher's one matched subscription.
    let subscriptions = publisher.subscription_count();
    let requested = listener.wait_line(Instant::now() + STEP, |l| l.starts_with("DEADLINE "));
    // The publisher's events run in the executor spinning its node.
    let reported = spin_until(&ctx, &node, STEP, || !missed.lock().unwrap().is_empty());
    listener.send_line("stop");
    let out = listener.finish(Instant::now() + STEP);
    assert!(heard.is_some(), "rclpy heard too little\n{out}");
    assert_eq!(subscriptions, 1, "{:?}", publisher.matched_status());
    assert!(
        requested.is_some(),
        "rclpy reported no missed deadline\n{out}"
    );
    assert!(out.values("INCOMPATIBLE ").is_empty(), "{out}");
    assert!(reported, "roslite's publisher reported no missed deadline");
    let status = missed.lock().unwrap()[0];
    assert!(status.total_count >= 1 && status.total_count == status.total_count_change);
}

// -------------------------------------------------------------------------------------------
// /rosout

/// A roslite node's log lines reach an rclpy subscription on `/rosout`, as rcl's do.
#[test]
fn rclpy_hears_a_roslite_nodes_log_lines_on_rosout() {
    let domain = 23;
    let ns = namespace("rclpy-rosout");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_logger").unwrap();
    let mut listener = qos_peer(&ns, domain, &["listen", "/rosout", "log"]);
    // rclpy's subscription is volatile: log until it hears one.
    let mut n = 0;
    let mut line;
    let heard = loop {
        n += 1;
        roslite::ros_info!(node.logger(), "line {n}");
        line = line!() - 1;
        let heard = listener.wait_line(Instant::now() + Duration::from_millis(200), |l| {
            l.starts_with("HEARD 20 roslite_logger line ")
        });
        if heard.is_some() || n >= 100 {
            break heard;
        }
    };
    listener.send_line("stop");
    let out = listener.finish(Instant::now() + STEP);
    let Some(heard) = heard else {
        panic!("rclpy heard no log line of roslite's in {n} tries\n{out}");
    };
    // The caller's function, file and line, as rclcpp's macros fill them in.
    let place =
        format!("(in rclpy_hears_a_roslite_nodes_log_lines_on_rosout at interop_rclpy.rs:{line})");
    assert!(heard.ends_with(&place), "{heard}, not {place}\n{out}");
    assert!(out.values("INCOMPATIBLE ").is_empty(), "{out}");
}

// -------------------------------------------------------------------------------------------
// Source timestamps (INFO_TS)

/// How long the late side waits before it takes the sample from the writer's history: the
/// publish time it then reports must be this much older than the arrival.
const HISTORY_AGE: Duration = Duration::from_millis(1500);
/// How far a reported publish time may be from the one the publisher wrote into the message
/// (both read the same wall clock: one host).
const STAMP_TOLERANCE_NS: i128 = 200_000_000;

fn wall_clock_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128
}

#[test]
fn rclpy_reports_when_a_roslite_message_was_published() {
    let domain = 26;
    let ns = namespace("rclpy-stamp-l");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_stamper").unwrap();
    let qos = QosProfile::keep_last(1).transient_local();
    let publisher = node.create_publisher::<StringMsg>("stamped", qos).unwrap();
    let published = wall_clock_ns();
    publisher.publish(string(published.to_string())).unwrap();
    let delay = format!("{}", HISTORY_AGE.as_secs_f64());
    let listener = LinePeer::spawn(rclpy(
        &ns,
        domain,
        "stamp_peer.py",
        &["listen", &delay, "20"],
    ));
    let out = listener.finish(Instant::now() + STEP);
    assert!(out.success, "rclpy failed: {out}");
    let got = out.values("GOT ").concat();
    let fields: Vec<i128> = got.split(' ').filter_map(|f| f.parse().ok()).collect();
    let [text, source, received] = fields[..] else {
        panic!("no message, or not three numbers: {out}");
    };
    assert_eq!(text, published, "{out}");
    assert!(
        (source - published).abs() < STAMP_TOLERANCE_NS,
        "rclpy's source_timestamp {source} is not the publish time {published} (INFO_TS): {out}"
    );
    assert!(
        received - source >= HISTORY_AGE.as_nanos() as i128 / 2,
        "the sample should have waited in the history: source {source}, received {received}"
    );
}

#[test]
fn roslite_reports_when_an_rclpy_message_was_published() {
    let domain = 27;
    let ns = namespace("rclpy-stamp-t");
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_stamp_listener").unwrap();
    let mut talker = LinePeer::spawn(rclpy(&ns, domain, "stamp_peer.py", &["talk", "30"]));
    let sent = talker
        .wait_line(Instant::now() + STEP, |l| l.starts_with("SENT "))
        .expect("the rclpy talker published");
    std::thread::sleep(HISTORY_AGE);
    let got: Arc<Mutex<Vec<(String, i128)>>> = Arc::default();
    let sink = got.clone();
    let qos = QosProfile::keep_last(1).transient_local();
    let _sub = node
        .create_subscription(
            "stamped",
            qos,
            move |m: StringMsg, info: &roslite::MessageInfo| {
                // The publish time on the wall clock: now, less the age the info gives.
                let age = roslite::Instant::monotonic_now()
                    .as_nanos()
                    .saturating_sub(info.source_timestamp.as_nanos());
                sink.lock()
                    .unwrap()
                    .push((m.data, wall_clock_ns() - age as i128));
            },
        )
        .unwrap();
    let done = spin_until(&ctx, &node, STEP, || !got.lock().unwrap().is_empty());
    let out = talker.finish(Instant::now());
    assert!(done, "no message from the rclpy talker: {out}");
    let (text, source) = got.lock().unwrap()[0].clone();
    let published: i128 = sent.trim_start_matches("SENT ").trim().parse().unwrap();
    assert_eq!(text, published.to_string());
    assert!(
        (source - published).abs() < STAMP_TOLERANCE_NS,
        "MessageInfo::source_timestamp puts the publish at {source}, rclpy published at \
         {published} ({} ms apart)",
        (source - published) / 1_000_000
    );
}
