//! Why a text is refused: [`Problem`], at a line and column ([`Error`]), and how
//! `saphyr-parser`'s own errors are sorted into problems ([`classify`]).
//!
//! `Display` words every problem so that the message says how to fix the text. A caller may
//! word a problem in its own terms (a parameter file's keys are parameter, node or namespace
//! names, a message's are field names): it matches on the [`Problem`] and falls back on
//! `Display` for the rest.

use std::fmt;

use saphyr_parser::ScanError;

use crate::text::{char_at, indenting_tab, rest_is_blank};
use crate::tree::Position;

/// Why a text is not YAML the caller accepts, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Where the problem is: for a bracket never closed, the bracket.
    pub at: Position,
    pub problem: Problem,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Position { line, column } = self.at;
        write!(f, "line {line}, column {column}: {}", self.problem)
    }
}

impl std::error::Error for Error {}

/// What is wrong with the text. The variants that hold `info` keep `saphyr-parser`'s own
/// words, for errors it words well enough or that are not sorted out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// Text after a closing quote (`a: 'x' y`, `{"a" 1}`).
    AfterQuote,
    /// An alias (`*name`), or a `&` or `*` without a name.
    Alias,
    /// An anchor (`&name`), refused by [`Anchors::Refuse`](crate::Anchors::Refuse).
    Anchor,
    /// A list or mapping as a key (`? [a]`).
    CollectionKey,
    /// The same key twice in one mapping.
    DuplicateKey { key: String },
    /// Something else than ',' or ']' after an item of a flow list.
    FlowList,
    /// Something else than ',' or '}' after an entry of a flow mapping.
    FlowMap,
    /// A `\x`, `\u` or `\U` escape without its hex digits.
    HexEscape,
    /// A key indented unlike its sibling keys.
    KeyNotAligned,
    /// A line indented less than the first line of the document.
    LessIndented,
    /// A `- item` among the keys of a mapping.
    ListItemAmongKeys,
    /// A `key: value` line where a list's next `- item` should be.
    ListNotContinued,
    /// A block list on the line of its key (`a: - 1`).
    ListOnKeyLine,
    /// A mapping on the line of its key (`a: b: c`).
    MappingOnKeyLine,
    /// An empty key before ':'.
    MissingKey,
    /// A `key: value` line indented more than a value can continue.
    MoreIndented,
    /// Collections nested deeper than [`Rules::max_nesting`](crate::Rules::max_nesting).
    Nesting { limit: usize },
    /// Any other error of `saphyr-parser`.
    Other { info: String },
    /// A `key: value` pair in a flow list without braces (`[a: 1]`), refused by
    /// [`FlowListPairs::Refuse`](crate::FlowListPairs::Refuse).
    PairInFlowList,
    /// Nesting deeper than `saphyr-parser` itself follows.
    ParserNesting,
    /// A second document, refused by [`Documents::One`](crate::Documents::One).
    SecondDocument,
    /// A ']' or '}' that closes nothing.
    StrayBracket,
    /// A tab right after `key:` or `-`, where `saphyr-parser` wants a space.
    TabAfterIndicator,
    /// A tab in the indentation of a line.
    TabIndent,
    /// A tag other than `!!str`, as written (`!!int`, `!custom`).
    Tag { name: String },
    /// A flow collection never closed; `line` is that of its opening bracket.
    UnclosedBracket {
        open: char,
        close: char,
        line: usize,
    },
    /// A quoted scalar never closed.
    UnclosedQuote { quote: char },
    /// A character that cannot start a plain scalar (`@`, `` ` ``).
    UnexpectedChar { info: String },
    /// An unknown escape in a double-quoted scalar (`"\q"`).
    UnknownEscape,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AfterQuote => f.write_str(
                "text after the closing quote: expected `:` after a quoted key, or ',' between \
                 items; quote the whole value if the quote belongs to it",
            ),
            Self::Alias | Self::Anchor => {
                f.write_str("anchors and aliases (& and *) are not supported; repeat the value")
            }
            Self::CollectionKey => f.write_str("a key cannot be a mapping or a list"),
            Self::DuplicateKey { key } => {
                write!(f, "key '{key}' appears twice; give each key once")
            }
            Self::FlowList => f.write_str(
                "expected ',' or ']' in a list; separate items with commas and quote items that \
                 contain , : [ ] { }",
            ),
            Self::FlowMap => f.write_str(
                "expected ',' or '}' in a mapping; separate entries with commas and quote values \
                 that contain , : [ ] { }",
            ),
            Self::HexEscape => f.write_str(
                "expected 2, 4 or 8 hex digits after \\x, \\u or \\U; e.g. \\x41 or \\u00e9",
            ),
            Self::KeyNotAligned => f.write_str(
                "unexpected indentation; this key is not aligned with the keys above it",
            ),
            Self::LessIndented => f.write_str(
                "unexpected indentation; this line is indented less than the first line",
            ),
            Self::ListItemAmongKeys => {
                f.write_str("a list item `-` among the keys of a mapping; indent it under its key")
            }
            Self::ListNotContinued => f.write_str(
                "expected a list item `- ...` like the ones above at this indentation; a list \
                 cannot go on with `key: value` lines",
            ),
            Self::ListOnKeyLine => f.write_str(
                "a list cannot start on the same line as its key; put each `- item` on its own \
                 line below `key:`, or write [a, b]",
            ),
            Self::MappingOnKeyLine => f.write_str(
                "a mapping cannot start on the same line as its key (`a: b: c`); put the nested \
                 keys on the following lines, indented, or quote the value",
            ),
            Self::MissingKey => f.write_str("a key is missing before ':'"),
            Self::MoreIndented => f.write_str(
                "unexpected indentation; a value cannot continue on a more indented line as \
                 `key: value` (quote long strings), and nested keys belong under a key with no \
                 value",
            ),
            Self::Nesting { limit } => write!(f, "nested more than {limit} levels deep"),
            Self::Other { info } => write!(f, "{info}; check the quoting and indentation here"),
            Self::PairInFlowList => {
                f.write_str("a `key: value` pair inside [ ] needs braces: [{a: 1}, {a: 2}]")
            }
            Self::ParserNesting => f.write_str("nested too deeply"),
            Self::SecondDocument => f.write_str("several YAML documents given; give exactly one"),
            Self::StrayBracket => {
                f.write_str("a ']' or '}' that closes nothing; remove it, or quote the value")
            }
            Self::TabAfterIndicator => {
                f.write_str("a tab right after ':' or '-' does not separate here; write a space")
            }
            Self::TabIndent => f.write_str("tabs cannot indent YAML; indent with spaces"),
            Self::Tag { .. } => f.write_str(
                "tags (!) other than !!str are not supported; quote strings instead of tagging \
                 them",
            ),
            Self::UnclosedBracket { open, close, line } => {
                write!(
                    f,
                    "the '{open}' opened on line {line} is never closed; add '{close}'"
                )
            }
            Self::UnclosedQuote { quote } => {
                write!(
                    f,
                    "the string opened with {quote} here is never closed; add {quote}"
                )
            }
            Self::UnexpectedChar { info } => {
                write!(f, "{info}: a value cannot start with it; quote the value")
            }
            Self::UnknownEscape => f.write_str(
                "unknown escape in a double-quoted string; write \\\\ for a backslash, or use \
                 single quotes",
            ),
        }
    }
}

