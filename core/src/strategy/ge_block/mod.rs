//! GE block reuse: Huawei CANN Graph Engine's `BlockMemAssigner` and
//! `DynamicBatchMemAssigner`, implemented from the rules in `docs/ge-memory-planning.md`
//! (read from GE's `compiler/graph/build/memory/`), not from GE's code.
//!
//! # Strategies
//! - `ge-binary-block` ([`binary_block`]): GE's default variant. Level 1 with exact size
//!   classes (the size rounded to the block alignment), then level 2 nesting.
//! - `ge-max-block` ([`max_block`]): one size class (GE `max_block_mem_assigner`), so level 1
//!   matches blocks by lifetime only; no level 2 (GE `NeedLevel2Reuse()` is false).
//! - `ge-block` ([`hybrid`]): GE `HybridMemAssigner`: runs both and keeps the smaller arena;
//!   ties go to binary-block, GE's default. Both totals are in the plan's stats
//!   (`binary_block`, `max_block`) and the notes say which won.
//!
//! # Pipeline
//! 1. [`units`]: buffers become allocation units (a continuous-output group is one unit) and
//!    get a role: reused feature map, own block (no-reuse flag, reuse off, constant, an
//!    alignment the block alignment cannot give), continuous input, zero-copy, atomic clean.
//! 2. [`level1`]: the walk over the steps with LIFO free lists and exact size classes.
//! 3. [`level2`] (binary-block only): `ReuseBlocksByLifeTime`; member splits are kept
//!    whether or not the candidate then nests, and [`order`] keeps GE's block list order
//!    (clones right after their block), which is also the layout order.
//! 4. [`dynamic_batch`]: gears overlaid in virtual blocks.
//! 5. [`layout`]: `Resize()`, offsets, the atomic and zero-copy regions, statistics.
//!
//! # Sizes and constants
//! A tensor is padded by [`PlanOptions::padding`] (GE: `ceil32(bytes) + 32`) and rounded to
//! the block alignment [`PlanOptions::alignment`] (GE `MEM_ALIGN_SIZE = 512`). GE's other
//! 512-byte constants follow the block alignment too, so a plan at alignment 32 is GE's rule
//! at a finer grain rather than a mix of grains:
//! - the level-2 **slack** (`child_offset + child.AlignSize() <= parent.AlignSize() + 512`)
//!   exists to absorb rounding to the block alignment (GE's comment: two 802 816 B tensors fit
//!   only after rounding), so it is one block alignment; a child of a single alignment unit
//!   gets none (the doc: "no slack for a 512 B child");
//! - atomic-clean and zero-copy blocks are rounded to the block alignment.
//!
//! `kMaxSplitSizeForDynamicBatch` (400 MiB) is kept as is.
//!
//! # Streams, memory types, gears
//! - A tensor read on another stream stays alive on its producer's stream until the first op
//!   of that stream an edge chain from the reader reaches, or to the end if none does
//!   (`streams::cross_stream_ends`, GE `GetDiffStreamMaxLifeTime`).
//! - Cross-stream level 2 counts edges into earlier ops of the candidate's stream (program
//!   order, GE `GetDependLifeBegin`).
//! - Each memory type is its own arena from offset 0; the plan's peak is HBM's
//!   ([`crate::Plan::arenas`]).
//! - Each gear's continuous-input group is one run and the gears' runs overlay; atomic
//!   regions of gears are appended.
//! - A continuous-input block hosts ordinary children at level 2 as GE's
//!   `AddContinuousLifeReuseBlock` does (side by side in its unaligned size, none produced
//!   before the last atomic-clean op) and never becomes a child itself, so each group stays
//!   adjacent. GE's reverse case too: an ordinary parent offered a continuous block of its
//!   `AlignSize` (equal to the block's unaligned size) before it takes a child moves into
//!   it, whatever the atomic-clean op (`level2::moves_into`).
//!
//! # Where this differs from GE, on purpose
//! - Under [`PlanOptions::zero_copy_reuse`] a zero-copy block hosts children as continuous
//!   blocks do, in its real size (`AddZeroCopyLifeReuseBlock`), but its reverse case is not
//!   modelled, and every op is taken to support address refresh (GE `is_reuse_zero_copy_`).
//! - Stream relabelling (`OptimizeDiffStream`), Merge exclusions, block-type conflicts and
//!   the range-binary variants of `MemoryPriority` are not modelled.
//! - Buffers with a fixed offset (CSV input) stay there and the arena starts above them.
//! - With reuse off, gear blocks are not overlaid: GE marks them not reusable and
//!   `DynamicBatchMemAssigner` only selects reusable blocks, so the arena is the sum of blocks.

