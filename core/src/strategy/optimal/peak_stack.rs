//! The peak-stack seed: the buffers live at the step of most live bytes stacked in order of
//! birth, the rest packed around them.
//!
//! At the step where the live-set bound is reached, every plan at the bound tiles
//! `[0, bound)` with exactly the buffers live there, so their order in that column decides
//! everything. Stacked bottom-up by start (ties: the one that ends later lower), the buffers
//! born after any earlier step `t` lie in one contiguous band at the top of the column, and
//! that band is exactly where the buffers of step `t` that die before the peak fit: a training
//! trace's forward pass, where activations saved for the backward pass pile up until the
//! peak, packs like a stack. The mirror order (end descending, latest at the bottom) does the
//! same for the steps after the peak. Greedy orders never find this: they place by size, and
//! the small long-lived buffers placed last find no column free over their whole lifetime and
//! land on top (IOPDDL S_1: 1.0158 x the bound for the size-ordered heuristics, the boxing
//! rounds and windows 1.0016; stacked by start, the bound itself, `docs/benchmarks.md`).
//!
//! The `peak-stack` packing heuristic ([`crate::strategy::packing::peak_stack`]) is this seed
//! with first fit alone, which the seed this must beat already holds; here the stack is
//! pinned and best fit and breadth pack around it.

use alloc::vec::Vec;

use super::instance::{up, Item};
use super::layered::{pack_around, Around};
use super::search::Limits;
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;
use crate::strategy::packing::StackOrder as Order;

/// The heuristics that pack the rest around the stack: the layered seed's, less first fit,
/// whose plan around the stack is the `peak-stack` heuristic's, already in the seed this
/// has to beat (the same orders and live ranges, the rest by size).
const AROUND: [Around; 2] = [
    crate::strategy::packing::greedy_size_best_fit,
    crate::strategy::packing::greedy_breadth,
];

/// The best plan with a peak below `worse_than` found by stacking the non-empty buffers live
/// at `peak_step` contiguously from offset 0 (each at its alignment) in either [`Order`],
/// pinning them and packing every other buffer around them with [`AROUND`]; with the order
/// that won. `None` when no order beats `worse_than`, on pinned buffers (the stack would have
/// to go around them), on an offset overflow, or when `limits` leave less than the slowest
/// seed heuristic's time (an order is not started then). Cost: a sort of the peak's buffers
/// and up to four greedy runs.
pub(crate) fn seed(
    problem: &Problem,
    options: &PlanOptions,
    items: &[Item],
    peak_step: u64,
    lb: u64,
    worse_than: u64,
    limits: &mut Limits<'_>,
) -> Option<(Plan, Order)> {
    if worse_than <= lb || items.iter().any(|it| it.fixed.is_some()) {
        return None;
    }
    let live: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].size > 0 && items[i].start <= peak_step && peak_step <= items[i].end)
        .collect();
    if live.is_empty() {
        return None;
    }
    // an order's first greedy run starts whatever the clock says: not without the time of
    // the slowest seed heuristic left
    let unit = limits.slowest_seed.map_or(0, |(_, ms)| ms);
    let mut best: Option<(Plan, Order)> = None;
    for order in Order::BOTH {
        if !limits.room_for(unit) {
            break;
        }
        let mut stack = live.clone();
        order.sort(&mut stack, |i| (items[i].start, items[i].end));
        let Some(off) = stacked(items, &stack) else {
            return best;
        };
        let bar = best.as_ref().map_or(worse_than, |b| b.0.peak);
        if let Some(p) = pack_around(problem, options, (&stack, &off), lb, bar, limits, &AROUND) {
            let done = p.peak <= lb;
            best = Some((p, order));
            if done {
                break;
            }
        }
    }
    best
}

