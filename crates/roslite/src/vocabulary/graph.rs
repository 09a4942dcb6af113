//! The ROS graph as tools and nodes see it: publishers, subscriptions and services' halves,
//! local or discovered, with their node, type, QoS and the path used with each.

use crate::vocabulary::content_filter::ContentFilterOptions;
use crate::vocabulary::qos::{Durability, History, Liveliness, QosProfile, Reliability};

pub use roslite_rtps::discovery::ros::RosTopicKind;

/// Which side of a topic an endpoint is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GraphEndpointKind {
    Publisher,
    Subscription,
}

/// The QoS an endpoint announced, in ROS terms. `None` marks what ROS reports as `UNKNOWN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphQos {
    pub reliability: Reliability,
    /// `None` for DDS TRANSIENT and PERSISTENT, which ROS has no names for.
    pub durability: Option<Durability>,
    /// `None` when the endpoint's vendor does not announce its history (see
    /// `roslite_rtps::quirks::announces_history`).
    pub history: Option<History>,
    /// `None`: infinite.
    pub deadline: Option<std::time::Duration>,
    /// `None`: infinite.
    pub lifespan: Option<std::time::Duration>,
    /// `None` for DDS MANUAL_BY_PARTICIPANT, which ROS no longer has.
    pub liveliness: Option<Liveliness>,
    /// `None`: infinite.
    pub liveliness_lease: Option<std::time::Duration>,
}

/// One publisher or subscription of the ROS graph, local or remote, as `ros2 topic info -v`
/// shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEndpoint {
    pub kind: GraphEndpointKind,
    /// Whether `topic` is a topic or one half of a service.
    pub topic_kind: RosTopicKind,
    /// Fully qualified ROS name: `/chatter` (for service halves, the service's name).
    pub topic: String,
    /// ROS type name: `std_msgs/msg/String`.
    pub type_name: String,
    /// `RIHS01_…` from the endpoint's USER_DATA; `None` if it announced none (Humble peers).
    pub type_hash: Option<String>,
    /// The endpoint's GUID, which ROS calls its GID.
    pub gid: [u8; 16],
    /// `(namespace, name)` of the node owning it, from `ros_discovery_info`; `None` until that
    /// arrives, and for plain DDS endpoints.
    pub node: Option<(String, String)>,
    pub qos: GraphQos,
    /// Created by this context rather than discovered.
    pub local: bool,
    /// How this context exchanges user data with the endpoint: `intra` (its own), `shm` or
    /// `uds` (a roslite participant on this host: volatile topics, and transient-local ones
    /// whose writer keeps a KEEP_LAST history that never expires), else `udp`. The same rule
    /// holds between any two roslite participants of one host, so it also says what they use
    /// with each other.
    pub transport: &'static str,
    /// The content filter a subscription announced (its expression and parameters; see
    /// [`crate::content_filter`]); `None` for publishers and unfiltered subscriptions, and
    /// for peers that filter without announcing it.
    pub content_filter: Option<ContentFilterOptions>,
}

impl GraphEndpoint {
    /// For one half of a service, the service's type (`example_interfaces/srv/AddTwoInts`,
    /// from the half's `..._Request` or `..._Response`); `None` for a topic.
    pub fn service_type(&self) -> Option<&str> {
        let suffix = match self.topic_kind {
            RosTopicKind::ServiceRequest => "_Request",
            RosTopicKind::ServiceReply => "_Response",
            RosTopicKind::Topic => return None,
        };
        Some(
            self.type_name
                .strip_suffix(suffix)
                .unwrap_or(&self.type_name),
        )
    }
}

impl From<&QosProfile> for GraphQos {
    /// A profile as the graph shows it; nothing is unknown about a profile we hold.
    fn from(qos: &QosProfile) -> Self {
        GraphQos {
            reliability: qos.reliability,
            durability: Some(qos.durability),
            history: Some(qos.history),
            deadline: qos.deadline,
            lifespan: qos.lifespan,
            liveliness: Some(qos.liveliness),
            liveliness_lease: qos.liveliness_lease,
        }
    }
}

/// The action a topic belongs to, as rcl_action finds actions in the graph: an action
/// `/fibonacci` of type `test_msgs/action/Fibonacci` shows as topic
/// `/fibonacci/_action/feedback` of type `test_msgs/action/Fibonacci_FeedbackMessage`.
/// `None` for any other topic.
pub fn action_of_feedback_topic(topic: &str, type_name: &str) -> Option<(String, String)> {
    let action = topic.strip_suffix("/_action/feedback")?;
    let action_type = type_name.strip_suffix("_FeedbackMessage")?;
    (!action.is_empty() && action_type.contains("/action/"))
        .then(|| (action.to_owned(), action_type.to_owned()))
}

#[cfg(test)]
mod action_tests {
    use super::*;

    #[test]
    fn actions_are_found_by_their_feedback_topic() {
        assert_eq!(
            action_of_feedback_topic(
                "/ns/fibonacci/_action/feedback",
                "test_msgs/action/Fibonacci_FeedbackMessage"
            ),
            Some(("/ns/fibonacci".into(), "test_msgs/action/Fibonacci".into()))
        );
        assert_eq!(
            action_of_feedback_topic(
                "/fibonacci/_action/status",
                "action_msgs/msg/GoalStatusArray"
            ),
            None
        );
        assert_eq!(
            action_of_feedback_topic("/chatter/_action/feedback", "std_msgs/msg/String"),
            None
        );
    }
}
