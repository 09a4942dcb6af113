//! ROS 2 actions on services and topics, laid out on the wire as rcl_action lays them out:
//! for action `/fibonacci`,
//!
//! ```text
//! /fibonacci/_action/send_goal    service  <Action>_SendGoal     goal id + goal -> accepted, stamp
//! /fibonacci/_action/cancel_goal  service  action_msgs/srv/CancelGoal
//! /fibonacci/_action/get_result   service  <Action>_GetResult    goal id -> status + result
//! /fibonacci/_action/feedback     topic    <Action>_FeedbackMessage  (reliable, volatile)
//! /fibonacci/_action/status       topic    action_msgs/msg/GoalStatusArray (transient local,
//!                                          keep last 1)
//! ```
//!
//! Modules: `goal_state` (the goal state machine and cancel selection, pure), `promise` (a
//! value arriving once), `server` and `client`. The node creates the services, clients,
//! publishers and subscriptions (`node/actions.rs`) and hands them to a server or client
//! core, whose handlers their callbacks call.

mod client;
mod goal_state;
mod promise;
mod server;

pub(crate) use client::ClientCore;
pub use client::{
    ActionClient, ActionError, CancelFuture, ClientGoalHandle, GoalFuture, ResultFuture,
    WrappedResult,
};
pub use goal_state::{GoalEvent, GoalId, GoalStatusCode};
pub use server::{
    ActionServer, CancelResponse, GoalHandleError, GoalResponse, ServerGoalHandle,
    DEFAULT_RESULT_TIMEOUT,
};
pub(crate) use server::{ServerCallbacks, ServerCore, ServerServices};

use crate::vocabulary::qos::QosProfile;

/// rcl_action's `rcl_action_qos_profile_status_default`: reliable, transient local, keep
/// last 1, so a client that joins late reads the latest status list.
pub fn action_status_qos() -> QosProfile {
    QosProfile::keep_last(1).transient_local()
}

/// rcl_action's feedback topic QoS (`rmw_qos_profile_default`): reliable, volatile, keep
/// last 10. A client whose node is spun less often than feedback comes loses the oldest.
pub fn action_feedback_qos() -> QosProfile {
    QosProfile::keep_last(10)
}
