//! Parser tests: one per grammar feature, then one per error class. Error tests compare the
//! whole message, so each one pins the file, the line and what was expected.

use super::*;
use crate::ast::Literal;

const FILE: &str = "pkg/msg/Test.msg";

fn msg(text: &str) -> MessageSpec {
    match parse_interface("pkg", InterfaceKind::Msg, "Test", text, FILE) {
        Ok(Interface::Message(m)) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn err(kind: InterfaceKind, text: &str) -> String {
    let file = format!("pkg/{0}/Test.{0}", kind.as_str());
    match parse_interface("pkg", kind, "Test", text, &file) {
        Ok(i) => panic!("expected an error, parsed {i:?}"),
        Err(e) => e.to_string(),
    }
}

fn msg_err(text: &str) -> String {
    err(InterfaceKind::Msg, text)
}

fn ty(base: BaseType, collection: Collection) -> FieldType {
    FieldType { base, collection }
}

fn prim(p: Primitive) -> BaseType {
    BaseType::Primitive(p)
}

fn tn(s: &str) -> TypeName {
    TypeName::parse(s).unwrap()
}

fn default_of(text: &str) -> Literal {
    msg(text).fields[0].default.clone().expect("a default")
}

// ---- grammar features -------------------------------------------------------------------

#[test]
fn comments_blank_lines_and_line_numbers() {
    let m = msg("# file comment\n\n  # indented comment\nint32 a # trailing\n\n\tuint8\tb\t\r\n");
    let names: Vec<(&str, usize)> = m.fields.iter().map(|f| (f.name.as_str(), f.line)).collect();
    assert_eq!(names, [("a", 4), ("b", 6)]);
    assert!(m.constants.is_empty());
    assert!(msg("").fields.is_empty());
    assert!(msg("# only a comment").fields.is_empty());
    assert_eq!(
        msg("\u{feff}int32 bom_first\r\nint32 crlf\r\n")
            .fields
            .len(),
        2
    );
}

#[test]
fn every_primitive_keyword() {
    let all = [
        ("bool", Primitive::Bool),
        ("byte", Primitive::Byte),
        ("char", Primitive::Char),
        ("float32", Primitive::Float32),
        ("float64", Primitive::Float64),
        ("int8", Primitive::Int8),
        ("uint8", Primitive::Uint8),
        ("int16", Primitive::Int16),
        ("uint16", Primitive::Uint16),
        ("int32", Primitive::Int32),
        ("uint32", Primitive::Uint32),
        ("int64", Primitive::Int64),
        ("uint64", Primitive::Uint64),
    ];
    let text: String = all.iter().map(|(k, _)| format!("{k} f_{k}\n")).collect();
    let m = msg(&text);
    for ((keyword, p), field) in all.iter().zip(&m.fields) {
        assert_eq!(field.name, format!("f_{keyword}"));
        assert_eq!(field.ty, ty(prim(*p), Collection::Single));
    }
}

#[test]
fn strings_and_bounds() {
    let m = msg("string a\nwstring b\nstring<=10 c\nwstring<=3 d\n");
    let bases: Vec<&BaseType> = m.fields.iter().map(|f| &f.ty.base).collect();
    assert_eq!(
        bases,
        [
            &BaseType::String { bound: None },
            &BaseType::WString { bound: None },
            &BaseType::String { bound: Some(10) },
            &BaseType::WString { bound: Some(3) },
        ]
    );
}

#[test]
fn arrays_and_sequences() {
    let m = msg("int32[3] a\nfloat64[<=4] b\nuint8[] c\nstring<=5[<=7] d\nstring[2] e\n");
    let types: Vec<FieldType> = m.fields.iter().map(|f| f.ty.clone()).collect();
    assert_eq!(
        types,
        [
            ty(prim(Primitive::Int32), Collection::Array(3)),
            ty(prim(Primitive::Float64), Collection::BoundedSequence(4)),
            ty(prim(Primitive::Uint8), Collection::UnboundedSequence),
            ty(
                BaseType::String { bound: Some(5) },
                Collection::BoundedSequence(7)
            ),
            ty(BaseType::String { bound: None }, Collection::Array(2)),
        ]
    );
}

#[test]
fn nested_types_resolve_to_full_names() {
    let m = msg("geometry_msgs/Point p\nOther o\nHeader h\nstd_msgs/Header h2\nOther[] os\n");
    let named: Vec<(TypeName, Collection)> = m
        .fields
        .iter()
        .map(|f| match &f.ty.base {
            BaseType::Named(t) => (t.clone(), f.ty.collection),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        named,
        [
            (tn("geometry_msgs/msg/Point"), Collection::Single),
            (tn("pkg/msg/Other"), Collection::Single),
            (tn("std_msgs/msg/Header"), Collection::Single),
            (tn("std_msgs/msg/Header"), Collection::Single),
            (tn("pkg/msg/Other"), Collection::UnboundedSequence),
        ]
    );
}

#[test]
fn scalar_defaults() {
    assert_eq!(default_of("bool a true"), Literal::Bool(true));
    assert_eq!(default_of("bool a False"), Literal::Bool(false));
    assert_eq!(default_of("bool a 1"), Literal::Bool(true));
    assert_eq!(default_of("bool a 0 # off"), Literal::Bool(false));
    assert_eq!(default_of("byte a 255"), Literal::Int(255));
    assert_eq!(default_of("char a 100"), Literal::Int(100));
    assert_eq!(default_of("int8 a -128"), Literal::Int(-128));
    assert_eq!(
        default_of("uint64 a 18446744073709551615"),
        Literal::Int(u64::MAX.into())
    );
    assert_eq!(
        default_of("int64 a -9223372036854775808"),
        Literal::Int(i64::MIN.into())
    );
    assert_eq!(default_of("int32 a 0x7fffffff"), Literal::Int(0x7fff_ffff));
    assert_eq!(default_of("int32 a -0x10"), Literal::Int(-16));
    assert_eq!(default_of("uint16 a 0o17"), Literal::Int(15));
    assert_eq!(default_of("uint8 a 0b1010_1010"), Literal::Int(0xaa));
    assert_eq!(default_of("uint32 a 1_000"), Literal::Int(1000));
    assert_eq!(default_of("int32 a +7"), Literal::Int(7));
    assert_eq!(default_of("float32 a 1.125"), Literal::Float(1.125));
    assert_eq!(default_of("float64 a -3e2"), Literal::Float(-300.0));
    assert_eq!(default_of("float64 a 1"), Literal::Float(1.0));
    assert_eq!(default_of("float64 a .5"), Literal::Float(0.5));
    assert!(matches!(default_of("float64 a inf"), Literal::Float(f) if f.is_infinite()));
    assert!(matches!(default_of("float64 a nan"), Literal::Float(f) if f.is_nan()));
}

#[test]
fn string_defaults() {
    let s = |text: &str| default_of(text);
    let lit = |v: &str| Literal::String(v.to_owned());
    assert_eq!(s("string a \"Hello world!\""), lit("Hello world!"));
    assert_eq!(s("string a 'single quoted'"), lit("single quoted"));
    assert_eq!(s("string a \"it's\""), lit("it's"));
    assert_eq!(s("string a 'say \"hi\"'"), lit("say \"hi\""));
    assert_eq!(s("string a 'it\\'s'"), lit("it's"));
    assert_eq!(s("string a \"a \\\"b\\\"\""), lit("a \"b\""));
    assert_eq!(s("string a \"tab\\tnl\\nbs\\\\\""), lit("tab\tnl\nbs\\"));
    assert_eq!(s("string a \"\\x41\\u00e9\\101\\q\""), lit("A\u{e9}A\\q"));
    assert_eq!(s("string a \"  spaces kept  \""), lit("  spaces kept  "));
    assert_eq!(
        s("string a \"# not a comment\" # a comment"),
        lit("# not a comment")
    );
    assert_eq!(
        s("string a unquoted words  # comment"),
        lit("unquoted words")
    );
    assert_eq!(s("string a x=y"), lit("x=y"));
    assert_eq!(s("string a \"\""), lit(""));
    assert_eq!(s("string<=5 a \"12345\""), lit("12345"));
    assert_eq!(s("wstring<=2 a \"\u{e9}\u{e9}\""), lit("\u{e9}\u{e9}"));
    assert_eq!(s("wstring a 'wide'"), lit("wide"));
}

#[test]
fn array_defaults() {
    let ints = |v: &[i128]| Literal::Array(v.iter().map(|&i| Literal::Int(i)).collect());
    let strs =
        |v: &[&str]| Literal::Array(v.iter().map(|s| Literal::String((*s).into())).collect());
    assert_eq!(default_of("int32[] a [1, 2, 3]"), ints(&[1, 2, 3]));
    assert_eq!(
        default_of("int32[3] a [-1,0x2 ,  3] # c"),
        ints(&[-1, 2, 3])
    );
    assert_eq!(default_of("int32[<=3] a [1]"), ints(&[1]));
    assert_eq!(default_of("int32[] a []"), ints(&[]));
    assert_eq!(default_of("int32[<=3] a [ ]"), ints(&[]));
    assert_eq!(
        default_of("bool[3] a [true, false, 1]"),
        Literal::Array(vec![
            Literal::Bool(true),
            Literal::Bool(false),
            Literal::Bool(true)
        ])
    );
    assert_eq!(
        default_of("float64[2] a [1.5, -2]"),
        Literal::Array(vec![Literal::Float(1.5), Literal::Float(-2.0)])
    );
    assert_eq!(
        default_of("string[] a [\"a\", 'b', c]"),
        strs(&["a", "b", "c"])
    );
    assert_eq!(
        default_of("string[] a [\"x, y\", 'z]', \"#\"] # c"),
        strs(&["x, y", "z]", "#"])
    );
    assert_eq!(
        default_of("string<=3[<=2] a ['abc', \"\"]"),
        strs(&["abc", ""])
    );
}

#[test]
fn constants() {
    let m = msg(concat!(
        "int32 DEC=-42\n",
        "uint8 HEX = 0xFF\n",
        "uint16 OCT=0o17 # comment\n",
        "int64 BIN=0b101\n",
        "bool T=true\n",
        "bool F=0\n",
        "float64 HALF=0.5\n",
        "string S=\"a # b\"\n",
        "string U=plain text # comment\n",
        "string E=\n",
        "wstring W='w'\n",
        "byte B=50\n",
        "char C=100\n",
        "int32 value\n",
    ));
    let values: Vec<(&str, &Literal, usize)> = m
        .constants
        .iter()
        .map(|c| (c.name.as_str(), &c.value, c.line))
        .collect();
    assert_eq!(
        values,
        [
            ("DEC", &Literal::Int(-42), 1),
            ("HEX", &Literal::Int(255), 2),
            ("OCT", &Literal::Int(15), 3),
            ("BIN", &Literal::Int(5), 4),
            ("T", &Literal::Bool(true), 5),
            ("F", &Literal::Bool(false), 6),
            ("HALF", &Literal::Float(0.5), 7),
            ("S", &Literal::String("a # b".into()), 8),
            ("U", &Literal::String("plain text".into()), 9),
            ("E", &Literal::String(String::new()), 10),
            ("W", &Literal::String("w".into()), 11),
            ("B", &Literal::Int(50), 12),
            ("C", &Literal::Int(100), 13),
        ]
    );
    assert_eq!(m.constants[0].ty, prim(Primitive::Int32));
    assert_eq!(m.constants[7].ty, BaseType::String { bound: None });
    assert_eq!(m.fields.len(), 1);
}

#[test]
fn service_parts_and_event() {
    let text = "# request\nint64 a\nint64 b\n---\n# response\nint64 sum\n";
    let Ok(Interface::Service(s)) = parse_interface("pkg", InterfaceKind::Srv, "Add", text, "f")
    else {
        panic!("not a service");
    };
    assert_eq!(s.name, tn("pkg/srv/Add"));
    assert_eq!(s.request.name, tn("pkg/srv/Add_Request"));
    assert_eq!(
        s.request.fields.iter().map(|f| f.line).collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(s.response.name, tn("pkg/srv/Add_Response"));
    assert_eq!(s.response.fields[0].line, 6);
    assert_eq!(s.event.name, tn("pkg/srv/Add_Event"));
    let event: Vec<(&str, FieldType)> = s
        .event
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.clone()))
        .collect();
    assert_eq!(
        event,
        [
            (
                "info",
                ty(
                    BaseType::Named(tn("service_msgs/msg/ServiceEventInfo")),
                    Collection::Single
                )
            ),
            (
                "request",
                ty(
                    BaseType::Named(tn("pkg/srv/Add_Request")),
                    Collection::BoundedSequence(1)
                )
            ),
            (
                "response",
                ty(
                    BaseType::Named(tn("pkg/srv/Add_Response")),
                    Collection::BoundedSequence(1)
                )
            ),
        ]
    );

    // Both sections may be empty.
    let Ok(Interface::Service(empty)) = parse_interface("pkg", InterfaceKind::Srv, "E", "---", "f")
    else {
        panic!("not a service");
    };
    assert!(empty.request.fields.is_empty() && empty.response.fields.is_empty());
}

#[test]
fn action_parts_match_rosidl() {
    let text = "int32 order\n---\nint32[] sequence\n---\nint32[] partial\n";
    let Ok(Interface::Action(a)) = parse_interface("pkg", InterfaceKind::Action, "Fib", text, "f")
    else {
        panic!("not an action");
    };
    let shape = |m: &MessageSpec| -> (String, Vec<(String, FieldType)>) {
        (
            m.name.to_string(),
            m.fields
                .iter()
                .map(|f| (f.name.clone(), f.ty.clone()))
                .collect(),
        )
    };
    let named = |s: &str| ty(BaseType::Named(tn(s)), Collection::Single);
    let uuid = || {
        (
            "goal_id".to_owned(),
            named("unique_identifier_msgs/msg/UUID"),
        )
    };
    assert_eq!(a.name, tn("pkg/action/Fib"));
    assert_eq!(a.goal.name, tn("pkg/action/Fib_Goal"));
    assert_eq!(a.result.name, tn("pkg/action/Fib_Result"));
    assert_eq!(a.feedback.fields[0].name, "partial");
    assert_eq!(a.send_goal.name, tn("pkg/action/Fib_SendGoal"));
    assert_eq!(
        shape(&a.send_goal.request),
        (
            "pkg/action/Fib_SendGoal_Request".into(),
            vec![uuid(), ("goal".into(), named("pkg/action/Fib_Goal"))]
        )
    );
    assert_eq!(
        shape(&a.send_goal.response),
        (
            "pkg/action/Fib_SendGoal_Response".into(),
            vec![
                (
                    "accepted".into(),
                    ty(prim(Primitive::Bool), Collection::Single)
                ),
                ("stamp".into(), named("builtin_interfaces/msg/Time")),
            ]
        )
    );
    assert_eq!(a.send_goal.event.name, tn("pkg/action/Fib_SendGoal_Event"));
    assert_eq!(a.get_result.name, tn("pkg/action/Fib_GetResult"));
    assert_eq!(
        shape(&a.get_result.request),
        ("pkg/action/Fib_GetResult_Request".into(), vec![uuid()])
    );
    assert_eq!(
        shape(&a.get_result.response),
        (
            "pkg/action/Fib_GetResult_Response".into(),
            vec![
                (
                    "status".into(),
                    ty(prim(Primitive::Int8), Collection::Single)
                ),
                ("result".into(), named("pkg/action/Fib_Result")),
            ]
        )
    );
    assert_eq!(
        a.get_result.event.fields[1].ty,
        ty(
            BaseType::Named(tn("pkg/action/Fib_GetResult_Request")),
            Collection::BoundedSequence(1)
        )
    );
    assert_eq!(
        shape(&a.feedback_message),
        (
            "pkg/action/Fib_FeedbackMessage".into(),
            vec![
                uuid(),
                ("feedback".into(), named("pkg/action/Fib_Feedback"))
            ]
        )
    );
}

// ---- errors -----------------------------------------------------------------------------

#[test]
fn error_missing_field_name() {
    assert_eq!(
        msg_err("int32 a\n\nfloat64\n"),
        "pkg/msg/Test.msg:3: expected a field name after type 'float64', found end of line"
    );
    assert_eq!(
        msg_err("float64 # x"),
        "pkg/msg/Test.msg:1: expected a field name after type 'float64', found a comment"
    );
    assert_eq!(
        msg_err("int32 =5"),
        "pkg/msg/Test.msg:1: expected a constant name between type 'int32' and '=', found '='"
    );
}

#[test]
fn error_unknown_type() {
    let e = msg_err("floot64 x");
    assert!(
        e.starts_with("pkg/msg/Test.msg:1: unknown type 'floot64': expected a primitive type"),
        "{e}"
    );
    assert!(
        e.contains("or a message type 'Type' or 'package/Type' in UpperCamelCase"),
        "{e}"
    );
    let e = msg_err("geometry_msgs/point p");
    assert!(
        e.starts_with("pkg/msg/Test.msg:1: invalid message name in type 'geometry_msgs/point'"),
        "{e}"
    );
    assert_eq!(
        msg_err("Geometry/Point p"),
        "pkg/msg/Test.msg:1: invalid package name 'Geometry' in type 'Geometry/Point': expected \
         lower_snake_case: a letter a-z, then a-z, 0-9 or '_', without '__' or a trailing '_'"
    );
    assert_eq!(
        msg_err("geometry_msgs/msg/Point p"),
        "pkg/msg/Test.msg:1: expected a message type written 'package/Type', found \
         'geometry_msgs/msg/Point' (write 'geometry_msgs/Point')"
    );
    assert_eq!(
        msg_err("a/b/c/D p"),
        "pkg/msg/Test.msg:1: expected a message type written 'package/Type', found 'a/b/c/D'"
    );
    assert_eq!(
        msg_err("time t"),
        "pkg/msg/Test.msg:1: 'time' is a ROS 1 built-in type: expected \
         'builtin_interfaces/Time' in ROS 2"
    );
    assert!(msg_err("duration d").contains("expected 'builtin_interfaces/Duration'"));
}

#[test]
fn error_bad_array_suffix() {
    assert_eq!(
        msg_err("int32[3 a"),
        "pkg/msg/Test.msg:1: expected one array suffix '[N]', '[<=N]' or '[]' at the end of type \
         'int32[3', found '[3'"
    );
    assert!(msg_err("int32[2][2] a").contains("expected one array suffix"));
    assert_eq!(
        msg_err("int32[x] a"),
        "pkg/msg/Test.msg:1: expected an array size in type 'int32[x]': a positive integer N in \
         '[N]' or '[<=N]', at most 4294967295, found 'x'"
    );
    assert!(msg_err("int32[0] a").ends_with("found '0'"));
    // Found by the msg_parser fuzz target: an array of 8e16 chars was accepted, and its default
    // value then asked for 8e16 bytes. CDR lengths are 32-bit.
    assert!(msg_err("char[082222222222222222] dx").contains("more than CDR can carry"));
    assert!(msg_err("int32[<=4294967296] a").contains("more than CDR can carry"));
    assert!(msg_err("string<=4294967296 s").contains("more than CDR can carry"));
    assert!(msg_err("int32[<=0] a").ends_with("found '0'"));
    assert!(msg_err("int32[<=] a").ends_with("found ''"));
    assert!(msg_err("int32[+3] a").ends_with("found '+3'"));
}

#[test]
fn error_bad_string_bound() {
    assert_eq!(
        msg_err("string<=0 s"),
        "pkg/msg/Test.msg:1: expected a positive integer string bound after '<=' in type \
         'string<=0', at most 4294967295, found '0'"
    );
    assert!(msg_err("wstring<=abc[] s")
        .contains("in type 'wstring<=abc[]', at most 4294967295, found 'abc'"));
}

#[test]
fn error_bad_field_name() {
    let rule = "expected lower_snake_case: a letter a-z, then a-z, 0-9 or '_', without '__' or a \
                trailing '_'";
    for name in ["Foo", "1abc", "a__b", "trailing_", "_lead", "has-dash"] {
        assert_eq!(
            msg_err(&format!("int32 ok\nint32 {name}")),
            format!("pkg/msg/Test.msg:2: invalid field name '{name}': {rule}")
        );
    }
}

#[test]
fn error_bad_constant_name() {
    for name in ["lower", "A__B", "TRAILING_", "_X", "9X"] {
        assert_eq!(
            msg_err(&format!("int32 {name}=1")),
            format!(
                "pkg/msg/Test.msg:1: invalid constant name '{name}': expected UPPER_SNAKE_CASE: \
                 a letter A-Z, then A-Z, 0-9 or '_', without '__' or a trailing '_'"
            )
        );
    }
}

#[test]
fn error_bad_file_names() {
    let e = parse_interface("Bad-pkg", InterfaceKind::Msg, "Good", "", "f.msg").unwrap_err();
    assert_eq!(e.line, 0);
    assert!(e
        .to_string()
        .starts_with("f.msg:0: invalid package name 'Bad-pkg': expected lower_snake_case"));
    let e = parse_interface("pkg", InterfaceKind::Msg, "bad_name", "", "f.msg").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.msg:0: invalid interface name 'bad_name': expected UpperCamelCase: a letter A-Z, then \
         only letters and digits"
    );
}

#[test]
fn error_constant_type() {
    for ty in ["int32[2]", "string<=4", "pkg/Other", "Header"] {
        assert_eq!(
            msg_err(&format!("{ty} C=1")),
            format!(
                "pkg/msg/Test.msg:1: constant 'C' has type '{ty}': expected a primitive type, \
                 'string' or 'wstring' (constants cannot be arrays, bounded strings or messages)"
            )
        );
    }
}

#[test]
fn error_constant_without_value() {
    assert_eq!(
        msg_err("int32 X=\n"),
        "pkg/msg/Test.msg:1: value of constant 'X': expected a value after '=' for type 'int32', \
         found end of line"
    );
    assert!(msg_err("bool B= # c").ends_with("found a comment"));
}

#[test]
fn error_default_on_message_type() {
    assert_eq!(
        msg_err("geometry_msgs/Point p 0"),
        "pkg/msg/Test.msg:1: field 'p' has message type 'geometry_msgs/Point', which cannot have a \
         default value: expected end of line or a comment after the field name"
    );
}

#[test]
fn error_integer_out_of_range() {
    assert_eq!(
        msg_err("int32 a\nint8 b 128"),
        "pkg/msg/Test.msg:2: default value of field 'b': expected an integer from -128 to 127 for \
         type 'int8', found 128"
    );
    assert!(msg_err("uint8 B=0x100")
        .ends_with("expected an integer from 0 to 255 for type 'uint8', found 0x100"));
    assert!(msg_err("uint32 a -1").contains("expected an integer from 0 to 4294967295"));
    assert!(msg_err("byte a 256").contains("from 0 to 255 for type 'byte'"));
    assert!(msg_err("char a -1").contains("from 0 to 255 for type 'char'"));
    assert!(msg_err("uint64 a 18446744073709551616").contains("from 0 to 18446744073709551615"));
    assert!(msg_err("int64 a 99999999999999999999999999999999999999999").contains("found 9999"));
    assert!(msg_err("int8[] a [1, 200]").contains("from -128 to 127 for type 'int8', found 200"));
}

#[test]
fn error_not_a_number_or_bool() {
    assert_eq!(
        msg_err("int32 a 1.5"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected an integer (decimal, 0x, 0o or \
         0b) for type 'int32', found '1.5'"
    );
    for bad in ["0x", "1__0", "_1", "0xfg", "--1", "one"] {
        assert!(
            msg_err(&format!("int32 a {bad}")).contains("expected an integer (decimal"),
            "{bad}"
        );
    }
    assert_eq!(
        msg_err("bool b yes"),
        "pkg/msg/Test.msg:1: default value of field 'b': expected 'true', 'false', '1' or '0' for \
         type 'bool', found 'yes'"
    );
    assert_eq!(
        msg_err("float32 F=1,5"),
        "pkg/msg/Test.msg:1: value of constant 'F': expected a floating-point number for type \
         'float32', found '1,5'"
    );
}

#[test]
fn error_string_too_long() {
    assert_eq!(
        msg_err("string<=3 s \"four\""),
        "pkg/msg/Test.msg:1: default value of field 's': expected at most 3 bytes for type \
         'string<=3', found \"four\" (4 bytes)"
    );
    // Bytes, not characters: two two-byte characters exceed a bound of 3.
    assert!(msg_err("string<=3 s '\u{e9}\u{e9}'").contains("(4 bytes)"));
    assert!(msg_err("string<=2[] s ['ok', toolong]").contains("found \"toolong\" (7 bytes)"));
    assert!(msg_err("wstring<=1 s 'ab'")
        .contains("expected at most 1 UTF-16 units for type 'wstring<=1'"));
}

#[test]
fn error_array_default_size() {
    assert_eq!(
        msg_err("int32[<=2] a [1, 2, 3]"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected at most 2 elements for type \
         'int32[<=2]', found 3"
    );
    assert_eq!(
        msg_err("int32[3] a [1, 2]"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected exactly 3 elements for type \
         'int32[3]', found 2"
    );
}

#[test]
fn error_array_default_syntax() {
    assert_eq!(
        msg_err("int32[] a 1, 2"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected '[' to start an array value for \
         type 'int32[]', found '1, 2'"
    );
    assert_eq!(
        msg_err("int32[] a [1, 2"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected ',' or ']' after array element \
         2, found end of line"
    );
    assert_eq!(
        msg_err("int32[] a [1, 2, ]"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected an array element, found ']'"
    );
    assert!(msg_err("int32[] a [1 # c").ends_with("after array element 1, found a comment"));
    assert!(msg_err("string[] a ['x' 'y']").ends_with("after array element 1, found ''y']'"));
    assert_eq!(
        msg_err("int32[] a [1] 2"),
        "pkg/msg/Test.msg:1: default value of field 'a': expected end of line or a comment after \
         the closing ']', found '2'"
    );
}

#[test]
fn error_bad_quoting() {
    assert_eq!(
        msg_err("string s \"open"),
        "pkg/msg/Test.msg:1: default value of field 's': expected a closing \" to end the string \
         \"open, found end of line"
    );
    assert!(msg_err("string s 'it\\'").contains("expected a closing ' to end the string"));
    assert_eq!(
        msg_err("string s \"a\" b"),
        "pkg/msg/Test.msg:1: default value of field 's': expected end of line or a comment after \
         the string, found 'b'"
    );
    assert_eq!(
        msg_err("string S=\"\\x4\""),
        "pkg/msg/Test.msg:1: value of constant 'S': expected 2 hex digits naming a Unicode scalar \
         value after '\\x', found '\\x4'"
    );
    assert!(msg_err("string s '\\ud800'").contains("after '\\u', found '\\ud800'"));
}

#[test]
fn error_duplicate_names() {
    assert_eq!(
        msg_err("int32 a\nint8 b\nint8 a"),
        "pkg/msg/Test.msg:3: duplicate field name 'a': expected a name not already used on line 1"
    );
    assert_eq!(
        msg_err("int32 A=1\n\nint32 A=2"),
        "pkg/msg/Test.msg:3: duplicate constant name 'A': expected a name not already used on \
         line 1"
    );
    // The same name in request and response is fine: they are different messages.
    parse_interface(
        "pkg",
        InterfaceKind::Srv,
        "S",
        "int32 a\n---\nint32 a\n",
        "f",
    )
    .unwrap();
}

#[test]
fn error_separators() {
    assert_eq!(
        msg_err("int32 a\n---\nint32 b"),
        "pkg/msg/Test.msg:2: unexpected '---' in a .msg file: expected a field, a constant or a \
         comment ('---' only separates the parts of .srv and .action files)"
    );
    assert_eq!(
        err(InterfaceKind::Srv, "int32 a\nint32 b\n"),
        "pkg/srv/Test.srv:2: expected a '---' line separating the request from the response, \
         found end of file"
    );
    assert_eq!(
        err(InterfaceKind::Srv, "---\nint32 a\n---\n"),
        "pkg/srv/Test.srv:3: expected exactly one '---' in a .srv file (between request and \
         response), found a second one"
    );
    assert_eq!(
        err(InterfaceKind::Action, "int32 a\n---\nint32 b\n"),
        "pkg/action/Test.action:3: expected two '---' lines separating goal, result and feedback, \
         found 1 before end of file"
    );
    assert_eq!(
        err(InterfaceKind::Action, "---\n---\n---\n"),
        "pkg/action/Test.action:3: expected exactly two '---' in a .action file (goal --- result \
         --- feedback), found a third one"
    );
    // Errors inside a later section keep the file's line numbering.
    assert!(err(InterfaceKind::Srv, "int32 a\n---\n\nint32\n").starts_with("pkg/srv/Test.srv:4: "));
}

#[test]
fn sizes_and_bounds_beyond_cdr_lengths_are_refused() {
    // The largest 32-bit counts are types; one more names the line and the limit.
    for text in [
        "int32[4294967295] a\n",
        "int32[<=4294967295] a\n",
        "string<=4294967294 s\n",
    ] {
        msg(text);
    }
    for (text, what) in [
        ("int8 x\nint32[4294967296] a\n", "array size 4294967296"),
        ("int8 x\nint32[<=18446744073709551615] a\n", "array size"),
        ("int8 x\nstring<=4294967295 s\n", "string bound 4294967295"),
        (
            "int8 x\nwstring<=99999999999[3] s\n",
            "string bound 99999999999",
        ),
    ] {
        let e = msg_err(text);
        assert!(e.starts_with("pkg/msg/Test.msg:2: "), "{text}: {e}");
        assert!(
            e.contains(what) && e.contains("more than CDR can carry"),
            "{e}"
        );
    }
}
