//! The ONNX importer on small models built here with the importer's own prost messages:
//! bad input (clear errors, never panics), opset differences, symbolic dims.
#![cfg(feature = "onnx")]

use memplan_core::import::onnx::proto::{
    AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, TypeTensor, ValueInfoProto,
};
use memplan_core::import::onnx::{parse, OnnxOptions};
use memplan_core::{Bindings, DType, Dim, ErrorKind};
use prost::Message;

const FLOAT: i32 = 1;
const INT64: i32 = 7;

fn dim_v(v: i64) -> Dimension {
    Dimension {
        dim_value: Some(v),
        dim_param: None,
    }
}

fn dim_p(p: &str) -> Dimension {
    Dimension {
        dim_value: None,
        dim_param: Some(p.into()),
    }
}

fn vi(name: &str, elem: i32, dims: Vec<Dimension>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeTensor {
                elem_type: elem,
                shape: Some(TensorShapeProto { dim: dims }),
            }),
            ..TypeProto::default()
        }),
    }
}

fn node(
    op: &str,
    name: &str,
    ins: &[&str],
    outs: &[&str],
    attrs: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: outs.iter().map(|s| s.to_string()).collect(),
        name: name.into(),
        op_type: op.into(),
        domain: String::new(),
        attribute: attrs,
    }
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 7,
        ints: v.to_vec(),
        ..AttributeProto::default()
    }
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 2,
        i: v,
        ..AttributeProto::default()
    }
}

fn i64_init(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type: INT64,
        dims: vec![v.len() as i64],
        int64_data: v.to_vec(),
        ..TensorProto::default()
    }
}

fn f32_init(name: &str, dims: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type: FLOAT,
        dims: dims.to_vec(),
        // weights without payload: sizes come from dims
        ..TensorProto::default()
    }
}

fn model(opset: i64, g: GraphProto) -> Vec<u8> {
    ModelProto {
        ir_version: 8,
        producer_name: "test".into(),
        graph: Some(g),
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: opset,
        }],
    }
    .encode_to_vec()
}

fn graph(
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: &[&str],
    inits: Vec<TensorProto>,
) -> GraphProto {
    GraphProto {
        node: nodes,
        name: "g".into(),
        initializer: inits,
        sparse_initializer: vec![],
        input: inputs,
        output: outputs
            .iter()
            .map(|o| ValueInfoProto {
                name: o.to_string(),
                r#type: None,
            })
            .collect(),
        value_info: vec![],
    }
}

/// x[batch,3,8,8] -> Conv(w[4,3,3,3], pad 1) -> Relu -> y
fn conv_relu() -> Vec<u8> {
    model(
        13,
        graph(
            vec![
                node(
                    "Conv",
                    "conv",
                    &["x", "w"],
                    &["c"],
                    vec![ints("pads", &[1, 1, 1, 1])],
                ),
                node("Relu", "relu", &["c"], &["y"], vec![]),
            ],
            vec![vi(
                "x",
                FLOAT,
                vec![dim_p("batch"), dim_v(3), dim_v(8), dim_v(8)],
            )],
            &["y"],
            vec![f32_init("w", &[4, 3, 3, 3])],
        ),
    )
}

fn shape_of(m: &memplan_core::import::onnx::OnnxModel, name: &str) -> Option<Vec<Dim>> {
    let id = m.graph.tensor_id(name)?;
    m.graph.tensors[id].shape.clone()
}

fn k(v: &[u64]) -> Option<Vec<Dim>> {
    Some(v.iter().map(|&d| Dim::Known(d)).collect())
}

#[test]
fn symbolic_batch_then_bound() {
    let m = parse(&conv_relu(), &OnnxOptions::default()).unwrap();
    let sym = Some(vec![
        Dim::Sym("batch".into()),
        Dim::Known(4),
        Dim::Known(8),
        Dim::Known(8),
    ]);
    assert_eq!(shape_of(&m, "y"), sym);
    assert_eq!(m.symbols, vec!["batch".to_string()]);
    assert_eq!(m.weights_bytes, 4 * 3 * 3 * 3 * 4);
    let w = m.graph.tensor_id("w").unwrap();
    assert!(m.graph.tensors[w].constant);
    assert!(!m.graph.inputs.contains(&w));
    // bound later, at lowering: x 2*3*8*8*4 = 1536, c and y 2*4*8*8*4 = 2048 each
    let b: Bindings = [("batch".to_string(), 2u64)].into_iter().collect();
    let l = m.graph.lower(&b).unwrap();
    let sizes: Vec<u64> = l.problem.buffers.iter().map(|b| b.size).collect();
    assert_eq!(sizes, vec![1536, 2048, 2048]);
    // bound at import
    let o = OnnxOptions {
        dims: b,
        ..OnnxOptions::default()
    };
    let m = parse(&conv_relu(), &o).unwrap();
    assert_eq!(shape_of(&m, "y"), k(&[2, 4, 8, 8]));
    assert!(m.symbols.is_empty());
}

