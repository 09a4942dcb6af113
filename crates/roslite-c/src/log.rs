//! Logging under a named logger, as rclcpp's `RCLCPP_*` macros do.

use std::ffi::c_char;

use roslite::{Logger, Severity};

use crate::status::{guard, Failure, Status};
use crate::text::{text, text_or};

/// One copy of each function name for the life of the process, as `/rosout` records want a
/// `&'static str`: bounded by the program's logging call sites.
fn interned(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, PoisonError};
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

fn severity(value: i32) -> Result<Severity, Failure> {
    Ok(match value {
        10 => Severity::Debug,
        20 => Severity::Info,
        30 => Severity::Warn,
        40 => Severity::Error,
        50 => Severity::Fatal,
        _ => {
            return Err(Failure::invalid_argument(format!(
                "severity {value} is not one of ROSLITE_LOG_DEBUG (10), INFO (20), WARN (30), \
                 ERROR (40), FATAL (50)"
            )))
        }
    })
}

/// # Safety
/// `logger` and `message` are strings; `function` is null or a string.
#[no_mangle]
pub unsafe extern "C" fn roslite_log(
    logger: *const c_char,
    severity_level: i32,
    function: *const c_char,
    message: *const c_char,
) -> Status {
    guard(|| {
        let logger = Logger::new(text(logger, "logger")?);
        let severity = severity(severity_level)?;
        let function = text_or(function, "function", "")?;
        let message = text(message, "message")?;
        if function.is_empty() {
            logger.log(severity, format_args!("{message}"));
        } else {
            logger.log_from(severity, interned(function), format_args!("{message}"));
        }
        Ok(())
    })
}
