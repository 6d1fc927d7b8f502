//! Views that alias their input, as runtimes execute them: a view op's output shares its
//! input's memory when the input dies at that op, so the two tensors are one buffer.
//!
//! Off by default (per-tensor figures stay comparable with per-tensor references); with
//! it, the difference is what a runtime saves this way. The ops, and where the rule comes
//! from:
//!
//! | op | onnxruntime | TFLite | GE |
//! |---|---|---|---|
//! | `Reshape` | CPU kernel registered with `.Alias(0, 0)` (`providers/cpu/tensor/reshape.cc`) | in-place reshape (`kernels/reshape.cc`, output shares input) | ref/no-task op, one symbol (`GraphUtils::GetRefMapping`) |
//! | `Flatten` | `.Alias(0, 0)` (`flatten.cc`) | — (a reshape) | no-task |
//! | `Squeeze` | `.Alias(0, 0)` (`squeeze.cc`) | in-place squeeze | no-task |
//! | `Unsqueeze` | `.Alias(0, 0)` (`unsqueeze.cc`) | `EXPAND_DIMS` shares | no-task |
//! | `Identity` | `.Alias(0, 0)` (`identity_op.cc`) | — | passthrough, one symbol |
//!
//! Checked line by line: onnxruntime's `reshape.cc` (CPU and CUDA) registers `.Alias(0, 0)`
//! for every Reshape version. The other cells follow the same kernels' registrations and the
//! runtimes' documented behaviour; they were not re-read for this table.
//!
//! The input must die there (its last consumer is the view): otherwise a runtime copies or
//! keeps both, and so does this planner. Weights are never planned, so a view of a weight
//! is not aliased.

use alloc::collections::BTreeMap;

use crate::graph::{Graph, Lowered, TensorId};
use crate::problem::BufferKind;

/// Op types whose output 0 may alias input 0 (see the module table).
pub const VIEW_OPS: &[&str] = &["Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"];

/// What aliasing the views saved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AliasReport {
    /// View outputs merged into their input's buffer.
    pub tensors: usize,
    /// Sum of their sizes, bytes: the no-reuse total drops by exactly this.
    pub bytes: u64,
}

/// Merges each view output into its input's buffer where the input dies at the view (in
/// schedule order, so chains of views become one buffer). `lowered` must come from
/// `graph` (its `tensor_of` maps buffers to the graph's tensors).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if the saved bytes exceed `u64` (cannot happen for a
/// problem that passed [`crate::Problem::check`]).
pub fn alias_views(graph: &Graph, lowered: &mut Lowered) -> crate::Result<AliasReport> {
    let mut buf_of: BTreeMap<TensorId, usize> = BTreeMap::new();
    for (b, t) in lowered.tensor_of.iter().enumerate() {
        if let Some(t) = t {
            buf_of.insert(*t, b);
        }
    }
    let buffers = &mut lowered.problem.buffers;
    let mut removed = alloc::vec![false; buffers.len()];
    let mut report = AliasReport::default();
    for (step, &k) in lowered.schedule.iter().enumerate() {
        let op = &graph.ops[k];
        if !VIEW_OPS.contains(&op.op_type.as_str()) {
            continue;
        }
        let (Some(&tin), Some(&tout)) = (op.inputs.first(), op.outputs.first()) else {
            continue;
        };
        let (Some(&host), Some(&view)) = (buf_of.get(&tin), buf_of.get(&tout)) else {
            continue; // a weight or a tensor of unknown size
        };
        let step = step as u64;
        let h = &buffers[host];
        let v = &buffers[view];
        let dies_here = h.end == step && h.kind != BufferKind::GraphOutput;
        if host == view || !dies_here || v.size != h.size || v.gear != h.gear {
            continue;
        }
        let (v_end, v_size, v_kind, v_name) = (v.end, v.size, v.kind, v.name.clone());
        let v_aliases = v.aliases.clone();
        let h = &mut buffers[host];
        h.end = h.end.max(v_end);
        h.aliases.push(v_name);
        h.aliases.extend(v_aliases);
        if v_kind == BufferKind::GraphOutput {
            h.kind = BufferKind::GraphOutput;
        }
        removed[view] = true;
        buf_of.insert(tout, host);
        report.tensors += 1;
        report.bytes = crate::error::add(report.bytes, v_size, "aliased view bytes")?;
    }
    let mut keep = removed.iter().map(|r| !r);
    buffers.retain(|_| keep.next().unwrap_or(true));
    let mut keep = removed.iter().map(|r| !r);
    lowered.tensor_of.retain(|_| keep.next().unwrap_or(true));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Dim, Op, Tensor};
    use crate::{Bindings, DType};
    use alloc::string::String;
    use alloc::vec::Vec;

    /// x -> Relu -> a -> Reshape -> b -> Relu -> y, all 1x64 f32 (256 B).
    fn chain(extra_reader: bool) -> Graph {
        let t = |n: &str| Tensor {
            name: n.into(),
            dtype: Some(DType::Float32),
            shape: Some(alloc::vec![Dim::Known(1), Dim::Known(64)]),
            ..Tensor::default()
        };
        let op = |n: &str, ty: &str, i: Vec<usize>, o: Vec<usize>| Op {
            name: n.into(),
            op_type: ty.into(),
            inputs: TensorId::list(&i),
            outputs: TensorId::list(&o),
            ..Op::default()
        };
        let mut ops = alloc::vec![
            op("r0", "Relu", alloc::vec![0], alloc::vec![1]),
            op("v", "Reshape", alloc::vec![1], alloc::vec![2]),
            op("r1", "Relu", alloc::vec![2], alloc::vec![3]),
        ];
        if extra_reader {
            ops.push(op("late", "Relu", alloc::vec![1], alloc::vec![4]));
        }
        Graph {
            name: "chain".into(),
            tensors: ["x", "a", "b", "y", "z"].iter().map(|n| t(n)).collect(),
            ops,
            inputs: TensorId::list(&[0]),
            outputs: if extra_reader {
                TensorId::list(&[3, 4])
            } else {
                TensorId::list(&[3])
            },
            order: Default::default(),
        }
    }

    #[test]
    fn a_view_of_a_dying_input_shares_its_buffer() {
        let g = chain(false);
        let mut l = g.lower(&Bindings::new()).unwrap();
        assert_eq!(l.problem.buffers.len(), 4);
        let r = alias_views(&g, &mut l).unwrap();
        // b (256 B) joins a: 3 buffers, a's lifetime now ends where b's did (step 2).
        assert_eq!(
            r,
            AliasReport {
                tensors: 1,
                bytes: 256
            }
        );
        assert_eq!(l.problem.buffers.len(), 3);
        let a = l.problem.buffers.iter().find(|b| b.name == "a").unwrap();
        assert_eq!((a.start, a.end), (0, 2));
        assert_eq!(a.aliases, alloc::vec![String::from("b")]);
        assert_eq!(l.tensor_of.len(), 3);
        l.problem.check().unwrap();
    }

    #[test]
    fn a_view_of_an_input_read_later_is_not_aliased() {
        let g = chain(true);
        let mut l = g.lower(&Bindings::new()).unwrap();
        let n = l.problem.buffers.len();
        let r = alias_views(&g, &mut l).unwrap();
        assert_eq!(r, AliasReport::default());
        assert_eq!(l.problem.buffers.len(), n);
    }
}
