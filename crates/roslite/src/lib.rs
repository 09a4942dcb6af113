//! roslite: a lightweight ROS 2 runtime.
//!
//! Layers, bottom up:
//! - `roslite-cdr` and `roslite-msgs`: message types and their wire encoding.
//! - `roslite-executor`: clocks, timers and the executor loop.
//! - this crate: [`Context`] (one per process), [`Node`], [`Publisher`], [`Subscription`],
//!   [`Timer`], services, actions, parameters, QoS and ROS naming, and the backends that carry their
//!   messages: intra-process delivery (no serialization), RTPS, and same-host links. Its own
//!   layers are its folders, bottom up: [`vocabulary`], [`seam`] (the backend interface),
//!   [`endpoints`], [`backends`], [`context`], [`params`], [`node`], [`lifecycle`] (managed
//!   nodes); each imports only from the ones below it.
//!
//! ```no_run
//! use roslite::{Context, Executor};
//! use roslite::msgs::std_msgs::msg::String as StringMsg;
//!
//! let ctx = Context::from_env()?;
//! let node = ctx.create_node("listener")?;
//! let _sub = node.create_subscription("chatter", 10, |msg: StringMsg| println!("{}", msg.data))?;
//! let executor = Executor::new(&ctx);
//! executor.add_node(&node);
//! executor.spin();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Layers, bottom up; a module imports only from the layers below it (and its own).
pub mod backends;
pub mod context;
pub mod endpoints;
pub mod lifecycle;
pub mod node;
pub mod params;
pub mod seam;
pub mod vocabulary;

pub use endpoints::{action, introspection, pubsub, serialized, serialized_service, service};
pub use vocabulary::{config, content_filter, events, graph, limits, log, names, qos, time};

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use action::{
    ActionClient, ActionError, ActionServer, CancelResponse, ClientGoalHandle, GoalId,
    GoalResponse, GoalStatusCode, ServerGoalHandle,
};
pub use content_filter::{ContentFilterError, ContentFilterOptions};
pub use context::{
    Context, ContextOptions, Graph, InitError, LocalTransports, NetworkMode, RosArgs, RosDistro,
};
pub use endpoints::introspection::{IntrospectionError, IntrospectionState};
pub use events::{
    DeadlineMissedStatus, IncompatibleQosStatus, LivelinessChangedStatus, LivelinessLostStatus,
    MatchedStatus, MessageLostStatus,
};
pub use lifecycle::{LifecycleNode, LifecyclePublisher};
pub use log::{Logger, Severity};
pub use node::{Node, NodeError, Timer};
pub use params::{
    parameters_in_file, ListParametersResult, OnSetParametersCallbackHandle, OverrideError,
    Parameter, ParameterDescriptor, ParameterError, ParameterRange, ParameterServices,
    ParameterType, ParameterValue, SetParametersResult,
};
pub use pubsub::{
    LoanError, LoanedMessage, MessageInfo, PublishError, Publisher, Subscription,
    SubscriptionOptions, SubscriptionStats,
};
pub use qos::{Durability, History, Liveliness, QosPolicyKind, QosProfile, Reliability};
pub use roslite_executor::{
    CallbackGroup, CallbackGroupKind, Clock, Instant, Rate, RealtimeOptions, RtError,
    ShutdownSignal, SpinError, TimerCall, VirtualClock,
};
pub use roslite_msgs as msgs;
/// The service *type* trait (request/response pair); [`Service`] is a running server.
pub use roslite_msgs::{Action as ActionType, Message, Service as ServiceType};
pub use seam::service::RequestId;
pub use serialized::{
    ContinueError, KeptMessage, SerializedPublisher, SerializedSubscription, TypeInfo,
};
pub use serialized_service::{SerializedService, ServiceResponder};
pub use service::{
    CallError, Client, ClientStats, ResponseFuture, SerializedClient, Service, ServiceReply,
    ServiceStats,
};
pub use time::Time;

/// Runs the callbacks of the nodes added to it, until the context shuts down: on the calling
/// thread ([`Self::spin`]) or on several ([`Self::spin_threads`], rclcpp's
/// `MultiThreadedExecutor`).
pub struct Executor {
    inner: Arc<roslite_executor::Executor>,
    realtime: RealtimeOptions,
}

impl Executor {
    /// An executor stopped by `ctx.shutdown()`.
    pub fn new(ctx: &Context) -> Self {
        Self::with_clock(ctx, Arc::new(roslite_executor::SteadyClock))
    }

