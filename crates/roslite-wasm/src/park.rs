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
use std::time::Instant;

use crate::fault::Fault;
use crate::guest::{enter_resident as enter, GuestCalls, GuestShared, Resident};
use crate::waiting::{Asyncify, Park, Resumed};

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
        // `parked` is None while `main` runs: set again, it unwound to park.
        let Some(park) = g.state().parked.clone() else {
            return Ok(None);
        };
        g.asyncify(Asyncify::StopUnwind)?;
        let buffer = g.state().saved_stack.expect("a park saved the stack");
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
