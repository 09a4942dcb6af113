//! The host against guests written in WebAssembly text, which need no toolchain: a node's
//! life cycle on both engines, and every way a module or a guest can go wrong.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite_msgs::std_msgs::msg::String as StringMsg;
use roslite_msgs::Message;
use roslite_wasm::engine::LoadError;
use roslite_wasm::host::HostError;
use roslite_wasm::module::ModuleError;
use roslite_wasm::{EngineKind, Fault, GuestSpec, Host, HostOptions, Limits};

mod common;

fn guest(name: &str, replacements: &[(&str, String)]) -> PathBuf {
    guest_from("tests/guests", name, replacements)
}

/// `DIR/NAME.wat` (DIR relative to this crate) with `replacements`, as a binary module.
fn guest_from(dir: &str, name: &str, replacements: &[(&str, String)]) -> PathBuf {
    let mut text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(dir)
            .join(format!("{name}.wat")),
    )
    .unwrap();
    for (from, to) in replacements {
        text = text.replace(from, to);
    }
    let wasm = wat::parse_str(&text).unwrap();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}.wasm", std::process::id()));
    std::fs::write(&path, wasm).unwrap();
    path
}

fn talker(count: u32) -> PathBuf {
    guest(
        "talker",
        &[
            ("@HASH@", StringMsg::TYPE_HASH.to_owned()),
            ("@COUNT@", count.to_string()),
            ("@PERIOD_NS@", "20000000".to_owned()),
        ],
    )
}

/// A guest publishes from its timer callback to a native subscription in the same process;
/// when it shuts its context down its `main` returns.
fn talker_reaches_a_native_subscriber(engine: EngineKind) {
    let host = Host::start(
        &[GuestSpec { path: talker(5) }],
        &HostOptions {
            engine,
            context: Some(roslite::Context::new(Default::default()).unwrap()),
            ..Default::default()
        },
    )
    .unwrap();
    let context = host.context();
    let node = context.create_node("listener").unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let _subscription = node
        .create_subscription("/chatter", 10, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data)
        })
        .unwrap();
    let executor = roslite::Executor::new(&context);
    executor.add_node(&node);
    let start = Instant::now();
    while received.lock().unwrap().len() < 3 && start.elapsed() < Duration::from_secs(20) {
        executor.spin_once(Some(Duration::from_millis(50)));
    }
    let ends = host.wait();
    assert_eq!(ends.len(), 1);
    assert!(ends[0].outcome.is_ok(), "{:?}", ends[0].outcome);
    let got = received.lock().unwrap().clone();
    assert!(got.len() >= 3, "received {got:?}");
    assert!(got.iter().all(|d| d == "hi"), "{got:?}");
}

#[test]
fn talker_on_wasmtime() {
    talker_reaches_a_native_subscriber(EngineKind::Wasmtime);
}

#[test]
fn talker_on_wasmi() {
    talker_reaches_a_native_subscriber(EngineKind::Wasmi);
}

/// The echo guest (guests/echo.wat), as written or prepared for parking.
fn echo(parks: bool) -> PathBuf {
    static BUILT: Mutex<Option<(PathBuf, PathBuf)>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap();
    let (written, prepared) = built.get_or_insert_with(|| {
        let written = guest_from(
            "guests",
            "echo",
            &[("@HASH@", StringMsg::TYPE_HASH.to_owned())],
        );
        let prepared = written.with_extension("parks.wasm");
        roslite_wasm::guest_build::prepare_for_parking(&written, &prepared)
            .unwrap_or_else(|e| panic!("{e}"));
        (written, prepared)
    });
    if parks {
        prepared.clone()
    } else {
        written.clone()
    }
}

fn networked(ns: &roslite_transport::netns::NetNs) -> roslite::Context {
    common::networked(ns, 42)
}

