//! A reader for the YAML that ROS 2 parameter files and `-p name:=value` overrides use: block
//! mappings and sequences (also the indentless `key:\n- item` form PyYAML writes), flow
//! sequences and mappings (which may span lines), plain, single- and double-quoted scalars,
//! comments, one optional `---` document.
//!
//! Not supported, each refused with an error naming it: anchors, aliases, tags, block scalars
//! (`|`, `>`), multi-line plain scalars, several documents. `roslite-msg-gen` has a fuller
//! reader for messages; the runtime keeps this small one so that it does not depend on the
//! code generator.
//!
//! The reader does not decide what a scalar means (`5` stays the text `5`, with whether it
//! was quoted); `overrides` interprets it the way `rcl_yaml_param_parser` does.

use std::fmt;

/// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
const MAX_NESTING: usize = 64;

/// One YAML node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Yaml {
    Scalar {
        text: String,
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
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for YamlError {}

/// A source line with its comment removed and its indentation measured.
#[derive(Debug)]
struct Line {
    number: usize,
    indent: usize,
    text: String,
}

/// Parses one document; `None` when it holds nothing but whitespace and comments.
pub(crate) fn parse(text: &str) -> Result<Option<Yaml>, YamlError> {
    let lines = logical_lines(text)?;
    if lines.is_empty() {
        return Ok(None);
    }
    let mut parser = Parser { lines, pos: 0 };
    let indent = parser.lines[0].indent;
    let node = parser.block(indent, 0)?;
    if let Some(line) = parser.lines.get(parser.pos) {
        return Err(error(
            line.number,
            "unexpected text after the document; check indentation",
        ));
    }
    Ok(Some(node))
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

fn error(line: usize, message: impl Into<String>) -> YamlError {
    YamlError {
        line,
        message: message.into(),
    }
}

/// Splits `text` into non-blank lines without comments; a flow collection left open at the end
/// of a line continues on the next ones and is joined into one line.
fn logical_lines(text: &str) -> Result<Vec<Line>, YamlError> {
    let mut out: Vec<Line> = Vec::new();
    let mut open_depth = 0usize;
    let mut seen_document = false;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.contains('\t') && raw.trim_start_matches(' ').starts_with('\t') {
            return Err(error(number, "tabs cannot indent YAML; use spaces"));
        }
        let (content, depth_change) = strip_comment(raw, number)?;
        let trimmed = content.trim_end();
        if open_depth > 0 {
            let last = out
                .last_mut()
                .expect("internal bug: open flow without a line");
            last.text.push(' ');
            last.text.push_str(trimmed.trim_start());
            open_depth = checked_depth(open_depth, depth_change, number)?;
            continue;
        }
        if trimmed.trim().is_empty() {
            continue;
        }
        if trimmed == "---" || trimmed.starts_with("--- ") {
            if seen_document || !out.is_empty() {
                return Err(error(
                    number,
                    "several YAML documents given; give exactly one",
                ));
            }
            seen_document = true;
            let rest = trimmed[3..].trim();
            if !rest.is_empty() {
                return Err(error(number, "put the document on the lines after '---'"));
            }
            continue;
        }
        if trimmed == "..." {
            break;
        }
        let indent = trimmed.len() - trimmed.trim_start().len();
        open_depth = checked_depth(0, depth_change, number)?;
        out.push(Line {
            number,
            indent,
            text: trimmed.trim_start().to_owned(),
        });
    }
    if open_depth > 0 {
        let line = out.last().map_or(1, |l| l.number);
        return Err(error(line, "a '[' or '{' is never closed"));
    }
    Ok(out)
}

fn checked_depth(depth: usize, change: isize, line: usize) -> Result<usize, YamlError> {
    depth
        .checked_add_signed(change)
        .ok_or_else(|| error(line, "a ']' or '}' closes nothing"))
}

/// The line without its comment, and how much it changes the flow nesting depth.
fn strip_comment(line: &str, number: usize) -> Result<(&str, isize), YamlError> {
    let bytes = line.as_bytes();
    let mut depth = 0isize;
    let mut i = 0;
    // A quote opens a quoted scalar only where a scalar can start, so `it's` stays plain.
    let mut at_token_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'#' if i == 0 || bytes[i - 1] == b' ' => return Ok((&line[..i], depth)),
            b'\'' | b'"' if at_token_start => {
                i = skip_quoted(bytes, i)
                    .ok_or_else(|| error(number, "a quoted string is never closed"))?;
                at_token_start = false;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            _ => {}
        }
        at_token_start = match c {
            b' ' => at_token_start,
            b':' | b'-' | b'[' | b'{' | b',' => true,
            _ => false,
        };
        i += 1;
    }
    Ok((line, depth))
}

