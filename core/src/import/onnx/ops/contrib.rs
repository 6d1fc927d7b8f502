//! The `com.microsoft` contrib ops that onnxruntime's graph optimizer, quantizers and
//! transformer tools emit (fused convs and matmuls, the layer-norm family, the Gelu family,
//! attention, MatMulNBits, the QLinear* ops, QGemm, dynamic quantization). Shapes after
//! onnxruntime's contrib op schemas (`onnxruntime/core/graph/contrib_ops/*_defs.cc`).

use super::common::*;
use super::linalg::matmul_shapes;
use super::{conv, linalg, norm, pool, quant, rnn};

/// `(op_type, inference)` of this domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Tokenizer", tokenizer),
    ("FusedConv", conv::conv),
    ("FusedGemm", linalg::gemm),
    ("FusedMatMul", fused_matmul),
    ("MatMulNBits", matmul_nbits),
    ("MatMulIntegerToFloat", matmul_to_float),
    ("DynamicQuantizeMatMul", matmul_to_float),
    ("GemmFastGelu", matmul_like),
    ("LayerNormalization", norm::layer_norm),
    ("SimplifiedLayerNormalization", norm::layer_norm),
    ("SkipLayerNormalization", skip_layer_norm),
    ("SkipSimplifiedLayerNormalization", skip_layer_norm),
    ("Gelu", like0),
    ("FastGelu", like0),
    ("BiasGelu", like0),
    ("QuickGelu", like0),
    ("BiasAdd", like0),
    ("BiasSoftmax", like0),
    ("BiasDropout", bias_dropout),
    ("BiasSplitGelu", bias_split_gelu),
    ("RotaryEmbedding", like0),
    ("Attention", attention),
    ("QAttention", q_attention),
    ("MultiHeadAttention", multi_head_attention),
    ("DecoderMaskedMultiHeadAttention", multi_head_attention),
    ("GroupQueryAttention", group_query_attention),
    ("EmbedLayerNormalization", embed_layer_norm),
    ("QEmbedLayerNormalization", q_embed_layer_norm),
    ("QuantizeLinear", quant::quantize_linear),
    ("DequantizeLinear", quant::dequantize_linear),
    ("QLinearAdd", qlinear_binary),
    ("QLinearMul", qlinear_binary),
    ("QLinearSigmoid", like0),
    ("QLinearLeakyRelu", like0),
    ("QLinearSoftmax", like0),
    ("QLinearGlobalAveragePool", qlinear_global_pool),
    ("QLinearAveragePool", pool::pool),
    ("QLinearConcat", qlinear_concat),
    ("QGemm", qgemm),
    ("DynamicQuantizeLSTM", rnn::rnn),
    ("Trilu", like0),
    ("Inverse", like0),
];

/// Like input 0.
pub(super) fn like0(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    same(ins)
}

fn swap_last(s: &[V]) -> Vec<V> {
    let mut s = s.to_vec();
    let r = s.len();
    if r >= 2 {
        s.swap(r - 1, r - 2);
    }
    s
}

/// FusedMatMul: MatMul with `transA`/`transB` (the last two dims swapped).
pub(super) fn fused_matmul(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let (mut a, mut b) = (shape(ins, 0)?.clone(), shape(ins, 1)?.clone());
    if attr_i(n, "transA").unwrap_or(0) == 1 {
        a = swap_last(&a);
    }
    if attr_i(n, "transB").unwrap_or(0) == 1 {
        b = swap_last(&b);
    }
    Ok(alloc::vec![out(dtype(ins, 0), matmul_shapes(&a, &b)?)])
}

/// MatMulNBits: A `[..., K]` times a packed `[K, N]`: `[..., N]`, A's dtype.
pub(super) fn matmul_nbits(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let mut s = shape(ins, 0)?.clone();
    let nn = attr_i(n, "N").or_why(|| "no N attribute".into())?;
    *s.last_mut().or_why(|| "A is a scalar".into())? = V::K(nn);
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// MatMulIntegerToFloat, DynamicQuantizeMatMul: matmul, dtype of the scale (input 2) or float.
pub(super) fn matmul_to_float(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = dtype(ins, 2).or(Some(DType::Float32));
    Ok(alloc::vec![out(
        dt,
        matmul_shapes(shape(ins, 0)?, shape(ins, 1)?)?
    )])
}

/// GemmFastGelu: matmul, A's dtype.
pub(super) fn matmul_like(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(
        dtype(ins, 0),
        matmul_shapes(shape(ins, 0)?, shape(ins, 1)?)?
    )])
}

