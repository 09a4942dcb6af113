//! The guest ABI v1 at its lowest: the `roslite_v1` imports and the wasm32 C structs they
//! read and write (docs/wasm.md). Everything above this module is safe Rust.
//!
//! On wasm32 a pointer and `usize` are 32 bits, so the Rust types below lower to exactly the
//! `i32`/`i64`/`f64` signatures of the doc's import table. On any other target the same
//! functions exist as stubs that fail with [`NOT_IN_WASM_HOST`], so the crate (and code using
//! it) still compiles, lints and unit-tests in a native workspace build.

use std::ffi::c_char;

/// The handle type of the C ABI (`roslite_handle`); 0 is no object.
pub(crate) type RawHandle = u64;

pub(crate) const STATUS_OK: i32 = 0;
pub(crate) const STATUS_ERROR: i32 = 1;

/// What every call says outside a Wasm host.
#[cfg(not(target_family = "wasm"))]
pub(crate) const NOT_IN_WASM_HOST: &str = "roslite-guest runs only inside a roslite Wasm host \
     (build for wasm32-wasip1 and run the .wasm with `roslite wasm run`)";

/// `roslite_qos`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RawQos {
    pub history: i32,
    pub depth: u32,
    pub reliability: i32,
    pub durability: i32,
    pub deadline_ns: i64,
    pub lifespan_ns: i64,
    pub liveliness: i32,
    pub liveliness_lease_ns: i64,
}

/// `roslite_type`.
#[repr(C)]
pub(crate) struct RawType {
    pub name: *const c_char,
    pub hash: *const c_char,
}

/// `roslite_service_type`.
#[repr(C)]
pub(crate) struct RawServiceType {
    pub name: *const c_char,
    pub request_hash: *const c_char,
    pub response_hash: *const c_char,
}

/// `roslite_message_info`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct RawMessageInfo {
    pub source_timestamp_ns: i64,
    pub received_timestamp_ns: i64,
    pub publication_sequence_number: u64,
    pub from_intra_process: bool,
    pub publisher_gid: [u8; 16],
}

/// `roslite_parameter_value`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct RawParameterValue {
    pub kind: i32,
    pub bool_value: bool,
    pub integer_value: i64,
    pub double_value: f64,
    pub string_value: *const c_char,
    pub array_values: *const u8,
    pub array_length: usize,
}

impl Default for RawParameterValue {
    fn default() -> Self {
        Self {
            kind: 0,
            bool_value: false,
            integer_value: 0,
            double_value: 0.0,
            string_value: std::ptr::null(),
            array_values: std::ptr::null(),
            array_length: 0,
        }
    }
}

/// `roslite_names`.
#[repr(C)]
pub(crate) struct RawNames {
    pub count: usize,
    pub names: *mut *mut c_char,
    pub types: *mut *mut c_char,
}

/// `roslite_buffer`.
#[repr(C)]
pub(crate) struct RawBuffer {
    pub data: *mut u8,
    pub length: usize,
}

/// The host reads and writes these structs at the offsets of docs/wasm.md's struct table; a
/// field moved here would corrupt every call, so the layout is checked at compile time.
#[cfg(target_family = "wasm")]
mod layout_checks {
    use super::*;
    use std::mem::{offset_of, size_of};

    const _: () = {
        assert!(size_of::<RawQos>() == 48);
        assert!(offset_of!(RawQos, depth) == 4);
        assert!(offset_of!(RawQos, reliability) == 8);
        assert!(offset_of!(RawQos, durability) == 12);
        assert!(offset_of!(RawQos, deadline_ns) == 16);
        assert!(offset_of!(RawQos, lifespan_ns) == 24);
        assert!(offset_of!(RawQos, liveliness) == 32);
        assert!(offset_of!(RawQos, liveliness_lease_ns) == 40);
        assert!(size_of::<RawType>() == 8);
        assert!(offset_of!(RawType, hash) == 4);
        assert!(size_of::<RawServiceType>() == 12);
        assert!(offset_of!(RawServiceType, response_hash) == 8);
        assert!(size_of::<RawMessageInfo>() == 48);
        assert!(offset_of!(RawMessageInfo, publication_sequence_number) == 16);
        assert!(offset_of!(RawMessageInfo, publisher_gid) == 25);
        assert!(offset_of!(RawMessageInfo, from_intra_process) == 24);
        assert!(size_of::<RawParameterValue>() == 40);
        assert!(offset_of!(RawParameterValue, bool_value) == 4);
        assert!(offset_of!(RawParameterValue, integer_value) == 8);
        assert!(offset_of!(RawParameterValue, double_value) == 16);
        assert!(offset_of!(RawParameterValue, string_value) == 24);
        assert!(offset_of!(RawParameterValue, array_values) == 28);
        assert!(offset_of!(RawParameterValue, array_length) == 32);
        assert!(size_of::<RawNames>() == 12);
        assert!(offset_of!(RawNames, types) == 8);
        assert!(size_of::<RawBuffer>() == 8);
        assert!(offset_of!(RawBuffer, length) == 4);
    };
}

