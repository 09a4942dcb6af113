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

use super::yaml::{self, Yaml, YamlError};
use super::{ParameterError, ParameterType, ParameterValue};
use crate::vocabulary::config::RosArgs;

/// Why an override source could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideError {
    /// The file path, or the `-p` argument.
    pub source: String,
    pub problem: OverrideProblem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OverrideProblem {
    /// The file's structure is not `node: ros__parameters: {...}`.
    Layout(String),
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
        match &self.problem {
            OverrideProblem::Layout(what) => write!(
                f,
                "parameter file {source}: {what} (the format is `<node>: ros__parameters: \
                 {{name: value}}`, node names optionally nested under namespaces)"
            ),
            OverrideProblem::Unreadable(e) => write!(f, "cannot read parameter file {source}: {e}"),
            OverrideProblem::Value { name, error } => {
                write!(f, "{source}: parameter '{name}': {error}")
            }
            OverrideProblem::Yaml(e) => write!(f, "{source}: not valid YAML: {e}"),
        }
    }
}

impl std::error::Error for OverrideError {}

/// Why YAML text is not a parameter value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueError {
    /// Nothing, `~` or `null`.
    Empty,
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
            Self::Empty => f.write_str("no value given (empty, '~' or 'null')"),
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
    let text = std::fs::read_to_string(path).map_err(|e| OverrideError {
        source: path.to_owned(),
        problem: OverrideProblem::Unreadable(e.to_string()),
    })?;
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

impl Overrides {
    /// The overrides `args` give the node `node_fqn` (`/namespace/name`), reading the
    /// parameter files.
    pub(crate) fn for_node(args: &RosArgs, node_fqn: &str) -> Result<Self, OverrideError> {
        let mut files = Vec::with_capacity(args.params_files.len());
        for path in &args.params_files {
            let text = std::fs::read_to_string(path).map_err(|e| OverrideError {
                source: path.clone(),
                problem: OverrideProblem::Unreadable(e.to_string()),
            })?;
            files.push((path.clone(), text));
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
                problem: OverrideProblem::Layout(e.to_string()),
            })?;
            let value = value_from_yaml_text(text).map_err(|error| OverrideError {
                source: source(),
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
        let error = |problem| OverrideError {
            source: path.to_owned(),
            problem,
        };
        let Some(document) = yaml::parse(text).map_err(|e| error(OverrideProblem::Yaml(e)))? else {
            return Ok(());
        };
        let Yaml::Map(entries) = document else {
            return Err(error(OverrideProblem::Layout(
                "the top level must be a mapping of node names".into(),
            )));
        };
        self.apply_namespace(&entries, &mut Vec::new(), node_fqn)
            .map_err(error)
    }

    /// Walks namespace/node keys down to each `ros__parameters`.
    fn apply_namespace(
        &mut self,
        entries: &[(String, Yaml)],
        path: &mut Vec<String>,
        node_fqn: &str,
    ) -> Result<(), OverrideProblem> {
        for (key, value) in entries {
            if key == "ros__parameters" {
                let Yaml::Map(parameters) = value else {
                    return Err(OverrideProblem::Layout(
                        "'ros__parameters' must hold a mapping of parameter names".into(),
                    ));
                };
                if path.is_empty() {
                    return Err(OverrideProblem::Layout(
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
                return Err(OverrideProblem::Layout(format!(
                    "'{key}' is not under 'ros__parameters', so it must be a node or namespace \
                     holding a mapping"
                )));
            };
            path.push(key.clone());
            self.apply_namespace(inner, path, node_fqn)?;
            path.pop();
        }
        Ok(())
    }

    fn apply_parameters(
        &mut self,
        entries: &[(String, Yaml)],
        prefix: &str,
    ) -> Result<(), OverrideProblem> {
        for (key, value) in entries {
            let name = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            if let Yaml::Map(inner) = value {
                self.apply_parameters(inner, &name)?;
                continue;
            }
            let value = value_from_yaml(value).map_err(|error| OverrideProblem::Value {
                name: name.clone(),
                error,
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
        match self.values.get("use_sim_time") {
            None => Ok(false),
            Some(ParameterValue::Bool(b)) => Ok(*b),
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
fn scalar_value(text: &str, quoted: bool) -> Result<ParameterValue, ValueError> {
    if quoted {
        return Ok(ParameterValue::String(text.to_owned()));
    }
    let text = text.trim();
    if text.is_empty() || matches!(text, "~" | "null" | "Null" | "NULL") {
        return Err(ValueError::Empty);
    }
    Ok(if let Some(b) = bool_word(text) {
        ParameterValue::Bool(b)
    } else if let Some(i) = integer(text) {
        ParameterValue::Integer(i)
    } else if let Some(d) = double(text) {
        ParameterValue::Double(d)
    } else {
        ParameterValue::String(text.to_owned())
    })
}

fn bool_word(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
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
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

fn double(text: &str) -> Option<f64> {
    match text.trim_start_matches(['+', '-']) {
        ".inf" | ".Inf" | ".INF" => {
            return Some(if text.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    // Only numerals: Rust would also read `inf`, `NaN` and `infinity`, which YAML keeps as text.
    let numeral = text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && text.chars().any(|c| c.is_ascii_digit());
    numeral.then(|| text.parse().ok()).flatten()
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