/// SkipLayerNormalization (and Simplified): output like input; mean and inv_std_var
/// `[..., 1]` float; input_skip_bias_sum (the last output) like input.
pub(super) fn skip_layer_norm(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let dt = dtype(ins, 0);
    let mut red = x.clone();
    if let Some(l) = red.last_mut() {
        *l = V::K(1);
    }
    let k = n.output.len();
    Ok((0..k)
        .map(|j| {
            if j == 0 || j == 3 || (n.op_type.starts_with("SkipSimplified") && j == 2 && k == 3) {
                out(dt, x.clone())
            } else {
                out(Some(DType::Float32), red.clone())
            }
        })
        .collect())
}

/// BiasDropout: output like input, mask bool.
pub(super) fn bias_dropout(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    Ok(alloc::vec![
        out(dtype(ins, 0), x.clone()),
        out(Some(DType::Bool), x.clone())
    ])
}

/// BiasSplitGelu: the last dim halved.
pub(super) fn bias_split_gelu(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let mut s = shape(ins, 0)?.clone();
    let l = s.last_mut().or_why(|| "scalar input".into())?;
    *l = l.div(&V::K(2)).or_why(|| "overflow".into())?;
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// Attention (contrib): input `[B, S, I]`, weights `[I, q + k + v]`
/// (`qkv_hidden_sizes`, else three equal parts): output `[B, S, v]`; present
/// `[2, B, num_heads, past + S, v / num_heads]` (past: input 4).
pub(super) fn attention(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    attention_with(n, ins, dtype(ins, 0), 4)
}

/// QAttention: Attention on a quantized input and weights; outputs in the bias's float type
/// (input 2), past at input 8 (onnxruntime `quantization_defs.cc`).
pub(super) fn q_attention(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    attention_with(n, ins, dtype(ins, 2), 8)
}

fn attention_with(
    n: &NodeProto,
    ins: &[Option<&Info>],
    dt: Option<DType>,
    past_k: usize,
) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let w = shape(ins, 1)?;
    if x.len() != 3 || w.len() != 2 {
        return hard("input must be [B, S, I] and weights [I, 3H]");
    }
    let ov = || "overflow".to_string();
    let v = match attr_ints(n, "qkv_hidden_sizes") {
        Some(q) if q.len() == 3 => V::K(q[2]),
        _ => w[1].div(&V::K(3)).or_why(ov)?,
    };
    let mut o = alloc::vec![out(dt, alloc::vec![x[0].clone(), x[1].clone(), v.clone()])];
    if n.output.len() > 1 {
        let heads = V::K(attr_i(n, "num_heads").or_why(|| "no num_heads".into())?);
        let past = if has(ins, past_k) {
            shape(ins, past_k)?
                .get(3)
                .cloned()
                .or_why(|| "past rank".into())?
        } else {
            V::K(0)
        };
        let total = past.add(&x[1]).or_why(ov)?;
        let head = v.div(&heads).or_why(ov)?;
        o.push(out(
            dt,
            alloc::vec![V::K(2), x[0].clone(), heads, total, head],
        ));
    }
    Ok(o)
}

/// MultiHeadAttention: output `[B, S, Dv]`, Dv from value (3-D: its last dim; 4-D
/// `[B, N, L, H]`: N * H), else the query's hidden size.
pub(super) fn multi_head_attention(
    _n: &NodeProto,
    _opset: i64,
    ins: &[Option<&Info>],
) -> R<Vec<O>> {
    let q = shape(ins, 0)?;
    if q.len() != 3 {
        return why("packed query layouts are not inferred");
    }
    let dv = if has(ins, 2) {
        let v = shape(ins, 2)?;
        match v.len() {
            3 => v[2].clone(),
            4 => v[1].mul(&v[3]).or_why(|| "overflow".into())?,
            _ => q[2].clone(),
        }
    } else {
        q[2].clone()
    };
    Ok(alloc::vec![out(
        dtype(ins, 0),
        alloc::vec![q[0].clone(), q[1].clone(), dv]
    )])
}

/// GroupQueryAttention: output `[B, S, num_heads * head]` (head = D / num_heads, or
/// D / (num_heads + 2 kv_num_heads) for a packed QKV query); present_key and present_value
/// like past_key and past_value (inputs 3, 4; a shared buffer) when given.
pub(super) fn group_query_attention(
    n: &NodeProto,
    _opset: i64,
    ins: &[Option<&Info>],
) -> R<Vec<O>> {
    let q = shape(ins, 0)?;
    if q.len() != 3 {
        return hard("query must be [B, S, D]");
    }
    let ov = || "overflow".to_string();
    let nh = attr_i(n, "num_heads").or_why(|| "no num_heads".into())?;
    let kvh = attr_i(n, "kv_num_heads").or_why(|| "no kv_num_heads".into())?;
    let parts = if has(ins, 1) {
        nh
    } else {
        nh.checked_add(kvh.checked_mul(2).or_why(ov)?).or_why(ov)?
    };
    let head = q[2].div(&V::K(parts)).or_why(ov)?;
    let dt = dtype(ins, 0);
    let mut o = alloc::vec![out(
        dt,
        alloc::vec![q[0].clone(), q[1].clone(), V::K(nh).mul(&head).or_why(ov)?]
    )];
    for k in [3, 4] {
        if n.output.len() > o.len() {
            if !has(ins, k) {
                return Ok(o);
            }
            o.push(out(dt, shape(ins, k)?.clone()));
        }
    }
    Ok(o)
}

