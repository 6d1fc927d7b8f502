//! Window search for large inputs: an anytime large-neighbourhood search on the incumbent.
//!
//! Each round picks a target height `T` below the current peak (first halfway between the
//! lower bound and the peak; a failed round halves the step). Every buffer whose top is above
//! `T` is brought under it:
//! * **Windows** (short buffers): the buffer is freed together with neighbours live near it in
//!   time (in turn: the [`SolverParams::window_buffers`]`/4` and `/2` nearest in height, then
//!   the `window_buffers` nearest in time; anything above `T` first); every other buffer stays
//!   where it is as an obstacle, clipped at `T`. The exact decision search at capacity `T`
//!   runs on that sub-instance under a small node budget; a fit replaces the offsets (the plan
//!   stays valid: freed buffers clear every obstacle they are live with, and each other).
//! * **Relocation** (long-lived buffers, or when windows fail): the buffer moves to the spot
//!   under `T` that collides with the fewest bytes of short buffers (never with pinned or
//!   long-lived ones), and each buffer it displaces is re-placed by a window; the move is
//!   undone unless all of them fit.
//!
//! * **Bands** (long-lived buffers, before relocation): over the tall buffer's lifetime,
//!   every free buffer above a floor is freed, long-lived ones included, and the band is
//!   re-solved exactly inside `[floor, T]` against the fixed rest.
//!
//! The search stops at the node or time limit, at the bound, or after
//! [`MAX_MISSES`] rounds in a row at the smallest step that lowered nothing (so it ends
//! without a clock too), or once [`GIVE_UP_EXHAUSTED`] windows and bands were searched to
//! exhaustion with none fitted (the caller spends the time on boxing rounds). Each window or band that is searched to exhaustion proves only
//! that its buffers do not fit under its target with the rest where it was (counted, not a
//! bound); one that freed every movable buffer against no obstacle proves that nothing fits
//! under its target at all, and raises the lower bound that comes back.
//!
//! Memory: the buffers sorted by start (plus the list of long-lived ones), per-buffer marks and
//! one window's instance at a time, linear in the input. Recursion: the decision search's,
//! at most one level per buffer of a window.

use alloc::vec::Vec;

use super::instance::{Inst, Item};
use super::search::{decide, Decision, Limits};
use super::SolverParams;

/// Nodes one window's decision search may spend: a fixed part plus a part per freed buffer.
const WINDOW_NODES_BASE: u64 = 2_000;
const WINDOW_NODES_PER_BUFFER: u64 = 64;
/// Consecutive failed rounds at the smallest step (each with fresh neighbourhoods) before
/// the search gives up.
const MAX_MISSES: u32 = 24;
/// A cross-section window (the last attempt for a tall short buffer) frees up to this many
/// times [`SolverParams::window_buffers`]: every free buffer live with the tall one, long-lived
/// ones included, re-solved exactly against the rest.
const SECTION_WINDOW_FACTOR: usize = 4;
/// The larger band move frees up to this many times [`SolverParams::window_buffers`].
const BAND_FACTOR: usize = 4;
/// Spots (fewest bytes displaced first) a relocation tries.
const RELOCATE_SPOTS: usize = 6;

/// A deterministic generator (SplitMix64) to vary neighbourhoods between rounds.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Which buffers live at which steps: short buffers sorted by start (a range query scans
/// starts in `[a - longest short width, b]`); long-lived ones sorted by start (those starting
/// in `(a, b]`) and in a stabbing tree over their start steps (those live at `a`: each long
/// buffer sits in the `O(log)` nodes that cover its lifetime), so a query costs what it
/// returns plus `O(log n)`, however many long buffers there are.
struct Index {
    /// Short non-empty buffers sorted by start.
    short: Vec<usize>,
    /// Lifetime width (steps) of the longest short buffer.
    short_width: u64,
    /// Long-lived non-empty buffers sorted by start.
    long: Vec<usize>,
    /// Their distinct start steps, ascending: the leaves of the stabbing tree.
    long_starts: Vec<u64>,
    /// Stabbing tree (`2 * leaves` nodes, root 1): the long buffers whose lifetime covers each
    /// node's span of leaves; leaf `k` spans steps `[long_starts[k], long_starts[k + 1])`, and a
    /// buffer covers the leaves from its start's to its end's.
    stab: Vec<Vec<usize>>,
    /// Buffers wider than this (steps) are long-lived.
    cut: u64,
}

