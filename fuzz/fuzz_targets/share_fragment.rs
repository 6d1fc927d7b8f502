//! Arbitrary input as a playground share link (`web/src/share.rs`, the page's own codec from
//! the `memplan-web` library): refusals are fine, panics and hangs are not, and a state that is
//! accepted survives encode → decode unchanged.
//!
//! The first byte picks the layer attacked: odd, the rest is the fragment text itself (version,
//! base64url, deflate, JSON, checks); even, the rest is the JSON state, packed as the page would,
//! so that the mutations reach the field checks instead of dying in base64 or inflate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_web::share;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fragment = if mode % 2 == 1 {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        share::pack_json(rest)
    };
    let Ok(state) = share::decode(&fragment) else {
        return;
    };
    let (again, kept_model) = share::encode(&state);
    let back = share::decode(&again)
        .unwrap_or_else(|e| panic!("an accepted state re-encodes to a refused link: {e}"));
    if kept_model {
        assert_eq!(back, state, "an accepted state does not survive encode → decode");
    }
});
