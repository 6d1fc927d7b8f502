//! Offset packing: every buffer gets an aligned offset so that no two conflicting buffers
//! share a byte. Heuristics from TFLite, TFLite Micro, XLA and Pisarchyk & Lee (2020), memplan's
//! peak stack, and a portfolio of them.
//!
//! Every heuristic here is "sort the buffers, then place each at an offset chosen among the
//! holes left by the already placed buffers it conflicts with". They differ in the order and in
//! the hole they choose ([`Fit`]). The placed buffers live in a conflict index over time
//! (`packing_index`), so a placement costs `O(log n + k log k)` for `k` conflicting placed
//! buffers instead of a scan of all placed buffers.
//!
//! Common rules:
//! - sizes are the planned sizes ([`PlanOptions::planned_size`]: padding, then rounding up to
//!   the buffer's alignment), offsets are multiples of `lcm(options.alignment, buffer.alignment)`;
//!   an aligned offset inside a hole is found even if the hole's start is not aligned;
//! - buffers with a [`crate::Buffer::fixed_offset`] are placed first, where they are pinned;
//!   two pinned buffers that conflict and share a byte make the problem infeasible;
//! - zero-size buffers take no bytes: offset 0 (or their pinned offset), never raising the peak;
//! - buffers of different gears never conflict ([`crate::Buffer::conflicts`]);
//! - the flags and reuse options widen live ranges as [`super::semantics`] says (reuse off,
//!   `no_reuse`, zero-copy: the whole schedule; centralised atomic clean: from step 0).

use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::packing_index::ConflictIndex;
use crate::error::{add, round_up, Error, ErrorKind, Result};
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

/// How a hole is chosen among those a buffer fits in. Holes are the gaps between the placed
/// buffers that conflict with it, ordered by offset; the arena above them is unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The lowest aligned offset that fits (TFLite Micro `GreedyMemoryPlanner`).
    First,
    /// TFLite `SimpleMemoryArena::Allocate`: the hole whose room above the aligned offset is
    /// smallest among those that fit (ties: the lowest); the top of the arena only if no hole
    /// fits. Quirk kept: a candidate is compared by `next - aligned_start` but the best is
    /// remembered by its unaligned size `next - start`.
    Best,
    /// XLA `GlobalDecreasingSizeBestFitHeap::FindChunkCandidate`: the smallest free chunk that
    /// fits (ties: the lowest), where the chunk between the highest conflicting buffer and the
    /// current heap size counts as a finite chunk; if none fits, the heap grows from the
    /// highest conflicting buffer.
    BestChunk,
}

/// Places buffers in `order`; each one at an aligned offset that avoids every placed buffer
/// that conflicts with it, chosen by `fit`. Fixed-offset buffers are placed first, as given.
/// Buffers missing from `order` are placed after it, in index order; repeated ones once.
///
/// # Errors
/// [`ErrorKind::Overflow`] if a padded size or an offset exceeds `u64`;
/// [`ErrorKind::Infeasible`] if two conflicting buffers are pinned to overlapping bytes;
/// [`ErrorKind::Invalid`] if a live range starts after it ends.
pub fn place_in_order(
    problem: &Problem,
    options: &PlanOptions,
    order: &[usize],
    fit: Fit,
    name: &str,
) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    place_with_sizes(problem, options, sizes, order, fit, name)
}

