//! `roslite lifecycle nodes|get|list|set`: ros2lifecycle's verbs, through the services every
//! managed node serves (`<node>/get_state`, `<node>/change_state`, ...), with its output.
//!
//! A managed node is one that serves `<node>/get_state` of type `lifecycle_msgs/srv/GetState`:
//! rclcpp_lifecycle's, rclpy's and roslite's alike.

use std::time::Duration;

use anyhow::bail;
use roslite::msgs::lifecycle_msgs::msg::{Transition, TransitionDescription};
use roslite::msgs::lifecycle_msgs::srv::{
    ChangeState, ChangeState_Request, GetAvailableTransitions, GetAvailableTransitions_Request,
    GetState, GetState_Request,
};
use roslite::Node;

use crate::node_services::{absolute_node_name, tool_node, LIFECYCLE_SERVICES};
use crate::topic::graph::{self, GraphView};

const GET_STATE_TYPE: &str = "lifecycle_msgs/srv/GetState";

#[derive(clap::Subcommand)]
pub enum LifecycleCommand {
    /// Output a list of nodes with lifecycle
    Nodes {
        /// Display all nodes even hidden ones
        #[arg(short = 'a', long)]
        all: bool,
        /// Only display the number of nodes discovered
        #[arg(short = 'c', long)]
        count_nodes: bool,
        /// Longest wait in seconds for discovery (default: 2)
        #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
        spin_time: Option<f64>,
    },
    /// Get lifecycle state for one or more nodes
    Get {
        /// Name of the ROS node (all managed nodes when not given)
        node_name: Option<String>,
        /// Consider hidden nodes as well
        #[arg(long)]
        include_hidden_nodes: bool,
        /// Longest wait in seconds for the node's services (default: 5)
        #[arg(long, value_name = "S", default_value_t = 5.0,
              value_parser = crate::topic::positive_float)]
        timeout: f64,
    },
    /// Output a list of available transitions
    List {
        /// Name of the ROS node
        node_name: String,
        /// Display all existing transitions, not only those from the current state
        #[arg(short = 'a', long)]
        all: bool,
        /// Longest wait in seconds for the node's services (default: 5)
        #[arg(long, value_name = "S", default_value_t = 5.0,
              value_parser = crate::topic::positive_float)]
        timeout: f64,
    },
    /// Trigger lifecycle state transition
    Set {
        /// Name of the ROS node
        node_name: String,
        /// The lifecycle transition: its label (configure, activate, ...) or id
        transition: String,
        /// Longest wait in seconds for the node's services (default: 5)
        #[arg(long, value_name = "S", default_value_t = 5.0,
              value_parser = crate::topic::positive_float)]
        timeout: f64,
    },
}

pub fn run(command: LifecycleCommand) -> anyhow::Result<()> {
    match command {
        LifecycleCommand::Nodes {
            all,
            count_nodes,
            spin_time,
        } => {
            let view = crate::topic::discover(spin_time, graph::DEFAULT_SPIN_TIME, |view| {
                view.participants > 0
            })?;
            let nodes = managed_nodes(&view, all);
            if count_nodes {
                println!("{}", nodes.len());
            } else {
                for node in nodes {
                    println!("{node}");
                }
            }
            Ok(())
        }
        LifecycleCommand::Get {
            node_name,
            include_hidden_nodes,
            timeout,
        } => get(node_name.as_deref(), include_hidden_nodes, seconds(timeout)),
        LifecycleCommand::List {
            node_name,
            all,
            timeout,
        } => list(&absolute_node_name(&node_name), all, seconds(timeout)),
        LifecycleCommand::Set {
            node_name,
            transition,
            timeout,
        } => set(
            &absolute_node_name(&node_name),
            &transition,
            seconds(timeout),
        ),
    }
}

fn seconds(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The nodes serving `<node>/get_state` of type `lifecycle_msgs/srv/GetState`, sorted.
fn managed_nodes(view: &GraphView, include_hidden: bool) -> Vec<String> {
    let mut nodes: Vec<String> = view
        .endpoints
        .iter()
        .filter(|e| !e.local && e.service_type() == Some(GET_STATE_TYPE))
        .filter_map(|e| e.topic.strip_suffix("/get_state"))
        .filter(|node| include_hidden || !graph::is_hidden(node))
        .map(str::to_owned)
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

fn get(node: Option<&str>, include_hidden: bool, timeout: Duration) -> anyhow::Result<()> {
    let tool = tool_node()?;
    match node {
        Some(node) => {
            let (id, label) = current_state(&tool, &absolute_node_name(node), timeout)?;
            println!("{label} [{id}]");
        }
        None => {
            let view =
                crate::topic::discover(None, graph::DEFAULT_SPIN_TIME, |v| v.participants > 0)?;
            for node in managed_nodes(&view, include_hidden) {
                let (id, label) = current_state(&tool, &node, timeout)?;
                println!("{node}: {label} [{id}]");
            }
        }
    }
    Ok(())
}

fn current_state(tool: &Node, node: &str, timeout: Duration) -> anyhow::Result<(u8, String)> {
    let state = LIFECYCLE_SERVICES
        .call::<GetState>(
            tool,
            node,
            "get_state",
            GetState_Request::default(),
            timeout,
        )?
        .current_state;
    Ok((state.id, state.label))
}

fn transitions(
    tool: &Node,
    node: &str,
    service: &str,
    timeout: Duration,
) -> anyhow::Result<Vec<TransitionDescription>> {
    Ok(LIFECYCLE_SERVICES
        .call::<GetAvailableTransitions>(
            tool,
            node,
            service,
            GetAvailableTransitions_Request::default(),
            timeout,
        )?
        .available_transitions)
}

fn list(node: &str, all: bool, timeout: Duration) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let service = if all {
        "get_transition_graph"
    } else {
        "get_available_transitions"
    };
    for t in transitions(&tool, node, service, timeout)? {
        println!("- {} [{}]", t.transition.label, t.transition.id);
        println!("\tStart: {}", t.start_state.label);
        println!("\tGoal: {}", t.goal_state.label);
    }
    Ok(())
}

fn set(node: &str, requested: &str, timeout: Duration) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let available = transitions(&tool, node, "get_available_transitions", timeout)?;
    let chosen = available
        .iter()
        .find(|t| t.transition.label == requested || t.transition.id.to_string() == requested);
    let Some(chosen) = chosen else {
        let (id, label) = current_state(&tool, node, timeout)?;
        let mut message = format!(
            "Unknown transition requested '{requested}' for {node}, which is {label} [{id}]; "
        );
        if available.is_empty() {
            message.push_str("no transition leaves that state");
        } else {
            message.push_str("available ones are:");
            for t in &available {
                message.push_str(&format!("\n- {} [{}]", t.transition.label, t.transition.id));
            }
        }
        bail!(message);
    };
    // The label goes too: a node looks a transition up by its label first (shutdown's id
    // differs by state), and the id alone by those that ignore labels.
    let request = ChangeState_Request {
        transition: Transition {
            id: chosen.transition.id,
            label: chosen.transition.label.clone(),
        },
    };
    if LIFECYCLE_SERVICES
        .call::<ChangeState>(&tool, node, "change_state", request, timeout)?
        .success
    {
        println!("Transitioning successful");
        Ok(())
    } else {
        let (id, label) = current_state(&tool, node, timeout)?;
        bail!(
            "Transitioning failed: {node}'s {} callback did not succeed; the node is now \
             {label} [{id}] (its log says why)",
            chosen.transition.label
        )
    }
}
