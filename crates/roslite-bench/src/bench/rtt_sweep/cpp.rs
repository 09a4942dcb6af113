//! `roslite bench rtt --api cpp`: the C++ ping/pong pair (`crates/roslite-bench/cpp/
//! pingpong.cpp`, on roslite's rclcpp-shaped API over the C ABI) next to the Rust pair, 64 B
//! back to back, over UDP and over shared memory, in one run.
//!
//! Both pairs have the same shape (`api`'s back-to-back series): a ping node with its executor
//! on a thread of its own, a pong node in another process echoing from its subscription
//! callback, reliable keep-last-1 endpoints, and each ping after the first published by the
//! echo callback of the one before, the time taken first thing in that callback. The Rust
//! pair's ping side is this process (as in the sweep), the C++ pair's is a C++ process; both
//! pongs are processes of their own; all of them get the path in `ROSLITE_TRANSPORTS` (`udp`
//! or `shm`), LOCALHOST discovery and a domain per pair. The C++ programs are built by
//! `roslite_linetrace::cpp_build` (`c++ -Os -static`, stripped) against the static library in
//! the `release` profile, the one this binary and so the Rust pair are built with: the same
//! Rust code runs under both pairs (against the size profile's library the C++ pair's UDP p50
//! is 1.1-1.2 times its own against the release library, roslite's code at opt-level s; over
//! shared memory no different).
//!
//! Each path is measured in `--rounds` rounds, each the Rust pair then the C++ pair right
//! after it (this shared VM drifts between fast and slow phases lasting seconds), and judged on
//! the round with the median ratio of the p50s. Goal: the C++ pair's p50 at most 1.1 times the
//! Rust pair's.

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::LocalTransports;
use roslite_linetrace::cpp_build::{self, CppProgram};
use serde::Serialize;

use super::api::measure_api;
use super::model::{Mode, Pace, Route};
use crate::toolkit::json;
use crate::toolkit::process::Helper;
use crate::toolkit::stats::{median_round, Summary};

/// The C++ pair's program (`ping` or `pong` as its first argument).
const PINGPONG: CppProgram<'static> = CppProgram {
    name: "rtt-pingpong",
    source: "crates/roslite-bench/cpp/pingpong.cpp",
    packages: &["std_msgs"],
};

/// The payload measured.
const SIZE: usize = 64;
/// The goal: the C++ pair's p50 at most this many times the Rust pair's.
const GOAL_RATIO: f64 = 1.1;
/// The paths measured, in order.
const ROUTES: [Route; 2] = [Route::Udp, Route::Shm];

/// What `bench rtt --api cpp` hands over.
pub struct Options {
    pub samples: usize,
    pub rounds: usize,
    pub domain: u32,
    pub json: bool,
}

/// One pair in one round: its round trips, and the pings never echoed.
struct Measured {
    summary: Summary,
    lost: usize,
}

/// One round of one path.
struct Round {
    rust: Result<Measured, String>,
    cpp: Result<Measured, String>,
}

impl Round {
    fn ratio(&self) -> Option<f64> {
        match (&self.rust, &self.cpp) {
            (Ok(r), Ok(c)) => Some(c.summary.p50_us / r.summary.p50_us),
            _ => None,
        }
    }
}

/// Runs the comparison and prints it.
///
/// # Errors
/// The C++ pair cannot be built.
pub fn run(options: &Options) -> anyhow::Result<()> {
    if !options.json {
        eprintln!(
            "building the C++ ping/pong (`{}`, then c++ {}) ...",
            cpp_build::library_command(cpp_build::RELEASE),
            cpp_build::CXX_FLAGS.join(" ")
        );
    }
    let exe = cpp_build::build(PINGPONG, cpp_build::RELEASE).map_err(|e| anyhow::anyhow!(e))?;
    let pace = Pace {
        mode: Mode::BackToBack,
        hz: 10,
        count: options.samples,
        warmup: (options.samples / 10).clamp(2, 50),
        period: None,
    };
    let rounds = options.rounds.max(1);
    let mut results = Vec::new();
    for route in ROUTES {
        let mut measured = Vec::new();
        for round in 0..rounds {
            if !options.json {
                eprintln!(
                    "{}: round {} of {rounds}: Rust pair, then C++ pair ...",
                    route.name(),
                    round + 1
                );
            }
            let rust = measure_api(route, options.domain, &[SIZE], pace)
                .map_err(|e| format!("{e:#}"))
                .and_then(|series| {
                    let point = series.points.first().ok_or("no point measured")?;
                    Ok(Measured {
                        summary: point.summary.ok_or("no round trip measured")?,
                        lost: point.lost,
                    })
                });
            let cpp =
                measure_cpp(&exe, route, options.domain + 1, pace).map_err(|e| format!("{e:#}"));
            measured.push(Round { rust, cpp });
        }
        results.push((route, measured));
    }
    if options.json {
        print_json(options, pace, &results);
    } else {
        print_table(options, pace, &results);
    }
    Ok(())
}

