//! Reinsertion search for large inputs: a squeaky-wheel move on the incumbent's offset order.
//!
//! Any valid plan, replayed first-fit in the order of its offsets (lowest first), comes back
//! no higher: each buffer's own offset is still free when its turn comes (what was placed
//! before it sat below it and can only have come down), so first-fit puts it there or lower.
//! A move takes a buffer `t` at the peak and one buffer `j` below it that it is live with,
//! and replays the order with `t` moved just before `j`: `t` is placed first-fit where `j`
//! was, and everything from `j` up flows around it. The move is kept when the peak, or else
//! the bytes above the lower bound summed over all buffers, goes down; it changes the
//! long-lived buffers under the peak together with everything stacked on them, the
//! neighbourhood that windows and bands (which keep the rest fixed) cannot reach.
//!
//! On PanGu-α 2.6B (`testdata/benchmarks/real`, issue 29) every greedy plan puts a 409.6 MB
//! buffer born one step after the peak (and living 13,000 steps) at the bottom of the region
//! the four 327.68 MB attention buffers of the peak leave, so the 20.97 MB buffers born
//! between them find no room under the bound; moving them before it in the order lets the
//! 409.6 MB buffer settle above them.
//!
//! A second neighbourhood turns the plan upside down: the *ceiling pass* replays first-fit in
//! the order of the buffers' tops, highest first (the mirror image of the plan, whose offsets
//! are `peak - top`, replayed in offset order: it comes back no higher, by the same argument),
//! then replays first-fit again in the order of the mirrored plan's offsets read from its
//! top (the mirror of the mirror). What sat high in a hole-ridden stack drops towards the
//! ceiling first and the holes collect at one end, so the second replay closes them from the
//! other side. On PanGu-α 2.6B, after the moves above, one such pass reached the live-set
//! bound (issue 29).
//!
//! Cost: one replay is one first-fit placement of every buffer (`O(n log n)` plus the
//! conflicts), charged `n` search nodes; memory linear in the input.

use alloc::string::String;
use alloc::vec::Vec;

use super::instance::Item;
use super::search::Limits;
use crate::plan::PlanOptions;
use crate::problem::Problem;
use crate::strategy::packing::{place_in_order, Fit};

/// Buffers at the peak tried in one round (tallest top first).
const TALL: usize = 4;
/// Buffers below each of them tried as insertion points (spread over the stack, lowest
/// first).
const SPOTS: usize = 32;

/// What [`improve`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reinserted {
    /// Replays tried, and moves kept.
    pub tried: u64,
    pub kept: u64,
    /// Ceiling passes tried (two replays each), and kept.
    pub flips: u64,
    pub flips_kept: u64,
    /// Peak before and after.
    pub from: u64,
    pub to: u64,
}

impl Reinserted {
    /// One sentence for the plan's notes.
    pub(crate) fn note(&self) -> String {
        alloc::format!(
            "reinsertion: {} replays of the offset order with a buffer at the peak moved before one under it, {} kept; {} ceiling passes (replayed highest top first, then again from the mirrored plan's top), {} kept: {} B to {} B",
            self.tried, self.kept, self.flips, self.flips_kept, self.from, self.to
        )
    }
}

fn top(items: &[Item], off: &[u64], i: usize) -> u64 {
    off[i].saturating_add(items[i].size)
}

/// The ceiling pass: replays first-fit in the order of the tops in `offsets` (highest first),
/// then in the order of the tops of that plan (highest first again: the mirror image of the
/// mirrored plan read in its offset order). Ties by index. Returns the second plan's offsets.
pub(super) fn flip(
    problem: &Problem,
    options: &PlanOptions,
    items: &[Item],
    offsets: &[u64],
    order: &mut Vec<usize>,
) -> crate::error::Result<Vec<u64>> {
    let n = items.len();
    order.clear();
    order.extend(0..n);
    order.sort_unstable_by_key(|&i| (core::cmp::Reverse(top(items, offsets, i)), i));
    let mirrored = place_in_order(problem, options, order, Fit::First, "reinsert")?;
    order.sort_unstable_by_key(|&i| (core::cmp::Reverse(top(items, &mirrored.offsets, i)), i));
    Ok(place_in_order(problem, options, order, Fit::First, "reinsert")?.offsets)
}

