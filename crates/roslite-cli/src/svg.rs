//! Minimal SVG charts for benchmark reports (no plotting dependency needed for these shapes).

use std::fmt::Write as _;

const ROW_HEIGHT: f64 = 120.0;
const LEFT: f64 = 170.0;
const WIDTH: f64 = 900.0;
const PLOT_WIDTH: f64 = WIDTH - LEFT - 30.0;
const COLORS: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

fn escape(text: &str) -> String {
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
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n<text x=\"{}\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        WIDTH / 2.0,
        escape(title)
    );
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
}
