//! Helpers shared by the op families: reading inputs and attributes, broadcasting, small values.

pub(crate) use alloc::format;
pub(crate) use alloc::string::{String, ToString};
pub(crate) use alloc::vec::Vec;

pub(crate) use crate::dtype::DType;
pub(crate) use crate::error::Error;
pub(crate) use crate::import::onnx::proto::{AttributeProto, NodeProto, TensorProto};
pub(crate) use crate::import::onnx::sym::{product, V};
pub(crate) use crate::import::onnx::{Info, Val, MAX_VAL};

/// One op's inference: the node, the default-domain opset, the inputs (`None` for an omitted
/// optional input) → one [`O`] per output, a reason to leave them unknown, or a hard error.
pub(crate) type Infer = fn(&NodeProto, i64, &[Option<&Info>]) -> R<Vec<O>>;

/// An inferred output.
#[derive(Debug, Clone, Default)]
pub(crate) struct O {
    pub(crate) dtype: Option<DType>,
    pub(crate) shape: Option<Vec<V>>,
    pub(crate) val: Option<Val>,
    pub(crate) non_tensor: Option<&'static str>,
    /// Why `val` is unknown though the inputs' values are known (constant arithmetic that
    /// overflows or divides by zero), for the message of the op that needs the value.
    pub(crate) val_why: Option<String>,
    /// The shape is an upper bound, not the size at run time (a data-dependent count planned
    /// at its most): which dim and why, for the warning and [`crate::import::onnx::OnnxModel::bounds`].
    pub(crate) bound: Option<String>,
    /// A sequence known at import (SequenceConstruct of tensors, ...): its elements.
    pub(crate) seq: Option<Vec<Elem>>,
}

/// A sequence element: dtype and shape, where known.
pub(crate) type Elem = (Option<DType>, Option<Vec<V>>);

/// Why inference stopped: a reason (the outputs stay unknown, a warning) or a hard error.
pub(crate) enum Fail {
    Why(String),
    Hard(Error),
}

pub(crate) type R<T> = core::result::Result<T, Fail>;

pub(crate) fn why<T>(s: impl Into<String>) -> R<T> {
    Err(Fail::Why(s.into()))
}

pub(crate) fn hard<T>(s: impl Into<String>) -> R<T> {
    Err(Fail::Hard(Error::invalid(s)))
}

pub(crate) trait OrWhy<T> {
    fn or_why(self, s: impl FnOnce() -> String) -> R<T>;
}

impl<T> OrWhy<T> for Option<T> {
    fn or_why(self, s: impl FnOnce() -> String) -> R<T> {
        self.ok_or_else(|| Fail::Why(s()))
    }
}

pub(crate) fn attr<'a>(n: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    n.attribute.iter().find(|a| a.name == name)
}

pub(crate) fn attr_i(n: &NodeProto, name: &str) -> Option<i64> {
    attr(n, name).map(|a| a.i)
}

pub(crate) fn attr_ints(n: &NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(n, name).map(|a| a.ints.clone())
}

pub(crate) fn attr_s(n: &NodeProto, name: &str) -> Option<String> {
    attr(n, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

pub(crate) fn input<'a>(ins: &[Option<&'a Info>], k: usize) -> R<&'a Info> {
    ins.get(k)
        .copied()
        .flatten()
        .or_why(|| format!("input {k} is missing"))
}

pub(crate) fn shape<'a>(ins: &[Option<&'a Info>], k: usize) -> R<&'a Vec<V>> {
    let i = input(ins, k)?;
    i.shape
        .as_ref()
        .or_why(|| format!("shape of input '{}' unknown", i.name))
}

pub(crate) fn dtype(ins: &[Option<&Info>], k: usize) -> Option<DType> {
    ins.get(k).copied().flatten().and_then(|i| i.dtype)
}

/// Integer value of an input (shape tensors, axes, ...).
pub(crate) fn ints(ins: &[Option<&Info>], k: usize) -> R<Vec<V>> {
    let i = input(ins, k)?;
    match &i.val {
        Some(Val::I(v)) => Ok(v.clone()),
        Some(Val::F(f)) => Ok(f.iter().map(|&x| V::K(f2i(x))).collect()),
        None => why(match &i.val_why {
            Some(w) => format!("value of input '{}' unknown: {w}", i.name),
            None => format!(
                "value of input '{}' unknown (not computable from constants and shapes)",
                i.name
            ),
        }),
    }
}

pub(crate) fn known_ints(ins: &[Option<&Info>], k: usize) -> R<Vec<i64>> {
    let v = ints(ins, k)?;
    v.iter()
        .map(|x| x.k())
        .collect::<Option<Vec<_>>>()
        .or_why(|| format!("value of input {k} is symbolic"))
}

