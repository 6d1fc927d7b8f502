//! What a buffer's flags and the reuse options mean for placement, as live ranges: the one
//! normalisation every offset-packing strategy (and `optimal`) plans on, so that none of them
//! can forget a rule.
//!
//! [`normalise`] rewrites a problem so that its live ranges alone carry these rules:
//! - **exclusive** buffers share no byte with any buffer they can run with (another gear never
//!   runs with them): their range becomes the whole schedule `[0, steps - 1]`. Exclusive are:
//!   every buffer with reuse off (GE `ge.exec.disableReuseMemory=1`); a buffer flagged
//!   `no_reuse` (GE `OP_NO_REUSE_MEM`, also set from the producing op's attribute); a
//!   zero-copy buffer (flag `zero_copy`, or a graph input/output while
//!   [`PlanOptions::zero_copy_io`]): a user buffer at run time, GE places it apart and never
//!   reuses it (`AssignZeroCopyMemory`);
//! - **atomic-clean** buffers under the centralised clean ([`PlanOptions::atomic_centralised`],
//!   GE `ge.exec.atomicCleanPolicy=0`) are zeroed by one memset before the graph runs, so their
//!   bytes are theirs from step 0: their range starts at step 0. (GE goes further and never
//!   reuses them, `atomic_memory_assigner.cc`; reuse after their last reader is safe, so the
//!   packing strategies keep it.)
//!
//! The plan of the normalised problem is a plan of the original one (same buffers, same
//! order, ranges only grow), and [`crate::validate::validate_with`] checks these rules on its
//! own, without this module.

use alloc::borrow::Cow;

use crate::plan::PlanOptions;
use crate::problem::{Buffer, BufferKind, Problem};

/// Whether `b` may share no byte with any buffer it can run with (see the module docs).
pub fn is_exclusive(b: &Buffer, options: &PlanOptions) -> bool {
    !options.reuse
        || b.flags.no_reuse
        || b.flags.zero_copy
        || (options.zero_copy_io
            && !options.zero_copy_reuse
            && !b.flags.zero_copy_reuse
            && matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput))
}

/// Whether `b`'s bytes are zeroed before the graph runs, hence its own from step 0.
pub fn is_cleaned_up_front(b: &Buffer, options: &PlanOptions) -> bool {
    b.flags.atomic_clean && options.atomic_centralised
}

/// The rules in force for `b` under `options`, as the plan JSON's per-buffer `flags`
/// (`docs/formats.md`): `no_reuse` (its flag, or reuse off), `zero_copy` (its flag, or a graph
/// input/output while zero-copy), `atomic_clean` (its flag under the centralised clean). A
/// checker reading them needs no options.
pub fn flags_in_force(b: &Buffer, options: &PlanOptions) -> alloc::vec::Vec<&'static str> {
    let mut f = alloc::vec::Vec::new();
    if b.flags.no_reuse || !options.reuse {
        f.push("no_reuse");
    } else if is_exclusive(b, options) {
        f.push("zero_copy");
    }
    if is_cleaned_up_front(b, options) {
        f.push("atomic_clean");
    }
    f
}

/// The problem with every rule of the module docs turned into live ranges; borrowed when no
/// range changes. Buffers planned at 0 bytes are left alone (they take no bytes); a zero-size
/// tensor under GE padding is planned at 32 B and does take bytes.
pub fn normalise<'p>(problem: &'p Problem, options: &PlanOptions) -> Cow<'p, Problem> {
    let last = problem.steps.saturating_sub(1);
    let range = |b: &Buffer| {
        // a size that overflows is refused later by the strategy; keep the rule for it here
        if options.planned_size(b).is_ok_and(|s| s == 0) {
            (b.start, b.end)
        } else if is_exclusive(b, options) {
            (0, last.max(b.end))
        } else if is_cleaned_up_front(b, options) {
            (0, b.end)
        } else {
            (b.start, b.end)
        }
    };
    if problem.buffers.iter().all(|b| range(b) == (b.start, b.end)) {
        return Cow::Borrowed(problem);
    }
    let mut p = problem.clone();
    for b in &mut p.buffers {
        (b.start, b.end) = range(b);
    }
    Cow::Owned(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn ranges_carry_the_flags() {
        let mut p = Problem::from_buffers(
            "p",
            vec![
                Buffer::new("a", 4, 1, 1),
                Buffer::new("nr", 4, 1, 2),
                Buffer::new("zc", 4, 2, 2),
                Buffer::new("at", 4, 3, 3),
                Buffer::new("in", 4, 0, 0),
                Buffer::new("z", 0, 3, 3),
            ],
        );
        p.buffers[1].flags.no_reuse = true;
        p.buffers[2].flags.zero_copy = true;
        p.buffers[3].flags.atomic_clean = true;
        p.buffers[4].kind = BufferKind::GraphInput;
        p.buffers[5].flags.no_reuse = true;
        let o = PlanOptions::exact();
        let n = normalise(&p, &o);
        let r: alloc::vec::Vec<(u64, u64)> = n.buffers.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(r, vec![(1, 1), (0, 3), (0, 3), (0, 3), (0, 3), (3, 3)]);
        // I/O reuse and separate clean: only the flags that do not depend on options remain
        let o = PlanOptions {
            zero_copy_io: false,
            atomic_centralised: false,
            ..PlanOptions::exact()
        };
        let n = normalise(&p, &o);
        let r: alloc::vec::Vec<(u64, u64)> = n.buffers.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(r, vec![(1, 1), (0, 3), (0, 3), (3, 3), (0, 0), (3, 3)]);
        // reuse off: everything of nonzero size spans the schedule
        let o = PlanOptions {
            reuse: false,
            ..PlanOptions::exact()
        };
        assert!(normalise(&p, &o)
            .buffers
            .iter()
            .filter(|b| b.size > 0)
            .all(|b| (b.start, b.end) == (0, 3)));
        let plain = Problem::from_buffers(
            "q",
            vec![Buffer::new("a", 4, 0, 1), Buffer::new("b", 4, 2, 2)],
        );
        assert!(matches!(normalise(&plain, &o), Cow::Owned(_)));
        assert!(matches!(
            normalise(&plain, &PlanOptions::exact()),
            Cow::Borrowed(_)
        ));
    }
}