/// Declares the imports once: as `roslite_v1` imports on wasm, as failing stubs elsewhere.
/// The Rust names carry a `roslite_v1_` prefix and `link_name` gives the import its doc name:
/// a bare `log` or `release` could otherwise bind to a same-named libc symbol at link time.
macro_rules! imports {
    ($($name:ident => fn $rust_name:ident($($arg:ident: $ty:ty),* $(,)?) -> i32;)*) => {
        #[cfg(target_family = "wasm")]
        #[link(wasm_import_module = "roslite_v1")]
        #[allow(dead_code)]
        extern "C" {
            $(
                #[link_name = stringify!($name)]
                pub(crate) fn $rust_name($($arg: $ty),*) -> i32;
            )*
        }

        $(
            // Every import of the table is declared, used yet or not (an unused one does not
            // become an import of the .wasm).
            #[cfg(not(target_family = "wasm"))]
            #[allow(dead_code, clippy::too_many_arguments)]
            pub(crate) unsafe fn $rust_name($($arg: $ty),*) -> i32 {
                let _ = ($($arg,)*);
                STATUS_ERROR
            }
        )*
    };
}

imports! {
    release => fn roslite_v1_release(handle: RawHandle) -> i32;
    context_init => fn roslite_v1_context_init(
        argc: i32, argv: *const *const c_char, out: *mut RawHandle) -> i32;
    context_shutdown => fn roslite_v1_context_shutdown(context: RawHandle) -> i32;
    context_ok => fn roslite_v1_context_ok(context: RawHandle, ok: *mut u32) -> i32;
    install_signal_handlers => fn roslite_v1_install_signal_handlers() -> i32;
    node_create => fn roslite_v1_node_create(
        context: RawHandle, name: *const c_char, namespace: *const c_char,
        out: *mut RawHandle) -> i32;
    node_fully_qualified_name => fn roslite_v1_node_fully_qualified_name(
        node: RawHandle, buffer: *mut u8, capacity: usize, length: *mut usize) -> i32;
    node_logger_name => fn roslite_v1_node_logger_name(
        node: RawHandle, buffer: *mut u8, capacity: usize, length: *mut usize) -> i32;
    callback_group_create => fn roslite_v1_callback_group_create(
        node: RawHandle, kind: i32, out: *mut RawHandle) -> i32;
    node_count_publishers => fn roslite_v1_node_count_publishers(
        node: RawHandle, topic: *const c_char, count: *mut usize) -> i32;
    node_count_subscribers => fn roslite_v1_node_count_subscribers(
        node: RawHandle, topic: *const c_char, count: *mut usize) -> i32;
    node_topic_names_and_types => fn roslite_v1_node_topic_names_and_types(
        node: RawHandle, names: *mut RawNames) -> i32;
    node_service_names_and_types => fn roslite_v1_node_service_names_and_types(
        node: RawHandle, names: *mut RawNames) -> i32;
    node_names => fn roslite_v1_node_names(node: RawHandle, names: *mut RawNames) -> i32;
    qos_profile => fn roslite_v1_qos_profile(profile: i32, qos: *mut RawQos) -> i32;
    publisher_create => fn roslite_v1_publisher_create(
        node: RawHandle, topic: *const c_char, message_type: *const RawType,
        qos: *const RawQos, out: *mut RawHandle) -> i32;
    publish => fn roslite_v1_publish(publisher: RawHandle, cdr: *const u8, length: usize) -> i32;
    publisher_subscription_count => fn roslite_v1_publisher_subscription_count(
        publisher: RawHandle, count: *mut usize) -> i32;
    subscription_create => fn roslite_v1_subscription_create(
        node: RawHandle, group: RawHandle, topic: *const c_char, message_type: *const RawType,
        qos: *const RawQos, slot: u32, out: *mut RawHandle) -> i32;
    subscription_on_message_lost => fn roslite_v1_subscription_on_message_lost(
        subscription: RawHandle, slot: u32) -> i32;
    subscription_publisher_count => fn roslite_v1_subscription_publisher_count(
        subscription: RawHandle, count: *mut usize) -> i32;
    on_matched => fn roslite_v1_on_matched(endpoint: RawHandle, slot: u32) -> i32;
    on_incompatible_qos => fn roslite_v1_on_incompatible_qos(endpoint: RawHandle, slot: u32) -> i32;
    timer_create => fn roslite_v1_timer_create(
        node: RawHandle, group: RawHandle, period_ns: i64, wall: i32, slot: u32,
        out: *mut RawHandle) -> i32;
    timer_cancel => fn roslite_v1_timer_cancel(timer: RawHandle) -> i32;
    timer_reset => fn roslite_v1_timer_reset(timer: RawHandle) -> i32;
    service_create => fn roslite_v1_service_create(
        node: RawHandle, group: RawHandle, service: *const c_char,
        service_type: *const RawServiceType, qos: *const RawQos, slot: u32,
        out: *mut RawHandle) -> i32;
    service_send_response => fn roslite_v1_service_send_response(
        responder: RawHandle, cdr: *const u8, length: usize) -> i32;
    client_create => fn roslite_v1_client_create(
        node: RawHandle, service: *const c_char, service_type: *const RawServiceType,
        out: *mut RawHandle) -> i32;
    client_wait_for_service => fn roslite_v1_client_wait_for_service(
        client: RawHandle, timeout_ns: i64) -> i32;
    client_call => fn roslite_v1_client_call(
        client: RawHandle, request: *const u8, length: usize, timeout_ns: i64,
        response: *mut RawBuffer) -> i32;
    client_send_request => fn roslite_v1_client_send_request(
        client: RawHandle, request: *const u8, length: usize, slot: u32,
        request_id: *mut i64) -> i32;
    client_remove_pending_request => fn roslite_v1_client_remove_pending_request(
        client: RawHandle, request_id: i64) -> i32;
    service_configure_introspection => fn roslite_v1_service_configure_introspection(
        server: RawHandle, qos: *const RawQos, state: i32) -> i32;
    client_configure_introspection => fn roslite_v1_client_configure_introspection(
        client: RawHandle, qos: *const RawQos, state: i32) -> i32;
    parameter_declare => fn roslite_v1_parameter_declare(
        node: RawHandle, name: *const c_char, default_value: *const RawParameterValue,
        value: *mut RawParameterValue) -> i32;
    parameter_get => fn roslite_v1_parameter_get(
        node: RawHandle, name: *const c_char, value: *mut RawParameterValue) -> i32;
    parameter_set => fn roslite_v1_parameter_set(
        node: RawHandle, name: *const c_char, value: *const RawParameterValue) -> i32;
    parameter_add_on_set_callback => fn roslite_v1_parameter_add_on_set_callback(
        node: RawHandle, slot: u32, out: *mut RawHandle) -> i32;
    log => fn roslite_v1_log(
        logger: *const c_char, severity: i32, function: *const c_char,
        message: *const c_char) -> i32;
    executor_create => fn roslite_v1_executor_create(context: RawHandle, out: *mut RawHandle) -> i32;
    executor_add_node => fn roslite_v1_executor_add_node(executor: RawHandle, node: RawHandle) -> i32;
    executor_spin => fn roslite_v1_executor_spin(executor: RawHandle) -> i32;
    executor_spin_threads => fn roslite_v1_executor_spin_threads(
        executor: RawHandle, threads: usize) -> i32;
    executor_spin_some => fn roslite_v1_executor_spin_some(executor: RawHandle) -> i32;
    executor_spin_once => fn roslite_v1_executor_spin_once(
        executor: RawHandle, timeout_ns: i64, ran: *mut u32) -> i32;
    executor_spin_for => fn roslite_v1_executor_spin_for(
        executor: RawHandle, duration_ns: i64) -> i32;
}

// `last_error` returns a length, not a status, so it sits outside the macro.
#[cfg(target_family = "wasm")]
#[link(wasm_import_module = "roslite_v1")]
extern "C" {
    /// Copies up to `capacity` bytes of the last error's text into `buffer` and returns the
    /// text's whole length (docs/wasm.md).
    #[link_name = "last_error"]
    pub(crate) fn roslite_v1_last_error(buffer: *mut u8, capacity: usize) -> usize;
}

/// Outside a Wasm host every call fails, and this is why.
#[cfg(not(target_family = "wasm"))]
pub(crate) unsafe fn roslite_v1_last_error(buffer: *mut u8, capacity: usize) -> usize {
    let text = NOT_IN_WASM_HOST.as_bytes();
    let copied = text.len().min(capacity);
    // SAFETY: the caller gives `capacity` writable bytes at `buffer`.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buffer, copied) };
    text.len()
}
