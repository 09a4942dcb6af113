//! Moving a running guest between hosts (docs/migration.md), in one process: host A runs the
//! deterministic replier (tests/guests/deterministic_reply.c, whose every reply depends on all
//! it heard before: integers, doubles through libm, text on its heap); a native node sends it
//! numbers and collects the replies; halfway, A freezes the guest between callbacks and takes
//! its snapshot, host B resumes it from the snapshot, A ends its copy, and the rest of the
//! numbers go to B. The replies must be exactly those of a host that ran the guest throughout:
//! the state crossed over whole. Both directions between the engines, and a snapshot refused
//! for the reasons a host must refuse one.
//!
//! The three contexts (A, B, the native node) talk RTPS over UDP inside a network namespace of
//! the test's own.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite_transport::netns::{stop_gracefully, NetNs, STOP_GRACE};
use roslite_wasm::host::MigrateError;
use roslite_wasm::{EngineKind, GuestSpec, Host, HostOptions};

mod common;

fn replier() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        common::c_guest(
            "crates/roslite-wasm/tests/guests/deterministic_reply.c",
            "deterministic_reply.wasm",
        )
    })
}

fn networked(ns: &NetNs) -> roslite::Context {
    common::networked(ns, 43)
}

/// A host on `engine` running `specs` (the replier with its volatile topics).
fn replier_host(ns: &NetNs, engine: EngineKind, specs: &[GuestSpec]) -> Host {
    Host::start(
        specs,
        &HostOptions {
            engine,
            context: Some(networked(ns)),
            node_args: vec!["volatile".into()],
            ..Default::default()
        },
    )
    .unwrap()
}

fn host(ns: &NetNs, engine: EngineKind) -> Host {
    replier_host(ns, engine, &[])
}

/// The native side, in this process.
fn sender(ns: &NetNs) -> common::Sender {
    common::Sender::new(networked(ns), 100, Duration::from_secs(20))
}

fn spec() -> GuestSpec {
    GuestSpec {
        path: replier().to_owned(),
    }
}

/// The replier compiled ahead of time for this machine, as `roslite wasm compile` does.
fn precompiled() -> GuestSpec {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let path = BUILT.get_or_init(|| {
        let wasm = std::fs::read(replier()).unwrap();
        let code = roslite_wasm::engine::wasmtime_engine::precompile(&wasm, None).unwrap();
        let path = replier().with_extension("cwasm");
        std::fs::write(&path, code).unwrap();
        path
    });
    GuestSpec { path: path.clone() }
}

/// The number a reply answers ("... | n=N fnv=...").
fn answered(reply: &str) -> u32 {
    let at = reply.rfind(" | n=").expect("a reply") + 5;
    reply[at..].split(' ').next().unwrap().parse().unwrap()
}

/// The replies of a guest that ran on one host throughout.
fn uninterrupted(engine: EngineKind) -> Vec<String> {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let sender = sender(&ns);
    let host = replier_host(&ns, engine, &[spec()]);
    sender.await_matched(1);
    let replies = sender.exchange(1..=10);
    host.shutdown();
    replies
}

fn migrate(from: EngineKind, to: EngineKind) {
    migrate_module(from, spec(), to, spec());
}

/// Moves the replier from a host running `from_spec` on `from` to one running `to_spec` on `to`.
fn migrate_module(from: EngineKind, from_spec: GuestSpec, to: EngineKind, to_spec: GuestSpec) {
    let expected = uninterrupted(from);
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let sender = sender(&ns);
    let a = replier_host(&ns, from, &[from_spec]);
    let b = host(&ns, to);
    sender.await_matched(1);
    let mut replies = sender.exchange(1..=5);

    let snapshot = a.freeze_and_snapshot("deterministic_reply").unwrap();
    b.start_restored(&to_spec, &snapshot).unwrap();
    sender.await_matched(2);
    a.end_migrated("deterministic_reply").unwrap();
    let ended = a.wait();
    assert_eq!(ended.len(), 1);
    assert!(ended[0].outcome.is_ok(), "{:?}", ended[0].outcome);
    sender.await_matched(1);
    replies.extend(sender.exchange(6..=10));
    assert_eq!(replies, expected, "the replies after the move differ");
    assert_eq!(b.statistics()[0].name, "deterministic_reply");
    b.shutdown();
    let ended = b.wait();
    assert!(ended[0].outcome.is_ok(), "{:?}", ended[0].outcome);
}

/// The guest moves while numbers keep coming (one every 3 ms, none waiting for its reply):
/// the target is prepared first (its endpoints match and buffer), then the source freezes the
/// guest and the target resumes it. Every number is answered exactly once, and the answers are
/// those of a guest that never moved: none was lost in the move, none given twice.
fn migrate_while_messages_flow(from: EngineKind, to: EngineKind) {
    const COUNT: u32 = 60;
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let sender = sender(&ns);
    let a = replier_host(&ns, from, &[spec()]);
    let b = host(&ns, to);
    sender.await_matched(1);
    let expected = sender.exchange(1..=COUNT);
    // The same guest again, from its start, on a fresh pair of hosts' worth of state: the
    // reference above came from `a`'s first copy, so this run uses a second guest on `a`.
    a.shutdown();
    a.wait();
    drop(a);
    let a = replier_host(&ns, from, &[spec()]);
    sender.await_matched(1);

    let publisher = &sender.publisher;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for n in 1..=COUNT {
                publisher
                    .publish(StringMsg {
                        data: format!("number {n}: hello ünïcode"),
                    })
                    .unwrap();
                std::thread::sleep(Duration::from_millis(3));
            }
        });
        std::thread::sleep(Duration::from_millis(40));
        let journal = a.journal_of("deterministic_reply").unwrap();
        let prepared = b.prepare_restore(&spec(), &journal).unwrap();
        sender.await_matched(2);
        let snapshot = a.freeze_and_snapshot("deterministic_reply").unwrap();
        b.complete_restore(prepared, &snapshot).unwrap();
        a.end_migrated("deterministic_reply").unwrap();
    });

    let mut replies: Vec<String> = (0..COUNT)
        .map(|i| {
            sender
                .replies
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("only {i} of {COUNT} replies came"))
        })
        .collect();
    assert!(
        sender
            .replies
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "a number was answered twice"
    );
    // The two hosts' replies may cross on the way: in the order of what they answer.
    replies.sort_by_key(|r| answered(r));
    assert_eq!(
        replies, expected,
        "the replies differ from a guest that never moved"
    );
    assert_eq!(a.wait().len(), 1);
    b.shutdown();
}

#[test]
fn nothing_is_lost_or_given_twice_while_moving_wasmtime_to_wasmi() {
    migrate_while_messages_flow(EngineKind::Wasmtime, EngineKind::Wasmi);
}

#[test]
fn nothing_is_lost_or_given_twice_while_moving_wasmi_to_wasmtime() {
    migrate_while_messages_flow(EngineKind::Wasmi, EngineKind::Wasmtime);
}

