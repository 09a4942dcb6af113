//! Failures the host reports: the C ABI's status code and the host's text for it.

use std::ffi::{c_char, CStr, CString};
use std::fmt;

use crate::sys;

/// The C ABI's `roslite_status` values other than `ROSLITE_OK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `ROSLITE_ERROR`: anything not listed below (and every call outside a Wasm host).
    Error,
    InvalidArgument,
    InvalidHandle,
    InvalidName,
    BadMessage,
    UnknownType,
    Timeout,
    Shutdown,
    NotFound,
    TypeMismatch,
    InvalidQos,
    /// A status this version of the guest library does not know.
    Other(i32),
}

impl ErrorCode {
    pub fn from_status(status: i32) -> Self {
        match status {
            1 => Self::Error,
            2 => Self::InvalidArgument,
            3 => Self::InvalidHandle,
            4 => Self::InvalidName,
            5 => Self::BadMessage,
            6 => Self::UnknownType,
            7 => Self::Timeout,
            8 => Self::Shutdown,
            9 => Self::NotFound,
            10 => Self::TypeMismatch,
            11 => Self::InvalidQos,
            other => Self::Other(other),
        }
    }
}

/// Why a call into the host failed: its status and what the host said (`roslite_last_error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The error of a failed call: its status and the host's text for it, read now, before
    /// another call replaces it.
    pub(crate) fn from_status(status: i32) -> Self {
        Self::new(ErrorCode::from_status(status), last_error_text())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "roslite host call failed ({:?})", self.code)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for Error {}

/// roslite's names for its error types, so code written for `roslite` keeps compiling.
pub type NodeError = Error;
pub type PublishError = Error;
pub type ParameterError = Error;

/// `Ok` for `ROSLITE_OK`, else the host's error.
pub(crate) fn check(status: i32) -> Result<(), Error> {
    if status == sys::STATUS_OK {
        Ok(())
    } else {
        Err(Error::from_status(status))
    }
}

fn last_error_text() -> String {
    let mut buffer = vec![0u8; 256];
    loop {
        // SAFETY: `buffer` has `buffer.len()` writable bytes.
        let length = unsafe { sys::roslite_v1_last_error(buffer.as_mut_ptr(), buffer.len()) };
        if length <= buffer.len() {
            buffer.truncate(length);
            break;
        }
        buffer.resize(length, 0);
    }
    // Tolerate a host that counts the NUL.
    if buffer.last() == Some(&0) {
        buffer.pop();
    }
    String::from_utf8_lossy(&buffer).into_owned()
}

/// `text` as a C string for the host; text with a NUL in it cannot be one.
pub(crate) fn c_string(text: &str, what: &str) -> Result<CString, Error> {
    CString::new(text).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} '{}' contains a NUL byte", text.escape_debug()),
        )
    })
}

/// A C string the host wrote into guest memory, as Rust text.
///
/// # Safety
/// `pointer` is null or points at a NUL-terminated string.
pub(crate) unsafe fn read_c_str(pointer: *const c_char) -> String {
    if pointer.is_null() {
        return String::new();
    }
    // SAFETY: as the caller promises.
    unsafe { CStr::from_ptr(pointer) }
        .to_string_lossy()
        .into_owned()
}

/// Text the host copies into a buffer of ours (`node_fully_qualified_name` and the like): it
/// answers a too-small buffer with the length it needs, and the call is repeated with that.
pub(crate) fn read_host_text(
    mut call: impl FnMut(*mut u8, usize, *mut usize) -> i32,
) -> Result<String, Error> {
    let mut buffer = vec![0u8; 128];
    // A host whose text keeps growing between calls gets a few tries, not a loop for ever.
    for _ in 0..4 {
        let mut length = 0usize;
        let status = call(buffer.as_mut_ptr(), buffer.len(), &mut length);
        if status == sys::STATUS_OK && length < buffer.len() {
            buffer.truncate(length);
            return Ok(String::from_utf8_lossy(&buffer).into_owned());
        }
        if length < buffer.len() {
            return Err(Error::from_status(status));
        }
        // Room for the text and its NUL.
        buffer.resize(length + 1, 0);
    }
    Err(Error::new(
        ErrorCode::Error,
        "the host's text kept outgrowing the buffer it asked for",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_wasm_host_a_call_fails_saying_so() {
        // SAFETY: a stub that touches nothing.
        let status = unsafe { sys::roslite_v1_context_shutdown(1) };
        let error = check(status).unwrap_err();
        assert_eq!(error.code, ErrorCode::Error);
        assert!(error
            .to_string()
            .starts_with("roslite-guest runs only inside a roslite Wasm host"));
    }

    #[test]
    fn text_with_a_nul_is_refused() {
        let error = c_string("a\0b", "topic").unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArgument);
    }
}
