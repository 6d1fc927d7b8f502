//! Hand-made flatbuffers (the generated builder): TFLM's lifetimes worked out by hand, and
//! one clear error per kind of bad file.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::fb;
use super::*;
use crate::ErrorKind;

const INT8: i8 = 9;
const BOOL: i8 = 6;

fn tensor(name: &str, ty: i8, shape: &[i32], buffer: u32) -> fb::Tensor {
    fb::Tensor {
        shape: Some(shape.to_vec()),
        type_: ty,
        buffer,
        name: Some(name.to_string()),
        is_variable: false,
        shape_signature: None,
        has_rank: true,
        external_buffer: 0,
    }
}

fn op(code: u32, inputs: &[i32], outputs: &[i32]) -> fb::Operator {
    fb::Operator {
        opcode_index: code,
        inputs: Some(inputs.to_vec()),
        outputs: Some(outputs.to_vec()),
        builtin_options_tag: 0,
        builtin_options: None,
        intermediates: None,
        debug_metadata_index: -1,
    }
}

fn calls(mut o: fb::Operator, tag: u8, first: i32, second: i32) -> fb::Operator {
    o.builtin_options_tag = tag;
    o.builtin_options = Some(alloc::boxed::Box::new(fb::SubgraphCall {
        first_subgraph_index: first,
        second_subgraph_index: second,
    }));
    o
}

fn subgraph(
    name: &str,
    tensors: Vec<fb::Tensor>,
    inputs: &[i32],
    outputs: &[i32],
    ops: Vec<fb::Operator>,
) -> fb::SubGraph {
    fb::SubGraph {
        tensors: Some(tensors),
        inputs: Some(inputs.to_vec()),
        outputs: Some(outputs.to_vec()),
        operators: Some(ops),
        name: Some(name.to_string()),
        debug_metadata_index: -1,
    }
}

/// Operator codes: 0 ADD, 1 FULLY_CONNECTED, 2 IF, 3 WHILE, 4 CALL_ONCE (a code > 127: the
/// deprecated byte holds PLACEHOLDER_FOR_GREATER_OP_CODES).
fn codes() -> Vec<fb::OperatorCode> {
    [(0, 0), (9, 9), (118, 118), (119, 119), (127, 129)]
        .into_iter()
        .map(|(d, b)| fb::OperatorCode {
            deprecated_builtin_code: d,
            custom_code: None,
            version: 1,
            builtin_code: b,
        })
        .collect()
}

fn model(subgraphs: Vec<fb::SubGraph>, buffers: usize) -> Vec<u8> {
    let mut bufs = vec![fb::Buffer {
        data: None,
        offset: 0,
        size: 0,
    }];
    for _ in 1..buffers {
        bufs.push(fb::Buffer {
            data: Some(vec![1, 2, 3, 4]),
            offset: 0,
            size: 0,
        });
    }
    let m = fb::Model {
        version: 3,
        operator_codes: Some(codes()),
        subgraphs: Some(subgraphs),
        description: Some("test".to_string()),
        buffers: Some(bufs),
        metadata: None,
    };
    finish(&m)
}

/// A finished flatbuffer with the identifier `TFL3`. planus 1.2's `Builder::finish` writes the
/// identifier before the root offset, and that offset 4 short (bytes `TFL3`, 4, table at 8):
/// put them where flatbuffers has them (root offset at 0, identifier at 4..8).
fn finish(m: &fb::Model) -> Vec<u8> {
    let mut b = planus::Builder::new();
    let mut out = b.finish(m, Some(*b"TFL3")).to_vec();
    assert_eq!(&out[..4], b"TFL3");
    let root = u32::from_le_bytes([out[4], out[5], out[6], out[7]]) + 4;
    out[..4].copy_from_slice(&root.to_le_bytes());
    out[4..8].copy_from_slice(b"TFL3");
    out
}

/// x (input, 4 B) -> FULLY_CONNECTED (weight w, bias omitted) -> y (output, 4 B).
fn tiny() -> Vec<u8> {
    model(
        vec![subgraph(
            "main",
            vec![
                tensor("x", INT8, &[1, 4], 0),
                tensor("w", INT8, &[4], 1),
                tensor("y", INT8, &[1, 4], 0),
            ],
            &[0],
            &[2],
            vec![op(1, &[0, 1, -1], &[2])],
        )],
        2,
    )
}