#[test]
fn truncated_file_is_a_parse_error() {
    let bytes = conv_relu();
    for cut in [1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        let e = parse(&bytes[..cut], &OnnxOptions::default()).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Parse | ErrorKind::Invalid),
            "cut {cut}: {e}"
        );
    }
    let e = parse(&bytes[..bytes.len() / 2], &OnnxOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Parse, "{e}");
    assert!(e.to_string().contains("not a valid ONNX model"), "{e}");
}

#[test]
fn wrong_bytes_are_a_parse_error() {
    for bytes in [
        &b"GIF89a\x01\x00\x01\x00\x80\xff\xff"[..],
        b"",
        b"{\"not\": \"onnx\"}",
        &[0xff; 64],
    ] {
        let e = parse(bytes, &OnnxOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Parse, "{e}");
    }
}

#[test]
fn missing_input_names_the_op_and_tensor() {
    let bytes = model(
        13,
        graph(
            vec![node("Add", "add1", &["x", "nope"], &["y"], vec![])],
            vec![vi("x", FLOAT, vec![dim_v(4)])],
            &["y"],
            vec![],
        ),
    );
    let e = parse(&bytes, &OnnxOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let s = e.to_string();
    assert!(s.contains("op 'add1' (Add)") && s.contains("'nope'"), "{s}");
}

#[test]
fn cycle_names_an_op() {
    let bytes = model(
        13,
        graph(
            vec![
                node("Add", "a", &["x", "b_out"], &["a_out"], vec![]),
                node("Relu", "b", &["a_out"], &["b_out"], vec![]),
            ],
            vec![vi("x", FLOAT, vec![dim_v(4)])],
            &["b_out"],
            vec![],
        ),
    );
    let e = parse(&bytes, &OnnxOptions::default()).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("cycle") && s.contains("op 'a' (Add)"), "{s}");
    let self_loop = model(
        13,
        graph(
            vec![node("Relu", "r", &["r_out"], &["r_out"], vec![])],
            vec![],
            &["r_out"],
            vec![],
        ),
    );
    let s = parse(&self_loop, &OnnxOptions::default())
        .unwrap_err()
        .to_string();
    assert!(s.contains("cycle") && s.contains("op 'r'"), "{s}");
}

#[test]
fn overflowing_dims_name_the_tensor() {
    let bytes = model(
        13,
        graph(
            vec![node("Relu", "r", &["x"], &["y"], vec![])],
            vec![vi("x", FLOAT, vec![dim_p("n"), dim_p("n")])],
            &["y"],
            vec![],
        ),
    );
    // 2^33 * 2^33 elements * 4 bytes > u64
    let o = OnnxOptions {
        dims: [("n".to_string(), 1u64 << 33)].into_iter().collect(),
        ..OnnxOptions::default()
    };
    let e = parse(&bytes, &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
    assert!(e.to_string().contains("tensor 'x'"), "{e}");
    // unbound at import, bound at lowering: same error from lower
    let m = parse(&bytes, &OnnxOptions::default()).unwrap();
    let e = m.graph.lower(&o.dims).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow, "{e}");
    // a dim above i64::MAX given for an input
    let o = OnnxOptions {
        inputs: [("x".to_string(), vec![u64::MAX, 1])].into_iter().collect(),
        ..OnnxOptions::default()
    };
    let e = parse(&bytes, &o).unwrap_err();
    assert!(e.to_string().contains("input 'x'"), "{e}");
}

#[test]
fn negative_dims_after_binding_name_the_op() {
    // 3x3 kernel without padding on a 2x2 input: output dim 0 is fine, 1x1 kernel... use 5x5
    let bytes = model(
        13,
        graph(
            vec![node("Conv", "conv5", &["x", "w"], &["y"], vec![])],
            vec![vi(
                "x",
                FLOAT,
                vec![dim_v(1), dim_v(1), dim_p("h"), dim_p("h")],
            )],
            &["y"],
            vec![f32_init("w", &[1, 1, 5, 5])],
        ),
    );
    let o = OnnxOptions {
        dims: [("h".to_string(), 3u64)].into_iter().collect(),
        ..OnnxOptions::default()
    };
    let e = parse(&bytes, &o).unwrap_err();
    assert!(
        e.to_string().contains("op 'conv5' (Conv)") && e.to_string().contains("-1"),
        "{e}"
    );
    // Symbolic, then bound too small at lowering: the expression (h - 5 + 1 = h-4) is
    // negative with h = 3, and lowering refuses it naming the tensor and the dim (issue 18:
    // it used to be planned as 0 bytes).
    let m = parse(&bytes, &OnnxOptions::default()).unwrap();
    let e = m.graph.lower(&o.dims).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert_eq!(
        e.to_string(),
        "tensor 'y': dim 'h-4' is negative or overflows with h = 3"
    );
    // with h = 7 the symbolic expression gives 3
    let y = m.graph.tensor_id("y").unwrap();
    let b: Bindings = [("h".to_string(), 7u64)].into_iter().collect();
    assert_eq!(m.graph.tensors[y].bound_shape(&b), Some(vec![1, 1, 3, 3]));
    // negative dims in a file
    let bad = model(
        13,
        graph(vec![], vec![], &[], vec![f32_init("w", &[2, -3])]),
    );
    let e = parse(&bad, &OnnxOptions::default()).unwrap_err();
    assert!(e.to_string().contains("tensor 'w'"), "{e}");
}