pub(crate) fn floats(ins: &[Option<&Info>], k: usize) -> R<Vec<f64>> {
    let i = input(ins, k)?;
    match &i.val {
        Some(Val::F(f)) => Ok(f.clone()),
        Some(Val::I(v)) => v
            .iter()
            .map(|x| x.k().map(|x| x as f64))
            .collect::<Option<Vec<_>>>()
            .or_why(|| format!("value of input '{}' is symbolic", i.name)),
        None => why(match &i.val_why {
            Some(w) => format!("value of input '{}' unknown: {w}", i.name),
            None => format!("value of input '{}' unknown", i.name),
        }),
    }
}

pub(crate) fn has(ins: &[Option<&Info>], k: usize) -> bool {
    ins.get(k).copied().flatten().is_some()
}

pub(crate) fn out(dtype: Option<DType>, shape: Vec<V>) -> O {
    O {
        dtype,
        shape: Some(shape),
        val: None,
        non_tensor: None,
        val_why: None,
        bound: None,
        seq: None,
    }
}

pub(crate) fn with_val(mut o: O, val: Option<Val>) -> O {
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
pub(crate) fn axis(a: i64, r: usize, what: &str) -> R<usize> {
    let r = r as i64;
    let x = if a < 0 { a + r } else { a };
    if (0..r).contains(&x) {
        Ok(to_usize(x))
    } else {
        hard(format!("{what} {a} is out of range for rank {r}"))
    }
}

/// Numpy broadcasting of shapes.
pub(crate) fn broadcast(shapes: &[&Vec<V>]) -> R<Vec<V>> {
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
                    return hard(format!("dims {a} and {b} do not broadcast"));
                }
                (V::K(a), _) | (_, V::K(a)) => V::K(*a),
                (a, b) => a.max(b).or_why(|| "overflow".into())?,
            };
            res[off + k] = new;
        }
    }
    Ok(res)
}

pub(crate) fn same(ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = shape(ins, 0)?;
    Ok(alloc::vec![out(dtype(ins, 0), s.clone())])
}

/// Element-wise integer op on broadcastable values (scalars and 1-D).
/// Why integer arithmetic `op` on two known values fails, element by element with ONNX
/// broadcasting of a length-1 side: `division by zero (7 / 0)` or `int64 overflow
/// (9223372036854775807 * 2)`; `None` when it does not fail there (or a value is symbolic).
pub(crate) fn int_fault(op: &str, a: &Val, b: &Val) -> Option<String> {
    let (Val::I(x), Val::I(y)) = (a, b) else {
        return None;
    };
    let n = x.len().max(y.len());
    let at = |v: &[V], i: usize| {
        if v.len() == 1 {
            v[0].k()
        } else {
            v.get(i)?.k()
        }
    };
    for i in 0..n {
        let (p, q) = (at(x, i)?, at(y, i)?);
        let (sym, ok) = match op {
            "Add" | "Sum" => ("+", p.checked_add(q).is_some()),
            "Sub" => ("-", p.checked_sub(q).is_some()),
            "Mul" => ("*", p.checked_mul(q).is_some()),
            "Div" | "Mod" if q == 0 => {
                let sym = if op == "Div" { "/" } else { "%" };
                return Some(format!("division by zero ({p} {sym} {q})"));
            }
            "Div" => ("/", p.checked_div(q).is_some()),
            "Mod" => ("%", p.checked_rem(q).is_some()),
            "Pow" => (
                "^",
                q < 0
                    || u32::try_from(q)
                        .ok()
                        .and_then(|e| p.checked_pow(e))
                        .is_some(),
            ),
            _ => return None,
        };
        if !ok {
            return Some(format!("int64 overflow ({p} {sym} {q})"));
        }
    }
    None
}

pub(crate) fn bin_val(
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

pub(crate) fn to_f(v: &Val) -> Option<Vec<f64>> {
    match v {
        Val::F(f) => Some(f.clone()),
        Val::I(i) => i.iter().map(|x| x.k().map(|x| x as f64)).collect(),
    }
}

pub(crate) fn is_float(d: Option<DType>) -> bool {
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

/// `[2, batch, 8]` for messages.
pub(crate) fn show_dims(s: &[V]) -> String {
    let v: Vec<String> = s
        .iter()
        .map(|d| match d {
            V::K(k) => format!("{k}"),
            V::N(n) | V::E(n) => n.clone(),
        })
        .collect();
    format!("[{}]", v.join(", "))
}
