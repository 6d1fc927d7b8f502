//! Shape manipulation: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Split, Concat, Expand, Tile, Pad.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Shape", shape_of),
    ("Size", size),
    ("Concat", concat),
    ("Reshape", reshape),
    ("Flatten", flatten),
    ("Expand", expand),
    ("Tile", tile),
    ("Squeeze", squeeze),
    ("Unsqueeze", unsqueeze),
    ("Transpose", transpose),
    ("Slice", slice),
    ("Split", split),
    ("Pad", pad),
];

/// The `-1` of a Reshape: input elements / other target dims, cancelling symbols.
pub(super) fn infer_minus_one(x: &[V], target: &[V], m: usize) -> R<V> {
    let mut num: Vec<V> = x.to_vec();
    let mut den: Vec<V> = Vec::new();
    for (k, t) in target.iter().enumerate() {
        if k == m {
            continue;
        }
        if let Some(p) = num.iter().position(|d| d == t) {
            num.remove(p);
        } else {
            den.push(t.clone());
        }
    }
    let (nk, ns): (Vec<V>, Vec<V>) = num.into_iter().partition(|d| d.k().is_some());
    let (dk, ds): (Vec<V>, Vec<V>) = den.into_iter().partition(|d| d.k().is_some());
    let ov = || "overflow".into();
    let nkp = product(&nk).and_then(|v| v.k()).or_why(ov)?;
    let dkp = product(&dk).and_then(|v| v.k()).or_why(ov)?;
    if dkp == 0 {
        return hard("target shape has a 0 next to -1");
    }
    let coef = if nkp % dkp == 0 {
        V::K(nkp / dkp)
    } else {
        return why_or_expr(nkp, dkp, &ns, &ds);
    };
    let numv = product(&ns).and_then(|p| p.mul(&coef)).or_why(ov)?;
    let denv = product(&ds).or_why(ov)?;
    if nkp % dkp != 0 && ns.is_empty() {
        return hard(format!(
            "{nkp} elements do not divide into the target shape"
        ));
    }
    numv.div(&denv).or_why(ov)
}

pub(super) fn why_or_expr(nkp: i64, dkp: i64, ns: &[V], ds: &[V]) -> R<V> {
    if ns.is_empty() && ds.is_empty() {
        return hard(format!(
            "{nkp} elements do not divide by {dkp} (the other target dims)"
        ));
    }
    let ov = || "overflow".into();
    product(ns)
        .and_then(|p| p.mul(&V::K(nkp)))
        .and_then(|p| p.div(&product(ds)?.mul(&V::K(dkp))?))
        .or_why(ov)
}

