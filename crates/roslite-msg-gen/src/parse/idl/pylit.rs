//! The Python literals inside `@default(value="...")` of arrays and sequences.
//!
//! `rosidl_adapter` writes an array default as `repr(tuple(values))` in an IDL string
//! (`rosidl_adapter/msg/__init__.py`, `to_idl_literal`), and rosidl's generators read it back
//! with Python's `ast.literal_eval`. So the text is a tuple or a list of `True`/`False`,
//! numbers and quoted strings, which this module reads and writes again in `.msg` syntax for
//! the `.msg` value rules to check.

/// One element of the tuple or list.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Element {
    Bool(bool),
    /// A number as written (`-1`, `1.5`, `1e-05`, `inf`), checked later against its type.
    Number(String),
    String(String),
}

impl Element {
    /// The element as a `.msg` array element.
    pub(super) fn to_msg_text(&self) -> String {
        match self {
            Self::Bool(b) => b.to_string(),
            Self::Number(n) => n.clone(),
            Self::String(s) => quote_msg_string(s),
        }
    }
}

/// `s` as a double-quoted `.msg` string value whose escapes decode back to `s`.
pub(super) fn quote_msg_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reads `(a, b, ...)`, `(a,)`, `()`, `[a, b]` or `[]`.
///
/// # Errors
/// What is wrong, phrased as what was expected and what was found.
pub(super) fn parse_sequence(text: &str) -> Result<Vec<Element>, String> {
    let chars: Vec<char> = text.trim().chars().collect();
    let close = match chars.first() {
        Some('(') => ')',
        Some('[') => ']',
        _ => {
            return Err(format!(
                "expected a Python tuple '(...)' or list '[...]', found \"{}\"",
                text.escape_debug()
            ))
        }
    };
    let mut at = 1;
    let mut out = Vec::new();
    loop {
        skip_spaces(&chars, &mut at);
        match chars.get(at) {
            Some(&c) if c == close => {
                at += 1;
                break;
            }
            None => {
                return Err(format!(
                    "expected '{close}' to end the values, found end of text"
                ))
            }
            _ => {}
        }
        out.push(element(&chars, &mut at)?);
        skip_spaces(&chars, &mut at);
        match chars.get(at) {
            Some(',') => at += 1,
            Some(&c) if c == close => {}
            Some(c) => {
                return Err(format!(
                    "expected ',' or '{close}' after element {}, found '{c}'",
                    out.len()
                ))
            }
            None => {
                return Err(format!(
                    "expected '{close}' to end the values, found end of text"
                ))
            }
        }
    }
    skip_spaces(&chars, &mut at);
    if at < chars.len() {
        let rest: String = chars[at..].iter().collect();
        return Err(format!("expected nothing after '{close}', found '{rest}'"));
    }
    Ok(out)
}

fn skip_spaces(chars: &[char], at: &mut usize) {
    while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
        *at += 1;
    }
}

fn element(chars: &[char], at: &mut usize) -> Result<Element, String> {
    match chars[*at] {
        quote @ ('\'' | '"') => string(chars, at, quote).map(Element::String),
        _ => {
            let start = *at;
            while chars
                .get(*at)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_'))
            {
                *at += 1;
            }
            let word: String = chars[start..*at].iter().collect();
            match word.as_str() {
                "True" => Ok(Element::Bool(true)),
                "False" => Ok(Element::Bool(false)),
                "" => Err(format!("expected a value, found '{}'", chars[start])),
                _ => Ok(Element::Number(word)),
            }
        }
    }
}

/// A Python string literal (as `repr` writes one): the escapes `\\ \' \" \n \r \t \a \b \f \v`,
/// `\ooo`, `\xhh`, `\uhhhh` and `\Uhhhhhhhh`.
fn string(chars: &[char], at: &mut usize, quote: char) -> Result<String, String> {
    *at += 1;
    let mut out = String::new();
    loop {
        let Some(&c) = chars.get(*at) else {
            return Err(format!(
                "expected {quote} to end a string, found end of text"
            ));
        };
        *at += 1;
        if c == quote {
            return Ok(out);
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(*at) else {
            return Err("expected an escape after '\\', found end of text".to_owned());
        };
        *at += 1;
        let simple = match e {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, digits) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                *at -= 1;
                (8, 3)
            }
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let start = *at;
        while *at < chars.len() && *at - start < digits && chars[*at].is_digit(radix) {
            *at += 1;
        }
        let text: String = chars[start..*at].iter().collect();
        let exact = radix == 8 || text.len() == digits;
        match u32::from_str_radix(&text, radix)
            .ok()
            .filter(|_| exact)
            .and_then(char::from_u32)
        {
            Some(decoded) => out.push(decoded),
            None => {
                return Err(format!(
                    "expected a valid escape, found '\\{}{text}'",
                    if radix == 8 { "" } else { "x/u/U" }
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_and_lists_as_repr_writes_them() {
        assert_eq!(
            parse_sequence("(False, True, False)").unwrap(),
            [
                Element::Bool(false),
                Element::Bool(true),
                Element::Bool(false)
            ]
        );
        assert_eq!(
            parse_sequence("(1.125, 0.0, -1.125, 1e-05, inf)").unwrap(),
            ["1.125", "0.0", "-1.125", "1e-05", "inf"].map(|n| Element::Number(n.to_owned()))
        );
        assert_eq!(
            parse_sequence(r#"('', 'max value', "it's", 'a\'b\\c\x41\u00e9')"#).unwrap(),
            ["", "max value", "it's", "a'b\\cAé"].map(|s| Element::String(s.to_owned()))
        );
        assert_eq!(
            parse_sequence("(7,)").unwrap(),
            [Element::Number("7".into())]
        );
        assert_eq!(parse_sequence("()").unwrap(), []);
        assert_eq!(parse_sequence(" [ 1 , 2 ] ").unwrap().len(), 2);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert!(parse_sequence("1, 2").unwrap_err().contains("tuple"));
        assert!(parse_sequence("(1 2)")
            .unwrap_err()
            .contains("expected ',' or ')' after element 1, found '2'"));
        assert!(parse_sequence("('open)")
            .unwrap_err()
            .contains("end a string"));
        assert!(parse_sequence("(1,) x")
            .unwrap_err()
            .contains("nothing after"));
    }

    #[test]
    fn strings_are_quoted_for_the_msg_rules() {
        assert_eq!(quote_msg_string("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
    }
}
