//! The rclcpp-shaped C++ API: `tests/cpp/nodes.cpp`, nodes in the patterns of ros2/examples,
//! is compiled with `c++ -std=c++17` against `include/rclcpp/rclcpp.hpp`, the generated C++
//! message types (`roslite_msg_gen::native`, as `roslite interface generate --lang cpp` writes
//! them) and the static library, then talks to roslite nodes in this test process (loopback
//! only, a domain per test).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::QosProfile;

mod common;
use common::{context, finish, text};

/// The generated C++ types of the packages the test nodes use, generated once per run.
fn generated() -> &'static Path {
    static GENERATED: OnceLock<PathBuf> = OnceLock::new();
    GENERATED.get_or_init(|| {
        let packages = [
            "std_msgs",
            "example_interfaces",
            "geometry_msgs",
            "std_srvs",
            "lifecycle_msgs",
        ];
        common::generated_cpp(&packages, "generated_cpp")
    })
}

fn compile_cpp(source: &Path, out: &Path) {
    common::compile_cpp(source, generated(), out);
}

fn cpp_nodes() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp_nodes");
        compile_cpp(&manifest.join("tests/cpp/nodes.cpp"), &out);
        out
    })
}

/// A domain per test (offsets 0..=9) and per process, at most 229: ROS domains end at 232.
fn domain(offset: u32) -> u32 {
    assert!(offset < 10, "offset {offset}: give each test one of 0..=9");
    200 + (std::process::id() % 3) * 10 + offset
}

fn node_command(domain_id: u32, args: &[&str]) -> Command {
    let mut command = Command::new(cpp_nodes());
    command
        .args(args)
        .env("ROS_DOMAIN_ID", domain_id.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("ROS_STATIC_PEERS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[test]
fn minimal_publisher_reaches_a_rust_subscription() {
    let domain_id = domain(0);
    let ctx = context(domain_id);
    let node = ctx.create_node("listener").unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let _subscription = node
        .create_subscription("topic", QosProfile::DEFAULT, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data);
        })
        .unwrap();
    let executor = roslite::Executor::new(&ctx);
    executor.add_node(&node);
    let child = node_command(domain_id, &["talker", "60"]).spawn().unwrap();
    let start = Instant::now();
    while received.lock().unwrap().len() < 10 && start.elapsed() < Duration::from_secs(20) {
        executor.spin_for(Duration::from_millis(50));
    }
    let output = finish(child, Duration::from_secs(20));
    let got = received.lock().unwrap().clone();
    assert!(got.len() >= 10, "{got:?}\n{}", text(&output));
    assert!(
        got.iter().all(|m| m.starts_with("Hello, world! ")),
        "{got:?}"
    );
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("Publishing: 'Hello, world! 1'")
            || String::from_utf8_lossy(&output.stdout).contains("Publishing: 'Hello, world! 1'"),
        "RCLCPP_INFO output missing\n{}",
        text(&output)
    );
}