/// Buffers wider than this (steps) are long-lived: the widest 2% of the non-empty buffers,
/// but at least 16 steps.
pub(crate) fn long_cut(items: &[Item]) -> u64 {
    let mut widths: Vec<u64> = items
        .iter()
        .filter(|it| it.size > 0)
        .map(|it| (it.end - it.start).saturating_add(1))
        .collect();
    widths.sort_unstable();
    widths
        .get(widths.len().saturating_sub(1 + widths.len() / 50))
        .copied()
        .unwrap_or(0)
        .max(16)
}

impl Index {
    fn new(items: &[Item]) -> Index {
        let width = |i: usize| (items[i].end - items[i].start).saturating_add(1);
        let mut all: Vec<usize> = (0..items.len()).filter(|&i| items[i].size > 0).collect();
        let cut = long_cut(items);
        let long: Vec<usize> = all.iter().copied().filter(|&i| width(i) > cut).collect();
        all.retain(|&i| width(i) <= cut);
        all.sort_unstable_by_key(|&i| (items[i].start, i));
        let short_width = all.iter().map(|&i| width(i)).max().unwrap_or(1);
        let mut long = long;
        long.sort_unstable_by_key(|&i| (items[i].start, i));
        let mut long_starts: Vec<u64> = long.iter().map(|&i| items[i].start).collect();
        long_starts.dedup();
        let leaves = long_starts.len().max(1).next_power_of_two();
        let mut stab: Vec<Vec<usize>> = alloc::vec![Vec::new(); 2 * leaves];
        for &i in &long {
            // leaves [leaf of start, leaf of end], leaf k spanning [s_k, s_k+1)
            let first = long_starts.partition_point(|&x| x < items[i].start);
            let end_leaf = long_starts.partition_point(|&x| x <= items[i].end);
            // canonical nodes of leaves [first, end_leaf)
            let (mut l, mut r) = (first + leaves, end_leaf + leaves);
            while l < r {
                if l & 1 == 1 {
                    stab[l].push(i);
                    l += 1;
                }
                if r & 1 == 1 {
                    r -= 1;
                    stab[r].push(i);
                }
                l >>= 1;
                r >>= 1;
            }
        }
        Index {
            short: all,
            short_width,
            long,
            long_starts,
            stab,
            cut,
        }
    }

    fn is_long(&self, it: &Item) -> bool {
        (it.end - it.start).saturating_add(1) > self.cut
    }

    /// Appends to `out` every non-empty buffer live at some step of `[a, b]`.
    fn query(&self, items: &[Item], a: u64, b: u64, out: &mut Vec<usize>) {
        let from = a.saturating_sub(self.short_width);
        let lo = self.short.partition_point(|&i| items[i].start < from);
        for &i in &self.short[lo..] {
            if items[i].start > b {
                break;
            }
            if items[i].end >= a {
                out.push(i);
            }
        }
        // long buffers starting in (a, b]
        let from = self.long.partition_point(|&i| items[i].start <= a);
        for &i in &self.long[from..] {
            if items[i].start > b {
                break;
            }
            out.push(i);
        }
        // long buffers live at `a`: the stabbing path of a's leaf holds every long buffer that
        // starts by `a` and ends at or after the leaf's first step; those ending before `a`
        // (inside the leaf) are filtered out
        let k = self.long_starts.partition_point(|&x| x <= a);
        if k == 0 {
            return;
        }
        let leaf = k - 1;
        let leaves = self.stab.len() / 2;
        let mut node = leaf + leaves;
        while node >= 1 {
            for &i in &self.stab[node] {
                if items[i].end >= a {
                    out.push(i);
                }
            }
            node >>= 1;
        }
    }
}

fn top(items: &[Item], off: &[u64], i: usize) -> u64 {
    off[i].saturating_add(items[i].size)
}

/// The highest top of a non-empty buffer.
pub(crate) fn peak(items: &[Item], off: &[u64]) -> u64 {
    (0..items.len())
        .filter(|&i| items[i].size > 0)
        .map(|i| top(items, off, i))
        .max()
        .unwrap_or(0)
}

