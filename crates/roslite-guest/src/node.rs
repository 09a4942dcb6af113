//! Context, node, timers, callback groups and the executor: handles in the host, named the
//! way `roslite` names them.

use std::ffi::{c_char, CString};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{c_string, check, read_c_str, read_host_text, Error, ErrorCode};
use crate::exports::{kind, Slot};
use crate::log::Logger;
use crate::params::{
    read_raw_value, Ownership, Parameter, ParameterValue, RawValueWithStorage, SetParametersResult,
};
use crate::qos::nanoseconds;
use crate::sys::{self, RawHandle, RawNames, RawParameterValue};

/// A host object the guest created; dropping it releases it (`roslite_release`).
#[derive(Debug)]
pub(crate) struct OwnedHandle(RawHandle);

impl OwnedHandle {
    /// Runs a creating call with an out-pointer and owns what it made.
    pub(crate) fn create(make: impl FnOnce(*mut RawHandle) -> i32) -> Result<Self, Error> {
        let mut handle: RawHandle = 0;
        check(make(&mut handle))?;
        Ok(Self(handle))
    }

    pub(crate) fn raw(&self) -> RawHandle {
        self.0
    }
}

impl Drop for OwnedHandle {
    fn drop(&mut self) {
        // SAFETY: plain integer argument. A failure (the host already ended it) leaves
        // nothing to clean up.
        unsafe { sys::roslite_v1_release(self.0) };
    }
}

/// Shared state of the nodes created from it (`roslite_context_init`). Cheap to clone.
#[derive(Clone, Debug)]
pub struct Context {
    handle: Rc<OwnedHandle>,
}

impl Context {
    /// A context from the guest's command line, which the host passes as WASI arguments
    /// (`--ros-args ...` as rcl reads them); the environment is the host's.
    ///
    /// # Errors
    /// The host's refusal (a bad ROS argument), or not running in a Wasm host at all.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_and_args(std::env::args())
    }

    /// A context from `args` (program name first, as `argv`).
    ///
    /// # Errors
    /// As [`Self::from_env`]; an argument with a NUL byte.
    pub fn from_env_and_args<I, S>(args: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let args: Vec<CString> = args
            .into_iter()
            .map(|arg| c_string(&arg.into(), "argument"))
            .collect::<Result<_, _>>()?;
        let argv: Vec<*const c_char> = args.iter().map(|arg| arg.as_ptr()).collect();
        let argc = i32::try_from(argv.len())
            .map_err(|_| Error::new(ErrorCode::InvalidArgument, "too many arguments"))?;
        let handle = OwnedHandle::create(|out| {
            // SAFETY: `argv` holds `argc` NUL-terminated strings alive during the call.
            unsafe { sys::roslite_v1_context_init(argc, argv.as_ptr(), out) }
        })?;
        Ok(Self {
            handle: Rc::new(handle),
        })
    }

    /// Stops every executor spinning nodes of this context.
    pub fn shutdown(&self) {
        // SAFETY: plain integer argument.
        let status = unsafe { sys::roslite_v1_context_shutdown(self.raw()) };
        report_failure("context shutdown", check(status));
    }

    /// Whether the context is running (not shut down).
    pub fn ok(&self) -> bool {
        // The host may write a C `bool` (one byte) or an i32; a zeroed u32 reads right either
        // way on little-endian wasm.
        let mut ok = 0u32;
        // SAFETY: `ok` is writable for the call.
        let status = unsafe { sys::roslite_v1_context_ok(self.raw(), &mut ok) };
        status == sys::STATUS_OK && ok != 0
    }

    /// A node named `name` in the root namespace.
    ///
    /// # Errors
    /// [`ErrorCode::InvalidName`] for a name ROS 2 does not accept.
    pub fn create_node(&self, name: &str) -> Result<Node, Error> {
        Node::new(self, name, "/")
    }

    /// A node in `namespace` (relative: from the root).
    ///
    /// # Errors
    /// [`ErrorCode::InvalidName`] for a name or namespace ROS 2 does not accept.
    pub fn create_node_with_namespace(&self, name: &str, namespace: &str) -> Result<Node, Error> {
        Node::new(self, name, namespace)
    }

    pub(crate) fn raw(&self) -> RawHandle {
        self.handle.raw()
    }
}

