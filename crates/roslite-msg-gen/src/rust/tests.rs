use super::codec::prim_type;
use super::*;
use crate::ast::{BaseType, Collection, Constant, Field, FieldType, Literal, Primitive};

fn tn(text: &str) -> TypeName {
    TypeName::parse(text).unwrap()
}

fn set(files: &[(&str, InterfaceKind, &str, &str)]) -> InterfaceSet {
    let mut set = InterfaceSet::new();
    for (package, kind, name, text) in files {
        let file = format!("{package}/{}/{name}.{}", kind.as_str(), kind.extension());
        set.add_source(package, *kind, name, text, &file).unwrap();
    }
    set
}

/// The builtin packages the test interfaces below refer to.
fn base_files() -> Vec<(&'static str, InterfaceKind, &'static str, &'static str)> {
    vec![
        (
            "builtin_interfaces",
            InterfaceKind::Msg,
            "Time",
            "int32 sec\nuint32 nanosec\n",
        ),
        (
            "std_msgs",
            InterfaceKind::Msg,
            "Header",
            "builtin_interfaces/Time stamp\nstring frame_id\n",
        ),
        (
            "service_msgs",
            InterfaceKind::Msg,
            "ServiceEventInfo",
            "uint8 REQUEST_SENT = 0\nuint8 event_type\nbuiltin_interfaces/Time stamp\n\
             char[16] client_gid\nint64 sequence_number\n",
        ),
        (
            "unique_identifier_msgs",
            InterfaceKind::Msg,
            "UUID",
            "uint8[16] uuid\n",
        ),
        ("std_msgs", InterfaceKind::Msg, "Empty", ""),
    ]
}

fn generate(files: &[(&str, InterfaceKind, &str, &str)], package: &str) -> String {
    let mut all = base_files();
    all.extend_from_slice(files);
    let set = set(&all);
    set.check().unwrap();
    generate_package(&set, package, &RustOptions::for_user_crate()).unwrap()
}

/// Stand-in hashes and descriptions, so tests on hand-built ASTs need no complete set.
struct FakeFacts;

impl TypeFacts for FakeFacts {
    fn hash(&self, _: &TypeName) -> Result<String, GenError> {
        Ok(format!("RIHS01_{}", "0".repeat(64)))
    }

    fn description(&self, name: &TypeName) -> Result<TypeDescription, GenError> {
        Ok(TypeDescription {
            type_description: crate::hash::IndividualTypeDescription {
                type_name: name.clone(),
                fields: Vec::new(),
                encoding: "msg",
                source: String::new(),
                raw_file_contents: String::new(),
            },
            referenced_type_descriptions: Vec::new(),
        })
    }

    fn is_service(&self, _: &TypeName) -> bool {
        false
    }
}

#[test]
fn identifiers_escape_keywords_and_reject_path_keywords() {
    assert_eq!(ident("data").as_deref(), Some("data"));
    assert_eq!(ident("type").as_deref(), Some("r#type"));
    assert_eq!(ident("async").as_deref(), Some("r#async"));
    assert_eq!(ident("Header").as_deref(), Some("Header"));
    for bad in [
        "self", "Self", "super", "crate", "_", "", "9lives", "a-b", "ä",
    ] {
        assert_eq!(ident(bad), None, "{bad}");
    }
}

#[test]
fn type_paths_are_relative_inside_the_package_and_absolute_outside() {
    let scope = Scope {
        package: "my_pkg",
        kind: InterfaceKind::Srv,
        msgs: "::roslite_msgs",
        definition_text: DefinitionText::Inline,
    };
    assert_eq!(
        scope.type_path(&tn("my_pkg/srv/Do_Request")).unwrap(),
        "Do_Request"
    );
    assert_eq!(
        scope.type_path(&tn("my_pkg/msg/Thing")).unwrap(),
        "super::msg::Thing"
    );
    assert_eq!(
        scope.type_path(&tn("std_msgs/msg/Header")).unwrap(),
        "::roslite_msgs::std_msgs::msg::Header"
    );
    let inside = Scope {
        package: "std_msgs",
        kind: InterfaceKind::Msg,
        msgs: "crate",
        definition_text: DefinitionText::VendoredInterfaces,
    };
    assert_eq!(
        inside
            .type_path(&tn("builtin_interfaces/msg/Time"))
            .unwrap(),
        "crate::builtin_interfaces::msg::Time"
    );
}

