#!/usr/bin/env python3
"""Writes `core/tests/data/onnx_ops/` (same format as the node tests, see
`scripts/onnx-node-tests.py`): small models of ops the node tests do not cover (the
com.microsoft contrib ops, ai.onnx.ml, opset corner cases), each with its expected output
dtypes and shapes computed by hand from the op's schema (onnx's Operators.md /
ToolsAndRuntimes, onnxruntime's `contrib_ops/*_defs.cc`), noted next to each case.
Run once with the `onnx` pip package: `/tmp/onnxvenv/bin/python scripts/onnx-op-cases.py`.
"""
import json
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "core", "tests", "data", "onnx_ops")
F, I64, I32, U8 = T.FLOAT, T.INT64, T.INT32, T.UINT8


def case(name, node, inputs, outputs, inits=(), opset=18, domains=()):
    """outputs: [(name, dtype, dims)] -- the expected answer; the model declares no types."""
    g = h.make_graph(
        [node], name,
        [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [h.make_empty_tensor_value_info(o[0]) for o in outputs],
        initializer=[nh.from_array(np.array(v, dtype=d), n) for n, v, d in inits],
    )
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, 1) for d in domains]
    m = h.make_model(g, opset_imports=ops)
    return name, m.SerializeToString(), {"outputs": [list(o) for o in outputs], "sequence": False}


MS = "com.microsoft"
ML = "ai.onnx.ml"
NC = "com.microsoft.nchwc"