/// From now on SIGINT and SIGTERM reaching the host shut down every context.
///
/// # Errors
/// The host's refusal.
pub fn install_signal_handlers() -> Result<(), Error> {
    // SAFETY: no arguments.
    check(unsafe { sys::roslite_v1_install_signal_handlers() })
}

/// A ROS 2 node. Cheap to clone; the host keeps it alive while anything created from it is.
#[derive(Clone, Debug)]
pub struct Node {
    inner: Rc<NodeInner>,
}

#[derive(Debug)]
struct NodeInner {
    handle: OwnedHandle,
    context: Context,
    fully_qualified_name: String,
    logger: Logger,
}

impl Node {
    /// A node `name` in `namespace` ("" or "/": the root).
    ///
    /// # Errors
    /// [`ErrorCode::InvalidName`] for a name or namespace ROS 2 does not accept.
    pub fn new(context: &Context, name: &str, namespace: &str) -> Result<Self, Error> {
        let name = c_string(name, "node name")?;
        let namespace = c_string(namespace, "namespace")?;
        let handle = OwnedHandle::create(|out| {
            // SAFETY: NUL-terminated strings alive during the call.
            unsafe {
                sys::roslite_v1_node_create(context.raw(), name.as_ptr(), namespace.as_ptr(), out)
            }
        })?;
        // The host applies `__node`/`__ns` remapping, so the names are asked back.
        let fully_qualified_name = read_host_text(|buffer, capacity, length| {
            // SAFETY: `buffer` has `capacity` writable bytes, `length` is writable.
            unsafe {
                sys::roslite_v1_node_fully_qualified_name(handle.raw(), buffer, capacity, length)
            }
        })?;
        let logger_name = read_host_text(|buffer, capacity, length| {
            // SAFETY: as above.
            unsafe { sys::roslite_v1_node_logger_name(handle.raw(), buffer, capacity, length) }
        })?;
        Ok(Self {
            inner: Rc::new(NodeInner {
                handle,
                context: context.clone(),
                fully_qualified_name,
                logger: Logger::new(logger_name),
            }),
        })
    }

    pub fn name(&self) -> &str {
        let fq = &self.inner.fully_qualified_name;
        fq.rsplit_once('/').map_or(fq.as_str(), |(_, name)| name)
    }

    /// `/` for the root namespace.
    pub fn namespace(&self) -> &str {
        match self.inner.fully_qualified_name.rsplit_once('/') {
            Some(("", _)) | None => "/",
            Some((namespace, _)) => namespace,
        }
    }

    pub fn fully_qualified_name(&self) -> String {
        self.inner.fully_qualified_name.clone()
    }

    pub fn context(&self) -> &Context {
        &self.inner.context
    }

    pub fn logger(&self) -> &Logger {
        &self.inner.logger
    }

    pub(crate) fn raw(&self) -> RawHandle {
        self.inner.handle.raw()
    }

    /// A callback group for the `*_in` functions. On the guest's one thread every callback
    /// runs alone anyway; groups matter to the host's scheduling.
    ///
    /// # Errors
    /// The host's refusal.
    pub fn create_callback_group(
        &self,
        kind: CallbackGroupKind,
    ) -> Result<Arc<CallbackGroup>, Error> {
        let kind = match kind {
            CallbackGroupKind::MutuallyExclusive => 0,
            CallbackGroupKind::Reentrant => 1,
        };
        let handle = OwnedHandle::create(|out| {
            // SAFETY: `out` is writable.
            unsafe { sys::roslite_v1_callback_group_create(self.raw(), kind, out) }
        })?;
        Ok(Arc::new(CallbackGroup {
            handle: Some(handle),
        }))
    }

    /// A timer calling `callback` every `period` on the node's clock (simulated time under
    /// `use_sim_time`).
    ///
    /// # Errors
    /// A zero period, or the host's refusal.
    pub fn create_timer(
        &self,
        period: Duration,
        callback: impl FnMut() + 'static,
    ) -> Result<Timer, Error> {
        self.make_timer(&CallbackGroup::DEFAULT, period, false, callback)
    }

