//! Single-op mode: each op run alone, as GE's single-op execution runs it
//! (`docs/ge-memory-planning.md` §9).
//!
//! GE's rules (runtime/v1/single_op): an op is built as a one-op model whose inputs and
//! outputs are the caller's buffers (zero-copy), so the memory GE allocates for it is the
//! model's memory minus its zero-copy part: its workspaces (single_op.cc
//! `SingleOpImpl::MallocOnExecute`: `mem_size − zero_copy_size`). Each stream keeps one such
//! buffer (stream_resource.cc `InternalAllocator::Malloc`): a request no larger than the
//! buffer reuses it; a larger one frees it and allocates the larger size. So a stream's
//! device memory is the largest op's workspace total on it, and it is reallocated each time a
//! new largest op runs.
//!
//! A workspace's size is planned as in a graph (the plan options' padding and alignment:
//! GE's `ceil512(ceil32(bytes) + 32)` by default); an op's workspaces are live together.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::plan::PlanOptions;
use crate::problem::{BufferKind, Problem};

/// One op run alone.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SingleOp {
    /// Op name.
    pub name: String,
    /// Its stream.
    pub stream: u32,
    /// Bytes of its inputs and outputs: the caller's buffers, not GE's (raw sizes).
    pub user_bytes: u64,
    /// Bytes GE allocates for it: its workspaces, planned sizes summed.
    pub workspace_bytes: u64,
}

/// Per stream: the one buffer its ops share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SingleOpStream {
    /// Stream id.
    pub stream: u32,
    /// Device bytes held at the end: the largest op's workspace total.
    pub device_bytes: u64,
    /// Device allocations made in schedule order (the first, then each larger op's).
    pub allocations: u64,
}

/// Every op alone, and the device memory per stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SingleOpReport {
    /// Per op, in schedule order.
    pub ops: Vec<SingleOp>,
    /// Per stream, ascending.
    pub streams: Vec<SingleOpStream>,
    /// Device bytes over all streams.
    pub device_bytes: u64,
}

/// The single-op view of `problem` (a graph's schedule; empty for bare buffer lists) with
/// `options`' padding and alignment.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] when sizes overflow `u64`.
pub fn single_op(problem: &Problem, options: &PlanOptions) -> Result<SingleOpReport> {
    let n = problem.ops.len();
    let mut ops: Vec<SingleOp> = problem
        .ops
        .iter()
        .map(|o| SingleOp {
            name: o.name.clone(),
            stream: o.stream,
            user_bytes: 0,
            workspace_bytes: 0,
        })
        .collect();
    for (k, o) in problem.ops.iter().enumerate() {
        for &i in &o.inputs {
            if let (Some(b), Some(op)) = (problem.buffers.get(i.index()), ops.get_mut(k)) {
                op.user_bytes = add(op.user_bytes, b.size, "single-op user bytes")?;
            }
        }
    }
    for b in &problem.buffers {
        let Some(k) = b.producer.and_then(|s| usize::try_from(s).ok()) else {
            continue;
        };
        let Some(op) = ops.get_mut(k) else {
            continue;
        };
        if b.kind == BufferKind::Workspace {
            let planned = options.planned_size(b)?;
            op.workspace_bytes = add(op.workspace_bytes, planned, "single-op workspace")?;
        } else {
            op.user_bytes = add(op.user_bytes, b.size, "single-op user bytes")?;
        }
    }
    let mut held: BTreeMap<u32, SingleOpStream> = BTreeMap::new();
    for op in ops.iter().take(n) {
        let s = held.entry(op.stream).or_insert(SingleOpStream {
            stream: op.stream,
            device_bytes: 0,
            allocations: 0,
        });
        // InternalAllocator::Malloc: 0 bytes allocates nothing; no larger than the buffer
        // reuses it; larger frees it and allocates anew.
        if op.workspace_bytes > s.device_bytes {
            s.device_bytes = op.workspace_bytes;
            s.allocations += 1;
        }
    }
    let streams: Vec<SingleOpStream> = held.into_values().collect();
    let device_bytes = streams.iter().try_fold(0u64, |t, s| {
        add(t, s.device_bytes, "single-op device bytes")
    })?;
    ops.truncate(n);
    Ok(SingleOpReport {
        ops,
        streams,
        device_bytes,
    })
}
