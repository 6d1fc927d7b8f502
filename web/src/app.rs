//! The playground: state, messages, and the top-level layout. Views live in `views.rs` and
//! `pane.rs`; browser calls in `platform.rs`.

use std::collections::HashMap;
use std::rc::Rc;

use memplan_core::graph::ScheduleOrder;
use memplan_core::Bindings;
use yew::prelude::*;

use crate::analysis::{self, Failure, PaneResult, PaneState, PlanKey};
use crate::model::{self, Built, Format, Origin, Source};
use crate::platform;
use crate::samples;
use crate::settings::{Compare, CompareMode, PaneSettings};
use crate::share::{self, ModelRef, Shared};
use crate::state::{Action, Address, Effect, Field, ModelKind, Request, State};
pub(crate) use crate::state::{After, Col};
use crate::timeline::Viewport;

mod canvas;
mod downloads;
mod jobs;
mod links;
mod loading;
mod pointer;

use canvas::PaintKey;
use jobs::heavy;
use links::LoweredPart;

/// Light, dark, or following the OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    /// Follow `prefers-color-scheme`.
    Auto,
    /// Light.
    Light,
    /// Dark.
    Dark,
}

/// Export kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    /// Plan JSON (CLI schema).
    PlanJson,
    /// Timeline SVG.
    Svg,
    /// Timeline PNG (the SVG drawn on a canvas at 2×).
    Png,
    /// Tensors CSV.
    Csv,
}

/// Messages.
pub enum Msg {
    /// Load a built-in sample.
    Sample(String),
    /// A file from the picker or a drop.
    File(crate::platform::File),
    /// Bytes arrived (or failed).
    Loaded(Result<Source, String>, After),
    /// A dim binding edited.
    Bind(String, String),
    /// Set the dynamic-batch gears from text (`1,2,4,8`; empty: off).
    Gears(String),
    /// Show this gear in the timeline and table.
    ShowGear(u64),
    /// Set the memory budget from text (`200MiB`; empty: none).
    Budget(String),
    /// Text typed in a field, not committed yet ([`Action::Typing`]).
    Typing(Field, String),
    /// A pane's settings changed.
    SetPane(usize, PaneSettings),
    /// Add a pane.
    AddPane,
    /// Remove a pane.
    RemovePane(usize),
    /// Show this pane in the views.
    Focus(usize),
    /// Select a step (None: the peak).
    Step(Option<u64>),
    /// Move the step cursor.
    StepBy(i64),
    /// Keyboard on the timeline: select the tensor live at the step just above (`true`) or
    /// below the selected one in the arena (the lowest or highest when none is selected).
    SelectLive(bool),
    /// Pointer over the timeline: (user x, user y, pixel x, pixel y).
    Pointer(f64, f64, f64, f64),
    /// Pointer left the timeline.
    Leave,
    /// Mouse button down on the timeline (user x, user y).
    Down(f64, f64),
    /// Mouse button up.
    Up,
    /// Click on the timeline at user x.
    Click(f64),
    /// Zoom by factor around (fx, fy) of the plot.
    Zoom(f64, f64, f64),
    /// Reset zoom.
    ResetView,
    /// Search text.
    Search(String),
    /// Sort the table.
    Sort(Col),
    /// Copy the share link.
    CopyLink,
    /// Show the embed snippet.
    ShowEmbed,
    /// Hide dialogs.
    CloseDialog,
    /// Copy the embed snippet to the clipboard.
    CopySnippet,
    /// What copying the snippet came to.
    DialogNote(String),
    /// A transient notice.
    Notice(String),
    /// Export.
    Export(Export),
    /// A pane's plan as a TFLM file (a `.tflite` model): pane index, which file.
    Tflm(usize, crate::tflm::TflmFile),
    /// Cycle the theme.
    ToggleTheme,
    /// A key press outside fields.
    Key(String),
    /// Drag over the page on/off.
    DragOver(bool),
    /// The fragment was changed by the user.
    HashChanged,
    /// The views-alias switch.
    AliasViews(bool),
    /// The op order (`None`: the graph's own).
    Schedule(Option<ScheduleOrder>),
    /// The tensor sizes field's text (`name=bytes, ...`).
    Sizes(String),
    /// The embedding page handed over a model (`postMessage`, [`platform::on_hosted_model`]).
    Hosted(String, Result<Vec<u8>, String>),
    /// Window resized.
    Resized,
    /// A text message from the planning worker.
    WorkerText(String),
    /// The planning worker died without answering (a trap, or its script failed to load).
    WorkerError(String),
    /// Stop planning pane `i` in the worker.
    Cancel(usize),
    /// Stop parsing the file in the worker.
    CancelParse,
    /// Show the file the worker parsed (decoded in the task before, [`App::parsed_ready`]).
    InstallParsed,
    /// Show the plans the worker answered (stored in the task before).
    Replan,
    /// Plan pane `i` again (after a cancel or an error).
    Retry(usize),
    /// Redraw the elapsed time of the plan in flight.
    Tick,
    /// Select a tensor (None: none), from the table or the timeline.
    Select(Option<usize>),
    /// Write the link now (after [`App::sync_hash_soon`]).
    SyncHash,
    /// Show the compare view (side by side, diff) or one timeline.
    SetCompare(Compare),
    /// The tensor table scrolled to this many CSS pixels from its top.
    TableScroll(f64),
    /// The frame answering a click was painted: the table follows the new step now.
    TableCatchUp,
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    /// Set by [`memplan_test_panic`]: the next worker job panics.
    static TEST_PANIC_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Test hook for the e2e tests of the crash paths: `"page"` panics here, on the main thread;
/// `"worker"` makes the next plan sent to the background worker panic there.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn memplan_test_panic(place: &str) {
    if place == "worker" {
        TEST_PANIC_WORKER.with(|c| c.set(true));
    } else {
        panic!("test panic requested by the page (memplan_test_panic)");
    }
}

