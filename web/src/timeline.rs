//! The memory timeline (x = op step, y = offset, one rectangle per buffer) and the live-bytes
//! curve, drawn as SVG text. Pure: the same code draws the page and the exported file.
//!
//! Level of detail: rectangles smaller than [`TINY_PX`] pixels in either direction, and any
//! beyond the first [`MAX_RECTS`], are merged into a coarse pixel grid drawn as one path, so
//! tens of thousands of buffers stay responsive.
// Pixel math: float-to-integer `as` casts saturate in Rust, and screen coordinates and
// axis labels are far from the limits.
#![allow(clippy::cast_possible_truncation)]

use std::fmt::Write;

use memplan_core::{BlockLevel, BufferKind, Problem};

use crate::analysis::PaneResult;
use crate::format::{binary, xml_escape};
use crate::model::BufInfo;

/// SVG width in user units.
pub const W: f64 = 1000.0;
/// Timeline height in user units.
pub const H: f64 = 380.0;
/// Live-curve height in user units.
pub const CURVE_H: f64 = 150.0;
/// Plot area margins: left, right, top, bottom.
pub const MARGIN: (f64, f64, f64, f64) = (78.0, 12.0, 10.0, 26.0);
/// Rectangles smaller than this many units go to the merged layer.
pub const TINY_PX: f64 = 1.5;
/// Most rectangles drawn one by one.
pub const MAX_RECTS: usize = 5000;
const CELL: f64 = 2.0;

/// The visible data window: steps `[x0, x1)`, bytes `[y0, y1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// First step shown.
    pub x0: f64,
    /// One past the last step shown.
    pub x1: f64,
    /// Lowest offset shown, bytes.
    pub y0: f64,
    /// Highest offset shown, bytes.
    pub y1: f64,
}

impl Viewport {
    /// The whole plan.
    pub fn full(problem: &Problem, peak: u64) -> Self {
        Viewport {
            x0: 0.0,
            x1: (problem.steps.max(1)) as f64,
            y0: 0.0,
            y1: (peak.max(1)) as f64 * 1.04,
        }
    }

    /// Zooms by `factor` (< 1 zooms in) around the fraction `(fx, fy)` of the plot area
    /// (0 = left/bottom); `x_only` keeps the byte range.
    pub fn zoom(&self, factor: f64, fx: f64, fy: f64, x_only: bool, limit: &Viewport) -> Self {
        let f = factor.clamp(0.05, 20.0);
        let (xw, yh) = (self.x1 - self.x0, self.y1 - self.y0);
        let cx = self.x0 + xw * fx.clamp(0.0, 1.0);
        let cy = self.y0 + yh * fy.clamp(0.0, 1.0);
        let nxw = (xw * f).clamp(2.0_f64.min(limit.x1 - limit.x0), limit.x1 - limit.x0);
        let nyh = if x_only {
            yh
        } else {
            (yh * f).clamp(64.0_f64.min(limit.y1 - limit.y0), limit.y1 - limit.y0)
        };
        let mut v = Viewport {
            x0: cx - (cx - self.x0) * nxw / xw,
            x1: 0.0,
            y0: cy - (cy - self.y0) * nyh / yh,
            y1: 0.0,
        };
        v.x1 = v.x0 + nxw;
        v.y1 = v.y0 + nyh;
        v.clamped(limit)
    }

    /// Pans by fractions of the current window.
    pub fn pan(&self, dx: f64, dy: f64, limit: &Viewport) -> Self {
        let (xw, yh) = (self.x1 - self.x0, self.y1 - self.y0);
        Viewport {
            x0: self.x0 + dx * xw,
            x1: self.x1 + dx * xw,
            y0: self.y0 + dy * yh,
            y1: self.y1 + dy * yh,
        }
        .clamped(limit)
    }

    fn clamped(mut self, limit: &Viewport) -> Self {
        let xw = (self.x1 - self.x0).min(limit.x1 - limit.x0);
        self.x0 = self.x0.clamp(limit.x0, limit.x1 - xw);
        self.x1 = self.x0 + xw;
        let yh = (self.y1 - self.y0).min(limit.y1 - limit.y0);
        self.y0 = self.y0.clamp(limit.y0, limit.y1 - yh);
        self.y1 = self.y0 + yh;
        self
    }
}

