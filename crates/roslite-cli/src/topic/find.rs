//! `roslite topic type` and `roslite topic find`: ros2topic's verbs that go from a topic to
//! its types and back.

use anyhow::bail;

use super::graph::{self, GraphView};

#[derive(clap::Args)]
pub struct TypeArgs {
    /// Name of the ROS topic to get type (e.g. '/chatter')
    topic_name: String,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    spin_time: Option<f64>,
}

#[derive(clap::Args)]
pub struct FindArgs {
    /// Name of the ROS message type to filter for (e.g. 'std_msgs/msg/String')
    topic_type: String,
    /// Only display the number of topics discovered
    #[arg(short = 'c', long = "count-topics")]
    count_topics: bool,
    /// Consider hidden topics as well
    #[arg(short = 'a', long = "include-hidden-topics")]
    include_hidden_topics: bool,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    spin_time: Option<f64>,
}

pub fn run_type(args: &TypeArgs) -> anyhow::Result<()> {
    let topic = super::resolve_topic(&args.topic_name)?;
    let view = super::discover(args.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        view.on_topic(&topic).next().is_some()
    })?;
    match view.topic_types(&topic) {
        Some(types) => {
            for ty in types {
                println!("{ty}");
            }
            Ok(())
        }
        None => bail!("Unknown topic '{topic}': nothing publishes or subscribes to it"),
    }
}

pub fn run_find(args: &FindArgs) -> anyhow::Result<()> {
    // The short form (`std_msgs/String`) names the same type.
    let wanted = super::parse_message_type(&args.topic_type)?.to_string();
    let view = super::discover(args.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        view.participants > 0
    })?;
    let topics = topics_of_type(&view, &wanted, args.include_hidden_topics);
    super::print_names(&topics, args.count_topics);
    Ok(())
}

/// Topics that carry `ty`, sorted.
fn topics_of_type(view: &GraphView, ty: &str, include_hidden: bool) -> Vec<String> {
    view.topic_names_and_types(include_hidden)
        .into_iter()
        .filter(|(_, types)| types.iter().any(|t| t == ty))
        .map(|(name, _)| name)
        .collect()
}
