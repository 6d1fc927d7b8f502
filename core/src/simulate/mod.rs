//! Runtime allocators beside static plans: replay a problem's tensor trace (allocate at the
//! producer's step, free after the last use, in schedule order) through a simulated allocator
//! and report what it costs. See [`trace`] for the trace, [`registry`] for the allocators by
//! name (`pool`, `reuse`, `bfc`, `acl-pool`, `acl-tiered`, `ge-v1`, `ge-v2`, `ge-v2-streams`),
//! [`tiered`] for
//! whole-life multi-level placement. `docs/runtime-allocators.md` gives every rule's source.
//!
//! Memory and time scale with the buffers (trace events), never with step numbers.

pub mod access;
pub mod acl_pool;
pub mod acl_tiered;
pub mod allocators;
pub mod extents;
pub mod ge_v1;
pub mod ge_v2;
mod max_tree;
pub mod per_stream;
pub mod registry;
mod runs;
pub mod tiered;
pub mod trace;

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::problem::{BufferId, Problem};
use allocators::Allocator;
use trace::Event;

pub use acl_tiered::TierPolicy;

/// Which allocator to simulate, with its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocatorKind {
    /// [`allocators::FixedBlockPool`] (`pool`): pool size and block size in bytes.
    Pool {
        /// Pool size, bytes.
        pool_bytes: u64,
        /// Block size, bytes.
        block_bytes: u64,
    },
    /// [`allocators::ReuseManager`] (`reuse`): alignment of created buffers, table capacity.
    Reuse {
        /// Alignment of created buffers, bytes.
        alignment: u64,
        /// Most buffers the table holds.
        capacity: usize,
    },
    /// [`allocators::BestFitCoalescing`] (`bfc`): request rounding in bytes.
    Bfc {
        /// Request rounding, bytes.
        alignment: u64,
    },
    /// [`acl_pool::AclPool`] (`acl-pool`): one block per request from a free-block stack.
    AclPool {
        /// Block size, bytes.
        block_bytes: u64,
        /// Number of blocks.
        num_blocks: u64,
    },
    /// [`acl_tiered::AclTiered`] (`acl-tiered`): one pool per level, the caller picks.
    AclTiered {
        /// Levels, fastest first.
        levels: Vec<tiered::Level>,
        /// Block size of every level, bytes.
        block_bytes: u64,
        /// How the caller picks a level.
        policy: TierPolicy,
        /// Tensor name → level name, overriding the policy.
        mapping: Vec<(String, String)>,
    },
    /// [`ge_v1::GeV1`] (`ge-v1`): GE's V1 active-memory allocator.
    GeV1 {
        /// Device blocks larger than this are rounded up to whole pages, bytes.
        page_bytes: u64,
    },
    /// [`ge_v2::GeV2`] (`ge-v2`): GE's V2 scalable (span/page caching) allocator.
    GeV2 {
        /// Page size, bytes.
        page_bytes: u64,
        /// Device bytes held above which idle memory is recycled; larger requests fail.
        threshold_bytes: u64,
    },
    /// [`per_stream::GeV2PerStream`] (`ge-v2-streams`): GE V2 with one allocator per stream.
    GeV2PerStream {
        /// Page size, bytes.
        page_bytes: u64,
        /// Each stream's threshold, bytes.
        threshold_bytes: u64,
    },
}

impl AllocatorKind {
    /// The registry name: `pool`, `reuse`, `bfc`, `acl-pool`, `acl-tiered`, `ge-v1`, `ge-v2`,
    /// `ge-v2-streams`.
    pub fn name(&self) -> &'static str {
        match self {
            AllocatorKind::Pool { .. } => "pool",
            AllocatorKind::Reuse { .. } => "reuse",
            AllocatorKind::Bfc { .. } => "bfc",
            AllocatorKind::AclPool { .. } => "acl-pool",
            AllocatorKind::AclTiered { .. } => "acl-tiered",
            AllocatorKind::GeV1 { .. } => "ge-v1",
            AllocatorKind::GeV2 { .. } => "ge-v2",
            AllocatorKind::GeV2PerStream { .. } => "ge-v2-streams",
        }
    }
}

