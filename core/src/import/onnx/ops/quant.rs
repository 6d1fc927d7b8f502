//! Quantization.

use super::common::*;

/// `(op_type, inference)` of this family, default domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("QuantizeLinear", quantize_linear),
    ("DequantizeLinear", dequantize_linear),
];

/// QuantizeLinear: dtype of y_zero_point, `output_dtype`, else uint8.
pub(super) fn quantize_linear(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = dtype(ins, 2)
        .or_else(|| attr_i(n, "output_dtype").and_then(dtype_code))
        .or(Some(DType::Uint8));
    Ok(alloc::vec![out(dt, shape(ins, 0)?.clone())])
}

/// DequantizeLinear: dtype of x_scale.
pub(super) fn dequantize_linear(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(dtype(ins, 1), shape(ins, 0)?.clone())])
}
