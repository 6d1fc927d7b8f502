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
/// Side of a merged-layer cell, user units.
pub const CELL: f64 = 2.0;

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
    /// The lower bound in bytes (a line, when in view: exports).
    pub lower_bound: Option<u64>,
    /// A line under the plot (exports: model, gear, link).
    pub caption: Option<String>,
    /// Text size as a multiple of 11 user units (below 1 counts as 1): the page asks for more
    /// when the canvas is narrow, so that labels stay ~10 CSS px on a phone instead of
    /// shrinking with the picture; fewer ticks are labelled then, and inside the plot.
    pub text_scale: f64,
}

/// Font size of the timeline's labels, user units, at text scale 1.
pub const FONT: f64 = 11.0;

/// The text scale that keeps labels `px` CSS pixels high on a canvas `width` CSS pixels wide
/// (1 on a desktop: the picture is at least ~900 px wide there).
pub fn text_scale_for(width_px: f64, px: f64) -> f64 {
    if width_px <= 0.0 {
        return 1.0;
    }
    (px * W / (FONT * width_px)).clamp(1.0, 4.0)
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

fn header(out: &mut String, h: f64, p: &Palette, label: &str, font: f64) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{}" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="{font}"><rect width="{W}" height="{h}" fill="{}"/>"#,
        xml_escape(label),
        p.bg
    );
}

/// A stroke: colour, width in user units, opacity, dash pattern (SVG syntax).
#[derive(Debug, Clone, PartialEq)]
pub struct Stroke {
    /// CSS colour.
    pub color: &'static str,
    /// Width, user units.
    pub width: f64,
    /// 0–1.
    pub opacity: f64,
    /// Dash pattern (`"5 3"`), if dashed.
    pub dash: Option<&'static str>,
}

/// Text anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Left end at x.
    Start,
    /// Centred on x.
    Middle,
    /// Right end at x.
    End,
}

/// One drawing primitive, in SVG user units (y down).
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A rectangle; `buffer` names the tensor it draws (SVG gives it a tooltip).
    Rect {
        /// Left.
        x: f64,
        /// Top.
        y: f64,
        /// Width.
        w: f64,
        /// Height.
        h: f64,
        /// CSS colour, `None`: not filled.
        fill: Option<&'static str>,
        /// Fill opacity 0–1.
        opacity: f64,
        /// Outline.
        stroke: Option<Stroke>,
        /// The tensor drawn.
        buffer: Option<usize>,
    },
    /// A straight line.
    Line {
        /// Start.
        from: (f64, f64),
        /// End.
        to: (f64, f64),
        /// How it is drawn.
        stroke: Stroke,
    },
    /// A text label.
    Text {
        /// Anchor point x.
        x: f64,
        /// Baseline y.
        y: f64,
        /// The text.
        text: String,
        /// Horizontal anchor.
        anchor: Anchor,
        /// CSS colour.
        color: &'static str,
        /// Bold.
        bold: bool,
        /// Opacity 0–1.
        opacity: f64,
        /// A background-coloured halo behind the glyphs, for labels over boxes.
        halo: Option<&'static str>,
    },
    /// The merged layer of boxes too small to draw one by one: runs `(x, y, width)` of
    /// [`CELL`]-high cells.
    Cells {
        /// CSS colour.
        fill: &'static str,
        /// 0–1.
        opacity: f64,
        /// The runs.
        runs: Vec<(f64, f64, f64)>,
    },
}

/// A timeline picture: drawn on a canvas in the page, written as SVG for export.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Width, user units.
    pub width: f64,
    /// Height, user units.
    pub height: f64,
    /// Background colour.
    pub bg: &'static str,
    /// What the picture shows (the SVG's accessible name).
    pub label: String,
    /// Plot area `(x, y, w, h)`: [`Scene::plot`] is clipped to it.
    pub clip: (f64, f64, f64, f64),
    /// Drawn inside the plot area.
    pub plot: Vec<Shape>,
    /// Drawn over everything (axes labels, peak line, title).
    pub over: Vec<Shape>,
    /// Centre of the largest box drawn one by one (user units): where a test or a keyboard
    /// user lands first.
    pub largest: Option<(f64, f64)>,
    /// Font size of the labels, user units.
    pub font: f64,
}

