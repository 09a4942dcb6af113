use super::*;

fn block(text: &str) -> String {
    let mut out = String::new();
    string(
        text,
        Place {
            flow: false,
            key: false,
            indent: 2,
        },
        &mut out,
    );
    out
}

fn flowed(text: &str) -> String {
    let mut out = String::new();
    string(
        text,
        Place {
            flow: true,
            key: false,
            indent: 4,
        },
        &mut out,
    );
    out
}

#[test]
fn floats_print_as_python_repr() {
    let cases = [
        (0.08, "0.08"),
        (-0.3, "-0.3"),
        (1.0, "1.0"),
        (100.5, "100.5"),
        (0.0001, "0.0001"),
        (0.00001, "1.0e-05"),
        (1.5e-7, "1.5e-07"),
        (1e15, "1000000000000000.0"),
        (1e16, "1.0e+16"),
        (1.2345678901234568e17, "1.2345678901234568e+17"),
        (f64::from(0.1f32), "0.10000000149011612"),
        (-0.0, "-0.0"),
        (f64::INFINITY, ".inf"),
        (f64::NEG_INFINITY, "-.inf"),
        (f64::NAN, ".nan"),
        (123456789.125, "123456789.125"),
    ];
    for (x, expected) in cases {
        assert_eq!(float_text(x), expected, "{x:e}");
    }
}

#[test]
fn string_styles_follow_pyyaml() {
    let cases = [
        ("hello", "hello"),
        ("hello world", "hello world"),
        ("", "''"),
        ("Hello World: 1", "'Hello World: 1'"),
        ("123", "'123'"),
        ("1.5", "'1.5'"),
        ("1e5", "1e5"),
        ("1.0e+5", "'1.0e+5'"),
        ("true", "'true'"),
        ("on", "'on'"),
        ("null", "'null'"),
        ("~", "'~'"),
        ("2024-01-31", "'2024-01-31'"),
        ("0x1F", "'0x1F'"),
        ("08", "08"),
        ("- a", "'- a'"),
        ("-a", "-a"),
        ("a #b", "'a #b'"),
        ("a#b", "a#b"),
        (" lead", "' lead'"),
        ("it's", "it's"),
        ("'quoted'", "'''quoted'''"),
        ("tab\there", "\"tab\\there\""),
        ("bell\x07", "\"bell\\a\""),
        ("caf\u{e9}", "caf\u{e9}"),
        ("\u{80}", "\"\\x80\""),
        ("...", "'...'"),
        ("<string length: <5>>", "'<string length: <5>>'"),
        ("a, b", "a, b"),
        ("[x]", "'[x]'"),
        ("base_link", "base_link"),
    ];
    for (text, expected) in cases {
        assert_eq!(block(text), expected, "{text:?}");
    }
    assert_eq!(flowed("a, b"), "'a, b'");
    assert_eq!(flowed("a:b"), "'a:b'");
    assert_eq!(flowed("hello"), "hello");
}

#[test]
fn multi_line_strings() {
    assert_eq!(block("a\nb"), "'a\n\n  b'");
    assert_eq!(block("a\n\nb"), "'a\n\n\n  b'");
    assert_eq!(block("a \nb"), "\"a \\nb\"");
    assert_eq!(block("a\n b"), "\"a\\n b\"");
}

#[test]
fn placeholders_use_idl_names() {
    let ty = |base, collection| FieldType { base, collection };
    let f64s = ty(
        BaseType::Primitive(Primitive::Float64),
        Collection::UnboundedSequence,
    );
    assert_eq!(
        placeholder(Some(&f64s), 5),
        "<sequence type: double, length: 5>"
    );
    let chars = ty(BaseType::Primitive(Primitive::Char), Collection::Array(16));
    assert_eq!(placeholder(Some(&chars), 16), "<array type: uint8[16]>");
    let named = ty(
        BaseType::Named(TypeName::parse("geometry_msgs/msg/Point").unwrap()),
        Collection::BoundedSequence(3),
    );
    assert_eq!(
        placeholder(Some(&named), 2),
        "<sequence type: geometry_msgs/msg/Point[3], length: 2>"
    );
}
