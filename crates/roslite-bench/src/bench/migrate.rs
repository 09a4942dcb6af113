//! `roslite bench migrate`: how long a running node is away while it moves between hosts
//! (docs/migration.md).
//!
//! The mROS 2 line follower, as a WebAssembly node on wasmtime (AOT), follows the line for the
//! roslite robot while it moves back and forth between two roslite hosts on this machine
//! (`roslite_linetrace::migrating`: two lean `roslite-wasm-host` processes, RTPS discovery on
//! 127.0.0.1, the topics over the same-host paths). Per move: the downtime, from the
//! follower's last callback on the source to its first on the target (CLOCK_MONOTONIC, which
//! the processes of one machine share); the snapshot's size; the time the source took to hold
//! the node between callbacks and take its snapshot, and the target to restore it. Over the
//! run: `/light_sensors` messages the robot published that a move lost (the follower received
//! the one before on one host and the one after on the other) and those received twice
//! (`roslite_linetrace::migrating`).

use std::path::PathBuf;
use std::time::Duration;

use roslite_linetrace::launch::{self, LaunchOptions};
use roslite_linetrace::migrating::{self, EmulatedHost, MigrationPlan};
use roslite_linetrace::node_program;
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::wasm_build;
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::stats::Distribution;

/// The goals (issue: live migration): downtime p50 and p99 over the moves, in ms.
const DOWNTIME_P50_GOAL_MS: f64 = 20.0;
const DOWNTIME_P99_GOAL_MS: f64 = 50.0;

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// How many moves (alternating between the two hosts).
    #[arg(long, default_value_t = 100)]
    moves: u32,
    /// Time between one move's end and the next move's start, in milliseconds.
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Simulation speed factor.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Make the second host an aarch64 one under qemu-user (Debian's gcc-aarch64-linux-gnu,
    /// libc6-dev-arm64-cross and qemu-user, and `rustup target add aarch64-unknown-linux-gnu`;
    /// the host is built on first use, about 4 minutes): the follower moves between x86_64
    /// and emulated aarch64. Its figures are of an emulated machine, not of aarch64.
    #[arg(long)]
    aarch64: bool,
    /// Keep the run's traces and logs here (a temporary directory otherwise).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    /// The second host was aarch64 under qemu-user: emulated figures, no downtime goal.
    emulated_aarch64: bool,
    moves: usize,
    #[serde(serialize_with = "json::fixed3")]
    downtime_p50_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    downtime_p99_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    downtime_max_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    paused_p50_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    capture_p50_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    restore_p50_ms: f64,
    snapshot_p50_bytes: u64,
    snapshot_max_bytes: u64,
    light_sensors_received: u64,
    light_sensors_lost: u64,
    light_sensors_duplicated: u64,
    light_sensors_overwritten_elsewhere: u64,
    /// One-way latency while the follower moves (every sample after it starts following;
    /// its traced times put on the machine's clock), and the traced receptions joined to no
    /// traced publication by publication sequence number.
    light_sensors_latency: Latency,
    cmd_vel_latency: Latency,
    trace_unmatched: u64,
    laps: f64,
    #[serde(serialize_with = "json::fixed1")]
    max_cross_track_mm: f64,
    /// None for an emulated run, which has no downtime goal.
    downtime_goals_met: Option<bool>,
    per_move: Vec<MoveFigures>,
}

/// A topic's latency samples.
#[derive(Serialize)]
struct Latency {
    samples: usize,
    #[serde(serialize_with = "json::fixed1")]
    p50_us: f64,
    #[serde(serialize_with = "json::fixed1")]
    p99_us: f64,
    #[serde(serialize_with = "json::fixed1")]
    max_us: f64,
}

impl Latency {
    fn of(samples: &[f64]) -> Self {
        let d = Distribution::of(samples);
        Self {
            samples: samples.len(),
            p50_us: d.as_ref().map_or(0.0, |d| d.p50),
            p99_us: d.as_ref().map_or(0.0, |d| d.p99),
            max_us: d.as_ref().map_or(0.0, |d| d.max),
        }
    }
}

/// One move's raw figures.
#[derive(Serialize)]
struct MoveFigures {
    from: String,
    to: String,
    #[serde(serialize_with = "json::fixed1")]
    downtime_us: f64,
    paused_us: u64,
    capture_us: u64,
    restore_us: u64,
    snapshot_bytes: u64,
}

