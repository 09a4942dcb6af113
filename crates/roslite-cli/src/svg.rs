//! Minimal SVG charts for benchmark reports (no plotting dependency needed for these shapes).

use std::fmt::Write as _;

const ROW_HEIGHT: f64 = 120.0;
const LEFT: f64 = 170.0;
const WIDTH: f64 = 900.0;
const PLOT_WIDTH: f64 = WIDTH - LEFT - 30.0;
const COLORS: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

/// The opening of a chart: the `<svg>` element `width` x `height` on white, with `title`
/// centred on top. The caller appends the body and `</svg>`.
pub fn document(width: f64, height: f64, title: &str) -> String {
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n<text x=\"{}\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        width / 2.0,
        escape(title)
    );
    svg
}

/// `text` with the characters XML gives meaning escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One histogram per series, stacked, on a shared x axis from 0 to `x_max`; values above
/// `x_max` are counted in a last "overflow" bar. Bar heights are the fraction of the series'
/// samples, so series of different lengths compare.
pub fn histograms(title: &str, x_label: &str, x_max: f64, series: &[(String, Vec<f64>)]) -> String {
    const BINS: usize = 60;
    let height = 60.0 + ROW_HEIGHT * series.len() as f64 + 50.0;
    let mut svg = document(WIDTH, height, title);
    let bin_width = x_max / BINS as f64;
    for (row, (name, values)) in series.iter().enumerate() {
        let top = 50.0 + ROW_HEIGHT * row as f64;
        let base = top + ROW_HEIGHT - 20.0;
        let mut counts = [0usize; BINS + 1];
        for &v in values {
            let bin = if v >= x_max {
                BINS
            } else {
                (v.max(0.0) / bin_width) as usize
            };
            counts[bin.min(BINS)] += 1;
        }
        let total = values.len().max(1) as f64;
        let peak = counts.iter().copied().max().unwrap_or(1).max(1) as f64 / total;
        let color = COLORS[row % COLORS.len()];
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LEFT - 10.0,
            top + ROW_HEIGHT / 2.0,
            escape(name)
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\" stroke=\"#444\"/>",
            LEFT + PLOT_WIDTH
        );
        let bar = PLOT_WIDTH / (BINS + 1) as f64;
        for (i, &count) in counts.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let h = (count as f64 / total) / peak * (ROW_HEIGHT - 35.0);
            let fill = if i == BINS { "#999" } else { color };
            let _ = writeln!(
                svg,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"/>",
                LEFT + bar * i as f64,
                base - h,
                (bar - 1.0).max(1.0),
                h
            );
        }
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">peak {:.1}% of {} samples</text>",
            LEFT + PLOT_WIDTH,
            top + 8.0,
            peak * 100.0,
            values.len()
        );
    }
    let axis_y = 50.0 + ROW_HEIGHT * series.len() as f64;
    for tick in 0..=6 {
        let x = LEFT + PLOT_WIDTH * (BINS as f64 / (BINS + 1) as f64) * tick as f64 / 6.0;
        let _ = writeln!(
            svg,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.0}</text>",
            axis_y + 5.0,
            x_max * tick as f64 / 6.0
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"middle\">{} (last bar: above {:.0})</text>\n</svg>",
        LEFT + PLOT_WIDTH / 2.0,
        axis_y + 30.0,
        escape(x_label),
        x_max
    );
    svg
}

