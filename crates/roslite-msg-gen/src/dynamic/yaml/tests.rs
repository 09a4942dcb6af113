use super::*;

/// The structure of a node without line numbers: `{k: v}`, `[a, b]`, quoted as `'t'`.
fn shape(node: &Node) -> String {
    match node {
        Node::Scalar {
            text, quoted: true, ..
        } => format!("'{text}'"),
        Node::Scalar { text, .. } => text.clone(),
        Node::Seq { items, .. } => {
            format!(
                "[{}]",
                items.iter().map(shape).collect::<Vec<_>>().join(", ")
            )
        }
        Node::Map { entries, .. } => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}: {}", k.text, shape(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn parsed(text: &str) -> String {
    match parse(text) {
        Ok(Some(node)) => shape(&node),
        Ok(None) => "<empty>".to_owned(),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn flow_and_block_agree() {
    let expected = "{linear: {x: 0.1}, angular: {z: -0.3}}";
    assert_eq!(parsed("{linear: {x: 0.1}, angular: {z: -0.3}}"), expected);
    assert_eq!(parsed("linear:\n  x: 0.1\nangular:\n  z: -0.3\n"), expected);
    assert_eq!(
        parsed("{linear: {x: 0.1},\n angular: {z: -0.3},}"),
        expected
    );
    assert_eq!(
        parsed(r#"{"linear":{"x":0.1},"angular":{"z":-0.3}}"#),
        expected
    );
}

#[test]
fn block_sequences_indented_or_not() {
    assert_eq!(parsed("name:\n- a\n- b\nx: 1\n"), "{name: [a, b], x: 1}");
    assert_eq!(
        parsed("name:\n  - a\n  - b\nx: 1\n"),
        "{name: [a, b], x: 1}"
    );
    assert_eq!(parsed("- - a\n  - b\n- c"), "[[a, b], c]");
    assert_eq!(parsed("a:\nb: 1"), "{a: , b: 1}");
}

#[test]
fn compact_mappings_in_sequences() {
    assert_eq!(
        parsed("points:\n- x: 1\n  y: 2\n-\n  x: 3\n- {x: 4}\n"),
        "{points: [{x: 1, y: 2}, {x: 3}, {x: 4}]}"
    );
}

#[test]
fn quoting() {
    assert_eq!(
        parsed(r#"{a: 'it''s', b: "tab\there \u00e9", c: "x: y", d: hello world, e: a:b}"#),
        "{a: 'it's', b: 'tab\there é', c: 'x: y', d: hello world, e: a:b}"
    );
    assert_eq!(
        parsed("a: 'one\n  two\n\n  three'"),
        "{a: 'one two\nthree'}"
    );
    assert_eq!(parsed("a: \"x\\\n   y\""), "{a: 'xy'}");
    assert_eq!(parsed("data: 'hi'"), "{data: 'hi'}");
}

#[test]
fn comments_and_markers() {
    assert_eq!(parsed("--- # start\ndata: 5 # five\n...\n"), "{data: 5}");
    assert_eq!(parsed("  # nothing\n\n"), "<empty>");
    assert_eq!(parsed(""), "<empty>");
    assert_eq!(parsed("data: a#b"), "{data: a#b}");
    assert_eq!(parsed("--- {a: 1}"), "{a: 1}");
    assert_eq!(parsed("a: 1\r\nb: 2\r\n"), "{a: 1, b: 2}");
}

#[test]
fn errors_carry_lines() {
    let cases = [
        ("{a: 1", 1, "never closed"),
        ("a: 1\n b: 2", 2, "indentation"),
        ("a: [1, 2\nb: 3", 2, "expected ',' or ']'"),
        ("a: 'x", 1, "never closed"),
        ("a: 1\na: 2", 2, "twice"),
        ("a: b: c", 1, "same line"),
        ("a: &x 1", 1, "anchors"),
        ("a:\n\tb: 1", 2, "tabs"),
        ("a: 1\n---\nb: 2", 2, "several"),
        ("a: - 1", 1, "list cannot start"),
        ("{a: 1 b: 2}", 1, "expected ',' or '}'"),
        ("{\"a\" 1}", 1, "expected `:`"),
        ("[a: 1]", 1, "braces"),
        ("a: \"\\q\"", 1, "unknown escape"),
    ];
    for (text, line, needle) in cases {
        match parse(text) {
            Err(DynError::Yaml {
                line: l, message, ..
            }) => {
                assert_eq!(l, line, "{text:?}: {message}");
                assert!(message.contains(needle), "{text:?}: {message}");
            }
            other => panic!("{text:?} gave {other:?}"),
        }
    }
}

#[test]
fn block_scalars_are_strings() {
    // PyYAML reads `|` and `>` as strings, never as numbers or bools.
    assert_eq!(parsed("a: |\n  x\n  y\n"), "{a: 'x\ny\n'}");
    assert_eq!(parsed("a: >-\n  5\n  6\n"), "{a: '5 6'}");
    assert_eq!(parsed("a: |-\n  true\n"), "{a: 'true'}");
    assert_eq!(parsed("a: two\n  words\nb: 1"), "{a: two words, b: 1}");
}

#[test]
fn tags_and_tabs() {
    assert_eq!(
        parsed("{a: !!str 5, b: 'x\ty', c: a\tb}"),
        "{a: '5', b: 'x\ty', c: a\tb}"
    );
    assert_eq!(parsed("a: 1\t# one\n\t\nb: [1,\t2]"), "{a: 1, b: [1, 2]}");
    let cases = [
        ("a: !!int 5", 1, "tags"),
        ("a:\n  b: 1\n\tc: 2", 3, "tabs cannot indent"),
        ("a:\t1", 1, "write a space"),
        ("a: [1]\nb: *x", 2, "aliases"),
        ("a: &x [1]", 1, "anchors"),
        ("a: 1\n---\n", 2, "several"),
        ("? [a]\n: 1", 1, "keys are field names"),
        ("a: 1\n- b", 2, "list item `-` among the keys"),
        ("a:\n  b: 1\n c: 2", 3, "indentation"),
        ("a: 'x' y", 1, "quote the whole value"),
    ];
    for (text, line, needle) in cases {
        match parse(text) {
            Err(DynError::Yaml {
                line: l, message, ..
            }) => {
                assert_eq!(l, line, "{text:?}: {message}");
                assert!(message.contains(needle), "{text:?}: {message}");
            }
            other => panic!("{text:?} gave {other:?}"),
        }
    }
}