    /// As [`Self::create_timer`], in `group`.
    ///
    /// # Errors
    /// As [`Self::create_timer`].
    pub fn create_timer_in(
        &self,
        group: &CallbackGroup,
        period: Duration,
        callback: impl FnMut() + 'static,
    ) -> Result<Timer, Error> {
        self.make_timer(group, period, false, callback)
    }

    /// A timer on steady time even under `use_sim_time` (rclcpp's wall timer).
    ///
    /// # Errors
    /// As [`Self::create_timer`].
    pub fn create_wall_timer(
        &self,
        period: Duration,
        callback: impl FnMut() + 'static,
    ) -> Result<Timer, Error> {
        self.make_timer(&CallbackGroup::DEFAULT, period, true, callback)
    }

    /// As [`Self::create_wall_timer`], in `group`.
    ///
    /// # Errors
    /// As [`Self::create_timer`].
    pub fn create_wall_timer_in(
        &self,
        group: &CallbackGroup,
        period: Duration,
        callback: impl FnMut() + 'static,
    ) -> Result<Timer, Error> {
        self.make_timer(group, period, true, callback)
    }

    fn make_timer(
        &self,
        group: &CallbackGroup,
        period: Duration,
        wall: bool,
        mut callback: impl FnMut() + 'static,
    ) -> Result<Timer, Error> {
        if period.is_zero() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "timer period must be greater than zero",
            ));
        }
        let slot = Slot::register(move |call| {
            if call.kind == kind::TIMER {
                callback();
            }
            0
        });
        let handle = OwnedHandle::create(|out| {
            // SAFETY: `out` is writable.
            unsafe {
                sys::roslite_v1_timer_create(
                    self.raw(),
                    group.raw(),
                    nanoseconds(period),
                    i32::from(wall),
                    slot.number(),
                    out,
                )
            }
        })?;
        Ok(Timer {
            handle,
            _slot: slot,
            period,
        })
    }

    /// Publishers on `topic` in the graph; 0 if the host cannot say.
    pub fn count_publishers(&self, topic: &str) -> usize {
        // SAFETY: a NUL-terminated topic and a writable count, alive during the call.
        self.count(topic, |node, topic, count| unsafe {
            sys::roslite_v1_node_count_publishers(node, topic, count)
        })
    }

    /// Subscriptions on `topic` in the graph; 0 if the host cannot say.
    pub fn count_subscribers(&self, topic: &str) -> usize {
        // SAFETY: as in `count_publishers`.
        self.count(topic, |node, topic, count| unsafe {
            sys::roslite_v1_node_count_subscribers(node, topic, count)
        })
    }

    fn count(
        &self,
        topic: &str,
        import: impl FnOnce(RawHandle, *const c_char, *mut usize) -> i32,
    ) -> usize {
        let Ok(topic) = c_string(topic, "topic") else {
            return 0;
        };
        let mut count = 0;
        let status = import(self.raw(), topic.as_ptr(), &mut count);
        if status == sys::STATUS_OK {
            count
        } else {
            0
        }
    }

    /// The graph's topics with their types, as the host lists them; empty if it cannot.
    pub fn topic_names_and_types(&self) -> Vec<(String, Vec<String>)> {
        // SAFETY: `names` is writable during the call.
        self.names_and_types(|node, names| unsafe {
            sys::roslite_v1_node_topic_names_and_types(node, names)
        })
    }

    /// The graph's services with their types; empty if the host cannot say.
    pub fn service_names_and_types(&self) -> Vec<(String, Vec<String>)> {
        // SAFETY: `names` is writable during the call.
        self.names_and_types(|node, names| unsafe {
            sys::roslite_v1_node_service_names_and_types(node, names)
        })
    }

    /// Fully qualified names of the graph's nodes; empty if the host cannot say.
    pub fn node_names(&self) -> Vec<String> {
        // SAFETY: `names` is writable during the call.
        self.names_and_types(|node, names| unsafe { sys::roslite_v1_node_names(node, names) })
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    fn names_and_types(
        &self,
        import: impl FnOnce(RawHandle, *mut RawNames) -> i32,
    ) -> Vec<(String, Vec<String>)> {
        let mut names = RawNames {
            count: 0,
            names: std::ptr::null_mut(),
            types: std::ptr::null_mut(),
        };
        // SAFETY: `names` is writable; on success the host filled it with arrays (and
        // strings in them) from `roslite_guest_alloc`, which are read once and freed here.
        unsafe {
            if import(self.raw(), &mut names) != sys::STATUS_OK {
                return Vec::new();
            }
            let mut listed = Vec::with_capacity(names.count);
            for i in 0..names.count {
                let name = take_host_string(names.names, i);
                let types = take_host_string(names.types, i);
                let types = types
                    .split(',')
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
                    .collect();
                listed.push((name, types));
            }
            crate::exports::free(names.names.cast());
            crate::exports::free(names.types.cast());
            listed
        }
    }

    /// Declares parameter `name` with `default` and returns its value (an override from
    /// `-p` or `--params-file` wins). Unlike `roslite`'s, it takes no descriptor: the C ABI
    /// carries none.
    ///
    /// # Errors
    /// The host's refusal: already declared, an override of another type, refused by an
    /// on-set callback.
    pub fn declare_parameter(
        &self,
        name: &str,
        default: impl Into<ParameterValue>,
    ) -> Result<ParameterValue, Error> {
        let name = c_string(name, "parameter name")?;
        let default = RawValueWithStorage::new(&default.into())?;
        let mut value = RawParameterValue::default();
        // SAFETY: all pointers live during the call; the host fills `value` with memory from
        // `roslite_guest_alloc`, which `read_raw_value` frees.
        unsafe {
            check(sys::roslite_v1_parameter_declare(
                self.raw(),
                name.as_ptr(),
                &default.raw,
                &mut value,
            ))?;
            Ok(read_raw_value(&value, Ownership::GuestFrees))
        }
    }

    /// The parameter's current value.
    ///
    /// # Errors
    /// [`ErrorCode::NotFound`] for an undeclared parameter.
    pub fn get_parameter(&self, name: &str) -> Result<Parameter, Error> {
        let c_name = c_string(name, "parameter name")?;
        let mut value = RawParameterValue::default();
        // SAFETY: as in `declare_parameter`.
        let value = unsafe {
            check(sys::roslite_v1_parameter_get(
                self.raw(),
                c_name.as_ptr(),
                &mut value,
            ))?;
            read_raw_value(&value, Ownership::GuestFrees)
        };
        Ok(Parameter {
            name: name.to_owned(),
            value,
        })
    }

    pub fn has_parameter(&self, name: &str) -> bool {
        self.get_parameter(name).is_ok()
    }

    /// Sets a declared parameter; the result says whether it was set, and why not.
    pub fn set_parameter(&self, parameter: Parameter) -> SetParametersResult {
        let set = || -> Result<(), Error> {
            let name = c_string(&parameter.name, "parameter name")?;
            let value = RawValueWithStorage::new(&parameter.value)?;
            // SAFETY: pointers alive during the call.
            check(unsafe { sys::roslite_v1_parameter_set(self.raw(), name.as_ptr(), &value.raw) })
        };
        match set() {
            Ok(()) => SetParametersResult::success(),
            Err(e) => SetParametersResult::rejected(e.to_string()),
        }
    }

    /// Sets each parameter on its own, in order; one result per parameter.
    pub fn set_parameters(&self, parameters: &[Parameter]) -> Vec<SetParametersResult> {
        parameters
            .iter()
            .map(|p| self.set_parameter(p.clone()))
            .collect()
    }

    /// Adds a callback that sees every declaration and set before it is applied and may
    /// refuse it ([`SetParametersResult::rejected`]); it stays until the handle is dropped.
    /// A refusal reason longer than 255 bytes is cut.
    pub fn add_on_set_parameters_callback(
        &self,
        callback: impl Fn(&[Parameter]) -> SetParametersResult + 'static,
    ) -> OnSetParametersCallbackHandle {
        let slot = Slot::register(move |call| {
            if call.kind != kind::PARAMETERS {
                return 0;
            }
            // SAFETY: the host passes `count` names and values and a 256-byte reason buffer,
            // all its own and alive during this call.
            unsafe { on_set_parameters(&callback, call.a, call.b, call.c, call.d) }
        });
        let handle = OwnedHandle::create(|out| {
            // SAFETY: `out` is writable.
            unsafe { sys::roslite_v1_parameter_add_on_set_callback(self.raw(), slot.number(), out) }
        });
        let handle = match handle {
            Ok(handle) => Some(handle),
            Err(e) => {
                report_failure("add_on_set_parameters_callback", Err(e));
                None
            }
        };
        OnSetParametersCallbackHandle {
            _handle: handle,
            _slot: slot,
        }
    }
}

