//! Reductions, ArgMax/ArgMin, TopK.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("ReduceMean", reduce_v18),
    ("ReduceMax", reduce_v18),
    ("ReduceMin", reduce_v18),
    ("ReduceProd", reduce_v18),
    ("ReduceL1", reduce_v18),
    ("ReduceL2", reduce_v18),
    ("ReduceLogSum", reduce_v18),
    ("ReduceLogSumExp", reduce_v18),
    ("ReduceSumSquare", reduce_v18),
    ("ReduceSum", reduce_v13),
    ("ArgMax", arg_max),
    ("ArgMin", arg_max),
    ("TopK", top_k),
];

pub(super) fn reduce(
    n: &NodeProto,
    opset: i64,
    ins: &[Option<&Info>],
    axes_input_from: i64,
) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let keep = attr_i(n, "keepdims").unwrap_or(1) == 1;
    let axes: Vec<i64> = if opset >= axes_input_from {
        if has(ins, 1) {
            known_ints(ins, 1)?
        } else {
            Vec::new()
        }
    } else {
        attr_ints(n, "axes").unwrap_or_default()
    };
    let noop = attr_i(n, "noop_with_empty_axes").unwrap_or(0) == 1;
    if axes.is_empty() && noop {
        return same(ins);
    }
    let r = x.len();
    let axes: Vec<usize> = if axes.is_empty() {
        (0..r).collect()
    } else {
        axes.iter().map(|&a| axis(a, r, "axis")).collect::<R<_>>()?
    };
    let mut s = Vec::new();
    for (k, d) in x.iter().enumerate() {
        if axes.contains(&k) {
            if keep {
                s.push(V::K(1));
            }
        } else {
            s.push(d.clone());
        }
    }
    let dt = if matches!(n.op_type.as_str(), "ArgMax" | "ArgMin") {
        Some(DType::Int64)
    } else {
        dtype(ins, 0)
    };
    Ok(alloc::vec![out(dt, s)])
}

/// Reduce ops whose axes became an input at opset 18.
pub(super) fn reduce_v18(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    reduce(n, opset, ins, 18)
}

/// ReduceSum, whose axes became an input at opset 13.
pub(super) fn reduce_v13(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    reduce(n, opset, ins, 13)
}

/// ArgMax, ArgMin: int64, `axis` kept as 1 or removed.
pub(super) fn arg_max(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let ax = axis(attr_i(n, "axis").unwrap_or(0), x.len(), "axis")?;
    let keep = attr_i(n, "keepdims").unwrap_or(1) == 1;
    let mut s = x.clone();
    if keep {
        s[ax] = V::K(1);
    } else {
        s.remove(ax);
    }
    Ok(alloc::vec![out(Some(DType::Int64), s)])
}

/// TopK: Values and Indices with `k` along `axis`.
pub(super) fn top_k(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let ax = axis(attr_i(n, "axis").unwrap_or(-1), x.len(), "axis")?;
    let k = if opset >= 10 {
        match ints(ins, 1) {
            Ok(k) => k.first().cloned().or_why(|| "empty K".into())?,
            // k known only at run time: at most the dim (ONNX: k <= the axis' size)
            Err(_) => {
                let d = x[ax].clone();
                let bound = match &d {
                    V::K(v) => {
                        format!("axis {ax} at most {v} (the dim; k is known only at run time)")
                    }
                    V::N(s) | V::E(s) => {
                        format!("axis {ax} at most {s} (the dim; k is known only at run time)")
                    }
                };
                let mut s = x.clone();
                s[ax] = d;
                return Ok(alloc::vec![
                    O {
                        bound: Some(bound.clone()),
                        ..out(dt0, s.clone())
                    },
                    O {
                        bound: Some(bound),
                        ..out(Some(DType::Int64), s)
                    },
                ]);
            }
        }
    } else {
        V::K(attr_i(n, "k").unwrap_or(0))
    };
    if let Some(kv) = k.k() {
        if kv < 0 {
            return hard(format!("k = {kv} is negative"));
        }
        if let Some(d) = x[ax].k() {
            if kv > d {
                return hard(format!("k = {kv} exceeds the dim {d} of axis {ax}"));
            }
        }
    }
    let mut s = x.clone();
    s[ax] = k;
    Ok(alloc::vec![out(dt0, s.clone()), out(Some(DType::Int64), s)])
}
