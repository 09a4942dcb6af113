//! Messages and fields printed the way Python prints rclpy messages, for the lines where
//! `ros2 topic pub` shows `repr(msg)` (`publishing #1: std_msgs.msg.String(data='hi')`) and
//! `ros2 topic echo --field` shows `str(value)` of a field that is not a message.
//!
//! The generated `__repr__` (rosidl_generator_py `_msg.py.em`) prints
//! `pkg.msg.Name(field=repr(value), ...)` and strips `array('d', ...)` from sequences of
//! numbers, leaving `[1.0, 2.0]`. Fixed-size numeric arrays are numpy arrays there, whose
//! padding rules we do not copy: they print as `array([1.0, 2.0])` here.

use roslite_msg_gen::ast::{BaseType, Collection, FieldType, Primitive, TypeName};
use roslite_msg_gen::dynamic::Value;
use roslite_msg_gen::registry::InterfaceSet;

/// `repr(msg)` of a message of type `ty`.
pub(crate) fn message_repr(set: &InterfaceSet, ty: &TypeName, value: &Value) -> String {
    let mut out = String::new();
    struct_repr(set, ty, value, &mut out);
    out
}

/// `str(value)` of a field of type `ty`, as `print` shows it (strings without quotes).
pub(crate) fn field_str(set: &InterfaceSet, ty: &FieldType, value: &Value) -> String {
    match (&ty.base, ty.collection, value) {
        (
            BaseType::String { .. } | BaseType::WString { .. },
            Collection::Single,
            Value::String(s),
        ) => s.clone(),
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
                    element_repr(set, &ty.base, v, out)
                });
                out.push_str("])");
                out
            }
        }
        _ => {
            let mut out = String::new();
            field_repr(set, ty, value, &mut out);
            out
        }
    }
}

fn struct_repr(set: &InterfaceSet, ty: &TypeName, value: &Value, out: &mut String) {
    out.push_str(&format!("{}.{}.{}(", ty.package, ty.kind.as_str(), ty.name));
    match set.message(ty) {
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
                    Some(v) => field_repr(set, &field.ty, v, out),
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

/// The `array.array` type code rclpy stores a sequence of `p` in, if any.
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

/// Elements of an array value, with packed bytes unpacked.
fn elements(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.clone(),
        Value::Bytes(bytes) => bytes.iter().map(|b| Value::UInt(u64::from(*b))).collect(),
        other => vec![other.clone()],
    }
}

fn field_repr(set: &InterfaceSet, ty: &FieldType, value: &Value, out: &mut String) {
    match ty.collection {
        Collection::Single => element_repr(set, &ty.base, value, out),
        collection => {
            let items = elements(value);
            let numpy = collection_is_numpy(&ty.base, collection);
            if numpy {
                out.push_str("array(");
            }
            out.push('[');
            join(out, &items, |out, v| element_repr(set, &ty.base, v, out));
            out.push(']');
            if numpy {
                out.push(')');
            }
        }
    }
}

/// Fixed-size arrays of numbers are numpy arrays in rclpy.
fn collection_is_numpy(base: &BaseType, collection: Collection) -> bool {
    matches!(
        (base, collection),
        (BaseType::Primitive(p), Collection::Array(_)) if typecode(*p).is_some()
    )
}

fn element_repr(set: &InterfaceSet, base: &BaseType, value: &Value, out: &mut String) {
    match (base, value) {
        (BaseType::Named(ty), v) => struct_repr(set, ty, v, out),
        (BaseType::Primitive(Primitive::Byte), Value::UInt(b)) => {
            out.push_str(&bytes_repr(&[u8::try_from(*b).unwrap_or(u8::MAX)]));
        }
        (BaseType::Primitive(Primitive::Char), Value::UInt(c)) => {
            let c = u32::try_from(*c)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}');
            out.push_str(&str_repr(&c.to_string()));
        }
        (_, v) => plain_repr(v, out),
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

/// Python's `repr(float)`: the shortest digits that round-trip, positional for exponents from
/// -4 to 15, else scientific with a signed two-digit exponent (`1e-05`, `1.5e+16`).
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` also prints the shortest round-trip digits: "-1.2345e-5".
    let sci = format!("{x:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        if point <= 0 {
            let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
            format!("{sign}0.{zeros}{digits}")
        } else {
            let point = usize::try_from(point).unwrap_or(0);
            if digits.len() <= point {
                let zeros = "0".repeat(point - digits.len());
                format!("{sign}{digits}{zeros}.0")
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            }
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs())
    }
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; backslash escapes
/// for the quote, backslash and control characters.
pub(crate) fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if u32::from(c) < 0x20 || (0x7f..0xa0).contains(&u32::from(c)) => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `repr(bytes)`: `b'A'`, `b'\x00'`.
fn bytes_repr(bytes: &[u8]) -> String {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut out = format!("b{quote}");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b if char::from(b) == quote => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(b)),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote);
    out
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

    #[test]
    fn strings_print_like_python() {
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
            message_repr(&set, &ty, &value),
            "geometry_msgs.msg.Twist(linear=geometry_msgs.msg.Vector3(x=2.0, y=0.0, z=0.0), \
             angular=geometry_msgs.msg.Vector3(x=0.0, y=0.0, z=1.8))"
        );
        let ty = TypeName::parse("std_msgs/msg/String").unwrap();
        let value = roslite_msg_gen::dynamic::from_yaml(&set, &ty, "data: it's").unwrap();
        assert_eq!(
            message_repr(&set, &ty, &value),
            "std_msgs.msg.String(data=\"it's\")"
        );
        let ty = TypeName::parse("std_msgs/msg/Float64MultiArray").unwrap();
        let value = roslite_msg_gen::dynamic::from_yaml(&set, &ty, "data: [1, 2.5]").unwrap();
        let text = message_repr(&set, &ty, &value);
        assert!(text.ends_with("data_offset=0), data=[1.0, 2.5])"), "{text}");
        let data_ty = roslite_msg_gen::dynamic::field_type(&set, &ty, "data").unwrap();
        let data = roslite_msg_gen::dynamic::field(&value, "data").unwrap();
        assert_eq!(field_str(&set, &data_ty, data), "array('d', [1.0, 2.5])");
    }
}
