//! REP-2011 type descriptions and their RIHS01 hashes.
//!
//! REP-2011 "Evolving Message Types" defines the ROS Interface Hashing Standard; version 01 is
//! what `rosidl_generator_type_description/__init__.py` computes (`calculate_type_hash`) and
//! what Iron+ RMWs put in `USER_DATA` as `typehash=RIHS01_<hex>;`:
//!
//! 1. Describe each type individually: its full name and its fields in declaration order,
//!    each field as `type_id`, `capacity`, `string_capacity` and `nested_type_name`
//!    (`type_description_interfaces/msg/{IndividualTypeDescription,Field,FieldType}.msg`).
//! 2. Collect every type reachable through nested fields, sorted by name.
//! 3. Serialize `{"type_description": .., "referenced_type_descriptions": [..]}` without
//!    default values, exactly as Python's `json.dumps(.., separators=(', ', ': '))`.
//! 4. SHA-256 the UTF-8 text and prefix `RIHS01_` to the lowercase hex digest.
//!
//! What gets described follows the generator's `add_msg`/`add_srv`/`add_action`:
//! - a message: its fields, or rosidl's placeholder `uint8 structure_needs_at_least_one_member`
//!   when it has none (`rosidl_adapter/resource/struct.idl.em` inserts it into the IDL that the
//!   generator reads);
//! - a service: nested fields `request_message`, `response_message`, `event_message`;
//! - an action: nested fields `goal`, `result`, `feedback`, `send_goal_service`,
//!   `get_result_service`, `feedback_message`.
//!
//! Field type ids go through the IDL mapping of `rosidl_adapter/msg/__init__.py`
//! (`MSG_TYPE_TO_IDL`): notably `char` becomes IDL `uint8` (id 3, not `FIELD_TYPE_CHAR`) and
//! `byte` becomes `octet` (`FIELD_TYPE_BYTE`).

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::ast::{
    BaseType, Collection, FieldType, Interface, Literal, MessageSpec, Primitive, TypeName,
};
use crate::python;
use crate::registry::{InterfaceSet, UnknownFieldType};

/// The prefix of every RIHS version 01 hash string.
pub const RIHS01_PREFIX: &str = "RIHS01_";

/// A type description could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HashError {
    /// The requested type is neither a message, a service nor an action of the set.
    UnknownType(TypeName),
    /// A type the requested one depends on refers to a message the set does not have.
    UnknownReference(Box<UnknownFieldType>),
}

impl fmt::Display for HashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownType(name) => {
                write!(
                    f,
                    "cannot describe {name}: expected a loaded message, service or action"
                )
            }
            Self::UnknownReference(unknown) => {
                write!(f, "cannot build the type description: {unknown}")
            }
        }
    }
}

impl std::error::Error for HashError {}

/// The full type description of `name` as rosidl's generated code holds it: the type's own
/// description, those of every type it refers to (sorted by name), each field's default value
/// and each type's definition text. The RIHS01 hash is computed from this, without default
/// values and sources ([`type_description_json`]).
///
/// # Errors
///
/// [`HashError`] if `name` or a type it references is not in `set`.
pub fn type_description(set: &InterfaceSet, name: &TypeName) -> Result<TypeDescription, HashError> {
    let top = describe(set, name)?.ok_or_else(|| HashError::UnknownType(name.clone()))?;

    // Keyed by the name string: Python's `sorted()` on type names is what orders the list.
    let mut referenced: BTreeMap<String, IndividualTypeDescription> = BTreeMap::new();
    // Fields still to follow, with the type they belong to.
    let mut pending: Vec<(TypeName, FieldDescription)> = top
        .fields
        .iter()
        .map(|f| (name.clone(), f.clone()))
        .collect();
    while let Some((referrer, field)) = pending.pop() {
        let Some(nested) = field.nested_type_name else {
            continue;
        };
        let key = nested.to_string();
        if referenced.contains_key(&key) {
            continue;
        }
        let individual = describe(set, &nested)?.ok_or_else(|| {
            HashError::UnknownReference(Box::new(UnknownFieldType {
                file: set.file(&referrer).unwrap_or_default().to_owned(),
                message: referrer,
                field: field.name,
                line: field.line,
                missing: nested.clone(),
            }))
        })?;
        pending.extend(
            individual
                .fields
                .iter()
                .map(|f| (nested.clone(), f.clone())),
        );
        referenced.insert(key, individual);
    }
    Ok(TypeDescription {
        type_description: top,
        referenced_type_descriptions: referenced.into_values().collect(),
    })
}

