//! Encode, decode and print any ROS 2 message type known only from its definition, for tools
//! (`topic echo`, `topic pub`, bag inspection) that cannot link generated code for every type.
//!
//! Layers:
//! - [`Value`]: a message as a tree of plain values, in field order.
//! - `cdr`: [`decode`], [`encode`] and [`default_value`], walking a [`MessageSpec`] from an
//!   [`InterfaceSet`] next to the bytes. The layout is exactly the one generated code uses
//!   (plain CDR, see `roslite-cdr`).
//! - `yaml`: the YAML tree of message text, read by `roslite-yaml`, and
//!   `input`: [`from_yaml`], which reads it against the message type like `ros2 topic pub`.
//! - `resolve`: what plain YAML 1.1 scalars mean, shared by reader and printer.
//! - `emit`: [`to_yaml`], which prints like `ros2 topic echo` (rosidl_runtime_py
//!   `message_to_yaml`, i.e. PyYAML's `yaml.dump` of an ordered dict).
//!
//! Canonical values: every function here produces, for a given ROS type, the same [`Value`]
//! variant, so a decoded value compares equal to one read from YAML (but see `float32` below):
//!
//! | ROS type | `Value` |
//! | --- | --- |
//! | `bool` | `Bool` |
//! | `int8` … `int64` | `Int` |
//! | `uint8` … `uint64`, `byte`, `char` | `UInt` |
//! | `float32`, `float64` | `Float` (see below for `float32`) |
//! | `string`, `wstring` | `String` |
//! | arrays/sequences of `uint8`, `byte`, `char` | `Bytes` |
//! | other arrays/sequences | `Array` |
//! | nested message | `Struct`, every field in definition order |
//!
//! A `float32` decoded holds the exact widened `f32`; one read from YAML or taken from a
//! definition's default holds the number as written (`0.123456789`), as rclpy keeps it in the
//! field until the message is sent, and [`encode`] rounds it. So a `float32` written with more
//! digits than an `f32` keeps does not compare equal to its decoded encoding.
//!
//! Type graphs are finite and ROS forbids recursive types, so recursion over a type is bounded
//! by its nesting; a definition that does nest itself is refused with [`DynError::Recursive`]
//! instead of overflowing the stack.

use std::fmt;

use roslite_cdr::{DecodeError, EncodeError};

use crate::ast::{BaseType, Collection, FieldType, MessageSpec, Primitive, TypeName};
use crate::registry::InterfaceSet;

mod cdr;
mod emit;
mod input;
mod resolve;
mod yaml;

pub use cdr::{decode, default_value, encode};
pub use emit::to_yaml;
pub use input::from_yaml;

/// How deep types may nest before we call them recursive. Real ROS types stay below 10.
const MAX_DEPTH: usize = 64;

/// One message, or one field of it, as plain data. See the module docs for which variant each
/// ROS type uses.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    String(String),
    Array(Vec<Value>),
    /// A `uint8`, `byte` or `char` array or sequence; kept packed because these carry images
    /// and point clouds.
    Bytes(Vec<u8>),
    /// Fields in definition order.
    Struct(Vec<(String, Value)>),
}

impl Value {
    /// The field called `name` of a struct.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A short description for error messages: the kind, and the value if it is small.
    fn describe(&self) -> String {
        match self {
            Value::Bool(b) => format!("bool {b}"),
            Value::Int(i) => format!("integer {i}"),
            Value::UInt(u) => format!("integer {u}"),
            Value::Float(f) => format!("float {f:?}"),
            Value::String(s) => format!("string {}", quote_for_error(s)),
            Value::Array(items) => format!("a list of {} items", items.len()),
            Value::Bytes(bytes) => format!("a byte list of {} items", bytes.len()),
            Value::Struct(_) => "a struct".to_owned(),
        }
    }
}

