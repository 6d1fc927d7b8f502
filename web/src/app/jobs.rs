//! The planning worker: which plans leave the main thread, sending them and the large files
//! to parse, and what its answers (or its death) do to the panes.

use super::*;

/// Whether planning may take long enough (over ~50 ms) to leave the main thread: anytime
/// strategies (the exact solver), and large problems. Runtime allocators too: a simulation
/// that fails badly then costs one pane, not the page.
pub(super) fn heavy(problem: &memplan_core::Problem, s: &PaneSettings) -> bool {
    memplan_core::find_strategy(&s.strategy).is_ok_and(|s| s.caps.anytime)
        || crate::settings::is_runtime(&s.strategy)
        || problem.buffers.len() >= 1500
}

impl App {
    /// Whether `src` is parsed in the worker (large, and a worker can be started).
    pub(crate) fn parse_in_worker(&self, src: &Source) -> bool {
        self.link.is_some() && src.bytes.len() >= model::PARSE_IN_WORKER_BYTES
    }

    /// Sends `src` to the worker to parse; a parse or plan in flight is stopped (it was for
    /// what this replaces).
    pub(crate) fn request_parse(
        &mut self,
        src: Source,
        after: Option<After>,
        bindings: Bindings,
        gears: Vec<u64>,
    ) {
        if self.parsing.is_some() || self.running.is_some() {
            self.stop_worker();
        }
        self.job_id += 1;
        self.loading = Some(format!("Parsing {} in a background worker…", src.name));
        self.parsing = Some(Parsing {
            id: self.job_id,
            source: src,
            after,
            bindings,
            gears,
            since_ms: platform::now_ms(),
            sent: false,
        });
        self.pump();
    }

    /// Plans some pane shows that wait for the worker, in pane order.
    pub(crate) fn waiting(&self) -> Vec<PlanKey> {
        let Some(b) = self.built.as_ref().filter(|_| self.parsing.is_none()) else {
            return Vec::new();
        };
        let mut out: Vec<PlanKey> = Vec::new();
        for s in &self.state.panes {
            let key = PlanKey::new(s, self.state.budget);
            if self.link.is_some()
                && heavy(&b.problem, s)
                && !self.cache.contains_key(&key)
                && !out.contains(&key)
            {
                out.push(key);
            }
        }
        out
    }

    /// Terminates the worker (mid-job if need be); the next job starts a new one.
    pub(crate) fn stop_worker(&mut self) {
        self.worker = None;
        self.worker_ready = false;
        self.worker_parsed = None;
        self.running = None;
        // a parse in flight is sent again to the next worker
        if let Some(p) = &mut self.parsing {
            p.sent = false;
        }
    }

    /// Starts the worker if there is none; `false` if the browser refused (then `why` says so).
    pub(crate) fn ensure_worker(&mut self) -> Result<(), String> {
        if self.worker.is_some() {
            return Ok(());
        }
        let Some(link) = self.link.clone() else {
            return Err("no page to answer".into());
        };
        let (l1, l2) = (link.clone(), link);
        let w = platform::PlanWorker::spawn(
            crate::worker::SCRIPT,
            move |t| l1.send_message(Msg::WorkerText(t)),
            move |e| l2.send_message(Msg::WorkerError(e)),
        )
        .map_err(|e| format!("Could not start the background worker: {e}"))?;
        self.worker = Some(w);
        Ok(())
    }

