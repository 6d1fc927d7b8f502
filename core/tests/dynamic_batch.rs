//! Dynamic batch on real models: `gears::expand` of resnet50 and mobilenet_v2 (symbolic
//! `batch`) at gears 1, 2, 4, 8 against the onnxruntime shapes oracle in `testdata/models`,
//! overlaid plans of both strategy families, and GE's 400 MiB split rule on a hand case.
#![cfg(feature = "onnx")]

use std::collections::BTreeMap;
use std::path::PathBuf;

use memplan_core::graph::gears::expand;
use memplan_core::import::onnx::{parse, OnnxOptions};
use memplan_core::report::overlay_report;
use memplan_core::{lower_bound, plan, validate, Bindings, Buffer, Padding, PlanOptions, Problem};
use serde_json::Value;

const GEARS: [u64; 4] = [1, 2, 4, 8];
const MIB: u64 = 1 << 20;

/// The models and their oracles, in the repository (`testdata/models`). Missing data fails.
fn models_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/models");
    assert!(
        d.join("shapes").is_dir() && d.join("onnx-stripped").is_dir(),
        "{} is missing: the model test data lives in the repository",
        d.display()
    );
    d
}

/// Bytes per element of the oracle's dtype names (only what these models use).
fn dtype_bytes(name: &str) -> u64 {
    match name {
        "FLOAT" | "INT32" => 4,
        "INT64" | "DOUBLE" => 8,
        "FLOAT16" | "BFLOAT16" => 2,
        "INT8" | "UINT8" | "BOOL" => 1,
        other => panic!("dtype {other} not expected here"),
    }
}

struct Model {
    name: &'static str,
    /// Live-set lower bound at batch 1, from the models README (reference figures).
    lb1: u64,
    /// `tensor -> bytes at batch 1`, from the onnxruntime shapes oracle: every tensor whose
    /// first dim is 1 (the batch) at batch 1.
    batch1: BTreeMap<String, u64>,
    problem: Problem,
}

fn load(dir: &std::path::Path, name: &'static str, lb1: u64) -> Model {
    let oracle: Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("shapes/{name}.shapes.json"))).expect("read json"),
    )
    .expect("json");
    let mut batch1 = BTreeMap::new();
    for (t, v) in oracle["tensor_shapes"].as_object().expect("tensor_shapes") {
        let dims: Vec<u64> = v["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| d.as_u64().expect("dim"))
            .collect();
        // these CNNs carry the batch as the leading dim of every activation
        assert_eq!(dims.first(), Some(&1), "{name}: {t} {dims:?}");
        let elems: u64 = dims.iter().product();
        batch1.insert(
            t.clone(),
            elems * dtype_bytes(v["dtype"].as_str().expect("dtype")),
        );
    }
    let bytes =
        std::fs::read(dir.join(format!("onnx-stripped/{name}.stripped.onnx"))).expect("read onnx");
    let m = parse(&bytes, &OnnxOptions::default()).expect("parse");
    assert!(m.graph.symbols().iter().any(|s| s == "batch"), "{name}");
    let lowered = expand(&m.graph, &Bindings::new(), "batch", &GEARS).expect("expand");
    Model {
        name,
        lb1,
        batch1,
        problem: lowered.problem,
    }
}

fn models() -> Vec<Model> {
    let dir = models_dir();
    vec![
        load(&dir, "resnet50_randinit", 9_633_792),
        load(&dir, "mobilenet_v2_randinit", 9_633_792),
    ]
}

#[test]
fn every_gear_scales_the_oracle_sizes() {
    for m in models() {
        let p = &m.problem;
        // GE MultiBatchClonePass: every tensor is per gear except the graph's input and
        // output, one buffer each at the largest gear's size (ge-memory-planning.md §8.10)
        let io = |t: &str| t == "input" || t == "output";
        assert_eq!(
            p.buffers.len(),
            (m.batch1.len() - 2) * GEARS.len() + 2,
            "{}",
            m.name
        );
        assert_eq!(p.gears(), GEARS);
        let by_name: BTreeMap<&str, &Buffer> =
            p.buffers.iter().map(|b| (b.name.as_str(), b)).collect();
        for (t, &bytes1) in &m.batch1 {
            if io(t) {
                let b = by_name.get(t.as_str()).expect("graph I/O");
                assert_eq!((b.gear, b.size), (None, 8 * bytes1), "{}: {t}", m.name);
                continue;
            }
            for g in GEARS {
                let name = format!("{t}@Batch_{g}");
                let b = by_name
                    .get(name.as_str())
                    .unwrap_or_else(|| panic!("{}: no buffer {name}", m.name));
                assert_eq!(b.gear, Some(g));
                assert_eq!(b.size, g * bytes1, "{}: {name}", m.name);
            }
        }
    }
}

