//! A second seed for large inputs, built around the long-lived buffers.
//!
//! On traces with many short tensors and a few long-lived ones, the greedy heuristics place a
//! long buffer wherever it fits when its turn comes; one that ends up on top of the stack at
//! the peak step can only come down through a hole over its whole lifetime, which the window
//! search rarely finds. This seed places the long buffers first, for the steps that need it:
//! * the long buffers (the widest, as the window search counts them) cut time into sections
//!   in which the same long buffers are live; a sweep over the short buffers' starts and ends
//!   gives each section the most bytes live at one of its steps, long and short;
//! * the long buffers are placed greedily, those of the fullest section first (so at the
//!   peak step they form one stack without holes), each at the lowest offset clear of those
//!   already placed; [`VARIANTS`] tie orders within a section give as many layouts;
//! * each layout pins the long buffers and the greedy heuristics of [`HEURISTICS`] pack the
//!   rest around them. The plan with the smallest peak wins.
//!
//! Cost: a few greedy runs; memory linear in the input (the long buffers, their sections, two
//! events per short buffer, one problem copy).

use alloc::vec::Vec;
use core::cmp::Reverse;

use super::instance::{up, Item};
use super::search::Limits;
use super::window::long_cut;
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;
use crate::strategy::packing;

/// Orders of the long buffers of one section, bottom first: size descending, width
/// descending, start ascending, end descending, end ascending, start descending.
const VARIANTS: u32 = 6;

/// The heuristics that pack the other buffers around the pinned long ones.
const HEURISTICS: [fn(&Problem, &PlanOptions) -> crate::Result<Plan>; 3] = [
    packing::greedy_size_best_fit,
    packing::greedy_size_first_fit,
    packing::greedy_breadth,
];

/// The long buffers and their sections.
struct Layers {
    /// Long non-empty buffers (indices into the items).
    long: Vec<usize>,
    /// First and last section of each long buffer.
    span: Vec<(usize, usize)>,
    /// Most bytes (long and short) live at one step of the fullest section each long buffer
    /// lives in.
    hottest: Vec<u64>,
}