#[test]
fn minimal_subscriber_gets_every_callback_shape() {
    let domain_id = domain(1);
    let ctx = context(domain_id);
    let node = ctx.create_node("talker").unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("topic", QosProfile::DEFAULT)
        .unwrap();
    let child = node_command(domain_id, &["listener", "5"]).spawn().unwrap();
    let start = Instant::now();
    // Four subscriptions in the child: wait for all before publishing.
    while publisher.subscription_count() < 4 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for n in 1..=5 {
        publisher
            .publish(StringMsg {
                data: format!("message {n}"),
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    let output = finish(child, Duration::from_secs(20));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    // Every shape saw the messages before the SharedPtr callback's fifth (same executor,
    // subscriptions served in turn: at least four each).
    let shapes = stdout
        .lines()
        .find(|l| l.starts_with("shapes:"))
        .unwrap_or_else(|| panic!("{}", text(&output)));
    let numbers: Vec<u64> = shapes
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 3, "{shapes}");
    assert!(numbers[0] >= 4 && numbers[1] >= 4, "{shapes}");
    assert!(
        (4..=5).contains(&numbers[2]),
        "publication sequence number: {shapes}"
    );
}

#[test]
fn rust_client_calls_a_cpp_server_and_a_cpp_client_calls_a_rust_server() {
    let domain_id = domain(2);
    let server = node_command(domain_id, &["server"]).spawn().unwrap();
    let ctx = context(domain_id);
    let node = ctx.create_node("caller").unwrap();
    let client = node.create_client::<AddTwoInts>("add_two_ints").unwrap();
    assert!(client.wait_for_service(Duration::from_secs(20)));
    let reply = client
        .call(AddTwoInts_Request { a: 2, b: 3 }, Duration::from_secs(10))
        .unwrap();
    let _ = Command::new("kill").arg(server.id().to_string()).status();
    let server_output = finish(server, Duration::from_secs(5));
    assert_eq!(reply.sum, 5, "{}", text(&server_output));

    let domain_id = domain(3);
    let ctx = context(domain_id);
    let node = ctx.create_node("adder").unwrap();
    let _service = node
        .create_service::<AddTwoInts, _>("add_two_ints", |request| AddTwoInts_Response {
            sum: request.a + request.b,
        })
        .unwrap();
    let executor = roslite::Executor::new(&ctx);
    executor.add_node(&node);
    let mut child = node_command(domain_id, &["client"]).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(30) {
        executor.spin_for(Duration::from_millis(20));
    }
    let output = finish(child, Duration::from_secs(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stdout.contains("Result of add_two_ints: 42"),
        "{}",
        text(&output)
    );
    assert!(
        stdout.contains("callback form: called"),
        "{}",
        text(&output)
    );
}

#[test]
fn parameters_logging_and_on_set_callbacks() {
    let output = node_command(domain(4), &["parameters", "--ros-args", "-p", "rate:=5"])
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let all = format!("{stdout}{stderr}");
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stdout.contains("rate 5 label none refused 1 (parameter 'rate' not set: rate must not be negative) now from C++ 5"),
        "{}",
        text(&output)
    );
    assert!(all.contains("streamed 5"), "{}", text(&output));
    assert_eq!(all.matches("once").count(), 1, "{}", text(&output));
    assert_eq!(all.matches("throttled").count(), 1, "{}", text(&output));
}

#[test]
fn multithreaded_executor_runs_a_reentrant_group_in_parallel() {
    let output = node_command(domain(5), &["multithreaded"])
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("most at once: 2"),
        "{}",
        text(&output)
    );
}

/// An application in mROS 2-POSIX's echoreply shape, built against roslite's mROS 2 headers:
/// its callback runs without the application spinning, and what it publishes from there
/// arrives.
#[test]
fn mros2_echoreply_app_echoes_through_roslite() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let app = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mros2_echoreply");
    compile_cpp(&manifest.join("tests/cpp/mros2_apps/echoreply.cpp"), &app);

    let domain_id = domain(6);
    let ctx = context(domain_id);
    let node = ctx.create_node("linux").unwrap();
    let echoed = Arc::new(Mutex::new(Vec::new()));
    let sink = echoed.clone();
    let _subscription = node
        .create_subscription("to_linux", QosProfile::DEFAULT, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data);
        })
        .unwrap();
    let publisher = node
        .create_publisher::<StringMsg>("to_stm", QosProfile::DEFAULT)
        .unwrap();
    let executor = roslite::Executor::new(&ctx);
    executor.add_node(&node);
    let child = Command::new(&app)
        .env("ROS_DOMAIN_ID", domain_id.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Warm up until an echo comes back: then both directions are connected end to end (a
    // match seen on one side can precede the link the other side writes into).
    let mut warmups = 0;
    while echoed.lock().unwrap().is_empty() && start.elapsed() < Duration::from_secs(20) {
        warmups += 1;
        publisher
            .publish(StringMsg {
                data: format!("warm-up {warmups}"),
            })
            .unwrap();
        executor.spin_for(Duration::from_millis(100));
    }
    executor.spin_for(Duration::from_millis(200));
    echoed.lock().unwrap().clear();
    for n in 1..=5 {
        publisher
            .publish(StringMsg {
                data: format!("ping {n}"),
            })
            .unwrap();
        executor.spin_for(Duration::from_millis(50));
    }
    let pings = || {
        echoed
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.starts_with("ping"))
            .count()
    };
    while pings() < 5 && start.elapsed() < Duration::from_secs(30) {
        executor.spin_for(Duration::from_millis(20));
    }
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let output = finish(child, Duration::from_secs(5));
    // Late warm-up echoes may still arrive; the pings must all come back, in order.
    let got: Vec<String> = echoed
        .lock()
        .unwrap()
        .iter()
        .filter(|m| m.starts_with("ping"))
        .cloned()
        .collect();
    assert_eq!(
        got,
        (1..=5).map(|n| format!("ping {n}")).collect::<Vec<_>>(),
        "{}",
        text(&output)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("subscribed msg: 'ping 1'"),
        "{}",
        text(&output)
    );
}

