//! Messages and fields printed the way Python prints rclpy messages, for the lines where
//! `ros2 topic pub` shows `repr(msg)` (`publishing #1: std_msgs.msg.String(data='hi')`), `ros2
//! service call` shows the request and response, and `ros2 topic echo --field` shows
//! `str(value)` of a field that is not a message.
//!
//! The generated `__repr__` (rosidl_generator_py `_msg.py.em`) prints
//! `pkg.msg.Name(field=repr(value), ...)`, each value as rclpy holds it:
//!
//! | field | Python value | printed |
//! | --- | --- | --- |
//! | `bool`, integers, `char` | `bool`, `int` | `True`, `-5`, `char_value=255` |
//! | `byte` | `bytes` of one | `b'\xff'` |
//! | `float32`, `float64` | `float` | `0.1` (a `float32` as typed, or widened when received) |
//! | `string`, `wstring` | `str` | `'Hellö'`, escaped as Python escapes |
//! | fixed arrays of numbers and `char` | numpy array | `array([0, 0, 0], dtype=int32)` |
//! | sequences of numbers (not `char`) | `array.array` | `[1.0, 2.0]`, the `array('d', ...)` stripped |
//! | other arrays and sequences | `list` | `[b'\x00']`, `[0, 65]`, `['a']`, `[pkg.msg.T(...)]` |

mod numpy;

use roslite_msg_gen::ast::{BaseType, Collection, FieldType, Primitive, TypeName};
use roslite_msg_gen::dynamic::Value;
use roslite_msg_gen::registry::InterfaceSet;

use numpy::Numbers;
pub(crate) use roslite_msg_gen::python::{bytes_repr, float_repr, str_repr};

/// Where a message's values come from, which decides how a `float32` prints: rclpy keeps the
/// Python float a user typed into a `float32` field (`0.1`), but a received one is the
/// `float32` widened (`0.10000000149011612`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Read from the user's YAML (`topic pub`, `service call`'s request). A `float32` field
    /// holds the number as typed (the dynamic codec rounds it only when encoding) and prints
    /// as Python prints that float, digits beyond what a `float32` keeps included; elements
    /// of `float32` arrays and sequences are stored as `float32` by numpy and `array.array`.
    Typed,
    /// Decoded from the wire (`service call`'s response, `topic echo`).
    Received,
}

/// `repr(msg)` of a message of type `ty`.
pub(crate) fn message_repr(
    set: &InterfaceSet,
    ty: &TypeName,
    value: &Value,
    origin: Origin,
) -> String {
    let mut out = String::new();
    Printer { set, origin }.struct_repr(ty, value, &mut out);
    out
}

/// `str(value)` of a received field of type `ty`, as `print` shows it (strings without quotes,
/// sequences of numbers with their `array.array` type code, numpy arrays as numpy's `str`).
pub(crate) fn field_str(set: &InterfaceSet, ty: &FieldType, value: &Value) -> String {
    let printer = Printer {
        set,
        origin: Origin::Received,
    };
    match (&ty.base, ty.collection, value) {
        (
            BaseType::String { .. } | BaseType::WString { .. },
            Collection::Single,
            Value::String(s),
        ) => s.clone(),
        (BaseType::Primitive(p), Collection::Array(_), _) if numpy_dtype(*p).is_some() => {
            numpy::array_str(&numbers(*p, value))
        }
        (
            BaseType::Primitive(p),
            Collection::BoundedSequence(_) | Collection::UnboundedSequence,
            _,
        ) if typecode(*p).is_some() => {
            // A Python `array.array` prints its type code: array('d', [1.0, 2.0]).
            let code = typecode(*p).unwrap_or('d');
            let items = elements(value);
            if items.is_empty() {
                format!("array('{code}')")
            } else {
                let mut out = format!("array('{code}', [");
                join(&mut out, &items, |out, v| {
                    printer.sequence_element(*p, v, out)
                });
                out.push_str("])");
                out
            }
        }
        _ => {
            let mut out = String::new();
            printer.field_repr(ty, value, &mut out);
            out
        }
    }
}

struct Printer<'a> {
    set: &'a InterfaceSet,
    origin: Origin,
}

