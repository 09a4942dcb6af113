//! Runtime behaviour inside one process. Message types are written by hand here so these tests
//! do not depend on generated code.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite_cdr::{CdrDecode, CdrEncode, CdrReader, CdrWriter, DecodeError, EncodeError};

use crate::vocabulary::names::NameRule;
use crate::*;

#[derive(Clone, Debug, Default, PartialEq)]
struct Blob {
    data: Vec<u8>,
}

impl CdrEncode for Blob {
    fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
        w.write_len(self.data.len())?;
        w.write_bytes(&self.data);
        Ok(())
    }
}

impl CdrDecode for Blob {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        let len = r.read_len(1)?;
        Ok(Self {
            data: r.read_bytes(len)?.to_vec(),
        })
    }
}

impl Message for Blob {
    const TYPE_NAME: &'static str = "test_msgs/msg/Blob";
    const DDS_TYPE_NAME: &'static str = "test_msgs::msg::dds_::Blob_";
    const TYPE_HASH: &'static str = "RIHS01_0000";
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Count(u32);

impl CdrEncode for Count {
    fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
        w.write_u32(self.0);
        Ok(())
    }
}

impl CdrDecode for Count {
    fn decode(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        r.read_u32().map(Self)
    }
}

impl Message for Count {
    const TYPE_NAME: &'static str = "test_msgs/msg/Count";
    const DDS_TYPE_NAME: &'static str = "test_msgs::msg::dds_::Count_";
    const TYPE_HASH: &'static str = "RIHS01_0001";
}

fn setup() -> (Context, Node, Executor) {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("test_node").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    (ctx, node, executor)
}

fn collector<T: Send + 'static>() -> (Arc<Mutex<Vec<T>>>, impl Fn(T) + Send + Clone + 'static) {
    let store = Arc::new(Mutex::new(Vec::new()));
    let sink = store.clone();
    (store, move |item| sink.lock().unwrap().push(item))
}

#[test]
fn owned_message_to_one_subscription_is_moved_not_copied() {
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<Blob>();
    let _sub = node
        .create_subscription("blob", 10, move |msg: Blob| push(msg))
        .unwrap();
    let publisher = node.create_publisher::<Blob>("blob", 10).unwrap();
    let message = Blob {
        data: vec![7; 4 << 20],
    };
    let sent_ptr = message.data.as_ptr();
    publisher.publish(message).unwrap();
    executor.spin_some();
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].data.as_ptr(),
        sent_ptr,
        "the subscription must get the very same buffer"
    );
}

#[test]
fn several_shared_subscriptions_see_one_instance() {
    let (_ctx, node, executor) = setup();
    let (a, push_a) = collector::<Arc<Blob>>();
    let (b, push_b) = collector::<usize>();
    let _sa = node
        .create_subscription("blob", 10, move |msg: Arc<Blob>| push_a(msg))
        .unwrap();
    let _sb = node
        .create_subscription("blob", 10, move |msg: &Blob| {
            push_b(msg.data.as_ptr() as usize)
        })
        .unwrap();
    let publisher = node.create_publisher::<Blob>("blob", 10).unwrap();
    let message = Arc::new(Blob {
        data: vec![1, 2, 3],
    });
    let sent = message.clone();
    publisher.publish_shared(message).unwrap();
    executor.spin_some();
    let a = a.lock().unwrap();
    assert!(Arc::ptr_eq(&a[0], &sent));
    assert_eq!(b.lock().unwrap()[0], sent.data.as_ptr() as usize);
}

#[test]
fn ownership_taking_subscription_gets_a_copy_only_when_others_share() {
    let (_ctx, node, executor) = setup();
    let (shared, push_shared) = collector::<Arc<Blob>>();
    let (owned, push_owned) = collector::<Blob>();
    let _s = node
        .create_subscription("blob", 10, move |m: Arc<Blob>| push_shared(m))
        .unwrap();
    let _o = node
        .create_subscription("blob", 10, move |m: Blob| push_owned(m))
        .unwrap();
    let publisher = node.create_publisher::<Blob>("blob", 10).unwrap();
    let message = Blob {
        data: vec![9; 1000],
    };
    let sent_ptr = message.data.as_ptr();
    publisher.publish(message).unwrap();
    executor.spin_some();
    assert_eq!(shared.lock().unwrap()[0].data.as_ptr(), sent_ptr);
    let owned = owned.lock().unwrap();
    assert_ne!(
        owned[0].data.as_ptr(),
        sent_ptr,
        "shared instance must not be handed out mutably"
    );
    assert_eq!(owned[0].data, vec![9; 1000]);
}

#[test]
fn many_publishers_and_subscriptions_of_several_types() {
    let (_ctx, node, executor) = setup();
    let other = node.context().create_node("other").unwrap();
    executor.add_node(&other);
    let (blobs, push_blob) = collector::<(u32, usize)>();
    let (counts, push_count) = collector::<u32>();
    let mut subs_blob = Vec::new();
    for i in 0..3u32 {
        let push = push_blob.clone();
        subs_blob.push(
            other
                .create_subscription("a", 100, move |m: Blob| push((i, m.data.len())))
                .unwrap(),
        );
    }
    let _sc = node
        .create_subscription("b", 100, move |m: Count| push_count(m.0))
        .unwrap();
    let pa1 = node.create_publisher::<Blob>("a", 10).unwrap();
    let pa2 = other.create_publisher::<Blob>("/a", 10).unwrap();
    let pb = node.create_publisher::<Count>("b", 10).unwrap();
    pa1.publish(Blob { data: vec![0; 1] }).unwrap();
    pa2.publish(Blob { data: vec![0; 2] }).unwrap();
    pb.publish(Count(5)).unwrap();
    pb.publish(Count(6)).unwrap();
    executor.spin_some();
    let mut blobs = blobs.lock().unwrap().clone();
    blobs.sort();
    assert_eq!(blobs, [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]);
    assert_eq!(*counts.lock().unwrap(), [5, 6]);
    assert_eq!(pa1.subscription_count(), 3);
    drop(subs_blob);
    assert_eq!(pa1.subscription_count(), 0);
    let topics = node.topic_names_and_types();
    assert!(
        topics.contains(&("/a".to_owned(), vec!["test_msgs/msg/Blob".to_owned()])),
        "{topics:?}"
    );
}

