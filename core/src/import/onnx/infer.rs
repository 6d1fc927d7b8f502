//! Per-op shape, dtype and small-value inference.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::proto::{AttributeProto, NodeProto, TensorProto};
use super::sym::{product, V};
use super::{Info, Val, MAX_VAL};
use crate::dtype::DType;
use crate::error::Error;

/// An inferred output.
#[derive(Debug, Clone, Default)]
pub(crate) struct O {
    pub(crate) dtype: Option<DType>,
    pub(crate) shape: Option<Vec<V>>,
    pub(crate) val: Option<Val>,
    pub(crate) non_tensor: Option<&'static str>,
}

/// Why inference stopped: a reason (the outputs stay unknown, a warning) or a hard error.
pub(crate) enum Fail {
    Why(String),
    Hard(Error),
}

type R<T> = core::result::Result<T, Fail>;

fn why<T>(s: impl Into<String>) -> R<T> {
    Err(Fail::Why(s.into()))
}

fn hard<T>(s: impl Into<String>) -> R<T> {
    Err(Fail::Hard(Error::invalid(s)))
}

trait OrWhy<T> {
    fn or_why(self, s: impl FnOnce() -> String) -> R<T>;
}

impl<T> OrWhy<T> for Option<T> {
    fn or_why(self, s: impl FnOnce() -> String) -> R<T> {
        self.ok_or_else(|| Fail::Why(s()))
    }
}

fn attr<'a>(n: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    n.attribute.iter().find(|a| a.name == name)
}

pub(crate) fn attr_i(n: &NodeProto, name: &str) -> Option<i64> {
    attr(n, name).map(|a| a.i)
}

pub(crate) fn attr_ints(n: &NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(n, name).map(|a| a.ints.clone())
}

fn attr_s(n: &NodeProto, name: &str) -> Option<String> {
    attr(n, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

fn input<'a>(ins: &[Option<&'a Info>], k: usize) -> R<&'a Info> {
    ins.get(k)
        .copied()
        .flatten()
        .or_why(|| format!("input {k} is missing"))
}

fn shape<'a>(ins: &[Option<&'a Info>], k: usize) -> R<&'a Vec<V>> {
    let i = input(ins, k)?;
    i.shape
        .as_ref()
        .or_why(|| format!("shape of input '{}' unknown", i.name))
}

fn dtype(ins: &[Option<&Info>], k: usize) -> Option<DType> {
    ins.get(k).copied().flatten().and_then(|i| i.dtype)
}

/// Integer value of an input (shape tensors, axes, ...).
fn ints(ins: &[Option<&Info>], k: usize) -> R<Vec<V>> {
    let i = input(ins, k)?;
    match &i.val {
        Some(Val::I(v)) => Ok(v.clone()),
        Some(Val::F(f)) => Ok(f.iter().map(|&x| V::K(f2i(x))).collect()),
        None => why(format!(
            "value of input '{}' unknown (not computable from constants and shapes)",
            i.name
        )),
    }
}

fn known_ints(ins: &[Option<&Info>], k: usize) -> R<Vec<i64>> {
    let v = ints(ins, k)?;
    v.iter()
        .map(|x| x.k())
        .collect::<Option<Vec<_>>>()
        .or_why(|| format!("value of input {k} is symbolic"))
}

fn floats(ins: &[Option<&Info>], k: usize) -> R<Vec<f64>> {
    let i = input(ins, k)?;
    match &i.val {
        Some(Val::F(f)) => Ok(f.clone()),
        Some(Val::I(v)) => v
            .iter()
            .map(|x| x.k().map(|x| x as f64))
            .collect::<Option<Vec<_>>>()
            .or_why(|| format!("value of input '{}' is symbolic", i.name)),
        None => why(format!("value of input '{}' unknown", i.name)),
    }
}

fn has(ins: &[Option<&Info>], k: usize) -> bool {
    ins.get(k).copied().flatten().is_some()
}

fn out(dtype: Option<DType>, shape: Vec<V>) -> O {
    O {
        dtype,
        shape: Some(shape),
        val: None,
        non_tensor: None,
    }
}

fn with_val(mut o: O, val: Option<Val>) -> O {
    let n = o
        .shape
        .as_ref()
        .and_then(|s| product(s))
        .and_then(|p| p.k());
    if let Some(v) = &val {
        let len = match v {
            Val::I(x) => x.len(),
            Val::F(x) => x.len(),
        };
        if n == Some(len as i64) && len <= MAX_VAL {
            o.val = val;
        }
    }
    o
}

/// Float to integer, saturating (NaN gives 0): sizes from float scales are floored.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn f2i(x: f64) -> i64 {
    x as i64
}

