//! Parameter overrides: the values a node's parameters start with when `--params-file` or
//! `--ros-args -p` give one, taking precedence over the defaults in `declare_parameter`.
//!
//! A parameter file is ROS 2's format (`rcl_yaml_param_parser`): node names, possibly nested
//! under namespaces, map to `ros__parameters`, under which nested mappings make dotted names:
//!
//! ```yaml
//! /**:                     # every node
//!   ros__parameters:
//!     use_sim_time: false
//! robot:                   # namespace /robot ...
//!   driver:                # ... node /robot/driver
//!     ros__parameters:
//!       wheel: {radius: 0.1, count: 4}   # wheel.radius, wheel.count
//! ```
//!
//! Node names match as rclcpp matches them: a leading `/` is implied, `*` stands for any
//! part of one name token, a `**` token for any number of tokens. Later entries win over
//! earlier ones; all files are applied first, in order, then the `-p` arguments in order
//! (rcl interleaves them in command-line order; `RosArgs` keeps the two kinds apart).

use std::collections::BTreeMap;
use std::fmt;

use super::yaml::{self, Key, Yaml, YamlError};
use super::{ParameterError, ParameterType, ParameterValue};
use crate::vocabulary::config::RosArgs;

/// The most bytes a parameter file may hold, unless [`MAX_PARAMS_FILE_BYTES_VAR`] says
/// otherwise. ROS 2 parameter files are kilobytes (40 000 parameters take 600 KiB); the limit
/// is there so that a wrong path (`/dev/zero`, a log, a pipe that never ends) is an error, not
/// a node that eats all memory.
pub const MAX_PARAMS_FILE_BYTES: usize = 16 << 20;

/// The environment variable that sets another limit than [`MAX_PARAMS_FILE_BYTES`], in bytes.
pub const MAX_PARAMS_FILE_BYTES_VAR: &str = "ROSLITE_MAX_PARAMS_FILE_BYTES";

/// Why an override source could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideError {
    /// The file path, or the `-p` argument.
    pub source: String,
    /// The line in the file the problem is on, when it is on one line (problems of YAML
    /// syntax carry theirs in [`YamlError`]).
    pub line: Option<usize>,
    pub problem: OverrideProblem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OverrideProblem {
    /// A parameter name that `-p` would refuse too: empty, with an empty `.`-separated part,
    /// or with whitespace or control characters.
    InvalidName {
        name: String,
        reason: &'static str,
    },
    /// The file's structure is not `node: ros__parameters: {...}`.
    Layout(String),
    /// The file holds more than `limit` bytes (see [`MAX_PARAMS_FILE_BYTES`]).
    TooLarge {
        limit: usize,
    },
    /// The file could not be read.
    Unreadable(String),
    /// One parameter's value is not a parameter value.
    Value {
        name: String,
        error: ValueError,
    },
    Yaml(YamlError),
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = &self.source;
        // `file:line: ` as compilers write it, so that editors can jump there.
        let at = match self.line {
            Some(line) => format!("{source}:{line}"),
            None => source.clone(),
        };
        match &self.problem {
            OverrideProblem::InvalidName { name, reason } => write!(
                f,
                "{at}: invalid parameter name '{name}': {reason}; parameter names are words \
                 joined by '.' (e.g. wheel.radius)"
            ),
            OverrideProblem::Layout(what) => write!(
                f,
                "parameter file {at}: {what} (the format is `<node>: ros__parameters: \
                 {{name: value}}`, node names optionally nested under namespaces)"
            ),
            OverrideProblem::TooLarge { limit } => write!(
                f,
                "parameter file {source} is larger than {}, the most roslite reads (parameter \
                 files are kilobytes; check the path). If it is a parameter file, split it into \
                 several --params-file, or raise the limit with {MAX_PARAMS_FILE_BYTES_VAR}=<bytes>",
                roslite_yaml::bytes(*limit)
            ),
            OverrideProblem::Unreadable(e) => write!(f, "cannot read parameter file {source}: {e}"),
            OverrideProblem::Value { name, error } => {
                write!(f, "{at}: parameter '{name}': {error}")
            }
            OverrideProblem::Yaml(e) => write!(
                f,
                "{source}:{}:{}: not valid YAML: {}",
                e.line, e.column, e.message
            ),
        }
    }
}

