//! One conformance suite for every user-data transport of roslite, run through the public API:
//! delivery and ordering, keep-last overwrite for a slow subscriber, lost messages counted
//! (SAMPLE_LOST), a keep-all publisher timing out on a stuck subscriber, large samples,
//! many-to-many, a late joiner's transient-local history, service calls, and (for the
//! transports between processes) peer death with SIGKILL: of a publisher, a subscriber and a
//! service server.
//!
//! Each case is a function taking a [`Transport`]; the `suite!` macro instantiates every case
//! once per transport, as `<transport>::<case>` (`cargo test -p roslite --test conformance
//! shm::` runs the shared-memory instantiation).
//!
//! How an instantiation gets its transport:
//! - `intra`: publisher and subscription live in one context (which still has an RTPS network,
//!   to show that intra-process delivery is chosen anyway);
//! - `shm`: two contexts of this process with the default same-host transports;
//! - `uds`: two contexts offering only the Unix socket (`LocalTransports { shm: false, ..}`);
//! - `udp`: two contexts with `LocalTransports::UDP_ONLY` (RTPS on loopback).
//!
//! Per-transport semantics of the keep-last case are documented on
//! [`keep_last_slow_subscriber`]; all four give exactly the newest `depth` messages there.
//!
//! Every case checks that the data really took that path: `remote_subscriptions_by_path` on
//! the publishing context (matched over RTPS, connected over a same-host link), the transport
//! the graph reports for the remote endpoints, and `MessageInfo::from_intra_process` of every
//! message received.
//!
//! Topics whose writers have an infinite liveliness lease (the ROS default) and are VOLATILE,
//! or TRANSIENT_LOCAL with a KEEP_LAST history and no lifespan, go over shared memory or a Unix
//! socket between roslite peers on one host; other pairs stay on RTPS/UDP. The cases use such
//! topics throughout: volatile ones, and a transient-local one for the late joiner.
//!
//! Peer death (`peer_death_publisher_killed`, `peer_death_subscriber_killed`,
//! `peer_death_server_killed`) re-executes this
//! test binary as the peer process (the role is chosen by `ROSLITE_CONFORMANCE_CHILD`) and
//! SIGKILLs it mid-stream; those cases run alone (a write lock) because they count this
//! process's descriptors. It does not apply to `intra` (publisher and subscription share one
//! process: there is no peer that could die on its own), so `intra` has no peer-death cases.
//!
//! Discovery is LOCALHOST (unicast probes of 127.0.0.1) in one domain per process,
//! `190 + pid % 10`; every topic name carries the pid, the case and the transport, so tests
//! running in parallel (and other processes in the same domain) never match each other.
//! Waits have timeouts; nothing asserts on how long something took.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use roslite::graph::GraphEndpointKind;
use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
use roslite::msgs::nav_msgs::msg::OccupancyGrid;
use roslite::msgs::nav_msgs::srv::{GetMap, GetMap_Request, GetMap_Response};
use roslite::msgs::sensor_msgs::msg::{Image, PointCloud2, PointField};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::msgs::test_msgs::msg::KeyedLong;
use roslite::{
    Context, ContextOptions, Executor, LocalTransports, Message, MessageInfo, NetworkMode, Node,
    Publisher, QosProfile, Subscription,
};
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

// ---- transports ----------------------------------------------------------------------------

/// The user-data path an instantiation of the suite runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Intra,
    Shm,
    Uds,
    Udp,
}

impl Transport {
    /// The name `roslite topic info -v` (the graph) gives it.
    fn name(self) -> &'static str {
        match self {
            Self::Intra => "intra",
            Self::Shm => "shm",
            Self::Uds => "uds",
            Self::Udp => "udp",
        }
    }

    fn parse(name: &str) -> Self {
        match name {
            "intra" => Self::Intra,
            "shm" => Self::Shm,
            "uds" => Self::Uds,
            "udp" => Self::Udp,
            other => panic!("unknown transport {other}"),
        }
    }

    /// What each context offers to the other roslite participants of this host.
    fn local_transports(self) -> LocalTransports {
        match self {
            Self::Intra | Self::Shm => LocalTransports::default(),
            Self::Uds => LocalTransports {
                shm: false,
                uds: true,
                ..LocalTransports::default()
            },
            Self::Udp => LocalTransports::UDP_ONLY,
        }
    }

    /// `remote_subscriptions_by_path` of a publishing context whose publisher has `n`
    /// subscriptions in other contexts: `(over RTPS, over a same-host link)`.
    fn path(self, n: usize) -> (usize, usize) {
        match self {
            Self::Intra => (0, 0),
            Self::Shm | Self::Uds => (0, n),
            Self::Udp => (n, 0),
        }
    }
}

// ---- shared helpers ------------------------------------------------------------------------

/// Generous bound for waits (discovery, delivery); never an assertion on speed.
const PATIENCE: Duration = Duration::from_secs(20);
/// Participant ids probed on 127.0.0.1: the parallel tests of this binary share one domain.
const PROBED_PARTICIPANTS: u32 = 32;

/// Peer-death cases count this process's descriptors: they run alone (write lock); every other
/// case holds a read lock.
static EXCLUSIVE: RwLock<()> = RwLock::new(());

fn shared_case() -> RwLockReadGuard<'static, ()> {
    EXCLUSIVE.read().unwrap_or_else(PoisonError::into_inner)
}

fn exclusive_case() -> RwLockWriteGuard<'static, ()> {
    EXCLUSIVE.write().unwrap_or_else(PoisonError::into_inner)
}

fn domain() -> u32 {
    190 + std::process::id() % 10
}

/// The topic of one case on one transport (relative; the graph calls it `/<topic>`).
fn topic(case: &str, transport: Transport) -> String {
    format!("conf_{}_{case}_{}", std::process::id(), transport.name())
}

fn context_in(domain_id: u32, transport: Transport) -> Context {
    let mut discovery = DiscoveryConfig {
        domain_id,
        range: DiscoveryRange::Localhost,
        ..Default::default()
    };
    discovery.localhost_probe_count = PROBED_PARTICIPANTS;
    Context::new(ContextOptions {
        domain_id,
        network: NetworkMode::Rtps(TransportConfig::new(discovery)),
        local_transports: transport.local_transports(),
        ..Default::default()
    })
    .expect("start an RTPS network on loopback")
}

fn context(transport: Transport) -> Context {
    context_in(domain(), transport)
}

/// The context for the other side of a pair: the same one for `intra`, a new one otherwise.
fn peer_of(ctx: &Context, transport: Transport) -> Context {
    if transport == Transport::Intra {
        ctx.clone()
    } else {
        context(transport)
    }
}

/// Waits until `condition` holds, at most `limit`; whether it did.
fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if condition() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// An executor spinning `nodes` on a thread until dropped (which shuts the context down).
struct Spinning {
    ctx: Context,
    thread: Option<JoinHandle<()>>,
}

fn spin_in_background(ctx: &Context, nodes: &[&Node]) -> Spinning {
    let (context, nodes): (Context, Vec<Node>) =
        (ctx.clone(), nodes.iter().copied().cloned().collect());
    let thread = std::thread::spawn(move || {
        let executor = Executor::new(&context);
        for node in &nodes {
            executor.add_node(node);
        }
        executor.spin();
    });
    Spinning {
        ctx: ctx.clone(),
        thread: Some(thread),
    }
}

impl Drop for Spinning {
    fn drop(&mut self) {
        self.ctx.shutdown();
        if let Some(thread) = self.thread.take() {
            let result = thread.join();
            if !std::thread::panicking() {
                result.expect("the executor thread panicked");
            }
        }
    }
}

/// What a collecting subscription received: text and whether it came from this context.
type Log = Arc<Mutex<Vec<(String, bool)>>>;

fn collecting(node: &Node, topic: &str, qos: QosProfile) -> (Subscription<StringMsg>, Log) {
    let log: Log = Arc::default();
    let sink = log.clone();
    let subscription = node
        .create_subscription(topic, qos, move |m: StringMsg, info: &MessageInfo| {
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((m.data, info.from_intra_process));
        })
        .expect("create subscription");
    (subscription, log)
}

