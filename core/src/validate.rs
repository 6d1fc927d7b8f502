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
    /// Atomic-clean buffers are zeroed by one memset before the graph runs: their bytes are
    /// theirs from step 0.
    pub atomic_centralised: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            reuse: true,
            zero_copy_io: true,
            atomic_centralised: true,
        }
    }
}

impl From<&PlanOptions> for Rules {
    fn from(o: &PlanOptions) -> Self {
        Rules {
            reuse: o.reuse,
            zero_copy_io: o.zero_copy_io,
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
}

impl Violation {
    /// A one-line description naming the buffers of `problem`.
    pub fn describe(&self, problem: &Problem) -> String {
        // names escaped: a control character must not rewrite the terminal
        let n = |i: &BufferId| {
            problem
                .buffers
                .get(*i)
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
                let b = problem.buffers.get(*buffer);
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
        if planned > 0 && end > plan.peak {
            return Err(Violation::PeakTooLow {
                buffer: i,
                end,
                peak: plan.peak,
            });
        }
    }
    // Buffers without a gear conflict with every gear; buffers of two gears never do.
    // Check the ungeared buffers with each gear in turn (or alone when there are no gears).
    // Each buffer owns its bytes over its live range, or longer under its rule.
    let owned: Vec<((u64, u64), Option<&'static str>)> =
        problem.buffers.iter().map(|b| rules.owned(b)).collect();
    let gears = problem.gears();
    let found = if gears.is_empty() {
        sweep(problem, plan, &owned, |_| true)
    } else {
        gears.iter().try_for_each(|g| {
            sweep(problem, plan, &owned, |gear| {
                gear.is_none() || gear == Some(*g)
            })
        })
    };
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
    })
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
    keep: impl Fn(Option<u64>) -> bool,
) -> Result<(), Violation> {
    let mut order: Vec<BufferId> = (0..problem.buffers.len())
        .filter(|&i| plan.sizes[i] > 0 && keep(problem.buffers[i].gear))
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
        if let Some((&(o, j), _)) = live.range((lo, 0)..).next() {
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
                a: 0,
                b: 1,
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
                buffer: 1,
                offset: 4,
                alignment: 8
            })
        );
        let mut plan = Plan::new("hand", 1, vec![0, 4, 0], vec![4, 4, 4]).unwrap();
        plan.peak = 7;
        assert_eq!(
            validate(&problem(), &plan),
            Err(Violation::PeakTooLow {
                buffer: 1,
                end: 8,
                peak: 7
            })
        );
        plan.peak = 8;
        plan.sizes[2] = 3;
        assert!(matches!(
            validate(&problem(), &plan),
            Err(Violation::SizeTooSmall { buffer: 2, .. })
        ));
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