impl std::error::Error for OverrideError {}

/// Why YAML text is not a parameter value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueError {
    /// A number written as a double (with a '.' or an exponent) beyond the range of a double,
    /// which would be read as infinity.
    DoubleOutOfRange {
        text: String,
    },
    /// Nothing, `~` or `null`.
    Empty,
    /// An integer beyond the 64 bits of a parameter integer.
    IntegerOutOfRange {
        text: String,
    },
    /// A mapping where a value was expected.
    Mapping,
    /// A sequence whose elements have different types (`[1, true]`).
    MixedSequence {
        first: ParameterType,
        other: ParameterType,
    },
    /// A sequence inside a sequence, or a sequence of nulls.
    NestedSequence,
    Yaml(YamlError),
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DoubleOutOfRange { text } => write!(
                f,
                "{text} is beyond the range of a double ({:e} to {:e}); write a smaller number, \
                 or .inf or -.inf for infinity",
                f64::MIN,
                f64::MAX
            ),
            Self::Empty => f.write_str("no value given (empty, '~' or 'null')"),
            Self::IntegerOutOfRange { text } => write!(
                f,
                "{text} is beyond the range of an integer parameter ({} to {}); write it with \
                 a '.' (e.g. {text}.0) for a double, or quote it for a string",
                i64::MIN,
                i64::MAX
            ),
            Self::Mapping => f.write_str("a mapping is not a parameter value"),
            Self::MixedSequence { first, other } => write!(
                f,
                "array elements must share one type, but a {first} is followed by a {other} \
                 (quote strings, write doubles with a '.')"
            ),
            Self::NestedSequence => {
                f.write_str("array elements must be bools, integers, doubles or strings")
            }
            Self::Yaml(e) => write!(f, "not valid YAML: {e}"),
        }
    }
}

impl std::error::Error for ValueError {}

/// The override values of one node, by parameter name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Overrides {
    values: BTreeMap<String, ParameterValue>,
    /// Leave out entries whose node pattern has a wildcard (`/**`): `ros2 param load
    /// --no-use-wildcard`.
    exact_names_only: bool,
}

/// The parameters the parameter file at `path` gives node `node_fqn` (`/namespace/name`), as
/// the node would start with them and as `ros2 param load` sets them: entries for every node
/// (`/**`, other patterns) count unless `use_wildcards` is false. Sorted by name.
///
/// # Errors
/// The file cannot be read, is not a parameter file, or holds a value that is not a
/// parameter value.
pub fn parameters_in_file(
    path: &str,
    node_fqn: &str,
    use_wildcards: bool,
) -> Result<Vec<super::Parameter>, OverrideError> {
    let text = read_params_file(path)?;
    let mut out = Overrides {
        exact_names_only: !use_wildcards,
        ..Overrides::default()
    };
    out.apply_file(path, &text, node_fqn)?;
    Ok(out
        .values
        .into_iter()
        .map(|(name, value)| super::Parameter::new(name, value))
        .collect())
}

/// The text of the parameter file at `path`, up to [`MAX_PARAMS_FILE_BYTES`] or the limit
/// [`MAX_PARAMS_FILE_BYTES_VAR`] sets.
fn read_params_file(path: &str) -> Result<String, OverrideError> {
    let error = |problem| OverrideError {
        source: path.to_owned(),
        line: None,
        problem,
    };
    let limit = match std::env::var(MAX_PARAMS_FILE_BYTES_VAR) {
        Err(_) => MAX_PARAMS_FILE_BYTES,
        Ok(text) => text.trim().parse().map_err(|_| {
            error(OverrideProblem::Unreadable(format!(
                "{MAX_PARAMS_FILE_BYTES_VAR}={text} is not a number of bytes; set it to one, \
                 e.g. {}",
                MAX_PARAMS_FILE_BYTES * 4
            )))
        })?,
    };
    read_params_text(path, limit).map_err(error)
}

