//! Unit tests of the parameter store, overrides, YAML reading and service handlers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::overrides::{
    self, node_matches, validate_name, Overrides, MAX_PARAMS_FILE_BYTES, MAX_PARAMS_FILE_BYTES_VAR,
};
use super::services;
use super::yaml::{self, Yaml};
use super::*;
use crate::msgs::rcl_interfaces::srv as rcl_srv;
use crate::node::Node;
use crate::{Context, ContextOptions, RosArgs};

fn context(args: &[&str]) -> Context {
    let mut argv = vec!["prog", "--ros-args"];
    argv.extend_from_slice(args);
    Context::new(ContextOptions {
        args: RosArgs::parse(argv).unwrap(),
        ..Default::default()
    })
    .unwrap()
}

fn node() -> Node {
    context(&[]).create_node("params_test").unwrap()
}

fn scalar(text: &str) -> Yaml {
    Yaml::Scalar {
        text: text.into(),
        quoted: false,
    }
}

fn key(text: &str, line: usize) -> yaml::Key {
    yaml::Key {
        text: text.into(),
        line,
    }
}

// ---------------------------------------------------------------------------------------------
// YAML

#[test]
fn yaml_block_flow_and_indentless_sequences() {
    let text = "\
# a comment
/talker:
  ros__parameters:
    rate: 5   # Hz
    name: 'it''s'
    quoted: \"a\\tb\"
    list: [1, 2,
           3]
    words:
    - a
    - 'b c'
    nested: {x: 1.5, y: [true, false]}
    url: http://example.com
";
    let doc = yaml::parse(text).unwrap().unwrap();
    let Yaml::Map(top) = doc else { panic!() };
    let Yaml::Map(node) = &top[0].1 else { panic!() };
    let Yaml::Map(params) = &node[0].1 else {
        panic!()
    };
    let get = |k: &str| params.iter().find(|(n, _)| n.text == k).unwrap().1.clone();
    assert_eq!(get("rate"), scalar("5"));
    assert_eq!(
        get("name"),
        Yaml::Scalar {
            text: "it's".into(),
            quoted: true
        }
    );
    assert_eq!(
        get("quoted"),
        Yaml::Scalar {
            text: "a\tb".into(),
            quoted: true
        }
    );
    assert_eq!(
        get("list"),
        Yaml::Seq(vec![scalar("1"), scalar("2"), scalar("3")])
    );
    assert_eq!(
        get("words"),
        Yaml::Seq(vec![
            scalar("a"),
            Yaml::Scalar {
                text: "b c".into(),
                quoted: true
            }
        ])
    );
    assert_eq!(
        get("nested"),
        Yaml::Map(vec![
            (key("x", 12), scalar("1.5")),
            (
                key("y", 12),
                Yaml::Seq(vec![scalar("true"), scalar("false")])
            ),
        ])
    );
    assert_eq!(get("url"), scalar("http://example.com"));
}

#[test]
fn yaml_errors_name_the_line_and_problem() {
    let e = yaml::parse("a:\n  b: 1\n   c: 2\n").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    let e = yaml::parse("a: [1, 2\n").unwrap_err();
    assert!(e.message.contains("never closed"), "{e}");
    // Block scalars are read now (see `yaml/tests.rs`), as rcl reads them.
    assert_eq!(
        yaml::parse("a: |\n  text\n").unwrap(),
        Some(Yaml::Map(vec![(
            key("a", 1),
            Yaml::Scalar {
                text: "text\n".into(),
                quoted: true
            }
        )]))
    );
    let e = yaml::parse("a: 1\na: 2\n").unwrap_err();
    assert!(e.message.contains("appears twice"), "{e}");
    let e = yaml::parse("a: 'open\n").unwrap_err();
    assert!(e.message.contains("never closed"), "{e}");
    assert_eq!(yaml::parse("# nothing\n\n").unwrap(), None);
}

// ---------------------------------------------------------------------------------------------
// Values

#[test]
fn values_are_read_as_rcl_reads_them() {
    let v = |t: &str| ParameterValue::from_yaml(t).unwrap();
    assert_eq!(v("true"), ParameterValue::Bool(true));
    assert_eq!(v("Off"), ParameterValue::Bool(false));
    assert_eq!(v("3"), ParameterValue::Integer(3));
    assert_eq!(v("-0x10"), ParameterValue::Integer(-16));
    assert_eq!(v("2.5"), ParameterValue::Double(2.5));
    assert_eq!(v("1e-3"), ParameterValue::Double(0.001));
    assert_eq!(v("-.inf"), ParameterValue::Double(f64::NEG_INFINITY));
    assert_eq!(
        v("hello world"),
        ParameterValue::String("hello world".into())
    );
    assert_eq!(v("'5'"), ParameterValue::String("5".into()));
    assert_eq!(v("nan"), ParameterValue::String("nan".into()));
    assert_eq!(v("[1, 2]"), ParameterValue::IntegerArray(vec![1, 2]));
    assert_eq!(v("[1.0, 2.5]"), ParameterValue::DoubleArray(vec![1.0, 2.5]));
    assert_eq!(
        v("[a, 'b']"),
        ParameterValue::StringArray(vec!["a".into(), "b".into()])
    );
    assert_eq!(v("[true]"), ParameterValue::BoolArray(vec![true]));
    assert_eq!(v("[]"), ParameterValue::StringArray(vec![]));
    assert!(matches!(
        ParameterValue::from_yaml("[1, true]"),
        Err(ValueError::MixedSequence { .. })
    ));
    assert_eq!(ParameterValue::from_yaml("~"), Err(ValueError::Empty));
    assert_eq!(
        ParameterValue::from_yaml("{a: 1}"),
        Err(ValueError::Mapping)
    );
    assert_eq!(
        ParameterValue::from_yaml("[[1]]"),
        Err(ValueError::NestedSequence)
    );
}

