//! keyword_scrambled, TFLM's arena threshold model: its head is 672 B
//! (`memory_arena_threshold_test.cc`, and `print_allocations()` of PyPI's tflite-micro wheel),
//! of which the file holds 288 B of tensors. The rest is the SVDF kernels' scratch, worked out
//! here from TFLM's reference kernel and added as TFLM adds it: `tflm-greedy` then gives 672 B
//! byte for byte, so the difference the TFLM oracle measures is exactly that scratch.

#![cfg(feature = "tflite")]

use memplan_core::import::load::{load, LoadOptions};
use memplan_core::import::tflite::tflm_plan_options;
use memplan_core::problem::BufferKind;
use memplan_core::{validate_with, Buffer, Rules};

#[test]
fn keyword_scrambled_head_is_tensors_plus_svdf_scratch() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/models/tflite/tflite-micro/keyword_scrambled.tflite"
    );
    let bytes = std::fs::read(path).expect("the committed model");
    let loaded = load("keyword_scrambled.tflite", &bytes, &LoadOptions::default()).expect("load");
    let graph = loaded.graph.as_ref().expect("a graph");
    let mut problem = loaded.lowered.problem.clone();
    let o = tflm_plan_options();
    let tensors_only = memplan_core::plan(&problem, "tflm-greedy", &o).expect("plan");
    assert_eq!(tensors_only.peak, 288);
    // svdf_common.cc PrepareSvdf, int8: RequestScratchBufferInArena(batch * num_filters * 4)
    // then (batch * num_units * 4); TFLM adds scratch buffers after every tensor, in request
    // order, each live during its op only (micro_allocation_info.cc). Here batch 1, rank 1:
    // four SVDFs of 64 filters, three of 32 (the weights_feature's rows).
    let mut filters = Vec::new();
    for (step, &op) in loaded.lowered.schedule.iter().enumerate() {
        let op = &graph.ops[op];
        if op.op_type != "SVDF" {
            continue;
        }
        let wf = &graph.tensors[op.inputs[1]];
        let rows = match wf.shape.as_deref() {
            Some([memplan_core::graph::Dim::Known(r), _]) => *r,
            other => panic!("weights_feature shape {other:?}"),
        };
        filters.push(rows);
        for (k, bytes) in [rows * 4, rows * 4].into_iter().enumerate() {
            let mut b = Buffer::new(
                format!("{}/scratch{k}", op.name),
                bytes,
                step as u64,
                step as u64,
            );
            b.kind = BufferKind::Workspace;
            b.producer = Some(step as u64);
            problem.buffers.push(b);
        }
    }
    assert_eq!(filters, [64, 64, 64, 64, 32, 32, 32]);
    let plan = memplan_core::plan(&problem, "tflm-greedy", &o).expect("plan");
    validate_with(&problem, &plan, &Rules::from(&o)).expect("valid");
    assert_eq!(plan.peak, 672, "TFLM's head");
    let best = memplan_core::plan(&problem, "optimal", &o).expect("plan");
    validate_with(&problem, &best, &Rules::from(&o)).expect("valid");
    // measured: optimal is at 672 B too
    assert!(best.peak <= 672, "optimal {}", best.peak);
    eprintln!(
        "keyword_scrambled with SVDF scratch: optimal {} B",
        best.peak
    );
}
