//! Hand-computed traces for each allocator.

use super::*;
use crate::problem::{Buffer, BufferId, BufferKind, OpInfo};
use alloc::vec;

/// Steps: 0: a(100) produced; 1: b(300) from a; 2: c(100) from b, d(50) unconsumed;
/// 3: e(200) from c (graph output).
fn trace() -> Problem {
    let mut bs = vec![
        Buffer::new("a", 100, 0, 1),
        Buffer::new("b", 300, 1, 2),
        Buffer::new("c", 100, 2, 3),
        Buffer::new("d", 50, 2, 2),
        Buffer::new("e", 200, 3, 3),
    ];
    for (b, p) in bs.iter_mut().zip([0u64, 1, 2, 2, 3]) {
        b.producer = Some(p);
    }
    bs[4].kind = BufferKind::GraphOutput;
    let mut p = Problem::from_buffers("t", bs);
    p.ops = ["A", "B", "C", "D"]
        .iter()
        .map(|n| OpInfo {
            name: (*n).into(),
            ..OpInfo::default()
        })
        .collect();
    p
}

fn check_accounting(r: &SimReport) {
    for s in &r.steps {
        assert_eq!(s.allocated - s.freed, s.current);
    }
}

#[test]
fn bfc_reuses_and_coalesces() {
    let r = simulate(&trace(), &AllocatorKind::Bfc { alignment: 1 }).unwrap();
    check_accounting(&r);
    // a@0; b@100 (a live); a freed after step 1; c fits a's hole @0; d@400 (top);
    // b freed after step 2 -> free [100,400); e(200) at step 3 while c (its input) is still
    // live: best fit is b's old chunk, split -> e@100.
    assert_eq!(
        r.offsets,
        vec![Some(0), Some(100), Some(0), Some(400), Some(100)]
    );
    assert_eq!(r.peak_bytes, 450);
    assert_eq!(r.allocations, 5);
    assert_eq!(r.frees, 4); // d is never freed
    assert_eq!(r.leaks.len(), 1);
    assert_eq!(r.leaks[0].name, "d");
    assert_eq!(r.leaks[0].producer_op.as_deref(), Some("C"));
    assert_eq!(r.current_bytes, 50);
    // peak in use: step 2 after c and d: b 300 + c 100 + d 50 = 450 with a freed; free = 0.
    assert_eq!(r.peak_in_use_bytes, 450);
}

#[test]
fn reuse_manager_first_fit_never_splits() {
    let r = simulate(
        &trace(),
        &AllocatorKind::Reuse {
            alignment: 1,
            capacity: 16,
        },
    )
    .unwrap();
    check_accounting(&r);
    // a: new [0,100); b: new [100,400); c: a's buffer (100 >= 100); d: new [400,450);
    // e (200): b's buffer (300 >= 200), freed at step 2.
    assert_eq!(
        r.offsets,
        vec![Some(0), Some(100), Some(0), Some(400), Some(100)]
    );
    assert_eq!(r.reserved_bytes, 450);
    assert_eq!(r.total_allocated, 100 + 300 + 100 + 50 + 300);
}

#[test]
fn reuse_manager_table_full_fails() {
    let r = simulate(
        &trace(),
        &AllocatorKind::Reuse {
            alignment: 1,
            capacity: 2,
        },
    )
    .unwrap();
    // a, b created; c reuses a; d needs a third buffer: fails; e reuses b.
    assert_eq!(r.failures, 1);
    assert_eq!(r.failed, BufferId::list(&[3]));
    assert!(r.leaks.is_empty());
}

