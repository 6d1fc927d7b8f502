//! Tests of the exact solver against independent brute forces.
//!
//! The oracle: for buffers without pinned offsets, some order of placing them one by one, each
//! at the lowest (aligned) offset where it overlaps no placed buffer it is live with, reaches
//! the optimum. Proof: take an optimal plan and place the buffers in order of its offsets; by
//! induction every buffer lands at or below its optimal offset (everything placed before it
//! that it is live with sits entirely below its optimal offset, and lowering those only makes
//! room), so the peak is at most the optimum. [`lowest_fit_optimum`] tries every order; on the
//! smallest problems it is itself checked against trying every offset
//! ([`every_offset_optimum`]). Neither shares code with the crate.

use alloc::format;
use alloc::vec::Vec;
use core::cell::Cell;

use proptest::prelude::*;

use super::*;
use crate::error::ErrorKind;
use crate::problem::Buffer;
use crate::validate::validate;

/// A tiny buffer: `(size, start, end, alignment)`, inclusive live range.
type Tiny = (u64, u64, u64, u64);

fn live_together(a: &Tiny, b: &Tiny) -> bool {
    a.1 <= b.2 && b.1 <= a.2
}

fn disjoint(o1: u64, s1: u64, o2: u64, s2: u64) -> bool {
    s1 == 0 || s2 == 0 || o1 + s1 <= o2 || o2 + s2 <= o1
}

/// The planned size: under `PlanOptions::exact()` a buffer's own alignment constrains its
/// offset, not its size.
fn planned(b: &Tiny) -> u64 {
    b.0
}

fn lowest_fit_peak(bufs: &[Tiny], order: &[usize]) -> u64 {
    let mut off: Vec<Option<u64>> = alloc::vec![None; bufs.len()];
    let mut peak = 0;
    for &i in order {
        let (s, a) = (planned(&bufs[i]), bufs[i].3);
        let placed: Vec<usize> = (0..bufs.len())
            .filter(|&j| off[j].is_some() && live_together(&bufs[i], &bufs[j]))
            .collect();
        // the lowest feasible offset is 0 or a placed top rounded up to the alignment
        let mut cands: Vec<u64> = placed
            .iter()
            .map(|&j| (off[j].unwrap() + planned(&bufs[j])).div_ceil(a) * a)
            .collect();
        cands.push(0);
        cands.sort_unstable();
        let o = cands
            .into_iter()
            .find(|&c| {
                placed
                    .iter()
                    .all(|&j| disjoint(c, s, off[j].unwrap(), planned(&bufs[j])))
            })
            .unwrap();
        off[i] = Some(o);
        if s > 0 {
            peak = peak.max(o + s);
        }
    }
    peak
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return alloc::vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for k in 0..=p.len() {
            let mut q = p.clone();
            q.insert(k, n - 1);
            out.push(q);
        }
    }
    out
}

/// The optimum by lowest-fit placement over every order.
fn lowest_fit_optimum(bufs: &[Tiny]) -> u64 {
    permutations(bufs.len())
        .iter()
        .map(|o| lowest_fit_peak(bufs, o))
        .min()
        .unwrap()
}

/// The optimum by trying every aligned offset in `[0, sum of sizes]` for every buffer.
fn every_offset_optimum(bufs: &[Tiny]) -> u64 {
    // every buffer fits below the sum of sizes rounded up to their alignments
    let total: u64 = bufs.iter().map(|b| b.0.div_ceil(b.3) * b.3).sum();
    let mut best = u64::MAX;
    let mut off = alloc::vec![0u64; bufs.len()];
    fn rec(bufs: &[Tiny], total: u64, k: usize, off: &mut Vec<u64>, best: &mut u64) {
        if k == bufs.len() {
            let peak = (0..k)
                .filter(|&i| planned(&bufs[i]) > 0)
                .map(|i| off[i] + planned(&bufs[i]))
                .max()
                .unwrap_or(0);
            *best = (*best).min(peak);
            return;
        }
        let mut o = 0;
        while o <= total {
            let ok = (0..k).all(|j| {
                !live_together(&bufs[k], &bufs[j])
                    || disjoint(o, planned(&bufs[k]), off[j], planned(&bufs[j]))
            });
            if ok {
                off[k] = o;
                rec(bufs, total, k + 1, off, best);
            }
            o += bufs[k].3;
        }
    }
    rec(bufs, total, 0, &mut off, &mut best);
    best
}

fn problem(bufs: &[Tiny]) -> Problem {
    let v = bufs
        .iter()
        .enumerate()
        .map(|(i, &(size, start, end, align))| {
            let mut b = Buffer::new(format!("b{i}"), size, start, end);
            b.alignment = align;
            b
        })
        .collect();
    Problem::from_buffers("tiny", v)
}

fn solve_default(p: &Problem) -> Solution {
    solve(p, &PlanOptions::exact(), &SolverParams::default(), &NoClock).expect("solve")
}

fn tiny(max_align: u64) -> impl Strategy<Value = Vec<Tiny>> {
    let align = prop_oneof![Just(1u64), Just(2), Just(4)].prop_map(move |a| a.min(max_align));
    proptest::collection::vec(
        (0u64..=8, 0u64..5, 0u64..4, align).prop_map(|(s, st, len, a)| (s, st, st + len, a)),
        0..=6,
    )
}

