//! `memplan plan --capacity`: the memory budget check a pipeline runs. Figures by hand for
//! `static/samples/tetris.csv` (half-open lifetimes): the live bytes reach 64 B at steps 8-11
//! (e + f, f + g), so the lower bound is 64; a at 0, b and c at 32, d at 0, e at 48, f at 0,
//! g at 48, h at 0 packs everything in 64 B; no reuse needs the sum of sizes, 208 B.

mod common;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_in("../static/samples", args)
}

#[test]
fn a_plan_under_the_capacity_exits_zero() {
    let (code, out, err) = run(&["plan", "tetris.csv", "-s", "optimal", "--capacity", "64"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("fits capacity 64 B"), "{out}");
    let (code, _, err) = run(&["plan", "tetris.csv", "-s", "no-reuse", "--capacity", "1KiB"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_plan_over_the_capacity_exits_three_and_says_by_how_much() {
    let (code, _, err) = run(&["plan", "tetris.csv", "-s", "no-reuse", "--capacity", "200"]);
    assert_eq!(code, 3);
    assert_eq!(
        err.trim(),
        "tetris.csv: no-reuse: peak 208 B exceeds the capacity 200 B by 8 B"
    );
}

#[test]
fn a_capacity_below_the_lower_bound_is_answered_with_the_bound() {
    let (code, out, err) = run(&["plan", "tetris.csv", "-s", "optimal", "--capacity", "63"]);
    assert_eq!(code, 3);
    // the smallest peak is still planned and shown
    assert!(out.contains("proven optimal: peak 64 B"), "{out}");
    assert_eq!(
        err.trim(),
        "tetris.csv: optimal: peak 64 B exceeds the capacity 63 B by 1 B; \
         no plan can fit: the lower bound is 64 B"
    );
}

#[test]
fn capacity_units_and_bad_values() {
    let (code, _, _) = run(&["plan", "tetris.csv", "-s", "no-reuse", "--capacity", "1 KB"]);
    assert_eq!(code, 0);
    for (bad, says) in [
        ("12XB", "unknown unit"),
        ("99999999999999999999", "fits in 64 bits"),
        ("16EiB", "unknown unit"),
        ("17179869184GiB", "fits in 64 bits"),
        ("", "not a byte count"),
    ] {
        let (code, _, err) = run(&["plan", "tetris.csv", "--capacity", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains(says), "{bad}: {err}");
    }
}

/// Over the capacity, a search that proves its bound says no plan can fit, even where the
/// raw lower bound would allow one: two 1 B buffers live together, 512-aligned, need
/// 2 × 512 = 1024 B whatever the placement (a new user's BERT at 5 MiB said nothing).
#[test]
fn over_capacity_the_searchs_proof_says_none_can_fit() {
    let dir = std::env::temp_dir().join(format!("memplan-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("two.csv");
    std::fs::write(&file, "id,lower,upper,size\na,0,2,1\nb,1,3,1\n").expect("write");
    let path = file.to_string_lossy().to_string();
    let (code, _, err) = run(&[
        "plan",
        &path,
        "-s",
        "optimal",
        "--align",
        "512",
        "--capacity",
        "100",
    ]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(
        err.trim_end(),
        format!("{path}: optimal: peak 1024 B exceeds the capacity 100 B by 924 B; no plan of these planned sizes can fit: optimal proves every one needs at least 1024 B")
    );
}
