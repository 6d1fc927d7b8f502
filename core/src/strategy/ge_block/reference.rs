//! The level-2 implementation as it was before the speed-up (one scan of every later block
//! per parent), kept for tests only: the random tests check that the fast [`super::level2`]
//! gives the same plans, byte for byte.
#![allow(dead_code)]

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::ops::Bound::{Excluded, Unbounded};

use super::block::BlockData;
use super::streams::Deps;
use super::units::{UnitId, Units};

use super::level2::MAX_DEPTH;

/// Sort key of GE `CompareLifeInterval`: largest `AlignSize` first, fewer members, earlier
/// begin; the block id makes it total.
type Key = (Reverse<u64>, usize, u64, usize);

struct Nester<'a> {
    blocks: &'a mut Vec<BlockData>,
    units: &'a Units,
    deps: &'a Deps,
    slack: u64,
    align: u64,
    /// Upper bound of the room left anywhere in each block's subtree.
    room: Vec<u64>,
}

/// Runs level 2 on `blocks` (level-1 output, which it may extend with split-off clones).
/// `slack` is GE's 512 B allowance past the parent's size (see the module docs of
/// [`super`] for why it follows the block alignment); `align` is the block alignment.
/// Returns the number of member splits.
pub(crate) fn reuse_by_lifetime_reference(
    blocks: &mut Vec<BlockData>,
    units: &Units,
    deps: &Deps,
    slack: u64,
    align: u64,
) -> usize {
    let mut groups: BTreeMap<(u32, Option<u64>), BTreeSet<Key>> = BTreeMap::new();
    for (id, b) in blocks.iter().enumerate() {
        if b.reusable {
            groups
                .entry((b.mem, b.gear))
                .or_default()
                .insert(key(b, id, units));
        }
    }
    let room = blocks
        .iter()
        .map(|b| b.size.saturating_add(slack))
        .collect();
    let mut n = Nester {
        blocks,
        units,
        deps,
        slack,
        align,
        room,
    };
    let mut splits = 0;
    for set in groups.values_mut() {
        splits += n.run(set);
    }
    splits
}

fn key(b: &BlockData, id: usize, units: &Units) -> Key {
    (Reverse(b.size), b.units.len(), b.begin(units), id)
}

/// How a candidate may share a block's memory.
enum Fit {
    /// Lifetime-disjoint as a whole.
    Whole,
    /// Only these members are (the others cross the block's members).
    Part(Vec<UnitId>),
}

