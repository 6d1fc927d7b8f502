//! The `ai.onnx.preview.training` domain: optimizers whose outputs are updated copies of
//! their tensor inputs (after R and T).

use super::common::*;

/// `(op_type, inference)` of this domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Adagrad", optimizer),
    ("Adam", optimizer),
    ("Momentum", optimizer),
];

/// Adagrad (X, G, H), Momentum (X, G, V), Adam (X, G, V, H): n tensors per group after R and
/// T; output j is the new value of tensor j mod n of its group, which has X_(j mod n)'s shape.
pub(super) fn optimizer(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let groups = match n.op_type.as_str() {
        "Adam" => 4,
        _ => 3,
    };
    let per = ins.len().saturating_sub(2) / groups;
    if per == 0 {
        return hard("no tensors to update");
    }
    (0..n.output.len())
        .map(|j| {
            let k = 2 + j % per;
            Ok(out(dtype(ins, k), shape(ins, k)?.clone()))
        })
        .collect()
}
