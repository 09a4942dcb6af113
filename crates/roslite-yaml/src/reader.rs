//! `saphyr-parser` events into [`Node`] trees, with the caller's [`Rules`] applied as the
//! events come.
//!
//! The reader keeps a stack of the collections whose end event has not come yet; a finished
//! node goes into the collection on top (as an item, a key or a value), or, with the stack
//! empty, becomes a document. The stack also remembers where each flow collection's bracket
//! is, which the error classifier (`error::classify`) uses to say which bracket is never
//! closed.

use std::collections::HashSet;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span, Tag};

use crate::error::{classify, Context, Error, Problem};
use crate::text::CharCursor;
use crate::tree::{
    Anchors, BlockScalars, Document, Documents, FlowListPairs, Node, Position, Rules, Scalar, Style,
};

/// Reads `text` into its documents by the caller's `rules`; empty documents are left out.
///
/// # Errors
///
/// The first problem in the text: what `saphyr-parser` cannot read, or what `rules` refuse.
pub fn read(text: &str, rules: &Rules) -> Result<Vec<Document>, Error> {
    let mut reader = Reader {
        cursor: CharCursor::new(text),
        rules,
        stack: Vec::new(),
        documents: Vec::new(),
        document_starts: 0,
        document_line: 1,
        last_scalar_line: 0,
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|error| {
            // The innermost collection written with brackets, and whether it is a list.
            let flow = reader.stack.iter().rev().find_map(|open| {
                open.flow_start
                    .map(|start| (start, matches!(open.frame, Frame::Seq(_))))
            });
            classify(
                &error,
                &Context {
                    text,
                    flow,
                    last_scalar_line: reader.last_scalar_line,
                },
            )
        })?;
        reader.handle(event, span)?;
    }
    Ok(reader.documents)
}

/// A collection whose end event has not come yet.
enum Frame {
    Seq(Vec<Node>),
    Map {
        entries: Vec<(Scalar, Node)>,
        /// The keys of `entries` (and `key`), so that a repeated key is found in constant time
        /// rather than by comparing it with every key before it.
        keys: HashSet<String>,
        /// The key read, waiting for its value.
        key: Option<Scalar>,
    },
}

/// An open collection, where it starts, and where its bracket is when written in flow style.
struct Open {
    frame: Frame,
    at: Position,
    flow_start: Option<Position>,
}

struct Reader<'t, 'r> {
    /// Looks up the characters at the positions of the events, which move forward.
    cursor: CharCursor<'t>,
    rules: &'r Rules,
    stack: Vec<Open>,
    documents: Vec<Document>,
    document_starts: usize,
    document_line: usize,
    /// The line of the last scalar read, to tell `a: b: c` from a bad indentation.
    last_scalar_line: usize,
}

