//! The scratch buffers TFLM's reference kernels request in the arena head.
//!
//! A kernel asks for scratch at `Prepare` (`RequestScratchBufferInArena`); the file does not
//! hold it. TFLM adds one planner buffer per request after every tensor, in request order
//! (subgraph by subgraph, op by op, each op's requests in the order its `Prepare` makes them),
//! each live during its op only (`micro_allocation_info.cc` `MarkAllocationLifetimes`), its
//! size rounded up to 16 B like a tensor's (`micro_allocator.cc` `CreatePlan`).
//!
//! The table is that of TFLM's reference kernels (`tensorflow/lite/micro/kernels/`, the build
//! PyPI's `tflite-micro` wheel runs); CMSIS-NN and Xtensa kernels request other sizes. Each row
//! names its file; sizes are bytes, element counts are the tensors' as TFLM allocates them:
//! - `svdf_common.cc` `PrepareSvdf`: int8 input: `batch * num_filters * 4` (int32
//!   accumulators), then `batch * num_units * 4`; float: `batch * num_filters * 4`. `batch` is
//!   the input's dim 0, `num_filters` weights_feature's (input 1) dim 0, `num_units` the
//!   output's dim 1 (= num_filters / rank).
//! - `unidirectional_sequence_lstm.cc` `UnidirectionalSequenceLstmPrepare`: four buffers of
//!   `batch * state_dimension` elements of the cell state's type (input 19): that product is
//!   the element count of the hidden state (input 18), which `ValidateTensorSize` checks.
//! - `transpose_conv.cc` `TransposeConvPrepare`: int8 input (input 2): output elements * 4;
//!   int16: output elements * 8, then, with an int16 bias (input 3), bias elements * 8.
//! - `add_n.cc` `Prepare`: float32 or int8 output: one data pointer per input,
//!   `num_inputs * sizeof(void*)`; pointers are [`POINTER_BYTES`] here.
//! - `mirror_pad.cc` `MirrorPadPrepare`: two buffers of `rank(input) * 4`.
//! - `reduce_common.cc`: MEAN and SUM (`PrepareMeanOrSumHelper`): int8/int16 input: output
//!   elements * 4 first; then `rank(input) * 4` and `elements(axis) * 4`. REDUCE_MAX,
//!   REDUCE_MIN (`PrepareMinMaxHelper`) and REDUCE_ALL (`PrepareAllHelper`): `rank(input) * 4`
//!   and `elements(axis) * 4`.
//! - `conv_common.cc`, `depthwise_conv_common.cc`, `fully_connected.cc`: an INT4 filter
//!   (input 1) is unpacked into `elements(filter)` bytes.
//! - `detection_postprocess.cc`: eleven buffers sized by the custom options (`max_detections`,
//!   `num_classes` in a flexbuffer memplan does not read): unknown, and said so.
//!
//! A request of 0 bytes adds nothing to the head and is left out.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Bytes of a data pointer in the kernels' scratch (`add_n.cc`): 4, as on the 32-bit MCUs TFLM
/// targets (the x86-64 wheel uses 8).
pub const POINTER_BYTES: u64 = 4;

/// What the file says about one tensor of an op, as the table needs it.
pub(crate) struct TensorFacts {
    /// Dims as TFLM allocates them (`None`: a dim is unknown).
    pub(crate) dims: Option<Vec<u64>>,
    /// The TFLite `TensorType` code.
    pub(crate) ty: i8,
}

/// The scratch requests of one op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scratch {
    /// The kernel requests none.
    None,
    /// The kernel's requests in order, bytes each (before TFLM's 16 B rounding), and the
    /// kernel file.
    Known(Vec<u64>, &'static str),
    /// The kernel requests scratch whose size memplan cannot tell: why.
    Unknown(String),
}

const INT8: i8 = 9;
const INT16: i8 = 7;
const FLOAT32: i8 = 0;
const INT4: i8 = 17;

