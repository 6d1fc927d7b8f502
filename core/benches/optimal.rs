//! Benchmark of strategy `optimal` (not a timed test).
//!
//! `cargo bench -p memplan-core --bench optimal -- [--time-limit MS] [--threads N] [FILE.csv | gen:N:SEED | SPEC]...`
//!
//! `--threads N` (default 1) runs `N` searches side by side on each input, one std thread each
//! with `SolverParams::variant` 0..N, and keeps the best (`optimal::keep_best`); the
//! "variant" column says which won ("1 of 2"), the nodes column adds up every thread's.
//!
//! `SPEC` is a generator of `gen/mod.rs` (`train:N:SEED`, `kv:N:SEED`, `long-short:N:SEED`,
//! `tile:FILE.csv:COPIES:SEED`). Without arguments: the MiniMalloc challenging suite and the
//! real traces of `testdata/benchmarks` (or `$MEMPLAN_BENCHMARKS`), then generated
//! instances (the older trace-like `gen:` ones, transformer training, KV-cache inference,
//! tiled real traces, the long-short shape). Each input: `portfolio` on its own, then
//! `optimal`, in the same run; "exhausted / cut" counts the windows and band moves searched
//! to exhaustion without a fit and those cut by their node budget. Prints one Markdown table row per input; then, for files named like
//! MiniMalloc's `X.CAPACITY.csv`, a second table: capacity mode at that capacity (the setting
//! of MiniMalloc's published solve times), the time to a plan that fits. Last, the scale
//! table: every packing heuristic (`portfolio`, `optimal` too) once at 10^6 buffers
//! (`MEMPLAN_BENCH_SCALE=N,...` for other sizes, `0` to skip).
// Bench code: counts and timings are far below the truncation limits.
#![allow(clippy::cast_possible_truncation)]

use std::time::Instant;

#[path = "gen/mod.rs"]
mod gen;
#[path = "timing/mod.rs"]
mod timing;

use memplan_core::strategy::optimal::{self, SolverParams};
use memplan_core::{Buffer, PlanOptions, Problem};

/// A deterministic generator (SplitMix64): no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `n` buffers in the character of a network trace: most short-lived (an op's output read by
/// the next 1-4 ops), sizes log-uniform 256 B - 4 MiB in 256-byte steps; about 1 in 500
/// long-lived (skip connections, weights kept across a stage), living 5-50% of the schedule.
fn generate(n: usize, seed: u64) -> Problem {
    let mut r = Rng(seed);
    let mut buffers = Vec::with_capacity(n);
    let steps = (n as u64) * 2 / 3;
    for i in 0..n {
        let long = r.below(500) == 0;
        let start = r.below(steps);
        let len = if long {
            steps / 20 + r.below(steps * 9 / 20)
        } else {
            1 + r.below(4)
        };
        let exp = 8 + r.below(15); // 2^8 .. 2^22
        let size = ((1u64 << exp) + r.below(1u64 << exp)) / 256 * 256 + 256;
        buffers.push(Buffer::new(
            format!("t{i}"),
            size,
            start,
            (start + len).min(steps - 1),
        ));
    }
    Problem::from_buffers(format!("gen-{n}-{seed}"), buffers)
}

