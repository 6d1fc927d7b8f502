//! The planning web worker's entry point (see `src/worker.rs`).
// Shares the page's planning modules; the page-only parts of them are unused here.
#![allow(dead_code)]

#[path = "../analysis.rs"]
mod analysis;
#[path = "../settings.rs"]
mod settings;
#[path = "../worker.rs"]
mod worker;

fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        use gloo_worker::Registrable;
        console_error_panic_hook::set_once();
        worker::PlanWorker::registrar()
            .encoding::<worker::JsonCodec>()
            .register();
    }
}
