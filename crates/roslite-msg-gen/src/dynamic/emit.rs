//! Prints a message the way `ros2 topic echo` does, byte for byte where it matters to people
//! who diff or grep the output.
//!
//! `ros2 topic echo` calls rosidl_runtime_py's `message_to_yaml`, which turns the message into
//! an ordered dict (`message_to_ordereddict`, applying `--no-arr`, `--no-str` and truncation)
//! and hands it to PyYAML's `yaml.dump(allow_unicode=True, width=sys.maxsize)`. So this file
//! has two halves: `Converter` mirrors the dict conversion (including its Python value types:
//! a `byte` is a one-character string, a `float32` prints as the double it widens to), and the
//! writers mirror the parts of PyYAML's `Emitter` that such a tree reaches: block mappings with
//! two-space indentation, sequences under a key not indented, `{}`/`[]` for empty collections,
//! and PyYAML's choice between plain, single-quoted and double-quoted strings.

use std::fmt::Write as _;

use super::resolve::resolves_to_non_string;
use super::{Value, YamlOptions, MAX_DEPTH};
use crate::ast::{BaseType, Collection, FieldType, MessageSpec, Primitive, TypeName};
use crate::registry::InterfaceSet;

/// Prints `value`, a message of type `ty`, as `ros2 topic echo` would (without the `---`
/// line echo adds after each message). The type supplies what the value alone does not: the
/// array types in `--no-arr` placeholders, and which integers are `byte`s. Fields the type
/// does not know still print, from the value alone.
pub fn to_yaml(set: &InterfaceSet, ty: &TypeName, value: &Value, opts: &YamlOptions) -> String {
    let converter = Converter { set, opts };
    let base = BaseType::Named(ty.clone());
    let tree = converter.value(Some(&base), value, 0);
    let mut out = String::new();
    if opts.flow_style {
        flow(&tree, 0, &mut out);
        out.push('\n');
    } else {
        match &tree {
            Y::Map(entries) if !entries.is_empty() => block_mapping(entries, 0, false, &mut out),
            Y::Seq(items) if !items.is_empty() => block_sequence(items, 0, false, &mut out),
            other => {
                flow(other, 0, &mut out);
                out.push('\n');
            }
        }
    }
    out
}

/// The Python values `message_to_ordereddict` produces.
enum Y {
    Map(Vec<(String, Y)>),
    Seq(Vec<Y>),
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
}

struct Converter<'a> {
    set: &'a InterfaceSet,
    opts: &'a YamlOptions,
}