#[test]
fn pool_takes_consecutive_blocks() {
    let r = simulate(
        &trace(),
        &AllocatorKind::Pool {
            pool_bytes: 1000,
            block_bytes: 100,
        },
    )
    .unwrap();
    check_accounting(&r);
    // a: block 0; b: blocks 1-3; c: block 0; d: block 4; e: blocks 1-2 (b freed at step 2).
    assert_eq!(
        r.offsets,
        vec![Some(0), Some(100), Some(0), Some(400), Some(100)]
    );
    assert_eq!(r.reserved_bytes, 1000);
    assert_eq!(r.peak_bytes, 500);
    // peak in use at step 2: b 300 + c 100 + d 100 = 500; free = 500 in one run [500,1000).
    assert_eq!(r.peak_in_use_bytes, 500);
    assert_eq!(r.fragmentation_at_peak, 0.0);
    let small = simulate(
        &trace(),
        &AllocatorKind::Pool {
            pool_bytes: 300,
            block_bytes: 100,
        },
    )
    .unwrap();
    assert_eq!(
        small.failed,
        BufferId::list(&[1, 4]),
        "b and e need 3 and 2 blocks next to a live block"
    );
}

#[test]
fn fragmentation_is_measured_at_the_peak() {
    // x [0,0] 100, y [0,2] 100, z [0,0] 100, then w [1,1] 250 cannot use the two holes.
    let p = Problem::from_buffers(
        "frag",
        vec![
            Buffer::new("x", 100, 0, 0),
            Buffer::new("y", 100, 0, 2),
            Buffer::new("z", 100, 0, 0),
            Buffer::new("w", 250, 1, 1),
        ],
    );
    let r = simulate(&p, &AllocatorKind::Bfc { alignment: 1 }).unwrap();
    assert_eq!(
        r.offsets[3],
        Some(200),
        "w reuses z's freed chunk at the top, extended"
    );
    assert_eq!(r.peak_bytes, 450);
    assert_eq!(r.peak_in_use_bytes, 350);
    // at that moment free = x's hole [0,100) only -> largest/total = 1 -> fragmentation 0
    assert_eq!(r.fragmentation_at_peak, 0.0);
}

#[test]
fn tiered_spills_down() {
    let levels = [
        tiered::Level {
            name: "L1".into(),
            capacity: 150,
        },
        tiered::Level {
            name: "L2".into(),
            capacity: 400,
        },
        tiered::Level {
            name: "DDR".into(),
            capacity: u64::MAX,
        },
    ];
    let t = tiered::place(&trace(), &levels).unwrap();
    // order by size: d50, a100, c100, e200, b300.
    // d -> L1 (step 2: 50); a -> L1 (steps 0-1: 100); c (steps 2-3) -> L1 has 50 at step 2: 150 ok;
    // e (step 3): L1 has c 100 -> 300 > 150 -> L2; b (steps 1-2): L1 full -> L2 (e not live) ok.
    assert_eq!(
        t.placement,
        vec![Some(0), Some(1), Some(0), Some(0), Some(1)]
    );
    assert_eq!(t.levels[0].peak_bytes, 150);
    assert_eq!(t.levels[1].peak_bytes, 300);
    assert_eq!(t.levels[1].spilled_in, 2);
    assert!(t.unplaced.is_empty());
}

#[test]
fn simulated_peaks_cover_the_lower_bound() {
    let p = trace();
    let lb = crate::lower_bound(&p).unwrap().lower_bound;
    for k in [
        AllocatorKind::Bfc { alignment: 256 },
        AllocatorKind::Reuse {
            alignment: 512,
            capacity: 64,
        },
        AllocatorKind::Pool {
            pool_bytes: 1 << 20,
            block_bytes: 64,
        },
    ] {
        let r = simulate(&p, &k).unwrap();
        assert!(r.peak_bytes >= lb, "{}: {} < {lb}", k.name(), r.peak_bytes);
    }
}

// ---- acl-pool (acl-adapter article: one block per request, free-block stack) ----

