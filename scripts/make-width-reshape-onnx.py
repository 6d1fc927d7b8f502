#!/usr/bin/env python3
"""Writes testdata/models/width_reshape.onnx: a text-recognition-like model whose default
dims are impossible (issue 28, after PP-OCRv5's recognition model).

Input x: [DynamicDimension.0, 3, 48, DynamicDimension.1] float32 (batch, channels, height,
width, as PaddleOCR's rec models). Relu, then Reshape to [0, -1, 120]: per image
3 * 48 * W = 144 W elements must split into rows of 120, so W must be a multiple of 5. The
page's default of 1 for every unbound dim makes the Reshape impossible (144 elements into rows
of 120); W = 320 (PaddleOCR's rec_image_shape 3,48,320) gives [N, 384, 120]. Then Relu.

Needs the `onnx` package from PyPI (`python3 -m venv v && v/bin/pip install onnx`).
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

x = helper.make_tensor_value_info(
    "x", TensorProto.FLOAT, ["DynamicDimension.0", 3, 48, "DynamicDimension.1"])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["DynamicDimension.0", None, 120])
shape = helper.make_tensor("shape", TensorProto.INT64, [3], [0, -1, 120])
nodes = [
    helper.make_node("Relu", ["x"], ["r"], name="Relu.0"),
    helper.make_node("Reshape", ["r", "shape"], ["s"], name="Reshape.51"),
    helper.make_node("Relu", ["s"], ["y"], name="Relu.1"),
]
graph = helper.make_graph(nodes, "width_reshape", [x], [y], initializer=[shape])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="memplan scripts/make-width-reshape-onnx.py")
onnx.checker.check_model(model)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "testdata", "models", "width_reshape.onnx")
onnx.save(model, out)
print(out)
