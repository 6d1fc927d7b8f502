//! Timing shared by the benches: CPU time of this thread, a repeat-until-stable timer, and
//! the scale table (every packing heuristic once on the 10^5-10^6-buffer "few long over many
//! short" problem), printed by `strategies` and `optimal` alike.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use memplan_core::strategy::Family;
use memplan_core::{lower_bound, validate, PlanOptions, Problem, StrategyInfo};

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

/// Issue 30's adversarial shapes (`gen`): `(spec at n, strategies, runtime allocators)`, the
/// spec's `{n}` replaced by the size.
const SHAPES: &[(&str, &[&str], &[&str])] = &[
    (
        "stream-chain:{n}",
        &["ge-block", "ge-binary-block", "ge-max-block"],
        &[],
    ),
    (
        "nested:{n}:1",
        &[
            "ge-block",
            "ge-binary-block",
            "greedy-size-first-fit",
            "greedy-size-best-fit",
            "tflm-greedy",
            "best-fit-spatial",
            "best-fit-temporal",
            "greedy-breadth",
            "peak-stack",
            "portfolio",
            "optimal",
        ],
        &["pool", "reuse", "bfc", "ge-v1", "ge-v2"],
    ),
    (
        "random:{n}:1",
        &[
            "greedy-size-first-fit",
            "greedy-size-best-fit",
            "peak-stack",
            "portfolio",
        ],
        &[],
    ),
    (
        "one-shape:{n}:both:1",
        &["ge-block", "ge-binary-block", "portfolio", "optimal"],
        &[],
    ),
    (
        "one-shape:{n}:range:1",
        &["ge-block", "ge-binary-block", "portfolio", "optimal"],
        &[],
    ),
    (
        "one-shape:{n}:size:1",
        &["ge-block", "ge-binary-block", "portfolio", "optimal"],
        &[],
    ),
];

/// The growth table: every shape of [`SHAPES`] at `n` and `10 n` buffers
/// (`MEMPLAN_BENCH_GROWTH=n`, default 10000; `0` skips), each strategy and runtime allocator
/// once (CPU seconds), the ratio and the growth exponent `log10(t(10n) / t(n))` (1 is linear,
/// 2 quadratic). Plans are validated.
pub fn growth_table() {
    let n: usize = std::env::var("MEMPLAN_BENCH_GROWTH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(10_000);
    if n == 0 {
        return;
    }
    println!(
        "\n## Growth on issue 30's shapes: {n} and {} buffers, one run each\n",
        10 * n
    );
    println!("CPU seconds; exponent = log10(t(10n) / t(n)).\n");
    println!("| shape | strategy / allocator | t(n) s | t(10n) s | ratio | exponent |");
    println!("|---|---|---:|---:|---:|---:|");
    let runtime = memplan_core::simulate::registry::RuntimeOptions::default();
    for &(spec, plans, sims) in SHAPES {
        let p1 = gen::by_spec(&spec.replace("{n}", &n.to_string())).expect("shape");
        let p10 = gen::by_spec(&spec.replace("{n}", &(10 * n).to_string())).expect("shape");
        let rows = plans
            .iter()
            .map(|s| (*s, true))
            .chain(sims.iter().map(|a| (*a, false)));
        for (name, is_plan) in rows {
            let run = |p: &Problem| -> Duration {
                time(1, || {
                    if is_plan {
                        let plan = memplan_core::plan(p, name, &PlanOptions::exact()).expect(name);
                        assert!(validate(p, &plan).is_ok(), "{name}: invalid plan");
                    } else {
                        memplan_core::simulate::registry::run(p, name, &runtime).expect(name);
                    }
                })
                .0
            };
            let (a, b) = (run(&p1), run(&p10));
            let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-6);
            println!(
                "| `{}` | {name} | {:.3} | {:.3} | {ratio:.1} | {:.2} |",
                spec.replace("{n}", "N"),
                a.as_secs_f64(),
                b.as_secs_f64(),
                ratio.log10()
            );
        }
    }
}
