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
use crate::calls::{with_guest, GuestCalls};
use crate::fault::Fault;
use crate::guest::{Deferred, SlotTarget};
use crate::memory::{GuestMemory, OutOfBounds};

pub type ImportResult = Result<i32, Fault>;

/// The longest string (name, topic, log message) a guest may pass.
const STRING_LIMIT: usize = 1 << 20;
/// The longest fully qualified name or logger name copied back.
const NAME_CAPACITY_LIMIT: u32 = 1 << 16;

/// A refused call: its status and message, kept for `last_error`.
struct Refusal(i32, String);

impl From<OutOfBounds> for Refusal {
    fn from(e: OutOfBounds) -> Self {
        Refusal(ROSLITE_INVALID_ARGUMENT, e.to_string())
    }
}

type Step<T> = Result<T, Refusal>;

/// Turns an import body's outcome into its status, noting the message of a refusal or of a
/// failed C ABI call, and carries a fault raised by a callback during the call out.
fn finish(g: &mut dyn GuestCalls, outcome: Step<i32>) -> ImportResult {
    let state = g.state();
    if let Some(fault) = state.fault.take() {
        return Err(fault);
    }
    match outcome {
        Ok(ROSLITE_OK) => Ok(ROSLITE_OK),
        Ok(status) => {
            // SAFETY: the C ABI's last error is a NUL-terminated string of this thread.
            let text = unsafe { CStr::from_ptr(roslite_c::status::roslite_last_error()) };
            state.last_error = text.to_string_lossy().into_owned();
            Ok(status)
        }
        Err(Refusal(status, message)) => {
            state.last_error = message;
            Ok(status)
        }
    }
}

fn pointer(value: i32) -> u32 {
    value as u32
}

/// A guest string (None for a null pointer), copied out.
fn string(g: &mut dyn GuestCalls, at: i32, what: &str) -> Step<Option<CString>> {
    let (memory, _) = g.parts();
    let bytes = memory
        .c_string(pointer(at), STRING_LIMIT)
        .map_err(|e| Refusal(ROSLITE_INVALID_ARGUMENT, format!("{what}: {e}")))?;
    Ok(bytes.map(|b| CString::new(b).expect("no NUL before the end")))
}

fn native(g: &mut dyn GuestCalls, handle: i64) -> Step<u64> {
    g.state().handles.native(handle).ok_or_else(|| {
        Refusal(
            ROSLITE_INVALID_HANDLE,
            format!("{handle} is not a handle this node holds (released, or never created)"),
        )
    })
}

