//! `roslite bench linetrace`: seed 000's application in four configurations in one run:
//! roslite <-> roslite (two processes, RTPS on 127.0.0.1), roslite follower <-> rclpy robot
//! (the seed's mixed setup), rclpy <-> rclpy (the ROS 2 baseline, Fast DDS on 127.0.0.1
//! without shared memory), and both roslite nodes in one process (intra-process delivery).

use std::path::PathBuf;
use std::time::Duration;

use roslite_linetrace::launch::{self, LaunchOptions, RunResult, Setup};
use roslite_linetrace::node_program::NodeProgram;
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::report;

use crate::small_build;
use crate::stats::Summary;

/// The goals: roslite processes at most 2.5 MB RSS; roslite's /light_sensors mean at
/// most a quarter of rclpy's.
const MEMORY_GOAL_MB: f64 = 2.5;
const LATENCY_GOAL_RATIO: f64 = 0.25;

#[derive(clap::Args)]
pub struct LinetraceArgs {
    /// 200 samples per topic instead of 1000.
    #[arg(long)]
    quick: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Python with rclpy (default: $ROSLITE_PYTHON or ./.venv/bin/python).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Time scale (see `roslite demo --help`).
    #[arg(long, default_value_t = 4.0)]
    speed: f64,
    /// Also write a report (Markdown + SVG) into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What the roslite processes run: the lean `roslite-linetrace-node` built by
/// [`small_build`] (`ROSLITE_LINETRACE_NODE=<path>` names a prebuilt one,
/// `ROSLITE_LINETRACE_NODE=cli` forces the fallback), else this binary's own `linetrace-node`
/// role, with a warning on stderr saying why and what it means for the memory figures.
pub(crate) fn node_program() -> anyhow::Result<NodeProgram> {
    let cli = std::env::current_exe()?;
    match std::env::var_os("ROSLITE_LINETRACE_NODE") {
        Some(v) if v == "cli" => return Ok(NodeProgram::Cli(cli)),
        Some(v) if !v.is_empty() => return Ok(NodeProgram::Standalone(PathBuf::from(v))),
        _ => {}
    }
    match small_build::build(NODE) {
        Ok(exe) => Ok(NodeProgram::Standalone(exe)),
        Err(why) => {
            eprintln!(
                "warning: the lean node binary could not be built ({why}); the roslite processes \
                 run as `{} linetrace-node`, so their memory includes the whole CLI",
                cli.display()
            );
            Ok(NodeProgram::Cli(cli))
        }
    }
}

/// The line follower's node executable.
pub(crate) const NODE: small_build::Program<'static> = small_build::Program::Bin {
    package: "roslite-linetrace",
    name: roslite_linetrace::node_program::NODE_BINARY,
};

fn mean_of(us: &[f64]) -> Option<Summary> {
    let d: Vec<Duration> = us
        .iter()
        .map(|u| Duration::from_secs_f64(u / 1e6))
        .collect();
    Summary::of(&d)
}

pub fn run(args: &LinetraceArgs) -> anyhow::Result<()> {
    let samples = if args.quick { 200 } else { 1000 };
    let python = super::find_python(args.python.as_deref()).ok();
    let work = std::env::temp_dir().join(format!("roslite-bench-linetrace-{}", std::process::id()));
    let setups = [
        Setup::ROSLITE,
        Setup::MIXED,
        Setup::RCLPY,
        Setup::ONE_PROCESS,
    ];
    if !args.json {
        eprintln!("building or finding the node executable ...");
    }
    let node_program = node_program()?;
    if !args.json {
        eprintln!("roslite processes: {}", node_program.describe());
    }
    let mut results: Vec<(Setup, Result<RunResult, String>)> = Vec::new();
    for (i, setup) in setups.into_iter().enumerate() {
        let needs_python =
            setup.robot == launch::Side::Rclpy || setup.follower == launch::Side::Rclpy;
        if needs_python && python.is_none() {
            results.push((setup, Err("no Python with rclpy (pass --python)".into())));
            continue;
        }
        if !args.json {
            eprintln!("running {} ...", setup.label());
        }
        let options = LaunchOptions {
            node_program: node_program.clone(),
            python: python.clone(),
            work_dir: work.join(format!("run{i}")),
            domain: crate::demo::domain_for_run(i as u32 * 7),
            node: NodeOptions {
                speed: args.speed,
                seed: 1,
                twist_stamped: false,
            },
            samples,
            min_laps: 0,
            timeout: Duration::from_secs(120),
        };
        results.push((
            setup,
            launch::run(setup, &options).map_err(|e| e.to_string()),
        ));
    }
    let rclpy_mean = results.iter().find_map(|(s, r)| {
        (*s == Setup::RCLPY)
            .then(|| r.as_ref().ok().and_then(|r| mean_of(&r.light_sensors_us)))
            .flatten()
            .map(|s| s.mean_us)
    });
    let roslite_mean = results.iter().find_map(|(s, r)| {
        (*s == Setup::ROSLITE)
            .then(|| r.as_ref().ok().and_then(|r| mean_of(&r.light_sensors_us)))
            .flatten()
            .map(|s| s.mean_us)
    });
    let ratio = roslite_mean.zip(rclpy_mean).map(|(a, b)| a / b);
    if args.json {
        print_json(&results, samples, args.speed, ratio);
    } else {
        print_table(&results, samples, args.speed, ratio);
    }
    if let Some(out) = &args.out {
        let ok: Vec<&RunResult> = results
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .collect();
        report::write_report(
            out,
            "roslite bench linetrace",
            &format!("{samples} samples per topic, {}x speed.", args.speed),
            &ok,
        )?;
        if !args.json {
            println!("report: {}", out.join("README.md").display());
        }
    }
    Ok(())
}

