//! `roslite topic list|info|type|find|echo|hz|bw|pub`, shaped like `ros2 topic` (ros2cli's
//! `ros2topic`).
//!
//! The tool is a participant of its own: it joins the domain from the environment
//! (`ROS_DOMAIN_ID`, `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_STATIC_PEERS`), waits for discovery
//! to settle ([`graph`]), and answers from what it learned. `echo` and `pub` handle any type
//! with a known definition through the dynamic codec (`roslite_msg_gen::dynamic`).

pub(crate) mod echo;
mod find;
pub(crate) mod graph;
mod info;
mod list;
mod publish;
pub(crate) mod pyrepr;
mod rate;

use anyhow::{bail, Context as _};
use roslite::{Context, Durability, History, QosProfile, Reliability};
use roslite_msg_gen::ast::TypeName;
use roslite_msg_gen::registry::InterfaceSet;

#[derive(clap::Subcommand)]
pub enum TopicCommand {
    /// Output a list of available topics.
    List(list::ListArgs),
    /// Print information about a topic.
    Info(info::InfoArgs),
    /// Print a topic's type.
    Type(find::TypeArgs),
    /// Output a list of available topics of a given type.
    Find(find::FindArgs),
    /// Output messages from a topic.
    Echo(echo::EchoArgs),
    /// Print the average receiving rate of a topic (once a second, until interrupted).
    Hz(rate::HzArgs),
    /// Print the bandwidth a topic uses (once a second, until interrupted).
    Bw(rate::BwArgs),
    /// Publish a message to a topic.
    Pub(publish::PubArgs),
}

pub fn run(command: TopicCommand) -> anyhow::Result<()> {
    match command {
        TopicCommand::List(args) => list::run(&args),
        TopicCommand::Info(args) => info::run(&args),
        TopicCommand::Type(args) => find::run_type(&args),
        TopicCommand::Find(args) => find::run_find(&args),
        TopicCommand::Echo(args) => echo::run(&args),
        TopicCommand::Hz(args) => rate::run_hz(&args),
        TopicCommand::Bw(args) => rate::run_bw(&args),
        TopicCommand::Pub(args) => publish::run(&args),
    }
}

/// A context on the ROS network described by the environment.
///
/// # Errors
/// When networking is switched off or cannot start; the message says which and what to do.
pub(crate) fn networked_context() -> anyhow::Result<Context> {
    let off =
        std::env::var("ROSLITE_NETWORK").is_ok_and(|v| matches!(v.trim(), "off" | "0" | "false"));
    if off {
        bail!(
            "ROSLITE_NETWORK is off, so there is no ROS network to talk to; unset it to use \
             `roslite topic` and `roslite node`"
        );
    }
    let ctx = Context::from_env().context("cannot join the ROS network")?;
    if !ctx.has_network() {
        bail!("the context started without a network; unset ROSLITE_NETWORK");
    }
    Ok(ctx)
}

/// What a fresh participant learns of the graph once `enough` holds and discovery has been
/// quiet for a moment, or at `--spin-time` (default `default_spin` seconds) at the latest.
///
/// # Errors
/// As [`networked_context`].
pub(crate) fn discover(
    spin_time: Option<f64>,
    default_spin: f64,
    enough: impl Fn(&graph::GraphView) -> bool,
) -> anyhow::Result<graph::GraphView> {
    let ctx = networked_context()?;
    Ok(graph::wait_for_graph(
        &network(&ctx),
        graph::spin_time(spin_time, default_spin),
        enough,
    ))
}

/// The graph of a context from [`networked_context`]: the network's.
pub(crate) fn network(ctx: &Context) -> roslite::context::Graph {
    ctx.graph()
}

/// The name of the tool's own node when `--node-name` is not given: hidden (leading `_`), like
/// ros2cli's `_ros2cli_<pid>`, so `node list` leaves it out.
pub(crate) fn default_node_name() -> String {
    format!("_roslite_cli_{}", std::process::id())
}

/// The tool's node in `ctx`: `--node-name` if given, else a hidden name.
///
/// # Errors
/// An invalid name, or one this context already uses.
pub(crate) fn tool_node(ctx: &Context, name: Option<&str>) -> anyhow::Result<roslite::Node> {
    let name = name.map_or_else(default_node_name, str::to_owned);
    ctx.create_node(&name)
        .with_context(|| format!("cannot create node '{name}'"))
}

