//! onnx's own backend node tests as a test of the importer: for every case whose inputs and
//! outputs are tensors, the inferred dtype and shape of each output equal those of the
//! expected output in the case's `test_data_set_0` (the values onnx's reference ran).
//!
//! The cases (onnx 1.19.1, `onnx/backend/test/data/node`) were converted once by
//! `scripts/onnx-node-tests.py` into `tests/data/onnx_node/` (see the script for the format).
//! `tests/data/onnx_node/known_failures.txt` lists the cases the importer does not pass yet;
//! the test fails when any other case fails and when a listed case passes (remove it then), so
//! the figure only moves forward. Run with `--nocapture` for the figure and the reasons.
//!
//! `tests/data/onnx_ops/` (by `scripts/onnx-op-cases.py`, same format) holds the ops the node
//! tests do not cover (com.microsoft contrib ops, com.microsoft.nchwc, ai.onnx.ml, opset corner cases), with
//! expected shapes computed by hand from the op schemas.
#![cfg(feature = "onnx")]
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use memplan_core::import::onnx::{parse, OnnxOptions};
use memplan_core::Dim;
use serde_json::Value;

fn data_dir(which: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(which)
}

/// `(case, model bytes)` from `models.bin`.
fn models(which: &str) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(data_dir(which).join("models.bin")).expect("models.bin");
    let mut out = Vec::new();
    let mut p = 0usize;
    let take = |n: usize, p: &mut usize| {
        let s = bytes[*p..*p + n].to_vec();
        *p += n;
        s
    };
    while p < bytes.len() {
        let n = u32::from_le_bytes(take(4, &mut p).try_into().unwrap()) as usize;
        let name = String::from_utf8(take(n, &mut p)).unwrap();
        let m = u32::from_le_bytes(take(4, &mut p).try_into().unwrap()) as usize;
        out.push((name, take(m, &mut p)));
    }
    out
}

/// Why a case fails, or `None` when every output matches.
fn check(model: &[u8], exp: &Value) -> Option<String> {
    let m = match parse(model, &OnnxOptions::default()) {
        Ok(m) => m,
        Err(e) => return Some(format!("import error: {e}")),
    };
    for o in exp["outputs"].as_array().unwrap() {
        let name = o[0].as_str().unwrap();
        let code = o[1].as_i64().unwrap();
        let dims: Vec<u64> = o[2]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        let Some(t) = m.graph.tensors.iter().find(|t| t.name == name) else {
            return Some(format!("output '{name}' missing"));
        };
        let got_dt = t.dtype.map(|d| i64::from(d.onnx_code()));
        if got_dt != Some(code) {
            return Some(format!(
                "output '{name}': dtype {got_dt:?}, expected {code}"
            ));
        }
        let want: Vec<Dim> = dims.iter().map(|&d| Dim::Known(d)).collect();
        if t.shape.as_ref() != Some(&want) {
            let why = m
                .warnings
                .iter()
                .find(|w| w.contains(&format!("'{name}'")))
                .cloned()
                .unwrap_or_default();
            return Some(format!(
                "output '{name}': shape {:?}, expected {dims:?} {why}",
                t.shape
            ));
        }
    }
    None
}

/// Checks every case of `which`; `min_cases` guards against a truncated file.
fn run_cases(which: &str, min_cases: usize) {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(data_dir(which).join("expected.json")).expect("expected.json"),
    )
    .unwrap();
    let known: BTreeSet<String> =
        std::fs::read_to_string(data_dir(which).join("known_failures.txt"))
            .expect("known_failures.txt")
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
    let cases = models(which);
    assert!(
        cases.len() >= min_cases,
        "only {} cases in {which}/models.bin",
        cases.len()
    );
    let (mut pass, mut total, mut sequence) = (0, 0, 0);
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    for (name, model) in &cases {
        let exp = &expected[name.as_str()];
        assert!(exp.is_object(), "{name}: not in expected.json");
        if exp["sequence"].as_bool().unwrap() {
            sequence += 1;
            continue;
        }
        total += 1;
        match check(model, exp) {
            None => pass += 1,
            Some(why) => {
                failed.insert(name.clone(), why);
            }
        }
    }
    println!(
        "{which}: {pass} of {total} tensor cases pass ({sequence} sequence cases not checked)"
    );
    for (k, why) in &failed {
        println!("FAIL {k}: {why}");
    }
    let new: Vec<&String> = failed.keys().filter(|k| !known.contains(*k)).collect();
    let fixed: Vec<&String> = known.iter().filter(|k| !failed.contains_key(*k)).collect();
    assert!(
        new.is_empty(),
        "cases failing that are not in known_failures.txt: {new:?}"
    );
    assert!(
        fixed.is_empty(),
        "cases in known_failures.txt that pass now (remove them): {fixed:?}"
    );
}

#[test]
fn node_tests_infer_the_expected_shapes() {
    run_cases("onnx_node", 1600);
}

#[test]
fn contrib_ml_and_corner_cases_infer_the_expected_shapes() {
    run_cases("onnx_ops", 32);
}
