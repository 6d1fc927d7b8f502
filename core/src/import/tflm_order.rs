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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::TensorId;
    use crate::import::tflite::OfflinePlan;
    use crate::problem::{Buffer, OpInfo, Problem};
    use alloc::vec;

    fn lowered() -> Lowered {
        // buffers made for tensors 2, 0 and a workspace; op 0 reads buffers 1 and 0
        let mut problem = Problem::from_buffers(
            "m",
            vec![
                Buffer::new("t2", 16, 0, 1),
                Buffer::new("t0", 32, 0, 0),
                Buffer::new("ws", 16, 1, 1),
            ],
        );
        problem.ops = vec![
            OpInfo {
                inputs: vec![BufferId::new(1), BufferId::new(0)],
                ..OpInfo::default()
            },
            OpInfo::default(),
        ];
        Lowered {
            problem,
            schedule: Vec::new(),
            tensor_of: vec![Some(TensorId::new(2)), Some(TensorId::new(0)), None],
            warnings: Vec::new(),
            unknown: Vec::new(),
            views: None,
            order: Default::default(),
            ..Lowered::default()
        }
    }

    fn info(offsets: Vec<i32>) -> TfliteInfo {
        TfliteInfo {
            offline_plan: Some(OfflinePlan {
                version: 0,
                subgraphs: 1,
                offsets,
            }),
            ..TfliteInfo::default()
        }
    }

    #[test]
    fn buffers_in_tensor_order_and_the_file_s_offsets_pinned() {
        let mut l = lowered();
        let w = to_tflm(&mut l, &info(vec![32, 48, 0]));
        let names: Vec<&str> = l.problem.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["t0", "t2", "ws"]);
        assert_eq!(
            l.tensor_of,
            [Some(TensorId::new(0)), Some(TensorId::new(2)), None]
        );
        // the op still reads t0 and t2
        assert_eq!(
            l.problem.ops[0].inputs,
            [BufferId::new(0), BufferId::new(1)]
        );
        let pins: Vec<Option<u64>> = l.problem.buffers.iter().map(|b| b.fixed_offset).collect();
        assert_eq!(pins, [Some(32), Some(0), None]);
        // tensor 1 (not planned) had an offset: said so
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("1 tensors that are not planned"), "{w:?}");
    }

    #[test]
    fn an_offline_plan_no_plan_can_honour_is_warned_not_pinned() {
        // t0 [0,0] 32 B at 0 and t2 [0,1] 16 B at 16: both live at step 0, bytes 16..32 shared
        let mut l = lowered();
        let w = to_tflm(&mut l, &info(vec![0, -1, 16]));
        assert!(l.problem.buffers.iter().all(|b| b.fixed_offset.is_none()));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("'t0' and 't2' on overlapping bytes"), "{w:?}");
    }
}
