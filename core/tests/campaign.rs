//! The random graph campaign (issue 30): random `memplan.graph/1` graphs (streams with and
//! without sync edges, gears, continuous inputs and outputs, atomic clean, memory types,
//! ref outputs, workspaces, no-reuse ops and tensors) and MiniMalloc CSVs (pins, alignments,
//! zero sizes), loaded by the one load pipeline, planned by every registered strategy under
//! several option sets, and each plan checked by a checker written here from
//! `docs/formats.md` alone: it lowers the generated model itself (live ranges, ref outputs
//! merged, rules, gears, continuous groups, the happens-before order of streams) and shares
//! no code with `validate.rs`, the lowering or the strategies. The core's validator must agree.
//!
//! `cargo test` runs a small fixed seed set (a few seconds). Longer by hand:
//! `MEMPLAN_CAMPAIGN_SEEDS=2000 cargo test -p memplan-core --release --test campaign`
//! (graphs and CSVs per run; `MEMPLAN_CAMPAIGN_FIRST=N` starts at another seed). A failure
//! prints the seed, the option set, the strategy, what broke and the model.
#![cfg(feature = "serde")]

use std::collections::{BTreeMap, BTreeSet};

use memplan_core::import::load::{load, LoadOptions};
use memplan_core::{strategies, validate_with, Padding, Plan, PlanOptions, Problem};
use serde_json::{json, Value};

// ---- a small deterministic generator ----------------------------------------------------

/// splitmix64: a fixed sequence per seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below64(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.below64(u64::try_from(n).unwrap_or(u64::MAX))).unwrap_or(0)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 1.0 < p
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

#[derive(Debug, Clone, Default)]
struct GTensor {
    name: String,
    /// Bytes, or `None` for a float32 `["batch", k]` tensor (4 · batch · k bytes).
    bytes: Option<u64>,
    batch_k: u64,
    no_reuse: bool,
    zero_copy: bool,
    atomic_clean: bool,
    memory_type: u32,
}

#[derive(Debug, Clone, Default)]
struct GOp {
    name: String,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    stream: u32,
    after: Vec<usize>,
    workspaces: Vec<u64>,
    cont_in: bool,
    cont_out: bool,
    no_reuse: bool,
    /// `(output, input)`: the output is written in place of the input.
    refs: Vec<(usize, usize)>,
}

#[derive(Debug, Clone, Default)]
struct GModel {
    tensors: Vec<GTensor>,
    ops: Vec<GOp>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    gears: Vec<u64>,
}

const BYTES: [u64; 10] = [0, 1, 8, 64, 100, 512, 1000, 4096, 5000, 70000];