/// What [`to_yaml`] leaves out or shortens; the `ros2 topic echo` flags of the same names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct YamlOptions {
    /// Print `'<sequence type: double, length: 5>'` instead of array and sequence contents.
    pub no_arr: bool,
    /// Print `'<string length: <5>>'` instead of strings.
    pub no_str: bool,
    /// Cut strings after this many characters and arrays after this many elements, adding
    /// `...` (`ros2 topic echo` uses 128 unless `--full-length`).
    pub truncate_length: Option<usize>,
    /// One line in flow style: `{linear: {x: 0.1, y: 0.0, z: 0.0}, ...}`.
    pub flow_style: bool,
}

/// Why a dynamic operation failed. `field` members are dotted paths from the message root,
/// such as `linear.x` or `points[3].y`; empty means the message itself.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DynError {
    /// No definition is loaded for this type, or for a type it contains.
    UnknownType(TypeName),
    /// The type contains itself, or nests more than 64 levels.
    Recursive(TypeName),
    /// The payload does not match the type.
    Decode { field: String, source: DecodeError },
    /// The CDR writer refused a value (a NUL inside a string, a length over 2^32).
    Encode { field: String, source: EncodeError },
    /// A value of the wrong kind; `expected` is the ROS type as written in `.msg` files.
    TypeMismatch {
        field: String,
        expected: String,
        found: String,
    },
    /// A field name the message type does not have.
    UnknownField {
        field: String,
        type_name: TypeName,
        known: Vec<String>,
    },
    /// A number outside the range of its ROS type.
    OutOfRange {
        field: String,
        expected: String,
        found: String,
    },
    /// A bounded string to send that is longer than its bound counted the strict way (see
    /// `check_string_bound`): `len` is bytes of UTF-8 for a `string`, UTF-16 code units for a
    /// `wstring`.
    StringTooLong {
        field: String,
        expected: String,
        len: usize,
        chars: usize,
        bound: usize,
    },
    /// A bounded sequence longer than its bound.
    TooLong {
        field: String,
        expected: String,
        len: usize,
        bound: usize,
    },
    /// A fixed-size array given the wrong number of elements.
    WrongLength {
        field: String,
        expected: String,
        len: usize,
    },
    /// Text that is not YAML we can read; `line` and `column` are 1-based.
    Yaml {
        line: usize,
        column: usize,
        message: String,
    },
}

impl DynError {
    /// Prefixes the field path with the struct field that contained the failure.
    fn in_field(mut self, name: &str) -> Self {
        if let Some(path) = self.path_mut() {
            *path = if path.is_empty() {
                name.to_owned()
            } else if path.starts_with('[') {
                format!("{name}{path}")
            } else {
                format!("{name}.{path}")
            };
        }
        self
    }

    /// Prefixes the field path with the array element that contained the failure.
    fn at_index(mut self, index: usize) -> Self {
        if let Some(path) = self.path_mut() {
            *path = if path.is_empty() || path.starts_with('[') {
                format!("[{index}]{path}")
            } else {
                format!("[{index}].{path}")
            };
        }
        self
    }

    fn path_mut(&mut self) -> Option<&mut String> {
        match self {
            Self::Decode { field, .. }
            | Self::Encode { field, .. }
            | Self::TypeMismatch { field, .. }
            | Self::UnknownField { field, .. }
            | Self::OutOfRange { field, .. }
            | Self::TooLong { field, .. }
            | Self::StringTooLong { field, .. }
            | Self::WrongLength { field, .. } => Some(field),
            Self::UnknownType(_) | Self::Recursive(_) | Self::Yaml { .. } => None,
        }
    }
}