/// A timer-driven guest (the C talker: "Hello from Wasm: N" every 100 ms) moves and its
/// timer goes on on the target from the count it had: the numbers heard are consecutive, none
/// missing and none twice.
#[test]
fn a_talker_moves_and_its_timer_goes_on_counting() {
    let talker = common::c_guest("examples/wasm/c/talker.c", "talker_moving.wasm");
    let spec = GuestSpec { path: talker };
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let options = |engine| HostOptions {
        engine,
        context: Some(networked(&ns)),
        ..Default::default()
    };
    let a = Host::start(std::slice::from_ref(&spec), &options(EngineKind::Wasmtime)).unwrap();
    let b = Host::start(&[], &options(EngineKind::Wasmi)).unwrap();
    let context = networked(&ns);
    let node = context.create_node("counter").unwrap();
    let (tx, heard) = mpsc::channel::<u32>();
    let _subscription = node
        .create_subscription(
            "chatter",
            roslite::QosProfile::keep_last(100).reliable(),
            move |m: StringMsg| {
                let n = m.data.rsplit(' ').next().unwrap().parse().unwrap();
                let _ = tx.send(n);
            },
        )
        .unwrap();
    let executor = roslite::Executor::new(&context);
    executor.add_node(&node);
    let spinner = std::thread::spawn(move || executor.spin());
    let next = |what: &str| {
        heard
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no message {what}"))
    };
    let mut numbers = vec![next("from the first host")];
    while numbers.len() < 4 {
        numbers.push(next("from the first host"));
    }
    let journal = a.journal_of("talker_moving").unwrap();
    let prepared = b.prepare_restore(&spec, &journal).unwrap();
    let snapshot = a.freeze_and_snapshot("talker_moving").unwrap();
    b.complete_restore(prepared, &snapshot).unwrap();
    a.end_migrated("talker_moving").unwrap();
    a.wait();
    for _ in 0..4 {
        numbers.push(next("from the second host"));
    }
    numbers.sort_unstable();
    let first = numbers[0];
    assert_eq!(
        numbers,
        (first..first + numbers.len() as u32).collect::<Vec<_>>(),
        "the count went on without a gap or a repeat"
    );
    b.shutdown();
    context.shutdown();
    spinner.join().unwrap();
}

#[test]
fn a_guest_moves_from_wasmtime_to_wasmi_with_its_state() {
    migrate(EngineKind::Wasmtime, EngineKind::Wasmi);
}

#[test]
fn a_guest_moves_from_wasmi_to_wasmtime_with_its_state() {
    migrate(EngineKind::Wasmi, EngineKind::Wasmtime);
}

#[test]
fn a_guest_moves_between_two_wasmtime_hosts_with_its_state() {
    migrate(EngineKind::Wasmtime, EngineKind::Wasmtime);
}

/// Once a host says a guest was restored (`start_restored`, `complete_restore` returned), the
/// host lists it and can move it on at once: `roslite migrate` answers a move when the target
/// restored the node, and the next move, asked of the target a moment later, must find it
/// there. (The guest's thread reported the restore before it made the guest reachable, and a
/// clean-clone run failed "move 71 from a to b: no node deterministic_reply runs on host a".)
/// A thread keeps the other core busy, as a loaded machine does, so that the guest's thread
/// is often not running when the report wakes the host's.
#[test]
fn a_restored_guest_is_listed_by_its_new_host_as_soon_as_the_restore_returns() {
    const MOVES: usize = 40;
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let hosts = [
        replier_host(&ns, EngineKind::Wasmtime, &[spec()]),
        host(&ns, EngineKind::Wasmi),
    ];
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let _stop = common::StopOnDrop(&done);
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        for i in 0..MOVES {
            let (from, to) = (&hosts[i % 2], &hosts[(i + 1) % 2]);
            let journal = from.journal_of("deterministic_reply").unwrap();
            let prepared = to.prepare_restore(&spec(), &journal).unwrap();
            let snapshot = from.freeze_and_snapshot("deterministic_reply").unwrap();
            to.complete_restore(prepared, &snapshot).unwrap();
            assert_eq!(
                to.find_guest("deterministic_reply").as_deref(),
                Some("deterministic_reply"),
                "move {}: the target's restore returned, but the target does not list the guest",
                i + 1
            );
            from.end_migrated("deterministic_reply").unwrap();
            assert_eq!(from.wait().len(), 1);
            assert_eq!(from.find_guest("deterministic_reply"), None);
        }
    });
    for host in &hosts {
        host.shutdown();
    }
}

/// A `.cwasm` (which keeps the hash of the `.wasm` it was compiled from) hands over to a host
/// running the `.wasm` on wasmi, and back.
#[test]
fn a_precompiled_guest_moves_to_and_from_its_wasm() {
    migrate_module(
        EngineKind::Wasmtime,
        precompiled(),
        EngineKind::Wasmi,
        spec(),
    );
    migrate_module(
        EngineKind::Wasmi,
        spec(),
        EngineKind::Wasmtime,
        precompiled(),
    );
}

