//! Dynamic-batch gears overlaid in one region (GE `DynamicBatchMemAssigner::
//! ResizeDynamicBatchBlocks`, dynamic_batch_mem_assigner.cc).
//!
//! Only one gear (GE batch label) runs at a time, so the top-level reusable blocks of every
//! gear are laid out from the same base: the region costs the largest gear (the one with the
//! largest sum of block sizes), not the sum. Within a gear the blocks sit back to back.
//!
//! With expandable memory (GE `ge.exec.staticMemoryPolicy`, `IsGeUseExtendSizeMemory`), the
//! largest gear's blocks are cut into virtual blocks: a new one starts whenever the running
//! sum would pass [`MAX_SPLIT_SIZE`]. The other gears' blocks, largest first, are packed into
//! the virtual blocks in turn, moving on when the next block does not fit; a block never
//! straddles a virtual-block boundary. Blocks that find no room stay ordinary top-level blocks
//! (GE leaves them in `memory_blocks_` [I]).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::error::{add, Result};

/// GE `kMaxSplitSizeForDynamicBatch`: 400 MiB.
pub const MAX_SPLIT_SIZE: u64 = 400 << 20;

/// A block offered to the overlay: (block id, gear, size after `Resize()`).
pub(crate) type Entry = (usize, u64, u64);

/// One virtual block of the dynamic-batch region.
#[derive(Debug, Clone, Default)]
pub(crate) struct Virtual {
    /// Size: the sum of the largest gear's blocks in it.
    pub size: u64,
    /// Blocks in it with their offset from its start.
    pub placed: Vec<(usize, u64)>,
}

/// The overlay of one memory type.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overlay {
    /// Virtual blocks, laid out one after another.
    pub virtuals: Vec<Virtual>,
    /// Blocks that found no room (expandable memory only), laid out as ordinary blocks.
    pub leftovers: Vec<usize>,
    /// Sum of block sizes per gear.
    pub gear_totals: BTreeMap<u64, u64>,
    /// The gear whose blocks define the virtual blocks.
    pub max_gear: Option<u64>,
}

/// Overlays `entries` (in layout order). `expandable` cuts the largest gear at
/// [`MAX_SPLIT_SIZE`].
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if a gear's sum exceeds `u64`.
pub(crate) fn overlay(entries: &[Entry], expandable: bool) -> Result<Overlay> {
    let mut out = Overlay::default();
    for &(_, gear, size) in entries {
        let t = out.gear_totals.entry(gear).or_insert(0);
        *t = add(*t, size, "size of a gear")?;
    }
    // The largest gear; ties go to the smallest gear number.
    let Some((&max_gear, _)) = out
        .gear_totals
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
    else {
        return Ok(out);
    };
    out.max_gear = Some(max_gear);
    let limit = if expandable { MAX_SPLIT_SIZE } else { u64::MAX };
    let mut cur = Virtual::default();
    for &(id, gear, size) in entries {
        if gear != max_gear {
            continue;
        }
        let sum = add(cur.size, size, "size of a dynamic-batch block")?;
        if !cur.placed.is_empty() && sum > limit {
            out.virtuals.push(core::mem::take(&mut cur));
            cur.size = size;
        } else {
            cur.size = sum;
        }
        cur.placed.push((id, cur.size - size));
    }
    if !cur.placed.is_empty() {
        out.virtuals.push(cur);
    }
    // Every other gear, largest blocks first, into the virtual blocks in turn.
    for &g in out.gear_totals.keys() {
        if g == max_gear {
            continue;
        }
        let mut mine: Vec<(usize, u64)> = entries
            .iter()
            .filter(|e| e.1 == g)
            .map(|e| (e.0, e.2))
            .collect();
        mine.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let (mut k, mut cursor) = (0usize, 0u64);
        for (id, size) in mine {
            loop {
                let Some(v) = out.virtuals.get_mut(k) else {
                    out.leftovers.push(id);
                    break;
                };
                match cursor.checked_add(size) {
                    Some(end) if end <= v.size => {
                        v.placed.push((id, cursor));
                        cursor = end;
                        break;
                    }
                    _ => {
                        k += 1;
                        cursor = 0;
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    #[test]
    fn gears_cost_the_largest_not_the_sum() {
        // gear 1: 3 + 2 MiB = 5; gear 2: 4 MiB; gear 3: 1 + 1 + 1 = 3
        let e = [
            (0, 1, 3 * M),
            (1, 1, 2 * M),
            (2, 2, 4 * M),
            (3, 3, M),
            (4, 3, M),
            (5, 3, M),
        ];
        let o = overlay(&e, false).unwrap();
        assert_eq!(o.max_gear, Some(1));
        assert_eq!(o.virtuals.len(), 1);
        assert_eq!(o.virtuals[0].size, 5 * M);
        assert!(o.leftovers.is_empty());
        let mut placed = o.virtuals[0].placed.clone();
        placed.sort_unstable();
        assert_eq!(
            placed,
            [(0, 0), (1, 3 * M), (2, 0), (3, 0), (4, M), (5, 2 * M)]
        );
        assert_eq!(
            o.gear_totals.values().copied().collect::<Vec<_>>(),
            [5 * M, 4 * M, 3 * M]
        );
    }
}
