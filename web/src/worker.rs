//! Planning off the main thread: the messages between the page and its planning web worker
//! (`src/bin/plan_worker.rs`), and the page's queue of panes waiting for it.
//!
//! The page keeps one job in flight at a time and sends only settings some pane still shows,
//! so when the user changes several settings quickly only the latest are planned; a job whose
//! settings no pane shows any more is stopped (the worker is terminated and started again).
//! A panic in the worker answers its job with an error ([`Done::crashed`]) instead of leaving
//! the pane waiting: that pane shows the message, the rest of the page keeps working.
//! Messages are JSON text, not `serde-wasm-bindgen` values: sizes and offsets are `u64`, which
//! JSON keeps exact at any size, while `serde-wasm-bindgen` either refuses numbers over 2^53
//! (a plan of a hostile or huge model would fail in transit) or, in its BigInt mode, makes
//! one BigInt per number (60k offsets, sizes and curve points per answer).
//! A file to parse travels as `[header JSON, Uint8Array of its bytes]` ([`ParseJob`]), and
//! its answer as [`PARSED`] followed by the JSON of a [`Parsed`]: files of
//! [`crate::model::PARSE_IN_WORKER_BYTES`] or more are parsed here, off the page's thread.

use memplan_core::Problem;
use serde::{Deserialize, Serialize};

use crate::analysis::{self, Failure, PaneResult, PlanKey};
use crate::model::{self, Format, Origin, Outcome, Source};

/// The worker script next to the page (built by Trunk from `src/bin/plan_worker.rs`).
pub const SCRIPT: &str = "plan_worker.js";

/// What the worker sends once it listens (messages sent before would be lost).
pub const READY: &str = "memplan:worker-ready";

/// One pane to plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// Identifies the job among those sent (answers to other ids are dropped).
    pub id: u64,
    /// The problem; `None`: the one the worker parsed in job [`Job::parsed`] (a large
    /// file's problem does not travel back to the worker that built it).
    #[serde(default)]
    pub problem: Option<Problem>,
    /// With `problem` `None`: the parse job whose problem to plan.
    #[serde(default)]
    pub parsed: u64,
    /// The pane's plan: its settings and budget.
    pub key: PlanKey,
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
    pub key: PlanKey,
    /// The result, or why there is none.
    pub result: Result<PaneResult, Failure>,
    /// The worker panicked on this job and is unusable: the page starts a new one.
    #[serde(default)]
    pub crashed: bool,
}

/// How the worker's answer to a [`ParseJob`] starts (then the JSON of a [`Parsed`]).
pub const PARSED: &str = "memplan:parsed:";

/// A file to parse and lower, as [`model::build_settled`] does on the page; its bytes travel
/// beside this header.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParseJob {
    /// Identifies the job (answers to other ids are dropped).
    pub id: u64,
    /// The file's name (messages name it).
    pub name: String,
    /// Its format, as the page detected it.
    pub format: Format,
    /// Symbolic dims bound.
    pub bindings: memplan_core::Bindings,
    /// Dynamic-batch gears (empty: none).
    pub gears: Vec<u64>,
    /// View outputs share their dying input's buffer.
    pub alias_views: bool,
    /// The op order by name ([`memplan_core::graph::ScheduleOrder::name`]); absent: the
    /// graph's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Tensor sizes given by the user, bytes.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sizes: std::collections::BTreeMap<String, u64>,
}

/// A parsed file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Parsed {
    /// As in the job.
    pub id: u64,
    /// What building it came to.
    pub outcome: Outcome,
}

/// Plain buffers (name, size and live range only, as every buffer of a CSV trace) in columns:
/// decoding 62k buffer objects took the page about 180 ms, these columns a fraction of it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Columns {
    /// The names, one per line.
    names: String,
    /// `size, start, end` of each buffer in turn.
    numbers: Vec<u64>,
}

/// A [`Parsed`] as it travels: the problem's buffers in [`Columns`] when they are all plain.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Wire {
    parsed: Parsed,
    #[serde(default)]
    columns: Option<Columns>,
}

