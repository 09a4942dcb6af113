//! Executors: spinning runs the guest's callbacks on its own thread, and the mail that
//! came for it from other threads.

use super::wait as park;
use super::*;

pub fn executor_create(g: &mut dyn GuestCalls, context: i64, out: i32) -> ImportResult {
    let outcome = (|| {
        let context = native(g, context)?;
        check_out(g, out, 8, "executor")?;
        let mut executor = 0;
        // SAFETY: a valid out-pointer.
        let status =
            unsafe { roslite_c::executor::roslite_executor_create(context, &mut executor) };
        if status == ROSLITE_OK {
            if let Ok(spinner) = roslite_c::handles::executor(executor) {
                // A guest that cannot park keeps its instance on its own thread while it
                // spins: its callbacks must run there. One that parks lends its turn, as a
                // native node does (crate::park).
                if !g.can_park_at_all() {
                    spinner.keep_callbacks_on_own_threads();
                }
                g.state()
                    .shared
                    .executors
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(spinner);
            }
        }
        hand_out(g, status, executor, out)
    })();
    finish(g, outcome)
}

pub fn executor_add_node(g: &mut dyn GuestCalls, executor: i64, node: i64) -> ImportResult {
    let outcome = (|| {
        let executor = native(g, executor)?;
        let node = native(g, node)?;
        Ok(roslite_c::executor::roslite_executor_add_node(
            executor, node,
        ))
    })();
    finish(g, outcome)
}

/// Runs the callbacks that waited in the guest's mailbox while it was busy; whether any ran.
pub(crate) fn run_mail(g: &mut dyn GuestCalls) -> Result<bool, Fault> {
    let shared = g.state().shared.clone();
    let mut ran = false;
    while let Some(mail) = shared.take_mail() {
        ran = true;
        if let Err(fault) = deliver_mail(g, mail) {
            let state = g.state();
            state.dead = true;
            return Err(fault);
        }
        if let Some(fault) = g.state().fault.take() {
            return Err(fault);
        }
    }
    Ok(ran)
}

/// Spins `executor` once for at most `timeout` (None: until work comes), after the mail;
/// whether a callback ran, or the guest's fault.
pub(super) fn spin_once(
    g: &mut dyn GuestCalls,
    executor: u64,
    timeout: Option<Duration>,
) -> Result<Step<bool>, Fault> {
    if run_mail(g)? {
        return Ok(Ok(true));
    }
    let mut ran = false;
    let timeout_ns = timeout.map_or(-1, |t| i64::try_from(t.as_nanos()).unwrap_or(i64::MAX));
    // SAFETY: a valid out-pointer.
    let status =
        unsafe { roslite_c::executor::roslite_executor_spin_once(executor, timeout_ns, &mut ran) };
    if let Some(fault) = g.state().fault.take() {
        return Err(fault);
    }
    if status != ROSLITE_OK {
        return Ok(Err(Refusal(
            status,
            roslite_c::status::last_error_message(),
        )));
    }
    Ok(Ok(ran || run_mail(g)?))
}

/// Whether the guest may keep spinning: it did not shut down, nor did the shared context.
pub(super) fn running(g: &mut dyn GuestCalls) -> bool {
    !g.state().shared.is_stopping()
}

/// Spins until `end` (None: until the guest or the context stops): parked if the guest can
/// park (crate::park), else here.
pub(super) fn spin_until(
    g: &mut dyn GuestCalls,
    executor: i64,
    end: Option<Instant>,
) -> ImportResult {
    if let Some(resumed) = park::resume(g)? {
        if let Err(r) = spun(resumed)? {
            return finish(g, Err(r));
        }
    } else {
        let executor = match native(g, executor) {
            Ok(e) => e,
            Err(r) => return finish(g, Err(r)),
        };
        let wait = Park::Spin {
            executor,
            until: end,
            once: false,
        };
        if park::park(g, wait)? {
            return Ok(ROSLITE_OK);
        }
        while running(g) {
            let timeout = match end {
                Some(end) => match end.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => break,
                },
                None => None,
            };
            if let Err(r) = spin_once(g, executor, timeout)? {
                return finish(g, Err(r));
            }
        }
    }
    // Spinning for a time (osDelay, spin_for) after the host stopped: a node that waits on
    // instead of returning from `main` is ended here, as `Fault::Stopped` says.
    if end.is_some() && g.state().shared.ends_waiting() {
        return Err(Fault::Stopped);
    }
    finish(g, Ok(ROSLITE_OK))
}

