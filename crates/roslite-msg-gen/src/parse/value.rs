//! Literal values: constant values and field defaults.
//!
//! Follows `rosidl_adapter/parser.py` (`parse_primitive_value_string`, `parse_value_string`,
//! `parse_string_array_value_string`) and, for escapes, what the default becomes once
//! `rosidl_adapter` has written it into IDL (`string_to_idl_string_literal` decodes Python
//! `unicode_escape` sequences). The functions here return the message of a
//! [`super::ParseError`] without file and line; the caller adds them.

use crate::ast::{BaseType, Collection, FieldType, Literal, Primitive};

use super::describe;

/// Parses the default value of a field of type `ty` (never a message type). `text` runs to the
/// end of the line and may end in a comment.
pub(super) fn parse_default(ty: &FieldType, ty_text: &str, text: &str) -> Result<Literal, String> {
    if ty.collection == Collection::Single {
        return parse_scalar(&ty.base, text);
    }
    let Some(mut rest) = text.trim_start().strip_prefix('[') else {
        return Err(format!(
            "expected '[' to start an array value for type '{ty_text}', found {}",
            describe(text)
        ));
    };
    let mut elements = Vec::new();
    rest = rest.trim_start();
    if let Some(after) = rest.strip_prefix(']') {
        rest = after;
    } else {
        loop {
            let (element, after) = scan_element(&ty.base, rest.trim_start())?;
            elements.push(element);
            rest = after.trim_start();
            match rest.chars().next() {
                Some(',') => rest = &rest[1..],
                Some(']') => {
                    rest = &rest[1..];
                    break;
                }
                _ => {
                    return Err(format!(
                        "expected ',' or ']' after array element {}, found {}",
                        elements.len(),
                        describe(rest)
                    ));
                }
            }
        }
    }
    expect_end(rest, "the closing ']'")?;
    match ty.collection {
        Collection::Array(n) if elements.len() != n => Err(format!(
            "expected exactly {n} elements for type '{ty_text}', found {}",
            elements.len()
        )),
        Collection::BoundedSequence(n) if elements.len() > n => Err(format!(
            "expected at most {n} elements for type '{ty_text}', found {}",
            elements.len()
        )),
        _ => Ok(Literal::Array(elements)),
    }
}

/// Parses the value of a constant of a primitive or unbounded string type.
pub(super) fn parse_constant(ty: &BaseType, ty_text: &str, text: &str) -> Result<Literal, String> {
    let is_string = matches!(ty, BaseType::String { .. } | BaseType::WString { .. });
    let (raw, _) = scan_unquoted(text.trim_start(), false);
    if !is_string && raw.is_empty() {
        return Err(format!(
            "expected a value after '=' for type '{ty_text}', found {}",
            describe(text)
        ));
    }
    parse_scalar(ty, text)
}

/// One value of a non-array type; the rest of `text` may only be a comment.
fn parse_scalar(base: &BaseType, text: &str) -> Result<Literal, String> {
    let text = text.trim_start();
    match base {
        BaseType::String { bound } | BaseType::WString { bound } => {
            let (value, rest) = if text.starts_with(['"', '\'']) {
                scan_quoted(text)?
            } else {
                let (raw, rest) = scan_unquoted(text, false);
                (unescape(raw)?, rest)
            };
            expect_end(rest, "the string")?;
            check_bound(base, *bound, &value)?;
            Ok(Literal::String(value))
        }
        BaseType::Primitive(p) => {
            let (raw, rest) = scan_unquoted(text, false);
            debug_assert!(rest.is_empty() || rest.starts_with('#'));
            parse_primitive(*p, raw)
        }
        BaseType::Named(_) => {
            Err("internal bug: message-typed values are rejected before parsing".to_owned())
        }
    }
}

/// One array element and the text after it.
fn scan_element<'a>(base: &BaseType, text: &'a str) -> Result<(Literal, &'a str), String> {
    if let BaseType::String { bound } | BaseType::WString { bound } = base {
        if text.starts_with(['"', '\'']) {
            let (value, rest) = scan_quoted(text)?;
            check_bound(base, *bound, &value)?;
            return Ok((Literal::String(value), rest));
        }
    }
    let (raw, rest) = scan_unquoted(text, true);
    if raw.is_empty() {
        return Err(format!(
            "expected an array element, found {}",
            describe(rest)
        ));
    }
    let element = match base {
        BaseType::Primitive(p) => parse_primitive(*p, raw)?,
        BaseType::String { bound } | BaseType::WString { bound } => {
            let value = unescape(raw)?;
            check_bound(base, *bound, &value)?;
            Literal::String(value)
        }
        BaseType::Named(_) => {
            return Err("internal bug: message-typed values are rejected before parsing".into())
        }
    };
    Ok((element, rest))
}

/// Splits off an unquoted token, which ends at a comment (and, inside arrays, at `,` or `]`).
fn scan_unquoted(text: &str, in_array: bool) -> (&str, &str) {
    let end = text
        .find(|c| c == '#' || (in_array && (c == ',' || c == ']')))
        .unwrap_or(text.len());
    (text[..end].trim(), &text[end..])
}

/// Reads a string in single or double quotes starting at `text[0]`; returns the unescaped
/// contents and the text after the closing quote.
fn scan_quoted(text: &str) -> Result<(String, &str), String> {
    let quote = text
        .chars()
        .next()
        .expect("internal bug: caller checked for a quote");
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return Ok((unescape(&text[1..i])?, &text[i + 1..]));
        }
    }
    Err(format!(
        "expected a closing {quote} to end the string {text}, found end of line"
    ))
}

