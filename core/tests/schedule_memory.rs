//! `--schedule memory` ([`memplan_core::graph::order`]): the exact search against brute force
//! over every topological order of random graphs of up to 10 ops, figures worked out by hand
//! on small graphs, and never above the file order.

// Test code: counts far below the truncation limits.
#![allow(clippy::cast_possible_truncation)]

use memplan_core::graph::order::{memory_order, OrderLimits};
use memplan_core::graph::ScheduleOrder;
use memplan_core::{Bindings, Graph, Op, OpId, Tensor, TensorId};

fn t(name: &str, bytes: u64) -> Tensor {
    Tensor::with_bytes(name, bytes)
}

fn op(name: &str, inputs: &[usize], outputs: &[usize]) -> Op {
    Op {
        name: name.into(),
        op_type: "Op".into(),
        inputs: TensorId::list(inputs),
        outputs: TensorId::list(outputs),
        ..Op::default()
    }
}

/// The live-set peak of `order` from the lowering's rules, written out again here (no code
/// shared with the search): a tensor lives from its producer's step (a graph input from 0)
/// to its last reader's step, a graph output to the last step; workspaces at their op's step.
fn peak_by_definition(g: &Graph, order: &[usize]) -> u64 {
    let steps = order.len();
    let mut step_of = vec![0usize; g.ops.len()];
    for (s, &k) in order.iter().enumerate() {
        step_of[k] = s;
    }
    let mut live = vec![0u64; steps];
    for (ti, tensor) in g.tensors.iter().enumerate() {
        if tensor.constant {
            continue;
        }
        let tid = TensorId::new(ti);
        let producer = g.ops.iter().position(|o| o.outputs.contains(&tid));
        let input = g.inputs.contains(&tid);
        let start = if input {
            0
        } else if let Some(p) = producer {
            step_of[p]
        } else {
            continue;
        };
        let mut end = producer.map_or(0, |p| step_of[p]);
        for (k, o) in g.ops.iter().enumerate() {
            if o.inputs.contains(&tid) {
                end = end.max(step_of[k]);
            }
        }
        if g.outputs.contains(&tid) {
            end = steps - 1;
        }
        for l in &mut live[start..=end] {
            *l += tensor.bytes.unwrap_or(0);
        }
    }
    for (k, o) in g.ops.iter().enumerate() {
        live[step_of[k]] += o.workspace_bytes.iter().sum::<u64>();
    }
    live.into_iter().max().unwrap_or(0)
}

