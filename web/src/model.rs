//! Loading: bytes in (sample, file, URL, link), format from the extension (sniffed from the
//! content when the name has none we know), a planning problem out.
//!
//! Parsing happens again whenever the symbolic-dim bindings change (ONNX shape inference needs
//! them at parse time), so a [`Source`] keeps the bytes.

use std::rc::Rc;

use memplan_core::graph::ScheduleOrder;
use memplan_core::import::load::{load_as, Format as CoreFormat, LoadOptions, Loaded};
use memplan_core::{Bindings, Problem};
use serde::{Deserialize, Serialize};

/// Largest file the playground reads, bytes (the message names it).
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;
/// Most buffers a problem may have here.
pub const MAX_BUFFERS: usize = 250_000;
/// Most symbolic dims a model (or link) may bind.
pub const MAX_SYMBOLS: usize = 64;
/// Largest value a symbolic dim may be bound to.
pub const MAX_DIM: u64 = 1 << 32;
/// Most dynamic-batch gears.
pub const MAX_GEARS: usize = 16;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// `memplan.graph/1` JSON.
    GraphJson,
    /// MiniMalloc CSV (`id,lower,upper,size...`).
    Csv,
    /// ONNX protobuf.
    Onnx,
    /// TensorFlow Lite flatbuffer (`.tflite`), read under TFLM's rules.
    Tflite,
    /// A serialized [`Problem`] (only from share links).
    ProblemJson,
    /// A lowered model as a share link carries it when its file is too large to: the JSON of
    /// a [`Built`] ([`lowered_json`]).
    Lowered,
}

impl Format {
    /// Short name for the UI (core's for the formats its load pipeline reads).
    pub fn name(self) -> &'static str {
        match self {
            Format::Lowered => "lowered problem",
            _ => self.core().map_or("inline problem", CoreFormat::name),
        }
    }

    /// The format of core's load pipeline, `None` for a link's inline problem.
    pub fn core(self) -> Option<CoreFormat> {
        match self {
            Format::GraphJson => Some(CoreFormat::GraphJson),
            Format::Csv => Some(CoreFormat::Csv),
            Format::Onnx => Some(CoreFormat::Onnx),
            Format::Tflite => Some(CoreFormat::Tflite),
            Format::ProblemJson | Format::Lowered => None,
        }
    }
}

/// The format of a file: its extension decides when known, only a name without one is
/// sniffed (core's [`CoreFormat::detect`], as the CLI decides).
pub fn detect(name: &str, bytes: &[u8]) -> Format {
    match CoreFormat::detect(name, bytes) {
        CoreFormat::GraphJson => Format::GraphJson,
        CoreFormat::Csv => Format::Csv,
        CoreFormat::Onnx => Format::Onnx,
        CoreFormat::Tflite => Format::Tflite,
    }
}

/// A loaded file: its name, bytes and format, before parsing.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// File name or sample title.
    pub name: String,
    /// Where it came from, for the header ("sample", "file", "URL", "link").
    pub origin: Origin,
    /// The bytes.
    pub bytes: Rc<[u8]>,
    /// The format.
    pub format: Format,
}

/// Where a source came from (decides what a share link can carry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A built-in sample, by id.
    Sample(String),
    /// A URL (`?model=`).
    Url(String),
    /// A local file (picker or drop): nothing is uploaded.
    File,
    /// Carried inline in a share link.
    Link,
}

impl Source {
    /// A source from bytes, refusing files over [`MAX_FILE_BYTES`]; the format comes from
    /// the name's extension, else from the content ([`detect`]).
    ///
    /// # Errors
    /// A message naming the limit.
    pub fn new(name: &str, origin: Origin, bytes: Vec<u8>) -> Result<Self, String> {
        check_size(name, bytes.len() as u64)?;
        let format = detect(name, &bytes);
        Ok(Source {
            name: name.to_string(),
            origin,
            bytes: bytes.into(),
            format,
        })
    }
}

/// Refuses sizes over [`MAX_FILE_BYTES`], before reading.
///
/// # Errors
/// A message naming the file and the limit.
pub fn check_size(name: &str, len: u64) -> Result<(), String> {
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "'{name}' is {}; the playground reads files up to {} ({MAX_FILE_BYTES} B)",
            crate::format::binary(len),
            crate::format::binary(MAX_FILE_BYTES)
        ));
    }
    Ok(())
}

/// What the UI shows about one buffer beyond the problem's own fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
// empty fields left out: a trace's 62k entries travel from the worker as `{}`
pub struct BufInfo {
    /// Producing op, `name (Type)`, or what the buffer is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op: String,
    /// Bound shape, `1×3×224×224`, or empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub shape: String,
    /// Element type, or empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dtype: String,
}

