//! Service introspection: a server's and a client's calls published on
//! `<service>/_service_event`, in one process (the in-process path) and between contexts on
//! loopback (a same-host link, and RTPS over UDP), as processes would.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::service_msgs::msg::ServiceEventInfo;
use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Event, SetBool_Request, SetBool_Response};
use roslite::qos::QosProfile;
use roslite::{
    Context, ContextOptions, IntrospectionState, LocalTransports, NetworkMode, Node, Subscription,
};

mod common;

const SERVICE: &str = "/motor_power";
const EVENTS: &str = "/motor_power/_service_event";

fn offline() -> Context {
    Context::new(ContextOptions {
        network: NetworkMode::Off,
        ..Default::default()
    })
    .unwrap()
}

fn motor(request: SetBool_Request) -> SetBool_Response {
    SetBool_Response {
        success: request.data,
        message: if request.data { "on" } else { "off" }.into(),
    }
}

type Events = Arc<Mutex<Vec<SetBool_Event>>>;

/// A subscription of `node` to the service's events, keeping every one.
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

fn wait_for_events(events: &Events, n: usize) -> Vec<SetBool_Event> {
    assert!(
        common::wait_until(Duration::from_secs(10), || events.lock().unwrap().len()
            >= n),
        "expected {n} events, got {:?}",
        events.lock().unwrap()
    );
    events.lock().unwrap().clone()
}

/// The events of one call, by kind: each kind once, all naming the same client and number.
fn by_kind(events: &[SetBool_Event], sequence_number: i64) -> [SetBool_Event; 4] {
    let of_call: Vec<_> = events
        .iter()
        .filter(|e| e.info.sequence_number == sequence_number)
        .collect();
    assert_eq!(of_call.len(), 4, "call {sequence_number}: {of_call:?}");
    let gid = of_call[0].info.client_gid;
    assert!(
        of_call.iter().all(|e| e.info.client_gid == gid),
        "one call's events name one client: {of_call:?}"
    );
    assert_ne!(gid, [0; 16], "the client has an id");
    [
        ServiceEventInfo::REQUEST_SENT,
        ServiceEventInfo::REQUEST_RECEIVED,
        ServiceEventInfo::RESPONSE_SENT,
        ServiceEventInfo::RESPONSE_RECEIVED,
    ]
    .map(|kind| {
        let mut of_kind = of_call.iter().filter(|e| e.info.event_type == kind);
        let event = (*of_kind.next().unwrap_or_else(|| panic!("no event {kind}"))).clone();
        assert!(of_kind.next().is_none(), "event {kind} twice");
        event
    })
}

/// Checks the four events of `call` (numbered `sequence_number`) with their contents.
fn assert_call_with_contents(events: &[SetBool_Event], sequence_number: i64, data: bool) {
    let [sent, received, replied, taken] = by_kind(events, sequence_number);
    let request = vec![SetBool_Request { data }];
    let response = vec![motor(SetBool_Request { data })];
    assert_eq!((&sent.request, &sent.response), (&request, &vec![]));
    assert_eq!((&received.request, &received.response), (&request, &vec![]));
    assert_eq!((&replied.request, &replied.response), (&vec![], &response));
    assert_eq!((&taken.request, &taken.response), (&vec![], &response));
    // Stamps from the system clock, in the order the steps happen.
    let stamp = |e: &SetBool_Event| (e.info.stamp.sec, e.info.stamp.nanosec);
    assert!(stamp(&sent) > (1_600_000_000, 0), "{sent:?}");
    assert!(stamp(&sent) <= stamp(&received));
    assert!(stamp(&received) <= stamp(&replied));
    assert!(stamp(&replied) <= stamp(&taken));
}

#[test]
fn in_process_calls_publish_four_events_each_with_contents() {
    let ctx = offline();
    let node = ctx.create_node("motor").unwrap();
    let service = node.create_service::<SetBool, _>(SERVICE, motor).unwrap();
    let client = node.create_client::<SetBool>(SERVICE).unwrap();
    assert_eq!(service.introspection_state(), IntrospectionState::Off);
    let (_sub, events) = listen(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    // Off: nothing is published, and no publisher exists.
    client
        .call(SetBool_Request { data: false }, Duration::from_secs(5))
        .unwrap();
    assert_eq!(node.count_publishers(EVENTS), 0);
    for side in [
        service.configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Contents),
        client.configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Contents),
    ] {
        side.unwrap();
    }
    assert_eq!(node.count_publishers(EVENTS), 2);
    for data in [true, false] {
        client
            .call(SetBool_Request { data }, Duration::from_secs(5))
            .unwrap();
    }
    let events = wait_for_events(&events, 8);
    ctx.shutdown();
    spinner.join().unwrap();
    assert_eq!(events.len(), 8, "{events:?}");
    // The first call went out before introspection: calls 2 and 3 are the ones seen.
    assert_call_with_contents(&events, 2, true);
    assert_call_with_contents(&events, 3, false);
}

