//! `from_yaml` against `ros2 topic pub` arguments and `to_yaml` against `ros2 topic echo`.

use roslite_cdr::Endianness;
use roslite_msg_gen::ast::{BaseType, Collection, InterfaceKind, Primitive};
use roslite_msg_gen::dynamic::{
    decode, default_value, encode, field, field_type, from_yaml, to_yaml, DynError, Value,
    YamlOptions,
};
use roslite_msg_gen::registry::InterfaceSet;

use super::{s, set, string_msg, tn, twist, vector3, Generator, Rng, ROUND_TRIP_TYPES};

fn yaml(ty: &str, text: &str) -> Value {
    from_yaml(set(), &tn(ty), text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn yaml_err(ty: &str, text: &str) -> DynError {
    match from_yaml(set(), &tn(ty), text) {
        Ok(v) => panic!("{text:?} was accepted as {v:?}"),
        Err(e) => e,
    }
}

#[test]
fn ros2_topic_pub_arguments() {
    let t = "geometry_msgs/msg/Twist";
    assert_eq!(
        yaml(t, "{linear: {x: 0.1}, angular: {z: -0.3}}"),
        twist(0.1, -0.3)
    );
    assert_eq!(
        yaml(t, "linear:\n  x: 0.1\nangular:\n  z: -0.3\n"),
        twist(0.1, -0.3)
    );
    assert_eq!(yaml(t, "{linear: {x: 1}}"), twist(1.0, 0.0));
    assert_eq!(yaml(t, ""), twist(0.0, 0.0));
    assert_eq!(yaml(t, "{}"), twist(0.0, 0.0));

    let st = "std_msgs/msg/String";
    assert_eq!(yaml(st, "data: hello"), string_msg("hello"));
    assert_eq!(yaml(st, "data: 'hi'"), string_msg("hi"));
    assert_eq!(
        yaml(st, "{data: \"tab\\tthere\"}"),
        string_msg("tab\tthere")
    );
    assert_eq!(yaml(st, "data: 123"), string_msg("123"));
    assert_eq!(
        yaml(st, "{data: 'Hello World: 1'}"),
        string_msg("Hello World: 1")
    );

    let req = "std_srvs/srv/SetBool_Request";
    assert_eq!(
        yaml(req, "{data: true}"),
        s(vec![("data", Value::Bool(true))])
    );
    assert_eq!(
        yaml(req, "data: false"),
        s(vec![("data", Value::Bool(false))])
    );

    let js = "sensor_msgs/msg/JointState";
    let value = yaml(js, "{name: [a, b], position: [1.0, 2], effort: [-0.5]}");
    let names = Value::Array(vec![Value::String("a".into()), Value::String("b".into())]);
    assert_eq!(field(&value, "name"), Some(&names));
    assert_eq!(
        field(&value, "position"),
        Some(&Value::Array(vec![Value::Float(1.0), Value::Float(2.0)]))
    );
    assert_eq!(field(&value, "velocity"), Some(&Value::Array(vec![])));
    assert_eq!(
        field(&value, "header.frame_id"),
        Some(&Value::String(String::new()))
    );
    let block = yaml(
        js,
        "header:\n  stamp: {sec: 3}\n  frame_id: base\nname:\n- a\n- b\nposition:\n  - 1.0\n  - 2\n\
         effort: [-0.5]\n",
    );
    assert_eq!(field(&block, "header.stamp.sec"), Some(&Value::Int(3)));
    assert_eq!(field(&block, "name"), Some(&names));
    assert_eq!(field(&block, "position"), field(&value, "position"));

    let ev = "test_msgs/msg/Everything";
    let value = yaml(
        ev,
        "{u64: 18446744073709551615, i8: -0x80, by: A, c: 7, raw: [0, 255], f32: 0.1}",
    );
    assert_eq!(field(&value, "u64"), Some(&Value::UInt(u64::MAX)));
    assert_eq!(field(&value, "i8"), Some(&Value::Int(-128)));
    assert_eq!(field(&value, "by"), Some(&Value::UInt(65)));
    assert_eq!(field(&value, "raw"), Some(&Value::Bytes(vec![0, 255])));
    assert_eq!(field(&value, "f32"), Some(&Value::Float(0.1)));
}

/// A `float32` holds the number the user typed, or the definition's default, until it is
/// encoded, as rclpy keeps the Python float in the field: `topic pub` then prints
/// `float32_value=0.123456789` where rclpy does, and the bytes hold the `float32` it rounds to.
#[test]
fn float32_keeps_the_typed_digits_until_encoded() {
    let ev = tn("test_msgs/msg/Everything");
    for typed in [
        "0.123456789",
        "0.10000000149011612",
        "1.401298464324817e-45",
        "0.1",
    ] {
        let value = yaml(
            "test_msgs/msg/Everything",
            &format!("{{f32: {typed}, f32s: [{typed}]}}"),
        );
        let x: f64 = typed.parse().unwrap();
        assert_eq!(field(&value, "f32"), Some(&Value::Float(x)), "{typed}");
        let bytes = encode(set(), &ev, &value, Endianness::Little).unwrap();
        let back = decode(set(), &ev, &bytes).unwrap();
        let rounded = Value::Float(f64::from(x as f32));
        assert_eq!(field(&back, "f32"), Some(&rounded), "{typed}");
        assert_eq!(field(&back, "f32s"), Some(&Value::Array(vec![rounded])));
    }
    let error = yaml_err("test_msgs/msg/Everything", "{f32: 3.5e38}");
    assert!(matches!(error, DynError::OutOfRange { .. }), "{error:?}");

    let mut set = InterfaceSet::new();
    set.add_source(
        "typed_msgs",
        InterfaceKind::Msg,
        "Defaults",
        "float32 x 0.123456789\nfloat32[2] xs [0.1, 0.2]\n",
        "Defaults.msg",
    )
    .unwrap();
    let defaults = default_value(&set, &tn("typed_msgs/msg/Defaults")).unwrap();
    assert_eq!(field(&defaults, "x"), Some(&Value::Float(0.123456789)));
    assert_eq!(
        field(&defaults, "xs"),
        Some(&Value::Array(vec![Value::Float(0.1), Value::Float(0.2)]))
    );
}

/// YAML that `ros2 topic pub` (PyYAML) reads beyond plain flow and block style: block scalars,
/// the `!!str` tag, folded multi-line scalars; and what roslite refuses instead.
#[test]
fn multi_line_and_tagged_message_text() {
    let st = "std_msgs/msg/String";
    assert_eq!(
        yaml(st, "data: |\n  two\n  lines\n"),
        string_msg("two\nlines\n")
    );
    assert_eq!(
        yaml(st, "data: >-\n  one\n  line\n"),
        string_msg("one line")
    );
    assert_eq!(yaml(st, "data: !!str 5"), string_msg("5"));
    assert_eq!(yaml(st, "data: 'a\n\n  b'"), string_msg("a\nb"));
    assert_eq!(
        yaml(st, "# comment\n---\ndata: x  # trailing\n...\n"),
        string_msg("x")
    );
    // Block scalars are strings, never numbers, as in PyYAML.
    let err = yaml_err("std_msgs/msg/Int32", "data: |-\n  5\n");
    assert_message(&err, &["expects int32 but got string \"5\""]);
    let err = yaml_err(st, "data: &x hi");
    assert_message(&err, &["line 1, column 7", "anchors and aliases"]);
    let err = yaml_err(st, "data: hi\n---\ndata: ho\n");
    assert_message(&err, &["line 2", "exactly one message"]);
    let err = yaml_err(st, "data:\n\t hi\n");
    assert_message(&err, &["line 2", "tabs"]);
}

fn assert_message(err: &DynError, needles: &[&str]) {
    let text = err.to_string();
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
}

#[test]
fn yaml_errors_say_what_and_how_to_fix() {
    let err = yaml_err(
        "geometry_msgs/msg/Twist",
        "{linear: {x: 1}, angluar: {z: 1}}",
    );
    assert!(
        matches!(&err, DynError::UnknownField { field, known, .. }
        if field == "angluar" && known == &["linear", "angular"]),
        "{err:?}"
    );
    assert_message(
        &err,
        &[
            "`angluar`",
            "geometry_msgs/msg/Twist",
            "did you mean `angular`",
            "linear, angular",
        ],
    );

    let err = yaml_err("geometry_msgs/msg/Twist", "{linear: {w: 1}}");
    assert!(
        matches!(&err, DynError::UnknownField { field, .. } if field == "linear.w"),
        "{err:?}"
    );
    assert_message(&err, &["geometry_msgs/msg/Vector3", "x, y, z"]);

    let err = yaml_err("geometry_msgs/msg/Twist", "{linear: {x: fast}}");
    assert_eq!(
        err,
        DynError::TypeMismatch {
            field: "linear.x".into(),
            expected: "float64".into(),
            found: "string \"fast\"".into()
        }
    );
    assert_message(
        &err,
        &[
            "field `linear.x` expects float64 but got string \"fast\"",
            "number",
        ],
    );

    let err = yaml_err("geometry_msgs/msg/Twist", "{linear: 5}");
    assert_message(
        &err,
        &[
            "`linear` expects geometry_msgs/msg/Vector3 but got integer 5",
            "mapping",
        ],
    );
    let err = yaml_err("sensor_msgs/msg/JointState", "{position: 1.0}");
    assert_message(&err, &["`position` expects float64[]", "list"]);
    let err = yaml_err("sensor_msgs/msg/JointState", "{position: [1.0, x]}");
    assert_message(&err, &["`position[1]` expects float64"]);
    let err = yaml_err("std_msgs/msg/Int32", "{data: 1.5}");
    assert_message(&err, &["expects int32 but got number 1.5"]);
    let err = yaml_err("std_msgs/msg/Bool", "data: 'true'");
    assert_message(
        &err,
        &["expects bool but got string \"true\"", "true or false"],
    );
    let err = yaml_err("std_msgs/msg/String", "data:");
    assert_message(&err, &["expects string but got no value"]);

    let err = yaml_err("std_msgs/msg/UInt8", "{data: 300}");
    assert_eq!(
        err,
        DynError::OutOfRange {
            field: "data".into(),
            expected: "uint8".into(),
            found: "300".into()
        }
    );
    assert_message(
        &err,
        &[
            "field `data` = 300 is out of range for uint8",
            "from 0 to 255",
        ],
    );
    let err = yaml_err("std_msgs/msg/Int8", "{data: -129}");
    assert_message(&err, &["-129", "from -128 to 127"]);
    let err = yaml_err("std_msgs/msg/UInt64", "{data: -1}");
    assert_message(&err, &["out of range for uint64"]);
    let err = yaml_err("std_msgs/msg/Float32", "{data: 1e39}");
    assert_message(&err, &["1e39 is out of range for float32"]);
    // A numeral beyond f64 is refused, not read as infinity; `.inf` is infinity.
    let err = yaml_err("std_msgs/msg/Float64", "{data: 1e400}");
    assert_message(
        &err,
        &[
            "field `data` = 1e400 is out of range for float64",
            "1.7976931348623157e308",
            ".inf",
        ],
    );
    let err = yaml_err("std_msgs/msg/Float32", "{data: -1e400}");
    assert_message(&err, &["-1e400 is out of range for float32"]);
    assert_eq!(
        yaml("std_msgs/msg/Float64", "{data: -.inf}"),
        s(vec![("data", Value::Float(f64::NEG_INFINITY))])
    );

    let long = "n".repeat(257);
    let err = yaml_err(
        "rmw_dds_common/msg/NodeEntitiesInfo",
        &format!("{{node_name: {long}}}"),
    );
    assert!(
        matches!(&err, DynError::StringTooLong { field, len: 257, chars: 257, bound: 256, .. }
        if field == "node_name"),
        "{err:?}"
    );
    assert_message(
        &err,
        &[
            "field `node_name` holds 257 bytes of UTF-8 (257 characters), over the bound of \
             string<=256",
            "shorten it to at most 256 bytes",
        ],
    );
    let err = yaml_err("test_msgs/msg/Everything", "{bstrs: [ab, abcd]}");
    assert_message(&err, &["`bstrs[1]` holds 4 bytes of UTF-8"]);
    // rclpy would send these 3 characters in a string<=3; roslite says why it does not.
    let err = yaml_err("test_msgs/msg/Everything", "{bstrs: [äöü]}");
    assert_message(
        &err,
        &[
            "`bstrs[0]` holds 6 bytes of UTF-8 (3 characters), over the bound of string<=3",
            "as rclcpp counts it (rclpy counts characters)",
        ],
    );
    let err = yaml_err("test_msgs/msg/Everything", "{bseq: [1, 2, 3, 4, 5]}");
    assert_message(&err, &["`bseq` is too long for uint8[<=4]: length 5"]);
    let err = yaml_err("test_msgs/msg/Everything", "{arr: [1, 2]}");
    assert_message(
        &err,
        &["`arr` is the fixed-size array int16[3] but was given 2 elements"],
    );
    let err = yaml_err("test_msgs/msg/Everything", "{bws: ab😀}");
    assert_message(
        &err,
        &[
            "`bws` holds 4 UTF-16 code units (3 characters), over the bound of wstring<=3",
            "outside the Basic Multilingual Plane takes two",
        ],
    );

    let err = yaml_err(
        "geometry_msgs/msg/Twist",
        "linear:\n  x: 0.1\n  y: [1, 2\nangular: {}\n",
    );
    assert!(matches!(err, DynError::Yaml { line: 4, .. }), "{err:?}");
    assert_message(&err, &["invalid YAML at line 4", "expected ',' or ']'"]);
    let err = yaml_err("geometry_msgs/msg/Twist", "{linear: {x: 0.1}");
    assert_message(&err, &["line 1", "never closed; add '}'"]);
    let err = yaml_err("geometry_msgs/msg/Twist", "linear:\n  x: 0.1\n   y: 0.2\n");
    assert_message(&err, &["line 3", "indentation"]);
}

fn joint_state() -> Value {
    let stamp = s(vec![("sec", Value::Int(1)), ("nanosec", Value::UInt(500))]);
    let header = s(vec![
        ("stamp", stamp),
        ("frame_id", Value::String("base".into())),
    ]);
    let floats = |xs: &[f64]| Value::Array(xs.iter().map(|&x| Value::Float(x)).collect());
    s(vec![
        ("header", header),
        (
            "name",
            Value::Array(vec![
                Value::String("joint1".into()),
                Value::String("joint2".into()),
            ]),
        ),
        ("position", floats(&[1.5, -0.25])),
        ("velocity", floats(&[])),
        ("effort", floats(&[0.1])),
    ])
}

#[test]
fn echo_format_twist() {
    let out = to_yaml(
        set(),
        &tn("geometry_msgs/msg/Twist"),
        &twist(0.08, -0.3),
        &YamlOptions::default(),
    );
    let expected = "\
linear:
  x: 0.08
  y: 0.0
  z: 0.0
angular:
  x: 0.0
  y: 0.0
  z: -0.3
";
    assert_eq!(out, expected);
    let flow = YamlOptions {
        flow_style: true,
        ..YamlOptions::default()
    };
    let out = to_yaml(
        set(),
        &tn("geometry_msgs/msg/Twist"),
        &twist(0.08, -0.3),
        &flow,
    );
    assert_eq!(
        out,
        "{linear: {x: 0.08, y: 0.0, z: 0.0}, angular: {x: 0.0, y: 0.0, z: -0.3}}\n"
    );
}

#[test]
fn echo_format_joint_state() {
    let ty = tn("sensor_msgs/msg/JointState");
    let out = to_yaml(set(), &ty, &joint_state(), &YamlOptions::default());
    let expected = "\
header:
  stamp:
    sec: 1
    nanosec: 500
  frame_id: base
name:
- joint1
- joint2
position:
- 1.5
- -0.25
velocity: []
effort:
- 0.1
";
    assert_eq!(out, expected);

    let no_arr = YamlOptions {
        no_arr: true,
        ..YamlOptions::default()
    };
    let expected = "\
header:
  stamp:
    sec: 1
    nanosec: 500
  frame_id: base
name: '<sequence type: string, length: 2>'
position: '<sequence type: double, length: 2>'
velocity: '<sequence type: double, length: 0>'
effort: '<sequence type: double, length: 1>'
";
    assert_eq!(to_yaml(set(), &ty, &joint_state(), &no_arr), expected);

    let short = YamlOptions {
        no_str: true,
        truncate_length: Some(1),
        ..YamlOptions::default()
    };
    let expected = "\
header:
  stamp:
    sec: 1
    nanosec: 500
  frame_id: '<string length: <4>>'
name:
- '<string length: <6>>'
- '...'
position:
- 1.5
- '...'
velocity: []
effort:
- 0.1
";
    assert_eq!(to_yaml(set(), &ty, &joint_state(), &short), expected);

    let truncated = YamlOptions {
        truncate_length: Some(3),
        ..YamlOptions::default()
    };
    let out = to_yaml(set(), &ty, &joint_state(), &truncated);
    assert!(
        out.contains("  frame_id: bas...\nname:\n- joi...\n- joi...\n"),
        "{out}"
    );

    let flow = YamlOptions {
        flow_style: true,
        ..YamlOptions::default()
    };
    assert_eq!(
        to_yaml(set(), &ty, &joint_state(), &flow),
        "{header: {stamp: {sec: 1, nanosec: 500}, frame_id: base}, name: [joint1, joint2], \
         position: [1.5, -0.25], velocity: [], effort: [0.1]}\n"
    );
}

#[test]
fn echo_format_details() {
    let opts = YamlOptions::default();
    let out = to_yaml(
        set(),
        &tn("std_msgs/msg/String"),
        &string_msg("Hello World: 1"),
        &opts,
    );
    assert_eq!(out, "data: 'Hello World: 1'\n");
    let out = to_yaml(set(), &tn("std_msgs/msg/String"), &string_msg(""), &opts);
    assert_eq!(out, "data: ''\n");
    let out = to_yaml(set(), &tn("std_msgs/msg/Empty"), &s(vec![]), &opts);
    assert_eq!(out, "{}\n");
    // A `byte` prints as the character with its code (rclpy holds it as `bytes`), a `char` or
    // `uint8` as a number; float32 prints the double it widens to.
    let mut value = default_value(set(), &tn("test_msgs/msg/Everything")).unwrap();
    let Value::Struct(fields) = &mut value else {
        unreachable!()
    };
    for (name, v) in fields.iter_mut() {
        match name.as_str() {
            "by" => *v = Value::UInt(65),
            "c" => *v = Value::UInt(66),
            "raw" => *v = Value::Bytes(vec![0, b'a']),
            "f32" => *v = Value::Float(f64::from(0.1f32)),
            "points" => *v = Value::Array(vec![vector3(1.0, 2.0, 3.0)]),
            _ => {}
        }
    }
    let out = to_yaml(set(), &tn("test_msgs/msg/Everything"), &value, &opts);
    for line in [
        "\nby: A\n",
        "\nc: 66\n",
        "\nraw:\n- \"\\0\"\n- a\n",
        "\nf32: 0.10000000149011612\n",
        "\npoints:\n- x: 1.0\n  y: 2.0\n  z: 3.0\n",
        "\nchars:\n- 0\n- 0\n",
        "\nempties: []\n",
        "\ns: ''\n",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    let no_arr = YamlOptions {
        no_arr: true,
        ..YamlOptions::default()
    };
    let out = to_yaml(set(), &tn("test_msgs/msg/Everything"), &value, &no_arr);
    for line in [
        "\narr: '<array type: int16[3]>'\n",
        "\nbseq: '<sequence type: uint8[4], length: 0>'\n",
        "\nraw: '<sequence type: octet, length: 2>'\n",
        "\nchars: '<array type: uint8[2]>'\n",
        "\npoints: '<sequence type: geometry_msgs/msg/Point[2], length: 1>'\n",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
}

#[test]
fn echo_output_reads_back_as_the_same_message() {
    let mut rng = Rng(0x5151_2024_0bad_f00d);
    for name in ROUND_TRIP_TYPES {
        let ty = tn(name);
        for round in 0..20 {
            let value = Generator {
                rng: &mut rng,
                yaml_safe: true,
            }
            .message(&ty);
            for flow_style in [false, true] {
                let opts = YamlOptions {
                    flow_style,
                    ..YamlOptions::default()
                };
                let text = to_yaml(set(), &ty, &value, &opts);
                let back = from_yaml(set(), &ty, &text)
                    .unwrap_or_else(|e| panic!("{name} round {round}: {e}\n{text}"));
                assert_eq!(back, value, "{name} round {round}:\n{text}");
            }
        }
    }
}

#[test]
fn field_paths_and_types() {
    let value = joint_state();
    assert_eq!(
        field(&value, "header.stamp.nanosec"),
        Some(&Value::UInt(500))
    );
    assert_eq!(field(&value, "position[1]"), Some(&Value::Float(-0.25)));
    assert_eq!(field(&value, "header.nope"), None);
    let ty = tn("sensor_msgs/msg/JointState");
    let header = field_type(set(), &ty, "header").unwrap();
    assert_eq!(header.base, BaseType::Named(tn("std_msgs/msg/Header")));
    let position = field_type(set(), &ty, "position[0]").unwrap();
    assert_eq!(position.base, BaseType::Primitive(Primitive::Float64));
    assert_eq!(position.collection, Collection::Single);
    let err = field_type(set(), &ty, "header.stmp").unwrap_err();
    assert_message(
        &err,
        &["`header.stmp`", "did you mean `stamp`", "stamp, frame_id"],
    );
    // A sub-message prints with its own type.
    let stamp = field(&value, "header.stamp").unwrap();
    let out = to_yaml(
        set(),
        &tn("builtin_interfaces/msg/Time"),
        stamp,
        &YamlOptions::default(),
    );
    assert_eq!(out, "sec: 1\nnanosec: 500\n");
}