/// Every topological order of `g` (ops after the producers of what they read), or `None`
/// past `cap` orders.
fn all_orders(g: &Graph, cap: usize) -> Option<Vec<Vec<usize>>> {
    let n = g.ops.len();
    let preds: Vec<Vec<usize>> = g
        .ops
        .iter()
        .map(|o| {
            o.inputs
                .iter()
                .filter_map(|&t| g.ops.iter().position(|p| p.outputs.contains(&t)))
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut used = vec![false; n];
    fn rec(
        preds: &[Vec<usize>],
        used: &mut Vec<bool>,
        cur: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
        cap: usize,
    ) -> bool {
        if cur.len() == preds.len() {
            out.push(cur.clone());
            return out.len() <= cap;
        }
        for v in 0..preds.len() {
            if !used[v] && preds[v].iter().all(|&p| used[p]) {
                used[v] = true;
                cur.push(v);
                let ok = rec(preds, used, cur, out, cap);
                cur.pop();
                used[v] = false;
                if !ok {
                    return false;
                }
            }
        }
        true
    }
    rec(&preds, &mut used, &mut cur, &mut out, cap).then_some(out)
}

/// SplitMix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random graph of `n` ops: one or two graph inputs; each op reads one to three earlier
/// tensors and writes one or two (sizes 1..=100 B, sometimes a workspace); the tensors
/// nobody reads are graph outputs, and sometimes one more.
fn random_graph(n: usize, rng: &mut Rng) -> Graph {
    let mut tensors = Vec::new();
    let inputs = 1 + rng.below(2) as usize;
    for i in 0..inputs {
        tensors.push(t(&format!("in{i}"), 1 + rng.below(100)));
    }
    let mut ops = Vec::new();
    for k in 0..n {
        let reads = 1 + rng.below(3) as usize;
        let mut ins: Vec<usize> = (0..reads)
            .map(|_| rng.below(tensors.len() as u64) as usize)
            .collect();
        ins.sort_unstable();
        ins.dedup();
        let writes = 1 + rng.below(2) as usize;
        let outs: Vec<usize> = (0..writes)
            .map(|j| {
                tensors.push(t(&format!("t{k}_{j}"), 1 + rng.below(100)));
                tensors.len() - 1
            })
            .collect();
        let mut o = op(&format!("op{k}"), &ins, &outs);
        if rng.below(4) == 0 {
            o.workspace_bytes = vec![1 + rng.below(50)];
        }
        ops.push(o);
    }
    let mut outputs: Vec<usize> = (inputs..tensors.len())
        .filter(|&ti| !ops.iter().any(|o| o.inputs.contains(&TensorId::new(ti))))
        .collect();
    if rng.below(3) == 0 {
        outputs.push(inputs + rng.below((tensors.len() - inputs) as u64) as usize);
        outputs.sort_unstable();
        outputs.dedup();
    }
    Graph {
        name: "random".into(),
        tensors,
        ops,
        inputs: TensorId::list(&(0..inputs).collect::<Vec<_>>()),
        outputs: TensorId::list(&outputs),
        order: ScheduleOrder::File,
    }
}

#[test]
fn the_exact_search_equals_brute_force_on_every_graph_of_up_to_ten_ops() {
    let mut rng = Rng(26);
    let mut checked = [0usize; 11];
    let mut below_file = 0;
    for round in 0..400 {
        let n = 1 + round % 10;
        let g = random_graph(n, &mut rng);
        let Some(orders) = all_orders(&g, 40_000) else {
            continue; // too many orders to enumerate in a debug test
        };
        let best = orders
            .iter()
            .map(|o| peak_by_definition(&g, o))
            .min()
            .expect("a graph has an order");
        let (order, report) =
            memory_order(&g, &Bindings::new(), &OrderLimits::default()).expect("orders");
        let order: Vec<usize> = order.iter().map(|k| k.index()).collect();
        assert!(report.exact, "round {round}: {}", report.note());
        assert_eq!(report.peak, best, "round {round}: {}", report.note());
        assert_eq!(peak_by_definition(&g, &order), best, "round {round}");
        // the lowered problem's bound is the same figure
        let lowered = g
            .lower_in(
                &Bindings::new(),
                order.iter().map(|&k| OpId::new(k)).collect(),
            )
            .expect("lowers");
        let lb = memplan_core::lower_bound(&lowered.problem).expect("bound");
        assert_eq!(lb.lower_bound, best, "round {round}");
        let file: Vec<usize> = (0..n).collect();
        assert!(best <= peak_by_definition(&g, &file));
        assert_eq!(report.file_peak, peak_by_definition(&g, &file));
        below_file += usize::from(best < report.file_peak);
        checked[n] += 1;
    }
    // every size was checked, many times; and order mattered on some
    for (n, &c) in checked.iter().enumerate().skip(1) {
        assert!(c >= 20, "only {c} graphs of {n} ops were checked");
    }
    assert!(
        below_file >= 40,
        "only {below_file} graphs gained from the order"
    );
}

/// x (10 B) feeds two branches: A1 writes a1 (100 B), A2 reads it and writes a2 (1 B); B1
/// writes b1 (50 B), B2 reads it and writes b2 (1 B); C reads a2 and b2 and writes y (1 B).
/// File order A1 B1 A2 B2 C: at B1, x + a1 + b1 = 160 B live. Finishing one branch first,
/// A1 A2 B1 B2 C: A1 110, A2 x + a1 + a2 = 111, B1 x + a2 + b1 = 61, B2 52, C 3: 111 B;
/// B1 B2 A1 A2 C: 60, 61, x + b2 + a1 = 111, 102, 3: 111 B too. None does better: at A1's
/// step x and a1 are live (110 B); if B1 ran before, b1 or b2 is live too (111 B or more); if
/// not, x is still live at A2's step with a1 and a2 (111 B).
fn two_branches() -> Graph {
    Graph {
        name: "two-branches".into(),
        tensors: vec![
            t("x", 10),
            t("a1", 100),
            t("a2", 1),
            t("b1", 50),
            t("b2", 1),
            t("y", 1),
        ],
        ops: vec![
            op("A1", &[0], &[1]),
            op("B1", &[0], &[3]),
            op("A2", &[1], &[2]),
            op("B2", &[3], &[4]),
            op("C", &[2, 4], &[5]),
        ],
        inputs: TensorId::list(&[0]),
        outputs: TensorId::list(&[5]),
        order: ScheduleOrder::Memory,
    }
}

#[test]
fn finishing_a_branch_first_gives_the_hand_worked_peak() {
    let g = two_branches();
    let l = g.lower(&Bindings::new()).expect("lowers");
    let report = l.search.as_ref().expect("a search report");
    assert_eq!(report.file_peak, 160);
    assert_eq!(report.peak, 111);
    assert!(report.exact);
    assert_eq!(
        memplan_core::lower_bound(&l.problem).unwrap().lower_bound,
        111
    );
    let names: Vec<&str> = l.schedule.iter().map(|&k| g.ops[k].name.as_str()).collect();
    assert!(
        names == ["A1", "A2", "B1", "B2", "C"] || names == ["B1", "B2", "A1", "A2", "C"],
        "{names:?}"
    );
    assert_eq!(l.order, ScheduleOrder::Memory);
    let note = report.note();
    assert!(note.contains("file order 160 B, -30.6 %"), "{note}");
    assert!(note.contains("proven optimal"), "{note}");
}

/// A weight W (constant) dequantized by D into w (80 B), read only by the last op C.
/// x (10) -> A -> a (10) -> B -> b (10) -> C(b, w) -> y (10). File order D A B C keeps w live
/// from step 0: at A, w + x + a = 100 B. Folded, D runs just before C: D x? no, at D: b + w
/// = 90, at C: b + w + y = 100... so the peak is the same 100 B; with a workspace of 20 B on
/// A, file order peaks at A with 120 B, the folded order at 100 B (A: x + a + 20 = 40).
#[test]
fn a_constant_only_op_runs_just_before_its_consumer() {
    let mut w = t("W", 1000);
    w.constant = true;
    let mut a = op("A", &[1], &[2]);
    a.workspace_bytes = vec![20];
    let g = Graph {
        name: "dequant".into(),
        tensors: vec![
            w,
            t("x", 10),
            t("a", 10),
            t("b", 10),
            t("w", 80),
            t("y", 10),
        ],
        ops: vec![
            op("D", &[0], &[4]),
            a,
            op("B", &[2], &[3]),
            op("C", &[3, 4], &[5]),
        ],
        inputs: TensorId::list(&[1]),
        outputs: TensorId::list(&[5]),
        order: ScheduleOrder::Memory,
    };
    let l = g.lower(&Bindings::new()).expect("lowers");
    let r = l.search.as_ref().unwrap();
    assert_eq!(r.folded_ops, 1);
    assert_eq!(r.file_peak, 120);
    assert_eq!(r.peak, 100);
    let names: Vec<&str> = l.schedule.iter().map(|&k| g.ops[k].name.as_str()).collect();
    assert_eq!(names, ["A", "B", "D", "C"]);
}

#[test]
fn never_above_the_file_order_even_when_the_search_is_cut() {
    // a beam of 1 state a level: a heuristic, compared with the file order all the same
    let mut rng = Rng(7);
    let limits = OrderLimits {
        max_width: 1,
        max_states: 10,
        max_ops: 5_000,
    };
    for _ in 0..50 {
        let g = random_graph(60, &mut rng);
        let (order, r) = memory_order(&g, &Bindings::new(), &limits).unwrap();
        let order: Vec<usize> = order.iter().map(|k| k.index()).collect();
        let file: Vec<usize> = (0..60).collect();
        assert!(r.peak <= peak_by_definition(&g, &file), "{}", r.note());
        assert_eq!(r.peak, peak_by_definition(&g, &order));
        if !r.exact {
            assert!(r.not_exact.is_some());
        }
    }
    // past max_ops: heuristics only, said so
    let g = random_graph(30, &mut rng);
    let small = OrderLimits {
        max_ops: 10,
        ..OrderLimits::default()
    };
    let (_, r) = memory_order(&g, &Bindings::new(), &small).unwrap();
    assert!(!r.exact);
    assert!(r.not_exact.unwrap().contains("30 ops is over"));
}

#[test]
fn a_given_order_that_is_not_topological_is_refused() {
    let g = two_branches();
    let e = g
        .lower_in(&Bindings::new(), OpId::list(&[2, 0, 1, 3, 4]))
        .unwrap_err();
    assert!(e.to_string().contains("before op 'A1'"), "{e}");
    let e = g
        .lower_in(&Bindings::new(), OpId::list(&[0, 1, 2, 3]))
        .unwrap_err();
    assert!(e.to_string().contains("leaves this op out"), "{e}");
}
