//! Nodes, and the graph queries a node answers.

use std::ffi::c_char;

use crate::handles::{self, Object};
use crate::status::{guard, Status};
use crate::text::{copy_out, put, text, text_or};

/// # Safety
/// `name` and `namespace_` (may be null) are strings; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_create(
    context: u64,
    name: *const c_char,
    namespace_: *const c_char,
    out: *mut u64,
) -> Status {
    guard(|| {
        let context = handles::context(context)?;
        let name = text(name, "name")?;
        let namespace = match text_or(namespace_, "namespace", "/")? {
            "" => "/",
            namespace => namespace,
        };
        let node = context.create_node_with_namespace(name, namespace)?;
        put(out, handles::insert(Object::Node(node)), "node")
    })
}

/// # Safety
/// `buffer` is null or holds `capacity` bytes; `length` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_fully_qualified_name(
    node: u64,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Status {
    guard(|| {
        let name = handles::node(node)?.fully_qualified_name();
        copy_out(&name, buffer, capacity, length)
    })
}

/// # Safety
/// As [`roslite_node_fully_qualified_name`].
#[no_mangle]
pub unsafe extern "C" fn roslite_node_logger_name(
    node: u64,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        copy_out(node.logger().name(), buffer, capacity, length)
    })
}

/// # Safety
/// `topic` is a string; `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_count_publishers(
    node: u64,
    topic: *const c_char,
    count: *mut usize,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let topic = text(topic, "topic")?;
        put(count, node.count_publishers(topic), "count")
    })
}

/// # Safety
/// `topic` is a string; `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_count_subscribers(
    node: u64,
    topic: *const c_char,
    count: *mut usize,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let topic = text(topic, "topic")?;
        put(count, node.count_subscribers(topic), "count")
    })
}

/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_callback_group_create(
    node: u64,
    kind: i32,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let kind = match kind {
            0 => roslite::CallbackGroupKind::MutuallyExclusive,
            1 => roslite::CallbackGroupKind::Reentrant,
            _ => {
                return Err(crate::status::Failure::invalid_argument(format!(
                    "callback group kind {kind} is not ROSLITE_CALLBACK_GROUP_MUTUALLY_EXCLUSIVE \
                     (0) or ROSLITE_CALLBACK_GROUP_REENTRANT (1)"
                )))
            }
        };
        let group = node.create_callback_group(kind);
        put(
            out,
            handles::insert(Object::CallbackGroup(node, group)),
            "callback_group",
        )
    })
}

/// # Safety
/// `ns` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_now(node: u64, ns: *mut i64) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        put(ns, node.now().nanos, "ns")
    })
}
