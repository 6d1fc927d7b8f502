//! Boxing: a randomized placement order after the boxing idea of Buchsbaum, Karloff, Kenyon,
//! Reingold and Thorup ("OPT versus LOAD in dynamic storage allocation", STOC 2003, the
//! (2 + ε) algorithm), which the research allocator idealloc uses to seed its search.
//! Implemented from the idea, not from either code:
//!
//! 1. Buffers are sorted into height classes: sizes within a factor of two of each other,
//!    with class boundaries shifted by a random factor in `[1, 2)` per round.
//! 2. Per class (tallest first), buffers in start order are packed first-fit into *boxes* of
//!    height `factor` x the class's largest size; a box is open while some buffer in it is
//!    live, so a box covers one busy stretch of time and holds buffers of similar height
//!    whose lifetimes chain together.
//! 3. The boxes, as buffers of their used height over their busy stretch, are placed
//!    first-fit, tallest first.
//! 4. Squeeze: every buffer is placed again first-fit ([`super::packing::Fit::First`]) in the
//!    order of its offset in the boxed layout (lowest first), so the gaps the boxes left are
//!    closed from below.
//!
//! A different random shift or box factor gives a different order; the caller keeps the best.

use alloc::format;
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::packing::{place_in_order, Fit};
use crate::error::Result;
use crate::plan::{Plan, PlanOptions};
use crate::problem::{Buffer, Problem};

/// SplitMix64's output function: a seeded, well-mixed 64-bit value (no dependency).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One open or closed box of a height class: its members with their offsets inside the box.
struct Bx {
    /// Members `(buffer, offset in the box)`.
    members: Vec<(usize, u64)>,
    /// Members still live at the current start step: `(lo, hi, end step)` inside the box.
    active: Vec<(u64, u64, u64)>,
    /// Used height (highest member top), first and last step.
    top: u64,
    start: u64,
    end: u64,
}

/// The lowest offset at which `size` bytes clear every interval of `active` (sorted by
/// `lo`) and stay under `height`, if any.
fn first_fit(active: &[(u64, u64, u64)], size: u64, height: u64) -> Option<u64> {
    let mut x = 0u64;
    for &(lo, hi, _) in active {
        if lo >= x.saturating_add(size) {
            break;
        }
        x = x.max(hi);
    }
    (x.saturating_add(size) <= height).then_some(x)
}

/// The boxing order of buffers with planned `sizes` and lifetimes `spans` (inclusive steps):
/// every non-empty buffer once, lowest offset in the boxed layout first. `seed` draws the
/// shift of the class boundaries; boxes are `factor` (>= 1) times their class's largest size.
///
/// # Errors
/// Overflow of a box layout offset (sizes near `u64::MAX`).
pub(crate) fn order(
    sizes: &[u64],
    spans: &[(u64, u64)],
    seed: u64,
    factor: u64,
) -> Result<Vec<usize>> {
    let shift = 1024 + u128::from(mix(seed) % 1024);
    let class = |s: u64| 127 - (u128::from(s) * shift).leading_zeros();
    let mut jobs: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0).collect();
    // tallest class first; in a class by start, taller first, then a seeded tie-break
    jobs.sort_unstable_by_key(|&i| {
        (
            Reverse(class(sizes[i])),
            spans[i].0,
            Reverse(sizes[i]),
            mix(seed ^ i as u64),
        )
    });
    let mut boxes: Vec<Bx> = Vec::new();
    let mut k = 0;
    while k < jobs.len() {
        let c = class(sizes[jobs[k]]);
        let len = jobs[k..]
            .iter()
            .take_while(|&&i| class(sizes[i]) == c)
            .count();
        let group = &jobs[k..k + len];
        k += len;
        let tallest = group.iter().map(|&i| sizes[i]).max().unwrap_or(1);
        let height = tallest.saturating_mul(factor.max(1));
        let mut open: Vec<Bx> = Vec::new();
        for &i in group {
            let (s, e) = spans[i];
            // members that ended before `s` leave; a box with none left is closed
            let mut b = 0;
            while b < open.len() {
                open[b].active.retain(|a| a.2 >= s);
                if open[b].active.is_empty() {
                    boxes.push(open.swap_remove(b));
                } else {
                    b += 1;
                }
            }
            let spot = open
                .iter()
                .enumerate()
                .find_map(|(b, x)| first_fit(&x.active, sizes[i], height).map(|o| (b, o)));
            let (b, o) = spot.unwrap_or_else(|| {
                open.push(Bx {
                    members: Vec::new(),
                    active: Vec::new(),
                    top: 0,
                    start: s,
                    end: e,
                });
                (open.len() - 1, 0)
            });
            let x = &mut open[b];
            let hi = o.saturating_add(sizes[i]);
            let at = x.active.partition_point(|a| a.0 < o);
            x.active.insert(at, (o, hi, e));
            x.members.push((i, o));
            x.top = x.top.max(hi);
            x.end = x.end.max(e);
        }
        boxes.append(&mut open);
    }
    // the boxes as buffers, placed first-fit tallest first
    let as_buffers: Vec<Buffer> = boxes
        .iter()
        .enumerate()
        .map(|(b, x)| Buffer::new(format!("box{b}"), x.top, x.start, x.end))
        .collect();
    let mut by_height: Vec<usize> = (0..boxes.len()).collect();
    by_height.sort_by_key(|&b| (Reverse(boxes[b].top), boxes[b].start));
    let layer = Problem::from_buffers("boxes", as_buffers);
    let placed = place_in_order(
        &layer,
        &PlanOptions::exact(),
        &by_height,
        Fit::First,
        "boxes",
    )?;
    let mut keyed: Vec<(u64, u64, usize)> = Vec::with_capacity(sizes.len());
    for (b, x) in boxes.iter().enumerate() {
        for &(i, o) in &x.members {
            keyed.push((placed.offsets[b].saturating_add(o), spans[i].0, i));
        }
    }
    keyed.sort_unstable();
    Ok(keyed.into_iter().map(|k| k.2).collect())
}