#[test]
fn acl_pool_one_block_per_request_from_a_stack() {
    let r = simulate(
        &trace(),
        &AllocatorKind::AclPool {
            block_bytes: 300,
            num_blocks: 3,
        },
    )
    .unwrap();
    check_accounting(&r);
    // blocks 0, 1, 2 pushed in order: block 2 on top at the start. step 0: a -> block 2
    // (@600). step 1: b -> block 1 (@300); a freed -> stack [0, 2]. step 2: c -> pop 2 (@600);
    // d -> pop 0 (@0); b freed -> stack [1]. step 3: e (200 <= 300) -> pop 1 (@300).
    assert_eq!(
        r.offsets,
        vec![Some(600), Some(300), Some(600), Some(0), Some(300)]
    );
    assert_eq!(
        r.peak_bytes, 900,
        "the first block handed out is the pool's last"
    );
    assert_eq!(r.reserved_bytes, 900); // 3 x 300
    assert_eq!(r.peak_in_use_bytes, 900); // step 2: b, c, d = 3 blocks
    assert_eq!(r.total_requested, 750); // 100+300+100+50+200
    assert_eq!(r.total_allocated, 1500); // 5 blocks of 300
    assert_eq!(r.system_overhead_bytes, 64 + 8); // aligned_alloc: alignment + pointer header
    assert_eq!(r.leaks.len(), 1);
    assert_eq!(r.leaks[0].bytes, 300, "d holds a whole block");
    assert_eq!(r.fragmentation_at_peak, 0.0);
}

#[test]
fn acl_pool_hands_out_the_last_freed_block_first() {
    // 4 blocks, 3 on top: x -> 3 (@192), y -> 2 (@128); freed after step 0, x then y: stack
    // [0, 1, 3, 2], 2 on top; z at step 1.
    let p = Problem::from_buffers(
        "lifo",
        vec![
            Buffer::new("x", 10, 0, 0),
            Buffer::new("y", 10, 0, 0),
            Buffer::new("z", 10, 1, 1),
        ],
    );
    let r = simulate(
        &p,
        &AllocatorKind::AclPool {
            block_bytes: 64,
            num_blocks: 4,
        },
    )
    .unwrap();
    // z gets y's block (freed last), not the lowest free block as first fit would.
    assert_eq!(r.offsets, vec![Some(192), Some(128), Some(128)]);
}

#[test]
fn acl_pool_failures_are_counted_not_errors() {
    // block 100: b (300) and e (200) are larger than a block: NULL.
    let r = simulate(
        &trace(),
        &AllocatorKind::AclPool {
            block_bytes: 100,
            num_blocks: 2,
        },
    )
    .unwrap();
    assert_eq!(r.failed, BufferId::list(&[1, 4]));
    assert_eq!(r.failures, 2);
    // 2 blocks of 300, 1 on top: a -> 1 (@300), b -> 0 (@0); a freed; c gets a's; d finds the
    // stack empty: NULL; b freed at step 2; e gets b's block (@0).
    let r = simulate(
        &trace(),
        &AllocatorKind::AclPool {
            block_bytes: 300,
            num_blocks: 2,
        },
    )
    .unwrap();
    assert_eq!(r.failed, BufferId::list(&[3]));
    assert_eq!(r.offsets[4], Some(0));
    assert!(r.leaks.is_empty(), "d got nothing, so nothing leaks");
    assert!(AclPoolCheck::zero_block_is_an_error());
}

struct AclPoolCheck;
impl AclPoolCheck {
    fn zero_block_is_an_error() -> bool {
        simulate(
            &trace(),
            &AllocatorKind::AclPool {
                block_bytes: 0,
                num_blocks: 2,
            },
        )
        .is_err()
            && simulate(
                &trace(),
                &AllocatorKind::AclPool {
                    block_bytes: 1 << 40,
                    num_blocks: 1 << 40,
                },
            )
            .is_err()
    }
}

#[test]
fn switches_turn_stats_and_leak_detector_off() {
    let kind = AllocatorKind::AclPool {
        block_bytes: 300,
        num_blocks: 3,
    };
    let on = simulate(&trace(), &kind).unwrap();
    assert_eq!(on.records.len(), 5);
    // the record of d: op C, requested 50, taken 300, never freed
    assert_eq!(on.records[3].name, "d");
    assert_eq!(on.records[3].op.as_deref(), Some("C"));
    assert_eq!((on.records[3].requested, on.records[3].taken), (50, 300));
    assert_eq!(on.records[3].free_step, None);
    assert_eq!(on.records[0].free_step, Some(1));
    let off = simulate_with(
        &trace(),
        &kind,
        SimSwitches {
            stats: false,
            leak_detector: false,
            record_capacity: None,
        },
    )
    .unwrap();
    assert_eq!(off.offsets, on.offsets, "the switches change no placement");
    assert!(off.records.is_empty() && off.leaks.is_empty() && off.steps.is_empty());
    assert_eq!((off.allocations, off.peak_in_use_bytes), (0, 0));
}

