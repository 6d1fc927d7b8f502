//! Timing shared by the benches: CPU time of this thread, a repeat-until-stable timer, and
//! the scale table (every packing heuristic once on the 10^5-10^6-buffer "few long over many
//! short" problem), printed by `strategies` and `optimal` alike.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use memplan_core::strategy::Family;
use memplan_core::{lower_bound, validate, PlanOptions, StrategyInfo};

use crate::gen;

/// CPU time of this thread so far (Linux `/proc/thread-self/schedstat`), if readable. The
/// benches report CPU time because the machine is shared: wall time counts the time the
/// scheduler gives to other processes.
pub fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Time per run of `f`, and its last result. With a CPU clock: the mean CPU time over
/// enough runs to accumulate 300 ms (at least `reps`; the clock ticks coarsely). Without one:
/// the best wall time of `reps` runs.
pub fn time<T>(reps: usize, f: impl FnMut() -> T) -> (Duration, T) {
    time_for(reps, Duration::from_millis(300), f)
}

/// [`time`], with runs adding up to `least` CPU time instead of 300 ms.
pub fn time_for<T>(reps: usize, least: Duration, mut f: impl FnMut() -> T) -> (Duration, T) {
    let reps = reps.max(1);
    if let Some(start) = cpu_time() {
        let mut runs = 0u32;
        loop {
            let r = f();
            runs += 1;
            let spent = cpu_time().unwrap_or(start).saturating_sub(start);
            if runs as usize >= reps && (spent >= least || runs >= 1000) {
                return (spent / runs, r);
            }
        }
    }
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.expect("at least one run"))
}

/// The sizes of the scale table: `MEMPLAN_BENCH_SCALE=100000,1000000` (`0` skips), else
/// `default`.
pub fn scale_sizes(default: &[usize]) -> Vec<usize> {
    std::env::var("MEMPLAN_BENCH_SCALE")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// One Markdown table per size (of [`scale_sizes`]): every packing strategy of `among` once
/// on `gen::long_short(n, 1)`, CPU seconds and peak / lower bound, each plan validated.
pub fn scale_tables(default: &[usize], among: &[&StrategyInfo]) {
    for n in scale_sizes(default).into_iter().filter(|&n| n > 0) {
        let p = gen::long_short(n, 1);
        let lb = lower_bound(&p).expect("lower bound").lower_bound.max(1);
        println!(
            "\n## Scale: `{}` ({n} buffers: 16 long over many short), one run each\n",
            p.name
        );
        println!("Seconds of CPU time of one run (`optimal`: its default 2 s time limit, plus the seed).\n");
        println!("| strategy | time (s) | peak / LB |\n|---|---:|---:|");
        for s in among.iter().filter(|s| s.family == Family::Packing) {
            let (t, plan) = time(1, || s.run(&p, &PlanOptions::exact()));
            let row = match plan {
                Ok(plan) => {
                    assert!(validate(&p, &plan).is_ok(), "{}: invalid plan", s.name);
                    format!("{:.4}", plan.peak as f64 / lb as f64)
                }
                Err(e) => format!("error: {e}"),
            };
            println!("| {} | {:.2} | {row} |", s.name, t.as_secs_f64());
        }
    }
}
