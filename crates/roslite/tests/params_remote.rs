//! A node's parameters used from another participant through the six parameter services and
//! `/parameter_events`: a roslite client over RTPS on loopback (LOCALHOST discovery), and
//! rclpy's parameter client inside a network namespace made for the test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::graph::GraphEndpointKind;
use roslite::msgs::rcl_interfaces::msg::{ParameterEvent, ParameterType as Ty};
use roslite::msgs::rcl_interfaces::srv::{
    DescribeParameters, DescribeParameters_Request, GetParameterTypes, GetParameterTypes_Request,
    GetParameters, GetParameters_Request, ListParameters, ListParameters_Request, SetParameters,
    SetParametersAtomically, SetParametersAtomically_Request, SetParameters_Request,
};
use roslite::{
    Context, ContextOptions, Node, Parameter, ParameterDescriptor, ParameterValue, QosProfile,
};
use roslite_transport::netns::NetNs;

mod common;

const CALL: Duration = Duration::from_secs(10);

/// A domain of its own per test process, so parallel runs do not discover each other.
fn test_domain() -> u32 {
    100 + std::process::id() % 50
}

fn loopback(domain_id: u32) -> Context {
    Context::new(ContextOptions::localhost(domain_id)).expect("start an RTPS network on loopback")
}

