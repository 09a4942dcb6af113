//! The sweep's output: the table, the JSON object of `--json`, and the chart.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::model::{find, Goal, GoalRounds, Kind, Mode, Options, Pace, Series, Skipped};
use crate::toolkit::memory::mb;
use crate::toolkit::stats::Summary;
use crate::toolkit::units::size_label;
use crate::toolkit::{json, plot};

pub(super) fn pace_text(pace: Pace) -> String {
    match pace.mode {
        Mode::Rate => format!(
            "{} pings per size at {} Hz after {} warm-up, sent by a timer on roslite's ping \
             node",
            pace.count, pace.hz, pace.warmup
        ),
        Mode::BackToBack => format!(
            "{} pings per size back to back after {} warm-up; roslite's next ping is published \
             from the echo's callback, as ddsperf's",
            pace.count, pace.warmup
        ),
    }
}

pub(super) fn table(
    options: &Options<'_>,
    pace: Pace,
    series: &[Series],
    skipped: &[Skipped],
    goals: &[Goal],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "round-trip time against size, same host ({}; floors back to back{}), reliable \
         keep-last 1, std_msgs/UInt8MultiArray",
        pace_text(pace),
        match pace.mode {
            Mode::Rate => format!(", and those named @{}Hz paced alike at 64 B", pace.hz),
            Mode::BackToBack => String::new(),
        }
    );
    if pace.mode == Mode::BackToBack && options.rounds > 0 && options.sizes.contains(&64) {
        let _ = writeln!(
            out,
            "64 B floor goals: shm against the futex floor, uds against the raw UDS floor, all \
             back to back, in {} rounds of the floor, then the path through the API, then the \
             bare transport; judged on the round with the median ratio (even count: the upper \
             middle), every round's ratio listed",
            options.rounds
        );
    }
    for s in series.iter().filter(|s| s.kind == Kind::Api) {
        let observed = s.observed.as_deref().unwrap_or("?");
        let note = if s.on_requested_path() {
            String::new()
        } else {
            " (NOT the requested path: the same-host wiring is missing or refused)".to_owned()
        };
        let _ = writeln!(
            out,
            "path: {} requested, {observed} used{note}",
            s.requested.unwrap_or("?")
        );
    }
    if find(series, "shm-loan").is_some() {
        let _ = writeln!(
            out,
            "shm-loan: ping and pong loan each message and write only a 9-byte header in place; \
             the rest of the payload stays as the chunk holds it (zero-copy transfer cost, \
             independent of the payload's fill); the time includes both loans"
        );
    }
    if pace.mode == Mode::Rate {
        let _ = writeln!(
            out,
            "echo pages: the echo process's pages (code, data, stacks, shared memory) touched per \
             ping, median over the warm-up pings (accessed bits cleared through \
             /proc/<pid>/clear_refs before each; for the DDS pongs, windows of one period over \
             pings not measured); at a rate each one meets a cold TLB and caches"
        );
    }
    let _ = writeln!(
        out,
        "{:<22} {:>8} {:>7} {:>4} {:>10} {:>10} {:>10} {:>9} {:>11}",
        "series", "size", "samples", "lost", "p50 us", "p99 us", "max us", "RSS MB", "echo pages"
    );
    for s in series {
        for p in &s.points {
            let figures = match p.summary {
                Some(m) => format!(
                    "{:>7} {:>4} {:>10.2} {:>10.2} {:>10.2}",
                    m.count, p.lost, m.p50_us, m.p99_us, m.max_us
                ),
                None => format!("{:>7} {:>4} {:>32}", 0, p.lost, "no round trip"),
            };
            let rss = p
                .sender_rss_kib
                .map_or("-".to_owned(), |k| format!("{:.1}", mb(k)));
            let pages = p.echo_pages.map_or("-".to_owned(), |n| n.to_string());
            let _ = writeln!(
                out,
                "{:<22} {:>8} {figures} {rss:>9} {pages:>11}",
                s.name,
                size_label(p.size)
            );
        }
    }
    // p50 side by side.
    let _ = write!(out, "\np50 us   {:>8}", "size");
    for s in series {
        let _ = write!(out, " {:>14}", short(&s.name));
    }
    out.push('\n');
    for &size in options.sizes {
        let _ = write!(out, "         {:>8}", size_label(size));
        for s in series {
            let cell = s.p50(size).map_or("-".to_owned(), |v| format!("{v:.1}"));
            let _ = write!(out, " {cell:>14}");
        }
        out.push('\n');
    }
    for s in skipped {
        let _ = writeln!(out, "{}: {}", s.name, s.reason);
    }
    for g in goals {
        let verdict = match (g.met(), &g.why_not) {
            (Some(true), _) => "met".to_owned(),
            (Some(false), _) => "NOT met".to_owned(),
            (None, Some(why)) => why.clone(),
            (None, None) => "not measured".to_owned(),
        };
        let ratio = g.ratio.map_or(String::new(), |(r, limit)| {
            format!(" ({r:.2}x, limit {limit:.2}x)")
        });
        let rounds = g.rounds.as_ref().map_or(String::new(), rounds_text);
        let bound = g.bound.as_ref().map_or(String::new(), |b| {
            format!("  (at best {:.2}x: {})", b.ratio, b.why)
        });
        let _ = writeln!(out, "goal: {}{ratio} -> {verdict}{rounds}{bound}", g.text);
    }
    let _ = writeln!(out, "chart: {}", options.svg.display());
    out
}

