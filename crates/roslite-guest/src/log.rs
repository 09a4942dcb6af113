//! Logging through the host (`roslite_log`): the console and `/rosout`, under the node's
//! logger name, filtered by the host's `--log-level`.

use std::ffi::CString;
use std::fmt;

use crate::sys;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(i32)]
pub enum Severity {
    Debug = 10,
    Info = 20,
    Warn = 30,
    Error = 40,
    Fatal = 50,
}

/// A named logger, usually a node's ([`crate::Node::logger`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logger {
    name: String,
}

impl Logger {
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn log(&self, severity: Severity, args: fmt::Arguments<'_>) {
        self.log_from(severity, "", args);
    }

    /// Logs naming the calling `function` (what the `ros_*!` macros pass).
    pub fn log_from(&self, severity: Severity, function: &str, args: fmt::Arguments<'_>) {
        let message = args.to_string();
        if !self.send_to_host(severity, function, &message) {
            // Outside a host (or with text a C string cannot carry) the line still shows.
            eprintln!("[{severity:?}] [{}]: {message}", self.name);
        }
    }

    fn send_to_host(&self, severity: Severity, function: &str, message: &str) -> bool {
        let (Ok(logger), Ok(function), Ok(message)) = (
            CString::new(self.name.as_str()),
            CString::new(function),
            CString::new(message),
        ) else {
            return false;
        };
        let function = if function.is_empty() {
            std::ptr::null()
        } else {
            function.as_ptr()
        };
        // SAFETY: three NUL-terminated strings (or null for `function`, which the C ABI
        // allows) that outlive the call.
        let status = unsafe {
            sys::roslite_v1_log(logger.as_ptr(), severity as i32, function, message.as_ptr())
        };
        status == sys::STATUS_OK
    }

    pub fn debug(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Debug, args);
    }

    pub fn info(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Info, args);
    }

    pub fn warn(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Warn, args);
    }

    pub fn error(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Error, args);
    }
}

/// The name of the function an item path (`type_name` of a function item declared inside it)
/// lies in: `talker::run::{{closure}}::here` is `run`.
#[doc(hidden)]
pub fn enclosing_function(item_path: &'static str) -> &'static str {
    item_path
        .rsplit("::")
        .skip(1)
        .find(|segment| *segment != "{{closure}}")
        .unwrap_or("")
}

#[doc(hidden)]
#[macro_export]
macro_rules! __guest_log {
    ($logger:expr, $severity:ident, $($arg:tt)*) => {
        $logger.log_from(
            $crate::Severity::$severity,
            {
                fn here() {}
                $crate::log::enclosing_function(::std::any::type_name_of_val(&here))
            },
            format_args!($($arg)*),
        )
    };
}

/// `ros_info!(node.logger(), "x = {}", x)`, as in `roslite` and like `RCLCPP_INFO`.
#[macro_export]
macro_rules! ros_info {
    ($logger:expr, $($arg:tt)*) => { $crate::__guest_log!($logger, Info, $($arg)*) };
}

#[macro_export]
macro_rules! ros_warn {
    ($logger:expr, $($arg:tt)*) => { $crate::__guest_log!($logger, Warn, $($arg)*) };
}

#[macro_export]
macro_rules! ros_error {
    ($logger:expr, $($arg:tt)*) => { $crate::__guest_log!($logger, Error, $($arg)*) };
}

#[macro_export]
macro_rules! ros_debug {
    ($logger:expr, $($arg:tt)*) => { $crate::__guest_log!($logger, Debug, $($arg)*) };
}

#[cfg(test)]
mod tests {
    use super::enclosing_function;

    #[test]
    fn the_enclosing_function_skips_closures() {
        assert_eq!(enclosing_function("talker::run::{{closure}}::here"), "run");
        assert_eq!(enclosing_function("talker::main::here"), "main");
        assert_eq!(enclosing_function("here"), "");
    }

    #[test]
    fn the_macros_name_their_function() {
        fn here() {}
        let path = std::any::type_name_of_val(&here);
        assert_eq!(enclosing_function(path), "the_macros_name_their_function");
        crate::ros_info!(crate::Logger::new("test"), "logged outside a host: {}", 1);
    }
}
