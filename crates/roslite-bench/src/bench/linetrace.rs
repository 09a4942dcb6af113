//! `roslite bench linetrace`: the application of the mROS 2 line-follower evaluation in five
//! configurations in one run: roslite <-> roslite (two processes, RTPS on 127.0.0.1), the C++
//! follower (`crates/roslite-linetrace/cpp/follower.cpp`, on roslite's mROS 2 API, built by
//! `roslite_linetrace::cpp_build`) <-> the roslite robot, roslite follower <-> rclpy robot
//! (the evaluation's mixed setup), rclpy <-> rclpy (the ROS 2 baseline, Fast DDS on 127.0.0.1
//! without shared memory), and both roslite nodes in one process (intra-process delivery). The
//! launcher, the node executable and the domain of each run are `roslite_linetrace`'s, as for
//! the CLI's demo.

use std::path::PathBuf;

use roslite_linetrace::launch::{self, LaunchOptions, RunResult, Setup};
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::report;
use roslite_linetrace::{cpp_build, node_program};
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::rclpy::find_python;
use crate::toolkit::stats::Summary;

/// The bench's goals: roslite processes at most 2.5 MB RSS; roslite's /light_sensors mean at
/// most a quarter of rclpy's.
const MEMORY_GOAL_MB: f64 = 2.5;
const LATENCY_GOAL_RATIO: f64 = 0.25;
/// The C++ follower's goals: its /light_sensors mean at most 1.1 times the Rust follower's
/// (roslite <-> roslite, same run), its process at most 2.5 MB + 0.5 MB RSS.
const CPP_LATENCY_GOAL_RATIO: f64 = 1.1;
const CPP_MEMORY_GOAL_MB: f64 = MEMORY_GOAL_MB + 0.5;

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

fn mean_of(us: &[f64]) -> Option<Summary> {
    Summary::of_us(us)
}

