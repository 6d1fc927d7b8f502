//! Runtime allocators beside static plans: replay a problem's tensor trace (allocate at the
//! producer's step, free after the last use, in schedule order) through a simulated allocator
//! and report what it costs. See [`trace`] for the trace, [`allocators`] for the allocators,
//! [`tiered`] for multi-level placement.

pub mod allocators;
pub mod tiered;
pub mod trace;

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::problem::{BufferId, Problem};
use allocators::Allocator;
use trace::Event;

/// Which allocator to simulate, with its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocatorKind {
    /// [`allocators::FixedBlockPool`]: pool size and block size in bytes.
    Pool {
        /// Pool size, bytes.
        pool_bytes: u64,
        /// Block size, bytes.
        block_bytes: u64,
    },
    /// [`allocators::ReuseManager`]: alignment of created buffers, table capacity.
    Reuse {
        /// Alignment of created buffers, bytes.
        alignment: u64,
        /// Most buffers the table holds.
        capacity: usize,
    },
    /// [`allocators::BestFitCoalescing`]: request rounding in bytes.
    Bfc {
        /// Request rounding, bytes.
        alignment: u64,
    },
}

impl AllocatorKind {
    /// Short name: `pool`, `reuse`, `bfc`.
    pub fn name(&self) -> &'static str {
        match self {
            AllocatorKind::Pool { .. } => "pool",
            AllocatorKind::Reuse { .. } => "reuse",
            AllocatorKind::Bfc { .. } => "bfc",
        }
    }
}

/// Bytes in use and held after one step's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepStat {
    /// Bytes allocated so far (as taken by the allocator).
    pub allocated: u64,
    /// Bytes freed so far.
    pub freed: u64,
    /// Bytes in use now (`allocated - freed`).
    pub current: u64,
    /// Bytes held from the device now.
    pub reserved: u64,
}

/// A buffer still allocated at the end that is not a graph output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Leak {
    /// The buffer.
    pub buffer: BufferId,
    /// Its name.
    pub name: String,
    /// The op that produced it, if known.
    pub producer_op: Option<String>,
    /// Its size, bytes.
    pub bytes: u64,
}

/// What a simulated allocator did with a trace.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SimReport {
    /// Allocator name.
    pub allocator: String,
    /// Largest `offset + size` handed out: the arena this run needed, bytes.
    pub peak_bytes: u64,
    /// Most bytes held from the device at once (pool: the pool size).
    pub reserved_bytes: u64,
    /// Most bytes in use at once.
    pub peak_in_use_bytes: u64,
    /// Sum of all allocations, bytes.
    pub total_allocated: u64,
    /// Sum of all frees, bytes.
    pub total_freed: u64,
    /// Bytes still in use after the last step: the leaks (graph outputs go to the caller).
    pub current_bytes: u64,
    /// Number of successful allocations.
    pub allocations: u64,
    /// Number of frees.
    pub frees: u64,
    /// Allocations that failed (pool exhausted, table full).
    pub failures: u64,
    /// Buffers that got no memory.
    pub failed: Vec<BufferId>,
    /// `1 - largest free chunk / total free` inside the reserved region, at the step with the
    /// most bytes in use (0 when nothing is free).
    pub fragmentation_at_peak: f64,
    /// Buffers never freed that are not graph outputs.
    pub leaks: Vec<Leak>,
    /// Offset of each buffer (`None` if its allocation failed).
    pub offsets: Vec<Option<u64>>,
    /// Per step, after its events.
    pub steps: Vec<StepStat>,
}

/// Replays `problem`'s trace ([`trace::events`]) through the allocator `kind`.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for bad allocator settings; [`crate::ErrorKind::Overflow`].
pub fn simulate(problem: &Problem, kind: &AllocatorKind) -> Result<SimReport> {
    match kind {
        AllocatorKind::Pool {
            pool_bytes,
            block_bytes,
        } => run(
            problem,
            kind.name(),
            &mut allocators::FixedBlockPool::new(*pool_bytes, *block_bytes)?,
        ),
        AllocatorKind::Reuse {
            alignment,
            capacity,
        } => run(
            problem,
            kind.name(),
            &mut allocators::ReuseManager::new(*alignment, *capacity),
        ),
        AllocatorKind::Bfc { alignment } => run(
            problem,
            kind.name(),
            &mut allocators::BestFitCoalescing::new(*alignment),
        ),
    }
}

/// Replays the trace through any [`Allocator`].
///
/// # Errors
/// [`crate::ErrorKind::Overflow`].
pub fn run(problem: &Problem, name: &str, a: &mut dyn Allocator) -> Result<SimReport> {
    let n = problem.buffers.len();
    let mut offsets: Vec<Option<u64>> = alloc::vec![None; n];
    let mut taken: Vec<u64> = alloc::vec![0; n];
    let mut r = SimReport {
        allocator: String::from(name),
        peak_bytes: 0,
        reserved_bytes: 0,
        peak_in_use_bytes: 0,
        total_allocated: 0,
        total_freed: 0,
        current_bytes: 0,
        allocations: 0,
        frees: 0,
        failures: 0,
        failed: Vec::new(),
        fragmentation_at_peak: 0.0,
        leaks: Vec::new(),
        offsets: Vec::new(),
        steps: Vec::new(),
    };
    for step in trace::events(problem) {
        for ev in step {
            match ev {
                Event::Alloc(i) => match a.alloc(i, problem.buffers[i].size)? {
                    Some((off, bytes)) => {
                        offsets[i] = Some(off);
                        taken[i] = bytes;
                        r.allocations += 1;
                        r.total_allocated = add(r.total_allocated, bytes, "allocated bytes")?;
                        r.peak_bytes = r.peak_bytes.max(add(off, bytes, "offset + size")?);
                        let current = r.total_allocated - r.total_freed;
                        if current > r.peak_in_use_bytes {
                            r.peak_in_use_bytes = current;
                            let (largest, total) = a.free_space();
                            r.fragmentation_at_peak = if total == 0 {
                                0.0
                            } else {
                                1.0 - largest as f64 / total as f64
                            };
                        }
                        r.reserved_bytes = r.reserved_bytes.max(a.reserved());
                    }
                    None => {
                        r.failures += 1;
                        r.failed.push(i);
                    }
                },
                Event::Free(i) => {
                    if offsets[i].is_some() {
                        a.free(i);
                        r.frees += 1;
                        r.total_freed += taken[i];
                    }
                }
            }
        }
        let current = r.total_allocated - r.total_freed;
        r.steps.push(StepStat {
            allocated: r.total_allocated,
            freed: r.total_freed,
            current,
            reserved: a.reserved(),
        });
    }
    r.current_bytes = r.total_allocated - r.total_freed;
    for i in (0..n).filter(|&i| trace::never_freed(problem, i) && offsets[i].is_some()) {
        let b = &problem.buffers[i];
        let producer_op = b
            .producer
            .and_then(|s| usize::try_from(s).ok())
            .and_then(|s| problem.ops.get(s))
            .map(|o| o.name.clone());
        r.leaks.push(Leak {
            buffer: i,
            name: b.name.clone(),
            producer_op,
            bytes: taken[i],
        });
    }
    r.offsets = offsets;
    Ok(r)
}

#[cfg(test)]
mod tests;