/// A non-negative i64 as usize (saturating on 32-bit targets).
pub(crate) fn to_usize(x: i64) -> usize {
    usize::try_from(x.max(0)).unwrap_or(usize::MAX)
}

/// An ONNX data type code from an int attribute.
pub(crate) fn dtype_code(c: i64) -> Option<DType> {
    i32::try_from(c).ok().and_then(DType::from_onnx)
}

/// Normalizes an axis for rank `r`.
fn axis(a: i64, r: usize, what: &str) -> R<usize> {
    let r = r as i64;
    let x = if a < 0 { a + r } else { a };
    if (0..r).contains(&x) {
        Ok(to_usize(x))
    } else {
        hard(format!("{what} {a} is out of range for rank {r}"))
    }
}

/// Numpy broadcasting of shapes.
fn broadcast(shapes: &[&Vec<V>]) -> R<Vec<V>> {
    let r = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut res = alloc::vec![V::K(1); r];
    for s in shapes {
        let off = r - s.len();
        for (k, d) in s.iter().enumerate() {
            let cur = &res[off + k];
            let new = match (cur, d) {
                (V::K(1), x) | (x, V::K(1)) => x.clone(),
                (a, b) if a == b => a.clone(),
                (V::K(a), V::K(b)) => {
                    return why(format!("dims {a} and {b} do not broadcast"));
                }
                (V::K(a), _) | (_, V::K(a)) => V::K(*a),
                (a, b) => a.max(b).or_why(|| "overflow".into())?,
            };
            res[off + k] = new;
        }
    }
    Ok(res)
}

fn same(ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = shape(ins, 0)?;
    Ok(alloc::vec![out(dtype(ins, 0), s.clone())])
}

/// Element-wise integer op on broadcastable values (scalars and 1-D).
fn bin_val(
    a: &Val,
    b: &Val,
    f: impl Fn(&V, &V) -> Option<V>,
    ff: impl Fn(f64, f64) -> f64,
) -> Option<Val> {
    fn pick<T: Clone>(v: &[T], i: usize) -> Option<T> {
        if v.len() == 1 {
            v.first().cloned()
        } else {
            v.get(i).cloned()
        }
    }
    match (a, b) {
        (Val::I(x), Val::I(y)) => {
            let n = x.len().max(y.len());
            if x.len() != n && x.len() != 1 || y.len() != n && y.len() != 1 {
                return None;
            }
            (0..n)
                .map(|i| f(&pick(x, i)?, &pick(y, i)?))
                .collect::<Option<Vec<_>>>()
                .map(Val::I)
        }
        _ => {
            let fx = to_f(a)?;
            let fy = to_f(b)?;
            let n = fx.len().max(fy.len());
            if fx.len() != n && fx.len() != 1 || fy.len() != n && fy.len() != 1 {
                return None;
            }
            (0..n)
                .map(|i| Some(ff(pick(&fx, i)?, pick(&fy, i)?)))
                .collect::<Option<Vec<_>>>()
                .map(Val::F)
        }
    }
}

fn to_f(v: &Val) -> Option<Vec<f64>> {
    match v {
        Val::F(f) => Some(f.clone()),
        Val::I(i) => i.iter().map(|x| x.k().map(|x| x as f64)).collect(),
    }
}

fn is_float(d: Option<DType>) -> bool {
    matches!(
        d,
        Some(DType::Float32 | DType::Float64 | DType::Float16 | DType::Bfloat16)
    )
}