/// A parsed and lowered model, ready to plan (sent from the worker that parsed it as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Built {
    /// The planning problem.
    pub problem: Problem,
    /// Per buffer, what the tooltip and table show.
    pub info: Vec<BufInfo>,
    /// Symbolic dim names of the graph (empty for problems).
    pub symbols: Vec<String>,
    /// Warnings from import and lowering.
    pub warnings: Vec<String>,
    /// A graph (GE defaults apply) rather than a bare problem (exact sizes).
    pub is_graph: bool,
    /// Bytes of weights (not planned in the activation arena); 0 when unknown.
    pub weight_bytes: u64,
    /// With dynamic-batch gears: the batch dim and the gears (sorted), else `None`.
    pub gears: Option<(String, Vec<u64>)>,
    /// Tensors of unknown size: not planned (the plan file lists them).
    pub unknown: Vec<memplan_core::UnknownTensor>,
    /// With views aliased: how many view outputs share their input's buffer, and their bytes.
    pub views: Option<memplan_core::graph::views::AliasReport>,
    /// The op order the lifetimes follow (the plan file names it when not file order).
    pub order: ScheduleOrder,
    /// With the memory-aware op order: what its search tried and proved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<memplan_core::graph::order::OrderReport>,
    /// Lower bound and no-reuse total of the raw sizes (bytes), computed once at build: the
    /// summary shows them on every render, and on 60k buffers they cost milliseconds.
    pub raw_bounds: memplan_core::Bounds,
    /// Carried lowered by a share link ([`Format::Lowered`]): there is no graph to lower again,
    /// so its dims, gears and lowering settings are those it was lowered with.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lowered: bool,
    /// Dims whose default of 1 is impossible, with why (core's load diagnostics): the model is
    /// built with them unbound (the tensors they size are of unknown size) and the dims panel
    /// asks for their values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked_dims: Vec<AskedDim>,
    /// A `.tflite` model: what TFLM's arena needs beyond a plan (its panes use TFLM's rules
    /// and can export their plan to TFLM); `None` for other formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tflm: Option<crate::tflm::TflmArena>,
}

/// A dim the page asks a value for: its default of 1 made the model impossible.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskedDim {
    /// The symbolic dim.
    pub dim: String,
    /// What went wrong with 1 (the importer's error: the op and the shapes).
    pub why: String,
}

impl AskedDim {
    /// The page's wording: what to do, then why.
    pub fn message(&self) -> String {
        format!(
            "Give '{}' a value: with 1 the model cannot be built ({}).",
            self.dim, self.why
        )
    }
}

impl Built {
    /// A bare problem (no graph), as a share link or a CSV carries it.
    pub fn of_problem(problem: Problem) -> Built {
        let info = problem
            .buffers
            .iter()
            .map(|b| BufInfo {
                op: match b.producer.and_then(|s| usize::try_from(s).ok()) {
                    Some(step) => problem
                        .ops
                        .get(step)
                        .map(|o| format!("{} ({})", o.name, o.op_type))
                        .unwrap_or_default(),
                    None => String::new(),
                },
                ..BufInfo::default()
            })
            .collect();
        Built {
            problem,
            info,
            symbols: Vec::new(),
            warnings: Vec::new(),
            is_graph: false,
            weight_bytes: 0,
            gears: None,
            unknown: Vec::new(),
            views: None,
            order: ScheduleOrder::File,
            search: None,
            // filled in by `checked`
            raw_bounds: memplan_core::Bounds::default(),
            lowered: false,
            asked_dims: Vec::new(),
            tflm: None,
        }
    }
}

