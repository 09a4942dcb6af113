//! Console logging in rclcpp's format: `[WARN] [1700000000.123456789] [talker]: text`.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

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

/// A named logger, usually a node's.
#[derive(Clone, Debug)]
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

    pub fn enabled(&self, severity: Severity) -> bool {
        severity as u8 >= MIN_SEVERITY.load(Ordering::Relaxed)
    }

    pub fn log(&self, severity: Severity, args: fmt::Arguments<'_>) {
        if !self.enabled(severity) {
            return;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!(
            "[{}] [{}.{:09}] [{}]: {}\n",
            severity.label(),
            now.as_secs(),
            now.subsec_nanos(),
            self.name,
            args
        );
        // Logging must never take a node down: a closed stderr is ignored.
        let _ = std::io::stderr().write_all(line.as_bytes());
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

/// `ros_info!(node.logger(), "x = {}", x)`, like `RCLCPP_INFO`.
#[macro_export]
macro_rules! ros_info {
    ($logger:expr, $($arg:tt)*) => { $logger.info(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! ros_warn {
    ($logger:expr, $($arg:tt)*) => { $logger.warn(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! ros_error {
    ($logger:expr, $($arg:tt)*) => { $logger.error(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! ros_debug {
    ($logger:expr, $($arg:tt)*) => { $logger.debug(format_args!($($arg)*)) };
}
