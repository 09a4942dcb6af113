//! Reads a message from YAML text against its type, as `ros2 topic pub` and `ros2 service call`
//! take their message argument (`rosidl_runtime_py.set_message_fields` over `yaml.safe_load`).
//!
//! The type decides what a scalar means, so `data: 5` is the number 5 for an `int32` and the
//! text "5" for a `string`. Deliberate differences from rclpy, which converts with Python's
//! `int()`/`float()`/`str()`/`bool()` and so accepts almost anything:
//! - a fractional number for an integer field is an error, not truncated;
//! - anything but a YAML bool for a `bool` field is an error (`bool('no')` is `True` in Python);
//! - a plain scalar given to a string field keeps its text (`true` stays "true", not "True");
//! - a missing value (`data:`) is an error instead of the text "None".

use super::cdr::{check_string_bound, default_field, default_struct, float_value, int_value};
use super::resolve;
use super::yaml::{self, Node};
use super::{
    base_type_name, check_depth, field_names, is_byte_like, lookup, quote_for_error, ros_type_name,
    DynError, Value,
};
use crate::ast::{BaseType, Collection, FieldType, MessageSpec, Primitive, TypeName};
use crate::registry::InterfaceSet;

/// Reads a message of type `ty` from YAML, in flow style (`{linear: {x: 0.1}}`) or block
/// style (`data: hello`). Fields left out take their defaults; empty text, `{}` or `~` give
/// the default message.
///
/// # Errors
/// [`DynError::Yaml`] with the line for text that is not YAML; otherwise the error names the
/// field path: [`DynError::UnknownField`] (listing the known fields),
/// [`DynError::TypeMismatch`], [`DynError::OutOfRange`], [`DynError::TooLong`],
/// [`DynError::WrongLength`]; [`DynError::UnknownType`].
pub fn from_yaml(set: &InterfaceSet, ty: &TypeName, text: &str) -> Result<Value, DynError> {
    let spec = lookup(set, ty)?;
    match yaml::parse(text)? {
        None => default_struct(set, spec, 0),
        Some(node) if node.is_null() => default_struct(set, spec, 0),
        Some(node) => struct_from_node(set, spec, &node, 0),
    }
}

fn struct_from_node(
    set: &InterfaceSet,
    spec: &MessageSpec,
    node: &Node,
    depth: usize,
) -> Result<Value, DynError> {
    let depth = check_depth(depth, &spec.name)?;
    let Node::Map { entries, .. } = node else {
        return Err(mismatch(spec.name.to_string(), node));
    };
    if let Some((key, _)) = entries
        .iter()
        .find(|(key, _)| !spec.fields.iter().any(|f| f.name == key.text))
    {
        return Err(DynError::UnknownField {
            field: key.text.clone(),
            type_name: spec.name.clone(),
            known: field_names(spec),
        });
    }
    let mut fields = Vec::with_capacity(spec.fields.len());
    for field in &spec.fields {
        let value = match entries.iter().find(|(key, _)| key.text == field.name) {
            Some((_, node)) => {
                value_from_node(set, &field.ty, node, depth).map_err(|e| e.in_field(&field.name))?
            }
            None => default_field(set, field, depth)?,
        };
        fields.push((field.name.clone(), value));
    }
    Ok(Value::Struct(fields))
}

fn value_from_node(
    set: &InterfaceSet,
    ty: &FieldType,
    node: &Node,
    depth: usize,
) -> Result<Value, DynError> {
    if ty.collection == Collection::Single {
        return element_from_node(set, &ty.base, node, depth);
    }
    let Node::Seq { items, .. } = node else {
        return Err(mismatch(ros_type_name(ty), node));
    };
    match ty.collection {
        Collection::Array(n) if items.len() != n => {
            return Err(DynError::WrongLength {
                field: String::new(),
                expected: ros_type_name(ty),
                len: items.len(),
            });
        }
        Collection::BoundedSequence(bound) if items.len() > bound => {
            return Err(DynError::TooLong {
                field: String::new(),
                expected: ros_type_name(ty),
                len: items.len(),
                bound,
            });
        }
        _ => {}
    }
    let values = items
        .iter()
        .enumerate()
        .map(|(i, item)| element_from_node(set, &ty.base, item, depth).map_err(|e| e.at_index(i)))
        .collect::<Result<Vec<_>, _>>()?;
    if is_byte_like(&ty.base) {
        let bytes = values.iter().map(|v| match v {
            Value::UInt(u) => *u as u8,
            _ => unreachable!("internal bug: byte-like elements read as UInt"),
        });
        return Ok(Value::Bytes(bytes.collect()));
    }
    Ok(Value::Array(values))
}