fn gen_graph(seed: u64) -> GModel {
    let mut r = Rng(seed);
    let streams = r.chance(0.5);
    let gears = r.chance(0.35);
    let mut m = GModel::default();
    if gears {
        m.gears = if r.chance(0.5) {
            vec![1, 4]
        } else {
            vec![1, 2, 8]
        };
    }
    let new_tensor = |m: &mut GModel, r: &mut Rng, batch: bool| -> usize {
        let i = m.tensors.len();
        let mut t = GTensor {
            name: format!("t{i}"),
            ..GTensor::default()
        };
        if batch {
            t.batch_k = r.pick(&[1, 16, 100]);
        } else {
            t.bytes = Some(r.pick(&BYTES));
        }
        t.no_reuse = r.chance(0.08);
        t.zero_copy = r.chance(0.06);
        t.atomic_clean = r.chance(0.08);
        t.memory_type = u32::from(r.chance(0.12));
        m.tensors.push(t);
        i
    };
    // graph inputs: with gears the first has the batch dim (the batch dim is the first
    // input's leading symbolic dim)
    let n_in = if gears { 1 + r.below(2) } else { r.below(3) };
    for k in 0..n_in {
        let batch = gears && (k == 0 || r.chance(0.3));
        let t = new_tensor(&mut m, &mut r, batch);
        m.inputs.push(t);
    }
    let mut available: Vec<usize> = m.inputs.clone();
    let mut in_group = vec![false; 64];
    let mut in_ref = vec![false; 64];
    let n_ops = 2 + r.below(6);
    for k in 0..n_ops {
        let mut op = GOp {
            name: format!("op{k}"),
            stream: if streams {
                u32::try_from(r.below(3)).unwrap_or(0)
            } else {
                0
            },
            ..GOp::default()
        };
        let n_read = r.below(4).min(available.len());
        let mut pool = available.clone();
        for _ in 0..n_read {
            let j = r.below(pool.len());
            op.inputs.push(pool.swap_remove(j));
        }
        let n_write = if k + 1 == n_ops {
            1 + r.below(2)
        } else {
            r.below(4)
        };
        for _ in 0..n_write {
            let batch = gears && r.chance(0.5);
            let t = new_tensor(&mut m, &mut r, batch);
            op.outputs.push(t);
        }
        if k > 0 && r.chance(0.3) {
            op.after.push(r.below(k));
        }
        if r.chance(0.25) {
            op.workspaces.push(r.pick(&[0, 16, 512, 3000]));
        }
        op.no_reuse = r.chance(0.08);
        let free = |v: &[usize], g: &[bool], f: &[bool]| v.iter().all(|&t| !g[t] && !f[t]);
        // a group is in one memory type (docs: one run of bytes)
        let one_type = |m: &mut GModel, list: &[usize]| {
            let t0 = m.tensors[list[0]].memory_type;
            list.iter().for_each(|&t| m.tensors[t].memory_type = t0);
        };
        if op.outputs.len() >= 2 && r.chance(0.35) && free(&op.outputs, &in_group, &in_ref) {
            op.cont_out = true;
            op.outputs.iter().for_each(|&t| in_group[t] = true);
            one_type(&mut m, &op.outputs);
        } else if op.inputs.len() >= 2
            && r.chance(0.35)
            && free(&op.inputs, &in_group, &in_ref)
            && op
                .inputs
                .iter()
                .all(|&t| m.tensors[t].memory_type == m.tensors[op.inputs[0]].memory_type)
        {
            op.cont_in = true;
            op.inputs.iter().for_each(|&t| in_group[t] = true);
        } else if !op.inputs.is_empty() && !op.outputs.is_empty() && r.chance(0.3) {
            let out = op.outputs[0];
            let inp = op.inputs[r.below(op.inputs.len())];
            if !in_group[inp] && !in_group[out] {
                op.refs.push((out, inp));
                in_ref[out] = true;
                in_ref[inp] = true;
                // one buffer is in one arena (docs: two memory types are an error)
                m.tensors[out].memory_type = m.tensors[inp].memory_type;
            }
        }
        available.extend(op.outputs.iter().copied());
        m.ops.push(op);
    }
    let produced: Vec<usize> = m.ops.iter().flat_map(|o| o.outputs.clone()).collect();
    for &t in &produced {
        if r.chance(0.25) {
            m.outputs.push(t);
        }
    }
    m
}

