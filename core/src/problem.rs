//! The planning problem: buffers with sizes in bytes and live ranges in op steps.
//!
//! # Interval convention (the only one in this crate)
//!
//! A live range is **inclusive**: `[start, end]`, both in op steps, `start <= end`. Op `k` of the
//! schedule runs at step `k`. A tensor lives from its producer's step to its last consumer's
//! step, as GE and TFLite count. Two buffers' live ranges intersect iff
//! `a.start <= b.end && b.start <= a.end`, so touching ranges (`a.end == b.start`) conflict:
//! an op's output may not overwrite the input it is still reading.
//!
//! Half-open formats are converted at the boundary: MiniMalloc's `[lower, upper)` becomes
//! `[lower, upper - 1]` ([`crate::import::csv`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, Result};

crate::ids::typed_id!(
    /// Index of a buffer in [`Problem::buffers`]; a plan's per-buffer vectors
    /// ([`crate::Plan::offsets`], [`crate::Plan::sizes`]) are indexed like it.
    BufferId,
    "buffer #"
);

/// What a buffer holds; GE treats each kind differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BufferKind {
    /// An op's output consumed by other ops (a feature map).
    #[default]
    Activation,
    /// A graph (model) input: GE makes it zero-copy (a user buffer), placed after feature maps.
    GraphInput,
    /// A graph (model) output: zero-copy in GE, like inputs.
    GraphOutput,
    /// Scratch memory of one op, live only at its step.
    Workspace,
    /// A constant or weight. Normally reported apart and not planned in the activation arena.
    Constant,
}

/// Per-buffer flags that forbid or change reuse (GE's reuse blockers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Flags {
    /// Never shares memory with another buffer (GE: `OP_NO_REUSE_MEM`, `no_reuse_mem_flag`).
    pub no_reuse: bool,
    /// A user buffer at run time (GE: graph I/O zero-copy), not reused, placed apart.
    pub zero_copy: bool,
    /// On a graph input or output that is zero-copy ([`crate::PlanOptions::zero_copy_io`]):
    /// its index is in GE's `ge.exec.inputReuseMemIndexes` / `outputReuseMemIndexes`, so it
    /// takes part in reuse over its live range as under
    /// [`crate::PlanOptions::zero_copy_reuse`], for this buffer only.
    pub zero_copy_reuse: bool,
    /// Cleared by a centralised memset before the graph runs (GE: atomic-clean), not reused,
    /// placed after all blocks.
    pub atomic_clean: bool,
}

/// Membership in a group of buffers that must be adjacent in memory, in `index` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Continuous {
    /// Group id, unique in the problem.
    pub group: u32,
    /// Position in the group, from 0.
    pub index: u32,
    /// `true` for an op's continuous outputs (GE: one block for all), `false` for continuous
    /// inputs (GE: one block each, adjacent in input order).
    pub outputs: bool,
}

/// One buffer to place: `size` bytes live over the inclusive step range `[start, end]`.
///
/// `Default` (and so a serialised buffer that leaves a field out) is an empty plain buffer at
/// `[0, 0]` with alignment 1.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Buffer {
    /// Name (tensor name, or CSV id); unique in the problem.
    pub name: String,
    /// Size in bytes, before any strategy padding.
    pub size: u64,
    /// First step live (inclusive).
    pub start: u64,
    /// Last step live (inclusive), `>= start`.
    pub end: u64,
    /// What the buffer holds.
    pub kind: BufferKind,
    /// Stream the producing op runs on (GE: reuse within a stream at level 1).
    pub stream: u32,
    /// Dynamic-batch gear this buffer belongs to (GE `_batch_label = "Batch_N"` with `N` here);
    /// buffers of different gears never run together, so they may overlap.
    pub gear: Option<u64>,
    /// Memory type (0 = HBM); GE keeps free lists per memory type.
    pub memory_type: u32,
    /// Reuse blockers.
    pub flags: Flags,
    /// Continuous group membership, if any.
    pub continuous: Option<Continuous>,
    /// Step of the producing op; `None` for graph inputs and CSV buffers.
    pub producer: Option<u64>,
    /// Steps of the ops that read the buffer (or write it in place through a ref alias),
    /// ascending, the producer's step excluded. Empty for CSV buffers, where `end` stands for
    /// the last reader. With several streams ([`OpInfo::stream`]) the validator needs them:
    /// a reader on another stream may still run after the producer's stream has moved on
    /// (GE block_mem_stream.cc `GetDiffStreamMaxLifeTime`).
    pub readers: Vec<u64>,
    /// Names of other tensors sharing this buffer's address (GE ref/in-place symbols).
    pub aliases: Vec<String>,
    /// Required offset alignment in bytes (>= 1); combined with the plan's alignment by their
    /// least common multiple.
    pub alignment: u64,
    /// A fixed offset the plan must use (MiniMalloc CSV `offset` column).
    pub fixed_offset: Option<u64>,
}

