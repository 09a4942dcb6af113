//! Console logging in rclcpp's format: `[WARN] [1700000000.123456789] [talker]: text`; a
//! node's logger also publishes each line on `/rosout`, as rcl's does.

use std::cell::Cell;
use std::fmt;
use std::io::Write;
use std::panic::Location;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Severity {
    Debug = 10,
    Info = 20,
    Warn = 30,
    Error = 40,
    Fatal = 50,
}

impl Severity {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_lowercase().as_str() {
            "debug" => Self::Debug,
            "info" => Self::Info,
            "warn" | "warning" => Self::Warn,
            "error" => Self::Error,
            "fatal" => Self::Fatal,
            _ => return None,
        })
    }

    fn label(self) -> &'static str {
        match self {
            Self::Debug => "DEBUG",
            Self::Info => "INFO",
            Self::Warn => "WARN",
            Self::Error => "ERROR",
            Self::Fatal => "FATAL",
        }
    }
}

static MIN_SEVERITY: AtomicU8 = AtomicU8::new(Severity::Info as u8);

/// Sets the process-wide threshold (`--ros-args --log-level`).
pub fn set_min_severity(severity: Severity) {
    MIN_SEVERITY.store(severity as u8, Ordering::Relaxed);
}

/// Where a logger's lines go besides the console: a node's `/rosout` publisher.
pub(crate) trait LogSink: Send + Sync {
    /// `text` was logged at `severity` by `logger` at `stamp` (since the Unix epoch), from
    /// `location` in the caller's source.
    fn publish(&self, severity: Severity, logger: &str, text: &str, stamp: Duration, at: &Caller);
}

/// Where a line was logged from: the caller's source location and, from the `ros_*!` macros,
/// its function's name (`rcl_interfaces/msg/Log.function`, `__FUNCTION__` in rclcpp).
pub struct Caller {
    pub location: &'static Location<'static>,
    /// Empty when logged through a [`Logger`] method directly: Rust has no caller's function
    /// name at run time, only a macro can name it.
    pub function: &'static str,
}

/// The function's own name from the type name of a function item declared in it
/// (`crate::module::function::f`), as the `ros_*!` macros give it: the last path segment
/// before the item, past any closures it sits in (`main::{{closure}}::f` is `main`).
#[doc(hidden)]
pub fn function_name(item_path: &'static str) -> &'static str {
    let mut path = item_path
        .rsplit_once("::")
        .map_or("", |(outer, _item)| outer);
    while let Some(outer) = path.strip_suffix("::{{closure}}") {
        path = outer;
    }
    path.rsplit("::").next().unwrap_or(path)
}

/// The enclosing function's name, for the `ros_*!` macros.
#[doc(hidden)]
#[macro_export]
macro_rules! __ros_function_name {
    () => {{
        fn f() {}
        $crate::vocabulary::log::function_name(::std::any::type_name_of_val(&f))
    }};
}

thread_local! {
    /// Set while this thread hands a line to a sink: whatever the sink logs itself (a
    /// publish that warns) goes to the console only, never around again.
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// A named logger, usually a node's.
#[derive(Clone)]
pub struct Logger {
    name: String,
    /// Set once, by the node that owns the logger (clones share it); weak, because the sink
    /// (a publisher) holds the node.
    sink: Arc<OnceLock<Weak<dyn LogSink>>>,
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger")
            .field("name", &self.name)
            .field("rosout", &self.sink.get().is_some())
            .finish()
    }
}

impl Logger {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sink: Arc::default(),
        }
    }

    /// Sends every line this logger (and its clones) writes to `sink` too; only the first
    /// sink counts.
    pub(crate) fn attach_sink(&self, sink: Weak<dyn LogSink>) {
        let _ = self.sink.set(sink);
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn enabled(&self, severity: Severity) -> bool {
        severity as u8 >= MIN_SEVERITY.load(Ordering::Relaxed)
    }

    /// Writes the line to stderr and, for a node's logger, publishes it on `/rosout` with the
    /// caller's file and line.
    #[track_caller]
    pub fn log(&self, severity: Severity, args: fmt::Arguments<'_>) {
        self.log_from(severity, "", args);
    }

    /// [`Self::log`] naming the calling function (what the `ros_*!` macros use).
    #[track_caller]
    pub fn log_from(&self, severity: Severity, function: &'static str, args: fmt::Arguments<'_>) {
        if !self.enabled(severity) {
            return;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut line = format!(
            "[{}] [{}.{:09}] [{}]: ",
            severity.label(),
            now.as_secs(),
            now.subsec_nanos(),
            self.name,
        );
        // The text is formatted once, into the line; `/rosout` gets that slice of it.
        let text_start = line.len();
        let _ = fmt::Write::write_fmt(&mut line, args);
        let text_end = line.len();
        line.push('\n');
        // Logging must never take a node down: a closed stderr is ignored.
        let _ = std::io::stderr().write_all(line.as_bytes());
        let text = &line[text_start..text_end];
        let Some(sink) = self.sink.get().and_then(Weak::upgrade) else {
            return;
        };
        if IN_SINK.with(|busy| busy.replace(true)) {
            return;
        }
        let at = Caller {
            location: Location::caller(),
            function,
        };
        sink.publish(severity, &self.name, text, now, &at);
        IN_SINK.with(|busy| busy.set(false));
    }

    #[track_caller]
    pub fn debug(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Debug, args);
    }

    #[track_caller]
    pub fn info(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Info, args);
    }

    #[track_caller]
    pub fn warn(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Warn, args);
    }

    #[track_caller]
    pub fn error(&self, args: fmt::Arguments<'_>) {
        self.log(Severity::Error, args);
    }
}

