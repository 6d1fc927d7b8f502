//! The playground's state and its reducer: what the page shows and every setting a link
//! carries, changed only by [`State::apply`], which answers with the [`Effect`]s the component
//! runs (load a model, plan the panes, write the link, tell the host page). Plain Rust: it
//! names neither Yew nor the browser (`web/tests/layers.rs`), so its actions are tested
//! natively below. The views are functions of this state, so every control shows what the
//! state holds whatever changed it (a click, a link, Back, a host message).

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use memplan_core::graph::ScheduleOrder;
use memplan_core::Bindings;

use crate::model::{Format, Origin, Source};
use crate::samples;
use crate::settings::{Compare, CompareMode, PaneSettings, Rules, MAX_PANES};
use crate::share::{self, ModelRef, Shared};
use crate::timeline::Viewport;

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

impl Col {
    /// Every column, in table order.
    pub const ALL: [Col; 7] = [
        Col::Name,
        Col::Op,
        Col::Bytes,
        Col::Planned,
        Col::Start,
        Col::End,
        Col::Offset,
    ];

    /// The column's name in links ([`share::SORT_COLUMNS`]).
    pub fn name(self) -> &'static str {
        match self {
            Col::Name => "name",
            Col::Op => "op",
            Col::Bytes => "bytes",
            Col::Planned => "planned",
            Col::Start => "start",
            Col::End => "end",
            Col::Offset => "offset",
        }
    }

    /// The column named `name` in a link.
    pub fn from_name(name: &str) -> Option<Col> {
        Col::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether a first click sorts this column largest first (figures) rather than A to Z.
    fn descending_first(self) -> bool {
        !matches!(self, Col::Name | Col::Op | Col::Start | Col::End)
    }
}

/// The table's sort when the link says nothing: planned bytes, largest first.
pub const DEFAULT_SORT: (Col, bool) = (Col::Planned, true);

/// What a finished load does with the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Keep panes and bindings (from a link).
    Keep,
    /// A new model picked by the user: reset bindings, retarget sizes.
    Fresh,
}

/// An input that keeps what was typed when it did not parse, with the reason under it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// A symbolic dim's binding, by dim name.
    Dim(String),
    /// The dynamic-batch gears.
    Gears,
    /// The tensor sizes (`name=bytes, ...`).
    Sizes,
    /// The memory budget.
    Budget,
    /// The op order (its notice says why the file's order was used).
    Schedule,
}

/// Text typed in a [`Field`] that is not (yet) its value: being typed, or refused and why.
///
/// The field shows this text, not the state's value, so a re-render (five a second while a
/// pane plans) cannot wipe what is being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    /// What was typed (kept in the field).
    pub text: String,
    /// Why it was refused (shown under the field); `None` while it is being typed.
    pub error: Option<String>,
}

/// The tensor under the pointer on the timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hover {
    /// Buffer index.
    pub buffer: usize,
    /// Pointer x in the timeline box, CSS pixels (where the tooltip goes).
    pub x: f64,
    /// Pointer y in the timeline box, CSS pixels.
    pub y: f64,
}

/// A drag on the timeline (panning once it moved over 3 plot units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drag {
    /// Where the button went down, plot units.
    pub x: f64,
    /// Where the button went down, plot units.
    pub y: f64,
    /// The viewport when it started.
    pub start: Viewport,
    /// Whether it moved far enough to pan (then the button's release is no click).
    pub moved: bool,
}

/// The kind of the last model that built: the panes keep this kind's size rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelKind {
    /// A graph (ONNX, TFLite, graph JSON), not a bare buffer list.
    pub graph: bool,
    /// A `.tflite` model: panes on TFLM's rules.
    pub tflm: bool,
}

/// The page's address when it opens or its fragment changes (read by the component).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Address {
    /// The fragment without `#` (the share link's state), possibly empty.
    pub hash: String,
    /// `?model=`, if given.
    pub model: Option<String>,
    /// `?sample=`, if given.
    pub sample: Option<String>,
}

/// A model to open.
#[derive(Debug, Clone)]
pub enum Request {
    /// A built-in sample, by id ([`samples::SAMPLES`]).
    Sample(String),
    /// A file to fetch from `url`, shown as `name`.
    Fetch {
        /// Where it is.
        url: String,
        /// Where links say it came from.
        origin: Origin,
        /// Its name.
        name: String,
    },
    /// A model already at hand (carried by the link, or sent by the host page), or why it
    /// could not be read.
    Bytes(Result<Source, String>),
    /// A lowered problem carried by the link; `part` is its `m=` part, carried again by links
    /// made from this view.
    Lowered {
        /// The problem as a source.
        source: Result<Source, String>,
        /// The link's `m=` part.
        part: Rc<str>,
    },
}

/// What the component does after an action (the state itself is already changed).
#[derive(Debug, Clone)]
pub enum Effect {
    /// Open a model; `After` says what the load does with the settings.
    Open(Request, After),
    /// Lower the model again under the changed model-level settings (dims, gears, views,
    /// op order, sizes), then plan every pane.
    Rebuild,
    /// Plan every pane again (unchanged plans come from the cache).
    Replan,
    /// The focused pane or shown gear changed: the views' restricted results follow.
    RefreshViews,
    /// Write the link into the address bar now.
    SyncLink,
    /// Write the link a little later (typing, zooming).
    SyncLinkSoon,
    /// Tell the host page (an embed's parent) how its model `name` fared.
    ReportToHost {
        /// The model's name, as the host sent it.
        name: String,
    },
}