pub(super) fn slice(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let r = x.len();
    type Bounds = (Vec<V>, Vec<V>, Option<Vec<i64>>, Option<Vec<i64>>);
    let (starts, ends, axes, steps): Bounds = if opset < 10 {
        let s = attr_ints(n, "starts").or_why(|| "no starts".into())?;
        let e = attr_ints(n, "ends").or_why(|| "no ends".into())?;
        (
            s.into_iter().map(V::K).collect(),
            e.into_iter().map(V::K).collect(),
            attr_ints(n, "axes"),
            None,
        )
    } else {
        (
            ints(ins, 1)?,
            ints(ins, 2)?,
            if has(ins, 3) {
                Some(known_ints(ins, 3)?)
            } else {
                None
            },
            if has(ins, 4) {
                Some(known_ints(ins, 4)?)
            } else {
                None
            },
        )
    };
    if starts.len() != ends.len() {
        return hard("starts and ends differ in length");
    }
    let axes: Vec<usize> = match axes {
        Some(a) => a.iter().map(|&a| axis(a, r, "axis")).collect::<R<_>>()?,
        None => (0..starts.len()).collect(),
    };
    if axes.len() != starts.len() {
        return hard("axes and starts differ in length");
    }
    let steps = steps.unwrap_or_else(|| alloc::vec![1; starts.len()]);
    if steps.len() != starts.len() {
        return hard("steps and starts differ in length");
    }
    let mut s = x.clone();
    let mut ranges = Vec::new();
    for j in 0..axes.len() {
        let (a, step) = (axes[j], steps[j]);
        if step == 0 {
            return hard("slice step 0");
        }
        let d = &x[a];
        let (st, en) = (&starts[j], &ends[j]);
        let o = match (d.k(), st.k(), en.k()) {
            (Some(dim), Some(st), Some(en)) => {
                let (lo, hi) = if step > 0 { (0, dim) } else { (-1, dim - 1) };
                let cl = |v: i64| -> i64 {
                    let v = if v < 0 { v.saturating_add(dim) } else { v };
                    v.clamp(lo, hi)
                };
                let (b, e) = (cl(st), cl(en));
                // ceil(|e - b| / |step|) in i128: a step near ±2^63 must not wrap.
                let (span, by) = (i128::from(e) - i128::from(b), i128::from(step));
                let len = if (by > 0 && span > 0) || (by < 0 && span < 0) {
                    let (span, by) = (span.abs(), by.abs());
                    i64::try_from((span + by - 1) / by)
                        .ok()
                        .or_why(|| "overflow".into())?
                } else {
                    0
                };
                ranges.push((a, b, step, len));
                V::K(len)
            }
            // Slice clamps: a dim shorter than the bound gives 0, never a negative length.
            (None, Some(st), Some(en)) if step == 1 && st >= 0 && en >= i64::from(i32::MAX) => d
                .sub(&V::K(st))
                .and_then(|x| if st == 0 { Some(x) } else { x.max(&V::K(0)) })
                .or_why(|| "overflow".into())?,
            (None, Some(0), Some(en)) if step == 1 && en < 0 => d
                .add(&V::K(en))
                .and_then(|x| x.max(&V::K(0)))
                .or_why(|| "overflow".into())?,
            (_, Some(0), None) if step == 1 => {
                // end is symbolic: usually the dim itself or a shape value; clamp to dim.
                if en == d {
                    d.clone()
                } else {
                    en.min(d).or_why(|| "overflow".into())?
                }
            }
            _ => return why(format!("slice of axis {a} with symbolic bounds")),
        };
        s[a] = o;
    }
    let v = (|| {
        let Val::I(v) = input(ins, 0).ok()?.val.as_ref()? else {
            return None;
        };
        let dims = known_dims(x)?;
        // Per axis: (begin, step, len); untouched axes keep everything.
        let mut per: Vec<(i64, i64, i64)> = dims.iter().map(|&d| (0, 1, d as i64)).collect();
        for &(a, b, st, len) in &ranges {
            *per.get_mut(a)? = (b, st, len);
        }
        let out_dims: Vec<usize> = per
            .iter()
            .map(|p| usize::try_from(p.2).ok())
            .collect::<Option<_>>()?;
        gather_nd(v, &dims, &out_dims, |axis_k, i| {
            let (b, st, _) = per[axis_k];
            let i = i64::try_from(i).ok()?;
            usize::try_from(b.checked_add(i.checked_mul(st)?)?).ok()
        })
        .map(Val::I)
    })();
    Ok(alloc::vec![with_val(out(dtype(ins, 0), s), v)])
}

pub(super) fn known_dims(x: &[V]) -> Option<Vec<usize>> {
    let d: Vec<usize> = x
        .iter()
        .map(|d| usize::try_from(d.k()?).ok())
        .collect::<Option<_>>()?;
    let n = d.iter().try_fold(1usize, |a, &b| a.checked_mul(b))?;
    (n <= MAX_VAL).then_some(d)
}

pub(super) fn row_major(dims: &[usize]) -> Vec<usize> {
    let mut st = alloc::vec![1usize; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        st[k] = st[k + 1].saturating_mul(dims[k + 1]);
    }
    st
}

/// Output element at multi-index `o` reads input index `map(axis, o[axis])` on each axis.
pub(super) fn gather_nd(
    v: &[V],
    dims: &[usize],
    out_dims: &[usize],
    map: impl Fn(usize, usize) -> Option<usize>,
) -> Option<Vec<V>> {
    let n = out_dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b))?;
    if n > MAX_VAL || v.len() != dims.iter().product::<usize>() {
        return None;
    }
    let ist = row_major(dims);
    let ost = row_major(out_dims);
    (0..n)
        .map(|flat| {
            let mut src = 0usize;
            for k in 0..out_dims.len() {
                let i = (flat / ost[k]) % out_dims[k].max(1);
                src += map(k, i)? * ist[k];
            }
            v.get(src).cloned()
        })
        .collect()
}