    /// An executor on another clock (a `VirtualClock` for deterministic tests).
    pub fn with_clock(ctx: &Context, clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: Arc::new(roslite_executor::Executor::with_clock(
                clock,
                ctx.shutdown_signal().clone(),
            )),
            realtime: RealtimeOptions::default(),
        }
    }

    /// An executor whose threads run with real-time settings (SCHED_FIFO priority, CPU
    /// affinity, `mlockall`, timer slack). They are applied to the calling thread now, and to
    /// every worker thread of [`Self::spin_threads`].
    ///
    /// # Errors
    /// [`RtError`] saying which setting the system refused and what it lacks.
    pub fn with_realtime(ctx: &Context, realtime: RealtimeOptions) -> Result<Self, RtError> {
        realtime.apply_to_current_thread()?;
        Ok(Self {
            realtime,
            ..Self::new(ctx)
        })
    }

    /// An executor with the real-time settings of the environment (`ROSLITE_RT_PRIORITY`,
    /// `ROSLITE_CPU_AFFINITY`, `ROSLITE_MLOCKALL`, `ROSLITE_TIMER_SLACK_NS`); none set gives
    /// [`Self::new`].
    ///
    /// # Errors
    /// [`RtError`] for a malformed variable or a setting the system refuses.
    pub fn from_env(ctx: &Context) -> Result<Self, RtError> {
        Self::with_realtime(ctx, RealtimeOptions::from_env()?)
    }

    /// Runs every callback on this executor's own threads, never on a receive thread that
    /// brings a message while the executor sleeps. That saves no hop, so it costs latency; it
    /// is for callbacks bound to the spinning thread (a WebAssembly instance it owns).
    pub fn keep_callbacks_on_own_threads(&self) {
        self.inner.keep_callbacks_on_own_threads();
    }

    /// Wakes the threads spinning this executor, so that they look for work again.
    pub fn wake(&self) {
        self.inner.wake();
    }

    /// Schedules the node's callbacks (in all its callback groups, also those created later).
    pub fn add_node(&self, node: &Node) {
        node.attach_executor(&self.inner);
    }

    /// Runs callbacks until the context is shut down.
    pub fn spin(&self) {
        self.inner.spin();
    }

    /// Runs callbacks on `threads` threads until the context is shut down. Callbacks of one
    /// mutually exclusive group never overlap; reentrant groups' callbacks may.
    ///
    /// # Errors
    /// [`RtError`] if a worker thread could not take the real-time settings; all threads stop.
    pub fn spin_threads(&self, threads: usize) -> Result<(), RtError> {
        let realtime = &self.realtime;
        self.inner.spin_threads(threads, |index| {
            if index == 0 || realtime.is_empty() {
                Ok(())
            } else {
                realtime.apply_to_current_thread()
            }
        })
    }

    /// Runs callbacks for `duration`.
    pub fn spin_for(&self, duration: Duration) {
        self.inner.spin_for(duration);
    }

    /// Runs callbacks until the context is shut down, `duration` (if given) has passed, or
    /// `go_on` says to stop; `go_on` is asked before the first wait, after each callback this
    /// thread runs and after each [`Self::wake`]. For a host that must notice its own events
    /// (a WebAssembly node's mail, its stop) while it spins.
    pub fn spin_while(&self, duration: Option<Duration>, go_on: &mut dyn FnMut() -> bool) {
        self.inner.spin_while(duration, go_on);
    }

    /// [`Self::spin_once`] that also returns (false) when [`Self::wake`] is called meanwhile.
    pub fn spin_once_or_wake(&self, timeout: Option<Duration>) -> bool {
        self.inner.spin_once_or_wake(timeout)
    }

    /// Runs every callback that is ready now.
    pub fn spin_some(&self) {
        self.inner.spin_some();
    }

    /// Waits up to `timeout` for work and runs one callback; returns whether one ran.
    pub fn spin_once(&self, timeout: Option<Duration>) -> bool {
        self.inner.spin_once(timeout)
    }

    /// Runs callbacks until `future` completes.
    ///
    /// # Errors
    /// [`SpinError::Timeout`] or [`SpinError::Shutdown`].
    pub fn spin_until_complete<F: Future>(
        &self,
        future: F,
        timeout: Option<Duration>,
    ) -> Result<F::Output, SpinError> {
        self.inner.spin_until_complete(future, timeout)
    }
}

/// Spins one node until its context shuts down, like `rclcpp::spin(node)`.
pub fn spin(node: &Node) {
    let executor = Executor::new(node.context());
    executor.add_node(node);
    executor.spin();
}

#[cfg(test)]
mod tests;
