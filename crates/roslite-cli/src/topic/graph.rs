//! What the tool knows of the ROS graph, and how long it waits for discovery.
//!
//! A fresh participant knows nothing: SPDP, then SEDP, then each peer's `ros_discovery_info`
//! (which names the nodes) arrive over the first few hundred milliseconds. ros2cli either asks
//! its daemon, which has been listening all along, or spins a fresh node for `--spin-time`. We
//! poll the graph instead and stop as soon as it holds what the command needs and has been
//! quiet for [`QUIET`], or at `--spin-time` at the latest.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use roslite::context::Graph;
use roslite::graph::{GraphEndpoint, GraphEndpointKind, RosTopicKind};

/// How long the graph must stay unchanged before we trust it is complete.
const QUIET: Duration = Duration::from_millis(300);
/// How often the graph is looked at while waiting.
const POLL: Duration = Duration::from_millis(50);
/// `--spin-time`'s default: the longest wait for discovery.
pub(crate) const DEFAULT_SPIN_TIME: f64 = 2.0;
/// `--spin-time`'s default where node names are shown. Nodes come from `ros_discovery_info`,
/// which a Fast DDS peer may send only with its next periodic HEARTBEAT (every 3 s).
pub(crate) const NODE_SPIN_TIME: f64 = 4.0;
/// With no participant at all discovered by then, nobody is out there: stop waiting.
const EMPTY_GIVE_UP: Duration = Duration::from_millis(1500);

/// One look at the graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GraphView {
    pub participants: usize,
    pub endpoints: Vec<GraphEndpoint>,
    /// `(namespace, name)`, sorted.
    pub nodes: Vec<(String, String)>,
}

impl GraphView {
    pub(crate) fn capture(net: &Graph) -> Self {
        Self {
            participants: net.remote_participant_count(),
            endpoints: net.endpoints(),
            nodes: net.node_names(),
        }
    }

    /// Endpoints of ROS topics (not service halves) other than the tool's own.
    pub(crate) fn topic_endpoints(&self) -> impl Iterator<Item = &GraphEndpoint> {
        self.endpoints
            .iter()
            .filter(|e| e.topic_kind == RosTopicKind::Topic && !e.local)
    }

    /// Endpoints on `topic`.
    pub(crate) fn on_topic<'a>(
        &'a self,
        topic: &'a str,
    ) -> impl Iterator<Item = &'a GraphEndpoint> {
        self.topic_endpoints().filter(move |e| e.topic == topic)
    }

    pub(crate) fn publishers_on<'a>(
        &'a self,
        topic: &'a str,
    ) -> impl Iterator<Item = &'a GraphEndpoint> {
        self.on_topic(topic)
            .filter(|e| e.kind == GraphEndpointKind::Publisher)
    }

    /// Topic names with their types, sorted, as `rcl_get_topic_names_and_types` gives them;
    /// hidden topics only if asked.
    pub(crate) fn topic_names_and_types(&self, include_hidden: bool) -> Vec<(String, Vec<String>)> {
        let mut topics: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for endpoint in self.topic_endpoints() {
            if include_hidden || !is_hidden(&endpoint.topic) {
                topics
                    .entry(&endpoint.topic)
                    .or_default()
                    .insert(&endpoint.type_name);
            }
        }
        topics
            .into_iter()
            .map(|(name, types)| {
                let types = types.into_iter().map(str::to_owned).collect();
                (name.to_owned(), types)
            })
            .collect()
    }

    /// The types `topic` carries (sorted), or `None` for a topic nobody uses.
    pub(crate) fn topic_types(&self, topic: &str) -> Option<Vec<String>> {
        let types: BTreeSet<&str> = self.on_topic(topic).map(|e| e.type_name.as_str()).collect();
        (!types.is_empty()).then(|| types.into_iter().map(str::to_owned).collect())
    }
}

/// rclpy's `topic_or_service_is_hidden`: some token of the name starts with `_`.
pub(crate) fn is_hidden(name: &str) -> bool {
    name.split('/').any(|token| token.starts_with('_'))
}

/// Polls the graph until `ready` holds and it has not changed for [`QUIET`], or until
/// `max_wait` has passed, or [`EMPTY_GIVE_UP`] passed without any participant; returns the
/// last view either way.
pub(crate) fn wait_for_graph(
    net: &Graph,
    max_wait: Duration,
    ready: impl Fn(&GraphView) -> bool,
) -> GraphView {
    let start = Instant::now();
    let mut view = GraphView::capture(net);
    let mut changed_at = start;
    loop {
        let now = Instant::now();
        let waited = now.duration_since(start);
        let empty = view.participants == 0 && waited >= EMPTY_GIVE_UP;
        if waited >= max_wait || empty || (ready(&view) && now.duration_since(changed_at) >= QUIET)
        {
            return view;
        }
        std::thread::sleep(POLL.min(max_wait - waited));
        let next = GraphView::capture(net);
        if next != view {
            view = next;
            changed_at = Instant::now();
        }
    }
}

/// `--spin-time` in seconds as a duration, or `default` seconds when not given.
pub(crate) fn spin_time(seconds: Option<f64>, default: f64) -> Duration {
    Duration::from_secs_f64(seconds.unwrap_or(default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_names() {
        assert!(is_hidden("/_private"));
        assert!(is_hidden("/a/_b/c"));
        assert!(!is_hidden("/chatter"));
        assert!(!is_hidden("/a_b"));
    }
}
