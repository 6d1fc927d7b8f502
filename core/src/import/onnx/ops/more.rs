//! Ops that keep their input's shape (element-wise or per-slice) or change it simply, added
//! for coverage: bitwise and string element-wise ops, GroupNormalization, RMSNormalization,
//! ReverseSequence, TensorScatter, DynamicQuantizeLinear, Compress, Unique, image ops
//! (GridSample, AffineGrid, Col2Im, CenterCropPad, RoiAlign, MaxUnpool, DeformConv) and
//! TfIdfVectorizer.

use super::common::*;
use super::conv::conv_like;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("BitwiseNot", like0),
    ("ReverseSequence", like0),
    ("GroupNormalization", like0),
    ("RMSNormalization", like0),
    ("TensorScatter", like0),
    ("RegexFullMatch", bool_like0),
    ("StringNormalizer", string_normalizer),
    ("StringConcat", string_concat),
    ("DynamicQuantizeLinear", dynamic_quantize_linear),
    ("Compress", compress),
    ("Unique", unique),
    ("GridSample", grid_sample),
    ("AffineGrid", affine_grid),
    ("Col2Im", col2im),
    ("CenterCropPad", center_crop_pad),
    ("RoiAlign", roi_align),
    ("MaxUnpool", max_unpool),
    ("DeformConv", deform_conv),
    ("TfIdfVectorizer", tfidf),
];

/// Like input 0 (shape and dtype).
pub(super) fn like0(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    same(ins)
}

/// Bool, input 0's shape.
pub(super) fn bool_like0(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(Some(DType::Bool), shape(ins, 0)?.clone())])
}

/// StringNormalizer: the input's shape unless stopwords may drop elements.
pub(super) fn string_normalizer(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    if attr(n, "stopwords").is_some_and(|a| !a.strings.is_empty()) {
        return why("StringNormalizer with stopwords: the output length depends on the data");
    }
    Ok(alloc::vec![out(
        Some(DType::String),
        shape(ins, 0)?.clone()
    )])
}

/// StringConcat: broadcast of the two inputs, string.
pub(super) fn string_concat(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = broadcast(&[shape(ins, 0)?, shape(ins, 1)?])?;
    Ok(alloc::vec![out(Some(DType::String), s)])
}

/// DynamicQuantizeLinear: y uint8 like x, y_scale float scalar, y_zero_point uint8 scalar.
pub(super) fn dynamic_quantize_linear(
    _n: &NodeProto,
    _opset: i64,
    ins: &[Option<&Info>],
) -> R<Vec<O>> {
    Ok(alloc::vec![
        out(Some(DType::Uint8), shape(ins, 0)?.clone()),
        out(Some(DType::Float32), Vec::new()),
        out(Some(DType::Uint8), Vec::new()),
    ])
}

