//! The independent checker: does a plan respect the problem? Shares no code with any strategy.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::plan::{Plan, PlanOptions};
use crate::problem::{Buffer, BufferId, BufferKind, Problem};

/// The reuse options a plan was made under: what the buffers' flags mean (see
/// [`PlanOptions`]; GE's defaults: reuse on, zero-copy I/O, centralised atomic clean).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Memory reuse on; off: no buffer shares a byte with another it can run with.
    pub reuse: bool,
    /// Graph inputs and outputs are zero-copy user buffers (never share a byte).
    pub zero_copy_io: bool,
    /// With `zero_copy_io`: graph inputs and outputs own their bytes only over their live
    /// range (GE's I/O reuse options, [`PlanOptions::zero_copy_reuse`]).
    pub zero_copy_reuse: bool,
    /// Atomic-clean buffers are zeroed by one memset before the graph runs: their bytes are
    /// theirs from step 0.
    pub atomic_centralised: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            reuse: true,
            zero_copy_io: true,
            zero_copy_reuse: false,
            atomic_centralised: true,
        }
    }
}

impl From<&PlanOptions> for Rules {
    fn from(o: &PlanOptions) -> Self {
        Rules {
            reuse: o.reuse,
            zero_copy_io: o.zero_copy_io,
            zero_copy_reuse: o.zero_copy_reuse,
            atomic_centralised: o.atomic_centralised,
        }
    }
}

impl Rules {
    /// Why `b` may share no byte with a buffer it can run with, if it may not.
    fn exclusive(&self, b: &Buffer) -> Option<&'static str> {
        if b.flags.no_reuse {
            Some("no-reuse")
        } else if b.flags.zero_copy
            || (self.zero_copy_io
                && !self.zero_copy_reuse
                && !b.flags.zero_copy_reuse
                && matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput))
        {
            Some("zero-copy")
        } else if !self.reuse {
            Some("reuse off")
        } else {
            None
        }
    }

    /// The steps over which `b` owns its bytes (inclusive), and why, if not its live range.
    fn owned(&self, b: &Buffer) -> ((u64, u64), Option<&'static str>) {
        if let Some(why) = self.exclusive(b) {
            ((0, u64::MAX), Some(why))
        } else if b.flags.atomic_clean && self.atomic_centralised {
            (
                (0, b.end),
                Some("atomic-clean, zeroed before the graph runs"),
            )
        } else {
            ((b.start, b.end), None)
        }
    }
}

/// The one rule a plan broke, with the buffers involved (indices into the problem's buffers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// The plan has `got` offsets or sizes for `expected` buffers.
    WrongLength {
        /// Number of buffers in the problem.
        expected: usize,
        /// Number of offsets or sizes in the plan.
        got: usize,
    },
    /// A planned size is smaller than the buffer's size.
    SizeTooSmall {
        /// The buffer.
        buffer: BufferId,
        /// Its size in the problem, bytes.
        size: u64,
        /// Its size in the plan, bytes.
        planned: u64,
    },
    /// An offset is not a multiple of the required alignment.
    Misaligned {
        /// The buffer.
        buffer: BufferId,
        /// Its offset.
        offset: u64,
        /// The alignment required (max of the plan's and the buffer's).
        alignment: u64,
    },
    /// A buffer with a fixed offset was moved.
    FixedOffsetMoved {
        /// The buffer.
        buffer: BufferId,
        /// The offset the problem fixes.
        fixed: u64,
        /// The offset in the plan.
        offset: u64,
    },
    /// `offset + size` overflows `u64`.
    Overflow {
        /// The buffer.
        buffer: BufferId,
    },
    /// The plan's peak is below a buffer's end.
    PeakTooLow {
        /// The buffer.
        buffer: BufferId,
        /// `offset + size` of the buffer.
        end: u64,
        /// The plan's peak.
        peak: u64,
    },
    /// A live range is empty (`start > end`) or ends at or after the problem's last step.
    LiveRangeOutside {
        /// The buffer.
        buffer: BufferId,
    },
    /// A buffer whose bytes are its own beyond its live range (no-reuse, zero-copy, reuse
    /// off, atomic-clean) shares a byte with another buffer that can run with it.
    Reused {
        /// The buffer whose rule is broken.
        buffer: BufferId,
        /// The buffer sharing its bytes.
        other: BufferId,
        /// The rule ("no-reuse", "zero-copy", "reuse off", "atomic-clean ...").
        rule: &'static str,
    },
    /// Two buffers live at the same step share a byte.
    Overlap {
        /// One buffer.
        a: BufferId,
        /// The other.
        b: BufferId,
        /// A step at which both are live.
        step: u64,
    },
    /// A continuous group's member does not start where the previous one ends.
    NotAdjacent {
        /// The previous member (index `i`).
        a: BufferId,
        /// The member that should follow it (index `i + 1`).
        b: BufferId,
        /// The gear in which the two are compared (`None` without gears).
        gear: Option<u64>,
    },
    /// `b` reuses bytes of `a` while an access to `a` on another stream may still run: no
    /// chain of edges and stream order leads from that access to `b`'s first step.
    StreamRace {
        /// The earlier buffer.
        a: BufferId,
        /// The buffer reusing its bytes.
        b: BufferId,
        /// Step of the access to `a` that is not ordered before `b`.
        access: u64,
    },
}

