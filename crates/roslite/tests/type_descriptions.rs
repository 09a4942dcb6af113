//! `~/get_type_description` (REP 2011 type description distribution) in one process: what a
//! node answers for the types of its endpoints, as rcl answers (see
//! `interop_type_descriptions.rs` for the comparison with an rclpy node), and the
//! `start_type_description_service` parameter.

use std::time::Duration;

use roslite::msgs::description::TypeDescription;
use roslite::msgs::example_interfaces::action::Fibonacci;
use roslite::msgs::geometry_msgs::msg::Twist;
use roslite::msgs::sensor_msgs::msg::Image;
use roslite::msgs::std_msgs::msg::{Int64, String as StringMsg};
use roslite::msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};
use roslite::msgs::type_description_interfaces::msg::{
    Field, FieldType, IndividualTypeDescription,
};
use roslite::msgs::type_description_interfaces::srv::{
    GetTypeDescription, GetTypeDescription_Request, GetTypeDescription_Response,
};
use roslite::msgs::INTERFACE_FILES;
use roslite::{
    CancelResponse, Context, ContextOptions, GoalResponse, Message, NetworkMode, Node, NodeError,
    ParameterServices, ParameterValue, RosArgs, ServiceType, TypeInfo,
};

mod common;

const FAILED_TO_PARSE: &str = "Failed to parse type hash";
const NOT_IN_USE: &str = "Type not currently in use by this node";

fn offline(args: &[&str], parameter_services: ParameterServices) -> Context {
    let mut all = vec!["type_descriptions", "--ros-args"];
    all.extend_from_slice(args);
    Context::new(ContextOptions {
        network: NetworkMode::Off,
        args: RosArgs::parse(all).unwrap(),
        parameter_services,
        ..Default::default()
    })
    .unwrap()
}

/// Asks `/<node>/get_type_description` from a node of its own, while `node` spins.
struct Asker {
    ctx: Context,
    client: roslite::Client<GetTypeDescription>,
    _asking_node: Node,
    spinner: Option<std::thread::JoinHandle<()>>,
}

impl Asker {
    fn new(ctx: &Context, node: &Node) -> Self {
        let asking_node = ctx.create_node("asker").unwrap();
        let client = asking_node
            .create_client::<GetTypeDescription>(&format!(
                "{}/get_type_description",
                node.fully_qualified_name()
            ))
            .unwrap();
        assert!(client.service_is_ready(), "no ~/get_type_description");
        Self {
            ctx: ctx.clone(),
            client,
            _asking_node: asking_node,
            spinner: Some(common::spin_in_background(ctx, node)),
        }
    }

    fn ask(&self, type_name: &str, type_hash: &str, sources: bool) -> GetTypeDescription_Response {
        let request = GetTypeDescription_Request {
            type_name: type_name.to_owned(),
            type_hash: type_hash.to_owned(),
            include_type_sources: sources,
        };
        self.client
            .call(request, Duration::from_secs(10))
            .expect("an answer from ~/get_type_description")
    }

    fn ask_for<T: Message>(&self, sources: bool) -> GetTypeDescription_Response {
        self.ask(T::TYPE_NAME, T::TYPE_HASH, sources)
    }
}

impl Drop for Asker {
    fn drop(&mut self) {
        self.ctx.shutdown();
        if let Some(spinner) = self.spinner.take() {
            let _ = spinner.join();
        }
    }
}

fn field(name: &str, type_id: u8, nested: &str) -> Field {
    Field {
        name: name.to_owned(),
        r#type: FieldType {
            type_id,
            capacity: 0,
            string_capacity: 0,
            nested_type_name: nested.to_owned(),
        },
        default_value: String::new(),
    }
}

/// The text rosidl embeds for a vendored definition: its lines joined by `\n`.
fn raw_file_contents(package: &str, kind: &str, name: &str) -> String {
    let file = INTERFACE_FILES
        .iter()
        .find(|f| f.package == package && f.kind == kind && f.name == name)
        .unwrap_or_else(|| panic!("{package}/{kind}/{name} is not vendored"));
    file.text.lines().collect::<Vec<_>>().join("\n")
}

fn referenced_names(response: &GetTypeDescription_Response) -> Vec<&str> {
    response
        .type_description
        .referenced_type_descriptions
        .iter()
        .map(|d| d.type_name.as_str())
        .collect()
}

fn failed(reason: &str) -> GetTypeDescription_Response {
    GetTypeDescription_Response {
        successful: false,
        failure_reason: reason.to_owned(),
        ..Default::default()
    }
}

