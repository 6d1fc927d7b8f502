//! The one load pipeline of the CLI and the playground: bytes and a file name in, a lowered
//! [`crate::Problem`] out.
//!
//! import → bind dims (the ones the user leaves unbound set to 1, with a warning) → import
//! again with them bound (ONNX shape arithmetic over a symbolic dim may not resolve) →
//! dynamic-batch gears (each gear imported with its batch bound) → lower → warnings.

// without both importers (a bare `no_std` build) only CSV is read: the graph steps are unused
#![cfg_attr(
    not(all(feature = "serde", feature = "onnx")),
    allow(dead_code, unused_imports)
)]

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::graph::{gears, rewrite, views, Bindings, Graph, Lowered};
use crate::plan::{Padding, PlanOptions};
use crate::{Error, Result};

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `memplan.graph/1` JSON.
    GraphJson,
    /// MiniMalloc CSV (`id,lower,upper,size...`).
    Csv,
    /// ONNX protobuf.
    Onnx,
    /// TensorFlow Lite flatbuffer (`.tflite`, identifier `TFL3`), read under TFLM's rules.
    Tflite,
}

impl Format {
    /// Short name for messages and the UI.
    pub fn name(self) -> &'static str {
        match self {
            Format::GraphJson => "memplan.graph/1 JSON",
            Format::Csv => "MiniMalloc CSV",
            Format::Onnx => "ONNX",
            Format::Tflite => "TFLite",
        }
    }

    /// The plan options a file of this format is planned with unless the user says otherwise.
    /// TFLite: TFLM's (`micro_allocator.cc` `CreatePlan`: every size rounded up to
    /// `MicroArenaBufferAlignment()` = 16 B; no GE padding; graph inputs and outputs live in the
    /// arena head and are reused like any activation), so a plain plan's lower bound and
    /// no-reuse total are TFLM's. Others: [`PlanOptions::default`] (GE's).
    pub fn default_plan_options(self) -> PlanOptions {
        match self {
            Format::Tflite => PlanOptions {
                alignment: 16,
                padding: Padding::None,
                zero_copy_io: false,
                zero_copy_reuse: false,
                ..PlanOptions::default()
            },
            Format::GraphJson | Format::Csv | Format::Onnx => PlanOptions::default(),
        }
    }

    /// The format a file name's extension names (`.onnx`, `.json`, `.csv`, any case), if any.
    pub fn by_extension(name: &str) -> Option<Format> {
        let (_, ext) = name.rsplit_once('.')?;
        match ext.to_ascii_lowercase().as_str() {
            "onnx" => Some(Format::Onnx),
            "tflite" => Some(Format::Tflite),
            "json" => Some(Format::GraphJson),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }

    /// The format of a file: its extension decides when known (so that errors come from the
    /// parser the user expects); only a name without one is sniffed ([`Format::sniff`]).
    pub fn detect(name: &str, bytes: &[u8]) -> Format {
        Format::by_extension(name).unwrap_or_else(|| Format::sniff(bytes))
    }

    /// Guesses the format from the first bytes: a TFLite flatbuffer has the identifier `TFL3`
    /// at bytes 4..8; otherwise (a UTF-8 byte-order mark and whitespace skipped) JSON starts
    /// with `{` or `[`, CSV with a header naming an `id` column, anything else is taken as
    /// ONNX protobuf.
    pub fn sniff(bytes: &[u8]) -> Format {
        if bytes.get(4..8) == Some(b"TFL3") {
            return Format::Tflite;
        }
        let head = trim_start(bytes);
        if matches!(head.first(), Some(b'{' | b'[')) {
            return Format::GraphJson;
        }
        let line_end = head
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(head.len())
            .min(256);
        let first = String::from_utf8_lossy(&head[..line_end]).to_ascii_lowercase();
        if first.contains(',') && first.split(',').map(str::trim).any(|c| c == "id") {
            return Format::Csv;
        }
        Format::Onnx
    }
}

