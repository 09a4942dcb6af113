//! `roslite param list|get|set|delete|describe|dump|load`: ros2param's verbs, through the six
//! parameter services every node serves (`<node>/list_parameters`, ...), with ros2param's
//! output.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::bail;

use crate::node_services::{absolute_node_name, tool_node, PARAMETER_SERVICES};
use roslite::msgs::rcl_interfaces::msg::{ParameterDescriptor, ParameterType as Ty};
use roslite::msgs::rcl_interfaces::srv::{
    DescribeParameters, DescribeParameters_Request, GetParameterTypes, GetParameterTypes_Request,
    GetParameters, GetParameters_Request, ListParameters, ListParameters_Request, SetParameters,
    SetParameters_Request,
};
use roslite::{Node, Parameter, ParameterType, ParameterValue};

use crate::topic::graph;
use crate::topic::pyrepr::{float_repr, str_repr};

#[derive(clap::Subcommand)]
pub enum ParamCommand {
    /// Output a list of available parameters
    List(ListArgs),
    /// Get parameter
    Get(GetArgs),
    /// Set parameter
    Set(SetArgs),
    /// Show descriptive information about declared parameters
    Describe(DescribeArgs),
    /// Show all of the parameters of a node in a YAML file format
    Dump(DumpArgs),
    /// Delete parameters (undeclare them; only dynamically typed ones can go)
    Delete(DeleteArgs),
    /// Load a parameter file (as `ros2 param dump` writes it) into a node
    Load(LoadArgs),
}