#[test]
fn values_display_as_yaml_that_reads_back() {
    for value in [
        ParameterValue::Bool(true),
        ParameterValue::Integer(-4),
        ParameterValue::Double(1.0),
        ParameterValue::Double(2.5e-7),
        ParameterValue::String("plain".into()),
        ParameterValue::String("5".into()),
        ParameterValue::String("true".into()),
        ParameterValue::String("a: b".into()),
        ParameterValue::String("it's".into()),
        ParameterValue::String(String::new()),
        ParameterValue::IntegerArray(vec![1, 2]),
        ParameterValue::DoubleArray(vec![0.5, 3.0]),
        ParameterValue::StringArray(vec!["x".into(), "it's".into()]),
        ParameterValue::BoolArray(vec![false, true]),
    ] {
        let text = value.to_string();
        assert_eq!(ParameterValue::from_yaml(&text).unwrap(), value, "{text}");
    }
    assert_eq!(ParameterValue::Double(3.0).to_string(), "3.0");
}

#[test]
fn values_round_trip_through_messages() {
    for value in [
        ParameterValue::NotSet,
        ParameterValue::Bool(true),
        ParameterValue::Integer(7),
        ParameterValue::Double(0.25),
        ParameterValue::String("s".into()),
        ParameterValue::ByteArray(vec![1, 255]),
        ParameterValue::BoolArray(vec![true]),
        ParameterValue::IntegerArray(vec![-1]),
        ParameterValue::DoubleArray(vec![1.5]),
        ParameterValue::StringArray(vec!["a".into()]),
    ] {
        assert_eq!(ParameterValue::from_msg(&value.to_msg()), Some(value));
    }
    let bad = rcl::ParameterValue {
        r#type: 42,
        ..Default::default()
    };
    assert_eq!(ParameterValue::from_msg(&bad), None);
}

// ---------------------------------------------------------------------------------------------
// Overrides

#[test]
fn node_name_patterns() {
    assert!(node_matches("/**", "/talker"));
    assert!(node_matches("/**", "/a/b/talker"));
    assert!(node_matches("talker", "/talker"));
    assert!(!node_matches("talker", "/robot/talker"));
    assert!(node_matches("/robot/talker", "/robot/talker"));
    assert!(node_matches("/*/talker", "/robot/talker"));
    assert!(!node_matches("/*/talker", "/talker"));
    assert!(node_matches("/**/talker", "/talker"));
    assert!(node_matches("/**/talker", "/a/b/talker"));
    assert!(node_matches("/robot/talk*", "/robot/talker"));
    assert!(!node_matches("/robot/talk*", "/robot/listener"));
}

const FILE: &str = "\
/**:
  ros__parameters:
    common: 1
    rate: 1.0
robot:
  talker:
    ros__parameters:
      rate: 10.0
      wheel:
        radius: 0.1
        count: 4
/other:
  ros__parameters:
    rate: 99.0
";

#[test]
fn parameter_file_layout_namespaces_and_wildcards() {
    let file = [("params.yaml".to_owned(), FILE.to_owned())];
    let talker = Overrides::from_sources(&file, &[], "/robot/talker").unwrap();
    assert_eq!(talker.get("common"), Some(&ParameterValue::Integer(1)));
    assert_eq!(talker.get("rate"), Some(&ParameterValue::Double(10.0)));
    assert_eq!(
        talker.get("wheel.radius"),
        Some(&ParameterValue::Double(0.1))
    );
    assert_eq!(talker.get("wheel.count"), Some(&ParameterValue::Integer(4)));
    let other = Overrides::from_sources(&file, &[], "/other").unwrap();
    assert_eq!(other.get("rate"), Some(&ParameterValue::Double(99.0)));
    assert_eq!(other.get("wheel.count"), None);
}

