//! Painting the timeline canvases and the live-bytes curve, and the views restricted to a gear.

use super::*;

/// `r` restricted to gear `g`: other gears' buffers get size 0 (not drawn, not counted in the
/// curve), their blocks are dropped.
fn gear_view(b: &Built, r: &PaneResult, g: u64) -> PaneResult {
    let mut v = r.clone();
    for (i, buf) in b.problem.buffers.iter().enumerate() {
        if buf.gear.is_some_and(|x| x != g) {
            if let Some(s) = v.plan.sizes.get_mut(i) {
                *s = 0;
            }
        }
    }
    let sizes = v.plan.sizes.clone();
    v.plan.blocks.retain(|blk| {
        blk.members
            .iter()
            .any(|&m| sizes.get(m.index()).copied().unwrap_or(0) > 0)
    });
    v.curve = memplan_core::report::analysis::live_curve(&b.problem, &sizes);
    v.peak_step = memplan_core::report::analysis::peak_step(&v.curve);
    v
}

/// What the timeline canvas was painted from: a new key means a new picture.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PaintKey {
    /// Addresses of the results drawn, the focused pane's first (results are shared, never
    /// changed in place).
    results: Vec<usize>,
    /// The compare view drawn.
    compare: Compare,
    /// The viewport, bit for bit.
    view: [u64; 4],
    dark: bool,
    budget: Option<u64>,
    /// The canvas's width in CSS pixels.
    width: i32,
}

/// Smallest size of the timeline's labels on screen, CSS px (a phone scales its text up to it).
const LABEL_PX: f64 = 10.0;

impl App {
    /// With gears, the focused result restricted to the shown gear: other gears' buffers get
    /// size 0 (not drawn, not counted in the curve), their blocks are dropped.
    pub(crate) fn refresh_view(&mut self) {
        self.focus_view = None;
        self.gear_views.clear();
        let (Some(b), Some(g)) = (self.built.clone(), self.gear_shown()) else {
            return;
        };
        self.gear_views = self
            .results
            .iter()
            .map(|r| r.done().map(|r| Rc::new(gear_view(&b, r, g))))
            .collect();
        self.focus_view = self.gear_views.get(self.state.focus).cloned().flatten();
    }

    /// Paints the timeline canvas if the picture changed since the last paint (plan, view,
    /// theme, budget or width); pointer moves only redraw the overlay.
    pub(crate) fn paint(&mut self) {
        let (Some(b), Some(r), Some(vp)) = (self.built.clone(), self.focused(), self.view()) else {
            self.painted = None;
            return;
        };
        let others = self.compared();
        let key = PaintKey {
            results: std::iter::once(r)
                .chain(others.iter().map(|(_, o)| *o))
                .map(|x| x as *const PaneResult as usize)
                .collect(),
            compare: self.state.compare,
            view: [vp.x0, vp.x1, vp.y0, vp.y1].map(f64::to_bits),
            dark: self.dark(),
            budget: self.state.budget,
            width: platform::client_width("timeline-canvas"),
        };
        if self.painted.as_ref() == Some(&key) || key.width == 0 {
            return;
        }
        let o = crate::timeline::SvgOptions {
            dark: key.dark,
            budget: self.state.budget,
            text_scale: crate::timeline::text_scale_for(f64::from(key.width), LABEL_PX),
            ..Default::default()
        };
        let mut scene = crate::timeline::timeline_scene(&b.problem, r, &vp, &o);
        match (self.state.compare.mode, others.first()) {
            (CompareMode::Diff, Some((_, other))) => {
                let moved = analysis::moved(&r.plan, &other.plan);
                scene.plot.extend(crate::timeline::diff_shapes(
                    &b.problem, r, other, &moved, &vp, key.dark,
                ));
            }
            (CompareMode::Side, _) => {
                for (j, other) in &others {
                    let s = crate::timeline::timeline_scene(&b.problem, other, &vp, &o);
                    platform::paint_scene(&format!("compare-canvas-{j}"), &s);
                }
            }
            _ => {}
        }
        platform::paint_scene("timeline-canvas", &scene);
        self.painted = Some(key);
    }

    /// The live-bytes curve of `r` in view `vp` (without its step cursor), drawn again only
    /// when the plan, view, theme or budget changed: formatting its path costs milliseconds
    /// on every render otherwise.
    pub(crate) fn curve(&self, r: &PaneResult, vp: &Viewport, dark: bool) -> AttrValue {
        let key = PaintKey {
            // with the peak and the curve's length: a result freed and another made at its
            // address (a gear's view) does not pass for it
            results: vec![
                r as *const PaneResult as usize,
                usize::try_from(r.plan.peak).unwrap_or(usize::MAX),
                r.curve.len(),
            ],
            compare: Compare::default(),
            view: [vp.x0, vp.x1, vp.y0, vp.y1].map(f64::to_bits),
            dark,
            budget: self.state.budget,
            width: platform::client_width("timeline-canvas"),
        };
        // before the first paint the canvas has no width yet: the window's is near it
        let width = match key.width {
            0 => platform::window_width() - 48.0,
            w => f64::from(w),
        };
        let scale = crate::timeline::text_scale_for(width, LABEL_PX);
        let mut cache = self.curve_cache.borrow_mut();
        if let Some((k, svg)) = cache.as_ref() {
            if *k == key {
                return svg.clone();
            }
        }
        let svg = AttrValue::from(crate::timeline::curve_svg(
            r,
            vp,
            None,
            dark,
            self.state.budget,
            scale,
        ));
        *cache = Some((key, svg.clone()));
        svg
    }
}
