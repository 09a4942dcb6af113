//! The two engines behind one interface: wasmtime (the default: Cranelift code compiled ahead
//! of time, epoch interruption for deadlines) and wasmi (a pure-Rust interpreter, fuel for
//! deadlines). Each links the same imports ([`crate::imports`], [`crate::wasi`]) and runs a
//! guest's `_start` on the calling thread.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::fault::Fault;
use crate::guest::{enter_resident, Resident};
use crate::guest::{GuestShared, GuestState};
use crate::migrate::{Beginning, MigrationError, Restoring};
use crate::park;

/// Links every `roslite_v1` import ([`crate::imports`]) into `$linker`, for either engine:
/// called as `roslite_imports!(link_roslite [linker, Error])` from an engine module, which
/// provides `Caller`, `Data`, `Guest` (with `renew_budget`: a fresh deadline or fuel when the
/// guest gets control back) and `host_error` (a [`Fault`] as the engine's error).
macro_rules! link_roslite {
    ([$linker:ident, $error:ty] $($name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        $(
            $linker
                .func_wrap(abi::IMPORT_MODULE, stringify!($name), |mut caller: Caller<'_, Data>, $($arg: $ty),*| -> Result<i32, $error> {
                    const JOURNALED: bool = crate::journal::is_journaled(stringify!($name));
                    let result = enter(&mut Guest(caller.as_context_mut()), |g| {
                        if JOURNALED {
                            crate::journal::record(g, stringify!($name), &[$(i64::from($arg)),*], |g| {
                                crate::imports::$name(g, $($arg),*)
                            })
                        } else {
                            crate::imports::$name(g, $($arg),*)
                        }
                    });
                    Guest(caller.as_context_mut()).renew_budget();
                    result.map_err(host_error)
                })
                .expect("each import is linked once");
        )*
    };
}

/// Links every WASI function ([`crate::wasi`]) as [`link_roslite`] does the roslite imports:
/// `errno` functions return the errno; `noreturn` (`proc_exit`) ends the guest.
macro_rules! link_wasi {
    ([$linker:ident, $error:ty] $($name:ident($($arg:ident: $ty:ty),* $(,)?) -> $result:ident;)*) => {
        $( link_wasi!(@one $linker, $error; $name($($arg: $ty),*) -> $result); )*
    };
    (@one $linker:ident, $error:ty; $name:ident($($arg:ident: $ty:ty),*) -> errno) => {
        $linker
            .func_wrap(abi::WASI_MODULE, stringify!($name), |mut caller: Caller<'_, Data>, $($arg: $ty),*| -> Result<i32, $error> {
                let mut guest = Guest(caller.as_context_mut());
                let (memory, state) = guest.parts();
                let mut cx = crate::wasi::WasiCx { memory, state: &mut state.wasi };
                let result = crate::wasi::$name(&mut cx, $($arg),*);
                guest.renew_budget();
                result.map_err(|crate::wasi::WasiExit(code)| host_error(Fault::Exit(code as i32)))
            })
            .expect("each import is linked once");
    };
    (@one $linker:ident, $error:ty; $name:ident($($arg:ident: $ty:ty),*) -> sleeps) => {
        $linker
            .func_wrap(abi::WASI_MODULE, stringify!($name), |mut caller: Caller<'_, Data>, $($arg: $ty),*| -> Result<i32, $error> {
                let mut guest = Guest(caller.as_context_mut());
                let result = crate::imports::sleeping_call(&mut guest, |g, phase| {
                    let (memory, state) = g.parts();
                    let mut cx = crate::wasi::WasiCx { memory, state: &mut state.wasi };
                    crate::wasi::$name(&mut cx, $($arg,)* phase)
                });
                guest.renew_budget();
                result.map_err(host_error)
            })
            .expect("each import is linked once");
    };
    (@one $linker:ident, $error:ty; $name:ident($($arg:ident: $ty:ty),*) -> noreturn) => {
        $linker
            .func_wrap(abi::WASI_MODULE, stringify!($name), |mut caller: Caller<'_, Data>, $($arg: $ty),*| -> Result<(), $error> {
                let mut guest = Guest(caller.as_context_mut());
                let (memory, state) = guest.parts();
                let mut cx = crate::wasi::WasiCx { memory, state: &mut state.wasi };
                match crate::wasi::$name(&mut cx, $($arg),*) {
                    Err(crate::wasi::WasiExit(code)) => Err(host_error(Fault::Exit(code as i32))),
                    Ok(_) => Err(host_error(Fault::Abi(concat!(stringify!($name), " returned").into()))),
                }
            })
            .expect("each import is linked once");
    };
}

#[cfg(feature = "wasmi")]
pub mod wasmi_engine;
pub mod wasmtime_engine;

/// Which engine runs a guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EngineKind {
    #[default]
    Wasmtime,
    Wasmi,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Wasmtime => "wasmtime",
            Self::Wasmi => "wasmi",
        }
    }
}

impl std::str::FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "wasmtime" => Ok(Self::Wasmtime),
            "wasmi" => Ok(Self::Wasmi),
            other => Err(format!("unknown engine '{other}': give wasmtime or wasmi")),
        }
    }
}