impl Converter<'_> {
    fn message(&self, spec: Option<&MessageSpec>, fields: &[(String, Value)], depth: usize) -> Y {
        let entries = fields.iter().enumerate().map(|(index, (name, value))| {
            let declared = spec.and_then(|spec| match spec.fields.get(index) {
                Some(field) if field.name == *name => Some(field),
                _ => spec.fields.iter().find(|field| field.name == *name),
            });
            (
                name.clone(),
                self.field(declared.map(|field| &field.ty), value, depth),
            )
        });
        Y::Map(entries.collect())
    }

    fn field(&self, ty: Option<&FieldType>, value: &Value, depth: usize) -> Y {
        match value {
            Value::Array(items) if self.opts.no_arr => Y::Str(placeholder(ty, items.len())),
            Value::Bytes(bytes) if self.opts.no_arr => Y::Str(placeholder(ty, bytes.len())),
            _ => self.value(ty.map(|ty| &ty.base), value, depth),
        }
    }

    /// `base` is the declared element type, if known.
    fn value(&self, base: Option<&BaseType>, value: &Value, depth: usize) -> Y {
        // Values from decode or from_yaml nest no deeper than their type; a hand-built value
        // might, and must not exhaust the stack.
        if depth > 2 * MAX_DEPTH {
            return Y::Str("...".to_owned());
        }
        let is_byte = matches!(base, Some(BaseType::Primitive(Primitive::Byte)));
        match value {
            Value::Bool(b) => Y::Bool(*b),
            Value::Int(i) => Y::Int((*i).into()),
            Value::UInt(u) if is_byte && *u <= 0xff => Y::Str(self.byte_text(*u as u8)),
            Value::UInt(u) => Y::Int((*u).into()),
            Value::Float(x) => Y::Float(*x),
            Value::String(text) if self.opts.no_str => {
                Y::Str(format!("<string length: <{}>>", text.chars().count()))
            }
            Value::String(text) => Y::Str(self.truncate(text)),
            Value::Array(items) => self.list(
                items.iter().map(|item| self.value(base, item, depth + 1)),
                items.len(),
            ),
            Value::Bytes(bytes) => self.list(
                bytes.iter().map(|&b| {
                    if is_byte {
                        Y::Str(self.byte_text(b))
                    } else {
                        Y::Int(b.into())
                    }
                }),
                bytes.len(),
            ),
            Value::Struct(fields) => {
                let spec = match base {
                    Some(BaseType::Named(name)) => self.set.message(name),
                    _ => None,
                };
                self.message(spec, fields, depth + 1)
            }
        }
    }

    /// rclpy holds a `byte` as a one-byte `bytes`, which the dict conversion turns into the
    /// character with that code (`chr`).
    fn byte_text(&self, b: u8) -> String {
        self.truncate(&char::from(b).to_string())
    }

    fn list(&self, items: impl Iterator<Item = Y>, len: usize) -> Y {
        match self.opts.truncate_length {
            Some(n) if len > n => {
                let mut kept: Vec<Y> = items.take(n).collect();
                kept.push(Y::Str("...".to_owned()));
                Y::Seq(kept)
            }
            _ => Y::Seq(items.collect()),
        }
    }

    fn truncate(&self, text: &str) -> String {
        match self.opts.truncate_length {
            Some(n) if text.chars().count() > n => {
                let mut cut: String = text.chars().take(n).collect();
                cut.push_str("...");
                cut
            }
            _ => text.to_owned(),
        }
    }
}

/// rosidl_runtime_py's `__abbreviate_array_info`, which names element types as IDL does.
fn placeholder(ty: Option<&FieldType>, len: usize) -> String {
    let Some(ty) = ty else {
        return "unknown".to_owned();
    };
    let name = match &ty.base {
        BaseType::Primitive(p) => match p {
            Primitive::Bool => "boolean",
            Primitive::Byte => "octet",
            // rosidl_adapter maps `.msg` char to IDL uint8.
            Primitive::Char => "uint8",
            Primitive::Float32 => "float",
            Primitive::Float64 => "double",
            other => other.keyword(),
        }
        .to_owned(),
        BaseType::String { .. } => "string".to_owned(),
        BaseType::WString { .. } => "wstring".to_owned(),
        BaseType::Named(name) => name.to_string(),
    };
    match ty.collection {
        Collection::Array(n) => format!("<array type: {name}[{n}]>"),
        Collection::BoundedSequence(n) => format!("<sequence type: {name}[{n}], length: {len}>"),
        Collection::UnboundedSequence => format!("<sequence type: {name}, length: {len}>"),
        Collection::Single => "unknown".to_owned(),
    }
}

fn spaces(out: &mut String, n: usize) {
    out.push_str(&" ".repeat(n));
}

/// Where a scalar goes, which decides its style (PyYAML `Emitter.choose_scalar_style`).
#[derive(Clone, Copy)]
struct Place {
    flow: bool,
    key: bool,
    /// Indentation of continuation lines of a multi-line quoted string.
    indent: usize,
}

fn block_mapping(entries: &[(String, Y)], indent: usize, inline_first: bool, out: &mut String) {
    for (index, (key, value)) in entries.iter().enumerate() {
        if index > 0 || !inline_first {
            spaces(out, indent);
        }
        string(
            key,
            Place {
                flow: false,
                key: true,
                indent: indent + 2,
            },
            out,
        );
        out.push(':');
        match value {
            Y::Map(inner) if !inner.is_empty() => {
                out.push('\n');
                block_mapping(inner, indent + 2, false, out);
            }
            Y::Seq(items) if !items.is_empty() => {
                out.push('\n');
                // PyYAML does not indent a sequence that is a mapping value.
                block_sequence(items, indent, false, out);
            }
            other => {
                out.push(' ');
                scalar(
                    other,
                    Place {
                        flow: false,
                        key: false,
                        indent: indent + 2,
                    },
                    out,
                );
                out.push('\n');
            }
        }
    }
}

