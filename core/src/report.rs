//! Reports over plans, above the strategies: the overlay of dynamic-batch gears (per gear
//! region, lower bound, alone, and the side-by-side cost).

use alloc::vec::Vec;

use crate::error::Result;
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;
use crate::strategy::overlay::gear_problem;

pub mod advise;
pub mod analysis;
pub mod atomic_clean;
pub mod graph_io;
pub mod hybrid;
#[cfg(feature = "serde")]
pub mod plan_file;
pub mod single_op;
pub mod tflm_arena;
#[cfg(feature = "tflite")]
pub mod tflm_export;
pub mod training;

/// The dynamic-batch region's virtual blocks (GE `ResizeDynamicBatchBlocks`): the sizes of
/// the blocks tagged `dynamic-batch`, in plan order, grouped where one starts at the previous
/// one's end (one group per memory type: a type's blocks are adjacent). Without
/// `expandable_memory` a group is one block, the largest gear's region; with it, pieces of at
/// most 400 MiB (`kMaxSplitSizeForDynamicBatch`). Empty without gears.
pub fn virtual_block_groups(plan: &Plan) -> Vec<Vec<u64>> {
    group_virtual_blocks(
        plan.blocks
            .iter()
            .map(|b| (b.tag.as_deref(), b.offset, b.size)),
    )
}

/// [`virtual_block_groups`] over blocks given as `(tag, offset, size)` in plan order (bytes),
/// e.g. the blocks of a plan file.
pub fn group_virtual_blocks<'a>(
    blocks: impl IntoIterator<Item = (Option<&'a str>, u64, u64)>,
) -> Vec<Vec<u64>> {
    let mut groups: Vec<Vec<u64>> = Vec::new();
    let mut end = 0u64;
    let tagged = blocks
        .into_iter()
        .filter(|(tag, _, _)| tag.is_some_and(|t| t.starts_with("dynamic-batch")));
    for (_, offset, size) in tagged {
        match groups.last_mut() {
            Some(g) if offset == end => g.push(size),
            _ => groups.push(alloc::vec![size]),
        }
        end = offset.saturating_add(size);
    }
    groups
}

/// One gear's figures in a plan of an expanded problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GearReport {
    /// Batch size.
    pub batch: u64,
    /// Bytes used when this gear runs: the largest `offset + size` over the ungeared buffers
    /// and this gear's.
    pub peak_bytes: u64,
    /// Live-set lower bound of this gear (ungeared buffers plus this gear's), raw sizes.
    pub lower_bound_bytes: u64,
    /// Peak of this gear planned alone with the same strategy.
    pub alone_bytes: u64,
}

/// The overlay of gears in a plan: per-gear figures, the overlaid total, and what laying the
/// gears side by side would cost.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OverlayReport {
    /// Per gear, ascending.
    pub gears: Vec<GearReport>,
    /// The plan's peak: the region the gears share.
    pub overlay_bytes: u64,
    /// Sum over gears of each gear planned alone: the cost without overlaying.
    pub side_by_side_bytes: u64,
    /// `side_by_side_bytes - overlay_bytes` (0 if the overlay is larger).
    pub saving_bytes: u64,
}

/// Reports the overlay of `plan` (a plan of `problem`, made by `strategy` with `options`).
///
/// # Errors
/// Errors of the strategy when planning each gear alone.
pub fn overlay_report(
    problem: &Problem,
    plan: &Plan,
    strategy: &str,
    options: &PlanOptions,
) -> Result<OverlayReport> {
    let mut gears = Vec::new();
    let mut side = 0u64;
    for g in problem.gears() {
        let (sub, idx) = gear_problem(problem, g);
        let peak_bytes = idx
            .iter()
            .filter(|&&i| plan.sizes[i] > 0)
            .map(|&i| plan.offsets[i].saturating_add(plan.sizes[i]))
            .max()
            .unwrap_or(0);
        let lower_bound_bytes = crate::bound::lower_bound(&sub)?.lower_bound;
        let alone_bytes = crate::strategy::plan(&sub, strategy, options)?.peak;
        side = crate::error::add(side, alone_bytes, "side-by-side total")?;
        gears.push(GearReport {
            batch: g,
            peak_bytes,
            lower_bound_bytes,
            alone_bytes,
        });
    }
    Ok(OverlayReport {
        gears,
        overlay_bytes: plan.peak,
        side_by_side_bytes: side,
        saving_bytes: side.saturating_sub(plan.peak),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gears::expand;
    use crate::graph::gears::tests::graph;
    use crate::graph::Bindings;
    use alloc::vec::Vec;

    #[test]
    fn hand_computed_overlay() {
        // Gears 1 and 4. x,y,z are 1 KiB per batch row; s (1 KiB) does not depend on the
        // batch but is per gear too (GE clones every op per gear); the graph input x and
        // output z are one buffer each at the largest gear (4 KiB).
        let l = expand(&graph(), &Bindings::new(), "batch", &[4, 1]).unwrap();
        let p = &l.problem;
        let names: Vec<&str> = p.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            names,
            ["x", "z", "y@Batch_1", "s@Batch_1", "y@Batch_4", "s@Batch_4"]
        );
        assert_eq!(p.buffers[0].size, 4 * 1024);
        assert_eq!(p.buffers[4].size, 4 * p.buffers[2].size);
        // Live sets (exact sizes, KiB): step 0: x,y,s; step 1: y,s,z. Gear 4: 4+4+1 = 9 KiB;
        // gear 1: 4+1+1 = 6 KiB. Graph I/O reused like activations (not zero-copy), so the
        // region is the live set.
        let o = PlanOptions {
            zero_copy_io: false,
            ..PlanOptions::exact()
        };
        let plan = crate::plan(p, "greedy-size-best-fit", &o).unwrap();
        crate::validate::validate_with(p, &plan, &(&o).into()).unwrap();
        assert_eq!(plan.peak, 9 * 1024, "the region costs the largest gear");
        let r = overlay_report(p, &plan, "greedy-size-best-fit", &o).unwrap();
        assert_eq!(r.gears[0].lower_bound_bytes, 6 * 1024);
        assert_eq!(r.gears[1].lower_bound_bytes, 9 * 1024);
        assert_eq!(r.side_by_side_bytes, 15 * 1024);
        assert_eq!(r.saving_bytes, 6 * 1024);
        assert_eq!(crate::lower_bound(p).unwrap().lower_bound, 9 * 1024);
    }
}