/// The JSON text whose SHA-256 is the RIHS01 hash of `name`: the type's description and all
/// types it references, without default values.
///
/// # Errors
///
/// [`HashError`] if `name` or a type it references is not in `set`.
pub fn type_description_json(set: &InterfaceSet, name: &TypeName) -> Result<String, HashError> {
    let description = type_description(set, name)?;
    let mut json = String::from("{\"type_description\": ");
    description.type_description.write_json(&mut json);
    json.push_str(", \"referenced_type_descriptions\": [");
    for (i, individual) in description.referenced_type_descriptions.iter().enumerate() {
        if i > 0 {
            json.push_str(", ");
        }
        individual.write_json(&mut json);
    }
    json.push_str("]}");
    Ok(json)
}

/// The RIHS01 hash of `name`, as `RIHS01_<64 lowercase hex digits>`.
///
/// # Errors
///
/// As [`type_description_json`].
pub fn type_hash(set: &InterfaceSet, name: &TypeName) -> Result<String, HashError> {
    let json = type_description_json(set, name)?;
    let digest = Sha256::digest(json.as_bytes());
    let mut out = String::with_capacity(RIHS01_PREFIX.len() + 64);
    out.push_str(RIHS01_PREFIX);
    for byte in digest {
        let _ = write!(out, "{byte:02x}");
    }
    Ok(out)
}

/// The `type_description_interfaces/msg/FieldType` id of a field type.
pub fn field_type_id(ty: &FieldType) -> u8 {
    // FieldType.msg: 1-48 single values, +48 arrays, +96 bounded and +144 unbounded sequences.
    let base: u8 = match &ty.base {
        BaseType::Named(_) => 1,
        BaseType::Primitive(p) => match p {
            Primitive::Int8 => 2,
            // `char` is IDL `uint8` after rosidl_adapter (`MSG_TYPE_TO_IDL['char']`).
            Primitive::Uint8 | Primitive::Char => 3,
            Primitive::Int16 => 4,
            Primitive::Uint16 => 5,
            Primitive::Int32 => 6,
            Primitive::Uint32 => 7,
            Primitive::Int64 => 8,
            Primitive::Uint64 => 9,
            Primitive::Float32 => 10,
            Primitive::Float64 => 11,
            Primitive::Bool => 15,
            Primitive::Byte => 16,
        },
        BaseType::String { bound: None } => 17,
        BaseType::WString { bound: None } => 18,
        BaseType::String { bound: Some(_) } => 21,
        BaseType::WString { bound: Some(_) } => 22,
    };
    match ty.collection {
        Collection::Single => base,
        Collection::Array(_) => base + 48,
        Collection::BoundedSequence(_) => base + 96,
        Collection::UnboundedSequence => base + 144,
    }
}

/// A type's full description (`type_description_interfaces/msg/TypeDescription`) with the
/// definition of each type in it (`TypeSource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDescription {
    pub type_description: IndividualTypeDescription,
    /// Every type the described one refers to, directly or not, sorted by name.
    pub referenced_type_descriptions: Vec<IndividualTypeDescription>,
}

/// One type's own description (`type_description_interfaces/msg/IndividualTypeDescription`)
/// and where it was defined (`TypeSource`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndividualTypeDescription {
    pub type_name: TypeName,
    pub fields: Vec<FieldDescription>,
    /// `msg`, `srv`, `action` or `idl`: the language of the file defining the type; `implicit`
    /// for the types rosidl derives from a service or action (`_Request`, `_SendGoal`, ...).
    pub encoding: &'static str,
    /// The text of the defining file as read; empty for an implicit type.
    pub source: String,
    /// `TypeSource.raw_file_contents`: [`raw_file_contents`] of `source`.
    pub raw_file_contents: String,
}

/// One `type_description_interfaces/msg/Field`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDescription {
    pub name: String,
    /// A `type_description_interfaces/msg/FieldType` id ([`field_type_id`]).
    pub type_id: u8,
    pub capacity: usize,
    pub string_capacity: usize,
    /// The type of a message-typed field.
    pub nested_type_name: Option<TypeName>,
    /// The default value as rosidl's generated C code states it ([`default_value_text`]);
    /// empty for none.
    pub default_value: String,
    /// Where the field was declared (0 if synthesized), for errors only.
    line: usize,
}