#[test]
fn the_graph_of_a_context_without_network_is_its_own_endpoints() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let talker = ctx.create_node_with_namespace("talker", "/robot").unwrap();
    let listener = ctx.create_node("listener").unwrap();
    let _p = talker
        .create_publisher::<Count>("status", QosProfile::keep_last(3))
        .unwrap();
    let _s1 = listener
        .create_subscription("/robot/status", 10, |_: Count| {})
        .unwrap();
    let _s2 = listener
        .create_subscription("other", 10, |_: Blob| {})
        .unwrap();
    assert_eq!(
        listener.node_names(),
        ["/listener".to_owned(), "/robot/talker".to_owned()]
    );
    assert_eq!(
        listener.topic_names_and_types(),
        [
            ("/other".to_owned(), vec!["test_msgs/msg/Blob".to_owned()]),
            // Every node publishes parameter events, as in rclcpp...
            (
                "/parameter_events".to_owned(),
                vec!["rcl_interfaces/msg/ParameterEvent".to_owned()]
            ),
            (
                "/robot/status".to_owned(),
                vec!["test_msgs/msg/Count".to_owned()]
            ),
            // And its log lines.
            (
                "/rosout".to_owned(),
                vec!["rcl_interfaces/msg/Log".to_owned()]
            ),
        ]
    );
    // Names resolve as the asking node resolves them.
    assert_eq!(talker.count_publishers("status"), 1);
    assert_eq!(talker.count_subscribers("status"), 1);
    assert_eq!(listener.count_publishers("status"), 0);
    assert_eq!(listener.count_publishers("bad name!"), 0);
    let publishers = listener.publishers_info_by_topic("/robot/status");
    assert_eq!(publishers.len(), 1);
    let p = &publishers[0];
    assert_eq!(p.node, Some(("/robot".to_owned(), "talker".to_owned())));
    assert_eq!(p.type_name, "test_msgs/msg/Count");
    assert_eq!(p.qos.history, Some(History::KeepLast(3)));
    assert!(p.local);
    assert_eq!(p.transport, "intra");
    // Every node serves the parameter services and ~/get_type_description.
    let services = listener.service_names_and_types();
    for (service, ty) in [
        (
            "/robot/talker/get_parameters",
            "rcl_interfaces/srv/GetParameters",
        ),
        (
            "/robot/talker/get_type_description",
            "type_description_interfaces/srv/GetTypeDescription",
        ),
    ] {
        assert!(
            services.contains(&(service.to_owned(), vec![ty.to_owned()])),
            "{services:?}"
        );
    }
    assert_eq!(services.len(), 14, "{services:?}");
}

#[test]
fn a_nodes_log_lines_are_published_on_rosout() {
    use crate::msgs::rcl_interfaces::msg::Log;
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<Log>();
    let _sub = node
        .create_subscription("/rosout", QosProfile::ROSOUT, move |m: Log| push(m))
        .unwrap();
    node.logger().info(format_args!("hello {}", 42));
    let line = line!() - 1;
    node.logger().debug(format_args!(
        "below the threshold: console and rosout alike"
    ));
    crate::ros_warn!(node.logger(), "careful");
    executor.spin_some();
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        (got[0].level, got[0].name.as_str(), got[0].msg.as_str()),
        (Log::INFO, "test_node", "hello 42")
    );
    // The caller's place, as rclcpp's macros record it.
    assert!(got[0].file.ends_with("tests.rs"), "{}", got[0].file);
    assert_eq!(got[0].line, line);
    assert!(got[0].stamp.sec > 1_600_000_000, "{:?}", got[0].stamp);
    assert_eq!((got[1].level, got[1].msg.as_str()), (Log::WARN, "careful"));
    // A logger method cannot know its caller's function; the macros name it.
    assert_eq!(got[0].function, "");
    assert_eq!(got[1].function, "a_nodes_log_lines_are_published_on_rosout");
}

#[test]
fn disable_rosout_logs_leaves_rosout_out() {
    let args = RosArgs::parse(["p", "--ros-args", "--disable-rosout-logs"]).unwrap();
    let ctx = Context::new(ContextOptions {
        args,
        ..Default::default()
    })
    .unwrap();
    let node = ctx.create_node("quiet").unwrap();
    assert_eq!(node.count_publishers("/rosout"), 0);
    let loud = Context::new(ContextOptions::default()).unwrap();
    let node = loud.create_node("loud").unwrap();
    assert_eq!(node.count_publishers("/rosout"), 1);
}

#[test]
fn keep_last_overwrites_oldest_for_a_slow_subscription() {
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<u32>();
    let sub = node
        .create_subscription("n", 3, move |m: Count| push(m.0))
        .unwrap();
    let publisher = node.create_publisher::<Count>("n", 10).unwrap();
    for i in 0..10 {
        publisher.publish(Count(i)).unwrap();
    }
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), [7, 8, 9]);
    assert_eq!(sub.stats().overwritten, 7);
}

#[test]
fn keep_all_keeps_everything_in_order() {
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<u32>();
    let _sub = node
        .create_subscription("n", QosProfile::DEFAULT.keep_all(), move |m: Count| {
            push(m.0)
        })
        .unwrap();
    let publisher = node
        .create_publisher::<Count>("n", QosProfile::DEFAULT.keep_all())
        .unwrap();
    for i in 0..1000 {
        publisher.publish(Count(i)).unwrap();
    }
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), (0..1000).collect::<Vec<_>>());
}

/// A keep-all subscription in this process takes at most `KEEP_ALL_MAX_SAMPLES`. Here the
/// burst is published from a callback of the executor that would take the messages, so
/// waiting could not make room: each publish beyond the bound times out (reliable) or is lost
/// and counted (best effort) without waiting. Once the callback returns, the executor delivers
/// every message that got in, in order.
#[test]
fn keep_all_in_this_process_is_bounded_and_reports_what_did_not_fit() {
    let (_ctx, node, executor) = setup();
    let (reliable, push) = collector::<u32>();
    let _reliable = node
        .create_subscription(
            "bounded",
            QosProfile::DEFAULT.keep_all(),
            move |m: Count| push(m.0),
        )
        .unwrap();
    let (lossy, push) = collector::<u32>();
    let lossy_sub = node
        .create_subscription(
            "bounded",
            QosProfile::DEFAULT.keep_all().best_effort(),
            move |m: Count| push(m.0),
        )
        .unwrap();
    let publisher = Arc::new(
        node.create_publisher::<Count>("bounded", QosProfile::DEFAULT.keep_all())
            .unwrap(),
    );
    let bound = crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES as u32;
    let (timed_out, record) = collector::<u32>();
    let burst = publisher.clone();
    let _go = node
        .create_subscription("go", 1, move |_: Count| {
            for i in 0..bound + 3 {
                match burst.publish(Count(i)) {
                    Ok(()) => {}
                    Err(PublishError::Timeout) => record(i),
                    Err(e) => panic!("publish {i}: {e}"),
                }
            }
        })
        .unwrap();
    node.create_publisher::<Count>("go", 1)
        .unwrap()
        .publish(Count(0))
        .unwrap();
    executor.spin_some();
    assert_eq!(*timed_out.lock().unwrap(), [bound, bound + 1, bound + 2]);
    assert_eq!(*reliable.lock().unwrap(), (0..bound).collect::<Vec<_>>());
    assert_eq!(*lossy.lock().unwrap(), (0..bound).collect::<Vec<_>>());
    assert_eq!(lossy_sub.message_lost_status().total_count, 3);

    // With room again, publishing goes on.
    publisher.publish(Count(bound + 3)).unwrap();
    executor.spin_some();
    assert_eq!(reliable.lock().unwrap().last(), Some(&(bound + 3)));
}

