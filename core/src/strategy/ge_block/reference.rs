//! Level 2 as GE's rules read, plainly: one `AddLifeReuseBlock` walk per (parent, candidate)
//! pair over the whole subtree, nothing skipped. Kept for tests only: the random tests check
//! that the fast [`super::level2`], which skips walks that cannot change anything, gives the
//! same plans, byte for byte.
#![allow(dead_code)]

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::ops::Bound::{Excluded, Unbounded};

use super::block::BlockData;
use super::order::{self, Key};
use super::streams::Deps;
use super::units::{UnitId, Units};

use super::level2::MAX_DEPTH;

struct Nester<'a> {
    blocks: &'a mut Vec<BlockData>,
    units: &'a Units,
    deps: &'a Deps,
    slack: u64,
    align: u64,
    /// Each block's place in the list ([`order`]).
    keys: Vec<Key>,
}

/// Runs level 2 on `blocks` (level-1 output, which it may extend with split-off clones).
/// `slack` is GE's 512 B allowance past the parent's size (see the module docs of
/// [`super`] for why it follows the block alignment); `align` is the block alignment.
/// Returns the number of member splits and every block's place in the final list.
pub(crate) fn reuse_by_lifetime_reference(
    blocks: &mut Vec<BlockData>,
    units: &Units,
    deps: &Deps,
    slack: u64,
    align: u64,
) -> (usize, Vec<Key>) {
    let keys = order::initial(blocks, units);
    let mut groups: BTreeMap<(u32, Option<u64>), BTreeSet<Key>> = BTreeMap::new();
    for (id, b) in blocks.iter().enumerate() {
        if b.reusable || b.host.is_some() {
            if let Some(&k) = keys.get(id) {
                groups.entry((b.mem, b.gear)).or_default().insert(k);
            }
        }
    }
    let mut n = Nester {
        blocks,
        units,
        deps,
        slack,
        align,
        keys,
    };
    let mut splits = 0;
    for set in groups.values_mut() {
        splits += n.run(set);
    }
    (splits, n.keys)
}

/// How a candidate may share a block's memory.
enum Fit {
    /// Lifetime-disjoint as a whole.
    Whole,
    /// Only these members are (the others cross the block's members).
    Part(Vec<UnitId>),
}

/// The candidate during one `AddLifeReuseBlock` walk: its members now, and the members each
/// split moved out (one clone each), in order.
struct Walk {
    members: Vec<UnitId>,
    removed: Vec<Vec<UnitId>>,
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
            let p = pk.2;
            if self.blocks.get(p).is_none_or(|b| b.parent.is_some()) {
                continue;
            }
            if self.blocks.get(p).is_some_and(|b| b.host.is_some()) {
                for c in super::level2::hosted(self.blocks, self.units, self.deps, set, pk) {
                    self.attach(c, p);
                    if let Some(&k) = self.keys.get(c) {
                        set.remove(&k);
                    }
                }
                continue;
            }
            let mut ck = pk;
            while let Some(next) = set.range((Excluded(ck), Unbounded)).next().copied() {
                ck = next;
                let c = ck.2;
                let Some(cand) = self.blocks.get(c) else {
                    continue;
                };
                // GE's reverse case: p, still without children, becomes the child of a
                // continuous block offered to it and takes nothing more.
                if cand.host.is_some() {
                    if super::level2::moves_into(self.blocks, self.units, self.deps, p, c) {
                        self.attach(p, c);
                        set.remove(&pk);
                        break;
                    }
                    continue;
                }
                if cand.parent.is_some() || !cand.children.is_empty() || !cand.reusable {
                    continue;
                }
                let mut walk = Walk {
                    members: cand.units.clone(),
                    removed: Vec::new(),
                };
                let target = self.find(p, c, &mut walk, 1);
                // GE keeps the splits whether or not the candidate found a place.
                let clones = self.split(c, walk);
                if !clones.is_empty() {
                    splits += clones.len();
                    let psize = self.blocks.get(p).map_or(0, |b| b.size);
                    for k in order::clone_keys(set, ck, psize, &clones, self.blocks, self.units) {
                        set.insert(k);
                        if let Some(x) = self.keys.get_mut(k.2) {
                            *x = k;
                        }
                    }
                }
                if let Some(target) = target {
                    self.attach(c, target);
                    set.remove(&ck);
                }
            }
        }
        splits
    }

    /// GE `AddLifeReuseBlock` of the candidate `c` (its members now in `walk`) on block `q`
    /// at nesting `depth`: the block test, else the member test, which moves the crossing
    /// members out for good; then `q`'s children in order; then `q` itself if the candidate
    /// fits at its cursor. Returns the new parent.
    fn find(&self, q: usize, c: usize, walk: &mut Walk, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let qb = self.blocks.get(q)?;
        let cb = self.blocks.get(c)?;
        if !qb.reusable || qb.gear != cb.gear || qb.mem != cb.mem {
            return None;
        }
        if let Fit::Part(kept) = self.fit(qb, cb.stream, &walk.members)? {
            // `kept` is a subsequence of the members.
            let mut ki = 0;
            let mut removed = Vec::new();
            for &u in &walk.members {
                if kept.get(ki) == Some(&u) {
                    ki += 1;
                } else {
                    removed.push(u);
                }
            }
            walk.removed.push(removed);
            walk.members = kept;
        }
        for &r in &qb.children {
            if let Some(t) = self.find(r, c, walk, depth + 1) {
                return Some(t);
            }
        }
        let (_, max) = self.size_range(&walk.members);
        // No slack for a child of one alignment unit (GE: "no slack for a 512 B child").
        let slack = if max > self.align { self.slack } else { 0 };
        let limit = qb.size.checked_add(slack)?;
        let end = qb.cursor.checked_add(max)?;
        (end <= limit).then_some(q)
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
            if kept.len() == cand.len() {
                return Some(Fit::Whole);
            }
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

    /// Gives `c` the members left in `walk` and each removed set to a new clone block; returns
    /// the clones' ids in order.
    fn split(&mut self, c: usize, walk: Walk) -> Vec<usize> {
        let size_of = |v: &[UnitId]| {
            v.iter()
                .filter_map(|&u| self.units.list.get(u))
                .map(|u| u.size)
                .max()
                .unwrap_or(0)
        };
        if walk.removed.is_empty() {
            return Vec::new();
        }
        let Some(block) = self.blocks.get_mut(c) else {
            return Vec::new();
        };
        block.size = size_of(&walk.members);
        block.units = walk.members;
        let template = block.clone();
        let mut ids = Vec::new();
        for rest in walk.removed {
            let mut clone = template.clone();
            clone.size = size_of(&rest);
            clone.units = rest;
            clone.parent = None;
            clone.children.clear();
            clone.cursor = 0;
            ids.push(self.blocks.len());
            self.keys.push((Reverse(clone.size), 0, self.blocks.len()));
            self.blocks.push(clone);
        }
        ids
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
    }
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
