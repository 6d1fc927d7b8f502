//! The `ai.onnx.ml` domain (scikit-learn exports): classifiers, regressors, encoders,
//! scalers. Batch is the first dim of X (`[N, C]`, or `[C]` read as one row).

use super::common::*;

/// `(op_type, inference)` of this domain.
pub(super) const OPS: &[(&str, Infer)] = &[
    ("ArrayFeatureExtractor", array_feature_extractor),
    ("Binarizer", like0),
    ("Imputer", like0),
    ("Normalizer", float_like0),
    ("Scaler", float_like0),
    ("LabelEncoder", label_encoder),
    ("CategoryMapper", category_mapper),
    ("OneHotEncoder", one_hot_encoder),
    ("FeatureVectorizer", feature_vectorizer),
    ("LinearRegressor", regressor),
    ("SVMRegressor", regressor),
    ("TreeEnsembleRegressor", regressor),
    ("TreeEnsemble", tree_ensemble),
    ("LinearClassifier", classifier),
    ("SVMClassifier", classifier),
    ("TreeEnsembleClassifier", classifier),
    ("ZipMap", zip_map),
    ("DictVectorizer", dict_vectorizer),
    ("CastMap", cast_map),
];

fn batch(ins: &[Option<&Info>]) -> R<V> {
    let x = shape(ins, 0)?;
    Ok(if x.len() <= 1 { V::K(1) } else { x[0].clone() })
}

/// Like X.
pub(super) fn like0(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    same(ins)
}

/// Float, X's shape.
pub(super) fn float_like0(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![out(
        Some(DType::Float32),
        shape(ins, 0)?.clone()
    )])
}

/// ArrayFeatureExtractor: `X[..., indices]`: X's dims but the last, then the index count
/// (a 1-D X gives `[1, count]`, as onnxruntime does).
pub(super) fn array_feature_extractor(
    _n: &NodeProto,
    _opset: i64,
    ins: &[Option<&Info>],
) -> R<Vec<O>> {
    let x = shape(ins, 0)?;
    let idx = shape(ins, 1)?;
    let k = product(idx).or_why(|| "overflow".into())?;
    let mut s = if x.len() <= 1 {
        alloc::vec![V::K(1)]
    } else {
        x[..x.len() - 1].to_vec()
    };
    s.push(k);
    Ok(alloc::vec![out(dtype(ins, 0), s)])
}

/// LabelEncoder: X's shape, the dtype of the values (`values_int64s`, `values_floats`,
/// `values_strings`, `values_tensor`).
pub(super) fn label_encoder(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = if let Some(t) = attr(n, "values_tensor").and_then(|a| a.t.as_ref()) {
        DType::from_onnx(t.data_type)
    } else if attr(n, "values_int64s").is_some() {
        Some(DType::Int64)
    } else if attr(n, "values_floats").is_some() {
        Some(DType::Float32)
    } else if attr(n, "values_strings").is_some() {
        Some(DType::String)
    } else {
        return why("LabelEncoder without values");
    };
    Ok(alloc::vec![out(dt, shape(ins, 0)?.clone())])
}

/// CategoryMapper: strings to int64 and back, X's shape.
pub(super) fn category_mapper(_n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let dt = if dtype(ins, 0) == Some(DType::String) {
        DType::Int64
    } else {
        DType::String
    };
    Ok(alloc::vec![out(Some(dt), shape(ins, 0)?.clone())])
}

/// OneHotEncoder: X's shape plus the category count; float.
pub(super) fn one_hot_encoder(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let c = attr(n, "cats_int64s")
        .map(|a| a.ints.len())
        .filter(|&l| l > 0)
        .or_else(|| attr(n, "cats_strings").map(|a| a.strings.len()))
        .or_why(|| "no categories".into())?;
    let mut s = shape(ins, 0)?.clone();
    s.push(V::K(c as i64));
    Ok(alloc::vec![out(Some(DType::Float32), s)])
}

/// FeatureVectorizer: `[N, sum(inputdimensions)]`, float.
pub(super) fn feature_vectorizer(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let d = attr_ints(n, "inputdimensions").or_why(|| "no inputdimensions".into())?;
    let sum = d
        .iter()
        .try_fold(0i64, |a, &b| a.checked_add(b))
        .or_why(|| "overflow".into())?;
    Ok(alloc::vec![out(
        Some(DType::Float32),
        alloc::vec![batch(ins)?, V::K(sum)]
    )])
}

/// Regressors: `[N, targets]` float (`targets`/`n_targets`, default 1).
pub(super) fn regressor(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let t = attr_i(n, "targets").or(attr_i(n, "n_targets")).unwrap_or(1);
    Ok(alloc::vec![out(
        Some(DType::Float32),
        alloc::vec![batch(ins)?, V::K(t)]
    )])
}

/// TreeEnsemble (ml opset 5): `[N, n_targets]`, X's dtype.
pub(super) fn tree_ensemble(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let t = attr_i(n, "n_targets").unwrap_or(1);
    Ok(alloc::vec![out(
        dtype(ins, 0),
        alloc::vec![batch(ins)?, V::K(t)]
    )])
}

/// Classifiers: labels `[N]` (int64 or string, after the class labels attribute) and
/// scores `[N, classes]` float (a binary linear classifier may give 1 column; onnxruntime
/// gives 2 with `post_transform` other than NONE; this counts the labels).
pub(super) fn classifier(n: &NodeProto, _opset: i64, ins: &[Option<&Info>]) -> R<Vec<O>> {
    let (dt, c) = if let Some(a) = attr(n, "classlabels_strings").filter(|a| !a.strings.is_empty())
    {
        (DType::String, a.strings.len())
    } else if let Some(a) = attr(n, "classlabels_ints").or(attr(n, "classlabels_int64s")) {
        (DType::Int64, a.ints.len())
    } else {
        return why("classifier without class labels");
    };
    let b = batch(ins)?;
    Ok(alloc::vec![
        out(Some(dt), alloc::vec![b.clone()]),
        out(Some(DType::Float32), alloc::vec![b, V::K(c as i64)]),
    ])
}

/// ZipMap: a sequence of maps (not a tensor).
pub(super) fn zip_map(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    Ok(alloc::vec![O {
        non_tensor: Some("sequence"),
        ..O::default()
    }])
}

/// DictVectorizer: a map in; `[1, vocabulary]` out, the dtype of the map's values unknown.
pub(super) fn dict_vectorizer(n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    let v = attr(n, "int64_vocabulary")
        .map(|a| a.ints.len())
        .filter(|&l| l > 0)
        .or_else(|| attr(n, "string_vocabulary").map(|a| a.strings.len()))
        .or_why(|| "no vocabulary".into())?;
    let _ = v;
    why("DictVectorizer reads a map: the batch is not known")
}

/// CastMap: a map in; `[1, N]` with N from the map: not known.
pub(super) fn cast_map(_n: &NodeProto, _opset: i64, _ins: &[Option<&Info>]) -> R<Vec<O>> {
    why("CastMap reads a map: its size is not known")
}
