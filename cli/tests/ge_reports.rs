//! GE's run-time reports in `memplan plan` (issue 27), on graphs worked out by hand:
//! `--io` on `tests/io/ref.json` (x -> A -> a; R writes y in place of x; B: a -> z; C: z -> w;
//! outputs y, z, w; the same graph as core/tests/graph_io.rs).

mod common;

use common::run_in;

#[test]
fn io_table_and_plan_file() {
    let (code, out, err) = run_in("tests", &["plan", "io/ref.json", "-s", "ge-block", "--io"]);
    assert_eq!(code, 0, "{err}");
    // x 1536 B at 2048 (its buffer holds the output y); z 2048 B at 3584; w 1024 B at 5632
    // (GE sizes ceil512(ceil32(bytes) + 32), zero-copy region after a's 2048 B).
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name}: {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row("x"), "input x 2048 1536 A, R zero-copy");
    assert_eq!(
        row("y"),
        "output y 2048 1536 R copied 1000 B: ref or view of a graph input"
    );
    assert_eq!(
        row("z"),
        "output z 3584 2048 B, C copied 2000 B: read again by another op"
    );
    assert_eq!(row("w"), "output w 5632 1024 C zero-copy");
    assert!(out.contains("copied per run: 3000 B"), "{out}");
    // the plan file carries the same
    let (code, json, err) = run_in(
        "tests",
        &[
            "plan",
            "io/ref.json",
            "-s",
            "ge-block",
            "--io",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let io = &v["plans"][0]["graph_io"];
    assert_eq!(io[1]["name"], "y");
    assert_eq!(io[1]["copy_reasons"][0], "ref_of_input");
    assert_eq!(io[1]["copied_bytes"], 1000);
    assert_eq!(io[0]["address_ops"], serde_json::json!(["A", "R"]));
    // a buffer list has no graph I/O: a bad option (exit status 2)
    let (code, _, err) = run_in("tests", &["plan", "sim/five.csv", "--io"]);
    assert_eq!(code, 2);
    assert!(err.contains("--io needs a graph"), "{err}");
}

#[test]
fn atomic_clean_by_id_under_both_policies() {
    // tests/io/atomic.json (core/tests/atomic_clean.rs works the figures out): m1 1536 B,
    // m2 3072 B, C's workspace 512 B, all atomic. Centralised: one AtomicAddrClean zeroes
    // the atomic region [0, 5120) merged; per op: m2 at 0, m1 at 3072 with the workspace
    // nested at its head, one MemSet each.
    let run = |extra: &[&str]| {
        let mut args = vec!["plan", "io/atomic.json", "-s", "ge-block", "--atomic-clean"];
        args.extend_from_slice(extra);
        let (code, out, err) = run_in("tests", &args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let central = run(&[]);
    assert!(
        central.contains("1 memset op(s); centralised policy 1, per-op policy 3"),
        "{central}"
    );
    assert!(
        central.contains("AtomicAddrClean for A, B, C: [0, +5120)"),
        "{central}"
    );
    let per_op = run(&["--atomic-separate"]);
    for line in [
        "MemSet_A for A: [3072, +1536)",
        "MemSet_B for B: [0, +3072)",
        "MemSet_C for C: [3072, +512)",
    ] {
        assert!(per_op.contains(line), "{per_op}");
    }
    let json = run(&["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let r = &v["plans"][0]["atomic_clean"];
    assert_eq!(r["memsets"][0]["ranges"][0]["size"], 5120);
    assert_eq!(r["memsets_per_op"], 3);
}

#[test]
fn single_op_mode_holds_only_workspaces() {
    // tests/io/single.json (core/tests/single_op.rs works it out): workspaces A 512 + 3072,
    // B 5120 (stream 1), C 512; stream 0 keeps A's 3584 B buffer (C reuses it), stream 1
    // B's 5120 B: 8704 B in all.
    let (code, out, err) = run_in(
        "tests",
        &["plan", "io/single.json", "-s", "ge-block", "--single-op"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("device memory 8.50 KiB (8704 B)"), "{out}");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(row("A"), "A 0 3000 3584");
    assert_eq!(row("B"), "B 1 2500 5120");
    assert_eq!(row("C"), "C 0 564 512");
    assert!(
        out.contains("stream 0: 3584 B held, 1 device allocation(s)"),
        "{out}"
    );
    let (code, json, err) = run_in(
        "tests",
        &[
            "plan",
            "io/single.json",
            "-s",
            "ge-block",
            "--single-op",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["single_op"]["device_bytes"], 8704);
    assert_eq!(v["single_op"]["ops"][1]["workspace_bytes"], 5120);
}

#[test]
fn training_step_beside_inference() {
    // tests/io/mlp.json (core/tests/training.rs works it out): the training step's live peak
    // is at M1's backward, x 3136 + grad(h1) 512 + grad(W2) 5120 + grad(W1) 401408 = 410176 B;
    // weights W1 + W2 = 406528 B; Adam keeps two moments, 813056 B.
    let (code, out, err) = run_in(
        "tests",
        &[
            "plan",
            "io/mlp.json",
            "-s",
            "ge-block",
            "--training",
            "adam",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("training step (Adam): arena lower bound 400.6 KiB (410176 B)"),
        "{out}"
    );
    let (code, json, err) = run_in(
        "tests",
        &[
            "plan",
            "io/cnn.json",
            "-s",
            "ge-block",
            "--training",
            "momentum",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let t = &v["training"];
    // CNN: peak at P's backward, x c r grad(p) grad(r) grad(Wf) = 6656 B; weights Wc 432 +
    // Wf 2560 = 2992 B; momentum keeps one velocity per weight
    assert_eq!(t["lower_bound_bytes"], 6656);
    assert_eq!(t["weight_bytes"], 2992);
    assert_eq!(t["optimizer_state_bytes"], 2992);
    assert!(t["plans"][0][1].as_u64().expect("peak") >= 6656);
    let (code, _, err) = run_in("tests", &["plan", "io/mlp.json", "--training", "rmsprop"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown optimizer 'rmsprop'"), "{err}");
}

#[test]
fn zero_copy_align_option_is_planned_recorded_and_validated() {
    // core/tests/ge_block_samples.rs works the diamond out: with 32 B zero-copy alignment the
    // arena is 9,438,912 B (9,439,744 with GE's code's 512).
    let dir = std::env::temp_dir().join(format!("memplan-zc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let out = dir.join("plan.json");
    let out_s = out.to_str().expect("utf-8 path");
    let (code, _, err) = run_in(
        "tests",
        &[
            "plan",
            "../../static/samples/ge-diamond.json",
            "-s",
            "ge-block",
            "--zero-copy-align",
            "32",
            "--format",
            "json",
            "-o",
            out_s,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("plan")).expect("json");
    assert_eq!(v["plans"][0]["peak_bytes"], 9_438_912);
    assert_eq!(v["plans"][0]["settings"]["zero_copy_alignment"], 32);
    let (code, stdout, err) = run_in(
        "tests",
        &[
            "validate",
            out_s,
            "--model",
            "../../static/samples/ge-diamond.json",
        ],
    );
    assert_eq!(code, 0, "{stdout}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hybrid_one_flow() {
    // tests/io/hybrid.json (core/tests/hybrid.rs works it out): raw sizes, batch 4: the static
    // part b (4000 B) and the output y (40 B, apart) is 4040 B; ge-v2 reserves two 64 KiB pages
    // for x, a, c (4096 B each; c takes a's idle span): 131072 B; the device holds 135112 B.
    let (code, out, err) = run_in(
        "tests",
        &[
            "plan",
            "io/hybrid.json",
            "-s",
            "greedy-size-best-fit",
            "--dim",
            "batch=4",
            "--padding",
            "none",
            "--align",
            "1",
            "--hybrid",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("static 3.95 KiB (2 buffers, 4040 B)  run time 128.0 KiB reserved (3 buffers, 131072 B)  device 131.9 KiB (135112 B)"),
        "{out}"
    );
}

#[test]
fn plan_access_cost_per_memory_type() {
    // static/samples/ge-chain.json, raw sizes (no padding, alignment 1): every buffer in HBM,
    // written once (4+1+2+1+3 MiB + 64 = 11,534,400 B) and read once per reader (f none:
    // 11,534,336 B); x 16 = 369,099,776 (the same traffic `simulate -a reuse` reports). With
    // GE's default alignment of 512, f takes 512 B: written 11,534,848, x 16 = 369,106,944;
    // --access-cost hbm=1 prices it at 23,069,184.
    let run = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "../../static/samples/ge-chain.json",
            "-s",
            "ge-block",
            "--padding",
            "none",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = run_in("tests", &args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = run(&["--align", "1", "--access-cost", ""]);
    assert!(
        out.contains("access cost per run: 369099776 (units); HBM 11534336 B read + 11534400 B written x 16/B = 369099776"),
        "{out}"
    );
    let out = run(&["--access-cost", "", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["access_cost"]["levels"][0]["bytes_written"], 11_534_848);
    assert_eq!(v["access_cost"]["total_cost"], 369_106_944);
    let out = run(&["--access-cost", "hbm=1", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["access_cost"]["total_cost"], 23_069_184);
}
