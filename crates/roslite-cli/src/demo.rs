//! The demo: the application of the mROS 2 line-follower evaluation, the Raspberry Pi Mouse
//! line follower. A simulated robot (`raspimouse`) and the upstream follower logic (`follower`)
//! run as two roslite processes talking RTPS over 127.0.0.1 (LOCALHOST discovery, a domain of
//! their own); the demo prints that evaluation's tables 5.2 to 5.4 (per-topic latency,
//! per-process memory) and writes a report. The launcher, the node executable and the domain
//! choice are `roslite_linetrace`'s, shared with `roslite bench linetrace`. With
//! `--cpp-follower` the follower is the C++ node on the mROS 2 API instead
//! (`crates/roslite-linetrace/cpp/follower.cpp`, built on first use by
//! `roslite_linetrace::cpp_build`). With `--wasm` the follower is that C++ node compiled to
//! WebAssembly, run by roslite's lean Wasm host on wasmtime from code compiled ahead of time
//! (built on first use by `roslite_linetrace::wasm_build`). With `--migrate` that Wasm
//! follower moves between two roslite hosts and back a few times while the robot follows the
//! line (`roslite_linetrace::migrating`; docs/migration.md).

use std::path::PathBuf;
use std::time::Duration;

use roslite_linetrace::cpp_build;
use roslite_linetrace::launch::{self, LaunchOptions, Setup, Side};
use roslite_linetrace::migrating;
use roslite_linetrace::node_program::{self, NODE};
use roslite_linetrace::nodes::NodeOptions;
use roslite_linetrace::process;
use roslite_linetrace::report;
use roslite_linetrace::wasm_build;

/// The memory goal per roslite process, in MB (10^6 bytes); the C++ follower's is 0.5 MB more.
const MEMORY_GOAL_MB: f64 = 2.5;
const CPP_MEMORY_GOAL_MB: f64 = MEMORY_GOAL_MB + 0.5;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Time scale of the application: periods and beeps divided by it (1 = the real robot's
    /// 100 Hz sensors and 20 Hz control; 1000 /cmd_vel samples then take 50 s).
    #[arg(long, default_value_t = 4.0)]
    speed: f64,
    /// Latency samples per topic.
    #[arg(long, default_value_t = 1000)]
    samples: usize,
    /// Laps the robot must complete before the demo stops.
    #[arg(long, default_value_t = 2)]
    laps: u32,
    /// Seed of the simulated sensors' noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `/cmd_vel` as geometry_msgs/TwistStamped (Jazzy) instead of Twist (Humble).
    #[arg(long)]
    twist_stamped: bool,
    /// Where to write the report (README.md and SVG charts).
    #[arg(long, default_value = "target/roslite-demo")]
    out: PathBuf,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Run the follower as the C++ node on roslite's mROS 2 API
    /// (crates/roslite-linetrace/cpp/follower.cpp), built on first use: the C ABI's static
    /// library in the size profile, then `c++ -std=c++17 -Os -static` (needs cargo, a C++
    /// compiler and the source tree).
    #[arg(long)]
    cpp_follower: bool,
    /// Run the follower as a WebAssembly node: that C++ follower compiled to wasm32-wasip1
    /// (clang with Debian's wasm32 toolchain: clang lld wasi-libc libc++-dev-wasm32
    /// libclang-rt-dev-wasm32), compiled ahead of time for wasmtime and run by the lean
    /// `roslite-wasm-host` (built on first use).
    #[arg(long, conflicts_with = "cpp_follower")]
    wasm: bool,
    /// Move the WebAssembly follower (as --wasm) from one roslite host to another and back
    /// while the robot follows the line: two lean Wasm hosts, a move every --move-every
    /// seconds (--moves of them); the report marks each move on the path and gives its
    /// downtime.
    #[arg(long, conflicts_with = "cpp_follower")]
    migrate: bool,
    /// With --migrate: how many moves.
    #[arg(long, default_value_t = 6, requires = "migrate")]
    moves: u32,
    /// With --migrate: seconds between one move and the next.
    #[arg(long, default_value_t = 1.5, requires = "migrate")]
    move_every: f64,
}