/// Improves `offsets` (a valid plan of `items`) window by window; returns the offsets and the
/// proven lower bound: `lb`, raised only by a re-solve of every movable buffer at once
/// (small inputs or windows as large as the problem).
pub(crate) fn improve(
    items: &[Item],
    mut offsets: Vec<u64>,
    lb: u64,
    capacity: Option<u64>,
    params: &SolverParams,
    limits: &mut Limits<'_>,
) -> (Vec<u64>, u64) {
    let goal = capacity.map_or(lb, |c| c.max(lb));
    let mut p = peak(items, &offsets);
    if p <= goal || limits.stopped {
        return (offsets, lb);
    }
    let mut w = Windows::new(items, params, lb);
    let mut delta = (p - goal).div_ceil(2);
    let mut misses = 0u32;
    let fits = |c: &super::search::Counts| c.windows_ok + c.bands_ok + c.relocations_ok;
    let (fits0, exhausted0) = (fits(&limits.counts), exhausted(&limits.counts));
    while p > goal.max(w.proven) && !limits.stopped {
        // nothing fitted and the neighbourhoods keep being exhausted: give the time back
        if fits(&limits.counts) == fits0
            && exhausted(&limits.counts).saturating_sub(exhausted0) >= GIVE_UP_EXHAUSTED
        {
            break;
        }
        let goal = goal.max(w.proven);
        let t = p - delta.min(p - goal);
        let ok = w.lower_to(t, &mut offsets, limits);
        let was = p;
        p = peak(items, &offsets);
        if ok || p < was {
            misses = 0;
        } else if delta > 1 {
            delta = delta.div_ceil(2);
        } else {
            // the smallest step failed: retry with new neighbourhoods from a wider step
            misses = misses.saturating_add(1);
            if misses > MAX_MISSES {
                break; // no neighbourhood helps any more: give up (terminates without a clock)
            }
            delta = ((p - goal) >> misses.min(16)).max(1);
        }
        delta = delta.min(p.saturating_sub(goal)).max(1);
    }
    let proven = w.proven.min(p);
    // what the notes can claim: nothing under the final peak moving only that many buffers
    let (t, most) = w.exhausted;
    if most > 0 && t.saturating_add(1) == p {
        let c = &mut limits.counts;
        if c.exhausted_peak == 0 || p < c.exhausted_peak {
            (c.exhausted_peak, c.exhausted_most) = (p, most as u64);
        } else if p == c.exhausted_peak {
            c.exhausted_most = c.exhausted_most.max(most as u64);
        }
    }
    (offsets, proven)
}

/// Neighbourhoods (windows and bands) the window search may exhaust without any fit before
/// it gives up and returns the time (issue 29: on IOPDDL S_1 all 400-650 windows of a 10 s
/// run were exhausted and none fitted, while boxing rounds with ceiling passes, which the
/// restarts then run, lowered the peak).
const GIVE_UP_EXHAUSTED: u64 = 48;

/// Windows and bands searched to exhaustion so far.
fn exhausted(c: &super::search::Counts) -> u64 {
    c.windows_exhausted + c.bands_exhausted
}

/// Band shapes of the certificate ([`certify`]): (steps of reach as a fraction of the
/// tall buffer's lifetime, at least 8; buffers freed; depth). Not larger: a node of a
/// 1,536-buffer band cost about 3x a window's on the tiled ResNet-50 trace (a node-budget
/// run took 71 s instead of 23 s), and no band above 640 buffers was exhausted there.
const CERT_SHAPES: [(u64, usize, u64); 3] = [(0, 96, 1), (4, 256, 2), (2, 640, 4)];
/// Node budget of one certificate re-solve per freed buffer (at least 20,000 in all).
const CERT_NODES_PER_BUFFER: u64 = 1_000;

/// A certificate for the final peak `P` of `offsets` (a valid plan): band re-solves at
/// target `P - 1` around a buffer at the peak, growing (96 to 640 buffers, over its
/// lifetime widened up to half its length on each side), each searched under a node budget
/// of 1,000 per freed buffer. A re-solve that fits lowers the peak (committed; `offsets`
/// changes) and the certificate starts again at the new peak; one searched to exhaustion
/// proves that no plan under `P` differs from `offsets` only in the buffers of that band
/// (those live at some step of its span at or above its floor, kept at or above it, the rest
/// fixed). Returns the largest band exhausted at the final peak, or else the last one cut,
/// or `None` (no band to try: the plan at `lb`, or limits out). Stops at the limits.
pub(crate) fn certify(
    items: &[Item],
    offsets: &mut [u64],
    lb: u64,
    params: &SolverParams,
    limits: &mut Limits<'_>,
) -> Option<Cert> {
    let mut w = Windows::new(items, params, lb);
    'peak: loop {
        // a band of an earlier, higher peak proves nothing about this one
        let mut best: Option<Cert> = None;
        let p = peak(items, offsets);
        if p <= lb.max(w.proven) || limits.stopped {
            return None;
        }
        let t = p - 1;
        // the buffer at the peak with the longest lifetime: its band covers the most
        let c = (0..items.len())
            .filter(|&i| items[i].size > 0 && top(items, offsets, i) > t)
            .max_by_key(|&i| (items[i].end - items[i].start, core::cmp::Reverse(i)))?;
        let width = items[c].end - items[c].start;
        for (div, want, depth) in CERT_SHAPES {
            if limits.stopped {
                break;
            }
            let reach = width.checked_div(div).map_or(0, |r| r.max(8));
            let budget = CERT_NODES_PER_BUFFER
                .saturating_mul(want as u64)
                .max(20_000);
            w.last_band = None;
            let shape = Band {
                reach,
                want,
                depth,
                budget: Some(budget),
            };
            let before = limits.counts.bands_exhausted;
            if w.band(c, t, shape, offsets, limits) {
                w.log.clear();
                continue 'peak; // the peak came down: certify the new one
            }
            let Some(mut cert) = w.last_band else {
                continue; // not a band of this size
            };
            cert.exhausted = limits.counts.bands_exhausted > before;
            if cert.exhausted || best.is_none_or(|b| !b.exhausted) {
                best = Some(cert);
            }
        }
        return best;
    }
}

