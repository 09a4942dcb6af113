//! The benches' SVG charts, drawn with plotters' SVG backend: [`log_log_lines`] (round-trip
//! time against payload size), [`histograms`] (wake-up and response times) and [`box_plot`]
//! (send jitter). Every chart has a title, labelled axes with their units, and a legend or row
//! labels; text is written as SVG `<text>` (sans-serif), so no font file is read.
//!
//! Each function renders into a string (unit tests look at it) and [`write_svg`] writes one to
//! its path.

use std::path::Path;

use anyhow::Context as _;
use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::stats::Distribution;

/// Distinct enough to tell apart side by side; a chart with more series repeats them.
const PALETTE: [RGBColor; 14] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x39, 0x3b, 0x79),
    RGBColor(0x63, 0x79, 0x39),
    RGBColor(0x8c, 0x6d, 0x31),
    RGBColor(0x84, 0x3c, 0x39),
];
const WIDTH: u32 = 900;
const FONT: &str = "sans-serif";
// Font sizes as asked of plotters, whose SVG backend writes them at 1/1.24 of that (a title
// of 20 is written at 16 px).
const TITLE_SIZE: u32 = 20;
const AXIS_SIZE: u32 = 17;
const TEXT_SIZE: u32 = 15;
const SMALL_SIZE: u32 = 13;
/// Height of one line of the title.
const TITLE_LINE: u32 = 22;
/// Average advance of a sans-serif glyph, in units of the font size (for wrapping only).
const GLYPH_WIDTH: f64 = 0.55;
const GRID: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const LIGHT_GRID: RGBColor = RGBColor(0xf0, 0xf0, 0xf0);
const OVERFLOW: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// How a [`Line`] is stroked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    /// Long dashes: the second line of a pair (a p99 next to its p50, say).
    Dashed,
    /// Short dashes: a reference that is not one of the measured systems (a floor, say).
    Dotted,
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

