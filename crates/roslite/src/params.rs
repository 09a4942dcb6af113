//! Parameters: typed, described node settings that tools can list, read and change, as
//! rclcpp's `NodeParameters` and `ParameterService` provide them.
//!
//! Layers, bottom up:
//! - `yaml` reads the YAML of parameter files and `-p name:=value` overrides;
//! - `overrides` turns `--params-file` and `-p` into the values one node starts with;
//! - `store` is the parameter table with its rules (types, read-only, ranges, on-set
//!   callbacks): no I/O, each change returns what to announce on `/parameter_events`;
//! - `services` answers the six `rcl_interfaces` services from the store;
//! - this file: the value and descriptor types and a node's `NodeParameters`.
//!
//! Nothing here knows a node: the node's parameter methods, and the start of its event
//! publisher and services, are in the node module (`node/parameters.rs`), above this one.
//!
//! Ownership: a node holds `NodeParameters`; its services and the node's methods share the
//! `ParameterCore` (store plus event publisher). The services hold the core, never the node,
//! so dropping the last `Node` handle drops the services too.

mod overrides;
pub(crate) mod services;
mod store;
#[cfg(test)]
mod tests;
mod yaml;

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use crate::endpoints::pubsub::Publisher;
use crate::vocabulary::time::RosClockSource;
use roslite_msgs::rcl_interfaces::msg as rcl;

pub use crate::vocabulary::config::ParameterServices;
pub(crate) use overrides::Overrides;
pub use overrides::{
    parameters_in_file, OverrideError, OverrideProblem, ValueError, MAX_PARAMS_FILE_BYTES,
    MAX_PARAMS_FILE_BYTES_VAR,
};
pub use store::OnSetParametersCallbackHandle;
pub use yaml::YamlError;

use store::{Change, ParameterStore};

/// The type of a parameter value: `rcl_interfaces/msg/ParameterType`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ParameterType {
    #[default]
    NotSet = 0x00,
    Bool = 0x01,
    Integer = 0x02,
    Double = 0x03,
    String = 0x04,
    ByteArray = 0x05,
    BoolArray = 0x06,
    IntegerArray = 0x07,
    DoubleArray = 0x08,
    StringArray = 0x09,
}

impl ParameterType {
    /// The type with this `rcl_interfaces/msg/ParameterType` code.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::NotSet,
            1 => Self::Bool,
            2 => Self::Integer,
            3 => Self::Double,
            4 => Self::String,
            5 => Self::ByteArray,
            6 => Self::BoolArray,
            7 => Self::IntegerArray,
            8 => Self::DoubleArray,
            9 => Self::StringArray,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        self as u8
    }

    /// rclcpp's name for the type (`rclcpp::to_string(ParameterType)`), used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::NotSet => "not set",
            Self::Bool => "bool",
            Self::Integer => "integer",
            Self::Double => "double",
            Self::String => "string",
            Self::ByteArray => "byte_array",
            Self::BoolArray => "bool_array",
            Self::IntegerArray => "integer_array",
            Self::DoubleArray => "double_array",
            Self::StringArray => "string_array",
        }
    }
}

impl fmt::Display for ParameterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parameter value: `rcl_interfaces/msg/ParameterValue` as a Rust enum.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ParameterValue {
    #[default]
    NotSet,
    Bool(bool),
    Integer(i64),
    Double(f64),
    String(String),
    ByteArray(Vec<u8>),
    BoolArray(Vec<bool>),
    IntegerArray(Vec<i64>),
    DoubleArray(Vec<f64>),
    StringArray(Vec<String>),
}

impl ParameterValue {
    pub fn parameter_type(&self) -> ParameterType {
        match self {
            Self::NotSet => ParameterType::NotSet,
            Self::Bool(_) => ParameterType::Bool,
            Self::Integer(_) => ParameterType::Integer,
            Self::Double(_) => ParameterType::Double,
            Self::String(_) => ParameterType::String,
            Self::ByteArray(_) => ParameterType::ByteArray,
            Self::BoolArray(_) => ParameterType::BoolArray,
            Self::IntegerArray(_) => ParameterType::IntegerArray,
            Self::DoubleArray(_) => ParameterType::DoubleArray,
            Self::StringArray(_) => ParameterType::StringArray,
        }
    }