/// The echo guest answers every ping of a native node in another context of this process
/// (inside a network namespace of the test's own). Prepared for parking, its `main` parks in
/// its spin and its callbacks run on the thread that receives each ping, as a native node's
/// do; as written it waits inside its instance and every callback runs on its own thread.
fn echo_answers_every_ping(engine: EngineKind, parks: bool) {
    let ns = roslite_transport::netns::NetNs::create("wasmpark").expect("a network namespace");
    let host = Host::start(
        &[GuestSpec { path: echo(parks) }],
        &HostOptions {
            engine,
            context: Some(networked(&ns)),
            ..Default::default()
        },
    )
    .unwrap();
    let context = networked(&ns);
    let node = context.create_node("pinger").unwrap();
    let ty = roslite::TypeInfo::of::<StringMsg>();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let _pong = node
        .create_serialized_subscription("/wasm_bench/pong", ty, 10, move |bytes, _| {
            let _ = tx.send(bytes.bytes().to_vec());
        })
        .unwrap();
    let ping = node
        .create_serialized_publisher("/wasm_bench/ping", ty, 10)
        .unwrap();
    let executor = roslite::Executor::new(&context);
    executor.add_node(&node);
    let spinner = std::thread::spawn(move || executor.spin());
    // The echo sends the bytes it got; RTPS may pad them, so what comes back is compared as
    // a message.
    let message = |i: usize| {
        roslite_cdr::to_vec(
            &StringMsg {
                data: format!("ping {i}"),
            },
            roslite_cdr::Endianness::Little,
        )
        .unwrap()
    };
    // Until the echo is up, pings may go unanswered.
    let up_by = Instant::now() + Duration::from_secs(20);
    loop {
        ping.publish(&message(0)).unwrap();
        if rx.recv_timeout(Duration::from_millis(50)).is_ok() {
            break;
        }
        assert!(Instant::now() < up_by, "the echo never answered");
    }
    while rx.try_recv().is_ok() {}
    for i in 1..=50 {
        let sent = message(i);
        ping.publish(&sent).unwrap();
        let back = rx.recv_timeout(Duration::from_secs(5)).expect("an answer");
        let back: StringMsg = roslite_cdr::from_bytes(&back).expect("a String");
        assert_eq!(back.data, format!("ping {i}"), "ping {i} came back changed");
    }
    let statistics = host.statistics().remove(0);
    host.shutdown();
    context.shutdown();
    spinner.join().unwrap();
    let ends = host.wait();
    assert!(ends[0].outcome.is_ok(), "{:?}", ends[0].outcome);
    if parks {
        assert!(statistics.parks >= 1, "{statistics:?}");
        assert!(statistics.callbacks_elsewhere >= 1, "{statistics:?}");
    } else {
        assert_eq!(statistics.parks, 0, "{statistics:?}");
        assert_eq!(statistics.callbacks_elsewhere, 0, "{statistics:?}");
    }
}

#[test]
fn parked_echo_on_wasmtime() {
    echo_answers_every_ping(EngineKind::Wasmtime, true);
}

#[test]
fn parked_echo_on_wasmi() {
    echo_answers_every_ping(EngineKind::Wasmi, true);
}

#[test]
fn echo_waiting_inside_on_wasmtime() {
    echo_answers_every_ping(EngineKind::Wasmtime, false);
}

#[test]
fn echo_waiting_inside_on_wasmi() {
    echo_answers_every_ping(EngineKind::Wasmi, false);
}

fn options(engine: EngineKind) -> HostOptions {
    HostOptions {
        engine,
        context: Some(roslite::Context::new(Default::default()).unwrap()),
        limits: Limits {
            deadline: Duration::from_millis(200),
            fuel: 50_000_000,
            max_memory_bytes: 4 << 20,
        },
        ..Default::default()
    }
}

/// Counts `/chatter` messages in this process.
struct Listener {
    _node: roslite::Node,
    _subscription: roslite::Subscription<StringMsg>,
    executor: roslite::Executor,
    count: Arc<Mutex<usize>>,
}

impl Listener {
    fn new(context: &roslite::Context) -> Self {
        let node = context.create_node("listener").unwrap();
        let count = Arc::new(Mutex::new(0));
        let sink = count.clone();
        let subscription = node
            .create_subscription("/chatter", 10, move |_: StringMsg| {
                *sink.lock().unwrap() += 1
            })
            .unwrap();
        let executor = roslite::Executor::new(context);
        executor.add_node(&node);
        Self {
            _node: node,
            _subscription: subscription,
            executor,
            count,
        }
    }

    /// Spins until `more` messages came (or 20 s); how many came.
    fn receive(&self, more: usize) -> usize {
        let target = *self.count.lock().unwrap() + more;
        let start = Instant::now();
        while *self.count.lock().unwrap() < target && start.elapsed() < Duration::from_secs(20) {
            self.executor.spin_once(Some(Duration::from_millis(50)));
        }
        *self.count.lock().unwrap()
    }
}