/// The acl-adapter article's two switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SimSwitches {
    /// Statistics on: counters, peaks, fragmentation, per-step occupancy. Off: only offsets
    /// and failures are reported (what the caller of the allocator sees).
    pub stats: bool,
    /// Leak detector on: a record per allocation, and the leaks at the end. Off: neither.
    pub leak_detector: bool,
    /// Leak detector: most records it holds at once (`None`: unbounded). A record is held from
    /// its allocation to its free; an allocation made while every slot is taken gets no
    /// record, so if it leaks the leak is missed (the acl-adapter article's fixed record
    /// table; memplan's reading: a free empties its slot).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub record_capacity: Option<u64>,
}

impl Default for SimSwitches {
    fn default() -> Self {
        SimSwitches {
            stats: true,
            leak_detector: true,
            record_capacity: None,
        }
    }
}

/// Bytes in use and held after one step's events.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepStat {
    /// The op step (steps without events are not listed: nothing changed).
    pub step: u64,
    /// Bytes allocated so far (as taken by the allocator).
    pub allocated: u64,
    /// Bytes freed so far.
    pub freed: u64,
    /// Bytes in use now (`allocated - freed`).
    pub current: u64,
    /// Bytes held from the device now.
    pub reserved: u64,
    /// Tiered allocators: bytes in use per level now (fastest first); empty otherwise.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub levels: Vec<u64>,
}

/// One level of a tiered allocator, now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LevelUse {
    /// Level name (`L1`, `DDR`).
    pub name: String,
    /// Capacity in bytes (whole blocks; `u64::MAX`-ish when unbounded).
    pub capacity: u64,
    /// Bytes in use now.
    pub in_use: u64,
    /// Allocations placed in this level so far.
    pub allocations: u64,
    /// Of those, allocations that asked a faster level first (spilled down).
    pub spilled_in: u64,
    /// Requests that asked this level first and got no memory anywhere.
    pub failures: u64,
}

/// Per level, over the whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LevelStat {
    /// The level at the end (counters over the whole run).
    pub level: LevelUse,
    /// Most bytes in use in this level at once.
    pub peak_in_use: u64,
}