#[test]
fn primitive_types_map_to_rust() {
    assert_eq!(prim_type(Primitive::Byte), "u8");
    assert_eq!(prim_type(Primitive::Char), "u8");
    assert_eq!(prim_type(Primitive::Int8), "i8");
    assert_eq!(prim_type(Primitive::Float64), "f64");
    assert_eq!(prim_type(Primitive::Bool), "bool");
}

#[test]
fn message_with_every_field_shape() {
    let code = generate(
        &[(
            "my_pkg",
            InterfaceKind::Msg,
            "Shapes",
            "uint8 MAX = 10\n\
             string GREETING = 'hi \"you\"'\n\
             float32 HALF = 0.5\n\
             std_msgs/Header header\n\
             uint8 type\n\
             float64 gain 1.5\n\
             string<=8 name \"robot\"\n\
             wstring<=4 wide\n\
             int32[3] fixed [1, -2, 3]\n\
             float64[36] covariance\n\
             bool[2] flags\n\
             string[2] labels\n\
             uint8[] data\n\
             float64[<=4] samples [0.25, 1.0]\n\
             float64[] values\n\
             bool[] bits\n\
             std_msgs/Header[] headers\n\
             std_msgs/Empty[<=2] empties\n",
        )],
        "my_pkg",
    );
    for expected in [
        "pub mod msg {",
        "pub struct Shapes {",
        "pub header: ::roslite_msgs::std_msgs::msg::Header,",
        "pub r#type: u8,",
        "pub name: ::std::string::String,",
        "pub fixed: [i32; 3],",
        "pub covariance: [f64; 36],",
        "pub flags: [bool; 2],",
        "pub labels: [::std::string::String; 2],",
        "pub data: ::roslite_msgs::cdr::Seq<u8>,",
        "pub samples: ::roslite_msgs::cdr::Seq<f64>,",
        "pub bits: ::std::vec::Vec<bool>,",
        "pub headers: ::std::vec::Vec<::roslite_msgs::std_msgs::msg::Header>,",
        // Constants.
        "pub const MAX: u8 = 10;",
        "pub const GREETING: &'static str = \"hi \\\"you\\\"\";",
        "pub const HALF: f32 = 0.5;",
        // Defaults.
        "gain: 1.5,",
        "name: ::std::string::String::from(\"robot\"),",
        "fixed: [1, -2, 3],",
        "covariance: [0.0; 36],",
        "labels: ::core::array::from_fn(|_| ::core::default::Default::default()),",
        "samples: ::roslite_msgs::cdr::Seq::from(::std::vec::Vec::from([0.25, 1.0])),",
        "values: ::roslite_msgs::cdr::Seq::new(),",
        // Encoding.
        "w.write_u8(self.r#type);",
        "w.write_bounded_string(&self.name, 8)?;",
        "w.write_bounded_wstring(&self.wide, 4)?;",
        "w.write_prim_slice(&self.covariance);",
        "w.write_bounded_prim_seq(&self.samples, 4)?;",
        "w.write_prim_seq(&self.values)?;",
        "w.write_prim_seq(&self.data)?;",
        "w.write_bool(*item);",
        // Decoding.
        "r#type: r.read_u8()?,",
        "name: ::std::string::String::from(r.read_bounded_string(8)?),",
        "wide: r.read_bounded_wstring(4)?,",
        "covariance: r.read_prim_array()?,",
        "let mut items: [bool; 2] = [false; 2];",
        "let len = r.read_bounded_len(8, 4)?;",
        // A Header is at least an int32, a uint32 and an empty string.
        "let len = r.read_len(13)?;",
        // An empty struct is one byte.
        "let len = r.read_bounded_len(1, 2)?;",
        "impl ::roslite_msgs::Message for Shapes {",
        "const TYPE_NAME: &'static str = \"my_pkg/msg/Shapes\";",
        "const DDS_TYPE_NAME: &'static str = \"my_pkg::msg::dds_::Shapes_\";",
    ] {
        assert!(code.contains(expected), "missing `{expected}` in:\n{code}");
    }
    assert!(!code.contains("pub mod srv"));
    assert!(!code.contains("pub mod action"));
}

