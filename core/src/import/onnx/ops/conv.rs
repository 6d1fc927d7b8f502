//! Convolutions and the windowed output-size rule shared with pooling.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Conv", conv),
    ("ConvInteger", conv),
    ("QLinearConv", conv),
    ("ConvTranspose", conv_transpose),
];

pub(super) fn conv_like(n: &NodeProto, x: &[V], kernel: &[V], transpose: bool) -> R<Vec<V>> {
    let sp = x.len().saturating_sub(2);
    let strides = attr_ints(n, "strides").unwrap_or_else(|| alloc::vec![1; sp]);
    let dil = attr_ints(n, "dilations").unwrap_or_else(|| alloc::vec![1; sp]);
    let pads = attr_ints(n, "pads").unwrap_or_else(|| alloc::vec![0; 2 * sp]);
    let auto = attr_s(n, "auto_pad").unwrap_or_default();
    let ceil = attr_i(n, "ceil_mode").unwrap_or(0) == 1;
    let out_pad = attr_ints(n, "output_padding").unwrap_or_else(|| alloc::vec![0; sp]);
    if strides.len() != sp || dil.len() != sp || pads.len() != 2 * sp || kernel.len() != sp {
        return hard(format!(
            "attribute lengths do not match {sp} spatial dims (strides {}, dilations {}, pads {}, kernel {})",
            strides.len(),
            dil.len(),
            pads.len(),
            kernel.len()
        ));
    }
    let ov = || Fail::Why("overflow in output size".into());
    let mut res = Vec::with_capacity(sp);
    for i in 0..sp {
        let (s, d) = (strides[i], dil[i]);
        if s <= 0 || d <= 0 {
            return hard(format!("stride {s} / dilation {d} must be positive"));
        }
        let (s, d) = (V::K(s), V::K(d));
        let inp = &x[i + 2];
        let k = &kernel[i];
        if let Some(kv) = k.k() {
            if kv < 1 {
                return hard(format!("kernel dim {kv} (axis {i}) must be at least 1"));
            }
        }
        // effective kernel = (k-1)*d + 1
        let ek = k
            .sub(&V::K(1))
            .and_then(|a| a.mul(&d))
            .and_then(|a| a.add(&V::K(1)))
            .ok_or_else(ov)?;
        let o = if transpose {
            if let Some(os) = attr_ints(n, "output_shape") {
                V::K(
                    *os.get(os.len().saturating_sub(sp) + i)
                        .or_why(|| "output_shape too short".into())?,
                )
            } else if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
                inp.mul(&s).ok_or_else(ov)?
            } else {
                let tp = V::K(pads[i].checked_add(pads[i + sp]).ok_or_else(ov)?);
                inp.sub(&V::K(1))
                    .and_then(|a| a.mul(&s))
                    .and_then(|a| a.add(&V::K(out_pad.get(i).copied().unwrap_or(0))))
                    .and_then(|a| a.add(&ek))
                    .and_then(|a| a.sub(&tp))
                    .ok_or_else(ov)?
            }
        } else if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
            inp.ceil_div(&s).ok_or_else(ov)?
        } else if auto == "VALID" {
            inp.sub(&ek)
                .and_then(|a| a.add(&s))
                .and_then(|a| a.div(&s))
                .ok_or_else(ov)?
        } else {
            let tp = V::K(pads[i].checked_add(pads[i + sp]).ok_or_else(ov)?);
            let num = inp.add(&tp).and_then(|a| a.sub(&ek)).ok_or_else(ov)?;
            let mut o = if ceil { num.ceil_div(&s) } else { num.div(&s) }
                .and_then(|a| a.add(&V::K(1)))
                .ok_or_else(ov)?;
            if ceil {
                // The last window must start inside the input or the left padding.
                if let (Some(ov_), Some(iv)) = (o.k(), inp.k()) {
                    let last = i128::from(ov_ - 1) * i128::from(s.k().unwrap_or(1));
                    if last >= i128::from(iv) + i128::from(pads[i]) {
                        o = V::K(ov_ - 1);
                    }
                }
            }
            o
        };
        if let Some(v) = o.k() {
            if v < 0 {
                return hard(format!(
                    "spatial output dim {i} would be {v} (input too small)"
                ));
            }
        }
        res.push(o);
    }
    Ok(res)
}

/// Conv, ConvInteger (int32), QLinearConv (dtype of y_zero_point).
pub(super) fn conv(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
    let wi = if op == "QLinearConv" { 3 } else { 1 };
    let x = shape(ins, 0)?;
    let w = shape(ins, wi)?;
    if x.len() < 3 || w.len() != x.len() {
        return hard(format!(
            "X rank {} and W rank {} do not fit",
            x.len(),
            w.len()
        ));
    }
    let group = attr_i(n, "group").unwrap_or(1);
    if group < 1 {
        return hard(format!("group {group} must be at least 1"));
    }
    if let (Some(c), Some(wc)) = (x[1].k(), w[1].k()) {
        if wc.checked_mul(group) != Some(c) {
            return hard(format!(
                "input channels {c} are not W's {wc} x group {group}"
            ));
        }
    }
    let kernel: Vec<V> = attr_ints(n, "kernel_shape")
        .map_or_else(|| w[2..].to_vec(), |k| k.into_iter().map(V::K).collect());
    let mut s = alloc::vec![x[0].clone(), w[0].clone()];
    s.extend(conv_like(n, x, &kernel, false)?);
    let dt = match op {
        "ConvInteger" => Some(DType::Int32),
        "QLinearConv" => dtype(ins, 7).or(dt0),
        _ => dt0,
    };
    Ok(alloc::vec![out(dt, s)])
}

/// ConvTranspose: channels `W[1] * group`, spatial dims by the transposed formula.
pub(super) fn conv_transpose(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let w = shape(ins, 1)?;
    if x.len() < 3 || w.len() != x.len() {
        return hard(format!(
            "X rank {} and W rank {} do not fit",
            x.len(),
            w.len()
        ));
    }
    let g = attr_i(n, "group").unwrap_or(1);
    if g < 1 {
        return hard(format!("group {g} must be at least 1"));
    }
    let kernel: Vec<V> = attr_ints(n, "kernel_shape")
        .map_or_else(|| w[2..].to_vec(), |k| k.into_iter().map(V::K).collect());
    let c = w[1].mul(&V::K(g)).or_why(|| "overflow".into())?;
    let mut s = alloc::vec![x[0].clone(), c];
    s.extend(conv_like(n, x, &kernel, true)?);
    Ok(alloc::vec![out(dt0, s)])
}