/// The message for `parsed` ([`PARSED`], then JSON), read back by [`read_parsed`].
#[allow(dead_code)]
pub fn parsed_message(mut parsed: Parsed) -> String {
    let mut columns = None;
    if let Ok(b) = &mut parsed.outcome.built {
        let plain = b.problem.buffers.iter().all(|x| {
            !x.name.contains('\n')
                && *x == memplan_core::Buffer::new(x.name.clone(), x.size, x.start, x.end)
        });
        if plain {
            let bufs = std::mem::take(&mut b.problem.buffers);
            let mut c = Columns::default();
            for (i, x) in bufs.into_iter().enumerate() {
                if i > 0 {
                    c.names.push('\n');
                }
                c.names.push_str(&x.name);
                c.numbers.extend([x.size, x.start, x.end]);
            }
            columns = Some(c);
        }
    }
    let text = serde_json::to_string(&Wire { parsed, columns }).unwrap_or_default();
    format!("{PARSED}{text}")
}

/// A message from the worker to the page, read by [`read_answer`]: the page matches on this,
/// never on the text's envelope.
#[derive(Debug)]
pub enum Answer {
    /// The worker listens ([`READY`]).
    Ready,
    /// A file parsed ([`PARSED`]).
    Parsed(Box<Parsed>),
    /// A plan finished, failed or crashed.
    Done(Box<Done>),
}

/// Reads a worker message: `None` for one that is none of the [`Answer`]s (another job's
/// answer, as the advisor's, or a message that does not decode).
pub fn read_answer(text: &str) -> Option<Answer> {
    if text == READY {
        return Some(Answer::Ready);
    }
    if let Some(json) = text.strip_prefix(PARSED) {
        return read_parsed(json).ok().map(|p| Answer::Parsed(Box::new(p)));
    }
    serde_json::from_str::<Done>(text)
        .ok()
        .map(|d| Answer::Done(Box::new(d)))
}

/// Reads the JSON after [`PARSED`] (on the page).
///
/// # Errors
/// Not JSON of a [`Wire`], or columns that do not add up.
pub fn read_parsed(json: &str) -> Result<Parsed, String> {
    let Wire {
        mut parsed,
        columns,
    } = serde_json::from_str(json).map_err(|e| e.to_string())?;
    if let (Some(c), Ok(b)) = (columns, &mut parsed.outcome.built) {
        let names: Vec<&str> = if c.names.is_empty() && c.numbers.is_empty() {
            Vec::new()
        } else {
            c.names.split('\n').collect()
        };
        if names.len() * 3 != c.numbers.len() {
            return Err(format!(
                "{} names for {} numbers",
                names.len(),
                c.numbers.len()
            ));
        }
        b.problem.buffers = names
            .iter()
            .zip(c.numbers.chunks_exact(3))
            .map(|(n, v)| memplan_core::Buffer::new(*n, v[0], v[1], v[2]))
            .collect();
    }
    Ok(parsed)
}

/// Parses a file (in the worker).
#[allow(dead_code)]
pub fn parse(job: &ParseJob, bytes: Vec<u8>) -> Parsed {
    let source = Source {
        name: job.name.clone(),
        // not read by the build
        origin: Origin::File,
        bytes: bytes.into(),
        format: job.format,
    };
    Parsed {
        id: job.id,
        outcome: match job
            .schedule
            .as_deref()
            .map(memplan_core::graph::ScheduleOrder::from_name)
            .transpose()
        {
            Ok(schedule) => model::build_settled(
                &source,
                &job.bindings,
                &job.gears,
                &model::Lowering {
                    alias_views: job.alias_views,
                    schedule,
                    sizes: job.sizes.clone(),
                },
            ),
            Err(e) => model::Outcome {
                built: Err(e.to_string()),
                bindings: job.bindings.clone(),
                gears: job.gears.clone(),
                notice: None,
                sizes_notice: None,
                schedule_notice: None,
            },
        },
    }
}

/// Runs a job (in the worker); `now` is the worker's clock in milliseconds; `kept` is the
/// problem of the last file the worker parsed, with that parse job's id.
// Used by the worker binary, which shares this file with the page.
#[allow(dead_code)]
pub fn answer(job: &Job, kept: Option<&(u64, Problem)>, now: &dyn Fn() -> f64) -> Done {
    assert!(
        !job.panic_for_test,
        "test panic requested by the page (memplan_test_panic)"
    );
    let problem = match (&job.problem, kept) {
        (Some(p), _) => Some(p),
        (None, Some((id, p))) if *id == job.parsed => Some(p),
        _ => None,
    };
    Done {
        id: job.id,
        key: job.key.clone(),
        result: match problem {
            Some(p) => analysis::run(p, &job.key, now),
            // the page sends the problem to a worker it did not see parse it
            None => Err(Failure::retryable(format!(
                "The background worker no longer holds the model (parse job {}): plan again.",
                job.parsed
            ))),
        },
        crashed: false,
    }
}

