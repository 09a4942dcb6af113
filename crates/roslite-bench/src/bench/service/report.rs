//! `bench service`'s output: the table, the JSON object and the goal verdicts.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use roslite::backends::rtps::{FaultConfig, FAULT_INJECTION_ENV};
use serde::Serialize;

use super::model::{period_label, period_ms, Kind, Run, RCLPY_TYPE, ROSLITE_TYPE};
use crate::toolkit::json;
use crate::toolkit::stats::Distribution;

/// roslite's response p50 over rclpy's at the same period.
fn ratio_vs_rclpy(runs: &[Run], run: &Run) -> Option<f64> {
    let rclpy = runs
        .iter()
        .find(|r| r.kind == Kind::Rclpy && r.period == run.period)?;
    Some(run.response()?.p50 / rclpy.response()?.p50)
}

/// The bench's goals at one period: `(text, measured value, unit, met)`; `met` is `None` when
/// the value could not be measured.
type Goal = (&'static str, Option<f64>, &'static str, Option<bool>);

fn goals(runs: &[Run], period: Duration) -> Vec<Goal> {
    let roslite = runs
        .iter()
        .find(|r| r.kind == Kind::Roslite && r.period == period);
    let ratio = roslite.and_then(|r| ratio_vs_rclpy(runs, r));
    let jitter = roslite.and_then(Run::jitter).map(|s| s.p99);
    vec![
        (
            "roslite response p50 <= 1/4 of rclpy's",
            ratio,
            "ratio",
            ratio.map(|r| r <= 0.25),
        ),
        (
            "roslite send jitter p99 < 100 us",
            jitter,
            "us",
            jitter.map(|j| j < 100.0),
        ),
    ]
}

/// The settings of the run, as the report states them.
pub struct Settings {
    /// The clients' timer slack.
    pub timer_slack_ns: u64,
    /// The roslite clients' SCHED_FIFO priority, if any.
    pub rt_priority: Option<u8>,
    /// The impaired configuration's fault injection, if any.
    pub impair: Option<FaultConfig>,
    /// Where the plots went.
    pub out: PathBuf,
}

pub struct Report<'a> {
    pub settings: Settings,
    /// The 1-minute load average before and after the run: the jitter goal assumes an unloaded
    /// machine.
    pub load: [Option<f64>; 2],
    pub requests: usize,
    pub periods: &'a [Duration],
    pub runs: &'a [Run],
    pub svgs: &'a [PathBuf],
}