pub fn run(args: &MigrateArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.moves >= 1, "--moves must be at least 1");
    anyhow::ensure!(
        args.speed.is_finite() && args.speed > 0.0,
        "--speed must be a positive number"
    );
    let (node_program, warning) = node_program::resolve(std::env::current_exe()?);
    if let Some(warning) = warning {
        eprintln!("warning: {warning}");
    }
    if !args.json {
        eprintln!(
            "building or finding the Wasm follower ({}) ...",
            wasm_build::describe()
        );
    }
    let follower = wasm_build::build().map_err(anyhow::Error::msg)?;
    let follower_wasm = follower.wasm.clone();
    let work = args.out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("roslite-bench-migrate-{}", std::process::id()))
    });
    let options = LaunchOptions {
        node_program,
        python: None,
        cpp_follower: None,
        wasm_follower: Some(follower),
        work_dir: work.clone(),
        domain: launch::domain_for_run(3),
        node: NodeOptions {
            speed: args.speed,
            seed: 1,
            twist_stamped: false,
        },
        samples: 200,
        min_laps: 0,
        timeout: Duration::from_secs(120 + u64::from(args.moves) * 3),
    };
    let emulated = if args.aarch64 {
        if !args.json {
            eprintln!("building or finding the aarch64 host (cargo, once about 4 minutes) ...");
        }
        Some(emulated_host(follower_wasm.as_path())?)
    } else {
        None
    };
    let plan = MigrationPlan {
        moves: args.moves,
        interval: Duration::from_millis(args.interval_ms),
        emulated,
    };
    if !args.json {
        eprintln!(
            "running the line follower, moving {} times between two hosts ...",
            args.moves
        );
    }
    let result = migrating::run(&options, &plan)?;
    if args.out.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    let ms = |f: &dyn Fn(&migrating::MoveRecord) -> f64| -> Vec<f64> {
        result.moves.iter().map(f).collect()
    };
    let downtime = Distribution::of(&ms(&|m| m.downtime_us / 1e3))
        .ok_or_else(|| anyhow::anyhow!("no move was measured"))?;
    let median = |values: Vec<f64>| Distribution::of(&values).map_or(0.0, |d| d.p50);
    let mut sizes: Vec<u64> = result.moves.iter().map(|m| m.snapshot_bytes).collect();
    sizes.sort_unstable();
    let report = Report {
        emulated_aarch64: args.aarch64,
        moves: result.moves.len(),
        downtime_p50_ms: downtime.p50,
        downtime_p99_ms: downtime.p99,
        downtime_max_ms: downtime.max,
        paused_p50_ms: median(ms(&|m| m.paused_us as f64 / 1e3)),
        capture_p50_ms: median(ms(&|m| m.capture_us as f64 / 1e3)),
        restore_p50_ms: median(ms(&|m| m.restore_us as f64 / 1e3)),
        snapshot_p50_bytes: sizes[sizes.len() / 2],
        snapshot_max_bytes: *sizes.last().expect("at least one move"),
        light_sensors_received: result.light_sensors_received,
        light_sensors_lost: result.light_sensors_lost,
        light_sensors_duplicated: result.light_sensors_duplicated,
        light_sensors_overwritten_elsewhere: result.light_sensors_overwritten_elsewhere,
        light_sensors_latency: Latency::of(&result.run.light_sensors_us),
        cmd_vel_latency: Latency::of(&result.run.cmd_vel_us),
        trace_unmatched: result.run.unmatched as u64,
        laps: result.run.laps,
        max_cross_track_mm: result.run.max_cross_track_m * 1e3,
        downtime_goals_met: (!args.aarch64).then_some(
            downtime.p50 <= DOWNTIME_P50_GOAL_MS && downtime.p99 <= DOWNTIME_P99_GOAL_MS,
        ),
        per_move: result
            .moves
            .iter()
            .map(|m| MoveFigures {
                from: m.from.clone(),
                to: m.to.clone(),
                downtime_us: m.downtime_us,
                paused_us: m.paused_us,
                capture_us: m.capture_us,
                restore_us: m.restore_us,
                snapshot_bytes: m.snapshot_bytes,
            })
            .collect(),
    };
    if args.json {
        json::print(&report);
        return Ok(());
    }
    print_table(&report);
    Ok(())
}

