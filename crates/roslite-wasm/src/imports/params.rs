//! Parameters: values crossing in the guest's layout, on-set callbacks.

use super::*;

pub(super) const PARAMETER_STRING: i32 = 4;
pub(super) const PARAMETER_BYTE_ARRAY: i32 = 5;
pub(super) const PARAMETER_BOOL_ARRAY: i32 = 6;
pub(super) const PARAMETER_INTEGER_ARRAY: i32 = 7;
pub(super) const PARAMETER_DOUBLE_ARRAY: i32 = 8;
pub(super) const PARAMETER_STRING_ARRAY: i32 = 9;

/// A parameter value read from the guest, with the host storage its pointers point into.
pub(super) struct HostValue {
    value: CParameterValue,
    _string: Option<CString>,
    _bytes: Vec<u8>,
    _integers: Vec<i64>,
    _doubles: Vec<f64>,
    _strings: Vec<CString>,
    _string_pointers: Vec<*const c_char>,
}

pub(super) fn read_value(g: &mut dyn GuestCalls, at: i32) -> Step<HostValue> {
    let at = pointer(at);
    let (kind, flag, integer, double, string_at, array_at, length) = {
        let (memory, _) = g.parts();
        (
            memory.i32(at)?,
            memory.u8(at + 4)? != 0,
            memory.i64(at + 8)?,
            memory.f64(at + 16)?,
            memory.u32(at + 24)?,
            memory.u32(at + 28)?,
            memory.u32(at + 32)?,
        )
    };
    let mut host = HostValue {
        value: CParameterValue {
            kind,
            bool_value: flag,
            integer_value: integer,
            double_value: double,
            string_value: std::ptr::null(),
            array_values: std::ptr::null(),
            array_length: length as usize,
        },
        _string: None,
        _bytes: Vec::new(),
        _integers: Vec::new(),
        _doubles: Vec::new(),
        _strings: Vec::new(),
        _string_pointers: Vec::new(),
    };
    if kind == PARAMETER_STRING {
        host._string = string(g, string_at as i32, "string_value")?;
        host.value.string_value = optional(&host._string);
    }
    let (memory, _) = g.parts();
    match kind {
        PARAMETER_BYTE_ARRAY | PARAMETER_BOOL_ARRAY => {
            host._bytes = memory.bytes(array_at, length)?.to_vec();
            host.value.array_values = host._bytes.as_ptr().cast();
        }
        PARAMETER_INTEGER_ARRAY => {
            host._integers = (0..length)
                .map(|i| memory.i64(array_at + 8 * i))
                .collect::<Result<_, _>>()?;
            host.value.array_values = host._integers.as_ptr().cast();
        }
        PARAMETER_DOUBLE_ARRAY => {
            host._doubles = (0..length)
                .map(|i| memory.f64(array_at + 8 * i))
                .collect::<Result<_, _>>()?;
            host.value.array_values = host._doubles.as_ptr().cast();
        }
        PARAMETER_STRING_ARRAY => {
            let pointers: Vec<u32> = (0..length)
                .map(|i| memory.u32(array_at + 4 * i))
                .collect::<Result<_, _>>()?;
            for p in pointers {
                let s = string(g, p as i32, "string array element")?.ok_or_else(|| {
                    Refusal(
                        ROSLITE_INVALID_ARGUMENT,
                        "a string array element is NULL".into(),
                    )
                })?;
                host._strings.push(s);
            }
            host._string_pointers = host._strings.iter().map(|s| s.as_ptr()).collect();
            host.value.array_values = host._string_pointers.as_ptr().cast();
        }
        _ => {}
    }
    Ok(host)
}

/// Writes a value the C ABI filled into the guest at `at`, its strings and arrays in memory
/// the guest allocates (its `roslite_parameter_value_fini` frees them).
pub(super) fn write_value(
    g: &mut dyn GuestCalls,
    at: u32,
    value: &CParameterValue,
) -> Result<Result<(), OutOfBounds>, Fault> {
    let n = value.array_length;
    let (string_at, array_at) = match value.kind {
        PARAMETER_STRING if !value.string_value.is_null() => {
            // SAFETY: the C ABI's string.
            let text = unsafe { CStr::from_ptr(value.string_value) }
                .to_bytes()
                .to_vec();
            (guest_string(g, &text)?, 0)
        }
        PARAMETER_BYTE_ARRAY
        | PARAMETER_BOOL_ARRAY
        | PARAMETER_INTEGER_ARRAY
        | PARAMETER_DOUBLE_ARRAY => {
            let width = if matches!(value.kind, PARAMETER_BYTE_ARRAY | PARAMETER_BOOL_ARRAY) {
                1
            } else {
                8
            };
            // SAFETY: the C ABI's array of `n` elements of that width.
            let bytes =
                unsafe { std::slice::from_raw_parts(value.array_values.cast::<u8>(), n * width) }
                    .to_vec();
            let p = guest_alloc(g, bytes.len().max(1) as u32)?;
            if p != 0 && g.parts().0.write(p, &bytes).is_err() {
                return Err(Fault::Abi(
                    "roslite_guest_alloc gave memory outside the guest".into(),
                ));
            }
            (0, p)
        }
        PARAMETER_STRING_ARRAY => {
            let strings: Vec<Vec<u8>> = (0..n)
                // SAFETY: the C ABI's array of `n` strings.
                .map(|i| {
                    unsafe { CStr::from_ptr(*value.array_values.cast::<*const c_char>().add(i)) }
                        .to_bytes()
                        .to_vec()
                })
                .collect();
            (0, guest_strings(g, &strings)?)
        }
        _ => (0, 0),
    };
    let (mut memory, _) = g.parts();
    Ok((|| {
        memory.bytes_mut(at, layout::PARAMETER_VALUE_SIZE)?.fill(0);
        memory.put_i32(at, value.kind)?;
        memory.put_u8(at + 4, u8::from(value.bool_value))?;
        memory.put_i64(at + 8, value.integer_value)?;
        memory.put_f64(at + 16, value.double_value)?;
        memory.put_u32(at + 24, string_at)?;
        memory.put_u32(at + 28, array_at)?;
        memory.put_u32(at + 32, n as u32)
    })())
}