/// A snapshot that is damaged, cut short, of another module or too large for the target is
/// refused with the reason, and the guest goes on on its first host.
#[test]
fn a_bad_snapshot_is_refused_and_the_guest_goes_on() {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let sender = sender(&ns);
    let a = replier_host(&ns, EngineKind::Wasmtime, &[spec()]);
    sender.await_matched(1);
    let before = sender.exchange(1..=2);
    let snapshot = a.freeze_and_snapshot("deterministic_reply").unwrap();
    let b = host(&ns, EngineKind::Wasmi);
    let refused = |bytes: &[u8], spec: &GuestSpec| match b.start_restored(spec, bytes) {
        Err(MigrateError::Migration(e)) => e.to_string(),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(()) => panic!("a bad snapshot was accepted"),
    };
    let mut damaged = snapshot.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 1;
    assert!(refused(&damaged, &spec()).contains("checksum"));
    assert!(refused(&snapshot[..snapshot.len() - 10], &spec()).contains("truncated"));
    let other_module = common::c_guest("examples/wasm/c/talker.c", "talker_for_migration.wasm");
    let wrong = refused(&snapshot, &GuestSpec { path: other_module });
    assert!(wrong.contains("module"), "{wrong}");
    let small = Host::start(
        &[],
        &HostOptions {
            engine: EngineKind::Wasmi,
            context: Some(networked(&ns)),
            limits: roslite_wasm::Limits {
                max_memory_bytes: 64 << 10,
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    match small.start_restored(&spec(), &snapshot) {
        Err(MigrateError::Migration(e)) => {
            assert!(e.to_string().contains("--max-memory-mib"), "{e}")
        }
        other => panic!("a snapshot over the memory cap: {other:?}"),
    }
    // The guest goes on where it was, with its state.
    a.thaw("deterministic_reply").unwrap();
    let after = sender.exchange(3..=4);
    let expected = uninterrupted(EngineKind::Wasmtime);
    assert_eq!([before, after].concat(), expected[..4]);
    assert!(b.statistics().is_empty());
    a.shutdown();
}

/// The state guest (tests/guests/migration_state.c): a parameter `offset`, a service `count`
/// answering "served=N offset=O accepted=A", a transient-local topic `kept`.
fn state_guest() -> GuestSpec {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let path = BUILT.get_or_init(|| {
        common::c_guest(
            "crates/roslite-wasm/tests/guests/migration_state.c",
            "migration_state.wasm",
        )
    });
    GuestSpec { path: path.clone() }
}

const STATE_NODE: &str = "migration_state";

/// A native node beside the state guest's hosts, with clients of its services.
struct StateClient {
    context: roslite::Context,
    node: roslite::Node,
    count: roslite::Client<roslite::msgs::std_srvs::srv::Trigger>,
    spinner: Option<std::thread::JoinHandle<()>>,
}

impl StateClient {
    fn new(ns: &NetNs) -> Self {
        Self::on(networked(ns))
    }

    /// The client node in `context`.
    fn on(context: roslite::Context) -> Self {
        let node = context.create_node("state_client").unwrap();
        let count = node.create_client("count").unwrap();
        let executor = roslite::Executor::new(&context);
        executor.add_node(&node);
        let spinner = Some(std::thread::spawn(move || executor.spin()));
        Self {
            context,
            node,
            count,
            spinner,
        }
    }

    /// A client of the state guest's `service` (a Trigger), once it is there.
    fn trigger_client(
        &self,
        service: &str,
    ) -> roslite::Client<roslite::msgs::std_srvs::srv::Trigger> {
        let client = self.node.create_client(service).unwrap();
        assert!(
            client.wait_for_service(Duration::from_secs(20)),
            "the guest's {service} service did not come"
        );
        client
    }

    /// The guest's answer to one call of its `count` service.
    fn count(&self) -> String {
        assert!(
            self.count.wait_for_service(Duration::from_secs(20)),
            "the guest's service did not come"
        );
        self.count
            .call(Default::default(), Duration::from_secs(10))
            .expect("an answer from the guest")
            .message
    }

    /// A client of one of the state node's parameter services, ready to call.
    fn parameter_client<S: roslite::msgs::Service>(&self, service: &str) -> roslite::Client<S> {
        let client = self
            .node
            .create_client::<S>(&format!("/{STATE_NODE}/{service}"))
            .unwrap();
        assert!(
            client.wait_for_service(Duration::from_secs(20)),
            "the node's {service} service did not come"
        );
        client
    }

    fn offset(&self) -> roslite::ParameterValue {
        use roslite::msgs::rcl_interfaces::srv::{GetParameters, GetParameters_Request};
        let response = self
            .parameter_client::<GetParameters>("get_parameters")
            .call(
                GetParameters_Request {
                    names: vec!["offset".into()],
                },
                Duration::from_secs(10),
            )
            .expect("get_parameters answers");
        roslite::ParameterValue::from_msg(&response.values[0]).expect("a parameter value")
    }
}

impl Drop for StateClient {
    fn drop(&mut self) {
        self.context.shutdown();
        if let Some(spinner) = self.spinner.take() {
            spinner.join().ok();
        }
    }
}

/// Moves the state guest from `a` to `b` (prepared first, as a move over the network goes).
fn move_state_guest(a: &Host, b: &Host) {
    move_guest(a, b, &state_guest(), STATE_NODE);
}

/// Moves guest `name` (of `spec`) from `a` to `b` as `roslite migrate` does: `b` prepared
/// first, and its copies of the guest's endpoints known to as many peers as on `a`.
fn move_guest(a: &Host, b: &Host, spec: &GuestSpec, name: &str) {
    let journal = a.journal_of(name).unwrap();
    let prepared = b.prepare_restore(spec, &journal).unwrap();
    let peers = a.matched_peers(name).unwrap();
    prepared
        .await_matched(&peers, Duration::from_secs(20))
        .unwrap();
    let snapshot = a.freeze_and_snapshot(name).unwrap();
    b.complete_restore(prepared, &snapshot).unwrap();
    a.end_migrated(name).unwrap();
    let ended = a.wait();
    assert!(ended[0].outcome.is_ok(), "{:?}", ended[0].outcome);
}

fn state_host(ns: &NetNs, engine: EngineKind, specs: &[GuestSpec]) -> Host {
    state_host_on(networked(ns), engine, specs)
}

fn state_host_on(context: roslite::Context, engine: EngineKind, specs: &[GuestSpec]) -> Host {
    Host::start(
        specs,
        &HostOptions {
            engine,
            context: Some(context),
            ..Default::default()
        },
    )
    .unwrap()
}

/// A parameter another node set (through the node's `set_parameters` service, as `ros2 param
/// set` does) keeps its value on the new host, where the guest reads it, and the guest's
/// on-set callback, which accepted it on the old host, is not asked again.
#[test]
fn a_parameter_set_from_outside_keeps_its_value_after_the_move() {
    use roslite::msgs::rcl_interfaces::srv::{SetParameters, SetParameters_Request};
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let set = client
        .parameter_client::<SetParameters>("set_parameters")
        .call(
            SetParameters_Request {
                parameters: vec![roslite::Parameter::new("offset", 42i64).to_msg()],
            },
            Duration::from_secs(10),
        )
        .expect("set_parameters answers");
    assert!(set.results[0].successful, "{}", set.results[0].reason);
    assert_eq!(client.count(), "served=2 offset=42 accepted=1");

    move_state_guest(&a, &b);
    assert_eq!(client.offset(), roslite::ParameterValue::Integer(42));
    assert_eq!(
        client.count(),
        "served=3 offset=42 accepted=1",
        "the guest does not see the value set before the move, or its callback ran again"
    );
    b.shutdown();
}

/// The state guest sets its own parameter (`bump_offset`) while it has an on-set callback,
/// so its journal holds a `parameter_set` that runs that callback. The target replays it
/// before the guest's memory arrives: the callback must not run into the guest there (nor
/// refuse the set, which would refuse the move), and the node keeps the value it set.
#[test]
fn a_parameter_the_node_set_itself_keeps_its_value_after_the_move() {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let bump = client.trigger_client("bump_offset");
    for expected in ["offset=1", "offset=2"] {
        let answer = bump
            .call(Default::default(), Duration::from_secs(10))
            .expect("bump_offset answers");
        assert_eq!(answer.message, expected);
    }
    assert_eq!(client.count(), "served=2 offset=2 accepted=2");

    move_state_guest(&a, &b);
    assert_eq!(client.offset(), roslite::ParameterValue::Integer(2));
    assert_eq!(
        client.count(),
        "served=3 offset=2 accepted=2",
        "the guest does not see the value it set before the move, or its callback ran again"
    );
    let answer = bump
        .call(Default::default(), Duration::from_secs(10))
        .expect("bump_offset answers after the move");
    assert_eq!(answer.message, "offset=3");
    assert_eq!(client.count(), "served=4 offset=3 accepted=3");
    b.shutdown();
}

/// The number of entries in guest `name`'s journal on `host`.
fn journal_entries(host: &Host, name: &str) -> usize {
    let bytes = host.journal_of(name).unwrap();
    roslite_wasm::migrate::decode_journal_bytes(&bytes, u64::MAX)
        .unwrap()
        .len()
}

/// The state guest makes a client, a subscription and a timer on one `churn` request and
/// releases them on the next: its journal does not grow with the requests (before, each pair
/// added six entries for ever), and the node it holds moves and answers as before, its later
/// objects under the numbers it was given.
#[test]
fn a_node_that_makes_and_releases_objects_keeps_a_journal_of_what_it_holds_and_moves() {
    let ns = NetNs::create("wasmjrn").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let churn = client.trigger_client("churn");
    let entries = journal_entries(&a, STATE_NODE);
    for _ in 0..20 {
        let answer = churn
            .call(Default::default(), Duration::from_secs(10))
            .expect("churn answers");
        assert_eq!(answer.message, "churned");
    }
    assert_eq!(journal_entries(&a, STATE_NODE), entries);
    move_state_guest(&a, &b);
    assert_eq!(client.count(), "served=2 offset=0 accepted=0");
    assert_eq!(journal_entries(&b, STATE_NODE), entries);
    b.shutdown();
}

/// The state guest makes and releases a client, a subscription and a timer without pause
/// (its `churn` service called back to back) while it moves between two hosts six times.
/// Each move reads the guest's journal and its endpoints' peers as of one moment
/// (`Host::journal_and_peers`), so the target compares each of its endpoints with the peers of
/// the same endpoint on the source (read apart, an endpoint made or released in between
/// shifts the later ones, the servers, by one); and from then on the journal forgets nothing
/// until the move ends, so the snapshot's journal continues the one the target replayed
/// (objects held at the reading and released before the snapshot made it shorter, and the
/// target refused it). Every move goes through.
#[test]
fn a_node_that_makes_and_releases_endpoints_while_it_moves_moves() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let ns = NetNs::create("wasmchurn").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let churn = client.trigger_client("churn");
    let done = AtomicBool::new(false);
    let churned = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let _stop = common::StopOnDrop(&done);
        scope.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                let answer = churn
                    .call(Default::default(), Duration::from_secs(10))
                    .expect("churn answers while the node moves");
                assert_eq!(answer.message, "churned");
                churned.fetch_add(1, Ordering::SeqCst);
            }
        });
        for n in 0..6 {
            let (from, to) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
            let before = churned.load(Ordering::SeqCst);
            let until = std::time::Instant::now() + Duration::from_secs(20);
            while churned.load(Ordering::SeqCst) < before + 5 {
                assert!(std::time::Instant::now() < until, "churn stopped");
                std::thread::sleep(Duration::from_millis(1));
            }
            move_state_guest_matched(from, to, || {});
        }
        done.store(true, Ordering::SeqCst);
    });
    assert_eq!(client.count(), "served=2 offset=0 accepted=0");
    assert_eq!(b.wait().len(), 3);
    a.shutdown();
}

