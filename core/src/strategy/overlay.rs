//! Gears overlaid at a common base: a problem with dynamic-batch gears (see
//! [`crate::graph::gears`]) is planned gear by gear, the largest first, each gear's region
//! starting at offset 0, so the arena costs the largest gear, not the sum. Used by the registry
//! for packing strategies and by strategies that compare whole plans (portfolio, optimal).

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Result;
use crate::plan::Plan;
use crate::problem::Problem;

/// The sub-problem of one gear: ungeared buffers plus that gear's. Returns it with the
/// original indices of its buffers.
pub fn gear_problem(problem: &Problem, gear: u64) -> (Problem, Vec<usize>) {
    let idx: Vec<usize> = (0..problem.buffers.len())
        .filter(|&i| problem.buffers[i].gear.is_none_or(|g| g == gear))
        .collect();
    let buffers = idx.iter().map(|&i| problem.buffers[i].clone()).collect();
    (
        Problem {
            buffers,
            ..problem.clone()
        },
        idx,
    )
}

/// Plans a problem with gears by overlaying per-gear plans at a common base, as GE overlays
/// gears: the largest gear (largest sum of sizes, GE `GetMaxBatchAllMemorySize`) is planned
/// first with the ungeared buffers; every other gear is then planned with the ungeared buffers
/// pinned where the largest gear put them. Each gear's region starts at offset 0, so the arena
/// costs the largest gear's region, not the sum. Problems with fewer than two gears are planned
/// directly.
///
/// # Errors
/// Errors of `run`; [`crate::ErrorKind::Overflow`].
pub fn plan_overlaid(problem: &Problem, run: impl Fn(&Problem) -> Result<Plan>) -> Result<Plan> {
    let gears = problem.gears();
    if gears.len() < 2 {
        return run(problem);
    }
    let mut by_size = Vec::with_capacity(gears.len());
    for &g in &gears {
        let total = problem
            .buffers
            .iter()
            .filter(|b| b.gear == Some(g))
            .try_fold(0u64, |acc, b| crate::error::add(acc, b.size, "gear total"))?;
        by_size.push((total, g));
    }
    by_size.sort_unstable_by(|a, b| b.cmp(a));
    let n = problem.buffers.len();
    let mut offsets = alloc::vec![0u64; n];
    let mut sizes = alloc::vec![0u64; n];
    let mut strategy = String::new();
    let mut alignment = 1;
    let mut notes = Vec::new();
    let mut pinned: Vec<Option<u64>> = alloc::vec![None; n];
    for (k, &(_, g)) in by_size.iter().enumerate() {
        let (mut sub, idx) = gear_problem(problem, g);
        for (j, &i) in idx.iter().enumerate() {
            if let Some(off) = pinned[i] {
                sub.buffers[j].fixed_offset = Some(off);
            }
        }
        let p = run(&sub)?;
        for (j, &i) in idx.iter().enumerate() {
            offsets[i] = p.offsets[j];
            sizes[i] = p.sizes[j];
            if k == 0 && problem.buffers[i].gear.is_none() {
                pinned[i] = Some(p.offsets[j]);
            }
        }
        notes.push(alloc::format!("gear {g}: peak {} B", p.peak));
        if k == 0 {
            strategy = p.strategy;
            alignment = p.alignment;
        }
    }
    let mut plan = Plan::new(strategy, alignment, offsets, sizes)?;
    plan.notes = notes;
    Ok(plan)
}
