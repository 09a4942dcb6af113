//! Service introspection against real rclpy (Kilted, Fast DDS), inside a network namespace
//! made for the test (only `lo`, multicast on): `interop/python/introspection_peer.py` runs an
//! introspected rclpy server or client of `std_srvs/SetBool`, and roslite the other side,
//! introspected too. Each side hears the other's events: a call's four events name one
//! client and one sequence number whoever published them, carry the same request and
//! response (the peer checks that and prints its verdict), and the event publishers announce
//! the same type and hash.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Event, SetBool_Request, SetBool_Response};
use roslite::qos::QosProfile;
use roslite::{IntrospectionState, Node, Subscription};
use roslite_transport::netns::NetNs;

mod common;
use common::{LinePeer, PeerOutput};

const DOMAIN: u32 = 181;
const SERVICE: &str = "/motor_power";
const EVENTS: &str = "/motor_power/_service_event";
const CALLS: usize = 2;

type Events = Arc<Mutex<Vec<SetBool_Event>>>;

fn listen(node: &Node) -> (Subscription<SetBool_Event>, Events) {
    let events: Events = Arc::default();
    let kept = events.clone();
    let subscription = node
        .create_subscription(
            EVENTS,
            QosProfile::keep_last(100),
            move |e: SetBool_Event| kept.lock().unwrap().push(e),
        )
        .unwrap();
    (subscription, events)
}

/// An event as the peer prints it: `<event_type> <sequence_number> <client_gid hex>
/// <request> <response>`, with rclpy's reprs.
fn as_line(event: &SetBool_Event) -> String {
    let gid: String = event
        .info
        .client_gid
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let python_bool = |b: bool| if b { "True" } else { "False" };
    let request = event.request.first().map_or("-".to_owned(), |r| {
        format!("std_srvs.srv.SetBool_Request(data={})", python_bool(r.data))
    });
    let response = event.response.first().map_or("-".to_owned(), |r| {
        format!(
            "std_srvs.srv.SetBool_Response(success={}, message='{}')",
            python_bool(r.success),
            r.message
        )
    });
    format!(
        "{} {} {gid} {request} {response}",
        event.info.event_type, event.info.sequence_number
    )
}

/// The peer's event lines by call (sequence number), each call's sorted by event type.
fn calls(lines: &[String]) -> BTreeMap<i64, Vec<String>> {
    let mut calls: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for line in lines {
        let sequence_number = line.split(' ').nth(1).unwrap().parse().unwrap();
        calls.entry(sequence_number).or_default().push(line.clone());
    }
    for events in calls.values_mut() {
        events.sort();
    }
    calls
}

/// The peer's `publisher` lines: both event publishers announce rclpy's type and hash.
fn assert_publishers(out: &PeerOutput, roslite_node: &str) {
    let publishers = out.values("publisher ");
    assert_eq!(publishers.len(), 2, "{out}");
    let announced = |line: &String| line.split_once(' ').unwrap().1.to_owned();
    assert_eq!(
        announced(&publishers[0]),
        announced(&publishers[1]),
        "{out}"
    );
    assert!(
        announced(&publishers[0]).starts_with("std_srvs/srv/SetBool_Event RIHS01_"),
        "{out}"
    );
    assert!(
        publishers.iter().any(|p| p.starts_with(roslite_node)),
        "{out}"
    );
}

/// What roslite heard equals what rclpy heard, event for event.
fn assert_same_events(out: &PeerOutput, heard: &Events) {
    let ours: Vec<String> = heard.lock().unwrap().iter().map(as_line).collect();
    assert_eq!(calls(&ours), calls(&out.values("event ")), "{out}");
}

#[test]
fn rclpy_client_calls_an_introspected_roslite_server() {
    let ns = NetNs::create("introspection").expect("create a network namespace (needs root)");
    let ctx = common::networked_in(&ns, DOMAIN);
    let node = ctx.create_node("motor").unwrap();
    let service = node
        .create_service::<SetBool, _>(SERVICE, |request: SetBool_Request| SetBool_Response {
            success: request.data,
            message: if request.data { "on" } else { "off" }.into(),
        })
        .unwrap();
    service
        .configure_introspection(QosProfile::keep_last(100), IntrospectionState::Contents)
        .unwrap();
    let (_sub, heard) = listen(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    let peer = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN,
        "introspection_peer.py",
        &["client", SERVICE, &CALLS.to_string()],
    ));
    let out = peer.finish(Instant::now() + Duration::from_secs(60));
    // Anything still on its way to roslite's listener arrives within the peer's last spin.
    common::wait_until(Duration::from_secs(5), || {
        heard.lock().unwrap().len() >= 4 * CALLS
    });
    ctx.shutdown();
    spinner.join().unwrap();
    assert!(out.success, "{out}");
    assert_eq!(
        out.values("response "),
        [
            "std_srvs.srv.SetBool_Response(success=True, message='on')",
            "std_srvs.srv.SetBool_Response(success=False, message='off')"
        ],
        "{out}"
    );
    assert_eq!(out.values("verdict "), ["ok"], "{out}");
    assert_publishers(&out, "motor ");
    assert_same_events(&out, &heard);
}

#[test]
fn introspected_roslite_client_calls_an_rclpy_server() {
    let ns = NetNs::create("introspection").expect("create a network namespace (needs root)");
    let ctx = common::networked_in(&ns, DOMAIN + 1);
    let mut peer = LinePeer::spawn(common::rclpy_script(
        &ns,
        DOMAIN + 1,
        "introspection_peer.py",
        &["server", SERVICE, &CALLS.to_string()],
    ));
    assert!(
        peer.wait_line(Instant::now() + Duration::from_secs(30), |l| l == "READY")
            .is_some(),
        "the rclpy server did not start"
    );
    let node = ctx.create_node("driver").unwrap();
    let (_sub, heard) = listen(&node);
    let client = node.create_client::<SetBool>(SERVICE).unwrap();
    client
        .configure_introspection(QosProfile::keep_last(100), IntrospectionState::Contents)
        .unwrap();
    let spinner = common::spin_in_background(&ctx, &node);
    assert!(client.wait_for_service(Duration::from_secs(20)));
    // Both listeners (rclpy's and ours) know our event publisher before the first call.
    assert!(common::wait_until(Duration::from_secs(20), || {
        node.count_subscribers(EVENTS) == 2 && _sub.publisher_count() == 2
    }));
    // The other side's event writer matches our listener when its discovery hears of it:
    // a moment more, as the peer allows too.
    std::thread::sleep(Duration::from_millis(500));
    for (i, data) in [true, false].into_iter().enumerate() {
        let response = client
            .call(SetBool_Request { data }, Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("call {i}: {e}"));
        assert_eq!(response.success, data);
    }
    let out = peer.finish(Instant::now() + Duration::from_secs(40));
    common::wait_until(Duration::from_secs(5), || {
        heard.lock().unwrap().len() >= 4 * CALLS
    });
    ctx.shutdown();
    spinner.join().unwrap();
    assert!(out.success, "{out}");
    assert_eq!(out.values("verdict "), ["ok"], "{out}");
    assert_publishers(&out, "driver ");
    assert_same_events(&out, &heard);
}
