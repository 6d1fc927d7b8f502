//! Reading inputs: format by extension or content, errors naming the file.

use std::collections::BTreeMap;
use std::path::Path;

use memplan_core::import::onnx::{self, OnnxOptions};
use memplan_core::{Bindings, Error, Graph, PlanOptions, Problem};

/// What a file held.
pub enum Input {
    /// A graph (JSON or ONNX): planned with GE defaults (512 alignment, GE padding).
    Graph {
        /// The graph.
        graph: Graph,
        /// Import warnings.
        warnings: Vec<String>,
        /// For ONNX, the file's bytes: dynamic-batch gears re-import it with the batch bound.
        onnx: Option<Vec<u8>>,
    },
    /// A bare buffer list (MiniMalloc CSV): planned with exact sizes.
    Buffers(Problem),
}

impl Input {
    /// `Some(first byte)` when the file starts (after whitespace) like JSON (`{`) or a CSV
    /// header (`id,`), else `None`.
    pub fn sniff_text(bytes: &[u8]) -> Option<u8> {
        let t = bytes
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .map_or(&[][..], |i| &bytes[i..]);
        (t.first() == Some(&b'{') || t.starts_with(b"id,")).then(|| t[0])
    }

    /// Default plan options for this kind of input.
    pub fn default_options(&self) -> PlanOptions {
        match self {
            Input::Graph { .. } => PlanOptions::default(),
            Input::Buffers(_) => PlanOptions::exact(),
        }
    }
}

/// Settings that turn a graph into a problem.
#[derive(Default)]
pub struct Shapes {
    /// `--dim NAME=VALUE`.
    pub dims: Bindings,
    /// `--input NAME=1x3x224x224`.
    pub inputs: BTreeMap<String, Vec<u64>>,
    /// `--size NAME=BYTES`: a tensor's size given by the user (shape not inferred, or to
    /// override it).
    pub sizes: BTreeMap<String, u64>,
    /// `--alias-views`: view outputs share their dying input's buffer
    /// ([`memplan_core::graph::views`]).
    pub alias_views: bool,
    /// `--schedule`: the order the ops run in; the graph's own (`"schedule"`, else file
    /// order) if `None`.
    pub order: Option<memplan_core::graph::ScheduleOrder>,
}

/// Applies `--size` to the graph's tensors.
///
/// # Errors
/// A tensor name the graph does not have.
pub fn apply_sizes(graph: &mut Graph, sizes: &BTreeMap<String, u64>) -> Result<(), Error> {
    for (name, &bytes) in sizes {
        let t = graph
            .tensors
            .iter_mut()
            .find(|t| &t.name == name)
            .ok_or_else(|| {
                Error::bad_option(format!("--size {name}: the graph has no tensor '{name}'"))
            })?;
        t.bytes = Some(bytes);
    }
    Ok(())
}

/// The most bytes any input may have: 2 GiB, protobuf's limit on one message (an ONNX model),
/// far above any graph JSON, buffer CSV or plan file. An input with no end (a character
/// device such as `/dev/zero`, a pipe that never closes) is refused once it passes it, instead
/// of being read until memory runs out.
/// The environment variable `MEMPLAN_MAX_INPUT_BYTES` lowers (or raises) it.
pub const MAX_INPUT_BYTES: u64 = 2 << 30;

/// [`MAX_INPUT_BYTES`], or `MEMPLAN_MAX_INPUT_BYTES` when set to a number.
fn input_cap() -> u64 {
    std::env::var("MEMPLAN_MAX_INPUT_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(MAX_INPUT_BYTES)
}

/// Reads at most [`MAX_INPUT_BYTES`] (or `MEMPLAN_MAX_INPUT_BYTES`) of `path`.
///
/// # Errors
/// An unreadable file, or one larger than the cap, naming the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let shown = path.display().to_string();
    let cannot = |e: std::io::Error| Error::invalid(format!("cannot read: {e}")).at(&shown);
    let file = std::fs::File::open(path).map_err(cannot)?;
    let cap = input_cap();
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > cap {
        return Err(Error::invalid(format!(
            "larger than the input size cap of {} (protobuf's 2 GiB message limit; MEMPLAN_MAX_INPUT_BYTES changes it): is it a device or a pipe that never ends?",
            memplan_core::units::with_exact(cap)
        ))
        .at(&shown));
    }
    Ok(bytes)
}

/// Reads `path` as UTF-8 text (a leading byte-order mark dropped), at most [`MAX_INPUT_BYTES`].
///
/// # Errors
/// As [`read_bytes`]; text that is not UTF-8, naming the file.
pub fn read_text(path: &Path) -> Result<String, Error> {
    let bytes = read_bytes(path)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| Error::parse(format!("not UTF-8: {e}")).at(path.display()))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Reads and parses `path`.
pub fn read(path: &Path, shapes: &Shapes) -> Result<Input, Error> {
    let shown = path.display().to_string();
    let bytes = read_bytes(path)?;
    parse(&shown, &bytes, shapes).map_err(|e| e.at(&shown))
}

