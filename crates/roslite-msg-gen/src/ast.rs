//! The interface model every other module works on: what a `.msg`, `.srv` or `.action` file
//! says once parsed and resolved.
//!
//! Names follow `ros2/design: articles/116_legacy_interface_definition.md` and the
//! `type_description_interfaces` vocabulary (`FieldType`, `capacity`, `string_capacity`).

use std::fmt;

/// Which of the three interface file kinds a definition came from; also the middle segment of a
/// full type name (`std_msgs/msg/String`, `std_srvs/srv/SetBool_Request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InterfaceKind {
    Action,
    Msg,
    Srv,
}

impl InterfaceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Action => "action",
            Self::Msg => "msg",
            Self::Srv => "srv",
        }
    }

    /// The file extension, e.g. `msg`.
    pub fn extension(self) -> &'static str {
        self.as_str()
    }

    pub fn from_extension(ext: &str) -> Option<Self> {
        match ext {
            "action" => Some(Self::Action),
            "msg" => Some(Self::Msg),
            "srv" => Some(Self::Srv),
            _ => None,
        }
    }
}

/// A fully qualified interface type name: `package/kind/Name`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeName {
    pub package: String,
    pub kind: InterfaceKind,
    pub name: String,
}

impl TypeName {
    pub fn new(package: &str, kind: InterfaceKind, name: &str) -> Self {
        Self {
            package: package.to_owned(),
            kind,
            name: name.to_owned(),
        }
    }

    /// Parses `pkg/msg/Name`, `pkg/srv/Name_Request`, or the short form `pkg/Name` (taken as a
    /// message, as `.msg` field types are written).
    pub fn parse(text: &str) -> Option<Self> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            [pkg, kind, name] => Some(Self::new(pkg, InterfaceKind::from_extension(kind)?, name)),
            [pkg, name] => Some(Self::new(pkg, InterfaceKind::Msg, name)),
            _ => None,
        }
        .filter(|t| !t.package.is_empty() && !t.name.is_empty())
    }

    /// The DDS type name ROS 2 RMWs use on the wire: `std_msgs::msg::dds_::String_`.
    pub fn dds_name(&self) -> String {
        format!(
            "{}::{}::dds_::{}_",
            self.package,
            self.kind.as_str(),
            self.name
        )
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.package, self.kind.as_str(), self.name)
    }
}

/// The non-string primitive types of the ROS 2 interface language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    Bool,
    Byte,
    Char,
    Float32,
    Float64,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
}

impl Primitive {
    /// The keyword used in `.msg` files.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Byte => "byte",
            Self::Char => "char",
            Self::Float32 => "float32",
            Self::Float64 => "float64",
            Self::Int8 => "int8",
            Self::Uint8 => "uint8",
            Self::Int16 => "int16",
            Self::Uint16 => "uint16",
            Self::Int32 => "int32",
            Self::Uint32 => "uint32",
            Self::Int64 => "int64",
            Self::Uint64 => "uint64",
        }
    }

    pub fn from_keyword(word: &str) -> Option<Self> {
        Some(match word {
            "bool" => Self::Bool,
            "byte" => Self::Byte,
            "char" => Self::Char,
            "float32" => Self::Float32,
            "float64" => Self::Float64,
            "int8" => Self::Int8,
            "uint8" => Self::Uint8,
            "int16" => Self::Int16,
            "uint16" => Self::Uint16,
            "int32" => Self::Int32,
            "uint32" => Self::Uint32,
            "int64" => Self::Int64,
            "uint64" => Self::Uint64,
            _ => return None,
        })
    }

    /// Size in bytes, which is also the CDR alignment.
    pub fn size(self) -> usize {
        match self {
            Self::Bool | Self::Byte | Self::Char | Self::Int8 | Self::Uint8 => 1,
            Self::Int16 | Self::Uint16 => 2,
            Self::Float32 | Self::Int32 | Self::Uint32 => 4,
            Self::Float64 | Self::Int64 | Self::Uint64 => 8,
        }
    }
}

/// The element type of a field, before any array/sequence wrapping.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BaseType {
    Primitive(Primitive),
    /// `string` or `string<=N` (bound in bytes, excluding the NUL).
    String {
        bound: Option<usize>,
    },
    /// `wstring` or `wstring<=N`.
    WString {
        bound: Option<usize>,
    },
    /// Another message type, already resolved to its full name (`Header` becomes
    /// `std_msgs/msg/Header`, a same-package `Foo` becomes `pkg/msg/Foo`).
    Named(TypeName),
}

