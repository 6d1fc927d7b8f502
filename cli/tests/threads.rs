//! `memplan plan -s optimal --threads N`: searches side by side, the best kept. Figures by
//! hand for `static/samples/tetris.csv` (see `capacity.rs`): the lower bound is 64 B and a
//! plan at 64 B exists, so every search ends proven at 64 B.

mod common;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_in("../static/samples", args)
}

fn search(out: &str) -> (serde_json::Value, Vec<String>) {
    let v: serde_json::Value = serde_json::from_str(out).expect("JSON");
    let p = &v["plans"][0];
    let notes = p["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect();
    (p["search"].clone(), notes)
}

#[test]
fn two_threads_keep_the_best_and_say_so() {
    let args = ["plan", "tetris.csv", "-s", "optimal", "--format", "json"];
    let (code, out, err) = run(&[&args[..], &["--threads", "2"]].concat());
    assert_eq!(code, 0, "{err}");
    let (s, notes) = search(&out);
    assert_eq!(s["best_peak"], 64);
    assert_eq!(s["proven_optimal"], true);
    assert_eq!(s["counts"]["side_by_side"], 2);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("2 searches side by side, one thread each: variant ")),
        "{notes:?}"
    );
    // one thread: one search, no such note
    let (code, out, err) = run(&[&args[..], &["--threads", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let (s, notes) = search(&out);
    assert_eq!(s["counts"]["side_by_side"], 0);
    assert_eq!(s["counts"]["variant"], 0);
    assert!(
        !notes.iter().any(|n| n.contains("side by side")),
        "{notes:?}"
    );
    let (code, _, err) = run(&["plan", "tetris.csv", "-s", "optimal", "--threads", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("0 is not in 1..=64"), "{err}");
}
