//! WebAssembly nodes against real ROS 2 (rclpy over Fast DDS, from the PyPI wheels in ./.venv,
//! which `cargo xtask test` installs), inside a network namespace made for each test (only
//! `lo`, multicast on: default discovery works and nothing leaves the machine), a ROS domain
//! for each exchange, as roslite-c's `cpp_rclpy.rs` does for native C++ nodes.
//!
//! Each guest runs in `roslite-wasm-host` (this crate's `roslite run` program) started inside
//! the namespace, on the engine the test names:
//!
//! - C (examples/wasm/c/talker.c) publishes /chatter to an rclpy listener; rclpy publishes to a
//!   Rust guest (examples/wasm/rust listener), whose log lines show what it heard;
//! - an rclcpp guest (tests/guests/rclcpp_rclpy.cpp) serves std_srvs to rclpy and calls rclpy's,
//!   and rclpy's graph API and parameter client see it as a node like any other, under the name
//!   given with `--ros-args -r __node:=...`, with the value given with `-p`;
//! - mROS 2's echoreply (crates/roslite-c/tests/cpp/mros2_apps/echoreply.cpp) echoes rclpy's messages back;
//! - one deterministic guest (tests/guests/deterministic_reply.c) answers the same sequence
//!   from rclpy with byte-identical replies on wasmtime and on wasmi.
//!
//! The rclpy peers are interop/python/{chatter_listener,chatter_talker,service_peer,
//! wasm_node_peer,mros2_peer,sequence_peer}.py. The guest toolchain (clang, lld, wasi-libc,
//! libc++ for wasm32) and the wasm32-wasip1 Rust target are needed as for tests/guest_build.rs
//! and roslite-guest's build_guest.rs; without them, or without rclpy, these tests fail and
//! say what is missing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use roslite_transport::netns::NetNs;
use roslite_wasm::EngineKind;

mod common;
use common::{c_guest, cpp_guest, workspace};

fn c_talker() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| c_guest("examples/wasm/c/talker.c", "c_talker.wasm"))
}

fn deterministic_reply() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        c_guest(
            "crates/roslite-wasm/tests/guests/deterministic_reply.c",
            "deterministic_reply.wasm",
        )
    })
}

fn rclcpp_node() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        cpp_guest(
            "crates/roslite-wasm/tests/guests/rclcpp_rclpy.cpp",
            "rclcpp_rclpy.wasm",
        )
    })
}

fn mros2_echoreply() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        cpp_guest(
            "crates/roslite-c/tests/cpp/mros2_apps/echoreply.cpp",
            "mros2_echoreply.wasm",
        )
    })
}

/// The Rust example guests (examples/wasm/rust), built as roslite-guest's build_guest.rs
/// builds them (the same target directory); the directory holding their .wasm files.
fn rust_examples() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let output = Command::new("rustc")
            .args(["--print", "target-libdir", "--target", "wasm32-wasip1"])
            .output()
            .expect("run rustc");
        let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        assert!(
            output.status.success() && Path::new(&libdir).is_dir(),
            "the wasm32-wasip1 target is not installed; run `rustup target add wasm32-wasip1`"
        );
        let target_dir = workspace().join("target").join("wasm-guest-test");
        let output = Command::new(env!("CARGO"))
            .current_dir(workspace().join("examples/wasm/rust"))
            .args(["build", "--release", "--target", "wasm32-wasip1"])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .output()
            .expect("run cargo");
        assert!(
            output.status.success(),
            "building examples/wasm/rust for wasm32-wasip1 failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // As a user would: each node prepared for parking (`roslite wasm build X.wasm`).
        let built = target_dir.join("wasm32-wasip1").join("release");
        let prepared = target_dir.join("parks");
        std::fs::create_dir_all(&prepared).unwrap();
        for node in ["talker", "listener"] {
            let name = format!("{node}.wasm");
            roslite_wasm::guest_build::prepare_for_parking(
                &built.join(&name),
                &prepared.join(&name),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        prepared
    })
}

fn namespace() -> NetNs {
    NetNs::create("rlwasm").expect("create a network namespace (needs root and iproute2)")
}

/// A domain for one exchange of a test (`offset` < 8), at most 227. Each test has a namespace
/// of its own too, so domains only keep its exchanges apart.
fn domain(offset: u32) -> u32 {
    100 + (std::process::id() % 16) * 8 + offset
}

