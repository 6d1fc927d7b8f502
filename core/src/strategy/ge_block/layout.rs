//! Offsets from blocks, and the order of the regions (GE `ResizeMemoryBlocks`,
//! `AddBlockMemOffset`, `SetChildHeadOffset`, memory_assigner.cc, graph_mem_assigner.cc,
//! atomic_memory_assigner.cc).
//!
//! The arena, from offset 0: buffers with a fixed offset (they are kept where they are, and
//! GE's arena starts above them); the feature-map region per memory type (top-level blocks one
//! after another with no padding between them, then the dynamic-batch virtual blocks); the
//! continuous-input blocks, each group adjacent in input order (GE `AssignContinuousBlocks`
//! moves them to the end of the block list); the atomic-clean region (each output after the
//! previous one, rounded to the block alignment, the gears one after another: GE
//! `ReAssignAtomicMemory` appends them); the zero-copy region (graph outputs first, then
//! graph inputs by size ascending, kept adjacent for one merged host-to-device copy; GE
//! `AssignZeroCopyMemory`), with the children a zero-copy block hosts under the I/O reuse
//! options inside it.
//!
//! A block's size is GE `Resize()`: the larger of its largest member and the sum of its
//! children's sizes. Children sit at the parent's head plus the sizes of earlier siblings.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::block::BlockData;
use super::dynamic_batch;
use super::units::{Role, UnitId, Units};
use crate::error::{add, round_up, Result};
use crate::plan::{Block, BlockLevel, Plan, PlanOptions};
use crate::problem::{BufferId, Problem};

/// What the layout adds to the plan besides offsets.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extra {
    /// Level-2 member splits, for the notes.
    pub splits: usize,
    /// Each block's place in GE's block list after level 2 ([`super::order`]):
    /// `ReuseBlocksByLifeTime` sorts `memory_blocks_` in place (largest `AlignSize` first,
    /// then fewer members, then earlier begin) and inserts split-off clones after their
    /// block, and `ResizeMemoryBlocks` lays the top-level blocks out in that order. `None`
    /// (no level 2): creation order.
    pub order: Option<Vec<super::order::Key>>,
}

struct Arena<'a> {
    /// For names in errors.
    problem: &'a Problem,
    units: &'a Units,
    blocks: &'a [BlockData],
    resized: Vec<u64>,
    offsets: Vec<u64>,
    out_blocks: Vec<Block>,
    /// Plan block index of every internal block.
    index: Vec<usize>,
}

