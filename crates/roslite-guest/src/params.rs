//! Parameter values as `roslite` has them, and their `roslite_parameter_value` form in both
//! directions.

use std::ffi::{c_char, CString};

use crate::error::{c_string, read_c_str, Error};
use crate::exports;
use crate::sys::RawParameterValue;

/// A parameter value; the variant is its type (`rcl_interfaces/msg/ParameterType`).
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
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(value) => Some(*value),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Integer(value) => Some(*value),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Double(value) => Some(*value),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::ByteArray(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_bool_array(&self) -> Option<&[bool]> {
        match self {
            Self::BoolArray(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_i64_array(&self) -> Option<&[i64]> {
        match self {
            Self::IntegerArray(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_f64_array(&self) -> Option<&[f64]> {
        match self {
            Self::DoubleArray(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_string_array(&self) -> Option<&[String]> {
        match self {
            Self::StringArray(value) => Some(value),
            _ => None,
        }
    }
}

macro_rules! value_from {
    ($($source:ty => |$v:ident| $value:expr;)*) => {$(
        impl From<$source> for ParameterValue {
            fn from($v: $source) -> Self {
                $value
            }
        }
    )*};
}

value_from! {
    bool => |v| Self::Bool(v);
    i64 => |v| Self::Integer(v);
    i32 => |v| Self::Integer(v.into());
    f64 => |v| Self::Double(v);
    &str => |v| Self::String(v.to_owned());
    String => |v| Self::String(v);
    Vec<u8> => |v| Self::ByteArray(v);
    Vec<bool> => |v| Self::BoolArray(v);
    Vec<i64> => |v| Self::IntegerArray(v);
    Vec<f64> => |v| Self::DoubleArray(v);
    Vec<String> => |v| Self::StringArray(v);
    Vec<&str> => |v| Self::StringArray(v.into_iter().map(str::to_owned).collect());
}

/// A named parameter value.
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
}

/// Whether a set was applied, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
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

    pub fn rejected(reason: impl Into<String>) -> Self {
        Self {
            successful: false,
            reason: reason.into(),
        }
    }
}

/// A value in its C form with the memory its pointers point into, alive as long as it is.
pub(crate) struct RawValueWithStorage {
    pub raw: RawParameterValue,
    _text: Option<CString>,
    _texts: Vec<CString>,
    _text_pointers: Vec<*const c_char>,
    _bytes: Vec<u8>,
    _integers: Vec<i64>,
    _doubles: Vec<f64>,
}

impl RawValueWithStorage {
    pub(crate) fn new(value: &ParameterValue) -> Result<Self, Error> {
        let mut stored = Self {
            raw: RawParameterValue::default(),
            _text: None,
            _texts: Vec::new(),
            _text_pointers: Vec::new(),
            _bytes: Vec::new(),
            _integers: Vec::new(),
            _doubles: Vec::new(),
        };
        let raw = &mut stored.raw;
        match value {
            ParameterValue::NotSet => raw.kind = 0,
            ParameterValue::Bool(value) => {
                raw.kind = 1;
                raw.bool_value = *value;
            }
            ParameterValue::Integer(value) => {
                raw.kind = 2;
                raw.integer_value = *value;
            }
            ParameterValue::Double(value) => {
                raw.kind = 3;
                raw.double_value = *value;
            }
            ParameterValue::String(text) => {
                raw.kind = 4;
                let text = c_string(text, "parameter string")?;
                raw.string_value = text.as_ptr();
                stored._text = Some(text);
            }
            ParameterValue::ByteArray(bytes) => {
                raw.kind = 5;
                stored._bytes = bytes.clone();
                raw.array_values = stored._bytes.as_ptr();
                raw.array_length = stored._bytes.len();
            }
            // A C bool array has one byte per element, 0 or 1.
            ParameterValue::BoolArray(bools) => {
                raw.kind = 6;
                stored._bytes = bools.iter().map(|b| u8::from(*b)).collect();
                raw.array_values = stored._bytes.as_ptr();
                raw.array_length = stored._bytes.len();
            }
            ParameterValue::IntegerArray(integers) => {
                raw.kind = 7;
                stored._integers = integers.clone();
                raw.array_values = stored._integers.as_ptr().cast();
                raw.array_length = stored._integers.len();
            }
            ParameterValue::DoubleArray(doubles) => {
                raw.kind = 8;
                stored._doubles = doubles.clone();
                raw.array_values = stored._doubles.as_ptr().cast();
                raw.array_length = stored._doubles.len();
            }
            ParameterValue::StringArray(texts) => {
                raw.kind = 9;
                stored._texts = texts
                    .iter()
                    .map(|text| c_string(text, "parameter string"))
                    .collect::<Result<_, _>>()?;
                stored._text_pointers = stored._texts.iter().map(|t| t.as_ptr()).collect();
                raw.array_values = stored._text_pointers.as_ptr().cast();
                raw.array_length = stored._text_pointers.len();
            }
        }
        Ok(stored)
    }
}

/// Who frees the memory a C value points into once it has been read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// The host allocated it with `roslite_guest_alloc` for us (declare, get): we free it.
    GuestFrees,
    /// The host frees it after the call (values passed to an on-set callback).
    HostFrees,
}

/// Reads a C value the host wrote.
///
/// # Safety
/// `raw`'s pointers are null or point at what its `kind` and `array_length` say; with
/// [`Ownership::GuestFrees`] each came from `roslite_guest_alloc` and is not used again.
pub(crate) unsafe fn read_raw_value(
    raw: &RawParameterValue,
    ownership: Ownership,
) -> ParameterValue {
    // SAFETY (all blocks): as the caller promises.
    unsafe fn array<T: Copy>(raw: &RawParameterValue) -> Vec<T> {
        if raw.array_values.is_null() {
            return Vec::new();
        }
        let elements = raw.array_values.cast::<T>();
        (0..raw.array_length)
            .map(|i| unsafe { elements.add(i).read_unaligned() })
            .collect()
    }
    let value = unsafe {
        match raw.kind {
            1 => ParameterValue::Bool(raw.bool_value),
            2 => ParameterValue::Integer(raw.integer_value),
            3 => ParameterValue::Double(raw.double_value),
            4 => ParameterValue::String(read_c_str(raw.string_value)),
            5 => ParameterValue::ByteArray(array::<u8>(raw)),
            6 => ParameterValue::BoolArray(array::<u8>(raw).into_iter().map(|b| b != 0).collect()),
            7 => ParameterValue::IntegerArray(array::<i64>(raw)),
            8 => ParameterValue::DoubleArray(array::<f64>(raw)),
            9 => ParameterValue::StringArray(
                array::<*const c_char>(raw)
                    .into_iter()
                    .map(|text| read_c_str(text))
                    .collect(),
            ),
            _ => ParameterValue::NotSet,
        }
    };
    if ownership == Ownership::GuestFrees {
        unsafe {
            if raw.kind == 9 {
                for text in array::<*const c_char>(raw) {
                    exports::free(text.cast_mut().cast());
                }
            }
            exports::free(raw.string_value.cast_mut().cast());
            exports::free(raw.array_values.cast_mut());
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: ParameterValue) {
        let stored = RawValueWithStorage::new(&value).unwrap();
        // SAFETY: `stored` keeps what the pointers point into; it frees nothing.
        let back = unsafe { read_raw_value(&stored.raw, Ownership::HostFrees) };
        assert_eq!(back, value);
    }

    #[test]
    fn every_type_survives_its_c_form() {
        round_trip(ParameterValue::NotSet);
        round_trip(true.into());
        round_trip((-3i64).into());
        round_trip(2.5.into());
        round_trip("text".into());
        round_trip(vec![1u8, 2, 255].into());
        round_trip(vec![true, false].into());
        round_trip(vec![1i64, -1].into());
        round_trip(vec![0.5, 1.5].into());
        round_trip(vec!["a", "bc"].into());
        round_trip(ParameterValue::StringArray(Vec::new()));
    }

    #[test]
    fn memory_the_host_allocated_for_us_is_freed() {
        let text = exports::allocate(3);
        let texts = exports::allocate(std::mem::size_of::<*const c_char>());
        // SAFETY: both blocks are big enough for what is written.
        unsafe {
            text.copy_from(c"hi".as_ptr().cast(), 3);
            texts.cast::<*const c_char>().write(text.cast());
        }
        let raw = RawParameterValue {
            kind: 9,
            array_values: texts,
            array_length: 1,
            ..RawParameterValue::default()
        };
        // SAFETY: both came from `allocate` and are not used again.
        let value = unsafe { read_raw_value(&raw, Ownership::GuestFrees) };
        assert_eq!(value, vec!["hi"].into());
    }
}
