//! Benchmark of the memory-aware op order (`--schedule memory`, `graph::order`), not a timed
//! test: `cargo bench -p memplan-core --bench order`.
//!
//! Tables (Markdown, for `docs/benchmarks.md`):
//! 1. RandWire-style graphs (`gen/randwire.rs`, WS k = 4, p = 0.75), one stage of 8–32 nodes,
//!    ten seeds each: file-order peak / memory-order peak (mean, min, max), how many searches
//!    proved the optimum, CPU time.
//! 2. Deeper RandWire graphs up to ~500 ops and beyond: one seed each, the same columns, and
//!    whether the memory order stays at or below the file order.
//! 3. petgraph's `DfsPostOrder` against a hand-written iterative post-order over the same
//!    adjacency (the measurement behind using petgraph for the DFS candidate).
// Bench code: counts and timings are far below the truncation limits.
#![allow(clippy::cast_possible_truncation)]

use std::time::Duration;

#[path = "gen/mod.rs"]
mod gen;
#[path = "timing/mod.rs"]
mod timing;

use gen::randwire::RandWire;
use memplan_core::graph::order::{memory_order, OrderLimits, OrderReport};
use memplan_core::Bindings;

fn run(g: &memplan_core::Graph) -> (Duration, OrderReport) {
    let t0 = timing::cpu_time();
    let (_, r) = memory_order(g, &Bindings::new(), &OrderLimits::default()).expect("orders");
    let t = match (t0, timing::cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => Duration::ZERO,
    };
    (t, r)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("### RandWire one stage, ten seeds each (file order: breadth first)\n");
    println!("| nodes | ops | file / memory mean | min | max | proven optimal | winners | mean ms | max ms |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut all = Vec::new();
    for nodes in [8usize, 16, 24, 32] {
        let mut ratios = Vec::new();
        let mut proven = 0;
        let mut times = Vec::new();
        let mut winners: Vec<String> = Vec::new();
        for seed in 1..=10u64 {
            let g = RandWire::ws(1, nodes, seed).graph();
            let (t, r) = run(&g);
            assert!(r.peak <= r.file_peak, "{}", r.note());
            ratios.push(r.file_peak as f64 / r.peak as f64);
            proven += usize::from(r.exact);
            times.push(t.as_secs_f64() * 1000.0);
            if !winners.contains(&r.winner) {
                winners.push(r.winner.clone());
            }
        }
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        all.extend_from_slice(&ratios);
        println!(
            "| {nodes} | {} | {mean:.3} | {:.3} | {:.3} | {proven} / 10 | {} | {:.1} | {:.1} |",
            nodes + 1,
            ratios.iter().copied().fold(f64::MAX, f64::min),
            ratios.iter().copied().fold(0.0, f64::max),
            winners.join(", "),
            times.iter().sum::<f64>() / times.len() as f64,
            times.iter().copied().fold(0.0, f64::max),
        );
    }
    println!(
        "\nMean file / memory over all {} graphs: {:.3}\n",
        all.len(),
        all.iter().sum::<f64>() / all.len() as f64
    );

    println!("### Deeper RandWire graphs, one seed each\n");
    println!("| stages × nodes | ops | file peak B | memory peak B | file / memory | proven optimal | states | winner | ms |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (stages, nodes) in [
        (3usize, 32usize),
        (8, 32),
        (15, 32),
        (5, 64),
        (40, 32),
        (150, 32),
    ] {
        let g = RandWire::ws(stages, nodes, 1).graph();
        let (t, r) = run(&g);
        assert!(r.peak <= r.file_peak, "{}", r.note());
        println!(
            "| {stages} × {nodes} | {} | {} | {} | {:.3} | {} | {} | {} | {:.0} |",
            g.ops.len(),
            r.file_peak,
            r.peak,
            r.file_peak as f64 / r.peak as f64,
            if r.exact { "yes" } else { "no" },
            r.states,
            r.winner,
            t.as_secs_f64() * 1000.0
        );
    }

    println!("\n### DFS post-order: petgraph against a hand-written one (same adjacency)\n");
    println!("| nodes | petgraph DfsPostOrder µs | hand-written µs | ratio |");
    println!("|---|---|---|---|");
    for n in [10_000usize, 100_000] {
        let mut rng = gen::Rng(n as u64);
        // a random DAG: each node reads one to three earlier nodes
        let preds: Vec<Vec<usize>> = (0..n)
            .map(|v| {
                if v == 0 {
                    Vec::new()
                } else {
                    (0..1 + rng.below(3))
                        .map(|_| rng.below(v as u64) as usize)
                        .collect()
                }
            })
            .collect();
        let (tp, a) = timing::time(3, || petgraph_post(&preds));
        let (th, b) = timing::time(3, || hand_post(&preds));
        assert_eq!(a.len(), b.len());
        println!(
            "| {n} | {:.0} | {:.0} | {:.2} |",
            tp.as_secs_f64() * 1e6,
            th.as_secs_f64() * 1e6,
            tp.as_secs_f64() / th.as_secs_f64()
        );
    }
}

/// Post-order over predecessors from the last node back, petgraph's `DfsPostOrder`.
fn petgraph_post(preds: &[Vec<usize>]) -> Vec<usize> {
    use petgraph::graph::{DiGraph, NodeIndex};
    use petgraph::visit::DfsPostOrder;
    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(preds.len(), preds.len() * 2);
    for _ in 0..preds.len() {
        g.add_node(());
    }
    for (v, ps) in preds.iter().enumerate() {
        for &p in ps {
            g.add_edge(NodeIndex::new(v), NodeIndex::new(p), ());
        }
    }
    let mut out = Vec::with_capacity(preds.len());
    let mut dfs = DfsPostOrder::empty(&g);
    for v in (0..preds.len()).rev() {
        if !dfs.discovered.contains(v) {
            dfs.move_to(NodeIndex::new(v));
            while let Some(x) = dfs.next(&g) {
                out.push(x.index());
            }
        }
    }
    out
}

/// The same post-order with a plain stack of (node, next predecessor).
fn hand_post(preds: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; preds.len()];
    let mut out = Vec::with_capacity(preds.len());
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in (0..preds.len()).rev() {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        stack.push((root, 0));
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&p) = preds[v].get(*i) {
                *i += 1;
                if !seen[p] {
                    seen[p] = true;
                    stack.push((p, 0));
                }
            } else {
                out.push(v);
                stack.pop();
            }
        }
    }
    out
}