#[test]
fn services_and_actions_get_markers_and_all_synthesized_types() {
    let code = generate(
        &[
            ("my_pkg", InterfaceKind::Msg, "Thing", "int64 id\n"),
            (
                "my_pkg",
                InterfaceKind::Srv,
                "Get",
                "int64 id\n---\nThing thing\n",
            ),
            (
                "my_pkg",
                InterfaceKind::Action,
                "Count",
                "int32 to\n---\nint32 last\n---\nint32 now\n",
            ),
        ],
        "my_pkg",
    );
    let msg = code.find("pub mod msg {").unwrap();
    let srv = code.find("pub mod srv {").unwrap();
    let action = code.find("pub mod action {").unwrap();
    assert!(msg < srv && srv < action);
    for expected in [
        "pub struct Get;",
        "impl ::roslite_msgs::Service for Get {",
        "type Request = Get_Request;",
        "type Response = Get_Response;",
        "pub thing: super::msg::Thing,",
        "type Event = Get_Event;",
        "fn event(info: ::roslite_msgs::service_msgs::msg::ServiceEventInfo, \
         request: ::core::option::Option<Self::Request>, \
         response: ::core::option::Option<Self::Response>) -> Get_Event {",
        "Get_Event { info, request: request.into_iter().collect(), \
         response: response.into_iter().collect() }",
        "pub struct Get_Event {",
        "pub info: ::roslite_msgs::service_msgs::msg::ServiceEventInfo,",
        "pub request: ::std::vec::Vec<Get_Request>,",
        "pub struct Count;",
        "impl ::roslite_msgs::Action for Count {",
        "type Goal = Count_Goal;",
        "type SendGoal = Count_SendGoal;",
        "type FeedbackMessage = Count_FeedbackMessage;",
        "impl ::roslite_msgs::Service for Count_SendGoal {",
        "fn send_goal_request(goal_id: ::roslite_msgs::unique_identifier_msgs::msg::UUID, \
         goal: Self::Goal) -> Count_SendGoal_Request {",
        "Count_GetResult_Response { status, result }",
        "(message.goal_id, message.feedback)",
        "pub struct Count_SendGoal_Event {",
        "pub struct Count_GetResult_Response {",
        "pub goal_id: ::roslite_msgs::unique_identifier_msgs::msg::UUID,",
        "const DDS_TYPE_NAME: &'static str = \"my_pkg::action::dds_::Count_FeedbackMessage_\";",
    ] {
        assert!(code.contains(expected), "missing `{expected}` in:\n{code}");
    }
}

#[test]
fn output_is_deterministic_and_independent_of_load_order() {
    let files = [
        ("p", InterfaceKind::Msg, "B", "int8 x\n"),
        ("p", InterfaceKind::Msg, "A", "B b\n"),
        ("p", InterfaceKind::Srv, "S", "A a\n---\n"),
    ];
    let forward = generate(&files, "p");
    let mut reversed = files;
    reversed.reverse();
    assert_eq!(forward, generate(&reversed, "p"));
    assert!(forward.find("pub struct A {").unwrap() < forward.find("pub struct B {").unwrap());
}

#[test]
fn msgs_crate_option_is_used_for_traits_and_other_packages() {
    let mut all = base_files();
    all.push(("p", InterfaceKind::Msg, "M", "std_msgs/Header header\n"));
    let set = set(&all);
    let code = generate_package(&set, "p", &RustOptions::for_msgs_crate()).unwrap();
    assert!(code.contains("pub header: crate::std_msgs::msg::Header,"));
    assert!(code.contains("impl crate::cdr::CdrEncode for M {"));
    assert!(code.contains("impl crate::Message for M {"));
    assert!(!code.contains("roslite_msgs"));
}

#[test]
fn unknown_package_is_an_error() {
    let set = set(&base_files());
    let error = generate_package(&set, "nope", &RustOptions::default()).unwrap_err();
    assert!(
        matches!(error, GenError::UnknownPackage(ref p) if p == "nope"),
        "{error}"
    );
}

fn hand_built(fields: Vec<Field>, constants: Vec<Constant>) -> Interface {
    Interface::Message(MessageSpec {
        name: tn("p/msg/M"),
        fields,
        constants,
    })
}

fn field(name: &str, base: BaseType, collection: Collection, default: Option<Literal>) -> Field {
    Field {
        name: name.to_owned(),
        ty: FieldType { base, collection },
        default,
        line: 7,
        key: false,
    }
}

fn generate_hand_built(interface: &Interface) -> Result<String, GenError> {
    let resolve = |_: &TypeName| None;
    generate_interfaces(
        &[interface],
        "p",
        &RustOptions::default(),
        &resolve,
        &FakeFacts,
    )
}

