//! The report's charts, drawn with plotters' SVG backend as the benches' are
//! (crates/roslite-bench/src/toolkit/plot.rs): [`box_plot_svg`] (latency), [`memory_svg`]
//! (resident memory per process) and [`path_svg`] (the robot's path over the course). Each
//! has a title, axes labelled with their units and a legend row under the plot saying what
//! the marks mean; text is written as SVG `<text>` (sans-serif), so no font file is read.

use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::Summary;
use crate::course;
use crate::launch::ProcessMemory;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawError = DrawingAreaErrorKind<std::io::Error>;

const WIDTH: u32 = 900;
const FONT: &str = "sans-serif";
// Font sizes as asked of plotters, whose SVG backend writes them at 1/1.24 of that (a title of
// 20 is written at 16 px).
const TITLE_SIZE: u32 = 20;
const AXIS_SIZE: u32 = 17;
const TEXT_SIZE: u32 = 15;
const TITLE_HEIGHT: u32 = 36;
const LEGEND_HEIGHT: u32 = 30;
/// Average advance of a sans-serif glyph, in units of the written font size (for layout only).
const GLYPH_WIDTH: f64 = 0.55;
const GRID: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const LIGHT_GRID: RGBColor = RGBColor(0xf0, 0xf0, 0xf0);
const WHISKER: RGBColor = RGBColor(0x44, 0x44, 0x44);
const COLORS: [RGBColor; 4] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
];

/// A mark in a legend, drawn 24 px wide before its text.
#[derive(Clone, Copy)]
enum Mark {
    /// A translucent box with an outline, as a box plot's.
    Box(RGBColor),
    /// A solid box, as a bar's.
    Fill(RGBColor),
    /// A short horizontal line of the given width.
    Line(RGBColor, u32),
    /// A dot.
    Dot(RGBColor),
    /// A vertical bar, as the median's.
    Tick(RGBColor),
    /// A horizontal line with end caps, as the whiskers.
    Whisker(RGBColor),
}

/// Renders `draw` on a white `size` canvas into a string.
///
/// # Panics
/// When plotters reports an error, which it does not: the string backend's writes cannot fail
/// and every chart's ranges are finite and non-empty.
fn render(size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Result<(), DrawError>) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present());
        if let Err(e) = drawn {
            panic!("internal bug: drawing a report chart: {e}");
        }
    }
    svg
}

/// Pixel width of `text` written at `size` (as asked of plotters), roughly.
fn text_width(text: &str, size: u32) -> u32 {
    (text.chars().count() as f64 * f64::from(size) / 1.24 * GLYPH_WIDTH).ceil() as u32
}

/// Draws `title` centred on top of `root`; returns the area below it.
fn titled<'a>(root: &Area<'a>, title: &str) -> Result<Area<'a>, DrawError> {
    let (top, rest) = root.split_vertically(TITLE_HEIGHT);
    let width = top.dim_in_pixel().0;
    let style =
        TextStyle::from((FONT, TITLE_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    top.draw_text(
        title,
        &style,
        ((width / 2) as i32, (TITLE_HEIGHT / 2) as i32),
    )?;
    Ok(rest)
}

/// One row of `entries`, each a mark and what it means, from `left` px across `area`.
fn legend(area: &Area<'_>, left: i32, entries: &[(Mark, &str)]) -> Result<(), DrawError> {
    let text =
        TextStyle::from((FONT, TEXT_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let (mut x, y) = (left, (LEGEND_HEIGHT / 2) as i32);
    for &(mark, label) in entries {
        match mark {
            Mark::Box(c) => {
                area.draw(&Rectangle::new(
                    [(x, y - 7), (x + 24, y + 7)],
                    c.mix(0.3).filled(),
                ))?;
                area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], c))?;
            }
            Mark::Fill(c) => {
                area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], c.filled()))?;
            }
            Mark::Line(c, w) => {
                area.draw(&PathElement::new([(x, y), (x + 24, y)], c.stroke_width(w)))?;
            }
            Mark::Dot(c) => area.draw(&Circle::new((x + 12, y), 4, c.filled()))?,
            Mark::Tick(c) => {
                area.draw(&PathElement::new(
                    [(x + 12, y - 8), (x + 12, y + 8)],
                    c.stroke_width(2),
                ))?;
            }
            Mark::Whisker(c) => {
                area.draw(&PathElement::new([(x, y), (x + 24, y)], c))?;
                area.draw(&PathElement::new([(x, y - 5), (x, y + 5)], c))?;
                area.draw(&PathElement::new([(x + 24, y - 5), (x + 24, y + 5)], c))?;
            }
        }
        area.draw_text(label, &text, (x + 30, y))?;
        x += 30 + text_width(label, TEXT_SIZE) as i32 + 24;
    }
    Ok(())
}

