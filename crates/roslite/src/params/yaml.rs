//! The YAML of ROS 2 parameter files (`--params-file`) and of `-p name:=value` overrides,
//! parsed by `saphyr-parser` (YAML 1.2; the workspace's one YAML parser, also behind message
//! text in `roslite-msg-gen`) and built here into a small tree that `overrides` interprets.
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
//! Errors name the line and column (those of `saphyr-parser`) and say how to fix the text.

use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

/// Nesting deeper than this is refused, so hostile input cannot exhaust the stack when the
/// tree is walked or dropped.
const MAX_NESTING: usize = 64;

const ALIASES: &str =
    "aliases (*name) are not supported in parameter files, as in ROS 2; write the value again";

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
    Map(Vec<(String, Yaml)>),
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

/// Parses a parameter file; `None` when it holds nothing but whitespace, comments and empty
/// documents. Several documents that are all mappings come back as one mapping with their
/// entries in order, which `overrides` applies as rcl applies the documents.
pub(crate) fn parse(text: &str) -> Result<Option<Yaml>, YamlError> {
    let mut documents = Builder::new(text).run()?.into_iter();
    let Some(first) = documents.next() else {
        return Ok(None);
    };
    let mut rest = documents.peekable();
    if rest.peek().is_none() {
        return Ok(Some(first.root));
    }
    let not_a_mapping = |document: &Document| YamlError {
        line: document.line,
        column: 1,
        message: "a file of several documents needs a mapping of node names in each; this \
                  one holds something else"
            .into(),
    };
    let Yaml::Map(mut entries) = first.root else {
        return Err(not_a_mapping(&first));
    };
    for document in rest {
        match document.root {
            Yaml::Map(more) => entries.extend(more),
            _ => return Err(not_a_mapping(&document)),
        }
    }
    Ok(Some(Yaml::Map(entries)))
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

/// One non-empty document and the line it starts on.
struct Document {
    line: usize,
    root: Yaml,
}

/// A collection whose end event has not come yet.
enum Frame {
    Seq(Vec<Yaml>),
    Map {
        entries: Vec<(String, Yaml)>,
        /// The key read, waiting for its value.
        key: Option<String>,
    },
}

/// An open collection, with where it started when it was written in flow style (`[`, `{`).
struct Open {
    frame: Frame,
    flow_start: Option<(usize, usize)>,
}

/// Turns `saphyr-parser` events into [`Yaml`] trees, one per document.
struct Builder<'t> {
    text: &'t str,
    stack: Vec<Open>,
    documents: Vec<Document>,
    document_line: usize,
    /// The line of the last scalar read, to tell `a: b: c` from a bad indentation.
    last_scalar_line: usize,
}

