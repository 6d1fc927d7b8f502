//! Graph rewrites that change the problem the way a named runtime does (`--fuse`,
//! `--in-place`): what a runtime saves by fusing ops or by writing an op's output over a
//! dying input. Off by default, so per-tensor figures stay comparable with per-tensor
//! references; each rewrite models one runtime's documented behaviour:
//!
//! | rewrite | what | runtime |
//! |---|---|---|
//! | `--fuse pad` | `PAD`/`PADV2`/`Pad` folded into its consumers: they read the unpadded input, the padded tensor is never stored | TinyEngine (`TfliteConvertor._convert_PAD`: the pad indices go to the next conv) |
//! | `--fuse quantize` | a `QUANTIZE`/`QuantizeLinear` of a graph input dropped: its output is the graph input, the float input never stored | TinyEngine (`constant.SKIP_OPs`: the quantized input is fed directly) |
//! | `--fuse activation` | a `RELU`/`RELU6`/`Relu`/`Clip`/... op folded into the op producing its input, when it is that tensor's only reader | TFLite converter fused activations, ONNX Runtime `ConvActivationFusion` |
//! | `--in-place elementwise` | an element-wise op's output takes the buffer of an input of the same size that dies at the op | ONNX Runtime (`MayInplace` kernels: Add, Relu, ...), TFLite (`kTfLiteInplaceOp*`) |
//! | `--in-place depthwise` | a depthwise convolution's output takes its input's buffer when the input dies there (the buffer keeps the larger size) | TinyEngine (`GeneralMemoryScheduler.allocateMemory`, int8 depthwise in place) |
//!
//! Fusions remove ops from the graph (tensor ids stay, so [`crate::Lowered::tensor_of`] still
//! names the graph's tensors); in-place merges an output into its input's buffer after lowering,
//! as [`super::views::alias_views`] does for views. A merged buffer lists its other tensors in
//! [`crate::Buffer::aliases`]: they are one buffer to every strategy and to the validator,
//! which therefore sees no overlap between distinct buffers.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Graph, Lowered, OpId, TensorId};
use crate::error::{Error, Result};
use crate::problem::BufferKind;

/// Which fusions to apply (`--fuse pad,quantize,activation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fuse {
    /// PAD folded into its consumers (TinyEngine).
    pub pad: bool,
    /// The QUANTIZE of a graph input dropped (TinyEngine).
    pub quantize: bool,
    /// An activation folded into its producer (TFLite, ONNX Runtime).
    pub activation: bool,
}

/// Which ops write in place (`--in-place elementwise,depthwise`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InPlace {
    /// Element-wise ops (ONNX Runtime, TFLite).
    pub elementwise: bool,
    /// Depthwise convolutions (TinyEngine).
    pub depthwise: bool,
}

impl Fuse {
    /// Parses `pad,quantize,activation` (any subset, comma separated; `none` for none).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] naming an unknown item.
    pub fn parse(list: &str) -> Result<Self> {
        let mut f = Fuse::default();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item {
                "pad" => f.pad = true,
                "quantize" => f.quantize = true,
                "activation" => f.activation = true,
                "none" => {}
                other => {
                    return Err(Error::bad_option(alloc::format!(
                        "--fuse {other}: unknown (known: pad, quantize, activation)"
                    )))
                }
            }
        }
        Ok(f)
    }

    /// `pad,quantize` (the names [`Fuse::parse`] reads), empty for none.
    pub fn names(&self) -> String {
        let mut v: Vec<&str> = Vec::new();
        [
            (self.pad, "pad"),
            (self.quantize, "quantize"),
            (self.activation, "activation"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .for_each(|(_, n)| v.push(n));
        v.join(",")
    }

    /// Whether any fusion is on.
    pub fn any(&self) -> bool {
        self.pad || self.quantize || self.activation
    }
}

impl InPlace {
    /// Parses `elementwise,depthwise` (any subset; `none` for none).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] naming an unknown item.
    pub fn parse(list: &str) -> Result<Self> {
        let mut f = InPlace::default();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item {
                "elementwise" => f.elementwise = true,
                "depthwise" => f.depthwise = true,
                "none" => {}
                other => {
                    return Err(Error::bad_option(alloc::format!(
                        "--in-place {other}: unknown (known: elementwise, depthwise)"
                    )))
                }
            }
        }
        Ok(f)
    }

    /// `elementwise,depthwise` (the names [`InPlace::parse`] reads), empty for none.
    pub fn names(&self) -> String {
        let mut v: Vec<&str> = Vec::new();
        if self.elementwise {
            v.push("elementwise");
        }
        if self.depthwise {
            v.push("depthwise");
        }
        v.join(",")
    }

    /// Whether any in-place rule is on.
    pub fn any(&self) -> bool {
        self.elementwise || self.depthwise
    }
}

