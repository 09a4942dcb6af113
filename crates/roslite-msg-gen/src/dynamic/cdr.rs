//! Plain CDR for a type known from its [`MessageSpec`]: the same layout the generated code
//! writes, decided field by field at run time.
//!
//! Decoding trusts nothing on the wire: sequence lengths go through
//! [`CdrReader::read_len`] with the smallest size one element can occupy, fixed arrays reserve
//! no more elements than bytes remain, and every element consumes at least one byte, so the
//! work and memory are bounded by the payload size whatever the type says.

use roslite_cdr::{CdrReader, CdrWriter, DecodeError, EncodeError, Endianness};

use super::{
    base_type_name, check_depth, field_names, is_byte_like, lookup, range_of, ros_type_name,
    DynError, Value,
};
use crate::ast::{
    BaseType, Collection, Field, FieldType, Literal, MessageSpec, Primitive, TypeName,
};
use crate::registry::InterfaceSet;

/// Decodes a payload (starting with its 4-byte encapsulation header, either byte order) as
/// the message type `ty`. Trailing bytes after the message (padding) are ignored.
///
/// # Errors
/// [`DynError::UnknownType`] if a definition is missing, [`DynError::Decode`] naming the field
/// where the payload stopped making sense. Never panics, whatever the bytes.
pub fn decode(set: &InterfaceSet, ty: &TypeName, payload: &[u8]) -> Result<Value, DynError> {
    let spec = lookup(set, ty)?;
    let mut reader = CdrReader::new(payload).map_err(decode_error)?;
    decode_struct(set, spec, &mut reader, 0)
}

/// Encodes `value` as the message type `ty` with an encapsulation header. Struct fields are
/// matched by name; fields the value leaves out are written with their default. Numbers are
/// accepted in any [`Value`] number variant that holds them exactly (an `Int` for a `float64`,
/// a `UInt` for an `int32`), and must fit the field's type. No trailing padding is written.
///
/// # Errors
/// [`DynError::TypeMismatch`], [`DynError::OutOfRange`], [`DynError::TooLong`],
/// [`DynError::WrongLength`], [`DynError::UnknownField`], [`DynError::Encode`] (a NUL inside a
/// string), each naming the field; [`DynError::UnknownType`].
pub fn encode(
    set: &InterfaceSet,
    ty: &TypeName,
    value: &Value,
    endianness: Endianness,
) -> Result<Vec<u8>, DynError> {
    let spec = lookup(set, ty)?;
    let mut writer = CdrWriter::new(endianness);
    encode_struct(set, spec, value, &mut writer, 0)?;
    Ok(writer.finish())
}

/// The value a freshly constructed message of type `ty` has: the `.msg` defaults, zeros,
/// empty strings and sequences, fixed arrays of default elements, nested defaults.
///
/// # Errors
/// [`DynError::UnknownType`]; [`DynError::TypeMismatch`] for a default that does not fit its
/// field (a parser bug).
pub fn default_value(set: &InterfaceSet, ty: &TypeName) -> Result<Value, DynError> {
    default_struct(set, lookup(set, ty)?, 0)
}

fn decode_error(source: DecodeError) -> DynError {
    DynError::Decode {
        field: String::new(),
        source,
    }
}

fn encode_error(source: EncodeError) -> DynError {
    DynError::Encode {
        field: String::new(),
        source,
    }
}

fn decode_struct(
    set: &InterfaceSet,
    spec: &MessageSpec,
    r: &mut CdrReader<'_>,
    depth: usize,
) -> Result<Value, DynError> {
    let depth = check_depth(depth, &spec.name)?;
    if spec.fields.is_empty() {
        r.read_empty_struct().map_err(decode_error)?;
        return Ok(Value::Struct(Vec::new()));
    }
    let mut fields = Vec::with_capacity(spec.fields.len());
    for field in &spec.fields {
        let value = decode_field(set, &field.ty, r, depth).map_err(|e| e.in_field(&field.name))?;
        fields.push((field.name.clone(), value));
    }
    Ok(Value::Struct(fields))
}

