//! A reader for the part of YAML 1.1 that people type as a message on a command line or keep in
//! a small file: block and flow mappings and sequences, plain, single- and double-quoted
//! scalars, comments, one optional `---` document.
//!
//! Not supported, each with an error saying so: anchors and aliases, tags, block scalars
//! (`|`, `>`), complex keys, multi-line plain scalars, several documents.
//!
//! The reader does not decide what a scalar means: `5` stays the text `5` with its style, and
//! `input` interprets it against the field's ROS type, which is what makes `data: 5` work for
//! both an `int32` and a `string` field (see `resolve` for the YAML 1.1 meanings).

use super::resolve::is_null;
use super::DynError;

/// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
const MAX_NESTING: usize = 128;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    Scalar {
        text: String,
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

/// Parses one document; `None` when the text holds nothing but whitespace and comments.
pub(super) fn parse(text: &str) -> Result<Option<Node>, DynError> {
    let normalized;
    let text = if text.contains('\r') {
        normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        normalized.as_str()
    } else {
        text
    };
    let mut p = Parser {
        text,
        pos: 0,
        line: 1,
        line_start: 0,
        nesting: 0,
    };
    p.skip_blank()?;
    if p.at_marker("---") {
        p.advance_ascii(3);
        p.skip_blank()?;
    }
    if p.eof() || p.at_marker("...") {
        return Ok(None);
    }
    let node = p.block_node(false)?;
    p.skip_blank()?;
    if p.at_marker("...") {
        p.advance_ascii(3);
        p.skip_blank()?;
    }
    if p.at_marker("---") {
        return Err(p.error("several YAML documents given; give exactly one message"));
    }
    if !p.eof() {
        return Err(
            p.error("unexpected content after the value; check the indentation of this line")
        );
    }
    Ok(Some(node))
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    /// 1-based line of `pos`.
    line: usize,
    /// Byte offset where the line of `pos` starts. Indentation is ASCII, so byte columns are
    /// character columns wherever the block structure is decided.
    line_start: usize,
    nesting: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Context {
    Block,
    Flow,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> DynError {
        let column = self.text[self.line_start..self.pos].chars().count() + 1;
        DynError::Yaml {
            line: self.line,
            column,
            message: message.into(),
        }
    }

    fn error_at(&self, line: usize, message: impl Into<String>) -> DynError {
        DynError::Yaml {
            line,
            column: 1,
            message: message.into(),
        }
    }

    fn eof(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text[self.pos..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(c)
    }

    fn advance_ascii(&mut self, n: usize) {
        self.pos += n;
    }

    fn column(&self) -> usize {
        self.pos - self.line_start
    }

    /// `---` or `...` at the start of a line, followed by a blank or the end.
    fn at_marker(&self, marker: &str) -> bool {
        self.column() == 0
            && self.text[self.pos..].starts_with(marker)
            && matches!(
                self.text[self.pos + 3..].chars().next(),
                None | Some(' ' | '\t' | '\n')
            )
    }

    fn skip_inline_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
    }

    fn skip_to_line_end(&mut self) {
        while !matches!(self.peek(), None | Some('\n')) {
            self.bump();
        }
    }

    /// Skips blanks, comments and empty lines up to the next content, and checks that the
    /// indentation before it is made of spaces.
    fn skip_blank(&mut self) -> Result<(), DynError> {
        loop {
            self.skip_inline_blanks();
            match self.peek() {
                Some('#') => self.skip_to_line_end(),
                Some('\n') => {
                    self.bump();
                }
                _ => break,
            }
        }
        let indentation = &self.text[self.line_start..self.pos];
        if !self.eof()
            && indentation.contains('\t')
            && indentation.chars().all(|c| c == ' ' || c == '\t')
        {
            return Err(self.error("tabs cannot indent YAML; indent with spaces"));
        }
        Ok(())
    }

    /// Skips whitespace, line breaks and comments inside `[ ]` and `{ }`.
    fn skip_flow_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\n') => {
                    self.bump();
                }
                Some('#') => self.skip_to_line_end(),
                _ => break,
            }
        }
    }

    /// At a comment, a line break or the end: the rest of the line is empty.
    fn at_line_end(&self) -> bool {
        matches!(self.peek(), None | Some('\n' | '#'))
    }

    /// Consumes the rest of the line, which must be blank or a comment.
    fn end_line(&mut self) -> Result<(), DynError> {
        self.skip_inline_blanks();
        match self.peek() {
            None => Ok(()),
            Some('\n') => {
                self.bump();
                Ok(())
            }
            Some('#') => {
                self.skip_to_line_end();
                Ok(())
            }
            Some(_) => Err(self.error(
                "unexpected text after the value; quote values that contain ': ' or ' #', \
                 and put nested keys on their own lines",
            )),
        }
    }

    /// `-` followed by a blank: a block sequence entry.
    fn at_sequence_entry(&self) -> bool {
        self.peek() == Some('-') && matches!(self.peek_second(), None | Some(' ' | '\t' | '\n'))
    }

    /// `:` followed by a blank: the end of a block mapping key.
    fn at_block_value_indicator(&self) -> bool {
        self.peek() == Some(':') && matches!(self.peek_second(), None | Some(' ' | '\t' | '\n'))
    }

    fn enter(&mut self) -> Result<(), DynError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(self.error(format!("nested more than {MAX_NESTING} levels deep")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    fn refuse_unsupported(&self) -> Result<(), DynError> {
        let message = match self.peek() {
            Some('|' | '>') => {
                "block scalars (| and >) are not supported; write the text as a double-quoted \
                 string with \\n for line breaks"
            }
            Some('&' | '*') => "anchors and aliases (& and *) are not supported; repeat the value",
            Some('!') => "tags (!) are not supported; quote strings instead of tagging them",
            Some('?') if matches!(self.peek_second(), None | Some(' ' | '\t' | '\n')) => {
                "complex keys (?) are not supported; keys are field names"
            }
            Some('%' | '@' | '`') => "a value cannot start with % @ or `; quote it",
            _ => return Ok(()),
        };
        Err(self.error(message))
    }

    /// A node in block context starting at the current position. `inline_value` is set for
    /// the value on the same line as its key, where neither `- item` nor `key: value` may start.
    fn block_node(&mut self, inline_value: bool) -> Result<Node, DynError> {
        self.enter()?;
        let node = self.block_node_inner(inline_value);
        self.leave();
        node
    }

    fn block_node_inner(&mut self, inline_value: bool) -> Result<Node, DynError> {
        let column = self.column();
        let line = self.line;
        if self.at_sequence_entry() {
            if inline_value {
                return Err(self.error(
                    "a list cannot start on the same line as its key; put each `- item` on its \
                     own line below `key:`, or write [a, b]",
                ));
            }
            return self.block_sequence(column);
        }
        if matches!(self.peek(), Some('[' | '{')) {
            let node = self.flow_node()?;
            self.end_line()?;
            return Ok(node);
        }
        self.refuse_unsupported()?;
        let (text, quoted) = self.scalar(Context::Block)?;
        self.skip_inline_blanks();
        if self.at_block_value_indicator() {
            if inline_value {
                return Err(self.error(
                    "a mapping cannot start on the same line as its key (`a: b: c`); put the \
                     nested keys on the following lines, indented, or quote the value",
                ));
            }
            return self.block_mapping(column, Key { text, line });
        }
        self.end_line()?;
        Ok(Node::Scalar { text, quoted, line })
    }

    /// Entries `key: value` at `column`; called at the `:` after the first key.
    fn block_mapping(&mut self, column: usize, first: Key) -> Result<Node, DynError> {
        let line = first.line;
        let mut entries: Vec<(Key, Node)> = Vec::new();
        let mut key = first;
        loop {
            self.bump(); // the ':'
            self.skip_inline_blanks();
            let value_line = self.line;
            let value = if self.at_line_end() {
                self.end_line()?;
                self.skip_blank()?;
                if self.eof() || self.at_marker("...") || self.at_marker("---") {
                    null(value_line)
                } else if self.column() > column {
                    self.block_node(false)?
                } else if self.column() == column && self.at_sequence_entry() {
                    // PyYAML writes lists under a key without indenting the `-`.
                    self.block_sequence(column)?
                } else {
                    null(value_line)
                }
            } else {
                self.block_node(true)?
            };
            if entries.iter().any(|(k, _)| k.text == key.text) {
                return Err(self.error_at(
                    key.line,
                    format!("the key `{}` appears twice; give each field once", key.text),
                ));
            }
            entries.push((key, value));

            self.skip_blank()?;
            if self.eof()
                || self.column() < column
                || self.at_marker("...")
                || self.at_marker("---")
            {
                break;
            }
            if self.column() > column {
                return Err(self.error(
                    "unexpected indentation; a value cannot continue on a more indented line \
                     (quote long strings) and nested keys belong under a key with no value",
                ));
            }
            if self.at_sequence_entry() {
                return Err(self.error(
                    "a list item `-` among the keys of a mapping; indent it under its key",
                ));
            }
            self.refuse_unsupported()?;
            let key_line = self.line;
            let (text, _) = self.scalar(Context::Block)?;
            self.skip_inline_blanks();
            if !self.at_block_value_indicator() {
                return Err(self.error(format!(
                    "expected `:` after the key `{text}`; write `key: value`"
                )));
            }
            key = Key {
                text,
                line: key_line,
            };
        }
        Ok(Node::Map { entries, line })
    }

    /// Entries `- item` at `column`; called at the first `-`.
    fn block_sequence(&mut self, column: usize) -> Result<Node, DynError> {
        let line = self.line;
        let mut items = Vec::new();
        loop {
            self.bump(); // the '-'
            self.skip_inline_blanks();
            let item_line = self.line;
            let item = if self.at_line_end() {
                self.end_line()?;
                self.skip_blank()?;
                if !self.eof() && self.column() > column && !self.at_marker("...") {
                    self.block_node(false)?
                } else {
                    null(item_line)
                }
            } else {
                // `- a: 1` continues with `  b: 2` aligned to `a`: the item's own column.
                self.block_node(false)?
            };
            items.push(item);

            self.skip_blank()?;
            if self.eof() || self.column() < column {
                break;
            }
            if self.column() > column {
                return Err(self.error("unexpected indentation after a list item"));
            }
            if !self.at_sequence_entry() {
                // A key of the mapping this list is the value of.
                break;
            }
        }
        Ok(Node::Seq { items, line })
    }

    fn flow_node(&mut self) -> Result<Node, DynError> {
        self.enter()?;
        let node = self.flow_node_inner();
        self.leave();
        node
    }

    fn flow_node_inner(&mut self) -> Result<Node, DynError> {
        self.skip_flow_blanks();
        match self.peek() {
            None => Err(self.error("the text ends inside [ ] or { }; close the brackets")),
            Some('{') => self.flow_mapping(),
            Some('[') => self.flow_sequence(),
            _ => {
                self.refuse_unsupported()?;
                let line = self.line;
                let (text, quoted) = self.scalar(Context::Flow)?;
                Ok(Node::Scalar { text, quoted, line })
            }
        }
    }

    fn flow_mapping(&mut self) -> Result<Node, DynError> {
        let line = self.line;
        self.bump(); // '{'
        let unclosed = |p: &Self| {
            p.error(format!(
                "the '{{' opened on line {line} is never closed; add '}}'"
            ))
        };
        let mut entries: Vec<(Key, Node)> = Vec::new();
        loop {
            self.skip_flow_blanks();
            match self.peek() {
                None => return Err(unclosed(self)),
                Some('}') => {
                    self.bump();
                    break;
                }
                Some('{' | '[') => {
                    return Err(self.error("a key cannot be a mapping or a list; keys are names"))
                }
                _ => {}
            }
            self.refuse_unsupported()?;
            let key_line = self.line;
            let (text, quoted) = self.scalar(Context::Flow)?;
            if text.is_empty() && !quoted {
                return Err(self.error("expected a key (a field name) before this"));
            }
            self.skip_flow_blanks();
            let value = match self.peek() {
                Some(':') => {
                    self.bump();
                    self.flow_node()?
                }
                Some(',' | '}') => null(self.line),
                None => return Err(unclosed(self)),
                Some(_) => {
                    return Err(self.error(format!(
                        "expected `:` after the key `{text}`; write {{key: value}} with a \
                         space after the colon"
                    )))
                }
            };
            if entries.iter().any(|(k, _)| k.text == text) {
                return Err(self.error_at(
                    key_line,
                    format!("the key `{text}` appears twice; give each field once"),
                ));
            }
            entries.push((
                Key {
                    text,
                    line: key_line,
                },
                value,
            ));
            self.skip_flow_blanks();
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {
                    self.bump();
                    break;
                }
                None => return Err(unclosed(self)),
                Some(_) => {
                    return Err(self.error(
                        "expected ',' or '}' in a mapping; separate entries with commas and \
                         quote values that contain , : [ ] { }",
                    ))
                }
            }
        }
        Ok(Node::Map { entries, line })
    }

    fn flow_sequence(&mut self) -> Result<Node, DynError> {
        let line = self.line;
        self.bump(); // '['
        let unclosed = |p: &Self| {
            p.error(format!(
                "the '[' opened on line {line} is never closed; add ']'"
            ))
        };
        let mut items = Vec::new();
        loop {
            self.skip_flow_blanks();
            match self.peek() {
                None => return Err(unclosed(self)),
                Some(']') => {
                    self.bump();
                    break;
                }
                _ => {}
            }
            items.push(self.flow_node()?);
            self.skip_flow_blanks();
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {
                    self.bump();
                    break;
                }
                Some(':') => {
                    return Err(
                        self.error("a `key: value` pair inside [ ] needs braces: [{a: 1}, {a: 2}]")
                    )
                }
                None => return Err(unclosed(self)),
                Some(_) => {
                    return Err(self.error(
                        "expected ',' or ']' in a list; separate items with commas and quote \
                         items that contain , : [ ] { }",
                    ))
                }
            }
        }
        Ok(Node::Seq { items, line })
    }

    /// A scalar and whether it was quoted.
    fn scalar(&mut self, context: Context) -> Result<(String, bool), DynError> {
        match self.peek() {
            Some('\'') => self.single_quoted().map(|s| (s, true)),
            Some('"') => self.double_quoted().map(|s| (s, true)),
            _ => Ok((self.plain(context), false)),
        }
    }

    /// A plain scalar ends at a line break, at ` #`, at `: ` and, inside brackets, at any of
    /// `,[]{}` (YAML 1.1 §9.1.3, as PyYAML's scanner).
    fn plain(&mut self, context: Context) -> String {
        let start = self.pos;
        let mut previous = ' ';
        while let Some(c) = self.peek() {
            let ends = match c {
                '\n' => true,
                '#' => matches!(previous, ' ' | '\t'),
                ':' => match self.peek_second() {
                    None | Some(' ' | '\t' | '\n') => true,
                    Some(',' | '[' | ']' | '{' | '}') => context == Context::Flow,
                    Some(_) => false,
                },
                ',' | '[' | ']' | '{' | '}' => context == Context::Flow,
                _ => false,
            };
            if ends {
                break;
            }
            previous = c;
            self.bump();
        }
        self.text[start..self.pos]
            .trim_end_matches([' ', '\t'])
            .to_owned()
    }

    fn single_quoted(&mut self) -> Result<String, DynError> {
        let line = self.line;
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(unterminated(line, '\'')),
                Some('\'') if self.peek() == Some('\'') => {
                    self.bump();
                    out.push('\'');
                }
                Some('\'') => return Ok(out),
                Some('\n') => self.fold_line_break(&mut out),
                Some(c) => out.push(c),
            }
        }
    }

    fn double_quoted(&mut self) -> Result<String, DynError> {
        let line = self.line;
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(unterminated(line, '"')),
                Some('"') => return Ok(out),
                Some('\n') => self.fold_line_break(&mut out),
                Some('\\') => {
                    let escaped = match self.bump() {
                        None => return Err(unterminated(line, '"')),
                        Some('\n') => {
                            // An escaped line break joins the lines without a space.
                            self.skip_inline_blanks();
                            continue;
                        }
                        Some('x') => self.hex_escape(2)?,
                        Some('u') => self.hex_escape(4)?,
                        Some('U') => self.hex_escape(8)?,
                        Some(c) => match simple_escape(c) {
                            Some(e) => e,
                            None => {
                                return Err(self.error(format!(
                                    "unknown escape \\{c} in a double-quoted string; write \\\\ \
                                     for a backslash, or use single quotes"
                                )))
                            }
                        },
                    };
                    out.push(escaped);
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn hex_escape(&mut self, digits: usize) -> Result<char, DynError> {
        let start = self.pos;
        for _ in 0..digits {
            match self.peek() {
                Some(c) if c.is_ascii_hexdigit() => {
                    self.bump();
                }
                _ => {
                    return Err(self.error(format!(
                        "expected {digits} hex digits in this escape; e.g. \\x41 or \\u00e9"
                    )))
                }
            }
        }
        u32::from_str_radix(&self.text[start..self.pos], 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| self.error("the escape is not a Unicode character"))
    }

    /// Line folding inside quotes (YAML 1.1 §4.6.5): a single break becomes a space, `n` empty
    /// lines become `n` line feeds, and the blanks around the break disappear.
    fn fold_line_break(&mut self, out: &mut String) {
        let kept = out.trim_end_matches([' ', '\t']).len();
        out.truncate(kept);
        let mut empty_lines = 0;
        loop {
            self.skip_inline_blanks();
            if self.peek() == Some('\n') {
                self.bump();
                empty_lines += 1;
            } else {
                break;
            }
        }
        if empty_lines == 0 {
            out.push(' ');
        } else {
            out.push_str(&"\n".repeat(empty_lines));
        }
    }
}

fn null(line: usize) -> Node {
    Node::Scalar {
        text: String::new(),
        quoted: false,
        line,
    }
}

fn unterminated(line: usize, quote: char) -> DynError {
    DynError::Yaml {
        line,
        column: 1,
        message: format!(
            "the string opened with {quote} on this line is never closed; add {quote}"
        ),
    }
}

/// YAML 1.1 §5.7 escapes other than hex and line continuation.
fn simple_escape(c: char) -> Option<char> {
    Some(match c {
        '0' => '\0',
        'a' => '\x07',
        'b' => '\x08',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\x0b',
        'f' => '\x0c',
        'r' => '\r',
        'e' => '\x1b',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
