//! `roslite host` and `roslite migrate` (docs/migration.md): hosts as processes of their own
//! (the lean `roslite-wasm-host` program with `--name`), moving a node over ROS 2 services
//! inside a network namespace the test makes.
//!
//! The node is the deterministic replier (tests/guests/deterministic_reply.c): each reply
//! carries how many messages it heard (`n=`) and a hash of everything before, so a message
//! lost or given twice anywhere in a move shows in the replies.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use roslite::msgs::roslite_interfaces::srv::{
    ListNodes, ListNodes_Request, MigrateNode, MigrateNode_Request, MigrateNode_Response,
};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite_transport::netns::NetNs;

mod common;

use common::Sender;

const DOMAIN: u32 = 44;

/// The replier, alone in a directory of its own (the hosts' module directory).
fn modules() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let wasm = common::c_guest(
            "crates/roslite-wasm/tests/guests/deterministic_reply.c",
            "deterministic_reply.wasm",
        );
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host-modules");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&wasm, dir.join("deterministic_reply.wasm")).unwrap();
        // wasmtime's hosts run it compiled ahead of time, as a board would.
        let code =
            roslite_wasm::engine::wasmtime_engine::precompile(&std::fs::read(&wasm).unwrap(), None)
                .unwrap();
        std::fs::write(dir.join("deterministic_reply.cwasm"), code).unwrap();
        dir
    })
}

struct HostProcess(Child);

impl Drop for HostProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A host process named `name` in `ns`, accepting nodes from `accept_from`, running the
/// replier if `runs_replier`.
fn host(ns: &NetNs, name: &str, engine: &str, accept_from: &str, extra: &[&str]) -> HostProcess {
    host_with_modules(ns, name, engine, accept_from, modules(), extra)
}

fn host_with_modules(
    ns: &NetNs,
    name: &str,
    engine: &str,
    accept_from: &str,
    module_dir: &Path,
    extra: &[&str],
) -> HostProcess {
    let mut command = host_command(ns, name, engine, accept_from, module_dir, DOMAIN);
    command.args(extra);
    HostProcess(command.spawn().expect("start a host"))
}

/// The command that runs the lean host `name` in `ns` on `domain`, with `--engine`,
/// `--accept-from` and `--module-dir` as given.
fn host_command(
    ns: &NetNs,
    name: &str,
    engine: &str,
    accept_from: &str,
    module_dir: &Path,
    domain: u32,
) -> std::process::Command {
    let mut command = ns.command(env!("CARGO_BIN_EXE_roslite-wasm-host"));
    command
        .args([
            "--name",
            name,
            "--engine",
            engine,
            "--accept-from",
            accept_from,
        ])
        .arg("--module-dir")
        .arg(module_dir)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .stdin(Stdio::null());
    command
}

fn replier_args() -> Vec<String> {
    vec![
        modules()
            .join("deterministic_reply.wasm")
            .display()
            .to_string(),
        "--".into(),
        "volatile".into(),
    ]
}

/// The native side, in the test process: numbers out, replies in.
fn sender(ns: &NetNs) -> Sender {
    Sender::new(common::networked(ns, DOMAIN), 1000, Duration::from_secs(30))
}

/// Sends number `n` and returns (the number answered, how many the replier heard).
fn exchange(sender: &Sender, n: u32) -> (u32, u32) {
    answered(&sender.exchange(n..=n)[0])
}

/// Asks host `from` (over its migrate_node service) to move the replier to host `to`.
fn migrate(sender: &Sender, from: &str, to: &str) -> MigrateNode_Response {
    let client = sender
        .node
        .create_client::<MigrateNode>(&format!("/roslite_host/{from}/migrate_node"))
        .unwrap();
    assert!(
        client.wait_for_service(Duration::from_secs(20)),
        "host {from} did not appear"
    );
    client
        .call(
            MigrateNode_Request {
                node: "deterministic_reply".into(),
                to: to.into(),
            },
            Duration::from_secs(40),
        )
        .unwrap()
}

/// The guests host `name` runs.
fn guests_on(sender: &Sender, name: &str) -> Vec<String> {
    let client = sender
        .node
        .create_client::<ListNodes>(&format!("/roslite_host/{name}/list_nodes"))
        .unwrap();
    assert!(client.wait_for_service(Duration::from_secs(20)));
    client
        .call(ListNodes_Request::default(), Duration::from_secs(10))
        .unwrap()
        .nodes
        .into_iter()
        .map(|n| n.guest)
        .collect()
}

