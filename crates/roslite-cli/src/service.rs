//! `roslite service list|type|find|info|call|echo`: ros2service's verbs over the graph, a
//! serialized client, and a subscription to service events.

mod echo;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use roslite_cdr::Endianness;
use roslite_msg_gen::dynamic;

use crate::topic::graph::{self, GraphView};
use crate::topic::pyrepr;

#[derive(clap::Subcommand)]
pub enum ServiceCommand {
    /// Output a list of available services
    List(ListArgs),
    /// Output a service's type
    Type(TypeArgs),
    /// Output a list of available services of a given type
    Find(FindArgs),
    /// Print information about a service: its type, and how many clients and servers it has
    Info(InfoArgs),
    /// Call a service
    Call(CallArgs),
    /// Echo the calls of a service whose server or client has introspection on
    Echo(echo::EchoArgs),
}

#[derive(clap::Args)]
pub struct TypeArgs {
    /// Name of the ROS service to get type (e.g. '/add_two_ints')
    service_name: String,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    /// Name of the ROS service to get info (e.g. '/add_two_ints')
    service_name: String,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct FindArgs {
    /// Name of the ROS service type to filter for (e.g. 'rcl_interfaces/srv/ListParameters')
    service_type: String,
    #[command(flatten)]
    filter: ServiceFilter,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// Additionally display the type
    #[arg(short = 't', long)]
    show_types: bool,
    #[command(flatten)]
    filter: ServiceFilter,
}

/// The flags `service list` and `service find` share.
#[derive(clap::Args)]
struct ServiceFilter {
    /// Only display the number of services discovered
    #[arg(short = 'c', long = "count-services")]
    count_services: bool,
    /// Consider hidden services as well
    #[arg(short = 'a', long = "include-hidden-services")]
    include_hidden_services: bool,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct CallArgs {
    /// Name of the ROS service to call (e.g. '/add_two_ints')
    service_name: String,
    /// Type of the ROS service (e.g. 'std_srvs/srv/Empty')
    service_type: String,
    /// Values to fill the request with in YAML format (e.g. '{a: 1, b: 2}'); by default the
    /// request has default values
    #[arg(default_value = "{}")]
    values: String,
    /// Call the service repeatedly at this rate in Hz
    #[arg(short = 'r', long, value_name = "N", value_parser = crate::topic::positive_float)]
    rate: Option<f64>,
    /// Longest wait in seconds for the service to appear and for each reply (default: 10;
    /// ros2 waits forever)
    #[arg(long, value_name = "S", default_value_t = 10.0,
          value_parser = crate::topic::positive_float)]
    timeout: f64,
}

pub fn run(command: ServiceCommand) -> anyhow::Result<()> {
    match command {
        ServiceCommand::List(args) => list(&args),
        ServiceCommand::Type(args) => service_type(&args),
        ServiceCommand::Find(args) => find(&args),
        ServiceCommand::Info(args) => info(&args),
        ServiceCommand::Call(args) => call(&args),
        ServiceCommand::Echo(args) => echo::run(&args),
    }
}

/// Service names with their types from every request/reply endpoint (servers and clients
/// alike, as rcl's `get_service_names_and_types` does), other than the tool's own.
fn services(view: &GraphView, include_hidden: bool) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in view.endpoints.iter().filter(|e| !e.local) {
        let Some(ty) = e.service_type() else {
            continue;
        };
        if !include_hidden && graph::is_hidden(&e.topic) {
            continue;
        }
        out.entry(e.topic.clone())
            .or_default()
            .insert(ty.to_owned());
    }
    out
}

/// Service `service_name` (as the user wrote it), fully qualified, with its types and the
/// graph they were found in, after waiting up to `spin_time` for it to appear.
///
/// # Errors
/// An invalid name, or a service nothing serves or calls.
fn discovered_service(
    service_name: &str,
    spin_time: Option<f64>,
) -> anyhow::Result<(String, BTreeSet<String>, GraphView)> {
    let name = crate::topic::resolve_topic(service_name)?;
    let view = crate::topic::discover(spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        services(view, true).contains_key(&name)
    })?;
    let Some(types) = services(&view, true).remove(&name) else {
        bail!("Unknown service '{name}': `roslite service list` shows the services discovered");
    };
    Ok((name, types, view))
}

fn service_type(args: &TypeArgs) -> anyhow::Result<()> {
    let (_, types, _) = discovered_service(&args.service_name, args.spin_time)?;
    for ty in types {
        println!("{ty}");
    }
    Ok(())
}

