//! TFLite models under TFLM's planners: `tflm-greedy` gives TFLM's head byte for byte (the
//! figures measured with TFLM itself, PyPI's tflite-micro wheel, `scripts/tflm-oracle`), the
//! exact search never exceeds it, and `--emit-tflite` / `--emit-header` write a plan TFLM
//! follows.

mod common;

use common::run_in;

const MODELS: &str = "../testdata/models/tflite";

fn plan_json(args: &[&str]) -> serde_json::Value {
    let (code, stdout, stderr) = run_in(MODELS, args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn peak(model: &str, strategy: &str) -> u64 {
    let v = plan_json(&["plan", model, "-s", strategy, "--format", "json"]);
    v["plans"][0]["peak_bytes"].as_u64().expect("peak_bytes")
}

/// TFLM's head, printed by `print_allocations()` of the wheel's recording allocator. The first
/// four are the reference table; the last four hold the reference kernels' scratch
/// buffers (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM), which memplan sizes from TFLM's kernel table.
const TFLM_HEADS: &[(&str, u64)] = &[
    ("tflite-micro/hello_world_int8.tflite", 32),
    ("tflite-micro/micro_speech_quantized.tflite", 5_968),
    ("tflite-micro/person_detect.tflite", 55_296),
    (
        "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite",
        2_451_840,
    ),
    ("microflow/sine.tflite", 32),
    ("pypi-tflite-micro/sine_float.tflite", 128),
    ("tfmicro/hello_world.tflite", 48),
    ("tfmicro/magic_wand.tflite", 13_824),
    ("tflite-micro/keyword_scrambled.tflite", 672),
    ("tflite-micro/trained_lstm.tflite", 5_696),
    ("tflite-micro/trained_lstm_int8.tflite", 1_536),
    ("tflite-micro/dtln_noise_suppression.tflite", 1_424),
];

#[test]
fn tflm_greedy_is_tflms_head_and_optimal_never_above() {
    for &(model, head) in TFLM_HEADS {
        let v = plan_json(&[
            "plan",
            model,
            "-s",
            "tflm-greedy",
            "-s",
            "optimal",
            "--format",
            "json",
        ]);
        let greedy = v["plans"][0]["peak_bytes"].as_u64().expect("peak");
        let optimal = v["plans"][1]["peak_bytes"].as_u64().expect("peak");
        let bound = v["problem"]["lower_bound_bytes"].as_u64().expect("bound");
        assert_eq!(greedy, head, "{model}: tflm-greedy against TFLM's head");
        assert!(optimal <= greedy, "{model}: optimal {optimal} > {greedy}");
        assert!(
            bound <= optimal,
            "{model}: bound {bound} > optimal {optimal}"
        );
    }
    // the table: the max-live bound (TFLM's 16 B sizes) equals the head on these four
    for &(model, head) in &TFLM_HEADS[..4] {
        let v = plan_json(&["plan", model, "-s", "tflm-greedy", "--format", "json"]);
        assert_eq!(
            v["problem"]["lower_bound_bytes"].as_u64(),
            Some(head),
            "{model}"
        );
    }
}

#[test]
fn keyword_scrambled_plans_the_scratch_and_exports_at_tflms_head() {
    // TFLM's head is 672 B (memory_arena_threshold_test.cc): 288 B of tensors and the SVDF
    // kernels' scratch, which the file does not hold and memplan sizes from the kernel table
    let model = "tflite-micro/keyword_scrambled.tflite";
    let (code, _, stderr) = run_in(MODELS, &["plan", model, "-s", "tflm-greedy"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("scratch buffers are not in the file"),
        "{stderr}"
    );
    assert_eq!(peak(model, "tflm-greedy"), 672);
    // an exported greedy plan runs at its own peak: TFLM's online placement of the scratch
    // around the offsets is the plan's own
    let out = tmp("keyword.tflite");
    let json = tmp("keyword.json");
    let (code, _, stderr) = run_in(
        MODELS,
        &[
            "plan",
            model,
            "-s",
            "tflm-greedy",
            "--emit-tflite",
            out.to_str().unwrap(),
            "--format",
            "json",
            "-o",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("above the plan's"), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["plans"][0]["peak_bytes"].as_u64(), Some(672));
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&json);
}

/// A file in the temp dir, unique to this run and `name` (tests run side by side).
fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("memplan-tflm-{}-{name}", std::process::id()))
}

#[test]
fn emitted_plan_is_followed_when_planned_again() {
    // optimal's plan written into person_detect; planning that file again, every tensor is
    // pinned where the plan put it, so TFLM's greedy (offline offsets first) reaches the
    // same peak, which is the exported plan's
    let model = "tflite-micro/person_detect.tflite";
    let out = tmp("person_detect_optimal.tflite");
    let header = tmp("person_detect_optimal.h");
    let json = tmp("person_detect_optimal.json");
    let (o, h, j) = (
        out.to_str().unwrap(),
        header.to_str().unwrap(),
        json.to_str().unwrap(),
    );
    let (code, _, stderr) = run_in(
        MODELS,
        &[
            "plan",
            model,
            "-s",
            "optimal",
            "--emit-tflite",
            o,
            "--emit-header",
            h,
            "--format",
            "json",
            "-o",
            j,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let exported = v["plans"][0]["peak_bytes"].as_u64().unwrap();
    assert!(exported <= 55_296);
    assert_eq!(peak(o, "tflm-greedy"), exported);
    let again = plan_json(&["plan", o, "-s", "tflm-greedy", "--format", "json"]);
    let pinned = again["plans"][0]["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["fixed_offset"].is_u64())
        .count() as u64;
    assert_eq!(
        pinned,
        again["problem"]["buffers"].as_u64().unwrap(),
        "every planned tensor is pinned by the exported plan"
    );
    let text = std::fs::read_to_string(&header).unwrap();
    assert!(
        text.contains(&format!("#define MEMPLAN_ARENA_HEAD_BYTES {exported}u")),
        "{text}"
    );
    assert!(text.contains("struct memplan_buffer_plan_t"));
    for f in [&out, &header, &json] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn emit_refusals_are_clear() {
    let model = "tflite-micro/hello_world_int8.tflite";
    let out = tmp("refused.tflite");
    let o = out.to_str().unwrap();
    // one plan only
    let (code, _, stderr) = run_in(
        MODELS,
        &[
            "plan",
            model,
            "-s",
            "tflm-greedy",
            "-s",
            "optimal",
            "--emit-tflite",
            o,
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("one --strategy"), "{stderr}");
    let (code, _, stderr) = run_in(MODELS, &["plan", model, "--emit-tflite", o]);
    assert_eq!(code, 2, "{stderr}");
    // sizes that are not TFLM's: GE padding
    let (code, _, stderr) = run_in(
        MODELS,
        &[
            "plan",
            model,
            "-s",
            "tflm-greedy",
            "--padding",
            "ge",
            "--emit-tflite",
            o,
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("TFLM allocates"), "{stderr}");
    // sizes rounded to 512 B: TFLM's head from the offsets would not be the plan's peak
    let (code, _, stderr) = run_in(
        MODELS,
        &[
            "plan",
            model,
            "-s",
            "ge-block",
            "--align",
            "512",
            "--emit-tflite",
            o,
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot export"), "{stderr}");
    assert!(!out.exists(), "a refusal writes nothing");
    // not a TFLite model
    let (code, _, stderr) = run_in(
        "tests/adversarial",
        &[
            "plan",
            "align-lcm.csv",
            "-s",
            "tflm-greedy",
            "--emit-tflite",
            o,
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("TFLite model"), "{stderr}");
    assert!(!out.exists(), "a refusal writes nothing");
}

#[test]
fn the_table_and_the_plan_file_give_k_tensor_arena_size() {
    // keyword_scrambled: TFLM's head 672 B (memory_arena_threshold_test.cc); 7 variable
    // tensors of 10,240 B in its persistent tail (16 B each rounded, from TFLite's own reader:
    // core/tests/tflite.rs): kTensorArenaSize at least 672 + 10,240 = 10,912 B
    let model = "tflite-micro/keyword_scrambled.tflite";
    let (code, stdout, stderr) = run_in(MODELS, &["plan", model, "-s", "tflm-greedy"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\n  kTensorArenaSize: at least the head, 672 B (this plan's peak), plus TFLM's persistent tail: 10,240 B of variable tensors (10,912 B in all) and TFLM's own structures.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nPersistent tail: 10,240 B of 7 variable tensors (16 B each rounded)"),
        "{stdout}"
    );
    let v = plan_json(&["plan", model, "-s", "tflm-greedy", "--format", "json"]);
    assert_eq!(
        v["plans"][0]["tflm_arena"],
        serde_json::json!({
            "head_bytes": 672,
            "persistent_tensors": 7,
            "persistent_tensor_bytes": 10240,
            "at_least_bytes": 10912
        })
    );
    // person_detect: no variable tensors, the arena is the head, 55,296 B
    let v = plan_json(&[
        "plan",
        "tflite-micro/person_detect.tflite",
        "-s",
        "tflm-greedy",
        "--format",
        "json",
    ]);
    assert_eq!(v["plans"][0]["tflm_arena"]["at_least_bytes"], 55_296);
    assert_eq!(v["plans"][0]["tflm_arena"]["persistent_tensors"], 0);
    // not a TFLite model: no such field
    let (code, stdout, stderr) = run_in(
        "tests/adversarial",
        &[
            "plan",
            "align-lcm.csv",
            "-s",
            "greedy-size-best-fit",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("tflm_arena"), "{stdout}");
    assert!(!stdout.contains("kTensorArenaSize"), "{stdout}");
}

#[test]
fn a_head_past_int32_is_warned_and_the_export_names_its_cause() {
    // hello_world_int8 with its second dense output's shape [1, 16] made [2^21, 2^14]: an int8
    // tensor of 2^35 = 34,359,738,368 B; the head is it plus a 16 B tensor live beside it
    let mut b = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/models/tflite/tflite-micro/hello_world_int8.tflite"),
    )
    .unwrap();
    assert_eq!(&b[1668..1680], &[2, 0, 0, 0, 1, 0, 0, 0, 16, 0, 0, 0]);
    b[1672..1676].copy_from_slice(&(1u32 << 21).to_le_bytes());
    b[1676..1680].copy_from_slice(&(1u32 << 14).to_le_bytes());
    let huge = tmp("huge.tflite");
    std::fs::write(&huge, &b).unwrap();
    let out = tmp("huge-out.tflite");
    let (h, o) = (huge.to_str().unwrap(), out.to_str().unwrap());
    let cause = "sequential/dense_1/MatMul;sequential/dense_1/Relu;sequential/dense_1/BiasAdd";
    let (code, _, stderr) = run_in(MODELS, &["plan", h, "-s", "tflm-greedy"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("warning: {h}: every plan: the head is 34,359,738,384 B, past 2,147,483,647 B: TFLM cannot run it")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "the largest tensor is '{cause}', 34,359,738,368 B"
        )),
        "{stderr}"
    );
    // the 16 B tensor above it passes the limit too, but only because of it
    let (code, _, stderr) = run_in(
        MODELS,
        &["plan", h, "-s", "tflm-greedy", "--emit-tflite", o],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("error: {h}: strategy tflm-greedy: cannot export '{cause}' to TFLM: bytes 0..34359738368 (34359738368 B) pass 2147483647 B, the int32 limit")),
        "{stderr}"
    );
    assert!(!out.exists(), "a refusal writes nothing");
    let _ = std::fs::remove_file(&huge);
}