impl FieldDescription {
    fn of(name: &str, line: usize, ty: &FieldType, default: Option<&Literal>) -> Self {
        let capacity = match ty.collection {
            Collection::Array(n) | Collection::BoundedSequence(n) => n,
            Collection::Single | Collection::UnboundedSequence => 0,
        };
        let (string_capacity, nested) = match &ty.base {
            BaseType::String { bound } | BaseType::WString { bound } => (bound.unwrap_or(0), None),
            BaseType::Named(t) => (0, Some(t.clone())),
            BaseType::Primitive(_) => (0, None),
        };
        Self {
            name: name.to_owned(),
            line,
            type_id: field_type_id(ty),
            capacity,
            string_capacity,
            nested_type_name: nested,
            default_value: default
                .map(|d| default_value_text(ty, d))
                .unwrap_or_default(),
        }
    }

    fn nested(name: &str, type_name: &TypeName) -> Self {
        Self::of(
            name,
            0,
            &FieldType {
                base: BaseType::Named(type_name.clone()),
                collection: Collection::Single,
            },
            None,
        )
    }
}

impl IndividualTypeDescription {
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"type_name\": ");
        write_json_string(out, &self.type_name.to_string());
        out.push_str(", \"fields\": [");
        for (i, field) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str("{\"name\": ");
            write_json_string(out, &field.name);
            let _ = write!(
                out,
                ", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": {}, \
                 \"nested_type_name\": ",
                field.type_id, field.capacity, field.string_capacity
            );
            let nested = field
                .nested_type_name
                .as_ref()
                .map(TypeName::to_string)
                .unwrap_or_default();
            write_json_string(out, &nested);
            out.push_str("}}");
        }
        out.push_str("]}");
    }
}

/// The individual description of any message, service or action in `set`; `None` if `name`
/// is none of them.
fn describe(
    set: &InterfaceSet,
    name: &TypeName,
) -> Result<Option<IndividualTypeDescription>, HashError> {
    let fields = if let Some(message) = set.message(name) {
        message_fields(message)
    } else if let Some(service) = set.service(name) {
        vec![
            FieldDescription::nested("request_message", &service.request.name),
            FieldDescription::nested("response_message", &service.response.name),
            FieldDescription::nested("event_message", &service.event.name),
        ]
    } else if let Some(Interface::Action(action)) = set.interface(name) {
        vec![
            FieldDescription::nested("goal", &action.goal.name),
            FieldDescription::nested("result", &action.result.name),
            FieldDescription::nested("feedback", &action.feedback.name),
            FieldDescription::nested("send_goal_service", &action.send_goal.name),
            FieldDescription::nested("get_result_service", &action.get_result.name),
            FieldDescription::nested("feedback_message", &action.feedback_message.name),
        ]
    } else {
        return Ok(None);
    };
    // rosidl describes the source of a type defined by a file of its own with that file (its
    // extension as the encoding), and the parts it derives from a service or action as
    // `implicit`, without text.
    let (encoding, source) = match (set.interface(name), set.format(name), set.source(name)) {
        (Some(_), Some(format), Some(text)) => (format.extension(name.kind), text.to_owned()),
        _ => ("implicit", String::new()),
    };
    Ok(Some(IndividualTypeDescription {
        type_name: name.clone(),
        fields,
        encoding,
        raw_file_contents: raw_file_contents(&source),
        source,
    }))
}

fn message_fields(message: &MessageSpec) -> Vec<FieldDescription> {
    if message.fields.is_empty() {
        let placeholder = FieldType {
            base: BaseType::Primitive(Primitive::Uint8),
            collection: Collection::Single,
        };
        return vec![FieldDescription::of(
            "structure_needs_at_least_one_member",
            0,
            &placeholder,
            None,
        )];
    }
    message
        .fields
        .iter()
        .map(|f| FieldDescription::of(&f.name, f.line, &f.ty, f.default.as_ref()))
        .collect()
}

/// A field's default value as the `default_value` of rosidl's generated type description
/// states it.
///
/// rosidl_adapter writes a `.msg` default into IDL (an array's as the Python `repr` of a tuple
/// of its values), rosidl_generator_type_description takes Python's `str()` of the value it
/// parses back, and rosidl_generator_c embeds that text as `repr(text.encode())` without its
/// quotes, cut to as many bytes as the text has characters. The last step changes only texts
/// with backslashes, quotes of both kinds, control or non-ASCII characters (`"Hellö"` becomes
/// `Hell\xc3`), and it is what `~/get_type_description` answers with.
pub fn default_value_text(ty: &FieldType, value: &Literal) -> String {
    let text = python_str(&ty.base, value);
    let embedded = python_bytes_repr_body(text.as_bytes());
    cut_as_rosidl_c(embedded, &text)
}

