//! Every registered strategy ([`memplan_core::strategies`], not a hand list) on random problems
//! with every constraint the problem model has: no-reuse, zero-copy (flag and graph I/O),
//! atomic clean, per-buffer alignment, pins, gears, streams; under random options (alignment,
//! padding, reuse, I/O zero-copy, atomic policy). Each plan must pass the independent validator
//! under the options' rules and reach at least the live-set lower bound. A second property
//! checks the validator itself against a brute-force byte map on small plans.

use memplan_core::problem::OpInfo;
use memplan_core::{
    lower_bound, strategies, validate_with, Buffer, BufferKind, Padding, Plan, PlanOptions,
    Problem, Rules,
};
use proptest::prelude::*;

/// One random buffer: (size, start, length, kind, flags, alignment, gear, stream).
type Row = (u64, u64, u64, u8, u8, u8, u8, u8);

fn row() -> impl Strategy<Value = Row> {
    (
        0u64..2000,
        0u64..12,
        0u64..6,
        0u8..6,
        0u8..12,
        0u8..6,
        0u8..5,
        0u8..3,
    )
}

/// A problem from rows; `pins` pins the first few buffers at disjoint byte ranges (so that the
/// pins alone are always feasible), each aligned to the buffer's own alignment.
fn build(rows: &[Row], pins: usize) -> Problem {
    let steps = 12u64;
    let mut top = 0u64;
    let buffers: Vec<Buffer> = rows
        .iter()
        .enumerate()
        .map(
            |(i, &(size, start, len, kind, flags, align, gear, stream))| {
                let start = start % steps;
                let end = (start + len).min(steps - 1);
                let mut b = Buffer::new(format!("t{i}"), size, start, end);
                b.kind = match kind {
                    0 => BufferKind::GraphInput,
                    1 => BufferKind::GraphOutput,
                    2 => BufferKind::Workspace,
                    _ => BufferKind::Activation,
                };
                b.flags.no_reuse = flags == 1;
                b.flags.zero_copy = flags == 2;
                b.flags.atomic_clean = flags == 3 || flags == 4;
                // GE's per-index I/O reuse (meaningful on zero-copy graph I/O), also with an
                // atomic-clean buffer
                b.flags.zero_copy_reuse = flags == 4 || flags == 5;
                b.alignment = [1, 1, 3, 8, 64, 1024][usize::from(align)];
                b.gear = (gear >= 3).then(|| u64::from(gear - 2));
                b.stream = u32::from(stream);
                b.producer = Some(start);
                if i < pins {
                    // a pin leaves room for any padding (GE: ceil32 + 32) and plan alignment (512)
                    let off = top.div_ceil(b.alignment) * b.alignment;
                    b.fixed_offset = Some(off);
                    top = off + size + 4096;
                }
                b
            },
        )
        .collect();
    let mut p = Problem::from_buffers("random", buffers);
    p.steps = steps;
    p.ops = (0..steps)
        .map(|k| OpInfo {
            name: format!("op{k}"),
            op_type: "Op".into(),
            stream: u32::try_from(k % 2).unwrap_or(0),
            preds: if k == 0 { vec![] } else { vec![k - 1] },
            ..OpInfo::default()
        })
        .collect();
    p
}