/// Lays out `blocks` and the regions outside them; returns the finished plan.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if an offset exceeds `u64`.
pub(crate) fn build(
    problem: &Problem,
    options: &PlanOptions,
    units: &Units,
    blocks: &[BlockData],
    name: &str,
    extra: &Extra,
) -> Result<Plan> {
    let align = options.alignment.max(1);
    let n = problem.buffers.len();
    let mut a = Arena {
        problem,
        units,
        blocks,
        resized: alloc::vec![0; blocks.len()],
        offsets: alloc::vec![0; n],
        out_blocks: Vec::new(),
        index: alloc::vec![usize::MAX; blocks.len()],
    };
    for b in 0..blocks.len() {
        if blocks.get(b).is_some_and(|x| x.parent.is_none()) {
            a.resize(b, align, 0)?;
        }
    }
    // Plan blocks for every internal block first, so parents can be named by index.
    for (b, blk) in blocks.iter().enumerate() {
        if let Some(slot) = a.index.get_mut(b) {
            *slot = a.out_blocks.len();
        }
        let mut tag = blk.tag.map(String::from);
        if let Some(g) = blk.gear {
            tag = Some(match tag {
                Some(t) => alloc::format!("{t}, gear {g}"),
                None => alloc::format!("gear {g}"),
            });
        }
        a.out_blocks.push(Block {
            members: blk
                .units
                .iter()
                .filter_map(|&u| units.list.get(u))
                .flat_map(|u| u.buffers.iter().map(|&i| BufferId::new(i)))
                .collect(),
            size: a.resized.get(b).copied().unwrap_or(0),
            offset: 0,
            level: if blk.parent.is_some() {
                BlockLevel::Child
            } else {
                BlockLevel::Top
            },
            parent: None,
            tag,
        });
    }
    for (b, blk) in blocks.iter().enumerate() {
        if let (Some(p), Some(&i)) = (blk.parent, a.index.get(b)) {
            let pi = a.index.get(p).copied();
            if let Some(ob) = a.out_blocks.get_mut(i) {
                ob.parent = pi;
            }
        }
    }

    let mut ge = crate::plan::GeStats::default();
    let mut notes: Vec<String> = Vec::new();

    // Fixed offsets first; the arena starts above them.
    // Per memory type, the end of its fixed-offset buffers.
    let mut base_of: BTreeMap<u32, u64> = BTreeMap::new();
    for &i in &units.pinned {
        if let (Some(b), Some(&s)) = (problem.buffers.get(i), units.sizes.get(i)) {
            let off = b.fixed_offset.unwrap_or(0);
            if let Some(o) = a.offsets.get_mut(i) {
                *o = off;
            }
            let base = base_of.entry(b.memory_type).or_insert(0);
            *base = (*base).max(add(off, s, "end of a fixed-offset buffer")?);
            a.out_blocks.push(Block {
                members: alloc::vec![BufferId::new(i)],
                size: s,
                offset: off,
                level: BlockLevel::Top,
                parent: None,
                tag: Some("fixed-offset".into()),
            });
        }
    }
    // Each memory type is its own offset space from 0 (GE AddBlockMemOffset); HBM's starts
    // above the fixed-offset buffers. The headline peak is HBM's.
    let mut mems: Vec<u32> = units.list.iter().map(|u| u.mem).collect();
    mems.extend(base_of.keys().copied());
    mems.push(0);
    mems.sort_unstable();
    mems.dedup();
    let mut gear_totals: BTreeMap<u64, u64> = BTreeMap::new();
    let mut arenas: Vec<crate::plan::Arena> = Vec::new();
    let mut hbm_end = base_of.get(&0).copied().unwrap_or(0);
    for mem in mems {
        let base = base_of.get(&mem).copied().unwrap_or(0);
        let mut cursor = round_up(base, align, "arena base")?;
        let fm_start = cursor;
        cursor = a.feature_maps(
            mem,
            cursor,
            options,
            extra.order.as_deref(),
            &mut gear_totals,
            &mut notes,
        )?;
        cursor = a.continuous_inputs(mem, cursor)?;
        let feature_map = cursor - fm_start;
        let atomic_start = cursor;
        cursor = a.atomic(mem, cursor, align)?;
        let atomic = cursor - atomic_start;
        let zc_start = cursor;
        cursor = a.zero_copy(mem, cursor, align)?;
        // GE's statistics count the ungeared tensors and the largest gear's only
        // (GetMaxBatchAllMemorySize: the gear with the largest sum of sizes).
        let mut gear_sum: BTreeMap<u64, u64> = BTreeMap::new();
        for u in units.list.iter().filter(|u| u.mem == mem) {
            if let Some(g) = u.gear {
                let t = gear_sum.entry(g).or_insert(0);
                *t = t.saturating_add(u.size);
            }
        }
        let max_gear = gear_sum
            .iter()
            .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
            .map(|(&g, _)| g);
        let in_type: Vec<&super::units::Unit> = units
            .list
            .iter()
            .filter(|u| u.mem == mem && (u.gear.is_none() || u.gear == max_gear))
            .collect();
        if mem != 0 && in_type.is_empty() && base == 0 {
            continue;
        }
        // GE MemoryStat: total_size = sum with no reuse, no_reuse = what never takes part,
        // theory_min = live peak of the reusable part plus the no-reuse part.
        let pinned_here = || {
            units
                .pinned
                .iter()
                .filter(move |&&i| problem.buffers.get(i).is_some_and(|b| b.memory_type == mem))
                .filter_map(|&i| units.sizes.get(i).copied())
        };
        let total = in_type
            .iter()
            .map(|u| u.size)
            .chain(pinned_here())
            .try_fold(0u64, |s, x| add(s, x, "total size"))?;
        let no_reuse = in_type
            .iter()
            .filter(|u| u.role != Role::Reusable)
            .map(|u| u.size)
            .chain(pinned_here())
            .try_fold(0u64, |s, x| add(s, x, "no-reuse size"))?;
        let known = units.live_min.borrow().get(&mem).copied();
        let live_min = match known {
            Some(v) => v,
            None => {
                let mut reusable = alloc::vec![false; n];
                for u in in_type.iter().filter(|u| u.role == Role::Reusable) {
                    for &i in &u.buffers {
                        if let Some(r) = reusable.get_mut(i) {
                            *r = true;
                        }
                    }
                }
                let live = crate::bound::bounds_with(problem, |i| {
                    Ok(if reusable.get(i).copied().unwrap_or(false) {
                        units.sizes.get(i).copied().unwrap_or(0)
                    } else {
                        0
                    })
                })?;
                units.live_min.borrow_mut().insert(mem, live.lower_bound);
                live.lower_bound
            }
        };
        ge.memory_types.push(crate::plan::GeMemoryStats {
            memory_type: mem,
            memoffset: cursor,
            feature_map,
            atomic,
            zero_copy: cursor - zc_start,
            total_size: total,
            no_reuse,
            theory_min: add(live_min, no_reuse, "theory_min")?,
        });
        if mem == 0 {
            hbm_end = cursor;
        }
        arenas.push(crate::plan::Arena {
            memory_type: mem,
            name: crate::plan::memory_type_name(mem).into_owned(),
            bytes: cursor,
        });
    }
    let mut streams: Vec<u32> = problem.buffers.iter().map(|b| b.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    ge.streams = streams.len() as u64;
    ge.blocks = blocks.iter().filter(|b| b.parent.is_none()).count() as u64;
    ge.gear_totals = gear_totals.into_iter().collect();
    if extra.splits > 0 {
        notes.push(alloc::format!(
            "level 2 split {} block(s) whose members crossed a parent's",
            extra.splits
        ));
    }
    notes.extend(units.notes.iter().cloned());

    let sizes = units.sizes.clone();
    let mut offsets = a.offsets;
    place_zero_size_members(problem, &sizes, &mut offsets)?;
    let mut plan = Plan::new(name, align, offsets, sizes)?;
    // The headline peak is HBM's: the end of HBM's buffers and of its regions.
    plan.peak = problem
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.memory_type == 0)
        .map(|(i, _)| plan.offsets[i].saturating_add(plan.sizes[i]))
        .max()
        .unwrap_or(0)
        .max(hbm_end);
    if arenas.len() > 1 {
        plan.arenas = arenas;
    }
    plan.blocks = a.out_blocks;
    plan.stats = ge.stats();
    plan.ge = Some(ge);
    plan.notes = notes;
    Ok(plan)
}

