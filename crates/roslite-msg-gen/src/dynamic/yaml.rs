//! The YAML of message text, as `ros2 topic pub` and `ros2 service call` take it (PyYAML's
//! `yaml.safe_load`), read by `roslite-yaml` (`saphyr-parser`, YAML 1.2; the same reader as
//! parameter files in `roslite`) under the rules of message text (`RULES`) into a tree with
//! line numbers.
//!
//! The tree keeps each scalar's text and whether it was quoted; it does not decide what a
//! scalar means: `5` stays the text `5`, and `input` interprets it against the field's ROS
//! type, which is what makes `data: 5` work for both an `int32` and a `string` field (see
//! `resolve` for the YAML 1.1 meanings PyYAML gives plain scalars).
//!
//! What PyYAML does with each YAML feature, and what this reader does:
//!
//! | YAML | `ros2 topic pub` (PyYAML) | roslite |
//! | --- | --- | --- |
//! | block and flow collections (`{a: 1, b: [1, 2]}`) | read | read |
//! | `'single'`, `"double"` quoted scalars, escapes | strings | strings |
//! | plain and quoted scalars over several lines | folded into one line | the same |
//! | block scalars `\|` and `>` | strings | strings |
//! | comments | ignored | ignored |
//! | anchors and aliases (`&a`, `*a`) | read | refused, see 1 |
//! | the `!!str` tag | a string | a string |
//! | other tags (`!!int`, `!custom`) | typed or refused | refused |
//! | `[a: 1]`, a `key: value` pair in a list | a one-entry mapping | refused, see 2 |
//! | several documents (`---`) | refused | refused |
//! | tabs in indentation | refused | refused |
//! | a tab right after `key:` | a separator | refused, see 3 |
//! | the same key twice | the last one wins | refused, see 4 |
//!
//! Every refusal is an error that names the line and column. Tabs cannot indent in YAML
//! 1.2.2 (§6.1) nor in YAML 1.1.
//!
//! 1. An alias can stand for an exponentially large tree, and a message is short enough to
//!    repeat a value.
//! 2. Usually a forgotten `{}`: `[x: 1, y: 2]` would be two one-field messages.
//! 3. `saphyr-parser` refuses it (PyYAML does not); a space works in both.
//! 4. YAML 1.2.2 §3.2.1.1 requires the keys of a mapping to be unique.
//!
//! Errors name the line and column (those of `saphyr-parser`) and say how to fix the text;
//! `roslite-yaml` finds the problem and words it, and `message` words those about keys and
//! documents in terms of fields and messages.

use roslite_yaml::{Anchors, BlockScalars, Documents, FlowListPairs, Problem, Rules, Scalar};

use super::resolve::is_null;
use super::DynError;

/// The rules of message text where `roslite-yaml` leaves them to the caller (the table above).
const RULES: Rules = Rules {
    anchors: Anchors::Refuse,
    block_scalars: BlockScalars::Strings,
    documents: Documents::One,
    flow_list_pairs: FlowListPairs::Refuse,
    // Refused deeper, so hostile input cannot exhaust the stack when the tree is walked or
    // dropped.
    max_nesting: 128,
};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    Scalar {
        text: String,
        /// Any style but plain (PyYAML types only plain scalars), or tagged `!!str`.
        quoted: bool,
        line: usize,
    },
    Seq {
        items: Vec<Node>,
        line: usize,
    },
    Map {
        entries: Vec<(Key, Node)>,
        line: usize,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Key {
    pub text: String,
    pub line: usize,
}

impl Node {
    /// A plain `~`, `null` or nothing at all.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Scalar { text, quoted: false, .. } if is_null(text))
    }
}

/// Parses one document; `None` when the text holds nothing but whitespace, comments and an
/// empty document.
pub(super) fn parse(text: &str) -> Result<Option<Node>, DynError> {
    let documents = roslite_yaml::read(text, &RULES).map_err(|e| DynError::Yaml {
        line: e.at.line,
        column: e.at.column,
        message: message(&e.problem),
    })?;
    // `Documents::One`: there is at most one.
    Ok(documents
        .into_iter()
        .next()
        .map(|document| tree(document.root)))
}

fn tree(node: roslite_yaml::Node) -> Node {
    match node {
        roslite_yaml::Node::Scalar(Scalar {
            text, quoted, at, ..
        }) => Node::Scalar {
            text,
            quoted,
            line: at.line,
        },
        roslite_yaml::Node::Seq { items, at } => Node::Seq {
            items: items.into_iter().map(tree).collect(),
            line: at.line,
        },
        roslite_yaml::Node::Map { entries, at } => Node::Map {
            entries: entries
                .into_iter()
                .map(|(key, value)| {
                    let key = Key {
                        text: key.text,
                        line: key.at.line,
                    };
                    (key, tree(value))
                })
                .collect(),
            line: at.line,
        },
    }
}

/// A problem in the words of message text: keys are field names, and the text is one message;
/// the rest in `roslite-yaml`'s words.
fn message(problem: &Problem) -> String {
    match problem {
        Problem::CollectionKey => {
            "a key cannot be a mapping or a list; keys are field names".to_owned()
        }
        Problem::DuplicateKey { key } => {
            format!("the key `{key}` appears twice; give each field once")
        }
        Problem::MissingKey => "expected a key (a field name) before ':'".to_owned(),
        Problem::SecondDocument => {
            "several YAML documents given; give exactly one message".to_owned()
        }
        _ => problem.to_string(),
    }
}

#[cfg(test)]
mod tests;
