//! The YAML reading layer of roslite: parameter files and `-p name:=value` (in `roslite`) and
//! message text (in `roslite-msg-gen`) are both read here, by `saphyr-parser` (YAML 1.2, the
//! workspace's one YAML parser), into a small tree with positions.
//!
//! Layers, bottom up:
//! - `reader`: [`read`] turns `saphyr-parser`'s events into [`Document`]s of [`Node`]s. It
//!   applies the caller's [`Rules`] as the events come, so the problem reported is always the
//!   first one in the text.
//! - `error`: [`Error`] and [`Problem`]: why a text is refused, at which line and column.
//!   `saphyr-parser`'s own errors are sorted into problems that say how to fix the text (the
//!   `'{'` opened on line 1 is never closed, tabs cannot indent, ...); [`Problem`]'s `Display`
//!   words each of them, and a caller words some in its own terms.
//!
//! The tree keeps each scalar's text, its style and whether it counts as quoted; it does not
//! decide what a scalar means (`5` stays the text `5`). Each caller types scalars by its own
//! rules: `rcl_yaml_param_parser`'s for parameter files, PyYAML's for message text.
//!
//! What every caller gets:
//!
//! | YAML | this reader |
//! | --- | --- |
//! | block and flow collections (`{a: 1, b: [1, 2]}`) | read |
//! | `'single'`, `"double"` quoted scalars, escapes | read, [`Style::Quoted`], quoted |
//! | plain and quoted scalars over several lines | folded into one line |
//! | block scalars `\|` and `>` | read, [`Style::Block`], quoted or not by [`BlockScalars`] |
//! | comments | ignored |
//! | anchors (`&name`) | ignored or refused, by [`Anchors`] |
//! | aliases (`*name`) | refused |
//! | the `!!str` tag | quoted |
//! | other tags | refused |
//! | several documents (`---`) | read in turn or refused, by [`Documents`] |
//! | `[a: 1]`, a `key: value` pair in a flow list | a one-entry mapping or refused, by [`FlowListPairs`] |
//! | tabs in indentation | refused (YAML 1.2.2 §6.1; YAML 1.1 too) |
//! | a tab right after `key:` or `-` | refused (by `saphyr-parser`; libyaml and PyYAML take it) |
//! | the same key twice in one mapping | refused (YAML 1.2.2 §3.2.1.1: keys are unique) |
//! | a list or mapping as a key | refused |
//! | nesting deeper than [`Rules::max_nesting`] | refused |
//!
//! Aliases are refused because neither caller needs them (ROS 2 refuses them in parameter files)
//! and one alias can stand for an exponentially large tree. The nesting limit keeps hostile
//! input from exhausting the stack when a caller walks or drops the tree.
//!
//! Lines and columns are 1-based; columns count characters, as `saphyr-parser` does.

#![forbid(unsafe_code)]

mod error;
mod reader;
#[cfg(test)]
mod tests;

pub use error::{Error, Problem};
pub use reader::read;

/// What a caller accepts where the YAML it reads differs from another caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    pub anchors: Anchors,
    pub block_scalars: BlockScalars,
    pub documents: Documents,
    pub flow_list_pairs: FlowListPairs,
    /// Collections nested deeper than this are refused ([`Problem::Nesting`]).
    pub max_nesting: usize,
}

/// What an anchor (`&name`) on a scalar or collection does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchors {
    /// Read as if it were not there.
    Ignore,
    /// Refused ([`Problem::Anchor`]).
    Refuse,
}

/// Whether a block scalar (`|`, `>`) counts as quoted, i.e. as a string whatever its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockScalars {
    /// Always (PyYAML).
    Strings,
    /// Only when its text starts or ends with whitespace; otherwise it is typed like a plain
    /// scalar (`rcl_yaml_param_parser` types all but single- and double-quoted scalars).
    TypedWhenTrimmed,
}

/// How many documents a text may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Documents {
    /// One; a second document start is refused ([`Problem::SecondDocument`]).
    One,
    /// Any number, each its own [`Document`].
    Several,
}

/// What a `key: value` pair written in a flow list without braces (`[a: 1]`) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowListPairs {
    /// Read as a one-entry mapping, as YAML says.
    Read,
    /// Refused ([`Problem::PairInFlowList`]).
    Refuse,
}

/// A place in the text: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// One document that holds something: documents that hold nothing but whitespace, comments
/// and an empty plain scalar are left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The line the document starts on.
    pub line: usize,
    pub root: Node,
}

/// One YAML node.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Entries in document order; keys are scalars.
    Map {
        entries: Vec<(Scalar, Node)>,
        at: Position,
    },
    Scalar(Scalar),
    Seq {
        items: Vec<Node>,
        at: Position,
    },
}

/// A scalar, its text as YAML gives it (quotes removed, escapes and line folding applied).
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    pub text: String,
    pub style: Style,
    /// Whether the caller types it as a string whatever its text: single- or double-quoted,
    /// tagged `!!str`, or a block scalar the [`BlockScalars`] rule makes a string.
    pub quoted: bool,
    pub at: Position,
}

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `|` (literal) or `>` (folded).
    Block,
    Plain,
    /// `'single'` or `"double"`.
    Quoted,
}
