//! Managed nodes (ROS 2 lifecycle nodes), as rclcpp_lifecycle's `LifecycleNode` and rclpy's
//! `rclpy.lifecycle.LifecycleNode` offer them.
//!
//! A managed node starts `unconfigured` and moves through the default state machine
//! (design.ros2.org, "Managed nodes"; [`machine`]) when asked: by its own code
//! ([`LifecycleNode::configure`], ...), or by a tool or another node through the five services
//! and the event topic every such node has, named as rcl_lifecycle names them:
//!
//! | name | type |
//! |---|---|
//! | `<node>/change_state` | `lifecycle_msgs/srv/ChangeState` |
//! | `<node>/get_state` | `lifecycle_msgs/srv/GetState` |
//! | `<node>/get_available_states` | `lifecycle_msgs/srv/GetAvailableStates` |
//! | `<node>/get_available_transitions` | `lifecycle_msgs/srv/GetAvailableTransitions` |
//! | `<node>/get_transition_graph` | `lifecycle_msgs/srv/GetAvailableTransitions` |
//! | `<node>/transition_event` (published) | `lifecycle_msgs/msg/TransitionEvent` |
//!
//! so `ros2 lifecycle`, `roslite lifecycle` and launch's lifecycle events manage it as they
//! manage an rclcpp one. Each transition runs one of the node's [`LifecycleCallbacks`]; its
//! [`CallbackReturn`] decides where the node goes. A callback that panics counts as
//! [`CallbackReturn::Error`], as rclcpp counts an exception.
//!
//! The node's [`LifecyclePublisher`]s send only while it is active. rclcpp activates them in
//! the base class's `on_activate`, which an override must remember to call; here the node
//! activates them itself whenever it enters `activating` and deactivates them whenever it
//! leaves `active`, so a callback cannot forget.

pub mod machine;
mod publisher;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError, Weak};

pub use machine::{
    CallbackReturn, LifecycleError, LifecycleState, TransitionDescription, TransitionRequest,
    TRANSITION_GRAPH,
};
pub use publisher::{LifecyclePublisher, SerializedLifecyclePublisher};

use crate::endpoints::pubsub::Publisher;
use crate::endpoints::serialized::TypeInfo;
use crate::endpoints::service::Service;
use crate::node::{Node, NodeError};
use crate::vocabulary::qos::QosProfile;
use machine::Machine;
use publisher::Activation;
use roslite_msgs::lifecycle_msgs::msg as lc;
use roslite_msgs::lifecycle_msgs::srv::{
    ChangeState, ChangeState_Response, GetAvailableStates, GetAvailableStates_Response,
    GetAvailableTransitions, GetAvailableTransitions_Response, GetState, GetState_Response,
};
use roslite_msgs::Message;

/// What a managed node does in each transition. Every method has a default that succeeds, so
/// a node implements only those it needs; `()` is a node with none. Each gets the node (to
/// create or drop its publishers, timers and subscriptions) and the primary state the
/// transition started from.
pub trait LifecycleCallbacks: Send + 'static {
    /// `unconfigured` -> `inactive`: read parameters, create publishers and subscriptions.
    fn on_configure(&mut self, _node: &LifecycleNode, _previous: LifecycleState) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// `inactive` -> `unconfigured`: release what `on_configure` made.
    fn on_cleanup(&mut self, _node: &LifecycleNode, _previous: LifecycleState) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// `inactive` -> `active`: start working. The node's publishers are already activated
    /// while this runs.
    fn on_activate(&mut self, _node: &LifecycleNode, _previous: LifecycleState) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// `active` -> `inactive`: stop working. The node's publishers are already deactivated.
    fn on_deactivate(
        &mut self,
        _node: &LifecycleNode,
        _previous: LifecycleState,
    ) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// Any primary state but `finalized` -> `finalized`.
    fn on_shutdown(&mut self, _node: &LifecycleNode, _previous: LifecycleState) -> CallbackReturn {
        CallbackReturn::Success
    }
    /// After another callback answered [`CallbackReturn::Error`] (or panicked): success
    /// returns the node to `unconfigured`, anything else finalizes it.
    fn on_error(&mut self, _node: &LifecycleNode, _previous: LifecycleState) -> CallbackReturn {
        CallbackReturn::Success
    }
}

impl LifecycleCallbacks for () {}

/// How a transition ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransitionOutcome {
    /// The primary state the node is in now.
    pub state: LifecycleState,
    /// What the transition's own callback answered (not the error callback's, if one ran):
    /// `ChangeState`'s `success` is whether this is [`CallbackReturn::Success`].
    pub result: CallbackReturn,
}