/// Transpose: output axis `j` is input axis `p[j]`; `inv[k]` is the output axis of input axis k.
pub(super) fn gather_perm(
    v: &[V],
    dims: &[usize],
    out_dims: &[usize],
    inv: &[usize],
) -> Option<Vec<V>> {
    let n = out_dims.iter().product::<usize>();
    if v.len() != n {
        return None;
    }
    let ist = row_major(dims);
    let ost = row_major(out_dims);
    (0..n)
        .map(|flat| {
            let mut src = 0usize;
            for k in 0..dims.len() {
                let j = inv[k];
                let i = (flat / ost[j]) % out_dims[j].max(1);
                src += i * ist[k];
            }
            v.get(src).cloned()
        })
        .collect()
}

/// Shape (with start/end, opset 15): 1-D int64, the value is the shape.
pub(super) fn shape_of(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = shape(ins, 0)?;
    let r = s.len() as i64;
    let clampi = |x: i64| if x < 0 { (x + r).max(0) } else { x.min(r) };
    let start = clampi(attr_i(n, "start").unwrap_or(0));
    let end = clampi(attr_i(n, "end").unwrap_or(r));
    let v: Vec<V> = s
        .get(to_usize(start)..to_usize(end.max(start)))
        .map(<[V]>::to_vec)
        .unwrap_or_default();
    let len = v.len() as i64;
    Ok(alloc::vec![with_val(
        out(Some(DType::Int64), alloc::vec![V::K(len)]),
        Some(Val::I(v))
    )])
}

/// Size: int64 scalar, the element count.
pub(super) fn size(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = shape(ins, 0)?;
    let p = product(s).or_why(|| "overflow".into())?;
    Ok(alloc::vec![with_val(
        out(Some(DType::Int64), Vec::new()),
        Some(Val::I(alloc::vec![p]))
    )])
}

/// Concat: sum along `axis`.
pub(super) fn concat(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let shapes: Vec<&Vec<V>> = (0..ins.len()).map(|k| shape(ins, k)).collect::<R<_>>()?;
    let first = shapes.first().or_why(|| "no inputs".into())?;
    let ax = axis(attr_i(n, "axis").unwrap_or(0), first.len(), "axis")?;
    let mut s = (*first).clone();
    let mut tot = V::K(0);
    for sh in &shapes {
        if sh.len() != first.len() {
            return hard("inputs of different ranks");
        }
        tot = tot.add(&sh[ax]).or_why(|| "overflow".into())?;
    }
    s[ax] = tot;
    let v = if first.len() == 1 {
        let mut all = Vec::new();
        let mut ok = true;
        for k in 0..ins.len() {
            match ins.get(k).copied().flatten().and_then(|i| i.val.as_ref()) {
                Some(Val::I(v)) => all.extend(v.iter().cloned()),
                _ => ok = false,
            }
        }
        ok.then_some(Val::I(all))
    } else {
        None
    };
    Ok(alloc::vec![with_val(out(dt0, s), v)])
}

/// Reshape: 0 copies the input dim (unless allowzero), -1 is inferred.
pub(super) fn reshape(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let target = ints(ins, 1)?;
    let allowzero = attr_i(n, "allowzero").unwrap_or(0) == 1;
    let mut s: Vec<V> = Vec::with_capacity(target.len());
    let mut minus = None;
    for (k, t) in target.iter().enumerate() {
        match t {
            V::K(0) if !allowzero => s.push(
                x.get(k)
                    .cloned()
                    .or_why(|| "0 beyond the input rank".into())?,
            ),
            V::K(-1) => {
                if minus.replace(k).is_some() {
                    return hard("more than one -1 in the target shape");
                }
                s.push(V::K(-1));
            }
            V::K(v) if *v < -1 => return hard(format!("target dim {v}")),
            d => s.push(d.clone()),
        }
    }
    if let Some(m) = minus {
        s[m] = infer_minus_one(x, &s, m)?;
    }
    // With every dim known, the element counts must agree.
    if let (Some(a), Some(b)) = (
        product(x).and_then(|p| p.k()),
        product(&s).and_then(|p| p.k()),
    ) {
        if a != b {
            return hard(format!(
                "target shape {} has {b} elements, the input (shape {}) has {a}: a Reshape keeps the element count",
                show_dims(&s),
                show_dims(x)
            ));
        }
    }
    let v = input(ins, 0)?.val.clone();
    Ok(alloc::vec![with_val(out(dt0, s), v)])
}