/// The C++ pair over `route` in `domain`: `count` round trips after `warmup`.
fn measure_cpp(
    exe: &std::path::Path,
    route: Route,
    domain: u32,
    pace: Pace,
) -> anyhow::Result<Measured> {
    let command = |role: &str| {
        let mut c = Command::new(exe);
        c.arg(role)
            .env(LocalTransports::ENV, route.name())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env_remove("ROS_STATIC_PEERS")
            .env_remove("ROS_LOCALHOST_ONLY")
            .env_remove("ROSLITE_NETWORK")
            .stdin(Stdio::null());
        c
    };
    let mut pong = Helper::spawn(
        "the C++ pong process",
        command("pong").stdout(Stdio::null()).stderr(Stdio::null()),
    )?;
    let output = command("ping")
        .args(["--count", &pace.count.to_string()])
        .args(["--warmup", &pace.warmup.to_string()])
        .args(["--size", &SIZE.to_string()])
        .output()
        .context("running the C++ ping")?;
    pong.check_running()?;
    if !output.status.success() {
        bail!(
            "the C++ ping failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut latencies = Vec::new();
    let mut lost = 0;
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("rtt_ns", ns)) => {
                latencies.push(Duration::from_nanos(ns.parse().context("an rtt_ns line")?));
            }
            Some(("lost", n)) => lost = n.parse().context("the lost line")?,
            _ => {}
        }
    }
    let summary = Summary::of(&latencies).context("the C++ ping measured no round trip")?;
    Ok(Measured { summary, lost })
}

fn cell(m: &Result<Measured, String>) -> String {
    match m {
        Ok(m) => format!(
            "{:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>6}",
            m.summary.p50_us, m.summary.mean_us, m.summary.p99_us, m.summary.max_us, m.lost
        ),
        Err(e) => format!("failed: {e}"),
    }
}

fn print_table(options: &Options, pace: Pace, results: &[(Route, Vec<Round>)]) {
    println!(
        "round-trip time, {SIZE} B back to back, {} round trips per pair after {} warm-up, {} \
         rounds (Rust pair, then C++ pair); us",
        pace.count,
        pace.warmup,
        options.rounds.max(1)
    );
    println!(
        "{:<6} {:<6} {:<5} {:>8} {:>8} {:>8} {:>8} {:>6}",
        "path", "round", "pair", "p50", "mean", "p99", "max", "lost"
    );
    for (route, rounds) in results {
        for (i, round) in rounds.iter().enumerate() {
            println!(
                "{:<6} {:<6} {:<5} {}",
                route.name(),
                i + 1,
                "Rust",
                cell(&round.rust)
            );
            let ratio = round
                .ratio()
                .map_or(String::new(), |r| format!("  C++/Rust p50 {r:.3}"));
            println!(
                "{:<6} {:<6} {:<5} {}{ratio}",
                route.name(),
                i + 1,
                "C++",
                cell(&round.cpp)
            );
        }
    }
    for (route, rounds) in results {
        let ratios: Vec<Option<f64>> = rounds.iter().map(Round::ratio).collect();
        match median_round(&ratios).and_then(|i| Some((i, ratios[i]?))) {
            Some((i, r)) => println!(
                "goal: C++ pair p50 <= {GOAL_RATIO} x the Rust pair's over {} (round {}, the \
                 median ratio): {r:.3} -> {}",
                route.name(),
                i + 1,
                if r <= GOAL_RATIO { "met" } else { "NOT met" }
            ),
            None => println!(
                "goal: C++ pair p50 vs the Rust pair's over {}: not measured",
                route.name()
            ),
        }
    }
}

#[derive(Serialize)]
struct Json {
    bench: &'static str,
    size_bytes: usize,
    round_trips: usize,
    warmup: usize,
    #[serde(serialize_with = "json::number")]
    goal_p50_ratio_max: f64,
    paths: Vec<JsonPath>,
}

#[derive(Serialize)]
struct JsonPath {
    path: &'static str,
    /// The round judged (1-based), with the median ratio.
    judged_round: Option<usize>,
    #[serde(serialize_with = "json::fixed4_opt")]
    p50_ratio_cpp_to_rust: Option<f64>,
    goal_met: Option<bool>,
    rounds: Vec<JsonRound>,
}

#[derive(Serialize)]
struct JsonRound {
    rust: JsonPair,
    cpp: JsonPair,
    #[serde(serialize_with = "json::fixed4_opt")]
    p50_ratio_cpp_to_rust: Option<f64>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum JsonPair {
    Measured {
        #[serde(serialize_with = "json::fixed2")]
        p50_us: f64,
        #[serde(serialize_with = "json::fixed2")]
        mean_us: f64,
        #[serde(serialize_with = "json::fixed2")]
        p99_us: f64,
        #[serde(serialize_with = "json::fixed2")]
        max_us: f64,
        lost: usize,
    },
    Failed {
        error: String,
    },
}

impl JsonPair {
    fn of(m: &Result<Measured, String>) -> Self {
        match m {
            Ok(m) => Self::Measured {
                p50_us: m.summary.p50_us,
                mean_us: m.summary.mean_us,
                p99_us: m.summary.p99_us,
                max_us: m.summary.max_us,
                lost: m.lost,
            },
            Err(e) => Self::Failed { error: e.clone() },
        }
    }
}

fn print_json(_options: &Options, pace: Pace, results: &[(Route, Vec<Round>)]) {
    let paths = results
        .iter()
        .map(|(route, rounds)| {
            let ratios: Vec<Option<f64>> = rounds.iter().map(Round::ratio).collect();
            let judged = median_round(&ratios);
            let ratio = judged.and_then(|i| ratios[i]);
            JsonPath {
                path: route.name(),
                judged_round: judged.map(|i| i + 1),
                p50_ratio_cpp_to_rust: ratio,
                goal_met: ratio.map(|r| r <= GOAL_RATIO),
                rounds: rounds
                    .iter()
                    .map(|round| JsonRound {
                        rust: JsonPair::of(&round.rust),
                        cpp: JsonPair::of(&round.cpp),
                        p50_ratio_cpp_to_rust: round.ratio(),
                    })
                    .collect(),
            }
        })
        .collect();
    json::print(&Json {
        bench: "rtt-api-cpp",
        size_bytes: SIZE,
        round_trips: pace.count,
        warmup: pace.warmup,
        goal_p50_ratio_max: GOAL_RATIO,
        paths,
    });
}
