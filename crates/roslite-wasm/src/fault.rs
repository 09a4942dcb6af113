//! Why a guest stopped.

use std::fmt;

/// A guest's end other than returning from `main`: each names what the user must look at.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The guest called `proc_exit` (C `exit()`, Rust `std::process::exit`).
    Exit(i32),
    /// Guest code trapped (unreachable, out-of-bounds access, division by zero, stack
    /// overflow, an abort).
    Trap { during: String, message: String },
    /// A callback ran past its deadline (wasmtime: epoch interruption) or its fuel (wasmi).
    Deadline { during: String, limit: String },
    /// The guest broke the ABI (a missing export, a dispatch result out of range).
    Abi(String),
    /// The host stopped (SIGINT, SIGTERM, `--stop-on-stdin`) and the guest, after one wait
    /// that returned early for it, went on spinning for a time instead of returning from
    /// `main`: it is ended there (a sleep ends it as `exit(0)`, [`crate::wasi::WasiConfig`]'s
    /// `ends_sleeping`). Not an error.
    Stopped,
    /// A snapshot could not be restored into the new instance (docs/migration.md).
    NotRestored(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exit(code) => write!(f, "exited with status {code}"),
            Self::Trap { during, message } => write!(f, "trapped in {during}: {message}"),
            Self::Deadline { during, limit } => {
                write!(f, "stopped: {during} ran past its {limit}")
            }
            Self::Abi(message) => write!(f, "broke the guest ABI: {message}"),
            Self::Stopped => f.write_str("was stopped while it waited"),
            Self::NotRestored(why) => write!(f, "could not be restored from its snapshot: {why}"),
        }
    }
}

impl std::error::Error for Fault {}
