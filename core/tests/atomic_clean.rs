//! Atomic clean by id (`memplan_core::report::atomic_clean`, GE atomic_memory_assigner.cc
//! `SetAtomicCleanOffset` / `MergeCleanMemInfos`, docs/ge-memory-planning.md §3), on a graph
//! worked out by hand.

use memplan_core::report::atomic_clean::{atomic_clean, CleanRange};
use memplan_core::{import, plan, Bindings, PlanOptions};

/// x (64 B, input) -> A -> m1 (1000 B, atomic) -> B -> m2 (3000 B, atomic) -> C -> y (64 B,
/// output); C has a 100 B atomic workspace. Steps: A 0, B 1, C 2.
const GRAPH: &str = r#"{"format": "memplan.graph/1", "name": "atomic",
 "tensors": [{"name": "x", "bytes": 64},
             {"name": "m1", "bytes": 1000, "flags": ["atomic_clean"]},
             {"name": "m2", "bytes": 3000, "flags": ["atomic_clean"]},
             {"name": "y", "bytes": 64}],
 "ops": [{"name": "A", "type": "ReduceSum", "inputs": ["x"], "outputs": ["m1"]},
         {"name": "B", "type": "ReduceSum", "inputs": ["m1"], "outputs": ["m2"]},
         {"name": "C", "type": "MatMul", "inputs": ["m2"], "outputs": ["y"],
          "workspace_bytes": [100], "workspace_flags": [["atomic_clean"]]}],
 "inputs": ["x"], "outputs": ["y"]}"#;

fn range(offset: u64, size: u64) -> CleanRange {
    CleanRange {
        offset,
        size,
        memory_type: 0,
        zero_copy: false,
    }
}

#[test]
fn one_central_memset_merges_the_atomic_region() {
    let graph = import::json::parse(GRAPH).expect("parses");
    let p = graph.lower(&Bindings::new()).expect("lowers").problem;
    let o = PlanOptions::default();
    let out = plan(&p, "ge-block", &o).expect("plans");
    let r = atomic_clean(&p, &out, &o).expect("report");
    // GE sizes ceil512(ceil32(bytes) + 32): m1 1536, m2 3072, C's workspace 512. Under the
    // centralised policy they sit in the atomic region one after another from 0 (no feature
    // map is left): m1 0..1536, m2 1536..4608, workspace 4608..5120; adjacent, so the one
    // AtomicAddrClean zeroes a single merged range [0, 5120).
    assert!(r.centralised);
    assert_eq!(r.memsets.len(), 1);
    assert_eq!(r.memsets[0].name, "AtomicAddrClean");
    assert_eq!(r.memsets[0].cleans_for, ["A", "B", "C"]);
    assert_eq!(r.memsets[0].ranges, [range(0, 5120)]);
    assert_eq!((r.memsets_centralised, r.memsets_per_op), (1, 3));
}

#[test]
fn per_op_memsets_clean_reused_memory() {
    let graph = import::json::parse(GRAPH).expect("parses");
    let p = graph.lower(&Bindings::new()).expect("lowers").problem;
    let o = PlanOptions {
        atomic_centralised: false,
        ..PlanOptions::default()
    };
    let out = plan(&p, "ge-block", &o).expect("plans");
    let r = atomic_clean(&p, &out, &o).expect("report");
    // Policy 1: m1 [0,1], m2 [1,2], the workspace [2,2] are ordinary feature maps. Level 1
    // reuses nothing (sizes 1536, 3072, 512 differ); level 2, largest first: m1 and the
    // workspace touch m2's life, the workspace nests in m1 (2 > 1) at m1's head. Layout in
    // that order: m2 at 0, m1 at 3072, the workspace at 3072. One MemSet per op.
    assert!(!r.centralised);
    let got: Vec<(&str, Vec<CleanRange>)> = r
        .memsets
        .iter()
        .map(|m| (m.name.as_str(), m.ranges.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("MemSet_A", vec![range(3072, 1536)]),
            ("MemSet_B", vec![range(0, 3072)]),
            ("MemSet_C", vec![range(3072, 512)]),
        ]
    );
    assert_eq!((r.memsets_centralised, r.memsets_per_op), (1, 3));
}
