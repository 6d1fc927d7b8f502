//! Random generators: RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("RandomUniform", random),
    ("RandomNormal", random),
    ("RandomUniformLike", random_like),
    ("RandomNormalLike", random_like),
    ("Bernoulli", random_like),
    ("Multinomial", multinomial),
];

/// RandomUniform, RandomNormal: `shape` attribute, `dtype` (float by default).
pub(super) fn random(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = attr_i(n, "dtype")
        .and_then(dtype_code)
        .unwrap_or(DType::Float32);
    let s = attr_ints(n, "shape").or_why(|| "no shape attribute".into())?;
    Ok(alloc::vec![out(
        Some(dt),
        s.into_iter().map(V::K).collect()
    )])
}

/// *Like and Bernoulli: the input's shape, `dtype` or the input's dtype.
pub(super) fn random_like(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = attr_i(n, "dtype").and_then(dtype_code).or(dtype(ins, 0));
    Ok(alloc::vec![out(dt, shape(ins, 0)?.clone())])
}

/// Multinomial: `[batch, sample_size]`, int32 by default.
pub(super) fn multinomial(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = attr_i(n, "dtype")
        .and_then(dtype_code)
        .unwrap_or(DType::Int32);
    let x = shape(ins, 0)?;
    let b = x.first().cloned().or_why(|| "rank 0".into())?;
    Ok(alloc::vec![out(
        Some(dt),
        alloc::vec![b, V::K(attr_i(n, "sample_size").unwrap_or(1))]
    )])
}
