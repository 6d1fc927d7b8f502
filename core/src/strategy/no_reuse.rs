//! `no-reuse`: every buffer gets its own bytes. Its peak is the no-reuse total (with padding).

use alloc::vec::Vec;

use crate::error::{add, round_up, Result};
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

/// Places buffers one after another in problem order, above every pinned buffer (so that none
/// lands on a pin); buffers of different gears overlay (each gear starts after the ungeared
/// buffers), since only one gear runs.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if the total exceeds `u64`.
pub fn plan(problem: &Problem, options: &PlanOptions) -> Result<Plan> {
    let sizes = super::planned_sizes(problem, options)?;
    let mut offsets = alloc::vec![0u64; sizes.len()];
    // pinned buffers keep their pins; everything else goes above the highest pinned byte
    let mut cursor = 0u64;
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(off) = b.fixed_offset {
            offsets[i] = off;
            if sizes[i] > 0 {
                cursor = cursor.max(add(off, sizes[i], "no-reuse total")?);
            }
        }
    }
    let place = |i: usize, cursor: &mut u64, offsets: &mut Vec<u64>| -> Result<()> {
        let b = &problem.buffers[i];
        if b.fixed_offset.is_some() {
            return Ok(());
        }
        let off = round_up(*cursor, options.alignment_of(b)?, "no-reuse offset")?;
        offsets[i] = off;
        *cursor = (*cursor).max(add(off, sizes[i], "no-reuse total")?);
        Ok(())
    };
    for i in (0..sizes.len()).filter(|&i| problem.buffers[i].gear.is_none()) {
        place(i, &mut cursor, &mut offsets)?;
    }
    let base = cursor;
    for g in problem.gears() {
        let mut c = base;
        for i in (0..sizes.len()).filter(|&i| problem.buffers[i].gear == Some(g)) {
            place(i, &mut c, &mut offsets)?;
        }
    }
    Plan::new("no-reuse", options.alignment, offsets, sizes)
}
