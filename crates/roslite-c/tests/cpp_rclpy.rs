//! The rclcpp-shaped C++ API against real ROS 2 (rclpy over Fast DDS, from the PyPI wheels in
//! ./.venv, which `cargo xtask test` installs), inside a network namespace made for each test
//! (only `lo`, multicast on: default discovery works and nothing leaves the machine), a ROS
//! domain each: /chatter both ways, std_srvs services each way, rclpy's parameter client
//! reading and setting a C++ node's parameters (its on-set callback refusing one), and a keyed
//! topic (`test_msgs/msg/KeyedLong`, `tests/cpp/keyed.cpp` against `keyed_peer.py`) both ways.
//!
//! Also the mROS 2-shaped applications (echoreply, echoback) against an rclpy peer, a
//! managed C++ node (`tests/cpp/lifecycle.cpp`) that rclpy drives through its lifecycle, and
//! an introspected C++ server and client, each against an introspected rclpy one.
//!
//! The C++ node is `tests/cpp/nodes.cpp`, compiled as `cpp_api.rs` compiles it; the rclpy
//! peers are `interop/python/{chatter_listener,chatter_talker,service_peer,cpp_param_peer,
//! mros2_peer,cpp_lifecycle_manager,introspection_peer}.py`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use roslite_transport::netns::NetNs;

mod common;

fn generated() -> &'static Path {
    static GENERATED: OnceLock<PathBuf> = OnceLock::new();
    GENERATED.get_or_init(|| {
        common::generated_cpp(
            &[
                "std_msgs",
                "example_interfaces",
                "std_srvs",
                "lifecycle_msgs",
            ],
            "generated_cpp_rclpy",
        )
    })
}

/// `tests/<source>` compiled into `out` in the test's temporary directory.
fn compile(source: &str, out: &str) -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out);
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(source);
    common::compile_cpp(&source, generated(), &out);
    out
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cpp_nodes() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| compile("cpp/nodes.cpp", "cpp_nodes_rclpy"))
}

fn namespace() -> NetNs {
    NetNs::create("rlcpp").expect("create a network namespace (needs root and iproute2)")
}

/// A domain for one test (`offset` < 8), at most 227. Each test has a namespace of its own
/// too, so domains only keep its two exchanges apart.
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

fn cpp(ns: &NetNs, domain: u32, args: &[&str]) -> Child {
    run_node(ns, cpp_nodes(), domain, args)
}

/// `tests/cpp/keyed.cpp`, run with `args`.
fn keyed(ns: &NetNs, domain: u32, args: &[&str]) -> Child {
    run_node(ns, keyed_node(), domain, args)
}

