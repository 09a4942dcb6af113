//! `roslite bench linetrace`: the application of the mROS 2 line-follower evaluation in five
//! configurations in one run: roslite <-> roslite (two processes, RTPS on 127.0.0.1), the C++
//! follower (`crates/roslite-linetrace/cpp/follower.cpp`, on roslite's mROS 2 API, built by
//! `roslite_linetrace::cpp_build`) <-> the roslite robot, roslite follower <-> rclpy robot
//! (the evaluation's mixed setup), rclpy <-> rclpy (the ROS 2 baseline, Fast DDS on 127.0.0.1
//! without shared memory), and both roslite nodes in one process (intra-process delivery). The
//! launcher, the node executable and the domain of each run are `roslite_linetrace`'s, as for
//! the CLI's demo.
//!
//! The C++ follower's latency goal compares two configurations whose means, on a shared
//! machine, move with whatever else runs during their 40 s. So after the table the two are run
//! again, alternating, for `--rounds` rounds in all (the table's runs are round 1, Rust then
//! C++; later rounds swap the order each time), and the goal is judged on the median of the
//! per-round ratios of the means, with the pooled ratio (every sample of every round) and the
//! number of rounds that met it printed beside it.

use std::path::PathBuf;

use roslite_linetrace::launch::{self, LaunchOptions, RunResult, Setup};
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::report;
use roslite_linetrace::{cpp_build, node_program};
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::rclpy::find_python;
use crate::toolkit::stats::{upper_median, Summary};

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
    /// Rounds of the Rust and the C++ follower, alternating, for the C++ follower's latency
    /// goal (judged on the median of the per-round ratios); the table's runs are the first.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

fn mean_of(us: &[f64]) -> Option<Summary> {
    Summary::of_us(us)
}