/// The aarch64 host and the follower compiled for it, next to this binary's target directory
/// (`target/cross-aarch64`, `target/wasm-nodes/linetrace-follower-aarch64`).
fn emulated_host(follower_wasm: &std::path::Path) -> anyhow::Result<EmulatedHost> {
    let root = roslite_linetrace::small_build::workspace_root().ok_or_else(|| {
        anyhow::anyhow!("the roslite source tree this binary was built from is not there any more")
    })?;
    let exe = std::env::current_exe()?;
    let target =
        roslite_linetrace::small_build::target_dir_of(&exe).unwrap_or_else(|| root.join("target"));
    let (program, _) = roslite_wasm::cross::build_host(&root, &target.join("cross-aarch64"))
        .map_err(anyhow::Error::msg)?;
    let module_dir = target
        .join("wasm-nodes")
        .join(format!("{}-aarch64", wasm_build::NAME));
    std::fs::create_dir_all(&module_dir)?;
    let code = roslite_wasm::engine::wasmtime_engine::precompile(
        &std::fs::read(follower_wasm)?,
        Some(roslite_wasm::cross::AARCH64),
    )
    .map_err(|e| anyhow::anyhow!("compiling the follower for aarch64: {e}"))?;
    std::fs::write(module_dir.join(format!("{}.cwasm", wasm_build::NAME)), code)?;
    Ok(EmulatedHost {
        program,
        module_dir,
    })
}

fn print_table(r: &Report) {
    println!(
        "migrate: the mROS 2 line follower as a WebAssembly node (wasmtime, AOT) moved {} times \
         between two roslite hosts on this machine{} while it follows the line for the roslite \
         robot",
        r.moves,
        if r.emulated_aarch64 {
            " (the second an aarch64 host under qemu-user: its times are of an emulated machine, \
             not of aarch64)"
        } else {
            ""
        }
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "per move", "p50", "p99", "max"
    );
    println!(
        "{:<44} {:>10.2} {:>10.2} {:>10.2}",
        "downtime, ms (last callback -> first callback)",
        r.downtime_p50_ms,
        r.downtime_p99_ms,
        r.downtime_max_ms
    );
    println!(
        "{:<44} {:>10.2}",
        "paused on the source until running, ms", r.paused_p50_ms
    );
    println!(
        "{:<44} {:>10.2}",
        "capture (hold + snapshot), ms", r.capture_p50_ms
    );
    println!(
        "{:<44} {:>10.2}",
        "restore on the target, ms", r.restore_p50_ms
    );
    println!(
        "{:<44} {:>10.1} {:>10} {:>10.1}",
        "snapshot, KiB",
        r.snapshot_p50_bytes as f64 / 1024.0,
        "",
        r.snapshot_max_bytes as f64 / 1024.0
    );
    for (topic, l) in [
        ("/light_sensors", &r.light_sensors_latency),
        ("/cmd_vel", &r.cmd_vel_latency),
    ] {
        println!(
            "{:<44} {:>10.1} {:>10.1} {:>10.1}",
            format!("{topic} latency, us ({} samples)", l.samples),
            l.p50_us,
            l.p99_us,
            l.max_us
        );
    }
    println!(
        "latency: one way, every sample while the follower moves (its times on the machine's \
         clock); {} traced receptions were joined to no publication by sequence number",
        r.trace_unmatched
    );
    println!(
        "/light_sensors: {} received by the follower, {} lost in a move, {} duplicated (and {} \
         overwritten in its depth-1 queue while it was busy on one host, as without moves); the \
         robot ran {:.2} laps within {:.1} mm of the line",
        r.light_sensors_received,
        r.light_sensors_lost,
        r.light_sensors_duplicated,
        r.light_sensors_overwritten_elsewhere,
        r.laps,
        r.max_cross_track_mm
    );
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    if let Some(met) = r.downtime_goals_met {
        println!(
            "goal: downtime p50 <= {DOWNTIME_P50_GOAL_MS} ms and p99 <= {DOWNTIME_P99_GOAL_MS} \
             ms -> {}",
            verdict(met)
        );
    }
    println!(
        "goal: 0 messages lost or duplicated -> {}",
        verdict(r.light_sensors_lost == 0 && r.light_sensors_duplicated == 0)
    );
}
