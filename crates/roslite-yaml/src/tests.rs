//! The reading layer under two sets of rules, one like each caller's: the tree and its
//! positions, what each rule decides, and where each problem is reported.

use super::*;

/// Like parameter files.
const LENIENT: Rules = Rules {
    anchors: Anchors::Ignore,
    block_scalars: BlockScalars::TypedWhenTrimmed,
    documents: Documents::Several,
    flow_list_pairs: FlowListPairs::Read,
    max_nesting: 64,
};

/// Like message text.
const STRICT: Rules = Rules {
    anchors: Anchors::Refuse,
    block_scalars: BlockScalars::Strings,
    documents: Documents::One,
    flow_list_pairs: FlowListPairs::Refuse,
    max_nesting: 128,
};

fn at(line: usize, column: usize) -> Position {
    Position { line, column }
}

fn refused(text: &str, rules: &Rules) -> Error {
    match read(text, rules) {
        Ok(documents) => panic!("{text:?} was read: {documents:?}"),
        Err(e) => e,
    }
}

/// The one document of `text`.
fn root(text: &str, rules: &Rules) -> Node {
    let documents = read(text, rules).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let [document] = <[Document; 1]>::try_from(documents).expect("one document");
    document.root
}

fn scalar(node: &Node) -> &Scalar {
    let Node::Scalar(scalar) = node else {
        panic!("{node:?} is no scalar")
    };
    scalar
}

#[test]
fn tree_keeps_positions_and_styles() {
    let text = "a:\n  - 'x'\n  - [1, b]\n  - |-\n    c\nc: {d: \"e\"}\n";
    let Node::Map {
        entries,
        at: map_at,
    } = root(text, &STRICT)
    else {
        panic!()
    };
    assert_eq!(map_at, at(1, 1));
    let keys: Vec<_> = entries
        .iter()
        .map(|(k, _)| (k.text.as_str(), k.at))
        .collect();
    assert_eq!(keys, [("a", at(1, 1)), ("c", at(6, 1))]);
    let Node::Seq { items, at: seq_at } = &entries[0].1 else {
        panic!()
    };
    assert_eq!(*seq_at, at(2, 3));
    let x = scalar(&items[0]);
    assert_eq!(
        (x.text.as_str(), x.style, x.quoted, x.at),
        ("x", Style::Quoted, true, at(2, 5))
    );
    let Node::Seq {
        items: flow,
        at: flow_at,
    } = &items[1]
    else {
        panic!()
    };
    assert_eq!(*flow_at, at(3, 5));
    assert_eq!(scalar(&flow[0]).style, Style::Plain);
    // A block scalar is placed at its text, not at its `|`.
    let block = scalar(&items[2]);
    assert_eq!(
        (block.text.as_str(), block.style, block.at),
        ("c", Style::Block, at(5, 5))
    );
    let Node::Map { entries: inner, .. } = &entries[1].1 else {
        panic!()
    };
    assert_eq!(scalar(&inner[0].1).at, at(6, 8));
}

#[test]
fn quoted_by_style_tag_and_block_rule() {
    let quoted = |text: &str, rules: &Rules| scalar(&root(text, rules)).quoted;
    for rules in [&LENIENT, &STRICT] {
        assert!(!quoted("5", rules));
        assert!(quoted("'5'", rules));
        assert!(quoted("\"5\"", rules));
        assert!(quoted("!!str 5", rules));
        assert!(quoted("|\n  5\n", rules), "a line break at the end");
    }
    // A block scalar without whitespace at either end is typed like a plain one only by
    // `BlockScalars::TypedWhenTrimmed`.
    assert!(!quoted("|-\n  5\n", &LENIENT));
    assert!(quoted("|-\n  5\n", &STRICT));
    // An empty block scalar is a document only where it counts as quoted.
    assert_eq!(read("|-\n", &LENIENT).unwrap(), []);
    assert_eq!(scalar(&root("|-\n", &STRICT)).text, "");
}

