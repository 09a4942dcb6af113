//! Tables 5.2-5.4 of the mROS 2 line-follower evaluation (docs/experiments.md: latency per
//! topic, memory per process) as text, Markdown and SVG (box plots, memory bars, the robot's
//! path over the course; drawn with plotters by the `charts` module).

use std::fmt::Write as _;
use std::path::Path;

use crate::launch::{ProcessMemory, RunResult};

mod charts;

pub use charts::{box_plot_svg, memory_svg, path_svg};

/// Order statistics of latency samples, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    pub max: f64,
    pub min: f64,
    /// Population standard deviation.
    pub stddev: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p99: f64,
}

impl Summary {
    /// `None` for no samples. Percentiles are nearest-rank.
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let rank = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Self {
            count: n,
            mean,
            max: v[n - 1],
            min: v[0],
            stddev: var.sqrt(),
            p25: rank(0.25),
            p50: rank(0.50),
            p75: rank(0.75),
            p99: rank(0.99),
        })
    }
}

/// Text table of one topic's latency for each run (as Tables 5.2 and 5.3 of the mROS 2
/// line-follower evaluation, docs/experiments.md).
pub fn latency_table(topic: &str, rows: &[(&str, &[f64])]) -> String {
    let mut out = String::new();
    // The first column as wide as its longest entry (at least 36), so the figures line up.
    let width = rows
        .iter()
        .map(|(label, _)| label.len())
        .chain([topic.len(), 36])
        .max()
        .unwrap_or(36);
    let _ = writeln!(
        out,
        "{topic:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "mean us", "max us", "min us", "stddev", "p50 us", "p99 us", "n"
    );
    for (label, samples) in rows {
        match Summary::of(samples) {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "{label:<width$} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>6}",
                    s.mean, s.max, s.min, s.stddev, s.p50, s.p99, s.count
                );
            }
            None => {
                let _ = writeln!(out, "{label:<width$} no samples");
            }
        }
    }
    out
}

/// Text table of per-process memory (as Table 5.4 of the mROS 2 line-follower evaluation), in MB
/// (10^6 bytes) as there.
pub fn memory_table(rows: &[ProcessMemory]) -> String {
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|m| m.process.len())
        .chain([36])
        .max()
        .unwrap_or(36);
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>9} {:>9} {:>9}",
        "process", "RES MB", "SHR MB", "RSS MB", "peak MB"
    );
    for m in rows {
        let _ = writeln!(
            out,
            "{:<width$} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
            m.process,
            mb(m.res()),
            mb(m.shr()),
            mb(m.vm_rss),
            mb(m.vm_hwm)
        );
    }
    out
}

const MEMORY_NOTE: &str = "RSS = VmRSS of /proc/<pid>/status; RES = RssAnon (resident pages \
private to the process), SHR = RssFile + RssShmem (resident file-backed and shared pages, \
mostly the executable and shared libraries): RES + SHR = RSS, as in Table 5.4 of the mROS 2 \
line-follower evaluation. peak = VmHWM. MB = 10^6 bytes.";

const LATENCY_NOTE: &str = "One-way latency: CLOCK_MONOTONIC read by the publisher just \
before publish, and by the subscriber first thing in its callback, joined by the publication \
sequence number (MessageInfo publication_sequence_number on both roslite and rclpy); samples \
are the first N after the follower started following (calibration beeps block the follower's \
executor, as upstream).";

fn markdown_latency(topic: &str, runs: &[&RunResult], pick: fn(&RunResult) -> &[f64]) -> String {
    let mut out = format!(
        "| {topic} | mean us | max us | min us | stddev us | p50 us | p99 us | n |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    );
    for r in runs {
        if let Some(s) = Summary::of(pick(r)) {
            let _ = writeln!(
                out,
                "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
                r.label, s.mean, s.max, s.min, s.stddev, s.p50, s.p99, s.count
            );
        }
    }
    out
}

/// Writes `README.md`, `light_sensors.svg`, `cmd_vel.svg`, `memory.svg` and `path*.svg` for
/// `runs` into `dir`.
///
/// # Errors
/// A file cannot be written.
pub fn write_report(
    dir: &Path,
    title: &str,
    preface: &str,
    runs: &[&RunResult],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let ls: Vec<(&str, &[f64])> = runs
        .iter()
        .map(|r| (r.label.as_str(), r.light_sensors_us.as_slice()))
        .collect();
    let cv: Vec<(&str, &[f64])> = runs
        .iter()
        .map(|r| (r.label.as_str(), r.cmd_vel_us.as_slice()))
        .collect();
    std::fs::write(
        dir.join("light_sensors.svg"),
        box_plot_svg("/light_sensors latency", &ls),
    )?;
    std::fs::write(
        dir.join("cmd_vel.svg"),
        box_plot_svg("/cmd_vel latency", &cv),
    )?;
    let memory: Vec<ProcessMemory> = runs
        .iter()
        .flat_map(|r| {
            r.memory.iter().map(|m| ProcessMemory {
                process: if runs.len() > 1 {
                    format!("{} [{}]", m.process, r.label)
                } else {
                    m.process.clone()
                },
                ..m.clone()
            })
        })
        .collect();
    std::fs::write(dir.join("memory.svg"), memory_svg(&memory))?;
    let mut md = format!(
        "# {title}\n\n{preface}\n\n## Latency (as in the mROS 2 evaluation, Tables 5.2 and 5.3)\n\n"
    );
    md += &markdown_latency("/light_sensors", runs, |r| &r.light_sensors_us);
    md += "\n";
    md += &markdown_latency("/cmd_vel", runs, |r| &r.cmd_vel_us);
    let _ = write!(
        md,
        "\n{LATENCY_NOTE}\n\n![/light_sensors](light_sensors.svg)\n\n![/cmd_vel](cmd_vel.svg)\n\n\
         ## Memory (as in the mROS 2 evaluation, Table 5.4)\n\n\
         | process | RES MB | SHR MB | RSS MB | peak MB |\n\
         | --- | ---: | ---: | ---: | ---: |\n"
    );
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    for m in &memory {
        let _ = writeln!(
            md,
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            m.process,
            mb(m.res()),
            mb(m.shr()),
            mb(m.vm_rss),
            mb(m.vm_hwm)
        );
    }
    let _ = write!(
        md,
        "\n{MEMORY_NOTE}\n\n![memory](memory.svg)\n\n## The robot's path\n\n"
    );
    for (i, r) in runs.iter().enumerate() {
        let name = if runs.len() == 1 {
            "path.svg".to_owned()
        } else {
            format!("path-{}.svg", i + 1)
        };
        let title = format!("{}: {:.2} laps", r.label, r.laps);
        std::fs::write(dir.join(&name), path_svg(&title, &r.path, &r.path_marks))?;
        let _ = writeln!(
            md,
            "{}: {:.2} laps, axle at most {:.1} mm from the line's centre line.\n\n![path]({name})\n",
            r.label,
            r.laps,
            r.max_cross_track_m * 1000.0
        );
    }
    md += "## Messages exchanged\n\n| run | counter | n |\n| --- | --- | ---: |\n";
    for r in runs {
        for (k, v) in &r.counts {
            let _ = writeln!(md, "| {} | {k} | {v} |", r.label);
        }
    }
    std::fs::write(dir.join("README.md"), md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_uses_nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&v).unwrap();
        assert_eq!(
            (s.min, s.p25, s.p50, s.p99, s.max),
            (1.0, 25.0, 50.0, 99.0, 100.0)
        );
        assert!((s.mean - 50.5).abs() < 1e-12);
        assert!(Summary::of(&[]).is_none());
    }
}
