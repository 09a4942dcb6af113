//! `roslite`: the command-line tool. Each user command is a module of its own; `roslite bench
//! ...` is `roslite_bench`'s, dispatched from here, including the helper processes the benches
//! start by running this binary again, and `roslite run` and `roslite wasm` (WebAssembly
//! nodes) are `roslite_wasm`'s.

mod action;
mod demo;
mod interface;
mod node;
mod param;
mod service;
mod topic;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The `roslite` tool. Its one-line description (`about`) is the package description in
/// Cargo.toml, which names every command below.
#[derive(Parser)]
#[command(name = "roslite", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the line-following robot demo: latency and memory tables, a report; exits by itself.
    ///
    /// The application of the mROS 2 line-follower evaluation (docs/experiments.md): a simulated
    /// Raspberry Pi Mouse and the upstream follower as two roslite processes on 127.0.0.1. The
    /// demo prints per-topic latency and per-process memory and writes a report.
    ///
    /// The two processes run `roslite-linetrace-node`, which the demo builds on first use with
    /// cargo (size profile, statically linked: what a small board would run), so the memory
    /// figures are the nodes' own. ROSLITE_LINETRACE_NODE=cli runs them as `roslite
    /// linetrace-node` instead; ROSLITE_LINETRACE_NODE=PATH names a prebuilt node binary.
    Demo(demo::DemoArgs),
    /// Measure roslite against this machine's floors and ROS 2 / Cyclone DDS; prints tables.
    ///
    /// Each subcommand repeats one measurement (latency, wake-up, round trip, memory, service,
    /// large data, the line follower) next to the machine's own floors and, where installed,
    /// rclpy and Cyclone DDS, and prints a table (or JSON with --json).
    #[command(subcommand)]
    Bench(roslite_bench::BenchCommand),
    /// Inspect message, service and action definitions, like `ros2 interface`, and generate C and
    /// C++ types for them.
    ///
    /// The definitions roslite knows: built in, and under
    /// $AMENT_PREFIX_PATH/share/PACKAGE/{msg,srv,action}.
    #[command(subcommand)]
    Interface(interface::InterfaceCommand),
    /// Inspect and use the topics of the ROS graph, like `ros2 topic`.
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
    /// Inspect the actions of the ROS graph and send goals, like `ros2 action`.
    #[command(subcommand)]
    Action(action::ActionCommand),
    /// Run ROS 2 nodes compiled to WebAssembly, sandboxed, several in one process.
    ///
    /// Each NODE is a .wasm (compiled when loaded on wasmtime; interpreted on wasmi) or a .cwasm
    /// from `roslite wasm compile`. The nodes share one participant and roslite's native
    /// network; each sees no files, sockets or environment unless granted, and a callback that
    /// runs past its deadline stops its node while the others keep running (docs/wasm.md).
    Run(roslite_wasm::cli::RunArgs),
    /// Prepare WebAssembly nodes: build C and C++ nodes, compile them ahead of time.
    #[command(subcommand)]
    Wasm(WasmCommand),
}

#[derive(Subcommand)]
enum WasmCommand {
    /// Compile NODE.wasm to machine code for wasmtime (NODE.cwasm), for this machine or another
    /// CPU architecture (--target).
    Compile(roslite_wasm::cli::CompileArgs),
    /// Build C or C++ sources (the C ABI, rclcpp or mROS 2 API) into a WebAssembly node.
    Build(roslite_wasm::cli::BuildArgs),
}

/// Runs the command; an error is printed as a user reads it (`Error: ` and its message, then
/// each cause the message does not already hold), never as a debug structure or a backtrace.
fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {}", user_message(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, outermost first, joined by `: `. Many of roslite's errors already
/// print their cause in their own message; a cause said already is not repeated.
fn user_message(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

fn run() -> anyhow::Result<()> {
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
        Command::Action(command) => action::run(command),
        Command::Run(args) => roslite_wasm::cli::run(&args).map_err(anyhow::Error::msg),
        Command::Wasm(WasmCommand::Compile(args)) => {
            roslite_wasm::cli::compile(&args).map_err(anyhow::Error::msg)
        }
        Command::Wasm(WasmCommand::Build(args)) => {
            roslite_wasm::cli::build(&args).map_err(anyhow::Error::msg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_messages_with_each_cause_once() {
        let file = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(file).context("cannot read p.yaml");
        assert_eq!(user_message(&error), "cannot read p.yaml: no such file");
        // A library error that prints its cause itself, and also returns it as its source.
        let parse =
            roslite_msg_gen::registry::LoadError::Parse(roslite_msg_gen::parse::ParseError {
                file: "A.msg".into(),
                line: 1,
                column: 0,
                message: "expected a field name".into(),
            });
        assert_eq!(
            user_message(&anyhow::Error::new(parse)),
            "A.msg:1: expected a field name"
        );
        // A node's parameter error, which `{:?}` printed as `Parameters(OverrideError {`.
        let node = roslite::NodeError::Parameters(roslite::params::OverrideError {
            source: "p.yaml".into(),
            line: Some(3),
            problem: roslite::params::OverrideProblem::InvalidName {
                name: "bad name!".into(),
                reason: "it contains whitespace or control characters",
            },
        });
        let message = user_message(&anyhow::Error::new(node));
        assert!(
            message.starts_with("p.yaml:3: invalid parameter name 'bad name!'"),
            "{message}"
        );
    }
}