#[test]
fn metadata_leaves_the_contents_out_and_off_removes_the_publisher() {
    let ctx = offline();
    let node = ctx.create_node("motor").unwrap();
    let service = node.create_service::<SetBool, _>(SERVICE, motor).unwrap();
    let client = node.create_client::<SetBool>(SERVICE).unwrap();
    let (_sub, events) = listen(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    service
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Metadata)
        .unwrap();
    client
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Metadata)
        .unwrap();
    client
        .call(SetBool_Request { data: true }, Duration::from_secs(5))
        .unwrap();
    let seen = wait_for_events(&events, 4);
    for event in by_kind(&seen, 1) {
        assert!(
            event.request.is_empty() && event.response.is_empty(),
            "{event:?}"
        );
    }
    // Off on both sides: the publishers go, and a call publishes nothing.
    service
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Off)
        .unwrap();
    client
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Off)
        .unwrap();
    assert_eq!(node.count_publishers(EVENTS), 0);
    client
        .call(SetBool_Request { data: false }, Duration::from_secs(5))
        .unwrap();
    // Contents again on the server only: its two events for the next call, with contents.
    service
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Contents)
        .unwrap();
    client
        .call(SetBool_Request { data: true }, Duration::from_secs(5))
        .unwrap();
    let seen = wait_for_events(&events, 6);
    ctx.shutdown();
    spinner.join().unwrap();
    assert_eq!(seen.len(), 6, "nothing while off: {seen:?}");
    let kinds: Vec<_> = seen[4..]
        .iter()
        .map(|e| {
            (
                e.info.event_type,
                e.info.sequence_number,
                e.request.len() + e.response.len(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (ServiceEventInfo::REQUEST_RECEIVED, 3, 1),
            (ServiceEventInfo::RESPONSE_SENT, 3, 1)
        ]
    );
}

#[test]
fn an_invalid_qos_is_refused_and_introspection_stays_off() {
    let ctx = offline();
    let node = ctx.create_node("motor").unwrap();
    let client = node.create_client::<SetBool>(SERVICE).unwrap();
    let error = client
        .configure_introspection(QosProfile::keep_last(0), IntrospectionState::Contents)
        .unwrap_err();
    assert!(error.to_string().contains("depth"), "{error}");
    assert_eq!(client.introspection_state(), IntrospectionState::Off);
    assert_eq!(node.count_publishers(EVENTS), 0);
}

/// A domain of this test process's own (other suites use other ranges).
fn test_domain(offset: u32) -> u32 {
    60 + (std::process::id() % 10) * 2 + offset
}

/// A server in one context and a client in another, both introspected, the events heard in
/// a third: one call's four events agree on the client's id, over `transports`. The contexts
/// discover each other on loopback, as three processes on one host would.
fn across_contexts(transports: LocalTransports, domain: u32) {
    let context = || common::localhost_context(domain, transports);
    let (server_ctx, client_ctx, listener_ctx) = (context(), context(), context());
    let server_node = server_ctx.create_node("motor").unwrap();
    let service = server_node
        .create_service::<SetBool, _>(SERVICE, motor)
        .unwrap();
    service
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Contents)
        .unwrap();
    let client_node = client_ctx.create_node("driver").unwrap();
    let client = client_node.create_client::<SetBool>(SERVICE).unwrap();
    client
        .configure_introspection(QosProfile::SYSTEM_DEFAULT, IntrospectionState::Contents)
        .unwrap();
    let listener = listener_ctx.create_node("echo").unwrap();
    let (sub, events) = listen(&listener);
    let spinners = [
        common::spin_in_background(&server_ctx, &server_node),
        common::spin_in_background(&listener_ctx, &listener),
    ];
    assert!(client.wait_for_service(Duration::from_secs(10)));
    assert!(
        // Acknowledged: each event writer sends to the listener already (over a same-host
        // link, its half is attached), so a volatile first event is not sent before it.
        common::wait_until(Duration::from_secs(10), || {
            sub.acknowledged_publisher_count() == 2
        }),
        "both event publishers matched"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    for data in [true, false] {
        client
            .call(SetBool_Request { data }, deadline - Instant::now())
            .unwrap();
    }
    let seen = wait_for_events(&events, 8);
    for ctx in [&server_ctx, &client_ctx, &listener_ctx] {
        ctx.shutdown();
    }
    for spinner in spinners {
        spinner.join().unwrap();
    }
    let mut numbers: Vec<_> = seen.iter().map(|e| e.info.sequence_number).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), 2, "two calls: {seen:?}");
    assert_call_with_contents(&seen, numbers[0], true);
    assert_call_with_contents(&seen, numbers[1], false);
}

#[test]
fn events_agree_across_processes_over_a_same_host_link() {
    across_contexts(LocalTransports::default(), test_domain(0));
}

#[test]
fn events_agree_across_processes_over_udp() {
    across_contexts(
        LocalTransports {
            shm: false,
            uds: false,
            ..Default::default()
        },
        test_domain(1),
    );
}
