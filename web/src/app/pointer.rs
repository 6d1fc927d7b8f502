//! The timeline under the pointer and the keyboard: hover, drag to pan, click to select a
//! step, zoom, keys, and the tensor table's scroll.

use super::*;
use crate::state::{Drag, Hover};

impl App {
    /// Scrolls the tensor table (in this render, and its box after it) so that the selected row
    /// is in view, if it is out of it: only the rows near the scroll position are rendered.
    pub(crate) fn reveal_selected_row(&mut self) {
        use crate::views::TABLE_ROW_PX;
        let (Some(b), Some(r), Some(sel)) =
            (self.built.as_ref(), self.focused(), self.state.selected)
        else {
            return;
        };
        let Some(pos) = self.table_rows(b, r).iter().position(|&i| i == sel) else {
            return;
        };
        // the scroll box shows about 18 rows
        let first = (self.table_top / TABLE_ROW_PX).floor();
        let pos = pos as f64;
        if pos < first || pos >= first + 16.0 {
            let top = (pos - 3.0).max(0.0) * TABLE_ROW_PX;
            self.table_top = top;
            self.scroll_table = Some(top);
        }
    }

    pub(crate) fn step_by(&mut self, d: i64) -> bool {
        if let Some(b) = &self.built {
            let last = b.problem.steps.saturating_sub(1);
            let cur = self.table_step();
            let next = if d < 0 {
                cur.saturating_sub(d.unsigned_abs())
            } else {
                cur.saturating_add(d as u64).min(last)
            };
            self.state.step = Some(next);
            // Keep the cursor in view.
            if let (Some(vp), Some(full)) = (self.state.vp, self.full_view()) {
                let x = next as f64;
                if x < vp.x0 || x + 1.0 > vp.x1 {
                    let w = vp.x1 - vp.x0;
                    let mut n = vp;
                    n.x0 = (x - w / 2.0).clamp(0.0, (full.x1 - w).max(0.0));
                    n.x1 = n.x0 + w;
                    self.state.vp = Some(n);
                }
            }
            self.sync_hash();
        }
        true
    }