fn place_with_sizes(
    problem: &Problem,
    options: &PlanOptions,
    sizes: Vec<u64>,
    order: &[usize],
    fit: Fit,
    name: &str,
) -> Result<Plan> {
    let bufs = &problem.buffers;
    let n = bufs.len();
    let index_ranges = ranges(problem, options);
    let gears: Vec<Option<u64>> = bufs.iter().map(|b| b.gear).collect();
    let mut index = ConflictIndex::new(&index_ranges, &gears)?;
    let mut offsets = alloc::vec![0u64; n];
    let mut done = alloc::vec![false; n];
    let mut heap = 0u64;
    let mut busy: Vec<(u64, u64)> = Vec::new();

    for (i, b) in bufs.iter().enumerate() {
        let Some(off) = b.fixed_offset else { continue };
        offsets[i] = off;
        done[i] = true;
        if sizes[i] == 0 {
            continue;
        }
        let end = add(off, sizes[i], format_args!("end of '{}'", b.name))?;
        busy.clear();
        index.busy(i, &mut busy);
        if busy.iter().any(|&(lo, hi)| lo < end && off < hi) {
            // name the other pinned buffer (error path: a plain scan)
            let other = (0..i)
                .find(|&j| {
                    done[j]
                        && sizes[j] > 0
                        && b.conflicts(&bufs[j])
                        && offsets[j] < end
                        && off < offsets[j].saturating_add(sizes[j])
                })
                .map_or("?", |j| bufs[j].name.as_str());
            return Err(Error::new(
                ErrorKind::Infeasible,
                alloc::format!(
                    "buffers '{other}' and '{}' are pinned to overlapping bytes while both are live",
                    b.name
                ),
            ));
        }
        heap = heap.max(end);
        index.insert(i, off, end);
    }

    let rest = 0..n;
    for i in order.iter().copied().filter(|&i| i < n).chain(rest) {
        if done[i] {
            continue;
        }
        done[i] = true;
        if sizes[i] == 0 {
            continue;
        }
        busy.clear();
        index.busy(i, &mut busy);
        busy.sort_unstable();
        let b = &bufs[i];
        let off = choose_gap(
            &busy,
            sizes[i],
            options.alignment_of(b)?,
            fit,
            heap,
            &b.name,
        )?;
        let end = add(off, sizes[i], format_args!("end of '{}'", b.name))?;
        offsets[i] = off;
        heap = heap.max(end);
        index.insert(i, off, end);
    }
    finish(name, options, offsets, sizes)
}

/// The live ranges the conflict index uses: the buffers' own, widened by the flags and the
/// reuse options as [`super::semantics`] says (here too, for callers of these functions that
/// bypass the registry).
fn ranges(problem: &Problem, options: &PlanOptions) -> Vec<(u64, u64)> {
    super::semantics::normalise(problem, options)
        .buffers
        .iter()
        .map(|b| (b.start, b.end))
        .collect()
}

/// First start and last end over the buffers of nonzero size (`(0, 0)` without any).
fn schedule(problem: &Problem) -> (u64, u64) {
    let live = || problem.buffers.iter().filter(|b| b.size > 0);
    let first = live().map(|b| b.start).min().unwrap_or(0);
    let last = live().map(|b| b.end).max().unwrap_or(0);
    (first, last)
}

/// A plan whose peak ignores zero-size buffers (they take no bytes wherever they sit).
fn finish(name: &str, options: &PlanOptions, offsets: Vec<u64>, sizes: Vec<u64>) -> Result<Plan> {
    let mut plan = Plan::new(name, options.alignment, offsets, sizes)?;
    plan.peak = plan
        .offsets
        .iter()
        .zip(&plan.sizes)
        .filter(|(_, &s)| s > 0)
        .map(|(&o, &s)| o + s) // checked in Plan::new
        .max()
        .unwrap_or(0);
    Ok(plan)
}

/// [`round_up`] with fast paths for alignment 1 and powers of two.
#[inline]
fn align_up(x: u64, align: u64, name: &str) -> Result<u64> {
    if align <= 1 {
        Ok(x)
    } else if align.is_power_of_two() {
        x.checked_add(align - 1)
            .map(|y| y & !(align - 1))
            .ok_or_else(|| Error::overflow(alloc::format!("offset of '{name}'")))
    } else {
        round_up(x, align, format_args!("offset of '{name}'"))
    }
}