fn to_json(m: &GModel) -> String {
    let name = |t: usize| m.tensors[t].name.clone();
    let tensors: Vec<Value> = m
        .tensors
        .iter()
        .map(|t| {
            let mut v = match t.bytes {
                Some(b) => json!({"name": t.name, "bytes": b}),
                None => json!({"name": t.name, "dtype": "float32", "shape": ["batch", t.batch_k]}),
            };
            let mut flags = Vec::new();
            if t.no_reuse {
                flags.push("no_reuse");
            }
            if t.zero_copy {
                flags.push("zero_copy");
            }
            if t.atomic_clean {
                flags.push("atomic_clean");
            }
            if !flags.is_empty() {
                v["flags"] = json!(flags);
            }
            if t.memory_type != 0 {
                v["memory_type"] = json!(t.memory_type);
            }
            v
        })
        .collect();
    let ops: Vec<Value> = m
        .ops
        .iter()
        .map(|o| {
            let mut v = json!({
                "name": o.name,
                "inputs": o.inputs.iter().map(|&t| name(t)).collect::<Vec<_>>(),
                "outputs": o.outputs.iter().map(|&t| name(t)).collect::<Vec<_>>(),
                "stream": o.stream,
            });
            if !o.after.is_empty() {
                v["after"] = json!(o
                    .after
                    .iter()
                    .map(|&k| m.ops[k].name.clone())
                    .collect::<Vec<_>>());
            }
            if !o.workspaces.is_empty() {
                v["workspace_bytes"] = json!(o.workspaces);
            }
            let mut attrs = serde_json::Map::new();
            if o.cont_in {
                attrs.insert("continuous_inputs".into(), json!(true));
            }
            if o.cont_out {
                attrs.insert("continuous_outputs".into(), json!(true));
            }
            if o.no_reuse {
                attrs.insert("no_reuse".into(), json!(true));
            }
            if !o.refs.is_empty() {
                let refs: serde_json::Map<String, Value> = o
                    .refs
                    .iter()
                    .map(|&(a, b)| (name(a), json!(name(b))))
                    .collect();
                attrs.insert("ref_outputs".into(), Value::Object(refs));
            }
            if !attrs.is_empty() {
                v["attrs"] = Value::Object(attrs);
            }
            v
        })
        .collect();
    json!({
        "format": "memplan.graph/1", "name": "campaign",
        "tensors": tensors, "ops": ops,
        "inputs": m.inputs.iter().map(|&t| name(t)).collect::<Vec<_>>(),
        "outputs": m.outputs.iter().map(|&t| name(t)).collect::<Vec<_>>(),
    })
    .to_string()
}

/// A CSV row: `(id, lower, upper (exclusive), size, alignment, pin)`.
type Row = (String, u64, u64, u64, u64, Option<u64>);

fn gen_csv(seed: u64) -> Vec<Row> {
    let mut r = Rng(seed ^ 0xC5F);
    let n = 1 + r.below(12);
    let mut pins = 0u64;
    (0..n)
        .map(|i| {
            let lower = r.below64(8);
            let upper = lower + 1 + r.below64(5);
            let size = r.pick(&[0, 1, 3, 8, 24, 100, 4000]);
            let align = r.pick(&[1, 1, 2, 4, 8, 64]);
            // pins far apart (4 KiB each, sizes below that): never two on one byte
            let pin = r.chance(0.15).then(|| {
                pins += 1;
                pins * 8192
            });
            (format!("b{i}"), lower, upper, size, align, pin)
        })
        .collect()
}

fn csv_text(rows: &[Row]) -> String {
    let mut s = String::from("id,lower,upper,size,alignment,offset\n");
    for (id, lo, up, size, al, pin) in rows {
        let pin = pin.map_or(String::new(), |p| p.to_string());
        s.push_str(&format!("{id},{lo},{up},{size},{al},{pin}\n"));
    }
    s
}

// ---- the checker, from docs/formats.md ----------------------------------------------------

/// A buffer as the docs define it.
#[derive(Debug, Clone, Default)]
struct Want {
    name: String,
    size: u64,
    start: u64,
    end: u64,
    gear: Option<u64>,
    memory_type: u32,
    /// Never shares a byte with any buffer of a compatible gear.
    exclusive: bool,
    /// Owns its bytes from step 0.
    atomic: bool,
    /// Steps that touch it: the producer's, the readers', the last.
    accesses: Vec<u64>,
    /// `(group, index)`.
    group: Option<(u64, u64)>,
    align: u64,
    pin: Option<u64>,
}

/// The docs' rules under one option set.
#[derive(Debug, Clone, Copy)]
struct Rules {
    reuse: bool,
    zero_copy_io: bool,
    zero_copy_reuse: bool,
    atomic_centralised: bool,
    ge_padding: bool,
    alignment: u64,
}

impl Rules {
    fn of(o: &PlanOptions) -> Rules {
        Rules {
            reuse: o.reuse,
            zero_copy_io: o.zero_copy_io,
            zero_copy_reuse: o.zero_copy_reuse,
            atomic_centralised: o.atomic_centralised,
            ge_padding: o.padding == Padding::Ge,
            alignment: o.alignment.max(1),
        }
    }
}

