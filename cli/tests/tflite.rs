//! `memplan plan` and `memplan inspect` on `.tflite` models: TFLM's options by default, the
//! bounds TFLM's (figures measured with TFLM, testdata/models/SOURCES.md), a plan file that
//! validates, bad files refused with the file named.

use std::path::PathBuf;
use std::process::{Command, Output};

fn model(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/models/tflite")
        .join(rel);
    assert!(p.exists(), "missing test model {}", p.display());
    p.to_string_lossy().into_owned()
}

fn memplan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(args)
        .output()
        .expect("run memplan")
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

#[test]
fn a_plain_plan_uses_tflm_s_rules() {
    let m = model("tflite-micro/person_detect.tflite");
    let out = memplan(&["plan", &m, "-s", "greedy-size-best-fit"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("lower bound 54.00 KiB (55296 B)"), "{s}");
    assert!(s.contains("alignment 16 B, padding none"), "{s}");
    // the JSON plan file reports the same bound and validates
    let out = memplan(&["plan", &m, "-s", "greedy-size-best-fit", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["problem"]["lower_bound_bytes"], 55_296);
    let dir = std::env::temp_dir().join(format!("memplan-tflite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let plan = dir.join("p.plan.json");
    std::fs::write(&plan, &out.stdout).expect("write plan");
    let ok = memplan(&["validate", &plan.to_string_lossy()]);
    assert!(ok.status.success(), "{}", text(&ok.stdout));
}

#[test]
fn inspect_reads_a_tflite_model() {
    let m = model("tflite-micro/person_detect_vela.tflite");
    let out = memplan(&["inspect", &m]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.starts_with("TFLite model"), "{s}");
    assert!(
        s.contains("offline plan (OfflineMemoryAllocation): version 0, 6 offsets, 4 fixed"),
        "{s}"
    );
}

#[test]
fn a_bad_tflite_file_is_refused_with_its_name() {
    let dir = std::env::temp_dir().join(format!("memplan-tflite-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let full = std::fs::read(model("tflite-micro/hello_world_int8.tflite")).expect("read");
    let cut = dir.join("cut.tflite");
    std::fs::write(&cut, &full[..full.len() / 3]).expect("write");
    let out = memplan(&["plan", &cut.to_string_lossy()]);
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(e.contains("cut.tflite"), "{e}");
    assert!(e.contains("outside the file"), "{e}");
}

#[test]
fn plan_help_names_tflite_among_the_inputs() {
    // the first line of `memplan plan --help` (and the command's line in `memplan --help`)
    let out = memplan(&["plan", "--help"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert_eq!(
        s.lines().next(),
        Some("Plan an input (ONNX, TFLite, memplan JSON graph, MiniMalloc CSV) with one or more strategies"),
        "{s}"
    );
    let out = memplan(&["--help"]);
    let s = text(&out.stdout);
    assert!(
        s.contains("plan        Plan an input (ONNX, TFLite,"),
        "{s}"
    );
    assert!(
        s.contains("memplan plan model.tflite -s tflm-greedy"),
        "{s}"
    );
}

#[test]
fn an_onnx_model_named_tflite_is_told_to_be_renamed() {
    // a PaddlePaddle ONNX export: ir_version 7, producer_name "PaddlePaddle" (bytes 4..8 "Padd")
    let dir = std::env::temp_dir().join(format!("memplan-tflite-onnx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let onnx = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../static/samples/ppocr_mobile_v2_cls.stripped.onnx");
    let renamed = dir.join("cls.tflite");
    std::fs::copy(&onnx, &renamed).expect("copy");
    let path = renamed.to_string_lossy().into_owned();
    for cmd in ["plan", "inspect", "advise"] {
        let out = memplan(&[cmd, &path]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert!(out.stdout.is_empty(), "{cmd}");
        assert_eq!(
            text(&out.stderr),
            format!("error: {path}: this is not a TFLite flatbuffer (file identifier \"Padd\" at bytes 4..8, expected \"TFL3\"); it looks like an ONNX model: rename it to .onnx\n"),
            "{cmd}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
