//! keyword_scrambled, TFLM's arena threshold model: its head is 672 B
//! (`memory_arena_threshold_test.cc`, and `print_allocations()` of PyPI's tflite-micro wheel),
//! of which the file holds 288 B of tensors. The rest is the SVDF kernels' scratch, which the
//! importer sizes from TFLM's reference kernel table and adds as TFLM adds it: `tflm-greedy`
//! gives 672 B byte for byte and the exact search never more, through the plain load path.

#![cfg(feature = "tflite")]

use memplan_core::import::load::{load, LoadOptions};
use memplan_core::import::tflite::tflm_plan_options;
use memplan_core::report::tflm_export::tflm_offsets;
use memplan_core::{validate_with, Rules};

fn keyword() -> memplan_core::import::load::Loaded {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/models/tflite/tflite-micro/keyword_scrambled.tflite"
    );
    let bytes = std::fs::read(path).expect("the committed model");
    load("keyword_scrambled.tflite", &bytes, &LoadOptions::default()).expect("load")
}

#[test]
fn keyword_scrambled_head_is_tflms_672() {
    let loaded = keyword();
    let problem = &loaded.lowered.problem;
    let o = tflm_plan_options();
    let plan = memplan_core::plan(problem, "tflm-greedy", &o).expect("plan");
    validate_with(problem, &plan, &Rules::from(&o)).expect("valid");
    assert_eq!(plan.peak, 672, "TFLM's head");
    let best = memplan_core::plan(problem, "optimal", &o).expect("plan");
    validate_with(problem, &best, &Rules::from(&o)).expect("valid");
    assert!(best.peak <= 672, "optimal {}", best.peak);
}

#[test]
fn exported_greedy_plan_runs_at_its_own_peak() {
    // TFLM places the scratch online around the offline offsets by its greedy rule: for
    // tflm-greedy's own plan that is the same placement, so the head stays 672 B
    let loaded = keyword();
    let info = loaded.tflite.as_ref().expect("tflite info");
    let o = tflm_plan_options();
    let plan = memplan_core::plan(&loaded.lowered.problem, "tflm-greedy", &o).expect("plan");
    let e = tflm_offsets(&loaded.lowered, info, &plan).expect("export");
    assert_eq!(e.head, 672);
    assert_eq!(e.deployed.offsets, plan.offsets);
    assert_eq!(e.online.len(), 14);
    assert_eq!(e.online_offsets.len(), 14);
    // whatever plan is exported, the deployed one is valid and its peak is the head
    let best = memplan_core::plan(&loaded.lowered.problem, "optimal", &o).expect("plan");
    let e = tflm_offsets(&loaded.lowered, info, &best).expect("export");
    validate_with(&loaded.lowered.problem, &e.deployed, &Rules::from(&o)).expect("valid");
    assert_eq!(e.head, e.deployed.peak);
    assert!(e.head >= best.peak);
}
