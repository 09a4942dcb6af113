//! The YAML of message text, as `ros2 topic pub` and `ros2 service call` take it (PyYAML's
//! `yaml.safe_load`), parsed by `saphyr-parser` (YAML 1.2; the workspace's one YAML parser, also
//! behind parameter files in `roslite`) and built here into a tree with line numbers.
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
//! Errors name the line and column (those of `saphyr-parser`) and say how to fix the text.

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

use super::resolve::is_null;
use super::DynError;

/// Nesting deeper than this is refused, so hostile input cannot exhaust the stack when the
/// tree is walked or dropped.
const MAX_NESTING: usize = 128;

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
    let mut builder = Builder {
        text,
        stack: Vec::new(),
        root: None,
        documents: 0,
        last_scalar_line: 0,
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| builder.explain(&e))?;
        builder.handle(event, span)?;
    }
    Ok(builder.root.filter(
        |root| !matches!(root, Node::Scalar { text, quoted: false, .. } if text.is_empty()),
    ))
}

/// A collection whose end event has not come yet.
enum Frame {
    Seq(Vec<Node>),
    Map {
        entries: Vec<(Key, Node)>,
        /// The key read, waiting for its value.
        key: Option<Key>,
    },
}

/// An open collection, with its line and where its bracket is when written in flow style.
struct Open {
    frame: Frame,
    line: usize,
    flow_start: Option<(usize, usize)>,
}

/// Turns `saphyr-parser` events into one [`Node`] tree.
struct Builder<'t> {
    text: &'t str,
    stack: Vec<Open>,
    root: Option<Node>,
    documents: usize,
    /// The line of the last scalar read, to tell `a: b: c` from a bad indentation.
    last_scalar_line: usize,
}