impl Layers {
    fn new(items: &[Item]) -> Option<Layers> {
        let cut = long_cut(items);
        let wide = |it: &Item| (it.end - it.start).saturating_add(1) > cut;
        let long: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].size > 0 && wide(&items[i]))
            .collect();
        // section k is [pts[k], pts[k + 1])
        let mut pts: Vec<u64> = Vec::with_capacity(long.len() * 2);
        for &i in &long {
            pts.push(items[i].start);
            pts.push(items[i].end.saturating_add(1));
        }
        pts.sort_unstable();
        pts.dedup();
        let nsec = pts.len().checked_sub(1).filter(|&n| n > 0)?;
        // most short bytes at one step of each section: sweep (time, +size) at a start and
        // (end + 1, -size) after an end
        let mut ev: Vec<(u64, bool, u64)> = Vec::new();
        for it in items.iter().filter(|it| it.size > 0 && !wide(it)) {
            ev.push((it.start, true, it.size));
            ev.push((it.end.saturating_add(1), false, it.size));
        }
        ev.sort_unstable();
        let mut total = alloc::vec![0u64; nsec];
        let (mut load, mut k, mut e) = (0u64, 0usize, 0usize);
        while let Some(&(t, _, _)) = ev.get(e) {
            while let Some(&(_, add, z)) = ev.get(e).filter(|x| x.0 == t) {
                load = if add {
                    load.saturating_add(z)
                } else {
                    load.saturating_sub(z)
                };
                e += 1;
            }
            // the load holds on [t, next)
            let next = ev.get(e).map_or(u64::MAX, |x| x.0);
            while k < nsec && pts[k + 1] <= t {
                k += 1;
            }
            let mut j = k;
            while j < nsec && pts[j] < next {
                total[j] = total[j].max(load);
                j += 1;
            }
        }
        let sec = |t: u64| pts.partition_point(|&p| p <= t).saturating_sub(1);
        let span: Vec<(usize, usize)> = long
            .iter()
            .map(|&i| (sec(items[i].start), sec(items[i].end)))
            .collect();
        let mut long_load = alloc::vec![0u64; nsec];
        for (k, &(a, b)) in span.iter().enumerate() {
            for l in &mut long_load[a..=b] {
                *l = l.saturating_add(items[long[k]].size);
            }
        }
        for (t, l) in total.iter_mut().zip(&long_load) {
            *t = t.saturating_add(*l);
        }
        let hottest = span
            .iter()
            .map(|&(a, b)| total[a..=b].iter().copied().max().unwrap_or(0))
            .collect();
        Some(Layers {
            long,
            span,
            hottest,
        })
    }

    /// Offsets of the long buffers: fullest section first, ties by `variant`, each at the
    /// lowest aligned offset clear of the long buffers placed before it.
    fn place(&self, items: &[Item], variant: u32) -> Vec<u64> {
        let mut order: Vec<usize> = (0..self.long.len()).collect();
        order.sort_unstable_by_key(|&k| {
            let it = &items[self.long[k]];
            let tie = match variant {
                0 => u64::MAX - it.size,
                1 => u64::MAX - (it.end - it.start),
                2 => it.start,
                3 => u64::MAX - it.end,
                4 => it.end,
                _ => u64::MAX - it.start,
            };
            (Reverse(self.hottest[k]), tie, k)
        });
        let mut off = alloc::vec![0u64; self.long.len()];
        let mut placed: Vec<usize> = Vec::with_capacity(order.len());
        let mut busy: Vec<(u64, u64)> = Vec::new();
        for &k in &order {
            let it = &items[self.long[k]];
            busy.clear();
            for &j in &placed {
                let (a, b) = (self.span[j], self.span[k]);
                if a.0 <= b.1 && b.0 <= a.1 {
                    busy.push((off[j], off[j].saturating_add(items[self.long[j]].size)));
                }
            }
            busy.sort_unstable();
            let mut x = 0u64;
            for &(lo, hi) in &busy {
                if x.saturating_add(it.size) <= lo {
                    break;
                }
                x = x.max(hi);
            }
            off[k] = up(x, it.align).unwrap_or(u64::MAX);
            placed.push(k);
        }
        off
    }
}

/// The best plan with a peak below `worse_than` found by placing the long buffers first, or
/// `None` (no long buffers, pinned buffers, none better). Stops early at `lb` or when
/// `limits` run out between greedy runs.
pub(crate) fn seed(
    problem: &Problem,
    options: &PlanOptions,
    items: &[Item],
    lb: u64,
    worse_than: u64,
    limits: &mut Limits<'_>,
) -> Option<Plan> {
    // pinned buffers would need the layout to clear them: not handled, keep the seed
    if items.iter().any(|it| it.fixed.is_some()) || worse_than <= lb {
        return None;
    }
    let layers = Layers::new(items)?;
    let mut best: Option<Plan> = None;
    let mut pinned = problem.clone();
    for variant in 0..VARIANTS {
        let off = layers.place(items, variant);
        if off.contains(&u64::MAX) {
            continue;
        }
        for (k, &i) in layers.long.iter().enumerate() {
            if let Some(b) = pinned.buffers.get_mut(i) {
                b.fixed_offset = off.get(k).copied();
            }
        }
        for run in HEURISTICS {
            if !limits.poll() {
                return best;
            }
            let Ok(mut plan) = run(&pinned, options) else {
                continue;
            };
            if plan.peak < best.as_ref().map_or(worse_than, |b| b.peak) {
                plan.notes.clear();
                let done = plan.peak <= lb;
                best = Some(plan);
                if done {
                    return best;
                }
            }
        }
    }
    best
}
