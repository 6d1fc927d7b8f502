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
use crate::settings::{Compare, CompareMode, PaneSettings, MAX_PANES};
use crate::share::{self, ModelRef, Shared};
use crate::timeline::Viewport;

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

/// Table columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// Tensor name.
    Name,
    /// Producing op.
    Op,
    /// Raw bytes.
    Bytes,
    /// Planned bytes.
    Planned,
    /// First step.
    Start,
    /// Last step.
    End,
    /// Offset.
    Offset,
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

/// What a finished load should do with the pane settings.
#[derive(Debug, Clone, PartialEq)]
pub enum After {
    /// Keep panes and bindings from a link.
    Keep,
    /// A new model picked by the user: reset bindings, retarget sizes.
    Fresh,
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

/// The table's sort when the link says nothing.
const DEFAULT_SORT: (Col, bool) = (Col::Planned, true);
/// Smallest size of the timeline's labels on screen, CSS px (a phone scales its text up to it).
const LABEL_PX: f64 = 10.0;
/// A model's `m=` part for links ([`share::lowered_part`]), or its length in characters when
/// over [`share::MAX_LINK`].
type LoweredPart = Result<Rc<str>, usize>;
/// Up to this many buffers, a local file's lowered problem is made for the address bar's link
/// as soon as it is built; a larger one only when a link is asked for (Copy link, Embed).
const EAGER_LOWERED_BUFFERS: usize = 8_000;

/// A column's name in links.
fn col_name(c: Col) -> &'static str {
    match c {
        Col::Name => "name",
        Col::Op => "op",
        Col::Bytes => "bytes",
        Col::Planned => "planned",
        Col::Start => "start",
        Col::End => "end",
        Col::Offset => "offset",
    }
}

/// The column named in a link.
fn col_from_name(name: &str) -> Option<Col> {
    [
        Col::Name,
        Col::Op,
        Col::Bytes,
        Col::Planned,
        Col::Start,
        Col::End,
        Col::Offset,
    ]
    .into_iter()
    .find(|&c| col_name(c) == name)
}

/// What the timeline canvas was painted from: a new key means a new picture.
#[derive(Debug, Clone, PartialEq)]
struct PaintKey {
    /// Addresses of the results drawn, the focused pane's first (results are shared, never
    /// changed in place).
    results: Vec<usize>,
    /// The compare view drawn.
    compare: Compare,
    /// The viewport, bit for bit.
    view: [u64; 4],
    dark: bool,
    budget: Option<u64>,
    /// The canvas's width in CSS pixels.
    width: i32,
}