    pub(crate) fn select_live(&mut self, up: bool) -> bool {
        let step = self.table_step();
        let (Some(b), Some(r)) = (&self.built, self.focused()) else {
            return false;
        };
        // tensors live at the step with bytes in the arena, lowest offset first
        let mut live: Vec<(u64, usize)> = b
            .problem
            .buffers
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                t.start <= step && step <= t.end && r.plan.sizes.get(*i).is_some_and(|s| *s > 0)
            })
            .filter_map(|(i, _)| Some((*r.plan.offsets.get(i)?, i)))
            .collect();
        live.sort_unstable();
        let at = self
            .state
            .selected
            .and_then(|s| live.iter().position(|(_, i)| *i == s));
        let next = match (at, up) {
            (None, true) => live.first(),
            (None, false) => live.last(),
            (Some(k), true) => live.get(k + 1).or(live.get(k)),
            (Some(k), false) => live.get(k.saturating_sub(1)),
        };
        let Some(&(_, i)) = next else { return false };
        self.state.step = Some(step);
        self.state.selected = Some(i);
        self.sync_hash();
        true
    }

    pub(crate) fn pointer(&mut self, ux: f64, uy: f64, lx: f64, ly: f64) -> bool {
        if let Some(Drag {
            x: x0,
            y: y0,
            start,
            moved,
        }) = self.state.drag
        {
            let (dx, dy) = (ux - x0, uy - y0);
            if moved || dx.abs() + dy.abs() > 3.0 {
                if let Some(full) = self.full_view() {
                    let (_, _, pw, ph) = (
                        0.0,
                        0.0,
                        crate::timeline::W - crate::timeline::MARGIN.0 - crate::timeline::MARGIN.1,
                        crate::timeline::H - crate::timeline::MARGIN.2 - crate::timeline::MARGIN.3,
                    );
                    self.state.vp = Some(start.pan(-dx / pw, dy / ph, &full));
                    self.state.drag = Some(Drag {
                        x: x0,
                        y: y0,
                        start,
                        moved: true,
                    });
                    self.state.hover = None;
                    return true;
                }
            }
        }
        let (Some(b), Some(r), Some(vp)) = (&self.built, self.focused(), self.view()) else {
            return false;
        };
        let h = crate::timeline::hit(&b.problem, r, &vp, ux, uy).map(|buffer| Hover {
            buffer,
            x: lx,
            y: ly,
        });
        if h.is_none() && self.state.hover.is_none() {
            return false;
        }
        self.state.hover = h;
        true
    }

    pub(crate) fn leave(&mut self) -> bool {
        self.state.drag = None;
        if self.state.hover.take().is_none() {
            return false;
        }
        true
    }

    pub(crate) fn down(&mut self, ux: f64, uy: f64) -> bool {
        if self.embed && !self.embed_active {
            // a click makes the embed's timeline take the wheel
            self.embed_active = true;
            if let Some(vp) = self.view() {
                self.state.drag = Some(Drag {
                    x: ux,
                    y: uy,
                    start: vp,
                    moved: false,
                });
            }
            return true;
        }
        if let Some(vp) = self.view() {
            self.state.drag = Some(Drag {
                x: ux,
                y: uy,
                start: vp,
                moved: false,
            });
        }
        false
    }

    pub(crate) fn up(&mut self) -> bool {
        let was = self.state.drag.take();
        was.is_some_and(|d| d.moved)
    }

    pub(crate) fn click(&mut self, ux: f64) {
        if let Some(vp) = self.view() {
            if let Some(s) = crate::timeline::step_at(&vp, ux) {
                // the table's rows follow once this frame is painted (on 60k
                // buffers they are a third of the work)
                if self.table_hold.is_none() {
                    if let Some(link) = &self.link {
                        self.table_hold = Some(self.table_step());
                        let link = link.clone();
                        platform::after_paint(move || link.send_message(Msg::TableCatchUp));
                    }
                }
                self.state.step = Some(s);
                // the tensor under the pointer, if any, becomes the selection
                self.state.selected = self.state.hover.map(|h| h.buffer);
                self.sync_hash();
            }
        }
    }

    pub(crate) fn zoom(&mut self, f: f64, fx: f64, fy: f64) {
        if let (Some(vp), Some(full)) = (self.view(), self.full_view()) {
            self.state.vp = Some(vp.zoom(f, fx, fy, false, &full));
            self.sync_hash_soon();
        }
    }

    pub(crate) fn table_catch_up(&mut self) -> bool {
        let held = self.table_hold.take();
        self.reveal_selected_row();
        held != Some(self.table_step()) || self.scroll_table.is_some()
    }

    pub(crate) fn table_scroll(&mut self, top: f64) -> bool {
        let (was, now) = (
            crate::views::table_window(self.table_top),
            crate::views::table_window(top),
        );
        self.table_top = top;
        was != now
    }

    pub(crate) fn on_key(&mut self, ctx: &Context<Self>, k: &str) -> bool {
        match k {
            "ArrowLeft" => ctx.link().send_message(Msg::StepBy(-1)),
            "ArrowRight" => ctx.link().send_message(Msg::StepBy(1)),
            "Home" => ctx.link().send_message(Msg::Step(Some(0))),
            "End" => ctx.link().send_message(Msg::StepBy(i64::MAX)),
            "/" => {
                platform::focus("tensor-search");
                return false;
            }
            "Escape" => {
                self.dialog = None;
                self.state.hover = None;
            }
            "+" | "=" => ctx.link().send_message(Msg::Zoom(0.5, 0.5, 0.5)),
            "-" => ctx.link().send_message(Msg::Zoom(2.0, 0.5, 0.5)),
            "0" => ctx.link().send_message(Msg::ResetView),
            _ => return false,
        }
        true
    }
}
