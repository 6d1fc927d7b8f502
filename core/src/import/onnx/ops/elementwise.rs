//! Element-wise ops: unary, broadcasting binary, Where, Cast.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Relu", unary),
    ("Sigmoid", unary),
    ("Tanh", unary),
    ("Exp", unary),
    ("Log", unary),
    ("Erf", unary),
    ("Sqrt", unary),
    ("Reciprocal", unary),
    ("Neg", unary),
    ("Abs", unary),
    ("HardSigmoid", unary),
    ("HardSwish", unary),
    ("LeakyRelu", unary),
    ("Elu", unary),
    ("Selu", unary),
    ("Celu", unary),
    ("Softplus", unary),
    ("Softsign", unary),
    ("Gelu", unary),
    ("Floor", unary),
    ("Ceil", unary),
    ("Round", unary),
    ("Sin", unary),
    ("Cos", unary),
    ("Tan", unary),
    ("Asin", unary),
    ("Acos", unary),
    ("Atan", unary),
    ("Sinh", unary),
    ("Cosh", unary),
    ("Asinh", unary),
    ("Acosh", unary),
    ("Atanh", unary),
    ("Softmax", unary),
    ("LogSoftmax", unary),
    ("Hardmax", unary),
    ("LRN", unary),
    ("InstanceNormalization", unary),
    ("Sign", unary),
    ("Mish", unary),
    ("ThresholdedRelu", unary),
    ("Shrink", unary),
    ("CumSum", unary),
    ("Trilu", unary),
    ("Swish", unary),
    ("MeanVarianceNormalization", unary),
    ("LpNormalization", unary),
    ("Clip", unary),
    ("Dropout", unary),
    ("Identity", identity),
    ("IsNaN", bool_unary),
    ("IsInf", bool_unary),
    ("Not", bool_unary),
    ("Add", binary),
    ("Sub", binary),
    ("Mul", binary),
    ("Div", binary),
    ("Pow", binary),
    ("Mod", binary),
    ("Max", binary),
    ("Min", binary),
    ("Sum", binary),
    ("Mean", binary),
    ("And", binary),
    ("Or", binary),
    ("Xor", binary),
    ("Equal", binary),
    ("Greater", binary),
    ("Less", binary),
    ("GreaterOrEqual", binary),
    ("LessOrEqual", binary),
    ("PRelu", binary),
    ("BitShift", binary),
    ("BitwiseAnd", binary),
    ("BitwiseOr", binary),
    ("BitwiseXor", binary),
    ("Where", where_),
    ("Cast", cast),
    ("CastLike", cast),
];

/// Element-wise unary ops (and shape-preserving ones such as Softmax, Clip, Dropout): output = input shape.
pub(super) fn unary(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
    let s = shape(ins, 0)?;
    let mut o = alloc::vec![out(dt0, s.clone())];
    if op == "Dropout" {
        // The mask is T before opset 10 (Dropout-7), bool from Dropout-10 on.
        let mask = if opset < 10 { dt0 } else { Some(DType::Bool) };
        o.push(out(mask, s.clone()));
    }
    if op == "Neg" || op == "Abs" {
        if let Some(Val::I(v)) = &input(ins, 0)?.val {
            let f = |x: &V| match op {
                "Neg" => V::K(0).sub(x),
                _ => x.k().and_then(i64::checked_abs).map(V::K),
            };
            let v: Option<Vec<V>> = v.iter().map(f).collect();
            o[0] = with_val(o[0].clone(), v.map(Val::I));
        }
    }
    // Small float values through rounding and Relu (lengths computed in float, e.g. the
    // trip count of an expanded Range: Ceil(Div(Sub(limit, start), delta))).
    if let Some(Val::F(v)) = &input(ins, 0)?.val {
        let f: Option<fn(f64) -> f64> = match op {
            "Ceil" => Some(libm::ceil),
            "Floor" => Some(libm::floor),
            // rint: to nearest, ties to even (ONNX Round)
            "Round" => Some(libm::rint),
            "Relu" => Some(|x: f64| x.max(0.0)),
            "Neg" => Some(|x: f64| -x),
            "Abs" => Some(f64::abs),
            _ => None,
        };
        if let Some(f) = f {
            o[0] = with_val(
                o[0].clone(),
                Some(Val::F(v.iter().map(|&x| f(x)).collect())),
            );
        }
    }
    Ok(o)
}

