//! `poll_oneoff`: how `nanosleep`, `usleep`, `sleep` and `std::thread::sleep` reach the host.
//!
//! Clock subscriptions sleep the guest's thread until the earliest deadline. A guest has no
//! descriptor that can ever make it wait (stdio and files are always ready), so descriptor
//! subscriptions are answered at once: ready, or `EBADF` for a descriptor that is not open.

use super::{finish, Errno, WasiCx, WasiExit, WasiState};
use rustix::time::ClockId;
use std::time::Duration;

/// More subscriptions than this in one call is `ENOTSUP`. `poll()` in wasi-libc asks for two
/// per descriptor and a guest has at most `MAX_OPEN_FDS` of them; the cap bounds the host's
/// work per call.
pub const MAX_POLL_SUBSCRIPTIONS: u32 = 256;

/// `subscription` is 48 bytes on wasm32 (`typenames.witx`): userdata u64 @0, the `eventtype`
/// tag u8 @8 and the union @16, which for `subscription_clock` is id u32 @16, timeout u64 @24,
/// precision u64 @32, flags u16 @40, and for `subscription_fd_readwrite` the fd u32 @16.
const SUBSCRIPTION_SIZE: u32 = 48;
/// `event` is 32 bytes: userdata u64 @0, error u16 @8, type u8 @10, and
/// `event_fd_readwrite` {nbytes u64 @16, flags u16 @24}.
const EVENT_SIZE: u32 = 32;

/// `eventtype` values.
const EVENTTYPE_CLOCK: u8 = 0;
const EVENTTYPE_FD_READ: u8 = 1;
const EVENTTYPE_FD_WRITE: u8 = 2;
/// `subclockflags::subscription_clock_abstime`.
const SUBCLOCK_ABSTIME: u16 = 1;

struct Event {
    userdata: u64,
    error: Errno,
    kind: u8,
}

/// How long until a clock subscription's deadline, in nanoseconds.
fn until_deadline(state: &WasiState, id: u32, timeout: u64, flags: u16) -> Result<u64, Errno> {
    let clock = match id {
        0 => ClockId::Realtime,
        1 => ClockId::Monotonic,
        // Waiting for CPU time to pass on a thread that is asleep would never end.
        2 | 3 => return Err(Errno::NOTSUP),
        _ => return Err(Errno::INVAL),
    };
    if flags & SUBCLOCK_ABSTIME == 0 {
        return Ok(timeout);
    }
    Ok(timeout.saturating_sub(state.clock_now_ns(clock)))
}

/// Which half of a `poll_oneoff` this call is: a sleep the host does (crate::park parks the
/// guest for it) splits it in two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollPhase {
    /// The guest's call: check, answer what is ready, or say how long to sleep first.
    Begin,
    /// The same call again once that sleep is over: report the clocks that are due.
    Slept,
}

/// What the first half of `poll_oneoff` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polled {
    /// Answered (the errno).
    Done(i32),
    /// Nothing is ready: sleep this long, then call again with [`PollPhase::Slept`].
    Sleep(Duration),
}

/// `poll_oneoff` sleeping on the calling thread (where the guest cannot park).
pub fn poll_oneoff_here(
    cx: &mut WasiCx<'_>,
    subscriptions: i32,
    events: i32,
    nsubscriptions: i32,
    nevents: i32,
) -> Result<i32, WasiExit> {
    let args = (subscriptions, events, nsubscriptions, nevents);
    match poll_oneoff(cx, args.0, args.1, args.2, args.3, PollPhase::Begin)? {
        Polled::Done(errno) => Ok(errno),
        Polled::Sleep(span) => {
            std::thread::sleep(span);
            match poll_oneoff(cx, args.0, args.1, args.2, args.3, PollPhase::Slept)? {
                Polled::Done(errno) => Ok(errno),
                Polled::Sleep(_) => unreachable!("the second half never sleeps"),
            }
        }
    }
}

pub fn poll_oneoff(
    cx: &mut WasiCx<'_>,
    subscriptions: i32,
    events: i32,
    nsubscriptions: i32,
    nevents: i32,
    phase: PollPhase,
) -> Result<Polled, WasiExit> {
    if phase == PollPhase::Begin && cx.state.ends_sleeping() {
        return Err(WasiExit(0));
    }
    let mut sleep = None;
    let answered = finish((|| {
        let count = nsubscriptions as u32;
        if count == 0 {
            return Err(Errno::INVAL);
        }
        if count > MAX_POLL_SUBSCRIPTIONS {
            return Err(Errno::NOTSUP);
        }
        let (input, output) = (subscriptions as u32, events as u32);
        // Every pointer is checked before the guest is put to sleep.
        cx.memory.bytes(input, count * SUBSCRIPTION_SIZE)?;
        cx.memory.bytes(output, count * EVENT_SIZE)?;
        cx.memory.bytes(nevents as u32, 4)?;

        let mut ready = Vec::new();
        let mut timers = Vec::new();
        for index in 0..count {
            let at = input + index * SUBSCRIPTION_SIZE;
            let userdata = cx.memory.u64(at)?;
            let kind = cx.memory.u8(at + 8)?;
            let error = match kind {
                EVENTTYPE_CLOCK => {
                    let id = cx.memory.u32(at + 16)?;
                    let timeout = cx.memory.u64(at + 24)?;
                    let flags = cx.memory.u16(at + 40)?;
                    match until_deadline(cx.state, id, timeout, flags) {
                        Ok(remaining) => {
                            timers.push((userdata, remaining));
                            continue;
                        }
                        Err(errno) => errno,
                    }
                }
                EVENTTYPE_FD_READ | EVENTTYPE_FD_WRITE => {
                    let fd = cx.memory.u32(at + 16)? as i32;
                    cx.state.open_fd(fd).err().unwrap_or(Errno::SUCCESS)
                }
                _ => Errno::INVAL,
            };
            ready.push(Event {
                userdata,
                error,
                kind,
            });
        }

        // With something to report now, only timers already due join it; otherwise sleep until
        // the earliest and report every timer due by then.
        let due_within = if ready.is_empty() {
            let soonest = timers.iter().map(|&(_, remaining)| remaining).min();
            let soonest = soonest.unwrap_or(0);
            if phase == PollPhase::Begin && soonest > 0 {
                sleep = Some(Duration::from_nanos(soonest));
                return Ok(());
            }
            soonest
        } else {
            0
        };
        ready.extend(
            timers
                .iter()
                .filter(|&&(_, remaining)| remaining <= due_within)
                .map(|&(userdata, _)| Event {
                    userdata,
                    error: Errno::SUCCESS,
                    kind: EVENTTYPE_CLOCK,
                }),
        );

        for (index, event) in ready.iter().enumerate() {
            let mut record = [0u8; EVENT_SIZE as usize];
            record[0..8].copy_from_slice(&event.userdata.to_le_bytes());
            record[8..10].copy_from_slice(&event.error.0.to_le_bytes());
            record[10] = event.kind;
            // nbytes and flags stay 0: how much is ready is not known, and nothing hangs up.
            cx.memory
                .write(output + index as u32 * EVENT_SIZE, &record)?;
        }
        Ok(cx.memory.put_u32(nevents as u32, ready.len() as u32)?)
    })())?;
    Ok(match sleep {
        Some(span) => Polled::Sleep(span),
        None => Polled::Done(answered),
    })
}
