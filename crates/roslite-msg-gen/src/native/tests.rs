use super::*;

#[test]
fn file_names_follow_rosidl() {
    for (name, file) in [
        ("String", "string"),
        ("AddTwoInts", "add_two_ints"),
        ("UInt8MultiArray", "u_int8_multi_array"),
        ("PointCloud2", "point_cloud2"),
        ("MultiDOFJointState", "multi_dof_joint_state"),
        ("GoalStatusArray", "goal_status_array"),
        ("UUID", "uuid"),
        ("TFMessage", "tf_message"),
        ("Int8", "int8"),
        ("ByteMultiArray", "byte_multi_array"),
    ] {
        assert_eq!(snake_case(name), file, "{name}");
    }
    let name = TypeName::parse("example_interfaces/srv/AddTwoInts").unwrap();
    assert_eq!(
        header_path(&name, Lang::Cpp),
        PathBuf::from("example_interfaces/srv/add_two_ints.hpp")
    );
    assert_eq!(
        header_path(&name, Lang::C),
        PathBuf::from("example_interfaces/srv/add_two_ints.h")
    );
    assert_eq!(
        include_guard(&name, Lang::Cpp),
        "EXAMPLE_INTERFACES__SRV__ADD_TWO_INTS_HPP_"
    );
}

#[test]
fn literals() {
    assert_eq!(
        int_literal(Primitive::Int64, i64::MIN.into()).unwrap(),
        "(-9223372036854775807LL - 1)"
    );
    assert_eq!(int_literal(Primitive::Uint8, 256), None);
    assert_eq!(int_literal(Primitive::Uint64, 7).unwrap(), "7ULL");
    assert_eq!(float_literal(1.0, true, "n", "i").unwrap(), "1.0f");
    assert_eq!(float_literal(1e-5, false, "n", "i").unwrap(), "1e-5");
    assert_eq!(
        float_literal(f64::NEG_INFINITY, false, "n", "i").unwrap(),
        "-i"
    );
    assert_eq!(
        c_string_body("a\"b\\c?\u{e9}\n"),
        "a\\\"b\\\\c\\?\\303\\251\\012"
    );
    assert_eq!(u16_string_body("a\u{e9}\u{1f600}"), "a\\u00e9\\U0001f600");
}

fn set(files: &[(&str, InterfaceKind, &str, &str)]) -> InterfaceSet {
    let mut set = InterfaceSet::new();
    crate::build::add_builtin_interfaces(&mut set).unwrap();
    for (package, kind, name, text) in files {
        set.add_source(package, *kind, name, text, name).unwrap();
    }
    set
}

#[test]
fn selection_adds_dependencies_and_refuses_unknown_names() {
    let set = set(&[]);
    let only = select(&set, &["geometry_msgs/msg/PoseStamped".into()], false).unwrap();
    assert_eq!(only.len(), 1);
    let all = select(&set, &["geometry_msgs/msg/PoseStamped".into()], true).unwrap();
    let names: Vec<String> = all.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        names,
        [
            "builtin_interfaces/msg/Time",
            "geometry_msgs/msg/Point",
            "geometry_msgs/msg/Pose",
            "geometry_msgs/msg/PoseStamped",
            "geometry_msgs/msg/Quaternion",
            "std_msgs/msg/Header",
        ]
    );
    let package = select(&set, &["std_srvs".into()], false).unwrap();
    assert!(package.iter().all(|n| n.package == "std_srvs") && package.len() > 2);
    let err = select(&set, &["no_such_pkg".into()], true).unwrap_err();
    assert!(err.to_string().contains("no_such_pkg"), "{err}");
}

#[test]
fn keywords_are_refused() {
    let set = set(&[("p", InterfaceKind::Msg, "K", "int32 class\n")]);
    for (name, lang) in [("p/msg/K", Lang::Cpp), ("p/msg/K", Lang::C)] {
        let err = generate(&set, &[TypeName::parse(name).unwrap()], lang).unwrap_err();
        assert!(matches!(err, NativeError::InvalidName { .. }), "{err}");
    }
}

#[test]
fn string_header_has_rosidl_names_and_the_hash() {
    let set = set(&[]);
    let name = TypeName::parse("std_msgs/msg/String").unwrap();
    let files = generate(&set, std::slice::from_ref(&name), Lang::Cpp).unwrap();
    assert_eq!(files[0].path, PathBuf::from("roslite/cdr.hpp"));
    let text = &files[1].text;
    let hash = type_hash(&set, &name).unwrap();
    for needle in [
        "namespace std_msgs",
        "struct String",
        "using _data_type = ::std::string;",
        "using SharedPtr = ::std::shared_ptr<String>;",
        "struct message_traits<::std_msgs::msg::String>",
        hash.as_str(),
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let files = generate(&set, &[name], Lang::C).unwrap();
    let text = &files[1].text;
    for needle in [
        "} std_msgs__msg__String;",
        "roslite__String data;",
        "std_msgs__msg__String__encode(",
        hash.as_str(),
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}
