//! Memory-aware op order (`--schedule memory`): the topological order whose live-set lower
//! bound (the peak of the bytes live at one step, [`crate::bound::lower_bound`]) is lowest.
//!
//! Once a placement sits at the lower bound, only the problem can change, and the op order
//! is the first lever: the bound depends on it. Rules and where they come from:
//!
//! - **Exact search** over sets of executed ops (Serenity, Ahn et al., MLSys 2020; Liberis &
//!   Lane, "Neural networks on microcontrollers", 2019): a state is a down-closed set of ops;
//!   the bytes live after it depend on the set only, so the best peak reaching a set is all
//!   the search keeps of it. Sets are expanded level by level (level = ops executed). States
//!   whose peak already reaches the best heuristic's are cut (they cannot beat it). A level
//!   wider than [`OrderLimits::max_width`] keeps its best states only (a beam): the result is
//!   then a heuristic, and the report says so.
//! - **Heuristics**, each O(n log n) bar the edges: least-peak-memory-first (PyTorch Inductor
//!   `reorder_for_peak_memory`, LPMF), XLA's list scheduler (`hlo_memory_scheduler.cc`
//!   `ListScheduler`: the ready op freeing the most bytes net of what it allocates), XLA's DFS
//!   (`DFSMemoryScheduler`: post-order from the outputs, the operand with the larger subgraph
//!   first), breadth-first (Kahn, first ready first), GE's depth-first sort.
//! - **The file order is always a candidate**, and every candidate is lowered and measured
//!   by the same lower bound every plan is measured against; the file order wins ties. So the
//!   order chosen is never worse than the file's (XLA's `DefaultMemoryScheduler` and Inductor
//!   keep the input order as a candidate the same way).
//! - **Constant-only ops** (every input a constant or the output of such an op, e.g. a weight
//!   `DequantizeLinear`) are folded before the search: they run just before their first
//!   consumer. A greedy order would run them early and keep their outputs live for long.
//!
//! The search model is the lowering's: a tensor lives from its producer's step to its last
//! reader's step, graph inputs from step 0, graph outputs to the last step, an op's
//! workspaces at its step. It differs only for ref outputs (merged into their input's buffer
//! when lowered): with any, the report does not claim an optimum.

use alloc::collections::{BinaryHeap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Reverse;
use core::hash::BuildHasher;

use super::{Bindings, Graph, OpId};
use crate::error::{Error, Result};

/// Limits of the exact search (a work budget, not a clock: the same input gives the same
/// order on every machine, so `memplan validate --model` reloads the same lifetimes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderLimits {
    /// Most states one level keeps (fewer on graphs of over 1,280 ops: a level holds at most
    /// 2 M words of sets); a wider level keeps its best ones (beam) and the search is no
    /// longer exact.
    pub max_width: usize,
    /// Most states expanded in all (each costs O(ready ops × words)); past it, the search
    /// narrows to a beam of 64 for the rest.
    pub max_states: u64,
    /// Graphs with more ops than this get the heuristics only.
    pub max_ops: usize,
}

impl Default for OrderLimits {
    /// 100,000 states a level, 4,000,000 in all, 5,000 ops.
    fn default() -> Self {
        OrderLimits {
            max_width: 100_000,
            max_states: 4_000_000,
            max_ops: 5_000,
        }
    }
}

/// One order tried and its live-set lower bound.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Candidate {
    /// `file`, `exact`, `beam`, `lpmf`, `list`, `dfs`, `bfs`, `ge-dfs`.
    pub name: String,
    /// Live-set lower bound of the lowered problem in this order, bytes.
    pub peak: u64,
}

/// What the order search did and proved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OrderReport {
    /// The candidate chosen (the first of the lowest; `file` first).
    pub winner: String,
    /// Its live-set lower bound, bytes.
    pub peak: u64,
    /// The file order's, bytes.
    pub file_peak: u64,
    /// The optimum over every topological order (with constant-only ops just before their
    /// first consumer) was proven: the exact search ran to the end.
    pub exact: bool,
    /// States the exact search expanded.
    pub states: u64,
    /// Why no optimum is claimed (`None` when `exact`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub not_exact: Option<String>,
    /// Constant-only ops folded (run just before their first consumer).
    pub folded_ops: usize,
    /// Every candidate, in the order tried.
    pub candidates: Vec<Candidate>,
}

