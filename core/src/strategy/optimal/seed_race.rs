//! Which portfolio heuristic the time-limited seed runs first on a large input.
//!
//! At 10^6 buffers one heuristic takes 10–35 s here, so under a 10 s limit the seed runs one
//! heuristic, and which one is best differs by input (`docs/benchmarks.md`, issue 29:
//! `greedy-size-first-fit` on `random:1000000:1`, 1.019 × LB against `greedy-breadth`'s
//! 1.081; `greedy-breadth` on the tiled ResNet-50 trace, 1.007 against 1.011). A fixed order
//! loses on one of them. So the heuristics first race on a sample: the buffers live in a
//! window of steps around the step of most live bytes (where the peak is decided), about one
//! in a hundred of them, and the seed runs them in the order of their peaks there.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::plan::PlanOptions;
use crate::problem::{Buffer, Problem};

/// The outcome of a race: the heuristics best first, and where the sample came from.
pub(super) struct Race {
    /// Heuristic names, smallest peak on the sample first (ties: the given order).
    pub order: Vec<&'static str>,
    pub summary: RaceSummary,
}

/// Where a race's sample came from and who won, for the plan's notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RaceSummary {
    /// Buffers in the sample, and the steps `[from, to]` they meet.
    pub buffers: usize,
    pub from: u64,
    pub to: u64,
    /// The heuristic with the smallest peak on the sample.
    pub first: &'static str,
}

impl RaceSummary {
    /// The plan note that says why the seed ran its heuristics in this order.
    pub(crate) fn note(&self) -> String {
        format!(
            "seed order from a race of the portfolio's heuristics on the {} buffers live in steps {}-{} (around the step of most live bytes): {} first",
            self.buffers, self.from, self.to, self.first
        )
    }
}

