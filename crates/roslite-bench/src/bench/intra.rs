//! Intra-process one-way latency across message sizes.
//!
//! A publisher thread sends `std_msgs/UInt8MultiArray` messages one at a time to a subscription
//! spun by an executor on another thread. The latency is callback start minus the `publish`
//! call, both on `CLOCK_MONOTONIC`, so it includes the executor's wake-up. The subscription takes
//! ownership of each message and hands it back through a channel, and the publisher sends the
//! same buffer again: what is measured is delivery alone, not allocating, filling or freeing
//! tens of MiB (which costs milliseconds of page faults and TLB shootdowns on the other core).
//! The bench checks that every message arrives in the very buffer that was published.

use std::sync::mpsc;
use std::time::Duration;

use roslite::msgs::std_msgs::msg::UInt8MultiArray;
use roslite::{Context, ContextOptions, Executor, Instant, MessageInfo};
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::stats::Summary;

#[derive(clap::Args)]
pub struct IntraArgs {
    /// Samples per size (the 64 MiB size uses a quarter of them).
    #[arg(long, default_value_t = 400)]
    samples: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

const SIZES: [(usize, &str); 3] = [(64, "64 B"), (4 << 20, "4 MiB"), (64 << 20, "64 MiB")];

pub fn run(args: &IntraArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.samples >= 4, "--samples must be at least 4");
    let mut rows = Vec::new();
    for (size, label) in SIZES {
        let samples = if size >= 64 << 20 {
            (args.samples / 4).max(4)
        } else {
            args.samples
        };
        let latencies = measure(size, samples)?;
        let summary = Summary::of(&latencies).ok_or_else(|| anyhow::anyhow!("no samples"))?;
        rows.push((size, label, summary));
    }
    let base = rows[0].2.p50_us;
    if args.json {
        json::print(&Json {
            bench: "intra",
            results: rows
                .iter()
                .map(|&(size, _, s)| JsonRow {
                    size_bytes: size,
                    samples: s.count,
                    min_us: s.min_us,
                    mean_us: s.mean_us,
                    p50_us: s.p50_us,
                    p99_us: s.p99_us,
                    max_us: s.max_us,
                    p50_ratio_to_64b: s.p50_us / base,
                })
                .collect(),
        });
        return Ok(());
    }
    println!("intra-process one-way latency (publish -> subscription callback start)");
    println!(
        "{:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>14}",
        "size", "samples", "min us", "p50 us", "p99 us", "max us", "p50 vs 64 B"
    );
    for (_, label, s) in &rows {
        println!(
            "{:>8} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>13.2}x",
            label,
            s.count,
            s.min_us,
            s.p50_us,
            s.p99_us,
            s.max_us,
            s.p50_us / base
        );
    }
    let worst = rows[1..]
        .iter()
        .map(|(_, _, s)| s.p50_us / base)
        .fold(0.0, f64::max);
    println!(
        "goal: 4 MiB and 64 MiB p50 within 3x of 64 B -> {} (worst {:.2}x)",
        if worst <= 3.0 { "met" } else { "NOT met" },
        worst
    );
    Ok(())
}

/// `--json`: one row per size.
#[derive(Serialize)]
struct Json {
    bench: &'static str,
    results: Vec<JsonRow>,
}

#[derive(Serialize)]
struct JsonRow {
    size_bytes: usize,
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
    #[serde(serialize_with = "json::fixed3")]
    p50_ratio_to_64b: f64,
}

/// Pause between samples, so each one measures a sleeping executor being woken.
const PACING: Duration = Duration::from_millis(1);

fn measure(size: usize, samples: usize) -> anyhow::Result<Vec<Duration>> {
    let ctx = Context::new(ContextOptions::default())?;
    let node = ctx.create_node("bench_intra")?;
    let (back_tx, back_rx) = mpsc::channel::<(Duration, UInt8MultiArray)>();
    let _subscription = node.create_subscription(
        "bench",
        roslite::QosProfile::keep_last(1),
        move |msg: UInt8MultiArray, info: &MessageInfo| {
            let latency = Instant::monotonic_now() - info.source_timestamp;
            // Ignoring a send error: the publisher side has finished.
            let _ = back_tx.send((latency, msg));
        },
    )?;
    let publisher =
        node.create_publisher::<UInt8MultiArray>("bench", roslite::QosProfile::keep_last(1))?;
    let spinner = {
        let ctx = ctx.clone();
        let node = node.clone();
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };
    let mut message = UInt8MultiArray {
        data: vec![0xa5u8; size].into(),
        ..Default::default()
    };
    let buffer = message.data.as_ptr();
    let mut latencies = Vec::with_capacity(samples);
    for _ in 0..samples {
        std::thread::sleep(PACING);
        publisher.publish(message)?;
        let (latency, returned) = back_rx.recv_timeout(Duration::from_secs(10))?;
        anyhow::ensure!(
            returned.data.as_ptr() == buffer && returned.data.len() == size,
            "the {size}-byte message was copied on its way to the subscription"
        );
        latencies.push(latency);
        message = returned;
    }
    ctx.shutdown();
    spinner
        .join()
        .map_err(|_| anyhow::anyhow!("executor thread panicked"))?;
    Ok(latencies)
}
