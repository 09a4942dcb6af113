//! IDL text into tokens, each with the line and column it starts at.
//!
//! OMG IDL 4.2 §7.2 (lexical conventions) as far as `rosidl_parser/grammar.lark` takes it:
//! `//` and `/* */` comments (§7.2.2), identifiers of a letter then letters, digits and `_`
//! (§7.2.3), integer, floating-point, fixed-point, string and wide-string literals (§7.2.6),
//! and of the preprocessor (§7.3) only `#include`. String escapes are decoded as
//! `rosidl_parser/parser.py` (`get_string_literal_value`) decodes them, quirks included.

use super::Pos;

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    /// A decimal or hexadecimal integer literal, without sign.
    Int(u128),
    /// A floating-point or fixed-point (`1.5d`) literal, without sign.
    Float(f64),
    /// `"..."`, escapes decoded.
    Str(String),
    /// `L"..."`, escapes decoded.
    WStr(String),
    /// `'c'` or `L'c'`: lexed only to be refused with a clear message.
    Char,
    /// One of `{ } ( ) < > [ ] ; , = : :: @ - + ~ * / % | ^ &`.
    Punct(&'static str),
    /// `#include "path"` or `#include <path>`.
    Include(String),
    Eof,
}

impl Tok {
    /// How an error message names the token.
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Ident(s) => format!("'{s}'"),
            Self::Int(v) => format!("'{v}'"),
            Self::Float(v) => format!("'{v}'"),
            Self::Str(s) => format!("the string \"{}\"", shorten(s)),
            Self::WStr(s) => format!("the wide string L\"{}\"", shorten(s)),
            Self::Char => "a character literal".to_owned(),
            Self::Punct(p) => format!("'{p}'"),
            Self::Include(path) => format!("'#include \"{path}\"'"),
            Self::Eof => "end of file".to_owned(),
        }
    }
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(24).collect();
    if s.chars().count() > 24 {
        out.push_str("...");
    }
    out.escape_debug().to_string()
}

/// A token error: where and what.
pub(super) type LexError = (Pos, String);

/// Splits `text` into tokens; the last is [`Tok::Eof`].
///
/// # Errors
/// The first character sequence that is no IDL token rosidl reads.
pub(super) fn tokens(text: &str) -> Result<Vec<(Pos, Tok)>, LexError> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        pos: Pos { line: 1, column: 1 },
    };
    // Editors on Windows may save a UTF-8 byte order mark; it is no token.
    if lexer.peek(0) == Some('\u{feff}') {
        lexer.at = 1;
    }
    let mut out = Vec::new();
    loop {
        lexer.skip_blanks_and_comments()?;
        let start = lexer.pos;
        let Some(c) = lexer.peek(0) else {
            out.push((start, Tok::Eof));
            return Ok(out);
        };
        let tok = if c == 'L' && matches!(lexer.peek(1), Some('"' | '\'')) {
            lexer.bump();
            if lexer.peek(0) == Some('"') {
                Tok::WStr(lexer.string(true)?)
            } else {
                lexer.char_literal()?
            }
        } else if c.is_ascii_alphabetic() {
            Tok::Ident(lexer.identifier())
        } else if c.is_ascii_digit()
            || (c == '.' && lexer.peek(1).is_some_and(|d| d.is_ascii_digit()))
        {
            lexer.number()?
        } else if c == '"' {
            Tok::Str(lexer.string(false)?)
        } else if c == '\'' {
            lexer.char_literal()?
        } else if c == '#' {
            lexer.directive()?
        } else if c == ':' && lexer.peek(1) == Some(':') {
            lexer.bump();
            lexer.bump();
            Tok::Punct("::")
        } else if let Some(p) = PUNCTUATION.iter().find(|p| p.starts_with(c)) {
            lexer.bump();
            Tok::Punct(p)
        } else if c == '_' {
            return Err((
                start,
                "unexpected '_': an IDL identifier starts with a letter (rosidl does not read \
                 escaped identifiers such as '_module')"
                    .to_owned(),
            ));
        } else {
            return Err((
                start,
                format!("unexpected character '{}'", c.escape_debug()),
            ));
        };
        out.push((start, tok));
    }
}

const PUNCTUATION: &[&str] = &[
    "{", "}", "(", ")", "<", ">", "[", "]", ";", ",", "=", ":", "@", "-", "+", "~", "*", "/", "%",
    "|", "^", "&",
];