impl Violation {
    /// A one-line description naming the buffers of `problem`.
    pub fn describe(&self, problem: &Problem) -> String {
        // names escaped: a control character must not rewrite the terminal
        let n = |i: &BufferId| {
            problem
                .buffers
                .get(i.index())
                .map_or_else(|| String::from("?"), |b| b.name.escape_debug().collect())
        };
        match self {
            Violation::WrongLength { expected, got } => {
                alloc::format!("plan has {got} entries for {expected} buffers")
            }
            Violation::SizeTooSmall {
                buffer,
                size,
                planned,
            } => alloc::format!(
                "buffer '{}' needs {size} bytes but the plan gives it {planned}",
                n(buffer)
            ),
            Violation::Misaligned {
                buffer,
                offset,
                alignment,
            } => alloc::format!(
                "buffer '{}' at offset {offset} is not {alignment}-byte aligned",
                n(buffer)
            ),
            Violation::FixedOffsetMoved {
                buffer,
                fixed,
                offset,
            } => alloc::format!(
                "buffer '{}' is pinned at offset {fixed} but placed at {offset}",
                n(buffer)
            ),
            Violation::Overflow { buffer } => {
                alloc::format!("buffer '{}': offset + size overflows u64", n(buffer))
            }
            Violation::PeakTooLow { buffer, end, peak } => alloc::format!(
                "buffer '{}' ends at byte {end}, above the plan's peak {peak}",
                n(buffer)
            ),
            Violation::LiveRangeOutside { buffer } => {
                let b = problem.buffers.get(buffer.index());
                alloc::format!(
                    "buffer '{}' lives over steps [{}, {}], outside the problem's {} steps",
                    n(buffer),
                    b.map_or(0, |b| b.start),
                    b.map_or(0, |b| b.end),
                    problem.steps
                )
            }
            Violation::Reused {
                buffer,
                other,
                rule,
            } => alloc::format!(
                "buffer '{}' ({rule}) shares bytes with '{}', which can run with it",
                n(buffer),
                n(other)
            ),
            Violation::Overlap { a, b, step } => alloc::format!(
                "buffers '{}' and '{}' are both live at step {step} and share memory",
                n(a),
                n(b)
            ),
            Violation::NotAdjacent { a, b, gear } => alloc::format!(
                "continuous buffers '{}' and '{}' are not adjacent{}",
                n(a),
                n(b),
                gear.map_or(String::new(), |g| alloc::format!(" in gear {g}"))
            ),
            Violation::StreamRace { a, b, access } => alloc::format!(
                "buffer '{}' reuses memory of '{}' while step {access} (stream {}) may still \
                 access it: no edge orders that step before '{}' starts",
                n(b),
                n(a),
                problem
                    .ops
                    .get(usize::try_from(*access).unwrap_or(usize::MAX))
                    .map_or(0, |o| o.stream),
                n(b)
            ),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// [`validate_with`] under GE's default [`Rules`] (reuse on, zero-copy I/O, centralised atomic
/// clean).
///
/// With [`Plan::arenas`] each memory type is its own offset space: buffers of two types may
/// use the same offsets, and a buffer must end within its type's arena.
///
/// GE's invariants on top (see [`check_continuous`] and [`check_streams`]): each continuous
/// group is adjacent in index order in every gear, and with several streams no byte is reused
/// while an access on another stream may still run.
///
/// # Errors
/// The first [`Violation`] found.
pub fn validate(problem: &Problem, plan: &Plan) -> Result<(), Violation> {
    validate_with(problem, plan, &Rules::default())
}

/// Checks `plan` against `problem`, its flags read under `rules`, with `plan.alignment` as the
/// plan-wide alignment.
///
/// Rules: one offset and size per buffer; every live range inside the problem
/// (`start <= end < steps`); planned size >= buffer size; offsets (zero-size buffers' too)
/// multiples of `lcm(plan.alignment, buffer.alignment)`; fixed offsets kept (and aligned);
/// `offset + size <= peak`; no two buffers that conflict (live ranges intersect, same or no
/// gear) share a byte; a no-reuse, zero-copy or (reuse off) any buffer shares no byte with a
/// buffer of a compatible gear at any step; a centralised atomic-clean buffer's bytes are its
/// own from step 0. Zero-size buffers occupy no bytes. `O(n log n)`: a sweep over steps with
/// the live set ordered by offset.
///
/// # Errors
/// The first [`Violation`] found.
pub fn validate_with(problem: &Problem, plan: &Plan, rules: &Rules) -> Result<(), Violation> {
    let n = problem.buffers.len();
    for got in [plan.offsets.len(), plan.sizes.len()] {
        if got != n {
            return Err(Violation::WrongLength { expected: n, got });
        }
    }
    let align = plan.alignment.max(1);
    for (i, b) in problem.buffers.iter().enumerate() {
        let i = BufferId::new(i);
        let (offset, planned) = (plan.offsets[i], plan.sizes[i]);
        // `steps == u64::MAX` counts step u64::MAX too (one past it does not fit in u64)
        if b.start > b.end || (b.end >= problem.steps && problem.steps != u64::MAX) {
            return Err(Violation::LiveRangeOutside { buffer: i });
        }
        if planned < b.size {
            return Err(Violation::SizeTooSmall {
                buffer: i,
                size: b.size,
                planned,
            });
        }
        if let Some(fixed) = b.fixed_offset {
            if fixed != offset {
                return Err(Violation::FixedOffsetMoved {
                    buffer: i,
                    fixed,
                    offset,
                });
            }
            // a pin is aligned to the buffer's own alignment (not the plan's: the user chose it)
            if offset % b.alignment.max(1) != 0 {
                return Err(Violation::Misaligned {
                    buffer: i,
                    offset,
                    alignment: b.alignment,
                });
            }
        } else {
            // an offset is a multiple of both alignments; a multiple beyond u64 allows only 0
            let alignment = lcm(align, b.alignment.max(1));
            if alignment.map_or(offset != 0, |a| offset % a != 0) {
                return Err(Violation::Misaligned {
                    buffer: i,
                    offset,
                    alignment: alignment.unwrap_or(u64::MAX),
                });
            }
        }
        let end = offset
            .checked_add(planned)
            .ok_or(Violation::Overflow { buffer: i })?;
        let peak = arena_bytes(plan, b.memory_type);
        if planned > 0 && end > peak {
            return Err(Violation::PeakTooLow {
                buffer: i,
                end,
                peak,
            });
        }
    }
    // Buffers without a gear conflict with every gear; buffers of two gears never do.
    // Check the ungeared buffers with each gear in turn (or alone when there are no gears).
    // Each buffer owns its bytes over its live range, or longer under its rule; each memory
    // type is its own offset space when the plan has arenas.
    let owned: Vec<((u64, u64), Option<&'static str>)> =
        problem.buffers.iter().map(|b| rules.owned(b)).collect();
    let gears = problem.gears();
    let found = spaces(problem, plan).into_iter().try_for_each(|space| {
        let here = |i: BufferId| space_of(problem, plan, i) == space;
        if gears.is_empty() {
            sweep(problem, plan, &owned, here)
        } else {
            gears.iter().try_for_each(|g| {
                sweep(problem, plan, &owned, |i| {
                    let gear = problem.buffers[i].gear;
                    here(i) && (gear.is_none() || gear == Some(*g))
                })
            })
        }
    });
    // An overlap only the rules make (the live ranges are apart) names the rule.
    found.map_err(|v| match v {
        Violation::Overlap { a, b, .. }
            if !problem.buffers[a].overlaps_in_time(&problem.buffers[b]) =>
        {
            let (buffer, other) = if owned[a].1.is_some() { (a, b) } else { (b, a) };
            Violation::Reused {
                buffer,
                other,
                rule: owned[buffer].1.unwrap_or("?"),
            }
        }
        Violation::Overlap { a, b, .. } => Violation::Overlap {
            a,
            b,
            step: problem.buffers[a].start.max(problem.buffers[b].start),
        },
        v => v,
    })?;
    check_continuous(problem, plan)?;
    check_streams(problem, plan)
}

/// The bytes buffers of memory type `t` may reach: its arena's, or the peak without arenas.
fn arena_bytes(plan: &Plan, t: u32) -> u64 {
    if plan.arenas.is_empty() {
        return plan.peak;
    }
    plan.arenas
        .iter()
        .find(|a| a.memory_type == t)
        .map_or(0, |a| a.bytes)
}

/// The offset space of buffer `i`: its memory type when the plan has arenas, else 0.
fn space_of(problem: &Problem, plan: &Plan, i: BufferId) -> u32 {
    if plan.arenas.is_empty() {
        0
    } else {
        problem.buffers[i].memory_type
    }
}

/// The offset spaces of the plan's buffers, ascending.
fn spaces(problem: &Problem, plan: &Plan) -> Vec<u32> {
    let mut v: Vec<u32> = BufferId::all(problem.buffers.len())
        .map(|i| space_of(problem, plan, i))
        .collect();
    v.push(0);
    v.sort_unstable();
    v.dedup();
    v
}

/// `lcm(a, b)` for `a, b >= 1`, `None` beyond `u64`.
fn lcm(a: u64, b: u64) -> Option<u64> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x).checked_mul(b)
}

fn sweep(
    problem: &Problem,
    plan: &Plan,
    owned: &[((u64, u64), Option<&'static str>)],
    keep: impl Fn(BufferId) -> bool,
) -> Result<(), Violation> {
    let mut order: Vec<BufferId> = BufferId::all(problem.buffers.len())
        .filter(|&i| plan.sizes[i] > 0 && keep(i))
        .collect();
    order.sort_unstable_by_key(|&i| owned[i].0 .0);
    // Live set keyed by (offset, id) -> (end offset); pairwise disjoint by construction.
    let mut live: BTreeMap<(u64, BufferId), u64> = BTreeMap::new();
    // Min-ordered expiry by last step.
    let mut expiry: BTreeMap<(u64, BufferId), ()> = BTreeMap::new();
    for &i in &order {
        let (start, end) = owned[i].0;
        while let Some((&(last, j), _)) = expiry.first_key_value() {
            if last >= start {
                break;
            }
            expiry.remove(&(last, j));
            live.remove(&(plan.offsets[j], j));
        }
        let lo = plan.offsets[i];
        let hi = lo + plan.sizes[i]; // checked above
        if let Some((&(_, j), &end)) = live.range(..(lo, BufferId::MAX)).next_back() {
            if end > lo {
                return Err(Violation::Overlap {
                    a: j,
                    b: i,
                    step: start,
                });
            }
        }
        if let Some((&(o, j), _)) = live.range((lo, BufferId::new(0))..).next() {
            if o < hi {
                return Err(Violation::Overlap {
                    a: j,
                    b: i,
                    step: start,
                });
            }
        }
        live.insert((lo, i), hi);
        expiry.insert((end, i), ());
    }
    Ok(())
}

// ---- GE invariants: continuous groups and streams -------------------------------------

/// Each continuous group ([`crate::Continuous`]) is adjacent in index order: member `i + 1`
/// starts at `offset(i) + planned_size(i)` (GE `AssignContinuousInputMemory`: the next input's
/// offset is the previous one plus its aligned size; `ApplyContinuousMemory` for outputs). With
/// gears this holds in every gear, among the group's ungeared members and that gear's
/// (GE dynamic_batch_mem_assigner.cc: each gear's group is one virtual block). A member of
/// planned size 0 too sits right after the previous one (GE graph_mem_assigner.cc
/// `AssignContinuousOutputMemory` gives output `i` the running sum of the earlier sizes).
///
/// # Errors
/// [`Violation::NotAdjacent`] for the first pair out of place.
pub fn check_continuous(problem: &Problem, plan: &Plan) -> Result<(), Violation> {
    // (group, gear, index, buffer) sorted: members of one group and gear become consecutive.
    let mut members: Vec<(u32, Option<u64>, u32, BufferId)> = problem
        .buffers
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            b.continuous
                .map(|c| (c.group, b.gear, c.index, BufferId::new(i)))
        })
        .collect();
    if members.is_empty() {
        return Ok(());
    }
    members.sort_unstable();
    let gears = problem.gears();
    let groups: Vec<u32> = {
        let mut g: Vec<u32> = members.iter().map(|m| m.0).collect();
        g.dedup();
        g
    };
    for group in groups {
        let of_group: Vec<&(u32, Option<u64>, u32, BufferId)> =
            members.iter().filter(|m| m.0 == group).collect();
        let has_gears = of_group.iter().any(|m| m.1.is_some());
        let views: Vec<Option<u64>> = if has_gears {
            gears.iter().map(|&g| Some(g)).collect()
        } else {
            alloc::vec![None]
        };
        for view in views {
            let mut seq: Vec<(u32, BufferId)> = of_group
                .iter()
                .filter(|m| m.1.is_none() || m.1 == view)
                .map(|m| (m.2, m.3))
                .collect();
            seq.sort_unstable();
            for w in seq.windows(2) {
                let (a, b) = (w[0].1, w[1].1);
                let next = plan.offsets[a].checked_add(plan.sizes[a]);
                if next != Some(plan.offsets[b]) {
                    return Err(Violation::NotAdjacent { a, b, gear: view });
                }
            }
        }
    }
    Ok(())
}

/// For each step, the latest step of every stream that happens before it: same-stream steps
/// in step order, other streams through [`crate::OpInfo::preds`], transitively. Rows are
/// `(stream, step)` sorted by stream.
fn happens_before(problem: &Problem) -> Vec<Vec<(u32, u64)>> {
    let mut rows: Vec<Vec<(u32, u64)>> = Vec::with_capacity(problem.ops.len());
    let mut last_on: BTreeMap<u32, u64> = BTreeMap::new();
    let mut acc: Vec<(u32, u64)> = Vec::new();
    for (k, op) in problem.ops.iter().enumerate() {
        acc.clear();
        let from = |p: u64, acc: &mut Vec<(u32, u64)>| {
            if let Some(pi) = usize::try_from(p).ok().filter(|&pi| pi < k) {
                acc.push((problem.ops[pi].stream, p));
                acc.extend_from_slice(&rows[pi]);
            }
        };
        if let Some(&prev) = last_on.get(&op.stream) {
            from(prev, &mut acc);
        }
        for &p in &op.preds {
            from(p, &mut acc);
        }
        acc.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        acc.dedup_by_key(|e| e.0);
        rows.push(acc.clone());
        last_on.insert(op.stream, k as u64);
    }
    rows
}

/// With ops on several streams, no byte is reused while an access on another stream may still
/// run. Ops of one stream run in step order; streams are ordered only by
/// [`crate::OpInfo::preds`]. A buffer's accesses are its producer's step (a graph input is
/// written before any op runs), its readers and its last step. Buffer `b` may take bytes last held by `a` only if every access of `a` happens before
/// `b`'s first step (GE block_mem_stream.cc `GetDiffStreamMaxLifeTime`, block_mem_zero_copy.cc
/// `SetReleaseBlockLifeEnd`: a block read on another stream is released on its own stream
/// only at the first node reached by an edge back, never if none returns). Checking each byte
/// against its previous holder suffices: the order is transitive. Without ops, or with one
/// stream, the step order of [`validate`]'s sweep is the whole rule.
///
/// # Errors
/// [`Violation::StreamRace`] for the first unordered reuse.
pub fn check_streams(problem: &Problem, plan: &Plan) -> Result<(), Violation> {
    let first = problem.ops.first().map(|o| o.stream);
    if problem.ops.iter().all(|o| Some(o.stream) == first) {
        return Ok(());
    }
    let hb = happens_before(problem);
    let stream_of = |step: u64| {
        usize::try_from(step)
            .ok()
            .and_then(|s| problem.ops.get(s))
            .map(|o| o.stream)
    };
    // Latest access per stream of each buffer.
    let last_access: Vec<Vec<(u32, u64)>> = problem
        .buffers
        .iter()
        .map(|b| {
            let written = (b.producer.is_some() || b.readers.is_empty()).then_some(b.start);
            let mut v: Vec<(u32, u64)> = b
                .readers
                .iter()
                .copied()
                .chain(written)
                .chain([b.end])
                .filter_map(|s| stream_of(s).map(|st| (st, s)))
                .collect();
            v.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
            v.dedup_by_key(|e| e.0);
            v
        })
        .collect();
    // Whether every access of `a` happens before step `s`.
    let ordered_before = |a: BufferId, s: u64| -> Result<(), u64> {
        let row = usize::try_from(s).ok().and_then(|i| hb.get(i));
        for &(stream, step) in &last_access[a] {
            let seen = row.and_then(|r| {
                r.binary_search_by_key(&stream, |e| e.0)
                    .ok()
                    .map(|i| r[i].1)
            });
            if seen.is_none_or(|latest| latest < step) {
                return Err(step);
            }
        }
        Ok(())
    };
    let gears = problem.gears();
    let views: Vec<Option<u64>> = if gears.is_empty() {
        alloc::vec![None]
    } else {
        gears.iter().map(|&g| Some(g)).collect()
    };
    let views: Vec<(u32, Option<u64>)> = spaces(problem, plan)
        .into_iter()
        .flat_map(|s| views.iter().map(move |&v| (s, v)))
        .collect();
    for (space, view) in views {
        let mut order: Vec<BufferId> = BufferId::all(problem.buffers.len())
            .filter(|&i| {
                let g = problem.buffers[i].gear;
                plan.sizes[i] > 0
                    && (g.is_none() || g == view)
                    && space_of(problem, plan, i) == space
            })
            .collect();
        order.sort_unstable_by_key(|&i| (problem.buffers[i].start, i));
        // Disjoint byte ranges: start -> (end, last holder).
        let mut holder: BTreeMap<u64, (u64, BufferId)> = BTreeMap::new();
        for &b in &order {
            let lo = plan.offsets[b];
            let hi = lo + plan.sizes[b]; // checked by validate
            let start = problem.buffers[b].start;
            // Segments overlapping [lo, hi): the one starting before lo, then those inside.
            let mut hit: Vec<(u64, u64, BufferId)> = Vec::new();
            if let Some((&s, &(e, a))) = holder.range(..lo).next_back() {
                if e > lo {
                    hit.push((s, e, a));
                }
            }
            hit.extend(holder.range(lo..hi).map(|(&s, &(e, a))| (s, e, a)));
            for &(s, e, a) in &hit {
                ordered_before(a, start).map_err(|access| Violation::StreamRace {
                    a,
                    b,
                    access,
                })?;
                holder.remove(&s);
                if s < lo {
                    holder.insert(s, (lo, a));
                }
                if e > hi {
                    holder.insert(hi, (e, a));
                }
            }
            holder.insert(lo, (hi, b));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;
    use alloc::vec;

    fn problem() -> Problem {
        Problem::from_buffers(
            "t",
            vec![
                Buffer::new("a", 4, 0, 1),
                Buffer::new("b", 4, 1, 2),
                Buffer::new("c", 4, 2, 3),
            ],
        )
    }

    #[test]
    fn accepts_reuse_after_death() {
        // a and c never live together: both at offset 0; b (touches both) at 4
        let plan = Plan::new("hand", 1, vec![0, 4, 0], vec![4, 4, 4]).unwrap();
        assert_eq!(validate(&problem(), &plan), Ok(()));
    }

    #[test]
    fn touching_lifetimes_may_not_share() {
        let plan = Plan::new("hand", 1, vec![0, 2, 8], vec![4, 4, 4]).unwrap();
        assert_eq!(
            validate(&problem(), &plan),
            Err(Violation::Overlap {
                a: BufferId::new(0),
                b: BufferId::new(1),
                step: 1
            })
        );
    }

    #[test]
    fn reports_misalignment_and_peak() {
        let plan = Plan::new("hand", 8, vec![0, 4, 0], vec![4, 4, 4]).unwrap();
        assert_eq!(
            validate(&problem(), &plan),
            Err(Violation::Misaligned {
                buffer: BufferId::new(1),
                offset: 4,
                alignment: 8
            })
        );
        let mut plan = Plan::new("hand", 1, vec![0, 4, 0], vec![4, 4, 4]).unwrap();
        plan.peak = 7;
        assert_eq!(
            validate(&problem(), &plan),
            Err(Violation::PeakTooLow {
                buffer: BufferId::new(1),
                end: 8,
                peak: 7
            })
        );
        plan.peak = 8;
        plan.sizes[2] = 3;
        match validate(&problem(), &plan) {
            Err(Violation::SizeTooSmall { buffer, .. }) => assert_eq!(buffer, BufferId::new(2)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn gears_overlay_but_not_with_shared_buffers() {
        let mut p = problem();
        p.buffers[0].gear = Some(1);
        p.buffers[1].gear = Some(2);
        // a (gear 1) and b (gear 2) live together at step 1 but never run together
        let plan = Plan::new("hand", 1, vec![0, 0, 4], vec![4, 4, 4]).unwrap();
        assert_eq!(validate(&p, &plan), Ok(()));
        // c has no gear: it conflicts with b of gear 2
        let plan = Plan::new("hand", 1, vec![0, 0, 0], vec![4, 4, 4]).unwrap();
        assert!(matches!(
            validate(&p, &plan),
            Err(Violation::Overlap { .. })
        ));
    }

    #[test]
    fn zero_size_buffers_take_no_bytes() {
        let mut p = problem();
        p.buffers[1].size = 0;
        let plan = Plan::new("hand", 1, vec![0, 0, 0], vec![4, 0, 4]).unwrap();
        assert_eq!(validate(&p, &plan), Ok(()));
    }
}

#[cfg(test)]
mod ge_invariant_tests {
    use super::*;
    use crate::problem::{Buffer, Continuous, OpInfo};
    use alloc::vec;

    fn op(stream: u32, preds: Vec<u64>) -> OpInfo {
        OpInfo {
            stream,
            preds,
            ..OpInfo::default()
        }
    }

    /// Op 0 (stream 0) makes `a`; op 1 (stream 1) reads it; op 2 (stream 0) makes `b`, which
    /// takes `a`'s bytes. `back` adds the edge 1 -> 2.
    fn race(back: bool) -> Problem {
        let mut a = Buffer::new("a", 512, 0, 1);
        a.producer = Some(0);
        a.readers = vec![1];
        let mut b = Buffer::new("b", 512, 2, 2);
        b.producer = Some(2);
        let mut p = Problem::from_buffers("race", vec![a, b]);
        p.ops = vec![
            op(0, vec![]),
            op(1, vec![0]),
            op(0, if back { vec![0, 1] } else { vec![0] }),
        ];
        p
    }

    #[test]
    fn reuse_after_a_reader_on_another_stream_needs_an_edge_back() {
        // Steps alone say a dies at 1 and b starts at 2; but stream 0 may run op 2 while
        // stream 1 still runs op 1 (GE block_mem_stream.cc GetDiffStreamMaxLifeTime: the
        // block stays alive on stream 0 until an edge returns from stream 1).
        let plan = Plan::new("hand", 1, vec![0, 0], vec![512, 512]).unwrap();
        assert_eq!(
            validate(&race(false), &plan),
            Err(Violation::StreamRace {
                a: BufferId::new(0),
                b: BufferId::new(1),
                access: 1
            })
        );
        assert_eq!(validate(&race(true), &plan), Ok(()));
        // Apart, always fine.
        let plan = Plan::new("hand", 1, vec![0, 512], vec![512, 512]).unwrap();
        assert_eq!(validate(&race(false), &plan), Ok(()));
    }

    #[test]
    fn the_order_is_transitive_through_a_third_stream() {
        // 1 (stream 1) -> 3 (stream 2) -> 4 (stream 0): b at 4 may take a's bytes.
        let mut p = race(false);
        p.ops = vec![
            op(0, vec![]),
            op(1, vec![0]),
            op(0, vec![0]),
            op(2, vec![1]),
            op(0, vec![3]),
        ];
        p.steps = 5;
        p.buffers[1].start = 4;
        p.buffers[1].end = 4;
        p.buffers[1].producer = Some(4);
        let plan = Plan::new("hand", 1, vec![0, 0], vec![512, 512]).unwrap();
        assert_eq!(validate(&p, &plan), Ok(()));
        // Without the last edge, stream 0 never waits.
        p.ops[4].preds.clear();
        assert!(matches!(
            validate(&p, &plan),
            Err(Violation::StreamRace { access: 1, .. })
        ));
    }

    #[test]
    fn a_zero_size_member_sits_right_after_the_previous_one() {
        // GE graph_mem_assigner.cc AssignContinuousOutputMemory: output i's offset is the
        // running sum of the earlier outputs' sizes, a zero-size one's too (issue 30).
        let mut bufs = vec![
            Buffer::new("a", 64, 0, 1),
            Buffer::new("z", 0, 0, 1),
            Buffer::new("b", 64, 0, 1),
        ];
        for (i, b) in bufs.iter_mut().enumerate() {
            b.continuous = Some(Continuous {
                group: 0,
                index: u32::try_from(i).unwrap(),
                outputs: true,
            });
        }
        let p = Problem::from_buffers("zero-member", bufs);
        let plan = Plan::new("hand", 1, vec![0, 64, 64], vec![64, 0, 64]).unwrap();
        assert_eq!(validate(&p, &plan), Ok(()));
        let plan = Plan::new("hand", 1, vec![0, 0, 64], vec![64, 0, 64]).unwrap();
        assert_eq!(
            validate(&p, &plan),
            Err(Violation::NotAdjacent {
                a: BufferId::new(0),
                b: BufferId::new(1),
                gear: None
            })
        );
    }

    #[test]
    fn continuous_groups_are_adjacent_in_every_gear() {
        // GE AssignContinuousInputMemory: input i+1 at offset(i) + aligned size(i);
        // dynamic_batch_mem_assigner.cc: each gear's group stays one block.
        let mut bufs = vec![
            Buffer::new("x0", 512, 0, 1),
            Buffer::new("x1@1", 512, 0, 1),
            Buffer::new("x1@2", 1024, 0, 1),
        ];
        bufs[1].gear = Some(1);
        bufs[2].gear = Some(2);
        for (i, b) in bufs.iter_mut().enumerate() {
            b.continuous = Some(Continuous {
                group: 0,
                index: u32::from(i > 0),
                outputs: false,
            });
        }
        let p = Problem::from_buffers("cont", bufs);
        // Both gears' x1 right after x0: adjacent in each gear.
        let plan = Plan::new("hand", 1, vec![0, 512, 512], vec![512, 512, 1024]).unwrap();
        assert_eq!(validate(&p, &plan), Ok(()));
        // Gear 2's x1 elsewhere: gear 1 is fine, gear 2 is not.
        let plan = Plan::new("hand", 1, vec![0, 512, 1024], vec![512, 512, 1024]).unwrap();
        assert_eq!(
            validate(&p, &plan),
            Err(Violation::NotAdjacent {
                a: BufferId::new(0),
                b: BufferId::new(2),
                gear: Some(2)
            })
        );
    }
}