/// (the number a reply answers, how many messages the replier had heard then).
fn answered(reply: &str) -> (u32, u32) {
    // The replier sends its input in ROT13 ("ahzore N: uryyb ..."), then " | n=HEARD ...".
    let number = reply
        .strip_prefix("ahzore ")
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a reply: {reply}"));
    let at = reply.rfind(" | n=").expect("a reply") + 5;
    let heard = reply[at..].split(' ').next().unwrap().parse().unwrap();
    (number, heard)
}

/// The `(number, count)` of the next `expected` replies to numbers in `numbers`; panics
/// naming the numbers not answered (and `context`) if one does not come within 15 s, or if a
/// further reply comes within 500 ms (a number answered twice, or one counted lost).
fn replies_to(
    sender: &Sender,
    numbers: std::ops::RangeInclusive<u32>,
    expected: u32,
    context: &str,
) -> Vec<(u32, u32)> {
    let mut heard: Vec<(u32, u32)> = Vec::new();
    while heard.len() < expected as usize {
        match sender.replies.recv_timeout(Duration::from_secs(15)) {
            Ok(reply) => heard.push(answered(&reply)),
            Err(_) => {
                let seen: std::collections::BTreeSet<u32> = heard.iter().map(|h| h.0).collect();
                let missing: Vec<u32> = numbers.filter(|n| !seen.contains(n)).collect();
                panic!(
                    "only {} of {expected} numbers were answered; not {missing:?} ({context})",
                    heard.len()
                )
            }
        }
    }
    if let Ok(extra) = sender.replies.recv_timeout(Duration::from_millis(500)) {
        panic!("one reply more than the numbers sent and not counted lost: {extra} ({context})");
    }
    heard
}

