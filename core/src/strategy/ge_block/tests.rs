//! Tests of the GE block strategies: one per reuse blocker with hand-computed numbers, gears,
//! and random problems. Unless a test says otherwise, sizes are multiples of 512 and the
//! options are [`opts`]: 512-byte blocks, no tensor padding, so a buffer's size is its block
//! size and the arithmetic stays readable.

use alloc::string::String;
use alloc::vec::Vec;

use super::*;
use crate::plan::BlockLevel;
use crate::problem::{Buffer, BufferId, BufferKind, Continuous, OpInfo};
use crate::validate::validate;

const K: u64 = 1024;
const MIB: u64 = 1 << 20;

fn opts() -> PlanOptions {
    PlanOptions {
        padding: crate::plan::Padding::None,
        ..PlanOptions::default()
    }
}

fn buf(name: &str, size: u64, start: u64, end: u64) -> Buffer {
    let mut b = Buffer::new(name, size, start, end);
    b.producer = Some(start);
    b
}

/// Plans with `strategy` and checks the plan with the independent validator.
fn check(p: &Problem, strategy: &str, o: &PlanOptions) -> Plan {
    let plan = crate::strategy::plan(p, strategy, o).unwrap();
    assert_eq!(
        crate::validate::validate_with(p, &plan, &o.into()),
        Ok(()),
        "{strategy} on {}",
        p.name
    );
    plan
}

fn off(p: &Problem, plan: &Plan, name: &str) -> u64 {
    let i = p.buffers.iter().position(|b| b.name == name).unwrap();
    plan.offsets[i]
}