impl Printer<'_> {
    fn struct_repr(&self, ty: &TypeName, value: &Value, out: &mut String) {
        out.push_str(&format!("{}.{}.{}(", ty.package, ty.kind.as_str(), ty.name));
        match self.set.message(ty) {
            Some(spec) => {
                let mut first = true;
                for field in &spec.fields {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    out.push_str(&field.name);
                    out.push('=');
                    match value.get(&field.name) {
                        Some(v) => self.field_repr(&field.ty, v, out),
                        None => out.push_str("None"),
                    }
                }
            }
            None => {
                // No definition: print what the value holds.
                if let Value::Struct(fields) = value {
                    let mut first = true;
                    for (name, v) in fields {
                        if !first {
                            out.push_str(", ");
                        }
                        first = false;
                        out.push_str(name);
                        out.push('=');
                        plain_repr(v, out);
                    }
                }
            }
        }
        out.push(')');
    }

    fn field_repr(&self, ty: &FieldType, value: &Value, out: &mut String) {
        match (&ty.base, ty.collection) {
            (base, Collection::Single) => self.element_repr(base, value, out),
            (BaseType::Primitive(p), Collection::Array(_)) if numpy_dtype(*p).is_some() => {
                out.push_str(&numpy::array_repr(&numbers(*p, value)));
            }
            (BaseType::Primitive(p), _) if typecode(*p).is_some() => {
                // An `array.array`, printed without its `array('d', ...)`.
                out.push('[');
                join(out, &elements(value), |out, v| {
                    self.sequence_element(*p, v, out)
                });
                out.push(']');
            }
            (base, _) => {
                out.push('[');
                join(out, &elements(value), |out, v| {
                    self.element_repr(base, v, out)
                });
                out.push(']');
            }
        }
    }

    /// One element of an `array.array`: a `float32` is the Python float of the `float32`.
    fn sequence_element(&self, p: Primitive, value: &Value, out: &mut String) {
        match (p, value) {
            (Primitive::Float32, Value::Float(x)) => {
                out.push_str(&float_repr(f64::from(*x as f32)))
            }
            (_, v) => plain_repr(v, out),
        }
    }

    fn element_repr(&self, base: &BaseType, value: &Value, out: &mut String) {
        match (base, value) {
            (BaseType::Named(ty), v) => self.struct_repr(ty, v, out),
            (BaseType::Primitive(Primitive::Byte), Value::UInt(b)) => {
                out.push_str(&bytes_repr(&[u8::try_from(*b).unwrap_or(u8::MAX)]));
            }
            (BaseType::Primitive(Primitive::Float32), Value::Float(x)) => {
                out.push_str(&match self.origin {
                    Origin::Typed => float_repr(*x),
                    Origin::Received => float_repr(f64::from(*x as f32)),
                });
            }
            (_, v) => plain_repr(v, out),
        }
    }
}

/// The `array.array` type code rclpy stores a sequence of `p` in, if any (`char` sequences
/// are lists).
fn typecode(p: Primitive) -> Option<char> {
    Some(match p {
        Primitive::Float32 => 'f',
        Primitive::Float64 => 'd',
        Primitive::Int8 => 'b',
        Primitive::Uint8 => 'B',
        Primitive::Int16 => 'h',
        Primitive::Uint16 => 'H',
        Primitive::Int32 => 'i',
        Primitive::Uint32 => 'I',
        Primitive::Int64 => 'q',
        Primitive::Uint64 => 'Q',
        Primitive::Bool | Primitive::Byte | Primitive::Char => return None,
    })
}

/// The numpy dtype rclpy stores a fixed-size array of `p` in, if any (`bool` and `byte`
/// arrays are lists).
fn numpy_dtype(p: Primitive) -> Option<&'static str> {
    Some(match p {
        Primitive::Float32 => "float32",
        Primitive::Float64 => "float64",
        Primitive::Int8 => "int8",
        Primitive::Uint8 | Primitive::Char => "uint8",
        Primitive::Int16 => "int16",
        Primitive::Uint16 => "uint16",
        Primitive::Int32 => "int32",
        Primitive::Uint32 => "uint32",
        Primitive::Int64 => "int64",
        Primitive::Uint64 => "uint64",
        Primitive::Bool | Primitive::Byte => return None,
    })
}

/// The numbers of a fixed-size array of `p` (one with a numpy dtype), as numpy holds them.
fn numbers(p: Primitive, value: &Value) -> Numbers {
    let items = elements(value);
    match p {
        Primitive::Float32 => Numbers::Float32(items.iter().map(|v| number(v) as f32).collect()),
        Primitive::Float64 => Numbers::Float64(items.iter().map(number).collect()),
        _ => Numbers::Int(
            items
                .iter()
                .map(|v| match v {
                    Value::Int(i) => i128::from(*i),
                    Value::UInt(u) => i128::from(*u),
                    _ => 0,
                })
                .collect(),
            numpy_dtype(p).unwrap_or("int64"),
        ),
    }
}

fn number(value: &Value) -> f64 {
    match value {
        Value::Float(x) => *x,
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        _ => f64::NAN,
    }
}

/// Elements of an array value, with packed bytes unpacked.
fn elements(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.clone(),
        Value::Bytes(bytes) => bytes.iter().map(|b| Value::UInt(u64::from(*b))).collect(),
        other => vec![other.clone()],
    }
}