fn snapshot(log: &Log) -> Vec<(String, bool)> {
    log.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

fn len(log: &Log) -> usize {
    log.lock().unwrap_or_else(PoisonError::into_inner).len()
}

/// Waits until `publisher` (in `pub_ctx`) reaches `subscriptions` subscriptions over
/// `transport`, and checks that the graph reports that transport for them.
fn await_route<T: Message>(
    transport: Transport,
    pub_ctx: &Context,
    publisher: &Publisher<T>,
    subscriptions: usize,
) {
    let topic = publisher.topic_name().to_owned();
    let net = pub_ctx.graph();
    let expected = transport.path(subscriptions);
    // Counted alike whichever path serves them (rclcpp's get_subscription_count).
    assert!(
        wait_until(PATIENCE, || publisher.subscription_count() == subscriptions),
        "{topic}: {} subscriptions matched, expected {subscriptions}",
        publisher.subscription_count()
    );
    let reached = wait_until(PATIENCE, || {
        net.remote_subscriptions_by_path(&topic) == expected
    });
    assert!(
        reached,
        "{topic} over {}: remote subscriptions by path (rtps, same-host) = {:?}, expected {:?}",
        transport.name(),
        net.remote_subscriptions_by_path(&topic),
        expected
    );
    // The graph comes from SEDP, which may lag a same-host connection (the subscriber
    // connects as soon as it learns of the writer): wait for it too.
    let graph = || -> Vec<&'static str> {
        net.endpoints()
            .into_iter()
            .filter(|e| !e.local && e.topic == topic && e.kind == GraphEndpointKind::Subscription)
            .map(|e| e.transport)
            .collect()
    };
    let want = if transport == Transport::Intra {
        Vec::new()
    } else {
        vec![transport.name(); subscriptions]
    };
    let _ = wait_until(PATIENCE, || graph() == want);
    let remote = graph();
    if transport == Transport::Intra {
        assert!(
            remote.is_empty(),
            "{topic}: remote subscriptions {remote:?}"
        );
    } else {
        assert_eq!(
            remote,
            vec![transport.name(); subscriptions],
            "{topic}: the graph's transport per remote subscription"
        );
    }
}

/// Checks that the subscribing context sees every remote publisher of `topic` on `transport`.
fn assert_remote_publishers(transport: Transport, sub_ctx: &Context, topic: &str, n: usize) {
    if transport == Transport::Intra {
        return;
    }
    let net = sub_ctx.graph();
    let graph = || -> Vec<&'static str> {
        net.endpoints()
            .into_iter()
            .filter(|e| !e.local && e.topic == topic && e.kind == GraphEndpointKind::Publisher)
            .map(|e| e.transport)
            .collect()
    };
    let want = vec![transport.name(); n];
    let _ = wait_until(PATIENCE, || graph() == want);
    assert_eq!(
        graph(),
        want,
        "{topic}: the graph's transport per remote publisher, seen by the subscriber"
    );
}

/// Message `seq` of publisher `publisher`: a header and a tail whose length and contents
/// depend on both (0 to ~3 KB).
fn text(publisher: usize, seq: usize) -> String {
    let tail_len = (seq * 37 + publisher * 11) % 3000;
    let tail: String = (0..tail_len)
        .map(|i| char::from(b'a' + ((i + seq + publisher) % 26) as u8))
        .collect();
    format!("{publisher}:{seq}:{tail}")
}

/// Message `seq` of the cases that count messages by number, padded with `len` bytes.
fn numbered(seq: usize, len: usize) -> StringMsg {
    StringMsg {
        data: format!("{seq}:{}", "x".repeat(len)),
    }
}

/// The number of a message made by [`numbered`].
fn number_of(message: &StringMsg) -> usize {
    let number = message.data.split(':').next().and_then(|n| n.parse().ok());
    number.expect("numbered message")
}

/// The newest number in a log of [`number_of`]s.
fn last_number(log: &Mutex<Vec<usize>>) -> Option<usize> {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .last()
        .copied()
}

/// `(publisher, seq)` of a message made by [`text`], after checking its tail.
fn parse(message: &str) -> (usize, usize) {
    let mut parts = message.splitn(3, ':');
    let publisher: usize = parts
        .next()
        .and_then(|p| p.parse().ok())
        .expect("publisher");
    let seq: usize = parts.next().and_then(|p| p.parse().ok()).expect("seq");
    assert!(
        message == text(publisher, seq),
        "message {publisher}:{seq}: contents differ"
    );
    (publisher, seq)
}

// ---- the cases -----------------------------------------------------------------------------

/// 1000 messages (0 to 3 KB) from a reliable keep-all publisher reach a reliable keep-all
/// subscription and a keep-last(1000) one: all of them, each once, in order, intact.
fn delivery_and_ordering(transport: Transport) {
    let _case = shared_case();
    let topic = topic("delivery", transport);
    let count = 1000;
    let sub_ctx = context(transport);
    let pub_ctx = peer_of(&sub_ctx, transport);
    let sub_node = sub_ctx.create_node("listener").unwrap();
    let (keep_all_sub, all_log) = collecting(&sub_node, &topic, QosProfile::DEFAULT.keep_all());
    let (keep_last_sub, last_log) = collecting(&sub_node, &topic, QosProfile::keep_last(count));
    let spinning = spin_in_background(&sub_ctx, &[&sub_node]);
    let pub_node = pub_ctx.create_node("talker").unwrap();
    let publisher = pub_node
        .create_publisher::<StringMsg>(&topic, QosProfile::DEFAULT.keep_all())
        .unwrap();
    await_route(transport, &pub_ctx, &publisher, 2);
    let full = format!("/{topic}");
    assert_remote_publishers(transport, &sub_ctx, &full, 1);
    for seq in 0..count {
        publisher.publish(StringMsg { data: text(0, seq) }).unwrap();
    }
    for (name, log) in [("keep-all", &all_log), ("keep-last(1000)", &last_log)] {
        let complete = wait_until(PATIENCE, || len(log) >= count);
        assert!(
            complete,
            "{name} subscription over {}: {} of {count} messages arrived",
            transport.name(),
            len(log)
        );
    }
    // Give a duplicate (a message sent over two paths) the chance to show up.
    std::thread::sleep(Duration::from_millis(200));
    drop(spinning);
    for (name, log) in [("keep-all", &all_log), ("keep-last(1000)", &last_log)] {
        let got = snapshot(log);
        let seqs: Vec<usize> = got.iter().map(|(m, _)| parse(m).1).collect();
        assert_eq!(
            seqs,
            (0..count).collect::<Vec<_>>(),
            "{name} over {}: every message once, in order",
            transport.name()
        );
        assert!(
            got.iter()
                .all(|(_, intra)| *intra == (transport == Transport::Intra)),
            "{name} over {}: from_intra_process must be {}",
            transport.name(),
            transport == Transport::Intra
        );
    }
    for (name, subscription) in [
        ("keep-all", &keep_all_sub),
        ("keep-last(1000)", &keep_last_sub),
    ] {
        let stats = subscription.stats();
        assert_eq!(stats.overwritten, 0, "{name}: {stats:?}");
        assert_eq!(stats.malformed, 0, "{name}: {stats:?}");
    }
}

/// A keep-last(5) subscription whose executor does not spin while 50 messages are published,
/// then spins: it gets at most 5, in order, ending with the last one published. Every
/// transport is expected to give exactly the last 5 here: each delivers in order and only ever
/// drops older samples (intra: the subscription queue trims; shm: the ring of depth 5 and the
/// queue; uds: the writer's per-reader queue of depth 5, the socket buffer, the queue; udp:
/// reliable RTPS from a keep-last(50) writer, then the queue). Before spinning, the test waits
/// until all 50 reached the subscription's queue (or, if a transport dropped some on the
/// way, until the count stops changing for half a second).
fn keep_last_slow_subscriber(transport: Transport) {
    let _case = shared_case();
    let topic = topic("keep_last", transport);
    let (depth, count) = (5usize, 50usize);
    let sub_ctx = context(transport);
    let pub_ctx = peer_of(&sub_ctx, transport);
    let sub_node = sub_ctx.create_node("slow").unwrap();
    let (subscription, log) = collecting(&sub_node, &topic, QosProfile::keep_last(depth));
    let executor = Executor::new(&sub_ctx);
    executor.add_node(&sub_node);
    let pub_node = pub_ctx.create_node("talker").unwrap();
    let publisher = pub_node
        .create_publisher::<StringMsg>(&topic, QosProfile::keep_last(count))
        .unwrap();
    await_route(transport, &pub_ctx, &publisher, 1);
    assert_remote_publishers(transport, &sub_ctx, &format!("/{topic}"), 1);
    for seq in 0..count {
        publisher.publish(StringMsg { data: text(0, seq) }).unwrap();
    }
    // Not spinning: nothing can have run the callback yet.
    let start = Instant::now();
    let mut last = (subscription.stats().received, Instant::now());
    while subscription.stats().received < count as u64 && start.elapsed() < PATIENCE {
        let received = subscription.stats().received;
        if received != last.0 {
            last = (received, Instant::now());
        } else if received > 0 && last.1.elapsed() > Duration::from_millis(500) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        len(&log),
        0,
        "a callback ran while the executor did not spin"
    );
    let stats = subscription.stats();
    executor.spin_some();
    let got = snapshot(&log);
    let seqs: Vec<usize> = got.iter().map(|(m, _)| parse(m).1).collect();
    println!(
        "{}: slow keep-last({depth}) subscription got {seqs:?}; stats {stats:?}",
        transport.name()
    );
    assert!(
        !seqs.is_empty() && seqs.len() <= depth,
        "{}: got {} messages {seqs:?}, expected 1 to {depth}",
        transport.name(),
        seqs.len()
    );
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "{}: out of order {seqs:?}",
        transport.name()
    );
    assert_eq!(
        seqs.last(),
        Some(&(count - 1)),
        "{}: the newest message is kept",
        transport.name()
    );
    assert_eq!(
        seqs,
        (count - depth..count).collect::<Vec<_>>(),
        "{}: exactly the newest {depth} (stats {stats:?})",
        transport.name()
    );
    assert_eq!(
        stats.received - stats.overwritten,
        depth as u64,
        "{}: queue accounting {stats:?}",
        transport.name()
    );
    assert!(
        got.iter()
            .all(|(_, intra)| *intra == (transport == Transport::Intra)),
        "{}: from_intra_process",
        transport.name()
    );
    sub_ctx.shutdown();
}