    /// Sends the file waiting to be parsed, once the worker listens.
    pub(crate) fn send_parse(&mut self) {
        if self.parsing.as_ref().is_none_or(|p| p.sent) {
            return;
        }
        if let Err(e) = self.ensure_worker() {
            let p = self
                .parsing
                .take()
                .map(|p| p.source.name)
                .unwrap_or_default();
            self.loading = None;
            self.error = Some(self.still_showing(format!("{p}: {e}")));
            return;
        }
        let Some(p) = self.parsing.as_ref().filter(|_| self.worker_ready) else {
            return;
        };
        let job = crate::worker::ParseJob {
            id: p.id,
            name: p.source.name.clone(),
            format: p.source.format,
            bindings: p.bindings.clone(),
            gears: p.gears.clone(),
            alias_views: self.state.alias_views,
            schedule: self.state.schedule.map(|o| o.name().to_string()),
            sizes: self.state.sizes.clone(),
        };
        if let (Some(w), Ok(header)) = (&self.worker, serde_json::to_string(&job)) {
            w.post_with_bytes(&header, &p.source.bytes);
        }
        if let Some(p) = &mut self.parsing {
            p.sent = true;
        }
    }

    /// Sends the next waiting pane to the worker, or stops a job no pane shows any more.
    pub(crate) fn pump(&mut self) {
        use crate::worker::{next_step, Job, Running, Step};
        self.send_parse();
        loop {
            match next_step(self.running.as_ref(), &self.waiting()) {
                Step::Wait => break,
                Step::Stop => self.stop_worker(),
                Step::Send(key) => {
                    let (Some(_), Some(b)) = (&self.link, self.built.clone()) else {
                        break;
                    };
                    if let Err(why) = self.ensure_worker() {
                        self.settle(key, Err(Failure::retryable(why)));
                        return;
                    }
                    if !self.worker_ready {
                        break;
                    }
                    self.job_id += 1;
                    #[cfg(target_arch = "wasm32")]
                    let panic_for_test = TEST_PANIC_WORKER.with(|c| c.replace(false));
                    #[cfg(not(target_arch = "wasm32"))]
                    let panic_for_test = false;
                    // a large file's problem stays in the worker that parsed it
                    let by_ref = self.built_parse.filter(|p| self.worker_parsed == Some(*p));
                    let job = Job {
                        id: self.job_id,
                        problem: by_ref.is_none().then(|| b.problem.clone()),
                        parsed: by_ref.unwrap_or(0),
                        key: key.clone(),
                        panic_for_test,
                    };
                    if let (Some(w), Ok(text)) = (&self.worker, serde_json::to_string(&job)) {
                        w.post(&text);
                    }
                    platform::set_root_attr("data-worker-sent", &self.job_id.to_string());
                    let since_ms = platform::now_ms();
                    // the panes showing this plan go from queued to planning
                    for (i, r) in self.results.iter_mut().enumerate() {
                        let shows = self
                            .state
                            .panes
                            .get(i)
                            .map(|s| PlanKey::new(s, self.state.budget));
                        if shows.as_ref() == Some(&key) && matches!(**r, PaneState::Queued) {
                            *r = Rc::new(PaneState::Planning { since_ms });
                        }
                    }
                    self.running = Some(Running {
                        id: self.job_id,
                        key,
                        since_ms,
                    });
                    break;
                }
            }
        }
        let busy = self.running.is_some() || self.parsing.is_some();
        match (busy, &self.ticker, &self.link) {
            (true, None, Some(link)) => {
                let link = link.clone();
                self.ticker = Some(platform::every(200, move || link.send_message(Msg::Tick)));
            }
            (false, Some(_), _) => self.ticker = None,
            _ => {}
        }
    }

    /// The results of the panes planning `key` changed: store and redraw.
    pub(crate) fn settle(&mut self, key: PlanKey, result: Result<PaneResult, Failure>) {
        self.cache.insert(key, Rc::new(result.into()));
        self.replan();
    }