// ---- acl-tiered ----

fn three_levels() -> Vec<tiered::Level> {
    vec![
        tiered::Level {
            name: "L1".into(),
            capacity: 128,
        },
        tiered::Level {
            name: "L2".into(),
            capacity: 512,
        },
        tiered::Level {
            name: "DDR".into(),
            capacity: u64::MAX,
        },
    ]
}

#[test]
fn frequency_picks_the_level_from_uses_per_step() {
    use acl_tiered::frequency_level as f;
    // 2 uses over `live` steps: >= 1 per step (live <= 2) -> 0; >= 1/2 (<= 4) -> 1;
    // >= 1/4 (<= 8) -> 2; colder -> 3, capped at the last level.
    assert_eq!([f(1, 3), f(2, 3), f(3, 3), f(4, 3)], [0, 0, 1, 1]);
    assert_eq!([f(5, 3), f(8, 3), f(9, 3), f(u64::MAX, 3)], [2, 2, 3, 3]);
    assert_eq!(f(100, 1), 1);
}

#[test]
fn acl_tiered_spills_to_the_next_level_when_full() {
    let kind = AllocatorKind::AclTiered {
        levels: three_levels(),
        block_bytes: 64,
        policy: TierPolicy::Frequency,
        mapping: Vec::new(),
    };
    let r = simulate(&trace(), &kind).unwrap();
    check_accounting(&r);
    // Every tensor lives <= 2 steps: all ask L1 (2 blocks, offsets 0..128); L2 starts at 128.
    // a (2 blocks) -> L1 @0, L1 full. b (5) -> L2 blocks 0-4 @128 (spill); a freed.
    // c (2) -> L1 @0. d (1) -> L1 full -> L2 block 5 @128+320=448 (spill); b freed.
    // e (4) -> L1 holds c -> L2 blocks 0-3 @128 (spill).
    assert_eq!(
        r.offsets,
        vec![Some(0), Some(128), Some(0), Some(448), Some(128)]
    );
    let l1 = &r.levels[0];
    let l2 = &r.levels[1];
    assert_eq!((l1.level.allocations, l1.level.spilled_in), (2, 0));
    assert_eq!((l2.level.allocations, l2.level.spilled_in), (3, 3));
    assert_eq!(l1.peak_in_use, 128);
    assert_eq!(l2.peak_in_use, 384); // step 2: b 320 + d 64
                                     // per-level occupancy after step 2: L1 c 128, L2 d 64 (b freed), DDR 0
    assert_eq!(r.steps[2].levels, vec![128, 64, 0]);
    assert_eq!(r.reserved_bytes, 128 + 512); // DDR unused
    assert_eq!(r.peak_bytes, 128 + 384, "L1 top 2 blocks + L2 top 6 blocks");
    assert_eq!(r.system_overhead_bytes, 3 * 72);
    assert_eq!(r.records[1].level.as_deref(), Some("L2"));
}

#[test]
fn acl_tiered_mapping_pins_a_tensor_and_fails_when_its_level_is_full() {
    let kind = AllocatorKind::AclTiered {
        levels: three_levels(),
        block_bytes: 64,
        policy: TierPolicy::Fastest,
        mapping: vec![("e".into(), "L1".into()), ("b".into(), "DDR".into())],
    };
    let r = simulate(&trace(), &kind).unwrap();
    // b pinned to DDR (base 128 + 512 = 640); e pinned to L1 while c holds it: NULL.
    assert_eq!(r.offsets[1], Some(640));
    assert_eq!(r.failed, BufferId::list(&[4]));
    assert_eq!(r.levels[0].level.failures, 1);
    let bad = AllocatorKind::AclTiered {
        levels: three_levels(),
        block_bytes: 64,
        policy: TierPolicy::Fastest,
        mapping: vec![("e".into(), "L9".into())],
    };
    let e = alloc::format!("{}", simulate(&trace(), &bad).unwrap_err());
    assert!(e.contains("no level 'L9'"), "{e}");
}

