//! Issue 30's scaling shapes (`core/benches/gen`) for the CLI and a quick timer.
//!
//! - `cargo run --release -p memplan-core --example scale csv SPEC > /tmp/x.csv` writes a
//!   generated problem as a MiniMalloc CSV (for `memplan plan` under `/usr/bin/time -v`);
//! - `... scale plan STRATEGY SPEC` plans it once (exact sizes) and prints seconds and
//!   peak ÷ lower bound (for graph-only shapes such as `stream-chain:N`, which a CSV cannot
//!   hold: streams and op edges);
//! - `... scale each SPEC STRATEGY...` plans it with each strategy in turn;
//! - `... scale sim ALLOCATOR SPEC` replays it through a runtime allocator.
#![allow(missing_docs, clippy::unwrap_used, clippy::cast_precision_loss)]
#[path = "../benches/gen/mod.rs"]
mod gen;

use memplan_core::{lower_bound, plan, simulate, PlanOptions};
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: usize| args.get(k).map_or("", String::as_str);
    match arg(1) {
        "csv" => {
            let p = gen::by_spec(arg(2)).unwrap();
            std::io::stdout()
                .write_all(gen::to_csv(&p).as_bytes())
                .unwrap();
        }
        "plan" => {
            let p = gen::by_spec(arg(3)).unwrap();
            let t = std::time::Instant::now();
            let r = plan(&p, arg(2), &PlanOptions::exact()).unwrap();
            let s = t.elapsed().as_secs_f64();
            let lb = lower_bound(&p).unwrap().lower_bound.max(1);
            println!(
                "{} {} {s:.3} s peak/LB {:.5}",
                arg(2),
                arg(3),
                r.peak as f64 / lb as f64
            );
        }
        "each" => {
            // Each strategy named after the spec, one after the other (time, peak / LB).
            let p = gen::by_spec(arg(2)).unwrap();
            let lb = lower_bound(&p).unwrap().lower_bound.max(1);
            for name in &args[3..] {
                let t = std::time::Instant::now();
                let r = plan(&p, name, &PlanOptions::exact()).unwrap();
                println!(
                    "{name} {} {:.3} s peak/LB {:.5}",
                    arg(2),
                    t.elapsed().as_secs_f64(),
                    r.peak as f64 / lb as f64
                );
            }
        }
        "sim" => {
            let p = gen::by_spec(arg(3)).unwrap();
            let t = std::time::Instant::now();
            let o = simulate::registry::RuntimeOptions::default();
            let r = simulate::registry::run(&p, arg(2), &o).unwrap();
            println!(
                "{} {} {:.3} s peak {}",
                arg(2),
                arg(3),
                t.elapsed().as_secs_f64(),
                r.peak_bytes
            );
        }
        _ => eprintln!(
            "scale csv SPEC | plan STRATEGY SPEC | each SPEC STRATEGY... | sim ALLOCATOR SPEC"
        ),
    }
}
