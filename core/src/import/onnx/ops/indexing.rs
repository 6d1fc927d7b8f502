//! Indexing: Gather*, Scatter*, NonZero, OneHot.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Gather", gather),
    ("GatherElements", gather_elements),
    ("GatherND", gather_nd),
    ("ScatterND", scatter),
    ("ScatterElements", scatter),
    ("Scatter", scatter),
    ("NonZero", non_zero),
    ("OneHot", one_hot),
];

/// Gather: `x[:axis] + indices + x[axis+1:]`.
pub(super) fn gather(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let idx = shape(ins, 1)?;
    let ax = axis(attr_i(n, "axis").unwrap_or(0), x.len(), "axis")?;
    // A constant index outside [-extent, extent-1] fails at run time (onnxruntime:
    // "indices element out of data bounds"): the file is wrong, say so.
    if let (Some(extent), Ok(ii)) = (x[ax].k(), known_ints(ins, 1)) {
        if let Some(&bad) = ii.iter().find(|&&i| i < -extent || i >= extent) {
            return hard(alloc::format!(
                "Gather index {bad} is out of range for axis {ax} of extent {extent}"
            ));
        }
    }
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

/// GatherElements: shape of the indices.
pub(super) fn gather_elements(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    Ok(alloc::vec![out(dt0, shape(ins, 1)?.clone())])
}

/// GatherND: `indices[:-1] + data[batch_dims + indices[-1]:]`.
pub(super) fn gather_nd(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    let idx = shape(ins, 1)?;
    let b = to_usize(attr_i(n, "batch_dims").unwrap_or(0).max(0));
    let last = idx
        .last()
        .and_then(V::k)
        .or_why(|| "indices' last dim unknown".into())?;
    let last = usize::try_from(last).map_err(|_| Fail::Hard(Error::invalid("negative dim")))?;
    let mut s: Vec<V> = idx[..idx.len() - 1].to_vec();
    s.extend(x.iter().skip(b.saturating_add(last)).cloned());
    Ok(alloc::vec![out(dt0, s)])
}

/// Scatter, ScatterND, ScatterElements: like data.
pub(super) fn scatter(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    same(ins)
}

/// NonZero: `[rank, number of non-zeros]`.
pub(super) fn non_zero(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    // The count is known when the input's value is (a constant); else it is data-dependent
    // and stays unknown (named `NODE output axis 1` by the importer), never 1.
    let count = match &input(ins, 0)?.val {
        Some(Val::I(v)) => v
            .iter()
            .map(|e| e.k().map(|k| k != 0))
            .collect::<Option<Vec<bool>>>()
            .map(|nz| V::K(nz.iter().filter(|&&b| b).count() as i64)),
        Some(Val::F(v)) => Some(V::K(v.iter().filter(|&&f| f != 0.0).count() as i64)),
        None => None,
    };
    // Of data: at most every element, the input's element count (onnxruntime allocates the
    // exact count at run time; a static plan needs the most it can be).
    if count.is_none() {
        if let Some(numel) = product(x) {
            return Ok(alloc::vec![O {
                bound: Some(format!(
                    "axis 1 at most {} (the input's element count; the non-zero count depends on the data)",
                    show(&numel)
                )),
                ..out(Some(DType::Int64), alloc::vec![V::K(x.len() as i64), numel])
            }]);
        }
    }
    Ok(alloc::vec![out(
        Some(DType::Int64),
        alloc::vec![V::K(x.len() as i64), count.unwrap_or(V::E("?".into()))]
    )])
}

/// OneHot: `depth` inserted at `axis`.
pub(super) fn one_hot(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
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

/// A dim as the messages write it: a number or the expression.
fn show(v: &V) -> String {
    match v {
        V::K(k) => format!("{k}"),
        V::N(s) | V::E(s) => s.clone(),
    }
}
