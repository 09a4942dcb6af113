//! `roslite topic info [-v]`: ros2topic's `info` verb, endpoints printed like rclpy's
//! `TopicEndpointInfo.__str__`.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::bail;
use roslite::graph::{GraphEndpoint, GraphEndpointKind};
use roslite::{Durability, History, Liveliness, Reliability};

use super::graph::{self, GraphView};

#[derive(clap::Args)]
pub struct InfoArgs {
    /// Name of the ROS topic to get info (e.g. '/chatter')
    topic_name: String,
    /// Prints detailed information like the node name, node namespace, topic type, topic type
    /// hash, GUID, and QoS Profile of the publishers and subscribers to this topic
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Longest wait in seconds for discovery (default: 2, or 4 with --verbose, which waits
    /// for the endpoints' node names too)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    spin_time: Option<f64>,
}

/// What rmw_dds_common reports for an endpoint whose node is unknown.
const NODE_NAME_UNKNOWN: &str = "_NODE_NAME_UNKNOWN_";
const NODE_NAMESPACE_UNKNOWN: &str = "_NODE_NAMESPACE_UNKNOWN_";

pub fn run(args: &InfoArgs) -> anyhow::Result<()> {
    let topic = super::resolve_topic(&args.topic_name)?;
    let ctx = super::networked_context()?;
    let net = super::network(&ctx);
    let default_wait = if args.verbose {
        graph::NODE_SPIN_TIME
    } else {
        graph::DEFAULT_SPIN_TIME
    };
    let max_wait = graph::spin_time(args.spin_time, default_wait);
    let start = std::time::Instant::now();
    let view = graph::wait_for_graph(&net, max_wait, |view| {
        let mut endpoints = view.on_topic(&topic).peekable();
        endpoints.peek().is_some() && (!args.verbose || endpoints.all(|e| e.node.is_some()))
    });
    match render(&view, &topic, args.verbose) {
        Some(text) => {
            print!("{text}");
            Ok(())
        }
        None => bail!(
            "Unknown topic '{topic}': nothing publishes or subscribes to it (waited {:.1} s for \
             discovery; `roslite topic list` shows the known topics, --spin-time waits longer)",
            start.elapsed().as_secs_f64()
        ),
    }
}

/// The text ros2 prints, or `None` if the topic is unknown.
fn render(view: &GraphView, topic: &str, verbose: bool) -> Option<String> {
    let types = view.topic_types(topic)?;
    let line_end = if verbose { "\n\n" } else { "\n" };
    let mut out = String::new();
    let type_str = match types.as_slice() {
        [one] => one.clone(),
        many => python_str_list(many),
    };
    let _ = write!(out, "Type: {type_str}{line_end}");
    for (label, kind) in [
        ("Publisher count", GraphEndpointKind::Publisher),
        ("Subscription count", GraphEndpointKind::Subscription),
    ] {
        let endpoints: Vec<&GraphEndpoint> =
            view.on_topic(topic).filter(|e| e.kind == kind).collect();
        let _ = write!(out, "{label}: {}{line_end}", endpoints.len());
        if verbose {
            for endpoint in endpoints {
                let _ = write!(out, "{}{line_end}", endpoint_text(endpoint));
            }
        }
    }
    Some(out)
}

/// `['a/msg/X', 'b/msg/Y']`, as Python prints a list of type names.
fn python_str_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|t| format!("'{t}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// rclpy `TopicEndpointInfo.__str__`.
pub(crate) fn endpoint_text(e: &GraphEndpoint) -> String {
    let (namespace, name) = e
        .node
        .as_ref()
        .map_or((NODE_NAMESPACE_UNKNOWN, NODE_NAME_UNKNOWN), |(ns, n)| {
            (ns.as_str(), n.as_str())
        });
    let gid: Vec<String> = e.gid.iter().map(|b| format!("{b:02x}")).collect();
    let qos = &e.qos;
    let reliability = match qos.reliability {
        Reliability::BestEffort => "BEST_EFFORT",
        Reliability::Reliable => "RELIABLE",
    };
    let history = match qos.history {
        Some(History::KeepLast(depth)) => format!("KEEP_LAST ({depth})"),
        Some(History::KeepAll) => "KEEP_ALL".to_owned(),
        None => "UNKNOWN".to_owned(),
    };
    let durability = match qos.durability {
        Some(Durability::Volatile) => "VOLATILE",
        Some(Durability::TransientLocal) => "TRANSIENT_LOCAL",
        None => "UNKNOWN",
    };
    let liveliness = match qos.liveliness {
        Some(Liveliness::Automatic) => "AUTOMATIC",
        Some(Liveliness::ManualByTopic) => "MANUAL_BY_TOPIC",
        None => "UNKNOWN",
    };
    let endpoint_type = match e.kind {
        GraphEndpointKind::Publisher => "PUBLISHER",
        GraphEndpointKind::Subscription => "SUBSCRIPTION",
    };
    [
        format!("Node name: {name}"),
        format!("Node namespace: {namespace}"),
        format!("Topic type: {}", e.type_name),
        format!(
            "Topic type hash: {}",
            e.type_hash.as_deref().unwrap_or("INVALID")
        ),
        format!("Endpoint type: {endpoint_type}"),
        format!("GID: {}", gid.join(".")),
        format!("Transport: {}", e.transport),
        "QoS profile:".to_owned(),
        format!("  Reliability: {reliability}"),
        format!("  History (Depth): {history}"),
        format!("  Durability: {durability}"),
        format!("  Lifespan: {}", duration_text(qos.lifespan)),
        format!("  Deadline: {}", duration_text(qos.deadline)),
        format!("  Liveliness: {liveliness}"),
        format!(
            "  Liveliness lease duration: {}",
            duration_text(qos.liveliness_lease)
        ),
    ]
    .join("\n")
}

/// rclpy `Duration.__str__`: `Infinite`, or whole nanoseconds.
fn duration_text(d: Option<Duration>) -> String {
    match d {
        None => "Infinite".to_owned(),
        Some(d) => format!("{} nanoseconds", d.as_nanos()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslite::graph::{GraphQos, RosTopicKind};

    fn endpoint() -> GraphEndpoint {
        GraphEndpoint {
            kind: GraphEndpointKind::Publisher,
            topic_kind: RosTopicKind::Topic,
            topic: "/chatter".into(),
            type_name: "std_msgs/msg/String".into(),
            type_hash: Some("RIHS01_df66".into()),
            gid: [1, 15, 0xab, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x14, 3],
            node: Some(("/".into(), "talker".into())),
            qos: GraphQos {
                reliability: Reliability::Reliable,
                durability: Some(Durability::Volatile),
                history: Some(History::KeepLast(7)),
                deadline: None,
                lifespan: Some(Duration::from_millis(1500)),
                liveliness: Some(Liveliness::Automatic),
                liveliness_lease: None,
            },
            local: false,
            transport: "shm",
            content_filter: None,
        }
    }

    #[test]
    fn verbose_info_matches_rclpy_layout() {
        let view = GraphView {
            participants: 1,
            endpoints: vec![endpoint()],
            nodes: vec![],
        };
        let text = render(&view, "/chatter", true).unwrap();
        let expected = "\
Type: std_msgs/msg/String

Publisher count: 1

Node name: talker
Node namespace: /
Topic type: std_msgs/msg/String
Topic type hash: RIHS01_df66
Endpoint type: PUBLISHER
GID: 01.0f.ab.00.00.00.00.00.00.00.00.00.00.00.14.03
Transport: shm
QoS profile:
  Reliability: RELIABLE
  History (Depth): KEEP_LAST (7)
  Durability: VOLATILE
  Lifespan: 1500000000 nanoseconds
  Deadline: Infinite
  Liveliness: AUTOMATIC
  Liveliness lease duration: Infinite

Subscription count: 0

";
        assert_eq!(text, expected);
        let short = render(&view, "/chatter", false).unwrap();
        assert_eq!(
            short,
            "Type: std_msgs/msg/String\nPublisher count: 1\nSubscription count: 0\n"
        );
        assert!(render(&view, "/other", false).is_none());
    }

    #[test]
    fn unknown_node_and_policies() {
        let mut e = endpoint();
        e.node = None;
        e.type_hash = None;
        e.qos.history = None;
        e.qos.durability = None;
        let text = endpoint_text(&e);
        assert!(text.contains("Node name: _NODE_NAME_UNKNOWN_\n"), "{text}");
        assert!(text.contains("Topic type hash: INVALID\n"), "{text}");
        assert!(text.contains("History (Depth): UNKNOWN\n"), "{text}");
        assert!(text.contains("Durability: UNKNOWN\n"), "{text}");
    }
}