/// Checks everything the brief of the solver promises on one tiny problem.
fn check_exact(bufs: &[Tiny]) -> core::result::Result<(), TestCaseError> {
    let p = problem(bufs);
    let o = PlanOptions::exact();
    let want = lowest_fit_optimum(bufs);
    let sol = solve_default(&p);
    prop_assert_eq!(validate(&p, &sol.plan), Ok(()));
    prop_assert_eq!(sol.best_peak, want, "{:?}", bufs);
    prop_assert_eq!(sol.plan.peak, want);
    prop_assert!(sol.proven_optimal);
    prop_assert_eq!(sol.lower_bound, want);
    prop_assert_eq!(sol.stop, Stop::Finished);
    prop_assert!(sol.seed_peak >= want);
    let lb = crate::bound::bounds_with(&p, |i| Ok(planned(&bufs[i])))
        .expect("bound")
        .lower_bound;
    prop_assert!(lb <= want);
    // the registry entry (node budget from the default 2 s) reaches the same optimum
    let reg = crate::strategy::plan(&p, "optimal", &o).expect("optimal");
    prop_assert_eq!(validate(&p, &reg), Ok(()));
    prop_assert_eq!(reg.peak, want);
    let search = reg.search.expect("optimal reports its search");
    prop_assert!(search.proven_optimal);
    prop_assert_eq!(search.best_peak, want);
    let port = crate::strategy::plan(&p, "portfolio", &o).expect("portfolio");
    prop_assert!(
        port.peak >= want,
        "portfolio {} < optimum {}",
        port.peak,
        want
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// The oracle itself: lowest fit over every order finds what trying every offset finds.
    #[test]
    fn oracles_agree(bufs in proptest::collection::vec(
        (1u64..=3, 0u64..3, 0u64..3, prop_oneof![Just(1u64), Just(2)])
            .prop_map(|(s, st, len, a)| (s, st, st + len, a)),
        0..=4,
    )) {
        prop_assert_eq!(lowest_fit_optimum(&bufs), every_offset_optimum(&bufs), "{:?}", bufs);
    }

    #[test]
    fn optimum_matches_brute_force_alignment_1(bufs in tiny(1)) {
        check_exact(&bufs)?;
    }

    #[test]
    fn optimum_matches_brute_force_with_alignments(bufs in tiny(4)) {
        check_exact(&bufs)?;
    }

    /// Turning a pruning technique off changes the speed of a finished search, not its answer.
    #[test]
    fn switches_do_not_change_the_answer(bufs in tiny(2)) {
        let p = problem(&bufs);
        let want = lowest_fit_optimum(&bufs);
        let base = SolverParams::default();
        let offs: [fn(&mut SolverParams); 10] = [
            |q| q.canonical_only = false,
            |q| q.section_inference = false,
            |q| q.dynamic_ordering = false,
            |q| q.check_dominance = false,
            |q| q.unallocated_floor = false,
            |q| q.static_preordering = false,
            |q| q.dynamic_decomposition = false,
            |q| q.monotonic_floor = false,
            |q| q.round_robin = false,
            |q| {
                *q = SolverParams {
                    canonical_only: false,
                    section_inference: false,
                    dynamic_ordering: false,
                    check_dominance: false,
                    unallocated_floor: false,
                    static_preordering: false,
                    dynamic_decomposition: false,
                    monotonic_floor: false,
                    round_robin: false,
                    ..SolverParams::default()
                }
            },
        ];
        for (k, off) in offs.iter().enumerate() {
            let mut q = base.clone();
            off(&mut q);
            let sol = solve(&p, &PlanOptions::exact(), &q, &NoClock).expect("solve");
            prop_assert_eq!(validate(&p, &sol.plan), Ok(()));
            prop_assert_eq!(sol.best_peak, want, "switch {} off: {:?}", k, bufs);
            prop_assert!(sol.proven_optimal);
        }
    }

    /// Gears: every plan validates, respects the bound and is never worse than its seed.
    #[test]
    fn gears_validate(bufs in tiny(1), gears in proptest::collection::vec(0u64..3, 6)) {
        let mut p = problem(&bufs);
        for (b, &g) in p.buffers.iter_mut().zip(&gears) {
            b.gear = if g == 0 { None } else { Some(g) };
        }
        let sol = solve_default(&p);
        prop_assert_eq!(validate(&p, &sol.plan), Ok(()));
        let lb = crate::bound::lower_bound(&p).expect("bound").lower_bound;
        prop_assert!(sol.best_peak >= lb);
        prop_assert!(sol.lower_bound >= lb && sol.lower_bound <= sol.best_peak);
        prop_assert_eq!(sol.proven_optimal, sol.best_peak == sol.lower_bound);
    }
}

#[test]
fn empty_and_single_buffer() {
    let sol = solve_default(&Problem::from_buffers("empty", Vec::new()));
    assert_eq!((sol.best_peak, sol.lower_bound), (0, 0));
    assert!(sol.proven_optimal);
    let sol = solve_default(&problem(&[(7, 0, 3, 1)]));
    assert_eq!(sol.plan.offsets, [0]);
    assert_eq!(sol.best_peak, 7);
}

#[test]
fn minimalloc_example_reaches_its_optimum() {
    // MiniMalloc's examples/input.12.csv (half-open lifetimes); its optimum is 12: b1, b3 and
    // b5 (4 bytes each) are live together at time 0, and 12 is reachable (b1, b2 and b4 can
    // share 4 bytes since their lifetimes [0,3), [3,9), [9,21) are disjoint).
    let text = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n";
    let p = crate::import::csv::parse("input.12", text).unwrap();
    let sol = solve_default(&p);
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert_eq!(sol.best_peak, 12);
    assert_eq!(sol.lower_bound, 12);
    assert!(sol.proven_optimal);
    let reg = crate::strategy::plan(&p, "optimal", &PlanOptions::exact()).unwrap();
    assert_eq!(reg.peak, 12);
    assert_eq!(reg.strategy, "optimal");
    assert!(reg
        .notes
        .iter()
        .any(|n| n.starts_with("proven optimal: peak 12 B")));
}

/// Nine buffers whose optimum (8 bytes) is above the live-set bound (7 bytes). Live bytes per
/// step, by hand: step 1 b+d+e = 3+1+3 = 7, step 2 c+d+e+f = 1+1+3+2 = 7, step 3 a+c+d+f = 5,
/// step 4 a+c+g+i = 1+1+1+4 = 7, step 5 g+h+i = 1+2+4 = 7. Steps 1, 2, 4 and 5 would all have
/// to be packed without a hole, which no layout achieves; the optimum 8 comes from the
/// lowest-fit oracle over all 9! orders.
const GAP: [Tiny; 9] = [
    (1, 3, 4, 1), // a
    (3, 1, 1, 1), // b
    (1, 2, 4, 1), // c
    (1, 1, 3, 1), // d
    (3, 1, 2, 1), // e
    (2, 2, 3, 1), // f
    (1, 4, 5, 1), // g
    (2, 5, 5, 1), // h
    (4, 4, 5, 1), // i
];

#[test]
fn optimum_above_the_live_set_bound_is_proven() {
    let p = problem(&GAP);
    assert_eq!(crate::bound::lower_bound(&p).unwrap().lower_bound, 7);
    assert_eq!(lowest_fit_optimum(&GAP), 8);
    let sol = solve_default(&p);
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert_eq!(sol.best_peak, 8);
    // the search proved capacity 7 infeasible: the lower bound rose from 7 to 8
    assert_eq!(sol.lower_bound, 8);
    assert!(sol.proven_optimal);
    assert_eq!(sol.stop, Stop::Finished);
    assert!(sol.nodes > 0);
    // capacity mode: 7 bytes is proven infeasible by exhaustive search, 8 fits
    let o = PlanOptions::exact();
    let err = solve_with_capacity(&p, &o, &SolverParams::default(), &NoClock, 7).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Infeasible);
    let fit = solve_with_capacity(&p, &o, &SolverParams::default(), &NoClock, 8).unwrap();
    assert!(fit.fits);
    assert!(fit.best_peak <= 8);
    // below the live-set bound: refused at once, no search
    let err = solve_with_capacity(&p, &o, &SolverParams::default(), &NoClock, 6).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Infeasible);
    assert!(format!("{err}").contains("lower bound 7"), "{err}");
}

