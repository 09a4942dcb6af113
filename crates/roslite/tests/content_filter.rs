//! Content-filtered subscriptions on every path a message can take: within one context
//! (typed, serialized, a transient-local replay), and between two contexts over shared memory,
//! a Unix socket and RTPS/UDP on loopback. Messages the filter drops never reach the callback,
//! are counted as filtered out, and are not lost; the filter can be changed and removed.
//!
//! No test waits on time for its answer: each stream ends with a marker message that passes
//! every filter, and a publisher's messages arrive in order, so once the marker is in,
//! everything before it was delivered or dropped.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::content_filter::ContentFilterErrorKind;
use roslite::msgs::std_msgs::msg::{Int32, String as StringMsg};
use roslite::{
    ContentFilterOptions, Context, ContextOptions, Executor, LocalTransports, Message, Node,
    NodeError, QosProfile, SubscriptionOptions, TypeInfo,
};

mod common;

/// A domain of its own for each test (`offset` below 10), varied by process.
fn test_domain(offset: u32) -> u32 {
    assert!(offset < 10, "test domain offsets are below 10");
    170 + (std::process::id() % 4) * 10 + offset
}

/// The message that ends every stream and passes every filter here.
const MARKER: i32 = 1000;

/// Numbers 5 to 14, and the marker.
fn five_to_fourteen() -> ContentFilterOptions {
    ContentFilterOptions::new("data BETWEEN %0 AND %1 OR data = %2", ["5", "14", "1000"])
}

fn filtered(options: ContentFilterOptions) -> SubscriptionOptions {
    SubscriptionOptions {
        content_filter_options: options,
        ..SubscriptionOptions::default()
    }
}

type Received = Arc<Mutex<Vec<i32>>>;

/// A filtered subscription of `node` on "numbers" collecting what reaches its callback.
fn collecting(
    node: &Node,
    qos: QosProfile,
    options: ContentFilterOptions,
) -> (roslite::Subscription<Int32>, Received) {
    let received = Received::default();
    let sink = received.clone();
    let subscription = node
        .create_subscription_with_options(
            "numbers",
            qos,
            move |m: Int32| sink.lock().unwrap().push(m.data),
            filtered(options),
        )
        .unwrap();
    (subscription, received)
}

/// Publishes `values` then the marker.
fn publish_all(publisher: &roslite::Publisher<Int32>, values: impl IntoIterator<Item = i32>) {
    for data in values.into_iter().chain([MARKER]) {
        publisher.publish(Int32 { data }).unwrap();
    }
}

/// Waits (spinning `executor`, if given) until `received` holds `markers` markers.
fn until_markers(executor: Option<&Executor>, received: &Received, markers: usize) {
    let arrived = || {
        received
            .lock()
            .unwrap()
            .iter()
            .filter(|&&v| v == MARKER)
            .count()
            >= markers
    };
    let got = match executor {
        Some(executor) => common::spin_until(executor, Duration::from_secs(20), arrived),
        None => common::wait_until(Duration::from_secs(20), arrived),
    };
    assert!(
        got,
        "marker {markers} never arrived: {:?}",
        received.lock().unwrap()
    );
}

fn expected(values: impl IntoIterator<Item = i32>) -> Vec<i32> {
    values.into_iter().chain([MARKER]).collect()
}

/// The filtered stream, a changed filter and no filter, over one path: `subscription` is on
/// the other end of `publisher`'s path, and `wait` waits for the next marker.
fn filter_change_and_removal(
    publisher: &roslite::Publisher<Int32>,
    subscription: &roslite::Subscription<Int32>,
    received: &Received,
    wait: impl Fn(usize),
) {
    assert!(subscription.is_cft_enabled());
    assert_eq!(subscription.content_filter(), Some(five_to_fourteen()));
    publish_all(publisher, 0..30);
    wait(1);
    assert_eq!(*received.lock().unwrap(), expected(5..=14));

    subscription
        .set_content_filter("data < %0 OR data = 1000", &["3"])
        .unwrap();
    assert_eq!(
        subscription.content_filter(),
        Some(ContentFilterOptions::new("data < %0 OR data = 1000", ["3"]))
    );
    received.lock().unwrap().clear();
    publish_all(publisher, 0..10);
    wait(1);
    assert_eq!(*received.lock().unwrap(), expected(0..3));

    // A filter that does not compile leaves the one in place.
    let error = subscription.set_content_filter("dat = 1", &[]).unwrap_err();
    assert!(matches!(
        error.kind(),
        ContentFilterErrorKind::UnknownField { .. }
    ));
    assert!(subscription.is_cft_enabled());

    subscription.set_content_filter("", &[]).unwrap();
    assert!(!subscription.is_cft_enabled());
    assert_eq!(subscription.content_filter(), None);
    received.lock().unwrap().clear();
    publish_all(publisher, 0..5);
    wait(1);
    assert_eq!(*received.lock().unwrap(), expected(0..5));

    let stats = subscription.stats();
    assert_eq!(stats.filtered_out, 20 + 7, "dropped by the filter");
    assert_eq!(
        stats.received,
        11 + 4 + 6,
        "only what passed reached the queue"
    );
    assert_eq!(stats.malformed, 0);
    assert_eq!(
        subscription.message_lost_status().total_count,
        0,
        "filtered-out messages are not lost"
    );
}