/// A numbered sequence flows into the replier while it moves back and forth `moves` times
/// between host `a` (wasmtime) and host `b` (wasmi): every number is answered exactly once,
/// in order, and the replier's own count of what it heard goes on without a gap.
fn moves_back_and_forth(moves: u32) {
    let ns = NetNs::create("wasmhost").expect("a network namespace");
    let sender = sender(&ns);
    let replier = replier_args();
    let mut a_args: Vec<&str> = Vec::new();
    a_args.extend(replier.iter().map(String::as_str));
    let _a = host(&ns, "a", "wasmtime", "b", &a_args);
    let _b = host(&ns, "b", "wasmi", "a", &[]);
    sender.await_matched(1);

    let total = std::sync::atomic::AtomicU32::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let mut paused = Vec::new();
    let mut sent_at_move = Vec::new();
    std::thread::scope(|scope| {
        let _stop = common::StopOnDrop(&done);
        let publisher = &sender.publisher;
        scope.spawn(|| {
            let mut n = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                n += 1;
                publisher
                    .publish(StringMsg {
                        data: format!("number {n}: hello ünïcode"),
                    })
                    .unwrap();
                total.store(n, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        for i in 0..moves {
            let (from, to) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
            let before = total.load(std::sync::atomic::Ordering::SeqCst);
            let moved = migrate(&sender, from, to);
            sent_at_move.push((before, total.load(std::sync::atomic::Ordering::SeqCst)));
            assert!(
                moved.success,
                "move {} from {from} to {to}: {}",
                i + 1,
                moved.message
            );
            assert!(moved.snapshot_bytes > 0);
            paused.push(moved.paused_us);
            eprintln!(
                "move {}: {from} -> {to}, paused {} us (capture {} us, restore {} us)",
                i + 1,
                moved.paused_us,
                moved.capture_us,
                moved.restore_us
            );
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let total = total.load(std::sync::atomic::Ordering::SeqCst);
    let mut heard = replies_to(
        &sender,
        1..=total,
        total,
        &format!("moves at {sent_at_move:?}"),
    );
    // Each host answers in order; the two hosts' answers may cross on the way around a move.
    heard.sort_unstable();
    for (i, &(number, count)) in heard.iter().enumerate() {
        let expected = i as u32 + 1;
        assert_eq!(
            number, expected,
            "numbers answered: a gap or a repeat at {expected}"
        );
        assert_eq!(
            count, expected,
            "the replier's count broke at number {expected}"
        );
    }
    let last_on = if moves % 2 == 1 { "b" } else { "a" };
    let other = if last_on == "a" { "b" } else { "a" };
    assert_eq!(guests_on(&sender, last_on), vec!["deterministic_reply"]);
    assert!(guests_on(&sender, other).is_empty());
    paused.sort_unstable();
    eprintln!(
        "{moves} moves, {total} numbers: paused p50 {} us, max {} us",
        paused[paused.len() / 2],
        paused[paused.len() - 1]
    );
}

#[test]
fn a_counter_moves_100_times_between_a_wasmtime_and_a_wasmi_host_losing_nothing() {
    moves_back_and_forth(100);
}

/// A move of the replier from host `a` to host `b` while numbers keep coming (one every
/// 10 ms) and every datagram the sender sends to host `a` is dropped from number 4 on: the
/// numbers sent before `b`'s copy was known reach neither host, unless the drop is lifted
/// (`lift`: that long after the sender matched `b`'s copy, while `a` holds the node waiting
/// for them) and the sender's writer repairs them to `a`. Returns `a`'s answer, how many
/// numbers were sent, and (number, numbers heard) of each reply after number 3, in order of
/// the numbers, once as many came as the move did not count lost.
fn move_while_a_misses_numbers(
    lift: Option<Duration>,
) -> (MigrateNode_Response, u32, Vec<(u32, u32)>) {
    let ns = NetNs::create("wasmhost").expect("a network namespace");
    let replier = replier_args();
    let a_args: Vec<&str> = replier.iter().map(String::as_str).collect();
    // Host a, host b and the sender's context, each once the one before bound its ports: they
    // are participants 0, 1 and 2 of the namespace, which names the ports of their user data.
    let bound = |participant: u32| {
        let port = roslite_transport::ports::user_unicast_port(DOMAIN, participant).unwrap();
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while ns
            .run(|| std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok())
            .expect("enter the test namespace")
        {
            assert!(
                std::time::Instant::now() < until,
                "participant {participant} did not bind port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        port
    };
    let _a = host(&ns, "a", "wasmtime", "b", &a_args);
    let a_port = bound(0);
    let _b = host(&ns, "b", "wasmi", "a", &[]);
    bound(1);
    let sender = sender(&ns);
    let sender_port = bound(2);
    // The move is asked for by another participant: only the numbers (and the rest of the
    // sender's user data) are kept from host a.
    let caller = Sender::new(common::networked(&ns, DOMAIN), 10, Duration::from_secs(30));
    sender.await_matched(1);
    for n in 1..=3 {
        assert_eq!(exchange(&sender, n), (n, n));
    }

    common::drop_datagrams_to(&ns, a_port, Some(sender_port));
    let total = std::sync::atomic::AtomicU32::new(3);
    let done = std::sync::atomic::AtomicBool::new(false);
    let moved = std::thread::scope(|scope| {
        let _stop = common::StopOnDrop(&done);
        let publisher = &sender.publisher;
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let n = total.load(std::sync::atomic::Ordering::SeqCst) + 1;
                publisher
                    .publish(StringMsg {
                        data: format!("number {n}: hello ünïcode"),
                    })
                    .unwrap();
                total.store(n, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        if let Some(lift) = lift {
            let (ns, done, publisher) = (&ns, &done, publisher);
            scope.spawn(move || {
                while publisher.subscription_count() < 2
                    && !done.load(std::sync::atomic::Ordering::SeqCst)
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(lift);
                common::lift_drop(ns);
            });
        }
        // Number 4 is out before the move starts.
        while total.load(std::sync::atomic::Ordering::SeqCst) < 4 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Whatever the move does, the numbers stop (a panic here would wait for them forever).
        let moved =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| migrate(&caller, "a", "b")));
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        moved
    })
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    common::lift_drop(&ns);
    assert!(moved.success, "{}", moved.message);
    eprintln!(
        "moved with {} number(s) counted lost, paused {} us",
        moved.messages_lost, moved.paused_us
    );

    let total = total.load(std::sync::atomic::Ordering::SeqCst);
    let lost = moved.messages_lost as u32;
    // Numbers 1 to 3 were answered already.
    let answered_count = total - 3 - lost;
    let mut heard = replies_to(
        &sender,
        4..=total,
        answered_count,
        &format!("{lost} counted lost"),
    );
    heard.sort_unstable();
    (moved, total, heard)
}

/// Messages on their way to the old host (docs/migration.md, "A message on its way to the old
/// host"), which reach it only by repair once it holds the node: it waits for them and they
/// move with the snapshot. Every number is answered exactly once, in order, and the
/// replier's count goes on without a gap.
#[test]
fn messages_repaired_to_the_old_host_while_it_holds_the_node_move_with_it() {
    let (moved, total, heard) = move_while_a_misses_numbers(Some(Duration::from_millis(500)));
    assert_eq!(moved.messages_lost, 0, "the move counted messages lost");
    assert_eq!(
        heard,
        (4..=total).map(|n| (n, n)).collect::<Vec<_>>(),
        "(number answered, numbers heard) of each reply after number 3"
    );
}

/// Messages on their way to the old host that never arrive: the old host waits for them (the
/// bound, `inflight::DRAIN_TIMEOUT`), then moves the node anyway and counts them in its
/// answer. Exactly those numbers go unanswered; every other is answered once, and the
/// replier's count skips only them.
#[test]
fn messages_that_never_reach_the_old_host_are_counted_lost_and_the_move_goes_on() {
    let (moved, total, heard) = move_while_a_misses_numbers(None);
    let lost = moved.messages_lost as u32;
    assert!(lost >= 1, "the move counted no message lost");
    // The source waited for them before it gave up.
    assert!(
        moved.paused_us >= roslite_wasm::inflight::DRAIN_TIMEOUT.as_micros() as u64,
        "paused only {} us",
        moved.paused_us
    );
    assert_eq!(
        heard,
        (4 + lost..=total)
            .map(|n| (n, n - lost))
            .collect::<Vec<_>>(),
        "the numbers answered: all but the {lost} counted lost from number 4 on"
    );
}

/// A move the target must refuse, or that fails halfway, leaves the node running on its host
/// with its state, and says why: a target that does not list the source in --accept-from, one
/// whose module of that name is another module, one that dies when the snapshot arrives, and
/// a host that is not there. `roslite migrate`'s own lookup (no --from) then finds the node
/// where it still runs and moves it; the ROS graph then shows the node once, on the target's
/// participant.
#[test]
fn refused_and_failed_moves_leave_the_node_running_where_it_was() {
    let ns = NetNs::create("wasmhost").expect("a network namespace");
    let sender = sender(&ns);
    let replier = replier_args();
    let a_args: Vec<&str> = replier.iter().map(String::as_str).collect();
    let _a = host(&ns, "a", "wasmtime", "b", &a_args);
    let _strict = host(&ns, "strict", "wasmi", "c", &[]);
    let other_modules = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host-other-modules");
    std::fs::create_dir_all(&other_modules).unwrap();
    let talker = common::c_guest("examples/wasm/c/talker.c", "talker_for_hosts.wasm");
    std::fs::copy(&talker, other_modules.join("deterministic_reply.wasm")).unwrap();
    let _other = host_with_modules(&ns, "other", "wasmi", "a", &other_modules, &[]);
    let _dying = host(&ns, "dying", "wasmi", "a", &["--exit-on-snapshot"]);
    sender.await_matched(1);
    let mut next = 1;
    let mut check_still_answers = |sender: &Sender| {
        assert_eq!(
            exchange(sender, next),
            (next, next),
            "the node's state after a failed move"
        );
        next += 1;
    };
    check_still_answers(&sender);

    let refused = migrate(&sender, "a", "strict");
    assert!(!refused.success);
    assert!(
        refused.message.contains("--accept-from") && refused.message.contains("strict"),
        "{}",
        refused.message
    );
    check_still_answers(&sender);

    let refused = migrate(&sender, "a", "other");
    assert!(!refused.success);
    assert!(
        refused.message.contains("goes on here") && refused.message.contains("same .wasm"),
        "{}",
        refused.message
    );
    check_still_answers(&sender);

    let failed = migrate(&sender, "a", "dying");
    assert!(!failed.success);
    assert!(
        failed.message.contains("did not restore") && failed.message.contains("goes on here"),
        "{}",
        failed.message
    );
    check_still_answers(&sender);

    let missing = migrate(&sender, "a", "nowhere");
    assert!(!missing.success);
    assert!(
        missing.message.contains("no host nowhere"),
        "{}",
        missing.message
    );
    // Host a looked for it with a client of its services (the graph saw it while a waited),
    // and keeps none for a host that never answered.
    let nowhere_clients = || {
        sender
            .context
            .graph()
            .endpoints()
            .iter()
            .filter(|e| e.topic.starts_with("/roslite_host/nowhere/"))
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while nowhere_clients() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        nowhere_clients(),
        0,
        "host a keeps the endpoints of its clients of host nowhere"
    );
    check_still_answers(&sender);
    assert_eq!(guests_on(&sender, "a"), vec!["deterministic_reply"]);
    assert!(guests_on(&sender, "strict").is_empty());
    assert!(guests_on(&sender, "other").is_empty());

    // `roslite migrate deterministic_reply --to b`, the host it runs on found by asking.
    let _b = host(&ns, "b", "wasmi", "a", &[]);
    let moved = roslite_wasm::cli::migrate_node_in(
        &common::networked(&ns, DOMAIN),
        &roslite_wasm::cli::MigrateArgs {
            node: "deterministic_reply".into(),
            to: "b".into(),
            from: None,
            discovery_timeout: 20.0,
            ros_args: Vec::new(),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(moved.from, "a");
    assert_eq!(guests_on(&sender, "b"), vec!["deterministic_reply"]);
    assert!(guests_on(&sender, "a").is_empty());
    check_still_answers(&sender);
    // On the ROS graph (what `ros2 node list` shows), the guest's node is there once, and its
    // endpoints are the target host's participant's, not the source's.
    let graph = sender.context.graph();
    let participant_of = |node: &str| -> Vec<[u8; 12]> {
        let mut prefixes: Vec<[u8; 12]> = graph
            .endpoints()
            .iter()
            .filter(|e| {
                e.node
                    .as_ref()
                    .is_some_and(|(ns, name)| join(ns, name) == node)
            })
            .map(|e| e.gid[..12].try_into().unwrap())
            .collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        prefixes
    };
    let moved_here = || {
        let named = graph
            .node_names()
            .iter()
            .filter(|(ns, name)| join(ns, name) == "/wasm_replier")
            .count();
        let host_b = participant_of("/roslite_host/b");
        named == 1 && host_b.len() == 1 && participant_of("/wasm_replier") == host_b
    };
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while !moved_here() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        moved_here(),
        "the graph after the move: nodes {:?}; /wasm_replier's participants {:?}, host a's {:?}, \
         host b's {:?}",
        graph.node_names(),
        participant_of("/wasm_replier"),
        participant_of("/roslite_host/a"),
        participant_of("/roslite_host/b")
    );
    assert_ne!(
        participant_of("/roslite_host/a"),
        participant_of("/roslite_host/b")
    );
}

/// A node's fully qualified name from its namespace and name.
fn join(namespace: &str, name: &str) -> String {
    format!("{}/{name}", namespace.trim_end_matches('/'))
}

/// The state guest (tests/guests/migration_state.c, whose `count` service answers "served=N
/// ..."), alone in a module directory of its own.
fn state_modules() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let wasm = common::c_guest(
            "crates/roslite-wasm/tests/guests/migration_state.c",
            "migration_state.wasm",
        );
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host-state-modules");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&wasm, dir.join("migration_state.wasm")).unwrap();
        dir
    })
}

/// The domain of the same-host service tests (a network namespace of their own each).
const SAME_HOST_DOMAIN: u32 = 206;

/// A client in the test process calls the state guest's `count` service every few ms over one
/// same-host path (`transport`: every process offers only it, `ROSLITE_TRANSPORTS`) while the
/// guest moves back and forth between two host processes, each move asked of its host over
/// ROS 2 (`migrate_node`): every call is answered exactly once, and the guest's count of the
/// requests it served goes on without a gap.
fn service_calls_over_a_same_host_path_while_the_node_moves(transport: &str) {
    let ns = NetNs::create("wasmhost").expect("a network namespace");
    // Inside the namespace throughout: threads of this process that start same-host links
    // (those that make the clients) reach the hosts' endpoints, which are abstract Unix
    // sockets of the namespace.
    ns.run(|| calls_while_moving(&ns, transport))
        .unwrap_or_else(|e| panic!("{e}"));
}

fn calls_while_moving(ns: &NetNs, transport: &str) {
    use roslite::msgs::std_srvs::srv::Trigger;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const MOVES: usize = 6;
    let context = common::networked_with(
        ns,
        SAME_HOST_DOMAIN,
        roslite::LocalTransports::parse(transport).unwrap(),
    );
    let node = context.create_node("state_client").unwrap();
    let count = node.create_client::<Trigger>("/count").unwrap();
    let executor = roslite::Executor::new(&context);
    executor.add_node(&node);
    let spinner = std::thread::spawn(move || executor.spin());
    let start = |name: &str, engine: &str, accept_from: &str, guest: Option<&Path>| {
        let mut command = host_command(
            ns,
            name,
            engine,
            accept_from,
            state_modules(),
            SAME_HOST_DOMAIN,
        );
        command.args(guest).env("ROSLITE_TRANSPORTS", transport);
        HostProcess(command.spawn().expect("start a host"))
    };
    let guest = state_modules().join("migration_state.wasm");
    let _a = start("a", "wasmtime", "b", Some(&guest));
    let _b = start("b", "wasmi", "a", None);
    assert!(count.wait_for_service(Duration::from_secs(30)));
    let first = count
        .call(Default::default(), Duration::from_secs(10))
        .unwrap();
    assert_eq!(first.message, "served=1 offset=0 accepted=0");
    let paths: Vec<&str> = context
        .graph()
        .endpoints()
        .iter()
        .filter(|e| {
            e.topic == "/count"
                && e.topic_kind == roslite::graph::RosTopicKind::ServiceRequest
                && e.kind == roslite::graph::GraphEndpointKind::Subscription
        })
        .map(|e| e.transport)
        .collect();
    assert_eq!(
        paths,
        [transport],
        "the client does not reach the guest over {transport}"
    );

    let migrate = |from: &str, to: &str| {
        let client = node
            .create_client::<MigrateNode>(&format!("/roslite_host/{from}/migrate_node"))
            .unwrap();
        assert!(client.wait_for_service(Duration::from_secs(20)));
        client
            .call(
                MigrateNode_Request {
                    node: "migration_state".into(),
                    to: to.into(),
                },
                Duration::from_secs(40),
            )
            .unwrap()
    };
    let done = AtomicBool::new(false);
    let calls = AtomicUsize::new(1);
    let await_calls = |more: usize| {
        let from = calls.load(Ordering::SeqCst);
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while calls.load(Ordering::SeqCst) < from + more {
            assert!(std::time::Instant::now() < until, "the calls stopped");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let answers = std::thread::scope(|scope| {
        let _stop = common::StopOnDrop(&done);
        let caller = scope.spawn(|| {
            let mut answers = Vec::new();
            while !done.load(Ordering::SeqCst) {
                let answer = count
                    .call(Default::default(), Duration::from_secs(10))
                    .unwrap_or_else(|e| panic!("call {} got no answer: {e}", answers.len() + 2));
                answers.push(answer.message);
                calls.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(3));
            }
            answers
        });
        let moved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for i in 0..MOVES {
                let (from, to) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
                await_calls(3);
                let moved = migrate(from, to);
                assert!(
                    moved.success,
                    "move {} from {from} to {to}: {}",
                    i + 1,
                    moved.message
                );
            }
            await_calls(3);
        }));
        done.store(true, Ordering::SeqCst);
        let answers = caller.join().unwrap();
        if let Err(panic) = moved {
            std::panic::resume_unwind(panic);
        }
        answers
    });
    let served = common::served_in_turn(&answers);
    std::thread::sleep(Duration::from_millis(300));
    let stats = count.stats();
    assert_eq!(stats.unmatched_replies, 0, "a request was answered twice");
    assert_eq!(stats.timeouts, 0);
    eprintln!(
        "{transport}: {} calls answered once each across {MOVES} moves",
        served.len() + 1
    );
    context.shutdown();
    spinner.join().unwrap();
}

#[test]
fn service_calls_over_shared_memory_are_answered_once_while_the_node_moves_between_processes() {
    service_calls_over_a_same_host_path_while_the_node_moves("shm");
}

#[test]
fn service_calls_over_unix_sockets_are_answered_once_while_the_node_moves_between_processes() {
    service_calls_over_a_same_host_path_while_the_node_moves("uds");
}
