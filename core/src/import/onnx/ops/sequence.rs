//! Sequence and optional ops: their sequence/optional values are not tensors (not planned);
//! the tensors they yield (SequenceAt, ConcatFromSequence) have no inferable shape here.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("SequenceEmpty", sequence),
    ("SequenceConstruct", sequence),
    ("SequenceInsert", sequence),
    ("SequenceErase", sequence),
    ("SplitToSequence", sequence),
    ("SequenceMap", sequence),
    ("Optional", optional),
    ("SequenceLength", sequence_length),
    ("OptionalHasElement", has_element),
];

fn non_tensor(kind: &'static str, n: &NodeProto) -> Vec<O> {
    n.output
        .iter()
        .map(|_| O {
            non_tensor: Some(kind),
            ..O::default()
        })
        .collect()
}

/// Ops whose outputs are sequences.
pub(super) fn sequence(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(non_tensor("sequence", n))
}

/// Optional: an optional value.
pub(super) fn optional(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(non_tensor("optional", n))
}

/// SequenceLength: an int64 scalar.
pub(super) fn sequence_length(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(Some(DType::Int64), Vec::new())])
}

/// OptionalHasElement: a bool scalar.
pub(super) fn has_element(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(Some(DType::Bool), Vec::new())])
}
