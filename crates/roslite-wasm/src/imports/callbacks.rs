//! The C ABI's callbacks into the guest: each finds its guest ([`into_guest`]) and dispatches
//! into it, or leaves the work in its mailbox while it is busy; a fault is kept for the import
//! or the parked wait that was running to carry out.

use super::*;
use std::sync::atomic::Ordering;

/// Where a callback went.
pub(super) enum Reached<R> {
    /// Into the guest (None: it was dead, or the callback faulted, which is kept).
    Ran(Option<R>),
    /// The guest is busy (its `main` runs, or another callback holds it): the caller defers
    /// the work to its mailbox.
    Busy,
}

/// Runs `deliver` on the guest `user` leads to: through this thread's stack if an import of
/// that guest runs here (a callback inside a spin of the guest), else on its instance if that
/// is free (its `main` parked). A fault is kept for the import or the parked wait to carry
/// out.
///
/// # Safety
/// `user` is a [`SlotTarget`] made by [`crate::guest::GuestState::target`].
pub(super) unsafe fn into_guest<R>(
    user: *mut c_void,
    deliver: impl FnOnce(&mut dyn GuestCalls, &SlotTarget) -> Result<R, Fault>,
) -> Reached<R> {
    // SAFETY: the caller's promise.
    let target = unsafe { &*(user as *const SlotTarget) };
    if target.shared.replaying.load(Ordering::SeqCst) {
        // The journal replays into an instance whose `main` has not run (crate::journal::
        // replay): the callback waits for the guest that the snapshot brings.
        return Reached::Busy;
    }
    let current = is_current(&target.shared);
    let run = |g: &mut dyn GuestCalls| {
        if g.state().dead {
            return (None, false);
        }
        // Work that waited in the mailbox (a restored guest's messages that came while it
        // moved) goes first: run after it, a later message would make each one it passed look
        // given already to the exactly-once check, and the two would arrive out of order.
        let waited = if current {
            Ok(false)
        } else {
            super::executor::run_mail(g)
        };
        match waited.and_then(|_| deliver(g, target)) {
            Ok(r) => (Some(r), false),
            Err(fault) => {
                let state = g.state();
                state.dead = true;
                state.fault = Some(fault);
                (None, true)
            }
        }
    };
    if current {
        return Reached::Ran(with_guest(&target.shared, run).and_then(|(r, _)| r));
    }
    match target.shared.with_resident(run) {
        Some((r, faulted)) => {
            if faulted {
                target.shared.note_fault();
            }
            Reached::Ran(r)
        }
        None => Reached::Busy,
    }
}

/// The slot target behind `user`.
///
/// # Safety
/// As [`into_guest`].
unsafe fn target<'a>(user: *mut c_void) -> &'a SlotTarget {
    // SAFETY: the caller's promise.
    unsafe { &*(user as *const SlotTarget) }
}

/// Runs a callback that waited in the guest's mailbox.
pub(crate) fn deliver_mail(g: &mut dyn GuestCalls, mail: Deferred) -> Result<(), Fault> {
    match mail {
        Deferred::Message {
            slot,
            bytes,
            info,
            description,
        } => deliver_message(g, slot, &bytes, &info, &description),
        Deferred::Timer { slot, description } => g
            .dispatch(slot, CallbackKind::Timer, [0; 4], &description)
            .map(drop),
        Deferred::Request {
            slot,
            bytes,
            responder,
            description,
        } => deliver_request(g, slot, &bytes, responder, &description),
        Deferred::Response {
            slot,
            status,
            bytes,
        } => deliver_response(g, slot, status, bytes.as_deref()),
        Deferred::Event {
            slot,
            kind,
            args,
            description,
        } => g.dispatch(slot, kind, args, &description).map(drop),
    }
}

