//! Pooling.

use super::common::*;
use super::conv::conv_like;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("MaxPool", pool),
    ("AveragePool", pool),
    ("LpPool", pool),
    ("GlobalAveragePool", global_pool),
    ("GlobalMaxPool", global_pool),
    ("GlobalLpPool", global_pool),
];

/// MaxPool, AveragePool, LpPool: `[N, C]` + windowed spatial dims; MaxPool Indices int64.
pub(super) fn pool(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    if x.len() < 3 {
        return hard("pooling input rank < 3");
    }
    let kernel: Vec<V> = attr_ints(n, "kernel_shape")
        .or_why(|| "no kernel_shape".into())?
        .into_iter()
        .map(V::K)
        .collect();
    let mut s = alloc::vec![x[0].clone(), x[1].clone()];
    s.extend(conv_like(n, x, &kernel, false)?);
    let mut o = alloc::vec![out(dt0, s.clone())];
    if n.output.len() > 1 {
        o.push(out(Some(DType::Int64), s));
    }
    Ok(o)
}

/// Global pools: spatial dims become 1.
pub(super) fn global_pool(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let mut s = x.clone();
    s.iter_mut().skip(2).for_each(|d| *d = V::K(1));
    Ok(alloc::vec![out(dt0, s)])
}