/// The text of the file at `path` if it holds at most `limit` bytes.
pub(super) fn read_params_text(path: &str, limit: usize) -> Result<String, OverrideProblem> {
    let file = std::fs::File::open(path).map_err(|e| OverrideProblem::Unreadable(e.to_string()))?;
    roslite_yaml::read_text(file, limit).map_err(|e| match e {
        roslite_yaml::InputError::TooLarge { limit } => OverrideProblem::TooLarge { limit },
        other => OverrideProblem::Unreadable(other.to_string()),
    })
}

impl Overrides {
    /// The overrides `args` give the node `node_fqn` (`/namespace/name`), reading the
    /// parameter files.
    pub(crate) fn for_node(args: &RosArgs, node_fqn: &str) -> Result<Self, OverrideError> {
        let mut files = Vec::with_capacity(args.params_files.len());
        for path in &args.params_files {
            files.push((path.clone(), read_params_file(path)?));
        }
        Self::from_sources(&files, &args.params, node_fqn)
    }

    /// As [`Self::for_node`], with the files' `(path, text)` already read.
    pub(crate) fn from_sources(
        files: &[(String, String)],
        params: &[(Option<String>, String, String)],
        node_fqn: &str,
    ) -> Result<Self, OverrideError> {
        let mut out = Self::default();
        for (path, text) in files {
            out.apply_file(path, text, node_fqn)?;
        }
        for (target, name, text) in params {
            if target
                .as_deref()
                .is_some_and(|pattern| !node_matches(pattern, node_fqn))
            {
                continue;
            }
            let source = || match target {
                Some(t) => format!("-p {t}:{name}:={text}"),
                None => format!("-p {name}:={text}"),
            };
            validate_name(name).map_err(|e| OverrideError {
                source: source(),
                line: None,
                problem: invalid_name(e),
            })?;
            let value = value_from_yaml_text(text).map_err(|error| OverrideError {
                source: source(),
                line: None,
                problem: OverrideProblem::Value {
                    name: name.clone(),
                    error,
                },
            })?;
            out.values.insert(name.clone(), value);
        }
        Ok(out)
    }

    fn apply_file(&mut self, path: &str, text: &str, node_fqn: &str) -> Result<(), OverrideError> {
        let error = |line, problem| OverrideError {
            source: path.to_owned(),
            line,
            problem,
        };
        let Some(document) =
            yaml::parse(text).map_err(|e| error(None, OverrideProblem::Yaml(e)))?
        else {
            return Ok(());
        };
        let Yaml::Map(entries) = document else {
            return Err(error(
                None,
                OverrideProblem::Layout("the top level must be a mapping of node names".into()),
            ));
        };
        self.apply_namespace(&entries, &mut Vec::new(), node_fqn)
            .map_err(|(line, problem)| error(Some(line), problem))
    }

    /// Walks namespace/node keys down to each `ros__parameters`.
    fn apply_namespace(
        &mut self,
        entries: &[(Key, Yaml)],
        path: &mut Vec<String>,
        node_fqn: &str,
    ) -> Result<(), (usize, OverrideProblem)> {
        for (key, value) in entries {
            let layout = |what: String| (key.line, OverrideProblem::Layout(what));
            if key.text == "ros__parameters" {
                let Yaml::Map(parameters) = value else {
                    return Err(layout(
                        "'ros__parameters' must hold a mapping of parameter names".into(),
                    ));
                };
                if path.is_empty() {
                    return Err(layout(
                        "'ros__parameters' must be under a node name (use '/**' for all nodes)"
                            .into(),
                    ));
                }
                let wildcard = path.iter().any(|token| token.contains('*'));
                if !(self.exact_names_only && wildcard) && node_matches(&path.join("/"), node_fqn) {
                    self.apply_parameters(parameters, "")?;
                }
                continue;
            }
            let Yaml::Map(inner) = value else {
                return Err(layout(format!(
                    "'{}' is not under 'ros__parameters', so it must be a node or namespace \
                     holding a mapping",
                    key.text
                )));
            };
            path.push(key.text.clone());
            self.apply_namespace(inner, path, node_fqn)?;
            path.pop();
        }
        Ok(())
    }