impl Report<'_> {
    fn impairment_text(&self) -> String {
        match &self.settings.impair {
            Some(fault) => format!(
                "{FAULT_INJECTION_ENV}={fault} in both roslite processes (each direction); \
                 the rclpy baseline cannot be impaired here (no tc netem) and ran on the plain \
                 loopback"
            ),
            None => "none (--impair adds an impaired roslite configuration)".to_owned(),
        }
    }

    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "service round trips between two processes on 127.0.0.1 (the ROS 2 service \
             round-trip over local 5G study, AddTwoInts): {} requests per \
             configuration and period, configurations side by side, send times offset",
            self.requests
        );
        let _ = writeln!(
            out,
            "  roslite: {ROSLITE_TYPE}, on the path in brackets (a same-host link between \
             roslite processes by default; over UDP: ROSLITE_TRANSPORTS=udp); rclpy: \
             {RCLPY_TYPE} (example_interfaces is not installed for rclpy), rmw_fastrtps_cpp, \
             loopback-only profile"
        );
        let _ = writeln!(
            out,
            "  clients' timer slack: {} ns; roslite client scheduling: {}; impairment: {}",
            self.settings.timer_slack_ns,
            self.settings
                .rt_priority
                .map_or("normal".to_owned(), |p| format!("SCHED_FIFO {p}")),
            self.impairment_text()
        );
        let load = |l: Option<f64>| l.map_or("?".to_owned(), |l| format!("{l:.2}"));
        let _ = writeln!(
            out,
            "  1-minute load average before / after: {} / {} on {} CPUs",
            load(self.load[0]),
            load(self.load[1]),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
        let _ = writeln!(
            out,
            "{:<8} {:<24} {:>5} {:>7} {:>4} {:>5} | {:>9} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} {:>9} | {:>8}",
            "period",
            "configuration",
            "sent",
            "replies",
            "lost",
            "wrong",
            "resp min",
            "p50",
            "p99",
            "max us",
            "jit min",
            "p50",
            "p99",
            "max us",
            "p50/rclpy"
        );
        for run in self.runs {
            let label = period_label(run.period);
            let configuration = match &run.path {
                Some(path) if run.kind != Kind::RosliteUdp => {
                    format!("{} ({path})", run.kind.name())
                }
                _ => run.kind.name().to_owned(),
            };
            let (Some(response), Some(jitter)) = (run.response(), run.jitter()) else {
                let _ = writeln!(
                    out,
                    "{:<8} {:<24} {}",
                    label,
                    configuration,
                    run.note.as_deref().unwrap_or("no replies")
                );
                continue;
            };
            let ratio = match (run.kind, ratio_vs_rclpy(self.runs, run)) {
                (Kind::Rclpy, _) => "1".to_owned(),
                (_, Some(r)) => format!("{r:.3}"),
                (_, None) => "-".to_owned(),
            };
            let _ = writeln!(
                out,
                "{:<8} {:<24} {:>5} {:>7} {:>4} {:>5} | {:>9.1} {:>9.1} {:>9.1} {:>9.1} | {:>8.1} {:>8.1} {:>8.1} {:>9.1} | {:>8}",
                label,
                configuration,
                run.samples.len(),
                run.replies(),
                run.samples.len() - run.replies(),
                run.wrong(),
                response.min,
                response.p50,
                response.p99,
                response.max,
                jitter.min,
                jitter.p50,
                jitter.p99,
                jitter.max,
                ratio
            );
        }
        for &period in self.periods {
            let text: Vec<String> = goals(self.runs, period)
                .into_iter()
                .map(|(goal, value, unit, met)| {
                    let value = match (value, unit) {
                        (Some(v), "us") => format!("{v:.1} us"),
                        (Some(v), _) => format!("{v:.3}"),
                        (None, _) => "not measured".to_owned(),
                    };
                    let verdict = match met {
                        Some(true) => "met",
                        Some(false) => "NOT met",
                        None => "not measured",
                    };
                    format!("{goal}: {value} -> {verdict}")
                })
                .collect();
            let _ = writeln!(
                out,
                "goals at {}: {}",
                period_label(period),
                text.join("; ")
            );
        }
        for svg in self.svgs {
            let _ = writeln!(out, "plot: {}", svg.display());
        }
        out
    }

    /// The JSON object of `--json`.
    pub fn json(&self) -> Json<'_> {
        let runs = self
            .runs
            .iter()
            .map(|run| RunJson {
                configuration: run.kind.name(),
                period_ms: period_ms(run.period),
                service_type: run.kind.service_type(),
                impaired: run.kind == Kind::RosliteImpaired,
                requests: run.samples.len(),
                replies: run.replies(),
                lost: run.samples.len() - run.replies(),
                wrong_replies: run.wrong(),
                path: run.path.as_deref(),
                response: ResponseJson::of(run.response()),
                jitter: JitterJson::of(run.jitter()),
                response_p50_ratio_vs_rclpy: match run.kind {
                    Kind::Rclpy => None,
                    _ => ratio_vs_rclpy(self.runs, run),
                },
                skipped: run.note.as_deref(),
            })
            .collect();
        let goals = self
            .periods
            .iter()
            .flat_map(|&period| {
                goals(self.runs, period)
                    .into_iter()
                    .map(move |(goal, value, unit, met)| {
                        let period_ms = period_ms(period);
                        if unit == "us" {
                            GoalJson::Us {
                                period_ms,
                                goal,
                                value_us: value,
                                met,
                            }
                        } else {
                            GoalJson::Ratio {
                                period_ms,
                                goal,
                                value_ratio: value,
                                met,
                            }
                        }
                    })
            })
            .collect();
        Json {
            bench: "service",
            requests_per_run: self.requests,
            periods_ms: self.periods.iter().map(|&p| period_ms(p)).collect(),
            timer_slack_ns: self.settings.timer_slack_ns,
            rt_priority: self.settings.rt_priority.unwrap_or(0),
            load_average_1min_before: self.load[0],
            load_average_1min_after: self.load[1],
            roslite_service_type: ROSLITE_TYPE,
            rclpy_service_type: RCLPY_TYPE,
            impairment: self.settings.impair.as_ref().map(ToString::to_string),
            impairment_note: self.impairment_text(),
            out_dir: self.settings.out.display().to_string(),
            svg: self.svgs.iter().map(|p| p.display().to_string()).collect(),
            runs,
            goals,
        }
    }
}