#[derive(clap::Args)]
pub struct DeleteArgs {
    /// Name of the ROS node
    node_name: String,
    /// Names of the parameters
    #[arg(required = true)]
    parameter_names: Vec<String>,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

#[derive(clap::Args)]
pub struct LoadArgs {
    /// Name of the ROS node
    node_name: String,
    /// Parameter file
    parameter_file: String,
    /// Do not load parameters in the '/**' namespace (or other wildcard patterns) into the
    /// node
    #[arg(long)]
    no_use_wildcard: bool,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// Name of the ROS node (all nodes when not given)
    node_name: Option<String>,
    /// Only list parameters with the provided prefixes
    #[arg(long, num_args = 1.., value_name = "PREFIX")]
    param_prefixes: Vec<String>,
    /// Print parameter types with parameter names
    #[arg(short = 't', long)]
    param_type: bool,
    /// Consider hidden nodes as well
    #[arg(short = 'a', long)]
    include_hidden_nodes: bool,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

#[derive(clap::Args)]
pub struct GetArgs {
    /// Name of the ROS node
    node_name: String,
    /// Name of the parameter
    parameter_name: String,
    /// Hide the type information
    #[arg(long)]
    hide_type: bool,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

#[derive(clap::Args)]
pub struct SetArgs {
    /// Name of the ROS node
    node_name: String,
    /// Name of the parameter
    parameter_name: String,
    /// Value of the parameter, read as YAML like ros2 does: true, 3, 2.5, '[1, 2]', text
    value: String,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

#[derive(clap::Args)]
pub struct DescribeArgs {
    /// Name of the ROS node
    node_name: String,
    /// Names of the parameters
    #[arg(required = true)]
    parameter_names: Vec<String>,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

#[derive(clap::Args)]
pub struct DumpArgs {
    /// Name of the ROS node
    node_name: String,
    /// Longest wait in seconds for the node's services (default: 5)
    #[arg(long, value_name = "S", default_value_t = 5.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

pub fn run(command: ParamCommand) -> anyhow::Result<()> {
    match command {
        ParamCommand::List(args) => list(&args),
        ParamCommand::Get(args) => get(&args),
        ParamCommand::Set(args) => set(&args),
        ParamCommand::Describe(args) => describe(&args),
        ParamCommand::Dump(args) => dump(&args),
        ParamCommand::Delete(args) => delete(&args),
        ParamCommand::Load(args) => load(&args),
    }
}

/// `set_parameters` with `parameters`: each one's result, in order.
fn set_each(
    tool: &Node,
    node: &str,
    parameters: &[Parameter],
    timeout: Duration,
) -> anyhow::Result<Vec<roslite::msgs::rcl_interfaces::msg::SetParametersResult>> {
    let response = PARAMETER_SERVICES.call::<SetParameters>(
        tool,
        node,
        "set_parameters",
        SetParameters_Request {
            parameters: parameters.iter().map(Parameter::to_msg).collect(),
        },
        timeout,
    )?;
    if response.results.len() != parameters.len() {
        bail!(
            "node {node} answered set_parameters with {} results for {} parameters",
            response.results.len(),
            parameters.len()
        );
    }
    Ok(response.results)
}

/// Prints a result's line, to stdout when `successful`, else to stderr; returns `successful`.
fn report(line: &str, successful: bool) -> bool {
    if successful {
        println!("{line}");
    } else {
        eprintln!("{line}");
    }
    successful
}

/// ros2param's line for one result: `<done>` or `<failed>`, then `: <reason>` if any.
fn result_line(successful: bool, reason: &str, done: &str, failed: &str) -> String {
    let mut line = if successful { done } else { failed }.to_owned();
    if !reason.is_empty() {
        line.push_str(": ");
        line.push_str(reason);
    }
    line
}

fn delete(args: &DeleteArgs) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let node = absolute_node_name(&args.node_name);
    // A parameter set to "not set" is undeclared (rcl_interfaces: PARAMETER_NOT_SET).
    let parameters: Vec<Parameter> = args
        .parameter_names
        .iter()
        .map(|name| Parameter::new(name.clone(), ParameterValue::NotSet))
        .collect();
    let results = set_each(
        &tool,
        &node,
        &parameters,
        Duration::from_secs_f64(args.timeout),
    )?;
    let mut all = true;
    for result in &results {
        let line = result_line(
            result.successful,
            &result.reason,
            "Deleted parameter successfully",
            "Deleting parameter failed",
        );
        all &= report(&line, result.successful);
    }
    if !all {
        std::process::exit(1);
    }
    Ok(())
}

fn load(args: &LoadArgs) -> anyhow::Result<()> {
    let node = absolute_node_name(&args.node_name);
    let parameters =
        roslite::parameters_in_file(&args.parameter_file, &node, !args.no_use_wildcard)?;
    if parameters.is_empty() {
        bail!(
            "Param file {} does not contain parameters for {node} (nor, unless \
             --no-use-wildcard, for '/**'); `roslite param dump {node}` writes such a file",
            args.parameter_file
        );
    }
    let tool = tool_node()?;
    let results = set_each(
        &tool,
        &node,
        &parameters,
        Duration::from_secs_f64(args.timeout),
    )?;
    for (parameter, result) in parameters.iter().zip(&results) {
        let line = result_line(
            result.successful,
            &result.reason,
            &format!("Set parameter {} successful", parameter.name),
            &format!("Set parameter {} failed", parameter.name),
        );
        report(&line, result.successful);
    }
    Ok(())
}

fn list(args: &ListArgs) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let request = || ListParameters_Request {
        prefixes: args.param_prefixes.clone(),
        depth: ListParameters_Request::DEPTH_RECURSIVE,
    };
    let print_names = |node: &str, names: &mut Vec<String>| -> anyhow::Result<()> {
        names.sort();
        let types = if args.param_type {
            PARAMETER_SERVICES
                .call::<GetParameterTypes>(
                    &tool,
                    node,
                    "get_parameter_types",
                    GetParameterTypes_Request {
                        names: names.clone(),
                    },
                    timeout,
                )?
                .types
                .to_vec()
        } else {
            Vec::new()
        };
        for (i, name) in names.iter().enumerate() {
            match types.get(i) {
                Some(ty) => println!("  {name} (type: {})", type_string(*ty)),
                None => println!("  {name}"),
            }
        }
        Ok(())
    };
    if let Some(node) = &args.node_name {
        let node = absolute_node_name(node);
        let mut names = PARAMETER_SERVICES
            .call::<ListParameters>(&tool, &node, "list_parameters", request(), timeout)?
            .result
            .names;
        return print_names(&node, &mut names);
    }
    let net = crate::topic::network(tool.context());
    let view = graph::wait_for_graph(
        &net,
        graph::spin_time(None, graph::NODE_SPIN_TIME),
        |view| view.participants > 0 && view.endpoints.iter().all(|e| e.local || e.node.is_some()),
    );
    let own = tool.fully_qualified_name();
    let mut nodes: Vec<String> = view
        .nodes
        .iter()
        .filter(|(_, name)| args.include_hidden_nodes || !name.starts_with('_'))
        .map(|(namespace, name)| roslite::names::join(namespace, name))
        .filter(|fqn| *fqn != own)
        .collect();
    nodes.sort();
    nodes.dedup();
    for node in nodes {
        match PARAMETER_SERVICES.call::<ListParameters>(
            &tool,
            &node,
            "list_parameters",
            request(),
            timeout,
        ) {
            Ok(response) => {
                println!("{node}:");
                print_names(&node, &mut response.result.names.clone())?;
            }
            Err(e) => eprintln!("{node}: {e}"),
        }
    }
    Ok(())
}

fn get(args: &GetArgs) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let node = absolute_node_name(&args.node_name);
    let response = PARAMETER_SERVICES.call::<GetParameters>(
        &tool,
        &node,
        "get_parameters",
        GetParameters_Request {
            names: vec![args.parameter_name.clone()],
        },
        Duration::from_secs_f64(args.timeout),
    )?;
    let Some(value) = response.values.first() else {
        bail!(
            "Parameter not set: node {node} has no parameter '{}'",
            args.parameter_name
        );
    };
    let value = ParameterValue::from_msg(value).unwrap_or_default();
    let (label, text) = get_output(&value);
    match (args.hide_type, text) {
        (_, None) => println!("{label}"),
        (true, Some(text)) => println!("{text}"),
        (false, Some(text)) => println!("{label} {text}"),
    }
    Ok(())
}

/// ros2param `get`'s label and Python rendering of a value (`None` for "not set").
fn get_output(value: &ParameterValue) -> (&'static str, Option<String>) {
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    let py_bool = |b: bool| if b { "True" } else { "False" }.to_owned();
    match value {
        ParameterValue::NotSet => ("Parameter not set.", None),
        ParameterValue::Bool(b) => ("Boolean value is:", Some(py_bool(*b))),
        ParameterValue::Integer(i) => ("Integer value is:", Some(i.to_string())),
        ParameterValue::Double(d) => ("Double value is:", Some(float_repr(*d))),
        ParameterValue::String(s) => ("String value is:", Some(s.clone())),
        ParameterValue::ByteArray(v) => (
            "Byte values are:",
            Some(list(v.iter().map(|b| format!("b'\\x{b:02x}'")).collect())),
        ),
        ParameterValue::BoolArray(v) => (
            "Boolean values are:",
            Some(list(v.iter().map(|b| py_bool(*b)).collect())),
        ),
        // rclpy hands integer and double arrays over as `array.array`.
        ParameterValue::IntegerArray(v) => (
            "Integer values are:",
            Some(format!(
                "array('q', {})",
                list(v.iter().map(i64::to_string).collect())
            )),
        ),
        ParameterValue::DoubleArray(v) => (
            "Double values are:",
            Some(format!(
                "array('d', {})",
                list(v.iter().map(|d| float_repr(*d)).collect())
            )),
        ),
        ParameterValue::StringArray(v) => (
            "String values are:",
            Some(list(v.iter().map(|s| str_repr(s)).collect())),
        ),
    }
}

/// A value typed on the command line, read as ros2param reads it (PyYAML): scalars by their
/// YAML type, lists whose elements share a type as arrays, anything else as the text itself.
pub(crate) fn cli_value(text: &str) -> ParameterValue {
    match ParameterValue::from_yaml(text) {
        Ok(value) => value,
        Err(_) => ParameterValue::String(text.to_owned()),
    }
}

fn set(args: &SetArgs) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let node = absolute_node_name(&args.node_name);
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut value = cli_value(&args.value);
    if value == ParameterValue::StringArray(Vec::new()) {
        // `[]` says nothing about the element type: keep the parameter's array type.
        let types = PARAMETER_SERVICES
            .call::<GetParameterTypes>(
                &tool,
                &node,
                "get_parameter_types",
                GetParameterTypes_Request {
                    names: vec![args.parameter_name.clone()],
                },
                timeout,
            )?
            .types;
        value = match types.first().copied().and_then(ParameterType::from_code) {
            Some(ParameterType::ByteArray) => ParameterValue::ByteArray(Vec::new()),
            Some(ParameterType::BoolArray) => ParameterValue::BoolArray(Vec::new()),
            Some(ParameterType::IntegerArray) => ParameterValue::IntegerArray(Vec::new()),
            Some(ParameterType::DoubleArray) => ParameterValue::DoubleArray(Vec::new()),
            _ => value,
        };
    }
    let parameter = Parameter::new(args.parameter_name.clone(), value);
    let results = set_each(&tool, &node, &[parameter], timeout)?;
    let result = &results[0];
    let line = result_line(
        result.successful,
        &result.reason,
        "Set parameter successful",
        "Setting parameter failed",
    );
    if !report(&line, result.successful) {
        std::process::exit(1);
    }
    Ok(())
}

fn describe(args: &DescribeArgs) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let node = absolute_node_name(&args.node_name);
    let response = PARAMETER_SERVICES.call::<DescribeParameters>(
        &tool,
        &node,
        "describe_parameters",
        DescribeParameters_Request {
            names: args.parameter_names.clone(),
        },
        Duration::from_secs_f64(args.timeout),
    )?;
    if response.descriptors.is_empty() {
        bail!(
            "Parameter not set: node {node} has not declared all of {}",
            args.parameter_names.join(", ")
        );
    }
    for descriptor in &response.descriptors {
        print!("{}", describe_output(descriptor));
    }
    Ok(())
}

/// ros2param `describe`'s block for one descriptor.
fn describe_output(d: &ParameterDescriptor) -> String {
    let mut out = format!("Parameter name: {}\n", d.name);
    out += &format!("  Type: {}\n", type_string(d.r#type));
    if !d.description.is_empty() {
        out += &format!("  Description: {}\n", d.description);
    }
    out += "  Constraints:\n";
    if d.read_only {
        out += "    Read only: true\n";
    }
    if d.dynamic_typing {
        out += "    Dynamic typing: true\n";
    }
    if let Some(r) = d.floating_point_range.first() {
        out += &format!("    Min value: {}\n", float_repr(r.from_value));
        out += &format!("    Max value: {}\n", float_repr(r.to_value));
        if r.step != 0.0 {
            out += &format!("    Step: {}\n", float_repr(r.step));
        }
    }
    if let Some(r) = d.integer_range.first() {
        out += &format!("    Min value: {}\n", r.from_value);
        out += &format!("    Max value: {}\n", r.to_value);
        if r.step != 0 {
            out += &format!("    Step: {}\n", r.step);
        }
    }
    if !d.additional_constraints.is_empty() {
        out += &format!("    Additional constraints: {}\n", d.additional_constraints);
    }
    out
}

/// ros2param's name for a type code.
fn type_string(code: u8) -> &'static str {
    match code {
        Ty::PARAMETER_BOOL => "boolean",
        Ty::PARAMETER_INTEGER => "integer",
        Ty::PARAMETER_DOUBLE => "double",
        Ty::PARAMETER_STRING => "string",
        Ty::PARAMETER_BYTE_ARRAY => "byte array",
        Ty::PARAMETER_BOOL_ARRAY => "boolean array",
        Ty::PARAMETER_INTEGER_ARRAY => "integer array",
        Ty::PARAMETER_DOUBLE_ARRAY => "double array",
        Ty::PARAMETER_STRING_ARRAY => "string array",
        Ty::PARAMETER_NOT_SET => "not set",
        _ => "unknown",
    }
}

fn dump(args: &DumpArgs) -> anyhow::Result<()> {
    let tool = tool_node()?;
    let node = absolute_node_name(&args.node_name);
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut names = PARAMETER_SERVICES
        .call::<ListParameters>(
            &tool,
            &node,
            "list_parameters",
            ListParameters_Request::default(),
            timeout,
        )?
        .result
        .names;
    names.sort();
    let values = PARAMETER_SERVICES
        .call::<GetParameters>(
            &tool,
            &node,
            "get_parameters",
            GetParameters_Request {
                names: names.clone(),
            },
            timeout,
        )?
        .values;
    if values.len() != names.len() {
        bail!("node {node} did not return values for all of its parameters (changed meanwhile?)");
    }
    let parameters: Vec<Parameter> = names
        .into_iter()
        .zip(&values)
        .map(|(name, v)| Parameter {
            name,
            value: ParameterValue::from_msg(v).unwrap_or_default(),
        })
        .collect();
    println!("{}", dump_output(&node, &parameters));
    Ok(())
}

/// A parameter tree: dotted names split into nested mappings, as ros2param's `insert_dict`.
enum Tree {
    Leaf(ParameterValue),
    Map(BTreeMap<String, Tree>),
}

/// The node's parameters as a parameter file, in PyYAML's block style (sorted keys,
/// indentless sequences), which `--params-file` reads back.
fn dump_output(node: &str, parameters: &[Parameter]) -> String {
    let mut root = BTreeMap::new();
    for p in parameters {
        insert(&mut root, &p.name, p.value.clone());
    }
    let mut out = format!(
        "{}:\n  ros__parameters:\n",
        roslite::params::yaml_string(node)
    );
    emit(&root, 4, &mut out);
    out
}

fn insert(map: &mut BTreeMap<String, Tree>, name: &str, value: ParameterValue) {
    if let Some((head, rest)) = name.split_once('.') {
        if let Tree::Map(inner) = map
            .entry(head.to_owned())
            .or_insert_with(|| Tree::Map(BTreeMap::new()))
        {
            insert(inner, rest, value);
            return;
        }
    }
    // A leaf, or a name that continues below a leaf of the same prefix: keep it dotted.
    map.insert(name.to_owned(), Tree::Leaf(value));
}

fn emit(map: &BTreeMap<String, Tree>, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for (key, tree) in map {
        let key = roslite::params::yaml_string(key);
        match tree {
            Tree::Map(inner) => {
                out.push_str(&format!("{pad}{key}:\n"));
                emit(inner, indent + 2, out);
            }
            Tree::Leaf(value) => match yaml_items(value) {
                Some(items) if items.is_empty() => out.push_str(&format!("{pad}{key}: []\n")),
                Some(items) => {
                    out.push_str(&format!("{pad}{key}:\n"));
                    for item in items {
                        out.push_str(&format!("{pad}- {item}\n"));
                    }
                }
                None => out.push_str(&format!("{pad}{key}: {}\n", yaml_scalar(value))),
            },
        }
    }
}

/// The elements of an array value as YAML scalars; `None` for a scalar value.
fn yaml_items(value: &ParameterValue) -> Option<Vec<String>> {
    Some(match value {
        ParameterValue::ByteArray(v) => v.iter().map(u8::to_string).collect(),
        ParameterValue::BoolArray(v) => v.iter().map(bool::to_string).collect(),
        ParameterValue::IntegerArray(v) => v.iter().map(i64::to_string).collect(),
        ParameterValue::DoubleArray(v) => v.iter().map(|d| yaml_double(*d)).collect(),
        ParameterValue::StringArray(v) => {
            v.iter().map(|s| roslite::params::yaml_string(s)).collect()
        }
        _ => return None,
    })
}

fn yaml_scalar(value: &ParameterValue) -> String {
    match value {
        ParameterValue::Double(d) => yaml_double(*d),
        ParameterValue::NotSet => "null".to_owned(),
        other => other.to_string(),
    }
}

/// PyYAML's float: Python's repr, with `.0` before an exponent and YAML's `.inf`/`.nan`.
fn yaml_double(d: f64) -> String {
    if d.is_nan() {
        return ".nan".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    let repr = float_repr(d);
    match repr.split_once('e') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => {
            format!("{mantissa}.0e{exponent}")
        }
        _ => repr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_values_read_like_ros2param() {
        assert_eq!(cli_value("true"), ParameterValue::Bool(true));
        assert_eq!(cli_value("3"), ParameterValue::Integer(3));
        assert_eq!(cli_value("2.5"), ParameterValue::Double(2.5));
        assert_eq!(
            cli_value("[1, 2]"),
            ParameterValue::IntegerArray(vec![1, 2])
        );
        assert_eq!(cli_value("hello"), ParameterValue::from("hello"));
        // Mixed lists and mappings stay the text that was typed.
        assert_eq!(cli_value("[1, a]"), ParameterValue::from("[1, a]"));
        assert_eq!(cli_value("{a: 1}"), ParameterValue::from("{a: 1}"));
    }

    #[test]
    fn get_prints_python_values() {
        assert_eq!(
            get_output(&ParameterValue::Bool(true)),
            ("Boolean value is:", Some("True".to_owned()))
        );
        assert_eq!(
            get_output(&ParameterValue::Double(1e-5)).1.unwrap(),
            "1e-05"
        );
        assert_eq!(
            get_output(&ParameterValue::IntegerArray(vec![1, 2]))
                .1
                .unwrap(),
            "array('q', [1, 2])"
        );
        assert_eq!(
            get_output(&ParameterValue::StringArray(vec![
                "a".into(),
                "it's".into()
            ]))
            .1
            .unwrap(),
            "['a', \"it's\"]"
        );
        assert_eq!(
            get_output(&ParameterValue::NotSet),
            ("Parameter not set.", None)
        );
    }

    #[test]
    fn describe_prints_like_ros2param() {
        let d = roslite::ParameterDescriptor::new()
            .description("rate in Hz")
            .integer_range(1, 100, 1)
            .read_only();
        let mut msg = d.to_msg();
        msg.name = "rate".into();
        msg.r#type = Ty::PARAMETER_INTEGER;
        assert_eq!(
            describe_output(&msg),
            "Parameter name: rate\n  Type: integer\n  Description: rate in Hz\n  \
             Constraints:\n    Read only: true\n    Min value: 1\n    Max value: 100\n    \
             Step: 1\n"
        );
    }

    #[test]
    fn dump_is_a_parameter_file_that_reads_back() {
        let parameters = vec![
            Parameter::new("empty", ParameterValue::DoubleArray(vec![])),
            Parameter::new("gains", vec![1i64, 2]),
            Parameter::new("mode", "auto"),
            Parameter::new("quoted", "5"),
            Parameter::new("rate", 10.0),
            Parameter::new("tiny", 1e-5),
            Parameter::new("use_sim_time", false),
            Parameter::new("wheel.count", 4),
            Parameter::new("wheel.radius", 0.1),
        ];
        let text = dump_output("/robot/driver", &parameters);
        assert_eq!(
            text,
            "/robot/driver:\n  ros__parameters:\n    empty: []\n    gains:\n    - 1\n    - 2\n    \
             mode: auto\n    quoted: '5'\n    rate: 10.0\n    tiny: 1.0e-05\n    \
             use_sim_time: false\n    wheel:\n      count: 4\n      radius: 0.1\n"
        );
        // The dump is a parameter file for the same node.
        let dir = std::env::temp_dir().join(format!("roslite-dump-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dump.yaml");
        std::fs::write(&path, &text).unwrap();
        let ctx = roslite::Context::new(roslite::ContextOptions {
            args: roslite::RosArgs::parse([
                "prog",
                "--ros-args",
                "--params-file",
                path.to_str().unwrap(),
            ])
            .unwrap(),
            ..Default::default()
        })
        .unwrap();
        let node = ctx.create_node_with_namespace("driver", "/robot").unwrap();
        let mut overrides = node.parameter_overrides();
        overrides.sort_by(|a, b| a.name.cmp(&b.name));
        std::fs::remove_dir_all(&dir).unwrap();
        let mut expected = parameters;
        // `[]` is read back as an empty string array until a declaration gives it a type.
        expected[0].value = ParameterValue::StringArray(vec![]);
        assert_eq!(overrides, expected);
    }
}