/// Every round's ratio and the round judged, for the table.
pub(super) fn rounds_text(rounds: &GoalRounds) -> String {
    let each: Vec<String> = rounds
        .ratios
        .iter()
        .map(|r| r.map_or("-".to_owned(), |r| format!("{r:.2}")))
        .collect();
    let judged = rounds.median.map_or(String::new(), |m| {
        format!(
            "; median round {}: {:.2} us vs {:.2} us",
            m.index + 1,
            m.p50_us,
            m.floor_p50_us
        )
    });
    format!("  (rounds: {}{judged})", each.join(" "))
}

/// A column heading of at most 14 characters.
pub(super) fn short(name: &str) -> String {
    let name = name.replace(" (transport only)", " tr.");
    name.chars().take(14).collect()
}

/// `--json`: every series with its points, the skipped peers, and the goals.
#[derive(Serialize)]
pub(super) struct Json<'a> {
    pub(super) bench: &'static str,
    pub(super) sweep: bool,
    pub(super) transports: Vec<&'static str>,
    pub(super) mode: &'static str,
    pub(super) hz: u32,
    pub(super) count: usize,
    pub(super) warmup: usize,
    pub(super) domain: u32,
    pub(super) sizes: &'a [usize],
    pub(super) svg: String,
    pub(super) series: Vec<JsonSeries<'a>>,
    pub(super) skipped: Vec<JsonSkipped<'a>>,
    pub(super) goals: Vec<JsonGoal<'a>>,
}

#[derive(Serialize)]
pub(super) struct JsonSeries<'a> {
    pub(super) name: &'a str,
    pub(super) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) requested: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) observed: Option<&'a str>,
    pub(super) points: Vec<JsonPoint>,
}

#[derive(Serialize)]
pub(super) struct JsonPoint {
    pub(super) size_bytes: usize,
    pub(super) lost: usize,
    pub(super) samples: usize,
    #[serde(flatten)]
    pub(super) latency: Option<JsonLatency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sender_vm_rss_kib: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) echo_pages_per_ping: Option<u64>,
}

#[derive(Serialize)]
pub(super) struct JsonLatency {
    #[serde(serialize_with = "json::fixed3")]
    pub(super) p50_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    pub(super) p99_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    pub(super) max_us: f64,
}

#[derive(Serialize)]
pub(super) struct JsonSkipped<'a> {
    pub(super) name: &'a str,
    pub(super) reason: &'a str,
}

#[derive(Serialize)]
pub(super) struct JsonGoal<'a> {
    pub(super) goal: &'a str,
    #[serde(serialize_with = "json::fixed3_opt")]
    pub(super) ratio: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    pub(super) limit: Option<f64>,
    pub(super) met: Option<bool>,
    #[serde(flatten)]
    pub(super) bound: Option<JsonBound<'a>>,
    #[serde(flatten)]
    pub(super) rounds: Option<JsonRounds>,
}

#[derive(Serialize)]
pub(super) struct JsonBound<'a> {
    #[serde(serialize_with = "json::fixed3")]
    pub(super) bound_ratio: f64,
    pub(super) bound: &'a str,
}

#[derive(Serialize)]
pub(super) struct JsonRounds {
    pub(super) rounds: usize,
    #[serde(serialize_with = "json::fixed3_each")]
    pub(super) p50_ratio_each_round: Vec<Option<f64>>,
    #[serde(flatten)]
    pub(super) median: Option<JsonMedianRound>,
}

#[derive(Serialize)]
pub(super) struct JsonMedianRound {
    /// From 1, in measuring order.
    pub(super) median_round: usize,
    #[serde(serialize_with = "json::fixed3")]
    pub(super) p50_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    pub(super) floor_p50_us: f64,
}

