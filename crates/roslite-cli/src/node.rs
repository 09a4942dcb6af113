//! `roslite node list`: ros2node's `list` verb.

use crate::topic::graph;

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
}

pub fn run(command: NodeCommand) -> anyhow::Result<()> {
    match command {
        NodeCommand::List {
            all,
            count_nodes,
            spin_time,
        } => {
            let ctx = crate::topic::networked_context()?;
            let net = crate::topic::network(&ctx);
            // Nodes are known from `ros_discovery_info`, which follows SEDP (a Fast DDS peer
            // may send it only with its next heartbeat): wait until every endpoint discovered
            // so far has its node.
            let view = graph::wait_for_graph(
                net,
                graph::spin_time(spin_time, graph::NODE_SPIN_TIME),
                |view| {
                    view.participants > 0
                        && view.endpoints.iter().all(|e| e.local || e.node.is_some())
                },
            );
            let names = full_names(&view.nodes, all);
            if count_nodes {
                println!("{}", names.len());
            } else {
                for name in names {
                    println!("{name}");
                }
            }
            Ok(())
        }
    }
}

/// `/ns/name` for each node, sorted; hidden ones (name starting with `_`) only if `all`.
fn full_names(nodes: &[(String, String)], all: bool) -> Vec<String> {
    let mut names: Vec<String> = nodes
        .iter()
        .filter(|(_, name)| all || !(name.is_empty() || name.starts_with('_')))
        .map(|(namespace, name)| {
            let separator = if namespace.ends_with('/') { "" } else { "/" };
            format!("{namespace}{separator}{name}")
        })
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