/// A transient-local keep-all publisher keeps the newest `KEEP_ALL_MAX_SAMPLES` for late
/// joiners, as its RTPS writer does once the oldest are acknowledged.
#[test]
fn a_keep_all_publishers_history_for_late_joiners_is_bounded() {
    let (_ctx, node, executor) = setup();
    let qos = QosProfile::DEFAULT.keep_all().transient_local();
    let publisher = node.create_publisher::<Count>("kept", qos).unwrap();
    let bound = crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES as u32;
    for i in 0..bound + 2 {
        publisher.publish(Count(i)).unwrap();
    }
    let (got, push) = collector::<u32>();
    let _late = node
        .create_subscription("kept", qos, move |m: Count| push(m.0))
        .unwrap();
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), (2..bound + 2).collect::<Vec<_>>());
}

#[test]
fn transient_local_late_joiner_gets_last_samples() {
    let (_ctx, node, executor) = setup();
    let qos = QosProfile::keep_last(2).transient_local();
    let publisher = node.create_publisher::<Count>("latched", qos).unwrap();
    for i in 0..5 {
        publisher.publish(Count(i)).unwrap();
    }
    let (got, push) = collector::<u32>();
    let late_qos = QosProfile::keep_last(10).transient_local();
    let _late = node
        .create_subscription("latched", late_qos, move |m: Count| push(m.0))
        .unwrap();
    let (volatile, push_v) = collector::<u32>();
    let _vol = node
        .create_subscription("latched", 10, move |m: Count| push_v(m.0))
        .unwrap();
    publisher.publish(Count(5)).unwrap();
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), [3, 4, 5]);
    assert_eq!(*volatile.lock().unwrap(), [5]);
}

#[test]
fn incompatible_qos_is_an_observable_event_and_blocks_delivery() {
    let (_ctx, node, executor) = setup();
    let publisher = node
        .create_publisher::<Count>("q", QosProfile::SENSOR_DATA)
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let events2 = events.clone();
    publisher.on_incompatible_qos(move |status| events2.lock().unwrap().push(status));
    let (got, push) = collector::<u32>();
    let sub = node
        .create_subscription("q", QosProfile::DEFAULT, move |m: Count| push(m.0))
        .unwrap();
    publisher.publish(Count(1)).unwrap();
    executor.spin_some();
    assert!(got.lock().unwrap().is_empty());
    let status = sub.incompatible_qos_status();
    assert_eq!(status.total_count, 1);
    assert_eq!(status.last_policy, Some(QosPolicyKind::Reliability));
    assert_eq!(sub.incompatible_qos_status().total_count_change, 0);
    assert_eq!(events.lock().unwrap().len(), 1);
    assert_eq!(
        publisher.incompatible_qos_status().last_policy,
        Some(QosPolicyKind::Reliability)
    );
    // A best-effort subscription is compatible with a best-effort publisher.
    let (got_be, push_be) = collector::<u32>();
    let _be = node
        .create_subscription("q", QosProfile::SENSOR_DATA, move |m: Count| push_be(m.0))
        .unwrap();
    publisher.publish(Count(2)).unwrap();
    executor.spin_some();
    assert_eq!(*got_be.lock().unwrap(), [2]);
}

#[test]
fn lifespan_drops_stale_messages() {
    let (_ctx, node, executor) = setup();
    let qos = QosProfile::keep_last(10).lifespan(Duration::from_millis(20));
    let (got, push) = collector::<u32>();
    let sub = node
        .create_subscription("l", qos, move |m: Count| push(m.0))
        .unwrap();
    let publisher = node.create_publisher::<Count>("l", qos).unwrap();
    publisher.publish(Count(1)).unwrap();
    std::thread::sleep(Duration::from_millis(40));
    publisher.publish(Count(2)).unwrap();
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), [2]);
    assert_eq!(sub.stats().expired, 1);
}

#[test]
fn matched_status_follows_local_endpoints_coming_and_going() {
    let (_ctx, node, _executor) = setup();
    let publisher = node.create_publisher::<Count>("m", 10).unwrap();
    let (seen, on_matched) = collector::<MatchedStatus>();
    publisher.on_matched(on_matched);
    assert_eq!(publisher.matched_status(), MatchedStatus::default());
    let first = node.create_subscription("m", 10, |_: Count| {}).unwrap();
    let second = node.create_subscription("m", 10, |_: Count| {}).unwrap();
    // Not matched: an incompatible QoS and another type.
    let _incompatible = node
        .create_subscription(
            "m",
            QosProfile::keep_last(1).transient_local(),
            |_: Count| {},
        )
        .unwrap();
    let _other_type = node.create_subscription("m", 10, |_: Blob| {}).unwrap();
    assert_eq!(publisher.subscription_count(), 2);
    // The callback was handed each change as it happened, so none is left for a read (DDS:
    // change counts run from the last read or callback).
    assert_eq!(
        publisher.matched_status(),
        MatchedStatus {
            total_count: 2,
            total_count_change: 0,
            current_count: 2,
            current_count_change: 0,
        }
    );
    assert_eq!(first.publisher_count(), 1);
    drop(first);
    let one = |total_count, current_count, change: i32| MatchedStatus {
        total_count,
        total_count_change: u32::from(change > 0),
        current_count,
        current_count_change: change,
    };
    assert_eq!(
        *seen.lock().unwrap(),
        [one(1, 1, 1), one(2, 2, 1), one(2, 1, -1)]
    );
    // Without a callback the changes add up until read.
    assert_eq!(second.matched_status(), one(1, 1, 1));
    let passing = node.create_publisher::<Count>("m", 10).unwrap();
    drop(passing);
    assert_eq!(
        second.matched_status(),
        MatchedStatus {
            total_count: 2,
            total_count_change: 1,
            current_count: 1,
            current_count_change: 0,
        }
    );
    // A publisher going away unmatches its subscriptions.
    let late = node.create_publisher::<Count>("m", 10).unwrap();
    assert_eq!(second.publisher_count(), 2);
    drop(late);
    drop(publisher);
    let status = second.matched_status();
    assert_eq!((status.total_count, status.current_count), (3, 0));
}