/// A topic name as the user wrote it, fully qualified (`chatter` → `/chatter`).
pub(crate) fn resolve_topic(topic: &str) -> anyhow::Result<String> {
    roslite::names::expand_topic_name(topic, "roslite_cli", "/").map_err(|e| anyhow::anyhow!("{e}"))
}

/// A message type name from the command line: `std_msgs/msg/String`, or the short
/// `std_msgs/String` ros2 also accepts.
pub(crate) fn parse_message_type(text: &str) -> anyhow::Result<TypeName> {
    match TypeName::parse(text) {
        Some(name) if name.kind == roslite_msg_gen::ast::InterfaceKind::Msg => Ok(name),
        _ => bail!(
            "'{text}' is not a message type name; write it as <package>/msg/<Name>, e.g. \
             std_msgs/msg/String"
        ),
    }
}

/// The `TypeInfo` endpoints announce for `ty`, with the hash of the definition in `set`, its
/// description (which the tool's node serves on `~/get_type_description`) and, for a keyed IDL
/// type, its key (its endpoints are then keyed, as rclpy's are).
pub(crate) fn type_info(set: &InterfaceSet, ty: &TypeName) -> anyhow::Result<roslite::TypeInfo> {
    crate::interface::require_usable(set, ty)?;
    if set.message(ty).is_none() {
        bail!(
            "unknown message type '{ty}': roslite has no definition of it; put its package's \
             share directory on $AMENT_PREFIX_PATH (`roslite interface list` shows the known \
             types)"
        );
    }
    let hash = roslite_msg_gen::hash::type_hash(set, ty)
        .map_err(|e| anyhow::anyhow!("cannot hash '{ty}': {e}"))?;
    let info = roslite::TypeInfo::new(&ty.to_string(), &hash)
        .with_context(|| format!("'{ty}' is not a <package>/<kind>/<Name> type name"))?;
    let description = crate::type_descriptions::leaked(set, ty)?;
    Ok(info
        .with_key(roslite_msg_gen::key::key_layout(set, ty))
        .with_description(Some(description)))
}

/// `--qos-*` options shared by `echo`, `hz`, `bw` and `pub`, as ros2topic's
/// `add_qos_arguments`.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct QosArgs {
    /// Quality of service preset profile (default: sensor_data for echo, hz and bw, default
    /// for pub): default, sensor_data, services_default, parameters, parameter_events,
    /// system_default, rosout
    #[arg(long, value_name = "PROFILE")]
    qos_profile: Option<String>,
    /// Queue size (overrides the depth of --qos-profile)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    qos_depth: Option<u32>,
    /// History of samples (overrides the history of --qos-profile)
    #[arg(long, value_enum, value_name = "HISTORY")]
    qos_history: Option<HistoryArg>,
    /// Reliability (overrides the reliability of --qos-profile)
    #[arg(long, value_enum, value_name = "RELIABILITY")]
    qos_reliability: Option<ReliabilityArg>,
    /// Durability (overrides the durability of --qos-profile)
    #[arg(long, value_enum, value_name = "DURABILITY")]
    qos_durability: Option<DurabilityArg>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[value(rename_all = "snake_case")]
pub(crate) enum HistoryArg {
    KeepAll,
    KeepLast,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[value(rename_all = "snake_case")]
pub(crate) enum ReliabilityArg {
    BestEffort,
    Reliable,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[value(rename_all = "snake_case")]
pub(crate) enum DurabilityArg {
    TransientLocal,
    Volatile,
}

impl QosArgs {
    /// Whether any single policy was overridden (then `echo` does not adapt to publishers).
    pub(crate) fn overrides_policies(&self) -> bool {
        self.qos_depth.is_some()
            || self.qos_history.is_some()
            || self.qos_reliability.is_some()
            || self.qos_durability.is_some()
    }