fn run_node(ns: &NetNs, program: &Path, domain: u32, args: &[&str]) -> Child {
    ns.command(program)
        .args(args)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROS_STATIC_PEERS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` up to `limit` (then kills it); its status, stdout and stderr.
fn finish(mut child: Child, limit: Duration) -> (bool, String, String) {
    let pid = child.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(limit);
        let _ = Command::new("kill").arg(pid.to_string()).status();
    });
    let mut out = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let ok = child.wait().unwrap().success();
    drop(killer);
    (ok, out, err)
}

fn stop(child: &Child) {
    let _ = Command::new("kill").arg(child.id().to_string()).status();
}

#[test]
fn cpp_talker_to_rclpy_listener_and_back() {
    let ns = namespace();
    let d = domain(0);
    let listener = rclpy(&ns, d, "chatter_listener.py", &["30", "5"]);
    let talker = cpp(&ns, d, &["chatter_talker", "300"]);
    let (ok, out, err) = finish(listener, Duration::from_secs(40));
    stop(&talker);
    let _ = finish(talker, Duration::from_secs(5));
    assert!(ok && out.contains("RESULT 5"), "{out}\n{err}");
    assert!(out.contains("HEARD from C++ "), "{out}");
    assert!(
        out.contains("/cpp_talker"),
        "rclpy's graph lists the C++ node: {out}"
    );

    let d = domain(1);
    let listener = cpp(&ns, d, &["chatter_listener", "5"]);
    let talker = rclpy(&ns, d, "chatter_talker.py", &["30"]);
    let (ok, out, err) = finish(listener, Duration::from_secs(40));
    stop(&talker);
    let _ = finish(talker, Duration::from_secs(5));
    assert!(ok, "{out}\n{err}");
    assert_eq!(out.matches("HEARD from rclpy ").count(), 5, "{out}\n{err}");
}

#[test]
fn services_each_way_between_cpp_and_rclpy() {
    let ns = namespace();
    let d = domain(2);
    let server = cpp(&ns, d, &["motor_server"]);
    let caller = rclpy(&ns, d, "service_peer.py", &["call", "40", "2"]);
    let (_, out, err) = finish(caller, Duration::from_secs(50));
    stop(&server);
    let _ = finish(server, Duration::from_secs(5));
    assert!(
        out.contains("REPLY /motor_power True motor on"),
        "{out}\n{err}"
    );
    assert!(
        out.contains("REPLY /motor_power False motor off"),
        "{out}\n{err}"
    );
    assert!(
        out.contains("REPLY /trigger True triggered 2"),
        "{out}\n{err}"
    );
    assert!(out.contains("RESULT 4"), "{out}\n{err}");

    let d = domain(3);
    let server = rclpy(&ns, d, "service_peer.py", &["serve", "40", "2"]);
    let client = cpp(&ns, d, &["motor_client"]);
    let (ok, out, err) = finish(client, Duration::from_secs(40));
    stop(&server);
    let _ = finish(server, Duration::from_secs(5));
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("REPLY 1 motor on") && out.contains("REPLY 0 motor off"),
        "{out}"
    );
}

#[test]
fn rclpy_reads_and_sets_a_cpp_nodes_parameters() {
    let ns = namespace();
    let d = domain(4);
    let node = cpp(&ns, d, &["param_node", "--ros-args", "-p", "rate:=7"]);
    let peer = rclpy(&ns, d, "cpp_param_peer.py", &["/cpp_params", "40"]);
    let (ok, out, err) = finish(peer, Duration::from_secs(50));
    stop(&node);
    let (_, node_out, node_err) = finish(node, Duration::from_secs(5));
    assert!(ok && out.contains("DONE"), "{out}\n{err}\n{node_err}");
    assert!(out.contains("GET rate 7\n"), "{out}");
    assert!(out.contains("GET label none\n"), "{out}");
    assert!(out.contains("SET label True"), "{out}");
    assert!(
        out.contains("SET rate False rate must not be negative"),
        "{out}"
    );
    assert!(out.contains("SET rate True"), "{out}");
    assert!(
        node_out.contains("FINAL rate 20 label set by rclpy"),
        "{node_out}\n{node_err}"
    );
}

#[test]
fn mros2_apps_talk_to_rclpy() {
    let ns = namespace();
    let app = |path: &Path, d: u32| {
        ns.command(path)
            .env("ROS_DOMAIN_ID", d.to_string())
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .env_remove("ROS_STATIC_PEERS")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // echoreply: what rclpy publishes on /to_stm comes back on /to_linux.
    let echoreply = compile("cpp/mros2_apps/echoreply.cpp", "mros2_echoreply_rclpy");
    let d = domain(5);
    let running = app(&echoreply, d);
    let peer = rclpy(&ns, d, "mros2_peer.py", &["40", "5"]);
    let (ok, out, err) = finish(peer, Duration::from_secs(50));
    stop(&running);
    let (_, app_out, _) = finish(running, Duration::from_secs(5));
    assert!(ok && out.contains("RESULT 5"), "{out}\n{err}\n{app_out}");
    assert_eq!(out.matches("HEARD from rclpy ").count(), 5, "{out}");
    assert!(
        app_out.contains("subscribed msg: 'from rclpy "),
        "{app_out}"
    );

    // echoback: the app's own messages reach rclpy; rclpy's reach the app's callback.
    let echoback = compile("cpp/mros2_apps/echoback.cpp", "mros2_echoback_rclpy");
    let d = domain(6);
    let running = app(&echoback, d);
    let peer = rclpy(&ns, d, "mros2_peer.py", &["40", "5"]);
    let (ok, out, err) = finish(peer, Duration::from_secs(50));
    stop(&running);
    let (_, app_out, _) = finish(running, Duration::from_secs(5));
    assert!(ok && out.contains("RESULT 5"), "{out}\n{err}");
    assert_eq!(
        out.matches("HEARD Hello from mros2 onto Linux: ").count(),
        5,
        "{out}"
    );
    assert!(
        app_out.contains("subscribed msg: 'from rclpy "),
        "{app_out}"
    );
}

/// `tests/cpp/keyed.cpp`, against the generated C++ types of `test_msgs`.
fn keyed_node() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let generated = common::generated_cpp(&["test_msgs"], "generated_cpp_keyed");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp_keyed_rclpy");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/keyed.cpp");
        common::compile_cpp(&source, &generated, &out);
        out
    })
}

/// A keyed topic (`test_msgs/msg/KeyedLong`) both ways between a C++ node and rclpy: the C++
/// node's endpoints are keyed as rclpy's are (entity kinds, key hashes), so Fast DDS matches
/// them. They used to be keyless, and Fast DDS matched neither way.
#[test]
fn keyed_messages_both_ways_between_cpp_and_rclpy() {
    let d = domain(7);
    let ns = namespace();
    let listener = rclpy(&ns, d, "keyed_peer.py", &["sub", "keyed", "30"]);
    let talker = keyed(&ns, d, &["talker", "400"]);
    // The listener runs its 30 s; the talker publishes for 20.
    let (_, talker_out, talker_err) = finish(talker, Duration::from_secs(40));
    stop(&listener);
    let (_, out, err) = finish(listener, Duration::from_secs(5));
    let heard: Vec<&str> = out.lines().filter(|l| l.starts_with("got ")).collect();
    assert!(
        heard.len() >= 5,
        "rclpy heard {} keyed messages from C++\n{out}\n{err}\n{talker_out}\n{talker_err}",
        heard.len()
    );
    for line in &heard {
        let (key, value) = key_and_value(line);
        assert_eq!(key, value % 3, "{line}");
    }

    let ns = namespace();
    let listener = keyed(&ns, d, &["listener", "5"]);
    let talker = rclpy(&ns, d, "keyed_peer.py", &["pub", "keyed", "30"]);
    let (ok, out, err) = finish(listener, Duration::from_secs(40));
    stop(&talker);
    let _ = finish(talker, Duration::from_secs(5));
    let heard: Vec<&str> = out.lines().filter(|l| l.starts_with("got ")).collect();
    assert!(
        ok && heard.len() == 5,
        "C++ heard {heard:?} from rclpy\n{out}\n{err}"
    );
    for line in &heard {
        let (key, value) = key_and_value(line);
        assert_eq!(key, value % 3, "{line}");
    }
}

/// `(K, V)` of a line `got key=K value=V`.
fn key_and_value(line: &str) -> (i64, i64) {
    let field = |name: &str| -> i64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line:?}"))
    };
    (field("key="), field("value="))
}

/// A managed C++ node in the shape of the ROS 2 demos' lifecycle_talker, managed by rclpy
/// through its lifecycle services as `ros2 lifecycle` does: each change's answer and the state
/// after it, messages on its topic only while it is active, and its transition events,
/// including an on_configure that throws (an error, handled by on_error) and the shutdown.
#[test]
fn rclpy_manages_a_cpp_lifecycle_node() {
    let ns = namespace();
    let d = domain(0);
    let program = compile("cpp/lifecycle.cpp", "cpp_lifecycle_rclpy");
    let node = run_node(&ns, &program, d, &["talker", "throw-once"]);
    let manager = rclpy(
        &ns,
        d,
        "cpp_lifecycle_manager.py",
        &["/lc_talker", "/managed_chatter", "60"],
    );
    let (ok, out, err) = finish(manager, Duration::from_secs(70));
    stop(&node);
    let (node_ok, node_out, node_err) = finish(node, Duration::from_secs(5));
    let all = format!("{out}\n{err}\nC++ node:\n{node_out}\n{node_err}");
    assert!(ok && out.contains("DONE"), "{all}");
    let steps: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("STATE ") || l.starts_with("CHANGE "))
        .collect();
    assert_eq!(
        steps,
        [
            "STATE unconfigured",
            "CHANGE configure False",
            "STATE unconfigured",
            "CHANGE configure True",
            "STATE inactive",
            "CHANGE 3 True",
            "STATE active",
            "CHANGE deactivate True",
            "STATE inactive",
            "CHANGE shutdown True",
            "STATE finalized",
        ],
        "{all}"
    );
    let heard = |line: &str| -> Vec<u32> {
        out.lines()
            .filter_map(|l| l.strip_prefix(line))
            .map(|n| n.trim().parse().unwrap())
            .collect()
    };
    assert_eq!(
        heard("HEARD inactive "),
        [0, 0],
        "nothing is sent while inactive\n{all}"
    );
    assert!(
        heard("HEARD active ").first().is_some_and(|&n| n >= 5),
        "{all}"
    );
    let events: Vec<&str> = out.lines().filter(|l| l.starts_with("EVENT ")).collect();
    assert_eq!(
        events,
        [
            "EVENT unconfigured configure configuring",
            "EVENT configuring transition_error errorprocessing",
            "EVENT errorprocessing transition_success unconfigured",
            "EVENT unconfigured configure configuring",
            "EVENT configuring transition_success inactive",
            "EVENT inactive activate activating",
            "EVENT activating transition_success active",
            "EVENT active deactivate deactivating",
            "EVENT deactivating transition_success inactive",
            "EVENT inactive shutdown shuttingdown",
            "EVENT shuttingdown transition_success finalized",
        ],
        "{all}"
    );
    assert!(node_ok, "the C++ node ends cleanly on SIGTERM\n{all}");
    assert!(node_out.contains("READY unconfigured"), "{all}");
    assert!(
        node_out.contains("ERROR handled from unconfigured"),
        "{all}"
    );
    assert!(node_out.contains("SHUTDOWN from inactive"), "{all}");
    for part in [
        "the callback of lifecycle state 'configuring' threw: the device is not ready yet",
        "publisher inactive: 'managed greeting #",
        "publisher active: sending 'managed greeting #",
    ] {
        assert!(node_err.contains(part), "{part}\n{all}");
    }
}

/// The rclpy introspection peer's output: its verdict on the events it heard (the four of
/// each call, one client and number each, with their contents), and that the `publishers`
/// event publishers it saw at the end all announce rclpy's event type and hash.
fn assert_introspected(out: &str, err: &str, publishers: usize) {
    assert!(out.lines().any(|l| l == "verdict ok"), "{out}\n{err}");
    let announced: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("publisher "))
        .map(|l| l.split_once(' ').unwrap().1)
        .collect();
    assert_eq!(announced.len(), publishers, "{out}");
    for each in &announced {
        assert!(
            each.starts_with("std_srvs/srv/SetBool_Event RIHS01_"),
            "{out}"
        );
        assert_eq!(*each, announced[0], "{out}");
    }
}

#[test]
fn introspected_cpp_service_and_client_with_rclpy() {
    let ns = namespace();
    let d = domain(6);
    let server = cpp(&ns, d, &["introspected_server"]);
    let caller = rclpy(
        &ns,
        d,
        "introspection_peer.py",
        &["client", "/motor_power", "2"],
    );
    let (ok, out, err) = finish(caller, Duration::from_secs(50));
    stop(&server);
    let _ = finish(server, Duration::from_secs(5));
    assert!(ok, "{out}\n{err}");
    assert_introspected(&out, &err, 2);

    let d = domain(7);
    let server = rclpy(
        &ns,
        d,
        "introspection_peer.py",
        &["server", "/motor_power", "2"],
    );
    let client = cpp(&ns, d, &["introspected_client"]);
    let (ok, client_out, client_err) = finish(client, Duration::from_secs(40));
    let (_, out, err) = finish(server, Duration::from_secs(40));
    assert!(ok, "{client_out}\n{client_err}");
    assert!(
        client_out.contains("REPLY 1 on") && client_out.contains("REPLY 0 off"),
        "{client_out}"
    );
    // The C++ client has gone by the time the peer lists the publishers: its own is left.
    assert_introspected(&out, &err, 1);
}
