#!/usr/bin/env python3
"""Real models as onnxruntime's tools leave them, with onnxruntime's own shapes as the oracle.

For each model of `shared/models/onnx` (real weights), writes into `core/tests/data/onnx_ort/`:
* `NAME.ortopt.stripped.onnx`: the model after onnxruntime's graph optimizer (level EXTENDED:
  com.microsoft FusedConv, FusedGemm, Gelu/LayerNorm fusions ...);
* `NAME.dynq.stripped.onnx`: after `onnxruntime.quantization.quantize_dynamic` (QInt8 / QUInt8:
  DynamicQuantizeLinear, MatMulInteger, ConvInteger ...);
each stripped of weight bytes (external data that does not exist, dims kept), and
`NAME.VARIANT.shapes.json`: the dtype and dims of every top-level tensor, from running the
unstripped variant in onnxruntime at the inputs of `shared/models/shapes/NAME.shapes.json`.

    /tmp/onnxvenv/bin/pip install onnx==1.19.1 onnxruntime==1.32.0
    /tmp/onnxvenv/bin/python scripts/onnx-ort-variants.py
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper as h

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("MEMPLAN_SHARED_MODELS", "/work/shared/models")
OUT = os.path.join(ROOT, "core", "tests", "data", "onnx_ort")
NP = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64}


def oracle_inputs(name):
    with open(os.path.join(SHARED, "shapes", name + ".shapes.json")) as f:
        o = json.load(f)
    shapes = dict(o["concrete_inputs"])
    for k, v in o["inputs_as_shipped"].items():
        shapes.setdefault(k, v["dims"])  # static inputs
    return {k: {"shape": v, "value": o["scalar_values"].get(k)} for k, v in shapes.items()}


def run_all(path, inputs):
    """dtype code and dims of every node output, by running the model in onnxruntime."""
    m = onnx.load(path)
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(h.make_empty_tensor_value_info(o))
                have.add(o)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.onnx")
        onnx.save(m, p)
        s = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in s.get_inputs():
            spec = inputs[i.name]
            dt = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32,
                  "tensor(bool)": np.bool_, "tensor(double)": np.float64}[i.type]
            feeds[i.name] = np.full(spec["shape"], spec["value"] or 0, dtype=dt)
        names = [o.name for o in s.get_outputs()]
        vals = s.run(names, feeds)
    res = {}
    code = {np.dtype(v): k for k, v in NP.items()}
    code[np.dtype(np.uint8)] = 2
    code[np.dtype(np.int8)] = 3
    for n, v in zip(names, vals):
        if isinstance(v, np.ndarray):
            res[n] = [code.get(v.dtype, -1), list(v.shape)]
    return res


def strip(src, dst):
    from onnx.external_data_helper import convert_model_to_external_data
    m = onnx.load(src)
    loc = os.path.basename(dst) + ".weights.bin"
    convert_model_to_external_data(m, all_tensors_to_one_file=True, location=loc,
                                   size_threshold=1024, convert_attribute=True)
    onnx.save_model(m, dst)
    bin_ = os.path.join(os.path.dirname(dst), loc)
    if os.path.exists(bin_):
        os.remove(bin_)


def main():
    from onnxruntime.quantization import QuantType, quantize_dynamic
    os.makedirs(OUT, exist_ok=True)
    summary = []
    for f in sorted(os.listdir(os.path.join(SHARED, "onnx"))):
        name = f[: -len(".onnx")]
        src = os.path.join(SHARED, "onnx", f)
        try:
            inputs = oracle_inputs(name)
        except FileNotFoundError:
            continue
        with tempfile.TemporaryDirectory() as d:
            variants = {}
            opt = os.path.join(d, "opt.onnx")
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            so.optimized_model_filepath = opt
            ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
            variants["ortopt"] = opt
            dq = os.path.join(d, "dynq.onnx")
            try:
                quantize_dynamic(src, dq, weight_type=QuantType.QUInt8)
                variants["dynq"] = dq
            except Exception as e:
                print(f"{name}: quantize_dynamic failed: {e}", file=sys.stderr)
            for v, p in variants.items():
                try:
                    shapes = run_all(p, inputs)
                except Exception as e:
                    print(f"{name}.{v}: onnxruntime failed: {e}", file=sys.stderr)
                    continue
                base = f"{name}.{v}"
                strip(p, os.path.join(OUT, base + ".stripped.onnx"))
                with open(os.path.join(OUT, base + ".shapes.json"), "w") as fo:
                    json.dump({"inputs": inputs, "tensors": shapes}, fo, indent=0, sort_keys=True)
                ops = sorted({(n.domain or "") + ":" + n.op_type for n in onnx.load(p, load_external_data=False).graph.node if n.domain})
                summary.append((base, len(shapes), ops))
                print(base, len(shapes), "tensors; non-default ops:", " ".join(ops))


if __name__ == "__main__":
    main()