fn decode_field(
    set: &InterfaceSet,
    ty: &FieldType,
    r: &mut CdrReader<'_>,
    depth: usize,
) -> Result<Value, DynError> {
    let min = min_wire_size(&ty.base);
    let len = match ty.collection {
        Collection::Single => return decode_element(set, &ty.base, r, depth),
        Collection::Array(n) => n,
        Collection::BoundedSequence(bound) => {
            r.read_bounded_len(min, bound).map_err(decode_error)?
        }
        Collection::UnboundedSequence => r.read_len(min).map_err(decode_error)?,
    };
    if is_byte_like(&ty.base) {
        return Ok(Value::Bytes(
            r.read_bytes(len).map_err(decode_error)?.to_vec(),
        ));
    }
    // A fixed array's length comes from the type, not the wire, but the type may still claim
    // more than this payload can hold; reserve only what could be there.
    let mut items = Vec::with_capacity(len.min(r.remaining() / min));
    for index in 0..len {
        let item = decode_element(set, &ty.base, r, depth).map_err(|e| e.at_index(index))?;
        items.push(item);
    }
    Ok(Value::Array(items))
}

/// The fewest bytes one element can occupy after its sequence length, for
/// [`CdrReader::read_len`]: a string is at least a length and a NUL, a wide string at least a
/// length, a struct at least one byte (the dummy byte of an empty struct).
fn min_wire_size(base: &BaseType) -> usize {
    match base {
        BaseType::Primitive(p) => p.size(),
        BaseType::String { .. } => 5,
        BaseType::WString { .. } => 4,
        BaseType::Named(_) => 1,
    }
}

fn decode_element(
    set: &InterfaceSet,
    base: &BaseType,
    r: &mut CdrReader<'_>,
    depth: usize,
) -> Result<Value, DynError> {
    match base {
        BaseType::Primitive(p) => decode_primitive(*p, r).map_err(decode_error),
        BaseType::String { bound } => {
            let text = match bound {
                Some(bound) => r.read_bounded_string(*bound),
                None => r.read_string(),
            };
            Ok(Value::String(text.map_err(decode_error)?.to_owned()))
        }
        BaseType::WString { bound } => {
            let text = match bound {
                Some(bound) => r.read_bounded_wstring(*bound),
                None => r.read_wstring(),
            };
            Ok(Value::String(text.map_err(decode_error)?))
        }
        BaseType::Named(name) => decode_struct(set, lookup(set, name)?, r, depth),
    }
}

fn decode_primitive(p: Primitive, r: &mut CdrReader<'_>) -> Result<Value, DecodeError> {
    Ok(match p {
        Primitive::Bool => Value::Bool(r.read_bool()?),
        Primitive::Byte | Primitive::Char | Primitive::Uint8 => Value::UInt(r.read_u8()?.into()),
        Primitive::Int8 => Value::Int(r.read_i8()?.into()),
        Primitive::Int16 => Value::Int(r.read_i16()?.into()),
        Primitive::Uint16 => Value::UInt(r.read_u16()?.into()),
        Primitive::Int32 => Value::Int(r.read_i32()?.into()),
        Primitive::Uint32 => Value::UInt(r.read_u32()?.into()),
        Primitive::Int64 => Value::Int(r.read_i64()?),
        Primitive::Uint64 => Value::UInt(r.read_u64()?),
        Primitive::Float32 => Value::Float(r.read_f32()?.into()),
        Primitive::Float64 => Value::Float(r.read_f64()?),
    })
}