/// An action: everything that changes [`State`].
#[derive(Debug, Clone)]
pub enum Action {
    /// The page opened at `Address`: its link, else `?model=`, else `?sample=` or the default
    /// sample.
    Open(Address),
    /// The fragment changed (Back, Forward, a pasted link): as [`Action::Open`] unless it is
    /// the link this page wrote last.
    HashChanged(Address),
    /// The user picked a built-in sample.
    Sample(String),
    /// The embedding page sent a model (`memplan:model`): its name and bytes, or why not.
    Hosted {
        /// The model's name.
        name: String,
        /// Its bytes, or why they could not be read.
        bytes: Result<Vec<u8>, String>,
    },
    /// A model built (`after` as it was opened): the panes follow its kind.
    ModelBuilt {
        /// The kind of the model.
        kind: ModelKind,
        /// What the load does with the settings.
        after: After,
    },
    /// A pane's settings changed (strategy, alignment, any knob).
    SetPane(usize, PaneSettings),
    /// Add a pane (up to [`MAX_PANES`]).
    AddPane,
    /// Remove a pane (one stays).
    RemovePane(usize),
    /// Show this pane in the views.
    Focus(usize),
    /// Select a step (`None`: the peak).
    Step(Option<u64>),
    /// Select a tensor (`None`: none).
    Select(Option<usize>),
    /// Sort the table by a column (again: the other way).
    Sort(Col),
    /// The tensor search text.
    Search(String),
    /// The compare view.
    SetCompare(Compare),
    /// The whole plan in view.
    ResetView,
    /// Show this gear in the timeline and table.
    ShowGear(u64),
    /// The memory budget's text (`200MiB`; empty: none).
    Budget(String),
    /// A dim binding's text (empty: back to its default).
    Bind(String, String),
    /// The gears' text (`1,2,4,8`; empty: off).
    Gears(String),
    /// The tensor sizes' text (`name=bytes, ...`).
    Sizes(String),
    /// Text typed in a field, not committed yet (its `change` event commits it with
    /// [`Action::Budget`], [`Action::Bind`], [`Action::Gears`] or [`Action::Sizes`]): kept as
    /// the field's [`Draft`] so a re-render shows it.
    Typing(Field, String),
    /// The op order (`None`: the graph's own).
    Schedule(Option<ScheduleOrder>),
    /// The views-alias switch.
    AliasViews(bool),
}

/// The playground's state: the settings a link carries, what the views show, and the page's
/// messages.
#[derive(Debug, Clone)]
pub struct State {
    /// Pane settings, in order.
    pub panes: Vec<PaneSettings>,
    /// The pane the views show.
    pub focus: usize,
    /// Memory budget, bytes: each pane says whether its plan fits.
    pub budget: Option<u64>,
    /// Symbolic dim bindings.
    pub bindings: Bindings,
    /// Dims the user (or the link) gave; the others were bound by default and panes say so.
    pub user_dims: BTreeSet<String>,
    /// Dynamic-batch gears (empty: off).
    pub gears: Vec<u64>,
    /// The gear the timeline and table show (default: the largest).
    pub shown_gear: Option<u64>,
    /// View outputs share their dying input's buffer (the CLI's `--alias-views`).
    pub alias_views: bool,
    /// The op order (the CLI's `--schedule`); `None`: the graph's own.
    pub schedule: Option<ScheduleOrder>,
    /// Tensor sizes the user gave, bytes (the CLI's `--size`), by tensor name.
    pub sizes: BTreeMap<String, u64>,
    /// The selected step (`None`: the focused plan's peak).
    pub step: Option<u64>,
    /// The zoom window (`None`: the whole plan).
    pub vp: Option<Viewport>,
    /// A zoom window from a link, kept over the load that follows it.
    pub link_view: Option<Viewport>,
    /// The tensor search text.
    pub search: String,
    /// The table's sort: column, largest first.
    pub sort: (Col, bool),
    /// The selected tensor (outlined; the link keeps it by name).
    pub selected: Option<usize>,
    /// A selected tensor's name from a link, resolved once its model has built.
    pub selected_name: Option<String>,
    /// The compare view.
    pub compare: Compare,
    /// The kind of the last model that built (`None` before any).
    pub kind: Option<ModelKind>,
    /// The tensor under the pointer.
    pub hover: Option<Hover>,
    /// A drag on the timeline.
    pub drag: Option<Drag>,
    /// Inputs holding text that did not parse.
    pub drafts: BTreeMap<Field, Draft>,
    /// A transient notice.
    pub notice: Option<String>,
    /// The input whose error the notice shows: a valid value typed there clears it.
    pub notice_field: Option<Field>,
    /// Why the link could not be opened (the default sample is shown).
    pub link_error: Option<String>,
    /// Opened from a link that left its model out: its name (possibly empty).
    pub missing_model: Option<String>,
    /// The fragment this page wrote or opened last.
    pub last_hash: String,
    /// The next link written adds a history entry (a new model was opened).
    pub push_next: bool,
}