pub fn run(args: &LinetraceArgs) -> anyhow::Result<()> {
    let samples = if args.quick { 200 } else { 1000 };
    let python = find_python(args.python.as_deref()).ok();
    let work = std::env::temp_dir().join(format!("roslite-bench-linetrace-{}", std::process::id()));
    let setups = [
        Setup::ROSLITE,
        Setup::CPP_FOLLOWER,
        Setup::MIXED,
        Setup::RCLPY,
        Setup::ONE_PROCESS,
    ];
    if !args.json {
        eprintln!("building or finding the node executable ...");
    }
    let (node_program, warning) = node_program::resolve(std::env::current_exe()?);
    if let Some(warning) = warning {
        eprintln!("warning: {warning}");
    }
    if !args.json {
        eprintln!("roslite processes: {}", node_program.describe());
        eprintln!(
            "building or finding the C++ follower (`{}`, then c++ {}) ...",
            cpp_build::library_command(roslite_linetrace::small_build::PROFILE),
            cpp_build::CXX_FLAGS.join(" ")
        );
    }
    // The library in the size profile, as the Rust node executable is built.
    let cpp_follower =
        cpp_build::build(cpp_build::FOLLOWER, roslite_linetrace::small_build::PROFILE);
    let mut results: Vec<(Setup, Result<RunResult, String>)> = Vec::new();
    for (i, setup) in setups.into_iter().enumerate() {
        let needs_python =
            setup.robot == launch::Side::Rclpy || setup.follower == launch::Side::Rclpy;
        if needs_python && python.is_none() {
            results.push((setup, Err("no Python with rclpy (pass --python)".into())));
            continue;
        }
        if let (launch::Side::RosliteCpp, Err(why)) = (setup.follower, &cpp_follower) {
            results.push((setup, Err(format!("the C++ follower was not built: {why}"))));
            continue;
        }
        if !args.json {
            eprintln!("running {} ...", setup.label());
        }
        let options = LaunchOptions {
            node_program: node_program.clone(),
            python: python.clone(),
            cpp_follower: cpp_follower.as_ref().ok().cloned(),
            work_dir: work.join(format!("run{i}")),
            domain: launch::domain_for_run(i as u32 * 7),
            node: NodeOptions {
                speed: args.speed,
                seed: 1,
                twist_stamped: false,
            },
            samples,
            min_laps: 0,
            timeout: std::time::Duration::from_secs(120),
        };
        results.push((
            setup,
            launch::run(setup, &options).map_err(|e| e.to_string()),
        ));
    }
    let mean = |setup: Setup| {
        results.iter().find_map(|(s, r)| {
            (*s == setup)
                .then(|| r.as_ref().ok().and_then(|r| mean_of(&r.light_sensors_us)))
                .flatten()
                .map(|s| s.mean_us)
        })
    };
    let roslite_mean = mean(Setup::ROSLITE);
    let ratio = roslite_mean.zip(mean(Setup::RCLPY)).map(|(a, b)| a / b);
    let cpp = CppGoals::of(&results, mean(Setup::CPP_FOLLOWER), roslite_mean);
    if args.json {
        print_json(&results, samples, args.speed, ratio, &cpp);
    } else {
        print_table(&results, samples, args.speed, ratio, &cpp);
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

/// The C++ follower's figures against its goals (`None`: not measured).
struct CppGoals {
    /// Its /light_sensors mean over the Rust follower's.
    latency_ratio: Option<f64>,
    /// Its process's VmRSS in KiB.
    follower_rss_kib: Option<u64>,
}

impl CppGoals {
    fn of(
        results: &[(Setup, Result<RunResult, String>)],
        cpp_mean: Option<f64>,
        rust_mean: Option<f64>,
    ) -> Self {
        let follower_rss_kib = results.iter().find_map(|(s, r)| {
            let r = r.as_ref().ok().filter(|_| *s == Setup::CPP_FOLLOWER)?;
            let name = format!("follower ({})", launch::Side::RosliteCpp.name());
            r.memory
                .iter()
                .find(|m| m.process == name)
                .map(|m| m.vm_rss)
        });
        Self {
            latency_ratio: cpp_mean.zip(rust_mean).map(|(a, b)| a / b),
            follower_rss_kib,
        }
    }

    fn latency_met(&self) -> Option<bool> {
        self.latency_ratio.map(|r| r <= CPP_LATENCY_GOAL_RATIO)
    }

    fn memory_met(&self) -> Option<bool> {
        self.follower_rss_kib
            .map(|kib| rss_mb(kib) <= CPP_MEMORY_GOAL_MB)
    }
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

fn print_table(
    results: &[(Setup, Result<RunResult, String>)],
    samples: usize,
    speed: f64,
    ratio: Option<f64>,
    cpp: &CppGoals,
) {
    println!(
        "line follower, {samples} samples per topic, {speed}x speed; latency publish -> callback \
         start (CLOCK_MONOTONIC) in us; RSS = VmRSS in MB"
    );
    println!(
        "{:<40} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  RSS per process",
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
                    "{:<40} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {}",
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
            Err(e) => println!("{:<40} failed: {e}", setup.label()),
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
    let cpp_label = Setup::CPP_FOLLOWER.label();
    match cpp.latency_ratio {
        Some(r) => println!(
            "goal: {cpp_label}: /light_sensors mean <= {CPP_LATENCY_GOAL_RATIO} x the Rust \
             follower's ({}): {r:.3} -> {}",
            Setup::ROSLITE.label(),
            verdict(r <= CPP_LATENCY_GOAL_RATIO)
        ),
        None => {
            println!("goal: {cpp_label}: /light_sensors mean vs the Rust follower's: not measured")
        }
    }
    match cpp.follower_rss_kib {
        Some(kib) => println!(
            "goal: follower ({}) <= {MEMORY_GOAL_MB} MB + 0.5 MB RSS: {:.2} MB -> {}",
            launch::Side::RosliteCpp.name(),
            rss_mb(kib),
            verdict(rss_mb(kib) <= CPP_MEMORY_GOAL_MB)
        ),
        None => println!(
            "goal: follower ({}) RSS: not measured",
            launch::Side::RosliteCpp.name()
        ),
    }
}

/// `--json`: one object per configuration, with its latencies in us (1 decimal) and memory, or
/// its error.
#[derive(Serialize)]
struct Json {
    samples: usize,
    #[serde(serialize_with = "json::number")]
    speed: f64,
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_roslite_to_rclpy: Option<f64>,
    /// The C++ follower's /light_sensors mean over the Rust follower's (goal: at most 1.1).
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_cpp_to_rust_follower: Option<f64>,
    cpp_follower_latency_goal_met: Option<bool>,
    /// The C++ follower's VmRSS (goal: at most 3 MB, 2.5 + 0.5).
    cpp_follower_rss_kib: Option<u64>,
    cpp_follower_rss_goal_met: Option<bool>,
    configurations: Vec<JsonConfiguration>,
}

#[derive(Serialize)]
struct JsonConfiguration {
    configuration: String,
    #[serde(flatten)]
    outcome: JsonOutcome,
}

#[derive(Serialize)]
#[serde(untagged)]
enum JsonOutcome {
    Ran {
        #[serde(flatten)]
        light_sensors: LightSensorsJson,
        #[serde(flatten)]
        cmd_vel: CmdVelJson,
        #[serde(serialize_with = "json::fixed2")]
        laps: f64,
        memory: Vec<JsonMemory>,
    },
    Failed {
        error: String,
    },
}

/// `/light_sensors`'s latency; only its mean, `null`, without samples.
#[derive(Serialize)]
#[serde(untagged)]
enum LightSensorsJson {
    Measured {
        #[serde(serialize_with = "json::fixed1")]
        light_sensors_mean_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        light_sensors_p50_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        light_sensors_p99_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        light_sensors_max_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        light_sensors_min_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        light_sensors_stddev_us: f64,
    },
    Missing {
        light_sensors_mean_us: Option<f64>,
    },
}

impl LightSensorsJson {
    fn of(us: &[f64]) -> Self {
        match mean_of(us) {
            Some(s) => Self::Measured {
                light_sensors_mean_us: s.mean_us,
                light_sensors_p50_us: s.p50_us,
                light_sensors_p99_us: s.p99_us,
                light_sensors_max_us: s.max_us,
                light_sensors_min_us: s.min_us,
                light_sensors_stddev_us: s.stddev_us,
            },
            None => Self::Missing {
                light_sensors_mean_us: None,
            },
        }
    }
}

/// `/cmd_vel`'s latency; only its mean, `null`, without samples.
#[derive(Serialize)]
#[serde(untagged)]
enum CmdVelJson {
    Measured {
        #[serde(serialize_with = "json::fixed1")]
        cmd_vel_mean_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        cmd_vel_p50_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        cmd_vel_p99_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        cmd_vel_max_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        cmd_vel_min_us: f64,
        #[serde(serialize_with = "json::fixed1")]
        cmd_vel_stddev_us: f64,
    },
    Missing {
        cmd_vel_mean_us: Option<f64>,
    },
}

impl CmdVelJson {
    fn of(us: &[f64]) -> Self {
        match mean_of(us) {
            Some(s) => Self::Measured {
                cmd_vel_mean_us: s.mean_us,
                cmd_vel_p50_us: s.p50_us,
                cmd_vel_p99_us: s.p99_us,
                cmd_vel_max_us: s.max_us,
                cmd_vel_min_us: s.min_us,
                cmd_vel_stddev_us: s.stddev_us,
            },
            None => Self::Missing {
                cmd_vel_mean_us: None,
            },
        }
    }
}

#[derive(Serialize)]
struct JsonMemory {
    process: String,
    rss_kib: u64,
    res_kib: u64,
    shr_kib: u64,
    peak_kib: u64,
}

fn print_json(
    results: &[(Setup, Result<RunResult, String>)],
    samples: usize,
    speed: f64,
    ratio: Option<f64>,
    cpp: &CppGoals,
) {
    let configurations = results
        .iter()
        .map(|(setup, result)| JsonConfiguration {
            configuration: setup.label(),
            outcome: match result {
                Ok(r) => JsonOutcome::Ran {
                    light_sensors: LightSensorsJson::of(&r.light_sensors_us),
                    cmd_vel: CmdVelJson::of(&r.cmd_vel_us),
                    laps: r.laps,
                    memory: r
                        .memory
                        .iter()
                        .map(|m| JsonMemory {
                            process: m.process.clone(),
                            rss_kib: m.vm_rss,
                            res_kib: m.res(),
                            shr_kib: m.shr(),
                            peak_kib: m.vm_hwm,
                        })
                        .collect(),
                },
                Err(e) => JsonOutcome::Failed { error: e.clone() },
            },
        })
        .collect();
    json::print(&Json {
        samples,
        speed,
        light_sensors_mean_ratio_roslite_to_rclpy: ratio,
        light_sensors_mean_ratio_cpp_to_rust_follower: cpp.latency_ratio,
        cpp_follower_latency_goal_met: cpp.latency_met(),
        cpp_follower_rss_kib: cpp.follower_rss_kib,
        cpp_follower_rss_goal_met: cpp.memory_met(),
        configurations,
    });
}
