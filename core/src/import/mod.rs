//! Importers: text and bytes in, [`crate::Graph`] or [`crate::Problem`] out.

pub mod csv;
#[cfg(feature = "serde")]
pub mod json;
pub mod load;
#[cfg(feature = "onnx")]
pub mod onnx;
#[cfg(feature = "tflite")]
pub mod tflite;
#[cfg(feature = "tflite")]
pub mod tflm_order;
