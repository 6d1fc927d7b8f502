#!/usr/bin/env python3
"""Writes the crafted bad ONNX models of `cli/tests/bad_onnx.rs` (issue 18, "Bad input") into
`cli/tests/bad/onnx/`. Each is a small valid protobuf whose content is wrong in one way; the
importer must refuse it with an error naming the file, the node and what is wrong. Run once
with the `onnx` pip package (`/tmp/onnxvenv/bin/python scripts/onnx-bad-models.py`); the
files are committed.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cli", "tests", "bad", "onnx")


def save(name, nodes, inputs, inits=(), opset=18, outputs=("y",)):
    g = h.make_graph(
        nodes,
        name,
        [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs],
        initializer=[nh.from_array(np.array(v, dtype=d), n) for n, v, d in inits],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def main():
    os.makedirs(OUT, exist_ok=True)
    x = [("x", T.FLOAT, [2, 3, 8, 8])]
    big = 2**63 - 1
    save("slice-step-overflow", [h.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="slice0")], x,
         [("st", [0], np.int64), ("en", [8], np.int64), ("ax", [3], np.int64), ("sp", [big], np.int64)])
    save("slice-step-negative-overflow", [h.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="slice0")], x,
         [("st", [-1], np.int64), ("en", [-big - 1], np.int64), ("ax", [3], np.int64), ("sp", [-big], np.int64)])
    save("resize-nan-scale", [h.make_node("Resize", ["x", "", "sc"], ["y"], name="resize0")], x,
         [("sc", [1.0, 1.0, float("nan"), 2.0], np.float32)])
    save("topk-k-too-large", [h.make_node("TopK", ["x", "k"], ["y", "i"], name="topk0")], x,
         [("k", [1 << 40], np.int64)], outputs=("y", "i"))
    save("negative-dim", [h.make_node("Relu", ["x"], ["y"], name="relu0")], [("x", T.FLOAT, [2, -5])])
    save("reshape-count-mismatch", [h.make_node("Reshape", ["x", "s"], ["y"], name="reshape0")], x,
         [("s", [2, 3, 8, 9], np.int64)])
    save("matmul-mismatch", [h.make_node("MatMul", ["a", "b"], ["y"], name="matmul0")],
         [("a", T.FLOAT, [4, 5]), ("b", T.FLOAT, [6, 7])])
    save("conv-group-zero", [h.make_node("Conv", ["x", "w"], ["y"], name="conv0", group=0)],
         x + [("w", T.FLOAT, [4, 3, 3, 3])])
    save("maxpool-kernel-zero", [h.make_node("MaxPool", ["x"], ["y"], name="pool0", kernel_shape=[0, 2])], x)
    save("split-parts-dont-sum", [h.make_node("Split", ["x", "sp"], ["y", "z"], name="split0", axis=1)], x,
         [("sp", [1, 1], np.int64)], outputs=("y", "z"))
    save("transpose-repeated-axis", [h.make_node("Transpose", ["x"], ["y"], name="transpose0", perm=[0, 1, 1, 3])], x)
    # A symbolic dim that is negative once bound: a 5x5 kernel over h x h with h = 3
    # (`--dim h=3`): h-4 = -1.
    save("symbolic-dim-negative", [h.make_node("Conv", ["x", "w"], ["y"], name="conv0")],
         [("x", T.FLOAT, [1, 1, "h", "h"]), ("w", T.FLOAT, [1, 1, 5, 5])])
    # A symbolic size that overflows u64 once bound: n^3 floats with n = 2^32 (`--dim n=4294967296`).
    save("symbolic-size-overflow", [h.make_node("Relu", ["x"], ["y"], name="relu0")], [("x", T.FLOAT, ["n", "n", "n"])])
    # Honesty (issue 14): a node nobody can infer (unknown domain) and an input dim with no
    # name: their tensors are of unknown size, listed, and left out of every figure.
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["a"], name="relu0"),
         h.make_node("Foo", ["a"], ["b"], name="foo0", domain="com.example"),
         h.make_node("Relu", ["b"], ["y"], name="relu1")],
        "unknown", [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("com.example", 1)])
    onnx.save(m, os.path.join(OUT, "unknown-op.onnx"))
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["y"], name="relu0")],
        "unnamed", [h.make_tensor_value_info("x", T.FLOAT, [1, None])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), os.path.join(OUT, "unnamed-dim.onnx"))
    print("written to", OUT)


if __name__ == "__main__":
    main()
