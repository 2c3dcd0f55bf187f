//! PNG line charts for the experiment reports (plotters).

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::path::Path;

/// One line of a chart.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One panel (sub-chart) of a figure.
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// The series colours of every plot (matplotlib's tab10 order, then black and teal), so that up
/// to 12 series are told apart.
pub const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(0, 128, 128),
];

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-12);
        (lo - pad, hi + pad)
    }
}

/// Compact tick labels: `20`, `0.05`, `1e-3`.
fn short_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if (1e-2..1e5).contains(&a) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.0e}")
    }
}

/// Draws every series of panel `$p` on `$chart` as a line with a marker at each point, in the
/// colour `$color(i)` of its index, keeping the points that pass `$keep`, labelled for the legend
/// (a macro: the chart's coordinate types differ between linear and log axes).
macro_rules! series_lines {
    ($chart:expr, $p:expr, $color:expr, $keep:expr, $err:expr) => {
        for (i, s) in $p.series.iter().enumerate() {
            let color = $color(i);
            let pts: Vec<(f64, f64)> = s.points.iter().copied().filter($keep).collect();
            $chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| $err(&e))?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            $chart
                .draw_series(pts.into_iter().map(|q| Circle::new(q, 3, color.filled())))
                .map_err(|e| $err(&e))?;
        }
    };
}

/// Draws the panels side by side into a PNG of `width × height` pixels.
pub fn line_panels(path: &Path, panels: &[Panel], width: u32, height: u32) -> Result<()> {
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        draw_panel(area, panel)?;
    }
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    p: &Panel,
) -> Result<()> {
    let xs = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0));
    let ys = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.1));
    let (x0, x1) = range(xs, p.log_x);
    let (y0, y1) = range(ys, p.log_y);
    let err = |e: &dyn std::fmt::Display| anyhow!("plot: {e}");
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&p.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(p.x_label.as_str())
                .y_desc(p.y_label.as_str())
                .x_label_formatter(&|v| short_number(*v))
                .y_label_formatter(&|v| short_number(*v))
                .draw()
                .map_err(|e| err(&e))?;
            series_lines!(
                chart,
                p,
                |i| COLORS[i % COLORS.len()],
                |(x, y): &(f64, f64)| (!p.log_y || *y > 0.0) && (!p.log_x || *x > 0.0),
                err
            );
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(|e| err(&e))?;
        }};
    }
    match (p.log_x, p.log_y) {
        (true, true) => draw!(builder
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|e| err(&e))?),
        (true, false) => draw!(builder
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
            .map_err(|e| err(&e))?),
        (false, true) => draw!(builder
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(|e| err(&e))?),
        (false, false) => draw!(builder
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| err(&e))?),
    }
    Ok(())
}

