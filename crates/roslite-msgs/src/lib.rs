//! The ROS 2 interface packages roslite ships, as Rust types with CDR encode/decode.
//!
//! Layers:
//! - [`Message`], [`Service`], [`Action`]: the traits generated types implement; the runtime
//!   is generic over them.
//! - `generated`: one module per package (`std_msgs::msg::String`,
//!   `std_srvs::srv::SetBool_Request`, ...), produced by `roslite-msg-gen` from the vendored
//!   definitions in `interfaces/` and checked in (`cargo xtask codegen` rewrites it; a test fails
//!   if it drifts).
//! - [`INTERFACE_FILES`]: the definition texts themselves, for tools that work on types known
//!   only at run time (`roslite interface show`, dynamic decoding).

use std::fmt::Debug;

pub use roslite_cdr as cdr;

/// A ROS 2 message type.
pub trait Message:
    cdr::CdrEncode + cdr::CdrDecode + Clone + Default + Debug + PartialEq + Send + Sync + 'static
{
    /// `std_msgs/msg/String`.
    const TYPE_NAME: &'static str;
    /// The type name used on the wire by DDS RMWs: `std_msgs::msg::dds_::String_`.
    const DDS_TYPE_NAME: &'static str;
    /// The REP-2011 type hash, `RIHS01_<64 hex>`.
    const TYPE_HASH: &'static str;
}

/// A ROS 2 service type: a marker tying a request and a response type together.
pub trait Service: Send + Sync + 'static {
    type Request: Message;
    type Response: Message;
    /// `std_srvs/srv/SetBool`.
    const TYPE_NAME: &'static str;
    const TYPE_HASH: &'static str;
}

/// A ROS 2 action type: goal, result and feedback, and the types of its services and topics.
pub trait Action: Send + Sync + 'static {
    type Goal: Message;
    type Result: Message;
    type Feedback: Message;
    type SendGoal: Service;
    type GetResult: Service;
    type FeedbackMessage: Message;
    /// `example_interfaces/action/Fibonacci`.
    const TYPE_NAME: &'static str;
    const TYPE_HASH: &'static str;
}

/// One vendored interface definition file.
#[derive(Clone, Copy, Debug)]
pub struct InterfaceFile {
    pub package: &'static str,
    /// `msg`, `srv` or `action`.
    pub kind: &'static str,
    pub name: &'static str,
    pub text: &'static str,
}

mod generated;
pub use generated::*;