/// `repr` of a value without its type at hand.
fn plain_repr(value: &Value, out: &mut String) {
    match value {
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::UInt(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::String(s) => out.push_str(&str_repr(s)),
        Value::Bytes(bytes) => {
            out.push('[');
            join(out, bytes, |out, b| out.push_str(&b.to_string()));
            out.push(']');
        }
        Value::Array(items) => {
            out.push('[');
            join(out, items, |out, v| plain_repr(v, out));
            out.push(']');
        }
        Value::Struct(fields) => {
            out.push('{');
            join(out, fields, |out, (name, v)| {
                out.push_str(&str_repr(name));
                out.push_str(": ");
                plain_repr(v, out);
            });
            out.push('}');
        }
    }
}

fn join<T>(out: &mut String, items: &[T], mut each: impl FnMut(&mut String, &T)) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(out, item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_python() {
        for (x, text) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.0, "123456789012345.0"),
            (f64::from(0.1f32), "0.10000000149011612"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(float_repr(x), text, "{x}");
        }
    }

    /// rclpy keeps the Python float typed into a `float32` field, so its `repr` shows every
    /// digit typed, also more than a `float32` keeps (echo output fed back into `topic pub`);
    /// a `float32` sequence is an `array('f')`, which stores the rounded value.
    #[test]
    fn float32_values_typed_print_as_typed() {
        let set = set();
        let ty = TypeName::parse("std_msgs/msg/Float32").unwrap();
        for typed in [
            "0.1",
            "0.123456789",
            "0.10000000149011612",
            "1.401298464324817e-45",
            "3.4e+38",
            "1e+16",
            "123456.7",
            "-0.0",
            "inf",
        ] {
            let text = if typed == "inf" { ".inf" } else { typed };
            let value =
                roslite_msg_gen::dynamic::from_yaml(&set, &ty, &format!("data: {text}")).unwrap();
            assert_eq!(
                message_repr(&set, &ty, &value, Origin::Typed),
                format!("std_msgs.msg.Float32(data={typed})")
            );
        }
        let value = roslite_msg_gen::dynamic::from_yaml(&set, &ty, "data: 0.123456789").unwrap();
        assert_eq!(
            message_repr(&set, &ty, &value, Origin::Received),
            "std_msgs.msg.Float32(data=0.12345679104328156)"
        );
        let ty = TypeName::parse("std_msgs/msg/Float32MultiArray").unwrap();
        let value =
            roslite_msg_gen::dynamic::from_yaml(&set, &ty, "data: [0.123456789, 0.1]").unwrap();
        let text = message_repr(&set, &ty, &value, Origin::Typed);
        assert!(
            text.ends_with("data=[0.12345679104328156, 0.10000000149011612])"),
            "{text}"
        );
    }

    #[test]
    fn strings_print_like_python() {
        // Python escapes what `str.isprintable()` rejects, by code point size.
        assert_eq!(
            str_repr("a\u{a0}\u{200b}😀\u{e0001}\u{7f}\u{3000}é\u{2028}"),
            "'a\\xa0\\u200b😀\\U000e0001\\x7f\\u3000é\\u2028'"
        );
        assert_eq!(str_repr("hello"), "'hello'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(str_repr("tab\there\n"), "'tab\\there\\n'");
        assert_eq!(str_repr("\u{1}"), "'\\x01'");
        assert_eq!(bytes_repr(b"A"), "b'A'");
        assert_eq!(bytes_repr(&[0]), "b'\\x00'");
    }

    fn set() -> InterfaceSet {
        crate::interface::load_interfaces().unwrap()
    }

    #[test]
    fn messages_print_like_rclpy() {
        let set = set();
        let ty = TypeName::parse("geometry_msgs/msg/Twist").unwrap();
        let value =
            roslite_msg_gen::dynamic::from_yaml(&set, &ty, "{linear: {x: 2.0}, angular: {z: 1.8}}")
                .unwrap();
        assert_eq!(
            message_repr(&set, &ty, &value, Origin::Typed),
            "geometry_msgs.msg.Twist(linear=geometry_msgs.msg.Vector3(x=2.0, y=0.0, z=0.0), \
             angular=geometry_msgs.msg.Vector3(x=0.0, y=0.0, z=1.8))"
        );
        let ty = TypeName::parse("std_msgs/msg/String").unwrap();
        let value = roslite_msg_gen::dynamic::from_yaml(&set, &ty, "data: it's").unwrap();
        assert_eq!(
            message_repr(&set, &ty, &value, Origin::Typed),
            "std_msgs.msg.String(data=\"it's\")"
        );
        let ty = TypeName::parse("std_msgs/msg/Float64MultiArray").unwrap();
        let value = roslite_msg_gen::dynamic::from_yaml(&set, &ty, "data: [1, 2.5]").unwrap();
        let text = message_repr(&set, &ty, &value, Origin::Typed);
        assert!(text.ends_with("data_offset=0), data=[1.0, 2.5])"), "{text}");
        let data_ty = roslite_msg_gen::dynamic::field_type(&set, &ty, "data").unwrap();
        let data = roslite_msg_gen::dynamic::field(&value, "data").unwrap();
        assert_eq!(field_str(&set, &data_ty, data), "array('d', [1.0, 2.5])");
    }
}
