#!/usr/bin/env python3
"""Writes static/samples/mobilenet-v2-blocks.json: the stem and the first five inverted-residual
blocks of MobileNetV2 (shapes as torchvision's, BatchNorm folded into Conv, ReLU6 as Clip, as an
ONNX export has them), then a 1x1 head conv, global pool and classifier, in memplan.graph/1."""
import json, sys

tensors, ops = [], []
def t(name, shape, kind=None):
    d = {"name": name, "dtype": "float32", "shape": shape}
    if kind: d["kind"] = kind
    tensors.append(d); return name
def op(name, typ, ins, outs):
    ops.append({"name": name, "type": typ, "inputs": ins, "outputs": outs})

B = "batch"
x = t("input", [B, 3, 224, 224])
def conv(name, inp, cin, cout, hw, k=1, groups=1, relu=True):
    w = t(f"{name}.weight", [cout, cin // groups, k, k], "weight")
    b = t(f"{name}.bias", [cout], "weight")
    y = t(f"{name}.out", [B, cout, hw, hw])
    op(name, "Conv", [inp, w, b], [y])
    if relu:
        r = t(f"{name}.relu6", [B, cout, hw, hw])
        op(f"{name}.clip", "Clip", [y], [r])
        return r
    return y

h = conv("features.0", x, 3, 32, 112, k=3)
# (expand t, out c, stride s, input hw)
blocks = [(1, 16, 1), (6, 24, 2), (6, 24, 1), (6, 32, 2), (6, 32, 1)]
cin, hw = 32, 112
for i, (tt, c, s) in enumerate(blocks, start=1):
    p = f"features.{i}"
    inp = h
    hid = cin * tt
    if tt != 1:
        h = conv(f"{p}.expand", h, cin, hid, hw)
    ohw = hw // s
    h = conv(f"{p}.dw", h, hid, hid, ohw, k=3, groups=hid)
    h = conv(f"{p}.project", h, hid, c, ohw, relu=False)
    if s == 1 and cin == c:
        y = t(f"{p}.add", [B, c, ohw, ohw])
        op(f"{p}.residual", "Add", [inp, h], [y])
        h = y
    cin, hw = c, ohw
h = conv("features.head", h, cin, 1280, hw)
g = t("pool.out", [B, 1280, 1, 1])
op("pool", "GlobalAveragePool", [h], [g])
f = t("flatten.out", [B, 1280])
op("flatten", "Flatten", [g], [f])
w = t("classifier.weight", [1000, 1280], "weight")
b = t("classifier.bias", [1000], "weight")
y = t("logits", [B, 1000])
op("classifier", "Gemm", [f, w, b], [y])

doc = {"format": "memplan.graph/1", "name": "mobilenet_v2_blocks", "tensors": tensors,
       "ops": ops, "inputs": ["input"], "outputs": ["logits"]}
json.dump(doc, sys.stdout, indent=1)
sys.stdout.write("\n")