/// What the rewrites did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RewriteReport {
    /// The fusions asked for (`pad,quantize`; [`Fuse::names`]): `memplan validate --model`
    /// loads the model again with them.
    #[cfg_attr(feature = "serde", serde(default))]
    pub fuse: String,
    /// The in-place rules asked for (`depthwise`; [`InPlace::names`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub in_place_ops: String,
    /// Ops removed by fusion, by name.
    pub fused: Vec<String>,
    /// Outputs written over their input's buffer: `(output, input)` tensor names.
    pub in_place: Vec<(String, String)>,
}

/// An op type without case and underscores: `DEPTHWISE_CONV_2D` and `DepthwiseConv2d` read
/// the same.
fn norm(op_type: &str) -> String {
    op_type
        .chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

const PAD_OPS: &[&str] = &["pad", "padv2"];
const QUANTIZE_OPS: &[&str] = &["quantize", "quantizelinear"];
/// Activations a producer can apply as it writes (TFLite fused activations; ONNX Runtime's
/// Conv + activation fusion).
const ACTIVATION_OPS: &[&str] = &[
    "relu",
    "relu6",
    "relun1to1",
    "clip",
    "leakyrelu",
    "hardswish",
    "sigmoid",
    "logistic",
    "tanh",
];
/// Element-wise ops whose output may take an input's buffer.
const ELEMENTWISE_OPS: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "relu",
    "relu6",
    "clip",
    "leakyrelu",
    "hardswish",
    "hardsigmoid",
    "sigmoid",
    "logistic",
    "tanh",
    "abs",
    "neg",
    "exp",
    "log",
    "sqrt",
    "erf",
    "gelu",
    "squareddifference",
    "maximum",
    "minimum",
    "pow",
];
const DEPTHWISE_OPS: &[&str] = &["depthwiseconv2d"];

/// `graph` with the fusions of `fuse` applied, and the names of the ops removed. Tensor ids
/// are kept (removed tensors are simply no longer read or written).
///
/// # Errors
/// As [`Graph::producers`] (a tensor written twice).
pub fn fuse(graph: &Graph, fuse: &Fuse) -> Result<(Graph, Vec<String>)> {
    let mut g = graph.clone();
    if !fuse.any() {
        return Ok((g, Vec::new()));
    }
    let mut removed = alloc::vec![false; g.ops.len()];
    let readers = |g: &Graph, t: TensorId| -> Vec<usize> {
        (0..g.ops.len())
            .filter(|&k| g.ops[k].inputs.contains(&t))
            .collect()
    };
    let producer = g.producers()?;
    for k in 0..g.ops.len() {
        let ty = norm(&g.ops[k].op_type);
        let (Some(&input), Some(&output)) = (g.ops[k].inputs.first(), g.ops[k].outputs.first())
        else {
            continue;
        };
        if g.ops[k].outputs.len() != 1 || g.outputs.contains(&output) {
            continue;
        }
        if fuse.pad && PAD_OPS.contains(&ty.as_str()) {
            // consumers read the unpadded input
            for r in readers(&g, output) {
                for x in &mut g.ops[r].inputs {
                    if *x == output {
                        *x = input;
                    }
                }
            }
            removed[k] = true;
        } else if fuse.quantize
            && QUANTIZE_OPS.contains(&ty.as_str())
            && g.inputs.contains(&input)
            && readers(&g, input) == [k]
            && !g.outputs.contains(&input)
        {
            // the quantized tensor is the graph input
            for x in &mut g.inputs {
                if *x == input {
                    *x = output;
                }
            }
            removed[k] = true;
        } else if fuse.activation && ACTIVATION_OPS.contains(&ty.as_str()) {
            let Some(p) = producer[input] else { continue };
            if removed[p] || readers(&g, input) != [k] || g.outputs.contains(&input) {
                continue;
            }
            // the producer writes the activated tensor directly
            for x in &mut g.ops[p].outputs {
                if *x == input {
                    *x = output;
                }
            }
            removed[k] = true;
        }
    }
    let names: Vec<String> = (0..g.ops.len())
        .filter(|&k| removed[k])
        .map(|k| g.ops[k].name.clone())
        .collect();
    // drop the removed ops; control edges to them go to what they waited for
    let mut new_id: Vec<Option<OpId>> = alloc::vec![None; g.ops.len()];
    let mut n = 0;
    for (k, slot) in new_id.iter_mut().enumerate() {
        if !removed[k] {
            *slot = Some(OpId::new(n));
            n += 1;
        }
    }
    let old = core::mem::take(&mut g.ops);
    let afters: Vec<Vec<OpId>> = old.iter().map(|o| o.after.clone()).collect();
    for (k, mut op) in old.into_iter().enumerate() {
        if removed[k] {
            continue;
        }
        let mut after = Vec::new();
        let mut stack = op.after.clone();
        while let Some(p) = stack.pop() {
            match new_id.get(p.index()).copied().flatten() {
                Some(q) => after.push(q),
                None => stack.extend(afters.get(p.index()).cloned().unwrap_or_default()),
            }
        }
        after.sort_unstable();
        after.dedup();
        op.after = after;
        g.ops.push(op);
    }
    Ok((g, names))
}