/// Whether `bytes` start like an ONNX `ModelProto` (onnx.proto), cheaply, without decoding
/// it: a protobuf whose first field is `ir_version` (field 1, a varint of 1 to 100), followed
/// by `ModelProto` fields with their wire types (varints 1 and 5; length-delimited 2, 3, 4, 6,
/// 7, 8, 14, 20, 25), the first 4 fields checked. A length past the end ends the walk (the
/// file may be cut short). For error messages only (a `.tflite` that is an ONNX model);
/// [`Format::sniff`] takes anything not TFLite, JSON or CSV as ONNX.
pub fn looks_like_onnx(bytes: &[u8]) -> bool {
    fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *b.get(*at)?;
            *at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    let mut at = 0usize;
    for i in 0..4 {
        if at >= bytes.len() {
            break;
        }
        let Some(key) = varint(bytes, &mut at) else {
            return false;
        };
        let (field, wire) = (key >> 3, key & 7);
        match (field, wire) {
            (1 | 5, 0) => {
                let Some(v) = varint(bytes, &mut at) else {
                    return false;
                };
                if i == 0 && !(1..=100).contains(&v) {
                    return false;
                }
            }
            (2 | 3 | 4 | 6 | 7 | 8 | 14 | 20 | 25, 2) if i > 0 => {
                let Some(len) = varint(bytes, &mut at) else {
                    return false;
                };
                match usize::try_from(len).ok().and_then(|l| at.checked_add(l)) {
                    Some(end) if end <= bytes.len() => at = end,
                    _ => break, // cut short: what was read looked right
                }
            }
            _ => return false,
        }
        if i == 0 && field != 1 {
            return false;
        }
    }
    at > 0
}

/// `bytes` without a leading UTF-8 byte-order mark (editors on Windows write one) and
/// whitespace.
fn trim_start(bytes: &[u8]) -> &[u8] {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    &body[start..]
}

/// Settings that turn a graph into a problem (the CLI's `--dim`, `--input`, `--size`,
/// `--alias-views`, `--batch`, `--batch-dim`; the playground's dim fields and gears).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Symbolic dims bound by the user (`--dim NAME=VALUE`); the others are bound to 1.
    pub dims: Bindings,
    /// Input shapes given by the user (`--input NAME=1x3x224x224`), ONNX only.
    pub inputs: BTreeMap<String, Vec<u64>>,
    /// Tensor sizes given by the user, bytes (`--size NAME=BYTES`): shape not inferred, or to
    /// override it.
    pub sizes: BTreeMap<String, u64>,
    /// View outputs share their dying input's buffer ([`crate::graph::views`]).
    pub alias_views: bool,
    /// Dynamic-batch gears (batch sizes); empty: one plan at the bound dims.
    pub gears: Vec<u64>,
    /// The symbolic dim that is the batch (default: the leading symbolic dim of the first
    /// input, [`gears::batch_dim`]).
    pub batch_dim: Option<String>,
    /// The order the ops run in (`--schedule`); `None`: the graph's own (`"schedule"`, else
    /// file order).
    pub order: Option<crate::graph::ScheduleOrder>,
    /// Fusions (`--fuse pad,quantize,activation`, [`crate::graph::rewrite::fuse`]).
    pub fuse: rewrite::Fuse,
    /// In-place ops (`--in-place elementwise,depthwise`, [`crate::graph::rewrite::in_place`]).
    pub in_place: rewrite::InPlace,
}

/// A loaded file, lowered and ready to plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// What the file held.
    pub format: Format,
    /// The graph the problem was lowered from (`None` for a bare buffer list). Its tensor ids
    /// are those of `lowered.tensor_of`; with gears, its shapes are bound by [`Loaded::dims`]
    /// plus the gear's batch.
    pub graph: Option<Graph>,
    /// The problem, the schedule and the buffer-to-tensor map; `lowered.warnings` holds every
    /// warning of the import and the lowering, in order.
    pub lowered: Lowered,
    /// The graph's symbolic dim names, from an import with nothing bound (sorted; empty for
    /// buffer lists): what the user may bind.
    pub symbols: Vec<String>,
    /// The dims in force: the user's plus those bound to 1 (without the batch dim with gears).
    pub dims: Bindings,
    /// Bytes of weights (ONNX initializers, JSON `weight_bytes`), not planned in the arena.
    pub weight_bytes: u64,
    /// With gears: the batch dim and the gears (sorted, no duplicates).
    pub gears: Option<(String, Vec<u64>)>,
    /// A `.tflite` file's TFLM facts: each tensor's subgraph and index (graph tensor id =
    /// position in TFLM's offline-plan array), persistent tensors, ops needing scratch, the
    /// file's offline plan.
    #[cfg(feature = "tflite")]
    pub tflite: Option<super::tflite::TfliteInfo>,
    /// What could not be built as asked, each naming the setting it concerns; the model
    /// above is what could be built without it. A caller that cannot ask for the setting
    /// (the CLI) reports the first as its error ([`Loaded::refused`]); one that can (the
    /// playground) shows the model and asks.
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// The error of the first diagnostic, if any: what a load that asks nothing back fails
    /// with (the error the import would have stopped with).
    pub fn refused(&self) -> Option<&Error> {
        self.diagnostics.first().map(|d| &d.error)
    }
}

