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

/// Per-step tables `stream → step` sharing structure (persistent segment trees over the
/// streams, path copying): a step's table is its predecessors' tables merged, and merging two
/// tables costs the nodes where they differ, so a chain of ops each on its own stream costs
/// `O(n log n)` instead of a table of every stream at every step (`O(n²)` memory and time).
/// A value is `step + 1`, 0 for none.
#[derive(Debug, Clone, Default)]
struct Tables {
    /// `(left, right, value)`; node 0 is the empty table (its children are itself).
    nodes: Vec<(u32, u32, u64)>,
    /// Leaves span one stream index; the root spans `0..width` (a power of two).
    width: usize,
    /// Keep the larger value (`true`) or the smaller non-zero one.
    max: bool,
}

impl Tables {
    fn new(streams: usize, max: bool) -> Self {
        Tables {
            nodes: alloc::vec![(0, 0, 0)],
            width: streams.next_power_of_two().max(1),
            max,
        }
    }

    fn push(&mut self, n: (u32, u32, u64)) -> u32 {
        self.nodes.push(n);
        u32::try_from(self.nodes.len() - 1).unwrap_or(u32::MAX)
    }

    fn pick(&self, a: u64, b: u64) -> u64 {
        match (a, b) {
            (0, x) | (x, 0) => x,
            (x, y) if self.max => x.max(y),
            (x, y) => x.min(y),
        }
    }

    /// The table `a` with `val` combined into the entry of `key` (path copying).
    fn with(&mut self, a: u32, key: usize, val: u64) -> u32 {
        self.with_in(a, key, val, 0, self.width)
    }

    fn with_in(&mut self, a: u32, key: usize, val: u64, lo: usize, len: usize) -> u32 {
        let na = self.nodes[a as usize];
        if len == 1 {
            let v = self.pick(na.2, val);
            return if v == na.2 && a != 0 {
                a
            } else {
                self.push((0, 0, v))
            };
        }
        let half = len / 2;
        let (l, r) = if key < lo + half {
            (self.with_in(na.0, key, val, lo, half), na.1)
        } else {
            (na.0, self.with_in(na.1, key, val, lo + half, half))
        };
        if (l, r) == (na.0, na.1) && a != 0 {
            a
        } else {
            self.push((l, r, 0))
        }
    }

    /// `a` and `b` combined entry by entry; shared subtrees are not visited.
    fn merge(&mut self, a: u32, b: u32, len: usize) -> u32 {
        if a == b || b == 0 {
            return a;
        }
        if a == 0 {
            return b;
        }
        let (na, nb) = (self.nodes[a as usize], self.nodes[b as usize]);
        if len == 1 {
            let v = self.pick(na.2, nb.2);
            return if v == na.2 {
                a
            } else if v == nb.2 {
                b
            } else {
                self.push((0, 0, v))
            };
        }
        let l = self.merge(na.0, nb.0, len / 2);
        let r = self.merge(na.1, nb.1, len / 2);
        if (l, r) == (na.0, na.1) {
            a
        } else if (l, r) == (nb.0, nb.1) {
            b
        } else {
            self.push((l, r, 0))
        }
    }

    fn get(&self, mut t: u32, key: usize) -> u64 {
        let (mut lo, mut len) = (0, self.width);
        while len > 1 && t != 0 {
            let half = len / 2;
            let n = self.nodes[t as usize];
            if key < lo + half {
                t = n.0;
            } else {
                t = n.1;
                lo += half;
            }
            len = half;
        }
        if t == 0 {
            0
        } else {
            self.nodes[t as usize].2
        }
    }
}

/// The problem's stream ids numbered `0..` (sorted), for [`Tables`] keys.
fn stream_index(problem: &Problem) -> alloc::collections::BTreeMap<u32, usize> {
    let mut ids: alloc::collections::BTreeMap<u32, usize> =
        problem.ops.iter().map(|o| (o.stream, 0)).collect();
    for (k, v) in ids.values_mut().enumerate() {
        *v = k;
    }
    ids
}

/// For every step, the latest step of each other stream it depends on, transitively.
#[derive(Debug, Clone, Default)]
pub(crate) struct Deps {
    /// Stream id → key of [`Tables`].
    index: alloc::collections::BTreeMap<u32, usize>,
    tables: Tables,
    /// `latest[k]`: the table of step `k` (steps `< k` on each stream, 0 for none).
    latest: Vec<u32>,
}

impl Deps {
    /// Builds the table from `problem.ops[k].preds`; predecessors that are not earlier steps
    /// (malformed input) are ignored. Empty when the problem has no ops or one stream.
    pub(crate) fn new(problem: &Problem) -> Self {
        let first = problem.ops.first().map(|o| o.stream);
        if problem.ops.iter().all(|o| Some(o.stream) == first) {
            return Deps::default();
        }
        let index = stream_index(problem);
        let mut tables = Tables::new(index.len(), true);
        let width = tables.width;
        let mut latest: Vec<u32> = Vec::with_capacity(problem.ops.len());
        let mut prev_on: alloc::collections::BTreeMap<u32, usize> = Default::default();
        for (k, op) in problem.ops.iter().enumerate() {
            // Stream program order (rule 2, GE GetDependLifeBegin): an edge into an earlier
            // op of this stream counts too.
            let mut t = prev_on
                .insert(op.stream, k)
                .and_then(|j| latest.get(j))
                .copied()
                .unwrap_or(0);
            for &p in &op.preds {
                let Ok(pi) = usize::try_from(p) else { continue };
                if pi >= k {
                    continue;
                }
                if let Some(&key) = problem.ops.get(pi).and_then(|o| index.get(&o.stream)) {
                    t = tables.with(t, key, p.saturating_add(1));
                }
                if let Some(&inherited) = latest.get(pi) {
                    t = tables.merge(t, inherited, width);
                }
            }
            latest.push(t);
        }
        Deps {
            index,
            tables,
            latest,
        }
    }

    /// The latest step on `stream` that step `step` depends on through edges and stream order.
    pub(crate) fn latest_on(&self, step: u64, stream: u32) -> Option<u64> {
        let t = *self.latest.get(usize::try_from(step).ok()?)?;
        let key = *self.index.get(&stream)?;
        self.tables.get(t, key).checked_sub(1)
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
    let index = stream_index(problem);
    let mut tables = Tables::new(index.len(), false);
    let width = tables.width;
    let mut earliest: Vec<u32> = alloc::vec![0; n];
    for k in (0..n).rev() {
        let mut t = 0;
        for &j in &succ[k] {
            if let Some(&key) = index.get(&problem.ops[j].stream) {
                t = tables.with(t, key, j as u64 + 1);
            }
            t = tables.merge(t, earliest[j], width);
        }
        earliest[k] = t;
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
                let row = earliest[usize::try_from(x).unwrap_or(0)];
                let back = index
                    .get(&b.stream)
                    .and_then(|&key| tables.get(row, key).checked_sub(1))
                    .unwrap_or(never);
                end = end.max(back);
            }
            end.max(b.end)
        })
        .collect();
    Some(ends)
}