fn encode_struct(
    set: &InterfaceSet,
    spec: &MessageSpec,
    value: &Value,
    w: &mut CdrWriter,
    depth: usize,
) -> Result<(), DynError> {
    let depth = check_depth(depth, &spec.name)?;
    let Value::Struct(given) = value else {
        return Err(mismatch(spec.name.to_string(), value));
    };
    // Refuse misspelt fields before writing anything: silently dropping `liner` would publish
    // a zero velocity.
    if let Some((name, _)) = given
        .iter()
        .find(|(n, _)| !spec.fields.iter().any(|f| f.name == *n))
    {
        return Err(DynError::UnknownField {
            field: name.clone(),
            type_name: spec.name.clone(),
            known: field_names(spec),
        });
    }
    if spec.fields.is_empty() {
        w.write_empty_struct();
        return Ok(());
    }
    for (index, field) in spec.fields.iter().enumerate() {
        // Values from `decode`/`from_yaml` have the fields in order; look elsewhere only if not.
        let found = match given.get(index) {
            Some((name, v)) if *name == field.name => Some(v),
            _ => given
                .iter()
                .find(|(name, _)| *name == field.name)
                .map(|(_, v)| v),
        };
        let result = match found {
            Some(v) => encode_field(set, &field.ty, v, w, depth),
            None => default_field(set, field, depth)
                .and_then(|v| encode_field(set, &field.ty, &v, w, depth)),
        };
        result.map_err(|e| e.in_field(&field.name))?;
    }
    Ok(())
}

fn encode_field(
    set: &InterfaceSet,
    ty: &FieldType,
    value: &Value,
    w: &mut CdrWriter,
    depth: usize,
) -> Result<(), DynError> {
    if ty.collection == Collection::Single {
        return encode_element(set, &ty.base, value, w, depth);
    }
    let len = match value {
        Value::Array(items) => items.len(),
        Value::Bytes(bytes) if is_byte_like(&ty.base) => bytes.len(),
        other => return Err(mismatch(ros_type_name(ty), other)),
    };
    match ty.collection {
        Collection::Single => {}
        Collection::Array(n) => {
            if len != n {
                return Err(DynError::WrongLength {
                    field: String::new(),
                    expected: ros_type_name(ty),
                    len,
                });
            }
        }
        Collection::BoundedSequence(bound) => {
            check_bound(ty, len, bound)?;
            w.write_len(len).map_err(encode_error)?;
        }
        Collection::UnboundedSequence => w.write_len(len).map_err(encode_error)?,
    }
    match value {
        Value::Bytes(bytes) => w.write_bytes(bytes),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                encode_element(set, &ty.base, item, w, depth).map_err(|e| e.at_index(index))?;
            }
        }
        _ => unreachable!("internal bug: collection kinds were checked above"),
    }
    Ok(())
}

fn check_bound(ty: &FieldType, len: usize, bound: usize) -> Result<(), DynError> {
    if len > bound {
        return Err(DynError::TooLong {
            field: String::new(),
            expected: ros_type_name(ty),
            len,
            bound,
        });
    }
    Ok(())
}

fn encode_element(
    set: &InterfaceSet,
    base: &BaseType,
    value: &Value,
    w: &mut CdrWriter,
    depth: usize,
) -> Result<(), DynError> {
    match base {
        BaseType::Primitive(p) => encode_primitive(*p, value, w),
        BaseType::String { bound } => {
            let Value::String(text) = value else {
                return Err(mismatch(base_type_name(base), value));
            };
            check_string_bound(base, text, *bound)?;
            w.write_string(text).map_err(encode_error)
        }
        BaseType::WString { bound } => {
            let Value::String(text) = value else {
                return Err(mismatch(base_type_name(base), value));
            };
            check_string_bound(base, text, *bound)?;
            w.write_wstring(text).map_err(encode_error)
        }
        BaseType::Named(name) => encode_struct(set, lookup(set, name)?, value, w, depth),
    }
}

/// A bound on text to send is counted the strict way, as rclcpp counts it: bytes of UTF-8 for
/// a `string` (not including the NUL), UTF-16 code units for a `wstring`. rclpy counts
/// characters, and receivers here do too (`CdrReader::read_bounded_string`), but a message
/// sent within the byte count is read by every ROS 2 client library.
pub(super) fn check_string_bound(
    base: &BaseType,
    text: &str,
    bound: Option<usize>,
) -> Result<(), DynError> {
    let Some(bound) = bound else {
        return Ok(());
    };
    let len = match base {
        BaseType::WString { .. } => text.encode_utf16().count(),
        _ => text.len(),
    };
    if len <= bound {
        return Ok(());
    }
    Err(DynError::StringTooLong {
        field: String::new(),
        expected: base_type_name(base),
        len,
        chars: text.chars().count(),
        bound,
    })
}