impl Default for Buffer {
    fn default() -> Self {
        Buffer {
            name: String::new(),
            size: 0,
            start: 0,
            end: 0,
            kind: BufferKind::default(),
            stream: 0,
            gear: None,
            memory_type: 0,
            flags: Flags::default(),
            continuous: None,
            producer: None,
            readers: Vec::new(),
            aliases: Vec::new(),
            alignment: 1,
            fixed_offset: None,
        }
    }
}

impl Buffer {
    /// A plain activation buffer of `size` bytes live over inclusive `[start, end]`.
    pub fn new(name: impl Into<String>, size: u64, start: u64, end: u64) -> Self {
        Buffer {
            name: name.into(),
            size,
            start,
            end,
            ..Buffer::default()
        }
    }

    /// Whether the two live ranges intersect (inclusive convention).
    pub fn overlaps_in_time(&self, other: &Buffer) -> bool {
        self.start <= other.end && other.start <= self.end
    }

    /// Whether the two buffers may not share a byte: their live ranges intersect and they can
    /// run together (not two different gears).
    pub fn conflicts(&self, other: &Buffer) -> bool {
        self.overlaps_in_time(other) && gears_can_coexist(self.gear, other.gear)
    }
}

/// Whether buffers of these gears can be live together: only one gear runs at a time.
pub fn gears_can_coexist(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// One op of the schedule: what GE's stream and no-reuse rules need beyond the buffers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct OpInfo {
    /// Op name.
    pub name: String,
    /// Op type (`Conv`, `MatMul`, ...).
    pub op_type: String,
    /// Stream the op runs on.
    pub stream: u32,
    /// Steps of the ops this op waits for: its direct data-edge predecessors and its
    /// control (event) predecessors, ascending. With [`OpInfo::stream`] these are the only
    /// orderings between streams; ops of one stream run in step order.
    pub preds: Vec<u64>,
    /// The buffers the op reads, in its input order (GE input anchors; a buffer read twice
    /// appears once, at its first input). GE releases the blocks an op frees in this order
    /// (block_mem_assigner.cc `ReleaseInputNodeOutMemory` over `GetSortAllInDataAnchors`).
    pub inputs: Vec<BufferId>,
}

/// A planning problem: buffers and, optionally, the ops of the schedule (one per step).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Problem {
    /// Name of the model or file.
    pub name: String,
    /// The buffers to place.
    pub buffers: Vec<Buffer>,
    /// Number of op steps; every buffer's `end < steps` (`u64::MAX` also admits `end == u64::MAX`).
    pub steps: u64,
    /// The schedule's ops, `ops[k]` at step `k`; empty for bare buffer lists.
    pub ops: Vec<OpInfo>,
    /// Bytes of constants and weights, reported apart and not planned.
    pub weight_bytes: u64,
}

impl Problem {
    /// A problem from bare buffers; `steps` becomes one past the largest `end`.
    pub fn from_buffers(name: impl Into<String>, buffers: Vec<Buffer>) -> Self {
        let steps = buffers
            .iter()
            .map(|b| b.end.saturating_add(1))
            .max()
            .unwrap_or(0);
        Problem {
            name: name.into(),
            buffers,
            steps,
            ..Problem::default()
        }
    }

