//! `roslite topic echo`: ros2topic's `echo` verb over a serialized subscription and the
//! dynamic codec.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use roslite::graph::GraphEndpoint;
use roslite::{Durability, Executor, MessageLostStatus, QosProfile, Reliability};
use roslite_cdr::SharedBuf;
use roslite_msg_gen::ast::{BaseType, Collection, TypeName};
use roslite_msg_gen::dynamic::{self, YamlOptions};
use roslite_msg_gen::registry::InterfaceSet;

use super::graph::{self, GraphView};
use super::{print_now, pyrepr, QosArgs};

/// `ros2 topic echo`'s (and `ros2 service echo`'s) default `--truncate-length`.
const DEFAULT_TRUNCATE_LENGTH: usize = 128;

/// How messages are printed as YAML: the flags ros2's `topic echo` and `service echo` share.
#[derive(clap::Args)]
pub(crate) struct YamlArgs {
    /// Output all elements of arrays, bytes and strings longer than --truncate-length
    #[arg(short = 'f', long)]
    full_length: bool,
    /// The length to truncate arrays, bytes and strings to
    #[arg(short = 'l', long, default_value_t = DEFAULT_TRUNCATE_LENGTH)]
    truncate_length: usize,
    /// Don't print array fields of messages
    #[arg(long)]
    no_arr: bool,
    /// Don't print string fields of messages
    #[arg(long)]
    no_str: bool,
    /// Print collections in flow style
    #[arg(long)]
    flow_style: bool,
}

impl YamlArgs {
    pub(crate) fn options(&self) -> YamlOptions {
        YamlOptions {
            no_arr: self.no_arr,
            no_str: self.no_str,
            truncate_length: (!self.full_length).then_some(self.truncate_length),
            flow_style: self.flow_style,
        }
    }
}

#[derive(clap::Args)]
pub struct EchoArgs {
    /// Name of the ROS topic to listen to (e.g. '/chatter')
    topic_name: String,
    /// Type of the ROS message (e.g. 'std_msgs/msg/String'); by default, the type its
    /// publishers announce
    message_type: Option<String>,
    /// The same as the MESSAGE_TYPE argument
    #[arg(long = "type", value_name = "TYPE", conflicts_with = "message_type")]
    type_name: Option<String>,
    #[command(flatten)]
    qos: QosArgs,
    /// Echo a selected field of a message; use '.' to select sub-fields (e.g. 'pose.position')
    #[arg(long)]
    field: Option<String>,
    #[command(flatten)]
    yaml: YamlArgs,
    /// Print the first message received and then exit
    #[arg(long)]
    once: bool,
    /// Stop after this many seconds
    #[arg(long, value_name = "N", value_parser = super::positive_float)]
    timeout: Option<f64>,
    /// The name of the echoing node; by default, a hidden node name
    #[arg(short = 'n', long)]
    node_name: Option<String>,
    /// Longest wait in seconds for discovery of the topic's publishers (default: 2)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    spin_time: Option<f64>,
    /// Don't report when a message is lost (by default, each loss a publisher's path reports
    /// prints "A message was lost!!!" with the counts, before the next message)
    #[arg(long)]
    no_lost_messages: bool,
    /// Report when a message is lost: the default; accepted for older ros2 command lines
    #[arg(long, conflicts_with = "no_lost_messages")]
    lost_messages: bool,
}

/// What the subscription hands the printing loop, in arrival order: a loss is reported by the
/// path right before it delivers the message after it.
enum Echoed {
    Message(SharedBuf),
    Lost(MessageLostStatus),
}

/// ros2 topic echo's report of a loss (SAMPLE_LOST), ending in its `---` line.
fn lost_text(status: MessageLostStatus) -> String {
    format!(
        "A message was lost!!!\n\ttotal count change:{}\n\ttotal count: {}---\n",
        status.total_count_change, status.total_count
    )
}

/// How each message is turned into text.
struct Printer {
    set: InterfaceSet,
    ty: TypeName,
    field: Option<String>,
    options: YamlOptions,
}

