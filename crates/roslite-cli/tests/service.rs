//! `roslite service list|call` against a roslite server in the test process, over loopback
//! with LOCALHOST discovery in a domain of this test's own.

use std::process::{Command, Stdio};
use std::time::Duration;

use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
use roslite::{Context, ContextOptions, Executor, NetworkMode};
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

/// A domain for this test process, in 60..100 (topic.rs uses 100..200, bench_net 150..230);
/// offsets below 6.
fn test_domain(offset: u32) -> u32 {
    60 + (std::process::id() % 6) * 6 + offset
}

fn roslite(domain: u32, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roslite"));
    command
        .args(args)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("RUST_BACKTRACE", "0")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROSLITE_NETWORK")
        .env_remove("AMENT_PREFIX_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn server(
    domain: u32,
) -> (
    Context,
    std::thread::JoinHandle<()>,
    roslite::Service<AddTwoInts>,
) {
    let discovery = DiscoveryConfig {
        domain_id: domain,
        range: DiscoveryRange::Localhost,
        ..Default::default()
    };
    let ctx = Context::new(ContextOptions {
        domain_id: domain,
        network: NetworkMode::Rtps(TransportConfig::new(discovery)),
        ..Default::default()
    })
    .unwrap();
    let node = ctx.create_node("adder").unwrap();
    let service = node
        .create_service::<AddTwoInts, _>("add_two_ints", |r: AddTwoInts_Request| {
            AddTwoInts_Response { sum: r.a + r.b }
        })
        .unwrap();
    let spinner = {
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    (ctx, spinner, service)
}

#[test]
fn service_call_prints_the_response_like_ros2() {
    let domain = test_domain(0);
    let (ctx, spinner, service) = server(domain);
    let output = roslite(
        domain,
        &[
            "service",
            "call",
            "/add_two_ints",
            "example_interfaces/srv/AddTwoInts",
            "{a: 2, b: 40}",
        ],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(
            "requester: making request: example_interfaces.srv.AddTwoInts_Request(a=2, b=40)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("response:\nexample_interfaces.srv.AddTwoInts_Response(sum=42)"),
        "{stdout}"
    );
    assert_eq!(service.stats().replies_sent, 1);
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn service_list_shows_remote_services_with_types() {
    let domain = test_domain(1);
    let (ctx, spinner, _service) = server(domain);
    let mut stdout = String::new();
    for _ in 0..10 {
        let output = roslite(domain, &["service", "list", "-t"])
            .output()
            .unwrap();
        stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if stdout.contains("/add_two_ints") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        stdout
            .lines()
            .any(|l| l == "/add_two_ints [example_interfaces/srv/AddTwoInts]"),
        "{stdout}"
    );
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn calling_a_missing_service_fails_with_advice() {
    let domain = test_domain(2);
    let output = roslite(
        domain,
        &[
            "service",
            "call",
            "/nobody_home",
            "std_srvs/srv/Trigger",
            "--timeout",
            "0.5",
        ],
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("did not become available"), "{stderr}");
    assert!(stderr.contains("roslite service list"), "{stderr}");
    let output = roslite(domain, &["service", "call", "/x", "std_msgs/msg/String"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("<package>/srv/<Name>"), "{stderr}");
}

/// The text ros2 service echo prints for one event of an `AddTwoInts` call, with the stamp
/// and the client id left as `S`, `N` and `G` (they change from run to run).
fn expected_event(kind: &str, sequence_number: i64, request: &str, response: &str) -> String {
    let gid: String = (0..16).map(|_| "  - G\n").collect();
    format!(
        "info:\n  event_type: {kind}\n  stamp:\n    sec: S\n    nanosec: N\n  client_gid:\n\
         {gid}  sequence_number: {sequence_number}\nrequest:{request}\nresponse:{response}\n---"
    )
}

/// `text` with the values of the `sec`, `nanosec` and client id lines masked.
fn masked(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("    sec: ") {
                "    sec: S".to_owned()
            } else if line.starts_with("    nanosec: ") {
                "    nanosec: N".to_owned()
            } else if line.starts_with("  - ") && line[4..].bytes().all(|b| b.is_ascii_digit()) {
                "  - G".to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn service_echo_prints_the_events_of_introspected_calls_like_ros2() {
    use roslite::{IntrospectionState, QosProfile};
    let domain = test_domain(3);
    let (ctx, spinner, service) = server(domain);
    service
        .configure_introspection(QosProfile::keep_last(100), IntrospectionState::Contents)
        .unwrap();
    // Without a type argument: echo learns it from the server.
    let echo = roslite(
        domain,
        &["service", "echo", "add_two_ints", "--timeout", "6"],
    )
    .spawn()
    .unwrap();
    let node = ctx.create_node("caller").unwrap();
    let client = node.create_client::<AddTwoInts>("/add_two_ints").unwrap();
    client
        .configure_introspection(QosProfile::keep_last(100), IntrospectionState::Metadata)
        .unwrap();
    // The echo's subscription has matched both event publishers before the call.
    assert!(
        wait_for(Duration::from_secs(10), || node
            .count_subscribers("/add_two_ints/_service_event")
            == 1),
        "roslite service echo did not subscribe"
    );
    std::thread::sleep(Duration::from_millis(500));
    let response = client
        .call(AddTwoInts_Request { a: 2, b: 40 }, Duration::from_secs(5))
        .unwrap();
    assert_eq!(response.sum, 42);
    let output = echo.wait_with_output().unwrap();
    ctx.shutdown();
    spinner.join().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut events: Vec<&str> = masked(&stdout)
        .leak()
        .split_inclusive("---\n")
        .map(|e| e.trim_end())
        .filter(|e| !e.is_empty())
        .collect();
    events.sort_unstable();
    // The client's events (metadata only) and the server's (with contents), in the order
    // of their kind's name.
    let mut expected = vec![
        expected_event("REQUEST_RECEIVED", 1, "\n- a: 2\n  b: 40", " []"),
        expected_event("REQUEST_SENT", 1, " []", " []"),
        expected_event("RESPONSE_RECEIVED", 1, " []", " []"),
        expected_event("RESPONSE_SENT", 1, " []", "\n- sum: 42"),
    ];
    expected.sort_unstable();
    assert_eq!(events, expected, "{stdout}");
}

#[test]
fn service_echo_without_introspection_says_so() {
    let domain = test_domain(4);
    let (ctx, spinner, _service) = server(domain);
    let output = roslite(
        domain,
        &["service", "echo", "/add_two_ints", "--timeout", "0.5"],
    )
    .output()
    .unwrap();
    ctx.shutdown();
    spinner.join().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert_eq!(
        stdout,
        "No publishers on topic '/add_two_ints/_service_event'; is service introspection on \
         the client or server enabled?\n"
    );
    let output = roslite(
        domain + 1,
        &["service", "echo", "/nobody", "--spin-time", "0.3"],
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Pass the type"), "{stderr}");
}

fn wait_for(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

#[test]
fn service_info_counts_clients_and_servers_like_ros2() {
    let domain = test_domain(5);
    let (ctx, spinner, _service) = server(domain);
    let node = ctx.create_node("caller").unwrap();
    let _client = node.create_client::<AddTwoInts>("/add_two_ints").unwrap();
    let mut stdout = String::new();
    for _ in 0..10 {
        let output = roslite(domain, &["service", "info", "/add_two_ints"])
            .output()
            .unwrap();
        stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if stdout.contains("Clients count: 1") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        stdout,
        "Type: example_interfaces/srv/AddTwoInts\nClients count: 1\nServices count: 1\n"
    );
    let output = roslite(
        domain,
        &["service", "info", "/nobody", "--spin-time", "0.3"],
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Unknown service '/nobody'"), "{stderr}");
    ctx.shutdown();
    spinner.join().unwrap();
}
