//! A second seed for large inputs, built around the long-lived buffers.
//!
//! On traces with many short tensors and a few long-lived ones, the greedy heuristics place a
//! long buffer wherever it fits when its turn comes; one that ends up on top of the stack at
//! the peak step can only come down through a hole over its whole lifetime, which the window
//! search rarely finds. This seed lays out the long buffers first:
//! * the long buffers (the widest, as the window search counts them) cut time into sections
//!   in which the same long buffers are live; a sweep over the short buffers' starts and ends
//!   gives each section its short load at its [`CRITICAL`] fullest steps;
//! * an order of the long buffers is a layout: each at the lowest offset clear of those before
//!   it. A layout is scored by what its sections need: at each critical step the short buffers
//!   go first-fit, largest first, into the holes between the long buffers and the rest on top;
//! * the start is the best of [`VARIANTS`] orders (fullest section first, six tie orders); a
//!   local search moves one long buffer at a time in the order (often one live at the worst
//!   section, towards the bottom), keeps moves that do not score worse and restarts from the
//!   best order with a few random moves when stuck ([`STALL`]); at most [`REFINE_MOVES`]
//!   moves and half the time left ([`Long::refine`]; the caller refines again when the window
//!   search gives up with time left);
//! * the best layout pins the long buffers and the greedy heuristics of [`HEURISTICS`] pack
//!   the rest around them; the smallest peak wins (the window search then packs the short
//!   buffers, which it does well once the long ones are right).
//!
//! Cost: a few greedy runs and the local search (a move costs about `long^2 + sections x long`);
//! memory linear in the input (the long buffers, their sections, the short buffers live at
//! the critical steps, one problem copy).

use alloc::vec::Vec;
use core::cmp::Reverse;

use super::instance::{up, Item};
use super::search::Limits;
use super::window::{long_cut, Rng};
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;
use crate::strategy::packing;

/// Orders of the long buffers of one section, bottom first: size descending, width
/// descending, start ascending, end descending, end ascending, start descending.
const VARIANTS: u32 = 6;

/// Fullest steps of each section the score of a layout packs.
const CRITICAL: usize = 4;

/// Moves of the local search on the order of the long buffers.
const REFINE_MOVES: u32 = 40_000;
/// Moves without progress before the local search restarts from its best order, shaken by
/// [`KICK`] random moves.
const STALL: u32 = 1_500;
/// Random moves that shake the best order at a restart.
const KICK: u32 = 3;

/// Most long-lived buffers the ceiling seed lays out ([`ceiling`]: `long^2` steps that do not
/// poll the clock; 4,096 is well under a second).
const CEILING_MAX_LONG: usize = 4096;

/// A greedy heuristic [`pack_around`] runs.
pub(crate) type Around = fn(&Problem, &PlanOptions) -> crate::Result<Plan>;