/// The playground component.
pub struct App {
    pub(crate) embed: bool,
    pub(crate) theme: Theme,
    pub(crate) source: Option<Source>,
    pub(crate) loading: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) link_error: Option<String>,
    /// Dynamic-batch gears of the model (empty: off).
    pub(crate) gears: Vec<u64>,
    /// The gear the timeline and table show (default: the largest).
    pub(crate) shown_gear: Option<u64>,
    /// View outputs share their dying input's buffer (the CLI's `--alias-views`).
    pub(crate) alias_views: bool,
    /// The op order the model is lowered in (the CLI's `--schedule`); `None`: the graph's own.
    pub(crate) schedule: Option<ScheduleOrder>,
    /// Tensor sizes the user gave, bytes (the CLI's `--size`), by tensor name.
    pub(crate) sizes: std::collections::BTreeMap<String, u64>,
    /// Memory budget in bytes: each pane says whether its plan fits.
    pub(crate) budget: Option<u64>,
    /// The focused pane's result restricted to the shown gear (only with gears).
    focus_view: Option<Rc<PaneResult>>,
    /// With gears, every pane's result restricted to the shown gear, by pane (the compare
    /// view draws the other panes' too).
    gear_views: Vec<Option<Rc<PaneResult>>>,
    pub(crate) notice: Option<String>,
    pub(crate) bindings: Bindings,
    /// Symbolic dims the user (or the link) gave; the others were bound to 1 by default and
    /// every pane says so.
    pub(crate) user_dims: std::collections::BTreeSet<String>,
    pub(crate) built: Option<Rc<Built>>,
    /// Whether the last model that built was a graph (`None` before any): a failed load
    /// leaves `built` empty, and the panes keep the settings of this kind.
    last_kind: Option<bool>,
    /// The last model that built was a `.tflite` (its panes are on TFLM's rules).
    last_tflm: bool,
    /// Why a pane's plan could not be exported to TFLM: (pane, message), until it plans again.
    pub(crate) tflm_error: Option<(usize, String)>,
    pub(crate) panes: Vec<PaneSettings>,
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
    /// The input whose error [`App::notice`] shows (`"gears"`, `"dim:<name>"`), if any: a
    /// valid value typed there clears it.
    notice_field: Option<String>,
    /// Inputs holding text that did not parse, by field (`dim:<name>`, `gears`, `sizes`,
    /// `budget`): what was typed, kept in the field, and the error shown under it.
    pub(crate) drafts: HashMap<String, (String, String)>,
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
    /// The next link update adds a history entry (a new model was loaded).
    push_next: bool,
    /// The selected tensor (outlined; the link keeps it by name).
    pub(crate) selected: Option<usize>,
    /// A selected tensor's name from a link, resolved once its model has built.
    selected_name: Option<String>,
    /// A zoom window from a link, kept over the load that follows it.
    link_view: Option<Viewport>,
    /// Redraws the elapsed time while a job is in flight.
    ticker: Option<crate::platform::Interval>,
    /// In an embed: the timeline was clicked, so the wheel zooms it (before, the page scrolls).
    pub(crate) embed_active: bool,
    /// What the timeline canvas shows now.
    painted: Option<PaintKey>,
    /// The live-bytes curve's SVG and what it was drawn from ([`App::curve`]).
    curve_cache: std::cell::RefCell<Option<(PaintKey, AttrValue)>>,
    pub(crate) focus: usize,
    /// The compare view: other panes' timelines on shared axes, or a diff against one.
    pub(crate) compare: Compare,
    /// The tensor table's scroll position, CSS pixels: only the rows near it are rendered.
    pub(crate) table_top: f64,
    /// After the next render, scroll the table box to this many CSS pixels (set with
    /// [`App::table_top`], so that the scroll event that follows renders nothing new).
    scroll_table: Option<f64>,
    /// After a click, the step the table still shows until [`Msg::TableCatchUp`]: the click's
    /// frame (cursor, selection) is painted first, the table's rows right after it.
    table_hold: Option<u64>,
    pub(crate) step: Option<u64>,
    pub(crate) vp: Option<Viewport>,
    pub(crate) hover: Option<(usize, f64, f64)>,
    pub(crate) drag: Option<(f64, f64, Viewport, bool)>,
    pub(crate) search: String,
    pub(crate) sort: (Col, bool),
    pub(crate) dialog: Option<String>,
    /// What the embed dialog's Copy came to.
    pub(crate) dialog_note: Option<String>,
    /// Focus the embed dialog's first button once it is drawn (a modal takes the focus).
    focus_dialog: bool,
    pub(crate) drag_over: bool,
    /// Laid out for a phone ([`platform::is_narrow`]): the timeline before the panes.
    pub(crate) narrow: bool,
    pub(crate) inline: Option<ModelRef>,
    /// Opened from a link that left its model out (too large to carry): the model's name
    /// (empty if the link does not say). The default sample is shown instead, and links made
    /// from this view leave the model out too.
    pub(crate) missing_model: Option<String>,
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
    last_hash: String,
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
        self.results.get(self.focus).and_then(|r| r.done())
    }

    /// The gear the views show, when the model has gears.
    pub(crate) fn gear_shown(&self) -> Option<u64> {
        let (_, gears) = self.built.as_ref()?.gears.as_ref()?;
        self.shown_gear
            .filter(|g| gears.contains(g))
            .or_else(|| gears.last().copied())
    }

    /// With gears, the focused result restricted to the shown gear: other gears' buffers get
    /// size 0 (not drawn, not counted in the curve), their blocks are dropped.
    fn refresh_view(&mut self) {
        self.focus_view = None;
        self.gear_views.clear();
        let (Some(b), Some(g)) = (self.built.clone(), self.gear_shown()) else {
            return;
        };
        self.gear_views = self
            .results
            .iter()
            .map(|r| r.done().map(|r| Rc::new(gear_view(&b, r, g))))
            .collect();
        self.focus_view = self.gear_views.get(self.focus).cloned().flatten();
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
        match self.compare.mode {
            CompareMode::Off => Vec::new(),
            CompareMode::Side => (0..self.panes.len())
                .filter(|&j| j != self.focus)
                .filter_map(ok)
                .collect(),
            CompareMode::Diff => self
                .compare
                .other(self.focus, self.panes.len())
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
        self.vp.or_else(|| self.full_view())
    }

    /// The step whose tensors the table lists: [`App::table_step`], or the one before a click
    /// until that click's frame has been painted.
    pub(crate) fn rows_step(&self) -> u64 {
        self.table_hold.unwrap_or_else(|| self.table_step())
    }

    /// The step shown in the table: the selected one, else the focused plan's peak step.
    pub(crate) fn table_step(&self) -> u64 {
        self.step
            .or_else(|| self.focused().map(|r| r.peak_step))
            .unwrap_or(0)
    }

    fn model_ref(&self) -> Option<ModelRef> {
        if self.missing_model.is_some() {
            return None;
        }
        let src = self.source.as_ref()?;
        match &src.origin {
            Origin::Sample(id) => Some(ModelRef::Sample(id.clone())),
            Origin::Url(u) => Some(ModelRef::Url(u.clone())),
            Origin::File | Origin::Link => self.inline.clone().or_else(|| {
                Some(ModelRef::Lowered {
                    name: src.name.clone(),
                    json: Vec::new(),
                    part: self.lowered()?.ok()?,
                })
            }),
        }
    }

    /// The model as links carry it lowered, if made ([`App::make_lowered`]): the `m=` part,
    /// or its length when over the limit; `None` when the model travels otherwise.
    fn lowered(&self) -> Option<LoweredPart> {
        let (src, b) = (self.source.as_ref()?, self.built.as_ref()?);
        if self.inline.is_some() || self.missing_model.is_some() {
            return None;
        }
        match src.origin {
            Origin::Link if src.format == Format::Lowered => self.link_part.clone().map(Ok),
            Origin::File | Origin::Link => self
                .lowered_cache
                .borrow()
                .as_ref()
                .filter(|(k, _)| Rc::ptr_eq(k, b))
                .map(|(_, r)| r.clone()),
            _ => None,
        }
    }

    /// Makes the lowered part of a local file's model for links, once per build; on large
    /// problems only when a link is asked for, as it is a main-thread deflate of the whole
    /// problem (about 0.2 s for 60k buffers).
    fn make_lowered(&self, asked: bool) {
        let (Some(src), Some(b)) = (self.source.as_ref(), self.built.as_ref()) else {
            return;
        };
        let mine =
            matches!(src.origin, Origin::File | Origin::Link) && src.format != Format::Lowered;
        if !mine
            || self.inline.is_some()
            || self.missing_model.is_some()
            || (!asked && b.problem.buffers.len() > EAGER_LOWERED_BUFFERS)
            || self.lowered().is_some()
        {
            return;
        }
        let part = share::lowered_part(b).map(Rc::from);
        *self.lowered_cache.borrow_mut() = Some((b.clone(), part));
    }

    /// The state a link carries.
    pub(crate) fn shared(&self) -> Shared {
        let model = self.model_ref();
        let missing = match (&model, &self.missing_model, &self.source) {
            (Some(_), _, _) => None,
            (None, Some(name), _) => Some(name.clone()),
            (None, None, Some(src)) => Some(share::short_name(&src.name)),
            (None, None, None) => None,
        }
        .filter(|n| !n.is_empty());
        Shared {
            model,
            missing,
            bindings: self.bindings.clone(),
            gears: self.gears.clone(),
            shown_gear: self.shown_gear,
            // graph settings: a link to a buffer list does not carry them
            alias_views: self.alias_views && self.last_kind == Some(true),
            schedule: self.schedule.filter(|_| self.last_kind == Some(true)),
            sizes: if self.last_kind == Some(true) {
                self.sizes.clone()
            } else {
                Default::default()
            },
            budget: self.budget,
            panes: self.panes.clone(),
            focus: self.focus,
            step: self.step,
            view: self.vp.map(|v| [v.x0, v.x1, v.y0, v.y1]),
            search: self.search.clone(),
            sort: (self.sort != DEFAULT_SORT)
                .then(|| (col_name(self.sort.0).to_string(), self.sort.1)),
            selected: self
                .selected
                .and_then(|i| self.built.as_ref()?.problem.buffers.get(i))
                .map(|b| b.name.clone()),
            // a diff against a pane since removed names the one it now shows
            compare: (self.compare.mode != CompareMode::Off).then(|| Compare {
                mode: self.compare.mode,
                with: match self.compare.mode {
                    CompareMode::Diff => self.compare.other(self.focus, self.panes.len()),
                    _ => None,
                }
                .unwrap_or(0),
            }),
        }
    }

    fn sync_hash(&mut self) {
        if self.source.is_none() {
            return;
        }
        self.sync_timer = None;
        self.make_lowered(false);
        let (h, _) = share::encode(&self.shared());
        if h != self.last_hash {
            // a new model or sample is a new history entry (Back returns to the last one);
            // settings, zoom and the like replace the current one
            if std::mem::take(&mut self.push_next) {
                platform::push_hash(&h);
            } else {
                platform::replace_hash(&h);
            }
            self.last_hash = h;
        }
    }

    /// Updates the link a little later: zooming and typing change it many times a second.
    fn sync_hash_soon(&mut self) {
        if let Some(link) = &self.link {
            let link = link.clone();
            self.sync_timer = Some(platform::after(300, move || {
                link.send_message(Msg::SyncHash)
            }));
        }
    }

    /// The full link to this view (`embed` adds `?embed=1`).
    pub(crate) fn link(&self, embed: bool) -> (String, bool) {
        self.make_lowered(true);
        let state = self.shared();
        // a file too large to inline leaves the link without a model
        let (h, inline_ok) = share::encode(&state);
        let whole = inline_ok && state.model.is_some();
        let base = platform::page_url(false);
        let q = if embed {
            format!(
                "?embed=1&theme={}",
                if self.dark() { "dark" } else { "light" }
            )
        } else {
            String::new()
        };
        (format!("{base}{q}#{h}"), whole)
    }

    /// Why a link or embed of this view will not show its model, if it will not.
    fn link_warning(&self, embed: bool) -> Option<String> {
        let (what, opener) = if embed {
            ("The embed", "the frame")
        } else {
            ("The link", "whoever opens it")
        };
        if self.missing_model.is_some() {
            return Some(format!("{what} keeps every setting, but not the model: the link this view came from did not include it either, so {opener} will show the default sample, with a notice saying so."));
        }
        let (_, whole) = self.link(embed);
        if whole {
            return None;
        }
        let why = match self.lowered() {
            Some(Err(len)) => format!("this model is too large to carry, even as its lowered problem ({} compressed; a link carries at most {})", crate::format::chars(len), crate::format::chars(share::MAX_LINK)),
            _ => "this model is too large to carry inline".to_string(),
        };
        Some(format!("{what} keeps every setting, but {why}: {opener} will show the default sample instead, with a notice saying so. To share the model itself, serve the file and open it with ?model=<its URL>, or pick a built-in sample."))
    }

    /// What a link or embed of this view carries instead of the model's file, if it carries
    /// the lowered problem.
    fn link_info(&self, embed: bool) -> Option<String> {
        let part = self.lowered()?.ok()?;
        let what = if embed { "The embed" } else { "The link" };
        // a buffer list (CSV) has no ops, shapes, dims or gears to carry: say only what there is
        let graph = self.built.as_ref().is_some_and(|b| b.is_graph);
        let (carried, fixed) = if graph {
            (
                "its buffers with their sizes and live ranges, ops and shapes",
                "; the dims, gears and lowering settings stay as they are now",
            )
        } else {
            ("its buffers with their sizes and live ranges", "")
        };
        Some(format!("{what} carries this model's lowered problem ({} of link), not the file: {carried}, so it plans to the same figures{fixed}.", crate::format::chars(part.len())))
    }

    fn start_fetch(
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
    fn still_showing(&self, e: String) -> String {
        match self.built.as_ref().and(self.source.as_ref()) {
            Some(open) => format!("{e} (still showing {})", open.name),
            None => e,
        }
    }

    /// A link's (or `?model=`'s) model failed: say so in the link banner and open the default
    /// sample with the link's settings, as for every other bad link.
    fn fall_back(&mut self, ctx: &Context<Self>, why: String) {
        self.fell_back = true;
        self.link_error = Some(why);
        self.load_sample(ctx, samples::DEFAULT_SAMPLE, After::Keep);
    }

    fn load_sample(&mut self, ctx: &Context<Self>, id: &str, after: After) {
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

    /// Applies the fragment, or the query, or the default sample.
    fn boot(&mut self, ctx: &Context<Self>) {
        let h = platform::hash();
        if !h.is_empty() {
            self.last_hash = h.clone();
            match share::decode(&h) {
                Ok(s) => {
                    self.panes = s.panes;
                    self.user_dims = s.bindings.keys().cloned().collect();
                    self.bindings = s.bindings;
                    self.gears = s.gears;
                    self.shown_gear = s.shown_gear;
                    self.alias_views = s.alias_views;
                    self.schedule = s.schedule;
                    self.sizes = s.sizes;
                    self.budget = s.budget;
                    self.focus = s.focus;
                    self.step = s.step;
                    self.vp = s.view.map(|[x0, x1, y0, y1]| Viewport { x0, x1, y0, y1 });
                    self.link_view = self.vp;
                    self.search = s.search;
                    self.sort = s
                        .sort
                        .and_then(|(c, d)| col_from_name(&c).map(|c| (c, d)))
                        .unwrap_or(DEFAULT_SORT);
                    self.selected_name = s.selected;
                    self.compare = s.compare.unwrap_or_default();
                    self.link_error = None;
                    // a link from another planner version: its figures may differ
                    self.notice = share::version_note(&h);
                    self.missing_model = None;
                    match s.model {
                        Some(ModelRef::Sample(id)) => self.load_sample(ctx, &id, After::Keep),
                        Some(ModelRef::Url(u)) => {
                            let name = u.rsplit('/').next().unwrap_or("model").to_string();
                            self.start_fetch(ctx, u.clone(), Origin::Url(u), name, After::Keep);
                        }
                        Some(ModelRef::Text { name, text }) => {
                            ctx.link().send_message(Msg::Loaded(
                                Source::new(&name, Origin::Link, text.into_bytes()),
                                After::Keep,
                            ))
                        }
                        Some(ModelRef::Lowered { name, json, part }) => {
                            self.link_part = Some(part);
                            let r = Source::new(&name, Origin::Link, json).map(|mut s| {
                                s.format = Format::Lowered;
                                s
                            });
                            ctx.link().send_message(Msg::Loaded(r, After::Keep));
                        }
                        Some(ModelRef::Problem(p)) => {
                            let r = serde_json::to_vec(&p)
                                .map_err(|e| e.to_string())
                                .and_then(|b| Source::new(&p.name, Origin::Link, b))
                                .map(|mut s| {
                                    s.format = Format::ProblemJson;
                                    s
                                });
                            ctx.link().send_message(Msg::Loaded(r, After::Keep));
                        }
                        None => {
                            // Said in a banner of its own (also in an embed) for as long as
                            // the default sample stands in for the model.
                            self.missing_model = Some(s.missing.unwrap_or_default());
                            self.load_sample(ctx, samples::DEFAULT_SAMPLE, After::Keep);
                        }
                    }
                    return;
                }
                Err(e) => {
                    self.link_error = Some(e);
                }
            }
        }
        if let Some(url) = platform::query("model") {
            if url.starts_with("http://") || url.starts_with("https://") || url.starts_with('/') {
                let name = url.rsplit('/').next().unwrap_or("model").to_string();
                let origin = if url.starts_with('/') {
                    Origin::File
                } else {
                    Origin::Url(url.clone())
                };
                self.start_fetch(ctx, url, origin, name, After::Fresh);
                return;
            }
            self.link_error = Some("?model= must be an http(s) URL".into());
        }
        let id = platform::query("sample")
            .filter(|id| samples::find(id).is_some())
            .unwrap_or_else(|| samples::DEFAULT_SAMPLE.to_string());
        // A fresh load clears messages: keep the one saying why the link was not used.
        let after = if self.link_error.is_some() {
            After::Keep
        } else {
            After::Fresh
        };
        self.load_sample(ctx, &id, after);
    }

    /// A model-level setting changed: lower the model again, from the whole view, and say so
    /// in the link.
    fn relower(&mut self) {
        self.vp = None;
        self.rebuild();
        self.sync_hash();
    }

    /// The model-level lowering settings (views, op order, tensor sizes).
    fn lowering(&self) -> model::Lowering {
        model::Lowering {
            alias_views: self.alias_views,
            schedule: self.schedule,
            sizes: self.sizes.clone(),
        }
    }

    /// Parses and lowers the source under the bindings, then plans every pane (a large file
    /// in the worker: the open model stays on screen until it answers).
    fn rebuild(&mut self) {
        let Some(src) = self.source.clone() else {
            self.cache.clear();
            self.built = None;
            self.replan();
            return;
        };
        let (bindings, gears) = (self.bindings.clone(), self.gears.clone());
        if self.parse_in_worker(&src) {
            self.request_parse(src, None, bindings, gears);
        } else {
            let outcome = model::build_settled(&src, &bindings, &gears, &self.lowering());
            self.install(outcome, None);
        }
    }

    /// Whether `src` is parsed in the worker (large, and a worker can be started).
    fn parse_in_worker(&self, src: &Source) -> bool {
        self.link.is_some() && src.bytes.len() >= model::PARSE_IN_WORKER_BYTES
    }

    /// Sends `src` to the worker to parse; a parse or plan in flight is stopped (it was for
    /// what this replaces).
    fn request_parse(
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

    /// Shows a built model (or its error) and plans every pane.
    fn install(&mut self, outcome: model::Outcome, parse: Option<u64>) {
        self.cache.clear();
        // the job in flight plans the old problem
        if self.running.take().is_some() {
            self.stop_worker();
        }
        self.built = None;
        self.error = None;
        self.bindings = outcome.bindings;
        self.gears = outcome.gears;
        if let Some(n) = outcome.notice {
            self.field_notice("gears", n);
        }
        if let Some(n) = outcome.sizes_notice {
            // the model is built without them: the field keeps them, with the reason
            let typed = std::mem::take(&mut self.sizes)
                .iter()
                .map(|(name, bytes)| format!("{name}={bytes}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.bad_input("sizes", typed, n);
        }
        if let Some(n) = outcome.schedule_notice {
            // built in file order: the control says so, and offers the others again
            self.schedule = Some(ScheduleOrder::File);
            self.field_notice("schedule", n);
        }
        // a dim whose default of 1 is impossible: its field asks for a value
        if let Ok(b) = &outcome.built {
            for a in &b.asked_dims {
                self.bad_input(&format!("dim:{}", a.dim), String::new(), a.message());
            }
        }
        match (outcome.built, &self.source) {
            (Ok(b), Some(src)) => {
                self.inline = inline_ref(src);
                self.last_kind = Some(b.is_graph);
                self.last_tflm = b.tflm.is_some();
                self.built = Some(Rc::new(b));
                self.built_parse = parse;
            }
            (Ok(_), None) => {}
            (Err(e), _) => self.error = Some(e),
        }
        self.replan();
    }

    /// Shows `message` as the notice about input `field`.
    fn field_notice(&mut self, field: &str, message: String) {
        self.notice = Some(message);
        self.notice_field = Some(field.to_string());
    }

    /// Input `field` holds `text`, which did not parse: the field keeps it and says why under
    /// it, as does the notice.
    fn bad_input(&mut self, field: &str, text: String, message: String) {
        self.drafts
            .insert(field.to_string(), (text, message.clone()));
        self.field_notice(field, message);
    }

    /// Clears the notice if it is about input `field` (a valid value was typed there).
    fn clear_notice_of(&mut self, field: &str) {
        self.drafts.remove(field);
        if self.notice_field.as_deref() == Some(field) {
            self.notice = None;
            self.notice_field = None;
        }
    }

    /// A loaded file built (on the page or in the worker): it replaces the open model, or,
    /// when a newly picked file fails, the open model stays with the message.
    fn loaded(
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
            self.user_dims.clear();
            self.shown_gear = None;
            self.step = None;
            self.link_error = None;
            self.notice = None;
            self.drafts.clear();
            self.missing_model = None;
        }
        let was_graph = self.last_kind;
        self.source = Some(src);
        self.vp = if after == After::Keep {
            self.link_view.take()
        } else {
            None
        };
        self.hover = None;
        self.selected = None;
        if after == After::Fresh {
            self.push_next = true;
            self.selected_name = None;
            self.search.clear();
        }
        // a model of the other kind (graph or buffer list): the panes follow it before they
        // plan, so that no plan is started (and stopped) for the old kind's settings
        if let Ok(b) = &outcome.built {
            if after == After::Fresh && kind_changed(was_graph, b.is_graph) {
                let g = b.is_graph;
                self.panes.iter_mut().for_each(|p| p.retarget(g));
            }
            // a .tflite model's panes start on TFLM's rules, TFLM's planner against the best
            // packing; leaving one, they go back to the defaults of the new kind
            let tflm = b.tflm.is_some();
            if after == After::Fresh && tflm != self.last_tflm {
                let rules = crate::settings::Rules::of(b.is_graph, tflm);
                for i in 0..self.panes.len() {
                    let used: Vec<String> =
                        self.panes[..i].iter().map(|p| p.strategy.clone()).collect();
                    let used: Vec<&str> = used.iter().map(String::as_str).collect();
                    self.panes[i].reset_to(i, rules, &used);
                }
            }
        }
        self.install(outcome, parse);
        if from_link && self.built.is_none() {
            let e = self.error.take().unwrap_or_default();
            self.fall_back(ctx, e);
            return;
        }
        if let (Some(name), Some(b)) = (self.selected_name.take(), &self.built) {
            self.selected = b.problem.buffers.iter().position(|x| x.name == name);
            self.reveal_selected_row();
        }
        self.sync_hash();
    }

    fn replan(&mut self) {
        // a refused TFLM export speaks of the plan it was asked for
        self.tflm_error = None;
        let Some(b) = self.built.clone() else {
            self.results.clear();
            return;
        };
        self.results = self
            .panes
            .iter()
            .map(|s| {
                let key = PlanKey::new(s, self.budget);
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
        if self.focus >= self.panes.len() {
            self.focus = 0;
        }
        if let (Some(s), Some(b)) = (self.step, &self.built) {
            if s >= b.problem.steps {
                self.step = None;
            }
        }
        self.refresh_view();
        self.pump();
    }

    /// Paints the timeline canvas if the picture changed since the last paint (plan, view,
    /// theme, budget or width); pointer moves only redraw the overlay.
    fn paint(&mut self) {
        let (Some(b), Some(r), Some(vp)) = (self.built.clone(), self.focused(), self.view()) else {
            self.painted = None;
            return;
        };
        let others = self.compared();
        let key = PaintKey {
            results: std::iter::once(r)
                .chain(others.iter().map(|(_, o)| *o))
                .map(|x| x as *const PaneResult as usize)
                .collect(),
            compare: self.compare,
            view: [vp.x0, vp.x1, vp.y0, vp.y1].map(f64::to_bits),
            dark: self.dark(),
            budget: self.budget,
            width: platform::client_width("timeline-canvas"),
        };
        if self.painted.as_ref() == Some(&key) || key.width == 0 {
            return;
        }
        let o = crate::timeline::SvgOptions {
            dark: key.dark,
            budget: self.budget,
            text_scale: crate::timeline::text_scale_for(f64::from(key.width), LABEL_PX),
            ..Default::default()
        };
        let mut scene = crate::timeline::timeline_scene(&b.problem, r, &vp, &o);
        match (self.compare.mode, others.first()) {
            (CompareMode::Diff, Some((_, other))) => {
                let moved = analysis::moved(&r.plan, &other.plan);
                scene.plot.extend(crate::timeline::diff_shapes(
                    &b.problem, r, other, &moved, &vp, key.dark,
                ));
            }
            (CompareMode::Side, _) => {
                for (j, other) in &others {
                    let s = crate::timeline::timeline_scene(&b.problem, other, &vp, &o);
                    platform::paint_scene(&format!("compare-canvas-{j}"), &s);
                }
            }
            _ => {}
        }
        platform::paint_scene("timeline-canvas", &scene);
        self.painted = Some(key);
    }

    /// Scrolls the tensor table (in this render, and its box after it) so that the selected row
    /// is in view, if it is out of it: only the rows near the scroll position are rendered.
    fn reveal_selected_row(&mut self) {
        use crate::views::TABLE_ROW_PX;
        let (Some(b), Some(r), Some(sel)) = (self.built.as_ref(), self.focused(), self.selected)
        else {
            return;
        };
        let Some(pos) = self.table_rows(b, r).iter().position(|&i| i == sel) else {
            return;
        };
        // the scroll box shows about 18 rows
        let first = (self.table_top / TABLE_ROW_PX).floor();
        let pos = pos as f64;
        if pos < first || pos >= first + 16.0 {
            let top = (pos - 3.0).max(0.0) * TABLE_ROW_PX;
            self.table_top = top;
            self.scroll_table = Some(top);
        }
    }

    /// The live-bytes curve of `r` in view `vp` (without its step cursor), drawn again only
    /// when the plan, view, theme or budget changed: formatting its path costs milliseconds
    /// on every render otherwise.
    pub(crate) fn curve(&self, r: &PaneResult, vp: &Viewport, dark: bool) -> AttrValue {
        let key = PaintKey {
            // with the peak and the curve's length: a result freed and another made at its
            // address (a gear's view) does not pass for it
            results: vec![
                r as *const PaneResult as usize,
                usize::try_from(r.plan.peak).unwrap_or(usize::MAX),
                r.curve.len(),
            ],
            compare: Compare::default(),
            view: [vp.x0, vp.x1, vp.y0, vp.y1].map(f64::to_bits),
            dark,
            budget: self.budget,
            width: platform::client_width("timeline-canvas"),
        };
        // before the first paint the canvas has no width yet: the window's is near it
        let width = match key.width {
            0 => platform::window_width() - 48.0,
            w => f64::from(w),
        };
        let scale = crate::timeline::text_scale_for(width, LABEL_PX);
        let mut cache = self.curve_cache.borrow_mut();
        if let Some((k, svg)) = cache.as_ref() {
            if *k == key {
                return svg.clone();
            }
        }
        let svg = AttrValue::from(crate::timeline::curve_svg(
            r,
            vp,
            None,
            dark,
            self.budget,
            scale,
        ));
        *cache = Some((key, svg.clone()));
        svg
    }

    /// The plan of pane `i` (its settings, and the budget if its strategy searches under one).
    pub(crate) fn key(&self, i: usize) -> Option<PlanKey> {
        self.panes.get(i).map(|s| PlanKey::new(s, self.budget))
    }

    /// Plans some pane shows that wait for the worker, in pane order.
    fn waiting(&self) -> Vec<PlanKey> {
        let Some(b) = self.built.as_ref().filter(|_| self.parsing.is_none()) else {
            return Vec::new();
        };
        let mut out: Vec<PlanKey> = Vec::new();
        for s in &self.panes {
            let key = PlanKey::new(s, self.budget);
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
    fn stop_worker(&mut self) {
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
    fn ensure_worker(&mut self) -> Result<(), String> {
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
    fn send_parse(&mut self) {
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
            alias_views: self.alias_views,
            schedule: self.schedule.map(|o| o.name().to_string()),
            sizes: self.sizes.clone(),
        };
        if let (Some(w), Ok(header)) = (&self.worker, serde_json::to_string(&job)) {
            w.post_with_bytes(&header, &p.source.bytes);
        }
        if let Some(p) = &mut self.parsing {
            p.sent = true;
        }
    }

    /// Sends the next waiting pane to the worker, or stops a job no pane shows any more.
    fn pump(&mut self) {
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
                        let shows = self.panes.get(i).map(|s| PlanKey::new(s, self.budget));
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
    fn settle(&mut self, key: PlanKey, result: Result<PaneResult, Failure>) {
        self.cache.insert(key, Rc::new(result.into()));
        self.replan();
    }

    /// Downloads pane `i`'s plan of the open `.tflite` model as `file`.
    ///
    /// # Errors
    /// The pane's message: no plan yet, or core's refusal to export it.
    fn export_tflm(&self, i: usize, file: crate::tflm::TflmFile) -> Result<(), String> {
        let (Some(b), Some(src), Some(s)) = (&self.built, &self.source, self.panes.get(i)) else {
            return Err("No model loaded.".to_string());
        };
        let Some(r) = self.results.get(i).and_then(|r| r.done()) else {
            return Err("This pane has no plan yet.".to_string());
        };
        let files = crate::tflm::files(
            src,
            b,
            &self.bindings,
            &self.gears,
            &self.lowering(),
            &s.strategy,
            &r.plan,
        )?;
        let stem = src
            .name
            .rsplit_once('.')
            .map_or(src.name.as_str(), |(s, _)| s);
        let tag = s
            .strategy
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
        match file {
            crate::tflm::TflmFile::Model => platform::download_bytes(
                &format!("{stem}.{tag}.tflite"),
                "application/octet-stream",
                &files.tflite,
            ),
            crate::tflm::TflmFile::Header => {
                platform::download(&format!("{stem}.{tag}.h"), "text/x-c", &files.header);
            }
        }
        Ok(())
    }

    fn export(&self, kind: Export) {
        let (Some(b), Some(src)) = (&self.built, &self.source) else {
            return;
        };
        let stem = src
            .name
            .rsplit_once('.')
            .map_or(src.name.as_str(), |(s, _)| s)
            .to_string();
        match kind {
            Export::PlanJson => {
                let plans: Vec<(&PaneSettings, &PaneResult)> = self
                    .panes
                    .iter()
                    .zip(&self.results)
                    .filter_map(|(s, r)| r.done().map(|r| (s, r)))
                    .collect();
                let (link, _) = self.link(false);
                // it fails only on sizes that overflow, which the build refused already
                if let Ok(json) = crate::export::plan_json(&src.name, b, &plans, Some(&link)) {
                    platform::download(&format!("{stem}.plan.json"), "application/json", &json);
                }
            }
            Export::Svg | Export::Png => {
                if let (Some(r), Some(vp)) = (self.focused(), self.view()) {
                    let gear = self
                        .gear_shown()
                        .map_or(String::new(), |g| format!(" · gear: batch {g}"));
                    let (link, _) = self.link(false);
                    let o = crate::timeline::SvgOptions {
                        step: self.step,
                        dark: false,
                        title: Some(format!(
                            "{} · {}{gear}",
                            src.name,
                            self.panes[self.focus].label()
                        )),
                        budget: self.budget,
                        lower_bound: Some(r.lower_bound),
                        caption: Some(format!(
                            "memplan: peak {} vs lower bound {} · open in the playground: {}",
                            crate::format::binary(r.plan.peak),
                            crate::format::binary(r.lower_bound),
                            if link.len() > 140 {
                                format!("{}…", link.chars().take(140).collect::<String>())
                            } else {
                                link
                            }
                        )),
                        ..Default::default()
                    };
                    let mut o = o;
                    // in a diff, the outlines of what moved, as on screen, and a caption saying so
                    let diff = match (self.compare.mode, self.compared().first()) {
                        (CompareMode::Diff, Some(&(j, other))) => {
                            let moved = analysis::moved(&r.plan, &other.plan);
                            let shapes = crate::timeline::diff_shapes(
                                &b.problem, r, other, &moved, &vp, false,
                            );
                            if let Some(t) = &mut o.title {
                                t.push_str(&format!(
                                    " · diff against pane {}: {} tensors moved (outlined: here; dashed: in pane {})",
                                    j + 1,
                                    moved.len(),
                                    j + 1
                                ));
                            }
                            shapes
                        }
                        _ => Vec::new(),
                    };
                    let svg = crate::timeline::timeline_svg(&b.problem, &b.info, r, &vp, &o, diff);
                    if kind == Export::Png {
                        platform::download_png(
                            &format!("{stem}.timeline.png"),
                            &svg,
                            crate::timeline::W,
                            crate::timeline::H + 18.0,
                            2.0,
                        );
                    } else {
                        platform::download(&format!("{stem}.timeline.svg"), "image/svg+xml", &svg);
                    }
                }
            }
            Export::Csv => {
                // the whole plan, not the view restricted to the gear on screen
                let whole = self.results.get(self.focus).and_then(|r| r.done());
                if let Some(r) = whole {
                    platform::download(
                        &format!("{stem}.tensors.csv"),
                        "text/csv",
                        &crate::export::tensors_csv(&b.problem, &b.info, r),
                    );
                }
            }
        }
    }
}

/// What a link can carry of a local file inline: its text if JSON/CSV that deflates to the
/// inline limit; `None` otherwise (the link carries its lowered problem, [`App::lowered`]).
fn inline_ref(src: &Source) -> Option<ModelRef> {
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
            embed,
            theme,
            source: None,
            loading: None,
            error: None,
            link_error: None,
            gears: Vec::new(),
            shown_gear: None,
            alias_views: false,
            schedule: None,
            sizes: Default::default(),
            budget: None,
            focus_view: None,
            gear_views: Vec::new(),
            notice: None,
            bindings: Bindings::new(),
            user_dims: Default::default(),
            built: None,
            last_kind: None,
            last_tflm: false,
            tflm_error: None,
            panes: (0..2)
                .map(|i| {
                    let used: Vec<&str> = Vec::new();
                    PaneSettings::default_for(i, true, &used)
                })
                .collect(),
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
            notice_field: None,
            drafts: HashMap::new(),
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
            push_next: false,
            selected: None,
            selected_name: None,
            link_view: None,
            focus: 0,
            compare: Compare::default(),
            table_top: 0.0,
            scroll_table: None,
            table_hold: None,
            step: None,
            vp: None,
            hover: None,
            drag: None,
            search: String::new(),
            sort: DEFAULT_SORT,
            dialog: None,
            dialog_note: None,
            focus_dialog: false,
            drag_over: false,
            narrow: platform::is_narrow(),
            inline: None,
            missing_model: None,
            embed_warning: None,
            embed_info: None,
            link_part: None,
            lowered_cache: Default::default(),
            last_hash: String::new(),
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
        app.boot(ctx);
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Sample(id) => {
                self.link_error = None;
                self.load_sample(ctx, &id, After::Fresh);
            }
            Msg::File(f) => {
                self.loading = Some(format!("Reading {}…", f.name()));
                ctx.link().send_future(async move {
                    let r = platform::read_file(f)
                        .await
                        .and_then(|(name, bytes)| Source::new(&name, Origin::File, bytes));
                    Msg::Loaded(r, After::Fresh)
                });
            }
            Msg::Loaded(r, after) => {
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
                                        .map(|s| {
                                            s.dims
                                                .iter()
                                                .map(|&(d, v)| (d.to_string(), v))
                                                .collect()
                                        })
                                        .unwrap_or_default(),
                                    _ => Bindings::new(),
                                },
                                Vec::new(),
                            ),
                            After::Keep => (self.bindings.clone(), self.gears.clone()),
                        };
                        // sizes name the old model's tensors
                        if after == After::Fresh {
                            self.sizes.clear();
                        }
                        if self.parse_in_worker(&src) {
                            self.request_parse(src, Some(after), bindings, gears);
                        } else {
                            let outcome =
                                model::build_settled(&src, &bindings, &gears, &self.lowering());
                            self.loaded(ctx, src, after, outcome, None);
                        }
                    }
                    Err(e) if from_link => self.fall_back(ctx, e),
                    Err(e) => self.error = Some(self.still_showing(e)),
                }
            }
            Msg::Sizes(text) => match model::parse_sizes(&text) {
                Ok(sizes) => {
                    self.clear_notice_of("sizes");
                    if sizes != self.sizes {
                        self.sizes = sizes;
                        self.relower();
                    }
                }
                Err(e) => self.bad_input("sizes", text, e),
            },
            Msg::Schedule(order) => {
                if order != self.schedule {
                    self.schedule = order;
                    self.step = None;
                    self.relower();
                }
            }
            Msg::AliasViews(on) => {
                if on != self.alias_views {
                    self.alias_views = on;
                    self.relower();
                }
            }
            Msg::Gears(text) => match model::parse_gears(&text) {
                Ok(g) => {
                    self.clear_notice_of("gears");
                    if g != self.gears {
                        self.gears = g;
                        self.shown_gear = None;
                        self.relower();
                    }
                }
                Err(e) => self.bad_input("gears", text, e),
            },
            Msg::Budget(text) => {
                let parsed = if text.trim().is_empty() {
                    Ok(None)
                } else {
                    memplan_core::units::parse_bytes(&text).map(Some)
                };
                match parsed {
                    Ok(b) => {
                        self.budget = b;
                        self.drafts.remove("budget");
                        self.notice = None;
                        // a pane whose strategy searches under the budget plans again
                        self.replan();
                        self.sync_hash();
                    }
                    Err(e) => self.bad_input("budget", text, format!("memory budget {e}")),
                }
            }
            Msg::ShowGear(g) => {
                self.shown_gear = Some(g);
                self.hover = None;
                self.refresh_view();
                self.sync_hash();
            }
            // a dim the file does not name goes back to unknown when its field is cleared
            Msg::Bind(k, v) if v.trim().is_empty() && memplan_core::graph::is_unknown_dim(&k) => {
                self.clear_notice_of(&format!("dim:{k}"));
                if self.bindings.remove(&k).is_some() {
                    self.rebuild();
                    self.sync_hash();
                }
            }
            Msg::Bind(k, v) if v.trim().is_empty() => {
                // a named dim cleared: back to assumed 1, as before it was given
                self.clear_notice_of(&format!("dim:{k}"));
                if self.user_dims.remove(&k) {
                    self.bindings.remove(&k);
                    self.rebuild();
                    self.sync_hash();
                }
            }
            Msg::Bind(k, v) => match v.trim().parse::<u64>() {
                Ok(n) if (1..=model::MAX_DIM).contains(&n) => {
                    self.clear_notice_of(&format!("dim:{k}"));
                    self.user_dims.insert(k.clone());
                    self.bindings.insert(k, n);
                    self.rebuild();
                    self.sync_hash();
                }
                _ => {
                    let e = format!("'{k}' must be a whole number from 1 to {}", model::MAX_DIM);
                    self.bad_input(&format!("dim:{k}"), v, e);
                }
            },
            Msg::SetPane(i, s) => {
                if let Some(p) = self.panes.get_mut(i) {
                    if s.check().is_ok() {
                        *p = s;
                        self.replan();
                        if i == self.focus {
                            self.vp = None;
                        }
                        self.sync_hash();
                    }
                }
            }
            Msg::AddPane => {
                if self.panes.len() < MAX_PANES {
                    let used: Vec<&str> = self.panes.iter().map(|p| p.strategy.as_str()).collect();
                    let rules =
                        crate::settings::Rules::of(self.last_kind.unwrap_or(true), self.last_tflm);
                    let mut s = PaneSettings::default_under(self.panes.len(), rules, &used);
                    if let Some(last) = self.panes.last() {
                        s.alignment = last.alignment;
                        s.ge_padding = last.ge_padding;
                    }
                    self.panes.push(s);
                    self.replan();
                    self.sync_hash();
                }
            }
            Msg::RemovePane(i) => {
                if self.panes.len() > 1 && i < self.panes.len() {
                    self.panes.remove(i);
                    if self.focus >= i && self.focus > 0 {
                        self.focus -= 1;
                    }
                    // one pane left: nothing to compare (its note would stay otherwise)
                    if self.panes.len() < 2 {
                        self.compare = Compare::default();
                    }
                    self.vp = None;
                    self.replan();
                    self.sync_hash();
                }
            }
            Msg::Focus(i) => {
                if i < self.panes.len() && i != self.focus {
                    self.focus = i;
                    self.vp = None;
                    self.refresh_view();
                    self.sync_hash();
                }
            }
            Msg::Step(s) => {
                self.step = s;
                self.sync_hash();
            }
            Msg::StepBy(d) => {
                if let Some(b) = &self.built {
                    let last = b.problem.steps.saturating_sub(1);
                    let cur = self.table_step();
                    let next = if d < 0 {
                        cur.saturating_sub(d.unsigned_abs())
                    } else {
                        cur.saturating_add(d as u64).min(last)
                    };
                    self.step = Some(next);
                    // Keep the cursor in view.
                    if let (Some(vp), Some(full)) = (self.vp, self.full_view()) {
                        let x = next as f64;
                        if x < vp.x0 || x + 1.0 > vp.x1 {
                            let w = vp.x1 - vp.x0;
                            let mut n = vp;
                            n.x0 = (x - w / 2.0).clamp(0.0, (full.x1 - w).max(0.0));
                            n.x1 = n.x0 + w;
                            self.vp = Some(n);
                        }
                    }
                    self.sync_hash();
                }
            }
            Msg::SelectLive(up) => {
                let step = self.table_step();
                let (Some(b), Some(r)) = (&self.built, self.focused()) else {
                    return false;
                };
                // tensors live at the step with bytes in the arena, lowest offset first
                let mut live: Vec<(u64, usize)> = b
                    .problem
                    .buffers
                    .iter()
                    .enumerate()
                    .filter(|(i, t)| {
                        t.start <= step
                            && step <= t.end
                            && r.plan.sizes.get(*i).is_some_and(|s| *s > 0)
                    })
                    .filter_map(|(i, _)| Some((*r.plan.offsets.get(i)?, i)))
                    .collect();
                live.sort_unstable();
                let at = self
                    .selected
                    .and_then(|s| live.iter().position(|(_, i)| *i == s));
                let next = match (at, up) {
                    (None, true) => live.first(),
                    (None, false) => live.last(),
                    (Some(k), true) => live.get(k + 1).or(live.get(k)),
                    (Some(k), false) => live.get(k.saturating_sub(1)),
                };
                let Some(&(_, i)) = next else { return false };
                self.step = Some(step);
                self.selected = Some(i);
                self.sync_hash();
            }
            Msg::Pointer(ux, uy, lx, ly) => {
                if let Some((x0, y0, start, moved)) = self.drag {
                    let (dx, dy) = (ux - x0, uy - y0);
                    if moved || dx.abs() + dy.abs() > 3.0 {
                        if let Some(full) = self.full_view() {
                            let (_, _, pw, ph) = (
                                0.0,
                                0.0,
                                crate::timeline::W
                                    - crate::timeline::MARGIN.0
                                    - crate::timeline::MARGIN.1,
                                crate::timeline::H
                                    - crate::timeline::MARGIN.2
                                    - crate::timeline::MARGIN.3,
                            );
                            self.vp = Some(start.pan(-dx / pw, dy / ph, &full));
                            self.drag = Some((x0, y0, start, true));
                            self.hover = None;
                            return true;
                        }
                    }
                }
                let (Some(b), Some(r), Some(vp)) = (&self.built, self.focused(), self.view())
                else {
                    return false;
                };
                let h = crate::timeline::hit(&b.problem, r, &vp, ux, uy).map(|i| (i, lx, ly));
                if h.map(|x| x.0) == self.hover.map(|x| x.0) && h.is_none() {
                    return false;
                }
                self.hover = h;
            }
            Msg::Leave => {
                self.drag = None;
                if self.hover.take().is_none() {
                    return false;
                }
            }
            Msg::Down(ux, uy) => {
                if self.embed && !self.embed_active {
                    // a click makes the embed's timeline take the wheel
                    self.embed_active = true;
                    if let Some(vp) = self.view() {
                        self.drag = Some((ux, uy, vp, false));
                    }
                    return true;
                }
                if let Some(vp) = self.view() {
                    self.drag = Some((ux, uy, vp, false));
                }
                return false;
            }
            Msg::Up => {
                let was = self.drag.take();
                return was.is_some_and(|d| d.3);
            }
            Msg::Click(ux) => {
                if let Some(vp) = self.view() {
                    if let Some(s) = crate::timeline::step_at(&vp, ux) {
                        // the table's rows follow once this frame is painted (on 60k
                        // buffers they are a third of the work)
                        if self.table_hold.is_none() {
                            if let Some(link) = &self.link {
                                self.table_hold = Some(self.table_step());
                                let link = link.clone();
                                platform::after_paint(move || link.send_message(Msg::TableCatchUp));
                            }
                        }
                        self.step = Some(s);
                        // the tensor under the pointer, if any, becomes the selection
                        self.selected = self.hover.map(|h| h.0);
                        self.sync_hash();
                    }
                }
            }
            Msg::Zoom(f, fx, fy) => {
                if let (Some(vp), Some(full)) = (self.view(), self.full_view()) {
                    self.vp = Some(vp.zoom(f, fx, fy, false, &full));
                    self.sync_hash_soon();
                }
            }
            Msg::ResetView => {
                self.vp = None;
                self.sync_hash();
            }
            Msg::Search(s) => {
                self.search = s;
                self.sync_hash_soon();
            }
            Msg::Sort(c) => {
                self.sort = if self.sort.0 == c {
                    (c, !self.sort.1)
                } else {
                    (c, !matches!(c, Col::Name | Col::Op | Col::Start | Col::End))
                };
                self.sync_hash();
            }
            Msg::Select(i) => {
                self.selected = i;
                self.sync_hash();
            }
            Msg::SyncHash => {
                self.sync_hash();
                return false;
            }
            Msg::TableCatchUp => {
                let held = self.table_hold.take();
                self.reveal_selected_row();
                return held != Some(self.table_step()) || self.scroll_table.is_some();
            }
            Msg::TableScroll(top) => {
                let (was, now) = (
                    crate::views::table_window(self.table_top),
                    crate::views::table_window(top),
                );
                self.table_top = top;
                return was != now;
            }
            Msg::SetCompare(c) => {
                if c != self.compare {
                    // the shared axes change with the panes drawn
                    self.vp = None;
                    self.compare = c;
                    self.sync_hash();
                }
            }
            Msg::CopyLink => {
                let (url, _) = self.link(false);
                platform::replace_hash(url.split_once('#').map_or("", |x| x.1));
                let note = match (self.link_warning(false), self.link_info(false)) {
                    (Some(w), _) => format!("Link copied. {w}"),
                    (None, Some(i)) => format!("Link copied: it reproduces this view. {i}"),
                    (None, None) => "Link copied: it reproduces this view.".to_string(),
                };
                ctx.link().send_future(async move {
                    match platform::copy_text(&url).await {
                        Ok(()) => Msg::Notice(note),
                        Err(e) => Msg::Notice(format!(
                            "Could not copy ({e}); the address bar holds the link."
                        )),
                    }
                });
            }
            Msg::ShowEmbed => {
                let (url, _) = self.link(true);
                let name = self.source.as_ref().map_or("plan", |s| s.name.as_str());
                self.embed_warning = self.link_warning(true);
                self.embed_info = self.link_info(true);
                let title = match (&self.embed_warning, &self.missing_model) {
                    (None, _) => name.to_string(),
                    (Some(_), Some(m)) if m.is_empty() => "model not included".to_string(),
                    (Some(_), Some(m)) => format!("{m} (model not included)"),
                    (Some(_), None) => format!("{name} (model not included)"),
                };
                self.notice = self.embed_warning.clone();
                self.dialog_note = None;
                self.focus_dialog = true;
                self.dialog = Some(format!(
                    "<iframe src=\"{}\" title=\"memplan: {}\" style=\"width:100%;height:560px;border:0\" loading=\"lazy\"></iframe>\n<script>addEventListener('message',e=>{{if(e.data&&e.data.type==='memplan:height')for(const f of document.querySelectorAll('iframe'))if(f.contentWindow===e.source)f.style.height=e.data.height+'px'}})</script>",
                    crate::format::xml_escape(&url),
                    crate::format::xml_escape(&title)
                ));
            }
            Msg::CloseDialog => self.dialog = None,
            Msg::CopySnippet => {
                if let Some(snippet) = self.dialog.clone() {
                    ctx.link().send_future(async move {
                        Msg::DialogNote(match platform::copy_text(&snippet).await {
                            Ok(()) => "Copied.".to_string(),
                            Err(e) => format!("Could not copy ({e}): select the text and copy it."),
                        })
                    });
                }
            }
            Msg::DialogNote(n) => self.dialog_note = Some(n),
            Msg::Notice(n) => {
                self.notice = Some(n);
                self.notice_field = None;
            }
            Msg::Export(k) => {
                self.export(k);
                return false;
            }
            Msg::Tflm(i, f) => {
                self.tflm_error = self.export_tflm(i, f).err().map(|e| (i, e));
            }
            Msg::ToggleTheme => {
                let dark = self.dark();
                self.theme = if dark { Theme::Light } else { Theme::Dark };
                platform::store("memplan-theme", if dark { "light" } else { "dark" });
                platform::set_theme(if dark { "light" } else { "dark" });
            }
            Msg::Key(k) => match k.as_str() {
                "ArrowLeft" => ctx.link().send_message(Msg::StepBy(-1)),
                "ArrowRight" => ctx.link().send_message(Msg::StepBy(1)),
                "Home" => ctx.link().send_message(Msg::Step(Some(0))),
                "End" => ctx.link().send_message(Msg::StepBy(i64::MAX)),
                "/" => {
                    platform::focus("tensor-search");
                    return false;
                }
                "Escape" => {
                    self.dialog = None;
                    self.hover = None;
                }
                "+" | "=" => ctx.link().send_message(Msg::Zoom(0.5, 0.5, 0.5)),
                "-" => ctx.link().send_message(Msg::Zoom(2.0, 0.5, 0.5)),
                "0" => ctx.link().send_message(Msg::ResetView),
                _ => return false,
            },
            Msg::DragOver(on) => {
                if self.drag_over == on {
                    return false;
                }
                self.drag_over = on;
            }
            Msg::Hosted(name, bytes) => {
                let src = bytes.and_then(|b| Source::new(&name, Origin::File, b));
                <Self as Component>::update(self, ctx, Msg::Loaded(src, After::Fresh));
                // tell the host how it went
                let mut fields = vec![("name", name.into()), ("ok", self.error.is_none().into())];
                if let Some(e) = &self.error {
                    fields.push(("error", e.as_str().into()));
                }
                platform::post_to_host("memplan:loaded", &fields);
            }
            Msg::HashChanged => {
                let h = platform::hash();
                if h == self.last_hash {
                    return false;
                }
                self.boot(ctx);
            }
            Msg::WorkerText(text) => {
                if text == crate::worker::READY {
                    self.worker_ready = true;
                    self.pump();
                    return false;
                }
                if let Some(json) = text.strip_prefix(crate::worker::PARSED) {
                    let Ok(parsed) = crate::worker::read_parsed(json) else {
                        return false;
                    };
                    if self.parsing.as_ref().map(|p| p.id) != Some(parsed.id) {
                        return false;
                    }
                    // decoding was this task; showing the model is the next one
                    self.parsed_ready = Some(parsed);
                    let link = ctx.link().clone();
                    platform::after(0, move || link.send_message(Msg::InstallParsed)).forget();
                    return false;
                }
                let Ok(done) = serde_json::from_str::<crate::worker::Done>(&text) else {
                    return false;
                };
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
                // decoding was this task; drawing the plan is the next one
                self.cache.insert(done.key, Rc::new(done.result.into()));
                let link = ctx.link().clone();
                platform::after(0, move || link.send_message(Msg::Replan)).forget();
                return false;
            }
            Msg::WorkerError(e) => {
                if let Some(p) = self.parsing.take() {
                    self.stop_worker();
                    self.loading = None;
                    let e = format!("{}: the background worker stopped while parsing it: {e}. The file may need more memory than the browser allows.", p.source.name);
                    self.error = Some(self.still_showing(e));
                    self.pump();
                    return true;
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
            Msg::Cancel(i) => {
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
            }
            Msg::Retry(i) => {
                if let Some(s) = self.key(i) {
                    self.cache.remove(&s);
                    self.replan();
                }
            }
            Msg::Tick => return self.running.is_some() || self.parsing.is_some(),
            Msg::InstallParsed => {
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
                    Some(after) => {
                        self.loaded(ctx, p.source, after, parsed.outcome, Some(parsed.id))
                    }
                    None => self.install(parsed.outcome, Some(parsed.id)),
                }
                self.pump();
            }
            Msg::Replan => self.replan(),
            Msg::CancelParse => {
                let Some(p) = self.parsing.take() else {
                    return false;
                };
                self.stop_worker();
                self.loading = None;
                let secs = (platform::now_ms() - p.since_ms) / 1000.0;
                let e = format!("Parsing {} cancelled after {secs:.1} s", p.source.name);
                self.error = Some(self.still_showing(e));
                self.pump();
            }
            Msg::Resized => {
                if self.embed {
                    platform::post_height();
                }
                let narrow = platform::is_narrow();
                if narrow == self.narrow {
                    return false;
                }
                // the sections change places: the canvases are new and must be painted
                self.narrow = narrow;
                self.painted = None;
            }
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

/// `r` restricted to gear `g`: other gears' buffers get size 0 (not drawn, not counted in the
/// curve), their blocks are dropped.
fn gear_view(b: &Built, r: &PaneResult, g: u64) -> PaneResult {
    let mut v = r.clone();
    for (i, buf) in b.problem.buffers.iter().enumerate() {
        if buf.gear.is_some_and(|x| x != g) {
            if let Some(s) = v.plan.sizes.get_mut(i) {
                *s = 0;
            }
        }
    }
    let sizes = v.plan.sizes.clone();
    v.plan.blocks.retain(|blk| {
        blk.members
            .iter()
            .any(|&m| sizes.get(m.index()).copied().unwrap_or(0) > 0)
    });
    v.curve = memplan_core::report::analysis::live_curve(&b.problem, &sizes);
    v.peak_step = memplan_core::report::analysis::peak_step(&v.curve);
    v
}

/// Whether a newly built model is of another kind (graph or buffer list) than the last one
/// that built (`None`: none yet, the panes start with graph defaults), so that the panes'
/// alignment and padding should follow it.
fn kind_changed(last: Option<bool>, is_graph: bool) -> bool {
    last.map_or(!is_graph, |g| g != is_graph)
}

/// Whether planning may take long enough (over ~50 ms) to leave the main thread: anytime
/// strategies (the exact solver), and large problems. Runtime allocators too: a simulation
/// that fails badly then costs one pane, not the page.
fn heavy(problem: &memplan_core::Problem, s: &PaneSettings) -> bool {
    memplan_core::find_strategy(&s.strategy).is_ok_and(|s| s.caps.anytime)
        || crate::settings::is_runtime(&s.strategy)
        || problem.buffers.len() >= 1500
}

#[cfg(test)]
mod tests {
    use super::kind_changed;

    #[test]
    fn panes_follow_the_kind_of_the_last_model_that_built() {
        // the page starts with graph defaults
        assert!(!kind_changed(None, true));
        assert!(kind_changed(None, false));
        // CSV, then (a failed load, which leaves the last kind as is) an ONNX model
        assert!(kind_changed(Some(false), true));
        assert!(kind_changed(Some(true), false));
        assert!(!kind_changed(Some(true), true));
        assert!(!kind_changed(Some(false), false));
    }
}
