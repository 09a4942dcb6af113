//! What a plain YAML scalar means under YAML 1.1, the version PyYAML (and so `ros2 topic pub`
//! and `ros2 topic echo`) implements.
//!
//! Two sets of functions: lenient readers that `input` applies when a field's type asks for a
//! number or bool, and exact copies of PyYAML's implicit resolver patterns that `emit` uses to
//! decide whether a string must be quoted so that it reads back as a string.

pub(super) fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

pub(super) fn bool_value(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// An integer in YAML 1.1 notation (`12`, `-0x1f`, `0b101`, `017` octal, `1_000`), plus the
/// YAML 1.2 `0o17`; `None` if the text is not one or does not fit an `i128`.
pub(super) fn int_value(text: &str) -> Option<i128> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if !unsigned.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let digits: String = unsigned.chars().filter(|&c| c != '_').collect();
    let (radix, body) = if let Some(rest) = digits.strip_prefix("0x") {
        (16, rest)
    } else if let Some(rest) = digits.strip_prefix("0b") {
        (2, rest)
    } else if let Some(rest) = digits.strip_prefix("0o") {
        (8, rest)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits.as_str())
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(body, radix).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// A number in any notation a ROS user may type for a float field: YAML 1.1 floats and ints,
/// `.inf`/`-.inf`/`.nan`, and forms PyYAML reads as strings but Python's `float()` (which
/// `ros2 topic pub` applies) accepts, such as `1e-3`.
pub(super) fn float_value(text: &str) -> Option<f64> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    if let Some(i) = int_value(text) {
        return Some(i as f64);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    text.replace('_', "").parse().ok()
}

/// `.inf` or `-.inf` in one of YAML's spellings: infinity written as infinity, not a numeral
/// too large for a double.
pub(super) fn is_infinity_word(text: &str) -> bool {
    matches!(
        text.strip_prefix(['-', '+']).unwrap_or(text),
        ".inf" | ".Inf" | ".INF"
    )
}

/// True if PyYAML's resolver would read the plain text back as something other than a
/// string (null, bool, int, float, merge key, timestamp, `=`), so it must be quoted.
pub(super) fn resolves_to_non_string(text: &str) -> bool {
    is_null(text)
        || bool_value(text).is_some()
        || text == "<<"
        || text == "="
        || is_yaml11_int(text)
        || is_yaml11_float(text)
        || is_yaml11_timestamp(text)
}

fn is_digit_or_underscore(c: char) -> bool {
    c.is_ascii_digit() || c == '_'
}

/// `[0-5]?[0-9]`, one part of a base-60 number.
fn is_sexagesimal_part(part: &str) -> bool {
    match part.as_bytes() {
        [d] => d.is_ascii_digit(),
        [tens, d] => (b'0'..=b'5').contains(tens) && d.is_ascii_digit(),
        _ => false,
    }
}

/// PyYAML's int regex: `0b…`, `0…` octal, decimal, `0x…`, base 60, all with `_` and a sign.
fn is_yaml11_int(text: &str) -> bool {
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    if let Some(rest) = t.strip_prefix("0b") {
        return !rest.is_empty() && rest.chars().all(|c| matches!(c, '0' | '1' | '_'));
    }
    if let Some(rest) = t.strip_prefix("0x") {
        return !rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit() || c == '_');
    }
    if t == "0" {
        return true;
    }
    if let Some(rest) = t.strip_prefix('0') {
        return !rest.is_empty() && rest.chars().all(|c| matches!(c, '0'..='7' | '_'));
    }
    let mut parts = t.split(':');
    let head = parts.next().unwrap_or_default();
    head.starts_with(|c: char| c.is_ascii_digit())
        && head.chars().all(is_digit_or_underscore)
        && parts.all(is_sexagesimal_part)
}

