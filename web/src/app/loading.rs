//! Opening a model: fetching or reading it, building it on the page or in the worker, and
//! installing what built (or saying why not), then planning every pane.

use super::*;

/// What a link can carry of a local file inline: its text if JSON/CSV that deflates to the
/// inline limit; `None` otherwise (the link carries its lowered problem, [`App::lowered`]).
pub(super) fn inline_ref(src: &Source) -> Option<ModelRef> {
    let r = match src.format {
        Format::GraphJson | Format::Csv if src.bytes.len() <= 256 * 1024 => ModelRef::Text {
            name: src.name.clone(),
            text: String::from_utf8_lossy(&src.bytes).into_owned(),
        },
        _ => return None,
    };
    let json = serde_json::to_vec(&r).ok()?;
    (miniz_oxide::deflate::compress_to_vec(&json, 6).len() <= share::MAX_INLINE).then_some(r)
}

impl App {
    pub(crate) fn start_fetch(
        &mut self,
        ctx: &Context<Self>,
        url: String,
        origin: Origin,
        name: String,
        after: After,
    ) {
        self.loading = Some(format!("Loading {name}…"));
        ctx.link().send_future(async move {
            let r = platform::fetch_bytes(&url)
                .await
                .and_then(|bytes| Source::new(&name, origin, bytes));
            Msg::Loaded(r, after)
        });
    }

    /// A load error, saying which model stays on screen (if one does).
    pub(crate) fn still_showing(&self, e: String) -> String {
        match self.built.as_ref().and(self.source.as_ref()) {
            Some(open) => format!("{e} (still showing {})", open.name),
            None => e,
        }
    }

    /// A link's (or `?model=`'s) model failed: say so in the link banner and open the default
    /// sample with the link's settings, as for every other bad link.
    pub(crate) fn fall_back(&mut self, ctx: &Context<Self>, why: String) {
        self.fell_back = true;
        self.state.link_error = Some(why);
        self.load_sample(ctx, samples::DEFAULT_SAMPLE, After::Keep);
    }

    pub(crate) fn load_sample(&mut self, ctx: &Context<Self>, id: &str, after: After) {
        match samples::find(id) {
            Some(s) => self.start_fetch(
                ctx,
                format!("samples/{}", s.file),
                Origin::Sample(s.id.to_string()),
                s.file.to_string(),
                after,
            ),
            None => self.error = Some(format!("no sample '{id}'")),
        }
    }

    /// The model-level lowering settings (views, op order, tensor sizes).
    pub(crate) fn lowering(&self) -> model::Lowering {
        model::Lowering {
            alias_views: self.state.alias_views,
            schedule: self.state.schedule,
            sizes: self.state.sizes.clone(),
        }
    }

    /// Parses and lowers the source under the bindings, then plans every pane (a large file
    /// in the worker: the open model stays on screen until it answers).
    pub(crate) fn rebuild(&mut self) {
        let Some(src) = self.source.clone() else {
            self.cache.clear();
            self.built = None;
            self.replan();
            return;
        };
        let (bindings, gears) = (self.state.bindings.clone(), self.state.gears.clone());
        if self.parse_in_worker(&src) {
            self.request_parse(src, None, bindings, gears);
        } else {
            let outcome = model::build_settled(&src, &bindings, &gears, &self.lowering());
            self.install(outcome, None);
        }
    }

