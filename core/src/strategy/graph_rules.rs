//! What every strategy that is not GE's must honour so that [`crate::validate`] accepts its
//! plan on a graph: cross-stream lifetimes and continuous groups. GE's strategies apply GE's own
//! rules instead (`ge_block`). Both are problem rewrites around an unchanged strategy.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::plan::{Plan, PlanOptions};
use crate::problem::{Buffer, Problem};

/// Cells of the ops × streams reachability table [`stream_safe`] builds (16 Mi entries,
/// 128 MiB); beyond it every buffer is kept to the end instead.
const MAX_REACH_CELLS: usize = 1 << 24;

/// `problem` with each buffer's `end` extended so that any buffer starting after it is
/// ordered after every access of it (ops of one stream run in step order; streams are ordered
/// only by [`crate::OpInfo::preds`]). For an access at step `x` and another stream `t`, the
/// buffer stays live until just before the first op of `t` reached from `x`, or until `t`'s
/// last op if none is. The result runs on one stream (its live ranges carry the order).
/// `None` when all ops run on one stream (step order is the whole rule).
pub(crate) fn stream_safe(problem: &Problem) -> Option<Problem> {
    let first = problem.ops.first().map(|o| o.stream);
    if problem.ops.iter().all(|o| Some(o.stream) == first) {
        return None;
    }
    let n = problem.ops.len();
    let mut streams: Vec<u32> = problem.ops.iter().map(|o| o.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    let sid = |s: u32| streams.binary_search(&s).unwrap_or(0);
    let ns = streams.len();
    if n.saturating_mul(ns) > MAX_REACH_CELLS {
        // Too many streams for the table: every buffer lives to the end (safe, no reuse).
        let mut out = problem.clone();
        let last = problem.steps.saturating_sub(1);
        out.buffers.iter_mut().for_each(|b| b.end = b.end.max(last));
        return Some(out);
    }
    // reach[k * ns + t]: the first step of stream t reachable from step k (strictly after),
    // u64::MAX if none. Built backwards over successors (edges and the next op of the stream).
    let mut reach = alloc::vec![u64::MAX; n * ns];
    let mut succ: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
    let mut last_of = alloc::vec![None::<u64>; ns];
    let mut next_of = alloc::vec![None::<usize>; ns];
    for (k, op) in problem.ops.iter().enumerate().rev() {
        let t = sid(op.stream);
        if let Some(j) = next_of[t] {
            succ[k].push(j);
        }
        next_of[t] = Some(k);
        last_of[t] = last_of[t].or(Some(k as u64));
        for &p in &op.preds {
            if let Some(pi) = usize::try_from(p).ok().filter(|&pi| pi < k) {
                succ[pi].push(k);
            }
        }
    }
    for k in (0..n).rev() {
        for &j in &succ[k] {
            let tj = sid(problem.ops[j].stream);
            reach[k * ns + tj] = reach[k * ns + tj].min(j as u64);
            for t in 0..ns {
                let v = reach[j * ns + t];
                reach[k * ns + t] = reach[k * ns + t].min(v);
            }
        }
    }
    let mut out = problem.clone();
    for b in &mut out.buffers {
        let mut end = b.end;
        for &x in b.readers.iter().chain([b.start, b.end].iter()) {
            let Some(k) = usize::try_from(x).ok().filter(|&k| k < n) else {
                continue;
            };
            for t in 0..ns {
                let unordered_until = match reach[k * ns + t] {
                    u64::MAX => last_of[t].unwrap_or(0),
                    r => r.saturating_sub(1),
                };
                end = end.max(unordered_until);
            }
        }
        b.end = end.min(problem.steps.saturating_sub(1)).max(b.end);
    }
    // The live ranges now carry the streams' order, so the rewritten problem runs on one
    // stream: kept, the streams would make an extended end (a step of another stream) look
    // like an access of the buffer, and a plan valid for the graph would fail a check against
    // the rewrite (issue 30: optimal refused its own seed).
    let one = first.unwrap_or(0);
    for op in &mut out.ops {
        op.stream = one;
    }
    for b in &mut out.buffers {
        b.stream = one;
    }
    Some(out)
}

/// A continuous group within one gear: (group id, gear).
type GroupKey = (u32, Option<u64>);

/// Runs `run` with each continuous group ([`crate::Continuous`], per gear) merged into one
/// buffer of the sum of its members' planned sizes, live over the union of their ranges, then
/// places the members one after another inside it in index order. Without groups, `run` on
/// `problem` as is.
///
/// # Errors
/// Errors of `run`; [`crate::ErrorKind::Overflow`] for a group's size.
pub(crate) fn with_continuous_groups(
    problem: &Problem,
    options: &PlanOptions,
    run: impl Fn(&Problem) -> Result<Plan>,
) -> Result<Plan> {
    if problem.buffers.iter().all(|b| b.continuous.is_none()) {
        return run(problem);
    }
    // (group, gear) -> members (index, buffer), and each buffer's place in the merged problem.
    let mut groups: BTreeMap<GroupKey, Vec<(u32, usize)>> = BTreeMap::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        if let (Some(c), None) = (b.continuous, b.fixed_offset) {
            groups
                .entry((c.group, b.gear))
                .or_default()
                .push((c.index, i));
        }
    }
    let sizes = super::planned_sizes(problem, options)?;
    let mut merged: Vec<Buffer> = Vec::new();
    let mut slot: Vec<usize> = alloc::vec![usize::MAX; problem.buffers.len()];
    let mut head_of: BTreeMap<GroupKey, usize> = BTreeMap::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        let key = b
            .continuous
            .filter(|_| b.fixed_offset.is_none())
            .map(|c| (c.group, b.gear));
        let Some(key) = key else {
            slot[i] = merged.len();
            merged.push(b.clone());
            continue;
        };
        if let Some(&m) = head_of.get(&key) {
            slot[i] = m;
            let g = &mut merged[m];
            g.size = add(g.size, sizes[i], "size of a continuous group")?;
            g.start = g.start.min(b.start);
            g.end = g.end.max(b.end);
            g.readers.extend_from_slice(&b.readers);
            g.flags.no_reuse |= b.flags.no_reuse;
            g.flags.zero_copy |= b.flags.zero_copy;
            g.flags.atomic_clean |= b.flags.atomic_clean;
            g.flags.zero_copy_reuse &= b.flags.zero_copy_reuse;
            g.alignment = g.alignment.max(b.alignment);
            continue;
        }
        head_of.insert(key, merged.len());
        slot[i] = merged.len();
        let mut g = b.clone();
        g.size = sizes[i];
        g.continuous = None;
        merged.push(g);
    }
    for g in &mut merged {
        g.readers.sort_unstable();
        g.readers.dedup();
    }
    let mp = Problem {
        buffers: merged,
        ..problem.clone()
    };
    let inner = run(&mp)?;
    let mut offsets = Vec::with_capacity(problem.buffers.len());
    let mut planned = Vec::with_capacity(problem.buffers.len());
    for (i, &m) in slot.iter().enumerate() {
        offsets.push(inner.offsets.get(m).copied().unwrap_or(0));
        planned.push(inner.sizes.get(m).copied().unwrap_or(0));
        if problem.buffers[i].continuous.is_some() {
            planned[i] = sizes[i];
        }
    }
    for members in groups.values_mut() {
        members.sort_unstable();
        let mut at = members.first().map_or(0, |&(_, i)| offsets[i]);
        for &(_, i) in members.iter() {
            offsets[i] = at;
            at = add(at, sizes[i], "offset in a continuous group")?;
        }
    }
    let mut plan = Plan::new(inner.strategy.clone(), inner.alignment, offsets, planned)?;
    plan.peak = plan.peak.max(inner.peak);
    plan.stats = inner.stats;
    plan.search = inner.search;
    plan.ge = inner.ge;
    plan.notes = inner.notes;
    if !groups.is_empty() {
        plan.notes.push(alloc::format!(
            "{} continuous group(s) planned as one buffer each, members adjacent in index order",
            groups.len()
        ));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Continuous, OpInfo};
    use crate::validate::validate;

    #[test]
    fn packing_honours_streams_and_continuous_groups() {
        // a (step 0, stream 0) read at step 1 on stream 1; b (step 2, stream 0) with no edge
        // back: by steps alone b could take a's bytes; it must not.
        let mut a = Buffer::new("a", 512, 0, 1);
        a.producer = Some(0);
        a.readers = alloc::vec![1];
        let mut b = Buffer::new("b", 512, 2, 2);
        b.producer = Some(2);
        let mut c0 = Buffer::new("c0", 100, 2, 2);
        let mut c1 = Buffer::new("c1", 300, 2, 2);
        c0.producer = Some(2);
        c1.producer = Some(2);
        c1.continuous = Some(Continuous {
            group: 0,
            index: 1,
            outputs: true,
        });
        c0.continuous = Some(Continuous {
            group: 0,
            index: 0,
            outputs: true,
        });
        let mut p = Problem::from_buffers("t", alloc::vec![a, b, c1, c0]);
        let op = |stream, preds| OpInfo {
            stream,
            preds,
            ..OpInfo::default()
        };
        p.ops = alloc::vec![
            op(0, alloc::vec![]),
            op(1, alloc::vec![0]),
            op(0, alloc::vec![0])
        ];
        for s in crate::strategy::strategies() {
            let plan = crate::strategy::plan(&p, s.name, &PlanOptions::exact()).unwrap();
            assert_eq!(validate(&p, &plan), Ok(()), "{}", s.name);
            assert_eq!(plan.offsets[2], plan.offsets[3] + 100, "{}", s.name);
        }
    }
}