#[test]
fn command_line_overrides_win_and_target_nodes() {
    let file = [("params.yaml".to_owned(), FILE.to_owned())];
    let params = RosArgs::parse([
        "p",
        "--ros-args",
        "-p",
        "rate:=20.0",
        "-p",
        "/other:only_other:=true",
        "-p",
        "list:=[1, 2]",
    ])
    .unwrap()
    .params;
    let talker = Overrides::from_sources(&file, &params, "/robot/talker").unwrap();
    assert_eq!(talker.get("rate"), Some(&ParameterValue::Double(20.0)));
    assert_eq!(talker.get("only_other"), None);
    assert_eq!(
        talker.get("list"),
        Some(&ParameterValue::IntegerArray(vec![1, 2]))
    );
    let other = Overrides::from_sources(&file, &params, "/other").unwrap();
    assert_eq!(other.get("only_other"), Some(&ParameterValue::Bool(true)));
}

#[test]
fn bad_parameter_files_are_explained() {
    let check = |text: &str, expect: &str| {
        let file = [("bad.yaml".to_owned(), text.to_owned())];
        let e = Overrides::from_sources(&file, &[], "/n").unwrap_err();
        assert!(e.to_string().contains(expect), "{e}");
        assert!(e.to_string().contains("bad.yaml"), "{e}");
    };
    check("- a\n", "top level must be a mapping");
    check("n:\n  ros__parameters: 5\n", "must hold a mapping");
    check("ros__parameters:\n  a: 1\n", "under a node name");
    check("n:\n  rate: 5\n", "'rate' is not under 'ros__parameters'");
    check("n:\n  ros__parameters:\n    a: [1, x]\n", "parameter 'a'");
    check("n:\n  ros__parameters:\n    a:\n", "no value");
    check("n: [\n", "not valid YAML");
    // Problems of one entry name the file and the entry's line, as `file:line:`.
    check(
        "n:\n  ros__parameters:\n    a: 1\n    b: [1, x]\n",
        "bad.yaml:4: parameter 'b'",
    );
    check("n:\n  ros__parameters: 5\n", "bad.yaml:2: ");
    check("n: [\n", "bad.yaml:1:4: not valid YAML");
}

#[test]
fn numbers_beyond_their_range_are_errors() {
    let value = |text: &str| {
        let file = [(
            "p.yaml".to_owned(),
            format!("n:\n  ros__parameters:\n    v: {text}\n"),
        )];
        Overrides::from_sources(&file, &[], "/n").map(|o| o.get("v").cloned())
    };
    // rcl reads an integer beyond 64 bits as a double and 1e400 as a string.
    for text in [
        "100000000000000000000000",
        "-9223372036854775809",
        "0x10000000000000000",
    ] {
        let e = value(text).unwrap_err();
        assert!(
            matches!(
                &e.problem,
                OverrideProblem::Value {
                    error: ValueError::IntegerOutOfRange { .. },
                    ..
                }
            ),
            "{text}: {e}"
        );
        assert!(
            e.to_string()
                .contains("-9223372036854775808 to 9223372036854775807"),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("p.yaml:3: parameter 'v': "),
            "{e}"
        );
    }
    for text in ["1e400", "-1.5e309", "[1.0, 1e999]"] {
        let e = value(text).unwrap_err();
        assert!(
            matches!(
                &e.problem,
                OverrideProblem::Value {
                    error: ValueError::DoubleOutOfRange { .. },
                    ..
                }
            ),
            "{text}: {e}"
        );
        assert!(e.to_string().contains("1.7976931348623157e308"), "{e}");
    }
    // The edges of the ranges, and infinity written as YAML writes it, are values.
    assert_eq!(
        value("-9223372036854775808").unwrap(),
        Some(ParameterValue::Integer(i64::MIN))
    );
    assert_eq!(
        value("0009223372036854775807").unwrap(),
        Some(ParameterValue::Integer(i64::MAX))
    );
    assert_eq!(
        value("1.7976931348623157e308").unwrap(),
        Some(ParameterValue::Double(f64::MAX))
    );
    assert_eq!(
        value("-.inf").unwrap(),
        Some(ParameterValue::Double(f64::NEG_INFINITY))
    );
    assert_eq!(value("1e-400").unwrap(), Some(ParameterValue::Double(0.0)));
    // `-p` reads values the same way.
    let e = Overrides::from_sources(&[], &[(None, "v".into(), "1e400".into())], "/n").unwrap_err();
    assert!(
        e.to_string().contains("beyond the range of a double"),
        "{e}"
    );
}