/// The text of a definition file as rosidl's generated C code holds it, which is what
/// `TypeSource.raw_file_contents` carries: each line (Python's `str.splitlines`, so without
/// line breaks of any kind) as `repr(line.encode())` without its quotes, the lines joined by
/// `\n`, cut to as many bytes as the file has characters. For a file of printable ASCII
/// without backslashes or lines holding both kinds of quotes, that is the text without its
/// last line break.
pub fn raw_file_contents(text: &str) -> String {
    let mut embedded = String::with_capacity(text.len());
    for (i, line) in python_splitlines(text).into_iter().enumerate() {
        if i > 0 {
            embedded.push('\n');
        }
        embedded.push_str(&python_bytes_repr_body(line.as_bytes()));
    }
    cut_as_rosidl_c(embedded, text)
}

/// rosidl_generator_c gives an embedded text the size of the Python text it came from, in
/// characters: `embedded` (ASCII, so bytes and characters are the same) is cut to as many.
fn cut_as_rosidl_c(mut embedded: String, text: &str) -> String {
    embedded.truncate(text.chars().count());
    embedded
}

/// Python's `str.splitlines()`: the lines without their breaks (`\n`, `\r\n`, `\r` and the
/// other boundaries Python knows), no empty line after a final break.
fn python_splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end_of_break = match c {
            '\r' => match chars.next_if(|&(_, next)| next == '\n') {
                Some((lf, _)) => lf + 1,
                None => at + 1,
            },
            '\n' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => at + c.len_utf8(),
            _ => continue,
        };
        lines.push(&text[start..at]);
        start = end_of_break;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Python's `str()` of the value rosidl_parser reads from the IDL default of a field whose
/// element type is `base`.
fn python_str(base: &BaseType, value: &Literal) -> String {
    match value {
        Literal::Array(elements) => {
            let mut out = String::from("(");
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match element {
                    Literal::String(s) => out.push_str(&python::str_repr(s)),
                    other => out.push_str(&python_str(base, other)),
                }
            }
            if elements.len() == 1 {
                out.push(',');
            }
            out.push(')');
            out
        }
        Literal::Bool(true) => "True".to_owned(),
        Literal::Bool(false) => "False".to_owned(),
        Literal::Int(v) => match base {
            // rosidl_adapter reads a float field's value with `float()`, whatever its form.
            BaseType::Primitive(Primitive::Float32 | Primitive::Float64) => {
                python::float_repr(*v as f64)
            }
            _ => v.to_string(),
        },
        Literal::Float(v) => python::float_repr(*v),
        Literal::String(s) => s.clone(),
    }
}

/// The inside of Python's `repr()` of a `bytes` value, without `b` and the quotes.
fn python_bytes_repr_body(bytes: &[u8]) -> String {
    let repr = python::bytes_repr(bytes);
    repr[2..repr.len() - 1].to_owned()
}