/// How many servers of `/count` (their request readers) the graph of `context` shows.
fn count_servers(context: &roslite::Context) -> usize {
    context
        .graph()
        .endpoints()
        .iter()
        .filter(|e| {
            e.kind == roslite::graph::GraphEndpointKind::Subscription
                && e.topic_kind == roslite::graph::RosTopicKind::ServiceRequest
                && e.topic == "/count"
        })
        .count()
}

/// A client keeps calling the guest's service (one call at a time, a few ms apart) while the
/// guest moves: requests the old host answered reach the prepared new host too, and requests
/// that came while the guest was frozen wait on both. Every call gets exactly one answer
/// (none times out, no second answer reaches the client) and the guest served each request
/// once: the counts it answered with are 1, 2, 3, ... without a gap (a request served twice
/// would use a number up).
#[test]
fn every_request_is_answered_once_while_the_server_moves() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    client.count();
    let done = AtomicBool::new(false);
    let calls = AtomicUsize::new(1);
    let answers = std::thread::scope(|scope| {
        let _stop = common::StopOnDrop(&done);
        let caller = scope.spawn(|| keep_calling(&client, &done, &calls, Duration::from_millis(2)));
        let journal = a.journal_of(STATE_NODE).unwrap();
        let prepared = b.prepare_restore(&state_guest(), &journal).unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        while count_servers(&client.context) < 2 {
            assert!(Instant::now() < until, "the new host's server was not seen");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Some requests now reach both hosts while the old one answers them.
        let seen = calls.load(Ordering::SeqCst);
        while calls.load(Ordering::SeqCst) < seen + 5 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let snapshot = a.freeze_and_snapshot(STATE_NODE).unwrap();
        b.complete_restore(prepared, &snapshot).unwrap();
        a.end_migrated(STATE_NODE).unwrap();
        let moved = calls.load(Ordering::SeqCst);
        while calls.load(Ordering::SeqCst) < moved + 5 {
            std::thread::sleep(Duration::from_millis(1));
        }
        done.store(true, Ordering::SeqCst);
        caller.join().unwrap()
    });
    common::served_in_turn(&answers);
    // A second answer to a call would reach the client after the first.
    std::thread::sleep(Duration::from_millis(300));
    let stats = client.count.stats();
    assert_eq!(stats.unmatched_replies, 0, "a request was answered twice");
    assert_eq!(stats.timeouts, 0);
    assert_eq!(a.wait().len(), 1);
    b.shutdown();
}

/// Freezes the state guest on `a`, has `client` call `count` so the request waits in `a`'s
/// mailbox, moves the guest to `b` with the snapshot, and checks that `b` answered that
/// request (the guest's second) and then the next call.
fn answer_a_request_waiting_on_the_old_host(a: &Host, b: &Host, client: &StateClient) {
    a.freeze(STATE_NODE).unwrap();
    let (tx, answer) = mpsc::channel();
    client
        .count
        .call_with(Default::default(), move |r| {
            let _ = tx.send(r);
        })
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while a.waiting_callbacks(STATE_NODE).unwrap() == 0 {
        assert!(
            Instant::now() < until,
            "the request did not reach the old host"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let snapshot = a.snapshot_frozen(STATE_NODE).unwrap();
    b.start_restored(&state_guest(), &snapshot).unwrap();
    a.end_migrated(STATE_NODE).unwrap();
    assert_eq!(a.wait().len(), 1);
    let answered = answer
        .recv_timeout(Duration::from_secs(20))
        .expect("the call ended")
        .expect("the new host answered the request that waited on the old one");
    assert_eq!(answered.message, "served=2 offset=0 accepted=0");
    assert_eq!(client.count(), "served=3 offset=0 accepted=0");
}

/// Calls the state guest's `count` until `done`, every `pause`, counting the answered calls
/// in `calls`; the answers in order. A call with no answer in 10 s fails the test.
fn keep_calling(
    client: &StateClient,
    done: &std::sync::atomic::AtomicBool,
    calls: &std::sync::atomic::AtomicUsize,
    pause: Duration,
) -> Vec<String> {
    use std::sync::atomic::Ordering;
    let mut answers = Vec::new();
    while !done.load(Ordering::SeqCst) {
        let answer = client
            .count
            .call(Default::default(), Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("call {} got no answer: {e}", answers.len() + 2));
        answers.push(answer.message);
        calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(pause);
    }
    answers
}

/// A request that reached only the old host, and waited there while the guest was frozen
/// (the new host did not exist yet), moves with the snapshot and is answered by the new host,
/// once.
#[test]
fn a_request_waiting_on_the_old_host_is_answered_by_the_new_one() {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    answer_a_request_waiting_on_the_old_host(&a, &b, &client);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(client.count.stats().unmatched_replies, 0);
    b.shutdown();
}

/// A request the guest took on the old host but keeps to answer later (its `later` service
/// keeps the responder until `count` is called) is answered from the new host, under the
/// handle the guest kept.
#[test]
fn a_responder_the_guest_keeps_answers_from_the_new_host() {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let later = client
        .node
        .create_client::<roslite::msgs::std_srvs::srv::Trigger>("later")
        .unwrap();
    assert!(later.wait_for_service(Duration::from_secs(20)));
    let (tx, answer) = mpsc::channel();
    later
        .call_with(Default::default(), move |r| {
            let _ = tx.send(r);
        })
        .unwrap();
    // Time for the request to reach the guest, which takes it at once (it is parked): the
    // host shows no count of requests taken. Were it still on the way at the move, it would
    // wait in the old host's mailbox and move as such (the test would then pass through the
    // other path).
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(a.waiting_callbacks(STATE_NODE).unwrap(), 0);
    assert!(answer.try_recv().is_err(), "the guest answered at once");
    move_state_guest(&a, &b);
    assert_eq!(client.count(), "served=2 offset=0 accepted=0");
    let answered = answer
        .recv_timeout(Duration::from_secs(20))
        .expect("the call ended")
        .expect("the kept responder answered from the new host");
    assert_eq!(answered.message, "later");
    b.shutdown();
}

/// The domains of the tests below, which drop datagrams by port: their own, so that the
/// ports they name are those of their participants.
const IN_FLIGHT_DOMAIN: u32 = 163;
const IN_FLIGHT_RCLPY_DOMAIN: u32 = 164;
const IN_FLIGHT_CYCLONE_DOMAIN: u32 = 165;

/// Who sends the replier its numbers in the test of a message on its way to the old host.
enum NumbersPeer {
    /// A roslite node in this process.
    Native(common::Sender),
    /// A Python peer (rclpy on Fast DDS, interop/python/numbers_peer.py; Cyclone DDS,
    /// interop/python/cyclone_numbers.py): numbers as lines on its input, replies from its
    /// output.
    Python {
        child: std::process::Child,
        input: std::process::ChildStdin,
        replies: mpsc::Receiver<String>,
    },
}

impl NumbersPeer {
    /// rclpy on Fast DDS.
    fn rclpy(ns: &NetNs, domain: u32) -> Self {
        let mut command = Self::python(ns, domain, "numbers_peer.py");
        command
            .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
            .env_remove("FASTDDS_DEFAULT_PROFILES_FILE");
        Self::spawn(command)
    }

    /// Cyclone DDS's Python binding, no ROS (interop/python/cyclone_numbers.py).
    fn cyclone(ns: &NetNs, domain: u32) -> Self {
        let mut command = Self::python(ns, domain, "cyclone_numbers.py");
        command.env(
            "CYCLONEDDS_URI",
            r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>"#,
        );
        Self::spawn(command)
    }

    fn python(ns: &NetNs, domain: u32, script: &str) -> std::process::Command {
        let python = common::workspace().join(".venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run `cargo xtask test`, which installs rclpy",
            python.display()
        );
        let mut command = ns.command(python);
        command
            .arg(common::workspace().join("interop/python").join(script))
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE");
        command
    }

    fn spawn(mut command: std::process::Command) -> Self {
        use std::io::BufRead;
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = child.stdout.take().unwrap();
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(output)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(reply) = line.strip_prefix("REPLY ") {
                    let _ = tx.send(reply.to_owned());
                }
            }
        });
        Self::Python {
            child,
            input,
            replies,
        }
    }

    fn send(&mut self, n: u32) {
        use std::io::Write;
        match self {
            Self::Native(sender) => sender.send(n),
            Self::Python { input, .. } => writeln!(input, "{n}").unwrap(),
        }
    }

    fn reply(&self, timeout: Duration) -> Option<String> {
        match self {
            Self::Native(sender) => sender.replies.recv_timeout(timeout).ok(),
            Self::Python { replies, .. } => replies.recv_timeout(timeout).ok(),
        }
    }
}

