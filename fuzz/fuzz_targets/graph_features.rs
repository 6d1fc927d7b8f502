//! Bytes decoded into a `memplan.graph/1` graph with the features of issue 30's campaign
//! (streams with and without `after` edges, gears over a `batch` dim, continuous inputs and
//! outputs, atomic clean, memory types, no-reuse tensors and ops, ref outputs, workspaces)
//! and an option set, loaded by the one load pipeline, planned by every registered strategy.
//! A refusal by the load pipeline is fine (the bytes may make a graph the docs refuse); once
//! loaded, every strategy must return a plan the validator accepts under the options' rules:
//! an error is a finding (the decoder never makes an infeasible graph), as is a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memplan_core::import::load::{load, LoadOptions};
use memplan_core::{strategies, validate_with, Padding, PlanOptions, Rules};
use serde_json::{json, Value};

/// Reads the bytes one at a time, 0 when they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn below(&mut self, n: u8) -> usize {
        usize::from(self.next() % n.max(1))
    }
}

const BYTES: [u64; 8] = [0, 1, 8, 64, 100, 512, 4096, 70000];

fuzz_target!(|data: &[u8]| {
    let mut r = Bytes(data);
    let head = r.next();
    let options = PlanOptions {
        alignment: [1, 8, 512, 512][usize::from(head & 3)],
        padding: if head & 4 != 0 { Padding::Ge } else { Padding::None },
        reuse: head & 8 == 0,
        zero_copy_io: head & 16 == 0,
        zero_copy_reuse: head & 32 != 0,
        atomic_centralised: head & 64 == 0,
        time_limit_ms: 1,
        ..PlanOptions::default()
    };
    let gears: Vec<u64> = if head & 128 != 0 { vec![1, 4] } else { Vec::new() };
    let mut tensors: Vec<Value> = Vec::new();
    let new_tensor = |r: &mut Bytes, batch: bool, tensors: &mut Vec<Value>| -> String {
        let name = format!("t{}", tensors.len());
        let f = r.next();
        let mut v = if batch {
            json!({"name": name, "dtype": "float32", "shape": ["batch", 1 + r.below(100)]})
        } else {
            json!({"name": name, "bytes": BYTES[r.below(8)]})
        };
        let flags: Vec<&str> = [(1, "no_reuse"), (2, "zero_copy"), (4, "atomic_clean")]
            .iter()
            .filter(|(bit, _)| f & bit != 0 && f & 0x80 != 0)
            .map(|&(_, n)| n)
            .collect();
        if !flags.is_empty() {
            v["flags"] = json!(flags);
        }
        let m = u64::from(f & 0x40 != 0 && f & 0x20 != 0);
        if m != 0 {
            v["memory_type"] = json!(m);
        }
        tensors.push(v);
        name
    };
    let n_in = 1 + r.below(2);
    let mut available: Vec<String> = (0..n_in)
        .map(|k| new_tensor(&mut r, !gears.is_empty() && k == 0, &mut tensors))
        .collect();
    let inputs = available.clone();
    let mut grouped: Vec<String> = Vec::new();
    let mut ops: Vec<Value> = Vec::new();
    let n_ops = 1 + r.below(6);
    for k in 0..n_ops {
        let f = r.next();
        let mut ins: Vec<String> = Vec::new();
        for _ in 0..r.below(4) {
            let t = available[r.below(available.len() as u8)].clone();
            if !ins.contains(&t) {
                ins.push(t);
            }
        }
        let outs: Vec<String> = (0..r.below(4))
            .map(|_| {
                let batch = !gears.is_empty() && r.next() & 1 != 0;
                new_tensor(&mut r, batch, &mut tensors)
            })
            .collect();
        let mut op = json!({"name": format!("op{k}"), "inputs": ins, "outputs": outs,
                            "stream": r.below(3)});
        if k > 0 && f & 1 != 0 {
            op["after"] = json!([format!("op{}", r.below(k as u8))]);
        }
        if f & 2 != 0 {
            op["workspace_bytes"] = json!([BYTES[r.below(8)]]);
        }
        let mut attrs = serde_json::Map::new();
        if f & 4 != 0 {
            attrs.insert("no_reuse".into(), json!(true));
        }
        let fresh = |l: &[String], g: &[String]| l.iter().all(|t| !g.contains(t));
        if f & 8 != 0 && outs.len() >= 2 && fresh(&outs, &grouped) {
            attrs.insert("continuous_outputs".into(), json!(true));
            grouped.extend(outs.iter().cloned());
        } else if f & 16 != 0 && ins.len() >= 2 && fresh(&ins, &grouped) {
            attrs.insert("continuous_inputs".into(), json!(true));
            grouped.extend(ins.iter().cloned());
        } else if f & 32 != 0 && !ins.is_empty() && !outs.is_empty() {
            let (o, i) = (&outs[0], &ins[r.below(ins.len() as u8)]);
            if fresh(&[o.clone(), i.clone()], &grouped) {
                attrs.insert("ref_outputs".into(), json!({ o.clone(): i.clone() }));
            }
        }
        if !attrs.is_empty() {
            op["attrs"] = Value::Object(attrs);
        }
        available.extend(outs);
        ops.push(op);
    }
    let outputs: Vec<String> = available
        .iter()
        .filter(|t| !inputs.contains(t))
        .filter(|_| r.next() & 3 == 0)
        .cloned()
        .collect();
    let text = json!({"format": "memplan.graph/1", "tensors": tensors, "ops": ops,
                      "inputs": inputs, "outputs": outputs})
    .to_string();
    let Ok(loaded) = load(
        "fuzz.json",
        text.as_bytes(),
        &LoadOptions {
            gears,
            ..LoadOptions::default()
        },
    ) else {
        return;
    };
    let problem = &loaded.lowered.problem;
    let rules = Rules::from(&options);
    for s in strategies() {
        let plan = s
            .run(problem, &options)
            .unwrap_or_else(|e| panic!("{}: refused a loaded graph: {e}\n{text}", s.name));
        if let Err(v) = validate_with(problem, &plan, &rules) {
            panic!("{}: invalid plan: {}\n{text}", s.name, v.describe(problem));
        }
    }
});
