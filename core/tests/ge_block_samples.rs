//! The two worked examples of `docs/ge-memory-planning.md` §7, as memplan JSON graphs in
//! `static/samples/`, planned by the GE block strategies and by offset packing.
//!
//! Sizes: every tensor of `k` MiB costs `ceil512(ceil32(k MiB) + 32) = k MiB + 512` (GE padding,
//! 512-byte blocks). The graph I/O tensors (`x`, `f`) are 64 bytes, one 512-byte block each.
//!
//! What the doc counts: its diamond total (9 MiB + 1536) is the feature-map region only, with
//! F's output (a graph output, zero-copy) "left out"; its chain totals (5 MiB + 2048 and
//! 5 MiB + 1536) are one 512-byte block larger than the blocks it lists ({a,c,e} + {b,d} =
//! 5 MiB + 1024), which is exactly the chain's zero-copy output block, so they are the whole
//! arena. Each test below says which figure it checks.
#![cfg(feature = "serde")]

use memplan_core::{import, plan, Bindings, Plan, PlanOptions, Problem};

const MIB: u64 = 1 << 20;

fn load(file: &str) -> Problem {
    let path = format!("{}/../static/samples/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("sample present");
    let graph = import::json::parse(&text).expect("sample parses");
    graph
        .lower(&Bindings::new())
        .expect("sample lowers")
        .problem
}

fn run(p: &Problem, strategy: &str, options: &PlanOptions) -> Plan {
    let out = plan(p, strategy, options).expect("plans");
    // checked under the rules of the options it was planned with (zero-copy I/O or not)
    assert_eq!(
        memplan_core::validate::validate_with(p, &out, &options.into()),
        Ok(()),
        "{strategy}"
    );
    out
}

#[test]
fn diamond_matches_the_doc() {
    let p = load("ge-diamond.json");
    let options = PlanOptions::default();
    // Lifetimes as in the doc: a [1,3], b [2,3], c [3,5], d [4,5], e [5,6].
    let span = |n: &str| {
        let b = p.buffers.iter().find(|b| b.name == n).expect("tensor");
        (b.start, b.end)
    };
    assert_eq!(
        ["a", "b", "c", "d", "e"].map(span),
        [(1, 3), (2, 3), (3, 5), (4, 5), (5, 6)]
    );

    // Default options: x and f are zero-copy and placed after the feature maps.
    // The doc's total is the feature-map region: {d} + {b} + {c} = 9 MiB + 3 x 512.
    let ge = run(&p, "ge-block", &options);
    assert_eq!(ge.stat("feature_map"), Some(9 * MIB + 1536));
    assert_eq!(ge.stat("feature_map"), Some(9_438_720));
    assert_eq!(ge.stat("binary_block"), Some(9 * MIB + 1536 + 1024));
    assert_eq!(ge.stat("max_block"), Some(9 * MIB + 1536 + 1024));
    assert_eq!(ge.strategy, "ge-block:binary-block"); // a tie keeps GE's default
    assert_eq!(ge.stat("zero_copy"), Some(1024)); // x and f, 512 each
    assert_eq!(ge.peak, 9_438_720 + 1024);
    // The doc's theory_min: live peak a + b + c, plus the non-reused x and f.
    assert_eq!(ge.stat("theory_min"), Some(8 * MIB + 1536 + 1024));
    // The same figures typed, and GE's build-log line from them.
    let stats = ge.ge.as_ref().expect("a GE plan carries GE's statistics");
    let hbm = stats.memory_types[0];
    assert_eq!(stats.memory_types.len(), 1);
    assert_eq!(
        (hbm.memory_type, hbm.memoffset, hbm.feature_map, hbm.atomic),
        (0, 9_438_720 + 1024, 9_438_720, 0)
    );
    assert_eq!((hbm.zero_copy, hbm.no_reuse), (1024, 1024)); // x and f
    assert_eq!(hbm.theory_min, 8 * MIB + 1536 + 1024);
    assert_eq!(stats.streams, 1);
    assert_eq!(
        stats.hybrid.map(|h| (h.binary_block, h.max_block)),
        Some((9_438_720 + 1024, 9_438_720 + 1024))
    );
    assert_eq!(
        stats.stats(),
        ge.stats,
        "stats are the typed figures by name"
    );
    // one stream: no note blames streams; input x (a Data op's output) is never released
    assert!(
        !ge.notes.iter().any(|n| n.contains("another stream")),
        "{:?}",
        ge.notes
    );
    assert!(
        ge.notes
            .iter()
            .any(|n| n.starts_with("1 output(s) of Data, Enter")),
        "{:?}",
        ge.notes
    );
    // total_size: every tensor padded, no reuse: a..e (13 MiB) + 512 each, x and f 512 each.
    assert_eq!(hbm.total_size, 13 * MIB + 5 * 512 + 1024);
    assert_eq!(
        stats.imas_lines("diamond"),
        ["[IMAS]AfterAssignMemory : diamond memoffset[9439744] theory_min[8391168] zero_copy[1024] total_size[13635072] no_reuse[1024] streams[1]"]
    );

    // Binary-block's tree: {a} nests in {d}, {e} in {b}; three top-level blocks.
    let bin = run(&p, "ge-binary-block", &options);
    let name = |i: memplan_core::BufferId| p.buffers[i].name.as_str();
    let mut tops: Vec<String> = bin
        .blocks
        .iter()
        .filter(|b| b.level == memplan_core::BlockLevel::Top && b.tag.is_none())
        .map(|b| b.members.iter().map(|&i| name(i)).collect())
        .collect();
    tops.sort();
    assert_eq!(tops, ["b", "c", "d"]);
    // Max-block: {a,e}, {b,d}, {c}.
    let max = run(&p, "ge-max-block", &options);
    let mut groups: Vec<String> = max
        .blocks
        .iter()
        .filter(|b| b.tag.is_none())
        .map(|b| b.members.iter().map(|&i| name(i)).collect())
        .collect();
    groups.sort();
    assert_eq!(groups, ["ae", "bd", "c"]);

    // With graph I/O in reuse (zero_copy_io = false) the whole arena is the doc's figure:
    // x and f nest in free space of the blocks above.
    let io_reused = PlanOptions {
        zero_copy_io: false,
        ..PlanOptions::default()
    };
    let ge = run(&p, "ge-block", &io_reused);
    assert_eq!(ge.peak, 9_438_720);
    // Offset packing reaches the live-set bound, 8 MiB + 1536, with graph I/O reused; with
    // zero-copy I/O, x and f (512 B each, padded) are user buffers apart from it: + 1024.
    assert_eq!(run(&p, "greedy-size-best-fit", &io_reused).peak, 8_390_144);
    assert_eq!(
        run(&p, "greedy-size-best-fit", &options).peak,
        8_390_144 + 1024
    );
}

#[test]
fn chain_matches_the_doc() {
    let p = load("ge-chain.json");
    let options = PlanOptions::default();
    // The doc's chain totals are whole arenas: feature maps + f's zero-copy block (512).
    let bin = run(&p, "ge-binary-block", &options);
    assert_eq!(bin.peak, 5 * MIB + 2048);
    assert_eq!(bin.stat("feature_map"), Some(5 * MIB + 1536));
    // {a} grows by 512: its children {e} (with {c} inside) and {d} reach 4 MiB + 1024.
    let a = bin
        .blocks
        .iter()
        .find(|b| b.members == [memplan_core::BufferId::new(0)])
        .expect("block of a");
    assert_eq!(a.size, 4 * MIB + 1024);
    let max = run(&p, "ge-max-block", &options);
    assert_eq!(max.peak, 5 * MIB + 1536);
    assert_eq!(max.stat("feature_map"), Some(5 * MIB + 1024));
    let ge = run(&p, "ge-block", &options);
    assert_eq!(ge.strategy, "ge-block:max-block");
    assert_eq!(ge.peak, 5 * MIB + 1536);
    assert_eq!(ge.stat("binary_block"), Some(5 * MIB + 2048));
    assert_eq!(ge.stat("max_block"), Some(5 * MIB + 1536));
    assert!(ge.notes[0].contains("kept max-block"), "{:?}", ge.notes);
}

#[test]
fn node_rules_sample_shows_continuous_inputs_a_ref_output_and_atomic_clean() {
    // static/samples/ge-node-rules.json (a playground sample): Data -> x (64 B, zero-copy);
    // A, B -> a, b (1 MiB each) feed Cat, which needs them adjacent (continuous inputs);
    // R writes r in place of c (ref output: one buffer c living [3, 5]); M's output m (1 MiB)
    // is atomic-clean; F writes the graph output f (64 B, zero-copy).
    let p = load("ge-node-rules.json");
    let ge = run(&p, "ge-block", &PlanOptions::default());
    let at = |n: &str| {
        let i = p.buffers.iter().position(|b| b.name == n).expect("tensor");
        ge.offsets[i]
    };
    assert!(p.buffers.iter().all(|b| b.name != "r"), "r is c's buffer");
    // Feature maps (block_mem_assigner.cc): c's block first (2 MiB + 512); the continuous
    // inputs a, b are moved behind the other blocks in input order (AssignContinuousBlocks):
    // a at 2 MiB + 512, b right after it (a's 1 MiB + 512). c does not take their memory:
    // continuous-input blocks are not reused at level 1 and c [3,5] touches a, b [.., 3].
    assert_eq!(at("c"), 0);
    assert_eq!(at("a"), 2 * MIB + 512);
    assert_eq!(at("b"), 3 * MIB + 1024);
    assert_eq!(ge.stat("feature_map"), Some(4 * MIB + 1536));
    // Atomic-clean region (atomic_memory_assigner.cc ReAssignAtomicMemory): m after the
    // feature maps, its own 1 MiB + 512.
    assert_eq!(at("m"), 4 * MIB + 1536);
    assert_eq!(ge.stat("atomic"), Some(MIB + 512));
    // Zero-copy region (graph_mem_assigner.cc AssignZeroCopyMemory): the output f first, then
    // the input x, 512 B each.
    assert_eq!(at("f"), 5 * MIB + 2048);
    assert_eq!(at("x"), 5 * MIB + 2560);
    assert_eq!(ge.peak, 5 * MIB + 3072); // 5,245,952 B
}
