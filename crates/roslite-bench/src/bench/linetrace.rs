//! `roslite bench linetrace`: the application of the mROS 2 line-follower evaluation in seven
//! configurations in one run: roslite <-> roslite (two processes, RTPS on 127.0.0.1), the C++
//! follower (`crates/roslite-linetrace/cpp/follower.cpp`, on roslite's mROS 2 API, built by
//! `roslite_linetrace::cpp_build`) <-> the roslite robot, the same C++ follower as a
//! WebAssembly node in roslite's lean Wasm host (`roslite_linetrace::wasm_build`) on wasmtime
//! (compiled ahead of time) and on wasmi (interpreted) <-> the roslite robot, roslite follower
//! <-> rclpy robot (the evaluation's mixed setup), rclpy <-> rclpy (the ROS 2 baseline, Fast
//! DDS on 127.0.0.1 without shared memory), and both roslite nodes in one process
//! (intra-process delivery). The launcher, the node executable and the domain of each run are
//! `roslite_linetrace`'s, as for the CLI's demo.
//!
//! The C++ and Wasm followers' latency goals compare configurations whose means, on a shared
//! machine, move with whatever else runs during their 40 s. So after the table the Rust
//! follower and the others are run again, for `--rounds` rounds in all (the table's runs are
//! round 1, Rust first; later rounds reverse the order each time), and each goal is judged on
//! the median of the per-round ratios of the means, with the pooled ratio (every sample of every
//! round) and the number of rounds that met it printed beside it.

use std::path::PathBuf;

use roslite_linetrace::launch::{self, LaunchOptions, RunResult, Setup, Side};
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::report;
use roslite_linetrace::{cpp_build, node_program, wasm_build};
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
/// The Wasm follower's goals (issue 31): on wasmtime (AOT) its /light_sensors mean at most 1.1
/// times the native Rust follower's and its host process at most the Rust follower's RSS + 1
/// MB; on wasmi at most 2 times the native latency.
const WASMTIME_LATENCY_GOAL_RATIO: f64 = 1.1;
const WASMI_LATENCY_GOAL_RATIO: f64 = 2.0;
const WASM_MEMORY_GOAL_EXTRA_MB: f64 = 1.0;

/// A follower whose /light_sensors latency is judged against the Rust follower's
/// ([`Setup::ROSLITE`]) in rounds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Contender {
    setup: Setup,
    /// Its mean over the Rust follower's may be at most this.
    goal: f64,
    /// Short name for the rounds table.
    short: &'static str,
    /// Its key in `--json`.
    key: &'static str,
}