/// The answer the worker's panic hook sends for the job it was running.
#[allow(dead_code)]
pub fn crashed(id: u64, key: PlanKey, panic: &str) -> Done {
    Done {
        id,
        key,
        result: Err(Failure::retryable(format!(
            "Planning crashed in the background worker: {panic}. The rest of the page still works; please report this message."
        ))),
        crashed: true,
    }
}

/// The job in flight: its id, settings and start time (milliseconds, page clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// As sent.
    pub id: u64,
    /// As sent.
    pub key: PlanKey,
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
    Send(PlanKey),
    /// The job in flight is no longer wanted: stop the worker (and start a new one).
    Stop,
}

/// Decides the next step from the job in flight and the settings still waiting, in pane order
/// (pure, so it is tested natively).
pub fn next_step(running: Option<&Running>, waiting: &[PlanKey]) -> Step {
    match running {
        Some(r) if waiting.contains(&r.key) => Step::Wait,
        Some(_) => Step::Stop,
        None => waiting.first().cloned().map_or(Step::Wait, Step::Send),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::PaneSettings;

    fn s(name: &str) -> PlanKey {
        let mut s = PaneSettings::default_for(0, true, &[]);
        s.strategy = name.into();
        PlanKey::new(&s, None)
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
            key: s("optimal"),
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
        assert!(d.result.unwrap_err().reason.contains("capacity overflow"));
    }

    #[test]
    fn a_parsed_file_travels_as_json() {
        // a CSV of two buffers, one bad gear list: the gears are dropped with a notice, the
        // model still builds (as on the page)
        let job = ParseJob {
            id: 9,
            name: "t.csv".into(),
            format: Format::Csv,
            bindings: Default::default(),
            gears: vec![1, 2],
            alias_views: false,
            schedule: None,
            sizes: Default::default(),
        };
        let header = serde_json::to_string(&job).unwrap();
        let back: ParseJob = serde_json::from_str(&header).unwrap();
        let sent = parse(&back, b"id,lower,upper,size\na,0,1,8\nb,1,2,16\n".to_vec());
        let text = parsed_message(sent.clone());
        // plain buffers travel in columns, and come back equal
        assert!(text.contains(r#""names":"a\nb""#), "{text}");
        assert!(text.contains(r#""numbers":[8,0,0,16,1,1]"#), "{text}");
        let Some(Answer::Parsed(p)) = read_answer(&text) else {
            panic!("not a parsed answer")
        };
        assert_eq!(p.outcome, sent.outcome);
        assert_eq!(p.id, 9);
        assert!(p.outcome.gears.is_empty());
        assert!(p.outcome.notice.unwrap().starts_with("Gears not applied"));
        let b = p.outcome.built.unwrap();
        assert_eq!(b.problem.buffers.len(), 2);
        // max live: one buffer at a time, the larger 16 B; no reuse: 8 + 16
        assert_eq!(b.raw_bounds.lower_bound, 16);
        assert_eq!(b.raw_bounds.no_reuse, 24);
        // a bad file: the parser's message, naming it
        let p = parse(&back, b"garbage\n".to_vec());
        assert!(p.outcome.built.unwrap_err().starts_with("t.csv: "));
    }

    #[test]
    fn jobs_travel_as_json() {
        let p = Problem::from_buffers("p", vec![memplan_core::Buffer::new("a", 8, 0, 1)]);
        let j = Job {
            id: 3,
            problem: Some(p.clone()),
            parsed: 0,
            key: s("ge-block"),
            panic_for_test: false,
        };
        let text = serde_json::to_string(&j).unwrap();
        assert!(!text.contains("panic_for_test"));
        let back: Job = serde_json::from_str(&text).unwrap();
        let d = answer(&back, None, &|| 0.0);
        // without the problem: the one kept from parse job 5, not another's
        let kept = (5, p);
        let by_ref = Job {
            problem: None,
            parsed: 5,
            ..back.clone()
        };
        let r = answer(&by_ref, Some(&kept), &|| 0.0).result.unwrap();
        // the same plan as with the problem sent
        assert_eq!(r.plan.offsets, d.result.as_ref().unwrap().plan.offsets);
        let other = Job {
            parsed: 4,
            ..by_ref
        };
        assert!(answer(&other, Some(&kept), &|| 0.0).result.is_err());
        assert_eq!(d.id, 3);
        let done: Done = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(done.result.unwrap().plan.peak, d.result.unwrap().plan.peak);
    }
}