#[test]
fn overlaid_plans_cost_the_largest_gear() {
    for m in models() {
        let p = &m.problem;
        for (strategy, o) in [
            ("ge-block", PlanOptions::default()),
            ("greedy-size-best-fit", PlanOptions::default()),
            // graph I/O reused like activations: zero-copy I/O would keep the user buffers
            // apart for the whole run, above the live-set bound
            (
                "greedy-size-best-fit",
                PlanOptions {
                    zero_copy_io: false,
                    ..PlanOptions::exact()
                },
            ),
        ] {
            let what = format!("{} {strategy} alignment {}", m.name, o.alignment);
            let out = plan(p, strategy, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
            if let Err(v) = memplan_core::validate::validate_with(p, &out, &(&o).into()) {
                panic!("{what}: {}", v.describe(p));
            }
            let r = overlay_report(p, &out, strategy, &o).expect("report");
            let batches: Vec<u64> = r.gears.iter().map(|g| g.batch).collect();
            assert_eq!(batches, GEARS);
            let max = r.gears.iter().map(|g| g.peak_bytes).max().unwrap();
            assert_eq!(r.overlay_bytes, out.peak, "{what}");
            assert_eq!(r.overlay_bytes, max, "{what}");
            let sum: u64 = r.gears.iter().map(|g| g.alone_bytes).sum();
            assert_eq!(r.side_by_side_bytes, sum, "{what}");
            assert!(r.overlay_bytes < r.side_by_side_bytes, "{what}: {r:?}");
            assert_eq!(r.saving_bytes, sum - r.overlay_bytes);
            // Raw live-set bounds: gear 8's buffers are 8 times their batch-1 sizes and the
            // shared graph I/O is at gear 8's size, so gear 8's bound is 8 x the README's
            // batch-1 figure; a smaller gear N carries the gear-8 I/O, so at least N x.
            for g in &r.gears {
                if g.batch == 8 {
                    assert_eq!(g.lower_bound_bytes, 8 * m.lb1, "{what}");
                } else {
                    assert!(g.lower_bound_bytes >= g.batch * m.lb1, "{what}");
                }
                assert!(g.peak_bytes >= g.lower_bound_bytes, "{what}");
            }
            // The region is the batch-8 gear's, not the sum: the graph I/O is one buffer
            // (GE: one zero-copy input and output at the largest gear), so the overlay is
            // gear 8 planned alone, for both strategies.
            let g8 = r.gears.last().unwrap();
            assert!(r.overlay_bytes >= 8 * m.lb1, "{what}");
            assert_eq!(r.overlay_bytes, g8.alone_bytes, "{what}");
            if strategy == "greedy-size-best-fit" && o.alignment == 1 {
                // raw bytes: the overlay reaches gear 8's bound, 8 x the README figure
                assert_eq!(r.overlay_bytes, 8 * m.lb1, "{what}");
            }
            println!(
                "{what}: overlay {} B, side by side {} B, gear peaks {:?}, alone {:?}",
                r.overlay_bytes,
                r.side_by_side_bytes,
                r.gears.iter().map(|g| g.peak_bytes).collect::<Vec<_>>(),
                r.gears.iter().map(|g| g.alone_bytes).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn lower_bound_of_the_expanded_problem_is_the_largest_gear() {
    for m in models() {
        // gears never run together, so the bound of the whole problem is gear 8's
        let b = lower_bound(&m.problem).expect("bound");
        assert_eq!(b.lower_bound, 8 * m.lb1, "{}", m.name);
    }
}

/// GE's expandable-memory rule (`kMaxSplitSizeForDynamicBatch` = 400 MiB, GE reference
/// §DynamicBatchMemAssigner): the largest gear's blocks go into virtual blocks, a new one
/// starting when the running sum would *pass* 400 MiB; the other gears' blocks, largest first,
/// are packed into the virtual blocks in turn, moving on when the next block does not fit.
#[test]
fn expandable_memory_splits_at_400_mib_by_hand() {
    // Within a gear every buffer lives over [0, 1], so each is its own block.
    // gear 1: 200 + 200 + 100 = 500 MiB (largest); gear 2: 250 + 160 + 80 = 490 MiB.
    let mut v = Vec::new();
    for (n, mib, g) in [
        ("a", 200, 1),
        ("b", 200, 1),
        ("c", 100, 1),
        ("x", 250, 2),
        ("y", 160, 2),
        ("z", 80, 2),
    ] {
        let mut b = Buffer::new(n, mib * MIB, 0, 1);
        b.producer = Some(0);
        b.gear = Some(g);
        v.push(b);
    }
    let p = Problem::from_buffers("split400", v);
    let off = |out: &memplan_core::Plan, n: &str| {
        let i = p.buffers.iter().position(|b| b.name == n).unwrap();
        out.offsets[i] / MIB
    };
    let base = PlanOptions {
        padding: Padding::None,
        ..PlanOptions::default()
    };
    // Without expandable memory: one virtual block of 500 MiB; gear 2 back to back, largest
    // first: x @0, y @250, z @410; region 500 MiB.
    let out = plan(&p, "ge-block", &base).unwrap();
    assert_eq!(validate(&p, &out), Ok(()));
    assert_eq!(out.peak, 500 * MIB);
    assert_eq!(["x", "y", "z"].map(|n| off(&out, n)), [0, 250, 410]);
    // Expandable: 200 + 200 = 400 does not pass 400, so virtual blocks are [a, b] = 400 and
    // [c] = 100 (a new one at 400 MiB). x (250) -> first @0; y: 250 + 160 = 410 > 400 ->
    // second, 160 > 100 -> no virtual block left; z (80) comes after y in turn and finds none
    // either (though it would fit in both). y and z stand alone after the 500 MiB region:
    // peak 500 + 160 + 80 = 740 MiB.
    let ex = PlanOptions {
        expandable_memory: true,
        ..base
    };
    let out = plan(&p, "ge-block", &ex).unwrap();
    assert_eq!(validate(&p, &out), Ok(()));
    let mut g1 = ["a", "b", "c"].map(|n| off(&out, n));
    g1.sort_unstable();
    assert_eq!(g1, [0, 200, 400]);
    assert_eq!(off(&out, "c"), 400);
    assert_eq!(off(&out, "x"), 0);
    let mut alone = [off(&out, "y"), off(&out, "z")];
    alone.sort_unstable();
    assert!(alone == [500, 660] || alone == [500, 580], "{alone:?}");
    assert_eq!(out.peak, 740 * MIB);
}