/// The offset for a block of `size` bytes aligned to `align`, given the busy intervals
/// `[lo, hi)` sorted by `lo` (they may overlap each other) and the current heap size `heap`
/// (the largest end of any placed buffer, used by [`Fit::BestChunk`]).
fn choose_gap(
    busy: &[(u64, u64)],
    size: u64,
    align: u64,
    fit: Fit,
    heap: u64,
    name: &str,
) -> Result<u64> {
    let fits = |off: u64, next: u64| off.checked_add(size).is_some_and(|e| e <= next);
    match fit {
        Fit::First => {
            let mut cursor = 0u64;
            for &(lo, hi) in busy {
                if lo > cursor {
                    let off = align_up(cursor, align, name)?;
                    if fits(off, lo) {
                        return Ok(off);
                    }
                }
                cursor = cursor.max(hi);
            }
            align_up(cursor, align, name)
        }
        Fit::Best => {
            let mut cursor = 0u64;
            let mut best: Option<(u64, u64)> = None; // (offset, unaligned hole size)
            for &(lo, hi) in busy {
                if lo > cursor {
                    let off = align_up(cursor, align, name)?;
                    if fits(off, lo) && best.is_none_or(|(_, g)| lo - off < g) {
                        best = Some((off, lo - cursor));
                    }
                }
                cursor = cursor.max(hi);
            }
            match best {
                Some((off, _)) => Ok(off),
                None => align_up(cursor, align, name),
            }
        }
        Fit::BestChunk => {
            let mut offset = 0u64; // aligned start of the current free chunk
            let mut best: Option<(u64, u64)> = None; // (offset, chunk size)
            let mut consider = |off: u64, free: u64| {
                if free >= size && best.is_none_or(|(_, f)| free < f) {
                    best = Some((off, free));
                }
            };
            for &(lo, hi) in busy {
                if offset < lo {
                    consider(offset, lo - offset);
                }
                offset = offset.max(align_up(hi, align, name)?);
            }
            if offset < heap {
                consider(offset, heap - offset);
            }
            Ok(best.map_or(offset, |(off, _)| off))
        }
    }
}

/// `greedy-size-best-fit` — TFLite `ArenaPlanner::CalculateAllocations` with
/// `SimpleMemoryArena::Allocate`: buffers live over the whole schedule first (by index), then
/// by planned size descending, ties by first use, then index; each in the hole [`Fit::Best`]
/// picks (the tightest hole that fits, measured TFLite's way; the arena top if none fits).
///
/// # Errors
/// As [`place_in_order`].
pub fn greedy_size_best_fit(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let bufs = &problem.buffers;
    let (first, last) = schedule(problem);
    let whole = |i: usize| bufs[i].start == first && bufs[i].end == last;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_cached_key(|&i| {
        if whole(i) {
            (false, 0, 0, i)
        } else {
            (true, u64::MAX - sizes[i], bufs[i].start, i)
        }
    });
    place_with_sizes(
        problem,
        options,
        sizes,
        &order,
        Fit::Best,
        "greedy-size-best-fit",
    )
}

/// `greedy-size-first-fit` — TFLite Micro `GreedyMemoryPlanner::CalculateOffsetsIfNeeded`:
/// buffers by planned size descending (a stable sort: ties keep index order), each at the
/// lowest offset where it fits between the placed buffers live at the same time
/// ([`Fit::First`]).
///
/// # Errors
/// As [`place_in_order`].
pub fn greedy_size_first_fit(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| Reverse(sizes[i]));
    place_with_sizes(
        problem,
        options,
        sizes,
        &order,
        Fit::First,
        "greedy-size-first-fit",
    )
}

/// `best-fit-spatial` — XLA `GlobalDecreasingSizeBestFitHeap` with the spatial order
/// (`GetSpatialBufferIntervalCompare`): planned size descending, then live-range length
/// (`end - start`) descending, then index; each in XLA's best-fit chunk ([`Fit::BestChunk`]).
///
/// # Errors
/// As [`place_in_order`].
pub fn best_fit_spatial(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let bufs = &problem.buffers;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_cached_key(|&i| {
        (
            Reverse(sizes[i]),
            Reverse(bufs[i].end.saturating_sub(bufs[i].start)),
            i,
        )
    });
    place_with_sizes(
        problem,
        options,
        sizes,
        &order,
        Fit::BestChunk,
        "best-fit-spatial",
    )
}

/// `best-fit-temporal` — XLA `GlobalDecreasingSizeBestFitHeap` with the temporal order
/// (`GetTemporalBufferIntervalCompare`): live-range length (`end - start`) descending, then
/// planned size descending, then index; each in XLA's best-fit chunk ([`Fit::BestChunk`]).
///
/// # Errors
/// As [`place_in_order`].
pub fn best_fit_temporal(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let bufs = &problem.buffers;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_cached_key(|&i| {
        (
            Reverse(bufs[i].end.saturating_sub(bufs[i].start)),
            Reverse(sizes[i]),
            i,
        )
    });
    place_with_sizes(
        problem,
        options,
        sizes,
        &order,
        Fit::BestChunk,
        "best-fit-temporal",
    )
}

