//! The YAML features `rcl_yaml_param_parser` meets in parameter files, each read as ROS 2
//! reads it or refused with an error that names the line (see the table in the module doc).

use super::*;
use crate::params::{OverrideError, Overrides, ParameterValue, ValueError};

/// The overrides a parameter file gives node `/n`.
fn file(text: &str) -> Result<Overrides, OverrideError> {
    let files = [("p.yaml".to_owned(), text.to_owned())];
    Overrides::from_sources(&files, &[], "/n")
}

/// The value of parameter `name` in a file that gives node `/n` the parameters `params`
/// (indented by four spaces under `ros__parameters`).
fn value(params: &str, name: &str) -> ParameterValue {
    let text = format!("n:\n  ros__parameters:\n{params}");
    let overrides = file(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    overrides
        .get(name)
        .unwrap_or_else(|| panic!("{text}: no '{name}'"))
        .clone()
}

fn string(text: &str) -> ParameterValue {
    ParameterValue::String(text.to_owned())
}

/// The error a file gives, which must name `line` (as `p.yaml:line:column:`) and contain
/// `needle`.
fn refused(text: &str, line: usize, needle: &str) {
    let e = file(text).expect_err(text).to_string();
    assert!(e.starts_with(&format!("p.yaml:{line}:")), "{text:?}: {e}");
    assert!(e.contains(needle), "{text:?}: {e}");
}

#[test]
fn flow_style() {
    let text = "n: {ros__parameters: {a: 1, b: [1, 2], c: {d: x, e: [true, false]}}}\n";
    let overrides = file(text).unwrap();
    assert_eq!(overrides.get("a"), Some(&ParameterValue::Integer(1)));
    assert_eq!(
        overrides.get("b"),
        Some(&ParameterValue::IntegerArray(vec![1, 2]))
    );
    assert_eq!(overrides.get("c.d"), Some(&string("x")));
    assert_eq!(
        overrides.get("c.e"),
        Some(&ParameterValue::BoolArray(vec![true, false]))
    );
    // A flow collection may span lines, with comments between its entries.
    let v = value("    l: [1.5,  # first\n        2.5]\n", "l");
    assert_eq!(v, ParameterValue::DoubleArray(vec![1.5, 2.5]));
}

#[test]
fn quoted_strings_and_escapes() {
    assert_eq!(value("    s: 'it''s \\n'\n", "s"), string("it's \\n"));
    assert_eq!(
        value("    s: \"a\\tb\\n\\u00e9\\x41\\\\\\\"\"\n", "s"),
        string("a\tb\néA\\\"")
    );
    // Quoted text is a string whatever it looks like, as is text tagged `!!str` (rcl's
    // `string_tag` test).
    assert_eq!(value("    s: '5'\n", "s"), string("5"));
    assert_eq!(value("    s: \"true\"\n", "s"), string("true"));
    assert_eq!(value("    s: !!str 12.5\n", "s"), string("12.5"));
    assert_eq!(value("    s: !!str yes\n", "s"), string("yes"));
    assert_eq!(value("    s: ''\n", "s"), string(""));
    // A quoted string may span lines; the break folds into a space.
    assert_eq!(value("    s: 'a\n      b'\n", "s"), string("a b"));
    assert_eq!(
        value("    a: [\"x\", '7']\n", "a"),
        ParameterValue::StringArray(vec!["x".into(), "7".into()])
    );
}

#[test]
fn multi_line_strings() {
    // `|` keeps the line breaks, `>` folds them; both end in one line break (clip chomping),
    // and a text that ends in a line break is no number or bool, so a string.
    assert_eq!(
        value("    s: |\n      line 1\n      line 2\n", "s"),
        string("line 1\nline 2\n")
    );
    assert_eq!(
        value("    s: >\n      one\n      two\n", "s"),
        string("one two\n")
    );
    assert_eq!(value("    s: |\n      5\n", "s"), string("5\n"));
    assert_eq!(
        value("    s: |+\n      x\n\n    t: 1\n", "s"),
        string("x\n\n")
    );
    // Stripped of the line break, a block scalar is typed like a plain one, as in rcl.
    assert_eq!(
        value("    s: |-\n      5\n", "s"),
        ParameterValue::Integer(5)
    );
    assert_eq!(
        value("    s: >-\n      true\n", "s"),
        ParameterValue::Bool(true)
    );
    assert_eq!(value("    s: |-\n      text\n", "s"), string("text"));
    // A plain scalar may continue on more indented lines, folded.
    assert_eq!(value("    s: two\n      words\n", "s"), string("two words"));
    // Nothing in the block is no value, as rcl's "No value".
    let e = file("n:\n  ros__parameters:\n    s: |\n    t: 1\n").unwrap_err();
    assert!(
        matches!(
            &e.problem,
            crate::params::OverrideProblem::Value {
                error: ValueError::Empty,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn comments() {
    let text =
        "# head\nn: # node\n  ros__parameters:  # here\n    # own line\n    a: 1 # one\n    \
                b: 'x # not a comment'\n    c: a#b\n";
    let overrides = file(text).unwrap();
    assert_eq!(overrides.get("a"), Some(&ParameterValue::Integer(1)));
    assert_eq!(overrides.get("b"), Some(&string("x # not a comment")));
    assert_eq!(overrides.get("c"), Some(&string("a#b")));
}

#[test]
fn anchors_are_ignored_and_aliases_refused() {
    // rcl ignores anchors and stops at an alias ("Will not support aliasing").
    assert_eq!(value("    a: &rate 5\n", "a"), ParameterValue::Integer(5));
    assert_eq!(
        value("    a: &list [1, 2]\n", "a"),
        ParameterValue::IntegerArray(vec![1, 2])
    );
    refused(
        "n:\n  ros__parameters:\n    a: &x 5\n    b: *x\n",
        4,
        "aliases",
    );
}

#[test]
fn several_documents_apply_in_order() {
    let text = "\
---
/**:
  ros__parameters:
    a: 1
    b: 1
...
---
n:
  ros__parameters:
    a: 2
---
# empty
---
other:
  ros__parameters:
    b: 3
";
    let overrides = file(text).unwrap();
    assert_eq!(overrides.get("a"), Some(&ParameterValue::Integer(2)));
    assert_eq!(overrides.get("b"), Some(&ParameterValue::Integer(1)));
    refused(
        "n:\n  ros__parameters: {a: 1}\n---\n- x\n",
        3,
        "several documents",
    );
    // One document alone keeps the layout error of `overrides`.
    let e = file("---\n- x\n").unwrap_err().to_string();
    assert!(e.contains("top level must be a mapping"), "{e}");
}

#[test]
fn tabs() {
    // Tabs cannot indent (YAML 1.2.2 §6.1), in rcl's libyaml as here.
    refused("n:\n\tros__parameters: {a: 1}\n", 2, "tabs cannot indent");
    refused("n:\n  ros__parameters:\n  \ta: 1\n", 3, "tabs");
    // saphyr-parser also refuses a tab right after `key:`, which libyaml takes.
    refused("n:\n  ros__parameters:\n    a:\t1\n", 3, "write a space");
    // Elsewhere a tab is text or a blank.
    assert_eq!(value("    s: 'a\tb'\n", "s"), string("a\tb"));
    assert_eq!(value("    s: a\tb\n", "s"), string("a\tb"));
    assert_eq!(
        value("    a: [1,\t2]\n", "a"),
        ParameterValue::IntegerArray(vec![1, 2])
    );
    assert_eq!(value("    a: 1\t# one\n", "a"), ParameterValue::Integer(1));
}

#[test]
fn types_as_rcl_reads_them() {
    let v = |text: &str| value(&format!("    v: {text}\n"), "v");
    assert_eq!(v("1"), ParameterValue::Integer(1));
    assert_eq!(v("-7"), ParameterValue::Integer(-7));
    assert_eq!(v("1.0"), ParameterValue::Double(1.0));
    assert_eq!(v("1e3"), ParameterValue::Double(1000.0));
    assert_eq!(v(".inf"), ParameterValue::Double(f64::INFINITY));
    // YAML 1.2's core schema knows only true/false; rcl also takes the YAML 1.1 words.
    for word in ["true", "True", "TRUE", "yes", "Yes", "on", "ON"] {
        assert_eq!(v(word), ParameterValue::Bool(true), "{word}");
    }
    for word in ["false", "False", "no", "NO", "off", "Off"] {
        assert_eq!(v(word), ParameterValue::Bool(false), "{word}");
    }
    assert_eq!(v("hello world"), string("hello world"));
    assert_eq!(v("http://x:80/y"), string("http://x:80/y"));
    assert_eq!(
        v("[a, 'b c']"),
        ParameterValue::StringArray(vec!["a".into(), "b c".into()])
    );
    assert_eq!(
        value("    v:\n    - 1.5\n    - 2.0\n", "v"),
        ParameterValue::DoubleArray(vec![1.5, 2.0])
    );
    let e = file("n:\n  ros__parameters:\n    v: [1, 1.5]\n").unwrap_err();
    assert!(e.to_string().contains("must share one type"), "{e}");
}

#[test]
fn line_endings_and_byte_order_mark() {
    let text = "\u{feff}n:\r\n  ros__parameters:\r\n    a: 1\r\n    s: \"x\r\n      y\"\r\n";
    let overrides = file(text).unwrap();
    assert_eq!(overrides.get("a"), Some(&ParameterValue::Integer(1)));
    assert_eq!(overrides.get("s"), Some(&string("x y")));
}

#[test]
fn errors_name_line_column_and_fix() {
    let cases = [
        (
            "n:\n  ros__parameters:\n    a: [1, 2\n",
            3,
            "'[' here is never closed; add ']'",
        ),
        (
            "n: {ros__parameters: {a: 1}\n",
            1,
            "'{' here is never closed",
        ),
        (
            "n:\n  ros__parameters:\n    a: 'open\n",
            3,
            "quoted string is never closed",
        ),
        (
            "n:\n  ros__parameters:\n    a: [1, 2\n    b: 3\n",
            4,
            "expected ',' or ']'",
        ),
        (
            "n:\n  ros__parameters:\n    a: 1\n      b: 2\n",
            4,
            "unexpected indentation",
        ),
        (
            "n:\n  ros__parameters:\n    a: b: c\n",
            3,
            "same line as its key",
        ),
        (
            "n:\n  ros__parameters:\n    a: - 1\n",
            3,
            "list cannot start",
        ),
        (
            "n:\n  ros__parameters:\n    a: 1\n   b: 2\n",
            4,
            "not indented like the keys",
        ),
        (
            "n:\n  ros__parameters:\n    a: 1\n    - b\n",
            4,
            "list item `-` among the keys",
        ),
        (
            "n:\n  ros__parameters:\n    a: 1\n    a: 2\n",
            4,
            "'a' appears twice",
        ),
        (
            "n:\n  ros__parameters:\n    a: \"\\q\"\n",
            3,
            "unknown escape",
        ),
        (
            "n:\n  ros__parameters:\n    a: !!int 5\n",
            3,
            "tag !!int is not supported",
        ),
        ("n:\n  ros__parameters:\n    a: [1]]\n", 3, "closes nothing"),
        (
            "n:\n  ros__parameters:\n    ? [a]\n    : 1\n",
            3,
            "cannot be a key",
        ),
        ("n:\n  ros__parameters:\n    a: @x\n", 3, "quote the value"),
    ];
    for (text, line, needle) in cases {
        refused(text, line, needle);
    }
}

#[test]
fn command_line_values() {
    assert_eq!(
        parse_inline("").unwrap(),
        Yaml::Scalar {
            text: String::new(),
            quoted: false
        }
    );
    let v = |text: &str| ParameterValue::from_yaml(text).unwrap();
    assert_eq!(v("/dev/ttyUSB0"), string("/dev/ttyUSB0"));
    assert_eq!(v("!!str 5"), string("5"));
    assert_eq!(v("[1, 2]  # two"), ParameterValue::IntegerArray(vec![1, 2]));
    assert_eq!(ParameterValue::from_yaml("a: b"), Err(ValueError::Mapping));
    let Err(ValueError::Yaml(e)) = ParameterValue::from_yaml("*x") else {
        panic!("an alias must be refused")
    };
    assert_eq!(e.line, 1);
    assert!(e.message.contains("aliases"), "{e}");
}