pub(super) fn empty_value() -> CParameterValue {
    CParameterValue {
        kind: 0,
        bool_value: false,
        integer_value: 0,
        double_value: 0.0,
        string_value: std::ptr::null(),
        array_values: std::ptr::null(),
        array_length: 0,
    }
}

/// Gives a value the C ABI filled to the guest (if `out` is not NULL) and frees it.
pub(super) fn hand_value(
    g: &mut dyn GuestCalls,
    status: i32,
    mut value: CParameterValue,
    out: i32,
) -> Result<Step<i32>, Fault> {
    let written = if status == ROSLITE_OK && out != 0 {
        write_value(g, pointer(out), &value)
    } else {
        Ok(Ok(()))
    };
    // SAFETY: filled by the C ABI (or empty).
    unsafe { roslite_c::params::roslite_parameter_value_fini(&mut value) };
    Ok(written?.map(|()| status).map_err(Refusal::from))
}

pub fn parameter_declare(
    g: &mut dyn GuestCalls,
    node: i64,
    name: i32,
    default_value: i32,
    value: i32,
) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let step = (|| {
            let node = native(g, node)?;
            let name = string(g, name, "name")?;
            let default = if default_value == 0 {
                None
            } else {
                Some(read_value(g, default_value)?)
            };
            if value != 0 {
                check_out(g, value, layout::PARAMETER_VALUE_SIZE, "value")?;
            }
            Ok((node, name, default))
        })();
        let (node, name, default) = match step {
            Ok(v) => v,
            Err(r) => return Ok(Err(r)),
        };
        let mut out = empty_value();
        let default_pointer = default
            .as_ref()
            .map_or(std::ptr::null(), |d| &d.value as *const _);
        // SAFETY: everything passed lives until the call returns.
        let status = unsafe {
            roslite_c::params::roslite_parameter_declare(
                node,
                optional(&name),
                default_pointer,
                &mut out,
            )
        };
        hand_value(g, status, out, value)
    })();
    finish(g, outcome?)
}

pub fn parameter_get(g: &mut dyn GuestCalls, node: i64, name: i32, value: i32) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let step = (|| {
            let node = native(g, node)?;
            let name = string(g, name, "name")?;
            check_out(g, value, layout::PARAMETER_VALUE_SIZE, "value")?;
            Ok((node, name))
        })();
        let (node, name) = match step {
            Ok(v) => v,
            Err(r) => return Ok(Err(r)),
        };
        let mut out = empty_value();
        // SAFETY: everything passed lives until the call returns.
        let status =
            unsafe { roslite_c::params::roslite_parameter_get(node, optional(&name), &mut out) };
        hand_value(g, status, out, value)
    })();
    finish(g, outcome?)
}

pub fn parameter_set(g: &mut dyn GuestCalls, node: i64, name: i32, value: i32) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let name = string(g, name, "name")?;
        let host = if value == 0 {
            None
        } else {
            Some(read_value(g, value)?)
        };
        let value_pointer = host
            .as_ref()
            .map_or(std::ptr::null(), |h| &h.value as *const _);
        // SAFETY: everything passed lives until the call returns.
        Ok(unsafe {
            roslite_c::params::roslite_parameter_set(node, optional(&name), value_pointer)
        })
    })();
    finish(g, outcome)
}

pub fn parameter_add_on_set_callback(
    g: &mut dyn GuestCalls,
    node: i64,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        check_out(g, out, 8, "handle")?;
        let user = g.state().target(
            slot,
            CallbackKind::Parameters,
            "on-set-parameters callback".into(),
        );
        let mut handle = 0;
        // SAFETY: `user` lives until the guest ends; a valid out-pointer.
        let status = unsafe {
            roslite_c::params::roslite_parameter_add_on_set_callback(
                node,
                Some(on_parameters),
                user,
                &mut handle,
            )
        };
        hand_out(g, status, handle, out)
    })();
    finish(g, outcome)
}