/// What a rewound spin returns: whether a callback ran, or the C ABI's refusal.
fn spun(resumed: Resumed) -> Result<Step<bool>, Fault> {
    match resumed {
        Resumed::Spun(Ok(ran)) => Ok(Ok(ran)),
        Resumed::Spun(Err((status, message))) => Ok(Err(Refusal(status, message))),
        Resumed::Slept => Err(Fault::Abi(
            "a spin was resumed from a sleep: the guest's stack does not match its park".into(),
        )),
    }
}

pub fn executor_spin(g: &mut dyn GuestCalls, executor: i64) -> ImportResult {
    spin_until(g, executor, None)
}

pub fn executor_spin_threads(g: &mut dyn GuestCalls, executor: i64, threads: i32) -> ImportResult {
    // A guest has one thread: its callbacks run on it, one at a time (which a multi-threaded
    // executor also allows).
    if threads <= 0 {
        return finish(
            g,
            Err(Refusal(
                ROSLITE_INVALID_ARGUMENT,
                "threads is 0; give at least 1".into(),
            )),
        );
    }
    spin_until(g, executor, None)
}

pub fn executor_spin_some(g: &mut dyn GuestCalls, executor: i64) -> ImportResult {
    let executor = match native(g, executor) {
        Ok(e) => e,
        Err(r) => return finish(g, Err(r)),
    };
    run_mail(g)?;
    let status = roslite_c::executor::roslite_executor_spin_some(executor);
    if let Some(fault) = g.state().fault.take() {
        return Err(fault);
    }
    run_mail(g)?;
    finish(g, Ok(status))
}

pub fn executor_spin_once(
    g: &mut dyn GuestCalls,
    executor: i64,
    timeout_ns: i64,
    ran: i32,
) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let did = if let Some(resumed) = park::resume(g)? {
            match spun(resumed)? {
                Ok(did) => did,
                Err(r) => return Ok(Err(r)),
            }
        } else {
            let executor = match native(g, executor) {
                Ok(e) => e,
                Err(r) => return Ok(Err(r)),
            };
            if !running(g) {
                return Ok(Err(Refusal(
                    ROSLITE_SHUTDOWN,
                    "the node's context was shut down".into(),
                )));
            }
            let timeout = (timeout_ns >= 0).then(|| Duration::from_nanos(timeout_ns as u64));
            // A spin that may wait parks; one that only looks (timeout 0) does not.
            let wait = Park::Spin {
                executor,
                until: timeout.map(|t| Instant::now() + t),
                once: true,
            };
            if !timeout.is_some_and(|t| t.is_zero()) && park::park(g, wait)? {
                return Ok(Ok(ROSLITE_OK));
            }
            match spin_once(g, executor, timeout)? {
                Ok(did) => did,
                Err(r) => return Ok(Err(r)),
            }
        };
        if ran != 0 {
            if let Err(e) = g.parts().0.put_u8(pointer(ran), u8::from(did)) {
                return Ok(Err(e.into()));
            }
        }
        Ok(Ok(ROSLITE_OK))
    })();
    finish(g, outcome?)
}

pub fn executor_spin_for(g: &mut dyn GuestCalls, executor: i64, duration_ns: i64) -> ImportResult {
    if duration_ns < 0 {
        return finish(
            g,
            Err(Refusal(
                ROSLITE_INVALID_ARGUMENT,
                format!("duration_ns is {duration_ns}; give 0 or more"),
            )),
        );
    }
    spin_until(
        g,
        executor,
        Some(Instant::now() + Duration::from_nanos(duration_ns as u64)),
    )
}