/// `--json`: the settings, one object per configuration and period, and the goals.
#[derive(Serialize)]
pub struct Json<'a> {
    bench: &'static str,
    requests_per_run: usize,
    #[serde(serialize_with = "json::numbers")]
    periods_ms: Vec<f64>,
    timer_slack_ns: u64,
    rt_priority: u8,
    #[serde(serialize_with = "json::fixed3_opt")]
    load_average_1min_before: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    load_average_1min_after: Option<f64>,
    roslite_service_type: &'static str,
    rclpy_service_type: &'static str,
    impairment: Option<String>,
    impairment_note: String,
    out_dir: String,
    svg: Vec<String>,
    runs: Vec<RunJson<'a>>,
    goals: Vec<GoalJson>,
}

#[derive(Serialize)]
struct RunJson<'a> {
    configuration: &'static str,
    #[serde(serialize_with = "json::number")]
    period_ms: f64,
    service_type: &'static str,
    impaired: bool,
    requests: usize,
    replies: usize,
    lost: usize,
    wrong_replies: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(flatten)]
    response: ResponseJson,
    #[serde(flatten)]
    jitter: JitterJson,
    #[serde(serialize_with = "json::fixed3_opt")]
    response_p50_ratio_vs_rclpy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'a str>,
}

/// The response time's statistics in us, to 3 decimals, `null` when not measured.
#[derive(Serialize)]
struct ResponseJson {
    #[serde(serialize_with = "json::fixed3_opt")]
    response_min_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    response_mean_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    response_p50_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    response_p99_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    response_max_us: Option<f64>,
}

impl ResponseJson {
    fn of(s: Option<Distribution>) -> Self {
        Self {
            response_min_us: s.map(|s| s.min),
            response_mean_us: s.map(|s| s.mean),
            response_p50_us: s.map(|s| s.p50),
            response_p99_us: s.map(|s| s.p99),
            response_max_us: s.map(|s| s.max),
        }
    }
}

/// The send jitter's statistics in us, to 3 decimals, `null` when not measured.
#[derive(Serialize)]
struct JitterJson {
    #[serde(serialize_with = "json::fixed3_opt")]
    jitter_min_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    jitter_mean_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    jitter_p50_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    jitter_p99_us: Option<f64>,
    #[serde(serialize_with = "json::fixed3_opt")]
    jitter_max_us: Option<f64>,
}

impl JitterJson {
    fn of(s: Option<Distribution>) -> Self {
        Self {
            jitter_min_us: s.map(|s| s.min),
            jitter_mean_us: s.map(|s| s.mean),
            jitter_p50_us: s.map(|s| s.p50),
            jitter_p99_us: s.map(|s| s.p99),
            jitter_max_us: s.map(|s| s.max),
        }
    }
}

/// A goal at one period, its value under `value_us` or `value_ratio` by its unit.
#[derive(Serialize)]
#[serde(untagged)]
enum GoalJson {
    Us {
        #[serde(serialize_with = "json::number")]
        period_ms: f64,
        goal: &'static str,
        #[serde(serialize_with = "json::fixed3_opt")]
        value_us: Option<f64>,
        met: Option<bool>,
    },
    Ratio {
        #[serde(serialize_with = "json::number")]
        period_ms: f64,
        goal: &'static str,
        #[serde(serialize_with = "json::fixed3_opt")]
        value_ratio: Option<f64>,
        met: Option<bool>,
    },
}
