//! The runtime event trace of a problem: allocate at the producer's step, free after the last
//! use, in schedule order — what a runtime without a static plan (acl-adapter style) does.
//!
//! The trace is sparse: only steps where something happens are listed, so its memory scales
//! with the buffers, never with the step numbers (a lifetime may end at `u64::MAX`).

use alloc::vec::Vec;

use crate::problem::{BufferId, BufferKind, Problem};

/// One runtime event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Allocate the buffer (its raw size) at this step.
    Alloc(BufferId),
    /// Free the buffer after this step's op ran.
    Free(BufferId),
}

/// The events of one step (op step number `step`), allocations first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepEvents {
    /// The op step, as in the problem (any `u64`).
    pub step: u64,
    /// Its events: allocations (problem order), then frees (problem order).
    pub events: Vec<Event>,
}

/// Whether a runtime that frees by reference count never frees this buffer: an op output
/// nobody consumes (its live range ends at its producer's step) that is not a graph output.
pub fn never_freed(problem: &Problem, i: BufferId) -> bool {
    let b = &problem.buffers[i];
    b.kind == BufferKind::Activation && b.producer == Some(b.start) && b.end == b.start
}

/// The steps that have events, in step order: at step `t`, first the allocations of every
/// buffer that starts at `t` (problem order), then the frees of every buffer whose last use is
/// `t`. Graph outputs are freed after their last step (the caller takes them); never-freed
/// buffers ([`never_freed`]) get no free event. Memory: `O(buffers)`.
pub fn events(problem: &Problem) -> Vec<StepEvents> {
    // (step, 0 = alloc / 1 = free, buffer)
    let mut all: Vec<(u64, u8, BufferId)> = Vec::with_capacity(2 * problem.buffers.len());
    for (i, b) in problem.buffers.iter().enumerate() {
        let i = BufferId::new(i);
        all.push((b.start, 0, i));
        if !never_freed(problem, i) {
            all.push((b.end.max(b.start), 1, i));
        }
    }
    all.sort_unstable();
    let mut out: Vec<StepEvents> = Vec::new();
    for (step, phase, i) in all {
        let ev = if phase == 0 {
            Event::Alloc(i)
        } else {
            Event::Free(i)
        };
        match out.last_mut() {
            Some(s) if s.step == step => s.events.push(ev),
            _ => out.push(StepEvents {
                step,
                events: alloc::vec![ev],
            }),
        }
    }
    out
}