use crate::error::Result;
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

mod block;
mod crossers;
pub mod dynamic_batch;
mod layout;
mod level1;
mod level2;
mod order;
#[cfg(test)]
mod reference;
mod skip;
mod streams;
mod units;

#[cfg(test)]
mod tests;

use level1::SizeClass;

/// The two `BlockMemAssigner` variants GE's hybrid runs by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Binary,
    Max,
}

/// A level-2 pass: [`level2::reuse_by_lifetime`], or in tests the reference it replaced.
type Level2 = fn(
    &mut alloc::vec::Vec<block::BlockData>,
    &units::Units,
    &streams::Deps,
    u64,
    u64,
) -> (usize, alloc::vec::Vec<order::Key>);

fn run(problem: &Problem, options: &PlanOptions, variant: Variant) -> Result<Plan> {
    let units = units::Units::new(problem, options)?;
    run_with(problem, options, variant, &units, level2::reuse_by_lifetime)
}

/// One variant on `units` (those of `problem` under `options`).
fn run_with(
    problem: &Problem,
    options: &PlanOptions,
    variant: Variant,
    units: &units::Units,
    level2: Level2,
) -> Result<Plan> {
    let class = match variant {
        Variant::Binary => SizeClass::Aligned,
        Variant::Max => SizeClass::Single,
    };
    let mut blocks = level1::assign(units, class);
    let mut extra = layout::Extra::default();
    if variant == Variant::Binary && options.reuse {
        let deps = streams::Deps::new(problem);
        let align = options.alignment.max(1);
        let (splits, order) = level2(&mut blocks, units, &deps, align, align);
        extra.splits = splits;
        extra.order = Some(order);
    }
    let name = match variant {
        Variant::Binary => "ge-binary-block",
        Variant::Max => "ge-max-block",
    };
    layout::build(problem, options, units, &blocks, name, &extra)
}

/// `ge-binary-block`: GE's default `BlockMemAssigner` (binary_block_mem_assigner.cc with
/// `use_range_ = false`): level-1 reuse needs an equal size rounded to the block alignment
/// (block_mem_assigner.cc `ApplyMemory`), then level-2 `ReuseBlocksByLifeTime`.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if a padded size or an offset exceeds `u64`.
pub fn binary_block(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    run(problem, options, Variant::Binary)
}

/// `ge-max-block`: GE `MaxBlockMemAssigner` (max_block_mem_assigner.h): one size class, so
/// level 1 reuses any free block of the stream, gear and memory type whose last member died;
/// no level 2.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if a padded size or an offset exceeds `u64`.
pub fn max_block(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    run(problem, options, Variant::Max)
}

/// `ge-block`: GE `HybridMemAssigner::Assign` (hybrid_mem_assigner.cc): runs
/// [`binary_block`] and [`max_block`] and keeps the smaller arena (ties: binary-block).
/// Stats `binary_block` and `max_block` give both totals; a note names the winner.
///
/// # Errors
/// As [`binary_block`].
pub fn hybrid(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    // Both variants start from the same units.
    let units = units::Units::new(problem, options)?;
    let level2 = level2::reuse_by_lifetime;
    Ok(keep_smaller(
        run_with(problem, options, Variant::Binary, &units, level2)?,
        run_with(problem, options, Variant::Max, &units, level2)?,
    ))
}

/// The hybrid's choice between the two variants' plans, with its stats and note.
fn keep_smaller(binary: Plan, max: Plan) -> Plan {
    let (b, m) = (binary.peak, max.peak);
    let (mut plan, winner): (Plan, &str) = if m < b {
        (max, "max-block")
    } else {
        (binary, "binary-block")
    };
    plan.strategy = alloc::format!("ge-block:{winner}");
    if let Some(ge) = plan.ge.as_mut() {
        ge.hybrid = Some(crate::plan::HybridTotals {
            binary_block: b,
            max_block: m,
        });
        plan.stats = ge.stats();
    }
    plan.notes.insert(
        0,
        alloc::format!(
            "GE hybrid: binary-block {b} B, max-block {m} B; kept {winner}{}",
            if m == b {
                " (tie: GE's default variant)"
            } else {
                ""
            }
        ),
    );
    plan
}