/// Resets the process's peak resident set (`VmHWM`) so that it measures the next input only
/// (Linux: writing 5 to `/proc/self/clear_refs`; ignored elsewhere).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set of the process since the last reset, in MiB (Linux `VmHWM`).
fn peak_rss_mib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut limit = 10_000u64;
    if let Some(i) = args.iter().position(|a| a == "--time-limit") {
        limit = args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(limit);
        args.drain(i..(i + 2).min(args.len()));
    }
    let mut threads = 1u64;
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        threads = args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(1u64)
            .max(1);
        args.drain(i..(i + 2).min(args.len()));
    }
    let root = std::env::var("MEMPLAN_BENCHMARKS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/benchmarks").into());
    if args.is_empty() {
        for f in "ABCDEFGHIJK".chars() {
            args.push(format!("{root}/minimalloc/challenging/{f}.1048576.csv"));
        }
        args.push(format!("{root}/real/mindspore_somas_resnet50.csv"));
        args.push(format!("{root}/real/iopddl_G_1.csv"));
        args.push(format!("{root}/real/mindspore_somas_pangu_2.6B.csv"));
        args.push(format!("{root}/real/iopddl_S_1.csv"));
        for n in [20_000, 40_000, 60_000] {
            args.push(format!("gen:{n}:1"));
        }
        for spec in [
            "train:20000:1",
            "train:60000:2",
            "kv:20000:1",
            "kv:60000:2",
            "long-short:100000:1",
        ] {
            args.push(spec.into());
        }
        args.push(format!(
            "tile:{root}/real/mindspore_somas_resnet50.csv:10:1"
        ));
        args.push(format!("tile:{root}/real/iopddl_G_1.csv:30:1"));
    }
    println!("| input | buffers | lower bound | portfolio peak (s) | portfolio / LB | seed peak | best peak | best / LB | proven | nodes | windows (fitted) | exhausted / cut | bands (fitted) | moves kept | time (s) | peak RSS (MiB) | variant |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut capacity_rows = Vec::new();
    for a in &args {
        let problem = if let Some(spec) = a.strip_prefix("gen:") {
            let mut it = spec.split(':').map(|x| x.parse::<u64>().unwrap_or(1));
            let n = it.next().unwrap_or(20_000) as usize;
            let seed = it.next().unwrap_or(1);
            generate(n, seed)
        } else if !a.ends_with(".csv") {
            match gen::by_spec(a) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{a}: {e}");
                    continue;
                }
            }
        } else {
            let text = match std::fs::read_to_string(a) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("{a}: {e}");
                    continue;
                }
            };
            let name = std::path::Path::new(a)
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            match memplan_core::import::csv::parse(&name, &text) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{a}: {e}");
                    continue;
                }
            }
        };
        let options = PlanOptions {
            time_limit_ms: limit,
            ..PlanOptions::exact()
        };
        reset_peak_rss();
        let tp = Instant::now();
        let port_plan = memplan_core::strategy::plan(&problem, "portfolio", &options);
        let port_secs = tp.elapsed().as_secs_f64();
        let port_peak = port_plan.as_ref().map_or(0, |p| p.peak);
        let port = port_plan.map_or_else(
            |e| format!("error: {e}"),
            |p| format!("{} ({port_secs:.2})", p.peak),
        );
        let t0 = Instant::now();
        let clock = move || t0.elapsed().as_millis() as u64;
        let mut params = SolverParams::default();
        // `MEMPLAN_WINDOW_BUFFERS=N`: window size of the large-input search, for experiments
        if let Some(w) = std::env::var("MEMPLAN_WINDOW_BUFFERS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            params.window_buffers = w;
        }
        // `MEMPLAN_SECTION_WINDOWS=1`: cross-section windows on, for a side-by-side
        if std::env::var("MEMPLAN_SECTION_WINDOWS").is_ok_and(|v| v == "1") {
            params.section_windows = true;
        }
        // `MEMPLAN_LOCAL_BOUND=1`: subset bounds on, for a side-by-side
        if std::env::var("MEMPLAN_LOCAL_BOUND").is_ok_and(|v| v == "1") {
            params.local_bound = true;
        }
        // `MEMPLAN_BAND_MOVES=0`: band moves at the peak off, for a side-by-side
        if std::env::var("MEMPLAN_BAND_MOVES").is_ok_and(|v| v == "0") {
            params.band_moves = false;
        }
        // `MEMPLAN_NODES=N`: no clock, a budget of N search nodes instead: the same work on a
        // loaded machine, for side-by-side comparisons of solver switches
        let nodes: Option<u64> = std::env::var("MEMPLAN_NODES")
            .ok()
            .and_then(|v| v.parse().ok());
        params.node_limit = nodes.or(params.node_limit);
        let solve = |variant: u64| {
            let params = SolverParams {
                variant,
                ..params.clone()
            };
            match nodes {
                Some(_) => optimal::solve(&problem, &options, &params, &optimal::NoClock),
                None => optimal::solve(&problem, &options, &params, &clock),
            }
        };
        // one search, or `threads` side by side (one std thread each), the best kept
        let solved = if threads < 2 {
            solve(0)
        } else {
            let all: Vec<_> = std::thread::scope(|scope| {
                let hs: Vec<_> = (0..threads)
                    .map(|v| scope.spawn(move || solve(v)))
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("search thread"))
                    .collect()
            });
            let total: u64 = all.iter().flatten().map(|s| s.nodes).sum();
            let mut ok: Vec<optimal::Solution> = all.into_iter().flatten().collect();
            let kept = optimal::keep_best(ok.iter().map(|s| s.plan.clone()).collect());
            match kept {
                Some(plan) => {
                    let v = plan.search.map_or(0, |f| f.counts.variant);
                    let of = |s: &optimal::Solution| s.plan.search.map(|f| f.counts.variant);
                    let at = ok.iter().position(|s| of(s) == Some(v)).unwrap_or(0);
                    let mut s = ok.swap_remove(at);
                    if let Some(f) = plan.search {
                        s.lower_bound = f.lower_bound;
                        s.proven_optimal = f.proven_optimal;
                    }
                    s.plan = plan;
                    s.nodes = total;
                    Ok(s)
                }
                None => solve(0),
            }
        };
        match solved {
            Ok(s) => {
                let secs = t0.elapsed().as_secs_f64();
                if let Err(v) = memplan_core::validate(&problem, &s.plan) {
                    eprintln!("{}: INVALID plan: {}", problem.name, v.describe(&problem));
                }
                // `MEMPLAN_NOTES=1`: the plan's notes on stderr (what the seeds and searches did)
                if std::env::var("MEMPLAN_NOTES").is_ok_and(|v| v == "1") {
                    for n in &s.plan.notes {
                        eprintln!("{}: {n}", problem.name);
                    }
                }
                let c = s.plan.search.map(|x| x.counts).unwrap_or_default();
                let lb = s.lower_bound.max(1) as f64;
                println!(
                    "| {} | {} | {} | {} | {:.5} | {} | {} | {:.5} | {} | {} | {} ({}) | {} / {} | {} ({}) | {} | {:.2} | {} | {} |",
                    problem.name,
                    problem.buffers.len(),
                    s.lower_bound,
                    port,
                    port_peak as f64 / lb,
                    s.seed_peak,
                    s.best_peak,
                    s.best_peak as f64 / lb,
                    if s.proven_optimal { "yes" } else { "no" },
                    s.nodes,
                    c.windows,
                    c.windows_accepted,
                    c.windows_exhausted + c.bands_exhausted,
                    c.windows_cut + c.bands_cut,
                    c.bands,
                    c.bands_accepted,
                    c.relocations_accepted + c.layout_moves_accepted,
                    secs,
                    peak_rss_mib().map_or("?".into(), |m| m.to_string()),
                    if threads < 2 {
                        "0".to_string()
                    } else {
                        format!("{} of {threads}", c.variant)
                    },
                );
            }
            Err(e) => println!("| {} | error: {e} |", problem.name),
        }
        // `X.1048576.csv`: MiniMalloc's documented capacity.
        let capacity = problem
            .name
            .strip_suffix(".csv")
            .and_then(|n| n.rsplit('.').next())
            .and_then(|c| c.parse::<u64>().ok());
        if let Some(cap) = capacity {
            let t0 = Instant::now();
            let clock = move || t0.elapsed().as_millis() as u64;
            let params = SolverParams::default();
            let row = match optimal::solve_with_capacity(&problem, &options, &params, &clock, cap) {
                Ok(s) => format!(
                    "| {} | {cap} | {} | {} | {} | {:.2} |",
                    problem.name,
                    if s.fits { "yes" } else { "no (limit)" },
                    s.best_peak,
                    s.nodes,
                    t0.elapsed().as_secs_f64()
                ),
                Err(e) => format!("| {} | {cap} | {e} | | | |", problem.name),
            };
            capacity_rows.push(row);
        }
    }
    if !capacity_rows.is_empty() {
        println!(
            "\nCapacity mode (`solve_with_capacity`, MiniMalloc's setting), same time limit:\n"
        );
        println!("| input | capacity | fits | peak | nodes | time (s) |");
        println!("|---|---|---|---|---|---|");
        for r in capacity_rows {
            println!("{r}");
        }
    }
    // the heuristics (`portfolio` and `optimal` among them) at 10^6 buffers, in seconds
    let registry: Vec<_> = memplan_core::strategies().iter().collect();
    timing::scale_tables(&[1_000_000], &registry);
}
