//! TensorFlow Lite flatbuffers (`.tflite`, file identifier `TFL3`, root table `Model`) under
//! TensorFlow Lite for Microcontrollers' (TFLM) memory rules.
//!
//! The file is read with `planus` from the trimmed schema beside this module (`schema.fbs`,
//! field ids those of TFLite's `tensorflow/compiler/mlir/lite/schema/schema.fbs`; regenerate
//! with `scripts/tflite-schema.sh`). Every access is bounds-checked by planus: a hostile file
//! gives an [`Error`], never a panic.
//!
//! What the [`Graph`] holds (TFLM: `micro_allocator.cc`, `micro_allocation_info.cc`):
//! - every tensor of every subgraph, in subgraph order: [`TensorId`] `g` is the position `g`
//!   of TFLM's offline-plan array (all tensors of all subgraphs in order; [`TfliteInfo::origin`]
//!   gives its subgraph and index);
//! - a tensor whose buffer holds data (`data` non-empty, or `offset`/`size` past the
//!   flatbuffer in files over 2 GB) is a weight: counted in the weight bytes, not planned;
//! - `is_variable` tensors live in TFLM's persistent tail: not planned, reported in
//!   [`TfliteInfo::persistent`];
//! - the ops are TFLM's *allocation scopes*: subgraph 0 is walked with IF (then, else), WHILE
//!   (cond, body) and CALL_ONCE (init) bodies walked inline where the op runs, as
//!   `AllocationInfoBuilder::MarkAllocationLifetimes` does (tflite-micro PR #947). A tensor is
//!   created at the scope of its first writer (subgraph inputs at their subgraph's start) and
//!   lives to the scope of its last use (closed intervals; subgraph outputs to the end of
//!   their subgraph; a control-flow op's inputs and outputs to the end of its last body). The
//!   generic lowering ([`Graph::lower`]) then gives each tensor exactly TFLM's
//!   `[first_created, last_used]`: each op of the graph is one scope, a subgraph's start scope
//!   is merged into the next scope unless a tensor's life ends there (merging a scope whose
//!   live set the next one contains changes no overlap).
//!
//! Sizes are TFLM's (`memory_helpers.cc` `TfLiteTypeSizeOf`): INT4 takes one byte per element
//! (TFLM unpacks it); types TFLM cannot size (STRING, VARIANT, INT2, UINT4, FLOAT8) leave the
//! tensor of unknown size, with the reason. `shape_signature` -1 is a symbolic dim (`batch` on
//! axis 0, `TENSOR axis N` elsewhere); unbound, it takes the value of `shape`, which is what
//! TFLM allocates ([`TfliteModel::file_dims`]). [`Graph::lower`] gives each buffer its tensor's
//! bytes; the load pipeline ([`crate::import::load`]) then rounds them up to 16 as TFLM's
//! `CreatePlan` does, so its bounds are TFLM's.
//!
//! Scratch buffers are requested by kernels at `Prepare` and are not in the file. Those of
//! TFLM's reference kernels are sized from a per-kernel table (`scratch.rs`) and become the
//! workspaces of their op ([`Op::workspace_bytes`]): the lowering appends them after every
//! tensor, live during their op, as TFLM does, so `tflm-greedy` gives TFLM's head. Ops whose
//! scratch cannot be sized are named in a warning and in [`TfliteInfo::scratch_ops`].
//! CMSIS-NN and Xtensa kernels request other sizes.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::dtype::DType;
use crate::graph::{Bindings, Dim, Graph, Op, Tensor, TensorId};
use crate::plan::{Padding, PlanOptions};
use crate::{Error, Result};

// planus's generated reader and builder use `unsafe` internally (unchecked writes into the
// builder's buffer, trait impls marked unsafe); all reading goes through planus's checked
// accessors.
#[allow(
    unsafe_code,
    missing_docs,
    clippy::all,
    clippy::pedantic,
    unused_imports,
    dead_code,
    unreachable_pub,
    non_camel_case_types
)]
#[rustfmt::skip]
mod generated;
mod names;
pub mod offline;
mod scratch;
#[cfg(test)]
mod tests;
mod walk;

pub use offline::{
    offline_offsets, read_offline_plan, with_offline_plan, OfflinePlan, OFFLINE_PLAN_METADATA,
};
pub use scratch::POINTER_BYTES;
pub use walk::MAX_SCOPES;

use generated::tflite as fb;

/// TFLM's arena alignment: every planned size is rounded up to it (`micro_arena_constants.h`
/// `MicroArenaBufferAlignment()` = 16; `micro_allocator.cc` `CreatePlan`).
pub const TFLM_ALIGNMENT: u64 = 16;

/// TFLM's planning rules as memplan plan options: sizes rounded up to 16 B, no GE padding,
/// graph inputs and outputs planned in the arena and reused like any activation (TFLM keeps
/// them in the head), reuse on. Everything else is [`PlanOptions::default`].
pub fn tflm_plan_options() -> PlanOptions {
    PlanOptions {
        alignment: TFLM_ALIGNMENT,
        padding: Padding::None,
        zero_copy_io: false,
        zero_copy_reuse: false,
        ..PlanOptions::default()
    }
}

/// Settings of the import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TfliteOptions {
    /// Values of symbolic dims (`shape_signature` -1). Dims left out keep their symbol in the
    /// graph; [`TfliteModel::file_dims`] holds the values TFLM would use.
    pub dims: Bindings,
}

/// Where a graph tensor comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorOrigin {
    /// Subgraph index.
    pub subgraph: u32,
    /// Tensor index in that subgraph.
    pub index: u32,
}