#[test]
fn literals_that_do_not_fit_are_errors_not_broken_code() {
    let u8_field = BaseType::Primitive(Primitive::Uint8);
    let cases = [
        hand_built(
            vec![],
            vec![Constant {
                name: "BIG".to_owned(),
                ty: u8_field.clone(),
                value: Literal::Int(256),
                line: 3,
            }],
        ),
        hand_built(
            vec![field(
                "x",
                u8_field.clone(),
                Collection::Single,
                Some(Literal::Int(-1)),
            )],
            vec![],
        ),
        hand_built(
            vec![field(
                "x",
                u8_field.clone(),
                Collection::Array(2),
                Some(Literal::Array(vec![Literal::Int(1)])),
            )],
            vec![],
        ),
        hand_built(
            vec![field(
                "s",
                BaseType::String { bound: Some(2) },
                Collection::Single,
                Some(Literal::String("abc".to_owned())),
            )],
            vec![],
        ),
        hand_built(
            vec![field(
                "f",
                BaseType::Primitive(Primitive::Float32),
                Collection::Single,
                Some(Literal::Float(1e300)),
            )],
            vec![],
        ),
    ];
    for interface in &cases {
        let error = generate_hand_built(interface).unwrap_err();
        assert!(matches!(error, GenError::InvalidLiteral { .. }), "{error}");
    }
}

#[test]
fn unspellable_field_names_are_errors() {
    let interface = hand_built(
        vec![field(
            "self",
            BaseType::Primitive(Primitive::Bool),
            Collection::Single,
            None,
        )],
        vec![],
    );
    let error = generate_hand_built(&interface).unwrap_err();
    assert!(
        matches!(error, GenError::InvalidName { ref name, .. } if name == "self"),
        "{error}"
    );
}

#[test]
fn unresolved_nested_types_are_errors() {
    let interface = hand_built(
        vec![field(
            "h",
            BaseType::Named(tn("x/msg/Missing")),
            Collection::Single,
            None,
        )],
        vec![],
    );
    let error = generate_hand_built(&interface).unwrap_err();
    assert!(matches!(error, GenError::UnresolvedType { .. }), "{error}");
}

#[test]
fn float_and_special_literals() {
    let interface = hand_built(
        vec![
            field(
                "a",
                BaseType::Primitive(Primitive::Float32),
                Collection::Single,
                Some(Literal::Float(0.1)),
            ),
            field(
                "b",
                BaseType::Primitive(Primitive::Float64),
                Collection::Single,
                Some(Literal::Int(3)),
            ),
            field(
                "c",
                BaseType::Primitive(Primitive::Float64),
                Collection::Single,
                Some(Literal::Float(f64::NAN)),
            ),
            field(
                "d",
                BaseType::Primitive(Primitive::Float32),
                Collection::Single,
                Some(Literal::Float(-1e-7)),
            ),
            field(
                "e",
                BaseType::Primitive(Primitive::Int64),
                Collection::Single,
                Some(Literal::Int(i64::MIN.into())),
            ),
            field(
                "g",
                BaseType::Primitive(Primitive::Char),
                Collection::Single,
                Some(Literal::String("A".into())),
            ),
            field(
                "h",
                BaseType::String { bound: None },
                Collection::Single,
                Some(Literal::String("".into())),
            ),
            field(
                "i",
                BaseType::String { bound: None },
                Collection::Single,
                Some(Literal::String("tab\t\u{e9}".into())),
            ),
        ],
        vec![],
    );
    let code = generate_hand_built(&interface).unwrap();
    for expected in [
        "a: 0.1,",
        "b: 3.0,",
        "c: f64::NAN,",
        "d: -1e-7,",
        "e: -9223372036854775808,",
        "g: 65,",
        "h: ::std::string::String::new(),",
        "i: ::std::string::String::from(\"tab\\t\u{e9}\"),",
    ] {
        assert!(code.contains(expected), "missing `{expected}` in:\n{code}");
    }
}

#[test]
fn empty_struct_is_one_dummy_byte() {
    let code = generate_hand_built(&hand_built(vec![], vec![])).unwrap();
    assert!(code.contains("pub struct M {}"));
    assert!(code.contains("w.write_empty_struct();"));
    assert!(code.contains("r.read_empty_struct()?;"));
}
