//! `com.microsoft.nchwc`: the blocked-channel layout onnxruntime's graph optimizer writes at
//! level ALL on CPUs (`NchwcTransformer`). Tensors stay 4-D `[N, C, H, W]` in the graph; the
//! kernels store channels in blocks of the machine's MLAS block size (8 or 16), and the Conv
//! filters in the file are already padded to it, so channel counts come from the weights.
//! Shapes per onnxruntime's `core/graph/contrib_ops/nchwc_schema_defs.cc`.

use super::common::*;
use super::{conv, pool};
use crate::import::onnx::proto::GraphProto;

/// `(op_type, inference)` of the `com.microsoft.nchwc` domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("Conv", nchwc_conv),
    ("MaxPool", pool::pool),
    ("AveragePool", pool::pool),
    ("GlobalMaxPool", pool::global_pool),
    ("GlobalAveragePool", pool::global_pool),
    ("ReorderInput", reorder_input),
    ("ReorderOutput", reorder_output),
    ("Upsample", upsample),
];

/// The attribute [`annotate_block`] gives ReorderInput nodes: the NCHWc block size the file
/// proves. Not an ONNX attribute (the dot keeps it apart from the schema's names).
pub(crate) const BLOCK_ATTR: &str = "memplan.nchwc_block";

/// The attribute [`annotate_block`] gives a ReorderInput node whose output an NCHWc Conv
/// reads: the padded channel count that Conv's filter takes (`W[1] × group`,
/// onnxruntime's NCHWc Conv requires the input's channels to equal it).
pub(crate) const CHANNELS_ATTR: &str = "memplan.nchwc_channels";

/// The file's own evidence of the machine's NCHWc block (MLAS `MlasNchwcGetBlockSize`: 8 on
/// AVX2 and NEON, 16 on AVX-512). The optimizer pads every reordered Conv filter's output
/// channels to a multiple of the block (`NchwcTransformer::TransformConv`), so:
/// - a filter with `8 mod 16` output channels proves a block of 8;
/// - a ReorderOutput back to `C` channels from a Conv whose filter has more than
///   `roundup(C, 8)` output channels (24 from 32, 2 from 16) proves a block of 16.
///
/// With one of them (not both: a file that claims both is left alone) every top-level
/// ReorderInput gets [`BLOCK_ATTR`]. Independently, a ReorderInput read by an NCHWc Conv gets
/// [`CHANNELS_ATTR`], that Conv's own statement of the padded channels.
pub(crate) fn annotate_block(g: &mut GraphProto) {
    let filter = |name: &str| g.initializer.iter().find(|t| t.name == name);
    let convs = || {
        g.node
            .iter()
            .filter(|n| n.domain == DOMAIN && n.op_type == "Conv")
    };
    let proves_8 = convs()
        .filter_map(|n| n.input.get(1))
        .filter_map(|w| filter(w))
        .any(|t| t.dims.first().is_some_and(|&o| o % 16 == 8));
    let producer = |t: &str| g.node.iter().find(|n| n.output.iter().any(|o| o == t));
    let proves_16 = g
        .node
        .iter()
        .filter(|n| n.domain == DOMAIN && n.op_type == "ReorderOutput")
        .any(|n| {
            let c = attr_i(n, "channels").unwrap_or(0);
            // back through the NCHWc ops that keep the channel count, to the Conv
            let mut p = n.input.first().and_then(|i| producer(i));
            for _ in 0..16 {
                match p {
                    Some(x)
                        if x.domain == DOMAIN
                            && matches!(
                                x.op_type.as_str(),
                                "MaxPool"
                                    | "AveragePool"
                                    | "GlobalMaxPool"
                                    | "GlobalAveragePool"
                                    | "Upsample"
                            ) =>
                    {
                        p = x.input.first().and_then(|i| producer(i));
                    }
                    _ => break,
                }
            }
            let o = p
                .filter(|x| x.domain == DOMAIN && x.op_type == "Conv")
                .and_then(|x| x.input.get(1))
                .and_then(|w| filter(w))
                .and_then(|t| t.dims.first().copied());
            match (o, round_up(c, 8)) {
                (Some(o), Some(r8)) => c > 0 && o > r8,
                _ => false,
            }
        });
    // per ReorderInput: the padded channels the NCHWc Conv reading it takes
    let channels: Vec<Option<i64>> = g
        .node
        .iter()
        .map(|n| {
            if n.domain != DOMAIN || n.op_type != "ReorderInput" {
                return None;
            }
            let out = n.output.first()?;
            convs()
                .filter(|c| c.input.first() == Some(out))
                .filter_map(|c| {
                    let w = filter(c.input.get(1)?)?;
                    let group = attr_i(c, "group").unwrap_or(1);
                    w.dims.get(1)?.checked_mul(group).filter(|&k| k > 0)
                })
                .next()
        })
        .collect();
    let block = match (proves_8, proves_16) {
        (true, false) => Some(8),
        (false, true) => Some(16),
        _ => None,
    };
    for (n, k) in g.node.iter_mut().zip(channels) {
        if n.domain != DOMAIN || n.op_type != "ReorderInput" {
            continue;
        }
        let mut mark = |name: &str, i: i64| {
            n.attribute.push(AttributeProto {
                name: name.into(),
                r#type: 2, // INT
                i,
                ..AttributeProto::default()
            });
        };
        if let Some(b) = block {
            mark(BLOCK_ATTR, b);
        }
        if let Some(k) = k {
            mark(CHANNELS_ATTR, k);
        }
    }
}

