//! memplan playground: load a model, compare strategies, inspect and share the plan.
//!
//! Pure logic (formats, link state, analysis, SVG) is unit-tested natively with
//! `cargo test -p memplan-web`; `platform` is the only module that talks to the browser.
// Natively the crate is built only for its unit tests; the app itself starts on wasm32.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

mod advise_job;
mod advisor;
mod analysis;
mod app;
mod export;
mod occupancy;
mod pane;
mod platform;
mod sections;
mod state;
mod timeline;
mod views;
mod worker;

// The pure modules live in the library (`src/lib.rs`); `crate::share` etc. resolve through this.
use memplan_web::{format, model, samples, settings, share, tflm};

fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        platform::install_panic_hook();
        match platform::app_root() {
            Some(root) => yew::Renderer::<app::App>::with_root(root).render(),
            None => yew::Renderer::<app::App>::new().render(),
        };
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("memplan-web runs in a browser: build it with `trunk build --release`");
}
