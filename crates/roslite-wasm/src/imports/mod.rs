//! The `roslite_v1` imports: each reads what the guest passed from its memory, maps its
//! handles, calls the C ABI function of the same name, and writes the results back. So a Wasm
//! node gets exactly the C ABI's checks, errors and behaviour; what differs is only where the
//! bytes live, and that callbacks come back as dispatches into the guest.
//!
//! Every import returns the C ABI's status. A pointer outside the guest's memory, or a handle
//! the guest does not hold, is `ROSLITE_INVALID_ARGUMENT` or `ROSLITE_INVALID_HANDLE` with a
//! message for `last_error`; only a fault inside a callback (a trap, a deadline) ends the
//! guest, as an `Err`.

use std::ffi::{c_char, c_void, CStr, CString};
use std::time::{Duration, Instant};

use roslite_c::client::{CBuffer, CServiceType};
use roslite_c::convert::{CMessageInfo, CQos, CType};
use roslite_c::events::CNames;
use roslite_c::params::CParameterValue;
use roslite_c::{ROSLITE_INVALID_ARGUMENT, ROSLITE_INVALID_HANDLE, ROSLITE_OK, ROSLITE_SHUTDOWN};

use crate::abi::{layout, CallbackKind, REASON_CAPACITY};
use crate::calls::{is_current, with_guest};
use crate::fault::Fault;
use crate::guest::GuestCalls;
use crate::guest::{Deferred, SlotTarget};
use crate::memory::{GuestMemory, OutOfBounds};
use crate::waiting::{Park, Resumed};

pub type ImportResult = Result<i32, Fault>;

/// The longest string (name, topic, log message) a guest may pass.
pub(super) const STRING_LIMIT: usize = 1 << 20;
/// The longest fully qualified name or logger name copied back.
pub(super) const NAME_CAPACITY_LIMIT: u32 = 1 << 16;

/// A refused call: its status and message, kept for `last_error`.
pub(super) struct Refusal(i32, String);

impl From<OutOfBounds> for Refusal {
    fn from(e: OutOfBounds) -> Self {
        Refusal(ROSLITE_INVALID_ARGUMENT, e.to_string())
    }
}

pub(super) type Step<T> = Result<T, Refusal>;

/// Turns an import body's outcome into its status, noting the message of a refusal or of a
/// failed C ABI call, and carries a fault raised by a callback during the call out.
pub(super) fn finish(g: &mut dyn GuestCalls, outcome: Step<i32>) -> ImportResult {
    let state = g.state();
    if let Some(fault) = state.fault.take() {
        return Err(fault);
    }
    match outcome {
        Ok(ROSLITE_OK) => Ok(ROSLITE_OK),
        Ok(status) => {
            state.last_error = roslite_c::status::last_error_message();
            Ok(status)
        }
        Err(Refusal(status, message)) => {
            state.last_error = message;
            Ok(status)
        }
    }
}

pub(super) fn pointer(value: i32) -> u32 {
    value as u32
}

/// A guest string (None for a null pointer), copied out.
pub(super) fn string(g: &mut dyn GuestCalls, at: i32, what: &str) -> Step<Option<CString>> {
    let (memory, _) = g.parts();
    let bytes = memory
        .c_string(pointer(at), STRING_LIMIT)
        .map_err(|e| Refusal(ROSLITE_INVALID_ARGUMENT, format!("{what}: {e}")))?;
    Ok(bytes.map(|b| CString::new(b).expect("no NUL before the end")))
}

pub(super) fn native(g: &mut dyn GuestCalls, handle: i64) -> Step<u64> {
    g.state().handles.native(handle).ok_or_else(|| {
        Refusal(
            ROSLITE_INVALID_HANDLE,
            format!("{handle} is not a handle this node holds (released, or never created)"),
        )
    })
}

