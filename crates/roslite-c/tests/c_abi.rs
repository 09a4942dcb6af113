//! The C ABI from C: `tests/c/node.c` is compiled against `include/roslite/roslite.h` and the
//! static library, then talks to roslite nodes in this test process (loopback only, a domain
//! per test).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use roslite::msgs::example_interfaces::srv::AddTwoInts;
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Message, QosProfile};

mod common;
use common::{context, finish, text};

/// The compiled C node, built once per test run.
fn c_node() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let library = common::static_library();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_node");
        let status = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&out)
            .arg(manifest.join("tests/c/node.c"))
            .arg("-I")
            .arg(manifest.join("include"))
            .arg(&library)
            .args(common::NATIVE_LIBS)
            .status()
            .expect("cc runs (the C compiler is installed by cargo xtask test)");
        assert!(status.success(), "compiling tests/c/node.c failed");
        out
    })
}

fn domain(offset: u32) -> u32 {
    100 + (std::process::id() % 20) * 5 + offset
}

fn c_command(domain_id: u32, args: &[&str]) -> Command {
    let mut command = Command::new(c_node());
    command
        .args(args)
        .env("ROS_DOMAIN_ID", domain_id.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("ROS_STATIC_PEERS");
    command
}

/// A C talker's messages reach a Rust subscription, over every path a same-host pair can take.
#[test]
fn c_talker_reaches_a_rust_subscription() {
    for (offset, transports) in [(0, "shm,uds"), (1, "udp")] {
        let domain_id = domain(offset);
        let ctx = context(domain_id);
        let node = ctx.create_node("rust_listener").unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        let _subscription = node
            .create_subscription("chatter", QosProfile::DEFAULT, move |m: StringMsg| {
                sink.lock().unwrap().push(m.data);
            })
            .unwrap();
        let executor = roslite::Executor::new(&ctx);
        executor.add_node(&node);
        let child = c_command(domain_id, &["talk", StringMsg::TYPE_HASH, "40"])
            .env("ROSLITE_TRANSPORTS", transports)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while received.lock().unwrap().len() < 10 && start.elapsed() < Duration::from_secs(20) {
            executor.spin_for(Duration::from_millis(50));
        }
        let output = finish(child, Duration::from_secs(20));
        let got = received.lock().unwrap().clone();
        assert!(got.len() >= 10, "{transports}: {got:?}\n{}", text(&output));
        for message in &got {
            let n: u32 = message
                .strip_prefix("hello from C ")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{message:?}"));
            assert!((1..=40).contains(&n), "{message}");
        }
        assert!(output.status.success(), "{}", text(&output));
    }
}

/// A Rust publisher's messages reach a C subscription's callback, bytes and info intact.
#[test]
fn rust_talker_reaches_a_c_subscription() {
    let domain_id = domain(2);
    let ctx = context(domain_id);
    let node = ctx.create_node("rust_talker").unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("chatter", QosProfile::DEFAULT)
        .unwrap();
    let child = c_command(domain_id, &["listen", StringMsg::TYPE_HASH, "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut n = 0;
    while publisher.subscription_count() == 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    while start.elapsed() < Duration::from_secs(20) && n < 200 {
        n += 1;
        publisher
            .publish(StringMsg {
                data: format!("from Rust {n}"),
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        if publisher.subscription_count() == 0 {
            break; // the C node got its five and left
        }
    }
    let output = finish(child, Duration::from_secs(20));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("received"))
        .collect();
    assert_eq!(lines.len(), 5, "{}", text(&output));
    for line in lines {
        // "received 'from Rust N' seq N": the sequence number is the publisher's.
        let (data, seq) = line
            .strip_prefix("received 'from Rust ")
            .and_then(|rest| rest.split_once("' seq "))
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(data, seq, "{line}");
    }
    assert!(output.status.success(), "{}", text(&output));
}

/// `--ros-args -p` reaches a C node's declared parameter; set and get round-trip.
#[test]
fn c_parameters_take_overrides_and_round_trip() {
    let output = c_command(
        domain(3),
        &["param", "--ros-args", "-p", "rate:=5", "-r", "__ns:=/robot"],
    )
    .env("ROSLITE_NETWORK", "off")
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    assert!(stdout.contains("rate 5\n"), "{}", text(&output));
    assert!(stdout.contains("label set from C\n"), "{}", text(&output));
    assert!(stdout.contains("node /robot/c_node\n"), "{}", text(&output));
}

/// A C client calls a Rust AddTwoInts server.
#[test]
fn c_client_calls_a_rust_server() {
    let domain_id = domain(4);
    let ctx = context(domain_id);
    let node = ctx.create_node("adder").unwrap();
    let _service = node
        .create_service::<AddTwoInts, _>("add_two_ints", |request| {
            roslite::msgs::example_interfaces::srv::AddTwoInts_Response {
                sum: request.a + request.b,
            }
        })
        .unwrap();
    let executor = roslite::Executor::new(&ctx);
    executor.add_node(&node);
    let child = c_command(
        domain_id,
        &[
            "call",
            <AddTwoInts as roslite::ServiceType>::Request::TYPE_HASH,
            <AddTwoInts as roslite::ServiceType>::Response::TYPE_HASH,
            "40",
            "2",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinning = {
        let done = done.clone();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                executor.spin_for(Duration::from_millis(50));
            }
            drop(ctx);
        })
    };
    let output = finish(child, Duration::from_secs(30));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    spinning.join().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("sum 42\n"),
        "{}",
        text(&output)
    );
}

/// Every bad argument gives its status and a message, never a crash.
#[test]
fn bad_arguments_are_errors_with_messages() {
    let output = c_command(domain(5), &["errors", StringMsg::TYPE_HASH])
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("all error paths held"),
        "{}",
        text(&output)
    );
}

fn add_two_ints_hashes() -> [&'static str; 2] {
    [
        <AddTwoInts as roslite::ServiceType>::Request::TYPE_HASH,
        <AddTwoInts as roslite::ServiceType>::Response::TYPE_HASH,
    ]
}

/// A Rust client calls a C server, whose callback answers through its responder.
#[test]
fn rust_client_calls_a_c_server() {
    let domain_id = domain(6);
    let [request_hash, response_hash] = add_two_ints_hashes();
    let child = c_command(domain_id, &["serve", request_hash, response_hash, "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ctx = context(domain_id);
    let node = ctx.create_node("caller").unwrap();
    let client = node.create_client::<AddTwoInts>("add_two_ints").unwrap();
    assert!(client.wait_for_service(Duration::from_secs(20)));
    let mut sums = Vec::new();
    for (a, b) in [(1, 2), (-5, 5), (40, 2)] {
        let request = roslite::msgs::example_interfaces::srv::AddTwoInts_Request { a, b };
        sums.push(client.call(request, Duration::from_secs(10)).unwrap().sum);
    }
    let output = finish(child, Duration::from_secs(20));
    assert_eq!(sums, [3, 0, 42], "{}", text(&output));
    assert!(output.status.success(), "{}", text(&output));
}

/// Asynchronous calls from C: the reply reaches the callback; a request removed while pending
/// never calls its callback.
#[test]
fn c_async_calls_complete_or_are_removed() {
    let domain_id = domain(7);
    let ctx = context(domain_id);
    let node = ctx.create_node("adder").unwrap();
    let _service = node
        .create_service::<AddTwoInts, _>("add_two_ints", |request| {
            roslite::msgs::example_interfaces::srv::AddTwoInts_Response {
                sum: request.a + request.b,
            }
        })
        .unwrap();
    let executor = roslite::Executor::new(&ctx);
    executor.add_node(&node);
    let [request_hash, response_hash] = add_two_ints_hashes();
    let mut child = c_command(domain_id, &["async", request_hash, response_hash])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(30) {
        executor.spin_for(Duration::from_millis(20));
    }
    let output = finish(child, Duration::from_secs(1));
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("async sum 42 status 0;"),
        "{}",
        text(&output)
    );
}

/// A C on-set callback refuses a value with its reason; released, it refuses nothing.
#[test]
fn c_on_set_callback_refuses_with_its_reason() {
    let output = c_command(domain(8), &["onset"])
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stdout.contains("refused 1: parameter 'speed' not set: speed must not be negative"),
        "{}",
        text(&output)
    );
    assert!(stdout.contains("speed -4\n"), "{}", text(&output));
}

/// Matched and incompatible-QoS events reach C callbacks; the graph lists topics and nodes.
#[test]
fn c_events_and_graph_listings() {
    let output = c_command(domain(9), &["graph", StringMsg::TYPE_HASH])
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stdout.contains("publisher matched 1, subscription sees 1 publisher(s)"),
        "{}",
        text(&output)
    );
    // The transient-local subscription asks for what the volatile publisher does not offer.
    assert!(
        stdout.contains("incompatible 1 policy 2"),
        "{}",
        text(&output)
    );
    assert!(
        stdout.contains("topic /chatter std_msgs/msg/String"),
        "{}",
        text(&output)
    );
    assert!(stdout.contains("node /c_node"), "{}", text(&output));
}