#[test]
fn rules_decide_anchors_documents_and_pairs() {
    assert_eq!(scalar(&root("&x 5", &LENIENT)).text, "5");
    assert!(matches!(root("&x [1]", &LENIENT), Node::Seq { .. }));
    assert_eq!(refused("a: &x 5", &STRICT).problem, Problem::Anchor);
    assert_eq!(refused("a: &x {}", &STRICT).problem, Problem::Anchor);
    // Aliases are refused by both.
    assert_eq!(refused("a: &x 5\nb: *x", &LENIENT).problem, Problem::Alias);

    let documents = read("a: 1\n---\n# empty\n---\n\n--- [b]\n", &LENIENT).unwrap();
    let lines: Vec<_> = documents.iter().map(|d| d.line).collect();
    assert_eq!(lines, [1, 6]);
    let e = refused("a: 1\n---\nb: 2", &STRICT);
    assert_eq!((e.at, e.problem), (at(2, 1), Problem::SecondDocument));
    assert_eq!(read("--- # start\na: 1\n...\n", &STRICT).unwrap().len(), 1);
    assert_eq!(read("  # nothing\n\n", &STRICT).unwrap(), []);

    let Node::Seq { items, .. } = root("[a: 1]", &LENIENT) else {
        panic!()
    };
    assert!(matches!(&items[..], [Node::Map { entries, .. }] if entries.len() == 1));
    let e = refused("[a: 1]", &STRICT);
    assert_eq!((e.at, e.problem), (at(1, 2), Problem::PairInFlowList));
    // A braced mapping in a list is no pair.
    assert!(read("[{a: 1}]", &STRICT).is_ok());
}

#[test]
fn every_problem_has_its_place() {
    let cases = [
        ("a: 'x' y", 1, 8, Problem::AfterQuote),
        ("{\"a\" 1}", 1, 6, Problem::AfterQuote),
        ("a: [1]\nb: *x", 2, 4, Problem::Alias),
        ("a: &", 1, 4, Problem::Alias),
        ("? [a]\n: 1", 1, 3, Problem::CollectionKey),
        (
            "a: 1\na: 2",
            2,
            1,
            Problem::DuplicateKey { key: "a".into() },
        ),
        ("a: [1, 2\nb: 3", 2, 2, Problem::FlowList),
        ("{a: [1}", 1, 7, Problem::FlowList),
        ("{a: 1 b: 2}", 1, 8, Problem::FlowMap),
        ("a: \"\\x4\"", 1, 4, Problem::HexEscape),
        ("a:\n  b: 1\n c: 2", 3, 2, Problem::KeyNotAligned),
        ("  a: 1\nb: 2", 2, 1, Problem::LessIndented),
        ("a: 1\n- b", 2, 3, Problem::ListItemAmongKeys),
        ("a:\n  - b\n  c: 1", 3, 3, Problem::ListNotContinued),
        ("a: - 1", 1, 4, Problem::ListOnKeyLine),
        ("a: b: c", 1, 5, Problem::MappingOnKeyLine),
        (": 1", 1, 1, Problem::MissingKey),
        ("{: 1}", 1, 2, Problem::MissingKey),
        ("a: 1\n b: 2", 2, 3, Problem::MoreIndented),
        (
            "a: |0\n x",
            1,
            4,
            Problem::Other {
                info: "while scanning a block scalar, found an indentation indicator equal to 0"
                    .into(),
            },
        ),
        ("a: [1]]", 1, 7, Problem::StrayBracket),
        ("a:\t1", 1, 4, Problem::TabAfterIndicator),
        ("a:\n\tb: 1", 2, 1, Problem::TabIndent),
        // The parser stops at the scalar before the tab; the error names the tab.
        ("a:\n  b: 1\n\tc: 2", 3, 1, Problem::TabIndent),
        (
            "a: !!int 5",
            1,
            4,
            Problem::Tag {
                name: "!!int".into(),
            },
        ),
        ("a: !x [1]", 1, 4, Problem::Tag { name: "!x".into() }),
        // A bracket never closed is reported at the bracket.
        (
            "a: [1, 2\n",
            1,
            4,
            Problem::UnclosedBracket {
                open: '[',
                close: ']',
                line: 1,
            },
        ),
        (
            "a:\n  {b: 1,\n  # more\n",
            2,
            3,
            Problem::UnclosedBracket {
                open: '{',
                close: '}',
                line: 2,
            },
        ),
        (
            "x: 1\ny: 'open",
            2,
            4,
            Problem::UnclosedQuote { quote: '\'' },
        ),
        ("é: \"open", 1, 4, Problem::UnclosedQuote { quote: '"' }),
        (
            "a: @x",
            1,
            4,
            Problem::UnexpectedChar {
                info: "unexpected character: `@'".into(),
            },
        ),
        ("a: \"\\q\"", 1, 4, Problem::UnknownEscape),
    ];
    for (text, line, column, problem) in cases {
        for rules in [&LENIENT, &STRICT] {
            let e = refused(text, rules);
            assert_eq!((e.at, &e.problem), (at(line, column), &problem), "{text:?}");
        }
    }
}