/// Identity: the input, value included.
pub(super) fn identity(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let i = input(ins, 0)?;
    Ok(alloc::vec![O {
        dtype: i.dtype,
        shape: i.shape.clone(),
        val: i.val.clone(),
        non_tensor: i.non_tensor,
        val_why: None,
        bound: None,
        seq: None,
    }])
}

/// IsNaN, IsInf, Not: bool, same shape.
pub(super) fn bool_unary(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let s = shape(ins, 0)?;
    let mut o = out(Some(DType::Bool), s.clone());
    if op == "Not" {
        if let Some(Val::I(v)) = &input(ins, 0)?.val {
            let v: Option<Vec<V>> = v
                .iter()
                .map(|x| x.k().map(|x| V::K(i64::from(x == 0))))
                .collect();
            o = with_val(o, v.map(Val::I));
        }
    }
    Ok(alloc::vec![o])
}

/// Multi-directional broadcasting element-wise ops (ONNX "Broadcasting"), with small values.
#[allow(clippy::too_many_lines)]
pub(super) fn binary(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
    let shapes: Vec<&Vec<V>> = (0..ins.len()).map(|k| shape(ins, k)).collect::<R<_>>()?;
    let s = broadcast(&shapes)?;
    let cmp = matches!(
        op,
        "And" | "Or" | "Xor" | "Equal" | "Greater" | "Less" | "GreaterOrEqual" | "LessOrEqual"
    );
    let dt = if cmp { Some(DType::Bool) } else { dt0 };
    let o = out(dt, s);
    // Values.
    let vals: Option<Vec<&Val>> = ins.iter().map(|i| i.and_then(|i| i.val.as_ref())).collect();
    let Some(vals) = vals else {
        return Ok(alloc::vec![o]);
    };
    let int_out = !is_float(dt);
    let b = |x: bool| Some(V::K(i64::from(x)));
    let mut acc: Option<Val> = vals.first().map(|v| (*v).clone());
    let mut fault: Option<String> = None;
    for v in vals.iter().skip(1) {
        let Some(a) = acc else { break };
        if int_out {
            fault = int_fault(op, &a, v);
        }
        acc = match op {
            "Add" | "Sum" => bin_val(&a, v, V::add, |x, y| x + y),
            "Sub" => bin_val(&a, v, V::sub, |x, y| x - y),
            "Mul" => bin_val(&a, v, V::mul, |x, y| x * y),
            "Div" if int_out => bin_val(
                &a,
                v,
                |x, y| {
                    // ONNX integer Div truncates toward zero.
                    match (x.k(), y.k()) {
                        (Some(p), Some(q)) if q != 0 => p.checked_div(q).map(V::K),
                        _ if x.k().is_none_or(|p| p >= 0) && y.k().is_some_and(|q| q > 0) => {
                            x.div(y)
                        }
                        _ => None,
                    }
                },
                |x, y| x / y,
            ),
            "Div" => bin_val(&a, v, |_, _| None, |x, y| x / y),
            "Max" => bin_val(&a, v, V::max, f64::max),
            "Min" => bin_val(&a, v, V::min, f64::min),
            "Mod" => bin_val(
                &a,
                v,
                |x, y| match (x.k(), y.k()) {
                    (Some(p), Some(q)) if q != 0 => if attr_i(n, "fmod").unwrap_or(0) == 1 {
                        p.checked_rem(q)
                    } else {
                        p.checked_rem_euclid(q)
                            .map(|r| if q < 0 && r != 0 { r + q } else { r })
                    }
                    .map(V::K),
                    _ => None,
                },
                |x, y| x % y,
            ),
            "Pow" => bin_val(
                &a,
                v,
                |x, y| match (x.k(), y.k()) {
                    (Some(p), Some(q)) if q >= 0 => u32::try_from(q)
                        .ok()
                        .and_then(|q| p.checked_pow(q))
                        .map(V::K),
                    _ => None,
                },
                libm::pow,
            ),
            "Equal" => bin_val(
                &a,
                v,
                |x, y| match (x.k(), y.k()) {
                    (Some(p), Some(q)) => b(p == q),
                    _ if x == y => b(true),
                    _ => None,
                },
                |x, y| f64::from(u8::from(x == y)),
            ),
            "Greater" => bin_val(
                &a,
                v,
                |x, y| b(x.k()? > y.k()?),
                |x, y| f64::from(u8::from(x > y)),
            ),
            "Less" => bin_val(
                &a,
                v,
                |x, y| b(x.k()? < y.k()?),
                |x, y| f64::from(u8::from(x < y)),
            ),
            "GreaterOrEqual" => bin_val(
                &a,
                v,
                |x, y| b(x.k()? >= y.k()?),
                |x, y| f64::from(u8::from(x >= y)),
            ),
            "LessOrEqual" => bin_val(
                &a,
                v,
                |x, y| b(x.k()? <= y.k()?),
                |x, y| f64::from(u8::from(x <= y)),
            ),
            "And" => bin_val(&a, v, |x, y| b(x.k()? != 0 && y.k()? != 0), |_, _| f64::NAN),
            "Or" => bin_val(&a, v, |x, y| b(x.k()? != 0 || y.k()? != 0), |_, _| f64::NAN),
            _ => None,
        };
    }
    let acc = match acc {
        Some(Val::F(f)) if cmp => Some(Val::I(f.iter().map(|&x| V::K(f2i(x))).collect())),
        Some(Val::F(f)) if int_out => Some(Val::I(f.iter().map(|&x| V::K(f2i(x))).collect())),
        a => a,
    };
    let mut o = with_val(o, acc);
    if o.val.is_none() {
        o.val_why = fault;
    }
    Ok(alloc::vec![o])
}