impl OrderReport {
    /// One line for a plan's notes: `op order memory: exact search, 1,234 B live-set bound
    /// (file order 2,000 B, -38.3 %); proven optimal over all topological orders`.
    pub fn note(&self) -> String {
        let saving = if self.file_peak > 0 && self.peak < self.file_peak {
            let tenths = (u128::from(self.file_peak - self.peak) * 1000
                + u128::from(self.file_peak) / 2)
                / u128::from(self.file_peak);
            alloc::format!(", -{}.{} %", tenths / 10, tenths % 10)
        } else {
            String::new()
        };
        let proof = if self.exact {
            alloc::format!(
                "proven optimal over all topological orders ({} states)",
                self.states
            )
        } else {
            alloc::format!(
                "heuristic, optimum not proven: {}",
                self.not_exact.as_deref().unwrap_or("")
            )
        };
        let tried: Vec<String> = self
            .candidates
            .iter()
            .map(|c| alloc::format!("{} {}", c.name, c.peak))
            .collect();
        alloc::format!(
            "op order memory: {} wins, live-set bound {} B (file order {} B{saving}); {proof}; tried {}",
            self.winner,
            self.peak,
            self.file_peak,
            tried.join(", ")
        )
    }
}

/// The memory-aware order of `graph` under `bindings` and what the search did. Every candidate
/// is lowered ([`Graph::lower_in`]) and measured by [`crate::bound::lower_bound`]; the file
/// order wins ties.
///
/// # Errors
/// As [`Graph::lower`] (a cycle, an unknown input, a size overflowing `u64`).
pub fn memory_order(
    graph: &Graph,
    bindings: &Bindings,
    limits: &OrderLimits,
) -> Result<(Vec<OpId>, OrderReport)> {
    let file = graph.file_order()?;
    let model = Model::new(graph, bindings, &file)?;
    let mut named: Vec<(&'static str, Vec<usize>)> =
        alloc::vec![("file", file.iter().map(|k| k.index()).collect())];
    named.push((
        "ge-dfs",
        graph.ge_dfs_order().iter().map(|k| k.index()).collect(),
    ));
    named.push(("lpmf", model.expand(&model.lpmf())));
    named.push(("list", model.expand(&model.list())));
    named.push(("dfs", model.expand(&model.dfs())));
    named.push(("bfs", model.expand(&model.bfs())));
    let upper = named
        .iter()
        .map(|(_, o)| model.peak(o))
        .min()
        .unwrap_or(u64::MAX);
    let mut report = OrderReport {
        folded_ops: model.folded.iter().filter(|&&f| f).count(),
        ..OrderReport::default()
    };
    let exact_model = !graph.ops.iter().any(|o| !o.ref_outputs.is_empty());
    if model.main.len() > limits.max_ops {
        report.not_exact = Some(alloc::format!(
            "{} ops is over the exact search's {}",
            model.main.len(),
            limits.max_ops
        ));
    } else {
        let s = model.search(upper, limits);
        report.states = s.states;
        match (s.order, s.truncated) {
            (Some(o), false) => named.push(("exact", model.expand(&o))),
            (Some(o), true) => named.push(("beam", model.expand(&o))),
            (None, _) => {}
        }
        if s.truncated {
            report.not_exact = Some(alloc::format!(
                "the exact search's state space exceeded its cap ({} states a level, {} in all)",
                limits.max_width,
                limits.max_states
            ));
        } else if !exact_model {
            report.not_exact = Some(String::from(
                "ref outputs share their input's buffer, which the search does not model",
            ));
        } else {
            // complete: either it found a better order, or nothing beats the best heuristic
            report.exact = true;
        }
    }
    let mut best: Option<(u64, usize)> = None;
    let mut seen: Vec<&Vec<usize>> = Vec::new();
    let mut measured: Vec<u64> = Vec::new();
    for (i, (name, order)) in named.iter().enumerate() {
        let peak = match seen.iter().position(|o| *o == order) {
            Some(j) => measured[j],
            None => {
                let sched: Vec<OpId> = order.iter().map(|&k| OpId::new(k)).collect();
                live_peak(&graph.lower_in(bindings, sched)?.problem)?
            }
        };
        seen.push(order);
        measured.push(peak);
        report.candidates.push(Candidate {
            name: String::from(*name),
            peak,
        });
        if best.is_none_or(|(b, _)| peak < b) {
            best = Some((peak, i));
        }
    }
    let (peak, i) = best.ok_or_else(|| Error::invalid("no order to choose from"))?;
    report.winner = String::from(named[i].0);
    report.peak = peak;
    report.file_peak = measured[0];
    let order = named.swap_remove(i).1.into_iter().map(OpId::new).collect();
    Ok((order, report))
}

/// The search's view of a graph: tensor sizes (constants and unknown sizes count 0), who
/// reads and writes what, and which ops are folded.
pub(crate) struct Model {
    size: Vec<u64>,
    ins: Vec<Vec<usize>>,
    outs: Vec<Vec<usize>>,
    ws: Vec<u64>,
    readers: Vec<Vec<usize>>,
    keep: Vec<bool>,
    is_input: Vec<bool>,
    /// Main ops' main predecessors (data and control); folded ops have none that count.
    main_preds: Vec<Vec<usize>>,
    main_succs: Vec<Vec<usize>>,
    folded: Vec<bool>,
    /// Per op: the folded ops it pulls in (its constant-only ancestors), in file topo order.
    pulls: Vec<Vec<usize>>,
    /// Main ops, in file topological order.
    main: Vec<usize>,
    start_resident: u64,
    step0_extra: u64,
}

impl Model {
    fn new(graph: &Graph, bindings: &Bindings, topo: &[OpId]) -> Result<Self> {
        let nt = graph.tensors.len();
        let n = graph.ops.len();
        let mut size = alloc::vec![0u64; nt];
        for (t, tensor) in graph.tensors.iter().enumerate() {
            if !tensor.constant {
                size[t] = tensor.size(bindings)?.unwrap_or(0);
            }
        }
        let mut readers: Vec<Vec<usize>> = alloc::vec![Vec::new(); nt];
        let mut ins: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
        let mut outs: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
        let mut ws = alloc::vec![0u64; n];
        let producer = graph.producers()?;
        for (k, op) in graph.ops.iter().enumerate() {
            let mut i: Vec<usize> = op.inputs.iter().map(|t| t.index()).collect();
            i.sort_unstable();
            i.dedup();
            for &t in &i {
                readers[t].push(k);
            }
            ins[k] = i;
            outs[k] = op.outputs.iter().map(|t| t.index()).collect();
            ws[k] = op
                .workspace_bytes
                .iter()
                .try_fold(0u64, |a, &b| crate::error::add(a, b, "workspace bytes"))?;
        }
        let mut keep = alloc::vec![false; nt];
        graph.outputs.iter().for_each(|&t| keep[t.index()] = true);
        let mut is_input = alloc::vec![false; nt];
        graph
            .inputs
            .iter()
            .for_each(|&t| is_input[t.index()] = true);
        let mut start_resident = 0u64;
        let mut step0_extra = 0u64;
        for t in (0..nt).filter(|&t| is_input[t]) {
            if readers[t].is_empty() && !keep[t] {
                step0_extra = crate::error::add(step0_extra, size[t], "live bytes")?;
            } else {
                start_resident = crate::error::add(start_resident, size[t], "live bytes")?;
            }
        }
        // Folded: every input constant-like, no control edge either way, no graph I/O
        // written, some output read.
        let mut ctrl_target = alloc::vec![false; n];
        for op in &graph.ops {
            op.after.iter().for_each(|p| ctrl_target[p.index()] = true);
        }
        let mut constlike: Vec<bool> = graph.tensors.iter().map(|t| t.constant).collect();
        let mut folded = alloc::vec![false; n];
        for &k in topo {
            let k = k.index();
            let op = &graph.ops[k];
            let f = op.inputs.iter().all(|t| constlike[t.index()])
                && op.after.is_empty()
                && !ctrl_target[k]
                && op
                    .outputs
                    .iter()
                    .all(|t| !keep[t.index()] && !is_input[t.index()])
                && op.outputs.iter().any(|t| !readers[t.index()].is_empty());
            if f {
                folded[k] = true;
                op.outputs.iter().for_each(|t| constlike[t.index()] = true);
            }
        }
        let mut pos = alloc::vec![0usize; n];
        topo.iter()
            .enumerate()
            .for_each(|(i, k)| pos[k.index()] = i);
        let mut main_preds: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
        let mut main_succs: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
        let mut pulls: Vec<Vec<usize>> = alloc::vec![Vec::new(); n];
        for k in 0..n {
            let op = &graph.ops[k];
            let mut preds: Vec<usize> = op
                .inputs
                .iter()
                .filter_map(|t| producer[t.index()].map(|p| p.index()))
                .chain(op.after.iter().map(|p| p.index()))
                .collect();
            preds.sort_unstable();
            preds.dedup();
            // folded ancestors: a walk over folded preds
            let mut stack: Vec<usize> = preds.iter().copied().filter(|&p| folded[p]).collect();
            let mut got: Vec<usize> = Vec::new();
            while let Some(p) = stack.pop() {
                if got.contains(&p) {
                    continue;
                }
                got.push(p);
                for t in &graph.ops[p].inputs {
                    if let Some(q) = producer[t.index()] {
                        if folded[q.index()] {
                            stack.push(q.index());
                        }
                    }
                }
            }
            got.sort_unstable_by_key(|&p| pos[p]);
            pulls[k] = got;
            if !folded[k] {
                main_preds[k] = preds.into_iter().filter(|&p| !folded[p]).collect();
                for &p in &main_preds[k] {
                    main_succs[p].push(k);
                }
            }
        }
        let main = topo
            .iter()
            .map(|k| k.index())
            .filter(|&k| !folded[k])
            .collect();
        Ok(Model {
            size,
            ins,
            outs,
            ws,
            readers,
            keep,
            is_input,
            main_preds,
            main_succs,
            folded,
            pulls,
            main,
            start_resident,
            step0_extra,
        })
    }

    /// A main-op order with each op's folded ancestors run just before it.
    fn expand(&self, main: &[usize]) -> Vec<usize> {
        let mut done = alloc::vec![false; self.ins.len()];
        let mut out = Vec::with_capacity(self.ins.len());
        for &v in main {
            for &c in &self.pulls[v] {
                if !core::mem::replace(&mut done[c], true) {
                    out.push(c);
                }
            }
            done[v] = true;
            out.push(v);
        }
        out
    }

    /// Bytes live at `u`'s step given those live before it (`resident`, not counting the
    /// unread graph inputs of step 0).
    fn step_bytes(&self, resident: u64, u: usize) -> u64 {
        let outs: u64 = self.outs[u]
            .iter()
            .filter(|&&t| !self.is_input[t])
            .map(|&t| self.size[t])
            .fold(0u64, u64::saturating_add);
        resident.saturating_add(outs).saturating_add(self.ws[u])
    }

    /// `resident` after `u` ran, `done(op)` saying which ops have run (`u` included).
    fn after(&self, mut resident: u64, u: usize, done: impl Fn(usize) -> bool) -> u64 {
        for &t in &self.outs[u] {
            if !self.is_input[t] && (!self.readers[t].is_empty() || self.keep[t]) {
                resident = resident.saturating_add(self.size[t]);
            }
        }
        for &t in &self.ins[u] {
            if !self.keep[t] && self.readers[t].iter().all(|&r| done(r)) {
                resident = resident.saturating_sub(self.size[t]);
            }
        }
        resident
    }

    /// The live-set peak of a full order (every op once), by the model.
    fn peak(&self, order: &[usize]) -> u64 {
        let mut done = alloc::vec![false; self.ins.len()];
        let mut resident = self.start_resident;
        let mut peak = 0u64;
        for (step, &u) in order.iter().enumerate() {
            let extra = if step == 0 { self.step0_extra } else { 0 };
            peak = peak.max(self.step_bytes(resident, u).saturating_add(extra));
            done[u] = true;
            resident = self.after(resident, u, |r| done[r]);
        }
        peak
    }

    /// Bytes a main op allocates at its step, its folded ancestors' outputs included.
    fn alloc_bytes(&self, v: usize) -> u64 {
        self.pulls[v]
            .iter()
            .chain(core::iter::once(&v))
            .flat_map(|&u| self.outs[u].iter())
            .map(|&t| self.size[t])
            .fold(self.ws[v], u64::saturating_add)
    }

    /// Main ops with no main predecessor, in file order.
    fn sources(&self) -> Vec<usize> {
        self.main
            .iter()
            .copied()
            .filter(|&v| self.main_preds[v].is_empty())
            .collect()
    }

    /// Kahn's algorithm with `pick` choosing among the ready ops: a priority queue keyed by
    /// `key(op, left)` (smallest first), `left[t]` the readers of tensor `t` yet to run; keys
    /// of ops whose key may have changed are pushed again and stale entries skipped.
    fn kahn(&self, key: impl Fn(usize, &[usize]) -> (i128, usize)) -> Vec<usize> {
        let n = self.ins.len();
        let mut indeg: Vec<usize> = (0..n).map(|v| self.main_preds[v].len()).collect();
        let mut left: Vec<usize> = self.readers.iter().map(Vec::len).collect();
        let mut heap: BinaryHeap<Reverse<((i128, usize), usize)>> = BinaryHeap::new();
        let mut ready = alloc::vec![false; n];
        let mut done = alloc::vec![false; n];
        for v in self.sources() {
            ready[v] = true;
            heap.push(Reverse((key(v, &left), v)));
        }
        let mut order = Vec::with_capacity(self.main.len());
        while let Some(Reverse((k, v))) = heap.pop() {
            if done[v] || k != key(v, &left) {
                continue;
            }
            order.push(v);
            let mut touched: Vec<usize> = Vec::new();
            for &u in self.pulls[v].iter().chain(core::iter::once(&v)) {
                if core::mem::replace(&mut done[u], true) {
                    continue;
                }
                for &t in &self.ins[u] {
                    left[t] = left[t].saturating_sub(1);
                    if left[t] == 1 {
                        touched.extend(self.readers[t].iter().copied());
                    }
                }
            }
            for &s in &self.main_succs[v] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready[s] = true;
                    touched.push(s);
                }
            }
            for u in touched {
                if ready[u] && !done[u] && !self.folded[u] {
                    heap.push(Reverse((key(u, &left), u)));
                }
            }
        }
        order
    }

    /// Least peak memory first (Inductor's LPMF): the ready op allocating the fewest bytes
    /// (outputs, workspace, folded ancestors' outputs), then the one freeing the most.
    fn lpmf(&self) -> Vec<usize> {
        self.kahn(|v, left| {
            let freed = self.freed(v, left);
            (
                i128::from(self.alloc_bytes(v)) * (1i128 << 64) - i128::from(freed),
                v,
            )
        })
    }

    /// XLA's list scheduler: the ready op with the most bytes freed net of bytes allocated.
    fn list(&self) -> Vec<usize> {
        self.kahn(|v, left| {
            let net = i128::from(self.freed(v, left)) - i128::from(self.alloc_bytes(v));
            (-net, v)
        })
    }

    /// Breadth first: Kahn's algorithm, the first op to become ready runs first.
    fn bfs(&self) -> Vec<usize> {
        let mut indeg: Vec<usize> = (0..self.ins.len())
            .map(|v| self.main_preds[v].len())
            .collect();
        let mut q: VecDeque<usize> = self.sources().into();
        let mut order = Vec::with_capacity(self.main.len());
        while let Some(v) = q.pop_front() {
            order.push(v);
            for &s in &self.main_succs[v] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    q.push_back(s);
                }
            }
        }
        order
    }

    /// XLA's DFS scheduler: a post-order walk from the sinks over predecessors (petgraph's
    /// `DfsPostOrder` on the reversed graph), the predecessor with the larger subgraph (bytes
    /// its ancestors allocate, counted with multiplicity) visited first.
    fn dfs(&self) -> Vec<usize> {
        use petgraph::graph::{DiGraph, NodeIndex};
        use petgraph::visit::DfsPostOrder;
        let n = self.ins.len();
        let mut total = alloc::vec![0u128; n];
        for &v in &self.main {
            total[v] = self.main_preds[v]
                .iter()
                .map(|&p| total[p])
                .fold(u128::from(self.alloc_bytes(v)), u128::saturating_add);
        }
        let mut g: DiGraph<(), ()> = DiGraph::with_capacity(n, 0);
        for _ in 0..n {
            g.add_node(());
        }
        // petgraph lists a node's neighbours last added first: add the smallest first
        for &v in &self.main {
            let mut p = self.main_preds[v].clone();
            p.sort_by_key(|&q| (total[q], Reverse(q)));
            for q in p {
                g.add_edge(NodeIndex::new(v), NodeIndex::new(q), ());
            }
        }
        let mut order = Vec::with_capacity(self.main.len());
        let mut dfs = DfsPostOrder::empty(&g);
        for &v in &self.main {
            if self.main_succs[v].is_empty() && !dfs.discovered.contains(v) {
                dfs.move_to(NodeIndex::new(v));
                while let Some(x) = dfs.next(&g) {
                    order.push(x.index());
                }
            }
        }
        order
    }

    /// Bytes `v` frees when it runs now: the inputs (its folded ancestors' too) whose last
    /// reader it is, `left` counting readers yet to run.
    fn freed(&self, v: usize, left: &[usize]) -> u64 {
        let mut f = 0u64;
        for &t in &self.ins[v] {
            if !self.keep[t] && left[t] == 1 {
                f = f.saturating_add(self.size[t]);
            }
        }
        f
    }

    /// The exact search (see the module doc): the best main-op order with a peak under
    /// `upper`, if any.
    fn search(&self, upper: u64, limits: &OrderLimits) -> Search {
        let n = self.ins.len();
        let words = n.div_ceil(64).max(1);
        let hasher = hashbrown::DefaultHashBuilder::default();
        let bit = |bits: &[u64], i: usize| bits[i / 64] >> (i % 64) & 1 == 1;
        // level arrays: executed set, ready set (main ops), peak, resident
        let mut cur_bits: Vec<u64> = alloc::vec![0; words];
        let mut cur_ready: Vec<u64> = alloc::vec![0; words];
        for v in self.sources() {
            cur_ready[v / 64] |= 1 << (v % 64);
        }
        let mut cur_val: Vec<(u64, u64)> = alloc::vec![(0, self.start_resident)];
        // per level: (parent index, op) of each state
        let mut trail: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut states = 0u64;
        let mut truncated = false;
        let levels = self.main.len();
        if levels == 0 {
            return Search {
                order: Some(Vec::new()),
                truncated,
                states,
            };
        }
        let mut scratch: Vec<u64> = alloc::vec![0; words];
        for level in 0..levels {
            let mut nxt_bits: Vec<u64> = Vec::new();
            let mut nxt_ready: Vec<u64> = Vec::new();
            let mut nxt_val: Vec<(u64, u64)> = Vec::new();
            let mut nxt_trail: Vec<(usize, usize)> = Vec::new();
            let mut table: hashbrown::HashTable<usize> = hashbrown::HashTable::new();
            // a level holds its sets and ready sets (2 × words u64 each): at most 2 M words,
            // 16 MB, whatever the graph's size
            let width = if states > limits.max_states {
                64
            } else {
                limits.max_width.min((2_000_000 / words).max(64))
            };
            for s in 0..cur_val.len() {
                states += 1;
                let bits = &cur_bits[s * words..(s + 1) * words];
                let ready = &cur_ready[s * words..(s + 1) * words];
                let (peak, resident) = cur_val[s];
                for w in 0..words {
                    let mut r = ready[w];
                    while r != 0 {
                        let v = w * 64 + r.trailing_zeros() as usize;
                        r &= r - 1;
                        // run v's pending folded ancestors, then v
                        scratch.copy_from_slice(bits);
                        let mut res = resident;
                        let mut pk = peak;
                        for &u in self.pulls[v].iter().chain(core::iter::once(&v)) {
                            if bit(&scratch, u) {
                                continue;
                            }
                            let extra = if level == 0 && scratch.iter().all(|&x| x == 0) {
                                self.step0_extra
                            } else {
                                0
                            };
                            pk = pk.max(self.step_bytes(res, u).saturating_add(extra));
                            scratch[u / 64] |= 1 << (u % 64);
                            res = self.after(res, u, |q| bit(&scratch, q));
                        }
                        if pk >= upper {
                            continue; // cannot beat the best heuristic
                        }
                        let h = hasher.hash_one(&scratch[..]);
                        let found =
                            table.find(h, |&i| nxt_bits[i * words..(i + 1) * words] == scratch[..]);
                        match found {
                            Some(&i) => {
                                if pk < nxt_val[i].0 {
                                    nxt_val[i].0 = pk;
                                    nxt_trail[i] = (s, v);
                                }
                            }
                            None => {
                                let i = nxt_val.len();
                                nxt_bits.extend_from_slice(&scratch);
                                // ready: minus v, plus successors now ready
                                let base = nxt_ready.len();
                                nxt_ready.extend_from_slice(ready);
                                nxt_ready[base + v / 64] &= !(1 << (v % 64));
                                for &x in &self.main_succs[v] {
                                    if self.main_preds[x].iter().all(|&p| bit(&scratch, p)) {
                                        nxt_ready[base + x / 64] |= 1 << (x % 64);
                                    }
                                }
                                nxt_val.push((pk, res));
                                nxt_trail.push((s, v));
                                let nb = &nxt_bits;
                                table.insert_unique(h, i, |&j| {
                                    hasher.hash_one(&nb[j * words..(j + 1) * words])
                                });
                            }
                        }
                    }
                }
            }
            drop(table);
            if nxt_val.is_empty() {
                return Search {
                    order: None,
                    truncated,
                    states,
                };
            }
            if nxt_val.len() > width {
                truncated = true;
                let mut idx: Vec<usize> = (0..nxt_val.len()).collect();
                idx.sort_by_key(|&i| (nxt_val[i], i));
                idx.truncate(width);
                idx.sort_unstable();
                let pick = |v: &Vec<u64>| -> Vec<u64> {
                    idx.iter()
                        .flat_map(|&i| v[i * words..(i + 1) * words].iter().copied())
                        .collect()
                };
                nxt_bits = pick(&nxt_bits);
                nxt_ready = pick(&nxt_ready);
                nxt_val = idx.iter().map(|&i| nxt_val[i]).collect();
                nxt_trail = idx.iter().map(|&i| nxt_trail[i]).collect();
            }
            cur_bits = nxt_bits;
            cur_ready = nxt_ready;
            cur_val = nxt_val;
            trail.push(nxt_trail);
        }
        // the one full set: walk the trail back
        let mut order = alloc::vec![0usize; levels];
        let mut s = 0usize;
        for level in (0..levels).rev() {
            let (p, v) = trail[level][s];
            order[level] = v;
            s = p;
        }
        Search {
            order: Some(order),
            truncated,
            states,
        }
    }
}

/// The live-set lower bound of a lowered problem without gears: the most bytes live at one
/// step (the figure of [`crate::bound::lower_bound`], a layer above; recomputed here).
fn live_peak(problem: &crate::problem::Problem) -> Result<u64> {
    let steps = usize::try_from(problem.steps).unwrap_or(usize::MAX);
    let mut delta: Vec<i128> = alloc::vec![0; steps.saturating_add(1)];
    for b in &problem.buffers {
        let s = usize::try_from(b.start).unwrap_or(usize::MAX).min(steps);
        let e = usize::try_from(b.end.saturating_add(1))
            .unwrap_or(usize::MAX)
            .min(steps);
        delta[s] += i128::from(b.size);
        delta[e] -= i128::from(b.size);
    }
    let (mut cur, mut peak) = (0i128, 0i128);
    for d in delta.iter().take(steps) {
        cur += d;
        peak = peak.max(cur);
    }
    u64::try_from(peak).map_err(|_| Error::overflow("live bytes"))
}

struct Search {
    order: Option<Vec<usize>>,
    truncated: bool,
    states: u64,
}