/// Member names of every block, sorted, for comparing block structure.
fn groups(p: &Problem, plan: &Plan) -> Vec<String> {
    let mut g: Vec<String> = plan
        .blocks
        .iter()
        .filter(|b| !b.members.is_empty())
        .map(|b| {
            b.members
                .iter()
                .map(|&i| p.buffers[i].name.as_str())
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    g.sort();
    g
}

fn chain3() -> Problem {
    Problem::from_buffers(
        "chain3",
        alloc::vec![buf("a", K, 0, 1), buf("b", K, 1, 2), buf("c", K, 2, 3)],
    )
}

#[test]
fn disabling_reuse_gives_the_sum_of_blocks() {
    // GE ge.exec.disableReuseMemory=1: no free list, no level 2.
    let p = chain3();
    let on = check(&p, "ge-block", &opts());
    assert_eq!(on.peak, 2 * K); // c takes a's block
    assert_eq!(groups(&p, &on), ["a+c", "b"]);
    let off_ = PlanOptions {
        reuse: false,
        ..opts()
    };
    for s in ["ge-block", "ge-binary-block", "ge-max-block"] {
        let plan = check(&p, s, &off_);
        assert_eq!(plan.peak, 3 * K, "{s}");
        assert_eq!(plan.stat("total_size"), Some(3 * K));
        assert_eq!(plan.stat("no_reuse"), Some(3 * K));
    }
}

#[test]
fn no_reuse_flag_keeps_a_block_to_itself() {
    // GE OP_NO_REUSE_MEM / no_reuse_mem_flag: a's block is never handed to c.
    let mut p = chain3();
    p.buffers[0].flags.no_reuse = true;
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.peak, 3 * K);
    assert_eq!(groups(&p, &plan), ["a", "b", "c"]);
    let a = plan
        .blocks
        .iter()
        .find(|b| b.members == BufferId::list(&[0]))
        .unwrap();
    assert_eq!(a.tag.as_deref(), Some("no-reuse"));
    assert_eq!(plan.stat("no_reuse"), Some(K));
}

fn io_problem() -> Problem {
    let mut in1 = buf("in1", 2 * K, 0, 1);
    in1.kind = BufferKind::GraphInput;
    let mut in2 = buf("in2", 512, 0, 2);
    in2.kind = BufferKind::GraphInput;
    let a = buf("a", K, 1, 2);
    let mut out1 = buf("out1", K, 2, 3);
    out1.kind = BufferKind::GraphOutput;
    Problem::from_buffers("io", alloc::vec![in1, in2, a, out1])
}

#[test]
fn zero_copy_io_goes_last_outputs_then_inputs_by_size() {
    // GE AssignZeroCopyMemory: after the feature maps, outputs first, then inputs sorted by
    // size ascending and adjacent.
    let p = io_problem();
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(off(&p, &plan, "a"), 0);
    assert_eq!(off(&p, &plan, "out1"), K);
    assert_eq!(off(&p, &plan, "in2"), 2 * K);
    assert_eq!(off(&p, &plan, "in1"), 2 * K + 512);
    assert_eq!(plan.peak, 4 * K + 512);
    assert_eq!(plan.stat("zero_copy"), Some(3 * K + 512));
    assert_eq!(plan.stat("feature_map"), Some(K));

    // I/O in reuse (GE inputReuseMemIndexes / outputReuseMemIndexes for all): out1 [2,3]
    // nests in in1's block [0,1]; blocks {in1 > out1} 2048, {a} 1024, {in2} 512.
    let io = PlanOptions {
        zero_copy_io: false,
        ..opts()
    };
    let plan = check(&p, "ge-binary-block", &io);
    assert_eq!(plan.peak, 3 * K + 512);
    assert_eq!(off(&p, &plan, "out1"), off(&p, &plan, "in1"));
    assert_eq!(plan.stat("zero_copy"), Some(0));

    // A zero_copy flag puts an activation with the outputs.
    let mut p = io_problem();
    p.buffers[2].flags.zero_copy = true;
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(off(&p, &plan, "a"), 0);
    assert_eq!(off(&p, &plan, "out1"), K);
    assert_eq!(off(&p, &plan, "in2"), 2 * K);
    assert_eq!(plan.stat("feature_map"), Some(0));
}

#[test]
fn rule10_zero_copy_blocks_host_children_by_real_size_in_the_zero_copy_region() {
    // GE padding: a 1 MiB tensor has real size 1 MiB + 32 and AlignSize 1 MiB + 512.
    // x (graph input [0,1]), t (activation [2,3]), y (graph output [3,4]), all 1 MiB.
    let mut x = buf("x", MIB, 0, 1);
    x.kind = BufferKind::GraphInput;
    let mut y = buf("y", MIB, 3, 4);
    y.kind = BufferKind::GraphOutput;
    let p = Problem::from_buffers("zc-reuse", alloc::vec![x, buf("t", MIB, 2, 3), y]);
    let block = MIB + 512;
    // Zero-copy I/O, no reuse of it (GE's default): t in the feature maps, then y, then x.
    let plan = check(&p, "ge-binary-block", &PlanOptions::default());
    assert_eq!(plan.peak, 3 * block);
    // ge.exec.inputReuseMemIndexes / outputReuseMemIndexes: block_mem_assigner.cc
    // ApplyMemory keeps x and y zero-copy (no level-1 reuse: do_reuse needs !is_zero_copy)
    // but reusable (x's post-reuse, y's pre-reuse). ReuseBlocksByLifeTime sorts x, t, y
    // (equal AlignSize, one member, begin 0, 2, 3). Parent x, candidate t: the block test
    // passes (2 > 1); memory_block.cc AddZeroCopyLifeReuseBlock: 0 + AlignSize(t) > real(x),
    // but both cursors are 0 and the real sizes are equal: t becomes x's child. y with x:
    // two zero-copy blocks never share. ResizeMemoryBlocks skips zero-copy blocks, so the
    // feature maps are empty; AssignZeroCopyMemory puts outputs first (y at 0), then inputs
    // (x at 1 MiB + 512), t inside x.
    let reuse = PlanOptions {
        zero_copy_reuse: true,
        ..PlanOptions::default()
    };
    let plan = check(&p, "ge-binary-block", &reuse);
    assert_eq!(
        ["y", "x", "t"].map(|n| off(&p, &plan, n)),
        [0, block, block]
    );
    assert_eq!(plan.peak, 2 * block);
    assert_eq!(plan.stat("feature_map"), Some(0));
    assert_eq!(plan.stat("zero_copy"), Some(2 * block));
    // Per index (the flag on x alone, the option off): the same plan, y unchanged.
    let mut q = p.clone();
    q.buffers[0].flags.zero_copy_reuse = true;
    let flagged = check(&q, "ge-binary-block", &PlanOptions::default());
    assert_eq!(flagged.offsets, plan.offsets);
    assert_eq!(flagged.peak, 2 * block);
    // A larger activation sorts first and, as a parent, refuses a zero-copy child
    // (AddZeroCopyLifeReuseBlock: a zero-copy block smaller than the other conflicts).
    let mut x = buf("x", MIB, 0, 1);
    x.kind = BufferKind::GraphInput;
    let p = Problem::from_buffers("zc-reuse", alloc::vec![x, buf("t2", MIB + K, 2, 3)]);
    let plan = check(&p, "ge-binary-block", &reuse);
    assert_eq!(plan.peak, block + MIB + K + 512);
}

#[test]
fn atomic_clean_outputs_go_after_the_blocks_unless_cleaned_separately() {
    // a [0,1] is cleaned by the centralised memset: not reused, placed after the blocks.
    let mut a = buf("a", K, 0, 1);
    a.flags.atomic_clean = true;
    let p = Problem::from_buffers("atomic", alloc::vec![a, buf("b", K, 2, 3)]);
    let plan = check(&p, "ge-block", &opts());
    assert_eq!((off(&p, &plan, "b"), off(&p, &plan, "a")), (0, K));
    assert_eq!(plan.peak, 2 * K);
    assert_eq!(plan.stat("atomic"), Some(K));
    // atomicCleanPolicy=1: each cleaned on its own, reused like any tensor.
    let sep = PlanOptions {
        atomic_centralised: false,
        ..opts()
    };
    let plan = check(&p, "ge-block", &sep);
    assert_eq!(plan.peak, K);

    // Gears' atomic regions are appended, not overlaid (atomic_memory_assigner.cc
    // ReAssignAtomicMemory: each batch label starts where the previous one ended): the
    // ungeared u at 0 (512), gear 1's g1 at 512 (1 KiB), gear 2's g2 at 1536: 2 KiB.
    let mut u = buf("u", 512, 0, 1);
    let mut g1 = buf("g1", K, 0, 1);
    let mut g2 = buf("g2", 512, 0, 1);
    for b in [&mut u, &mut g1, &mut g2] {
        b.flags.atomic_clean = true;
    }
    g1.gear = Some(1);
    g2.gear = Some(2);
    let p = Problem::from_buffers("atomic-gears", alloc::vec![g1, u, g2]);
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(off(&p, &plan, "u"), 0);
    assert_eq!(off(&p, &plan, "g1"), 512);
    assert_eq!(off(&p, &plan, "g2"), 512 + K);
    assert_eq!(plan.stat("atomic"), Some(2 * K));
}

fn cont(b: &mut Buffer, group: u32, index: u32, outputs: bool) {
    b.continuous = Some(Continuous {
        group,
        index,
        outputs,
    });
}

#[test]
fn continuous_inputs_get_one_block_each_adjacent_in_input_order_at_the_end() {
    // Inputs of one op listed out of input order in the problem.
    let p_buf = buf("p", K, 0, 0);
    let mut x2 = buf("x2", 2 * K, 1, 3);
    let mut x0 = buf("x0", K, 1, 3);
    let mut x1 = buf("x1", 512, 2, 3);
    cont(&mut x2, 0, 2, false);
    cont(&mut x0, 0, 0, false);
    cont(&mut x1, 0, 1, false);
    let z = buf("z", K, 4, 4);
    let p = Problem::from_buffers("cin", alloc::vec![p_buf, x2, x0, x1, z]);
    let plan = check(&p, "ge-block", &opts());
    // z reuses p's block; x0 may not (continuous blocks are not reused at level 1).
    assert_eq!(groups(&p, &plan), ["p+z", "x0", "x1", "x2"]);
    assert_eq!(off(&p, &plan, "x0"), K);
    assert_eq!(off(&p, &plan, "x1"), 2 * K);
    assert_eq!(off(&p, &plan, "x2"), 2 * K + 512);
    assert_eq!(plan.peak, 4 * K + 512);
    // Without the attribute x0 joins {p, z} at level 1, and level 2 splits it off again:
    // {x2 > p+z} 2048, {x0} 1024, {x1} 512.
    let mut q = p.clone();
    for b in &mut q.buffers {
        b.continuous = None;
    }
    let plan = check(&q, "ge-binary-block", &opts());
    assert_eq!(plan.peak, 3 * K + 512);
}

/// `steps` ops in a chain (each the predecessor of the next), the one at `memset` a `MemSet`
/// (GE's atomic-clean op).
fn chain_ops(steps: u64, memset: Option<u64>) -> Vec<OpInfo> {
    (0..steps)
        .map(|k| OpInfo {
            op_type: String::from(if Some(k) == memset { "MemSet" } else { "Op" }),
            preds: k.checked_sub(1).into_iter().collect(),
            ..OpInfo::default()
        })
        .collect()
}

/// Rule 4's graph: inputs i0 (2500 B, block 2560) and i1 (1 KiB) of one continuous-input op
/// at step 2; after it a (1 KiB, [3,3]), b (1 KiB, [3,4], a separate block: a is live at 3)
/// and c (512 B, [3,3]). `memset` puts a `MemSet` op at that step.
fn continuous_host(memset: Option<u64>) -> Problem {
    let mut i0 = buf("i0", 2500, 0, 2);
    let mut i1 = buf("i1", K, 0, 2);
    cont(&mut i0, 0, 0, false);
    cont(&mut i1, 0, 1, false);
    let mut p = Problem::from_buffers(
        "continuous-host",
        alloc::vec![
            i0,
            i1,
            buf("a", K, 3, 3),
            buf("b", K, 3, 4),
            buf("c", 512, 3, 3)
        ],
    );
    p.steps = 5;
    p.ops = chain_ops(5, memset);
    p
}

#[test]
fn rule4_a_continuous_input_block_hosts_children_in_its_unaligned_size() {
    // block_mem_assigner.cc ReuseBlocksByLifeTime sorts continuous blocks by their largest
    // unaligned size (CompareLifeInterval): i0 (2500), then the 1 KiB ones by begin: i1
    // (begin 0), a, b; then c. memory_block.cc AddLifeReuseBlock on the continuous parent
    // i0 ([0,2]) goes to AddContinuousLifeReuseBlock after the block test only: a and b are
    // disjoint and fit side by side (1024 + 1024 <= 2500), c does not (2048 + 512 > 2500,
    // though it would fit the aligned 2560), i1 is continuous too (never two continuous).
    // i1 (host 1024) then takes c. Blocks: i0 > a, b; i1 > c; arena 2560 + 1024, the inputs
    // adjacent (i1 right after i0), a at i0's head, b after a, c at i1's head.
    let p = continuous_host(None);
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, 2560 + K);
    assert_eq!(
        ["i0", "a", "b", "i1", "c"].map(|n| off(&p, &plan, n)),
        [0, 0, K, 2560, 2560]
    );
    assert_eq!(groups(&p, &plan), ["a", "b", "c", "i0", "i1"]);
    // A MemSet op at step 4 (after a, b and c are produced): a continuous parent refuses
    // children produced before the last atomic-clean op (ReuseBlocksByLifeTime,
    // GetAtomicAddrCleanId), so a, b, c (all crossing) get blocks of their own:
    // 2560 + 1024 + 1024 + 1024 + 512.
    let p = continuous_host(Some(4));
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, 2560 + 3 * K + 512);
    // At step 3 (= their producer's step) it refuses none.
    let plan = check(&continuous_host(Some(3)), "ge-binary-block", &opts());
    assert_eq!(plan.peak, 2560 + K);
}

/// The reverse case's graph: o (ordinary, `o_size`, [0,1]), then inputs i0 (`i0_size`,
/// [2,4]) and i1 (512 B, [3,4]) of one continuous-input op at step 4. `memset` puts a
/// `MemSet` op at that step.
fn reverse_host(o_size: u64, i0_size: u64, memset: Option<u64>) -> Problem {
    let mut i0 = buf("i0", i0_size, 2, 4);
    let mut i1 = buf("i1", 512, 3, 4);
    cont(&mut i0, 0, 0, false);
    cont(&mut i1, 0, 1, false);
    let mut p = Problem::from_buffers("reverse-host", alloc::vec![buf("o", o_size, 0, 1), i0, i1]);
    p.steps = 5;
    p.ops = chain_ops(5, memset);
    p
}

