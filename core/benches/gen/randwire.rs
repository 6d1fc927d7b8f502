//! Randomly wired graphs in the style of RandWire (Xie, Kirillov, Girshick, He, "Exploring
//! randomly wired neural networks for image recognition", ICCV 2019), the irregular networks on
//! which Serenity (Ahn et al., MLSys 2020) measured 1.68× lower peaks by op order.
//!
//! Each stage is a Watts–Strogatz graph (`nodes` on a ring, each joined to its `k / 2`
//! neighbours on either side; each edge rewired to a random node with probability
//! `p_permille / 1000`) made a DAG by pointing every edge from the lower node index to the
//! higher. A node is one op (RandWire's weighted sum, ReLU, separable conv, batch norm) that
//! reads its predecessors' outputs, or the stage input when it has none, and writes one
//! tensor; the stage's output op averages the nodes nobody reads. Every tensor of stage `s`
//! has `base_bytes >> s` bytes (each stage halves the resolution and doubles the channels).
//!
//! The file lists the ops breadth first (Kahn's algorithm, ops in the order they become
//! ready), as a framework export lists a graph built level by level; RandWire's own node
//! numbering is the ring's, which already keeps neighbours together.
//!
//! Deterministic by seed (SplitMix64, integer arithmetic only).
#![allow(
    clippy::cast_possible_truncation,
    clippy::needless_range_loop,
    dead_code
)]

use std::collections::VecDeque;

use memplan_core::graph::ScheduleOrder;
use memplan_core::{Graph, Op, Tensor, TensorId};

use super::Rng;

/// The generator's settings.
#[derive(Debug, Clone, Copy)]
pub struct RandWire {
    /// Stages, one after the other.
    pub stages: usize,
    /// Nodes per stage (RandWire: 32).
    pub nodes: usize,
    /// Ring neighbours per node, even (RandWire WS: 4).
    pub k: usize,
    /// Rewiring probability in thousandths (RandWire WS: 750).
    pub p_permille: u64,
    /// Bytes of a stage-0 tensor (default 32 × 56 × 56 × 4 B = 401,408 B).
    pub base_bytes: u64,
    /// Seed.
    pub seed: u64,
}

impl RandWire {
    /// RandWire's WS(k = 4, p = 0.75) stages of `nodes` nodes.
    pub fn ws(stages: usize, nodes: usize, seed: u64) -> Self {
        RandWire {
            stages,
            nodes,
            k: 4,
            p_permille: 750,
            base_bytes: 32 * 56 * 56 * 4,
            seed,
        }
    }

    /// The graph: `stages × (nodes + 1)` ops, breadth-first file order.
    pub fn graph(&self) -> Graph {
        let mut rng = Rng(self.seed ^ 0x5241_4E44_5749_5245);
        let mut tensors = vec![Tensor::with_bytes("image", self.base_bytes)];
        let mut ops: Vec<Op> = Vec::new();
        let mut stage_in = 0usize;
        for s in 0..self.stages {
            let bytes = (self.base_bytes >> s).max(1);
            let edges = self.ws_edges(&mut rng);
            let n = self.nodes;
            let first_tensor = tensors.len();
            for i in 0..n {
                tensors.push(Tensor::with_bytes(format!("s{s}n{i}"), bytes));
            }
            let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
            let mut has_succ = vec![false; n];
            for &(a, b) in &edges {
                preds[b].push(a);
                has_succ[a] = true;
            }
            let mut stage_ops: Vec<Op> = (0..n)
                .map(|i| {
                    let inputs = if preds[i].is_empty() {
                        vec![TensorId::new(stage_in)]
                    } else {
                        preds[i]
                            .iter()
                            .map(|&p| TensorId::new(first_tensor + p))
                            .collect()
                    };
                    Op {
                        name: format!("s{s}n{i}"),
                        op_type: "SepConv".into(),
                        inputs,
                        outputs: vec![TensorId::new(first_tensor + i)],
                        ..Op::default()
                    }
                })
                .collect();
            tensors.push(Tensor::with_bytes(format!("s{s}out"), bytes));
            let out = tensors.len() - 1;
            stage_ops.push(Op {
                name: format!("s{s}out"),
                op_type: "Mean".into(),
                inputs: (0..n)
                    .filter(|&i| !has_succ[i])
                    .map(|i| TensorId::new(first_tensor + i))
                    .collect(),
                outputs: vec![TensorId::new(out)],
                ..Op::default()
            });
            // breadth first over the stage's nodes (node order breaks ties)
            let mut indeg: Vec<usize> = preds.iter().map(Vec::len).collect();
            let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
            for &(a, b) in &edges {
                succs[a].push(b);
            }
            let mut q: VecDeque<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
            let mut order = Vec::with_capacity(n);
            while let Some(v) = q.pop_front() {
                order.push(v);
                for &w in &succs[v] {
                    indeg[w] -= 1;
                    if indeg[w] == 0 {
                        q.push_back(w);
                    }
                }
            }
            let mut slots: Vec<Option<Op>> = stage_ops.into_iter().map(Some).collect();
            for v in order {
                ops.extend(slots[v].take());
            }
            ops.extend(slots[n].take());
            stage_in = out;
        }
        Graph {
            name: format!(
                "randwire-{}x{}-k{}-p{}-{}",
                self.stages, self.nodes, self.k, self.p_permille, self.seed
            ),
            tensors,
            ops,
            inputs: vec![TensorId::new(0)],
            outputs: vec![TensorId::new(stage_in)],
            order: ScheduleOrder::File,
        }
    }

    /// Watts–Strogatz edges `(a, b)`, `a < b`, no duplicates.
    fn ws_edges(&self, rng: &mut Rng) -> Vec<(usize, usize)> {
        let n = self.nodes;
        let mut adj = vec![vec![false; n]; n];
        let half = (self.k / 2).min(n.saturating_sub(1) / 2).max(1);
        let mut list = Vec::new();
        for i in 0..n {
            for j in 1..=half {
                let b = (i + j) % n;
                if b != i && !adj[i][b] {
                    adj[i][b] = true;
                    adj[b][i] = true;
                    list.push((i, b));
                }
            }
        }
        for e in &mut list {
            if rng.below(1000) < self.p_permille {
                let (a, b) = *e;
                // a new end for a: any node not a and not yet joined to it
                let free: Vec<usize> = (0..n).filter(|&u| u != a && !adj[a][u]).collect();
                if let Some(&u) = free.get(rng.below(free.len() as u64) as usize) {
                    adj[a][b] = false;
                    adj[b][a] = false;
                    adj[a][u] = true;
                    adj[u][a] = true;
                    *e = (a, u);
                }
            }
        }
        let mut edges: Vec<(usize, usize)> = list
            .into_iter()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    }
}