/// The shape of a band move ([`Windows::band`]): the tall buffer's lifetime widened by
/// `reach` steps; about `want` buffers freed; the floor at least `depth` times what the
/// tall buffers stick out over the target below the lowest of them.
#[derive(Clone, Copy)]
struct Band {
    reach: u64,
    want: usize,
    depth: u64,
    /// Node budget of the re-solve; `None` for the windows' (a base plus a part per buffer).
    budget: Option<u64>,
}

struct Windows<'a> {
    items: &'a [Item],
    index: Index,
    params: &'a SolverParams,
    rng: Rng,
    buf: Vec<usize>,
    mark: Vec<bool>,
    /// Buffers displaced by a relocation, to be re-placed by windows.
    must: Vec<bool>,
    /// Offsets changed since the last clear, to undo a failed relocation.
    log: Vec<(usize, u64)>,
    /// First and last step of the schedule.
    t_min: u64,
    t_max: u64,
    /// Non-empty buffers that are not pinned.
    movable: usize,
    /// Proven lower bound: the caller's, raised by a re-solve that freed every movable
    /// buffer with no obstacle and proved that nothing fits under its target.
    proven: u64,
    /// The highest target a window or band was searched to exhaustion at, and the most
    /// buffers such a re-solve freed there.
    exhausted: (u64, usize),
    /// What the last band move freed: first and last step, floor (bytes), buffers.
    last_band: Option<Cert>,
}

/// A neighbourhood of the plan: the free buffers live at some step of `from..=to` whose
/// offset is at least `floor`, `buffers` of them ([`certify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Cert {
    pub from: u64,
    pub to: u64,
    pub floor: u64,
    pub buffers: u64,
    /// Searched to exhaustion without a fit (`false`: cut by its node budget).
    pub exhausted: bool,
}

impl<'a> Windows<'a> {
    fn new(items: &'a [Item], params: &'a SolverParams, lb: u64) -> Windows<'a> {
        Windows {
            items,
            index: Index::new(items),
            params,
            rng: Rng(0x6D65_6D70_6C61_6E00 ^ params.variant.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            buf: Vec::new(),
            mark: alloc::vec![false; items.len()],
            must: alloc::vec![false; items.len()],
            log: Vec::new(),
            t_min: items.iter().map(|it| it.start).min().unwrap_or(0),
            t_max: items.iter().map(|it| it.end).max().unwrap_or(0),
            movable: items
                .iter()
                .filter(|it| it.size > 0 && it.fixed.is_none())
                .count(),
            proven: lb,
            exhausted: (0, 0),
            last_band: None,
        }
    }

    /// Records a re-solve of `n` buffers searched to exhaustion at target `t`.
    fn note_exhausted(&mut self, t: u64, n: usize) {
        if t > self.exhausted.0 {
            self.exhausted = (t, n);
        } else if t == self.exhausted.0 {
            self.exhausted.1 = self.exhausted.1.max(n);
        }
    }

