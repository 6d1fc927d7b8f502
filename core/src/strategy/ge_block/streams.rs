//! Cross-stream ordering from data edges (GE `in_stream_edges_` / `out_stream_edges_`,
//! `GetDependLifeBegin`, block_mem_assigner.cc and block_mem_stream.cc).
//!
//! GE reuses memory across streams only at level 2, and only when a dependency edge orders the
//! two lifetimes: the latest node on the parent's stream that the candidate's first node
//! depends on must come after the parent's last use. "Depends on" follows the stream's program
//! order: the latest edge into the candidate's stream at or before its first node counts
//! (GE `GetDependLifeBegin` over `in_stream_edges_`), transitively.

use alloc::vec::Vec;

use crate::problem::Problem;

/// For every step, the latest step of each other stream it depends on, transitively.
#[derive(Debug, Clone, Default)]
pub(crate) struct Deps {
    /// `latest[k]`: `(stream, step)` pairs sorted by stream, steps `< k`.
    latest: Vec<Vec<(u32, u64)>>,
}

impl Deps {
    /// Builds the table from `problem.ops[k].preds`; predecessors that are not earlier steps
    /// (malformed input) are ignored. Empty when the problem has no ops or one stream.
    pub(crate) fn new(problem: &Problem) -> Self {
        let first = problem.ops.first().map(|o| o.stream);
        if problem.ops.iter().all(|o| Some(o.stream) == first) {
            return Deps::default();
        }
        let mut latest: Vec<Vec<(u32, u64)>> = Vec::with_capacity(problem.ops.len());
        let mut merged: Vec<(u32, u64)> = Vec::new();
        let mut prev_on: alloc::collections::BTreeMap<u32, usize> = Default::default();
        for (k, op) in problem.ops.iter().enumerate() {
            merged.clear();
            // Stream program order (rule 2, GE GetDependLifeBegin): an edge into an earlier
            // op of this stream counts too.
            if let Some(inherited) = prev_on.insert(op.stream, k).and_then(|j| latest.get(j)) {
                merged.extend_from_slice(inherited);
            }
            for &p in &op.preds {
                let Ok(pi) = usize::try_from(p) else { continue };
                if pi >= k {
                    continue;
                }
                if let Some(pop) = problem.ops.get(pi) {
                    merged.push((pop.stream, p));
                }
                if let Some(inherited) = latest.get(pi) {
                    merged.extend_from_slice(inherited);
                }
            }
            // Keep the latest step per stream.
            merged.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            merged.dedup_by_key(|e| e.0);
            latest.push(merged.clone());
        }
        Deps { latest }
    }

    /// The latest step on `stream` that step `step` depends on through edges and stream order.
    pub(crate) fn latest_on(&self, step: u64, stream: u32) -> Option<u64> {
        let row = self.latest.get(usize::try_from(step).ok()?)?;
        row.binary_search_by_key(&stream, |e| e.0)
            .ok()
            .and_then(|i| row.get(i))
            .map(|e| e.1)
    }
}

/// Lifetimes as GE sees them on the producer's stream when a tensor is read on another
/// stream (GE block_mem_stream.cc `GetNodeMaxLifeBySymbol` / `GetDiffStreamMaxLifeTime`,
/// block_mem_zero_copy.cc `SetReleaseBlockLifeEnd`): the block is released on its own stream
/// only at the first node of that stream reached from the reader by edges (data edges, control
/// edges, stream order), or never if no edge returns.
///
/// Returns each buffer's end under that rule (`>= buffer.end`; `problem.steps - 1` for
/// "never"), or `None` when every op runs on one stream (the ends stand). A buffer's accesses
/// are its first step, its readers and its last step.
pub(crate) fn cross_stream_ends(problem: &Problem) -> Option<Vec<u64>> {
    let first = problem.ops.first().map(|o| o.stream);
    if problem.ops.iter().all(|o| Some(o.stream) == first) {
        return None;
    }
    let n = problem.ops.len();
    // Successors: data/control edges forward, and the next op of the same stream.
    let mut succ: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
    let mut next_on: alloc::collections::BTreeMap<u32, usize> = Default::default();
    for (k, op) in problem.ops.iter().enumerate().rev() {
        if let Some(&j) = next_on.get(&op.stream) {
            succ[k].push(j);
        }
        next_on.insert(op.stream, k);
        for &p in &op.preds {
            if let Ok(pi) = usize::try_from(p) {
                if pi < k {
                    succ[pi].push(k);
                }
            }
        }
    }
    // earliest[k]: per stream, the first step reached from step k (strictly after it).
    let mut earliest: Vec<Vec<(u32, u64)>> = alloc::vec![Vec::new(); n];
    let mut acc: Vec<(u32, u64)> = Vec::new();
    for k in (0..n).rev() {
        acc.clear();
        for &j in &succ[k] {
            acc.push((problem.ops[j].stream, j as u64));
            acc.extend_from_slice(&earliest[j]);
        }
        acc.sort_unstable();
        acc.dedup_by_key(|e| e.0);
        earliest[k] = acc.clone();
    }
    let never = problem.steps.saturating_sub(1);
    let ends = problem
        .buffers
        .iter()
        .map(|b| {
            let mut end = b.end;
            for &x in b.readers.iter().chain([b.start, b.end].iter()) {
                let Some(op) = usize::try_from(x).ok().and_then(|i| problem.ops.get(i)) else {
                    continue;
                };
                if op.stream == b.stream {
                    continue;
                }
                let row = &earliest[usize::try_from(x).unwrap_or(0)];
                let back = row
                    .binary_search_by_key(&b.stream, |e| e.0)
                    .ok()
                    .map_or(never, |i| row[i].1);
                end = end.max(back);
            }
            end.max(b.end)
        })
        .collect();
    Some(ends)
}