fn rss_mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

fn print_table(
    results: &[(Setup, Result<RunResult, String>)],
    samples: usize,
    speed: f64,
    ratio: Option<f64>,
) {
    println!(
        "line follower, {samples} samples per topic, {speed}x speed; latency publish -> callback \
         start (CLOCK_MONOTONIC) in us; RSS = VmRSS in MB"
    );
    println!(
        "{:<34} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  RSS per process",
        "configuration", "ls mean", "ls p50", "ls p99", "ls sd", "cv mean", "cv p50", "cv p99",
    );
    for (setup, result) in results {
        match result {
            Ok(r) => {
                let ls = mean_of(&r.light_sensors_us);
                let cv = mean_of(&r.cmd_vel_us);
                let f = |s: Option<Summary>, g: fn(&Summary) -> f64| {
                    s.map_or("-".to_owned(), |s| format!("{:.1}", g(&s)))
                };
                let memory: Vec<String> = r
                    .memory
                    .iter()
                    .map(|m| format!("{} {:.2}", m.process, rss_mb(m.vm_rss)))
                    .collect();
                println!(
                    "{:<34} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {}",
                    setup.label(),
                    f(ls, |s| s.mean_us),
                    f(ls, |s| s.p50_us),
                    f(ls, |s| s.p99_us),
                    f(ls, |s| s.stddev_us),
                    f(cv, |s| s.mean_us),
                    f(cv, |s| s.p50_us),
                    f(cv, |s| s.p99_us),
                    memory.join(", ")
                );
            }
            Err(e) => println!("{:<34} failed: {e}", setup.label()),
        }
    }
    match ratio {
        Some(r) => println!(
            "goal: roslite /light_sensors mean <= {LATENCY_GOAL_RATIO} x rclpy's: {r:.3} -> {}",
            if r <= LATENCY_GOAL_RATIO {
                "met"
            } else {
                "NOT met"
            }
        ),
        None => println!("goal: roslite /light_sensors mean vs rclpy's: not measured"),
    }
    for (setup, result) in results {
        if setup.robot != launch::Side::Roslite || setup.follower != launch::Side::Roslite {
            continue;
        }
        if let Ok(r) = result {
            for m in &r.memory {
                let mb = rss_mb(m.vm_rss);
                println!(
                    "goal: {} <= {MEMORY_GOAL_MB} MB RSS: {mb:.2} MB -> {}",
                    m.process,
                    if mb <= MEMORY_GOAL_MB {
                        "met"
                    } else {
                        "NOT met"
                    }
                );
            }
        }
    }
}

fn print_json(
    results: &[(Setup, Result<RunResult, String>)],
    samples: usize,
    speed: f64,
    ratio: Option<f64>,
) {
    let esc = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    };
    let mut configs = Vec::new();
    for (setup, result) in results {
        let body = match result {
            Ok(r) => {
                let stats = |name: &str, us: &[f64]| {
                    match mean_of(us) {
                    Some(s) => format!(
                        "\"{name}_mean_us\":{:.1},\"{name}_p50_us\":{:.1},\"{name}_p99_us\":{:.1},\
                         \"{name}_max_us\":{:.1},\"{name}_min_us\":{:.1},\"{name}_stddev_us\":{:.1}",
                        s.mean_us, s.p50_us, s.p99_us, s.max_us, s.min_us, s.stddev_us
                    ),
                    None => format!("\"{name}_mean_us\":null"),
                }
                };
                let memory: Vec<String> = r
                    .memory
                    .iter()
                    .map(|m| {
                        format!(
                            "{{\"process\":\"{}\",\"rss_kib\":{},\"res_kib\":{},\"shr_kib\":{},\
                             \"peak_kib\":{}}}",
                            esc(&m.process),
                            m.vm_rss,
                            m.res(),
                            m.shr(),
                            m.vm_hwm
                        )
                    })
                    .collect();
                format!(
                    "{},{},\"laps\":{:.2},\"memory\":[{}]",
                    stats("light_sensors", &r.light_sensors_us),
                    stats("cmd_vel", &r.cmd_vel_us),
                    r.laps,
                    memory.join(",")
                )
            }
            Err(e) => format!("\"error\":\"{}\"", esc(e)),
        };
        configs.push(format!(
            "{{\"configuration\":\"{}\",{body}}}",
            esc(&setup.label())
        ));
    }
    println!(
        "{{\"samples\":{samples},\"speed\":{speed},\"light_sensors_mean_ratio_roslite_to_rclpy\":{},\
         \"configurations\":[{}]}}",
        ratio.map_or("null".to_owned(), |r| format!("{r:.4}")),
        configs.join(",")
    );
}