impl Default for State {
    fn default() -> Self {
        State {
            panes: default_panes(ModelKind {
                graph: true,
                tflm: false,
            }),
            focus: 0,
            budget: None,
            bindings: Bindings::new(),
            user_dims: BTreeSet::new(),
            gears: Vec::new(),
            shown_gear: None,
            alias_views: false,
            schedule: None,
            sizes: BTreeMap::new(),
            step: None,
            vp: None,
            link_view: None,
            search: String::new(),
            sort: DEFAULT_SORT,
            selected: None,
            selected_name: None,
            compare: Compare::default(),
            kind: None,
            hover: None,
            drag: None,
            drafts: BTreeMap::new(),
            notice: None,
            notice_field: None,
            link_error: None,
            missing_model: None,
            last_hash: String::new(),
            push_next: false,
        }
    }
}

/// The two panes a model of `kind` opens with ([`PaneSettings::default_under`]).
pub fn default_panes(kind: ModelKind) -> Vec<PaneSettings> {
    let rules = Rules::of(kind.graph, kind.tflm);
    let mut out: Vec<PaneSettings> = Vec::new();
    for i in 0..2 {
        let used: Vec<&str> = out.iter().map(|p| p.strategy.as_str()).collect();
        let p = PaneSettings::default_under(i, rules, &used);
        out.push(p);
    }
    out
}

impl State {
    /// The rules new panes follow: the last model's kind (a graph before any).
    pub fn rules(&self) -> Rules {
        let k = self.kind.unwrap_or(ModelKind {
            graph: true,
            tflm: false,
        });
        Rules::of(k.graph, k.tflm)
    }

