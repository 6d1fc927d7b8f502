//! ONNX importer: decodes a `ModelProto` and infers the dtype and shape of every tensor, with
//! propagation of small integer values (shape arithmetic), into a [`Graph`].
//!
//! * Initializers and `Constant` outputs are weights (`constant = true`), never activations;
//!   graph inputs that are initializers are not graph inputs. Weight payloads are never copied:
//!   sizes come from dims and type, so external data need not exist.
//! * Dims: `dim_value >= 0` is known; `dim_param` is a symbol, bound by [`OnnxOptions::dims`];
//!   `dim_value = -1`, `dim_param = "?"` and dims with neither get a symbol named after where
//!   it comes from ([`crate::graph::unknown_dim_name`]: `input1 axis 3`, `Conv_0 output axis
//!   2`), which stays unknown (never bound to 1) until bound by that name or by the whole
//!   input shape ([`OnnxOptions::inputs`]); the tensors it sizes are of unknown size.
//!   Derived dims stay symbolic as expressions (`(h-3)/2+1`), which
//!   [`crate::graph::eval_dim`] evaluates at [`Graph::lower`] time.
//! * The file's `value_info` fills what inference cannot; where both know a dim and differ,
//!   the inferred one is kept and a warning says so.
//! * Subgraphs (`If`, `Loop`, `Scan`): inner tensors are inferred (for the parent's output
//!   shapes) but not planned; outer tensors a subgraph reads become inputs of the parent op, so
//!   they live until its step. Inner weights are counted in
//!   [`OnnxModel::subgraph_weights_bytes`]. See `docs/formats.md`.
//!
//! Steps: every node of the top-level graph, `Constant` included, is one op (one step), in
//! file order when that is topological. This reproduces the reference figures of
//! `shared/models` exactly (e.g. `ppocr_mobile_v2_cls`: 566 steps = 308 `Constant` + 258).

mod ops;
pub mod proto;
mod sym;

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use prost::Message;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Bindings, Dim, Graph, Op, Tensor, TensorId};
use proto::{GraphProto, ModelProto, NodeProto, TensorProto, TypeProto, ValueInfoProto};
use sym::V;

/// What to bind while importing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnnxOptions {
    /// Values of named dims (`dim_param`), e.g. `batch = 1`.
    pub dims: Bindings,
    /// Whole shapes of graph inputs, by input name: the only way to bind `?`, `-1` and unnamed
    /// dims. The rank must match the declared one (when declared); known dims must agree.
    pub inputs: BTreeMap<String, Vec<u64>>,
}

/// An imported model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OnnxModel {
    /// The top-level graph: every node an op, every value a tensor with inferred dtype and
    /// shape (`None` where inference failed, see `warnings`).
    pub graph: Graph,
    /// One line per tensor whose shape could not be inferred (op, tensor, why), per conflict
    /// between inference and the file's `value_info`, and per unsupported construct.
    pub warnings: Vec<String>,
    /// Bytes of the top-level weights (initializers and `Constant` outputs), with the
    /// options' bindings.
    pub weights_bytes: u64,
    /// Bytes of weights inside subgraphs (`If` branches, `Loop`/`Scan` bodies); not in
    /// `weights_bytes`, not in the graph.
    pub subgraph_weights_bytes: u64,
    /// The default-domain (`ai.onnx`) opset version.
    pub opset: i64,
    /// Values that are not tensors (sequence, map, optional): `name: kind`; not planned.
    pub non_tensors: Vec<String>,
    /// Tensors planned at an upper bound of a data-dependent size (`NonZero`, `Unique`, `TopK`
    /// with a run-time `k`): `name: which dim and why`, in node order. Each also has a warning.
    pub bounds: Vec<String>,
    /// Symbolic dims left unbound (names and expressions), sorted.
    pub symbols: Vec<String>,
    /// Names of top-level tensors whose shape is unknown.
    pub unknown: Vec<String>,
}

/// A tensor during inference.
#[derive(Debug, Clone, Default)]
pub(crate) struct Info {
    pub(crate) name: String,
    pub(crate) dtype: Option<DType>,
    pub(crate) shape: Option<Vec<V>>,
    pub(crate) val: Option<Val>,
    pub(crate) constant: bool,
    pub(crate) non_tensor: Option<&'static str>,
    /// Where inference of an unknown dtype or shape stopped: `op 'X' (Einsum): why`.
    pub(crate) cause: Option<String>,
    /// Why the value is unknown where constant arithmetic failed: `op 'm' (Mul): int64
    /// overflow (9223372036854775807 * 2)`, or inherited from an input.
    pub(crate) val_why: Option<String>,
    /// A sequence's elements when known at import (see [`ops::O`]).
    pub(crate) seq: Option<Vec<ops::Elem>>,
}