// ---- ge-v1 (ActiveMemoryAllocator) ----

#[test]
fn ge_v1_bump_blocks_largest_first_never_returned() {
    let r = simulate(
        &trace(),
        &AllocatorKind::GeV1 {
            page_bytes: 2 << 20,
        },
    )
    .unwrap();
    check_accounting(&r);
    // a -> new block B0 [0,100). b -> B0 full -> new B1 [100,400); list [B1, B0]; a freed: B0
    // rewinds. step 2 (c 100, d 50, largest first): c -> B1 full, B0 @0 (hit); d -> new B2
    // [400,450); b freed: B1 rewinds. e -> B1 @100 (hit).
    assert_eq!(
        r.offsets,
        vec![Some(0), Some(100), Some(0), Some(400), Some(100)]
    );
    assert_eq!(r.reserved_bytes, 450);
    assert_eq!(r.cache_hits, 2);
    assert_eq!(r.peak_in_use_bytes, 450);
    assert_eq!(r.leaks.len(), 1);
}

#[test]
fn ge_v1_serves_a_step_largest_first_and_rounds_big_blocks_to_pages() {
    // step 0: s (10) then l (100) in problem order; GE serves l first.
    let p = Problem::from_buffers(
        "order",
        vec![
            Buffer::new("s", 10, 0, 0),
            Buffer::new("l", 100, 0, 0),
            Buffer::new("x", 60, 1, 1),
            Buffer::new("y", 40, 1, 1),
        ],
    );
    let r = simulate(&p, &AllocatorKind::GeV1 { page_bytes: 64 }).unwrap();
    // l (100 > page 64) -> new block of 128 @0; s -> tail 28 >= 10 -> @100 (hit).
    // step 1: both freed, block rewound: x -> @0, y -> @60 (hits).
    assert_eq!(r.offsets, vec![Some(100), Some(0), Some(0), Some(60)]);
    assert_eq!(r.reserved_bytes, 128);
    assert_eq!(r.cache_hits, 3);
}

// ---- ge-v2 (ScalableAllocator) ----

#[test]
fn ge_v2_caches_splits_and_merges_spans() {
    let r = simulate(
        &trace(),
        &AllocatorKind::GeV2 {
            page_bytes: 64,
            threshold_bytes: 1 << 30,
        },
    )
    .unwrap();
    check_accounting(&r);
    // pages of 64: a 2, b 5, c 2, d 1, e 4.
    // a -> device [0,128). b -> device [128,448). a freed: idle layer 2 = {0}.
    // c -> layer 2: span @0 (hit). d -> no layer >= 1 idle -> device [448,512). b freed: layer 5.
    // e (4) -> split the 5-page span @128: it keeps 1 page @128, e gets @192 (hit).
    assert_eq!(
        r.offsets,
        vec![Some(0), Some(128), Some(0), Some(448), Some(192)]
    );
    assert_eq!(r.reserved_bytes, 512);
    assert_eq!(r.cache_hits, 2);
    assert_eq!(r.peak_in_use_bytes, 512); // step 2: b 320 + c 128 + d 64
    assert_eq!(r.total_allocated, 128 + 320 + 128 + 64 + 256);
}

#[test]
fn ge_v2_merges_a_freed_span_with_its_idle_buddy() {
    // After the trace above e is freed and merges with the 1-page span @128 into 5 pages; a
    // later 5-page request takes it whole at 128.
    let bs = vec![
        Buffer::new("b", 320, 0, 0),
        Buffer::new("e", 256, 1, 1),
        Buffer::new("f", 320, 2, 2),
    ];
    let p = Problem::from_buffers("merge", bs);
    let r = simulate(
        &p,
        &AllocatorKind::GeV2 {
            page_bytes: 64,
            threshold_bytes: 1 << 30,
        },
    )
    .unwrap();
    // b device [0,320); freed. e (4) splits it: keeps 1 page @0, e @64; e freed, merges @0.
    // f (5 pages) -> exact layer 5 @0: no new device memory.
    assert_eq!(r.offsets, vec![Some(0), Some(64), Some(0)]);
    assert_eq!(r.reserved_bytes, 320);
    assert_eq!(r.cache_hits, 2);
}