#[test]
fn a_type_is_described_with_the_types_it_refers_to() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("describer").unwrap();
    let _twist = node.create_publisher::<Twist>("cmd_vel", 10).unwrap();
    let asker = Asker::new(&ctx, &node);

    let answer = asker.ask_for::<Twist>(false);
    let vector3 = IndividualTypeDescription {
        type_name: "geometry_msgs/msg/Vector3".into(),
        fields: vec![field("x", 11, ""), field("y", 11, ""), field("z", 11, "")],
    };
    assert_eq!(
        answer,
        GetTypeDescription_Response {
            successful: true,
            failure_reason: String::new(),
            type_description: roslite::msgs::type_description_interfaces::msg::TypeDescription {
                type_description: IndividualTypeDescription {
                    type_name: "geometry_msgs/msg/Twist".into(),
                    fields: vec![
                        field("linear", 1, "geometry_msgs/msg/Vector3"),
                        field("angular", 1, "geometry_msgs/msg/Vector3"),
                    ],
                },
                referenced_type_descriptions: vec![vector3],
            },
            // Only when asked for.
            type_sources: Vec::new(),
            extra_information: Vec::new(),
        }
    );

    let with_sources = asker.ask_for::<Twist>(true);
    assert_eq!(with_sources.type_description, answer.type_description);
    let sources: Vec<(&str, &str, &str)> = with_sources
        .type_sources
        .iter()
        .map(|s| {
            (
                s.type_name.as_str(),
                s.encoding.as_str(),
                s.raw_file_contents.as_str(),
            )
        })
        .collect();
    assert_eq!(
        sources,
        [
            (
                "geometry_msgs/msg/Twist",
                "msg",
                raw_file_contents("geometry_msgs", "msg", "Twist").as_str()
            ),
            (
                "geometry_msgs/msg/Vector3",
                "msg",
                raw_file_contents("geometry_msgs", "msg", "Vector3").as_str()
            ),
        ]
    );
    // Without the file's last line break, as rosidl embeds it.
    assert!(
        sources[0].2.ends_with("Vector3  angular"),
        "{}",
        sources[0].2
    );
}

#[test]
fn nested_types_are_sorted_by_name_and_each_has_its_source() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("camera").unwrap();
    let _image = node
        .create_subscription("image", 10, |_: Image| {})
        .unwrap();
    let asker = Asker::new(&ctx, &node);
    let answer = asker.ask_for::<Image>(true);
    assert!(answer.successful, "{answer:?}");
    let own = &answer.type_description.type_description;
    assert_eq!(own.type_name, "sensor_msgs/msg/Image");
    let fields: Vec<(&str, u8)> = own
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.r#type.type_id))
        .collect();
    assert_eq!(
        fields,
        [
            ("header", 1),
            ("height", 7),
            ("width", 7),
            ("encoding", 17),
            ("is_bigendian", 3),
            ("step", 7),
            ("data", 147),
        ]
    );
    assert_eq!(own.fields[0].r#type.nested_type_name, "std_msgs/msg/Header");
    assert_eq!(
        referenced_names(&answer),
        ["builtin_interfaces/msg/Time", "std_msgs/msg/Header"]
    );
    let sources: Vec<(&str, &str)> = answer
        .type_sources
        .iter()
        .map(|s| (s.type_name.as_str(), s.encoding.as_str()))
        .collect();
    assert_eq!(
        sources,
        [
            ("sensor_msgs/msg/Image", "msg"),
            ("builtin_interfaces/msg/Time", "msg"),
            ("std_msgs/msg/Header", "msg"),
        ]
    );
    assert_eq!(
        answer.type_sources[2].raw_file_contents,
        raw_file_contents("std_msgs", "msg", "Header")
    );
}

#[test]
fn unknown_and_malformed_hashes_fail_as_in_rcl() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("describer").unwrap();
    let _twist = node.create_publisher::<Twist>("cmd_vel", 10).unwrap();
    let asker = Asker::new(&ctx, &node);

    // A well-formed hash of a type no endpoint of the node uses.
    assert_eq!(asker.ask_for::<Int64>(true), failed(NOT_IN_USE));
    for malformed in [
        "",
        "RIHS01_",
        "RIHS02_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
        "rihs01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
        "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2",
        "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a0",
        "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2z",
        "geometry_msgs/msg/Twist",
    ] {
        assert_eq!(
            asker.ask(Twist::TYPE_NAME, malformed, true),
            failed(FAILED_TO_PARSE),
            "{malformed:?}"
        );
    }
    // rcl looks types up by hash alone, in either case of hex digits.
    let upper = Twist::TYPE_HASH.to_uppercase();
    for (name, hash) in [("no/such/Type", Twist::TYPE_HASH), ("", upper.as_str())] {
        let answer = asker.ask(name, hash, false);
        assert!(answer.successful, "{name} {hash}: {answer:?}");
        assert_eq!(
            answer.type_description.type_description.type_name,
            "geometry_msgs/msg/Twist"
        );
    }
}

