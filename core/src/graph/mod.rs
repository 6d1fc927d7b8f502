//! A graph of ops and tensors, its schedule, and the tensors' lifetimes as a [`Problem`].
//!
//! Ops run one per step in the schedule's order (see [`crate::problem`] for the interval
//! convention). A tensor lives from its producer's step to its last consumer's step; graph
//! inputs from step 0; graph outputs to the last step; a tensor nobody consumes dies at its
//! producer's step. Constants and weights are counted in [`Problem::weight_bytes`] and not
//! planned.

use alloc::collections::{BTreeMap, BinaryHeap};
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Reverse;

pub mod gears;
pub mod order;
pub mod rewrite;
pub mod views;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::problem::{Buffer, BufferId, BufferKind, Continuous, Flags, OpInfo, Problem};

crate::ids::typed_id!(
    /// Index of a tensor in [`Graph::tensors`].
    TensorId,
    "tensor #"
);
crate::ids::typed_id!(
    /// Index of an op in [`Graph::ops`] (file order, not necessarily the schedule, which is a
    /// `Vec<OpId>`).
    OpId,
    "op #"
);

/// One dimension of a shape: a number, or a name bound later (`batch`, `height`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum Dim {
    /// A known extent.
    Known(u64),
    /// A symbolic extent, by name.
    Sym(String),
}

impl core::fmt::Display for Dim {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Sym(s) => f.write_str(s),
        }
    }
}

/// Values for symbolic dims, by name.
pub type Bindings = BTreeMap<String, u64>;

/// Value of a symbolic dim under `bindings`: the binding of the name itself, else the value of
/// the name read as an expression (as the ONNX importer writes for derived dims): integers,
/// names (`[...]` quotes a name with other characters), `+ - * /` (`/` floors), parentheses,
/// `max(a,b)`, `min(a,b)`. `None` when a name is unbound, the expression is malformed, the
/// arithmetic overflows, or the result is negative.
pub fn eval_dim(dim: &str, bindings: &Bindings) -> Option<u64> {
    if let Some(&v) = bindings.get(dim) {
        return Some(v);
    }
    let mut p = ExprParser {
        s: dim.as_bytes(),
        i: 0,
        bindings,
        depth: 0,
        names: None,
    };
    let v = p.expr()?;
    if p.i != p.s.len() {
        return None;
    }
    u64::try_from(v).ok()
}

/// The name of a dim no file names and no rule determines (a `value_info` dim with neither
/// value nor name, the count of a `NonZero`, a dim the `If` branches disagree on): where it
/// comes from and its axis, `input1 axis 3` or `Conv_0 output axis 2`. Such a dim is unknown
/// until bound by name (`--dim "input1 axis 3=8"`, or the whole input shape): it is never
/// bound to 1 by [`Graph::bind_unbound_to_one`], so the tensors it sizes stay of unknown size.
pub fn unknown_dim_name(place: &str, axis: usize) -> String {
    let place: String = place.chars().filter(|&c| c != ']' && c != '[').collect();
    alloc::format!("{place} axis {axis}")
}

/// Whether a symbol name is one [`unknown_dim_name`] makes (ends with ` axis N`).
pub fn is_unknown_dim(name: &str) -> bool {
    name.rsplit_once(" axis ").is_some_and(|(p, n)| {
        !p.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The names a symbolic dim depends on: the names inside it when it reads as an expression
/// ([`eval_dim`]: `(h-3)/2+1` gives `h`), else the dim itself (a plain name such as `batch`).
pub fn dim_names(dim: &str) -> Vec<String> {
    let empty = Bindings::new();
    let mut names = Vec::new();
    let mut p = ExprParser {
        s: dim.as_bytes(),
        i: 0,
        bindings: &empty,
        depth: 0,
        names: Some(&mut names),
    };
    let ok = p.expr().is_some() && p.i == p.s.len();
    if ok && !names.is_empty() {
        names.sort();
        names.dedup();
        names
    } else {
        alloc::vec![String::from(dim)]
    }
}

struct ExprParser<'a> {
    s: &'a [u8],
    i: usize,
    bindings: &'a Bindings,
    depth: u32,
    /// When set, names are collected here and read as 1 instead of being looked up.
    names: Option<&'a mut Vec<String>>,
}

impl ExprParser<'_> {
    fn lookup(&mut self, name: &str) -> Option<i128> {
        if let Some(names) = self.names.as_mut() {
            names.push(String::from(name));
            return Some(1);
        }
        self.bindings.get(name).map(|&v| i128::from(v))
    }
}

impl ExprParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expr(&mut self) -> Option<i128> {
        self.depth += 1;
        if self.depth > 1024 {
            return None;
        }
        let mut v = self.term()?;
        loop {
            if self.eat(b'+') {
                v = v.checked_add(self.term()?)?;
            } else if self.eat(b'-') {
                v = v.checked_sub(self.term()?)?;
            } else {
                break;
            }
        }
        self.depth -= 1;
        Some(v)
    }
    fn term(&mut self) -> Option<i128> {
        let mut v = self.factor()?;
        loop {
            if self.eat(b'*') {
                v = v.checked_mul(self.factor()?)?;
            } else if self.eat(b'/') {
                let d = self.factor()?;
                // names mode reads every name as 1: a divisor may vanish there only
                v = if d == 0 && self.names.is_some() {
                    0
                } else {
                    v.checked_div_euclid(d)?
                };
            } else {
                break;
            }
        }
        Some(v)
    }
    fn factor(&mut self) -> Option<i128> {
        let c = self.peek()?;
        if c == b'-' {
            self.i += 1;
            self.depth += 1;
            if self.depth > 1024 {
                return None;
            }
            return self.factor()?.checked_neg();
        }
        if c == b'(' {
            self.i += 1;
            let v = self.expr()?;
            return self.eat(b')').then_some(v);
        }
        let start = self.i;
        if c == b'[' {
            let end = self.s[start..].iter().position(|&b| b == b']')? + start;
            self.i = end + 1;
            let name = core::str::from_utf8(&self.s[start + 1..end]).ok()?;
            return self.lookup(name);
        }
        while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
            self.i += 1;
        }
        let word = core::str::from_utf8(&self.s[start..self.i]).ok()?;
        if word.is_empty() {
            return None;
        }
        if word.as_bytes()[0].is_ascii_digit() {
            return word.parse::<i128>().ok();
        }
        if (word == "max" || word == "min") && self.eat(b'(') {
            let a = self.expr()?;
            if !self.eat(b',') {
                return None;
            }
            let b = self.expr()?;
            if !self.eat(b')') {
                return None;
            }
            return Some(if word == "max" { a.max(b) } else { a.min(b) });
        }
        self.lookup(word)
    }
}

