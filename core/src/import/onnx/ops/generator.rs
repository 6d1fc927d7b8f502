//! Ops that make a tensor from attributes or scalars: Constant, ConstantOfShape, Range, EyeLike.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Constant", constant),
    ("ConstantOfShape", constant_of_shape),
    ("Range", range),
    ("EyeLike", eye_like),
];

/// Constant: the `value*` attribute.
pub(super) fn constant(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    let a = n.attribute.first().or_why(|| "no value attribute".into())?;
    let (dt, s, v) = match a.name.as_str() {
        "value" => {
            let t = a.t.as_ref().or_why(|| "no tensor".into())?;
            let dt = DType::from_onnx(t.data_type).ok_or_else(|| {
                Fail::Hard(Error::invalid(format!("unknown data type {}", t.data_type)))
            })?;
            if let Some(d) = t.dims.iter().find(|&&d| d < 0) {
                return hard(format!("negative dim {d} in the value"));
            }
            (
                dt,
                t.dims.iter().map(|&d| V::K(d)).collect(),
                tensor_value(t, dt),
            )
        }
        "sparse_value" => {
            let t = a.sparse_tensor.as_ref().or_why(|| "no tensor".into())?;
            let dt = t
                .values
                .as_ref()
                .and_then(|v| DType::from_onnx(v.data_type));
            let dt = dt.or_why(|| "sparse value without type".into())?;
            (dt, t.dims.iter().map(|&d| V::K(d.max(0))).collect(), None)
        }
        "value_float" => (
            DType::Float32,
            Vec::new(),
            Some(Val::F(alloc::vec![f64::from(a.f)])),
        ),
        "value_floats" => (
            DType::Float32,
            alloc::vec![V::K(a.floats.len() as i64)],
            Some(Val::F(a.floats.iter().map(|&x| f64::from(x)).collect())),
        ),
        "value_int" => (
            DType::Int64,
            Vec::new(),
            Some(Val::I(alloc::vec![V::K(a.i)])),
        ),
        "value_ints" => (
            DType::Int64,
            alloc::vec![V::K(a.ints.len() as i64)],
            Some(Val::I(a.ints.iter().map(|&x| V::K(x)).collect())),
        ),
        "value_string" => (DType::String, Vec::new(), None),
        "value_strings" => (
            DType::String,
            alloc::vec![V::K(a.strings.len() as i64)],
            None,
        ),
        other => return why(format!("unknown Constant attribute '{other}'")),
    };
    Ok(alloc::vec![with_val(out(Some(dt), s), v)])
}

/// ConstantOfShape: shape = input value, dtype of the `value` attribute (float32 default).
pub(super) fn constant_of_shape(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dims = ints(ins, 0)?;
    let t = attr(n, "value").and_then(|a| a.t.as_ref());
    let dt = t
        .and_then(|t| DType::from_onnx(t.data_type))
        .unwrap_or(DType::Float32);
    let fill = t.and_then(|t| tensor_value(t, dt));
    let v = match (fill, dims.iter().map(V::k).collect::<Option<Vec<_>>>()) {
        (Some(Val::I(f)), Some(k)) => {
            let nn = k
                .iter()
                .try_fold(1i64, |a, &b| a.checked_mul(b))
                .unwrap_or(i64::MAX);
            match (usize::try_from(nn), f.first()) {
                (Ok(nn), Some(x)) if nn <= MAX_VAL => Some(Val::I(alloc::vec![x.clone(); nn])),
                _ => None,
            }
        }
        _ => None,
    };
    Ok(alloc::vec![with_val(out(Some(dt), dims), v)])
}

/// A Range step of 0 never reaches its limit: onnxruntime refuses it ("delta in Range
/// operator can not be zero").
const STEP_ZERO: &str = "step (delta) 0: the range never ends";

/// Range: `max(ceil((limit-start)/delta), 0)` elements.
pub(super) fn range(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let dt = dt0;
    let (s, l, d) = (ints(ins, 0), ints(ins, 1), ints(ins, 2));
    if is_float(dt) {
        let (s, l, d) = (floats(ins, 0)?, floats(ins, 1)?, floats(ins, 2)?);
        let (s, l, d) = (s.first().copied(), l.first().copied(), d.first().copied());
        let (Some(s), Some(l), Some(d)) = (s, l, d) else {
            return why("empty operand");
        };
        if d == 0.0 {
            return hard(STEP_ZERO);
        }
        let nn = f2i(libm::ceil((l - s) / d).max(0.0));
        return Ok(alloc::vec![out(dt, alloc::vec![V::K(nn)])]);
    }
    let (s, l, d) = (s?, l?, d?);
    let (Some(s), Some(l), Some(d)) = (s.first(), l.first(), d.first()) else {
        return why("empty operand");
    };
    let len = match (s.k(), l.k(), d.k()) {
        (_, _, Some(0)) => return hard(STEP_ZERO),
        (Some(s), Some(l), Some(d)) => {
            let num = l.checked_sub(s).or_why(|| "overflow".into())?;
            // ceil(num / d) for either sign of d: truncate, then step away from zero when
            // the remainder has the sign of d.
            let (q, r) = (num / d, num % d);
            let ceil = if r != 0 && (r > 0) == (d > 0) {
                q + 1
            } else {
                q
            };
            V::K(ceil.max(0))
        }
        (_, _, Some(1)) => l
            .sub(s)
            .and_then(|x| x.max(&V::K(0)))
            .or_why(|| "overflow".into())?,
        _ => return why("Range with symbolic bounds and step other than 1"),
    };
    let v = match (s.k(), len.k(), d.k()) {
        (Some(s), Some(nn), Some(d)) if usize::try_from(nn).is_ok_and(|x| x <= MAX_VAL) => (0..nn)
            .map(|i| i.checked_mul(d).and_then(|x| x.checked_add(s)).map(V::K))
            .collect::<Option<Vec<_>>>()
            .map(Val::I),
        _ => None,
    };
    Ok(alloc::vec![with_val(out(dt, alloc::vec![len]), v)])
}

/// EyeLike: like the input, `dtype` attribute.
pub(super) fn eye_like(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let dt = attr_i(n, "dtype").and_then(dtype_code).or(dt0);
    Ok(alloc::vec![out(dt, shape(ins, 0)?.clone())])
}
