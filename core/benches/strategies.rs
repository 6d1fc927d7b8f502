//! Strategy benchmark: time per strategy on generated problems of 1k, 10k and 100k buffers,
//! and peak / lower bound on every CSV under `testdata/benchmarks`.
//!
//! Run: `cargo bench -p memplan-core --bench strategies`. Prints Markdown tables.
//! Environment: `MEMPLAN_BENCH_SIZES=1000,10000` to change the generated sizes,
//! `MEMPLAN_BENCH_DIR=path` to read the CSVs elsewhere,
//! `MEMPLAN_BENCH_STRATEGIES=ge-block,greedy-size-best-fit` to time only those strategies,
//! `MEMPLAN_BENCH_SCALE=1000000` the size of the "few long over many short" problem every
//! packing strategy plans once (`gen::long_short`, issue 18's shape; `0` skips it),
//! `MEMPLAN_BENCH_GROWTH=10000` the `n` of the growth table (issue 30's shapes at `n` and
//! `10 n`: stream chain, nested, one shape; `0` skips it).
// Bench code: counts and timings are far below the truncation limits.
#![allow(clippy::cast_possible_truncation)]

use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "gen/mod.rs"]
mod gen;
#[path = "timing/mod.rs"]
mod timing;

use timing::{cpu_time, time, time_for};

use memplan_core::import::csv;
use memplan_core::{lower_bound, validate, PlanOptions, StrategyInfo};

/// The registry, or the strategies named in `MEMPLAN_BENCH_STRATEGIES` (comma-separated).
fn strategies() -> Vec<&'static StrategyInfo> {
    let only: Option<Vec<String>> = std::env::var("MEMPLAN_BENCH_STRATEGIES")
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect());
    memplan_core::strategies()
        .iter()
        .filter(|s| only.as_ref().is_none_or(|o| o.iter().any(|n| n == s.name)))
        .collect()
}

fn ms(d: Duration) -> String {
    let m = d.as_secs_f64() * 1e3;
    if m < 10.0 {
        format!("{m:.2}")
    } else if m < 100.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.0}")
    }
}

/// The "best production greedy" peak / LB of the MiniMalloc challenging files, from
/// `testdata/benchmarks/README.md`.
fn production(file: &str) -> Option<f64> {
    let table = [
        ("A", 1.290),
        ("B", 1.347),
        ("C", 1.364),
        ("D", 1.310),
        ("E", 1.369),
        ("F", 1.367),
        ("G", 1.332),
        ("H", 1.293),
        ("I", 1.410),
        ("J", 1.319),
        ("K", 1.290),
    ];
    let stem = file.split('.').next()?;
    if !file.ends_with(".1048576.csv") {
        return (file == "mindspore_somas_resnet50.csv").then_some(1.0045);
    }
    table.iter().find(|(f, _)| *f == stem).map(|(_, r)| *r)
}

fn csv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            csv_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "csv") {
            out.push(p);
        }
    }
}

