//! The bench's output: the table, the JSON object and the goal verdicts.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use roslite::net::FAULT_INJECTION_ENV;

use super::{period_label, period_ms, Kind, Run, ServiceArgs, RCLPY_TYPE, ROSLITE_TYPE};

/// roslite's response p50 over rclpy's at the same period.
fn ratio_vs_rclpy(runs: &[Run], run: &Run) -> Option<f64> {
    let rclpy = runs
        .iter()
        .find(|r| r.kind == Kind::Rclpy && r.period == run.period)?;
    Some(run.response()?.p50 / rclpy.response()?.p50)
}

/// The goals at one period: `(text, measured value, unit, met)`; `met` is `None` when
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

pub(super) struct Report<'a> {
    pub args: &'a ServiceArgs,
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
        match &self.args.impair {
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
            "service round trips between two processes on 127.0.0.1 (seed 001): {} requests per \
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
            self.args.timer_slack_ns,
            self.args
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

    pub fn json(&self) -> String {
        let number = |v: Option<f64>| v.map_or("null".to_owned(), |v| format!("{v:.3}"));
        let runs: Vec<String> = self
            .runs
            .iter()
            .map(|run| {
                let mut o = format!(
                    "{{\"configuration\":{},\"period_ms\":{},\"service_type\":{},\"impaired\":{},\
                     \"requests\":{},\"replies\":{},\"lost\":{},\"wrong_replies\":{}",
                    json_str(run.kind.name()),
                    period_ms(run.period),
                    json_str(run.kind.service_type()),
                    run.kind == Kind::RosliteImpaired,
                    run.samples.len(),
                    run.replies(),
                    run.samples.len() - run.replies(),
                    run.wrong()
                );
                if let Some(path) = &run.path {
                    let _ = write!(o, ",\"path\":{}", json_str(path));
                }
                for (prefix, stats) in [("response", run.response()), ("jitter", run.jitter())] {
                    for (key, value) in [
                        ("min", stats.map(|s| s.min)),
                        ("mean", stats.map(|s| s.mean)),
                        ("p50", stats.map(|s| s.p50)),
                        ("p99", stats.map(|s| s.p99)),
                        ("max", stats.map(|s| s.max)),
                    ] {
                        let _ = write!(o, ",\"{prefix}_{key}_us\":{}", number(value));
                    }
                }
                let ratio = match run.kind {
                    Kind::Rclpy => None,
                    _ => ratio_vs_rclpy(self.runs, run),
                };
                let _ = write!(o, ",\"response_p50_ratio_vs_rclpy\":{}", number(ratio));
                if let Some(note) = &run.note {
                    let _ = write!(o, ",\"skipped\":{}", json_str(note));
                }
                o.push('}');
                o
            })
            .collect();
        let goals: Vec<String> = self
            .periods
            .iter()
            .flat_map(|&period| {
                goals(self.runs, period)
                    .into_iter()
                    .map(move |(goal, value, unit, met)| {
                        let key = if unit == "us" {
                            "value_us"
                        } else {
                            "value_ratio"
                        };
                        format!(
                            "{{\"period_ms\":{},\"goal\":{},\"{key}\":{},\"met\":{}}}",
                            period_ms(period),
                            json_str(goal),
                            number(value),
                            met.map_or("null".to_owned(), |m| m.to_string())
                        )
                    })
            })
            .collect();
        let periods: Vec<String> = self
            .periods
            .iter()
            .map(|p| period_ms(*p).to_string())
            .collect();
        let svgs: Vec<String> = self
            .svgs
            .iter()
            .map(|p| json_str(&p.display().to_string()))
            .collect();
        format!(
            "{{\"bench\":\"service\",\"requests_per_run\":{},\"periods_ms\":[{}],\
             \"timer_slack_ns\":{},\"rt_priority\":{},\"load_average_1min_before\":{},\
             \"load_average_1min_after\":{},\"roslite_service_type\":{},\"rclpy_service_type\":{},\
             \"impairment\":{},\"impairment_note\":{},\"out_dir\":{},\"svg\":[{}],\
             \"runs\":[{}],\"goals\":[{}]}}",
            self.requests,
            periods.join(","),
            self.args.timer_slack_ns,
            self.args.rt_priority.unwrap_or(0),
            number(self.load[0]),
            number(self.load[1]),
            json_str(ROSLITE_TYPE),
            json_str(RCLPY_TYPE),
            self.args
                .impair
                .as_ref()
                .map_or("null".to_owned(), |f| json_str(&f.to_string())),
            json_str(&self.impairment_text()),
            json_str(&self.args.out.display().to_string()),
            svgs.join(","),
            runs.join(","),
            goals.join(",")
        )
    }
}

fn json_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }
}