const CONTENDERS: [Contender; 3] = [
    Contender {
        setup: Setup::CPP_FOLLOWER,
        goal: CPP_LATENCY_GOAL_RATIO,
        short: "C++",
        key: "cpp",
    },
    Contender {
        setup: Setup::WASM_WASMTIME,
        goal: WASMTIME_LATENCY_GOAL_RATIO,
        short: "wasmtime",
        key: "wasm_wasmtime",
    },
    Contender {
        setup: Setup::WASM_WASMI,
        goal: WASMI_LATENCY_GOAL_RATIO,
        short: "wasmi",
        key: "wasm_wasmi",
    },
];

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
    /// Rounds of the Rust follower against the C++ and the Wasm followers, the order reversed
    /// each round, for their latency goals (judged on the median of the per-round ratios); the
    /// table's runs are the first.
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
        Setup::WASM_WASMTIME,
        Setup::WASM_WASMI,
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
    if !args.json {
        eprintln!(
            "building or finding the Wasm follower ({}) ...",
            wasm_build::describe()
        );
    }
    let wasm_follower = wasm_build::build();
    if let (Err(why), false) = (&wasm_follower, args.json) {
        eprintln!("warning: the Wasm follower rows are skipped: {why}");
    }
    // Why a follower cannot run (None: it can).
    let missing = |setup: Setup| -> Option<String> {
        match (setup.follower, &cpp_follower, &wasm_follower) {
            (Side::RosliteCpp, Err(why), _) => {
                Some(format!("the C++ follower was not built: {why}"))
            }
            (Side::RosliteWasm(_), _, Err(why)) => {
                Some(format!("the Wasm follower was not built: {why}"))
            }
            _ => None,
        }
    };
    let run_one = |setup: Setup, i: usize| {
        let options = LaunchOptions {
            node_program: node_program.clone(),
            python: python.clone(),
            cpp_follower: cpp_follower.as_ref().ok().cloned(),
            wasm_follower: wasm_follower.as_ref().ok().cloned(),
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
        let needs_python = setup.robot == Side::Rclpy || setup.follower == Side::Rclpy;
        if needs_python && python.is_none() {
            results.push((setup, Err("no Python with rclpy (pass --python)".into())));
            continue;
        }
        if let Some(why) = missing(setup) {
            results.push((setup, Err(why)));
            continue;
        }
        if !args.json {
            eprintln!("running {} ...", setup.label());
        }
        results.push((setup, run_one(setup, i)));
    }
    // The latency rounds: round 1 is the table's runs; then the Rust follower and every
    // follower that could be built again, the order reversed each round.
    let ready: Vec<Contender> = CONTENDERS
        .into_iter()
        .filter(|c| missing(c.setup).is_none())
        .collect();
    let mut rounds = vec![Round::of_table(&results)];
    let mut index = setups.len();
    for number in 2..=args.rounds {
        if ready.is_empty() {
            break;
        }
        let order = Round::order(number, &ready);
        if !args.json {
            let names: Vec<String> = order.iter().map(Setup::label).collect();
            eprintln!(
                "follower latency round {number} of {}: {} ...",
                args.rounds,
                names.join(", then ")
            );
        }
        let mut round = Round {
            number,
            first: order[0],
            rust: Err("not run".into()),
            others: CONTENDERS
                .iter()
                .map(|c| Err(missing(c.setup).unwrap_or_else(|| "not run".into())))
                .collect(),
        };
        for setup in order {
            let latencies = run_one(setup, index).map(|r| r.light_sensors_us);
            index += 1;
            match CONTENDERS.iter().position(|c| c.setup == setup) {
                Some(k) => round.others[k] = latencies,
                None => round.rust = latencies,
            }
        }
        rounds.push(round);
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
    let goals = Goals::of(&results, rounds);
    if args.json {
        print_json(&results, samples, args.speed, ratio, &goals);
    } else {
        print_table(&results, samples, args.speed, ratio, &goals);
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

/// One round of the latency comparison: the Rust follower's /light_sensors latencies (us) and
/// each [`CONTENDERS`]'s, or why there are none.
struct Round {
    number: usize,
    /// The configuration that ran first.
    first: Setup,
    rust: Result<Vec<f64>, String>,
    /// In the order of [`CONTENDERS`].
    others: Vec<Result<Vec<f64>, String>>,
}

impl Round {
    /// Round 1: the table's runs of the configurations (Rust first).
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
            first: Setup::ROSLITE,
            rust: latencies(Setup::ROSLITE),
            others: CONTENDERS.iter().map(|c| latencies(c.setup)).collect(),
        }
    }

    /// The order of round `number`: odd rounds the Rust follower first, then `ready` in order;
    /// even rounds the reverse.
    fn order(number: usize, ready: &[Contender]) -> Vec<Setup> {
        let mut order: Vec<Setup> = std::iter::once(Setup::ROSLITE)
            .chain(ready.iter().map(|c| c.setup))
            .collect();
        if number % 2 == 0 {
            order.reverse();
        }
        order
    }

    fn rust_summary(&self) -> Option<Summary> {
        self.rust.as_ref().ok().and_then(|us| mean_of(us))
    }

    fn summary(&self, k: usize) -> Option<Summary> {
        self.others[k].as_ref().ok().and_then(|us| mean_of(us))
    }

    /// Contender `k`'s /light_sensors mean over the Rust follower's in this round.
    fn ratio(&self, k: usize) -> Option<f64> {
        self.summary(k)
            .zip(self.rust_summary())
            .map(|(c, r)| c.mean_us / r.mean_us)
    }

    /// Why contender `k` has no ratio in this round.
    fn why_not(&self, k: usize) -> Option<&str> {
        self.rust
            .as_ref()
            .err()
            .or(self.others[k].as_ref().err())
            .map(String::as_str)
    }
}

/// One contender's latency against its goal, over the rounds.
struct LatencyGoal {
    contender: Contender,
    /// The median of the per-round ratios (for an even count the upper middle, the less
    /// flattering one): what the goal is judged on.
    ratio: Option<f64>,
    /// Every sample of every round with both figures pooled: its mean over the Rust mean.
    pooled: Option<f64>,
    /// Rounds whose own ratio met the goal, and rounds with both figures.
    met: usize,
    measured: usize,
}

impl LatencyGoal {
    fn of(k: usize, rounds: &[Round]) -> Self {
        let contender = CONTENDERS[k];
        let ratios: Vec<f64> = rounds.iter().filter_map(|r| r.ratio(k)).collect();
        let pooled = |side: &dyn Fn(&Round) -> &Result<Vec<f64>, String>| {
            let all: Vec<f64> = rounds
                .iter()
                .filter(|r| r.ratio(k).is_some())
                .filter_map(|r| side(r).as_ref().ok())
                .flatten()
                .copied()
                .collect();
            mean_of(&all).map(|s| s.mean_us)
        };
        Self {
            contender,
            ratio: upper_median(ratios.clone()),
            pooled: pooled(&|r| &r.others[k])
                .zip(pooled(&|r| &r.rust))
                .map(|(c, r)| c / r),
            met: ratios.iter().filter(|r| **r <= contender.goal).count(),
            measured: ratios.len(),
        }
    }

    fn met(&self) -> Option<bool> {
        self.ratio.map(|r| r <= self.contender.goal)
    }
}

/// The C++ and Wasm followers' figures against their goals (`None`: not measured).
struct Goals {
    /// Every round of the latency comparison, in running order.
    rounds: Vec<Round>,
    /// One per [`CONTENDERS`], in its order.
    latency: Vec<LatencyGoal>,
    /// The Rust follower's VmRSS in KiB (the table's run).
    rust_follower_rss_kib: Option<u64>,
    /// The C++ follower's VmRSS in KiB (the table's run).
    cpp_follower_rss_kib: Option<u64>,
    /// The Wasm host's VmRSS in KiB (the table's runs), wasmtime and wasmi.
    wasmtime_host_rss_kib: Option<u64>,
    wasmi_host_rss_kib: Option<u64>,
}

/// The follower process's VmRSS in `setup`'s run of the table.
fn follower_rss(results: &[(Setup, Result<RunResult, String>)], setup: Setup) -> Option<u64> {
    results.iter().find_map(|(s, r)| {
        let r = r.as_ref().ok().filter(|_| *s == setup)?;
        let name = setup.follower.follower_process();
        r.memory
            .iter()
            .find(|m| m.process == name)
            .map(|m| m.vm_rss)
    })
}

impl Goals {
    fn of(results: &[(Setup, Result<RunResult, String>)], rounds: Vec<Round>) -> Self {
        let latency = (0..CONTENDERS.len())
            .map(|k| LatencyGoal::of(k, &rounds))
            .collect();
        Self {
            rounds,
            latency,
            rust_follower_rss_kib: follower_rss(results, Setup::ROSLITE),
            cpp_follower_rss_kib: follower_rss(results, Setup::CPP_FOLLOWER),
            wasmtime_host_rss_kib: follower_rss(results, Setup::WASM_WASMTIME),
            wasmi_host_rss_kib: follower_rss(results, Setup::WASM_WASMI),
        }
    }

    fn latency_of(&self, setup: Setup) -> &LatencyGoal {
        self.latency
            .iter()
            .find(|g| g.contender.setup == setup)
            .expect("every contender has its goal")
    }

    fn cpp_memory_met(&self) -> Option<bool> {
        self.cpp_follower_rss_kib
            .map(|kib| rss_mb(kib) <= CPP_MEMORY_GOAL_MB)
    }

    /// The wasmtime host's RSS over the Rust follower's, in MB.
    fn wasmtime_extra_mb(&self) -> Option<f64> {
        self.wasmtime_host_rss_kib
            .zip(self.rust_follower_rss_kib)
            .map(|(w, r)| rss_mb(w) - rss_mb(r))
    }

    fn wasmtime_memory_met(&self) -> Option<bool> {
        self.wasmtime_extra_mb()
            .map(|extra| extra <= WASM_MEMORY_GOAL_EXTRA_MB)
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
    goals: &Goals,
) {
    println!(
        "line follower, {samples} samples per topic, {speed}x speed; latency publish -> callback \
         start (CLOCK_MONOTONIC) in us; RSS = VmRSS in MB"
    );
    println!(
        "{:<54} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  RSS per process",
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
                    "{:<54} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {}",
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
            Err(e) => println!("{:<54} failed: {e}", setup.label()),
        }
    }
    match ratio {
        Some(r) => println!(
            "goal: roslite /light_sensors mean <= {LATENCY_GOAL_RATIO} x rclpy's: {r:.3} -> {}",
            verdict(r <= LATENCY_GOAL_RATIO)
        ),
        None => println!("goal: roslite /light_sensors mean vs rclpy's: not measured"),
    }
    for (setup, result) in results {
        if setup.robot != Side::Roslite || setup.follower != Side::Roslite {
            continue;
        }
        if let Ok(r) = result {
            for m in &r.memory {
                let mb = rss_mb(m.vm_rss);
                println!(
                    "goal: {} <= {MEMORY_GOAL_MB} MB RSS: {mb:.2} MB -> {}",
                    m.process,
                    verdict(mb <= MEMORY_GOAL_MB)
                );
            }
        }
    }
    if let Some(note) = roslite_linetrace::small_build::glibc_note() {
        println!("note: {note}");
    }
    print_rounds(goals);
    let rust_label = Setup::ROSLITE.label();
    for goal in &goals.latency {
        let label = goal.contender.setup.label();
        let bound = goal.contender.goal;
        match goal.ratio {
            Some(r) => println!(
                "goal: {label}: /light_sensors mean <= {bound} x the Rust follower's \
                 ({rust_label}): median of {} round ratio(s) {r:.3}{} -> {}; rounds that met \
                 it: {} of {}",
                goal.measured,
                goal.pooled
                    .map_or(String::new(), |p| format!(" (pooled {p:.3})")),
                verdict(r <= bound),
                goal.met,
                goal.measured
            ),
            None => {
                println!("goal: {label}: /light_sensors mean vs the Rust follower's: not measured")
            }
        }
    }
    let cpp_process = Side::RosliteCpp.follower_process();
    match goals.cpp_follower_rss_kib {
        Some(kib) => println!(
            "goal: {cpp_process} <= {MEMORY_GOAL_MB} MB + 0.5 MB RSS: {:.2} MB -> {}",
            rss_mb(kib),
            verdict(rss_mb(kib) <= CPP_MEMORY_GOAL_MB)
        ),
        None => println!("goal: {cpp_process} RSS: not measured"),
    }
    let wasm_process = Setup::WASM_WASMTIME.follower.follower_process();
    let rust_process = Side::Roslite.follower_process();
    match (
        goals.wasmtime_host_rss_kib,
        goals.rust_follower_rss_kib,
        goals.wasmtime_extra_mb(),
    ) {
        (Some(wasm), Some(rust), Some(extra)) => println!(
            "goal: {wasm_process} (the host process) <= {rust_process} + \
             {WASM_MEMORY_GOAL_EXTRA_MB} MB RSS: {:.2} MB vs {:.2} MB ({extra:+.2} MB) -> {}",
            rss_mb(wasm),
            rss_mb(rust),
            verdict(extra <= WASM_MEMORY_GOAL_EXTRA_MB)
        ),
        _ => println!("goal: {wasm_process} RSS vs {rust_process}'s: not measured"),
    }
}

/// The latency rounds: each follower's /light_sensors mean, p50 and p99 per round, the ratio
/// of each mean to the Rust follower's, and the pooled ratios.
fn print_rounds(goals: &Goals) {
    println!(
        "/light_sensors latency (us) of the followers <-> roslite robot, {} round(s), the order \
         reversed each round (round 1: the table's runs); ratio = mean / the Rust follower's",
        goals.rounds.len()
    );
    let mut header = format!("{:>5}  {:<9} {:>17}", "round", "first", "Rust mean/p50/p99");
    for c in CONTENDERS {
        header += &format!(" {:>26}", format!("{} mean/p50/p99 ratio", c.short));
    }
    println!("{header}");
    let cell = |s: Option<Summary>| {
        s.map_or("-".to_owned(), |s| {
            format!("{:.1}/{:.1}/{:.1}", s.mean_us, s.p50_us, s.p99_us)
        })
    };
    let mut notes = Vec::new();
    for round in &goals.rounds {
        let first = CONTENDERS
            .iter()
            .find(|c| c.setup == round.first)
            .map_or("Rust", |c| c.short);
        let mut line = format!(
            "{:>5}  {:<9} {:>17}",
            round.number,
            first,
            cell(round.rust_summary())
        );
        for (k, c) in CONTENDERS.iter().enumerate() {
            let ratio = round.ratio(k).map_or_else(
                || {
                    if let Some(why) = round.why_not(k) {
                        notes.push(format!("round {} {}: {why}", round.number, c.short));
                    }
                    "-".to_owned()
                },
                |r| format!("{r:.3}"),
            );
            line += &format!(" {:>26}", format!("{} {ratio}", cell(round.summary(k))));
        }
        println!("{line}");
    }
    let mut pooled = format!("{:>5}  {:<9} {:>17}", "all", "pooled", "");
    for goal in &goals.latency {
        pooled += &format!(
            " {:>26}",
            goal.pooled.map_or("-".to_owned(), |p| format!("{p:.3}"))
        );
    }
    println!("{pooled}");
    for note in notes {
        println!("  ({note})");
    }
}

/// `--json`: one object per configuration, with its latencies in us (1 decimal) and memory, or
/// its error; the followers' goals and every latency round.
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
    /// The C++ follower's VmRSS (goal: at most 3 MB, 2.5 + 0.5).
    cpp_follower_rss_kib: Option<u64>,
    cpp_follower_rss_goal_met: Option<bool>,
    /// The Wasm follower on wasmtime (AOT): the same figures (latency goal: at most 1.1).
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_wasm_wasmtime_to_rust_follower: Option<f64>,
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_wasm_wasmtime_to_rust_follower_pooled: Option<f64>,
    wasm_wasmtime_follower_latency_goal_met: Option<bool>,
    wasm_wasmtime_follower_latency_rounds_met: usize,
    wasm_wasmtime_follower_latency_rounds_measured: usize,
    /// The Wasm follower on wasmi (latency goal: at most 2).
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_wasm_wasmi_to_rust_follower: Option<f64>,
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_wasm_wasmi_to_rust_follower_pooled: Option<f64>,
    wasm_wasmi_follower_latency_goal_met: Option<bool>,
    wasm_wasmi_follower_latency_rounds_met: usize,
    wasm_wasmi_follower_latency_rounds_measured: usize,
    /// The Rust follower's VmRSS and the Wasm host's on each engine (goal for wasmtime: at
    /// most the Rust follower's + 1 MB).
    rust_follower_rss_kib: Option<u64>,
    wasm_wasmtime_host_rss_kib: Option<u64>,
    wasm_wasmi_host_rss_kib: Option<u64>,
    wasm_wasmtime_host_rss_goal_met: Option<bool>,
    /// Every round, in running order (round 1 is the configurations' runs below).
    follower_latency_rounds: Vec<JsonRound>,
    configurations: Vec<JsonConfiguration>,
}

