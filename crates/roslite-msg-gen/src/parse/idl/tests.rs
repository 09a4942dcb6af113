//! IDL reader tests: what each construct becomes, then one test per refusal, each comparing
//! the whole message so that line, column and wording are pinned.

use super::*;
use crate::ast::{Literal, Primitive};

fn parse(kind: InterfaceKind, name: &str, text: &str) -> Result<Interface, String> {
    let file = format!("pkg/{}/{name}.idl", kind.as_str());
    parse_idl("pkg", kind, name, text, &file).map_err(|e| e.to_string())
}

fn msg(text: &str) -> MessageSpec {
    match parse(InterfaceKind::Msg, "Test", text) {
        Ok(Interface::Message(m)) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn msg_err(text: &str) -> String {
    match parse(InterfaceKind::Msg, "Test", text) {
        Ok(i) => panic!("expected an error, parsed {i:?}"),
        Err(e) => e,
    }
}

/// `body` inside `module pkg { module msg { ... }; };`, which puts it on line 3 onwards.
fn in_module(body: &str) -> String {
    format!("module pkg {{\n  module msg {{\n{body}\n  }};\n}};\n")
}

fn single(base: BaseType) -> FieldType {
    FieldType {
        base,
        collection: Collection::Single,
    }
}

fn prim(p: Primitive) -> BaseType {
    BaseType::Primitive(p)
}

#[test]
fn every_type_spelling() {
    let m = msg(&in_module(
        "typedef double double__3[3];
typedef other_pkg::msg::Point other_pkg__msg__Point;
typedef other_pkg__msg__Point other_pkg__msg__Point__2[2];
typedef sequence<int32, 4> four_ints;
struct Test {
  boolean b; octet o; int8 i8; uint8 u8;
  short s; unsigned short us; int16 i16; uint16 u16;
  long l; unsigned long ul; int32 i32; uint32 u32;
  long long ll; unsigned long long ull; int64 i64; uint64 u64;
  float f; double d;
  string str; string<5> bstr; wstring wstr; wstring<3> bwstr;
  sequence<int32> seq; sequence<string<2>, 7> bseq;
  double__3 arr; int16 arr2[4];
  other_pkg::msg::Point point; ::other_pkg::msg::Point rooted;
  other_pkg__msg__Point__2 points; sequence<other_pkg::msg::Point> point_seq;
  four_ints via_typedef;
  long x, y, z[2];
};",
    ));
    let point = || BaseType::Named(TypeName::new("other_pkg", InterfaceKind::Msg, "Point"));
    let expected: Vec<(&str, FieldType)> = vec![
        ("b", single(prim(Primitive::Bool))),
        ("o", single(prim(Primitive::Byte))),
        ("i8", single(prim(Primitive::Int8))),
        ("u8", single(prim(Primitive::Uint8))),
        ("s", single(prim(Primitive::Int16))),
        ("us", single(prim(Primitive::Uint16))),
        ("i16", single(prim(Primitive::Int16))),
        ("u16", single(prim(Primitive::Uint16))),
        ("l", single(prim(Primitive::Int32))),
        ("ul", single(prim(Primitive::Uint32))),
        ("i32", single(prim(Primitive::Int32))),
        ("u32", single(prim(Primitive::Uint32))),
        ("ll", single(prim(Primitive::Int64))),
        ("ull", single(prim(Primitive::Uint64))),
        ("i64", single(prim(Primitive::Int64))),
        ("u64", single(prim(Primitive::Uint64))),
        ("f", single(prim(Primitive::Float32))),
        ("d", single(prim(Primitive::Float64))),
        ("str", single(BaseType::String { bound: None })),
        ("bstr", single(BaseType::String { bound: Some(5) })),
        ("wstr", single(BaseType::WString { bound: None })),
        ("bwstr", single(BaseType::WString { bound: Some(3) })),
        (
            "seq",
            FieldType {
                base: prim(Primitive::Int32),
                collection: Collection::UnboundedSequence,
            },
        ),
        (
            "bseq",
            FieldType {
                base: BaseType::String { bound: Some(2) },
                collection: Collection::BoundedSequence(7),
            },
        ),
        (
            "arr",
            FieldType {
                base: prim(Primitive::Float64),
                collection: Collection::Array(3),
            },
        ),
        (
            "arr2",
            FieldType {
                base: prim(Primitive::Int16),
                collection: Collection::Array(4),
            },
        ),
        ("point", single(point())),
        ("rooted", single(point())),
        (
            "points",
            FieldType {
                base: point(),
                collection: Collection::Array(2),
            },
        ),
        (
            "point_seq",
            FieldType {
                base: point(),
                collection: Collection::UnboundedSequence,
            },
        ),
        (
            "via_typedef",
            FieldType {
                base: prim(Primitive::Int32),
                collection: Collection::BoundedSequence(4),
            },
        ),
        ("x", single(prim(Primitive::Int32))),
        ("y", single(prim(Primitive::Int32))),
        (
            "z",
            FieldType {
                base: prim(Primitive::Int32),
                collection: Collection::Array(2),
            },
        ),
    ];
    let found: Vec<(&str, FieldType)> = m
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.clone()))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(m.fields[0].line, 8, "lines are those of the member names");
    assert!(m.fields.iter().all(|f| !f.key && f.default.is_none()));
}

