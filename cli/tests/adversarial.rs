//! Issue 18's adversarial cases: plans that were wrong without a word, plan files the
//! validator waved through, inputs that were planned silently. Inputs in `tests/adversarial`.
//! Expected figures are computed by hand in the comments.

mod common;

use std::collections::BTreeMap;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_in("tests/adversarial", args)
}

fn run_env(args: &[&str], key: &str, value: &str) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memplan"))
        .args(args)
        .env(key, value)
        .current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adversarial"))
        .output()
        .expect("run memplan");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every strategy's peak on `file` with exact sizes and I/O reused (so that only the flag under
/// test constrains reuse), plus `extra` options.
fn peaks(file: &str, extra: &[&str]) -> BTreeMap<String, u64> {
    let mut args = vec![
        "plan",
        file,
        "--align",
        "1",
        "--padding",
        "none",
        "--io-reuse",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{file}: {stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("plan json");
    let plans = v["plans"].as_array().expect("plans");
    assert_eq!(
        plans.len(),
        memplan_core::strategies().len(),
        "every registered strategy ran on {file}"
    );
    plans
        .iter()
        .map(|p| {
            let name = p["strategy"].as_str().expect("name");
            let name = name.split(':').next().unwrap_or(name).to_string();
            (name, p["peak_bytes"].as_u64().expect("peak"))
        })
        .collect()
}

/// A baseline strategy (`no-reuse`, `tflm-linear`): every buffer its own bytes.
fn no_reuse_baseline(name: &str) -> bool {
    memplan_core::find_strategy(name)
        .is_ok_and(|s| s.family == memplan_core::strategy::Family::Baseline)
}

#[test]
fn every_strategy_honours_no_reuse_zero_copy_and_atomic_clean() {
    // A 4-op chain of 4-byte tensors: a [0,1], b [1,2], c [2,3], d [3,3]; lower bound 8 B
    // (two live at every step), and b, d never live together.
    // - a no-reuse (flag, or its op's attribute): a alone, b/d share, c: 12 B;
    // - b zero-copy (a user buffer): b alone, a/c or a/d share, c and d apart: 12 B;
    // - c atomic-clean under the central memset: c owns its bytes from step 0, so a, b, c are
    //   live together at step 1: 12 B (8 B when cleaned separately);
    // - reuse off: 16 B, the sum.
    for file in [
        "no-reuse-chain.json",
        "no-reuse-op.json",
        "zero-copy-chain.json",
        "atomic-chain.json",
    ] {
        for (s, peak) in peaks(file, &[]) {
            let want = if no_reuse_baseline(&s) { 16 } else { 12 };
            assert_eq!(peak, want, "{s} on {file}");
        }
        for (s, peak) in peaks(file, &["--disable-reuse"]) {
            assert_eq!(peak, 16, "{s} on {file} with --disable-reuse");
        }
    }
    for (s, peak) in peaks("atomic-chain.json", &["--atomic-separate"]) {
        let want = if no_reuse_baseline(&s) { 16 } else { 8 };
        assert_eq!(peak, want, "{s}, atomic cleaned separately");
    }
    // optimal does not claim a proof below what the rules allow
    let (_, stdout, _) = run(&[
        "plan",
        "no-reuse-chain.json",
        "--align",
        "1",
        "--padding",
        "none",
        "--io-reuse",
        "-s",
        "optimal",
        "--disable-reuse",
    ]);
    assert!(stdout.contains("proven optimal: peak 16 B"), "{stdout}");
}

/// The offsets `strategy` gives on `file` (CSV output), by buffer name.
fn offsets(file: &str, strategy: &str, extra: &[&str]) -> BTreeMap<String, u64> {
    let mut args = vec!["plan", file, "-s", strategy, "--format", "csv"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{strategy} on {file}: {stderr}");
    stdout
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[f.len() - 1].parse().expect("offset"))
        })
        .collect()
}