fn encode_primitive(p: Primitive, value: &Value, w: &mut CdrWriter) -> Result<(), DynError> {
    let wrong = || mismatch(p.keyword().to_owned(), value);
    match p {
        Primitive::Bool => match value {
            Value::Bool(b) => w.write_bool(*b),
            _ => return Err(wrong()),
        },
        Primitive::Float32 | Primitive::Float64 => {
            let x = match *value {
                Value::Float(x) => x,
                Value::Int(i) => i as f64,
                Value::UInt(u) => u as f64,
                _ => return Err(wrong()),
            };
            match float_value(p, x)? {
                Value::Float(x) if p == Primitive::Float32 => w.write_f32(x as f32),
                Value::Float(x) => w.write_f64(x),
                _ => unreachable!("internal bug: float_value returns floats"),
            }
        }
        _ => {
            let i = match *value {
                Value::Int(i) => i128::from(i),
                Value::UInt(u) => i128::from(u),
                _ => return Err(wrong()),
            };
            // The range check in `int_value` makes every cast below exact.
            let _ = int_value(p, i)?;
            match p {
                Primitive::Byte | Primitive::Char | Primitive::Uint8 => w.write_u8(i as u8),
                Primitive::Int8 => w.write_i8(i as i8),
                Primitive::Int16 => w.write_i16(i as i16),
                Primitive::Uint16 => w.write_u16(i as u16),
                Primitive::Int32 => w.write_i32(i as i32),
                Primitive::Uint32 => w.write_u32(i as u32),
                Primitive::Int64 => w.write_i64(i as i64),
                Primitive::Uint64 => w.write_u64(i as u64),
                Primitive::Bool | Primitive::Float32 | Primitive::Float64 => {
                    unreachable!("internal bug: handled above")
                }
            }
        }
    }
    Ok(())
}

/// The canonical value of integer `i` for the integer type `p`, if it is in range.
pub(super) fn int_value(p: Primitive, i: i128) -> Result<Value, DynError> {
    let out_of_range = || DynError::OutOfRange {
        field: String::new(),
        expected: p.keyword().to_owned(),
        found: i.to_string(),
    };
    let (min, max) = range_of(p.keyword()).ok_or_else(out_of_range)?;
    if i < min || i > max {
        return Err(out_of_range());
    }
    Ok(match p {
        Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
            Value::Int(i as i64)
        }
        _ => Value::UInt(i as u64),
    })
}

/// The value of `x` written (typed, or a definition's default) for a float type. A `float32`
/// keeps the number as written, as rclpy keeps the Python float in a `float32` field until it
/// sends the message (so `repr` shows `0.123456789`); encoding rounds it to `f32`. Finite
/// values beyond `f32` range are refused, as rclpy does, rather than silently becoming
/// infinities.
pub(super) fn float_value(p: Primitive, x: f64) -> Result<Value, DynError> {
    if p == Primitive::Float32 && x.is_finite() && x.abs() > f64::from(f32::MAX) {
        return Err(DynError::OutOfRange {
            field: String::new(),
            expected: p.keyword().to_owned(),
            found: x.to_string(),
        });
    }
    Ok(Value::Float(x))
}

pub(super) fn mismatch(expected: String, found: &Value) -> DynError {
    DynError::TypeMismatch {
        field: String::new(),
        expected,
        found: found.describe(),
    }
}

pub(super) fn default_struct(
    set: &InterfaceSet,
    spec: &MessageSpec,
    depth: usize,
) -> Result<Value, DynError> {
    let depth = check_depth(depth, &spec.name)?;
    let mut fields = Vec::with_capacity(spec.fields.len());
    for field in &spec.fields {
        fields.push((field.name.clone(), default_field(set, field, depth)?));
    }
    Ok(Value::Struct(fields))
}