pub(super) fn deliver_message(
    g: &mut dyn GuestCalls,
    slot: i32,
    bytes: &[u8],
    info: &CMessageInfo,
    during: &str,
) -> Result<(), Fault> {
    // Each message once: after a move, what the node had on its old host is not given again.
    if !g
        .state()
        .delivered
        .admit(slot, info.publisher_gid, info.publication_sequence_number)
    {
        return Ok(());
    }
    let info_size = layout::MESSAGE_INFO_SIZE;
    let at = g.alloc(info_size + bytes.len() as u32)?;
    if at == 0 {
        return Err(Fault::Abi(format!(
            "roslite_guest_alloc had no memory for a {}-byte message",
            bytes.len()
        )));
    }
    {
        let (mut memory, _) = g.parts();
        let written = (|| {
            memory.put_i64(at, info.source_timestamp_ns)?;
            memory.put_i64(at + 8, info.received_timestamp_ns)?;
            memory.put_u64(at + 16, info.publication_sequence_number)?;
            memory.bytes_mut(at + 24, 8)?.fill(0);
            memory.put_u8(at + 24, u8::from(info.from_intra_process))?;
            memory.write(at + 25, &info.publisher_gid)?;
            memory.write(at + info_size, bytes)
        })();
        written.map_err(|e| {
            Fault::Abi(format!(
                "roslite_guest_alloc gave memory outside the guest: {e}"
            ))
        })?;
    }
    g.dispatch(
        slot,
        CallbackKind::Message,
        [
            i64::from(at + info_size),
            bytes.len() as i64,
            i64::from(at),
            0,
        ],
        during,
    )?;
    g.free(at)
}

pub(super) unsafe extern "C" fn on_message(
    user: *mut c_void,
    cdr: *const u8,
    length: usize,
    info: *const CMessageInfo,
) {
    // SAFETY: the C ABI passes `length` bytes and an info, valid during the call.
    let (bytes, info) = unsafe { (std::slice::from_raw_parts(cdr, length), &*info) };
    // SAFETY: `user` is a slot target (it was registered so).
    let reached = unsafe {
        into_guest(user, |g, t| {
            deliver_message(g, t.slot, bytes, info, &t.description)
        })
    };
    if let Reached::Busy = reached {
        // SAFETY: as above.
        let t = unsafe { target(user) };
        t.shared.post(Deferred::Message {
            slot: t.slot,
            bytes: bytes.to_vec(),
            info: *info,
            description: t.description.clone(),
        });
    }
}

pub(super) unsafe extern "C" fn on_timer(user: *mut c_void) {
    // SAFETY: `user` is a slot target.
    let reached = unsafe {
        into_guest(user, |g, t| {
            g.dispatch(t.slot, CallbackKind::Timer, [0; 4], &t.description)
        })
    };
    if let Reached::Busy = reached {
        // SAFETY: as above.
        let t = unsafe { target(user) };
        t.shared.post(Deferred::Timer {
            slot: t.slot,
            description: t.description.clone(),
        });
    }
}

pub(super) fn deliver_request(
    g: &mut dyn GuestCalls,
    slot: i32,
    bytes: &[u8],
    responder: u64,
    description: &str,
) -> Result<(), Fault> {
    // Each request once: after a move, one the node took on its old host (and answered
    // there) is not given again; its responder is dropped unanswered.
    if let Ok(Some(id)) = roslite_c::handles::responder_request_id(responder) {
        let new = g.state().requests_taken.admit(
            slot,
            id.writer_guid,
            u64::try_from(id.sequence_number).unwrap_or(0),
        );
        if !new {
            roslite_c::handles::remove(responder).ok();
            return Ok(());
        }
    }
    let guest_responder = g.state().handles.insert(responder);
    let state = g.state();
    // Those answered or released are gone from the guest's handles: forget them.
    let handles = &state.handles;
    state
        .responder_slots
        .retain(|&handle, _| handles.native(handle).is_some());
    state.responder_slots.insert(guest_responder as i64, slot);
    let at = g.alloc(bytes.len().max(1) as u32)?;
    if at == 0 || g.parts().0.write(at, bytes).is_err() {
        return Err(Fault::Abi(
            "roslite_guest_alloc had no memory for a request".into(),
        ));
    }
    g.dispatch(
        slot,
        CallbackKind::Request,
        [i64::from(at), bytes.len() as i64, guest_responder as i64, 0],
        description,
    )?;
    g.free(at)
}