    /// A value written in YAML as on `--ros-args -p name:=<text>` or in a parameter file:
    /// quoted text is a string; `true`/`false` (also `yes`/`no`, `on`/`off`) a bool; `5`,
    /// `-3`, `0x1f` an integer; `2.5`, `1e-3`, `.inf` a double; `[1, 2]` an array whose
    /// elements share one type; anything else a string.
    ///
    /// # Errors
    /// [`ValueError`] for text that is no parameter value (a mapping, a mixed or nested
    /// sequence, nothing at all) or no YAML.
    pub fn from_yaml(text: &str) -> Result<Self, ValueError> {
        overrides::value_from_yaml_text(text)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Integer(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Double(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::ByteArray(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_bool_array(&self) -> Option<&[bool]> {
        match self {
            Self::BoolArray(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_i64_array(&self) -> Option<&[i64]> {
        match self {
            Self::IntegerArray(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_f64_array(&self) -> Option<&[f64]> {
        match self {
            Self::DoubleArray(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_string_array(&self) -> Option<&[String]> {
        match self {
            Self::StringArray(v) => Some(v),
            _ => None,
        }
    }

    /// As the `rcl_interfaces` message (the other fields left at their defaults).
    pub fn to_msg(&self) -> rcl::ParameterValue {
        let mut msg = rcl::ParameterValue {
            r#type: self.parameter_type().code(),
            ..Default::default()
        };
        match self {
            Self::NotSet => {}
            Self::Bool(v) => msg.bool_value = *v,
            Self::Integer(v) => msg.integer_value = *v,
            Self::Double(v) => msg.double_value = *v,
            Self::String(v) => msg.string_value.clone_from(v),
            Self::ByteArray(v) => msg.byte_array_value = v.clone().into(),
            Self::BoolArray(v) => msg.bool_array_value.clone_from(v),
            Self::IntegerArray(v) => msg.integer_array_value = v.clone().into(),
            Self::DoubleArray(v) => msg.double_array_value = v.clone().into(),
            Self::StringArray(v) => msg.string_array_value.clone_from(v),
        }
        msg
    }

    /// From the `rcl_interfaces` message; `None` for a type code no ROS 2 version defines.
    pub fn from_msg(msg: &rcl::ParameterValue) -> Option<Self> {
        Some(match ParameterType::from_code(msg.r#type)? {
            ParameterType::NotSet => Self::NotSet,
            ParameterType::Bool => Self::Bool(msg.bool_value),
            ParameterType::Integer => Self::Integer(msg.integer_value),
            ParameterType::Double => Self::Double(msg.double_value),
            ParameterType::String => Self::String(msg.string_value.clone()),
            ParameterType::ByteArray => Self::ByteArray(msg.byte_array_value.to_vec()),
            ParameterType::BoolArray => Self::BoolArray(msg.bool_array_value.clone()),
            ParameterType::IntegerArray => Self::IntegerArray(msg.integer_array_value.to_vec()),
            ParameterType::DoubleArray => Self::DoubleArray(msg.double_array_value.to_vec()),
            ParameterType::StringArray => Self::StringArray(msg.string_array_value.clone()),
        })
    }
}

/// YAML flow style: `true`, `5`, `2.5`, `hello`, `[1, 2]`, `['a', 'b']`; strings that YAML
/// would read as something else are quoted.
impl fmt::Display for ParameterValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list<T>(
            f: &mut fmt::Formatter<'_>,
            items: &[T],
            item: impl Fn(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
        ) -> fmt::Result {
            f.write_str("[")?;
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                item(f, v)?;
            }
            f.write_str("]")
        }
        match self {
            Self::NotSet => f.write_str("not set"),
            Self::Bool(v) => write!(f, "{v}"),
            Self::Integer(v) => write!(f, "{v}"),
            Self::Double(v) => f.write_str(&format_double(*v)),
            Self::String(v) => f.write_str(&yaml_string(v)),
            Self::ByteArray(v) => list(f, v, |f, b| write!(f, "{b}")),
            Self::BoolArray(v) => list(f, v, |f, b| write!(f, "{b}")),
            Self::IntegerArray(v) => list(f, v, |f, i| write!(f, "{i}")),
            Self::DoubleArray(v) => list(f, v, |f, d| f.write_str(&format_double(*d))),
            Self::StringArray(v) => list(f, v, |f, s| write!(f, "'{}'", s.replace('\'', "''"))),
        }
    }
}

/// A double as YAML and Python write it: always with a `.` or exponent (`1.0`, not `1`).
pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        ".nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { ".inf" } else { "-.inf" }.into()
    } else {
        let text = format!("{v:?}");
        if text.contains(['.', 'e']) {
            text
        } else {
            format!("{text}.0")
        }
    }
}

/// A string as a YAML scalar: plain when it reads back as the same string; double-quoted with
/// escapes when it holds a line break, tab or other control character (a single-quoted scalar
/// folds a line break into a space, YAML 1.2.2 §7.3.2); else single-quoted.
pub fn yaml_string(text: &str) -> String {
    if text.chars().any(char::is_control) {
        let mut out = String::with_capacity(text.len() + 2);
        out.push('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('"');
        return out;
    }
    let plain_safe = !text.is_empty()
        && !text.starts_with([
            ' ', '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"',
            '%', '@', '`', '~',
        ])
        && !text.ends_with(' ')
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.contains(['\n', '\t', '\r'])
        && matches!(
            ParameterValue::from_yaml(text),
            Ok(ParameterValue::String(ref s)) if s == text
        );
    if plain_safe {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

impl From<bool> for ParameterValue {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

impl From<i64> for ParameterValue {
    fn from(v: i64) -> Self {
        Self::Integer(v)
    }
}

impl From<i32> for ParameterValue {
    fn from(v: i32) -> Self {
        Self::Integer(v.into())
    }
}

impl From<f64> for ParameterValue {
    fn from(v: f64) -> Self {
        Self::Double(v)
    }
}

impl From<&str> for ParameterValue {
    fn from(v: &str) -> Self {
        Self::String(v.to_owned())
    }
}

impl From<String> for ParameterValue {
    fn from(v: String) -> Self {
        Self::String(v)
    }
}

impl From<Vec<u8>> for ParameterValue {
    fn from(v: Vec<u8>) -> Self {
        Self::ByteArray(v)
    }
}

impl From<Vec<bool>> for ParameterValue {
    fn from(v: Vec<bool>) -> Self {
        Self::BoolArray(v)
    }
}

impl From<Vec<i64>> for ParameterValue {
    fn from(v: Vec<i64>) -> Self {
        Self::IntegerArray(v)
    }
}

impl From<Vec<f64>> for ParameterValue {
    fn from(v: Vec<f64>) -> Self {
        Self::DoubleArray(v)
    }
}

impl From<Vec<String>> for ParameterValue {
    fn from(v: Vec<String>) -> Self {
        Self::StringArray(v)
    }
}

impl From<Vec<&str>> for ParameterValue {
    fn from(v: Vec<&str>) -> Self {
        Self::StringArray(v.into_iter().map(str::to_owned).collect())
    }
}

/// A named value: `rcl_interfaces/msg/Parameter`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub value: ParameterValue,
}

impl Parameter {
    pub fn new(name: impl Into<String>, value: impl Into<ParameterValue>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }

    pub fn to_msg(&self) -> rcl::Parameter {
        rcl::Parameter {
            name: self.name.clone(),
            value: self.value.to_msg(),
        }
    }
}

/// The values a parameter may take besides its type: `integer_range` or
/// `floating_point_range` of `rcl_interfaces/msg/ParameterDescriptor`. Bounds are inclusive; a
/// step of zero allows any value in between, otherwise values are `from + k * step` (and `to`).
/// Arrays are checked element by element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParameterRange {
    FloatingPoint { from: f64, to: f64, step: f64 },
    Integer { from: i64, to: i64, step: u64 },
}

impl ParameterRange {
    /// Whether `value` lies in the range; other types than the range's are not checked here.
    pub fn contains(&self, value: &ParameterValue) -> bool {
        match (self, value) {
            (Self::Integer { .. }, ParameterValue::Integer(v)) => self.contains_integer(*v),
            (Self::Integer { .. }, ParameterValue::IntegerArray(vs)) => {
                vs.iter().all(|v| self.contains_integer(*v))
            }
            (Self::FloatingPoint { .. }, ParameterValue::Double(v)) => self.contains_double(*v),
            (Self::FloatingPoint { .. }, ParameterValue::DoubleArray(vs)) => {
                vs.iter().all(|v| self.contains_double(*v))
            }
            _ => true,
        }
    }

    fn contains_integer(&self, v: i64) -> bool {
        let Self::Integer { from, to, step } = *self else {
            return true;
        };
        if v < from || v > to {
            return false;
        }
        // rclcpp: on a step from `from`, or exactly `to` (which need not be on a step).
        step == 0 || v == to || (i128::from(v) - i128::from(from)) % i128::from(step) == 0
    }

    fn contains_double(&self, v: f64) -> bool {
        let Self::FloatingPoint { from, to, step } = *self else {
            return true;
        };
        // rclcpp compares within 100 ulp so that 0.1 + 0.2 counts as 0.3.
        let equal = |x: f64, y: f64| (x - y).abs() <= f64::EPSILON * (x + y).abs() * 100.0;
        if !(equal(v, from) || equal(v, to) || (from < v && v < to)) {
            return false;
        }
        if step == 0.0 || equal(v, to) {
            return true;
        }
        let steps = ((v - from) / step).round();
        equal(v, from + steps * step)
    }

    /// The type of the parameters this range can constrain.
    fn applies_to(&self, ty: ParameterType) -> bool {
        match self {
            Self::Integer { .. } => {
                matches!(ty, ParameterType::Integer | ParameterType::IntegerArray)
            }
            Self::FloatingPoint { .. } => {
                matches!(ty, ParameterType::Double | ParameterType::DoubleArray)
            }
        }
    }
}

impl fmt::Display for ParameterRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Integer { from, to, step } => {
                write!(f, "integer range [{from}, {to}]")?;
                if *step != 0 {
                    write!(f, " with step {step}")?;
                }
                Ok(())
            }
            Self::FloatingPoint { from, to, step } => {
                write!(
                    f,
                    "floating-point range [{}, {}]",
                    format_double(*from),
                    format_double(*to)
                )?;
                if *step != 0.0 {
                    write!(f, " with step {}", format_double(*step))?;
                }
                Ok(())
            }
        }
    }
}

/// What a parameter is and may be: `rcl_interfaces/msg/ParameterDescriptor`.
///
/// ```
/// use roslite::ParameterDescriptor;
/// let d = ParameterDescriptor::new()
///     .description("publish rate in Hz")
///     .floating_point_range(0.1, 100.0, 0.0);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParameterDescriptor {
    /// Filled in by `describe_parameters`; ignored when declaring.
    pub name: String,
    /// The type the parameter must keep. When declaring, [`ParameterType::NotSet`] means "the
    /// type of the default value"; with a default of [`ParameterValue::NotSet`] it says which
    /// type an override must give.
    pub ty: ParameterType,
    pub description: String,
    /// Constraints in words, for people (not checked).
    pub additional_constraints: String,
    /// Set only by the default or an override at declaration; later sets fail.
    pub read_only: bool,
    /// The value may change type (and be undeclared); without it every set must keep the type.
    pub dynamic_typing: bool,
    pub range: Option<ParameterRange>,
}

impl ParameterDescriptor {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = text.into();
        self
    }

    pub fn additional_constraints(mut self, text: impl Into<String>) -> Self {
        self.additional_constraints = text.into();
        self
    }

    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    pub fn dynamic_typing(mut self) -> Self {
        self.dynamic_typing = true;
        self
    }

    pub fn of_type(mut self, ty: ParameterType) -> Self {
        self.ty = ty;
        self
    }

    pub fn integer_range(mut self, from: i64, to: i64, step: u64) -> Self {
        self.range = Some(ParameterRange::Integer { from, to, step });
        self
    }

    pub fn floating_point_range(mut self, from: f64, to: f64, step: f64) -> Self {
        self.range = Some(ParameterRange::FloatingPoint { from, to, step });
        self
    }

    pub fn to_msg(&self) -> rcl::ParameterDescriptor {
        let mut msg = rcl::ParameterDescriptor {
            name: self.name.clone(),
            r#type: self.ty.code(),
            description: self.description.clone(),
            additional_constraints: self.additional_constraints.clone(),
            read_only: self.read_only,
            dynamic_typing: self.dynamic_typing,
            ..Default::default()
        };
        match self.range {
            Some(ParameterRange::Integer { from, to, step }) => {
                msg.integer_range.push(rcl::IntegerRange {
                    from_value: from,
                    to_value: to,
                    step,
                });
            }
            Some(ParameterRange::FloatingPoint { from, to, step }) => {
                msg.floating_point_range.push(rcl::FloatingPointRange {
                    from_value: from,
                    to_value: to,
                    step,
                });
            }
            None => {}
        }
        msg
    }

    /// From the message; `None` for an unknown type code.
    pub fn from_msg(msg: &rcl::ParameterDescriptor) -> Option<Self> {
        let range = if let Some(r) = msg.integer_range.first() {
            Some(ParameterRange::Integer {
                from: r.from_value,
                to: r.to_value,
                step: r.step,
            })
        } else {
            msg.floating_point_range
                .first()
                .map(|r| ParameterRange::FloatingPoint {
                    from: r.from_value,
                    to: r.to_value,
                    step: r.step,
                })
        };
        Some(Self {
            name: msg.name.clone(),
            ty: ParameterType::from_code(msg.r#type)?,
            description: msg.description.clone(),
            additional_constraints: msg.additional_constraints.clone(),
            read_only: msg.read_only,
            dynamic_typing: msg.dynamic_typing,
            range,
        })
    }
}

/// The outcome of setting parameters: `rcl_interfaces/msg/SetParametersResult`. `reason`
/// says why it failed (rclcpp's wording where rclcpp has one), or is what a successful
/// on-set callback chose to say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetParametersResult {
    pub successful: bool,
    pub reason: String,
}

impl SetParametersResult {
    pub fn success() -> Self {
        Self {
            successful: true,
            reason: String::new(),
        }
    }

    /// A failure, as an on-set callback returns it to refuse a change.
    pub fn rejected(reason: impl Into<String>) -> Self {
        Self {
            successful: false,
            reason: reason.into(),
        }
    }

    pub fn to_msg(&self) -> rcl::SetParametersResult {
        rcl::SetParametersResult {
            successful: self.successful,
            reason: self.reason.clone(),
        }
    }
}

impl From<Result<(), ParameterError>> for SetParametersResult {
    fn from(result: Result<(), ParameterError>) -> Self {
        match result {
            Ok(()) => Self::success(),
            Err(e) => Self::rejected(e.to_string()),
        }
    }
}

/// Parameter names, and the prefixes (`a.b` of `a.b.c`) under which some were found:
/// `rcl_interfaces/msg/ListParametersResult`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListParametersResult {
    pub names: Vec<String>,
    pub prefixes: Vec<String>,
}

/// Why a parameter operation failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParameterError {
    /// `declare_parameter` of a name that is declared already.
    AlreadyDeclared { name: String },
    /// A descriptor that contradicts itself or the parameter's type.
    InvalidDescriptor { name: String, reason: String },
    /// A name that is empty, has an empty `.`-separated part, or contains whitespace or
    /// control characters.
    InvalidName { name: String, reason: &'static str },
    /// An on-set callback declared, set or undeclared a parameter (which would deadlock or
    /// recurse); do it after the callback returns.
    ModifiedInCallback { name: String },
    /// A statically typed parameter declared without a default value, and no override gave
    /// it one.
    NoValue { name: String, ty: ParameterType },
    /// The parameter was never declared and the node does not allow undeclared parameters.
    NotDeclared { name: String },
    /// The value lies outside the descriptor's range.
    OutOfRange {
        name: String,
        value: ParameterValue,
        range: ParameterRange,
    },
    /// The parameter is read-only.
    ReadOnly { name: String },
    /// An on-set callback refused the change.
    Rejected { reason: String },
    /// Undeclaring a statically typed parameter (rclcpp refuses it too).
    StaticallyTyped { name: String },
    /// A value whose type differs from the parameter's, which is not dynamically typed.
    /// `from_override` when the value came from `-p` or a parameter file.
    WrongType {
        name: String,
        expected: ParameterType,
        actual: ParameterType,
        from_override: bool,
    },
}

impl fmt::Display for ParameterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyDeclared { name } => {
                write!(f, "parameter '{name}' has already been declared")
            }
            Self::InvalidDescriptor { name, reason } => {
                write!(f, "invalid descriptor for parameter '{name}': {reason}")
            }
            Self::InvalidName { name, reason } => {
                write!(f, "invalid parameter name '{name}': {reason}")
            }
            Self::ModifiedInCallback { name } => write!(
                f,
                "parameter '{name}' cannot be declared, set or undeclared from within an on-set \
                 parameters callback"
            ),
            Self::NoValue { name, ty } => write!(
                f,
                "parameter '{name}' is declared as {ty} without a default value and no \
                 override gives it one (pass --ros-args -p {name}:=<value> or a --params-file)"
            ),
            Self::NotDeclared { name } => write!(f, "parameter '{name}' has not been declared"),
            Self::OutOfRange { name, value, range } => write!(
                f,
                "parameter '{name}' cannot be set to {value}: outside its {range}"
            ),
            Self::ReadOnly { name } => {
                write!(
                    f,
                    "parameter '{name}' cannot be set because it is read-only"
                )
            }
            Self::Rejected { reason } => f.write_str(reason),
            Self::StaticallyTyped { name } => write!(
                f,
                "parameter '{name}' cannot be undeclared because it is statically typed \
                 (declare it with dynamic_typing to allow that)"
            ),
            // rclcpp's wording, which `ros2 param set` users know.
            Self::WrongType {
                name,
                expected,
                actual,
                from_override,
            } => {
                write!(
                    f,
                    "Wrong parameter type, parameter {{{name}}} is of type {{{expected}}}, \
                     setting it to {{{actual}}} is not allowed."
                )?;
                if *from_override {
                    f.write_str(" (the value came from an override: -p or --params-file)")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ParameterError {}

/// The six service names under a node's fully qualified name (rclcpp's
/// `parameter_service_names`).
pub const SERVICE_SUFFIXES: [&str; 6] = [
    "describe_parameters",
    "get_parameter_types",
    "get_parameters",
    "list_parameters",
    "set_parameters",
    "set_parameters_atomically",
];

/// The store and what announces its changes; shared by a node's handles and its services.
pub(crate) struct ParameterCore {
    pub(crate) store: ParameterStore,
    node_fqn: String,
    clock: RosClockSource,
    pub(crate) events: OnceLock<Publisher<rcl::ParameterEvent>>,
}

impl ParameterCore {
    fn announce(&self, change: Change) {
        if change.is_empty() {
            return;
        }
        let Some(publisher) = self.events.get() else {
            return;
        };
        let event = rcl::ParameterEvent {
            stamp: self.clock.now().to_msg(),
            node: self.node_fqn.clone(),
            new_parameters: change.new.iter().map(Parameter::to_msg).collect(),
            changed_parameters: change.changed.iter().map(Parameter::to_msg).collect(),
            deleted_parameters: change.deleted.iter().map(Parameter::to_msg).collect(),
        };
        // A failed event publish must not undo a change that has been made.
        let _ = publisher.publish(event);
    }

    pub(crate) fn declare(
        &self,
        name: &str,
        default: ParameterValue,
        descriptor: ParameterDescriptor,
    ) -> Result<ParameterValue, ParameterError> {
        let (value, change) = self.store.declare(name, default, descriptor)?;
        self.announce(change);
        Ok(value)
    }

    pub(crate) fn undeclare(&self, name: &str) -> Result<(), ParameterError> {
        let change = self.store.undeclare(name)?;
        self.announce(change);
        Ok(())
    }

    pub(crate) fn set_atomically(&self, parameters: &[Parameter]) -> SetParametersResult {
        let result = self.store.set_atomically(parameters).map(|change| {
            self.announce(change);
        });
        result.into()
    }

    pub(crate) fn set_each(&self, parameters: &[Parameter]) -> Vec<SetParametersResult> {
        parameters
            .iter()
            .map(|p| self.set_atomically(std::slice::from_ref(p)))
            .collect()
    }

    pub(crate) fn store(&self) -> &ParameterStore {
        &self.store
    }
}

/// A node's parameters: the shared core and the services that serve it.
pub(crate) struct NodeParameters {
    pub(crate) core: Arc<ParameterCore>,
    /// `Service<_>` handles, kept as long as the node.
    pub(crate) services: Mutex<Vec<Box<dyn Any + Send + Sync>>>,
    pub(crate) enabled: ParameterServices,
}

impl NodeParameters {
    pub(crate) fn new(
        overrides: Overrides,
        node_fqn: String,
        clock: RosClockSource,
        enabled: ParameterServices,
    ) -> Arc<Self> {
        Arc::new(Self {
            core: Arc::new(ParameterCore {
                store: ParameterStore::new(overrides),
                node_fqn,
                clock,
                events: OnceLock::new(),
            }),
            services: Mutex::default(),
            enabled,
        })
    }
}
