//! Why a plan is larger than the lower bound: the arena at one op step, split into what
//! fills it.
//!
//! At the step `t` where the live tensors' raw bytes are largest, that sum is the live-set
//! lower bound `LB` (no plan can be smaller). The plan's arena `[0, peak)` at `t` is split,
//! byte by byte, into: raw bytes of live tensors (together `LB`), their GE padding
//! (`ceil32(B) + 32 − B`), their alignment rounding, slack inside blocks that hold a live
//! tensor (block bytes not covered by a live member), regions reserved for zero-copy and
//! atomic-clean tensors not live at `t` (never reused: GE keeps them apart), and the rest
//! (free, or held by blocks none of whose members is live). For a valid plan the parts add up
//! exactly: `peak − LB = padding + alignment + block_slack + reserved + idle`.

use alloc::vec::Vec;

use crate::error::Result;
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

/// The gap between a plan's peak and the lower bound, split at one step (all in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Gap {
    /// The op step looked at: the first where live raw bytes are largest.
    pub step: u64,
    /// With dynamic-batch gears: the gear looked at (its tensors and the shared ones; the
    /// gears overlay one another, so one gear's live bytes are the bound).
    pub gear: Option<u64>,
    /// The plan's arena size, bytes.
    pub peak: u64,
    /// Raw bytes of the tensors live at `step` (that have arena bytes): the lower bound.
    pub lower_bound: u64,
    /// GE padding of those tensors (`ceil32(B) + 32 − B` each), bytes.
    pub padding: u64,
    /// Alignment rounding of those tensors (planned size − padded size), bytes.
    pub alignment: u64,
    /// Bytes of blocks holding a live tensor that no live member covers (block bytes − member
    /// bytes), bytes.
    pub block_slack: u64,
    /// Bytes reserved for zero-copy and atomic-clean tensors not live at `step`, bytes.
    pub reserved: u64,
    /// The rest of the arena at `step`: free, or held by blocks with no live member, bytes.
    pub idle: u64,
}

impl Gap {
    /// `peak − lower_bound` (0 if the plan is below the bound, which a valid plan never is).
    pub fn total(&self) -> u64 {
        self.peak.saturating_sub(self.lower_bound)
    }

    /// Sum of the parts; equals [`Gap::total`] for a valid plan.
    pub fn parts(&self) -> u64 {
        self.padding
            .saturating_add(self.alignment)
            .saturating_add(self.block_slack)
            .saturating_add(self.reserved)
            .saturating_add(self.idle)
    }
}

/// What covers a byte, highest first: a byte covered by several counts for the first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cover {
    Live = 0,
    Slack = 1,
    Reserved = 2,
}

