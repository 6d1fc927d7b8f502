//! Planning off the main thread: the messages between the page and its planning web worker
//! (`src/bin/plan_worker.rs`), and the page's queue of panes waiting for it.
//!
//! The page keeps one job in flight at a time and sends only settings some pane still shows,
//! so when the user changes several settings quickly only the latest are planned; a job whose
//! settings no pane shows any more is stopped (the worker is terminated and started again).
//! A panic in the worker answers its job with an error ([`Done::crashed`]) instead of leaving
//! the pane waiting: that pane shows the message, the rest of the page keeps working.
//! Messages are JSON text (the core's types use serde attributes binary codecs cannot read).

use memplan_core::Problem;
use serde::{Deserialize, Serialize};

use crate::analysis::{self, PaneResult};
use crate::settings::PaneSettings;

/// The worker script next to the page (built by Trunk from `src/bin/plan_worker.rs`).
pub const SCRIPT: &str = "plan_worker.js";

/// What the worker sends once it listens (messages sent before would be lost).
pub const READY: &str = "memplan:worker-ready";

/// One pane to plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// Identifies the job among those sent (answers to other ids are dropped).
    pub id: u64,
    /// The problem.
    pub problem: Problem,
    /// The pane's settings.
    pub settings: PaneSettings,
    /// Test hook: the worker panics instead of planning (e2e test of the crash path).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub panic_for_test: bool,
}

/// A planned pane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Done {
    /// As in the job.
    pub id: u64,
    /// As in the job.
    pub settings: PaneSettings,
    /// The result, or the core's message.
    pub result: Result<PaneResult, String>,
    /// The worker panicked on this job and is unusable: the page starts a new one.
    #[serde(default)]
    pub crashed: bool,
}

/// Runs a job (in the worker); `now` is the worker's clock in milliseconds.
// Used by the worker binary, which shares this file with the page.
#[allow(dead_code)]
pub fn answer(job: &Job, now: &dyn Fn() -> f64) -> Done {
    assert!(
        !job.panic_for_test,
        "test panic requested by the page (memplan_test_panic)"
    );
    Done {
        id: job.id,
        settings: job.settings.clone(),
        result: analysis::run(&job.problem, &job.settings, now),
        crashed: false,
    }
}

/// The answer the worker's panic hook sends for the job it was running.
#[allow(dead_code)]
pub fn crashed(id: u64, settings: PaneSettings, panic: &str) -> Done {
    Done {
        id,
        settings,
        result: Err(format!(
            "Planning crashed in the background worker: {panic}. The rest of the page still works; please report this message."
        )),
        crashed: true,
    }
}

/// The job in flight: its id, settings and start time (milliseconds, page clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// As sent.
    pub id: u64,
    /// As sent.
    pub settings: PaneSettings,
    /// When it was sent, milliseconds.
    pub since_ms: f64,
}

/// What the page should do with its worker next.
// one short-lived value per decision: boxing the settings would buy nothing
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Nothing (idle, or the job in flight is still wanted).
    Wait,
    /// Send a job for these settings.
    Send(PaneSettings),
    /// The job in flight is no longer wanted: stop the worker (and start a new one).
    Stop,
}

/// Decides the next step from the job in flight and the settings still waiting, in pane order
/// (pure, so it is tested natively).
pub fn next_step(running: Option<&Running>, waiting: &[PaneSettings]) -> Step {
    match running {
        Some(r) if waiting.contains(&r.settings) => Step::Wait,
        Some(_) => Step::Stop,
        None => waiting.first().cloned().map_or(Step::Wait, Step::Send),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str) -> PaneSettings {
        let mut s = PaneSettings::default_for(0, true, &[]);
        s.strategy = name.into();
        s
    }

    #[test]
    fn only_the_latest_settings_are_planned() {
        // idle: the first waiting pane is sent
        assert_eq!(
            next_step(None, &[s("optimal"), s("ge-block")]),
            Step::Send(s("optimal"))
        );
        assert_eq!(next_step(None, &[]), Step::Wait);
        let r = Running {
            id: 1,
            settings: s("optimal"),
            since_ms: 0.0,
        };
        // still shown by a pane: keep waiting for it
        assert_eq!(next_step(Some(&r), &[s("optimal")]), Step::Wait);
        // the user moved on: stop it rather than finish a plan nobody shows
        assert_eq!(next_step(Some(&r), &[s("ge-block")]), Step::Stop);
        assert_eq!(next_step(Some(&r), &[]), Step::Stop);
    }

    #[test]
    fn a_crash_answer_names_the_panic() {
        let d = crashed(7, s("runtime-reuse"), "capacity overflow");
        assert!(d.crashed);
        assert_eq!(d.id, 7);
        assert!(d.result.unwrap_err().contains("capacity overflow"));
    }

    #[test]
    fn jobs_travel_as_json() {
        let p = Problem::from_buffers("p", vec![memplan_core::Buffer::new("a", 8, 0, 1)]);
        let j = Job {
            id: 3,
            problem: p,
            settings: s("ge-block"),
            panic_for_test: false,
        };
        let text = serde_json::to_string(&j).unwrap();
        assert!(!text.contains("panic_for_test"));
        let back: Job = serde_json::from_str(&text).unwrap();
        let d = answer(&back, &|| 0.0);
        assert_eq!(d.id, 3);
        let done: Done = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(done.result.unwrap().plan.peak, d.result.unwrap().plan.peak);
    }
}