/// Merges each in-place op's output into the buffer of its input when the input dies at the
/// op (in schedule order, so chains share one buffer): element-wise ops when the sizes are
/// equal, depthwise convolutions whatever the sizes (the buffer keeps the larger). Returns the
/// `(output, input)` tensor names merged. `lowered` must come from `graph`.
///
/// # Errors
/// None today; kept fallible as [`super::views::alias_views`].
pub fn in_place(
    graph: &Graph,
    lowered: &mut Lowered,
    rule: &InPlace,
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    if !rule.any() {
        return Ok(out);
    }
    let mut buf_of: BTreeMap<TensorId, usize> = BTreeMap::new();
    for (b, t) in lowered.tensor_of.iter().enumerate() {
        if let Some(t) = t {
            buf_of.insert(*t, b);
        }
    }
    let buffers = &mut lowered.problem.buffers;
    let mut removed = alloc::vec![false; buffers.len()];
    let mut into: Vec<usize> = (0..buffers.len()).collect();
    for (step, &k) in lowered.schedule.iter().enumerate() {
        let op = &graph.ops[k];
        let ty = norm(&op.op_type);
        let elementwise = rule.elementwise && ELEMENTWISE_OPS.contains(&ty.as_str());
        let depthwise = rule.depthwise && DEPTHWISE_OPS.contains(&ty.as_str());
        if !elementwise && !depthwise {
            continue;
        }
        let Some(&tout) = op.outputs.first() else {
            continue;
        };
        let Some(&view) = buf_of.get(&tout) else {
            continue;
        };
        // depthwise: the data input (input 0); element-wise: the first input that qualifies
        let candidates: Vec<TensorId> = if depthwise {
            op.inputs.first().copied().into_iter().collect()
        } else {
            op.inputs.clone()
        };
        let step = step as u64;
        let host = candidates.into_iter().find_map(|tin| {
            let &h = buf_of.get(&tin)?;
            let hb = &buffers[h];
            let vb = &buffers[view];
            let ok = h != view
                && !removed[h]
                && hb.end == step
                && hb.kind != BufferKind::GraphOutput
                && hb.kind != BufferKind::GraphInput
                && hb.gear == vb.gear
                && hb.memory_type == vb.memory_type
                && (depthwise || hb.size == vb.size);
            ok.then_some((tin, h))
        });
        let Some((tin, host)) = host else { continue };
        let v = buffers[view].clone();
        let h = &mut buffers[host];
        h.end = h.end.max(v.end);
        h.size = h.size.max(v.size);
        h.aliases.push(v.name.clone());
        h.aliases.extend(v.aliases);
        h.readers.extend(v.readers);
        h.readers.sort_unstable();
        h.readers.dedup();
        if v.kind == BufferKind::GraphOutput {
            h.kind = BufferKind::GraphOutput;
        }
        removed[view] = true;
        into[view] = host;
        buf_of.insert(tout, host);
        out.push((
            graph.tensors[tout].name.clone(),
            graph.tensors[tin].name.clone(),
        ));
    }
    let mut keep = removed.iter().map(|r| !r);
    buffers.retain(|_| keep.next().unwrap_or(true));
    let mut keep = removed.iter().map(|r| !r);
    lowered.tensor_of.retain(|_| keep.next().unwrap_or(true));
    // ops' input lists name buffers by index: a merged buffer is its host's, renumbered
    let mut new_index = alloc::vec![0usize; removed.len()];
    let mut n = 0;
    for (i, r) in removed.iter().enumerate() {
        if !r {
            new_index[i] = n;
            n += 1;
        }
    }
    let host_of = |mut i: usize| {
        while into[i] != i {
            i = into[i];
        }
        new_index[i]
    };
    for op in &mut lowered.problem.ops {
        let mut inputs: Vec<crate::problem::BufferId> = Vec::new();
        for b in &op.inputs {
            let nb = crate::problem::BufferId::new(host_of(b.index()));
            if !inputs.contains(&nb) {
                inputs.push(nb);
            }
        }
        op.inputs = inputs;
    }
    Ok(out)
}