    /// Shows a built model (or its error) and plans every pane.
    pub(crate) fn install(&mut self, outcome: model::Outcome, parse: Option<u64>) {
        self.cache.clear();
        // the job in flight plans the old problem
        if self.running.take().is_some() {
            self.stop_worker();
        }
        self.built = None;
        self.error = None;
        self.state.bindings = outcome.bindings;
        self.state.gears = outcome.gears;
        if let Some(n) = outcome.notice {
            self.state.field_notice(Field::Gears, n);
        }
        if let Some(n) = outcome.sizes_notice {
            // the model is built without them: the field keeps them, with the reason
            let typed = std::mem::take(&mut self.state.sizes)
                .iter()
                .map(|(name, bytes)| format!("{name}={bytes}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.state.bad_input(Field::Sizes, typed, n);
        }
        if let Some(n) = outcome.schedule_notice {
            // built in file order: the control says so, and offers the others again
            self.state.schedule = Some(ScheduleOrder::File);
            self.state.field_notice(Field::Schedule, n);
        }
        // a dim whose default of 1 is impossible: its field asks for a value
        if let Ok(b) = &outcome.built {
            for a in &b.asked_dims {
                self.state
                    .bad_input(Field::Dim(a.dim.clone()), String::new(), a.message());
            }
        }
        match (outcome.built, &self.source) {
            (Ok(b), Some(src)) => {
                self.inline = inline_ref(src);
                self.state.apply(Action::ModelBuilt {
                    kind: ModelKind {
                        graph: b.is_graph,
                        tflm: b.tflm.is_some(),
                    },
                    after: After::Keep,
                });
                self.built = Some(Rc::new(b));
                self.built_parse = parse;
            }
            (Ok(_), None) => {}
            (Err(e), _) => self.error = Some(e),
        }
        self.replan();
    }

    /// A loaded file built (on the page or in the worker): it replaces the open model, or,
    /// when a newly picked file fails, the open model stays with the message.
    pub(crate) fn loaded(
        &mut self,
        ctx: &Context<Self>,
        src: Source,
        after: After,
        outcome: model::Outcome,
        parse: Option<u64>,
    ) {
        // a link's model, or the first model of the page: on failure the default sample
        // stands in (else the page would open empty)
        let from_link = (after == After::Keep || self.source.is_none()) && !self.fell_back;
        if after == After::Fresh && self.built.is_some() {
            if let Err(e) = &outcome.built {
                self.error = Some(self.still_showing(e.clone()));
                // a plan of the open model stopped for the parse is sent again
                self.pump();
                return;
            }
        }
        if after == After::Fresh {
            self.state.user_dims.clear();
            self.state.shown_gear = None;
            self.state.step = None;
            self.state.link_error = None;
            self.state.notice = None;
            self.state.drafts.clear();
            self.state.missing_model = None;
        }
        self.source = Some(src);
        self.state.vp = if after == After::Keep {
            self.state.link_view.take()
        } else {
            None
        };
        self.state.hover = None;
        self.state.selected = None;
        if after == After::Fresh {
            self.state.push_next = true;
            self.state.selected_name = None;
            self.state.search.clear();
        }
        // a model of the other kind (graph or buffer list, .tflite or not): the panes follow
        // it before they plan, so that no plan is started (and stopped) for the old settings
        if let Ok(b) = &outcome.built {
            let kind = ModelKind {
                graph: b.is_graph,
                tflm: b.tflm.is_some(),
            };
            self.state.apply(Action::ModelBuilt { kind, after });
        }
        self.install(outcome, parse);
        if from_link && self.built.is_none() {
            let e = self.error.take().unwrap_or_default();
            self.fall_back(ctx, e);
            return;
        }
        if let (Some(name), Some(b)) = (self.state.selected_name.take(), &self.built) {
            self.state.selected = b.problem.buffers.iter().position(|x| x.name == name);
            self.reveal_selected_row();
        }
        self.sync_hash();
    }

    pub(crate) fn replan(&mut self) {
        // a refused TFLM export speaks of the plan it was asked for
        self.tflm_error = None;
        let Some(b) = self.built.clone() else {
            self.results.clear();
            return;
        };
        self.results = self
            .state
            .panes
            .iter()
            .map(|s| {
                let key = PlanKey::new(s, self.state.budget);
                if let Some(r) = self.cache.get(&key) {
                    return r.clone();
                }
                if self.link.is_some() && heavy(&b.problem, s) {
                    return Rc::new(match &self.running {
                        Some(r) if r.key == key => PaneState::Planning {
                            since_ms: r.since_ms,
                        },
                        _ => PaneState::Queued,
                    });
                }
                let r = Rc::new(PaneState::from(analysis::run(
                    &b.problem,
                    &key,
                    &platform::now_ms,
                )));
                self.cache.insert(key, r.clone());
                r
            })
            .collect();
        if self.state.focus >= self.state.panes.len() {
            self.state.focus = 0;
        }
        if let (Some(s), Some(b)) = (self.state.step, &self.built) {
            if s >= b.problem.steps {
                self.state.step = None;
            }
        }
        self.refresh_view();
        self.pump();
    }

    pub(crate) fn read_file(&mut self, ctx: &Context<Self>, f: crate::platform::File) {
        self.loading = Some(format!("Reading {}…", f.name()));
        ctx.link().send_future(async move {
            let r = platform::read_file(f)
                .await
                .and_then(|(name, bytes)| Source::new(&name, Origin::File, bytes));
            Msg::Loaded(r, After::Fresh)
        });
    }

    pub(crate) fn open_source(
        &mut self,
        ctx: &Context<Self>,
        r: Result<Source, String>,
        after: After,
    ) {
        self.loading = None;
        let from_link = (after == After::Keep || self.source.is_none()) && !self.fell_back;
        if !self.ready_posted {
            // a host page waits for this before it sends a model; the message is
            // queued behind this load, so the host's model comes after it
            self.ready_posted = true;
            platform::post_to_host("memplan:ready", &[]);
        }
        match r {
            Ok(src) => {
                // a new model starts from its own defaults; a link's keeps its settings
                let (bindings, gears) = match after {
                    // a sample opens at the dims its source documents (samples.rs)
                    After::Fresh => (
                        match &src.origin {
                            model::Origin::Sample(id) => samples::find(id)
                                .map(|s| s.dims.iter().map(|&(d, v)| (d.to_string(), v)).collect())
                                .unwrap_or_default(),
                            _ => Bindings::new(),
                        },
                        Vec::new(),
                    ),
                    After::Keep => (self.state.bindings.clone(), self.state.gears.clone()),
                };
                // sizes name the old model's tensors
                if after == After::Fresh {
                    self.state.sizes.clear();
                }
                if self.parse_in_worker(&src) {
                    self.request_parse(src, Some(after), bindings, gears);
                } else {
                    let outcome = model::build_settled(&src, &bindings, &gears, &self.lowering());
                    self.loaded(ctx, src, after, outcome, None);
                }
            }
            Err(e) if from_link => self.fall_back(ctx, e),
            Err(e) => self.error = Some(self.still_showing(e)),
        }
    }
}