#[test]
fn node_budget_cut_reports_the_gap() {
    // time_limit_ms 0 gives the registry entry a budget of 0 nodes: the seed comes back
    // unproven, with the live-set bound 7 as the lower bound.
    let p = problem(&GAP);
    let o = PlanOptions {
        time_limit_ms: 0,
        zero_copy_alignment: None,
        ..PlanOptions::exact()
    };
    let plan = crate::strategy::plan(&p, "optimal", &o).unwrap();
    assert_eq!(validate(&p, &plan), Ok(()));
    let seed = seed_plan(&p, &o).unwrap().peak;
    assert_eq!(plan.peak, seed);
    assert!(seed >= 8);
    let search = plan.search.expect("optimal reports its search");
    assert!(!search.proven_optimal);
    assert_eq!(search.lower_bound, 7);
    assert_eq!(search.best_peak, plan.peak);
    assert_eq!(search.seed_peak, seed);
    assert_eq!(search.stop, Stop::NodeLimit);
    // the stats and the notes render the same figures
    assert_eq!(plan.stat("proven_optimal"), Some(0));
    assert_eq!(plan.stat("lower_bound"), Some(7));
    let note = plan.notes.last().unwrap();
    assert!(note.starts_with("not proven optimal"), "{note}");
    assert!(note.contains("node budget used up"), "{note}");
    assert!(
        note.contains(&format!(
            "lower bound 7 B (planned sizes), gap {} B",
            seed - 7
        )),
        "{note}"
    );
    if seed == 8 {
        // gap 1 B over a bound of 7 B: 1/7 = 14.2857 %
        assert!(
            note.contains("lower bound 7 B (planned sizes), gap 1 B (14.2857%)"),
            "{note}"
        );
    }
}

/// A clock that moves `step` ms every time it is read, and may report a cancellation.
struct Ticking {
    now: Cell<u64>,
    step: u64,
    cancel: bool,
}

impl Clock for Ticking {
    fn now_ms(&self) -> u64 {
        let t = self.now.get();
        self.now.set(t + self.step);
        t
    }
    fn cancelled(&self) -> bool {
        self.cancel
    }
}

/// A problem big enough that the search is still running at its first clock poll (every 128
/// nodes): 48 random buffers, deterministic.
fn busy_problem() -> Problem {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let bufs: Vec<Tiny> = (0..48)
        .map(|_| {
            let st = rnd(30);
            (1 + rnd(40), st, st + rnd(8), 1)
        })
        .collect();
    problem(&bufs)
}

