//! `roslite topic list`: ros2topic's `list` verb.

use super::graph::{self, GraphView};
use roslite::graph::GraphEndpointKind;

#[derive(clap::Args)]
pub struct ListArgs {
    /// Additionally show the topic type
    #[arg(short = 't', long)]
    show_types: bool,
    /// Only display the number of topics discovered
    #[arg(short = 'c', long = "count-topics", visible_alias = "count")]
    count_topics: bool,
    /// Consider hidden topics as well
    #[arg(short = 'a', long = "include-hidden-topics", visible_alias = "all")]
    include_hidden_topics: bool,
    /// List full details about each topic
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Longest wait in seconds for discovery (default: 2)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    spin_time: Option<f64>,
}

pub fn run(args: &ListArgs) -> anyhow::Result<()> {
    let view = super::discover(args.spin_time, graph::DEFAULT_SPIN_TIME, |view| {
        view.participants > 0
    })?;
    print!("{}", render(&view, args));
    Ok(())
}

fn render(view: &GraphView, args: &ListArgs) -> String {
    let topics = view.topic_names_and_types(args.include_hidden_topics);
    if args.count_topics {
        return format!("{}\n", topics.len());
    }
    let mut out = String::new();
    if args.verbose {
        for (title, kind, noun) in [
            ("Published", GraphEndpointKind::Publisher, "publisher"),
            ("Subscribed", GraphEndpointKind::Subscription, "subscriber"),
        ] {
            out.push_str(&format!("{title} topics:\n"));
            for (name, types) in &topics {
                let count = view.on_topic(name).filter(|e| e.kind == kind).count();
                if count > 0 {
                    let plural = if count > 1 { "s" } else { "" };
                    out.push_str(&format!(
                        " * {name} [{}] {count} {noun}{plural}\n",
                        types.join(", ")
                    ));
                }
            }
            out.push('\n');
        }
        return out;
    }
    for (name, types) in &topics {
        if args.show_types {
            out.push_str(&format!("{name} [{}]\n", types.join(", ")));
        } else {
            out.push_str(&format!("{name}\n"));
        }
    }
    out
}
