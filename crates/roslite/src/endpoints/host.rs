//! The narrow handle an endpoint holds on its node: the node's id and default callback group,
//! and the context's backends. It keeps the node in the graph while any of its endpoints
//! lives, as rclcpp's entities keep their node alive.

use std::sync::Arc;

use roslite_executor::CallbackGroup;

use super::type_cache::TypeCache;
use crate::seam::BackendSet;

pub(crate) struct EndpointHost {
    /// Process-local id of the node, as backends know it.
    pub(crate) node_id: u64,
    pub(crate) default_group: Arc<CallbackGroup>,
    pub(crate) backends: Arc<BackendSet>,
    /// The types the node's endpoints use, for its `~/get_type_description` service.
    pub(crate) types: Arc<TypeCache>,
}

impl EndpointHost {
    /// Registers node `node_id` with the backends; it leaves the graph when the host drops.
    pub(crate) fn new(
        backends: Arc<BackendSet>,
        node_id: u64,
        namespace: &str,
        name: &str,
        default_group: Arc<CallbackGroup>,
    ) -> Self {
        backends.node_added(node_id, namespace, name);
        Self {
            node_id,
            default_group,
            backends,
            types: Arc::default(),
        }
    }
}

impl EndpointHost {
    /// Of the `matched` subscriptions of publisher `id`, those every backend knows to accept
    /// its messages already ([`PathView::unacknowledged_subscriptions`]).
    ///
    /// [`PathView::unacknowledged_subscriptions`]: crate::seam::PathView::unacknowledged_subscriptions
    pub(crate) fn acknowledged_subscriptions(&self, id: u64, matched: usize) -> usize {
        let unacknowledged = self
            .backends
            .fold_paths(0, |n, paths| n + paths.unacknowledged_subscriptions(id));
        matched.saturating_sub(unacknowledged)
    }

    /// Of the `matched` publishers of subscription `id`, those every backend knows to send to
    /// it already ([`PathView::unacknowledged_publishers`]).
    ///
    /// [`PathView::unacknowledged_publishers`]: crate::seam::PathView::unacknowledged_publishers
    pub(crate) fn acknowledged_publishers(&self, id: u64, matched: usize) -> usize {
        let unacknowledged = self
            .backends
            .fold_paths(0, |n, paths| n + paths.unacknowledged_publishers(id));
        matched.saturating_sub(unacknowledged)
    }
}

impl Drop for EndpointHost {
    fn drop(&mut self) {
        self.backends.node_removed(self.node_id);
    }
}