/// A number on an axis: 0.5, 2, 100, 5000, 1e6.
fn axis_number(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        return format!("{v:e}");
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// An axis end at or above `x` that reads well (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power
/// of ten); 1 for nothing to show.
fn axis_end(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(x.log10().floor());
    [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * decade)
        .find(|v| *v >= x * (1.0 - 1e-12))
        .unwrap_or(10.0 * decade)
}

/// Width of a label area holding `names` right-aligned, plus room for the axis title.
fn names_area(names: impl Iterator<Item = usize>) -> u32 {
    let longest = names.max().unwrap_or(0);
    (text_width(&"m".repeat(longest), TEXT_SIZE) * 9 / 10 + 50).clamp(110, 420)
}

/// Horizontal box plots, one row per series: box p25-p75 (the quartiles), a black bar at the
/// median, a black dot at the mean, whiskers from min to max; the latency axis in us is
/// log-scaled when the values span more than a decade.
pub fn box_plot_svg(title: &str, series: &[(&str, &[f64])]) -> String {
    let stats: Vec<Option<Summary>> = series.iter().map(|(_, v)| Summary::of(v)).collect();
    let lo = stats
        .iter()
        .flatten()
        .map(|s| s.min)
        .fold(f64::INFINITY, f64::min);
    let hi = stats.iter().flatten().map(|s| s.max).fold(0.0, f64::max);
    let names: Vec<String> = series
        .iter()
        .zip(&stats)
        .map(|((name, _), s)| match s {
            Some(_) => (*name).to_owned(),
            None => format!("{name} (no samples)"),
        })
        .collect();
    let rows = BoxRows {
        names: &names,
        stats: &stats,
    };
    let n = series.len().max(1);
    let height = TITLE_HEIGHT + BoxRows::ROW * n as u32 + 70 + LEGEND_HEIGHT;
    render((WIDTH, height), |root| {
        if lo > 0.0 && hi / lo > 10.0 {
            let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
            let (start, end) = (10f64.powi(a), 10f64.powi(b));
            // Labels at 1, 2 and 5 times each power of ten over up to two decades; over more,
            // at the powers of ten, with unlabelled gridlines at 2 and 5 times them.
            let times = |multiples: &[f64]| -> Vec<f64> {
                (a..=b)
                    .flat_map(|e| multiples.iter().map(move |m| m * 10f64.powi(e)))
                    .filter(|&v| v <= end)
                    .collect()
            };
            let (decades, light) = if b - a <= 2 {
                (times(&[1.0, 2.0, 5.0]), Vec::new())
            } else {
                (times(&[1.0]), times(&[2.0, 5.0]))
            };
            let x = (start..end)
                .log_scale()
                .with_key_points(decades)
                .with_light_points(light);
            rows.draw(root, title, x, (start, end), "latency (us, log scale)")
        } else {
            let end = axis_end(hi * 1.05);
            rows.draw(root, title, 0.0..end, (0.0, end), "latency (us)")
        }
    })
}

/// The rows of [`box_plot_svg`], drawn on a linear or a log axis.
struct BoxRows<'a> {
    /// One per row, from the top.
    names: &'a [String],
    stats: &'a [Option<Summary>],
}