#[test]
fn ge_v2_recycles_idle_memory_over_the_threshold() {
    let p = Problem::from_buffers(
        "recycle",
        vec![Buffer::new("x", 128, 0, 0), Buffer::new("y", 192, 1, 1)],
    );
    let kind = |t| AllocatorKind::GeV2 {
        page_bytes: 64,
        threshold_bytes: t,
    };
    // No threshold pressure: x [0,128) cached idle, y (3 pages) cannot use it: device [128,320).
    let r = simulate(&p, &kind(1 << 30)).unwrap();
    assert_eq!(r.offsets, vec![Some(0), Some(128)]);
    assert_eq!(r.reserved_bytes, 320);
    // Threshold 200: 128 held > 200 - 192 and 128 idle: recycle x's block, y goes to @0.
    let r = simulate(&p, &kind(200)).unwrap();
    assert_eq!(r.offsets, vec![Some(0), Some(0)]);
    assert_eq!(r.reserved_bytes, 192);
    // A request above the threshold fails.
    let r = simulate(&p, &kind(150)).unwrap();
    assert_eq!(r.failed, BufferId::list(&[1]));
}

// ---- issue 18: lifetimes reaching u64::MAX, memory scales with buffers ----

#[test]
fn a_lifetime_ending_at_u64_max_simulates_in_every_allocator() {
    let p = Problem::from_buffers(
        "max",
        vec![
            Buffer::new("x", 8, 0, u64::MAX),
            Buffer::new("y", 8, u64::MAX - 1, u64::MAX),
            Buffer::new("z", 16, 1_000_000_000_000, 2_000_000_000_000),
        ],
    );
    for a in registry::allocators() {
        let r = (a.run)(&p, &registry::RuntimeOptions::default()).unwrap();
        assert_eq!(r.failures, 0, "{}", a.name);
        // events at steps 0, 1e12, 2e12, 2^64-2, 2^64-1: five entries, not 2^64
        assert_eq!(r.steps.len(), 5, "{}", a.name);
        assert_eq!(r.steps.last().map(|s| s.step), Some(u64::MAX));
    }
    let t = tiered::place(&p, &registry::default_levels()).unwrap();
    assert_eq!(t.placement, vec![Some(0), Some(0), Some(0)]);
    assert_eq!(t.levels[0].peak_bytes, 24, "x + z (x + y is 16)");
}

// ---- statistics of every allocator: hits, probes, leak records, transfers (issue 27) ----

#[test]
fn every_reusing_allocator_counts_hits_and_probes() {
    // trace(): step 0 a; step 1 b, a freed; step 2 c, d, b freed; step 3 e, c and e freed.
    let run = |k: AllocatorKind| {
        let r = simulate(&trace(), &k).unwrap();
        (r.cache_hits, r.probes)
    };
    // reuse (a table scanned first to last): a new (table empty: 0 probes); b looks at a
    // (held): 1, new; c takes a's freed entry: 1 probe, hit; d looks at a (c), b (held): 2,
    // new; e looks at a (c), b (freed, 300 >= 200): 2, hit. 2 hits, 6 probes.
    assert_eq!(
        run(AllocatorKind::Reuse {
            alignment: 1,
            capacity: 16
        }),
        (2, 6)
    );
    // bfc: one size-ordered lookup per request (5); c takes a's freed chunk, e splits b's: 2.
    assert_eq!(run(AllocatorKind::Bfc { alignment: 1 }), (2, 5));
    // acl-pool, 3 blocks of 300: one pop per request (5); c gets a's freed block 2, e b's
    // block 1; a, b, d take never-used blocks: 2 hits.
    assert_eq!(
        run(AllocatorKind::AclPool {
            block_bytes: 300,
            num_blocks: 3
        }),
        (2, 5)
    );
    // pool, 10 blocks of 100, first fit block by block: a block 0 (1 probe); b 3 blocks
    // 1..=3 (blocks 0..=3 looked at: 4); c block 0, used before (1, hit); d block 4 (0..=4:
    // 5); e 2 blocks 1, 2 freed by b (0..=2: 3, hit). 2 hits, 14 probes.
    assert_eq!(
        run(AllocatorKind::Pool {
            pool_bytes: 1000,
            block_bytes: 100
        }),
        (2, 14)
    );
}