fn parse_err(bytes: &[u8]) -> Error {
    parse(bytes, &TfliteOptions::default()).unwrap_err()
}

fn ranges(m: &TfliteModel) -> Vec<(String, u64, u64, u64)> {
    let l = m.graph.lower(&m.file_dims).unwrap();
    l.problem
        .buffers
        .iter()
        .map(|b| (b.name.clone(), b.start, b.end, b.size))
        .collect()
}

#[test]
fn a_tiny_model_reads_as_tflm_sees_it() {
    let m = parse(&tiny(), &TfliteOptions::default()).unwrap();
    assert_eq!(m.graph.tensors.len(), 3);
    assert_eq!(m.weight_bytes, 4);
    assert!(m.graph.tensors[1].constant);
    assert_eq!(m.graph.ops.len(), 1);
    assert_eq!(m.graph.ops[0].op_type, "FULLY_CONNECTED");
    assert_eq!(m.graph.ops[0].name, "#0 FULLY_CONNECTED");
    assert_eq!(
        ranges(&m),
        [("x".to_string(), 0, 0, 4), ("y".to_string(), 0, 0, 4)]
    );
    assert_eq!(m.info.offline_plan, None);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

/// The walk of `micro_allocation_info.cc` by hand (scopes in brackets):
/// [0] main inputs cond, x; [1] IF creates y; [2] then's input a; [3] then's ADD creates b;
/// [4] else's input c; [5] else's ADD creates d, then IF's inputs and output are used;
/// [6] ADD creates z from y. Lives: cond, x [0,5]; y [1,6]; a [2,3]; b [3,3]; c [4,5];
/// d [5,5]; z [6,6]. Scopes 0, 2, 4 (subgraph starts, no life ends there) merge into the next:
/// steps 0..3 = scopes 1, 3, 5, 6.
#[test]
fn control_flow_bodies_are_walked_inline_as_tflm_does() {
    let bytes = model(
        vec![
            subgraph(
                "main",
                vec![
                    tensor("cond", BOOL, &[1], 0),
                    tensor("x", INT8, &[16], 0),
                    tensor("y", INT8, &[32], 0),
                    tensor("z", INT8, &[48], 0),
                ],
                &[0, 1],
                &[3],
                vec![
                    calls(op(2, &[0, 1], &[2]), names::TAG_IF_OPTIONS, 1, 2),
                    op(0, &[2, 2], &[3]),
                ],
            ),
            subgraph(
                "then",
                vec![tensor("a", INT8, &[16], 0), tensor("b", INT8, &[32], 0)],
                &[0],
                &[1],
                vec![op(0, &[0, 0], &[1])],
            ),
            subgraph(
                "else",
                vec![tensor("c", INT8, &[16], 0), tensor("d", INT8, &[32], 0)],
                &[0],
                &[1],
                vec![op(0, &[0, 0], &[1])],
            ),
        ],
        1,
    );
    let m = parse(&bytes, &TfliteOptions::default()).unwrap();
    assert_eq!(m.info.tensor_count(), 8);
    assert_eq!(m.info.subgraph_offsets, [0, 4, 6]);
    assert_eq!(
        m.info.origin[5],
        TensorOrigin {
            subgraph: 1,
            index: 1
        }
    );
    assert_eq!(m.info.walked_operators, 4);
    let mut got = ranges(&m);
    got.sort();
    let want = [
        ("cond", 0, 2, 1),
        ("else/c", 2, 2, 16),
        ("else/d", 2, 2, 32),
        ("then/a", 1, 1, 16),
        ("then/b", 1, 1, 32),
        ("x", 0, 2, 16),
        ("y", 0, 3, 32),
        ("z", 3, 3, 48),
    ];
    let want: Vec<(String, u64, u64, u64)> = want
        .iter()
        .map(|&(n, s, e, b)| (n.to_string(), s, e, b))
        .collect();
    assert_eq!(got, want);
    let names: Vec<&str> = m.graph.ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        ["#0 IF", "subgraph 1 #0 ADD", "subgraph 2 #0 ADD", "#1 ADD"]
    );
    // at 16 B: s1 = cond 16 + x 16 + y 32 + a 16 + b 32 = 112 (s2 the same)
    let l = m.graph.lower(&m.file_dims).unwrap();
    let o = tflm_plan_options();
    let b =
        crate::bound::bounds_with(&l.problem, |i| o.planned_size(&l.problem.buffers[i])).unwrap();
    assert_eq!(b.lower_bound, 112);
}