#[test]
fn given_input_shape_must_fit_the_declared_one() {
    let o = OnnxOptions {
        inputs: [("x".to_string(), vec![1, 3, 8])].into_iter().collect(),
        ..OnnxOptions::default()
    };
    let e = parse(&conv_relu(), &o).unwrap_err();
    assert!(
        e.to_string().contains("input 'x'") && e.to_string().contains("rank"),
        "{e}"
    );
    let o = OnnxOptions {
        inputs: [("x".to_string(), vec![1, 4, 8, 8])].into_iter().collect(),
        ..OnnxOptions::default()
    };
    let e = parse(&conv_relu(), &o).unwrap_err();
    assert!(e.to_string().contains("input 'x'"), "{e}");
}

/// Squeeze/Unsqueeze/ReduceSum/Split axes as attributes (opset 11) or inputs (13), Slice as
/// attributes (opset 9) or inputs (10+): same shapes.
#[test]
fn opset_differences() {
    let x = || vi("x", FLOAT, vec![dim_v(2), dim_v(1), dim_v(6)]);
    // opset 11: attributes
    let old = model(
        9,
        graph(
            vec![
                node("Squeeze", "sq", &["x"], &["s"], vec![ints("axes", &[1])]),
                node("Unsqueeze", "un", &["s"], &["u"], vec![ints("axes", &[0])]),
                node(
                    "ReduceSum",
                    "rs",
                    &["u"],
                    &["r"],
                    vec![ints("axes", &[2]), int("keepdims", 0)],
                ),
                node(
                    "Split",
                    "sp",
                    &["s"],
                    &["p1", "p2"],
                    vec![int("axis", 1), ints("split", &[2, 4])],
                ),
                node(
                    "Slice",
                    "sl",
                    &["x"],
                    &["c"],
                    vec![
                        ints("starts", &[1]),
                        ints("ends", &[100]),
                        ints("axes", &[2]),
                    ],
                ),
            ],
            vec![x()],
            &["r", "p1", "p2", "c"],
            vec![],
        ),
    );
    let new = model(
        13,
        graph(
            vec![
                node("Squeeze", "sq", &["x", "a1"], &["s"], vec![]),
                node("Unsqueeze", "un", &["s", "a0"], &["u"], vec![]),
                node(
                    "ReduceSum",
                    "rs",
                    &["u", "a2"],
                    &["r"],
                    vec![int("keepdims", 0)],
                ),
                node(
                    "Split",
                    "sp",
                    &["s", "split"],
                    &["p1", "p2"],
                    vec![int("axis", 1)],
                ),
                node("Slice", "sl", &["x", "st", "en", "a2"], &["c"], vec![]),
            ],
            vec![x()],
            &["r", "p1", "p2", "c"],
            vec![
                i64_init("a0", &[0]),
                i64_init("a1", &[1]),
                i64_init("a2", &[2]),
                i64_init("split", &[2, 4]),
                i64_init("st", &[1]),
                i64_init("en", &[100]),
            ],
        ),
    );
    for bytes in [old, new] {
        let m = parse(&bytes, &OnnxOptions::default()).unwrap();
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(shape_of(&m, "s"), k(&[2, 6]));
        assert_eq!(shape_of(&m, "u"), k(&[1, 2, 6]));
        assert_eq!(shape_of(&m, "r"), k(&[1, 2]));
        assert_eq!(shape_of(&m, "p1"), k(&[2, 2]));
        assert_eq!(shape_of(&m, "p2"), k(&[2, 4]));
        assert_eq!(shape_of(&m, "c"), k(&[2, 1, 5]));
    }
}

/// Shape -> Gather -> Concat -> Reshape with a symbolic batch, and Resize by scales and sizes.
#[test]
fn shape_arithmetic_stays_symbolic() {
    let bytes = model(
        13,
        graph(
            vec![
                node("Shape", "shape", &["x"], &["sh"], vec![]),
                node("Gather", "g0", &["sh", "s0"], &["b"], vec![int("axis", 0)]),
                node("Unsqueeze", "u0", &["b", "i0"], &["b1"], vec![]),
                node(
                    "Concat",
                    "cat",
                    &["b1", "m1"],
                    &["tgt"],
                    vec![int("axis", 0)],
                ),
                node("Reshape", "rs", &["x", "tgt"], &["flat"], vec![]),
                node("Resize", "up", &["x", "", "scales"], &["big"], vec![]),
                node("Resize", "to", &["x", "", "", "sizes"], &["fixed"], vec![]),
                node("Cast", "cast", &["sh"], &["shf"], vec![int("to", 1)]),
            ],
            vec![vi(
                "x",
                FLOAT,
                vec![dim_p("N"), dim_v(3), dim_v(4), dim_v(5)],
            )],
            &["flat", "big", "fixed", "shf"],
            vec![
                i64_init("i0", &[0]),
                TensorProto {
                    name: "s0".into(),
                    data_type: INT64,
                    dims: vec![],
                    int64_data: vec![0],
                    ..TensorProto::default()
                },
                i64_init("m1", &[-1]),
                TensorProto {
                    name: "scales".into(),
                    data_type: FLOAT,
                    dims: vec![4],
                    float_data: vec![1.0, 1.0, 2.0, 2.0],
                    ..TensorProto::default()
                },
                i64_init("sizes", &[1, 3, 7, 9]),
            ],
        ),
    );
    let m = parse(&bytes, &OnnxOptions::default()).unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(
        shape_of(&m, "flat"),
        Some(vec![Dim::Sym("N".into()), Dim::Known(60)])
    );
    assert_eq!(
        shape_of(&m, "big"),
        Some(vec![
            Dim::Sym("N".into()),
            Dim::Known(3),
            Dim::Known(8),
            Dim::Known(10)
        ])
    );
    assert_eq!(shape_of(&m, "fixed"), k(&[1, 3, 7, 9]));
    let shf = m.graph.tensor_id("shf").unwrap();
    assert_eq!(m.graph.tensors[shf].dtype, Some(DType::Float32));
}