pub(super) unsafe extern "C" fn on_request(
    user: *mut c_void,
    request: *const u8,
    length: usize,
    responder: u64,
) {
    // SAFETY: the C ABI passes `length` bytes, valid during the call.
    let bytes = unsafe { std::slice::from_raw_parts(request, length) };
    // SAFETY: `user` is a slot target.
    let reached = unsafe {
        into_guest(user, |g, t| {
            deliver_request(g, t.slot, bytes, responder, &t.description)
        })
    };
    match reached {
        Reached::Ran(Some(())) => {}
        // Unanswerable: the client times out, as when a C server drops a responder.
        Reached::Ran(None) => {
            roslite_c::handles::remove(responder).ok();
        }
        Reached::Busy => {
            // SAFETY: as above.
            let t = unsafe { target(user) };
            t.shared.post(Deferred::Request {
                slot: t.slot,
                bytes: bytes.to_vec(),
                responder,
                description: t.description.clone(),
            });
        }
    }
}

pub(super) fn deliver_response(
    g: &mut dyn GuestCalls,
    slot: i32,
    status: i32,
    bytes: Option<&[u8]>,
) -> Result<(), Fault> {
    let (at, n) = match bytes {
        Some(b) => {
            let at = g.alloc(b.len().max(1) as u32)?;
            if at == 0 || g.parts().0.write(at, b).is_err() {
                return Err(Fault::Abi(
                    "roslite_guest_alloc had no memory for a response".into(),
                ));
            }
            (at, b.len())
        }
        None => (0, 0),
    };
    g.dispatch(
        slot,
        CallbackKind::Response,
        [i64::from(status), i64::from(at), n as i64, 0],
        "response callback",
    )?;
    if at != 0 {
        g.free(at)?;
    }
    Ok(())
}

pub(super) unsafe extern "C" fn on_response(
    user: *mut c_void,
    status: i32,
    response: *const u8,
    length: usize,
) {
    let bytes = (!response.is_null()).then(|| {
        // SAFETY: the C ABI passes `length` bytes, valid during the call.
        unsafe { std::slice::from_raw_parts(response, length) }
    });
    // SAFETY: `user` is a slot target.
    let reached = unsafe { into_guest(user, |g, t| deliver_response(g, t.slot, status, bytes)) };
    if let Reached::Busy = reached {
        // SAFETY: as above.
        let t = unsafe { target(user) };
        t.shared.post(Deferred::Response {
            slot: t.slot,
            status,
            bytes: bytes.map(<[u8]>::to_vec),
        });
    }
}

/// A status event: dispatched, or deferred while the guest is busy.
///
/// # Safety
/// `user` is a slot target.
unsafe fn on_event(user: *mut c_void, kind: CallbackKind, args: [i64; 4]) {
    // SAFETY: the caller's promise.
    let reached =
        unsafe { into_guest(user, |g, t| g.dispatch(t.slot, kind, args, &t.description)) };
    if let Reached::Busy = reached {
        // SAFETY: as above.
        let t = unsafe { target(user) };
        t.shared.post(Deferred::Event {
            slot: t.slot,
            kind,
            args,
            description: t.description.clone(),
        });
    }
}

pub(super) unsafe extern "C" fn on_message_lost(user: *mut c_void, total: u64, change: u64) {
    // SAFETY: `user` is a slot target.
    unsafe {
        on_event(
            user,
            CallbackKind::MessageLost,
            [total as i64, change as i64, 0, 0],
        )
    };
}

pub(super) unsafe extern "C" fn on_matched_event(
    user: *mut c_void,
    current: i32,
    change: i32,
    total: i32,
) {
    // SAFETY: `user` is a slot target.
    unsafe {
        on_event(
            user,
            CallbackKind::Matched,
            [current.into(), change.into(), total.into(), 0],
        )
    };
}

pub(super) unsafe extern "C" fn on_incompatible_qos_event(
    user: *mut c_void,
    total: i32,
    policy: i32,
) {
    // SAFETY: `user` is a slot target.
    unsafe {
        on_event(
            user,
            CallbackKind::IncompatibleQos,
            [total.into(), policy.into(), 0, 0],
        )
    };
}