/// What a `.tflite` file says beyond its graph: what TFLM's arena needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TfliteInfo {
    /// For each graph tensor (by [`TensorId`], which is the global tensor index: the position
    /// in TFLM's offline-plan array), its subgraph and index.
    pub origin: Vec<TensorOrigin>,
    /// The global index of each subgraph's first tensor; `subgraph_offsets.len()` subgraphs.
    pub subgraph_offsets: Vec<usize>,
    /// Operators in the file, all subgraphs.
    pub operators: usize,
    /// Operators run by one inference as TFLM walks them (subgraph 0 and the bodies of its
    /// control-flow ops, each time it is called).
    pub walked_operators: usize,
    /// `is_variable` tensors: TFLM allocates them in its persistent tail (not planned here).
    pub persistent: Vec<TensorId>,
    /// Bytes of the persistent tensors, each rounded up to 16 B as TFLM allocates them
    /// (`micro_allocator.cc` `AllocateVariables`); `None` when one has an unknown size.
    pub persistent_bytes: Option<u64>,
    /// Ops whose TFLM reference kernel requests scratch buffers in the arena head
    /// (`RequestScratchBufferInArena`), in walk order: each one's requests are the op's
    /// [`Op::workspace_bytes`] in the graph when known. The file does not hold them.
    pub scratch_ops: Vec<ScratchOp>,
    /// The file's `OfflineMemoryAllocation` plan, if it has one (validated).
    pub offline_plan: Option<OfflinePlan>,
}

/// One op's scratch requests in TFLM's reference kernels (see `scratch.rs` for the table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchOp {
    /// The op's name in the graph.
    pub op: String,
    /// Its type (`SVDF`, ...).
    pub op_type: String,
    /// Bytes of each request in request order, before TFLM's 16 B rounding; empty when
    /// `unknown`.
    pub bytes: Vec<u64>,
    /// The reference kernel's source file that makes the requests.
    pub kernel: String,
    /// Why the sizes are not known (the op's requests are then not planned).
    pub unknown: Option<String>,
}

impl TfliteInfo {
    /// Bytes of all known scratch requests, each rounded up to 16 B as TFLM plans them.
    pub fn scratch_bytes(&self) -> u64 {
        self.scratch_ops
            .iter()
            .flat_map(|s| &s.bytes)
            .map(|&b| b.div_ceil(TFLM_ALIGNMENT).saturating_mul(TFLM_ALIGNMENT))
            .fold(0u64, u64::saturating_add)
    }

    /// Tensors of all subgraphs: the length of an offline plan.
    pub fn tensor_count(&self) -> usize {
        self.origin.len()
    }
}

/// A parsed `.tflite` model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfliteModel {
    /// The graph: every tensor of every subgraph, one op per TFLM allocation scope.
    pub graph: Graph,
    /// What the file says about TFLM's arena.
    pub info: TfliteInfo,
    /// For each symbolic dim, the value of `shape` where `shape_signature` has -1: what TFLM
    /// allocates. Axis-0 -1s share the dim `batch` while their `shape` values agree; a tensor
    /// whose value differs gets its own dim (`TENSOR axis 0`), with a warning.
    pub file_dims: Bindings,
    /// Bytes of weights (buffers with data), the format's own bytes.
    pub weight_bytes: u64,
    /// Warnings: scratch buffers, tensors TFLM cannot size, structure TFLM refuses.
    pub warnings: Vec<String>,
}

/// Reads a `.tflite` flatbuffer into a graph under TFLM's rules (see the module).
///
/// # Errors
/// [`crate::ErrorKind::Parse`] for a file shorter than its header, another file identifier
/// than `TFL3`, a flatbuffer whose tables or vectors point outside the file, or a missing
/// required table; [`crate::ErrorKind::Invalid`] naming the subgraph, op or tensor for an
/// index out of range (tensor, buffer, operator code, subgraph), a negative dim in `shape`,
/// a control-flow op without its subgraph options, cyclic subgraph calls, or calls that
/// unfold into more than [`MAX_SCOPES`] steps.
pub fn parse(bytes: &[u8], opts: &TfliteOptions) -> Result<TfliteModel> {
    let model = read_model(bytes)?;
    let file = File::read(bytes, &model)?;
    file.build(opts)
}

/// Checks the 8-byte header and opens the root table.
pub(crate) fn read_model(bytes: &[u8]) -> Result<fb::ModelRef<'_>> {
    if bytes.len() < 8 {
        return Err(Error::parse(format!(
            "truncated: {} bytes, shorter than a TFLite flatbuffer's 8-byte header (root offset, identifier TFL3)",
            bytes.len()
        )));
    }
    if &bytes[4..8] != b"TFL3" {
        use crate::import::load::{looks_like_onnx, Format};
        // what the file looks like instead: a model or text given the wrong extension
        let hint = if looks_like_onnx(bytes) {
            "; it looks like an ONNX model: rename it to .onnx"
        } else {
            match Format::sniff(bytes) {
                Format::GraphJson => {
                    "; it looks like JSON (a memplan.graph/1 graph or a plan): rename it to .json"
                }
                Format::Csv => "; it looks like a buffer list (MiniMalloc CSV): rename it to .csv",
                Format::Onnx | Format::Tflite => "",
            }
        };
        return Err(Error::parse(format!(
            "this is not a TFLite flatbuffer (file identifier {} at bytes 4..8, expected \"TFL3\"){hint}",
            show_ident(&bytes[4..8])
        )));
    }
    <fb::ModelRef<'_> as planus::ReadAsRoot<'_>>::read_as_root(bytes)
        .map_err(|e| flat_err(&e, "the root Model table"))
}