#[test]
fn an_unread_input_keeps_scope_zero_apart() {
    // u is a main input nobody reads: TFLM's life [0,0] must not meet y's [1,1]
    let bytes = model(
        vec![subgraph(
            "main",
            vec![
                tensor("x", INT8, &[16], 0),
                tensor("u", INT8, &[64], 0),
                tensor("y", INT8, &[16], 0),
            ],
            &[0, 1],
            &[2],
            vec![op(0, &[0, 0], &[2])],
        )],
        1,
    );
    let m = parse(&bytes, &TfliteOptions::default()).unwrap();
    assert_eq!(m.graph.ops.len(), 2);
    assert_eq!(
        ranges(&m),
        [
            ("x".to_string(), 0, 1, 16),
            ("u".to_string(), 0, 0, 64),
            ("y".to_string(), 1, 1, 16)
        ]
    );
}

#[test]
fn variables_are_persistent_and_sub_byte_types_follow_tflm() {
    let mut v = tensor("state", INT8, &[10], 0);
    v.is_variable = true;
    let bytes = model(
        vec![subgraph(
            "main",
            vec![
                tensor("x", 17, &[1, 5], 0), // INT4: one byte per element in TFLM
                v,
                tensor("y", 20, &[8], 0), // UINT4: TFLM cannot size it
            ],
            &[0],
            &[2],
            vec![op(0, &[0, 1], &[2])],
        )],
        1,
    );
    let m = parse(&bytes, &TfliteOptions::default()).unwrap();
    assert_eq!(m.info.persistent, [TensorId::new(1)]);
    assert_eq!(m.info.persistent_bytes, Some(16));
    let l = m.graph.lower(&m.file_dims).unwrap();
    let sizes: Vec<(&str, u64)> = l
        .problem
        .buffers
        .iter()
        .map(|b| (b.name.as_str(), b.size))
        .collect();
    assert_eq!(sizes, [("x", 5)]);
    assert_eq!(l.unknown.len(), 1);
    assert!(
        l.unknown[0]
            .why
            .contains("TFLM has no size for TensorType UINT4"),
        "{:?}",
        l.unknown
    );
}

#[test]
fn shape_signature_minus_one_is_a_symbolic_dim_defaulting_to_shape() {
    let mut x = tensor("x", INT8, &[2, 4], 0);
    x.shape_signature = Some(vec![-1, 4]);
    let mut y = tensor("y", INT8, &[2, 4], 0);
    y.shape_signature = Some(vec![-1, 4]);
    let bytes = model(
        vec![subgraph(
            "main",
            vec![x, y],
            &[0],
            &[1],
            vec![op(0, &[0, 0], &[1])],
        )],
        1,
    );
    let m = parse(&bytes, &TfliteOptions::default()).unwrap();
    assert_eq!(m.graph.symbols(), ["batch"]);
    assert_eq!(m.file_dims.get("batch"), Some(&2));
    let l = m
        .graph
        .lower(&Bindings::from([("batch".into(), 5)]))
        .unwrap();
    assert_eq!(l.problem.buffers[0].size, 20);
    // the pipeline: batch = 2 from `shape`, 2 x 4 B rounded up to TFLM's 16
    let l = crate::import::load::load("m.tflite", &bytes, &Default::default()).unwrap();
    assert_eq!(l.lowered.problem.buffers[0].size, 16);
    assert_eq!(
        l.lowered.warnings[0],
        "symbolic dims (shape_signature -1) not bound take the file's shape, what TFLM allocates: batch=2 (bind them with --dim NAME=VALUE)"
    );
    let opts = crate::import::load::LoadOptions {
        dims: Bindings::from([("batch".into(), 5)]),
        ..Default::default()
    };
    let l = crate::import::load::load("m.tflite", &bytes, &opts).unwrap();
    assert_eq!(l.lowered.problem.buffers[0].size, 32);
}