/// A managed node: a [`Node`] (which it dereferences to, so every node method is there) with
/// a lifecycle state machine, its services and its transition events.
///
/// Dropping it while its context runs shuts the node down first, as rclcpp's does since
/// Jazzy: a node in a primary state other than `finalized` goes through `shutdown`, so its
/// `on_shutdown` releases what it holds.
pub struct LifecycleNode {
    inner: Arc<Inner>,
    /// The handle the user holds, whose drop shuts the node down; the services' handles
    /// (made for the length of one request) are not.
    owner: bool,
}

struct Inner {
    node: Node,
    machine: Mutex<Machine>,
    callbacks: Mutex<Box<dyn LifecycleCallbacks>>,
    /// The activation of each publisher made by [`LifecycleNode::create_publisher`].
    managed: Mutex<Vec<Weak<Activation>>>,
    events: Publisher<lc::TransitionEvent>,
    services: Mutex<Vec<Box<dyn std::any::Any + Send + Sync>>>,
}

/// One of [`LifecycleCallbacks`]' methods.
type CallbackFn = fn(&mut dyn LifecycleCallbacks, &LifecycleNode, LifecycleState) -> CallbackReturn;

fn lock<T: ?Sized>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LifecycleNode {
    /// Makes `node` a managed node in state `unconfigured`, whose transitions run
    /// `callbacks`, and starts its services and event publisher.
    ///
    /// # Errors
    /// [`NodeError`] if a service or the publisher cannot be created (a node name that
    /// yields invalid service names).
    pub fn new(node: Node, callbacks: impl LifecycleCallbacks) -> Result<Self, NodeError> {
        // rcl_lifecycle publishes events with the default publisher options: reliable,
        // volatile, keep last 10.
        let events = node
            .create_publisher::<lc::TransitionEvent>("~/transition_event", QosProfile::DEFAULT)?;
        let inner = Arc::new(Inner {
            node,
            machine: Mutex::new(Machine::new()),
            callbacks: Mutex::new(Box::new(callbacks)),
            managed: Mutex::default(),
            events,
            services: Mutex::default(),
        });
        let services = start_services(&inner)?;
        *lock(&inner.services) = services;
        Ok(Self { inner, owner: true })
    }

    /// The node underneath (also reached through `Deref`).
    pub fn node(&self) -> &Node {
        &self.inner.node
    }

    /// The state the node is in (a transition state while a transition's callback runs).
    pub fn current_state(&self) -> LifecycleState {
        lock(&self.inner.machine).current()
    }

    /// The transitions that may start from the current state.
    pub fn available_transitions(&self) -> Vec<TransitionDescription> {
        machine::transitions_from(self.current_state())
            .copied()
            .collect()
    }

    /// A publisher on `topic` that sends only while the node is active (see
    /// [`LifecyclePublisher`]); rclcpp_lifecycle's `create_publisher`. For one that sends in
    /// every state, use [`Node::create_publisher`] through [`Self::node`].
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_publisher<T: Message>(
        &self,
        topic: &str,
        qos: impl Into<QosProfile>,
    ) -> Result<LifecyclePublisher<T>, NodeError> {
        let publisher = self.inner.node.create_publisher::<T>(topic, qos)?;
        Ok(LifecyclePublisher::new(
            publisher,
            self.managed_activation(),
            self.inner.node.logger().clone(),
        ))
    }

    /// [`Self::create_publisher`] for serialized messages of type `ty` (as
    /// [`Node::create_serialized_publisher`]): what the C ABI's managed publishers are.
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_serialized_publisher(
        &self,
        topic: &str,
        ty: TypeInfo,
        qos: impl Into<QosProfile>,
    ) -> Result<SerializedLifecyclePublisher, NodeError> {
        let publisher = self
            .inner
            .node
            .create_serialized_publisher(topic, ty, qos)?;
        Ok(SerializedLifecyclePublisher::new(
            publisher,
            self.managed_activation(),
            self.inner.node.logger().clone(),
        ))
    }

    /// A new publisher's activation, in step with the node's state from now on.
    fn managed_activation(&self) -> Arc<Activation> {
        let activation = Activation::new(self.current_state() == LifecycleState::Active);
        let mut managed = lock(&self.inner.managed);
        managed.retain(|weak| weak.strong_count() > 0);
        managed.push(Arc::downgrade(&activation));
        activation
    }

    /// Runs `configure`: `unconfigured` -> `inactive` when `on_configure` succeeds.
    ///
    /// # Errors
    /// [`LifecycleError`] if the node is not `unconfigured` or is in a transition.
    pub fn configure(&self) -> Result<TransitionOutcome, LifecycleError> {
        self.trigger(&TransitionRequest::Label("configure".into()))
    }

    /// Runs `cleanup`: `inactive` -> `unconfigured`.
    ///
    /// # Errors
    /// As [`Self::configure`], from `inactive`.
    pub fn cleanup(&self) -> Result<TransitionOutcome, LifecycleError> {
        self.trigger(&TransitionRequest::Label("cleanup".into()))
    }

    /// Runs `activate`: `inactive` -> `active`.
    ///
    /// # Errors
    /// As [`Self::configure`], from `inactive`.
    pub fn activate(&self) -> Result<TransitionOutcome, LifecycleError> {
        self.trigger(&TransitionRequest::Label("activate".into()))
    }

    /// Runs `deactivate`: `active` -> `inactive`.
    ///
    /// # Errors
    /// As [`Self::configure`], from `active`.
    pub fn deactivate(&self) -> Result<TransitionOutcome, LifecycleError> {
        self.trigger(&TransitionRequest::Label("deactivate".into()))
    }

    /// Runs `shutdown` (whichever of its three ids starts from the current state): to
    /// `finalized`.
    ///
    /// # Errors
    /// As [`Self::configure`], from `finalized` or within a transition.
    pub fn shutdown(&self) -> Result<TransitionOutcome, LifecycleError> {
        self.trigger(&TransitionRequest::Label("shutdown".into()))
    }

    /// Runs the transition `requested` (an id of `lifecycle_msgs/msg/Transition`, or a label),
    /// as the `change_state` service does: publishes a `TransitionEvent` for each step, runs
    /// the transition's callback (and `on_error` after an error), and ends in a primary state.
    ///
    /// # Errors
    /// [`LifecycleError`] if no such transition starts from the current state or another
    /// transition is running; the node stays where it was.
    pub fn trigger(
        &self,
        requested: &TransitionRequest,
    ) -> Result<TransitionOutcome, LifecycleError> {
        let first = lock(&self.inner.machine).start(requested)?;
        // A transition starts from the primary state the callbacks are told they came from.
        let started_from = first.start;
        self.set_activation(first.goal == LifecycleState::Activating);
        self.publish_event(first);
        let result = self.run_callback(first.goal, started_from);
        let mut step_result = result;
        let state = loop {
            let step = lock(&self.inner.machine).finish(step_result);
            self.publish_event(step);
            if step.goal.is_primary() {
                break step.goal;
            }
            // Only errorprocessing follows a transition state.
            step_result = self.run_callback(step.goal, started_from);
        };
        self.set_activation(state == LifecycleState::Active);
        Ok(TransitionOutcome { state, result })
    }

    fn set_activation(&self, active: bool) {
        let mut managed = lock(&self.inner.managed);
        managed.retain(|weak| match weak.upgrade() {
            Some(activation) => {
                activation.set(active);
                true
            }
            None => false,
        });
    }

    fn publish_event(&self, transition: &TransitionDescription) {
        let state = |s: LifecycleState| lc::State {
            id: s.id(),
            label: s.label().to_owned(),
        };
        let event = lc::TransitionEvent {
            timestamp: u64::try_from(self.inner.node.now().nanos).unwrap_or(0),
            transition: lc::Transition {
                id: transition.id,
                label: transition.label.to_owned(),
            },
            start_state: state(transition.start),
            goal_state: state(transition.goal),
        };
        if let Err(e) = self.inner.events.publish(event) {
            self.inner.node.logger().warn(format_args!(
                "could not publish the lifecycle transition event '{}': {e}",
                transition.label
            ));
        }
    }

    /// Runs the callback of transition state `state`; a panic counts as an error.
    fn run_callback(&self, state: LifecycleState, previous: LifecycleState) -> CallbackReturn {
        let mut callbacks = lock(&self.inner.callbacks);
        let (name, call): (&str, CallbackFn) = match state {
            LifecycleState::Configuring => ("on_configure", |c, n, p| c.on_configure(n, p)),
            LifecycleState::CleaningUp => ("on_cleanup", |c, n, p| c.on_cleanup(n, p)),
            LifecycleState::Activating => ("on_activate", |c, n, p| c.on_activate(n, p)),
            LifecycleState::Deactivating => ("on_deactivate", |c, n, p| c.on_deactivate(n, p)),
            LifecycleState::ShuttingDown => ("on_shutdown", |c, n, p| c.on_shutdown(n, p)),
            LifecycleState::ErrorProcessing => ("on_error", |c, n, p| c.on_error(n, p)),
            primary => unreachable!("internal bug: no callback runs in state {primary}"),
        };
        let callbacks: &mut dyn LifecycleCallbacks = &mut **callbacks;
        match catch_unwind(AssertUnwindSafe(|| call(callbacks, self, previous))) {
            Ok(result) => result,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_owned());
                self.inner.node.logger().error(format_args!(
                    "{name} panicked ({what}); the transition ends in an error"
                ));
                CallbackReturn::Error
            }
        }
    }
}