/// The heuristics that pack the other buffers around the pinned long ones.
pub(crate) const HEURISTICS: [Around; 3] = [
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
    /// Most bytes of short buffers live at one step of each section.
    short: Vec<u64>,
    /// For each section, the sizes (largest first) of the short buffers live at each of its
    /// [`CRITICAL`] fullest steps.
    crit: Vec<Vec<Vec<u64>>>,
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
        // the fullest steps of each section: (short load, step), fullest first
        let mut top_steps: Vec<Vec<(u64, u64)>> = alloc::vec![Vec::new(); nsec];
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
                let steps = &mut top_steps[j];
                let at = t.max(pts[j]);
                if steps.len() < CRITICAL || steps.last().is_some_and(|x| x.0 < load) {
                    steps.truncate(CRITICAL - 1);
                    let p = steps.partition_point(|x| x.0 >= load);
                    steps.insert(p, (load, at));
                }
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
        let short = total.clone();
        // short buffers sorted by start: those live at a step start at most `width` before it
        let mut shorts: Vec<&Item> = items.iter().filter(|it| it.size > 0 && !wide(it)).collect();
        shorts.sort_unstable_by_key(|it| it.start);
        let width = cut.saturating_add(1);
        let crit: Vec<Vec<Vec<u64>>> = top_steps
            .iter()
            .map(|steps| {
                steps
                    .iter()
                    .map(|&(_, t)| {
                        let lo = shorts.partition_point(|it| it.start.saturating_add(width) < t);
                        let mut z: Vec<u64> = shorts[lo..]
                            .iter()
                            .take_while(|it| it.start <= t)
                            .filter(|it| it.end >= t)
                            .map(|it| it.size)
                            .collect();
                        z.sort_unstable_by_key(|&x| Reverse(x));
                        z
                    })
                    .collect()
            })
            .collect();
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
            short,
            crit,
        })
    }

    /// The long buffers (indices into `long`) bottom first: fullest section first, ties by
    /// `variant`.
    fn order(&self, items: &[Item], variant: u32) -> Vec<usize> {
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
        order
    }

    /// Offsets of the long buffers placed in `order`, each at the lowest aligned offset clear
    /// of those placed before it (`u64::MAX` on overflow); `off` already holds those of the
    /// first `from`.
    fn fit(
        &self,
        items: &[Item],
        order: &[usize],
        off: &mut [u64],
        busy: &mut Vec<(u64, u64)>,
        from: usize,
    ) {
        // the placed buffers sorted by offset (`busy` holds (offset, index))
        busy.clear();
        busy.extend(order.iter().take(from).map(|&k| (off[k], k as u64)));
        busy.sort_unstable();
        for &k in order.iter().skip(from) {
            let it = &items[self.long[k]];
            let span = self.span[k];
            let mut x = 0u64;
            for &(lo, j) in busy.iter() {
                let j = usize::try_from(j).unwrap_or(0);
                let a = self.span[j];
                if a.0 > span.1 || span.0 > a.1 {
                    continue;
                }
                if x.saturating_add(it.size) <= lo {
                    break;
                }
                x = x.max(lo.saturating_add(items[self.long[j]].size));
                x = up(x, it.align).unwrap_or(u64::MAX);
            }
            let o = up(x, it.align).unwrap_or(u64::MAX);
            off[k] = o;
            let p = busy.partition_point(|&(lo, _)| lo < o);
            busy.insert(p, (o, k as u64));
        }
    }

    /// How high section `s` needs to go with the long buffers at `off`: at each of its
    /// [`CRITICAL`] fullest steps the short buffers go first-fit, largest first, into the holes
    /// between the long buffers, the rest on top of them; the section needs its long top plus
    /// the largest such rest. Never below the live-set bound of its steps.
    /// `by_off` lists the long buffers by offset.
    fn need(
        &self,
        items: &[Item],
        off: &[u64],
        by_off: &[usize],
        s: usize,
        holes: &mut Vec<(u64, u64)>,
    ) -> u64 {
        holes.clear();
        holes.extend(
            by_off
                .iter()
                .filter(|&&k| self.span[k].0 <= s && s <= self.span[k].1)
                .map(|&k| (off[k], off[k].saturating_add(items[self.long[k]].size))),
        );
        // turn the busy intervals into holes (free bytes) in place; `x` ends as the long top
        let mut x = 0u64;
        let mut m = 0usize;
        for r in 0..holes.len() {
            let (lo, hi) = holes[r];
            if lo > x {
                holes[m] = (lo - x, 0);
                m += 1;
            }
            x = x.max(hi);
        }
        holes.truncate(m);
        let mut most = 0u64;
        for sizes in &self.crit[s] {
            for h in holes.iter_mut() {
                h.1 = h.0;
            }
            let mut rest = 0u64;
            for &z in sizes {
                match holes.iter_mut().find(|h| h.1 >= z) {
                    Some(h) => h.1 -= z,
                    None => rest = rest.saturating_add(z),
                }
            }
            most = most.max(rest);
        }
        x.saturating_add(most)
    }

    /// Score of a layout of the long buffers whose sections need `need`: (the most a section
    /// needs, the sum of the excesses over `goal`), smaller is better.
    fn score(need: &[u64], goal: u64) -> (u64, u64) {
        need.iter().fold((0, 0), |(w, s), &n| {
            (w.max(n), s.saturating_add(n.saturating_sub(goal)))
        })
    }

    /// Fills `need` for the layout `off`: every section, or those marked in `dirty`.
    fn needs(
        &self,
        items: &[Item],
        off: &[u64],
        need: &mut [u64],
        dirty: Option<&[bool]>,
        holes: &mut Vec<(u64, u64)>,
    ) {
        let mut by_off: Vec<usize> = (0..off.len()).collect();
        by_off.sort_unstable_by_key(|&k| (off[k], k));
        for (s, n) in need.iter_mut().enumerate() {
            if dirty.is_none_or(|d| d.get(s).copied().unwrap_or(true)) {
                *n = self.need(items, off, &by_off, s, holes);
            }
        }
    }

    /// Local search on the order of the long buffers against [`Layers::score`]: moves one long
    /// buffer (often one live at the worst section, towards the bottom) to another place in
    /// the order and keeps the move unless the score gets worse. At most `budget` moves, each
    /// charged to `limits`; stops at `goal`. Leaves the best order found in `order` and
    /// returns its score.
    fn refine(
        &self,
        items: &[Item],
        order: &mut Vec<usize>,
        goal: u64,
        budget: u32,
        rng: &mut Rng,
        limits: &mut Limits<'_>,
    ) -> (u64, u64) {
        let n = order.len();
        let (mut off, mut off2) = (alloc::vec![0u64; n], alloc::vec![0u64; n]);
        let (mut tops, mut tops2) = (
            alloc::vec![0u64; self.short.len()],
            alloc::vec![0u64; self.short.len()],
        );
        let mut busy = Vec::new();
        self.fit(items, order, &mut off, &mut busy, 0);
        let mut holes = Vec::new();
        self.needs(items, &off, &mut tops, None, &mut holes);
        let mut cur = Layers::score(&tops, goal);
        let (mut best, mut best_order) = (cur, order.clone());
        let mut stall = 0u32;
        let mut dirty = alloc::vec![false; tops.len()];
        // a move refits about `n` buffers against `n` and rescans about `2n` sections
        let cost = u64::try_from(n.saturating_mul(n) / 512).unwrap_or(u64::MAX);
        let mut live: Vec<usize> = Vec::new();
        for m in 0..budget {
            if best.0 <= goal || n < 2 {
                break;
            }
            limits.nodes = limits.nodes.saturating_add(cost);
            // `tick` reads the clock at multiples of 128 nodes, which a move of `cost + 1`
            // nodes may never land on: read it every few moves here
            if !limits.tick() || (m % 8 == 0 && !limits.poll()) {
                break;
            }
            if stall >= STALL {
                // stuck: restart from the best order shaken by a few random moves
                order.clone_from(&best_order);
                for _ in 0..KICK {
                    let k = order.remove(below(rng, n));
                    order.insert(below(rng, n), k);
                }
                self.fit(items, order, &mut off, &mut busy, 0);
                self.needs(items, &off, &mut tops, None, &mut holes);
                cur = Layers::score(&tops, goal);
                stall = 0;
                continue;
            }
            stall += 1;
            let (from, to) = if rng.next() % 2 == 0 {
                // a long buffer at the worst section, moved towards the bottom
                let s = (0..tops.len())
                    .max_by_key(|&s| (tops[s], Reverse(s)))
                    .unwrap_or(0);
                live.clear();
                live.extend((0..n).filter(|&p| {
                    let k = order[p];
                    self.span[k].0 <= s && s <= self.span[k].1
                }));
                let Some(&from) = live.get(below(rng, live.len())) else {
                    continue;
                };
                (from, below(rng, from.max(1)))
            } else {
                (below(rng, n), below(rng, n))
            };
            if from == to {
                continue;
            }
            let k = order.remove(from);
            order.insert(to, k);
            limits.counts.layout_moves += 1;
            off2.copy_from_slice(&off);
            self.fit(items, order, &mut off2, &mut busy, from.min(to));
            dirty.fill(false);
            for (k, &(a, b)) in self.span.iter().enumerate() {
                if off[k] != off2[k] {
                    dirty[a..=b].fill(true);
                }
            }
            tops2.copy_from_slice(&tops);
            self.needs(items, &off2, &mut tops2, Some(&dirty), &mut holes);
            let got = Layers::score(&tops2, goal);
            if got <= cur && !off2.contains(&u64::MAX) {
                limits.counts.layout_moves_ok += 1;
                if got < cur {
                    stall = 0;
                }
                cur = got;
                if cur < best {
                    best = cur;
                    best_order.clone_from(order);
                }
                core::mem::swap(&mut off, &mut off2);
                core::mem::swap(&mut tops, &mut tops2);
            } else {
                let k = order.remove(to);
                order.insert(from, k);
            }
        }
        order.clone_from(&best_order);
        best
    }
}

