//! The CLI writes the plan file with core's one writer: `memplan plan --format json` prints
//! exactly the bytes of `PlanFile::new(…).to_json()` over core's load pipeline, the call the
//! playground's export makes (web/src/export.rs tests that the page passes it the same
//! problem and options). Only the planning times are taken from the CLI's output.

mod common;

use memplan_core::import::load::{load, LoadOptions};
use memplan_core::report::overlay_report;
use memplan_core::report::plan_file::{Extras, PlanFile, Run};
use memplan_core::strategy::{plan_in, Ctx};
use memplan_core::{Bindings, PlanOptions};

/// Plans `file` (under static/samples) with `strategies` in the CLI and in process, and
/// compares the bytes.
fn same_file(file: &str, extra: &[&str], opts: &LoadOptions, strategies: &[&str]) {
    let mut args = vec!["plan", file, "--format", "json"];
    args.extend_from_slice(extra);
    for s in strategies {
        args.extend_from_slice(&["--strategy", s]);
    }
    let (code, out, err) = common::run_in("../static/samples", &args);
    assert_eq!(code, 0, "{err}");
    let cli: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let path = format!("{}/../static/samples/{file}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).expect("sample model in the repository");
    let loaded = load(file, &bytes, opts).expect("loads");
    let problem = &loaded.lowered.problem;
    let options = PlanOptions::default(); // a graph: GE defaults, as both front ends
    let plans: Vec<_> = strategies
        .iter()
        .map(|s| plan_in(problem, s, &options, &Ctx::default()).expect("plans"))
        .collect();
    let overlays: Vec<_> = plans
        .iter()
        .zip(strategies)
        .map(|(p, s)| {
            (!problem.gears().is_empty())
                .then(|| overlay_report(problem, p, s, &options).expect("overlay"))
        })
        .collect();
    let runs: Vec<Run> = (0..plans.len())
        .map(|i| Run {
            strategy: strategies[i],
            plan: &plans[i],
            options: &options,
            time_us: cli["plans"][i]["plan_time_us"].as_u64().expect("time"),
            overlay: overlays[i].as_ref(),
        })
        .collect();
    let extras = Extras {
        unknown: &loaded.lowered.unknown,
        views: loaded.lowered.views.as_ref(),
        order: loaded.lowered.order,
        search: loaded.lowered.search.as_ref(),
        rewrites: loaded.lowered.rewrites.as_ref(),
    };
    let mine = PlanFile::new(file, problem, extras, &runs)
        .and_then(|f| f.to_json())
        .expect("file");
    assert_eq!(mine, out, "{file}: the CLI's plan file is core's");
}

#[test]
fn the_cli_writes_cores_plan_file_for_a_json_graph() {
    let opts = LoadOptions {
        dims: Bindings::from([("batch".to_string(), 1)]),
        ..LoadOptions::default()
    };
    same_file(
        "mobilenet-v2-blocks.json",
        &["--dim", "batch=1"],
        &opts,
        &["ge-block", "greedy-size-best-fit"],
    );
}

#[test]
fn the_cli_writes_cores_plan_file_for_onnx_gears() {
    let opts = LoadOptions {
        gears: vec![1, 2],
        ..LoadOptions::default()
    };
    same_file(
        "resnet50_randinit.stripped.onnx",
        &["--batch", "1,2"],
        &opts,
        &["ge-block", "greedy-size-best-fit"],
    );
}