#[test]
fn a_full_leak_record_table_misses_the_leak() {
    let kind = AllocatorKind::AclPool {
        block_bytes: 300,
        num_blocks: 3,
    };
    let with = |cap| {
        simulate_with(
            &trace(),
            &kind,
            SimSwitches {
                record_capacity: cap,
                ..SimSwitches::default()
            },
        )
        .unwrap()
    };
    // unbounded: d (never freed, not an output) is the leak
    let all = with(None);
    assert_eq!((all.records.len(), all.records_dropped), (5, 0));
    assert_eq!(all.leaks.len(), 1);
    // 2 slots: a, b recorded; a freed after step 1 (slot free); c recorded at step 2 and d
    // finds both slots taken (b, c): dropped; b freed; e recorded at step 3. The leak is missed.
    let two = with(Some(2));
    let names: Vec<&str> = two.records.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "e"]);
    assert_eq!(two.records_dropped, 1);
    assert!(two.leaks.is_empty(), "d's record was dropped");
    assert_eq!(
        two.offsets, all.offsets,
        "the detector changes no placement"
    );
}

#[test]
fn transfers_count_graph_io_and_host_memory_reads() {
    let mut p = trace();
    // e (200 B) is the graph output: copied out once per run. c (100 B) in HOST memory, read
    // by the op at step 3: copied once; d (50 B) in HOST_SVM, read by nobody: at least once.
    p.buffers[2].memory_type = 2;
    p.buffers[2].readers = vec![3];
    p.buffers[3].memory_type = 3;
    let r = simulate(&p, &AllocatorKind::Bfc { alignment: 1 }).unwrap();
    assert_eq!(r.io_transfer_bytes, 200);
    assert_eq!(r.cross_type_transfer_bytes, 150);
}

// ---- runtime allocators per stream (issue 27: V1 shared, V2 one per stream) ----

#[test]
fn ge_v2_per_stream_caches_per_stream() {
    // a (stream 0) at step 0, b (stream 1) at step 1, c (stream 0) at step 2; 100 B each,
    // 64 B pages: 2 pages (128 B) a span. Each is freed after its step.
    let mut bs = vec![
        Buffer::new("a", 100, 0, 0),
        Buffer::new("b", 100, 1, 1),
        Buffer::new("c", 100, 2, 2),
    ];
    bs[1].stream = 1;
    let p = Problem::from_buffers("streams", bs);
    let (page_bytes, threshold_bytes) = (64, 1 << 30);
    // One shared V2 allocator (`ge-v2`, as V1 shares one): a new span @0; b and c reuse it.
    let shared = simulate(
        &p,
        &AllocatorKind::GeV2 {
            page_bytes,
            threshold_bytes,
        },
    )
    .unwrap();
    assert_eq!(shared.offsets, vec![Some(0), Some(0), Some(0)]);
    assert_eq!((shared.reserved_bytes, shared.cache_hits), (128, 2));
    // One per stream: stream 1 cannot take stream 0's idle span, so b gets new device memory
    // in stream 1's range (after stream 0's 128 B); c reuses a's span on stream 0.
    let per = simulate(
        &p,
        &AllocatorKind::GeV2PerStream {
            page_bytes,
            threshold_bytes,
        },
    )
    .unwrap();
    assert_eq!(per.offsets, vec![Some(0), Some(128), Some(0)]);
    assert_eq!((per.reserved_bytes, per.cache_hits), (256, 1));
    assert_eq!(per.peak_bytes, 256);
}
