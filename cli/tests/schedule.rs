//! `memplan plan --schedule memory`: the hand-worked graph of `testdata/order/README.md`
//! (file order 160 B, memory order 111 B, proven), its order and proof in the plan file, and
//! `memplan validate --model` loading the model again in the same order.

mod common;

#[test]
fn the_memory_order_reaches_the_hand_worked_optimum_and_validates() {
    let base = [
        "plan",
        "two-branches.json",
        "--strategy",
        "greedy-size-best-fit",
        "--align",
        "1",
        "--padding",
        "none",
        "--io-reuse",
        "--format",
        "json",
    ];
    let (code, out, err) = common::run_in("../testdata/order", &base);
    assert_eq!(code, 0, "{err}");
    let file: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(file["problem"]["lower_bound_bytes"], 160);

    let mut args = base.to_vec();
    args.extend_from_slice(&["--schedule", "memory"]);
    let (code, out, err) = common::run_in("../testdata/order", &args);
    assert_eq!(code, 0, "{err}");
    let file: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let p = &file["problem"];
    assert_eq!(p["lower_bound_bytes"], 111);
    assert_eq!(p["schedule"], "memory");
    let order: Vec<&str> = p["op_order"]
        .as_array()
        .expect("op order")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        order == ["A1", "A2", "B1", "B2", "C"] || order == ["B1", "B2", "A1", "A2", "C"],
        "{order:?}"
    );
    assert_eq!(p["schedule_search"]["file_peak"], 160);
    assert_eq!(p["schedule_search"]["exact"], true);
    assert_eq!(file["plans"][0]["peak_bytes"], 111);
    let notes = file["plans"][0]["notes"].to_string();
    assert!(notes.contains("file order 160 B, -30.6 %"), "{notes}");
    assert!(notes.contains("proven optimal"), "{notes}");

    // validate --model reads the plan's own order and loads the model in it
    let dir = std::env::temp_dir().join(format!("memplan-schedule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    std::fs::write(&plan, &out).unwrap();
    let plan = plan.display().to_string();
    let (code, _, err) = common::run_in(
        "../testdata/order",
        &["validate", &plan, "--model", "two-branches.json"],
    );
    assert_eq!(code, 0, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_memory_order_and_gears_are_refused_together() {
    let (code, _, err) = common::run_in(
        "../static/samples",
        &[
            "plan",
            "tiny.json",
            "--schedule",
            "memory",
            "--batch",
            "1,2",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--schedule memory with --batch"), "{err}");
}
