//! The text of a filter: tokens, then a tree. The grammar is DDS 1.4 Annex B ("Syntax for
//! Queries and Filters") as Fast DDS reads it (`DDSFilterGrammar.hpp`):
//!
//! ```text
//! Expression := Condition (('AND' | 'OR') Condition)*      -- one connective per level
//! Condition  := '(' Expression ')' | 'NOT' Condition | Predicate
//! Predicate  := Operand RelOp Operand                        -- a field on one side at least
//!             | Operand 'LIKE' Operand
//!             | Field ['NOT'] 'BETWEEN' Constant 'AND' Constant
//! Operand    := Field | Constant
//! Constant   := Literal | '%' digit [digit]
//! Field      := name ['[' digits ']'] ('.' name ['[' digits ']'])*   -- no spaces inside
//! Literal    := TRUE | FALSE | integer | 0x hex | float | 'text' | `text'
//! RelOp      := '=' | '<>' | '!=' | '<' | '<=' | '>' | '>='
//! ```
//!
//! Keywords are all upper or all lower case, as Fast DDS's. Two choices differ from Fast DDS's
//! parser, both refusing text whose meaning is in doubt rather than guessing: `AND` and `OR`
//! side by side need parentheses (Fast DDS groups them left to right, `a OR b AND c` as
//! `(a OR b) AND c`, where SQL and the DDS specification read `a OR (b AND c)`; with a `NOT`
//! among them its grouping is different again), and `MATCH`, Fast DDS's regular-expression
//! extension, is refused with a pointer to `LIKE`.

use super::error::{ContentFilterError, ContentFilterErrorKind as Kind, Location};

/// The longest expression, in bytes (Fast DDS's `DEFAULT_MAX_EXPRESSION_LENGTH`).
pub(super) const MAX_EXPRESSION_LEN: usize = 16 * 1024;
/// How deep parentheses and `NOT` may nest (Fast DDS's `DEFAULT_MAX_SUBEXPRESSIONS`); bounds
/// the parser's recursion.
pub(super) const MAX_DEPTH: usize = 256;
/// The longest string literal, in bytes (Fast DDS keeps them in a `string_255`).
pub(super) const MAX_STRING_LEN: usize = 255;

/// A constant as written.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Literal {
    Bool(bool),
    /// Within `i64::MIN..=u64::MAX`.
    Int(i128),
    /// The text, parsed at the precision of what it is compared with.
    Float(String),
    Text(String),
}

/// One step of a field path: `name` or `name[index]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FieldPart {
    pub name: String,
    pub index: Option<u64>,
    /// Byte offset of `name`.
    pub at: usize,
}

/// A field path as written (`header.frame_id`, `points[2].x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FieldPath {
    pub parts: Vec<FieldPart>,
    pub at: usize,
    /// The path's text, for messages and to tell equal paths apart.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Operand {
    Field(FieldPath),
    Literal { value: Literal, at: usize },
    Parameter { index: usize, at: usize },
}

impl Operand {
    pub fn at(&self) -> usize {
        match self {
            Self::Field(path) => path.at,
            Self::Literal { at, .. } | Self::Parameter { at, .. } => *at,
        }
    }