/// The parameters both tests configure remotely.
fn declare_parameters(node: &Node) {
    node.declare_parameter(
        "rate",
        10.0,
        ParameterDescriptor::new()
            .description("publish rate in Hz")
            .floating_point_range(0.0, 100.0, 0.0),
    )
    .unwrap();
    node.declare_parameter("mode", "auto", ParameterDescriptor::new())
        .unwrap();
    node.declare_parameter("robot_id", 7, ParameterDescriptor::new().read_only())
        .unwrap();
    node.declare_parameter("gains", vec![1i64, 2, 3], ParameterDescriptor::new())
        .unwrap();
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn roslite_client_configures_a_remote_node_over_rtps() {
    let domain = test_domain();
    let server_ctx = loopback(domain);
    let client_ctx = loopback(domain);
    let server = server_ctx.create_node("configurable").unwrap();
    declare_parameters(&server);
    let spinner = common::spin_in_background(&server_ctx, &server);

    let client = client_ctx.create_node("configurator").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let _events_sub = client
        .create_subscription(
            "/parameter_events",
            QosProfile::PARAMETER_EVENTS,
            move |e: ParameterEvent| sink.lock().unwrap().push(e),
        )
        .unwrap();
    let event_spinner = common::spin_in_background(&client_ctx, &client);

    let list = client
        .create_client::<ListParameters>("/configurable/list_parameters")
        .unwrap();
    assert!(
        list.wait_for_service(Duration::from_secs(30)),
        "the remote parameter services never appeared"
    );
    let listed = list.call(ListParameters_Request::default(), CALL).unwrap();
    assert_eq!(
        listed.result.names,
        [
            "gains",
            "mode",
            "rate",
            "robot_id",
            "start_type_description_service",
            "use_sim_time"
        ]
    );

    let types = client
        .create_client::<GetParameterTypes>("/configurable/get_parameter_types")
        .unwrap();
    assert!(types.wait_for_service(CALL));
    let got = types
        .call(
            GetParameterTypes_Request {
                names: names(&["rate", "mode", "gains"]),
            },
            CALL,
        )
        .unwrap();
    assert_eq!(
        got.types.as_slice(),
        [
            Ty::PARAMETER_DOUBLE,
            Ty::PARAMETER_STRING,
            Ty::PARAMETER_INTEGER_ARRAY
        ]
    );

    let describe = client
        .create_client::<DescribeParameters>("/configurable/describe_parameters")
        .unwrap();
    assert!(describe.wait_for_service(CALL));
    let described = describe
        .call(
            DescribeParameters_Request {
                names: names(&["rate", "robot_id"]),
            },
            CALL,
        )
        .unwrap();
    let rate = &described.descriptors[0];
    assert_eq!(rate.name, "rate");
    assert_eq!(rate.description, "publish rate in Hz");
    assert_eq!(rate.floating_point_range[0].to_value, 100.0);
    assert!(described.descriptors[1].read_only);

    let set = client
        .create_client::<SetParameters>("/configurable/set_parameters")
        .unwrap();
    assert!(set.wait_for_service(CALL));
    // The server's event writer sends only to readers it has matched: wait until it knows
    // the client's `/parameter_events` subscription before changing anything.
    let server_net = server_ctx.graph();
    assert!(
        common::wait_until(Duration::from_secs(30), || {
            server_net.endpoints().iter().any(|e| {
                !e.local
                    && e.kind == GraphEndpointKind::Subscription
                    && e.topic == "/parameter_events"
            })
        }),
        "the server never discovered the event subscription"
    );
    let results = set
        .call(
            SetParameters_Request {
                parameters: vec![
                    Parameter::new("rate", 25.0).to_msg(),
                    Parameter::new("rate", "fast").to_msg(),
                    Parameter::new("robot_id", 8).to_msg(),
                ],
            },
            CALL,
        )
        .unwrap()
        .results;
    assert!(results[0].successful, "{:?}", results[0]);
    assert!(
        results[1].reason.contains("Wrong parameter type"),
        "{:?}",
        results[1]
    );
    assert!(results[2].reason.contains("read-only"), "{:?}", results[2]);

    let atomic = client
        .create_client::<SetParametersAtomically>("/configurable/set_parameters_atomically")
        .unwrap();
    assert!(atomic.wait_for_service(CALL));
    let refused = atomic
        .call(
            SetParametersAtomically_Request {
                parameters: vec![
                    Parameter::new("mode", "manual").to_msg(),
                    Parameter::new("rate", 1000.0).to_msg(),
                ],
            },
            CALL,
        )
        .unwrap();
    assert!(!refused.result.successful);
    assert!(refused
        .result
        .reason
        .contains("outside its floating-point range"));

    let get = client
        .create_client::<GetParameters>("/configurable/get_parameters")
        .unwrap();
    assert!(get.wait_for_service(CALL));
    let values = get
        .call(
            GetParameters_Request {
                names: names(&["rate", "mode"]),
            },
            CALL,
        )
        .unwrap()
        .values;
    assert_eq!(
        values,
        [
            ParameterValue::Double(25.0).to_msg(),
            ParameterValue::from("auto").to_msg()
        ]
    );
    assert_eq!(
        server.get_parameter("rate").unwrap().value,
        ParameterValue::Double(25.0)
    );

    assert!(
        common::wait_until(Duration::from_secs(30), || {
            events.lock().unwrap().iter().any(|e| {
                e.node == "/configurable"
                    && e.changed_parameters == [Parameter::new("rate", 25.0).to_msg()]
            })
        }),
        "no parameter event for the change: {:?}",
        events.lock().unwrap()
    );

    server_ctx.shutdown();
    client_ctx.shutdown();
    spinner.join().unwrap();
    event_spinner.join().unwrap();
}

#[test]
fn rclpy_parameter_client_lists_describes_gets_and_sets() {
    let ns = NetNs::create("params-rclpy").expect("create a network namespace");
    let domain = 0;
    let ctx = common::networked_in(&ns, domain);
    let node = ctx.create_node("roslite_params").unwrap();
    declare_parameters(&node);
    let spinner = common::spin_in_background(&ctx, &node);
    let output = common::rclpy_script(&ns, domain, "param_client.py", &["/roslite_params", "60"])
        .output()
        .unwrap();
    ctx.shutdown();
    spinner.join().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = format!(
        "{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    let has = |line: &str| stdout.lines().any(|l| l == line);
    assert!(
        has("LIST gains mode rate robot_id start_type_description_service use_sim_time"),
        "{report}"
    );
    assert!(has("TYPES 3 4 2 7"), "{report}");
    assert!(
        has(
            "DESCRIBE rate type=3 read_only=False range=[(0.0, 100.0, 0.0)] \
             description='publish rate in Hz'"
        ),
        "{report}"
    );
    assert!(
        has("DESCRIBE robot_id type=2 read_only=True range=[] description=''"),
        "{report}"
    );
    assert!(has("GET rate 10.0"), "{report}");
    assert!(has("GET mode 'auto'"), "{report}");
    assert!(has("GET robot_id 7"), "{report}");
    assert!(has("GET gains [1, 2, 3]"), "{report}");
    assert!(has("SET rate True "), "{report}");
    assert!(
        has(
            "SET rate False Wrong parameter type, parameter {rate} is of type {double}, \
             setting it to {string} is not allowed."
        ),
        "{report}"
    );
    assert!(
        stdout.contains("SET rate False parameter 'rate' cannot be set to 500.0"),
        "{report}"
    );
    assert!(
        has("SET robot_id False parameter 'robot_id' cannot be set because it is read-only"),
        "{report}"
    );
    assert!(
        has("SET missing False parameter 'missing' has not been declared"),
        "{report}"
    );
    assert!(has("ATOMIC True "), "{report}");
    assert!(has("GET rate 25.0"), "{report}");
    assert!(has("GET mode 'manual'"), "{report}");
    assert!(has("GET gains [4, 5, 6]"), "{report}");
    assert!(has("EVENT changed rate 25.0"), "{report}");
    assert!(has("EVENT changed gains [4, 5, 6]"), "{report}");
    assert!(has("DONE"), "{report}");
    assert_eq!(
        node.get_parameter("mode").unwrap().value,
        ParameterValue::from("manual")
    );
}
