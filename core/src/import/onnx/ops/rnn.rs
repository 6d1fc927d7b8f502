//! Recurrent layers.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[("LSTM", rnn), ("GRU", rnn), ("RNN", rnn)];

/// LSTM, GRU, RNN: Y `[seq, dirs, batch, hidden]` (layout 0), Y_h and Y_c `[dirs, batch, hidden]`.
pub(super) fn rnn(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt0 = dtype(ins, 0);
    let x = shape(ins, 0)?;
    if x.len() != 3 {
        return hard("X must be 3-D");
    }
    let layout = attr_i(n, "layout").unwrap_or(0);
    let dirs = if attr_s(n, "direction").as_deref() == Some("bidirectional") {
        2
    } else {
        1
    };
    let h = match attr_i(n, "hidden_size") {
        Some(h) => V::K(h),
        None => shape(ins, 2)?.get(2).cloned().or_why(|| "R rank".into())?,
    };
    let (seq, batch) = if layout == 0 {
        (&x[0], &x[1])
    } else {
        (&x[1], &x[0])
    };
    let d = V::K(dirs);
    let (y, yh) = if layout == 0 {
        (
            alloc::vec![seq.clone(), d.clone(), batch.clone(), h.clone()],
            alloc::vec![d, batch.clone(), h],
        )
    } else {
        (
            alloc::vec![batch.clone(), seq.clone(), d.clone(), h.clone()],
            alloc::vec![batch.clone(), d, h],
        )
    };
    Ok(alloc::vec![out(dt0, y), out(dt0, yh.clone()), out(dt0, yh)])
}
