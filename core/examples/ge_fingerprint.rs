//! Fingerprints of `ge-binary-block` / `ge-block` plans, to check that a speed-up changes no plan.
//!
//! Each line is the FNV-1a hash of one plan's `Debug` text (offsets, sizes, blocks and their
//! members, stats, notes) on the strategies bench's generated problems, the ge_block tests'
//! generator (1–3 streams), the `gen` shapes and every `testdata/` case, under four option sets
//! (exact, GE default, GE without padding, zero-copy reuse); the last line hashes them all.
//!
//! `cargo run --release -p memplan-core --example ge_fingerprint [big] > fp.txt` (`big` adds the
//! bench's 100k problem), then `diff` two runs' files (the timings in the last column differ).
//! `... --example ge_fingerprint prof STRATEGY N REPS` plans the bench's `N`-buffer problem (or
//! a `gen` spec such as `train:20000:1`)
//! `REPS` times (exact sizes, as the bench does) for `perf stat` or cachegrind; `REPS` = 0
//! measures the problem generation alone, to subtract.
#![allow(
    dead_code,
    missing_docs,
    clippy::unwrap_used,
    clippy::cast_possible_truncation
)]
#[path = "../benches/gen/mod.rs"]
mod gen;

use memplan_core::{import::load, plan, Buffer, OpInfo, Padding, PlanOptions, Problem};
use std::fmt::Write;

struct Fnv(u64);
impl Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for b in s.bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
        Ok(())
    }
}

/// The tests' `generated` (ge_block/tests.rs), with streams and op edges.
fn generated(n: usize, seed: u64, streams: u32) -> Problem {
    let mut x = seed.max(1);
    let mut next = move |m: u64| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) % m.max(1)
    };
    let palette: Vec<u64> = (0..16).map(|_| 64 << next(16)).collect();
    let steps = n as u64;
    let mut v = Vec::new();
    for i in 0..n {
        let size = if next(3) == 0 {
            palette[usize::try_from(next(16)).unwrap()]
        } else {
            let exp = 8 + next(15);
            ((1u64 << exp) + next(1 << exp)) / 64 * 64
        };
        let len = match next(1000) {
            0..=99 => 0,
            100..=699 => 1 + next(2),
            700..=899 => 3 + next(14),
            900..=979 => 17 + next(184),
            980..=997 => 201 + next(1800),
            _ => steps,
        };
        let start = i as u64;
        let mut b = Buffer::new(format!("t{i}"), size, start, (start + len).min(steps - 1));
        b.producer = Some(start);
        b.stream = u32::try_from(i as u64 % u64::from(streams)).unwrap();
        v.push(b);
    }
    let mut p = Problem::from_buffers("generated", v);
    if streams > 1 {
        p.steps = steps;
        p.ops = (0..steps)
            .map(|k| OpInfo {
                stream: u32::try_from(k % u64::from(streams)).unwrap(),
                preds: [k.checked_sub(1), k.checked_sub(1 + next(7))]
                    .into_iter()
                    .flatten()
                    .collect(),
                ..OpInfo::default()
            })
            .collect();
    }
    p
}

fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("csv" | "json" | "onnx")
        ) {
            out.push(p);
        }
    }
}

fn main() {
    let big = std::env::args().any(|a| a == "big");
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("prof") {
        let strat = args.get(2).map_or("ge-block", String::as_str);
        let spec = args.get(3).map_or("100000", String::as_str);
        let reps: usize = args.get(4).and_then(|x| x.parse().ok()).unwrap_or(1);
        // A number: the bench's problem of that size; otherwise a `gen` spec.
        let (n, p) = match spec.parse::<usize>() {
            Ok(n) => (n, gen::network(n, 0x5EED + n as u64)),
            Err(_) => (0, gen::by_spec(spec).unwrap()),
        };
        let t = std::time::Instant::now();
        for _ in 0..reps {
            std::hint::black_box(plan(&p, strat, &PlanOptions::exact()).unwrap());
        }
        println!(
            "{strat} {n}: {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3 / reps.max(1) as f64
        );
        return;
    }
    let mut problems: Vec<(String, Problem)> = Vec::new();
    let mut sizes = vec![1000, 10_000];
    if big {
        sizes.push(100_000);
    }
    for &n in &sizes {
        problems.push((format!("bench-{n}"), gen::network(n, 0x5EED + n as u64)));
    }
    for (n, seed, s) in [
        (3000, 1, 1),
        (3000, 2, 3),
        (6000, 3, 1),
        (20_000, 7, 1),
        (20_000, 8, 2),
        (30_000, 9, 3),
    ] {
        problems.push((format!("tests-{n}-{seed}-{s}"), generated(n, seed, s)));
    }
    for spec in [
        "long-short:20000:1",
        "train:20000:1",
        "train:5000:2",
        "kv:20000:1",
        "kv:5000:3",
    ] {
        problems.push((spec.into(), gen::by_spec(spec).unwrap()));
    }
    let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut fs = Vec::new();
    files(root, &mut fs);
    for f in fs {
        let name = f.strip_prefix(root).unwrap().display().to_string();
        let bytes = std::fs::read(&f).unwrap();
        // Files that are no problem (e.g. shape oracles) are left out.
        if let Ok(l) = load::load(&name, &bytes, &load::LoadOptions::default()) {
            problems.push((name, l.lowered.problem));
        }
    }
    let exact = PlanOptions::exact();
    let ge = PlanOptions::default();
    let nopad = PlanOptions {
        padding: Padding::None,
        ..PlanOptions::default()
    };
    let zc = PlanOptions {
        zero_copy_reuse: true,
        ..PlanOptions::default()
    };
    let opts = [
        ("exact", &exact),
        ("ge", &ge),
        ("nopad", &nopad),
        ("zcreuse", &zc),
    ];
    let mut all = Fnv(0xcbf2_9ce4_8422_2325);
    for (name, p) in &problems {
        for (oname, o) in opts {
            for s in ["ge-binary-block", "ge-block"] {
                let t = std::time::Instant::now();
                let r = plan(p, s, o);
                let mut h = Fnv(0xcbf2_9ce4_8422_2325);
                write!(h, "{r:?}").unwrap();
                write!(all, "{}", h.0).unwrap();
                println!(
                    "{name} {oname} {s} {:016x} {:.1}ms",
                    h.0,
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
    }
    println!("ALL {:016x}", all.0);
}