/// Applications in the shape of mROS 2-POSIX's pub_twist and sub_pose: Twists published from
/// a plain loop reach a Rust subscription field for field; Poses a Rust node publishes reach
/// the pointer-taking callback.
#[test]
fn mros2_twist_and_pose_apps_talk_to_roslite() {
    use roslite::msgs::geometry_msgs::msg::{Point, Pose, Quaternion, Twist};
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    compile_cpp(
        &manifest.join("tests/cpp/mros2_apps/pub_twist.cpp"),
        &tmp.join("pub_twist"),
    );
    compile_cpp(
        &manifest.join("tests/cpp/mros2_apps/sub_pose.cpp"),
        &tmp.join("sub_pose"),
    );
    let domain_id = domain(7);
    let ctx = context(domain_id);
    let node = ctx.create_node("linux").unwrap();
    let twists = Arc::new(Mutex::new(Vec::new()));
    let sink = twists.clone();
    let _subscription = node
        .create_subscription("cmd_vel", QosProfile::DEFAULT, move |t: Twist| {
            sink.lock().unwrap().push(t);
        })
        .unwrap();
    let poses = node
        .create_publisher::<Pose>("pose", QosProfile::DEFAULT)
        .unwrap();
    let executor = roslite::Executor::new(&ctx);
    executor.add_node(&node);
    let spawn = |app: &str| {
        Command::new(tmp.join(app))
            .env("ROS_DOMAIN_ID", domain_id.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let twist_app = spawn("pub_twist");
    let pose_app = spawn("sub_pose");
    let start = Instant::now();
    while (twists.lock().unwrap().len() < 5 || poses.subscription_count() == 0)
        && start.elapsed() < Duration::from_secs(20)
    {
        executor.spin_for(Duration::from_millis(20));
    }
    for n in 1..=3 {
        poses
            .publish(Pose {
                position: Point {
                    x: f64::from(n),
                    y: 2.0,
                    z: 3.0,
                },
                orientation: Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: 0.0,
                    w: 1.0,
                },
            })
            .unwrap();
        executor.spin_for(Duration::from_millis(50));
    }
    executor.spin_for(Duration::from_millis(300));
    for child in [&twist_app, &pose_app] {
        let _ = Command::new("kill").arg(child.id().to_string()).status();
    }
    let twist_output = finish(twist_app, Duration::from_secs(5));
    let pose_output = finish(pose_app, Duration::from_secs(5));
    // SIGTERM ends both: sub_pose's mros2::spin returns, and pub_twist's loop, which never
    // returns by itself, is ended at its next osDelay (cmsis_os.h).
    assert!(
        twist_output.status.success(),
        "pub_twist: {}",
        text(&twist_output)
    );
    assert!(
        pose_output.status.success(),
        "sub_pose: {}",
        text(&pose_output)
    );
    let got = twists.lock().unwrap().clone();
    assert!(got.len() >= 5, "{}", text(&twist_output));
    for t in &got {
        // Filled from one counter: linear.x = n, linear.y = n / 2, angular.z = -n.
        assert_eq!(t.linear.y * 2.0, t.linear.x, "{t:?}");
        assert_eq!(t.angular.z, -t.linear.x, "{t:?}");
    }
    let stdout = String::from_utf8_lossy(&pose_output.stdout);
    for n in 1..=3 {
        assert!(
            stdout.contains(&format!("pose {n}.0 2.0 3.0 1.00")),
            "{}",
            text(&pose_output)
        );
    }
}

/// A C++ node with `use_sim_time:=true` reads the time a `/clock` publisher sends, through
/// `Node::now()` and `get_clock()->now()`, and does rclcpp's Time/Duration arithmetic on it.
#[test]
fn cpp_node_now_follows_clock_under_use_sim_time() {
    use roslite::msgs::builtin_interfaces::msg::Time as TimeMsg;
    use roslite::msgs::rosgraph_msgs::msg::Clock;
    let domain_id = domain(8);
    let ctx = context(domain_id);
    let node = ctx.create_node("simulator").unwrap();
    let clock = node.create_publisher::<Clock>("/clock", 10).unwrap();
    let mut child = node_command(
        domain_id,
        &["sim_time", "--ros-args", "-p", "use_sim_time:=true"],
    )
    .spawn()
    .unwrap();
    // 1234.5 s of simulated time, sent until the node has read it and exited.
    let message = Clock {
        clock: TimeMsg {
            sec: 1234,
            nanosec: 500_000_000,
        },
    };
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(20) {
        clock.publish(message.clone()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = finish(child, Duration::from_secs(5));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    // Before the first /clock arrives ROS time is 0 (/clock may also have come already): never
    // the system time.
    assert!(
        stdout.contains("READY before /clock 0\n")
            || stdout.contains("READY before /clock 1234500000000\n"),
        "{}",
        text(&output)
    );
    assert!(
        stdout.contains(
            "SIM now 1234500000000 ns 1234.500 s stamp 1234.500000000 back 1234500000000 \
             later 1236.000 elapsed 1.500 s 1500000000 ns ros 1"
        ),
        "{}",
        text(&output)
    );
}

/// A C++ node on a generated type roslite does not ship (`my_msgs/msg/Reading`, using
/// `my_msgs/msg/Unit` and `std_msgs/msg/Header`): the rclcpp API registers the generated
/// definition, so the type is usable without `$AMENT_PREFIX_PATH`.
#[test]
fn cpp_generated_user_type_registers_itself() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let generated = common::generated_user_types(
        roslite_msg_gen::native::Lang::Cpp,
        "cpp_user_type_generated",
    );
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let program = tmp.join("cpp_user_type");
    common::compile_cpp(
        &manifest.join("tests/cpp/user_type.cpp"),
        &generated,
        &program,
    );
    let output = Command::new(&program)
        .env("ROSLITE_NETWORK", "off")
        .env_remove("AMENT_PREFIX_PATH")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("user type received 1 value 21.5"),
        "{}",
        text(&output)
    );
}

/// A managed node (`tests/cpp/lifecycle.cpp`, an rclcpp_lifecycle::LifecycleNode subclass in
/// the shape of the ROS 2 demos' lifecycle_talker) driven from its own code: each transition
/// call's state and callback result, its lifecycle publisher activated with the node, an
/// invalid transition logged and refused, a registered callback, and a callback that throws
/// counted as an error.
#[test]
fn cpp_lifecycle_node_managed_from_its_own_code() {
    let program = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cpp_lifecycle");
    compile_cpp(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/lifecycle.cpp"),
        &program,
    );
    let output = Command::new(&program)
        .arg("self")
        .env("ROSLITE_NETWORK", "off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}", text(&output));
    let expected = [
        "start: unconfigured (1)",
        "configure: inactive (2) result 97",
        "publisher activated 0",
        "activate by Transition: active (3) result 97",
        "publisher activated 1, primary active 1",
        // Not from active: logged, and the node stays.
        "configure again: active (3) result 99",
        "deactivate: inactive (2) result 97",
        "publisher activated 0",
        "cleanup by id: unconfigured (1) result 97",
        "registered on_configure ran",
        "plain configure: unconfigured (1) result 98",
        "shared_from_this is the node 1",
        // The throw is an error; on_error's default success returns to unconfigured.
        "flaky activate: unconfigured (1) result 99",
        "flaky activate again: active (3) result 97",
        "flaky shutdown: finalized (4) result 97",
        "SHUTDOWN from unconfigured",
        "shutdown: finalized (4) result 97",
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, expected, "{}", text(&output));
    for part in [
        "transition 1 cannot start from state 'active'; valid ones are 'deactivate' [4], \
         'shutdown' [7]",
        "the callback of lifecycle state 'activating' threw; the transition ends in an error",
        "on_configure() from unconfigured",
        "on_activate() from inactive",
    ] {
        assert!(stderr.contains(part), "{part}\n{}", text(&output));
    }
}

/// A C++ node's `~/get_type_description` answers for the types of its endpoints (created
/// through the C ABI by name and hash) exactly as a Rust node's answers for its generated
/// types: a message type (`chatter_talker`'s std_msgs/String) and a service type
/// (`motor_server`'s std_srvs/SetBool), with their sources.
#[test]
fn cpp_nodes_describe_their_types_as_rust_nodes_do() {
    use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Response};
    use roslite::msgs::type_description_interfaces::srv::{
        GetTypeDescription, GetTypeDescription_Request,
    };
    use roslite::msgs::{Message, Service};

    let domain_id = domain(9);
    let talker = node_command(domain_id, &["chatter_talker", "100000"])
        .spawn()
        .unwrap();
    let server = node_command(domain_id, &["motor_server"]).spawn().unwrap();
    let ctx = context(domain_id);
    // A Rust node with the same endpoints, as the reference.
    let reference = ctx.create_node("rust_reference").unwrap();
    let _publisher = reference
        .create_publisher::<StringMsg>("/chatter", 10)
        .unwrap();
    let _service = reference
        .create_service::<SetBool, _>("/rust_motor_power", |_| SetBool_Response::default())
        .unwrap();
    let spinner = {
        let (ctx, node) = (ctx.clone(), reference.clone());
        std::thread::spawn(move || {
            let executor = roslite::Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let asker = ctx.create_node("asker").unwrap();
    let ask = |node: &str, type_name: &str, type_hash: &str| {
        let client = asker
            .create_client::<GetTypeDescription>(&format!("{node}/get_type_description"))
            .unwrap();
        assert!(
            client.wait_for_service(Duration::from_secs(20)),
            "{node} has no ~/get_type_description"
        );
        client
            .call(
                GetTypeDescription_Request {
                    type_name: type_name.to_owned(),
                    type_hash: type_hash.to_owned(),
                    include_type_sources: true,
                },
                Duration::from_secs(10),
            )
            .unwrap()
    };
    let cases = [
        ("/cpp_talker", StringMsg::TYPE_NAME, StringMsg::TYPE_HASH),
        ("/cpp_motor", SetBool::TYPE_NAME, SetBool::TYPE_HASH),
    ];
    for (node, type_name, type_hash) in cases {
        let from_cpp = ask(node, type_name, type_hash);
        let from_rust = ask("/rust_reference", type_name, type_hash);
        assert!(from_rust.successful, "{from_rust:?}");
        assert_eq!(from_cpp, from_rust, "{node} describes {type_name}");
    }
    ctx.shutdown();
    spinner.join().unwrap();
    for child in [talker, server] {
        let _ = Command::new("kill").arg(child.id().to_string()).status();
        let _ = finish(child, Duration::from_secs(5));
    }
}