/// The boxing plan of `problem`: [`order`] (planned sizes, the buffers' own lifetimes),
/// squeezed down by first-fit. Named `boxing`.
///
/// # Errors
/// As [`place_in_order`].
pub(crate) fn plan(
    problem: &Problem,
    options: &PlanOptions,
    seed: u64,
    factor: u64,
) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let spans: Vec<(u64, u64)> = problem.buffers.iter().map(|b| (b.start, b.end)).collect();
    let ord = order(&sizes, &spans, seed, factor)?;
    place_in_order(problem, options, &ord, Fit::First, "boxing")
}

#[cfg(test)]
mod tests {
    use super::{first_fit, order};

    #[test]
    fn first_fit_takes_the_lowest_gap_under_the_box_height() {
        // intervals [0,4) and [6,10): 2 bytes fit at 4, 3 bytes go on top at 10
        let active = [(0, 4, 9), (6, 10, 9)];
        assert_eq!(first_fit(&active, 2, 16), Some(4));
        assert_eq!(first_fit(&active, 3, 16), Some(10));
        // the box is 12 high: 3 bytes at 10 would end at 13
        assert_eq!(first_fit(&active, 3, 12), None);
    }

    #[test]
    fn boxes_chain_similar_heights_and_the_order_follows_the_boxed_layout() {
        // Hand-computed, factor 1, for a seed whose class shift keeps 7 and 8 B in one class
        // and 2 B in another (found below).
        // Buffers: a = 8 B steps 0-1, b = 7 B steps 1-2, c = 8 B steps 3-4, d = 2 B steps 0-4.
        // Class of 7-8 B, box height 8: a opens box 1 at 0; b is live with a and would need
        // offset 8 (8 + 7 > 8): box 2; c starts at 3 when a and b have ended, so boxes 1 and 2
        // close and c opens box 3. Class 2 B: d alone in box 4.
        // Boxes placed tallest first (ties by start): box 1 (8 B, 0-1) at 0, box 3 (8 B, 3-4)
        // at 0, box 2 (7 B, 1-2) at 8 (live with box 1), box 4 (2 B, 0-4) at 15 (live with
        // boxes 1, 2, 3: highest 8 + 7). Order by offset, then start: a (0), c (0, step 3),
        // b (8), d (15).
        let sizes = [8, 7, 8, 2];
        let spans = [(0, 1), (1, 2), (3, 4), (0, 4)];
        let shift_class = |s: u64, seed: u64| {
            127 - (u128::from(s) * (1024 + u128::from(super::mix(seed) % 1024))).leading_zeros()
        };
        let seed = (0..64)
            .find(|&z| {
                shift_class(7, z) == shift_class(8, z) && shift_class(2, z) != shift_class(7, z)
            })
            .expect("a shift that keeps 7 and 8 in one class");
        let got = order(&sizes, &spans, seed, 1).unwrap();
        assert_eq!(got, [0, 2, 1, 3]);
    }

    #[test]
    fn boxing_plans_pass_the_verifier_at_every_round() {
        // 400 buffers, sizes 1-4096 B with alignment 512, lifetimes 1-40 steps: every round's
        // plan must be valid (the verifier shares no code with this module)
        let mut r = 0x1234_u64;
        let mut next = || {
            r = super::mix(r);
            r
        };
        let buffers: alloc::vec::Vec<crate::Buffer> = (0..400)
            .map(|i| {
                let start = next() % 300;
                let len = next() % 40;
                crate::Buffer::new(
                    alloc::format!("t{i}"),
                    1 + next() % 4096,
                    start,
                    start + len,
                )
            })
            .collect();
        let problem = crate::Problem::from_buffers("boxing", buffers);
        let options = crate::PlanOptions::default();
        for round in 1..=6 {
            for factor in [1, 2, 4] {
                let plan = super::plan(&problem, &options, round, factor).unwrap();
                crate::validate(&problem, &plan).unwrap();
                assert_eq!(plan.strategy, "boxing");
            }
        }
    }
}