/// ros2service's `info`: the type, and rcl's counts of the service's clients (request
/// writers) and servers (request readers) in other processes.
fn info(args: &InfoArgs) -> anyhow::Result<()> {
    let (name, types, view) = discovered_service(&args.service_name, args.spin_time)?;
    let types: Vec<String> = types.into_iter().collect();
    // ros2 prints a single type as it is and several as a Python list.
    match types.as_slice() {
        [one] => println!("Type: {one}"),
        many => {
            let reprs: Vec<String> = many
                .iter()
                .map(|t| roslite_msg_gen::python::str_repr(t))
                .collect();
            println!("Type: [{}]", reprs.join(", "));
        }
    }
    let count = |kind| {
        view.endpoints
            .iter()
            .filter(|e| {
                !e.local
                    && e.topic == name
                    && e.topic_kind == roslite::graph::RosTopicKind::ServiceRequest
                    && e.kind == kind
            })
            .count()
    };
    println!(
        "Clients count: {}",
        count(roslite::graph::GraphEndpointKind::Publisher)
    );
    println!(
        "Services count: {}",
        count(roslite::graph::GraphEndpointKind::Subscription)
    );
    Ok(())
}

fn find(args: &FindArgs) -> anyhow::Result<()> {
    let wanted = crate::interface::parse_service_type(&args.service_type)?.to_string();
    let view = crate::topic::discover(args.filter.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        view.participants > 0
    })?;
    let names: Vec<String> = services(&view, args.filter.include_hidden_services)
        .into_iter()
        .filter(|(_, types)| types.contains(&wanted))
        .map(|(name, _)| name)
        .collect();
    crate::topic::print_names(&names, args.filter.count_services);
    Ok(())
}

fn list(args: &ListArgs) -> anyhow::Result<()> {
    let view = crate::topic::discover(args.filter.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        view.participants > 0
    })?;
    let services = services(&view, args.filter.include_hidden_services);
    if args.filter.count_services {
        println!("{}", services.len());
        return Ok(());
    }
    for (name, types) in services {
        if args.show_types {
            let types: Vec<&str> = types.iter().map(String::as_str).collect();
            println!("{name} [{}]", types.join(", "));
        } else {
            println!("{name}");
        }
    }
    Ok(())
}

fn call(args: &CallArgs) -> anyhow::Result<()> {
    let name = crate::topic::resolve_topic(&args.service_name)?;
    let set = crate::interface::load_interfaces()?;
    let ty = crate::interface::parse_service_type(&args.service_type)?;
    crate::interface::require_service(&set, &ty)?;
    let request_ty = crate::interface::type_part(&ty, "_Request")?;
    let response_ty = crate::interface::type_part(&ty, "_Response")?;
    let request_info = crate::topic::type_info(&set, &request_ty)?;
    let response_info = crate::topic::type_info(&set, &response_ty)?;
    // `from_yaml` errors name the field and what is wrong with it.
    let value =
        dynamic::from_yaml(&set, &request_ty, &args.values).map_err(|e| anyhow::anyhow!("{e}"))?;
    let payload = dynamic::encode(&set, &request_ty, &value, Endianness::Little)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let shown = pyrepr::message_repr(&set, &request_ty, &value, pyrepr::Origin::Typed);

    let ctx = crate::topic::networked_context()?;
    let node_name = crate::topic::default_node_name();
    let node = ctx
        .create_node(&node_name)
        .with_context(|| format!("cannot create node '{node_name}'"))?;
    let mut client = node
        .create_serialized_client(&name, request_info, response_info)
        .with_context(|| format!("cannot create a client of '{name}'"))?;
    // As rcl registers a client's service type with its node.
    let service_hash = roslite_msg_gen::hash::type_hash(&set, &ty)
        .map_err(|e| anyhow::anyhow!("cannot hash '{ty}': {e}"))?;
    client.register_service_type(&service_hash, crate::type_descriptions::leaked(&set, &ty)?);
    let timeout = Duration::from_secs_f64(args.timeout);
    if !client.service_is_ready() {
        println!("waiting for service to become available...");
        if !client.wait_for_service(timeout) {
            bail!(
                "service '{name}' did not become available within {} s; check the name with \
                 `roslite service list`, or raise --timeout",
                args.timeout
            );
        }
    }
    let period = args.rate.map(|hz| Duration::from_secs_f64(1.0 / hz));
    let mut next = Instant::now();
    loop {
        println!("requester: making request: {shown}\n");
        let reply = client
            .call(&payload, timeout)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let response = dynamic::decode(&set, &response_ty, reply.bytes())
            .map_err(|e| anyhow::anyhow!("the response does not decode as {response_ty}: {e}"))?;
        println!(
            "response:\n{}\n",
            pyrepr::message_repr(&set, &response_ty, &response, pyrepr::Origin::Received)
        );
        let Some(period) = period else {
            return Ok(());
        };
        next += period;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}