/// Offsets of `stack` placed contiguously from 0, each rounded up to its alignment, or
/// `None` on overflow.
fn stacked(items: &[Item], stack: &[usize]) -> Option<Vec<u64>> {
    let mut top = 0u64;
    stack
        .iter()
        .map(|&i| {
            let o = up(top, items[i].align)?;
            top = o.checked_add(items[i].size)?;
            Some(o)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::search::Limits;
    use super::super::tests::{items_of, stack_six, trace_like};
    use super::{seed, Order};

    #[test]
    fn stacked_by_birth_the_long_lived_buffer_keeps_its_place_under_the_bound() {
        // Hand-checked: g (2 B, steps 1-10) is born with the temporary t (3 B, 1-3) and lives
        // until the saved s (3 B, 10-14) is born; the bound, 7 B, is reached at step 12 by s
        // and the workspace w (4 B, 12-12); x and y (1 B at steps 9 and 6) live beside g.
        // By size, w takes 0-4 and s 4-7 (they meet at step 12), t 0-3, and g (live with t
        // and s) finds no 2 B under 7: 7-9, a 9 B peak for first fit and best fit alike.
        // Stacked by birth at step 12, s 0-3 and w 3-7: t 0-3 (before s is born), g 3-5
        // (dead before w is born, above s from step 10), x and y at 0 beside g: 7 B.
        let p = stack_six();
        let b = crate::bound::lower_bound(&p).unwrap();
        assert_eq!((b.lower_bound, b.peak_step), (7, 12));
        let o = crate::PlanOptions::exact();
        assert_eq!(
            crate::strategy::packing::greedy_size_first_fit(&p, &o)
                .unwrap()
                .peak,
            9
        );
        assert_eq!(
            crate::strategy::packing::greedy_size_best_fit(&p, &o)
                .unwrap()
                .peak,
            9
        );
        let items = items_of(&p);
        let (plan, order) = seed(&p, &o, &items, 12, 7, 9, &mut Limits::nodes_only(u64::MAX))
            .expect("a plan below 9 B");
        crate::validate::validate(&p, &plan).unwrap();
        assert_eq!(order, Order::Birth);
        assert_eq!(plan.peak, 7);
        assert_eq!(&plan.offsets[..4], &[0, 3, 3, 0]);
        // nothing to beat at the bound itself
        assert!(seed(&p, &o, &items, 12, 7, 7, &mut Limits::nodes_only(u64::MAX)).is_none());
    }

    #[test]
    fn stacked_plans_validate_stack_the_peak_from_zero_and_never_beat_the_bound() {
        // trace-like problems with 1, 16 and 64 B alignments: whatever the order, the plan is
        // valid, the peak step's buffers lie contiguously from 0 (each at its alignment) in
        // that order, and no peak is under the live-set bound
        let o = crate::PlanOptions::exact();
        for seed_no in 1..=6 {
            let p = trace_like(1500, seed_no);
            let items = items_of(&p);
            let b = crate::bound::lower_bound(&p).unwrap();
            let got = seed(
                &p,
                &o,
                &items,
                b.peak_step,
                b.lower_bound,
                u64::MAX,
                &mut Limits::nodes_only(u64::MAX),
            );
            let (plan, order) = got.expect("any plan beats u64::MAX");
            crate::validate::validate(&p, &plan).unwrap();
            assert!(plan.peak >= b.lower_bound, "seed {seed_no}");
            let mut live: alloc::vec::Vec<usize> = (0..items.len())
                .filter(|&i| {
                    items[i].size > 0
                        && items[i].start <= b.peak_step
                        && b.peak_step <= items[i].end
                })
                .collect();
            let mut want_order = live.clone();
            match order {
                Order::Birth => want_order.sort_unstable_by_key(|&i| {
                    (items[i].start, core::cmp::Reverse(items[i].end), i)
                }),
                Order::Death => want_order.sort_unstable_by_key(|&i| {
                    (core::cmp::Reverse(items[i].end), items[i].start, i)
                }),
            }
            live.sort_unstable_by_key(|&i| plan.offsets[i]);
            assert_eq!(live, want_order, "seed {seed_no}, {order:?}");
            let mut top = 0u64;
            for &i in &live {
                let want = top.div_ceil(items[i].align) * items[i].align;
                assert_eq!(plan.offsets[i], want, "seed {seed_no}, {order:?}");
                top = want + items[i].size;
            }
        }
    }
}