/// A small tensor's elements (row-major).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    /// Integers (and bools as 0/1), possibly symbolic.
    I(Vec<V>),
    /// Floats.
    F(Vec<f64>),
}

/// Values longer than this are not propagated.
pub(crate) const MAX_VAL: usize = 4096;

/// Parses an ONNX model and infers every tensor's dtype and shape under `opts`.
///
/// # Errors
/// [`crate::ErrorKind::Parse`] for bytes that are not a `ModelProto` (truncated, garbage) or a
/// model without a graph; [`crate::ErrorKind::Invalid`] naming the op or tensor for a node
/// reading a value nothing defines, a cycle, a value written twice, a negative dim (in the
/// file or after binding), an input shape that contradicts the file;
/// [`crate::ErrorKind::Overflow`] naming the tensor whose size exceeds `u64`.
pub fn parse(bytes: &[u8], opts: &OnnxOptions) -> Result<OnnxModel> {
    let mut model = ModelProto::decode(bytes).map_err(|e| {
        let e = e.to_string();
        // prost names the field ("NodeProto.name: invalid string value: data is not UTF-8
        // encoded"): a whole file with a bad string is neither cut short nor foreign
        let why = if e.ends_with("data is not UTF-8 encoded") {
            String::from(
                "a string field (named above) holds bytes that are not UTF-8, which protobuf strings must be",
            )
        } else if e.ends_with("recursion limit reached") {
            String::from("messages nest deeper than protobuf decoding allows")
        } else {
            format!(
                "the file is cut short, or is not ONNX ({} bytes read)",
                bytes.len()
            )
        };
        Error::parse(format!("not a valid ONNX model (protobuf): {e}; {why}"))
    })?;
    if let Some(g) = model.graph.as_mut() {
        ops::nchwc::annotate_block(g);
    }
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(1, |o| o.version);
    let Some(g) = model.graph.as_ref() else {
        return Err(Error::parse("not an ONNX model: ModelProto has no graph"));
    };
    let mut imp = Importer {
        opts,
        opset,
        infos: Vec::new(),
        warnings: Vec::new(),
        subgraph_weights: 0,
        non_tensors: Vec::new(),
        bounds: Vec::new(),
        anon: 0,
    };
    let mut scopes = Vec::new();
    let run = imp.run_graph(g, &mut scopes, &[])?;
    imp.build(g, run)
}

/// The result of running one graph.
struct Run {
    /// Ids of all values defined at this level, in definition order.
    defined: Vec<usize>,
    /// Per node in inference order: (index in the file, inputs incl. implicit, outputs).
    nodes: Vec<(usize, Vec<usize>, Vec<usize>)>,
    /// Graph inputs (not initializers).
    inputs: Vec<usize>,
    /// Graph outputs.
    outputs: Vec<usize>,
    /// Values of enclosing scopes read here: (id, level).
    outer: BTreeSet<(usize, usize)>,
}

struct Importer<'o> {
    opts: &'o OnnxOptions,
    opset: i64,
    infos: Vec<Info>,
    warnings: Vec<String>,
    subgraph_weights: u64,
    non_tensors: Vec<String>,
    bounds: Vec<String>,
    anon: u64,
}

fn op_loc(n: &NodeProto) -> String {
    format!("op '{}' ({})", n.name, n.op_type)
}

/// A node's display name: its name, else its first output.
/// Where a node's output `j` comes from, for naming its unknown dims: `Conv_0 output`,
/// `Split_3 output 1` (outputs after the first), `output 'y'` for a nameless node.
fn output_place(n: &NodeProto, j: usize) -> String {
    let out = n.output.get(j).map_or("", String::as_str);
    match (n.name.is_empty(), j) {
        (true, _) => format!("{} output '{out}'", n.op_type),
        (false, 0) => format!("{} output", n.name),
        (false, j) => format!("{} output {j}", n.name),
    }
}

fn node_name(n: &NodeProto, k: usize) -> String {
    if !n.name.is_empty() {
        n.name.clone()
    } else if let Some(o) = n.output.iter().find(|o| !o.is_empty()) {
        format!("{}#{}", n.op_type, o)
    } else {
        format!("{}#{k}", n.op_type)
    }
}

