//! TensorFlow Lite for Microcontrollers' two memory planners, reproduced so that memplan's
//! figure for a `.tflite` model is the head TFLM itself computes, byte for byte.
//!
//! TFLM (`micro_allocator.cc` `CreatePlan`) hands its planner one buffer per tensor it plans,
//! in global tensor order (every tensor of every subgraph, subgraph by subgraph), then one per
//! scratch-buffer request, each with its size rounded up to 16 B and an inclusive lifetime in
//! allocation scopes. The TFLite importer lowers a model to a [`Problem`] in exactly that order,
//! so a buffer's index here is TFLM's buffer id.

use alloc::vec::Vec;
use core::cmp::Reverse;

use super::packing::{place_in_order, Fit};
use crate::error::Result;
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

/// The order in which TFLM's `GreedyMemoryPlanner::CalculateOffsetsIfNeeded` places buffers:
/// offline-planned ones (here: pinned, [`crate::Buffer::fixed_offset`]) first, in id order;
/// then the online ones by planned size descending. Ties go to the **higher** id first: TFLM
/// fills its sort array with online buffers from the tail (`idx_from_tail--`), so they enter
/// `ReverseSortInPlace` (a stable bubble sort) in descending id order.
fn greedy_order(problem: &Problem, sizes: &[u64]) -> Vec<usize> {
    let (mut order, mut online): (Vec<usize>, Vec<usize>) =
        (0..sizes.len()).partition(|&i| problem.buffers[i].fixed_offset.is_some());
    online.sort_unstable_by_key(|&i| (Reverse(sizes[i]), Reverse(i)));
    order.extend(online);
    order
}

/// `tflm-greedy` — TFLM's `GreedyMemoryPlanner` (`memory_planner/greedy_memory_planner.cc`):
/// pinned buffers at their offsets, then each online buffer in [`greedy_order`] at the start of
/// the first gap that fits between the already placed buffers whose lifetimes overlap its own
/// (inclusive, `DoesEntryOverlapInTime`), walked in offset order; above the highest of them if
/// none fits. The head (`GetMaximumMemorySize`) is the largest end, the plan's peak.
///
/// On a TFLM problem (sizes multiples of 16 B, pins 16-aligned) offsets are TFLM's exactly;
/// beyond TFLM, a buffer's alignment moves its candidate offset up to the next aligned byte
/// before the gap is measured, and zero-size buffers take no bytes (TFLM never plans one:
/// `needs_allocating` requires `bytes != 0`).
///
/// # Errors
/// As [`place_in_order`].
pub fn greedy(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let order = greedy_order(problem, &sizes);
    place_in_order(problem, options, &order, Fit::First, "tflm-greedy")
}

/// `tflm-linear` — TFLM's `LinearMemoryPlanner` (`memory_planner/linear_memory_planner.cc`):
/// every buffer at the running sum of the sizes before it, in id order, no reuse; the head is
/// the sum. TFLM's linear planner refuses offline offsets (the base class's `AddBuffer` with an
/// offset returns an error); here pinned buffers keep their pins and the others are stacked
/// above the highest pinned byte, and buffers of different gears overlay, as `no-reuse` does.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if the sum exceeds `u64`.
pub fn linear(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let mut plan = super::no_reuse::plan(problem, options)?;
    plan.strategy = alloc::string::String::from("tflm-linear");
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;
    use alloc::vec;

    fn problem(rows: &[(u64, u64, u64)]) -> Problem {
        let buffers = rows
            .iter()
            .enumerate()
            .map(|(i, &(size, first, last))| Buffer::new(alloc::format!("b{i}"), size, first, last))
            .collect();
        Problem::from_buffers("tflm", buffers)
    }

    #[test]
    fn tflm_greedy_medium() {
        // TFLM greedy_memory_planner_test.cc TestGreedyMedium: offsets 50, 70, 40, 0, 0, head 90.
        // By hand: order 50, 40, 30, 20, 10; 50@0; 40 [3,4] meets nothing @0; 30 [2,3] sits on
        // 40 @40; 20 [1,2] meets 50@0 and 30@40: no gap before 70; 10 [0,1] fits 50..70 @50.
        let p = problem(&[(10, 0, 1), (20, 1, 2), (30, 2, 3), (40, 3, 4), (50, 0, 1)]);
        let plan = greedy(&p, &PlanOptions::exact()).unwrap();
        assert_eq!(plan.offsets, [50, 70, 40, 0, 0]);
        assert_eq!(plan.peak, 90);
        // TestGreedyBasics and TestOverlapCase: heads 20 and 120
        let p = problem(&[(10, 0, 1), (20, 2, 3)]);
        assert_eq!(greedy(&p, &PlanOptions::exact()).unwrap().offsets, [0, 0]);
        let p = problem(&[(100, 0, 1), (50, 2, 3), (20, 1, 2)]);
        assert_eq!(greedy(&p, &PlanOptions::exact()).unwrap().peak, 120);
    }

    #[test]
    fn ties_go_to_the_higher_id() {
        // three 16 B buffers: a [0,1], b [1,2], c [2,3]. TFLM's order is c, b, a: c@0,
        // b meets c @16, a meets b only @0. Index order (a, b, c) would give a@0, b@16, c@0.
        let p = problem(&[(16, 0, 1), (16, 1, 2), (16, 2, 3)]);
        let plan = greedy(&p, &PlanOptions::exact()).unwrap();
        assert_eq!(plan.offsets, [0, 16, 0]);
        // the same three with a 32 B buffer d [1,1] added last: d first @0, then c, b, a:
        // c [2,3] misses d (live at 1 only) @0; b [1,2] meets d@0 and c@0: above both @32;
        // a [0,1] meets d@0 and b@32: the gap 32..32 is empty, @48.
        let p = problem(&[(16, 0, 1), (16, 1, 2), (16, 2, 3), (32, 1, 1)]);
        let plan = greedy(&p, &PlanOptions::exact()).unwrap();
        assert_eq!(plan.offsets, [48, 32, 0, 0]);
        assert_eq!(plan.peak, 64);
    }

    #[test]
    fn offline_offsets_come_first_and_leave_their_gaps() {
        // TFLM places offline-planned buffers first, at their offsets, then fills the gaps:
        // pinned p@32 (16 B, [0,2]); a 32 B [0,1] fits below it @0; b 16 B [1,2] meets a@0
        // and p@32: the gap 32..32 is empty, so above p @48.
        let mut p = problem(&[(32, 0, 1), (16, 1, 2), (16, 0, 2)]);
        p.buffers[2].fixed_offset = Some(32);
        let plan = greedy(&p, &PlanOptions::exact()).unwrap();
        assert_eq!(plan.offsets, [0, 48, 32]);
        assert_eq!(plan.peak, 64);
    }

    #[test]
    fn linear_is_the_running_sum() {
        let p = problem(&[(16, 0, 0), (32, 1, 1), (48, 2, 2)]);
        let plan = linear(&p, &PlanOptions::exact()).unwrap();
        assert_eq!(plan.offsets, [0, 16, 48]);
        assert_eq!(plan.peak, 96);
        assert_eq!(plan.strategy, "tflm-linear");
        let empty = problem(&[]);
        assert_eq!(greedy(&empty, &PlanOptions::exact()).unwrap().peak, 0);
        assert_eq!(
            greedy(&problem(&[(16, 0, 0)]), &PlanOptions::exact())
                .unwrap()
                .offsets,
            vec![0]
        );
    }
}
