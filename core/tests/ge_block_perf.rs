//! Timing of the GE block strategies against offset packing on large synthetic problems.
//! Ignored by default; run with
//! `cargo test -p memplan-core --release --test ge_block_perf -- --ignored --nocapture`.

use std::time::Instant;

use memplan_core::{plan, validate, Buffer, PlanOptions, Problem};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// `n` buffers over `n / per_step` steps; sizes from `sizes` distinct values (or all
/// distinct when 0); lifetimes up to `max_len` steps.
fn synthetic(n: usize, per_step: usize, sizes: u64, max_len: u64, seed: u64) -> Problem {
    let mut r = Lcg(seed);
    let steps = (n / per_step).max(1) as u64;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let start = i as u64 / per_step as u64;
        let len = if r.next() % 10 == 0 {
            r.next() % (max_len * 8 + 1)
        } else {
            r.next() % (max_len + 1)
        };
        let end = (start + len).min(steps - 1);
        let size = if sizes == 0 {
            1 + r.next() % (4 << 20)
        } else {
            (1 + r.next() % sizes) * 65_536
        };
        let mut b = Buffer::new(format!("t{i}"), size, start, end);
        b.producer = Some(start);
        v.push(b);
    }
    Problem::from_buffers("synthetic", v)
}

fn time(p: &Problem, s: &str) -> (f64, u64) {
    let o = PlanOptions::default();
    let t = Instant::now();
    let out = plan(p, s, &o).expect("plans");
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(validate(p, &out), Ok(()), "{s}");
    (secs, out.peak)
}

#[test]
#[ignore]
fn ge_block_scales_like_packing() {
    for (n, sizes, max_len) in [
        (10_000, 40, 6),
        (10_000, 0, 6),
        (100_000, 40, 6),
        (100_000, 0, 6),
        (100_000, 0, 40),
    ] {
        let p = synthetic(n, 2, sizes, max_len, 7);
        let mut line = format!("n={n} sizes={sizes} max_len={max_len}:");
        for s in [
            "ge-block",
            "ge-binary-block",
            "ge-max-block",
            "greedy-size-best-fit",
        ] {
            if s == "greedy-size-best-fit" && n > 20_000 {
                continue;
            }
            let (secs, peak) = time(&p, s);
            line += &format!("  {s} {secs:.3}s peak {peak}");
        }
        println!("{line}");
    }
}