/// One merged buffer of the graph before gears (per gear sizes in `sizes`).
#[derive(Debug, Clone, Default)]
struct Merged {
    name: String,
    sizes: BTreeMap<u64, u64>,
    start: u64,
    end: u64,
    io: bool,
    no_reuse: bool,
    zero_copy: bool,
    atomic_clean: bool,
    memory_type: u32,
    accesses: Vec<u64>,
    group: Option<(u64, u64)>,
}

/// The happens-before relation of the steps: `before[a][b]` when step `a` is ordered before
/// step `b` (same stream: step order; across streams: data and `after` edges, transitively).
fn happens_before(m: &GModel) -> Vec<Vec<bool>> {
    let n = m.ops.len();
    let mut producer = BTreeMap::new();
    for (k, o) in m.ops.iter().enumerate() {
        for &t in &o.outputs {
            producer.insert(t, k);
        }
    }
    let mut before = vec![vec![false; n]; n];
    for s in 0..n {
        let mut direct: Vec<usize> = m.ops[s].after.clone();
        direct.extend(
            m.ops[s]
                .inputs
                .iter()
                .filter_map(|t| producer.get(t).copied()),
        );
        if let Some(p) = (0..s).rev().find(|&p| m.ops[p].stream == m.ops[s].stream) {
            direct.push(p);
        }
        for p in direct {
            before[p][s] = true;
            for row in &mut before {
                if row[p] {
                    row[s] = true;
                }
            }
        }
    }
    before
}

