//! ONNX import benchmark (not a timed test): parse + shape inference of acceptance models,
//! median wall time over repeated runs and peak heap allocated during one import (a counting
//! allocator; the file buffer itself is not counted). Prints a table.
//!
//! `cargo bench -p memplan-core --bench onnx_import`
//!
//! Targets: `ddddocr_common_det.onnx` (20 MB) <= 50 ms and peak < 2x the file size;
//! `vit_b_16_randinit` and `bert_base_randinit` stripped <= 10 ms each.
// Bench code: counts and timings are far below the truncation limits.
#![allow(clippy::cast_possible_truncation)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use memplan_core::import::onnx::{parse, OnnxOptions};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/models");
    if !dir.is_dir() {
        println!("note: {} not found; nothing to measure", dir.display());
        return;
    }
    let cases = [
        ("onnx/ddddocr_common_det.onnx", 50.0),
        ("onnx-stripped/ddddocr_common_det.stripped.onnx", 10.0),
        ("onnx-stripped/vit_b_16_randinit.stripped.onnx", 10.0),
        ("onnx-stripped/bert_base_randinit.stripped.onnx", 10.0),
        ("onnx/ppocrv4_det.onnx", 50.0),
        ("onnx/silero_vad_v6_if.onnx", 50.0),
    ];
    println!(
        "{:<50} {:>10} {:>10} {:>10} {:>12} {:>8}",
        "file", "bytes", "median ms", "target ms", "peak heap", "x file"
    );
    for (rel, target) in cases {
        let path = dir.join(rel);
        let Ok(bytes) = std::fs::read(&path) else {
            println!("{rel:<50} missing");
            continue;
        };
        let opts = OnnxOptions::default();
        // Peak heap of one import.
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let m = parse(&bytes, &opts);
        let peak = PEAK.load(Ordering::Relaxed) - base;
        if let Err(e) = m {
            println!("{rel:<50} error: {e}");
            continue;
        }
        drop(m);
        let runs = if bytes.len() > 1_000_000 { 20 } else { 50 };
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let m = parse(&bytes, &opts);
                let e = t.elapsed().as_secs_f64() * 1e3;
                drop(m);
                e
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "{:<50} {:>10} {:>10.2} {:>10.0} {:>12} {:>8.2}{}",
            rel,
            bytes.len(),
            median,
            target,
            peak,
            peak as f64 / bytes.len() as f64,
            if median <= target {
                ""
            } else {
                "  SLOWER THAN TARGET"
            }
        );
    }
}