/// A file being parsed in the worker (files of [`model::PARSE_IN_WORKER_BYTES`] or more).
pub(crate) struct Parsing {
    /// Identifies the job (from the planning jobs' counter).
    id: u64,
    /// The file: kept here, the worker gets a copy of its bytes.
    pub(crate) source: Source,
    /// What the load does once parsed; `None`: the open model built again (new bindings,
    /// gears or views switch).
    after: Option<After>,
    bindings: Bindings,
    gears: Vec<u64>,
    /// When it was asked for, milliseconds (page clock).
    pub(crate) since_ms: f64,
    /// Sent to the worker (it may still be starting).
    sent: bool,
}

/// The playground component.
pub struct App {
    /// What the page shows and every setting a link carries ([`State::apply`]).
    pub(crate) state: State,
    pub(crate) embed: bool,
    pub(crate) theme: Theme,
    pub(crate) source: Option<Source>,
    pub(crate) loading: Option<String>,
    pub(crate) error: Option<String>,
    /// The focused pane's result restricted to the shown gear (only with gears).
    focus_view: Option<Rc<PaneResult>>,
    /// With gears, every pane's result restricted to the shown gear, by pane (the compare
    /// view draws the other panes' too).
    gear_views: Vec<Option<Rc<PaneResult>>>,
    pub(crate) built: Option<Rc<Built>>,
    /// Why a pane's plan could not be exported to TFLM: (pane, message), until it plans again.
    pub(crate) tflm_error: Option<(usize, String)>,
    pub(crate) results: Vec<Rc<PaneState>>,
    cache: HashMap<PlanKey, Rc<PaneState>>,
    /// `memplan:ready` was posted to the host page (after the first load, so that a model the
    /// host sends is not replaced by the sample the page opens with).
    ready_posted: bool,
    /// A link's model failed and the default sample stands in (once: never a loop).
    fell_back: bool,
    /// To start the planning worker and its timers from anywhere (absent in unit tests).
    link: Option<yew::html::Scope<App>>,
    /// The planning worker, started when a pane first needs it.
    worker: Option<platform::PlanWorker>,
    /// Whether the worker listens (it says so once its wasm has started).
    worker_ready: bool,
    /// The job in flight.
    pub(crate) running: Option<crate::worker::Running>,
    /// The file being parsed in the worker: planning waits for it.
    pub(crate) parsing: Option<Parsing>,
    /// Files the worker parsed (a test hook: `data-worker-parsed`).
    parsed: u64,
    /// The worker's answer to [`App::parsing`], decoded, shown in the next task
    /// ([`Msg::InstallParsed`]): each is up to ~150 ms on a 62k-buffer trace.
    parsed_ready: Option<crate::worker::Parsed>,
    /// The parse job the open model came from (`None`: parsed on the page).
    built_parse: Option<u64>,
    /// The parse job whose problem the running worker keeps (it plans that one by reference).
    worker_parsed: Option<u64>,
    /// Id of the last job sent.
    job_id: u64,
    /// Jobs the worker answered.
    jobs_done: u64,
    /// Pending link update ([`App::sync_hash_soon`]).
    sync_timer: Option<crate::platform::Timeout>,
    /// Redraws the elapsed time while a job is in flight.
    ticker: Option<crate::platform::Interval>,
    /// In an embed: the timeline was clicked, so the wheel zooms it (before, the page scrolls).
    pub(crate) embed_active: bool,
    /// What the timeline canvas shows now.
    painted: Option<PaintKey>,
    /// The live-bytes curve's SVG and what it was drawn from ([`App::curve`]).
    curve_cache: std::cell::RefCell<Option<(PaintKey, AttrValue)>>,
    /// The tensor table's scroll position, CSS pixels: only the rows near it are rendered.
    pub(crate) table_top: f64,
    /// After the next render, scroll the table box to this many CSS pixels (set with
    /// [`App::table_top`], so that the scroll event that follows renders nothing new).
    scroll_table: Option<f64>,
    /// After a click, the step the table still shows until [`Msg::TableCatchUp`]: the click's
    /// frame (cursor, selection) is painted first, the table's rows right after it.
    table_hold: Option<u64>,
    pub(crate) dialog: Option<String>,
    /// What the embed dialog's Copy came to.
    pub(crate) dialog_note: Option<String>,
    /// Focus the embed dialog's first button once it is drawn (a modal takes the focus).
    focus_dialog: bool,
    pub(crate) drag_over: bool,
    /// Laid out for a phone ([`platform::is_narrow`]): the timeline before the panes.
    pub(crate) narrow: bool,
    pub(crate) inline: Option<ModelRef>,
    /// What the embed dialog warns about (the snippet cannot carry the model).
    pub(crate) embed_warning: Option<String>,
    /// What the embed dialog says about the model it carries (lowered, not the file).
    pub(crate) embed_info: Option<String>,
    /// The `m=` part of a link that carried its model lowered ([`share::lowered_part`]): links
    /// made from that view carry the same.
    link_part: Option<Rc<str>>,
    /// A local file's model as links carry it lowered, made when first needed (it costs a
    /// deflate of the whole problem): for which build, and the part or its length over
    /// [`share::MAX_LINK`].
    lowered_cache: std::cell::RefCell<Option<(Rc<Built>, LoweredPart)>>,
}

