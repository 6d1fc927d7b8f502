//! The order of GE's block list (`memory_blocks_`) during and after level 2.
//!
//! `ReuseBlocksByLifeTime` (block_mem_assigner.cc) sorts the list once with
//! `CompareLifeInterval` (largest `AlignSize` first, then fewer members, then earlier begin),
//! then walks it by position. The clones a member split makes are inserted right after the
//! candidate, in the order they were made, and the rest of the list is sorted again only
//! when a clone is smaller than the block that follows them; a narrowed candidate keeps its
//! place. `ResizeMemoryBlocks` lays the top-level blocks out in that final order.
//!
//! A position is a [`Key`]: the size the block was sorted by, then a sequence number with
//! room between neighbours (so a clone can go between two blocks without renumbering), then
//! the block id (which also breaks ties when the room runs out).

use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::ops::Bound::{Excluded, Unbounded};

use super::block::BlockData;
use super::units::Units;

/// A block's place in the list: `(Reverse(AlignSize), sequence, block id)`.
pub(crate) type Key = (Reverse<u64>, u64, usize);

/// Keys of `blocks` in GE's initial sort (`CompareLifeInterval`; ties: block id).
pub(crate) fn initial(blocks: &[BlockData], units: &Units) -> Vec<Key> {
    // The keys computed once each; distinct (the id is in them), so an unstable sort is the
    // same as a stable one.
    let mut keyed: Vec<_> = (0..blocks.len())
        .map(|b| (blocks.get(b).map(|x| sort_key(x, b, units)), b))
        .collect();
    keyed.sort_unstable();
    let ids: Vec<usize> = keyed.into_iter().map(|(_, b)| b).collect();
    let gap = u64::MAX
        / (u64::try_from(ids.len())
            .unwrap_or(u64::MAX)
            .saturating_add(1));
    let mut keys = alloc::vec![(Reverse(0), 0, 0); blocks.len()];
    for (rank, &b) in ids.iter().enumerate() {
        let seq = gap.saturating_mul(u64::try_from(rank).unwrap_or(u64::MAX).saturating_add(1));
        if let (Some(k), Some(x)) = (keys.get_mut(b), blocks.get(b)) {
            *k = (Reverse(sort_size(x)), seq, b);
        }
    }
    keys
}

/// GE `CompareLifeInterval` as a key: size, members, begin, then the id.
fn sort_key(b: &BlockData, id: usize, units: &Units) -> (Reverse<u64>, usize, u64, usize) {
    (Reverse(sort_size(b)), b.units.len(), b.begin(units), id)
}

/// The size GE sorts a block by: `AlignSize()`, or for a continuous block its largest
/// unaligned size.
fn sort_size(b: &BlockData) -> u64 {
    match b.host {
        Some(h) if b.continuous.is_some() => h,
        _ => b.size,
    }
}

/// Keys for `clones` (block ids, already in `blocks`, in the order they were made) split off
/// the candidate at `after` with parent size `parent`: right after it, unless a clone is
/// smaller than the block that follows (GE `need_sort_again`), in which case each clone goes
/// where the sort puts it among the blocks of its size (the blocks already there keep their
/// places: GE re-sorts them too, which only moves earlier clones and narrowed blocks).
pub(crate) fn clone_keys(
    set: &BTreeSet<Key>,
    after: Key,
    parent: u64,
    clones: &[usize],
    blocks: &[BlockData],
    units: &Units,
) -> Vec<Key> {
    let size = |b: usize| blocks.get(b).map_or(0, |x| x.size);
    let next = set.range((Excluded(after), Unbounded)).next().copied();
    let smallest = clones.iter().map(|&c| size(c)).fold(parent, u64::min);
    let resort = next.is_some_and(|n| smallest < n.0 .0);
    if !resort {
        let lo = after.1;
        let hi = match next {
            Some(n) if n.0 == after.0 => n.1,
            _ => u64::MAX,
        };
        let m = u128::try_from(clones.len())
            .unwrap_or(u128::MAX)
            .saturating_add(1);
        return clones
            .iter()
            .zip(1u128..)
            .map(|(&c, i)| {
                let span = u128::from(hi.saturating_sub(lo));
                let seq = lo.saturating_add(u64::try_from(span * i / m).unwrap_or(0));
                (Reverse(size(c)), seq, c)
            })
            .collect();
    }
    clones
        .iter()
        .map(|&c| {
            let s = size(c);
            let Some(cb) = blocks.get(c) else {
                return (Reverse(s), 0, c);
            };
            let mine = sort_key(cb, c, units);
            // Neighbours among the blocks of size `s` by the sort key.
            let (mut lo, mut hi) = (0u64, u64::MAX);
            for k in set.range((Reverse(s), 0, 0)..=(Reverse(s), u64::MAX, usize::MAX)) {
                let theirs = blocks.get(k.2).map(|x| sort_key(x, k.2, units));
                if theirs.is_some_and(|t| t < mine) {
                    lo = k.1;
                } else {
                    hi = k.1;
                    break;
                }
            }
            (Reverse(s), lo + (hi - lo) / 2, c)
        })
        .collect()
}