/// Flatten: `[prod(x[:axis]), prod(x[axis:])]`.
pub(super) fn flatten(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let r = x.len();
    let a = attr_i(n, "axis").unwrap_or(1);
    let a = if a < 0 { a + r as i64 } else { a };
    if !(0..=r as i64).contains(&a) {
        return hard(format!("axis {a} out of range"));
    }
    let a = to_usize(a);
    let p1 = product(&x[..a]).or_why(|| "overflow".into())?;
    let p2 = product(&x[a..]).or_why(|| "overflow".into())?;
    let v = input(ins, 0)?.val.clone();
    Ok(alloc::vec![with_val(out(dt0, alloc::vec![p1, p2]), v)])
}

/// Expand: broadcast of the input and the shape value.
pub(super) fn expand(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let t = ints(ins, 1)?;
    let s = broadcast(&[x, &t])?;
    let v = match (&input(ins, 0)?.val, x.len(), t.len()) {
        (Some(Val::I(v)), _, 1) if v.len() == 1 => t
            .first()
            .and_then(V::k)
            .and_then(|nn| usize::try_from(nn).ok())
            .filter(|&nn| nn <= MAX_VAL)
            .map(|nn| Val::I(alloc::vec![v[0].clone(); nn])),
        _ => None,
    };
    Ok(alloc::vec![with_val(out(dt0, s), v)])
}

/// Tile: dims times repeats.
pub(super) fn tile(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let r = ints(ins, 1)?;
    if r.len() != x.len() {
        return hard("repeats length differs from the rank");
    }
    let s = x
        .iter()
        .zip(&r)
        .map(|(a, b)| a.mul(b))
        .collect::<Option<Vec<_>>>()
        .or_why(|| "overflow".into())?;
    Ok(alloc::vec![out(dt0, s)])
}

/// Squeeze: drops the given axes (or every 1).
pub(super) fn squeeze(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let axes = if opset >= 13 {
        if has(ins, 1) {
            Some(known_ints(ins, 1)?)
        } else {
            None
        }
    } else {
        attr_ints(n, "axes")
    };
    let s: Vec<V> = match axes {
        Some(a) => {
            let a: Vec<usize> = a
                .iter()
                .map(|&a| axis(a, x.len(), "axis"))
                .collect::<R<_>>()?;
            x.iter()
                .enumerate()
                .filter(|(k, _)| !a.contains(k))
                .map(|(_, d)| d.clone())
                .collect()
        }
        None => {
            if x.iter().any(|d| d.k().is_none()) {
                return why("Squeeze without axes on a symbolic shape");
            }
            x.iter().filter(|d| d.k() != Some(1)).cloned().collect()
        }
    };
    Ok(alloc::vec![with_val(
        out(dt0, s),
        input(ins, 0)?.val.clone()
    )])
}

/// Unsqueeze: inserts 1s at the given axes of the output.
pub(super) fn unsqueeze(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let axes = if opset >= 13 {
        known_ints(ins, 1)?
    } else {
        attr_ints(n, "axes").unwrap_or_default()
    };
    let r = x.len() + axes.len();
    let mut a: Vec<usize> = axes.iter().map(|&a| axis(a, r, "axis")).collect::<R<_>>()?;
    a.sort_unstable();
    let mut it = x.iter();
    let mut s = Vec::with_capacity(r);
    for k in 0..r {
        if a.contains(&k) {
            s.push(V::K(1));
        } else {
            s.push(it.next().cloned().or_why(|| "duplicate axes".into())?);
        }
    }
    Ok(alloc::vec![with_val(
        out(dt0, s),
        input(ins, 0)?.val.clone()
    )])
}