/// Compress: the selected count (true entries of a known condition, at most the axis
/// length) along `axis`, or a flat 1-D result without `axis`.
pub(super) fn compress(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let cond = known_ints(ins, 1)?;
    let ax = attr_i(n, "axis")
        .map(|a| axis(a, x.len(), "axis"))
        .transpose()?;
    let limit = match ax {
        Some(a) => x[a].k(),
        None => product(x).and_then(|p| p.k()),
    };
    let take = limit.map_or(cond.len(), |l| cond.len().min(to_usize(l)));
    let count = V::K(cond[..take].iter().filter(|&&c| c != 0).count() as i64);
    let s = match ax {
        Some(a) => {
            let mut s = x.clone();
            s[a] = count;
            s
        }
        None => alloc::vec![count],
    };
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// Unique: with the input's value known, the number of distinct elements (no `axis`) or
/// distinct slices along `axis`; outputs Y, indices `[U]`, inverse_indices (`[numel]` or
/// `[dim of axis]`), counts `[U]`.
pub(super) fn unique(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let i = input(ins, 0)?;
    let vals: Vec<f64> = match &i.val {
        Some(v) => to_f(v).or_why(|| "symbolic value".into())?,
        None => return unique_bound(n, x, dtype(ins, 0)),
    };
    let dims: Vec<usize> = x
        .iter()
        .map(|d| d.k().map(to_usize))
        .collect::<Option<_>>()
        .or_why(|| "symbolic shape".into())?;
    let ax = attr_i(n, "axis")
        .map(|a| axis(a, x.len(), "axis"))
        .transpose()?;
    let (u, inv_len) = match ax {
        None => {
            let mut seen: Vec<u64> = Vec::new();
            for v in &vals {
                let b = v.to_bits();
                if !seen.contains(&b) {
                    seen.push(b);
                }
            }
            (seen.len(), vals.len())
        }
        Some(a) => {
            let outer: usize = dims[..a].iter().product();
            let inner: usize = dims[a + 1..].iter().product();
            let d = dims[a];
            let slice = |j: usize| -> Vec<u64> {
                (0..outer)
                    .flat_map(|o| (0..inner).map(move |k| (o, k)))
                    .map(|(o, k)| vals.get((o * d + j) * inner + k).map_or(0, |v| v.to_bits()))
                    .collect()
            };
            let mut seen: Vec<Vec<u64>> = Vec::new();
            for j in 0..d {
                let s = slice(j);
                if !seen.contains(&s) {
                    seen.push(s);
                }
            }
            (seen.len(), d)
        }
    };
    let uk = V::K(u as i64);
    let y = match ax {
        None => alloc::vec![uk.clone()],
        Some(a) => {
            let mut s = x.clone();
            s[a] = uk.clone();
            s
        }
    };
    let i64t = Some(DType::Int64);
    Ok(alloc::vec![
        out(dtype(ins, 0), y),
        out(i64t, alloc::vec![uk.clone()]),
        out(i64t, alloc::vec![V::K(inv_len as i64)]),
        out(i64t, alloc::vec![uk]),
    ])
}

/// Unique of data: the distinct count is at most the element count (no `axis`) or the dim of
/// `axis`; every output is planned at that bound and says so.
fn unique_bound(n: &NodeProto, x: &[V], dt: Option<DType>) -> R<Vec<O>> {
    let ax = attr_i(n, "axis")
        .map(|a| axis(a, x.len(), "axis"))
        .transpose()?;
    let numel = product(x).or_why(|| "element count overflows".into())?;
    let (u, inv, what) = match ax {
        None => (
            numel.clone(),
            numel,
            String::from("the input's element count"),
        ),
        Some(a) => (x[a].clone(), x[a].clone(), format!("the dim of axis {a}")),
    };
    let shown = match &u {
        V::K(k) => format!("{k}"),
        V::N(s) | V::E(s) => s.clone(),
    };
    let why = format!("the distinct count at most {shown} ({what}; it depends on the data)");
    let y = match ax {
        None => alloc::vec![u.clone()],
        Some(a) => {
            let mut s = x.to_vec();
            s[a] = u.clone();
            s
        }
    };
    let i64t = Some(DType::Int64);
    let b = |o: O| O {
        bound: Some(why.clone()),
        ..o
    };
    Ok(alloc::vec![
        b(out(dt, y)),
        b(out(i64t, alloc::vec![u.clone()])),
        out(i64t, alloc::vec![inv]),
        b(out(i64t, alloc::vec![u])),
    ])
}

/// GridSample: `[N, C]` + the grid's spatial dims (`grid[1..-1]`).
pub(super) fn grid_sample(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let g = shape(ins, 1)?;
    if x.len() < 3 || g.len() != x.len() {
        return hard("X and grid ranks do not fit");
    }
    let mut s = alloc::vec![x[0].clone(), x[1].clone()];
    s.extend(g[1..g.len() - 1].iter().cloned());
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// AffineGrid: size `[N, C, H, W]` → `[N, H, W, 2]`; `[N, C, D, H, W]` → `[N, D, H, W, 3]`.
pub(super) fn affine_grid(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let size = ints(ins, 1)?;
    if size.len() < 3 {
        return hard("size must have at least 3 entries");
    }
    let mut s = alloc::vec![size[0].clone()];
    s.extend(size[2..].iter().cloned());
    s.push(V::K(size.len() as i64 - 2));
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// Col2Im: `[N, C * prod(block_shape), L]` → `[N, C] + image_shape`.
pub(super) fn col2im(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let image = ints(ins, 1)?;
    let block = ints(ins, 2)?;
    if x.len() != 3 {
        return hard("input must be [N, C*prod(block), L]");
    }
    let bp = product(&block).or_why(|| "overflow".into())?;
    let c = x[1].div(&bp).or_why(|| "overflow".into())?;
    let mut s = alloc::vec![x[0].clone(), c];
    s.extend(image);
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// CenterCropPad: the given axes (all by default) take the shape input's values.
pub(super) fn center_crop_pad(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let target = ints(ins, 1)?;
    let axes: Vec<usize> = match attr_ints(n, "axes") {
        Some(a) => a
            .iter()
            .map(|&a| axis(a, x.len(), "axis"))
            .collect::<R<_>>()?,
        None => (0..x.len()).collect(),
    };
    if axes.len() != target.len() {
        return hard("shape and axes differ in length");
    }
    let mut s = x.clone();
    for (a, t) in axes.iter().zip(target) {
        s[*a] = t;
    }
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// RoiAlign: `[num_rois, C, output_height, output_width]` (defaults 1).
pub(super) fn roi_align(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let rois = shape(ins, 1)?;
    let c = x.get(1).cloned().or_why(|| "X rank < 2".into())?;
    let r = rois.first().cloned().or_why(|| "rois rank 0".into())?;
    Ok(alloc::vec![out(
        dtype(ins, 0),
        alloc::vec![
            r,
            c,
            V::K(attr_i(n, "output_height").unwrap_or(1)),
            V::K(attr_i(n, "output_width").unwrap_or(1))
        ]
    )])
}

/// MaxUnpool: `output_shape` (input 2) when given, else (in - 1) * stride - pads + kernel.
pub(super) fn max_unpool(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    if has(ins, 2) {
        return Ok(alloc::vec![out(dtype(ins, 0), ints(ins, 2)?)]);
    }
    let x = shape(ins, 0)?;
    let sp = x.len().saturating_sub(2);
    let k = attr_ints(n, "kernel_shape").or_why(|| "no kernel_shape".into())?;
    let st = attr_ints(n, "strides").unwrap_or_else(|| alloc::vec![1; sp]);
    let pads = attr_ints(n, "pads").unwrap_or_else(|| alloc::vec![0; 2 * sp]);
    if k.len() != sp || st.len() != sp || pads.len() != 2 * sp {
        return hard("attribute lengths do not match the spatial dims");
    }
    let mut s = x[..2].to_vec();
    for i in 0..sp {
        let p = pads[i]
            .checked_add(pads[i + sp])
            .or_why(|| "overflow".into())?;
        let d = x[i + 2]
            .sub(&V::K(1))
            .and_then(|d| d.mul(&V::K(st[i])))
            .and_then(|d| d.sub(&V::K(p)))
            .and_then(|d| d.add(&V::K(k[i])))
            .or_why(|| "overflow".into())?;
        s.push(d);
    }
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// DeformConv: like Conv (`[N, W[0]]` + windowed spatial dims).
pub(super) fn deform_conv(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let w = shape(ins, 1)?;
    if x.len() < 3 || w.len() != x.len() {
        return hard("X and W ranks do not fit");
    }
    let kernel: Vec<V> = attr_ints(n, "kernel_shape")
        .map_or_else(|| w[2..].to_vec(), |k| k.into_iter().map(V::K).collect());
    let mut s = alloc::vec![x[0].clone(), w[0].clone()];
    s.extend(conv_like(n, x, &kernel, false)?);
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// TfIdfVectorizer: the last dim becomes `max(ngram_indexes) + 1`; float.
pub(super) fn tfidf(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let m = attr_ints(n, "ngram_indexes")
        .and_then(|v| v.into_iter().max())
        .or_why(|| "no ngram_indexes".into())?;
    let d = V::K(m.checked_add(1).or_why(|| "overflow".into())?);
    let s = match x.len() {
        1 => alloc::vec![d],
        2 => alloc::vec![x[0].clone(), d],
        r => return hard(format!("input rank {r}, not 1 or 2")),
    };
    Ok(alloc::vec![out(Some(DType::Float32), s)])
}
