//! The data-driven case suite: every file of `testdata/cases/` (one case each, with its why and
//! the figures worked out by hand; format in `testdata/cases/README.md`) through every
//! registered strategy. Each plan must pass the independent validator under the case's rules
//! and meet the case's figures. A case that cannot be read fails; an empty folder fails.

use std::path::{Path, PathBuf};

use memplan_core::import::load::{load, LoadOptions};
use memplan_core::{lower_bound, strategies, validate_with, Padding, PlanOptions, Rules};
use serde_json::Value;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/cases")
}

/// The case's model as a file name and bytes the load pipeline reads (format by extension).
fn model(case: &Value, name: &str) -> (String, Vec<u8>) {
    if let Some(csv) = case["csv"].as_str() {
        (format!("{name}.csv"), csv.as_bytes().to_vec())
    } else {
        let g = &case["graph"];
        assert!(g.is_object(), "{name}: neither `csv` nor `graph`");
        (
            format!("{name}.json"),
            serde_json::to_vec(g).expect("a JSON value"),
        )
    }
}

/// The format's default options, each field the case gives overriding one.
fn options(case: &Value, name: &str) -> PlanOptions {
    let mut o = if case["csv"].is_string() {
        PlanOptions::exact()
    } else {
        PlanOptions::default()
    };
    let given = case["options"].as_object().cloned().unwrap_or_default();
    for (k, v) in &given {
        let flag = || {
            v.as_bool()
                .unwrap_or_else(|| panic!("{name}: `{k}` is not a bool"))
        };
        match k.as_str() {
            "alignment" => o.alignment = v.as_u64().expect("alignment"),
            "padding" => {
                o.padding = match v.as_str() {
                    Some("ge") => Padding::Ge,
                    Some("none") => Padding::None,
                    other => panic!("{name}: padding {other:?}"),
                }
            }
            "reuse" => o.reuse = flag(),
            "zero_copy_io" => o.zero_copy_io = flag(),
            "atomic_centralised" => o.atomic_centralised = flag(),
            "expandable_memory" => o.expandable_memory = flag(),
            other => panic!("{name}: unknown option `{other}`"),
        }
    }
    // optimal's registry entry counts nodes: enough to prove these small cases
    o.time_limit_ms = 200;
    o
}

fn run_case(path: &Path) -> Vec<String> {
    let name = path
        .file_stem()
        .expect("a file name")
        .to_string_lossy()
        .to_string();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let case: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        case["why"].as_str().is_some_and(|w| w.len() > 20),
        "{name}: every case says why"
    );
    let (file, bytes) = model(&case, &name);
    let gears: Vec<u64> = case["gears"]
        .as_array()
        .map(|g| {
            g.iter()
                .map(|x| x.as_u64().expect("a gear is a number"))
                .collect()
        })
        .unwrap_or_default();
    let loaded = load(
        &file,
        &bytes,
        &LoadOptions {
            gears,
            ..LoadOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let problem = &loaded.lowered.problem;
    let o = options(&case, &name);
    let rules = Rules::from(&o);
    let expect = &case["expect"];
    let mut failures = Vec::new();
    let mut fail = |m: String| failures.push(format!("{name}: {m}"));
    let lb = lower_bound(problem).expect("bound").lower_bound;
    if let Some(want) = expect["lower_bound"].as_u64() {
        if lb != want {
            fail(format!("lower bound {lb}, the case says {want}"));
        }
    }
    let refused = expect["refused"].as_bool().unwrap_or(false);
    let mut named: Vec<String> = expect["peak"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    for s in strategies() {
        named.retain(|n| n != s.name);
        let plan = match (s.run(problem, &o), refused) {
            (Err(_), true) => continue,
            (Ok(_), true) => {
                fail(format!("{} planned a problem no plan can satisfy", s.name));
                continue;
            }
            (Err(e), false) => {
                fail(format!("{} refused: {e}", s.name));
                continue;
            }
            (Ok(p), false) => p,
        };
        if let Err(v) = validate_with(problem, &plan, &rules) {
            fail(format!("{}: invalid plan: {}", s.name, v.describe(problem)));
        }
        if plan.peak < lb {
            fail(format!(
                "{}: peak {} below the bound {lb}",
                s.name, plan.peak
            ));
        }
        if let Some(want) = expect["every_peak"].as_u64() {
            if plan.peak != want {
                fail(format!(
                    "{}: peak {}, every strategy must give {want}",
                    s.name, plan.peak
                ));
            }
        }
        if let Some(least) = expect["every_peak_at_least"].as_u64() {
            if plan.peak < least {
                fail(format!(
                    "{}: peak {} below {least}, which no valid plan can beat",
                    s.name, plan.peak
                ));
            }
        }
        if let Some(want) = expect["peak"][s.name].as_u64() {
            if plan.peak != want {
                fail(format!(
                    "{}: peak {}, the case says {want}",
                    s.name, plan.peak
                ));
            }
        }
    }
    for n in named {
        fail(format!(
            "`expect.peak` names `{n}`, which is not a registered strategy"
        ));
    }
    failures
}

#[test]
fn every_case_holds_for_every_strategy() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("testdata/cases is in the repository")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 12, "{} cases", paths.len());
    let failures: Vec<String> = paths.iter().flat_map(|p| run_case(p)).collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