/// Splits the gap of `plan` (for `problem`, planned under `options`) at the step of largest
/// live raw bytes. Buffers the plan gives no bytes (size 0) are left out; with one arena per
/// memory type ([`Plan::arenas`]) only HBM's, whose size is the peak; with gears, the gear
/// and step of largest live raw bytes (the gears' regions overlay, so tensors of two gears
/// never count together).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] from the padded sizes.
pub fn explain_gap(problem: &Problem, plan: &Plan, options: &PlanOptions) -> Result<Gap> {
    let in_arena = |i: usize| {
        plan.sizes.get(i).copied().unwrap_or(0) > 0
            && (plan.arenas.is_empty() || problem.buffers[i].memory_type == 0)
    };
    let gears = problem.gears();
    let candidates: Vec<Option<u64>> = if gears.is_empty() {
        alloc::vec![None]
    } else {
        gears.into_iter().map(Some).collect()
    };
    let of_gear =
        |i: usize, g: Option<u64>| crate::problem::gears_can_coexist(problem.buffers[i].gear, g);
    // the gear and step of largest live raw bytes, by a sweep over start/end events
    let (mut best, mut step, mut gear) = (0i128, 0u64, candidates[0]);
    for &g in &candidates {
        let mut events: Vec<(u64, i128)> = Vec::new();
        for (i, b) in problem.buffers.iter().enumerate() {
            if in_arena(i) && of_gear(i, g) {
                events.push((b.start, i128::from(b.size)));
                events.push((b.end.saturating_add(1), -i128::from(b.size)));
            }
        }
        events.sort_unstable_by_key(|e| e.0);
        let mut cur = 0i128;
        let mut k = 0;
        while k < events.len() {
            let s = events[k].0;
            while k < events.len() && events[k].0 == s {
                cur += events[k].1;
                k += 1;
            }
            if cur > best {
                (best, step, gear) = (cur, s, g);
            }
        }
    }
    let live = |i: usize| {
        let b = &problem.buffers[i];
        in_arena(i) && of_gear(i, gear) && b.start <= step && step <= b.end
    };
    let unaligned = PlanOptions {
        alignment: 1,
        ..options.clone()
    };
    let mut gap = Gap {
        step,
        gear,
        peak: plan.peak,
        ..Gap::default()
    };
    let mut cover: Vec<(u64, u64, Cover)> = Vec::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        if !in_arena(i) {
            continue;
        }
        let (off, size) = (plan.offsets[i], plan.sizes[i]);
        if live(i) {
            let padded = unaligned.planned_size(b)?.min(size);
            gap.lower_bound += b.size.min(size);
            gap.padding += padded.saturating_sub(b.size);
            gap.alignment += size.saturating_sub(padded.max(b.size));
            cover.push((off, off.saturating_add(size), Cover::Live));
        } else if b.flags.zero_copy || b.flags.atomic_clean {
            cover.push((off, off.saturating_add(size), Cover::Reserved));
        }
    }
    for blk in &plan.blocks {
        if blk
            .members
            .iter()
            .any(|&m| m.index() < problem.buffers.len() && live(m.index()))
        {
            cover.push((
                blk.offset,
                blk.offset.saturating_add(blk.size),
                Cover::Slack,
            ));
        }
    }
    // measure of each cover class over [0, peak), the highest class winning where they overlap
    let mut bounds: Vec<u64> = cover
        .iter()
        .flat_map(|c| [c.0.min(plan.peak), c.1.min(plan.peak)])
        .chain([0, plan.peak])
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut by_start: Vec<(u64, u64, Cover)> = cover;
    by_start.sort_unstable_by_key(|c| c.0);
    // active intervals per class, swept left to right
    let mut active: Vec<(u64, Cover)> = Vec::new();
    let mut next = 0;
    let (mut live_bytes, mut slack, mut reserved) = (0u64, 0u64, 0u64);
    for w in bounds.windows(2) {
        let (a, b) = (w[0], w[1]);
        while next < by_start.len() && by_start[next].0 <= a {
            active.push((by_start[next].1, by_start[next].2));
            next += 1;
        }
        active.retain(|&(end, _)| end > a);
        let len = b - a;
        match active.iter().map(|x| x.1).min() {
            Some(Cover::Live) => live_bytes += len,
            Some(Cover::Slack) => slack += len,
            Some(Cover::Reserved) => reserved += len,
            None => {}
        }
    }
    gap.block_slack = slack;
    gap.reserved = reserved;
    let planned_live = gap.lower_bound + gap.padding + gap.alignment;
    // overlapping live tensors (an invalid plan) make the live bytes smaller than planned:
    // the parts then fall short of the total rather than claim bytes twice
    gap.idle = plan
        .peak
        .saturating_sub(live_bytes.max(planned_live.min(plan.peak)))
        .saturating_sub(slack)
        .saturating_sub(reserved);
    Ok(gap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Block, BlockLevel, Padding};
    use crate::problem::{Buffer, BufferId};
    use alloc::vec;

    fn opts(padding: Padding, alignment: u64) -> PlanOptions {
        PlanOptions {
            padding,
            alignment,
            ..PlanOptions::exact()
        }
    }

    #[test]
    fn a_tight_plan_has_no_gap() {
        // a [0,1] 100 B and b [1,2] 60 B side by side: peak 160 = live raw at step 1
        let p = Problem::from_buffers(
            "t",
            vec![Buffer::new("a", 100, 0, 1), Buffer::new("b", 60, 1, 2)],
        );
        let plan = Plan::new("x", 1, vec![0, 100], vec![100, 60]).unwrap();
        let g = explain_gap(&p, &plan, &opts(Padding::None, 1)).unwrap();
        assert_eq!((g.step, g.lower_bound, g.peak), (1, 160, 160));
        assert_eq!(g.total(), 0);
        assert_eq!(g.parts(), 0);
    }

    #[test]
    fn gears_count_apart_and_other_memory_types_not_at_all() {
        // x (50 B, shared) with a@1 (100 B, gear 1) and a@2 (200 B, gear 2) overlaid at 50;
        // p (300 B) in the P2P arena at its own offset 0. The HBM peak 250 = x + a@2: the
        // bound is gear 2's live bytes (250), not both gears' (350), and p is not in HBM.
        let gear = |name: &str, size: u64, g: u64| Buffer {
            gear: Some(g),
            ..Buffer::new(name, size, 0, 1)
        };
        let p = Problem::from_buffers(
            "t",
            vec![
                Buffer::new("x", 50, 0, 1),
                gear("a@1", 100, 1),
                gear("a@2", 200, 2),
                Buffer {
                    memory_type: 1,
                    ..Buffer::new("p", 300, 0, 1)
                },
            ],
        );
        let mut plan = Plan::new("x", 1, vec![0, 50, 50, 0], vec![50, 100, 200, 300]).unwrap();
        plan.peak = 250;
        plan.arenas = vec![
            crate::plan::Arena {
                memory_type: 0,
                name: "HBM".into(),
                bytes: 250,
            },
            crate::plan::Arena {
                memory_type: 1,
                name: "P2P_DDR".into(),
                bytes: 300,
            },
        ];
        let g = explain_gap(&p, &plan, &opts(Padding::None, 1)).unwrap();
        assert_eq!(
            (g.gear, g.step, g.lower_bound, g.peak),
            (Some(2), 0, 250, 250)
        );
        assert_eq!(g.total(), 0);
        assert_eq!(g.parts(), 0);
    }

    #[test]
    fn padding_alignment_slack_and_idle_add_up_to_the_gap() {
        // Figures by hand. a [0,1] 100 B, b [1,2] 10 B, c [3,3] 700 B; GE padding, align 512.
        // padded: a ceil32(100)+32 = 160, b 32+32 = 64, c 704+32 = 736;
        // planned: a 512, b 512, c 1024.
        // Largest live raw: step 3 (c alone, 700 B) > step 1 (a + b, 110 B): LB = 700.
        // Plan: block 0 [0, 1024) holds a then c; block 1 [1024, 1536) holds b. Peak 1536.
        // At step 3: c live at 0 (1024 B planned: padding 36, alignment 288); block 0 fully
        // covered by c (no slack); block 1 has no live member: 512 B idle.
        // 1536 − 700 = 836 = 36 + 288 + 0 + 0 + 512.
        let p = Problem::from_buffers(
            "t",
            vec![
                Buffer::new("a", 100, 0, 1),
                Buffer::new("b", 10, 1, 2),
                Buffer::new("c", 700, 3, 3),
            ],
        );
        let mut plan = Plan::new("ge", 512, vec![0, 1024, 0], vec![512, 512, 1024]).unwrap();
        plan.blocks = vec![
            Block {
                members: BufferId::list(&[0, 2]),
                size: 1024,
                offset: 0,
                level: BlockLevel::Top,
                parent: None,
                tag: None,
            },
            Block {
                members: BufferId::list(&[1]),
                size: 512,
                offset: 1024,
                level: BlockLevel::Top,
                parent: None,
                tag: None,
            },
        ];
        let g = explain_gap(&p, &plan, &opts(Padding::Ge, 512)).unwrap();
        assert_eq!(g.step, 3);
        assert_eq!(g.peak, 1536);
        assert_eq!(g.lower_bound, 700);
        assert_eq!(g.padding, 36);
        assert_eq!(g.alignment, 288);
        assert_eq!(g.block_slack, 0);
        assert_eq!(g.reserved, 0);
        assert_eq!(g.idle, 512);
        assert_eq!(g.parts(), g.total());
    }

    #[test]
    fn slack_inside_a_block_and_reserved_atomic_regions() {
        // x [0,0] 400 B and y [1,1] 100 B share block [0, 400); z is atomic-clean [0,0] 50 B
        // at 400 (kept apart, never reused). No padding, alignment 1.
        // Largest live raw: step 0 (x + z = 450) vs step 1 (y = 100): step 0, LB 450, peak
        // 450: no gap. Now make y the big one: y 600 B [1,1] in block [0, 600), x 400 B [0,0]
        // in it too: step 1 (600) is the peak step; z's 50 B at 600 are reserved; nothing
        // slack (y covers the block). Peak 650, gap 50 = reserved 50.
        let mut z = Buffer::new("z", 50, 0, 0);
        z.flags.atomic_clean = true;
        let p = Problem::from_buffers(
            "t",
            vec![Buffer::new("x", 400, 0, 0), Buffer::new("y", 600, 1, 1), z],
        );
        let mut plan = Plan::new("ge", 1, vec![0, 0, 600], vec![400, 600, 50]).unwrap();
        plan.blocks = vec![Block {
            members: BufferId::list(&[0, 1]),
            size: 600,
            offset: 0,
            level: BlockLevel::Top,
            parent: None,
            tag: None,
        }];
        let g = explain_gap(&p, &plan, &opts(Padding::None, 1)).unwrap();
        assert_eq!((g.step, g.lower_bound, g.peak), (1, 600, 650));
        assert_eq!((g.reserved, g.block_slack, g.idle), (50, 0, 0));
        assert_eq!(g.parts(), g.total());
        // a block larger than its live member: 1000 B block holding y (600 B) at step 1
        plan.blocks[0].size = 1000;
        plan.offsets[2] = 1000;
        plan.peak = 1050;
        let g = explain_gap(&p, &plan, &opts(Padding::None, 1)).unwrap();
        // 1050 − 600 = 450 = slack 400 (block bytes 1000 − live member 600) + reserved 50
        assert_eq!((g.block_slack, g.reserved, g.idle), (400, 50, 0));
        assert_eq!(g.parts(), g.total());
    }
}