/// Writes `svg` to `path`, creating its directory.
///
/// # Errors
/// When the directory or the file cannot be written.
pub fn write_svg(path: &Path, svg: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// plotters' errors carry the backend's; the message is what matters here.
fn failed(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("drawing the chart: {e}")
}

/// `title` in lines that fit the chart's width at 16 px: greedy, at spaces.
fn title_lines(title: &str) -> Vec<String> {
    let fits = (f64::from(WIDTH - 40) / (16.0 * GLYPH_WIDTH)) as usize;
    let mut lines: Vec<String> = Vec::new();
    for word in title.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= fits => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// Draws the title centred on top of `root`; returns the area below it.
fn titled<'a>(root: &Area<'a>, title: &str) -> anyhow::Result<Area<'a>> {
    let lines = title_lines(title);
    let height = TITLE_LINE * lines.len() as u32 + 10;
    let (top, rest) = root.split_vertically(height);
    let style =
        TextStyle::from((FONT, TITLE_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in lines.iter().enumerate() {
        let y = 6 + (TITLE_LINE * i as u32) as i32;
        top.draw_text(line, &style, ((WIDTH / 2) as i32, y))
            .map_err(failed)?;
    }
    Ok(rest)
}

fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Points of a log axis over `[lo, hi]` at `multiples` of each power of ten.
fn log_points(lo: f64, hi: f64, multiples: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for &m in multiples {
            let v = m * decade;
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
        decade *= 10.0;
    }
    out
}

/// A value of a log axis as a plain number: 0.5, 2, 100, 5000, 1e+06.
fn axis_number(v: f64) -> String {
    if !(1e-3..1e6).contains(&v.abs()) && v != 0.0 {
        return format!("{v:e}");
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A log-log line chart: one line with point markers per [`Line`] of `(x, y)` points, for
/// quantities spanning decades such as round-trip time against message size. `x_ticks` label
/// chosen x positions (the measured sizes, say); the y axis gets gridlines at 1, 2 and 5 times
/// each power of ten (labelled at each power only when it spans more than three decades). Each line has the colour and stroke it asks for; the legend below the
/// plot shows both. Points that are not positive cannot be placed and are left out.
///
/// # Errors
/// When plotters fails to draw (it does not with a string backend and finite ranges).
pub fn log_log_lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
    series: &[Line],
) -> anyhow::Result<String> {
    const PLOT_HEIGHT: u32 = 480;
    const LEGEND_ROW: u32 = 18;
    let placed = |v: f64| v.is_finite() && v > 0.0;
    let lines: Vec<(&Line, Vec<(f64, f64)>)> = series
        .iter()
        .map(|line| {
            let points = line
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| placed(x) && placed(y))
                .collect();
            (line, points)
        })
        .collect();
    let xs = lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.0))
        .chain(x_ticks.iter().map(|t| t.0).filter(|v| placed(*v)));
    let ys = lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1));
    let (x_min, x_max) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (y_min, y_max) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // A little room either side on x; whole decades on y.
    let (x_lo, x_hi) = if x_min <= x_max {
        (x_min / 1.4, x_max * 1.4)
    } else {
        (1.0, 10.0)
    };
    let (y_lo, y_hi) = if y_min <= y_max {
        let lo = 10f64.powf(y_min.log10().floor());
        let hi = 10f64.powf(y_max.log10().ceil());
        (lo, if hi > lo { hi } else { lo * 10.0 })
    } else {
        (1.0, 10.0)
    };
    let legend_rows = lines.len().div_ceil(2) as u32;
    let title_height = TITLE_LINE * title_lines(title).len() as u32 + 10;
    let height = title_height + PLOT_HEIGHT + LEGEND_ROW * legend_rows + 20;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let body = titled(&root, title)?;
        let (plot, legend) = body.split_vertically(PLOT_HEIGHT);
        let tick_labels: Vec<(f64, String)> =
            x_ticks.iter().filter(|t| placed(t.0)).cloned().collect();
        let x_keys: Vec<f64> = tick_labels.iter().map(|t| t.0).collect();
        // Labels at 1, 2 and 5 times each power of ten over up to three decades; over more,
        // at the powers of ten, with light gridlines at 2 and 5 times them.
        let y_axis = if y_hi / y_lo <= 1e3 {
            (y_lo..y_hi)
                .log_scale()
                .with_key_points(log_points(y_lo, y_hi, &[1.0, 2.0, 5.0]))
        } else {
            (y_lo..y_hi)
                .log_scale()
                .with_key_points(log_points(y_lo, y_hi, &[1.0]))
                .with_light_points(log_points(y_lo, y_hi, &[2.0, 5.0]))
        };
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(10)
            .margin_right(30)
            .margin_top(10)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale().with_key_points(x_keys), y_axis)
            .map_err(failed)?;
        let x_text = |v: &f64| {
            tick_labels
                .iter()
                .find(|t| (t.0 - v).abs() <= t.0 * 1e-9)
                .map_or_else(|| axis_number(*v), |t| t.1.clone())
        };
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .light_line_style(LIGHT_GRID)
            .x_desc(x_label)
            .y_desc(y_label)
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, TEXT_SIZE))
            .x_label_formatter(&x_text)
            .y_label_formatter(&|v| axis_number(*v))
            .draw()
            .map_err(failed)?;
        for (line, points) in &lines {
            let style = color(line.color).stroke_width(2);
            match line.stroke {
                Stroke::Solid => chart.draw_series(LineSeries::new(points.clone(), style)),
                Stroke::Dashed => {
                    chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))
                }
                Stroke::Dotted => {
                    chart.draw_series(DashedLineSeries::new(points.clone(), 2, 4, style))
                }
            }
            .map_err(failed)?;
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&p| Circle::new(p, 3, color(line.color).filled())),
                )
                .map_err(failed)?;
        }
        // The legend: two columns under the plot, each entry a stroke sample and the name.
        let column = (WIDTH / 2) as i32;
        for (index, (line, _)) in lines.iter().enumerate() {
            let x = 80 + column * (index % 2) as i32;
            let y = 10 + (LEGEND_ROW * (index / 2) as u32) as i32;
            let sample = [(x, y), (x + 30, y)];
            let style = color(line.color).stroke_width(2);
            match line.stroke {
                Stroke::Solid => legend.draw(&PathElement::new(sample, style)),
                Stroke::Dashed => legend.draw(&DashedPathElement::new(sample, 8, 5, style)),
                Stroke::Dotted => legend.draw(&DashedPathElement::new(sample, 2, 4, style)),
            }
            .map_err(failed)?;
            let text = TextStyle::from((FONT, TEXT_SIZE).into_font())
                .pos(Pos::new(HPos::Left, VPos::Center));
            legend
                .draw_text(&line.name, &text, (x + 38, y))
                .map_err(failed)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// The next of 1, 2, 5 x 10^n at or above `x` (at least 1): an axis end that reads well.
pub fn nice(x: f64) -> f64 {
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

/// One histogram per series, stacked, on a shared x axis from 0 to `x_max` (rounded up to 1,
/// 2 or 5 times a power of ten); values above it are counted in a last grey "overflow" bar. Bar heights are the percentage of the
/// series' samples, so series of different lengths compare.
///
/// # Errors
/// As [`log_log_lines`].
pub fn histograms(
    title: &str,
    x_label: &str,
    x_max: f64,
    series: &[(String, Vec<f64>)],
) -> anyhow::Result<String> {
    const BINS: usize = 60;
    const ROW: u32 = 150;
    // An axis end that reads well (1, 2 or 5 times a power of ten).
    let x_max = nice(x_max);
    let bin_width = x_max / BINS as f64;
    let title_height = TITLE_LINE * title_lines(title).len() as u32 + 10;
    let height = title_height + ROW * series.len().max(1) as u32 + 30;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let body = titled(&root, title)?;
        let rows = body.split_evenly((series.len().max(1), 1));
        for (row, ((name, values), area)) in series.iter().zip(&rows).enumerate() {
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
            let percent = |count: usize| count as f64 / total * 100.0;
            let peak = counts.iter().copied().map(percent).fold(0.0, f64::max);
            let last = row + 1 == series.len();
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{name} ({} samples)", values.len()),
                    (FONT, TEXT_SIZE).into_font(),
                )
                .margin_left(10)
                .margin_right(30)
                .x_label_area_size(if last { 45 } else { 20 })
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..bin_width * (BINS + 1) as f64, 0.0..nice(peak * 1.1))
                .map_err(failed)?;
            let mut mesh = chart.configure_mesh();
            mesh.disable_x_mesh()
                .bold_line_style(GRID)
                .light_line_style(WHITE)
                .y_desc("% of samples")
                .axis_desc_style((FONT, TEXT_SIZE))
                .label_style((FONT, SMALL_SIZE))
                .x_labels(7)
                .y_labels(3)
                .x_label_formatter(&|v| axis_number(*v))
                .y_label_formatter(&|v| axis_number(*v));
            if last {
                mesh.x_desc(format!(
                    "{x_label} (grey bar: above {})",
                    axis_number(x_max)
                ));
            }
            mesh.draw().map_err(failed)?;
            let fill = color(row).filled();
            chart
                .draw_series(counts.iter().enumerate().filter(|(_, &c)| c > 0).map(
                    |(bin, &count)| {
                        let x0 = bin_width * bin as f64;
                        let style = if bin == BINS { OVERFLOW.filled() } else { fill };
                        Rectangle::new([(x0, 0.0), (x0 + bin_width * 0.9, percent(count))], style)
                    },
                ))
                .map_err(failed)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// Horizontal box plots on one linear axis, one row per `(name, distribution)`: a box from
/// p25 to p75, a red bar at the median, whiskers to p1 and p99, dots at min and max (a max
/// beyond the axis is drawn at its end and written next to it).
///
/// # Errors
/// As [`log_log_lines`].
pub fn box_plot(
    title: &str,
    x_label: &str,
    rows: &[(String, Distribution)],
) -> anyhow::Result<String> {
    const ROW: u32 = 46;
    const BOX: RGBColor = RGBColor(0x9e, 0xca, 0xe1);
    const EDGE: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
    const MEDIAN: RGBColor = RGBColor(0xd6, 0x27, 0x28);
    const WHISKER: RGBColor = RGBColor(0x44, 0x44, 0x44);
    let lo = rows.iter().map(|r| r.1.min).fold(0.0, f64::min);
    let hi = nice(rows.iter().map(|r| r.1.p99).fold(1.0, f64::max) * 1.1);
    let n = rows.len().max(1);
    let title_height = TITLE_LINE * title_lines(title).len() as u32 + 10;
    let height = title_height + ROW * n as u32 + 80;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let body = titled(&root, title)?;
        // Row i (from the top) is centred on y = n - i - 0.5.
        let centres: Vec<f64> = (0..n).map(|i| n as f64 - i as f64 - 0.5).collect();
        let mut chart = ChartBuilder::on(&body)
            .margin_left(10)
            .margin_right(30)
            .x_label_area_size(50)
            .y_label_area_size(230)
            .build_cartesian_2d(lo..hi, 0.0..n as f64)
            .map_err(failed)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .bold_line_style(GRID)
            .light_line_style(WHITE)
            .x_desc(format!(
                "{x_label} (box p25-p75, red bar p50, whiskers p1-p99, dots min and max)"
            ))
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, TEXT_SIZE))
            .x_labels(6)
            .x_label_formatter(&|v| axis_number(*v))
            .draw()
            .map_err(failed)?;
        // The row names, left of the plot (the label area is outside the chart's own area).
        let name_style =
            TextStyle::from((FONT, TEXT_SIZE).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for ((name, _), &y) in rows.iter().zip(&centres) {
            let (x, y) = chart.backend_coord(&(lo, y));
            root.draw_text(name, &name_style, (x - 10, y))
                .map_err(failed)?;
        }
        let clamp = |v: f64| v.clamp(lo, hi);
        for ((_, s), &y) in rows.iter().zip(&centres) {
            let (top, bottom) = (y + 0.3, y - 0.3);
            chart
                .draw_series([PathElement::new(
                    [(clamp(s.p1), y), (clamp(s.p99), y)],
                    WHISKER.stroke_width(1),
                )])
                .map_err(failed)?;
            chart
                .draw_series([
                    Rectangle::new([(clamp(s.p25), bottom), (clamp(s.p75), top)], BOX.filled()),
                    Rectangle::new([(clamp(s.p25), bottom), (clamp(s.p75), top)], EDGE),
                ])
                .map_err(failed)?;
            chart
                .draw_series([PathElement::new(
                    [(clamp(s.p50), bottom), (clamp(s.p50), top)],
                    MEDIAN.stroke_width(2),
                )])
                .map_err(failed)?;
            chart
                .draw_series(
                    [s.min, s.max].map(|v| Circle::new((clamp(v), y), 3, WHISKER.filled())),
                )
                .map_err(failed)?;
            if s.max > hi {
                let style = TextStyle::from((FONT, SMALL_SIZE).into_font())
                    .pos(Pos::new(HPos::Right, VPos::Bottom));
                chart
                    .draw_series([Text::new(
                        format!("max {} us", axis_number(s.max.round())),
                        (hi, top),
                        style,
                    )])
                    .map_err(failed)?;
            }
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_one_svg(svg: &str) -> bool {
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>")
    }

    #[test]
    fn log_log_lines_label_axes_and_legend_every_series() {
        let svg = log_log_lines(
            "t",
            "payload size",
            "round-trip time (us)",
            &[(64.0, "64 B".into()), (4096.0, "4 KiB".into())],
            &[
                Line {
                    name: "a p50".into(),
                    points: vec![(64.0, 20.0), (4096.0, 900.0)],
                    color: 0,
                    stroke: Stroke::Solid,
                },
                Line {
                    name: "b <floor>".into(),
                    points: vec![(64.0, 0.0), (4096.0, 1500.0)],
                    color: 15,
                    stroke: Stroke::Dotted,
                },
            ],
        )
        .unwrap();
        assert!(is_one_svg(&svg), "{svg}");
        // plotters writes each text on a line of its own.
        let flat = svg.split_whitespace().collect::<Vec<_>>().join(" ");
        for text in [
            "payload size",
            "round-trip time (us)",
            "64 B",
            "4 KiB",
            "a p50",
            "b &lt;floor&gt;",
            "> 1000 <",
        ] {
            assert!(flat.contains(text), "{text} missing in {svg}");
        }
        // Three placeable points get a marker each.
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
    }

    #[test]
    fn long_titles_wrap() {
        assert_eq!(title_lines("short"), ["short"]);
        let long = "Round-trip time on one host (200 pings per size back to back after 20 \
                    warm-up; the next ping is published from the echo's callback), reliable \
                    keep-last 1";
        let lines = title_lines(long);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines.join(" "), long);
    }

    #[test]
    fn histograms_have_a_row_per_series_and_an_overflow_bar() {
        let svg = histograms(
            "t",
            "wake-up latency (us)",
            50.0,
            &[
                ("a".into(), vec![0.5, 0.5, 49.0, 1000.0]),
                ("b + c".into(), vec![10.0]),
            ],
        )
        .unwrap();
        assert!(is_one_svg(&svg), "{svg}");
        assert!(svg.contains("a (4 samples)"), "{svg}");
        assert!(svg.contains("b + c (1 samples)"), "{svg}");
        assert!(
            svg.contains("wake-up latency (us) (grey bar: above 50)"),
            "{svg}"
        );
        assert!(svg.contains("#999999"), "{svg}");
    }

    #[test]
    fn box_plot_has_a_box_per_row() {
        let s = Distribution::of(&(0..100).map(f64::from).collect::<Vec<_>>()).unwrap();
        let svg = box_plot(
            "t",
            "send jitter (us)",
            &[("a".into(), s), ("b <1>".into(), s)],
        )
        .unwrap();
        assert!(is_one_svg(&svg), "{svg}");
        assert_eq!(
            svg.matches("#9ECAE1").count() + svg.matches("#9ecae1").count(),
            2
        );
        assert!(svg.contains("b &lt;1&gt;"), "{svg}");
    }

    #[test]
    fn nice_rounds_up_to_1_2_5() {
        assert_eq!(nice(130.0), 200.0);
        assert_eq!(nice(0.3), 1.0);
        assert_eq!(
            log_points(1.0, 100.0, &[1.0, 2.0, 5.0]),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert_eq!(axis_number(0.5), "0.5");
        assert_eq!(axis_number(5000.0), "5000");
    }
}