/// What a guest may use: time per callback and memory.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long guest code may run between two returns to the host (a callback, or `main`
    /// up to its first host call) on wasmtime.
    pub deadline: Duration,
    /// The same bound on wasmi, in fuel (about one unit per instruction).
    pub fuel: u64,
    /// Linear memory the guest may grow to.
    pub max_memory_bytes: usize,
}

impl Limits {
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(1);
    pub const DEFAULT_FUEL: u64 = 1_000_000_000;
    pub const DEFAULT_MAX_MEMORY_BYTES: usize = 64 << 20;
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            deadline: Self::DEFAULT_DEADLINE,
            fuel: Self::DEFAULT_FUEL,
            max_memory_bytes: Self::DEFAULT_MAX_MEMORY_BYTES,
        }
    }
}

/// A module compiled (or checked) for one engine, ready to instantiate any number of times.
pub enum Loaded {
    Wasmtime(wasmtime::Module),
    #[cfg(feature = "wasmi")]
    Wasmi(wasmi::Module),
}

/// Why a module could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    Read(std::io::Error),
    /// Not a module this engine accepts (malformed, or a `.cwasm` for another build).
    Invalid(String),
    /// A `.wasm` given to wasmtime in a host built without the compiler.
    NeedsCompiler,
    /// A `.cwasm` given to wasmi (which runs the portable `.wasm` only).
    PrecompiledForWasmtime,
    Check(crate::module::ModuleError),
    /// This host was built without wasmi.
    NoWasmi,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read(e) => write!(f, "cannot read it: {e}"),
            Self::Invalid(e) => write!(f, "not a module this host can run: {e}"),
            Self::NeedsCompiler => f.write_str(
                "it is a .wasm and this host has no compiler: precompile it with `roslite wasm compile NODE.wasm -o NODE.cwasm`, or run it with --engine wasmi",
            ),
            Self::PrecompiledForWasmtime => f.write_str(
                "it is a .cwasm (wasmtime machine code); wasmi runs the .wasm it was compiled from",
            ),
            Self::Check(e) => write!(f, "{e}"),
            Self::NoWasmi => f.write_str("this host was built without the wasmi engine (feature `wasmi`)"),
        }
    }
}

impl std::error::Error for LoadError {}

/// The wasmtime header every `.cwasm` starts with (an ELF object).
fn is_precompiled(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// Loads `path` (`.wasm` or `.cwasm`) for `kind`, after checking the guest ABI.
pub fn load(kind: EngineKind, path: &Path) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(LoadError::Read)?;
    load_bytes(kind, &bytes)
}

pub fn load_bytes(kind: EngineKind, bytes: &[u8]) -> Result<Loaded, LoadError> {
    let precompiled = is_precompiled(bytes);
    match kind {
        EngineKind::Wasmtime => {
            let module = if precompiled {
                wasmtime_engine::deserialize(bytes)?
            } else {
                check_then_compile(bytes)?
            };
            crate::module::check_imports_and_exports(
                module
                    .imports()
                    .map(|i| (i.module().to_owned(), i.name().to_owned())),
                module.exports().map(|e| e.name().to_owned()),
            )
            .map_err(LoadError::Check)?;
            Ok(Loaded::Wasmtime(module))
        }
        #[cfg(feature = "wasmi")]
        EngineKind::Wasmi => {
            if precompiled {
                return Err(LoadError::PrecompiledForWasmtime);
            }
            let module = wasmi_engine::compile(bytes)?;
            crate::module::check_imports_and_exports(
                module
                    .imports()
                    .map(|i| (i.module().to_owned(), i.name().to_owned())),
                module.exports().map(|e| e.name().to_owned()),
            )
            .map_err(LoadError::Check)?;
            Ok(Loaded::Wasmi(module))
        }
        #[cfg(not(feature = "wasmi"))]
        EngineKind::Wasmi => Err(LoadError::NoWasmi),
    }
}

/// A `.wasm` for wasmtime: checked (for errors that say what is wrong), then compiled.
#[cfg(feature = "compiler")]
fn check_then_compile(bytes: &[u8]) -> Result<wasmtime::Module, LoadError> {
    crate::module::check(bytes).map_err(LoadError::Check)?;
    wasmtime_engine::compile(&instrumented(bytes)?)
}

/// A checked `.wasm` instrumented for snapshots ([`crate::instrument`]); a `.cwasm` was when
/// `roslite wasm compile` made it.
#[cfg(feature = "instrument")]
pub(crate) fn instrumented(bytes: &[u8]) -> Result<Vec<u8>, LoadError> {
    crate::instrument::instrument(bytes)
        .map_err(|e| LoadError::Check(crate::module::ModuleError::Malformed(e)))
}

#[cfg(not(feature = "compiler"))]
fn check_then_compile(_bytes: &[u8]) -> Result<wasmtime::Module, LoadError> {
    Err(LoadError::NeedsCompiler)
}

