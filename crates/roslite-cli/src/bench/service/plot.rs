//! The plots, after seed 001's figures 3 (response-time histograms) and 4 (send-jitter box
//! plots).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;

use super::{period_label, Kind, Run, Stats};
use crate::svg;

pub(super) fn write_svgs(dir: &Path, runs: &[Run]) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    let mut periods: Vec<Duration> = runs.iter().map(|r| r.period).collect();
    periods.dedup();
    for period in periods {
        let label = period_label(period).replace(' ', "");
        // Unimpaired on one axis, the impaired link (tens of ms) on its own.
        for (impaired, file) in [
            (false, format!("response-{label}.svg")),
            (true, format!("response-impaired-{label}.svg")),
        ] {
            let selected: Vec<&Run> = runs
                .iter()
                .filter(|r| r.period == period && (r.kind == Kind::RosliteImpaired) == impaired)
                .filter(|r| r.replies() > 0)
                .collect();
            if selected.is_empty() {
                continue;
            }
            let series: Vec<(String, Vec<f64>)> = selected
                .iter()
                .map(|r| (r.kind.name().to_owned(), r.response_us()))
                .collect();
            let x_max = selected
                .iter()
                .filter_map(|r| r.response())
                .map(|s| s.p99)
                .fold(0.0, f64::max)
                * 1.25;
            let title = format!(
                "Service response time (send to reply), period {}, {} requests",
                period_label(period),
                selected[0].samples.len()
            );
            let path = dir.join(file);
            std::fs::write(
                &path,
                svg::histograms(&title, "response time (us)", nice(x_max), &series),
            )
            .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    // Jitter: one plot per period as the seed's figure 4 (a) and (b); the impaired link, whose
    // overruns reach tens of milliseconds, in a plot of its own.
    let mut groups: Vec<(String, Vec<&Run>)> = Vec::new();
    for run in runs.iter().filter(|r| r.kind != Kind::RosliteImpaired) {
        let file = format!("jitter-{}.svg", period_label(run.period).replace(' ', ""));
        match groups.iter_mut().find(|g| g.0 == file) {
            Some(group) => group.1.push(run),
            None => groups.push((file, vec![run])),
        }
    }
    let impaired: Vec<&Run> = runs
        .iter()
        .filter(|r| r.kind == Kind::RosliteImpaired)
        .collect();
    if !impaired.is_empty() {
        groups.push(("jitter-impaired.svg".to_owned(), impaired));
    }
    for (file, group) in groups {
        let rows: Vec<(String, Stats)> = group
            .iter()
            .filter_map(|r| {
                Some((
                    format!("{} @ {}", r.kind.name(), period_label(r.period)),
                    r.jitter()?,
                ))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let path = dir.join(file);
        std::fs::write(
            &path,
            box_plot(
                "Send jitter (actual send time - scheduled time)",
                "send jitter (us)",
                &rows,
            ),
        )
        .with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The next of 1, 2, 5 x 10^n at or above `x` (at least 1).
fn nice(x: f64) -> f64 {
    if !(x.is_finite() && x > 1.0) {
        return 1.0;
    }
    let decade = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|v| *v >= x)
        .unwrap_or(10.0 * decade)
}

/// Horizontal box plots on one linear axis: box from p25 to p75, a bar at the median,
/// whiskers to p1 and p99, dots at min and max (a max beyond the axis is written at its end).
fn box_plot(title: &str, x_label: &str, rows: &[(String, Stats)]) -> String {
    const LEFT: f64 = 220.0;
    const WIDTH: f64 = 900.0;
    const PLOT: f64 = WIDTH - LEFT - 40.0;
    const ROW: f64 = 46.0;
    const TOP: f64 = 50.0;
    let lo = rows.iter().map(|r| r.1.min).fold(0.0, f64::min);
    let hi = nice(rows.iter().map(|r| r.1.p99).fold(1.0, f64::max) * 1.1);
    let x = |v: f64| LEFT + (v.clamp(lo, hi) - lo) / (hi - lo) * PLOT;
    let bottom = TOP + ROW * rows.len() as f64;
    let height = bottom + 60.0;
    let mut svg = svg::document(WIDTH, height, title);
    for tick in 0..=5 {
        let v = lo + (hi - lo) * tick as f64 / 5.0;
        let _ = writeln!(
            svg,
            "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{bottom}\" stroke=\"#eee\"/>\n\
             <text x=\"{0:.1}\" y=\"{1:.1}\" text-anchor=\"middle\">{2:.0}</text>",
            x(v),
            bottom + 16.0,
            v
        );
    }
    for (i, (name, s)) in rows.iter().enumerate() {
        let mid = TOP + ROW * i as f64 + ROW / 2.0;
        let (top, h) = (mid - ROW * 0.3, ROW * 0.6);
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n\
             <line x1=\"{:.1}\" y1=\"{mid:.1}\" x2=\"{:.1}\" y2=\"{mid:.1}\" stroke=\"#444\"/>\n\
             <rect x=\"{:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#9ecae1\" stroke=\"#1f77b4\"/>\n\
             <line x1=\"{2:.1}\" y1=\"{top:.1}\" x2=\"{2:.1}\" y2=\"{:.1}\" stroke=\"#d62728\" stroke-width=\"2\"/>\n\
             <circle cx=\"{:.1}\" cy=\"{mid:.1}\" r=\"2.5\" fill=\"#444\"/>\n\
             <circle cx=\"{:.1}\" cy=\"{mid:.1}\" r=\"2.5\" fill=\"#444\"/>",
            LEFT - 10.0,
            mid + 4.0,
            svg::escape(name),
            x(s.p1),
            x(s.p99),
            x(s.p25),
            (x(s.p75) - x(s.p25)).max(1.0),
            top + h,
            x(s.min),
            x(s.max),
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"#d62728\" stroke-width=\"2\"/>",
            x(s.p50),
            top,
            top + h
        );
        if s.max > hi {
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">max {:.0} us</text>",
                LEFT + PLOT,
                top - 2.0,
                s.max
            );
        }
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"middle\">{} (box p25-p75, red bar p50, whiskers \
         p1-p99, dots min and max)</text>\n</svg>",
        LEFT + PLOT / 2.0,
        bottom + 40.0,
        svg::escape(x_label)
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_plot_is_one_svg_with_a_box_per_row() {
        let s = Stats::of(&(0..100).map(f64::from).collect::<Vec<_>>()).unwrap();
        let svg = box_plot("t", "us", &[("a".into(), s), ("b <1>".into(), s)]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("fill=\"#9ecae1\"").count(), 2);
        assert!(svg.contains("b &lt;1&gt;"));
    }

    #[test]
    fn nice_rounds_up_to_1_2_5() {
        assert_eq!(nice(130.0), 200.0);
        assert_eq!(nice(0.3), 1.0);
    }
}