/// The record the leak detector keeps per allocation (the acl-adapter article keeps pointer,
/// size, file, line and function; the op that produced the tensor stands in for the last
/// three).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AllocRecord {
    /// The buffer.
    pub buffer: BufferId,
    /// Its name.
    pub name: String,
    /// The op that allocated it (its producer), if known.
    pub op: Option<String>,
    /// Bytes requested.
    pub requested: u64,
    /// Bytes the allocator took for it.
    pub taken: u64,
    /// Its offset.
    pub offset: u64,
    /// Tiered allocators: the level's name.
    pub level: Option<String>,
    /// Step of the allocation.
    pub alloc_step: u64,
    /// Step after which it was freed (`None`: still allocated at the end).
    pub free_step: Option<u64>,
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
    /// The switches this run had.
    pub switches: SimSwitches,
    /// Largest `offset + size` handed out: the address range this run touched, bytes.
    pub peak_bytes: u64,
    /// Most bytes held from the device at once (pool: the pool size).
    pub reserved_bytes: u64,
    /// Bytes asked from the system beyond the reserved bytes (`aligned_alloc`'s alignment and
    /// pointer-sized header per system allocation), bytes.
    pub system_overhead_bytes: u64,
    /// Most bytes in use at once (as taken by the allocator, rounding included).
    pub peak_in_use_bytes: u64,
    /// Sum of all requests, bytes.
    pub total_requested: u64,
    /// Sum of all allocations (as taken), bytes.
    pub total_allocated: u64,
    /// Sum of all frees, bytes.
    pub total_freed: u64,
    /// Bytes still in use after the last step: the leaks (graph outputs go to the caller).
    pub current_bytes: u64,
    /// Number of successful allocations.
    pub allocations: u64,
    /// Successful allocations served from memory an earlier allocation used and gave back
    /// (a reuse or cache hit), for every allocator that reuses.
    pub cache_hits: u64,
    /// Candidates the allocators' searches examined, over all requests: the search cost
    /// (`pool`: blocks scanned; `reuse`: table entries; `bfc`: one size-ordered lookup;
    /// `acl-pool`: one stack pop; `acl-tiered`: free extents; `ge-v1`: active blocks;
    /// `ge-v2`: page-count layers).
    #[cfg_attr(feature = "serde", serde(default))]
    pub probes: u64,
    /// Allocations the leak detector could not record (its table was full,
    /// [`SimSwitches::record_capacity`]); leaks among them are not reported.
    #[cfg_attr(feature = "serde", serde(default))]
    pub records_dropped: u64,
    /// Host↔device bytes copied per run because a runtime allocator's graph inputs and
    /// outputs are its own memory, not the user's buffers (not zero-copy): every graph input
    /// copied in, every graph output copied out.
    #[cfg_attr(feature = "serde", serde(default))]
    pub io_transfer_bytes: u64,
    /// Bytes copied per run for tensors in host memory (types `HOST`, `HOST_SVM`) that device
    /// ops read: the tensor's size once per reader (at least once).
    #[cfg_attr(feature = "serde", serde(default))]
    pub cross_type_transfer_bytes: u64,
    /// Bytes read and written per run in each level (tiered allocators: the level each
    /// buffer was placed in, fastest first; others: the buffers' memory types), statistics
    /// on; price them with [`access::price`] ([`access`] gives the rules).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub access: Vec<access::LevelBytes>,
    /// Number of frees.
    pub frees: u64,
    /// Allocations that failed (pool exhausted, request too large, table full).
    pub failures: u64,
    /// Buffers that got no memory.
    pub failed: Vec<BufferId>,
    /// `1 - largest free chunk / total free` inside the reserved region, at the step with the
    /// most bytes in use (0 when nothing is free).
    pub fragmentation_at_peak: f64,
    /// Buffers never freed that are not graph outputs (leak detector on).
    pub leaks: Vec<Leak>,
    /// One record per allocation (leak detector on).
    pub records: Vec<AllocRecord>,
    /// Offset of each buffer (`None` if its allocation failed).
    pub offsets: Vec<Option<u64>>,
    /// After each step that has events, in step order (statistics on).
    pub steps: Vec<StepStat>,
    /// Tiered allocators: per level (statistics on).
    pub levels: Vec<LevelStat>,
}

/// Replays `problem`'s trace ([`trace::events`]) through the allocator `kind`, statistics and
/// leak detector on.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for bad allocator settings; [`crate::ErrorKind::Overflow`].
pub fn simulate(problem: &Problem, kind: &AllocatorKind) -> Result<SimReport> {
    simulate_with(problem, kind, SimSwitches::default())
}

/// [`simulate`] with the statistics and leak-detector switches.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_with(
    problem: &Problem,
    kind: &AllocatorKind,
    switches: SimSwitches,
) -> Result<SimReport> {
    let name = kind.name();
    match kind {
        AllocatorKind::Pool {
            pool_bytes,
            block_bytes,
        } => run(
            problem,
            name,
            &mut allocators::FixedBlockPool::new(*pool_bytes, *block_bytes)?,
            switches,
        ),
        AllocatorKind::Reuse {
            alignment,
            capacity,
        } => run(
            problem,
            name,
            &mut allocators::ReuseManager::new(*alignment, *capacity),
            switches,
        ),
        AllocatorKind::Bfc { alignment } => run(
            problem,
            name,
            &mut allocators::BestFitCoalescing::new(*alignment),
            switches,
        ),
        AllocatorKind::AclPool {
            block_bytes,
            num_blocks,
        } => run(
            problem,
            name,
            &mut acl_pool::AclPool::new(*block_bytes, *num_blocks)?,
            switches,
        ),
        AllocatorKind::AclTiered {
            levels,
            block_bytes,
            policy,
            mapping,
        } => run(
            problem,
            name,
            &mut acl_tiered::AclTiered::new(problem, levels, *block_bytes, *policy, mapping)?,
            switches,
        ),
        AllocatorKind::GeV1 { page_bytes } => {
            run(problem, name, &mut ge_v1::GeV1::new(*page_bytes)?, switches)
        }
        AllocatorKind::GeV2 {
            page_bytes,
            threshold_bytes,
        } => run(
            problem,
            name,
            &mut ge_v2::GeV2::new(*page_bytes, *threshold_bytes)?,
            switches,
        ),
        AllocatorKind::GeV2PerStream {
            page_bytes,
            threshold_bytes,
        } => {
            // a first replay finds each stream's range, the second lays the ranges apart
            let mut first = per_stream::GeV2PerStream::new(
                problem,
                *page_bytes,
                *threshold_bytes,
                Default::default(),
            )?;
            run(problem, name, &mut first, SimSwitches::default())?;
            let bases = first.bases()?;
            run(
                problem,
                name,
                &mut per_stream::GeV2PerStream::new(problem, *page_bytes, *threshold_bytes, bases)?,
                switches,
            )
        }
    }
}

