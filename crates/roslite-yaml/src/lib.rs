//! The YAML reading layer of roslite: parameter files and `-p name:=value` (in `roslite`) and
//! message text (in `roslite-msg-gen`) are both read here, by `saphyr-parser` (YAML 1.2, the
//! workspace's one YAML parser), into a small tree with positions.
//!
//! Layers, bottom up:
//! - `reader`: [`read`] turns `saphyr-parser`'s events into [`Document`]s of [`Node`]s. It
//!   applies the caller's [`Rules`] as the events come, so the problem reported is always the
//!   first one in the text.
//! - `input`: [`read_text`] reads a file or stream to parse, up to a caller's limit of bytes.
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
mod input;
mod reader;
#[cfg(test)]
mod tests;
mod text;
mod tree;

pub use error::{Error, Problem};
pub use input::{bytes, read_text, InputError};
pub use reader::read;
pub use tree::{
    Anchors, BlockScalars, Document, Documents, FlowListPairs, Node, Position, Rules, Scalar, Style,
};