/// Zero-size members of a continuous group get no block (GE `zero_memory_list_`), but an
/// offset: right after the previous member, as GE graph_mem_assigner.cc
/// `AssignContinuousOutputMemory` (and `AssignContinuousInputMemory`) give member `i` the
/// running sum of the earlier members' sizes; leading ones at the first sized member's offset.
/// With gears, in each gear's view of the group (its own members and the ungeared ones).
/// Pinned members stay at their pin.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if a member's end exceeds `u64`.
fn place_zero_size_members(problem: &Problem, sizes: &[u64], offsets: &mut [u64]) -> Result<()> {
    // group -> (gear, index, buffer)
    let mut groups: BTreeMap<u32, Vec<(Option<u64>, u32, usize)>> = BTreeMap::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(c) = b.continuous {
            groups
                .entry(c.group)
                .or_default()
                .push((b.gear, c.index, i));
        }
    }
    for members in groups.values() {
        if members
            .iter()
            .all(|m| sizes.get(m.2).is_some_and(|&s| s > 0))
        {
            continue;
        }
        let mut views: Vec<Option<u64>> = members.iter().map(|m| m.0).collect();
        views.sort_unstable();
        views.dedup();
        if views.len() > 1 {
            views.retain(Option::is_some);
        }
        for view in views {
            let mut seq: Vec<(u32, usize)> = members
                .iter()
                .filter(|m| m.0.is_none() || m.0 == view)
                .map(|m| (m.1, m.2))
                .collect();
            seq.sort_unstable();
            let size = |i: usize| sizes.get(i).copied().unwrap_or(0);
            let Some(first) = seq.iter().map(|m| m.1).find(|&i| size(i) > 0) else {
                continue;
            };
            let mut at = offsets.get(first).copied().unwrap_or(0);
            for &(_, i) in &seq {
                if size(i) > 0 {
                    at = add(offsets[i], size(i), "end of a continuous member")?;
                } else if problem.buffers[i].fixed_offset.is_none() {
                    offsets[i] = at;
                }
            }
        }
    }
    Ok(())
}

