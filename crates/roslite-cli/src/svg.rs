//! Minimal SVG charts for benchmark reports (no plotting dependency needed for these shapes).

use std::fmt::Write as _;

const ROW_HEIGHT: f64 = 120.0;
const LEFT: f64 = 170.0;
const WIDTH: f64 = 900.0;
const PLOT_WIDTH: f64 = WIDTH - LEFT - 30.0;
/// Distinct enough to tell apart side by side; a chart with more series repeats them.
const COLORS: [&str; 14] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
];

/// How a [`Line`] is stroked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    /// Long dashes: the second line of a pair (a p99 next to its p50, say).
    Dashed,
    /// Short dots: a reference that is not one of the measured systems (a floor, say).
    Dotted,
}

impl Stroke {
    fn attribute(self) -> &'static str {
        match self {
            Self::Solid => "",
            Self::Dashed => " stroke-dasharray=\"6 4\"",
            Self::Dotted => " stroke-dasharray=\"2 3\"",
        }
    }
}

/// One series of a [`log_log_lines`] chart.
#[derive(Clone, Debug)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the palette: lines with the same index share a colour.
    pub color: usize,
    pub stroke: Stroke,
}

/// The opening of a chart: the `<svg>` element `width` x `height` on white, with `title`
/// centred on top (on two lines, smaller, when one line of it would not fit; every chart
/// leaves 50 px above its plot for that). The caller appends the body and `</svg>`.
pub fn document(width: f64, height: f64, title: &str) -> String {
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n"
    );
    let lines = title_lines(title, width);
    let font_size = match lines.as_slice() {
        [_] => 16.0,
        _ => {
            let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
            (width / (longest as f64 * GLYPH_WIDTH)).min(14.0)
        }
    };
    for (index, line) in lines.iter().enumerate() {
        let _ =
            writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"{font_size:.1}\" text-anchor=\"middle\">{}</text>",
            width / 2.0,
            if lines.len() == 1 { 24.0 } else { 19.0 + 18.0 * index as f64 },
            escape(line)
        );
    }
    svg
}

/// Average advance of a sans-serif glyph, in units of the font size.
const GLYPH_WIDTH: f64 = 0.55;

/// `title` as one line if it fits `width` at 16 px, else split in two at the space nearest
/// its middle.
fn title_lines(title: &str, width: f64) -> Vec<&str> {
    let fits = (width / (16.0 * GLYPH_WIDTH)) as usize;
    if title.chars().count() <= fits {
        return vec![title];
    }
    let middle = title.len() / 2;
    let split = title
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by_key(|&i| i.abs_diff(middle));
    match split {
        Some(i) => vec![&title[..i], &title[i + 1..]],
        None => vec![title],
    }
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

/// A log-log line chart: one polyline with point markers per [`Line`] of `(x, y)` points, for
/// quantities spanning decades such as round-trip time against message size. `x_ticks` label
/// chosen x positions (the measured sizes, say); the y axis gets one gridline per decade.
/// Each line has the colour and stroke it asks for; the legend shows both.
/// Points that are not positive cannot be placed and are skipped.
pub fn log_log_lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
    series: &[Line],
) -> String {
    const TOP: f64 = 50.0;
    const PLOT_HEIGHT: f64 = 420.0;
    const LEGEND_ROW: f64 = 18.0;
    let placed = |v: f64| v.is_finite() && v > 0.0;
    let xs = series
        .iter()
        .flat_map(|line| line.points.iter().map(|q| q.0))
        .chain(x_ticks.iter().map(|t| t.0))
        .filter(|v| placed(*v));
    let ys = series
        .iter()
        .flat_map(|line| line.points.iter().map(|q| q.1))
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
    for (index, line) in series.iter().enumerate() {
        let color = COLORS[line.color % COLORS.len()];
        let dash = line.stroke.attribute();
        let path: Vec<(f64, f64)> = line
            .points
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
            escape(&line.name)
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
    fn long_titles_go_on_two_lines() {
        assert_eq!(title_lines("short", 900.0), ["short"]);
        let long = "Round-trip time on one host (200 pings per size back to back after 20 \
                    warm-up; the next ping is published from the echo's callback)";
        let lines = title_lines(long, 900.0);
        assert_eq!(lines.len(), 2);
        assert_eq!(format!("{} {}", lines[0], lines[1]), long);
        let svg = document(900.0, 100.0, long);
        assert_eq!(svg.matches("<text").count(), 2);
    }

    #[test]
    fn log_log_lines_place_every_positive_point() {
        let svg = log_log_lines(
            "t",
            "size",
            "us",
            &[(64.0, "64 B".into()), (4096.0, "4 KiB".into())],
            &[
                Line {
                    name: "a".into(),
                    points: vec![(64.0, 20.0), (4096.0, 900.0)],
                    color: 0,
                    stroke: Stroke::Solid,
                },
                Line {
                    name: "b".into(),
                    points: vec![(64.0, 0.0), (4096.0, 1500.0)],
                    color: 15,
                    stroke: Stroke::Dotted,
                },
            ],
        );
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Three placeable points; only "a" has a line through two of them.
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
        // Colours and strokes as asked (15 wraps round the palette to its second colour), in
        // the lines and in the legend.
        assert_eq!(svg.matches("stroke=\"#1f77b4\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("stroke=\"#ff7f0e\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("stroke-dasharray=\"2 3\"").count(), 1, "{svg}");
        // Decades 10 to 10000 on y.
        assert!(svg.contains(">10000<"), "{svg}");
        assert_eq!(format_decade(-1.0), "0.1");
        assert_eq!(format_decade(7.0), "1e7");
    }
}