fn options() -> impl Strategy<Value = PlanOptions> {
    (
        prop_oneof![Just(1u64), Just(3), Just(32), Just(512)],
        any::<bool>(),
        0u8..4,
        0u8..3,
        any::<bool>(),
    )
        .prop_map(|(alignment, ge, reuse, zc, atomic)| PlanOptions {
            alignment,
            padding: if ge { Padding::Ge } else { Padding::None },
            reuse: reuse != 0, // reuse off a quarter of the time
            // zero-copy I/O, the same reused (GE's I/O reuse options), or I/O as activations
            zero_copy_io: zc != 0,
            zero_copy_reuse: zc == 2,
            atomic_centralised: atomic,
            // optimal's registry entry counts nodes: 1 ms = a small budget, enough to search
            time_limit_ms: 1,
            zero_copy_alignment: None,
            ..PlanOptions::default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    #[test]
    fn every_strategy_honours_every_constraint(
        rows in proptest::collection::vec(row(), 0..14),
        pins in 0usize..3,
        o in options(),
    ) {
        let p = build(&rows, pins);
        p.check().expect("the generator makes consistent problems");
        let lb = lower_bound(&p).expect("bound").lower_bound;
        let rules = Rules::from(&o);
        for s in strategies() {
            let plan = s.run(&p, &o);
            let plan = match plan {
                Ok(plan) => plan,
                Err(e) => {
                    prop_assert!(false, "{} refused a feasible problem: {}", s.name, e);
                    unreachable!()
                }
            };
            if let Err(v) = validate_with(&p, &plan, &rules) {
                prop_assert!(false, "{}: {}", s.name, v.describe(&p));
            }
            prop_assert!(plan.peak >= lb, "{} peak {} below the lower bound {}", s.name, plan.peak, lb);
        }
    }
}

/// The brute-force referee: one byte map per step (and per gear), every rule written out
/// directly from `docs/formats.md` and `Rules`, nothing shared with `validate.rs`.
fn brute_force_ok(p: &Problem, plan: &Plan, rules: &Rules) -> bool {
    let n = p.buffers.len();
    if plan.offsets.len() != n || plan.sizes.len() != n {
        return false;
    }
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    for (i, b) in p.buffers.iter().enumerate() {
        let (off, size) = (plan.offsets[i], plan.sizes[i]);
        if b.start > b.end || b.end >= p.steps || size < b.size {
            return false;
        }
        match b.fixed_offset {
            Some(f) if f != off || off % b.alignment != 0 => return false,
            Some(_) => {}
            None => {
                let a = plan.alignment.max(1);
                let lcm = a / gcd(a, b.alignment) * b.alignment;
                if off % lcm != 0 {
                    return false;
                }
            }
        }
        if size > 0 && off + size > plan.peak {
            return false;
        }
    }
    // the steps each buffer holds its bytes over
    let held = |b: &Buffer, t: u64| {
        let exclusive = b.flags.no_reuse
            || b.flags.zero_copy
            || (rules.zero_copy_io
                && matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput))
            || !rules.reuse;
        if exclusive {
            true
        } else if b.flags.atomic_clean && rules.atomic_centralised {
            t <= b.end
        } else {
            b.start <= t && t <= b.end
        }
    };
    let mut gears: Vec<Option<u64>> = p.buffers.iter().map(|b| b.gear).collect();
    gears.push(None);
    gears.sort_unstable();
    gears.dedup();
    let idx = |x: u64| usize::try_from(x).expect("small plans");
    let top = idx(plan.peak);
    for g in gears {
        let in_run = |b: &Buffer| b.gear.is_none() || b.gear == g;
        for t in 0..p.steps {
            let mut owner = vec![usize::MAX; top];
            for (i, b) in p.buffers.iter().enumerate() {
                if !in_run(b) || !held(b, t) || plan.sizes[i] == 0 {
                    continue;
                }
                let off = idx(plan.offsets[i]);
                for byte in &mut owner[off..off + idx(plan.sizes[i])] {
                    if *byte != usize::MAX {
                        return false;
                    }
                    *byte = i;
                }
            }
        }
    }
    true
}

fn small_instance() -> impl Strategy<Value = (Problem, Plan, Rules)> {
    (
        proptest::collection::vec(
            (
                0u64..6,
                0u64..5,
                0u64..3,
                0u8..8,
                0u8..4,
                0u8..4,
                0u64..8,
                0u64..3,
            ),
            1..7,
        ),
        prop_oneof![Just(1u64), Just(2), Just(3)],
        any::<(bool, bool, bool)>(),
        0u64..4,
    )
        .prop_map(|(rows, alignment, (reuse, zc, atomic), peak_slack)| {
            let mut buffers = Vec::new();
            let (mut offsets, mut sizes) = (Vec::new(), Vec::new());
            for (i, &(size, start, len, flags, align, gear, off, pad)) in rows.iter().enumerate() {
                let mut b = Buffer::new(format!("b{i}"), size, start, (start + len).min(5));
                b.flags.no_reuse = flags == 1;
                b.flags.zero_copy = flags == 2;
                b.flags.atomic_clean = flags == 3;
                b.kind = match flags {
                    4 => BufferKind::GraphInput,
                    5 => BufferKind::GraphOutput,
                    _ => BufferKind::Activation,
                };
                b.alignment = [1, 1, 2, 3][usize::from(align)];
                b.gear = (gear >= 2).then(|| u64::from(gear - 1));
                if flags == 6 {
                    b.fixed_offset = Some(off);
                }
                buffers.push(b);
                offsets.push(off);
                // sometimes a size too small for the buffer
                sizes.push((size + pad).saturating_sub(u64::from(pad == 2) * 2));
            }
            let problem = Problem::from_buffers("small", buffers);
            let mut plan = Plan::new("random", alignment, offsets, sizes).expect("plan");
            plan.peak = plan.peak.saturating_sub(peak_slack / 3);
            let rules = Rules {
                reuse,
                zero_copy_io: zc,
                zero_copy_reuse: false,
                atomic_centralised: atomic,
                zero_copy_alignment: None,
            };
            (problem, plan, rules)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]
    #[test]
    fn validate_agrees_with_a_byte_map((problem, plan, rules) in small_instance()) {
        let fast = validate_with(&problem, &plan, &rules);
        let slow = brute_force_ok(&problem, &plan, &rules);
        prop_assert_eq!(fast.is_ok(), slow, "validate says {:?}", fast);
    }
}

/// Found by the `plan_validate` fuzz target: two pins sharing bytes at different steps, one of
/// them no-reuse, were planned by GE's strategies as given. Every strategy must refuse.
#[test]
fn pins_that_the_rules_make_collide_are_refused_by_every_strategy() {
    let mut a = Buffer::new("a", 8, 0, 0);
    let mut b = Buffer::new("b", 8, 2, 2);
    a.fixed_offset = Some(0);
    b.fixed_offset = Some(4);
    b.flags.no_reuse = true;
    let p = Problem::from_buffers("pins", vec![a, b]);
    for s in strategies() {
        let e = s.run(&p, &PlanOptions::exact()).expect_err(s.name);
        assert_eq!(
            e.kind(),
            memplan_core::ErrorKind::Infeasible,
            "{}: {e}",
            s.name
        );
    }
}