    /// Checks the problem's own invariants: `start <= end < steps`, alignment >= 1, unique
    /// names, fixed offsets aligned, producers and readers at steps of the schedule, each
    /// op's predecessors at earlier steps.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] naming the first bad buffer.
    pub fn check(&self) -> Result<()> {
        let mut names: Vec<&str> = self.buffers.iter().map(|b| b.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::invalid(alloc::format!(
                "duplicate buffer name '{}'",
                w[0].escape_debug()
            )));
        }
        for b in &self.buffers {
            // names escaped: a control character must not rewrite the terminal
            let at = || alloc::format!("buffer '{}'", b.name.escape_debug());
            if b.start > b.end {
                return Err(Error::invalid(alloc::format!(
                    "live range starts at step {} after it ends at step {}",
                    b.start,
                    b.end
                ))
                .at(at()));
            }
            // `steps == u64::MAX` counts step u64::MAX too (one past it does not fit in u64)
            if b.end >= self.steps && self.steps != u64::MAX {
                return Err(Error::invalid(alloc::format!(
                    "live range ends at step {} but the problem has {} steps",
                    b.end,
                    self.steps
                ))
                .at(at()));
            }
            if b.alignment == 0 {
                return Err(Error::invalid("alignment 0 (must be >= 1)").at(at()));
            }
            // producer and readers are op steps: an index past the schedule reads nothing
            if let Some(&s) = b
                .producer
                .iter()
                .chain(&b.readers)
                .find(|&&s| s >= self.steps && self.steps != u64::MAX)
            {
                return Err(Error::invalid(alloc::format!(
                    "its producer or a reader is at step {s}, but the problem has {} steps",
                    self.steps
                ))
                .at(at()));
            }
            if let Some(off) = b.fixed_offset {
                if off % b.alignment != 0 {
                    return Err(Error::invalid(alloc::format!(
                        "fixed offset {off} is not a multiple of its alignment {}",
                        b.alignment
                    ))
                    .at(at()));
                }
            }
        }
        for (i, o) in self.ops.iter().enumerate() {
            let at = || alloc::format!("op '{}' (step {i})", o.name.escape_debug());
            // ops wait only for ops that ran before them: the schedule is topological
            if let Some(&p) = o.preds.iter().find(|&&p| p >= i as u64) {
                return Err(Error::invalid(alloc::format!(
                    "waits for the op at step {p}, which does not run before it"
                ))
                .at(at()));
            }
        }
        Ok(())
    }

    /// Sum of all buffer sizes, checked.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] if the sum exceeds `u64`.
    pub fn total_bytes(&self) -> Result<u64> {
        self.buffers.iter().try_fold(0u64, |acc, b| {
            crate::error::add(acc, b.size, "sum of buffer sizes")
        })
    }

    /// The distinct gears present, ascending (empty without dynamic batch).
    pub fn gears(&self) -> Vec<u64> {
        let mut g: Vec<u64> = self.buffers.iter().filter_map(|b| b.gear).collect();
        g.sort_unstable();
        g.dedup();
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn touching_ranges_conflict() {
        let a = Buffer::new("a", 4, 0, 2);
        let b = Buffer::new("b", 4, 2, 3);
        let c = Buffer::new("c", 4, 3, 3);
        assert!(a.conflicts(&b));
        assert!(!a.conflicts(&c));
    }

    #[test]
    fn different_gears_never_conflict() {
        let mut a = Buffer::new("a", 4, 0, 2);
        let mut b = Buffer::new("b", 4, 0, 2);
        a.gear = Some(1);
        b.gear = Some(2);
        assert!(!a.conflicts(&b));
        b.gear = None;
        assert!(a.conflicts(&b));
    }

    #[test]
    fn check_refuses_steps_outside_the_schedule() {
        let mut p = Problem::from_buffers("p", alloc::vec![Buffer::new("a", 1, 0, 1)]);
        p.buffers[0].readers = alloc::vec![999];
        let e = p.check().unwrap_err().to_string();
        assert!(
            e.contains("buffer 'a'")
                && e.contains("a reader is at step 999, but the problem has 2 steps"),
            "{e}"
        );
        p.buffers[0].readers.clear();
        p.ops = alloc::vec![OpInfo::default(), OpInfo::default()];
        p.ops[1].name = "B".into();
        p.ops[1].preds = alloc::vec![1];
        let e = p.check().unwrap_err().to_string();
        assert!(
            e.contains("op 'B' (step 1)")
                && e.contains("waits for the op at step 1, which does not run before it"),
            "{e}"
        );
        p.ops[1].preds = alloc::vec![0];
        assert!(p.check().is_ok());
    }

    #[test]
    fn check_names_the_bad_buffer() {
        let mut p = Problem::from_buffers("p", alloc::vec![Buffer::new("a", 1, 0, 1)]);
        p.buffers.push(Buffer::new("a", 1, 0, 0));
        assert!(p
            .check()
            .unwrap_err()
            .to_string()
            .contains("duplicate buffer name 'a'"));
        p.buffers[1].name = "b".into();
        p.buffers[1].start = 2;
        p.buffers[1].end = 1;
        assert_eq!(
            p.check().unwrap_err().to_string(),
            "buffer 'b': live range starts at step 2 after it ends at step 1"
        );
    }
}
