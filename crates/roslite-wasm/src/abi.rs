//! The guest ABI, version 1 (docs/wasm.md): the import module, the exports a guest provides,
//! the dispatch kinds and the wasm32 layouts of the header's structs.

/// The version this host speaks, also the suffix of [`IMPORT_MODULE`].
pub const ABI_VERSION: u32 = 1;
/// The core-module import module every roslite import comes from.
pub const IMPORT_MODULE: &str = "roslite_v1";
/// The prefix of import modules of any ABI version (`roslite_v2` is refused by name).
pub const IMPORT_MODULE_PREFIX: &str = "roslite_v";
/// WASI's import module (preview 1).
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";

pub const EXPORT_MEMORY: &str = "memory";
pub const EXPORT_START: &str = "_start";
pub const EXPORT_DISPATCH: &str = "roslite_guest_dispatch";
pub const EXPORT_ALLOC: &str = "roslite_guest_alloc";
pub const EXPORT_FREE: &str = "roslite_guest_free";

/// What a dispatched slot is (the `kind` argument of `roslite_guest_dispatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum CallbackKind {
    Message = 1,
    Timer = 2,
    Request = 3,
    Response = 4,
    MessageLost = 5,
    Matched = 6,
    IncompatibleQos = 7,
    Parameters = 8,
}

impl CallbackKind {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Message => "subscription callback",
            Self::Timer => "timer callback",
            Self::Request => "service callback",
            Self::Response => "response callback",
            Self::MessageLost => "message-lost callback",
            Self::Matched => "matched callback",
            Self::IncompatibleQos => "incompatible-QoS callback",
            Self::Parameters => "on-set-parameters callback",
        }
    }
}

/// Bytes the host gives a parameters callback for its refusal reason.
pub const REASON_CAPACITY: u32 = 256;

/// wasm32 layouts (docs/wasm.md, "Structs").
pub mod layout {
    pub const QOS_SIZE: u32 = 48;
    pub const MESSAGE_INFO_SIZE: u32 = 48;
    pub const PARAMETER_VALUE_SIZE: u32 = 40;
    pub const NAMES_SIZE: u32 = 12;
    pub const BUFFER_SIZE: u32 = 8;
}

/// Every import of [`IMPORT_MODULE`], for the module check and the engines' linkers: calls
/// `$m! { name(arg: type, ...); ... }`; each returns the status as `i32`.
macro_rules! roslite_imports {
    // `[...]`, when given, comes before the list for the callback (the linker and error type).
    ($m:ident $([$($extra:tt)*])?) => {
        $m! {
            $([$($extra)*])?
            last_error(buffer: i32, capacity: i32);
            release(handle: i64);
            context_init(argc: i32, argv: i32, out: i32);
            context_shutdown(context: i64);
            context_ok(context: i64, ok: i32);
            install_signal_handlers();
            node_create(context: i64, name: i32, namespace: i32, out: i32);
            node_fully_qualified_name(node: i64, buffer: i32, capacity: i32, length: i32);
            node_logger_name(node: i64, buffer: i32, capacity: i32, length: i32);
            node_now(node: i64, ns: i32);
            callback_group_create(node: i64, kind: i32, out: i32);
            node_count_publishers(node: i64, topic: i32, count: i32);
            node_count_subscribers(node: i64, topic: i32, count: i32);
            node_topic_names_and_types(node: i64, names: i32);
            node_service_names_and_types(node: i64, names: i32);
            node_names(node: i64, names: i32);
            qos_profile(profile: i32, qos: i32);
            type_register(definition: i32);
            publisher_create(node: i64, topic: i32, message_type: i32, qos: i32, out: i32);
            publish(publisher: i64, cdr: i32, length: i32);
            publisher_subscription_count(publisher: i64, count: i32);
            subscription_create(node: i64, group: i64, topic: i32, message_type: i32, qos: i32, slot: i32, out: i32);
            subscription_on_message_lost(subscription: i64, slot: i32);
            subscription_publisher_count(subscription: i64, count: i32);
            on_matched(endpoint: i64, slot: i32);
            on_incompatible_qos(endpoint: i64, slot: i32);
            timer_create(node: i64, group: i64, period_ns: i64, wall: i32, slot: i32, out: i32);
            timer_cancel(timer: i64);
            timer_reset(timer: i64);
            service_create(node: i64, group: i64, service: i32, service_type: i32, qos: i32, slot: i32, out: i32);
            service_send_response(responder: i64, cdr: i32, length: i32);
            client_create(node: i64, service: i32, service_type: i32, out: i32);
            client_wait_for_service(client: i64, timeout_ns: i64);
            client_call(client: i64, request: i32, length: i32, timeout_ns: i64, response: i32);
            client_send_request(client: i64, request: i32, length: i32, slot: i32, request_id: i32);
            client_remove_pending_request(client: i64, request_id: i64);
            service_configure_introspection(server: i64, qos: i32, state: i32);
            client_configure_introspection(client: i64, qos: i32, state: i32);
            parameter_declare(node: i64, name: i32, default_value: i32, value: i32);
            parameter_get(node: i64, name: i32, value: i32);
            parameter_set(node: i64, name: i32, value: i32);
            parameter_add_on_set_callback(node: i64, slot: i32, out: i32);
            log(logger: i32, severity: i32, function: i32, message: i32);
            executor_create(context: i64, out: i32);
            executor_add_node(executor: i64, node: i64);
            executor_spin(executor: i64);
            executor_spin_threads(executor: i64, threads: i32);
            executor_spin_some(executor: i64);
            executor_spin_once(executor: i64, timeout_ns: i64, ran: i32);
            executor_spin_for(executor: i64, duration_ns: i64);
        }
    };
}
pub(crate) use roslite_imports;

/// One import's name and its parameter types, for checking a module before it is linked.
pub struct ImportSignature {
    pub name: &'static str,
    pub params: &'static [ValueType],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    I32,
    I64,
}

macro_rules! value_type {
    (i32) => {
        ValueType::I32
    };
    (i64) => {
        ValueType::I64
    };
}

macro_rules! signature_table {
    ($($name:ident($($arg:ident: $ty:tt),* $(,)?);)*) => {
        /// Every import of [`IMPORT_MODULE`] (all return `i32`).
        pub const IMPORTS: &[ImportSignature] = &[
            $(ImportSignature { name: stringify!($name), params: &[$(value_type!($ty)),*] },)*
        ];
    };
}

roslite_imports!(signature_table);

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/wasm.md's import table and this list name the same imports with the same arity.
    #[test]
    fn the_documented_imports_are_the_linked_ones() {
        let doc = include_str!("../../../docs/wasm.md");
        let mut documented: Vec<(String, usize)> = Vec::new();
        let mut in_table = false;
        for line in doc.lines() {
            if line.starts_with("### Imports") {
                in_table = true;
                continue;
            }
            if in_table && line.starts_with("###") {
                break;
            }
            let Some(rest) = line.strip_prefix("| `") else {
                continue;
            };
            if !in_table {
                continue;
            }
            let name = rest.split('`').next().unwrap().to_owned();
            let args = line
                .split('|')
                .nth(2)
                .unwrap()
                .split("->")
                .next()
                .unwrap()
                .trim();
            let arity = if args.is_empty() {
                0
            } else {
                args.split(',').count()
            };
            documented.push((name, arity));
        }
        let linked: Vec<(String, usize)> = IMPORTS
            .iter()
            .map(|i| (i.name.to_owned(), i.params.len()))
            .collect();
        assert_eq!(documented, linked);
    }
}