/// The buffers the docs say a graph lowers to.
fn expect_graph(m: &GModel, r: &Rules) -> Vec<Want> {
    let steps = m.ops.len() as u64;
    let last = steps - 1;
    let gears: Vec<u64> = if m.gears.is_empty() {
        vec![1]
    } else {
        m.gears.clone()
    };
    let size_at = |t: usize, g: u64| m.tensors[t].bytes.unwrap_or(4 * g * m.tensors[t].batch_k);
    // live ranges per tensor
    let n = m.tensors.len();
    let mut producer: Vec<Option<usize>> = vec![None; n];
    for (k, o) in m.ops.iter().enumerate() {
        for &t in &o.outputs {
            producer[t] = Some(k);
        }
    }
    let mut start = vec![0u64; n];
    let mut end = vec![0u64; n];
    let mut readers: Vec<Vec<u64>> = vec![Vec::new(); n];
    for t in 0..n {
        if let Some(p) = producer[t] {
            start[t] = p as u64;
            end[t] = p as u64;
        }
    }
    for (k, o) in m.ops.iter().enumerate() {
        for &t in &o.inputs {
            end[t] = end[t].max(k as u64);
            readers[t].push(k as u64);
        }
    }
    for &t in &m.outputs {
        end[t] = last;
    }
    // ref outputs: one buffer, named after the tensor written in place (the host)
    let mut host: Vec<usize> = (0..n).collect();
    for o in &m.ops {
        for &(out, inp) in &o.refs {
            host[out] = inp;
        }
    }
    let root = |mut t: usize| {
        while host[t] != t {
            t = host[t];
        }
        t
    };
    let mut merged: BTreeMap<usize, Merged> = BTreeMap::new();
    for t in 0..n {
        let h = root(t);
        let e = merged.entry(h).or_insert_with(|| Merged {
            name: m.tensors[h].name.clone(),
            start: u64::MAX,
            memory_type: m.tensors[h].memory_type,
            ..Merged::default()
        });
        let tt = &m.tensors[t];
        for &g in &gears {
            let s = e.sizes.entry(g).or_insert(0);
            *s = (*s).max(size_at(t, g));
        }
        e.start = e.start.min(start[t]);
        e.end = e.end.max(end[t]);
        e.io |= m.inputs.contains(&t) || m.outputs.contains(&t);
        e.no_reuse |= tt.no_reuse || producer[t].is_some_and(|p| m.ops[p].no_reuse);
        e.zero_copy |= tt.zero_copy;
        e.atomic_clean |= tt.atomic_clean;
        e.accesses.extend(producer[t].map(|p| p as u64));
        e.accesses.extend(readers[t].iter().copied());
    }
    let mut group_of: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    for (k, o) in m.ops.iter().enumerate() {
        for (list, on, side) in [(&o.inputs, o.cont_in, 0), (&o.outputs, o.cont_out, 1)] {
            if on {
                for (i, &t) in list.iter().enumerate() {
                    group_of.insert(t, (k as u64 * 2 + side, i as u64));
                }
            }
        }
    }
    let mut all: Vec<Merged> = merged
        .into_iter()
        .map(|(h, mut b)| {
            b.group = group_of.get(&h).copied();
            b
        })
        .collect();
    for (k, o) in m.ops.iter().enumerate() {
        for (i, &w) in o.workspaces.iter().enumerate() {
            all.push(Merged {
                name: format!("{}/workspace{i}", o.name),
                sizes: gears.iter().map(|&g| (g, w)).collect(),
                start: k as u64,
                end: k as u64,
                no_reuse: o.no_reuse,
                accesses: vec![k as u64],
                ..Merged::default()
            });
        }
    }
    // gears: when some size differs between gears, each buffer but the graph's inputs and
    // outputs is one per gear (`name@Batch_g`); inputs and outputs once at the largest gear's
    // size, and so the other members of a continuous group holding one
    let any_sized = all
        .iter()
        .any(|b| b.sizes.values().collect::<BTreeSet<_>>().len() > 1);
    let split = m.gears.len() > 1 && any_sized;
    let one_run: BTreeSet<u64> = all
        .iter()
        .filter(|b| b.io)
        .filter_map(|b| b.group.map(|g| g.0))
        .collect();
    let mut out = Vec::new();
    for b in &all {
        let per_gear = split && !b.io && !b.group.is_some_and(|g| one_run.contains(&g.0));
        let copies: Vec<Option<u64>> = if per_gear {
            gears.iter().map(|&g| Some(g)).collect()
        } else {
            vec![None]
        };
        for gear in copies {
            let size = match gear {
                Some(g) => b.sizes[&g],
                None => *b.sizes.values().max().unwrap_or(&0),
            };
            let mut accesses = b.accesses.clone();
            accesses.push(b.end);
            accesses.sort_unstable();
            accesses.dedup();
            out.push(Want {
                name: match gear {
                    Some(g) => format!("{}@Batch_{g}", b.name),
                    None => b.name.clone(),
                },
                size,
                start: b.start,
                end: b.end,
                gear,
                memory_type: b.memory_type,
                exclusive: !r.reuse
                    || b.no_reuse
                    || b.zero_copy
                    || (b.io && r.zero_copy_io && !r.zero_copy_reuse),
                atomic: b.atomic_clean && r.atomic_centralised,
                accesses,
                group: b.group,
                align: 1,
                pin: None,
            });
        }
    }
    out
}