impl App {
    /// Whether dark colours are in use.
    pub(crate) fn dark(&self) -> bool {
        match self.theme {
            Theme::Auto => platform::prefers_dark(),
            Theme::Light => false,
            Theme::Dark => true,
        }
    }

    /// The focused pane's result, if it planned.
    pub(crate) fn focused(&self) -> Option<&PaneResult> {
        if let Some(v) = &self.focus_view {
            return Some(v);
        }
        self.results.get(self.state.focus).and_then(|r| r.done())
    }

    /// The gear the views show, when the model has gears.
    pub(crate) fn gear_shown(&self) -> Option<u64> {
        let (_, gears) = self.built.as_ref()?.gears.as_ref()?;
        self.state
            .shown_gear
            .filter(|g| gears.contains(g))
            .or_else(|| gears.last().copied())
    }

    /// The panes drawn with the focused one in the compare view, by index, with their plans:
    /// side by side, every other pane that planned; in a diff, the pane compared against.
    pub(crate) fn compared(&self) -> Vec<(usize, &PaneResult)> {
        let ok = |j: usize| {
            if let Some(Some(v)) = self.gear_views.get(j) {
                return Some((j, &**v));
            }
            self.results.get(j).and_then(|r| r.done()).map(|r| (j, r))
        };
        match self.state.compare.mode {
            CompareMode::Off => Vec::new(),
            CompareMode::Side => (0..self.state.panes.len())
                .filter(|&j| j != self.state.focus)
                .filter_map(ok)
                .collect(),
            CompareMode::Diff => self
                .state
                .compare
                .other(self.state.focus, self.state.panes.len())
                .and_then(ok)
                .into_iter()
                .collect(),
        }
    }