    /// Tries to bring every free buffer under `t`; `true` when all of them are.
    fn lower_to(&mut self, t: u64, off: &mut [u64], limits: &mut Limits<'_>) -> bool {
        let items = self.items;
        if items
            .iter()
            .any(|it| it.size > 0 && it.fixed.is_some_and(|o| o + it.size > t))
        {
            return false;
        }
        let tall: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].size > 0 && top(items, off, i) > t)
            .collect();
        // start at a random tall buffer so successive rounds meet different neighbourhoods
        let first = if tall.is_empty() {
            0
        } else {
            usize::try_from(self.rng.next() % tall.len() as u64).unwrap_or(0)
        };
        for r in 0..tall.len() {
            let i = tall[(first + r) % tall.len()];
            if top(items, off, i) <= t {
                continue; // an earlier window moved it
            }
            let mut placed = false;
            if !self.index.is_long(&items[i]) {
                let attempts = if self.params.section_windows { 4 } else { 3 };
                for attempt in 0..attempts {
                    // stopped, or proven that nothing fits under `t` at all
                    if limits.stopped || self.proven > t {
                        return false;
                    }
                    if self.window(i, t, attempt, off, limits) {
                        placed = true;
                        break;
                    }
                }
            }
            if !placed && self.params.band_moves && self.index.is_long(&items[i]) {
                let base = self.params.window_buffers.max(2);
                let width = items[i].end - items[i].start;
                let wide = (width / 4).max(8);
                for shape in [
                    Band {
                        reach: 0,
                        want: base,
                        depth: 1,
                        budget: None,
                    },
                    Band {
                        reach: wide,
                        want: base.saturating_mul(BAND_FACTOR),
                        depth: 4,
                        budget: None,
                    },
                ] {
                    if limits.stopped || self.proven > t {
                        return false;
                    }
                    if top(items, off, i) <= t || self.band(i, t, shape, off, limits) {
                        placed = true;
                        break;
                    }
                }
            }
            if !placed && !limits.stopped && self.proven <= t {
                placed = self.relocate(i, t, off, limits);
            }
            self.log.clear();
            if !placed {
                return false;
            }
        }
        true
    }

    /// Moves buffer `c` (typically long-lived) to a new offset under `t` where it collides
    /// with few buffers, then re-places those by windows; undone unless every one fits.
    fn relocate(&mut self, c: usize, t: u64, off: &mut [u64], limits: &mut Limits<'_>) -> bool {
        let items = self.items;
        let it = items[c];
        if it.fixed.is_some() || it.size > t {
            return false;
        }
        let mut near: Vec<usize> = Vec::new();
        self.index.query(items, it.start, it.end, &mut near);
        near.retain(|&j| j != c && off[j] < t);
        let clip = |j: usize| (off[j], top(items, off, j).min(t));
        // (bound, size) sorted by bound, with prefix sums of sizes: the bytes hit by a spot
        let sorted = |f: &dyn Fn(usize) -> u64| -> (Vec<u64>, Vec<u64>) {
            let mut v: Vec<(u64, u64)> = near.iter().map(|&j| (f(j), items[j].size)).collect();
            v.sort_unstable();
            let mut sums = Vec::with_capacity(v.len() + 1);
            sums.push(0u64);
            for &(_, z) in &v {
                sums.push(sums.last().copied().unwrap_or(0).saturating_add(z));
            }
            (v.into_iter().map(|x| x.0).collect(), sums)
        };
        let (los, lo_sums) = sorted(&|j| clip(j).0);
        let (his, hi_sums) = sorted(&|j| clip(j).1);
        // pinned and long-lived buffers stay put: the spot must clear them
        let pinned: Vec<(u64, u64)> = near
            .iter()
            .filter(|&&j| items[j].fixed.is_some() || self.index.is_long(&items[j]))
            .map(|&j| clip(j))
            .collect();
        let s = it.size;
        // candidate offsets: 0 and every obstacle top, aligned; cost = obstacles hit
        let mut cands: Vec<(u64, usize, u64)> = Vec::new();
        for o in core::iter::once(0).chain(his.iter().copied()) {
            let Some(o) = super::instance::up(o, it.align) else {
                continue;
            };
            if o.saturating_add(s) > t || o == off[c] {
                continue;
            }
            if pinned.iter().any(|&(lo, hi)| lo < o + s && o < hi) {
                continue;
            }
            let a = los.partition_point(|&l| l < o + s);
            let b = his.partition_point(|&h| h <= o);
            // bytes of the buffers the spot collides with, then how many
            cands.push((
                lo_sums[a].saturating_sub(hi_sums[b]),
                a.saturating_sub(b),
                o,
            ));
        }
        cands.sort_unstable();
        cands.dedup();
        let limit = self.params.window_buffers.max(2).saturating_mul(4);
        for &(_, count, o) in cands.iter().take(RELOCATE_SPOTS) {
            if count > limit || limits.stopped {
                break;
            }
            self.log.clear();
            self.log.push((c, off[c]));
            off[c] = o;
            limits.counts.relocations += 1;
            let mut displaced: Vec<usize> = near
                .iter()
                .copied()
                .filter(|&j| off[j] < o + s && o < top(items, off, j))
                .collect();
            displaced.sort_unstable_by_key(|&j| (items[j].start, j));
            for &j in &displaced {
                self.must[j] = true;
            }
            let mut ok = true;
            for &j in &displaced {
                if !self.must[j] {
                    continue; // re-placed by an earlier window
                }
                let mut fixed = false;
                for attempt in 0..3 {
                    if limits.stopped {
                        break;
                    }
                    if self.window(j, t, attempt, off, limits) {
                        fixed = true;
                        break;
                    }
                }
                if !fixed {
                    ok = false;
                    break;
                }
            }
            for &j in &displaced {
                self.must[j] = false;
            }
            if ok {
                limits.counts.relocations_ok += 1;
                return true;
            }
            while let Some((i, o)) = self.log.pop() {
                off[i] = o;
            }
        }
        false
    }

    /// One window around tall buffer `c` at capacity `t`; commits and returns `true` if every
    /// freed buffer fits under `t`.
    fn window(
        &mut self,
        c: usize,
        t: u64,
        attempt: u32,
        off: &mut [u64],
        limits: &mut Limits<'_>,
    ) -> bool {
        let items = self.items;
        let base = self.params.window_buffers.max(2);
        // attempts grow: a small band around `c` (the nearest in height), a wider band,
        // the nearest in time
        let want = match attempt {
            0 => (base / 4).max(2),
            1 => (base / 2).max(2),
            2 => base,
            _ => base.saturating_mul(SECTION_WINDOW_FACTOR),
        };
        // the last attempt frees the whole cross-section: every free buffer live with `c`
        let section = attempt >= 3;
        let (s0, e0) = (items[c].start, items[c].end);
        // widen the time span until it holds enough candidates (or covers the schedule)
        // (a cross-section needs only the buffers live with `c`)
        let mut reach = u64::from(!section);
        let mut cands: Vec<usize> = Vec::new();
        loop {
            cands.clear();
            let (a, b) = (s0.saturating_sub(reach), e0.saturating_add(reach));
            self.index.query(items, a, b, &mut cands);
            cands.retain(|&i| items[i].fixed.is_none());
            if section
                || cands.len() >= want.saturating_mul(2)
                || (a <= self.t_min && b >= self.t_max)
            {
                break;
            }
            reach = reach.saturating_mul(2);
        }
        // long-lived buffers are only freed when tall: moving one needs a gap over its whole
        // lifetime, which a window rarely has
        let span_lo = s0.saturating_sub(reach);
        let span_hi = e0.saturating_add(reach);
        let dist = |i: usize| -> u64 {
            let it = &items[i];
            s0.saturating_sub(it.end).max(it.start.saturating_sub(e0))
        };
        let noise = self.rng.next();
        let mut keyed: Vec<(bool, u64, u64, u64, usize)> = cands
            .iter()
            .filter(|&&i| {
                if section {
                    return dist(i) == 0;
                }
                i == c || !self.index.is_long(&items[i])
            })
            .filter(|&&i| {
                section
                    || top(items, off, i) > t
                    || self.must[i]
                    || (items[i].start >= span_lo && items[i].end <= span_hi)
            })
            .map(|&i| {
                let tall = top(items, off, i) > t || self.must[i];
                let tp = u64::MAX - top(items, off, i);
                let key = if attempt < 2 {
                    (off[i].abs_diff(off[c]), dist(i))
                } else {
                    (dist(i), tp)
                };
                // ties broken pseudo-randomly per window
                let tie = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ noise;
                (!tall, key.0, key.1, tie, i)
            })
            .collect();
        keyed.sort_unstable();
        keyed.truncate(want);
        let mut free: Vec<usize> = keyed.into_iter().map(|k| k.4).collect();
        if !free.contains(&c) {
            free.push(c);
        }
        // obstacles: everything else live with a freed buffer, clipped at `t` (the freed
        // buffers all end up below `t`, so only an obstacle's part below `t` matters)
        let mut obstacles: Vec<usize> = Vec::new();
        for &i in &free {
            self.mark[i] = true;
        }
        for &i in &free {
            self.buf.clear();
            self.index
                .query(items, items[i].start, items[i].end, &mut self.buf);
            for &j in &self.buf {
                if !self.mark[j] && off[j] < t {
                    self.mark[j] = true;
                    obstacles.push(j);
                }
            }
        }
        for &i in free.iter().chain(&obstacles) {
            self.mark[i] = false;
        }
        let sub: Vec<Item> = free
            .iter()
            .map(|&i| Item {
                fixed: None,
                ..items[i]
            })
            .chain(obstacles.iter().map(|&j| Item {
                fixed: Some(off[j]),
                size: items[j].size.min(t - off[j]),
                ..items[j]
            }))
            .collect();
        // every window costs at least a node, so node budgets bound the search
        if !limits.tick() {
            return false;
        }
        let inst = Inst::new(&sub);
        limits.counts.windows += 1;
        let budget = WINDOW_NODES_BASE
            .saturating_add(WINDOW_NODES_PER_BUFFER.saturating_mul(free.len() as u64));
        let d = with_budget(limits, budget, |l| decide(&inst, self.params, t, l));
        match d {
            Decision::Found(placed) => {
                limits.counts.windows_ok += 1;
                for (k, &s) in inst.free.iter().enumerate() {
                    let i = free[s];
                    self.log.push((i, off[i]));
                    off[i] = placed[k];
                    self.must[i] = false;
                }
                true
            }
            Decision::Infeasible => {
                limits.counts.windows_exhausted += 1;
                self.note_exhausted(t, free.len());
                if obstacles.is_empty() && free.len() == self.movable {
                    self.proven = self.proven.max(t.saturating_add(1));
                }
                false
            }
            Decision::Unknown => {
                limits.counts.windows_cut += 1;
                false
            }
        }
    }

    /// A band move around tall buffer `c` at capacity `t`: over the steps of `c`'s lifetime
    /// widened by `reach`, every free buffer at or above a floor `f` is freed (`f` as high
    /// as leaves about `want` of them, and never above a buffer that sticks out over `t`),
    /// and re-solved exactly inside `[f, t]` against the fixed rest (what lies below `f`
    /// cannot move, so it is one obstacle `[0, f)`; other buffers count only with their
    /// part inside `[f, t]`). The re-solve is the one neighbourhood that frees long-lived
    /// buffers at the peak together with everything above the floor around them: a
    /// rectangle of the plan, repacked. Commits and returns `true` on a fit.
    fn band(
        &mut self,
        c: usize,
        t: u64,
        shape: Band,
        off: &mut [u64],
        limits: &mut Limits<'_>,
    ) -> bool {
        let Band {
            reach,
            want,
            depth,
            budget,
        } = shape;
        let items = self.items;
        let (a, b) = (
            items[c].start.saturating_sub(reach),
            items[c].end.saturating_add(reach),
        );
        let mut cands: Vec<usize> = Vec::new();
        self.index.query(items, a, b, &mut cands);
        // the scan is work too: one node per 64 buffers looked at
        if !charge(limits, cands.len()) {
            return false;
        }
        cands.retain(|&i| items[i].fixed.is_none());
        // the lowest tall buffer must be able to come down by what it sticks out, so the
        // floor goes `depth` times that below it
        let (mut tall_floor, mut over) = (off[c], 0u64);
        for &i in &cands {
            if top(items, off, i) > t {
                tall_floor = tall_floor.min(off[i]);
                over = over.max(top(items, off, i) - t);
            }
        }
        let tall_floor = tall_floor.saturating_sub(over.saturating_mul(depth));
        // the floor: the `want`-th highest offset, lowered under the lowest tall buffer
        let f = if cands.len() > want {
            let k = want.max(1) - 1;
            let (_, nth, _) = cands.select_nth_unstable_by_key(k, |&i| u64::MAX - off[i]);
            off[*nth].min(tall_floor)
        } else {
            0
        };
        let mut free: Vec<usize> = cands.into_iter().filter(|&i| off[i] >= f).collect();
        if free.len() > want.saturating_mul(2) {
            return false; // the tall buffers reach too low: not a band of this size
        }
        free.sort_unstable();
        free.dedup();
        for &i in &free {
            self.mark[i] = true;
        }
        let mut obstacles: Vec<usize> = Vec::new();
        // the freed lifetimes as disjoint runs of steps: one time query per run, not per
        // freed buffer (long-lived ones overlap, and each would return the same thousands)
        let mut spans: Vec<(u64, u64)> = free
            .iter()
            .map(|&i| (items[i].start, items[i].end))
            .collect();
        spans.sort_unstable();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (s0, e0) in spans {
            match runs.last_mut() {
                Some(r) if s0 <= r.1.saturating_add(1) => r.1 = r.1.max(e0),
                _ => runs.push((s0, e0)),
            }
        }
        let (lo, hi) = (
            runs.first().map_or(0, |r| r.0),
            runs.last().map_or(0, |r| r.1),
        );
        let mut scanned = 0usize;
        for &(s0, e0) in &runs {
            self.buf.clear();
            self.index.query(items, s0, e0, &mut self.buf);
            scanned += self.buf.len();
            for &j in &self.buf {
                if !self.mark[j] && off[j] < t && top(items, off, j) > f {
                    self.mark[j] = true;
                    obstacles.push(j);
                }
            }
        }
        for &i in free.iter().chain(&obstacles) {
            self.mark[i] = false;
        }
        // building the instance costs about (free buffers + sections) x obstacles
        let build = scanned
            .saturating_add(free.len().saturating_mul(3).saturating_mul(obstacles.len()) / 64);
        if !charge(limits, build) {
            return false;
        }
        let floor = (f > 0).then_some(Item {
            size: f,
            align: 1,
            start: lo,
            end: hi,
            fixed: Some(0),
        });
        let sub: Vec<Item> = free
            .iter()
            .map(|&i| Item {
                fixed: None,
                ..items[i]
            })
            .chain(obstacles.iter().map(|&j| {
                let from = off[j].max(f);
                Item {
                    fixed: Some(from),
                    size: top(items, off, j).min(t) - from,
                    ..items[j]
                }
            }))
            .chain(floor)
            .collect();
        let inst = Inst::new(&sub);
        limits.counts.bands += 1;
        self.last_band = Some(Cert {
            from: a,
            to: b,
            floor: f,
            buffers: free.len() as u64,
            exhausted: false,
        });
        let budget = budget.unwrap_or_else(|| {
            WINDOW_NODES_BASE
                .saturating_add(WINDOW_NODES_PER_BUFFER.saturating_mul(free.len() as u64))
        });
        match with_budget(limits, budget, |l| decide(&inst, self.params, t, l)) {
            Decision::Found(placed) => {
                limits.counts.bands_ok += 1;
                for (k, &s) in inst.free.iter().enumerate() {
                    let i = free[s];
                    self.log.push((i, off[i]));
                    off[i] = placed[k];
                    self.must[i] = false;
                }
                true
            }
            Decision::Infeasible => {
                limits.counts.bands_exhausted += 1;
                self.note_exhausted(t, free.len());
                if f == 0 && obstacles.is_empty() && free.len() == self.movable {
                    self.proven = self.proven.max(t.saturating_add(1));
                }
                false
            }
            Decision::Unknown => {
                limits.counts.bands_cut += 1;
                false
            }
        }
    }
}

