//! Parking: how a guest waits without keeping its instance, so that a callback runs on whichever
//! thread brings its work (as a native executor lends its turn to the receiving thread), and so
//! that between callbacks the guest is nothing but its memory and globals (what a migration
//! snapshot takes).
//!
//! A guest prepared with Binaryen's Asyncify pass (`roslite wasm build` runs it; docs/wasm.md,
//! "Parking") exports `asyncify_start_unwind` and its three siblings. When its `main` calls a
//! waiting import (an executor spin, a sleep) outside any callback, the import notes what the
//! wait is ([`Park`]) and starts an unwind: every guest function on the call stack saves its
//! locals into a buffer in linear memory and returns, so `_start` returns to the host. The host
//! then waits natively ([`run_main`]) with the instance free: a callback that arrives on a
//! receive thread takes the instance ([`GuestShared::with_resident`]) and runs there. When the
//! wait ends the host rewinds: it calls `_start` again, the guest rebuilds its stack from the
//! buffer down to the same import call, and that call returns what the wait ended with
//! ([`Resumed`]).
//!
//! A guest without Asyncify, or a wait inside a callback, waits inside its import on the
//! guest's own thread, which keeps the instance meanwhile: callbacks that come on other threads
//! wait in the guest's mailbox until then.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::calls::GuestCalls;
use crate::fault::Fault;
use crate::guest::GuestShared;
use crate::wasi::{PollPhase, Polled, WasiExit};

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

/// The guest as the host holds it while its `main` is parked: any thread may lock it and call
/// in. Implemented by each engine for its store.
pub trait Resident: Send {
    /// Runs `body` on the guest, reachable by C ABI callbacks on this thread meanwhile.
    fn enter(&mut self, body: &mut dyn FnMut(&mut dyn GuestCalls));
    /// The module's memory before anything ran (a snapshot stores what differs from it).
    fn initial_memory(&mut self) -> Result<Vec<u8>, String>;
}

/// Runs `body` on `resident`'s guest and returns what it returned.
pub fn enter<R>(resident: &mut dyn Resident, body: impl FnOnce(&mut dyn GuestCalls) -> R) -> R {
    let mut body = Some(body);
    let mut out = None;
    resident.enter(&mut |g| out = Some((body.take().expect("entered once"))(g)));
    out.expect("Resident::enter runs its body")
}

/// Called first by every waiting import, before anything that could return early: when this
/// call is the parked one being rewound, ends the rewind and returns how the wait ended.
pub fn resume(g: &mut dyn GuestCalls) -> Result<Option<Resumed>, Fault> {
    match g.state().resumed.take() {
        Some(resumed) => {
            g.asyncify(Asyncify::StopRewind)?;
            Ok(Some(resumed))
        }
        None => Ok(None),
    }
}

/// Parks the guest for `park` if it can park here (then the import returns at once: its value
/// is not used); false if it cannot, and the import waits itself.
pub fn park(g: &mut dyn GuestCalls, park: Park) -> Result<bool, Fault> {
    if !g.can_park() {
        return Ok(false);
    }
    let buffer = match g.state().saved_stack {
        Some(at) => at,
        None => {
            let at = g.alloc(SAVED_STACK_BYTES)?;
            if at == 0 {
                return Ok(false);
            }
            g.state().saved_stack = Some(at);
            at
        }
    };
    // The buffer's header: where saving continues, and where the buffer ends.
    let header = (|| {
        let (mut memory, _) = g.parts();
        memory.put_u32(buffer, buffer + 8)?;
        memory.put_u32(buffer + 4, buffer + SAVED_STACK_BYTES)
    })();
    header.map_err(|e| Fault::Abi(format!("the buffer for the parked stack: {e}")))?;
    g.state().park = Some(park);
    g.asyncify(Asyncify::StartUnwind(buffer))?;
    Ok(true)
}

/// A WASI call that may sleep (`poll_oneoff`): `call` is its body, in the phase given. A sleep
/// it asks for parks the guest if it can, else happens here.
pub fn sleeping_call(
    g: &mut dyn GuestCalls,
    mut call: impl FnMut(&mut dyn GuestCalls, PollPhase) -> Result<Polled, WasiExit>,
) -> Result<i32, Fault> {
    fn after_sleep(
        g: &mut dyn GuestCalls,
        call: &mut impl FnMut(&mut dyn GuestCalls, PollPhase) -> Result<Polled, WasiExit>,
    ) -> Result<i32, Fault> {
        match call(g, PollPhase::Slept) {
            Ok(Polled::Done(errno)) => Ok(errno),
            Ok(Polled::Sleep(_)) => Err(Fault::Abi("poll_oneoff asked to sleep twice".into())),
            Err(WasiExit(code)) => Err(Fault::Exit(code as i32)),
        }
    }
    match resume(g)? {
        Some(Resumed::Slept) => return after_sleep(g, &mut call),
        Some(Resumed::Spun(_)) => {
            return Err(Fault::Abi(
                "a sleep was resumed from a spin: the guest's stack does not match its park".into(),
            ))
        }
        None => {}
    }
    let span = match call(g, PollPhase::Begin) {
        Ok(Polled::Done(errno)) => return Ok(errno),
        Ok(Polled::Sleep(span)) => span,
        Err(WasiExit(code)) => return Err(Fault::Exit(code as i32)),
    };
    if park(
        g,
        Park::Sleep {
            until: Instant::now() + span,
        },
    )? {
        return Ok(0);
    }
    std::thread::sleep(span);
    after_sleep(g, &mut call)
}

