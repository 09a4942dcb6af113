//! `roslite`: the command-line tool. Each user command is a module of its own; `roslite bench
//! ...` is `roslite_bench`'s, dispatched from here, including the helper processes the benches
//! start by running this binary again.

mod demo;
mod interface;
mod node;
mod param;
mod service;
mod topic;

use clap::{Parser, Subcommand};

/// roslite: a lightweight ROS 2 runtime.
#[derive(Parser)]
#[command(name = "roslite", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the demo: the line-following robot of the mROS 2 line-follower evaluation
    /// (simulated Raspberry Pi Mouse and follower as two roslite processes on 127.0.0.1),
    /// printing per-topic latency and per-process memory and writing a report; exits on its own.
    ///
    /// The two processes run `roslite-linetrace-node`, which the demo builds on first use with
    /// cargo (size profile, statically linked: what a small board would run), so the memory
    /// figures are the nodes' own. ROSLITE_LINETRACE_NODE=cli runs them as `roslite
    /// linetrace-node` instead; ROSLITE_LINETRACE_NODE=PATH names a prebuilt node binary.
    Demo(demo::DemoArgs),
    /// Measure roslite against the machine's own floors; prints a table (or JSON).
    #[command(subcommand)]
    Bench(roslite_bench::BenchCommand),
    /// Inspect the interface definitions roslite knows (built in, and under
    /// $AMENT_PREFIX_PATH/share/PACKAGE/{msg,srv,action}).
    #[command(subcommand)]
    Interface(interface::InterfaceCommand),
    /// Inspect and use the topics of the ROS graph (list, info, type, find, echo, hz, bw,
    /// pub), like `ros2 topic`.
    #[command(subcommand)]
    Topic(topic::TopicCommand),
    /// Inspect the nodes of the ROS graph, like `ros2 node`.
    #[command(subcommand)]
    Node(node::NodeCommand),
    /// Inspect and call the services of the ROS graph, like `ros2 service`.
    #[command(subcommand)]
    Service(service::ServiceCommand),
    /// Inspect and change the parameters of nodes, like `ros2 param`.
    #[command(subcommand)]
    Param(param::ParamCommand),
}

fn main() -> anyhow::Result<()> {
    // Bench helper processes whose memory is measured start before clap builds its parser.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The echo processes of `bench rtt`'s transport-only rows and floors are this binary too.
    roslite_bench::run_child_if_requested();
    if let Some(result) = roslite_bench::run_helper_before_clap(&args) {
        return result;
    }
    if let Some(result) = demo::node_before_clap(&args) {
        return result;
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Bench(command) => roslite_bench::run(command),
        Command::Interface(command) => interface::run(command),
        Command::Topic(command) => topic::run(command),
        Command::Node(command) => node::run(command),
        Command::Service(command) => service::run(command),
        Command::Param(command) => param::run(command),
    }
}