/// A pseudo-random index below `m` (0 when `m` is 0).
fn below(rng: &mut Rng, m: usize) -> usize {
    usize::try_from(rng.next() % m.max(1) as u64).unwrap_or(0)
}

/// The layout of the long buffers being searched: start with [`Long::new`], improve with
/// [`Long::refine`] (again when time is left), turn into a plan with [`Long::plan`].
pub(crate) struct Long {
    layers: Layers,
    /// The best order found.
    order: Vec<usize>,
    /// Its score ([`Layers::score`] against the lower bound).
    score: (u64, u64),
    rng: Rng,
}

impl Long {
    /// The best of the [`VARIANTS`] orders, or `None` (no long buffers, or pinned buffers: the
    /// layout would need to clear them, not handled).
    /// `variant` seeds the local search's moves ([`super::SolverParams::variant`]).
    pub(crate) fn new(items: &[Item], lb: u64, variant: u64) -> Option<Long> {
        if items.iter().any(|it| it.fixed.is_some()) {
            return None;
        }
        let layers = Layers::new(items)?;
        let n = layers.long.len();
        let (mut off, mut busy) = (alloc::vec![0u64; n], Vec::new());
        let mut need = alloc::vec![0u64; layers.short.len()];
        let mut best: Option<(Vec<usize>, (u64, u64))> = None;
        for v in 0..VARIANTS {
            let order = layers.order(items, v);
            layers.fit(items, &order, &mut off, &mut busy, 0);
            layers.needs(items, &off, &mut need, None, &mut busy);
            let sc = Layers::score(&need, lb);
            if best.as_ref().is_none_or(|b| sc < b.1) {
                best = Some((order, sc));
            }
        }
        let (order, score) = best?;
        Some(Long {
            layers,
            order,
            score,
            rng: Rng(0x6C61_7965_7265_6400 ^ variant.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        })
    }

    /// At most [`REFINE_MOVES`] more moves of the local search, in at most half the limits
    /// left (the window search needs the rest); `true` if the layout scores better.
    pub(crate) fn refine(&mut self, items: &[Item], lb: u64, limits: &mut Limits<'_>) -> bool {
        let Long {
            layers,
            order,
            score,
            rng,
        } = self;
        let got = super::with_share(limits, 1, 2, |l| {
            layers.refine(items, order, lb, REFINE_MOVES, rng, l)
        });
        let better = got < *score;
        *score = (*score).min(got);
        better
    }

    /// The best plan with a peak below `worse_than` that the greedy heuristics pack around
    /// the long buffers pinned at the current layout, or `None`. Stops when `limits` run out
    /// between greedy runs or one reaches `lb`.
    pub(crate) fn plan(
        &self,
        problem: &Problem,
        options: &PlanOptions,
        items: &[Item],
        lb: u64,
        worse_than: u64,
        limits: &mut Limits<'_>,
    ) -> Option<Plan> {
        let layers = &self.layers;
        let mut off = alloc::vec![0u64; layers.long.len()];
        layers.fit(items, &self.order, &mut off, &mut Vec::new(), 0);
        if off.contains(&u64::MAX) {
            return None;
        }
        pack_around(
            problem,
            options,
            (&layers.long, &off),
            lb,
            worse_than,
            limits,
            &HEURISTICS,
        )
    }
}

/// The best plan with a peak below `worse_than` that `heuristics` (in order; the layouts
/// here run [`HEURISTICS`]) pack around the buffers `pins.0` pinned at offsets `pins.1`, or
/// `None`. Stops when `limits` run out between greedy runs or one reaches `lb`.
pub(crate) fn pack_around(
    problem: &Problem,
    options: &PlanOptions,
    (long, off): (&[usize], &[u64]),
    lb: u64,
    worse_than: u64,
    limits: &mut Limits<'_>,
    heuristics: &[Around],
) -> Option<Plan> {
    let mut pinned = problem.clone();
    for (k, &i) in long.iter().enumerate() {
        if let Some(b) = pinned.buffers.get_mut(i) {
            b.fixed_offset = off.get(k).copied();
        }
    }
    let mut best: Option<Plan> = None;
    // a greedy run is not started when the slowest so far would overrun the deadline
    let mut slowest = 0u64;
    for run in heuristics {
        if !limits.room_for(slowest) {
            break;
        }
        let t0 = limits.clock.now_ms();
        let got = run(&pinned, options);
        slowest = slowest.max(limits.clock.now_ms().saturating_sub(t0));
        let Ok(mut plan) = got else {
            continue;
        };
        if plan.peak < best.as_ref().map_or(worse_than, |b| b.peak) {
            plan.notes.clear();
            let done = plan.peak <= lb;
            best = Some(plan);
            if done {
                break;
            }
        }
    }
    best
}

/// A seed that hangs the tall long-lived buffers from the ceiling (issue 17, the KV-cache
/// trace): the long-lived buffers (as the window search counts them) whose top in
/// `incumbent` is above the bound `lb` are placed top-down under `lb` (earliest start
/// highest, each at the highest aligned offset clear of those placed), every other long
/// buffer bottom-up in order of end descending, then start (each at the lowest offset clear
/// of those placed before it), and the greedy heuristics pack the short buffers around them.
///
/// Why: a long buffer that starts late, when the memory is already full, lands on top of
/// every greedy plan's stack; it can come down only through a column that stays free until
/// it ends, and the space that frees up later (a buffer ending early, deep in the stack) is
/// not adjacent to where the short buffers live. Bottom-up by end descending keeps the
/// buffers that end first at the top of the lower stack, next to the short buffers, so their
/// space joins the short buffers' when they end; the late ones hung from the ceiling take
/// the upper edge of that space. On kv-60027-2 this packs at the bound where every greedy
/// order and the window search stay at 1.00104 x (`docs/benchmarks.md`).
///
/// Returns the best plan below `worse_than`, or `None` (pinned buffers, no tall long
/// buffer, more than [`CEILING_MAX_LONG`] long ones, an offset overflow, nothing better).
/// Cost: `long^2` for the layout (charged as `long^2 / 512` nodes, as the layout search
/// charges its moves) and the greedy runs.
pub(crate) fn ceiling(
    problem: &Problem,
    options: &PlanOptions,
    items: &[Item],
    lb: u64,
    incumbent: &[u64],
    worse_than: u64,
    limits: &mut Limits<'_>,
) -> Option<Plan> {
    if items.iter().any(|it| it.fixed.is_some()) || worse_than <= lb {
        return None;
    }
    let cut = long_cut(items);
    let long: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].size > 0 && (items[i].end - items[i].start).saturating_add(1) > cut)
        .collect();
    let tall_at = |i: usize| incumbent[i].saturating_add(items[i].size) > lb;
    let (mut tall, mut low): (Vec<usize>, Vec<usize>) = long.iter().partition(|&&i| tall_at(i));
    let n = long.len();
    // the layout is quadratic in the long buffers and not interruptible: bounded
    if tall.is_empty() || n > CEILING_MAX_LONG {
        return None;
    }
    limits.nodes = limits
        .nodes
        .saturating_add(u64::try_from(n.saturating_mul(n) / 512).unwrap_or(u64::MAX));
    if !limits.tick() {
        return None;
    }
    low.sort_unstable_by_key(|&i| (Reverse(items[i].end), items[i].start, i));
    tall.sort_unstable_by_key(|&i| (items[i].start, Reverse(items[i].end), i));
    // placed buffers: (offset, top, index)
    let mut placed: Vec<(u64, u64, usize)> = Vec::with_capacity(n);
    let mut busy: Vec<(u64, u64)> = Vec::new();
    let mut at: Vec<(usize, u64)> = Vec::with_capacity(n);
    for (k, &i) in low.iter().chain(&tall).enumerate() {
        let it = &items[i];
        busy.clear();
        busy.extend(
            placed
                .iter()
                .filter(|p| items[p.2].start <= it.end && it.start <= items[p.2].end)
                .map(|p| (p.0, p.1)),
        );
        busy.sort_unstable();
        let o = if k >= low.len() {
            highest_under(&busy, lb, it.size, it.align).or_else(|| lowest(&busy, it.size, it.align))
        } else {
            lowest(&busy, it.size, it.align)
        }?;
        let top = o.checked_add(it.size)?;
        placed.push((o, top, i));
        at.push((i, o));
    }
    let (idx, off): (Vec<usize>, Vec<u64>) = at.into_iter().unzip();
    pack_around(
        problem,
        options,
        (&idx, &off),
        lb,
        worse_than,
        limits,
        &HEURISTICS,
    )
}

