//! The extension point for moving messages between processes.
//!
//! A [`Transport`] registered with [`crate::Context::add_transport`] is told about every local
//! publisher and subscription. For a publisher it may attach an [`Outlet`]: from then on each
//! `publish` serializes the message once (CDR with encapsulation header) and hands the bytes to
//! every outlet. For a subscription it keeps the [`LocalSubscription`] and calls
//! [`LocalSubscription::deliver`] with serialized messages it receives; they are decoded (large
//! primitive arrays as views into the buffer) and queued exactly like local ones. RTPS over UDP,
//! shared memory and Unix sockets all plug in here; the user API does not change.

use std::sync::Arc;

use roslite_cdr::SharedBuf;

use crate::events::IncompatibleQos;
use crate::intra::PublisherLink;
use crate::pubsub::{MessageInfo, SerializedSink};
use crate::qos::{QosPolicyKind, QosProfile};

/// Receives the serialized messages of one local publisher.
pub trait Outlet: Send + Sync {
    /// `payload` is the whole serialized message, shared by every outlet of this publish.
    fn send(&self, payload: &Arc<[u8]>, info: &MessageInfo);
}

/// Learns about local endpoints so it can announce them and carry their data.
pub trait Transport: Send + Sync {
    /// A node was created (`namespace` `/`, `name` `talker`); `id` is process-local.
    fn node_added(&self, _id: u64, _namespace: &str, _name: &str) {}
    fn node_removed(&self, _id: u64) {}
    fn publisher_added(&self, publisher: LocalPublisher);
    fn publisher_removed(&self, topic: &str, id: u64);
    fn subscription_added(&self, subscription: LocalSubscription);
    fn subscription_removed(&self, topic: &str, id: u64);
}

/// What every local endpoint description carries.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointDescription {
    /// Process-local id, stable for the endpoint's life.
    pub id: u64,
    /// Fully qualified ROS topic name, e.g. `/chatter`.
    pub topic: String,
    /// `std_msgs/msg/String`.
    pub type_name: &'static str,
    /// `std_msgs::msg::dds_::String_`.
    pub dds_type_name: &'static str,
    /// `RIHS01_...`.
    pub type_hash: &'static str,
    pub qos: QosProfile,
    /// Fully qualified name of the owning node.
    pub node: String,
    /// Process-local id of the owning node, as given to [`Transport::node_added`].
    pub node_id: u64,
}

/// A local publisher, as a transport sees it.
#[derive(Clone)]
pub struct LocalPublisher {
    pub description: EndpointDescription,
    pub(crate) link: Arc<dyn PublisherLink>,
    pub(crate) events: Arc<IncompatibleQos>,
}

impl LocalPublisher {
    /// Starts sending this publisher's messages to `outlet`; `outlet_id` identifies it for
    /// [`Self::detach`].
    pub fn attach(&self, outlet_id: u64, outlet: Arc<dyn Outlet>) {
        self.link.attach_remote(outlet_id, outlet);
    }

    pub fn detach(&self, outlet_id: u64) {
        self.link.detach_remote(outlet_id);
    }

    /// Reports a remote subscription this publisher cannot serve (`OFFERED_INCOMPATIBLE_QOS`):
    /// counted in its `incompatible_qos_status` and passed to its callback.
    pub fn report_incompatible_qos(&self, policy: QosPolicyKind) {
        self.events.record(policy);
    }
}

/// A local subscription, as a transport sees it.
#[derive(Clone)]
pub struct LocalSubscription {
    pub description: EndpointDescription,
    pub(crate) sink: Arc<dyn SerializedSink>,
    pub(crate) events: Arc<IncompatibleQos>,
}

impl LocalSubscription {
    /// Decodes and queues a message received from another process; false if the bytes are not
    /// a valid message of this type (the subscription counts it as malformed and drops it).
    pub fn deliver(&self, payload: &SharedBuf, info: MessageInfo) -> bool {
        self.sink.deliver_serialized(payload, info)
    }

    /// Reports a remote publisher this subscription cannot use (`REQUESTED_INCOMPATIBLE_QOS`):
    /// counted in its `incompatible_qos_status` and passed to its callback.
    pub fn report_incompatible_qos(&self, policy: QosPolicyKind) {
        self.events.record(policy);
    }
}
