//! The ONNX importer against the acceptance set in `testdata/models` (in the repo): every
//! top-level tensor's dtype and dims against onnxruntime's (the `shapes/*.shapes.json`
//! oracle), and the lowered problem's figures against the reference `memory` figures.
#![cfg(feature = "onnx")]

use std::collections::BTreeMap;
use std::path::PathBuf;

use memplan_core::import::onnx::{parse, OnnxOptions};
use memplan_core::{lower_bound, Bindings, DType};
use serde_json::Value;

/// The acceptance set, in the repository (`testdata/models`, see its `SOURCES.md`). Missing
/// data fails the test: it never passes without checking.
fn models_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/models");
    assert!(
        d.join("shapes").is_dir() && d.join("onnx-stripped").is_dir(),
        "{} is missing: the ONNX acceptance data lives in the repository",
        d.display()
    );
    d
}

/// ONNX `TensorProto.DataType` names as the oracle writes them.
fn oracle_dtype(name: &str) -> Option<DType> {
    Some(match name {
        "FLOAT" => DType::Float32,
        "DOUBLE" => DType::Float64,
        "FLOAT16" => DType::Float16,
        "BFLOAT16" => DType::Bfloat16,
        "INT64" => DType::Int64,
        "INT32" => DType::Int32,
        "INT16" => DType::Int16,
        "INT8" => DType::Int8,
        "UINT8" => DType::Uint8,
        "UINT16" => DType::Uint16,
        "UINT32" => DType::Uint32,
        "UINT64" => DType::Uint64,
        "BOOL" => DType::Bool,
        "STRING" => DType::String,
        _ => return None,
    })
}

/// (onnx file, shapes json) pairs: the stripped copy of each model (weights' sizes kept, bytes
/// dropped: the same graph as the full file).
fn cases(dir: &std::path::Path) -> Vec<(PathBuf, PathBuf)> {
    let mut v = Vec::new();
    let mut shapes: Vec<PathBuf> = std::fs::read_dir(dir.join("shapes"))
        .expect("shapes dir")
        .map(|e| e.expect("entry").path())
        .collect();
    shapes.sort();
    for s in shapes {
        let stem = s
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".shapes.json"))
            .expect("name")
            .to_string();
        let f = dir
            .join("onnx-stripped")
            .join(format!("{stem}.stripped.onnx"));
        assert!(f.exists(), "{} has no model {}", s.display(), f.display());
        v.push((f, s.clone()));
    }
    assert_eq!(v.len(), 11, "the acceptance set has 11 models");
    v
}

fn options(oracle: &Value) -> OnnxOptions {
    let mut inputs = BTreeMap::new();
    for (k, v) in oracle["concrete_inputs"]
        .as_object()
        .expect("concrete_inputs")
    {
        let dims: Vec<u64> = v
            .as_array()
            .expect("dims")
            .iter()
            .map(|d| d.as_u64().expect("dim"))
            .collect();
        inputs.insert(k.clone(), dims);
    }
    OnnxOptions {
        dims: Bindings::new(),
        inputs,
    }
}

#[test]
fn every_tensor_matches_onnxruntime() {
    let dir = models_dir();
    let mut mismatches = Vec::new();
    let mut checked = 0usize;
    let cases = cases(&dir);
    assert!(
        cases.len() == 11,
        "expected the whole acceptance set, got {}",
        cases.len()
    );
    for (file, shapes) in cases {
        let oracle: Value =
            serde_json::from_slice(&std::fs::read(&shapes).expect("read json")).expect("json");
        let bytes = std::fs::read(&file).expect("read onnx");
        let fname = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let m = match parse(&bytes, &options(&oracle)) {
            Ok(m) => m,
            Err(e) => {
                mismatches.push(format!("{fname}: parse failed: {e}"));
                continue;
            }
        };
        let g = &m.graph;
        for (name, want) in oracle["tensor_shapes"].as_object().expect("tensor_shapes") {
            checked += 1;
            let want_dt = oracle_dtype(want["dtype"].as_str().expect("dtype"));
            let want_shape: Vec<u64> = want["shape"]
                .as_array()
                .expect("shape")
                .iter()
                .map(|d| d.as_u64().expect("dim"))
                .collect();
            let Some(t) = g.tensor_id(name).map(|i| &g.tensors[i]) else {
                mismatches.push(format!("{fname}: tensor '{name}' missing"));
                continue;
            };
            if t.constant {
                mismatches.push(format!("{fname}: tensor '{name}' marked constant"));
            }
            let got = t.bound_shape(&Bindings::new());
            if t.dtype != want_dt || got.as_ref() != Some(&want_shape) {
                mismatches.push(format!(
                    "{fname}: '{name}': got {:?} {:?}, onnxruntime {:?} {:?}",
                    t.dtype, t.shape, want_dt, want_shape
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} tensors differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn lower_bound_matches_reference_figures() {
    let dir = models_dir();
    let mut bad = Vec::new();
    for (file, shapes) in cases(&dir) {
        let oracle: Value =
            serde_json::from_slice(&std::fs::read(&shapes).expect("read json")).expect("json");
        let mem = &oracle["memory"];
        let bytes = std::fs::read(&file).expect("read onnx");
        let fname = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let m = match parse(&bytes, &options(&oracle)) {
            Ok(m) => m,
            Err(e) => {
                bad.push(format!("{fname}: parse failed: {e}"));
                continue;
            }
        };
        let lowered = match m.graph.lower(&Bindings::new()) {
            Ok(l) => l,
            Err(e) => {
                bad.push(format!("{fname}: lower failed: {e}"));
                continue;
            }
        };
        let b = lower_bound(&lowered.problem).expect("bound");
        let got = (
            lowered.problem.steps,
            b.lower_bound,
            b.no_reuse,
            lowered.problem.weight_bytes,
            m.weights_bytes,
        );
        let w = mem["weight_bytes"].as_u64().expect("weight_bytes");
        let want = (
            mem["steps"].as_u64().expect("steps"),
            mem["peak_bytes"].as_u64().expect("peak"),
            mem["naive_bytes"].as_u64().expect("naive"),
            w,
            w,
        );
        if got != want {
            bad.push(format!(
                "{fname}: (steps, lower bound, no-reuse, weights, model weights) got {got:?}, reference {want:?}"
            ));
        }
        if !lowered.warnings.is_empty() {
            bad.push(format!("{fname}: lowering warnings {:?}", lowered.warnings));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
