//! Tables 5.2-5.4 of the mROS 2 line-follower evaluation (docs/experiments.md: latency per
//! topic, memory per process) as text, Markdown and SVG (box plots, memory bars, the robot's
//! path over the course).

use std::fmt::Write as _;
use std::path::Path;

use crate::course;
use crate::launch::{ProcessMemory, RunResult};

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
    let _ = writeln!(
        out,
        "{topic:<36} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "mean us", "max us", "min us", "stddev", "p50 us", "p99 us", "n"
    );
    for (label, samples) in rows {
        match Summary::of(samples) {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "{label:<36} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>6}",
                    s.mean, s.max, s.min, s.stddev, s.p50, s.p99, s.count
                );
            }
            None => {
                let _ = writeln!(out, "{label:<36} no samples");
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
    let _ = writeln!(
        out,
        "{:<36} {:>9} {:>9} {:>9} {:>9}",
        "process", "RES MB", "SHR MB", "RSS MB", "peak MB"
    );
    for m in rows {
        let _ = writeln!(
            out,
            "{:<36} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
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

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

const COLORS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// Horizontal box plots: box p25-p75, line at the median, whiskers to min and max, a dot at
/// the mean; log-scaled x axis when the values span more than a decade.
pub fn box_plot_svg(title: &str, series: &[(&str, &[f64])]) -> String {
    let (left, width, row) = (230.0, 900.0, 60.0);
    let plot = width - left - 40.0;
    let height = 70.0 + row * series.len() as f64 + 40.0;
    let stats: Vec<Option<Summary>> = series.iter().map(|(_, v)| Summary::of(v)).collect();
    let lo = stats
        .iter()
        .flatten()
        .map(|s| s.min)
        .fold(f64::INFINITY, f64::min);
    let hi = stats.iter().flatten().map(|s| s.max).fold(0.0, f64::max);
    let log = lo > 0.0 && hi / lo > 10.0;
    let (lo, hi) = if log {
        (
            10f64.powf(lo.log10().floor()),
            10f64.powf(hi.log10().ceil()),
        )
    } else {
        (0.0, if hi > 0.0 { hi * 1.1 } else { 1.0 })
    };
    let x = |v: f64| {
        let f = if log {
            (v.max(lo).log10() - lo.log10()) / (hi.log10() - lo.log10())
        } else {
            (v - lo) / (hi - lo)
        };
        left + plot * f.clamp(0.0, 1.0)
    };
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\"><rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/><text x=\"{}\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">{}</text>",
        width / 2.0,
        escape(title)
    );
    for (i, ((name, _), s)) in series.iter().zip(&stats).enumerate() {
        let cy = 60.0 + row * i as f64 + row / 2.0;
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 10.0,
            cy + 4.0,
            escape(name)
        );
        let Some(s) = s else { continue };
        let c = COLORS[i % COLORS.len()];
        let _ = writeln!(
            svg,
            "<line x1=\"{:.1}\" y1=\"{cy}\" x2=\"{:.1}\" y2=\"{cy}\" stroke=\"{c}\"/>\
             <line x1=\"{:.1}\" y1=\"{}\" x2=\"{:.1}\" y2=\"{}\" stroke=\"{c}\"/>\
             <line x1=\"{:.1}\" y1=\"{}\" x2=\"{:.1}\" y2=\"{}\" stroke=\"{c}\"/>\
             <rect x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"24\" fill=\"{c}\" \
             fill-opacity=\"0.3\" stroke=\"{c}\"/>\
             <line x1=\"{:.1}\" y1=\"{}\" x2=\"{:.1}\" y2=\"{}\" stroke=\"black\" stroke-width=\"2\"/>\
             <circle cx=\"{:.1}\" cy=\"{cy}\" r=\"3\" fill=\"black\"/>",
            x(s.min),
            x(s.max),
            x(s.min),
            cy - 8.0,
            x(s.min),
            cy + 8.0,
            x(s.max),
            cy - 8.0,
            x(s.max),
            cy + 8.0,
            x(s.p25),
            cy - 12.0,
            (x(s.p75) - x(s.p25)).max(1.0),
            x(s.p50),
            cy - 12.0,
            x(s.p50),
            cy + 12.0,
            x(s.mean)
        );
    }
    let axis = 60.0 + row * series.len() as f64 + 10.0;
    let ticks: Vec<f64> = if log {
        let (a, b) = (lo.log10().round() as i32, hi.log10().round() as i32);
        (a..=b).map(|e| 10f64.powi(e)).collect()
    } else {
        (0..=5)
            .map(|i| lo + (hi - lo) * f64::from(i) / 5.0)
            .collect()
    };
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{axis}\" x2=\"{}\" y2=\"{axis}\" stroke=\"#444\"/>",
        left + plot
    );
    for t in ticks {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{t:.0}</text>",
            x(t),
            axis + 16.0
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">latency, us{} (box p25-p75, bar median, \
         dot mean, whiskers min-max)</text></svg>",
        left + plot / 2.0,
        axis + 34.0,
        if log { ", log scale" } else { "" }
    );
    svg
}

