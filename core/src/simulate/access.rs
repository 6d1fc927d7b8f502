//! Access cost per memory level (the acl-adapter article's statistics: what the tensors'
//! traffic costs in each level of memory they were placed in).
//!
//! **Bytes accessed.** Each op writes its outputs and reads its inputs, so a tensor's buffer
//! is written once (by its producer; a graph input by whoever fills it) and read once per op
//! that reads it (`Buffer::readers`), each time its whole requested size. A buffer that got no
//! memory (a failed allocation) is not counted.
//!
//! **Level.** With a tiered allocator (`acl-tiered`), the level the allocator placed the
//! buffer in (`L1`, `DDR`, ...); otherwise its memory type (`HBM`, `P2P_DDR`, `HOST`,
//! `HOST_SVM`, [`crate::plan::memory_type_name`]), as a static plan places it.
//!
//! **Cost.** `bytes accessed × cost per byte` of the level, in abstract cost units (a
//! relative price, not nanoseconds or joules). The defaults ([`AccessCosts::default`]) only
//! order the usual hierarchy (on-chip buffers cheapest, then L2, device memory, DDR, host
//! memory across the bus); they are not measurements of any chip. Set your own
//! (`memplan simulate --access-cost L1=1,DDR=40,*=16`) for a given device.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, mul, Error, Result};
use crate::problem::Problem;

/// The default cost per byte of a level whose name [`AccessCosts::default`] does not list.
pub const DEFAULT_OTHER_COST: u64 = 16;

/// Cost per byte accessed, per level name, in abstract cost units.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AccessCosts {
    /// `(level name, cost per byte)`; names compared ignoring ASCII case.
    pub levels: Vec<(String, u64)>,
    /// Cost per byte of any other level (`*` in [`AccessCosts::parse`]).
    pub other: u64,
}

impl Default for AccessCosts {
    /// Illustrative relative prices (not measured): `L0A`, `L0B`, `L0C`, `UB`, `L1` 1;
    /// `L2` 4; `HBM` 16; `L3` 8; `DDR`, `P2P_DDR` 32; `HOST`, `HOST_SVM` 128; any other 16.
    fn default() -> Self {
        let l = |n: &str, c: u64| (String::from(n), c);
        AccessCosts {
            levels: alloc::vec![
                l("L0A", 1),
                l("L0B", 1),
                l("L0C", 1),
                l("UB", 1),
                l("L1", 1),
                l("L2", 4),
                l("L3", 8),
                l("HBM", 16),
                l("DDR", 32),
                l("P2P_DDR", 32),
                l("HOST", 128),
                l("HOST_SVM", 128),
            ],
            other: DEFAULT_OTHER_COST,
        }
    }
}

/// Most entries an `--access-cost` list may have.
pub const MAX_COST_ENTRIES: usize = 64;

impl AccessCosts {
    /// The cost per byte of level `name`.
    pub fn cost_of(&self, name: &str) -> u64 {
        self.levels
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or(self.other, |&(_, c)| c)
    }

    /// The defaults with `spec`'s entries over them: `NAME=COST` pairs separated by commas,
    /// `*=COST` for every level not named (`L1=1,DDR=40,*=16`). An empty spec is the defaults.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] for an entry that is not `NAME=COST` with a whole
    /// number, a name given twice, or more than [`MAX_COST_ENTRIES`] entries.
    pub fn parse(spec: &str) -> Result<Self> {
        let mut c = AccessCosts::default();
        let mut seen: Vec<String> = Vec::new();
        let parts: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() > MAX_COST_ENTRIES {
            return Err(Error::bad_option(alloc::format!(
                "access costs: {} entries; at most {MAX_COST_ENTRIES}",
                parts.len()
            )));
        }
        for part in parts {
            let (name, cost) = part.split_once('=').ok_or_else(|| {
                Error::bad_option(alloc::format!("access costs: '{part}' is not NAME=COST"))
            })?;
            let (name, cost) = (name.trim(), cost.trim());
            let cost: u64 = cost.parse().map_err(|_| {
                Error::bad_option(alloc::format!(
                    "access costs: {name}: '{cost}' is not a whole number of cost units per byte"
                ))
            })?;
            if name.is_empty() || name.len() > 32 {
                return Err(Error::bad_option(alloc::format!(
                    "access costs: '{part}': a level name has 1 to 32 characters"
                )));
            }
            let upper = name.to_ascii_uppercase();
            if seen.contains(&upper) {
                return Err(Error::bad_option(alloc::format!(
                    "access costs: '{name}' appears twice"
                )));
            }
            seen.push(upper);
            if name == "*" {
                c.other = cost;
            } else if let Some(e) = c
                .levels
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                e.1 = cost;
            } else {
                c.levels.push((String::from(name), cost));
            }
        }
        Ok(c)
    }
}