/// The reference kernel's scratch requests for an op of type `op_type` whose inputs and
/// outputs are given (`None`: an omitted optional input). See the module for the table.
pub(crate) fn requests(
    op_type: &str,
    inputs: &[Option<TensorFacts>],
    outputs: &[Option<TensorFacts>],
) -> Scratch {
    let input = |i: usize| inputs.get(i).and_then(Option::as_ref);
    let output = |i: usize| outputs.get(i).and_then(Option::as_ref);
    let unknown = |what: &str| {
        Scratch::Unknown(format!(
            "{op_type}: {what} is not known, so its reference kernel's scratch size is not"
        ))
    };
    let elements = |t: Option<&TensorFacts>| -> Option<u64> {
        t?.dims
            .as_ref()?
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    };
    let rank = |t: Option<&TensorFacts>| -> Option<u64> { Some(t?.dims.as_ref()?.len() as u64) };
    let dim = |t: Option<&TensorFacts>, axis: usize| -> Option<u64> {
        t?.dims.as_ref()?.get(axis).copied()
    };
    let times = |a: Option<u64>, b: u64| a.and_then(|a| a.checked_mul(b));
    let known = |v: Vec<Option<u64>>, file: &'static str, what: &str| -> Scratch {
        match v.into_iter().collect::<Option<Vec<u64>>>() {
            Some(v) => Scratch::Known(v.into_iter().filter(|&b| b > 0).collect(), file),
            None => unknown(what),
        }
    };
    match op_type {
        "SVDF" => {
            let batch = dim(input(0), 0);
            let filters = dim(input(1), 0);
            let units = dim(output(0), 1);
            let bf = batch.zip(filters).and_then(|(b, f)| b.checked_mul(f));
            if input(0).is_some_and(|t| t.ty == INT8) {
                let bu = batch.zip(units).and_then(|(b, u)| b.checked_mul(u));
                known(
                    alloc::vec![times(bf, 4), times(bu, 4)],
                    "svdf_common.cc",
                    "a dim of the input, weights_feature or output",
                )
            } else {
                known(
                    alloc::vec![times(bf, 4)],
                    "svdf_common.cc",
                    "a dim of the input or weights_feature",
                )
            }
        }
        "UNIDIRECTIONAL_SEQUENCE_LSTM" => {
            let Some(cell) = input(19) else {
                return unknown("the cell state (input 19)");
            };
            let Some(elem) = super::tflm_dtype(cell.ty).map(|d| d.bits() / 8) else {
                return unknown("the cell state's element size");
            };
            let each = times(elements(input(18)), elem);
            known(
                alloc::vec![each; 4],
                "unidirectional_sequence_lstm.cc",
                "the hidden state's (input 18) size",
            )
        }
        "TRANSPOSE_CONV" => match input(2).map(|t| t.ty) {
            Some(INT8) => known(
                alloc::vec![times(elements(output(0)), 4)],
                "transpose_conv.cc",
                "the output's size",
            ),
            Some(INT16) => {
                let mut v = alloc::vec![times(elements(output(0)), 8)];
                if let Some(bias) = input(3).filter(|b| b.ty == INT16) {
                    v.push(times(elements(Some(bias)), 8));
                }
                known(v, "transpose_conv.cc", "the output's or bias's size")
            }
            _ => Scratch::None,
        },
        "ADD_N" => match output(0).map(|t| t.ty) {
            Some(FLOAT32 | INT8) => Scratch::Known(
                alloc::vec![inputs.len() as u64 * POINTER_BYTES],
                "add_n.cc",
            ),
            _ => Scratch::None,
        },
        "MIRROR_PAD" => {
            let r = times(rank(input(0)), 4);
            known(alloc::vec![r, r], "mirror_pad.cc", "the input's rank")
        }
        "MEAN" | "SUM" => {
            let mut v = Vec::new();
            if input(0).is_some_and(|t| t.ty == INT8 || t.ty == INT16) {
                v.push(times(elements(output(0)), 4));
            }
            v.push(times(rank(input(0)), 4));
            v.push(times(elements(input(1)), 4));
            known(v, "reduce_common.cc", "the input's rank or the axis or output size")
        }
        "REDUCE_MAX" | "REDUCE_MIN" | "REDUCE_ALL" => known(
            alloc::vec![times(rank(input(0)), 4), times(elements(input(1)), 4)],
            "reduce_common.cc",
            "the input's rank or the axis size",
        ),
        "CONV_2D" | "DEPTHWISE_CONV_2D" | "FULLY_CONNECTED" => match input(1) {
            Some(f) if f.ty == INT4 => {
                let file = match op_type {
                    "CONV_2D" => "conv_common.cc",
                    "DEPTHWISE_CONV_2D" => "depthwise_conv_common.cc",
                    _ => "fully_connected.cc",
                };
                known(alloc::vec![elements(Some(f))], file, "the INT4 filter's size")
            }
            _ => Scratch::None,
        },
        "TFLite_Detection_PostProcess" => Scratch::Unknown(String::from(
            "TFLite_Detection_PostProcess: its eleven scratch buffers are sized by max_detections and num_classes in its custom options, which memplan does not read",
        )),
        _ => Scratch::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[u64], ty: i8) -> Option<TensorFacts> {
        Some(TensorFacts {
            dims: Some(dims.to_vec()),
            ty,
        })
    }

    #[test]
    fn svdf_int8_requests_filters_then_units_int32() {
        // batch 2, 64 filters of rank 2 -> 32 units: 2*64*4 = 512, 2*32*4 = 256
        let s = requests(
            "SVDF",
            &[
                t(&[2, 10], INT8),
                t(&[64, 10], INT8),
                t(&[64, 8], INT16),
                None,
                None,
            ],
            &[t(&[2, 32], INT8)],
        );
        assert_eq!(s, Scratch::Known(alloc::vec![512, 256], "svdf_common.cc"));
        // float: one buffer of batch * filters floats
        let s = requests("SVDF", &[t(&[1, 10], FLOAT32), t(&[64, 10], FLOAT32)], &[]);
        assert_eq!(s, Scratch::Known(alloc::vec![256], "svdf_common.cc"));
    }

    #[test]
    fn lstm_requests_four_cell_state_sized_buffers() {
        let mut inputs: Vec<Option<TensorFacts>> = (0..24).map(|_| None).collect();
        inputs[18] = t(&[1, 20], INT8);
        inputs[19] = t(&[1, 20], INT16);
        // 1*20 elements of int16: 40 B each
        assert_eq!(
            requests("UNIDIRECTIONAL_SEQUENCE_LSTM", &inputs, &[]),
            Scratch::Known(alloc::vec![40; 4], "unidirectional_sequence_lstm.cc")
        );
        inputs[19] = None;
        assert!(matches!(
            requests("UNIDIRECTIONAL_SEQUENCE_LSTM", &inputs, &[]),
            Scratch::Unknown(_)
        ));
    }

    #[test]
    fn other_rows() {
        // transpose conv int16 with int16 bias: 1*4*4*3 outputs * 8, 3 biases * 8
        let s = requests(
            "TRANSPOSE_CONV",
            &[
                t(&[4], 2),
                t(&[3, 2, 2, 1], INT8),
                t(&[1, 2, 2, 1], INT16),
                t(&[3], INT16),
            ],
            &[t(&[1, 4, 4, 3], INT16)],
        );
        assert_eq!(s, Scratch::Known(alloc::vec![384, 24], "transpose_conv.cc"));
        // float transpose conv: none
        let s = requests("TRANSPOSE_CONV", &[None, None, t(&[1, 2], FLOAT32)], &[]);
        assert_eq!(s, Scratch::None);
        // mean of an int8 [1,8,8,16] over 2 axes into [1,16]: 64, 16, 8
        let s = requests(
            "MEAN",
            &[t(&[1, 8, 8, 16], INT8), t(&[2], 2)],
            &[t(&[1, 16], INT8)],
        );
        assert_eq!(
            s,
            Scratch::Known(alloc::vec![64, 16, 8], "reduce_common.cc")
        );
        // add_n of three floats: three 4-byte pointers
        let s = requests(
            "ADD_N",
            &[t(&[4], FLOAT32), t(&[4], FLOAT32), t(&[4], FLOAT32)],
            &[t(&[4], FLOAT32)],
        );
        assert_eq!(s, Scratch::Known(alloc::vec![12], "add_n.cc"));
        // an int4 conv filter [8,3,3,4] unpacks into 288 bytes
        let s = requests(
            "CONV_2D",
            &[t(&[1, 5, 5, 4], INT8), t(&[8, 3, 3, 4], INT4)],
            &[],
        );
        assert_eq!(s, Scratch::Known(alloc::vec![288], "conv_common.cc"));
        assert!(matches!(
            requests("TFLite_Detection_PostProcess", &[], &[]),
            Scratch::Unknown(_)
        ));
        assert_eq!(requests("RELU", &[], &[]), Scratch::None);
    }
}