impl fmt::Display for DynError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownType(ty) => write!(
                f,
                "unknown type `{ty}`: no definition of it is loaded; check the spelling \
                 (`package/msg/Name`) and load the package that defines it"
            ),
            Self::Recursive(ty) => write!(
                f,
                "type `{ty}` contains itself or nests more than {MAX_DEPTH} levels deep; ROS 2 \
                 types cannot be recursive, so fix its definition"
            ),
            Self::Decode { field, source } => write!(
                f,
                "cannot decode {}: {source}; {}",
                subject(field),
                decode_hint(source)
            ),
            Self::Encode { field, source } => {
                write!(f, "cannot encode {}: {source}", subject(field))
            }
            Self::TypeMismatch {
                field,
                expected,
                found,
            } => write!(
                f,
                "{} expects {expected} but got {found}; {}",
                subject(field),
                type_hint(expected)
            ),
            Self::UnknownField {
                field,
                type_name,
                known,
            } => {
                let name = field.rsplit(['.', ']']).next().unwrap_or(field);
                write!(
                    f,
                    "unknown field `{field}`: {type_name} has no field `{name}`"
                )?;
                if let Some(close) = closest(name, known) {
                    write!(f, " (did you mean `{close}`?)")?;
                }
                if known.is_empty() {
                    f.write_str("; it has no fields, so give an empty mapping {}")
                } else {
                    write!(f, "; known fields: {}", known.join(", "))
                }
            }
            Self::OutOfRange {
                field,
                expected,
                found,
            } => {
                write!(
                    f,
                    "{} = {found} is out of range for {expected}",
                    subject(field)
                )?;
                match (range_of(expected), expected.as_str()) {
                    (Some((min, max)), _) => write!(f, "; use a value from {min} to {max}"),
                    (None, "float32") => write!(
                        f,
                        "; use a value from {:e} to {:e}, or .inf or -.inf for infinity",
                        f32::MIN,
                        f32::MAX
                    ),
                    (None, "float64") => write!(
                        f,
                        "; use a value from {:e} to {:e}, or .inf or -.inf for infinity",
                        f64::MIN,
                        f64::MAX
                    ),
                    (None, _) => f.write_str("; use a smaller value"),
                }
            }
            Self::TooLong {
                field,
                expected,
                len,
                bound,
            } => write!(
                f,
                "{} is too long for {expected}: length {len}, at most {bound} allowed; shorten it",
                subject(field)
            ),
            Self::StringTooLong {
                field,
                expected,
                len,
                chars,
                bound,
            } => {
                // (what `len` counts, the unit, how the unit is counted)
                let (what, unit, counted) = if expected.starts_with("wstring") {
                    (
                        "UTF-16 code units",
                        "units",
                        "UTF-16 code units (a character outside the Basic Multilingual Plane \
                         takes two)",
                    )
                } else {
                    ("bytes of UTF-8", "bytes", "bytes")
                };
                write!(
                    f,
                    "{} holds {len} {what} ({chars} characters), over the bound of {expected}: \
                     roslite sends a bounded string only if it fits the bound counted in \
                     {counted}, as rclcpp counts it (rclpy counts characters), so that every \
                     ROS 2 node can read it; shorten it to at most {bound} {unit}",
                    subject(field),
                )
            }
            Self::WrongLength {
                field,
                expected,
                len,
            } => write!(
                f,
                "{} is the fixed-size array {expected} but was given {len} elements; give \
                 exactly as many as the type says",
                subject(field)
            ),
            Self::Yaml {
                line,
                column,
                message,
            } => {
                write!(f, "invalid YAML at line {line}, column {column}: {message}")
            }
        }
    }
}

impl std::error::Error for DynError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Decode { source, .. } => Some(source),
            Self::Encode { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a payload that does not decode says about its sender, and what to do.
fn decode_hint(source: &DecodeError) -> &'static str {
    match source {
        DecodeError::StringBoundExceeded { .. } => {
            "the sender broke the bound of its own type, so its messages are dropped; fix the \
             sender"
        }
        DecodeError::BoundExceeded { .. } => {
            "the sender broke the bound of the type as roslite has it; check that both sides \
             use the same definition (compare the type hashes), else fix the sender"
        }
        DecodeError::InvalidUtf8 => {
            "ROS 2 strings are UTF-8 (and wide strings UTF-16), so fix the sender's text"
        }
        _ => {
            "the payload does not match the type, so check that both sides use the same \
             definition (compare the type hashes)"
        }
    }
}