#[test]
fn keys_defaults_constants_and_annotations() {
    let m = msg(
        r#"// A comment, an include and annotations rosidl does not act on.
#include "other_pkg/msg/Point.idl"
module pkg {
  module msg {
    module Test_Constants {
      @verbatim (language="comment", text="the answer")
      const int32 ANSWER = 42;
      const double HALF = -.5;
      const string GREETING = "hi" " there";
      const boolean YES = TRUE;
      const uint64 BIG = 0xFFFFFFFFFFFFFFFF;
    };
    @verbatim (language="comment", text=
      "a struct" "\n"
      "on two lines")
    @final
    struct Test {
      @key long id;
      @key(TRUE) @unit (value="m") @range(min=0, max=10) @optional
      string<8> name;
      /* block */ @default (value=-3) int8 small;
      @default (value=1.5) float ratio;
      @default (value="it's \"quoted\"") string text;
      @default (value=TRUE) boolean flag;
      @default (value="(1, 2, 3)") int16 three[3];
      @default (value="[True, False]") sequence<boolean, 2> two;
      @default (value="('a', \"b'c\")") sequence<string> names;
      @my::custom(1) double other;
    };
  };
};
"#,
    );
    let keys: Vec<&str> = m
        .fields
        .iter()
        .filter(|f| f.key)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(keys, ["id", "name"]);
    assert!(m.is_keyed());
    let defaults: Vec<(&str, Option<Literal>)> = m
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.default.clone()))
        .collect();
    assert_eq!(
        defaults,
        [
            ("id", None),
            ("name", None),
            ("small", Some(Literal::Int(-3))),
            ("ratio", Some(Literal::Float(1.5))),
            ("text", Some(Literal::String("it's \"quoted\"".into()))),
            ("flag", Some(Literal::Bool(true))),
            (
                "three",
                Some(Literal::Array(vec![
                    Literal::Int(1),
                    Literal::Int(2),
                    Literal::Int(3)
                ]))
            ),
            (
                "two",
                Some(Literal::Array(vec![
                    Literal::Bool(true),
                    Literal::Bool(false)
                ]))
            ),
            (
                "names",
                Some(Literal::Array(vec![
                    Literal::String("a".into()),
                    Literal::String("b'c".into())
                ]))
            ),
            ("other", None),
        ]
    );
    let constants: Vec<(&str, BaseType, Literal, usize)> = m
        .constants
        .iter()
        .map(|c| (c.name.as_str(), c.ty.clone(), c.value.clone(), c.line))
        .collect();
    assert_eq!(
        constants,
        [
            ("ANSWER", prim(Primitive::Int32), Literal::Int(42), 7),
            ("HALF", prim(Primitive::Float64), Literal::Float(-0.5), 8),
            (
                "GREETING",
                BaseType::String { bound: None },
                Literal::String("hi there".into()),
                9
            ),
            ("YES", prim(Primitive::Bool), Literal::Bool(true), 10),
            (
                "BIG",
                prim(Primitive::Uint64),
                Literal::Int(u64::MAX.into()),
                11
            ),
        ]
    );
}

#[test]
fn the_empty_structure_placeholder_is_an_empty_message() {
    let m = msg(&in_module(
        "struct Test {\n  uint8 structure_needs_at_least_one_member;\n};",
    ));
    assert!(m.fields.is_empty());
    // A real member of that name and another type stays.
    let m = msg(&in_module(
        "struct Test {\n  int32 structure_needs_at_least_one_member;\n};",
    ));
    assert_eq!(m.fields.len(), 1);
}

