//! Nodes and the graph: `node_*`, `callback_group_create`, `type_register`.

use super::*;

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
        if let Ok(made) = roslite_c::handles::node(node) {
            g.state()
                .shared
                .ros_nodes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(made.fully_qualified_name());
        }
        hand_out(g, status, node, out)
    })();
    finish(g, outcome)
}

pub(super) type NameFn = unsafe extern "C" fn(u64, *mut c_char, usize, *mut usize) -> i32;

pub(super) fn copy_name(
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

pub(super) type CountFn = unsafe extern "C" fn(u64, *const c_char, *mut usize) -> i32;

pub(super) fn count_on_topic(
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
pub(super) fn guest_alloc(g: &mut dyn GuestCalls, size: u32) -> Result<u32, Fault> {
    let at = g.alloc(size)?;
    if at != 0 {
        if let Some(noted) = g.state().allocations.as_mut() {
            noted.push(at);
        }
    }
    Ok(at)
}

/// Copies `bytes` and a NUL into memory the guest allocates; 0 for no memory.
pub(super) fn guest_string(g: &mut dyn GuestCalls, bytes: &[u8]) -> Result<u32, Fault> {
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
pub(super) fn guest_strings(g: &mut dyn GuestCalls, items: &[Vec<u8>]) -> Result<u32, Fault> {
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

pub(super) type NamesFn = unsafe extern "C" fn(u64, *mut CNames) -> i32;

pub(super) fn names(g: &mut dyn GuestCalls, node: i64, out: i32, f: NamesFn) -> ImportResult {
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