#[test]
fn rule4_an_ordinary_parent_moves_into_a_continuous_block_of_its_size() {
    // GE's reverse case. block_mem_assigner.cc ReuseBlocksByLifeTime sorts (CompareLifeInterval)
    // o (AlignSize 1024) and i0 (continuous: largest unaligned size, 1024) as equals, one
    // member each, o first (earlier begin); then i1 (512). With o as parent and i0 offered,
    // memory_block.cc AddLifeReuseBlock passes the block test (i0 begins at 2 > o's end 1)
    // and, i0 being continuous, calls AddContinuousLifeReuseBlock with o as `this`: o is not
    // larger than i0 (1024 <= 1024), o is not continuous, so the second branch: i0's
    // child_offset_ 0 + o's AlignSize 1024 <= i0's largest unaligned 1024, equal AlignSize
    // (1024), o without children: i0 becomes the parent and o its child. o, now a child,
    // takes nothing more; i0 is full; i1 is continuous. Blocks: i0 > o; i1: arena
    // 1024 + 512, o at i0's head. (Were o kept apart: 1024 + 1024 + 512.)
    let p = reverse_host(K, K, None);
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, K + 512);
    assert_eq!(["o", "i0", "i1"].map(|n| off(&p, &plan, n)), [0, 0, K]);
    let i0 = plan
        .blocks
        .iter()
        .position(|b| b.members.iter().any(|&m| p.buffers[m].name == "i0"))
        .unwrap();
    let o = plan
        .blocks
        .iter()
        .find(|b| b.members.iter().any(|&m| p.buffers[m].name == "o"))
        .unwrap();
    assert_eq!((o.level, o.parent), (BlockLevel::Child, Some(i0)));
    assert_eq!(groups(&p, &plan), ["i0", "i1", "o"]);
    // ge-block keeps it: max-block has no level 2 (NeedLevel2Reuse), so 1024 + 1024 + 512.
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.peak, K + 512);
    assert_eq!(plan.stat("max_block"), Some(2 * K + 512));
    // A MemSet op at step 3, after o's producer: ReuseBlocksByLifeTime tests the last
    // atomic-clean op (GetAtomicAddrCleanId) only when the parent is continuous, and here
    // the parent in the loop is o, so the reverse case still happens.
    let plan = check(&reverse_host(K, K, Some(3)), "ge-binary-block", &opts());
    assert_eq!(plan.peak, K + 512);
    // i0 of 1000 B (block 1024, unaligned 1000) sorts after o (1000 < 1024) and cannot
    // take it: AddContinuousLifeReuseBlock finds o larger than i0 (1024 > 1000), a
    // conflict. o stays apart: 1024 + 1024 + 512.
    let p = reverse_host(K, 1000, None);
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, 2 * K + K / 2);
    assert_eq!(groups(&p, &plan), ["i0", "i1", "o"]);
    assert!(plan.blocks.iter().all(|b| b.parent.is_none()));
}

#[test]
fn continuous_outputs_share_one_block_at_consecutive_offsets() {
    // o0 (1000 B -> 1024), o1 (512), o2 (100 B -> 512): one block of 2048; t [6,6] of 2048
    // later takes the whole block (exact size class).
    let mut o0 = buf("o0", 1000, 1, 2);
    let mut o1 = buf("o1", 512, 1, 5);
    let mut o2 = buf("o2", 100, 1, 3);
    cont(&mut o0, 7, 0, true);
    cont(&mut o1, 7, 1, true);
    cont(&mut o2, 7, 2, true);
    let t = buf("t", 2 * K, 6, 6);
    let p = Problem::from_buffers("cout", alloc::vec![o2, o0, o1, t]);
    let plan = check(&p, "ge-binary-block", &opts());
    let base = off(&p, &plan, "o0");
    assert_eq!(off(&p, &plan, "o1"), base + K);
    assert_eq!(off(&p, &plan, "o2"), base + K + 512);
    assert_eq!(groups(&p, &plan), ["o0+o1+o2+t"]);
    let blk = &plan.blocks[0];
    assert_eq!(
        (blk.size, blk.tag.as_deref()),
        (2 * K, Some("continuous-output"))
    );
    assert_eq!(plan.peak, 2 * K);
}

#[cfg(feature = "serde")]
#[test]
fn ref_outputs_share_their_input_block() {
    // C writes c in place of a (GE ref / in-place symbol): lowering merges them, so a+c is
    // one buffer [0,3] and D's d reuses s's block: 2 blocks. Without the ref: a [0,2],
    // s [1,2], c [2,3] need 3 blocks, and d takes s's.
    let graph = |refs: &str| {
        alloc::format!(
            r#"{{"format":"memplan.graph/1","tensors":[{{"name":"a","bytes":1048576}},
            {{"name":"s","bytes":1048576}},{{"name":"c","bytes":1048576}},{{"name":"d","bytes":1048576}}],
            "ops":[{{"name":"A","outputs":["a"]}},{{"name":"B","outputs":["s"]}},
            {{"name":"C","inputs":["a","s"],"outputs":["c"],"attrs":{{"ref_outputs":{refs}}}}},
            {{"name":"D","inputs":["c"],"outputs":["d"]}}]}}"#
        )
    };
    let lower = |text: &str| {
        crate::import::json::parse(text)
            .unwrap()
            .lower(&crate::graph::Bindings::new())
            .unwrap()
            .problem
    };
    let o = PlanOptions::default(); // GE padding: 1 MiB costs 1 MiB + 512
    let with = lower(&graph(r#"{"c":"a"}"#));
    assert_eq!(with.buffers.len(), 3);
    assert_eq!(with.buffers[0].aliases, ["c"]);
    let plan = check(&with, "ge-block", &o);
    assert_eq!(plan.peak, 2 * (MIB + 512));
    assert_eq!(groups(&with, &plan), ["a", "s+d"]);
    let without = lower(&graph("{}"));
    let plan = check(&without, "ge-block", &o);
    assert_eq!(plan.peak, 3 * (MIB + 512));
}

/// Ops 0..5: 0,1,2 on stream 0 (a chain), 3,4 on stream 1; `a` made at 0 and read at 1 on
/// stream 0, `b` made at 3 and read at 4 on stream 1.
fn two_streams(edge_from: Option<u64>) -> Problem {
    let op = |stream: u32, preds: Vec<u64>| OpInfo {
        stream,
        preds,
        ..OpInfo::default()
    };
    let a = buf("a", K, 0, 1);
    let mut b = buf("b", K, 3, 4);
    b.stream = 1;
    let mut p = Problem::from_buffers("streams", alloc::vec![a, b]);
    p.ops = alloc::vec![
        op(0, alloc::vec![]),
        op(0, alloc::vec![0]),
        op(0, alloc::vec![1]),
        op(1, edge_from.into_iter().collect()),
        op(1, alloc::vec![3]),
    ];
    p
}

#[test]
fn streams_reuse_across_only_through_dependency_edges() {
    // Level 1 never crosses streams; level 2 only when an edge orders the lifetimes.
    let p = two_streams(None);
    assert_eq!(check(&p, "ge-block", &opts()).peak, 2 * K);
    // Op 3 depends on op 2 (stream 0, after a's last use at 1): b nests in a's block.
    let p = two_streams(Some(2));
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, K);
    assert_eq!(off(&p, &plan, "a"), off(&p, &plan, "b"));
    assert_eq!(check(&p, "ge-max-block", &opts()).peak, 2 * K); // no level 2
    assert_eq!(check(&p, "ge-block", &opts()).peak, K);
    // GE needs the latest depended-on node to come *after* the parent's end: an edge from
    // a's last consumer itself (op 1) is not enough.
    let p = two_streams(Some(1));
    assert_eq!(check(&p, "ge-block", &opts()).peak, 2 * K);
    // The same on one stream reuses at level 1.
    let mut p = two_streams(None);
    p.buffers[1].stream = 0;
    p.ops[3].stream = 0;
    p.ops[4].stream = 0;
    assert_eq!(check(&p, "ge-max-block", &opts()).peak, K);
}

fn lower_json(text: &str) -> Problem {
    crate::import::json::parse(text)
        .unwrap()
        .lower(&crate::graph::Bindings::new())
        .unwrap()
        .problem
}

