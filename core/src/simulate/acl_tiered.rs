//! `acl-tiered`: the acl-adapter article's tiered memory manager — one pool per level (L1, L2,
//! L3, DDR by default, fastest first) with 64-byte blocks; the *caller* picks the level of each
//! allocation.
//!
//! Rules (acl-adapter article, "tiered memory manager"), and where memplan has to choose:
//! 1. Each level is a pool of `capacity / block` blocks (block 64 B by default), its base
//!    aligned to 64 B and obtained with `aligned_alloc` (one system allocation per level: the
//!    alignment and a pointer-sized header are counted as system overhead).
//! 2. The article's pool hands out one block per request; tensors are larger than 64 B, so
//!    here a request takes `ceil(size / block)` consecutive free blocks of its level, lowest
//!    first (first fit) — the rule of memplan's `pool`.
//! 3. The caller picks the level. Policy [`TierPolicy::Frequency`], the article's "by access
//!    frequency": frequency = uses per step of the tensor's life. The trace knows two uses of a
//!    tensor (its producer's write and its last consumer's read), so frequency =
//!    `2 / live steps`: a tensor used at least once per step (live ≤ 2 steps) asks for level 0
//!    (L1), at least every 2nd step (≤ 4 steps) level 1, every 4th (≤ 8) level 2, and so on:
//!    level `k` for frequency ≥ 2^−k, the last level for anything colder. If the level asked
//!    for is full the caller asks the next slower level (a spill, counted); the allocation
//!    fails only when no slower level has room. [`TierPolicy::Fastest`]: every tensor asks
//!    for level 0 first.
//! 4. A user mapping (tensor name → level name) overrides the policy for that tensor: the
//!    caller asks exactly that level and gets NULL (a failed allocation) if it is full.
//!
//! Offsets are reported in one address space, the levels laid end to end (level `k` starts
//! after the capacities of the faster levels); a level of unbounded capacity must be last.
//! The reported peak is the levels' highest used bytes summed, not the largest offset.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::acl_pool::{aligned_alloc_overhead, BASE_ALIGNMENT};
use super::allocators::Allocator;
use super::extents::FreeExtents;
use super::tiered::Level;
use crate::error::{add, Error, Result};
use crate::problem::{BufferId, Problem};

/// How the caller picks a tensor's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum TierPolicy {
    /// By access frequency (uses per step), hot tensors in fast levels; see the module rules.
    #[default]
    Frequency,
    /// Every tensor asks for the fastest level first.
    Fastest,
}

impl TierPolicy {
    /// `frequency` or `fastest`.
    pub fn name(self) -> &'static str {
        match self {
            TierPolicy::Frequency => "frequency",
            TierPolicy::Fastest => "fastest",
        }
    }

    /// Parses [`TierPolicy::name`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] naming the known policies.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "frequency" => Ok(TierPolicy::Frequency),
            "fastest" => Ok(TierPolicy::Fastest),
            _ => Err(Error::bad_option(alloc::format!(
                "unknown tier policy '{}' (known: frequency, fastest)",
                s.chars().take(40).collect::<String>()
            ))),
        }
    }
}

/// The level a tensor live for `live_steps` steps asks for under [`TierPolicy::Frequency`]:
/// `k` with `2 / live ≥ 2^−k`, i.e. `ceil(log2(live)) − 1` (0 for `live ≤ 2`), at most `last`.
pub fn frequency_level(live_steps: u64, last: usize) -> usize {
    let ceil_log2 = if live_steps <= 1 {
        0
    } else {
        64 - (live_steps - 1).leading_zeros() as usize
    };
    ceil_log2.saturating_sub(1).min(last)
}

struct Tier {
    block: u64,
    base: u64,
    free: FreeExtents,
    in_use: u64,
    capacity: u64,
    /// Unbounded (capacity `u64::MAX`): reserved grows with the highest block used.
    unbounded: bool,
    /// Highest block end used so far.
    top: u64,
}

/// The tiered manager (see the module rules).
pub struct AclTiered {
    names: Vec<String>,
    tiers: Vec<Tier>,
    /// Per buffer: the level it asks for first, and whether it is pinned there (user mapping).
    ask: Vec<(usize, bool)>,
    held: BTreeMap<BufferId, (usize, u64, u64)>,
    /// Per level: allocations placed, spills received, failures of requests asking it first.
    counts: Vec<(u64, u64, u64)>,
    hits: u64,
    probes: u64,
}

/// Checks the options of an acl-tiered manager that do not depend on the tensors: at least
/// one level, a block of at least 1 byte, only the last level unbounded, every mapped level
/// one of `levels` (what a form can say before any model is planned).
///
/// # Errors
/// [`crate::ErrorKind::BadOption`], naming the level or the mapping.
pub fn check_options(
    levels: &[Level],
    block_bytes: u64,
    mapping: &[(String, String)],
) -> Result<()> {
    if levels.is_empty() {
        return Err(Error::bad_option("acl-tiered needs at least one level"));
    }
    if block_bytes == 0 {
        return Err(Error::bad_option(
            "acl-tiered block size must be at least 1 byte",
        ));
    }
    if let Some(l) = levels[..levels.len() - 1]
        .iter()
        .find(|l| l.capacity == u64::MAX)
    {
        return Err(Error::bad_option(alloc::format!(
            "acl-tiered: only the last level may be unbounded ('{}' is not last)",
            l.name
        )));
    }
    if let Some((tensor, level)) = mapping
        .iter()
        .find(|(_, level)| !levels.iter().any(|l| &l.name == level))
    {
        return Err(Error::bad_option(alloc::format!(
            "acl-tiered mapping {tensor}={level}: no level '{level}'"
        )));
    }
    Ok(())
}