fn subject(field: &str) -> String {
    if field.is_empty() {
        "the message".to_owned()
    } else {
        format!("field `{field}`")
    }
}

fn type_hint(expected: &str) -> &'static str {
    if expected.ends_with(']') {
        "write a list such as [1, 2, 3]"
    } else if expected.contains('/') {
        "write a mapping of its fields such as {x: 1.0}"
    } else if expected.starts_with("string") || expected.starts_with("wstring") {
        "write text, quoted if it looks like a number or bool: 'true'"
    } else if expected == "bool" {
        "write true or false"
    } else {
        "write a number"
    }
}

/// The inclusive range of an integer ROS type, for error messages.
fn range_of(keyword: &str) -> Option<(i128, i128)> {
    Some(match Primitive::from_keyword(keyword)? {
        Primitive::Int8 => (i8::MIN.into(), i8::MAX.into()),
        Primitive::Int16 => (i16::MIN.into(), i16::MAX.into()),
        Primitive::Int32 => (i32::MIN.into(), i32::MAX.into()),
        Primitive::Int64 => (i64::MIN.into(), i64::MAX.into()),
        Primitive::Uint8 | Primitive::Byte | Primitive::Char => (0, u8::MAX.into()),
        Primitive::Uint16 => (0, u16::MAX.into()),
        Primitive::Uint32 => (0, u32::MAX.into()),
        Primitive::Uint64 => (0, u64::MAX.into()),
        Primitive::Bool | Primitive::Float32 | Primitive::Float64 => return None,
    })
}

/// The known name nearest to a mistyped one, if it is close enough to be a typo.
fn closest<'k>(name: &str, known: &'k [String]) -> Option<&'k str> {
    let limit = (name.chars().count() / 3).clamp(1, 3);
    known
        .iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

fn quote_for_error(s: &str) -> String {
    const MAX: usize = 40;
    let mut out: String = s.chars().take(MAX).collect();
    if s.chars().count() > MAX {
        out.push_str("...");
    }
    format!("{out:?}")
}

/// The value at a dotted path such as `linear.x` or `points[2].y` (`ros2 topic echo --field`).
/// `Bytes` elements are not addressable; ask for the whole field instead.
pub fn field<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = value;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (name, mut indices) = match segment.find('[') {
            Some(open) => (&segment[..open], &segment[open..]),
            None => (segment, ""),
        };
        if !name.is_empty() {
            current = current.get(name)?;
        }
        while let Some(rest) = indices.strip_prefix('[') {
            let close = rest.find(']')?;
            let index: usize = rest[..close].trim().parse().ok()?;
            current = match current {
                Value::Array(items) => items.get(index)?,
                _ => return None,
            };
            indices = &rest[close + 1..];
        }
        if !indices.is_empty() {
            return None;
        }
    }
    Some(current)
}

/// The declared type of the field at `path` inside `ty` (indices `[i]` select the element
/// type), so tools can print a nested message with [`to_yaml`].
///
/// # Errors
/// [`DynError::UnknownType`] when a definition is missing, [`DynError::UnknownField`] for a
/// bad path.
pub fn field_type(set: &InterfaceSet, ty: &TypeName, path: &str) -> Result<FieldType, DynError> {
    let mut current = FieldType {
        base: BaseType::Named(ty.clone()),
        collection: Collection::Single,
    };
    let mut walked = String::new();
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (name, indices) = match segment.find('[') {
            Some(open) => (&segment[..open], &segment[open..]),
            None => (segment, ""),
        };
        let unknown = |type_name: TypeName, known: Vec<String>| DynError::UnknownField {
            field: join_path(&walked, segment),
            type_name,
            known,
        };
        if !name.is_empty() {
            let BaseType::Named(parent) = &current.base else {
                return Err(unknown(ty.clone(), Vec::new()));
            };
            if current.collection != Collection::Single {
                return Err(unknown(parent.clone(), Vec::new()));
            }
            let spec = lookup(set, parent)?;
            let Some(found) = spec.fields.iter().find(|f| f.name == name) else {
                return Err(unknown(parent.clone(), field_names(spec)));
            };
            current = found.ty.clone();
        }
        for _ in indices.matches('[') {
            if current.collection == Collection::Single {
                return Err(unknown(ty.clone(), Vec::new()));
            }
            current.collection = Collection::Single;
        }
        walked = join_path(&walked, segment);
    }
    Ok(current)
}