/// The index just past the quoted scalar starting at `start`, or `None` if it is not closed.
fn skip_quoted(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

struct Parser {
    lines: Vec<Line>,
    pos: usize,
}

impl Parser {
    fn block(&mut self, indent: usize, nesting: usize) -> Result<Yaml, YamlError> {
        let line = &self.lines[self.pos];
        if nesting > MAX_NESTING {
            return Err(error(line.number, "nested too deeply"));
        }
        if is_seq_item(&line.text) {
            self.block_seq(indent, nesting)
        } else if find_map_colon(&line.text).is_none() {
            // A lone scalar or flow collection (`5`, `[1, 2]`), as after `-p name:=`.
            let (text, number) = (line.text.clone(), line.number);
            self.pos += 1;
            inline_value(&text, number, nesting)
        } else {
            self.block_map(indent, nesting)
        }
    }

    fn block_seq(&mut self, indent: usize, nesting: usize) -> Result<Yaml, YamlError> {
        let mut items = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.indent < indent || (line.indent == indent && !is_seq_item(&line.text)) {
                break;
            }
            if line.indent > indent {
                return Err(error(line.number, "unexpected indentation in a sequence"));
            }
            let number = line.number;
            let rest = line.text[1..].trim_start().to_owned();
            self.pos += 1;
            if rest.is_empty() {
                items.push(self.nested_value(indent, nesting)?);
            } else if find_map_colon(&rest).is_some() && !rest.starts_with(['[', '{']) {
                return Err(error(
                    number,
                    "mappings inside sequences are not supported in parameter files",
                ));
            } else {
                items.push(inline_value(&rest, number, nesting)?);
            }
        }
        Ok(Yaml::Seq(items))
    }

    fn block_map(&mut self, indent: usize, nesting: usize) -> Result<Yaml, YamlError> {
        let mut entries: Vec<(String, Yaml)> = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return Err(error(line.number, "unexpected indentation in a mapping"));
            }
            if is_seq_item(&line.text) {
                return Err(error(
                    line.number,
                    "a sequence item where a 'key:' was expected",
                ));
            }
            let number = line.number;
            let colon = find_map_colon(&line.text).ok_or_else(|| {
                error(
                    number,
                    "expected 'key: value' (multi-line plain scalars are not supported)",
                )
            })?;
            let key = scalar_text(line.text[..colon].trim(), number)?.0;
            let rest = line.text[colon + 1..].trim().to_owned();
            self.pos += 1;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(error(number, format!("key '{key}' appears twice")));
            }
            let value = if rest.is_empty() {
                self.nested_value(indent, nesting)?
            } else {
                inline_value(&rest, number, nesting)?
            };
            entries.push((key, value));
        }
        Ok(Yaml::Map(entries))
    }

    /// The value of a `key:` or `-` with nothing after it: a more indented block, an
    /// indentless sequence (after a key), or null.
    fn nested_value(&mut self, parent_indent: usize, nesting: usize) -> Result<Yaml, YamlError> {
        match self.lines.get(self.pos) {
            Some(next) if next.indent > parent_indent => {
                let indent = next.indent;
                self.block(indent, nesting + 1)
            }
            Some(next)
                if next.indent == parent_indent
                    && is_seq_item(&next.text)
                    && !is_seq_item(&self.lines[self.pos - 1].text) =>
            {
                self.block_seq(parent_indent, nesting + 1)
            }
            _ => Ok(Yaml::Scalar {
                text: String::new(),
                quoted: false,
            }),
        }
    }
}