#[test]
fn truncated_files_are_refused() {
    let e = parse_err(&tiny()[..6]);
    assert_eq!(e.kind(), ErrorKind::Parse);
    assert!(e.to_string().starts_with("truncated: 6 bytes"), "{e}");
    // cut anywhere: an error, never a panic
    let full = tiny();
    for cut in 8..full.len() {
        assert!(parse(&full[..cut], &TfliteOptions::default()).is_err() || cut > 0);
    }
    let e = parse_err(&full[..full.len() / 2]);
    assert!(e.to_string().contains("points outside the file"), "{e}");
}

#[test]
fn a_wrong_identifier_is_refused() {
    let mut b = tiny();
    b[4..8].copy_from_slice(b"ONNX");
    let e = parse_err(&b);
    assert_eq!(
        e.to_string(),
        "this is not a TFLite flatbuffer (file identifier \"ONNX\" at bytes 4..8, expected \"TFL3\")"
    );
    // JSON text named .tflite
    let e = parse_err(b"{\"format\": \"memplan.graph/1\"}");
    assert_eq!(
        e.to_string(),
        "this is not a TFLite flatbuffer (file identifier \"rmat\" at bytes 4..8, expected \"TFL3\"); it looks like JSON (a memplan.graph/1 graph or a plan): rename it to .json"
    );
}

fn one_op(tensors: Vec<fb::Tensor>, o: fb::Operator) -> Vec<u8> {
    model(vec![subgraph("main", tensors, &[0], &[1], vec![o])], 2)
}

#[test]
fn indices_out_of_range_are_named() {
    let t = || vec![tensor("x", INT8, &[4], 0), tensor("y", INT8, &[4], 0)];
    let e = parse_err(&one_op(t(), op(0, &[0, 7], &[1])));
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(
        e.to_string()
            .contains("op 0 (ADD): an input names tensor 7, out of range (2 tensors)"),
        "{e}"
    );
    let e = parse_err(&one_op(t(), op(9, &[0], &[1])));
    assert!(
        e.to_string()
            .contains("opcode_index 9 out of range (5 operator codes)"),
        "{e}"
    );
    let e = parse_err(&one_op(
        vec![tensor("x", INT8, &[4], 5), tensor("y", INT8, &[4], 0)],
        op(0, &[0], &[1]),
    ));
    assert!(
        e.to_string().contains("buffer 5 out of range (2 buffers)"),
        "{e}"
    );
    let e = parse_err(&one_op(
        t(),
        calls(op(3, &[0], &[1]), names::TAG_WHILE_OPTIONS, 0, 4),
    ));
    assert!(
        e.to_string()
            .contains("WHILE calls subgraph 4 (body_subgraph_index), out of range (1 subgraphs)"),
        "{e}"
    );
    let e = parse_err(&one_op(t(), op(3, &[0], &[1])));
    assert!(e.to_string().contains("WHILE without its options"), "{e}");
}

#[test]
fn cyclic_subgraph_calls_are_refused() {
    let t = || vec![tensor("x", INT8, &[4], 0), tensor("y", INT8, &[4], 0)];
    let bytes = model(
        vec![
            subgraph(
                "main",
                t(),
                &[0],
                &[1],
                vec![calls(op(4, &[0], &[1]), names::TAG_CALL_ONCE_OPTIONS, 1, 0)],
            ),
            subgraph(
                "loop",
                t(),
                &[0],
                &[1],
                vec![calls(op(2, &[0], &[1]), names::TAG_IF_OPTIONS, 1, 1)],
            ),
        ],
        1,
    );
    let e = parse_err(&bytes);
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(
        e.to_string()
            .starts_with("cyclic subgraph calls: subgraph 1 → 1"),
        "{e}"
    );
}

