//! `roslite action list|info|type|find|send_goal`: ros2action's verbs over the graph (actions are
//! found by their feedback topics, as rcl_action finds them) and serialized clients of an
//! action's services.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::graph::{action_of_feedback_topic, GraphEndpointKind};
use roslite::{Executor, GoalId, GoalStatusCode};
use roslite_cdr::Endianness;
use roslite_msg_gen::ast::{Interface, InterfaceKind, TypeName};
use roslite_msg_gen::dynamic::{self, Value, YamlOptions};
use roslite_msg_gen::registry::InterfaceSet;

use crate::topic::graph::{self, GraphView};

#[derive(clap::Subcommand)]
pub enum ActionCommand {
    /// Output a list of action names
    List(ListArgs),
    /// Print information about an action
    Info(InfoArgs),
    /// Print a action's type
    Type(TypeArgs),
    /// Find actions from type
    Find(FindArgs),
    /// Send an action goal
    #[command(name = "send_goal")]
    SendGoal(SendGoalArgs),
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// Additionally display the type
    #[arg(short = 't', long)]
    show_types: bool,
    /// Only display the number of actions discovered
    #[arg(short = 'c', long = "count-actions")]
    count_actions: bool,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    /// Name of the ROS action to get info (e.g. '/fibonacci')
    action_name: String,
    /// Additionally show the action type
    #[arg(short = 't', long)]
    show_types: bool,
    /// Only display the number of action clients and action servers
    #[arg(short = 'c', long)]
    count: bool,
    /// Longest wait in seconds for discovery (default: 4)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct TypeArgs {
    /// Name of the ROS action to get type (e.g. '/fibonacci')
    action_name: String,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct FindArgs {
    /// Name of the ROS action type to find (e.g. 'test_msgs/action/Fibonacci')
    action_type: String,
    /// Only display the number of actions discovered
    #[arg(short = 'c', long = "count-actions")]
    count_actions: bool,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct SendGoalArgs {
    /// Name of the ROS action (e.g. '/fibonacci')
    action_name: String,
    /// Type of the ROS action (e.g. 'example_interfaces/action/Fibonacci')
    action_type: String,
    /// Goal request values in YAML format (e.g. '{order: 10}')
    #[arg(default_value = "{}")]
    goal: String,
    /// Echo feedback messages for the goal
    #[arg(short = 'f', long)]
    feedback: bool,
    /// Longest wait in seconds for the action server to appear and accept the goal (default:
    /// 10; ros2 waits forever). The result is waited for as long as the goal takes.
    #[arg(long, value_name = "S", default_value_t = 10.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

pub fn run(command: ActionCommand) -> anyhow::Result<()> {
    match command {
        ActionCommand::List(args) => list(&args),
        ActionCommand::Info(args) => info(&args),
        ActionCommand::Type(args) => action_type(&args),
        ActionCommand::Find(args) => find(&args),
        ActionCommand::SendGoal(args) => send_goal(&args),
    }
}

/// Action names with their types, from the feedback topics of servers and clients other than
/// the tool's own (rcl_action's `get_names_and_types`).
fn actions(view: &GraphView) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in view.topic_endpoints() {
        if let Some((action, ty)) = action_of_feedback_topic(&e.topic, &e.type_name) {
            out.entry(action).or_default().insert(ty);
        }
    }
    out
}

fn list(args: &ListArgs) -> anyhow::Result<()> {
    let view = crate::topic::discover(args.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        view.participants > 0
    })?;
    let actions = actions(&view);
    if args.count_actions {
        println!("{}", actions.len());
        return Ok(());
    }
    for (name, types) in actions {
        if args.show_types {
            let types: Vec<&str> = types.iter().map(String::as_str).collect();
            println!("{name} [{}]", types.join(", "));
        } else {
            println!("{name}");
        }
    }
    Ok(())
}

/// ros2action's `find`: the actions of a type, as `list` would name them.
fn find(args: &FindArgs) -> anyhow::Result<()> {
    let wanted = crate::interface::parse_kind_type(
        &args.action_type,
        InterfaceKind::Action,
        "test_msgs/action/Fibonacci",
    )?
    .to_string();
    let view = crate::topic::discover(args.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        actions(view).values().any(|types| types.contains(&wanted))
    })?;
    let names: Vec<String> = actions(&view)
        .into_iter()
        .filter(|(_, types)| types.contains(&wanted))
        .map(|(name, _)| name)
        .collect();
    crate::topic::print_names(&names, args.count_actions);
    Ok(())
}

fn action_type(args: &TypeArgs) -> anyhow::Result<()> {
    let name = crate::topic::resolve_topic(&args.action_name)?;
    let view = crate::topic::discover(args.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        actions(view).contains_key(&name)
    })?;
    let Some(types) = actions(&view).remove(&name) else {
        bail!("Unknown action '{name}': `roslite action list` shows the actions discovered");
    };
    for ty in types {
        println!("{ty}");
    }
    Ok(())
}