/// (peak, bytes above `lb` summed over the buffers): the move's objective, smaller is better.
fn score(items: &[Item], off: &[u64], lb: u64) -> (u64, u128) {
    let mut peak = 0u64;
    let mut over = 0u128;
    for (i, it) in items.iter().enumerate() {
        if it.size == 0 {
            continue;
        }
        let t = top(items, off, i);
        peak = peak.max(t);
        over += u128::from(t.saturating_sub(lb));
    }
    (peak, over)
}

/// Improves `offsets` (a valid plan of `problem`, whose planned sizes and lifetimes are
/// `items`) by reinsertion moves until a round of [`TALL`] x [`SPOTS`] moves keeps none, the
/// peak reaches `lb`, or the limits run out. `offsets` stays a valid plan throughout.
pub(crate) fn improve(
    problem: &Problem,
    options: &PlanOptions,
    items: &[Item],
    offsets: &mut Vec<u64>,
    lb: u64,
    limits: &mut Limits<'_>,
) -> Reinserted {
    let n = items.len();
    let mut best = score(items, offsets, lb);
    let mut out = Reinserted {
        from: best.0,
        to: best.0,
        ..Reinserted::default()
    };
    let cost = n as u64;
    // a replay costs about one greedy heuristic: the first seed's time is the first estimate,
    // so that a large input's first replay does not overrun the share
    let mut slowest = limits.slowest_seed.map_or(0, |(_, ms)| ms);
    let mut keyed: Vec<(u64, u8, usize)> = Vec::with_capacity(n);
    let mut order: Vec<usize> = Vec::with_capacity(n);
    // every round starts with a ceiling pass (a round follows a kept move, or the start)
    'round: while best.0 > lb {
        if !limits.room_for(slowest.saturating_mul(2))
            || limits.nodes.saturating_add(cost.saturating_mul(2)) > limits.node_cap
        {
            break 'round;
        }
        let now = limits.clock.now_ms();
        let Ok(next) = flip(problem, options, items, offsets, &mut order) else {
            break 'round;
        };
        limits.nodes = limits.nodes.saturating_add(cost.saturating_mul(2));
        slowest = slowest.max(limits.clock.now_ms().saturating_sub(now) / 2);
        out.flips += 1;
        let sc = score(items, &next, lb);
        // kept only when the peak goes down: kept for the bytes above the bound alone, it
        // led PanGu's moves away from the path that reaches the bound (1.00379 x LB in
        // 10 s instead of the bound)
        if sc.0 < best.0 {
            best = sc;
            *offsets = next;
            out.flips_kept += 1;
            continue 'round;
        }
        let mut tall: Vec<usize> = (0..n)
            .filter(|&i| items[i].size > 0 && top(items, offsets, i) > lb)
            .collect();
        tall.sort_unstable_by_key(|&i| (core::cmp::Reverse(top(items, offsets, i)), i));
        tall.truncate(TALL);
        for &t in &tall {
            let (s, e) = (items[t].start, items[t].end);
            let mut below: Vec<usize> = (0..n)
                .filter(|&j| {
                    j != t
                        && items[j].size > 0
                        && items[j].fixed.is_none()
                        && items[j].start <= e
                        && s <= items[j].end
                        && offsets[j] < offsets[t]
                })
                .collect();
            below.sort_unstable_by_key(|&j| (offsets[j], j));
            let step = (below.len() / SPOTS).max(1);
            for &j in below.iter().step_by(step) {
                if !limits.room_for(slowest) || limits.nodes.saturating_add(cost) > limits.node_cap
                {
                    break 'round;
                }
                let now = limits.clock.now_ms();
                keyed.clear();
                keyed.extend((0..n).map(|i| (offsets[i], 1u8, i)));
                keyed[t] = (offsets[j], 0, t);
                keyed.sort_unstable();
                order.clear();
                order.extend(keyed.iter().map(|k| k.2));
                let Ok(plan) = place_in_order(problem, options, &order, Fit::First, "reinsert")
                else {
                    break 'round;
                };
                limits.nodes = limits.nodes.saturating_add(cost);
                slowest = slowest.max(limits.clock.now_ms().saturating_sub(now));
                out.tried += 1;
                let sc = score(items, &plan.offsets, lb);
                if sc < best {
                    best = sc;
                    *offsets = plan.offsets;
                    out.kept += 1;
                    continue 'round;
                }
            }
        }
        break; // a whole round kept nothing
    }
    out.to = best.0;
    out
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::super::search::Limits;
    use super::super::tests::items_of;
    use super::{flip, improve};
    use crate::problem::{Buffer, Problem};
    use crate::PlanOptions;

    #[test]
    fn a_buffer_moved_before_the_long_one_lets_it_settle_above() {
        // PanGu's peak in miniature (hand-checked): A1 (3 B, steps 0-1) and A2 (3 B, steps
        // 1-2) fill step 1, the bound 6; s (1 B, steps 2-3) is born when A1 has ended, L
        // (4 B, steps 3-9, long-lived) when A2 has ended. The incumbent puts L at the bottom
        // (0) as greedy-by-size does, so s finds no room under the bound: A1 0, A2 3, s 6,
        // L 0, peak 7. Offset order A1, L, A2, s; moving s before L (the lowest buffer under
        // it that it is live with) replays s, A1, L, A2 first-fit: s 0, A1 0 (not live with
        // s), L 1 (over s), A2 3 (over A1): peak 6, the bound, in one replay.
        let bufs = alloc::vec![
            Buffer::new("A1", 3, 0, 1),
            Buffer::new("A2", 3, 1, 2),
            Buffer::new("s", 1, 2, 3),
            Buffer::new("L", 4, 3, 9),
        ];
        let p = Problem::from_buffers("mini", bufs);
        let items = items_of(&p);
        let mut offsets = alloc::vec![0, 3, 6, 0];
        let mut limits = Limits::nodes_only(u64::MAX);
        let r = improve(
            &p,
            &PlanOptions::exact(),
            &items,
            &mut offsets,
            6,
            &mut limits,
        );
        assert_eq!((r.from, r.to, r.tried, r.kept), (7, 6, 1, 1));
        assert_eq!(offsets, [0, 3, 0, 1]);
        let sizes = p.buffers.iter().map(|b| b.size).collect();
        let plan = crate::plan::Plan::new("t", 1, offsets, sizes).unwrap();
        crate::validate::validate(&p, &plan).unwrap();
        assert_eq!(plan.peak, 6);
    }

    #[test]
    fn the_ceiling_pass_closes_a_hole_the_moves_cannot() {
        // Five buffers (hand-checked): a 2 B steps 5-7, b 3 B 3-3, c 2 B 4-6, d 2 B 1-4,
        // e 1 B 3-5; the bound is 6 (step 3: b, d, e). Greedy by size (ties by index):
        // b 0, a 0, c 2 (over a), d 4 (over b and c), e 6 (over d): peak 7, and replaying
        // it in offset order gives it back. The moves try e (the only buffer above 6) before
        // each of a, b, c, d (offset order): e goes down (to 0, 0, 3, 4) but d or c goes up,
        // peak 7, 7, 8, 7, never fewer bytes above the bound: no move helps. The pass, which
        // `improve` tries first, replays by top, highest first (e 7, d 6, c 4, b 3, a 2):
        // e 0, d 1 (over e), c 3 (over e and d), b 3 (over d; c is not live at step 3), a 1
        // (over e; under c); then by the tops of that (b 6, c 5, a 3, d 3, e 1): b 0, c 0
        // (not live with b), a 2 (over c), d 3 (over b), e 5 (over d): peak 6, the bound.
        let bufs = alloc::vec![
            Buffer::new("a", 2, 5, 7),
            Buffer::new("b", 3, 3, 3),
            Buffer::new("c", 2, 4, 6),
            Buffer::new("d", 2, 1, 4),
            Buffer::new("e", 1, 3, 5),
        ];
        let p = Problem::from_buffers("flip", bufs);
        let items = items_of(&p);
        let start = alloc::vec![0, 0, 2, 4, 6];
        let mut order = Vec::new();
        let once = flip(&p, &PlanOptions::exact(), &items, &start, &mut order).unwrap();
        assert_eq!(once, [2, 0, 0, 3, 5]);
        let mut offsets = start;
        let mut limits = Limits::nodes_only(u64::MAX);
        let r = improve(
            &p,
            &PlanOptions::exact(),
            &items,
            &mut offsets,
            6,
            &mut limits,
        );
        assert_eq!(
            (r.from, r.to, r.tried, r.kept, r.flips, r.flips_kept),
            (7, 6, 0, 0, 1, 1)
        );
        assert_eq!(offsets, [2, 0, 0, 3, 5]);
        let sizes = p.buffers.iter().map(|b| b.size).collect();
        let plan = crate::plan::Plan::new("t", 1, offsets, sizes).unwrap();
        crate::validate::validate(&p, &plan).unwrap();
        assert_eq!(plan.peak, 6);
    }
}