/// Parses bytes by extension or content: JSON (`{`), MiniMalloc CSV (a header with `id`),
/// otherwise ONNX protobuf.
pub fn parse(name: &str, bytes: &[u8], shapes: &Shapes) -> Result<Input, Error> {
    let lower = name.to_ascii_lowercase();
    // a UTF-8 byte-order mark (editors on Windows write one) is not content
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let trimmed = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &bytes[i..]);
    let stem = Path::new(name)
        .file_stem()
        .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
    if trimmed.is_empty() {
        return Err(Error::parse(
            "empty file (expected ONNX, memplan JSON or MiniMalloc CSV)",
        ));
    }
    if lower.ends_with(".json") || trimmed.first() == Some(&b'{') {
        let text =
            std::str::from_utf8(bytes).map_err(|_| Error::parse("JSON file is not UTF-8"))?;
        if text.contains("\"memplan.plan/1\"") {
            return Err(Error::parse(
                "this is a plan (memplan.plan/1), not a graph: check it with `memplan validate`",
            ));
        }
        let mut graph = memplan_core::import::json::parse(text)?;
        if graph.name.is_empty() {
            graph.name = stem;
        }
        apply_sizes(&mut graph, &shapes.sizes)?;
        graph.order = shapes.order.unwrap_or(graph.order);
        return Ok(Input::Graph {
            graph,
            warnings: Vec::new(),
            onnx: None,
        });
    }
    if lower.ends_with(".csv") || trimmed.starts_with(b"id,") {
        let text = std::str::from_utf8(bytes).map_err(|_| Error::parse("CSV file is not UTF-8"))?;
        return Ok(Input::Buffers(memplan_core::import::csv::parse(
            &stem, text,
        )?));
    }
    parse_onnx(&stem, bytes, shapes)
}

fn parse_onnx(stem: &str, bytes: &[u8], shapes: &Shapes) -> Result<Input, Error> {
    let opts = OnnxOptions {
        dims: shapes.dims.clone(),
        inputs: shapes.inputs.clone(),
    };
    let model = onnx::parse(bytes, &opts).map_err(|e| {
        if bytes.is_empty() {
            Error::parse("empty file (expected ONNX, memplan JSON or MiniMalloc CSV)")
        } else {
            e
        }
    })?;
    let mut graph = model.graph;
    if graph.name.is_empty() {
        graph.name = stem.to_string();
    }
    apply_sizes(&mut graph, &shapes.sizes)?;
    graph.order = shapes.order.unwrap_or(graph.order);
    Ok(Input::Graph {
        graph,
        warnings: model.warnings,
        onnx: Some(bytes.to_vec()),
    })
}

/// Imports ONNX `bytes` again with `dims` bound (one gear of dynamic batch) and lowers it.
pub fn lower_onnx(
    bytes: &[u8],
    shapes: &Shapes,
    dims: &Bindings,
) -> Result<memplan_core::graph::Lowered, Error> {
    let opts = OnnxOptions {
        dims: dims.clone(),
        inputs: shapes.inputs.clone(),
    };
    let mut model = onnx::parse(bytes, &opts)?;
    apply_sizes(&mut model.graph, &shapes.sizes)?;
    model.graph.order = shapes.order.unwrap_or(model.graph.order);
    let mut lowered = model.graph.lower(dims)?;
    if shapes.alias_views {
        lowered.views = Some(memplan_core::graph::views::alias_views(
            &model.graph,
            &mut lowered,
        )?);
    }
    let mut warnings = model.warnings;
    warnings.append(&mut lowered.warnings);
    lowered.warnings = warnings;
    Ok(lowered)
}

/// Lowers a graph with the dims `shapes` leaves unbound set to 1, with a warning for each.
/// An ONNX model (`onnx`: its bytes) with such dims is imported again with them bound, as
/// the playground does: shape arithmetic over a symbolic dim may not resolve (magika's
/// tensors would be planned as 0 bytes), and the symbolic import's warnings (`warnings`) are
/// then replaced by the bound import's.
///
/// # Errors
/// Import and lowering errors.
pub fn lower_unbound_as_one(
    graph: &Graph,
    mut warnings: Vec<String>,
    onnx: Option<&[u8]>,
    shapes: &Shapes,
) -> Result<memplan_core::graph::Lowered, Error> {
    let (dims, mut bind) = graph.bind_unbound_to_one(&shapes.dims);
    let mut lowered = match onnx {
        Some(bytes) if !bind.is_empty() => {
            warnings.clear();
            lower_onnx(bytes, shapes, &dims)?
        }
        _ => {
            let mut l = graph.lower(&dims)?;
            if shapes.alias_views {
                l.views = Some(memplan_core::graph::views::alias_views(graph, &mut l)?);
            }
            l
        }
    };
    warnings.append(&mut bind);
    warnings.append(&mut lowered.warnings);
    lowered.warnings = warnings;
    Ok(lowered)
}

/// Reads an ONNX file for `memplan inspect`.
pub fn read_onnx(path: &Path, shapes: &Shapes) -> Result<onnx::OnnxModel, Error> {
    let shown = path.display().to_string();
    let bytes = read_bytes(path)?;
    if Input::sniff_text(&bytes).is_some() {
        return Err(Error::parse(
            "inspect reads ONNX models; this is text (JSON or CSV): plan it with `memplan plan`, check a plan file with `memplan validate`",
        )
        .at(&shown));
    }
    let opts = OnnxOptions {
        dims: shapes.dims.clone(),
        inputs: shapes.inputs.clone(),
    };
    onnx::parse(&bytes, &opts).map_err(|e| e.at(&shown))
}
