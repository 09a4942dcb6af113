//! The YAML of ROS 2 parameter files (`--params-file`) and of `-p name:=value` overrides, read
//! by `roslite-yaml` (`saphyr-parser`, YAML 1.2; the same reader as message text in
//! `roslite-msg-gen`) under the rules of parameter files (`RULES`) into a small tree that
//! `overrides` interprets.
//!
//! The tree keeps each scalar's text and whether it counts as quoted; it does not decide what
//! a scalar means (`5` stays the text `5`): `overrides` types it as `rcl_yaml_param_parser`
//! does (`parse.c`, `get_value`: quoted is a string, otherwise a bool word, an integer, a
//! double, or else a string).
//!
//! ROS 2 reads parameter files with libyaml, event by event (`parse.c`, `parse_file_events`).
//! What it does with each YAML feature, and what this reader does:
//!
//! | YAML | ROS 2 (`rcl_yaml_param_parser`) | roslite |
//! | --- | --- | --- |
//! | block and flow collections (`{a: 1, b: [1, 2]}`) | read | read |
//! | `'single'`, `"double"` quoted scalars, escapes | strings | strings |
//! | plain and quoted scalars over several lines | folded into one line | the same |
//! | block scalars `\|` and `>` | typed like plain scalars | the same, see 1 |
//! | comments | ignored | ignored |
//! | anchors (`&name`) | ignored | ignored |
//! | aliases (`*name`) | refused ("Will not support aliasing") | refused |
//! | the `!!str` tag | a string | a string |
//! | other tags | ignored | refused, see 2 |
//! | several documents (`---`) | read in turn | the same, see 3 |
//! | tabs in indentation | refused | refused |
//! | a tab right after `key:` | a separator | refused, see 4 |
//! | the same key twice in one mapping | the last one wins | refused, see 5 |
//!
//! Typing the scalars (`overrides`) differs from rcl in one more way: an integer beyond 64 bits
//! and a numeral beyond the range of a double are errors, where rcl reads the first as a double
//! and the second as a string. A file is read up to `MAX_PARAMS_FILE_BYTES`.
//!
//! Every refusal is an error that names the line and column. Tabs cannot indent in YAML
//! 1.2.2 (§6.1) nor in YAML 1.1.
//!
//! 1. rcl types every scalar that is not single- or double-quoted, so `|-` or `>-` (strip
//!    chomping) around `5` give the integer 5, while plain `|` keeps the final line break and
//!    `"5\n"` is no number, so a string. This reader hands a block scalar on unquoted when its
//!    text has no whitespace at either end (then `overrides` types it exactly as rcl does) and
//!    quoted otherwise (a string with its line breaks, as rcl gives). The one difference: text
//!    that starts with whitespace (only possible with an indentation indicator, `|2`) stays a
//!    string where rcl's `strtol` would skip the whitespace and read a number.
//! 2. A tag that changes nothing would mislead the reader of the file.
//! 3. rcl's event loop skips document start and end events, so later documents go on as if
//!    they were part of the first; here the documents' top-level mappings are joined in order
//!    (later values win), and a document that is not a mapping is refused.
//! 4. `saphyr-parser` refuses it (libyaml does not); a space works in both.
//! 5. YAML 1.2.2 §3.2.1.1 requires the keys of a mapping to be unique.
//!
//! Errors name the line and column (those of `saphyr-parser`) and say how to fix the text;
//! `roslite-yaml` finds the problem, and `message` words some problems as parameter files
//! word them.

use std::fmt;

use roslite_yaml::{Anchors, BlockScalars, Documents, FlowListPairs, Node, Problem, Rules, Scalar};

/// The rules of parameter files where `roslite-yaml` leaves them to the caller (the table
/// above).
const RULES: Rules = Rules {
    anchors: Anchors::Ignore,
    block_scalars: BlockScalars::TypedWhenTrimmed,
    documents: Documents::Several,
    flow_list_pairs: FlowListPairs::Read,
    // Refused deeper, so hostile input cannot exhaust the stack when the tree is walked or
    // dropped.
    max_nesting: 64,
};

/// One YAML node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Yaml {
    Scalar {
        text: String,
        /// Single- or double-quoted, tagged `!!str`, or a block scalar read as a string.
        quoted: bool,
    },
    Seq(Vec<Yaml>),
    /// Entries in document order.
    Map(Vec<(Key, Yaml)>),
}

/// A mapping key: a node, namespace or parameter name, and its line, which errors about the
/// entry name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) text: String,
    /// 1-based.
    pub(crate) line: usize,
}

/// Why a text is not YAML this reader accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column (in characters) of the problem.
    pub column: usize,
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for YamlError {}

