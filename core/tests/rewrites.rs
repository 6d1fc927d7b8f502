//! `--fuse` and `--in-place` on the hand-worked chain of `testdata/order/README.md`: each
//! option's live-set lower bound, and every strategy's plan valid under the validator.

use memplan_core::graph::rewrite::{Fuse, InPlace};
use memplan_core::import::load::{load, LoadOptions};

fn bound(fuse: &str, in_place: &str) -> (u64, memplan_core::import::load::Loaded) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/order/fusion.json");
    let bytes = std::fs::read(path).expect("testdata/order/fusion.json in the repository");
    let opts = LoadOptions {
        fuse: Fuse::parse(fuse).expect("fuse list"),
        in_place: InPlace::parse(in_place).expect("in-place list"),
        ..LoadOptions::default()
    };
    let l = load("fusion.json", &bytes, &opts).expect("loads");
    let b = memplan_core::lower_bound(&l.lowered.problem)
        .expect("bound")
        .lower_bound;
    (b, l)
}

#[test]
fn each_rewrite_gives_the_hand_worked_bound() {
    assert_eq!(bound("", "").0, 500);
    assert_eq!(bound("activation", "").0, 500);
    assert_eq!(bound("pad,quantize", "").0, 400);
    assert_eq!(bound("pad,quantize", "depthwise").0, 400);
    assert_eq!(bound("pad,quantize", "elementwise,depthwise").0, 300);
    assert_eq!(bound("", "elementwise").0, 500);
}

#[test]
fn the_rewrites_are_reported_and_every_plan_is_valid() {
    let (_, l) = bound("pad,quantize,activation", "elementwise,depthwise");
    let r = l.lowered.rewrites.as_ref().expect("a report");
    assert_eq!(r.fused, ["Q", "P", "R"]);
    // R fused into D: D writes r, over c
    assert_eq!(r.in_place, [("r".to_string(), "c".to_string())]);
    let p = &l.lowered.problem;
    let c = p.buffers.iter().find(|b| b.name == "c").unwrap();
    assert_eq!(c.aliases, ["r"]);
    assert_eq!((c.size, c.start, c.end), (200, 0, 2));
    for s in memplan_core::strategies() {
        let plan = memplan_core::plan(p, s.name, &memplan_core::PlanOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        memplan_core::validate(p, &plan).unwrap_or_else(|v| panic!("{}: {v:?}", s.name));
    }
}

#[test]
fn unknown_items_are_refused() {
    assert!(Fuse::parse("pad,conv")
        .unwrap_err()
        .to_string()
        .contains("--fuse conv"));
    assert!(InPlace::parse("all")
        .unwrap_err()
        .to_string()
        .contains("--in-place all"));
}