pub(super) fn optional(c: &Option<CString>) -> *const c_char {
    c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

/// Puts a new native object's handle in the guest's table and writes the guest's number.
pub(super) fn hand_out(g: &mut dyn GuestCalls, status: i32, native: u64, out: i32) -> Step<i32> {
    if status != ROSLITE_OK {
        return Ok(status);
    }
    let (mut memory, state) = g.parts();
    let guest = state.handles.insert(native);
    if let Err(e) = memory.put_u64(pointer(out), guest) {
        state.handles.remove(guest as i64);
        roslite_c::handles::remove(native).ok();
        return Err(e.into());
    }
    let kind = roslite_c::handles::with(native, "endpoint", |o| match o {
        roslite_c::handles::Object::Publisher(_) | roslite_c::handles::Object::Subscription(_) => {
            Some(&state.shared.endpoints)
        }
        roslite_c::handles::Object::Service(_) => Some(&state.shared.services),
        _ => None,
    });
    if let Ok(list) = kind {
        list.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(native);
    }
    Ok(ROSLITE_OK)
}

pub(super) fn check_out(g: &mut dyn GuestCalls, out: i32, size: u32, what: &str) -> Step<()> {
    let (memory, _) = g.parts();
    if out == 0 {
        return Err(Refusal(ROSLITE_INVALID_ARGUMENT, format!("{what} is NULL")));
    }
    memory.bytes(pointer(out), size)?;
    Ok(())
}

pub(super) fn read_qos(memory: &GuestMemory<'_>, at: u32) -> Result<CQos, OutOfBounds> {
    Ok(CQos {
        history: memory.i32(at)?,
        depth: memory.u32(at + 4)?,
        reliability: memory.i32(at + 8)?,
        durability: memory.i32(at + 12)?,
        deadline_ns: memory.i64(at + 16)?,
        lifespan_ns: memory.i64(at + 24)?,
        liveliness: memory.i32(at + 32)?,
        liveliness_lease_ns: memory.i64(at + 40)?,
    })
}

pub(super) fn write_qos(
    memory: &mut GuestMemory<'_>,
    at: u32,
    q: &CQos,
) -> Result<(), OutOfBounds> {
    memory.bytes_mut(at, layout::QOS_SIZE)?.fill(0);
    memory.put_i32(at, q.history)?;
    memory.put_u32(at + 4, q.depth)?;
    memory.put_i32(at + 8, q.reliability)?;
    memory.put_i32(at + 12, q.durability)?;
    memory.put_i64(at + 16, q.deadline_ns)?;
    memory.put_i64(at + 24, q.lifespan_ns)?;
    memory.put_i32(at + 32, q.liveliness)?;
    memory.put_i64(at + 40, q.liveliness_lease_ns)
}

/// A QoS the guest passed (None for NULL).
pub(super) fn qos(g: &mut dyn GuestCalls, at: i32) -> Step<Option<CQos>> {
    if at == 0 {
        return Ok(None);
    }
    let (memory, _) = g.parts();
    Ok(Some(read_qos(&memory, pointer(at))?))
}

/// A message type the guest passed: (name, hash).
pub(super) fn message_type(
    g: &mut dyn GuestCalls,
    at: i32,
) -> Step<Option<(Option<CString>, Option<CString>)>> {
    if at == 0 {
        return Ok(None);
    }
    let (name, hash) = {
        let (memory, _) = g.parts();
        (memory.u32(pointer(at))?, memory.u32(pointer(at) + 4)?)
    };
    Ok(Some((
        string(g, name as i32, "type name")?,
        string(g, hash as i32, "type hash")?,
    )))
}

pub(super) type ServiceTypeText = (Option<CString>, Option<CString>, Option<CString>);

pub(super) fn service_type(g: &mut dyn GuestCalls, at: i32) -> Step<Option<ServiceTypeText>> {
    if at == 0 {
        return Ok(None);
    }
    let fields = {
        let (memory, _) = g.parts();
        [
            memory.u32(pointer(at))?,
            memory.u32(pointer(at) + 4)?,
            memory.u32(pointer(at) + 8)?,
        ]
    };
    Ok(Some((
        string(g, fields[0] as i32, "service type name")?,
        string(g, fields[1] as i32, "request hash")?,
        string(g, fields[2] as i32, "response hash")?,
    )))
}

mod callbacks;
mod context;
mod executor;
mod log;
mod node;
mod params;
mod pubsub;
mod service;
mod timer;
mod wait;

use callbacks::*;

pub use context::*;
pub(crate) use executor::run_mail;
pub use executor::*;
pub use log::*;
pub use node::*;
pub use params::*;
pub use pubsub::*;
pub use service::*;
pub use timer::*;
pub use wait::sleeping_call;
