//! The runtime allocators by name, with their knobs as data: the CLI's `simulate --allocator`
//! and the playground's `runtime-NAME` panes list them from here.

use alloc::string::String;
use alloc::vec::Vec;

use super::{simulate_with, tiered::Level, AllocatorKind, SimReport, SimSwitches, TierPolicy};
use crate::error::{add, round_up, Result};
use crate::problem::Problem;

/// A knob an allocator reads from [`RuntimeOptions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    /// Name, as the CLI flag (`--block-size`) and the playground field.
    pub name: &'static str,
    /// What it sets, with units and default.
    pub summary: &'static str,
}

/// A registered runtime allocator.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeAllocator {
    /// Name (`acl-pool`); the playground's pane kind is `runtime-` + name.
    pub name: &'static str,
    /// One line: what it simulates.
    pub summary: &'static str,
    /// The knobs it reads.
    pub knobs: &'static [Knob],
    /// Replays a problem's trace with these options.
    pub run: fn(&Problem, &RuntimeOptions) -> Result<SimReport>,
}

/// Every knob of every runtime allocator; `None` means the allocator's default (in its knob's
/// summary).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct RuntimeOptions {
    /// `pool`: pool size, bytes.
    pub pool_bytes: Option<u64>,
    /// `pool`, `acl-pool`: block size, bytes.
    pub block_bytes: Option<u64>,
    /// `acl-pool`: number of blocks.
    pub num_blocks: Option<u64>,
    /// `reuse`, `bfc`: request rounding, bytes.
    pub alignment: u64,
    /// `reuse`: most buffers in the table.
    pub table_capacity: u64,
    /// `acl-tiered`: levels, fastest first.
    pub levels: Vec<Level>,
    /// `acl-tiered`: block size of every level, bytes.
    pub tier_block_bytes: u64,
    /// `acl-tiered`: how the caller picks the level.
    pub policy: TierPolicy,
    /// `acl-tiered`: tensor name → level name.
    pub mapping: Vec<(String, String)>,
    /// `ge-v1`, `ge-v2`: page size, bytes.
    pub page_bytes: Option<u64>,
    /// `ge-v2`: total threshold, bytes.
    pub threshold_bytes: Option<u64>,
    /// Statistics and leak detector.
    pub switches: SimSwitches,
}

/// The acl-adapter tiered manager's default levels: L1 1 MiB, L2 8 MiB, L3 32 MiB, DDR
/// unbounded.
pub fn default_levels() -> Vec<Level> {
    [
        ("L1", 1u64 << 20),
        ("L2", 8 << 20),
        ("L3", 32 << 20),
        ("DDR", u64::MAX),
    ]
    .iter()
    .map(|&(n, c)| Level {
        name: n.into(),
        capacity: c,
    })
    .collect()
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            pool_bytes: None,
            block_bytes: None,
            num_blocks: None,
            alignment: 512,
            table_capacity: 4096,
            levels: default_levels(),
            tier_block_bytes: 64,
            policy: TierPolicy::Frequency,
            mapping: Vec::new(),
            page_bytes: None,
            threshold_bytes: None,
            switches: SimSwitches::default(),
        }
    }
}

const SWITCHES: [Knob; 2] = [
    Knob {
        name: "no-stats",
        summary: "statistics off: only offsets and failures",
    },
    Knob {
        name: "no-leak-detector",
        summary: "leak detector off: no per-allocation records, no leaks",
    },
];