/// What the `ros_*!` macros expand to: log at `$severity` naming the calling function.
#[doc(hidden)]
#[macro_export]
macro_rules! __ros_log {
    ($logger:expr, $severity:ident, $($arg:tt)*) => {
        $logger.log_from(
            $crate::vocabulary::log::Severity::$severity,
            $crate::__ros_function_name!(),
            format_args!($($arg)*),
        )
    };
}

/// `ros_info!(node.logger(), "x = {}", x)`, like `RCLCPP_INFO`: on `/rosout` with the
/// caller's file, line and function.
#[macro_export]
macro_rules! ros_info {
    ($logger:expr, $($arg:tt)*) => { $crate::__ros_log!($logger, Info, $($arg)*) };
}

#[macro_export]
macro_rules! ros_warn {
    ($logger:expr, $($arg:tt)*) => { $crate::__ros_log!($logger, Warn, $($arg)*) };
}

#[macro_export]
macro_rules! ros_error {
    ($logger:expr, $($arg:tt)*) => { $crate::__ros_log!($logger, Error, $($arg)*) };
}

#[macro_export]
macro_rules! ros_debug {
    ($logger:expr, $($arg:tt)*) => { $crate::__ros_log!($logger, Debug, $($arg)*) };
}

#[cfg(test)]
mod tests {
    use super::function_name;

    #[test]
    fn the_function_name_is_the_segment_before_the_item_past_closures() {
        assert_eq!(function_name("talker::main::f"), "main");
        assert_eq!(
            function_name("talker::Talker::on_timer::{{closure}}::{{closure}}::f"),
            "on_timer"
        );
        assert_eq!(function_name("f"), "");
    }

    #[test]
    fn the_macro_names_the_function_it_is_expanded_in() {
        fn timer_callback() -> &'static str {
            crate::__ros_function_name!()
        }
        assert_eq!(timer_callback(), "timer_callback");
        let in_closure = || crate::__ros_function_name!();
        assert_eq!(
            in_closure(),
            "the_macro_names_the_function_it_is_expanded_in"
        );
    }
}