/// `/ns/name` of a node.
fn node_name((namespace, name): &(String, String)) -> String {
    if namespace.ends_with('/') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

fn info(args: &InfoArgs) -> anyhow::Result<()> {
    let name = crate::topic::resolve_topic(&args.action_name)?;
    let feedback = format!("{name}/_action/feedback");
    let view = crate::topic::discover(args.spin_time, graph::NODE_SPIN_TIME, |view| {
        actions(view).contains_key(&name) && view.on_topic(&feedback).all(|e| e.node.is_some())
    })?;
    // rcl_action: servers publish the feedback topic, clients subscribe to it.
    let mut servers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut clients: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in view.on_topic(&feedback) {
        let (Some(node), Some((_, ty))) =
            (&e.node, action_of_feedback_topic(&e.topic, &e.type_name))
        else {
            continue;
        };
        let side = if e.kind == GraphEndpointKind::Publisher {
            &mut servers
        } else {
            &mut clients
        };
        side.entry(node_name(node)).or_default().insert(ty);
    }
    println!("Action: {name}");
    for (label, side) in [("Action clients", &clients), ("Action servers", &servers)] {
        println!("{label}: {}", side.len());
        if args.count {
            continue;
        }
        for (node, types) in side {
            if args.show_types {
                let types: Vec<&str> = types.iter().map(String::as_str).collect();
                println!("    {node} [{}]", types.join(", "));
            } else {
                println!("    {node}");
            }
        }
    }
    Ok(())
}

/// rosidl_runtime_py's `message_to_yaml`, as ros2action prints goals, feedback and results.
fn yaml(set: &InterfaceSet, ty: &TypeName, value: &Value) -> String {
    dynamic::to_yaml(set, ty, value, &YamlOptions::default())
}

fn uuid_value(id: GoalId) -> Value {
    Value::Struct(vec![("uuid".into(), Value::Bytes(id.0.to_vec()))])
}

fn goal_id_of(value: &Value) -> Option<GoalId> {
    match value.get("goal_id")?.get("uuid")? {
        Value::Bytes(bytes) => Some(GoalId(bytes.as_slice().try_into().ok()?)),
        Value::Array(items) => {
            let mut id = [0u8; 16];
            for (byte, item) in id.iter_mut().zip(items) {
                *byte = match item {
                    Value::UInt(n) => u8::try_from(*n).ok()?,
                    Value::Int(n) => u8::try_from(*n).ok()?,
                    _ => return None,
                };
            }
            Some(GoalId(id))
        }
        _ => None,
    }
}

fn encode(set: &InterfaceSet, ty: &TypeName, value: &Value) -> anyhow::Result<Vec<u8>> {
    dynamic::encode(set, ty, value, Endianness::Little).map_err(|e| anyhow::anyhow!("{e}"))
}

fn decode(set: &InterfaceSet, ty: &TypeName, bytes: &[u8]) -> anyhow::Result<Value> {
    dynamic::decode(set, ty, bytes)
        .map_err(|e| anyhow::anyhow!("a reply does not decode as {ty}: {e}"))
}

fn send_goal(args: &SendGoalArgs) -> anyhow::Result<()> {
    let name = crate::topic::resolve_topic(&args.action_name)?;
    let set = Arc::new(crate::interface::load_interfaces()?);
    let ty = parse_action_type_arg(&args.action_type)?;
    crate::interface::require_usable(&set, &ty)?;
    if !matches!(set.interface(&ty), Some(Interface::Action(_))) {
        bail!(
            "unknown action type '{ty}': roslite has no definition of it; put its package's \
             share directory on $AMENT_PREFIX_PATH (`roslite interface list` shows the known \
             types)"
        );
    }
    let goal_ty = crate::interface::type_part(&ty, "_Goal")?;
    let result_ty = crate::interface::type_part(&ty, "_Result")?;
    let feedback_ty = crate::interface::type_part(&ty, "_Feedback")?;
    let feedback_message_ty = crate::interface::type_part(&ty, "_FeedbackMessage")?;
    let send_request_ty = crate::interface::type_part(&ty, "_SendGoal_Request")?;
    let send_response_ty = crate::interface::type_part(&ty, "_SendGoal_Response")?;
    let result_request_ty = crate::interface::type_part(&ty, "_GetResult_Request")?;
    let result_response_ty = crate::interface::type_part(&ty, "_GetResult_Response")?;
    let info = |t: &TypeName| crate::topic::type_info(&set, t);
    let goal =
        dynamic::from_yaml(&set, &goal_ty, &args.goal).map_err(|e| anyhow::anyhow!("{e}"))?;
    let goal_id = GoalId::random();
    let send_request = encode(
        &set,
        &send_request_ty,
        &Value::Struct(vec![
            ("goal_id".into(), uuid_value(goal_id)),
            ("goal".into(), goal.clone()),
        ]),
    )?;
    let result_request = encode(
        &set,
        &result_request_ty,
        &Value::Struct(vec![("goal_id".into(), uuid_value(goal_id))]),
    )?;

    let ctx = crate::topic::networked_context()?;
    let node = crate::topic::tool_node(&ctx, None)?;
    let mut send_client = node
        .create_serialized_client(
            &format!("{name}/_action/send_goal"),
            info(&send_request_ty)?,
            info(&send_response_ty)?,
        )
        .with_context(|| format!("cannot create a client of action '{name}'"))?;
    let mut result_client = node
        .create_serialized_client(
            &format!("{name}/_action/get_result"),
            info(&result_request_ty)?,
            info(&result_response_ty)?,
        )
        .with_context(|| format!("cannot create a client of action '{name}'"))?;
    // As rcl registers each client's service type with its node.
    for (client, suffix) in [
        (&mut send_client, "_SendGoal"),
        (&mut result_client, "_GetResult"),
    ] {
        let service_ty = crate::interface::type_part(&ty, suffix)?;
        let hash = roslite_msg_gen::hash::type_hash(&set, &service_ty)
            .map_err(|e| anyhow::anyhow!("cannot hash '{service_ty}': {e}"))?;
        client.register_service_type(&hash, crate::type_descriptions::leaked(&set, &service_ty)?);
    }
    // Feedback for this goal only, printed as it comes.
    let _feedback = if args.feedback {
        let set = set.clone();
        let subscription = node.create_serialized_subscription(
            &format!("{name}/_action/feedback"),
            info(&feedback_message_ty)?,
            roslite::action::action_feedback_qos(),
            move |bytes: &roslite_cdr::SharedBuf, _| {
                let Ok(message) = dynamic::decode(&set, &feedback_message_ty, bytes.bytes()) else {
                    return;
                };
                if goal_id_of(&message) != Some(goal_id) {
                    return;
                }
                let Some(feedback) = message.get("feedback") else {
                    return;
                };
                let _ = crate::topic::print_now(&format!(
                    "Feedback:\n    {}\n",
                    yaml(&set, &feedback_ty, feedback)
                ));
            },
        )?;
        Some(subscription)
    } else {
        None
    };
    // Spun on this thread while the goal runs: feedback that arrived before the result is
    // printed before it (the network thread queues or prints it before it hands over the
    // result reply, which came after it).
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let outcome = (|| -> anyhow::Result<()> {
        let timeout = Duration::from_secs_f64(args.timeout);
        println!("Waiting for an action server to become available...");
        if !(send_client.wait_for_service(timeout) && result_client.wait_for_service(timeout)) {
            bail!(
                "action server '{name}' did not become available within {} s; check the name \
                 with `roslite action list`, or raise --timeout",
                args.timeout
            );
        }
        println!("Sending goal:\n     {}", yaml(&set, &goal_ty, &goal));
        let reply = send_client
            .call(&send_request, timeout)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let response = decode(&set, &send_response_ty, reply.bytes())?;
        if !matches!(response.get("accepted"), Some(Value::Bool(true))) {
            println!("Goal was rejected.");
            return Ok(());
        }
        println!("Goal accepted with ID: {}\n", hex(goal_id));
        // The server answers when the goal ends, however long it takes (as ros2 waits).
        let answer = Arc::new(Mutex::new(None));
        let slot = answer.clone();
        result_client
            .call_with(&result_request, move |reply| {
                *slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(reply);
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let reply = loop {
            if let Some(reply) = answer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
            {
                break reply;
            }
            executor.spin_once(Some(Duration::from_millis(100)));
        };
        executor.spin_some();
        let reply = reply.map_err(|e| anyhow::anyhow!("{e}"))?;
        let response = decode(&set, &result_response_ty, reply.bytes())?;
        let status = match response.get("status") {
            Some(Value::Int(code)) => GoalStatusCode::from_code(i8::try_from(*code).unwrap_or(0)),
            _ => GoalStatusCode::Unknown,
        };
        let result = response
            .get("result")
            .context("the result reply has no result")?;
        println!("Result:\n    {}", yaml(&set, &result_ty, result));
        println!("Goal finished with status: {status}");
        Ok(())
    })();
    ctx.shutdown();
    outcome
}

/// A goal id as ros2action prints it: 32 hex digits, no dashes.
fn hex(id: GoalId) -> String {
    id.0.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_action_type_arg(text: &str) -> anyhow::Result<TypeName> {
    crate::interface::parse_kind_type(
        text,
        InterfaceKind::Action,
        "example_interfaces/action/Fibonacci",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_types_accept_the_short_form_and_refuse_others() {
        assert_eq!(
            parse_action_type_arg("test_msgs/Fibonacci")
                .unwrap()
                .to_string(),
            "test_msgs/action/Fibonacci"
        );
        let err = parse_action_type_arg("std_srvs/srv/SetBool").unwrap_err();
        assert!(err.to_string().contains("<package>/action/<Name>"), "{err}");
    }

    #[test]
    fn goal_ids_print_as_ros2_prints_them() {
        assert_eq!(hex(GoalId([0xab; 16])), "ab".repeat(16));
    }
}