/// The `index`th string of a host-allocated array, freed after reading.
///
/// # Safety
/// `strings` is null or has more than `index` entries, each null or a string from
/// `roslite_guest_alloc` not used again.
unsafe fn take_host_string(strings: *mut *mut c_char, index: usize) -> String {
    if strings.is_null() {
        return String::new();
    }
    // SAFETY: as the caller promises.
    unsafe {
        let text = strings.add(index).read();
        let read = read_c_str(text);
        crate::exports::free(text.cast());
        read
    }
}

/// Kind 8: the callback's verdict on `count` parameters, its reason written for the host.
///
/// # Safety
/// As the dispatch table of docs/wasm.md says for kind 8.
unsafe fn on_set_parameters(
    callback: &dyn Fn(&[Parameter]) -> SetParametersResult,
    names: i64,
    values: i64,
    count: i64,
    reason: i64,
) -> i32 {
    const REASON_CAPACITY: usize = 256;
    let names = names as usize as *const *const c_char;
    let values = values as usize as *const RawParameterValue;
    let count = usize::try_from(count).unwrap_or(0);
    // SAFETY (all blocks): as the caller promises.
    let parameters: Vec<Parameter> = (0..count)
        .map(|i| unsafe {
            Parameter {
                name: read_c_str(names.add(i).read()),
                value: read_raw_value(&values.add(i).read_unaligned(), Ownership::HostFrees),
            }
        })
        .collect();
    let verdict = callback(&parameters);
    let reason = reason as usize as *mut u8;
    if !reason.is_null() {
        let mut length = verdict.reason.len().min(REASON_CAPACITY - 1);
        while !verdict.reason.is_char_boundary(length) {
            length -= 1;
        }
        unsafe {
            reason.copy_from_nonoverlapping(verdict.reason.as_ptr(), length);
            reason.add(length).write(0);
        }
    }
    i32::from(verdict.successful)
}