impl Drop for NumbersPeer {
    fn drop(&mut self) {
        if let Self::Python { child, .. } = self {
            // SIGINT first: a killed rclpy peer leaves Fast DDS's shared-memory files in
            // /dev/shm.
            let _ = stop_gracefully(child, STOP_GRACE);
        }
    }
}

/// A message on its way to the old host (docs/migration.md, "A message on its way to the old
/// host"): number 4 is sent while only the old host's copy of the replier exists, and every
/// datagram to the old host is dropped, so it misses it; the new host's copy is prepared and
/// receives numbers 5 to 7 (its publisher knows it by then), the old one misses those too.
/// The drop is lifted only once the old host holds the replier, so number 4 reaches the old
/// host by RTPS repair after the node stopped there, and never the new host (its publisher
/// sent it before it knew the new copy). Every number must still be answered exactly once, in
/// order, and the replier's own count must go on without a gap. `peer` makes the publisher,
/// after the two hosts; `first_held` is the first number the new copy must hold (5, unless
/// the publisher's writer gives a new reader what its other readers did not acknowledge).
fn message_on_its_way_to_the_old_host(
    domain: u32,
    peer: impl FnOnce(&NetNs) -> NumbersPeer,
    first_held: std::ops::RangeInclusive<u64>,
) {
    const NAME: &str = "deterministic_reply";
    let ns = NetNs::create("wasmflight").expect("a network namespace");
    // The old host's context first: it is participant 0 of the namespace, which gives the
    // port its user data arrives on.
    let options = |engine| HostOptions {
        engine,
        context: Some(common::networked(&ns, domain)),
        node_args: vec!["volatile".into()],
        ..Default::default()
    };
    let a = Host::start(&[spec()], &options(EngineKind::Wasmtime)).unwrap();
    let old_host_port = roslite_transport::ports::user_unicast_port(domain, 0).expect("a port");
    let b = Host::start(&[], &options(EngineKind::Wasmi)).unwrap();
    let mut peer = peer(&ns);
    let reply = |peer: &NumbersPeer, n: u32| {
        peer.reply(Duration::from_secs(20))
            .unwrap_or_else(|| panic!("no reply to number {n}"))
    };
    let mut replies = Vec::new();
    for n in 1..=3 {
        peer.send(n);
        replies.push(reply(&peer, n));
    }

    common::drop_datagrams_to(&ns, old_host_port, None);
    peer.send(4);
    assert!(
        peer.reply(Duration::from_millis(500)).is_none(),
        "number 4 reached the old host through the drop rule"
    );
    let journal = a.journal_of(NAME).unwrap();
    let prepared = b.prepare_restore(&spec(), &journal).unwrap();
    prepared
        .await_matched(&a.matched_peers(NAME).unwrap(), Duration::from_secs(10))
        .unwrap();
    for n in 5..=7 {
        peer.send(n);
    }
    let until = Instant::now() + Duration::from_secs(10);
    while b.waiting_callbacks(NAME).unwrap() < 3 {
        assert!(
            Instant::now() < until,
            "the new host's copy did not receive numbers 5 to 7"
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    // The new copy holds 5 to 7: the old host must bring 4.
    let expected_first = first_held;
    let first_held = prepared.first_held();
    assert!(
        first_held.len() == 1 && expected_first.contains(&first_held[0].sequence_number),
        "the first number the new host's copy holds: {first_held:?}, not in {expected_first:?}"
    );
    a.freeze(NAME).unwrap();
    // The rule goes only now: number 4 reaches the old host by repair once it holds the node.
    common::lift_drop(&ns);
    let missed = a
        .await_covered(NAME, &first_held, roslite_wasm::inflight::DRAIN_TIMEOUT)
        .unwrap();
    assert_eq!(missed, vec![], "messages the old host did not bring");
    let snapshot = a.snapshot_frozen(NAME).unwrap();
    b.complete_restore(prepared, &snapshot).unwrap();
    a.end_migrated(NAME).unwrap();

    for n in 4..=7 {
        replies.push(
            peer.reply(Duration::from_secs(10))
                .unwrap_or_else(|| panic!("number {n}: only {} replies came", n - 4)),
        );
    }
    assert!(
        peer.reply(Duration::from_millis(300)).is_none(),
        "a number was answered twice"
    );
    // Each reply names the number it answers and how many numbers the replier heard.
    let heard: Vec<(u32, u32)> = replies.iter().map(|r| in_flight_reply(r)).collect();
    assert_eq!(
        heard,
        (1..=7).map(|n| (n, n)).collect::<Vec<_>>(),
        "(number answered, numbers heard) of each reply"
    );
    assert_eq!(a.wait().len(), 1);
    b.shutdown();
}

#[test]
fn a_message_repaired_to_the_old_host_after_the_node_stopped_there_is_not_lost() {
    message_on_its_way_to_the_old_host(
        IN_FLIGHT_DOMAIN,
        |ns| {
            let sender = common::Sender::new(
                common::networked(ns, IN_FLIGHT_DOMAIN),
                100,
                Duration::from_secs(20),
            );
            sender.await_matched(1);
            NumbersPeer::Native(sender)
        },
        5..=5,
    );
}

/// The same with the numbers from rclpy (a Fast DDS writer repairs number 4).
#[test]
fn a_message_from_rclpy_repaired_to_the_old_host_after_the_node_stopped_there_is_not_lost() {
    message_on_its_way_to_the_old_host(
        IN_FLIGHT_RCLPY_DOMAIN,
        |ns| NumbersPeer::rclpy(ns, IN_FLIGHT_RCLPY_DOMAIN),
        5..=5,
    );
}

/// The same with the numbers from Cyclone DDS, whose writer gives the new copy (a reader it
/// matched later) the numbers the old host did not acknowledge, 4 among them: the new copy
/// holds it itself, and the old host has nothing to wait for. Each number is still answered
/// once.
#[test]
fn a_message_from_cyclone_on_its_way_to_the_old_host_is_not_lost() {
    message_on_its_way_to_the_old_host(
        IN_FLIGHT_CYCLONE_DOMAIN,
        |ns| NumbersPeer::cyclone(ns, IN_FLIGHT_CYCLONE_DOMAIN),
        1..=4,
    );
}

/// (the number a reply answers, how many numbers the replier had heard).
fn in_flight_reply(reply: &str) -> (u32, u32) {
    // "ahzore N: ..." (the text in ROT13, digits kept) then " | n=HEARD ...".
    let number = reply
        .split(' ')
        .nth(1)
        .and_then(|n| n.trim_end_matches(':').parse().ok())
        .unwrap_or_else(|| panic!("no number in {reply:?}"));
    (number, answered(reply))
}

/// A same-host path between roslite participants, which the contexts of a test are all given
/// alone (UDP stays on for discovery): they then exchange their service requests and replies
/// over it, with no RTPS request id or reply route on the way.
#[derive(Clone, Copy, Debug)]
enum SameHostPath {
    SharedMemory,
    UnixSocket,
}

impl SameHostPath {
    fn name(self) -> &'static str {
        match self {
            Self::SharedMemory => "shm",
            Self::UnixSocket => "uds",
        }
    }

    /// A context in `ns` on `domain` offering only this path beside UDP.
    fn context(self, ns: &NetNs, domain: u32) -> roslite::Context {
        let transports = roslite::LocalTransports {
            shm: matches!(self, Self::SharedMemory),
            uds: matches!(self, Self::UnixSocket),
            ..Default::default()
        };
        common::networked_with(ns, domain, transports)
    }
}

/// Domains of the same-host tests (each test has its network namespace, and the same-host
/// endpoints of one namespace are apart from another's; the domains keep them apart anyway).
const SAME_HOST_DOMAIN: u32 = 186;
const SAME_HOST_WAITING_DOMAIN: u32 = 187;

/// How long a move waits for the target's endpoints to be known to the node's peers, as
/// `roslite host` does.
const MATCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Moves the state guest from `from` to `to` as `roslite host` does: the target prepared and
/// its endpoints (the `count` server among them) known to as many peers as the node's on the
/// source before the guest is frozen; `meanwhile` runs between the two, while requests reach
/// both hosts.
fn move_state_guest_matched(from: &Host, to: &Host, meanwhile: impl FnOnce()) {
    let (journal, peers) = from.journal_and_peers(STATE_NODE).unwrap();
    let prepared = to.prepare_restore(&state_guest(), &journal).unwrap();
    prepared
        .await_matched(&peers, MATCH_TIMEOUT)
        .unwrap_or_else(|e| panic!("the target's copy was not matched: {e}"));
    meanwhile();
    let snapshot = from.freeze_and_snapshot(STATE_NODE).unwrap();
    to.complete_restore(prepared, &snapshot).unwrap();
    from.end_migrated(STATE_NODE).unwrap();
}

/// The path `client`'s context uses with the servers of `/count` it sees.
fn count_server_paths(client: &StateClient) -> Vec<&'static str> {
    client
        .context
        .graph()
        .endpoints()
        .iter()
        .filter(|e| {
            e.kind == roslite::graph::GraphEndpointKind::Subscription
                && e.topic_kind == roslite::graph::RosTopicKind::ServiceRequest
                && e.topic == "/count"
        })
        .map(|e| e.transport)
        .collect()
}