/// Charges `work` buffers looked at (one node per 64), at least one node; `false` once a
/// limit is hit.
fn charge(limits: &mut Limits<'_>, work: usize) -> bool {
    let extra = (work / 64) as u64;
    limits.nodes = limits.nodes.saturating_add(extra);
    limits.tick()
}

/// Runs `f` with at most `budget` more nodes (the global limits still apply).
pub(crate) fn with_budget<T>(
    limits: &mut Limits<'_>,
    budget: u64,
    f: impl FnOnce(&mut Limits<'_>) -> T,
) -> T {
    let cap = limits.node_cap;
    limits.node_cap = cap.min(limits.nodes.saturating_add(budget));
    let out = f(limits);
    limits.node_cap = cap;
    limits.stopped = false;
    limits.poll();
    if limits.nodes >= cap {
        limits.stopped = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::{Index, Item, Rng};

    #[test]
    fn a_time_query_returns_exactly_the_buffers_live_in_its_range() {
        // many long-lived buffers (a fifth of them), so that the stabbing tree is exercised
        let mut r = Rng(7);
        let items: Vec<Item> = (0..3000)
            .map(|k| {
                let start = r.next() % 2000;
                let len = if k % 5 == 0 {
                    50 + r.next() % 1500
                } else {
                    r.next() % 4
                };
                Item {
                    size: 1 + r.next() % 9,
                    align: 1,
                    start,
                    end: start + len,
                    fixed: None,
                }
            })
            .collect();
        let index = Index::new(&items);
        assert!(index.long.len() >= 50, "{}", index.long.len());
        let mut out = Vec::new();
        for q in 0..400u64 {
            let a = (q * 37) % 2200;
            let b = a + q % 9 * (1 + q % 50);
            out.clear();
            index.query(&items, a, b, &mut out);
            let mut got = out.clone();
            got.sort_unstable();
            let want: Vec<usize> = (0..items.len())
                .filter(|&i| items[i].start <= b && a <= items[i].end)
                .collect();
            assert_eq!(got, want, "[{a}, {b}]");
        }
    }
}
