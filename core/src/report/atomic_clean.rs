//! Atomic clean by id: the memset ops a plan needs and the ranges each one zeroes
//! (`docs/ge-memory-planning.md` §3).
//!
//! GE's rules (atomic_memory_assigner.cc `SetAtomicCleanOffset`,
//! `CollectAtomicNodeCleanMemInfos`, `MergeCleanMemInfos`; atomic_memory_assigner.h
//! `CleanMemInfo`): each memset op (`AtomicAddrClean` or `MemSet`) zeroes the atomic outputs
//! and workspaces of the ops it is linked to by control edges. Their ranges `(offset, size)`
//! are sorted by memory type, offset and size, then merged where one starts inside or right at
//! the end of the previous one, of the same memory type, unless the previous one is a
//! zero-copy range (user buffers need not be adjacent). A range's size is the tensor's
//! padded size rounded to the block alignment, or to 32 bytes for a zero-copy output.
//!
//! Under `ge.exec.atomicCleanPolicy=0` (centralised, memplan's default) one `AtomicAddrClean`
//! op zeroes every atomic tensor before the graph runs; under policy 1 (`--atomic-separate`)
//! each op with atomic tensors gets its own `MemSet` op right before it. memplan does not
//! model GE's split segments (a merge never crosses a `GraphMemSplitter` boundary) nor the
//! per-tensor clean value (ranges with different values are not merged).

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, round_up, Result};
use crate::plan::{Plan, PlanOptions};
use crate::problem::{BufferKind, Problem};

/// GE cleans zero-copy outputs in ranges rounded to 32 bytes (`CleanMemInfo`'s comment).
pub const ZERO_COPY_CLEAN_ALIGN: u64 = 32;

/// One range a memset op zeroes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CleanRange {
    /// Offset in the memory type's arena, bytes.
    pub offset: u64,
    /// Bytes zeroed.
    pub size: u64,
    /// Memory type (0 = HBM).
    pub memory_type: u32,
    /// A zero-copy output's range (never merged with the next one).
    pub zero_copy: bool,
}

/// One memset op.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MemsetOp {
    /// `AtomicAddrClean` (centralised) or `MemSet_<op>` (per op).
    pub name: String,
    /// The ops whose atomic tensors it zeroes, in schedule order.
    pub cleans_for: Vec<String>,
    /// Its ranges, merged.
    pub ranges: Vec<CleanRange>,
}

/// The memset ops of a plan and how many each policy needs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AtomicCleanReport {
    /// The plan's policy: `true` centralised (policy 0), `false` per op (policy 1).
    pub centralised: bool,
    /// The memset ops of this plan.
    pub memsets: Vec<MemsetOp>,
    /// Memset ops under the centralised policy: 1 if any tensor is atomic, else 0.
    pub memsets_centralised: usize,
    /// Memset ops under the per-op policy: one per op with atomic tensors.
    pub memsets_per_op: usize,
}

/// Sorts and merges `ranges` as `MergeCleanMemInfos` does.
fn merge(mut ranges: Vec<CleanRange>) -> Vec<CleanRange> {
    ranges.sort_by_key(|r| (r.memory_type, r.offset, r.size));
    let mut out: Vec<CleanRange> = Vec::new();
    for r in ranges {
        if let Some(last) = out.last_mut() {
            let end = last.offset.saturating_add(last.size);
            if last.memory_type == r.memory_type
                && !last.zero_copy
                && last.offset <= r.offset
                && r.offset <= end
            {
                last.size = last.size.max(r.offset.saturating_add(r.size) - last.offset);
                continue;
            }
        }
        out.push(r);
    }
    out
}

/// The atomic-clean report of `plan` (made on `problem` with `options`).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] when a range's size overflows `u64`.
pub fn atomic_clean(
    problem: &Problem,
    plan: &Plan,
    options: &PlanOptions,
) -> Result<AtomicCleanReport> {
    let unaligned = PlanOptions {
        alignment: 1,
        ..options.clone()
    };
    // per op step: its atomic ranges
    let mut by_op: alloc::collections::BTreeMap<u64, Vec<CleanRange>> = Default::default();
    for (i, b) in problem.buffers.iter().enumerate() {
        if !b.flags.atomic_clean {
            continue;
        }
        let Some(&offset) = plan.offsets.get(i) else {
            continue;
        };
        let zero_copy = options.zero_copy_io
            && matches!(b.kind, BufferKind::GraphOutput | BufferKind::GraphInput)
            || b.flags.zero_copy;
        let padded = unaligned.planned_size(b)?;
        let align = if zero_copy {
            ZERO_COPY_CLEAN_ALIGN
        } else {
            plan.alignment.max(1)
        };
        let size = round_up(padded, align, "atomic clean range")?;
        add(offset, size, "atomic clean range end")?;
        by_op
            .entry(b.producer.unwrap_or(b.start))
            .or_default()
            .push(CleanRange {
                offset,
                size,
                memory_type: b.memory_type,
                zero_copy,
            });
    }
    let op_name = |step: u64| {
        usize::try_from(step)
            .ok()
            .and_then(|s| problem.ops.get(s))
            .map_or_else(|| alloc::format!("step {step}"), |o| o.name.clone())
    };
    let memsets = if options.atomic_centralised {
        if by_op.is_empty() {
            Vec::new()
        } else {
            alloc::vec![MemsetOp {
                name: "AtomicAddrClean".into(),
                cleans_for: by_op.keys().map(|&s| op_name(s)).collect(),
                ranges: merge(by_op.values().flatten().copied().collect()),
            }]
        }
    } else {
        by_op
            .iter()
            .map(|(&s, r)| MemsetOp {
                name: alloc::format!("MemSet_{}", op_name(s)),
                cleans_for: alloc::vec![op_name(s)],
                ranges: merge(r.clone()),
            })
            .collect()
    };
    Ok(AtomicCleanReport {
        centralised: options.atomic_centralised,
        memsets,
        memsets_centralised: usize::from(!by_op.is_empty()),
        memsets_per_op: by_op.len(),
    })
}