#[test]
fn liveliness_changed_counts_matched_publishers_as_alive() {
    let (_ctx, node, _executor) = setup();
    let subscription = node
        .create_subscription("alive", 10, |_: Count| {})
        .unwrap();
    let (seen, on_changed) = collector::<crate::vocabulary::events::LivelinessChangedStatus>();
    subscription.on_liveliness_changed(on_changed);
    let first = node.create_publisher::<Count>("alive", 10).unwrap();
    let second = node.create_publisher::<Count>("alive", 10).unwrap();
    drop(first);
    let alive =
        |alive_count, alive_count_change| crate::vocabulary::events::LivelinessChangedStatus {
            alive_count,
            alive_count_change,
            ..Default::default()
        };
    // DDS: a publisher with an infinite lease (the ROS default) is alive while matched.
    assert_eq!(
        *seen.lock().unwrap(),
        [alive(1, 1), alive(2, 1), alive(1, -1)]
    );
    assert_eq!(subscription.liveliness_changed_status(), alive(1, 0));
    drop(second);
    assert_eq!(subscription.liveliness_changed_status(), alive(0, 0));
    assert_eq!(seen.lock().unwrap().last(), Some(&alive(0, -1)));
}

#[test]
fn deadline_misses_count_periods_without_a_message_on_both_ends() {
    let (_ctx, node, executor) = setup();
    let period = Duration::from_millis(100);
    let qos = QosProfile::keep_last(10).deadline(period);
    let sub = node.create_subscription("d", qos, |_: Count| {}).unwrap();
    let publisher = node.create_publisher::<Count>("d", qos).unwrap();
    let (requested, on_requested) = collector::<(std::time::Instant, DeadlineMissedStatus)>();
    sub.on_deadline_missed(move |s| on_requested((std::time::Instant::now(), s)));
    let (offered, on_offered) = collector::<(std::time::Instant, DeadlineMissedStatus)>();
    publisher.on_deadline_missed(move |s| on_offered((std::time::Instant::now(), s)));
    // Nothing is due before the first message.
    executor.spin_for(Duration::from_millis(250));
    assert!(requested.lock().unwrap().is_empty());
    assert!(offered.lock().unwrap().is_empty());
    let sent = std::time::Instant::now();
    publisher.publish(Count(1)).unwrap();
    let start = std::time::Instant::now();
    while (requested.lock().unwrap().len() < 2 || offered.lock().unwrap().len() < 2)
        && start.elapsed() < Duration::from_secs(10)
    {
        executor.spin_once(Some(Duration::from_millis(50)));
    }
    let elapsed = sent.elapsed();
    for (end, seen) in [("subscription", &requested), ("publisher", &offered)] {
        let seen = seen.lock().unwrap();
        assert!(seen.len() >= 2, "{end}: {seen:?}");
        // Never early, never more than the periods that really passed, each reported once.
        let (first_at, first) = seen[0];
        assert!(first_at - sent >= period, "{end}: {:?}", first_at - sent);
        assert_eq!(first.total_count, first.total_count_change, "{end}");
        assert!(first.total_count >= 1);
        let (_, last) = seen[seen.len() - 1];
        let passed = (elapsed.as_millis() / period.as_millis()) as u32;
        assert!(
            last.total_count <= passed,
            "{end}: {last:?} after {elapsed:?}"
        );
        assert!(last.total_count >= seen.len() as u32, "{end}: {seen:?}");
    }
    assert!(sub.deadline_missed_status().total_count >= 2);
    assert_eq!(sub.deadline_missed_status().total_count_change, 0);
    assert!(publisher.deadline_missed_status().total_count >= 2);
    // Without a deadline there is nothing to miss.
    let plain = node.create_publisher::<Count>("plain", 10).unwrap();
    plain.publish(Count(1)).unwrap();
    assert_eq!(
        plain.deadline_missed_status(),
        DeadlineMissedStatus::default()
    );
}

#[test]
fn different_types_on_one_topic_do_not_match() {
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<u32>();
    let _sub = node
        .create_subscription("t", 10, move |m: Count| push(m.0))
        .unwrap();
    let publisher = node.create_publisher::<Blob>("t", 10).unwrap();
    publisher.publish(Blob::default()).unwrap();
    executor.spin_some();
    assert!(got.lock().unwrap().is_empty());
    assert_eq!(publisher.subscription_count(), 0);
}

#[test]
fn names_resolve_with_namespace_private_and_remapping() {
    let args = RosArgs::parse(["p", "--ros-args", "-r", "chatter:=/remapped"]).unwrap();
    let ctx = Context::new(ContextOptions {
        domain_id: 0,
        args,
        ..Default::default()
    })
    .unwrap();
    let node = ctx.create_node_with_namespace("talker", "/robot").unwrap();
    let p = node.create_publisher::<Count>("chatter", 10).unwrap();
    assert_eq!(p.topic_name(), "/remapped");
    let p = node.create_publisher::<Count>("~/status", 10).unwrap();
    assert_eq!(p.topic_name(), "/robot/talker/status");
    let p = node.create_publisher::<Count>("sub/topic", 10).unwrap();
    assert_eq!(p.topic_name(), "/robot/sub/topic");
}

#[test]
fn bad_user_input_gets_clear_errors() {
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let Err(NodeError::Name(e)) = ctx.create_node("bad-name") else {
        panic!("expected error")
    };
    assert_eq!(e.rule, NameRule::InvalidCharacter('-'));
    let node = ctx.create_node("ok").unwrap();
    let Err(e) = node.create_publisher::<Count>("a//b", 10) else {
        panic!("expected error")
    };
    assert!(e.to_string().contains("repeated '/'"), "{e}");
    let Err(e) = node.create_publisher::<Count>("a", 0) else {
        panic!("expected error")
    };
    assert!(e.to_string().contains("depth"), "{e}");
    assert!(matches!(
        node.create_timer(Duration::ZERO, || {}),
        Err(NodeError::ZeroPeriod)
    ));
}

