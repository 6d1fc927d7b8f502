//! Attention (opset 23) and RotaryEmbedding (opset 23) of the default domain.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] =
    &[("Attention", attention), ("RotaryEmbedding", like_input)];

/// Output 0 like input 0 (RotaryEmbedding: same shape and dtype as X).
pub(super) fn like_input(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    same(ins)
}

/// Attention-23: Q, K, V 4-D `[B, heads, seq, head]` or 3-D `[B, seq, heads*head]` with
/// `q_num_heads`/`kv_num_heads`; past_key/past_value (inputs 4, 5) add their sequence.
/// Y has Q's layout with V's head size; present_key `[B, kv_heads, total, head]`,
/// present_value `[B, kv_heads, total, v_head]`, qk_matmul_output `[B, q_heads, q_seq, total]`.
pub(super) fn attention(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = dtype(ins, 0);
    let (q, k, v) = (shape(ins, 0)?, shape(ins, 1)?, shape(ins, 2)?);
    let ov = || "overflow".to_string();
    let heads = |name: &str| -> R<V> {
        attr_i(n, name)
            .map(V::K)
            .or_why(|| format!("3-D inputs need the attribute {name}"))
    };
    // 4-D views: (batch, heads, seq, head)
    let (b, qh, qs, _qd) = match q.len() {
        4 => (q[0].clone(), q[1].clone(), q[2].clone(), q[3].clone()),
        3 => {
            let h = heads("q_num_heads")?;
            (
                q[0].clone(),
                h.clone(),
                q[1].clone(),
                q[2].div(&h).or_why(ov)?,
            )
        }
        r => return hard(format!("Q has rank {r}, not 3 or 4")),
    };
    let (kh, ks, kd) = match k.len() {
        4 => (k[1].clone(), k[2].clone(), k[3].clone()),
        3 => {
            let h = heads("kv_num_heads")?;
            (h.clone(), k[1].clone(), k[2].div(&h).or_why(ov)?)
        }
        r => return hard(format!("K has rank {r}, not 3 or 4")),
    };
    let vd = match v.len() {
        4 => v[3].clone(),
        3 => v[2].div(&kh).or_why(ov)?,
        r => return hard(format!("V has rank {r}, not 3 or 4")),
    };
    let total = if has(ins, 4) {
        let p = shape(ins, 4)?;
        p.get(2)
            .or_why(|| "past_key rank".into())?
            .add(&ks)
            .or_why(ov)?
    } else {
        ks.clone()
    };
    let y = if q.len() == 4 {
        alloc::vec![b.clone(), qh.clone(), qs.clone(), vd.clone()]
    } else {
        alloc::vec![b.clone(), qs.clone(), qh.mul(&vd).or_why(ov)?]
    };
    let mut o = alloc::vec![out(dt, y)];
    if n.output.len() > 1 {
        o.push(out(
            dt,
            alloc::vec![b.clone(), kh.clone(), total.clone(), kd],
        ));
    }
    if n.output.len() > 2 {
        o.push(out(dt, alloc::vec![b.clone(), kh, total.clone(), vd]));
    }
    if n.output.len() > 3 {
        o.push(out(dt, alloc::vec![b, qh, qs, total]));
    }
    Ok(o)
}