pub(super) fn default_field(
    set: &InterfaceSet,
    field: &Field,
    depth: usize,
) -> Result<Value, DynError> {
    match &field.default {
        Some(literal) => literal_value(&field.ty, literal),
        None => zero_value(set, &field.ty, depth),
    }
    .map_err(|e| e.in_field(&field.name))
}

fn zero_value(set: &InterfaceSet, ty: &FieldType, depth: usize) -> Result<Value, DynError> {
    Ok(match ty.collection {
        Collection::Single => zero_element(set, &ty.base, depth)?,
        Collection::Array(n) if is_byte_like(&ty.base) => Value::Bytes(vec![0; n]),
        Collection::Array(n) => Value::Array(vec![zero_element(set, &ty.base, depth)?; n]),
        _ if is_byte_like(&ty.base) => Value::Bytes(Vec::new()),
        _ => Value::Array(Vec::new()),
    })
}

fn zero_element(set: &InterfaceSet, base: &BaseType, depth: usize) -> Result<Value, DynError> {
    Ok(match base {
        BaseType::Primitive(Primitive::Bool) => Value::Bool(false),
        BaseType::Primitive(Primitive::Float32 | Primitive::Float64) => Value::Float(0.0),
        BaseType::Primitive(p) => int_value(*p, 0)?,
        BaseType::String { .. } | BaseType::WString { .. } => Value::String(String::new()),
        BaseType::Named(name) => default_struct(set, lookup(set, name)?, depth)?,
    })
}

fn literal_value(ty: &FieldType, literal: &Literal) -> Result<Value, DynError> {
    match (ty.collection, literal) {
        (Collection::Single, literal) => literal_element(&ty.base, literal),
        (_, Literal::Array(items)) => {
            let values = items
                .iter()
                .enumerate()
                .map(|(i, item)| literal_element(&ty.base, item).map_err(|e| e.at_index(i)))
                .collect::<Result<Vec<_>, _>>()?;
            if is_byte_like(&ty.base) {
                let bytes = values.iter().map(|v| match v {
                    Value::UInt(u) => *u as u8,
                    _ => unreachable!("internal bug: byte-like literals are UInt"),
                });
                return Ok(Value::Bytes(bytes.collect()));
            }
            Ok(Value::Array(values))
        }
        (_, other) => Err(DynError::TypeMismatch {
            field: String::new(),
            expected: ros_type_name(ty),
            found: format!("the default {other:?}"),
        }),
    }
}

fn literal_element(base: &BaseType, literal: &Literal) -> Result<Value, DynError> {
    match (base, literal) {
        (BaseType::Primitive(Primitive::Bool), Literal::Bool(b)) => Ok(Value::Bool(*b)),
        (BaseType::Primitive(p @ (Primitive::Float32 | Primitive::Float64)), literal) => {
            match literal {
                Literal::Float(x) => float_value(*p, *x),
                Literal::Int(i) => float_value(*p, *i as f64),
                _ => Err(bad_default(base, literal)),
            }
        }
        (BaseType::Primitive(p), Literal::Int(i)) if *p != Primitive::Bool => int_value(*p, *i),
        (BaseType::Primitive(p @ (Primitive::Byte | Primitive::Char)), Literal::String(s)) => {
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => int_value(*p, i128::from(u32::from(c))),
                _ => Err(bad_default(base, literal)),
            }
        }
        (BaseType::String { .. } | BaseType::WString { .. }, Literal::String(s)) => {
            Ok(Value::String(s.clone()))
        }
        _ => Err(bad_default(base, literal)),
    }
}

fn bad_default(base: &BaseType, literal: &Literal) -> DynError {
    DynError::TypeMismatch {
        field: String::new(),
        expected: base_type_name(base),
        found: format!("the default {literal:?}"),
    }
}
