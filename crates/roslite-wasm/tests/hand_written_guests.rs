//! The host against guests written in WebAssembly text, which need no toolchain: a node's
//! life cycle on both engines, and every way a module or a guest can go wrong.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite_msgs::std_msgs::msg::String as StringMsg;
use roslite_msgs::Message;
use roslite_wasm::{EngineKind, GuestSpec, Host, HostOptions};

fn guest(name: &str, replacements: &[(&str, String)]) -> PathBuf {
    let mut text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/guests")
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