/// Every element type's size: 4-bit packed, bool one byte, strings as 8-byte handles.
#[test]
fn element_sizes() {
    let mut inits = Vec::new();
    for code in 1..=26 {
        inits.push(TensorProto {
            name: format!("t{code}"),
            data_type: code,
            dims: vec![3],
            ..TensorProto::default()
        });
    }
    let m = parse(
        &model(21, graph(vec![], vec![], &[], inits)),
        &OnnxOptions::default(),
    )
    .unwrap();
    let size = |code: i32| {
        let t = &m.graph.tensors[m.graph.tensor_id(&format!("t{code}")).unwrap()];
        t.size(&Bindings::new()).unwrap().unwrap()
    };
    assert_eq!(size(1), 12); // float
    assert_eq!(size(9), 3); // bool
    assert_eq!(size(8), 24); // string: 8-byte handles
    assert_eq!(size(10), 6); // float16
    assert_eq!(size(15), 48); // complex128
    assert_eq!(size(21), 2); // uint4: 3 nibbles -> 2 bytes
    assert_eq!(size(22), 2); // int4
    assert_eq!(size(25), 1); // uint2: 6 bits -> 1 byte
                             // an unknown type code is an error naming the tensor
    let bad = model(
        13,
        graph(
            vec![],
            vec![],
            &[],
            vec![TensorProto {
                name: "q".into(),
                data_type: 99,
                dims: vec![1],
                ..TensorProto::default()
            }],
        ),
    );
    let e = parse(&bad, &OnnxOptions::default()).unwrap_err();
    assert!(e.to_string().contains("tensor 'q'"), "{e}");
}

/// Large payloads are skipped, not copied; small ones drive value propagation.
#[test]
fn large_raw_data_is_skipped() {
    let big = TensorProto {
        name: "w".into(),
        data_type: FLOAT,
        dims: vec![4096],
        raw_data: vec![0u8; 4096 * 4],
        ..TensorProto::default()
    };
    let bytes = big.encode_to_vec();
    let back = TensorProto::decode(&bytes[..]).unwrap();
    assert!(back.raw_data.is_empty() && back.payload_skipped);
    assert_eq!(back.dims, vec![4096]);
    let small = TensorProto {
        raw_data: 7i64.to_le_bytes().to_vec(),
        data_type: INT64,
        dims: vec![1],
        ..TensorProto::default()
    };
    let back = TensorProto::decode(&small.encode_to_vec()[..]).unwrap();
    assert_eq!(back.raw_data, 7i64.to_le_bytes().to_vec());
}

#[test]
fn symbolic_slice_clamps_to_zero() {
    // x[n, 3] f32, Slice axis 0 [0, -10): ONNX clamps, so with n = 4 the result is empty
    // (0 rows, 0 bytes), not a negative dim; with n = 12 it has 2 rows (2 * 3 * 4 = 24 B).
    let bytes = model(
        13,
        graph(
            vec![node(
                "Slice",
                "s0",
                &["x", "st", "en", "ax"],
                &["y"],
                vec![],
            )],
            vec![vi("x", FLOAT, vec![dim_p("n"), dim_v(3)])],
            &["y"],
            vec![
                i64_init("st", &[0]),
                i64_init("en", &[-10]),
                i64_init("ax", &[0]),
            ],
        ),
    );
    let m = parse(&bytes, &OnnxOptions::default()).unwrap();
    let y = m.graph.tensor_id("y").unwrap();
    let n = |v: u64| -> Bindings { [("n".to_string(), v)].into_iter().collect() };
    assert_eq!(m.graph.tensors[y].size(&n(4)).unwrap(), Some(0));
    assert_eq!(m.graph.tensors[y].size(&n(12)).unwrap(), Some(24));
}

/// A sequence is not a tensor: listed in `non_tensors` (not planned), never as a tensor whose
/// shape was not inferred (a scikit-learn classifier's ZipMap output is a sequence of maps).
#[test]
fn a_sequence_is_not_an_unknown_tensor() {
    let g = graph(
        vec![node("SequenceConstruct", "seq", &["x"], &["s"], vec![])],
        vec![vi("x", FLOAT, vec![dim_v(2), dim_v(3)])],
        &["s"],
        vec![],
    );
    let m = parse(&model(17, g), &OnnxOptions::default()).unwrap();
    assert_eq!(m.non_tensors, vec!["s: sequence".to_string()]);
    assert!(m.unknown.is_empty(), "unknown: {:?}", m.unknown);
}