#[test]
fn within_a_context_only_what_passes_reaches_the_callback() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("filtering").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let qos = QosProfile::keep_last(100);
    let (subscription, received) = collecting(&node, qos, five_to_fourteen());
    let publisher = node.create_publisher::<Int32>("numbers", qos).unwrap();
    filter_change_and_removal(&publisher, &subscription, &received, |markers| {
        until_markers(Some(&executor), &received, markers)
    });
}

#[test]
fn a_keep_all_subscription_is_not_held_up_by_what_it_filters_out() {
    // A best-effort keep-all subscription in this process loses what finds no room: 6000
    // filtered-out messages, more than it holds, must neither take room nor count as lost.
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("filtering").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let qos = QosProfile::DEFAULT.keep_all().best_effort();
    let (subscription, received) = collecting(&node, qos, five_to_fourteen());
    let publisher = node.create_publisher::<Int32>("numbers", qos).unwrap();
    publish_all(&publisher, (0..6000).map(|i| 2000 + i));
    until_markers(Some(&executor), &received, 1);
    assert_eq!(*received.lock().unwrap(), [MARKER]);
    assert_eq!(subscription.stats().filtered_out, 6000);
    assert_eq!(subscription.message_lost_status().total_count, 0);
}

#[test]
fn a_transient_local_late_joiner_gets_only_the_kept_messages_that_pass() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("filtering").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let qos = QosProfile::keep_last(100).transient_local();
    let publisher = node.create_publisher::<Int32>("numbers", qos).unwrap();
    publish_all(&publisher, 0..20);
    let (subscription, received) = collecting(&node, qos, five_to_fourteen());
    until_markers(Some(&executor), &received, 1);
    assert_eq!(*received.lock().unwrap(), expected(5..=14));
    assert_eq!(subscription.stats().filtered_out, 10);
}

#[test]
fn serialized_subscriptions_filter_by_the_types_description() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("filtering").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let qos = QosProfile::keep_last(100);
    let received = Received::default();
    let sink = received.clone();
    let subscription = node
        .create_serialized_subscription_with_options(
            "numbers",
            TypeInfo::of::<Int32>(),
            qos,
            move |bytes, _| {
                let m: Int32 = roslite::msgs::cdr::from_bytes(bytes.bytes()).unwrap();
                sink.lock().unwrap().push(m.data);
            },
            filtered(five_to_fourteen()),
        )
        .unwrap();
    assert!(subscription.is_cft_enabled());
    // A typed publisher reaches it through CDR, a serialized one with its bytes.
    let typed = node.create_publisher::<Int32>("numbers", qos).unwrap();
    publish_all(&typed, 0..20);
    until_markers(Some(&executor), &received, 1);
    let serialized = node
        .create_serialized_publisher("numbers", TypeInfo::of::<Int32>(), qos)
        .unwrap();
    for data in [3, 7, MARKER] {
        let bytes =
            roslite::msgs::cdr::to_vec(&Int32 { data }, roslite::msgs::cdr::Endianness::Big)
                .unwrap();
        serialized.publish(&bytes).unwrap();
    }
    until_markers(Some(&executor), &received, 2);
    let mut all = expected(5..=14);
    all.extend([7, MARKER]);
    assert_eq!(*received.lock().unwrap(), all);
    assert_eq!(subscription.filtered_out_count(), 10 + 1);
    assert_eq!(subscription.message_lost_status().total_count, 0);

    // A type known only by name has no description to read fields by.
    let bare = TypeInfo::new(Int32::TYPE_NAME, Int32::TYPE_HASH).unwrap();
    let refused = node.create_serialized_subscription_with_options(
        "numbers",
        bare,
        qos,
        |_, _| {},
        filtered(five_to_fourteen()),
    );
    match refused {
        Err(NodeError::ContentFilter(e)) => {
            assert!(matches!(
                e.kind(),
                ContentFilterErrorKind::NoTypeDescription { .. }
            ))
        }
        other => panic!(
            "expected a content filter error, got {:?}",
            other.map(|_| ())
        ),
    }
    // Without a filter the bare type is fine.
    assert!(node
        .create_serialized_subscription("numbers", bare, qos, |_, _| {})
        .is_ok());
}