impl<'t> Builder<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            stack: Vec::new(),
            documents: Vec::new(),
            document_line: 1,
            last_scalar_line: 0,
        }
    }

    fn run(mut self) -> Result<Vec<Document>, YamlError> {
        let mut parser = Parser::new_from_str(self.text);
        while let Some(next) = parser.next_event() {
            let (event, span) = next.map_err(|e| self.explain(&e))?;
            self.handle(event, span)?;
        }
        Ok(self.documents)
    }

    fn handle(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        match event {
            Event::DocumentStart(_) => self.document_line = span.start.line(),
            Event::Alias(_) => return Err(at(span, ALIASES)),
            Event::Scalar(text, style, _anchor, tag) => {
                let quoted = match tag.as_deref() {
                    None => match style {
                        ScalarStyle::Plain => false,
                        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => true,
                        ScalarStyle::Literal | ScalarStyle::Folded => text.trim() != text,
                    },
                    Some(tag) if is_str(tag) => true,
                    Some(tag) => return Err(unsupported_tag(span, tag)),
                };
                self.last_scalar_line = span.start.line();
                let node = Yaml::Scalar {
                    text: text.into_owned(),
                    quoted,
                };
                self.add(node, span)?;
            }
            Event::SequenceStart(_anchor, tag) => {
                self.open(Frame::Seq(Vec::new()), tag.as_deref(), span)?;
            }
            Event::MappingStart(_anchor, tag) => {
                let frame = Frame::Map {
                    entries: Vec::new(),
                    key: None,
                };
                self.open(frame, tag.as_deref(), span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                // saphyr-parser pairs every end event with a start event, which pushed.
                let open = self
                    .stack
                    .pop()
                    .expect("internal bug: saphyr-parser ended a collection it never started");
                let node = match open.frame {
                    Frame::Seq(items) => Yaml::Seq(items),
                    Frame::Map { entries, .. } => Yaml::Map(entries),
                };
                self.add(node, span)?;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame, tag: Option<&Tag>, span: Span) -> Result<(), YamlError> {
        if let Some(tag) = tag {
            return Err(unsupported_tag(span, tag));
        }
        if matches!(
            self.stack.last(),
            Some(Open {
                frame: Frame::Map { key: None, .. },
                ..
            })
        ) {
            return Err(at(
                span,
                "a list or mapping cannot be a key; keys are parameter, node or namespace names",
            ));
        }
        if self.stack.len() >= MAX_NESTING {
            return Err(at(
                span,
                format!("nested more than {MAX_NESTING} levels deep"),
            ));
        }
        // The start event of a flow collection spans up to its bracket (after any anchor); that
        // of a block collection is empty.
        let flow_start = (!span.is_empty()
            && matches!(char_at(self.text, span.end.index() - 1), Some('[' | '{')))
        .then(|| (span.end.line(), span.end.col()));
        self.stack.push(Open { frame, flow_start });
        Ok(())
    }

    /// Puts a finished node into the collection it belongs to, or makes it a document.
    fn add(&mut self, node: Yaml, span: Span) -> Result<(), YamlError> {
        let Some(open) = self.stack.last_mut() else {
            let empty = matches!(&node, Yaml::Scalar { text, quoted: false } if text.is_empty());
            if !empty {
                self.documents.push(Document {
                    line: self.document_line,
                    root: node,
                });
            }
            return Ok(());
        };
        match &mut open.frame {
            Frame::Seq(items) => items.push(node),
            Frame::Map { entries, key } => match key.take() {
                Some(key) => entries.push((key, node)),
                None => {
                    let Yaml::Scalar { text, quoted } = node else {
                        unreachable!("internal bug: `open` refuses collections as keys");
                    };
                    if text.is_empty() && !quoted {
                        return Err(at(span, "a key is missing before ':'"));
                    }
                    if entries.iter().any(|(k, _)| *k == text) {
                        return Err(at(
                            span,
                            format!("key '{text}' appears twice; give each key once"),
                        ));
                    }
                    *key = Some(text);
                }
            },
        }
        Ok(())
    }

    /// A `saphyr-parser` error in words that say how to fix the text; errors not listed keep
    /// the parser's wording.
    fn explain(&self, error: &ScanError) -> YamlError {
        let mark = error.marker();
        let info = error.info();
        let (mut line, mut column) = (mark.line(), mark.col() + 1);
        // The innermost collection written with brackets, where it opened, and whether it is
        // a list.
        let flow = self.stack.iter().rev().find_map(|open| {
            open.flow_start
                .map(|start| (start, matches!(open.frame, Frame::Seq(_))))
        });
        let message = if info.contains("must be followed by a valid YAML whitespace") {
            "a tab right after ':' or '-' does not separate here; write a space".to_owned()
        } else if info.contains("tab") {
            // The parser may point at the scalar before the line with the tab.
            if let Some(tab) = indenting_tab(self.text, line) {
                (line, column) = tab;
            }
            "tabs cannot indent YAML; indent with spaces".to_owned()
        } else if info.contains("quoted scalar, found unexpected end of stream") {
            "a quoted string is never closed; add the closing quote".to_owned()
        } else if info.contains("anchor") {
            ALIASES.to_owned()
        } else if info.contains("recursion limit exceeded") {
            "nested too deeply".to_owned()
        } else if let (Some(((open_line, open_column), list)), true) =
            (flow, rest_is_blank(self.text, mark.index()))
        {
            (line, column) = (open_line, open_column);
            let (open, close) = if list { ('[', ']') } else { ('{', '}') };
            format!("the '{open}' here is never closed; add '{close}'")
        } else if info.contains("flow sequence")
            || (info.contains("illegal placement of ':'") && matches!(flow, Some((_, true))))
        {
            "expected ',' or ']' in a list; separate items with commas, and quote items that \
             contain , : [ ] { }"
                .to_owned()
        } else if info.contains("flow mapping") {
            "expected ',' or '}' in a mapping; separate entries with commas, and quote values \
             that contain , : [ ] { }"
                .to_owned()
        } else if info.contains("mapping values are not allowed") {
            if self.last_scalar_line == line {
                "a mapping cannot start on the same line as its key (`a: b: c`); put the nested \
                 keys on the lines below, indented, or quote the value"
                    .to_owned()
            } else {
                "unexpected indentation: a more indented `key: value` line needs a key with no \
                 value above it (quote long text instead of continuing it)"
                    .to_owned()
            }
        } else if info.contains("block sequence entries are not allowed") {
            "a list cannot start on the same line as its key; put each `- item` on its own \
             line below `key:`, or write [a, b]"
                .to_owned()
        } else if info.contains("did not find expected key") {
            let text = self
                .text
                .lines()
                .nth(line.saturating_sub(1))
                .unwrap_or_default()
                .trim_start();
            if text == "-" || text.starts_with("- ") {
                "a list item `-` among the keys of a mapping; indent it under its key".to_owned()
            } else {
                "this line is not indented like the keys above it; align it with its sibling \
                 keys"
                    .to_owned()
            }
        } else if info.contains("did not find expected '-'") {
            "expected a list item `- ...` like the ones above at this indentation; a list \
             cannot go on with `key: value` lines"
                .to_owned()
        } else if info.contains("did not find expected <document start>") {
            "this line is indented less than the first line of the file; indent the top-level \
             keys alike"
                .to_owned()
        } else if info.contains("invalid trailing content after") {
            "unexpected text after a quoted string; quote the whole value, and write \
             `key: value` with a space after ':'"
                .to_owned()
        } else if info.contains("unknown escape character") {
            "unknown escape in a double-quoted string; write \\\\ for a backslash, or use \
             single quotes"
                .to_owned()
        } else if info.contains("hexadecimal number") {
            "a \\x, \\u or \\U escape needs 2, 4 or 8 hex digits (\\x41, \\u00e9)".to_owned()
        } else if info.contains("misplaced bracket") {
            "a ']' or '}' that closes nothing; remove it, or quote the value".to_owned()
        } else if info.contains("unexpected character") {
            format!("{info}: a plain value cannot start with it; quote the value")
        } else {
            format!("{info}; check the quoting and indentation here")
        };
        YamlError {
            line,
            column,
            message,
        }
    }
}

/// An error at the start of `span`.
fn at(span: Span, message: impl Into<String>) -> YamlError {
    YamlError {
        line: span.start.line(),
        column: span.start.col() + 1,
        message: message.into(),
    }
}

/// `!!str`, in any spelling that names the core schema's string tag.
fn is_str(tag: &Tag) -> bool {
    tag.is_yaml_core_schema() && tag.suffix == "str"
}

fn unsupported_tag(span: Span, tag: &Tag) -> YamlError {
    let name = if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else {
        format!("{}{}", tag.handle, tag.suffix)
    };
    at(
        span,
        format!(
            "the tag {name} is not supported, only !!str is (ROS 2 ignores the others); remove \
             it, or quote the value"
        ),
    )
}

/// The character at `index`, counted in characters as `saphyr-parser` counts.
fn char_at(text: &str, index: usize) -> Option<char> {
    if text.is_ascii() {
        text.as_bytes().get(index).map(|&b| char::from(b))
    } else {
        text.chars().nth(index)
    }
}

/// The first tab in the indentation of a line with content, from line `from` on.
fn indenting_tab(text: &str, from: usize) -> Option<(usize, usize)> {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find_map(|(index, line)| {
            let content = line.trim_start_matches([' ', '\t']);
            if content.is_empty() || content.starts_with('#') {
                return None;
            }
            let indentation = &line[..line.len() - content.len()];
            indentation.find('\t').map(|at| (index + 1, at + 1))
        })
}

/// Whether only blanks and comments follow the character at `index`.
fn rest_is_blank(text: &str, index: usize) -> bool {
    let start = if text.is_ascii() {
        index.min(text.len())
    } else {
        text.char_indices()
            .nth(index)
            .map_or(text.len(), |(at, _)| at)
    };
    text[start..].lines().all(|line| {
        let line = line.trim_start();
        line.is_empty() || line.starts_with('#')
    })
}

#[cfg(test)]
mod tests;
