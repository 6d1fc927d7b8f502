//! `memplan plan --batch` tables: what `--expandable-memory` changes (issue 27), on
//! `tests/gears/chain.json`: x -> A -> a -> B -> b -> C -> c -> D -> y, every tensor
//! `batch × …` float32, a, b, c 100 MiB per batch; gears 1 and 2.

mod common;

use common::run_in;

fn table(extra: &[&str]) -> String {
    let mut args = vec![
        "plan",
        "gears/chain.json",
        "-s",
        "ge-block",
        "--batch",
        "1,2",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = run_in("tests", &args);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn expandable_memory_changes_the_table() {
    // Gear 2: a, b, c are 200 MiB, each `ceil512(200 MiB + 32)` = 200 MiB + 512 planned.
    // Level 1 (block_mem_assigner.cc): c (made at step 3) takes a's block (a's last reader
    // B is step 2), so gear 2 has two blocks, {a, c} and {b}: 400 MiB + 1024 in all. Gear 1's
    // 100 MiB blocks are overlaid inside them. x and y are zero-copy, 512 B each.
    // Without expandable memory the gear's blocks form one virtual block (400 MiB + 1024,
    // shown 400.0 MiB); with it (dynamic_batch_mem_assigner.cc ResizeDynamicBatchBlocks,
    // kMaxSplitSizeForDynamicBatch = 400 MiB) the second block would pass 400 MiB, so it
    // starts a second virtual block: two of 200 MiB + 512.
    let plain = table(&[]);
    assert!(
        plain.contains("dynamic-batch virtual blocks: [400.0 MiB] (one per memory type"),
        "{plain}"
    );
    let cut = table(&["--expandable-memory"]);
    assert!(
        cut.contains("dynamic-batch virtual blocks: [200.0 MiB, 200.0 MiB] (expandable memory"),
        "{cut}"
    );
    // the arena is the same: 2 × (200 MiB + 512) + 2 × 512 = 419,432,448 B
    for t in [&plain, &cut] {
        assert!(t.contains(" 419432448 "), "{t}");
    }
}