impl AclTiered {
    /// A manager over `levels` (fastest first) with `block_bytes` blocks, for `problem`'s
    /// tensors; `mapping` pins tensors (by name) to levels (by name).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] for no levels, a 0 block size, an unbounded level that is
    /// not last, a mapping naming an unknown level or tensor.
    pub fn new(
        problem: &Problem,
        levels: &[Level],
        block_bytes: u64,
        policy: TierPolicy,
        mapping: &[(String, String)],
    ) -> Result<Self> {
        check_options(levels, block_bytes, mapping)?;
        let mut tiers = Vec::new();
        let mut base = 0u64;
        for l in levels {
            let blocks = l.capacity / block_bytes;
            let capacity = blocks.saturating_mul(block_bytes);
            tiers.push(Tier {
                block: block_bytes,
                base,
                free: FreeExtents::new(blocks),
                in_use: 0,
                capacity,
                unbounded: l.capacity == u64::MAX,
                top: 0,
            });
            base = base.saturating_add(capacity);
        }
        let last = levels.len() - 1;
        let mut ask: Vec<(usize, bool)> = problem
            .buffers
            .iter()
            .map(|b| match policy {
                TierPolicy::Fastest => (0, false),
                TierPolicy::Frequency => (
                    frequency_level(b.end.saturating_sub(b.start).saturating_add(1), last),
                    false,
                ),
            })
            .collect();
        for (tensor, level) in mapping {
            let k = levels
                .iter()
                .position(|l| &l.name == level)
                .ok_or_else(|| {
                    Error::bad_option(alloc::format!(
                        "acl-tiered mapping {tensor}={level}: no level '{level}'"
                    ))
                })?;
            let i = problem
                .buffers
                .iter()
                .position(|b| &b.name == tensor)
                .ok_or_else(|| {
                    Error::bad_option(alloc::format!(
                        "acl-tiered mapping {tensor}={level}: no tensor '{tensor}'"
                    ))
                })?;
            ask[i] = (k, true);
        }
        Ok(AclTiered {
            names: levels.iter().map(|l| l.name.clone()).collect(),
            counts: alloc::vec![(0, 0, 0); levels.len()],
            hits: 0,
            probes: 0,
            tiers,
            ask,
            held: BTreeMap::new(),
        })
    }
}

impl Allocator for AclTiered {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        if size == 0 {
            return Ok(Some((0, 0)));
        }
        let (first, pinned) = self.ask.get(id.index()).copied().unwrap_or((0, false));
        let last = if pinned { first } else { self.tiers.len() - 1 };
        for k in first..=last {
            let t = &mut self.tiers[k];
            let blocks = size.div_ceil(t.block);
            let (found, probes) = t.free.take_first_fit(blocks);
            self.probes += probes;
            if let Some(b) = found {
                // first fit keeps [0, top) used at some time: below the top is a reuse
                if b < t.top {
                    self.hits += 1;
                }
                let taken = blocks * t.block;
                t.in_use += taken;
                t.top = t.top.max(b + blocks);
                self.held.insert(id, (k, b, blocks));
                self.counts[k].0 += 1;
                if k > first {
                    self.counts[k].1 += 1;
                }
                let off = add(t.base, b * t.block, "acl-tiered offset")?;
                return Ok(Some((off, taken)));
            }
        }
        self.counts[first].2 += 1;
        Ok(None)
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }

    fn free(&mut self, id: BufferId) {
        if let Some((k, b, blocks)) = self.held.remove(&id) {
            let t = &mut self.tiers[k];
            t.free.give(b, blocks);
            t.in_use -= blocks * t.block;
        }
    }

    fn reserved(&self) -> u64 {
        self.tiers.iter().fold(0u64, |a, t| {
            let held = if t.unbounded {
                t.top.saturating_mul(t.block)
            } else {
                t.capacity
            };
            a.saturating_add(held)
        })
    }

    fn free_space(&self) -> (u64, u64) {
        // Per level (a request never spans levels): the levels' largest free runs summed
        // against their free bytes summed; an unbounded level counts up to its top only.
        self.tiers.iter().fold((0, 0), |(m, s), t| {
            let (largest, total) = if t.unbounded {
                let below = t.top - t.in_use / t.block;
                (below.min(t.free.free_space().0), below)
            } else {
                t.free.free_space()
            };
            (
                m.saturating_add(largest.saturating_mul(t.block)),
                s.saturating_add(total.saturating_mul(t.block)),
            )
        })
    }

    fn extent(&self) -> Option<u64> {
        Some(
            self.tiers
                .iter()
                .fold(0u64, |a, t| a.saturating_add(t.top.saturating_mul(t.block))),
        )
    }

    fn system_overhead(&self) -> u64 {
        aligned_alloc_overhead(BASE_ALIGNMENT) * self.tiers.len() as u64
    }

    fn levels(&self) -> Vec<super::LevelUse> {
        self.tiers
            .iter()
            .zip(&self.names)
            .zip(&self.counts)
            .map(|((t, n), c)| super::LevelUse {
                name: n.clone(),
                capacity: t.capacity,
                in_use: t.in_use,
                allocations: c.0,
                spilled_in: c.1,
                failures: c.2,
            })
            .collect()
    }

    fn level_of(&self, id: BufferId) -> Option<usize> {
        self.held.get(&id).map(|h| h.0)
    }
}
