//! `com.microsoft.nchwc`: the blocked-channel layout onnxruntime's graph optimizer writes at
//! level ALL on CPUs (`NchwcTransformer`). Tensors stay 4-D `[N, C, H, W]` in the graph; the
//! kernels store channels in blocks of the machine's MLAS block size (8 or 16), and the Conv
//! filters in the file are already padded to it, so channel counts come from the weights.
//! Shapes per onnxruntime's `core/graph/contrib_ops/nchwc_schema_defs.cc`.

use super::common::*;
use super::{conv, pool};

/// `(op_type, inference)` of the `com.microsoft.nchwc` domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Conv", conv::conv),
    ("MaxPool", pool::pool),
    ("AveragePool", pool::pool),
    ("GlobalMaxPool", pool::global_pool),
    ("GlobalAveragePool", pool::global_pool),
    ("ReorderInput", reorder_input),
    ("ReorderOutput", reorder_output),
    ("Upsample", upsample),
];

/// The smallest NCHWc block size of MLAS (`MlasNchwcGetBlockSize`: 8 on AVX2 and NEON, 16
/// on AVX-512).
const MIN_BLOCK: i64 = 8;

/// ReorderInput: `[N, C, spatial..]` (or `[N, spatial.., C]` with `channels_last`) →
/// `[N, roundup(C, block), spatial..]`. onnxruntime's `NchwcTransformer` reorders only
/// inputs whose channels are a multiple of the machine's block, so a ReorderInput on C
/// proves that the block divides C and the output keeps C. A C that no block size divides
/// (not a multiple of 8) cannot come from that transformer: its padding is unknown, not
/// guessed.
fn reorder_input(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.len() < 2 {
        return hard(format!("ReorderInput: rank {} < 2", x.len()));
    }
    let last = attr_i(n, "channels_last").unwrap_or(0) != 0;
    let c = if last { &x[x.len() - 1] } else { &x[1] };
    if c.k().map_or(true, |c| c % MIN_BLOCK != 0) {
        return why(format!(
            "ReorderInput: channels {} are padded to the machine's NCHWc block (8 or 16)",
            show_dims(core::slice::from_ref(c))
        ));
    }
    let mut s = alloc::vec![x[0].clone(), c.clone()];
    let sp = if last { &x[1..x.len() - 1] } else { &x[2..] };
    s.extend(sp.iter().cloned());
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// ReorderOutput: back to `[N, channels, spatial..]` (`channels_last`: `[N, spatial..,
/// channels]`), `channels` being the attribute (the unpadded count).
fn reorder_output(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.len() < 2 {
        return hard(format!("ReorderOutput: rank {} < 2", x.len()));
    }
    let c = attr_i(n, "channels").unwrap_or(0);
    if c <= 0 {
        return hard(format!("ReorderOutput: channels {c} must be positive"));
    }
    let mut s = alloc::vec![x[0].clone()];
    if attr_i(n, "channels_last").unwrap_or(0) != 0 {
        s.extend(x[2..].iter().cloned());
        s.push(V::K(c));
    } else {
        s.push(V::K(c));
        s.extend(x[2..].iter().cloned());
    }
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// Upsample: each dim times its integer `scales` entry.
fn upsample(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let scales = attr_ints(n, "scales").or_why(|| "Upsample: no scales".into())?;
    if scales.len() != x.len() || scales.iter().any(|&s| s <= 0) {
        return hard(format!(
            "Upsample: scales {scales:?} do not fit rank {}",
            x.len()
        ));
    }
    let s = x
        .iter()
        .zip(&scales)
        .map(|(d, &k)| d.mul(&V::K(k)).or_why(|| "overflow".into()))
        .collect::<R<Vec<V>>>()?;
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}