/// P (stream 0) makes `a`, R (stream 1) reads it, N (stream 0) does nothing, Q (stream 0)
/// makes `b`, S (stream 0) reads it. `after` is N's control predecessors.
fn cross_stream_reader(after: &str) -> Problem {
    lower_json(&alloc::format!(
        r#"{{"format":"memplan.graph/1","tensors":[{{"name":"a","bytes":1024}},
        {{"name":"b","bytes":1024}},{{"name":"r","bytes":1024}}],
        "ops":[{{"name":"P","outputs":["a"]}},
        {{"name":"R","inputs":["a"],"outputs":["r"],"stream":1}},
        {{"name":"N","after":{after}}},
        {{"name":"Q","outputs":["b"]}},{{"name":"S","inputs":["b"]}}]}}"#
    ))
}

#[test]
fn rule1_a_block_read_on_another_stream_waits_for_an_edge_back() {
    // GE block_mem_assigner.cc ReleaseMemory -> block_mem_stream.cc GetNodeMaxLifeBySymbol /
    // GetDiffStreamMaxLifeTime, block_mem_zero_copy.cc SetReleaseBlockLifeEnd: a's last
    // reader R runs on stream 1, so a's block on stream 0 ends at the first stream-0 node an
    // edge from stream 1 reaches, kMaxLifeTime if none.
    // Trace, 1 KiB tensors = two 512-B-aligned classes of 1024 B, all in class 1024:
    // - no edge back: a never released on stream 0; Q's b (step 3) finds no free 1024 B
    //   block on stream 0 -> new block; r (stream 1) cannot take a stream-0 block at level 1,
    //   and level 2 needs an edge ordering them: 3 blocks, 3 KiB.
    let p = cross_stream_reader("[]");
    assert_eq!(p.buffers[0].readers, [1]);
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.peak, 3 * K);
    assert_ne!(off(&p, &plan, "a"), off(&p, &plan, "b"));
    // The plan memplan made before this rule (b in a's block at step 3, a dead at step 1 by
    // steps alone) races with R on stream 1: the validator refuses it.
    let (ia, ib) = (0, 2); // buffers a, r, b
    assert_eq!(
        (p.buffers[ia].name.as_str(), p.buffers[ib].name.as_str()),
        ("a", "b")
    );
    let mut unsafe_plan = plan.clone();
    unsafe_plan.offsets[ib] = unsafe_plan.offsets[ia];
    assert_eq!(
        validate(&p, &unsafe_plan),
        Err(crate::validate::Violation::StreamRace {
            a: BufferId::new(ia),
            b: BufferId::new(ib),
            access: 1
        })
    );
    // - N waits for R: a's life on stream 0 ends at N (step 2); b (step 3 > 2) reuses a's
    //   block at level 1 -> 2 blocks {a,b}, {r}: 2 KiB.
    let p = cross_stream_reader(r#"["R"]"#);
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.peak, 2 * K);
    assert_eq!(groups(&p, &plan), ["a+b", "r"]);
}

#[test]
fn rule5_each_gears_continuous_inputs_stay_adjacent_and_overlay() {
    // GE MultiBatchClonePass clones every op per gear (docs/en/design/features/dynamic_gear.md),
    // so x and y are per gear even though y's size does not depend on the batch; the graph
    // input `in` and output `z` are one zero-copy tensor each at the largest gear.
    // dynamic_batch_mem_assigner.cc ResizeDynamicBatchBlocks: each gear's continuous-input
    // group is one virtual block, the smaller gear's at the head of the largest's.
    // Trace (GE padding ceil32(b)+32, then 512 alignment; gears 1 and 4):
    //   x@1 = 1024 B -> 1536, y@1 = 4096 -> 4608: gear 1 run 6144
    //   x@4 = 4096 -> 4608, y@4 = 4608: gear 4 run 9216 -> continuous region max = 9216
    //   z (output, 8192 B at batch 4) -> 8704; in (input, 4096 B at batch 4) -> 4608
    //   total 9216 + 8704 + 4608 = 22 528 B.
    let g = crate::import::json::parse(
        r#"{"format":"memplan.graph/1","tensors":[
        {"name":"in","dtype":"float32","shape":["batch",256]},
        {"name":"x","dtype":"float32","shape":["batch",256]},
        {"name":"y","bytes":4096},
        {"name":"z","dtype":"float32","shape":["batch",512]}],
        "ops":[{"name":"A","inputs":["in"],"outputs":["x"]},{"name":"B","outputs":["y"]},
        {"name":"C","type":"HcomAllGather","inputs":["x","y"],"outputs":["z"],
         "attrs":{"continuous_inputs":true}}],
        "inputs":["in"],"outputs":["z"]}"#,
    )
    .unwrap();
    let p = crate::graph::gears::expand(&g, &crate::graph::Bindings::new(), "batch", &[1, 4])
        .unwrap()
        .problem;
    let names: Vec<&str> = p.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "in",
            "z",
            "x@Batch_1",
            "y@Batch_1",
            "x@Batch_4",
            "y@Batch_4"
        ]
    );
    assert_eq!(p.buffers[0].size, 4096); // the largest gear's input
    let plan = check(&p, "ge-block", &PlanOptions::default());
    assert_eq!(plan.peak, 22_528);
    // GE's statistics count the ungeared tensors and the largest gear's only
    // (GetMaxBatchAllMemorySize): in 4608 + z 8704 + x@4 4608 + y@4 4608, none reused.
    for s in ["total_size", "no_reuse", "theory_min", "memoffset"] {
        assert_eq!(plan.stat(s), Some(22_528), "{s}");
    }
    let (x1, y1, x4, y4) = (
        off(&p, &plan, "x@Batch_1"),
        off(&p, &plan, "y@Batch_1"),
        off(&p, &plan, "x@Batch_4"),
        off(&p, &plan, "y@Batch_4"),
    );
    assert_eq!((x1, y1 - x1), (x4, 1536)); // both gears from one start
    assert_eq!(y4 - x4, 4608);
    // The layout memplan made before (x@1, x@4, y@1, y@4 in a row) broke gear 1's group.
    let mut before = plan.clone();
    let i = |n: &str| p.buffers.iter().position(|b| b.name == n).unwrap();
    let base = plan.peak; // above everything else
    before.offsets[i("x@Batch_1")] = base;
    before.offsets[i("x@Batch_4")] = base + 1536;
    before.offsets[i("y@Batch_1")] = base + 1536 + 4608;
    before.offsets[i("y@Batch_4")] = base + 1536 + 2 * 4608;
    before.peak = base + 1536 + 3 * 4608;
    assert!(matches!(
        validate(&p, &before),
        Err(crate::validate::Violation::NotAdjacent { .. })
    ));
}

#[test]
fn each_gears_continuous_outputs_are_one_block_overlaid_like_any_other() {
    // GE clones the graph per gear (MultiBatchClonePass), so each clone's S applies its own
    // continuous-output block (block_mem_assigner.cc ApplyContinuousMemory: one block, the sum
    // of the outputs each rounded to 512, attached to output 0, the others at the running sum,
    // graph_mem_assigner.cc AssignContinuousOutputMemory). The block is not a
    // `continuous_block_` (ApplyMemoryParam's continuous is false) and is reusable, so
    // dynamic_batch_mem_assigner.cc puts it in the normal class: the largest gear's blocks
    // make the virtual block, the smaller gears' are packed into it from its start.
    // Sizes (GE padding ceil32(b)+32, then 512; gears 1 and 4):
    //   a@1 256 B -> 512, b@1 512 -> 1024: gear 1's block 1536
    //   a@4 1024 -> 1536, b@4 2048 -> 2560: gear 4's block 4096 (the virtual block)
    //   y (output) and in (input), 1024 B at batch 4 -> 1536 each, zero-copy after them
    //   total 4096 + 1536 + 1536 = 7168 B.
    // issue 30: the two gears' outputs used to be one unit, gear 1's members not adjacent.
    let g = crate::import::json::parse(
        r#"{"format":"memplan.graph/1","tensors":[
        {"name":"in","dtype":"float32","shape":["batch",64]},
        {"name":"a","dtype":"float32","shape":["batch",64]},
        {"name":"b","dtype":"float32","shape":["batch",128]},
        {"name":"y","dtype":"float32","shape":["batch",64]}],
        "ops":[{"name":"S","inputs":["in"],"outputs":["a","b"],
                "attrs":{"continuous_outputs":true}},
               {"name":"C","inputs":["a","b"],"outputs":["y"]}],
        "inputs":["in"],"outputs":["y"]}"#,
    )
    .unwrap();
    let p = crate::graph::gears::expand(&g, &crate::graph::Bindings::new(), "batch", &[1, 4])
        .unwrap()
        .problem;
    for s in ["ge-block", "ge-binary-block", "ge-max-block"] {
        let plan = check(&p, s, &PlanOptions::default());
        assert_eq!(plan.peak, 7168, "{s}");
        let at: Vec<u64> = [
            "a@Batch_1",
            "b@Batch_1",
            "a@Batch_4",
            "b@Batch_4",
            "y",
            "in",
        ]
        .map(|n| off(&p, &plan, n))
        .to_vec();
        assert_eq!(at, [0, 512, 0, 1536, 4096, 5632], "{s}");
        // GE's statistics: the ungeared tensors and the largest gear's (in, y, gear 4's block)
        assert_eq!(plan.stat("total_size"), Some(7168), "{s}");
        assert_eq!(plan.stat("no_reuse"), Some(3072), "{s}");
    }
}

