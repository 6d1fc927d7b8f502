//! Offset packing: every buffer gets an aligned offset so that no two conflicting buffers
//! share a byte. Heuristics from TFLite, TFLite Micro, XLA and Pisarchyk & Lee (2020).

use alloc::vec::Vec;

use crate::error::{add, round_up, Result};
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

/// How a gap is chosen among those a buffer fits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The lowest offset that fits (TFLite Micro).
    First,
    /// The smallest gap that fits; the top of the arena counts as an infinite gap (TFLite).
    Best,
}

/// Places buffers in `order`; each one at an aligned offset that avoids every placed buffer
/// that conflicts with it, chosen by `fit`. Fixed-offset buffers are placed first, as given.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if an offset exceeds `u64`.
pub fn place_in_order(
    problem: &Problem,
    options: &PlanOptions,
    order: &[usize],
    fit: Fit,
    name: &str,
) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let n = sizes.len();
    let mut offsets = alloc::vec![0u64; n];
    let mut placed: Vec<usize> = Vec::with_capacity(n);
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(off) = b.fixed_offset {
            offsets[i] = off;
            placed.push(i);
        }
    }
    let mut busy: Vec<(u64, u64)> = Vec::new();
    for &i in order {
        let b = &problem.buffers[i];
        if b.fixed_offset.is_some() || sizes[i] == 0 {
            continue;
        }
        busy.clear();
        busy.extend(
            placed
                .iter()
                .filter(|&&j| sizes[j] > 0 && problem.buffers[j].conflicts(b))
                .map(|&j| (offsets[j], offsets[j] + sizes[j])),
        );
        busy.sort_unstable();
        offsets[i] = choose_gap(&busy, sizes[i], options.alignment_of(b), fit, &b.name)?;
        placed.push(i);
    }
    Plan::new(name, options.alignment, offsets, sizes)
}

/// The offset for a block of `size` bytes aligned to `align`, given the busy intervals
/// `[lo, hi)` sorted by `lo` (they may overlap each other).
fn choose_gap(busy: &[(u64, u64)], size: u64, align: u64, fit: Fit, name: &str) -> Result<u64> {
    let what = || alloc::format!("offset of '{name}'");
    let mut cursor = 0u64; // end of the busy region seen so far
    let mut best: Option<(u64, u64)> = None; // (gap size, offset)
    for &(lo, hi) in busy {
        if lo > cursor {
            let off = round_up(cursor, align, what())?;
            if add(off, size, what())? <= lo {
                let gap = lo - cursor;
                match fit {
                    Fit::First => return Ok(off),
                    Fit::Best => {
                        if best.is_none_or(|(g, _)| gap < g) {
                            best = Some((gap, off));
                        }
                    }
                }
            }
        }
        cursor = cursor.max(hi);
    }
    match best {
        Some((_, off)) => Ok(off),
        None => round_up(cursor, align, what()),
    }
}

/// `greedy-size-best-fit` (TFLite `ArenaPlanner` / `SimpleMemoryArena`): buffers by size
/// descending, ties by first use, then index; each in the smallest gap that fits.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if an offset exceeds `u64`.
pub fn greedy_size_best_fit(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| (core::cmp::Reverse(sizes[i]), problem.buffers[i].start, i));
    place_in_order(problem, options, &order, Fit::Best, "greedy-size-best-fit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_offset_inside_a_hole_is_found() {
        // hole [10, 40): a 16-byte block aligned to 16 fits at 16
        let busy = [(0, 10), (40, 50)];
        assert_eq!(choose_gap(&busy, 16, 16, Fit::First, "x").unwrap(), 16);
        assert_eq!(choose_gap(&busy, 24, 16, Fit::First, "x").unwrap(), 16);
        // 25 bytes aligned to 16 no longer fit in the hole: goes on top
        assert_eq!(choose_gap(&busy, 25, 16, Fit::First, "x").unwrap(), 64);
    }

    #[test]
    fn best_fit_prefers_the_tightest_hole() {
        let busy = [(0, 10), (30, 40), (45, 60)];
        assert_eq!(choose_gap(&busy, 5, 1, Fit::Best, "x").unwrap(), 40);
        assert_eq!(choose_gap(&busy, 5, 1, Fit::First, "x").unwrap(), 10);
    }
}