#[test]
fn messages_say_how_to_fix() {
    let message = |text: &str| refused(text, &STRICT).to_string();
    assert_eq!(
        message("{a: 1"),
        "line 1, column 1: the '{' opened on line 1 is never closed; add '}'"
    );
    assert_eq!(
        message("a:\n\tb: 1"),
        "line 2, column 1: tabs cannot indent YAML; indent with spaces"
    );
    assert_eq!(
        message("a: 'x"),
        "line 1, column 4: the string opened with ' here is never closed; add '"
    );
    assert!(message("a: |0\n x").ends_with("; check the quoting and indentation here"));
    assert!(message("a: @x").ends_with(": a value cannot start with it; quote the value"));
}

#[test]
fn errors_carry_columns() {
    for rules in [&LENIENT, &STRICT] {
        assert_eq!(refused("a: [1, 2\n", rules).at, at(1, 4));
        assert_eq!(refused("x: 1\ny: 'open", rules).at, at(2, 4));
    }
}

#[test]
fn deep_nesting_is_refused() {
    for rules in [&LENIENT, &STRICT] {
        for piece in ["[", "- ", "{a: "] {
            for depth in [200, 10_000] {
                let e = refused(&piece.repeat(depth), rules);
                assert!(e.to_string().contains("nested"), "{piece:?} x {depth}: {e}");
            }
        }
    }
    let e = refused(&format!("a: {}", "[".repeat(200)), &LENIENT);
    assert_eq!(e.problem, Problem::Nesting { limit: 64 });
}

/// Random text made of YAML's structure characters never panics the reader: it is a tree or
/// an error with a line.
#[test]
fn random_text_is_a_tree_or_an_error() {
    const PIECES: [&str; 24] = [
        "a", "1", " ", "  ", "\n", "\t", ":", ": ", "- ", "[", "]", "{", "}", ",", "'", "\"", "#",
        "&x ", "*x", "!!str ", "|", ">-", "---\n", "\\",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let len = next() % 24;
        let text: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        for rules in [&LENIENT, &STRICT] {
            if let Err(e) = read(&text, rules) {
                assert!(e.at.line >= 1 && e.at.column >= 1, "{text:?}: {e}");
            }
        }
    }
}

#[test]
fn reading_work_grows_with_the_text_not_its_square() {
    // Many keys in one mapping (each checked against the keys before it) and many flow
    // collections after a non-ASCII character (each bracket looked up by character position):
    // either used to cost work proportional to the text for every entry.
    for entries in [1_000, 4_000] {
        let mut text = String::from("# café\nn:\n");
        for i in 0..entries {
            text.push_str(&format!("  p{i}: [{i}, {{a: é}}]\n"));
        }
        crate::text::work::take();
        let root = root(&text, &LENIENT);
        let work = crate::text::work::take();
        let Node::Map { entries: nodes, .. } = root else {
            panic!("a mapping")
        };
        let Some((_, Node::Map { entries: inner, .. })) = nodes.first() else {
            panic!("n holds a mapping")
        };
        assert_eq!(inner.len(), entries);
        assert!(
            work <= 2 * text.chars().count(),
            "{entries} entries, {} characters: {work} units of work",
            text.chars().count()
        );
    }
}

#[test]
fn input_stops_at_the_limit() {
    assert_eq!(read_text(&b"a: 1\n"[..], 5).as_deref(), Ok("a: 1\n"));
    assert_eq!(
        read_text(&b"a: 1\n"[..], 4),
        Err(InputError::TooLarge { limit: 4 })
    );
    // An endless source: only the limit and one byte more are read.
    let endless = std::io::repeat(0);
    assert_eq!(
        read_text(endless, 1 << 20),
        Err(InputError::TooLarge { limit: 1 << 20 })
    );
    assert_eq!(
        read_text(&b"ok \xff"[..], 10),
        Err(InputError::NotUtf8 { offset: 3 })
    );
    assert_eq!(bytes(16 << 20), "16 MiB (16777216 bytes)");
    assert_eq!(bytes(1000), "1000 bytes");
}
