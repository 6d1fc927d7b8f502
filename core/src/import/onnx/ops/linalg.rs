//! Matrix products: MatMul, Gemm, Einsum.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("MatMul", matmul),
    ("MatMulInteger", matmul),
    ("Gemm", gemm),
    ("Einsum", einsum),
];

/// MatMul (numpy matmul), MatMulInteger (int32).
pub(super) fn matmul(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let op = n.op_type.as_str();
    let dt0 = dtype(ins, 0);
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
    let dt = if op == "MatMulInteger" {
        Some(DType::Int32)
    } else {
        dt0
    };
    Ok(alloc::vec![out(dt, s)])
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

/// Einsum.
pub(super) fn einsum(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    why("Einsum is not supported")
}
