//! Crafted bad ONNX models (issue 18, "Bad input"; written by `scripts/onnx-bad-models.py`
//! into `tests/bad/onnx/`): each exits 1 with one line naming the file, the node or tensor,
//! and what is wrong; never a panic, never a plan. And the Slice steps near ±2^63 that used
//! to wrap to 0 bytes are planned at their true size.

mod common;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_in("tests/bad/onnx", args)
}

#[test]
fn bad_onnx_models_fail_with_one_clear_line() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "resize-nan-scale.onnx",
            &[],
            "op 'resize0' (Resize): scale NaN for axis 2 (scales must be positive and finite)",
        ),
        (
            "topk-k-too-large.onnx",
            &[],
            "op 'topk0' (TopK): k = 1099511627776 exceeds the dim 8 of axis 3",
        ),
        ("negative-dim.onnx", &[], "tensor 'x': negative dim -5 (axis 1)"),
        (
            "reshape-count-mismatch.onnx",
            &[],
            // 2*3*8*9 = 432 target elements against 2*3*8*8 = 384
            "op 'reshape0' (Reshape): target shape [2, 3, 8, 9] has 432 elements, the input (shape [2, 3, 8, 8]) has 384: a Reshape keeps the element count",
        ),
        (
            "matmul-mismatch.onnx",
            &[],
            "op 'matmul0' (MatMul): shapes [4, 5] and [6, 7] do not multiply: inner dims 5 and 6 differ",
        ),
        ("conv-group-zero.onnx", &[], "op 'conv0' (Conv): group 0 must be at least 1"),
        (
            "maxpool-kernel-zero.onnx",
            &[],
            "op 'pool0' (MaxPool): kernel dim 0 (axis 0) must be at least 1",
        ),
        (
            "split-parts-dont-sum.onnx",
            &[],
            "op 'split0' (Split): split parts [1, 1] sum to 2, the dim of axis 1 is 3",
        ),
        (
            "transpose-repeated-axis.onnx",
            &[],
            "op 'transpose0' (Transpose): perm [0, 1, 1, 3] repeats axis 1",
        ),
        (
            "symbolic-dim-negative.onnx",
            &["--dim", "h=3"],
            // 3 - 5 + 1 = -1
            "op 'conv0' (Conv): spatial output dim 0 would be -1 (input too small)",
        ),
        (
            "symbolic-size-overflow.onnx",
            &["--dim", "n=4294967296"],
            // (2^32)^3 elements
            "size of tensor 'x' overflows u64",
        ),
    ];
    let mut wrong = Vec::new();
    for (file, extra, what) in cases {
        let mut args = vec!["plan", file];
        args.extend_from_slice(extra);
        let want = format!("error: {file}: {what}");
        wrong.extend(common::refusal_mismatch(file, &run(&args), &want));
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn slice_steps_near_two_to_the_63_do_not_wrap() {
    // x is 2x3x8x8 f32 (1536 B); a step of ±(2^63-1) over axis 3 keeps 1 element:
    // y is 2x3x8x1 f32 (192 B). No reuse: 1536 + 192 = 1728 B.
    for file in [
        "slice-step-overflow.onnx",
        "slice-step-negative-overflow.onnx",
    ] {
        let (code, stdout, stderr) = run(&["plan", file, "-s", "greedy-size-best-fit"]);
        assert_eq!(code, 0, "{file}: {stderr}");
        assert!(
            stdout.contains("no reuse 1.69 KiB (1728 B)"),
            "{file}: {stdout}"
        );
    }
}

#[test]
fn tensors_of_unknown_size_are_listed_and_left_out_of_every_figure() {
    // relu0: x[1,4] f32 -> a (16 B); foo0 (domain com.example, unknown) -> b; relu1 -> y.
    // b and y are of unknown size: lower bound = no reuse = x + a = 32 B, and both named.
    let (code, stdout, stderr) = run(&["plan", "unknown-op.onnx", "-s", "greedy-size-best-fit"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("lower bound 32 B (+2 tensors of unknown size)   no reuse 32 B (+2 tensors of unknown size)"),
        "{stdout}"
    );
    assert!(stdout.contains("  unknown size: 'b' from op 'foo0' (Foo): dtype not inferred (inference stopped at op 'foo0' (Foo): domain 'com.example' is not supported)"), "{stdout}");
    assert!(stdout.contains("  unknown size: 'y' from op 'relu1' (Relu): shape not inferred (inference stopped at op 'foo0' (Foo)"), "{stdout}");
    assert!(stderr.contains("warning: unknown-op.onnx: tensor 'y' (output of op 'relu1' (Relu)): size unknown, not planned"), "{stderr}");
    let (code, stdout, _) = run(&[
        "plan",
        "unknown-op.onnx",
        "-s",
        "greedy-size-best-fit",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["problem"]["unknown_size_tensors"], 2);
    assert_eq!(v["problem"]["lower_bound_bytes"], 32);
    assert_eq!(v["problem"]["unknown_size"][0]["name"], "b");
    assert_eq!(v["problem"]["unknown_size"][0]["op"], "'foo0' (Foo)");
}

#[test]
fn an_unnamed_dim_stays_unknown_until_bound_by_its_name() {
    // x is [1, ?] f32: the dim is named after where it comes from, never bound to 1.
    let (code, stdout, _) = run(&["plan", "unnamed-dim.onnx", "-s", "greedy-size-best-fit"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("lower bound 0 B (+2 tensors of unknown size)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  unknown size: 'x': dims left unknown: x axis 1"),
        "{stdout}"
    );
    // Bound by its name: x and y are 1x8 f32 = 32 B each.
    let (code, stdout, stderr) = run(&[
        "plan",
        "unnamed-dim.onnx",
        "-s",
        "greedy-size-best-fit",
        "--dim",
        "x axis 1=8",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("lower bound 64 B   no reuse 64 B\n"),
        "{stdout}"
    );
}

#[test]
fn alias_views_drops_exactly_the_aliased_bytes() {
    // ViT-B/16 has Reshape/Flatten views of dying inputs; with --alias-views each shares its
    // input's buffer: the no-reuse total drops by exactly the reported bytes and the lower
    // bound cannot grow. Off by default: the JSON then has no aliased_* fields.
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "../../../../static/samples/vit_b_16_randinit.stripped.onnx",
            "--dim",
            "batch=1",
            "-s",
            "no-reuse",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["problem"].clone()
    };
    let off = plan(&[]);
    let on = plan(&["--alias-views"]);
    assert!(off.get("aliased_views").is_none(), "{off}");
    let saved = on["aliased_view_bytes"].as_u64().unwrap();
    assert!(on["aliased_views"].as_u64().unwrap() > 0);
    assert_eq!(
        off["no_reuse_bytes"].as_u64().unwrap() - on["no_reuse_bytes"].as_u64().unwrap(),
        saved
    );
    assert!(on["lower_bound_bytes"].as_u64() <= off["lower_bound_bytes"].as_u64());
}