#[test]
fn timers_fire_from_a_node_and_can_be_cancelled() {
    let (ctx, node, executor) = setup();
    let (calls, push) = collector::<TimerCall>();
    let timer = node
        .create_timer(Duration::from_millis(5), move |call: &TimerCall| {
            push(*call)
        })
        .unwrap();
    let n = Arc::new(Mutex::new(0));
    let n2 = n.clone();
    let _plain = node
        .create_timer(Duration::from_millis(5), move || *n2.lock().unwrap() += 1)
        .unwrap();
    while calls.lock().unwrap().len() < 3 {
        executor.spin_once(Some(Duration::from_secs(5)));
    }
    timer.cancel();
    let before = calls.lock().unwrap().len();
    executor.spin_for(Duration::from_millis(30));
    assert_eq!(calls.lock().unwrap().len(), before);
    let calls = calls.lock().unwrap();
    for pair in calls.windows(2) {
        // Deadlines are on the grid: consecutive expected times differ by whole periods.
        let gap = (pair[1].expected - pair[0].expected).as_nanos();
        assert_eq!(gap % 5_000_000, 0, "{gap}");
    }
    assert!(*n.lock().unwrap() >= 1);
    ctx.shutdown();
    executor.spin();
}

#[test]
fn spin_returns_when_the_context_shuts_down_from_another_thread() {
    let (ctx, node, executor) = setup();
    let _timer = node.create_timer(Duration::from_secs(3600), || {}).unwrap();
    let ctx2 = ctx.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        ctx2.shutdown();
    });
    executor.spin();
    stopper.join().unwrap();
    assert!(!ctx.ok());
}

#[test]
fn cross_thread_publish_wakes_a_sleeping_executor() {
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<u32>();
    let _sub = node
        .create_subscription("x", 10, move |m: Count| push(m.0))
        .unwrap();
    let publisher = node.create_publisher::<Count>("x", 10).unwrap();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        publisher.publish(Count(42)).unwrap();
        publisher
    });
    assert!(executor.spin_once(Some(Duration::from_secs(10))));
    assert_eq!(*got.lock().unwrap(), [42]);
    drop(sender.join().unwrap());
}

fn sim_time_context() -> Context {
    let args = RosArgs::parse(["p", "--ros-args", "-p", "use_sim_time:=true"]).unwrap();
    Context::new(ContextOptions {
        domain_id: 0,
        args,
        ..Default::default()
    })
    .unwrap()
}

fn clock_msg(nanos: i64) -> crate::msgs::rosgraph_msgs::msg::Clock {
    crate::msgs::rosgraph_msgs::msg::Clock {
        clock: Time::from_nanos(nanos).to_msg(),
    }
}

#[test]
fn sim_time_drives_now_and_timers() {
    let ctx = sim_time_context();
    let node = ctx.create_node("sim_user").unwrap();
    assert!(node.uses_sim_time());
    let sim = ctx.create_node("simulator").unwrap();
    let clock_pub = sim
        .create_publisher::<crate::msgs::rosgraph_msgs::msg::Clock>("/clock", 10)
        .unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.add_node(&sim);
    let (calls, push) = collector::<TimerCall>();
    // One simulated second per call, however fast or slow /clock advances in real time.
    let _timer = node
        .create_timer(Duration::from_secs(1), move |call: &TimerCall| push(*call))
        .unwrap();
    assert_eq!(node.now(), Time::from_nanos(0));
    clock_pub.publish(clock_msg(500_000_000)).unwrap();
    executor.spin_some();
    assert_eq!(node.now(), Time::from_nanos(500_000_000));
    assert!(calls.lock().unwrap().is_empty());
    // Jump 3.2 simulated seconds ahead: the timer fires once (no burst), for its t=1 s deadline.
    clock_pub.publish(clock_msg(4_200_000_000)).unwrap();
    executor.spin_some();
    {
        let calls = calls.lock().unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].expected.as_nanos(), 1_000_000_000);
        assert_eq!(calls[0].skipped, 3);
    }
    for step in 1..=10 {
        clock_pub
            .publish(clock_msg(4_200_000_000 + step * 100_000_000))
            .unwrap();
        executor.spin_some();
    }
    let expected: Vec<u64> = calls
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.expected.as_nanos())
        .collect();
    assert_eq!(expected, [1_000_000_000, 5_000_000_000]);
}

#[test]
fn wall_timers_ignore_sim_time_and_steady_nodes_use_system_time() {
    let ctx = sim_time_context();
    let node = ctx.create_node("sim_user").unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let (calls, push) = collector::<()>();
    let _wall = node
        .create_wall_timer(Duration::from_millis(2), move || push(()))
        .unwrap();
    // No /clock at all: only a steady-time timer can fire.
    while calls.lock().unwrap().len() < 2 {
        executor.spin_once(Some(Duration::from_secs(5)));
    }
    let plain = Context::new(ContextOptions::default())
        .unwrap()
        .create_node("plain")
        .unwrap();
    assert!(!plain.uses_sim_time());
    let before = Time::system_now();
    let now = plain.now();
    assert!(now >= before && now.saturating_since(before) < Duration::from_secs(60));
}

#[test]
fn bad_use_sim_time_value_is_explained() {
    let args = RosArgs::parse(["p", "--ros-args", "-p", "use_sim_time:=yes please"]).unwrap();
    let ctx = Context::new(ContextOptions {
        domain_id: 0,
        args,
        ..Default::default()
    })
    .unwrap();
    let Err(e) = ctx.create_node("n") else {
        panic!("expected an error")
    };
    assert!(e.to_string().contains("expected true or false"), "{e}");
}

#[test]
fn callback_groups_created_after_add_node_are_spun() {
    let (ctx, node, executor) = setup();
    let group = node.create_callback_group(CallbackGroupKind::Reentrant);
    let (got, push) = collector::<u32>();
    let _sub = node
        .create_subscription_in(&group, "g", 10, move |m: Count| push(m.0))
        .unwrap();
    let publisher = node.create_publisher::<Count>("g", 10).unwrap();
    publisher.publish(Count(3)).unwrap();
    let stopper = {
        let ctx = ctx.clone();
        let got = got.clone();
        std::thread::spawn(move || {
            while got.lock().unwrap().is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
            ctx.shutdown();
        })
    };
    executor.spin_threads(2).unwrap();
    stopper.join().unwrap();
    assert_eq!(*got.lock().unwrap(), [3]);
}

#[test]
fn rate_from_a_node_keeps_the_grid() {
    let (_ctx, node, _executor) = setup();
    let mut rate = node.create_rate(Duration::from_millis(2)).unwrap();
    let first = rate.sleep();
    let second = rate.sleep();
    assert_eq!(
        (second.scheduled - first.scheduled).as_nanos() % 2_000_000,
        0
    );
    assert!(node.create_rate(Duration::ZERO).is_err());
}

/// A transport joining two contexts in this process as if they were two processes: every local
/// publisher of one gets an outlet delivering serialized messages to the other's matching
/// subscriptions.
mod pipe {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::seam::{Backend, LocalPublisher, LocalSubscription, Outlet};