fn show_ident(b: &[u8]) -> String {
    if b.iter().all(|c| c.is_ascii_graphic()) {
        format!("\"{}\"", String::from_utf8_lossy(b))
    } else {
        format!("{b:02x?}")
    }
}

/// A planus error as ours: the file is cut short or its offsets point outside it.
pub(crate) fn flat_err(e: &planus::Error, what: &str) -> Error {
    use planus::errors::ErrorKind as K;
    let why = match e.error_kind {
        K::InvalidOffset | K::InvalidLength => {
            "points outside the file (truncated or corrupt flatbuffer)".to_string()
        }
        K::InvalidUtf8 { .. } => "holds a string that is not UTF-8".to_string(),
        K::MissingRequired => "misses a required field".to_string(),
        K::InvalidVtableLength { length } => format!("has a bad vtable (length {length})"),
        K::UnknownEnumTag { .. } | K::UnknownUnionTag { .. } => "holds an unknown tag".to_string(),
        _ => format!("is malformed ({e})"),
    };
    Error::parse(format!("{what} {why}"))
}

/// Field access with the place named.
macro_rules! get {
    ($e:expr, $what:expr) => {
        $e.map_err(|e| flat_err(&e, &$what))?
    };
}
pub(crate) use get;

/// A name TFLM never reads (a tensor's, a subgraph's) from `got`, the planus getter's answer:
/// a string that is not UTF-8 is read again by hand and shown lossily (U+FFFD for each bad
/// sequence; `""`, then named by index, if it cannot be), and `place` is added to `not_utf8`.
/// Other errors are the file's.
fn lenient_name(
    bytes: &[u8],
    got: core::result::Result<Option<&str>, planus::Error>,
    field: usize,
    place: String,
    not_utf8: &mut Vec<String>,
) -> Result<String> {
    match got {
        Ok(name) => Ok(name.unwrap_or("").to_string()),
        Err(e) if matches!(e.error_kind, planus::errors::ErrorKind::InvalidUtf8 { .. }) => {
            not_utf8.push(place);
            Ok(raw_string(bytes, e.source_location.byte_offset, field)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default())
        }
        Err(e) => Err(flat_err(&e, &place)),
    }
}