#[derive(Serialize)]
struct JsonRound {
    round: usize,
    /// `rust`, `cpp`, `wasm_wasmtime` or `wasm_wasmi`: which follower ran first.
    first: &'static str,
    rust: JsonRoundSide,
    cpp: JsonRoundSide,
    wasm_wasmtime: JsonRoundSide,
    wasm_wasmi: JsonRoundSide,
    /// Each follower's mean over the Rust follower's in this round.
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_cpp: Option<f64>,
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_wasm_wasmtime: Option<f64>,
    #[serde(serialize_with = "json::fixed4_opt")]
    light_sensors_mean_ratio_wasm_wasmi: Option<f64>,
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
    goals: &Goals,
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
    let cpp = goals.latency_of(Setup::CPP_FOLLOWER);
    let wasmtime = goals.latency_of(Setup::WASM_WASMTIME);
    let wasmi = goals.latency_of(Setup::WASM_WASMI);
    let index = |setup: Setup| {
        CONTENDERS
            .iter()
            .position(|c| c.setup == setup)
            .expect("a contender")
    };
    let (k_cpp, k_wasmtime, k_wasmi) = (
        index(Setup::CPP_FOLLOWER),
        index(Setup::WASM_WASMTIME),
        index(Setup::WASM_WASMI),
    );
    json::print(&Json {
        samples,
        speed,
        light_sensors_mean_ratio_roslite_to_rclpy: ratio,
        light_sensors_mean_ratio_cpp_to_rust_follower: cpp.ratio,
        light_sensors_mean_ratio_cpp_to_rust_follower_pooled: cpp.pooled,
        cpp_follower_latency_goal_met: cpp.met(),
        cpp_follower_latency_rounds_met: cpp.met,
        cpp_follower_latency_rounds_measured: cpp.measured,
        cpp_follower_rss_kib: goals.cpp_follower_rss_kib,
        cpp_follower_rss_goal_met: goals.cpp_memory_met(),
        light_sensors_mean_ratio_wasm_wasmtime_to_rust_follower: wasmtime.ratio,
        light_sensors_mean_ratio_wasm_wasmtime_to_rust_follower_pooled: wasmtime.pooled,
        wasm_wasmtime_follower_latency_goal_met: wasmtime.met(),
        wasm_wasmtime_follower_latency_rounds_met: wasmtime.met,
        wasm_wasmtime_follower_latency_rounds_measured: wasmtime.measured,
        light_sensors_mean_ratio_wasm_wasmi_to_rust_follower: wasmi.ratio,
        light_sensors_mean_ratio_wasm_wasmi_to_rust_follower_pooled: wasmi.pooled,
        wasm_wasmi_follower_latency_goal_met: wasmi.met(),
        wasm_wasmi_follower_latency_rounds_met: wasmi.met,
        wasm_wasmi_follower_latency_rounds_measured: wasmi.measured,
        rust_follower_rss_kib: goals.rust_follower_rss_kib,
        wasm_wasmtime_host_rss_kib: goals.wasmtime_host_rss_kib,
        wasm_wasmi_host_rss_kib: goals.wasmi_host_rss_kib,
        wasm_wasmtime_host_rss_goal_met: goals.wasmtime_memory_met(),
        follower_latency_rounds: goals
            .rounds
            .iter()
            .map(|r| JsonRound {
                round: r.number,
                first: CONTENDERS
                    .iter()
                    .find(|c| c.setup == r.first)
                    .map_or("rust", |c| c.key),
                rust: JsonRoundSide::of(&r.rust),
                cpp: JsonRoundSide::of(&r.others[k_cpp]),
                wasm_wasmtime: JsonRoundSide::of(&r.others[k_wasmtime]),
                wasm_wasmi: JsonRoundSide::of(&r.others[k_wasmi]),
                light_sensors_mean_ratio_cpp: r.ratio(k_cpp),
                light_sensors_mean_ratio_wasm_wasmtime: r.ratio(k_wasmtime),
                light_sensors_mean_ratio_wasm_wasmi: r.ratio(k_wasmi),
            })
            .collect(),
        configurations,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(number: usize, rust: &[f64], cpp: Result<&[f64], &str>) -> Round {
        Round {
            number,
            first: Setup::ROSLITE,
            rust: Ok(rust.to_vec()),
            others: vec![
                cpp.map(<[f64]>::to_vec).map_err(str::to_owned),
                Err("not built".into()),
                Ok(vec![2.0 * rust[0]]),
            ],
        }
    }

    #[test]
    fn each_goal_is_judged_on_the_median_round_ratio_with_pooled_figures_and_a_count() {
        let rounds = vec![
            round(1, &[10.0, 10.0], Ok(&[30.0, 30.0])), // 3.0, a burst of load
            round(2, &[10.0, 10.0], Ok(&[9.0, 9.0])),   // 0.9
            round(3, &[20.0, 20.0], Ok(&[21.0, 21.0])), // 1.05
            round(4, &[10.0], Err("crashed")),          // no ratio: left out
        ];
        let cpp = LatencyGoal::of(0, &rounds);
        assert_eq!(cpp.ratio, Some(1.05));
        assert_eq!(cpp.met(), Some(true));
        assert_eq!((cpp.met, cpp.measured), (2, 3));
        // (30 + 30 + 9 + 9 + 21 + 21) / 6 over (10 + 10 + 10 + 10 + 20 + 20) / 6.
        let pooled = cpp.pooled.unwrap();
        assert!((pooled - 120.0 / 80.0).abs() < 1e-12, "{pooled}");
        // A follower never built has no figures; wasmi's goal is 2x.
        let wasmtime = LatencyGoal::of(1, &rounds);
        assert_eq!((wasmtime.ratio, wasmtime.met()), (None, None));
        let wasmi = LatencyGoal::of(2, &rounds);
        assert_eq!(wasmi.ratio, Some(2.0));
        assert_eq!(wasmi.met(), Some(true));
        assert_eq!((wasmi.met, wasmi.measured), (4, 4));
    }

    #[test]
    fn rounds_reverse_their_order_and_run_only_what_was_built() {
        let all = CONTENDERS;
        assert_eq!(
            Round::order(3, &all),
            [
                Setup::ROSLITE,
                Setup::CPP_FOLLOWER,
                Setup::WASM_WASMTIME,
                Setup::WASM_WASMI
            ]
        );
        assert_eq!(
            Round::order(2, &all[..1]),
            [Setup::CPP_FOLLOWER, Setup::ROSLITE]
        );
    }
}
