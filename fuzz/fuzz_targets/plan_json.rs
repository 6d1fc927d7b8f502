//! Arbitrary bytes as a `memplan.plan/1` file through core's one schema and checks
//! (`core/src/report/plan_file.rs`, what `memplan validate` runs): refusals are fine, panics
//! are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_core::report::plan_file::{check_entry, PlanFile};

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = serde_json::from_slice::<PlanFile>(data) {
        for e in &file.plans {
            let _ = check_entry(&file, e);
        }
    }
});