impl Importer<'_> {
    fn push(&mut self, info: Info) -> usize {
        self.infos.push(info);
        self.infos.len() - 1
    }

    fn lookup(&self, scopes: &[BTreeMap<String, usize>], name: &str) -> Option<(usize, usize)> {
        scopes
            .iter()
            .enumerate()
            .rev()
            .find_map(|(lvl, s)| s.get(name).map(|&id| (id, lvl)))
    }

    /// A dim nothing determines, named after `place` and `axis` (bound only by that name).
    fn fresh(&mut self, place: &str, axis: usize) -> V {
        self.anon += 1;
        let name = crate::graph::unknown_dim_name(place, axis);
        match self.opts.dims.get(&name) {
            Some(&v) => i64::try_from(v).map_or(V::N(name), V::K),
            None => V::N(name),
        }
    }

    /// Dims of a declared type; anonymous dims get fresh symbols named after `place` (the
    /// input's name, `NODE output`) and the axis.
    fn declared_shape(&mut self, name: &str, place: &str, t: &TypeProto) -> Result<Option<Vec<V>>> {
        let Some(tt) = t.tensor_type.as_ref().or(t.sparse_tensor_type.as_ref()) else {
            return Ok(None);
        };
        let Some(shape) = tt.shape.as_ref() else {
            return Ok(None);
        };
        let mut dims = Vec::with_capacity(shape.dim.len());
        for (k, d) in shape.dim.iter().enumerate() {
            dims.push(match (d.dim_value, d.dim_param.as_deref()) {
                (Some(v), _) if v >= 0 => V::K(v),
                (_, Some(p)) if !p.is_empty() && p != "?" => match self.opts.dims.get(p) {
                    Some(&v) => V::K(to_i64(v, name)?),
                    None => V::N(p.to_string()),
                },
                // -1 is how some exporters write "unknown"; other negatives are corrupt.
                (Some(v), _) if v < -1 => {
                    return Err(Error::invalid(format!("negative dim {v} (axis {k})"))
                        .at(format!("tensor '{name}'")))
                }
                _ => self.fresh(place, k),
            });
        }
        Ok(Some(dims))
    }

    fn value_info(&mut self, vi: &ValueInfoProto, input: bool) -> Result<Info> {
        let mut info = Info {
            name: vi.name.clone(),
            ..Info::default()
        };
        let Some(t) = vi.r#type.as_ref() else {
            return Ok(info);
        };
        if t.sequence_type.is_some() || t.map_type.is_some() || t.optional_type.is_some() {
            let kind = if t.sequence_type.is_some() {
                "sequence"
            } else if t.map_type.is_some() {
                "map"
            } else {
                "optional"
            };
            info.non_tensor = Some(kind);
            return Ok(info);
        }
        if let Some(tt) = t.tensor_type.as_ref().or(t.sparse_tensor_type.as_ref()) {
            info.dtype = DType::from_onnx(tt.elem_type);
            // 0 is UNDEFINED (left to inference); any other code we cannot size is named
            if info.dtype.is_none() && tt.elem_type != 0 {
                info.cause = Some(format!(
                    "tensor '{}': elem_type {} is not an ONNX data type memplan knows",
                    vi.name, tt.elem_type
                ));
            }
        }
        info.shape = self.declared_shape(&vi.name, &vi.name, t)?;
        if input {
            if let Some(given) = self.opts.inputs.get(&vi.name) {
                let given: Vec<V> = given
                    .iter()
                    .map(|&d| to_i64(d, &vi.name).map(V::K))
                    .collect::<Result<_>>()?;
                if let Some(decl) = &info.shape {
                    if decl.len() != given.len() {
                        return Err(Error::invalid(format!(
                            "given shape has rank {}, the model declares rank {}",
                            given.len(),
                            decl.len()
                        ))
                        .at(format!("input '{}'", vi.name)));
                    }
                    for (k, (d, g)) in decl.iter().zip(&given).enumerate() {
                        if let (V::K(a), V::K(b)) = (d, g) {
                            if a != b {
                                return Err(Error::invalid(format!(
                                    "given dim {k} is {b}, the model fixes it at {a}"
                                ))
                                .at(format!("input '{}'", vi.name)));
                            }
                        }
                    }
                }
                info.shape = Some(given);
            }
        }
        Ok(info)
    }

    /// An initializer or constant tensor.
    fn tensor_info(&mut self, t: &TensorProto, name: &str) -> Result<Info> {
        let dtype = DType::from_onnx(t.data_type).ok_or_else(|| {
            Error::invalid(format!("unknown data type {}", t.data_type))
                .at(format!("tensor '{name}'"))
        })?;
        let mut shape = Vec::with_capacity(t.dims.len());
        for &d in &t.dims {
            if d < 0 {
                return Err(Error::invalid(format!("negative dim {d} in {:?}", t.dims))
                    .at(format!("tensor '{name}'")));
            }
            shape.push(V::K(d));
        }
        Ok(Info {
            name: name.to_string(),
            dtype: Some(dtype),
            val: ops::tensor_value(t, dtype),
            shape: Some(shape),
            constant: true,
            non_tensor: None,
            cause: None,
            val_why: None,
            seq: None,
        })
    }

    fn info_bytes(&self, id: usize) -> Result<Option<u64>> {
        let t = to_tensor(&self.infos[id]);
        t.size(&self.opts.dims)
    }

    /// Runs a graph at level `scopes.len()`; `formals` are infos for the graph's inputs
    /// (subgraph bodies), matched by position.
    fn run_graph(
        &mut self,
        g: &GraphProto,
        scopes: &mut Vec<BTreeMap<String, usize>>,
        formals: &[Option<Info>],
    ) -> Result<Run> {
        let level = scopes.len();
        if level > 32 {
            return Err(Error::invalid("subgraphs nested more than 32 deep"));
        }
        scopes.push(BTreeMap::new());
        let res = self.run_graph_inner(g, scopes, formals, level);
        scopes.pop();
        res
    }

    fn run_graph_inner(
        &mut self,
        g: &GraphProto,
        scopes: &mut Vec<BTreeMap<String, usize>>,
        formals: &[Option<Info>],
        level: usize,
    ) -> Result<Run> {
        let mut run = Run {
            defined: Vec::new(),
            nodes: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            outer: BTreeSet::new(),
        };
        let top = level == 0;
        // Initializers (weights).
        for t in &g.initializer {
            let info = self.tensor_info(t, &t.name)?;
            let id = self.define(scopes, level, info, &mut run)?;
            if !top {
                let b = self.info_bytes(id)?.unwrap_or(0);
                self.subgraph_weights = crate::error::add(self.subgraph_weights, b, "weights")?;
            }
        }
        for st in &g.sparse_initializer {
            let Some(v) = st.values.as_ref() else {
                continue;
            };
            let mut info = self.tensor_info(v, &v.name)?;
            info.shape = Some(st.dims.iter().map(|&d| V::K(d.max(0))).collect());
            info.val = None;
            self.define(scopes, level, info, &mut run)?;
        }
        // Graph inputs that are not initializers. An input listed twice has two declared
        // shapes for one tensor: onnxruntime refuses the model ("Duplicate definition-site").
        let mut listed = BTreeSet::new();
        for (k, vi) in g.input.iter().enumerate() {
            if !listed.insert(vi.name.as_str()) {
                return Err(Error::invalid("is listed twice among the graph inputs")
                    .at(format!("graph input '{}'", vi.name)));
            }
            if scopes[level].contains_key(&vi.name) {
                continue;
            }
            let mut info = self.value_info(&vi.clone(), top)?;
            if let Some(Some(f)) = formals.get(k) {
                let declared = info.shape.take();
                info.dtype = f.dtype.or(info.dtype);
                info.shape = f.shape.clone().or(declared);
                info.val = None;
            }
            if let Some(kind) = info.non_tensor {
                self.non_tensors.push(format!("{}: {kind}", vi.name));
            }
            let id = self.define(scopes, level, info, &mut run)?;
            run.inputs.push(id);
        }
        let vinfo: BTreeMap<&str, &ValueInfoProto> = g
            .value_info
            .iter()
            .chain(g.output.iter())
            .map(|v| (v.name.as_str(), v))
            .collect();

        for k in self.order(g, scopes)? {
            let Some(n) = g.node.get(k) else { continue };
            let (ins, outs) = self.node(n, scopes, level, &vinfo, &mut run)?;
            run.nodes.push((k, ins, outs));
        }
        // A top-level output listed twice is one tensor claimed twice (as an input listed
        // twice is); a subgraph's outputs are positional, and may repeat a value.
        let mut listed_out = BTreeSet::new();
        for o in &g.output {
            if level == 0 && !listed_out.insert(o.name.as_str()) {
                return Err(Error::invalid("is listed twice among the graph outputs")
                    .at(format!("graph output '{}'", o.name)));
            }
            let Some((id, lvl)) = self.lookup(scopes, &o.name) else {
                return Err(Error::invalid(
                    "is a graph output that no node, initializer or input defines",
                )
                .at(format!("tensor '{}'", o.name)));
            };
            if lvl < level {
                run.outer.insert((id, lvl));
            }
            run.outputs.push(id);
        }
        Ok(run)
    }

    fn define(
        &mut self,
        scopes: &mut [BTreeMap<String, usize>],
        level: usize,
        info: Info,
        run: &mut Run,
    ) -> Result<usize> {
        let name = info.name.clone();
        if scopes[level].contains_key(&name) {
            return Err(
                Error::invalid("is defined twice (SSA violation)").at(format!("tensor '{name}'"))
            );
        }
        let id = self.push(info);
        scopes[level].insert(name, id);
        run.defined.push(id);
        Ok(id)
    }

    /// Inference order: file order when topological, else Kahn (lowest index first).
    fn order(&self, g: &GraphProto, scopes: &[BTreeMap<String, usize>]) -> Result<Vec<usize>> {
        let mut producer: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, n) in g.node.iter().enumerate() {
            for o in n.output.iter().filter(|o| !o.is_empty()) {
                producer.insert(o.as_str(), k);
            }
        }
        let mut in_order = true;
        let mut preds: Vec<Vec<usize>> = alloc::vec![Vec::new(); g.node.len()];
        for (k, n) in g.node.iter().enumerate() {
            for i in n.input.iter().filter(|i| !i.is_empty()) {
                if let Some(&p) = producer.get(i.as_str()) {
                    // An initializer or input of this graph shadows nothing: nodes win only
                    // when the name is not already defined at this level.
                    if scopes.last().is_some_and(|s| s.contains_key(i)) {
                        continue;
                    }
                    if p == k {
                        return Err(Error::invalid("reads its own output (a cycle)").at(op_loc(n)));
                    }
                    in_order &= p < k;
                    preds[k].push(p);
                }
            }
        }
        if in_order {
            return Ok((0..g.node.len()).collect());
        }
        let mut succ: Vec<Vec<usize>> = alloc::vec![Vec::new(); g.node.len()];
        let mut indeg = alloc::vec![0usize; g.node.len()];
        for (k, ps) in preds.iter().enumerate() {
            for &p in ps {
                succ[p].push(k);
                indeg[k] += 1;
            }
        }
        let mut ready: alloc::collections::BinaryHeap<core::cmp::Reverse<usize>> =
            (0..g.node.len())
                .filter(|&k| indeg[k] == 0)
                .map(core::cmp::Reverse)
                .collect();
        let mut order = Vec::with_capacity(g.node.len());
        while let Some(core::cmp::Reverse(k)) = ready.pop() {
            order.push(k);
            for &s in &succ[k] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready.push(core::cmp::Reverse(s));
                }
            }
        }
        if order.len() < g.node.len() {
            let stuck = (0..g.node.len()).find(|&k| indeg[k] > 0).unwrap_or(0);
            let loc = g.node.get(stuck).map(op_loc).unwrap_or_default();
            return Err(
                Error::invalid("is on a cycle: the graph has no topological order").at(loc),
            );
        }
        Ok(order)
    }

    #[allow(clippy::too_many_lines)]
    fn node(
        &mut self,
        n: &NodeProto,
        scopes: &mut Vec<BTreeMap<String, usize>>,
        level: usize,
        vinfo: &BTreeMap<&str, &ValueInfoProto>,
        run: &mut Run,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        let loc = || op_loc(n);
        let mut ins: Vec<Option<usize>> = Vec::with_capacity(n.input.len());
        let mut all_ins: Vec<usize> = Vec::new();
        for name in &n.input {
            if name.is_empty() {
                ins.push(None);
                continue;
            }
            let Some((id, lvl)) = self.lookup(scopes, name) else {
                return Err(Error::invalid(format!(
                    "input '{name}' is not a graph input, an initializer or an earlier node's output"
                ))
                .at(loc()));
            };
            if lvl < level {
                run.outer.insert((id, lvl));
            }
            ins.push(Some(id));
            all_ins.push(id);
        }
        let is_default = n.domain.is_empty() || n.domain == "ai.onnx";
        let op = n.op_type.as_str();
        let outs: core::result::Result<Vec<ops::O>, ops::Fail> =
            if is_default && matches!(op, "If" | "Loop" | "Scan") {
                self.control_flow(n, &ins, scopes, level, run, &mut all_ins)
            } else {
                let refs: Vec<Option<&Info>> = ins
                    .iter()
                    .map(|i| i.and_then(|i| self.infos.get(i)))
                    .collect();
                ops::infer(n, self.opset, &refs)
            };
        // Outer values read by subgraphs are inputs of the op itself (implicit inputs).
        // Where an unknown output's inference stopped: an unknown input's own cause, else here.
        let inherited = ins.iter().flatten().find_map(|&i| {
            let info = self.infos.get(i)?;
            let unknown =
                info.non_tensor.is_none() && (info.shape.is_none() || info.dtype.is_none());
            if unknown {
                info.cause.clone()
            } else {
                None
            }
        });
        let mut cause = inherited.clone();
        let val_why_in = ins
            .iter()
            .flatten()
            .find_map(|&i| self.infos.get(i).and_then(|info| info.val_why.clone()));
        let outs = match outs {
            Ok(o) => o,
            Err(ops::Fail::Hard(e)) => return Err(e.at(loc())),
            Err(ops::Fail::Why(why)) => {
                if cause.is_none() {
                    cause = Some(format!("{}: {why}", loc()));
                }
                for o in n.output.iter().filter(|o| !o.is_empty()) {
                    let fallback = if vinfo.get(o.as_str()).is_some_and(|v| v.r#type.is_some()) {
                        " (the file's value_info is used)"
                    } else {
                        ""
                    };
                    self.warnings.push(format!(
                        "{}: output '{o}': shape not inferred: {why}{fallback}",
                        loc()
                    ));
                }
                Vec::new()
            }
        };
        let mut out_ids = Vec::with_capacity(n.output.len());
        for (j, name) in n.output.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let mut inferred = outs.get(j).cloned().unwrap_or_default();
            // Dims the op could not determine get a name saying where they come from.
            if let Some(s) = &mut inferred.shape {
                for (k, d) in s.iter_mut().enumerate() {
                    if matches!(d, V::E(e) if e == "?") {
                        *d = self.fresh(&output_place(n, j), k);
                    }
                }
            }
            let mut info = Info {
                name: name.clone(),
                dtype: inferred.dtype,
                shape: inferred.shape,
                val: inferred.val,
                constant: op == "Constant" && is_default,
                non_tensor: inferred.non_tensor,
                cause: None,
                val_why: None,
                seq: inferred.seq.clone(),
            };
            // a value left unknown says why: the op's own arithmetic, else an input's
            if info.val.is_none() {
                info.val_why = inferred
                    .val_why
                    .map(|w| format!("{}: {w}", loc()))
                    .or_else(|| val_why_in.clone());
            }
            if let Some(vi) = vinfo.get(name.as_str()) {
                let place = output_place(n, j);
                self.merge_declared(&mut info, vi, &loc(), &place)?;
            }
            if info.shape.is_none() || info.dtype.is_none() {
                info.cause = Some(
                    cause
                        .clone()
                        .unwrap_or_else(|| format!("{}: output '{name}' not inferred", loc())),
                );
            }
            if let Some(shape) = &info.shape {
                if let Some(bad) = shape.iter().find_map(|d| d.k().filter(|&v| v < 0)) {
                    return Err(Error::invalid(format!(
                        "output '{name}' would have negative dim {bad}"
                    ))
                    .at(loc()));
                }
            }
            if let Some(kind) = info.non_tensor {
                self.non_tensors.push(format!("{name}: {kind}"));
            }
            if let Some(b) = inferred.bound.as_ref().filter(|_| info.shape.is_some()) {
                self.warnings.push(format!(
                    "{}: output '{name}' planned at an upper bound: {b}",
                    loc()
                ));
                if level == 0 {
                    self.bounds.push(format!("{name}: {b}"));
                }
            }
            let constant = info.constant;
            let id = self.define(scopes, level, info, run)?;
            if constant && level > 0 {
                let b = self.info_bytes(id)?.unwrap_or(0);
                self.subgraph_weights = crate::error::add(self.subgraph_weights, b, "weights")?;
            }
            out_ids.push(id);
        }
        all_ins.sort_unstable();
        all_ins.dedup();
        // Keep explicit input order first (duplicates allowed), then implicit ones.
        let mut inputs: Vec<usize> = ins.iter().flatten().copied().collect();
        for id in all_ins {
            if !inputs.contains(&id) {
                inputs.push(id);
            }
        }
        Ok((inputs, out_ids))
    }

    /// Merges the file's declared type into an inferred one; conflicts become warnings.
    fn merge_declared(
        &mut self,
        info: &mut Info,
        vi: &ValueInfoProto,
        loc: &str,
        place: &str,
    ) -> Result<()> {
        let Some(t) = vi.r#type.as_ref() else {
            return Ok(());
        };
        if info.non_tensor.is_some() {
            return Ok(());
        }
        if let Some(tt) = t.tensor_type.as_ref() {
            if let Some(d) = DType::from_onnx(tt.elem_type) {
                match info.dtype {
                    None => info.dtype = Some(d),
                    Some(i) if i != d => self.warnings.push(format!(
                        "{loc}: output '{}': inferred dtype {} but value_info says {}; kept {}",
                        info.name,
                        i.name(),
                        d.name(),
                        i.name()
                    )),
                    _ => {}
                }
            }
        } else if t.sequence_type.is_some() || t.map_type.is_some() || t.optional_type.is_some() {
            info.non_tensor = Some(if t.sequence_type.is_some() {
                "sequence"
            } else if t.map_type.is_some() {
                "map"
            } else {
                "optional"
            });
            return Ok(());
        }
        let Some(decl) = self.declared_shape(&info.name, place, t)? else {
            return Ok(());
        };
        match &mut info.shape {
            None => info.shape = Some(decl),
            Some(inf) if inf.len() != decl.len() => self.warnings.push(format!(
                "{loc}: output '{}': inferred rank {} but value_info says rank {}; kept the inferred shape",
                info.name,
                inf.len(),
                decl.len()
            )),
            Some(inf) => {
                for (a, b) in inf.iter_mut().zip(decl) {
                    match (&*a, &b) {
                        (V::K(x), V::K(y)) if x != y => self.warnings.push(format!(
                            "{loc}: output '{}': inferred dim {x} but value_info says {y}; kept {x}",
                            info.name
                        )),
                        (V::K(_), _) => {}
                        (_, V::K(_)) => *a = b,
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    fn control_flow(
        &mut self,
        n: &NodeProto,
        ins: &[Option<usize>],
        scopes: &mut Vec<BTreeMap<String, usize>>,
        level: usize,
        run: &mut Run,
        all_ins: &mut Vec<usize>,
    ) -> core::result::Result<Vec<ops::O>, ops::Fail> {
        let mut runs: BTreeMap<String, (Run, Vec<ops::O>)> = BTreeMap::new();
        let body_formals = self.formals(n, ins);
        for a in &n.attribute {
            let graphs: Vec<&GraphProto> =
                a.g.as_deref().into_iter().chain(a.graphs.iter()).collect();
            for sg in graphs {
                let r = match self.run_graph(sg, scopes, &body_formals) {
                    Ok(r) => r,
                    // The branch not taken may not fit the bound inputs (If with a condition
                    // unknown at import): note it and use the other branch.
                    Err(e) if n.op_type == "If" => {
                        self.warnings.push(format!(
                            "{}: {} not inferred, the other branch is used: {e}",
                            op_loc(n),
                            a.name
                        ));
                        continue;
                    }
                    Err(e) => return Err(ops::Fail::Hard(e)),
                };
                for &(id, lvl) in &r.outer {
                    if lvl == level {
                        all_ins.push(id);
                    } else if lvl < level {
                        run.outer.insert((id, lvl));
                    }
                }
                let outs: Vec<ops::O> = r
                    .outputs
                    .iter()
                    .map(|&id| {
                        let i = &self.infos[id];
                        ops::O {
                            dtype: i.dtype,
                            shape: i.shape.clone(),
                            val: None,
                            non_tensor: i.non_tensor,
                            val_why: None,
                            bound: None,
                            seq: None,
                        }
                    })
                    .collect();
                runs.insert(a.name.clone(), (r, outs));
            }
        }
        let refs: Vec<Option<&Info>> = ins
            .iter()
            .map(|i| i.and_then(|i| self.infos.get(i)))
            .collect();
        let sub = |name: &str| runs.get(name).map(|(_, o)| o.clone());
        // Dims the branches disagree on are named by the caller (`V::E("?")`).
        ops::control_flow(n, &refs, &sub)
    }

    /// Infos for a Loop/Scan body's inputs.
    fn formals(&self, n: &NodeProto, ins: &[Option<usize>]) -> Vec<Option<Info>> {
        let get = |k: usize| {
            ins.get(k)
                .copied()
                .flatten()
                .and_then(|i| self.infos.get(i))
        };
        match n.op_type.as_str() {
            "Loop" => {
                let mut f = alloc::vec![
                    Some(Info {
                        dtype: Some(DType::Int64),
                        shape: Some(Vec::new()),
                        ..Info::default()
                    }),
                    Some(Info {
                        dtype: Some(DType::Bool),
                        shape: Some(Vec::new()),
                        ..Info::default()
                    }),
                ];
                for k in 2..ins.len() {
                    f.push(get(k).map(|i| Info {
                        val: None,
                        constant: false,
                        ..i.clone()
                    }));
                }
                f
            }
            "Scan" => {
                let m = ops::to_usize(ops::attr_i(n, "num_scan_inputs").unwrap_or(0));
                let states = ins.len().saturating_sub(m);
                let axes = ops::attr_ints(n, "scan_input_axes");
                let mut f = Vec::new();
                for k in 0..ins.len() {
                    let Some(i) = get(k) else {
                        f.push(None);
                        continue;
                    };
                    let mut i = Info {
                        val: None,
                        constant: false,
                        ..i.clone()
                    };
                    if k >= states {
                        let ax = axes
                            .as_ref()
                            .and_then(|a| a.get(k - states))
                            .copied()
                            .unwrap_or(0);
                        if let Some(s) = &mut i.shape {
                            let r = s.len() as i64;
                            let ax = if ax < 0 { ax + r } else { ax };
                            if (0..r).contains(&ax) {
                                s.remove(ops::to_usize(ax));
                            } else {
                                i.shape = None;
                            }
                        }
                    }
                    f.push(Some(i));
                }
                f
            }
            _ => Vec::new(),
        }
    }

    /// Builds the graph from the top-level run.
    fn build(mut self, g: &GraphProto, run: Run) -> Result<OnnxModel> {
        let mut tid: BTreeMap<usize, TensorId> = BTreeMap::new();
        let mut graph = Graph {
            name: g.name.clone(),
            ..Graph::default()
        };
        for &id in &run.defined {
            tid.insert(id, TensorId::new(graph.tensors.len()));
            graph.tensors.push(to_tensor(&self.infos[id]));
        }
        let map = |ids: &[usize]| -> Vec<TensorId> {
            ids.iter().filter_map(|i| tid.get(i).copied()).collect()
        };
        // Nodes were recorded in inference order; the graph keeps that order (file order for
        // topological files).
        for (k, ins, outs) in &run.nodes {
            let (name, op_type) = match g.node.get(*k) {
                Some(n) => (node_name(n, *k), n.op_type.clone()),
                None => (format!("node#{k}"), String::new()),
            };
            graph.ops.push(Op {
                name,
                op_type,
                inputs: map(ins),
                outputs: map(outs),
                ..Op::default()
            });
        }
        graph.inputs = map(&run.inputs);
        graph.outputs = map(&run.outputs);
        let mut weights = 0u64;
        let mut unknown = Vec::new();
        for t in &graph.tensors {
            let size = t.size(&self.opts.dims)?;
            if t.constant {
                weights = crate::error::add(weights, size.unwrap_or(0), "weight bytes")?;
            }
            // A sequence, map or optional (0 bytes, listed in `non_tensors`) has no shape.
            if t.shape.is_none() && t.bytes != Some(0) {
                unknown.push(t.name.clone());
            }
        }
        let mut symbols = graph.symbols();
        symbols.retain(|s| crate::graph::eval_dim(s, &self.opts.dims).is_none());
        self.non_tensors.sort();
        self.non_tensors.dedup();
        Ok(OnnxModel {
            graph,
            warnings: self.warnings,
            weights_bytes: weights,
            subgraph_weights_bytes: self.subgraph_weights,
            opset: self.opset,
            non_tensors: self.non_tensors,
            bounds: self.bounds,
            symbols,
            unknown,
        })
    }
}

fn to_i64(v: u64, name: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| {
        Error::new(crate::ErrorKind::Overflow, format!("dim {v} exceeds i64"))
            .at(format!("input '{name}'"))
    })
}

fn to_tensor(i: &Info) -> Tensor {
    Tensor {
        name: i.name.clone(),
        dtype: i.dtype,
        shape: i.shape.as_ref().map(|s| s.iter().map(V::to_dim).collect()),
        bytes: if i.non_tensor.is_some() {
            Some(0)
        } else {
            None
        },
        constant: i.constant,
        unknown_cause: i.cause.clone(),
        ..Tensor::default()
    }
}

/// A text report for an `inspect` command: opset, op counts, inputs and outputs with symbolic
/// and bound shapes, weights, what could not be inferred, warnings.
pub fn summary(model: &OnnxModel, bindings: &Bindings) -> String {
    use core::fmt::Write;
    let g = &model.graph;
    let mut s = String::new();
    let shape = |t: &Tensor| -> String {
        match &t.shape {
            None => "?".into(),
            Some(d) => {
                let sym: Vec<String> = d.iter().map(Dim::to_string).collect();
                let mut out = format!("[{}]", sym.join(", "));
                if d.iter().any(|x| matches!(x, Dim::Sym(_))) {
                    if let Some(b) = t.bound_shape(bindings) {
                        let b: Vec<String> = b.iter().map(u64::to_string).collect();
                        let _ = write!(out, " = [{}]", b.join(", "));
                    }
                }
                out
            }
        }
    };
    let dt = |t: &Tensor| t.dtype.map_or("?", DType::name);
    let _ = writeln!(s, "graph '{}', opset {}", g.name, model.opset);
    let _ = writeln!(
        s,
        "{} ops, {} tensors ({} weights), {} inputs, {} outputs",
        g.ops.len(),
        g.tensors.len(),
        g.tensors.iter().filter(|t| t.constant).count(),
        g.inputs.len(),
        g.outputs.len()
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for op in &g.ops {
        *counts.entry(op.op_type.as_str()).or_default() += 1;
    }
    let c: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(s, "ops: {}", c.join(", "));
    for (title, list) in [("input", &g.inputs), ("output", &g.outputs)] {
        for &t in list {
            if let Some(t) = g.tensors.get(t.index()) {
                let _ = writeln!(s, "{title} {}: {} {}", t.name, dt(t), shape(t));
            }
        }
    }
    let _ = writeln!(
        s,
        "weights: {} bytes (top level), {} bytes inside subgraphs",
        model.weights_bytes, model.subgraph_weights_bytes
    );
    if !model.symbols.is_empty() {
        let _ = writeln!(s, "unbound symbols: {}", model.symbols.join(", "));
    }
    if !model.bounds.is_empty() {
        let _ = writeln!(
            s,
            "planned at an upper bound (data-dependent sizes): {}",
            model.bounds.join("; ")
        );
    }
    if !model.non_tensors.is_empty() {
        let _ = writeln!(
            s,
            "not tensors (not planned): {}",
            model.non_tensors.join(", ")
        );
    }
    if !model.unknown.is_empty() {
        let _ = writeln!(s, "shape not inferred: {}", model.unknown.join(", "));
    }
    for w in &model.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}