/// A tensor: its size is `bytes` when given, else `dtype` × `shape` once every dim is known.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tensor {
    /// Name, unique in the graph.
    pub name: String,
    /// Element type, if known.
    pub dtype: Option<DType>,
    /// Shape, if known.
    pub shape: Option<Vec<Dim>>,
    /// Explicit size in bytes (overrides dtype × shape).
    pub bytes: Option<u64>,
    /// A constant or weight (initializer, `Constant` output): reported, not planned.
    pub constant: bool,
    /// Memory type (0 = HBM).
    pub memory_type: u32,
    /// Reuse blockers.
    pub flags: Flags,
    /// Where inference of an unknown dtype or shape stopped (op and reason), from the importer.
    pub unknown_cause: Option<String>,
}

impl Tensor {
    /// A tensor of `bytes` bytes.
    pub fn with_bytes(name: impl Into<String>, bytes: u64) -> Self {
        Tensor {
            name: name.into(),
            bytes: Some(bytes),
            ..Tensor::default()
        }
    }

    /// The shape with `bindings` applied; `None` if a dim stays symbolic.
    pub fn bound_shape(&self, bindings: &Bindings) -> Option<Vec<u64>> {
        self.shape
            .as_ref()?
            .iter()
            .map(|d| match d {
                Dim::Known(n) => Some(*n),
                Dim::Sym(s) => eval_dim(s, bindings),
            })
            .collect()
    }

    /// Size in bytes under `bindings`: `Ok(None)` when unknown (no dtype, or a dim unbound).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] naming the tensor when the element count or byte size
    /// exceeds `u64`.
    pub fn size(&self, bindings: &Bindings) -> Result<Option<u64>> {
        if let Some(b) = self.bytes {
            return Ok(Some(b));
        }
        // A dim whose names are all bound but which does not evaluate went negative or
        // overflowed (`n-10` with n = 4): a wrong model or binding, never a 0-byte tensor.
        for d in self.shape.iter().flatten() {
            if let Dim::Sym(s) = d {
                if eval_dim(s, bindings).is_none()
                    && dim_names(s).iter().all(|n| bindings.contains_key(n))
                {
                    let vals: Vec<String> = dim_names(s)
                        .iter()
                        .map(|n| alloc::format!("{n} = {}", bindings[n]))
                        .collect();
                    return Err(Error::invalid(alloc::format!(
                        "dim '{s}' is negative or overflows with {}",
                        vals.join(", ")
                    ))
                    .at(alloc::format!("tensor '{}'", self.name)));
                }
            }
        }
        let (Some(dtype), Some(shape)) = (self.dtype, self.bound_shape(bindings)) else {
            return Ok(None);
        };
        let what = || alloc::format!("size of tensor '{}'", self.name);
        let elements = shape
            .iter()
            .try_fold(1u64, |acc, &d| crate::error::mul(acc, d, what()))?;
        dtype.bytes(elements, what()).map(Some)
    }

    /// Why [`Tensor::size`] is `None` under `bindings`, in words: `dtype not inferred`,
    /// `shape not inferred`, or `dims left unknown: input1 axis 3`.
    pub fn unknown_why(&self, bindings: &Bindings) -> String {
        let cause = self.unknown_cause.as_ref().map_or_else(String::new, |c| {
            alloc::format!(" (inference stopped at {c})")
        });
        if self.dtype.is_none() && self.bytes.is_none() {
            return alloc::format!("dtype not inferred{cause}");
        }
        let Some(shape) = &self.shape else {
            return alloc::format!("shape not inferred{cause}");
        };
        let mut names: Vec<String> = shape
            .iter()
            .filter_map(|d| match d {
                Dim::Sym(s) if eval_dim(s, bindings).is_none() => Some(s.clone()),
                _ => None,
            })
            .collect();
        names.dedup();
        alloc::format!("dims left unknown: {}", names.join(", "))
    }
}

/// An op: reads `inputs`, writes `outputs`, needs `workspace_bytes` of scratch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Op {
    /// Name, unique in the graph.
    pub name: String,
    /// Type (`Conv`, `MatMul`, ...).
    pub op_type: String,
    /// Tensors read (duplicates allowed).
    pub inputs: Vec<TensorId>,
    /// Tensors written.
    pub outputs: Vec<TensorId>,
    /// Workspace sizes in bytes, one buffer each.
    pub workspace_bytes: Vec<u64>,
    /// Stream the op runs on.
    pub stream: u32,
    /// GE: inputs must be adjacent in memory, in input order (HCOM, Concat-like).
    pub continuous_inputs: bool,
    /// GE: outputs form one block, adjacent in output order.
    pub continuous_outputs: bool,
    /// Outputs that share an input's address (ref / in-place): `(output, input)`.
    pub ref_outputs: Vec<(TensorId, TensorId)>,
    /// GE `OP_NO_REUSE_MEM` / `no_reuse_mem_flag`: the op's outputs are not reused.
    pub no_reuse: bool,
    /// Control predecessors: ops this op waits for without reading their data (GE control
    /// edges; across streams, the send/recv events). They order the schedule and the streams.
    pub after: Vec<OpId>,
    /// Reuse blockers per workspace, by index (missing entries: none). GE: a workspace with
    /// `workspace_reuse_flag[i] = false` is not reused (`no_reuse`); an atomic-clean
    /// workspace goes to the atomic region (`atomic_clean`).
    pub workspace_flags: Vec<Flags>,
}

/// How [`Graph::schedule`] orders the ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum ScheduleOrder {
    /// The file order when it is topological, otherwise Kahn's algorithm taking the lowest
    /// file index first.
    #[default]
    File,
    /// GE's default topological sort for inference graphs, depth-first
    /// (graph_metadef compute_graph.cc `DFSTopologicalSorting` with `SortNodes`; GE gives
    /// ops their ids, the planner's time, in this order). See [`Graph::ge_dfs_order`].
    GeDfs,
    /// The topological order of lowest live-set lower bound found ([`order::memory_order`]:
    /// an exact search over sets of executed ops where the state space allows, heuristics
    /// otherwise, the file order always a candidate, so never above the file order's bound).
    Memory,
}