    fn apply_parameters(
        &mut self,
        entries: &[(Key, Yaml)],
        prefix: &str,
    ) -> Result<(), (usize, OverrideProblem)> {
        for (key, value) in entries {
            let name = if prefix.is_empty() {
                key.text.clone()
            } else {
                format!("{prefix}.{}", key.text)
            };
            if let Yaml::Map(inner) = value {
                self.apply_parameters(inner, &name)?;
                continue;
            }
            // The same rules as `-p name:=value`, so that a file cannot set a parameter no
            // tool could name.
            validate_name(&name).map_err(|e| (key.line, invalid_name(e)))?;
            let value = value_from_yaml(value).map_err(|error| {
                let problem = OverrideProblem::Value {
                    name: name.clone(),
                    error,
                };
                (key.line, problem)
            })?;
            self.values.insert(name, value);
        }
        Ok(())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&ParameterValue> {
        self.values.get(name)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &ParameterValue)> {
        self.values.iter()
    }

    /// `use_sim_time`, which decides the node's clock before parameters are declared.
    ///
    /// # Errors
    /// The value, as text, when it is not a bool.
    pub(crate) fn use_sim_time(&self) -> Result<bool, String> {
        self.bool_value("use_sim_time")
            .map(|value| value.unwrap_or(false))
    }

    /// The override of the bool parameter `name`, if there is one: for the parameters a node
    /// declares itself, checked before the node is made.
    ///
    /// # Errors
    /// The value, as text, when it is not a bool.
    pub(crate) fn bool_value(&self, name: &str) -> Result<Option<bool>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(ParameterValue::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(other.to_string()),
        }
    }
}

/// Whether a node name pattern from a file or `-p node:name:=value` names `node_fqn`.
pub(crate) fn node_matches(pattern: &str, node_fqn: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').filter(|t| !t.is_empty()).collect();
    let name: Vec<&str> = node_fqn.split('/').filter(|t| !t.is_empty()).collect();
    tokens_match(&pattern, &name)
}

fn tokens_match(pattern: &[&str], name: &[&str]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((&"**", rest)) => (0..=name.len()).any(|skip| tokens_match(rest, &name[skip..])),
        Some((token, rest)) => name
            .split_first()
            .is_some_and(|(first, tail)| glob(token, first) && tokens_match(rest, tail)),
    }
}

/// `*` matches any run of characters within one token.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|i| rest.is_char_boundary(*i))
                .any(|i| glob(tail, &rest[i..]))
        }
    }
}

/// See [`ParameterValue::from_yaml`].
pub(crate) fn value_from_yaml_text(text: &str) -> Result<ParameterValue, ValueError> {
    let node = yaml::parse_inline(text).map_err(ValueError::Yaml)?;
    value_from_yaml(&node)
}

fn value_from_yaml(node: &Yaml) -> Result<ParameterValue, ValueError> {
    match node {
        Yaml::Scalar { text, quoted } => scalar_value(text, *quoted),
        Yaml::Map(_) => Err(ValueError::Mapping),
        Yaml::Seq(items) => {
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Yaml::Scalar { text, quoted } => values.push(scalar_value(text, *quoted)?),
                    Yaml::Seq(_) => return Err(ValueError::NestedSequence),
                    Yaml::Map(_) => return Err(ValueError::Mapping),
                }
            }
            array_value(values)
        }
    }
}

/// One array from scalar values of one type; `[]` is a string array (see
/// `store::coerce_empty_array` for how it takes the declared type).
fn array_value(values: Vec<ParameterValue>) -> Result<ParameterValue, ValueError> {
    let Some(first) = values.first().map(ParameterValue::parameter_type) else {
        return Ok(ParameterValue::StringArray(Vec::new()));
    };
    if let Some(other) = values
        .iter()
        .map(ParameterValue::parameter_type)
        .find(|t| *t != first)
    {
        return Err(ValueError::MixedSequence { first, other });
    }
    macro_rules! collect {
        ($variant:ident, $array:ident) => {
            ParameterValue::$array(
                values
                    .into_iter()
                    .filter_map(|v| match v {
                        ParameterValue::$variant(x) => Some(x),
                        _ => None,
                    })
                    .collect(),
            )
        };
    }
    Ok(match first {
        ParameterType::Bool => collect!(Bool, BoolArray),
        ParameterType::Integer => collect!(Integer, IntegerArray),
        ParameterType::Double => collect!(Double, DoubleArray),
        ParameterType::String => collect!(String, StringArray),
        _ => return Err(ValueError::NestedSequence),
    })
}