/// QEmbedLayerNormalization: EmbedLayerNormalization on quantized tables; `layernorm_out`
/// `[B, S, H]` in the scales' float type (input 8, `word_embedding_scale`), `mask_index`
/// int32 `[B]` (onnxruntime `quantization_defs.cc`).
pub(super) fn q_embed_layer_norm(n: &NodeProto, opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let mut o = embed_layer_norm(n, opset, ins)?;
    o.truncate(2);
    o[0].dtype = dtype(ins, 8);
    Ok(o)
}

/// EmbedLayerNormalization: output `[B, S, H]` (H from the word embedding `[V, H]`,
/// input 2), mask_index `[B]` int32, embedding_sum like output.
pub(super) fn embed_layer_norm(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let ids = shape(ins, 0)?;
    let w = shape(ins, 2)?;
    if ids.len() != 2 || w.len() != 2 {
        return hard("input_ids must be [B, S] and word_embedding [V, H]");
    }
    let s = alloc::vec![ids[0].clone(), ids[1].clone(), w[1].clone()];
    let dt = dtype(ins, 2);
    Ok(alloc::vec![
        out(dt, s.clone()),
        out(Some(DType::Int32), alloc::vec![ids[0].clone()]),
        out(dt, s),
    ])
}

/// QLinearAdd, QLinearMul: broadcast of A (input 0) and B (input 3), A's dtype.
pub(super) fn qlinear_binary(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let s = broadcast(&[shape(ins, 0)?, shape(ins, 3)?])?;
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// QLinearGlobalAveragePool: spatial dims 1 (`channels_last`: all but the first and last).
pub(super) fn qlinear_global_pool(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let mut s = shape(ins, 0)?.clone();
    let r = s.len();
    let last = attr_i(n, "channels_last").unwrap_or(0) == 1;
    for (k, d) in s.iter_mut().enumerate() {
        let spatial = if last { k > 0 && k + 1 < r } else { k >= 2 };
        if spatial {
            *d = V::K(1);
        }
    }
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// QLinearConcat: inputs Y_scale, Y_zero_point, then (X, scale, zero_point) triples:
/// the X's concatenated along `axis`.
pub(super) fn qlinear_concat(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let xs: Vec<&Vec<V>> = (2..ins.len())
        .step_by(3)
        .map(|k| shape(ins, k))
        .collect::<R<_>>()?;
    let first = xs.first().or_why(|| "no inputs".into())?;
    let ax = axis(attr_i(n, "axis").unwrap_or(0), first.len(), "axis")?;
    let mut s = (*first).clone();
    let mut tot = V::K(0);
    for x in &xs {
        if x.len() != first.len() {
            return hard("inputs of different ranks");
        }
        tot = tot.add(&x[ax]).or_why(|| "overflow".into())?;
    }
    s[ax] = tot;
    Ok(alloc::vec![out(dtype(ins, 2), s)])
}

/// QGemm: A (input 0) and B (input 3) with `transA`/`transB`: `[M, N]`, dtype of
/// y_zero_point (input 8), float when absent.
pub(super) fn qgemm(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let a = shape(ins, 0)?;
    let b = shape(ins, 3)?;
    if a.len() != 2 || b.len() != 2 {
        return hard("QGemm inputs must be 2-D");
    }
    let m = if attr_i(n, "transA").unwrap_or(0) == 1 {
        &a[1]
    } else {
        &a[0]
    };
    let nn = if attr_i(n, "transB").unwrap_or(0) == 1 {
        &b[0]
    } else {
        &b[1]
    };
    let dt = dtype(ins, 8).or(Some(DType::Float32));
    Ok(alloc::vec![out(dt, alloc::vec![m.clone(), nn.clone()])])
}

/// Tokenizer (`text_defs`/contrib Tokenizer kernel): strings `[N]` or `[N, C]` in, the same
/// dims plus the token count `T` out. `T` depends on the data (no bound): a named unknown dim,
/// so the output is of unknown size, but what follows from its rank (TfIdfVectorizer's
/// `[N, width]`) is known.
pub(super) fn tokenizer(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.is_empty() || x.len() > 2 {
        return hard(format!("input rank {}, not 1 or 2", x.len()));
    }
    let mut s = x.clone();
    s.push(V::E("?".into()));
    Ok(alloc::vec![out(Some(DType::String), s)])
}