#[test]
fn rule8_an_ops_freed_inputs_go_on_the_free_list_in_input_order() {
    // GE block_mem_assigner.cc ReleaseInputNodeOutMemory walks the consumer's inputs in
    // GetSortAllInDataAnchors order, pushing each freed block on the back of the free list;
    // ApplyMemory scans from the back (GetLastReleaseBlock). max-block (one size class, no
    // level 2, so level 1 alone decides): c (step 2) finds nothing free yet (a and b are
    // freed after C's outputs); C reads [b, a]: b is pushed, then a, so D's d takes a's
    // block. Blocks {a,d}, {b}, {c}, Resize() to their largest member: 1 + 1 + 4 = 6 KiB.
    let graph = |inputs: &str| {
        lower_json(&alloc::format!(
            r#"{{"format":"memplan.graph/1","tensors":[{{"name":"a","bytes":1024}},
            {{"name":"b","bytes":1024}},{{"name":"c","bytes":4096}},{{"name":"d","bytes":1024}}],
            "ops":[{{"name":"A","outputs":["a"]}},{{"name":"B","outputs":["b"]}},
            {{"name":"C","inputs":{inputs},"outputs":["c"]}},
            {{"name":"D","inputs":["c"],"outputs":["d"]}}]}}"#
        ))
    };
    let p = graph(r#"["b","a"]"#);
    let plan = check(&p, "ge-max-block", &opts());
    assert_eq!(groups(&p, &plan), ["a+d", "b", "c"]);
    assert_eq!(plan.peak, 6 * K);
    // Inputs [a, b]: a is pushed first, b last, and d takes b's block.
    let p = graph(r#"["a","b"]"#);
    let plan = check(&p, "ge-max-block", &opts());
    assert_eq!(groups(&p, &plan), ["a", "b+d", "c"]);
}

#[test]
fn rule2_cross_stream_level2_follows_stream_program_order() {
    // GE block_mem_stream.cc GetDependLifeBegin: for a candidate on stream 1 whose first node
    // is op 4, the latest edge into stream 1 at or before op 4 counts: op 3 waits for op 2
    // (stream 0), and op 4 comes after op 3 on stream 1. 2 > a's end (1), so b nests in a's
    // block at level 2 (memory_block.cc CanBlockLifeReuse): 1 block, 1 KiB. Op 4 itself has
    // no edge; counting only its own ancestry (memplan before) found none: 2 KiB.
    let op = |stream: u32, preds: Vec<u64>| OpInfo {
        stream,
        preds,
        ..OpInfo::default()
    };
    let a = buf("a", K, 0, 1);
    let mut b = buf("b", K, 4, 4);
    b.stream = 1;
    let mut p = Problem::from_buffers("program-order", alloc::vec![a, b]);
    p.ops = alloc::vec![
        op(0, alloc::vec![]),
        op(0, alloc::vec![0]),
        op(0, alloc::vec![1]),
        op(1, alloc::vec![2]),
        op(1, alloc::vec![]),
    ];
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, K);
    assert_eq!(off(&p, &plan, "a"), off(&p, &plan, "b"));
    // Without op 3's edge nothing orders them.
    p.ops[3].preds.clear();
    assert_eq!(check(&p, "ge-binary-block", &opts()).peak, 2 * K);
}

#[test]
fn rule9_ref_onto_a_weight_has_no_block_and_empty_tensors_take_one_unit() {
    // GE block_mem_assigner.cc IsOutputIndexRef: Assign writes v in place of the variable w,
    // so v is w's memory and gets no block. tensor_utils.cc GetTensorMemorySizeInBytes: a
    // zero-element tensor is 32 B, so e gets a 512 B block (ceil512(32)). Trace with GE
    // padding: x (input, 1 KiB -> 1536, zero-copy), e 512, y (1 KiB -> 1536, output,
    // zero-copy): feature maps {e} 512 + zero copy 1536 + 1536 = 3584 B.
    let p = lower_json(
        r#"{"format":"memplan.graph/1","tensors":[{"name":"x","bytes":1024},
        {"name":"w","bytes":4096,"kind":"weight"},{"name":"v","bytes":4096},
        {"name":"e","bytes":0},{"name":"y","bytes":1024}],
        "ops":[{"name":"Assign","inputs":["w","x"],"outputs":["v"],
                "attrs":{"ref_outputs":{"v":"w"}}},
               {"name":"Empty","inputs":["x"],"outputs":["e"]},
               {"name":"Out","inputs":["v","e"],"outputs":["y"]}],
        "inputs":["x"],"outputs":["y"]}"#,
    );
    let names: Vec<&str> = p.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["x", "e", "y"]);
    let plan = check(&p, "ge-block", &PlanOptions::default());
    assert_eq!(plan.sizes[1], 512);
    assert_eq!(plan.peak, 512 + 1536 + 1536);
}

#[test]
fn rule7_max_block_gives_a_request_above_the_range_its_own_class() {
    // GE max_block_mem_assigner.cc GetMemoryRanges: one range, the largest single tensor
    // (1 KiB here); block_mem_assigner.cc GetBlockSize: a request above every range keeps its
    // exact size, so the continuous-output group g (2 x 1 KiB = 2 KiB, ApplyContinuousMemory)
    // cannot take a's freed 1 KiB block (ApplyMemory needs Size() == block_size): blocks
    // {a, c} (c takes a's block later), {g}: 1 + 2 = 3 KiB. With one class for all (memplan
    // before), g took a's block and c g's: one 2 KiB block {a, g, c}, which GE never builds.
    let mut g0 = buf("g0", K, 2, 3);
    let mut g1 = buf("g1", K, 2, 3);
    cont(&mut g0, 0, 0, true);
    cont(&mut g1, 0, 1, true);
    let p = Problem::from_buffers(
        "range",
        alloc::vec![buf("a", K, 0, 1), g0, g1, buf("c", K, 4, 5)],
    );
    let plan = check(&p, "ge-max-block", &opts());
    assert_eq!(groups(&p, &plan), ["a+c", "g0+g1"]);
    assert_eq!(plan.peak, 3 * K);
}

#[test]
fn rule6_each_memory_type_is_its_own_arena_from_zero() {
    // GE graph_mem_assigner.cc AddBlockMemOffset: offsets run per memory type from 0; the
    // model's memory size is the HBM offset, P2P is reported apart. a (HBM) and p, q
    // (P2P_DDR) all live together: HBM arena {a} 1 KiB, P2P arena {p} + {q} 2 KiB; a and p
    // both at offset 0.
    let a = buf("a", K, 0, 1);
    let mut p_ = buf("p", K, 0, 1);
    let mut q = buf("q", K, 0, 1);
    p_.memory_type = 1;
    q.memory_type = 1;
    let p = Problem::from_buffers("types", alloc::vec![a, p_, q]);
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.peak, K);
    let arenas: Vec<(&str, u64)> = plan
        .arenas
        .iter()
        .map(|a| (a.name.as_str(), a.bytes))
        .collect();
    assert_eq!(arenas, [("HBM", K), ("P2P_DDR", 2 * K)]);
    assert_eq!((off(&p, &plan, "a"), off(&p, &plan, "p")), (0, 0));
    assert_eq!(plan.stat("memoffset@P2P_DDR"), Some(2 * K));
    // In one offset space the same offsets would overlap.
    let mut one = plan.clone();
    one.arenas.clear();
    one.peak = 2 * K;
    assert!(matches!(
        validate(&p, &one),
        Err(crate::validate::Violation::Overlap { .. })
    ));
}