/// A JSON string as Python's `json.dumps(.., ensure_ascii=True)` writes it.
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::InterfaceKind;

    fn set() -> InterfaceSet {
        let mut set = InterfaceSet::new();
        let files = [
            (
                "builtin_interfaces",
                InterfaceKind::Msg,
                "Time",
                "int32 sec\nuint32 nanosec\n",
            ),
            (
                "std_msgs",
                InterfaceKind::Msg,
                "Header",
                "builtin_interfaces/Time stamp\nstring frame_id\n",
            ),
            ("std_msgs", InterfaceKind::Msg, "Empty", ""),
            ("std_msgs", InterfaceKind::Msg, "String", "string data\n"),
            (
                "p",
                InterfaceKind::Msg,
                "All",
                "char c\nbyte b\nstring<=5[<=3] s\nwstring<=2 w\nHeader[2] h\n",
            ),
        ];
        for (package, kind, name, text) in files {
            set.add_source(package, kind, name, text, name).unwrap();
        }
        set
    }

    fn tn(s: &str) -> TypeName {
        TypeName::parse(s).unwrap()
    }

    #[test]
    fn json_matches_python_json_dumps_layout() {
        let json = type_description_json(&set(), &tn("std_msgs/msg/Header")).unwrap();
        assert_eq!(
            json,
            "{\"type_description\": {\"type_name\": \"std_msgs/msg/Header\", \"fields\": [\
             {\"name\": \"stamp\", \"type\": {\"type_id\": 1, \"capacity\": 0, \
             \"string_capacity\": 0, \"nested_type_name\": \"builtin_interfaces/msg/Time\"}}, \
             {\"name\": \"frame_id\", \"type\": {\"type_id\": 17, \"capacity\": 0, \
             \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}, \
             \"referenced_type_descriptions\": [{\"type_name\": \"builtin_interfaces/msg/Time\", \
             \"fields\": [{\"name\": \"sec\", \"type\": {\"type_id\": 6, \"capacity\": 0, \
             \"string_capacity\": 0, \"nested_type_name\": \"\"}}, {\"name\": \"nanosec\", \
             \"type\": {\"type_id\": 7, \"capacity\": 0, \"string_capacity\": 0, \
             \"nested_type_name\": \"\"}}]}]}"
        );
    }

    #[test]
    fn known_hashes() {
        // Values shipped in the Kilted wheels' share/*/msg/*.json.
        let set = set();
        let cases = [
            (
                "std_msgs/msg/Header",
                "f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01",
            ),
            (
                "std_msgs/msg/String",
                "df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
            ),
            (
                "std_msgs/msg/Empty",
                "20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312",
            ),
        ];
        for (name, hex) in cases {
            assert_eq!(
                type_hash(&set, &tn(name)).unwrap(),
                format!("RIHS01_{hex}"),
                "{name}"
            );
        }
    }

    #[test]
    fn field_types_follow_field_type_msg() {
        let json = type_description_json(&set(), &tn("p/msg/All")).unwrap();
        for expected in [
            "{\"name\": \"c\", \"type\": {\"type_id\": 3, \"capacity\": 0, \"string_capacity\": 0",
            "{\"name\": \"b\", \"type\": {\"type_id\": 16, \"capacity\": 0, \"string_capacity\": 0",
            "{\"name\": \"s\", \"type\": {\"type_id\": 117, \"capacity\": 3, \"string_capacity\": 5",
            "{\"name\": \"w\", \"type\": {\"type_id\": 22, \"capacity\": 0, \"string_capacity\": 2",
            "{\"name\": \"h\", \"type\": {\"type_id\": 49, \"capacity\": 2, \"string_capacity\": 0, \
             \"nested_type_name\": \"std_msgs/msg/Header\"}}",
        ] {
            assert!(json.contains(expected), "{expected} not in {json}");
        }
        // Transitive references, sorted by name.
        let refs = json
            .split("\"referenced_type_descriptions\": ")
            .nth(1)
            .unwrap();
        let time = refs.find("builtin_interfaces/msg/Time").unwrap();
        let header = refs.find("\"type_name\": \"std_msgs/msg/Header\"").unwrap();
        assert!(time < header);
    }

    #[test]
    fn unknown_types_are_errors() {
        let set = set();
        assert_eq!(
            type_hash(&set, &tn("p/msg/Nope")),
            Err(HashError::UnknownType(tn("p/msg/Nope")))
        );
        let mut broken = set.clone();
        broken
            .add_source(
                "p",
                InterfaceKind::Msg,
                "Broken",
                "q/Gone g\n",
                "Broken.msg",
            )
            .unwrap();
        let err = type_hash(&broken, &tn("p/msg/Broken")).unwrap_err();
        assert_eq!(
            err,
            HashError::UnknownReference(Box::new(UnknownFieldType {
                message: tn("p/msg/Broken"),
                field: "g".into(),
                file: "Broken.msg".into(),
                line: 1,
                missing: tn("q/msg/Gone"),
            }))
        );
        assert_eq!(
            err.to_string(),
            "cannot build the type description: Broken.msg:1: field 'g' of p/msg/Broken has type \
             q/msg/Gone, which no loaded package defines (expected a file q/msg/Gone.msg or .idl)"
        );
    }

    /// `default_value` of test_msgs' Strings, WStrings and Arrays as an rclpy node (Kilted)
    /// answers them on `~/get_type_description`.
    #[test]
    fn default_values_are_stated_as_rosidl_c_states_them() {
        let mut set = set();
        let strings = "string a \"Hello'world!\"\nstring b 'Hello\"world!'\n\
                       string c 'Hello\\'world!'\nwstring d \"Hellö wörld!\"\n\
                       wstring e \"ハローワールド\"\nstring f \"tab\\there\"\n";
        let arrays = "bool[3] a [false, true, false]\nfloat32[3] b [1.125, 0.0, -1.125]\n\
                      int64[3] c [0, 9223372036854775807, -9223372036854775808]\n\
                      string[3] d [\"\", \"max value\", \"min value\"]\nint8[] e [5]\n\
                      float64 f 1\nbool g true\nfloat64 h 1e16\nfloat64 i 0.00001\n\
                      float64 j 123.5\nchar k 100\n";
        set.add_source("p", InterfaceKind::Msg, "Strings", strings, "Strings.msg")
            .unwrap();
        set.add_source("p", InterfaceKind::Msg, "Arrays", arrays, "Arrays.msg")
            .unwrap();
        let defaults = |name: &str| -> Vec<String> {
            type_description(&set, &tn(name))
                .unwrap()
                .type_description
                .fields
                .into_iter()
                .map(|f| f.default_value)
                .collect()
        };
        assert_eq!(
            defaults("p/msg/Strings"),
            [
                "Hello'world!",
                "Hello\"world!",
                "Hello'world!",
                // rosidl escapes the UTF-8 bytes and keeps as many as the text had characters.
                "Hell\\xc3\\xb6",
                "\\xe3\\x8",
                "tab\\ther",
            ]
        );
        assert_eq!(
            defaults("p/msg/Arrays"),
            [
                "(False, True, False)",
                "(1.125, 0.0, -1.125)",
                "(0, 9223372036854775807, -9223372036854775808)",
                "('', 'max value', 'min value')",
                "(5,)",
                "1.0",
                "True",
                "1e+16",
                "1e-05",
                "123.5",
                "100",
            ]
        );
    }

    /// `raw_file_contents` as rosidl_generator_c embeds a definition file (checked against an
    /// rclpy node for test_msgs' Strings and WStrings).
    #[test]
    fn raw_file_contents_are_embedded_as_rosidl_c_embeds_them() {
        assert_eq!(raw_file_contents("int32 data\n"), "int32 data");
        assert_eq!(raw_file_contents("int32 data"), "int32 data");
        assert_eq!(raw_file_contents("# c\n\nint32 a\n\n"), "# c\n\nint32 a\n");
        assert_eq!(raw_file_contents("a\r\nb\rc\u{2028}d\n"), "a\nb\nc\nd");
        assert_eq!(raw_file_contents(""), "");
        assert_eq!(raw_file_contents("\n"), "");
        // Each line as `repr(line.encode())` without its quotes (Python picks the quotes per
        // line), cut to the file's length in characters.
        assert_eq!(
            raw_file_contents("string s \"a\\\"b\"\nstring t 'x'\n"),
            "string s \"a\\\\\"b\"\nstring t 'x'"
        );
        assert_eq!(raw_file_contents("wstring w \"ö\"\n"), "wstring w \"\\xc");
    }

    #[test]
    fn sources_name_the_file_or_say_implicit() {
        let mut set = set();
        set.add_source(
            "p",
            InterfaceKind::Srv,
            "Ask",
            "string q\n---\nstring a\n",
            "Ask.srv",
        )
        .unwrap();
        set.add_source(
            "service_msgs",
            InterfaceKind::Msg,
            "ServiceEventInfo",
            "uint8 event_type\nbuiltin_interfaces/Time stamp\nchar[16] client_gid\n\
             int64 sequence_number\n",
            "ServiceEventInfo.msg",
        )
        .unwrap();
        let service = type_description(&set, &tn("p/srv/Ask")).unwrap();
        assert_eq!(service.type_description.encoding, "srv");
        assert_eq!(
            service.type_description.raw_file_contents,
            "string q\n---\nstring a"
        );
        let sources: Vec<(String, &str)> = service
            .referenced_type_descriptions
            .iter()
            .map(|d| (d.type_name.to_string(), d.encoding))
            .collect();
        assert_eq!(
            sources,
            [
                ("builtin_interfaces/msg/Time".to_owned(), "msg"),
                ("p/srv/Ask_Event".to_owned(), "implicit"),
                ("p/srv/Ask_Request".to_owned(), "implicit"),
                ("p/srv/Ask_Response".to_owned(), "implicit"),
                ("service_msgs/msg/ServiceEventInfo".to_owned(), "msg"),
            ]
        );
        assert!(service.referenced_type_descriptions[2]
            .raw_file_contents
            .is_empty());
    }

    #[test]
    fn json_strings_are_ascii_escaped_like_python() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\n\u{1}é😀");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001\\u00e9\\ud83d\\ude00\"");
    }
}