#[test]
fn time_limit_and_cancellation_stop_the_search() {
    // (every clock reading moves 1 s, so a 1 ms limit is overrun: the note says by what)
    let p = busy_problem();
    let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
    let o = PlanOptions {
        time_limit_ms: 1,
        zero_copy_alignment: None,
        ..PlanOptions::exact()
    };
    for (cancel, want) in [(false, Stop::TimeLimit), (true, Stop::Cancelled)] {
        let clock = Ticking {
            now: Cell::new(0),
            step: 1000,
            cancel,
        };
        let sol = solve(&p, &o, &SolverParams::default(), &clock).unwrap();
        assert_eq!(validate(&p, &sol.plan), Ok(()));
        assert_eq!(sol.stop, want);
        assert!(sol.best_peak <= sol.seed_peak);
        assert!(sol.lower_bound >= lb && sol.lower_bound <= sol.best_peak);
        assert_eq!(sol.proven_optimal, sol.best_peak == sol.lower_bound);
        let note = sol.plan.notes.last().unwrap();
        let why = if cancel {
            "cancelled"
        } else {
            "time limit reached"
        };
        assert!(note.ends_with(why), "{note}");
        let over = &sol.plan.notes[sol.plan.notes.len() - 2];
        assert!(
            over.starts_with("time limit 1 ms overrun")
                && over.contains("the slowest (greedy-breadth) took 1000 ms"),
            "{over}"
        );
        if !sol.proven_optimal {
            let gap = sol.best_peak - sol.lower_bound;
            assert!(note.contains(&format!("gap {gap} B")), "{note}");
        }
        // the search was cut early: far fewer nodes than an unlimited solve
        assert!(sol.nodes <= 1024, "{} nodes", sol.nodes);
    }
}

/// Network-like buffers (mostly short, a few long-lived), deterministic.
pub(super) fn trace_like(n: usize, seed: u64) -> Problem {
    let mut x = seed;
    let mut next = |m: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m.max(1)
    };
    let steps = (n as u64) * 2 / 3;
    let bufs: Vec<Tiny> = (0..n)
        .map(|_| {
            let long = next(40) == 0;
            let start = next(steps);
            let len = if long {
                steps / 5 + next(steps / 3)
            } else {
                next(4)
            };
            let exp = 2 + next(8);
            let size = 16 * (1 + next(1 << exp));
            let align = match next(3) {
                0 => 1,
                1 => 16,
                _ => 64,
            };
            (size, start, (start + len).min(steps - 1), align)
        })
        .collect();
    problem(&bufs)
}

fn small_windows() -> SolverParams {
    SolverParams {
        max_exact_buffers: 40,
        window_buffers: 12,
        node_limit: Some(300_000),
        ..SolverParams::default()
    }
}

#[test]
fn window_search_plans_validate_and_never_lose_to_the_seed() {
    for seed in 1..=6 {
        let p = trace_like(400, seed);
        let o = PlanOptions::exact();
        let params = small_windows();
        let sol = solve(&p, &o, &params, &NoClock).expect("solve");
        assert_eq!(validate(&p, &sol.plan), Ok(()), "seed {seed}");
        assert!(sol.best_peak <= sol.seed_peak, "seed {seed}");
        assert!(sol.lower_bound <= sol.best_peak, "seed {seed}");
        assert_eq!(sol.plan.peak, sol.best_peak);
        // capacity mode: halfway between the bound and the seed
        let cap = sol.lower_bound + (sol.seed_peak - sol.lower_bound) / 2;
        let fit = solve_with_capacity(&p, &o, &params, &NoClock, cap).expect("capacity");
        assert_eq!(validate(&p, &fit.plan), Ok(()), "seed {seed}");
        assert_eq!(fit.fits, fit.best_peak <= cap);
        assert!(fit.best_peak <= fit.seed_peak);
    }
}

#[test]
fn window_search_with_pinned_buffers_validates() {
    let mut p = trace_like(300, 9);
    // pin every 25th buffer at a spot of its own above everything else
    let mut top = 1 << 24;
    for b in p.buffers.iter_mut().step_by(25) {
        b.fixed_offset = Some(top);
        top += b.size.div_ceil(64) * 64 + 64;
    }
    let sol = solve(&p, &PlanOptions::exact(), &small_windows(), &NoClock).expect("solve");
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert!(sol.best_peak <= sol.seed_peak);
}

#[test]
fn window_search_stops_on_the_clock() {
    let p = trace_like(400, 3);
    let o = PlanOptions {
        time_limit_ms: 50,
        zero_copy_alignment: None,
        ..PlanOptions::exact()
    };
    let clock = Ticking {
        now: Cell::new(0),
        step: 1,
        cancel: false,
    };
    let params = SolverParams {
        node_limit: None,
        ..small_windows()
    };
    let sol = solve(&p, &o, &params, &clock).expect("solve");
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert!(sol.best_peak <= sol.seed_peak);
}