/// Parses the tensor sizes field: `name=bytes` pairs separated by commas or new lines
/// (`conv1_out=4MiB, y=1536`; sizes as [`memplan_core::units::parse_bytes`] reads them). A
/// tensor named twice is refused, as the CLI's `--size` does.
///
/// # Errors
/// A sentence naming the bad pair.
pub fn parse_sizes(text: &str) -> Result<std::collections::BTreeMap<String, u64>, String> {
    let mut m = std::collections::BTreeMap::new();
    for part in text
        .split([',', '\n'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (name, bytes) = part
            .rsplit_once('=')
            .ok_or_else(|| format!("tensor size '{part}': expected NAME=BYTES"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!(
                "tensor size '{part}': the tensor's name is missing"
            ));
        }
        let b = memplan_core::units::parse_bytes(bytes)
            .map_err(|e| format!("tensor size of '{name}': {e}"))?;
        if m.insert(name.to_string(), b).is_some() {
            return Err(format!("tensor '{name}' is given a size twice"));
        }
    }
    if m.len() > MAX_SYMBOLS {
        return Err(format!("at most {MAX_SYMBOLS} tensor sizes"));
    }
    Ok(m)
}

/// Parses a gear list such as `1,2,4,8` (empty: no gears).
///
/// # Errors
/// A message naming the bad entry, a gear listed twice, or the limit.
pub fn parse_gears(text: &str) -> Result<Vec<u64>, String> {
    let mut v = Vec::new();
    for part in text.split([',', ' ']).filter(|p| !p.trim().is_empty()) {
        match part.trim().parse::<u64>() {
            Ok(n) if (1..=MAX_DIM).contains(&n) => v.push(n),
            _ => {
                return Err(format!(
                    "gear '{}' is not a batch size from 1 to {MAX_DIM}",
                    part.trim()
                ))
            }
        }
    }
    v.sort_unstable();
    // as the CLI's --batch: a gear typed twice is a slip, not a request
    if let Some(w) = v.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("gear {} is listed twice", w[0]));
    }
    if v.len() > MAX_GEARS {
        return Err(format!("at most {MAX_GEARS} gears"));
    }
    Ok(v)
}

/// Parses and lowers `source` under `bindings` with core's load pipeline (the CLI's), the
/// dims left unbound set to 1.
///
/// # Errors
/// The importer's message, or a limit exceeded; never panics on bad bytes.
pub fn build(source: &Source, bindings: &Bindings, gears: &[u64]) -> Result<Built, String> {
    build_with(source, bindings, gears, &Lowering::default())
}

/// How a graph is lowered to buffers beyond its dims and gears: the model-level settings the
/// CLI gives with `--alias-views` and `--schedule`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lowering {
    /// View outputs share their dying input's buffer ([`memplan_core::graph::views`]).
    pub alias_views: bool,
    /// The order the ops run in; `None`: the graph's own (`"schedule"`, else file order).
    pub schedule: Option<ScheduleOrder>,
    /// Tensor sizes the user gave, bytes (the CLI's `--size NAME=BYTES`): a tensor whose shape
    /// is not inferred, or one to resize.
    pub sizes: std::collections::BTreeMap<String, u64>,
}

/// [`build`], lowered as `lowering` says (views sharing their input, the op order).
///
/// # Errors
/// As [`build`].
pub fn build_with(
    source: &Source,
    bindings: &Bindings,
    gears: &[u64],
    lowering: &Lowering,
) -> Result<Built, String> {
    let named = |e: memplan_core::Error| format!("{}: {e}", source.name);
    if source.format == Format::Lowered {
        return checked(source, from_lowered_json(&source.bytes)?);
    }
    let format = match source.format.core() {
        None => {
            let text = std::str::from_utf8(&source.bytes)
                .map_err(|e| format!("{}: not UTF-8 text ({e})", source.name))?;
            let problem: Problem = serde_json::from_str(text)
                .map_err(|e| format!("inline problem in the link: {e}"))?;
            problem
                .check()
                .map_err(|e| format!("inline problem in the link: {e}"))?;
            return checked(source, from_problem(problem)?);
        }
        Some(f) => f,
    };
    // a buffer list has no graph to lower: the model form's switches, hidden for it, stay
    // on for the next graph but say nothing here
    let none = Lowering::default();
    let lowering = if format == CoreFormat::Csv {
        &none
    } else {
        lowering
    };
    let opts = load_options(bindings, gears, lowering);
    let loaded = load_as(format, &source.name, &source.bytes, &opts).map_err(named)?;
    let built = if loaded.graph.is_some() {
        from_loaded(loaded)
    } else {
        from_problem(loaded.lowered.problem)?
    };
    checked(source, built)
}

/// Core's load options for the page's bindings, gears and lowering settings (one place, so
/// that a file loaded again, as a TFLM export does, lowers to the same problem).
pub fn load_options(bindings: &Bindings, gears: &[u64], lowering: &Lowering) -> LoadOptions {
    LoadOptions {
        dims: bindings.clone(),
        gears: gears.to_vec(),
        alias_views: lowering.alias_views,
        order: lowering.schedule,
        sizes: lowering.sizes.clone(),
        ..LoadOptions::default()
    }
}

/// Refuses problems over the playground's limits, and sizes whose sums overflow `u64` (named,
/// rather than shown as 0 B).
fn checked(source: &Source, mut built: Built) -> Result<Built, String> {
    if built.problem.buffers.len() > MAX_BUFFERS {
        return Err(format!(
            "{}: {} buffers; the playground plans up to {MAX_BUFFERS}",
            source.name,
            built.problem.buffers.len()
        ));
    }
    built.raw_bounds =
        memplan_core::lower_bound(&built.problem).map_err(|e| format!("{}: {e}", source.name))?;
    Ok(built)
}