fn optional(c: &Option<CString>) -> *const c_char {
    c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

/// Puts a new native object's handle in the guest's table and writes the guest's number.
fn hand_out(g: &mut dyn GuestCalls, status: i32, native: u64, out: i32) -> Step<i32> {
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
    Ok(ROSLITE_OK)
}

fn check_out(g: &mut dyn GuestCalls, out: i32, size: u32, what: &str) -> Step<()> {
    let (memory, _) = g.parts();
    if out == 0 {
        return Err(Refusal(ROSLITE_INVALID_ARGUMENT, format!("{what} is NULL")));
    }
    memory.bytes(pointer(out), size)?;
    Ok(())
}

fn read_qos(memory: &GuestMemory<'_>, at: u32) -> Result<CQos, OutOfBounds> {
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

fn write_qos(memory: &mut GuestMemory<'_>, at: u32, q: &CQos) -> Result<(), OutOfBounds> {
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
fn qos(g: &mut dyn GuestCalls, at: i32) -> Step<Option<CQos>> {
    if at == 0 {
        return Ok(None);
    }
    let (memory, _) = g.parts();
    Ok(Some(read_qos(&memory, pointer(at))?))
}

/// A message type the guest passed: (name, hash).
fn message_type(
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

type ServiceTypeText = (Option<CString>, Option<CString>, Option<CString>);

fn service_type(g: &mut dyn GuestCalls, at: i32) -> Step<Option<ServiceTypeText>> {
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

// ---- Status, handles, context -------------------------------------------------------------

pub fn last_error(g: &mut dyn GuestCalls, buffer: i32, capacity: i32) -> ImportResult {
    // Up to `capacity` bytes, no NUL; the full length is returned, so a guest whose buffer
    // was too small can ask again (docs/wasm.md).
    let (mut memory, state) = g.parts();
    let text = state.last_error.as_bytes();
    let n = text.len().min(capacity.max(0) as usize);
    if memory.write(pointer(buffer), &text[..n]).is_err() {
        return Ok(-1);
    }
    Ok(i32::try_from(text.len()).unwrap_or(i32::MAX))
}

pub fn release(g: &mut dyn GuestCalls, handle: i64) -> ImportResult {
    let outcome = (|| {
        let state = g.state();
        let native = state.handles.remove(handle).ok_or_else(|| {
            Refusal(
                ROSLITE_INVALID_HANDLE,
                format!("{handle} is not a handle this node holds (released, or never created)"),
            )
        })?;
        if native == state.context {
            return Ok(ROSLITE_OK);
        }
        Ok(roslite_c::handles::roslite_release(native))
    })();
    finish(g, outcome)
}

pub fn context_init(g: &mut dyn GuestCalls, _argc: i32, _argv: i32, out: i32) -> ImportResult {
    // Every guest of a host shares the host's context (one participant); its command line
    // (`roslite run ... --ros-args ...`) is the context's, and the guest's own argv repeats it.
    let outcome = (|| {
        check_out(g, out, 8, "context")?;
        let context = g.state().context;
        hand_out(g, ROSLITE_OK, context, out)
    })();
    finish(g, outcome)
}

fn is_context(g: &mut dyn GuestCalls, handle: i64) -> Step<()> {
    let native = native(g, handle)?;
    if native != g.state().context {
        return Err(Refusal(
            ROSLITE_INVALID_HANDLE,
            format!("{handle} is not a context"),
        ));
    }
    Ok(())
}

pub fn context_shutdown(g: &mut dyn GuestCalls, context: i64) -> ImportResult {
    // A guest's shutdown ends that guest's spinning, not the context the others share.
    let outcome = is_context(g, context).map(|()| {
        g.state().shared.stop();
        ROSLITE_OK
    });
    finish(g, outcome)
}

pub fn context_ok(g: &mut dyn GuestCalls, context: i64, ok: i32) -> ImportResult {
    let outcome = (|| {
        is_context(g, context)?;
        let (mut memory, state) = g.parts();
        let mut native_ok = false;
        // SAFETY: a valid out-pointer.
        let status =
            unsafe { roslite_c::context::roslite_context_ok(state.context, &mut native_ok) };
        if status != ROSLITE_OK {
            return Ok(status);
        }
        let running = native_ok && !state.shared.is_stopping();
        memory.put_u8(pointer(ok), u8::from(running))?;
        Ok(ROSLITE_OK)
    })();
    finish(g, outcome)
}

pub fn install_signal_handlers(g: &mut dyn GuestCalls) -> ImportResult {
    // The host installed them: SIGINT/SIGTERM shut the shared context down.
    finish(g, Ok(ROSLITE_OK))
}

// ---- Node -------------------------------------------------------------------------------

pub fn node_create(
    g: &mut dyn GuestCalls,
    context: i64,
    name: i32,
    namespace: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let context = native(g, context)?;
        let name = string(g, name, "name")?;
        let namespace = string(g, namespace, "namespace")?;
        check_out(g, out, 8, "node")?;
        let mut node = 0;
        // SAFETY: strings and the out-pointer are valid for the call.
        let status = unsafe {
            roslite_c::node::roslite_node_create(
                context,
                optional(&name),
                optional(&namespace),
                &mut node,
            )
        };
        hand_out(g, status, node, out)
    })();
    finish(g, outcome)
}

type NameFn = unsafe extern "C" fn(u64, *mut c_char, usize, *mut usize) -> i32;

fn copy_name(
    g: &mut dyn GuestCalls,
    node: i64,
    buffer: i32,
    capacity: i32,
    length: i32,
    f: NameFn,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let capacity = (capacity.max(0) as u32).min(NAME_CAPACITY_LIMIT);
        let mut host = vec![0u8; capacity as usize];
        let mut needed = 0usize;
        let host_buffer = if buffer == 0 {
            std::ptr::null_mut()
        } else {
            host.as_mut_ptr().cast()
        };
        // SAFETY: `host` holds `capacity` bytes.
        let status = unsafe { f(node, host_buffer, capacity as usize, &mut needed) };
        let (mut memory, _) = g.parts();
        if length != 0 {
            memory.put_u32(pointer(length), needed as u32)?;
        }
        if status == ROSLITE_OK {
            memory.write(pointer(buffer), &host[..=needed])?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn node_fully_qualified_name(
    g: &mut dyn GuestCalls,
    node: i64,
    buffer: i32,
    capacity: i32,
    length: i32,
) -> ImportResult {
    copy_name(
        g,
        node,
        buffer,
        capacity,
        length,
        roslite_c::node::roslite_node_fully_qualified_name,
    )
}

pub fn node_logger_name(
    g: &mut dyn GuestCalls,
    node: i64,
    buffer: i32,
    capacity: i32,
    length: i32,
) -> ImportResult {
    copy_name(
        g,
        node,
        buffer,
        capacity,
        length,
        roslite_c::node::roslite_node_logger_name,
    )
}

pub fn node_now(g: &mut dyn GuestCalls, node: i64, ns: i32) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        check_out(g, ns, 8, "ns")?;
        let mut now = 0i64;
        // SAFETY: a valid out-pointer.
        let status = unsafe { roslite_c::node::roslite_node_now(node, &mut now) };
        if status == ROSLITE_OK {
            g.parts().0.put_i64(pointer(ns), now)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn type_register(g: &mut dyn GuestCalls, definition: i32) -> ImportResult {
    let outcome = (|| {
        let definition = string(g, definition, "definition")?;
        // SAFETY: a string valid for the call.
        Ok(unsafe { roslite_c::types::roslite_type_register(optional(&definition)) })
    })();
    finish(g, outcome)
}

pub fn callback_group_create(
    g: &mut dyn GuestCalls,
    node: i64,
    kind: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        check_out(g, out, 8, "callback_group")?;
        let mut group = 0;
        // SAFETY: a valid out-pointer.
        let status =
            unsafe { roslite_c::node::roslite_callback_group_create(node, kind, &mut group) };
        hand_out(g, status, group, out)
    })();
    finish(g, outcome)
}

type CountFn = unsafe extern "C" fn(u64, *const c_char, *mut usize) -> i32;

fn count_on_topic(
    g: &mut dyn GuestCalls,
    node: i64,
    topic: i32,
    count: i32,
    f: CountFn,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let topic = string(g, topic, "topic")?;
        check_out(g, count, 4, "count")?;
        let mut n = 0usize;
        // SAFETY: valid string and out-pointer.
        let status = unsafe { f(node, optional(&topic), &mut n) };
        if status == ROSLITE_OK {
            g.parts().0.put_u32(pointer(count), n as u32)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn node_count_publishers(
    g: &mut dyn GuestCalls,
    node: i64,
    topic: i32,
    count: i32,
) -> ImportResult {
    count_on_topic(
        g,
        node,
        topic,
        count,
        roslite_c::node::roslite_node_count_publishers,
    )
}

pub fn node_count_subscribers(
    g: &mut dyn GuestCalls,
    node: i64,
    topic: i32,
    count: i32,
) -> ImportResult {
    count_on_topic(
        g,
        node,
        topic,
        count,
        roslite_c::node::roslite_node_count_subscribers,
    )
}

/// Memory from the guest's allocator, noted in `state.allocations` when a callback collects
/// what to free after it returns.
fn guest_alloc(g: &mut dyn GuestCalls, size: u32) -> Result<u32, Fault> {
    let at = g.alloc(size)?;
    if at != 0 {
        if let Some(noted) = g.state().allocations.as_mut() {
            noted.push(at);
        }
    }
    Ok(at)
}

/// Copies `bytes` and a NUL into memory the guest allocates; 0 for no memory.
fn guest_string(g: &mut dyn GuestCalls, bytes: &[u8]) -> Result<u32, Fault> {
    let at = guest_alloc(g, bytes.len() as u32 + 1)?;
    if at != 0 {
        let (mut memory, _) = g.parts();
        let mut copy = bytes.to_vec();
        copy.push(0);
        if memory.write(at, &copy).is_err() {
            return Err(Fault::Abi(format!(
                "roslite_guest_alloc returned {at:#x}, outside the guest's memory"
            )));
        }
    }
    Ok(at)
}

/// Copies `items` as a guest array of guest strings; the array's address (0 for none).
fn guest_strings(g: &mut dyn GuestCalls, items: &[Vec<u8>]) -> Result<u32, Fault> {
    let mut pointers = Vec::with_capacity(items.len());
    for item in items {
        pointers.push(guest_string(g, item)?);
    }
    let array = guest_alloc(g, 4 * items.len().max(1) as u32)?;
    if array != 0 {
        let (mut memory, _) = g.parts();
        for (i, p) in pointers.iter().enumerate() {
            memory.put_u32(array + 4 * i as u32, *p).map_err(|e| {
                Fault::Abi(format!(
                    "roslite_guest_alloc gave memory outside the guest: {e}"
                ))
            })?;
        }
    }
    Ok(array)
}

type NamesFn = unsafe extern "C" fn(u64, *mut CNames) -> i32;

fn names(g: &mut dyn GuestCalls, node: i64, out: i32, f: NamesFn) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let node = match native(g, node) {
            Ok(n) => n,
            Err(r) => return Ok(Err(r)),
        };
        if let Err(r) = check_out(g, out, layout::NAMES_SIZE, "names") {
            return Ok(Err(r));
        }
        let mut list = CNames {
            count: 0,
            names: std::ptr::null_mut(),
            types: std::ptr::null_mut(),
        };
        // SAFETY: a valid out-pointer.
        let status = unsafe { f(node, &mut list) };
        if status != ROSLITE_OK {
            return Ok(Ok(status));
        }
        let read = |array: *mut *mut c_char| -> Vec<Vec<u8>> {
            (0..list.count)
                // SAFETY: the C ABI filled `count` strings in each array.
                .map(|i| unsafe { CStr::from_ptr(*array.add(i)) }.to_bytes().to_vec())
                .collect()
        };
        let (names, types) = (read(list.names), read(list.types));
        // SAFETY: filled by the call above.
        unsafe { roslite_c::events::roslite_names_fini(&mut list) };
        let names_at = guest_strings(g, &names)?;
        let types_at = guest_strings(g, &types)?;
        let (mut memory, _) = g.parts();
        let written = memory
            .put_u32(pointer(out), names.len() as u32)
            .and_then(|()| memory.put_u32(pointer(out) + 4, names_at))
            .and_then(|()| memory.put_u32(pointer(out) + 8, types_at));
        Ok(written.map(|()| ROSLITE_OK).map_err(Refusal::from))
    })();
    finish(g, outcome?)
}

pub fn node_topic_names_and_types(g: &mut dyn GuestCalls, node: i64, out: i32) -> ImportResult {
    names(
        g,
        node,
        out,
        roslite_c::events::roslite_node_topic_names_and_types,
    )
}

pub fn node_service_names_and_types(g: &mut dyn GuestCalls, node: i64, out: i32) -> ImportResult {
    names(
        g,
        node,
        out,
        roslite_c::events::roslite_node_service_names_and_types,
    )
}

pub fn node_names(g: &mut dyn GuestCalls, node: i64, out: i32) -> ImportResult {
    names(g, node, out, roslite_c::events::roslite_node_names)
}

// ---- QoS, publishers, subscriptions -------------------------------------------------------

pub fn qos_profile(g: &mut dyn GuestCalls, profile: i32, out: i32) -> ImportResult {
    let outcome = (|| {
        check_out(g, out, layout::QOS_SIZE, "qos")?;
        let mut q = CQos::default();
        // SAFETY: a valid out-pointer.
        let status = unsafe { roslite_c::pubsub::roslite_qos_profile(profile, &mut q) };
        if status == ROSLITE_OK {
            write_qos(&mut g.parts().0, pointer(out), &q)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

fn c_type(t: &Option<(Option<CString>, Option<CString>)>) -> Option<CType> {
    t.as_ref().map(|(name, hash)| CType {
        name: optional(name),
        hash: optional(hash),
    })
}

fn or_null<T>(v: &Option<T>) -> *const T {
    v.as_ref().map_or(std::ptr::null(), |v| v as *const T)
}

pub fn publisher_create(
    g: &mut dyn GuestCalls,
    node: i64,
    topic: i32,
    message_type: i32,
    qos_at: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let topic = string(g, topic, "topic")?;
        let text = self::message_type(g, message_type)?;
        let q = qos(g, qos_at)?;
        check_out(g, out, 8, "publisher")?;
        let ty = c_type(&text);
        let mut publisher = 0;
        // SAFETY: everything passed lives until the call returns.
        let status = unsafe {
            roslite_c::pubsub::roslite_publisher_create(
                node,
                optional(&topic),
                or_null(&ty),
                or_null(&q),
                &mut publisher,
            )
        };
        hand_out(g, status, publisher, out)
    })();
    finish(g, outcome)
}

pub fn publish(g: &mut dyn GuestCalls, publisher: i64, cdr: i32, length: i32) -> ImportResult {
    let outcome = (|| {
        let publisher = native(g, publisher)?;
        let (memory, _) = g.parts();
        let bytes = memory.bytes(pointer(cdr), length as u32)?;
        // Published straight from guest memory, no copy: no guest code runs during the call
        // (the guest's executors never lend their turn, so no callback of this guest runs
        // inline), so the memory neither changes nor moves.
        let (at, n) = (bytes.as_ptr(), bytes.len());
        // SAFETY: `at` points at `n` bytes of guest memory, valid for the call (above).
        Ok(unsafe { roslite_c::pubsub::roslite_publish(publisher, at, n) })
    })();
    finish(g, outcome)
}

type EndpointCountFn = unsafe extern "C" fn(u64, *mut usize) -> i32;

fn endpoint_count(
    g: &mut dyn GuestCalls,
    endpoint: i64,
    count: i32,
    f: EndpointCountFn,
) -> ImportResult {
    let outcome = (|| {
        let endpoint = native(g, endpoint)?;
        check_out(g, count, 4, "count")?;
        let mut n = 0usize;
        // SAFETY: a valid out-pointer.
        let status = unsafe { f(endpoint, &mut n) };
        if status == ROSLITE_OK {
            g.parts().0.put_u32(pointer(count), n as u32)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn publisher_subscription_count(
    g: &mut dyn GuestCalls,
    publisher: i64,
    count: i32,
) -> ImportResult {
    endpoint_count(
        g,
        publisher,
        count,
        roslite_c::pubsub::roslite_publisher_subscription_count,
    )
}

pub fn subscription_publisher_count(
    g: &mut dyn GuestCalls,
    subscription: i64,
    count: i32,
) -> ImportResult {
    endpoint_count(
        g,
        subscription,
        count,
        roslite_c::events::roslite_subscription_publisher_count,
    )
}

#[allow(clippy::too_many_arguments)]
pub fn subscription_create(
    g: &mut dyn GuestCalls,
    node: i64,
    group: i64,
    topic: i32,
    message_type: i32,
    qos_at: i32,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let group = native(g, group)?;
        let topic = string(g, topic, "topic")?;
        let text = self::message_type(g, message_type)?;
        let q = qos(g, qos_at)?;
        check_out(g, out, 8, "subscription")?;
        let ty = c_type(&text);
        let described = topic
            .as_ref()
            .map_or(String::new(), |t| t.to_string_lossy().into_owned());
        let user = g.state().target(
            slot,
            CallbackKind::Message,
            format!("subscription callback of {described}"),
        );
        let mut subscription = 0;
        // SAFETY: everything passed lives until the call returns; `user` until the guest ends.
        let status = unsafe {
            roslite_c::pubsub::roslite_subscription_create_in(
                node,
                group,
                optional(&topic),
                or_null(&ty),
                or_null(&q),
                Some(on_message),
                user,
                &mut subscription,
            )
        };
        hand_out(g, status, subscription, out)
    })();
    finish(g, outcome)
}

pub fn subscription_on_message_lost(
    g: &mut dyn GuestCalls,
    subscription: i64,
    slot: i32,
) -> ImportResult {
    let outcome = (|| {
        let subscription = native(g, subscription)?;
        let user = g.state().target(
            slot,
            CallbackKind::MessageLost,
            "message-lost callback".into(),
        );
        // SAFETY: `user` lives until the guest ends.
        Ok(unsafe {
            roslite_c::pubsub::roslite_subscription_on_message_lost(
                subscription,
                Some(on_message_lost),
                user,
            )
        })
    })();
    finish(g, outcome)
}

pub fn on_matched(g: &mut dyn GuestCalls, endpoint: i64, slot: i32) -> ImportResult {
    let outcome =
        (|| {
            let endpoint = native(g, endpoint)?;
            let user = g
                .state()
                .target(slot, CallbackKind::Matched, "matched callback".into());
            // SAFETY: `user` lives until the guest ends.
            Ok(unsafe {
                roslite_c::events::roslite_on_matched(endpoint, Some(on_matched_event), user)
            })
        })();
    finish(g, outcome)
}

pub fn on_incompatible_qos(g: &mut dyn GuestCalls, endpoint: i64, slot: i32) -> ImportResult {
    let outcome = (|| {
        let endpoint = native(g, endpoint)?;
        let user = g.state().target(
            slot,
            CallbackKind::IncompatibleQos,
            "incompatible-QoS callback".into(),
        );
        // SAFETY: `user` lives until the guest ends.
        Ok(unsafe {
            roslite_c::events::roslite_on_incompatible_qos(
                endpoint,
                Some(on_incompatible_qos_event),
                user,
            )
        })
    })();
    finish(g, outcome)
}

// ---- Timers -------------------------------------------------------------------------------

pub fn timer_create(
    g: &mut dyn GuestCalls,
    node: i64,
    group: i64,
    period_ns: i64,
    wall: i32,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let group = native(g, group)?;
        check_out(g, out, 8, "timer")?;
        let description = format!(
            "timer callback (period {:?})",
            Duration::from_nanos(period_ns.max(0) as u64)
        );
        let user = g.state().target(slot, CallbackKind::Timer, description);
        let mut timer = 0;
        // SAFETY: `user` lives until the guest ends; a valid out-pointer.
        let status = unsafe {
            if wall != 0 {
                roslite_c::timer::roslite_wall_timer_create_in(
                    node,
                    group,
                    period_ns,
                    Some(on_timer),
                    user,
                    &mut timer,
                )
            } else {
                roslite_c::timer::roslite_timer_create_in(
                    node,
                    group,
                    period_ns,
                    Some(on_timer),
                    user,
                    &mut timer,
                )
            }
        };
        hand_out(g, status, timer, out)
    })();
    finish(g, outcome)
}

pub fn timer_cancel(g: &mut dyn GuestCalls, timer: i64) -> ImportResult {
    let outcome = native(g, timer).map(|t| roslite_c::timer::roslite_timer_cancel(t));
    finish(g, outcome)
}

pub fn timer_reset(g: &mut dyn GuestCalls, timer: i64) -> ImportResult {
    let outcome = native(g, timer).map(|t| roslite_c::timer::roslite_timer_reset(t));
    finish(g, outcome)
}

// ---- Services and clients -----------------------------------------------------------------

fn c_service_type(t: &Option<ServiceTypeText>) -> Option<CServiceType> {
    t.as_ref().map(|(name, request, response)| CServiceType {
        name: optional(name),
        request_hash: optional(request),
        response_hash: optional(response),
    })
}

#[allow(clippy::too_many_arguments)]
pub fn service_create(
    g: &mut dyn GuestCalls,
    node: i64,
    group: i64,
    service: i32,
    service_type_at: i32,
    qos_at: i32,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let group = native(g, group)?;
        let name = string(g, service, "service")?;
        let text = service_type(g, service_type_at)?;
        let q = qos(g, qos_at)?;
        check_out(g, out, 8, "service")?;
        let ty = c_service_type(&text);
        let described = name
            .as_ref()
            .map_or(String::new(), |t| t.to_string_lossy().into_owned());
        let user = g.state().target(
            slot,
            CallbackKind::Request,
            format!("service callback of {described}"),
        );
        let mut server = 0;
        // SAFETY: everything passed lives until the call returns; `user` until the guest ends.
        let status = unsafe {
            roslite_c::client::roslite_service_create_in(
                node,
                group,
                optional(&name),
                or_null(&ty),
                or_null(&q),
                Some(on_request),
                user,
                &mut server,
            )
        };
        hand_out(g, status, server, out)
    })();
    finish(g, outcome)
}

pub fn service_send_response(
    g: &mut dyn GuestCalls,
    responder: i64,
    cdr: i32,
    length: i32,
) -> ImportResult {
    let outcome = (|| {
        let native_responder = native(g, responder)?;
        let bytes = g.parts().0.bytes(pointer(cdr), length as u32)?.to_vec();
        // SAFETY: `bytes` holds `len` bytes.
        let status = unsafe {
            roslite_c::client::roslite_service_send_response(
                native_responder,
                bytes.as_ptr(),
                bytes.len(),
            )
        };
        if status == ROSLITE_OK {
            // The responder ends with its answer (as in the C ABI).
            g.state().handles.remove(responder);
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn client_create(
    g: &mut dyn GuestCalls,
    node: i64,
    service: i32,
    service_type_at: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let name = string(g, service, "service")?;
        let text = service_type(g, service_type_at)?;
        check_out(g, out, 8, "client")?;
        let ty = c_service_type(&text);
        let mut client = 0;
        // SAFETY: everything passed lives until the call returns.
        let status = unsafe {
            roslite_c::client::roslite_client_create(
                node,
                optional(&name),
                or_null(&ty),
                &mut client,
            )
        };
        hand_out(g, status, client, out)
    })();
    finish(g, outcome)
}

pub fn client_wait_for_service(
    g: &mut dyn GuestCalls,
    client: i64,
    timeout_ns: i64,
) -> ImportResult {
    let outcome = native(g, client)
        .map(|c| roslite_c::client::roslite_client_wait_for_service(c, timeout_ns));
    finish(g, outcome)
}

pub fn client_call(
    g: &mut dyn GuestCalls,
    client: i64,
    request: i32,
    length: i32,
    timeout_ns: i64,
    response: i32,
) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let step = (|| {
            let client = native(g, client)?;
            let bytes = g.parts().0.bytes(pointer(request), length as u32)?.to_vec();
            check_out(g, response, layout::BUFFER_SIZE, "response")?;
            Ok((client, bytes))
        })();
        let (client, bytes) = match step {
            Ok(v) => v,
            Err(r) => return Ok(Err(r)),
        };
        let mut reply = CBuffer {
            data: std::ptr::null_mut(),
            length: 0,
        };
        // SAFETY: `bytes` holds its length; a valid out-pointer.
        let status = unsafe {
            roslite_c::client::roslite_client_call(
                client,
                bytes.as_ptr(),
                bytes.len(),
                timeout_ns,
                &mut reply,
            )
        };
        if status != ROSLITE_OK {
            return Ok(Ok(status));
        }
        // SAFETY: filled by the call above.
        let answer = unsafe { std::slice::from_raw_parts(reply.data, reply.length) }.to_vec();
        // SAFETY: filled by the call above.
        unsafe { roslite_c::client::roslite_buffer_fini(&mut reply) };
        let at = g.alloc(answer.len().max(1) as u32)?;
        if at == 0 {
            return Ok(Err(Refusal(
                ROSLITE_INVALID_ARGUMENT,
                "the guest had no memory for the response".into(),
            )));
        }
        let (mut memory, _) = g.parts();
        let written = memory
            .write(at, &answer)
            .and_then(|()| memory.put_u32(pointer(response), at))
            .and_then(|()| memory.put_u32(pointer(response) + 4, answer.len() as u32));
        Ok(written.map(|()| ROSLITE_OK).map_err(Refusal::from))
    })();
    finish(g, outcome?)
}

pub fn client_send_request(
    g: &mut dyn GuestCalls,
    client: i64,
    request: i32,
    length: i32,
    slot: i32,
    request_id: i32,
) -> ImportResult {
    let outcome = (|| {
        let client = native(g, client)?;
        let bytes = g.parts().0.bytes(pointer(request), length as u32)?.to_vec();
        if request_id != 0 {
            g.parts().0.bytes(pointer(request_id), 8)?;
        }
        let user = g
            .state()
            .target(slot, CallbackKind::Response, "response callback".into());
        let mut id = 0i64;
        // SAFETY: `bytes` holds its length; `user` lives until the guest ends.
        let status = unsafe {
            roslite_c::client::roslite_client_send_request(
                client,
                bytes.as_ptr(),
                bytes.len(),
                Some(on_response),
                user,
                &mut id,
            )
        };
        if status == ROSLITE_OK && request_id != 0 {
            g.parts().0.put_i64(pointer(request_id), id)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn client_remove_pending_request(
    g: &mut dyn GuestCalls,
    client: i64,
    request_id: i64,
) -> ImportResult {
    let outcome = native(g, client)
        .map(|c| roslite_c::client::roslite_client_remove_pending_request(c, request_id));
    finish(g, outcome)
}

// ---- Parameters ---------------------------------------------------------------------------

const PARAMETER_STRING: i32 = 4;
const PARAMETER_BYTE_ARRAY: i32 = 5;
const PARAMETER_BOOL_ARRAY: i32 = 6;
const PARAMETER_INTEGER_ARRAY: i32 = 7;
const PARAMETER_DOUBLE_ARRAY: i32 = 8;
const PARAMETER_STRING_ARRAY: i32 = 9;

/// A parameter value read from the guest, with the host storage its pointers point into.
struct HostValue {
    value: CParameterValue,
    _string: Option<CString>,
    _bytes: Vec<u8>,
    _integers: Vec<i64>,
    _doubles: Vec<f64>,
    _strings: Vec<CString>,
    _string_pointers: Vec<*const c_char>,
}

fn read_value(g: &mut dyn GuestCalls, at: i32) -> Step<HostValue> {
    let at = pointer(at);
    let (kind, flag, integer, double, string_at, array_at, length) = {
        let (memory, _) = g.parts();
        (
            memory.i32(at)?,
            memory.u8(at + 4)? != 0,
            memory.i64(at + 8)?,
            memory.f64(at + 16)?,
            memory.u32(at + 24)?,
            memory.u32(at + 28)?,
            memory.u32(at + 32)?,
        )
    };
    let mut host = HostValue {
        value: CParameterValue {
            kind,
            bool_value: flag,
            integer_value: integer,
            double_value: double,
            string_value: std::ptr::null(),
            array_values: std::ptr::null(),
            array_length: length as usize,
        },
        _string: None,
        _bytes: Vec::new(),
        _integers: Vec::new(),
        _doubles: Vec::new(),
        _strings: Vec::new(),
        _string_pointers: Vec::new(),
    };
    if kind == PARAMETER_STRING {
        host._string = string(g, string_at as i32, "string_value")?;
        host.value.string_value = optional(&host._string);
    }
    let (memory, _) = g.parts();
    match kind {
        PARAMETER_BYTE_ARRAY | PARAMETER_BOOL_ARRAY => {
            host._bytes = memory.bytes(array_at, length)?.to_vec();
            host.value.array_values = host._bytes.as_ptr().cast();
        }
        PARAMETER_INTEGER_ARRAY => {
            host._integers = (0..length)
                .map(|i| memory.i64(array_at + 8 * i))
                .collect::<Result<_, _>>()?;
            host.value.array_values = host._integers.as_ptr().cast();
        }
        PARAMETER_DOUBLE_ARRAY => {
            host._doubles = (0..length)
                .map(|i| memory.f64(array_at + 8 * i))
                .collect::<Result<_, _>>()?;
            host.value.array_values = host._doubles.as_ptr().cast();
        }
        PARAMETER_STRING_ARRAY => {
            let pointers: Vec<u32> = (0..length)
                .map(|i| memory.u32(array_at + 4 * i))
                .collect::<Result<_, _>>()?;
            for p in pointers {
                let s = string(g, p as i32, "string array element")?.ok_or_else(|| {
                    Refusal(
                        ROSLITE_INVALID_ARGUMENT,
                        "a string array element is NULL".into(),
                    )
                })?;
                host._strings.push(s);
            }
            host._string_pointers = host._strings.iter().map(|s| s.as_ptr()).collect();
            host.value.array_values = host._string_pointers.as_ptr().cast();
        }
        _ => {}
    }
    Ok(host)
}

/// Writes a value the C ABI filled into the guest at `at`, its strings and arrays in memory
/// the guest allocates (its `roslite_parameter_value_fini` frees them).
fn write_value(
    g: &mut dyn GuestCalls,
    at: u32,
    value: &CParameterValue,
) -> Result<Result<(), OutOfBounds>, Fault> {
    let n = value.array_length;
    let (string_at, array_at) = match value.kind {
        PARAMETER_STRING if !value.string_value.is_null() => {
            // SAFETY: the C ABI's string.
            let text = unsafe { CStr::from_ptr(value.string_value) }
                .to_bytes()
                .to_vec();
            (guest_string(g, &text)?, 0)
        }
        PARAMETER_BYTE_ARRAY
        | PARAMETER_BOOL_ARRAY
        | PARAMETER_INTEGER_ARRAY
        | PARAMETER_DOUBLE_ARRAY => {
            let width = if matches!(value.kind, PARAMETER_BYTE_ARRAY | PARAMETER_BOOL_ARRAY) {
                1
            } else {
                8
            };
            // SAFETY: the C ABI's array of `n` elements of that width.
            let bytes =
                unsafe { std::slice::from_raw_parts(value.array_values.cast::<u8>(), n * width) }
                    .to_vec();
            let p = guest_alloc(g, bytes.len().max(1) as u32)?;
            if p != 0 && g.parts().0.write(p, &bytes).is_err() {
                return Err(Fault::Abi(
                    "roslite_guest_alloc gave memory outside the guest".into(),
                ));
            }
            (0, p)
        }
        PARAMETER_STRING_ARRAY => {
            let strings: Vec<Vec<u8>> = (0..n)
                // SAFETY: the C ABI's array of `n` strings.
                .map(|i| {
                    unsafe { CStr::from_ptr(*value.array_values.cast::<*const c_char>().add(i)) }
                        .to_bytes()
                        .to_vec()
                })
                .collect();
            (0, guest_strings(g, &strings)?)
        }
        _ => (0, 0),
    };
    let (mut memory, _) = g.parts();
    Ok((|| {
        memory.bytes_mut(at, layout::PARAMETER_VALUE_SIZE)?.fill(0);
        memory.put_i32(at, value.kind)?;
        memory.put_u8(at + 4, u8::from(value.bool_value))?;
        memory.put_i64(at + 8, value.integer_value)?;
        memory.put_f64(at + 16, value.double_value)?;
        memory.put_u32(at + 24, string_at)?;
        memory.put_u32(at + 28, array_at)?;
        memory.put_u32(at + 32, n as u32)
    })())
}

fn empty_value() -> CParameterValue {
    CParameterValue {
        kind: 0,
        bool_value: false,
        integer_value: 0,
        double_value: 0.0,
        string_value: std::ptr::null(),
        array_values: std::ptr::null(),
        array_length: 0,
    }
}

/// Gives a value the C ABI filled to the guest (if `out` is not NULL) and frees it.
fn hand_value(
    g: &mut dyn GuestCalls,
    status: i32,
    mut value: CParameterValue,
    out: i32,
) -> Result<Step<i32>, Fault> {
    let written = if status == ROSLITE_OK && out != 0 {
        write_value(g, pointer(out), &value)
    } else {
        Ok(Ok(()))
    };
    // SAFETY: filled by the C ABI (or empty).
    unsafe { roslite_c::params::roslite_parameter_value_fini(&mut value) };
    Ok(written?.map(|()| status).map_err(Refusal::from))
}

pub fn parameter_declare(
    g: &mut dyn GuestCalls,
    node: i64,
    name: i32,
    default_value: i32,
    value: i32,
) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let step = (|| {
            let node = native(g, node)?;
            let name = string(g, name, "name")?;
            let default = if default_value == 0 {
                None
            } else {
                Some(read_value(g, default_value)?)
            };
            if value != 0 {
                check_out(g, value, layout::PARAMETER_VALUE_SIZE, "value")?;
            }
            Ok((node, name, default))
        })();
        let (node, name, default) = match step {
            Ok(v) => v,
            Err(r) => return Ok(Err(r)),
        };
        let mut out = empty_value();
        let default_pointer = default
            .as_ref()
            .map_or(std::ptr::null(), |d| &d.value as *const _);
        // SAFETY: everything passed lives until the call returns.
        let status = unsafe {
            roslite_c::params::roslite_parameter_declare(
                node,
                optional(&name),
                default_pointer,
                &mut out,
            )
        };
        hand_value(g, status, out, value)
    })();
    finish(g, outcome?)
}

pub fn parameter_get(g: &mut dyn GuestCalls, node: i64, name: i32, value: i32) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let step = (|| {
            let node = native(g, node)?;
            let name = string(g, name, "name")?;
            check_out(g, value, layout::PARAMETER_VALUE_SIZE, "value")?;
            Ok((node, name))
        })();
        let (node, name) = match step {
            Ok(v) => v,
            Err(r) => return Ok(Err(r)),
        };
        let mut out = empty_value();
        // SAFETY: everything passed lives until the call returns.
        let status =
            unsafe { roslite_c::params::roslite_parameter_get(node, optional(&name), &mut out) };
        hand_value(g, status, out, value)
    })();
    finish(g, outcome?)
}