    /// The preset named by `--qos-profile` (or `default_profile`), with the overrides applied.
    pub(crate) fn profile(&self, default_profile: &str) -> anyhow::Result<QosProfile> {
        let name = self.qos_profile.as_deref().unwrap_or(default_profile);
        let preset = if name == "rosout_default" {
            "rosout"
        } else {
            name
        };
        let Some(mut qos) = QosProfile::by_name(preset) else {
            bail!(
                "unknown QoS profile '{name}'; use one of: {}",
                QosProfile::PROFILE_NAMES.join(", ")
            );
        };
        let depth = match (self.qos_depth, qos.history) {
            (Some(depth), _) => depth as usize,
            (None, History::KeepLast(depth)) => depth,
            // rmw_qos_profile_default's depth, for a KEEP_ALL preset switched to KEEP_LAST.
            (None, History::KeepAll) => 10,
        };
        qos.history = match (self.qos_history, qos.history) {
            (Some(HistoryArg::KeepAll), _) | (None, History::KeepAll) => History::KeepAll,
            (Some(HistoryArg::KeepLast) | None, History::KeepLast(_)) => History::KeepLast(depth),
            (Some(HistoryArg::KeepLast), History::KeepAll) => History::KeepLast(depth),
        };
        if let Some(reliability) = self.qos_reliability {
            qos.reliability = match reliability {
                ReliabilityArg::BestEffort => Reliability::BestEffort,
                ReliabilityArg::Reliable => Reliability::Reliable,
            };
        }
        if let Some(durability) = self.qos_durability {
            qos.durability = match durability {
                DurabilityArg::TransientLocal => Durability::TransientLocal,
                DurabilityArg::Volatile => Durability::Volatile,
            };
        }
        qos.validate()
            .map_err(|e| anyhow::anyhow!("invalid QoS options: {e}"))?;
        Ok(qos)
    }
}

/// When a command given `--timeout` stops spinning (never without one).
pub(crate) struct Deadline(Option<std::time::Instant>);

impl Deadline {
    pub(crate) fn after(timeout_s: Option<f64>) -> Self {
        Self(timeout_s.map(|t| std::time::Instant::now() + std::time::Duration::from_secs_f64(t)))
    }

    /// Spins `executor` once, waiting at most `step` and not past the deadline.
    pub(crate) fn spin_once(&self, executor: &roslite::Executor, step: std::time::Duration) {
        let wait = self.0.map_or(step, |d| {
            d.saturating_duration_since(std::time::Instant::now())
                .min(step)
        });
        executor.spin_once(Some(wait));
    }

    pub(crate) fn passed(&self) -> bool {
        self.0.is_some_and(|d| std::time::Instant::now() >= d)
    }
}

/// Writes `text` to stdout at once (a pipe sees each line as it comes); an error when stdout
/// is closed (`| head`).
pub(crate) fn print_now(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Prints `names` one a line, or with `count_only` only how many there are (the `-c` of
/// `node list`, `topic find` and `service find`).
pub(crate) fn print_names(names: &[String], count_only: bool) {
    if count_only {
        println!("{}", names.len());
    } else {
        for name in names {
            println!("{name}");
        }
    }
}

/// Parses a positive number of seconds or hertz for clap.
pub(crate) fn positive_float(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a positive number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_overrides_apply_to_the_preset() {
        let args = QosArgs {
            qos_depth: Some(3),
            qos_reliability: Some(ReliabilityArg::Reliable),
            ..Default::default()
        };
        let qos = args.profile("sensor_data").unwrap();
        assert_eq!(qos.history, History::KeepLast(3));
        assert_eq!(qos.reliability, Reliability::Reliable);
        let args = QosArgs {
            qos_profile: Some("fast".into()),
            ..Default::default()
        };
        let e = args.profile("default").unwrap_err().to_string();
        assert!(
            e.contains("unknown QoS profile 'fast'") && e.contains("sensor_data"),
            "{e}"
        );
        let keep_all = QosArgs {
            qos_history: Some(HistoryArg::KeepAll),
            ..Default::default()
        };
        assert_eq!(
            keep_all.profile("default").unwrap().history,
            History::KeepAll
        );
    }

    #[test]
    fn names_resolve_like_ros2() {
        assert_eq!(resolve_topic("chatter").unwrap(), "/chatter");
        assert_eq!(resolve_topic("/a/b").unwrap(), "/a/b");
        assert!(resolve_topic("9lives").is_err());
        assert_eq!(
            parse_message_type("std_msgs/String").unwrap().to_string(),
            "std_msgs/msg/String"
        );
        assert!(parse_message_type("std_srvs/srv/SetBool").is_err());
    }
}