/// Files at least this large (bytes) are parsed in the background worker, so that parsing
/// never blocks the page; smaller ones (every sample) parse on the page, at once.
pub const PARSE_IN_WORKER_BYTES: usize = 256 * 1024;

/// What building a model under the page's settings came to: the model (or the message), and
/// the bindings and gears it was built with, which differ from those asked for when the model
/// has symbols left unbound (bound to 1) or cannot take the gears (dropped, with a notice).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The model, or why it did not build.
    pub built: Result<Built, String>,
    /// The bindings it was built with.
    pub bindings: Bindings,
    /// The gears it was built with.
    pub gears: Vec<u64>,
    /// Why the gears asked for were dropped, if they were.
    pub notice: Option<String>,
    /// Why the tensor sizes asked for were dropped (a name the graph does not have…), if
    /// they were: the model is built without them.
    #[serde(default)]
    pub sizes_notice: Option<String>,
    /// Why the op order asked for was dropped (the model builds only in file order), if it
    /// was: the model is built in file order.
    #[serde(default)]
    pub schedule_notice: Option<String>,
}

/// Builds `source` under `bindings` and `gears` as the page does: gears the model cannot take
/// are dropped (said in [`Outcome::notice`]), and symbols left unbound are bound to 1 and the
/// model built again with them (dims the file leaves unnamed stay unknown, [`default_bindings`]). Runs on the page for small files and in the worker for those
/// of [`PARSE_IN_WORKER_BYTES`] or more.
pub fn build_settled(
    source: &Source,
    bindings: &Bindings,
    gears: &[u64],
    lowering: &Lowering,
) -> Outcome {
    let mut bindings = bindings.clone();
    let mut gears = gears.to_vec();
    let mut lowering = lowering.clone();
    let (mut notice, mut sizes_notice) = (None, None);
    let mut first = build_with(source, &bindings, &gears, &lowering);
    if let Err(e) = first.clone() {
        // Tensor sizes the model cannot take (a name it does not have…): if the model
        // builds without them, they were at fault; say why, plan without.
        if !lowering.sizes.is_empty() {
            let without = Lowering {
                sizes: Default::default(),
                ..lowering.clone()
            };
            let r = build_with(source, &bindings, &gears, &without);
            if r.is_ok() {
                sizes_notice = Some(format!("Tensor sizes not applied: {e}"));
                (lowering, first) = (without, r);
            }
        }
        // Gears the model cannot take (no symbolic batch dim…): say why, plan without.
        if first.is_err() && !gears.is_empty() {
            notice = Some(format!("Gears not applied: {e}"));
            gears.clear();
            first = build_with(source, &bindings, &gears, &lowering);
            if first.is_err() && !lowering.sizes.is_empty() {
                sizes_notice = Some(format!("Tensor sizes not applied: {e}"));
                lowering.sizes.clear();
                first = build_with(source, &bindings, &gears, &lowering);
            }
        }
    }
    // An op order the model cannot run in: keep the model, in file order, and say why
    // (the order control stays on screen to pick another).
    let mut schedule_notice = None;
    if let Err(e) = &first {
        if lowering.schedule != Some(ScheduleOrder::File) {
            let file = Lowering {
                schedule: Some(ScheduleOrder::File),
                ..lowering.clone()
            };
            let r = build_with(source, &bindings, &gears, &file);
            if r.is_ok() {
                schedule_notice = Some(format!("Op order not applied: {e}"));
                (lowering, first) = (file, r);
            }
        }
    }
    let built = match first {
        Ok(b) => {
            let mut want = default_bindings(&b.symbols, &bindings);
            // a dim whose 1 is impossible stays unbound until the user gives it
            want.retain(|k, _| {
                bindings.contains_key(k) || !b.asked_dims.iter().any(|a| &a.dim == k)
            });
            if want != bindings {
                bindings = want;
                build_with(source, &bindings, &gears, &lowering)
            } else {
                Ok(b)
            }
        }
        Err(e) => Err(e),
    };
    Outcome {
        built,
        bindings,
        gears,
        notice,
        sizes_notice,
        schedule_notice,
    }
}