impl From<roslite_yaml::Error> for YamlError {
    fn from(error: roslite_yaml::Error) -> Self {
        Self {
            line: error.at.line,
            column: error.at.column,
            message: message(&error.problem),
        }
    }
}

/// Parses a parameter file; `None` when it holds nothing but whitespace, comments and empty
/// documents. Several documents that are all mappings come back as one mapping with their
/// entries in order, which `overrides` applies as rcl applies the documents.
pub(crate) fn parse(text: &str) -> Result<Option<Yaml>, YamlError> {
    let mut documents = roslite_yaml::read(text, &RULES)?.into_iter();
    let Some(first) = documents.next() else {
        return Ok(None);
    };
    let mut rest = documents.peekable();
    if rest.peek().is_none() {
        return Ok(Some(tree(first.root)));
    }
    let not_a_mapping = |line: usize| YamlError {
        line,
        column: 1,
        message: "a file of several documents needs a mapping of node names in each; this \
                  one holds something else"
            .into(),
    };
    let mut entries = Vec::new();
    for document in std::iter::once(first).chain(rest) {
        let Node::Map { entries: more, .. } = document.root else {
            return Err(not_a_mapping(document.line));
        };
        entries.extend(more);
    }
    Ok(Some(map(entries)))
}

/// Parses a single scalar or flow value as written after `:=` on a command line.
pub(crate) fn parse_inline(text: &str) -> Result<Yaml, YamlError> {
    match parse(text)? {
        Some(node) => Ok(node),
        None => Ok(Yaml::Scalar {
            text: String::new(),
            quoted: false,
        }),
    }
}

/// The tree `overrides` interprets: no positions, keys as their text.
fn tree(node: Node) -> Yaml {
    match node {
        Node::Scalar(Scalar { text, quoted, .. }) => Yaml::Scalar { text, quoted },
        Node::Seq { items, .. } => Yaml::Seq(items.into_iter().map(tree).collect()),
        Node::Map { entries, .. } => map(entries),
    }
}

fn map(entries: Vec<(Scalar, Node)>) -> Yaml {
    Yaml::Map(
        entries
            .into_iter()
            .map(|(key, value)| {
                let key = Key {
                    text: key.text,
                    line: key.at.line,
                };
                (key, tree(value))
            })
            .collect(),
    )
}

/// A problem as parameter files word it where they name ROS 2 (aliases, tags) or their keys
/// (parameter, node or namespace names), or where their wording has differed from message
/// text's since both were first written; the rest in `roslite-yaml`'s words.
fn message(problem: &Problem) -> String {
    match problem {
        Problem::AfterQuote => "unexpected text after a quoted string; quote the whole value, and \
                                write `key: value` with a space after ':'"
            .to_owned(),
        Problem::Alias => "aliases (*name) are not supported in parameter files, as in ROS 2; \
                           write the value again"
            .to_owned(),
        Problem::CollectionKey => {
            "a list or mapping cannot be a key; keys are parameter, node or namespace names"
                .to_owned()
        }
        Problem::FlowList => "expected ',' or ']' in a list; separate items with commas, and \
                              quote items that contain , : [ ] { }"
            .to_owned(),
        Problem::FlowMap => "expected ',' or '}' in a mapping; separate entries with commas, and \
                             quote values that contain , : [ ] { }"
            .to_owned(),
        Problem::HexEscape => {
            "a \\x, \\u or \\U escape needs 2, 4 or 8 hex digits (\\x41, \\u00e9)".to_owned()
        }
        Problem::KeyNotAligned => "this line is not indented like the keys above it; align it \
                                   with its sibling keys"
            .to_owned(),
        Problem::LessIndented => "this line is indented less than the first line of the file; \
                                  indent the top-level keys alike"
            .to_owned(),
        Problem::MappingOnKeyLine => "a mapping cannot start on the same line as its key \
                                      (`a: b: c`); put the nested keys on the lines below, \
                                      indented, or quote the value"
            .to_owned(),
        Problem::MoreIndented => "unexpected indentation: a more indented `key: value` line \
                                  needs a key with no value above it (quote long text instead \
                                  of continuing it)"
            .to_owned(),
        Problem::Tag { name } => format!(
            "the tag {name} is not supported, only !!str is (ROS 2 ignores the others); remove \
             it, or quote the value"
        ),
        Problem::UnclosedBracket { open, close, .. } => {
            format!("the '{open}' here is never closed; add '{close}'")
        }
        Problem::UnclosedQuote { .. } => {
            "a quoted string is never closed; add the closing quote".to_owned()
        }
        Problem::UnexpectedChar { info } => {
            format!("{info}: a plain value cannot start with it; quote the value")
        }
        _ => problem.to_string(),
    }
}

#[cfg(test)]
mod tests;
