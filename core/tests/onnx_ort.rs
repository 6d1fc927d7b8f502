//! Real models as onnxruntime's tools leave them (its graph optimizer at level EXTENDED, its
//! dynamic quantizer), against onnxruntime's own shapes: every top-level tensor onnxruntime
//! computed must have the same dtype and dims here, and no op may be unsupported.
//! The variants and their oracles are made by `scripts/onnx-ort-variants.py` (from the real
//! models of `shared/models`) into `tests/data/onnx_ort/`.
#![cfg(feature = "onnx")]
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use memplan_core::import::onnx::{parse, OnnxOptions};
use memplan_core::Dim;
use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/onnx_ort")
}

#[test]
fn optimized_and_quantized_models_match_onnxruntime() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/data/onnx_ort")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".shapes.json"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "only {} variants", cases.len());
    let mut report = Vec::new();
    let mut bad = Vec::new();
    for c in &cases {
        let base = c
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".shapes.json", "");
        let oracle: Value = serde_json::from_str(&std::fs::read_to_string(c).unwrap()).unwrap();
        let mut inputs = BTreeMap::new();
        for (k, v) in oracle["inputs"].as_object().unwrap() {
            let dims: Option<Vec<u64>> = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(Value::as_u64)
                .collect();
            if let Some(d) = dims {
                inputs.insert(k.clone(), d);
            }
        }
        let bytes = std::fs::read(dir().join(format!("{base}.stripped.onnx"))).unwrap();
        let m = parse(
            &bytes,
            &OnnxOptions {
                inputs,
                ..OnnxOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{base}: {e}"));
        let unsupported = m
            .warnings
            .iter()
            .filter(|w| w.contains("not supported"))
            .count();
        let (mut ok, mut total) = (0, 0);
        for (name, want) in oracle["tensors"].as_object().unwrap() {
            let Some(t) = m.graph.tensors.iter().find(|t| &t.name == name) else {
                continue; // inside a subgraph
            };
            total += 1;
            let code = want[0].as_i64().unwrap();
            let dims: Vec<Dim> = want[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| Dim::Known(d.as_u64().unwrap()))
                .collect();
            let got_dt = t.dtype.map(|d| i64::from(d.onnx_code()));
            if got_dt == Some(code) && t.shape.as_ref() == Some(&dims) {
                ok += 1;
            } else if bad.len() < 40 {
                bad.push(format!(
                    "{base}: '{name}': {got_dt:?} {:?}, onnxruntime {code} {dims:?}",
                    t.shape
                ));
            }
        }
        report.push(format!(
            "{base}: {ok} of {total} tensors, {unsupported} unsupported-op warnings"
        ));
        if ok != total || unsupported > 0 {
            bad.push(format!(
                "{base}: {ok} of {total}, {unsupported} unsupported: {:?}",
                m.warnings.iter().take(3).collect::<Vec<_>>()
            ));
        }
    }
    println!("{}", report.join("\n"));
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}