/// A scalar as `rcl_yaml_param_parser` reads it: quoted is a string; otherwise a YAML 1.1
/// bool word, an integer, a double, or else a string.
///
/// Unlike rcl, a numeral beyond its type's range is an error: rcl reads an integer beyond 64
/// bits as a double (`strtol` fails, `strtod` does not) and `1e400` as the string "1e400"
/// (`strtod` fails with `ERANGE`), neither of which anyone writing them means.
fn scalar_value(text: &str, quoted: bool) -> Result<ParameterValue, ValueError> {
    if quoted {
        return Ok(ParameterValue::String(text.to_owned()));
    }
    let text = text.trim();
    if text.is_empty() || matches!(text, "~" | "null" | "Null" | "NULL") {
        return Err(ValueError::Empty);
    }
    if let Some(b) = bool_word(text) {
        return Ok(ParameterValue::Bool(b));
    }
    match integer(text) {
        Numeral::InRange(i) => return Ok(ParameterValue::Integer(i)),
        Numeral::OutOfRange => {
            return Err(ValueError::IntegerOutOfRange {
                text: text.to_owned(),
            })
        }
        Numeral::Not => {}
    }
    Ok(match double(text) {
        Numeral::InRange(d) => ParameterValue::Double(d),
        Numeral::OutOfRange => {
            return Err(ValueError::DoubleOutOfRange {
                text: text.to_owned(),
            })
        }
        Numeral::Not => ParameterValue::String(text.to_owned()),
    })
}

/// What a scalar's text is as a number of one type.
enum Numeral<T> {
    /// Not a numeral of this type: some other value.
    Not,
    InRange(T),
    /// A numeral of this type whose value the type cannot hold.
    OutOfRange,
}

fn bool_word(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn integer(text: &str) -> Numeral<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x") {
        (16, hex)
    } else if let Some(octal) = digits.strip_prefix("0o") {
        (8, octal)
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Numeral::Not;
    }
    // Leading zeros cannot overflow, however many there are.
    let significant = digits.trim_start_matches('0');
    let magnitude = match u128::from_str_radix(
        if significant.is_empty() {
            "0"
        } else {
            significant
        },
        radix,
    ) {
        Ok(magnitude) => magnitude,
        Err(_) => return Numeral::OutOfRange,
    };
    let value = if negative {
        0i128.checked_sub_unsigned(magnitude)
    } else {
        i128::try_from(magnitude).ok()
    };
    match value.and_then(|v| i64::try_from(v).ok()) {
        Some(v) => Numeral::InRange(v),
        None => Numeral::OutOfRange,
    }
}

fn double(text: &str) -> Numeral<f64> {
    match text.trim_start_matches(['+', '-']) {
        ".inf" | ".Inf" | ".INF" => {
            return Numeral::InRange(if text.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        ".nan" | ".NaN" | ".NAN" => return Numeral::InRange(f64::NAN),
        _ => {}
    }
    // Only numerals: Rust would also read `inf`, `NaN` and `infinity`, which YAML keeps as text.
    let numeral = text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && text.chars().any(|c| c.is_ascii_digit());
    match numeral.then(|| text.parse::<f64>().ok()).flatten() {
        None => Numeral::Not,
        // A numeral is finite; Rust rounds one beyond the range of f64 to infinity.
        Some(d) if d.is_infinite() => Numeral::OutOfRange,
        Some(d) => Numeral::InRange(d),
    }
}

fn invalid_name(error: ParameterError) -> OverrideProblem {
    match error {
        ParameterError::InvalidName { name, reason } => {
            OverrideProblem::InvalidName { name, reason }
        }
        other => OverrideProblem::Layout(other.to_string()),
    }
}

/// Parameter names are `.`-separated parts; rclcpp checks little more than non-emptiness,
/// roslite also refuses names that no tool could type back.
pub(crate) fn validate_name(name: &str) -> Result<(), ParameterError> {
    let invalid = |reason| {
        Err(ParameterError::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return invalid("it is empty");
    }
    if name.split('.').any(str::is_empty) {
        return invalid("'.' separates parts, so it cannot start or end a name or be doubled");
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return invalid("it contains whitespace or control characters");
    }
    Ok(())
}