/// Above `max_exact_buffers`, on a clock that moves 1 ms at every reading: the seed stops
/// starting heuristics once the deadline has passed, and every later
/// stage reads the clock, so the solve ends a few readings after the deadline. The counts of
/// the large-input search are in the stats.
#[test]
fn a_large_solve_reads_the_clock_in_every_stage() {
    let p = trace_like(3000, 5);
    let counts = |sol: &Solution| sol.plan.search.expect("optimal reports its search").counts;
    for limit in [3, 400] {
        let o = PlanOptions {
            time_limit_ms: limit,
            zero_copy_alignment: None,
            ..PlanOptions::exact()
        };
        let clock = Ticking {
            now: Cell::new(0),
            step: 1,
            cancel: false,
        };
        let params = SolverParams {
            node_limit: None,
            ..SolverParams::default()
        };
        let sol = solve(&p, &o, &params, &clock).expect("solve");
        assert_eq!(validate(&p, &sol.plan), Ok(()));
        assert!(sol.best_peak <= sol.seed_peak);
        if limit == 3 {
            assert_eq!(sol.stop, Stop::TimeLimit);
        }
        // readings after the deadline: the stages' last checks, not a loop that ignores it
        assert!(
            clock.now.get() <= limit + 40,
            "limit {limit}: {} ms",
            clock.now.get()
        );
        let c = counts(&sol);
        let seeds = c.seed_heuristics;
        if limit == 3 {
            // two readings per heuristic: the second one is not started
            assert_eq!(seeds, 1);
            assert!(sol
                .plan
                .notes
                .iter()
                .any(|n| n.contains("1 of the 6 portfolio")));
            // within 50 ms of the limit: no overrun note
            assert!(
                !sol.plan.notes.iter().any(|n| n.contains("overrun")),
                "{:?}",
                sol.plan.notes
            );
        } else {
            assert_eq!(seeds, 6);
            assert!(c.windows > 0);
            assert!(c.windows_accepted <= c.windows);
        }
    }
}

/// `blocks` blocks of three steps each, time-disjoint, under one buffer `L` (1 byte) live
/// through all of them. Block `k` at steps `3k, 3k+1`: `A` (2 bytes, step 3k), `B` (2 bytes,
/// step 3k+1), `C` (2 bytes, both steps). Live bytes: 2 + 2 + 1 = 5 at every step, so the
/// optimum is the live-set bound 5 (`L` at 0, `C` at 1, `A` and `B` at 3). The bad start:
/// `A` at 0, `B` at 2, `C` at 4, `L` at 6 (peak 7): `C` can only come down if `A` and `B` move
/// up, and the long-lived `L` only once every block is repacked.
#[test]
fn window_search_reaches_a_hand_checked_optimum() {
    let blocks = 30u64;
    let mut bufs: Vec<Tiny> = Vec::new();
    let mut offsets = Vec::new();
    for k in 0..blocks {
        bufs.extend([
            (2, 3 * k, 3 * k, 1),
            (2, 3 * k + 1, 3 * k + 1, 1),
            (2, 3 * k, 3 * k + 1, 1),
        ]);
        offsets.extend([0, 2, 4]);
    }
    bufs.push((1, 0, 3 * blocks - 1, 1));
    offsets.push(6);
    let p = problem(&bufs);
    let sizes: Vec<u64> = bufs.iter().map(planned).collect();
    let bad = Plan::new("bad", 1, offsets.clone(), sizes.clone()).unwrap();
    assert_eq!(validate(&p, &bad), Ok(()));
    assert_eq!(bad.peak, 7);
    let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
    assert_eq!(lb, 5);
    let items: Vec<Item> = bufs
        .iter()
        .map(|&(size, start, end, align)| Item {
            size,
            align,
            start,
            end,
            fixed: None,
        })
        .collect();
    let params = SolverParams {
        max_exact_buffers: 10,
        window_buffers: 8,
        ..SolverParams::default()
    };
    let mut limits = Limits::nodes_only(1_000_000);
    let (out, proven) = window::improve(&items, offsets, lb, None, &params, &mut limits);
    let plan = Plan::new("windows", 1, out, sizes).unwrap();
    assert_eq!(validate(&p, &plan), Ok(()));
    assert_eq!(plan.peak, 5);
    assert_eq!(proven, 5);
    assert!(!limits.stopped);
    // the same instance through `solve`: at the bound as well
    let sol = solve(&p, &PlanOptions::exact(), &params, &NoClock).unwrap();
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert_eq!(sol.best_peak, 5);
    assert!(sol.proven_optimal);
}

pub(super) fn items_of(p: &Problem) -> Vec<Item> {
    p.buffers
        .iter()
        .map(|b| Item {
            size: b.size,
            align: b.alignment.max(1),
            start: b.start,
            end: b.end,
            fixed: b.fixed_offset,
        })
        .collect()
}

#[test]
fn layered_seed_validates_beats_the_seed_and_is_deterministic() {
    let mut better = 0;
    for seed in 1..=12 {
        let p = trace_like(600, seed);
        let o = PlanOptions::exact();
        let items = items_of(&p);
        let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
        let port = seed_plan(&p, &o).unwrap();
        let mut limits = Limits::nodes_only(u64::MAX);
        let got = layered::seed(&p, &o, &items, lb, port.peak, &mut limits);
        let again = layered::seed(&p, &o, &items, lb, port.peak, &mut limits);
        assert_eq!(got, again, "seed {seed}: not deterministic");
        if let Some(plan) = got {
            assert_eq!(validate(&p, &plan), Ok(()), "seed {seed}");
            assert!(plan.peak < port.peak, "seed {seed}");
            assert!(plan.peak >= lb, "seed {seed}");
            better += 1;
        }
    }
    // the construction pays off on some of these traces
    assert!(better > 0);
}