#[test]
fn services_actions_and_the_nodes_own_endpoints_are_described_as_rcl_registers_them() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("server").unwrap();
    let _service = node
        .create_service::<SetBool, _>("power", |_: SetBool_Request| SetBool_Response::default())
        .unwrap();
    let _action = node
        .create_action_server::<Fibonacci>(
            "fibonacci",
            |_, _| GoalResponse::Reject,
            |_| CancelResponse::Reject,
            |_| {},
        )
        .unwrap();
    let asker = Asker::new(&ctx, &node);

    // A server registers its service type; the request and response types are its parts.
    let answer = asker.ask(SetBool::TYPE_NAME, SetBool::TYPE_HASH, true);
    assert!(answer.successful, "{answer:?}");
    assert_eq!(
        referenced_names(&answer),
        [
            "builtin_interfaces/msg/Time",
            "service_msgs/msg/ServiceEventInfo",
            "std_srvs/srv/SetBool_Event",
            "std_srvs/srv/SetBool_Request",
            "std_srvs/srv/SetBool_Response",
        ]
    );
    let encodings: Vec<&str> = answer
        .type_sources
        .iter()
        .map(|s| s.encoding.as_str())
        .collect();
    assert_eq!(
        encodings,
        ["srv", "msg", "msg", "implicit", "implicit", "implicit"]
    );
    assert_eq!(answer.type_sources[3].raw_file_contents, "");
    assert_eq!(asker.ask_for::<SetBool_Request>(false), failed(NOT_IN_USE));

    // The action type, and those of its services and topics.
    type Action = Fibonacci;
    use roslite::msgs::action_msgs::msg::GoalStatusArray;
    use roslite::msgs::action_msgs::srv::CancelGoal;
    use roslite::ActionType;
    let action = asker.ask(Action::TYPE_NAME, Action::TYPE_HASH, true);
    assert!(action.successful, "{action:?}");
    assert_eq!(action.type_sources[0].encoding, "action");
    for (name, hash) in [
        (
            <<Action as ActionType>::SendGoal as ServiceType>::TYPE_NAME,
            <<Action as ActionType>::SendGoal as ServiceType>::TYPE_HASH,
        ),
        (
            <<Action as ActionType>::GetResult as ServiceType>::TYPE_NAME,
            <<Action as ActionType>::GetResult as ServiceType>::TYPE_HASH,
        ),
        (CancelGoal::TYPE_NAME, CancelGoal::TYPE_HASH),
        (
            <<Action as ActionType>::FeedbackMessage as Message>::TYPE_NAME,
            <<Action as ActionType>::FeedbackMessage as Message>::TYPE_HASH,
        ),
        (GoalStatusArray::TYPE_NAME, GoalStatusArray::TYPE_HASH),
        // The node's own: /rosout, /parameter_events, the parameter services, this service.
        (
            roslite::msgs::rcl_interfaces::msg::Log::TYPE_NAME,
            roslite::msgs::rcl_interfaces::msg::Log::TYPE_HASH,
        ),
        (
            roslite::msgs::rcl_interfaces::srv::ListParameters::TYPE_NAME,
            roslite::msgs::rcl_interfaces::srv::ListParameters::TYPE_HASH,
        ),
        (GetTypeDescription::TYPE_NAME, GetTypeDescription::TYPE_HASH),
    ] {
        let answer = asker.ask(name, hash, false);
        assert!(answer.successful, "{name}: {answer:?}");
        assert_eq!(answer.type_description.type_description.type_name, name);
    }
    // The goal is a part of the action, not a type of an endpoint.
    assert_eq!(
        asker.ask_for::<<Action as ActionType>::Goal>(false),
        failed(NOT_IN_USE)
    );
}

#[test]
fn a_type_is_answered_while_an_endpoint_uses_it() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("changing").unwrap();
    let asker = Asker::new(&ctx, &node);
    let first = node.create_publisher::<Twist>("a", 10).unwrap();
    let second = node.create_subscription("b", 10, |_: Twist| {}).unwrap();
    assert!(asker.ask_for::<Twist>(false).successful);
    drop(first);
    assert!(asker.ask_for::<Twist>(false).successful);
    drop(second);
    assert_eq!(asker.ask_for::<Twist>(false), failed(NOT_IN_USE));
}