/// A client keeps calling the guest's service over `path` (one call at a time, 3 ms apart)
/// while the guest moves back and forth between two hosts: requests reach the source and the
/// prepared target alike, the target tells those the source took from the rest by their
/// request ids (the same-host lead's identity), and those waiting in the frozen source's
/// mailbox move and are answered by the target over the same path. Every call gets exactly one
/// answer, and the guest's own count of requests served goes on without a gap.
fn requests_over_a_same_host_path_are_answered_once_while_the_server_moves(
    path: SameHostPath,
    domain: u32,
) {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    // Inside the namespace throughout: the guests' threads, which start same-host links,
    // reach the other contexts' endpoints (abstract Unix sockets are per network namespace).
    ns.run(|| moves_with_calls_over(&ns, path, domain))
        .unwrap_or_else(|e| panic!("{e}"));
}

fn moves_with_calls_over(ns: &NetNs, path: SameHostPath, domain: u32) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const MOVES: usize = 4;
    let a = state_host_on(
        path.context(ns, domain),
        EngineKind::Wasmtime,
        &[state_guest()],
    );
    let b = state_host_on(path.context(ns, domain), EngineKind::Wasmi, &[]);
    let client = StateClient::on(path.context(ns, domain));
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    assert_eq!(
        count_server_paths(&client),
        [path.name()],
        "the client does not reach the guest's server over {}",
        path.name()
    );
    let done = AtomicBool::new(false);
    let calls = AtomicUsize::new(1);
    let await_calls = |more: usize| {
        let from = calls.load(Ordering::SeqCst);
        let until = Instant::now() + Duration::from_secs(20);
        while calls.load(Ordering::SeqCst) < from + more {
            assert!(Instant::now() < until, "the calls stopped");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let answers = std::thread::scope(|scope| {
        let caller = scope.spawn(|| keep_calling(&client, &done, &calls, Duration::from_millis(3)));
        let stop = common::StopOnDrop(&done);
        for n in 0..MOVES {
            let (from, to) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
            await_calls(3);
            // Requests the source answers reach the target too: it must not answer them.
            move_state_guest_matched(from, to, || await_calls(3));
            await_calls(3);
        }
        drop(stop);
        caller.join().unwrap()
    });
    common::served_in_turn(&answers);
    // A second answer to a call would reach the client after the first.
    std::thread::sleep(Duration::from_millis(300));
    let stats = client.count.stats();
    assert_eq!(stats.unmatched_replies, 0, "a request was answered twice");
    assert_eq!(stats.timeouts, 0);
    assert!(
        count_server_paths(&client)
            .iter()
            .all(|&p| p == path.name()),
        "{:?}",
        count_server_paths(&client)
    );
    // The guest took requests on the link threads that brought them (the host had roslite
    // give them the stack an engine needs), not only on its own thread.
    let on_a = a.statistics();
    assert!(
        on_a.last().is_some_and(|g| g.callbacks_elsewhere > 0),
        "{on_a:?}"
    );
    // Moved an even number of times: the guest is back on `a`.
    assert_eq!(b.wait().len(), MOVES / 2);
    a.shutdown();
}

#[test]
fn requests_over_shared_memory_are_answered_once_while_the_server_moves() {
    requests_over_a_same_host_path_are_answered_once_while_the_server_moves(
        SameHostPath::SharedMemory,
        SAME_HOST_DOMAIN,
    );
}

#[test]
fn requests_over_unix_sockets_are_answered_once_while_the_server_moves() {
    requests_over_a_same_host_path_are_answered_once_while_the_server_moves(
        SameHostPath::UnixSocket,
        SAME_HOST_DOMAIN,
    );
}

/// [`a_request_waiting_on_the_old_host_is_answered_by_the_new_one`] over `path`: the request
/// came over a same-host link, waited in the frozen source's mailbox, and moves with the
/// snapshot; the new host, whose server is made only as the guest resumes, answers it over the
/// same path once the client's reply reader attached to its server, once.
fn a_request_waiting_over_a_same_host_path_is_answered_by_the_new_host(
    path: SameHostPath,
    domain: u32,
) {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    // Inside the namespace throughout, as above.
    ns.run(|| waiting_request_over(&ns, path, domain))
        .unwrap_or_else(|e| panic!("{e}"));
}

fn waiting_request_over(ns: &NetNs, path: SameHostPath, domain: u32) {
    let a = state_host_on(
        path.context(ns, domain),
        EngineKind::Wasmtime,
        &[state_guest()],
    );
    let b = state_host_on(path.context(ns, domain), EngineKind::Wasmi, &[]);
    let client = StateClient::on(path.context(ns, domain));
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    assert_eq!(count_server_paths(&client), [path.name()]);
    answer_a_request_waiting_on_the_old_host(&a, &b, &client);
    assert!(
        count_server_paths(&client)
            .iter()
            .all(|&p| p == path.name()),
        "{:?}",
        count_server_paths(&client)
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(client.count.stats().unmatched_replies, 0);
    b.shutdown();
}

#[test]
fn a_request_waiting_over_shared_memory_is_answered_by_the_new_host() {
    a_request_waiting_over_a_same_host_path_is_answered_by_the_new_host(
        SameHostPath::SharedMemory,
        SAME_HOST_WAITING_DOMAIN,
    );
}

#[test]
fn a_request_waiting_over_a_unix_socket_is_answered_by_the_new_host() {
    a_request_waiting_over_a_same_host_path_is_answered_by_the_new_host(
        SameHostPath::UnixSocket,
        SAME_HOST_WAITING_DOMAIN,
    );
}

/// A move waits for the target's servers as for its subscriptions: the source counts the
/// clients each of the guest's servers matched (after its publishers' and subscriptions'
/// peers), and the prepared target is ready only once as many clients know its copy of the
/// server, so a request sent from then on reaches it too. The wait gives up, naming the
/// server, when that does not happen in time.
#[test]
fn a_move_waits_until_the_guests_clients_know_the_new_server() {
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let peers = a.matched_peers(STATE_NODE).unwrap();
    // The servers come last, `count` (one client), then `later`, `publish_kept`, `churn` and
    // `bump_offset` (none).
    assert_eq!(peers[peers.len() - 5..], [1, 0, 0, 0, 0], "{peers:?}");
    assert_eq!(count_servers(&client.context), 1);

    let journal = a.journal_of(STATE_NODE).unwrap();
    let prepared = b.prepare_restore(&state_guest(), &journal).unwrap();
    prepared.await_matched(&peers, MATCH_TIMEOUT).unwrap();
    // Known to the client already: its graph has the new server, with no waiting.
    assert_eq!(count_servers(&client.context), 2);

    let mut more = peers.clone();
    let later = peers.len() - 4;
    more[later] = 1; // a client of `later` the target never sees
    let refused = prepared
        .await_matched(&more, Duration::from_millis(300))
        .unwrap_err();
    assert!(
        refused.contains("service 2 is known to 0 of 1 clients"),
        "{refused}"
    );
    b.call_off(prepared);
    assert_eq!(client.count(), "served=2 offset=0 accepted=0");
    a.shutdown();
}

/// A context in `ns` on RTPS, with the same-host `transports` besides UDP.
fn networked_with(ns: &NetNs, transports: roslite::LocalTransports) -> roslite::Context {
    common::networked_with(ns, 43, transports)
}

/// A native node with a spinning executor in `ns`, for subscriptions made along the way.
struct Listening<'a> {
    ns: &'a NetNs,
    context: roslite::Context,
    node: roslite::Node,
    spinner: Option<std::thread::JoinHandle<()>>,
}

impl<'a> Listening<'a> {
    fn new(ns: &'a NetNs, transports: roslite::LocalTransports) -> Self {
        Self::on(ns, networked_with(ns, transports), true)
    }

    /// On `context`, which it shuts down when dropped if it `owns` it (else it leaves its
    /// executor to end with the context).
    fn on(ns: &'a NetNs, context: roslite::Context, owns: bool) -> Self {
        let node = context.create_node("listening").unwrap();
        let executor = roslite::Executor::new(&context);
        executor.add_node(&node);
        let spinner = std::thread::spawn(move || executor.spin());
        Self {
            ns,
            context,
            node,
            spinner: owns.then_some(spinner),
        }
    }

    /// A subscription on `topic` (reliable, keep-last 100, transient-local if asked) that
    /// sends each message's text and publication sequence number to the receiver. Made on a
    /// thread inside the namespace: a same-host link to a publisher known already is made by
    /// the thread that makes the subscription, and the namespace names its Unix sockets.
    fn listen(
        &self,
        topic: &str,
        transient_local: bool,
    ) -> (
        roslite::Subscription<StringMsg>,
        mpsc::Receiver<(String, u64)>,
    ) {
        self.ns
            .run(|| self.listen_here(topic, transient_local))
            .expect("enter the test namespace")
    }

    fn listen_here(
        &self,
        topic: &str,
        transient_local: bool,
    ) -> (
        roslite::Subscription<StringMsg>,
        mpsc::Receiver<(String, u64)>,
    ) {
        let (tx, heard) = mpsc::channel();
        let mut qos = roslite::QosProfile::keep_last(100).reliable();
        if transient_local {
            qos = qos.transient_local();
        }
        let subscription = self
            .node
            .create_subscription(
                topic,
                qos,
                move |m: StringMsg, info: &roslite::MessageInfo| {
                    let _ = tx.send((m.data, info.publication_sequence_number));
                },
            )
            .unwrap();
        (subscription, heard)
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            self.context.shutdown();
            spinner.join().ok();
        }
    }
}

