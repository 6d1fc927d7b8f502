//! The planning web worker's entry point (see `src/worker.rs`): one JSON job in, one JSON
//! answer out. A panic answers the job it happened in with [`worker::crashed`], so the page
//! shows the message in that pane instead of waiting forever.
// Shares the page's planning modules; the page-only parts of them are unused here.
#![allow(dead_code)]

#[path = "../analysis.rs"]
mod analysis;
#[path = "../settings.rs"]
mod settings;
#[path = "../worker.rs"]
mod worker;

#[cfg(target_arch = "wasm32")]
mod run {
    use std::cell::RefCell;

    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    use crate::settings::PaneSettings;
    use crate::worker;

    thread_local! {
        /// The job being planned: what the panic hook answers.
        static CURRENT: RefCell<Option<(u64, PaneSettings)>> = const { RefCell::new(None) };
    }

    fn scope() -> web_sys::DedicatedWorkerGlobalScope {
        js_sys::global().unchecked_into()
    }

    fn post(done: &worker::Done) {
        // our own types always serialize
        let text = serde_json::to_string(done).unwrap_or_default();
        let _ = scope().post_message(&JsValue::from_str(&text));
    }

    pub fn start() {
        std::panic::set_hook(Box::new(|info| {
            console_error_panic_hook::hook(info);
            let job = CURRENT.with(|c| c.try_borrow_mut().ok().and_then(|mut c| c.take()));
            if let Some((id, settings)) = job {
                post(&worker::crashed(id, settings, &info.to_string()));
            }
        }));
        let on_message =
            Closure::<dyn Fn(web_sys::MessageEvent)>::new(|e: web_sys::MessageEvent| {
                let Some(text) = e.data().as_string() else {
                    return;
                };
                let job: worker::Job = match serde_json::from_str(&text) {
                    Ok(j) => j,
                    Err(e) => {
                        web_sys::console::error_1(&format!("planning worker: bad job: {e}").into());
                        return;
                    }
                };
                CURRENT.with(|c| *c.borrow_mut() = Some((job.id, job.settings.clone())));
                // `Date.now()` works in workers (no `window` there); milliseconds are enough here.
                let done = worker::answer(&job, &js_sys::Date::now);
                CURRENT.with(|c| *c.borrow_mut() = None);
                post(&done);
            });
        scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let _ = scope().post_message(&JsValue::from_str(worker::READY));
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    run::start();
}
