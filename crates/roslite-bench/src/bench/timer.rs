//! Timer wake-up latency, the experiment of the ROS 2 timer wake-up latency study on a
//! Raspberry Pi: when does a periodic callback start, relative to when it was due? Measured in one run, with the same scheduling settings, the in-process
//! variants interleaved in one-second slices:
//! - `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` in a loop (the kernel's floor),
//! - a futex wait with an absolute timeout (what executors sleep on),
//! - a roslite timer on a single-threaded executor,
//! - the same timer while a busy subscription shares the executor,
//! - an rclpy timer (real ROS 2), when a Python with rclpy is available.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::msgs::std_msgs::msg::UInt64;
use roslite::{Context, ContextOptions, Executor, Instant, RealtimeOptions, TimerCall};
use roslite_executor::rt;
use serde::Serialize;

use crate::toolkit::rclpy::{find_python, FASTDDS_LOOPBACK_PROFILE};
use crate::toolkit::stats::Summary;
use crate::toolkit::units::parse_duration;
use crate::toolkit::{json, plot};

#[derive(clap::Args)]
pub struct TimerArgs {
    /// Timer period, e.g. 10ms, 1ms, 500us.
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    period: Duration,
    /// How long each variant runs, e.g. 60s.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// SCHED_FIFO priority (1-99) for the measuring thread (and the rclpy process).
    #[arg(long)]
    rt_priority: Option<u8>,
    /// Pin the measuring thread (and the rclpy process) to these CPUs, e.g. 1 or 0-1.
    #[arg(long)]
    cpus: Option<String>,
    /// Lock the process's memory.
    #[arg(long)]
    mlockall: bool,
    /// Timer slack in ns for the measuring thread (and the rclpy process); Linux's default is
    /// 50000.
    #[arg(long)]
    timer_slack_ns: Option<u64>,
    /// Python interpreter with rclpy for the ROS 2 reference (default: $ROSLITE_PYTHON, else
    /// ./.venv/bin/python as created by `cargo xtask test`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the rclpy reference.
    #[arg(long)]
    no_rclpy: bool,
    /// Where to write the SVG histogram.
    #[arg(long, default_value = "bench-results/timer-wakeup.svg")]
    svg: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

struct Variant {
    name: &'static str,
    latencies: Vec<Duration>,
    note: Option<String>,
}

pub fn run(args: &TimerArgs) -> anyhow::Result<()> {
    let realtime = RealtimeOptions {
        fifo_priority: args.rt_priority,
        cpus: args
            .cpus
            .as_deref()
            .map(|c| rt::parse_cpu_list("--cpus", c))
            .transpose()?,
        mlockall: args.mlockall,
        timer_slack_ns: args.timer_slack_ns,
    };
    realtime
        .apply_to_current_thread()
        .context("applying the scheduling settings")?;
    // The in-process variants take turns in slices of about a second, so background load on a
    // shared machine falls on all of them alike instead of on whichever ran at the time.
    let slice = Duration::from_secs(1)
        .max(args.period * 10)
        .min(args.duration);
    let slices = (args.duration.as_secs_f64() / slice.as_secs_f64())
        .ceil()
        .max(1.0) as u32;
    let slice = args.duration / slices;
    let names = [
        "clock_nanosleep",
        "futex wait",
        "roslite timer",
        "roslite timer + busy sub",
    ];
    let mut variants: Vec<Variant> = names
        .iter()
        .map(|name| Variant {
            name,
            latencies: Vec::new(),
            note: None,
        })
        .collect();
    for _ in 0..slices {
        variants[0]
            .latencies
            .extend(nanosleep_loop(args.period, slice)?);
        variants[1].latencies.extend(futex_loop(args.period, slice));
        variants[2]
            .latencies
            .extend(roslite_timer(args.period, slice, false)?);
        variants[3]
            .latencies
            .extend(roslite_timer(args.period, slice, true)?);
    }
    if !args.no_rclpy {
        match rclpy_timer(args, &realtime) {
            Ok(latencies) => variants.push(Variant {
                name: "rclpy timer (ROS 2)",
                latencies,
                note: None,
            }),
            Err(e) => variants.push(Variant {
                name: "rclpy timer (ROS 2)",
                latencies: Vec::new(),
                note: Some(format!("not run: {e:#}")),
            }),
        }
    }
    let summaries: Vec<Option<Summary>> =
        variants.iter().map(|v| Summary::of(&v.latencies)).collect();
    let floor = summaries[0].ok_or_else(|| anyhow::anyhow!("no nanosleep samples"))?;
    write_svg(args, &variants, &floor)?;
    if args.json {
        print_json(args, &variants, &summaries);
    } else {
        print_table(args, &variants, &summaries, &floor);
    }
    Ok(())
}

fn timespec(at: Instant) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: (at.as_nanos() / 1_000_000_000) as i64,
        tv_nsec: (at.as_nanos() % 1_000_000_000) as i64,
    }
}