/// A setting of a load ([`LoadOptions`]) that a diagnostic concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// A symbolic dim: its value must be given (the default of 1 is impossible).
    Dim(String),
}

/// Something a load could not build as asked: the setting at fault and the importer's error
/// (worded by each front end: the CLI says `--dim NAME=VALUE`, the page asks in its dims
/// panel).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The setting at fault.
    pub setting: Setting,
    /// What went wrong with the default (the importer's error, e.g. an impossible Reshape).
    pub error: Error,
}

/// The message for a file with no content.
const EMPTY: &str = "empty file (expected ONNX, TFLite, memplan JSON or MiniMalloc CSV)";

/// Imports `bytes` (format from `name`'s extension, else sniffed: [`Format::detect`]) and
/// lowers it under `opts`. `name` (a path or a file name) names the graph or problem when the
/// file does not (its stem) and decides the format; errors do not carry it (the caller adds
/// it with [`Error::at`]).
///
/// Warnings (in `lowered.warnings`): `--input`/`--dim` names the graph does not have (most
/// likely typos), dims bound to 1, then the import's and the lowering's. When dims were bound
/// to 1 or with gears, an ONNX model is imported again with them bound, and the symbolic
/// import's warnings are replaced by the bound one's.
///
/// # Errors
/// [`crate::ErrorKind::Parse`] for an empty file, a plan file given as a model, text that is
/// not UTF-8; the importers' errors; [`crate::ErrorKind::BadOption`] for a `--size` naming
/// no tensor, a dim bound to 0, gears on a buffer list or on a graph without a batch dim;
/// lowering errors.
pub fn load(name: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded> {
    load_as(Format::detect(name, bytes), name, bytes, opts)
}

/// Refuses a symbolic dim bound to 0. GE and ONNX Runtime take a dim of 0 (empty tensors),
/// but a user binding one to 0 has almost surely slipped: every tensor that uses it would
/// plan as empty. [`load`] calls it; the CLI too, before it reads the file.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] naming the first such dim.
pub fn check_dims(dims: &Bindings) -> Result<()> {
    match dims.iter().find(|(_, &v)| v == 0) {
        Some((k, _)) => Err(Error::bad_option(alloc::format!(
            "--dim {k}=0: a symbolic dim must be at least 1 (0 would make every tensor that uses it empty)"
        ))),
        None => Ok(()),
    }
}

/// [`load`] with the format decided by the caller (the playground keeps it with the bytes).
///
/// # Errors
/// As [`load`].
pub fn load_as(format: Format, name: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if trim_start(bytes).is_empty() {
        return Err(Error::parse(EMPTY));
    }
    let stem = stem(name);
    check_dims(&opts.dims)?;
    if !opts.gears.is_empty() && opts.order == Some(crate::graph::ScheduleOrder::Memory) {
        return Err(Error::bad_option(
            "--schedule memory with --batch: gears share one op order, and the memory-aware order is chosen per size; plan one batch size, or give --schedule file or ge-dfs",
        ));
    }
    let mut seen = opts.gears.clone();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::bad_option(alloc::format!(
            "--batch lists gear {} twice",
            w[0]
        )));
    }
    match format {
        Format::Csv => {
            if !opts.gears.is_empty() {
                return Err(Error::bad_option(
                    "--batch needs a graph input (ONNX or JSON), not a buffer list",
                ));
            }
            let text = utf8(bytes, "CSV")?;
            let problem = super::csv::parse(&stem, text)?;
            Ok(Loaded {
                format,
                graph: None,
                weight_bytes: problem.weight_bytes,
                lowered: Lowered {
                    problem,
                    warnings: unused_on_buffer_list(opts),
                    ..Lowered::default()
                },
                symbols: Vec::new(),
                dims: Bindings::new(),
                gears: None,
                #[cfg(feature = "tflite")]
                tflite: None,
                diagnostics: Vec::new(),
            })
        }
        Format::GraphJson => load_json(&stem, bytes, opts),
        Format::Onnx => load_onnx(&stem, bytes, opts),
        Format::Tflite => load_tflite(&stem, bytes, opts),
    }
}