const POOL_KNOBS: &[Knob] = &[
    Knob {
        name: "block-size",
        summary: "block size, bytes (default 2 MiB)",
    },
    Knob {
        name: "pool-size",
        summary: "pool size, bytes (default: every tensor in whole blocks, summed: never runs out)",
    },
    SWITCHES[0],
    SWITCHES[1],
];
const REUSE_KNOBS: &[Knob] = &[
    Knob {
        name: "align",
        summary: "alignment of created buffers, bytes (default 512)",
    },
    Knob {
        name: "table-capacity",
        summary: "most buffers in the table (default 4096)",
    },
    SWITCHES[0],
    SWITCHES[1],
];
const BFC_KNOBS: &[Knob] = &[
    Knob {
        name: "align",
        summary: "request rounding, bytes (default 512)",
    },
    SWITCHES[0],
    SWITCHES[1],
];
const ACL_POOL_KNOBS: &[Knob] = &[
    Knob {
        name: "block-size",
        summary: "block size, bytes (default: the largest tensor rounded up to 64 B, so every request fits a block)",
    },
    Knob {
        name: "num-blocks",
        summary: "number of blocks (default: one per tensor: never exhausted)",
    },
    SWITCHES[0],
    SWITCHES[1],
];
const ACL_TIERED_KNOBS: &[Knob] = &[
    Knob {
        name: "levels",
        summary: "levels fastest first, NAME=BYTES,... the last may be NAME=inf (default L1=1MiB,L2=8MiB,L3=32MiB,DDR=inf)",
    },
    Knob {
        name: "tier-block-size",
        summary: "block size of every level, bytes (default 64)",
    },
    Knob {
        name: "policy",
        summary: "frequency (uses per step: hot tensors in fast levels) or fastest (default frequency)",
    },
    Knob {
        name: "map",
        summary: "TENSOR=LEVEL, repeatable: the caller asks that level for that tensor",
    },
    SWITCHES[0],
    SWITCHES[1],
];
const GE_V1_KNOBS: &[Knob] = &[
    Knob {
        name: "page-size",
        summary: "device blocks larger than a page are rounded up to whole pages, bytes (default 2 MiB, GE kDrvPageSize)",
    },
    SWITCHES[0],
    SWITCHES[1],
];
const GE_V2_KNOBS: &[Knob] = &[
    Knob {
        name: "page-size",
        summary: "span page size, bytes (default 64 KiB, GE 2^page_idem_num with PAGE_SIZE_IDEM_DEFAULT 16)",
    },
    Knob {
        name: "threshold",
        summary: "total threshold: device bytes held above which idle spans are recycled; larger requests fail (default 30 GiB)",
    },
    SWITCHES[0],
    SWITCHES[1],
];

/// Every tensor rounded up to whole `block`s, summed: a pool that never runs out.
fn whole_blocks(p: &Problem, block: u64) -> Result<u64> {
    p.buffers.iter().try_fold(0u64, |acc, b| {
        add(
            acc,
            round_up(b.size, block.max(1), "pool size")?,
            "pool size",
        )
    })
}

fn run_pool(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let block = o.block_bytes.unwrap_or(2 << 20);
    let pool = match o.pool_bytes {
        Some(b) => b,
        None => {
            // a default past the limit is the input's size, not a bad option: no BadOption
            // (the CLI's exit status 2 says the command line was wrong)
            let pool = whole_blocks(p, block)?;
            let n = pool / block.max(1);
            if n > super::allocators::MAX_POOL_BLOCKS {
                return Err(crate::Error::invalid(alloc::format!(
                    "the default pool (every tensor in whole blocks of {block} B) has {n} blocks, more than the simulator's limit of {}: give --pool-size, or larger blocks (--block-size)",
                    super::allocators::MAX_POOL_BLOCKS
                )));
            }
            pool
        }
    };
    let kind = AllocatorKind::Pool {
        pool_bytes: pool,
        block_bytes: block,
    };
    simulate_with(p, &kind, o.switches)
}

fn run_reuse(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let kind = AllocatorKind::Reuse {
        alignment: o.alignment,
        capacity: usize::try_from(o.table_capacity).unwrap_or(usize::MAX),
    };
    simulate_with(p, &kind, o.switches)
}

fn run_bfc(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let kind = AllocatorKind::Bfc {
        alignment: o.alignment,
    };
    simulate_with(p, &kind, o.switches)
}

fn run_acl_pool(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let block = match o.block_bytes {
        Some(b) => b,
        None => {
            let largest = p.buffers.iter().map(|b| b.size).max().unwrap_or(0);
            round_up(largest.max(1), 64, "acl-pool block size")?
        }
    };
    let kind = AllocatorKind::AclPool {
        block_bytes: block,
        num_blocks: o.num_blocks.unwrap_or(p.buffers.len() as u64),
    };
    simulate_with(p, &kind, o.switches)
}

