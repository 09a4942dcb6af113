//! Action round trips between two processes on this host: per goal, the *goal-accept round
//! trip* (send_goal to the acceptance, on the client's clock) and the *feedback latency* (the
//! server's publish to the client's feedback callback, both on `CLOCK_MONOTONIC`: the server
//! puts its time into the feedback's `sequence` as two `int32`s).
//!
//! Two configurations, one after the other, in ROS domains of their own:
//! - `roslite`: this binary twice, as the hidden `roslite bench action-peer --role server` and
//!   `--role client` (LOCALHOST discovery; their services and topics take the same-host links).
//!   The server answers on its executor and publishes the feedback and the result from
//!   `on_accepted`; the client waits on each future in turn, its feedback callback on an
//!   executor thread.
//! - `rclpy (ROS 2)`: interop/python/bench_action.py on rmw_fastrtps_cpp with the
//!   loopback-only profile, the same exchange with rclpy's `ActionServer` and `ActionClient`.
//!
//! Goals one after the other, `test_msgs/action/Fibonacci`, after 10 warm-up goals. The goal
//! line: each roslite median at most a quarter of rclpy's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::test_msgs::action::{
    Fibonacci, Fibonacci_Feedback, Fibonacci_Goal, Fibonacci_Result,
};
use roslite::{CancelResponse, Clock, GoalResponse};
use roslite_executor::SteadyClock;

use crate::toolkit::context::{localhost_context, spin_on_thread};
use crate::toolkit::json;
use crate::toolkit::process::{die_with_parent, self_command, Helper};
use crate::toolkit::rclpy::{find_python, FASTDDS_LOOPBACK_PROFILE};
use crate::toolkit::stats::Summary;

const ACTION: &str = "bench_action";
const WARM_UP: usize = 10;
/// Any one step of a goal; far beyond anything that works.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(clap::Args)]
pub struct ActionArgs {
    /// Goals per configuration, one after the other.
    #[arg(long, default_value_t = 200)]
    goals: usize,
    /// ROS domain of the roslite pair; rclpy uses the next one.
    #[arg(long, default_value_t = 226)]
    domain: u32,
    /// Python interpreter with rclpy and test_msgs for the ROS 2 baseline (default:
    /// $ROSLITE_PYTHON, else ./.venv/bin/python as created by `cargo xtask test`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the rclpy baseline.
    #[arg(long)]
    no_rclpy: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerRole {
    Server,
    Client,
}

/// The hidden `roslite bench action-peer`: one side of the roslite configuration.
#[derive(clap::Args)]
pub struct PeerArgs {
    #[arg(long, value_enum)]
    role: PeerRole,
    #[arg(long)]
    domain: u32,
    /// Client only.
    #[arg(long, default_value_t = 0)]
    goals: usize,
}

fn monotonic_ns() -> u64 {
    SteadyClock.now().as_nanos()
}

/// `ns` as the two `int32`s of a feedback sequence.
fn stamp(ns: u64) -> Vec<i32> {
    vec![(ns >> 32) as i32, ns as u32 as i32]
}

fn unstamp(sequence: &[i32]) -> Option<u64> {
    match sequence {
        [hi, lo] => Some((u64::from(*hi as u32) << 32) | u64::from(*lo as u32)),
        _ => None,
    }
}

pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    let ctx = localhost_context(args.domain)?;
    match args.role {
        PeerRole::Server => {
            let node = ctx.create_node("bench_action_server")?;
            let _server = node.create_action_server::<Fibonacci>(
                ACTION,
                |_, _| GoalResponse::AcceptAndExecute,
                |_| CancelResponse::Reject,
                |goal| {
                    let _ = goal.publish_feedback(Fibonacci_Feedback {
                        sequence: stamp(monotonic_ns()).into(),
                    });
                    let _ = goal.succeed(Fibonacci_Result::default());
                },
            )?;
            println!("READY");
            let executor = roslite::Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
            Ok(())
        }
        PeerRole::Client => {
            let node = ctx.create_node("bench_action_client")?;
            let client = node.create_action_client::<Fibonacci>(ACTION)?;
            let _spinner = spin_on_thread(&ctx, node.clone());
            if !client.wait_for_action_server(Duration::from_secs(30)) {
                bail!("the roslite action server did not appear");
            }
            for i in 0..WARM_UP + args.goals {
                let (tx, rx) = mpsc::channel();
                let start = monotonic_ns();
                let goal = client
                    .send_goal_with_feedback(Fibonacci_Goal { order: 1 }, move |_, feedback| {
                        let arrived = monotonic_ns();
                        if let Some(sent) = unstamp(&feedback.sequence) {
                            let _ = tx.send(arrived.saturating_sub(sent));
                        }
                    })?
                    .wait(STEP_TIMEOUT)?;
                let accepted = monotonic_ns();
                let feedback = rx
                    .recv_timeout(STEP_TIMEOUT)
                    .context("no feedback for a goal")?;
                goal.result().wait(STEP_TIMEOUT)?;
                if i >= WARM_UP {
                    println!("SAMPLE {} {feedback}", accepted - start);
                }
            }
            println!("DONE");
            ctx.shutdown();
            Ok(())
        }
    }
}