pub fn parameter_set(g: &mut dyn GuestCalls, node: i64, name: i32, value: i32) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let name = string(g, name, "name")?;
        let host = if value == 0 {
            None
        } else {
            Some(read_value(g, value)?)
        };
        let value_pointer = host
            .as_ref()
            .map_or(std::ptr::null(), |h| &h.value as *const _);
        // SAFETY: everything passed lives until the call returns.
        Ok(unsafe {
            roslite_c::params::roslite_parameter_set(node, optional(&name), value_pointer)
        })
    })();
    finish(g, outcome)
}

pub fn parameter_add_on_set_callback(
    g: &mut dyn GuestCalls,
    node: i64,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        check_out(g, out, 8, "handle")?;
        let user = g.state().target(
            slot,
            CallbackKind::Parameters,
            "on-set-parameters callback".into(),
        );
        let mut handle = 0;
        // SAFETY: `user` lives until the guest ends; a valid out-pointer.
        let status = unsafe {
            roslite_c::params::roslite_parameter_add_on_set_callback(
                node,
                Some(on_parameters),
                user,
                &mut handle,
            )
        };
        hand_out(g, status, handle, out)
    })();
    finish(g, outcome)
}

// ---- Logging ------------------------------------------------------------------------------

pub fn log(
    g: &mut dyn GuestCalls,
    logger: i32,
    severity: i32,
    function: i32,
    message: i32,
) -> ImportResult {
    let outcome = (|| {
        let logger = string(g, logger, "logger")?;
        let function = string(g, function, "function")?;
        let message = string(g, message, "message")?;
        // SAFETY: strings valid for the call.
        Ok(unsafe {
            roslite_c::log::roslite_log(
                optional(&logger),
                severity,
                optional(&function),
                optional(&message),
            )
        })
    })();
    finish(g, outcome)
}

