//! `--fuse` and `--in-place` on TinyEngine's own assets (`testdata/models/tflite/tinyengine`,
//! MIT): the arenas TinyEngine's scheduler reaches (issue 26, measured by running it): vww
//! 96,000 B with PAD and the input QUANTIZE folded, 89,600 B with in-place depthwise too;
//! detection 245,760 / 245,760; mcunetv2_large 1,505,280 / 1,404,928. Without either, TFLM's
//! greedy figures: 161,472 / 337,024 / 2,451,840 B.

mod common;

fn peak(model: &str, extra: &[&str]) -> (u64, u64) {
    let mut args = vec![
        "plan",
        model,
        "--strategy",
        "greedy-size-best-fit",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = common::run_in("../testdata/models/tflite/tinyengine", &args);
    assert_eq!(code, 0, "{model}: {err}");
    let file: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    (
        file["problem"]["lower_bound_bytes"]
            .as_u64()
            .expect("bound"),
        file["plans"][0]["peak_bytes"].as_u64().expect("peak"),
    )
}

#[test]
fn tinyengines_figures_hold_with_the_flags_named() {
    let fuse = ["--fuse", "pad,quantize"];
    let both = ["--fuse", "pad,quantize", "--in-place", "depthwise"];
    for (model, tflm, fused, in_place) in [
        ("vww.tflite", 161_472, 96_000, 89_600),
        ("detection.tflite", 337_024, 245_760, 245_760),
        ("mcunetv2_large.tflite", 2_451_840, 1_505_280, 1_404_928),
    ] {
        assert_eq!(peak(model, &[]), (tflm, tflm), "{model}");
        assert_eq!(peak(model, &fuse), (fused, fused), "{model} --fuse");
        assert_eq!(
            peak(model, &both),
            (in_place, in_place),
            "{model} --in-place"
        );
    }
}

#[test]
fn the_plan_file_names_what_was_fused_and_written_in_place() {
    let (code, out, err) = common::run_in(
        "../testdata/models/tflite/tinyengine",
        &[
            "plan",
            "vww.tflite",
            "-s",
            "greedy-size-best-fit",
            "--fuse",
            "pad,quantize",
            "--in-place",
            "depthwise",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let file: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let r = &file["problem"]["rewrites"];
    let fused: Vec<&str> = r["fused"]
        .as_array()
        .expect("fused")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(fused[0].contains("QUANTIZE"), "{fused:?}");
    assert!(fused.iter().skip(1).all(|n| n.contains("PAD")), "{fused:?}");
    assert!(!r["in_place"].as_array().expect("in place").is_empty());
    assert_eq!(r["fuse"], "pad,quantize");
    assert_eq!(r["in_place_ops"], "depthwise");
    // validate --model loads vww again with the plan's own rewrites
    let dir = std::env::temp_dir().join(format!("memplan-rewrites-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    std::fs::write(&plan, &out).unwrap();
    let plan = plan.display().to_string();
    let (code, _, err) = common::run_in(
        "../testdata/models/tflite/tinyengine",
        &["validate", &plan, "--model", "vww.tflite"],
    );
    assert_eq!(code, 0, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
