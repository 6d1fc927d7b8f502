//! Training memory (`memplan_core::report::training`, rules in docs/ge-memory-planning.md
//! §10): a small MLP and a small CNN worked out by hand. Figures are live-set lower bounds
//! (raw bytes), which every plan's peak must reach; the planned problems are checked by the
//! validator.

use memplan_core::report::training::{training, Optimizer};
use memplan_core::{import, lower_bound, plan, Bindings, PlanOptions};

/// x [1, 784] f32 (3136 B) -> M1 (W1 [784, 128], 401408 B) -> h1 (512 B) -> R1 -> r1 (512 B)
/// -> M2 (W2 [128, 10], 5120 B) -> y (40 B). Steps: M1 0, R1 1, M2 2; backward M2 3, R1 4,
/// M1 5; update 6.
const MLP: &str = r#"{"format": "memplan.graph/1", "name": "mlp",
 "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 784]},
             {"name": "W1", "dtype": "float32", "shape": [784, 128], "kind": "weight"},
             {"name": "h1", "dtype": "float32", "shape": [1, 128]},
             {"name": "r1", "dtype": "float32", "shape": [1, 128]},
             {"name": "W2", "dtype": "float32", "shape": [128, 10], "kind": "weight"},
             {"name": "y", "dtype": "float32", "shape": [1, 10]}],
 "ops": [{"name": "M1", "type": "MatMul", "inputs": ["x", "W1"], "outputs": ["h1"]},
         {"name": "R1", "type": "Relu", "inputs": ["h1"], "outputs": ["r1"]},
         {"name": "M2", "type": "MatMul", "inputs": ["r1", "W2"], "outputs": ["y"]}],
 "inputs": ["x"], "outputs": ["y"]}"#;

/// x [1, 3, 8, 8] (768 B) -> C (Wc [4, 3, 3, 3], 432 B) -> c [1, 4, 8, 8] (1024 B) -> R -> r
/// (1024 B) -> P (2×2 pool) -> p [1, 64] (256 B) -> F (Wf [64, 10], 2560 B) -> y (40 B).
/// Steps: C 0, R 1, P 2, F 3; backward F 4, P 5, R 6, C 7; update 8.
const CNN: &str = r#"{"format": "memplan.graph/1", "name": "cnn",
 "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 3, 8, 8]},
             {"name": "Wc", "dtype": "float32", "shape": [4, 3, 3, 3], "kind": "weight"},
             {"name": "c", "dtype": "float32", "shape": [1, 4, 8, 8]},
             {"name": "r", "dtype": "float32", "shape": [1, 4, 8, 8]},
             {"name": "p", "dtype": "float32", "shape": [1, 64]},
             {"name": "Wf", "dtype": "float32", "shape": [64, 10], "kind": "weight"},
             {"name": "y", "dtype": "float32", "shape": [1, 10]}],
 "ops": [{"name": "C", "type": "Conv", "inputs": ["x", "Wc"], "outputs": ["c"]},
         {"name": "R", "type": "Relu", "inputs": ["c"], "outputs": ["r"]},
         {"name": "P", "type": "MaxPool", "inputs": ["r"], "outputs": ["p"]},
         {"name": "F", "type": "MatMul", "inputs": ["p", "Wf"], "outputs": ["y"]}],
 "inputs": ["x"], "outputs": ["y"]}"#;

fn span(p: &memplan_core::Problem, name: &str) -> (u64, u64, u64) {
    let b = p
        .buffers
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("{name}"));
    (b.size, b.start, b.end)
}