impl ScheduleOrder {
    /// The name used in `memplan.graph/1` (`"schedule"`) and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ScheduleOrder::File => "file",
            ScheduleOrder::GeDfs => "ge-dfs",
            ScheduleOrder::Memory => "memory",
        }
    }

    /// The order named `name` ([`ScheduleOrder::name`]).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] for another name, listing the known ones.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "file" => Ok(ScheduleOrder::File),
            "ge-dfs" => Ok(ScheduleOrder::GeDfs),
            "memory" => Ok(ScheduleOrder::Memory),
            other => Err(Error::invalid(alloc::format!(
                "unknown schedule '{other}' (known: file, ge-dfs, memory)"
            ))),
        }
    }
}

/// A computation graph: ops in file order and the tensors they read and write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Graph {
    /// Model name.
    pub name: String,
    /// All tensors.
    pub tensors: Vec<Tensor>,
    /// All ops, in file order.
    pub ops: Vec<Op>,
    /// Graph inputs (constants excluded).
    pub inputs: Vec<TensorId>,
    /// Graph outputs.
    pub outputs: Vec<TensorId>,
    /// How the ops are scheduled.
    pub order: ScheduleOrder,
}

/// The problem made from a graph, with what the conversion had to say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lowered {
    /// The problem: one buffer per planned tensor (ref outputs merged into their input's
    /// buffer) plus one per workspace.
    pub problem: Problem,
    /// The schedule: `schedule[k]` is the op run at step `k`.
    pub schedule: Vec<OpId>,
    /// For each buffer, the tensor it was made from (`None` for workspaces).
    pub tensor_of: Vec<Option<TensorId>>,
    /// Warnings: one per tensor of unknown size ([`UnknownTensor::describe`]), odd structure.
    pub warnings: Vec<String>,
    /// Tensors whose size is unknown (dtype or shape not inferred, or a dim no binding
    /// determines), each with the op that produced it: they are *not* planned, so the lower
    /// bound and every plan exclude them; report their number next to every figure.
    pub unknown: Vec<UnknownTensor>,
    /// What aliasing views saved, when it was asked for ([`crate::graph::views::alias_views`]).
    pub views: Option<crate::graph::views::AliasReport>,
    /// How [`Lowered::schedule`] was ordered ([`Graph::order`]; file order for a buffer list).
    pub order: ScheduleOrder,
    /// With [`ScheduleOrder::Memory`]: what the order search tried and proved.
    pub search: Option<order::OrderReport>,
    /// With `--fuse` or `--in-place`: the ops fused away and the outputs written in place.
    pub rewrites: Option<rewrite::RewriteReport>,
}

/// A tensor the planner leaves out because its size is unknown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UnknownTensor {
    /// The tensor's name.
    pub name: String,
    /// The op that produced it (`name (OpType)`), `None` for graph inputs and weights.
    pub op: Option<String>,
    /// Why its size is unknown (dtype or shape not inferred, or the dims left unbound).
    pub why: String,
}

impl UnknownTensor {
    /// One line: `tensor 'x' (output of op 'Conv_0' (Conv)): size unknown: shape not inferred`.
    pub fn describe(&self) -> String {
        match &self.op {
            Some(op) => alloc::format!(
                "tensor '{}' (output of op {op}): size unknown, not planned: {}",
                self.name,
                self.why
            ),
            None => alloc::format!(
                "tensor '{}': size unknown, not planned: {}",
                self.name,
                self.why
            ),
        }
    }
}

impl Graph {
    /// One line per tensor, `tensor NAME: DTYPE [SHAPE]` and ` weight` for a weight (`?` for
    /// an unknown dtype or shape): `memplan inspect --tensors` of every format.
    pub fn tensor_lines(&self) -> String {
        let mut s = String::new();
        for t in &self.tensors {
            let shape = t.shape.as_ref().map_or_else(
                || String::from("?"),
                |d| {
                    let v: Vec<String> = d.iter().map(alloc::string::ToString::to_string).collect();
                    alloc::format!("[{}]", v.join(", "))
                },
            );
            let dtype = t.dtype.map_or("?", DType::name);
            let kind = if t.constant { " weight" } else { "" };
            s += &alloc::format!("tensor {}: {dtype} {shape}{kind}\n", t.name);
        }
        s
    }

    /// Finds a tensor by name.
    pub fn tensor_id(&self, name: &str) -> Option<TensorId> {
        self.tensors
            .iter()
            .position(|t| t.name == name)
            .map(TensorId::new)
    }

    /// The producing op of each tensor (`None` for graph inputs and constants).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] when two ops write the same tensor.
    pub fn producers(&self) -> Result<Vec<Option<OpId>>> {
        let mut producer = alloc::vec![None; self.tensors.len()];
        for (k, op) in self.ops.iter().enumerate() {
            for &t in &op.outputs {
                if let Some(prev) = producer[t].replace(OpId::new(k)) {
                    return Err(Error::invalid(alloc::format!(
                        "tensor '{}' is written by op '{}' and by op '{}'",
                        self.tensors[t].name,
                        self.ops[prev].name,
                        op.name
                    ))
                    .at(alloc::format!("op '{}'", op.name)));
                }
            }
        }
        Ok(producer)
    }

    /// A deterministic topological order, by [`Graph::order`]: the file order when it is
    /// topological, otherwise Kahn's algorithm taking the lowest file index first; or GE's
    /// depth-first sort ([`Graph::ge_dfs_order`]); or the memory-aware order with every
    /// symbolic dim bound to 1 ([`Graph::lower`] orders by the bound dims).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] naming an op on a cycle, or an op reading a tensor that no
    /// op writes and that is neither a graph input nor a constant.
    pub fn schedule(&self) -> Result<Vec<OpId>> {
        let file = self.file_order()?;
        match self.order {
            ScheduleOrder::File => Ok(file),
            ScheduleOrder::GeDfs => Ok(self.ge_dfs_order()),
            ScheduleOrder::Memory => {
                let (dims, _) = self.bind_unbound_to_one(&Bindings::new());
                Ok(order::memory_order(self, &dims, &order::OrderLimits::default())?.0)
            }
        }
    }