fn text(x: f64, y: f64, t: String, anchor: Anchor, color: &'static str) -> Shape {
    Shape::Text {
        x,
        y,
        text: t,
        anchor,
        color,
        bold: false,
        opacity: 1.0,
        halo: None,
    }
}

fn line(
    from: (f64, f64),
    to: (f64, f64),
    color: &'static str,
    width: f64,
    dash: Option<&'static str>,
) -> Shape {
    Shape::Line {
        from,
        to,
        stroke: Stroke {
            color,
            width,
            opacity: 1.0,
            dash,
        },
    }
}

/// The timeline picture for one pane's plan: grid, axes, boxes (level of detail by pixel
/// size), GE blocks, peak and budget lines, and what `o` asks for (selected step, hovered and
/// searched tensors: the page draws those as an overlay instead, see [`overlay_svg`]).
pub fn timeline_scene(problem: &Problem, r: &PaneResult, vp: &Viewport, o: &SvgOptions) -> Scene {
    let p = if o.dark { &DARK } else { &LIGHT };
    let (px, py, pw, ph) = plot();
    let sx = pw / (vp.x1 - vp.x0).max(1e-9);
    let sy = ph / (vp.y1 - vp.y0).max(1e-9);
    let to_x = |x: f64| px + (x - vp.x0) * sx;
    let to_y = |y: f64| py + ph - (y - vp.y0) * sy;
    let mut over: Vec<Shape> = Vec::new();
    let mut under: Vec<Shape> = Vec::new();
    // Grid and axes. Large text (a narrow canvas) labels fewer ticks, inside the plot, on a
    // halo: the margins keep their width in user units.
    let k = o.text_scale.max(1.0);
    let inside = k > 1.2;
    let ystep = byte_step(vp.y1 - vp.y0, (6.0 / k).max(3.0));
    let mut y = (vp.y0 / ystep).ceil() * ystep;
    while y <= vp.y1 {
        let yy = to_y(y);
        under.push(line((px, yy), (px + pw, yy), p.grid, 1.0, None));
        let label = binary(y as u64);
        // inside the plot, the bottom row belongs to the step labels
        if inside && yy > py + ph - FONT * k * 1.5 {
            y += ystep;
            continue;
        }
        let to = if inside { &mut over } else { &mut under };
        to.push(if inside {
            Shape::Text {
                x: px + 4.0,
                y: (yy - 3.0).max(py + FONT * k),
                text: label,
                anchor: Anchor::Start,
                color: p.fg,
                bold: false,
                opacity: 1.0,
                halo: Some(p.bg),
            }
        } else {
            text(px - 6.0, yy + 4.0, label, Anchor::End, p.fg)
        });
        y += ystep;
    }
    let xstep = nice_step(vp.x1 - vp.x0, (10.0 / k).max(3.0)).max(1.0);
    let mut x = (vp.x0 / xstep).ceil() * xstep;
    while x <= vp.x1 {
        let xx = to_x(x);
        under.push(line((xx, py), (xx, py + ph), p.grid, 1.0, None));
        let label = (x as u64).to_string();
        let to = if inside { &mut over } else { &mut under };
        to.push(if inside {
            Shape::Text {
                x: xx,
                y: py + ph - 4.0,
                text: label,
                // the first and last labels stay inside the plot
                anchor: if xx < px + FONT * k * 1.5 {
                    Anchor::Start
                } else if xx > px + pw - FONT * k * 1.5 {
                    Anchor::End
                } else {
                    Anchor::Middle
                },
                color: p.fg,
                bold: false,
                opacity: 1.0,
                halo: Some(p.bg),
            }
        } else {
            text(xx, py + ph + 15.0, label, Anchor::Middle, p.fg)
        });
        x += xstep;
    }
    for (x, y, t, anchor) in [
        (px + pw, H - 1.0, "op step →", Anchor::End),
        // bottom left, under the offset labels (at the top it met the highest one)
        (12.0, H - 1.0, "offset ↑", Anchor::Start),
    ] {
        under.push(Shape::Text {
            x,
            y,
            text: t.to_string(),
            anchor,
            color: p.fg,
            bold: false,
            opacity: 0.7,
            halo: None,
        });
    }
    let mut plot_shapes: Vec<Shape> = Vec::new();
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
    let mut largest: Option<(f64, f64, f64)> = None;
    let q = o.search.as_str();
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
        if largest.is_none_or(|l| w * h > l.0) {
            largest = Some((w * h, x0 + w / 2.0, y0 + h / 2.0));
        }
        let hit = !q.is_empty() && b.name.to_lowercase().contains(q);
        let stroke = if o.hover == Some(i) || hit {
            Some(Stroke {
                color: p.cursor,
                width: 2.0,
                opacity: 1.0,
                dash: None,
            })
        } else if w > 4.0 && h > 4.0 {
            Some(Stroke {
                color: p.bg,
                width: 0.6,
                opacity: 0.55,
                dash: None,
            })
        } else {
            None
        };
        plot_shapes.push(Shape::Rect {
            x: x0,
            y: y0,
            w,
            h,
            fill: Some(kind_fill(p, b.kind, i)),
            opacity: 1.0,
            stroke,
            buffer: Some(i),
        });
    }
    if any_merged {
        let mut runs = Vec::new();
        for row in 0..rows {
            let mut c = 0;
            while c < cols {
                if grid[row * cols + c] {
                    let start = c;
                    while c < cols && grid[row * cols + c] {
                        c += 1;
                    }
                    runs.push((
                        px + start as f64 * CELL,
                        py + row as f64 * CELL,
                        (c - start) as f64 * CELL,
                    ));
                } else {
                    c += 1;
                }
            }
        }
        // under the boxes drawn one by one (they are the larger ones)
        plot_shapes.insert(
            0,
            Shape::Cells {
                fill: p.fills[0],
                opacity: 0.85,
                runs,
            },
        );
    }
    // GE blocks: outlined over the union of their members' live ranges.
    for blk in &r.plan.blocks {
        let (mut s, mut e) = (u64::MAX, 0u64);
        for &m in &blk.members {
            if let Some(b) = problem.buffers.get(m.index()) {
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
        if x1 < px || x0 > px + pw || y1 < py || y0 > py + ph {
            continue;
        }
        let dash = if blk.level == BlockLevel::Top {
            "5 3"
        } else {
            "2 2"
        };
        plot_shapes.push(Shape::Rect {
            x: x0,
            y: y0,
            w: (x1 - x0).max(0.5),
            h: (y1 - y0).max(0.5),
            fill: None,
            opacity: 1.0,
            stroke: Some(Stroke {
                color: p.block,
                width: 1.2,
                opacity: 1.0,
                dash: Some(dash),
            }),
            buffer: None,
        });
    }
    // Peak line. Its label sits above the line, or below it when the canvas top would cut
    // it (the full view puts the peak 4% under the top: large text has no room there).
    let cap = FONT * k * 0.8;
    let peak = r.plan.peak as f64;
    let mut peak_label = None;
    if peak >= vp.y0 && peak <= vp.y1 {
        let yy = to_y(peak);
        let ly = if yy - 4.0 - cap >= 0.0 {
            yy - 4.0
        } else {
            yy + cap + 4.0
        };
        peak_label = Some(ly);
        over.push(line((px, yy), (px + pw, yy), p.peak, 1.3, Some("6 3")));
        over.push(Shape::Text {
            x: px + pw - 4.0,
            y: ly,
            text: format!("peak {}", binary(r.plan.peak)),
            anchor: Anchor::End,
            color: p.peak,
            bold: true,
            opacity: 1.0,
            halo: Some(p.bg),
        });
    }
    if let Some(lb) = o
        .lower_bound
        .filter(|&b| (vp.y0..=vp.y1).contains(&(b as f64)))
    {
        let yy = to_y(lb as f64);
        over.push(line((px, yy), (px + pw, yy), p.bound, 1.0, Some("2 4")));
        // under its line, and under the peak's label when the two would overlap
        let ly = label_below(yy, cap, peak_label);
        over.push(Shape::Text {
            x: px + pw - 4.0,
            y: ly,
            text: format!("lower bound {}", binary(lb)),
            anchor: Anchor::End,
            color: p.bound,
            bold: false,
            opacity: 1.0,
            halo: Some(p.bg),
        });
    }
    if let Some(budget) = o.budget.filter(|&b| (vp.y0..=vp.y1).contains(&(b as f64))) {
        let yy = to_y(budget as f64);
        over.push(line((px, yy), (px + pw, yy), p.budget, 1.5, Some("2 3")));
        over.push(Shape::Text {
            x: px + 6.0,
            y: yy - 4.0,
            text: format!("budget {}", binary(budget)),
            anchor: Anchor::Start,
            color: p.budget,
            bold: true,
            opacity: 1.0,
            halo: Some(p.bg),
        });
    }
    over.extend(
        o.step
            .and_then(|st| step_band(st, vp, (px, py, pw, ph), &to_x, p.cursor)),
    );
    if let Some(t) = &o.title {
        over.push(Shape::Text {
            x: px,
            y: py + 12.0,
            text: t.clone(),
            anchor: Anchor::Start,
            color: p.fg,
            bold: true,
            opacity: 1.0,
            halo: Some(p.bg),
        });
    }
    over.push(Shape::Rect {
        x: px,
        y: py,
        w: pw,
        h: ph,
        fill: None,
        opacity: 1.0,
        stroke: Some(Stroke {
            color: p.grid,
            width: 1.0,
            opacity: 1.0,
            dash: None,
        }),
        buffer: None,
    });
    let mut height = H;
    if let Some(c) = &o.caption {
        height += 18.0;
        over.push(Shape::Text {
            x: px,
            y: H + 10.0,
            text: c.clone(),
            anchor: Anchor::Start,
            color: p.fg,
            bold: false,
            opacity: 0.8,
            halo: None,
        });
    }
    Scene {
        width: W,
        height,
        bg: p.bg,
        label: "memory timeline: x is the op step, y the offset in the arena".to_string(),
        clip: (px, py, pw, ph),
        plot: under.into_iter().chain(plot_shapes).collect(),
        over,
        largest: largest.map(|l| (l.1, l.2)),
        font: FONT * k,
    }
}

fn svg_stroke(out: &mut String, s: &Stroke) {
    let _ = write!(out, r#" stroke="{}" stroke-width="{}""#, s.color, s.width);
    if s.opacity < 1.0 {
        let _ = write!(out, r#" stroke-opacity="{}""#, s.opacity);
    }
    if let Some(d) = s.dash {
        let _ = write!(out, r#" stroke-dasharray="{d}""#);
    }
}

fn svg_shape(
    out: &mut String,
    shape: &Shape,
    problem: &Problem,
    info: &[BufInfo],
    r: Option<&PaneResult>,
) {
    match shape {
        Shape::Rect {
            x,
            y,
            w,
            h,
            fill,
            opacity,
            stroke,
            buffer,
        } => {
            let _ = write!(
                out,
                r#"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{}""#,
                fill.unwrap_or("none")
            );
            if *opacity < 1.0 {
                let _ = write!(out, r#" opacity="{opacity}""#);
            }
            if let Some(s) = stroke {
                svg_stroke(out, s);
            }
            match (buffer, r) {
                (Some(i), Some(r)) => {
                    let b = &problem.buffers[*i];
                    let op = info.get(*i).map_or("", |f| f.op.as_str());
                    let _ = write!(
                        out,
                        r#"><title>{} · {} · steps {}–{} · offset {}{}</title></rect>"#,
                        xml_escape(&b.name),
                        binary(b.size),
                        b.start,
                        b.end,
                        r.plan.offsets[*i],
                        if op.is_empty() {
                            String::new()
                        } else {
                            format!(" · {}", xml_escape(op))
                        }
                    );
                }
                _ => out.push_str(r#" pointer-events="none"/>"#),
            }
        }
        Shape::Line { from, to, stroke } => {
            let _ = write!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}""#,
                from.0, from.1, to.0, to.1
            );
            svg_stroke(out, stroke);
            out.push_str("/>");
        }
        Shape::Text {
            x,
            y,
            text,
            anchor,
            color,
            bold,
            opacity,
            halo,
        } => {
            let a = match anchor {
                Anchor::Start => "start",
                Anchor::Middle => "middle",
                Anchor::End => "end",
            };
            let _ = write!(
                out,
                r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{a}" fill="{color}""#
            );
            if *bold {
                out.push_str(r#" font-weight="600""#);
            }
            if *opacity < 1.0 {
                let _ = write!(out, r#" opacity="{opacity}""#);
            }
            if let Some(h) = halo {
                let _ = write!(
                    out,
                    r#" stroke="{h}" stroke-width="3" paint-order="stroke""#
                );
            }
            let _ = write!(out, ">{}</text>", xml_escape(text));
        }
        Shape::Cells {
            fill,
            opacity,
            runs,
        } => {
            let _ = write!(out, r#"<path fill="{fill}" opacity="{opacity}" d=""#);
            for (x, y, w) in runs {
                let _ = write!(out, "M{x:.0} {y:.0}h{w:.0}v{CELL}h-{w:.0}z");
            }
            out.push_str(r#""><title>many small buffers (merged at this zoom)</title></path>"#);
        }
    }
}

/// Writes a scene as a standalone SVG document (boxes carry their tensor as a tooltip).
pub fn scene_svg(
    scene: &Scene,
    problem: &Problem,
    info: &[BufInfo],
    r: Option<&PaneResult>,
) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{}" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="{font}"><rect width="{w}" height="{h}" fill="{}"/>"#,
        xml_escape(&scene.label),
        scene.bg,
        font = scene.font,
        w = scene.width,
        h = scene.height,
    );
    let (px, py, pw, ph) = scene.clip;
    let _ = write!(
        out,
        r#"<defs><clipPath id="mpclip"><rect x="{px}" y="{py}" width="{pw}" height="{ph}"/></clipPath></defs>"#
    );
    // grid lines and axis labels first: they lie partly outside the plot area
    let (outside, inside): (Vec<&Shape>, Vec<&Shape>) = scene
        .plot
        .iter()
        .partition(|s| matches!(s, Shape::Line { .. } | Shape::Text { .. }));
    for s in outside {
        svg_shape(&mut out, s, problem, info, r);
    }
    out.push_str(r#"<g clip-path="url(#mpclip)">"#);
    for s in inside {
        svg_shape(&mut out, s, problem, info, r);
    }
    out.push_str("</g>");
    for s in &scene.over {
        svg_shape(&mut out, s, problem, info, r);
    }
    out.push_str("</svg>");
    out
}

/// The timeline SVG for one pane's plan (exports; the page draws the same scene on a canvas),
/// with `extra` shapes drawn over the boxes (a diff's outlines, [`diff_shapes`]).
pub fn timeline_svg(
    problem: &Problem,
    info: &[BufInfo],
    r: &PaneResult,
    vp: &Viewport,
    o: &SvgOptions,
    extra: Vec<Shape>,
) -> String {
    let mut scene = timeline_scene(problem, r, vp, o);
    scene.plot.extend(extra);
    scene_svg(&scene, problem, info, Some(r))
}

/// What the overlay marks (see [`overlay_svg`]).
#[derive(Debug, Clone, Copy)]
pub struct Marks<'a> {
    /// The tensor under the pointer.
    pub hover: Option<usize>,
    /// The selected tensor.
    pub selected: Option<usize>,
    /// Lowercase search text (empty: none).
    pub search: &'a str,
    /// The selected step.
    pub step: Option<u64>,
    /// Dark colours.
    pub dark: bool,
}

/// What the page draws over the canvas and redraws on every pointer move (the picture under it
/// stays): the selected step, the hovered and the selected tensor, and the tensors matching the search
/// (lowercase; at most [`MAX_RECTS`] outlined).
pub fn overlay_svg(problem: &Problem, r: &PaneResult, vp: &Viewport, m: &Marks) -> String {
    let Marks {
        hover,
        selected,
        search,
        step,
        dark,
    } = *m;
    let p = if dark { &DARK } else { &LIGHT };
    let (px, py, pw, ph) = plot();
    let sx = pw / (vp.x1 - vp.x0).max(1e-9);
    let sy = ph / (vp.y1 - vp.y0).max(1e-9);
    let to_x = |x: f64| px + (x - vp.x0) * sx;
    let to_y = |y: f64| py + ph - (y - vp.y0) * sy;
    let mut shapes = Vec::new();
    shapes.extend(step.and_then(|st| step_band(st, vp, (px, py, pw, ph), &to_x, p.cursor)));
    let outline = |i: usize, width: f64| -> Option<Shape> {
        let b = problem.buffers.get(i)?;
        let (off, size) = (*r.plan.offsets.get(i)? as f64, *r.plan.sizes.get(i)? as f64);
        if size <= 0.0 || b.end as f64 + 1.0 <= vp.x0 || b.start as f64 >= vp.x1 {
            return None;
        }
        let (x0, x1) = (
            to_x(b.start as f64).max(px - 2.0),
            to_x(b.end as f64 + 1.0).min(px + pw + 2.0),
        );
        let (y1, y0) = (to_y(off).min(py + ph + 2.0), to_y(off + size).max(py - 2.0));
        // at least 3 units, so a tensor one pixel high still shows where it is
        let (w, h) = ((x1 - x0).max(3.0), (y1 - y0).max(3.0));
        Some(Shape::Rect {
            x: x0,
            y: y0.min(y1 - h),
            w,
            h,
            fill: None,
            opacity: 1.0,
            stroke: Some(Stroke {
                color: p.cursor,
                width,
                opacity: 1.0,
                dash: None,
            }),
            buffer: None,
        })
    };
    if !search.is_empty() {
        shapes.extend(
            problem
                .buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.name.to_lowercase().contains(search))
                .take(MAX_RECTS)
                .filter_map(|(i, _)| outline(i, 1.5)),
        );
    }
    // the selected tensor's name on the overlay: what a test (or a reader of the DOM) checks
    // against the table's selected row
    let mut selected_attr = String::new();
    if let Some((i, s)) = selected.and_then(|i| Some((i, outline(i, 3.0)?))) {
        shapes.push(s);
        selected_attr = format!(
            r#" data-selected="{}""#,
            crate::format::xml_escape(&problem.buffers[i].name)
        );
    }
    if let Some(s) = hover
        .filter(|h| Some(*h) != selected)
        .and_then(|i| outline(i, 2.0))
    {
        shapes.push(s);
    }
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" class="overlay" aria-hidden="true"{selected_attr}><defs><clipPath id="mpoclip"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs><g clip-path="url(#mpoclip)">"#,
        px - 3.0,
        py - 3.0,
        pw + 6.0,
        ph + 6.0
    );
    for s in &shapes {
        svg_shape(&mut out, s, problem, &[], None);
    }
    out.push_str("</g></svg>");
    out
}

/// Outline colour of a moved tensor (light, dark).
pub const MOVED: (&str, &str) = ("#c2185b", "#ff79c6");

/// The diff view's marks over pane `r`'s timeline: each tensor of `moved` (at most
/// [`MAX_RECTS`]) outlined where `r` puts it, and dashed where `other` (a plan of the same
/// problem) puts it; tensors out of the view are left out.
pub fn diff_shapes(
    problem: &Problem,
    r: &PaneResult,
    other: &PaneResult,
    moved: &[usize],
    vp: &Viewport,
    dark: bool,
) -> Vec<Shape> {
    let color = if dark { MOVED.1 } else { MOVED.0 };
    let (px, py, pw, ph) = plot();
    let sx = pw / (vp.x1 - vp.x0).max(1e-9);
    let sy = ph / (vp.y1 - vp.y0).max(1e-9);
    let mut out = Vec::new();
    for &i in moved.iter().take(MAX_RECTS) {
        let Some(b) = problem.buffers.get(i) else {
            continue;
        };
        let (x0, x1) = (b.start as f64, b.end as f64 + 1.0);
        if x1 <= vp.x0 || x0 >= vp.x1 {
            continue;
        }
        for (plan, dash, width) in [(&other.plan, Some("4 3"), 1.5), (&r.plan, None, 2.0)] {
            let (Some(&off), Some(&size)) = (plan.offsets.get(i), plan.sizes.get(i)) else {
                continue;
            };
            let (lo, hi) = (off as f64, off as f64 + size as f64);
            if hi <= vp.y0 || lo >= vp.y1 {
                continue;
            }
            let (l, rt) = (px + (x0 - vp.x0) * sx, px + (x1 - vp.x0) * sx);
            let (top, bottom) = (py + ph - (hi - vp.y0) * sy, py + ph - (lo - vp.y0) * sy);
            // at least 3 units, so that a thin tensor still shows where it went
            let (w, h) = ((rt - l).max(3.0), (bottom - top).max(3.0));
            out.push(Shape::Rect {
                x: l,
                y: top.min(bottom - h),
                w,
                h,
                fill: None,
                opacity: 1.0,
                stroke: Some(Stroke {
                    color,
                    width,
                    opacity: 1.0,
                    dash,
                }),
                buffer: Some(i),
            });
        }
    }
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

/// The baseline of a label under a line at `yy` (user units) for text of cap height `cap`,
/// moved down under a label already at baseline `above` when the two would overlap.
fn label_below(yy: f64, cap: f64, above: Option<f64>) -> f64 {
    let y = yy + cap + 3.0;
    match above {
        Some(a) if y < a + cap + 4.0 && y > a - cap - 4.0 => a + cap + 4.0,
        _ => y,
    }
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
    text_scale: f64,
) -> String {
    let p = if dark { &DARK } else { &LIGHT };
    let k = text_scale.max(1.0);
    let (px, pw) = (MARGIN.0, W - MARGIN.0 - MARGIN.1);
    let (py, ph) = (8.0, CURVE_H - 8.0 - 22.0);
    let high = r.plan.peak.max(r.lower_bound).max(1);
    let budget = budget.filter(|&b| b <= high.saturating_mul(2));
    // headroom over the highest line for its label: 8% of the plot, more for large text
    let cap = FONT * k * 0.8;
    let room = ((cap + 6.0 - py) / ph).clamp(1.0 - 1.0 / 1.08, 0.5);
    let top = high.max(budget.unwrap_or(0)) as f64 / (1.0 - room);
    let to_x = |x: f64| px + (x - vp.x0) / (vp.x1 - vp.x0).max(1e-9) * pw;
    let to_y = |y: f64| py + ph - y / top * ph;
    let mut out = String::with_capacity(16 * 1024);
    header(
        &mut out,
        CURVE_H,
        p,
        "live bytes per step, with the lower bound and the plan's peak",
        FONT * k,
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
    // the peak's label above its line, the bound's under its own (and under the peak's
    // label when the two lines are close)
    let peak_y = to_y(r.plan.peak as f64);
    let labels = [
        ("peak", r.plan.peak, p.peak, peak_y - 4.0),
        (
            "lower bound",
            r.lower_bound,
            p.bound,
            label_below(to_y(r.lower_bound as f64), cap, Some(peak_y - 4.0)),
        ),
    ];
    for (label, v, color, ly) in labels {
        let yy = to_y(v as f64);
        let _ = write!(
            out,
            r#"<line x1="{px}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="{color}" stroke-dasharray="6 3"/><text x="{}" y="{ly:.1}" fill="{color}" text-anchor="end">{label} {}</text>"#,
            px + pw,
            px - 6.0 + pw,
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
    let (label_x, anchor) = if k > 1.2 {
        (px + 4.0, "start")
    } else {
        (px - 6.0, "end")
    };
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="{anchor}" fill="{}">{}</text><text x="{}" y="{}" text-anchor="{anchor}" fill="{}">0</text><rect x="{px}" y="{py}" width="{pw}" height="{ph}" fill="none" stroke="{}"/><text x="{px}" y="{}" fill="{}" opacity="0.7">live bytes (planned sizes)</text></svg>"#,
        // large text (a narrow picture) is labelled inside the plot: the margin keeps its width
        label_x,
        if k > 1.2 { py + FONT * k } else { py + 10.0 },
        p.fg,
        binary(top as u64),
        label_x,
        if k > 1.2 { py + ph - 2.0 } else { py + ph },
        p.fg,
        p.grid,
        CURVE_H - 6.0,
        p.fg
    );
    out
}

/// The live-bytes curve's step cursor alone, an SVG laid over [`curve_svg`] drawn without
/// one: a new step then changes this small picture, not the curve.
pub fn curve_cursor_svg(vp: &Viewport, step: Option<u64>, dark: bool) -> String {
    let p = if dark { &DARK } else { &LIGHT };
    let (px, pw) = (MARGIN.0, W - MARGIN.0 - MARGIN.1);
    let (py, ph) = (8.0, CURVE_H - 8.0 - 22.0);
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {CURVE_H}" class="overlay" aria-hidden="true">"#
    );
    if let Some(s) = step {
        let xx = px + (s as f64 + 0.5 - vp.x0) / (vp.x1 - vp.x0).max(1e-9) * pw;
        if xx >= px && xx <= px + pw {
            let _ = write!(
                out,
                r#"<line x1="{xx:.1}" x2="{xx:.1}" y1="{py}" y2="{}" stroke="{}"/>"#,
                py + ph,
                p.cursor
            );
        }
    }
    out.push_str("</svg>");
    out
}

/// The translucent band over op step `step` inside the plot `(x, y, w, h)`, or `None` when the
/// step is outside the view: the cursor of the timeline and of the live-bytes curve alike.
fn step_band(
    step: u64,
    vp: &Viewport,
    (px, py, pw, ph): (f64, f64, f64, f64),
    to_x: &dyn Fn(f64) -> f64,
    color: &'static str,
) -> Option<Shape> {
    let (a, b) = (step as f64, step as f64 + 1.0);
    (b > vp.x0 && a < vp.x1).then(|| Shape::Rect {
        x: to_x(a).max(px),
        y: py,
        w: (to_x(b).min(px + pw) - to_x(a).max(px)).max(1.0),
        h: ph,
        fill: Some(color),
        opacity: 0.14,
        stroke: None,
        buffer: None,
    })
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
        let r = crate::analysis::run(
            &p,
            &crate::analysis::PlanKey::new(&PaneSettings::default_for(1, false, &[]), None),
            &|| 0.0,
        )
        .unwrap();
        (p, r)
    }

    #[test]
    fn lod_caps_the_number_of_elements() {
        let (p, r) = many(12_000);
        let vp = Viewport::full(&p, r.plan.peak);
        let svg = timeline_svg(&p, &[], &r, &vp, &SvgOptions::default(), Vec::new());
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
        let c = curve_svg(&r_of(), &lim, Some(3), true, None, 1.0);
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
        assert!(timeline_svg(&p, &[], &r, &vp, &o, Vec::new()).contains(&label));
        assert!(curve_svg(&r, &vp, None, false, Some(near), 1.0).contains(&label));
        // far above the peak: left out rather than flattening the curve
        let far = r.plan.peak * 3;
        assert!(!curve_svg(&r, &vp, None, false, Some(far), 1.0).contains("budget"));
    }

    /// The baseline (`y`) of the `<text>` whose content starts with `label`.
    fn text_y(svg: &str, label: &str) -> f64 {
        let at = svg.find(&format!(">{label} ")).expect(label);
        let open = svg[..at].rfind("<text").expect("a text element");
        let y = &svg[open..at];
        let v = y
            .split(" y=\"")
            .nth(1)
            .expect("y")
            .split('"')
            .next()
            .expect("y");
        v.parse().expect("a number")
    }

    #[test]
    fn large_text_keeps_the_peak_and_bound_labels_whole_and_apart() {
        // a phone's text scale, the bound just under the peak (the labels' worst case)
        let (p, mut r) = many(10);
        r.lower_bound = r.plan.peak - r.plan.peak / 50;
        let k = 3.0;
        let cap = FONT * k * 0.8;
        let vp = Viewport::full(&p, r.plan.peak);
        let o = SvgOptions {
            lower_bound: Some(r.lower_bound),
            text_scale: k,
            ..SvgOptions::default()
        };
        for svg in [
            timeline_svg(&p, &[], &r, &vp, &o, Vec::new()),
            curve_svg(&r, &vp, None, false, None, k),
        ] {
            let (peak, lb) = (text_y(&svg, "peak"), text_y(&svg, "lower bound"));
            assert!(peak - cap >= 0.0, "peak label cut at the top: {peak}");
            assert!((lb - peak).abs() >= cap, "labels overlap: {peak} {lb}");
        }
        // at text scale 1 the curve keeps its 8% headroom and its old label places
        let c = curve_svg(&r, &vp, None, false, None, 1.0);
        let (peak, lb) = (text_y(&c, "peak"), text_y(&c, "lower bound"));
        assert!(peak > 0.0 && lb > peak, "{peak} {lb}");
    }

    fn r_of() -> PaneResult {
        many(10).1
    }
}
