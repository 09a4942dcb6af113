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

use crate::ast::{BaseType, Collection, FieldType, Interface, MessageSpec, Primitive, TypeName};
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

/// The JSON text whose SHA-256 is the RIHS01 hash of `name`: the type's description and all
/// types it references, without default values.
///
/// # Errors
///
/// [`HashError`] if `name` or a type it references is not in `set`.
pub fn type_description_json(set: &InterfaceSet, name: &TypeName) -> Result<String, HashError> {
    let top = describe(set, name)?.ok_or_else(|| HashError::UnknownType(name.clone()))?;

    // Keyed by the name string: Python's `sorted()` on type names is what orders the list.
    let mut referenced: BTreeMap<String, Individual> = BTreeMap::new();
    // Fields still to follow, with the type they belong to.
    let mut pending: Vec<(TypeName, FieldDescription)> = top
        .fields
        .iter()
        .map(|f| (name.clone(), f.clone()))
        .collect();
    while let Some((referrer, field)) = pending.pop() {
        let Some(nested) = field.nested else { continue };
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

    let mut json = String::from("{\"type_description\": ");
    top.write_json(&mut json);
    json.push_str(", \"referenced_type_descriptions\": [");
    for (i, individual) in referenced.values().enumerate() {
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

/// One `IndividualTypeDescription`.
struct Individual {
    type_name: String,
    fields: Vec<FieldDescription>,
}

/// One `Field` without its `default_value`.
#[derive(Clone)]
struct FieldDescription {
    name: String,
    /// Where the field was declared (0 if synthesized), for errors only.
    line: usize,
    type_id: u8,
    capacity: usize,
    string_capacity: usize,
    nested: Option<TypeName>,
}

impl FieldDescription {
    fn of(name: &str, line: usize, ty: &FieldType) -> Self {
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
            nested,
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
        )
    }
}

impl Individual {
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"type_name\": ");
        write_json_string(out, &self.type_name);
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
                .nested
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
fn describe(set: &InterfaceSet, name: &TypeName) -> Result<Option<Individual>, HashError> {
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
    Ok(Some(Individual {
        type_name: name.to_string(),
        fields,
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
        )];
    }
    message
        .fields
        .iter()
        .map(|f| FieldDescription::of(&f.name, f.line, &f.ty))
        .collect()
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

    #[test]
    fn json_strings_are_ascii_escaped_like_python() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\n\u{1}é😀");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001\\u00e9\\ud83d\\ude00\"");
    }
}