def cases():
    yield case("dropout_opset7_mask_is_T",  # Dropout-7: mask has type T
               h.make_node("Dropout", ["x"], ["y", "mask"]), [("x", F, [2, 3])],
               [("y", F, [2, 3]), ("mask", F, [2, 3])], opset=7)
    yield case("dropout_opset12_mask_is_bool",
               h.make_node("Dropout", ["x"], ["y", "mask"]), [("x", F, [2, 3])],
               [("y", F, [2, 3]), ("mask", T.BOOL, [2, 3])], opset=12)
    yield case("range_int64_negative_step",  # ceil((3 - 10) / -3) = ceil(2.33) = 3
               h.make_node("Range", ["s", "l", "d"], ["y"]), [],
               [("y", I64, [3])], [("s", 10, np.int64), ("l", 3, np.int64), ("d", -3, np.int64)])
    yield case("nonzero_constant",  # [[1, 0], [2, 3]]: 3 non-zeros, rank 2
               h.make_node("NonZero", ["x"], ["y"]), [], [("y", I64, [2, 3])],
               [("x", [[1, 0], [2, 3]], np.int64)])
    yield case("einsum_batch_matmul", h.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik"),
               [("a", F, [2, 3, 4]), ("b", F, [2, 4, 5])], [("y", F, [2, 3, 5])])
    yield case("einsum_implicit", h.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk"),
               [("a", F, [3, 4]), ("b", F, [4, 5])], [("y", F, [3, 5])])
    yield case("einsum_ellipsis_diagonal", h.make_node("Einsum", ["a"], ["y"], equation="...ii->...i"),
               [("a", F, [2, 3, 3])], [("y", F, [2, 3])])
    # com.microsoft
    yield case("ms_fused_matmul_transB",  # [2,3,4] x [2,5,4]^T
               h.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transB=1),
               [("a", F, [2, 3, 4]), ("b", F, [2, 5, 4])], [("y", F, [2, 3, 5])], domains=[MS])
    yield case("ms_fused_conv", h.make_node("FusedConv", ["x", "w"], ["y"], domain=MS, activation="Relu", pads=[1, 1, 1, 1]),
               [("x", F, [1, 3, 8, 8]), ("w", F, [4, 3, 3, 3])], [("y", F, [1, 4, 8, 8])], domains=[MS])
    yield case("ms_matmul_nbits",  # A [..., K] -> [..., N]
               h.make_node("MatMulNBits", ["a", "b", "s"], ["y"], domain=MS, K=64, N=128, bits=4, block_size=32),
               [("a", F, [1, 7, 64]), ("b", U8, [128, 2, 16]), ("s", F, [256])], [("y", F, [1, 7, 128])], domains=[MS])
    yield case("ms_skip_layer_norm",  # output, mean [.., 1], inv_std_var [.., 1], input_skip_bias_sum
               h.make_node("SkipLayerNormalization", ["x", "s", "g", "b"], ["y", "mean", "inv", "sum"], domain=MS),
               [("x", F, [2, 8, 16]), ("s", F, [2, 8, 16]), ("g", F, [16]), ("b", F, [16])],
               [("y", F, [2, 8, 16]), ("mean", F, [2, 8, 1]), ("inv", F, [2, 8, 1]), ("sum", F, [2, 8, 16])], domains=[MS])
    yield case("ms_fast_gelu", h.make_node("FastGelu", ["x", "b"], ["y"], domain=MS),
               [("x", F, [2, 8, 16]), ("b", F, [16])], [("y", F, [2, 8, 16])], domains=[MS])
    yield case("ms_attention",  # [B,S,I] x [I,3H]: [B,S,H]; present [2,B,heads,S,H/heads]
               h.make_node("Attention", ["x", "w", "b"], ["y", "present"], domain=MS, num_heads=4),
               [("x", F, [2, 8, 16]), ("w", F, [16, 48]), ("b", F, [48])],
               [("y", F, [2, 8, 16]), ("present", F, [2, 2, 4, 8, 4])], domains=[MS])
    yield case("ms_qattention_float_out",  # uint8 input and weights; outputs in the bias's float
               h.make_node("QAttention", ["x", "w", "b", "xs", "ws", "", "xz", "wz"], ["y", "present"],
                           domain=MS, num_heads=4),
               [("x", U8, [2, 8, 16]), ("w", U8, [16, 48]), ("b", F, [48]), ("xs", F, []), ("ws", F, []),
                ("xz", U8, []), ("wz", U8, [])],
               [("y", F, [2, 8, 16]), ("present", F, [2, 2, 4, 8, 4])], domains=[MS])
    yield case("ms_multi_head_attention",
               h.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], domain=MS, num_heads=4),
               [("q", F, [2, 8, 16]), ("k", F, [2, 10, 16]), ("v", F, [2, 10, 24])], [("y", F, [2, 8, 24])], domains=[MS])
    yield case("ms_group_query_attention",  # head = 64 / 8; present like past
               h.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sl", "tl"], ["y", "pko", "pvo"],
                           domain=MS, num_heads=8, kv_num_heads=4),
               [("q", F, [1, 5, 64]), ("k", F, [1, 5, 32]), ("v", F, [1, 5, 32]), ("pk", F, [1, 4, 10, 8]),
                ("pv", F, [1, 4, 10, 8]), ("sl", I32, [1]), ("tl", I32, [])],
               [("y", F, [1, 5, 64]), ("pko", F, [1, 4, 10, 8]), ("pvo", F, [1, 4, 10, 8])], domains=[MS])
    yield case("ms_embed_layer_norm",  # [B,S] ids, word embedding [V,H]: [B,S,H], mask_index [B] int32
               h.make_node("EmbedLayerNormalization", ["ids", "seg", "we", "pe", "se", "g", "b"], ["y", "mask"], domain=MS),
               [("ids", I32, [2, 7]), ("seg", I32, [2, 7]), ("we", F, [100, 32]), ("pe", F, [64, 32]),
                ("se", F, [2, 32]), ("g", F, [32]), ("b", F, [32])],
               [("y", F, [2, 7, 32]), ("mask", I32, [2])], domains=[MS])
    yield case("ms_qembed_layer_norm",  # uint8 tables: float output (the scales' type)
               h.make_node("QEmbedLayerNormalization",
                           ["ids", "seg", "we", "pe", "se", "g", "b", "", "wes", "pes", "ses", "gs", "bs",
                            "wez", "pez", "sez", "gz", "bz"], ["y", "mask"], domain=MS),
               [("ids", I32, [2, 7]), ("seg", I32, [2, 7]), ("we", U8, [100, 32]), ("pe", U8, [64, 32]),
                ("se", U8, [2, 32]), ("g", U8, [32]), ("b", U8, [32])]
               + [(k, F, []) for k in ("wes", "pes", "ses", "gs", "bs")]
               + [(k, U8, []) for k in ("wez", "pez", "sez", "gz", "bz")],
               [("y", F, [2, 7, 32]), ("mask", I32, [2])], domains=[MS])
    yield case("ms_qlinear_add",  # broadcast of A and B, A's type
               h.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["y"], domain=MS),
               [("a", U8, [2, 1, 4]), ("as", F, []), ("az", U8, []), ("b", U8, [3, 1]), ("bs", F, []),
                ("bz", U8, []), ("cs", F, []), ("cz", U8, [])], [("y", U8, [2, 3, 4])], domains=[MS])
    yield case("ms_qgemm_quantized_out",
               h.make_node("QGemm", ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"], ["y"], domain=MS),
               [("a", U8, [4, 8]), ("as", F, []), ("az", U8, []), ("b", U8, [8, 6]), ("bs", F, []),
                ("bz", U8, []), ("c", I32, [6]), ("ys", F, []), ("yz", U8, [])], [("y", U8, [4, 6])], domains=[MS])
    yield case("ms_qgemm_float_out",  # no y_zero_point: float
               h.make_node("QGemm", ["a", "as", "az", "b", "bs", "bz"], ["y"], domain=MS, transB=1),
               [("a", U8, [4, 8]), ("as", F, []), ("az", U8, []), ("b", U8, [6, 8]), ("bs", F, []),
                ("bz", U8, [])], [("y", F, [4, 6])], domains=[MS])
    yield case("ms_dynamic_quantize_matmul",
               h.make_node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz"], ["y"], domain=MS),
               [("a", F, [3, 5, 8]), ("b", T.INT8, [8, 6]), ("bs", F, []), ("bz", T.INT8, [])], [("y", F, [3, 5, 6])], domains=[MS])
    yield case("ms_dynamic_quantize_lstm",  # Y [seq, dirs, batch, hidden]
               h.make_node("DynamicQuantizeLSTM", ["x", "w", "r"], ["y", "yh", "yc"], domain=MS, hidden_size=16),
               [("x", F, [5, 2, 10]), ("w", T.INT8, [1, 10, 64]), ("r", T.INT8, [1, 16, 64])],
               [("y", F, [5, 1, 2, 16]), ("yh", F, [1, 2, 16]), ("yc", F, [1, 2, 16])], domains=[MS])
    # com.microsoft.nchwc (onnxruntime's optimizer at level ALL; nchwc_schema_defs.cc)
    yield case("nchwc_reorder_input",  # 12 channels: blocks of 8 and of 16 both pad to 16
               h.make_node("ReorderInput", ["x"], ["y"], domain=NC), [("x", F, [1, 12, 5, 7])],
               [("y", F, [1, 16, 5, 7])], domains=[NC])
    # A filter of 24 (8 mod 16) output channels proves a block of 8: 24 channels stay 24.
    g = h.make_graph(
        [h.make_node("ReorderInput", ["x"], ["y"], domain=NC),
         h.make_node("Conv", ["y", "w"], ["z"], domain=NC)], "nchwc_block_8",
        [h.make_tensor_value_info("x", F, [1, 24, 5, 7])],
        [h.make_empty_tensor_value_info("y"), h.make_empty_tensor_value_info("z")],
        initializer=[nh.from_array(np.zeros((24, 24, 1, 1), np.float32), "w")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(NC, 1)])
    yield "nchwc_reorder_input_block_from_filters", m.SerializeToString(), {
        "outputs": [["y", F, [1, 24, 5, 7]], ["z", F, [1, 24, 5, 7]]], "sequence": False}
    # On AVX-512 (block 16): a ReorderOutput back to 24 channels from a Conv whose filter has
    # 32 output channels proves a block of 16 (a block of 8 would give 24), so the 24 channels
    # of x pad to 32 in the ReorderInput, whose reader (a MaxPool) says nothing itself.
    g = h.make_graph(
        [h.make_node("ReorderInput", ["x"], ["y"], domain=NC),
         h.make_node("MaxPool", ["y"], ["p"], domain=NC, kernel_shape=[1, 1]),
         h.make_node("Conv", ["a", "w"], ["z"], domain=NC),
         h.make_node("ReorderOutput", ["z"], ["r"], domain=NC, channels=24)], "nchwc_block_16",
        [h.make_tensor_value_info("x", F, [1, 24, 5, 7]), h.make_tensor_value_info("a", F, [1, 16, 5, 7])],
        [h.make_empty_tensor_value_info(t) for t in ["y", "p", "z", "r"]],
        initializer=[nh.from_array(np.zeros((32, 16, 1, 1), np.float32), "w")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(NC, 1)])
    yield "nchwc_reorder_input_block_16_from_reorder_output", m.SerializeToString(), {
        "outputs": [["y", F, [1, 32, 5, 7]], ["p", F, [1, 32, 5, 7]], ["z", F, [1, 32, 5, 7]],
                    ["r", F, [1, 24, 5, 7]]], "sequence": False}
    # The depthwise NCHWc Conv reading a ReorderInput states its padded channels: W[1] x group
    # = 1 x 128, so 120 channels (8 mod 16: blocks of 8 and 16 differ) become 128; no other
    # evidence of the block in the file (onnxruntime's own answer on rapidocr_ppocrv4_rec).
    g = h.make_graph(
        [h.make_node("ReorderInput", ["x"], ["y"], domain=NC),
         h.make_node("Conv", ["y", "w"], ["z"], domain=NC, group=128, pads=[1, 1, 1, 1])],
        "nchwc_channels_from_conv",
        [h.make_tensor_value_info("x", F, [1, 120, 1, 40])],
        [h.make_empty_tensor_value_info("y"), h.make_empty_tensor_value_info("z")],
        initializer=[nh.from_array(np.zeros((128, 1, 3, 3), np.float32), "w")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid(NC, 1)])
    yield "nchwc_reorder_input_channels_from_its_conv", m.SerializeToString(), {
        "outputs": [["y", F, [1, 128, 1, 40]], ["z", F, [1, 128, 1, 40]]], "sequence": False}
    yield case("nchwc_reorder_output_channels_last",  # [N, spatial.., channels]
               h.make_node("ReorderOutput", ["x"], ["y"], domain=NC, channels=10, channels_last=1),
               [("x", F, [1, 16, 5, 7])], [("y", F, [1, 5, 7, 10])], domains=[NC])
    yield case("nchwc_conv_padded_filter",  # output channels = W's (padded) 16, 8x8 / 2 = 4x4
               h.make_node("Conv", ["x", "w"], ["y"], domain=NC, strides=[2, 2], pads=[1, 1, 1, 1],
                           activation="Relu"),
               [("x", F, [1, 3, 8, 8]), ("w", F, [16, 3, 3, 3])], [("y", F, [1, 16, 4, 4])], domains=[NC])
    yield case("nchwc_upsample",  # each dim times its scale
               h.make_node("Upsample", ["x"], ["y"], domain=NC, scales=[1, 1, 2, 3]),
               [("x", F, [1, 16, 5, 7])], [("y", F, [1, 16, 10, 21])], domains=[NC])
    # ai.onnx.ml
    yield case("ml_linear_classifier",  # labels [N] int64, scores [N, classes]
               h.make_node("LinearClassifier", ["x"], ["y", "z"], domain=ML, classlabels_ints=[0, 1, 2],
                           coefficients=[0.0] * 12),
               [("x", F, [3, 4])], [("y", I64, [3]), ("z", F, [3, 3])], domains=[ML])
    yield case("ml_tree_ensemble_regressor",
               h.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain=ML, n_targets=2),
               [("x", F, [5, 3])], [("y", F, [5, 2])], domains=[ML])
    yield case("ml_scaler", h.make_node("Scaler", ["x"], ["y"], domain=ML, scale=[2.0], offset=[1.0]),
               [("x", F, [5, 3])], [("y", F, [5, 3])], domains=[ML])
    yield case("ml_one_hot_encoder", h.make_node("OneHotEncoder", ["x"], ["y"], domain=ML, cats_int64s=[1, 2, 5, 7]),
               [("x", I64, [5, 1])], [("y", F, [5, 1, 4])], domains=[ML])


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    with open(os.path.join(OUT, "models.bin"), "wb") as f:
        for name, blob, exp in cases():
            b = name.encode()
            f.write(struct.pack("<I", len(b)) + b + struct.pack("<I", len(blob)) + blob)
            expected[name] = exp
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
        f.write("\n")
    open(os.path.join(OUT, "known_failures.txt"), "a").close()
    print(f"{len(expected)} cases into {OUT}")


if __name__ == "__main__":
    main()