fn is_seq_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// The byte index of the `:` that separates a mapping key from its value: followed by a space
/// or the end of the line, outside quotes and brackets.
fn find_map_colon(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    if matches!(bytes.first(), Some(b'\'' | b'"')) {
        i = skip_quoted(bytes, 0)?;
    }
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && matches!(bytes.get(i + 1), None | Some(b' ')) => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A value written on the same line as its key or dash.
fn inline_value(text: &str, line: usize, nesting: usize) -> Result<Yaml, YamlError> {
    if text.starts_with(['[', '{']) {
        let mut flow = Flow {
            bytes: text.as_bytes(),
            text,
            pos: 0,
            line,
        };
        let node = flow.value(nesting)?;
        flow.skip_spaces();
        if flow.pos != text.len() {
            return Err(error(line, "unexpected text after a flow collection"));
        }
        return Ok(node);
    }
    let (text, quoted) = scalar_text(text, line)?;
    Ok(Yaml::Scalar { text, quoted })
}

/// A complete scalar: quoted (unescaped) or plain (checked for unsupported syntax).
fn scalar_text(text: &str, line: usize) -> Result<(String, bool), YamlError> {
    match text.as_bytes().first() {
        Some(b'\'' | b'"') => {
            let end = skip_quoted(text.as_bytes(), 0)
                .ok_or_else(|| error(line, "a quoted string is never closed"))?;
            if end != text.len() {
                return Err(error(line, "unexpected text after a quoted string"));
            }
            Ok((unquote(text, line)?, true))
        }
        Some(b'|' | b'>') => Err(error(line, "block scalars ('|', '>') are not supported")),
        Some(b'&') => Err(error(line, "anchors ('&') are not supported")),
        Some(b'*') => Err(error(line, "aliases ('*') are not supported")),
        Some(b'!') => Err(error(line, "tags ('!') are not supported")),
        _ => Ok((text.to_owned(), false)),
    }
}

/// The content of a quoted scalar given with its quotes.
fn unquote(text: &str, line: usize) -> Result<String, YamlError> {
    let inner = &text[1..text.len() - 1];
    if text.starts_with('\'') {
        return Ok(inner.replace("''", "'"));
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next().unwrap_or('\\');
        out.push(match escaped {
            '0' => '\0',
            'a' => '\x07',
            'b' => '\x08',
            't' => '\t',
            'n' => '\n',
            'v' => '\x0b',
            'f' => '\x0c',
            'r' => '\r',
            'e' => '\x1b',
            ' ' | '"' | '/' | '\\' => escaped,
            'x' | 'u' | 'U' => {
                let digits = match escaped {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(digits).collect();
                u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == digits)
                    .and_then(char::from_u32)
                    .ok_or_else(|| error(line, format!("bad escape '\\{escaped}{hex}'")))?
            }
            other => return Err(error(line, format!("unknown escape '\\{other}'"))),
        });
    }
    Ok(out)
}

/// A flow collection (`[a, b]`, `{k: v}`) on one logical line.
struct Flow<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl Flow<'_> {
    fn skip_spaces(&mut self) {
        while self.bytes.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
    }

    fn value(&mut self, nesting: usize) -> Result<Yaml, YamlError> {
        if nesting > MAX_NESTING {
            return Err(error(self.line, "nested too deeply"));
        }
        self.skip_spaces();
        match self.bytes.get(self.pos) {
            Some(b'[') => self
                .collection(b']', nesting)
                .map(|items| Yaml::Seq(items.into_iter().map(|(_, v)| v).collect())),
            Some(b'{') => {
                let entries = self.collection(b'}', nesting)?;
                let mut map = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let key = key.ok_or_else(|| {
                        error(self.line, "a flow mapping entry needs 'key: value'")
                    })?;
                    map.push((key, value));
                }
                Ok(Yaml::Map(map))
            }
            _ => self
                .scalar()
                .map(|(text, quoted)| Yaml::Scalar { text, quoted }),
        }
    }

    /// Items up to `close`; each with its key when written `key: value`.
    fn collection(
        &mut self,
        close: u8,
        nesting: usize,
    ) -> Result<Vec<(Option<String>, Yaml)>, YamlError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_spaces();
            if self.bytes.get(self.pos) == Some(&close) {
                self.pos += 1;
                return Ok(items);
            }
            let first = self.value(nesting + 1)?;
            self.skip_spaces();
            let item = if self.bytes.get(self.pos) == Some(&b':') {
                self.pos += 1;
                let Yaml::Scalar { text: key, .. } = first else {
                    return Err(error(self.line, "flow mapping keys must be scalars"));
                };
                (Some(key), self.value(nesting + 1)?)
            } else {
                (None, first)
            };
            items.push(item);
            self.skip_spaces();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(c) if *c == close => {}
                _ => {
                    return Err(error(
                        self.line,
                        format!("expected ',' or '{}' in a flow collection", close as char),
                    ))
                }
            }
        }
    }

    fn scalar(&mut self) -> Result<(String, bool), YamlError> {
        let start = self.pos;
        if matches!(self.bytes.get(start), Some(b'\'' | b'"')) {
            let end = skip_quoted(self.bytes, start)
                .ok_or_else(|| error(self.line, "a quoted string is never closed"))?;
            self.pos = end;
            return Ok((unquote(&self.text[start..end], self.line)?, true));
        }
        while let Some(&c) = self.bytes.get(self.pos) {
            let ends_key = c == b':' && matches!(self.bytes.get(self.pos + 1), None | Some(b' '));
            if matches!(c, b',' | b']' | b'}' | b'[' | b'{') || ends_key {
                break;
            }
            self.pos += 1;
        }
        let text = self.text[start..self.pos].trim();
        scalar_text(text, self.line)
    }
}