fn element_from_node(
    set: &InterfaceSet,
    base: &BaseType,
    node: &Node,
    depth: usize,
) -> Result<Value, DynError> {
    match base {
        BaseType::Named(name) => struct_from_node(set, lookup(set, name)?, node, depth),
        BaseType::String { bound } | BaseType::WString { bound } => {
            let text = match node {
                Node::Scalar { text, .. } if !node.is_null() => text,
                _ => return Err(mismatch(base_type_name(base), node)),
            };
            check_string_bound(base, text, *bound)?;
            Ok(Value::String(text.clone()))
        }
        BaseType::Primitive(p) => primitive_from_node(*p, node),
    }
}

fn primitive_from_node(p: Primitive, node: &Node) -> Result<Value, DynError> {
    let wrong = || mismatch(p.keyword().to_owned(), node);
    let Node::Scalar { text, quoted, .. } = node else {
        return Err(wrong());
    };
    let plain = !*quoted;
    match p {
        Primitive::Bool => match resolve::bool_value(text) {
            Some(b) if plain => Ok(Value::Bool(b)),
            _ => Err(wrong()),
        },
        Primitive::Float32 | Primitive::Float64 => match resolve::float_value(text) {
            // A numeral beyond the range of f64 parses to infinity, which nobody writing one
            // means; infinity is written `.inf`.
            Some(x) if plain && x.is_infinite() && !resolve::is_infinity_word(text) => {
                Err(DynError::OutOfRange {
                    field: String::new(),
                    expected: p.keyword().to_owned(),
                    found: text.clone(),
                })
            }
            Some(x) if plain => float_value(p, x).map_err(|e| with_text(e, text)),
            _ => Err(wrong()),
        },
        _ => {
            if plain {
                if let Some(i) = resolve::int_value(text) {
                    return int_value(p, i).map_err(|e| with_text(e, text));
                }
                if let Some(x) = resolve::float_value(text) {
                    // `1.0` or `1e3` name an integer too; `1.5` does not.
                    if x.fract() != 0.0 || x.is_nan() {
                        return Err(wrong());
                    }
                    if x.abs() >= 1e30 {
                        return Err(DynError::OutOfRange {
                            field: String::new(),
                            expected: p.keyword().to_owned(),
                            found: text.clone(),
                        });
                    }
                    return int_value(p, x as i128).map_err(|e| with_text(e, text));
                }
            }
            // A one-character string for a `byte` or `char`, as echo prints a `byte`.
            let mut chars = text.chars();
            if let (Primitive::Byte | Primitive::Char, Some(c), None) =
                (p, chars.next(), chars.next())
            {
                return int_value(p, i128::from(u32::from(c)))
                    .map_err(|e| with_text(e, &quote_for_error(text)));
            }
            Err(wrong())
        }
    }
}

/// Reports an out-of-range number as the user wrote it.
fn with_text(mut error: DynError, text: &str) -> DynError {
    if let DynError::OutOfRange { found, .. } = &mut error {
        *found = text.to_owned();
    }
    error
}

fn mismatch(expected: String, node: &Node) -> DynError {
    DynError::TypeMismatch {
        field: String::new(),
        expected,
        found: describe(node),
    }
}

/// What a node is, in the words of the YAML 1.1 meaning a plain scalar would have.
fn describe(node: &Node) -> String {
    match node {
        Node::Map { .. } => "a mapping".to_owned(),
        Node::Seq { items, .. } => format!("a list of {} items", items.len()),
        Node::Scalar {
            text, quoted: true, ..
        } => format!("string {}", quote_for_error(text)),
        Node::Scalar { text, .. } => {
            if resolve::is_null(text) {
                "no value (null)".to_owned()
            } else if let Some(b) = resolve::bool_value(text) {
                format!("bool {b}")
            } else if resolve::int_value(text).is_some() {
                format!("integer {text}")
            } else if resolve::float_value(text).is_some() {
                format!("number {text}")
            } else {
                format!("string {}", quote_for_error(text))
            }
        }
    }
}