/// Colours of one theme.
struct Palette {
    bg: &'static str,
    fg: &'static str,
    grid: &'static str,
    fills: [&'static str; 8],
    io: &'static str,
    ws: &'static str,
    block: &'static str,
    peak: &'static str,
    bound: &'static str,
    budget: &'static str,
    cursor: &'static str,
}

const LIGHT: Palette = Palette {
    bg: "#ffffff",
    fg: "#1f2430",
    grid: "#e3e6ec",
    fills: [
        "#4e79a7", "#59a14f", "#9c755f", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7",
    ],
    io: "#8c8c99",
    ws: "#bab0ac",
    block: "#1f2430",
    peak: "#d1344c",
    bound: "#2c7a3f",
    budget: "#b8630b",
    cursor: "#7a3ce0",
};

const DARK: Palette = Palette {
    bg: "#171a21",
    fg: "#dde2ea",
    grid: "#2b313c",
    fills: [
        "#6a9bd1", "#78c26c", "#c19a80", "#f5a55a", "#8fd0cb", "#cc9bc0", "#f0d86b", "#ffb3bb",
    ],
    io: "#7d7d8a",
    ws: "#9e9490",
    block: "#eef1f6",
    peak: "#ff6b81",
    bound: "#5fd07a",
    budget: "#f2a541",
    cursor: "#b48cff",
};

/// What to draw besides the buffers.
#[derive(Debug, Clone, Default)]
pub struct SvgOptions {
    /// Buffer under the pointer.
    pub hover: Option<usize>,
    /// Lowercase search text: matching buffers are outlined.
    pub search: String,
    /// Selected step (vertical line).
    pub step: Option<u64>,
    /// Dark colours.
    pub dark: bool,
    /// Title line (exported files).
    pub title: Option<String>,
    /// Memory budget in bytes (a line, when in view).
    pub budget: Option<u64>,
}

fn plot() -> (f64, f64, f64, f64) {
    (
        MARGIN.0,
        MARGIN.2,
        W - MARGIN.0 - MARGIN.1,
        H - MARGIN.2 - MARGIN.3,
    )
}

/// A "nice" tick step for a range: 1, 2 or 5 × 10^k.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    mag * if n < 1.5 {
        1.0
    } else if n < 3.5 {
        2.0
    } else if n < 7.5 {
        5.0
    } else {
        10.0
    }
}

/// A byte tick step: a power of two.
fn byte_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(1.0);
    2f64.powf(raw.log2().ceil())
}

fn kind_fill(p: &Palette, kind: BufferKind, i: usize) -> &'static str {
    match kind {
        BufferKind::GraphInput | BufferKind::GraphOutput => p.io,
        BufferKind::Workspace => p.ws,
        _ => p.fills[i % p.fills.len()],
    }
}

fn header(out: &mut String, h: f64, p: &Palette, label: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{}" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="11"><rect width="{W}" height="{h}" fill="{}"/>"#,
        xml_escape(label),
        p.bg
    );
}