#[test]
fn services_and_actions_get_their_synthesized_types() {
    let srv = parse(
        InterfaceKind::Srv,
        "Add",
        "module pkg { module srv {
           struct Add_Request { int64 a; int64 b; };
           struct Add_Response { int64 sum; };
         }; };",
    )
    .unwrap();
    let Interface::Service(srv) = srv else {
        panic!("expected a service")
    };
    assert_eq!(srv.name.to_string(), "pkg/srv/Add");
    assert_eq!(srv.request.fields.len(), 2);
    assert_eq!(srv.response.fields[0].name, "sum");
    assert_eq!(srv.event.name.to_string(), "pkg/srv/Add_Event");

    let action = parse(
        InterfaceKind::Action,
        "Fib",
        "module pkg { module action {
           struct Fib_Goal { int32 order; };
           struct Fib_Result { sequence<int32> sequence; };
           struct Fib_Feedback { sequence<int32> sequence; };
         }; };",
    )
    .unwrap();
    let Interface::Action(action) = action else {
        panic!("expected an action")
    };
    assert_eq!(action.result.fields[0].name, "sequence");
    assert_eq!(
        action.feedback_message.name.to_string(),
        "pkg/action/Fib_FeedbackMessage"
    );
}

#[test]
fn refusals_name_line_column_and_what_to_do() {
    let cases: &[(&str, &str)] = &[
        (
            "struct Test { char c; };",
            "3:15: IDL 'char' is not supported: roslite does not implement the IDL character \
             types; a .msg 'char' is written 'uint8' in IDL, which is what rosidl generates \
             for it",
        ),
        (
            "struct Test { wchar c; };",
            "3:15: IDL 'wchar' is not supported",
        ),
        (
            "struct Test { long double d; };",
            "3:15: 'long double' is not supported",
        ),
        (
            "struct Test { fixed<5, 2> f; };",
            "3:15: IDL 'fixed' is not supported",
        ),
        (
            "struct Test { long m[2][3]; };",
            "3:24: 'm' is a multi-dimensional array, which rosidl does not support",
        ),
        (
            "typedef long pair[2];\nstruct Test { pair m[3]; };",
            "4:20: 'm' is an array of int32[2], a multi-dimensional array",
        ),
        (
            "struct Test { sequence<sequence<long>> s; };",
            "3:24: a sequence of sequences is not supported by rosidl",
        ),
        (
            "typedef long pair[2];\nstruct Test { sequence<pair> s; };",
            "4:15: a sequence of int32[2] (an array or sequence) is not supported",
        ),
        (
            "struct Test { string<N> s; };",
            "3:22: expected a string bound as a literal integer, found the name 'N'",
        ),
        (
            "struct Test { string<0> s; };",
            "3:22: expected a string bound: a positive integer, found 0",
        ),
        (
            "struct Test { long a[4294967296]; };",
            "3:22: an array size of 4294967296 is more than CDR can carry",
        ),
        (
            "struct Test { Point p; };",
            "3:15: unknown type 'Point': expected a primitive type, string, wstring, \
             sequence<...>, a typedef declared in this file, or a message written \
             'package::msg::Name'",
        ),
        (
            "enum Color { RED, GREEN };\nstruct Test { Color c; };",
            "4:15: unknown type 'Color': it is an enum",
        ),
        (
            "struct Test { pkg::srv::Other_Request r; };",
            "3:15: expected a message type 'package::msg::Name', found \
             'pkg::srv::Other_Request'",
        ),
        (
            "struct Test { long a; long a; };",
            "3:28: duplicate member name 'a': expected a name not already used on line 3",
        ),
        (
            "struct Test { @key(FALSE) long a; };",
            "3:20: '@key(FALSE)' is not supported",
        ),
        (
            "struct Test { @default(5) long a; };",
            "3:15: expected '@default(value=...)'",
        ),
        (
            "struct Test { @default(value=300) uint8 a; };",
            "3:30: default value of member 'a': expected an integer from 0 to 255 for type \
             'uint8', found 300",
        ),
        (
            "struct Test { @default(value=\"(1, 2)\") long a[3]; };",
            "3:30: default value of member 'a': expected exactly 3 elements for type \
             'int32[3]', found 2",
        ),
        (
            "struct Test { @default(value=5) long a[3]; };",
            "3:30: expected the default of array member 'a' as a string holding a Python tuple",
        ),
        (
            "struct Test { @default(value=1 + 2) long a; };",
            "3:32: expected a single value, found the operator '+'",
        ),
        (
            "struct Test { @default(value=true) boolean a; };",
            "3:30: IDL booleans are written in capitals: expected 'TRUE', found 'true'",
        ),
        (
            "struct Test { @default(value=1) pkg::msg::Other o; };",
            "3:30: member 'o' has the message type pkg/Other, which cannot have a default value",
        ),
        ("struct Test { };", "3:8: struct 'Test' has no members"),
        (
            "struct Test { long a; }",
            "4:3: expected ';' after the closing '}' or declaration, found '}'",
        ),
        (
            "struct Other { long a; };",
            "3:8: unexpected struct 'Other': the message file Test.idl defines struct 'Test' \
             only (the file name says which)",
        ),
        (
            "const long LOOSE = 1;\nstruct Test { long a; };",
            "3:12: constant 'LOOSE' is in module 'pkg::msg': rosidl attaches constants to a \
             struct only from module 'pkg::msg::<Struct>_Constants'",
        ),
        (
            "module Test_Constants { const uint8 TOO_BIG = 256; };\nstruct Test { long a; };",
            "3:47: value of constant 'TOO_BIG': expected an integer from 0 to 255",
        ),
        (
            "union U switch (long) { case 1: long a; };",
            "3:1: unions are not supported",
        ),
        (
            "struct Test : Base { long a; };",
            "3:13: struct 'Test' inherits from another struct",
        ),
        (
            "struct Test { long a = 5; };",
            "3:22: expected ';' or ',' after the member name, found '='",
        ),
    ];
    let mut wrong = Vec::new();
    for (body, expected) in cases {
        let error = msg_err(&in_module(body));
        let expected = format!("pkg/msg/Test.idl:{expected}");
        if !error.starts_with(&expected) {
            wrong.push(format!("{body}\n  expected {expected}\n  found    {error}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn refusals_about_the_file_as_a_whole() {
    assert_eq!(
        msg_err("module other { module msg { struct Test { long a; }; }; };"),
        "pkg/msg/Test.idl:1:36: struct 'Test' is in module 'other::msg': expected module \
         'pkg::msg' (the package and the folder the file is in)"
    );
    assert_eq!(
        msg_err("// nothing here\n"),
        "pkg/msg/Test.idl:2:1: expected a module, found end of file (an .idl file defines its \
         types inside 'module <package> { module <msg|srv|action> { ... }; };')"
    );
    assert_eq!(
        msg_err("module pkg { module msg { typedef long x; }; };"),
        "pkg/msg/Test.idl:1:48: expected struct 'Test' in module 'pkg::msg': the message file \
         Test.idl defines struct 'Test' only"
    );
    let srv = parse(
        InterfaceKind::Srv,
        "Add",
        "module pkg { module srv { struct Add_Request { long a; }; }; };",
    )
    .unwrap_err();
    assert!(
        srv.ends_with(
            "expected struct 'Add_Response' in module 'pkg::srv': the service file Add.idl \
             defines structs 'Add_Request' and 'Add_Response'"
        ),
        "{srv}"
    );
    assert!(msg_err("#pragma once\n").starts_with("pkg/msg/Test.idl:1:1: unsupported preprocessor"));
    assert!(
        msg_err("module pkg { module msg {\n  struct Test { string s; };\n  \"open\n")
            .starts_with("pkg/msg/Test.idl:3:3: expected a closing '\"'")
    );
    let bad_package = parse_idl("Pkg", InterfaceKind::Msg, "Test", "", "x.idl").unwrap_err();
    assert_eq!(
        bad_package.to_string(),
        format!("x.idl:0: invalid package name 'Pkg': expected {LOWER_SNAKE_RULE}")
    );
}

#[test]
fn typedefs_may_repeat_but_not_change() {
    let m = msg(&in_module(
        "typedef long a3[3];\ntypedef long a3[3];\nstruct Test { a3 x; };",
    ));
    assert_eq!(m.fields[0].ty.collection, Collection::Array(3));
    assert_eq!(
        msg_err(&in_module(
            "typedef long a3[3];\ntypedef short a3[3];\nstruct Test { a3 x; };"
        )),
        "pkg/msg/Test.idl:4:15: typedef 'a3' is declared again as another type: int16[3] \
         here, int32[3] before"
    );
    assert!(msg_err(&in_module(
        "typedef b a;\ntypedef a b;\nstruct Test { a x; };"
    ))
    .contains("typedef 'a' leads back to itself"));
}

#[test]
fn hostile_nesting_is_an_error_not_a_stack_overflow() {
    let default = |value: String| {
        in_module(&format!(
            "struct Test {{ @default(value={value}) long a; }};"
        ))
    };
    for text in [
        default(format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000))),
        default("-".repeat(100_000) + "1"),
        "module a { ".repeat(100_000),
        in_module(&format!(
            "struct Test {{ {}long> x; }};",
            "sequence<".repeat(100_000)
        )),
    ] {
        let error = msg_err(&text);
        assert!(error.contains("nested more than 64 levels deep"), "{error}");
    }
}
