//! Arbitrary bytes through the `memplan.graph/1` JSON importer and the lowering: errors are
//! fine, panics, hangs and overflows are not. Seeds: `static/samples/*.json`, `cli/tests/bad`,
//! `cli/tests/adversarial`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_core::{lower_bound, Bindings};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(g) = memplan_core::import::json::parse(text) {
        let b: Bindings = g.symbols().into_iter().map(|s| (s, 3u64)).collect();
        if let Ok(l) = g.lower(&b) {
            let _ = lower_bound(&l.problem);
        }
    }
});