#[test]
fn huge_shapes_overflow_with_the_tensor_named() {
    let big = i32::MAX;
    let bytes = one_op(
        vec![
            tensor("x", INT8, &[4], 0),
            tensor("huge", 0, &[big, big, big], 0),
        ],
        op(0, &[0], &[1]),
    );
    let m = parse(&bytes, &TfliteOptions::default()).unwrap();
    let e = m.graph.lower(&m.file_dims).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    assert!(e.to_string().contains("tensor 'huge'"), "{e}");
    let e = crate::import::load::load("h.tflite", &bytes, &Default::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
}

#[test]
fn a_negative_dim_in_shape_is_refused() {
    let bytes = one_op(
        vec![tensor("x", INT8, &[4], 0), tensor("y", INT8, &[-1, 4], 0)],
        op(0, &[0], &[1]),
    );
    let e = parse_err(&bytes);
    assert!(e.to_string().contains("dim -1 in shape [-1, 4]"), "{e}");
    assert!(e.to_string().contains("subgraph 0 tensor 1 'y'"), "{e}");
}

#[test]
fn the_offline_plan_is_checked() {
    let with = |words: &[i32]| -> Vec<u8> {
        let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let m = fb::Model {
            version: 3,
            operator_codes: Some(codes()),
            subgraphs: Some(vec![subgraph(
                "main",
                vec![tensor("x", INT8, &[4], 0), tensor("y", INT8, &[4], 0)],
                &[0],
                &[1],
                vec![op(0, &[0], &[1])],
            )]),
            description: None,
            buffers: Some(vec![
                fb::Buffer {
                    data: None,
                    offset: 0,
                    size: 0,
                },
                fb::Buffer {
                    data: Some(data),
                    offset: 0,
                    size: 0,
                },
            ]),
            metadata: Some(vec![fb::Metadata {
                name: Some(OFFLINE_PLAN_METADATA.to_string()),
                buffer: 1,
            }]),
        };
        finish(&m)
    };
    let p = read_offline_plan(&with(&[0, 1, 2, 0, 16]))
        .unwrap()
        .unwrap();
    assert_eq!(p.offsets, [0, 16]);
    let e = read_offline_plan(&with(&[0, 1, 3, 0, 16, 32])).unwrap_err();
    assert!(
        e.to_string().contains("holds 3 offsets for 2 tensors"),
        "{e}"
    );
    let e = read_offline_plan(&with(&[0, 1, 2, 0, -7])).unwrap_err();
    assert!(e.to_string().contains("offset -7 for tensor 1"), "{e}");
    let e = read_offline_plan(&with(&[0, 1, 2, 0])).unwrap_err();
    assert!(e.to_string().contains("holds 1 words after"), "{e}");
    // a written plan reads back, with the model unchanged
    let plain = tiny();
    let out = with_offline_plan(&plain, &[0, -1, 16]).unwrap();
    assert_eq!(
        read_offline_plan(&out).unwrap().unwrap().offsets,
        [0, -1, 16]
    );
    let a = parse(&plain, &TfliteOptions::default()).unwrap();
    let b = parse(&out, &TfliteOptions::default()).unwrap();
    assert_eq!(a.graph, b.graph);
}

#[test]
fn empty_tensors_are_not_planned_and_non_empty_intermediates_are_flagged() {
    // TFLM: needs_allocating needs bytes != 0; LSTM's intermediates are [0]-shaped
    let mut o = op(0, &[0], &[1]);
    o.intermediates = Some(vec![2, 3]);
    let bytes = model(
        vec![subgraph(
            "main",
            vec![
                tensor("x", INT8, &[4], 0),
                tensor("y", INT8, &[4], 0),
                tensor("empty", 0, &[0], 0),
                tensor("full", 0, &[3], 0),
            ],
            &[0],
            &[1],
            vec![o],
        )],
        1,
    );
    let m = parse(&bytes, &TfliteOptions::default()).unwrap();
    let names: Vec<String> = ranges(&m).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["x", "y"]);
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert!(m.warnings[0].contains("intermediate tensor 'full' is not empty: TFLM refuses"));
}