    /// The state a link carries, with the model as links carry it (`model`; `missing`: the
    /// name of the one left out) and the selected tensor's name (`selected`). Graph settings
    /// are left out of a link to a buffer list.
    pub fn shared(
        &self,
        model: Option<ModelRef>,
        missing: Option<String>,
        selected: Option<String>,
    ) -> Shared {
        let graph = self.kind.is_some_and(|k| k.graph);
        Shared {
            model,
            missing,
            bindings: self.bindings.clone(),
            gears: self.gears.clone(),
            shown_gear: self.shown_gear,
            alias_views: self.alias_views && graph,
            schedule: self.schedule.filter(|_| graph),
            sizes: if graph {
                self.sizes.clone()
            } else {
                BTreeMap::new()
            },
            budget: self.budget,
            panes: self.panes.clone(),
            focus: self.focus,
            step: self.step,
            view: self.vp.map(|v| [v.x0, v.x1, v.y0, v.y1]),
            search: self.search.clone(),
            sort: (self.sort != DEFAULT_SORT)
                .then(|| (self.sort.0.name().to_string(), self.sort.1)),
            selected,
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

    /// Applies `action` and says what the component must do for it.
    pub fn apply(&mut self, action: Action) -> Vec<Effect> {
        use Action as A;
        match action {
            A::Open(address) => self.open(address),
            A::HashChanged(address) if address.hash == self.last_hash => Vec::new(),
            A::HashChanged(address) => self.open(address),
            A::Sample(id) => {
                self.link_error = None;
                vec![Effect::Open(Request::Sample(id), After::Fresh)]
            }
            A::Hosted { name, bytes } => {
                let source = bytes.and_then(|b| Source::new(&name, Origin::File, b));
                vec![
                    Effect::Open(Request::Bytes(source), After::Fresh),
                    Effect::ReportToHost { name },
                ]
            }
            A::ModelBuilt { kind, after } => {
                self.model_built(kind, after);
                Vec::new()
            }
            A::SetPane(i, s) => self.set_pane(i, s),
            A::AddPane => self.add_pane(),
            A::RemovePane(i) => self.remove_pane(i),
            A::Focus(i) if i < self.panes.len() && i != self.focus => {
                self.focus = i;
                self.vp = None;
                vec![Effect::RefreshViews, Effect::SyncLink]
            }
            A::Focus(_) => Vec::new(),
            A::Step(s) => {
                self.step = s;
                vec![Effect::SyncLink]
            }
            A::Select(i) => {
                self.selected = i;
                vec![Effect::SyncLink]
            }
            A::Sort(c) => {
                self.sort = if self.sort.0 == c {
                    (c, !self.sort.1)
                } else {
                    (c, c.descending_first())
                };
                vec![Effect::SyncLink]
            }
            A::Search(s) => {
                self.search = s;
                vec![Effect::SyncLinkSoon]
            }
            A::SetCompare(c) if c != self.compare => {
                // the shared axes change with the panes drawn
                self.vp = None;
                self.compare = c;
                vec![Effect::SyncLink]
            }
            A::SetCompare(_) => Vec::new(),
            A::ResetView => {
                self.vp = None;
                vec![Effect::SyncLink]
            }
            A::ShowGear(g) => {
                self.shown_gear = Some(g);
                self.hover = None;
                vec![Effect::RefreshViews, Effect::SyncLink]
            }
            A::Budget(text) => self.set_budget(text),
            A::Typing(field, text) => {
                // a refused value's reason stays until the text is committed again
                let error = self.drafts.remove(&field).and_then(|d| d.error);
                self.drafts.insert(field, Draft { text, error });
                Vec::new()
            }
            A::Bind(dim, text) => self.bind(dim, text),
            A::Gears(text) => match crate::model::parse_gears(&text) {
                Ok(g) => {
                    self.clear_notice_of(&Field::Gears);
                    if g == self.gears {
                        return Vec::new();
                    }
                    self.gears = g;
                    self.shown_gear = None;
                    self.relower()
                }
                Err(e) => self.bad_input(Field::Gears, text, e),
            },
            A::Sizes(text) => match crate::model::parse_sizes(&text) {
                Ok(sizes) => {
                    self.clear_notice_of(&Field::Sizes);
                    if sizes == self.sizes {
                        return Vec::new();
                    }
                    self.sizes = sizes;
                    self.relower()
                }
                Err(e) => self.bad_input(Field::Sizes, text, e),
            },
            A::Schedule(order) if order != self.schedule => {
                self.schedule = order;
                self.step = None;
                self.relower()
            }
            A::Schedule(_) => Vec::new(),
            A::AliasViews(on) if on != self.alias_views => {
                self.alias_views = on;
                self.relower()
            }
            A::AliasViews(_) => Vec::new(),
        }
    }

    /// A model-level setting changed: lower again, from the whole view, and say so in the link.
    fn relower(&mut self) -> Vec<Effect> {
        self.vp = None;
        vec![Effect::Rebuild, Effect::SyncLink]
    }

    fn set_pane(&mut self, i: usize, s: PaneSettings) -> Vec<Effect> {
        let Some(p) = self.panes.get_mut(i) else {
            return Vec::new();
        };
        if s.check().is_err() || *p == s {
            return Vec::new();
        }
        *p = s;
        if i == self.focus {
            self.vp = None;
        }
        vec![Effect::Replan, Effect::SyncLink]
    }

    fn add_pane(&mut self) -> Vec<Effect> {
        if self.panes.len() >= MAX_PANES {
            return Vec::new();
        }
        let used: Vec<&str> = self.panes.iter().map(|p| p.strategy.as_str()).collect();
        let mut s = PaneSettings::default_under(self.panes.len(), self.rules(), &used);
        if let Some(last) = self.panes.last() {
            s.alignment = last.alignment;
            s.ge_padding = last.ge_padding;
        }
        self.panes.push(s);
        vec![Effect::Replan, Effect::SyncLink]
    }

    fn remove_pane(&mut self, i: usize) -> Vec<Effect> {
        if self.panes.len() <= 1 || i >= self.panes.len() {
            return Vec::new();
        }
        self.panes.remove(i);
        if self.focus >= i && self.focus > 0 {
            self.focus -= 1;
        }
        // one pane left: nothing to compare (its note would stay otherwise)
        if self.panes.len() < 2 {
            self.compare = Compare::default();
        }
        self.vp = None;
        vec![Effect::Replan, Effect::SyncLink]
    }

    fn set_budget(&mut self, text: String) -> Vec<Effect> {
        let parsed = if text.trim().is_empty() {
            Ok(None)
        } else {
            memplan_core::units::parse_bytes(&text).map(Some)
        };
        match parsed {
            Ok(b) => {
                self.budget = b;
                self.drafts.remove(&Field::Budget);
                self.notice = None;
                self.notice_field = None;
                // a pane whose strategy searches under the budget plans again
                vec![Effect::Replan, Effect::SyncLink]
            }
            Err(e) => self.bad_input(Field::Budget, text, format!("memory budget {e}")),
        }
    }

    fn bind(&mut self, dim: String, text: String) -> Vec<Effect> {
        let field = Field::Dim(dim.clone());
        if text.trim().is_empty() {
            self.clear_notice_of(&field);
            // a dim the file does not name goes back to unknown; a named one to its default
            let changed = if memplan_core::graph::is_unknown_dim(&dim) {
                self.bindings.remove(&dim).is_some()
            } else if self.user_dims.remove(&dim) {
                self.bindings.remove(&dim);
                true
            } else {
                false
            };
            return if changed {
                vec![Effect::Rebuild, Effect::SyncLink]
            } else {
                Vec::new()
            };
        }
        match text.trim().parse::<u64>() {
            Ok(n) if (1..=crate::model::MAX_DIM).contains(&n) => {
                self.clear_notice_of(&field);
                self.user_dims.insert(dim.clone());
                self.bindings.insert(dim, n);
                vec![Effect::Rebuild, Effect::SyncLink]
            }
            _ => {
                let e = format!(
                    "'{dim}' must be a whole number from 1 to {}",
                    crate::model::MAX_DIM
                );
                self.bad_input(field, text, e)
            }
        }
    }

    /// Shows `message` as the notice about input `field`.
    pub fn field_notice(&mut self, field: Field, message: String) {
        self.notice = Some(message);
        self.notice_field = Some(field);
    }

    /// Input `field` holds `text`, which did not parse: the field keeps it and says why under
    /// it, as does the notice.
    pub fn bad_input(&mut self, field: Field, text: String, error: String) -> Vec<Effect> {
        self.drafts.insert(
            field.clone(),
            Draft {
                text,
                error: Some(error.clone()),
            },
        );
        self.field_notice(field, error);
        Vec::new()
    }

    /// Clears the notice if it is about input `field` (a valid value was typed there).
    pub fn clear_notice_of(&mut self, field: &Field) {
        self.drafts.remove(field);
        if self.notice_field.as_ref() == Some(field) {
            self.notice = None;
            self.notice_field = None;
        }
    }

    /// A model built: a fresh one of another kind (graph or buffer list) moves the panes to
    /// its size rules; a `.tflite` model's panes start on TFLM's rules, and leaving one they go
    /// back to the new kind's defaults.
    fn model_built(&mut self, kind: ModelKind, after: After) {
        let was = self.kind;
        if after == After::Fresh {
            if kind_changed(was.map(|k| k.graph), kind.graph) {
                // a pane still on the old kind's defaults takes the new kind's (a buffer list
                // has no runtime to compare GE's plan with); the others keep their strategy
                let (old, new) = (self.rules(), Rules::of(kind.graph, kind.tflm));
                for i in 0..self.panes.len() {
                    let used: Vec<String> =
                        self.panes[..i].iter().map(|p| p.strategy.clone()).collect();
                    let used: Vec<&str> = used.iter().map(String::as_str).collect();
                    if self.panes[i] == PaneSettings::default_under(i, old, &used) {
                        self.panes[i].reset_to(i, new, &used);
                    } else {
                        self.panes[i].retarget(kind.graph);
                    }
                }
            }
            if kind.tflm != was.is_some_and(|k| k.tflm) {
                let rules = Rules::of(kind.graph, kind.tflm);
                for i in 0..self.panes.len() {
                    let used: Vec<String> =
                        self.panes[..i].iter().map(|p| p.strategy.clone()).collect();
                    let used: Vec<&str> = used.iter().map(String::as_str).collect();
                    self.panes[i].reset_to(i, rules, &used);
                }
            }
        }
        self.kind = Some(kind);
    }

    /// Opens `address`: the link's settings and model, else `?model=`, else `?sample=` or the
    /// default sample.
    fn open(&mut self, address: Address) -> Vec<Effect> {
        if !address.hash.is_empty() {
            self.last_hash = address.hash.clone();
            match share::decode(&address.hash) {
                Ok(s) => {
                    let notice = share::version_note(&address.hash);
                    return self.apply_link(s, notice);
                }
                Err(e) => self.link_error = Some(e),
            }
        }
        if let Some(url) = address.model {
            if url.starts_with("http://") || url.starts_with("https://") || url.starts_with('/') {
                let name = url.rsplit('/').next().unwrap_or("model").to_string();
                let origin = if url.starts_with('/') {
                    Origin::File
                } else {
                    Origin::Url(url.clone())
                };
                return vec![Effect::Open(
                    Request::Fetch { url, origin, name },
                    After::Fresh,
                )];
            }
            self.link_error = Some("?model= must be an http(s) URL".into());
        }
        let id = address
            .sample
            .filter(|id| samples::find(id).is_some())
            .unwrap_or_else(|| samples::DEFAULT_SAMPLE.to_string());
        // a fresh load clears messages: keep the one saying why the link was not used
        let after = if self.link_error.is_some() {
            After::Keep
        } else {
            After::Fresh
        };
        vec![Effect::Open(Request::Sample(id), after)]
    }

    /// Takes every setting from link `s` (`notice`: said about the planner version) and opens
    /// its model.
    fn apply_link(&mut self, s: Shared, notice: Option<String>) -> Vec<Effect> {
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
            .and_then(|(c, d)| Col::from_name(&c).map(|c| (c, d)))
            .unwrap_or(DEFAULT_SORT);
        self.selected_name = s.selected;
        self.compare = s.compare.unwrap_or_default();
        self.link_error = None;
        self.notice = notice;
        self.notice_field = None;
        self.drafts.clear();
        self.missing_model = None;
        let request = match s.model {
            Some(ModelRef::Sample(id)) => Request::Sample(id),
            Some(ModelRef::Url(u)) => Request::Fetch {
                name: u.rsplit('/').next().unwrap_or("model").to_string(),
                origin: Origin::Url(u.clone()),
                url: u,
            },
            Some(ModelRef::Text { name, text }) => {
                Request::Bytes(Source::new(&name, Origin::Link, text.into_bytes()))
            }
            Some(ModelRef::Lowered { name, json, part }) => Request::Lowered {
                source: Source::new(&name, Origin::Link, json).map(|mut s| {
                    s.format = Format::Lowered;
                    s
                }),
                part,
            },
            Some(ModelRef::Problem(p)) => Request::Bytes(
                serde_json::to_vec(&p)
                    .map_err(|e| e.to_string())
                    .and_then(|b| Source::new(&p.name, Origin::Link, b))
                    .map(|mut s| {
                        s.format = Format::ProblemJson;
                        s
                    }),
            ),
            None => {
                // said in a banner of its own for as long as the default sample stands in
                self.missing_model = Some(s.missing.unwrap_or_default());
                Request::Sample(samples::DEFAULT_SAMPLE.to_string())
            }
        };
        vec![Effect::Open(request, After::Keep)]
    }
}

/// Whether a newly built model is of another kind (graph or buffer list) than the last one
/// that built (`None`: none yet, the panes start with graph defaults).
pub fn kind_changed(last: Option<bool>, is_graph: bool) -> bool {
    last.map_or(!is_graph, |g| g != is_graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAPH: ModelKind = ModelKind {
        graph: true,
        tflm: false,
    };
    const CSV: ModelKind = ModelKind {
        graph: false,
        tflm: false,
    };
    const TFLITE: ModelKind = ModelKind {
        graph: true,
        tflm: true,
    };

    fn opened(s: &Effect) -> Option<(&Request, After)> {
        match s {
            Effect::Open(r, a) => Some((r, *a)),
            _ => None,
        }
    }

    fn has(effects: &[Effect], f: fn(&Effect) -> bool) -> bool {
        effects.iter().any(f)
    }

    /// A link's fragment for `state` (what the page writes), from the codec itself.
    fn link_of(s: &Shared) -> String {
        share::encode(s).0
    }

    fn shared(panes: Vec<PaneSettings>) -> Shared {
        let mut s = share::decode(&link_of(&Shared {
            model: Some(ModelRef::Sample("mobilenet_v2".into())),
            missing: None,
            bindings: Bindings::new(),
            gears: Vec::new(),
            shown_gear: None,
            alias_views: false,
            schedule: None,
            sizes: BTreeMap::new(),
            budget: None,
            panes: panes.clone(),
            focus: 0,
            step: None,
            view: None,
            search: String::new(),
            sort: None,
            selected: None,
            compare: None,
        }))
        .expect("a link the codec wrote decodes");
        s.panes = panes;
        s
    }

    #[test]
    fn panes_follow_the_kind_of_the_last_model_that_built() {
        // the page starts with graph defaults
        assert!(!kind_changed(None, true));
        assert!(kind_changed(None, false));
        assert!(kind_changed(Some(false), true));
        assert!(kind_changed(Some(true), false));
        assert!(!kind_changed(Some(true), true));
        assert!(!kind_changed(Some(false), false));
    }

    #[test]
    fn opening_the_page_without_a_link_opens_the_default_sample_fresh() {
        let mut s = State::default();
        let e = s.apply(Action::Open(Address::default()));
        assert_eq!(e.len(), 1);
        match opened(&e[0]) {
            Some((Request::Sample(id), After::Fresh)) => assert_eq!(id, samples::DEFAULT_SAMPLE),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_model_query_says_why_and_keeps_the_message() {
        let mut s = State::default();
        let e = s.apply(Action::Open(Address {
            model: Some("ftp://x/m.onnx".into()),
            ..Address::default()
        }));
        assert_eq!(
            s.link_error.as_deref(),
            Some("?model= must be an http(s) URL")
        );
        // Keep: the fresh load would clear the message
        assert!(matches!(
            opened(&e[0]),
            Some((Request::Sample(_), After::Keep))
        ));
    }

    #[test]
    fn loading_a_csv_moves_the_panes_to_exact_sizes_and_a_graph_back() {
        let mut s = State::default();
        assert_eq!(s.panes[0].alignment, 512);
        s.apply(Action::ModelBuilt {
            kind: CSV,
            after: After::Fresh,
        });
        // exact sizes: alignment 1, no GE padding (PlanOptions::exact); the runtime pane of a
        // graph becomes a plain packing (a buffer list has no runtime)
        assert!(s.panes.iter().all(|p| p.alignment == 1 && !p.ge_padding));
        assert_eq!(s.panes[1].strategy, "greedy-size-best-fit");
        s.apply(Action::ModelBuilt {
            kind: GRAPH,
            after: After::Fresh,
        });
        assert_eq!(s.panes, default_panes(GRAPH));
        // a strategy the user chose stays; only its sizes follow the model
        let mut p = s.panes[1].clone();
        p.strategy = "no-reuse".into();
        s.apply(Action::SetPane(1, p));
        s.apply(Action::ModelBuilt {
            kind: CSV,
            after: After::Fresh,
        });
        assert_eq!(s.panes[1].strategy, "no-reuse");
        assert_eq!(s.panes[1].alignment, 1);
    }

    #[test]
    fn the_default_panes_differ_and_say_why() {
        // a graph: GE's static plan against GE's runtime allocator
        let p = default_panes(GRAPH);
        assert_eq!(p[0].strategy, "ge-block");
        assert_eq!(p[1].strategy, "runtime-ge-v2");
        let s = State::default();
        assert!(s.rules().why(0, "ge-block").is_some());
        assert!(s.rules().why(1, "runtime-ge-v2").is_some());
        // a strategy the user chose has no reason shown
        assert!(s.rules().why(1, "no-reuse").is_none());
        assert!(s.rules().why(2, "ge-block").is_none());
    }

    #[test]
    fn a_link_model_keeps_the_links_pane_settings() {
        let mut s = State::default();
        s.panes[1].alignment = 64;
        s.apply(Action::ModelBuilt {
            kind: CSV,
            after: After::Keep,
        });
        assert_eq!(s.panes[1].alignment, 64);
        assert_eq!(s.kind, Some(CSV));
    }

    #[test]
    fn a_tflite_model_starts_on_tflms_rules_and_leaving_it_goes_back() {
        let mut s = State::default();
        s.apply(Action::ModelBuilt {
            kind: TFLITE,
            after: After::Fresh,
        });
        assert_eq!(s.panes[0].strategy, "tflm-greedy");
        assert_eq!(s.panes[1].strategy, "optimal");
        // TFLM's alignment is 16 B (core's Format::Tflite.default_plan_options)
        assert!(s.panes.iter().all(|p| p.alignment == 16 && !p.ge_padding));
        s.apply(Action::ModelBuilt {
            kind: GRAPH,
            after: After::Fresh,
        });
        assert_eq!(s.panes, default_panes(GRAPH));
    }

    #[test]
    fn changing_a_panes_strategy_and_alignment_replans_and_writes_the_link() {
        let mut s = State::default();
        let mut p = s.panes[1].clone();
        p.strategy = "no-reuse".into();
        p.alignment = 64;
        let e = s.apply(Action::SetPane(1, p.clone()));
        assert_eq!(s.panes[1], p);
        assert!(has(&e, |e| matches!(e, Effect::Replan)));
        assert!(has(&e, |e| matches!(e, Effect::SyncLink)));
        // the same settings again: nothing to do
        assert!(s.apply(Action::SetPane(1, p.clone())).is_empty());
        // settings that do not check (alignment 0) are refused, the pane unchanged
        let mut bad = p.clone();
        bad.alignment = 0;
        assert!(s.apply(Action::SetPane(1, bad)).is_empty());
        assert_eq!(s.panes[1], p);
        // a pane that does not exist
        assert!(s.apply(Action::SetPane(7, p)).is_empty());
    }

    #[test]
    fn adding_a_pane_takes_an_unused_strategy_and_the_last_panes_sizes() {
        let mut s = State::default();
        s.panes[1].alignment = 64;
        s.panes[1].ge_padding = false;
        let e = s.apply(Action::AddPane);
        assert_eq!(s.panes.len(), 3);
        assert!(!s.panes[..2]
            .iter()
            .any(|p| p.strategy == s.panes[2].strategy));
        assert_eq!((s.panes[2].alignment, s.panes[2].ge_padding), (64, false));
        assert!(has(&e, |e| matches!(e, Effect::Replan)));
        while s.panes.len() < MAX_PANES {
            s.apply(Action::AddPane);
        }
        assert!(s.apply(Action::AddPane).is_empty());
        assert_eq!(s.panes.len(), MAX_PANES);
    }

    #[test]
    fn removing_a_pane_moves_the_focus_and_the_last_one_stays() {
        let mut s = State::default();
        s.apply(Action::AddPane);
        s.apply(Action::Focus(2));
        s.compare = Compare {
            mode: crate::settings::CompareMode::Side,
            with: 0,
        };
        s.apply(Action::RemovePane(0));
        assert_eq!((s.panes.len(), s.focus), (2, 1));
        s.apply(Action::RemovePane(1));
        assert_eq!((s.panes.len(), s.focus), (1, 0));
        // one pane: nothing to compare
        assert_eq!(s.compare, Compare::default());
        assert!(s.apply(Action::RemovePane(0)).is_empty());
        assert_eq!(s.panes.len(), 1);
    }

    #[test]
    fn a_link_sets_every_control_and_opens_its_model_keeping_them() {
        let mut s = State::default();
        let mut panes = default_panes(GRAPH);
        panes[1].strategy = "no-reuse".into();
        let mut link = shared(panes.clone());
        link.budget = Some(1 << 20);
        link.search = "conv".into();
        link.sort = Some(("name".into(), false));
        link.focus = 1;
        let hash = link_of(&link);
        let e = s.apply(Action::Open(Address {
            hash: hash.clone(),
            ..Address::default()
        }));
        assert_eq!(s.panes, panes);
        assert_eq!(s.panes[1].strategy, "no-reuse");
        assert_eq!(s.budget, Some(1 << 20));
        assert_eq!(s.search, "conv");
        assert_eq!(s.sort, (Col::Name, false));
        assert_eq!(s.focus, 1);
        assert_eq!(s.last_hash, hash);
        match opened(&e[0]) {
            Some((Request::Sample(id), After::Keep)) => assert_eq!(id, "mobilenet_v2"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_same_tab_link_of_issue_28_shows_no_reuse_again() {
        // choose no-reuse in pane 2, copy the link, switch back, paste the link
        let mut s = State::default();
        let mut p = s.panes[1].clone();
        p.strategy = "no-reuse".into();
        s.apply(Action::SetPane(1, p));
        let copied = link_of(&shared(s.panes.clone()));
        s.last_hash = copied.clone();
        let mut back = s.panes[1].clone();
        back.strategy = "greedy-size-best-fit".into();
        s.apply(Action::SetPane(1, back));
        s.last_hash = "v=1&written-after-the-switch".into();
        let e = s.apply(Action::HashChanged(Address {
            hash: copied,
            ..Address::default()
        }));
        assert_eq!(s.panes[1].strategy, "no-reuse");
        assert!(!e.is_empty());
    }

    #[test]
    fn back_to_the_link_the_page_wrote_last_does_nothing() {
        let mut s = State::default();
        let hash = link_of(&shared(s.panes.clone()));
        s.last_hash = hash.clone();
        let mut p = s.panes[0].clone();
        p.alignment = 64;
        s.panes[0] = p.clone();
        assert!(s
            .apply(Action::HashChanged(Address {
                hash,
                ..Address::default()
            }))
            .is_empty());
        assert_eq!(s.panes[0], p);
    }

    #[test]
    fn back_to_an_earlier_link_restores_its_settings() {
        let mut s = State::default();
        let first = link_of(&shared(s.panes.clone()));
        let mut p = s.panes[0].clone();
        p.strategy = "no-reuse".into();
        s.apply(Action::SetPane(0, p));
        s.last_hash = "v=1&later".into();
        s.apply(Action::HashChanged(Address {
            hash: first,
            ..Address::default()
        }));
        assert_eq!(s.panes, default_panes(GRAPH));
    }

    #[test]
    fn a_broken_link_says_why_and_opens_the_default_sample() {
        let mut s = State::default();
        let e = s.apply(Action::Open(Address {
            hash: "v=1&z=!!!".into(),
            ..Address::default()
        }));
        assert!(s.link_error.is_some());
        assert!(matches!(
            opened(&e[0]),
            Some((Request::Sample(id), After::Keep)) if id == samples::DEFAULT_SAMPLE
        ));
    }

    #[test]
    fn a_host_message_opens_its_model_fresh_and_answers_the_host() {
        let mut s = State::default();
        let e = s.apply(Action::Hosted {
            name: "t.csv".into(),
            bytes: Ok(b"name,size,start,end\na,100,0,1\n".to_vec()),
        });
        match opened(&e[0]) {
            Some((Request::Bytes(Ok(src)), After::Fresh)) => {
                assert_eq!(src.name, "t.csv");
                assert_eq!(src.format, Format::Csv);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&e[1], Effect::ReportToHost { name } if name == "t.csv"));
        // bytes the host could not send: the load reports the reason
        let e = s.apply(Action::Hosted {
            name: "m.onnx".into(),
            bytes: Err("not an ArrayBuffer".into()),
        });
        assert!(matches!(opened(&e[0]), Some((Request::Bytes(Err(_)), _))));
    }

    #[test]
    fn a_bad_dim_keeps_the_text_and_a_good_one_clears_it() {
        let mut s = State::default();
        assert!(s.apply(Action::Bind("N".into(), "0".into())).is_empty());
        let f = Field::Dim("N".into());
        assert_eq!(s.drafts[&f].text, "0");
        assert_eq!(s.notice_field, Some(f.clone()));
        let e = s.apply(Action::Bind("N".into(), "4".into()));
        assert!(has(&e, |e| matches!(e, Effect::Rebuild)));
        assert_eq!(s.bindings.get("N"), Some(&4));
        assert!(s.drafts.is_empty() && s.notice.is_none());
        // cleared: back to its default
        s.apply(Action::Bind("N".into(), " ".into()));
        assert_eq!(s.bindings.get("N"), None);
        assert!(!s.user_dims.contains("N"));
    }

    #[test]
    fn typed_text_is_the_fields_draft_until_it_is_committed() {
        let mut s = State::default();
        // typing changes nothing but the draft: no plan, no link
        for (f, text) in [
            (Field::Gears, "1,2,"),
            (Field::Sizes, "y=4M"),
            (Field::Budget, "200M"),
            (Field::Dim("N".into()), "3"),
        ] {
            assert!(s.apply(Action::Typing(f.clone(), text.into())).is_empty());
            assert_eq!(
                s.drafts[&f],
                Draft {
                    text: text.into(),
                    error: None
                }
            );
        }
        assert!(s.gears.is_empty() && s.sizes.is_empty() && s.budget.is_none());
        assert!(s.bindings.is_empty() && s.notice.is_none());
        // committed: the value is the state's, the draft goes
        s.apply(Action::Gears("1,2,4".into()));
        assert_eq!(s.gears, vec![1, 2, 4]);
        assert!(!s.drafts.contains_key(&Field::Gears));
        // refused: the text stays with its reason; typing on keeps the reason until the next
        // commit, which clears it
        s.apply(Action::Budget("200Q".into()));
        let refused = s.drafts[&Field::Budget].error.clone();
        assert!(refused.is_some());
        s.apply(Action::Typing(Field::Budget, "200".into()));
        assert_eq!(s.drafts[&Field::Budget].text, "200");
        assert_eq!(s.drafts[&Field::Budget].error, refused);
        s.apply(Action::Budget("200".into()));
        assert_eq!(s.budget, Some(200));
        assert!(!s.drafts.contains_key(&Field::Budget) && s.notice.is_none());
        // the other drafts were never touched
        assert_eq!(s.drafts[&Field::Sizes].text, "y=4M");
        assert_eq!(s.drafts[&Field::Dim("N".into())].text, "3");
    }

    #[test]
    fn the_budget_parses_units_and_a_bad_one_is_kept() {
        let mut s = State::default();
        let e = s.apply(Action::Budget("2MiB".into()));
        assert_eq!(s.budget, Some(2 * 1024 * 1024));
        assert!(has(&e, |e| matches!(e, Effect::Replan)));
        s.apply(Action::Budget("lots".into()));
        assert_eq!(s.budget, Some(2 * 1024 * 1024));
        assert!(s.drafts.contains_key(&Field::Budget));
        s.apply(Action::Budget(String::new()));
        assert_eq!(s.budget, None);
        assert!(!s.drafts.contains_key(&Field::Budget));
    }

    #[test]
    fn sorting_a_column_twice_turns_it_round() {
        let mut s = State::default();
        s.apply(Action::Sort(Col::Name));
        assert_eq!(s.sort, (Col::Name, false));
        s.apply(Action::Sort(Col::Name));
        assert_eq!(s.sort, (Col::Name, true));
        s.apply(Action::Sort(Col::Bytes));
        assert_eq!(s.sort, (Col::Bytes, true));
        for c in Col::ALL {
            assert_eq!(Col::from_name(c.name()), Some(c));
            assert!(share::SORT_COLUMNS.contains(&c.name()));
        }
    }
}