#[test]
fn a_filter_that_does_not_compile_refuses_the_subscription_with_its_reason() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("filtering").unwrap();
    let refused = node.create_subscription_with_options(
        "chatter",
        10,
        |_: StringMsg| {},
        filtered(ContentFilterOptions::new("data = %0", ["hello"])),
    );
    let Err(NodeError::ContentFilter(error)) = refused else {
        panic!("an unquoted string parameter must be refused");
    };
    assert_eq!(error.kind(), &ContentFilterErrorKind::ParameterNotALiteral);
    assert!(
        error.to_string().contains("quote a string ('abc')"),
        "{error}"
    );
    // An empty expression is no filter, as in rcl.
    let unfiltered = node
        .create_subscription_with_options(
            "chatter",
            10,
            |_: StringMsg| {},
            filtered(ContentFilterOptions::new("", ["unused"])),
        )
        .unwrap();
    assert!(!unfiltered.is_cft_enabled());
}

/// Two contexts on loopback, the listener's filtered subscription fed by the talker's
/// publisher over the path `transports` allows; asserts the path is `transport`.
fn between_contexts(offset: u32, transports: LocalTransports, transport: &str) {
    let domain = test_domain(offset);
    let talker_ctx = common::localhost_context(domain, transports);
    let listener_ctx = common::localhost_context(domain, transports);
    let talker = talker_ctx.create_node("talker").unwrap();
    let listener = listener_ctx.create_node("listener").unwrap();
    let qos = QosProfile::keep_last(100);
    let (subscription, received) = collecting(&listener, qos, five_to_fourteen());
    let spinner = common::spin_in_background(&listener_ctx, &listener);
    let publisher = talker.create_publisher::<Int32>("numbers", qos).unwrap();
    assert!(
        common::wait_until(Duration::from_secs(20), || {
            publisher.acknowledged_subscription_count() == 1
                && subscription.acknowledged_publisher_count() == 1
        }),
        "the listener never matched"
    );
    let shown = talker_ctx
        .graph()
        .endpoints()
        .into_iter()
        .find(|e| !e.local && e.topic == "/numbers")
        .map_or("none", |e| e.transport);
    assert_eq!(shown, transport);
    filter_change_and_removal(&publisher, &subscription, &received, |markers| {
        until_markers(None, &received, markers)
    });
    listener_ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn over_shared_memory() {
    between_contexts(0, LocalTransports::default(), "shm");
}

#[test]
fn over_a_unix_socket() {
    let uds_only = LocalTransports {
        shm: false,
        uds: true,
        ..LocalTransports::default()
    };
    between_contexts(1, uds_only, "uds");
}

#[test]
fn over_rtps_udp() {
    between_contexts(2, LocalTransports::UDP_ONLY, "udp");
}

#[test]
fn the_rtps_reader_announces_its_filter_and_its_changes() {
    // Another roslite context reads the listener's SEDP data (PID_CONTENT_FILTER_PROPERTY):
    // its graph shows the filter, which follows set_content_filter.
    let domain = test_domain(3);
    let ctx = common::localhost_context(domain, LocalTransports::UDP_ONLY);
    let observer = common::localhost_context(domain, LocalTransports::UDP_ONLY);
    let node = ctx.create_node("listener").unwrap();
    let (subscription, _received) =
        collecting(&node, QosProfile::keep_last(10), five_to_fourteen());
    // The context's own graph shows its subscription's filter too.
    let own = ctx.graph().endpoints();
    let own = own.iter().find(|e| e.topic == "/numbers").unwrap();
    assert_eq!(own.content_filter, Some(five_to_fourteen()));
    let announced = || -> Option<Option<ContentFilterOptions>> {
        observer
            .graph()
            .endpoints()
            .into_iter()
            .find(|e| !e.local && e.topic == "/numbers")
            .map(|e| e.content_filter)
    };
    assert!(common::wait_until(Duration::from_secs(20), || {
        announced() == Some(Some(five_to_fourteen()))
    }));
    subscription.set_content_filter("data = 1", &[]).unwrap();
    let changed = ContentFilterOptions::new("data = 1", [""; 0]);
    assert!(common::wait_until(Duration::from_secs(20), || {
        announced() == Some(Some(changed.clone()))
    }));
    subscription.set_content_filter("", &[]).unwrap();
    assert!(common::wait_until(Duration::from_secs(20), || {
        announced() == Some(None)
    }));
}
