//! The runtime event trace of a problem: allocate at the producer's step, free after the last
//! use, in schedule order — what a runtime without a static plan (acl-adapter style) does.

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

/// Whether a runtime that frees by reference count never frees this buffer: an op output
/// nobody consumes (its live range ends at its producer's step) that is not a graph output.
pub fn never_freed(problem: &Problem, i: BufferId) -> bool {
    let b = &problem.buffers[i];
    b.kind == BufferKind::Activation && b.producer == Some(b.start) && b.end == b.start
}

/// Events per step, `steps` entries: at step `t`, first the allocations of every buffer that
/// starts at `t` (problem order), then the frees of every buffer whose last use is `t`.
/// Graph outputs are freed after the last step (the caller takes them); never-freed buffers
/// ([`never_freed`]) get no free event.
pub fn events(problem: &Problem) -> Vec<Vec<Event>> {
    let steps = usize::try_from(problem.steps).unwrap_or(usize::MAX).min(
        problem
            .buffers
            .iter()
            .map(|b| {
                usize::try_from(b.end)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1)
            })
            .max()
            .unwrap_or(0),
    );
    let len = steps.max(1);
    let mut out: Vec<Vec<Event>> = alloc::vec![Vec::new(); len];
    let clamp = |x: u64| usize::try_from(x).unwrap_or(usize::MAX).min(len - 1);
    let mut frees: Vec<(usize, BufferId)> = Vec::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        let s = clamp(b.start);
        out[s].push(Event::Alloc(i));
        if !never_freed(problem, i) {
            frees.push((clamp(b.end), i));
        }
    }
    for (t, i) in frees {
        out[t].push(Event::Free(i));
    }
    out
}