impl std::ops::Deref for LifecycleNode {
    type Target = Node;

    fn deref(&self) -> &Node {
        &self.inner.node
    }
}

impl Drop for LifecycleNode {
    fn drop(&mut self) {
        if !self.owner || !self.inner.node.context().ok() {
            return;
        }
        let state = self.current_state();
        if state.is_primary() && state != LifecycleState::Finalized {
            match self.shutdown() {
                Ok(TransitionOutcome {
                    state: LifecycleState::Finalized,
                    result: CallbackReturn::Success,
                }) => {}
                Ok(outcome) => self.inner.node.logger().warn(format_args!(
                    "shutting the lifecycle node down as it was dropped: on_shutdown answered \
                     {:?}, the node ended '{}'",
                    outcome.result, outcome.state
                )),
                Err(e) => self.inner.node.logger().warn(format_args!(
                    "could not shut the lifecycle node down as it was dropped: {e}"
                )),
            }
        }
    }
}

/// The five services; each holds the node weakly (the node holds them).
fn start_services(
    inner: &Arc<Inner>,
) -> Result<Vec<Box<dyn std::any::Any + Send + Sync>>, NodeError> {
    let node = &inner.node;
    let handle = |weak: &Weak<Inner>| {
        weak.upgrade().map(|inner| LifecycleNode {
            inner,
            owner: false,
        })
    };
    let weak = Arc::downgrade(inner);
    let change_state: Service<ChangeState> = node.create_service("~/change_state", {
        let weak = weak.clone();
        move |request: roslite_msgs::lifecycle_msgs::srv::ChangeState_Request| {
            let Some(node) = handle(&weak) else {
                return ChangeState_Response { success: false };
            };
            let t = &request.transition;
            let requested = TransitionRequest::from_msg(t.id, &t.label);
            let success = match node.trigger(&requested) {
                Ok(outcome) => outcome.result == CallbackReturn::Success,
                Err(e) => {
                    node.logger().error(format_args!("change_state: {e}"));
                    false
                }
            };
            ChangeState_Response { success }
        }
    })?;
    let get_state: Service<GetState> = node.create_service("~/get_state", {
        let weak = weak.clone();
        move |_| GetState_Response {
            current_state: state_msg(
                handle(&weak).map_or(LifecycleState::Unknown, |n| n.current_state()),
            ),
        }
    })?;
    let get_available_states: Service<GetAvailableStates> =
        node.create_service("~/get_available_states", |_| GetAvailableStates_Response {
            available_states: LifecycleState::ALL.into_iter().map(state_msg).collect(),
        })?;
    let get_available_transitions: Service<GetAvailableTransitions> =
        node.create_service("~/get_available_transitions", {
            let weak = weak.clone();
            move |_| GetAvailableTransitions_Response {
                available_transitions: handle(&weak)
                    .map(|n| n.available_transitions())
                    .unwrap_or_default()
                    .iter()
                    .map(description_msg)
                    .collect(),
            }
        })?;
    let get_transition_graph: Service<GetAvailableTransitions> =
        node.create_service("~/get_transition_graph", |_| {
            GetAvailableTransitions_Response {
                available_transitions: TRANSITION_GRAPH.iter().map(description_msg).collect(),
            }
        })?;
    Ok(vec![
        Box::new(change_state),
        Box::new(get_state),
        Box::new(get_available_states),
        Box::new(get_available_transitions),
        Box::new(get_transition_graph),
    ])
}

fn state_msg(state: LifecycleState) -> lc::State {
    lc::State {
        id: state.id(),
        label: state.label().to_owned(),
    }
}

fn description_msg(t: &TransitionDescription) -> lc::TransitionDescription {
    lc::TransitionDescription {
        transition: lc::Transition {
            id: t.id,
            label: t.label.to_owned(),
        },
        start_state: state_msg(t.start),
        goal_state: state_msg(t.goal),
    }
}
