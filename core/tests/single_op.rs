//! Single-op mode (`memplan_core::report::single_op`, GE runtime/v1/single_op:
//! `SingleOpImpl::MallocOnExecute`, `InternalAllocator::Malloc`), worked out by hand.

use memplan_core::report::single_op::{single_op, SingleOpStream};
use memplan_core::{import, Bindings, PlanOptions};

/// x (1000 B, input) -> A (workspaces 100 and 3000 B) -> a (2000) -> B (stream 1, workspace
/// 5000) -> b (500) -> C (workspace 100) -> y (64, output).
const GRAPH: &str = r#"{"format": "memplan.graph/1", "name": "single",
 "tensors": [{"name": "x", "bytes": 1000}, {"name": "a", "bytes": 2000},
             {"name": "b", "bytes": 500}, {"name": "y", "bytes": 64}],
 "ops": [{"name": "A", "type": "Conv", "inputs": ["x"], "outputs": ["a"],
          "workspace_bytes": [100, 3000]},
         {"name": "B", "type": "Conv", "inputs": ["a"], "outputs": ["b"], "stream": 1,
          "workspace_bytes": [5000]},
         {"name": "C", "type": "Conv", "inputs": ["b"], "outputs": ["y"],
          "workspace_bytes": [100]}],
 "inputs": ["x"], "outputs": ["y"]}"#;

#[test]
fn each_op_alone_holds_only_its_workspaces() {
    let graph = import::json::parse(GRAPH).expect("parses");
    let p = graph.lower(&Bindings::new()).expect("lowers").problem;
    let r = single_op(&p, &PlanOptions::default()).expect("report");
    // Workspaces as GE sizes them, ceil512(ceil32(bytes) + 32): 100 -> 512, 3000 -> 3072,
    // 5000 -> 5120. A holds 512 + 3072 = 3584, B 5120, C 512. Inputs and outputs are the
    // caller's: A 1000 + 2000, B 2000 + 500, C 500 + 64.
    let got: Vec<(&str, u64, u64)> = r
        .ops
        .iter()
        .map(|o| (o.name.as_str(), o.user_bytes, o.workspace_bytes))
        .collect();
    assert_eq!(got, [("A", 3000, 3584), ("B", 2500, 5120), ("C", 564, 512)]);
    // Stream 0 runs A (allocates 3584) then C (512 fits: reused); stream 1 runs B (5120).
    assert_eq!(
        r.streams,
        [
            SingleOpStream {
                stream: 0,
                device_bytes: 3584,
                allocations: 1
            },
            SingleOpStream {
                stream: 1,
                device_bytes: 5120,
                allocations: 1
            }
        ]
    );
    assert_eq!(r.device_bytes, 8704);
}

#[test]
fn a_larger_op_reallocates_its_streams_buffer() {
    // The same graph on one stream: A allocates 3584, B frees it and allocates 5120, C reuses.
    let text = GRAPH.replace(r#""stream": 1,"#, "");
    let graph = import::json::parse(&text).expect("parses");
    let p = graph.lower(&Bindings::new()).expect("lowers").problem;
    let r = single_op(&p, &PlanOptions::default()).expect("report");
    assert_eq!(
        r.streams,
        [SingleOpStream {
            stream: 0,
            device_bytes: 5120,
            allocations: 2
        }]
    );
}