// ---- Executors ----------------------------------------------------------------------------

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
                // Callbacks enter the guest only on its own thread, which owns the instance.
                spinner.keep_callbacks_on_own_threads();
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

/// Runs callbacks deferred to the guest's thread (replies that came on a network thread);
/// whether any ran.
fn run_mail(g: &mut dyn GuestCalls) -> Result<bool, Fault> {
    let shared = g.state().shared.clone();
    let mut ran = false;
    while let Some(mail) = shared.take_mail() {
        ran = true;
        match mail.kind {
            CallbackKind::Response => {
                deliver_response(g, mail.slot, mail.status, mail.bytes.as_deref())?
            }
            CallbackKind::Message => deliver_message(
                g,
                mail.slot,
                &mail.bytes.unwrap_or_default(),
                &zero_info(),
                "subscription callback",
            )?,
            _ => {}
        }
        if let Some(fault) = g.state().fault.take() {
            return Err(fault);
        }
    }
    Ok(ran)
}

/// Spins `executor` once for at most `timeout` (None: until work comes), after the mail;
/// whether a callback ran, or the guest's fault.
fn spin_once(
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
        return Ok(Err(Refusal(status, last_native_error())));
    }
    Ok(Ok(ran || run_mail(g)?))
}

fn last_native_error() -> String {
    // SAFETY: the C ABI's last error is a NUL-terminated string of this thread.
    unsafe { CStr::from_ptr(roslite_c::status::roslite_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Whether the guest may keep spinning: it did not shut down, nor did the shared context.
fn running(g: &mut dyn GuestCalls) -> bool {
    let state = g.state();
    let mut ok = false;
    // SAFETY: a valid out-pointer.
    unsafe { roslite_c::context::roslite_context_ok(state.context, &mut ok) };
    ok && !state.shared.is_stopping()
}

/// Spins until `end` (None: until the guest or the context stops).
fn spin_until(g: &mut dyn GuestCalls, executor: i64, end: Option<Instant>) -> ImportResult {
    let executor = match native(g, executor) {
        Ok(e) => e,
        Err(r) => return finish(g, Err(r)),
    };
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
    finish(g, Ok(ROSLITE_OK))
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
        let did = match spin_once(g, executor, timeout)? {
            Ok(did) => did,
            Err(r) => return Ok(Err(r)),
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

// ---- Callbacks from the C ABI into the guest ------------------------------------------------

fn zero_info() -> CMessageInfo {
    CMessageInfo {
        source_timestamp_ns: 0,
        received_timestamp_ns: 0,
        publication_sequence_number: 0,
        from_intra_process: false,
    }
}

/// Runs `deliver` on the guest `user` leads to, if it is inside a host call on this thread and
/// alive; a fault is kept for the import to carry out.
///
/// # Safety
/// `user` is a [`SlotTarget`] made by [`crate::guest::GuestState::target`].
unsafe fn into_guest<R>(
    user: *mut c_void,
    deliver: impl FnOnce(&mut dyn GuestCalls, &SlotTarget) -> Result<R, Fault>,
) -> Option<R> {
    // SAFETY: the caller's promise.
    let target = unsafe { &*(user as *const SlotTarget) };
    with_guest(&target.shared, |g| {
        if g.state().dead {
            return None;
        }
        match deliver(g, target) {
            Ok(r) => Some(r),
            Err(fault) => {
                let state = g.state();
                state.dead = true;
                state.fault = Some(fault);
                None
            }
        }
    })
    .flatten()
}

fn deliver_message(
    g: &mut dyn GuestCalls,
    slot: i32,
    bytes: &[u8],
    info: &CMessageInfo,
    during: &str,
) -> Result<(), Fault> {
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

unsafe extern "C" fn on_message(
    user: *mut c_void,
    cdr: *const u8,
    length: usize,
    info: *const CMessageInfo,
) {
    // SAFETY: the C ABI passes `length` bytes and an info, valid during the call.
    let (bytes, info) = unsafe { (std::slice::from_raw_parts(cdr, length), &*info) };
    // SAFETY: `user` is a slot target (it was registered so).
    let delivered = unsafe {
        into_guest(user, |g, t| {
            deliver_message(g, t.slot, bytes, info, &t.description)
        })
    };
    if delivered.is_none() {
        // SAFETY: as above.
        let target = unsafe { &*(user as *const SlotTarget) };
        if !target.shared.is_guest_thread() {
            target.shared.post(Deferred {
                slot: target.slot,
                kind: CallbackKind::Message,
                status: 0,
                bytes: Some(bytes.to_vec()),
            });
        }
    }
}

unsafe extern "C" fn on_timer(user: *mut c_void) {
    // SAFETY: `user` is a slot target.
    unsafe {
        into_guest(user, |g, t| {
            g.dispatch(t.slot, CallbackKind::Timer, [0; 4], &t.description)
        })
    };
}

unsafe extern "C" fn on_request(
    user: *mut c_void,
    request: *const u8,
    length: usize,
    responder: u64,
) {
    // SAFETY: the C ABI passes `length` bytes, valid during the call.
    let bytes = unsafe { std::slice::from_raw_parts(request, length) };
    // SAFETY: `user` is a slot target.
    let delivered = unsafe {
        into_guest(user, |g, t| {
            let guest_responder = g.state().handles.insert(responder);
            let at = g.alloc(bytes.len().max(1) as u32)?;
            if at == 0 || g.parts().0.write(at, bytes).is_err() {
                return Err(Fault::Abi(
                    "roslite_guest_alloc had no memory for a request".into(),
                ));
            }
            g.dispatch(
                t.slot,
                CallbackKind::Request,
                [i64::from(at), bytes.len() as i64, guest_responder as i64, 0],
                &t.description,
            )?;
            g.free(at)
        })
    };
    if delivered.is_none() {
        // Unanswerable: the client times out, as when a C server drops a responder.
        roslite_c::handles::remove(responder).ok();
    }
}

fn deliver_response(
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

unsafe extern "C" fn on_response(
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
    let delivered = unsafe { into_guest(user, |g, t| deliver_response(g, t.slot, status, bytes)) };
    if delivered.is_none() {
        // SAFETY: as above.
        let target = unsafe { &*(user as *const SlotTarget) };
        target.shared.post(Deferred {
            slot: target.slot,
            kind: CallbackKind::Response,
            status,
            bytes: bytes.map(<[u8]>::to_vec),
        });
    }
}

unsafe extern "C" fn on_message_lost(user: *mut c_void, total: u64, change: u64) {
    // SAFETY: `user` is a slot target.
    unsafe {
        into_guest(user, |g, t| {
            g.dispatch(
                t.slot,
                CallbackKind::MessageLost,
                [total as i64, change as i64, 0, 0],
                &t.description,
            )
        })
    };
}

unsafe extern "C" fn on_matched_event(user: *mut c_void, current: i32, change: i32, total: i32) {
    // SAFETY: `user` is a slot target.
    unsafe {
        into_guest(user, |g, t| {
            g.dispatch(
                t.slot,
                CallbackKind::Matched,
                [current.into(), change.into(), total.into(), 0],
                &t.description,
            )
        })
    };
}

unsafe extern "C" fn on_incompatible_qos_event(user: *mut c_void, total: i32, policy: i32) {
    // SAFETY: `user` is a slot target.
    unsafe {
        into_guest(user, |g, t| {
            g.dispatch(
                t.slot,
                CallbackKind::IncompatibleQos,
                [total.into(), policy.into(), 0, 0],
                &t.description,
            )
        })
    };
}

unsafe extern "C" fn on_parameters(
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
        Some((true, _)) => true,
        Some((false, text)) => refuse(&text),
        None => refuse("the node's WebAssembly instance could not run the callback (it stopped, or the change came from another thread)"),
    }
}

fn parameters_into_guest(
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
            let accepted = accepted?;
            let text = g
                .parts()
                .0
                .c_string(reason_at, REASON_CAPACITY as usize)
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            Ok((accepted != 0, text))
        }
    }
}
