//! `.tflite` import under TFLM's rules, on the committed models (testdata/models/tflite/):
//! the max-live lower bound at TFLM's sizes (16 B) against the figures measured with TFLM
//! itself (PyPI `tflite-micro`, see testdata/models/SOURCES.md), op counts, the Vela plan.
#![cfg(feature = "tflite")]
#![allow(clippy::unwrap_used)]

use memplan_core::bound::bounds_with;
use memplan_core::import::load::{load, Format, LoadOptions, Loaded};
use memplan_core::import::tflite::{self, read_offline_plan, with_offline_plan, TfliteOptions};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/models/tflite/");

fn bytes(rel: &str) -> Vec<u8> {
    let path = format!("{DIR}{rel}");
    std::fs::read(&path).unwrap_or_else(|e| panic!("missing test model {path}: {e}"))
}

fn loaded(rel: &str) -> Loaded {
    load(rel, &bytes(rel), &LoadOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// (max-live bound, no-reuse total) at TFLM's planned sizes.
fn bounds(l: &Loaded) -> (u64, u64) {
    let opts = l.format.default_plan_options();
    let p = &l.lowered.problem;
    let b = bounds_with(p, |i| opts.planned_size(&p.buffers[i])).unwrap();
    (b.lower_bound, b.no_reuse)
}

fn walked_ops(l: &Loaded) -> usize {
    l.tflite.as_ref().unwrap().walked_operators
}

#[test]
fn tflite_defaults_are_tflm_s() {
    let o = Format::Tflite.default_plan_options();
    assert_eq!(o.alignment, 16);
    assert_eq!(o.padding, memplan_core::Padding::None);
    assert!(!o.zero_copy_io);
    assert_eq!(tflite::tflm_plan_options(), o);
}

#[test]
fn hello_world_int8_bound_is_tflm_s_head() {
    let l = loaded("tflite-micro/hello_world_int8.tflite");
    assert_eq!(l.format, Format::Tflite);
    assert_eq!(walked_ops(&l), 3);
    assert_eq!(bounds(&l).0, 32);
    // the pipeline's sizes are TFLM's (16 B each): input [1,1], two [1,16], output [1,1]
    // int8, so the plain bounds are TFLM's too: 32 live at most, 4 x 16 without reuse
    let raw = memplan_core::lower_bound(&l.lowered.problem).unwrap();
    assert_eq!((raw.lower_bound, raw.no_reuse), (32, 64));
    let sizes: Vec<u64> = l.lowered.problem.buffers.iter().map(|b| b.size).collect();
    assert_eq!(sizes, [16, 16, 16, 16]);
}

#[test]
fn micro_speech_bound_is_tflm_s_head() {
    let l = loaded("tflite-micro/micro_speech_quantized.tflite");
    assert_eq!(walked_ops(&l), 4);
    assert_eq!(bounds(&l).0, 5_968);
}

#[test]
fn person_detect_bound_is_tflm_s_head() {
    let l = loaded("tflite-micro/person_detect.tflite");
    assert_eq!(walked_ops(&l), 31);
    assert_eq!(bounds(&l).0, 55_296);
}

#[test]
fn mobilenet_v2_bound_is_tflm_s_head() {
    let l = loaded("tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite");
    assert_eq!(walked_ops(&l), 84);
    assert_eq!(bounds(&l).0, 2_451_840);
}

/// The max-live bound of the tensors alone (the problem without its workspaces, which are
/// the kernels' scratch buffers).
fn tensors_bound(l: &Loaded) -> u64 {
    let mut p = l.lowered.problem.clone();
    p.buffers
        .retain(|b| b.kind != memplan_core::problem::BufferKind::Workspace);
    memplan_core::lower_bound(&p).unwrap().lower_bound
}

#[test]
fn keyword_scrambled_plans_the_svdf_scratch() {
    let l = loaded("tflite-micro/keyword_scrambled.tflite");
    assert_eq!(walked_ops(&l), 15);
    // the table: 288 B of tensors; TFLM's head 672 B (memory_arena_threshold_test.cc)
    assert_eq!(tensors_bound(&l), 288);
    assert_eq!(bounds(&l).0, 672);
    let info = l.tflite.as_ref().unwrap();
    // svdf_common.cc, int8: batch * num_filters * 4 then batch * num_units * 4, rank 1 so
    // units = filters: batch 1 and weights_feature's rows 64 (four SVDFs) or 32 (three)
    let svdf: Vec<&[u64]> = info
        .scratch_ops
        .iter()
        .map(|s| {
            assert_eq!((s.op_type.as_str(), s.unknown.as_deref()), ("SVDF", None));
            s.bytes.as_slice()
        })
        .collect();
    let (a, b): (&[u64], &[u64]) = (&[256, 256], &[128, 128]);
    assert_eq!(svdf, [a, a, a, a, b, b, b]);
    assert_eq!(info.scratch_bytes(), 4 * 512 + 3 * 256);
    // they are the problem's workspaces, after every tensor, in request order
    let ws: Vec<u64> = l
        .lowered
        .problem
        .buffers
        .iter()
        .skip_while(|b| b.kind != memplan_core::problem::BufferKind::Workspace)
        .map(|b| {
            assert_eq!(b.kind, memplan_core::problem::BufferKind::Workspace);
            assert_eq!(b.start, b.end, "{}: live during its op only", b.name);
            b.size
        })
        .collect();
    assert_eq!(ws, svdf.concat());
    assert!(
        l.lowered
            .warnings
            .iter()
            .any(|w| w.starts_with("scratch buffers are not in the file: 14 of TFLM's reference kernels' requests (7 op(s): SVDF)")),
        "{:?}",
        l.lowered.warnings
    );
}

#[test]
fn lstm_and_dtln_plan_the_lstm_scratch() {
    // unidirectional_sequence_lstm.cc: four buffers of batch * state elements of the cell
    // state's type; TFLM's heads measured with the wheel (scripts/tflm-oracle)
    let l = loaded("tflite-micro/trained_lstm_int8.tflite");
    assert_eq!(walked_ops(&l), 4);
    assert_eq!(tensors_bound(&l), 1_344);
    // hidden state [1, 20], int16 cell state: 40 B, 48 B at TFLM's 16 B, four of them
    let info = l.tflite.as_ref().unwrap();
    assert_eq!(info.scratch_ops.len(), 1);
    assert_eq!(info.scratch_ops[0].bytes, [40, 40, 40, 40]);
    assert_eq!(info.scratch_bytes(), 192);
    assert_eq!(bounds(&l).0, 1_536);
    let l = loaded("tflite-micro/trained_lstm.tflite");
    // float: hidden state [1, 20] of float32 cell state: 80 B each
    assert_eq!(l.tflite.as_ref().unwrap().scratch_ops[0].bytes, [80; 4]);
    assert_eq!(bounds(&l).0, 5_696);
    let l = loaded("tflite-micro/dtln_noise_suppression.tflite");
    assert_eq!(walked_ops(&l), 4);
    assert_eq!(tensors_bound(&l), 544);
    assert_eq!(bounds(&l).0, 1_424);
}

#[test]
fn every_committed_model_loads_and_plans_validly() {
    for rel in [
        "tflite-micro/hello_world_int8.tflite",
        "tflite-micro/micro_speech_quantized.tflite",
        "tflite-micro/keyword_scrambled.tflite",
        "tflite-micro/trained_lstm.tflite",
        "tflite-micro/trained_lstm_int8.tflite",
        "tflite-micro/dtln_noise_suppression.tflite",
        "tflite-micro/person_detect.tflite",
        "tflite-micro/person_detect_vela.tflite",
        "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite",
        "pypi-tflite-micro/sine_float.tflite",
        "microflow/sine.tflite",
        "tfmicro/hello_world.tflite",
        "tfmicro/magic_wand.tflite",
        "tfmicro/micro_speech.tflite",
        "tfmicro/person_detection_grayscale.tflite",
    ] {
        let l = loaded(rel);
        let info = l.tflite.as_ref().unwrap();
        assert_eq!(
            l.graph.as_ref().unwrap().tensors.len(),
            info.tensor_count(),
            "{rel}"
        );
        let opts = l.format.default_plan_options();
        let plan = memplan_core::plan(&l.lowered.problem, "greedy-size-best-fit", &opts).unwrap();
        let rules = memplan_core::Rules::from(&opts);
        memplan_core::validate_with(&l.lowered.problem, &plan, &rules)
            .unwrap_or_else(|v| panic!("{rel}: {v:?}"));
        let (lb, total) = bounds(&l);
        assert!(lb <= plan.peak && plan.peak <= total, "{rel}");
    }
}

#[test]
fn the_vela_plan_is_read() {
    let b = bytes("tflite-micro/person_detect_vela.tflite");
    let p = read_offline_plan(&b).unwrap().unwrap();
    assert_eq!((p.version, p.subgraphs), (0, 1));
    assert_eq!(p.offsets, [0, -1, -1, 0, 0, 0]);
    let l = loaded("tflite-micro/person_detect_vela.tflite");
    assert_eq!(l.tflite.unwrap().offline_plan, Some(p));
}

#[test]
fn a_written_plan_reads_back_and_keeps_the_model() {
    let b = bytes("tflite-micro/person_detect.tflite");
    assert_eq!(read_offline_plan(&b).unwrap(), None);
    let before = tflite::parse(&b, &TfliteOptions::default()).unwrap();
    let n = before.info.tensor_count();
    let offsets: Vec<i32> = (0..i32::try_from(n).unwrap())
        .map(|i| if i % 3 == 0 { -1 } else { 16 * i })
        .collect();
    let out = with_offline_plan(&b, &offsets).unwrap();
    let plan = read_offline_plan(&out).unwrap().unwrap();
    assert_eq!(plan.offsets, offsets);
    assert_eq!((plan.version, plan.subgraphs), (0, 1));
    let after = tflite::parse(&out, &TfliteOptions::default()).unwrap();
    assert_eq!(after.graph, before.graph);
    assert_eq!(after.weight_bytes, before.weight_bytes);
    // every weight keeps its bytes, at a 16-byte aligned place
    assert_eq!(out.len() % 16, b.len() % 16);
    // replacing the plan keeps one entry, and replaces Vela's too
    let again: Vec<i32> = vec![0; n];
    let out2 = with_offline_plan(&out, &again).unwrap();
    assert_eq!(read_offline_plan(&out2).unwrap().unwrap().offsets, again);
    let vela = bytes("tflite-micro/person_detect_vela.tflite");
    let out3 = with_offline_plan(&vela, &[-1; 6]).unwrap();
    assert_eq!(read_offline_plan(&out3).unwrap().unwrap().offsets, [-1; 6]);
    // a plan of the wrong length is refused
    let e = with_offline_plan(&b, &offsets[1..]).unwrap_err();
    assert!(e.to_string().contains("offsets for"), "{e}");
}

/// Counts read independently with TFLite's own Python reader (the PyPI wheel's
/// `schema_py_generated.py`, `ModelT.InitFromPackedBuf`): tensors, operators, `is_variable`
/// tensors, tensors whose buffer holds data and those bytes.
#[test]
fn counts_match_tflite_s_own_reader() {
    let table: [(&str, usize, usize, usize, usize, u64); 15] = [
        ("microflow/sine.tflite", 10, 3, 0, 6, 420),
        ("pypi-tflite-micro/sine_float.tflite", 10, 3, 0, 6, 1284),
        (
            "tflite-micro/dtln_noise_suppression.tflite",
            45,
            4,
            4,
            26,
            366_212,
        ),
        ("tflite-micro/hello_world_int8.tflite", 10, 3, 0, 6, 420),
        (
            "tflite-micro/keyword_scrambled.tflite",
            54,
            15,
            7,
            31,
            27_848,
        ),
        (
            "tflite-micro/micro_speech_quantized.tflite",
            10,
            4,
            0,
            5,
            16_704,
        ),
        (
            "tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite",
            212,
            84,
            0,
            127,
            3_542_592,
        ),
        ("tflite-micro/person_detect.tflite", 89, 31, 0, 57, 218_928),
        (
            "tflite-micro/person_detect_vela.tflite",
            6,
            1,
            0,
            2,
            268_648,
        ),
        ("tflite-micro/trained_lstm.tflite", 22, 4, 2, 15, 38_128),
        ("tflite-micro/trained_lstm_int8.tflite", 27, 4, 2, 15, 9_808),
        ("tfmicro/hello_world.tflite", 12, 5, 0, 6, 420),
        ("tfmicro/magic_wand.tflite", 16, 7, 0, 8, 17_200),
        ("tfmicro/micro_speech.tflite", 8, 3, 0, 4, 16_688),
        (
            "tfmicro/person_detection_grayscale.tflite",
            86,
            29,
            0,
            56,
            219_180,
        ),
    ];
    for (rel, tensors, ops, variables, weights, weight_bytes) in table {
        let m = tflite::parse(&bytes(rel), &TfliteOptions::default()).unwrap();
        let got = (
            m.info.tensor_count(),
            m.info.operators,
            m.info.persistent.len(),
            m.graph.tensors.iter().filter(|t| t.constant).count(),
            m.weight_bytes,
        );
        assert_eq!(
            got,
            (tensors, ops, variables, weights, weight_bytes),
            "{rel}"
        );
        assert_eq!(
            m.info.walked_operators, ops,
            "{rel}: one subgraph, walked once"
        );
    }
}

/// Corrupted copies of real models (bytes overwritten, cut short) through the importer, the
/// lowering and the offline-plan reader and writer: errors are fine, panics are not. A
/// deterministic stand-in for the `tflite_parse` fuzz target.
#[test]
#[allow(clippy::cast_possible_truncation)] // positions below the file's length
fn corrupted_models_give_errors_not_panics() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for rel in [
        "tflite-micro/hello_world_int8.tflite",
        "tflite-micro/person_detect_vela.tflite",
        "tflite-micro/trained_lstm_int8.tflite",
    ] {
        let original = bytes(rel);
        for round in 0..400 {
            let mut b = original.clone();
            // most bytes of a model are weights: aim at the first 2 KiB, where the tables
            // usually sit, as often as anywhere
            for _ in 0..1 + next() % 4 {
                let span = if next() % 2 == 0 {
                    2048.min(b.len())
                } else {
                    b.len()
                };
                let at = (next() % span as u64) as usize;
                b[at] = (next() & 0xff) as u8;
            }
            if round % 5 == 0 {
                b.truncate((next() % b.len() as u64) as usize);
            }
            if let Ok(m) = tflite::parse(&b, &TfliteOptions::default()) {
                if let Ok(l) = m.graph.lower(&m.file_dims) {
                    let _ = memplan_core::lower_bound(&l.problem);
                }
                let offsets = vec![-1; m.info.tensor_count()];
                if let Ok(out) = with_offline_plan(&b, &offsets) {
                    let back = read_offline_plan(&out).unwrap().unwrap();
                    assert_eq!(back.offsets, offsets, "{rel} round {round}");
                }
            }
            let _ = read_offline_plan(&b);
            let _ = load(rel, &b, &LoadOptions::default());
        }
    }
}

/// A plan of the lowered problem as an offline plan: one offset per tensor, -1 for weights;
/// written into the model and read back.
#[test]
fn a_plan_becomes_an_offline_plan() {
    let rel = "tflite-micro/hello_world_int8.tflite";
    let l = loaded(rel);
    let opts = l.format.default_plan_options();
    let plan = memplan_core::plan(&l.lowered.problem, "greedy-size-best-fit", &opts).unwrap();
    let info = l.tflite.as_ref().unwrap();
    let offsets =
        tflite::offline_offsets(info.tensor_count(), &l.lowered.tensor_of, &plan).unwrap();
    assert_eq!(offsets.len(), 10);
    // the 6 weights are -1; the 4 activations take 2 x 16 B slots at offsets 0 and 16
    assert_eq!(offsets.iter().filter(|&&o| o == -1).count(), 6);
    let mut placed: Vec<i32> = offsets.iter().copied().filter(|&o| o >= 0).collect();
    placed.sort_unstable();
    assert_eq!(placed, [0, 0, 16, 16]);
    let out = with_offline_plan(&bytes(rel), &offsets).unwrap();
    assert_eq!(read_offline_plan(&out).unwrap().unwrap().offsets, offsets);
}

/// The bytes of TFLM's persistent tail taken by `is_variable` tensors, each rounded up to 16 B
/// (computed independently from TFLite's Python reader: shape x element size per tensor).
#[test]
fn variable_tensors_are_the_persistent_tail() {
    for (rel, bytes_) in [
        ("tflite-micro/keyword_scrambled.tflite", 10_240),
        ("tflite-micro/dtln_noise_suppression.tflite", 768),
        ("tflite-micro/trained_lstm_int8.tflite", 80),
        ("tflite-micro/trained_lstm.tflite", 160),
    ] {
        let l = loaded(rel);
        let info = l.tflite.as_ref().unwrap();
        assert_eq!(info.persistent_bytes, Some(bytes_), "{rel}");
        // not planned: no buffer of the problem is a variable
        for t in &info.persistent {
            assert!(!l.lowered.tensor_of.contains(&Some(*t)), "{rel}");
        }
    }
}

/// TFLite's -1s are independent and TFLM allocates each tensor's own `shape`: a tensor whose
/// axis-0 value differs from the others' keeps it (its own dim), so the head stays TFLM's.
/// hello_world_int8 with its second dense output's shape [1, 16] changed to [2, 16]
/// (`shape_signature` still [-1, 16]): TFLM's head is 48 B (the wheel's print_allocations(),
/// found by a new-user trial): 32 B for [2, 16] int8 beside the 16 B input it reads.
#[test]
fn a_disagreeing_batch_value_keeps_the_tensors_own_shape() {
    let mut b = bytes("tflite-micro/hello_world_int8.tflite");
    // the shape vector of tensor 8: length 2, then [1, 16]
    assert_eq!(&b[1668..1680], &[2, 0, 0, 0, 1, 0, 0, 0, 16, 0, 0, 0]);
    b[1672] = 2;
    let l = load("h2.tflite", &b, &LoadOptions::default()).unwrap();
    assert!(
        l.lowered
            .warnings
            .iter()
            .any(|w| w.contains("has 2 in its shape where another has 1; it gets its own dim")),
        "{:?}",
        l.lowered.warnings
    );
    let p = memplan_core::plan(
        &l.lowered.problem,
        "tflm-greedy",
        &tflite::tflm_plan_options(),
    )
    .unwrap();
    assert_eq!(p.peak, 48);
}

/// TFLM reads no tensor name: one that is not UTF-8 does not refuse the model. hello_world_int8
/// with the first byte of two tensor names and of a metadata name made invalid UTF-8: the
/// names shown lossily (U+FFFD), one warning, the head still TFLM's 32 B, and a plan written
/// into the file reads back.
#[test]
fn a_name_that_is_not_utf8_is_shown_lossily() {
    let mut b = bytes("tflite-micro/hello_world_int8.tflite");
    // tensor 0 "serving_default_dense_input:0", tensor 9 "StatefulPartitionedCall:0", metadata
    // "min_runtime_version": each string's u32 length, then its bytes
    for (at, len, first) in [(2624, 29, b's'), (1472, 25, b'S'), (264, 19, b'm')] {
        assert_eq!(&b[at - 4..at], &u32::to_le_bytes(len), "length before {at}");
        assert_eq!(b[at], first);
    }
    b[2624] = 0xff; // never valid in UTF-8
    b[1472] = 0xc3; // a lead byte followed by 't': an invalid sequence
    b[264] = 0xff;
    let l = load("bad-names.tflite", &b, &LoadOptions::default()).unwrap();
    let g = l.graph.as_ref().unwrap();
    assert_eq!(g.tensors[0].name, "\u{fffd}erving_default_dense_input:0");
    assert_eq!(g.tensors[9].name, "\u{fffd}tatefulPartitionedCall:0");
    let about: Vec<&String> = l
        .lowered
        .warnings
        .iter()
        .filter(|w| w.contains("not UTF-8"))
        .collect();
    assert_eq!(about.len(), 1, "{:?}", l.lowered.warnings);
    assert!(
        about[0].starts_with("2 name(s) are not UTF-8 (subgraph 0 tensor 0 first)"),
        "{}",
        about[0]
    );
    let p = memplan_core::plan(
        &l.lowered.problem,
        "tflm-greedy",
        &tflite::tflm_plan_options(),
    )
    .unwrap();
    assert_eq!(p.peak, 32);
    let info = l.tflite.as_ref().unwrap();
    let offsets = tflite::offline_offsets(info.tensor_count(), &l.lowered.tensor_of, &p).unwrap();
    let out = with_offline_plan(&b, &offsets).unwrap();
    assert_eq!(read_offline_plan(&out).unwrap().unwrap().offsets, offsets);
}