impl Builder<'_> {
    fn handle(&mut self, event: Event<'_>, span: Span) -> Result<(), DynError> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(at(
                        span,
                        "several YAML documents given; give exactly one message",
                    ));
                }
            }
            Event::Alias(_) => return Err(anchors(span)),
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 {
                    return Err(anchors(span));
                }
                let quoted = match tag.as_deref() {
                    None => style != ScalarStyle::Plain,
                    Some(tag) if is_str(tag) => true,
                    Some(_) => return Err(tags(span)),
                };
                self.last_scalar_line = span.start.line();
                let node = Node::Scalar {
                    text: text.into_owned(),
                    quoted,
                    line: span.start.line(),
                };
                self.add(node, span)?;
            }
            Event::SequenceStart(anchor, tag) => {
                self.open(Frame::Seq(Vec::new()), anchor, tag, span)?;
            }
            Event::MappingStart(anchor, tag) => {
                // A pair written in a list without braces starts a mapping at its key, so the
                // event spans nothing.
                let in_flow_list = matches!(
                    self.stack.last(),
                    Some(Open {
                        frame: Frame::Seq(_),
                        flow_start: Some(_),
                        ..
                    })
                );
                if in_flow_list && span.is_empty() {
                    return Err(at(
                        span,
                        "a `key: value` pair inside [ ] needs braces: [{a: 1}, {a: 2}]",
                    ));
                }
                let frame = Frame::Map {
                    entries: Vec::new(),
                    key: None,
                };
                self.open(frame, anchor, tag, span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                // saphyr-parser pairs every end event with a start event, which pushed.
                let open = self
                    .stack
                    .pop()
                    .expect("internal bug: saphyr-parser ended a collection it never started");
                let node = match open.frame {
                    Frame::Seq(items) => Node::Seq {
                        items,
                        line: open.line,
                    },
                    Frame::Map { entries, .. } => Node::Map {
                        entries,
                        line: open.line,
                    },
                };
                self.add(node, span)?;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }

    fn open(
        &mut self,
        frame: Frame,
        anchor: usize,
        tag: Option<Cow<'_, Tag>>,
        span: Span,
    ) -> Result<(), DynError> {
        if anchor != 0 {
            return Err(anchors(span));
        }
        if tag.is_some() {
            return Err(tags(span));
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
                "a key cannot be a mapping or a list; keys are field names",
            ));
        }
        if self.stack.len() >= MAX_NESTING {
            return Err(at(
                span,
                format!("nested more than {MAX_NESTING} levels deep"),
            ));
        }
        // The start event of a flow collection spans its bracket; that of a block collection
        // is empty.
        let flow_start = (!span.is_empty()
            && matches!(char_at(self.text, span.end.index() - 1), Some('[' | '{')))
        .then(|| (span.end.line(), span.end.col()));
        self.stack.push(Open {
            frame,
            line: span.start.line(),
            flow_start,
        });
        Ok(())
    }

    /// Puts a finished node into the collection it belongs to, or makes it the root.
    fn add(&mut self, node: Node, span: Span) -> Result<(), DynError> {
        let Some(open) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        match &mut open.frame {
            Frame::Seq(items) => items.push(node),
            Frame::Map { entries, key } => match key.take() {
                Some(key) => entries.push((key, node)),
                None => {
                    let Node::Scalar { text, quoted, line } = node else {
                        unreachable!("internal bug: `open` refuses collections as keys");
                    };
                    if text.is_empty() && !quoted {
                        return Err(at(span, "expected a key (a field name) before ':'"));
                    }
                    if entries.iter().any(|(k, _)| k.text == text) {
                        return Err(at(
                            span,
                            format!("the key `{text}` appears twice; give each field once"),
                        ));
                    }
                    *key = Some(Key { text, line });
                }
            },
        }
        Ok(())
    }

    /// A `saphyr-parser` error in words that say how to fix the text; errors not listed keep
    /// the parser's wording.
    fn explain(&self, error: &ScanError) -> DynError {
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
            let quote = char_at(self.text, mark.index()).unwrap_or('\'');
            format!("the string opened with {quote} here is never closed; add {quote}")
        } else if info.contains("anchor") {
            "anchors and aliases (& and *) are not supported; repeat the value".to_owned()
        } else if info.contains("recursion limit exceeded") {
            "nested too deeply".to_owned()
        } else if let (Some(((open_line, open_column), list)), true) =
            (flow, rest_is_blank(self.text, mark.index()))
        {
            (line, column) = (open_line, open_column);
            let (open, close) = if list { ('[', ']') } else { ('{', '}') };
            format!("the '{open}' opened on line {open_line} is never closed; add '{close}'")
        } else if info.contains("flow sequence")
            || (info.contains("illegal placement of ':'") && matches!(flow, Some((_, true))))
        {
            "expected ',' or ']' in a list; separate items with commas and quote items that \
             contain , : [ ] { }"
                .to_owned()
        } else if info.contains("flow mapping") {
            "expected ',' or '}' in a mapping; separate entries with commas and quote values \
             that contain , : [ ] { }"
                .to_owned()
        } else if info.contains("mapping values are not allowed") {
            if self.last_scalar_line == line {
                "a mapping cannot start on the same line as its key (`a: b: c`); put the nested \
                 keys on the following lines, indented, or quote the value"
                    .to_owned()
            } else {
                "unexpected indentation; a value cannot continue on a more indented line as \
                 `key: value` (quote long strings), and nested keys belong under a key with no \
                 value"
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
                "unexpected indentation; this key is not aligned with the keys above it".to_owned()
            }
        } else if info.contains("did not find expected '-'") {
            "expected a list item `- ...` like the ones above at this indentation; a list \
             cannot go on with `key: value` lines"
                .to_owned()
        } else if info.contains("did not find expected <document start>") {
            "unexpected indentation; this line is indented less than the first line".to_owned()
        } else if info.contains("invalid trailing content after") {
            "text after the closing quote: expected `:` after a quoted key, or ',' between \
             items; quote the whole value if the quote belongs to it"
                .to_owned()
        } else if info.contains("unknown escape character") {
            "unknown escape in a double-quoted string; write \\\\ for a backslash, or use \
             single quotes"
                .to_owned()
        } else if info.contains("hexadecimal number") {
            "expected 2, 4 or 8 hex digits after \\x, \\u or \\U; e.g. \\x41 or \\u00e9".to_owned()
        } else if info.contains("misplaced bracket") {
            "a ']' or '}' that closes nothing; remove it, or quote the value".to_owned()
        } else if info.contains("unexpected character") {
            format!("{info}: a value cannot start with it; quote the value")
        } else {
            format!("{info}; check the quoting and indentation here")
        };
        DynError::Yaml {
            line,
            column,
            message,
        }
    }
}

/// An error at the start of `span`.
fn at(span: Span, message: impl Into<String>) -> DynError {
    DynError::Yaml {
        line: span.start.line(),
        column: span.start.col() + 1,
        message: message.into(),
    }
}

fn anchors(span: Span) -> DynError {
    at(
        span,
        "anchors and aliases (& and *) are not supported; repeat the value",
    )
}

fn tags(span: Span) -> DynError {
    at(
        span,
        "tags (!) other than !!str are not supported; quote strings instead of tagging them",
    )
}

/// `!!str`, in any spelling that names the core schema's string tag.
fn is_str(tag: &Tag) -> bool {
    tag.is_yaml_core_schema() && tag.suffix == "str"
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