/// The timeline SVG for one pane's plan.
pub fn timeline_svg(
    problem: &Problem,
    info: &[BufInfo],
    r: &PaneResult,
    vp: &Viewport,
    o: &SvgOptions,
) -> String {
    let p = if o.dark { &DARK } else { &LIGHT };
    let (px, py, pw, ph) = plot();
    let sx = pw / (vp.x1 - vp.x0).max(1e-9);
    let sy = ph / (vp.y1 - vp.y0).max(1e-9);
    let to_x = |x: f64| px + (x - vp.x0) * sx;
    let to_y = |y: f64| py + ph - (y - vp.y0) * sy;
    let mut out = String::with_capacity(64 * 1024);
    header(
        &mut out,
        H,
        p,
        "memory timeline: x is the op step, y the offset in the arena",
    );
    let _ = write!(
        out,
        r#"<defs><clipPath id="mpclip"><rect x="{px}" y="{py}" width="{pw}" height="{ph}"/></clipPath></defs>"#
    );
    // Grid and axes.
    let ystep = byte_step(vp.y1 - vp.y0, 6.0);
    let mut y = (vp.y0 / ystep).ceil() * ystep;
    while y <= vp.y1 {
        let yy = to_y(y);
        let _ = write!(
            out,
            r#"<line x1="{px}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="{}"/><text x="{}" y="{:.1}" text-anchor="end" fill="{}">{}</text>"#,
            px + pw,
            p.grid,
            px - 6.0,
            yy + 4.0,
            p.fg,
            binary(y as u64)
        );
        y += ystep;
    }
    let xstep = nice_step(vp.x1 - vp.x0, 10.0).max(1.0);
    let mut x = (vp.x0 / xstep).ceil() * xstep;
    while x <= vp.x1 {
        let xx = to_x(x);
        let _ = write!(
            out,
            r#"<line x1="{xx:.1}" x2="{xx:.1}" y1="{py}" y2="{}" stroke="{}"/><text x="{xx:.1}" y="{}" text-anchor="middle" fill="{}">{}</text>"#,
            py + ph,
            p.grid,
            py + ph + 15.0,
            p.fg,
            x as u64
        );
        x += xstep;
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="end" fill="{}" opacity="0.7">op step →</text>"#,
        px + pw,
        H - 1.0,
        p.fg
    );
    out.push_str(r#"<g clip-path="url(#mpclip)">"#);
    // Buffers, largest first so tiny ones stay visible on top of the merged layer order.
    let mut order: Vec<usize> = (0..problem.buffers.len())
        .filter(|&i| r.plan.sizes.get(i).copied().unwrap_or(0) > 0)
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(r.plan.sizes.get(i).copied().unwrap_or(0)));
    let cols = (pw / CELL).ceil() as usize + 1;
    let rows = (ph / CELL).ceil() as usize + 1;
    let mut grid = vec![false; cols * rows];
    let mut any_merged = false;
    let mut drawn = 0usize;
    for &i in &order {
        let b = &problem.buffers[i];
        let (off, size) = (r.plan.offsets[i] as f64, r.plan.sizes[i] as f64);
        let (bx0, bx1) = (b.start as f64, b.end as f64 + 1.0);
        if bx1 <= vp.x0 || bx0 >= vp.x1 || off + size <= vp.y0 || off >= vp.y1 {
            continue;
        }
        let (x0, x1) = (to_x(bx0).max(px - 2.0), to_x(bx1).min(px + pw + 2.0));
        let (y1, y0) = (to_y(off).min(py + ph + 2.0), to_y(off + size).max(py - 2.0));
        let (w, h) = (x1 - x0, y1 - y0);
        if (w < TINY_PX || h < TINY_PX || drawn >= MAX_RECTS) && o.hover != Some(i) {
            any_merged = true;
            let c0 = (((x0 - px) / CELL).floor().max(0.0) as usize).min(cols - 1);
            let c1 = (((x1 - px) / CELL).ceil().max(1.0) as usize).min(cols);
            let r0 = (((y0 - py) / CELL).floor().max(0.0) as usize).min(rows - 1);
            let r1 = (((y1 - py) / CELL).ceil().max(1.0) as usize).min(rows);
            for row in r0..r1.max(r0 + 1) {
                for c in c0..c1.max(c0 + 1) {
                    grid[row * cols + c] = true;
                }
            }
            continue;
        }
        drawn += 1;
        let fill = kind_fill(p, b.kind, i);
        let name = &b.name;
        let hit = !o.search.is_empty() && name.to_lowercase().contains(&o.search);
        let stroke = if o.hover == Some(i) || hit {
            format!(r#" stroke="{}" stroke-width="2""#, p.cursor)
        } else if w > 4.0 && h > 4.0 {
            format!(
                r#" stroke="{}" stroke-opacity="0.55" stroke-width="0.6""#,
                p.bg
            )
        } else {
            String::new()
        };
        let op = info.get(i).map_or("", |f| f.op.as_str());
        let _ = write!(
            out,
            r#"<rect x="{x0:.2}" y="{y0:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}"{stroke}><title>{} · {} · steps {}–{} · offset {}{}</title></rect>"#,
            xml_escape(name),
            binary(b.size),
            b.start,
            b.end,
            r.plan.offsets[i],
            if op.is_empty() {
                String::new()
            } else {
                format!(" · {}", xml_escape(op))
            }
        );
    }
    if any_merged {
        let _ = write!(out, r#"<path fill="{}" opacity="0.85" d=""#, p.fills[0]);
        for row in 0..rows {
            let mut c = 0;
            while c < cols {
                if grid[row * cols + c] {
                    let start = c;
                    while c < cols && grid[row * cols + c] {
                        c += 1;
                    }
                    let _ = write!(
                        out,
                        "M{:.0} {:.0}h{:.0}v{CELL}h-{:.0}z",
                        px + start as f64 * CELL,
                        py + row as f64 * CELL,
                        (c - start) as f64 * CELL,
                        (c - start) as f64 * CELL
                    );
                } else {
                    c += 1;
                }
            }
        }
        out.push_str(r#""><title>many small buffers (merged at this zoom)</title></path>"#);
    }
    // GE blocks: outlined over the union of their members' live ranges.
    for blk in &r.plan.blocks {
        let (mut s, mut e) = (u64::MAX, 0u64);
        for &m in &blk.members {
            if let Some(b) = problem.buffers.get(m) {
                s = s.min(b.start);
                e = e.max(b.end);
            }
        }
        if s > e || blk.size == 0 {
            continue;
        }
        let (x0, x1) = (to_x(s as f64), to_x(e as f64 + 1.0));
        let (y1, y0) = (
            to_y(blk.offset as f64),
            to_y((blk.offset + blk.size) as f64),
        );
        let dash = if blk.level == BlockLevel::Top {
            "5 3"
        } else {
            "2 2"
        };
        let _ = write!(
            out,
            r#"<rect x="{x0:.2}" y="{y0:.2}" width="{:.2}" height="{:.2}" fill="none" stroke="{}" stroke-width="1.2" stroke-dasharray="{dash}" pointer-events="none"/>"#,
            (x1 - x0).max(0.5),
            (y1 - y0).max(0.5),
            p.block
        );
    }
    out.push_str("</g>");
    // Peak line.
    let peak = r.plan.peak as f64;
    if peak >= vp.y0 && peak <= vp.y1 {
        let yy = to_y(peak);
        let _ = write!(
            out,
            r#"<line x1="{px}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="{}" stroke-dasharray="6 3" stroke-width="1.3"/><text x="{}" y="{:.1}" text-anchor="end" fill="{}" font-weight="600">peak {}</text>"#,
            px + pw,
            p.peak,
            px + pw - 4.0,
            yy - 4.0,
            p.peak,
            binary(r.plan.peak)
        );
    }
    if let Some(budget) = o.budget.filter(|&b| (vp.y0..=vp.y1).contains(&(b as f64))) {
        budget_line(&mut out, p, (px, pw), to_y(budget as f64), budget);
    }
    if let Some(step) = o.step {
        let (a, b) = (step as f64, step as f64 + 1.0);
        if b > vp.x0 && a < vp.x1 {
            let _ = write!(
                out,
                r#"<rect x="{:.2}" y="{py}" width="{:.2}" height="{ph}" fill="{}" opacity="0.14" pointer-events="none"/>"#,
                to_x(a).max(px),
                (to_x(b).min(px + pw) - to_x(a).max(px)).max(1.0),
                p.cursor
            );
        }
    }
    if let Some(t) = &o.title {
        let _ = write!(
            out,
            r#"<text x="{px}" y="{}" fill="{}" font-weight="600">{}</text>"#,
            py + 12.0,
            p.fg,
            xml_escape(t)
        );
    }
    let _ = write!(
        out,
        r#"<rect x="{px}" y="{py}" width="{pw}" height="{ph}" fill="none" stroke="{}"/></svg>"#,
        p.grid
    );
    out
}

/// The buffer under plot-area point `(ux, uy)` in SVG user units, the smallest if several.
pub fn hit(problem: &Problem, r: &PaneResult, vp: &Viewport, ux: f64, uy: f64) -> Option<usize> {
    let (px, py, pw, ph) = plot();
    if ux < px || ux > px + pw || uy < py || uy > py + ph {
        return None;
    }
    let x = vp.x0 + (ux - px) / pw * (vp.x1 - vp.x0);
    let y = vp.y0 + (py + ph - uy) / ph * (vp.y1 - vp.y0);
    let step = x.floor();
    // Half a pixel of slack in bytes so 1-pixel-high buffers can be hovered.
    let slack = (vp.y1 - vp.y0) / ph * 1.5;
    problem
        .buffers
        .iter()
        .enumerate()
        .filter(|(i, b)| {
            let (o, s) = (r.plan.offsets[*i] as f64, r.plan.sizes[*i] as f64);
            s > 0.0
                && b.start as f64 <= step
                && step <= b.end as f64
                && y >= o - slack
                && y < o + s + slack
        })
        .min_by_key(|(i, _)| r.plan.sizes[*i])
        .map(|(i, _)| i)
}

/// The step at SVG x `ux`, if inside the plot.
pub fn step_at(vp: &Viewport, ux: f64) -> Option<u64> {
    let (px, _, pw, _) = plot();
    if ux < px || ux > px + pw {
        return None;
    }
    Some((vp.x0 + (ux - px) / pw * (vp.x1 - vp.x0)).floor().max(0.0) as u64)
}

/// The memory budget's dotted line across the plot at height `yy`, labelled on the left
/// (the peak's label is on the right).
fn budget_line(out: &mut String, p: &Palette, (px, pw): (f64, f64), yy: f64, bytes: u64) {
    let _ = write!(
        out,
        r#"<line x1="{px}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="{}" stroke-dasharray="2 3" stroke-width="1.5"/><text x="{}" y="{:.1}" fill="{}" font-weight="600" stroke="{}" stroke-width="3" paint-order="stroke">budget {}</text>"#,
        px + pw,
        p.budget,
        px + 6.0,
        yy - 4.0,
        p.budget,
        p.bg,
        binary(bytes)
    );
}

/// The live-bytes curve (planned sizes) over the same steps, with the lower bound and the
/// plan's peak marked, and the memory `budget` when it is below twice the peak (a budget far
/// above would flatten the curve).
pub fn curve_svg(
    r: &PaneResult,
    vp: &Viewport,
    step: Option<u64>,
    dark: bool,
    budget: Option<u64>,
) -> String {
    let p = if dark { &DARK } else { &LIGHT };
    let (px, pw) = (MARGIN.0, W - MARGIN.0 - MARGIN.1);
    let (py, ph) = (8.0, CURVE_H - 8.0 - 22.0);
    let high = r.plan.peak.max(r.lower_bound).max(1);
    let budget = budget.filter(|&b| b <= high.saturating_mul(2));
    let top = high.max(budget.unwrap_or(0)) as f64 * 1.08;
    let to_x = |x: f64| px + (x - vp.x0) / (vp.x1 - vp.x0).max(1e-9) * pw;
    let to_y = |y: f64| py + ph - y / top * ph;
    let mut out = String::with_capacity(16 * 1024);
    header(
        &mut out,
        CURVE_H,
        p,
        "live bytes per step, with the lower bound and the plan's peak",
    );
    // Column maxima of the step function.
    let cols = pw.ceil() as usize;
    let mut colmax = vec![0u64; cols];
    for (k, &(s, v)) in r.curve.iter().enumerate() {
        let e = r.curve.get(k + 1).map_or(s as f64 + 1.0, |n| n.0 as f64);
        let (a, b) = (s as f64, e);
        if b <= vp.x0 || a >= vp.x1 || v == 0 {
            continue;
        }
        let c0 = ((to_x(a) - px).floor().max(0.0) as usize).min(cols - 1);
        let c1 = ((to_x(b) - px).ceil().max(1.0) as usize).min(cols);
        for c in colmax.iter_mut().take(c1.max(c0 + 1)).skip(c0) {
            *c = (*c).max(v);
        }
    }
    let _ = write!(
        out,
        r#"<path fill="{}" fill-opacity="0.35" stroke="{}" stroke-width="1" d="M{px} {:.1}"#,
        p.fills[0],
        p.fills[0],
        py + ph
    );
    for (c, &v) in colmax.iter().enumerate() {
        let _ = write!(
            out,
            "L{:.0} {:.1}L{:.0} {:.1}",
            px + c as f64,
            to_y(v as f64),
            px + c as f64 + 1.0,
            to_y(v as f64)
        );
    }
    let _ = write!(out, r#"L{:.0} {:.1}Z"/>"#, px + pw, py + ph);
    for (label, v, color, dy) in [
        ("lower bound", r.lower_bound, p.bound, 12.0),
        ("peak", r.plan.peak, p.peak, -4.0),
    ] {
        let yy = to_y(v as f64);
        let _ = write!(
            out,
            r#"<line x1="{px}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="{color}" stroke-dasharray="6 3"/><text x="{}" y="{:.1}" fill="{color}" text-anchor="end">{label} {}</text>"#,
            px + pw,
            px - 6.0 + pw,
            yy + dy,
            binary(v)
        );
    }
    if let Some(b) = budget {
        budget_line(&mut out, p, (px, pw), to_y(b as f64), b);
    }
    let ps = r.peak_step as f64 + 0.5;
    if ps >= vp.x0 && ps <= vp.x1 {
        let _ = write!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"/>"#,
            to_x(ps),
            to_y(crate::analysis::live_at_step(&r.curve, r.peak_step) as f64),
            p.bound
        );
    }
    if let Some(s) = step {
        let xx = to_x(s as f64 + 0.5);
        if xx >= px && xx <= px + pw {
            let _ = write!(
                out,
                r#"<line x1="{xx:.1}" x2="{xx:.1}" y1="{py}" y2="{}" stroke="{}"/>"#,
                py + ph,
                p.cursor
            );
        }
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="end" fill="{}">{}</text><text x="{}" y="{}" text-anchor="end" fill="{}">0</text><rect x="{px}" y="{py}" width="{pw}" height="{ph}" fill="none" stroke="{}"/><text x="{px}" y="{}" fill="{}" opacity="0.7">live bytes (planned sizes)</text></svg>"#,
        px - 6.0,
        py + 10.0,
        p.fg,
        binary(top as u64),
        px - 6.0,
        py + ph,
        p.fg,
        p.grid,
        CURVE_H - 6.0,
        p.fg
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::PaneSettings;
    use memplan_core::Buffer;

    fn many(n: usize) -> (Problem, PaneResult) {
        let bufs = (0..n)
            .map(|i| {
                Buffer::new(
                    format!("t{i}"),
                    64 + (i as u64 % 7) * 32,
                    i as u64 / 3,
                    i as u64 / 3 + 2,
                )
            })
            .collect();
        let p = Problem::from_buffers("many", bufs);
        let r =
            crate::analysis::run(&p, &PaneSettings::default_for(1, false, &[]), &|| 0.0).unwrap();
        (p, r)
    }

    #[test]
    fn lod_caps_the_number_of_elements() {
        let (p, r) = many(12_000);
        let vp = Viewport::full(&p, r.plan.peak);
        let svg = timeline_svg(&p, &[], &r, &vp, &SvgOptions::default());
        let rects = svg.matches("<rect").count();
        assert!(rects <= MAX_RECTS + 20, "{rects}");
        assert!(svg.contains("merged at this zoom"));
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn hit_finds_the_buffer_under_the_pointer() {
        let (p, r) = many(30);
        let vp = Viewport::full(&p, r.plan.peak);
        let (px, py, pw, ph) = plot();
        let i = 4;
        let b = &p.buffers[i];
        let x = px + (b.start as f64 + 0.5) / vp.x1 * pw;
        let y = py + ph - (r.plan.offsets[i] as f64 + r.plan.sizes[i] as f64 / 2.0) / vp.y1 * ph;
        assert_eq!(hit(&p, &r, &vp, x, y), Some(i));
        assert_eq!(hit(&p, &r, &vp, 1.0, 1.0), None);
    }

    #[test]
    fn zoom_and_pan_stay_inside() {
        let lim = Viewport {
            x0: 0.0,
            x1: 100.0,
            y0: 0.0,
            y1: 1000.0,
        };
        let z = lim.zoom(0.5, 0.5, 0.5, false, &lim);
        assert!((z.x1 - z.x0 - 50.0).abs() < 1e-9);
        let p = z.pan(10.0, 10.0, &lim);
        assert!(p.x1 <= 100.0 && p.y1 <= 1000.0);
        let out = z.zoom(100.0, 0.0, 0.0, false, &lim);
        assert_eq!(out, lim);
        let c = curve_svg(&r_of(), &lim, Some(3), true, None);
        assert!(c.contains("lower bound"));
        assert!(!c.contains("budget"));
    }

    #[test]
    fn the_budget_line_is_drawn_when_it_is_near_the_plan() {
        let (p, r) = many(10);
        let vp = Viewport::full(&p, r.plan.peak);
        let near = r.plan.peak - 1;
        let o = SvgOptions {
            budget: Some(near),
            ..SvgOptions::default()
        };
        let label = format!("budget {}", binary(near));
        assert!(timeline_svg(&p, &[], &r, &vp, &o).contains(&label));
        assert!(curve_svg(&r, &vp, None, false, Some(near)).contains(&label));
        // far above the peak: left out rather than flattening the curve
        let far = r.plan.peak * 3;
        assert!(!curve_svg(&r, &vp, None, false, Some(far)).contains("budget"));
    }

    fn r_of() -> PaneResult {
        many(10).1
    }
}