struct Lexer {
    chars: Vec<char>,
    at: usize,
    pos: Pos,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
        Some(c)
    }

    fn skip_blanks_and_comments(&mut self) -> Result<(), LexError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.pos;
                    self.bump();
                    self.bump();
                    loop {
                        match (self.peek(0), self.peek(1)) {
                            (Some('*'), Some('/')) => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            (Some(_), _) => {
                                self.bump();
                            }
                            (None, _) => {
                                return Err((
                                    start,
                                    "expected '*/' to end this comment, found end of file"
                                        .to_owned(),
                                ));
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn identifier(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self
            .peek(0)
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            out.push(c);
            self.bump();
        }
        out
    }

    /// An integer (`42`, `0x2A`), floating-point (`1.5`, `.5`, `1e-3`, `2.`) or fixed-point
    /// (`1.5d`) literal.
    fn number(&mut self) -> Result<Tok, LexError> {
        let start = self.pos;
        if self.peek(0) == Some('0') && matches!(self.peek(1), Some('x' | 'X')) {
            self.bump();
            self.bump();
            let mut digits = String::new();
            while let Some(c) = self.peek(0).filter(char::is_ascii_hexdigit) {
                digits.push(c);
                self.bump();
            }
            let value = u128::from_str_radix(&digits, 16).map_err(|_| {
                (
                    start,
                    format!("expected hexadecimal digits after '0x', found '0x{digits}'"),
                )
            })?;
            self.expect_number_end(start)?;
            return Ok(Tok::Int(value));
        }
        let mut text = String::new();
        let mut is_float = false;
        let digits = |lexer: &mut Self, text: &mut String| {
            while let Some(c) = lexer.peek(0).filter(char::is_ascii_digit) {
                text.push(c);
                lexer.bump();
            }
        };
        digits(self, &mut text);
        if self.peek(0) == Some('.') {
            is_float = true;
            text.push('.');
            self.bump();
            digits(self, &mut text);
        }
        if matches!(self.peek(0), Some('e' | 'E'))
            && (self.peek(1).is_some_and(|c| c.is_ascii_digit())
                || (matches!(self.peek(1), Some('+' | '-'))
                    && self.peek(2).is_some_and(|c| c.is_ascii_digit())))
        {
            is_float = true;
            text.push('e');
            self.bump();
            if let Some(sign) = self.peek(0).filter(|c| matches!(c, '+' | '-')) {
                text.push(sign);
                self.bump();
            }
            digits(self, &mut text);
        }
        // IDL 4.2 §7.2.6.5: a fixed-point literal ends in `d` or `D`; rosidl reads it as a float.
        if matches!(self.peek(0), Some('d' | 'D')) {
            self.bump();
            is_float = true;
        }
        self.expect_number_end(start)?;
        if is_float {
            let value: f64 = text
                .parse()
                .map_err(|_| (start, format!("expected a number, found '{text}'")))?;
            return Ok(Tok::Float(value));
        }
        if text.len() > 1 && text.starts_with('0') {
            return Err((
                start,
                format!(
                    "'{text}' is an octal literal in IDL, which rosidl does not read: write the \
                     value in decimal or as 0x..."
                ),
            ));
        }
        text.parse()
            .map(Tok::Int)
            .map_err(|_| (start, format!("integer literal '{text}' is too large")))
    }

    fn expect_number_end(&self, start: Pos) -> Result<(), LexError> {
        match self.peek(0) {
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => Err((
                start,
                format!(
                    "expected the number to end before '{c}' (a number is followed by a space \
                     or punctuation)"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// A string literal from its opening quote to the closing one on the same line, with its
    /// escapes decoded.
    fn string(&mut self, wide: bool) -> Result<String, LexError> {
        let start = self.pos;
        self.bump();
        let mut raw = String::new();
        loop {
            match self.peek(0) {
                Some('"') => {
                    self.bump();
                    return Ok(decode_escapes(&raw, wide));
                }
                Some('\\') => {
                    raw.push('\\');
                    self.bump();
                    if let Some(c) = self.peek(0).filter(|c| *c != '\n') {
                        raw.push(c);
                        self.bump();
                    }
                }
                Some('\n') | None => {
                    return Err((
                        start,
                        "expected a closing '\"' to end this string on the same line".to_owned(),
                    ));
                }
                Some(c) => {
                    raw.push(c);
                    self.bump();
                }
            }
        }
    }

    fn char_literal(&mut self) -> Result<Tok, LexError> {
        let start = self.pos;
        self.bump();
        loop {
            match self.bump() {
                Some('\'') => return Ok(Tok::Char),
                Some('\\') => {
                    self.bump();
                }
                Some('\n') | None => {
                    return Err((
                        start,
                        "expected a closing ' to end this character literal".to_owned(),
                    ))
                }
                Some(_) => {}
            }
        }
    }

    /// `#include "path"` or `#include <path>`; any other preprocessor directive is refused.
    fn directive(&mut self) -> Result<Tok, LexError> {
        let start = self.pos;
        self.bump();
        let word = self.identifier();
        if word != "include" {
            return Err((
                start,
                format!(
                    "unsupported preprocessor directive '#{word}': rosidl reads only '#include'"
                ),
            ));
        }
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.bump();
        }
        let close = match self.peek(0) {
            Some('"') => '"',
            Some('<') => '>',
            _ => {
                return Err((
                    start,
                    "expected '\"file\"' or '<file>' after '#include'".to_owned(),
                ))
            }
        };
        self.bump();
        let mut path = String::new();
        loop {
            match self.bump() {
                Some(c) if c == close => break,
                Some('\n') | None => {
                    return Err((
                        start,
                        format!("expected '{close}' to end the #include path on the same line"),
                    ))
                }
                Some(c) => path.push(c),
            }
        }
        Ok(Tok::Include(path))
    }
}

/// Decodes escapes as `rosidl_parser` does: the IDL 4.2 §7.2.6.3 escapes (Table 7-9) `\n \t \v
/// \b \r \f \a \\ \? \' \"`, octal `\ooo` (1-3 digits), hexadecimal `\xhh` (1-2 digits) and, in
/// wide strings only, `\uhhhh` (1-4 digits), each to the Unicode code point it names (Python's
/// `unicode_escape`); anything else after a backslash stays as written. Then, as rosidl does,
/// a backslash left before a `"` or another backslash is dropped.
fn decode_escapes(raw: &str, wide: bool) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' || i + 1 >= chars.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = chars[i + 1];
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            'b' => Some('\u{8}'),
            'r' => Some('\r'),
            'f' => Some('\u{c}'),
            'a' => Some('\u{7}'),
            '\\' => Some('\\'),
            '?' => Some('?'),
            '\'' => Some('\''),
            '"' => Some('"'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            i += 2;
            continue;
        }
        let (radix, first, max) = match e {
            '0'..='7' => (8, i + 1, 3),
            'x' => (16, i + 2, 2),
            'u' if wide => (16, i + 2, 4),
            _ => {
                out.push('\\');
                i += 1;
                continue;
            }
        };
        let mut end = first;
        while end < chars.len() && end - first < max && chars[end].is_digit(radix) {
            end += 1;
        }
        let digits: String = chars[first..end].iter().collect();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) => {
                out.push(decoded);
                i = end;
            }
            // `\x` without digits (or a lone surrogate): kept as written.
            None => {
                out.push('\\');
                i += 1;
            }
        }
    }
    // rosidl's second pass (`get_string_literal_value`): a backslash before `"` or `\` goes.
    let mut result = String::with_capacity(out.len());
    let decoded: Vec<char> = out.chars().collect();
    let mut i = 0;
    while i < decoded.len() {
        if decoded[i] == '\\' && matches!(decoded.get(i + 1), Some('"' | '\\')) {
            i += 1;
        }
        result.push(decoded[i]);
        i += 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        tokens(text).unwrap().into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn tokens_carry_their_line_and_column() {
        let all = tokens("module a {\n  // note\n  /* long\n */ long x;\n};").unwrap();
        let at: Vec<(usize, usize)> = all.iter().map(|(p, _)| (p.line, p.column)).collect();
        assert_eq!(
            at,
            [
                (1, 1),
                (1, 8),
                (1, 10),
                (4, 5),
                (4, 10),
                (4, 11),
                (5, 1),
                (5, 2),
                (5, 3)
            ]
        );
    }

    #[test]
    fn literals() {
        assert_eq!(
            toks("0 42 0x2A 1.5 .5 2. 1e3 1.5e-2 3d -7"),
            [
                Tok::Int(0),
                Tok::Int(42),
                Tok::Int(42),
                Tok::Float(1.5),
                Tok::Float(0.5),
                Tok::Float(2.0),
                Tok::Float(1000.0),
                Tok::Float(0.015),
                Tok::Float(3.0),
                Tok::Punct("-"),
                Tok::Int(7),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks(r#""a\n\x41\101\q" L"\u00e9" "#),
            [Tok::Str("a\nAA\\q".into()), Tok::WStr("é".into()), Tok::Eof]
        );
        // `\u` is an escape in wide strings only.
        assert_eq!(toks(r#""\u00e9""#), [Tok::Str("\\u00e9".into()), Tok::Eof]);
        assert_eq!(
            toks(r#""say \"hi\"" "back\\slash""#),
            [
                Tok::Str("say \"hi\"".into()),
                Tok::Str("back\\slash".into()),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks("#include \"a/b.idl\"\n#include <c.idl>"),
            [
                Tok::Include("a/b.idl".into()),
                Tok::Include("c.idl".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn errors_say_where_and_what() {
        let err = |text: &str| tokens(text).unwrap_err();
        assert_eq!(
            err("long x;\n  \"open"),
            (
                Pos { line: 2, column: 3 },
                "expected a closing '\"' to end this string on the same line".to_owned()
            )
        );
        assert!(err("x = 017;").1.contains("octal literal"));
        assert!(err("#pragma once").1.contains("'#pragma'"));
        assert!(err("/* never closed").1.contains("'*/'"));
        assert!(err("12ab")
            .1
            .contains("expected the number to end before 'a'"));
        assert_eq!(err("long $x;").0, Pos { line: 1, column: 6 });
    }
}