/// Values of a constant tensor when small and stored inline.
pub(crate) fn tensor_value(t: &TensorProto, dtype: DType) -> Option<Val> {
    if t.payload_skipped || t.data_location == 1 {
        return None;
    }
    let n = t.dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d))?;
    let n = usize::try_from(n).ok()?;
    if n > MAX_VAL {
        return None;
    }
    let ints = |v: Vec<i64>| Some(Val::I(v.into_iter().map(V::K).collect()));
    let raw = &t.raw_data;
    let le = |w: usize| -> Option<Vec<[u8; 8]>> {
        if raw.len() != n.checked_mul(w)? {
            return None;
        }
        Some(
            raw.chunks_exact(w)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..w].copy_from_slice(c);
                    b
                })
                .collect(),
        )
    };
    let v = match dtype {
        DType::Int64
        | DType::Int32
        | DType::Int16
        | DType::Int8
        | DType::Uint8
        | DType::Uint16
        | DType::Uint32
        | DType::Uint64
        | DType::Bool => {
            if !raw.is_empty() {
                let w = (dtype.bits() / 8) as usize;
                let b = le(w)?;
                let signed = matches!(
                    dtype,
                    DType::Int64 | DType::Int32 | DType::Int16 | DType::Int8
                );
                b.into_iter()
                    .map(|x| {
                        let u = u64::from_le_bytes(x);
                        if signed && w < 8 {
                            let sh = 64 - 8 * u32::try_from(w).unwrap_or(8);
                            ((u << sh) as i64) >> sh
                        } else {
                            u as i64
                        }
                    })
                    .collect()
            } else if !t.int64_data.is_empty() {
                t.int64_data.clone()
            } else if !t.int32_data.is_empty() {
                t.int32_data.iter().map(|&x| i64::from(x)).collect()
            } else if !t.uint64_data.is_empty() {
                t.uint64_data.iter().map(|&x| x as i64).collect()
            } else if n == 0 {
                Vec::new()
            } else {
                return None;
            }
        }
        DType::Float32 | DType::Float64 => {
            let f: Vec<f64> = if !raw.is_empty() {
                let w = (dtype.bits() / 8) as usize;
                le(w)?
                    .into_iter()
                    .map(|b| {
                        if w == 4 {
                            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        } else {
                            f64::from_le_bytes(b)
                        }
                    })
                    .collect()
            } else if !t.float_data.is_empty() {
                t.float_data.iter().map(|&x| f64::from(x)).collect()
            } else if !t.double_data.is_empty() {
                t.double_data.clone()
            } else if n == 0 {
                Vec::new()
            } else {
                return None;
            };
            if f.len() != n {
                return None;
            }
            return Some(Val::F(f));
        }
        _ => return None,
    };
    if v.len() != n {
        return None;
    }
    ints(v)
}

