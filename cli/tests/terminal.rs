//! Names from a model file never reach the terminal raw: a control character in one (ESC
//! starting a CSI or OSC sequence, BEL) is written as its Rust escape (`\u{1b}`), in tables,
//! `inspect`, warnings and errors; JSON escapes it as JSON does; CSV piped to a program stays
//! exact. Inputs in `tests/adversarial/control-*` (and an ONNX model built here).

mod common;

use std::path::PathBuf;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_in("tests/adversarial", args)
}

/// No control character but newline in `text` (what a terminal would act on).
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect()
}

// A minimal protobuf writer for the ONNX model below (field numbers from onnx.proto3).
fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}
fn int_field(f: u64, v: u64) -> Vec<u8> {
    let mut o = Vec::new();
    varint(f << 3, &mut o);
    varint(v, &mut o);
    o
}
fn bytes_field(f: u64, b: &[u8]) -> Vec<u8> {
    let mut o = Vec::new();
    varint((f << 3) | 2, &mut o);
    varint(b.len() as u64, &mut o);
    o.extend_from_slice(b);
    o
}

/// Graph input `x\x1b[31m` float32 [`d\x1b[2J`, 3] -> Relu `r` -> output y.
fn control_model() -> PathBuf {
    let dim_param = bytes_field(1, &bytes_field(2, b"d\x1b[2J"));
    let dim_three = bytes_field(1, &int_field(1, 3));
    let shape = [dim_param, dim_three].concat();
    let tensor_type = [int_field(1, 1), bytes_field(2, &shape)].concat();
    let value_info = [
        bytes_field(1, b"x\x1b[31m"),
        bytes_field(2, &bytes_field(1, &tensor_type)),
    ]
    .concat();
    let node = [
        bytes_field(1, b"x\x1b[31m"),
        bytes_field(2, b"y"),
        bytes_field(3, b"r"),
        bytes_field(4, b"Relu"),
    ]
    .concat();
    let graph = [
        bytes_field(1, &node),
        bytes_field(2, b"g"),
        bytes_field(11, &value_info),
        bytes_field(12, &bytes_field(1, b"y")),
    ]
    .concat();
    let opset = [bytes_field(1, b""), int_field(2, 17)].concat();
    let model = [
        int_field(1, 8),
        bytes_field(2, b"test"),
        bytes_field(7, &graph),
        bytes_field(8, &opset),
    ]
    .concat();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("control-names.onnx");
    std::fs::write(&path, model).expect("write the model");
    path
}

#[test]
fn onnx_names_are_escaped_in_warnings_tables_and_inspect() {
    let model = control_model();
    let m = model.to_str().expect("utf-8 path");
    let (code, out, err) = run(&["plan", m, "-s", "greedy-size-best-fit"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        format!("warning: {m}: dim 'd\\u{{1b}}[2J' is not bound; using 1 (bind it with --dim d\\u{{1b}}[2J=VALUE)\n")
    );
    assert!(raw_controls(&out).is_empty(), "{out:?}");
    let (code, out, err) = run(&["inspect", m, "--tensors"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("input x\\u{1b}[31m: float32 [d\\u{1b}[2J, 3]\n"),
        "{out}"
    );
    assert!(out.contains("unbound symbols: d\\u{1b}[2J\n"), "{out}");
    assert!(raw_controls(&out).is_empty(), "{out:?}");
}

#[test]
fn json_names_are_escaped_in_errors() {
    // op "A\u001b]0;pwn\u0007" (an OSC sequence setting the window title) lists an output
    // "zz\u001b[2J" (clear screen) that the file does not define
    let (code, out, err) = run(&["plan", "control-undefined.json"]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err,
        "error: control-undefined.json: op 'A\\u{1b}]0;pwn\\u{7}': unknown tensor 'zz\\u{1b}[2J'\n"
    );
}

#[test]
fn plan_json_escapes_c1_and_csv_through_a_pipe_stays_exact() {
    // tensor "x\u001b[31m\u009b2J": serde_json escapes ESC itself, CSI (U+009B) here
    let (code, out, err) = run(&[
        "plan",
        "control-names.json",
        "-s",
        "greedy-size-best-fit",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r#""name": "x\u001b[31m\u009b2J""#), "{out}");
    assert!(raw_controls(&out).is_empty(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("plan JSON");
    let names = v.to_string();
    assert!(names.contains("x\\u001b[31m\u{9b}2J"), "{names}");
    // stdout is a pipe here: the CSV is data and keeps the name byte for byte
    let (code, out, err) = run(&[
        "plan",
        "control-names.csv",
        "-s",
        "greedy-size-best-fit",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "id,lower,upper,size,offset\na\u{1b}[2J,0,2,4,0\n");
}