fn expect_csv(rows: &[Row]) -> Vec<Want> {
    rows.iter()
        .map(|(id, lo, up, size, al, pin)| Want {
            name: id.clone(),
            size: *size,
            start: *lo,
            end: up - 1,
            align: *al,
            pin: *pin,
            accesses: vec![*lo, up - 1],
            ..Want::default()
        })
        .collect()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What is wrong with `plan` of `problem` against the buffers the docs give, `None` if
/// nothing. `before` is the streams' order (`None`: one sequence of steps).
fn check(
    want: &[Want],
    problem: &Problem,
    plan: &Plan,
    r: &Rules,
    before: Option<&Vec<Vec<bool>>>,
) -> Option<String> {
    let names: BTreeSet<&str> = want.iter().map(|w| w.name.as_str()).collect();
    let have: BTreeSet<&str> = problem.buffers.iter().map(|b| b.name.as_str()).collect();
    if names != have || problem.buffers.len() != want.len() {
        return Some(format!("buffers {have:?}, the docs give {names:?}"));
    }
    if plan.offsets.len() != want.len() || plan.sizes.len() != want.len() {
        return Some("the plan does not place every buffer once".into());
    }
    let index: BTreeMap<&str, usize> = problem
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.as_str(), i))
        .collect();
    let at: Vec<usize> = want.iter().map(|w| index[w.name.as_str()]).collect();
    let off = |k: usize| plan.offsets[at[k]];
    let size = |k: usize| plan.sizes[at[k]];
    let arenas = !plan.arenas.is_empty();
    for (k, w) in want.iter().enumerate() {
        let b = &problem.buffers[at[k]];
        if (b.start, b.end, b.gear) != (w.start, w.end, w.gear) {
            return Some(format!(
                "'{}' lives [{}, {}] gear {:?}, the docs give [{}, {}] gear {:?}",
                w.name, b.start, b.end, b.gear, w.start, w.end, w.gear
            ));
        }
        let least = if r.ge_padding {
            w.size.div_ceil(32) * 32 + 32
        } else {
            w.size
        };
        if size(k) < least {
            return Some(format!(
                "'{}' planned at {} B, needs {least}",
                w.name,
                size(k)
            ));
        }
        let a = r.alignment / gcd(r.alignment, w.align) * w.align;
        if off(k) % a != 0 {
            return Some(format!(
                "'{}' at {} is not a multiple of {a}",
                w.name,
                off(k)
            ));
        }
        if w.pin.is_some_and(|p| p != off(k)) {
            return Some(format!("'{}' at {}, pinned at {:?}", w.name, off(k), w.pin));
        }
        if size(k) > 0 {
            let end = off(k) + size(k);
            let limit = if arenas {
                plan.arenas
                    .iter()
                    .find(|x| x.memory_type == w.memory_type)
                    .map_or(if w.memory_type == 0 { plan.peak } else { 0 }, |x| x.bytes)
            } else {
                plan.peak
            };
            if end > limit {
                return Some(format!(
                    "'{}' ends at {end}, above its arena {limit}",
                    w.name
                ));
            }
        }
    }
    // pairs: no shared byte while both own it; a later buffer takes bytes only after every
    // access of the earlier one happened
    for i in 0..want.len() {
        for j in i + 1..want.len() {
            let (a, b) = (&want[i], &want[j]);
            if size(i) == 0 || size(j) == 0 {
                continue;
            }
            if a.gear.is_some() && b.gear.is_some() && a.gear != b.gear {
                continue;
            }
            if arenas && a.memory_type != b.memory_type {
                continue;
            }
            let bytes = off(i) < off(j) + size(j) && off(j) < off(i) + size(i);
            if !bytes {
                continue;
            }
            let own = |w: &Want| (if w.atomic { 0 } else { w.start }, w.end);
            let ((s1, e1), (s2, e2)) = (own(a), own(b));
            if a.exclusive || b.exclusive || (s1 <= e2 && s2 <= e1) {
                return Some(format!(
                    "'{}' and '{}' share bytes while both own them",
                    a.name, b.name
                ));
            }
            if let Some(before) = before {
                let (first, later) = if e1 < s2 { (a, b) } else { (b, a) };
                let s = usize::try_from(later.start).unwrap_or(usize::MAX);
                if let Some(x) = first.accesses.iter().find(|&&x| {
                    let x = usize::try_from(x).unwrap_or(usize::MAX);
                    !(x < s && before.get(x).is_some_and(|row| row.get(s) == Some(&true)))
                }) {
                    return Some(format!(
                        "'{}' takes bytes of '{}' while step {x} may still access it",
                        later.name, first.name
                    ));
                }
            }
        }
    }
    // continuous groups: adjacent in index order, in every gear's view
    let mut groups: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (k, w) in want.iter().enumerate() {
        if let Some((g, _)) = w.group {
            groups.entry(g).or_default().push(k);
        }
    }
    for members in groups.values() {
        let gears: BTreeSet<Option<u64>> = members.iter().map(|&k| want[k].gear).collect();
        let views: Vec<Option<u64>> = if gears.iter().any(Option::is_some) {
            gears.into_iter().filter(Option::is_some).collect()
        } else {
            vec![None]
        };
        for v in views {
            let mut seq: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&k| want[k].gear.is_none() || want[k].gear == v)
                .collect();
            seq.sort_by_key(|&k| want[k].group.map(|g| g.1));
            for p in seq.windows(2) {
                if off(p[0]) + size(p[0]) != off(p[1]) {
                    return Some(format!(
                        "continuous '{}' and '{}' are not adjacent (gear {v:?})",
                        want[p[0]].name, want[p[1]].name
                    ));
                }
            }
        }
    }
    // the live-set bound of the raw sizes, per gear's view
    let steps = want.iter().map(|w| w.end).max().unwrap_or(0);
    let views: BTreeSet<Option<u64>> = want.iter().map(|w| w.gear).collect();
    let mut bound = 0u64;
    for v in views {
        for s in 0..=steps {
            let live: u64 = want
                .iter()
                .filter(|w| w.gear.is_none() || w.gear == v)
                .filter(|w| w.start <= s && s <= w.end)
                .map(|w| w.size)
                .sum();
            bound = bound.max(live);
        }
    }
    if plan.device_bytes() < bound {
        return Some(format!(
            "the plan holds {} B, below the live-set bound {bound}",
            plan.device_bytes()
        ));
    }
    None
}