    /// GE's default topological sort of an inference graph (graph_metadef compute_graph.cc
    /// `DFSTopologicalSorting`, `SortNodes`, `GetOutNodesFromAnchor`), on memplan's graph: a
    /// graph input is read from a `Data` node and a constant from a `Const` node, neither of
    /// them an op here, unless the graph has an op (with no inputs) writing the input: that
    /// op is its `Data` node.
    ///
    /// - An op waits for one edge per input it reads (a tensor read twice counts twice) and
    ///   one per control predecessor (`after`); a `Data` or `Const` node has none.
    /// - The sources go on a stack popped from the top: the `Data` nodes (graph inputs in
    ///   order) come off first, then the other sources (constants in tensor order, then ops
    ///   with no edge in file order).
    /// - A node popped is scheduled; then, for each of its outputs in order, the consumers
    ///   whose last edge that was (in the order of their inputs, file order of the ops) are
    ///   pushed, then its control successors. The last pushed runs next: depth first, the
    ///   last ready consumer first.
    ///
    /// Call it on a graph [`Graph::schedule`] accepts (it stops at a cycle; the ops left out
    /// are appended in file order).
    pub fn ge_dfs_order(&self) -> Vec<OpId> {
        let n = self.ops.len();
        // Consumers of each tensor, one entry per input slot, in op file order.
        let mut readers: Vec<Vec<OpId>> = alloc::vec![Vec::new(); self.tensors.len()];
        let mut waits = alloc::vec![0usize; n];
        let mut ctrl: Vec<Vec<OpId>> = alloc::vec![Vec::new(); n];
        for (k, op) in self.ops.iter().enumerate() {
            for &t in &op.inputs {
                if let Some(r) = readers.get_mut(t.index()) {
                    r.push(OpId::new(k));
                    waits[k] += 1;
                }
            }
            for &p in &op.after {
                if let Some(c) = ctrl.get_mut(p.index()) {
                    c.push(OpId::new(k));
                    waits[k] += 1;
                }
            }
        }
        /// A node of GE's graph: a source tensor's `Data`/`Const` node, or an op.
        #[derive(Clone, Copy)]
        enum Node {
            Source(TensorId),
            Op(OpId),
        }
        let producer = self.producers().unwrap_or_default();
        let is_input = |t: TensorId| self.inputs.contains(&t);
        // A graph input an op writes (a JSON graph's own `Data` op) is read from that op:
        // the op is the Data node, it comes off with the other Data nodes, and the tensor is
        // no source of its own (released twice, its readers would run before the op).
        let mut data_ops: Vec<OpId> = Vec::new();
        let data: Vec<Node> = self
            .inputs
            .iter()
            .filter_map(|&t| match producer.get(t.index()).copied().flatten() {
                None => Some(Node::Source(t)),
                Some(k) if waits[k] == 0 && !data_ops.contains(&k) => {
                    data_ops.push(k);
                    Some(Node::Op(k))
                }
                Some(_) => None,
            })
            .collect();
        // Pushed in reverse so that the first to come off is on top.
        let mut stack: Vec<Node> = Vec::new();
        let no_edge: Vec<OpId> = OpId::all(n)
            .filter(|&k| waits[k] == 0 && !data_ops.contains(&k))
            .collect();
        stack.extend(no_edge.iter().rev().map(|&k| Node::Op(k)));
        let consts: Vec<TensorId> = TensorId::all(self.tensors.len())
            .filter(|&t| {
                !is_input(t)
                    && producer.get(t.index()).is_some_and(Option::is_none)
                    && !readers[t].is_empty()
            })
            .collect();
        stack.extend(consts.iter().rev().map(|&t| Node::Source(t)));
        stack.extend(data.into_iter().rev());
        let mut order = Vec::with_capacity(n);
        let mut done = alloc::vec![false; n];
        let mut ready: Vec<OpId> = Vec::new();
        let release = |t: TensorId, waits: &mut Vec<usize>, ready: &mut Vec<OpId>| {
            for &r in readers.get(t.index()).map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(w) = waits.get_mut(r.index()) {
                    *w = w.saturating_sub(1);
                    if *w == 0 {
                        ready.push(r);
                    }
                }
            }
        };
        while let Some(node) = stack.pop() {
            match node {
                Node::Source(t) => {
                    release(t, &mut waits, &mut ready);
                    stack.extend(ready.drain(..).map(Node::Op));
                }
                Node::Op(k) => {
                    if done.get(k.index()).copied().unwrap_or(true) {
                        continue;
                    }
                    done[k] = true;
                    order.push(k);
                    for &t in &self.ops[k].outputs {
                        release(t, &mut waits, &mut ready);
                        stack.extend(ready.drain(..).map(Node::Op));
                    }
                    for &c in ctrl.get(k.index()).map(Vec::as_slice).unwrap_or(&[]) {
                        if let Some(w) = waits.get_mut(c.index()) {
                            *w = w.saturating_sub(1);
                            if *w == 0 {
                                ready.push(c);
                            }
                        }
                    }
                    stack.extend(ready.drain(..).map(Node::Op));
                }
            }
        }
        order.extend(OpId::all(n).filter(|&k| !done[k]));
        order
    }

    /// [`ScheduleOrder::File`]; also checks that the graph has a topological order.
    pub(crate) fn file_order(&self) -> Result<Vec<OpId>> {
        let producer = self.producers()?;
        let is_input: Vec<bool> = {
            let mut v = alloc::vec![false; self.tensors.len()];
            self.inputs.iter().for_each(|&t| v[t] = true);
            v
        };
        let mut preds: Vec<Vec<OpId>> = alloc::vec![Vec::new(); self.ops.len()];
        let mut in_order = true;
        for (k, op) in self.ops.iter().enumerate() {
            let k = OpId::new(k);
            for &p in &op.after {
                in_order &= p < k;
                preds[k].push(p);
            }
            for &t in &op.inputs {
                match producer[t] {
                    Some(p) => {
                        in_order &= p < k;
                        preds[k].push(p);
                    }
                    None if is_input[t] || self.tensors[t].constant => {}
                    None => {
                        return Err(Error::invalid(alloc::format!(
                            "reads tensor '{}', which no op writes and which is neither a graph input nor a constant",
                            self.tensors[t].name
                        ))
                        .at(alloc::format!("op '{}'", op.name)))
                    }
                }
            }
        }
        if in_order {
            return Ok(OpId::all(self.ops.len()).collect());
        }
        // Kahn with a stable tie-break (lowest op index first) over deduplicated edges.
        let mut succs: Vec<Vec<OpId>> = alloc::vec![Vec::new(); self.ops.len()];
        let mut indegree = alloc::vec![0usize; self.ops.len()];
        for (k, ps) in preds.iter().enumerate() {
            let k = OpId::new(k);
            let mut ps: Vec<OpId> = ps.clone();
            ps.sort_unstable();
            ps.dedup();
            for p in ps {
                if p == k {
                    return Err(Error::invalid("reads its own output (a cycle)")
                        .at(alloc::format!("op '{}'", self.ops[k].name)));
                }
                succs[p].push(k);
                indegree[k] += 1;
            }
        }
        let mut ready: BinaryHeap<Reverse<OpId>> = OpId::all(self.ops.len())
            .filter(|&k| indegree[k] == 0)
            .map(Reverse)
            .collect();
        let mut order = Vec::with_capacity(self.ops.len());
        while let Some(Reverse(k)) = ready.pop() {
            order.push(k);
            for &s in &succs[k] {
                indegree[s] -= 1;
                if indegree[s] == 0 {
                    ready.push(Reverse(s));
                }
            }
        }
        if order.len() < self.ops.len() {
            let stuck = (0..self.ops.len()).find(|&k| indegree[k] > 0).unwrap_or(0);
            return Err(
                Error::invalid("is on a cycle: the graph has no topological order")
                    .at(alloc::format!("op '{}'", self.ops[stuck].name)),
            );
        }
        Ok(order)
    }

    /// Lowers the graph to a planning problem under `bindings` (values of symbolic dims).
    ///
    /// # Errors
    /// As [`Graph::schedule`]; [`crate::ErrorKind::Overflow`] naming a tensor whose size
    /// exceeds `u64`; [`crate::ErrorKind::Invalid`] for a ref output naming a non-input, or a
    /// graph with no ops (its live ranges are op steps: with none, no tensor is ever live).
    pub fn lower(&self, bindings: &Bindings) -> Result<Lowered> {
        if self.ops.is_empty() {
            return Err(Error::invalid(
                "the graph has no ops: nothing runs, so there is nothing to plan",
            ));
        }
        if self.order == ScheduleOrder::Memory {
            let (schedule, report) =
                order::memory_order(self, bindings, &order::OrderLimits::default())?;
            let mut l = self.lower_in(bindings, schedule)?;
            l.order = ScheduleOrder::Memory;
            l.search = Some(report);
            return Ok(l);
        }
        let schedule = self.schedule()?;
        let mut l = self.lower_in(bindings, schedule)?;
        l.order = self.order;
        Ok(l)
    }

    /// [`Graph::lower`] in a given op order (`schedule[k]` runs at step `k`); the result's
    /// `order` is [`ScheduleOrder::File`] whatever the order given.
    ///
    /// # Errors
    /// As [`Graph::lower`]; [`crate::ErrorKind::Invalid`] when `schedule` is not a
    /// topological order of every op (an op missing, twice, or before one it reads from).
    pub fn lower_in(&self, bindings: &Bindings, schedule: Vec<OpId>) -> Result<Lowered> {
        if self.ops.is_empty() {
            return Err(Error::invalid(
                "the graph has no ops: nothing runs, so there is nothing to plan",
            ));
        }
        self.check_order(&schedule)?;
        let steps = schedule.len() as u64;
        let last = steps.saturating_sub(1);
        let mut step_of = alloc::vec![0u64; self.ops.len()];
        for (s, &k) in schedule.iter().enumerate() {
            step_of[k] = s as u64;
        }
        let producer = self.producers()?;
        let mut warnings = Vec::new();

        // Lifetimes per tensor.
        let mut start = alloc::vec![u64::MAX; self.tensors.len()];
        let mut end = alloc::vec![0u64; self.tensors.len()];
        let mut kind = alloc::vec![BufferKind::Activation; self.tensors.len()];
        for (t, p) in producer.iter().enumerate() {
            if let Some(p) = p {
                start[t] = step_of[*p];
                end[t] = step_of[*p];
            }
        }
        for &t in &self.inputs {
            start[t] = 0;
            kind[t] = BufferKind::GraphInput;
        }
        // Readers per tensor, by step (a ref output's readers join its host buffer below).
        let mut readers: Vec<Vec<u64>> = alloc::vec![Vec::new(); self.tensors.len()];
        for (k, op) in self.ops.iter().enumerate() {
            for &t in &op.inputs {
                end[t] = end[t].max(step_of[k]);
                readers[t].push(step_of[k]);
            }
        }
        for &t in &self.outputs {
            // an output nobody writes would be planned as garbage (or silently dropped)
            if producer[t].is_none()
                && kind[t] != BufferKind::GraphInput
                && !self.tensors[t].constant
            {
                return Err(Error::invalid(
                    "is a graph output but no op produces it (and it is neither a graph input nor a constant)",
                )
                .at(alloc::format!("graph output '{}'", self.tensors[t].name)));
            }
            end[t] = last;
            if kind[t] != BufferKind::GraphInput {
                kind[t] = BufferKind::GraphOutput;
            }
        }

        // One buffer per planned tensor; ref outputs join their input's buffer.
        let mut buffer_of: Vec<Option<usize>> = alloc::vec![None; self.tensors.len()];
        let mut buffers: Vec<Buffer> = Vec::new();
        let mut tensor_of: Vec<Option<TensorId>> = Vec::new();
        let mut weight_bytes = 0u64;
        let mut ref_target: BTreeMap<TensorId, TensorId> = BTreeMap::new();
        for op in &self.ops {
            for &(out, inp) in &op.ref_outputs {
                if !op.inputs.contains(&inp) || !op.outputs.contains(&out) {
                    return Err(Error::invalid(alloc::format!(
                        "ref output '{}' must name one of its outputs and one of its inputs ('{}')",
                        self.tensors[out].name,
                        self.tensors[inp].name
                    ))
                    .at(alloc::format!("op '{}'", op.name)));
                }
                ref_target.insert(out, inp);
            }
        }
        let mut unknown: Vec<UnknownTensor> = Vec::new();
        let mut make = |t: TensorId, unknown: &mut Vec<UnknownTensor>| -> Result<Option<Buffer>> {
            let tensor = &self.tensors[t];
            let used = tensor.constant || start[t] != u64::MAX;
            let size = match tensor.size(bindings)? {
                Some(s) => s,
                None => {
                    if used {
                        unknown.push(UnknownTensor {
                            name: tensor.name.clone(),
                            op: producer[t].map(|p| {
                                let op = &self.ops[p];
                                alloc::format!("'{}' ({})", op.name, op.op_type)
                            }),
                            why: tensor.unknown_why(bindings),
                        });
                    }
                    return Ok(None);
                }
            };
            if tensor.constant {
                weight_bytes = crate::error::add(weight_bytes, size, "weight bytes")?;
                return Ok(None);
            }
            if start[t] == u64::MAX {
                return Ok(None); // neither produced nor an input: unused
            }
            Ok(Some(Buffer {
                name: tensor.name.clone(),
                size,
                start: start[t],
                end: end[t],
                kind: kind[t],
                memory_type: tensor.memory_type,
                flags: tensor.flags,
                producer: producer[t].map(|p| step_of[p]),
                readers: {
                    let mut r = readers[t].clone();
                    r.sort_unstable();
                    r.dedup();
                    r
                },
                alignment: 1,
                ..Buffer::default()
            }))
        };
        // Graph inputs first, then in schedule order: outputs, then workspaces.
        let mut order: Vec<TensorId> = self.inputs.clone();
        for &k in &schedule {
            order.extend(self.ops[k].outputs.iter().copied());
        }
        order.extend(TensorId::all(self.tensors.len()).filter(|&t| self.tensors[t].constant));
        let mut seen = alloc::vec![false; self.tensors.len()];
        for t in order {
            if core::mem::replace(&mut seen[t], true) {
                continue;
            }
            // A ref output onto a weight or variable is that weight's memory: no buffer
            // (GE block_mem_assigner.cc IsOutputIndexRef: no block at all).
            if ref_target
                .get(&t)
                .is_some_and(|&inp| self.tensors[inp].constant)
            {
                continue;
            }
            let Some(mut b) = make(t, &mut unknown)? else {
                continue;
            };
            if let Some(&inp) = ref_target.get(&t) {
                if let Some(target) = buffer_of[inp] {
                    let host = &mut buffers[target];
                    if host.memory_type != b.memory_type {
                        return Err(Error::invalid(alloc::format!(
                            "ref output '{}' is in memory type {}, the tensor it writes in place ('{}') in {}: one buffer cannot be in two arenas",
                            b.name, b.memory_type, host.name, host.memory_type
                        ))
                        .at(alloc::format!("tensor '{}'", b.name)));
                    }
                    host.end = host.end.max(b.end);
                    host.size = host.size.max(b.size);
                    // One buffer, so the union of both tensors' and both writers' rules
                    // (a no_reuse or zero_copy alias must not lend the host's bytes).
                    host.flags.no_reuse |=
                        b.flags.no_reuse || producer[t].is_some_and(|p| self.ops[p].no_reuse);
                    host.flags.zero_copy |= b.flags.zero_copy;
                    // zero_copy_reuse relaxes a user buffer's rule: it holds only when every
                    // graph input or output in the buffer has it
                    let io = |k: BufferKind| {
                        matches!(k, BufferKind::GraphInput | BufferKind::GraphOutput)
                    };
                    let (hz, az) = (host.flags.zero_copy_reuse, b.flags.zero_copy_reuse);
                    host.flags.zero_copy_reuse =
                        (hz || (az && !io(host.kind))) && (az || !io(b.kind));
                    host.flags.atomic_clean |= b.flags.atomic_clean;
                    host.aliases.push(b.name);
                    // The ref op writes the host in place, then the alias's readers read it.
                    host.readers.extend(b.producer);
                    host.readers.extend_from_slice(&b.readers);
                    host.readers.sort_unstable();
                    host.readers.dedup();
                    if b.kind == BufferKind::GraphOutput {
                        host.kind = BufferKind::GraphOutput;
                    }
                    buffer_of[t] = Some(target);
                    continue;
                }
            }
            if let Some(p) = producer[t] {
                let op = &self.ops[p];
                b.stream = op.stream;
                b.flags.no_reuse |= op.no_reuse;
            }
            buffer_of[t] = Some(buffers.len());
            buffers.push(b);
            tensor_of.push(Some(t));
        }
        for &k in &schedule {
            let op = &self.ops[k];
            for (i, &bytes) in op.workspace_bytes.iter().enumerate() {
                let mut b = Buffer::new(
                    alloc::format!("{}/workspace{i}", op.name),
                    bytes,
                    step_of[k],
                    step_of[k],
                );
                b.kind = BufferKind::Workspace;
                b.stream = op.stream;
                b.producer = Some(step_of[k]);
                b.flags = op.workspace_flags.get(i).copied().unwrap_or_default();
                b.flags.no_reuse |= op.no_reuse;
                buffers.push(b);
                tensor_of.push(None);
            }
        }

        // Continuous groups: inputs (one block each, in input order) and outputs (one block).
        let mut group = 0u32;
        for &k in &schedule {
            let op = &self.ops[k];
            for (list, outputs) in [(&op.inputs, false), (&op.outputs, true)] {
                let wanted = if outputs {
                    op.continuous_outputs
                } else {
                    op.continuous_inputs
                };
                if !wanted {
                    continue;
                }
                // one group is one run of bytes: in one arena
                let mut mem: Option<(u32, TensorId)> = None;
                for &t in list {
                    let Some(bi) = buffer_of[t] else { continue };
                    let m = buffers[bi].memory_type;
                    match mem {
                        Some((first, ft)) if first != m => {
                            return Err(Error::invalid(alloc::format!(
                                "continuous {} '{}' (memory type {first}) and '{}' (memory type {m}) must be in one memory type: a group is one run of bytes",
                                if outputs { "outputs" } else { "inputs" },
                                self.tensors[ft].name,
                                self.tensors[t].name
                            ))
                            .at(alloc::format!("op '{}'", op.name)));
                        }
                        None => mem = Some((m, t)),
                        _ => {}
                    }
                }
                for (index, &t) in list.iter().enumerate() {
                    let Some(bi) = buffer_of[t] else { continue };
                    let b = &mut buffers[bi];
                    if b.continuous.is_some() {
                        warnings.push(alloc::format!(
                            "op '{}': tensor '{}' is already in a continuous group; left there",
                            op.name,
                            b.name
                        ));
                        continue;
                    }
                    b.continuous = Some(Continuous {
                        group,
                        index: u32::try_from(index)
                            .map_err(|_| Error::invalid("continuous group too large"))?,
                        outputs,
                    });
                }
                group = group.saturating_add(1);
            }
        }

        let ops = schedule
            .iter()
            .map(|&k| {
                let op = &self.ops[k];
                let mut preds: Vec<u64> = op
                    .inputs
                    .iter()
                    .filter_map(|&t| producer[t])
                    .chain(op.after.iter().copied())
                    .map(|p| step_of[p])
                    .collect();
                preds.sort_unstable();
                preds.dedup();
                let mut inputs: Vec<BufferId> = Vec::new();
                for b in op
                    .inputs
                    .iter()
                    .filter_map(|&t| buffer_of[t])
                    .map(BufferId::new)
                {
                    if !inputs.contains(&b) {
                        inputs.push(b);
                    }
                }
                OpInfo {
                    name: op.name.clone(),
                    op_type: op.op_type.clone(),
                    stream: op.stream,
                    preds,
                    inputs,
                }
            })
            .collect();
        let problem = Problem {
            name: self.name.clone(),
            buffers,
            steps,
            ops,
            weight_bytes,
        };
        problem.check()?;
        warnings.extend(unknown.iter().map(UnknownTensor::describe));
        Ok(Lowered {
            problem,
            schedule,
            tensor_of,
            warnings,
            unknown,
            views: None,
            order: ScheduleOrder::File,
            search: None,
            rewrites: None,
        })
    }

    /// Whether `schedule` runs every op once, each after the ops whose outputs it reads and
    /// those it waits for.
    fn check_order(&self, schedule: &[OpId]) -> Result<()> {
        let producer = self.producers()?;
        let mut step = alloc::vec![usize::MAX; self.ops.len()];
        for (s, &k) in schedule.iter().enumerate() {
            match step.get_mut(k.index()) {
                Some(x) if *x == usize::MAX => *x = s,
                _ => {
                    return Err(Error::invalid(alloc::format!(
                        "the op order names {k} twice or out of range"
                    )))
                }
            }
        }
        if let Some(k) = step.iter().position(|&s| s == usize::MAX) {
            return Err(Error::invalid("the op order leaves this op out")
                .at(alloc::format!("op '{}'", self.ops[k].name)));
        }
        for (k, op) in self.ops.iter().enumerate() {
            let before = op
                .inputs
                .iter()
                .filter_map(|&t| producer.get(t.index()).copied().flatten())
                .chain(op.after.iter().copied());
            for p in before {
                if step.get(p.index()).is_none_or(|&s| s >= step[k]) {
                    return Err(Error::invalid(alloc::format!(
                        "the op order runs it before op '{}', which it waits for",
                        self.ops.get(p.index()).map_or("?", |o| o.name.as_str())
                    ))
                    .at(alloc::format!("op '{}'", op.name)));
                }
            }
        }
        Ok(())
    }

    /// `given` plus a value of 1 for every symbolic dim it leaves unbound, and one warning per
    /// such dim (`dim 'batch' is not bound; using 1 (bind it with --dim batch=VALUE)`). What a user
    /// who does not care about a dim expects: the batch-1 model. Dims the file does not name
    /// ([`is_unknown_dim`]) are left unbound: nothing says they are 1, so the tensors they size
    /// are reported as of unknown size instead of planned on a guess.
    pub fn bind_unbound_to_one(&self, given: &Bindings) -> (Bindings, Vec<String>) {
        let mut b = given.clone();
        let mut warnings = Vec::new();
        for s in self.symbols().into_iter().filter(|s| !is_unknown_dim(s)) {
            if let alloc::collections::btree_map::Entry::Vacant(e) = b.entry(s) {
                warnings.push(alloc::format!(
                    "dim '{0}' is not bound; using 1 (bind it with --dim {0}=VALUE)",
                    e.key()
                ));
                e.insert(1);
            }
        }
        (b, warnings)
    }

    /// Symbolic dim names used anywhere, sorted: the names inside derived dims (see
    /// [`dim_names`]), not the expressions.
    pub fn symbols(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .tensors
            .iter()
            .filter_map(|t| t.shape.as_ref())
            .flatten()
            .flat_map(|d| match d {
                Dim::Sym(s) => dim_names(s),
                Dim::Known(_) => Vec::new(),
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    /// x -> A -> a -> B -> b -> C -> c (output); A also has a workspace.
    fn chain() -> Graph {
        let t = |n: &str, b: u64| Tensor::with_bytes(n, b);
        let op = |n: &str, i: Vec<usize>, o: Vec<usize>| Op {
            name: n.into(),
            op_type: "Relu".into(),
            inputs: TensorId::list(&i),
            outputs: TensorId::list(&o),
            ..Op::default()
        };
        let mut a = op("A", vec![0], vec![1]);
        a.workspace_bytes = vec![7];
        Graph {
            name: "chain".into(),
            tensors: vec![t("x", 10), t("a", 20), t("b", 30), t("c", 40)],
            ops: vec![a, op("B", vec![1], vec![2]), op("C", vec![2], vec![3])],
            inputs: TensorId::list(&[0]),
            outputs: TensorId::list(&[3]),
            order: Default::default(),
        }
    }

    #[test]
    fn a_graph_with_no_ops_is_refused() {
        // input x is also the output, nothing runs: there are no steps for x to be live in
        let g = Graph {
            name: "passthru".into(),
            tensors: vec![Tensor::with_bytes("x", 64)],
            inputs: TensorId::list(&[0]),
            outputs: TensorId::list(&[0]),
            ..Graph::default()
        };
        let e = g.lower(&Bindings::new()).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Invalid);
        assert_eq!(
            e.to_string(),
            "the graph has no ops: nothing runs, so there is nothing to plan"
        );
    }

    #[test]
    fn lifetimes_follow_the_schedule() {
        let l = chain().lower(&Bindings::new()).unwrap();
        let p = &l.problem;
        let got: Vec<(&str, u64, u64, u64)> = p
            .buffers
            .iter()
            .map(|b| (b.name.as_str(), b.size, b.start, b.end))
            .collect();
        assert_eq!(
            got,
            vec![
                ("x", 10, 0, 0),
                ("a", 20, 0, 1),
                ("b", 30, 1, 2),
                ("c", 40, 2, 2),
                ("A/workspace0", 7, 0, 0)
            ]
        );
        assert_eq!(p.steps, 3);
        assert_eq!(p.ops[1].preds, vec![0]);
    }

    /// B writes b in place of a (`ref_outputs`): one buffer `a` carrying both tensors' and
    /// both writers' rules (issue 30: the alias's flags were dropped).
    #[test]
    fn a_ref_output_brings_its_rules_into_the_shared_buffer() {
        let with = |f: &dyn Fn(&mut Graph)| {
            let mut g = chain();
            g.ops[1].ref_outputs = vec![(TensorId::new(2), TensorId::new(1))];
            f(&mut g);
            g.lower(&Bindings::new())
                .map(|l| l.problem.buffers[1].clone())
        };
        let plain = with(&|_| {}).unwrap();
        assert_eq!((plain.name.as_str(), plain.aliases.len()), ("a", 1));
        assert_eq!(plain.flags, Flags::default());
        let a = with(&|g| g.tensors[2].flags.zero_copy = true).unwrap();
        assert!(a.flags.zero_copy && !a.flags.no_reuse);
        let a = with(&|g| g.tensors[2].flags.atomic_clean = true).unwrap();
        assert!(a.flags.atomic_clean);
        let a = with(&|g| g.tensors[2].flags.no_reuse = true).unwrap();
        assert!(a.flags.no_reuse);
        let a = with(&|g| g.ops[1].no_reuse = true).unwrap();
        assert!(a.flags.no_reuse);
        // the host's own flags stay
        let a = with(&|g| g.tensors[1].flags.zero_copy = true).unwrap();
        assert!(a.flags.zero_copy);
        let e = with(&|g| g.tensors[2].memory_type = 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor 'b': ref output 'b' is in memory type 1, the tensor it writes in place ('a') in 0: one buffer cannot be in two arenas"
        );
    }

    /// A continuous group is one run of bytes, so in one arena: members of two memory types
    /// are refused (issue 30: GE's strategies put the whole group in the first member's type,
    /// which the validator then found above the other arena).
    #[test]
    fn a_continuous_group_in_two_memory_types_is_refused() {
        let mut g = chain();
        g.ops[2].outputs = TensorId::list(&[3, 0]);
        g.ops[2].continuous_outputs = true;
        g.inputs.clear();
        g.ops[0].inputs.clear();
        g.tensors[3].memory_type = 1;
        let e = g.lower(&Bindings::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "op 'C': continuous outputs 'c' (memory type 1) and 'x' (memory type 0) must be in one memory type: a group is one run of bytes"
        );
        g.tensors[0].memory_type = 1;
        assert!(g.lower(&Bindings::new()).is_ok());
    }

    /// zero_copy_reuse relaxes a user buffer's rule, so a merged buffer has it only when every
    /// graph input or output in it has it.
    #[test]
    fn a_ref_output_keeps_zero_copy_reuse_only_when_all_its_io_has_it() {
        // x (graph input) written in place by A's output a, which is a graph output
        let mut g = chain();
        g.ops[0].ref_outputs = vec![(TensorId::new(1), TensorId::new(0))];
        g.outputs = TensorId::list(&[1, 3]);
        g.tensors[1].flags.zero_copy_reuse = true;
        let l = g.lower(&Bindings::new()).unwrap();
        assert!(!l.problem.buffers[0].flags.zero_copy_reuse);
        g.tensors[0].flags.zero_copy_reuse = true;
        let l = g.lower(&Bindings::new()).unwrap();
        assert!(l.problem.buffers[0].flags.zero_copy_reuse);
    }

    #[test]
    fn out_of_order_file_is_scheduled_by_kahn() {
        let mut g = chain();
        g.ops.swap(0, 2); // C, B, A
        assert_eq!(g.schedule().unwrap(), OpId::list(&[2, 1, 0]));
    }

    #[test]
    fn cycle_is_named() {
        let mut g = chain();
        g.ops[0].inputs = TensorId::list(&[3]); // A reads c, written by C, which depends on A
        let e = g.schedule().unwrap_err().to_string();
        assert!(e.contains("cycle"), "{e}");
    }

    #[test]
    fn symbolic_size_needs_binding() {
        let t = Tensor {
            name: "x".into(),
            dtype: Some(DType::Float32),
            shape: Some(vec![Dim::Sym("batch".into()), Dim::Known(3)]),
            ..Tensor::default()
        };
        assert_eq!(t.size(&Bindings::new()).unwrap(), None);
        let b: Bindings = [("batch".into(), 4u64)].into_iter().collect();
        assert_eq!(t.size(&b).unwrap(), Some(48));
        let e = Tensor {
            shape: Some(vec![
                Dim::Sym("(h-3)/2+1".into()),
                Dim::Sym("max(h,[a.b])".into()),
            ]),
            ..t.clone()
        };
        let hb: Bindings = [("h".into(), 9u64), ("a.b".into(), 2u64)]
            .into_iter()
            .collect();
        assert_eq!(e.bound_shape(&hb), Some(vec![4, 9]));
        assert_eq!(eval_dim("h-10", &hb), None);
        assert_eq!(eval_dim("h+", &hb), None);
        let huge: Bindings = [("batch".into(), u64::MAX)].into_iter().collect();
        assert!(t
            .size(&huge)
            .unwrap_err()
            .to_string()
            .contains("tensor 'x'"));
    }
}

#[cfg(test)]
mod dim_name_tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn derived_dims_report_the_names_they_use() {
        assert_eq!(dim_names("batch"), vec!["batch"]);
        assert_eq!(dim_names("(h-3)/2+1"), vec!["h"]);
        assert_eq!(dim_names("max(h,w)*[seq len]"), vec!["h", "seq len", "w"]);
        // not an expression: the name itself
        assert_eq!(dim_names("?input.0"), vec!["?input.0"]);
        let mut b = Bindings::new();
        b.insert("h".into(), 11);
        assert_eq!(eval_dim("(h-3)/2+1", &b), Some(5));
    }
}
