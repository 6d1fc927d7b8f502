//! Arbitrary bytes as a `memplan.plan/1` file through the CLI's own schema and checks
//! (`cli/src/report.rs`, included by path: the CLI is a binary): refusals are fine, panics
//! are not.
#![no_main]

#[allow(dead_code)]
#[path = "../../cli/src/report.rs"]
mod report;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = serde_json::from_slice::<report::PlanFile>(data) {
        for e in &file.plans {
            let _ = report::check_entry(&file, e);
        }
    }
});