/// A constant Gather index outside the axis (x is 2x3; index 3 on axis 1, or -4) fails in
/// onnxruntime ("indices element out of data bounds"): refused with the node named, as
/// `-3` (the first column) is accepted.
#[test]
fn gather_index_out_of_range_is_refused() {
    let with_index = |i: i64| {
        model(
            13,
            graph(
                vec![node(
                    "Gather",
                    "pick",
                    &["x", "i"],
                    &["y"],
                    vec![int("axis", 1)],
                )],
                vec![vi("x", FLOAT, vec![dim_v(2), dim_v(3)])],
                &["y"],
                vec![i64_init("i", &[0, i])],
            ),
        )
    };
    for bad in [3, -4] {
        let e = parse(&with_index(bad), &OnnxOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "Gather index {bad} is out of range for axis 1 of extent 3"
            )) && e.contains("pick"),
            "{e}"
        );
    }
    let m = parse(&with_index(-3), &OnnxOptions::default()).unwrap();
    assert_eq!(shape_of(&m, "y"), k(&[2, 2]));
}

#[test]
fn a_model_whose_output_is_its_input_has_no_ops_to_plan() {
    // the reviewer's passthru.onnx: graph input x[2,3] is the only output, no node
    let bytes = model(
        17,
        graph(
            vec![],
            vec![vi("x", FLOAT, vec![dim_v(2), dim_v(3)])],
            &["x"],
            vec![],
        ),
    );
    let e =
        memplan_core::import::load::load("passthru.onnx", &bytes, &Default::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the graph has no ops: nothing runs, so there is nothing to plan"
    );
}