/// Default bindings, as the CLI's ([`memplan_core::Graph::bind_unbound_to_one`]): every
/// named symbol of `symbols` not bound in `current` gets 1; a dim the file does not name
/// (`x axis 0`, [`memplan_core::graph::is_unknown_dim`]) stays unknown until the user binds it,
/// so the tensors it sizes are counted as of unknown size, not planned on a guess.
pub fn default_bindings(symbols: &[String], current: &Bindings) -> Bindings {
    symbols
        .iter()
        .take(MAX_SYMBOLS)
        .filter_map(|s| match current.get(s) {
            Some(&v) => Some((s.clone(), v)),
            None if memplan_core::graph::is_unknown_dim(s) => None,
            None => Some((s.clone(), 1)),
        })
        .collect()
}

/// The table's shape and dtype of each buffer, from the graph it was lowered from.
fn from_loaded(loaded: Loaded) -> Built {
    let Loaded {
        graph,
        lowered,
        symbols,
        dims,
        weight_bytes,
        gears: gear_info,
        diagnostics,
        tflite,
        ..
    } = loaded;
    let tflm = tflite.as_ref().map(crate::tflm::TflmArena::of);
    let asked_dims = diagnostics
        .into_iter()
        .map(|d| match d.setting {
            memplan_core::import::load::Setting::Dim(dim) => AskedDim {
                dim,
                why: d.error.to_string(),
            },
        })
        .collect();
    let graph = graph.unwrap_or_default();
    let problem = lowered.problem;
    let info = problem
        .buffers
        .iter()
        .zip(&lowered.tensor_of)
        .map(|(b, t)| {
            let op = match b.producer.and_then(|s| usize::try_from(s).ok()) {
                Some(step) => problem
                    .ops
                    .get(step)
                    .map(|o| format!("{} ({})", o.name, o.op_type))
                    .unwrap_or_default(),
                None => "graph input".to_string(),
            };
            let mut shape_bindings = dims.clone();
            // a gear's copy at its batch; an ungeared buffer (graph I/O, one at the largest
            // gear as GE clones the graph) at the largest gear
            if let Some((dim, gears)) = &gear_info {
                if let Some(g) = b.gear.or_else(|| gears.iter().copied().max()) {
                    shape_bindings.insert(dim.clone(), g);
                }
            }
            let (shape, dtype) = match t.and_then(|t| graph.tensors.get(t.index())) {
                Some(tensor) => (
                    tensor
                        .bound_shape(&shape_bindings)
                        .map(|s| {
                            if s.is_empty() {
                                "scalar".to_string()
                            } else {
                                s.iter().map(u64::to_string).collect::<Vec<_>>().join("×")
                            }
                        })
                        .or_else(|| {
                            tensor.shape.as_ref().map(|s| {
                                s.iter()
                                    .map(|d| d.to_string())
                                    .collect::<Vec<_>>()
                                    .join("×")
                            })
                        })
                        .unwrap_or_default(),
                    tensor
                        .dtype
                        .map(|d| d.name().to_string())
                        .unwrap_or_default(),
                ),
                None => (String::new(), String::new()),
            };
            BufInfo { op, shape, dtype }
        })
        .collect();
    Built {
        problem,
        info,
        symbols,
        warnings: lowered.warnings,
        is_graph: true,
        weight_bytes,
        gears: gear_info,
        unknown: lowered.unknown,
        views: lowered.views,
        order: lowered.order,
        search: lowered.search,
        // filled in by `checked`
        raw_bounds: memplan_core::Bounds::default(),
        lowered: false,
        asked_dims,
        tflm,
    }
}

/// The JSON a share link carries for a model whose file it cannot: `{"b": built without its
/// buffers, "buffers": [...]}`, each buffer without the fields that hold their default (a
/// trace's buffers are then name, size and live range only); read back by
/// [`from_lowered_json`] to an equal [`Built`]. Serialised field by field rather than through
/// `serde_json::Value`, which took 0.5 s for 62k buffers.
pub fn lowered_json(built: &Built) -> Vec<u8> {
    let mut rest = built.clone();
    rest.problem.buffers = Vec::new();
    // every entry empty (a trace): none at all, read back as empty entries
    if rest.info.iter().all(|i| *i == BufInfo::default()) {
        rest.info = Vec::new();
    }
    let out = LoweredOut {
        b: &rest,
        buffers: built.problem.buffers.iter().map(Lean).collect(),
    };
    // our own types always serialize
    serde_json::to_vec(&out).unwrap_or_default()
}

#[derive(Serialize)]
struct LoweredOut<'a> {
    b: &'a Built,
    buffers: Vec<Lean<'a>>,
}

#[derive(Deserialize)]
struct LoweredIn {
    b: Built,
    buffers: Vec<memplan_core::Buffer>,
}

/// A buffer serialised without its default fields (read back by `Buffer`'s `serde(default)`).
struct Lean<'a>(&'a memplan_core::Buffer);