pub fn run(args: &LinetraceArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.rounds >= 1, "--rounds must be at least 1");
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
    let run_one = |setup: Setup, i: usize| {
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
        launch::run(setup, &options).map_err(|e| e.to_string())
    };
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
        results.push((setup, run_one(setup, i)));
    }
    // The C++ follower's latency rounds: round 1 is the table's pair; then the pair again,
    // alternating which goes first.
    let mut rounds = vec![Round::of_table(&results)];
    let cpp_ready = cpp_follower.is_ok();
    for round in 2..=args.rounds {
        if !cpp_ready {
            break;
        }
        let order = Round::order(round);
        if !args.json {
            eprintln!(
                "C++ follower latency round {round} of {}: {} then {} ...",
                args.rounds,
                order[0].label(),
                order[1].label()
            );
        }
        let mut pair = [Err(String::new()), Err(String::new())];
        for (k, setup) in order.into_iter().enumerate() {
            let index = setups.len() + 2 * (round - 2) + k;
            pair[usize::from(setup == Setup::CPP_FOLLOWER)] = run_one(setup, index);
        }
        let [rust, cpp] = pair;
        rounds.push(Round {
            number: round,
            rust_first: order[0] == Setup::ROSLITE,
            rust: rust.map(|r| r.light_sensors_us),
            cpp: cpp.map(|r| r.light_sensors_us),
        });
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
    let cpp = CppGoals::of(&results, rounds);
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

/// One round of the C++ follower's latency comparison: each follower's /light_sensors
/// latencies (us), or why it has none.
struct Round {
    number: usize,
    rust_first: bool,
    rust: Result<Vec<f64>, String>,
    cpp: Result<Vec<f64>, String>,
}

impl Round {
    /// Round 1: the table's runs of the two configurations (Rust first).
    fn of_table(results: &[(Setup, Result<RunResult, String>)]) -> Self {
        let latencies = |setup: Setup| {
            results
                .iter()
                .find(|(s, _)| *s == setup)
                .map_or(Err("not run".to_owned()), |(_, r)| {
                    r.as_ref()
                        .map(|r| r.light_sensors_us.clone())
                        .map_err(Clone::clone)
                })
        };
        Self {
            number: 1,
            rust_first: true,
            rust: latencies(Setup::ROSLITE),
            cpp: latencies(Setup::CPP_FOLLOWER),
        }
    }

    /// The order of round `number`: odd rounds Rust first, even rounds C++ first.
    fn order(number: usize) -> [Setup; 2] {
        if number % 2 == 1 {
            [Setup::ROSLITE, Setup::CPP_FOLLOWER]
        } else {
            [Setup::CPP_FOLLOWER, Setup::ROSLITE]
        }
    }

    fn rust_summary(&self) -> Option<Summary> {
        self.rust.as_ref().ok().and_then(|us| mean_of(us))
    }

    fn cpp_summary(&self) -> Option<Summary> {
        self.cpp.as_ref().ok().and_then(|us| mean_of(us))
    }

    /// The C++ follower's /light_sensors mean over the Rust follower's in this round.
    fn ratio(&self) -> Option<f64> {
        self.cpp_summary()
            .zip(self.rust_summary())
            .map(|(c, r)| c.mean_us / r.mean_us)
    }
}

/// The C++ follower's figures against its goals (`None`: not measured).
struct CppGoals {
    /// Every round of the latency comparison, in running order.
    rounds: Vec<Round>,
    /// The median of the per-round ratios (for an even count the upper middle, the less
    /// flattering one): what the latency goal is judged on.
    latency_ratio: Option<f64>,
    /// Every sample of every round pooled: the C++ mean over the Rust mean.
    pooled_ratio: Option<f64>,
    /// Its process's VmRSS in KiB (the table's run).
    follower_rss_kib: Option<u64>,
}

impl CppGoals {
    fn of(results: &[(Setup, Result<RunResult, String>)], rounds: Vec<Round>) -> Self {
        let follower_rss_kib = results.iter().find_map(|(s, r)| {
            let r = r.as_ref().ok().filter(|_| *s == Setup::CPP_FOLLOWER)?;
            let name = format!("follower ({})", launch::Side::RosliteCpp.name());
            r.memory
                .iter()
                .find(|m| m.process == name)
                .map(|m| m.vm_rss)
        });
        let latency_ratio = upper_median(rounds.iter().filter_map(Round::ratio).collect());
        let pooled = |side: fn(&Round) -> &Result<Vec<f64>, String>| {
            let all: Vec<f64> = rounds
                .iter()
                .filter(|r| r.ratio().is_some())
                .filter_map(|r| side(r).as_ref().ok())
                .flatten()
                .copied()
                .collect();
            mean_of(&all).map(|s| s.mean_us)
        };
        let pooled_ratio = pooled(|r| &r.cpp)
            .zip(pooled(|r| &r.rust))
            .map(|(c, r)| c / r);
        Self {
            rounds,
            latency_ratio,
            pooled_ratio,
            follower_rss_kib,
        }
    }

    fn latency_met(&self) -> Option<bool> {
        self.latency_ratio.map(|r| r <= CPP_LATENCY_GOAL_RATIO)
    }

    /// How many rounds with both figures met the latency goal, and how many had both.
    fn rounds_met(&self) -> (usize, usize) {
        let ratios: Vec<f64> = self.rounds.iter().filter_map(Round::ratio).collect();
        let met = ratios
            .iter()
            .filter(|r| **r <= CPP_LATENCY_GOAL_RATIO)
            .count();
        (met, ratios.len())
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
    print_rounds(cpp);
    let cpp_label = Setup::CPP_FOLLOWER.label();
    let (met, measured) = cpp.rounds_met();
    match cpp.latency_ratio {
        Some(r) => println!(
            "goal: {cpp_label}: /light_sensors mean <= {CPP_LATENCY_GOAL_RATIO} x the Rust \
             follower's ({}): median of {measured} round ratio(s) {r:.3}{} -> {}; rounds that \
             met it: {met} of {measured}",
            Setup::ROSLITE.label(),
            cpp.pooled_ratio
                .map_or(String::new(), |p| format!(" (pooled {p:.3})")),
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

/// The C++ follower's latency rounds: each follower's /light_sensors mean, p50 and p99 per
/// round, the ratio of the means, and the pooled figures.
fn print_rounds(cpp: &CppGoals) {
    println!(
        "/light_sensors latency (us), Rust follower vs C++ follower <-> roslite robot, {} \
         round(s) alternating which runs first (round 1: the table's runs)",
        cpp.rounds.len()
    );
    println!(
        "{:>5}  {:<9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7}",
        "round", "first", "Rust mean", "p50", "p99", "C++ mean", "p50", "p99", "ratio"
    );
    let f = |s: Option<Summary>, g: fn(&Summary) -> f64| {
        s.map_or("-".to_owned(), |s| format!("{:.1}", g(&s)))
    };
    for round in &cpp.rounds {
        let (rust, c) = (round.rust_summary(), round.cpp_summary());
        let ratio = round.ratio().map_or_else(
            || {
                let why = round.rust.as_ref().err().or(round.cpp.as_ref().err());
                why.map_or("-".to_owned(), |e| format!("- ({e})"))
            },
            |r| format!("{r:.3}"),
        );
        println!(
            "{:>5}  {:<9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7}",
            round.number,
            if round.rust_first { "Rust" } else { "C++" },
            f(rust, |s| s.mean_us),
            f(rust, |s| s.p50_us),
            f(rust, |s| s.p99_us),
            f(c, |s| s.mean_us),
            f(c, |s| s.p50_us),
            f(c, |s| s.p99_us),
            ratio
        );
    }
    if let Some(pooled) = cpp.pooled_ratio {
        println!(
            "{:>5}  {:<9} {:>66}",
            "all",
            "pooled",
            format!("{pooled:.3}")
        );
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
    /// The C++ follower's /light_sensors mean over the Rust follower's, the median of the
    /// rounds' ratios (goal: at most 1.1).
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_cpp_to_rust_follower: Option<f64>,
    /// The same over every sample of every round pooled.
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_cpp_to_rust_follower_pooled: Option<f64>,
    cpp_follower_latency_goal_met: Option<bool>,
    /// Rounds whose own ratio met the goal, of those with both figures.
    cpp_follower_latency_rounds_met: usize,
    cpp_follower_latency_rounds_measured: usize,
    /// Every round, in running order (round 1 is the configurations' runs below).
    cpp_follower_latency_rounds: Vec<JsonRound>,
    /// The C++ follower's VmRSS (goal: at most 3 MB, 2.5 + 0.5).
    cpp_follower_rss_kib: Option<u64>,
    cpp_follower_rss_goal_met: Option<bool>,
    configurations: Vec<JsonConfiguration>,
}

#[derive(Serialize)]
struct JsonRound {
    round: usize,
    /// `rust` or `cpp`: which follower ran first.
    first: &'static str,
    rust: JsonRoundSide,
    cpp: JsonRoundSide,
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio: Option<f64>,
}

/// One follower's /light_sensors latency in one round, or its error.
#[derive(Serialize)]
#[serde(untagged)]
enum JsonRoundSide {
    Measured {
        samples: usize,
        #[serde(flatten)]
        light_sensors: LightSensorsJson,
    },
    Failed {
        error: String,
    },
}

impl JsonRoundSide {
    fn of(us: &Result<Vec<f64>, String>) -> Self {
        match us {
            Ok(us) => Self::Measured {
                samples: us.len(),
                light_sensors: LightSensorsJson::of(us),
            },
            Err(e) => Self::Failed { error: e.clone() },
        }
    }
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
        light_sensors_mean_ratio_cpp_to_rust_follower_pooled: cpp.pooled_ratio,
        cpp_follower_latency_goal_met: cpp.latency_met(),
        cpp_follower_latency_rounds_met: cpp.rounds_met().0,
        cpp_follower_latency_rounds_measured: cpp.rounds_met().1,
        cpp_follower_latency_rounds: cpp
            .rounds
            .iter()
            .map(|r| JsonRound {
                round: r.number,
                first: if r.rust_first { "rust" } else { "cpp" },
                rust: JsonRoundSide::of(&r.rust),
                cpp: JsonRoundSide::of(&r.cpp),
                light_sensors_mean_ratio: r.ratio(),
            })
            .collect(),
        cpp_follower_rss_kib: cpp.follower_rss_kib,
        cpp_follower_rss_goal_met: cpp.memory_met(),
        configurations,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(number: usize, rust: &[f64], cpp: Result<&[f64], &str>) -> Round {
        Round {
            number,
            rust_first: number % 2 == 1,
            rust: Ok(rust.to_vec()),
            cpp: cpp.map(<[f64]>::to_vec).map_err(str::to_owned),
        }
    }

    #[test]
    fn the_goal_is_judged_on_the_median_round_ratio_with_pooled_figures_and_a_count() {
        let goals = CppGoals::of(
            &[],
            vec![
                round(1, &[10.0, 10.0], Ok(&[30.0, 30.0])), // 3.0, a burst of load
                round(2, &[10.0, 10.0], Ok(&[9.0, 9.0])),   // 0.9
                round(3, &[20.0, 20.0], Ok(&[21.0, 21.0])), // 1.05
                round(4, &[10.0], Err("crashed")),          // no ratio: left out
            ],
        );
        assert_eq!(goals.latency_ratio, Some(1.05));
        assert_eq!(goals.latency_met(), Some(true));
        assert_eq!(goals.rounds_met(), (2, 3));
        // (30 + 30 + 9 + 9 + 21 + 21) / 6 over (10 + 10 + 10 + 10 + 20 + 20) / 6.
        let pooled = goals.pooled_ratio.unwrap();
        assert!((pooled - 120.0 / 80.0).abs() < 1e-12, "{pooled}");
        assert_eq!(Round::order(2), [Setup::CPP_FOLLOWER, Setup::ROSLITE]);
        assert_eq!(Round::order(3), [Setup::ROSLITE, Setup::CPP_FOLLOWER]);
    }
}