impl Reader<'_, '_> {
    fn handle(&mut self, event: Event<'_>, span: Span) -> Result<(), Error> {
        match event {
            Event::DocumentStart(_) => {
                self.document_starts += 1;
                if self.document_starts > 1 && self.rules.documents == Documents::One {
                    return Err(at(span, Problem::SecondDocument));
                }
                self.document_line = span.start.line();
            }
            Event::Alias(_) => return Err(at(span, Problem::Alias)),
            Event::Scalar(text, style, anchor, tag) => {
                self.check_anchor(anchor, span)?;
                let tagged_str = match tag.as_deref() {
                    None => false,
                    Some(tag) if is_str(tag) => true,
                    Some(tag) => return Err(unsupported_tag(span, tag)),
                };
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
                    ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
                };
                let quoted = tagged_str
                    || match style {
                        Style::Plain => false,
                        Style::Quoted => true,
                        Style::Block => match self.rules.block_scalars {
                            BlockScalars::Strings => true,
                            BlockScalars::TypedWhenTrimmed => text.trim() != text,
                        },
                    };
                self.last_scalar_line = span.start.line();
                let scalar = Scalar {
                    text: text.into_owned(),
                    style,
                    quoted,
                    at: position(span.start),
                };
                self.add(Node::Scalar(scalar), span)?;
            }
            Event::SequenceStart(anchor, tag) => {
                self.open(Frame::Seq(Vec::new()), anchor, tag.as_deref(), span)?;
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
                if in_flow_list
                    && span.is_empty()
                    && self.rules.flow_list_pairs == FlowListPairs::Refuse
                {
                    return Err(at(span, Problem::PairInFlowList));
                }
                let frame = Frame::Map {
                    entries: Vec::new(),
                    keys: HashSet::new(),
                    key: None,
                };
                self.open(frame, anchor, tag.as_deref(), span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                // saphyr-parser pairs every end event with a start event, which pushed.
                let open = self
                    .stack
                    .pop()
                    .expect("internal bug: saphyr-parser ended a collection it never started");
                let node = match open.frame {
                    Frame::Seq(items) => Node::Seq { items, at: open.at },
                    Frame::Map { entries, .. } => Node::Map {
                        entries,
                        at: open.at,
                    },
                };
                self.add(node, span)?;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }

    /// `anchor` is `saphyr-parser`'s anchor id, 0 for none.
    fn check_anchor(&self, anchor: usize, span: Span) -> Result<(), Error> {
        if anchor != 0 && self.rules.anchors == Anchors::Refuse {
            return Err(at(span, Problem::Anchor));
        }
        Ok(())
    }

    fn open(
        &mut self,
        frame: Frame,
        anchor: usize,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<(), Error> {
        self.check_anchor(anchor, span)?;
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
            return Err(at(span, Problem::CollectionKey));
        }
        if self.stack.len() >= self.rules.max_nesting {
            let limit = self.rules.max_nesting;
            return Err(at(span, Problem::Nesting { limit }));
        }
        // The start event of a flow collection spans up to its bracket (after any anchor); that
        // of a block collection is empty. The end's 0-based column is the bracket's 1-based one.
        let flow_start = (!span.is_empty()
            && matches!(self.cursor.char_at(span.end.index() - 1), Some('[' | '{')))
        .then(|| Position {
            line: span.end.line(),
            column: span.end.col(),
        });
        self.stack.push(Open {
            frame,
            at: position(span.start),
            flow_start,
        });
        Ok(())
    }

    /// Puts a finished node into the collection it belongs to, or makes it a document.
    fn add(&mut self, node: Node, span: Span) -> Result<(), Error> {
        let Some(open) = self.stack.last_mut() else {
            let empty = matches!(&node, Node::Scalar(s) if s.text.is_empty() && !s.quoted);
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
            Frame::Map { entries, keys, key } => match key.take() {
                Some(key) => entries.push((key, node)),
                None => {
                    let Node::Scalar(new) = node else {
                        unreachable!("internal bug: `open` refuses collections as keys");
                    };
                    if new.text.is_empty() && !new.quoted {
                        return Err(at(span, Problem::MissingKey));
                    }
                    #[cfg(test)]
                    crate::text::work::add(1);
                    if !keys.insert(new.text.clone()) {
                        return Err(at(span, Problem::DuplicateKey { key: new.text }));
                    }
                    *key = Some(new);
                }
            },
        }
        Ok(())
    }
}

/// A problem at the start of `span`.
fn at(span: Span, problem: Problem) -> Error {
    Error {
        at: position(span.start),
        problem,
    }
}

fn position(mark: Marker) -> Position {
    Position {
        line: mark.line(),
        column: mark.col() + 1,
    }
}

/// `!!str`, in any spelling that names the core schema's string tag.
fn is_str(tag: &Tag) -> bool {
    tag.is_yaml_core_schema() && tag.suffix == "str"
}

fn unsupported_tag(span: Span, tag: &Tag) -> Error {
    let name = if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else {
        format!("{}{}", tag.handle, tag.suffix)
    };
    at(span, Problem::Tag { name })
}