/// The bytes of the string field `field` (its schema id) of the flatbuffer table at position
/// `table` of `bytes`, read by hand (planus hands out UTF-8 strings only): the table's i32
/// offset back to its vtable, the field's u16 slot there, the u32 offset forward to the
/// string, its u32 length. `None` when any of it points outside the file.
fn raw_string(bytes: &[u8], table: usize, field: usize) -> Option<&[u8]> {
    let word = |p: usize| -> Option<u32> {
        let w = bytes.get(p..p.checked_add(4)?)?;
        Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let half = |p: usize| -> Option<usize> {
        let w = bytes.get(p..p.checked_add(2)?)?;
        Some(usize::from(u16::from_le_bytes([w[0], w[1]])))
    };
    // soffset: vtable = table - soffset (flatbuffers' signed offset)
    let back = i64::from(i32::from_le_bytes(word(table)?.to_le_bytes()));
    let vtable = usize::try_from(i64::try_from(table).ok()?.checked_sub(back)?).ok()?;
    let slot = 4usize.checked_add(field.checked_mul(2)?)?;
    if slot.checked_add(2)? > half(vtable)? {
        return None; // the vtable ends before the field
    }
    let at = match half(vtable.checked_add(slot)?)? {
        0 => return None,
        f => table.checked_add(f)?,
    };
    let start = at.checked_add(usize::try_from(word(at)?).ok()?)?;
    let len = usize::try_from(word(start)?).ok()?;
    let from = start.checked_add(4)?;
    bytes.get(from..from.checked_add(len)?)
}

/// A tensor as the file gives it.
struct FileTensor {
    name: String,
    shape: Vec<i32>,
    signature: Option<Vec<i32>>,
    ty: i8,
    buffer: u32,
    variable: bool,
}

/// An operator as the file gives it.
pub(crate) struct FileOp {
    pub(crate) code: usize,
    /// Inputs, -1 = omitted.
    pub(crate) inputs: Vec<i32>,
    pub(crate) outputs: Vec<i32>,
    pub(crate) intermediates: Vec<i32>,
    /// Subgraphs it calls (IF then/else, WHILE cond/body, CALL_ONCE init), in call order.
    pub(crate) calls: Vec<usize>,
}

pub(crate) struct FileSubgraph {
    name: String,
    tensors: Vec<FileTensor>,
    pub(crate) inputs: Vec<i32>,
    pub(crate) outputs: Vec<i32>,
    pub(crate) ops: Vec<FileOp>,
}

struct OpCode {
    /// `max(builtin_code, deprecated_builtin_code)`.
    code: i32,
    name: String,
}

/// The tables memplan reads, checked.
pub(crate) struct File {
    codes: Vec<OpCode>,
    /// Per buffer: bytes of data (0 = none).
    buffer_bytes: Vec<u64>,
    pub(crate) subgraphs: Vec<FileSubgraph>,
    offline_plan: Option<OfflinePlan>,
    /// Where a name is not UTF-8 (`subgraph 0 tensor 3`): shown lossily, with a warning.
    not_utf8: Vec<String>,
}

/// TFLite `BuiltinOperator` codes memplan names.
mod code {
    pub(super) const IF: i32 = 118;
    pub(super) const WHILE: i32 = 119;
    pub(super) const CALL_ONCE: i32 = 129;
    pub(super) const CUSTOM: i32 = 32;
}

/// The name of a `BuiltinOperator` code (`CODE_123` for a code newer than the schema).
fn op_name(code: i32) -> String {
    names::BUILTIN_OPERATORS
        .iter()
        .find(|(c, _)| *c == code)
        .map_or_else(|| format!("CODE_{code}"), |(_, n)| (*n).to_string())
}

/// The name of a `TensorType` code.
fn type_name(ty: i8) -> String {
    names::TENSOR_TYPES
        .iter()
        .find(|(c, _)| *c == ty)
        .map_or_else(|| format!("TYPE_{ty}"), |(_, n)| (*n).to_string())
}

/// How TFLM sizes a tensor type (`memory_helpers.cc` `TfLiteTypeSizeOf`): the dtype whose
/// element size is TFLM's, or `None` when TFLM has no size for it (its `AllocateTensors`
/// fails on such a tensor). INT4 is one byte per element; RESOURCE four.
fn tflm_dtype(ty: i8) -> Option<DType> {
    Some(match ty {
        0 => DType::Float32,
        1 => DType::Float16,
        2 | 13 => DType::Int32, // INT32, RESOURCE (sizeof(int32_t))
        3 => DType::Uint8,
        4 => DType::Int64,
        6 => DType::Bool,
        7 => DType::Int16,
        8 => DType::Complex64,
        9 | 17 => DType::Int8, // INT8, INT4 (sizeof(int8_t): TFLM unpacks int4)
        10 => DType::Float64,
        11 => DType::Complex128,
        12 => DType::Uint64,
        15 => DType::Uint32,
        16 => DType::Uint16,
        18 => DType::Bfloat16,
        _ => return None, // STRING 5, VARIANT 14, INT2 19, UINT4 20, FLOAT8 21/22, unknown
    })
}

impl File {
    pub(crate) fn read(bytes: &[u8], model: &fb::ModelRef<'_>) -> Result<File> {
        let mut codes = Vec::new();
        if let Some(list) = get!(model.operator_codes(), "Model.operator_codes") {
            for (i, c) in list.iter().enumerate() {
                let what = format!("operator code {i}");
                let c = get!(c, what);
                let builtin = get!(c.builtin_code(), what);
                let deprecated = i32::from(get!(c.deprecated_builtin_code(), what));
                let code = builtin.max(deprecated);
                let name = match get!(c.custom_code(), what) {
                    Some(custom) if code == code::CUSTOM && !custom.is_empty() => {
                        custom.to_string()
                    }
                    _ => op_name(code),
                };
                codes.push(OpCode { code, name });
            }
        }
        let mut buffer_bytes = Vec::new();
        if let Some(list) = get!(model.buffers(), "Model.buffers") {
            for (i, b) in list.iter().enumerate() {
                let what = format!("buffer {i}");
                let b = get!(b, what);
                let data = get!(b.data(), what).map_or(0, <[u8]>::len) as u64;
                let offset = get!(b.offset(), what);
                let size = get!(b.size(), what);
                // files over 2 GB keep data past the flatbuffer: offset from the file start,
                // valid when > 1 (schema.fbs)
                let outside = if offset > 1 {
                    if offset
                        .checked_add(size)
                        .is_none_or(|end| end > bytes.len() as u64)
                    {
                        return Err(Error::invalid(format!(
                            "offset {offset} + size {size} lies outside the file ({} bytes)",
                            bytes.len()
                        ))
                        .at(what));
                    }
                    size
                } else {
                    0
                };
                buffer_bytes.push(data.max(outside));
            }
        }
        let list = get!(model.subgraphs(), "Model.subgraphs")
            .ok_or_else(|| Error::invalid("the model has no subgraphs (Model.subgraphs)"))?;
        if list.is_empty() {
            return Err(Error::invalid(
                "the model has no subgraphs (Model.subgraphs)",
            ));
        }
        let n_subgraphs = list.len();
        let mut subgraphs = Vec::with_capacity(n_subgraphs);
        // TFLM reads no tensor or subgraph name: one that is not UTF-8 is shown lossily
        // (schema.fbs field ids: SubGraph.name 4, Tensor.name 3)
        let mut not_utf8 = Vec::new();
        for (s, sg) in list.iter().enumerate() {
            let at = format!("subgraph {s}");
            let sg = get!(sg, at);
            let name = lenient_name(bytes, sg.name(), 4, at.clone(), &mut not_utf8)?;
            let mut tensors = Vec::new();
            for (t, tensor) in get!(sg.tensors(), at).into_iter().flatten().enumerate() {
                let at = format!("subgraph {s} tensor {t}");
                let tensor = get!(tensor, at);
                let tname = lenient_name(bytes, tensor.name(), 3, at, &mut not_utf8)?;
                let at = format!("subgraph {s} tensor {t} '{tname}'");
                let shape: Vec<i32> = get!(tensor.shape(), at)
                    .map(|v| v.iter().collect())
                    .unwrap_or_default();
                if let Some(d) = shape.iter().find(|&&d| d < 0) {
                    return Err(Error::invalid(format!(
                        "dim {d} in shape {shape:?} (TFLM multiplies shape's dims; -1 belongs in shape_signature)"
                    ))
                    .at(at));
                }
                let signature: Option<Vec<i32>> =
                    get!(tensor.shape_signature(), at).map(|v| v.iter().collect());
                let buffer = get!(tensor.buffer(), at);
                if buffer as usize >= buffer_bytes.len() {
                    return Err(Error::invalid(format!(
                        "buffer {buffer} out of range ({} buffers)",
                        buffer_bytes.len()
                    ))
                    .at(at));
                }
                tensors.push(FileTensor {
                    name: tname,
                    shape,
                    signature,
                    ty: get!(tensor.type_(), at),
                    buffer,
                    variable: get!(tensor.is_variable(), at),
                });
            }
            let n = tensors.len();
            let check = |list: &[i32], what: &str, omitted_ok: bool| -> Result<()> {
                for &t in list {
                    if !(t >= 0 && (t as usize) < n || omitted_ok && t == -1) {
                        return Err(Error::invalid(format!(
                            "{what} names tensor {t}, out of range ({n} tensors)"
                        ))
                        .at(format!("subgraph {s}")));
                    }
                }
                Ok(())
            };
            let ints = |v: Option<planus::Vector<'_, i32>>| -> Vec<i32> {
                v.map(|v| v.iter().collect()).unwrap_or_default()
            };
            let inputs = ints(get!(sg.inputs(), at));
            let outputs = ints(get!(sg.outputs(), at));
            check(&inputs, "the subgraph's inputs", false)?;
            check(&outputs, "the subgraph's outputs", false)?;
            let mut ops = Vec::new();
            for (k, op) in get!(sg.operators(), at).into_iter().flatten().enumerate() {
                let at = format!("subgraph {s} op {k}");
                let op = get!(op, at);
                let code = get!(op.opcode_index(), at) as usize;
                if code >= codes.len() {
                    return Err(Error::invalid(format!(
                        "opcode_index {code} out of range ({} operator codes)",
                        codes.len()
                    ))
                    .at(at));
                }
                let inputs = ints(get!(op.inputs(), at));
                let outputs = ints(get!(op.outputs(), at));
                let intermediates = ints(get!(op.intermediates(), at));
                let what = format!("op {k} ({})", codes[code].name);
                check(&inputs, &format!("{what}: an input"), true)?;
                check(&outputs, &format!("{what}: an output"), false)?;
                check(&intermediates, &format!("{what}: an intermediate"), false)?;
                let opcode = codes[code].code;
                let (tag, fields): (u8, &[&str]) = match opcode {
                    code::IF => (names::TAG_IF_OPTIONS, &["then", "else"]),
                    code::WHILE => (names::TAG_WHILE_OPTIONS, &["cond", "body"]),
                    code::CALL_ONCE => (names::TAG_CALL_ONCE_OPTIONS, &["init"]),
                    _ => (0, &[]),
                };
                let mut calls = Vec::new();
                if !fields.is_empty() {
                    let got = get!(op.builtin_options_tag(), at);
                    let options = get!(op.builtin_options(), at);
                    let Some(options) = options.filter(|_| got == tag) else {
                        return Err(Error::invalid(format!(
                            "{} without its options (builtin_options tag {got}, expected {tag}): TFLM reads its subgraph indices there",
                            codes[code].name
                        ))
                        .at(at));
                    };
                    let idx = [
                        get!(options.first_subgraph_index(), at),
                        get!(options.second_subgraph_index(), at),
                    ];
                    for (field, &i) in fields.iter().zip(&idx) {
                        if i < 0 || i as usize >= n_subgraphs {
                            return Err(Error::invalid(format!(
                                "{} calls subgraph {i} ({field}_subgraph_index), out of range ({n_subgraphs} subgraphs)",
                                codes[code].name
                            ))
                            .at(at));
                        }
                        calls.push(i as usize);
                    }
                }
                ops.push(FileOp {
                    code,
                    inputs,
                    outputs,
                    intermediates,
                    calls,
                });
            }
            subgraphs.push(FileSubgraph {
                name,
                tensors,
                inputs,
                outputs,
                ops,
            });
        }
        let total: usize = subgraphs.iter().map(|s| s.tensors.len()).sum();
        let offline_plan = offline::read_in(bytes, model, total)?;
        Ok(File {
            codes,
            buffer_bytes,
            subgraphs,
            offline_plan,
            not_utf8,
        })
    }

    fn op_type(&self, op: &FileOp) -> &str {
        &self.codes[op.code].name
    }

    fn build(&self, opts: &TfliteOptions) -> Result<TfliteModel> {
        let mut warnings = Vec::new();
        if let Some(first) = self.not_utf8.first() {
            warnings.push(format!(
                "{} name(s) are not UTF-8 ({first} first): shown with U+FFFD for the bad bytes (TFLM reads no tensor or subgraph name)",
                self.not_utf8.len()
            ));
        }
        // global tensor indices
        let mut subgraph_offsets = Vec::with_capacity(self.subgraphs.len());
        let mut origin = Vec::new();
        for (s, sg) in self.subgraphs.iter().enumerate() {
            subgraph_offsets.push(origin.len());
            // flatbuffer vectors have u32 lengths: both fit
            for t in 0..sg.tensors.len() {
                origin.push(TensorOrigin {
                    subgraph: u32::try_from(s).unwrap_or(u32::MAX),
                    index: u32::try_from(t).unwrap_or(u32::MAX),
                });
            }
        }
        let global = |s: usize, t: i32| subgraph_offsets[s] + t as usize;
        let file_tensor = |g: usize| {
            let o = origin[g];
            &self.subgraphs[o.subgraph as usize].tensors[o.index as usize]
        };

        // tensors
        let mut file_dims = Bindings::new();
        let mut tensors = Vec::with_capacity(origin.len());
        let mut used_names = BTreeSet::new();
        let mut weight_bytes = 0u64;
        let mut persistent = Vec::new();
        for (g, &o) in origin.iter().enumerate() {
            let ft = file_tensor(g);
            let base = match (o.subgraph, ft.name.is_empty()) {
                (0, false) => ft.name.clone(),
                (0, true) => format!("tensor {}", o.index),
                (s, _) => {
                    let sg = &self.subgraphs[s as usize].name;
                    let sg = if sg.is_empty() {
                        format!("subgraph {s}")
                    } else {
                        sg.clone()
                    };
                    if ft.name.is_empty() {
                        format!("{sg}/tensor {}", o.index)
                    } else {
                        format!("{sg}/{}", ft.name)
                    }
                }
            };
            let name = if used_names.contains(&base) {
                format!("{base} #{g}")
            } else {
                base
            };
            used_names.insert(name.clone());
            let data = self.buffer_bytes[ft.buffer as usize];
            let mut tensor = Tensor {
                name,
                ..Tensor::default()
            };
            if data > 0 {
                tensor.constant = true;
                tensor.bytes = Some(data);
                tensor.dtype = tflm_dtype(ft.ty);
                tensor.shape = Some(ft.shape.iter().map(|&d| Dim::Known(d as u64)).collect());
                weight_bytes = crate::error::add(weight_bytes, data, "weight bytes")?;
                tensors.push(tensor);
                continue;
            }
            let mut shape = Vec::with_capacity(ft.shape.len());
            for (axis, &d) in ft.shape.iter().enumerate() {
                let sig = ft.signature.as_ref().and_then(|s| s.get(axis)).copied();
                if sig == Some(-1) {
                    let own = format!("{} axis {axis}", tensor.name);
                    let mut sym = if axis == 0 {
                        String::from("batch")
                    } else {
                        own.clone()
                    };
                    match file_dims.get(&sym) {
                        Some(&v) if v != d as u64 => {
                            // TFLM allocates every tensor's own `shape`, and TFLite's -1s are
                            // independent: this tensor keeps its value under its own dim
                            warnings.push(format!(
                                "dim 'batch': tensor '{}' has {d} in its shape where another has {v}; it gets its own dim '{own}' = {d}, what TFLM allocates",
                                tensor.name
                            ));
                            sym = own;
                            file_dims.insert(sym.clone(), d as u64);
                        }
                        Some(_) => {}
                        None => {
                            file_dims.insert(sym.clone(), d as u64);
                        }
                    }
                    shape.push(match opts.dims.get(&sym) {
                        Some(&v) => Dim::Known(v),
                        None => Dim::Sym(sym),
                    });
                } else {
                    shape.push(Dim::Known(d as u64));
                }
            }
            tensor.shape = Some(shape);
            match tflm_dtype(ft.ty) {
                Some(dt) => tensor.dtype = Some(dt),
                None => {
                    tensor.unknown_cause = Some(format!(
                        "TFLM has no size for TensorType {} (memory_helpers.cc TfLiteTypeSizeOf): its AllocateTensors fails on this tensor",
                        type_name(ft.ty)
                    ));
                }
            }
            if ft.variable {
                persistent.push(TensorId::new(g));
            }
            tensors.push(tensor);
        }

        // TFLM's allocation scopes, then the ops of the graph
        let w = walk::walk(&self.subgraphs, &subgraph_offsets, &|s, k| {
            self.op_type(&self.subgraphs[s].ops[k]).to_string()
        })?;
        let dims = file_dims_or(&opts.dims, &file_dims);
        let mut persistent_bytes = Some(0u64);
        for &t in &persistent {
            persistent_bytes = match (persistent_bytes, tensors[t].size(&dims)) {
                (Some(sum), Ok(Some(b))) => {
                    let b = crate::error::round_up(b, TFLM_ALIGNMENT, "variable tensor")?;
                    Some(crate::error::add(sum, b, "persistent bytes")?)
                }
                _ => None,
            };
        }
        // TFLM's needs_allocating: no data, not a variable, not empty (micro_allocation_info.cc)
        let empty: Vec<bool> = tensors
            .iter()
            .map(|t| matches!(t.size(&dims), Ok(Some(0))))
            .collect();
        // an intermediate no op reads or writes is not planned (TFLM refuses a non-empty one)
        let mut lone_intermediate = alloc::vec![false; tensors.len()];
        for (s, sg) in self.subgraphs.iter().enumerate() {
            for op in &sg.ops {
                for &t in &op.intermediates {
                    let g = global(s, t);
                    lone_intermediate[g] = w.first[g].is_none() && w.last[g].is_none();
                }
            }
        }
        let planned = |g: usize| {
            tensors[g].bytes.is_none()
                && !file_tensor(g).variable
                && !empty[g]
                && !lone_intermediate[g]
        };
        let (mut ops, inputs, outputs, op_of_walked) =
            self.scope_ops(&w, &subgraph_offsets, &planned, &mut warnings)?;

        // intermediates: TFLM refuses non-empty ones (micro_allocation_info.cc ValidateSubgraph)
        for (s, sg) in self.subgraphs.iter().enumerate() {
            for (k, op) in sg.ops.iter().enumerate() {
                for &t in &op.intermediates {
                    let g = global(s, t);
                    if !matches!(
                        tensors[g].size(&file_dims_or(&opts.dims, &file_dims)),
                        Ok(Some(0))
                    ) {
                        warnings.push(format!(
                            "subgraph {s} op {k} ({}): intermediate tensor '{}' is not empty: TFLM refuses the model (\"Does not support intermediate tensor with non-zero size\"); it is not planned here",
                            self.op_type(op),
                            tensors[g].name
                        ));
                    }
                }
            }
        }

        // scratch buffers: TFLM's reference kernels' requests, as workspaces of their op
        let mut calls = alloc::collections::BTreeMap::new();
        for (_, s, k) in &w.op_names {
            *calls.entry((*s, *k)).or_insert(0usize) += 1;
        }
        let mut scratch_ops = Vec::new();
        for (i, (name, s, k)) in w.op_names.iter().enumerate() {
            let op = &self.subgraphs[*s].ops[*k];
            let ty = self.op_type(op);
            let facts = |list: &[i32]| -> Vec<Option<scratch::TensorFacts>> {
                list.iter()
                    .map(|&t| {
                        (t >= 0).then(|| {
                            let g = global(*s, t);
                            scratch::TensorFacts {
                                dims: tensors[g].bound_shape(&dims),
                                ty: file_tensor(g).ty,
                            }
                        })
                    })
                    .collect()
            };
            let (bytes, kernel, mut unknown) =
                match scratch::requests(ty, &facts(&op.inputs), &facts(&op.outputs)) {
                    scratch::Scratch::None => continue,
                    scratch::Scratch::Known(b, file) => (b, file, None),
                    scratch::Scratch::Unknown(why) => (Vec::new(), "", Some(why)),
                };
            if unknown.is_none() && calls[&(*s, *k)] > 1 {
                // TFLM keeps one scratch buffer per request from the op's first call to its
                // last; per-call workspaces would let other buffers in between
                unknown = Some(format!(
                    "{ty} '{name}' runs {} times (a control-flow body): TFLM keeps its scratch across the calls, which memplan does not model",
                    calls[&(*s, *k)]
                ));
            }
            if unknown.is_none() {
                ops[op_of_walked[i]].workspace_bytes = bytes.clone();
            }
            scratch_ops.push(ScratchOp {
                op: name.clone(),
                op_type: ty.to_string(),
                bytes: if unknown.is_some() { Vec::new() } else { bytes },
                kernel: kernel.to_string(),
                unknown,
            });
        }
        let unknown: Vec<&ScratchOp> = scratch_ops.iter().filter(|s| s.unknown.is_some()).collect();
        if let Some(first) = unknown.first() {
            warnings.push(format!(
                "scratch buffers of {} op(s) are not planned: {} (TFLM's head exceeds these figures by them; tensorflow/tflite-micro#2474)",
                unknown.len(),
                first.unknown.as_deref().unwrap_or_default()
            ));
        }
        let known = scratch_ops.len() - unknown.len();
        if known > 0 {
            let mut kinds: Vec<&str> = Vec::new();
            for s in scratch_ops.iter().filter(|s| s.unknown.is_none()) {
                if !kinds.contains(&s.op_type.as_str()) {
                    kinds.push(&s.op_type);
                }
            }
            let n: usize = scratch_ops.iter().map(|s| s.bytes.len()).sum();
            warnings.push(format!(
                "scratch buffers are not in the file: {n} of TFLM's reference kernels' requests ({known} op(s): {}) are planned as workspaces, live during their op; CMSIS-NN and Xtensa kernels request other sizes",
                kinds.join(", ")
            ));
        }
        if !persistent.is_empty() {
            warnings.push(format!(
                "{} variable tensor(s) live in TFLM's persistent tail ({}), not in the planned head",
                persistent.len(),
                persistent_bytes.map_or_else(|| String::from("size unknown"), |b| format!("{b} B"))
            ));
        }

        let name = self.subgraphs[0].name.clone();
        Ok(TfliteModel {
            graph: Graph {
                name,
                tensors,
                ops,
                inputs,
                outputs,
                order: crate::graph::ScheduleOrder::File,
            },
            info: TfliteInfo {
                origin,
                subgraph_offsets,
                operators: self.subgraphs.iter().map(|s| s.ops.len()).sum(),
                walked_operators: w.op_names.len(),
                persistent,
                persistent_bytes,
                scratch_ops,
                offline_plan: self.offline_plan.clone(),
            },
            file_dims,
            weight_bytes,
            warnings,
        })
    }

    /// The graph's ops from TFLM's scopes (see the module): one op per kept scope; with the
    /// graph inputs and outputs, and the graph op of each walked op.
    ///
    /// Tensors TFLM plans that the walk never creates (read before any write, or never used:
    /// TFLM's `first_created` = -1, the time before scope 0) are created at scope 0 here, with
    /// subgraph 0's inputs: the same overlaps as TFLM's, but for never-used ones also meeting
    /// the inputs (a plan can only grow by it); a warning says so.
    #[allow(clippy::type_complexity)]
    fn scope_ops(
        &self,
        w: &walk::Walk,
        offsets: &[usize],
        planned: &dyn Fn(usize) -> bool,
        warnings: &mut Vec<String>,
    ) -> Result<(Vec<Op>, Vec<TensorId>, Vec<TensorId>, Vec<usize>)> {
        let n = w.first.len();
        let scopes = w.scopes.len();
        let first = |g: usize| w.first[g].unwrap_or(0);
        let last = |g: usize| w.last[g].unwrap_or(0).max(first(g));
        // a scope is its own step if an op runs there, a life ends there, or it is the last;
        // else it joins the next (whose live set holds all of its own)
        let mut ends = alloc::vec![false; scopes];
        for g in (0..n).filter(|&g| planned(g)) {
            ends[last(g)] = true;
        }
        let kept: Vec<usize> = (0..scopes)
            .filter(|&s| w.scopes[s].op.is_some() || ends[s] || s + 1 == scopes)
            .collect();
        let mut step_of = alloc::vec![0usize; scopes];
        let mut next = 0usize;
        for s in (0..scopes).rev() {
            if let Ok(i) = kept.binary_search(&s) {
                next = i;
            }
            step_of[s] = next;
        }
        let mut ops: Vec<Op> = Vec::with_capacity(kept.len());
        let mut op_of_walked = alloc::vec![0usize; w.op_names.len()];
        for &s in &kept {
            let scope = &w.scopes[s];
            let (name, op_type) = match scope.op {
                Some(i) => {
                    op_of_walked[i] = ops.len();
                    let (name, sg, k) = &w.op_names[i];
                    (
                        name.clone(),
                        self.op_type(&self.subgraphs[*sg].ops[*k]).to_string(),
                    )
                }
                None => (
                    format!("(subgraph {} inputs, scope {s})", scope.subgraph),
                    String::from("SubgraphInputs"),
                ),
            };
            ops.push(Op {
                name,
                op_type,
                ..Op::default()
            });
        }
        let mut main_input = alloc::vec![false; n];
        for &t in &self.subgraphs[0].inputs {
            main_input[offsets[0] + t as usize] = true;
        }
        let is_input = |g: usize| w.first[g] == Some(0) && main_input[g];
        let mut inputs = Vec::new();
        let (mut early, mut read_only) = (0usize, 0usize);
        for g in (0..n).filter(|&g| planned(g)) {
            let id = TensorId::new(g);
            if w.first[g].is_none() {
                early += 1;
                read_only += usize::from(w.last[g].is_some());
            }
            if is_input(g) {
                inputs.push(id);
            } else {
                ops[step_of[first(g)]].outputs.push(id);
            }
        }
        // steps only grow with scopes: one mark per tensor keeps an op's inputs distinct
        let mut added_at = alloc::vec![usize::MAX; n];
        for (s, reads) in w.reads.iter().enumerate() {
            let step = step_of[s];
            for &g in reads {
                if planned(g) {
                    // a read at or before the creating step adds nothing (TFLM: the life
                    // starts at creation and lasts to the last use, at least the creation)
                    if !is_input(g) && step_of[first(g)] >= step {
                        continue;
                    }
                } else if !self.is_weight(g, offsets) {
                    continue; // variables: not in the head
                }
                if added_at[g] != step {
                    added_at[g] = step;
                    ops[step].inputs.push(TensorId::new(g));
                }
            }
        }
        if early > 0 {
            warnings.push(format!(
                "{early} tensor(s) TFLM plans are never written by the ops it runs{}: TFLM gives them the time before the first op (first_created = -1); here they start with the first op",
                if read_only > 0 {
                    format!(" ({read_only} of them read)")
                } else {
                    String::new()
                }
            ));
        }
        let outputs: Vec<TensorId> = self.subgraphs[0]
            .outputs
            .iter()
            .map(|&t| offsets[0] + t as usize)
            .filter(|&g| planned(g) || self.is_weight(g, offsets))
            .map(TensorId::new)
            .collect();
        Ok((ops, inputs, outputs, op_of_walked))
    }

    fn is_weight(&self, g: usize, offsets: &[usize]) -> bool {
        let s = offsets.partition_point(|&o| o <= g) - 1;
        let t = &self.subgraphs[s].tensors[g - offsets[s]];
        self.buffer_bytes[t.buffer as usize] > 0
    }
}