pub(super) fn to_json<'a>(
    options: &'a Options<'_>,
    pace: Pace,
    series: &'a [Series],
    skipped: &'a [Skipped],
    goals: &'a [Goal],
) -> Json<'a> {
    let series = series
        .iter()
        .map(|s| JsonSeries {
            name: &s.name,
            kind: s.kind.name(),
            requested: s.requested,
            observed: s
                .requested
                .map(|_| s.observed.as_deref().unwrap_or("unknown")),
            points: s
                .points
                .iter()
                .map(|p| JsonPoint {
                    size_bytes: p.size,
                    lost: p.lost,
                    samples: p.summary.map_or(0, |m| m.count),
                    latency: p.summary.map(|m| JsonLatency {
                        p50_us: m.p50_us,
                        p99_us: m.p99_us,
                        max_us: m.max_us,
                    }),
                    sender_vm_rss_kib: p.sender_rss_kib,
                    echo_pages_per_ping: p.echo_pages,
                })
                .collect(),
        })
        .collect();
    let skipped = skipped
        .iter()
        .map(|s| JsonSkipped {
            name: &s.name,
            reason: &s.reason,
        })
        .collect();
    let goals = goals
        .iter()
        .map(|g| JsonGoal {
            goal: &g.text,
            ratio: g.ratio.map(|(r, _)| r),
            limit: g.ratio.map(|(_, l)| l),
            met: g.met(),
            bound: g.bound.as_ref().map(|b| JsonBound {
                bound_ratio: b.ratio,
                bound: &b.why,
            }),
            rounds: g.rounds.as_ref().map(|r| JsonRounds {
                rounds: r.ratios.len(),
                p50_ratio_each_round: r.ratios.clone(),
                median: r.median.map(|m| JsonMedianRound {
                    median_round: m.index + 1,
                    p50_us: m.p50_us,
                    floor_p50_us: m.floor_p50_us,
                }),
            }),
        })
        .collect();
    Json {
        bench: "rtt",
        sweep: true,
        transports: options.routes.iter().map(|r| r.name()).collect(),
        mode: pace.mode.name(),
        hz: pace.hz,
        count: pace.count,
        warmup: pace.warmup,
        domain: options.domain,
        sizes: options.sizes,
        svg: options.svg.display().to_string(),
        series,
        skipped,
        goals,
    }
}

pub(super) fn write_svg(
    path: &Path,
    series: &[Series],
    sizes: &[usize],
    pace: Pace,
) -> anyhow::Result<()> {
    // A colour per series: p50 solid and p99 dashed for each roslite path and peer; the
    // transport-only series and the floors (p50 only) dotted, as references.
    let line = |s: &Series, pick: fn(&Summary) -> f64, name: String, color, stroke| plot::Line {
        name,
        points: s
            .points
            .iter()
            .filter_map(|p| Some((p.size as f64, pick(&p.summary?))))
            .collect(),
        color,
        stroke,
    };
    let measured = series
        .iter()
        .filter(|s| matches!(s.kind, Kind::Api | Kind::Peer));
    let references = series
        .iter()
        .filter(|s| matches!(s.kind, Kind::Transport | Kind::Floor));
    let mut lines = Vec::new();
    for (color, s) in measured.enumerate() {
        let name = match (s.kind, &s.observed) {
            (Kind::Api, Some(observed)) if !s.on_requested_path() => {
                format!("{} (took {observed})", s.name)
            }
            (Kind::Api, _) => format!("roslite {}", s.name),
            _ => s.name.clone(),
        };
        lines.push(line(
            s,
            |m| m.p50_us,
            format!("{name} p50"),
            color,
            plot::Stroke::Solid,
        ));
        lines.push(line(
            s,
            |m| m.p99_us,
            format!("{name} p99"),
            color,
            plot::Stroke::Dashed,
        ));
    }
    let first_reference = lines.len() / 2;
    for (offset, s) in references.enumerate() {
        let name = format!("{} p50", s.name);
        let color = first_reference + offset;
        lines.push(line(s, |m| m.p50_us, name, color, plot::Stroke::Dotted));
    }
    let ticks: Vec<(f64, String)> = sizes.iter().map(|&s| (s as f64, size_label(s))).collect();
    let chart = plot::log_log_lines(
        &format!(
            "Round-trip time on one host ({}), reliable keep-last 1",
            pace_text(pace)
        ),
        "payload size (log scale)",
        "round-trip time (us, log scale)",
        &ticks,
        &lines,
    )?;
    plot::write_svg(path, &chart)
}