impl Serialize for Lean<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // every field named: a field added to `Buffer` does not compile here until it travels
        let memplan_core::Buffer {
            name,
            size,
            start,
            end,
            kind,
            stream,
            gear,
            memory_type,
            flags,
            continuous,
            producer,
            readers,
            aliases,
            alignment,
            fixed_offset,
        } = self.0;
        let d = memplan_core::Buffer::default();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", name)?;
        m.serialize_entry("size", size)?;
        m.serialize_entry("start", start)?;
        m.serialize_entry("end", end)?;
        if *kind != d.kind {
            m.serialize_entry("kind", kind)?;
        }
        if *stream != d.stream {
            m.serialize_entry("stream", stream)?;
        }
        if gear.is_some() {
            m.serialize_entry("gear", gear)?;
        }
        if *memory_type != d.memory_type {
            m.serialize_entry("memory_type", memory_type)?;
        }
        if *flags != d.flags {
            m.serialize_entry("flags", flags)?;
        }
        if continuous.is_some() {
            m.serialize_entry("continuous", continuous)?;
        }
        if producer.is_some() {
            m.serialize_entry("producer", producer)?;
        }
        if !readers.is_empty() {
            m.serialize_entry("readers", readers)?;
        }
        if !aliases.is_empty() {
            m.serialize_entry("aliases", aliases)?;
        }
        if *alignment != d.alignment {
            m.serialize_entry("alignment", alignment)?;
        }
        if fixed_offset.is_some() {
            m.serialize_entry("fixed_offset", fixed_offset)?;
        }
        m.end()
    }
}

/// Reads what [`lowered_json`] wrote, from an untrusted link: the problem checked, the
/// per-buffer entries matching the buffers, the lists within the playground's limits.
///
/// # Errors
/// A sentence saying what is wrong.
pub fn from_lowered_json(bytes: &[u8]) -> Result<Built, String> {
    let bad = |e: String| format!("the link's lowered problem is invalid: {e}");
    let LoweredIn { mut b, buffers } =
        serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    b.problem.buffers = buffers;
    if b.problem.buffers.len() > MAX_BUFFERS {
        return Err(bad(format!(
            "{} buffers; the playground plans up to {MAX_BUFFERS}",
            b.problem.buffers.len()
        )));
    }
    b.problem.check().map_err(|e| bad(e.to_string()))?;
    if b.info.is_empty() {
        b.info = vec![BufInfo::default(); b.problem.buffers.len()];
    }
    if b.info.len() != b.problem.buffers.len() {
        return Err(bad(format!(
            "{} table entries for {} buffers",
            b.info.len(),
            b.problem.buffers.len()
        )));
    }
    if b.symbols.len() > MAX_SYMBOLS || b.unknown.len() > MAX_BUFFERS {
        return Err(bad("too many dims or tensors of unknown size".into()));
    }
    if let Some((_, gears)) = &b.gears {
        if gears.is_empty()
            || gears.len() > MAX_GEARS
            || gears.iter().any(|&g| g == 0 || g > MAX_DIM)
            || gears.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(bad(format!(
                "its gears must be 1 to {MAX_GEARS} ascending batch sizes from 1 to {MAX_DIM}"
            )));
        }
    }
    // what a link may not claim: gears no buffer is planned for, buffers of a gear the
    // model does not have, more steps than its ops (or its buffers' lifetimes) span
    let listed: &[u64] = b.gears.as_ref().map_or(&[], |(_, g)| g.as_slice());
    let labelled = b.problem.gears();
    if let Some(g) = labelled.iter().find(|g| !listed.contains(g)) {
        return Err(bad(format!(
            "a buffer of gear {g}, which is not among its gears"
        )));
    }
    if listed.len() > 1 && labelled.is_empty() {
        return Err(bad("gears without a buffer of any gear".into()));
    }
    let span = b
        .problem
        .buffers
        .iter()
        .map(|t| t.end.saturating_add(1))
        .max()
        .unwrap_or(0)
        .max(b.problem.ops.len() as u64);
    if b.problem.steps > span {
        return Err(bad(format!(
            "{} steps, but its ops and lifetimes span {span}",
            b.problem.steps
        )));
    }
    b.warnings.truncate(1000);
    b.lowered = true;
    Ok(b)
}