fn join_path(prefix: &str, segment: &str) -> String {
    if prefix.is_empty() {
        segment.to_owned()
    } else {
        format!("{prefix}.{segment}")
    }
}

fn lookup<'s>(set: &'s InterfaceSet, ty: &TypeName) -> Result<&'s MessageSpec, DynError> {
    set.message(ty)
        .ok_or_else(|| DynError::UnknownType(ty.clone()))
}

fn field_names(spec: &MessageSpec) -> Vec<String> {
    spec.fields.iter().map(|f| f.name.clone()).collect()
}

/// `uint8`, `byte` and `char` collections are [`Value::Bytes`].
fn is_byte_like(base: &BaseType) -> bool {
    matches!(
        base,
        BaseType::Primitive(Primitive::Uint8 | Primitive::Byte | Primitive::Char)
    )
}

/// The type as written in a `.msg` file, for error messages: `float64`, `string<=10`,
/// `int32[3]`, `geometry_msgs/msg/Point[]`.
fn ros_type_name(ty: &FieldType) -> String {
    let base = base_type_name(&ty.base);
    match ty.collection {
        Collection::Single => base,
        Collection::Array(n) => format!("{base}[{n}]"),
        Collection::BoundedSequence(n) => format!("{base}[<={n}]"),
        Collection::UnboundedSequence => format!("{base}[]"),
    }
}

fn base_type_name(base: &BaseType) -> String {
    match base {
        BaseType::Primitive(p) => p.keyword().to_owned(),
        BaseType::String { bound: None } => "string".to_owned(),
        BaseType::String { bound: Some(n) } => format!("string<={n}"),
        BaseType::WString { bound: None } => "wstring".to_owned(),
        BaseType::WString { bound: Some(n) } => format!("wstring<={n}"),
        BaseType::Named(name) => name.to_string(),
    }
}

/// Guards recursion over the type graph.
fn check_depth(depth: usize, ty: &TypeName) -> Result<usize, DynError> {
    if depth >= MAX_DEPTH {
        return Err(DynError::Recursive(ty.clone()));
    }
    Ok(depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_prefixed_outwards() {
        let err = DynError::TypeMismatch {
            field: String::new(),
            expected: "float64".into(),
            found: "string \"a\"".into(),
        };
        let err = err.in_field("x").at_index(3).in_field("points");
        let DynError::TypeMismatch { field, .. } = &err else {
            unreachable!()
        };
        assert_eq!(field, "points[3].x");
        assert!(err
            .to_string()
            .contains("field `points[3].x` expects float64"));
    }

    #[test]
    fn suggestions_catch_typos_only() {
        let known = vec!["linear".to_owned(), "angular".to_owned()];
        assert_eq!(closest("liner", &known), Some("linear"));
        assert_eq!(closest("zzz", &known), None);
    }

    #[test]
    fn field_paths() {
        let v = Value::Struct(vec![
            ("a".into(), Value::Struct(vec![("b".into(), Value::Int(1))])),
            (
                "l".into(),
                Value::Array(vec![Value::Struct(vec![("c".into(), Value::Bool(true))])]),
            ),
        ]);
        assert_eq!(field(&v, "a.b"), Some(&Value::Int(1)));
        assert_eq!(field(&v, "l[0].c"), Some(&Value::Bool(true)));
        assert_eq!(field(&v, "l[1]"), None);
        assert_eq!(field(&v, "a.x"), None);
        assert_eq!(field(&v, ""), Some(&v));
    }
}