/// Draws `panels` on a `rows × cols` grid into a PNG (linear y; log x where the panel asks),
/// with the legend at `legend` and, if given, a fixed y range per panel. (`plot::line_panels`
/// puts the legend at the upper right, where these figures have their data.)
pub fn grid_panels(
    path: &std::path::Path,
    panels: &[(Panel, Option<(f64, f64)>)],
    cols: usize,
    size: (u32, u32),
    legend: SeriesLabelPosition,
) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot {}: {e}", path.display());
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let rows = panels.len().div_ceil(cols.max(1));
    let areas = root.split_evenly((rows.max(1), cols.max(1)));
    for ((p, y_range), area) in panels.iter().zip(areas.iter()) {
        let xs = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0));
        let (mut x0, mut x1) = xs
            .filter(|x| x.is_finite() && (!p.log_x || *x > 0.0))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
        if p.log_x {
            x0 /= 1.5;
            x1 *= 1.5;
        } else {
            let pad = 0.03 * (x1 - x0);
            x0 -= pad;
            x1 += pad;
        }
        let (y0, y1) = y_range.unwrap_or_else(|| {
            let (lo, hi) = p
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|q| q.1))
                .filter(|y| y.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                    (a.min(y), b.max(y))
                });
            let pad = 0.05 * (hi - lo).max(1e-9);
            (lo - pad, hi + pad)
        });
        let mut builder = ChartBuilder::on(area);
        builder
            .caption(&p.title, ("sans-serif", 22))
            .margin(14)
            .x_label_area_size(45)
            .y_label_area_size(60);
        macro_rules! draw {
            ($chart:expr, $fmt:expr) => {{
                let mut chart = $chart.map_err(|e| err(&e))?;
                chart
                    .configure_mesh()
                    .x_desc(p.x_label.as_str())
                    .y_desc(p.y_label.as_str())
                    .x_label_formatter(&$fmt)
                    .label_style(("sans-serif", 15))
                    .draw()
                    .map_err(|e| err(&e))?;
                series_lines!(
                    chart,
                    p,
                    |i| Palette99::pick(i).to_rgba(),
                    |(x, y): &(f64, f64)| x.is_finite() && y.is_finite(),
                    err
                );
                chart
                    .configure_series_labels()
                    .label_font(("sans-serif", 15))
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .position(legend.clone())
                    .draw()
                    .map_err(|e| err(&e))?;
            }};
        }
        if p.log_x {
            draw!(
                builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1),
                |v: &f64| format!("{v:.0e}")
            );
        } else {
            draw!(
                builder.build_cartesian_2d(x0..x1, y0..y1),
                |v: &f64| format!("{v}")
            );
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// A grouped point chart over categories (datasets).

pub struct CatSeries {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

pub struct CatPanel {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<CatSeries>,
}

/// Series colour `j`: black for the first series (sketchlearn), then the shared palette.
fn series_color(j: usize) -> RGBColor {
    match j % 8 {
        0 => RGBColor(0, 0, 0),
        k => COLORS[k - 1],
    }
}

/// Panels stacked vertically; in each, one column of points per category, the series side by
/// side within it, a log y axis and a line at 1.
pub fn category_points(path: &Path, panels: &[CatPanel], width: u32, height: u32) -> Result<()> {
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    for (p, area) in panels.iter().zip(areas.iter()) {
        let err = |e: &dyn std::fmt::Display| anyhow!("plot: {e}");
        let k = p.categories.len().max(1);
        let (mut lo, mut hi) = (1.0f64, 1.0f64);
        for v in p
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .filter(|v| v.is_finite() && **v > 0.0)
        {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        let (lo, hi) = (lo / 1.3, hi * 2.0);
        let mut chart = ChartBuilder::on(area)
            .caption(&p.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(k as f64 - 0.5), (lo..hi).log_scale())
            .map_err(|e| err(&e))?;
        let cats = &p.categories;
        let x_fmt = |v: &f64| {
            let r = v.round();
            if (v - r).abs() < 1e-6 && r >= 0.0 && (r as usize) < cats.len() {
                cats[r as usize].clone()
            } else {
                String::new()
            }
        };
        let y_fmt = |v: &f64| {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(k + k / 2)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_desc(p.y_label.as_str())
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(
                vec![(-0.5, 1.0), (k as f64 - 0.5, 1.0)],
                BLACK.stroke_width(1),
            ))
            .map_err(|e| err(&e))?;
        let ns = p.series.len().max(1) as f64;
        for (j, s) in p.series.iter().enumerate() {
            let color = series_color(j);
            let off = (j as f64 - (ns - 1.0) / 2.0) * 0.8 / ns;
            let pts: Vec<(f64, f64)> = s
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    v.filter(|x| x.is_finite() && *x > 0.0)
                        .map(|x| (i as f64 + off, x))
                })
                .collect();
            chart
                .draw_series(pts.into_iter().map(|q| Circle::new(q, 5, color.filled())))
                .map_err(|e| err(&e))?
                .label(s.label.as_str())
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    Ok(())
}