#[test]
fn parameter_names_in_files_follow_the_rules_of_p() {
    let names = |params: &str| {
        let file = [(
            "p.yaml".to_owned(),
            format!("n:\n  ros__parameters:\n{params}"),
        )];
        Overrides::from_sources(&file, &[], "/n")
    };
    for (params, name) in [
        ("    \"bad name!\": 3\n", "bad name!"),
        ("    ok: 1\n    a:\n      \"b\\tc\": 2\n", "a.b\tc"),
        ("    \"a..b\": 1\n", "a..b"),
        ("    \"\": 1\n", ""),
    ] {
        let e = names(params).unwrap_err();
        assert_eq!(
            e.problem,
            match validate_name(name) {
                Err(ParameterError::InvalidName { name, reason }) => {
                    OverrideProblem::InvalidName { name, reason }
                }
                other => panic!("{name:?} must be invalid: {other:?}"),
            },
            "{params}"
        );
        assert!(e.to_string().starts_with("p.yaml:"), "{e}");
    }
    assert!(e_line(
        &names("    a: 1\n    \"bad name!\": 3\n").unwrap_err(),
        4
    ));
    // The same name on `-p` is refused with the same problem.
    let e =
        Overrides::from_sources(&[], &[(None, "bad name!".into(), "3".into())], "/n").unwrap_err();
    assert!(
        matches!(e.problem, OverrideProblem::InvalidName { .. }),
        "{e}"
    );
}

fn e_line(e: &OverrideError, line: usize) -> bool {
    e.line == Some(line)
}

