//! `cargo run --release -p roslite-bench --example shm_rtt -- [shm|uds] [--rate] [--count N] [--sizes 64,4096] [--json]`
//!
//! Round trips between two processes over a bare roslite-shm transport, at the sizes of the IPC
//! framework comparison for ROS 2 local communication, with the machine's floors measured in
//! the same run; then the goal ratios. `roslite bench rtt --transport shm|uds` measures the
//! same next to roslite's user API and the DDS peers.

use roslite_bench::toolkit::transport::{self as bench, BenchTransport, Pace, DEFAULT_SIZES};

fn main() {
    roslite_bench::run_child_if_requested();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let transport = if args.iter().any(|a| a == "uds") {
        BenchTransport::Uds
    } else {
        BenchTransport::Shm
    };
    let count = args
        .iter()
        .position(|a| a == "--count")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(1000);
    let pace = if args.iter().any(|a| a == "--rate") {
        Pace::Rate { hz: 10, count: 100 }
    } else {
        Pace::BackToBack { count }
    };
    let sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--sizes")
        .and_then(|i| args.get(i + 1))
        .map(|list| list.split(',').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec());
    let report = match bench::run(transport, &sizes, pace) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    };
    if args.iter().any(|a| a == "--json") {
        println!("{}", report.json());
        return;
    }
    print!("{}", report.table());
    let p50_64 = report.p50_us(64).unwrap_or(f64::NAN);
    match transport {
        BenchTransport::Shm => {
            let p50_4m = report.p50_us(4 << 20).unwrap_or(f64::NAN);
            println!(
                "ratio shm 64 B p50 / futex floor p50: {:.2} (goal <= 1.3)",
                p50_64 / report.futex_floor.p50_us
            );
            println!(
                "ratio shm 4 MiB p50 / shm 64 B p50: {:.2} (goal <= 2)",
                p50_4m / p50_64
            );
        }
        BenchTransport::Uds => {
            let raw = report
                .raw_uds_floor
                .iter()
                .find(|(s, _)| *s == 64)
                .map_or(f64::NAN, |(_, s)| s.p50_us);
            println!(
                "ratio uds 64 B p50 / raw UDS floor p50: {:.2} (goal <= 1.3)",
                p50_64 / raw
            );
        }
    }
}