/// `greedy-breadth` — the "Greedy by Breadth" order of Pisarchyk & Lee, *Efficient Memory
/// Management for Deep Neural Net Inference* (2020, arXiv:2001.03288), applied to offsets:
/// ops are visited by breadth (the total planned size of the tensors live at the op)
/// descending, ties by step; at each op its not yet placed tensors go largest first (ties by
/// first use, then index), each in the tightest hole that fits — the gap rule of the paper's
/// offset planner (TFLite GPU `GreedyBySizeAssignment`, [`Fit::Best`]).
///
/// Steps between two changes of the live set have the same tensors and breadth, so the
/// order is computed on those time sections, `O(n log n)`.
///
/// # Errors
/// As [`place_in_order`].
pub fn greedy_breadth(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let bufs = &problem.buffers;
    let n = bufs.len();
    // Time sections: boundaries at every start and every end + 1.
    let mut cuts: Vec<u128> = Vec::with_capacity(2 * n);
    for b in bufs {
        cuts.push(u128::from(b.start));
        cuts.push(u128::from(b.end) + 1);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let sec = |t: u128| cuts.partition_point(|&c| c < t);
    let m = cuts.len().saturating_sub(1); // sections [cuts[k], cuts[k+1])
    let span: Vec<(usize, usize)> = bufs
        .iter()
        .map(|b| {
            let s = sec(u128::from(b.start));
            let e = sec(u128::from(b.end) + 1);
            (s, e.max(s + 1)) // half-open section range; start > end still gets one
        })
        .collect();
    let mut breadth: Vec<u128> = alloc::vec![0; m + 2];
    let mut delta: Vec<i128> = alloc::vec![0; m + 2];
    for (i, &(s, e)) in span.iter().enumerate() {
        let sz = i128::from(sizes[i]);
        delta[s.min(m + 1)] += sz;
        delta[e.min(m + 1)] -= sz;
    }
    let mut cur: i128 = 0;
    for k in 0..=m {
        cur += delta[k];
        breadth[k] = u128::try_from(cur).unwrap_or(0);
    }
    // rank[k]: position of section k when sections are sorted by breadth desc, then time
    let mut by_breadth: Vec<usize> = (0..=m).collect();
    by_breadth.sort_unstable_by_key(|&k| (Reverse(breadth[k]), k));
    let mut rank = alloc::vec![0usize; m + 1];
    for (r, &k) in by_breadth.iter().enumerate() {
        rank[k] = r;
    }
    // Each buffer goes with the best-ranked section it is live in: a range-min query.
    let leaves = (m + 1).next_power_of_two();
    let mut tree = alloc::vec![usize::MAX; 2 * leaves];
    tree[leaves..leaves + m + 1].copy_from_slice(&rank);
    for v in (1..leaves).rev() {
        tree[v] = tree[2 * v].min(tree[2 * v + 1]);
    }
    let range_min = |s: usize, e: usize| {
        let (mut l, mut r, mut best) = (s + leaves, e.min(m + 1) + leaves, usize::MAX);
        while l < r {
            if l & 1 == 1 {
                best = best.min(tree[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.min(tree[r]);
            }
            l >>= 1;
            r >>= 1;
        }
        best
    };
    let key: Vec<usize> = span.iter().map(|&(s, e)| range_min(s, e)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_cached_key(|&i| (key[i], Reverse(sizes[i]), bufs[i].start, i));
    place_with_sizes(problem, options, sizes, &order, Fit::Best, "greedy-breadth")
}

/// The orders [`peak_stack`] (and `optimal`'s peak-stack seed) stack the buffers live at the
/// peak step in, bottom-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StackOrder {
    /// Start ascending (ties: end descending, then index): the steps before the peak pack.
    Birth,
    /// End descending (ties: start ascending, then index): the steps after the peak pack.
    Death,
}

impl StackOrder {
    /// Both orders, in tie-break order.
    pub(crate) const BOTH: [StackOrder; 2] = [StackOrder::Birth, StackOrder::Death];

    /// Sorts buffer indices into this order, `range(i)` giving buffer `i`'s first and last
    /// step.
    pub(crate) fn sort(self, stack: &mut [usize], range: impl Fn(usize) -> (u64, u64)) {
        match self {
            StackOrder::Birth => stack.sort_unstable_by_key(|&i| {
                let (s, e) = range(i);
                (s, Reverse(e), i)
            }),
            StackOrder::Death => stack.sort_unstable_by_key(|&i| {
                let (s, e) = range(i);
                (Reverse(e), s, i)
            }),
        }
    }

    /// The order in words, for notes.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            StackOrder::Birth => "by start, earliest at the bottom",
            StackOrder::Death => "by end, latest at the bottom",
        }
    }
}

/// `peak-stack` — memplan's own (issue 29, `docs/benchmarks.md`): the buffers live at the step
/// of most live bytes (the live-set bound's step, on the live ranges the options give) first,
/// in [`StackOrder::Birth`], then every other buffer by planned size descending (a stable sort),
/// each at the lowest offset where it fits ([`Fit::First`]): the peak's buffers stack from
/// offset 0. The same again with the peak's buffers in [`StackOrder::Death`]; the lower plan is
/// kept (ties: birth). The note says which order won.
///
/// Why: a plan at the live-set bound tiles the peak step exactly, so the order of that
/// column decides the rest. Stacked by birth, the buffers born after any earlier step form one
/// band at the top of the column, and that band is where that step's short buffers fit: a
/// training step's forward pass, whose activations pile up until the peak, packs like a stack
/// (IOPDDL S_1 at the bound, every size-ordered heuristic 1.016 x); by death, the same for the
/// steps after the peak (the MindSpore ResNet-50 trace 1.00001 x). Size orders place the small
/// long-lived buffers last, when no column is free over their lifetime.
///
/// # Errors
/// As [`place_in_order`].
pub fn peak_stack(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let widened = super::semantics::normalise(problem, options);
    let peak = crate::bound::bounds_with(&widened, |i| Ok(sizes[i]))?;
    let step = peak.peak_step;
    let range = |i: usize| (widened.buffers[i].start, widened.buffers[i].end);
    let live = |i: usize| {
        let (s, e) = range(i);
        sizes[i] > 0 && s <= step && step <= e
    };
    let n = sizes.len();
    let mut rest: Vec<usize> = (0..n).filter(|&i| !live(i)).collect();
    rest.sort_by_key(|&i| Reverse(sizes[i]));
    let mut best: Option<(Plan, StackOrder)> = None;
    for stack_order in StackOrder::BOTH {
        let mut order: Vec<usize> = (0..n).filter(|&i| live(i)).collect();
        stack_order.sort(&mut order, range);
        order.extend_from_slice(&rest);
        let plan = place_with_sizes(
            problem,
            options,
            sizes.clone(),
            &order,
            Fit::First,
            "peak-stack",
        )?;
        if best.as_ref().is_none_or(|b| plan.peak < b.0.peak) {
            best = Some((plan, stack_order));
        }
    }
    let (mut plan, won) = best.ok_or_else(|| Error::invalid("peak-stack: no order"))?;
    plan.notes.push(alloc::format!(
        "the {} B live at step {step} stacked {} (of both orders, the lower)",
        peak.lower_bound,
        won.describe()
    ));
    Ok(plan)
}

/// A packing heuristic the portfolio runs.
type Heuristic = fn(&Problem, &PlanOptions) -> Result<Plan>;

/// The heuristics [`portfolio`] runs, in tie-break order.
pub const PORTFOLIO: &[(&str, Heuristic)] = &[
    ("greedy-size-best-fit", greedy_size_best_fit),
    ("greedy-size-first-fit", greedy_size_first_fit),
    ("best-fit-spatial", best_fit_spatial),
    ("best-fit-temporal", best_fit_temporal),
    ("greedy-breadth", greedy_breadth),
    ("peak-stack", peak_stack),
];

/// `portfolio` — runs every packing heuristic of [`PORTFOLIO`] and keeps the plan with the
/// smallest peak (ties: the first in that list). The plan is named `portfolio:<winner>`; its
/// `stats` hold each candidate's peak in bytes under the candidate's name. With dynamic-batch
/// gears each candidate is overlaid on its own ([`crate::strategy::overlay::plan_overlaid`]), so whole plans
/// are compared.
///
/// # Errors
/// The first error of a candidate (they fail on the same inputs: overflow, infeasible pins).
pub fn portfolio(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let mut best: Option<Plan> = None;
    let mut stats: Vec<(String, u64)> = Vec::with_capacity(PORTFOLIO.len());
    for &(name, run) in PORTFOLIO {
        let plan = crate::strategy::overlay::plan_overlaid(problem, |p| run(p, options))?;
        stats.push((String::from(name), plan.peak));
        if best.as_ref().is_none_or(|b| plan.peak < b.peak) {
            best = Some(plan);
        }
    }
    let mut plan = match best {
        Some(p) => p,
        None => finish("portfolio", options, Vec::new(), Vec::new())?,
    };
    let winner = core::mem::take(&mut plan.strategy);
    plan.notes.push(alloc::format!(
        "best of {} packing heuristics: {winner}",
        PORTFOLIO.len()
    ));
    plan.strategy = alloc::format!("portfolio:{winner}");
    plan.stats = stats;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_offset_inside_a_hole_is_found() {
        // hole [10, 40): a 16-byte block aligned to 16 fits at 16
        let busy = [(0, 10), (40, 50)];
        for fit in [Fit::First, Fit::Best, Fit::BestChunk] {
            assert_eq!(choose_gap(&busy, 16, 16, fit, 50, "x").unwrap(), 16);
            assert_eq!(choose_gap(&busy, 24, 16, fit, 50, "x").unwrap(), 16);
            // 25 bytes aligned to 16 no longer fit in the hole: goes on top, aligned
            assert_eq!(choose_gap(&busy, 25, 16, fit, 50, "x").unwrap(), 64);
        }
        // alignment 3 (not a power of two): the hole [10, 40) starts at 12
        assert_eq!(choose_gap(&busy, 28, 3, Fit::First, 50, "x").unwrap(), 12);
        assert_eq!(choose_gap(&busy, 29, 3, Fit::First, 50, "x").unwrap(), 51);
    }

    #[test]
    fn best_fit_prefers_the_tightest_hole() {
        let busy = [(0, 10), (30, 40), (45, 60)];
        assert_eq!(choose_gap(&busy, 5, 1, Fit::Best, 60, "x").unwrap(), 40);
        assert_eq!(
            choose_gap(&busy, 5, 1, Fit::BestChunk, 60, "x").unwrap(),
            40
        );
        assert_eq!(choose_gap(&busy, 5, 1, Fit::First, 60, "x").unwrap(), 10);
        // ties go to the lowest hole
        let busy = [(0, 10), (15, 20), (25, 30)];
        assert_eq!(choose_gap(&busy, 5, 1, Fit::Best, 30, "x").unwrap(), 10);
        assert_eq!(
            choose_gap(&busy, 5, 1, Fit::BestChunk, 30, "x").unwrap(),
            10
        );
    }

    #[test]
    fn xla_counts_the_room_below_the_heap_top() {
        // conflicting buffers end at 10; the heap (other buffers) reaches 14; a hole of 8 at
        // [20, 28) is not free here (nothing conflicts above 10): XLA picks [10, 14) for 4
        // bytes, TFLite picks the arena top 10 too (no hole), and for 5 bytes XLA grows from 10
        let busy = [(0, 10)];
        assert_eq!(
            choose_gap(&busy, 4, 1, Fit::BestChunk, 14, "x").unwrap(),
            10
        );
        assert_eq!(
            choose_gap(&busy, 5, 1, Fit::BestChunk, 14, "x").unwrap(),
            10
        );
        // a hole of 6 below and a top chunk of 4: best chunk takes the top for 4 bytes
        let busy = [(0, 10), (16, 20)];
        assert_eq!(
            choose_gap(&busy, 4, 1, Fit::BestChunk, 24, "x").unwrap(),
            20
        );
        assert_eq!(choose_gap(&busy, 4, 1, Fit::Best, 24, "x").unwrap(), 10);
    }

    #[test]
    fn tflite_compares_aligned_room_but_keeps_unaligned_size() {
        // holes [1, 9) (aligned start 4: room 5, remembered as 8) and [12, 18) (room 6 at 12):
        // TFLite takes the second (6 < 8) although its room is larger; XLA takes the first
        let busy = [(0, 1), (9, 12), (18, 20)];
        assert_eq!(choose_gap(&busy, 4, 4, Fit::Best, 20, "x").unwrap(), 12);
        assert_eq!(choose_gap(&busy, 4, 4, Fit::BestChunk, 20, "x").unwrap(), 4);
    }

    #[test]
    fn overflow_is_an_error() {
        let busy = [(0, u64::MAX - 2)];
        let e = choose_gap(&busy, 1, 16, Fit::First, 0, "big").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Overflow);
        assert!(choose_gap(&busy, 1, 16, Fit::BestChunk, 0, "big").is_err());
    }
}
