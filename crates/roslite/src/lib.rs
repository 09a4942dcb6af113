//! roslite: a lightweight ROS 2 runtime.
//!
//! Layers, bottom up:
//! - `roslite-cdr` and `roslite-msgs`: message types and their wire encoding.
//! - `roslite-executor`: clocks, timers and the executor loop.
//! - this crate: [`Context`] (one per process), [`Node`], [`Publisher`], [`Subscription`],
//!   [`Timer`], QoS and ROS naming; the local topic bus that matches endpoints and delivers
//!   messages between them without serialization.
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

pub mod context;
pub mod events;
mod intra;
pub mod log;
pub mod names;
pub mod node;
pub mod pubsub;
pub mod qos;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use context::{Context, ContextOptions, InitError, RosArgs};
pub use events::IncompatibleQosStatus;
pub use intra::EndpointInfo;
pub use log::{Logger, Severity};
pub use node::{Node, NodeError, Timer};
pub use pubsub::{MessageInfo, Publisher, Subscription, SubscriptionStats};
pub use qos::{Durability, History, Liveliness, QosPolicyKind, QosProfile, Reliability};
pub use roslite_executor::{Clock, Instant, SpinError, TimerCall, VirtualClock};
pub use roslite_msgs as msgs;
pub use roslite_msgs::{Message, Service};

/// Runs the callbacks of the nodes added to it on the calling thread, until the context shuts
/// down.
pub struct Executor {
    inner: roslite_executor::Executor,
}

impl Executor {
    /// An executor stopped by `ctx.shutdown()`.
    pub fn new(ctx: &Context) -> Self {
        Self {
            inner: roslite_executor::Executor::with_clock(
                Arc::new(roslite_executor::SteadyClock),
                ctx.shutdown_signal().clone(),
            ),
        }
    }

    /// An executor on a virtual clock, for deterministic tests.
    pub fn with_clock(ctx: &Context, clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: roslite_executor::Executor::with_clock(clock, ctx.shutdown_signal().clone()),
        }
    }

    pub fn add_node(&self, node: &Node) {
        self.inner
            .add_callback_group(node.default_callback_group().clone());
    }

    /// Runs callbacks until the context is shut down.
    pub fn spin(&self) {
        self.inner.spin();
    }

    /// Runs callbacks for `duration`.
    pub fn spin_for(&self, duration: Duration) {
        self.inner.spin_for(duration);
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