/// A log-log line chart: one polyline with point markers per series of `(x, y)` points, for
/// quantities spanning decades such as round-trip time against message size. `x_ticks` label
/// chosen x positions (the measured sizes, say); the y axis gets one gridline per decade.
/// Series are drawn in pairs sharing a colour, the first solid and the second dashed (a p50
/// line and its p99 line, say).
/// Points that are not positive cannot be placed and are skipped.
pub fn log_log_lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    const TOP: f64 = 50.0;
    const PLOT_HEIGHT: f64 = 420.0;
    const LEGEND_ROW: f64 = 18.0;
    let placed = |v: f64| v.is_finite() && v > 0.0;
    let xs = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .chain(x_ticks.iter().map(|t| t.0))
        .filter(|v| placed(*v));
    let ys = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .filter(|v| placed(*v));
    let (x_min, x_max) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (y_min, y_max) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Whole decades on y; a little room either side on x.
    let (y_lo, y_hi) = if y_min <= y_max {
        (
            y_min.log10().floor(),
            y_max.log10().ceil().max(y_min.log10().floor() + 1.0),
        )
    } else {
        (0.0, 1.0)
    };
    let (x_lo, x_hi) = if x_min < x_max {
        let pad = (x_max.log10() - x_min.log10()) * 0.04;
        (x_min.log10() - pad, x_max.log10() + pad)
    } else if x_min == x_max {
        (x_min.log10() - 0.5, x_min.log10() + 0.5)
    } else {
        (0.0, 1.0)
    };
    let to_x = |v: f64| LEFT + (v.log10() - x_lo) / (x_hi - x_lo) * PLOT_WIDTH;
    let to_y = |v: f64| TOP + PLOT_HEIGHT - (v.log10() - y_lo) / (y_hi - y_lo) * PLOT_HEIGHT;
    let legend_top = TOP + PLOT_HEIGHT + 55.0;
    let height = legend_top + LEGEND_ROW * series.len() as f64 + 10.0;
    let mut svg = document(WIDTH, height, title);
    let bottom = TOP + PLOT_HEIGHT;
    let _ = writeln!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_WIDTH}\" height=\"{PLOT_HEIGHT}\" \
         fill=\"none\" stroke=\"#444\"/>"
    );
    let mut decade = y_lo;
    while decade <= y_hi + 1e-9 {
        let y = to_y(10f64.powf(decade));
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + PLOT_WIDTH,
            LEFT - 6.0,
            y + 4.0,
            format_decade(decade)
        );
        decade += 1.0;
    }
    for (x, label) in x_ticks.iter().filter(|t| placed(t.0)) {
        let x = to_x(*x);
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{bottom}\" stroke=\"#eee\"/>\n\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            escape(label)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
         <text x=\"20\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {:.1})\">{}</text>",
        LEFT + PLOT_WIDTH / 2.0,
        bottom + 38.0,
        escape(x_label),
        TOP + PLOT_HEIGHT / 2.0,
        TOP + PLOT_HEIGHT / 2.0,
        escape(y_label)
    );
    for (index, (name, points)) in series.iter().enumerate() {
        let color = COLORS[(index / 2) % COLORS.len()];
        let dash = if index % 2 == 1 {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let path: Vec<(f64, f64)> = points
            .iter()
            .filter(|(x, y)| placed(*x) && placed(*y))
            .map(|&(x, y)| (to_x(x), to_y(y)))
            .collect();
        if path.len() > 1 {
            let coordinates: Vec<String> =
                path.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = writeln!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
                coordinates.join(" ")
            );
        }
        for (x, y) in &path {
            let _ = writeln!(
                svg,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{color}\"/>"
            );
        }
        let y = legend_top + LEGEND_ROW * index as f64;
        let _ = writeln!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"{color}\" \
             stroke-width=\"2\"{dash}/>\n<text x=\"{}\" y=\"{:.1}\">{}</text>",
            LEFT + 30.0,
            LEFT + 38.0,
            y + 4.0,
            escape(name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// `10^d` as a plain number: 0.1, 1, 10, 100, 1000, 1e4...
fn format_decade(decade: f64) -> String {
    let value = 10f64.powf(decade);
    if (-3.0..=6.0).contains(&decade) {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("1e{decade:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_land_in_bins_and_overflow() {
        let svg = histograms(
            "t",
            "us",
            60.0,
            &[("a".into(), vec![0.5, 0.5, 59.0, 1000.0])],
        );
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Two non-empty normal bins and one overflow bar.
        assert_eq!(svg.matches("<rect x=").count(), 3);
        assert_eq!(svg.matches("fill=\"#999\"").count(), 1);
    }

    #[test]
    fn log_log_lines_place_every_positive_point() {
        let svg = log_log_lines(
            "t",
            "size",
            "us",
            &[(64.0, "64 B".into()), (4096.0, "4 KiB".into())],
            &[
                ("a".into(), vec![(64.0, 20.0), (4096.0, 900.0)]),
                ("b".into(), vec![(64.0, 0.0), (4096.0, 1500.0)]),
            ],
        );
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Three placeable points; only "a" has a line through two of them.
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
        // Decades 10 to 10000 on y.
        assert!(svg.contains(">10000<"), "{svg}");
        assert_eq!(format_decade(-1.0), "0.1");
        assert_eq!(format_decade(7.0), "1e7");
    }
}