/// Keeps an on-set-parameters callback registered; dropping it removes the callback.
#[derive(Debug)]
pub struct OnSetParametersCallbackHandle {
    _handle: Option<OwnedHandle>,
    _slot: Slot,
}

/// rclcpp's callback group kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallbackGroupKind {
    #[default]
    MutuallyExclusive,
    Reentrant,
}

/// A callback group of a node ([`Node::create_callback_group`]).
#[derive(Debug)]
pub struct CallbackGroup {
    handle: Option<OwnedHandle>,
}

impl CallbackGroup {
    /// The node's default group: handle 0 in the C ABI.
    pub(crate) const DEFAULT: CallbackGroup = CallbackGroup { handle: None };

    pub(crate) fn raw(&self) -> RawHandle {
        self.handle.as_ref().map_or(0, OwnedHandle::raw)
    }
}

/// A periodic timer. Dropping it stops it.
#[derive(Debug)]
pub struct Timer {
    // Released before the slot goes: the host must not call a slot that is gone.
    handle: OwnedHandle,
    _slot: Slot,
    period: Duration,
}

impl Timer {
    pub fn period(&self) -> Duration {
        self.period
    }

    pub fn cancel(&self) {
        // SAFETY: plain integer argument.
        report_failure(
            "timer cancel",
            check(unsafe { sys::roslite_v1_timer_cancel(self.handle.raw()) }),
        );
    }

    /// Restarts the period from now (and un-cancels).
    pub fn reset(&self) {
        // SAFETY: plain integer argument.
        report_failure(
            "timer reset",
            check(unsafe { sys::roslite_v1_timer_reset(self.handle.raw()) }),
        );
    }
}

/// Runs the callbacks of the nodes added to it, until the context shuts down. The host runs
/// the loop and calls into the guest for each callback.
#[derive(Debug)]
pub struct Executor {
    handle: Result<OwnedHandle, Error>,
}

