//! Managed (lifecycle) nodes: [`roslite::lifecycle::LifecycleNode`] over a node handle, its
//! transitions running one C callback, and its publishers that send only while it is active.
//!
//! States, transitions and callback results cross as the `lifecycle_msgs` ids (`State`'s
//! `PRIMARY_STATE_*` and `TRANSITION_STATE_*`, `Transition`'s `TRANSITION_*` and
//! `TRANSITION_CALLBACK_*`): small integers a WebAssembly guest passes as they are.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use roslite::lifecycle::{
    CallbackReturn, LifecycleCallbacks, LifecycleError, LifecycleNode, LifecycleState,
    TransitionRequest,
};

use crate::convert::{message_type, qos_of, CQos, CType, UserData};
use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status, ROSLITE_INVALID_TRANSITION};
use crate::text::{copy_out, put, text, text_or};

/// `roslite_lifecycle_callback`: called with the transition state being run (10 to 15) and
/// the primary state the transition started from; answers a `TRANSITION_CALLBACK_*` id.
pub type LifecycleCallback = unsafe extern "C" fn(*mut c_void, u8, u8) -> u8;

/// The C side's callbacks: one function for all six, told which by the transition state.
struct CCallbacks {
    callback: Option<LifecycleCallback>,
    user: UserData,
}

impl CCallbacks {
    fn call(
        &self,
        node: &LifecycleNode,
        running: LifecycleState,
        previous: LifecycleState,
    ) -> CallbackReturn {
        let Some(callback) = self.callback else {
            return CallbackReturn::Success;
        };
        // SAFETY: the caller of roslite_lifecycle_node_create promised `callback` takes
        // `user_data` while the lifecycle node lives.
        let answer = unsafe { callback(self.user.0, running.id(), previous.id()) };
        callback_return(answer).unwrap_or_else(|| {
            node.logger().error(format_args!(
                "the lifecycle callback answered {answer} in state '{running}', which is not \
                 ROSLITE_LIFECYCLE_CALLBACK_SUCCESS (97), _FAILURE (98) or _ERROR (99); it \
                 counts as an error"
            ));
            CallbackReturn::Error
        })
    }
}

impl LifecycleCallbacks for CCallbacks {
    fn on_configure(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.call(node, LifecycleState::Configuring, previous)
    }
    fn on_cleanup(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.call(node, LifecycleState::CleaningUp, previous)
    }
    fn on_activate(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.call(node, LifecycleState::Activating, previous)
    }
    fn on_deactivate(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.call(node, LifecycleState::Deactivating, previous)
    }
    fn on_shutdown(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.call(node, LifecycleState::ShuttingDown, previous)
    }
    fn on_error(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.call(node, LifecycleState::ErrorProcessing, previous)
    }
}

/// The result a `TRANSITION_CALLBACK_*` id names.
fn callback_return(id: u8) -> Option<CallbackReturn> {
    [
        CallbackReturn::Success,
        CallbackReturn::Failure,
        CallbackReturn::Error,
    ]
    .into_iter()
    .find(|r| r.id() == id)
}

impl From<LifecycleError> for Failure {
    fn from(e: LifecycleError) -> Self {
        Self::new(ROSLITE_INVALID_TRANSITION, e.to_string())
    }
}

/// # Safety
/// `out` is writable; `callback` (may be NULL) stays callable with `user_data` while the
/// lifecycle node lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_lifecycle_node_create(
    node: u64,
    callback: Option<LifecycleCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        // Checked first: the node's lifecycle services start with it, and would outlive a
        // handle that could not be handed back.
        if out.is_null() {
            return Err(Failure::invalid_argument("lifecycle_node is NULL"));
        }
        let callbacks = CCallbacks {
            callback,
            user: UserData(user_data),
        };
        let managed = LifecycleNode::new(node, callbacks)?;
        put(
            out,
            handles::insert(Object::LifecycleNode(Arc::new(managed))),
            "lifecycle_node",
        )
    })
}

/// # Safety
/// `label` is NULL or a string; `state` and `callback_result` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_lifecycle_node_trigger(
    lifecycle_node: u64,
    transition_id: u8,
    label: *const c_char,
    state: *mut u8,
    callback_result: *mut u8,
) -> Status {
    guard(|| {
        let managed = handles::lifecycle_node(lifecycle_node)?;
        let requested = TransitionRequest::from_msg(transition_id, text_or(label, "label", "")?);
        let outcome = managed.trigger(&requested)?;
        if !state.is_null() {
            state.write(outcome.state.id());
        }
        if !callback_result.is_null() {
            callback_result.write(outcome.result.id());
        }
        Ok(())
    })
}

/// # Safety
/// `state` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_lifecycle_node_state(
    lifecycle_node: u64,
    state: *mut u8,
) -> Status {
    guard(|| {
        let managed = handles::lifecycle_node(lifecycle_node)?;
        put(state, managed.current_state().id(), "state")
    })
}

/// # Safety
/// As [`crate::node::roslite_node_fully_qualified_name`].
#[no_mangle]
pub unsafe extern "C" fn roslite_lifecycle_state_label(
    state: u8,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Status {
    guard(|| {
        let known = LifecycleState::from_id(state).ok_or_else(|| {
            Failure::invalid_argument(format!(
                "{state} is not a lifecycle state id (0 to 4, 10 to 15: \
                 ROSLITE_LIFECYCLE_STATE_*)"
            ))
        })?;
        copy_out(known.label(), buffer, capacity, length)
    })
}

/// # Safety
/// `topic` is a string, `ty` and `qos` readable, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_lifecycle_publisher_create(
    lifecycle_node: u64,
    topic: *const c_char,
    ty: *const CType,
    qos: *const CQos,
    out: *mut u64,
) -> Status {
    guard(|| {
        let managed = handles::lifecycle_node(lifecycle_node)?;
        let topic = text(topic, "topic")?;
        let ty = message_type(ty)?;
        let qos = qos_of(qos)?;
        let publisher = managed.create_serialized_publisher(topic, ty, qos)?;
        put(
            out,
            handles::insert(Object::LifecyclePublisher(Arc::new(publisher))),
            "publisher",
        )
    })
}

/// # Safety
/// `activated` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_lifecycle_publisher_is_activated(
    publisher: u64,
    activated: *mut bool,
) -> Status {
    guard(|| {
        let is_activated = handles::with(publisher, "lifecycle publisher", |o| match o {
            Object::LifecyclePublisher(p) => Some(p.is_activated()),
            _ => None,
        })?;
        put(activated, is_activated, "activated")
    })
}
