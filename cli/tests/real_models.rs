//! The CLI on real models of `testdata/models` against the reference figures of its
//! `SOURCES.md` (live-set lower bound at batch 1, raw sizes, file order).

use std::path::PathBuf;
use std::process::Command;

/// A model of the repository's acceptance set (`testdata/models`). Missing data fails.
fn model(name: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/models/onnx-stripped")
        .join(name);
    assert!(p.exists(), "{} is missing from the repository", p.display());
    p
}

fn plan_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(args)
        .output()
        .expect("run memplan");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("size unknown"), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("plan JSON")
}

#[test]
fn made_up_dims_bound_by_name_reach_the_derived_dims() {
    // ppocr_mobile_v2_cls's input is [-1, 3, ?, ?]: named `x axis 0`, `x axis 2`, `x axis 3`
    // by the importer (after where they come from), never bound to 1.
    // Reference at 1x3x48x192: lower bound 485,376 B, no reuse 13,388,916 B.
    let m = model("ppocr_mobile_v2_cls.stripped.onnx");
    let m = m.to_string_lossy();
    let by_dims = plan_json(&[
        "plan",
        &m,
        "--dim",
        "x axis 0=1",
        "--dim",
        "x axis 2=48",
        "--dim",
        "x axis 3=192",
        "-s",
        "no-reuse",
        "--format",
        "json",
    ]);
    let by_input = plan_json(&[
        "plan",
        &m,
        "--input",
        "x=1x3x48x192",
        "-s",
        "no-reuse",
        "--format",
        "json",
    ]);
    for v in [&by_dims, &by_input] {
        assert_eq!(v["problem"]["lower_bound_bytes"], 485_376);
        assert_eq!(v["problem"]["no_reuse_bytes"], 13_388_916);
    }
}

#[test]
fn gears_of_a_model_whose_shapes_need_the_batch_bound() {
    // magika slices a shape vector over its symbolic batch: each gear is imported with the
    // batch bound. Reference at batch 1: lower bound 3,121,168 B. Nearly every activation
    // scales with the batch (small shape tensors do not), so gear 8's bound is just under 8x;
    // before the re-import, most tensors were unknown and planned as 0 bytes.
    let m = model("magika_standard_v3_3.stripped.onnx");
    let v = plan_json(&[
        "plan",
        &m.to_string_lossy(),
        "--batch",
        "1,8",
        "-s",
        "greedy-size-best-fit",
        "--format",
        "json",
    ]);
    let gears = v["plans"][0]["gears"].as_array().expect("gears");
    assert_eq!(gears[0]["batch"], 1);
    assert_eq!(gears[0]["lower_bound_bytes"], 3_121_168);
    assert_eq!(gears[1]["batch"], 8);
    let lb8 = gears[1]["lower_bound_bytes"].as_u64().expect("bound");
    assert!(lb8 <= 8 * 3_121_168 && lb8 > 8 * 3_121_168 - 1024, "{lb8}");
}

#[test]
fn dims_left_unbound_plan_as_if_bound_to_one() {
    // magika's batch dims are unnamed (unk__214, unk__215); left unbound they are bound to 1,
    // and the figures must be the batch-1 reference (lower bound 3,121,168 B, no reuse
    // 26,700,204 B), as with `--dim unk__214=1`, in `plan` and in `simulate`.
    let m = model("magika_standard_v3_3.stripped.onnx");
    let m = m.to_string_lossy();
    let v = plan_json(&["plan", &m, "-s", "no-reuse", "--format", "json"]);
    assert_eq!(v["problem"]["lower_bound_bytes"], 3_121_168);
    assert_eq!(v["problem"]["no_reuse_bytes"], 26_700_204);
    let out = Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(["simulate", &m, "--format", "json"])
        .output()
        .expect("run memplan");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("size unknown"), "{stderr}");
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).expect("simulate JSON");
    assert_eq!(s["lower_bound_bytes"], 3_121_168, "{s}");
}
