//! Hand-computed traces for each allocator.

use super::*;
use crate::problem::{Buffer, BufferKind, OpInfo};
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
    assert_eq!(r.failed, vec![3]);
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
        vec![1, 4],
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
