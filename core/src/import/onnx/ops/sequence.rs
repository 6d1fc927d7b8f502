//! Sequence and optional ops: their sequence/optional values are not tensors (not planned).
//! A sequence known at import (built by SequenceConstruct, SequenceEmpty, SequenceInsert,
//! SequenceErase, SplitToSequence from tensors of known shape) carries its elements, so the
//! tensors it yields (SequenceAt, ConcatFromSequence) and its length get their shapes.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("SequenceEmpty", sequence_empty),
    ("SequenceConstruct", sequence_construct),
    ("SequenceInsert", sequence_insert),
    ("SequenceErase", sequence_erase),
    ("SplitToSequence", split_to_sequence),
    ("SequenceAt", sequence_at),
    ("ConcatFromSequence", concat_from_sequence),
    ("SequenceMap", sequence),
    ("Optional", optional),
    ("SequenceLength", sequence_length),
    ("OptionalHasElement", has_element),
];

fn non_tensor(kind: &'static str, n: &NodeProto) -> Vec<O> {
    n.output
        .iter()
        .map(|_| O {
            non_tensor: Some(kind),
            ..O::default()
        })
        .collect()
}

/// Ops whose outputs are sequences.
pub(super) fn sequence(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(non_tensor("sequence", n))
}

/// Optional: an optional value.
pub(super) fn optional(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(non_tensor("optional", n))
}

/// SequenceLength: an int64 scalar, its value when the sequence is known.
pub(super) fn sequence_length(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let len = ins
        .first()
        .copied()
        .flatten()
        .and_then(|i| i.seq.as_ref())
        .map(|s| Val::I(alloc::vec![V::K(s.len() as i64)]));
    Ok(alloc::vec![with_val(
        out(Some(DType::Int64), Vec::new()),
        len
    )])
}

/// A sequence output with these elements.
fn seq_out(elems: Vec<Elem>) -> O {
    O {
        non_tensor: Some("sequence"),
        seq: Some(elems),
        ..O::default()
    }
}

/// The elements of the sequence input `k`, or why they are unknown.
fn elems<'a>(ins: &[Option<&'a Info>], k: usize) -> R<&'a Vec<Elem>> {
    let i = input(ins, k)?;
    i.seq
        .as_ref()
        .or_why(|| format!("sequence '{}' not known at import", i.name))
}

/// A position into a sequence of `len` (ONNX: `-len..len`, negative from the end; `end_ok`
/// also allows `len`, SequenceInsert's append).
fn position(ins: &[Option<&Info>], k: usize, len: usize, end_ok: bool) -> R<usize> {
    let p = known_ints(ins, k)?
        .first()
        .copied()
        .or_why(|| "empty position".into())?;
    let n = len as i64;
    let q = if p < 0 { p + n } else { p };
    let top = if end_ok { n } else { n - 1 };
    if q < 0 || q > top {
        return hard(format!(
            "position {p} is out of range for a sequence of {len}"
        ));
    }
    Ok(to_usize(q))
}

/// SequenceEmpty: a sequence of no elements.
fn sequence_empty(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![seq_out(Vec::new())])
}

/// SequenceConstruct: the inputs, in order.
fn sequence_construct(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let e: Option<Vec<Elem>> = ins
        .iter()
        .map(|i| i.map(|i| (i.dtype, i.shape.clone())))
        .collect();
    Ok(alloc::vec![match e {
        Some(e) => seq_out(e),
        None => non_tensor("sequence", n).remove(0),
    }])
}

/// SequenceInsert: the tensor at `position` (default: the end).
fn sequence_insert(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let (Ok(s), Ok(t)) = (elems(ins, 0), input(ins, 1)) else {
        return sequence(n, 0, ins);
    };
    let at = if has(ins, 2) {
        match position(ins, 2, s.len(), true) {
            Ok(p) => p,
            Err(Fail::Why(_)) => return sequence(n, 0, ins),
            Err(e) => return Err(e),
        }
    } else {
        s.len()
    };
    let mut e = s.clone();
    e.insert(at, (t.dtype, t.shape.clone()));
    Ok(alloc::vec![seq_out(e)])
}