// ---- the run -------------------------------------------------------------------------------

fn option_sets() -> Vec<(&'static str, PlanOptions)> {
    let exact = PlanOptions::exact();
    vec![
        ("ge-defaults", PlanOptions::default()),
        ("exact", exact.clone()),
        (
            "exact-io-reuse",
            PlanOptions {
                zero_copy_io: false,
                ..exact.clone()
            },
        ),
        (
            "zero-copy-reuse",
            PlanOptions {
                zero_copy_reuse: true,
                ..PlanOptions::default()
            },
        ),
        (
            "atomic-separate",
            PlanOptions {
                atomic_centralised: false,
                ..exact.clone()
            },
        ),
        (
            "reuse-off",
            PlanOptions {
                reuse: false,
                ..exact.clone()
            },
        ),
        (
            "align-8",
            PlanOptions {
                alignment: 8,
                ..exact
            },
        ),
    ]
}

fn seeds() -> std::ops::Range<u64> {
    let var = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(d)
    };
    let first = var("MEMPLAN_CAMPAIGN_FIRST", 0);
    first..first + var("MEMPLAN_CAMPAIGN_SEEDS", 24)
}

/// Plans `problem` with every strategy under `opts`, checks each plan; findings in `out`.
fn run_all(
    what: &str,
    model: &str,
    problem: &Problem,
    want: &[Want],
    opts: &PlanOptions,
    before: Option<&Vec<Vec<bool>>>,
    out: &mut Vec<String>,
) {
    let r = Rules::of(opts);
    let mut o = opts.clone();
    o.time_limit_ms = 20; // untimed: a node budget, deterministic
    for s in strategies() {
        let plan = match s.run(problem, &o) {
            Ok(p) => p,
            Err(e) => {
                out.push(format!("{what} {}: refused: {e}\n  {model}", s.name));
                continue;
            }
        };
        if let Some(why) = check(want, problem, &plan, &r, before) {
            out.push(format!("{what} {}: {why}\n  {model}", s.name));
        }
        if let Err(v) = validate_with(problem, &plan, &memplan_core::Rules::from(&o)) {
            out.push(format!(
                "{what} {}: the validator refuses it: {}\n  {model}",
                s.name,
                v.describe(problem)
            ));
        }
    }
}

#[test]
fn random_graphs_plan_validly_under_every_strategy() {
    let mut findings = Vec::new();
    let mut planned = 0usize;
    for seed in seeds() {
        let m = gen_graph(seed);
        let text = to_json(&m);
        let loaded = load(
            "campaign.json",
            text.as_bytes(),
            &LoadOptions {
                gears: m.gears.clone(),
                ..LoadOptions::default()
            },
        )
        .unwrap_or_else(|e| {
            panic!("seed {seed}: the generator made a graph load refuses: {e}\n{text}")
        });
        let problem = &loaded.lowered.problem;
        let before = happens_before(&m);
        for (name, opts) in option_sets() {
            let want = expect_graph(&m, &Rules::of(&opts));
            run_all(
                &format!("graph seed {seed} {name}"),
                &text,
                problem,
                &want,
                &opts,
                Some(&before),
                &mut findings,
            );
            planned += 1;
        }
    }
    assert!(planned > 0, "no graph was planned");
    assert!(
        findings.is_empty(),
        "{} finding(s):\n{}",
        findings.len(),
        findings.join("\n")
    );
}