/// Warnings for graph settings given with a buffer list, where they change nothing: a CSV
/// has sizes and live ranges, no dims, inputs, tensors to resize, views or op order.
fn unused_on_buffer_list(opts: &LoadOptions) -> Vec<String> {
    let mut w = Vec::new();
    let mut unused = |what: &str, given: bool| {
        if given {
            w.push(alloc::format!(
                "{what} has no effect on a buffer list (CSV): it has sizes and live ranges, no graph"
            ));
        }
    };
    unused("--dim", !opts.dims.is_empty());
    unused("--input", !opts.inputs.is_empty());
    unused("--size", !opts.sizes.is_empty());
    unused("--batch-dim", opts.batch_dim.is_some());
    unused("--alias-views", opts.alias_views);
    unused("--schedule", opts.order.is_some());
    unused("--fuse", opts.fuse.any());
    unused("--in-place", opts.in_place.any());
    w
}

fn stem(name: &str) -> String {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match file.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s.to_string(),
        _ => file.to_string(),
    }
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str> {
    core::str::from_utf8(bytes)
        .map_err(|_| Error::parse(alloc::format!("{what} file is not UTF-8")))
}

#[cfg(feature = "serde")]
fn load_json(stem: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded> {
    let text = utf8(bytes, "JSON")?;
    if text.contains("\"memplan.plan/1\"") {
        return Err(Error::parse(
            "this is a plan (memplan.plan/1), not a model (ONNX, memplan.graph/1 JSON, MiniMalloc CSV): check it with `memplan validate`",
        ));
    }
    if let Some(name) = opts.inputs.keys().next() {
        return Err(Error::bad_option(alloc::format!(
            "--input {name}=…: whole input shapes apply to ONNX models; in a memplan.graph/1 file give the shape's symbolic dims values with --dim NAME=VALUE"
        )));
    }
    let mut graph = super::json::parse(text)?;
    if graph.name.is_empty() {
        graph.name = stem.to_string();
    }
    apply_sizes(&mut graph, &opts.sizes)?;
    let (mut graph, fused) = rewrite::fuse(&graph, &opts.fuse)?;
    graph.order = opts.order.unwrap_or(graph.order);
    let symbols = graph.symbols();
    let mut warnings = typos(&graph, &symbols, opts);
    let (dims, gear_info, mut lowered) = if opts.gears.is_empty() {
        let (dims, mut bind) = graph.bind_unbound_to_one(&opts.dims);
        warnings.append(&mut bind);
        let l = lower(&graph, &dims, opts)?;
        (dims, None, l)
    } else {
        let dim = gears::batch_dim(&graph, opts.batch_dim.as_deref())?;
        let (dims, mut bind) = gear_dims(&graph, &dim, opts);
        warnings.append(&mut bind);
        let l = gears::expand(&graph, &dims, &dim, &opts.gears)?;
        (dims, Some((dim, sorted(&opts.gears))), l)
    };
    warnings.append(&mut lowered.warnings);
    lowered.warnings = warnings;
    note_fused(&mut lowered, opts, fused);
    Ok(Loaded {
        format: Format::GraphJson,
        weight_bytes: lowered.problem.weight_bytes,
        graph: Some(graph),
        lowered,
        symbols,
        dims,
        gears: gear_info,
        #[cfg(feature = "tflite")]
        tflite: None,
        diagnostics: Vec::new(),
    })
}

#[cfg(not(feature = "serde"))]
fn load_json(_: &str, _: &[u8], _: &LoadOptions) -> Result<Loaded> {
    Err(Error::bad_option(
        "this build reads no memplan JSON (memplan-core without its `serde` feature)",
    ))
}

#[cfg(feature = "onnx")]
fn load_onnx(stem: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded> {
    use super::onnx::{parse, OnnxModel, OnnxOptions};
    // the ops the last import's fusion removed
    let fused = core::cell::RefCell::new(Vec::new());
    let with = |dims: &Bindings| -> Result<OnnxModel> {
        let mut m = parse(
            bytes,
            &OnnxOptions {
                dims: dims.clone(),
                inputs: opts.inputs.clone(),
            },
        )?;
        if m.graph.name.is_empty() {
            m.graph.name = stem.to_string();
        }
        apply_sizes(&mut m.graph, &opts.sizes)?;
        m.graph.order = opts.order.unwrap_or(m.graph.order);
        let (g, names) = rewrite::fuse(&m.graph, &opts.fuse)?;
        m.graph = g;
        *fused.borrow_mut() = names;
        Ok(m)
    };
    // With gears the batch stays symbolic in the graph kept for shapes; each gear is imported
    // again with its batch bound.
    let model = if opts.gears.is_empty() {
        with(&opts.dims)?
    } else {
        with(&Bindings::new())?
    };
    // What the user may bind: the symbols of an import with nothing bound (an import with
    // dims bound has folded them into the shapes).
    let symbols = if opts.inputs.is_empty() && (opts.dims.is_empty() || !opts.gears.is_empty()) {
        model.graph.symbols()
    } else {
        parse(bytes, &OnnxOptions::default())
            .map(|m| m.graph.symbols())
            .unwrap_or_default()
    };
    let weight_bytes = model.weights_bytes;
    let mut warnings = typos(&model.graph, &symbols, opts);
    if !opts.gears.is_empty() {
        let dim = gears::batch_dim(&model.graph, opts.batch_dim.as_deref())?;
        let (dims, mut bind) = gear_dims(&model.graph, &dim, opts);
        warnings.append(&mut bind);
        // the symbolic import's warnings do not apply to the gears (expand keeps the first
        // gear's)
        let mut lowered = gears::expand_with(&opts.gears, &dim, |g| {
            let mut d = dims.clone();
            d.insert(dim.clone(), g);
            let m = with(&d)?;
            lower_model(&m, &d, opts)
        })?;
        warnings.append(&mut lowered.warnings);
        lowered.warnings = warnings;
        note_fused(&mut lowered, opts, fused.take());
        return Ok(Loaded {
            format: Format::Onnx,
            graph: Some(model.graph),
            lowered,
            symbols,
            dims,
            weight_bytes,
            gears: Some((dim, sorted(&opts.gears))),
            #[cfg(feature = "tflite")]
            tflite: None,
            diagnostics: Vec::new(),
        });
    }
    let (mut dims, mut bind) = model.graph.bind_unbound_to_one(&opts.dims);
    let mut diagnostics = Vec::new();
    let (graph, mut lowered) = if bind.is_empty() {
        let l = lower_model(&model, &dims, opts)?;
        (model.graph, l)
    } else {
        // shape arithmetic over a symbolic dim may not resolve (magika's tensors would be
        // planned as 0 bytes): import again with the dims bound; its warnings replace the
        // symbolic import's
        match with(&dims).and_then(|m| {
            let l = lower_model(&m, &dims, opts)?;
            Ok((m.graph, l))
        }) {
            Ok(built) => built,
            Err(error) => {
                // a default of 1 is impossible (a Reshape that cannot split the elements):
                // keep the model with those dims unbound (the tensors they size are of
                // unknown size) and name them, so that a front end can ask for values
                let defaulted: Vec<&String> = dims
                    .keys()
                    .filter(|k| !opts.dims.contains_key(*k))
                    .collect();
                let alone = |d: &String| {
                    let mut one = opts.dims.clone();
                    one.insert(d.clone(), 1);
                    with(&one).and_then(|m| lower_model(&m, &one, opts))
                };
                let mut at_fault: Vec<String> = defaulted
                    .iter()
                    .filter(|d| alone(d).is_err())
                    .map(|d| (*d).clone())
                    .collect();
                if at_fault.is_empty() {
                    at_fault = defaulted.iter().map(|d| (*d).clone()).collect();
                }
                let mut kept = dims.clone();
                kept.retain(|k, _| !at_fault.contains(k));
                let m = with(&kept).map_err(|_| error.clone())?;
                let l = lower_model(&m, &kept, opts).map_err(|_| error.clone())?;
                bind.retain(|w| {
                    !at_fault
                        .iter()
                        .any(|d| w.contains(&alloc::format!("'{d}'")))
                });
                diagnostics = at_fault
                    .into_iter()
                    .map(|d| Diagnostic {
                        setting: Setting::Dim(d),
                        error: error.clone(),
                    })
                    .collect();
                dims = kept;
                (m.graph, l)
            }
        }
    };
    warnings.append(&mut bind);
    warnings.append(&mut lowered.warnings);
    lowered.warnings = warnings;
    note_fused(&mut lowered, opts, fused.take());
    Ok(Loaded {
        format: Format::Onnx,
        graph: Some(graph),
        lowered,
        symbols,
        dims,
        weight_bytes,
        gears: None,
        #[cfg(feature = "tflite")]
        tflite: None,
        diagnostics,
    })
}

#[cfg(not(feature = "onnx"))]
fn load_onnx(_: &str, _: &[u8], _: &LoadOptions) -> Result<Loaded> {
    Err(Error::bad_option(
        "this build reads no ONNX (memplan-core without its `onnx` feature)",
    ))
}

/// A `.tflite` model: symbolic dims (`shape_signature` -1) the user leaves unbound take the
/// value of the file's `shape`, which is what TFLM allocates (a warning each). Every buffer's
/// size is TFLM's: the tensor's bytes rounded up to 16 (`micro_allocator.cc` `CreatePlan`:
/// `AlignSizeUp(bytes, MicroArenaBufferAlignment())`, what its planner is given), so the lower
/// bound and the no-reuse total of every report are TFLM's.
#[cfg(feature = "tflite")]
fn load_tflite(stem: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded> {
    use super::tflite::{parse, TfliteOptions};
    if let Some(name) = opts.inputs.keys().next() {
        return Err(Error::bad_option(alloc::format!(
            "--input {name}=…: whole input shapes apply to ONNX models; a TFLite model's symbolic dims (shape_signature -1) take values with --dim NAME=VALUE"
        )));
    }
    let model = parse(bytes, &TfliteOptions::default())?;
    let mut graph = model.graph;
    if graph.name.is_empty() {
        graph.name = stem.to_string();
    }
    apply_sizes(&mut graph, &opts.sizes)?;
    graph.order = opts.order.unwrap_or(graph.order);
    let (graph, fused) = rewrite::fuse(&graph, &opts.fuse)?;
    let symbols = graph.symbols();
    let mut warnings = typos(&graph, &symbols, opts);
    let mut dims = opts.dims.clone();
    let mut bind = Vec::new();
    let batch = if opts.gears.is_empty() {
        None
    } else {
        Some(gears::batch_dim(&graph, opts.batch_dim.as_deref())?)
    };
    let mut taken = Vec::new();
    for (name, &v) in &model.file_dims {
        if !dims.contains_key(name) && batch.as_ref() != Some(name) {
            dims.insert(name.clone(), v);
            taken.push(alloc::format!("{name}={v}"));
        }
    }
    if !taken.is_empty() {
        bind.push(alloc::format!(
            "symbolic dims (shape_signature -1) not bound take the file's shape, what TFLM allocates: {} (bind them with --dim NAME=VALUE)",
            taken.join(", ")
        ));
    }
    warnings.append(&mut bind);
    warnings.extend(model.warnings);
    let (gear_info, mut lowered) = match batch {
        None => (None, lower(&graph, &dims, opts)?),
        Some(dim) => {
            dims.remove(&dim);
            let l = gears::expand(&graph, &dims, &dim, &opts.gears)?;
            (Some((dim, sorted(&opts.gears))), l)
        }
    };
    for b in &mut lowered.problem.buffers {
        b.size = crate::error::round_up(
            b.size,
            super::tflite::TFLM_ALIGNMENT,
            alloc::format!("TFLM size of '{}'", b.name),
        )?;
    }
    warnings.append(&mut lowered.warnings);
    // TFLM's buffer order (its greedy planner breaks size ties by it) and the file's pins
    warnings.extend(super::tflm_order::to_tflm(&mut lowered, &model.info));
    lowered.warnings = warnings;
    note_fused(&mut lowered, opts, fused);
    Ok(Loaded {
        format: Format::Tflite,
        weight_bytes: model.weight_bytes,
        graph: Some(graph),
        lowered,
        symbols,
        dims,
        gears: gear_info,
        tflite: Some(model.info),
        diagnostics: Vec::new(),
    })
}

#[cfg(not(feature = "tflite"))]
fn load_tflite(_: &str, _: &[u8], _: &LoadOptions) -> Result<Loaded> {
    Err(Error::bad_option(
        "this build reads no TFLite (memplan-core without its `tflite` feature)",
    ))
}

/// Lowers an imported model; the import's warnings first, then the lowering's.
#[cfg(feature = "onnx")]
fn lower_model(m: &super::onnx::OnnxModel, dims: &Bindings, opts: &LoadOptions) -> Result<Lowered> {
    let mut l = lower(&m.graph, dims, opts)?;
    let mut w = m.warnings.clone();
    w.append(&mut l.warnings);
    l.warnings = w;
    Ok(l)
}

fn lower(graph: &Graph, dims: &Bindings, opts: &LoadOptions) -> Result<Lowered> {
    let mut l = graph.lower(dims)?;
    if opts.alias_views {
        l.views = Some(views::alias_views(graph, &mut l)?);
    }
    if opts.in_place.any() {
        let merged = rewrite::in_place(graph, &mut l, &opts.in_place)?;
        l.rewrites = Some(rewrite::RewriteReport {
            in_place: merged,
            ..rewrite::RewriteReport::default()
        });
    }
    Ok(l)
}

/// Records the ops `--fuse` removed in the lowering's report (with those `--in-place` merged).
fn note_fused(l: &mut Lowered, opts: &LoadOptions, fused: Vec<String>) {
    if opts.fuse.any() || opts.in_place.any() {
        let r = l.rewrites.get_or_insert_with(Default::default);
        r.fused = fused;
        r.fuse = opts.fuse.names();
        r.in_place_ops = opts.in_place.names();
    }
}

/// The batch dim, the other dims in force (the user's plus the unbound ones set to 1, without
/// the batch) and the warnings for those set to 1.
fn gear_dims(graph: &Graph, dim: &str, opts: &LoadOptions) -> (Bindings, Vec<String>) {
    let mut given = opts.dims.clone();
    given.insert(dim.to_string(), 1); // placeholder: each gear binds it
    let (mut dims, bind) = graph.bind_unbound_to_one(&given);
    dims.remove(dim);
    (dims, bind)
}

fn sorted(gears: &[u64]) -> Vec<u64> {
    let mut g = gears.to_vec();
    g.sort_unstable();
    g.dedup();
    g
}

/// Warnings for `--input` and `--dim` names the graph does not have: most likely typos.
fn typos(graph: &Graph, symbols: &[String], opts: &LoadOptions) -> Vec<String> {
    let list = |v: &[&str]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut out = Vec::new();
    let input_names: Vec<&str> = graph
        .inputs
        .iter()
        .filter_map(|&t| graph.tensors.get(t.index()).map(|x| x.name.as_str()))
        .collect();
    for name in opts
        .inputs
        .keys()
        .filter(|n| !input_names.contains(&n.as_str()))
    {
        out.push(alloc::format!(
            "--input {name}: the graph has no input '{name}' (it has: {})",
            list(&input_names)
        ));
    }
    let known: Vec<&str> = symbols.iter().map(String::as_str).collect();
    for name in opts.dims.keys().filter(|n| !known.contains(&n.as_str())) {
        out.push(alloc::format!(
            "--dim {name}: the graph has no symbolic dim '{name}' (it has: {})",
            list(&known)
        ));
    }
    out
}

/// Sets the sizes the user gave (`--size NAME=BYTES`) on the graph's tensors.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for a tensor name the graph does not have.
pub fn apply_sizes(graph: &mut Graph, sizes: &BTreeMap<String, u64>) -> Result<()> {
    for (name, &bytes) in sizes {
        let t = graph
            .tensors
            .iter_mut()
            .find(|t| &t.name == name)
            .ok_or_else(|| {
                Error::bad_option(alloc::format!(
                    "--size {name}: the graph has no tensor '{name}'"
                ))
            })?;
        t.bytes = Some(bytes);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onnx_is_told_by_its_first_fields() {
        // ir_version 7, producer_name "pytorch", graph of 2 bytes
        assert!(looks_like_onnx(b"\x08\x07\x12\x07pytorch\x3a\x02\x0a\x00"));
        // cut inside the graph: still ONNX by what was read
        assert!(looks_like_onnx(b"\x08\x07\x12\x07pytorch\x3a\x7f\x0a"));
        // a TFLite header, JSON, nothing, a first field other than ir_version
        assert!(!looks_like_onnx(b"\x1c\0\0\0TFL3\0\0"));
        assert!(!looks_like_onnx(b"{\"format\": 1}"));
        assert!(!looks_like_onnx(b""));
        assert!(!looks_like_onnx(b"\x12\x07pytorch"));
        // ir_version 0 or a field ModelProto does not have
        assert!(!looks_like_onnx(b"\x08\x00\x12\x00"));
        assert!(!looks_like_onnx(b"\x08\x07\x4a\x00"));
    }

    #[test]
    fn sniffs_formats() {
        assert_eq!(Format::sniff(b"  \n{\"format\":1}"), Format::GraphJson);
        assert_eq!(Format::sniff(b"\xEF\xBB\xBF{}"), Format::GraphJson);
        assert_eq!(Format::sniff(b"id,lower,upper,size\n"), Format::Csv);
        assert_eq!(Format::sniff(b"lower,upper,size,id\n"), Format::Csv);
        assert_eq!(Format::sniff(b"\x08\x07\x12\x07pytorch"), Format::Onnx);
        assert_eq!(Format::sniff(b""), Format::Onnx);
        assert_eq!(Format::sniff(b"[[[1]]]"), Format::GraphJson);
        assert_eq!(Format::sniff(b"\x1c\0\0\0TFL3\0\0"), Format::Tflite);
        assert_eq!(Format::detect("m.TFLite", b"{}"), Format::Tflite);
    }

    #[test]
    fn a_gear_listed_twice_is_refused() {
        let opts = LoadOptions {
            gears: alloc::vec![1, 4, 1],
            ..LoadOptions::default()
        };
        let e = load("g.json", b"{}", &opts).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::BadOption);
        assert!(e.to_string().contains("--batch lists gear 1 twice"), "{e}");
    }

    #[test]
    fn a_dim_bound_to_zero_is_refused() {
        // a crafted link or a library caller: every tensor using it would plan as empty
        let mut opts = LoadOptions::default();
        opts.dims.insert("batch".into(), 0);
        let e = load("g.json", b"{}", &opts).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::BadOption);
        assert!(
            e.to_string()
                .contains("--dim batch=0: a symbolic dim must be at least 1"),
            "{e}"
        );
    }

    #[cfg(feature = "serde")]
    #[test]
    fn a_graph_with_no_ops_is_refused_by_the_pipeline() {
        // the reviewer's no_ops.json with x as the output too (the page loads through here)
        let json = br#"{"format": "memplan.graph/1", "tensors": [{"name": "x", "bytes": 64}],
            "ops": [], "inputs": ["x"], "outputs": ["x"]}"#;
        let e = load("p.json", json, &LoadOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the graph has no ops: nothing runs, so there is nothing to plan"
        );
    }

    #[test]
    fn a_known_extension_decides_the_format() {
        assert_eq!(Format::detect("garbage.csv", b"garbage\n"), Format::Csv);
        assert_eq!(Format::detect("deep.json", b"[[[[]]]]"), Format::GraphJson);
        assert_eq!(Format::detect("M.ONNX", b"{\"format\":1}"), Format::Onnx);
        assert_eq!(Format::detect("x.Csv", b"{}"), Format::Csv);
        // no extension, or one we do not know (URL loads): the content decides
        assert_eq!(
            Format::detect("model", b"id,lower,upper,size\n"),
            Format::Csv
        );
        assert_eq!(Format::detect("model?raw=1", b"{}"), Format::GraphJson);
        assert_eq!(Format::detect("a.txt", b"\x08\x07"), Format::Onnx);
    }

    #[test]
    fn a_bare_buffer_list_takes_no_gears_and_is_named_by_its_stem() {
        let csv = b"id,lower,upper,size\na,0,2,4\n";
        let l = load("dir/five.csv", csv, &LoadOptions::default()).unwrap();
        assert_eq!(l.format, Format::Csv);
        assert_eq!(l.lowered.problem.name, "five");
        assert_eq!(l.lowered.problem.buffers.len(), 1);
        let opts = LoadOptions {
            gears: alloc::vec![1, 2],
            ..LoadOptions::default()
        };
        assert!(load("five.csv", csv, &opts).is_err());
        // graph settings change nothing on a buffer list: said, not ignored
        let opts = LoadOptions {
            dims: Bindings::from([(String::from("batch"), 4)]),
            ..LoadOptions::default()
        };
        let l = load("five.csv", csv, &opts).unwrap();
        assert_eq!(
            l.lowered.warnings,
            ["--dim has no effect on a buffer list (CSV): it has sizes and live ranges, no graph"]
        );
        assert!(load("e.csv", b" \n", &LoadOptions::default())
            .unwrap_err()
            .to_string()
            .contains("empty file"));
    }
}