fn nanosleep_loop(period: Duration, duration: Duration) -> anyhow::Result<Vec<Duration>> {
    let start = Instant::monotonic_now();
    let end = start + duration;
    let mut deadline = start + period;
    let mut out = Vec::new();
    while deadline <= end {
        rustix::thread::clock_nanosleep_absolute(
            rustix::time::ClockId::Monotonic,
            &timespec(deadline),
        )
        .map_err(|e| anyhow::anyhow!("clock_nanosleep failed: {e}"))?;
        out.push(Instant::monotonic_now() - deadline);
        deadline = deadline + period;
    }
    Ok(out)
}

fn futex_loop(period: Duration, duration: Duration) -> Vec<Duration> {
    let word = AtomicU32::new(0);
    let start = Instant::monotonic_now();
    let end = start + duration;
    let mut deadline = start + period;
    let mut out = Vec::new();
    while deadline <= end {
        // Nobody wakes this word: the wait ends at the absolute deadline (or spuriously, which
        // the loop absorbs).
        while Instant::monotonic_now() < deadline {
            let _ = rustix::thread::futex::wait_bitset(
                &word,
                rustix::thread::futex::Flags::PRIVATE,
                0,
                Some(&timespec(deadline)),
                NonZeroU32::MAX,
            );
        }
        out.push(Instant::monotonic_now() - deadline);
        deadline = deadline + period;
    }
    out
}

/// How long each busy-subscription callback works, and how often a message arrives.
const BUSY_WORK: Duration = Duration::from_micros(20);
const BUSY_INTERVAL: Duration = Duration::from_micros(200);

fn roslite_timer(
    period: Duration,
    duration: Duration,
    busy: bool,
) -> anyhow::Result<Vec<Duration>> {
    let ctx = Context::new(ContextOptions::default())?;
    let node = ctx.create_node("bench_timer")?;
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let sink = latencies.clone();
    let _timer = node.create_timer(period, move |call: &TimerCall| {
        let latency = Instant::monotonic_now() - call.expected;
        sink.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(latency);
    })?;
    let _subscription = node.create_subscription("busy", 100, |_: &UInt64| {
        let start = Instant::monotonic_now();
        while Instant::monotonic_now() - start < BUSY_WORK {
            std::hint::spin_loop();
        }
    })?;
    let stop = Arc::new(AtomicBool::new(false));
    let load = busy.then(|| {
        let publisher = node.create_publisher::<UInt64>("busy", 100);
        let stop = stop.clone();
        std::thread::spawn(move || -> anyhow::Result<()> {
            let publisher = publisher?;
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                publisher.publish(UInt64 { data: n })?;
                n += 1;
                std::thread::sleep(BUSY_INTERVAL);
            }
            Ok(())
        })
    });
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    // Half a period of slack so the last deadline inside `duration` is served.
    executor.spin_for(duration + period / 2);
    stop.store(true, Ordering::Relaxed);
    if let Some(load) = load {
        load.join()
            .map_err(|_| anyhow::anyhow!("load thread panicked"))??;
    }
    let latencies = std::mem::take(
        &mut *latencies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    Ok(latencies)
}