impl Printer {
    /// One message's text, ending in the `---` line, as ros2 prints it.
    fn render(&self, payload: &[u8]) -> Result<String, String> {
        let value = dynamic::decode(&self.set, &self.ty, payload)
            .map_err(|e| format!("cannot decode a message as '{}': {e}", self.ty))?;
        let Some(path) = &self.field else {
            return Ok(format!(
                "{}---\n",
                dynamic::to_yaml(&self.set, &self.ty, &value, &self.options)
            ));
        };
        let sub = dynamic::field(&value, path)
            .ok_or_else(|| format!("Invalid field '{path}': the message has no such element"))?;
        let field_ty = dynamic::field_type(&self.set, &self.ty, path).map_err(|e| e.to_string())?;
        match (&field_ty.base, field_ty.collection) {
            (BaseType::Named(nested), Collection::Single) => Ok(format!(
                "{}---\n",
                dynamic::to_yaml(&self.set, nested, sub, &self.options)
            )),
            // ros2 prints a non-message field with `print(value, end='\n---\n')`.
            _ => Ok(format!(
                "{}\n---\n",
                pyrepr::field_str(&self.set, &field_ty, sub)
            )),
        }
    }
}

pub fn run(args: &EchoArgs) -> anyhow::Result<()> {
    let topic = super::resolve_topic(&args.topic_name)?;
    let set = crate::interface::load_interfaces()?;
    let forced_type = args.message_type.as_ref().or(args.type_name.as_ref());
    let forced_type = forced_type
        .map(|t| super::parse_message_type(t))
        .transpose()?;
    let field = match args.field.as_deref().map(str::trim) {
        Some("") => bail!("Invalid field value '': name a field, e.g. --field data"),
        other => other.map(|f| f.trim_matches('.').to_owned()),
    };

    let ctx = super::networked_context()?;
    let net = super::network(&ctx);
    // Discovery tells the type and the publishers' QoS; with both given there is nothing to
    // wait for.
    let max_wait = graph::spin_time(args.spin_time, graph::DEFAULT_SPIN_TIME);
    let start = Instant::now();
    let view = if forced_type.is_some() && args.qos.overrides_policies() {
        GraphView::default()
    } else {
        graph::wait_for_graph(&net, max_wait, |view| {
            view.publishers_on(&topic).next().is_some()
        })
    };
    let ty = match forced_type {
        Some(ty) => ty,
        None => discovered_type("echo", &view, &topic, start.elapsed().as_secs_f64())?,
    };
    let type_info = super::type_info(&set, &ty)?;
    warn_on_hash_mismatch(&view, &topic, type_info.type_hash);
    if let Some(path) = &field {
        dynamic::field_type(&set, &ty, path).map_err(|e| anyhow::anyhow!("Invalid field: {e}"))?;
    }
    let qos = choose_qos(&args.qos, view.publishers_on(&topic))?;

    let node = super::tool_node(&ctx, args.node_name.as_deref())?;
    let (sender, messages) = mpsc::channel::<Echoed>();
    let losses = sender.clone();
    let subscription = node
        .create_serialized_subscription(&topic, type_info, qos, move |bytes: &SharedBuf, _| {
            let _ = sender.send(Echoed::Message(bytes.clone()));
        })
        .with_context(|| format!("cannot subscribe to '{topic}'"))?;
    if !args.no_lost_messages {
        // Each callback is handed the change since the one before: what ros2 prints.
        subscription.on_message_lost(move |status| {
            let _ = losses.send(Echoed::Lost(status));
        });
    }
    let executor = Executor::new(&ctx);
    executor.add_node(&node);

    let printer = Printer {
        set,
        ty,
        field,
        options: args.yaml.options(),
    };
    let deadline = super::Deadline::after(args.timeout);
    loop {
        deadline.spin_once(&executor, Duration::from_millis(200));
        while let Ok(echoed) = messages.try_recv() {
            let payload = match echoed {
                Echoed::Message(payload) => payload,
                Echoed::Lost(status) => {
                    // A closed stdout (`| head`) ends the command, quietly (see main).
                    print_now(&lost_text(status))?;
                    continue;
                }
            };
            match printer.render(payload.bytes()) {
                Ok(text) => print_now(&text)?,
                // A message that does not decode is reported and does not count for --once.
                Err(e) => {
                    eprintln!("{e}");
                    continue;
                }
            }
            if args.once {
                return Ok(());
            }
        }
        if deadline.passed() {
            return Ok(());
        }
    }
}