/// The lowest `align`-aligned offset where `size` bytes clear `busy` (intervals sorted by
/// start, possibly overlapping), or `None` on overflow.
fn lowest(busy: &[(u64, u64)], size: u64, align: u64) -> Option<u64> {
    let mut x = 0u64;
    for &(lo, hi) in busy {
        if up(x, align)?.checked_add(size)? <= lo {
            break;
        }
        x = x.max(hi);
    }
    up(x, align)
}

/// The highest `align`-aligned offset `o` with `o + size <= ceiling` where `size` bytes
/// clear `busy` (intervals sorted by start, possibly overlapping), or `None`.
fn highest_under(busy: &[(u64, u64)], ceiling: u64, size: u64, align: u64) -> Option<u64> {
    let a = align.max(1);
    // the free gaps under the ceiling, from the top down
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(busy.len());
    for &(lo, hi) in busy {
        match merged.last_mut() {
            Some(m) if lo <= m.1 => m.1 = m.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    let mut gap_hi = ceiling;
    for &(lo, hi) in merged.iter().rev() {
        if lo >= gap_hi {
            continue;
        }
        if let Some(o) = gap_hi.checked_sub(size).map(|o| o - o % a) {
            if o >= hi {
                return Some(o);
            }
        }
        gap_hi = lo;
    }
    gap_hi.checked_sub(size).map(|o| o - o % a)
}

/// The best plan with a peak below `worse_than` found by laying out the long buffers first
/// ([`Long`]: the best variant, refined), or `None` (no long buffers, pinned buffers, none
/// better).
#[cfg(test)]
pub(crate) fn seed(
    problem: &Problem,
    options: &PlanOptions,
    items: &[Item],
    lb: u64,
    worse_than: u64,
    limits: &mut Limits<'_>,
) -> Option<Plan> {
    if worse_than <= lb {
        return None;
    }
    let mut long = Long::new(items, lb, 0)?;
    long.refine(items, lb, limits);
    long.plan(problem, options, items, lb, worse_than, limits)
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::super::instance::Item;
    use super::super::search::Limits;
    use super::super::tests::{items_of, trace_like};
    use super::super::window::Rng;
    use super::Layers;

    fn item(size: u64, start: u64, end: u64) -> Item {
        Item {
            size,
            align: 1,
            start,
            end,
            fixed: None,
        }
    }

    fn limits() -> Limits<'static> {
        Limits::nodes_only(u64::MAX)
    }

    #[test]
    fn a_section_needs_its_long_top_plus_the_short_bytes_no_hole_takes() {
        // two long buffers over steps 0..=40, shorts of 3 and 2 bytes at step 20, and 100
        // one-step fillers far away so that only the two are long-lived
        let mut items = alloc::vec![item(4, 0, 40), item(4, 0, 40), item(3, 20, 20)];
        items.push(item(2, 20, 20));
        items.extend((0..100).map(|i| item(1, 100 + i, 100 + i)));
        let layers = Layers::new(&items).expect("two long buffers");
        assert_eq!(layers.long, [0, 1]);
        let mut holes = Vec::new();
        // (offset of the second long buffer, what the section needs)
        for (o, want) in [(4, 13), (6, 13), (7, 13), (9, 13), (10, 14), (12, 16)] {
            let off = [0, o];
            assert_eq!(
                layers.need(&items, &off, &[0, 1], 0, &mut holes),
                want,
                "{o}"
            );
        }
        let mut need = [0u64];
        layers.needs(&items, &[9, 0], &mut need, None, &mut holes);
        assert_eq!(need, [13]);
        assert_eq!(Layers::score(&need, 12), (13, 1));
    }

    #[test]
    fn the_ceiling_seed_hangs_a_late_long_buffer_under_the_bound() {
        // The KV-cache shape in miniature (hand-checked): A (4 B, steps 0-99) lives
        // throughout; O (2 B, 0-59) ends early; S (1 B, 30-99) starts while O lives; N (1 B,
        // 70-99) starts after O ends; one-step shorts x (2 B, step 10), z (1 B, 40) and y
        // (2 B, 80) make steps 10, 40 and 80 sum to 8 B, the live-set bound. The only plans
        // at 8 B put S at 7 (the ceiling) and N at the bottom of O's old place, so that y
        // finds 2 contiguous bytes at step 80. 200 one-byte fillers at steps 200-399 keep
        // only A, O, S and N long-lived.
        use crate::problem::{Buffer, Problem};
        let mut bufs = alloc::vec![
            Buffer::new("A", 4, 0, 99),
            Buffer::new("O", 2, 0, 59),
            Buffer::new("S", 1, 30, 99),
            Buffer::new("N", 1, 70, 99),
            Buffer::new("x", 2, 10, 10),
            Buffer::new("z", 1, 40, 40),
            Buffer::new("y", 2, 80, 80),
        ];
        bufs.extend((0..200).map(|k| Buffer::new(alloc::format!("f{k}"), 1, 200 + k, 200 + k)));
        let p = Problem::from_buffers("kv-mini", bufs);
        let items: Vec<Item> = p
            .buffers
            .iter()
            .map(|b| item(b.size, b.start, b.end))
            .collect();
        let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
        assert_eq!(lb, 8);
        // an incumbent with S on top (9 B): A 0, O 4, S 8, N 4, x 6, z 6, y 5
        let mut incumbent = alloc::vec![0u64; items.len()];
        incumbent[..7].copy_from_slice(&[0, 4, 8, 4, 6, 6, 5]);
        let o = crate::PlanOptions::exact();
        let plan = super::ceiling(&p, &o, &items, lb, &incumbent, 9, &mut limits())
            .expect("a plan below 9 B");
        crate::validate::validate(&p, &plan).unwrap();
        assert_eq!(plan.peak, 8);
        assert_eq!(&plan.offsets[..4], &[0, 4, 7, 4]);
        // nothing tall and long-lived: no ceiling seed
        incumbent[2] = 6;
        incumbent[6] = 7;
        assert!(super::ceiling(&p, &o, &items, lb, &incumbent, 9, &mut limits()).is_none());
    }

    #[test]
    fn refining_the_long_order_never_scores_worse_and_is_deterministic() {
        let mut improved = 0;
        for seed in 1..=8 {
            let p = trace_like(600, seed);
            let items = items_of(&p);
            let Some(layers) = Layers::new(&items) else {
                continue;
            };
            let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
            let n = layers.long.len();
            let (mut off, mut busy) = (alloc::vec![0u64; n], Vec::new());
            let mut need = alloc::vec![0u64; layers.short.len()];
            let mut score = |order: &[usize]| {
                layers.fit(&items, order, &mut off, &mut busy, 0);
                // the long buffers never overlap where they are live together
                for a in 0..n {
                    for b in 0..a {
                        let (x, y) = (layers.span[a], layers.span[b]);
                        if x.0 <= y.1 && y.0 <= x.1 {
                            let (ia, ib) = (&items[layers.long[a]], &items[layers.long[b]]);
                            assert!(
                                off[a] + ia.size <= off[b] || off[b] + ib.size <= off[a],
                                "seed {seed}"
                            );
                        }
                    }
                }
                layers.needs(&items, &off, &mut need, None, &mut busy);
                let sc = Layers::score(&need, lb);
                assert!(sc.0 >= lb, "seed {seed}: below the bound");
                sc
            };
            let start = layers.order(&items, 0);
            let before = score(&start);
            let (mut a, mut b) = (start.clone(), start);
            let sa = layers.refine(&items, &mut a, lb, 3_000, &mut Rng(1), &mut limits());
            let sb = layers.refine(&items, &mut b, lb, 3_000, &mut Rng(1), &mut limits());
            assert_eq!(sa, sb);
            assert_eq!(a, b, "seed {seed}: not deterministic");
            let after = score(&a);
            assert_eq!(after, sa, "seed {seed}: the returned score is the order's");
            assert!(after <= before, "seed {seed}: {after:?} > {before:?}");
            improved += usize::from(after < before);
        }
        assert!(improved > 0);
    }

    #[test]
    fn the_local_search_reads_the_clock_every_few_moves() {
        let p = trace_like(600, 3);
        let items = items_of(&p);
        let layers = Layers::new(&items).expect("long buffers");
        // a clock one millisecond later at every reading, deadline at 50
        let now = core::cell::Cell::new(0u64);
        let clock = || {
            now.set(now.get() + 1);
            now.get()
        };
        let mut limits = Limits {
            counts: Default::default(),
            clock: &clock,
            deadline: Some(50),
            node_cap: u64::MAX,
            nodes: 0,
            stopped: false,
            slowest_seed: None,
        };
        let mut order = layers.order(&items, 0);
        layers.refine(&items, &mut order, 0, u32::MAX, &mut Rng(1), &mut limits);
        assert!(limits.stopped);
        // 50 readings, one every 8 moves at least: a few hundred moves, whatever a move costs
        let per_move = (layers.long.len() * layers.long.len() / 512 + 1) as u64;
        assert!(limits.nodes <= 8 * 50 * per_move, "{}", limits.nodes);
    }
}
