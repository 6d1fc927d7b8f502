//! Losses: SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("SoftmaxCrossEntropyLoss", loss),
    ("NegativeLogLikelihoodLoss", loss),
];

/// Loss: a scalar (`reduction` mean or sum, the default mean) or the target's shape
/// (`none`); SoftmaxCrossEntropyLoss's log_prob (output 1) is like the scores.
pub(super) fn loss(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = dtype(ins, 0);
    let red = attr_s(n, "reduction").unwrap_or_else(|| "mean".into());
    let s = if red == "none" {
        shape(ins, 1)?.clone()
    } else {
        Vec::new()
    };
    let mut o = alloc::vec![out(dt, s)];
    if n.output.len() > 1 {
        o.push(out(dt, shape(ins, 0)?.clone()));
    }
    Ok(o)
}