/// Transpose: output axis j is input axis perm[j] (reversed by default).
pub(super) fn transpose(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let perm = attr_ints(n, "perm").unwrap_or_else(|| (0..x.len() as i64).rev().collect());
    if perm.len() != x.len() {
        return hard("perm length differs from the rank");
    }
    let p: Vec<usize> = perm
        .iter()
        .map(|&p| axis(p, x.len(), "perm entry"))
        .collect::<R<_>>()?;
    for (j, a) in p.iter().enumerate() {
        if p[..j].contains(a) {
            return hard(format!("perm {perm:?} repeats axis {a}"));
        }
    }
    let s: Vec<V> = p.iter().map(|&p| x[p].clone()).collect();
    let v = (|| {
        let Val::I(v) = input(ins, 0).ok()?.val.as_ref()? else {
            return None;
        };
        let dims = known_dims(x)?;
        let out_dims: Vec<usize> = p.iter().map(|&k| dims[k]).collect();
        // Output axis j walks input axis p[j].
        let inv: Vec<usize> = (0..p.len())
            .map(|k| p.iter().position(|&q| q == k).unwrap_or(0))
            .collect();
        gather_perm(v, &dims, &out_dims, &inv).map(Val::I)
    })();
    Ok(alloc::vec![with_val(out(dt0, s), v)])
}

/// Split: parts along `axis` from `split` or equal parts (the last one smaller).
pub(super) fn split(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let ax = axis(attr_i(n, "axis").unwrap_or(0), x.len(), "axis")?;
    let nout = n.output.len();
    let split: Option<Vec<i64>> = if opset >= 13 {
        if has(ins, 1) {
            Some(known_ints(ins, 1)?)
        } else {
            None
        }
    } else {
        attr_ints(n, "split").filter(|s| !s.is_empty())
    };
    // ONNX Split-18: `num_outputs` or a `split` input, not both, and it says how many
    // outputs there are; onnxruntime refuses a node that disagrees.
    let num_outputs = attr_i(n, "num_outputs");
    if let Some(k) = num_outputs {
        if split.is_some() {
            return hard("has both a split input and num_outputs (give one)");
        }
        if k < 1 {
            return hard(format!("num_outputs {k} must be at least 1"));
        }
        if k != nout as i64 {
            return hard(format!("num_outputs {k} but the node has {nout} outputs"));
        }
    }
    let d = &x[ax];
    let parts: Vec<V> = match split {
        Some(sp) => {
            if let Some(p) = sp.iter().find(|&&p| p < 0) {
                return hard(format!("split part {p} is negative"));
            }
            if sp.len() != nout {
                return hard(format!("{} split parts for {nout} outputs", sp.len()));
            }
            let sum = sp
                .iter()
                .try_fold(0i64, |a, &p| a.checked_add(p))
                .or_why(|| "overflow".into())?;
            if let Some(dv) = d.k() {
                if sum != dv {
                    return hard(format!(
                        "split parts {sp:?} sum to {sum}, the dim of axis {ax} is {dv}"
                    ));
                }
            }
            sp.into_iter().map(V::K).collect()
        }
        None => {
            let k = num_outputs.unwrap_or(nout as i64).max(1);
            match d.k() {
                Some(dv) => {
                    let c = dv.checked_add(k - 1).or_why(|| "overflow".into())? / k;
                    (0..nout as i64)
                        .map(|i| {
                            let used = c.checked_mul(i).unwrap_or(i64::MAX);
                            V::K(c.min(dv.saturating_sub(used)).max(0))
                        })
                        .collect()
                }
                None => (0..nout)
                    .map(|_| d.div(&V::K(k)))
                    .collect::<Option<Vec<_>>>()
                    .or_why(|| "overflow".into())?,
            }
        }
    };
    Ok(parts
        .into_iter()
        .map(|p| {
            let mut s = x.clone();
            s[ax] = p;
            out(dt0, s)
        })
        .collect())
}

/// Pad: dims plus begin and end pads.
pub(super) fn pad(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let pads: Vec<i64> = if opset >= 11 {
        known_ints(ins, 1)?
    } else {
        attr_ints(n, "pads").or_why(|| "no pads".into())?
    };
    let r = x.len();
    let idx: Vec<usize> = if opset >= 18 && has(ins, 3) {
        known_ints(ins, 3)?
            .iter()
            .map(|&a| axis(a, r, "axis"))
            .collect::<R<_>>()?
    } else {
        (0..r).collect()
    };
    if pads.len() != 2 * idx.len() {
        return hard("pads length is not twice the rank");
    }
    let mut s = x.clone();
    for (j, &k) in idx.iter().enumerate() {
        let p = pads[j]
            .checked_add(pads[j + idx.len()])
            .or_why(|| "overflow".into())?;
        s[k] = s[k].add(&V::K(p)).or_why(|| "overflow".into())?;
    }
    Ok(alloc::vec![out(dt0, s)])
}
