//! Python's `repr()` of floats, strings and bytes, as rosidl and the ROS 2 tools print values
//! (`ros2 topic pub`'s and `ros2 param`'s lines, rosidl's type description defaults and
//! definition texts).

mod unprintable;

/// Python's `repr(float)`: the shortest digits that round-trip, positional for exponents from
/// -4 to 15, else scientific with a signed two-digit exponent (`1e-05`, `1.5e+16`).
pub fn float_repr(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return special_float_repr(x.is_nan(), x.is_sign_negative(), x.is_infinite());
    }
    // Rust's `{:e}` also prints the shortest round-trip digits: "-1.2345e-5".
    python_float_text(&format!("{x:e}"))
}

fn special_float_repr(nan: bool, negative: bool, infinite: bool) -> String {
    match (nan, infinite, negative) {
        (true, _, _) => "nan",
        (false, true, true) => "-inf",
        (false, true, false) => "inf",
        (false, false, true) => "-0.0",
        (false, false, false) => "0.0",
    }
    .to_owned()
}

/// Python's `float.__repr__` layout of a number given as Rust's shortest `{:e}` text.
fn python_float_text(sci: &str) -> String {
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        if point <= 0 {
            let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
            format!("{sign}0.{zeros}{digits}")
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if digits.len() <= point {
                let zeros = "0".repeat(point - digits.len());
                format!("{sign}{digits}{zeros}.0")
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            }
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs())
    }
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; backslash escapes
/// for the quote, the backslash, `\t`, `\n`, `\r`, and every character Python does not
/// print (`\x..`, `\u....`, `\U........`).
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !printable(c) => {
                let code = u32::from(c);
                out.push_str(&if code < 0x100 {
                    format!("\\x{code:02x}")
                } else if code < 0x10000 {
                    format!("\\u{code:04x}")
                } else {
                    format!("\\U{code:08x}")
                });
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for one character.
fn printable(c: char) -> bool {
    let code = u32::from(c);
    let ranges = unprintable::UNPRINTABLE;
    // The last range starting at or below `code` is the only one that can hold it.
    let after = ranges.partition_point(|(start, _)| *start <= code);
    !(after > 0 && code <= ranges[after - 1].1)
}

/// Python's `repr(bytes)`: `b'A'`, `b'\x00'`.
pub fn bytes_repr(bytes: &[u8]) -> String {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut out = format!("b{quote}");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b if char::from(b) == quote => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(b)),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_writes_them() {
        for (value, text) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (2.5, "2.5"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.25e100, "1.25e+100"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(float_repr(value), text, "{value:e}");
        }
    }
}