/// A callback that never returns stops its node, named with the callback, while another node
/// of the same host keeps publishing.
fn runaway_callback_is_stopped(engine: EngineKind) {
    let host = Host::start(
        &[
            GuestSpec {
                path: guest("runaway", &[]),
            },
            GuestSpec {
                path: talker(1_000_000),
            },
        ],
        &options(engine),
    )
    .unwrap();
    let listener = Listener::new(&host.context());
    // The runaway node's first timer fires after 50 ms and is stopped 200 ms (or its fuel)
    // later; messages after that show the talker outlived it.
    std::thread::sleep(Duration::from_millis(600));
    let before = listener.receive(0);
    let after = listener.receive(5);
    assert!(
        after >= before + 5,
        "the talker stopped too: {before} then {after}"
    );
    host.shutdown();
    let ends = host.wait();
    let runaway = ends.iter().find(|e| e.name.starts_with("runaway")).unwrap();
    match &runaway.outcome {
        Err(Fault::Deadline { during, limit }) => {
            assert!(during.contains("timer callback"), "{during}");
            let expected = if engine == EngineKind::Wasmtime {
                "deadline"
            } else {
                "fuel"
            };
            assert!(limit.contains(expected), "{limit}");
        }
        other => panic!("expected a deadline fault, got {other:?}"),
    }
    let talker = ends.iter().find(|e| e.name.starts_with("talker")).unwrap();
    assert!(talker.outcome.is_ok(), "{:?}", talker.outcome);
}

#[test]
fn runaway_callback_on_wasmtime() {
    runaway_callback_is_stopped(EngineKind::Wasmtime);
}

#[test]
fn runaway_callback_on_wasmi() {
    runaway_callback_is_stopped(EngineKind::Wasmi);
}

fn exit_code(path: PathBuf, options: &HostOptions) -> i32 {
    let ends = Host::start(&[GuestSpec { path }], options).unwrap().wait();
    match &ends[0].outcome {
        Err(Fault::Exit(code)) => *code,
        Ok(()) => 0,
        other => panic!("expected an exit, got {other:?}"),
    }
}

/// Without a grant a guest cannot open a file (no descriptor 3: EBADF); with one it opens a
/// file inside, on both engines.
#[test]
fn files_only_with_a_grant() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("grant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("secret.txt"), "x").unwrap();
    for engine in [EngineKind::Wasmtime, EngineKind::Wasmi] {
        assert_eq!(
            exit_code(guest("files", &[]), &options(engine)),
            8,
            "EBADF without a grant ({engine:?})"
        );
        let granted = HostOptions {
            allowed_dirs: vec![
                roslite_wasm::host::parse_allowed_dir(dir.to_str().unwrap()).unwrap()
            ],
            ..options(engine)
        };
        assert_eq!(
            exit_code(guest("files", &[]), &granted),
            0,
            "opened with a grant ({engine:?})"
        );
    }
}

/// A guest growing its memory without end is refused at the cap (4 MiB here) and lives on.
#[test]
fn memory_is_capped() {
    for engine in [EngineKind::Wasmtime, EngineKind::Wasmi] {
        let pages = exit_code(guest("memory_bomb", &[]), &options(engine));
        assert_eq!(pages, 64, "4 MiB is 64 pages ({engine:?})");
    }
}

fn load_error(name: &str, engine: EngineKind) -> String {
    match Host::start(
        &[GuestSpec {
            path: guest(name, &[]),
        }],
        &options(engine),
    ) {
        Err(HostError::Load { error, .. }) => {
            assert!(
                matches!(error, LoadError::Check(_) | LoadError::Invalid(_)),
                "{error:?}"
            );
            error.to_string()
        }
        Err(other) => panic!("{name}: expected a load error, got {other}"),
        Ok(_) => panic!("{name}: loaded"),
    }
}

/// Modules that cannot work are refused before anything runs, saying why.
#[test]
fn unusable_modules_are_refused_with_the_reason() {
    for engine in [EngineKind::Wasmtime, EngineKind::Wasmi] {
        let text = load_error("other_abi", engine);
        assert!(
            text.contains("roslite_v2") && text.contains("roslite_v1"),
            "{text}"
        );
        let text = load_error("unknown_import", engine);
        assert!(text.contains("env.open_socket"), "{text}");
        let text = load_error("no_dispatch", engine);
        assert!(text.contains("roslite_guest_dispatch"), "{text}");
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("malformed.wasm");
        std::fs::write(&path, b"\0asm\x01\0\0\0\x05garbage").unwrap();
        match Host::start(&[GuestSpec { path }], &options(engine)) {
            Err(HostError::Load {
                error: LoadError::Check(ModuleError::Malformed(_)),
                ..
            }) => {}
            Err(other) => panic!("expected malformed, got {other}"),
            Ok(_) => panic!("a malformed module loaded"),
        }
    }
}