impl Nester<'_> {
    fn run(&mut self, set: &mut BTreeSet<Key>) -> usize {
        let mut splits = 0;
        let mut pos: Option<Key> = None;
        loop {
            let next = match pos {
                None => set.first().copied(),
                Some(k) => set.range((Excluded(k), Unbounded)).next().copied(),
            };
            let Some(pk) = next else { break };
            pos = Some(pk);
            let p = pk.3;
            if self.blocks.get(p).is_none_or(|b| b.parent.is_some()) {
                continue;
            }
            let mut ck = pk;
            while let Some(next) = set.range((Excluded(ck), Unbounded)).next().copied() {
                ck = next;
                let c = ck.3;
                let Some(cand) = self.blocks.get(c) else {
                    continue;
                };
                if cand.parent.is_some() || !cand.children.is_empty() || !cand.reusable {
                    continue;
                }
                let Some((target, kept)) = self.find(p, c, &cand.units, 1) else {
                    continue;
                };
                if let Some(clone) = self.split(c, kept) {
                    let k = key(&self.blocks[clone], clone, self.units);
                    set.insert(k);
                    splits += 1;
                }
                self.attach(c, target);
                set.remove(&ck);
            }
        }
        splits
    }

    /// Where `cand` (members of block `c`) can go in the subtree of block `q` at nesting
    /// `depth`: the new parent and the members that go (all, or those not crossing).
    fn find(
        &self,
        q: usize,
        c: usize,
        cand: &[UnitId],
        depth: usize,
    ) -> Option<(usize, Option<Vec<UnitId>>)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let qb = self.blocks.get(q)?;
        let cb = self.blocks.get(c)?;
        if !qb.reusable || qb.gear != cb.gear || qb.mem != cb.mem {
            return None;
        }
        let part: Option<Vec<UnitId>> = match self.fit(qb, cb.stream, cand)? {
            Fit::Whole => None,
            Fit::Part(v) => Some(v),
        };
        let kept: &[UnitId] = part.as_deref().unwrap_or(cand);
        let (min, max) = self.size_range(kept);
        for &r in &qb.children {
            if self.room.get(r).is_some_and(|&room| room >= min) {
                if let Some((t, sub)) = self.find(r, c, kept, depth + 1) {
                    return Some((t, sub.or(part)));
                }
            }
        }
        // No slack for a child of one alignment unit (GE: "no slack for a 512 B child").
        let slack = if max > self.align { self.slack } else { 0 };
        let limit = qb.size.checked_add(slack)?;
        let end = qb.cursor.checked_add(max)?;
        (end <= limit).then_some((q, part))
    }

    /// Block test, then member test (same stream only).
    fn fit(&self, qb: &BlockData, stream: u32, cand: &[UnitId]) -> Option<Fit> {
        let list = &self.units.list;
        let cs = list.get(*cand.first()?)?.start;
        let ce = list.get(*cand.last()?)?.end;
        let qs = qb.begin(self.units);
        let qe = qb.end(self.units);
        if qb.stream == stream {
            if cs > qe || qs > ce {
                return Some(Fit::Whole);
            }
            // Member test: keep the candidate's members that cross none of q's members.
            let kept: Vec<UnitId> = cand
                .iter()
                .copied()
                .filter(|&u| {
                    list.get(u)
                        .is_some_and(|m| !crosses(qb, m.start, m.end, self.units))
                })
                .collect();
            return (!kept.is_empty()).then_some(Fit::Part(kept));
        }
        let after = |first: u64, other_stream: u32, other_end: u64| {
            self.deps
                .latest_on(first, other_stream)
                .is_some_and(|l| l > other_end)
        };
        (after(cs, qb.stream, qe) || after(qs, stream, ce)).then_some(Fit::Whole)
    }

    fn size_range(&self, kept: &[UnitId]) -> (u64, u64) {
        let mut min = u64::MAX;
        let mut max = 0;
        for s in kept
            .iter()
            .filter_map(|&u| self.units.list.get(u))
            .map(|u| u.size)
        {
            min = min.min(s);
            max = max.max(s);
        }
        (min, max)
    }

    /// Moves the members of `c` not in `kept` into a new clone block; returns its id.
    fn split(&mut self, c: usize, kept: Option<Vec<UnitId>>) -> Option<usize> {
        let kept = kept?;
        let block = self.blocks.get_mut(c)?;
        // `kept` is a subsequence of the block's members.
        let mut rest: Vec<UnitId> = Vec::new();
        let mut ki = 0;
        for &u in &block.units {
            if kept.get(ki) == Some(&u) {
                ki += 1;
            } else {
                rest.push(u);
            }
        }
        if rest.is_empty() {
            return None;
        }
        let size_of = |v: &[UnitId]| {
            v.iter()
                .filter_map(|&u| self.units.list.get(u))
                .map(|u| u.size)
                .max()
                .unwrap_or(0)
        };
        block.size = size_of(&kept);
        block.units = kept;
        let mut clone = block.clone();
        clone.size = size_of(&rest);
        clone.units = rest;
        clone.parent = None;
        clone.children.clear();
        clone.cursor = 0;
        let id = self.blocks.len();
        self.room.push(clone.size.saturating_add(self.slack));
        if let Some(r) = self.room.get_mut(c) {
            *r = block_size_room(self.blocks.get(c), self.slack);
        }
        self.blocks.push(clone);
        Some(id)
    }

    /// Makes `c` the last child of `target` (GE `AddChildBlock`, cursor += `AlignSize`).
    fn attach(&mut self, c: usize, target: usize) {
        let size = self.blocks.get(c).map_or(0, |b| b.size);
        if let Some(b) = self.blocks.get_mut(c) {
            b.parent = Some(target);
        }
        if let Some(t) = self.blocks.get_mut(target) {
            t.children.push(c);
            t.cursor = t.cursor.saturating_add(size);
        }
        let room = size.saturating_add(self.slack);
        let mut a = Some(target);
        while let Some(x) = a {
            if let Some(r) = self.room.get_mut(x) {
                *r = (*r).max(room);
            }
            a = self.blocks.get(x).and_then(|b| b.parent);
        }
    }
}

fn block_size_room(b: Option<&BlockData>, slack: u64) -> u64 {
    b.map_or(0, |b| b.size.saturating_add(slack))
}

/// Whether `[start, end]` crosses a member of `b` (touching counts, GE `CrossLifeTime`).
/// `b`'s members are sorted and disjoint, so a binary search finds the only candidate.
fn crosses(b: &BlockData, start: u64, end: u64, units: &Units) -> bool {
    let list = &units.list;
    let i = b
        .units
        .partition_point(|&u| list.get(u).is_some_and(|m| m.end < start));
    b.units
        .get(i)
        .and_then(|&u| list.get(u))
        .is_some_and(|m| m.start <= end)
}

/// `ge-binary-block` with the reference level 2.
pub(crate) fn binary_block_reference(
    problem: &crate::problem::Problem,
    options: &crate::plan::PlanOptions,
) -> crate::error::Result<crate::plan::Plan> {
    super::run_with(
        problem,
        options,
        super::Variant::Binary,
        &super::units::Units::new(problem, options)?,
        reuse_by_lifetime_reference,
    )
}

/// `ge-block` with the reference level 2.
pub(crate) fn hybrid_reference(
    problem: &crate::problem::Problem,
    options: &crate::plan::PlanOptions,
) -> crate::error::Result<crate::plan::Plan> {
    Ok(super::keep_smaller(
        binary_block_reference(problem, options)?,
        super::max_block(problem, options)?,
    ))
}