/// The import's error for `bytes`, as the CLI shows it after the file name.
#[allow(clippy::unwrap_used)] // test helper: an accepted model fails the test
fn refusal(bytes: &[u8]) -> String {
    parse(bytes, &OnnxOptions::default())
        .and_then(|m| m.graph.lower(&Bindings::new()).map(|_| ()))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_graph_input_listed_twice_is_refused() {
    // the reviewer's dupin.onnx: x[2,3] and x[5,5]; onnxruntime refuses it
    let bytes = model(
        17,
        graph(
            vec![node("Relu", "relu", &["x"], &["y"], vec![])],
            vec![
                vi("x", FLOAT, vec![dim_v(2), dim_v(3)]),
                vi("x", FLOAT, vec![dim_v(5), dim_v(5)]),
            ],
            &["y"],
            vec![],
        ),
    );
    assert_eq!(
        refusal(&bytes),
        "graph input 'x': is listed twice among the graph inputs"
    );
}

#[test]
fn split_counts_that_disagree_with_the_outputs_are_refused() {
    // Split-18 on x[4,3] with 2 outputs: num_outputs must be 2 (ONNX Split-18), a split
    // input must have 2 parts, not both may be given
    let split = |attrs: Vec<AttributeProto>, ins: &[&str], inits: Vec<TensorProto>| {
        model(
            18,
            graph(
                vec![node("Split", "split0", ins, &["a", "b"], attrs)],
                vec![vi("x", FLOAT, vec![dim_v(4), dim_v(3)])],
                &["a", "b"],
                inits,
            ),
        )
    };
    let x = &["x"][..];
    assert_eq!(
        refusal(&split(vec![int("num_outputs", 0)], x, vec![])),
        "op 'split0' (Split): num_outputs 0 must be at least 1"
    );
    assert_eq!(
        refusal(&split(vec![int("num_outputs", 3)], x, vec![])),
        "op 'split0' (Split): num_outputs 3 but the node has 2 outputs"
    );
    let xs = &["x", "s"][..];
    assert_eq!(
        refusal(&split(vec![], xs, vec![i64_init("s", &[1, 1, 2])])),
        "op 'split0' (Split): 3 split parts for 2 outputs"
    );
    assert_eq!(
        refusal(&split(
            vec![int("num_outputs", 2)],
            xs,
            vec![i64_init("s", &[2, 2])]
        )),
        "op 'split0' (Split): has both a split input and num_outputs (give one)"
    );
    // the agreeing form still imports: 4 rows in 2 parts of 2 rows, 2*3*4 = 24 B each
    let m = parse(
        &split(vec![int("num_outputs", 2)], x, vec![]),
        &OnnxOptions::default(),
    )
    .unwrap();
    assert_eq!(shape_of(&m, "b"), k(&[2, 3]));
}

#[test]
fn range_with_step_zero_is_refused_as_never_ending() {
    // the reviewer's range0.onnx: Range(0, 10, 0) with constant bounds
    let scalar = |n: &str, v: i64| TensorProto {
        dims: vec![],
        ..i64_init(n, &[v])
    };
    let bytes = model(
        17,
        graph(
            vec![node("Range", "range0", &["a", "b", "c"], &["y"], vec![])],
            vec![],
            &["y"],
            vec![scalar("a", 0), scalar("b", 10), scalar("c", 0)],
        ),
    );
    assert_eq!(
        refusal(&bytes),
        "op 'range0' (Range): step (delta) 0: the range never ends"
    );
}

#[test]
fn an_unknown_elem_type_is_named_by_its_number() {
    // the reviewer's dtype.onnx: input x[2,3] with elem_type 99 (no TensorProto.DataType)
    let bytes = model(
        17,
        graph(
            vec![node("Relu", "relu", &["x"], &["y"], vec![])],
            vec![vi("x", 99, vec![dim_v(2), dim_v(3)])],
            &["y"],
            vec![],
        ),
    );
    let m = parse(&bytes, &OnnxOptions::default()).unwrap();
    let x = m.graph.tensor_id("x").unwrap();
    assert_eq!(
        m.graph.tensors[x].unknown_why(&Bindings::new()),
        "dtype not inferred (inference stopped at tensor 'x': elem_type 99 is not an ONNX data type memplan knows)"
    );
}

#[test]
fn a_full_file_with_a_non_utf8_name_says_so_not_cut_short() {
    // conv_relu() with the node name "relu" made "r\xfflu": protobuf strings must be UTF-8;
    // prost names the field innermost first (NodeProto.name inside GraphProto.node ...)
    let mut bytes = conv_relu();
    let at = bytes
        .windows(5)
        .position(|w| w == b"\x04relu")
        .map(|k| k + 1)
        .expect("the node name, length-prefixed, in the bytes");
    bytes[at + 1] = 0xff;
    let e = parse(&bytes, &OnnxOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Parse);
    assert_eq!(
        e.to_string(),
        "not a valid ONNX model (protobuf): failed to decode Protobuf message: NodeProto.name: GraphProto.node: ModelProto.graph: invalid string value: data is not UTF-8 encoded; a string field (named above) holds bytes that are not UTF-8, which protobuf strings must be"
    );
}

/// Constant shape arithmetic that overflows int64 or divides by zero leaves the Reshape
/// target unknown; the warning says which op did what (issue 30: it said "value unknown").
#[test]
fn constant_shape_arithmetic_names_overflow_and_division_by_zero() {
    let run = |op: &str, a: i64, b: i64| {
        let g = graph(
            vec![
                node(op, "arith", &["a", "b"], &["t"], vec![]),
                node("Reshape", "rs", &["x", "t"], &["y"], vec![]),
            ],
            vec![vi("x", FLOAT, vec![dim_v(2), dim_v(3)])],
            &["y"],
            vec![i64_init("a", &[a, 3]), i64_init("b", &[b])],
        );
        let m = parse(&model(17, g), &OnnxOptions::default()).unwrap();
        m.warnings.join("\n")
    };
    let w = run("Mul", i64::MAX, 2);
    assert!(
        w.contains(
            "output 'y': shape not inferred: value of input 't' unknown: op 'arith' (Mul): \
             int64 overflow (9223372036854775807 * 2)"
        ),
        "{w}"
    );
    let w = run("Div", 6, 0);
    assert!(
        w.contains("value of input 't' unknown: op 'arith' (Div): division by zero (6 / 0)"),
        "{w}"
    );
    // through another op: Concat keeps the cause
    let g = graph(
        vec![
            node("Add", "arith", &["a", "b"], &["t0"], vec![]),
            node("Concat", "cat", &["t0", "b"], &["t"], vec![int("axis", 0)]),
            node("Reshape", "rs", &["x", "t"], &["y"], vec![]),
        ],
        vec![vi("x", FLOAT, vec![dim_v(2), dim_v(3)])],
        &["y"],
        vec![i64_init("a", &[i64::MAX]), i64_init("b", &[1])],
    );
    let m = parse(&model(17, g), &OnnxOptions::default()).unwrap();
    let w = m.warnings.join("\n");
    assert!(
        w.contains("value of input 't' unknown: op 'arith' (Add): int64 overflow (9223372036854775807 + 1)"),
        "{w}"
    );
}

/// SpaceToDepth with a block size whose square overflows int64 warns with that reason (issue
/// 30: the reason was empty); a block size of 0 is an error naming the node.
#[test]
fn space_to_depth_with_a_huge_block_size_says_why() {
    let run = |b: i64| {
        let g = graph(
            vec![node(
                "SpaceToDepth",
                "s2d",
                &["x"],
                &["y"],
                vec![int("blocksize", b)],
            )],
            vec![vi("x", FLOAT, vec![dim_v(1), dim_v(1), dim_v(4), dim_v(4)])],
            &["y"],
            vec![],
        );
        parse(&model(17, g), &OnnxOptions::default())
    };
    let m = run(1 << 32).unwrap();
    let w = m.warnings.join("\n");
    assert!(
        w.contains("op 's2d' (SpaceToDepth): output 'y': shape not inferred: blocksize 4294967296 squared overflows int64"),
        "{w}"
    );
    let e = run(0).unwrap_err().to_string();
    assert!(e.contains("blocksize 0 must be positive"), "{e}");
    assert!(e.contains("s2d"), "{e}");
}

/// A top-level graph output listed twice is refused like an input listed twice (issue 30:
/// it was accepted silently).
#[test]
fn a_graph_output_listed_twice_is_an_error() {
    let g = graph(
        vec![node("Relu", "r", &["x"], &["y"], vec![])],
        vec![vi("x", FLOAT, vec![dim_v(2)])],
        &["y", "y"],
        vec![],
    );
    let e = parse(&model(17, g), &OnnxOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(
        e.to_string()
            .contains("graph output 'y': is listed twice among the graph outputs"),
        "{e}"
    );
}

/// A Reshape to a constant `[1, 4]` of `x: [1, w]` holds for w = 4 but not for the default
/// w = 1 the load pipeline gives an unbound dim: the error finishes its sentence and names
/// `w` (not `b`, an unbound dim of another input) as the dim to set (issue 30).
#[test]
fn a_reshape_broken_by_a_default_binding_names_the_dim_to_set() {
    use memplan_core::import::load::{load, LoadOptions};
    let g = graph(
        vec![
            node("Reshape", "rs", &["x", "t"], &["y"], vec![]),
            node("Relu", "r", &["z"], &["z2"], vec![]),
        ],
        vec![
            vi("x", FLOAT, vec![dim_v(1), dim_p("w")]),
            vi("z", FLOAT, vec![dim_p("b"), dim_v(3)]),
        ],
        &["y", "z2"],
        vec![i64_init("t", &[1, 4])],
    );
    let bytes = model(17, g);
    // the load keeps the model with `w` unbound and says which dim broke it (the CLI words it
    // with `Error::with_dims_to_set`, the page asks in its dims panel)
    let l = load("m.onnx", &bytes, &LoadOptions::default()).unwrap();
    let diag: Vec<_> = l.diagnostics.iter().map(|d| d.setting.clone()).collect();
    assert_eq!(diag, [memplan_core::import::load::Setting::Dim("w".into())]);
    let e = l.refused().unwrap().clone();
    assert_eq!(
        e.to_string(),
        "op 'rs' (Reshape): target shape [1, 4] has 4 elements, the input (shape [1, 1]) has 1: \
         a Reshape keeps the element count"
    );
    let worded = e.with_dims_to_set(vec!["w".into()]);
    assert_eq!(
        worded.to_string(),
        "op 'rs' (Reshape): target shape [1, 4] has 4 elements, the input (shape [1, 1]) has 1: \
         a Reshape keeps the element count (the unbound dim 'w' set to 1 by default: give it a \
         value, e.g. --dim w=VALUE)"
    );
    let o = LoadOptions {
        dims: [("w".to_string(), 4u64)].into_iter().collect(),
        ..LoadOptions::default()
    };
    assert!(load("m.onnx", &bytes, &o).is_ok());
}

/// Data-dependent sizes are planned at their upper bound and say so (issue 30): NonZero of
/// `x: [2, 3]` has at most 6 non-zeros, Unique at most 6 distinct values, TopK with a k read
/// at run time at most the dim 3. Each is a warning and a line of `bounds`.
#[test]
fn data_dependent_sizes_are_planned_at_their_upper_bound() {
    let g = graph(
        vec![
            node("NonZero", "nz", &["x"], &["idx"], vec![]),
            node("Unique", "uq", &["x"], &["u", "ui", "uinv", "uc"], vec![]),
            node(
                "TopK",
                "tk",
                &["x", "k"],
                &["v", "vi"],
                vec![int("axis", 1)],
            ),
        ],
        vec![
            vi("x", FLOAT, vec![dim_v(2), dim_v(3)]),
            vi("k", INT64, vec![dim_v(1)]),
        ],
        &["idx", "u", "ui", "uinv", "uc", "v", "vi"],
        vec![],
    );
    let m = parse(&model(17, g), &OnnxOptions::default()).unwrap();
    let shape = |n: &str| {
        m.graph
            .tensors
            .iter()
            .find(|t| t.name == n)
            .and_then(|t| t.shape.clone())
            .unwrap_or_else(|| panic!("{n}: no shape; {:?}", m.warnings))
    };
    let k = |v: &[u64]| v.iter().map(|&d| Dim::Known(d)).collect::<Vec<_>>();
    assert_eq!(shape("idx"), k(&[2, 6]));
    assert_eq!(shape("u"), k(&[6]));
    assert_eq!(shape("uinv"), k(&[6]));
    assert_eq!(shape("v"), k(&[2, 3]));
    assert_eq!(shape("vi"), k(&[2, 3]));
    let w = m.warnings.join("\n");
    assert!(
        w.contains("op 'nz' (NonZero): output 'idx' planned at an upper bound: axis 1 at most 6 (the input's element count; the non-zero count depends on the data)"),
        "{w}"
    );
    assert!(
        w.contains("op 'tk' (TopK): output 'v' planned at an upper bound: axis 1 at most 3 (the dim; k is known only at run time)"),
        "{w}"
    );
    assert!(
        w.contains(
            "op 'uq' (Unique): output 'u' planned at an upper bound: the distinct count at most 6"
        ),
        "{w}"
    );
    // inverse indices have the exact input length: no bound
    assert!(!w.contains("output 'uinv' planned"), "{w}");
    assert_eq!(
        m.bounds
            .iter()
            .map(|b| b.split(':').next().unwrap())
            .collect::<Vec<_>>(),
        ["idx", "u", "ui", "uc", "v", "vi"]
    );
}

/// Sequences known at import carry their elements (issue 30): SequenceConstruct of
/// `a: [2, 3]` and `b: [2, 5]`, SequenceAt 1 is `[2, 5]`, ConcatFromSequence on axis 1 is
/// `[2, 8]`, stacked on a new axis 0 (of `a` twice) `[2, 2, 3]`; SplitToSequence of `b` in
/// chunks of 2 along axis 1 gives three, the last `[2, 1]`; SequenceLength is a known value.
#[test]
fn statically_known_sequences_give_their_tensors_shapes() {
    let attr_axis = |a: i64| int("axis", a);
    let g = graph(
        vec![
            node("SequenceConstruct", "sc", &["a", "b"], &["s"], vec![]),
            node("SequenceAt", "at", &["s", "one"], &["e1"], vec![]),
            node(
                "ConcatFromSequence",
                "cat",
                &["s"],
                &["c"],
                vec![attr_axis(1)],
            ),
            node("SequenceConstruct", "sc2", &["a", "a"], &["s2"], vec![]),
            node(
                "ConcatFromSequence",
                "stack",
                &["s2"],
                &["st"],
                vec![attr_axis(0), int("new_axis", 1)],
            ),
            node(
                "SplitToSequence",
                "sp",
                &["b", "two"],
                &["parts"],
                vec![attr_axis(1)],
            ),
            node(
                "SequenceAt",
                "last",
                &["parts", "minus1"],
                &["p_last"],
                vec![],
            ),
            node("SequenceLength", "len", &["parts"], &["n"], vec![]),
            node("Range", "rg", &["zero", "n", "one"], &["r3"], vec![]),
        ],
        vec![
            vi("a", FLOAT, vec![dim_v(2), dim_v(3)]),
            vi("b", FLOAT, vec![dim_v(2), dim_v(5)]),
        ],
        &["e1", "c", "st", "p_last", "r3"],
        vec![
            TensorProto {
                name: "one".into(),
                data_type: INT64,
                int64_data: vec![1],
                ..TensorProto::default()
            },
            TensorProto {
                name: "two".into(),
                data_type: INT64,
                int64_data: vec![2],
                ..TensorProto::default()
            },
            TensorProto {
                name: "zero".into(),
                data_type: INT64,
                int64_data: vec![0],
                ..TensorProto::default()
            },
            TensorProto {
                name: "minus1".into(),
                data_type: INT64,
                int64_data: vec![-1],
                ..TensorProto::default()
            },
        ],
    );
    let m = parse(&model(17, g), &OnnxOptions::default()).unwrap();
    let shape = |n: &str| {
        m.graph
            .tensors
            .iter()
            .find(|t| t.name == n)
            .and_then(|t| t.shape.clone())
            .unwrap_or_else(|| panic!("{n}: no shape; {:?}", m.warnings))
    };
    let k = |v: &[u64]| v.iter().map(|&d| Dim::Known(d)).collect::<Vec<_>>();
    assert_eq!(shape("e1"), k(&[2, 5]));
    assert_eq!(shape("c"), k(&[2, 8]));
    assert_eq!(shape("st"), k(&[2, 2, 3]));
    assert_eq!(shape("p_last"), k(&[2, 1]));
    // SequenceLength's value 3 feeds a Range: [3]
    assert_eq!(shape("r3"), k(&[3]));
    assert!(
        m.non_tensors.iter().any(|n| n.starts_with("s: sequence")),
        "{:?}",
        m.non_tensors
    );
}

/// onnxruntime's contrib Tokenizer adds a data-dependent token axis (unknown size, not
/// planned); TfIdfVectorizer on it still has a known output width from its rank alone:
/// `[N, max(ngram_indexes) + 1]` (issue 30).
#[test]
fn tfidf_on_tokens_of_unknown_count_has_its_width() {
    let mut tok = node("Tokenizer", "tok", &["text"], &["tokens"], vec![]);
    tok.domain = "com.microsoft".into();
    let g = graph(
        vec![
            tok,
            node(
                "TfIdfVectorizer",
                "tfidf",
                &["tokens"],
                &["v"],
                vec![ints("ngram_indexes", &[0, 1, 2, 6])],
            ),
        ],
        vec![vi("text", 8, vec![dim_v(4)])],
        &["v"],
        vec![],
    );
    let m = parse(&model(17, g), &OnnxOptions::default()).unwrap();
    let t = |n: &str| {
        m.graph
            .tensors
            .iter()
            .find(|t| t.name == n)
            .unwrap()
            .clone()
    };
    let tokens = t("tokens").shape.expect("tokens have a rank");
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0], Dim::Known(4));
    assert!(matches!(&tokens[1], Dim::Sym(_)), "{tokens:?}");
    assert_eq!(t("v").shape, Some(vec![Dim::Known(4), Dim::Known(7)]));
    assert_eq!(t("v").dtype, Some(DType::Float32));
}
