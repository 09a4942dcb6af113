//! `roslite node list|info`: ros2node's `list` and `info` verbs.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::bail;
use roslite::graph::{GraphEndpoint, GraphEndpointKind, RosTopicKind};

use crate::topic::graph::{self, GraphView};

#[derive(clap::Subcommand)]
pub enum NodeCommand {
    /// Output a list of available nodes.
    List {
        /// Display all nodes even hidden ones
        #[arg(short = 'a', long)]
        all: bool,
        /// Only display the number of nodes discovered
        #[arg(short = 'c', long)]
        count_nodes: bool,
        /// Longest wait in seconds for discovery (default: 4)
        #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
        spin_time: Option<f64>,
    },
    /// Output information about a node: its publishers, subscribers and services.
    Info {
        /// Fully qualified node name to request information with (e.g. '/talker')
        node_name: String,
        /// Display hidden topics, services, and actions as well
        #[arg(long)]
        include_hidden: bool,
        /// Longest wait in seconds for discovery (default: 4)
        #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
        spin_time: Option<f64>,
    },
}

/// Waits until every endpoint discovered so far has its node (nodes come from
/// `ros_discovery_info`, which follows SEDP; a Fast DDS peer may send it only with its next
/// heartbeat) and `enough` holds.
fn discover_nodes(
    spin_time: Option<f64>,
    enough: impl Fn(&GraphView) -> bool,
) -> anyhow::Result<GraphView> {
    crate::topic::discover(spin_time, graph::NODE_SPIN_TIME, |view| {
        view.participants > 0
            && view.endpoints.iter().all(|e| e.local || e.node.is_some())
            && enough(view)
    })
}

pub fn run(command: NodeCommand) -> anyhow::Result<()> {
    match command {
        NodeCommand::Info {
            node_name,
            include_hidden,
            spin_time,
        } => {
            // ros2 wants the full name; a bare `talker` means `/talker`.
            let wanted = if node_name.starts_with('/') {
                node_name
            } else {
                format!("/{node_name}")
            };
            let view = discover_nodes(spin_time, |view| {
                full_names(&view.nodes, true).contains(&wanted)
            })?;
            let names = full_names(&view.nodes, true);
            let count = names.iter().filter(|n| **n == wanted).count();
            if count == 0 {
                bail!(
                    "Unable to find node '{wanted}': `roslite node list` shows the nodes \
                     discovered"
                );
            }
            if count > 1 {
                eprintln!(
                    "WARNING: There are {count} nodes in the graph with the exact name \
                     \"{wanted}\". You are seeing information about only one of them."
                );
            }
            print!("{}", node_info(&view, &wanted, include_hidden));
            Ok(())
        }
        NodeCommand::List {
            all,
            count_nodes,
            spin_time,
        } => {
            let view = discover_nodes(spin_time, |_| true)?;
            crate::topic::print_names(&full_names(&view.nodes, all), count_nodes);
            Ok(())
        }
    }
}

/// `/ns/name`.
fn full_name(namespace: &str, name: &str) -> String {
    let separator = if namespace.ends_with('/') { "" } else { "/" };
    format!("{namespace}{separator}{name}")
}

/// ros2node's `info` text for node `wanted` (`/ns/name`): each section lists `name: types`,
/// sorted, and ends with an empty line when empty, as ros2 prints it.
fn node_info(view: &GraphView, wanted: &str, include_hidden: bool) -> String {
    let mine = |e: &&GraphEndpoint| {
        !e.local
            && e.node
                .as_ref()
                .is_some_and(|(namespace, name)| full_name(namespace, name) == wanted)
            && (include_hidden || !graph::is_hidden(&e.topic))
    };
    let section = |topic_kind: RosTopicKind, kind: GraphEndpointKind| {
        let mut names: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in view
            .endpoints
            .iter()
            .filter(mine)
            .filter(|e| e.topic_kind == topic_kind && e.kind == kind)
        {
            let ty = e.service_type().unwrap_or(&e.type_name);
            names.entry(&e.topic).or_default().insert(ty);
        }
        let mut text = String::new();
        for (name, types) in &names {
            let types: Vec<&str> = types.iter().copied().collect();
            text.push_str(&format!("    {name}: {}\n", types.join(", ")));
        }
        if text.is_empty() {
            text.push('\n');
        }
        text
    };
    use GraphEndpointKind::{Publisher, Subscription};
    use RosTopicKind::{ServiceRequest, Topic};
    format!(
        "{wanted}\n  Subscribers:\n{}  Publishers:\n{}  Service Servers:\n{}  Service \
         Clients:\n{}  Action Servers:\n\n  Action Clients:\n\n",
        section(Topic, Subscription),
        section(Topic, Publisher),
        // A server reads requests, a client writes them.
        section(ServiceRequest, Subscription),
        section(ServiceRequest, Publisher),
    )
}

/// `/ns/name` for each node, sorted; hidden ones (name starting with `_`) only if `all`.
fn full_names(nodes: &[(String, String)], all: bool) -> Vec<String> {
    let mut names: Vec<String> = nodes
        .iter()
        .filter(|(_, name)| all || !(name.is_empty() || name.starts_with('_')))
        .map(|(namespace, name)| full_name(namespace, name))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_names_hide_hidden_nodes() {
        let nodes = vec![
            ("/".to_owned(), "talker".to_owned()),
            ("/robot".to_owned(), "driver".to_owned()),
            ("/".to_owned(), "_roslite_cli_42".to_owned()),
        ];
        assert_eq!(full_names(&nodes, false), ["/robot/driver", "/talker"]);
        assert_eq!(full_names(&nodes, true).len(), 3);
    }
}