/// The single type the topic carries, from discovery; `verb` names the command in errors.
pub(super) fn discovered_type(
    verb: &str,
    view: &GraphView,
    topic: &str,
    waited: f64,
) -> anyhow::Result<TypeName> {
    let types = view.topic_types(topic);
    // Only `echo` takes the type on its command line.
    let (pick, name_it) = if verb == "echo" {
        (
            "; pass the one to echo as the second argument".to_owned(),
            format!(
                "Pass the type, e.g. `roslite topic echo {topic} std_msgs/msg/String`, or \
                 start the publisher first"
            ),
        )
    } else {
        (String::new(), "Start the publisher first".to_owned())
    };
    match types.as_deref() {
        Some([one]) => super::parse_message_type(one),
        Some(many) if many.len() > 1 => bail!(
            "Cannot {verb} topic '{topic}', as it contains more than one type: [{}]{pick}",
            many.join(", ")
        ),
        _ => bail!(
            "Could not determine the type for the passed topic '{topic}': nothing publishes or \
             subscribes to it (waited {waited:.1} s for discovery). {name_it}"
        ),
    }
}

/// Publishers that announce another hash have another definition of the type than ours; their
/// messages may not decode.
fn warn_on_hash_mismatch(view: &GraphView, topic: &str, ours: &str) {
    for publisher in view.publishers_on(topic) {
        if let Some(theirs) = publisher.type_hash.as_deref() {
            if theirs != ours {
                eprintln!(
                    "warning: a publisher of '{topic}' announces type hash {theirs} for '{}', \
                     but the definition roslite loaded hashes to {ours}; its messages may not \
                     decode (put the matching definition on $AMENT_PREFIX_PATH)",
                    publisher.type_name
                );
                return;
            }
        }
    }
}

/// ros2topic echo's `choose_qos`: explicit policies win; otherwise the preset (sensor_data),
/// made reliable or transient-local when every publisher offers that, so it matches all
/// of them and still gets what they can give.
pub(super) fn choose_qos<'a>(
    args: &QosArgs,
    publishers: impl Iterator<Item = &'a GraphEndpoint>,
) -> anyhow::Result<QosProfile> {
    let mut qos = args.profile("sensor_data")?;
    if args.overrides_policies() {
        return Ok(qos);
    }
    let publishers: Vec<&GraphEndpoint> = publishers.collect();
    if publishers.is_empty() {
        return Ok(qos);
    }
    let reliable = publishers
        .iter()
        .filter(|p| p.qos.reliability == Reliability::Reliable)
        .count();
    qos.reliability = if reliable == publishers.len() {
        Reliability::Reliable
    } else {
        if reliable > 0 {
            println!(
                "Some, but not all, publishers are offering QoSReliabilityPolicy.RELIABLE. \
                 Falling back to QoSReliabilityPolicy.BEST_EFFORT as it will connect to all \
                 publishers"
            );
        }
        Reliability::BestEffort
    };
    let transient_local = publishers
        .iter()
        .filter(|p| p.qos.durability == Some(Durability::TransientLocal))
        .count();
    qos.durability = if transient_local == publishers.len() {
        Durability::TransientLocal
    } else {
        if transient_local > 0 {
            println!(
                "Some, but not all, publishers are offering \
                 QoSDurabilityPolicy.TRANSIENT_LOCAL. Falling back to \
                 QoSDurabilityPolicy.VOLATILE as it will connect to all publishers"
            );
        }
        Durability::Volatile
    };
    Ok(qos)
}