    #[derive(Default)]
    pub struct Pipe {
        pub peer_subscriptions: Mutex<Vec<LocalSubscription>>,
        pub sends: AtomicUsize,
        pub payload_ptrs: Mutex<Vec<usize>>,
    }

    /// The receiving side: collects the other context's subscriptions.
    pub struct Receiver(pub Arc<Pipe>);

    impl Backend for Receiver {
        fn publisher_added(&self, _: LocalPublisher) {}
        fn publisher_removed(&self, _: &str, _: u64) {}
        fn subscription_added(&self, subscription: LocalSubscription) {
            self.0.peer_subscriptions.lock().unwrap().push(subscription);
        }
        fn subscription_removed(&self, _: &str, id: u64) {
            self.0
                .peer_subscriptions
                .lock()
                .unwrap()
                .retain(|s| s.description.id != id);
        }
    }

    /// The sending side: attaches an outlet to every publisher.
    pub struct Sender(pub Arc<Pipe>);

    struct PipeOutlet {
        pipe: Arc<Pipe>,
        topic: String,
        type_name: &'static str,
    }

    impl Outlet for PipeOutlet {
        fn send(
            &self,
            payload: &Arc<[u8]>,
            info: &MessageInfo,
        ) -> Result<(), crate::seam::SendTimeout> {
            self.pipe
                .sends
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.pipe
                .payload_ptrs
                .lock()
                .unwrap()
                .push(payload.as_ptr() as usize);
            // Crossing a process boundary: the receiver owns its own copy of the bytes.
            let received = roslite_cdr::SharedBuf::from_vec(payload.to_vec());
            for sub in self.pipe.peer_subscriptions.lock().unwrap().iter() {
                if sub.description.topic == self.topic
                    && sub.description.type_name == self.type_name
                {
                    sub.deliver(&received, *info);
                }
            }
            Ok(())
        }
    }

    impl Backend for Sender {
        fn publisher_added(&self, publisher: LocalPublisher) {
            let outlet = PipeOutlet {
                pipe: self.0.clone(),
                topic: publisher.description.topic.clone(),
                type_name: publisher.description.type_name,
            };
            publisher.attach(1, Arc::new(outlet));
        }
        fn publisher_removed(&self, _: &str, _: u64) {}
        fn subscription_added(&self, _: LocalSubscription) {}
        fn subscription_removed(&self, _: &str, _: u64) {}
    }
}

#[test]
fn transports_get_serialized_messages_once_and_deliver_them_decoded() {
    use crate::msgs::sensor_msgs::msg::Image;
    let pipe = Arc::new(pipe::Pipe::default());
    let (ctx_a, node_a, exec_a) = setup();
    let (ctx_b, node_b, exec_b) = setup();
    ctx_b.add_backend(Arc::new(pipe::Receiver(pipe.clone())));
    let (remote, push_remote) = collector::<(Image, bool, bool)>();
    let _remote_sub = node_b
        .create_subscription("camera", 10, move |m: Image, info: &MessageInfo| {
            let view = m.data.is_view();
            push_remote((m, view, info.from_intra_process))
        })
        .unwrap();
    // A transport added after endpoints exist is told about them.
    let publisher = node_a.create_publisher::<Image>("camera", 10).unwrap();
    ctx_a.add_backend(Arc::new(pipe::Sender(pipe.clone())));
    let (local, push_local) = collector::<usize>();
    let _local_sub = node_a
        .create_subscription("camera", 10, move |m: Image| {
            push_local(m.data.as_ptr() as usize)
        })
        .unwrap();
    let image = Image {
        height: 2,
        width: 3,
        encoding: "rgb8".into(),
        step: 9,
        data: (0u8..18).collect::<Vec<u8>>().into(),
        ..Default::default()
    };
    let sent = image.clone();
    let local_ptr = sent.data.as_ptr() as usize;
    publisher.publish(sent).unwrap();
    exec_a.spin_some();
    exec_b.spin_some();
    assert_eq!(
        *local.lock().unwrap(),
        [local_ptr],
        "local subscription still gets the original"
    );
    assert_eq!(pipe.sends.load(std::sync::atomic::Ordering::SeqCst), 1);
    let remote = remote.lock().unwrap();
    assert_eq!(remote.len(), 1);
    let (received, was_view, intra) = &remote[0];
    assert_eq!(*received, image);
    assert!(
        *was_view,
        "uint8[] data must be a view into the received buffer"
    );
    assert!(!intra);
}

#[test]
fn malformed_remote_payloads_are_counted_and_dropped() {
    let pipe = Arc::new(pipe::Pipe::default());
    let (ctx, node, executor) = setup();
    ctx.add_backend(Arc::new(pipe::Receiver(pipe.clone())));
    let (got, push) = collector::<u32>();
    let sub = node
        .create_subscription("n", 10, move |m: Count| push(m.0))
        .unwrap();
    let info = MessageInfo {
        source_timestamp: Instant::monotonic_now(),
        received_timestamp: Instant::ZERO,
        publication_sequence_number: 1,
        publisher_id: 0,
        publisher_gid: [0; 16],
        from_intra_process: false,
    };
    let sinks = pipe.peer_subscriptions.lock().unwrap().clone();
    assert_eq!(sinks.len(), 1);
    assert!(!sinks[0].deliver(&roslite_cdr::SharedBuf::from_vec(vec![0, 1, 0, 0, 7]), info));
    assert!(!sinks[0].deliver(&roslite_cdr::SharedBuf::from_vec(vec![9, 9]), info));
    assert!(sinks[0].deliver(
        &roslite_cdr::SharedBuf::from_vec(vec![0, 1, 0, 0, 7, 0, 0, 0]),
        info
    ));
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), [7]);
    assert_eq!(sub.stats().malformed, 2);
    drop(sub);
    assert!(
        pipe.peer_subscriptions.lock().unwrap().is_empty(),
        "removal reaches the transport"
    );
}

#[test]
fn publishing_an_oversized_bounded_field_to_a_remote_subscriber_is_an_error() {
    use crate::msgs::rmw_dds_common::msg::NodeEntitiesInfo;
    let pipe = Arc::new(pipe::Pipe::default());
    let (ctx, node, _executor) = setup();
    ctx.add_backend(Arc::new(pipe::Sender(pipe.clone())));
    let publisher = node
        .create_publisher::<NodeEntitiesInfo>("graph", 10)
        .unwrap();
    let too_long = NodeEntitiesInfo {
        node_name: "n".repeat(300),
        ..Default::default()
    };
    // A string's bound is counted in UTF-8 bytes on sending (docs/ros2-interop.md §7).
    let e = publisher.publish(too_long).unwrap_err();
    assert!(
        matches!(
            e,
            PublishError::Serialize(EncodeError::StringBoundExceeded {
                bytes: 300,
                chars: 300,
                bound: 256
            })
        ),
        "{e}"
    );
}

