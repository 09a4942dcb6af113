//! ROS 2 nodes in Rust compiled to `wasm32-wasip1`, run by roslite's WebAssembly host.
//!
//! The API has the shape of the `roslite` crate's (same names and arguments where the guest
//! ABI allows), so a node ports by changing the crate name:
//!
//! ```no_run
//! use std::time::Duration;
//! use roslite_guest::msgs::std_msgs::msg::String as StringMsg;
//! use roslite_guest::{ros_info, Context, Executor};
//!
//! let ctx = Context::from_env()?;
//! let node = ctx.create_node("talker")?;
//! let publisher = node.create_publisher::<StringMsg>("chatter", 10)?;
//! let logger = node.logger().clone();
//! let _timer = node.create_wall_timer(Duration::from_millis(100), move || {
//!     ros_info!(logger, "Publishing");
//!     publisher.publish(StringMsg { data: "hello".into() }).ok();
//! })?;
//! let executor = Executor::new(&ctx);
//! executor.add_node(&node);
//! executor.spin();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Underneath, every call is an import of module `roslite_v1` and every callback a slot the
//! host calls through the exported `roslite_guest_dispatch` (docs/wasm.md, the guest ABI v1).
//! Messages are the generated types of `roslite-msgs` (re-exported as [`msgs`]); the guest
//! encodes and decodes their CDR itself, the host moves only bytes.
//!
//! Differences from `roslite`, all from the ABI: callbacks need not be `Send` (the guest has
//! one thread); `declare_parameter` takes no descriptor; [`MessageInfo`] carries plain
//! nanoseconds; calls that `roslite` cannot fail (`Executor::spin`, `Timer::cancel`, counts)
//! log a host refusal instead of returning it. Outside a Wasm host the crate compiles and
//! every call fails with "roslite-guest runs only inside a roslite Wasm host".
//!
//! Layers, bottom up: `sys` (the imports and C structs), `exports` (slots, dispatch, guest
//! memory), `error`, then `qos`, `log`, `params`, `node`, `pubsub`, `service`.

mod error;
mod exports;
#[doc(hidden)]
pub mod log;
mod node;
mod params;
mod pubsub;
mod qos;
mod service;
mod sys;

pub use error::{Error, ErrorCode, NodeError, ParameterError, PublishError};
pub use log::{Logger, Severity};
pub use node::{
    install_signal_handlers, spin, CallbackGroup, CallbackGroupKind, Context, Executor, Node,
    OnSetParametersCallbackHandle, Timer,
};
pub use params::{Parameter, ParameterValue, SetParametersResult};
pub use pubsub::{
    shape, IncompatibleQosStatus, MatchedStatus, MessageInfo, MessageLostStatus, Publisher,
    QosPolicyKind, Subscription, SubscriptionCallback,
};
pub use qos::{Durability, History, Liveliness, QosProfile, Reliability};
pub use roslite_msgs as msgs;
/// The service *type* trait (request/response pair); [`Service`] is a running server.
pub use roslite_msgs::{Message, Service as ServiceType};
pub use service::{CallError, Client, IntrospectionState, RequestKey, Service};