fn main() {
    let rustc = std::process::Command::new(std::env::var("RUSTC").unwrap_or("rustc".into()))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("# memplan strategy benchmark\n");
    println!("{rustc}, {cores} cores, release build (`cargo bench -p memplan-core --bench strategies`)\n");

    let sizes: Vec<usize> = std::env::var("MEMPLAN_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let exact = PlanOptions::exact();
    let names: Vec<&str> = strategies().iter().map(|s| s.name).collect();

    // (1) time per strategy on generated problems
    let mut times: Vec<Vec<Option<Duration>>> = vec![vec![None; sizes.len()]; names.len() + 2];
    let mut quality: Vec<Vec<Option<f64>>> = vec![vec![None; sizes.len()]; names.len()];
    let mut lbs = Vec::new();
    for (c, &n) in sizes.iter().enumerate() {
        let p = gen::network(n, 0x5EED + n as u64);
        let reps = if n <= 10_000 { 5 } else { 2 };
        let (t_lb, lb) = time(reps, || lower_bound(&p).expect("lower bound"));
        times[names.len() + 1][c] = Some(t_lb);
        lbs.push(lb.lower_bound);
        // Rounds, every strategy once per round in turn, the median round kept: a change of
        // load on the shared machine then falls on all strategies alike, not on the ones
        // timed while it lasted.
        let rounds = if n <= 10_000 { 7 } else { 5 };
        let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
        let mut failed = vec![false; names.len()];
        for round in 0..rounds {
            for (r, s) in strategies().iter().enumerate() {
                if failed[r] {
                    continue;
                }
                let (t, plan) = time_for(1, Duration::from_millis(60), || s.run(&p, &exact));
                match plan {
                    Ok(plan) => {
                        samples[r].push(t);
                        if round > 0 {
                            continue;
                        }
                        quality[r][c] = Some(plan.peak as f64 / lb.lower_bound.max(1) as f64);
                        if s.name == "portfolio" {
                            let (tv, ok) = time(reps, || validate(&p, &plan));
                            assert!(ok.is_ok(), "{}: invalid plan", s.name);
                            times[names.len()][c] = Some(tv);
                        } else {
                            assert!(validate(&p, &plan).is_ok(), "{}: invalid plan", s.name);
                        }
                    }
                    Err(e) => {
                        failed[r] = true;
                        eprintln!("{} on {n} buffers: {e}", s.name);
                    }
                }
            }
        }
        for (r, mut v) in samples.into_iter().enumerate() {
            if !v.is_empty() && !failed[r] {
                v.sort_unstable();
                times[r][c] = Some(v[v.len() / 2]);
            }
        }
    }
    println!("## Time on generated problems (exact sizes, alignment 1)\n");
    let clock = if cpu_time().is_some() {
        "CPU time of the bench thread"
    } else {
        "wall time"
    };
    println!("Milliseconds of {clock} per run: 7 rounds up to 10k buffers, 5 above, every strategy once per round in turn (a round's sample: the mean over ≥ 60 ms of runs; one run at 100k), the median round; `×r` = ratio to the fastest planning strategy of the same column. `validate` and `lower_bound`: mean over ≥ 300 ms of runs.\n");
    let mut head = String::from("| strategy |");
    let mut rule = String::from("|---|");
    for &n in &sizes {
        head += &format!(" {n} buffers |");
        rule += "---:|";
    }
    println!("{head}\n{rule}");
    let fastest: Vec<Duration> = (0..sizes.len())
        .map(|c| {
            (0..names.len())
                .filter_map(|r| times[r][c])
                .min()
                .unwrap_or(Duration::from_nanos(1))
                .max(Duration::from_nanos(1))
        })
        .collect();
    let row_names: Vec<&str> = names
        .iter()
        .copied()
        .chain(["`validate` (portfolio plan)", "`lower_bound`"])
        .collect();
    for (r, name) in row_names.iter().enumerate() {
        let mut line = format!("| {name} |");
        for c in 0..sizes.len() {
            line += &match times[r][c] {
                Some(t) => format!(
                    " {} ms (×{:.1}) |",
                    ms(t),
                    t.as_secs_f64() / fastest[c].as_secs_f64()
                ),
                None => " — |".into(),
            };
        }
        println!("{line}");
    }
    println!("\nPeak / lower bound on the same problems (LB: {}):\n", {
        let v: Vec<String> = lbs.iter().map(|l| l.to_string()).collect();
        v.join(", ")
    });
    println!("{head}\n{rule}");
    for (r, name) in names.iter().enumerate() {
        let mut line = format!("| {name} |");
        for q in &quality[r] {
            line += &q.map_or(" — |".into(), |q| format!(" {q:.4} |"));
        }
        println!("{line}");
    }

    // (2) scale: one run of every packing strategy on the long-short shape
    timing::scale_tables(&[100_000, 1_000_000], &strategies());

    // (2b) growth on issue 30's adversarial shapes (n and 10 n buffers)
    timing::growth_table();

    // (3) peak / LB on the shared benchmarks
    let dir = std::env::var("MEMPLAN_BENCH_DIR").map_or_else(
        |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/benchmarks"),
        PathBuf::from,
    );
    let mut files = Vec::new();
    csv_files(&dir, &mut files);
    files.sort();
    if files.is_empty() {
        println!("\n(no CSV benchmarks under {}: skipped)", dir.display());
        return;
    }
    println!("\n## Peak / lower bound on the shared benchmarks (exact sizes, alignment 1)\n");
    println!("`prod` = best production greedy from `testdata/benchmarks/README.md`; **bold** = best of the row.\n");
    let mut head = String::from("| file | buffers | LB |");
    let mut rule = String::from("|---|---:|---:|");
    for n in &names {
        head += &format!(" {n} |");
        rule += "---:|";
    }
    println!("{head} prod |\n{rule}---:|");
    for f in &files {
        let rel = f.strip_prefix(&dir).unwrap_or(f).display().to_string();
        let file_name = f
            .file_name()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{rel}: {e}");
                continue;
            }
        };
        let p = match csv::parse(&rel, &text) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{rel}: {e}");
                continue;
            }
        };
        let lb = lower_bound(&p).expect("lower bound").lower_bound.max(1);
        let ratios: Vec<Option<f64>> = strategies()
            .iter()
            .map(|s| match s.run(&p, &exact) {
                Ok(plan) => {
                    assert!(
                        validate(&p, &plan).is_ok(),
                        "{}: invalid plan on {rel}",
                        s.name
                    );
                    Some(plan.peak as f64 / lb as f64)
                }
                Err(e) => {
                    eprintln!("{} on {rel}: {e}", s.name);
                    None
                }
            })
            .collect();
        let best = ratios
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let mut line = format!("| {rel} | {} | {lb} |", p.buffers.len());
        for q in &ratios {
            line += &match q {
                Some(q) if *q == best => format!(" **{q:.4}** |"),
                Some(q) => format!(" {q:.4} |"),
                None => " — |".into(),
            };
        }
        line += &production(&file_name).map_or(" |".into(), |r| format!(" {r:.4} |"));
        println!("{line}");
    }
}