/// The samples of one configuration.
struct Run {
    name: &'static str,
    accept: Vec<Duration>,
    feedback: Vec<Duration>,
}

/// Reads a client's `SAMPLE` lines until `DONE`; the server must say `READY` first.
fn drive(name: &'static str, mut server: Command, mut client: Command) -> anyhow::Result<Run> {
    use std::io::BufRead;
    let mut server = Helper::spawn(name, server.stdout(Stdio::piped()).stderr(Stdio::null()))?;
    let stdout = server
        .child
        .stdout
        .take()
        .context("internal bug: stdout not piped")?;
    let mut lines = std::io::BufReader::new(stdout).lines();
    if !lines.any(|l| l.is_ok_and(|l| l.trim() == "READY")) {
        bail!("the {name} action server did not start");
    }
    std::thread::spawn(move || lines.for_each(drop));
    let mut client = Helper::spawn(name, client.stdout(Stdio::piped()))?;
    let stdout = client
        .child
        .stdout
        .take()
        .context("internal bug: stdout not piped")?;
    let mut run = Run {
        name,
        accept: Vec::new(),
        feedback: Vec::new(),
    };
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line?;
        if line.trim() == "DONE" {
            return Ok(run);
        }
        let mut fields = line.split_whitespace();
        if fields.next() != Some("SAMPLE") {
            continue;
        }
        let mut next = || -> anyhow::Result<Duration> {
            let ns: u64 = fields.next().context("short SAMPLE line")?.parse()?;
            Ok(Duration::from_nanos(ns))
        };
        run.accept.push(next()?);
        run.feedback.push(next()?);
    }
    bail!("the {name} action client ended before DONE")
}

fn rclpy_commands(python: &Path, dir: &Path, domain: u32, goals: usize) -> (Command, Command) {
    let mut server = Command::new(python);
    server.arg(dir.join("bench_action.py")).arg("server");
    let mut client = Command::new(python);
    client
        .arg(dir.join("bench_action.py"))
        .arg("client")
        .arg(goals.to_string());
    for command in [&mut server, &mut client] {
        command
            .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
            .env(
                "FASTDDS_DEFAULT_PROFILES_FILE",
                dir.join("fastdds-loopback.xml"),
            )
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env("PYTHONUNBUFFERED", "1");
    }
    (server, client)
}