fn rclpy_timer(args: &TimerArgs, realtime: &RealtimeOptions) -> anyhow::Result<Vec<Duration>> {
    let python = find_python(args.python.as_deref())?;
    let dir = std::env::temp_dir().join(format!("roslite-bench-timer-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("rclpy_timer.py");
    std::fs::write(&script, include_str!("../../python/rclpy_timer.py"))?;
    let profile = dir.join("fastdds-loopback.xml");
    std::fs::write(&profile, FASTDDS_LOOPBACK_PROFILE)?;
    let child = Command::new(&python)
        .arg(&script)
        .arg(args.period.as_secs_f64().to_string())
        .arg(args.duration.as_secs_f64().to_string())
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env("FASTDDS_DEFAULT_PROFILES_FILE", &profile)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;
    // Threads the interpreter starts later (rclpy's executor, Fast DDS) inherit these; mlockall
    // can only be done by a process itself, so the reference runs without it.
    let for_child = RealtimeOptions {
        mlockall: false,
        ..realtime.clone()
    };
    for_child
        .apply_to_process(child.id())
        .context("applying the scheduling settings to the rclpy process")?;
    let output = child.wait_with_output()?;
    let _ = std::fs::remove_dir_all(&dir);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!("{} exited with {}: {last}", python.display(), output.status);
    }
    let text = String::from_utf8(output.stdout)?;
    text.lines()
        .map(|line| {
            Ok(Duration::from_nanos(
                line.trim().parse::<i64>()?.max(0) as u64
            ))
        })
        .collect()
}

fn write_svg(args: &TimerArgs, variants: &[Variant], floor: &Summary) -> anyhow::Result<()> {
    let series: Vec<(String, Vec<f64>)> = variants
        .iter()
        .filter(|v| !v.latencies.is_empty())
        .map(|v| {
            (
                v.name.to_owned(),
                v.latencies.iter().map(|d| d.as_secs_f64() * 1e6).collect(),
            )
        })
        .collect();
    // Zoom on where the kernel floor lives; slower outliers land in the overflow bar.
    let x_max = (floor.p99_us * 4.0).max(100.0);
    let title = format!(
        "Timer wake-up latency, period {:?}, {:?} per variant",
        args.period, args.duration
    );
    let chart = plot::histograms(&title, "wake-up latency (us)", x_max, &series)?;
    plot::write_svg(&args.svg, &chart)
}

fn print_table(
    args: &TimerArgs,
    variants: &[Variant],
    summaries: &[Option<Summary>],
    floor: &Summary,
) {
    println!(
        "timer wake-up latency (callback start - scheduled time), period {:?}, {:?} per variant",
        args.period, args.duration
    );
    println!(
        "{:<26} {:>8} {:>9} {:>9} {:>9} {:>10} {:>14} {:>14}",
        "variant", "samples", "min us", "p50 us", "p99 us", "max us", "p99 - floor", "max - floor"
    );
    for (variant, summary) in variants.iter().zip(summaries) {
        match summary {
            Some(s) => println!(
                "{:<26} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>+13.1}us {:>+13.1}us",
                variant.name,
                s.count,
                s.min_us,
                s.p50_us,
                s.p99_us,
                s.max_us,
                s.p99_us - floor.p99_us,
                s.max_us - floor.max_us
            ),
            None => println!(
                "{:<26} {}",
                variant.name,
                variant.note.as_deref().unwrap_or("no samples")
            ),
        }
    }
    if let Some(roslite) = summaries[2] {
        let p99_ok = roslite.p99_us <= floor.p99_us + 10.0;
        let max_ok = roslite.max_us <= floor.max_us + 50.0;
        println!(
            "goals (roslite timer vs clock_nanosleep): p99 within +10 us -> {}; max within +50 us -> {}",
            if p99_ok { "met" } else { "NOT met" },
            if max_ok { "met" } else { "NOT met" }
        );
    }
    println!("histogram: {}", args.svg.display());
}

/// `--json`: one row per variant; one that did not run says why.
#[derive(Serialize)]
struct Json {
    bench: &'static str,
    period_us: u64,
    #[serde(serialize_with = "json::number")]
    duration_s: f64,
    svg: String,
    results: Vec<JsonRow>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum JsonRow {
    Measured {
        variant: &'static str,
        samples: usize,
        #[serde(serialize_with = "json::fixed3")]
        min_us: f64,
        #[serde(serialize_with = "json::fixed3")]
        mean_us: f64,
        #[serde(serialize_with = "json::fixed3")]
        p50_us: f64,
        #[serde(serialize_with = "json::fixed3")]
        p99_us: f64,
        #[serde(serialize_with = "json::fixed3")]
        max_us: f64,
    },
    Skipped {
        variant: &'static str,
        samples: usize,
        skipped: String,
    },
}

fn print_json(args: &TimerArgs, variants: &[Variant], summaries: &[Option<Summary>]) {
    let results = variants
        .iter()
        .zip(summaries)
        .map(|(v, s)| match s {
            Some(s) => JsonRow::Measured {
                variant: v.name,
                samples: s.count,
                min_us: s.min_us,
                mean_us: s.mean_us,
                p50_us: s.p50_us,
                p99_us: s.p99_us,
                max_us: s.max_us,
            },
            None => JsonRow::Skipped {
                variant: v.name,
                samples: 0,
                skipped: v.note.clone().unwrap_or_default(),
            },
        })
        .collect();
    json::print(&Json {
        bench: "timer",
        period_us: u64::try_from(args.period.as_micros()).unwrap_or(u64::MAX),
        duration_s: args.duration.as_secs_f64(),
        svg: args.svg.display().to_string(),
        results,
    });
}