impl Arena<'_> {
    /// Feature maps of memory type `mem` from `cursor`: the ordinary top-level blocks one
    /// after another, then the dynamic-batch virtual blocks; returns the new end.
    fn feature_maps(
        &mut self,
        mem: u32,
        mut cursor: u64,
        options: &PlanOptions,
        level2_order: Option<&[super::order::Key]>,
        gear_totals: &mut BTreeMap<u64, u64>,
        notes: &mut Vec<String>,
    ) -> Result<u64> {
        let blocks = self.blocks;
        let tops: Vec<usize> = (0..blocks.len())
            .filter(|&b| {
                blocks.get(b).is_some_and(|x| {
                    x.mem == mem && x.parent.is_none() && x.continuous.is_none() && !x.zero_copy
                })
            })
            .collect();
        let (geared, mut plain): (Vec<usize>, Vec<usize>) = tops.into_iter().partition(|&b| {
            blocks
                .get(b)
                .is_some_and(|x| x.reusable && x.gear.is_some())
        });
        if let Some(keys) = level2_order {
            // Keys read once each (they are distinct: the block is in them).
            let mut keyed: Vec<_> = plain.iter().map(|&b| (keys.get(b).copied(), b)).collect();
            keyed.sort_unstable();
            plain = keyed.into_iter().map(|(_, b)| b).collect();
        }
        for b in plain {
            cursor = self.place_top(b, cursor)?;
        }
        let entries: Vec<dynamic_batch::Entry> = geared
            .iter()
            .filter_map(|&b| {
                let g = blocks.get(b)?.gear?;
                Some((b, g, self.resized.get(b).copied().unwrap_or(0)))
            })
            .collect();
        let ov = dynamic_batch::overlay(&entries, options.expandable_memory)?;
        for (g, t) in &ov.gear_totals {
            let e = gear_totals.entry(*g).or_insert(0);
            *e = add(*e, *t, "size of a gear")?;
        }
        for v in &ov.virtuals {
            let vi = self.out_blocks.len();
            self.out_blocks.push(Block {
                members: Vec::new(),
                size: v.size,
                offset: cursor,
                level: BlockLevel::Top,
                parent: None,
                tag: Some(alloc::format!(
                    "dynamic-batch (gear {} defines it)",
                    ov.max_gear.unwrap_or(0)
                )),
            });
            for &(b, rel) in &v.placed {
                let off = add(cursor, rel, "offset of a gear block")?;
                self.place_tree(b, off)?;
                if let Some(ob) = self.index.get(b).and_then(|&i| self.out_blocks.get_mut(i)) {
                    ob.level = BlockLevel::Child;
                    ob.parent = Some(vi);
                }
            }
            cursor = add(cursor, v.size, "end of a dynamic-batch block")?;
        }
        if !ov.leftovers.is_empty() {
            notes.push(alloc::format!(
                "{} gear block(s) found no room in the 400 MiB virtual blocks and stand alone",
                ov.leftovers.len()
            ));
        }
        for &b in &ov.leftovers {
            cursor = self.place_top(b, cursor)?;
        }
        Ok(cursor)
    }

    /// Continuous inputs of memory type `mem`: each group adjacent, in input order, groups by
    /// first appearance. Under gears each gear's part of a group is one run, and the gears'
    /// runs overlay from the same start after the ungeared members (GE
    /// dynamic_batch_mem_assigner.cc: each gear's group is one virtual block, the smaller
    /// gears' at the head of the largest's). Returns the new end.
    fn continuous_inputs(&mut self, mem: u32, mut cursor: u64) -> Result<u64> {
        // (first block of group, group, gear, index, block); ungeared (None) sorts first.
        let mut cont: Vec<(usize, u32, Option<u64>, u32, usize)> = Vec::new();
        let mut first_of: BTreeMap<u32, usize> = BTreeMap::new();
        for (b, blk) in self.blocks.iter().enumerate() {
            if let (Some((g, i)), true) = (blk.continuous, blk.mem == mem) {
                let f = *first_of.entry(g).or_insert(b);
                cont.push((f, g, blk.gear, i, b));
            }
        }
        cont.sort_unstable();
        let mut k = 0;
        while k < cont.len() {
            let group = cont[k].1;
            let (mut shared_end, mut group_end) = (cursor, cursor);
            while k < cont.len() && cont[k].1 == group {
                let gear = cont[k].2;
                let mut c = if gear.is_none() { cursor } else { shared_end };
                while k < cont.len() && cont[k].1 == group && cont[k].2 == gear {
                    c = self.place_top(cont[k].4, c)?;
                    k += 1;
                }
                if gear.is_none() {
                    shared_end = c;
                }
                group_end = group_end.max(c);
            }
            cursor = group_end;
        }
        Ok(cursor)
    }

    /// Atomic-clean outputs of memory type `mem`: no reuse, one after another; the gears are
    /// appended one after another too (GE atomic_memory_assigner.cc ReAssignAtomicMemory).
    /// Returns the new end.
    fn atomic(&mut self, mem: u32, mut cursor: u64, align: u64) -> Result<u64> {
        let units = self.units;
        let mut gears: Vec<Option<u64>> = units
            .list
            .iter()
            .filter(|u| u.role == Role::Atomic && u.mem == mem)
            .map(|u| u.gear)
            .collect();
        gears.sort_unstable();
        gears.dedup();
        for g in gears {
            for u in 0..units.list.len() {
                if units
                    .list
                    .get(u)
                    .is_some_and(|x| x.role == Role::Atomic && x.gear == g && x.mem == mem)
                {
                    cursor = self.place_unit(u, cursor, align, "atomic-clean")?;
                }
            }
        }
        Ok(cursor)
    }

    /// Zero-copy units of memory type `mem`: outputs (everything not a graph input) first,
    /// then inputs by size ascending (GE AssignZeroCopyMemory). Returns the new end.
    fn zero_copy(&mut self, mem: u32, mut cursor: u64, align: u64) -> Result<u64> {
        let mut zc: Vec<(bool, u64, UnitId)> = self
            .units
            .list
            .iter()
            .enumerate()
            .filter(|(_, x)| x.mem == mem)
            .filter_map(|(u, x)| match x.role {
                Role::ZeroCopy { input, .. } => Some((input, if input { x.size } else { 0 }, u)),
                _ => None,
            })
            .collect();
        zc.sort_unstable();
        // Under the I/O reuse options a zero-copy unit is a block, with its children.
        let block_of: BTreeMap<UnitId, usize> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.zero_copy && b.parent.is_none())
            .filter_map(|(i, b)| Some((*b.units.first()?, i)))
            .collect();
        for &(_, _, u) in &zc {
            cursor = match block_of.get(&u) {
                Some(&b) => self.place_top(b, cursor)?,
                None => self.place_unit(u, cursor, align, "zero-copy")?,
            };
        }
        Ok(cursor)
    }
}