pub fn run(args: &ActionArgs) -> anyhow::Result<()> {
    let goals = args.goals.to_string();
    let domain = args.domain.to_string();
    let server = self_command(&[
        "bench",
        "action-peer",
        "--role",
        "server",
        "--domain",
        &domain,
    ])?;
    let client = self_command(&[
        "bench",
        "action-peer",
        "--role",
        "client",
        "--domain",
        &domain,
        "--goals",
        &goals,
    ])?;
    let mut runs = vec![drive("roslite", server, client)?];
    if !args.no_rclpy {
        let python = find_python(args.python.as_deref())?;
        let dir = std::env::temp_dir().join(format!("roslite-bench-action-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("bench_action.py"),
            include_str!("../../../../interop/python/bench_action.py"),
        )?;
        std::fs::write(dir.join("fastdds-loopback.xml"), FASTDDS_LOOPBACK_PROFILE)?;
        let (server, client) = rclpy_commands(&python, &dir, args.domain + 1, args.goals);
        let rclpy = drive("rclpy (ROS 2)", server, client);
        let _ = std::fs::remove_dir_all(&dir);
        runs.push(rclpy.context("the rclpy baseline (needs rclpy and test_msgs in the venv)")?);
    }
    report(&runs, args.json);
    Ok(())
}

/// The accept and feedback summaries of one run.
type Summaries = (Option<Summary>, Option<Summary>);

fn report(runs: &[Run], as_json: bool) {
    let medians: Vec<Summaries> = runs
        .iter()
        .map(|r| (Summary::of(&r.accept), Summary::of(&r.feedback)))
        .collect();
    // roslite's median over rclpy's.
    let ratio = |pick: fn(&Summaries) -> Option<f64>| {
        let roslite = pick(medians.first()?)?;
        let rclpy = pick(medians.get(1)?)?;
        Some(roslite / rclpy)
    };
    let accept_ratio = ratio(|m| m.0.map(|s| s.p50_us));
    let feedback_ratio = ratio(|m| m.1.map(|s| s.p50_us));
    if as_json {
        #[derive(serde::Serialize)]
        struct Row {
            name: &'static str,
            goals: usize,
            #[serde(serialize_with = "json::fixed3_opt")]
            accept_p50_us: Option<f64>,
            #[serde(serialize_with = "json::fixed3_opt")]
            accept_p99_us: Option<f64>,
            #[serde(serialize_with = "json::fixed3_opt")]
            feedback_p50_us: Option<f64>,
            #[serde(serialize_with = "json::fixed3_opt")]
            feedback_p99_us: Option<f64>,
        }
        #[derive(serde::Serialize)]
        struct Output {
            bench: &'static str,
            runs: Vec<Row>,
            #[serde(serialize_with = "json::fixed4_opt")]
            accept_ratio: Option<f64>,
            #[serde(serialize_with = "json::fixed4_opt")]
            feedback_ratio: Option<f64>,
        }
        let runs = runs
            .iter()
            .zip(&medians)
            .map(|(run, (accept, feedback))| Row {
                name: run.name,
                goals: run.accept.len(),
                accept_p50_us: accept.map(|s| s.p50_us),
                accept_p99_us: accept.map(|s| s.p99_us),
                feedback_p50_us: feedback.map(|s| s.p50_us),
                feedback_p99_us: feedback.map(|s| s.p99_us),
            })
            .collect();
        json::print(&Output {
            bench: "action",
            runs,
            accept_ratio,
            feedback_ratio,
        });
        return;
    }
    println!("Action goals between two processes on this host (test_msgs/action/Fibonacci)");
    println!(
        "{:<16} {:>6} {:>14} {:>14} {:>16} {:>16}",
        "", "goals", "accept p50 us", "accept p99 us", "feedback p50 us", "feedback p99 us"
    );
    let cell = |s: Option<Summary>, pick: fn(Summary) -> f64| {
        s.map_or_else(|| "-".to_owned(), |s| format!("{:.1}", pick(s)))
    };
    for (run, (accept, feedback)) in runs.iter().zip(&medians) {
        println!(
            "{:<16} {:>6} {:>14} {:>14} {:>16} {:>16}",
            run.name,
            run.accept.len(),
            cell(*accept, |s| s.p50_us),
            cell(*accept, |s| s.p99_us),
            cell(*feedback, |s| s.p50_us),
            cell(*feedback, |s| s.p99_us),
        );
    }
    let verdict = |r: Option<f64>| match r {
        Some(r) if r <= 0.25 => format!("{r:.3} of rclpy's: met"),
        Some(r) => format!("{r:.3} of rclpy's: NOT met"),
        None => "no rclpy baseline".to_owned(),
    };
    println!("goal (each median at most a quarter of rclpy's):");
    println!("  goal-accept round trip  {}", verdict(accept_ratio));
    println!("  feedback latency        {}", verdict(feedback_ratio));
}