fn conv_like(n: &NodeProto, x: &[V], kernel: &[V], transpose: bool) -> R<Vec<V>> {
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
                    if (ov_ - 1) * s.k().unwrap_or(1) >= iv + pads[i] {
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

fn reduce(n: &NodeProto, opset: i64, ins: &[Option<&Info>], axes_input_from: i64) -> R<Vec<O>> {
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

/// Infers a non-control-flow op of the default domain.
#[allow(clippy::too_many_lines)]
pub(crate) fn infer(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
    match op {
        "Relu"
        | "Sigmoid"
        | "Tanh"
        | "Exp"
        | "Log"
        | "Erf"
        | "Sqrt"
        | "Reciprocal"
        | "Neg"
        | "Abs"
        | "HardSigmoid"
        | "HardSwish"
        | "LeakyRelu"
        | "Elu"
        | "Selu"
        | "Celu"
        | "Softplus"
        | "Softsign"
        | "Gelu"
        | "Floor"
        | "Ceil"
        | "Round"
        | "Sin"
        | "Cos"
        | "Tan"
        | "Asin"
        | "Acos"
        | "Atan"
        | "Sinh"
        | "Cosh"
        | "Asinh"
        | "Acosh"
        | "Atanh"
        | "Softmax"
        | "LogSoftmax"
        | "Hardmax"
        | "LRN"
        | "InstanceNormalization"
        | "Sign"
        | "Mish"
        | "ThresholdedRelu"
        | "Shrink"
        | "CumSum"
        | "Trilu"
        | "Swish"
        | "MeanVarianceNormalization"
        | "LpNormalization"
        | "Clip"
        | "Dropout" => {
            let s = shape(ins, 0)?;
            let mut o = alloc::vec![out(dt0, s.clone())];
            if op == "Dropout" {
                o.push(out(Some(DType::Bool), s.clone()));
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
            Ok(o)
        }
        "Identity" => {
            let i = input(ins, 0)?;
            Ok(alloc::vec![O {
                dtype: i.dtype,
                shape: i.shape.clone(),
                val: i.val.clone(),
                non_tensor: i.non_tensor,
            }])
        }
        "IsNaN" | "IsInf" | "Not" => {
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
        "BatchNormalization" => {
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
        "LayerNormalization" => {
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
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "Max" | "Min" | "Sum" | "Mean" | "And"
        | "Or" | "Xor" | "Equal" | "Greater" | "Less" | "GreaterOrEqual" | "LessOrEqual"
        | "PRelu" | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" => {
            let shapes: Vec<&Vec<V>> = (0..ins.len()).map(|k| shape(ins, k)).collect::<R<_>>()?;
            let s = broadcast(&shapes)?;
            let cmp = matches!(
                op,
                "And"
                    | "Or"
                    | "Xor"
                    | "Equal"
                    | "Greater"
                    | "Less"
                    | "GreaterOrEqual"
                    | "LessOrEqual"
            );
            let dt = if cmp { Some(DType::Bool) } else { dt0 };
            let o = out(dt, s);
            // Values.
            let vals: Option<Vec<&Val>> =
                ins.iter().map(|i| i.and_then(|i| i.val.as_ref())).collect();
            let Some(vals) = vals else {
                return Ok(alloc::vec![o]);
            };
            let int_out = !is_float(dt);
            let b = |x: bool| Some(V::K(i64::from(x)));
            let mut acc: Option<Val> = vals.first().map(|v| (*v).clone());
            for v in vals.iter().skip(1) {
                let Some(a) = acc else { break };
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
                                _ if x.k().is_none_or(|p| p >= 0)
                                    && y.k().is_some_and(|q| q > 0) =>
                                {
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
                            (Some(p), Some(q)) if q != 0 => {
                                if attr_i(n, "fmod").unwrap_or(0) == 1 {
                                    p.checked_rem(q)
                                } else {
                                    p.checked_rem_euclid(q).map(|r| {
                                        if q < 0 && r != 0 {
                                            r + q
                                        } else {
                                            r
                                        }
                                    })
                                }
                                .map(V::K)
                            }
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
                        f64::powf,
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
                Some(Val::F(f)) if int_out => {
                    Some(Val::I(f.iter().map(|&x| V::K(f2i(x))).collect()))
                }
                a => a,
            };
            Ok(alloc::vec![with_val(o, acc)])
        }
        "Where" => {
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
        "Cast" | "CastLike" => {
            let s = shape(ins, 0)?;
            let dt = if op == "Cast" {
                let to = attr_i(n, "to").unwrap_or(0);
                Some(dtype_code(to).ok_or_else(|| {
                    Fail::Hard(Error::invalid(format!("Cast to unknown type {to}")))
                })?)
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
        "Shape" => {
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
        "Size" => {
            let s = shape(ins, 0)?;
            let p = product(s).or_why(|| "overflow".into())?;
            Ok(alloc::vec![with_val(
                out(Some(DType::Int64), Vec::new()),
                Some(Val::I(alloc::vec![p]))
            )])
        }
        "Constant" => {
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
        "ConstantOfShape" => {
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
                        (Ok(nn), Some(x)) if nn <= MAX_VAL => {
                            Some(Val::I(alloc::vec![x.clone(); nn]))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            Ok(alloc::vec![with_val(out(Some(dt), dims), v)])
        }
        "Range" => {
            let dt = dt0;
            let (s, l, d) = (ints(ins, 0), ints(ins, 1), ints(ins, 2));
            if is_float(dt) {
                let (s, l, d) = (floats(ins, 0)?, floats(ins, 1)?, floats(ins, 2)?);
                let (s, l, d) = (s.first().copied(), l.first().copied(), d.first().copied());
                let (Some(s), Some(l), Some(d)) = (s, l, d) else {
                    return why("empty operand");
                };
                let nn = f2i(((l - s) / d).ceil().max(0.0));
                return Ok(alloc::vec![out(dt, alloc::vec![V::K(nn)])]);
            }
            let (s, l, d) = (s?, l?, d?);
            let (Some(s), Some(l), Some(d)) = (s.first(), l.first(), d.first()) else {
                return why("empty operand");
            };
            let len = match (s.k(), l.k(), d.k()) {
                (Some(s), Some(l), Some(d)) if d != 0 => {
                    let num = l.checked_sub(s).or_why(|| "overflow".into())?;
                    V::K(num.div_euclid(d) + i64::from(num.rem_euclid(d) != 0))
                        .max(&V::K(0))
                        .or_why(String::new)?
                }
                (_, _, Some(1)) => l
                    .sub(s)
                    .and_then(|x| x.max(&V::K(0)))
                    .or_why(|| "overflow".into())?,
                _ => return why("Range with symbolic bounds and step other than 1"),
            };
            let v = match (s.k(), len.k(), d.k()) {
                (Some(s), Some(nn), Some(d)) if usize::try_from(nn).is_ok_and(|x| x <= MAX_VAL) => {
                    (0..nn)
                        .map(|i| i.checked_mul(d).and_then(|x| x.checked_add(s)).map(V::K))
                        .collect::<Option<Vec<_>>>()
                        .map(Val::I)
                }
                _ => None,
            };
            Ok(alloc::vec![with_val(out(dt, alloc::vec![len]), v)])
        }
        "Gather" => {
            let x = shape(ins, 0)?;
            let idx = shape(ins, 1)?;
            let ax = axis(attr_i(n, "axis").unwrap_or(0), x.len(), "axis")?;
            let mut s: Vec<V> = x[..ax].to_vec();
            s.extend(idx.iter().cloned());
            s.extend(x[ax + 1..].iter().cloned());
            let o = out(dt0, s);
            let v = (|| {
                if x.len() != 1 {
                    return None;
                }
                let data = match input(ins, 0).ok()?.val.as_ref()? {
                    Val::I(d) => d.clone(),
                    _ => return None,
                };
                let ii = known_ints(ins, 1).ok()?;
                let len = data.len() as i64;
                ii.iter()
                    .map(|&i| {
                        let i = if i < 0 { i + len } else { i };
                        data.get(usize::try_from(i).ok()?).cloned()
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(Val::I)
            })();
            Ok(alloc::vec![with_val(o, v)])
        }
        "GatherElements" => Ok(alloc::vec![out(dt0, shape(ins, 1)?.clone())]),
        "GatherND" => {
            let x = shape(ins, 0)?;
            let idx = shape(ins, 1)?;
            let b = to_usize(attr_i(n, "batch_dims").unwrap_or(0).max(0));
            let last = idx
                .last()
                .and_then(V::k)
                .or_why(|| "indices' last dim unknown".into())?;
            let last =
                usize::try_from(last).map_err(|_| Fail::Hard(Error::invalid("negative dim")))?;
            let mut s: Vec<V> = idx[..idx.len() - 1].to_vec();
            s.extend(x.iter().skip(b.saturating_add(last)).cloned());
            Ok(alloc::vec![out(dt0, s)])
        }
        "ScatterND" | "ScatterElements" | "Scatter" => same(ins),
        "Concat" => {
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
        "Reshape" => {
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
            let v = input(ins, 0)?.val.clone();
            Ok(alloc::vec![with_val(out(dt0, s), v)])
        }
        "Flatten" => {
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
        "Expand" => {
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
        "Tile" => {
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
        "Squeeze" => {
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
        "Unsqueeze" => {
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
        "Transpose" => {
            let x = shape(ins, 0)?;
            let perm = attr_ints(n, "perm").unwrap_or_else(|| (0..x.len() as i64).rev().collect());
            if perm.len() != x.len() {
                return hard("perm length differs from the rank");
            }
            let p: Vec<usize> = perm
                .iter()
                .map(|&p| axis(p, x.len(), "perm entry"))
                .collect::<R<_>>()?;
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
        "Slice" => slice(n, opset, ins),
        "Split" => {
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
            let d = &x[ax];
            let parts: Vec<V> = match split {
                Some(sp) => sp.into_iter().map(V::K).collect(),
                None => {
                    let k = attr_i(n, "num_outputs").unwrap_or(nout as i64).max(1);
                    match d.k() {
                        Some(dv) => {
                            let c = (dv + k - 1) / k;
                            (0..nout as i64)
                                .map(|i| V::K(c.min(dv - c * i).max(0)))
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
        "MatMul" | "MatMulInteger" => {
            let a = shape(ins, 0)?;
            let b = shape(ins, 1)?;
            if a.is_empty() || b.is_empty() {
                return hard("MatMul of a scalar");
            }
            let (mut a2, mut b2) = (a.clone(), b.clone());
            if a2.len() == 1 {
                a2.insert(0, V::K(1));
            }
            if b2.len() == 1 {
                b2.push(V::K(1));
            }
            let (ab, bb) = (a2[..a2.len() - 2].to_vec(), b2[..b2.len() - 2].to_vec());
            let mut s = broadcast(&[&ab, &bb])?;
            s.push(a2[a2.len() - 2].clone());
            s.push(b2[b2.len() - 1].clone());
            if a.len() == 1 {
                s.remove(s.len() - 2);
            }
            if b.len() == 1 {
                s.pop();
            }
            let dt = if op == "MatMulInteger" {
                Some(DType::Int32)
            } else {
                dt0
            };
            Ok(alloc::vec![out(dt, s)])
        }
        "Gemm" => {
            let a = shape(ins, 0)?;
            let b = shape(ins, 1)?;
            if a.len() != 2 || b.len() != 2 {
                return hard("Gemm inputs must be 2-D");
            }
            let ta = attr_i(n, "transA").unwrap_or(0) == 1;
            let tb = attr_i(n, "transB").unwrap_or(0) == 1;
            let m = if ta { &a[1] } else { &a[0] };
            let nn = if tb { &b[0] } else { &b[1] };
            Ok(alloc::vec![out(dt0, alloc::vec![m.clone(), nn.clone()])])
        }
        "Conv" | "ConvInteger" | "QLinearConv" => {
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
        "ConvTranspose" => {
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
            let kernel: Vec<V> = attr_ints(n, "kernel_shape")
                .map_or_else(|| w[2..].to_vec(), |k| k.into_iter().map(V::K).collect());
            let c = w[1].mul(&V::K(g)).or_why(|| "overflow".into())?;
            let mut s = alloc::vec![x[0].clone(), c];
            s.extend(conv_like(n, x, &kernel, true)?);
            Ok(alloc::vec![out(dt0, s)])
        }
        "MaxPool" | "AveragePool" | "LpPool" => {
            let x = shape(ins, 0)?;
            if x.len() < 3 {
                return hard("pooling input rank < 3");
            }
            let kernel: Vec<V> = attr_ints(n, "kernel_shape")
                .or_why(|| "no kernel_shape".into())?
                .into_iter()
                .map(V::K)
                .collect();
            let mut s = alloc::vec![x[0].clone(), x[1].clone()];
            s.extend(conv_like(n, x, &kernel, false)?);
            let mut o = alloc::vec![out(dt0, s.clone())];
            if n.output.len() > 1 {
                o.push(out(Some(DType::Int64), s));
            }
            Ok(o)
        }
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            let x = shape(ins, 0)?;
            let mut s = x.clone();
            s.iter_mut().skip(2).for_each(|d| *d = V::K(1));
            Ok(alloc::vec![out(dt0, s)])
        }
        "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce(n, opset, ins, 18),
        "ReduceSum" => reduce(n, opset, ins, 13),
        "ArgMax" | "ArgMin" => {
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
        "Resize" | "Upsample" => {
            let x = shape(ins, 0)?;
            let r = x.len();
            let axes = attr_ints(n, "axes");
            let (sizes_in, scales_in) = match (op, opset) {
                ("Upsample", _) | (_, ..=10) => (None, Some(1)),
                _ => (Some(3), Some(2)),
            };
            let mut s = x.clone();
            let sizes = sizes_in
                .filter(|&k| has(ins, k))
                .map(|k| ints(ins, k))
                .transpose()?
                .filter(|v| !v.is_empty());
            let idx: Vec<usize> = match &axes {
                Some(a) => a.iter().map(|&a| axis(a, r, "axis")).collect::<R<_>>()?,
                None => (0..r).collect(),
            };
            if let Some(sz) = sizes {
                if sz.len() != idx.len() {
                    return hard("sizes length differs from the rank");
                }
                let policy = attr_s(n, "keep_aspect_ratio_policy").unwrap_or_default();
                if !policy.is_empty() && policy != "stretch" {
                    return why("keep_aspect_ratio_policy other than stretch");
                }
                for (k, v) in idx.iter().zip(sz) {
                    s[*k] = v;
                }
            } else {
                let sc: Vec<f64> = match scales_in {
                    Some(k) if has(ins, k) => floats(ins, k)?,
                    _ if op == "Upsample" => attr(n, "scales")
                        .map(|a| a.floats.iter().map(|&x| f64::from(x)).collect())
                        .or_why(|| "no scales".into())?,
                    _ => return why("neither scales nor sizes"),
                };
                if sc.len() != idx.len() {
                    return hard("scales length differs from the rank");
                }
                for (k, f) in idx.iter().zip(sc) {
                    let d = &x[*k];
                    s[*k] = match d.k() {
                        Some(v) => V::K(f2i((v as f64 * f).floor())),
                        None if f == 1.0 => d.clone(),
                        None if f.fract() == 0.0 && f > 0.0 => {
                            d.mul(&V::K(f2i(f))).or_why(|| "overflow".into())?
                        }
                        None => return why("symbolic dim scaled by a fraction"),
                    };
                }
            }
            Ok(alloc::vec![out(dt0, s)])
        }
        "Pad" => {
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
        "TopK" => {
            let x = shape(ins, 0)?;
            let ax = axis(attr_i(n, "axis").unwrap_or(-1), x.len(), "axis")?;
            let k = if opset >= 10 {
                ints(ins, 1)?.first().cloned().or_why(|| "empty K".into())?
            } else {
                V::K(attr_i(n, "k").unwrap_or(0))
            };
            let mut s = x.clone();
            s[ax] = k;
            Ok(alloc::vec![out(dt0, s.clone()), out(Some(DType::Int64), s)])
        }
        "DepthToSpace" | "SpaceToDepth" => {
            let x = shape(ins, 0)?;
            if x.len() != 4 {
                return hard("input must be 4-D");
            }
            let b = V::K(attr_i(n, "blocksize").unwrap_or(1));
            let b2 = b.mul(&b).or_why(String::new)?;
            let f = || -> Option<Vec<V>> {
                Some(if op == "DepthToSpace" {
                    alloc::vec![x[0].clone(), x[1].div(&b2)?, x[2].mul(&b)?, x[3].mul(&b)?]
                } else {
                    alloc::vec![x[0].clone(), x[1].mul(&b2)?, x[2].div(&b)?, x[3].div(&b)?]
                })
            };
            Ok(alloc::vec![out(dt0, f().or_why(|| "overflow".into())?)])
        }
        "LSTM" | "GRU" | "RNN" => {
            let x = shape(ins, 0)?;
            if x.len() != 3 {
                return hard("X must be 3-D");
            }
            let layout = attr_i(n, "layout").unwrap_or(0);
            let dirs = if attr_s(n, "direction").as_deref() == Some("bidirectional") {
                2
            } else {
                1
            };
            let h = match attr_i(n, "hidden_size") {
                Some(h) => V::K(h),
                None => shape(ins, 2)?.get(2).cloned().or_why(|| "R rank".into())?,
            };
            let (seq, batch) = if layout == 0 {
                (&x[0], &x[1])
            } else {
                (&x[1], &x[0])
            };
            let d = V::K(dirs);
            let (y, yh) = if layout == 0 {
                (
                    alloc::vec![seq.clone(), d.clone(), batch.clone(), h.clone()],
                    alloc::vec![d, batch.clone(), h],
                )
            } else {
                (
                    alloc::vec![batch.clone(), seq.clone(), d.clone(), h.clone()],
                    alloc::vec![batch.clone(), d, h],
                )
            };
            Ok(alloc::vec![out(dt0, y), out(dt0, yh.clone()), out(dt0, yh)])
        }
        "QuantizeLinear" => {
            let dt = dtype(ins, 2)
                .or_else(|| attr_i(n, "output_dtype").and_then(dtype_code))
                .or(Some(DType::Uint8));
            Ok(alloc::vec![out(dt, shape(ins, 0)?.clone())])
        }
        "DequantizeLinear" => Ok(alloc::vec![out(dtype(ins, 1), shape(ins, 0)?.clone())]),
        "EyeLike" => {
            let dt = attr_i(n, "dtype").and_then(dtype_code).or(dt0);
            Ok(alloc::vec![out(dt, shape(ins, 0)?.clone())])
        }
        "NonZero" => {
            let x = shape(ins, 0)?;
            Ok(alloc::vec![out(
                Some(DType::Int64),
                alloc::vec![V::K(x.len() as i64), V::E("?".into())]
            )])
        }
        "OneHot" => {
            let x = shape(ins, 0)?;
            let depth = ints(ins, 1)?
                .first()
                .cloned()
                .or_why(|| "empty depth".into())?;
            let mut s = x.clone();
            let ax = axis(attr_i(n, "axis").unwrap_or(-1), x.len() + 1, "axis")?;
            s.insert(ax, depth);
            Ok(alloc::vec![out(dtype(ins, 2), s)])
        }
        "Einsum" => why("Einsum is not supported"),
        _ => why(format!("op '{op}' is not supported")),
    }
}

/// The `-1` of a Reshape: input elements / other target dims, cancelling symbols.
fn infer_minus_one(x: &[V], target: &[V], m: usize) -> R<V> {
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

fn why_or_expr(nkp: i64, dkp: i64, ns: &[V], ds: &[V]) -> R<V> {
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

fn slice(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
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
                let len = if step > 0 {
                    if e > b {
                        (e - b + step - 1) / step
                    } else {
                        0
                    }
                } else if b > e {
                    (b - e + (-step) - 1) / (-step)
                } else {
                    0
                };
                ranges.push((a, b, step, len));
                V::K(len)
            }
            (None, Some(st), Some(en)) if step == 1 && st >= 0 && en >= i64::from(i32::MAX) => {
                d.sub(&V::K(st)).or_why(|| "overflow".into())?
            }
            (None, Some(0), Some(en)) if step == 1 && en < 0 => {
                d.add(&V::K(en)).or_why(|| "overflow".into())?
            }
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
            usize::try_from(b + i as i64 * st).ok()
        })
        .map(Val::I)
    })();
    Ok(alloc::vec![with_val(out(dtype(ins, 0), s), v)])
}

fn known_dims(x: &[V]) -> Option<Vec<usize>> {
    let d: Vec<usize> = x
        .iter()
        .map(|d| usize::try_from(d.k()?).ok())
        .collect::<Option<_>>()?;
    let n = d.iter().try_fold(1usize, |a, &b| a.checked_mul(b))?;
    (n <= MAX_VAL).then_some(d)
}

fn row_major(dims: &[usize]) -> Vec<usize> {
    let mut st = alloc::vec![1usize; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        st[k] = st[k + 1].saturating_mul(dims[k + 1]);
    }
    st
}

/// Output element at multi-index `o` reads input index `map(axis, o[axis])` on each axis.
fn gather_nd(
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
fn gather_perm(v: &[V], dims: &[usize], out_dims: &[usize], inv: &[usize]) -> Option<Vec<V>> {
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

/// If, Loop, Scan: outputs from the subgraphs' outputs (`sub(attribute name)`).
pub(crate) fn control_flow(
    n: &NodeProto,
    ins: &[Option<&Info>],
    sub: &dyn Fn(&str) -> Option<Vec<O>>,
) -> R<Vec<O>> {
    match n.op_type.as_str() {
        "If" => {
            // A branch whose inference failed (e.g. the 8 kHz branch of a VAD fed 16 kHz
            // frames) gives way to the other one.
            let (t, e) = match (sub("then_branch"), sub("else_branch")) {
                (Some(t), Some(e)) => (t, e),
                (Some(x), None) | (None, Some(x)) => return Ok(x),
                (None, None) => return why("no branch could be inferred"),
            };
            if let Ok(c) = known_ints(ins, 0) {
                if let Some(&c) = c.first() {
                    return Ok(if c != 0 { t } else { e });
                }
            }
            Ok(t.into_iter()
                .zip(e)
                .map(|(a, b)| {
                    let shape = match (a.shape, b.shape) {
                        (Some(x), Some(y)) if x.len() == y.len() => Some(
                            x.into_iter()
                                .zip(y)
                                .map(|(p, q)| match (&p, &q) {
                                    _ if p == q => p,
                                    // An anonymous dim (the file does not know it) yields
                                    // to a known one.
                                    (V::K(_), V::N(a)) if a.starts_with('?') => p,
                                    (V::N(a), V::K(_)) if a.starts_with('?') => q,
                                    _ => V::E("?".into()),
                                })
                                .collect(),
                        ),
                        (x, None) => x,
                        (None, y) => y,
                        _ => None,
                    };
                    O {
                        dtype: a.dtype.or(b.dtype),
                        shape,
                        val: None,
                        non_tensor: a.non_tensor.or(b.non_tensor),
                    }
                })
                .collect())
        }
        "Loop" => {
            let body = sub("body").or_why(|| "no body".into())?;
            let carried = ins.len().saturating_sub(2);
            let iters = ins.first().copied().flatten().and_then(|i| match &i.val {
                Some(Val::I(v)) => v.first().cloned(),
                _ => None,
            });
            let mut o = Vec::new();
            for (k, b) in body.into_iter().skip(1).enumerate() {
                if k < carried {
                    let init = ins.get(k + 2).copied().flatten();
                    o.push(O {
                        dtype: b.dtype.or(init.and_then(|i| i.dtype)),
                        shape: b.shape.or_else(|| init.and_then(|i| i.shape.clone())),
                        val: None,
                        non_tensor: b.non_tensor,
                    });
                } else {
                    let shape = b.shape.map(|mut s| {
                        s.insert(0, iters.clone().unwrap_or(V::E("?".into())));
                        s
                    });
                    o.push(O {
                        dtype: b.dtype,
                        shape,
                        val: None,
                        non_tensor: b.non_tensor,
                    });
                }
            }
            Ok(o)
        }
        "Scan" => {
            let body = sub("body").or_why(|| "no body".into())?;
            let m = to_usize(attr_i(n, "num_scan_inputs").unwrap_or(0).max(0));
            let states = ins.len().saturating_sub(m);
            let in_axes = attr_ints(n, "scan_input_axes");
            let seq = ins.get(states).copied().flatten().and_then(|i| {
                let s = i.shape.as_ref()?;
                let ax = in_axes
                    .as_ref()
                    .and_then(|a| a.first())
                    .copied()
                    .unwrap_or(0);
                let ax = if ax < 0 { ax + s.len() as i64 } else { ax };
                s.get(usize::try_from(ax).ok()?).cloned()
            });
            let out_axes = attr_ints(n, "scan_output_axes");
            Ok(body
                .into_iter()
                .enumerate()
                .map(|(k, b)| {
                    if k < states {
                        return b;
                    }
                    let shape = b.shape.and_then(|mut s| {
                        let ax = out_axes
                            .as_ref()
                            .and_then(|a| a.get(k - states))
                            .copied()
                            .unwrap_or(0);
                        let r = s.len() as i64 + 1;
                        let ax = if ax < 0 { ax + r } else { ax };
                        if !(0..r).contains(&ax) {
                            return None;
                        }
                        s.insert(to_usize(ax), seq.clone().unwrap_or(V::E("?".into())));
                        Some(s)
                    });
                    O { shape, ..b }
                })
                .collect())
        }
        _ => why("not a control-flow op"),
    }
}