/// SequenceErase: without the element at `position` (default: the last).
fn sequence_erase(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let Ok(s) = elems(ins, 0) else {
        return sequence(n, 0, ins);
    };
    if s.is_empty() {
        return hard("erase from an empty sequence");
    }
    let at = if has(ins, 1) {
        match position(ins, 1, s.len(), false) {
            Ok(p) => p,
            Err(Fail::Why(_)) => return sequence(n, 0, ins),
            Err(e) => return Err(e),
        }
    } else {
        s.len() - 1
    };
    let mut e = s.clone();
    e.remove(at);
    Ok(alloc::vec![seq_out(e)])
}

/// SplitToSequence: the input cut along `axis` by `split` (a scalar chunk length, the last
/// shorter; a list of lengths), or without `split` into its slices (dim 1 kept unless
/// `keepdims` is 0).
fn split_to_sequence(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let dt = dtype(ins, 0);
    let ax = axis(attr_i(n, "axis").unwrap_or(0), x.len(), "axis")?;
    let Some(d) = x[ax].k() else {
        return sequence(n, 0, ins);
    };
    let with = |len: i64| {
        let mut s = x.clone();
        s[ax] = V::K(len);
        (dt, Some(s))
    };
    let parts: Vec<Elem> = if has(ins, 1) {
        let split = match known_ints(ins, 1) {
            Ok(v) => v,
            Err(Fail::Why(_)) => return sequence(n, 0, ins),
            Err(e) => return Err(e),
        };
        let scalar = input(ins, 1)?.shape.as_ref().is_some_and(Vec::is_empty);
        if scalar {
            let c = split.first().copied().unwrap_or(0);
            if c <= 0 {
                return hard(format!("split {c} must be positive"));
            }
            let mut left = d;
            let mut v = Vec::new();
            while left > 0 {
                v.push(with(left.min(c)));
                left -= left.min(c);
            }
            v
        } else {
            if split.iter().any(|&p| p < 0) || split.iter().sum::<i64>() != d {
                return hard(format!("split {split:?} does not sum to the dim {d}"));
            }
            split.into_iter().map(with).collect()
        }
    } else {
        let keep = attr_i(n, "keepdims").unwrap_or(1) != 0;
        let one = if keep {
            with(1)
        } else {
            let mut s = x.clone();
            s.remove(ax);
            (dt, Some(s))
        };
        (0..d).map(|_| one.clone()).collect()
    };
    Ok(alloc::vec![seq_out(parts)])
}

/// SequenceAt: the element at `position`.
fn sequence_at(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = elems(ins, 0)?;
    let at = position(ins, 1, s.len(), false)?;
    let (dt, shape) = s[at].clone();
    let shape = shape.or_why(|| format!("shape of element {at} unknown"))?;
    Ok(alloc::vec![out(dt, shape)])
}

/// ConcatFromSequence: the elements joined along `axis` (`new_axis = 1`: stacked on a new
/// axis there).
fn concat_from_sequence(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = elems(ins, 0)?;
    let shapes: Vec<&Vec<V>> = s
        .iter()
        .map(|e| e.1.as_ref())
        .collect::<Option<_>>()
        .or_why(|| "an element's shape is unknown".into())?;
    let first = shapes
        .first()
        .or_why(|| "concat of an empty sequence".into())?;
    let dt = s.first().and_then(|e| e.0);
    let a = attr_i(n, "axis").or_why(|| "no axis".into())?;
    if shapes.iter().any(|sh| sh.len() != first.len()) {
        return hard("elements of different ranks");
    }
    if attr_i(n, "new_axis").unwrap_or(0) == 1 {
        let ax = axis(a, first.len() + 1, "axis")?;
        let mut out_s = (*first).clone();
        out_s.insert(ax, V::K(shapes.len() as i64));
        return Ok(alloc::vec![out(dt, out_s)]);
    }
    let ax = axis(a, first.len(), "axis")?;
    let mut out_s = (*first).clone();
    let mut tot = V::K(0);
    for sh in &shapes {
        tot = tot.add(&sh[ax]).or_why(|| "overflow".into())?;
    }
    out_s[ax] = tot;
    Ok(alloc::vec![out(dt, out_s)])
}

/// OptionalHasElement: a bool scalar.
pub(super) fn has_element(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(Some(DType::Bool), Vec::new())])
}