/// Runs a loaded module's `_start` as one guest on this thread until it returns, exits or
/// faults, or (`beginning`) resumes a snapshot of one. `Ok(())` is a return from `main` (or
/// `exit(0)`, or the guest's migration to another host).
pub fn run(
    loaded: &Loaded,
    state: GuestState,
    limits: Limits,
    beginning: Beginning,
) -> Result<(), Fault> {
    match loaded {
        Loaded::Wasmtime(module) => wasmtime_engine::run(module, state, limits, beginning),
        #[cfg(feature = "wasmi")]
        Loaded::Wasmi(module) => wasmi_engine::run(module, state, limits, beginning),
    }
}

/// Runs the instantiated guest in `resident` to its end ([`park::run_main`]), then stops it for
/// good on this thread: nothing is dispatched into it any more, and its entities are released
/// (waiting for a callback that still runs in it on another thread).
fn run_resident(
    resident: Arc<Mutex<dyn Resident>>,
    shared: &Arc<GuestShared>,
    beginning: Beginning,
) -> Result<(), Fault> {
    let outcome = (|| {
        let parked = match beginning {
            Beginning::Main => {
                shared.set_resident(Arc::downgrade(&resident));
                None
            }
            Beginning::Restore(restoring) => Some(restore(&resident, shared, &restoring, &[])?),
            Beginning::Prepare(preparing) => {
                let replayed = enter_resident(&mut *lock(&resident), |g| {
                    let parks = g.can_park_at_all();
                    crate::journal::replay(g.state(), &preparing.journal, parks)
                        .map_err(|e| MigrationError::Replay(e.to_string()))
                });
                let failed = replayed.as_ref().err().map(ToString::to_string);
                // Every message that arrives until the guest resumes reaches the mailbox.
                shared.keep_every_message(true);
                let _ = preparing.prepared.send(replayed);
                if let Some(why) = failed {
                    return Err(Fault::NotRestored(why));
                }
                match await_snapshot(shared, &preparing.snapshot) {
                    Some(restoring) => {
                        let parked = restore(&resident, shared, &restoring, &preparing.journal)?;
                        shared.keep_every_message(false);
                        Some(parked)
                    }
                    // Called off: the objects made are released below.
                    None => return Ok(()),
                }
            }
        };
        park::run_main(&resident, shared, parked)
    })();
    enter_resident(&mut *lock(&resident), |g| {
        let state = g.state();
        state.dead = true;
        state.release_all();
    });
    match outcome {
        Err(Fault::Exit(0) | Fault::Stopped) => Ok(()),
        other => other,
    }
}

/// Waits for a prepared guest's snapshot (None: the move was called off), spinning the
/// executors its journal made meanwhile: what arrives for its subscriptions is taken from
/// their queues into the guest's mailbox, which keeps every message, however shallow the
/// subscription's history (a depth-1 queue would keep only the last of those that arrive
/// while the node moves). The exactly-once check drops those it had on its old host.
fn await_snapshot(
    shared: &GuestShared,
    snapshot: &std::sync::mpsc::Receiver<Restoring>,
) -> Option<Restoring> {
    use std::sync::mpsc::TryRecvError;
    loop {
        match snapshot.try_recv() {
            Ok(restoring) => return Some(restoring),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        let executors = shared.executors_now();
        if executors.is_empty() {
            return snapshot.recv().ok();
        }
        // The host wakes them when the snapshot comes (Host::complete_restore).
        let slice = std::time::Duration::from_millis(50) / executors.len() as u32;
        for executor in &executors {
            executor.spin_once_or_wake(Some(slice));
        }
    }
}

fn lock<'a>(
    resident: &'a Mutex<dyn Resident + 'static>,
) -> std::sync::MutexGuard<'a, dyn Resident + 'static> {
    resident.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Restores `restoring` into the guest (crate::migrate::restore_into), drops timer ticks that
/// came while the guest was only prepared (its timers ran on the host it came from meanwhile),
/// makes the restored guest reachable, and only then reports how it went: the host answers a
/// move once the report comes, and a restored guest it did not yet list (`Host::nodes` lists
/// only reachable guests) could not be moved on at once.
fn restore(
    resident: &Arc<Mutex<dyn Resident>>,
    shared: &GuestShared,
    restoring: &Restoring,
    prepared: &[crate::journal::Entry],
) -> Result<(crate::waiting::Park, u32), Fault> {
    let restored = enter_resident(&mut *lock(resident), |g| {
        crate::migrate::restore_into(g, restoring, prepared)
    });
    if restored.is_ok() {
        shared.note_restored();
        shared.drop_timer_mail();
        shared.set_resident(Arc::downgrade(resident));
    }
    if let Some(report) = &restoring.report {
        let _ = report.send(restored.as_ref().map(drop).map_err(Clone::clone));
    }
    restored.map_err(|e| Fault::NotRestored(e.to_string()))
}

/// The one wasmtime engine of this process (its epoch ticker serves every guest).
pub(crate) fn shared_wasmtime() -> &'static wasmtime::Engine {
    static ENGINE: OnceLock<wasmtime::Engine> = OnceLock::new();
    ENGINE.get_or_init(wasmtime_engine::new_engine)
}
