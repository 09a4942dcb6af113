//! `roslite service list|call` against a roslite server in the test process, over loopback
//! with LOCALHOST discovery in a domain of this test's own.

use std::process::{Command, Stdio};
use std::time::Duration;

use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
use roslite::{Context, ContextOptions, Executor, NetworkMode};
use roslite_transport::{DiscoveryConfig, DiscoveryRange, TransportConfig};

/// A domain for this test process, in 60..100 (topic.rs uses 100..200, bench_net 150..230).
fn test_domain(offset: u32) -> u32 {
    60 + (std::process::id() % 10) * 4 + offset
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
