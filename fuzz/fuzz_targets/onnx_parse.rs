//! Arbitrary bytes through the ONNX importer and the lowering: errors are fine, panics,
//! hangs and overflows are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_core::import::onnx::{parse, summary, OnnxOptions};
use memplan_core::{lower_bound, Bindings};

fuzz_target!(|data: &[u8]| {
    let opts = OnnxOptions::default();
    if let Ok(m) = parse(data, &opts) {
        let _ = summary(&m, &opts.dims);
        let b: Bindings = m.symbols.iter().map(|s| (s.clone(), 3u64)).collect();
        if let Ok(l) = m.graph.lower(&b) {
            let _ = lower_bound(&l.problem);
        }
    }
});