#[test]
fn buffer_alignment_combines_with_align_by_lcm() {
    // b has alignment 5, c 4: under --align 512, b needs a multiple of lcm(512, 5) = 2560
    // (max would give 512), c of 512; under --align 3, b of 15 and c of 12.
    let names: Vec<String> = memplan_core::strategies()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    for s in &names {
        for (align, lb, lc) in [("512", 2560, 512), ("3", 15, 12)] {
            let o = offsets("align-lcm.csv", s, &["--align", align]);
            assert_eq!(o["b"] % lb, 0, "{s} --align {align}: b at {}", o["b"]);
            assert_eq!(o["c"] % lc, 0, "{s} --align {align}: c at {}", o["c"]);
        }
    }
    // memplan's own validate accepts memplan's own plan, which now carries the alignments
    let out = std::env::temp_dir().join(format!("memplan-lcm-{}.json", std::process::id()));
    let out_s = out.to_string_lossy().to_string();
    let (code, _, stderr) = run(&[
        "plan",
        "align-lcm.csv",
        "--align",
        "3",
        "--format",
        "json",
        "-o",
        &out_s,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&out).expect("plan file");
    assert!(text.contains("\"alignment\": 5"), "{text}");
    let (code, stdout, stderr) = run(&["validate", &out_s]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout.matches(" valid ").count(),
        memplan_core::strategies().len(),
        "{stdout}"
    );
    // against its buffer list too, without a word about options nobody gave (a CSV has no
    // op order: validate used to carry the plan's over and warn that --schedule did nothing)
    let (code, stdout, stderr) = run(&["validate", &out_s, "--model", "align-lcm.csv"]);
    let _ = std::fs::remove_file(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout.matches(" valid ").count(),
        memplan_core::strategies().len(),
        "{stdout}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn no_reuse_keeps_clear_of_pins_and_the_default_run_survives() {
    // b is pinned at 0 (4 B); a (4 B, live with b) used to land on it at 0
    let o = offsets("no-reuse-pinned.csv", "no-reuse", &[]);
    assert_eq!(o["b"], 0);
    assert!(o["a"] >= 4 && o["c"] >= 4, "{o:?}");
    let (code, stdout, stderr) = run(&["plan", "no-reuse-pinned.csv"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("invalid plan"), "{stderr}");
    let rows = stdout.lines().filter(|l| l.ends_with("ms")).count();
    assert_eq!(
        rows,
        memplan_core::strategies().len(),
        "every strategy's row: {stdout}"
    );
}

#[test]
fn an_infeasible_problem_still_fails_in_one_line() {
    // every strategy fails on two overlapping pins: the first failure is the answer
    let (code, stdout, stderr) = run(&["plan", "../bad/pinned-overlap.csv", "-s", "no-reuse"]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn csv_output_is_rfc4180_and_formula_safe() {
    let (code, stdout, stderr) = run(&[
        "plan",
        "names.csv",
        "-s",
        "greedy-size-best-fit",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // RFC 4180 section 2: fields with , " or a line break are quoted, quotes doubled; OWASP:
    // a cell starting with = + - @ gets a leading '
    assert!(stdout.contains("\"a,b\",0,2,4,"), "{stdout}");
    assert!(stdout.contains("\"say \"\"hi\"\"\",1,3,4,"), "{stdout}");
    assert!(stdout.contains("\"two\nlines\",2,4,4,"), "{stdout}");
    assert!(
        stdout.contains("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",3,5,4,"),
        "{stdout}"
    );
    assert!(stdout.contains("\"'@SUM(1)\",4,6,4,"), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.starts_with(['=', '+', '-', '@'])),
        "{stdout}"
    );
    // and the output reads back: five buffers
    let back = memplan_core::import::csv::parse("back", &stdout).expect("reads back");
    assert_eq!(back.buffers.len(), 5);
}

#[test]
fn validate_refuses_what_it_used_to_wave_through() {
    let cases: &[(&str, &str)] = &[
        ("partial", "plan greedy-size-best-fit: lists 3 buffers, the problem has 4"),
        ("duplicate-names", "plan greedy-size-best-fit: duplicate buffer name 'a'"),
        (
            "lifetime-outside",
            "plan greedy-size-best-fit: buffer 'b': live range ends at step 7 but the problem has 3 steps",
        ),
        (
            "below-lower-bound",
            "plan greedy-size-best-fit: peak_bytes 36 is below the problem's lower bound 40: no plan can be that small",
        ),
        (
            "above-peak",
            "plan greedy-size-best-fit: buffer 'p' ends at byte 36, above peak_bytes 30",
        ),
        ("no-plans", "the file holds no plans: nothing to validate"),
        (
            "shrunk",
            "plan greedy-size-best-fit: the buffers' bytes add up to 12, below the problem's no-reuse total 20: a buffer is smaller than its tensor",
        ),
        (
            "zero-size-misaligned",
            "plan greedy-size-best-fit: buffer 'z' at offset 3 is not 2-byte aligned",
        ),
        (
            "off-pin",
            "plan greedy-size-best-fit: buffer 'p' is pinned at offset 32 but placed at 20",
        ),
        (
            "buffer-alignment",
            "plan greedy-size-best-fit: buffer 'b' at offset 18 is not 4-byte aligned",
        ),
        (
            "no-reuse-shared",
            "plan greedy-size-best-fit: buffer 'b' (no-reuse) shares bytes with 'p', which can run with it",
        ),
        (
            "control-chars",
            "plan greedy-size-best-fit: buffers 'a\\u{1b}[31mred\\nline' and 'b' are both live at step 1 and share memory",
        ),
    ];
    let mut wrong = Vec::new();
    for (name, want) in cases {
        let file = format!("plans/{name}.plan.json");
        let (code, _, stderr) = run(&["validate", &file]);
        let want = format!("error: {file}: {want}");
        let first = stderr.lines().next().unwrap_or("");
        if code != 1 || first != want || stderr.contains('\u{1b}') {
            wrong.push(format!(
                "{name}: exit {code}, stderr {stderr:?}\n   want {want:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    for ok in ["valid", "end-max"] {
        let (code, stdout, stderr) = run(&["validate", &format!("plans/{ok}.plan.json")]);
        assert_eq!(code, 0, "{ok}: {stdout}{stderr}");
    }
}

#[test]
fn bad_text_inputs_get_clear_errors_naming_the_file() {
    let cases: &[(&str, &str)] = &[
        (
            "duplicate-column.csv",
            "error: duplicate-column.csv: line 1: column 'size' appears twice in the header (which one holds the value?)",
        ),
        (
            "duplicate-key.json",
            "error: duplicate-key.json: duplicate key 'y' (which value is meant?) at line 4 column 108",
        ),
        (
            "orphan-output.json",
            "error: orphan-output.json: graph output 'ghost': is a graph output but no op produces it (and it is neither a graph input nor a constant)",
        ),
    ];
    for (file, want) in cases {
        let (code, stdout, stderr) = run(&["plan", file]);
        assert_eq!((code, stderr.trim_end()), (1, *want), "{file}");
        assert!(stdout.is_empty());
    }
    // a byte-order mark and CR-only line ends are read as text
    for file in ["bom.csv", "cr-only.csv", "bom.json"] {
        let (code, _, stderr) = run(&["plan", file, "-s", "no-reuse"]);
        assert_eq!(code, 0, "{file}: {stderr}");
    }
    let o = offsets("cr-only.csv", "greedy-size-best-fit", &[]);
    assert_eq!(o.len(), 2, "two rows, not one: {o:?}");
}

#[test]
fn an_input_with_no_end_stops_at_the_cap() {
    // /dev/zero never ends: refused once past the cap (lowered here to keep the test small)
    let (code, _, stderr) = run_env(&["plan", "/dev/zero"], "MEMPLAN_MAX_INPUT_BYTES", "65536");
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("error: /dev/zero: larger than the input size cap of 64.00 KiB"),
        "{stderr}"
    );
}

/// A graph whose only tensor lives in P2P memory: GE's headline (HBM) is 0 B and its P2P arena
/// holds the tensor (4 B → ceil32 + 32 = 64 → one 512 B block). The plan file `plan` writes
/// must pass `validate`: the arenas together (512 B) reach the 4 B bound. (Found by a
/// new-user test: `validate` refused `plan`'s own file, "peak_bytes 0 is below … 4".)
#[test]
fn a_plan_of_other_memory_types_only_validates() {
    let dir = std::env::temp_dir().join(format!("memplan-p2p-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let graph = dir.join("p2p.json");
    std::fs::write(
        &graph,
        r#"{"format":"memplan.graph/1","tensors":[{"name":"a","bytes":4,"memory_type":1}],"ops":[{"name":"A","outputs":["a"]}]}"#,
    )
    .expect("write");
    let plan = dir.join("plan.json");
    let (g, p) = (graph.to_string_lossy(), plan.to_string_lossy());
    let (code, _, err) = common::run_in(
        ".",
        &["plan", &g, "-s", "ge-block", "--format", "json", "-o", &p],
    );
    assert_eq!(code, 0, "{err}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).expect("plan file")).expect("JSON");
    let arenas = &file["plans"][0]["arenas"];
    assert_eq!(arenas[0]["name"], "HBM", "{arenas}");
    assert_eq!(arenas[0]["bytes"], 0, "{arenas}");
    assert_eq!(arenas[1]["name"], "P2P_DDR", "{arenas}");
    assert_eq!(arenas[1]["bytes"], 512, "{arenas}");
    let (code, out, err) = common::run_in(".", &["validate", &p]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("valid"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plan file edited consistently (buffer `b` renamed `q` in its only plan, or moved to
/// steps [2, 3] with its live set still disjoint) passes `validate` alone: the file agrees
/// with itself. `--model` loads the CSV again and names the difference.
#[test]
fn validate_with_the_model_catches_a_consistent_edit() {
    let dir = std::env::temp_dir().join(format!("memplan-vmodel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let model = "tests/adversarial/validate-base.csv";
    let plan = dir.join("plan.json");
    let p = plan.to_string_lossy().into_owned();
    let (code, _, err) = common::run_in(
        ".",
        &[
            "plan", model, "-s", "no-reuse", "--format", "json", "-o", &p,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&plan).expect("plan file");
    let (code, out, err) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 0, "its own model: {out}{err}");
    let edit = |field: &str, value: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let b = v["plans"][0]["buffers"]
            .as_array_mut()
            .expect("buffers")
            .iter_mut()
            .find(|b| b["name"] == "b")
            .expect("buffer b");
        b[field] = value;
        std::fs::write(&plan, v.to_string()).expect("write");
    };
    edit("name", "q".into());
    let (code, out, err) = common::run_in(".", &["validate", &p]);
    assert_eq!(code, 0, "alone the edit is consistent: {out}{err}");
    let (code, out, _) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 1);
    assert!(
        out.contains("INVALID: buffer 'q' is not a tensor of the model"),
        "{out}"
    );
    // b is [1,3] in the CSV (upper bound exclusive: 1..=2); no-reuse keeps it apart anyway
    edit("start", 2.into());
    let (code, out, _) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 1);
    assert!(
        out.contains("INVALID: buffer 'b' lives in steps [2, 2] in the plan, [1, 2] in the model"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plan made under GE's depth-first order records it (`"schedule": "ge-dfs"`), and
/// `validate --model` loads the model in that order unless `--schedule` says otherwise.
/// `order.json`: file order runs A, B, C, D; GE's sort (compute_graph.cc
/// DFSTopologicalSorting, the Const w below the Data x) runs A, C, B, D, so `a` lives in
/// steps [0, 1] (A, C) and `b` in [2, 3] (B, D), where file order gives [0, 2] and [1, 3].
#[test]
fn a_plan_records_its_op_order_and_validate_loads_the_model_in_it() {
    let dir = std::env::temp_dir().join(format!("memplan-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let model = "tests/adversarial/order.json";
    let p = dir.join("plan.json").to_string_lossy().into_owned();
    let (code, _, err) = common::run_in(
        ".",
        &[
            "plan",
            model,
            "-s",
            "greedy-size-best-fit",
            "--schedule",
            "ge-dfs",
            "--format",
            "json",
            "-o",
            &p,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("plan file")).expect("JSON");
    assert_eq!(v["problem"]["schedule"], "ge-dfs");
    let span = |name: &str| {
        let b = v["plans"][0]["buffers"]
            .as_array()
            .expect("buffers")
            .iter()
            .find(|b| b["name"] == name)
            .expect("buffer");
        (b["start"].as_u64().unwrap(), b["end"].as_u64().unwrap())
    };
    assert_eq!((span("a"), span("b")), ((0, 1), (2, 3)));
    let (code, out, err) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 0, "the plan's own order: {out}{err}");
    let (code, out, err) = common::run_in(
        ".",
        &["validate", &p, "--model", model, "--schedule", "file"],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "the plan was made in op order 'ge-dfs'; --schedule file loads the model in another"
        ),
        "{err}"
    );
    // live sets by hand: GE's order peaks at a + c + x = 1048576 + 128 bytes, file order at
    // a + b + x = 2097152 + 64; the no-reuse total is the same 2 MiB + 192
    assert!(
        out.contains(
            "the file's lower bound and no-reuse total are 1048704 and 2097344 bytes, \
             the model's 2097216 and 2097344"
        ),
        "{out}"
    );
    // file order is the default and is not written; absent, validate reads file order
    // even when the graph's own "schedule" is GE's
    let (code, out, _) = common::run_in(".", &["plan", model, "--format", "json"]);
    assert_eq!(code, 0);
    assert!(!out.contains("\"schedule\""), "{out}");
    let dfs = dir.join("order-dfs.json");
    let text = std::fs::read_to_string(model).expect("model");
    std::fs::write(&dfs, text.replacen("{", "{\"schedule\": \"ge-dfs\", ", 1)).expect("write");
    let dfs = dfs.to_string_lossy().into_owned();
    let (code, _, err) = common::run_in(
        ".",
        &[
            "plan",
            &dfs,
            "--schedule",
            "file",
            "--format",
            "json",
            "-o",
            &p,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::run_in(".", &["validate", &p, "--model", &dfs]);
    assert_eq!(code, 0, "file order, as the plan was made: {out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// No false refusal: every sample and every case, planned by every strategy (GE options and
/// exact sizes, GE variants with zero-copy reuse too), passes `validate --model` against the
/// model it came from. (The checks of `--model` are exact: planned sizes, rules in force,
/// streams, groups, bounds.)
#[test]
fn every_plan_validates_against_its_model() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("memplan-every-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut models: Vec<std::path::PathBuf> = Vec::new();
    for f in std::fs::read_dir(root.join("static/samples")).expect("samples") {
        let p = f.expect("entry").path();
        // the large ONNX samples are covered by the others' rules; keep the test quick
        let big = p.extension().is_some_and(|x| x == "onnx")
            && std::fs::metadata(&p).map_or(0, |m| m.len()) > 1 << 20;
        if !big {
            models.push(p);
        }
    }
    for f in std::fs::read_dir(root.join("testdata/cases")).expect("cases") {
        let p = f.expect("entry").path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).expect("case")).expect("JSON");
        if let Some(g) = v.get("graph") {
            let out = dir.join(p.file_name().expect("name"));
            std::fs::write(&out, g.to_string()).expect("write");
            models.push(out);
        }
    }
    assert!(models.len() >= 12, "samples and cases: {models:?}");
    let plan = dir.join("plan.json").to_string_lossy().into_owned();
    let mut checked = 0;
    for m in &models {
        let m = m.to_string_lossy().into_owned();
        for extra in [
            &[][..],
            &["--padding", "none", "--align", "1"][..],
            &["--zero-copy-reuse"][..],
        ] {
            let mut args = vec!["plan", m.as_str(), "--format", "json", "-o", plan.as_str()];
            for s in [
                "ge-block",
                "ge-binary-block",
                "ge-max-block",
                "greedy-size-best-fit",
                "greedy-size-first-fit",
                "best-fit-spatial",
                "best-fit-temporal",
                "greedy-breadth",
                "no-reuse",
            ] {
                args.extend(["-s", s]);
            }
            args.extend_from_slice(extra);
            let (code, _, err) = common::run_in(".", &args);
            if code != 0 {
                // a model a strategy refuses (e.g. a sample that needs --dim) is not this test's
                assert!(!err.contains("panicked"), "{m} {extra:?}: {err}");
                continue;
            }
            let (code, out, err) = common::run_in(".", &["validate", &plan, "--model", &m]);
            assert_eq!(code, 0, "{m} {extra:?}:\n{out}{err}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "plans checked: {checked}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With every tensor in P2P memory GE's headline peak (HBM's) is 0 B; the budget, the ratio
/// to the bound and the comparison take every arena. By hand, GE sizes ceil32(b) + 32 rounded
/// to 512: t (1 MiB) 1049088 B in P2P's feature map; the zero-copy graph I/O x (1 MiB)
/// 1049088 and y (1 KiB) 1536: 2099712 B in P2P, 0 in HBM.
#[test]
fn a_budget_counts_every_memory_type() {
    let model = "tests/adversarial/p2p.json";
    let (code, out, err) = common::run_in(
        ".",
        &["plan", model, "-s", "ge-block", "--capacity", "2MiB"],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("ge-block:binary-block: its arenas together 2099712 B exceeds the capacity 2097152 B by 2560 B"),
        "{err}"
    );
    assert!(
        out.contains(
            "arenas: HBM 0 B + P2P_DDR 2.00 MiB = 2.00 MiB (2099712 B; the peak above is HBM's)"
        ),
        "{out}"
    );
    // 2099712 / 2097152 (the live-set bound: x and t at step 0)
    assert!(out.contains("1.0012"), "{out}");
}

/// `ref-no-reuse.json`: R writes `r` in place of `a` (`ref_outputs`) and `r` is `no_reuse`, so
/// the one buffer `a` is exclusive. A plan file stripped of that rule, with `c` (live after
/// `a`) moved onto `a`'s bytes, agrees with itself; `--model` loads the graph again and finds
/// the rule the merged buffer carries (issue 30: the alias's flags were lost in lowering, so
/// the model agreed with the lie).
#[test]
fn validate_with_the_model_finds_a_ref_outputs_rule() {
    let dir = std::env::temp_dir().join(format!("memplan-refrule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let model = "tests/adversarial/ref-no-reuse.json";
    let p = dir.join("plan.json").to_string_lossy().into_owned();
    let (code, _, err) = common::run_in(
        ".",
        &[
            "plan",
            model,
            "-s",
            "no-reuse",
            "--align",
            "1",
            "--padding",
            "none",
            "--io-reuse",
            "--format",
            "json",
            "-o",
            &p,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 0, "its own model: {out}{err}");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("plan file")).expect("JSON");
    let buffers = v["plans"][0]["buffers"].as_array_mut().expect("buffers");
    let at =
        |bs: &[serde_json::Value], n: &str| bs.iter().position(|b| b["name"] == n).expect("buffer");
    let (a, c) = (at(buffers, "a"), at(buffers, "c"));
    assert_eq!(buffers[a]["flags"], serde_json::json!(["no_reuse"]));
    buffers[a].as_object_mut().expect("object").remove("flags");
    buffers[c]["offset"] = buffers[a]["offset"].clone();
    std::fs::write(&p, v.to_string()).expect("write");
    let (code, out, err) = common::run_in(".", &["validate", &p]);
    assert_eq!(code, 0, "alone the edit is consistent: {out}{err}");
    let (code, out, _) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("buffer 'a' carries the rules [] in the plan; the model under the plan's settings gives [\"no_reuse\"]"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `zero-size-pinned.csv`: a (8 B, [0, 1]) and b (8 B, [1, 2]) overlap, z has 0 bytes pinned
/// at 4096. A zero-size buffer takes no bytes, so it never raises the peak (a and b side by
/// side: 16 B), and every strategy's plan must pass `validate` (issue 30: six plans with peak
/// 16 were refused as "buffer 'z' ends at byte 4096, above peak_bytes 16").
#[test]
fn a_zero_size_pin_above_the_peak_is_valid_for_every_strategy() {
    let dir = std::env::temp_dir().join(format!("memplan-zpin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let model = "tests/adversarial/zero-size-pinned.csv";
    let p = dir.join("plan.json").to_string_lossy().into_owned();
    let (code, _, err) = common::run_in(".", &["plan", model, "--format", "json", "-o", &p]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("plan file")).expect("JSON");
    for plan in v["plans"].as_array().expect("plans") {
        let z = plan["buffers"]
            .as_array()
            .expect("buffers")
            .iter()
            .find(|b| b["name"] == "z")
            .expect("z");
        assert_eq!(z["offset"], 4096, "{}: the pin", plan["strategy"]);
        assert!(plan["peak_bytes"].as_u64().expect("peak") >= 16, "{plan}");
    }
    let (code, out, err) = common::run_in(".", &["validate", &p, "--model", model]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("INVALID"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plan file whose buffer ends past 2^64 is refused naming the buffer (issue 30: the
/// message named the plan only, "offset + size overflows u64").
#[test]
fn an_overflowing_buffer_in_a_plan_file_is_named() {
    let dir = std::env::temp_dir().join(format!("memplan-voverflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let model = "tests/adversarial/validate-base.csv";
    let p = dir.join("plan.json").to_string_lossy().into_owned();
    let (code, _, err) = common::run_in(
        ".",
        &[
            "plan", model, "-s", "no-reuse", "--format", "json", "-o", &p,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("plan file")).expect("JSON");
    let b = v["plans"][0]["buffers"]
        .as_array_mut()
        .expect("buffers")
        .iter_mut()
        .find(|b| b["name"] == "b")
        .expect("buffer b");
    b["offset"] = serde_json::json!(u64::MAX);
    std::fs::write(&p, v.to_string()).expect("write");
    let (code, out, err) = common::run_in(".", &["validate", &p]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!("INVALID: buffer 'b': offset {} + ", u64::MAX))
            && out.contains("bytes overflows u64"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
