//! Why a content filter was refused: what is wrong, where in the text, and how to fix it.
//!
//! A [`ContentFilterError`] carries the text it points into (the expression, or the one
//! parameter at fault), so that its `Display` can show the line with a caret under the spot.

use std::fmt;

/// Where in a filter a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// At byte `offset` of the filter expression.
    Expression { offset: usize },
    /// At byte `offset` of expression parameter `index` (the text `%index` stands for).
    Parameter { index: usize, offset: usize },
    /// The filter as a whole: its length or its number of parameters.
    Filter,
}

/// Why a content filter expression, or one of its parameters, cannot be used (rclcpp throws
/// `RCLError` for these, with Fast DDS's log saying less).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentFilterError(
    /// Boxed: an error is rare, and a `Result` carrying it stays one pointer wide.
    Box<Details>,
);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Details {
    kind: ContentFilterErrorKind,
    location: Location,
    /// The text `location` points into: the expression, or the parameter.
    text: String,
}

/// What is wrong with a content filter.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentFilterErrorKind {
    /// A character that starts no token of the language.
    UnexpectedCharacter(char),
    /// A string literal without its closing quote (strings end at the line's end).
    UnterminatedString,
    /// A string literal (or string parameter) longer than Fast DDS's 255 bytes.
    StringTooLong { len: usize },
    /// A number that is not written as the language writes numbers; `hint` says how.
    MalformedNumber { hint: &'static str },
    /// An integer beyond 64 bits (`u64` for a positive one, `i64` for a negative one).
    IntegerOutOfRange,
    /// A keyword in mixed case (`Between`); the language takes all upper or all lower case.
    KeywordCase {
        found: String,
        keyword: &'static str,
    },
    /// Something else than what the grammar allows here.
    Expected {
        expected: &'static str,
        found: String,
    },
    /// `AND` and `OR` side by side without parentheses, which SQL and Fast DDS group
    /// differently.
    MixedAndOr,
    /// Parentheses and `NOT` nested deeper than `max`.
    TooDeep { max: usize },
    /// An expression longer than `max` bytes.
    TooLong { len: usize, max: usize },
    /// A comparison of two constants: one side must be a field.
    NoField,
    /// Syntax Fast DDS takes that roslite does not (`MATCH`).
    Unsupported {
        what: &'static str,
        instead: &'static str,
    },
    /// No field `name` in `type_name`.
    UnknownField {
        name: String,
        type_name: String,
        fields: Vec<String>,
    },
    /// `.name` after a field that is not a message.
    NoFieldsIn { path: String, ty: String },
    /// An array or sequence compared without picking one element.
    IndexNeeded { path: String, ty: String },
    /// An index after a field that is neither an array nor a sequence.
    NotIndexable { path: String, ty: String },
    /// An index at or beyond an array's length or a bounded sequence's bound.
    IndexOutOfBounds {
        path: String,
        index: u64,
        len: u64,
        array: bool,
    },
    /// A message-typed field compared as a whole.
    NotAValue {
        path: String,
        ty: String,
        first_field: Option<String>,
    },
    /// A field of a type filters cannot read (wstring, wchar, long double).
    UnsupportedFieldType { path: String, ty: String },
    /// Two sides that cannot be compared (a string and a number).
    Incompatible {
        left: String,
        right: String,
        hint: &'static str,
    },
    /// `LIKE` without a string field on either side.
    LikeNeedsStringField,
    /// `%index` with only `given` parameters.
    MissingParameter { index: usize, given: usize },
    /// More than 100 parameters (`%0` to `%99`).
    TooManyParameters { given: usize },
    /// A parameter that is not one literal (an unquoted string).
    ParameterNotALiteral,
    /// The message type has no type description to read fields by.
    NoTypeDescription { type_name: String },
    /// The type description refers to a type it does not describe.
    IncompleteTypeDescription { missing: String },
}

impl ContentFilterError {
    pub(super) fn new(kind: ContentFilterErrorKind, location: Location, text: &str) -> Self {
        Self(Box::new(Details {
            kind,
            location,
            text: text.to_owned(),
        }))
    }

    /// What is wrong.
    pub fn kind(&self) -> &ContentFilterErrorKind {
        &self.0.kind
    }

    /// Where it is.
    pub fn location(&self) -> &Location {
        &self.0.location
    }
}

/// `s` or the plural, by `n`.
fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