#[test]
fn serialized_endpoints_are_described_when_given_a_description() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("tool").unwrap();
    let asker = Asker::new(&ctx, &node);
    let bare = TypeInfo::new(StringMsg::TYPE_NAME, StringMsg::TYPE_HASH).unwrap();
    let publisher = node.create_serialized_publisher("bare", bare, 10).unwrap();
    // Known only by name and hash: nothing to serve, answered as a type rcl does not know.
    assert_eq!(asker.ask_for::<StringMsg>(false), failed(NOT_IN_USE));
    drop(publisher);
    let described = bare.with_description(StringMsg::TYPE_DESCRIPTION);
    let _subscription = node
        .create_serialized_subscription("described", described, 10, |_, _| {})
        .unwrap();
    let answer = asker.ask_for::<StringMsg>(true);
    assert!(answer.successful, "{answer:?}");
    assert_eq!(
        answer.type_sources[0].raw_file_contents,
        raw_file_contents("std_msgs", "msg", "String")
    );

    // A serialized client knows its request and response types; the service type is given.
    let mut client = node
        .create_serialized_client(
            "/power",
            TypeInfo::of::<SetBool_Request>(),
            TypeInfo::of::<SetBool_Response>(),
        )
        .unwrap();
    assert_eq!(
        asker.ask(SetBool::TYPE_NAME, SetBool::TYPE_HASH, false),
        failed(NOT_IN_USE)
    );
    let description: &'static TypeDescription = SetBool::TYPE_DESCRIPTION.unwrap();
    client.register_service_type(SetBool::TYPE_HASH, description);
    assert!(
        asker
            .ask(SetBool::TYPE_NAME, SetBool::TYPE_HASH, false)
            .successful
    );
    drop(client);
    assert_eq!(
        asker.ask(SetBool::TYPE_NAME, SetBool::TYPE_HASH, false),
        failed(NOT_IN_USE)
    );
}

fn type_description_service_names(node: &Node) -> Vec<String> {
    node.service_names_and_types()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.ends_with("/get_type_description"))
        .collect()
}

#[test]
fn start_type_description_service_is_a_read_only_parameter_true_by_default() {
    let ctx = offline(&[], ParameterServices::Enabled);
    let node = ctx.create_node("plain").unwrap();
    assert_eq!(
        node.get_parameter("start_type_description_service")
            .unwrap()
            .value,
        ParameterValue::Bool(true)
    );
    let descriptor = &node
        .describe_parameters(&["start_type_description_service"])
        .unwrap()[0];
    assert!(descriptor.read_only);
    assert_eq!(descriptor.ty, roslite::ParameterType::Bool);
    assert_eq!(
        descriptor.description,
        "Start the ~/get_type_description service for this node."
    );
    let refused = node.set_parameter(roslite::Parameter::new(
        "start_type_description_service",
        false,
    ));
    assert!(!refused.successful);
    assert_eq!(
        type_description_service_names(&node),
        ["/plain/get_type_description"]
    );
}

#[test]
fn start_type_description_service_false_leaves_the_service_out() {
    let ctx = offline(
        &["-p", "start_type_description_service:=false"],
        ParameterServices::Enabled,
    );
    let node = ctx.create_node("quiet").unwrap();
    assert_eq!(
        node.get_parameter("start_type_description_service")
            .unwrap()
            .value,
        ParameterValue::Bool(false)
    );
    assert!(type_description_service_names(&node).is_empty());
    // Only for the node it names.
    let ctx = offline(
        &["-p", "other:start_type_description_service:=false"],
        ParameterServices::Enabled,
    );
    let node = ctx.create_node("named").unwrap();
    assert_eq!(
        type_description_service_names(&node),
        ["/named/get_type_description"]
    );
}

#[test]
fn without_parameter_services_the_default_is_false_and_an_override_still_counts() {
    let ctx = offline(&[], ParameterServices::Disabled);
    let node = ctx.create_node("lean").unwrap();
    assert_eq!(
        node.get_parameter("start_type_description_service")
            .unwrap()
            .value,
        ParameterValue::Bool(false)
    );
    assert!(node.service_names_and_types().is_empty());

    let ctx = offline(
        &["-p", "start_type_description_service:=true"],
        ParameterServices::Disabled,
    );
    let node = ctx.create_node("lean").unwrap();
    assert_eq!(
        node.service_names_and_types(),
        [(
            "/lean/get_type_description".to_owned(),
            vec!["type_description_interfaces/srv/GetTypeDescription".to_owned()]
        )]
    );
}

#[test]
fn a_value_of_another_type_is_refused_when_the_node_is_made() {
    let ctx = offline(
        &["-p", "start_type_description_service:=3"],
        ParameterServices::Enabled,
    );
    let error = ctx.create_node("typed").err().expect("a node error");
    assert_eq!(
        error,
        NodeError::Parameter {
            name: "start_type_description_service".into(),
            value: "3".into(),
            expected: "true or false",
        }
    );
    assert_eq!(
        error.to_string(),
        "parameter 'start_type_description_service' has value '3', expected true or false"
    );
}
