//! Resampling and depth/space rearrangement.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Resize", resize),
    ("Upsample", resize),
    ("DepthToSpace", depth_to_space),
    ("SpaceToDepth", depth_to_space),
];

/// Resize (sizes or scales), Upsample (scales).
pub(super) fn resize(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
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
        match policy.as_str() {
            "" | "stretch" => {
                for (k, v) in idx.iter().zip(sz) {
                    s[*k] = v;
                }
            }
            "not_larger" | "not_smaller" => {
                // Resize-18: one scale for the given axes, the smallest (not_larger) or the
                // largest (not_smaller) of sizes[i] / x[i]; out = round(scale * x[i]).
                let mut scale: Option<f64> = None;
                for (k, v) in idx.iter().zip(&sz) {
                    let (Some(d), Some(t)) = (x[*k].k(), v.k()) else {
                        return why("keep_aspect_ratio_policy with symbolic dims");
                    };
                    if d == 0 {
                        return hard("Resize of an empty axis with keep_aspect_ratio_policy");
                    }
                    let r = t as f64 / d as f64;
                    scale = Some(match scale {
                        None => r,
                        Some(c) if policy == "not_larger" => c.min(r),
                        Some(c) => c.max(r),
                    });
                }
                let scale = scale.unwrap_or(1.0);
                for k in &idx {
                    let d = x[*k].k().unwrap_or(0);
                    s[*k] = V::K(f2i(libm::floor(scale * d as f64 + 0.5)));
                }
            }
            other => {
                return hard(format!(
                "keep_aspect_ratio_policy '{other}' is not one of stretch, not_larger, not_smaller"
            ))
            }
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
            if !f.is_finite() || f <= 0.0 {
                return hard(format!(
                    "scale {f} for axis {k} (scales must be positive and finite)"
                ));
            }
            let d = &x[*k];
            s[*k] = match d.k() {
                Some(v) => V::K(f2i(libm::floor(v as f64 * f))),
                None if f == 1.0 => d.clone(),
                None if libm::trunc(f) == f && f > 0.0 => {
                    d.mul(&V::K(f2i(f))).or_why(|| "overflow".into())?
                }
                None => return why("symbolic dim scaled by a fraction"),
            };
        }
    }
    Ok(alloc::vec![out(dt0, s)])
}

/// DepthToSpace, SpaceToDepth (4-D).
pub(super) fn depth_to_space(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    if x.len() != 4 {
        return hard("input must be 4-D");
    }
    let k = attr_i(n, "blocksize").unwrap_or(1);
    if k <= 0 {
        return hard(format!("blocksize {k} must be positive"));
    }
    let b = V::K(k);
    let b2 = b
        .mul(&b)
        .or_why(|| format!("blocksize {k} squared overflows int64"))?;
    let f = || -> Option<Vec<V>> {
        Some(if op == "DepthToSpace" {
            alloc::vec![x[0].clone(), x[1].div(&b2)?, x[2].mul(&b)?, x[3].mul(&b)?]
        } else {
            alloc::vec![x[0].clone(), x[1].mul(&b2)?, x[2].div(&b)?, x[3].div(&b)?]
        })
    };
    Ok(alloc::vec![out(
        dt0,
        f().or_why(|| format!("the channels times blocksize {k} squared overflow int64"))?
    )])
}