pub(super) unsafe extern "C" fn on_parameters(
    user: *mut c_void,
    names: *const *const c_char,
    values: *const CParameterValue,
    count: usize,
    reason: *mut c_char,
    reason_capacity: usize,
) -> bool {
    let refuse = |text: &str| {
        if reason_capacity > 0 && !reason.is_null() {
            let n = text.len().min(reason_capacity - 1);
            // SAFETY: `reason` holds `reason_capacity` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), reason.cast::<u8>(), n);
                *reason.add(n) = 0;
            }
        }
        false
    };
    // SAFETY: the C ABI passes `count` names and values, valid during the call.
    let (names, values) = unsafe {
        (
            std::slice::from_raw_parts(names, count),
            std::slice::from_raw_parts(values, count),
        )
    };
    // SAFETY: `user` is a slot target.
    if unsafe { target(user) }
        .shared
        .replaying
        .load(Ordering::SeqCst)
    {
        // A set the journal replays: the guest's callbacks accepted it on the host it came
        // from (the journal keeps no other), and what they changed in the guest comes with
        // its memory.
        return true;
    }
    // SAFETY: `user` is a slot target.
    let outcome = unsafe {
        into_guest(user, |g, t| {
            // Everything handed over is freed after the call (docs/wasm.md, dispatch kinds).
            g.state().allocations = Some(Vec::new());
            let outcome = parameters_into_guest(g, t, names, values, count);
            for at in g.state().allocations.take().unwrap_or_default() {
                g.free(at)?;
            }
            outcome
        })
    };
    match outcome {
        Reached::Ran(Some((true, _))) => true,
        Reached::Ran(Some((false, text))) => refuse(&text),
        Reached::Ran(None) => refuse("the node's WebAssembly instance stopped"),
        Reached::Busy => refuse(
            "the node's WebAssembly instance is busy (its main runs and does not wait in a spin): try again",
        ),
    }
}

pub(super) fn parameters_into_guest(
    g: &mut dyn GuestCalls,
    t: &SlotTarget,
    names: &[*const c_char],
    values: &[CParameterValue],
    count: usize,
) -> Result<(bool, String), Fault> {
    {
        {
            let name_bytes: Vec<Vec<u8>> = names
                .iter()
                // SAFETY: the C ABI's strings.
                .map(|n| unsafe { CStr::from_ptr(*n) }.to_bytes().to_vec())
                .collect();
            let names_at = guest_strings(g, &name_bytes)?;
            let values_at = guest_alloc(g, layout::PARAMETER_VALUE_SIZE * count.max(1) as u32)?;
            let reason_at = guest_alloc(g, REASON_CAPACITY)?;
            if values_at == 0 || reason_at == 0 {
                return Err(Fault::Abi(
                    "roslite_guest_alloc had no memory for parameters".into(),
                ));
            }
            for (i, value) in values.iter().enumerate() {
                write_value(
                    g,
                    values_at + layout::PARAMETER_VALUE_SIZE * i as u32,
                    value,
                )?
                .map_err(|e| Fault::Abi(e.to_string()))?;
            }
            g.parts()
                .0
                .put_u8(reason_at, 0)
                .map_err(|e| Fault::Abi(e.to_string()))?;
            // Allocations the guest makes inside the callback are its own, not these.
            let handed_over = g.state().allocations.take();
            let accepted = g.dispatch(
                t.slot,
                CallbackKind::Parameters,
                [
                    i64::from(names_at),
                    i64::from(values_at),
                    count as i64,
                    i64::from(reason_at),
                ],
                &t.description,
            );
            g.state().allocations = handed_over;
            let accepted = match accepted? {
                0 => false,
                1 => true,
                other => {
                    return Ok((
                        false,
                        format!(
                            "the node's {} answered {other} (slot {} is not its callback)",
                            t.description, t.slot
                        ),
                    ))
                }
            };
            let text = g
                .parts()
                .0
                .c_string(reason_at, REASON_CAPACITY as usize)
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            Ok((accepted, text))
        }
    }
}
