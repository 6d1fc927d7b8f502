//! Graph inputs and outputs as GE sees them at run time: where each sits in the plan, which
//! ops take its address (what a new user buffer must refresh), and whether a graph output is
//! written straight into the user's buffer or copied there after the run.
//!
//! GE's rules (`docs/ge-memory-planning.md` §4): a root graph's inputs and outputs are
//! zero-copy user buffers, and every task taking their address is refreshed with the user's
//! address each run (block_mem_zero_copy.cc `IsNodeAndPeerNodeTaskSupportZeroCopy`). They are
//! not zero-copy, so GE plans them in its own memory and copies, when
//! - the tensor feeds an op that needs its inputs adjacent (block_mem_assigner.cc
//!   `IsZeroCopyBlock`: "never zero copy for data flow to require-continuous-input node");
//! - an output shares its address with a graph input (a ref or view of an input: one symbol,
//!   `GetOutputFlowToNetoutputNum` sees an input anchor in it);
//! - an output is one of a continuous-output group (one block for all the op's outputs; the
//!   user's buffers are not adjacent: `ApplyContinuousMemory`);
//! - an output is also read by another op (the seeds' reading, issue 27: the op's later
//!   readers keep the tensor in the model's memory, and the result is copied out).
//!
//! A copied tensor costs its raw bytes once per run (host→device for an input, device→host
//! for an output).

use alloc::string::String;
use alloc::vec::Vec;

use crate::graph::{Graph, Lowered, TensorId};
use crate::plan::Plan;
use crate::problem::BufferId;

/// Why a graph input or output is copied rather than zero-copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum CopyReason {
    /// It feeds an op whose inputs must be adjacent (continuous inputs).
    ContinuousConsumer,
    /// The output shares its address with a graph input (a ref or view of an input).
    RefOfInput,
    /// The output is one of its op's continuous outputs.
    ContinuousOutput,
    /// The output is also read by another op.
    ReadAgain,
}

impl CopyReason {
    /// A short phrase for tables.
    pub fn phrase(self) -> &'static str {
        match self {
            CopyReason::ContinuousConsumer => "feeds a continuous-input op",
            CopyReason::RefOfInput => "ref or view of a graph input",
            CopyReason::ContinuousOutput => "continuous output",
            CopyReason::ReadAgain => "read again by another op",
        }
    }
}

/// One graph input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GraphIo {
    /// Tensor name.
    pub name: String,
    /// `true` for a graph input, `false` for an output.
    pub input: bool,
    /// Offset of its buffer in the plan, bytes (`None` if it has no buffer: a weight).
    pub offset: Option<u64>,
    /// Planned size of its buffer, bytes.
    pub size: u64,
    /// Ops whose task arguments take its address, in schedule order: the producer (an
    /// output) and every reader.
    pub address_ops: Vec<String>,
    /// `true`: the op writes (or reads) the user's buffer directly; `false`: a copy.
    pub zero_copy: bool,
    /// Why it is copied (empty when zero-copy).
    pub copy_reasons: Vec<CopyReason>,
    /// Bytes copied per run: its raw size when copied, else 0.
    pub copied_bytes: u64,
}

/// The buffer holding tensor `t` (its own, or the one it is a ref alias of).
fn buffer_of(lowered: &Lowered, name: &str) -> Option<BufferId> {
    lowered
        .problem
        .buffers
        .iter()
        .position(|b| b.name == name || b.aliases.iter().any(|a| a == name))
        .map(BufferId::new)
}

/// Every graph input, then every graph output, of `graph` in `plan` (planned on `lowered`).
/// A tensor that is both is listed twice.
pub fn graph_io(graph: &Graph, lowered: &Lowered, plan: &Plan) -> Vec<GraphIo> {
    let is_input = |t: TensorId| graph.inputs.contains(&t);
    let mut out = Vec::new();
    let io = graph
        .inputs
        .iter()
        .map(|&t| (t, true))
        .chain(graph.outputs.iter().map(|&t| (t, false)));
    for (t, input) in io {
        let Some(tensor) = graph.tensors.get(t.index()) else {
            continue;
        };
        let buf = buffer_of(lowered, &tensor.name);
        let (offset, size, raw) = match buf {
            Some(i) => (
                plan.offsets.get(i.index()).copied(),
                plan.sizes.get(i.index()).copied().unwrap_or(0),
                lowered.problem.buffers[i].size,
            ),
            None => (None, 0, 0),
        };
        // the buffer's tensors: this one and its ref aliases (one GE symbol)
        let names: Vec<&str> = match buf {
            Some(i) => {
                let b = &lowered.problem.buffers[i];
                core::iter::once(b.name.as_str())
                    .chain(b.aliases.iter().map(String::as_str))
                    .collect()
            }
            None => alloc::vec![tensor.name.as_str()],
        };
        let in_symbol = |x: TensorId| {
            graph
                .tensors
                .get(x.index())
                .is_some_and(|tt| names.contains(&tt.name.as_str()))
        };
        let mut address_ops = Vec::new();
        let mut reasons = Vec::new();
        let mut readers = 0usize;
        for &k in &lowered.schedule {
            let Some(op) = graph.ops.get(k.index()) else {
                continue;
            };
            let reads = op.inputs.contains(&t);
            let writes = op.outputs.iter().any(|&x| in_symbol(x));
            if reads || writes {
                address_ops.push(op.name.clone());
            }
            if reads {
                readers += 1;
                if op.continuous_inputs && !reasons.contains(&CopyReason::ContinuousConsumer) {
                    reasons.push(CopyReason::ContinuousConsumer);
                }
            }
            if !input && op.outputs.contains(&t) && op.continuous_outputs && op.outputs.len() > 1 {
                reasons.push(CopyReason::ContinuousOutput);
            }
        }
        if !input {
            let shares_input = graph.tensors.iter().enumerate().any(|(x, tt)| {
                let x = TensorId::new(x);
                is_input(x) && names.contains(&tt.name.as_str())
            });
            if shares_input {
                reasons.push(CopyReason::RefOfInput);
            }
            if readers > 0 {
                reasons.push(CopyReason::ReadAgain);
            }
        }
        let zero_copy = reasons.is_empty() && buf.is_some();
        out.push(GraphIo {
            name: tensor.name.clone(),
            input,
            offset,
            size,
            address_ops,
            zero_copy,
            copied_bytes: if reasons.is_empty() { 0 } else { raw },
            copy_reasons: reasons,
        });
    }
    out
}
