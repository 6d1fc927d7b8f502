//! Planning off the main thread: a web worker (gloo-worker) that runs [`analysis::run`] for
//! panes whose planning may take long (large models, the exact solver), so the page stays
//! responsive. Messages are JSON (the core's types use serde attributes bincode cannot read).

use gloo_worker::{Codec, HandlerId, Worker, WorkerScope};
use memplan_core::Problem;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use crate::analysis::{self, PaneResult};
use crate::settings::PaneSettings;

/// The worker script next to the page (built by Trunk from `src/bin/plan_worker.rs`).
pub const SCRIPT: &str = "plan_worker.js";

/// One pane to plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// Which model the job belongs to (stale answers are dropped).
    pub generation: u64,
    /// The problem.
    pub problem: Problem,
    /// The pane's settings.
    pub settings: PaneSettings,
}

/// A planned pane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Done {
    /// As in the job.
    pub generation: u64,
    /// As in the job.
    pub settings: PaneSettings,
    /// The result, or the core's message.
    pub result: Result<PaneResult, String>,
}

/// The planning worker: stateless, one answer per job.
pub struct PlanWorker;

impl Worker for PlanWorker {
    type Message = ();
    type Input = Job;
    type Output = Done;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        PlanWorker
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _msg: Self::Message) {}

    fn received(&mut self, scope: &WorkerScope<Self>, job: Self::Input, id: HandlerId) {
        // `Date.now()` works in workers (no `window` there); milliseconds are enough here.
        let now = || js_sys::Date::now();
        let result = analysis::run(&job.problem, &job.settings, &now);
        scope.respond(
            id,
            Done {
                generation: job.generation,
                settings: job.settings,
                result,
            },
        );
    }
}

/// JSON messages between the page and the worker.
pub struct JsonCodec;

impl Codec for JsonCodec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        // our own types always serialize; an empty string decodes to an error below
        JsValue::from_str(&serde_json::to_string(&input).unwrap_or_default())
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        let text = input.as_string().unwrap_or_default();
        match serde_json::from_str(&text) {
            Ok(o) => o,
            // Only our own worker talks to us, with our own types: unreachable in practice,
            // and the trait gives no way to return an error.
            Err(e) => panic!("planning worker sent an unreadable message: {e}"),
        }
    }
}