/// A TRANSIENT_LOCAL, KEEP_LAST(3) publisher sends five messages (up to 200 KB) before any
/// subscription exists. A TRANSIENT_LOCAL subscription that joins later gets the newest three
/// first, then the live ones; a VOLATILE subscription joining alongside gets only the live
/// ones. Each message once, in order, intact. (Same-host links carry such pairs since the
/// writer keeps its newest samples for late joiners; before, they fell back to RTPS.)
fn late_joiner_gets_transient_local_history(transport: Transport) {
    let _case = shared_case();
    let topic = topic("late_joiner", transport);
    let pub_ctx = context(transport);
    let pub_node = pub_ctx.create_node("latcher").unwrap();
    let history_qos = QosProfile::keep_last(3).reliable().transient_local();
    let publisher = pub_node
        .create_publisher::<StringMsg>(&topic, history_qos)
        .unwrap();
    let message = |seq: usize| numbered(seq, seq * 50_000);
    for seq in 0..5 {
        publisher.publish(message(seq)).unwrap();
    }
    let sub_ctx = peer_of(&pub_ctx, transport);
    let sub_node = sub_ctx.create_node("late_listener").unwrap();
    let (_late, late_log) = collecting(
        &sub_node,
        &topic,
        QosProfile::keep_last(10).transient_local(),
    );
    let (_live, live_log) = collecting(&sub_node, &topic, QosProfile::keep_last(10));
    let spinning = spin_in_background(&sub_ctx, &[&sub_node]);
    await_route(transport, &pub_ctx, &publisher, 2);
    assert_remote_publishers(transport, &sub_ctx, &format!("/{topic}"), 1);
    assert!(
        wait_until(PATIENCE, || len(&late_log) >= 3),
        "over {}: {} of the 3 kept messages reached the late transient-local subscription",
        transport.name(),
        len(&late_log)
    );
    for seq in 5..8 {
        publisher.publish(message(seq)).unwrap();
    }
    let complete = wait_until(PATIENCE, || len(&late_log) >= 6 && len(&live_log) >= 3);
    // Give a duplicate (history sent twice, or over two paths) the chance to show up.
    std::thread::sleep(Duration::from_millis(200));
    drop(spinning);
    let numbers = |log: &Log| -> Vec<usize> {
        snapshot(log)
            .iter()
            .map(|(text, intra)| {
                assert_eq!(*intra, transport == Transport::Intra, "from_intra_process");
                let seq = number_of(&StringMsg { data: text.clone() });
                assert!(*text == message(seq).data, "message {seq}: contents differ");
                seq
            })
            .collect()
    };
    let (late, live) = (numbers(&late_log), numbers(&live_log));
    assert!(
        complete,
        "over {}: late {late:?}, live {live:?}",
        transport.name()
    );
    assert_eq!(
        late,
        [2, 3, 4, 5, 6, 7],
        "over {}: the transient-local subscription",
        transport.name()
    );
    assert_eq!(
        live,
        [5, 6, 7],
        "over {}: the volatile subscription",
        transport.name()
    );
}

/// Instances: KEEP_LAST depth applies per instance of a keyed topic (DDS 1.4 §2.2.3.18). A
/// TRANSIENT_LOCAL, KEEP_LAST(1) publisher of `test_msgs/KeyedLong` writes keys 0 to 4 three
/// times before any subscription exists; a TRANSIENT_LOCAL, KEEP_LAST(1) subscription that
/// joins later gets the newest message of each key, once. Between processes such a
/// publisher's pairs stay on RTPS, whose writer keeps a history per instance (the same-host
/// rings keep one history for all), whichever same-host transport the context offers.
fn keyed_late_joiner_gets_the_newest_of_each_instance(transport: Transport) {
    let _case = shared_case();
    let topic = topic("keyed_late_joiner", transport);
    let pub_ctx = context(transport);
    let pub_node = pub_ctx.create_node("keyed_latcher").unwrap();
    let latched = QosProfile::keep_last(1).reliable().transient_local();
    let publisher = pub_node
        .create_publisher::<KeyedLong>(&topic, latched)
        .unwrap();
    for round in 0..3 {
        for key in 0..5 {
            let value = 10 * round + key;
            publisher.publish(KeyedLong { key, value }).unwrap();
        }
    }
    let sub_ctx = peer_of(&pub_ctx, transport);
    let sub_node = sub_ctx.create_node("keyed_late_listener").unwrap();
    let log: Arc<Mutex<Vec<(i32, i32)>>> = Arc::default();
    let _late = sub_node
        .create_subscription(&topic, latched, {
            let log = log.clone();
            move |m: KeyedLong| log.lock().unwrap().push((m.key, m.value))
        })
        .unwrap();
    let spinning = spin_in_background(&sub_ctx, &[&sub_node]);
    let route = match transport {
        Transport::Intra => Transport::Intra,
        _ => Transport::Udp,
    };
    await_route(route, &pub_ctx, &publisher, 1);
    let complete = wait_until(PATIENCE, || log.lock().unwrap().len() >= 5);
    // Give a duplicate or an older message the chance to show up.
    std::thread::sleep(Duration::from_millis(200));
    drop(spinning);
    let mut got = log.lock().unwrap().clone();
    assert!(complete, "over {}: {got:?}", transport.name());
    got.sort_unstable();
    assert_eq!(
        got,
        [(0, 20), (1, 21), (2, 22), (3, 23), (4, 24)],
        "over {}",
        transport.name()
    );
}

/// SAMPLE_LOST: a keep-last(1) subscription whose callback takes 10 ms, fed 300 messages of
/// 64 KB (19 MB, beyond the largest socket buffer a Unix socket gets) back to back by a
/// keep-last(1) publisher once the first has arrived. Whatever a transport drops on the way
/// (shm: the writer overwrites the reader's ring of 1; uds: its queue of 1 once the socket
/// buffer is full and the publishing thread gave up feeding it, after 5 ms; udp: a reliable
/// keep-last(1) writer declares overwritten samples gone; intra: nothing), every message from
/// the first on is either received by the subscription (queued; its own queue may then
/// replace it) or counted lost, and the newest one arrives.
fn losses_are_counted(transport: Transport) {
    let _case = shared_case();
    let topic = topic("lost", transport);
    let count = 300usize;
    let sub_ctx = context(transport);
    let pub_ctx = peer_of(&sub_ctx, transport);
    let sub_node = sub_ctx.create_node("slow").unwrap();
    let seen: Arc<Mutex<Vec<usize>>> = Arc::default();
    let sink = seen.clone();
    let subscription = sub_node
        .create_subscription(&topic, QosProfile::keep_last(1), move |m: StringMsg| {
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(number_of(&m));
            std::thread::sleep(Duration::from_millis(10));
        })
        .unwrap();
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = reported.clone();
    subscription.on_message_lost(move |status| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(status);
    });
    let _spinning = spin_in_background(&sub_ctx, &[&sub_node]);
    let pub_node = pub_ctx.create_node("talker").unwrap();
    let publisher = pub_node
        .create_publisher::<StringMsg>(&topic, QosProfile::keep_last(1))
        .unwrap();
    await_route(transport, &pub_ctx, &publisher, 1);
    let message = |seq: usize| numbered(seq, 64 << 10);
    let last_seen = || last_number(&seen);
    publisher.publish(message(0)).unwrap();
    assert!(
        wait_until(PATIENCE, || last_seen() == Some(0)),
        "{}: the first message did not arrive",
        transport.name()
    );
    for seq in 1..count {
        publisher.publish(message(seq)).unwrap();
    }
    assert!(
        wait_until(PATIENCE, || last_seen() == Some(count - 1)),
        "{}: the newest message did not arrive (last {:?})",
        transport.name(),
        last_seen()
    );
    let stats = subscription.stats();
    let lost = subscription.message_lost_status();
    println!(
        "{}: {} callbacks, stats {stats:?}, {lost:?}",
        transport.name(),
        seen.lock().unwrap_or_else(PoisonError::into_inner).len()
    );
    assert_eq!(
        stats.received + lost.total_count,
        count as u64,
        "{}: every message received or counted lost ({stats:?}, {lost:?})",
        transport.name()
    );
    // The callback took every change (DDS: change counts run from the last time the listener
    // was called or the status read): none is left for this read.
    assert_eq!(lost.total_count_change, 0, "{}: {lost:?}", transport.name());
    match transport {
        Transport::Intra => assert_eq!(lost.total_count, 0, "nothing is lost in a process"),
        Transport::Shm | Transport::Uds => {
            assert!(
                lost.total_count > 0,
                "{}: the burst must overflow",
                transport.name()
            )
        }
        // Whether the kernel's socket buffer overflows (and so the writer drops unacknowledged
        // samples) depends on the machine: only the accounting is checked.
        Transport::Udp => {}
    }
    let reported = reported.lock().unwrap_or_else(PoisonError::into_inner);
    assert_eq!(
        reported.last().map_or(0, |s| s.total_count),
        lost.total_count,
        "{}: the callback saw every loss",
        transport.name()
    );
    let mut total = 0;
    for status in reported.iter() {
        assert!(
            status.total_count_change > 0,
            "{}: {status:?}",
            transport.name()
        );
        total += status.total_count_change;
        assert_eq!(
            status.total_count,
            total,
            "{}: each callback's change counts from the one before",
            transport.name()
        );
    }
}

