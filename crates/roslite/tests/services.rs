//! Services and clients: in one process (no network), and between two RTPS participants on
//! loopback with LOCALHOST discovery, as two processes would.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};
use roslite::{CallError, Context, ContextOptions, Executor, NetworkMode};

mod common;

/// A domain of its own per test process (other suites use 40..100 and 100..230 in steps).
fn test_domain(offset: u32) -> u32 {
    200 + (std::process::id() % 6) * 5 + offset
}

fn networked(domain_id: u32) -> Context {
    Context::new(ContextOptions::localhost(domain_id)).expect("start an RTPS network on loopback")
}

fn offline() -> Context {
    Context::new(ContextOptions {
        network: NetworkMode::Off,
        ..Default::default()
    })
    .unwrap()
}

fn add(a: i64, b: i64) -> AddTwoInts_Request {
    AddTwoInts_Request { a, b }
}

#[test]
fn in_process_call_reaches_the_local_server_without_a_network() {
    let ctx = offline();
    let server_node = ctx.create_node("adder").unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let counter = served.clone();
    let service = server_node
        .create_service::<AddTwoInts, _>("add_two_ints", move |req: AddTwoInts_Request| {
            counter.fetch_add(1, Ordering::Relaxed);
            AddTwoInts_Response { sum: req.a + req.b }
        })
        .unwrap();
    assert_eq!(service.service_name(), "/add_two_ints");
    let client_node = ctx.create_node("caller").unwrap();
    let client = client_node
        .create_client::<AddTwoInts>("/add_two_ints")
        .unwrap();
    assert!(client.service_is_ready());
    let spinner = common::spin_in_background(&ctx, &server_node);
    for i in 0..20 {
        let response = client.call(add(i, 2 * i), Duration::from_secs(5)).unwrap();
        assert_eq!(response.sum, 3 * i);
    }
    assert_eq!(served.load(Ordering::Relaxed), 20);
    assert_eq!(client.stats().replies_received, 20);
    assert_eq!(service.stats().replies_sent, 20);
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn async_calls_resolve_through_spin_until_complete() {
    let ctx = offline();
    let node = ctx.create_node("both").unwrap();
    let _service = node
        .create_service::<SetBool, _>("motor_power", |req: SetBool_Request| SetBool_Response {
            success: req.data,
            message: if req.data { "on" } else { "off" }.into(),
        })
        .unwrap();
    let client = node.create_client::<SetBool>("motor_power").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let future = client.call_async(SetBool_Request { data: true }).unwrap();
    // The server runs on this executor, so the future completes while it spins.
    let response = executor
        .spin_until_complete(future, Some(Duration::from_secs(5)))
        .expect("completes")
        .expect("a response");
    assert!(response.success);
    assert_eq!(response.message, "on");
}

#[test]
fn without_a_network_or_local_server_a_call_fails_at_once() {
    let ctx = offline();
    let node = ctx.create_node("lonely").unwrap();
    let client = node.create_client::<SetBool>("nobody").unwrap();
    assert!(!client.service_is_ready());
    assert!(!client.wait_for_service(Duration::from_millis(20)));
    let err = client
        .call(SetBool_Request { data: true }, Duration::from_secs(1))
        .unwrap_err();
    assert!(matches!(err, CallError::NoServer { .. }), "{err:?}");
    assert!(err.to_string().contains("/nobody"), "{err}");
}

#[test]
fn a_call_to_a_service_nobody_serves_times_out_with_a_clear_error() {
    let ctx = networked(test_domain(0));
    let node = ctx.create_node("caller").unwrap();
    let client = node.create_client::<SetBool>("no_such_service").unwrap();
    assert!(!client.wait_for_service(Duration::from_millis(300)));
    let err = client
        .call(SetBool_Request { data: true }, Duration::from_millis(300))
        .unwrap_err();
    match &err {
        CallError::Timeout {
            service,
            server_available,
            ..
        } => {
            assert_eq!(service, "/no_such_service");
            assert!(!server_available);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(err.to_string().contains("wait_for_service"), "{err}");
    assert_eq!(client.stats().timeouts, 1);
}

#[test]
fn calls_cross_between_participants_and_every_client_gets_its_own_replies() {
    let domain = test_domain(1);
    let server_ctx = networked(domain);
    let client_ctx = networked(domain);
    let server_node = server_ctx.create_node("adder").unwrap();
    let _service = server_node
        .create_service::<AddTwoInts, _>("add_two_ints", |req: AddTwoInts_Request| {
            AddTwoInts_Response { sum: req.a + req.b }
        })
        .unwrap();
    let spinner = common::spin_in_background(&server_ctx, &server_node);
    let client_node = client_ctx.create_node("caller").unwrap();
    // Two clients of one service: each reply reaches both reply readers, and each client
    // must keep only its own.
    let first = client_node
        .create_client::<AddTwoInts>("add_two_ints")
        .unwrap();
    let second = client_node
        .create_client::<AddTwoInts>("add_two_ints")
        .unwrap();
    assert!(first.wait_for_service(Duration::from_secs(10)));
    assert!(second.wait_for_service(Duration::from_secs(10)));
    for i in 0..25 {
        let a = first.call(add(i, 1), Duration::from_secs(5)).unwrap();
        let b = second.call(add(i, 1000), Duration::from_secs(5)).unwrap();
        assert_eq!(a.sum, i + 1);
        assert_eq!(b.sum, i + 1000);
    }
    // Concurrent calls from several threads on one client.
    let first = Arc::new(first);
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let client = first.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    let r = client.call(add(t, i), Duration::from_secs(5)).unwrap();
                    assert_eq!(r.sum, t + i);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(first.stats().replies_received, 65);
    assert_eq!(first.stats().unmatched_replies, 0);
    assert_eq!(second.stats().replies_received, 25);
    // Every reply reached the other client's reader too, which dropped it as not its own.
    let net = client_ctx.graph().service_stats();
    assert!(net.replies_for_other_clients >= 25, "{net:?}");
    // The graph shows both halves of the service, with the server's node.
    let endpoints = client_ctx.graph().endpoints();
    let remote_server: Vec<_> = endpoints
        .iter()
        .filter(|e| !e.local && e.topic == "/add_two_ints")
        .collect();
    assert_eq!(remote_server.len(), 2, "{endpoints:#?}");
    server_ctx.shutdown();
    spinner.join().unwrap();
}

/// In one context, a serialized server (what the C ABI and a Wasm guest make) and a serialized
/// client (the C ABI's, a guest's, `roslite service call`'s) reach the other kind and each
/// other, with and without a network: each call is answered once. Before, only a typed client
/// reached a typed server of its own Rust type in its process; every other pair never met
/// (`wait_for_service` stayed false), so two C or Wasm nodes in one process could not call
/// each other.
#[test]
fn serialized_servers_and_clients_meet_any_kind_in_their_own_context() {
    serialized_pairs_in(&offline(), "offline");
    serialized_pairs_in(&networked(test_domain(2)), "networked");
}

fn serialized_pairs_in(ctx: &Context, mode: &str) {
    use roslite::{QosProfile, TypeInfo};
    let types = (
        TypeInfo::of::<AddTwoInts_Request>(),
        TypeInfo::of::<AddTwoInts_Response>(),
    );
    let request_bytes =
        |a: i64, b: i64| roslite_cdr::to_vec(&add(a, b), roslite_cdr::Endianness::Little).unwrap();
    let sum_of = |bytes: &[u8]| {
        roslite_cdr::from_bytes::<AddTwoInts_Response>(bytes)
            .unwrap()
            .sum
    };

    let node = ctx.create_node("serialized_pairs").unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let counter = served.clone();
    let _bytes_server = node
        .create_serialized_service(
            "bytes_adder",
            "example_interfaces/srv/AddTwoInts",
            types,
            QosProfile::SERVICES_DEFAULT,
            move |request, responder| {
                counter.fetch_add(1, Ordering::Relaxed);
                let request: AddTwoInts_Request = roslite_cdr::from_bytes(request.bytes()).unwrap();
                let response = AddTwoInts_Response {
                    sum: request.a + request.b,
                };
                responder.send(
                    &roslite_cdr::to_vec(&response, roslite_cdr::Endianness::Little).unwrap(),
                );
            },
        )
        .unwrap();
    let _typed_server = node
        .create_service::<AddTwoInts, _>("typed_adder", |req: AddTwoInts_Request| {
            AddTwoInts_Response { sum: req.a + req.b }
        })
        .unwrap();
    let spinner = common::spin_in_background(ctx, &node);
    let caller = ctx.create_node("serialized_caller").unwrap();
    let patience = Duration::from_secs(5);

    // A typed client, a serialized server.
    let typed = caller.create_client::<AddTwoInts>("bytes_adder").unwrap();
    assert!(
        typed.wait_for_service(patience),
        "{mode}: typed -> serialized"
    );
    for i in 0..5 {
        let response = typed.call(add(i, 10), patience).unwrap();
        assert_eq!(response.sum, i + 10, "{mode}: typed -> serialized");
    }
    // A serialized client, to each kind of server.
    for service in ["bytes_adder", "typed_adder"] {
        let client = caller
            .create_serialized_client(service, types.0, types.1)
            .unwrap();
        assert!(
            client.wait_for_service(patience),
            "{mode}: serialized -> {service}"
        );
        for i in 0..5 {
            let reply = client.call(&request_bytes(i, 100), patience).unwrap();
            assert_eq!(sum_of(reply.bytes()), i + 100, "{mode}: {service}");
        }
        // A reply more than once per call would show here.
        std::thread::sleep(Duration::from_millis(100));
        let stats = client.stats();
        assert_eq!(
            (stats.replies_received, stats.unmatched_replies),
            (5, 0),
            "{mode}: serialized -> {service}"
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    let stats = typed.stats();
    assert_eq!((stats.replies_received, stats.unmatched_replies), (5, 0));
    assert_eq!(
        served.load(Ordering::Relaxed),
        10,
        "{mode}: requests served"
    );
    ctx.shutdown();
    spinner.join().unwrap();
}