impl Executor {
    /// An executor stopped by `ctx.shutdown()`. As `roslite::Executor::new` it cannot fail;
    /// a host refusal is logged and reported again by each spin.
    pub fn new(ctx: &Context) -> Self {
        let handle = OwnedHandle::create(|out| {
            // SAFETY: `out` is writable.
            unsafe { sys::roslite_v1_executor_create(ctx.raw(), out) }
        });
        if let Err(e) = &handle {
            report_failure("executor create", Err(e.clone()));
        }
        Self { handle }
    }

    fn run(&self, what: &str, call: impl FnOnce(RawHandle) -> i32) {
        let result = match &self.handle {
            Ok(handle) => check(call(handle.raw())),
            Err(e) => Err(e.clone()),
        };
        report_failure(what, result);
    }

    /// Schedules the node's callbacks.
    pub fn add_node(&self, node: &Node) {
        // SAFETY: plain integer arguments.
        self.run("executor add_node", |executor| unsafe {
            sys::roslite_v1_executor_add_node(executor, node.raw())
        });
    }

    /// Runs callbacks until the context is shut down.
    pub fn spin(&self) {
        // SAFETY: plain integer argument.
        self.run("executor spin", |executor| unsafe {
            sys::roslite_v1_executor_spin(executor)
        });
    }

    /// As `roslite`'s; the guest has one thread, so the host runs them all on it.
    ///
    /// # Errors
    /// The host's refusal.
    pub fn spin_threads(&self, threads: usize) -> Result<(), Error> {
        let executor = self.handle.as_ref().map_err(Clone::clone)?;
        // SAFETY: plain integer arguments.
        check(unsafe { sys::roslite_v1_executor_spin_threads(executor.raw(), threads) })
    }

    /// Runs callbacks for `duration`.
    pub fn spin_for(&self, duration: Duration) {
        // SAFETY: plain integer arguments.
        self.run("executor spin_for", |executor| unsafe {
            sys::roslite_v1_executor_spin_for(executor, nanoseconds(duration))
        });
    }

    /// Runs every callback that is ready now.
    pub fn spin_some(&self) {
        // SAFETY: plain integer argument.
        self.run("executor spin_some", |executor| unsafe {
            sys::roslite_v1_executor_spin_some(executor)
        });
    }

    /// Waits up to `timeout` (`None`: for ever) for work and runs one callback; returns
    /// whether one ran.
    pub fn spin_once(&self, timeout: Option<Duration>) -> bool {
        let mut ran = 0u32;
        let timeout_ns = timeout.map_or(-1, nanoseconds);
        // SAFETY: `ran` is writable during the call (a zeroed u32 reads a one-byte bool too).
        self.run("executor spin_once", |executor| unsafe {
            sys::roslite_v1_executor_spin_once(executor, timeout_ns, &mut ran)
        });
        ran != 0
    }
}

/// Spins one node until its context shuts down, like `rclcpp::spin(node)`.
pub fn spin(node: &Node) {
    let executor = Executor::new(node.context());
    executor.add_node(node);
    executor.spin();
}

/// Where a call that cannot return its error (as in `roslite`'s signature) says it failed.
pub(crate) fn report_failure(what: &str, result: Result<(), Error>) {
    if let Err(e) = result {
        Logger::new("roslite_guest").error(format_args!("{what}: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_host_a_context_cannot_be_made() {
        let error = Context::from_env_and_args(["guest"]).unwrap_err();
        assert!(error.message.contains("roslite Wasm host"), "{error}");
    }

    #[test]
    fn a_refusal_reason_is_cut_at_a_character_and_terminated() {
        let mut reason = [0xffu8; 256];
        let refuse = |_: &[Parameter]| SetParametersResult::rejected("é".repeat(200));
        // SAFETY: no names or values (count 0) and a 256-byte reason buffer.
        let accepted =
            unsafe { on_set_parameters(&refuse, 0, 0, 0, reason.as_mut_ptr() as usize as i64) };
        assert_eq!(accepted, 0);
        let end = reason.iter().position(|b| *b == 0).unwrap();
        assert_eq!(end, 254);
        assert!(std::str::from_utf8(&reason[..end]).is_ok());
    }
}
