//! Signal processing: DFT, STFT, window functions, MelWeightMatrix.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("DFT", dft),
    ("STFT", stft),
    ("HannWindow", window),
    ("HammingWindow", window),
    ("BlackmanWindow", window),
    ("MelWeightMatrix", mel_weight_matrix),
];

fn scalar(ins: &[Option<&Info>], k: usize) -> R<V> {
    ints(ins, k)?
        .first()
        .cloned()
        .or_why(|| format!("input {k} is empty"))
}

/// DFT: the signal axis gets `dft_length` (or keeps its length), halved plus one when
/// `onesided`; the last dim becomes 2 (complex). The axis is an attribute (default 1)
/// before opset 20, input 2 (default -2) from 20 on.
pub(super) fn dft(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let r = x.len();
    let a = if opset >= 20 {
        if has(ins, 2) {
            *known_ints(ins, 2)?.first().or_why(|| "empty axis".into())?
        } else {
            -2
        }
    } else {
        attr_i(n, "axis").unwrap_or(1)
    };
    let ax = axis(a, r, "axis")?;
    let len = if has(ins, 1) {
        scalar(ins, 1)?
    } else {
        x[ax].clone()
    };
    let len = if attr_i(n, "onesided").unwrap_or(0) == 1 {
        len.div(&V::K(2))
            .and_then(|h| h.add(&V::K(1)))
            .or_why(|| "overflow".into())?
    } else {
        len
    };
    let mut s = x.clone();
    s[ax] = len;
    *s.last_mut().or_why(|| "rank 0".into())? = V::K(2);
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// STFT: `[batch, frames, bins, 2]` with frames = (length - frame_length) / frame_step + 1
/// and bins = frame_length (halved plus one when `onesided`, the default).
pub(super) fn stft(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.len() != 3 {
        return hard("signal must be [batch, length, 1 or 2]");
    }
    let step = scalar(ins, 1)?;
    let fl = if has(ins, 3) {
        scalar(ins, 3)?
    } else {
        shape(ins, 2)?
            .first()
            .cloned()
            .or_why(|| "no frame_length and no window".into())?
    };
    let ov = || "overflow".to_string();
    let frames = x[1]
        .sub(&fl)
        .and_then(|d| d.div(&step))
        .and_then(|d| d.add(&V::K(1)))
        .or_why(ov)?;
    let bins = if attr_i(n, "onesided").unwrap_or(1) == 1 {
        fl.div(&V::K(2)).and_then(|h| h.add(&V::K(1))).or_why(ov)?
    } else {
        fl
    };
    Ok(alloc::vec![out(
        dtype(ins, 0),
        alloc::vec![x[0].clone(), frames, bins, V::K(2)]
    )])
}

/// Hann, Hamming, Blackman windows: `[size]`, dtype `output_datatype` (float by default).
pub(super) fn window(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = attr_i(n, "output_datatype")
        .and_then(dtype_code)
        .unwrap_or(DType::Float32);
    Ok(alloc::vec![out(Some(dt), alloc::vec![scalar(ins, 0)?])])
}

/// MelWeightMatrix: `[dft_length / 2 + 1, num_mel_bins]`, dtype `output_datatype`.
pub(super) fn mel_weight_matrix(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = attr_i(n, "output_datatype")
        .and_then(dtype_code)
        .unwrap_or(DType::Float32);
    let bins = scalar(ins, 0)?;
    let dft = scalar(ins, 1)?;
    let rows = dft
        .div(&V::K(2))
        .and_then(|h| h.add(&V::K(1)))
        .or_why(|| "overflow".into())?;
    Ok(alloc::vec![out(Some(dt), alloc::vec![rows, bins])])
}
