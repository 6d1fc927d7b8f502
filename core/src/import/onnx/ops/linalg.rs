//! Matrix products: MatMul, Gemm, Einsum.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("MatMul", matmul),
    ("MatMulInteger", matmul),
    ("Gemm", gemm),
    ("Einsum", einsum),
    ("QLinearMatMul", qlinear_matmul),
    ("Det", det),
];

/// MatMul (numpy matmul), MatMulInteger (int32).
pub(super) fn matmul(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = if n.op_type == "MatMulInteger" {
        Some(DType::Int32)
    } else {
        dtype(ins, 0)
    };
    Ok(alloc::vec![out(
        dt,
        matmul_shapes(shape(ins, 0)?, shape(ins, 1)?)?
    )])
}

/// QLinearMatMul: a (input 0) times b (input 3), dtype of y_zero_point (input 7).
pub(super) fn qlinear_matmul(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = dtype(ins, 7).or(dtype(ins, 0));
    Ok(alloc::vec![out(
        dt,
        matmul_shapes(shape(ins, 0)?, shape(ins, 3)?)?
    )])
}

/// The shape of numpy's `matmul(a, b)`: 1-D operands get a 1 prepended (a) or appended (b),
/// removed again from the result; batch dims broadcast; inner dims must agree when known.
pub(crate) fn matmul_shapes(a: &[V], b: &[V]) -> R<Vec<V>> {
    if a.is_empty() || b.is_empty() {
        return hard("MatMul of a scalar");
    }
    let (mut a2, mut b2) = (a.to_vec(), b.to_vec());
    if a2.len() == 1 {
        a2.insert(0, V::K(1));
    }
    if b2.len() == 1 {
        b2.push(V::K(1));
    }
    if let (Some(ka), Some(kb)) = (a2[a2.len() - 1].k(), b2[b2.len() - 2].k()) {
        if ka != kb {
            return hard(format!(
                "shapes {} and {} do not multiply: inner dims {ka} and {kb} differ",
                show_dims(a),
                show_dims(b)
            ));
        }
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
    Ok(s)
}

/// Det: `[..., M, M]` → `[...]`.
pub(super) fn det(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.len() < 2 {
        return hard("Det of a tensor of rank < 2");
    }
    Ok(alloc::vec![out(dtype(ins, 0), x[..x.len() - 2].to_vec())])
}

/// Gemm: `[M, N]` after the transposes.
pub(super) fn gemm(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
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

/// Einsum: the equation's output letters (explicit `->`, else the letters used once, in
/// alphabetical order, after the ellipsis), each letter's dim from the operands.
pub(super) fn einsum(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let eq: String = attr_s(n, "equation")
        .or_why(|| "no equation".into())?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ins.len() {
        return hard(format!(
            "equation has {} operands, the node {}",
            terms.len(),
            ins.len()
        ));
    }
    let mut dims: Vec<(char, V)> = Vec::new();
    let mut ell: Vec<V> = Vec::new();
    let mut counts: Vec<(char, usize)> = Vec::new();
    for (k, t) in terms.iter().enumerate() {
        let x = shape(ins, k)?;
        let letters: Vec<char> = t.replace("...", ".").chars().collect();
        let explicit = letters.iter().filter(|&&c| c != '.').count();
        let ell_rank = x
            .len()
            .checked_sub(explicit)
            .or_why(|| "rank too small".into())?;
        let mut i = 0;
        for c in letters {
            if c == '.' {
                let e: Vec<V> = x[i..i + ell_rank].to_vec();
                ell = if ell.is_empty() {
                    e
                } else {
                    broadcast(&[&ell, &e])?
                };
                i += ell_rank;
                continue;
            }
            let d = x.get(i).cloned().or_why(|| "rank too small".into())?;
            i += 1;
            match dims.iter_mut().find(|(l, _)| *l == c) {
                Some((_, old)) => {
                    if *old == V::K(1) {
                        *old = d;
                    }
                }
                None => dims.push((c, d)),
            }
            match counts.iter_mut().find(|(l, _)| *l == c) {
                Some((_, n)) => *n += 1,
                None => counts.push((c, 1)),
            }
        }
    }
    let out_letters: Vec<char> = match rhs {
        Some(r) => r.replace("...", ".").chars().collect(),
        None => {
            let mut once: Vec<char> = counts
                .iter()
                .filter(|(_, n)| *n == 1)
                .map(|(c, _)| *c)
                .collect();
            once.sort_unstable();
            let mut v = if lhs.contains("...") {
                alloc::vec!['.']
            } else {
                Vec::new()
            };
            v.extend(once);
            v
        }
    };
    let mut s = Vec::new();
    for c in out_letters {
        if c == '.' {
            s.extend(ell.iter().cloned());
        } else {
            s.push(
                dims.iter()
                    .find(|(l, _)| *l == c)
                    .map(|(_, d)| d.clone())
                    .or_why(|| format!("output letter '{c}' not in the inputs"))?,
            );
        }
    }
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}
