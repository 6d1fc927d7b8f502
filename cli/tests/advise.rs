//! `memplan advise`: every row's figures are what `memplan plan` prints with the row's flags
//! (peak and lower bound), on TFLite models (advised for TFLM), a hand-worked graph and an
//! ONNX model; and the rows hand-worked on `testdata/order/two-branches.json` and tfmicro's
//! hello_world.

mod common;

fn json(dir: &str, args: &[&str]) -> serde_json::Value {
    let (code, out, err) = common::run_in(dir, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).expect("JSON")
}

fn rows_match_the_cli(dir: &str, model: &str) -> serde_json::Value {
    let advice = json(dir, &["advise", model, "--format", "json"]);
    let mut rows = vec![advice["baseline"].clone()];
    rows.extend(advice["levers"].as_array().expect("levers").iter().cloned());
    assert!(rows.len() >= 3, "{model}: {advice}");
    for row in &rows {
        let flags: Vec<&str> = row["flags"]
            .as_array()
            .expect("flags")
            .iter()
            .map(|f| f.as_str().expect("flag"))
            .collect();
        let mut args = vec!["plan", model, "--format", "json"];
        args.extend_from_slice(&flags);
        let file = json(dir, &args);
        assert_eq!(
            file["plans"][0]["peak_bytes"], row["peak"],
            "{model} {}: {flags:?}",
            row["name"]
        );
        assert_eq!(
            file["problem"]["lower_bound_bytes"], row["lower_bound"],
            "{model} {}",
            row["name"]
        );
    }
    advice
}

#[test]
fn every_row_is_what_memplan_plan_gives_with_its_flags() {
    // a .tflite is advised for TFLM: its own planner as the baseline (TFLM's head for vww,
    // 161,472 B, measured with TFLM: docs/tflite-tflm.md), only levers TFLM can take
    let vww = rows_match_the_cli("../testdata/models/tflite/tinyengine", "vww.tflite");
    assert_eq!(vww["baseline"]["peak"], 161_472);
    assert_eq!(
        vww["baseline"]["flags"],
        serde_json::json!(["--strategy", "tflm-greedy"])
    );
    tflm_levers_only(&vww);
    rows_match_the_cli("../static/samples", "ppocr_mobile_v2_cls.stripped.onnx");
}

/// No row of a TFLite model's advice asks for what TFLM cannot do (alignment below its 16 B,
/// views, in-place ops, TinyEngine's pad folding); the skipped list says why.
fn tflm_levers_only(advice: &serde_json::Value) {
    for row in advice["levers"].as_array().expect("levers") {
        let flags = row["flags"].to_string();
        for no in ["--align", "--alias-views", "--in-place", "pad", "quantize"] {
            assert!(!flags.contains(no), "{}: {flags}", row["name"]);
        }
        assert!(
            ["op order", "fuse activation", "strategy", "all combined"]
                .contains(&row["name"].as_str().expect("name")),
            "{row}"
        );
    }
    let skipped = advice["skipped"].to_string();
    for why in [
        "fuse pad,quantize: TFLM's kernels do not pad inside their consumer",
        "views: TFLM plans every tensor in its own buffer",
        "in-place elementwise, in-place depthwise: TFLM's kernels write every output to its own buffer",
        "alignment 1: TFLM rounds every buffer to 16 B",
    ] {
        assert!(skipped.contains(why), "{skipped}");
    }
}

#[test]
fn a_tflite_model_s_strategy_lever_is_an_exported_plan() {
    // tfmicro's hello_world: six 16 B tensors in a chain (two live at each of steps 0..4), so
    // 32 B hold them; TFLM's greedy takes 48 B (its head, measured with TFLM). The strategy
    // row saves the 16 B and says it takes the plan written into the model
    let advice = rows_match_the_cli("../testdata/models/tflite/tfmicro", "hello_world.tflite");
    assert_eq!(advice["baseline"]["peak"], 48);
    assert_eq!(advice["baseline"]["lower_bound"], 32);
    assert_eq!(
        advice["baseline"]["requires"],
        "nothing: TFLM's own planner on the file as it is"
    );
    let rows = advice["levers"].as_array().expect("levers");
    let strategy = rows
        .iter()
        .find(|r| r["name"] == "strategy")
        .expect("a strategy row");
    assert_eq!(strategy["peak"], 32);
    assert_eq!(strategy["saving_bytes"], 16);
    assert!(
        strategy["requires"]
            .as_str()
            .expect("requires")
            .contains("OfflineMemoryAllocation metadata (memplan plan MODEL --strategy NAME --emit-tflite OUT.tflite"),
        "{strategy}"
    );
    tflm_levers_only(&advice);
    // -s still chooses the baseline
    let given = json(
        "../testdata/models/tflite/tfmicro",
        &[
            "advise",
            "hello_world.tflite",
            "-s",
            "greedy-size-best-fit",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        given["baseline"]["flags"],
        serde_json::json!(["--strategy", "greedy-size-best-fit"])
    );
}

#[test]
fn the_hand_worked_graph_gains_from_the_order_once_placement_is_exact() {
    // two-branches.json under GE's defaults (512 B alignment, ceil32 + 32 padding, zero-copy
    // graph I/O) needs 2,560 B; the combined row drops those settings and reorders the ops:
    // 111 B, the hand-worked optimum of the order (testdata/order/README.md)
    let advice = rows_match_the_cli("../testdata/order", "two-branches.json");
    assert_eq!(advice["baseline"]["peak"], 2560);
    let top = &advice["levers"][0];
    assert_eq!(top["name"], "all combined");
    assert_eq!(top["peak"], 111);
    let flags = top["flags"].to_string();
    assert!(flags.contains("\"--schedule\",\"memory\""), "{flags}");
}
