//! `bench service`'s plots, after the ROS 2 service round-trip over local 5G study's figures 3
//! (response-time histograms) and 4 (send-jitter box plots).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;

use super::model::{period_label, Kind, Run};
use crate::toolkit::plot::{self, nice};
use crate::toolkit::stats::Distribution;

/// Writes every plot of `runs` into `dir`; the files written.
pub fn write_svgs(dir: &Path, runs: &[Run]) -> anyhow::Result<Vec<PathBuf>> {
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
            let chart = plot::histograms(&title, "response time (us)", nice(x_max), &series)?;
            plot::write_svg(&path, &chart)?;
            written.push(path);
        }
    }
    // Jitter: one plot per period as the study's figure 4 (a) and (b); the impaired link, whose
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
        let rows: Vec<(String, Distribution)> = group
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
        let chart = plot::box_plot(
            "Send jitter (actual send time - scheduled time)",
            "send jitter (us)",
            &rows,
        )?;
        plot::write_svg(&path, &chart)?;
        written.push(path);
    }
    Ok(written)
}
