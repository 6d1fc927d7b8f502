//! The graph-I/O report (`memplan_core::report::graph_io`, GE's run-time view of graph inputs
//! and outputs, docs/ge-memory-planning.md §4) on a graph worked out by hand.

use memplan_core::report::graph_io::{graph_io, CopyReason};
use memplan_core::{import, plan, Bindings, PlanOptions};

/// x (1000 B, graph input) -> A -> a (2000); R writes y in place of x (ref output, Assign-like)
/// reading a; B: a -> z (2000); C: z -> w (500). Graph outputs y, z, w.
const GRAPH: &str = r#"{"format": "memplan.graph/1", "name": "io",
 "tensors": [{"name": "x", "bytes": 1000}, {"name": "a", "bytes": 2000},
             {"name": "y", "bytes": 1000}, {"name": "z", "bytes": 2000},
             {"name": "w", "bytes": 500}],
 "ops": [{"name": "A", "type": "Conv", "inputs": ["x"], "outputs": ["a"]},
         {"name": "R", "type": "Assign", "inputs": ["x", "a"], "outputs": ["y"],
          "attrs": {"ref_outputs": {"y": "x"}}},
         {"name": "B", "type": "Relu", "inputs": ["a"], "outputs": ["z"]},
         {"name": "C", "type": "Relu", "inputs": ["z"], "outputs": ["w"]}],
 "inputs": ["x"], "outputs": ["y", "z", "w"]}"#;

#[test]
fn graph_io_offsets_address_ops_and_copies() {
    let graph = import::json::parse(GRAPH).expect("parses");
    let lowered = graph.lower(&Bindings::new()).expect("lowers");
    let p = plan(&lowered.problem, "ge-block", &PlanOptions::default()).expect("plans");
    let io = graph_io(&graph, &lowered, &p);
    let names: Vec<(&str, bool)> = io.iter().map(|e| (e.name.as_str(), e.input)).collect();
    assert_eq!(
        names,
        [("x", true), ("y", false), ("z", false), ("w", false)]
    );
    // GE sizes ceil512(ceil32(bytes) + 32): x 1536, a 2048, z 2048, w 1024. The feature map
    // is a alone (0..2048); then the zero-copy region (graph_mem_assigner.cc
    // AssignZeroCopyMemory): x's buffer (it holds the output y, so it is placed with the
    // outputs) at 2048, z at 3584, w at 5632.
    let at = |i: usize| (io[i].offset, io[i].size);
    assert_eq!(at(0), (Some(2048), 1536));
    assert_eq!(at(1), (Some(2048), 1536), "y is x's memory");
    assert_eq!(at(2), (Some(3584), 2048));
    assert_eq!(at(3), (Some(5632), 1024));
    // Ops taking the address: x is read by A and R (R writes y into it); y is written by R;
    // z is written by B and read by C; w is written by C.
    let ops = |i: usize| io[i].address_ops.clone();
    assert_eq!(ops(0), ["A", "R"]);
    assert_eq!(ops(1), ["R"]);
    assert_eq!(ops(2), ["B", "C"]);
    assert_eq!(ops(3), ["C"]);
    // x feeds no continuous-input op: zero-copy. y is a ref of the input x, z is read again
    // by C: both copied out each run (1000 + 2000 B). w goes straight to the user's buffer.
    assert!(io[0].zero_copy && io[0].copied_bytes == 0);
    assert_eq!(io[1].copy_reasons, [CopyReason::RefOfInput]);
    assert_eq!(io[1].copied_bytes, 1000);
    assert_eq!(io[2].copy_reasons, [CopyReason::ReadAgain]);
    assert_eq!(io[2].copied_bytes, 2000);
    assert!(io[3].zero_copy && io[3].copied_bytes == 0);
    assert_eq!(io.iter().map(|e| e.copied_bytes).sum::<u64>(), 3000);
}

#[test]
fn an_input_feeding_a_continuous_op_is_copied() {
    // static/samples/ge-node-rules.json: x feeds A and B only (no continuous consumer), but
    // a variant where Cat reads x directly must copy it in (block_mem_assigner.cc
    // IsZeroCopyBlock: no zero copy for data flowing to a continuous-input node).
    let text = r#"{"format": "memplan.graph/1",
     "tensors": [{"name": "x", "bytes": 64}, {"name": "a", "bytes": 64}, {"name": "c", "bytes": 128}],
     "ops": [{"name": "A", "type": "Relu", "inputs": ["x"], "outputs": ["a"]},
             {"name": "Cat", "type": "HcomAllGather", "inputs": ["x", "a"], "outputs": ["c"],
              "attrs": {"continuous_inputs": true}}],
     "inputs": ["x"], "outputs": ["c"]}"#;
    let graph = import::json::parse(text).expect("parses");
    let lowered = graph.lower(&Bindings::new()).expect("lowers");
    let p = plan(&lowered.problem, "ge-block", &PlanOptions::default()).expect("plans");
    let io = graph_io(&graph, &lowered, &p);
    assert_eq!(io[0].name, "x");
    assert_eq!(io[0].copy_reasons, [CopyReason::ContinuousConsumer]);
    assert_eq!(io[0].copied_bytes, 64);
    assert_eq!(io[0].address_ops, ["A", "Cat"]);
    assert!(
        io[1].zero_copy,
        "c is written straight into the user's buffer"
    );
}