const DOMAIN: &str = "com.microsoft.nchwc";

fn round_up(c: i64, b: i64) -> Option<i64> {
    c.checked_add(b - 1).map(|x| x / b * b)
}

/// ReorderInput: `[N, C, spatial..]` (or `[N, spatial.., C]` with `channels_last`) →
/// `[N, roundup(C, block), spatial..]`. The block is the machine's; the channel count is
/// known where the Conv reading the output states it, where the file proves the block
/// ([`annotate_block`]) or where blocks of 8 and 16 pad C alike (C mod 16 is 0 or above 8);
/// otherwise it stays unknown, never guessed.
fn reorder_input(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.len() < 2 {
        return hard(format!("ReorderInput: rank {} < 2", x.len()));
    }
    let last = attr_i(n, "channels_last").unwrap_or(0) != 0;
    let c = if last { &x[x.len() - 1] } else { &x[1] };
    let why_c = || {
        format!(
            "ReorderInput: channels {} are padded to the machine's NCHWc block (8 or 16), \
             which the file does not show",
            show_dims(core::slice::from_ref(c))
        )
    };
    let c = c.k().or_why(why_c)?;
    let (r8, r16) = (round_up(c, 8), round_up(c, 16));
    // the reading Conv's filter states the padded count; it must be one a block gives
    let stated = attr_i(n, CHANNELS_ATTR);
    if let Some(k) = stated {
        if Some(k) != r8 && Some(k) != r16 {
            return hard(format!(
                "ReorderInput: the NCHWc Conv reading it takes {k} channels, which neither a \
                 block of 8 nor of 16 makes of {c}"
            ));
        }
    }
    let padded = match (stated, attr_i(n, BLOCK_ATTR)) {
        (Some(k), _) => Some(k),
        (None, Some(b)) if b > 0 => round_up(c, b),
        _ => match (r8, r16) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        },
    }
    .or_why(why_c)?;
    let mut s = alloc::vec![x[0].clone(), V::K(padded)];
    let sp = if last { &x[1..x.len() - 1] } else { &x[2..] };
    s.extend(sp.iter().cloned());
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// Conv (NCHWc): `[N, W[0], spatial..]`, W being the reordered filter (output channels padded
/// to the block); the input's channels may be padded too, so they are not checked against
/// W's.
fn nchwc_conv(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let w = shape(ins, 1)?;
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
    s.extend(conv::conv_like(n, x, &kernel, false)?);
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// ReorderOutput: back to `[N, channels, spatial..]` (`channels_last`: `[N, spatial..,
/// channels]`), `channels` being the attribute (the unpadded count).
fn reorder_output(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    if x.len() < 2 {
        return hard(format!("ReorderOutput: rank {} < 2", x.len()));
    }
    let c = attr_i(n, "channels").unwrap_or(0);
    if c <= 0 {
        return hard(format!("ReorderOutput: channels {c} must be positive"));
    }
    let mut s = alloc::vec![x[0].clone()];
    if attr_i(n, "channels_last").unwrap_or(0) != 0 {
        s.extend(x[2..].iter().cloned());
        s.push(V::K(c));
    } else {
        s.push(V::K(c));
        s.extend(x[2..].iter().cloned());
    }
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// Upsample: each dim times its integer `scales` entry.
fn upsample(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let scales = attr_ints(n, "scales").or_why(|| "Upsample: no scales".into())?;
    if scales.len() != x.len() || scales.iter().any(|&s| s <= 0) {
        return hard(format!(
            "Upsample: scales {scales:?} do not fit rank {}",
            x.len()
        ));
    }
    let s = x
        .iter()
        .zip(&scales)
        .map(|(d, &k)| d.mul(&V::K(k)).or_why(|| "overflow".into()))
        .collect::<R<Vec<V>>>()?;
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}
