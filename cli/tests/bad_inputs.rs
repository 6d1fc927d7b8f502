//! Every malformed input exits non-zero with one line naming the file, the place and the problem.

mod common;

use std::path::Path;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_in("tests/bad", args)
}

#[test]
fn bad_inputs_fail_with_one_clear_line() {
    let cases: &[(&str, &str)] = &[
        ("short-row.csv", "error: short-row.csv: line 3: expected 4 fields, found 3"),
        ("negative-size.csv", "error: negative-size.csv: line 2: size '-4' is negative"),
        ("fractional-size.csv", "error: fractional-size.csv: line 2: size '4.5' is not an integer"),
        (
            "empty-lifetime.csv",
            "error: empty-lifetime.csv: line 3: buffer 'b': lower 5 >= upper 5 (lifetimes are half-open [lower, upper))",
        ),
        ("duplicate-id.csv", "error: duplicate-id.csv: line 4: duplicate id 'a' (first on line 2)"),
        (
            "size-beyond-u64.csv",
            "error: size-beyond-u64.csv: line 2: size '18446744073709551616' exceeds u64",
        ),
        (
            "no-id-column.csv",
            "error: no-id-column.csv: line 1: header 'lower,upper,size' must name the columns id, lower, upper, size",
        ),
        ("unknown-tensor.json", "error: unknown-tensor.json: op 'add1': unknown tensor 'z'"),
        (
            "cycle.json",
            "error: cycle.json: op 'A': is on a cycle: the graph has no topological order",
        ),
        ("overflow.json", "error: overflow.json: size of tensor 'x' overflows u64"),
        (
            "no-ops.json",
            "error: no-ops.json: the graph has no ops: nothing runs, so there is nothing to plan",
        ),
        ("missing.onnx", "error: missing.onnx: cannot read: No such file or directory (os error 2)"),
        (
            "live-overflow.csv",
            "error: live-overflow.csv: step 0, tensor 'b': live bytes overflows u64",
        ),
        (
            "pinned-overlap.csv",
            "error: pinned-overlap.csv: strategy ge-block: buffers 'a' and 'b' are pinned to overlapping bytes while both are live",
        ),
    ];
    let mut wrong = Vec::new();
    for (file, want) in cases {
        wrong.extend(common::refusal_mismatch(file, &run(&["plan", file]), want));
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn simulate_refuses_a_graph_with_no_ops() {
    let want =
        "error: no-ops.json: the graph has no ops: nothing runs, so there is nothing to plan";
    let run = run(&["simulate", "no-ops.json"]);
    let wrong = common::refusal_mismatch("no-ops.json", &run, want);
    assert!(wrong.is_none(), "{wrong:?}");
}

#[test]
fn malformed_json_names_line_and_column() {
    let (code, _, stderr) = run(&["plan", "malformed.json"]);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("error: malformed.json: ") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn garbage_bytes_are_refused() {
    let (code, _, stderr) = run(&["plan", "garbage.bin"]);
    assert_eq!(code, 1);
    assert!(stderr.starts_with("error: garbage.bin: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn unknown_strategy_lists_the_known_ones() {
    let (code, _, stderr) = run(&[
        "plan",
        "../../../static/samples/tiny.json",
        "--strategy",
        "nope",
    ]);
    // a bad command line exits 2, as clap's own errors do
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: unknown strategy 'nope' (known: "),
        "{stderr}"
    );
}

#[test]
fn bad_options_are_named() {
    let (code, _, stderr) = run(&[
        "plan",
        "../../../static/samples/tiny.json",
        "--dim",
        "batch",
    ]);
    assert_eq!(
        (code, stderr.trim_end()),
        (2, "error: --dim 'batch': expected NAME=VALUE")
    );
    // which of two values was meant? refused, not "the last one wins"
    let (code, _, stderr) = run(&[
        "plan",
        "../../../static/samples/tiny.json",
        "--dim",
        "batch=1",
        "--dim",
        "batch=2",
    ]);
    assert_eq!(
        (code, stderr.trim_end()),
        (2, "error: --dim batch is given twice: give each name once")
    );
    // a symbolic dim of 0 would plan every tensor that uses it as empty: a slip, refused
    let (code, _, stderr) = run(&[
        "plan",
        "../../../static/samples/tiny.json",
        "--dim",
        "batch=0",
    ]);
    assert_eq!(
        (code, stderr.trim_end()),
        (
            2,
            "error: --dim batch=0: a symbolic dim must be at least 1 (0 would make every tensor that uses it empty)"
        )
    );
    let (code, _, stderr) = run(&["plan", "../../../static/samples/tiny.json", "--align", "0"]);
    assert_eq!(
        (code, stderr.trim_end()),
        (2, "error: --align must be at least 1")
    );
    // a name the graph does not have is most likely a typo: warned, not ignored
    let (code, _, stderr) = run(&[
        "plan",
        "../../../static/samples/mobilenet_v2_randinit.stripped.onnx",
        "-s",
        "no-reuse",
        "--input",
        "imput=1x3x8x8",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("--input imput: the graph has no input 'imput' (it has: "),
        "{stderr}"
    );
}

#[test]
fn sizes_given_by_hand_replace_the_tensors_and_unknown_names_are_refused() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../static/samples/ge-diamond.json");
    let sample = samples.to_string_lossy();
    let peak = |extra: &[&str]| {
        let mut args = vec!["plan", &sample, "-s", "no-reuse", "--format", "json"];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        v["plans"][0]["peak_bytes"].as_u64().expect("peak")
    };
    // c: 2 MiB -> 1 MiB; GE padding keeps the difference at exactly 1 MiB (both are multiples
    // of 512 after ceil32 + 32: 2097152 + 512 vs 1048576 + 512)
    assert_eq!(peak(&[]) - peak(&["--size", "c=1048576"]), 1 << 20);
    let (code, _, stderr) = run(&["plan", &sample, "--size", "nope=3"]);
    assert_eq!(code, 2);
    assert!(
        stderr.ends_with("--size nope: the graph has no tensor 'nope'\n"),
        "{stderr}"
    );
}

/// `--input` sets an ONNX input's whole shape; a JSON graph has no such shapes, so the flag
/// is refused rather than ignored (it used to be dropped without a word).
#[test]
fn input_shapes_on_a_json_graph_are_refused() {
    let (code, _, stderr) = common::run_in(
        "../static/samples",
        &["plan", "tiny.json", "--input", "image=2x3x32x32"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("tiny.json: --input image=…: whole input shapes apply to ONNX models"),
        "{stderr}"
    );
}

/// A model handed to `validate` is named as such (it used to report a missing plan field).
#[test]
fn validate_names_a_model_given_for_a_plan() {
    let (code, _, stderr) = common::run_in("../static/samples", &["validate", "tiny.json"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("tiny.json: this is a model (memplan.graph/1), not a plan"),
        "{stderr}"
    );
}

/// A new user's findings: a too-large number was "not a non-negative integer", a model given
/// to `validate` was "not UTF-8" (ONNX) or "expected value at line 1" (CSV).
#[test]
fn too_large_numbers_and_models_given_to_validate_say_what_they_are() {
    let (code, _, stderr) = run(&[
        "plan",
        "../../../static/samples/tiny.json",
        "--size",
        "y=99999999999999999999",
    ]);
    assert_eq!(
        (code, stderr.trim_end()),
        (
            2,
            "error: --size y: '99999999999999999999' does not fit in 64 bits (at most 18446744073709551615)"
        )
    );
    // a 5000-digit value is not echoed whole
    let long = format!("batch={}", "9".repeat(5000));
    let (code, _, stderr) = run(&["plan", "../../../static/samples/tiny.json", "--dim", &long]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("… (5000 characters)' does not fit in 64 bits"),
        "{stderr}"
    );
    assert!(stderr.len() < 200, "{stderr}");
    for (file, what) in [
        ("tetris.csv", "a buffer list (CSV)"),
        ("mobilenet_v2_randinit.stripped.onnx", "a model (ONNX)"),
        ("tiny.json", "a model (memplan.graph/1)"),
    ] {
        let path = format!("../../../static/samples/{file}");
        let (code, _, stderr) = run(&["validate", &path]);
        assert_eq!(code, 1, "{file}: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: {path}: this is {what}, not a plan: plan it with"
            )),
            "{file}: {stderr}"
        );
    }
}
