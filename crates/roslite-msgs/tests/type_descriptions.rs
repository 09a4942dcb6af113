//! The type descriptions generated types carry (`TYPE_DESCRIPTION`) are the generator's
//! (`roslite_msg_gen::hash::type_description`) of the vendored definitions: for messages,
//! services and actions and their parts, definitions in `.msg` and IDL, with and without a
//! last line break, with default values.

use roslite_msg_gen::ast::TypeName;
use roslite_msg_gen::build::add_builtin_interfaces;
use roslite_msg_gen::hash::{self, type_description};
use roslite_msg_gen::registry::InterfaceSet;
use roslite_msgs::description::{IndividualTypeDescription, TypeDescription};
use roslite_msgs::{Message, Service};

fn builtin() -> InterfaceSet {
    let mut set = InterfaceSet::new();
    add_builtin_interfaces(&mut set).unwrap();
    set
}

fn same_individual(
    generated: &IndividualTypeDescription,
    expected: &hash::IndividualTypeDescription,
) {
    let name = expected.type_name.to_string();
    assert_eq!(generated.type_name, name);
    assert_eq!(generated.encoding, expected.encoding, "{name}");
    assert_eq!(
        generated.raw_file_contents, expected.raw_file_contents,
        "{name}"
    );
    assert_eq!(generated.fields.len(), expected.fields.len(), "{name}");
    for (g, e) in generated.fields.iter().zip(&expected.fields) {
        assert_eq!(g.name, e.name, "{name}");
        assert_eq!(g.type_id, e.type_id, "{name}.{}", e.name);
        assert_eq!(g.capacity, e.capacity as u64, "{name}.{}", e.name);
        assert_eq!(
            g.string_capacity, e.string_capacity as u64,
            "{name}.{}",
            e.name
        );
        let nested = e
            .nested_type_name
            .as_ref()
            .map(TypeName::to_string)
            .unwrap_or_default();
        assert_eq!(g.nested_type_name, nested, "{name}.{}", e.name);
        assert_eq!(g.default_value, e.default_value, "{name}.{}", e.name);
    }
}

fn check(set: &InterfaceSet, type_name: &str, generated: Option<&'static TypeDescription>) {
    let generated = generated.unwrap_or_else(|| panic!("{type_name} has no TYPE_DESCRIPTION"));
    let expected = type_description(set, &TypeName::parse(type_name).unwrap()).unwrap();
    same_individual(generated.type_description, &expected.type_description);
    let names: Vec<&str> = generated
        .referenced_type_descriptions
        .iter()
        .map(|d| d.type_name)
        .collect();
    let expected_names: Vec<String> = expected
        .referenced_type_descriptions
        .iter()
        .map(|d| d.type_name.to_string())
        .collect();
    assert_eq!(names, expected_names, "{type_name}");
    for (g, e) in generated
        .referenced_type_descriptions
        .iter()
        .zip(&expected.referenced_type_descriptions)
    {
        same_individual(g, e);
    }
}

fn message<T: Message>(set: &InterfaceSet) {
    check(set, T::TYPE_NAME, T::TYPE_DESCRIPTION);
}

fn service<S: Service>(set: &InterfaceSet) {
    check(set, S::TYPE_NAME, S::TYPE_DESCRIPTION);
}

#[test]
fn generated_descriptions_are_the_generators() {
    use roslite_msgs::*;
    let set = builtin();
    message::<geometry_msgs::msg::Twist>(&set);
    // Defaults: `float64 w 1` is stated as Python states the float, `1.0`.
    message::<geometry_msgs::msg::Pose>(&set);
    message::<sensor_msgs::msg::Image>(&set);
    // The one vendored file without a last line break.
    message::<sensor_msgs::msg::MagneticField>(&set);
    message::<std_msgs::msg::Empty>(&set);
    message::<rcl_interfaces::msg::ParameterDescriptor>(&set);
    message::<rcl_interfaces::msg::ParameterEvent>(&set);
    // Written in IDL.
    message::<test_msgs::msg::KeyedString>(&set);
    message::<test_msgs::msg::ComplexNestedKey>(&set);
    service::<std_srvs::srv::SetBool>(&set);
    message::<std_srvs::srv::SetBool_Request>(&set);
    service::<type_description_interfaces::srv::GetTypeDescription>(&set);
    message::<type_description_interfaces::srv::GetTypeDescription_Request>(&set);
    type Fibonacci = example_interfaces::action::Fibonacci;
    check(&set, Fibonacci::TYPE_NAME, Fibonacci::TYPE_DESCRIPTION);
    service::<<Fibonacci as Action>::SendGoal>(&set);
    service::<<Fibonacci as Action>::GetResult>(&set);
    message::<<Fibonacci as Action>::FeedbackMessage>(&set);
    message::<<Fibonacci as Action>::Goal>(&set);
}

#[test]
fn sources_are_stated_as_rosidl_embeds_them() {
    use roslite_msgs::*;
    let quaternion = geometry_msgs::msg::Quaternion::TYPE_DESCRIPTION.unwrap();
    let defaults: Vec<(&str, &str)> = quaternion
        .type_description
        .fields
        .iter()
        .map(|f| (f.name, f.default_value))
        .collect();
    assert_eq!(
        defaults,
        [("x", "0.0"), ("y", "0.0"), ("z", "0.0"), ("w", "1.0")]
    );
    assert_eq!(quaternion.type_description.encoding, "msg");
    assert!(quaternion.referenced_type_descriptions.is_empty());
    let source = quaternion.type_description.raw_file_contents;
    assert!(source.ends_with("float64 w 1"), "{source:?}");

    let request = type_description_interfaces::srv::GetTypeDescription_Request::TYPE_DESCRIPTION
        .unwrap()
        .type_description;
    assert_eq!(request.encoding, "implicit");
    assert_eq!(request.raw_file_contents, "");
    let include = request
        .fields
        .iter()
        .find(|f| f.name == "include_type_sources")
        .unwrap();
    assert_eq!(include.default_value, "True");

    let keyed = test_msgs::msg::KeyedString::TYPE_DESCRIPTION
        .unwrap()
        .type_description;
    assert_eq!(keyed.encoding, "idl");
    assert!(keyed.raw_file_contents.starts_with("module test_msgs"));
}
