//! `~/get_type_description` against real ROS 2 (rclpy on Fast DDS, Kilted) in a network
//! namespace: rclpy asks a roslite node and an rclpy node with endpoints of the same types for
//! the description of each (`interop/python/type_description_peer.py`); the two answers must
//! be equal field by field, with and without sources, for found types (messages with every
//! kind of default value, nested types, a service, an action and the types of its services and
//! topics, the node's own endpoints) and for unknown and malformed hashes. rclpy also sees the
//! roslite node's `start_type_description_service` parameter as `ros2 param` shows it.

use std::time::{Duration, Instant};

use roslite::msgs::action_msgs::msg::GoalStatusArray;
use roslite::msgs::action_msgs::srv::CancelGoal;
use roslite::msgs::geometry_msgs::msg::{Pose, Twist};
use roslite::msgs::rcl_interfaces::msg::{Log, ParameterEvent};
use roslite::msgs::rcl_interfaces::srv::{DescribeParameters, SetParameters};
use roslite::msgs::sensor_msgs::msg::Image;
use roslite::msgs::std_msgs::msg::Int64;
use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};
use roslite::msgs::test_msgs::action::Fibonacci;
use roslite::msgs::type_description_interfaces::srv::GetTypeDescription;
use roslite::{ActionType, CancelResponse, GoalResponse, Message, ServiceType};
use roslite_transport::netns::NetNs;
use test_msgs::msg::{Arrays, BoundedSequences, Defaults, Strings, WStrings};

mod common;

fn message<T: Message>() -> String {
    format!("{}={}", T::TYPE_NAME, T::TYPE_HASH)
}

fn service<S: ServiceType>() -> String {
    format!("{}={}", S::TYPE_NAME, S::TYPE_HASH)
}

#[test]
fn rclpy_and_roslite_describe_the_same_types_alike() {
    let ns = NetNs::create("type-descriptions").expect("create a network namespace");
    let domain = 0;
    let ctx = common::networked_in(&ns, domain);
    // The endpoints type_description_peer.py gives its rclpy node.
    let node = ctx.create_node("rs_describer").unwrap();
    let _twist = node.create_publisher::<Twist>("cmd_vel", 10).unwrap();
    let _pose = node.create_publisher::<Pose>("pose", 10).unwrap();
    let _strings = node.create_publisher::<Strings>("strings", 10).unwrap();
    let _wstrings = node.create_publisher::<WStrings>("wstrings", 10).unwrap();
    let _arrays = node.create_publisher::<Arrays>("arrays", 10).unwrap();
    let _defaults = node.create_publisher::<Defaults>("defaults", 10).unwrap();
    let _bounded = node
        .create_publisher::<BoundedSequences>("bounded_sequences", 10)
        .unwrap();
    let _image = node
        .create_subscription("image", 10, |_: Image| {})
        .unwrap();
    let _power = node
        .create_service::<SetBool, _>("power", |_: SetBool_Request| SetBool_Response::default())
        .unwrap();
    let _fibonacci = node
        .create_action_server::<Fibonacci>(
            "fibonacci",
            |_, _| GoalResponse::Reject,
            |_| CancelResponse::Reject,
            |_| {},
        )
        .unwrap();
    let spinner = common::spin_in_background(&ctx, &node);

    let mut requests = vec![
        message::<Twist>(),
        message::<Pose>(),
        message::<Image>(),
        message::<Strings>(),
        message::<WStrings>(),
        message::<Arrays>(),
        message::<Defaults>(),
        message::<BoundedSequences>(),
        service::<SetBool>(),
        format!("{}={}", Fibonacci::TYPE_NAME, Fibonacci::TYPE_HASH),
        service::<<Fibonacci as ActionType>::SendGoal>(),
        service::<<Fibonacci as ActionType>::GetResult>(),
        message::<<Fibonacci as ActionType>::FeedbackMessage>(),
        service::<CancelGoal>(),
        message::<GoalStatusArray>(),
        // Every node's own.
        message::<Log>(),
        message::<ParameterEvent>(),
        service::<DescribeParameters>(),
        service::<SetParameters>(),
        service::<GetTypeDescription>(),
        // Parts of a service or action are no endpoint's type; neither node uses Int64.
        message::<SetBool_Request>(),
        message::<<Fibonacci as ActionType>::Goal>(),
        message::<Int64>(),
    ];
    // Malformed: too short, another RIHS version, not a hash at all.
    requests.push("geometry_msgs/msg/Twist=RIHS01_9c45bf".to_owned());
    requests.push(format!(
        "geometry_msgs/msg/Twist={}",
        Twist::TYPE_HASH.replace("RIHS01", "RIHS02")
    ));
    requests.push("geometry_msgs/msg/Twist=geometry_msgs/msg/Twist".to_owned());
    let mut args = vec!["/rs_describer".to_owned(), "90".to_owned()];
    args.extend(requests.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    let peer = common::LinePeer::spawn(common::rclpy_script(
        &ns,
        domain,
        "type_description_peer.py",
        &args,
    ));
    let output = peer.finish(Instant::now() + Duration::from_secs(120));
    ctx.shutdown();
    spinner.join().unwrap();

    assert!(output.success, "{output}");
    let differences = output.values("DIFF ");
    assert!(
        differences.is_empty(),
        "answers differ:\n{}",
        differences.join("\n")
    );
    let same = output.values("SAME ");
    assert_eq!(same.len(), 2 * requests.len(), "{output}");
    let expect = |line: &str| {
        assert!(
            same.iter().any(|l| l == line),
            "no `SAME {line}`:\n{output}"
        );
    };
    for found in [
        Twist::TYPE_NAME,
        WStrings::TYPE_NAME,
        Fibonacci::TYPE_NAME,
        GetTypeDescription::TYPE_NAME,
    ] {
        expect(&format!("{found} sources=True successful=True reason=''"));
    }
    expect(
        "std_msgs/msg/Int64 sources=False successful=False \
         reason='Type not currently in use by this node'",
    );
    expect(
        "geometry_msgs/msg/Twist sources=True successful=False \
         reason='Failed to parse type hash'",
    );

    assert_eq!(
        output.values("PARAM LIST "),
        ["start_type_description_service use_sim_time"],
        "{output}"
    );
    assert_eq!(
        output.values("PARAM GET "),
        ["start_type_description_service [True]"],
        "{output}"
    );
    assert_eq!(
        output.values("PARAM DESCRIBE "),
        ["start_type_description_service type=1 read_only=True \
          description='Start the ~/get_type_description service for this node.'"],
        "{output}"
    );
}
