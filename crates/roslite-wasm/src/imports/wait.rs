//! The guest's side of parking (crate::park): a waiting import first asks whether it is the
//! one being rewound ([`resume`]), then parks the guest ([`park`]) or, where it cannot, waits
//! itself; `poll_oneoff` goes through [`sleeping_call`].

use std::time::Instant;

use crate::fault::Fault;
use crate::guest::GuestCalls;
use crate::waiting::{Asyncify, Park, Resumed, SAVED_STACK_BYTES};
use crate::wasi::{PollPhase, Polled, WasiExit};

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
    g.state().parked = Some(park);
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