    /// The full-plan viewport of the focused pane; in the compare view, of every pane drawn
    /// (one byte axis up to the largest peak, so that the pictures compare).
    pub(crate) fn full_view(&self) -> Option<Viewport> {
        let b = self.built.as_ref()?;
        let r = self.focused()?;
        let peak = self
            .compared()
            .iter()
            .map(|(_, o)| o.plan.peak)
            .fold(r.plan.peak, u64::max);
        Some(Viewport::full(&b.problem, peak))
    }

    /// The current viewport.
    pub(crate) fn view(&self) -> Option<Viewport> {
        self.state.vp.or_else(|| self.full_view())
    }

    /// The step whose tensors the table lists: [`App::table_step`], or the one before a click
    /// until that click's frame has been painted.
    pub(crate) fn rows_step(&self) -> u64 {
        self.table_hold.unwrap_or_else(|| self.table_step())
    }

    /// The step shown in the table: the selected one, else the focused plan's peak step.
    pub(crate) fn table_step(&self) -> u64 {
        self.state
            .step
            .or_else(|| self.focused().map(|r| r.peak_step))
            .unwrap_or(0)
    }

    /// The page's address: its fragment and the queries that choose a model.
    fn address() -> Address {
        Address {
            hash: platform::hash(),
            model: platform::query("model"),
            sample: platform::query("sample"),
        }
    }

    /// Applies `action` to the state and runs the effects it asks for.
    fn dispatch(&mut self, ctx: &Context<Self>, action: Action) {
        let effects = self.state.apply(action);
        self.run(ctx, effects);
    }