    /// A message from the worker ([`crate::worker::Answer`]): it listens, a file parsed, or a
    /// plan is done. Decoding is this task; showing the result is the next one.
    pub(crate) fn worker_text(&mut self, ctx: &Context<Self>, text: String) -> bool {
        use crate::worker::Answer;
        match crate::worker::read_answer(&text) {
            Some(Answer::Ready) => {
                self.worker_ready = true;
                self.pump();
            }
            Some(Answer::Parsed(parsed)) => {
                if self.parsing.as_ref().map(|p| p.id) != Some(parsed.id) {
                    return false;
                }
                self.parsed_ready = Some(*parsed);
                let link = ctx.link().clone();
                platform::after(0, move || link.send_message(Msg::InstallParsed)).forget();
            }
            Some(Answer::Done(done)) => {
                if self.running.as_ref().map(|r| r.id) != Some(done.id) {
                    return false;
                }
                self.running = None;
                self.jobs_done += 1;
                platform::set_root_attr("data-worker-done", &self.jobs_done.to_string());
                if done.crashed {
                    // a worker that panicked is unusable: the next job starts a new one
                    self.stop_worker();
                }
                let done = *done;
                self.cache.insert(done.key, Rc::new(done.result.into()));
                let link = ctx.link().clone();
                platform::after(0, move || link.send_message(Msg::Replan)).forget();
            }
            None => {}
        }
        false
    }

    pub(crate) fn worker_error(&mut self, e: String) {
        if let Some(p) = self.parsing.take() {
            self.stop_worker();
            self.loading = None;
            let e = format!("{}: the background worker stopped while parsing it: {e}. The file may need more memory than the browser allows.", p.source.name);
            self.error = Some(self.still_showing(e));
            self.pump();
            return;
        }
        let running = self.running.take();
        let started = self.worker_ready;
        self.stop_worker();
        let why = format!("The planning worker stopped: {e}. The plan may need more memory than the browser allows; the rest of the page still works.");
        match running {
            Some(r) => self.settle(r.key, Err(Failure::retryable(why))),
            // between jobs: the next one starts a new worker
            None if started => self.replan(),
            None => {
                // it never started: say so in every pane waiting for it
                for s in self.waiting() {
                    let failed = PaneState::Failed(Failure::retryable(why.clone()));
                    self.cache.insert(s, Rc::new(failed));
                }
                self.replan();
            }
        }
    }

    pub(crate) fn cancel(&mut self, i: usize) -> bool {
        let Some(s) = self.key(i) else {
            return false;
        };
        match self.running.take() {
            Some(r) if r.key == s => {
                let secs = (platform::now_ms() - r.since_ms) / 1000.0;
                self.stop_worker();
                self.settle(
                    s,
                    Err(Failure::retryable(format!(
                        "Planning cancelled after {secs:.1} s."
                    ))),
                );
            }
            other => {
                self.running = other;
                self.settle(s, Err(Failure::retryable("Planning cancelled.")));
            }
        }
        true
    }

    pub(crate) fn install_parsed(&mut self, ctx: &Context<Self>) -> bool {
        let Some(parsed) = self.parsed_ready.take() else {
            return false;
        };
        // cancelled or replaced since: dropped
        if self.parsing.as_ref().map(|p| p.id) != Some(parsed.id) {
            return false;
        }
        let Some(p) = self.parsing.take() else {
            return false;
        };
        self.loading = None;
        self.parsed += 1;
        platform::set_root_attr("data-worker-parsed", &self.parsed.to_string());
        // the worker that parsed it keeps the problem: plans refer to it
        if p.sent {
            self.worker_parsed = Some(parsed.id);
        }
        match p.after {
            Some(after) => self.loaded(ctx, p.source, after, parsed.outcome, Some(parsed.id)),
            None => self.install(parsed.outcome, Some(parsed.id)),
        }
        self.pump();
        true
    }

    pub(crate) fn cancel_parse(&mut self) -> bool {
        let Some(p) = self.parsing.take() else {
            return false;
        };
        self.stop_worker();
        self.loading = None;
        let secs = (platform::now_ms() - p.since_ms) / 1000.0;
        let e = format!("Parsing {} cancelled after {secs:.1} s", p.source.name);
        self.error = Some(self.still_showing(e));
        self.pump();
        true
    }
}