fn run_acl_tiered(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let kind = AllocatorKind::AclTiered {
        levels: o.levels.clone(),
        block_bytes: o.tier_block_bytes,
        policy: o.policy,
        mapping: o.mapping.clone(),
    };
    simulate_with(p, &kind, o.switches)
}

fn run_ge_v1(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let kind = AllocatorKind::GeV1 {
        page_bytes: o.page_bytes.unwrap_or(super::ge_v1::DRV_PAGE),
    };
    simulate_with(p, &kind, o.switches)
}

fn run_ge_v2(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let kind = AllocatorKind::GeV2 {
        page_bytes: o.page_bytes.unwrap_or(super::ge_v2::DEFAULT_PAGE),
        threshold_bytes: o.threshold_bytes.unwrap_or(super::ge_v2::DEFAULT_THRESHOLD),
    };
    simulate_with(p, &kind, o.switches)
}

fn run_ge_v2_streams(p: &Problem, o: &RuntimeOptions) -> Result<SimReport> {
    let kind = AllocatorKind::GeV2PerStream {
        page_bytes: o.page_bytes.unwrap_or(super::ge_v2::DEFAULT_PAGE),
        threshold_bytes: o.threshold_bytes.unwrap_or(super::ge_v2::DEFAULT_THRESHOLD),
    };
    simulate_with(p, &kind, o.switches)
}

const REGISTRY: &[RuntimeAllocator] = &[
    RuntimeAllocator {
        name: "pool",
        summary: "fixed-block pool, first fit: a request takes consecutive free blocks, lowest first",
        knobs: POOL_KNOBS,
        run: run_pool,
    },
    RuntimeAllocator {
        name: "reuse",
        summary: "first-fit reuse manager: reuse the first free buffer that is large enough, else create one",
        knobs: REUSE_KNOBS,
        run: run_reuse,
    },
    RuntimeAllocator {
        name: "bfc",
        summary: "best fit with coalescing (BFC-like arena): split and merge chunks",
        knobs: BFC_KNOBS,
        run: run_bfc,
    },
    RuntimeAllocator {
        name: "acl-pool",
        summary: "acl-adapter fixed-block pool: one block per request from a free-block stack (last freed, first reused); fails when exhausted",
        knobs: ACL_POOL_KNOBS,
        run: run_acl_pool,
    },
    RuntimeAllocator {
        name: "acl-tiered",
        summary: "acl-adapter tiered manager: one 64-byte-block pool per level L1/L2/L3/DDR, the caller picks the level (by access frequency or a mapping)",
        knobs: ACL_TIERED_KNOBS,
        run: run_acl_tiered,
    },
    RuntimeAllocator {
        name: "ge-v1",
        summary: "GE V1 ActiveMemoryAllocator: largest request first into the largest active block (bump cursor), else a new device block; never returned during a run",
        knobs: GE_V1_KNOBS,
        run: run_ge_v1,
    },
    RuntimeAllocator {
        name: "ge-v2",
        summary: "GE V2 ScalableAllocator: page-rounded spans cached in layers by page count, split from larger idle spans, merged with idle buddies on free",
        knobs: GE_V2_KNOBS,
        run: run_ge_v2,
    },
    RuntimeAllocator {
        name: "ge-v2-streams",
        summary: "GE V2 with one ScalableAllocator per stream (its L2 allocators): a span freed on one stream is cached for that stream only",
        knobs: GE_V2_KNOBS,
        run: run_ge_v2_streams,
    },
];

/// The registered runtime allocators, in a fixed order.
pub fn allocators() -> &'static [RuntimeAllocator] {
    REGISTRY
}

/// The allocator called `name`.
pub fn find(name: &str) -> Option<&'static RuntimeAllocator> {
    REGISTRY.iter().find(|a| a.name == name)
}

/// Runs the allocator `name` on `problem`.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for an unknown name (listing the known ones) or bad knobs;
/// [`crate::ErrorKind::Overflow`].
pub fn run(problem: &Problem, name: &str, options: &RuntimeOptions) -> Result<SimReport> {
    let a = find(name).ok_or_else(|| {
        crate::Error::bad_option(alloc::format!(
            "unknown runtime allocator '{}' (known: {})",
            name.chars().take(40).collect::<String>(),
            REGISTRY
                .iter()
                .map(|a| a.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    (a.run)(problem, options)
}
