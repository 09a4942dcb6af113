//! Parameters: declare, get and set, with values as `roslite_parameter_value`.

use std::ffi::{c_char, c_void, CString};

use roslite::{Parameter, ParameterDescriptor, ParameterError, ParameterValue};

use crate::handles;
use crate::status::{guard, Failure, Status, ROSLITE_ERROR, ROSLITE_INVALID_NAME};
use crate::status::{ROSLITE_NOT_FOUND, ROSLITE_TYPE_MISMATCH};
use crate::text::text;

/// `roslite_parameter_value`.
#[repr(C)]
pub struct CParameterValue {
    pub kind: i32,
    pub bool_value: bool,
    pub integer_value: i64,
    pub double_value: f64,
    pub string_value: *const c_char,
    pub array_values: *const c_void,
    pub array_length: usize,
}

impl CParameterValue {
    fn empty(kind: i32) -> Self {
        Self {
            kind,
            bool_value: false,
            integer_value: 0,
            double_value: 0.0,
            string_value: std::ptr::null(),
            array_values: std::ptr::null(),
            array_length: 0,
        }
    }
}

/// A Rust string as a C string roslite owns (interior NULs cut it short: C cannot see past
/// them anyway).
fn owned_c_string(text: &str) -> *const c_char {
    let cut = text.split('\0').next().unwrap_or_default();
    CString::new(cut).unwrap_or_default().into_raw()
}

fn owned_array<T>(items: Vec<T>) -> (*const c_void, usize) {
    let boxed = items.into_boxed_slice();
    let length = boxed.len();
    (Box::into_raw(boxed).cast::<c_void>().cast_const(), length)
}

/// `value` as C sees it, with strings and arrays owned by roslite (freed by
/// `roslite_parameter_value_fini`).
fn to_c(value: &ParameterValue) -> CParameterValue {
    let kind = value.parameter_type() as i32;
    let mut out = CParameterValue::empty(kind);
    match value {
        ParameterValue::NotSet => {}
        ParameterValue::Bool(b) => out.bool_value = *b,
        ParameterValue::Integer(i) => out.integer_value = *i,
        ParameterValue::Double(d) => out.double_value = *d,
        ParameterValue::String(s) => out.string_value = owned_c_string(s),
        ParameterValue::ByteArray(v) => {
            (out.array_values, out.array_length) = owned_array(v.clone())
        }
        ParameterValue::BoolArray(v) => {
            (out.array_values, out.array_length) =
                owned_array(v.iter().map(|b| u8::from(*b)).collect::<Vec<u8>>());
        }
        ParameterValue::IntegerArray(v) => {
            (out.array_values, out.array_length) = owned_array(v.clone());
        }
        ParameterValue::DoubleArray(v) => {
            (out.array_values, out.array_length) = owned_array(v.clone());
        }
        ParameterValue::StringArray(v) => {
            (out.array_values, out.array_length) =
                owned_array(v.iter().map(|s| owned_c_string(s)).collect::<Vec<_>>());
        }
    }
    out
}

/// # Safety
/// `items` is null with `length` 0, or holds `length` readable `T`s.
unsafe fn slice<'a, T>(items: *const c_void, length: usize) -> Result<&'a [T], Failure> {
    if items.is_null() {
        return if length == 0 {
            Ok(&[])
        } else {
            Err(Failure::invalid_argument(format!(
                "array_values is NULL but array_length is {length}"
            )))
        };
    }
    Ok(std::slice::from_raw_parts(items.cast::<T>(), length))
}

/// A value the caller owns, read.
///
/// # Safety
/// `value`'s pointers are valid for its kind.
unsafe fn from_c(value: &CParameterValue) -> Result<ParameterValue, Failure> {
    let (items, length) = (value.array_values, value.array_length);
    Ok(match value.kind {
        0 => ParameterValue::NotSet,
        1 => ParameterValue::Bool(value.bool_value),
        2 => ParameterValue::Integer(value.integer_value),
        3 => ParameterValue::Double(value.double_value),
        4 => ParameterValue::String(text(value.string_value, "string_value")?.to_owned()),
        5 => ParameterValue::ByteArray(slice::<u8>(items, length)?.to_vec()),
        6 => ParameterValue::BoolArray(
            slice::<u8>(items, length)?
                .iter()
                .map(|b| *b != 0)
                .collect(),
        ),
        7 => ParameterValue::IntegerArray(slice::<i64>(items, length)?.to_vec()),
        8 => ParameterValue::DoubleArray(slice::<f64>(items, length)?.to_vec()),
        9 => ParameterValue::StringArray(
            slice::<*const c_char>(items, length)?
                .iter()
                .enumerate()
                .map(|(i, s)| text(*s, &format!("array_values[{i}]")).map(str::to_owned))
                .collect::<Result<_, _>>()?,
        ),
        other => {
            return Err(Failure::invalid_argument(format!(
                "parameter type {other} is not a ROSLITE_PARAMETER_* value (0 to 9)"
            )))
        }
    })
}