/// Stacked bars RES + SHR = RSS per process (as Fig. 5.3 of the mROS 2 line-follower evaluation).
pub fn memory_svg(rows: &[ProcessMemory]) -> String {
    let (left, width, row) = (260.0, 900.0, 34.0);
    let plot = width - left - 90.0;
    let height = 60.0 + row * rows.len() as f64 + 50.0;
    let max = rows.iter().map(|m| m.vm_rss).max().unwrap_or(1).max(1) as f64;
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\"><rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/><text x=\"{}\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">\
         Resident memory per process (RES + SHR = RSS)</text>",
        width / 2.0
    );
    for (i, m) in rows.iter().enumerate() {
        let y = 50.0 + row * i as f64;
        let res = plot * m.res() as f64 / max;
        let shr = plot * m.shr() as f64 / max;
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{left}\" y=\"{y}\" width=\"{res:.1}\" height=\"22\" fill=\"#1f77b4\"/>\
             <rect x=\"{:.1}\" y=\"{y}\" width=\"{shr:.1}\" height=\"22\" fill=\"#aec7e8\"/>\
             <text x=\"{:.1}\" y=\"{}\">{:.2} MB</text>",
            left - 10.0,
            y + 15.0,
            escape(&m.process),
            left + res,
            left + res + shr + 6.0,
            y + 15.0,
            mb(m.vm_rss)
        );
    }
    let legend = 50.0 + row * rows.len() as f64 + 20.0;
    let _ = writeln!(
        svg,
        "<rect x=\"{left}\" y=\"{legend}\" width=\"14\" height=\"14\" fill=\"#1f77b4\"/>\
         <text x=\"{}\" y=\"{}\">RES (RssAnon)</text>\
         <rect x=\"{}\" y=\"{legend}\" width=\"14\" height=\"14\" fill=\"#aec7e8\"/>\
         <text x=\"{}\" y=\"{}\">SHR (RssFile + RssShmem)</text></svg>",
        left + 20.0,
        legend + 12.0,
        left + 160.0,
        left + 180.0,
        legend + 12.0
    );
    svg
}

/// The floor, the line and the robot's path (axle centre) from above.
pub fn path_svg(title: &str, path: &[(f64, f64)]) -> String {
    let scale = 500.0; // px per metre
    let margin = 30.0;
    let (w, h) = (course::FLOOR.0 * scale, course::FLOOR.1 * scale);
    let px = |x: f64| margin + x * scale;
    let py = |y: f64| margin + h - y * scale;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" \
         font-family=\"sans-serif\" font-size=\"12\"><rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/><rect x=\"{margin}\" y=\"{margin}\" width=\"{w}\" height=\"{h}\" \
         fill=\"#f4f4f4\" stroke=\"#bbb\"/>",
        w + 2.0 * margin,
        h + 2.0 * margin + 30.0
    );
    for i in 1..3 {
        let x = px(0.5 * f64::from(i));
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{margin}\" x2=\"{x}\" y2=\"{}\" stroke=\"#ddd\"/>",
            margin + h
        );
    }
    let y = py(0.5);
    let _ = writeln!(
        svg,
        "<line x1=\"{margin}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/>",
        margin + w
    );
    let mut line = String::new();
    let n = 240;
    for i in 0..=n {
        let (x, y, _) = course::point_at(course::lap_length() * f64::from(i) / f64::from(n));
        let _ = write!(line, "{:.1},{:.1} ", px(x), py(y));
    }
    let _ = writeln!(
        svg,
        "<polyline points=\"{line}\" fill=\"none\" stroke=\"black\" stroke-width=\"{:.1}\"/>",
        course::LINE_WIDTH * scale
    );
    let mut points = String::new();
    for (x, y) in path {
        let _ = write!(points, "{:.1},{:.1} ", px(*x), py(*y));
    }
    let _ = writeln!(
        svg,
        "<polyline points=\"{points}\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\
         <text x=\"{margin}\" y=\"{}\">{} (red: axle centre; black: the 25 mm line; tiles 0.5 m)</text></svg>",
        h + 2.0 * margin + 15.0,
        escape(title)
    );
    svg
}

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
        std::fs::write(dir.join(&name), path_svg(&title, &r.path))?;
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

    #[test]
    fn charts_are_well_formed_svg() {
        let a = [10.0, 20.0, 30.0];
        let svg = box_plot_svg("t <1>", &[("a & b", &a), ("empty", &[])]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("a &amp; b") && svg.contains("t &lt;1&gt;"));
        let path = path_svg("p", &[(0.5, 0.25), (0.6, 0.25)]);
        assert!(path.contains("polyline") && path.trim_end().ends_with("</svg>"));
    }
}
