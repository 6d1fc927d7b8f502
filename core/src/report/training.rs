//! Training memory: a forward graph's training step as a problem to plan beside inference
//! (`docs/ge-memory-planning.md` §10 gives the rules with figures worked out by hand).
//!
//! The schedule: forward op `k` at step `k` (`n` ops), its backward at step `2n − 1 − k`
//! (reverse order), the optimizer update at step `2n`. memplan's rules, per buffer:
//! - an **activation** (an op's output, or a graph input) is kept until the backward of every
//!   op that reads it (a backward reads its op's inputs): its end becomes
//!   `max(forward end, 2n − 1 − r)` over its readers `r`; a graph output is kept until its
//!   producer's backward;
//! - its **gradient** (same size; none for graph inputs or tensors nobody reads) is made by
//!   the backward of its last reader, `2n − 1 − max r` (a graph output's by the loss, at step
//!   `n`), and lives until its producer's backward `2n − 1 − p` reads it;
//! - a **workspace** of op `k` is needed again, at the same size, by op `k`'s backward;
//! - a **weight gradient** (the weight's size) is made by the backward of the last op reading
//!   the weight and lives until the optimizer update (`2n`);
//! - **optimizer state** is kept across steps with the weights, so like the weights it is not
//!   in the arena: SGD none, SGD with momentum 1× the weights, Adam 2× (first and second
//!   moments).
//!
//! Not modelled: ops whose backward reads their output rather than their input (Sigmoid,
//! Exp), recomputation, gradients of graph inputs, mixed-precision master weights.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, mul, Error, Result};
use crate::graph::{Graph, Lowered};
use crate::problem::{Buffer, BufferKind, Problem};

/// The optimizer whose state training keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Optimizer {
    /// Plain SGD: no state.
    Sgd,
    /// SGD with momentum: one velocity per weight (1× the weights).
    Momentum,
    /// Adam: two moments per weight (2× the weights).
    Adam,
}

impl Optimizer {
    /// `sgd`, `momentum` or `adam`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] naming the accepted values.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "sgd" => Ok(Optimizer::Sgd),
            "momentum" => Ok(Optimizer::Momentum),
            "adam" => Ok(Optimizer::Adam),
            other => Err(Error::bad_option(format!(
                "unknown optimizer '{other}' (sgd, momentum or adam)"
            ))),
        }
    }

    /// State bytes per weight byte.
    pub fn state_factor(self) -> u64 {
        match self {
            Optimizer::Sgd => 0,
            Optimizer::Momentum => 1,
            Optimizer::Adam => 2,
        }
    }
}

/// The training step of a forward graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Training {
    /// Forward, backward and update as one problem (steps `0 ..= 2n`): activations kept for
    /// the backward, activation and weight gradients, workspaces twice.
    pub problem: Problem,
    /// Bytes of the weights read by the graph's ops (kept across steps, not in the arena).
    pub weight_bytes: u64,
    /// Bytes of the weights' gradients (in the arena, in `problem`).
    pub weight_grad_bytes: u64,
    /// Optimizer state bytes (kept across steps, not in the arena).
    pub optimizer_state_bytes: u64,
}

/// The training step of `graph` (lowered as `lowered`) with `optimizer`.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] when sizes or steps overflow `u64`;
/// [`crate::ErrorKind::Invalid`] for a graph without ops.
pub fn training(graph: &Graph, lowered: &Lowered, optimizer: Optimizer) -> Result<Training> {
    let n = lowered.schedule.len() as u64;
    if n == 0 {
        return Err(Error::invalid("a training step needs at least one op"));
    }
    let last_bwd = mul(n, 2, "training steps")? - 1; // backward of op 0
    let update = last_bwd + 1;
    let bwd = |k: u64| last_bwd - k;
    let mut buffers: Vec<Buffer> = Vec::new();
    for b in &lowered.problem.buffers {
        if b.kind == BufferKind::Workspace {
            let mut f = Buffer::new(b.name.clone(), b.size, b.start, b.end);
            f.kind = BufferKind::Workspace;
            let k = b.producer.unwrap_or(b.start);
            let mut g = Buffer::new(format!("{}@backward", b.name), b.size, bwd(k), bwd(k));
            g.kind = BufferKind::Workspace;
            buffers.push(f);
            buffers.push(g);
            continue;
        }
        let output = b.kind == BufferKind::GraphOutput;
        let mut end = b.end;
        for &r in &b.readers {
            end = end.max(bwd(r.min(n - 1)));
        }
        if let (true, Some(p)) = (output, b.producer) {
            end = end.max(bwd(p));
        }
        let mut keep = Buffer::new(b.name.clone(), b.size, b.start, end);
        keep.kind = b.kind;
        buffers.push(keep);
        // its gradient
        let Some(p) = b.producer else {
            continue;
        };
        let start = match (output, b.readers.iter().max()) {
            (true, _) => n,
            (false, Some(&r)) => bwd(r.min(n - 1)),
            (false, None) => continue,
        };
        buffers.push(Buffer::new(
            format!("grad({})", b.name),
            b.size,
            start,
            bwd(p).max(start),
        ));
    }
    // weights: the last op (in the schedule) reading each one
    let mut last_reader: BTreeMap<usize, u64> = BTreeMap::new();
    for (k, op) in lowered.schedule.iter().enumerate() {
        let Some(op) = graph.ops.get(op.index()) else {
            continue;
        };
        for &t in &op.inputs {
            if graph.tensors.get(t.index()).is_some_and(|x| x.constant) {
                last_reader.insert(t.index(), k as u64);
            }
        }
    }
    let (mut weight_bytes, mut weight_grad_bytes) = (0u64, 0u64);
    for (&t, &k) in &last_reader {
        let w = &graph.tensors[t];
        // a weight's size needs no dim binding (weights have fixed shapes)
        let Some(bytes) = w.size(&crate::Bindings::new())? else {
            continue;
        };
        weight_bytes = add(weight_bytes, bytes, "training weight bytes")?;
        weight_grad_bytes = add(weight_grad_bytes, bytes, "training weight gradients")?;
        buffers.push(Buffer::new(
            format!("grad({})", w.name),
            bytes,
            bwd(k),
            update,
        ));
    }
    let mut problem = Problem::from_buffers(format!("{} (training)", graph.name), buffers);
    problem.steps = problem.steps.max(update + 1);
    Ok(Training {
        problem,
        weight_bytes,
        weight_grad_bytes,
        optimizer_state_bytes: mul(
            weight_bytes,
            optimizer.state_factor(),
            "optimizer state bytes",
        )?,
    })
}

/// A training step's figures for the plan file and tables.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TrainingSummary {
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Live-set lower bound of the training step's arena, raw bytes.
    pub lower_bound_bytes: u64,
    /// Weights, kept apart (not in the arena).
    pub weight_bytes: u64,
    /// Weight gradients (in the arena).
    pub weight_grad_bytes: u64,
    /// Optimizer state, kept apart.
    pub optimizer_state_bytes: u64,
    /// Per strategy: the training step's planned arena, bytes.
    pub plans: Vec<(String, u64)>,
}