    fn is_field(&self) -> bool {
        matches!(self, Self::Field(_))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Condition {
    And(Vec<Condition>),
    Or(Vec<Condition>),
    Not(Box<Condition>),
    Compare {
        op: CompareOp,
        left: Operand,
        right: Operand,
    },
    /// `value LIKE pattern`: the right side is the pattern, a field's value included.
    Like {
        value: Operand,
        pattern: Operand,
    },
    /// `field [NOT] BETWEEN low AND high`.
    Between {
        field: FieldPath,
        low: Operand,
        high: Operand,
        negated: bool,
    },
}

/// Parses a filter expression (not empty: an empty one is no filter, decided before).
///
/// # Errors
/// [`ContentFilterError`] at the first thing that is not the language.
pub(super) fn parse_expression(text: &str) -> Result<Condition, ContentFilterError> {
    let at_expression = |fault: Fault| {
        ContentFilterError::new(fault.kind, Location::Expression { offset: fault.at }, text)
    };
    if text.len() > MAX_EXPRESSION_LEN {
        return Err(ContentFilterError::new(
            Kind::TooLong {
                len: text.len(),
                max: MAX_EXPRESSION_LEN,
            },
            Location::Filter,
            text,
        ));
    }
    let tokens = tokenize(text).map_err(at_expression)?;
    let mut parser = Parser {
        text,
        tokens,
        next: 0,
    };
    let condition = parser.expression(0).map_err(at_expression)?;
    parser
        .expect_end("AND, OR or the end of the expression")
        .map_err(at_expression)?;
    Ok(condition)
}

/// Parses expression parameter `index`: one literal, written as in an expression (Fast DDS's
/// `parse_literal_value`); spaces around it are ignored.
///
/// # Errors
/// [`ContentFilterError`] located in the parameter.
pub(super) fn parse_parameter(text: &str, index: usize) -> Result<Literal, ContentFilterError> {
    let at_parameter = |fault: Fault| {
        ContentFilterError::new(
            fault.kind,
            Location::Parameter {
                index,
                offset: fault.at,
            },
            text,
        )
    };
    let not_a_literal = |at| Fault {
        kind: Kind::ParameterNotALiteral,
        at,
    };
    let tokens = tokenize(text).map_err(at_parameter)?;
    match tokens.as_slice() {
        [Token {
            kind: TokenKind::Literal(value),
            ..
        }, Token {
            kind: TokenKind::End,
            ..
        }] => Ok(value.clone()),
        [first, ..] => Err(at_parameter(not_a_literal(first.at))),
        [] => Err(at_parameter(not_a_literal(0))),
    }
}

/// A problem at byte `at` of the text being read.
#[derive(Debug)]
struct Fault {
    kind: Kind,
    at: usize,
}

fn fault<T>(kind: Kind, at: usize) -> Result<T, Fault> {
    Err(Fault { kind, at })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keyword {
    And,
    Or,
    Not,
    Between,
    Like,
    Match,
}

#[derive(Clone, Debug, PartialEq)]
enum TokenKind {
    Name(String),
    Keyword(Keyword),
    Literal(Literal),
    Parameter(usize),
    Compare(CompareOp),
    Open,
    Close,
    Dot,
    OpenBracket,
    CloseBracket,
    End,
}

#[derive(Clone, Debug, PartialEq)]
struct Token {
    kind: TokenKind,
    /// Byte range in the text.
    at: usize,
    end: usize,
}

/// The keywords with their upper-case spelling; TRUE and FALSE are literals.
const KEYWORDS: [(&str, Option<Keyword>); 8] = [
    ("AND", Some(Keyword::And)),
    ("OR", Some(Keyword::Or)),
    ("NOT", Some(Keyword::Not)),
    ("BETWEEN", Some(Keyword::Between)),
    ("LIKE", Some(Keyword::Like)),
    ("MATCH", Some(Keyword::Match)),
    ("TRUE", None),
    ("FALSE", None),
];

/// Splits `text` into tokens, ending with [`TokenKind::End`].
fn tokenize(text: &str) -> Result<Vec<Token>, Fault> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    loop {
        // pegtl's `space`: blank, tab, line feed, carriage return, vertical tab, form feed.
        while bytes
            .get(i)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        {
            i += 1;
        }
        let at = i;
        let Some(&b) = bytes.get(i) else {
            tokens.push(Token {
                kind: TokenKind::End,
                at,
                end: at,
            });
            return Ok(tokens);
        };
        let next = bytes.get(i + 1).copied();
        let (kind, end) = match b {
            b'(' => (TokenKind::Open, i + 1),
            b')' => (TokenKind::Close, i + 1),
            b'.' => (TokenKind::Dot, i + 1),
            b'[' => (TokenKind::OpenBracket, i + 1),
            b']' => (TokenKind::CloseBracket, i + 1),
            b'=' if next == Some(b'=') => {
                return fault(
                    Kind::Expected {
                        expected: "a comparison (equality is one =)",
                        found: "`==`".to_owned(),
                    },
                    at,
                )
            }
            b'=' => (TokenKind::Compare(CompareOp::Eq), i + 1),
            b'<' if next == Some(b'=') => (TokenKind::Compare(CompareOp::Le), i + 2),
            b'<' if next == Some(b'>') => (TokenKind::Compare(CompareOp::Ne), i + 2),
            b'<' => (TokenKind::Compare(CompareOp::Lt), i + 1),
            b'>' if next == Some(b'=') => (TokenKind::Compare(CompareOp::Ge), i + 2),
            b'>' => (TokenKind::Compare(CompareOp::Gt), i + 1),
            b'!' if next == Some(b'=') => (TokenKind::Compare(CompareOp::Ne), i + 2),
            b'\'' | b'`' => string(text, at)?,
            b'%' => parameter(bytes, at)?,
            b'0'..=b'9' => number(text, at)?,
            b'+' | b'-' if next.is_some_and(|n| n.is_ascii_digit()) => number(text, at)?,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => word(text, at)?,
            _ => {
                let c = text[at..].chars().next().unwrap_or('?');
                return fault(Kind::UnexpectedCharacter(c), at);
            }
        };
        tokens.push(Token { kind, at, end });
        i = end;
    }
}

/// A string literal from its opening quote at `at`: `'` or `` ` ``, closed by `'`, holding
/// neither a quote nor a line break (Fast DDS's `string_value`).
fn string(text: &str, at: usize) -> Result<(TokenKind, usize), Fault> {
    let start = at + 1;
    let rest = &text.as_bytes()[start..];
    let Some(len) = rest.iter().position(|b| matches!(b, b'\'' | b'\r' | b'\n')) else {
        return fault(Kind::UnterminatedString, at);
    };
    if rest[len] != b'\'' {
        return fault(Kind::UnterminatedString, at);
    }
    if len > MAX_STRING_LEN {
        return fault(Kind::StringTooLong { len }, at);
    }
    let content = text[start..start + len].to_owned();
    Ok((TokenKind::Literal(Literal::Text(content)), start + len + 1))
}

/// A parameter `%0` to `%99` at `at`.
fn parameter(bytes: &[u8], at: usize) -> Result<(TokenKind, usize), Fault> {
    let digits = bytes[at + 1..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if !(1..=2).contains(&digits) {
        let shown = String::from_utf8_lossy(&bytes[at..at + 1 + digits]).into_owned();
        return fault(
            Kind::Expected {
                expected: "a parameter, %0 to %99",
                found: format!("`{shown}`"),
            },
            at,
        );
    }
    let index = bytes[at + 1..at + 1 + digits]
        .iter()
        .fold(0, |n, d| n * 10 + usize::from(d - b'0'));
    Ok((TokenKind::Parameter(index), at + 1 + digits))
}

/// A number at `at`: an optional sign, then `0x` and hex digits, or digits with an optional
/// fraction (`.` and digits) and exponent (`e`, an optional sign, digits). With a fraction or
/// an exponent it is a float (Fast DDS's `float_value`), else an integer.
fn number(text: &str, at: usize) -> Result<(TokenKind, usize), Fault> {
    let bytes = text.as_bytes();
    let digits_from = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let negative = bytes[at] == b'-';
    let mut i = at + usize::from(matches!(bytes[at], b'+' | b'-'));
    if bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X')) {
        let hex = bytes[i + 2..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if hex == 0 {
            return fault(
                Kind::MalformedNumber {
                    hint: "0x needs hex digits after it, as in 0x1F",
                },
                at,
            );
        }
        let end = i + 2 + hex;
        let magnitude = u64::from_str_radix(&text[i + 2..end], 16).map_err(|_| Fault {
            kind: Kind::IntegerOutOfRange,
            at,
        })?;
        return Ok((TokenKind::Literal(integer(negative, magnitude, at)?), end));
    }
    i += digits_from(i);
    let mut float = false;
    if bytes.get(i) == Some(&b'.') {
        let fraction = digits_from(i + 1);
        if fraction == 0 {
            return fault(
                Kind::MalformedNumber {
                    hint: "a point needs digits after it: write 2.0, not 2.",
                },
                at,
            );
        }
        i += 1 + fraction;
        float = true;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        let exponent = digits_from(i + 1 + sign);
        if exponent == 0 {
            return fault(
                Kind::MalformedNumber {
                    hint: "an exponent needs digits: 1e3, 2.5E-1",
                },
                at,
            );
        }
        i += 1 + sign + exponent;
        float = true;
    }
    let digits = &text[at..i];
    if float {
        return Ok((TokenKind::Literal(Literal::Float(digits.to_owned())), i));
    }
    let magnitude = digits
        .trim_start_matches(['+', '-'])
        .parse::<u64>()
        .map_err(|_| Fault {
            kind: Kind::IntegerOutOfRange,
            at,
        })?;
    Ok((TokenKind::Literal(integer(negative, magnitude, at)?), i))
}

/// An integer literal: a negative one must fit `i64` (Fast DDS reads it with `stoll`), a
/// positive one `u64` (`stoull`).
fn integer(negative: bool, magnitude: u64, at: usize) -> Result<Literal, Fault> {
    let value = i128::from(magnitude);
    if negative {
        if value > i128::from(i64::MAX) + 1 {
            return fault(Kind::IntegerOutOfRange, at);
        }
        return Ok(Literal::Int(-value));
    }
    Ok(Literal::Int(value))
}

/// A name, keyword or boolean at `at`.
fn word(text: &str, at: usize) -> Result<(TokenKind, usize), Fault> {
    let len = text.as_bytes()[at..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    let end = at + len;
    let word = &text[at..end];
    for (upper, keyword) in KEYWORDS {
        if !word.eq_ignore_ascii_case(upper) {
            continue;
        }
        if word != upper && word != upper.to_ascii_lowercase() {
            return fault(
                Kind::KeywordCase {
                    found: word.to_owned(),
                    keyword: upper,
                },
                at,
            );
        }
        let kind = match keyword {
            Some(keyword) => TokenKind::Keyword(keyword),
            None => TokenKind::Literal(Literal::Bool(upper == "TRUE")),
        };
        return Ok((kind, end));
    }
    Ok((TokenKind::Name(word.to_owned()), end))
}

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token>,
    next: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // `tokenize` ends with `End`, and nothing moves past it.
        &self.tokens[self.next.min(self.tokens.len() - 1)]
    }

    fn peek_second(&self) -> &Token {
        &self.tokens[(self.next + 1).min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != TokenKind::End {
            self.next += 1;
        }
        token
    }

    /// How a token reads in a message.
    fn shown(&self, token: &Token) -> String {
        match token.kind {
            TokenKind::End => "the end of the expression".to_owned(),
            _ => format!("`{}`", &self.text[token.at..token.end]),
        }
    }

    fn expected<T>(&self, expected: &'static str) -> Result<T, Fault> {
        let token = self.peek();
        fault(
            Kind::Expected {
                expected,
                found: self.shown(token),
            },
            token.at,
        )
    }

    fn expect_end(&self, expected: &'static str) -> Result<(), Fault> {
        match self.peek().kind {
            TokenKind::End => Ok(()),
            _ => self.expected(expected),
        }
    }

    /// Conditions joined by one connective.
    fn expression(&mut self, depth: usize) -> Result<Condition, Fault> {
        let mut items = vec![self.condition(depth)?];
        let mut connective = None;
        while let TokenKind::Keyword(keyword @ (Keyword::And | Keyword::Or)) = self.peek().kind {
            let at = self.peek().at;
            if connective.is_some_and(|c| c != keyword) {
                return fault(Kind::MixedAndOr, at);
            }
            connective = Some(keyword);
            self.advance();
            items.push(self.condition(depth)?);
        }
        Ok(match connective {
            None => items.pop().unwrap_or(Condition::And(Vec::new())),
            Some(Keyword::And) => Condition::And(items),
            Some(_) => Condition::Or(items),
        })
    }

    fn condition(&mut self, depth: usize) -> Result<Condition, Fault> {
        if depth >= MAX_DEPTH {
            return fault(Kind::TooDeep { max: MAX_DEPTH }, self.peek().at);
        }
        match self.peek().kind {
            TokenKind::Open => {
                self.advance();
                let inner = self.expression(depth + 1)?;
                match self.peek().kind {
                    TokenKind::Close => {
                        self.advance();
                        Ok(inner)
                    }
                    _ => self.expected("AND, OR or `)`"),
                }
            }
            TokenKind::Keyword(Keyword::Not) => {
                self.advance();
                Ok(Condition::Not(Box::new(self.condition(depth + 1)?)))
            }
            _ => self.predicate(),
        }
    }

    fn predicate(&mut self) -> Result<Condition, Fault> {
        let left = self.operand()?;
        let token = self.peek().clone();
        match token.kind {
            TokenKind::Compare(op) => {
                self.advance();
                let right = self.operand()?;
                if !left.is_field() && !right.is_field() {
                    return fault(Kind::NoField, left.at());
                }
                Ok(Condition::Compare { op, left, right })
            }
            TokenKind::Keyword(Keyword::Like) => {
                self.advance();
                let pattern = self.operand()?;
                if !left.is_field() && !pattern.is_field() {
                    return fault(Kind::NoField, left.at());
                }
                Ok(Condition::Like {
                    value: left,
                    pattern,
                })
            }
            TokenKind::Keyword(Keyword::Match) => fault(
                Kind::Unsupported {
                    what: "MATCH (Fast DDS's regular-expression extension)",
                    instead: "use LIKE, with % for any characters and _ for one",
                },
                token.at,
            ),
            TokenKind::Keyword(Keyword::Between) => {
                self.advance();
                self.between(left, false, token.at)
            }
            TokenKind::Keyword(Keyword::Not)
                if self.peek_second().kind == TokenKind::Keyword(Keyword::Between) =>
            {
                self.advance();
                self.advance();
                self.between(left, true, token.at)
            }
            TokenKind::Dot | TokenKind::OpenBracket if left.is_field() => fault(
                Kind::Expected {
                    expected: "a field name without spaces inside (a.b[0])",
                    found: self.shown(&token),
                },
                token.at,
            ),
            _ => self.expected("a comparison (= <> != < <= > >=), LIKE or BETWEEN"),
        }
    }

    /// The rest of `field [NOT] BETWEEN low AND high` after `BETWEEN` (at `at`).
    fn between(&mut self, field: Operand, negated: bool, at: usize) -> Result<Condition, Fault> {
        let Operand::Field(field) = field else {
            return fault(
                Kind::Expected {
                    expected: "a field before BETWEEN (field BETWEEN low AND high)",
                    found: "a constant".to_owned(),
                },
                at,
            );
        };
        let low = self.constant()?;
        match self.peek().kind {
            TokenKind::Keyword(Keyword::And) => {
                self.advance();
            }
            _ => return self.expected("AND between the bounds of BETWEEN"),
        }
        let high = self.constant()?;
        Ok(Condition::Between {
            field,
            low,
            high,
            negated,
        })
    }

    /// A bound of BETWEEN: a literal or a parameter (Fast DDS's `Range`).
    fn constant(&mut self) -> Result<Operand, Fault> {
        match self.peek().kind {
            TokenKind::Name(_) => {
                self.expected("a literal or a parameter (BETWEEN's bounds are constants)")
            }
            _ => self.operand(),
        }
    }

    fn operand(&mut self) -> Result<Operand, Fault> {
        let token = self.peek().clone();
        match token.kind {
            TokenKind::Name(_) => self.field().map(Operand::Field),
            TokenKind::Literal(value) => {
                self.advance();
                Ok(Operand::Literal {
                    value,
                    at: token.at,
                })
            }
            TokenKind::Parameter(index) => {
                self.advance();
                Ok(Operand::Parameter {
                    index,
                    at: token.at,
                })
            }
            TokenKind::Dot
                if matches!(
                    self.peek_second().kind,
                    TokenKind::Literal(Literal::Int(_) | Literal::Float(_))
                ) =>
            {
                fault(
                    Kind::MalformedNumber {
                        hint: "a number starts with a digit: write 0.5, not .5",
                    },
                    token.at,
                )
            }
            _ => self.expected("a field, a literal or a parameter"),
        }
    }

    /// A field path; its parts touch (`a.b[0]`, no spaces), as in Fast DDS's `fieldname`.
    fn field(&mut self) -> Result<FieldPath, Fault> {
        let first = self.peek().clone();
        let mut parts = Vec::new();
        let mut end;
        loop {
            let name = self.advance();
            let TokenKind::Name(text) = name.kind else {
                return fault(
                    Kind::Expected {
                        expected: "a field name after `.`",
                        found: self.shown(&name),
                    },
                    name.at,
                );
            };
            end = name.end;
            let mut part = FieldPart {
                name: text,
                index: None,
                at: name.at,
            };
            let next = self.peek().clone();
            if next.kind == TokenKind::OpenBracket && next.at == end {
                self.advance();
                let index = self.advance();
                let digits = &self.text[index.at..index.end];
                let (TokenKind::Literal(Literal::Int(value)), true) = (
                    &index.kind,
                    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
                ) else {
                    return fault(
                        Kind::Expected {
                            expected: "an index (digits) inside [ ]",
                            found: self.shown(&index),
                        },
                        index.at,
                    );
                };
                let close = self.advance();
                if close.kind != TokenKind::CloseBracket {
                    return fault(
                        Kind::Expected {
                            expected: "`]` after the index",
                            found: self.shown(&close),
                        },
                        close.at,
                    );
                }
                part.index = u64::try_from(*value).ok();
                end = close.end;
            }
            parts.push(part);
            let next = self.peek().clone();
            if next.kind == TokenKind::Dot && next.at == end {
                self.advance();
                continue;
            }
            break;
        }
        Ok(FieldPath {
            parts,
            at: first.at,
            text: self.text[first.at..end].to_owned(),
        })
    }
}
