//! What parking is made of (crate::park has how it goes): the Asyncify exports a prepared guest
//! has, the imports it waits in, the wait it parks in and how that wait ended.

use std::time::{Duration, Instant};

/// The Asyncify exports (Binaryen's `src/passes/Asyncify.cpp` documents the protocol).
pub const EXPORT_START_UNWIND: &str = "asyncify_start_unwind";
pub const EXPORT_STOP_UNWIND: &str = "asyncify_stop_unwind";
pub const EXPORT_START_REWIND: &str = "asyncify_start_rewind";
pub const EXPORT_STOP_REWIND: &str = "asyncify_stop_rewind";

/// The imports a guest waits in (module, name): Asyncify instruments only the guest functions
/// that can reach one of them ([`asyncify_imports_argument`]).
pub const WAITING_IMPORTS: &[(&str, &str)] = &[
    (crate::abi::IMPORT_MODULE, "executor_spin"),
    (crate::abi::IMPORT_MODULE, "executor_spin_threads"),
    (crate::abi::IMPORT_MODULE, "executor_spin_for"),
    (crate::abi::IMPORT_MODULE, "executor_spin_once"),
    (crate::abi::WASI_MODULE, "poll_oneoff"),
];

/// `wasm-opt`'s argument naming [`WAITING_IMPORTS`] for the Asyncify pass.
pub fn asyncify_imports_argument() -> String {
    let names: Vec<String> = WAITING_IMPORTS
        .iter()
        .map(|(module, name)| format!("{module}.{name}"))
        .collect();
    format!("--pass-arg=asyncify-imports@{}", names.join(","))
}

/// The buffer a parked guest's call stack is saved in, allocated in its memory at its first
/// park. `main` -> `rclcpp::spin` -> the executor's spin is a few frames of a few locals each;
/// a stack that does not fit traps in the unwind with a message naming this size.
pub const SAVED_STACK_BYTES: u32 = 32 * 1024;

/// One call of an Asyncify export.
#[derive(Clone, Copy, Debug)]
pub enum Asyncify {
    /// Start saving the stack into the buffer at this address.
    StartUnwind(u32),
    /// The stack is saved (`_start` returned): back to normal execution.
    StopUnwind,
    /// Start rebuilding the stack from the buffer at this address (then call `_start`).
    StartRewind(u32),
    /// The stack is rebuilt (the parked import was called again): back to normal execution.
    StopRewind,
}

impl Asyncify {
    pub fn export(self) -> &'static str {
        match self {
            Self::StartUnwind(_) => EXPORT_START_UNWIND,
            Self::StopUnwind => EXPORT_STOP_UNWIND,
            Self::StartRewind(_) => EXPORT_START_REWIND,
            Self::StopRewind => EXPORT_STOP_REWIND,
        }
    }
}

/// What a parked guest waits for.
#[derive(Clone, Debug)]
pub enum Park {
    /// Running the callbacks of `executor` (a native handle) until `until` (None: until the
    /// guest or its context stops); with `once`, until the first callback ran.
    Spin {
        executor: u64,
        until: Option<Instant>,
        once: bool,
    },
    /// Sleeping (`poll_oneoff` on clocks only) until `until`, or until the guest stops.
    Sleep { until: Instant },
}

/// How a parked wait ended, for the import that parked to return when it is rewound.
#[derive(Debug)]
pub enum Resumed {
    /// The spin ended: whether a callback ran, or the C ABI's refusal (status, message).
    Spun(Result<bool, (i32, String)>),
    Slept,
}

/// How long a parked sleep waits at most before it looks at the stop flag again (a stop wakes
/// it at once; this bounds a missed wake-up).
pub const SLEEP_SLICE: Duration = Duration::from_millis(100);