/// A depth-1 serialized subscription told to keep every message (a Wasm host does while it
/// moves the node) hands its callback every message that came while nobody took them, then,
/// told to stop, only the newest again.
#[test]
fn a_serialized_subscription_keeps_every_message_while_asked() {
    let (_ctx, node, executor) = setup();
    let (got, push) = collector::<u32>();
    let sub = node
        .create_serialized_subscription(
            "held",
            TypeInfo::of::<Count>(),
            1,
            move |b: &roslite_cdr::SharedBuf, _: &MessageInfo| {
                push(roslite_cdr::from_bytes::<Count>(b.bytes()).unwrap().0);
            },
        )
        .unwrap();
    let publisher = node.create_publisher::<Count>("held", 10).unwrap();
    sub.keep_every_message(true);
    for i in 0..5 {
        publisher.publish(Count(i)).unwrap();
    }
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), [0, 1, 2, 3, 4]);
    for i in 5..8 {
        publisher.publish(Count(i)).unwrap();
    }
    sub.keep_every_message(false);
    publisher.publish(Count(8)).unwrap();
    executor.spin_some();
    assert_eq!(*got.lock().unwrap(), [0, 1, 2, 3, 4, 8]);
}

/// The keep-all bound holds between serialized and typed endpoints in one process too: a
/// serialized publisher to a typed subscription, and a typed publisher to a serialized
/// subscription (delivered through CDR). With nobody spinning, each publish beyond
/// `KEEP_ALL_MAX_SAMPLES` times out (after `max_blocking_time`: this thread is not in a
/// callback, so it waits), and once spun, every message that got in arrives in order.
#[test]
fn keep_all_bound_holds_between_serialized_and_typed_endpoints() {
    let (_ctx, node, executor) = setup();
    let qos = QosProfile::DEFAULT.keep_all();
    let ty = TypeInfo::of::<Count>();
    let bound = crate::vocabulary::qos::KEEP_ALL_MAX_SAMPLES as u32;

    let (typed, push) = collector::<u32>();
    let _typed_sub = node
        .create_subscription("to_typed", qos, move |m: Count| push(m.0))
        .unwrap();
    let raw_pub = node
        .create_serialized_publisher("to_typed", ty, qos)
        .unwrap();
    let raw = |i: u32| roslite_cdr::to_vec(&Count(i), roslite_cdr::Endianness::Little).unwrap();
    for i in 0..bound {
        raw_pub.publish(&raw(i)).unwrap();
    }
    assert!(matches!(
        raw_pub.publish(&raw(bound)),
        Err(PublishError::Timeout)
    ));

    let (serialized, push) = collector::<u32>();
    let _raw_sub = node
        .create_serialized_subscription(
            "to_raw",
            ty,
            qos,
            move |b: &roslite_cdr::SharedBuf, _: &MessageInfo| {
                push(roslite_cdr::from_bytes::<Count>(b.bytes()).unwrap().0);
            },
        )
        .unwrap();
    let typed_pub = node.create_publisher::<Count>("to_raw", qos).unwrap();
    for i in 0..bound {
        typed_pub.publish(Count(i)).unwrap();
    }
    assert!(matches!(
        typed_pub.publish(Count(bound)),
        Err(PublishError::Timeout)
    ));

    executor.spin_some();
    let all: Vec<u32> = (0..bound).collect();
    assert_eq!(*typed.lock().unwrap(), all);
    assert_eq!(*serialized.lock().unwrap(), all);
}

#[test]
fn serialized_endpoints_talk_to_typed_ones_in_both_directions() {
    use crate::msgs::std_msgs::msg::String as StringMsg;
    let (_ctx, node, executor) = setup();
    let ty = TypeInfo::new("std_msgs/msg/String", StringMsg::TYPE_HASH).unwrap();
    assert_eq!(
        ty.with_description(StringMsg::TYPE_DESCRIPTION),
        TypeInfo::of::<StringMsg>()
    );
    // serialized -> typed
    let (typed, push_typed) = collector::<String>();
    let _typed_sub = node
        .create_subscription("s", 10, move |m: StringMsg| push_typed(m.data))
        .unwrap();
    let raw_pub = node.create_serialized_publisher("s", ty, 10).unwrap();
    let bytes = roslite_cdr::to_vec(
        &StringMsg {
            data: "raw in".into(),
        },
        roslite_cdr::Endianness::Little,
    )
    .unwrap();
    raw_pub.publish(&bytes).unwrap();
    assert!(matches!(
        raw_pub.publish(&[0, 1]),
        Err(PublishError::NotSerialized)
    ));
    // typed -> serialized, including transient-local history
    let typed_pub = node
        .create_publisher::<StringMsg>("t", QosProfile::keep_last(5).transient_local())
        .unwrap();
    typed_pub
        .publish(StringMsg {
            data: "before".into(),
        })
        .unwrap();
    let (raw, push_raw) = collector::<Vec<u8>>();
    let _raw_sub = node
        .create_serialized_subscription(
            "t",
            ty,
            QosProfile::keep_last(5).transient_local(),
            move |b: &roslite_cdr::SharedBuf, _: &MessageInfo| push_raw(b.bytes().to_vec()),
        )
        .unwrap();
    typed_pub
        .publish(StringMsg {
            data: "after".into(),
        })
        .unwrap();
    executor.spin_some();
    assert_eq!(*typed.lock().unwrap(), ["raw in"]);
    let raw: Vec<String> = raw
        .lock()
        .unwrap()
        .iter()
        .map(|b| roslite_cdr::from_bytes::<StringMsg>(b).unwrap().data)
        .collect();
    assert_eq!(raw, ["before", "after"]);
    // A malformed serialized message is counted by the typed subscription and dropped.
    let (got, push) = collector::<u32>();
    let counted = node
        .create_subscription("c", 10, move |m: Count| push(m.0))
        .unwrap();
    let count_ty = TypeInfo::of::<Count>();
    let raw_count = node.create_serialized_publisher("c", count_ty, 10).unwrap();
    raw_count.publish(&[0, 1, 0, 0, 9]).unwrap();
    executor.spin_some();
    assert!(got.lock().unwrap().is_empty());
    assert_eq!(counted.stats().malformed, 1);
    assert!(TypeInfo::new("not a type", "x").is_none());
}

