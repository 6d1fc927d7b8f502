//! One flow (`memplan_core::report::hybrid`): the static plan for tensors of known size,
//! `ge-v2` at run time for those with a symbolic dim, worked out by hand.

use memplan_core::report::hybrid::{run, split};
use memplan_core::simulate::registry::RuntimeOptions;
use memplan_core::{import, Bindings, PlanOptions};

/// x, a, c are `[batch, 256]` f32 (4096 B at batch 4); b `[1, 1000]` f32 (4000 B) and the
/// graph output y `[1, 10]` (40 B) have known sizes. A: x -> a, B: a -> b, C: b -> c,
/// D: c -> y (steps 0..3).
const GRAPH: &str = r#"{"format": "memplan.graph/1", "name": "hybrid",
 "tensors": [{"name": "x", "dtype": "float32", "shape": ["batch", 256]},
             {"name": "a", "dtype": "float32", "shape": ["batch", 256]},
             {"name": "b", "dtype": "float32", "shape": [1, 1000]},
             {"name": "c", "dtype": "float32", "shape": ["batch", 256]},
             {"name": "y", "dtype": "float32", "shape": [1, 10]}],
 "ops": [{"name": "A", "type": "Relu", "inputs": ["x"], "outputs": ["a"]},
         {"name": "B", "type": "ReduceSum", "inputs": ["a"], "outputs": ["b"]},
         {"name": "C", "type": "Tile", "inputs": ["b"], "outputs": ["c"]},
         {"name": "D", "type": "MatMul", "inputs": ["c"], "outputs": ["y"]}],
 "inputs": ["x"], "outputs": ["y"]}"#;

#[test]
fn static_plan_and_runtime_allocator_share_the_device() {
    let graph = import::json::parse(GRAPH).expect("parses");
    let mut dims = Bindings::new();
    dims.insert("batch".into(), 4);
    let lowered = graph.lower(&dims).expect("lowers");
    let h = split(&graph, &lowered);
    let names = |p: &memplan_core::Problem| -> Vec<String> {
        p.buffers.iter().map(|b| b.name.clone()).collect()
    };
    assert_eq!(names(&h.static_part), ["b", "y"]);
    assert_eq!(names(&h.dynamic_part), ["x", "a", "c"]);
    let (_, _, r) = run(
        &h,
        "greedy-size-best-fit",
        &PlanOptions::exact(),
        &RuntimeOptions::default(),
    )
    .expect("runs");
    // static: b [1,2] 4000 B and y (a zero-copy graph output, apart) 40 B: 4040 B.
    assert_eq!(r.static_bytes, 4040);
    // run time, ge-v2 with 64 KiB pages: x and a (4096 B, one page each) at step 0: two new
    // spans, 131072 B; c at step 2 takes a's idle span. Reserved 131072, in use 131072.
    assert_eq!(
        (r.runtime_reserved_bytes, r.runtime_in_use_bytes),
        (131_072, 131_072)
    );
    assert_eq!(r.device_bytes, 135_112);
    assert_eq!((r.static_buffers, r.dynamic_buffers), (2, 3));
}