/// What the reader knew when `saphyr-parser` stopped.
pub(crate) struct Context<'t> {
    pub text: &'t str,
    /// The innermost open collection written with brackets: where its bracket is, and whether
    /// it is a list.
    pub flow: Option<(Position, bool)>,
    /// The line of the last scalar read, to tell `a: b: c` from a bad indentation.
    pub last_scalar_line: usize,
}

/// Sorts a `saphyr-parser` error into a [`Problem`], by its wording, and places it where the
/// text needs fixing.
pub(crate) fn classify(error: &ScanError, context: &Context<'_>) -> Error {
    let Context {
        text,
        flow,
        last_scalar_line,
    } = *context;
    let mark = error.marker();
    let info = error.info();
    let mut at = Position {
        line: mark.line(),
        column: mark.col() + 1,
    };
    let problem = if info.contains("must be followed by a valid YAML whitespace") {
        Problem::TabAfterIndicator
    } else if info.contains("tab") {
        // The parser may point at the scalar before the line with the tab.
        if let Some(tab) = indenting_tab(text, at.line) {
            at = tab;
        }
        Problem::TabIndent
    } else if info.contains("quoted scalar, found unexpected end of stream") {
        let quote = char_at(text, mark.index()).unwrap_or('\'');
        Problem::UnclosedQuote { quote }
    } else if info.contains("anchor") {
        Problem::Alias
    } else if info.contains("recursion limit exceeded") {
        Problem::ParserNesting
    } else if let (Some((start, list)), true) = (flow, rest_is_blank(text, mark.index())) {
        at = start;
        let (open, close) = if list { ('[', ']') } else { ('{', '}') };
        Problem::UnclosedBracket {
            open,
            close,
            line: start.line,
        }
    } else if info.contains("flow sequence")
        || (info.contains("illegal placement of ':'") && matches!(flow, Some((_, true))))
    {
        Problem::FlowList
    } else if info.contains("flow mapping") {
        Problem::FlowMap
    } else if info.contains("mapping values are not allowed") {
        if last_scalar_line == at.line {
            Problem::MappingOnKeyLine
        } else {
            Problem::MoreIndented
        }
    } else if info.contains("block sequence entries are not allowed") {
        Problem::ListOnKeyLine
    } else if info.contains("did not find expected key") {
        let line = text
            .lines()
            .nth(at.line.saturating_sub(1))
            .unwrap_or_default()
            .trim_start();
        if line == "-" || line.starts_with("- ") {
            Problem::ListItemAmongKeys
        } else {
            Problem::KeyNotAligned
        }
    } else if info.contains("did not find expected '-'") {
        Problem::ListNotContinued
    } else if info.contains("did not find expected <document start>") {
        Problem::LessIndented
    } else if info.contains("invalid trailing content after") {
        Problem::AfterQuote
    } else if info.contains("unknown escape character") {
        Problem::UnknownEscape
    } else if info.contains("hexadecimal number") {
        Problem::HexEscape
    } else if info.contains("misplaced bracket") {
        Problem::StrayBracket
    } else if info.contains("unexpected character") {
        Problem::UnexpectedChar {
            info: info.to_owned(),
        }
    } else {
        Problem::Other {
            info: info.to_owned(),
        }
    };
    Error { at, problem }
}
