//! Tiered memory: levels from fastest to slowest (for example L1, L2, L3, DDR), each with a
//! capacity. A placement policy puts each tensor in the fastest level that has room for it over
//! its whole live range; what does not fit goes down a level (a spill).
//!
//! Policy: small tensors first (more accesses per byte), then shorter live ranges (hot
//! temporaries), then problem order. Capacity is checked against the live bytes of the level
//! at every step of the tensor's range (a segment tree with range add / range max), so a level
//! never holds more than its capacity at any step. The last level is unbounded if its
//! capacity is `u64::MAX`. The tree runs over the distinct start and end steps only (live
//! bytes change only there), so memory scales with the buffers, not with the step numbers.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::problem::{BufferId, Problem};

/// One level of the hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Level {
    /// Name (`L1`, `DDR`).
    pub name: String,
    /// Capacity in bytes.
    pub capacity: u64,
}

/// What went where.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LevelReport {
    /// Level name.
    pub name: String,
    /// Capacity, bytes.
    pub capacity: u64,
    /// Most bytes live in this level at one step.
    pub peak_bytes: u64,
    /// Tensors placed here.
    pub tensors: u64,
    /// Tensors placed here because a faster level had no room.
    pub spilled_in: u64,
}

/// A tiered placement.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TierReport {
    /// Per level, fastest first.
    pub levels: Vec<LevelReport>,
    /// Level index of each buffer (`None`: fit nowhere).
    pub placement: Vec<Option<usize>>,
    /// Buffers that fit in no level.
    pub unplaced: Vec<BufferId>,
}

/// Places every buffer of `problem` in `levels` (fastest first).
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for an empty level list.
pub fn place(problem: &Problem, levels: &[Level]) -> Result<TierReport> {
    if levels.is_empty() {
        return Err(Error::bad_option("tiered memory needs at least one level"));
    }
    // Live bytes over [s, e] are largest at s or at some start inside: the distinct starts and
    // ends are enough points.
    let mut points: Vec<u64> = problem
        .buffers
        .iter()
        .flat_map(|b| [b.start, b.end.max(b.start)])
        .collect();
    points.sort_unstable();
    points.dedup();
    let steps = points.len().max(1);
    let at = |x: u64| points.binary_search(&x).unwrap_or(0);
    let mut trees: Vec<MaxTree> = levels.iter().map(|_| MaxTree::new(steps)).collect();
    let mut order: Vec<BufferId> = BufferId::all(problem.buffers.len()).collect();
    order.sort_by_key(|&i| {
        let b = &problem.buffers[i];
        (b.size, b.end - b.start, i)
    });
    let mut placement = alloc::vec![None; problem.buffers.len()];
    let mut reports: Vec<LevelReport> = levels
        .iter()
        .map(|l| LevelReport {
            name: l.name.clone(),
            capacity: l.capacity,
            peak_bytes: 0,
            tensors: 0,
            spilled_in: 0,
        })
        .collect();
    let mut unplaced = Vec::new();
    for i in order {
        let b = &problem.buffers[i];
        if b.size == 0 {
            continue;
        }
        let (s, e) = (at(b.start), at(b.end.max(b.start)));
        let level = (0..levels.len()).find(|&l| {
            let live = trees[l].max(s, e);
            live.checked_add(b.size)
                .is_some_and(|v| v <= levels[l].capacity)
        });
        match level {
            Some(l) => {
                trees[l].add(s, e, b.size);
                placement[i] = Some(l);
                reports[l].tensors += 1;
                if l > 0 {
                    reports[l].spilled_in += 1;
                }
            }
            None => unplaced.push(i),
        }
    }
    for (r, t) in reports.iter_mut().zip(&trees) {
        r.peak_bytes = t.max(0, steps - 1);
    }
    Ok(TierReport {
        levels: reports,
        placement,
        unplaced,
    })
}

/// Range add / range max over steps `0..n` (saturating at `u64::MAX`).
struct MaxTree {
    n: usize,
    max: Vec<u64>,
    lazy: Vec<u64>,
}

impl MaxTree {
    fn new(n: usize) -> Self {
        MaxTree {
            n,
            max: alloc::vec![0; 4 * n],
            lazy: alloc::vec![0; 4 * n],
        }
    }

    fn add(&mut self, l: usize, r: usize, v: u64) {
        self.add_in(1, 0, self.n - 1, l, r, v);
    }

    fn add_in(&mut self, node: usize, lo: usize, hi: usize, l: usize, r: usize, v: u64) {
        if r < lo || hi < l {
            return;
        }
        if l <= lo && hi <= r {
            self.max[node] = self.max[node].saturating_add(v);
            self.lazy[node] = self.lazy[node].saturating_add(v);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        self.add_in(2 * node, lo, mid, l, r, v);
        self.add_in(2 * node + 1, mid + 1, hi, l, r, v);
        self.max[node] = self.max[2 * node]
            .max(self.max[2 * node + 1])
            .saturating_add(self.lazy[node]);
    }

    fn max(&self, l: usize, r: usize) -> u64 {
        self.max_in(1, 0, self.n - 1, l, r)
    }

    fn max_in(&self, node: usize, lo: usize, hi: usize, l: usize, r: usize) -> u64 {
        if r < lo || hi < l {
            return 0;
        }
        if l <= lo && hi <= r {
            return self.max[node];
        }
        let mid = lo + (hi - lo) / 2;
        let m =
            self.max_in(2 * node, lo, mid, l, r)
                .max(self.max_in(2 * node + 1, mid + 1, hi, l, r));
        m.saturating_add(self.lazy[node])
    }
}

/// Most levels a level list may have.
pub const MAX_LEVELS: usize = 16;

/// Parses a level list `NAME=BYTES,NAME=BYTES,…` fastest first; `inf` as BYTES is unbounded
/// (`u64::MAX`). Names are 1 to 32 characters, unique.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] naming the bad part.
pub fn parse_levels(spec: &str) -> Result<Vec<Level>> {
    let mut out: Vec<Level> = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        let shown: String = part.chars().take(40).collect();
        let (name, v) = part.split_once('=').ok_or_else(|| {
            Error::bad_option(alloc::format!("levels: '{shown}' is not NAME=BYTES"))
        })?;
        let (name, v) = (name.trim(), v.trim());
        if name.is_empty() || name.chars().count() > 32 {
            return Err(Error::bad_option(alloc::format!(
                "levels: '{shown}': a level name has 1 to 32 characters"
            )));
        }
        let capacity = if v == "inf" {
            u64::MAX
        } else {
            v.parse::<u64>().map_err(|_| {
                Error::bad_option(alloc::format!(
                    "levels: {name}: '{}' is not a byte count or 'inf'",
                    v.chars().take(40).collect::<String>()
                ))
            })?
        };
        if out.iter().any(|l| l.name == name) {
            return Err(Error::bad_option(alloc::format!(
                "levels: '{name}' appears twice"
            )));
        }
        out.push(Level {
            name: name.into(),
            capacity,
        });
        if out.len() > MAX_LEVELS {
            return Err(Error::bad_option(alloc::format!(
                "levels: more than {MAX_LEVELS} levels"
            )));
        }
    }
    Ok(out)
}
