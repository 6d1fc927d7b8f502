//! Level 1: greedy block reuse during the walk over the schedule (GE
//! `BlockMemAssigner::AssignMemoryWithReuse`, `ApplyMemory`, `ReleaseInputNodeOutMemory`).
//!
//! At each step, in this order (GE, block_mem_assigner.cc): the previous step's workspaces and
//! suspended (unconsumed) outputs are released; the step's outputs get blocks, then its
//! workspaces; then the inputs whose last consumer is this step are released. A released block
//! goes to the back of the free list of its (memory type, stream); a request scans that list
//! from the back (most recently freed first, GE "first release, last reuse") and takes the first
//! block of the same size class, gear and memory type whose end precedes the request's start.
//! There is no best fit and no splitting: a request that finds nothing makes a new block.

use alloc::vec::Vec;

use super::block::BlockData;
use super::units::{Role, UnitId, Units};

/// How requests are grouped into size classes for exact matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SizeClass {
    /// GE `binary-block` with `use_range_ = false`: the size rounded to the block alignment
    /// (block_mem_assigner.cc `GetBlockSize`, `ApplyMemory`: `Size() == block_size`).
    Aligned,
    /// GE `max-block`: one range, the largest size, so every request up to it has the same
    /// class and only lifetimes decide (max_block_mem_assigner.cc `GetMemoryRanges`); a larger
    /// request (a continuous-output group, a tensor of a smaller gear) is its own class.
    Single,
}

/// Free-list key: GE keeps `reusable_blocks_[memory_type][stream]`; gear and size class are
/// part of the match test, so keying by them too finds the same block without a scan.
type Key = (u32, u32, Option<u64>, u64);

/// A level-1 event: (step, phase, rank, unit). Phases at one step: 0 outputs, 1 workspaces,
/// 2 release of consumed inputs, 3 release of workspaces and suspended outputs (GE releases
/// those when the next node is processed, before it allocates). Releases of consumed inputs
/// at one step go in the consumer's input order (`rank`: GE `ReleaseInputNodeOutMemory` walks
/// `GetSortAllInDataAnchors`), then by unit.
pub(crate) type Event = (u64, u8, usize, UnitId);

/// The events of the units in the feature-map region, in order (all distinct: a unit's
/// allocation and release differ in phase).
pub(crate) fn events(units: &Units) -> Vec<Event> {
    let mut events: Vec<Event> = Vec::new();
    for (u, unit) in units.list.iter().enumerate() {
        if !in_feature_map(unit.role) {
            continue;
        }
        events.push((unit.start, u8::from(unit.workspace), 0, u));
        if unit.role == Role::Reusable {
            let (phase, rank) = if unit.end == unit.start {
                (3, 0)
            } else {
                (2, unit.release_rank)
            };
            events.push((unit.end, phase, rank, u));
        }
    }
    sort_by_step(&mut events);
    events
}

/// Sorts `events`: by step with a counting sort when the steps are dense (the usual case,
/// linear rather than `n log n`), then each step's few events; a plain sort otherwise.
fn sort_by_step(events: &mut Vec<Event>) {
    let Some(max) = events.iter().map(|e| e.0).max() else {
        return;
    };
    let steps = usize::try_from(max).ok().and_then(|m| m.checked_add(1));
    let Some(steps) = steps.filter(|&s| s <= events.len().saturating_mul(4)) else {
        events.sort_unstable();
        return;
    };
    // `first[t]`: where step t's events begin in the sorted list.
    let mut first = alloc::vec![0usize; steps + 1];
    for e in events.iter() {
        if let Some(c) = usize::try_from(e.0).ok().and_then(|t| first.get_mut(t + 1)) {
            *c += 1;
        }
    }
    for t in 1..first.len() {
        let prev = first.get(t - 1).copied().unwrap_or(0);
        if let Some(c) = first.get_mut(t) {
            *c += prev;
        }
    }
    let mut next = first.clone();
    let mut out: Vec<Event> = alloc::vec![(0, 0, 0, 0); events.len()];
    for &e in events.iter() {
        if let Some(n) = usize::try_from(e.0).ok().and_then(|t| next.get_mut(t)) {
            if let Some(slot) = out.get_mut(*n) {
                *slot = e;
            }
            *n += 1;
        }
    }
    for w in first.windows(2) {
        if let (Some(&a), Some(&b)) = (w.first(), w.get(1)) {
            if b > a + 1 {
                if let Some(run) = out.get_mut(a..b) {
                    run.sort_unstable();
                }
            }
        }
    }
    *events = out;
}

