//! `memplan simulate` with the runtime allocators of the registry, on `tests/sim/five.csv`:
//! a [0,1] 100 B, b [1,2] 300 B, c [2,3] 100 B, d [2,2] 50 B, e [3,3] 200 B (MiniMalloc upper
//! bounds are exclusive). A step allocates before it frees. The figures are worked out by hand
//! from each allocator's rules (docs/runtime-allocators.md) in the comments.

mod common;

use common::run_in;

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = run_in("tests", args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("simulate JSON")
}

fn offsets(a: &serde_json::Value) -> Vec<u64> {
    a["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| r["offset"].as_u64().expect("offset"))
        .collect()
}

#[test]
fn acl_pool_hands_out_the_last_freed_block() {
    let v = json(&[
        "simulate",
        "sim/five.csv",
        "-a",
        "acl-pool",
        "--block-size",
        "300",
        "--num-blocks",
        "3",
        "--format",
        "json",
        "--details",
    ]);
    let a = &v["allocators"][0];
    // blocks 0, 1, 2 pushed in order (2 on top): a: block 2 @600; b: block 1 @300; a freed
    // (stack [0, 2]); c: block 2 @600; d: block 0 @0; b, d freed (stack [1, 0], 0 on top);
    // e: block 0 @0.
    assert_eq!(offsets(a), vec![600, 300, 600, 0, 0]);
    assert_eq!(a["peak_bytes"], 900); // block 2 ends at 900
    assert_eq!(a["reserved_bytes"], 900);
    assert_eq!(a["peak_in_use_bytes"], 900); // b, c, d: three blocks
    assert_eq!(a["system_overhead_bytes"], 72); // 64 alignment + 8 header
    assert_eq!(a["total_requested"], 750);
}

#[test]
fn acl_pool_first_allocation_is_the_pools_last_block() {
    // issue 27: the article's pool pushes blocks 0..6 onto its free stack, so block 5 is on
    // top. ge-chain.json: a..f, each read by the next op, f the graph output; block = the
    // largest tensor (a, 4 MiB). a -> block 5 @20,971,520; b -> block 4 @16,777,216; a freed
    // (stack [0..4, 5]); c -> 5; b freed; d -> 4; e -> 5; f -> 4. Touched: all of 6 × 4 MiB.
    let v = json(&[
        "simulate",
        "../../static/samples/ge-chain.json",
        "-a",
        "acl-pool",
        "--num-blocks",
        "6",
        "--details",
        "--format",
        "json",
    ]);
    let a = &v["allocators"][0];
    let (b4, b5) = (16_777_216, 20_971_520);
    assert_eq!(offsets(a), vec![b5, b4, b5, b4, b5, b4]);
    assert_eq!(a["records"][0]["name"], "a");
    assert_eq!(a["peak_bytes"], 25_165_824); // 24 MiB
    assert_eq!(a["reserved_bytes"], 25_165_824);
    assert_eq!(a["peak_in_use_bytes"], 8_388_608); // two blocks live at once
}

#[test]
fn reuse_counts_its_hits_and_probes() {
    // issue 27: ge-chain.json, a (4 MiB) -> b (1) -> c (2) -> d (1) -> e (3) -> f (64 B, the
    // graph output). The reuse table: a new; b looks at a (held), new; c takes a's freed
    // 4 MiB entry (1 probe); d looks at a (c), takes b's (2); e takes a's (1); f looks at a
    // (e), takes b's (2). 4 hits, 0+1+1+2+1+2 = 7 probes over 6 requests.
    let v = json(&[
        "simulate",
        "../../static/samples/ge-chain.json",
        "-a",
        "reuse",
        "--format",
        "json",
    ]);
    let a = &v["allocators"][0];
    assert_eq!(a["cache_hits"], 4);
    assert_eq!(a["probes"], 7);
    assert_eq!(a["io_transfer_bytes"], 64); // f is copied out: the runtime's memory, not the user's
    let (code, out, err) = run_in(
        "tests",
        &[
            "simulate",
            "../../static/samples/ge-chain.json",
            "-a",
            "reuse",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("reuse"))
        .expect("reuse row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    // alloc peak(2) reserved(2) in-use(2) /lower allocs hits frees fails frag leaks probes/a
    assert_eq!(cols[9], "4", "{row}");
    assert_eq!(cols.last(), Some(&"1.17"), "{row}"); // 7 / 6
    assert!(out.contains("graph I/O 64 B"), "{out}");
}

#[test]
fn leak_records_past_the_table_are_dropped() {
    // five.csv with a table of 1 record: step 0 a recorded; step 1 b finds a's record held:
    // dropped, then a is freed (slot empty); step 2 c recorded, d dropped; step 3 e finds c's
    // record held (c is freed after step 3): dropped. Records a, c; 3 dropped.
    let v = json(&[
        "simulate",
        "sim/five.csv",
        "-a",
        "bfc",
        "--leak-records",
        "1",
        "--format",
        "json",
        "--details",
    ]);
    let a = &v["allocators"][0];
    assert_eq!(a["records_dropped"], 3);
    let names: Vec<&str> = a["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| r["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["a", "c"]);
}

#[test]
fn ge_v1_and_ge_v2_cache_hits() {
    let v = json(&[
        "simulate",
        "sim/five.csv",
        "-a",
        "ge-v1",
        "-a",
        "ge-v2",
        "--page-size",
        "64",
        "--format",
        "json",
        "--details",
    ]);
    // ge-v1, blocks above a 64 B page rounded to pages: a [0,128), b [128,448); c (largest
    // first) into a's rewound block @0 (hit); d (50, not above a page): new [448,498); e into
    // b's rewound block @128 (hit). Never returned: 498 B.
    let g1 = &v["allocators"][0];
    assert_eq!(offsets(g1), vec![0, 128, 0, 448, 128]);
    assert_eq!(
        (g1["reserved_bytes"].as_u64(), g1["cache_hits"].as_u64()),
        (Some(498), Some(2))
    );
    // ge-v2, 64 B pages: a 2 pages [0,128), b 5 [128,448); c reuses a's span (hit); d new
    // [448,512); e (4 pages) splits b's idle 5-page span: keeps 1 page @128, e @192 (hit).
    let g2 = &v["allocators"][1];
    assert_eq!(offsets(g2), vec![0, 128, 0, 448, 192]);
    assert_eq!(
        (g2["reserved_bytes"].as_u64(), g2["cache_hits"].as_u64()),
        (Some(512), Some(2))
    );
}

#[test]
fn acl_tiered_table_shows_every_level() {
    let (code, out, err) = run_in(
        "tests",
        &[
            "simulate",
            "sim/five.csv",
            "-a",
            "acl-tiered",
            "--levels",
            "L1=128,L2=512,DDR=inf",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // all live <= 2 steps: all ask L1 (2 blocks). a, c in L1; b, d, e spill to L2.
    assert!(
        out.contains(
            "level L1    capacity      128 B, peak in use      128 B, 2 allocs, 0 spilled in"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "level L2    capacity      512 B, peak in use      384 B, 3 allocs, 3 spilled in"
        ),
        "{out}"
    );
    assert!(out.contains("aligned_alloc overhead: 216 B"), "{out}");
}

#[test]
fn switches_and_bad_knobs() {
    let (code, out, _) = run_in(
        "tests",
        &["simulate", "sim/five.csv", "-a", "ge-v2", "--no-stats"],
    );
    assert_eq!(code, 0);
    assert!(out.contains("(statistics off)"), "{out}");
    let (code, _, err) = run_in("tests", &["simulate", "sim/five.csv", "-a", "nope"]);
    assert_ne!(code, 0);
    assert!(err.contains("acl-pool") && err.contains("ge-v2"), "{err}");
    let (code, _, err) = run_in(
        "tests",
        &[
            "simulate",
            "sim/five.csv",
            "-a",
            "acl-tiered",
            "--policy",
            "hot",
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("unknown tier policy 'hot'"), "{err}");
    let (code, _, err) = run_in(
        "tests",
        &[
            "simulate",
            "sim/five.csv",
            "-a",
            "acl-tiered",
            "--map",
            "e=L9",
        ],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("no level 'L9'") && err.contains("five.csv"),
        "{err}"
    );
}

/// A pool the simulator cannot hold names its figures and the two options that fix it
/// (a new user met it with a huge batch and the default pool, and did not know which).
#[test]
fn a_pool_past_the_simulators_limit_names_the_options() {
    // 2^24 + 1 blocks of 1 B: one past the limit
    let (code, _, err) = run_in(
        "tests",
        &[
            "simulate",
            "sim/five.csv",
            "-a",
            "pool",
            "--block-size",
            "1",
            "--pool-size",
            "16777217",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("pool of 16777217 blocks (16777217 B in blocks of 1 B) is more than the simulator's limit of 16777216: use larger blocks (--block-size) or a smaller pool (--pool-size)"),
        "{err}"
    );
}

/// Issue 18: a lifetime reaching 2^64 − 1 panicked (capacity overflow); a long one allocated
/// memory per step. Every allocator now runs, with one occupancy entry per step that has
/// events (at most two per buffer).
#[test]
fn huge_and_long_lifetimes_simulate_in_memory_of_the_buffers() {
    for file in ["sim/lifetime-max.csv", "sim/long-lifetime.csv"] {
        let mut args = vec!["simulate", file, "--format", "json", "--details"];
        for a in [
            "pool",
            "reuse",
            "bfc",
            "acl-pool",
            "acl-tiered",
            "ge-v1",
            "ge-v2",
            "tiered",
        ] {
            args.extend(["-a", a]);
        }
        let v = json(&args);
        for a in v["allocators"].as_array().expect("allocators") {
            assert_eq!(a["failures"], 0, "{file}: {a}");
            let steps = a["steps"].as_array().expect("steps").len();
            assert!(
                steps <= 6,
                "{file}: {steps} occupancy entries for 3 buffers"
            );
        }
    }
}

/// `--align 0` is refused, as `plan --align 0` is (it was accepted without a word).
#[test]
fn a_zero_alignment_is_refused() {
    let (code, _, stderr) = common::run_in(
        "../static/samples",
        &["simulate", "tetris.csv", "-a", "bfc", "--align", "0"],
    );
    assert_eq!(
        (code, stderr.trim_end()),
        (2, "error: --align must be at least 1")
    );
}

#[test]
fn failed_allocations_exit_with_status_3() {
    // Two 300 B blocks for five.csv: a, b take both; c (step 2) finds a's block freed at
    // step 1, but d (also step 2) finds none: one failure of five requests.
    let (code, out, err) = run_in(
        "tests",
        &[
            "simulate",
            "sim/five.csv",
            "-a",
            "acl-pool",
            "--block-size",
            "300",
            "--num-blocks",
            "2",
        ],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("acl-pool: 1 of 5 allocation(s) failed (exit status 3)"),
        "{err}"
    );
    assert!(
        out.contains("acl-pool"),
        "the report is still printed: {out}"
    );
}

/// A reader that goes away (`| head`) is an error in one line and exit status 1, as `plan`
/// has it; `print!` panicked here (a new user's `simulate … --details | head -c 600`). The
/// output is far over a pipe's 64 KiB buffer, so the write surely meets the closed pipe.
#[test]
fn a_closed_pipe_is_an_error_not_a_panic() {
    let bin = env!("CARGO_BIN_EXE_memplan");
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../static/samples/vit_b_16_randinit.stripped.onnx"
    );
    let script = format!(
        "'{bin}' simulate '{model}' --dim batch=1 -a pool -a reuse -a bfc --format json --details 2>&1 >&3 | cat >&2; exit ${{PIPESTATUS[0]}}"
    );
    // stdout (fd 3) into head, which leaves after 10 bytes; stderr comes back through cat
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            &format!("{{ {script}; }} 3>&1 | head -c 10 >/dev/null; exit ${{PIPESTATUS[0]}}"),
        ])
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: Broken pipe"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `--padding ge` requests each tensor as GE pads it (ceil32 + 32), as the playground's
/// runtime panes do by default for graphs. sim/five.csv at step 2 holds b, c and d:
/// raw 300 + 100 + 50 = 450 B; padded 352 + 160 + 96 = 608 B.
#[test]
fn padding_ge_pads_every_request() {
    for (pad, lb) in [("none", 450), ("ge", 608)] {
        let v = json(&[
            "simulate",
            "sim/five.csv",
            "-a",
            "reuse",
            "--padding",
            pad,
            "--format",
            "json",
        ]);
        assert_eq!(v["lower_bound_bytes"], lb, "{pad}: {v}");
    }
}

/// With no option given, the default pool (every tensor in whole 2 MiB blocks) of a 1 PiB
/// buffer is 2^29 blocks, past the simulator's limit: that is no bad command line (exit 2),
/// but the input's size: exit 1, naming the default and the options that change it (issue 30).
#[test]
fn the_default_pool_past_the_limit_is_no_bad_command_line() {
    let (code, _, err) = run_in("tests", &["simulate", "sim/huge-buffer.csv", "-a", "pool"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "the default pool (every tensor in whole blocks of 2097152 B) has 536870913 blocks, \
             more than the simulator's limit of 16777216: give --pool-size, or larger blocks \
             (--block-size)"
        ),
        "{err}"
    );
}

#[test]
fn access_cost_per_memory_level() {
    // static/samples/ge-chain.json: a 4 MiB -> b 1 MiB -> c 2 MiB -> d 1 MiB -> e 3 MiB -> f 64 B,
    // each read once by the next op, f by none. Each buffer is written once and read once per
    // reader: written 4+1+2+1+3 MiB + 64 = 11,534,400 B; read 4+1+2+1+3 MiB = 11,534,336 B.
    // `reuse` keeps everything in HBM (memory type 0), 16 units/B by default:
    // (11,534,336 + 11,534,400) x 16 = 23,068,736 x 16 = 369,099,776.
    let (code, out, err) = run_in(
        "tests",
        &[
            "simulate",
            "../../static/samples/ge-chain.json",
            "-a",
            "reuse",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("access cost per run: 369099776 (units); HBM 11534336 B read + 11534400 B written x 16/B = 369099776"),
        "{out}"
    );
    // acl-tiered with its default levels (L1 1 MiB, L2 8 MiB, L3 32 MiB, DDR): b, d (1 MiB
    // each, never live together) and f (64 B) fit L1; a, c and e are larger than L1 and go to
    // L2. L1: written 1 MiB + 1 MiB + 64 = 2,097,216 B, read
    // b + d = 2,097,152 B, x 1 = 4,194,368. L2: written 4 + 2 + 3 MiB = 9,437,184 B, read the
    // same, x 4 = 75,497,472. Total 79,691,840. With --access-cost L2=10: L2 18,874,368 x 10
    // = 188,743,680, total 192,938,048.
    let (code, json, err) = run_in(
        "tests",
        &[
            "simulate",
            "../../static/samples/ge-chain.json",
            "-a",
            "acl-tiered",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let a = &v["allocators"][0]["access_cost"];
    assert_eq!(a["total_cost"], 79_691_840);
    assert_eq!(a["levels"][0]["level"], "L1");
    assert_eq!(a["levels"][0]["bytes_written"], 2_097_216);
    assert_eq!(a["levels"][0]["bytes_read"], 2_097_152);
    assert_eq!(a["levels"][1]["level"], "L2");
    assert_eq!(a["levels"][1]["cost_per_byte"], 4);
    assert_eq!(a["levels"][1]["cost"], 75_497_472);
    let (code, json, err) = run_in(
        "tests",
        &[
            "simulate",
            "../../static/samples/ge-chain.json",
            "-a",
            "acl-tiered",
            "--access-cost",
            "l2=10",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["allocators"][0]["access_cost"]["total_cost"], 192_938_048);
    // a bad entry is a bad option (exit status 2), named
    let (code, _, err) = run_in(
        "tests",
        &[
            "simulate",
            "../../static/samples/ge-chain.json",
            "--access-cost",
            "L1=cheap",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("L1: 'cheap' is not a whole number"), "{err}");
}

#[test]
fn runtime_allocators_per_stream_on_a_graph() {
    // tests/io/streams.json: A -> a -> B (stream 1) -> b -> C -> c -> Y -> y (output), 100 B
    // each; a lives [0,1], b [1,2], c [2,3], y from 3. ge-v2's 64 KiB pages: one page each.
    // ge-v2 shared: a new @0, b new @65536, c takes a's idle page (hit), y b's (hit):
    // 131,072 B reserved, 2 hits. ge-v2-streams: stream 0 has a, c, y: a new @0, c takes a's
    // page (hit), y new (c still live): 2 pages; stream 1 has b: 1 page, laid after stream 0's
    // range @131072: 196,608 B reserved, 1 hit. ge-v1 (raw sizes, one shared allocator):
    // a [0,100), b [100,200), c and y reuse them: 200 B, 2 hits.
    let v = json(&[
        "simulate",
        "io/streams.json",
        "-a",
        "ge-v1",
        "-a",
        "ge-v2",
        "-a",
        "ge-v2-streams",
        "--format",
        "json",
    ]);
    let got: Vec<(u64, u64)> = v["allocators"]
        .as_array()
        .expect("allocators")
        .iter()
        .map(|a| {
            (
                a["reserved_bytes"].as_u64().expect("reserved"),
                a["cache_hits"].as_u64().expect("hits"),
            )
        })
        .collect();
    assert_eq!(got, [(200, 2), (131_072, 2), (196_608, 1)]);
}