    /// Runs the effects of an action: the only place they turn into loads, plans, links and
    /// messages to the host page.
    fn run(&mut self, ctx: &Context<Self>, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Open(Request::Sample(id), after) => self.load_sample(ctx, &id, after),
                Effect::Open(Request::Fetch { url, origin, name }, after) => {
                    self.start_fetch(ctx, url, origin, name, after)
                }
                Effect::Open(Request::Bytes(source), after) => self.open_source(ctx, source, after),
                Effect::Open(Request::Lowered { source, part }, after) => {
                    self.link_part = Some(part);
                    self.open_source(ctx, source, after);
                }
                Effect::Rebuild => self.rebuild(),
                Effect::Replan => self.replan(),
                Effect::RefreshViews => self.refresh_view(),
                Effect::SyncLink => self.sync_hash(),
                Effect::SyncLinkSoon => self.sync_hash_soon(),
                Effect::ReportToHost { name } => {
                    let mut fields =
                        vec![("name", name.into()), ("ok", self.error.is_none().into())];
                    if let Some(e) = &self.error {
                        fields.push(("error", e.as_str().into()));
                    }
                    platform::post_to_host("memplan:loaded", &fields);
                }
            }
        }
    }

    /// The plan of pane `i` (its settings, and the budget if its strategy searches under one).
    pub(crate) fn key(&self, i: usize) -> Option<PlanKey> {
        self.state
            .panes
            .get(i)
            .map(|s| PlanKey::new(s, self.state.budget))
    }

    /// Light after dark, dark after light (remembered outside embeds).
    fn toggle_theme(&mut self) {
        let dark = self.dark();
        self.theme = if dark { Theme::Light } else { Theme::Dark };
        platform::store("memplan-theme", if dark { "light" } else { "dark" });
        platform::set_theme(if dark { "light" } else { "dark" });
    }

    /// The window was resized: an embed reports its height; a phone's layout puts the
    /// timeline first (then the canvases are new and must be painted).
    fn resized(&mut self) -> bool {
        if self.embed {
            platform::post_height();
        }
        let narrow = platform::is_narrow();
        if narrow == self.narrow {
            return false;
        }
        self.narrow = narrow;
        self.painted = None;
        true
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let embed = platform::query("embed").is_some_and(|v| v == "1");
        let theme = match platform::query("theme")
            .or_else(|| {
                (!embed)
                    .then(|| platform::stored("memplan-theme"))
                    .flatten()
            })
            .as_deref()
        {
            Some("light") => Theme::Light,
            Some("dark") => Theme::Dark,
            _ => Theme::Auto,
        };
        let mut app = App {
            state: State::default(),
            embed,
            theme,
            source: None,
            loading: None,
            error: None,
            focus_view: None,
            gear_views: Vec::new(),
            built: None,
            tflm_error: None,
            results: Vec::new(),
            cache: HashMap::new(),
            ready_posted: false,
            fell_back: false,
            link: None,
            worker: None,
            worker_ready: false,
            parsing: None,
            parsed: 0,
            parsed_ready: None,
            built_parse: None,
            worker_parsed: None,
            running: None,
            job_id: 0,
            jobs_done: 0,
            ticker: None,
            painted: None,
            curve_cache: std::cell::RefCell::new(None),
            embed_active: false,
            sync_timer: None,
            table_top: 0.0,
            scroll_table: None,
            table_hold: None,
            dialog: None,
            dialog_note: None,
            focus_dialog: false,
            drag_over: false,
            narrow: platform::is_narrow(),
            inline: None,
            embed_warning: None,
            embed_info: None,
            link_part: None,
            lowered_cache: Default::default(),
        };
        platform::set_theme(if app.dark() { "dark" } else { "light" });
        app.link = Some(ctx.link().clone());
        let link = ctx.link().clone();
        platform::on_key(move |k| link.send_message(Msg::Key(k)));
        let link = ctx.link().clone();
        platform::on_hash_change(move || link.send_message(Msg::HashChanged));
        let link = ctx.link().clone();
        platform::on_hosted_model(move |name, bytes| link.send_message(Msg::Hosted(name, bytes)));

        let link = ctx.link().clone();
        platform::on_resize(move || link.send_message(Msg::Resized));
        app.dispatch(ctx, Action::Open(Self::address()));
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            // the state's actions: the reducer changes the state, `run` does the rest
            Msg::Sample(id) => self.dispatch(ctx, Action::Sample(id)),
            Msg::Hosted(name, bytes) => self.dispatch(ctx, Action::Hosted { name, bytes }),
            Msg::HashChanged => {
                let effects = self.state.apply(Action::HashChanged(Self::address()));
                if effects.is_empty() {
                    return false;
                }
                self.run(ctx, effects);
            }
            Msg::Sizes(text) => self.dispatch(ctx, Action::Sizes(text)),
            Msg::Schedule(order) => self.dispatch(ctx, Action::Schedule(order)),
            Msg::AliasViews(on) => self.dispatch(ctx, Action::AliasViews(on)),
            Msg::Gears(text) => self.dispatch(ctx, Action::Gears(text)),
            Msg::Budget(text) => self.dispatch(ctx, Action::Budget(text)),
            // the field already shows what was typed: no render (a large model's page would
            // render its views on every key)
            Msg::Typing(field, text) => {
                let effects = self.state.apply(Action::Typing(field, text));
                self.run(ctx, effects);
                return false;
            }
            Msg::ShowGear(g) => self.dispatch(ctx, Action::ShowGear(g)),
            Msg::Bind(dim, text) => self.dispatch(ctx, Action::Bind(dim, text)),
            Msg::SetPane(i, s) => self.dispatch(ctx, Action::SetPane(i, s)),
            Msg::AddPane => self.dispatch(ctx, Action::AddPane),
            Msg::RemovePane(i) => self.dispatch(ctx, Action::RemovePane(i)),
            Msg::Focus(i) => self.dispatch(ctx, Action::Focus(i)),
            Msg::Step(s) => self.dispatch(ctx, Action::Step(s)),
            Msg::ResetView => self.dispatch(ctx, Action::ResetView),
            Msg::Search(s) => self.dispatch(ctx, Action::Search(s)),
            Msg::Sort(c) => self.dispatch(ctx, Action::Sort(c)),
            Msg::Select(i) => self.dispatch(ctx, Action::Select(i)),
            Msg::SetCompare(c) => self.dispatch(ctx, Action::SetCompare(c)),
            // loading (loading.rs)
            Msg::File(f) => self.read_file(ctx, f),
            Msg::Loaded(r, after) => self.open_source(ctx, r, after),
            // the timeline and the table (pointer.rs)
            Msg::StepBy(d) => return self.step_by(d),
            Msg::SelectLive(up) => return self.select_live(up),
            Msg::Pointer(ux, uy, lx, ly) => return self.pointer(ux, uy, lx, ly),
            Msg::Leave => return self.leave(),
            Msg::Down(ux, uy) => return self.down(ux, uy),
            Msg::Up => return self.up(),
            Msg::Click(ux) => self.click(ux),
            Msg::Zoom(f, fx, fy) => self.zoom(f, fx, fy),
            Msg::TableCatchUp => return self.table_catch_up(),
            Msg::TableScroll(top) => return self.table_scroll(top),
            Msg::Key(k) => return self.on_key(ctx, &k),
            // links, embeds and downloads (links.rs, downloads.rs)
            Msg::SyncHash => {
                self.sync_hash();
                return false;
            }
            Msg::CopyLink => self.copy_link(ctx),
            Msg::ShowEmbed => self.show_embed(),
            Msg::CopySnippet => self.copy_snippet(ctx),
            Msg::CloseDialog => self.dialog = None,
            Msg::DialogNote(n) => self.dialog_note = Some(n),
            Msg::Export(k) => {
                self.export(k);
                return false;
            }
            Msg::Tflm(i, f) => self.tflm_error = self.export_tflm(i, f).err().map(|e| (i, e)),
            // the planning worker (jobs.rs)
            Msg::WorkerText(text) => return self.worker_text(ctx, text),
            Msg::WorkerError(e) => self.worker_error(e),
            Msg::Cancel(i) => return self.cancel(i),
            Msg::Retry(i) => {
                if let Some(s) = self.key(i) {
                    self.cache.remove(&s);
                    self.replan();
                }
            }
            Msg::Tick => return self.running.is_some() || self.parsing.is_some(),
            Msg::InstallParsed => return self.install_parsed(ctx),
            Msg::Replan => self.replan(),
            Msg::CancelParse => return self.cancel_parse(),
            // the page
            Msg::Notice(n) => {
                self.state.notice = Some(n);
                self.state.notice_field = None;
            }
            Msg::ToggleTheme => self.toggle_theme(),
            Msg::DragOver(on) if on == self.drag_over => return false,
            Msg::DragOver(on) => self.drag_over = on,
            Msg::Resized => return self.resized(),
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        if self.embed {
            self.view_embed(ctx)
        } else {
            self.view_full(ctx)
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        self.paint();
        if std::mem::take(&mut self.focus_dialog) {
            platform::focus("embed-copy");
        }
        if let Some(top) = self.scroll_table.take() {
            platform::set_scroll_top("tensor-scroll", top);
        }
        if self.embed {
            platform::post_height();
        }
        if self.built.is_some() {
            platform::mark_ready();
        }
    }
}
