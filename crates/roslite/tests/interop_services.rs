//! roslite services against real ROS 2 (rclpy over Fast DDS: related-sample-identity
//! correlation) and against a plain Cyclone DDS peer that speaks rmw_cyclonedds's request
//! header, both directions, each inside a network namespace made for the test (only `lo`, with
//! multicast): default discovery works and nothing can leave the machine.

use std::process::{Command, Stdio};
use std::time::Duration;

use roslite::msgs::std_srvs::srv::{
    SetBool, SetBool_Request, SetBool_Response, Trigger, Trigger_Request, Trigger_Response,
};
use roslite::Node;
use roslite_transport::netns::NetNs;

mod common;

const DOMAIN: u32 = 0;

const CYCLONEDDS_URI: &str = r#"<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>"#;

fn cyclone(ns: &NetNs, args: &[&str]) -> Command {
    let mut command = ns.command(common::python());
    command
        .arg(common::workspace().join("interop/python/cyclone_service.py"))
        .args(args)
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn finish(child: std::process::Child, who: &str) -> String {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{who} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A roslite node serving /motor_power (SetBool) and /trigger (Trigger).
fn serve_both(node: &Node) -> (roslite::Service<SetBool>, roslite::Service<Trigger>) {
    let set_bool = node
        .create_service::<SetBool, _>("motor_power", |req: SetBool_Request| SetBool_Response {
            success: req.data,
            message: if req.data { "motor on" } else { "motor off" }.into(),
        })
        .unwrap();
    let mut n = 0;
    let trigger = node
        .create_service::<Trigger, _>("trigger", move |_req: Trigger_Request| {
            n += 1;
            Trigger_Response {
                success: true,
                message: format!("roslite triggered {n}"),
            }
        })
        .unwrap();
    (set_bool, trigger)
}

/// What a roslite server of /motor_power and /trigger saw of a client: the client's output,
/// and how many replies each service sent.
struct Served {
    stdout: String,
    set_bool_replies: u64,
    trigger_replies: u64,
}

/// Serves both services from a roslite node in `ns` while `client` (a peer's command) runs
/// to its end, successfully.
fn serve_while(ns: &NetNs, mut client: Command, who: &str) -> Served {
    let ctx = common::networked_in(ns, DOMAIN);
    let node = ctx.create_node("roslite_server").unwrap();
    let (set_bool, trigger) = serve_both(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    let stdout = finish(client.spawn().unwrap(), who);
    ctx.shutdown();
    spinner.join().unwrap();
    Served {
        stdout,
        set_bool_replies: set_bool.stats().replies_sent,
        trigger_replies: trigger.stats().replies_sent,
    }
}

/// An rclpy client in `ns` calling each service `calls` times (`service_peer.py call`).
fn rclpy_client(ns: &NetNs, seconds: &str, calls: usize) -> Command {
    let calls = calls.to_string();
    common::rclpy_script(ns, DOMAIN, "service_peer.py", &["call", seconds, &calls])
}

#[test]
fn rclpy_client_calls_a_roslite_server() {
    let ns = NetNs::create("srv-rclpy-cli").expect("create a network namespace");
    let served = serve_while(&ns, rclpy_client(&ns, "40", 3), "the rclpy client");
    let stdout = &served.stdout;
    assert!(stdout.contains("RESULT 6"), "{stdout}");
    assert!(
        stdout.contains("REPLY /motor_power True motor on"),
        "{stdout}"
    );
    assert!(
        stdout.contains("REPLY /motor_power False motor off"),
        "{stdout}"
    );
    assert!(
        stdout.contains("REPLY /trigger True roslite triggered 3"),
        "{stdout}"
    );
    // rclpy's graph lists the roslite services with their types.
    let services = stdout
        .lines()
        .find(|l| l.starts_with("SERVICES"))
        .unwrap_or_default();
    assert!(
        services.contains("/motor_power std_srvs/srv/SetBool"),
        "{services}"
    );
    assert!(
        services.contains("/trigger std_srvs/srv/Trigger"),
        "{services}"
    );
    assert_eq!(served.set_bool_replies, 3);
    assert_eq!(served.trigger_replies, 3);
}

#[test]
fn roslite_client_calls_an_rclpy_server() {
    let ns = NetNs::create("srv-rclpy-srv").expect("create a network namespace");
    let (appear, patience) = (Duration::from_secs(30), Duration::from_secs(10));
    let (stdout, unmatched) = call_an_rclpy_server(&ns, &["serve", "40", "6"], 3, appear, patience);
    assert!(stdout.contains("RESULT 6"), "{stdout}");
    assert_eq!(unmatched, 0);
}

/// A roslite client calls the rclpy server `service_peer.py <server_args>` in `ns`: each
/// service `calls` times (SetBool alternately true and false), checking each reply; the
/// server must appear within `appear`, and `patience` bounds each call. Returns the
/// server's output once it ended (successfully) and the SetBool client's unmatched replies.
fn call_an_rclpy_server(
    ns: &NetNs,
    server_args: &[&str],
    calls: usize,
    appear: Duration,
    patience: Duration,
) -> (String, u64) {
    let server = common::rclpy_script(ns, DOMAIN, "service_peer.py", server_args)
        .spawn()
        .unwrap();
    let ctx = common::networked_in(ns, DOMAIN);
    let node = ctx.create_node("roslite_client").unwrap();
    let set_bool = node.create_client::<SetBool>("motor_power").unwrap();
    let trigger = node.create_client::<Trigger>("trigger").unwrap();
    assert!(
        set_bool.wait_for_service(appear),
        "the rclpy server never appeared"
    );
    assert!(trigger.wait_for_service(patience));
    for i in 0..calls {
        let on = i % 2 == 0;
        let r = set_bool
            .call(SetBool_Request { data: on }, patience)
            .unwrap_or_else(|e| panic!("SetBool call {i}: {e}"));
        assert_eq!(r.success, on);
        assert_eq!(r.message, if on { "motor on" } else { "motor off" });
        let t = trigger
            .call(Trigger_Request::default(), patience)
            .unwrap_or_else(|e| panic!("Trigger call {i}: {e}"));
        // The server counts what it executed: each request once.
        assert_eq!(t.message, format!("triggered {}", i + 1));
    }
    let stdout = finish(server, "the rclpy server");
    (stdout, set_bool.stats().unmatched_replies)
}

#[test]
fn cyclone_style_client_calls_a_roslite_server() {
    let ns = NetNs::create("srv-cyc-cli").expect("create a network namespace");
    let client = cyclone(&ns, &["call", "40", "4"]);
    let served = serve_while(&ns, client, "the Cyclone client");
    let stdout = &served.stdout;
    assert!(stdout.contains("RESULT 4"), "{stdout}");
    assert!(stdout.contains("REPLY True motor on"), "{stdout}");
    assert!(stdout.contains("REPLY False motor off"), "{stdout}");
    assert_eq!(served.set_bool_replies, 4);
}

#[test]
fn roslite_client_calls_a_cyclone_style_server() {
    let ns = NetNs::create("srv-cyc-srv").expect("create a network namespace");
    let out = call_a_cyclone_style_server(&ns, 4, Duration::from_secs(30));
    assert_eq!(out.values("RESULT "), ["4"], "{out}");
}

/// A roslite client calls a Cyclone-style server in `ns` `calls` times (SetBool, alternately
/// true and false) and checks each reply; `patience` bounds each wait for discovery and each
/// call. Returns the server's output once it ended (successfully).
fn call_a_cyclone_style_server(ns: &NetNs, calls: usize, patience: Duration) -> common::PeerOutput {
    let seconds = (3 * patience.as_secs()).to_string();
    let mut server = common::LinePeer::spawn(cyclone(ns, &["serve", &seconds, &calls.to_string()]));
    let ctx = common::networked_in(ns, DOMAIN);
    let node = ctx.create_node("roslite_client").unwrap();
    let client = node.create_client::<SetBool>("motor_power").unwrap();
    assert!(
        client.wait_for_service(patience * 2),
        "the Cyclone server never appeared"
    );
    // Our side matching the server is not enough: its volatile request reader takes requests
    // only from the moment it matched our writer (a request written before is never served).
    assert!(
        server
            .wait_line(std::time::Instant::now() + patience * 2, |l| l == "MATCHED")
            .is_some(),
        "the Cyclone server never matched the client"
    );
    for i in 0..calls {
        let on = i % 2 == 0;
        let r = match client.call(SetBool_Request { data: on }, patience) {
            Ok(r) => r,
            Err(e) => {
                let stats = client.stats();
                let out = server.finish(std::time::Instant::now());
                panic!("call {i}: {e}; {stats:?}\n{out}");
            }
        };
        assert_eq!(r.success, on);
        assert_eq!(r.message, if on { "motor on" } else { "motor off" });
    }
    let out = server.finish(std::time::Instant::now() + Duration::from_secs(30));
    assert!(out.success, "the Cyclone server failed: {out}");
    out
}

// -------------------------------------------------------------------------------------------
// Through loss: nftables drops 10 % of the namespace's datagrams each way, from before
// discovery to the end. Every call is answered once, correctly.

/// Calls of each service through loss.
const LOSSY_CALLS: usize = 10;

/// Datagrams dropped each way, in percent.
const LOSS_PERCENT: u8 = 10;

#[test]
fn rclpy_client_calls_a_roslite_server_through_loss() {
    let ns = NetNs::create("srv-loss-rclpy-cli").expect("create a network namespace");
    ns.drop_udp_percent(LOSS_PERCENT)
        .expect("nftables in the test namespace");
    let client = rclpy_client(&ns, "90", LOSSY_CALLS);
    let served = serve_while(&ns, client, "the rclpy client");
    let stdout = &served.stdout;
    assert!(
        stdout.contains(&format!("RESULT {}", 2 * LOSSY_CALLS)),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "REPLY /trigger True roslite triggered {LOSSY_CALLS}"
        )),
        "{stdout}"
    );
    // Each request served once: a request repaired twice is not executed twice.
    assert_eq!(served.set_bool_replies, LOSSY_CALLS as u64);
    assert_eq!(served.trigger_replies, LOSSY_CALLS as u64);
}

/// The client's `wait_for_service` holds until the server's request reader answered a
/// HEARTBEAT of the client's request writer: a volatile reader that has matched the writer
/// but heard no HEARTBEAT yet takes the first one as the start of the stream, and a first
/// request lost before that was acknowledged and never served (call 0 timed out, in 2 of 8
/// runs against Cyclone).
#[test]
fn roslite_client_calls_an_rclpy_server_through_loss() {
    let ns = NetNs::create("srv-loss-rclpy-srv").expect("create a network namespace");
    ns.drop_udp_percent(LOSS_PERCENT)
        .expect("nftables in the test namespace");
    let count = (2 * LOSSY_CALLS).to_string();
    // It stays 10 s after the last request: a lost reply waits for Fast DDS's next HEARTBEAT.
    let server_args = ["serve", "90", &count, "10"];
    let (appear, patience) = (Duration::from_secs(60), Duration::from_secs(30));
    let (stdout, unmatched) =
        call_an_rclpy_server(&ns, &server_args, LOSSY_CALLS, appear, patience);
    assert!(
        stdout.contains(&format!("RESULT {}", 2 * LOSSY_CALLS)),
        "{stdout}"
    );
    assert_eq!(unmatched, 0);
}

#[test]
fn cyclone_style_client_calls_a_roslite_server_through_loss() {
    let ns = NetNs::create("srv-loss-cyc-cli").expect("create a network namespace");
    ns.drop_udp_percent(LOSS_PERCENT)
        .expect("nftables in the test namespace");
    let calls = LOSSY_CALLS.to_string();
    let client = cyclone(&ns, &["call", "90", &calls]);
    let served = serve_while(&ns, client, "the Cyclone client");
    let stdout = &served.stdout;
    assert!(
        stdout.contains(&format!("RESULT {LOSSY_CALLS}")),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("REPLY ")).count(),
        LOSSY_CALLS,
        "{stdout}"
    );
    assert_eq!(served.set_bool_replies, LOSSY_CALLS as u64);
}

#[test]
fn roslite_client_calls_a_cyclone_style_server_through_loss() {
    let ns = NetNs::create("srv-loss-cyc-srv").expect("create a network namespace");
    ns.drop_udp_percent(LOSS_PERCENT)
        .expect("nftables in the test namespace");
    let out = call_a_cyclone_style_server(&ns, LOSSY_CALLS, Duration::from_secs(30));
    assert_eq!(out.values("RESULT "), [LOSSY_CALLS.to_string()], "{out}");
    assert_eq!(
        out.values("SERVED ").len(),
        LOSSY_CALLS,
        "each request served once\n{out}"
    );
}