impl fmt::Display for ContentFilterErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnexpectedCharacter(c) => write!(
                f,
                "unexpected character `{c}`: a filter is made of field names (a.b[0]), literals \
                 ('text', 42, -1.5, 0x1F, TRUE), parameters (%0), comparisons (= <> != < <= > \
                 >=), LIKE, BETWEEN, AND, OR, NOT and parentheses"
            ),
            Self::UnterminatedString => f.write_str(
                "this string has no closing quote: end it with ' on the same line (a string \
                 cannot hold a quote or a line break)",
            ),
            Self::StringTooLong { len } => write!(
                f,
                "a string literal holds at most 255 bytes (Fast DDS's limit); this one holds \
                 {len}"
            ),
            Self::MalformedNumber { hint } => write!(f, "malformed number: {hint}"),
            Self::IntegerOutOfRange => f.write_str(
                "this integer does not fit in 64 bits (-9223372036854775808 to \
                 18446744073709551615)",
            ),
            Self::KeywordCase { found, keyword } => write!(
                f,
                "`{found}` is in mixed case: write {keyword} or {} (keywords are all upper or \
                 all lower case)",
                keyword.to_ascii_lowercase()
            ),
            Self::Expected { expected, found } => write!(f, "expected {expected}, found {found}"),
            Self::MixedAndOr => f.write_str(
                "AND and OR are mixed without parentheses: SQL groups `a OR b AND c` as `a OR \
                 (b AND c)`, Fast DDS as `(a OR b) AND c`; add parentheses to say which you mean",
            ),
            Self::TooDeep { max } => write!(
                f,
                "parentheses and NOT are nested more than {max} deep; write the condition \
                 flatter"
            ),
            Self::TooLong { len, max } => write!(
                f,
                "the expression is {len} bytes long; at most {max} are allowed (Fast DDS's \
                 limit)"
            ),
            Self::NoField => f.write_str(
                "a comparison needs a field on at least one side: compare a field with a \
                 literal, a parameter or another field",
            ),
            Self::Unsupported { what, instead } => write!(f, "{what} is not supported: {instead}"),
            Self::UnknownField {
                name,
                type_name,
                fields,
            } => {
                write!(f, "{type_name} has no field `{name}`")?;
                if fields.is_empty() {
                    f.write_str("; it has no fields")
                } else {
                    write!(f, "; its fields are: {}", fields.join(", "))
                }
            }
            Self::NoFieldsIn { path, ty } => write!(
                f,
                "`{path}` is {ty}, which has no fields: compare `{path}` itself"
            ),
            Self::IndexNeeded { path, ty } => write!(
                f,
                "`{path}` is {ty}: compare one of its elements, e.g. `{path}[0]`"
            ),
            Self::NotIndexable { path, ty } => write!(
                f,
                "`{path}` is {ty}, not an array or sequence: remove the index"
            ),
            Self::IndexOutOfBounds {
                path,
                index,
                len,
                array,
            } => {
                let (holds, last) = (
                    if *array { "holds" } else { "holds at most" },
                    len.saturating_sub(1),
                );
                write!(
                    f,
                    "`{path}[{index}]` is out of bounds: `{path}` {holds} {len} {} (indexes 0 to \
                     {last})",
                    plural(*len as usize, "element", "elements")
                )
            }
            Self::NotAValue {
                path,
                ty,
                first_field,
            } => {
                write!(
                    f,
                    "`{path}` is a {ty} message, which filters cannot compare"
                )?;
                match first_field {
                    Some(field) => write!(f, ": compare one of its fields, e.g. `{path}.{field}`"),
                    None => Ok(()),
                }
            }
            Self::UnsupportedFieldType { path, ty } => write!(
                f,
                "`{path}` is {ty}; filters compare numbers, booleans, chars and strings (as Fast \
                 DDS's do)"
            ),
            Self::Incompatible { left, right, hint } => {
                write!(f, "{left} cannot be compared with {right}: {hint}")
            }
            Self::LikeNeedsStringField => f.write_str(
                "LIKE matches a string field against a pattern: one side must be a string field \
                 (`name LIKE 'abc%'`)",
            ),
            Self::MissingParameter { index, given: 0 } => write!(
                f,
                "%{index} stands for expression parameter {index}, but no parameters are given"
            ),
            Self::MissingParameter { index, given } => write!(
                f,
                "%{index} stands for expression parameter {index}, but {given} {} given (%0 to \
                 %{})",
                plural(*given, "is", "are"),
                given - 1
            ),
            Self::TooManyParameters { given } => write!(
                f,
                "{given} expression parameters are given; at most 100 are allowed (%0 to %99)"
            ),
            Self::ParameterNotALiteral => f.write_str(
                "an expression parameter is one literal, written as in the expression: quote a \
                 string ('abc'), write a number as a number (42, -1.5, 0x1F) and a boolean as \
                 TRUE or FALSE",
            ),
            Self::NoTypeDescription { type_name } => write!(
                f,
                "{type_name} has no type description, and a content filter reads fields by it: \
                 generated types carry one; give a run-time type's with \
                 TypeInfo::with_description"
            ),
            Self::IncompleteTypeDescription { missing } => write!(
                f,
                "the type description refers to {missing} but does not describe it"
            ),
        }
    }
}

impl fmt::Display for ContentFilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Details {
            kind,
            location,
            text,
        } = &*self.0;
        let offset = match *location {
            Location::Expression { offset } => {
                let column = column(text, offset);
                write!(f, "content filter expression, column {column}: {kind}")?;
                offset
            }
            Location::Parameter { index, offset } => {
                write!(f, "content filter parameter %{index}: {kind}")?;
                offset
            }
            Location::Filter => return write!(f, "content filter: {kind}"),
        };
        // The text with a caret under the spot, on a line of its own (a text with line breaks
        // shows the line the spot is on).
        let before = text.get(..offset).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |at| line_start + at);
        let line = &text[line_start..line_end];
        let pad = column(line, offset.saturating_sub(line_start)) - 1;
        write!(f, "\n  {line}\n  {}^", " ".repeat(pad))
    }
}

/// The 1-based column (in characters) of byte `offset` of `text`.
fn column(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    before.chars().count() + 1
}

impl std::error::Error for ContentFilterError {}
