//! Every runtime allocator on a real model (`static/samples/mobilenet_v2_randinit.stripped.onnx`,
//! batch 1), its figures checked against an independent sweep of the tensor lifetimes (no code
//! shared with the allocators): what was live together never overlaps, and the peaks equal the
//! sweep's sums of the sizes each allocator's rounding rule gives.
#![cfg(all(feature = "onnx", feature = "serde"))]

use memplan_core::import::onnx::{parse, OnnxOptions};
use memplan_core::simulate::registry::{self, RuntimeOptions};
use memplan_core::simulate::SimReport;
use memplan_core::Problem;

fn model() -> Problem {
    let path = format!(
        "{}/../static/samples/mobilenet_v2_randinit.stripped.onnx",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).expect("sample model present in the repository");
    let m = parse(&bytes, &OnnxOptions::default()).expect("parses");
    let (dims, _) = m.graph.bind_unbound_to_one(&memplan_core::Bindings::new());
    m.graph.lower(&dims).expect("lowers").problem
}

/// The sweep: most bytes live at once when each tensor costs `cost(size)`, with the runtime's
/// order (allocations of a step before its frees; never-freed tensors stay).
fn sweep_peak(p: &Problem, cost: impl Fn(u64) -> u64) -> u64 {
    let mut points: Vec<(u64, i8, u64)> = Vec::new();
    for (i, b) in p.buffers.iter().enumerate() {
        if b.size == 0 {
            continue;
        }
        points.push((b.start, 0, cost(b.size)));
        if !memplan_core::simulate::trace::never_freed(p, memplan_core::BufferId::new(i)) {
            points.push((b.end, 1, cost(b.size)));
        }
    }
    points.sort();
    let (mut live, mut peak) = (0u64, 0u64);
    for (_, phase, c) in points {
        if phase == 0 {
            live += c;
            peak = peak.max(live);
        } else {
            live -= c;
        }
    }
    peak
}

/// No two allocations live at the same time share a byte (from the per-allocation records).
fn no_overlap(r: &SimReport) {
    let recs: Vec<_> = r.records.iter().filter(|x| x.taken > 0).collect();
    for (k, a) in recs.iter().enumerate() {
        for b in &recs[k + 1..] {
            let a_end = a.free_step.unwrap_or(u64::MAX);
            let b_end = b.free_step.unwrap_or(u64::MAX);
            // a step's allocations come before its frees: a freed after step s is still
            // live when step s allocates
            let together = a.alloc_step <= b_end && b.alloc_step <= a_end;
            if together {
                let apart = a.offset + a.taken <= b.offset || b.offset + b.taken <= a.offset;
                assert!(
                    apart,
                    "{}: '{}' and '{}' overlap",
                    r.allocator, a.name, b.name
                );
            }
        }
    }
}

#[test]
fn every_runtime_allocator_on_mobilenet_v2() {
    let p = model();
    assert!(
        p.buffers.len() > 100,
        "the real model lowers to its tensors"
    );
    let o = RuntimeOptions::default();
    for a in registry::allocators() {
        let r = (a.run)(&p, &o).unwrap_or_else(|e| panic!("{}: {e}", a.name));
        no_overlap(&r);
        assert!(r.reserved_bytes >= r.peak_in_use_bytes, "{}", a.name);
        match a.name {
            "acl-pool" => {
                // one block of (largest tensor rounded up to 64) per tensor, one pool block per
                // tensor: nothing fails, every live tensor costs a whole block
                let largest = p.buffers.iter().map(|b| b.size).max().unwrap();
                let block = largest.div_ceil(64) * 64;
                assert_eq!(r.failures, 0);
                assert_eq!(r.peak_in_use_bytes, sweep_peak(&p, |_| block));
                assert_eq!(r.reserved_bytes, block * p.buffers.len() as u64);
            }
            "ge-v2" => {
                // spans are whole 64 KiB pages (at least one page)
                let page = 1u64 << 16;
                assert_eq!(
                    r.peak_in_use_bytes,
                    sweep_peak(&p, |s| s.div_ceil(page).max(1) * page)
                );
                assert!(r.cache_hits > 0, "a real model reuses cached spans");
            }
            "ge-v2-streams" => {
                // MobileNetV2 runs on one stream: one allocator per stream is ge-v2 itself
                let v2 = (registry::find("ge-v2").unwrap().run)(&p, &o).unwrap();
                assert_eq!(r.offsets, v2.offsets);
                assert_eq!(
                    (r.reserved_bytes, r.cache_hits, r.peak_bytes),
                    (v2.reserved_bytes, v2.cache_hits, v2.peak_bytes)
                );
            }
            "ge-v1" | "bfc" | "acl-tiered" | "reuse" | "pool" => {
                // ge-v1 takes raw sizes; the peak in use is the raw live peak
                if a.name == "ge-v1" {
                    assert_eq!(r.peak_in_use_bytes, sweep_peak(&p, |s| s));
                }
                assert_eq!(r.failures, 0, "{}", a.name);
            }
            other => panic!("allocator {other} has no real-model check"),
        }
    }
}
