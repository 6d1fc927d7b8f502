//! Normalizations.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("BatchNormalization", batch_norm),
    ("LayerNormalization", layer_norm),
    // onnxruntime's RMS norm in the default domain (its SimplifiedLayerNormFusion writes it
    // there, contrib_defs.cc): Y like X, inv_std_var like LayerNormalization's InvStdDev.
    ("SimplifiedLayerNormalization", layer_norm),
];

/// BatchNormalization: Y like X; training outputs (mean, var) are `[C]`.
pub(super) fn batch_norm(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let s = shape(ins, 0)?;
    let mut o = alloc::vec![out(dt0, s.clone())];
    if n.output.len() > 1 {
        let c = s.get(1).cloned().or_why(|| "rank < 2".into())?;
        for _ in 1..n.output.len() {
            o.push(out(dt0, alloc::vec![c.clone()]));
        }
    }
    Ok(o)
}

/// LayerNormalization: Y like X; Mean and InvStdDev keep the dims before `axis`, 1 after.
pub(super) fn layer_norm(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let s = shape(ins, 0)?;
    let ax = axis(attr_i(n, "axis").unwrap_or(-1), s.len(), "axis")?;
    let stash = attr_i(n, "stash_type")
        .and_then(dtype_code)
        .unwrap_or(DType::Float32);
    let mut red = s.clone();
    red.iter_mut().skip(ax).for_each(|d| *d = V::K(1));
    Ok(alloc::vec![
        out(dt0, s.clone()),
        out(Some(stash), red.clone()),
        out(Some(stash), red)
    ])
}
