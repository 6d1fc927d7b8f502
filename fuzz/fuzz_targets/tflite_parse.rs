//! Arbitrary bytes through the TFLite importer, the lowering and the offline-plan reader and
//! writer: errors are fine, panics, hangs and overflows are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_core::import::tflite::{parse, read_offline_plan, with_offline_plan, TfliteOptions};
use memplan_core::lower_bound;

fuzz_target!(|data: &[u8]| {
    // a valid header more often than chance: the identifier at bytes 4..8
    let mut bytes = data.to_vec();
    if bytes.len() >= 8 && data[0] & 1 == 1 {
        bytes[4..8].copy_from_slice(b"TFL3");
    }
    if let Ok(m) = parse(&bytes, &TfliteOptions::default()) {
        if let Ok(l) = m.graph.lower(&m.file_dims) {
            let _ = lower_bound(&l.problem);
        }
        let offsets = vec![-1; m.info.tensor_count()];
        if let Ok(out) = with_offline_plan(&bytes, &offsets) {
            assert_eq!(
                read_offline_plan(&out).ok().flatten().map(|p| p.offsets),
                Some(offsets)
            );
        }
    }
    let _ = read_offline_plan(&bytes);
});