#[test]
fn random_csvs_plan_validly_under_every_strategy() {
    let mut findings = Vec::new();
    for seed in seeds() {
        let rows = gen_csv(seed);
        let text = csv_text(&rows);
        let loaded = load("campaign.csv", text.as_bytes(), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        let want = expect_csv(&rows);
        for (name, opts) in [
            ("exact", PlanOptions::exact()),
            (
                "align-4",
                PlanOptions {
                    alignment: 4,
                    ..PlanOptions::exact()
                },
            ),
        ] {
            run_all(
                &format!("csv seed {seed} {name}"),
                &text.replace('\n', "\\n"),
                &loaded.lowered.problem,
                &want,
                &opts,
                None,
                &mut findings,
            );
        }
    }
    assert!(
        findings.is_empty(),
        "{} finding(s):\n{}",
        findings.len(),
        findings.join("\n")
    );
}

/// The checker is no rubber stamp: a plan that puts two live buffers on one byte, one that
/// breaks a continuous group and one that ignores a no-reuse ref alias are each refused.
#[test]
fn the_checker_refuses_broken_plans() {
    let m = GModel {
        tensors: vec![
            GTensor {
                name: "a".into(),
                bytes: Some(8),
                ..GTensor::default()
            },
            GTensor {
                name: "r".into(),
                bytes: Some(8),
                no_reuse: true,
                ..GTensor::default()
            },
            GTensor {
                name: "b".into(),
                bytes: Some(8),
                ..GTensor::default()
            },
            GTensor {
                name: "c".into(),
                bytes: Some(8),
                ..GTensor::default()
            },
        ],
        ops: vec![
            GOp {
                name: "A".into(),
                outputs: vec![0],
                ..GOp::default()
            },
            GOp {
                name: "R".into(),
                inputs: vec![0],
                outputs: vec![1],
                refs: vec![(1, 0)],
                ..GOp::default()
            },
            GOp {
                name: "B".into(),
                inputs: vec![1],
                outputs: vec![2, 3],
                cont_out: true,
                ..GOp::default()
            },
            GOp {
                name: "C".into(),
                inputs: vec![2, 3],
                ..GOp::default()
            },
        ],
        ..GModel::default()
    };
    let text = to_json(&m);
    let loaded = load("c.json", text.as_bytes(), &LoadOptions::default()).unwrap();
    let p = &loaded.lowered.problem;
    let opts = PlanOptions::exact();
    let r = Rules::of(&opts);
    let want = expect_graph(&m, &r);
    assert_eq!(want.len(), 3, "{want:?}"); // a (with r), b, c
    let before = happens_before(&m);
    let idx = |n: &str| p.buffers.iter().position(|b| b.name == n).unwrap();
    let mk = |a: u64, b: u64, c: u64| {
        let mut offs = vec![0; 3];
        offs[idx("a")] = a;
        offs[idx("b")] = b;
        offs[idx("c")] = c;
        Plan::new("hand", 1, offs, vec![8; 3]).unwrap()
    };
    assert_eq!(check(&want, p, &mk(0, 8, 16), &r, Some(&before)), None);
    // b and c live together on one byte; c not after b
    assert!(check(&want, p, &mk(0, 8, 8), &r, Some(&before)).is_some());
    assert!(check(&want, p, &mk(0, 16, 8), &r, Some(&before)).is_some());
    // b takes a's bytes after a died: a carries r's no_reuse
    assert!(
        check(&want, p, &mk(0, 0, 8), &r, Some(&before)).is_some_and(|w| w.contains("share bytes"))
    );
}
