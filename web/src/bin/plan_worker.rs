//! The planning web worker's entry point (see `src/worker.rs`): one JSON job in, one JSON
//! answer out; or a file to parse (`[header JSON, bytes]`) in, its built model out. A panic answers the job it happened in with [`worker::crashed`], so the page
//! shows the message in that pane instead of waiting forever.
// Shares the page's planning modules; the page-only parts of them are unused here.
#![allow(dead_code)]

#[path = "../advise_job.rs"]
mod advise_job;
#[path = "../analysis.rs"]
mod analysis;
#[path = "../settings.rs"]
mod settings;
#[path = "../worker.rs"]
mod worker;

// The page's loading modules, from the library: a large file is parsed here.
use memplan_web::model;

#[cfg(target_arch = "wasm32")]
mod run {
    use std::cell::RefCell;

    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    use crate::worker;

    thread_local! {
        /// The job being planned: what the panic hook answers.
        static CURRENT: RefCell<Option<(u64, crate::analysis::PlanKey)>> = const { RefCell::new(None) };
        /// The problem of the last file parsed here, with its parse job's id: the page plans
        /// it without sending it back.
        static KEPT: RefCell<Option<(u64, memplan_core::Problem)>> = const { RefCell::new(None) };
    }

    fn scope() -> web_sys::DedicatedWorkerGlobalScope {
        js_sys::global().unchecked_into()
    }

    fn post(done: &worker::Done) {
        // our own types always serialize
        let text = serde_json::to_string(done).unwrap_or_default();
        let _ = scope().post_message(&JsValue::from_str(&text));
    }

    /// Parses the file of a `[header, bytes]` message and answers with [`worker::PARSED`].
    fn parse(parts: &js_sys::Array) {
        // the Advisor panel's job travels as a parse job does, its header marked
        if let Some(answer) = parts
            .get(0)
            .as_string()
            .filter(|h| h.starts_with(crate::advise_job::ADVISE))
            .and_then(|h| {
                let bytes = js_sys::Uint8Array::new(&parts.get(1)).to_vec();
                crate::advise_job::answer(&h, &bytes)
            })
        {
            let _ = scope().post_message(&JsValue::from_str(&answer));
            return;
        }
        let job: worker::ParseJob = match parts.get(0).as_string().map(|h| serde_json::from_str(&h))
        {
            Some(Ok(j)) => j,
            other => {
                let e = other.map_or("no header".to_string(), |r| {
                    r.err().map(|e| e.to_string()).unwrap_or_default()
                });
                web_sys::console::error_1(&format!("planning worker: bad parse job: {e}").into());
                return;
            }
        };
        let bytes = js_sys::Uint8Array::new(&parts.get(1)).to_vec();
        let parsed = worker::parse(&job, bytes);
        let kept = parsed
            .outcome
            .built
            .as_ref()
            .ok()
            .map(|b| (job.id, b.problem.clone()));
        KEPT.with(|k| *k.borrow_mut() = kept);
        let _ = scope().post_message(&JsValue::from_str(&worker::parsed_message(parsed)));
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
                let data = e.data();
                if let Some(parts) = data.dyn_ref::<js_sys::Array>() {
                    parse(parts);
                    return;
                }
                let Some(text) = data.as_string() else {
                    return;
                };
                let job: worker::Job = match serde_json::from_str(&text) {
                    Ok(j) => j,
                    Err(e) => {
                        web_sys::console::error_1(&format!("planning worker: bad job: {e}").into());
                        return;
                    }
                };
                CURRENT.with(|c| *c.borrow_mut() = Some((job.id, job.key.clone())));
                // `Date.now()` works in workers (no `window` there); milliseconds are enough here.
                let done =
                    KEPT.with(|k| worker::answer(&job, k.borrow().as_ref(), &js_sys::Date::now));
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