#[test]
fn roslite_transports_parses_lists_and_names_bad_entries() {
    use crate::context::LocalTransports;
    assert_eq!(
        LocalTransports::parse("uds, udp").unwrap(),
        LocalTransports {
            shm: false,
            ..LocalTransports::default()
        }
    );
    assert_eq!(
        LocalTransports::parse("intra,shm,uds,udp").unwrap(),
        LocalTransports::default()
    );
    assert_eq!(
        LocalTransports::parse("udp").unwrap(),
        LocalTransports::UDP_ONLY
    );
    let err = LocalTransports::parse("shm,tcp").unwrap_err().to_string();
    assert!(
        err.contains("'tcp'") && err.contains("intra, shm, uds and udp (e.g."),
        "{err}"
    );
}

#[test]
fn roslite_receive_spin_parses_microseconds_and_says_what_it_accepts() {
    use crate::context::LocalTransports;
    use std::time::Duration;
    assert_eq!(
        LocalTransports::parse_receive_spin(" 50 ").unwrap(),
        Duration::from_micros(50)
    );
    assert_eq!(
        LocalTransports::parse_receive_spin("0").unwrap(),
        Duration::ZERO
    );
    assert_eq!(
        LocalTransports::parse_receive_spin("1000").unwrap(),
        Duration::from_millis(1)
    );
    for bad in ["1001", "-1", "20us", "1.5", ""] {
        let err = LocalTransports::parse_receive_spin(bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("ROSLITE_RECEIVE_SPIN_US='{bad}'"))
                && err.contains("from 0")
                && err.contains("to 1000 (default: 20)"),
            "{err}"
        );
    }
}

/// A publisher remembers which of its outlets are active in a 64-bit mask, and past 64 in a
/// list: every one of 70 serialized subscriptions (one outlet each) gets every message once.
#[test]
fn a_publisher_with_more_than_64_outlets_reaches_every_one_once() {
    use crate::msgs::std_msgs::msg::String as StringMsg;
    let (_ctx, node, executor) = setup();
    let ty = TypeInfo::of::<StringMsg>();
    let counts = Arc::new(Mutex::new(vec![0usize; 70]));
    let subscriptions: Vec<_> = (0..70)
        .map(|i| {
            let counts = counts.clone();
            node.create_serialized_subscription("many", ty, 10, move |_, _| {
                counts.lock().unwrap()[i] += 1
            })
            .unwrap()
        })
        .collect();
    let publisher = node.create_publisher::<StringMsg>("many", 10).unwrap();
    for _ in 0..3 {
        publisher.publish(StringMsg::default()).unwrap();
    }
    executor.spin_some();
    assert_eq!(*counts.lock().unwrap(), vec![3; 70]);
    drop(subscriptions);
}

/// `Count(n)` as a receive thread hands it to a subscription: serialized, with the info of a
/// message another process sent at `sent` (its arrival not stamped yet).
fn count_from_elsewhere(
    n: u32,
    sent: roslite_executor::Instant,
) -> (roslite_cdr::SharedBuf, MessageInfo) {
    let payload = roslite_cdr::SharedBuf::from_vec(
        roslite_cdr::to_vec(&Count(n), roslite_cdr::Endianness::Little).unwrap(),
    );
    let info = MessageInfo {
        source_timestamp: sent,
        received_timestamp: roslite_executor::Instant::ZERO,
        publication_sequence_number: 1,
        publisher_id: 0,
        publisher_gid: [0; 16],
        from_intra_process: false,
    };
    (payload, info)
}

/// A receive thread may hand a message straight to a sleeping executor's callback; one that
/// outlived its lifespan on the way must still be dropped and counted, not handed over.
#[test]
fn a_message_expired_on_arrival_is_dropped_also_when_its_callback_could_run_at_once() {
    use crate::seam::SerializedSink as _;
    let (ctx, node, executor) = setup();
    let qos = QosProfile::keep_last(10).lifespan(Duration::from_millis(20));
    let (got, push) = collector::<u32>();
    let sub = node
        .create_subscription("stale", qos, move |m: Count| push(m.0))
        .unwrap();
    let spinner = std::thread::spawn(move || executor.spin());
    // Long enough for the executor to fall asleep, lending its turn.
    std::thread::sleep(Duration::from_millis(200));
    let sent_ago = |age: Duration| {
        roslite_executor::Instant::from_nanos(
            roslite_executor::Instant::monotonic_now()
                .as_nanos()
                .saturating_sub(age.as_nanos() as u64),
        )
    };
    crate::seam::with_inline_dispatch(|| {
        let (payload, info) = count_from_elsewhere(1, sent_ago(Duration::from_secs(1)));
        sub.shared.deliver_serialized(&payload, info);
        let (payload, info) = count_from_elsewhere(2, sent_ago(Duration::ZERO));
        sub.shared.deliver_serialized(&payload, info);
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while got.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(*got.lock().unwrap(), [2]);
    assert_eq!(sub.stats().expired, 1);
    ctx.shutdown();
    spinner.join().unwrap();
}

/// A message handed straight to a callback skips the clock read for its arrival time unless
/// the callback takes a `MessageInfo`; one that does must still see when it arrived, on the
/// receive thread's lent turn and through the queue alike.
#[test]
fn a_callback_taking_message_info_sees_the_arrival_time_also_when_it_runs_at_once() {
    use crate::seam::SerializedSink as _;
    use roslite_executor::Instant as MonoInstant;
    let (ctx, node, executor) = setup();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let sub = node
        .create_subscription("arrival", 10, move |m: Count, info: &MessageInfo| {
            sink.lock().unwrap().push((
                m.0,
                info.source_timestamp,
                info.received_timestamp,
                std::thread::current().id(),
            ));
        })
        .unwrap();
    let sent_now = |n: u32| count_from_elsewhere(n, MonoInstant::monotonic_now());
    // Through the queue: nobody spins yet.
    let (payload, info) = sent_now(1);
    sub.shared.deliver_serialized(&payload, info);
    executor.spin_some();
    let spinner = std::thread::spawn(move || executor.spin());
    // Long enough for the executor to fall asleep, lending its turn.
    std::thread::sleep(Duration::from_millis(200));
    crate::seam::with_inline_dispatch(|| {
        let (payload, info) = sent_now(2);
        sub.shared.deliver_serialized(&payload, info);
    });
    let seen = seen.lock().unwrap().clone();
    ctx.shutdown();
    spinner.join().unwrap();
    assert_eq!(seen.len(), 2, "both messages reach the callback: {seen:?}");
    assert_eq!(
        seen[1].3,
        std::thread::current().id(),
        "the second message ran on the delivering thread's lent turn"
    );
    for (n, sent, received, _) in seen {
        assert!(
            received != MonoInstant::ZERO && received >= sent,
            "message {n}: received at {received:?}, sent at {sent:?}"
        );
    }
}
