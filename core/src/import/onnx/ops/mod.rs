//! Per-op shape, dtype and small-value inference, as a table.
//!
//! Each family module (`elementwise`, `shape`, `conv`, ...) holds small functions of type
//! [`Infer`] and a table `OPS: &[(op_type, Infer)]`; [`DOMAINS`] maps an ONNX domain to the
//! families that serve it. To support a new op: write `fn my_op(n, opset, ins) -> R<Vec<O>>`
//! in the family it belongs to (helpers in `common`), add `("MyOp", my_op)` to that family's
//! `OPS`, and add a small test. Opset differences are handled inside the function (`opset`
//! is the model's default-domain version). An op that cannot be inferred returns
//! [`Fail::Why`] (its outputs stay unknown, with a warning); malformed input returns
//! [`Fail::Hard`] (the import fails, naming the node).
//!
//! If, Loop and Scan need the importer (subgraphs) and live in `control`.

mod attention;
pub(crate) mod common;
mod contrib;
mod control;
mod conv;
mod elementwise;
mod generator;
mod image;
mod indexing;
mod linalg;
mod loss;
mod ml;
mod more;
pub(crate) mod nchwc;
mod norm;
mod pool;
mod quant;
mod random;
mod reduce;
mod rnn;
mod sequence;
mod shape;
mod signal;
mod training;

pub(crate) use common::{attr_i, attr_ints, tensor_value, to_usize, Elem, Fail, Infer, O};
pub(crate) use control::control_flow;

use common::{format, why, Info, NodeProto, Vec, R};

/// A family's table: `(op_type, inference)`.
type Table = &'static [(&'static str, Infer)];

/// The default domain (`""`, alias `ai.onnx`), by family.
const DEFAULT: &[Table] = &[
    elementwise::OPS,
    norm::OPS,
    generator::OPS,
    shape::OPS,
    indexing::OPS,
    linalg::OPS,
    conv::OPS,
    pool::OPS,
    reduce::OPS,
    image::OPS,
    rnn::OPS,
    quant::OPS,
    attention::OPS,
    loss::OPS,
    signal::OPS,
    random::OPS,
    sequence::OPS,
    more::OPS,
];

/// Domains the importer knows, each with its families.
pub(crate) const DOMAINS: &[(&str, &[Table])] = &[
    ("", DEFAULT),
    ("ai.onnx", DEFAULT),
    ("ai.onnx.ml", &[ml::OPS]),
    ("com.microsoft", &[contrib::OPS]),
    ("com.microsoft.nchwc", &[nchwc::OPS]),
    ("ai.onnx.preview.training", &[training::OPS]),
];

/// The inference of `op_type` in `domain`, if the importer has one.
pub(crate) fn lookup(domain: &str, op_type: &str) -> Option<Infer> {
    DOMAINS
        .iter()
        .filter(|(d, _)| *d == domain)
        .flat_map(|(_, fams)| fams.iter())
        .flat_map(|t| t.iter())
        .find(|(name, _)| *name == op_type)
        .map(|&(_, f)| f)
}

/// Infers a non-control-flow node: its outputs, a reason they stay unknown, or a hard error.
pub(crate) fn infer(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    match lookup(&n.domain, &n.op_type) {
        Some(f) => f(n, opset, ins),
        None if DOMAINS.iter().any(|(d, _)| *d == n.domain) => {
            why(format!("op '{}' is not supported", n.op_type))
        }
        None => why(format!("domain '{}' is not supported", n.domain)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op name appears once per domain: a second entry would never be reached.
    #[test]
    fn no_op_is_registered_twice() {
        for (d, fams) in DOMAINS {
            let mut names: Vec<&str> = fams.iter().flat_map(|t| t.iter().map(|e| e.0)).collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), n, "duplicate op in domain '{d}'");
        }
    }
}