fn block_sequence(items: &[Y], indent: usize, inline_first: bool, out: &mut String) {
    for (index, item) in items.iter().enumerate() {
        if index > 0 || !inline_first {
            spaces(out, indent);
        }
        out.push_str("- ");
        match item {
            Y::Map(inner) if !inner.is_empty() => block_mapping(inner, indent + 2, true, out),
            Y::Seq(inner) if !inner.is_empty() => block_sequence(inner, indent + 2, true, out),
            other => {
                scalar(
                    other,
                    Place {
                        flow: false,
                        key: false,
                        indent: indent + 2,
                    },
                    out,
                );
                out.push('\n');
            }
        }
    }
}

/// Flow style; `level` counts the enclosing flow collections (PyYAML indents each by 2).
fn flow(node: &Y, level: usize, out: &mut String) {
    let place = Place {
        flow: true,
        key: false,
        indent: 2 * level + 2,
    };
    match node {
        Y::Map(entries) => {
            out.push('{');
            for (index, (key, value)) in entries.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                let key_place = Place {
                    flow: true,
                    key: true,
                    indent: 2 * level + 4,
                };
                string(key, key_place, out);
                out.push_str(": ");
                flow(value, level + 1, out);
            }
            out.push('}');
        }
        Y::Seq(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                flow(item, level + 1, out);
            }
            out.push(']');
        }
        other => scalar(other, place, out),
    }
}

fn scalar(node: &Y, place: Place, out: &mut String) {
    match node {
        Y::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Y::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Y::Float(x) => out.push_str(&float_text(*x)),
        Y::Str(text) => string(text, place, out),
        Y::Map(_) => out.push_str("{}"),
        Y::Seq(_) => out.push_str("[]"),
    }
}

/// PyYAML `represent_float`: Python's `repr` (shortest round-trip digits, exponent form when
/// the decimal point would be more than 16 digits right or 4 left), with `.0` added to a
/// mantissa without a point so YAML 1.1 still reads a float, and `.inf`/`.nan`.
fn float_text(x: f64) -> String {
    if x.is_nan() {
        return ".nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    let repr = crate::python::float_repr(x);
    if repr.contains('.') {
        repr
    } else {
        repr.replacen('e', ".0e", 1)
    }
}

fn string(text: &str, place: Place, out: &mut String) {
    let analysis = analyze(text);
    let plain_allowed = if place.flow {
        analysis.flow_plain
    } else {
        analysis.block_plain
    };
    if plain_allowed
        && !(place.key && (analysis.empty || analysis.multiline))
        && !resolves_to_non_string(text)
    {
        out.push_str(text);
    } else if analysis.single_quoted && !(place.key && analysis.multiline) {
        single_quoted(text, place.indent, out);
    } else {
        double_quoted(text, out);
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank_or_break(c: char) -> bool {
    matches!(c, '\0' | ' ' | '\t' | '\r') || is_break(c)
}

/// Which styles a string may take: PyYAML `Emitter.analyze_scalar` with `allow_unicode`.
struct Analysis {
    empty: bool,
    multiline: bool,
    flow_plain: bool,
    block_plain: bool,
    single_quoted: bool,
}

fn analyze(text: &str) -> Analysis {
    if text.is_empty() {
        return Analysis {
            empty: true,
            multiline: false,
            flow_plain: false,
            block_plain: true,
            single_quoted: true,
        };
    }
    let chars: Vec<char> = text.chars().collect();
    let last = chars.len() - 1;
    let document_marker = text.starts_with("---") || text.starts_with("...");
    let (mut block_indicators, mut flow_indicators) = (document_marker, document_marker);
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_blank = true;
    let mut followed_by_blank = chars.len() == 1 || is_blank_or_break(chars[1]);
    for (index, &c) in chars.iter().enumerate() {
        if index == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) {
                flow_indicators = true;
                block_indicators = true;
            }
            if c == '?' || c == ':' {
                flow_indicators = true;
                block_indicators |= followed_by_blank;
            }
            if c == '-' && followed_by_blank {
                flow_indicators = true;
                block_indicators = true;
            }
        } else {
            if ",?[]{}".contains(c) {
                flow_indicators = true;
            }
            if c == ':' {
                flow_indicators = true;
                block_indicators |= followed_by_blank;
            }
            if c == '#' && preceded_by_blank {
                flow_indicators = true;
                block_indicators = true;
            }
        }
        line_breaks |= is_break(c);
        if !(c == '\n' || (' '..='~').contains(&c)) {
            let printable = (c == '\u{85}'
                || ('\u{a0}'..='\u{d7ff}').contains(&c)
                || ('\u{e000}'..='\u{fffd}').contains(&c)
                || ('\u{10000}'..'\u{10ffff}').contains(&c))
                && c != '\u{feff}';
            special |= !printable;
        }
        if c == ' ' {
            leading_space |= index == 0;
            trailing_space |= index == last;
            break_space |= previous_break;
            (previous_space, previous_break) = (true, false);
        } else if is_break(c) {
            leading_break |= index == 0;
            trailing_break |= index == last;
            space_break |= previous_space;
            (previous_space, previous_break) = (false, true);
        } else {
            (previous_space, previous_break) = (false, false);
        }
        preceded_by_blank = is_blank_or_break(c);
        followed_by_blank = index + 2 >= chars.len() || is_blank_or_break(chars[index + 2]);
    }
    let mut flow_plain = true;
    let mut block_plain = true;
    let mut single_quoted = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        (flow_plain, block_plain) = (false, false);
    }
    if break_space || space_break || special {
        (flow_plain, block_plain, single_quoted) = (false, false, false);
    }
    if line_breaks {
        (flow_plain, block_plain) = (false, false);
    }
    if flow_indicators {
        flow_plain = false;
    }
    if block_indicators {
        block_plain = false;
    }
    Analysis {
        empty: false,
        multiline: line_breaks,
        flow_plain,
        block_plain,
        single_quoted,
    }
}

