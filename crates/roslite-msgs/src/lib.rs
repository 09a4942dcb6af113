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
//! - [`TYPE_HASHES`], [`TYPE_KEYS`]: each type's hash and each keyed type's key by type name,
//!   for endpoints of types known only by name (a C or C++ node's).
//! - [`description`]: REP 2011 type descriptions, which each generated type carries for the
//!   `~/get_type_description` service of the nodes that use it.

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
    /// The key members of a keyed type (IDL `@key`), which DDS endpoints of the type announce
    /// and whose key hash each sample carries; `None` for the keyless types of `.msg` files.
    const KEY: Option<&'static cdr::key::KeyStruct> = None;
    /// The REP 2011 type description a node serves for this type on `~/get_type_description`;
    /// `None` for a hand-written type, which nodes then answer as not in use.
    const TYPE_DESCRIPTION: Option<&'static description::TypeDescription> = None;
}

/// A ROS 2 service type: a marker tying a request and a response type together.
pub trait Service: Send + Sync + 'static {
    type Request: Message;
    type Response: Message;
    /// The `<Service>_Event` message that service introspection publishes on
    /// `<service>/_service_event` (rosidl synthesizes it for every service since Iron).
    type Event: Message;
    /// `std_srvs/srv/SetBool`.
    const TYPE_NAME: &'static str;
    const TYPE_HASH: &'static str;
    /// The REP 2011 type description of the service (its request, response and event
    /// messages are referenced types), which nodes with a server or client of it serve;
    /// `None` for a hand-written type.
    const TYPE_DESCRIPTION: Option<&'static description::TypeDescription> = None;

    /// An introspection event of this service: `info`, and the request or the response it
    /// carries (none of either when only metadata is introspected), as rosidl's
    /// `event_message_create_handle_function` builds it.
    fn event(
        info: service_msgs::msg::ServiceEventInfo,
        request: Option<Self::Request>,
        response: Option<Self::Response>,
    ) -> Self::Event;
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
    /// The REP 2011 type description of the action, which nodes with a server or client of it
    /// serve; `None` for a hand-written type.
    const TYPE_DESCRIPTION: Option<&'static description::TypeDescription> = None;

    // The wire messages wrap the goal, result and feedback with a goal id (and status or
    // stamp); these build and take them apart, so an action runtime can stay generic (the
    // role of rclcpp_action's `create_goal_request` and friends).

    /// `SendGoal_Request { goal_id, goal }`.
    fn send_goal_request(
        goal_id: unique_identifier_msgs::msg::UUID,
        goal: Self::Goal,
    ) -> <Self::SendGoal as Service>::Request;
    /// `(goal_id, goal)` of a `SendGoal_Request`.
    fn split_send_goal_request(
        request: <Self::SendGoal as Service>::Request,
    ) -> (unique_identifier_msgs::msg::UUID, Self::Goal);
    /// `SendGoal_Response { accepted, stamp }`.
    fn send_goal_response(
        accepted: bool,
        stamp: builtin_interfaces::msg::Time,
    ) -> <Self::SendGoal as Service>::Response;
    /// `(accepted, stamp)` of a `SendGoal_Response`.
    fn split_send_goal_response(
        response: <Self::SendGoal as Service>::Response,
    ) -> (bool, builtin_interfaces::msg::Time);
    /// `GetResult_Request { goal_id }`.
    fn get_result_request(
        goal_id: unique_identifier_msgs::msg::UUID,
    ) -> <Self::GetResult as Service>::Request;
    /// The goal id of a `GetResult_Request`.
    fn get_result_request_goal_id(
        request: &<Self::GetResult as Service>::Request,
    ) -> unique_identifier_msgs::msg::UUID;
    /// `GetResult_Response { status, result }`; `status` is an `action_msgs/msg/GoalStatus`
    /// code.
    fn get_result_response(
        status: i8,
        result: Self::Result,
    ) -> <Self::GetResult as Service>::Response;
    /// `(status, result)` of a `GetResult_Response`.
    fn split_get_result_response(
        response: <Self::GetResult as Service>::Response,
    ) -> (i8, Self::Result);
    /// `FeedbackMessage { goal_id, feedback }`.
    fn feedback_message(
        goal_id: unique_identifier_msgs::msg::UUID,
        feedback: Self::Feedback,
    ) -> Self::FeedbackMessage;
    /// `(goal_id, feedback)` of a `FeedbackMessage`.
    fn split_feedback_message(
        message: Self::FeedbackMessage,
    ) -> (unique_identifier_msgs::msg::UUID, Self::Feedback);
}

/// One vendored interface definition file.
#[derive(Clone, Copy, Debug)]
pub struct InterfaceFile {
    pub package: &'static str,
    /// `msg`, `srv` or `action`: the folder the file is in.
    pub kind: &'static str,
    pub name: &'static str,
    /// The text is IDL (`<name>.idl`), not the `.msg`/`.srv`/`.action` language.
    pub idl: bool,
    pub text: &'static str,
}

pub mod description;
mod generated;
pub use generated::*;