#[test]
fn layered_seed_skips_pinned_and_short_only_inputs() {
    let o = PlanOptions::exact();
    let mut limits = Limits::nodes_only(u64::MAX);
    // nothing long-lived: every buffer lives one step
    let short = problem(&[(4, 0, 0, 1), (4, 1, 1, 1), (8, 2, 2, 1)]);
    assert!(layered::seed(&short, &o, &items_of(&short), 8, 9, &mut limits).is_none());
    let mut pinned = trace_like(300, 2);
    pinned.buffers[0].fixed_offset = Some(1 << 30);
    let lb = crate::bound::lower_bound(&pinned).unwrap().lower_bound;
    assert!(layered::seed(&pinned, &o, &items_of(&pinned), lb, u64::MAX, &mut limits).is_none());
}

#[test]
fn window_search_is_deterministic_and_says_when_it_gives_up() {
    for seed in [1, 4] {
        let p = trace_like(500, seed);
        let o = PlanOptions::exact();
        let params = small_windows();
        let a = solve(&p, &o, &params, &NoClock).expect("solve");
        let b = solve(&p, &o, &params, &NoClock).expect("solve");
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(validate(&p, &a.plan), Ok(()));
        let note = a.plan.notes.last().unwrap();
        if a.stop == Stop::Finished && !a.proven_optimal {
            assert!(note.contains("search stopped without a proof"), "{note}");
        }
        assert!(
            !note.contains("search finished") || a.proven_optimal,
            "{note}"
        );
    }
}