#[test]
fn rule9_binary_block_lays_blocks_out_in_level2_sort_order() {
    // GE block_mem_assigner.cc ReuseBlocksByLifeTime sorts memory_blocks_ in place with
    // CompareLifeInterval (largest AlignSize first), and ResizeMemoryBlocks /
    // AddBlockMemOffset then walk memory_blocks_ in that order: b (2 KiB) at 0, a (1 KiB)
    // at 2048, though a's block was created first. max-block has no level 2: creation order.
    let p = Problem::from_buffers(
        "order",
        alloc::vec![buf("a", K, 0, 1), buf("b", 2 * K, 0, 1)],
    );
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!((off(&p, &plan, "b"), off(&p, &plan, "a")), (0, 2 * K));
    let plan = check(&p, "ge-max-block", &opts());
    assert_eq!((off(&p, &plan, "a"), off(&p, &plan, "b")), (0, K));
}

#[test]
fn rule3_a_member_split_stays_when_nesting_then_fails() {
    // Level 1 (block_mem_assigner.cc ApplyMemory, exact 512 classes): P = {p 3 KiB [0,2]},
    // X = {x 2.5 KiB [3,4]}, C = {c1 2 KiB [1,1], c2 [3,3]} (c2 takes c1's freed block).
    // Level 2 (block_mem_assigner.cc ReuseBlocksByLifeTime, order P, X, C): X nests in P
    // (disjoint), cursor 2560. C on P (memory_block.cc AddLifeReuseBlock): the block test
    // fails (spans [1,3], [0,2]), CanIntervalLifeReuse moves c1 (crosses p) to a clone and
    // keeps c2; P's child X crosses c2 (all cross: no split); P's size check 2560 + 2048 >
    // 3072 + 512 fails. The split stays: C = {c2}, clone {c1} inserted right after C. C's
    // turn as a parent: {c1} [1,1] is disjoint from c2 and nests in it. Blocks p | x | c2 |
    // c1 (no "c1+c2"), C at 3072 (after P), c1 at C's head; total 3072 + 2048.
    let p = Problem::from_buffers(
        "split-stays",
        alloc::vec![
            buf("p", 3 * K, 0, 2),
            buf("c1", 2 * K, 1, 1),
            buf("x", 2 * K + 512, 3, 4),
            buf("c2", 2 * K, 3, 3),
        ],
    );
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(groups(&p, &plan), ["c1", "c2", "p", "x"]);
    assert_eq!(
        (
            off(&p, &plan, "x"),
            off(&p, &plan, "c2"),
            off(&p, &plan, "c1")
        ),
        (0, 3 * K, 3 * K)
    );
    assert_eq!(plan.peak, 5 * K);
}

#[test]
fn rule3_a_split_in_a_child_that_fails_holds_for_the_next_child() {
    // Level 1: P = {p 8 KiB [0,0]}, X1 = {x1 3 KiB [1,2]}, X2 = {x2 3 KiB [2,3]} (x1 still
    // live at 2: a block of its own), Y = {y 2.5 KiB [3,4]}, C = {c1 2 KiB [1,1], c2 [4,4]}.
    // Level 2 (order P, X1, X2, Y, C): X1 nests in P at 0; X2 crosses x1 and goes after it
    // at 3072; Y nests in X1 (disjoint from x1). C on P (memory_block.cc AddLifeReuseBlock):
    // disjoint from p; P's first child X1: c1 crosses x1, CanIntervalLifeReuse moves it to
    // a clone before X1's children are tried; X1's child Y crosses c2; X1's size check
    // 2560 + 2048 > 3584 fails, and the split stays; P's second child X2 takes {c2} (disjoint)
    // at its head, 3072. The clone {c1} (inserted after C) on P: X1 crosses it, X2 is
    // disjoint, X2's child {c2} is disjoint and empty: {c1} nests in {c2}, also at 3072.
    // A walk that forgot the split at X1 would nest C whole, "c1+c2", in X2. Total: P's 8 KiB.
    let p = Problem::from_buffers(
        "split-in-child",
        alloc::vec![
            buf("p", 8 * K, 0, 0),
            buf("x1", 3 * K, 1, 2),
            buf("c1", 2 * K, 1, 1),
            buf("x2", 3 * K, 2, 3),
            buf("y", 2 * K + 512, 3, 4),
            buf("c2", 2 * K, 4, 4),
        ],
    );
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(groups(&p, &plan), ["c1", "c2", "p", "x1", "x2", "y"]);
    assert_eq!(
        [
            off(&p, &plan, "x1"),
            off(&p, &plan, "y"),
            off(&p, &plan, "x2"),
            off(&p, &plan, "c2"),
            off(&p, &plan, "c1")
        ],
        [0, 0, 3 * K, 3 * K, 3 * K]
    );
    assert_eq!(plan.peak, 8 * K);
}

#[test]
fn rule9_node_types_and_workspace_flags() {
    // GE block_mem_assigner.cc: a GetNext output is neither pre- nor post-reusable (life
    // begin forced to the start, never released). Chain G(GetNext) -> g -> A -> a -> B -> b
    // -> C -> c, 1 KiB each, max-block: g is never freed, so b cannot take g's block; a is
    // freed at B (after B's output), so c takes a's: {g}, {a,c}, {b} = 3 KiB. As an ordinary
    // op, b took g's block and c a's: 2 KiB.
    let graph = |ty: &str| {
        lower_json(&alloc::format!(
            r#"{{"format":"memplan.graph/1","tensors":[{{"name":"g","bytes":1024}},
            {{"name":"a","bytes":1024}},{{"name":"b","bytes":1024}},{{"name":"c","bytes":1024}}],
            "ops":[{{"name":"G","type":"{ty}","outputs":["g"]}},
            {{"name":"A","inputs":["g"],"outputs":["a"]}},
            {{"name":"B","inputs":["a"],"outputs":["b"]}},
            {{"name":"C","inputs":["b"],"outputs":["c"]}}]}}"#
        ))
    };
    let p = graph("GetNext");
    let plan = check(&p, "ge-max-block", &opts());
    assert_eq!(groups(&p, &plan), ["a+c", "b", "g"]);
    assert_eq!(plan.peak, 3 * K);
    let p = graph("Relu");
    assert_eq!(check(&p, "ge-max-block", &opts()).peak, 2 * K);
    // Workspace flags: GE workspace_reuse_flag[0] = false keeps workspace 0 to itself; an
    // atomic-clean workspace goes to the atomic region after the feature maps
    // (atomic_memory_assigner.cc).
    let p = lower_json(
        r#"{"format":"memplan.graph/1","tensors":[{"name":"a","bytes":1024}],
        "ops":[{"name":"A","outputs":["a"],"workspace_bytes":[1024,512],
                "workspace_flags":[["no_reuse"],["atomic_clean"]]},
               {"name":"B","inputs":["a"]}]}"#,
    );
    assert!(p.buffers[1].flags.no_reuse && p.buffers[2].flags.atomic_clean);
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.stat("atomic"), Some(512));
    assert_eq!(plan.stat("no_reuse"), Some(1024 + 512));
}

#[test]
fn gears_never_share_blocks_but_overlay() {
    // u (no gear) then v (gear 1), same size, disjoint lifetimes: without gears v takes u's
    // block; with the gear it may not (GE: equal batch_label_), and an ungeared block is
    // never overlaid.
    let p = Problem::from_buffers("g", alloc::vec![buf("u", K, 0, 1), buf("v", K, 2, 3)]);
    assert_eq!(check(&p, "ge-block", &opts()).peak, K);
    let mut q = p.clone();
    q.buffers[1].gear = Some(1);
    let plan = check(&q, "ge-block", &opts());
    assert_eq!(plan.peak, 2 * K);
    assert_eq!(groups(&q, &plan), ["u", "v"]);
    // Two gears, same shape: the second gear overlays the first (region = one gear).
    let mut q = p.clone();
    q.buffers[0].gear = Some(1);
    q.buffers[1].gear = Some(2);
    let plan = check(&q, "ge-block", &opts());
    assert_eq!(plan.peak, K);
    assert_eq!(groups(&q, &plan), ["u", "v"]);
}