/// `roslite linetrace-node ...` (the demo's and the bench's child processes), recognised
/// before clap builds its parser so the measured processes stay lean; `None` otherwise.
pub fn node_before_clap(args: &[String]) -> Option<anyhow::Result<()>> {
    let (first, rest) = args.split_first()?;
    if first != "linetrace-node" {
        return None;
    }
    Some(
        process::Args::parse(rest)
            .and_then(|a| process::run(&a))
            .map_err(anyhow::Error::msg),
    )
}

pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.speed.is_finite() && args.speed > 0.0,
        "--speed must be a positive number"
    );
    anyhow::ensure!(args.samples > 0, "--samples must be at least 1");
    let work_dir = args.out.join("work");
    println!(
        "roslite demo: building the node executable, statically linked and size-optimised \
         (`{}`; slow only the first time) ...",
        NODE.cargo_command()
    );
    let (node_program, warning) = node_program::resolve(std::env::current_exe()?);
    if let Some(warning) = warning {
        eprintln!("warning: {warning}");
    }
    let mut wasm_follower = None;
    let (setup, cpp_follower) = if args.wasm || args.migrate {
        println!(
            "roslite demo: building the Wasm follower ({}) ...",
            wasm_build::describe()
        );
        wasm_follower = Some(wasm_build::build().map_err(anyhow::Error::msg)?);
        (Setup::WASM_WASMTIME, None)
    } else if args.cpp_follower {
        println!(
            "roslite demo: building the C++ follower (`{}`, then c++ {}) ...",
            cpp_build::library_command(roslite_linetrace::small_build::PROFILE),
            cpp_build::CXX_FLAGS.join(" ")
        );
        let exe = cpp_build::build(cpp_build::FOLLOWER, roslite_linetrace::small_build::PROFILE)
            .map_err(anyhow::Error::msg)?;
        (Setup::CPP_FOLLOWER, Some(exe))
    } else {
        (Setup::ROSLITE, None)
    };
    let options = LaunchOptions {
        node_program: node_program.clone(),
        python: None,
        cpp_follower,
        wasm_follower,
        work_dir,
        domain: launch::domain_for_run(0),
        node: NodeOptions {
            speed: args.speed,
            seed: args.seed,
            twist_stamped: args.twist_stamped,
        },
        samples: args.samples,
        min_laps: args.laps,
        timeout: Duration::from_secs_f64(args.timeout),
    };
    println!(
        "roslite demo: the Raspberry Pi Mouse line follower (the mROS 2 line-follower \
         evaluation's application), robot and follower as two \
         roslite processes (discovery over RTPS on 127.0.0.1, domain {}; topics over shared \
         memory between them, ROSLITE_TRANSPORTS to change), {}x speed; running until {} \
         /cmd_vel samples and {} laps...",
        options.domain, args.speed, args.samples, args.laps
    );
    println!("roslite processes: {}", node_program.describe());
    let mut moves_text = String::new();
    let result = if args.migrate {
        anyhow::ensure!(
            args.move_every.is_finite() && args.move_every > 0.0,
            "--move-every must be a positive number of seconds"
        );
        println!(
            "roslite demo: the follower moves between hosts {} and {} {} times, every {} s ...",
            migrating::HOSTS[0],
            migrating::HOSTS[1],
            args.moves,
            args.move_every
        );
        let moved = migrating::run(
            &options,
            &migrating::MigrationPlan {
                moves: args.moves,
                interval: Duration::from_secs_f64(args.move_every),
                emulated: None,
            },
        )?;
        moves_text = moves_table(&moved);
        print!("\n{moves_text}");
        moved.run
    } else {
        launch::run(setup, &options)?
    };
    println!(
        "\nThe robot completed {:.2} laps of the 2.57 m course; its axle stayed within {:.1} mm \
         of the line's centre line ({:.1} s).\n",
        result.laps,
        result.max_cross_track_m * 1000.0,
        result.wall_s
    );
    if args.migrate {
        println!(
            "Latency while the follower moves: its clock skips the time each move takes, so \
             its traced times are put on the machine's clock with how far behind each target \
             host reports it (roslite_interfaces/msg/HostedNode's guest_clock_behind_ns)."
        );
    }
    if args.migrate {
        println!("Latency, publish -> subscription callback start (CLOCK_MONOTONIC), every sample after the start (the follower moving):");
    } else {
        println!("Latency, publish -> subscription callback start (CLOCK_MONOTONIC), first {} samples after the start:", args.samples);
    }
    print!(
        "{}",
        report::latency_table(
            "/light_sensors",
            &[(&result.label, &result.light_sensors_us)]
        )
    );
    print!(
        "{}",
        report::latency_table("/cmd_vel", &[(&result.label, &result.cmd_vel_us)])
    );
    println!("\nMemory per process while following (RES = RssAnon, SHR = RssFile + RssShmem, RSS = VmRSS):");
    print!("{}", report::memory_table(&result.memory));
    let cpp_process = Side::RosliteCpp.follower_process();
    let wasm_process = setup.follower.follower_process();
    for m in &result.memory {
        let mb = m.vm_rss as f64 * 1024.0 / 1e6;
        if args.migrate && m.process.starts_with("follower host") {
            println!(
                "  {} {mb:.2} MB RSS (a Wasm host; no goal of its own)",
                m.process
            );
            continue;
        }
        if args.wasm && m.process == wasm_process {
            // Its goal is relative: the native follower's RSS + 1 MB, measured in one run.
            println!(
                "  {} {mb:.2} MB RSS (goal: the native follower's + 1 MB; `roslite bench \
                 linetrace` measures both in one run)",
                m.process
            );
            continue;
        }
        let (goal, what) = if m.process == cpp_process {
            (CPP_MEMORY_GOAL_MB, "the C++ follower (2.5 + 0.5)")
        } else {
            (MEMORY_GOAL_MB, "per roslite process")
        };
        println!(
            "  goal <= {goal} MB RSS {what}: {} {:.2} MB -> {}",
            m.process,
            mb,
            if mb <= goal { "met" } else { "NOT met" }
        );
    }
    if let Some(note) = roslite_linetrace::small_build::glibc_note() {
        println!("  note: {note}");
    }
    let preface = format!(
        "`roslite demo`: simulated Raspberry Pi Mouse and the upstream line follower as two roslite \
         processes over RTPS/UDP on 127.0.0.1{}, {}x speed, seed {}, {} samples per topic.",
        if args.migrate {
            " (the follower in C++ on the mROS 2 API, as a WebAssembly node on wasmtime, AOT, \
             moving between two roslite hosts)"
        } else if args.wasm {
            " (the follower in C++ on the mROS 2 API, as a WebAssembly node on wasmtime, AOT)"
        } else if args.cpp_follower {
            " (the follower in C++ on the mROS 2 API)"
        } else {
            ""
        },
        args.speed,
        args.seed,
        args.samples
    );
    let preface = if moves_text.is_empty() {
        preface
    } else {
        format!("{preface}\n\n## Moves between hosts\n\n```\n{moves_text}```")
    };
    report::write_report(
        &args.out,
        "roslite line-follower demo",
        &preface,
        &[&result],
    )?;
    println!("\nReport: {}", args.out.join("README.md").display());
    Ok(())
}

/// The moves of a `--migrate` run and what was lost, as a text table.
fn moves_table(moved: &migrating::MigratingResult) -> String {
    use std::fmt::Write as _;
    let mut out =
        String::from("move  from         to           downtime ms  paused ms  snapshot KiB\n");
    for (i, m) in moved.moves.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>4}  {:<12} {:<12} {:>11.2}  {:>9.2}  {:>12.1}",
            i + 1,
            m.from,
            m.to,
            m.downtime_us / 1e3,
            m.paused_us as f64 / 1e3,
            m.snapshot_bytes as f64 / 1024.0
        );
    }
    let _ = writeln!(
        out,
        "downtime: the follower's last callback on one host to its first on the other; \
         /light_sensors: {} received, {} lost in a move, {} duplicated",
        moved.light_sensors_received, moved.light_sensors_lost, moved.light_sensors_duplicated
    );
    out
}