impl BoxRows<'_> {
    const ROW: u32 = 56;

    /// Draws the title, the rows on `x` (whose values span `range`) and the legend.
    fn draw<X>(
        &self,
        root: &Area<'_>,
        title: &str,
        x: X,
        range: (f64, f64),
        x_desc: &str,
    ) -> Result<(), DrawError>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let n = self.names.len().max(1);
        let name_area = names_area(self.names.iter().map(|s| s.chars().count()));
        let body = titled(root, title)?;
        let (plot, key) = body.split_vertically(Self::ROW * n as u32 + 70);
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(10)
            .margin_right(30)
            .margin_top(5)
            .x_label_area_size(55)
            .y_label_area_size(name_area)
            .build_cartesian_2d(x, 0.0..n as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(7)
            .bold_line_style(GRID)
            .light_line_style(LIGHT_GRID)
            .x_desc(x_desc)
            .y_desc("run")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, TEXT_SIZE))
            .x_label_formatter(&|v| axis_number(*v))
            .draw()?;
        // Row i (from the top) is centred on y = n - i - 0.5.
        let centre = |i: usize| n as f64 - i as f64 - 0.5;
        row_names(root, &chart, range.0, self.names, centre)?;
        let t = |v: f64| v.clamp(range.0, range.1);
        for (i, s) in self.stats.iter().enumerate() {
            let Some(s) = s else { continue };
            let (y, c) = (centre(i), COLORS[i % COLORS.len()]);
            let (bottom, top) = (y - 0.3, y + 0.3);
            let (cap_lo, cap_hi) = (y - 0.15, y + 0.15);
            chart.draw_series([
                PathElement::new([(t(s.min), y), (t(s.max), y)], c.stroke_width(1)),
                PathElement::new([(t(s.min), cap_lo), (t(s.min), cap_hi)], c.stroke_width(1)),
                PathElement::new([(t(s.max), cap_lo), (t(s.max), cap_hi)], c.stroke_width(1)),
            ])?;
            chart.draw_series([
                Rectangle::new([(t(s.p25), bottom), (t(s.p75), top)], c.mix(0.3).filled()),
                Rectangle::new([(t(s.p25), bottom), (t(s.p75), top)], c.stroke_width(1)),
            ])?;
            chart.draw_series([PathElement::new(
                [(t(s.p50), bottom), (t(s.p50), top)],
                BLACK.stroke_width(2),
            )])?;
            chart.draw_series([Circle::new((t(s.mean), y), 4, BLACK.filled())])?;
        }
        legend(
            &key,
            name_area as i32,
            &[
                (Mark::Box(WHISKER), "box: quartiles (p25-p75)"),
                (Mark::Tick(BLACK), "median"),
                (Mark::Dot(BLACK), "mean"),
                (Mark::Whisker(WHISKER), "whiskers: min-max"),
            ],
        )
    }
}

/// Writes `names` right-aligned left of `chart`'s plot, name i at y = `centre(i)`.
fn row_names<X>(
    root: &Area<'_>,
    chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, RangedCoordf64>>,
    x_start: f64,
    names: &[String],
    centre: impl Fn(usize) -> f64,
) -> Result<(), DrawError>
where
    X: Ranged<ValueType = f64>,
{
    let style =
        TextStyle::from((FONT, TEXT_SIZE).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, name) in names.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(x_start, centre(i)));
        root.draw_text(name, &style, (x - 10, y))?;
    }
    Ok(())
}