/// `tests/c/types.c` built against the C header generated for `my_msgs/msg/Reading`, a type
/// roslite does not ship (it uses `my_msgs/msg/Unit` and `std_msgs/msg/Header`), and the
/// hash of `amt_msgs/msg/Thing`, which the returned prefix holds for `$AMENT_PREFIX_PATH`.
fn types_program() -> (PathBuf, PathBuf, String) {
    use roslite_msg_gen::ast::TypeName;
    use roslite_msg_gen::registry::InterfaceSet;
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let generated =
        common::generated_user_types(roslite_msg_gen::native::Lang::C, "c_types_generated");

    let prefix = tmp.join("c_types_ament_prefix");
    let msg_dir = prefix.join("share/amt_msgs/msg");
    std::fs::create_dir_all(&msg_dir).unwrap();
    std::fs::write(msg_dir.join("Thing.msg"), "int32 count\n").unwrap();
    let mut ament = InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut ament).unwrap();
    ament.add_ament_prefix_path(prefix.to_str().unwrap());
    let thing = TypeName::parse("amt_msgs/msg/Thing").unwrap();
    let thing_hash = roslite_msg_gen::hash::type_hash(&ament, &thing).unwrap();

    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tmp.join("c_types");
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(manifest.join("tests/c/types.c"))
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-I")
        .arg(&generated)
        .arg(common::static_library())
        .args(common::NATIVE_LIBS)
        .status()
        .expect("cc runs");
    assert!(status.success(), "compiling tests/c/types.c failed");
    (out, prefix, thing_hash)
}