/// The next `count` messages `heard` gets (each within 10 s), then nothing more for 500 ms.
fn heard_exactly(heard: &mpsc::Receiver<(String, u64)>, count: usize) -> Vec<(String, u64)> {
    let got: Vec<_> = (0..count)
        .map(|i| {
            heard
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("only {i} of {count} messages came"))
        })
        .collect();
    if let Ok(more) = heard.recv_timeout(Duration::from_millis(500)) {
        panic!("after {got:?}, one more came: {more:?}");
    }
    got
}

fn kept(numbers: std::ops::RangeInclusive<u64>) -> Vec<(String, u64)> {
    numbers.map(|n| (format!("kept {n}"), n)).collect()
}

/// The state guest's transient-local publisher (depth 3) published "kept 1" to "kept 5" and
/// the guest moves, its new host's endpoints known to their peers first (as a move over the
/// network goes). A transient-local subscription that was there throughout had the last
/// three (or more) from the old host and gets none of them again; one that joins after the
/// move gets them from the new host exactly once, under their original publication sequence
/// numbers, and so does one in the new host's own process; the next message ("kept 6",
/// published on the new host) comes to all of them, and to a volatile one, as number 6.
/// `transports`: the same-host paths the hosts and the subscriptions offer besides UDP.
fn the_kept_history_moves_with_the_guest(transports: roslite::LocalTransports) {
    use roslite::msgs::std_srvs::srv::Trigger;
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let options = |engine| HostOptions {
        engine,
        context: Some(networked_with(&ns, transports)),
        ..Default::default()
    };
    let a = Host::start(&[state_guest()], &options(EngineKind::Wasmtime)).unwrap();
    let b_context = networked_with(&ns, transports);
    let b = Host::start(
        &[],
        &HostOptions {
            engine: EngineKind::Wasmi,
            context: Some(b_context.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let listening = Listening::new(&ns, transports);
    let (_throughout, throughout) = listening.listen("kept", true);
    // The last three, or more if it matched the guest before it published them all.
    let mut before: Vec<(String, u64)> = Vec::new();
    while before.last() != Some(&("kept 5".to_owned(), 5)) {
        before.push(
            throughout
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("after {before:?}, not all the kept messages came")),
        );
    }
    let first = before[0].1;
    assert!(first <= 3, "{before:?}");
    assert_eq!(before, kept(first..=5));

    move_state_guest(&a, &b);
    assert_eq!(
        heard_exactly(&throughout, 0),
        vec![],
        "a subscription matched during the move got a message again"
    );
    let (_late, late) = listening.listen("kept", true);
    assert_eq!(
        heard_exactly(&late, 3),
        kept(3..=5),
        "a late joiner after the move gets the history the guest kept on its old host"
    );
    // In the new host's own process (its context): from the publisher's own history.
    let beside = Listening::on(&ns, b_context, false);
    let (_in_process, in_process) = beside.listen("kept", true);
    assert_eq!(heard_exactly(&in_process, 3), kept(3..=5));
    let (_volatile, volatile) = listening.listen("kept", false);

    let client = StateClient::new(&ns);
    let publish = client
        .node
        .create_client::<Trigger>("publish_kept")
        .unwrap();
    assert!(publish.wait_for_service(Duration::from_secs(20)));
    let answer = publish
        .call(Default::default(), Duration::from_secs(10))
        .expect("the guest publishes on its new host");
    assert_eq!(answer.message, "kept 6");
    assert_eq!(heard_exactly(&throughout, 1), kept(6..=6));
    assert_eq!(heard_exactly(&late, 1), kept(6..=6));
    assert_eq!(heard_exactly(&volatile, 1), kept(6..=6));
    assert_eq!(heard_exactly(&in_process, 1), kept(6..=6));
    b.shutdown();
}

#[test]
fn the_kept_history_moves_with_the_guest_over_rtps() {
    the_kept_history_moves_with_the_guest(roslite::LocalTransports::UDP_ONLY);
}

#[test]
fn the_kept_history_moves_with_the_guest_over_shared_memory() {
    the_kept_history_moves_with_the_guest(roslite::LocalTransports {
        uds: false,
        ..Default::default()
    });
}

#[test]
fn the_kept_history_moves_with_the_guest_over_unix_sockets() {
    the_kept_history_moves_with_the_guest(roslite::LocalTransports {
        shm: false,
        ..Default::default()
    });
}

/// The C talker ("Hello from Wasm: N" every 100 ms, volatile) moves four times between a
/// wasmtime and a wasmi host; a subscriber sees the publication sequence numbers go on
/// without a restart, a gap or a repeat: each message's number is its count N. Each target
/// reports the talker's clock further behind its own (`guest_clock_behind_ns`): each move's
/// time adds to it.
#[test]
fn publication_sequence_numbers_go_on_across_moves() {
    let talker = common::c_guest("examples/wasm/c/talker.c", "talker_numbered.wasm");
    let spec = GuestSpec { path: talker };
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let options = |engine| HostOptions {
        engine,
        context: Some(networked(&ns)),
        ..Default::default()
    };
    let hosts = [
        Host::start(std::slice::from_ref(&spec), &options(EngineKind::Wasmtime)).unwrap(),
        Host::start(&[], &options(EngineKind::Wasmi)).unwrap(),
    ];
    let listening = Listening::new(&ns, roslite::LocalTransports::UDP_ONLY);
    let (_subscription, heard) = listening.listen("chatter", false);
    let next = || {
        heard
            .recv_timeout(Duration::from_secs(10))
            .expect("the talker goes on")
    };
    let mut messages = vec![next(), next(), next()];
    assert_eq!(hosts[0].nodes()[0].guest_clock_behind_ns, 0);
    let mut behind = 0;
    for step in 0..4 {
        let (from, to) = (&hosts[step % 2], &hosts[(step + 1) % 2]);
        move_guest(from, to, &spec, "talker_numbered");
        for _ in 0..3 {
            messages.push(next());
        }
        // Its clock skipped each move's time, and the host says by how much in all.
        let now_behind = to.nodes()[0].guest_clock_behind_ns;
        assert!(
            now_behind > behind,
            "move {}: the talker's clock is {now_behind} ns behind, after {behind} ns",
            step + 1
        );
        behind = now_behind;
    }
    for (text, number) in &messages {
        let count: u64 = text.rsplit(' ').next().unwrap().parse().unwrap();
        assert_eq!(
            *number, count,
            "{text} came as publication {number}: {messages:?}"
        );
    }
    let numbers: Vec<u64> = messages.iter().map(|(_, n)| *n).collect();
    let first = numbers[0];
    assert_eq!(
        numbers,
        (first..first + numbers.len() as u64).collect::<Vec<_>>(),
        "the numbering went on without a gap or a repeat"
    );
    hosts[0].shutdown();
    hosts[1].shutdown();
}

/// Real ROS 2 (rclpy on Fast DDS, from ./.venv) joins the state guest's transient-local topic
/// after the guest moved (prepared target, as `roslite migrate` does): it gets the three
/// messages the guest kept on its old host, once each and under their original publication
/// sequence numbers (3 to 5), then the next one published on the new host as number 6.
#[test]
fn rclpy_joining_after_the_move_gets_the_kept_history_once() {
    use std::io::BufRead;
    use std::process::Stdio;

    use roslite::msgs::std_srvs::srv::Trigger;
    let python = common::workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs rclpy",
        python.display()
    );
    let ns = NetNs::create("wasmmig").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let b = state_host(&ns, EngineKind::Wasmi, &[]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    move_state_guest(&a, &b);

    let mut listener = ns
        .command(python)
        .arg(common::workspace().join("interop/python/kept_listener.py"))
        .args(["60", "4"])
        .env("ROS_DOMAIN_ID", "43")
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = listener.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut heard = Vec::new();
    let mut next_line = |what: &str| {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("rclpy said nothing more; waiting for {what}"));
        heard.push(line.clone());
        line
    };
    for n in 3..=5 {
        assert_eq!(next_line("the kept history"), format!("HEARD kept {n} {n}"));
    }
    let publish = client
        .node
        .create_client::<Trigger>("publish_kept")
        .unwrap();
    assert!(publish.wait_for_service(Duration::from_secs(20)));
    let answer = publish
        .call(Default::default(), Duration::from_secs(10))
        .expect("the guest publishes on its new host");
    assert_eq!(answer.message, "kept 6");
    assert_eq!(next_line("the next message"), "HEARD kept 6 6");
    assert_eq!(
        next_line("its result"),
        "RESULT 4",
        "a message came twice: {heard:?}"
    );
    assert!(listener.wait().unwrap().success());
    b.shutdown();
}

/// Writes the seeds of the `snapshot` fuzz target (fuzz/src/lib.rs) from the state guest as
/// it moves with something of each kind in its host state: a parameter it set, a responder it
/// keeps, a transient-local publisher's history, a journal. Each seed is the target's selector
/// byte and a snapshot (0), its body (1), its host state (2) or the journal sent alone (3);
/// the snapshots keep two of the guest's memory chunks, not all of them, so the fuzzer's
/// inputs stay small. Run by hand:
/// `cargo test -p roslite-wasm --test migration -- --ignored write_snapshot_fuzz_seeds`, then
/// `cargo fuzz cmin snapshot`.
#[test]
#[ignore = "writes fuzz seeds; run by hand"]
fn write_snapshot_fuzz_seeds() {
    use roslite_wasm::snapshot;
    let ns = NetNs::create("wasmseed").expect("a network namespace");
    let a = state_host(&ns, EngineKind::Wasmtime, &[state_guest()]);
    let client = StateClient::new(&ns);
    assert_eq!(client.count(), "served=1 offset=0 accepted=0");
    let answer = client
        .trigger_client("bump_offset")
        .call(Default::default(), Duration::from_secs(10))
        .expect("bump_offset answers");
    assert_eq!(answer.message, "offset=1");
    let later = client.trigger_client("later");
    later.call_with(Default::default(), |_| {}).unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let journal = a.journal_of(STATE_NODE).unwrap();
    let taken = a.freeze_and_snapshot(STATE_NODE).unwrap();
    let caps = snapshot::Caps {
        max_memory_bytes: 64 << 20,
        max_host_bytes: 64 << 20,
    };
    let mut small = snapshot::decode(&taken, caps).unwrap();
    small.chunks.truncate(2);
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/snapshot");
    std::fs::create_dir_all(&out).unwrap();
    let save = |name: &str, selector: u8, bytes: &[u8]| {
        let mut data = vec![selector];
        data.extend_from_slice(bytes);
        std::fs::write(out.join(name), data).unwrap();
    };
    save("state_guest_snapshot", 0, &snapshot::encode(&small));
    save("state_guest_body", 1, &snapshot::body(&small));
    save("state_guest_host_state", 2, &small.host);
    save("state_guest_journal", 3, &journal);
    a.shutdown();
}
