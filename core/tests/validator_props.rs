//! The validator agrees with a brute-force pairwise check on random plans, valid or not.

use memplan_core::{validate, Buffer, Plan, Problem, Violation};
use proptest::prelude::*;

fn brute_force_overlap(p: &Problem, plan: &Plan) -> bool {
    let n = p.buffers.len();
    let end = |i: usize| plan.offsets[i] + plan.sizes[i];
    (0..n).any(|i| {
        (i + 1..n).any(|j| {
            plan.sizes[i] > 0
                && plan.sizes[j] > 0
                && p.buffers[i].conflicts(&p.buffers[j])
                && plan.offsets[i] < end(j)
                && plan.offsets[j] < end(i)
        })
    })
}

fn instance() -> impl Strategy<Value = (Problem, Plan)> {
    prop::collection::vec(
        (
            0u64..40,
            0u64..8,
            0u64..12,
            0u64..40,
            prop::option::of(1u64..3),
        ),
        1..60,
    )
    .prop_map(|rows| {
        let buffers: Vec<Buffer> = rows
            .iter()
            .enumerate()
            .map(|(i, &(size, len, start, _, gear))| {
                let mut b = Buffer::new(format!("b{i}"), size, start, start + len);
                b.gear = gear;
                b
            })
            .collect();
        let offsets: Vec<u64> = rows.iter().map(|r| r.3 * 4).collect();
        let sizes: Vec<u64> = rows.iter().map(|r| r.0).collect();
        let problem = Problem::from_buffers("random", buffers);
        let plan = Plan::new("random", 4, offsets, sizes).expect("plan");
        (problem, plan)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn validate_matches_brute_force((problem, plan) in instance()) {
        let overlap = brute_force_overlap(&problem, &plan);
        match validate(&problem, &plan) {
            Ok(()) => prop_assert!(!overlap, "validator missed an overlap"),
            Err(Violation::Overlap { a, b, step }) => {
                prop_assert!(overlap);
                let (x, y) = (&problem.buffers[a], &problem.buffers[b]);
                prop_assert!(x.conflicts(y));
                prop_assert!(x.start <= step && step <= x.end && y.start <= step && step <= y.end);
            }
            Err(other) => prop_assert!(false, "unexpected violation {other:?}"),
        }
    }
}