/// The user's dims over the file's.
fn file_dims_or(user: &Bindings, file: &Bindings) -> Bindings {
    let mut b = file.clone();
    b.extend(user.iter().map(|(k, v)| (k.clone(), *v)));
    b
}

/// A short text summary (`memplan inspect`): subgraphs, ops, tensors, weights, what TFLM keeps
/// in its tail, the offline plan, the warnings; dims shown bound by `bindings` where symbolic.
pub fn summary(model: &TfliteModel, bindings: &Bindings) -> String {
    use core::fmt::Write;
    let g = &model.graph;
    let i = &model.info;
    let mut s = String::new();
    let name = if g.name.is_empty() { "main" } else { &g.name };
    let _ = writeln!(
        s,
        "TFLite model, subgraph 0 '{name}' of {}; {} operators in the file, {} run by TFLM's walk",
        i.subgraph_offsets.len(),
        i.operators,
        i.walked_operators
    );
    let _ = writeln!(
        s,
        "{} tensors ({} weights, {} B), {} inputs, {} outputs, {} variable (persistent tail)",
        g.tensors.len(),
        g.tensors.iter().filter(|t| t.constant).count(),
        model.weight_bytes,
        g.inputs.len(),
        g.outputs.len(),
        i.persistent.len()
    );
    let mut dims = model.file_dims.clone();
    dims.extend(bindings.iter().map(|(k, v)| (k.clone(), *v)));
    for (label, list) in [("input", &g.inputs), ("output", &g.outputs)] {
        for &t in list {
            let t = &g.tensors[t];
            let shape = t
                .bound_shape(&dims)
                .map(|v| format!("{v:?}"))
                .unwrap_or_else(|| String::from("?"));
            let _ = writeln!(
                s,
                "{label} {}: {} {shape}",
                t.name,
                t.dtype.map_or("?", DType::name)
            );
        }
    }
    match &i.offline_plan {
        Some(p) => {
            let planned = p.offsets.iter().filter(|&&o| o >= 0).count();
            let _ = writeln!(
                s,
                "offline plan ({OFFLINE_PLAN_METADATA}): version {}, {} offsets, {planned} fixed",
                p.version,
                p.offsets.len()
            );
        }
        None => {
            let _ = writeln!(s, "no offline plan");
        }
    }
    for w in &model.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}