#[test]
fn parameter_file_input_is_capped() {
    // An endless file fails after the limit, having read no more than it.
    let e = crate::params::parameters_in_file("/dev/zero", "/n", true).unwrap_err();
    assert_eq!(
        e.problem,
        OverrideProblem::TooLarge {
            limit: MAX_PARAMS_FILE_BYTES
        }
    );
    let message = e.to_string();
    for part in [
        "/dev/zero",
        "16 MiB",
        "--params-file",
        MAX_PARAMS_FILE_BYTES_VAR,
    ] {
        assert!(message.contains(part), "{message}");
    }
    let dir = std::env::temp_dir().join(format!("roslite-params-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.yaml");
    let text = "n:\n  ros__parameters:\n    a: 1\n";
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(
        overrides::read_params_text(path, text.len()).as_deref(),
        Ok(text)
    );
    let limit = text.len() - 1;
    assert_eq!(
        overrides::read_params_text(path, limit),
        Err(OverrideProblem::TooLarge { limit })
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parameter_files_are_read_from_disk() {
    let dir = std::env::temp_dir().join(format!("roslite-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.yaml");
    std::fs::write(&path, "params_test:\n  ros__parameters:\n    gain: 2.5\n").unwrap();
    let ctx = context(&["--params-file", path.to_str().unwrap()]);
    let node = ctx.create_node("params_test").unwrap();
    let gain = node
        .declare_parameter("gain", 1.0, ParameterDescriptor::new())
        .unwrap();
    assert_eq!(gain, ParameterValue::Double(2.5));
    std::fs::remove_dir_all(&dir).unwrap();

    let ctx = context(&["--params-file", "/nonexistent/roslite.yaml"]);
    let Err(e) = ctx.create_node("n") else {
        panic!("a missing file must fail node creation")
    };
    assert!(e.to_string().contains("cannot read parameter file"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Declare, get, set

#[test]
fn declare_returns_override_or_default() {
    let ctx = context(&["-p", "rate:=20.0", "-p", "params_test:mode:=fast"]);
    let node = ctx.create_node("params_test").unwrap();
    let rate = node
        .declare_parameter("rate", 5.0, ParameterDescriptor::new())
        .unwrap();
    assert_eq!(rate.as_f64(), Some(20.0));
    let mode = node
        .declare_parameter("mode", "slow", ParameterDescriptor::new())
        .unwrap();
    assert_eq!(mode.as_str(), Some("fast"));
    let other = node
        .declare_parameter("other", 3, ParameterDescriptor::new())
        .unwrap();
    assert_eq!(other, ParameterValue::Integer(3));
    assert!(node.has_parameter("rate"));
    assert_eq!(
        node.get_parameter("rate").unwrap().value,
        ParameterValue::Double(20.0)
    );
    let e = node
        .declare_parameter("rate", 1.0, ParameterDescriptor::new())
        .unwrap_err();
    assert_eq!(
        e,
        ParameterError::AlreadyDeclared {
            name: "rate".into()
        }
    );
    assert!(node
        .parameter_overrides()
        .contains(&Parameter::new("mode", "fast")));
}

#[test]
fn override_of_the_wrong_type_is_explained() {
    let ctx = context(&["-p", "rate:=5"]);
    let node = ctx.create_node("n").unwrap();
    let e = node
        .declare_parameter("rate", 1.0, ParameterDescriptor::new())
        .unwrap_err();
    assert!(
        matches!(
            e,
            ParameterError::WrongType {
                expected: ParameterType::Double,
                actual: ParameterType::Integer,
                from_override: true,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("came from an override"), "{e}");
}

#[test]
fn typed_declaration_without_default_needs_an_override() {
    let ctx = context(&["-p", "port:=/dev/ttyUSB0", "-p", "empty:=[]"]);
    let node = ctx.create_node("n").unwrap();
    let port = node
        .declare_parameter(
            "port",
            ParameterValue::NotSet,
            ParameterDescriptor::new().of_type(ParameterType::String),
        )
        .unwrap();
    assert_eq!(port.as_str(), Some("/dev/ttyUSB0"));
    let e = node
        .declare_parameter(
            "baud",
            ParameterValue::NotSet,
            ParameterDescriptor::new().of_type(ParameterType::Integer),
        )
        .unwrap_err();
    assert!(matches!(e, ParameterError::NoValue { .. }), "{e:?}");
    assert!(e.to_string().contains("-p baud:="), "{e}");
    // `[]` takes the declared array type.
    let empty = node
        .declare_parameter("empty", vec![1i64, 2], ParameterDescriptor::new())
        .unwrap();
    assert_eq!(empty, ParameterValue::IntegerArray(vec![]));
}

#[test]
fn set_checks_type_read_only_and_declaration() {
    let node = node();
    node.declare_parameter("gain", 1.0, ParameterDescriptor::new())
        .unwrap();
    node.declare_parameter("id", "robot1", ParameterDescriptor::new().read_only())
        .unwrap();

    assert!(node.set_parameter(Parameter::new("gain", 2.0)).successful);
    assert_eq!(
        node.get_parameter("gain").unwrap().value.as_f64(),
        Some(2.0)
    );

    let r = node.set_parameter(Parameter::new("gain", 3));
    assert!(!r.successful);
    assert_eq!(
        r.reason,
        "Wrong parameter type, parameter {gain} is of type {double}, setting it to {integer} is \
         not allowed."
    );
    let r = node.set_parameter(Parameter::new("id", "robot2"));
    assert!(!r.successful);
    assert!(r.reason.contains("read-only"), "{}", r.reason);
    let r = node.set_parameter(Parameter::new("nope", 1));
    assert!(!r.successful);
    assert!(r.reason.contains("has not been declared"), "{}", r.reason);
    assert!(matches!(
        node.get_parameter("nope"),
        Err(ParameterError::NotDeclared { .. })
    ));
    let r = node.set_parameter(Parameter::new("bad..name", 1));
    assert!(r.reason.contains("invalid parameter name"), "{}", r.reason);
    let e = node
        .declare_parameter(" ", 1, ParameterDescriptor::new())
        .unwrap_err();
    assert!(matches!(e, ParameterError::InvalidName { .. }), "{e:?}");
}

#[test]
fn ranges_with_steps() {
    let node = node();
    node.declare_parameter(
        "count",
        4,
        ParameterDescriptor::new().integer_range(0, 10, 2),
    )
    .unwrap();
    assert!(node.set_parameter(Parameter::new("count", 10)).successful);
    assert!(node.set_parameter(Parameter::new("count", 0)).successful);
    let r = node.set_parameter(Parameter::new("count", 3));
    assert!(!r.successful);
    assert_eq!(
        r.reason,
        "parameter 'count' cannot be set to 3: outside its integer range [0, 10] with step 2"
    );
    assert!(!node.set_parameter(Parameter::new("count", 12)).successful);
    assert!(!node.set_parameter(Parameter::new("count", -2)).successful);

    node.declare_parameter(
        "ratio",
        0.5,
        ParameterDescriptor::new().floating_point_range(0.0, 1.0, 0.1),
    )
    .unwrap();
    assert!(
        node.set_parameter(Parameter::new("ratio", 0.1 + 0.2))
            .successful
    );
    assert!(node.set_parameter(Parameter::new("ratio", 1.0)).successful);
    assert!(!node.set_parameter(Parameter::new("ratio", 0.35)).successful);
    assert!(!node.set_parameter(Parameter::new("ratio", 1.5)).successful);

    node.declare_parameter(
        "gains",
        vec![1i64, 2],
        ParameterDescriptor::new().integer_range(0, 5, 0),
    )
    .unwrap();
    assert!(
        !node
            .set_parameter(Parameter::new("gains", vec![1i64, 6]))
            .successful
    );

    // A default outside the range is refused at declaration.
    let e = node
        .declare_parameter(
            "low",
            20,
            ParameterDescriptor::new().integer_range(0, 10, 0),
        )
        .unwrap_err();
    assert!(matches!(e, ParameterError::OutOfRange { .. }), "{e:?}");
    // A range that cannot apply is a descriptor error.
    let e = node
        .declare_parameter(
            "mismatch",
            1.0,
            ParameterDescriptor::new().integer_range(0, 10, 0),
        )
        .unwrap_err();
    assert!(
        matches!(e, ParameterError::InvalidDescriptor { .. }),
        "{e:?}"
    );
    let e = node
        .declare_parameter(
            "empty",
            1,
            ParameterDescriptor::new().integer_range(5, 0, 0),
        )
        .unwrap_err();
    assert!(e.to_string().contains("from > to"), "{e}");
}

#[test]
fn atomic_sets_apply_all_or_nothing() {
    let node = node();
    node.declare_parameter("a", 1, ParameterDescriptor::new())
        .unwrap();
    node.declare_parameter("b", 1, ParameterDescriptor::new().integer_range(0, 5, 0))
        .unwrap();
    let r = node.set_parameters_atomically(&[Parameter::new("a", 2), Parameter::new("b", 9)]);
    assert!(!r.successful);
    assert_eq!(node.get_parameter("a").unwrap().value.as_i64(), Some(1));
    let r = node.set_parameters_atomically(&[Parameter::new("a", 2), Parameter::new("b", 3)]);
    assert!(r.successful, "{}", r.reason);
    assert_eq!(node.get_parameter("a").unwrap().value.as_i64(), Some(2));
    // Non-atomic: each on its own.
    let results = node.set_parameters(&[Parameter::new("a", 4), Parameter::new("b", 9)]);
    assert!(results[0].successful && !results[1].successful);
    assert_eq!(node.get_parameter("a").unwrap().value.as_i64(), Some(4));
}

#[test]
fn callbacks_validate_declarations_and_sets() {
    let node = node();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let reader = node.clone();
    let handle = node.add_on_set_parameters_callback(move |params| {
        counter.fetch_add(1, Ordering::Relaxed);
        // Reading parameters from a callback works; changing them is refused.
        let _ = reader.get_parameter("speed");
        let nested = reader.set_parameter(Parameter::new("speed", 0.0));
        assert!(
            nested.reason.contains("from within an on-set"),
            "{}",
            nested.reason
        );
        match params.iter().find(|p| p.name == "speed") {
            Some(p) if p.value.as_f64().is_some_and(|s| s > 2.0) => {
                SetParametersResult::rejected("speed above 2 m/s is unsafe")
            }
            _ => SetParametersResult::success(),
        }
    });
    node.declare_parameter("speed", 1.0, ParameterDescriptor::new())
        .unwrap();
    let e = node
        .declare_parameter("other", 1, ParameterDescriptor::new())
        .map(|_| ());
    assert_eq!(e, Ok(()));
    let r = node.set_parameter(Parameter::new("speed", 3.0));
    assert_eq!(
        r,
        SetParametersResult::rejected("speed above 2 m/s is unsafe")
    );
    assert!(node.set_parameter(Parameter::new("speed", 1.5)).successful);
    assert_eq!(seen.load(Ordering::Relaxed), 4);
    // Declarations run the callbacks too.
    let e = node
        .declare_parameter("speed2", 1.0, ParameterDescriptor::new())
        .map(|_| ());
    assert_eq!(e, Ok(()));
    drop(handle);
    assert!(node.set_parameter(Parameter::new("speed", 9.0)).successful);
    assert_eq!(seen.load(Ordering::Relaxed), 5);
}

#[test]
fn callbacks_run_newest_first_and_stop_at_a_refusal() {
    let node = node();
    let order = Arc::new(Mutex::new(Vec::new()));
    let o1 = order.clone();
    let _first = node.add_on_set_parameters_callback(move |_| {
        o1.lock().unwrap().push(1);
        SetParametersResult::success()
    });
    let o2 = order.clone();
    let _second = node.add_on_set_parameters_callback(move |_| {
        o2.lock().unwrap().push(2);
        SetParametersResult::rejected("")
    });
    let e = node
        .declare_parameter("x", 1, ParameterDescriptor::new())
        .unwrap_err();
    assert!(matches!(e, ParameterError::Rejected { .. }), "{e:?}");
    assert!(!node.has_parameter("x"));
    assert_eq!(*order.lock().unwrap(), [2]);
}

#[test]
fn undeclare_and_dynamic_typing() {
    let node = node();
    node.declare_parameter("static", 1, ParameterDescriptor::new())
        .unwrap();
    assert!(matches!(
        node.undeclare_parameter("static"),
        Err(ParameterError::StaticallyTyped { .. })
    ));
    node.declare_parameter("dyn", 1, ParameterDescriptor::new().dynamic_typing())
        .unwrap();
    assert!(
        node.set_parameter(Parameter::new("dyn", "now a string"))
            .successful
    );
    assert_eq!(
        node.get_parameter_types(&["dyn", "static"]).unwrap(),
        [ParameterType::String, ParameterType::Integer]
    );
    node.undeclare_parameter("dyn").unwrap();
    assert!(!node.has_parameter("dyn"));
    assert!(matches!(
        node.undeclare_parameter("dyn"),
        Err(ParameterError::NotDeclared { .. })
    ));
    // Setting "not set" undeclares a dynamically typed parameter.
    node.declare_parameter("gone", 1, ParameterDescriptor::new().dynamic_typing())
        .unwrap();
    assert!(
        node.set_parameter(Parameter::new("gone", ParameterValue::NotSet))
            .successful
    );
    assert!(!node.has_parameter("gone"));
}

#[test]
fn undeclared_parameters_when_allowed() {
    let node = node();
    node.set_allow_undeclared_parameters(true);
    assert_eq!(
        node.get_parameter("free").unwrap().value,
        ParameterValue::NotSet
    );
    assert!(node.set_parameter(Parameter::new("free", 1)).successful);
    assert!(node.set_parameter(Parameter::new("free", "x")).successful);
    let d = node.describe_parameters(&["free", "unknown"]).unwrap();
    assert!(d[0].dynamic_typing);
    assert_eq!(d[0].ty, ParameterType::String);
    assert_eq!(d[1].ty, ParameterType::NotSet);
}

#[test]
fn list_parameters_by_prefix_and_depth() {
    let node = node();
    for name in ["a", "b.c", "b.d.e", "b.d.f", "bx"] {
        node.declare_parameter(name, 1, ParameterDescriptor::new())
            .unwrap();
    }
    let all = node.list_parameters::<&str>(&[], 0);
    assert_eq!(
        all.names,
        [
            "a",
            "b.c",
            "b.d.e",
            "b.d.f",
            "bx",
            "start_type_description_service",
            "use_sim_time"
        ]
    );
    assert_eq!(all.prefixes, ["b", "b.d"]);
    let top = node.list_parameters::<&str>(&[], 1);
    assert_eq!(
        top.names,
        ["a", "bx", "start_type_description_service", "use_sim_time"]
    );
    let under_b = node.list_parameters(&["b"], 1);
    assert_eq!(under_b.names, ["b.c"]);
    let under_b = node.list_parameters(&["b"], 0);
    assert_eq!(under_b.names, ["b.c", "b.d.e", "b.d.f"]);
    let exact = node.list_parameters(&["b.d.e"], 1);
    assert_eq!(exact.names, ["b.d.e"]);
}

#[test]
fn describe_fills_name_and_type() {
    let node = node();
    node.declare_parameter(
        "rate",
        10,
        ParameterDescriptor::new()
            .description("publish rate")
            .integer_range(1, 100, 1)
            .read_only(),
    )
    .unwrap();
    let d = &node.describe_parameters(&["rate"]).unwrap()[0];
    assert_eq!(d.name, "rate");
    assert_eq!(d.ty, ParameterType::Integer);
    assert_eq!(d.description, "publish rate");
    assert!(d.read_only);
    assert_eq!(ParameterDescriptor::from_msg(&d.to_msg()).as_ref(), Some(d));
    assert!(node.describe_parameters(&["rate", "nope"]).is_err());
}

#[test]
fn use_sim_time_is_declared_and_fixed() {
    let node = node();
    assert_eq!(
        node.get_parameter("use_sim_time").unwrap().value,
        ParameterValue::Bool(false)
    );
    assert!(
        node.set_parameter(Parameter::new("use_sim_time", false))
            .successful
    );
    let r = node.set_parameter(Parameter::new("use_sim_time", true));
    assert!(!r.successful);
    assert!(r.reason.contains("restart"), "{}", r.reason);

    let ctx = context(&["-p", "use_sim_time:=true"]);
    let sim = ctx.create_node("sim").unwrap();
    assert!(sim.uses_sim_time());
    assert_eq!(
        sim.get_parameter("use_sim_time").unwrap().value,
        ParameterValue::Bool(true)
    );
}

// ---------------------------------------------------------------------------------------------
// Service handlers and events

#[test]
fn service_handlers_answer_as_rclcpp_does() {
    let node = node();
    node.declare_parameter("gain", 1.5, ParameterDescriptor::new().description("g"))
        .unwrap();
    let core = &node.parameters.core;

    let got = services::get_parameters(
        core,
        rcl_srv::GetParameters_Request {
            names: vec!["gain".into()],
        },
    );
    assert_eq!(got.values, [ParameterValue::Double(1.5).to_msg()]);
    // Any undeclared name empties the whole response.
    let got = services::get_parameters(
        core,
        rcl_srv::GetParameters_Request {
            names: vec!["gain".into(), "nope".into()],
        },
    );
    assert!(got.values.is_empty());

    let types = services::get_parameter_types(
        core,
        rcl_srv::GetParameterTypes_Request {
            names: vec!["gain".into(), "use_sim_time".into()],
        },
    );
    assert_eq!(types.types.as_slice(), [3, 1]);

    let described = services::describe_parameters(
        core,
        rcl_srv::DescribeParameters_Request {
            names: vec!["gain".into()],
        },
    );
    assert_eq!(described.descriptors[0].name, "gain");
    assert_eq!(described.descriptors[0].description, "g");
    assert_eq!(described.descriptors[0].r#type, 3);

    let listed = services::list_parameters(core, rcl_srv::ListParameters_Request::default());
    assert_eq!(
        listed.result.names,
        ["gain", "start_type_description_service", "use_sim_time"]
    );

    let set = services::set_parameters(
        core,
        rcl_srv::SetParameters_Request {
            parameters: vec![
                Parameter::new("gain", 2.0).to_msg(),
                Parameter::new("gain", "x").to_msg(),
                rcl::Parameter {
                    name: "gain".into(),
                    value: rcl::ParameterValue {
                        r#type: 77,
                        ..Default::default()
                    },
                },
            ],
        },
    );
    assert!(set.results[0].successful);
    assert!(!set.results[1].successful);
    assert!(
        set.results[2].reason.contains("type code 77"),
        "{:?}",
        set.results[2]
    );
    assert_eq!(
        node.get_parameter("gain").unwrap().value.as_f64(),
        Some(2.0)
    );

    let atomic = services::set_parameters_atomically(
        core,
        rcl_srv::SetParametersAtomically_Request {
            parameters: vec![
                Parameter::new("gain", 4.0).to_msg(),
                Parameter::new("nope", 1).to_msg(),
            ],
        },
    );
    assert!(!atomic.result.successful);
    assert_eq!(
        node.get_parameter("gain").unwrap().value.as_f64(),
        Some(2.0)
    );
}

#[test]
fn parameter_events_are_published() {
    let ctx = context(&[]);
    let node = ctx.create_node("emitter").unwrap();
    let watcher = ctx.create_node("watcher").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let _sub = watcher
        .create_subscription(
            "/parameter_events",
            crate::QosProfile::PARAMETER_EVENTS,
            move |e: rcl::ParameterEvent| sink.lock().unwrap().push(e),
        )
        .unwrap();
    node.declare_parameter("p", 1, ParameterDescriptor::new().dynamic_typing())
        .unwrap();
    assert!(node.set_parameter(Parameter::new("p", 2)).successful);
    assert!(!node.set_parameter(Parameter::new("p2", 2)).successful);
    node.undeclare_parameter("p").unwrap();
    let executor = crate::Executor::new(&ctx);
    executor.add_node(&watcher);
    executor.spin_some();
    let events = events.lock().unwrap();
    let ours: Vec<_> = events.iter().filter(|e| e.node == "/emitter").collect();
    assert_eq!(ours.len(), 3, "{events:?}");
    assert_eq!(ours[0].new_parameters, [Parameter::new("p", 1).to_msg()]);
    assert_eq!(
        ours[1].changed_parameters,
        [Parameter::new("p", 2).to_msg()]
    );
    assert_eq!(ours[2].deleted_parameters[0].name, "p");
    assert!(ours[0].stamp.sec > 0);
}

#[test]
fn services_can_be_disabled() {
    let ctx = Context::new(ContextOptions {
        parameter_services: ParameterServices::Disabled,
        ..Default::default()
    })
    .unwrap();
    let node = ctx.create_node("quiet").unwrap();
    assert!(node.parameters.services.lock().unwrap().is_empty());
    assert!(node.parameters.core.events.get().is_none());
    // The node API still works.
    node.declare_parameter("x", 1, ParameterDescriptor::new())
        .unwrap();
    assert!(node.set_parameter(Parameter::new("x", 2)).successful);

    let loud = context(&[]).create_node("loud").unwrap();
    assert_eq!(loud.parameters.services.lock().unwrap().len(), 6);
}

/// `param dump` writes strings with `yaml_string`; what it writes must read back as the same
/// string (`param load`), line breaks, tabs, quotes and backslashes included.
#[test]
fn a_dumped_string_reads_back_unchanged() {
    for text in [
        "plain",
        "two words",
        "it's",
        "true",
        "42",
        "a: b",
        "first line\nsecond line\n",
        "tab\there, carriage\rreturn",
        "quote \" and back\\slash\nand a line",
        "bell \u{7} and delete \u{7f}",
        "",
    ] {
        let written = yaml_string(text);
        assert_eq!(
            ParameterValue::from_yaml(&written),
            Ok(ParameterValue::String(text.to_owned())),
            "{text:?} written as {written}"
        );
    }
}

#[test]
fn restoring_parameters_skips_the_on_set_callbacks_and_makes_the_table_exact() {
    let node = node();
    node.declare_parameter("speed", 1.0, ParameterDescriptor::new())
        .unwrap();
    node.declare_parameter(
        "gone",
        ParameterValue::Integer(3),
        ParameterDescriptor::new().dynamic_typing(),
    )
    .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    node.add_on_set_parameters_callback(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
        SetParametersResult::rejected("no changes")
    })
    .keep_forever();
    let restored = vec![
        Parameter::new("added", "text"),
        Parameter::new("speed", 2.5),
        Parameter::new("use_sim_time", false),
    ];
    node.restore_parameters(&restored).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "a callback ran");
    assert_eq!(node.parameter_values(), restored);
    assert!(!node.has_parameter("gone"));
    // A value that does not fit a statically typed parameter changes nothing.
    let wrong = node
        .restore_parameters(&[Parameter::new("speed", "fast")])
        .unwrap_err();
    assert!(matches!(wrong, ParameterError::WrongType { .. }), "{wrong}");
    assert_eq!(node.parameter_values(), restored);
}