/// Limits of `cap` search nodes and no clock.
#[test]
fn the_seed_order_lists_every_portfolio_heuristic_once() {
    let mut a: Vec<&str> = SEED_ORDER.to_vec();
    let mut b: Vec<&str> = crate::strategy::packing::PORTFOLIO
        .iter()
        .map(|x| x.0)
        .collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

#[test]
fn cross_section_windows_validate_and_never_lose_to_the_seed() {
    let params = SolverParams {
        section_windows: true,
        ..small_windows()
    };
    for seed in 1..=4 {
        let p = trace_like(400, seed);
        let sol = solve(&p, &PlanOptions::exact(), &params, &NoClock).expect("solve");
        assert_eq!(validate(&p, &sol.plan), Ok(()), "seed {seed}");
        assert!(sol.best_peak <= sol.seed_peak, "seed {seed}");
        assert!(sol.lower_bound <= sol.best_peak, "seed {seed}");
    }
}

/// Seven buffers whose live-set bound (6 bytes, steps 0, 1 and 3) cannot be reached: the
/// optimum is 7. By hand: at step 0, `c` and `d` (3 + 3) fill `[0, 6)`, so `c` takes one half;
/// at step 1 `c`, `e`, `f` (3 + 1 + 2) fill it again, so `e` and `f` share the other half; at
/// step 3 `a`, `f`, `g` (2 + 2 + 2) fill it, so `a` and `g` tile the bytes `f` leaves, and `a`
/// also avoids `e` (step 2). With `c` low: `f` at 3 leaves `[0, 3)` and `[5, 6)`, and the
/// one-byte run takes no 2-byte buffer; `f` at 4 forces `a` at 0, `g` at 2, and then step 4
/// (`b`, 3 bytes, beside `g`) has no 3-byte run. `c` high is the mirror image. The plan at 7
/// (`a` 0, `b` 0, `c` 0, `d` 3, `e` 3, `f` 5, `g` 3) checked by hand and by the validator.
fn gap_of_one() -> (Vec<Tiny>, Vec<u64>) {
    let bufs = alloc::vec![
        (2, 2, 3, 1), // a
        (3, 4, 4, 1), // b
        (3, 0, 1, 1), // c
        (3, 0, 0, 1), // d
        (1, 1, 2, 1), // e
        (2, 1, 3, 1), // f
        (2, 3, 5, 1), // g
    ];
    (bufs, alloc::vec![0, 0, 0, 3, 3, 5, 3])
}

#[test]
fn the_certificate_names_the_band_it_searched_to_exhaustion() {
    // `gap_of_one` at its optimum 7 (live-set bound 6): the only buffer at the peak is f
    // (offset 5, 2 B, steps 1-3). The first band (f's steps, 96 buffers wanted) frees the
    // five buffers live during steps 1-3 (a, c, e, f, g) against b and d: exhausted at 6.
    // The wider ones reach 8 steps on each side, so they free all seven against nothing:
    // exhausted too, the largest, and the certificate names it (steps 0-11, floor 0).
    let (bufs, offsets) = gap_of_one();
    let p = problem(&bufs);
    let items = items_of(&p);
    let mut out = offsets.clone();
    let mut limits = Limits::nodes_only(1_000_000);
    let cert = window::certify(&items, &mut out, 6, &SolverParams::default(), &mut limits);
    assert_eq!(out, offsets, "nothing fits under 7: the plan is unchanged");
    assert_eq!(
        cert,
        Some(window::Cert {
            from: 0,
            to: 11,
            floor: 0,
            buffers: 7,
            exhausted: true
        })
    );
    assert_eq!(limits.counts.bands, 3);
    assert_eq!(limits.counts.bands_exhausted, 3);
    // at the bound there is nothing to certify
    let mut limits = Limits::nodes_only(1_000_000);
    assert_eq!(
        window::certify(&items, &mut out, 7, &SolverParams::default(), &mut limits),
        None
    );
}

#[test]
fn exhausted_windows_are_counted_and_a_whole_problem_window_proves_the_bound() {
    let (bufs, offsets) = gap_of_one();
    let p = problem(&bufs);
    let sizes: Vec<u64> = bufs.iter().map(planned).collect();
    let start = Plan::new("hand", 1, offsets.clone(), sizes.clone()).unwrap();
    assert_eq!(validate(&p, &start), Ok(()));
    assert_eq!(start.peak, 7);
    let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
    assert_eq!(lb, 6);
    let items = items_of(&p);
    let params = SolverParams::default();
    let mut limits = Limits::nodes_only(1_000_000);
    let (out, proven) = window::improve(&items, offsets, lb, None, &params, &mut limits);
    let plan = Plan::new("windows", 1, out, sizes).unwrap();
    assert_eq!(validate(&p, &plan), Ok(()));
    assert_eq!(plan.peak, 7);
    // the first window frees all seven buffers (no obstacle) and exhausts capacity 6: the
    // optimum 7 is proven, and the search stops there
    assert_eq!(proven, 7);
    let c = limits.counts;
    assert_eq!(c.windows, 1, "{c:?}");
    assert_eq!(
        (c.windows_ok, c.windows_exhausted, c.windows_cut),
        (0, 1, 0)
    );
    assert_eq!(c.bands, 0);
    assert!(!limits.stopped);

    // through `solve` on the large-input path (every buffer counts as "large"): the same
    // proof, and the notes and typed counts say how it was reached
    let params = SolverParams {
        max_exact_buffers: 0,
        ..SolverParams::default()
    };
    let sol = solve(&p, &PlanOptions::exact(), &params, &NoClock).unwrap();
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert_eq!(sol.best_peak, 7);
    assert_eq!(sol.lower_bound, 7);
    assert!(sol.proven_optimal);
    let c = sol.plan.search.unwrap().counts;
    assert_eq!(
        c.windows,
        c.windows_accepted + c.windows_exhausted + c.windows_cut
    );
    assert!(c.windows_exhausted >= 1, "{c:?}");
    assert_eq!(c.windows_cut, 0);
    // the exhausted window at 6 freed all seven buffers
    assert_eq!(c.exhausted_under_peak, 7);
    assert!(
        sol.plan.notes.iter().any(
            |n| n.contains(" searched to exhaustion without a fit, 0 cut by their node budget")
        ),
        "{:?}",
        sol.plan.notes
    );
    assert!(sol
        .plan
        .stats
        .iter()
        .any(|(k, v)| k == "windows_exhausted" && *v == c.windows_exhausted));
}

/// A long-lived byte over 60 steps on top of a ladder of one-step bytes at offsets 0 and 1 in
/// turn: peak 3, live-set bound 2 (one short byte and the long one at every step). Only
/// moving the long buffer together with every short one lowers the peak (each short one
/// to 0, the long one to 1): a band move over the long buffer's lifetime, with no floor.
#[test]
fn a_band_move_frees_a_long_buffer_with_everything_above_its_floor() {
    let steps = 60u64;
    let mut bufs: Vec<Tiny> = (0..steps).map(|k| (1, k, k, 1)).collect();
    let mut offsets: Vec<u64> = (0..steps).map(|k| k % 2).collect();
    bufs.push((1, 0, steps - 1, 1));
    offsets.push(2);
    let p = problem(&bufs);
    let sizes: Vec<u64> = bufs.iter().map(planned).collect();
    assert_eq!(
        validate(
            &p,
            &Plan::new("hand", 1, offsets.clone(), sizes.clone()).unwrap()
        ),
        Ok(())
    );
    let items = items_of(&p);
    // the long buffer is long-lived for the window search (widest 2 %, over 16 steps)
    assert!(steps - 1 > window::long_cut(&items));
    let params = SolverParams::default();
    let mut limits = Limits::nodes_only(1_000_000);
    let (out, proven) = window::improve(&items, offsets, 2, None, &params, &mut limits);
    let plan = Plan::new("bands", 1, out, sizes).unwrap();
    assert_eq!(validate(&p, &plan), Ok(()));
    assert_eq!(plan.peak, 2);
    assert_eq!(proven, 2);
    let c = limits.counts;
    assert_eq!((c.bands, c.bands_ok), (1, 1), "{c:?}");
    assert_eq!(c.relocations, 0);
}

#[test]
fn boxed_rounds_with_ceiling_passes_validate_and_never_rise() {
    // 400 buffers, sizes 1-4096 B with alignment 512 (the passes' mirror argument assumes
    // alignment 1: here only their "kept when lower" rule keeps the plan valid), lifetimes
    // 1-40 steps: every round with its passes validates, and is no higher than the round
    let mut r = 0x5eed_u64;
    let mut next = || {
        r = r
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        r >> 33
    };
    let buffers: Vec<Buffer> = (0..400)
        .map(|i| {
            let start = next() % 300;
            let len = next() % 40;
            Buffer::new(format!("t{i}"), 1 + next() % 4096, start, start + len)
        })
        .collect();
    let problem = Problem::from_buffers("boxed", buffers);
    for options in [PlanOptions::default(), PlanOptions::exact()] {
        let sizes = crate::strategy::planned_sizes(&problem, &options).unwrap();
        let items: Vec<Item> = problem
            .buffers
            .iter()
            .zip(&sizes)
            .map(|(b, &size)| Item {
                size,
                align: options.alignment_of(b).unwrap(),
                start: b.start,
                end: b.end,
                fixed: None,
            })
            .collect();
        for shift in 8..12 {
            for factor in BOXING_FACTORS {
                let plain =
                    crate::strategy::boxing::plan(&problem, &options, shift, factor).unwrap();
                let mut limits = Limits::nodes_only(u64::MAX);
                let l = &mut limits;
                let (plan, passes) =
                    boxed(&problem, &options, &items, shift, factor, u64::MAX, l).unwrap();
                assert!((1..=BOXING_PASSES).contains(&passes));
                let (same, none) = boxed(&problem, &options, &items, shift, factor, 0, l).unwrap();
                assert_eq!((same.offsets, none), (plain.offsets.clone(), 0));
                // no nodes left for a pass: the round as it is
                l.node_cap = 0;
                let (same, none) =
                    boxed(&problem, &options, &items, shift, factor, u64::MAX, l).unwrap();
                assert_eq!((same.offsets, none), (plain.offsets.clone(), 0));
                assert!(plan.peak <= plain.peak);
                validate(&problem, &plan).unwrap();
                let again =
                    Plan::new("x", options.alignment, plan.offsets.clone(), sizes.clone()).unwrap();
                assert_eq!(again.peak, plan.peak);
            }
        }
    }
}

#[test]
fn boxing_rounds_try_boxes_2x_on_two_shifts_first_and_every_shift_with_both_factors() {
    let first: Vec<(u64, u64)> = (0..BOXING_ROUNDS).map(|r| boxing_round(r, 0)).collect();
    assert_eq!(first, [(8, 2), (9, 2), (8, 4), (10, 2), (9, 4), (10, 4)]);
    // variant 1 runs shifts 11-13, the same factors
    assert_eq!(boxing_round(0, 1), (11, 2));
    assert_eq!(boxing_round(5, 1), (13, 4));
    // restarts: shift 8 + r / 2, factor by parity, as before
    assert_eq!(boxing_round(6, 0), (11, 2));
    assert_eq!(boxing_round(7, 0), (11, 4));
    assert_eq!(boxing_round(6, 1), (11 + (1 << 32), 2));
}

#[test]
fn the_window_search_gives_up_after_48_exhausted_windows_without_a_fit() {
    // twenty 1-byte buffers all live at step 0, stacked 0..20: the optimum is 20, but the
    // search is told the bound is 19. Each round at capacity 19 tries the one buffer on top
    // (offset 19): 3 windows (at most 8 of the 20 freed, the rest obstacles), all exhausted
    // (20 bytes live at step 0), then 6 relocations (to offsets 0..=5, each displacing the
    // one buffer there, whose 3 windows are exhausted too): 21 exhausted windows a round.
    // Without a fit the search gives up at the first round start with 48 or more exhausted:
    // after 3 rounds, 63 (the miss rule alone would run 25 rounds, 525 windows).
    let bufs: Vec<Tiny> = (0..20).map(|_| (1, 0, 0, 1)).collect();
    let p = problem(&bufs);
    let offsets: Vec<u64> = (0..20).collect();
    let items = items_of(&p);
    let params = SolverParams {
        window_buffers: 8,
        band_moves: false,
        ..SolverParams::default()
    };
    let mut limits = Limits::nodes_only(10_000_000);
    let (out, proven) = window::improve(&items, offsets.clone(), 19, None, &params, &mut limits);
    assert_eq!(out, offsets);
    assert_eq!(proven, 19);
    let c = limits.counts;
    assert_eq!(
        (c.windows_ok, c.relocations_ok, c.bands),
        (0, 0, 0),
        "{c:?}"
    );
    assert_eq!((c.windows, c.windows_exhausted), (63, 63), "{c:?}");
    assert_eq!(c.relocations, 18, "{c:?}");
    assert!(!limits.stopped);
}

/// Six buffers whose peak step, stacked by birth, packs at the bound, 7 B, where every
/// greedy order needs 9 B (hand-checked in `peak_stack`'s tests): s (3 B, steps 10-14), w (4 B,
/// 12-12), g (2 B, 1-10), t (3 B, 1-3), x (1 B, 9-9), y (1 B, 6-6).
pub(super) fn stack_six() -> Problem {
    Problem::from_buffers(
        "stack",
        alloc::vec![
            Buffer::new("s", 3, 10, 14),
            Buffer::new("w", 4, 12, 12),
            Buffer::new("g", 2, 1, 10),
            Buffer::new("t", 3, 1, 3),
            Buffer::new("x", 1, 9, 9),
            Buffer::new("y", 1, 6, 6),
        ],
    )
}

/// The exact search's seed leaves the peak stack out (its incumbent stays the size- and
/// time-ordered heuristics'), but the answer is never above it: with no search nodes, the
/// answer is the stack's plan. The six buffers of `peak_stack`'s hand-checked test: first fit
/// and best fit 9 B, greedy-breadth too (step 12 first: w 0-4, s 4-7, then g over t), the stack
/// 7 B, the bound.
#[test]
fn the_exact_answer_is_never_above_the_peak_stack() {
    let p = stack_six();
    let o = PlanOptions::exact();
    let starved = SolverParams {
        node_limit: Some(0),
        ..SolverParams::default()
    };
    let sol = solve(&p, &o, &starved, &NoClock).expect("solve");
    assert_eq!(validate(&p, &sol.plan), Ok(()));
    assert_eq!(sol.seed_peak, 9);
    assert_eq!(sol.plan.peak, 7);
    assert!(
        sol.plan.notes.iter().any(|n| n.contains("peak-stack")),
        "{:?}",
        sol.plan.notes
    );
    // capacity mode: 7 B fits at once, from the stack held out of the seed
    let fit = solve_with_capacity(&p, &o, &starved, &NoClock, 7).expect("capacity");
    assert!(fit.fits);
    assert_eq!(fit.best_peak, 7);
}
