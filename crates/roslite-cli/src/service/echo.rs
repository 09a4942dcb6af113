//! `roslite service echo`: ros2service's `echo` verb (Jazzy and later), printing the events
//! that introspected servers and clients publish on `<service>/_service_event`.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use roslite::{Executor, QosProfile};
use roslite_cdr::SharedBuf;
use roslite_msg_gen::ast::TypeName;
use roslite_msg_gen::dynamic::{self, YamlOptions};
use roslite_msg_gen::registry::InterfaceSet;

use crate::topic::echo::YamlArgs;
use crate::topic::graph::{self, GraphView};
use crate::topic::print_now;

/// rcl's `RCL_SERVICE_INTROSPECTION_TOPIC_POSTFIX`.
const EVENT_TOPIC_SUFFIX: &str = "/_service_event";

#[derive(clap::Args)]
pub struct EchoArgs {
    /// Name of the ROS service to echo (e.g. '/add_two_ints')
    service_name: String,
    /// Type of the ROS service (e.g. 'example_interfaces/srv/AddTwoInts'); by default, the
    /// type its servers and clients announce
    service_type: Option<String>,
    #[command(flatten)]
    yaml: YamlArgs,
    /// Stop after this many seconds (by default, until interrupted)
    #[arg(long, value_name = "N", value_parser = crate::topic::positive_float)]
    timeout: Option<f64>,
    /// Longest wait in seconds for discovery of the service and its event publishers
    /// (default: 2)
    #[arg(long, value_name = "S", value_parser = crate::topic::positive_float)]
    spin_time: Option<f64>,
}

/// The event's text as ros2 prints it: the event as YAML with the kind's name for its
/// number, then `---`.
fn render(
    set: &InterfaceSet,
    event_ty: &TypeName,
    payload: &[u8],
    options: &YamlOptions,
) -> Result<String, String> {
    let value = dynamic::decode(set, event_ty, payload)
        .map_err(|e| format!("cannot decode a service event as '{event_ty}': {e}"))?;
    let yaml = dynamic::to_yaml(set, event_ty, &value, options);
    Ok(format!("{}---\n", name_event_type(&yaml)))
}

/// ros2 replaces `info.event_type`'s number with the name of its `ServiceEventInfo`
/// constant. `info` is the event's first field and `event_type` its first, so the first
/// `event_type: <n>` of the text is that one, in block and in flow style alike.
fn name_event_type(yaml: &str) -> String {
    const KEY: &str = "event_type: ";
    let Some(at) = yaml.find(KEY) else {
        return yaml.to_owned();
    };
    let start = at + KEY.len();
    let digits = yaml[start..].bytes().take_while(u8::is_ascii_digit).count();
    let name = match &yaml[start..start + digits] {
        "0" => "REQUEST_SENT",
        "1" => "REQUEST_RECEIVED",
        "2" => "RESPONSE_SENT",
        "3" => "RESPONSE_RECEIVED",
        _ => return yaml.to_owned(),
    };
    format!("{}{name}{}", &yaml[..start], &yaml[start + digits..])
}

/// The service's single type, from the servers and clients discovery found.
fn discovered_type(view: &GraphView, service: &str) -> anyhow::Result<TypeName> {
    let types: std::collections::BTreeSet<&str> = view
        .endpoints
        .iter()
        .filter(|e| !e.local && e.topic == service)
        .filter_map(|e| e.service_type())
        .collect();
    let types: Vec<&str> = types.into_iter().collect();
    match types.as_slice() {
        [one] => crate::interface::parse_service_type(one),
        [] => bail!(
            "Could not determine the type for the passed service '{service}': no server or \
             client of it was discovered. Pass the type, e.g. `roslite service echo {service} \
             std_srvs/srv/SetBool`, or start the server first"
        ),
        many => bail!(
            "Cannot echo service '{service}', as it has more than one type: [{}]; pass the one \
             to echo as the second argument",
            many.join(", ")
        ),
    }
}

pub fn run(args: &EchoArgs) -> anyhow::Result<()> {
    let service = crate::topic::resolve_topic(&args.service_name)?;
    let set = crate::interface::load_interfaces()?;
    let forced_type = args
        .service_type
        .as_deref()
        .map(crate::interface::parse_service_type)
        .transpose()?;
    let topic = format!("{service}{EVENT_TOPIC_SUFFIX}");
    let ctx = crate::topic::networked_context()?;
    let net = crate::topic::network(&ctx);
    let max_wait = graph::spin_time(args.spin_time, graph::DEFAULT_SPIN_TIME);
    let start = Instant::now();
    // Wait for the service (to learn its type) and an event publisher (for the warning
    // below), whichever the command line leaves to learn.
    let view = graph::wait_for_graph(&net, max_wait, |view| {
        let typed = forced_type.is_some()
            || view
                .endpoints
                .iter()
                .any(|e| !e.local && e.topic == service && e.service_type().is_some());
        typed && view.publishers_on(&topic).next().is_some()
    });
    let ty = match forced_type {
        Some(ty) => ty,
        None => discovered_type(&view, &service).with_context(|| {
            format!(
                "(waited {:.1} s for discovery)",
                start.elapsed().as_secs_f64()
            )
        })?,
    };
    crate::interface::require_service(&set, &ty)?;
    let event_ty = crate::interface::type_part(&ty, "_Event")?;
    let type_info = crate::topic::type_info(&set, &event_ty)?;
    if view.publishers_on(&topic).next().is_none() {
        println!(
            "No publishers on topic '{topic}'; is service introspection on the client or \
             server enabled?"
        );
    }

    let node = crate::topic::tool_node(&ctx, None)?;
    let (sender, events) = mpsc::channel::<SharedBuf>();
    // ros2 service echo subscribes with the services' default QoS.
    let _subscription = node
        .create_serialized_subscription(
            &topic,
            type_info,
            QosProfile::SERVICES_DEFAULT,
            move |bytes: &SharedBuf, _| {
                let _ = sender.send(bytes.clone());
            },
        )
        .with_context(|| format!("cannot subscribe to '{topic}'"))?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    let options = args.yaml.options();
    let deadline = crate::topic::Deadline::after(args.timeout);
    loop {
        deadline.spin_once(&executor, Duration::from_millis(200));
        while let Ok(payload) = events.try_recv() {
            match render(&set, &event_ty, payload.bytes(), &options) {
                // A closed stdout (`| head`) ends the command, quietly (see main).
                Ok(text) => print_now(&text)?,
                Err(e) => eprintln!("{e}"),
            }
        }
        if deadline.passed() {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::name_event_type;

    #[test]
    fn the_event_type_gets_its_name_in_block_and_flow_style() {
        assert_eq!(
            name_event_type("info:\n  event_type: 2\n  stamp:\n"),
            "info:\n  event_type: RESPONSE_SENT\n  stamp:\n"
        );
        assert_eq!(
            name_event_type("{info: {event_type: 0, stamp: {sec: 1}}}\n"),
            "{info: {event_type: REQUEST_SENT, stamp: {sec: 1}}}\n"
        );
        // An unknown kind is left as the number it is.
        assert_eq!(name_event_type("event_type: 7\n"), "event_type: 7\n");
    }
}