/// Publishes numbered messages of `size` bytes from `first` on until a publish returns
/// `PublishError::Timeout`, and returns its number; `None` when none did within PATIENCE (a
/// path that blocks without ever reporting it takes 100 ms per publish) or 100000 messages.
fn publish_until_timeout(
    transport: Transport,
    publisher: &Publisher<StringMsg>,
    first: usize,
    size: usize,
) -> Option<usize> {
    let start = Instant::now();
    for seq in (first..100_000).take_while(|_| start.elapsed() < PATIENCE) {
        match publisher.publish(numbered(seq, size)) {
            Ok(()) => {}
            Err(roslite::PublishError::Timeout) => return Some(seq),
            Err(e) => panic!("{}: publish {seq} failed: {e}", transport.name()),
        }
    }
    None
}

/// After publish `timed_out` timed out: once the subscription caught up with what was
/// published before it (publishing right away may find the publisher still held back, for
/// as long as the subscription takes to catch up), publishes the next number, and checks that
/// `seen` gets every message published without an error, in order, and not the one that
/// timed out.
fn assert_all_but_the_timed_out_arrive(
    transport: Transport,
    pair: &KeepAllPair,
    timed_out: usize,
    size: usize,
) {
    let (publisher, seen) = (&pair.publisher, &*pair.seen);
    let last_seen = || last_number(seen);
    let before = timed_out.checked_sub(1);
    assert!(
        wait_until(PATIENCE, || last_seen() == before),
        "{}: the messages before the timeout did not all arrive (last {:?}, {} seen)",
        transport.name(),
        last_seen(),
        seen.lock().unwrap_or_else(PoisonError::into_inner).len()
    );
    // Over RTPS the subscription acknowledges what it caught up with at the writer's next
    // HEARTBEAT (every 100 ms), and the writer's history empties: the next publication then
    // finds nothing unacknowledged. Whether it did once decided whether the number of the one
    // that timed out was skipped (and counted lost) or taken by the next publication.
    std::thread::sleep(Duration::from_millis(300));
    // The publisher learns of the room from the subscription's acknowledgements (over RTPS
    // at the next HEARTBEAT, every 100 ms, as long as max_blocking_time): a publish may still
    // time out once or twice. Each that does must not arrive (checked below).
    let after = timed_out + 1;
    let mut retries_timed_out = 0u32;
    let sent = (0..20).any(|_| match publisher.publish(numbered(after, size)) {
        Ok(()) => true,
        Err(roslite::PublishError::Timeout) => {
            retries_timed_out += 1;
            false
        }
        Err(e) => panic!("{}: publish {after} failed: {e}", transport.name()),
    });
    assert!(sent, "{}: the publisher stayed held back", transport.name());
    assert!(
        wait_until(PATIENCE, || last_seen() == Some(after)),
        "{}: the message after the timeout did not arrive (last {:?}, {} seen)",
        transport.name(),
        last_seen(),
        seen.lock().unwrap_or_else(PoisonError::into_inner).len()
    );
    // Each publish that timed out is a message the subscription never gets: it is told so
    // (DDS SAMPLE_LOST) by the time the message after them arrives, on every path (over RTPS
    // by a GAP for the number the publication kept).
    //
    // The publication number is the same on every path (what moving a node relies on,
    // docs/migration.md "Each message exactly once"): the messages before the timeout, the one
    // that timed out and each retry that did took one, so the message after them has the
    // next. Over RTPS the writer's numbers once ran one behind per timeout.
    let numbered_as = pair
        .numbered_as
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .last()
        .copied();
    assert_eq!(
        numbered_as,
        u64::try_from(timed_out + 2)
            .ok()
            .map(|n| n + u64::from(retries_timed_out)),
        "{}: the publication number of the message after the timeout",
        transport.name()
    );
    let lost = pair.subscription.message_lost_status().total_count;
    assert_eq!(
        lost,
        1 + u64::from(retries_timed_out),
        "{}: the messages that timed out are counted lost",
        transport.name()
    );
    let expected: Vec<usize> = (0..timed_out).chain([after]).collect();
    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    let first_difference = seen.iter().zip(&expected).position(|(a, b)| a != b);
    assert!(
        *seen == expected,
        "{}: all published without an error, in order, and not the one that timed out: {} \
         seen for {} expected, first difference at {first_difference:?} ({:?})",
        transport.name(),
        seen.len(),
        expected.len(),
        first_difference.map(|i| &seen[i.saturating_sub(2)..(i + 3).min(seen.len())])
    );
}

/// A reliable keep-all subscription on `topic` in a node named `node_name`, which records the
/// number of every message in `seen` and then runs `after_each` (on the thread that receives
/// for it), and a keep-all publisher in a peer context, routed to it.
struct KeepAllPair {
    // Field order is drop order.
    publisher: Publisher<StringMsg>,
    subscription: Subscription<StringMsg>,
    sub_node: Node,
    /// Each message's own number (its text), in arrival order.
    seen: Arc<Mutex<Vec<usize>>>,
    /// Each message's publication number (`MessageInfo::publication_sequence_number`).
    numbered_as: Arc<Mutex<Vec<u64>>>,
    sub_ctx: Context,
    _pub_ctx: Context,
}

impl KeepAllPair {
    fn start(
        transport: Transport,
        topic: &str,
        node_name: &str,
        after_each: impl Fn() + Send + 'static,
    ) -> Self {
        let sub_ctx = context(transport);
        let pub_ctx = peer_of(&sub_ctx, transport);
        let sub_node = sub_ctx.create_node(node_name).unwrap();
        let seen: Arc<Mutex<Vec<usize>>> = Arc::default();
        let numbered_as: Arc<Mutex<Vec<u64>>> = Arc::default();
        let (sink, numbers) = (seen.clone(), numbered_as.clone());
        let subscription = sub_node
            .create_subscription(
                topic,
                QosProfile::DEFAULT.keep_all(),
                move |m: StringMsg, info: &MessageInfo| {
                    numbers
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(info.publication_sequence_number);
                    sink.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(number_of(&m));
                    after_each();
                },
            )
            .unwrap();
        let publisher = pub_ctx
            .create_node("talker")
            .unwrap()
            .create_publisher::<StringMsg>(topic, QosProfile::DEFAULT.keep_all())
            .unwrap();
        await_route(transport, &pub_ctx, &publisher, 1);
        Self {
            publisher,
            subscription,
            sub_node,
            seen,
            numbered_as,
            sub_ctx,
            _pub_ctx: pub_ctx,
        }
    }
}

/// Reliable keep-all (`max_blocking_time`): a keep-all subscription whose first callback
/// blocks (so nothing more is taken) stops the publisher once the path's buffers are full:
/// shm, the reader's ring of 1000; uds, the writer's queue and the socket buffer; udp, the
/// RTPS writer's history of 5000 unacknowledged samples; intra, the subscription's queue of
/// `KEEP_ALL_MAX_SAMPLES` (its executor's thread is the one blocked). The publish that finds
/// no room returns `PublishError::Timeout` after waiting `max_blocking_time`; once the
/// callback is released, every message published without an error arrives, in order, and the
/// one that timed out does not.
fn keep_all_publish_times_out(transport: Transport) {
    let _case = shared_case();
    let topic = topic("keep_all_timeout", transport);
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let callback_gate = gate.clone();
    let pair = KeepAllPair::start(transport, &topic, "stuck", move || {
        let (open, opened) = &*callback_gate;
        let open = open.lock().unwrap_or_else(PoisonError::into_inner);
        // Bounded, so a failing test cannot hang on it.
        let _ = opened.wait_timeout_while(open, PATIENCE, |open| !*open);
    });
    let spinning = spin_in_background(&pair.sub_ctx, &[&pair.sub_node]);
    let (publisher, seen) = (&pair.publisher, &pair.seen);
    let message = |seq: usize| numbered(seq, 4000);
    publisher.publish(message(0)).unwrap();
    assert!(
        wait_until(PATIENCE, || !seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()),
        "{}: the first message did not arrive",
        transport.name()
    );
    // The callback now blocks; publish until a publish times out.
    let timed_out = publish_until_timeout(transport, publisher, 1, 4000);
    let (open, opened) = &*gate;
    *open.lock().unwrap_or_else(PoisonError::into_inner) = true;
    opened.notify_all();
    let timed_out = timed_out.unwrap_or_else(|| {
        panic!(
            "{}: no publish timed out on the stuck keep-all subscription",
            transport.name()
        )
    });
    println!("{}: publish {timed_out} timed out", transport.name());
    assert_all_but_the_timed_out_arrive(transport, &pair, timed_out, 4000);
    drop(spinning);
}