#[test]
fn mlp_training_step() {
    let graph = import::json::parse(MLP).expect("parses");
    let lowered = graph.lower(&Bindings::new()).expect("lowers");
    // inference: x [0,0], h1 [0,1], r1 [1,2], y [2,2]: peak at step 0, 3136 + 512
    assert_eq!(lower_bound(&lowered.problem).unwrap().lower_bound, 3648);
    let t = training(&graph, &lowered, Optimizer::Adam).expect("training");
    let p = &t.problem;
    // kept for the backward: x until M1's (5), h1 until R1's (4), r1 until M2's (3), y until
    // M2's (3)
    assert_eq!(span(p, "x"), (3136, 0, 5));
    assert_eq!(span(p, "h1"), (512, 0, 4));
    assert_eq!(span(p, "r1"), (512, 1, 3));
    assert_eq!(span(p, "y"), (40, 2, 3));
    // gradients: y's from the loss at step 3 to M2's backward; r1's made by M2's backward (3)
    // for R1's (4); h1's made by R1's (4) for M1's (5); W2's made at 3, W1's at 5, both to 6
    assert_eq!(span(p, "grad(y)"), (40, 3, 3));
    assert_eq!(span(p, "grad(r1)"), (512, 3, 4));
    assert_eq!(span(p, "grad(h1)"), (512, 4, 5));
    assert_eq!(span(p, "grad(W2)"), (5120, 3, 6));
    assert_eq!(span(p, "grad(W1)"), (401408, 5, 6));
    // live sets: step 3 = x h1 r1 y g(y) g(r1) g(W2) = 9872; step 4 = x h1 g(r1) g(h1) g(W2)
    // = 9792; step 5 = x g(h1) g(W2) g(W1) = 3136 + 512 + 5120 + 401408 = 410176 (the peak);
    // step 6 = g(W2) g(W1) = 406528
    assert_eq!(lower_bound(p).unwrap().lower_bound, 410176);
    // weights W1 + W2 = 406528 B, kept apart; Adam keeps two moments: 813056 B
    assert_eq!(t.weight_bytes, 406528);
    assert_eq!(t.weight_grad_bytes, 406528);
    assert_eq!(t.optimizer_state_bytes, 813056);
    let momentum = training(&graph, &lowered, Optimizer::Momentum).unwrap();
    assert_eq!(momentum.optimizer_state_bytes, 406528);
    // a plan of the training step is valid and no smaller than the bound
    let out = plan(p, "greedy-size-best-fit", &PlanOptions::exact()).expect("plans");
    assert_eq!(memplan_core::validate(p, &out), Ok(()));
    assert!(out.peak >= 410176);
}

#[test]
fn cnn_training_step() {
    let graph = import::json::parse(CNN).expect("parses");
    let lowered = graph.lower(&Bindings::new()).expect("lowers");
    // inference: x [0,0], c [0,1], r [1,2], p [2,3], y [3,3]: step 1 = c + r = 2048
    assert_eq!(lower_bound(&lowered.problem).unwrap().lower_bound, 2048);
    let t = training(&graph, &lowered, Optimizer::Sgd).expect("training");
    let p = &t.problem;
    assert_eq!(span(p, "x"), (768, 0, 7));
    assert_eq!(span(p, "c"), (1024, 0, 6));
    assert_eq!(span(p, "r"), (1024, 1, 5));
    assert_eq!(span(p, "p"), (256, 2, 4));
    assert_eq!(span(p, "grad(p)"), (256, 4, 5));
    assert_eq!(span(p, "grad(r)"), (1024, 5, 6));
    assert_eq!(span(p, "grad(c)"), (1024, 6, 7));
    assert_eq!(span(p, "grad(Wf)"), (2560, 4, 8));
    assert_eq!(span(p, "grad(Wc)"), (432, 7, 8));
    // step 5 = x c r g(p) g(r) g(Wf) = 768 + 1024 + 1024 + 256 + 1024 + 2560 = 6656, the peak
    // (step 4: 5968, step 6: 6400, step 7: 4784)
    assert_eq!(lower_bound(p).unwrap().lower_bound, 6656);
    assert_eq!(t.weight_bytes, 2992);
    assert_eq!(t.optimizer_state_bytes, 0, "plain SGD keeps no state");
    let out = plan(p, "greedy-size-best-fit", &PlanOptions::exact()).expect("plans");
    assert_eq!(memplan_core::validate(p, &out), Ok(()));
}