impl Arena<'_> {
    /// GE `Resize()`, bottom-up: max(largest member, sum of children), rounded to `align`.
    fn resize(&mut self, b: usize, align: u64, depth: usize) -> Result<u64> {
        let Some(blk) = self.blocks.get(b) else {
            return Ok(0);
        };
        let mut sum = 0u64;
        if depth <= super::level2::MAX_DEPTH + 1 {
            for &c in &blk.children {
                sum = add(
                    sum,
                    self.resize(c, align, depth + 1)?,
                    "size of a block's children",
                )?;
            }
        }
        let size = round_up(blk.size.max(sum), align, "size of a block")?;
        if let Some(r) = self.resized.get_mut(b) {
            *r = size;
        }
        Ok(size)
    }

    /// Places top-level block `b` at `cursor` (rounded to its alignment); returns the new end.
    fn place_top(&mut self, b: usize, cursor: u64) -> Result<u64> {
        let align = self.blocks.get(b).map_or(1, |x| x.align);
        let at = round_up(cursor, align, "offset of a block")?;
        self.place_tree(b, at)?;
        add(
            at,
            self.resized.get(b).copied().unwrap_or(0),
            "end of a block",
        )
    }

    /// Sets the offset of block `b`, its members and, recursively, its children.
    fn place_tree(&mut self, b: usize, at: u64) -> Result<()> {
        let mut stack: Vec<(usize, u64)> = alloc::vec![(b, at)];
        while let Some((x, off)) = stack.pop() {
            let Some(blk) = self.blocks.get(x) else {
                continue;
            };
            if let Some(ob) = self.index.get(x).and_then(|&i| self.out_blocks.get_mut(i)) {
                ob.offset = off;
            }
            for &u in &blk.units {
                self.set_unit(u, off)?;
            }
            let mut child = off;
            for &c in &blk.children {
                stack.push((c, child));
                child = add(
                    child,
                    self.resized.get(c).copied().unwrap_or(0),
                    "child offset",
                )?;
            }
        }
        Ok(())
    }

    /// Offsets of a unit's buffers from `off`: a continuous-output group's members follow
    /// one another in index order.
    fn set_unit(&mut self, u: UnitId, off: u64) -> Result<()> {
        let Some(unit) = self.units.list.get(u) else {
            return Ok(());
        };
        let mut o = off;
        for &i in &unit.buffers {
            if let Some(slot) = self.offsets.get_mut(i) {
                *slot = o;
            }
            let size = self.units.sizes.get(i).copied().unwrap_or(0);
            o = o.checked_add(size).ok_or_else(|| {
                let name = self.problem.buffers.get(i).map_or("?", |b| b.name.as_str());
                crate::Error::overflow(alloc::format!("end of '{name}'"))
            })?;
        }
        Ok(())
    }

    /// Places a unit of its own (atomic or zero-copy) at `cursor`, rounded to `align`;
    /// returns the new end.
    fn place_unit(&mut self, u: UnitId, cursor: u64, align: u64, tag: &str) -> Result<u64> {
        let Some(unit) = self.units.list.get(u) else {
            return Ok(cursor);
        };
        let at = round_up(cursor, unit.align.max(align), "offset of a block")?;
        self.set_unit(u, at)?;
        let size = round_up(unit.size, align, "size of a block")?;
        self.out_blocks.push(Block {
            members: BufferId::list(&unit.buffers),
            size,
            offset: at,
            level: BlockLevel::Top,
            parent: None,
            tag: Some(match unit.gear {
                Some(g) => alloc::format!("{tag}, gear {g}"),
                None => String::from(tag),
            }),
        });
        add(at, size, "end of a block")
    }
}