/// Reliable keep-all with nobody spinning the subscription's node: the paths hand it at most
/// `KEEP_ALL_MAX_SAMPLES` messages (nothing runs its callback), then hold the rest back (udp:
/// the RTPS reader is paused and stops acknowledging; uds: the link stops reading; shm: the
/// subscription's quota of held samples; intra: the publisher waits for room) until the
/// publisher's publish times out. Once the node is spun, every message published without an
/// error arrives, in order, and the one that timed out does not. Before the bound, a
/// subscription nobody spun took messages over udp, uds and intra without end.
fn keep_all_queue_is_bounded_while_nobody_spins(transport: Transport) {
    let _case = shared_case();
    let topic = topic("keep_all_bounded", transport);
    let pair = KeepAllPair::start(transport, &topic, "idle", || {});
    let (publisher, subscription) = (&pair.publisher, &pair.subscription);
    let timed_out = publish_until_timeout(transport, publisher, 0, 16).unwrap_or_else(|| {
        panic!(
            "{}: no publish timed out though nobody takes the subscription's messages ({} \
             queued)",
            transport.name(),
            subscription.stats().received
        )
    });
    // Whatever was still on its way has landed by now.
    std::thread::sleep(Duration::from_millis(500));
    let queued = subscription.stats().received;
    println!(
        "{}: publish {timed_out} timed out, {queued} queued",
        transport.name()
    );
    assert!(
        queued <= roslite::qos::KEEP_ALL_MAX_SAMPLES as u64,
        "{}: {queued} messages queued for a callback that never ran",
        transport.name()
    );
    let spinning = spin_in_background(&pair.sub_ctx, &[&pair.sub_node]);
    assert_all_but_the_timed_out_arrive(transport, &pair, timed_out, 16);
    drop(spinning);
}

/// A checksum of `data` (FNV-1a over 64-bit words), with its length.
fn checksum(data: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64 ^ data.len() as u64;
    let mut words = data.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        hash = (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3);
    }
    for &byte in words.remainder() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// `len` bytes of a sequence seeded by `seed` (xorshift, written a word at a time).
fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut chunks = data.chunks_exact_mut(8);
    for chunk in &mut chunks {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    for byte in chunks.into_remainder() {
        *byte = x as u8;
    }
    data
}

/// An 8 MiB sensor_msgs/Image, then a 55 MB sensor_msgs/PointCloud2, checksummed on both
/// sides. Over shared memory the point cloud's data must arrive as a view into the received
/// buffer (borrowed decode, no copy on the receive side).
fn large_samples(transport: Transport) {
    let _case = shared_case();
    let image_topic = topic("large_image", transport);
    let cloud_topic = topic("large_cloud", transport);
    let sub_ctx = context(transport);
    let pub_ctx = peer_of(&sub_ctx, transport);
    let sub_node = sub_ctx.create_node("viewer").unwrap();
    let images: Arc<Mutex<Vec<(Image, bool)>>> = Arc::default();
    let clouds: Arc<Mutex<Vec<(PointCloud2, bool)>>> = Arc::default();
    let qos = QosProfile::keep_last(2);
    let _image_sub = {
        let sink = images.clone();
        sub_node
            .create_subscription(&image_topic, qos, move |m: Image, info: &MessageInfo| {
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((m, info.from_intra_process));
            })
            .unwrap()
    };
    let _cloud_sub = {
        let sink = clouds.clone();
        sub_node
            .create_subscription(
                &cloud_topic,
                qos,
                move |m: PointCloud2, info: &MessageInfo| {
                    sink.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((m, info.from_intra_process));
                },
            )
            .unwrap()
    };
    let spinning = spin_in_background(&sub_ctx, &[&sub_node]);
    let pub_node = pub_ctx.create_node("camera").unwrap();
    let image_pub = pub_node
        .create_publisher::<Image>(&image_topic, qos)
        .unwrap();
    let cloud_pub = pub_node
        .create_publisher::<PointCloud2>(&cloud_topic, qos)
        .unwrap();
    await_route(transport, &pub_ctx, &image_pub, 1);
    await_route(transport, &pub_ctx, &cloud_pub, 1);

    let image_data = payload(1, 8 << 20);
    let image_sum = checksum(&image_data);
    image_pub
        .publish(Image {
            height: 1024,
            width: 2048,
            encoding: "rgba8".into(),
            step: 2048 * 4,
            data: image_data.into(),
            ..Default::default()
        })
        .unwrap();
    let arrived = wait_until(PATIENCE * 2, || {
        !images
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    });
    assert!(
        arrived,
        "{}: the 8 MiB image never arrived",
        transport.name()
    );
    {
        let received = std::mem::take(&mut *images.lock().unwrap_or_else(PoisonError::into_inner));
        assert_eq!(received.len(), 1, "{}: one image", transport.name());
        let (image, intra) = &received[0];
        assert_eq!(*intra, transport == Transport::Intra);
        assert_eq!((image.height, image.width, image.step), (1024, 2048, 8192));
        assert_eq!(
            image.data.len(),
            8 << 20,
            "{}: image size",
            transport.name()
        );
        assert_eq!(
            checksum(&image.data),
            image_sum,
            "{}: image contents",
            transport.name()
        );
    }

    let points = 55_000_000 / 16;
    let cloud_data = payload(2, points * 16);
    let cloud_sum = checksum(&cloud_data);
    let field = |name: &str, offset: u32| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    cloud_pub
        .publish(PointCloud2 {
            height: 1,
            width: points as u32,
            fields: vec![
                field("x", 0),
                field("y", 4),
                field("z", 8),
                field("intensity", 12),
            ],
            is_bigendian: false,
            point_step: 16,
            row_step: (points * 16) as u32,
            data: cloud_data.into(),
            is_dense: true,
            ..Default::default()
        })
        .unwrap();
    let arrived = wait_until(PATIENCE * 2, || {
        !clouds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    });
    assert!(
        arrived,
        "{}: the 55 MB point cloud never arrived",
        transport.name()
    );
    let received = std::mem::take(&mut *clouds.lock().unwrap_or_else(PoisonError::into_inner));
    assert_eq!(received.len(), 1, "{}: one point cloud", transport.name());
    let (cloud, intra) = &received[0];
    assert_eq!(*intra, transport == Transport::Intra);
    assert_eq!(cloud.width as usize, points);
    assert_eq!(cloud.fields.len(), 4);
    assert_eq!(cloud.fields[3].name, "intensity");
    assert_eq!(
        cloud.data.len(),
        points * 16,
        "{}: cloud size",
        transport.name()
    );
    assert_eq!(
        checksum(&cloud.data),
        cloud_sum,
        "{}: cloud contents",
        transport.name()
    );
    println!(
        "{}: 55 MB point cloud data received as a view into the transport's buffer: {}",
        transport.name(),
        cloud.data.is_view()
    );
    if transport == Transport::Shm {
        assert!(
            cloud.data.is_view(),
            "shm: the point cloud's data was copied out of shared memory"
        );
    }
    drop(received);
    drop(spinning);
}