/// PyYAML's float regex: needs a `.`; an exponent needs a sign; `.inf`, `.nan`; base 60.
fn is_yaml11_float(text: &str) -> bool {
    if matches!(text, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let signed = text.starts_with(['-', '+']);
    let t = if signed { &text[1..] } else { text };
    if matches!(t, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    if let Some(rest) = t.strip_prefix('.') {
        let (fraction, exponent_ok) = split_exponent(rest);
        return !signed
            && exponent_ok
            && fraction.starts_with(|c: char| c.is_ascii_digit())
            && fraction.chars().all(is_digit_or_underscore);
    }
    let Some(point) = t.find('.') else {
        return false;
    };
    if !t.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let (whole, rest) = (&t[..point], &t[point + 1..]);
    if whole.chars().all(is_digit_or_underscore) {
        let (fraction, exponent_ok) = split_exponent(rest);
        return exponent_ok && fraction.chars().all(is_digit_or_underscore);
    }
    let mut parts = whole.split(':');
    parts
        .next()
        .is_some_and(|head| head.chars().all(is_digit_or_underscore))
        && parts.all(is_sexagesimal_part)
        && rest.chars().all(is_digit_or_underscore)
}

/// Splits `[eE][-+][0-9]+` off the end; the flag says whether any exponent is well formed.
fn split_exponent(text: &str) -> (&str, bool) {
    match text.find(['e', 'E']) {
        None => (text, true),
        Some(at) => {
            let exponent = &text[at + 1..];
            let ok = exponent.len() >= 2
                && exponent.starts_with(['-', '+'])
                && exponent[1..].chars().all(|c| c.is_ascii_digit());
            (&text[..at], ok)
        }
    }
}

/// PyYAML's timestamp regex: `2001-12-14`, or `2001-12-14t21:59:43.10-05:00` and variants.
fn is_yaml11_timestamp(text: &str) -> bool {
    let mut c = Cursor {
        bytes: text.as_bytes(),
        at: 0,
    };
    if !(c.digits(4, 4) && c.eat(b'-')) {
        return false;
    }
    let month_day_start = c.at;
    if c.digits(2, 2) && c.eat(b'-') && c.digits(2, 2) && c.done() {
        return true;
    }
    c.at = month_day_start;
    if !(c.digits(1, 2) && c.eat(b'-') && c.digits(1, 2)) {
        return false;
    }
    if !(c.eat(b'T') || c.eat(b't') || c.blanks() > 0) {
        return false;
    }
    if !(c.digits(1, 2) && c.eat(b':') && c.digits(2, 2) && c.eat(b':') && c.digits(2, 2)) {
        return false;
    }
    if c.eat(b'.') {
        c.digits(0, usize::MAX);
    }
    if c.done() {
        return true;
    }
    c.blanks();
    if c.eat(b'Z') {
        return c.done();
    }
    (c.eat(b'-') || c.eat(b'+'))
        && c.digits(1, 2)
        && (c.done() || (c.eat(b':') && c.digits(2, 2) && c.done()))
}

struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, min: usize, max: usize) -> bool {
        let start = self.at;
        while self.at - start < max && self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        self.at - start >= min
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.bytes.get(self.at) == Some(&byte);
        self.at += usize::from(hit);
        hit
    }

    fn blanks(&mut self) -> usize {
        let start = self.at;
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t')) {
            self.at += 1;
        }
        self.at - start
    }

    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_meanings() {
        assert_eq!(int_value("0x1F"), Some(31));
        assert_eq!(int_value("-017"), Some(-15));
        assert_eq!(int_value("1_000"), Some(1000));
        assert_eq!(int_value("08"), None);
        assert_eq!(int_value("1.0"), None);
        assert_eq!(float_value("1e-3"), Some(0.001));
        assert_eq!(float_value("-.inf"), Some(f64::NEG_INFINITY));
        assert_eq!(float_value("abc"), None);
        assert_eq!(float_value("inf"), None);
        assert_eq!(bool_value("on"), Some(true));
        assert!(is_null("~"));
    }

    #[test]
    fn yaml11_resolution() {
        for text in ["0", "-12", "0b101", "0o17x", "1_000", "190:20:30", "0x_ff"] {
            assert_eq!(is_yaml11_int(text), text != "0o17x", "{text}");
        }
        for text in [
            "1.0",
            "1.",
            ".5",
            "-1.5e+3",
            "+.inf",
            ".NaN",
            "190:20:30.15",
        ] {
            assert!(is_yaml11_float(text), "{text}");
        }
        for text in ["1e5", "1.5e3", "-.nan", ".", "1.2.3", "-.5"] {
            assert!(!is_yaml11_float(text), "{text}");
        }
        for text in [
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 Z",
        ] {
            assert!(is_yaml11_timestamp(text), "{text}");
        }
        for text in ["2001-12-1", "2001-12-14 ", "2001-12-14T21:59"] {
            assert!(!is_yaml11_timestamp(text), "{text}");
        }
    }
}