#[test]
fn dynamic_batch_region_costs_the_largest_gear() {
    // s: no gear, [0,5], 512.
    // gear 1: g1a [1,2] 2048, g1b [3,4] 1024 -> g1b nests in g1a: gear 1 = 2048.
    // gear 2: three buffers live together, 1024 + 1024 + 512 = 2560: the largest gear.
    // Region = 2560, not 2048 + 2560; arena = 512 + 2560.
    let mut v = alloc::vec![buf("s", 512, 0, 5)];
    for (n, size, s, e, g) in [
        ("g1a", 2 * K, 1, 2, 1),
        ("g1b", K, 3, 4, 1),
        ("g2a", K, 1, 4, 2),
        ("g2b", K, 1, 4, 2),
        ("g2c", 512, 1, 4, 2),
    ] {
        let mut b = buf(n, size, s, e);
        b.gear = Some(g);
        v.push(b);
    }
    let p = Problem::from_buffers("gears", v);
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.stat("gear_1"), Some(2 * K));
    assert_eq!(plan.stat("gear_2"), Some(2 * K + 512));
    assert_eq!(plan.peak, 512 + 2 * K + 512);
    assert_eq!(off(&p, &plan, "s"), 0);
    // Gear 2 in its layout order, gear 1 (largest first) from the same start.
    assert_eq!(off(&p, &plan, "g2a"), 512);
    assert_eq!(off(&p, &plan, "g2b"), 512 + K);
    assert_eq!(off(&p, &plan, "g2c"), 512 + 2 * K);
    assert_eq!(off(&p, &plan, "g1a"), 512);
    assert_eq!(off(&p, &plan, "g1b"), 512);
    let virt = plan
        .blocks
        .iter()
        .position(|b| {
            b.tag
                .as_deref()
                .is_some_and(|t| t.starts_with("dynamic-batch"))
        })
        .unwrap();
    assert_eq!(plan.blocks[virt].size, 2 * K + 512);
    assert!(plan
        .blocks
        .iter()
        .filter(|b| b.parent == Some(virt))
        .all(|b| b.level == BlockLevel::Child));
}

#[test]
fn expandable_memory_cuts_the_largest_gear_at_400_mib() {
    // All buffers of a gear live together ([0,1]), so every buffer is its own block.
    // gear 1: 300, 200, 150 MiB (650, the largest); gear 2: 280, 280, 80 MiB (640).
    let mut v = Vec::new();
    for (n, mib, g) in [
        ("p", 300, 1),
        ("q", 200, 1),
        ("r", 150, 1),
        ("x", 280, 2),
        ("y", 280, 2),
        ("z", 80, 2),
    ] {
        let mut b = buf(n, mib * MIB, 0, 1);
        b.gear = Some(g);
        v.push(b);
    }
    let p = Problem::from_buffers("split", v);
    // One virtual block: gear 2 back to back from 0, y straddles 300 MiB; region 650 MiB.
    let plan = check(&p, "ge-block", &opts());
    assert_eq!(plan.peak, 650 * MIB);
    assert_eq!(
        ["x", "y", "z"].map(|n| off(&p, &plan, n)),
        [0, 280 * MIB, 560 * MIB]
    );
    // Expandable: virtual blocks [p] = 300 and [q, r] = 350 (300 + 200 would pass 400).
    // x -> first at 0; y no longer fits there -> second at 300; z: 280 + 80 > 350 and no
    // virtual block is left, so it stands alone after the region: 650 + 80 MiB.
    let ex = PlanOptions {
        expandable_memory: true,
        ..opts()
    };
    let plan = check(&p, "ge-block", &ex);
    assert_eq!(
        ["p", "q", "r"].map(|n| off(&p, &plan, n)),
        [0, 300 * MIB, 500 * MIB]
    );
    assert_eq!(
        ["x", "y", "z"].map(|n| off(&p, &plan, n)),
        [0, 300 * MIB, 650 * MIB]
    );
    assert_eq!(plan.peak, 730 * MIB);
    let sizes: Vec<u64> = plan
        .blocks
        .iter()
        .filter(|b| {
            b.tag
                .as_deref()
                .is_some_and(|t| t.starts_with("dynamic-batch"))
        })
        .map(|b| b.size)
        .collect();
    assert_eq!(sizes, [300 * MIB, 350 * MIB]);
    assert!(plan.notes.iter().any(|n| n.contains("no room")));
}

#[test]
fn level2_slack_lets_a_parent_grow_by_one_alignment() {
    // p [0,1] 2048; c1 [2,3] 1536 and c2 [2,3] 1024 nest after one another: 1536 + 1024 =
    // 2560 <= 2048 + 512, so p grows to 2560; at alignment 32 the slack is 32 and c2 stays out.
    let p = Problem::from_buffers(
        "slack",
        alloc::vec![
            buf("p", 2 * K, 0, 1),
            buf("c1", K + 512, 2, 3),
            buf("c2", K, 2, 3)
        ],
    );
    let plan = check(&p, "ge-binary-block", &opts());
    assert_eq!(plan.peak, 2 * K + 512);
    let fine = PlanOptions {
        alignment: 32,
        ..opts()
    };
    let plan = check(&p, "ge-binary-block", &fine);
    assert_eq!(plan.peak, 3 * K);
}

#[test]
fn awkward_inputs_do_not_break_the_plan() {
    // Zero-size, a pinned offset, an alignment the block alignment cannot give, a constant.
    let mut v = alloc::vec![buf("zero", 0, 0, 3), buf("a", 700, 0, 1)];
    let mut pinned = buf("pin", 100, 0, 3);
    pinned.fixed_offset = Some(0);
    let mut odd = buf("odd", 300, 1, 2);
    odd.alignment = 3;
    let mut w = buf("w", 512, 0, 3);
    w.kind = BufferKind::Constant;
    v.extend([pinned, odd, w, buf("b", 700, 2, 3)]);
    let p = Problem::from_buffers("awkward", v);
    for s in ["ge-block", "ge-binary-block", "ge-max-block"] {
        let plan = check(&p, s, &PlanOptions::default());
        assert_eq!(off(&p, &plan, "pin"), 0);
        assert!(off(&p, &plan, "a") >= 512);
    }
    let mut huge = buf("huge", u64::MAX - 10, 0, 0);
    huge.alignment = 1;
    let p = Problem::from_buffers("huge", alloc::vec![huge, buf("x", 10, 0, 0)]);
    assert!(crate::strategy::plan(&p, "ge-block", &PlanOptions::default()).is_err());
}

mod random {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    struct Raw {
        size: u64,
        start: u64,
        len: u64,
        kind: u8,
        gear: u8,
        flags: u8,
        cont: u8,
        align: u8,
    }

    fn raw() -> impl Strategy<Value = Raw> {
        (
            0u64..5000,
            0u64..40,
            0u64..12,
            0u8..10,
            0u8..6,
            0u8..16,
            0u8..12,
            0u8..10,
        )
            .prop_map(|(size, start, len, kind, gear, flags, cont, align)| Raw {
                size,
                start,
                len,
                kind,
                gear,
                flags,
                cont,
                align,
            })
    }