/// Two publishers (in two contexts) and two subscriptions (in two other contexts), reliable
/// keep-all: each subscription gets all 300 messages of each publisher, each once, and each
/// publisher's in order (the two streams interleave in any way).
fn many_to_many(transport: Transport) {
    let _case = shared_case();
    let topic = topic("many", transport);
    let count = 300;
    let qos = QosProfile::DEFAULT.keep_all();
    let first = context(transport);
    let sub_ctxs = [first.clone(), peer_of(&first, transport)];
    let pub_ctxs = [peer_of(&first, transport), peer_of(&first, transport)];
    let mut spinning = Vec::new();
    let mut logs = Vec::new();
    let mut subscriptions = Vec::new();
    for (i, ctx) in sub_ctxs.iter().enumerate() {
        let node = ctx.create_node(&format!("listener{i}")).unwrap();
        let (subscription, log) = collecting(&node, &topic, qos);
        subscriptions.push(subscription);
        logs.push(log);
        spinning.push(spin_in_background(ctx, &[&node]));
    }
    let publishers: Vec<_> = pub_ctxs
        .iter()
        .enumerate()
        .map(|(k, ctx)| {
            ctx.create_node(&format!("talker{k}"))
                .unwrap()
                .create_publisher::<StringMsg>(&topic, qos)
                .unwrap()
        })
        .collect();
    for (ctx, publisher) in pub_ctxs.iter().zip(&publishers) {
        await_route(transport, ctx, publisher, 2);
    }
    for ctx in &sub_ctxs {
        assert_remote_publishers(transport, ctx, &format!("/{topic}"), 2);
    }
    std::thread::scope(|scope| {
        for (k, publisher) in publishers.iter().enumerate() {
            scope.spawn(move || {
                for seq in 0..count {
                    publisher.publish(StringMsg { data: text(k, seq) }).unwrap();
                }
            });
        }
    });
    for (i, log) in logs.iter().enumerate() {
        let complete = wait_until(PATIENCE, || len(log) >= 2 * count);
        assert!(
            complete,
            "subscription {i} over {}: {} of {} messages arrived",
            transport.name(),
            len(log),
            2 * count
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    drop(spinning);
    for (i, log) in logs.iter().enumerate() {
        let got = snapshot(log);
        for k in 0..2 {
            let seqs: Vec<usize> = got
                .iter()
                .map(|(m, _)| parse(m))
                .filter(|(p, _)| *p == k)
                .map(|(_, s)| s)
                .collect();
            assert_eq!(
                seqs,
                (0..count).collect::<Vec<_>>(),
                "subscription {i}, publisher {k} over {}: every message once, in order",
                transport.name()
            );
        }
        assert_eq!(got.len(), 2 * count);
        assert!(got
            .iter()
            .all(|(_, intra)| *intra == (transport == Transport::Intra)));
    }
}

// ---- peer death ----------------------------------------------------------------------------

/// Set in a child process of this binary: `<role>:<transport>:<domain>:<topic>:<round>`, role
/// `pub` or `sub`.
const CHILD_ENV: &str = "ROSLITE_CONFORMANCE_CHILD";
const KILL_ROUNDS: usize = 3;

/// Runs the child role this process was started for, if any (it never returns then).
fn run_child_if_requested() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.splitn(5, ':');
    let (role, transport, domain, topic, round) = (
        parts.next().expect("role").to_owned(),
        Transport::parse(parts.next().expect("transport")),
        parts.next().and_then(|d| d.parse().ok()).expect("domain"),
        parts.next().expect("topic").to_owned(),
        parts.next().expect("round").to_owned(),
    );
    let ctx = context_in(domain, transport);
    let node = ctx.create_node("doomed").unwrap();
    match role.as_str() {
        // A publisher of `"<round>:<n>"` every 2 ms until SIGKILLed.
        "pub" => {
            let publisher = node
                .create_publisher::<StringMsg>(&topic, QosProfile::keep_last(10))
                .unwrap();
            for n in 0u64.. {
                let _ = publisher.publish(StringMsg {
                    data: format!("{round}:{n}"),
                });
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        // A subscription that is never spun: its queue stays full, so over shared memory it
        // holds chunks of the publisher's pool when it is killed.
        "sub" => {
            let _subscription = node
                .create_subscription(&topic, QosProfile::keep_last(10), |_: StringMsg| {})
                .unwrap();
            loop {
                std::thread::park();
            }
        }
        // A server whose sum is off by `1000 * (round + 1)`, so a reply shows who sent it, and
        // which sits on a request with `b == -1` until it is SIGKILLed.
        "server" => {
            let offset = 1000 * (round.parse::<i64>().expect("round") + 1);
            let _service = node
                .create_service::<AddTwoInts, _>(&topic, move |r: AddTwoInts_Request| {
                    if r.b == -1 {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                    AddTwoInts_Response {
                        sum: r.a + r.b + offset,
                    }
                })
                .unwrap();
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        }
        other => panic!("unknown child role {other}"),
    }
    unreachable!()
}

fn spawn_child(role: &str, transport: Transport, topic: &str, round: usize, test: &str) -> Child {
    Command::new(std::env::current_exe().expect("current exe"))
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(
            CHILD_ENV,
            format!("{role}:{}:{}:{topic}:{round}", transport.name(), domain()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn a child process")
}

fn sigkill(child: &mut Child) {
    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");
}

/// Kills and reaps the child if a failed assertion left it running.
struct KilledOnDrop(Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn open_fds() -> Vec<String> {
    let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("read /proc/self/fd")
        .filter_map(|e| e.ok())
        .map(|e| {
            let target = std::fs::read_link(e.path())
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "?".into());
            format!("{} -> {target}", e.file_name().to_string_lossy())
        })
        .collect();
    fds.sort();
    fds
}

/// Entries of /dev/shm, without those of Fast DDS (other programs on this machine, e.g. the
/// interop suites, create them; roslite creates nothing there).
fn dev_shm_entries() -> BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    !(n.starts_with("fastdds_")
                        || n.starts_with("fastrtps_")
                        || n.starts_with("sem.fastdds")
                        || n.starts_with("sem.fastrtps"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Descriptors of this process after each kill round, and /dev/shm entries before the first.
/// A leak per killed peer shows as growth from the first round to the last.
struct Leaks {
    shm: BTreeSet<String>,
    /// With this case's own endpoints up, before any child.
    initial: usize,
    /// With a child peer alive (the most seen).
    during: usize,
    /// After each round's kill, once the count stopped changing.
    rounds: Vec<Vec<String>>,
}

impl Leaks {
    /// Waits until this process's descriptor count stops changing (300 ms apart, at most 3 s):
    /// descriptors of earlier cases' contexts (their same-host reader threads look at their
    /// stop flag every 200 ms) or of a killed peer's link are being closed.
    fn settle() {
        let mut last = open_fds().len();
        let _ = wait_until(Duration::from_secs(3), || {
            std::thread::sleep(Duration::from_millis(300));
            let now = open_fds().len();
            std::mem::replace(&mut last, now) == now
        });
    }

    fn start() -> Self {
        Self {
            shm: dev_shm_entries(),
            initial: open_fds().len(),
            during: 0,
            rounds: Vec::new(),
        }
    }

    fn peer_alive(&mut self) {
        self.during = self.during.max(open_fds().len());
    }

    fn round_done(&mut self) {
        Self::settle();
        self.rounds.push(open_fds());
    }

    /// No more descriptors after the last round than after the first (waiting for a killed
    /// peer's to be closed), and no new /dev/shm entry.
    fn check(&self, transport: Transport) {
        let first = &self.rounds[0];
        let settled = wait_until(PATIENCE, || open_fds().len() <= first.len());
        let now = open_fds();
        println!(
            "{}: descriptors: {} before the first child, {} at most with a child, {:?} after \
             each kill round, {} at the end",
            transport.name(),
            self.initial,
            self.during,
            self.rounds.iter().map(Vec::len).collect::<Vec<_>>(),
            now.len()
        );
        assert!(
            settled,
            "{}: descriptors grew from {} after the first kill to {} after {} kills; new: {:?}",
            transport.name(),
            first.len(),
            now.len(),
            self.rounds.len(),
            now.iter()
                .filter(|f| !first.contains(f))
                .collect::<Vec<_>>()
        );
        let shm = dev_shm_entries();
        assert_eq!(
            shm.difference(&self.shm).collect::<Vec<_>>(),
            Vec::<&String>::new(),
            "{}: entries appeared in /dev/shm",
            transport.name()
        );
    }
}

/// Messages `"<round>:<n>"` of `round` in `log`, as numbers.
fn of_round(log: &Log, round: &str) -> Vec<u64> {
    let prefix = format!("{round}:");
    snapshot(log)
        .iter()
        .filter_map(|(m, _)| m.strip_prefix(&prefix).and_then(|n| n.parse().ok()))
        .collect()
}

/// The start of a peer-death case: in a child process, its role (which never returns); else
/// this case alone (the lock it returns) once earlier cases' descriptors have settled.
fn peer_death_case(transport: Transport) -> RwLockWriteGuard<'static, ()> {
    run_child_if_requested();
    assert_ne!(
        transport,
        Transport::Intra,
        "peer death needs two processes"
    );
    let case = exclusive_case();
    Leaks::settle();
    case
}

/// A subscriber survives publishers in other processes (this binary, re-executed) SIGKILLed
/// mid-stream, round after round. Meanwhile a publisher in another context of this process
/// streams to it over the same transport and must keep arriving after every kill; each new
/// child publisher reaches it over `transport`, and after the last kill a new publisher does
/// too. No descriptor of this process and no /dev/shm entry is left behind.
fn peer_death_publisher_killed(transport: Transport, test: &str) {
    let _case = peer_death_case(transport);
    let topic = topic("publisher_killed", transport);
    let full = format!("/{topic}");
    let ctx = context(transport);
    let node = ctx.create_node("survivor").unwrap();
    let (subscription, log) = collecting(&node, &topic, QosProfile::keep_last(100));
    let spinning = spin_in_background(&ctx, &[&node]);
    let net = ctx.graph();
    // The steady publisher: another context of this process, over the same transport.
    let steady_ctx = context(transport);
    let steady = steady_ctx
        .create_node("steady")
        .unwrap()
        .create_publisher::<StringMsg>(&topic, QosProfile::keep_last(100))
        .unwrap();
    await_route(transport, &steady_ctx, &steady, 1);
    let stop = Arc::new(AtomicBool::new(false));
    let streaming = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                steady
                    .publish(StringMsg {
                        data: format!("steady:{n}"),
                    })
                    .unwrap();
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let mut leaks = Leaks::start();
    let mut resumed_after = Vec::new();
    for round in 0..KILL_ROUNDS {
        let mut child = KilledOnDrop(spawn_child("pub", transport, &topic, round, test));
        let round_name = round.to_string();
        let streaming = wait_until(PATIENCE, || of_round(&log, &round_name).len() >= 20);
        assert!(
            streaming,
            "{} round {round}: {} messages from the child publisher",
            transport.name(),
            of_round(&log, &round_name).len()
        );
        // The child's messages come over the transport under test.
        let remote: Vec<&'static str> = net
            .endpoints()
            .into_iter()
            .filter(|e| !e.local && e.topic == full && e.kind == GraphEndpointKind::Publisher)
            .map(|e| e.transport)
            .collect();
        assert!(
            remote.len() >= 2 && remote.iter().all(|t| *t == transport.name()),
            "{} round {round}: remote publishers' transports {remote:?}",
            transport.name()
        );
        leaks.peer_alive();
        // SIGKILL mid-stream (the child publishes every 2 ms).
        let steady_before = of_round(&log, "steady").len();
        sigkill(&mut child.0);
        let killed = Instant::now();
        let resumed = wait_until(PATIENCE, || of_round(&log, "steady").len() > steady_before);
        resumed_after.push(killed.elapsed());
        assert!(
            resumed,
            "{} round {round}: the survivor stopped receiving from the steady publisher",
            transport.name()
        );
        assert!(
            wait_until(PATIENCE, || of_round(&log, "steady").len()
                >= steady_before + 20),
            "{} round {round}: the steady stream did not continue",
            transport.name()
        );
        let seqs = of_round(&log, &round_name);
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "{} round {round}: the child's messages out of order or duplicated",
            transport.name()
        );
        leaks.round_done();
    }
    println!(
        "{}: first message from the steady publisher after each kill (polled every 5 ms): \
         {resumed_after:?}",
        transport.name()
    );
    stop.store(true, Ordering::Relaxed);
    streaming.join().expect("steady publisher thread");
    let steady_seqs = of_round(&log, "steady");
    assert!(
        steady_seqs.windows(2).all(|w| w[0] < w[1]),
        "{}: the steady stream out of order or duplicated",
        transport.name()
    );
    // A new publisher (another context of this process) reaches the survivor after the kills.
    let replacement_ctx = context(transport);
    let replacement = replacement_ctx
        .create_node("replacement")
        .unwrap()
        .create_publisher::<StringMsg>(&topic, QosProfile::keep_last(10))
        .unwrap();
    await_route(transport, &replacement_ctx, &replacement, 1);
    let before = len(&log);
    let continued = wait_until(PATIENCE, || {
        replacement
            .publish(StringMsg {
                data: "after".into(),
            })
            .unwrap();
        snapshot(&log)[before..].iter().any(|(m, _)| m == "after")
    });
    assert!(
        continued,
        "{}: the survivor gets nothing from a new publisher after the kills",
        transport.name()
    );
    assert!(snapshot(&log).iter().all(|(_, intra)| !intra));
    assert_eq!(subscription.stats().malformed, 0);
    drop(replacement);
    drop(replacement_ctx);
    leaks.check(transport);
    drop(spinning);
}

/// A client survives servers in other processes SIGKILLed, one of them while it answers: each
/// round the child server answers calls over the transport under test (its replies carry its
/// round), is killed with a call still waiting in its callback, and that call ends in a
/// timeout. Over shm/uds the client then sees the server gone (its links closed); over udp it
/// would only after the killed participant's lease (20 s), which this case does not wait for.
/// After the kills a new server answers at once, and no descriptor or /dev/shm entry is left.
fn peer_death_server_killed(transport: Transport, test: &str) {
    let _case = peer_death_case(transport);
    let service = topic("server_killed", transport);
    let name = format!("/{service}");
    let ctx = context(transport);
    let node = ctx.create_node("caller").unwrap();
    let client = node.create_client::<AddTwoInts>(&service).unwrap();
    let net = ctx.graph();
    let mut leaks = Leaks::start();
    for round in 0..KILL_ROUNDS {
        let mut child = KilledOnDrop(spawn_child("server", transport, &service, round, test));
        // Over udp the servers killed before are still matched (until their leases expire), so
        // readiness proves nothing there: wait for the child's first answer.
        let offset = 1000 * (round as i64 + 1);
        let answered = wait_until(PATIENCE, || {
            client
                .call(
                    AddTwoInts_Request { a: 0, b: 0 },
                    Duration::from_millis(500),
                )
                .is_ok_and(|r| r.sum == offset)
        });
        assert!(
            answered,
            "{} round {round}: the child server never answered",
            transport.name()
        );
        // Discovery keeps the killed servers' endpoints until their leases expire: all of
        // them, and the child's, are on the transport under test.
        let transports = service_transports(&ctx, &name);
        assert!(
            transports.len() >= 2 && transports.iter().all(|t| *t == transport.name()),
            "round {round}: the servers' request readers and reply writers: {transports:?}"
        );
        let offset = 1000 * (round as i64 + 1);
        for i in 0..10 {
            let reply = client.call(AddTwoInts_Request { a: i, b: 1 }, PATIENCE);
            assert_eq!(
                reply.expect("a call to the child server").sum,
                i + 1 + offset,
                "{} round {round}",
                transport.name()
            );
        }
        leaks.peer_alive();
        // A call the server never answers: it sits in the callback when the server dies.
        let stuck = client
            .call_async(AddTwoInts_Request { a: 0, b: -1 })
            .expect("send a request");
        std::thread::sleep(Duration::from_millis(100));
        sigkill(&mut child.0);
        let timed_out = client.call(
            AddTwoInts_Request { a: 1, b: 1 },
            Duration::from_millis(500),
        );
        assert!(
            matches!(timed_out, Err(roslite::CallError::Timeout { .. })),
            "{} round {round}: a call to the killed server gave {timed_out:?}",
            transport.name()
        );
        drop(stuck);
        if transport != Transport::Udp {
            assert!(
                wait_until(PATIENCE, || !client.service_is_ready()),
                "{} round {round}: the client still sees the killed server",
                transport.name()
            );
            assert_eq!(net.service_servers_by_path(&name), (0, 0));
        }
        leaks.round_done();
    }
    // A new server (another context of this process) answers after the kills.
    let server_ctx = context(transport);
    let server_node = server_ctx.create_node("replacement").unwrap();
    let _server = server_node
        .create_service::<AddTwoInts, _>(&service, |r: AddTwoInts_Request| AddTwoInts_Response {
            sum: r.a + r.b,
        })
        .unwrap();
    let spinning = spin_in_background(&server_ctx, &[&server_node]);
    // Over udp the killed servers are still matched until their leases expire, so the client is
    // ready at once and its calls also go to them: retry until the new one answered.
    let answered = wait_until(PATIENCE, || {
        client
            .call(
                AddTwoInts_Request { a: 2, b: 3 },
                Duration::from_millis(500),
            )
            .is_ok_and(|r| r.sum == 5)
    });
    assert!(
        answered,
        "{}: no answer from a new server after the kills",
        transport.name()
    );
    assert_eq!(client.stats().malformed_replies, 0);
    drop(spinning);
    drop((_server, server_node, server_ctx));
    leaks.check(transport);
}

/// A publisher survives subscribers in other processes SIGKILLed while they hold samples (the
/// child never spins, so its keep-last(10) queue stays full): the publisher never fails and a
/// reliable keep-all subscription in another context of this process gets every message, in
/// order, across all the kills. Over shm/uds the killed reader is dropped from the publisher's
/// connected readers; over udp it stays matched until its participant's lease (20 s) expires,
/// which this case does not wait for (the surviving subscription must get everything anyway).
fn peer_death_subscriber_killed(transport: Transport, test: &str) {
    let _case = peer_death_case(transport);
    let topic = topic("subscriber_killed", transport);
    let qos = QosProfile::DEFAULT.keep_all();
    let sub_ctx = context(transport);
    let sub_node = sub_ctx.create_node("survivor").unwrap();
    let (subscription, log) = collecting(&sub_node, &topic, qos);
    let spinning = spin_in_background(&sub_ctx, &[&sub_node]);
    let pub_ctx = context(transport);
    let publisher = pub_ctx
        .create_node("talker")
        .unwrap()
        .create_publisher::<StringMsg>(&topic, qos)
        .unwrap();
    await_route(transport, &pub_ctx, &publisher, 1);
    let net = pub_ctx.graph();
    let mut leaks = Leaks::start();
    let mut n = 0u64;
    let mut publish = |count: u64| {
        for _ in 0..count {
            publisher
                .publish(StringMsg {
                    data: format!("0:{n}"),
                })
                .expect("publish");
            n += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    for round in 0..KILL_ROUNDS {
        let (rtps, local) = net.remote_subscriptions_by_path(publisher.topic_name());
        let with_child = {
            let (r, l) = transport.path(1);
            (rtps + r, local + l)
        };
        let mut child = KilledOnDrop(spawn_child("sub", transport, &topic, round, test));
        let mut matched = false;
        for _ in 0..(PATIENCE.as_millis() / 20) {
            publish(10);
            if net.remote_subscriptions_by_path(publisher.topic_name()) == with_child {
                matched = true;
                break;
            }
        }
        assert!(
            matched,
            "{} round {round}: the child subscription never connected: {:?}, expected {with_child:?}",
            transport.name(),
            net.remote_subscriptions_by_path(publisher.topic_name())
        );
        // Stream to both, so the child holds samples, then SIGKILL it mid-stream.
        publish(50);
        leaks.peer_alive();
        sigkill(&mut child.0);
        publish(50);
        if transport != Transport::Udp {
            let mut dropped = false;
            for _ in 0..(PATIENCE.as_millis() / 20) {
                publish(10);
                if net.remote_subscriptions_by_path(publisher.topic_name()) == (rtps, local) {
                    dropped = true;
                    break;
                }
            }
            assert!(
                dropped,
                "{} round {round}: the killed subscription stays connected: {:?}",
                transport.name(),
                net.remote_subscriptions_by_path(publisher.topic_name())
            );
        }
        leaks.round_done();
    }
    publish(50);
    let total = n as usize;
    let complete = wait_until(PATIENCE, || len(&log) >= total);
    assert!(
        complete,
        "{}: the surviving subscription got {} of {total} messages",
        transport.name(),
        len(&log)
    );
    let seqs = of_round(&log, "0");
    assert_eq!(
        seqs,
        (0..n).collect::<Vec<_>>(),
        "{}: the surviving subscription gets every message once, in order",
        transport.name()
    );
    assert_eq!(subscription.stats().malformed, 0);
    leaks.check(transport);
    drop(spinning);
}

// ---- services ------------------------------------------------------------------------------

/// The graph transport of the remote endpoints of service `name` seen from `ctx`, sorted.
fn service_transports(ctx: &Context, name: &str) -> Vec<&'static str> {
    let mut transports: Vec<&'static str> = ctx
        .graph()
        .endpoints()
        .into_iter()
        .filter(|e| !e.local && e.topic == name)
        .map(|e| e.transport)
        .collect();
    transports.sort_unstable();
    transports
}

/// A 4 MiB map with a pattern a misplaced byte would break.
fn map_of(seed: i64) -> OccupancyGrid {
    let data: Vec<i8> = (0..4usize << 20)
        .map(|i| (i as i64).wrapping_mul(31).wrapping_add(seed) as i8)
        .collect();
    OccupancyGrid {
        data: data.into(),
        ..OccupancyGrid::default()
    }
}

/// Services on every transport: two clients of one server each get their own replies, also
/// with calls from several threads at once and a 4 MiB reply; the calls take the transport's
/// path (servers reached by path, and the graph's transport of the server's two endpoints);
/// and once the server is gone, the clients see that it is.
fn service_calls(transport: Transport) {
    let _case = shared_case();
    let service = topic("service", transport);
    let map_service = topic("map_service", transport);
    let server_ctx = context(transport);
    let server_node = server_ctx.create_node("conf_server").expect("node");
    let adder = server_node
        .create_service::<AddTwoInts, _>(&service, |r: AddTwoInts_Request| AddTwoInts_Response {
            sum: r.a + r.b,
        })
        .expect("service");
    let map_server = server_node
        .create_service::<GetMap, _>(&map_service, |_: GetMap_Request| GetMap_Response {
            map: map_of(7),
        })
        .expect("service");
    let spinning = spin_in_background(&server_ctx, &[&server_node]);

    let client_ctx = peer_of(&server_ctx, transport);
    let client_node = client_ctx.create_node("conf_client").expect("node");
    let first = Arc::new(
        client_node
            .create_client::<AddTwoInts>(&service)
            .expect("client"),
    );
    let second = client_node
        .create_client::<AddTwoInts>(&service)
        .expect("client");
    let map_client = client_node
        .create_client::<GetMap>(&map_service)
        .expect("client");
    for client_ready in [
        first.wait_for_service(PATIENCE),
        second.wait_for_service(PATIENCE),
        map_client.wait_for_service(PATIENCE),
    ] {
        assert!(client_ready, "{transport:?}: a client never saw the server");
    }

    for i in 0..20 {
        let a = first
            .call(AddTwoInts_Request { a: i, b: 1 }, PATIENCE)
            .expect("call");
        let b = second
            .call(AddTwoInts_Request { a: i, b: 1000 }, PATIENCE)
            .expect("call");
        assert_eq!((a.sum, b.sum), (i + 1, i + 1000), "{transport:?}");
    }
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let client = first.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    let r = client.call(AddTwoInts_Request { a: t * 100, b: i }, PATIENCE);
                    assert_eq!(r.expect("call").sum, t * 100 + i);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a calling thread failed");
    }
    let map = map_client
        .call(GetMap_Request {}, PATIENCE)
        .expect("map call");
    assert!(
        map.map.data[..] == map_of(7).data[..],
        "{transport:?}: the map arrived damaged"
    );
    assert_eq!(first.stats().replies_received, 60);
    assert_eq!(second.stats().replies_received, 20);
    assert_eq!(
        first.stats().unmatched_replies + second.stats().unmatched_replies,
        0
    );
    assert_eq!(adder.stats().replies_sent, 80);
    assert_eq!(map_server.stats().replies_sent, 1);

    let name = format!("/{service}");
    let net = client_ctx.graph();
    match transport {
        // A client calls a server of its own context directly: no network path at all.
        Transport::Intra => assert_eq!(net.service_servers_by_path(&name), (0, 0)),
        _ => {
            // Every reply reaches both clients' readers; each drops the other's.
            let dropped = net.service_stats().replies_for_other_clients;
            assert!(
                dropped >= 60,
                "{transport:?}: {dropped} replies for other clients"
            );
            assert_eq!(net.service_servers_by_path(&name), transport.path(2));
            assert_eq!(
                service_transports(&client_ctx, &name),
                [transport.name(); 2],
                "the server's request reader and reply writer"
            );
        }
    }

    if transport != Transport::Intra {
        drop(spinning);
        drop((adder, map_server, server_node, server_ctx));
        assert!(
            wait_until(PATIENCE, || !first.service_is_ready()
                && !second.service_is_ready()),
            "{transport:?}: the clients still see a server that is gone"
        );
        let gone = first.call(
            AddTwoInts_Request { a: 1, b: 2 },
            Duration::from_millis(200),
        );
        assert!(
            matches!(
                gone,
                Err(roslite::CallError::Timeout {
                    server_available: false,
                    ..
                })
            ),
            "{transport:?}: {gone:?}"
        );
    }
}

// ---- instantiation -------------------------------------------------------------------------

/// `suite!(module, transport, peer-death cases...; cases between processes...)`.
macro_rules! suite {
    ($module:ident, $transport:expr $(, $peer_death:ident)* $(; $keep_all_case:ident)*) => {
        mod $module {
            use super::*;

            #[test]
            fn delivery_and_ordering() {
                super::delivery_and_ordering($transport);
            }

            #[test]
            fn keep_last_slow_subscriber() {
                super::keep_last_slow_subscriber($transport);
            }

            #[test]
            fn losses_are_counted() {
                super::losses_are_counted($transport);
            }

            #[test]
            fn large_samples() {
                super::large_samples($transport);
            }

            #[test]
            fn many_to_many() {
                super::many_to_many($transport);
            }

            #[test]
            fn late_joiner_gets_transient_local_history() {
                super::late_joiner_gets_transient_local_history($transport);
            }

            #[test]
            fn keyed_late_joiner_gets_the_newest_of_each_instance() {
                super::keyed_late_joiner_gets_the_newest_of_each_instance($transport);
            }

            #[test]
            fn service_calls() {
                super::service_calls($transport);
            }

            $(
                #[test]
                fn $peer_death() {
                    super::$peer_death(
                        $transport,
                        concat!(stringify!($module), "::", stringify!($peer_death)),
                    );
                }
            )*

            $(
                #[test]
                fn $keep_all_case() {
                    super::$keep_all_case($transport);
                }
            )*
        }
    };
}

// Peer death is not applicable within one process: `intra` has no peer that could die.
suite!(
    intra,
    Transport::Intra;
    keep_all_publish_times_out;
    keep_all_queue_is_bounded_while_nobody_spins
);
suite!(
    shm,
    Transport::Shm,
    peer_death_publisher_killed,
    peer_death_subscriber_killed,
    peer_death_server_killed;
    keep_all_publish_times_out;
    keep_all_queue_is_bounded_while_nobody_spins
);
suite!(
    uds,
    Transport::Uds,
    peer_death_publisher_killed,
    peer_death_subscriber_killed,
    peer_death_server_killed;
    keep_all_publish_times_out;
    keep_all_queue_is_bounded_while_nobody_spins
);
suite!(
    udp,
    Transport::Udp,
    peer_death_publisher_killed,
    peer_death_subscriber_killed,
    peer_death_server_killed;
    keep_all_publish_times_out;
    keep_all_queue_is_bounded_while_nobody_spins
);