/// How many elements a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collection {
    /// A single value.
    Single,
    /// `T[N]`: exactly N elements, no length on the wire.
    Array(usize),
    /// `T[<=N]`: at most N elements, length on the wire.
    BoundedSequence(usize),
    /// `T[]`: any number of elements, length on the wire.
    UnboundedSequence,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldType {
    pub base: BaseType,
    pub collection: Collection,
}

impl fmt::Display for FieldType {
    /// The type as a `.msg` file writes it: `int32[<=3]`, `string<=8`, `std_msgs/Header[]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.base {
            BaseType::Primitive(p) => f.write_str(p.keyword())?,
            BaseType::String { bound: None } => f.write_str("string")?,
            BaseType::String { bound: Some(n) } => write!(f, "string<={n}")?,
            BaseType::WString { bound: None } => f.write_str("wstring")?,
            BaseType::WString { bound: Some(n) } => write!(f, "wstring<={n}")?,
            BaseType::Named(t) if t.kind == InterfaceKind::Msg => {
                write!(f, "{}/{}", t.package, t.name)?;
            }
            BaseType::Named(t) => write!(f, "{t}")?,
        }
        match self.collection {
            Collection::Single => Ok(()),
            Collection::Array(n) => write!(f, "[{n}]"),
            Collection::BoundedSequence(n) => write!(f, "[<={n}]"),
            Collection::UnboundedSequence => f.write_str("[]"),
        }
    }
}

/// A literal value: a constant's value or a field default. Arrays hold element literals.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    /// Any integer literal (decimal, 0x, 0o, 0b), range-checked against its type at parse time.
    Int(i128),
    Float(f64),
    String(String),
    Array(Vec<Literal>),
}

/// `<type> <name> [<default>]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: FieldType,
    pub default: Option<Literal>,
    /// 1-based line in the source file, for error messages.
    pub line: usize,
    /// Part of the message's key (IDL `@key`; `.msg` files have no keys). A message with key
    /// fields is a keyed type: DDS tells its instances apart by the values of these fields
    /// (OMG DDS 1.4 §2.2.1.2.2).
    pub key: bool,
}

/// `<TYPE> <NAME>=<value>`; only primitive and string types.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    pub name: String,
    pub ty: BaseType,
    pub value: Literal,
    pub line: usize,
}

/// One message structure: a `.msg` file, or one part of a `.srv`/`.action` file.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageSpec {
    pub name: TypeName,
    pub fields: Vec<Field>,
    pub constants: Vec<Constant>,
}

impl MessageSpec {
    /// Whether any field is a key field (IDL `@key`): DDS then keeps one instance per key value.
    pub fn is_keyed(&self) -> bool {
        self.fields.iter().any(|f| f.key)
    }
}

/// A `.srv` file: request `---` response. `event` is the `_Event` type rosidl synthesizes for
/// service introspection (Iron+), which the service's own type hash covers.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceSpec {
    pub name: TypeName,
    pub request: MessageSpec,
    pub response: MessageSpec,
    pub event: MessageSpec,
}

/// A `.action` file: goal `---` result `---` feedback, plus the types rosidl synthesizes for the
/// action's services and feedback topic (`_SendGoal`, `_GetResult`, `_FeedbackMessage`).
#[derive(Clone, Debug, PartialEq)]
pub struct ActionSpec {
    pub name: TypeName,
    pub goal: MessageSpec,
    pub result: MessageSpec,
    pub feedback: MessageSpec,
    pub send_goal: ServiceSpec,
    pub get_result: ServiceSpec,
    pub feedback_message: MessageSpec,
}

/// Anything one interface file defines.
// An `Interface` is built once per file and then lives in a map, so the unboxed action variant
// costs memory only, never copies on a hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Interface {
    Message(MessageSpec),
    Service(ServiceSpec),
    Action(ActionSpec),
}

impl Interface {
    pub fn name(&self) -> &TypeName {
        match self {
            Self::Message(m) => &m.name,
            Self::Service(s) => &s.name,
            Self::Action(a) => &a.name,
        }
    }
}