fn rclpy(ns: &NetNs, domain: u32, script: &str, args: &[&str]) -> Child {
    let python = workspace().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs rclpy",
        python.display()
    );
    ns.command(python)
        .arg(workspace().join("interop/python").join(script))
        .args(args)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `roslite run GUEST --engine ENGINE [--ros-args ROS_ARGS...]` inside `ns`.
fn host(ns: &NetNs, domain: u32, guest: &Path, engine: EngineKind, ros_args: &[&str]) -> Child {
    let mut command = ns.command(env!("CARGO_BIN_EXE_roslite-wasm-host"));
    command.arg(guest).args(["--engine", engine.name()]);
    if !ros_args.is_empty() {
        command.arg("--ros-args").args(ros_args);
    }
    command
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROS_LOCALHOST_ONLY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` up to `limit` (then stops it); its status, stdout and stderr.
fn finish(child: Child, limit: Duration) -> (bool, String, String) {
    until(child, limit, |_, _| false)
}

/// SIGTERM: a host shuts its context down, so its guests' spin loops return.
fn stop(child: &mut Child) {
    if matches!(child.try_wait(), Ok(None)) {
        let _ = Command::new("kill").arg(child.id().to_string()).status();
    }
}

/// Everything `stream` yields, gathered on a thread of its own.
fn collect(mut stream: impl Read + Send + 'static) -> (Arc<Mutex<String>>, JoinHandle<()>) {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    let thread = std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buffer) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    (text, thread)
}

/// Runs `child` until it ends, `done` holds for its output so far (stdout, stderr) or `limit`
/// passed; stops it if it still runs (SIGTERM, then SIGKILL 10 s later). Its status, stdout
/// and stderr.
fn until(
    mut child: Child,
    limit: Duration,
    done: impl Fn(&str, &str) -> bool,
) -> (bool, String, String) {
    let (out, out_thread) = collect(child.stdout.take().unwrap());
    let (err, err_thread) = collect(child.stderr.take().unwrap());
    let start = Instant::now();
    while start.elapsed() < limit
        && child.try_wait().unwrap().is_none()
        && !done(&out.lock().unwrap(), &err.lock().unwrap())
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop(&mut child);
    let stopped = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if stopped.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = child.wait().unwrap().success();
    out_thread.join().unwrap();
    err_thread.join().unwrap();
    let out = out.lock().unwrap().clone();
    let err = err.lock().unwrap().clone();
    (ok, out, err)
}

/// Stops a host and returns its output.
fn stop_host(mut child: Child) -> (bool, String, String) {
    stop(&mut child);
    finish(child, Duration::from_secs(10))
}

// ---- 1: C and Rust guests, topics both ways ------------------------------------------------

fn c_talker_and_rust_listener(engine: EngineKind) {
    let ns = namespace();
    // The C talker's /chatter reaches an rclpy listener, whose graph lists the guest's node.
    let d = domain(0);
    let listener = rclpy(&ns, d, "chatter_listener.py", &["40", "5"]);
    let talker = host(&ns, d, c_talker(), engine, &[]);
    let (ok, out, err) = finish(listener, Duration::from_secs(50));
    let (_, talker_out, talker_err) = stop_host(talker);
    assert!(
        ok && out.contains("RESULT 5"),
        "{out}\n{err}\n{talker_out}\n{talker_err}"
    );
    assert!(out.contains("HEARD Hello from Wasm: "), "{out}");
    assert!(
        out.contains("/wasm_talker"),
        "rclpy's graph lists the guest's node: {out}"
    );
    assert!(
        talker_out.contains("Publishing: 'Hello from Wasm: 1'"),
        "{talker_out}"
    );

    // rclpy's /chatter reaches the Rust listener, which logs it on the host's stderr.
    let d = domain(1);
    let listener = host(&ns, d, &rust_examples().join("listener.wasm"), engine, &[]);
    let mut talker = rclpy(&ns, d, "chatter_talker.py", &["40"]);
    let (_, listener_out, heard) = until(listener, Duration::from_secs(45), |_, err| {
        err.matches("I heard: [from rclpy ").count() >= 5
    });
    stop(&mut talker);
    let _ = finish(talker, Duration::from_secs(5));
    assert!(
        heard.matches("I heard: [from rclpy ").count() >= 5,
        "{heard}\n{listener_out}"
    );
}

#[test]
fn c_talker_and_rust_listener_with_rclpy_on_wasmtime() {
    c_talker_and_rust_listener(EngineKind::Wasmtime);
}

#[test]
fn c_talker_and_rust_listener_with_rclpy_on_wasmi() {
    c_talker_and_rust_listener(EngineKind::Wasmi);
}

// ---- 2: an rclcpp guest: services each way, the graph, parameters --------------------------

fn rclcpp_guest_services_each_way(engine: EngineKind) {
    let ns = namespace();
    // rclpy calls the guest's std_srvs services.
    let d = domain(2);
    let server = host(&ns, d, rclcpp_node(), engine, &[]);
    let caller = rclpy(&ns, d, "service_peer.py", &["call", "40", "2"]);
    let (_, out, err) = finish(caller, Duration::from_secs(50));
    let (_, server_out, server_err) = stop_host(server);
    let all = format!("{out}\n{err}\n{server_out}\n{server_err}");
    assert!(out.contains("REPLY /motor_power True motor on"), "{all}");
    assert!(out.contains("REPLY /motor_power False motor off"), "{all}");
    assert!(out.contains("REPLY /trigger True triggered 2"), "{all}");
    assert!(out.contains("RESULT 4"), "{all}");
    assert!(
        out.contains("/motor_power std_srvs/srv/SetBool"),
        "rclpy's graph lists the guest's services: {all}"
    );
    assert!(server_out.contains("SERVED motor_power 1"), "{all}");
    assert!(server_out.contains("FINAL rate 1 label none"), "{all}");

    // The guest calls rclpy's.
    let d = domain(3);
    let mut server = rclpy(&ns, d, "service_peer.py", &["serve", "40", "2"]);
    let client = host(&ns, d, rclcpp_node(), engine, &["-p", "role:=client"]);
    let (ok, client_out, client_err) = finish(client, Duration::from_secs(45));
    stop(&mut server);
    let (_, out, err) = finish(server, Duration::from_secs(5));
    let all = format!("{client_out}\n{client_err}\n{out}\n{err}");
    assert!(ok, "{all}");
    assert!(client_out.contains("role client"), "{all}");
    assert!(
        client_out.contains("REPLY 1 motor on") && client_out.contains("REPLY 0 motor off"),
        "{all}"
    );
    assert!(client_out.contains("CLIENT DONE"), "{all}");
    assert!(out.contains("SERVED /motor_power True"), "{all}");
}

#[test]
fn rclcpp_guest_services_each_way_with_rclpy_on_wasmtime() {
    rclcpp_guest_services_each_way(EngineKind::Wasmtime);
}

#[test]
fn rclcpp_guest_services_each_way_with_rclpy_on_wasmi() {
    rclcpp_guest_services_each_way(EngineKind::Wasmi);
}

/// The rclcpp guest's client, introspected with its contents, calls an introspected rclpy
/// server: the peer hears both sides' events and checks them (`verdict ok`).
#[test]
fn introspected_rclcpp_guest_client_with_rclpy_on_wasmtime() {
    let ns = namespace();
    let d = domain(7);
    let server = rclpy(
        &ns,
        d,
        "introspection_peer.py",
        &["server", "/motor_power", "2"],
    );
    let client = host(
        &ns,
        d,
        rclcpp_node(),
        EngineKind::Wasmtime,
        &["-p", "role:=introspected_client"],
    );
    let (ok, client_out, client_err) = finish(client, Duration::from_secs(45));
    let (_, out, err) = finish(server, Duration::from_secs(40));
    let all = format!("{client_out}\n{client_err}\n{out}\n{err}");
    assert!(ok, "{all}");
    assert!(
        client_out.contains("REPLY 1 on") && client_out.contains("REPLY 0 off"),
        "{all}"
    );
    assert!(out.lines().any(|l| l == "verdict ok"), "{all}");
}

/// rclpy sees the guest under its remapped name, with its topics, services and parameters,
/// reads the `-p` value, and sets parameters the guest then reads (its on-set callback
/// refusing a negative rate).
fn rclcpp_guest_on_rclpys_graph(engine: EngineKind) {
    let ns = namespace();
    let d = domain(4);
    let node = host(
        &ns,
        d,
        rclcpp_node(),
        engine,
        &[
            "-r",
            "__node:=renamed_wasm",
            "-r",
            "__ns:=/robot",
            "-p",
            "rate:=7",
        ],
    );
    let peer = rclpy(
        &ns,
        d,
        "wasm_node_peer.py",
        &["40", "/robot", "renamed_wasm"],
    );
    let (ok, out, err) = finish(peer, Duration::from_secs(50));
    // Give the guest's 100 ms timer a tick to read the values rclpy set.
    std::thread::sleep(Duration::from_millis(500));
    let (_, node_out, node_err) = stop_host(node);
    let all = format!("{out}\n{err}\n{node_out}\n{node_err}");
    assert!(ok && out.contains("DONE"), "{all}");
    assert!(
        node_out.contains("START /robot/renamed_wasm rate 7 label none"),
        "the guest sees its remapped name and the -p value: {all}"
    );
    let nodes = out.lines().find(|l| l.starts_with("NODES ")).unwrap_or("");
    assert!(nodes.contains("/robot/renamed_wasm"), "{all}");
    assert!(
        !nodes.contains("wasm_cpp_node"),
        "the node's own name is remapped away: {all}"
    );
    for line in [
        "TOPIC /robot/wasm_chatter std_msgs/msg/String",
        "TOPIC /robot/wasm_chatter_in std_msgs/msg/String",
        "NODE_PUB /robot/wasm_chatter std_msgs/msg/String",
        "NODE_SUB /robot/wasm_chatter_in std_msgs/msg/String",
        "NODE_SRV /robot/motor_power std_srvs/srv/SetBool",
        "NODE_SRV /robot/trigger std_srvs/srv/Trigger",
        "NODE_SRV /robot/renamed_wasm/get_parameters rcl_interfaces/srv/GetParameters",
        "NODE_SRV /robot/renamed_wasm/list_parameters rcl_interfaces/srv/ListParameters",
        "PUB_INFO /robot/wasm_chatter /robot/renamed_wasm std_msgs/msg/String",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?}: {all}");
    }
    let list = out.lines().find(|l| l.starts_with("LIST ")).unwrap_or("");
    for name in ["label", "rate", "role"] {
        assert!(
            list.split(' ').any(|n| n == name),
            "list_parameters has {name}: {all}"
        );
    }
    assert!(out.contains("GET rate 7\n"), "{all}");
    assert!(out.contains("GET label none\n"), "{all}");
    assert!(out.contains("SET label True"), "{all}");
    assert!(
        out.contains("SET rate False rate must not be negative"),
        "{all}"
    );
    assert!(out.contains("SET rate True"), "{all}");
    assert!(
        node_out.contains("FINAL rate 20 label set by rclpy"),
        "the guest reads what rclpy set: {all}"
    );
}

#[test]
fn rclcpp_guest_on_rclpys_graph_on_wasmtime() {
    rclcpp_guest_on_rclpys_graph(EngineKind::Wasmtime);
}

#[test]
fn rclcpp_guest_on_rclpys_graph_on_wasmi() {
    rclcpp_guest_on_rclpys_graph(EngineKind::Wasmi);
}

// ---- 3: mROS 2 -------------------------------------------------------------------------------

/// echoreply: what rclpy publishes on /to_stm comes back on /to_linux.
fn mros2_echoreply_with_rclpy(engine: EngineKind) {
    let ns = namespace();
    let d = domain(5);
    let app = host(&ns, d, mros2_echoreply(), engine, &[]);
    let peer = rclpy(&ns, d, "mros2_peer.py", &["40", "5"]);
    let (ok, out, err) = finish(peer, Duration::from_secs(50));
    let (_, app_out, app_err) = stop_host(app);
    let all = format!("{out}\n{err}\n{app_out}\n{app_err}");
    assert!(ok && out.contains("RESULT 5"), "{all}");
    assert_eq!(out.matches("HEARD from rclpy ").count(), 5, "{all}");
    assert!(app_out.contains("app name: echoreply"), "{all}");
    assert!(app_out.contains("subscribed msg: 'from rclpy "), "{all}");
}

#[test]
fn mros2_echoreply_with_rclpy_on_wasmtime() {
    mros2_echoreply_with_rclpy(EngineKind::Wasmtime);
}

#[test]
fn mros2_echoreply_with_rclpy_on_wasmi() {
    mros2_echoreply_with_rclpy(EngineKind::Wasmi);
}

// ---- 4: the same guest on both engines -----------------------------------------------------

/// The deterministic guest answers rclpy's fixed sequence; the replies as serialized bytes.
fn replies(ns: &NetNs, d: u32, engine: EngineKind, count: usize) -> Vec<String> {
    let guest = host(ns, d, deterministic_reply(), engine, &[]);
    let peer = rclpy(ns, d, "sequence_peer.py", &["60", &count.to_string()]);
    let (ok, out, err) = finish(peer, Duration::from_secs(70));
    let (_, guest_out, guest_err) = stop_host(guest);
    let all = format!("{}:\n{out}\n{err}\n{guest_out}\n{guest_err}", engine.name());
    assert!(ok && out.contains(&format!("RESULT {count}\n")), "{all}");
    out.lines()
        .filter_map(|l| l.strip_prefix("OUT "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_same_guest_replies_byte_for_byte_alike_on_wasmtime_and_wasmi() {
    const COUNT: usize = 40;
    let ns = namespace();
    let on_wasmtime = replies(&ns, domain(6), EngineKind::Wasmtime, COUNT);
    let on_wasmi = replies(&ns, domain(7), EngineKind::Wasmi, COUNT);
    assert_eq!((on_wasmtime.len(), on_wasmi.len()), (COUNT, COUNT));
    // The replies carry the whole history (n, a running state): equal replies mean the same
    // messages in the same order, computed alike.
    for (i, (a, b)) in on_wasmtime.iter().zip(&on_wasmi).enumerate() {
        assert_eq!(a, b, "reply {i} differs between wasmtime and wasmi");
    }
    let last = on_wasmtime.last().unwrap();
    let text: Vec<u8> = (0..last.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&last[i..i + 2], 16).unwrap())
        .collect();
    assert!(
        String::from_utf8_lossy(&text).contains(&format!(" | n={COUNT} fnv=")),
        "{}",
        String::from_utf8_lossy(&text)
    );
}

// ---- Same-host paths -----------------------------------------------------------------------

/// A Wasm node reaches a Wasm node of another host process over each same-host path alone
/// (`ROSLITE_TRANSPORTS=shm`, then `uds`: no UDP for user data), as native roslite nodes do.
#[test]
fn guests_in_two_hosts_talk_over_shared_memory_and_unix_sockets() {
    let ns = namespace();
    for (offset, transports) in [(5, "shm"), (6, "uds")] {
        let d = domain(offset);
        let with_transports = |guest: &Path| {
            let mut command = ns.command(env!("CARGO_BIN_EXE_roslite-wasm-host"));
            command
                .arg(guest)
                .env("ROS_DOMAIN_ID", d.to_string())
                .env("ROSLITE_TRANSPORTS", transports)
                .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
                .env_remove("ROS_STATIC_PEERS")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            command.spawn().unwrap()
        };
        let listener = with_transports(&rust_examples().join("listener.wasm"));
        let talker = with_transports(c_talker());
        let (_, listener_out, heard) = until(listener, Duration::from_secs(40), |_, err| {
            err.matches("I heard: [Hello from Wasm: ").count() >= 5
        });
        let (_, talker_out, talker_err) = stop_host(talker);
        assert!(
            heard.matches("I heard: [Hello from Wasm: ").count() >= 5,
            "{transports}: {heard}\n{listener_out}\n{talker_out}\n{talker_err}"
        );
    }
}

/// An mROS 2 application publishes in a loop of `osDelay` and never returns from `main`: on
/// SIGTERM the host shuts down, the node is ended at its next wait, and the host exits 0.
#[test]
fn sigterm_ends_an_mros2_loop_that_never_returns() {
    let ns = namespace();
    let guest = cpp_guest(
        "crates/roslite-c/tests/cpp/mros2_apps/pub_twist.cpp",
        "mros2_pub_twist.wasm",
    );
    for engine in [EngineKind::Wasmtime, EngineKind::Wasmi] {
        let child = host(&ns, domain(7), &guest, engine, &[]);
        // `until` sends SIGTERM once the loop runs (600 publishes, 50 ms apart: 30 s), then
        // waits for the exit.
        let (ok, out, err) = until(child, Duration::from_secs(25), |out, err| {
            out.contains("ready to publish") || err.contains("ready to publish")
        });
        assert!(
            (out.clone() + &err).contains("ready to publish"),
            "{engine:?}: {out}\n{err}"
        );
        assert!(
            ok,
            "{engine:?}: the host did not exit cleanly: {out}\n{err}"
        );
    }
}