/// Bytes read and written in one level.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LevelBytes {
    /// Level name (`L1`, `DDR`, `HBM`, ...).
    pub level: String,
    /// Bytes read by ops, per run.
    pub bytes_read: u64,
    /// Bytes written, per run.
    pub bytes_written: u64,
}

/// One level's traffic priced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LevelCost {
    /// Level name.
    pub level: String,
    /// Bytes read, per run.
    pub bytes_read: u64,
    /// Bytes written, per run.
    pub bytes_written: u64,
    /// Cost units per byte accessed.
    pub cost_per_byte: u64,
    /// `(bytes_read + bytes_written) × cost_per_byte`, cost units per run.
    pub cost: u64,
}

/// Access cost per level and in all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AccessReport {
    /// Per level, in the order the levels were given (tiered: fastest first).
    pub levels: Vec<LevelCost>,
    /// The levels' costs summed, cost units per run.
    pub total_cost: u64,
}

/// Bytes read and written per level: `names` are the levels, `level_of(buffer)` the index in
/// `names` of the level buffer `i` sits in (`None`: it got no memory; not counted). Levels
/// no buffer sits in are listed with 0 bytes.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] when the bytes overflow `u64`.
pub fn level_bytes(
    problem: &Problem,
    names: &[String],
    level_of: impl Fn(usize) -> Option<usize>,
) -> Result<Vec<LevelBytes>> {
    let mut out: Vec<LevelBytes> = names
        .iter()
        .map(|n| LevelBytes {
            level: n.clone(),
            bytes_read: 0,
            bytes_written: 0,
        })
        .collect();
    for (i, b) in problem.buffers.iter().enumerate() {
        let Some(row) = level_of(i).and_then(|k| out.get_mut(k)) else {
            continue;
        };
        let reads = mul(b.size, b.readers.len() as u64, "bytes read")?;
        row.bytes_read = add(row.bytes_read, reads, "bytes read")?;
        row.bytes_written = add(row.bytes_written, b.size, "bytes written")?;
    }
    Ok(out)
}

/// Bytes read and written per memory type, as a static plan places the buffers (every buffer
/// in its memory type; the types in ascending order).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`].
pub fn by_memory_type(problem: &Problem) -> Result<Vec<LevelBytes>> {
    by_memory_type_of(problem, |_| true)
}

/// [`by_memory_type`] counting only the buffers `placed(i)` says were placed (a run-time
/// allocator's failed allocations are not traffic).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`].
pub fn by_memory_type_of(
    problem: &Problem,
    placed: impl Fn(usize) -> bool,
) -> Result<Vec<LevelBytes>> {
    let mut types: Vec<u32> = problem.buffers.iter().map(|b| b.memory_type).collect();
    types.sort_unstable();
    types.dedup();
    let names: Vec<String> = types
        .iter()
        .map(|&t| String::from(crate::plan::memory_type_name(t)))
        .collect();
    level_bytes(problem, &names, |i| {
        if !placed(i) {
            return None;
        }
        types.binary_search(&problem.buffers[i].memory_type).ok()
    })
}

/// `bytes` priced with `costs`.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] when a cost overflows `u64`.
pub fn price(bytes: &[LevelBytes], costs: &AccessCosts) -> Result<AccessReport> {
    let mut r = AccessReport::default();
    for l in bytes {
        let cost_per_byte = costs.cost_of(&l.level);
        let accessed = add(l.bytes_read, l.bytes_written, "bytes accessed")?;
        let cost = mul(accessed, cost_per_byte, "access cost")?;
        r.total_cost = add(r.total_cost, cost, "access cost")?;
        r.levels.push(LevelCost {
            level: l.level.clone(),
            bytes_read: l.bytes_read,
            bytes_written: l.bytes_written,
            cost_per_byte,
            cost,
        });
    }
    Ok(r)
}