fn from_problem(problem: Problem) -> Result<Built, String> {
    if problem.buffers.len() > MAX_BUFFERS {
        return Err(format!(
            "{} buffers; the playground plans up to {MAX_BUFFERS}",
            problem.buffers.len()
        ));
    }
    Ok(Built::of_problem(problem))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample_bytes(file: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../static/samples/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("sample file")
    }

    #[test]
    fn a_dim_whose_default_is_impossible_is_asked_for() {
        // testdata/models/width_reshape.onnx (scripts/make-width-reshape-onnx.py): x is
        // [DynamicDimension.0, 3, 48, DynamicDimension.1]; Reshape to [0, -1, 120] needs
        // 144 W elements per image to split into rows of 120. W = 1 cannot; the batch can.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/models/width_reshape.onnx"
        );
        let bytes = std::fs::read(path).expect("testdata/models/width_reshape.onnx");
        let src = Source::new("width_reshape.onnx", Origin::File, bytes).unwrap();
        let out = build_settled(&src, &Bindings::new(), &[], &Lowering::default());
        let b = out.built.expect("the model opens, asking for the width");
        assert_eq!(b.asked_dims.len(), 1);
        assert_eq!(b.asked_dims[0].dim, "DynamicDimension.1");
        assert!(
            b.asked_dims[0].why.contains("Reshape.51"),
            "{}",
            b.asked_dims[0].why
        );
        assert!(!b.asked_dims[0].message().contains("--dim"));
        // the batch took its default; the width stays unbound, asked for
        assert_eq!(out.bindings.get("DynamicDimension.0"), Some(&1));
        assert_eq!(out.bindings.get("DynamicDimension.1"), None);
        assert!(b.symbols.contains(&"DynamicDimension.1".to_string()));
        // given W = 320: x 1·3·48·320·4 = 184,320 B, the Reshape's output [1, 384, 120] the
        // same, every tensor known
        let mut given = out.bindings.clone();
        given.insert("DynamicDimension.1".into(), 320);
        let out = build_settled(&src, &given, &[], &Lowering::default());
        let b = out.built.expect("plans once the width is given");
        assert!(b.asked_dims.is_empty());
        assert!(b.unknown.is_empty());
        assert!(b.problem.buffers.iter().all(|x| x.size == 184_320));
    }

    #[test]
    fn errors_come_from_the_parser_the_extension_names() {
        let err = |name: &str, bytes: &[u8]| {
            let s = Source::new(name, Origin::File, bytes.to_vec()).unwrap();
            build(&s, &Bindings::new(), &[]).unwrap_err()
        };
        // as the CLI says for the same file
        let e = err("garbage.csv", b"garbage\n");
        assert!(e.starts_with("garbage.csv: "), "{e}");
        assert!(e.contains("header 'garbage'"), "{e}");
        assert!(!e.contains("ONNX") && !e.contains("wire type"), "{e}");
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let e = err("deep.json", deep.as_bytes());
        assert!(e.starts_with("deep.json: "), "{e}");
        assert!(!e.contains("ONNX") && !e.contains("wire type"), "{e}");
        let e = err("p.plan.json", br#"{"format":"memplan.plan/1","plans":[]}"#);
        assert!(e.contains("this is a plan"), "{e}");
        let e = err("m.onnx", b"id,lower,upper,size\na,0,1,4\n");
        assert!(e.starts_with("m.onnx: "), "{e}");
    }

    #[test]
    fn onnx_sample_builds_to_the_reference_figures() {
        // shared/models README: resnet50_randinit at batch 1 has 122 steps, a live-set lower
        // bound of 9,633,792 B and a no-reuse total of 106,393,504 B (raw sizes).
        let s = Source::new(
            "m.onnx",
            Origin::File,
            sample_bytes("resnet50_randinit.stripped.onnx"),
        )
        .unwrap();
        assert_eq!(s.format, Format::Onnx);
        let free = build(&s, &Bindings::new(), &[]).unwrap();
        assert_eq!(free.symbols, vec!["batch".to_string()]);
        let b = build(&s, &default_bindings(&free.symbols, &Bindings::new()), &[]).unwrap();
        assert_eq!(b.symbols, vec!["batch".to_string()]);
        assert_eq!(b.problem.steps, 122);
        let bounds = memplan_core::lower_bound(&b.problem).unwrap();
        assert_eq!(bounds.lower_bound, 9_633_792);
        assert_eq!(bounds.no_reuse, 106_393_504);
        assert_eq!(b.weight_bytes, 102_015_680);
        assert_eq!(b.info[0].shape, "1×3×224×224");
    }

    #[test]
    fn gears_scale_every_batch_tensor_of_resnet50() {
        // shared/models shapes oracle: resnet50's input is batch×3×224×224 float32, so its
        // copy at gear B is B × 602112 B; the weights are not duplicated.
        let s = Source::new(
            "r.onnx",
            Origin::File,
            sample_bytes("resnet50_randinit.stripped.onnx"),
        )
        .unwrap();
        let b = build(&s, &Bindings::new(), &[1, 2, 4, 8]).unwrap();
        assert_eq!(b.gears, Some(("batch".to_string(), vec![1, 2, 4, 8])));
        // As GE clones the graph per gear, the graph input is one zero-copy buffer at the
        // largest gear (8 x 3 x 224 x 224 float32); the tensors inside are one copy per gear.
        let input = b
            .problem
            .buffers
            .iter()
            .position(|x| x.name == "input")
            .unwrap();
        assert_eq!(b.problem.buffers[input].gear, None);
        assert_eq!(b.problem.buffers[input].size, 8 * 3 * 224 * 224 * 4);
        assert_eq!(b.info[input].shape, "8×3×224×224");
        let per_gear = |g: u64| {
            b.problem
                .buffers
                .iter()
                .filter(|x| x.gear == Some(g))
                .count()
        };
        assert!(per_gear(1) > 100);
        assert!([2, 4, 8].iter().all(|&g| per_gear(g) == per_gear(1)));
        assert_eq!(b.weight_bytes, 102_015_680);
        assert_eq!(parse_gears(" 8, 1,2 ").unwrap(), vec![1, 2, 8]);
        assert_eq!(parse_gears("1,2,2").unwrap_err(), "gear 2 is listed twice");
        assert!(parse_gears("1,x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn tensor_sizes_parse_as_the_cli_reads_them() {
        let m = parse_sizes(" y=4MiB, b = 1536\n").unwrap();
        assert_eq!(m.get("y"), Some(&(4 << 20)));
        assert_eq!(m.get("b"), Some(&1536));
        assert!(parse_sizes("").unwrap().is_empty());
        assert_eq!(
            parse_sizes("y=1, y=2").unwrap_err(),
            "tensor 'y' is given a size twice"
        );
        assert_eq!(
            parse_sizes("y").unwrap_err(),
            "tensor size 'y': expected NAME=BYTES"
        );
        assert!(parse_sizes("y=lots")
            .unwrap_err()
            .starts_with("tensor size of 'y': "));
    }

    #[test]
    fn truncated_onnx_is_an_error_naming_the_file() {
        let mut bytes = sample_bytes("resnet50_randinit.stripped.onnx");
        bytes.truncate(1000);
        let s = Source::new("cut.onnx", Origin::File, bytes).unwrap();
        let e = build(&s, &Bindings::new(), &[]).unwrap_err();
        assert!(e.starts_with("cut.onnx: "), "{e}");
    }

    #[test]
    fn too_large_names_the_limit() {
        let e = check_size("big.onnx", MAX_FILE_BYTES + 1).unwrap_err();
        assert!(e.contains("512.0 MiB"), "{e}");
    }

    #[test]
    fn default_sample_builds_with_batch_bound() {
        let s = Source::new(
            "m",
            Origin::Sample("x".into()),
            sample_bytes("mobilenet-v2-blocks.json"),
        )
        .unwrap();
        let b0 = build(&s, &Bindings::new(), &[]).unwrap();
        assert_eq!(b0.symbols, vec!["batch".to_string()]);
        let b = build(&s, &default_bindings(&b0.symbols, &Bindings::new()), &[]).unwrap();
        assert!(b.warnings.is_empty(), "{:?}", b.warnings);
        assert!(b.is_graph);
        assert_eq!(b.problem.buffers[0].size, 3 * 224 * 224 * 4);
        assert_eq!(b.info[0].shape, "1×3×224×224");
        assert_eq!(b.info[0].dtype, "float32");
        assert_eq!(b.info[1].op, "features.0 (Conv)");
    }

    #[test]
    fn sizes_that_overflow_are_refused_by_name() {
        let text = br#"id,lower,upper,size
a,0,3,18446744073709551615
b,0,3,18446744073709551615
"#;
        let s = Source::new("huge.csv", Origin::File, text.to_vec()).unwrap();
        let e = build(&s, &Bindings::new(), &[]).unwrap_err();
        assert!(e.starts_with("huge.csv: "), "{e}");
        assert!(e.contains("overflow"), "{e}");
        assert!(e.contains("'b'") || e.contains("'a'"), "{e}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bytes in [
            &b"{"[..],
            b"{\"format\":\"memplan.graph/1\"}",
            b"id,lower\n1,2",
            b"\xff\xfe{",
        ] {
            let s = Source::new("bad", Origin::File, bytes.to_vec()).unwrap();
            assert!(build(&s, &Bindings::new(), &[]).is_err());
        }
    }
}