/// Races `names` (heuristics of [`crate::strategy::packing::PORTFOLIO`]) on a sample of
/// about `target` buffers of `problem`. `None` when no race is meaningful: a graph (ops,
/// streams: a sample would drop the rules between them), dynamic-batch gears, a sample that
/// is not much smaller than the problem, or a heuristic that fails on the sample (the seed
/// then keeps its fixed order and reports the failure itself).
pub(super) fn race(
    problem: &Problem,
    options: &PlanOptions,
    names: &[&'static str],
    target: usize,
) -> Option<Race> {
    if !problem.ops.is_empty() || problem.buffers.iter().any(|b| b.gear.is_some()) {
        return None;
    }
    let last = problem.steps.saturating_sub(1);
    // a buffer's start, so a step of the schedule unless `steps` is short of the ends
    let peak = peak_step(problem)?.min(last);
    let meets = |b: &Buffer, from: u64, to: u64| b.start <= to && b.end >= from;
    let mut width = 1u64;
    let (from, to) = loop {
        let (from, to) = (
            peak.saturating_sub(width),
            peak.saturating_add(width).min(last),
        );
        let count = problem
            .buffers
            .iter()
            .filter(|b| meets(b, from, to))
            .count();
        if count >= target || (from == 0 && to == last) {
            break (from, to);
        }
        width = width.saturating_mul(2);
    };
    let sample: Vec<Buffer> = problem
        .buffers
        .iter()
        .filter(|b| meets(b, from, to))
        .cloned()
        .collect();
    if sample.len() > problem.buffers.len() / 4 {
        return None;
    }
    let buffers = sample.len();
    let sample = Problem::from_buffers(format!("{}-sample", problem.name), sample);
    let mut peaks: Vec<(u64, usize, &'static str)> = Vec::with_capacity(names.len());
    for (k, &name) in names.iter().enumerate() {
        let (_, run) = crate::strategy::packing::PORTFOLIO
            .iter()
            .find(|(n, _)| *n == name)?;
        peaks.push((run(&sample, options).ok()?.peak, k, name));
    }
    peaks.sort_unstable();
    let order: Vec<&'static str> = peaks.into_iter().map(|(_, _, name)| name).collect();
    Some(Race {
        summary: RaceSummary {
            buffers,
            from,
            to,
            first: order.first().copied()?,
        },
        order,
    })
}

/// The first step of most live bytes (of the buffers' own sizes), `None` without steps. By a
/// sweep over the starts and ends, not a table per step: steps may be sparse times up to
/// `u64::MAX` (`Problem::steps`), which the packing heuristics compress.
fn peak_step(problem: &Problem) -> Option<u64> {
    if problem.steps == 0 {
        return None;
    }
    // the live-set bound's own sweep over sorted starts and ends (no table per step)
    crate::bound::lower_bound(problem).ok().map(|b| b.peak_step)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` buffers over `n / 4` steps, 1–64 steps live (one in 50 up to a tenth of the
    /// schedule), 64 B – 64 KiB: `random:N`'s shape, from a fixed xorshift.
    fn random(n: u64) -> Problem {
        random_with(n, 50, 11, 2u64.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn random_with(n: u64, long_every: u64, size_bits: u64, seed: u64) -> Problem {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let steps = n / 4;
        let bufs = (0..n)
            .map(|i| {
                let start = next() % steps;
                let len = if i % long_every == 0 {
                    next() % (steps / 10)
                } else {
                    next() % 64
                };
                let size = 64 << (next() % size_bits);
                Buffer::new(format!("b{i}"), size, start, (start + len).min(steps - 1))
            })
            .collect();
        Problem::from_buffers("race", bufs)
    }

    #[test]
    fn the_race_orders_the_heuristics_by_their_peaks_on_the_buffers_around_the_peak_step() {
        let p = random(40_000);
        let o = PlanOptions::exact();
        let names = [
            "greedy-breadth",
            "greedy-size-first-fit",
            "best-fit-spatial",
        ];
        let race = race(&p, &o, &names, 1_000).expect("a race");
        let s = race.summary;
        // the sample: every buffer meeting [from, to], which holds the step of most live bytes
        let live = crate::bound::live_bytes(&p).unwrap();
        let top = *live.iter().max().unwrap();
        let at = |t: u64| usize::try_from(t).unwrap();
        assert!(live[at(s.from)..=at(s.to)].contains(&top));
        let sample: Vec<Buffer> = p
            .buffers
            .iter()
            .filter(|b| b.start <= s.to && b.end >= s.from)
            .cloned()
            .collect();
        assert_eq!(sample.len(), s.buffers);
        assert!(s.buffers >= 1_000 && s.buffers < 10_000, "{}", s.buffers);
        // the order: each heuristic run through the registry on that sample, by peak
        let sample = Problem::from_buffers("sample", sample);
        let mut want: Vec<(u64, usize, &str)> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (crate::plan(&sample, n, &o).unwrap().peak, k, *n))
            .collect();
        want.sort_unstable();
        let want: Vec<&str> = want.into_iter().map(|w| w.2).collect();
        assert_eq!(race.order, want);
        assert_eq!(s.first, want[0]);
        assert!(s.note().contains(&format!("{} first", want[0])));
    }

    #[test]
    fn no_race_with_gears_or_on_samples_that_are_most_of_the_problem() {
        let o = PlanOptions::exact();
        let names = ["greedy-breadth"];
        // every buffer live at every step: the sample would be the problem
        let all_live = Problem::from_buffers(
            "all-live",
            (0..100)
                .map(|i| Buffer::new(format!("b{i}"), 64, 0, 9))
                .collect(),
        );
        assert!(race(&all_live, &o, &names, 10).is_none());
        let mut geared = random(4_000);
        geared.buffers[0].gear = Some(1);
        assert!(race(&geared, &o, &names, 100).is_none());
        assert!(race(&random(4_000), &o, &names, 100).is_some());
    }

    #[test]
    fn the_peak_step_is_the_first_step_of_most_live_bytes_of_a_table_per_step() {
        // the sweep against `bound::live_bytes`'s table, on random problems: points, shared
        // steps, zero sizes, ties, idle steps at the start and the end
        let mut x = 0x0123_4567_89AB_CDEFu64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..300 {
            let steps = 1 + next(12);
            let n = next(8);
            let bufs: Vec<Buffer> = (0..n)
                .map(|i| {
                    let a = next(steps);
                    let b = next(steps);
                    let size = [0, 1, 64, 64, 100][usize::try_from(next(5)).unwrap()];
                    Buffer::new(format!("b{i}"), size, a.min(b), a.max(b))
                })
                .collect();
            let mut p = Problem::from_buffers("p", bufs);
            p.steps = p.steps.max(steps);
            let live = crate::bound::live_bytes(&p).unwrap();
            let top = *live.iter().max().unwrap();
            let want = live.iter().position(|&v| v == top).unwrap() as u64;
            assert_eq!(peak_step(&p), Some(want), "round {round}: {live:?}");
        }
        assert_eq!(peak_step(&Problem::default()), None);
    }

    #[test]
    fn sparse_times_up_to_the_largest_step_race_without_a_table_per_step() {
        // the same random shape at times 10^12 apart and with one buffer ending at
        // u64::MAX - 1 (`steps` = u64::MAX): a table of live bytes per step needs 10^12+
        // entries (an allocation failure or "capacity overflow" panic, before the fix)
        let scale = 1_000_000_000_000u64;
        let mut p = random(4_000);
        for b in &mut p.buffers {
            b.start *= scale;
            b.end *= scale;
        }
        p.steps = (p.buffers.iter().map(|b| b.end).max().unwrap()) + 1;
        let names = ["greedy-breadth", "best-fit-spatial"];
        let o = PlanOptions::exact();
        // the peak is at a buffer's start, so at a multiple of `scale`: the dense problem's
        // peak step, scaled
        let dense = random(4_000);
        let live = crate::bound::live_bytes(&dense).unwrap();
        let top = *live.iter().max().unwrap();
        let dense_peak = live.iter().position(|&v| v == top).unwrap() as u64;
        assert_eq!(peak_step(&p), Some(dense_peak * scale));
        let won = race(&p, &o, &names, 100).expect("a race");
        let s = won.summary;
        assert!(s.from <= dense_peak * scale && dense_peak * scale <= s.to);
        let in_sample = p
            .buffers
            .iter()
            .filter(|b| b.start <= s.to && b.end >= s.from)
            .count();
        assert_eq!(in_sample, s.buffers);
        assert!(s.buffers >= 100 && s.buffers <= 1_000, "{}", s.buffers);
        p.buffers[0].end = u64::MAX - 1;
        p.steps = u64::MAX;
        assert!(race(&p, &o, &names, 100).is_some());
    }

    #[test]
    fn no_race_without_steps_with_one_buffer_or_with_every_buffer_at_one_step() {
        let o = PlanOptions::exact();
        let names = ["greedy-breadth", "best-fit-spatial"];
        assert!(race(&Problem::default(), &o, &names, 10).is_none());
        let one = Problem::from_buffers("one", alloc::vec![Buffer::new("a", 64, 0, 0)]);
        assert!(race(&one, &o, &names, 10).is_none());
        let at_one_step = Problem::from_buffers(
            "one-step",
            (0..400)
                .map(|i| Buffer::new(format!("b{i}"), 64 + i, 7, 7))
                .collect(),
        );
        assert!(race(&at_one_step, &o, &names, 10).is_none());
        // zero-size buffers only: the peak is step 0, the window grows until it holds the
        // target; the sample is a quarter or less of the buffers, so a race is run
        let zeros = Problem::from_buffers(
            "zeros",
            (0..400)
                .map(|i| Buffer::new(format!("b{i}"), 0, i, i))
                .collect(),
        );
        let r = race(&zeros, &o, &names, 10).expect("a race");
        // window [0, 16]: 17 buffers (width 1, 2, 4, 8 hold 2, 3, 5, 9)
        assert_eq!(
            (r.summary.from, r.summary.to, r.summary.buffers),
            (0, 16, 17)
        );
    }

    #[test]
    fn pinned_buffers_in_the_sample_are_raced_pinned_and_a_failing_heuristic_stops_the_race() {
        let o = PlanOptions::exact();
        let names = [
            "greedy-breadth",
            "greedy-size-first-fit",
            "best-fit-spatial",
        ];
        let mut p = random(4_000);
        // pin every 10th buffer high up, each at its own bytes (sizes are at most 64 KiB)
        for (k, b) in p
            .buffers
            .iter_mut()
            .enumerate()
            .filter(|(k, _)| k % 10 == 0)
        {
            b.fixed_offset = Some((1 << 30) + (k as u64) * (1 << 17));
        }
        let won = race(&p, &o, &names, 100).expect("a race");
        let s = won.summary;
        let sample: Vec<Buffer> = p
            .buffers
            .iter()
            .filter(|b| b.start <= s.to && b.end >= s.from)
            .cloned()
            .collect();
        let top_pin = sample
            .iter()
            .filter_map(|b| b.fixed_offset.map(|off| off + b.size))
            .max()
            .expect("a pinned buffer in the sample");
        let sample = Problem::from_buffers("sample", sample);
        let mut want: Vec<(u64, usize, &str)> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (crate::plan(&sample, n, &o).unwrap().peak, k, *n))
            .collect();
        // every plan keeps the pins: its peak is at least the highest pinned end
        assert!(want.iter().all(|w| w.0 >= top_pin));
        want.sort_unstable();
        let want: Vec<&str> = want.into_iter().map(|w| w.2).collect();
        assert_eq!(won.order, want);
        // two live-together buffers of the sample pinned to the same bytes: every heuristic
        // fails on the sample, so no race (the seed reports the failure on the whole problem)
        let at = usize::try_from(s.from).unwrap();
        let both: Vec<usize> = (0..p.buffers.len())
            .filter(|&i| p.buffers[i].start <= s.from && p.buffers[i].end >= s.from)
            .take(2)
            .collect();
        assert_eq!(both.len(), 2, "two buffers live at step {at}");
        let mut clash = p.clone();
        for &i in &both {
            clash.buffers[i].fixed_offset = Some(0);
        }
        assert!(race(&clash, &o, &names, 100).is_none());
        // a size whose planned size overflows: the heuristics fail, so no race
        let mut huge = random(4_000);
        let i = (0..huge.buffers.len())
            .find(|&i| huge.buffers[i].start <= s.from && huge.buffers[i].end >= s.from)
            .unwrap();
        huge.buffers[i].size = u64::MAX;
        assert!(race(&huge, &o, &names, 100).is_none());
    }

    /// A clock whose every reading moves one second.
    struct Ticking(core::cell::Cell<u64>);

    impl crate::strategy::optimal::Clock for Ticking {
        fn now_ms(&self) -> u64 {
            let t = self.0.get();
            self.0.set(t + 1000);
            t
        }
        fn cancelled(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_seed_cut_to_one_heuristic_runs_the_race_winner() {
        // a 1 ms limit lets the seed start one heuristic: the race's winner, said in a note
        let p = random(20_000);
        let o = PlanOptions {
            time_limit_ms: 1,
            ..PlanOptions::exact()
        };
        let params = crate::strategy::optimal::SolverParams {
            seed_race_buffers: 10_000,
            ..Default::default()
        };
        let clock = Ticking(core::cell::Cell::new(0));
        let sol = crate::strategy::optimal::solve(&p, &o, &params, &clock).unwrap();
        assert_eq!(crate::validate(&p, &sol.plan), Ok(()));
        let race = race(&p, &o, &super::super::SEED_ORDER, 2_000).unwrap();
        let first = race.summary.first;
        assert!(
            sol.plan.notes.iter().any(|n| n == &race.summary.note()),
            "{:?}",
            sol.plan.notes
        );
        assert!(sol
            .plan
            .notes
            .iter()
            .any(|n| n.starts_with("seed: 1 of the 6 portfolio heuristics")));
        // the seed is that heuristic's plan of the whole problem
        let alone = crate::plan(&p, first, &PlanOptions::exact()).unwrap().peak;
        assert_eq!(sol.seed_peak, alone);
        // without the race the seed would have run greedy-breadth, a different plan here
        assert_eq!(first, "greedy-size-best-fit");
        let breadth = crate::plan(&p, "greedy-breadth", &PlanOptions::exact())
            .unwrap()
            .peak;
        assert_ne!(alone, breadth);
    }
}
