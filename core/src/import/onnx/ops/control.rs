//! Control flow: If, Loop, Scan (outputs from the subgraphs' outputs).

use super::common::*;

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
                                    (V::K(_), V::N(a)) if crate::graph::is_unknown_dim(a) => p,
                                    (V::N(a), V::K(_)) if crate::graph::is_unknown_dim(a) => q,
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
                        val_why: None,
                        bound: None,
                        seq: None,
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
                        val_why: None,
                        bound: None,
                        seq: None,
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
                        val_why: None,
                        bound: None,
                        seq: None,
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