/// Runs level 1 over the units whose role puts them in the feature-map region (reusable,
/// no-reuse, continuous inputs). Returns the blocks in creation order.
pub(crate) fn assign(units: &Units, class: SizeClass) -> Vec<BlockData> {
    let events = units.events.get_or_init(|| events(units));
    let mut blocks: Vec<BlockData> = Vec::new();
    let mut block_of: Vec<usize> = alloc::vec![usize::MAX; units.list.len()];
    // Each reusable unit's free list, numbered once (by a map from its key) rather than looked up at
    // every event.
    let range = single_range(units);
    let key_of = |u: &super::units::Unit| -> Key {
        let c = match class {
            SizeClass::Aligned => u.size,
            // A request above the one range is its own exact class (GE GetBlockSize).
            SizeClass::Single if u.size > range => u.size,
            SizeClass::Single => 0,
        };
        (u.mem, u.stream, u.gear, c)
    };
    let mut list_ids: alloc::collections::BTreeMap<Key, usize> = Default::default();
    let mut list_of: Vec<usize> = alloc::vec![usize::MAX; units.list.len()];
    for (i, u) in units.list.iter().enumerate() {
        if u.role != Role::Reusable {
            continue;
        }
        let fresh = list_ids.len();
        let id = *list_ids.entry(key_of(u)).or_insert(fresh);
        if let Some(slot) = list_of.get_mut(i) {
            *slot = id;
        }
    }
    let lists = list_ids.len();
    let mut free: Vec<Vec<usize>> = alloc::vec![Vec::new(); lists];
    for &(_, phase, _, u) in events {
        let Some(unit) = units.list.get(u) else {
            continue;
        };
        if phase >= 2 {
            // Release: the block becomes reusable by later requests of its class.
            if let (Some(&b), Some(list)) = (
                block_of.get(u),
                list_of.get(u).and_then(|&l| free.get_mut(l)),
            ) {
                if b != usize::MAX {
                    list.push(b);
                }
            }
            continue;
        }
        if let Some(list) = list_of.get(u).and_then(|&l| free.get_mut(l)) {
            // Most recently freed first; the block's last member must end before the start.
            let found = list.iter().rposition(|&b| {
                blocks
                    .get(b)
                    .and_then(|blk: &BlockData| blk.units.last())
                    .and_then(|&last| units.list.get(last))
                    .is_some_and(|last| last.end < unit.start)
            });
            if let Some(pos) = found {
                let b = list.remove(pos);
                if let Some(blk) = blocks.get_mut(b) {
                    blk.units.push(u);
                    blk.size = blk.size.max(unit.size);
                    if let Some(slot) = block_of.get_mut(u) {
                        *slot = b;
                    }
                    continue;
                }
            }
        }
        if let Some(slot) = block_of.get_mut(u) {
            *slot = blocks.len();
        }
        blocks.push(BlockData::new(u, unit));
    }
    blocks
}

/// GE max-block's one range (max_block_mem_assigner.cc `GetMemoryRanges`): the largest single
/// tensor among the ungeared ones and those of the largest gear (the gear with the largest sum
/// of sizes, GE `GetMaxBatchAllMemorySize`). A continuous-output group (one unit of several
/// tensors) is not a single tensor and may exceed it.
fn single_range(units: &Units) -> u64 {
    let mut totals: alloc::collections::BTreeMap<u64, u64> = Default::default();
    for u in &units.list {
        if let Some(g) = u.gear {
            let t = totals.entry(g).or_insert(0);
            *t = t.saturating_add(u.size);
        }
    }
    let largest = totals
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(&g, _)| g);
    units
        .list
        .iter()
        .filter(|u| u.buffers.len() == 1 && (u.gear.is_none() || u.gear == largest))
        .map(|u| u.size)
        .max()
        .unwrap_or(0)
}

/// Whether a unit of this role is laid out in the feature-map region as a block.
pub(crate) fn in_feature_map(role: Role) -> bool {
    matches!(
        role,
        Role::Reusable
            | Role::NoReuse(_)
            | Role::ContinuousInput { .. }
            | Role::ZeroCopy { host: Some(_), .. }
    )
}
