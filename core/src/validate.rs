//! The independent checker: does a plan respect the problem? Shares no code with any strategy.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::plan::Plan;
use crate::problem::{BufferId, Problem};

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
        let n = |i: &BufferId| problem.buffers.get(*i).map_or("?", |b| b.name.as_str());
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

/// Checks `plan` against `problem` with `alignment` as the plan-wide alignment
/// (use `plan.alignment`, or 1 to check only the buffers' own alignments).
///
/// Rules: one offset and size per buffer; planned size >= buffer size; offsets multiples of
/// `max(alignment, buffer.alignment)`; fixed offsets kept; `offset + size <= peak`; no two
/// buffers that conflict (live ranges intersect, same or no gear) share a byte. Zero-size
/// buffers occupy no bytes. `O(n log n)`: a sweep over steps with the live set ordered by offset.
///
/// # Errors
/// The first [`Violation`] found.
pub fn validate(problem: &Problem, plan: &Plan) -> Result<(), Violation> {
    let n = problem.buffers.len();
    for got in [plan.offsets.len(), plan.sizes.len()] {
        if got != n {
            return Err(Violation::WrongLength { expected: n, got });
        }
    }
    let align = plan.alignment.max(1);
    for (i, b) in problem.buffers.iter().enumerate() {
        let (offset, planned) = (plan.offsets[i], plan.sizes[i]);
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
        } else {
            let alignment = align.max(b.alignment);
            if offset % alignment != 0 {
                return Err(Violation::Misaligned {
                    buffer: i,
                    offset,
                    alignment,
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
    let gears = problem.gears();
    if gears.is_empty() {
        sweep(problem, plan, |_| true)
    } else {
        gears
            .iter()
            .try_for_each(|g| sweep(problem, plan, |gear| gear.is_none() || gear == Some(*g)))
    }
}

fn sweep(
    problem: &Problem,
    plan: &Plan,
    keep: impl Fn(Option<u64>) -> bool,
) -> Result<(), Violation> {
    let mut order: Vec<BufferId> = (0..problem.buffers.len())
        .filter(|&i| plan.sizes[i] > 0 && keep(problem.buffers[i].gear))
        .collect();
    order.sort_unstable_by_key(|&i| problem.buffers[i].start);
    // Live set keyed by (offset, id) -> (end offset); pairwise disjoint by construction.
    let mut live: BTreeMap<(u64, BufferId), u64> = BTreeMap::new();
    // Min-ordered expiry by last step.
    let mut expiry: BTreeMap<(u64, BufferId), ()> = BTreeMap::new();
    for &i in &order {
        let b = &problem.buffers[i];
        while let Some((&(last, j), _)) = expiry.first_key_value() {
            if last >= b.start {
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
                    step: b.start,
                });
            }
        }
        if let Some((&(o, j), _)) = live.range((lo, 0)..).next() {
            if o < hi {
                return Err(Violation::Overlap {
                    a: j,
                    b: i,
                    step: b.start,
                });
            }
        }
        live.insert((lo, i), hi);
        expiry.insert((b.end, i), ());
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
