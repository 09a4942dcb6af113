//! Reading what C hands over: strings, out-pointers, byte buffers and durations, each checked
//! before use.

use std::ffi::{c_char, CStr};
use std::time::Duration;

use crate::status::Failure;

/// The UTF-8 text at `ptr`; `what` names the argument in the error.
///
/// # Safety
/// `ptr` is null or points at a NUL-terminated string that outlives the call.
pub unsafe fn text<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::invalid_argument(format!("{what} is NULL")));
    }
    CStr::from_ptr(ptr)
        .to_str()
        .map_err(|_| Failure::invalid_argument(format!("{what} is not UTF-8 text")))
}

/// As [`text`], with NULL read as `default`.
///
/// # Safety
/// As [`text`].
pub unsafe fn text_or<'a>(
    ptr: *const c_char,
    what: &str,
    default: &'a str,
) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        Ok(default)
    } else {
        text(ptr, what)
    }
}

/// The `length` bytes at `ptr` (NULL is allowed for an empty buffer).
///
/// # Safety
/// `ptr` is null or points at `length` readable bytes that outlive the call.
pub unsafe fn bytes<'a>(ptr: *const u8, length: usize, what: &str) -> Result<&'a [u8], Failure> {
    if ptr.is_null() {
        if length == 0 {
            return Ok(&[]);
        }
        return Err(Failure::invalid_argument(format!(
            "{what} is NULL but its length is {length}"
        )));
    }
    Ok(std::slice::from_raw_parts(ptr, length))
}

/// Writes `value` through the out-pointer `out`.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
pub unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::invalid_argument(format!("{what} is NULL")));
    }
    out.write(value);
    Ok(())
}

/// `ns` nanoseconds as a duration; negative is `None` (for ever).
pub fn timeout(ns: i64) -> Option<Duration> {
    u64::try_from(ns).ok().map(Duration::from_nanos)
}

/// A period or duration that must not be negative.
pub fn duration(ns: i64, what: &str) -> Result<Duration, Failure> {
    u64::try_from(ns).map(Duration::from_nanos).map_err(|_| {
        Failure::invalid_argument(format!("{what} is {ns} ns; it must not be negative"))
    })
}

/// Copies `value` into a caller's buffer (`capacity` bytes), NUL-terminated; `length` gets its
/// length without the NUL, also when the buffer is too small.
///
/// # Safety
/// `buffer` is null or valid for `capacity` bytes; `length` is valid for a write.
pub unsafe fn copy_out(
    value: &str,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Result<(), Failure> {
    put(length, value.len(), "length")?;
    if buffer.is_null() || capacity <= value.len() {
        return Err(Failure::invalid_argument(format!(
            "the buffer holds {capacity} bytes; {} are needed (with the NUL)",
            value.len() + 1
        )));
    }
    std::ptr::copy_nonoverlapping(value.as_ptr(), buffer.cast::<u8>(), value.len());
    buffer.add(value.len()).write(0);
    Ok(())
}