    fn build(raws: &[Raw], ops: &[(u32, Vec<u64>)], pin: bool) -> Problem {
        let steps = ops.len() as u64;
        let mut v = Vec::new();
        for (i, r) in raws.iter().enumerate() {
            // a continuous-output group is one op's outputs: one producer step per group
            let start = if r.cont < 2 {
                (u64::from(r.cont) * 7 + u64::from(r.gear)) % steps
            } else {
                r.start % steps
            };
            let end = (start + r.len).min(steps - 1);
            let mut b = buf(&alloc::format!("t{i}"), r.size, start, end);
            b.stream = ops[usize::try_from(start).unwrap()].0;
            b.kind = match r.kind {
                0 => BufferKind::GraphInput,
                1 => BufferKind::GraphOutput,
                2 => BufferKind::Workspace,
                _ => BufferKind::Activation,
            };
            if b.kind == BufferKind::Workspace {
                b.end = b.start;
            }
            b.gear = (r.gear >= 3).then(|| u64::from(r.gear - 2));
            b.flags.no_reuse = r.flags & 1 != 0 && r.flags > 8;
            b.flags.zero_copy = r.flags == 2;
            b.flags.atomic_clean = r.flags & 4 != 0 && r.flags < 8;
            b.flags.zero_copy_reuse = r.flags == 3 || r.flags == 5;
            if r.cont < 4 {
                b.continuous = Some(Continuous {
                    // one group per gear, as GE's clones have (rule 5)
                    group: u32::from(r.cont) * 8 + u32::from(r.gear),
                    index: u32::try_from(i).unwrap(),
                    outputs: r.cont < 2,
                });
            }
            b.alignment = match r.align {
                // a continuous member takes its group's alignment
                _ if b.continuous.is_some() => 1,
                0 => 3,
                1 => 1024,
                2 => 256,
                _ => 1,
            };
            // a continuous group lives in one memory type
            b.memory_type = u32::from(r.align == 9 && b.continuous.is_none());
            v.push(b);
        }
        if pin {
            // CSV pins; a graph's continuous members are never pinned
            if let Some(b) = v.first_mut().filter(|b| b.continuous.is_none()) {
                b.fixed_offset = Some(0);
            }
        }
        let mut p = Problem::from_buffers("random", v);
        p.steps = steps;
        p.ops = ops
            .iter()
            .map(|(s, preds)| OpInfo {
                stream: *s,
                preds: preds.clone(),
                ..OpInfo::default()
            })
            .collect();
        p
    }

    /// Block alignment 1/32/512, either padding, and every reuse switch.
    fn options() -> impl Strategy<Value = PlanOptions> {
        (
            prop_oneof![Just(1u64), Just(32), Just(512)],
            any::<bool>(),
            any::<bool>(),
            0u8..3,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(alignment, ge_pad, reuse, zc, atomic, expandable)| PlanOptions {
                    alignment,
                    padding: if ge_pad {
                        crate::plan::Padding::Ge
                    } else {
                        crate::plan::Padding::None
                    },
                    reuse,
                    zero_copy_io: zc != 0,
                    zero_copy_reuse: zc == 2,
                    atomic_centralised: atomic,
                    expandable_memory: expandable,
                    ..PlanOptions::default()
                },
            )
    }

    fn ops() -> impl Strategy<Value = Vec<(u32, Vec<u64>)>> {
        proptest::collection::vec((0u32..3, proptest::collection::vec(0u64..60, 0..3)), 1..60)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]
        #[test]
        fn plans_validate_and_respect_the_bound(
            raws in proptest::collection::vec(raw(), 0..300),
            ops in ops(),
            o in options(),
            pin in any::<bool>(),
        ) {
            let p = build(&raws, &ops, pin);
            let lb = crate::bound::lower_bound(&p).unwrap().lower_bound;
            for s in ["ge-block", "ge-binary-block", "ge-max-block"] {
                let plan = crate::strategy::plan(&p, s, &o).unwrap();
                prop_assert_eq!(
                    crate::validate::validate_with(&p, &plan, &(&o).into()),
                    Ok(()),
                    "{}",
                    s
                );
                // with arenas per memory type, the live set spreads over them
                let total = if plan.arenas.is_empty() {
                    plan.peak
                } else {
                    plan.arenas.iter().map(|a| a.bytes).sum()
                };
                prop_assert!(total >= lb);
            }
        }

        /// The fast level 2 gives the plans of the reference it replaced (one scan of every
        /// later block per parent), byte for byte: offsets, sizes, blocks, stats and notes.
        #[test]
        fn level2_plans_like_the_reference(
            raws in proptest::collection::vec(raw(), 0..300),
            ops in ops(),
            palette in 0u8..3,
            o in options(),
            pin in any::<bool>(),
        ) {
            // Palettes of few sizes make equal sizes (ties in the sort, level-1 blocks of
            // several members, member splits) common.
            let raws: Vec<Raw> = raws
                .into_iter()
                .map(|mut r| {
                    match palette {
                        1 => r.size = (r.size % 4 + 1) * 512,
                        2 => r.size = 1 << (r.size % 13),
                        _ => {}
                    }
                    r
                })
                .collect();
            let p = build(&raws, &ops, pin);
            prop_assert_eq!(
                binary_block(&p, &o),
                super::super::reference::binary_block_reference(&p, &o)
            );
            prop_assert_eq!(
                hybrid(&p, &o),
                super::super::reference::hybrid_reference(&p, &o)
            );
        }
    }

    /// Bench-like problems (the shape of `benches/strategies.rs`), large enough for deep
    /// nesting, long candidate scans and the depth limit, on one stream or three.
    fn generated(n: usize, seed: u64, streams: u32) -> Problem {
        let mut x = seed.max(1);
        let mut next = move |m: u64| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D) % m.max(1)
        };
        let palette: Vec<u64> = (0..16).map(|_| 64 << next(16)).collect();
        let steps = n as u64;
        let mut v = Vec::new();
        for i in 0..n {
            let size = if next(3) == 0 {
                palette[usize::try_from(next(16)).unwrap()]
            } else {
                let exp = 8 + next(15);
                ((1u64 << exp) + next(1 << exp)) / 64 * 64
            };
            let len = match next(1000) {
                0..=99 => 0,
                100..=699 => 1 + next(2),
                700..=899 => 3 + next(14),
                900..=979 => 17 + next(184),
                980..=997 => 201 + next(1800),
                _ => steps,
            };
            let start = i as u64;
            let mut b = buf(
                &alloc::format!("t{i}"),
                size,
                start,
                (start + len).min(steps - 1),
            );
            b.stream = u32::try_from(i as u64 % u64::from(streams)).unwrap();
            v.push(b);
        }
        let mut p = Problem::from_buffers("generated", v);
        if streams > 1 {
            p.steps = steps;
            p.ops = (0..steps)
                .map(|k| OpInfo {
                    stream: u32::try_from(k % u64::from(streams)).unwrap(),
                    preds: [k.checked_sub(1), k.checked_sub(1 + next(7))]
                        .into_iter()
                        .flatten()
                        .collect(),
                    ..OpInfo::default()
                })
                .collect();
        }
        p
    }

    #[test]
    fn level2_plans_like_the_reference_on_large_problems() {
        let exact = PlanOptions::exact();
        for (n, seed, streams) in [
            (3000, 1, 1),
            (3000, 2, 3),
            (6000, 3, 1),
            (2000, 4, 2),
            (4000, 5, 1),
        ] {
            let p = generated(n, seed, streams);
            for o in [&exact, &PlanOptions::default(), &opts()] {
                assert_eq!(
                    binary_block(&p, o),
                    super::reference::binary_block_reference(&p, o),
                    "{n} buffers, seed {seed}, {streams} stream(s)"
                );
            }
        }
        // A chain deeper than GE's nesting limit: sizes falling, lifetimes disjoint.
        let v = (0..300u64)
            .map(|i| buf(&alloc::format!("c{i}"), (400 - i) * 512, i, i))
            .collect();
        let p = Problem::from_buffers("chain", v);
        let plan = binary_block(&p, &opts());
        assert_eq!(plan, super::reference::binary_block_reference(&p, &opts()));
        // Deep chains with branches and member splits past the limit: sizes falling with
        // repeats (level-1 blocks of several members), some lifetimes overlapping the next
        // buffers', on one stream or two.
        for streams in [1u32, 2] {
            let v = (0..900u64)
                .map(|i| {
                    let len = match i % 11 {
                        0 => 3,
                        5 => 1,
                        _ => 0,
                    };
                    let mut b = buf(
                        &alloc::format!("d{i}"),
                        (320 - (i % 300)) * 512 + (i % 3) * 64,
                        i,
                        i + len,
                    );
                    b.stream = u32::try_from(i % u64::from(streams)).unwrap();
                    b
                })
                .collect();
            let mut p = Problem::from_buffers("deep", v);
            if streams > 1 {
                p.steps = 904;
                p.ops = (0..904u64)
                    .map(|k| OpInfo {
                        stream: u32::try_from(k % u64::from(streams)).unwrap(),
                        preds: k.checked_sub(1).into_iter().collect(),
                        ..OpInfo::default()
                    })
                    .collect();
            }
            for o in [&PlanOptions::exact(), &opts()] {
                assert_eq!(
                    binary_block(&p, o),
                    super::reference::binary_block_reference(&p, o),
                    "deep, {streams} stream(s)"
                );
            }
        }
    }
}