/// Stacked bars RES + SHR = RSS per process (as Fig. 5.3 of the mROS 2 line-follower
/// evaluation), in MB (10^6 bytes), with the RSS written at each bar's end.
pub fn memory_svg(rows: &[ProcessMemory]) -> String {
    const ROW: u32 = 34;
    const RES: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
    const SHR: RGBColor = RGBColor(0xae, 0xc7, 0xe8);
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    // Room after the longest bar for its total.
    let end = axis_end(rows.iter().map(|m| mb(m.vm_rss)).fold(0.0, f64::max) * 1.2);
    let n = rows.len().max(1);
    let name_area = names_area(rows.iter().map(|m| m.process.chars().count()));
    let height = TITLE_HEIGHT + ROW * n as u32 + 70 + LEGEND_HEIGHT;
    render((WIDTH, height), |root| {
        let body = titled(root, "Resident memory per process (RES + SHR = RSS)")?;
        let (plot, key) = body.split_vertically(ROW * n as u32 + 70);
        let centre = |i: usize| n as f64 - i as f64 - 0.5;
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(10)
            .margin_right(30)
            .margin_top(5)
            .x_label_area_size(55)
            .y_label_area_size(name_area)
            .build_cartesian_2d(0.0..end, 0.0..n as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(7)
            .bold_line_style(GRID)
            .light_line_style(LIGHT_GRID)
            .x_desc("resident memory (MB = 10^6 bytes)")
            .y_desc("process")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, TEXT_SIZE))
            .x_label_formatter(&|v| axis_number(*v))
            .draw()?;
        let names: Vec<String> = rows.iter().map(|m| m.process.clone()).collect();
        row_names(root, &chart, 0.0, &names, centre)?;
        let total =
            TextStyle::from((FONT, TEXT_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for (i, m) in rows.iter().enumerate() {
            let y = centre(i);
            let (bottom, top) = (y - 0.35, y + 0.35);
            let (res, shr) = (mb(m.res()), mb(m.shr()));
            chart.draw_series([
                Rectangle::new([(0.0, bottom), (res, top)], RES.filled()),
                Rectangle::new([(res, bottom), (res + shr, top)], SHR.filled()),
            ])?;
            chart.draw_series([EmptyElement::at((mb(m.vm_rss), y))
                + Text::new(format!("{:.2} MB", mb(m.vm_rss)), (6, 0), total.clone())])?;
        }
        legend(
            &key,
            name_area as i32,
            &[
                (Mark::Fill(RES), "RES (RssAnon: private)"),
                (Mark::Fill(SHR), "SHR (RssFile + RssShmem: shared)"),
            ],
        )
    })
}

/// The floor, the line and the robot's path (axle centre) from above, in metres (480 px each),
/// with `marks` (where the follower moved between hosts) as dots on it.
pub fn path_svg(title: &str, path: &[(f64, f64)], marks: &[(f64, f64)]) -> String {
    const SCALE: f64 = 480.0; // px per metre
    const LEFT: u32 = 70;
    const BOTTOM: u32 = 55;
    const RED: RGBColor = RGBColor(0xd6, 0x27, 0x28);
    const FLOOR: RGBColor = RGBColor(0xf4, 0xf4, 0xf4);
    const TILE_EDGE: RGBColor = RGBColor(0xbb, 0xbb, 0xbb);
    let (w, h) = (course::FLOOR.0 * SCALE, course::FLOOR.1 * SCALE);
    let (margin_left, margin_right, margin_top) = (10, 20, 10);
    let width = margin_left + LEFT + w as u32 + margin_right;
    let plot_height = margin_top + h as u32 + BOTTOM;
    let height = TITLE_HEIGHT + plot_height + LEGEND_HEIGHT;
    // One label per 0.5 m tile edge.
    let tiles = |end: f64| (end / 0.5).round() as usize + 1;
    render((width, height), |root| {
        let body = titled(root, title)?;
        let (plot, key) = body.split_vertically(plot_height);
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(margin_left)
            .margin_right(margin_right)
            .margin_top(margin_top)
            .x_label_area_size(BOTTOM)
            .y_label_area_size(LEFT)
            .build_cartesian_2d(0.0..course::FLOOR.0, 0.0..course::FLOOR.1)?;
        chart.draw_series([Rectangle::new([(0.0, 0.0), course::FLOOR], FLOOR.filled())])?;
        chart
            .configure_mesh()
            .bold_line_style(TILE_EDGE)
            .max_light_lines(0)
            .x_labels(tiles(course::FLOOR.0))
            .y_labels(tiles(course::FLOOR.1))
            .x_desc("x (m)")
            .y_desc("y (m)")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, TEXT_SIZE))
            .x_label_formatter(&|v| axis_number(*v))
            .y_label_formatter(&|v| axis_number(*v))
            .draw()?;
        // The line as one polygon: its outer edge counter-clockwise, then its inner edge
        // clockwise, which the nonzero fill rule leaves empty. plotters rounds vertices to whole
        // pixels, so they are about 19 px apart (the arcs' chords then stray under 0.4 px
        // from the arc): closer, the rounding would show as a ragged edge.
        let n = 64;
        let edge = |i: i32, side: f64| {
            let (x, y, heading) =
                course::point_at(course::lap_length() * f64::from(i) / f64::from(n));
            let d = side * course::LINE_WIDTH / 2.0;
            (x - d * heading.sin(), y + d * heading.cos())
        };
        let band: Vec<(f64, f64)> = (0..=n)
            .map(|i| edge(i, -1.0))
            .chain((0..=n).rev().map(|i| edge(i, 1.0)))
            .collect();
        chart.draw_series([Polygon::new(band, BLACK.filled())])?;
        chart.draw_series(LineSeries::new(path.iter().copied(), RED.stroke_width(2)))?;
        const MOVE: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
        chart.draw_series(marks.iter().map(|&at| Circle::new(at, 6, MOVE.filled())))?;
        let mut keys = vec![
            (Mark::Line(RED, 2), "the robot's axle centre"),
            (Mark::Line(BLACK, 8), "the course's line (25 mm wide)"),
            (Mark::Line(TILE_EDGE, 1), "0.5 m grid (the floor's tiles)"),
        ];
        if !marks.is_empty() {
            keys.push((Mark::Dot(MOVE), "the follower moved to the other host"));
        }
        legend(&key, LEFT as i32, &keys)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SVG's text with runs of whitespace made single spaces (plotters writes each text
    /// on a line of its own).
    fn flat(svg: &str) -> String {
        svg.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn assert_chart(svg: &str, texts: &[&str]) {
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        let flat = flat(svg);
        for text in texts {
            assert!(flat.contains(text), "{text:?} missing in {svg}");
        }
    }

    fn memory(process: &str, anon_kib: u64, file_kib: u64) -> ProcessMemory {
        ProcessMemory {
            process: process.into(),
            vm_rss: anon_kib + file_kib,
            rss_anon: anon_kib,
            rss_file: file_kib,
            rss_shmem: 0,
            vm_hwm: anon_kib + file_kib,
        }
    }

    /// A lap of the course, a little off the line.
    fn lap() -> Vec<(f64, f64)> {
        (0..200)
            .map(|i| {
                let (x, y, h) = course::point_at(course::lap_length() * f64::from(i) / 200.0);
                let off = 0.01 * (f64::from(i) / 10.0).sin();
                (x - off * h.sin(), y + off * h.cos())
            })
            .collect()
    }

    #[test]
    fn charts_are_well_formed_svg() {
        let a = [10.0, 20.0, 30.0];
        let svg = box_plot_svg("t <1>", &[("a & b", &a), ("empty", &[])]);
        assert_chart(
            &svg,
            &[
                "t &lt;1&gt;",
                "a &amp; b",
                "empty (no samples)",
                "latency (us)",
                "run",
                "box: quartiles (p25-p75)",
                "median",
                "mean",
                "whiskers: min-max",
            ],
        );
        let svg = box_plot_svg("wide", &[("a", &[5.0, 50.0, 5000.0])]);
        assert_chart(&svg, &["wide", "latency (us, log scale)", "run", "1000"]);
        let svg = memory_svg(&[memory("talker", 1000, 1400), memory("listener", 900, 1400)]);
        assert_chart(
            &svg,
            &[
                "Resident memory per process (RES + SHR = RSS)",
                "resident memory (MB = 10^6 bytes)",
                "process",
                "talker",
                "listener",
                "2.46 MB",
                "RES (RssAnon: private)",
                "SHR (RssFile + RssShmem: shared)",
            ],
        );
        let svg = path_svg("p", &[(0.5, 0.25), (0.6, 0.25)], &[]);
        assert_chart(
            &svg,
            &[
                "p",
                "x (m)",
                "y (m)",
                "axle centre",
                "line (25 mm wide)",
                "0.5 m grid",
            ],
        );
        assert!(svg.contains("polyline"), "{svg}");
        // Nothing to draw is still a chart.
        assert_chart(&box_plot_svg("none", &[]), &["none", "latency (us)"]);
        assert_chart(&memory_svg(&[]), &["process"]);
        assert_chart(&path_svg("no path", &[], &[]), &["no path"]);
    }

    /// Writes sample charts to `$TMPDIR/roslite-report-charts` to look at:
    /// `cargo test -p roslite-linetrace --lib -- --ignored sample_charts`.
    #[test]
    #[ignore = "writes files for a person to look at"]
    fn sample_charts() {
        let dir = std::env::temp_dir().join("roslite-report-charts");
        std::fs::create_dir_all(&dir).unwrap();
        let spread = |base: f64, k: usize| -> Vec<f64> {
            (0..k)
                .map(|i| base * (1.0 + (i as f64 / k as f64).powi(4) * 20.0))
                .collect()
        };
        let (a, b, c) = (spread(40.0, 500), spread(90.0, 500), spread(400.0, 500));
        let ls = [
            ("roslite (intra-process)", a.as_slice()),
            ("roslite (UDP)", b.as_slice()),
            ("rclpy", c.as_slice()),
        ];
        std::fs::write(
            dir.join("box-log.svg"),
            box_plot_svg("/light_sensors latency", &ls),
        )
        .unwrap();
        let (a, b) = (spread(40.0, 500), spread(45.0, 500));
        let narrow = [("roslite", &a[..200]), ("roslite (UDP)", &b[..300])];
        std::fs::write(
            dir.join("box-linear.svg"),
            box_plot_svg("/cmd_vel latency", &narrow),
        )
        .unwrap();
        let rows = [
            memory("roslite-linetrace-node follower", 1000, 1400),
            memory("roslite-linetrace-node robot", 1100, 1400),
            memory("python3 follower.py [rclpy]", 30000, 18000),
        ];
        std::fs::write(dir.join("memory.svg"), memory_svg(&rows)).unwrap();
        std::fs::write(
            dir.join("path.svg"),
            path_svg("roslite: 1.00 laps", &lap(), &[]),
        )
        .unwrap();
    }
}
