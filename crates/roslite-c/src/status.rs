//! Status codes, the per-thread last error, and [`guard`], which every exported function runs
//! its body in.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A call's outcome (`roslite_status` in the header).
pub type Status = i32;

pub const ROSLITE_OK: Status = 0;
pub const ROSLITE_ERROR: Status = 1;
pub const ROSLITE_INVALID_ARGUMENT: Status = 2;
pub const ROSLITE_INVALID_HANDLE: Status = 3;
pub const ROSLITE_INVALID_NAME: Status = 4;
pub const ROSLITE_BAD_MESSAGE: Status = 5;
pub const ROSLITE_UNKNOWN_TYPE: Status = 6;
pub const ROSLITE_TIMEOUT: Status = 7;
pub const ROSLITE_SHUTDOWN: Status = 8;
pub const ROSLITE_NOT_FOUND: Status = 9;
pub const ROSLITE_TYPE_MISMATCH: Status = 10;
pub const ROSLITE_INVALID_QOS: Status = 11;
pub const ROSLITE_INVALID_TRANSITION: Status = 12;

/// A failed call: its status and what to tell the caller.
#[derive(Debug)]
pub struct Failure {
    pub status: Status,
    pub message: String,
}

impl Failure {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ROSLITE_INVALID_ARGUMENT, message)
    }
}

impl From<roslite::NodeError> for Failure {
    fn from(e: roslite::NodeError) -> Self {
        let status = match e {
            roslite::NodeError::Name(_) => ROSLITE_INVALID_NAME,
            roslite::NodeError::Qos(_) => ROSLITE_INVALID_QOS,
            roslite::NodeError::ZeroPeriod => ROSLITE_INVALID_ARGUMENT,
            _ => ROSLITE_ERROR,
        };
        Self::new(status, e.to_string())
    }
}

pub type CallResult = Result<(), Failure>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // An interior NUL would cut the message short; none of ours has one, a user's name might.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs `body`; a failure or a panic becomes its status and the thread's last error.
pub fn guard(body: impl FnOnce() -> CallResult) -> Status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ROSLITE_OK,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".to_owned());
            set_last_error(&format!(
                "internal error in roslite (please report it): {what}"
            ));
            ROSLITE_ERROR
        }
    }
}

/// The message of the last failing call on this thread, for Rust callers of the C ABI (the
/// WebAssembly host).
pub fn last_error_message() -> String {
    LAST_ERROR.with(|e| e.borrow().to_string_lossy().into_owned())
}

/// `roslite_last_error`: the message of the last failing call on this thread.
#[no_mangle]
pub extern "C" fn roslite_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