/// PyYAML `Emitter.write_single_quoted` without line wrapping (`width=sys.maxsize`): quotes
/// doubled, and a run of line breaks written with one extra break, then indentation.
fn single_quoted(text: &str, indent: usize, out: &mut String) {
    out.push('\'');
    let chars: Vec<char> = text.chars().collect();
    let (mut spaces_run, mut breaks_run) = (false, false);
    let mut start = 0;
    for end in 0..=chars.len() {
        let c = chars.get(end).copied();
        if spaces_run {
            if c != Some(' ') {
                out.extend(&chars[start..end]);
                start = end;
            }
        } else if breaks_run {
            if !c.is_some_and(is_break) {
                if chars[start] == '\n' {
                    out.push('\n');
                }
                out.extend(&chars[start..end]);
                spaces(out, indent);
                start = end;
            }
        } else if !matches!(c, Some(c) if c != ' ' && c != '\'' && !is_break(c)) && start < end {
            out.extend(&chars[start..end]);
            start = end;
        }
        if c == Some('\'') {
            out.push_str("''");
            start = end + 1;
        }
        if let Some(c) = c {
            spaces_run = c == ' ';
            breaks_run = is_break(c);
        }
    }
    out.push('\'');
}

/// PyYAML `Emitter.write_double_quoted` with `allow_unicode`, without line wrapping.
fn double_quoted(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        let printable = (' '..='~').contains(&c)
            || ('\u{a0}'..='\u{d7ff}').contains(&c)
            || ('\u{e000}'..='\u{fffd}').contains(&c);
        if printable && !matches!(c, '"' | '\\' | '\u{feff}') {
            out.push(c);
            continue;
        }
        let short = match c {
            '\0' => Some('0'),
            '\x07' => Some('a'),
            '\x08' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\x0b' => Some('v'),
            '\x0c' => Some('f'),
            '\r' => Some('r'),
            '\x1b' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        let code = u32::from(c);
        let _ = match short {
            Some(letter) => write!(out, "\\{letter}"),
            None if code <= 0xff => write!(out, "\\x{code:02X}"),
            None if code <= 0xffff => write!(out, "\\u{code:04X}"),
            None => write!(out, "\\U{code:08X}"),
        };
    }
    out.push('"');
}

#[cfg(test)]
mod tests;
