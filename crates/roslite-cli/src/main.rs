//! `roslite`: the command-line tool. Each user command is a module of its own; `roslite bench
//! ...` is `roslite_bench`'s, dispatched from here, including the helper processes the benches
//! start by running this binary again, and `roslite run`, `roslite wasm`, `roslite host` and
//! `roslite migrate` (WebAssembly nodes) are `roslite_wasm`'s.

mod action;
mod demo;
mod interface;
mod lifecycle;
mod node;
mod node_services;
mod param;
mod service;
mod topic;
mod type_descriptions;

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
    /// cargo (size profile, statically linked against musl where installed, else glibc: what a
    /// small board would run), so the memory figures are the nodes' own. ROSLITE_LINETRACE_NODE=cli runs them as `roslite
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
    /// Inspect and manage the lifecycle of managed nodes, like `ros2 lifecycle`.
    #[command(subcommand)]
    Lifecycle(lifecycle::LifecycleCommand),
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
    /// Run a host of WebAssembly nodes that can move to and from other hosts while they run.
    ///
    /// The host is the ROS node /roslite_host/NAME; `roslite migrate` moves its nodes, and it
    /// accepts nodes from the hosts of --accept-from (docs/migration.md).
    Host(roslite_wasm::cli::HostArgs),
    /// Move a running WebAssembly node to another host, with its state, losing no message.
    Migrate(roslite_wasm::cli::MigrateArgs),
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
/// each cause the message does not already hold), never as a debug structure or a backtrace
/// (`RUST_BACKTRACE` is for bugs: panics).
///
/// A reader that goes away (`roslite interface proto ... | head -1`) ends the command quietly
/// with status 1, as the ros2 CLI ends (Python's `BrokenPipeError`), without its traceback.
fn main() -> ExitCode {
    end_quietly_when_stdout_closes();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("Error: {}", user_message(&error));
            ExitCode::FAILURE
        }
    }
}

/// The exit status when stdout's reader went away: the ros2 CLI's (an uncaught
/// `BrokenPipeError` in Python).
const READER_GONE_STATUS: i32 = 1;

/// Rust ignores SIGPIPE, so a write to a pipe whose reader has gone fails with EPIPE, and
/// `println!` turns that failure into a panic ("failed printing to stdout: Broken pipe"), on
/// whichever thread printed (`topic echo` prints from network threads too). Every command
/// prints with `println!`, so the panic hook is the one place that sees them all: that panic
/// exits the process at once with no message; every other panic is a bug and keeps the
/// default report (with a backtrace under `RUST_BACKTRACE=1`).
///
/// SIGPIPE stays ignored rather than restored to its default (which would end the process
/// the way `cat` ends) because the same-host links write to Unix sockets, where a peer that
/// went away must be an error to handle, not the end of the process.
fn end_quietly_when_stdout_closes() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_stdout_broken_pipe_panic(message) {
            std::process::exit(READER_GONE_STATUS);
        }
        default_hook(info);
    }));
}

/// Whether a panic message is std's report of a `print!` to a stdout whose reader is gone
/// (`std::io::stdio::print_to`: "failed printing to stdout: " and the OS error, EPIPE, which
/// is 32 on Linux: "Broken pipe (os error 32)").
fn is_stdout_broken_pipe_panic(message: &str) -> bool {
    message
        .strip_prefix("failed printing to stdout: ")
        .is_some_and(|cause| cause.ends_with("(os error 32)"))
}

/// Whether a command failed because its output's reader went away (a command that writes
/// stdout itself and returns the error).
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
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
        Command::Lifecycle(command) => lifecycle::run(command),
        Command::Action(command) => action::run(command),
        Command::Run(args) => roslite_wasm::cli::run(&args).map_err(anyhow::Error::msg),
        Command::Host(args) => roslite_wasm::cli::host(&args).map_err(anyhow::Error::msg),
        Command::Migrate(args) => roslite_wasm::cli::migrate(&args).map_err(anyhow::Error::msg),
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
    fn only_a_print_to_a_closed_stdout_ends_quietly() {
        // The text std panics with, from a real EPIPE.
        let epipe = std::io::Error::from_raw_os_error(32);
        assert_eq!(epipe.kind(), std::io::ErrorKind::BrokenPipe);
        assert!(is_stdout_broken_pipe_panic(&format!(
            "failed printing to stdout: {epipe}"
        )));
        assert!(!is_stdout_broken_pipe_panic(&format!(
            "failed printing to stderr: {epipe}"
        )));
        assert!(!is_stdout_broken_pipe_panic("index out of bounds"));
        let error = anyhow::Error::new(epipe).context("cannot print");
        assert!(is_broken_pipe(&error));
        assert!(!is_broken_pipe(&anyhow::anyhow!("Broken pipe")));
    }

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
