#!/usr/bin/env python3
"""Converts onnx's backend node tests into compact test data for `core/tests/onnx_node.rs`.

Run once (the output is committed), with the `onnx` pip package in a venv:

    python3 -m venv /tmp/onnxvenv && /tmp/onnxvenv/bin/pip install onnx==1.19.1
    /tmp/onnxvenv/bin/python scripts/onnx-node-tests.py

onnx 1.19.1 is the last release whose wheel ships `onnx/backend/test/data/node` (1.23 does not).
Each case there is `model.onnx` plus `test_data_set_0/{input,output}_*.pb`. Written:

* `core/tests/data/onnx_node/models.bin`: for each case, `u32 LE name length, name, u32 LE model
  length, model bytes`. The model is the case's, with two changes: every graph input with at
  most 64 elements becomes an initializer holding its test value (what shape arithmetic reads:
  Reshape targets, Slice bounds, Resize scales, TopK's k...), and payloads of tensors above
  4096 elements are dropped (the importer reads sizes from dims, not bytes), and the types of
  tensor graph outputs and all `value_info` are removed (they are the answer to infer).
* `core/tests/data/onnx_node/expected.json`: `{case: {"outputs": [[name, dtype code, [dims]]],
  "sequence": bool}}`, from the `output_*.pb` files; `sequence` marks cases whose inputs or
  outputs are sequences, maps or optionals (not planned; not checked).
"""
import json
import os
import struct
import sys

import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "core", "tests", "data", "onnx_node")
NODE = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
SMALL = 64
BIG = 4096


def is_tensor_type(t):
    return t.HasField("tensor_type") or t.HasField("sparse_tensor_type")


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def strip(t):
    if numel(t.dims) > BIG:
        t.ClearField("raw_data")
        for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
            t.ClearField(f)


def convert(case_dir):
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    g = model.graph
    data = os.path.join(case_dir, "test_data_set_0")
    sequence = any(not is_tensor_type(v.type) for v in list(g.input) + list(g.output))
    # Inputs with small values become initializers.
    inits = []
    for k, vi in enumerate(g.input):
        p = os.path.join(data, f"input_{k}.pb")
        if not is_tensor_type(vi.type) or not os.path.exists(p):
            continue
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        if numel(t.dims) <= SMALL and t.data_type != onnx.TensorProto.STRING:
            t.name = vi.name
            inits.append(t)
    names = {t.name for t in inits}
    keep = [vi for vi in g.input if vi.name not in names]
    del g.input[:]
    g.input.extend(keep)
    g.initializer.extend(inits)
    for t in g.initializer:
        strip(t)
    for n in g.node:
        for a in n.attribute:
            if a.HasField("t"):
                strip(a.t)
    outputs = []
    for k, vi in enumerate(g.output):
        p = os.path.join(data, f"output_{k}.pb")
        if not is_tensor_type(vi.type) or not os.path.exists(p):
            continue
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        outputs.append([vi.name, t.data_type, list(t.dims)])
    # The declared output types are the answer: the importer must infer them, not read them.
    for vi in g.output:
        if is_tensor_type(vi.type):
            vi.ClearField("type")
    del g.value_info[:]
    return model.SerializeToString(), {"outputs": outputs, "sequence": sequence}


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    with open(os.path.join(OUT, "models.bin"), "wb") as f:
        for case in sorted(os.listdir(NODE)):
            d = os.path.join(NODE, case)
            if not os.path.exists(os.path.join(d, "model.onnx")):
                continue
            try:
                blob, exp = convert(d)
            except Exception as e:  # a case this script cannot read is reported, not hidden
                print(f"skipped {case}: {e}", file=sys.stderr)
                continue
            name = case.encode()
            f.write(struct.pack("<I", len(name)) + name + struct.pack("<I", len(blob)) + blob)
            expected[case] = exp
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(expected)} cases from onnx {onnx.__version__} into {OUT}")


if __name__ == "__main__":
    main()