/// Where: broadcast of the three inputs, dtype of X.
pub(super) fn where_(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let shapes: Vec<&Vec<V>> = (0..3).map(|k| shape(ins, k)).collect::<R<_>>()?;
    let s = broadcast(&shapes)?;
    let o = out(dtype(ins, 1), s);
    let v = (|| {
        let c = ints(ins, 0).ok()?;
        let x = input(ins, 1).ok()?.val.clone()?;
        let y = input(ins, 2).ok()?.val.clone()?;
        match (x, y) {
            (Val::I(x), Val::I(y)) => {
                let nn = c.len().max(x.len()).max(y.len());
                let p = |v: &Vec<V>, i: usize| {
                    if v.len() == 1 {
                        v.first().cloned()
                    } else {
                        v.get(i).cloned()
                    }
                };
                (0..nn)
                    .map(|i| {
                        Some(if p(&c, i)?.k()? != 0 {
                            p(&x, i)?
                        } else {
                            p(&y, i)?
                        })
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(Val::I)
            }
            _ => None,
        }
    })();
    Ok(alloc::vec![with_val(o, v)])
}

/// Cast (to = attribute) and CastLike (dtype of input 1), values converted.
pub(super) fn cast(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let s = shape(ins, 0)?;
    let dt = if op == "Cast" {
        let to = attr_i(n, "to").unwrap_or(0);
        Some(
            dtype_code(to)
                .ok_or_else(|| Fail::Hard(Error::invalid(format!("Cast to unknown type {to}"))))?,
        )
    } else {
        dtype(ins, 1)
    };
    let v = input(ins, 0)?.val.clone().map(|v| match (v, is_float(dt)) {
        (Val::I(i), true) => match i.iter().map(V::k).collect::<Option<Vec<_>>>() {
            Some(k) => Val::F(k.into_iter().map(|x| x as f64).collect()),
            None => Val::I(i),
        },
        (Val::F(f), false) => Val::I(f.into_iter().map(|x| V::K(f2i(x))).collect()),
        (v, _) => v,
    });
    let v = match (v, dt) {
        (Some(Val::I(i)), Some(DType::Bool)) => Some(Val::I(
            i.into_iter()
                .map(|x| x.k().map_or(x, |k| V::K(i64::from(k != 0))))
                .collect(),
        )),
        (v, _) => v,
    };
    Ok(alloc::vec![with_val(out(dt, s.clone()), v)])
}