fn expect_end(rest: &str, after: &str) -> Result<(), String> {
    let rest = rest.trim_start();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(format!(
            "expected end of line or a comment after {after}, found {}",
            describe(rest)
        ))
    }
}

/// Bounds count UTF-8 bytes for `string` (what the wire and `rosidl_runtime_c` limit) and
/// UTF-16 code units for `wstring`.
fn check_bound(base: &BaseType, bound: Option<usize>, value: &str) -> Result<(), String> {
    let Some(bound) = bound else { return Ok(()) };
    let (len, unit, keyword) = match base {
        BaseType::WString { .. } => (value.encode_utf16().count(), "UTF-16 units", "wstring"),
        _ => (value.len(), "bytes", "string"),
    };
    if len > bound {
        return Err(format!(
            "expected at most {bound} {unit} for type '{keyword}<={bound}', found \"{value}\" \
             ({len} {unit})"
        ));
    }
    Ok(())
}

/// Resolves backslash escapes as Python's `unicode_escape` does: `\\ \' \" \a \b \f \n \r \t
/// \v`, octal `\ooo`, `\xhh`, `\uhhhh`, `\Uhhhhhhhh`; any other `\c` stays as written.
fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max_digits, exact) = match e {
            '0'..='7' => (8, 3, false),
            'x' => (16, 2, true),
            'u' => (16, 4, true),
            'U' => (16, 8, true),
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max_digits {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => digits.push(chars.next().unwrap_or_default()),
                _ => break,
            }
        }
        let code = u32::from_str_radix(&digits, radix)
            .ok()
            .filter(|_| !exact || digits.len() == max_digits);
        match code.and_then(char::from_u32) {
            Some(ch) => out.push(ch),
            None => {
                return Err(format!(
                    "expected {max_digits} hex digits naming a Unicode scalar value after '\\{e}', \
                     found '\\{e}{digits}'"
                ));
            }
        }
    }
    Ok(out)
}

/// A `bool`, integer or float literal.
fn parse_primitive(p: Primitive, raw: &str) -> Result<Literal, String> {
    let keyword = p.keyword();
    match p {
        Primitive::Bool => match raw.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Literal::Bool(true)),
            "false" | "0" => Ok(Literal::Bool(false)),
            _ => Err(format!(
                "expected 'true', 'false', '1' or '0' for type 'bool', found '{raw}'"
            )),
        },
        Primitive::Float32 | Primitive::Float64 => {
            raw.parse::<f64>().map(Literal::Float).map_err(|_| {
                format!("expected a floating-point number for type '{keyword}', found '{raw}'")
            })
        }
        _ => {
            let (min, max) = int_range(p);
            match parse_int(raw) {
                Ok(v) if (min..=max).contains(&v) => Ok(Literal::Int(v)),
                Ok(_) | Err(IntError::Overflow) => Err(format!(
                    "expected an integer from {min} to {max} for type '{keyword}', found {raw}"
                )),
                Err(IntError::Syntax) => Err(format!(
                    "expected an integer (decimal, 0x, 0o or 0b) for type '{keyword}', found \
                     '{raw}'"
                )),
            }
        }
    }
}

/// The value range of an integer-like primitive. `byte` and `char` are octets in rosidl
/// (`char` maps to IDL `uint8`), so both take 0..=255.
fn int_range(p: Primitive) -> (i128, i128) {
    match p {
        Primitive::Int8 => (i8::MIN.into(), i8::MAX.into()),
        Primitive::Int16 => (i16::MIN.into(), i16::MAX.into()),
        Primitive::Int32 => (i32::MIN.into(), i32::MAX.into()),
        Primitive::Int64 => (i64::MIN.into(), i64::MAX.into()),
        Primitive::Uint16 => (0, u16::MAX.into()),
        Primitive::Uint32 => (0, u32::MAX.into()),
        Primitive::Uint64 => (0, u64::MAX.into()),
        _ => (0, u8::MAX.into()),
    }
}

enum IntError {
    /// Not an integer literal at all.
    Syntax,
    /// An integer literal beyond `i128`, so certainly out of range.
    Overflow,
}

/// Python `int(s)`, falling back to `int(s, 0)`, as `rosidl_adapter` does: an optional sign,
/// then decimal digits or a `0x`/`0o`/`0b` prefix and digits, with single `_` between digits.
fn parse_int(raw: &str) -> Result<i128, IntError> {
    let (negative, body) = match raw.as_bytes().first().ok_or(IntError::Syntax)? {
        b'-' => (true, &raw[1..]),
        b'+' => (false, &raw[1..]),
        _ => (false, raw),
    };
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits) = match lower.as_deref() {
        Some("0x") => (16, body[2..].strip_prefix('_').unwrap_or(&body[2..])),
        Some("0o") => (8, body[2..].strip_prefix('_').unwrap_or(&body[2..])),
        Some("0b") => (2, body[2..].strip_prefix('_').unwrap_or(&body[2..])),
        _ => (10, body),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return Err(IntError::Syntax);
    }
    let mut value: i128 = 0;
    let mut overflow = false;
    for c in digits.chars().filter(|&c| c != '_') {
        let d = i128::from(c.to_digit(radix).ok_or(IntError::Syntax)?);
        match value
            .checked_mul(i128::from(radix))
            .and_then(|v| v.checked_add(d))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    match (overflow, negative) {
        (true, _) => Err(IntError::Overflow),
        (false, true) => Ok(-value),
        (false, false) => Ok(value),
    }
}