/// Runs a guest's `main` to its end, parking it at each wait it makes: the caller's thread
/// waits natively meanwhile, and the guest stays in `resident` for callbacks on any thread.
/// `parked`: a restored guest's wait and saved stack, to resume from instead of starting.
pub fn run_main(
    resident: &Arc<Mutex<dyn Resident>>,
    shared: &Arc<GuestShared>,
    parked: Option<(Park, u32)>,
) -> Result<(), Fault> {
    let lock = || resident.lock().unwrap_or_else(PoisonError::into_inner);
    let mut next = match parked {
        Some((park, buffer)) => {
            enter(&mut *lock(), |g| g.state().parked = Some(park.clone()));
            Some((park, buffer))
        }
        None => started(&mut *lock(), |g| g.start())?,
    };
    while let Some((park, buffer)) = next {
        shared
            .parks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let resumed = wait(park, resident, shared)?;
        // A migration may hold the guest here; one that succeeded ends it on this host.
        if shared.wait_while_frozen() {
            return Ok(());
        }
        next = started(&mut *lock(), |g| {
            g.state().parked = None;
            g.state().resumed = Some(resumed);
            g.asyncify(Asyncify::StartRewind(buffer))?;
            g.start()
        })?;
    }
    Ok(())
}

/// Runs `start` (a first run or a rewind of `_start`) and tells how it returned: `main` ended
/// (None), or the guest unwound to park (the wait and the buffer its stack is saved in).
fn started(
    resident: &mut dyn Resident,
    start: impl FnOnce(&mut dyn GuestCalls) -> Result<(), Fault>,
) -> Result<Option<(Park, u32)>, Fault> {
    enter(resident, |g| {
        start(g)?;
        let Some(park) = g.state().park.take() else {
            return Ok(None);
        };
        g.asyncify(Asyncify::StopUnwind)?;
        let buffer = g.state().saved_stack.expect("a park saved the stack");
        g.state().parked = Some(park.clone());
        Ok(Some((park, buffer)))
    })
}

/// The wait of a parked guest, on the thread that runs its `main`, with the instance free.
fn wait(
    park: Park,
    resident: &Arc<Mutex<dyn Resident>>,
    shared: &Arc<GuestShared>,
) -> Result<Resumed, Fault> {
    // Work that waited for the guest while it was busy, and faults of callbacks that ran on
    // other threads meanwhile.
    let mut fault = None;
    let mail_ran = std::cell::Cell::new(false);
    let mut attend = || -> bool {
        if shared.take_fault_flag() {
            let mut slot = resident.lock().unwrap_or_else(PoisonError::into_inner);
            fault = enter(&mut *slot, |g| g.state().fault.take());
            return false;
        }
        if shared.has_mail() && !shared.is_frozen() {
            if let Ok(mut slot) = resident.try_lock() {
                match enter(&mut *slot, crate::imports::run_mail) {
                    Ok(ran) => mail_ran.set(mail_ran.get() | ran),
                    Err(f) => {
                        fault = Some(f);
                        return false;
                    }
                }
            }
        }
        !shared.ends_parked_wait()
    };
    let resumed = match park {
        Park::Sleep { until } => {
            shared.sleep_until(until);
            Resumed::Slept
        }
        Park::Spin {
            executor,
            until,
            once,
        } => {
            let spinner = match roslite_c::handles::executor(executor) {
                Ok(spinner) => spinner,
                Err(e) => return Ok(Resumed::Spun(Err((e.status, e.message)))),
            };
            let duration =
                |until: Option<Instant>| until.map(|u| u.saturating_duration_since(Instant::now()));
            if once {
                let mut ran = false;
                while !ran && attend() && !mail_ran.get() {
                    let left = duration(until);
                    if left.is_some_and(|l| l.is_zero()) {
                        break;
                    }
                    ran = spinner.spin_once_or_wake(left);
                }
                Resumed::Spun(Ok(ran || mail_ran.get()))
            } else {
                spinner.spin_while(duration(until), &mut attend);
                Resumed::Spun(Ok(false))
            }
        }
    };
    match fault {
        Some(fault) => Err(fault),
        None => Ok(resumed),
    }
}

/// How long a parked sleep waits at most before it looks at the stop flag again (a stop wakes
/// it at once; this bounds a missed wake-up).
pub const SLEEP_SLICE: Duration = Duration::from_millis(100);