fn producer_op(problem: &Problem, i: BufferId) -> Option<String> {
    problem.buffers[i]
        .producer
        .and_then(|s| usize::try_from(s).ok())
        .and_then(|s| problem.ops.get(s))
        .map(|o| o.name.clone())
}

/// Replays the trace through any [`Allocator`].
///
/// # Errors
/// [`crate::ErrorKind::Overflow`].
pub fn run(
    problem: &Problem,
    name: &str,
    a: &mut dyn Allocator,
    switches: SimSwitches,
) -> Result<SimReport> {
    let n = problem.buffers.len();
    let mut offsets: Vec<Option<u64>> = alloc::vec![None; n];
    let mut taken: Vec<u64> = alloc::vec![0; n];
    let mut record_of: Vec<Option<usize>> = alloc::vec![None; n];
    // the tiered level each buffer was placed in (at its allocation)
    let mut level_at: Vec<Option<usize>> = alloc::vec![None; n];
    let mut r = SimReport {
        allocator: String::from(name),
        switches,
        peak_bytes: 0,
        reserved_bytes: 0,
        system_overhead_bytes: 0,
        peak_in_use_bytes: 0,
        total_requested: 0,
        total_allocated: 0,
        total_freed: 0,
        current_bytes: 0,
        allocations: 0,
        cache_hits: 0,
        probes: 0,
        records_dropped: 0,
        io_transfer_bytes: 0,
        cross_type_transfer_bytes: 0,
        access: Vec::new(),
        frees: 0,
        failures: 0,
        failed: Vec::new(),
        fragmentation_at_peak: 0.0,
        leaks: Vec::new(),
        records: Vec::new(),
        offsets: Vec::new(),
        steps: Vec::new(),
        levels: Vec::new(),
    };
    let mut level_peaks: Vec<u64> = Vec::new();
    let mut current = 0u64;
    // leak-detector records held now (allocated, not yet freed)
    let mut held_records = 0u64;
    for step in trace::events(problem) {
        let mut evs = step.events;
        if a.largest_first_per_step() {
            // allocations come first in a step; sort them by size, largest first (stable)
            let k = evs
                .iter()
                .take_while(|e| matches!(e, Event::Alloc(_)))
                .count();
            evs[..k].sort_by_key(|e| match e {
                Event::Alloc(i) | Event::Free(i) => core::cmp::Reverse(problem.buffers[*i].size),
            });
        }
        for ev in evs {
            match ev {
                Event::Alloc(i) => match a.alloc(i, problem.buffers[i].size)? {
                    Some((off, bytes)) => {
                        offsets[i] = Some(off);
                        taken[i] = bytes;
                        level_at[i] = a.level_of(i);
                        current = add(current, bytes, "bytes in use")?;
                        r.peak_bytes = r.peak_bytes.max(add(off, bytes, "offset + size")?);
                        if switches.stats {
                            r.allocations += 1;
                            r.total_requested = add(
                                r.total_requested,
                                problem.buffers[i].size,
                                "requested bytes",
                            )?;
                            r.total_allocated = add(r.total_allocated, bytes, "allocated bytes")?;
                            if current > r.peak_in_use_bytes {
                                r.peak_in_use_bytes = current;
                                let (largest, total) = a.free_space();
                                r.fragmentation_at_peak = if total == 0 {
                                    0.0
                                } else {
                                    1.0 - largest.min(total) as f64 / total as f64
                                };
                            }
                            r.reserved_bytes = r.reserved_bytes.max(a.reserved());
                            let levels = a.levels();
                            level_peaks.resize(levels.len(), 0);
                            for (p, l) in level_peaks.iter_mut().zip(&levels) {
                                *p = (*p).max(l.in_use);
                            }
                        }
                        let room = switches
                            .record_capacity
                            .is_none_or(|cap| held_records < cap);
                        if switches.leak_detector && !room {
                            r.records_dropped += 1;
                        }
                        if switches.leak_detector && room {
                            held_records += 1;
                            let level = a
                                .level_of(i)
                                .and_then(|k| a.levels().get(k).map(|l| l.name.clone()));
                            record_of[i] = Some(r.records.len());
                            r.records.push(AllocRecord {
                                buffer: i,
                                name: problem.buffers[i].name.clone(),
                                op: producer_op(problem, i),
                                requested: problem.buffers[i].size,
                                taken: bytes,
                                offset: off,
                                level,
                                alloc_step: step.step,
                                free_step: None,
                            });
                        }
                    }
                    None => {
                        r.failures += 1;
                        r.failed.push(i);
                    }
                },
                Event::Free(i) => {
                    if offsets[i].is_some() {
                        a.free(i);
                        current -= taken[i];
                        if switches.stats {
                            r.frees += 1;
                            r.total_freed += taken[i];
                        }
                        if let Some(k) = record_of[i] {
                            r.records[k].free_step = Some(step.step);
                            held_records -= 1;
                        }
                    }
                }
            }
        }
        if switches.stats {
            let levels: Vec<u64> = a.levels().iter().map(|l| l.in_use).collect();
            r.steps.push(StepStat {
                step: step.step,
                allocated: r.total_allocated,
                freed: r.total_freed,
                current: r.total_allocated - r.total_freed,
                reserved: a.reserved(),
                levels,
            });
        }
    }
    if let Some(e) = a.extent() {
        r.peak_bytes = e;
    }
    if switches.stats {
        r.current_bytes = r.total_allocated - r.total_freed;
        r.cache_hits = a.cache_hits();
        r.probes = a.probes();
        let (io, cross) = transfer_bytes(problem)?;
        r.io_transfer_bytes = io;
        r.cross_type_transfer_bytes = cross;
        let names: Vec<String> = a.levels().into_iter().map(|l| l.name).collect();
        r.access = if names.is_empty() {
            // every buffer in its memory type; a failed allocation is not counted
            access::by_memory_type_of(problem, |i| offsets[i].is_some())?
        } else {
            access::level_bytes(problem, &names, |i| offsets[i].and(level_at[i]))?
        };
        r.system_overhead_bytes = a.system_overhead();
        r.levels = a
            .levels()
            .into_iter()
            .zip(level_peaks.iter().copied().chain(core::iter::repeat(0)))
            .map(|(level, peak_in_use)| LevelStat { level, peak_in_use })
            .collect();
    }
    if switches.leak_detector {
        for rec in r.records.iter().filter(|rec| rec.free_step.is_none()) {
            if trace::never_freed(problem, rec.buffer) {
                r.leaks.push(Leak {
                    buffer: rec.buffer,
                    name: rec.name.clone(),
                    producer_op: rec.op.clone(),
                    bytes: rec.taken,
                });
            }
        }
    }
    r.offsets = offsets;
    Ok(r)
}

/// `(graph I/O bytes, host-memory bytes read by device ops)` copied per run (see
/// [`SimReport::io_transfer_bytes`], [`SimReport::cross_type_transfer_bytes`]).
fn transfer_bytes(problem: &Problem) -> Result<(u64, u64)> {
    use crate::problem::BufferKind;
    let (mut io, mut cross) = (0u64, 0u64);
    for b in &problem.buffers {
        if matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput) {
            io = add(io, b.size, "graph I/O transfer bytes")?;
        }
        // memory types 2 HOST, 3 HOST_SVM (plan::memory_type_name)
        if matches!(b.memory_type, 2 | 3) {
            let reads = (b.readers.len() as u64).max(1);
            let bytes = crate::error::mul(b.size, reads, "host-memory transfer bytes")?;
            cross = add(cross, bytes, "host-memory transfer bytes")?;
        }
    }
    Ok((io, cross))
}

#[cfg(test)]
mod tests;