/// The line of `stdout` that starts with `what: `.
fn line_of<'a>(stdout: &'a str, what: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("{what}: ")))
        .unwrap_or_else(|| panic!("no line '{what}: ...' in\n{stdout}"))
}

/// A type roslite ships must carry its hash; a type it does not know is refused, saying where
/// roslite looks; a user type registered from its generated definition is usable, and its hash
/// is checked too; a type under `$AMENT_PREFIX_PATH` is known.
#[test]
fn types_are_checked_against_what_roslite_knows() {
    let (program, prefix, thing_hash) = types_program();
    let output = Command::new(&program)
        .args([
            "types",
            StringMsg::TYPE_HASH,
            "amt_msgs/msg/Thing",
            &thing_hash,
        ])
        .env("ROSLITE_NETWORK", "off")
        .env("AMENT_PREFIX_PATH", &prefix)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}", text(&output));
    assert!(stdout.contains("all type checks held"), "{}", text(&output));
    let zeros = format!("RIHS01_{}", "0".repeat(64));

    // Known type, wrong hash: both hashes and how to fix it.
    let wrong = line_of(&stdout, "known type, wrong hash");
    assert!(wrong.contains("status 6,"), "{wrong}");
    for part in [
        format!("type std_msgs/msg/String has hash {zeros} here"),
        format!(
            "roslite computes {} from its definition (built into roslite)",
            StringMsg::TYPE_HASH
        ),
        "regenerate the C/C++ types (`roslite interface generate".to_owned(),
    ] {
        assert!(wrong.contains(&part), "{part}\n{wrong}");
    }
    let service = line_of(&stdout, "known service type, wrong hashes");
    assert!(
        service.contains("status 6,")
            && service.contains("type std_srvs/srv/SetBool_Request has hash"),
        "{service}"
    );

    // Unknown type: where roslite looks and how to make it known.
    let unknown = line_of(&stdout, "unknown type");
    assert!(unknown.contains("status 6,"), "{unknown}");
    for part in [
        "type my_msgs/msg/Reading is unknown to roslite",
        "the packages it ships",
        "registered with roslite_type_register()",
        "share/my_msgs/msg/Reading.msg (or the .idl beside it) under each prefix of \
         $AMENT_PREFIX_PATH",
        "__TYPE_DEFINITION",
    ] {
        assert!(unknown.contains(part), "{part}\n{unknown}");
    }
    assert!(
        unknown.contains(&format!("now '{}'", prefix.display())),
        "{unknown}"
    );

    // Registered, then usable; a wrong hash of it names the hash computed from the definition.
    assert!(line_of(&stdout, "registering the user type").contains("status 0,"));
    let generated = std::fs::read_to_string(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_types_generated/my_msgs/msg/reading.h"),
    )
    .unwrap();
    let reading_hash = generated
        .lines()
        .find_map(|l| l.strip_prefix("#define my_msgs__msg__Reading__TYPE_HASH \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap();
    let registered_wrong = line_of(&stdout, "registered type, wrong hash");
    assert!(
        registered_wrong.contains("status 6,")
            && registered_wrong.contains(&format!(
                "roslite computes {reading_hash} from its definition (registered by this program)"
            )),
        "{registered_wrong}"
    );
    let conflict = line_of(
        &stdout,
        "registering another definition of a registered type",
    );
    assert!(
        conflict.contains("status 2,")
            && conflict.contains("my_msgs/msg/Unit was registered before with another definition"),
        "{conflict}"
    );
    assert!(line_of(&stdout, "a definition without its MSG: line").contains("status 2,"));
    assert!(line_of(&stdout, "a definition that does not parse")
        .contains("the definition of my_msgs/msg/Bad does not parse"));
    assert!(line_of(&stdout, "a type under AMENT_PREFIX_PATH").contains("status 0,"));
    assert!(stdout.contains("received 1, value 21.5"), "{stdout}");
}

/// A managed node from C: transitions by id and by label, the callback's answers (one that is
/// no result counts as an error), a lifecycle publisher that sends only while active, invalid
/// transitions and handles with their statuses and messages, and the shutdown that releasing
/// an unfinalized lifecycle node runs.
#[test]
fn c_lifecycle_node_transitions_publishes_while_active_and_reports_errors() {
    let output = c_command(domain(5), &["lifecycle", StringMsg::TYPE_HASH])
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stdout.contains("lifecycle checks held"),
        "{}",
        text(&output)
    );
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.contains(": status 3, message") && !l.contains(": status 2, message"))
        .collect();
    let expected = [
        "state 1 unconfigured",
        // 42 is no callback result: an error, then on_error succeeds: back to unconfigured.
        "callback in 10 from 1 answers 42",
        "callback in 15 from 1 answers 97",
        "trigger 1 '': state 1 result 99",
        "callback in 10 from 1 answers 97",
        "trigger 0 'configure': state 2 result 97",
        "lifecycle publisher matched 1",
        "published 'while inactive', activated 0",
        "callback in 13 from 2 answers 97",
        "trigger 3 '': state 3 result 97",
        "received 'while active' seq 1",
        "published 'while active', activated 1",
        "trigger 1 '': status 12, message 'transition 1 cannot start from state 'active'; valid \
         ones are 'deactivate' [4], 'shutdown' [7]'",
        "trigger 0 'bogus': status 12, message 'transition 'bogus' cannot start from state \
         'active'; valid ones are 'deactivate' [4], 'shutdown' [7]'",
        // A failed deactivate stays active; the publisher with it.
        "callback in 14 from 3 answers 98",
        "trigger 0 'deactivate': state 3 result 98",
        "callback in 14 from 3 answers 97",
        "trigger 0 'deactivate': state 2 result 97",
        "published 'after deactivate', activated 0",
        "state 2",
        "releasing",
        "callback in 12 from 2 answers 97",
        "callbacks 7",
        "trigger 0 'configure': state 2 result 97",
        "trigger 0 'shutdown': state 4 result 97",
        "trigger 0 'cleanup': status 12, message 'transition 'cleanup' cannot start from state \
         'finalized'; no transition leaves 'finalized''",
        "lifecycle checks held",
    ];
    assert_eq!(lines, expected, "{}", text(&output));
    for (what, status, part) in [
        ("label of state 5", 2, "5 is not a lifecycle state id"),
        (
            "a node handle as a lifecycle node",
            3,
            "is a node handle; a lifecycle node handle is needed here",
        ),
        (
            "trigger on a handle that never existed",
            3,
            "0x3039 is not a live lifecycle node handle",
        ),
        (
            "lifecycle node of a node that never existed",
            3,
            "is not a live node handle",
        ),
        (
            "lifecycle node without an out-pointer",
            2,
            "lifecycle_node is NULL",
        ),
        (
            "a plain publisher as a lifecycle publisher",
            3,
            "is a publisher handle; a lifecycle publisher handle is needed here",
        ),
        (
            "a released lifecycle node",
            3,
            "is not a live lifecycle node handle",
        ),
    ] {
        let line = line_of(&stdout, what);
        assert!(
            line.contains(&format!("status {status},")) && line.contains(part),
            "{part}\n{line}"
        );
    }
    assert!(
        stderr.contains("the lifecycle callback answered 42 in state 'configuring'"),
        "{}",
        text(&output)
    );
    assert_eq!(
        stderr
            .matches("a message published on '/managed_chatter' was dropped")
            .count(),
        2,
        "one warning each time the node is found inactive\n{}",
        text(&output)
    );
}
