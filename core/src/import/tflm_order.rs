//! A lowered TFLite model as TFLM's planner sees it: buffers in TFLM's `AddBuffer` order and
//! the file's offline offsets as pins.
//!
//! TFLM (`micro_allocator.cc` `CreatePlan`) adds one buffer per planned tensor in global tensor
//! order (every tensor of every subgraph, subgraph by subgraph), then the scratch buffers. Its
//! `GreedyMemoryPlanner` breaks size ties by that order, so `tflm-greedy` reproduces TFLM only
//! on buffers in that order; the generic lowering orders them by producer instead. A tensor
//! whose `OfflineMemoryAllocation` offset is not -1 is placed there by TFLM before any other
//! (`AddBuffer` with an offline offset): here it is pinned ([`crate::Buffer::fixed_offset`]),
//! which every strategy honours and [`crate::validate`] checks.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::graph::Lowered;
use crate::import::tflite::TfliteInfo;
use crate::problem::BufferId;

/// Reorders `lowered`'s buffers into TFLM's order (by tensor index; buffers that are no
/// tensor keep their order, after the tensors) and pins every tensor the file's offline plan
/// places, unless two of those share a byte while both are live: no plan can honour that, so
/// none is pinned and a warning names them. Returns warnings: that one, and offline offsets
/// given to tensors that are not planned.
pub fn to_tflm(lowered: &mut Lowered, info: &TfliteInfo) -> Vec<String> {
    let n = lowered.problem.buffers.len();
    let mut order: Vec<usize> = (0..n).collect();
    // stable: buffers without a tensor (None sorts first, so key them last) keep their order
    order.sort_by_key(|&i| lowered.tensor_of[i].map_or(usize::MAX, |t| t.index()));
    if order.iter().enumerate().any(|(k, &i)| k != i) {
        let mut new_of = alloc::vec![0usize; n];
        for (k, &i) in order.iter().enumerate() {
            new_of[i] = k;
        }
        let mut old: Vec<Option<crate::Buffer>> = core::mem::take(&mut lowered.problem.buffers)
            .into_iter()
            .map(Some)
            .collect();
        lowered.problem.buffers = order
            .iter()
            .map(|&i| old[i].take().unwrap_or_default())
            .collect();
        lowered.tensor_of = order.iter().map(|&i| lowered.tensor_of[i]).collect();
        for op in &mut lowered.problem.ops {
            for b in &mut op.inputs {
                *b = BufferId::new(new_of[b.index()]);
            }
        }
    }
    let warnings = Vec::new();
    let Some(plan) = &info.offline_plan else {
        return warnings;
    };
    let mut warnings = warnings;
    // (buffer, offset) of every planned tensor the file places
    let pins: Vec<(usize, u64)> = lowered
        .tensor_of
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let off = plan.offsets.get((*t)?.index())?;
            Some((i, u64::try_from(*off).ok()?))
        })
        .collect();
    let mut pinned = alloc::vec![false; plan.offsets.len()];
    for &(i, _) in &pins {
        if let Some(t) = lowered.tensor_of[i] {
            pinned[t.index()] = true;
        }
    }
    if let Some((a, b)) = overlapping(&lowered.problem.buffers, &pins) {
        let bufs = &lowered.problem.buffers;
        warnings.push(format!(
            "the file's OfflineMemoryAllocation puts '{}' and '{}' on overlapping bytes while both are live (Vela aliases an NPU op's tensors so); TFLM follows it unchecked, memplan plans without the file's offsets",
            bufs[a].name, bufs[b].name
        ));
    } else {
        for &(i, off) in &pins {
            lowered.problem.buffers[i].fixed_offset = Some(off);
        }
    }
    let unplanned = plan
        .offsets
        .iter()
        .zip(&pinned)
        .filter(|&(&o, &p)| o >= 0 && !p)
        .count();
    if unplanned > 0 {
        warnings.push(format!(
            "the file's OfflineMemoryAllocation gives offsets to {unplanned} tensors that are not planned in the arena (weights, variables, unused): ignored"
        ));
    }
    warnings
}

/// The first two pinned buffers (by index) that share a byte while both are live, with TFLM's
/// sizes (rounded up to 16 B).
fn overlapping(bufs: &[crate::Buffer], pins: &[(usize, u64)]) -> Option<(usize, usize)> {
    let end = |i: usize, off: u64| off.saturating_add(bufs[i].size.div_ceil(16).saturating_mul(16));
    for (k, &(a, oa)) in pins.iter().enumerate() {
        for &(b, ob) in &pins[k + 1..] {
            let bytes = oa < end(b, ob) && ob < end(a, oa);
            if bytes && bufs[a].size > 0 && bufs[b].size > 0 && bufs[a].conflicts(&bufs[b]) {
                return Some((a, b));
            }
        }
    }
    None
}