/// # Safety
/// `value` is null or was filled in by roslite and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn roslite_parameter_value_fini(value: *mut CParameterValue) {
    let Some(value) = value.as_mut() else {
        return;
    };
    unsafe fn free_array<T>(items: *const c_void, length: usize) -> Box<[T]> {
        // SAFETY: from `owned_array::<T>` with this length.
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            items.cast::<T>().cast_mut(),
            length,
        ))
    }
    if !value.string_value.is_null() {
        drop(CString::from_raw(value.string_value.cast_mut()));
    }
    if !value.array_values.is_null() {
        let (items, length) = (value.array_values, value.array_length);
        match value.kind {
            5 | 6 => drop(free_array::<u8>(items, length)),
            7 => drop(free_array::<i64>(items, length)),
            8 => drop(free_array::<f64>(items, length)),
            9 => {
                for s in free_array::<*const c_char>(items, length).iter() {
                    if !s.is_null() {
                        drop(CString::from_raw(s.cast_mut()));
                    }
                }
            }
            _ => {}
        }
    }
    *value = CParameterValue::empty(0);
}

impl From<ParameterError> for Failure {
    fn from(e: ParameterError) -> Self {
        let status = match e {
            ParameterError::NotDeclared { .. } => ROSLITE_NOT_FOUND,
            ParameterError::InvalidName { .. } => ROSLITE_INVALID_NAME,
            ParameterError::WrongType { .. } => ROSLITE_TYPE_MISMATCH,
            _ => ROSLITE_ERROR,
        };
        Self::new(status, e.to_string())
    }
}

/// # Safety
/// `name` is a string; `default_value` readable; `value` null or writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_parameter_declare(
    node: u64,
    name: *const c_char,
    default_value: *const CParameterValue,
    value: *mut CParameterValue,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let name = text(name, "name")?;
        let default = default_value
            .as_ref()
            .ok_or_else(|| Failure::invalid_argument("default_value is NULL"))?;
        let declared =
            node.declare_parameter(name, from_c(default)?, ParameterDescriptor::default())?;
        if !value.is_null() {
            value.write(to_c(&declared));
        }
        Ok(())
    })
}

/// # Safety
/// `name` is a string; `value` writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_parameter_get(
    node: u64,
    name: *const c_char,
    value: *mut CParameterValue,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let name = text(name, "name")?;
        let parameter = node.get_parameter(name)?;
        crate::text::put(value, to_c(&parameter.value), "value")
    })
}

/// # Safety
/// `name` is a string; `value` readable.
#[no_mangle]
pub unsafe extern "C" fn roslite_parameter_set(
    node: u64,
    name: *const c_char,
    value: *const CParameterValue,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let name = text(name, "name")?;
        let value = value
            .as_ref()
            .ok_or_else(|| Failure::invalid_argument("value is NULL"))?;
        let result = node.set_parameter(Parameter {
            name: name.to_owned(),
            value: from_c(value)?,
        });
        if result.successful {
            Ok(())
        } else {
            let status = if result.reason.contains("not declared") {
                ROSLITE_NOT_FOUND
            } else if result.reason.contains("type") {
                ROSLITE_TYPE_MISMATCH
            } else {
                ROSLITE_ERROR
            };
            Err(Failure::new(
                status,
                format!("parameter '{name}' not set: {}", result.reason),
            ))
        }
    })
}

pub type ParametersCallback = unsafe extern "C" fn(
    *mut c_void,
    *const *const c_char,
    *const CParameterValue,
    usize,
    *mut c_char,
    usize,
) -> bool;

/// Room a callback has for the reason it refuses a change.
const REASON_CAPACITY: usize = 256;

/// # Safety
/// `out` is writable; `callback` stays callable with `user_data` while the handle lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_parameter_add_on_set_callback(
    node: u64,
    callback: Option<ParametersCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = crate::convert::UserData(user_data);
        let handle = node.add_on_set_parameters_callback(move |parameters: &[Parameter]| {
            let user = user;
            let names: Vec<CString> = parameters
                .iter()
                .map(|p| CString::new(p.name.replace('\0', "")).unwrap_or_default())
                .collect();
            let name_pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
            let mut values: Vec<CParameterValue> =
                parameters.iter().map(|p| to_c(&p.value)).collect();
            let mut reason = [0 as c_char; REASON_CAPACITY];
            // SAFETY: the caller promised `callback` takes these while the handle lives; the
            // arrays hold `parameters.len()` elements and `reason` its capacity.
            let accepted = unsafe {
                callback(
                    user.0,
                    name_pointers.as_ptr(),
                    values.as_ptr(),
                    parameters.len(),
                    reason.as_mut_ptr(),
                    REASON_CAPACITY - 1,
                )
            };
            for value in &mut values {
                // SAFETY: each value was filled by `to_c`.
                unsafe { roslite_parameter_value_fini(value) };
            }
            if accepted {
                roslite::SetParametersResult::success()
            } else {
                // SAFETY: `reason` is NUL-terminated: its last byte was never handed out.
                let text = unsafe { std::ffi::CStr::from_ptr(reason.as_ptr()) };
                roslite::SetParametersResult::rejected(text.to_string_lossy().into_owned())
            }
        });
        crate::text::put(
            out,
            handles::insert(handles::Object::OnSetParameters(handle)),
            "handle",
        )
    })
}
