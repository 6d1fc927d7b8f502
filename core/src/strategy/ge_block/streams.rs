//! Cross-stream ordering from data edges (GE `in_stream_edges_` / `out_stream_edges_`,
//! `GetDependLifeBegin`, block_mem_assigner.cc and block_mem_stream.cc).
//!
//! GE reuses memory across streams only at level 2, and only when a dependency edge orders the
//! two lifetimes: the latest node on the parent's stream that the candidate's first node
//! depends on (transitively) must come after the parent's last use.

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
        for (k, op) in problem.ops.iter().enumerate() {
            merged.clear();
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

    /// The latest step on `stream` that step `step` depends on through data edges.
    pub(crate) fn latest_on(&self, step: u64, stream: u32) -> Option<u64> {
        let row = self.latest.get(usize::try_from(step).ok()?)?;
        row.binary_search_by_key(&stream, |e| e.0)
            .ok()
            .and_then(|i| row.get(i))
            .map(|e| e.1)
    }
}
