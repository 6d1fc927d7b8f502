//! Deterministic generators of large, realistic planning problems for the benches
//! (`#[path = "gen/mod.rs"] mod gen;` in each bench). Same spec and seed, same problem, on
//! every machine: only integer arithmetic and SplitMix64. Described in `docs/benchmarks.md`.
//!
//! Specs ([`by_spec`]): `long-short:N:SEED`, `train:N:SEED`, `kv:N:SEED`,
//! `tile:FILE.csv:COPIES:SEED`, and the adversarial shapes of issue 30 (`stream-chain:N`,
//! `nested:N:SEED`, `one-shape:N:MODE:SEED`, `random:N:SEED`). Steps are op steps, sizes bytes, lifetimes inclusive.
// Bench code: counts are far below the truncation limits; not every bench uses every generator.
#![allow(clippy::cast_possible_truncation, dead_code)]

use memplan_core::{Buffer, Problem};

pub mod randwire;

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, seeded, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`0` for `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }
    /// Log-uniform size in `[2^lo, 2^(hi+1))`, rounded up to a multiple of `q`.
    pub fn log_size(&mut self, lo: u64, hi: u64, q: u64) -> u64 {
        let e = self.range(lo, hi);
        let x = (1u64 << e) + self.below(1u64 << e);
        x.div_ceil(q) * q
    }
}

/// Collects buffers with generated names.
struct Out(Vec<Buffer>);

impl Out {
    fn push(&mut self, tag: &str, size: u64, start: u64, end: u64) {
        let name = format!("{tag}{}", self.0.len());
        self.0
            .push(Buffer::new(name, size.max(1), start, end.max(start)));
    }
}

/// The issue-18 shape, "a few long buffers over many short ones": `n` buffers over `n / 2`
/// steps; 16 long-lived buffers (1-64 MiB, each live over 20-100% of the schedule) and
/// `n - 16` short ones (one to three steps, log-uniform 256 B - 2 MiB), two starting per step.
pub fn long_short(n: usize, seed: u64) -> Problem {
    let mut r = Rng(seed ^ 0x4C4F_4E47);
    let steps = (n as u64 / 2).max(2);
    let longs = n.min(16);
    let mut out = Out(Vec::with_capacity(n));
    for _ in 0..longs {
        let len = steps / 5 + r.below(steps - steps / 5);
        let start = r.below(steps - len + 1);
        out.push("long", r.log_size(20, 25, 256), start, start + len - 1);
    }
    for i in 0..n - longs {
        let start = (i as u64 / 2).min(steps - 1);
        let end = (start + r.below(3)).min(steps - 1);
        out.push("s", r.log_size(8, 20, 256), start, end);
    }
    Problem::from_buffers(format!("long-short-{n}-{seed}"), out.0)
}

/// A transformer training step of one pipeline stage with 1F1B scheduling (GPipe/PipeDream
/// style: a few micro-batches in flight, the forward of micro-batch `m + k` between the
/// backwards of `m` and `m + 1`), about `n` buffers. Per seed: the layer count (8-32), model
/// width (512-4096), micro-batches in flight (2-6), micro-batch size, and per micro-batch a
/// sequence length (256-4096 tokens, ragged: packed documents), so activation sizes differ by
/// micro-batch and their lifetimes interleave instead of nesting.
/// * weights (fp16) and Adam moments and the fp32 master copy live over the whole step;
/// * forward, per layer and micro-batch, one op per step: LayerNorm, QKV, scores (`b·h·s²`),
///   softmax, attention output, projection, residual, LayerNorm, FC1, GELU, FC2, residual; the
///   tensors the backward pass reads (LN outputs, QKV, softmax, attention output, FC1, GELU)
///   are held until the backward op of the same layer and micro-batch uses them, the others
///   die at their consumer; layers picked for activation checkpointing (one in three, per
///   seed) keep only their input and recompute the rest at the start of their backward;
/// * backward, layers in reverse: activation gradients live one or two steps, kernel
///   workspaces one step; weight gradients (fp32) are created at the first micro-batch's
///   backward and live to the optimizer;
/// * the optimizer step: one short fp32 update buffer per weight.
pub fn transformer_training(n: usize, seed: u64) -> Problem {
    let mut r = Rng(seed ^ 0x5452_4149_4E00);
    let layers = r.range(8, 32) as usize;
    let d = 512 << r.below(4); // 512..4096
    let heads = (d / 64).max(1);
    let batch = r.range(1, 4);
    let inflight = r.range(2, 6) as usize;
    // forward ~13 tensors, backward ~17 per layer and micro-batch
    let per_micro = layers as u64 * 30;
    let micros = (n as u64).div_ceil(per_micro).max(1) as usize;
    let weights: [u64; 6] = [d * 3 * d, d * d, d * 4 * d, 4 * d * d, d, d];
    let mut out = Out(Vec::new());
    let mut t = 0u64;
    let mut whole: Vec<usize> = Vec::new();
    for _ in 0..layers {
        for &w in &weights {
            for (tag, bytes) in [("w", 2), ("m", 4), ("v", 4), ("master", 4)] {
                whole.push(out.0.len());
                out.push(tag, w * bytes, 0, 0);
            }
        }
    }
    let mut ckpt: Vec<bool> = (0..layers).map(|_| r.below(3) == 0).collect();
    ckpt[0] = false;
    // per micro-batch: (activation bytes, score bytes, tensors each layer's backward reads,
    // the output)
    struct Mb {
        act: u64,
        score: u64,
        saved: Vec<Vec<usize>>,
        x: usize,
    }
    let forward = |out: &mut Out, t: &mut u64, r: &mut Rng| -> Mb {
        let s = 256 << r.below(5); // 256..4096
        let s = s - r.below(s / 4);
        let act = batch * s * d * 2;
        let score = batch * heads * s * s * 2;
        let mut saved = Vec::with_capacity(layers);
        out.push("x", act, *t, *t);
        let mut x = out.0.len() - 1;
        let f = |out: &mut Out, t: &mut u64, tag: &str, size: u64| -> usize {
            *t += 1;
            out.push(tag, size, *t, *t + 1);
            out.0.len() - 1
        };
        for &ck in &ckpt {
            let ln1 = f(out, t, "ln1_", act);
            let qkv = f(out, t, "qkv", 3 * act);
            let _scores = f(out, t, "scores", score);
            let sm = f(out, t, "softmax", score);
            let at = f(out, t, "attn", act);
            let _proj = f(out, t, "proj", act);
            let res1 = f(out, t, "res", act);
            out.0[x].end = out.0[x].end.max(*t);
            let ln2 = f(out, t, "ln2_", act);
            let fc1 = f(out, t, "fc1_", 4 * act);
            let ge = f(out, t, "gelu", 4 * act);
            let _fc2 = f(out, t, "fc2_", act);
            let res2 = f(out, t, "res", act);
            out.0[res1].end = *t;
            saved.push(if ck {
                vec![x]
            } else {
                vec![ln1, qkv, sm, at, ln2, fc1, ge]
            });
            x = res2;
        }
        Mb {
            act,
            score,
            saved,
            x,
        }
    };
    let mut grads: Vec<usize> = Vec::new();
    let mut backward = |out: &mut Out, t: &mut u64, r: &mut Rng, mb: Mb, first: bool| {
        let (act, score) = (mb.act, mb.score);
        *t += 1;
        out.0[mb.x].end = *t;
        out.push("loss_grad", act, *t, *t + 1);
        for l in (0..layers).rev() {
            let mut read = mb.saved[l].clone();
            if ckpt[l] {
                for (tag, size) in [
                    ("re_ln1_", act),
                    ("re_qkv", 3 * act),
                    ("re_softmax", score),
                    ("re_attn", act),
                    ("re_ln2_", act),
                    ("re_fc1_", 4 * act),
                    ("re_gelu", 4 * act),
                ] {
                    *t += 1;
                    out.push(tag, size, *t, *t);
                    read.push(out.0.len() - 1);
                }
            }
            let grad_sizes = [
                act,
                4 * act,
                4 * act,
                act,
                act,
                act,
                score,
                score,
                3 * act,
                act,
            ];
            for (k, &g) in grad_sizes.iter().enumerate() {
                *t += 1;
                out.push("grad", g, *t, *t + 1 + r.below(2));
                if k % 2 == 1 {
                    out.push("ws", g / 2, *t, *t);
                }
                if let Some(&a) = read.get(k * read.len() / grad_sizes.len()) {
                    let b = &mut out.0[a];
                    b.end = b.end.max(*t);
                }
            }
            for &a in &read {
                let b = &mut out.0[a];
                b.end = b.end.max(*t);
            }
            if first {
                for &w in &weights {
                    grads.push(out.0.len());
                    out.push("wgrad", w * 4, *t, *t);
                }
            }
        }
    };
    // 1F1B: `inflight` forwards, then one forward and one backward in turn, then the rest
    let mut queue: std::collections::VecDeque<Mb> = std::collections::VecDeque::new();
    let mut started = 0usize;
    let mut done = 0usize;
    while done < micros {
        while started < micros && queue.len() < inflight {
            queue.push_back(forward(&mut out, &mut t, &mut r));
            started += 1;
        }
        if let Some(mb) = queue.pop_front() {
            backward(&mut out, &mut t, &mut r, mb, done == 0);
            done += 1;
        }
        if started < micros {
            queue.push_back(forward(&mut out, &mut t, &mut r));
            started += 1;
        }
    }
    for &g in &grads {
        t += 1;
        out.push("update", out.0[g].size, t, t);
        out.0[g].end = t;
    }
    for &k in &whole {
        out.0[k].end = t;
    }
    let n = out.0.len();
    Problem::from_buffers(format!("train-{n}-{seed}"), out.0)
}

/// Long-context inference with KV caches and continuous batching, about `n` buffers. Per
/// seed: layers (16-48), width, KV heads; requests arrive over time with a prompt of 4k-128k
/// tokens and 64-2048 generated tokens, at most 8 at once. Per iteration (one step per layer
/// and sub-op): prefill chunks of up to 8192 tokens or one decode token per active request.
/// * each request's KV cache is one buffer per layer for its prompt (allocated at its prefill)
///   plus one per layer for every 512 generated tokens, all live until the request finishes;
/// * per layer and iteration: the hidden state, QKV, attention output (chunked: at most 2048
///   query tokens against the context), MLP hidden and output, each live one or two steps.
pub fn kv_inference(n: usize, seed: u64) -> Problem {
    let mut r = Rng(seed ^ 0x4B56_4341_4348);
    let layers = r.range(16, 48);
    let d = 1024 << r.below(3);
    let kv_heads = 1 << r.range(1, 3);
    let kv_tok = 2 * kv_heads * 128 * 2; // K and V, head dim 128, fp16, per layer
    let chunk = 512u64;
    struct Req {
        prompt: u64,
        done_prompt: u64,
        out: u64,
        gen: u64,
        kv: Vec<usize>,
    }
    let mut out = Out(Vec::new());
    let mut active: Vec<Req> = Vec::new();
    let mut t = 0u64;
    while out.0.len() < n {
        // arrivals
        while active.len() < 8 && r.below(3) != 0 {
            active.push(Req {
                prompt: 4096 << r.below(6), // 4k..128k
                done_prompt: 0,
                out: 64 << r.below(6),
                gen: 0,
                kv: Vec::new(),
            });
        }
        // this iteration's tokens: prefill chunks first, then decodes
        let mut tokens = 0u64;
        let mut budget = 8192u64;
        let start = t + 1;
        for q in &mut active {
            if q.done_prompt < q.prompt {
                let c = budget.min(q.prompt - q.done_prompt);
                if c == 0 {
                    continue;
                }
                if q.done_prompt == 0 {
                    for l in 0..layers {
                        q.kv.push(out.0.len());
                        out.push("kv_prompt", q.prompt * kv_tok, start + 3 * l, start);
                    }
                }
                q.done_prompt += c;
                budget -= c;
                tokens += c;
            } else {
                if q.gen % chunk == 0 {
                    for l in 0..layers {
                        q.kv.push(out.0.len());
                        out.push("kv_gen", chunk * kv_tok, start + 3 * l, start);
                    }
                }
                q.gen += 1;
                tokens += 1;
            }
        }
        let q_tok = tokens.min(2048);
        for _ in 0..layers {
            t += 1;
            out.push("hidden", tokens * d * 2, t, t + 2);
            out.push("qkv", tokens * (d + 2 * kv_heads * 128) * 2, t, t);
            t += 1;
            out.push("attn", q_tok * d * 4, t, t); // scores, chunked, fp32
            out.push("attn_out", tokens * d * 2, t, t + 1);
            t += 1;
            out.push("mlp", tokens * 4 * d * 2, t, t);
            out.push("mlp_out", tokens * d * 2, t, t + 1);
        }
        t += 1;
        out.push("logits", active.len().max(1) as u64 * 32_000 * 4, t, t);
        // finished requests release their caches
        active.retain(|q| {
            let finished = q.done_prompt >= q.prompt && q.gen >= q.out;
            if finished {
                for &k in &q.kv {
                    out.0[k].end = t;
                }
            }
            !finished
        });
    }
    for q in &active {
        for &k in &q.kv {
            out.0[k].end = t;
        }
    }
    let n = out.0.len();
    Problem::from_buffers(format!("kv-{n}-{seed}"), out.0)
}

/// `copies` copies of `base` (pipelined micro-batches of a real trace): copy `k` starts a
/// random 2-30% of the base schedule after copy `k - 1`, and its sizes are scaled by
/// 7/8, 1 or 9/8 (rounded up to 64 bytes), so the copies overlap in time and differ.
pub fn tiled(base: &Problem, copies: usize, seed: u64) -> Problem {
    let mut r = Rng(seed ^ 0x5449_4C45);
    let steps = base
        .buffers
        .iter()
        .map(|b| b.end.saturating_add(1))
        .max()
        .unwrap_or(1);
    let mut out = Out(Vec::with_capacity(base.buffers.len() * copies));
    let mut shift = 0u64;
    for k in 0..copies {
        if k > 0 {
            shift += steps / 50 + r.below(steps * 7 / 25);
        }
        let scale = r.range(7, 9);
        for b in &base.buffers {
            let size = (b.size * scale / 8).div_ceil(64) * 64;
            out.push("c", size, b.start + shift, b.end + shift);
        }
    }
    Problem::from_buffers(format!("tile-{}-x{copies}-{seed}", base.name), out.0)
}

/// The problem a spec names, or why not.
pub fn by_spec(spec: &str) -> Result<Problem, String> {
    let parts: Vec<&str> = spec.split(':').collect();
    let num = |k: usize, d: u64| -> u64 { parts.get(k).and_then(|x| x.parse().ok()).unwrap_or(d) };
    match parts[0] {
        "long-short" => Ok(long_short(num(1, 100_000) as usize, num(2, 1))),
        "train" => Ok(transformer_training(num(1, 20_000) as usize, num(2, 1))),
        "kv" => Ok(kv_inference(num(1, 20_000) as usize, num(2, 1))),
        "tile" => {
            let file = parts.get(1).ok_or("tile:FILE.csv:COPIES:SEED")?;
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let name = std::path::Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let base = memplan_core::import::csv::parse(&name, &text).map_err(|e| e.to_string())?;
            Ok(tiled(&base, num(2, 10) as usize, num(3, 1)))
        }
        "stream-chain" => Ok(stream_chain(num(1, 10_000) as usize)),
        "nested" => Ok(nested(num(1, 100_000) as usize, num(2, 1))),
        "one-shape" => {
            let mode = match parts.get(2).copied().unwrap_or("both") {
                "size" => OneShape::Size,
                "range" => OneShape::Range,
                "both" => OneShape::Both,
                m => return Err(format!("one-shape:N:size|range|both:SEED, not '{m}'")),
            };
            Ok(one_shape(num(1, 100_000) as usize, mode, num(3, 1)))
        }
        "random" => Ok(random(num(1, 100_000) as usize, num(2, 1))),
        other => Err(format!("unknown generator '{other}'")),
    }
}

/// xorshift64*: the generator `network` has always used (its problems stay the same).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A network-like problem of `n` buffers over `n` steps: one tensor produced per step; most
/// are read by the next op or two, some by ops a few steps later (branches), a few are long
/// skip connections, a handful live to the end (graph outputs, caches). Sizes are log-uniform
/// from 256 B to 4 MiB, a third of them drawn from a small palette of repeated shapes.
pub fn network(n: usize, seed: u64) -> Problem {
    let mut rng = XorShift(seed.max(1));
    let palette: Vec<u64> = (0..16).map(|_| 64 << rng.below(16)).collect();
    let steps = n as u64;
    let bufs = (0..n)
        .map(|i| {
            let size = if rng.below(3) == 0 {
                palette[usize::try_from(rng.below(16)).unwrap_or(0)]
            } else {
                let exp = 8 + rng.below(15); // 2^8 ..= 2^22
                ((1u64 << exp) + rng.below(1 << exp)) / 64 * 64
            };
            let r = rng.below(1000);
            let len = match r {
                0..=99 => 0,                      // workspace: one step
                100..=699 => 1 + rng.below(2),    // read by the next op or two
                700..=899 => 3 + rng.below(14),   // branches
                900..=979 => 17 + rng.below(184), // skip connections
                980..=997 => 201 + rng.below(1800),
                _ => steps, // lives to the end
            };
            let start = i as u64;
            let end = (start + len).min(steps - 1);
            Buffer::new(format!("t{i}"), size, start, end)
        })
        .collect();
    Problem::from_buffers(format!("generated-{n}"), bufs)
}

/// Issue 30's "a chain of ops each on its own stream": op `k` runs on stream `k` and waits for
/// op `k - 1`; tensor `k` (log-uniform 256 B - 1 MiB, a fixed sequence) is produced by op `k`
/// and read by op `k + 1` on the next stream, so every tensor is read across streams and
/// every op depends on all earlier ones through the chain.
pub fn stream_chain(n: usize) -> Problem {
    let mut r = Rng(0x5354_5245_414D);
    let n = n.max(2);
    let mut buffers = Vec::with_capacity(n);
    let mut ops = Vec::with_capacity(n);
    for k in 0..n {
        let end = (k + 1).min(n - 1) as u64;
        let mut b = Buffer::new(format!("t{k}"), r.log_size(8, 19, 64), k as u64, end);
        b.stream = k as u32;
        b.producer = Some(k as u64);
        if end > k as u64 {
            b.readers = vec![end];
        }
        buffers.push(b);
        ops.push(memplan_core::OpInfo {
            name: format!("op{k}"),
            op_type: "Add".into(),
            stream: k as u32,
            preds: if k > 0 { vec![k as u64 - 1] } else { vec![] },
            inputs: if k > 0 {
                vec![memplan_core::BufferId::new(k - 1)]
            } else {
                vec![]
            },
        });
    }
    let mut p = Problem::from_buffers(format!("stream-chain-{n}"), buffers);
    p.ops = ops;
    p
}

/// Issue 30's nested lifetimes: buffer `i` of `n` lives over `[i, 2n - 1 - i]` (each inside
/// the previous one, all live at step `n - 1`), sizes log-uniform 256 B - 1 MiB.
pub fn nested(n: usize, seed: u64) -> Problem {
    let mut r = Rng(seed ^ 0x4E45_5354);
    let last = 2 * n as u64 - 1;
    let bufs = (0..n as u64)
        .map(|i| Buffer::new(format!("n{i}"), r.log_size(8, 19, 64), i, last - i))
        .collect();
    Problem::from_buffers(format!("nested-{n}-{seed}"), bufs)
}

/// What [`one_shape`] holds equal.
#[derive(Clone, Copy)]
pub enum OneShape {
    /// Every buffer 4096 B; live ranges as [`random`]'s.
    Size,
    /// Every buffer live over the whole schedule `[0, 0]` (all live at once); sizes as
    /// [`random`]'s.
    Range,
    /// Every buffer 4096 B and live over `[0, 0]`.
    Both,
}

/// Issue 30's "a CSV of one shape": `n` buffers with equal sizes, equal live ranges, or both.
pub fn one_shape(n: usize, mode: OneShape, seed: u64) -> Problem {
    let base = random(n, seed);
    let bufs = base
        .buffers
        .into_iter()
        .map(|mut b| {
            if matches!(mode, OneShape::Size | OneShape::Both) {
                b.size = 4096;
            }
            if matches!(mode, OneShape::Range | OneShape::Both) {
                (b.start, b.end) = (0, 0);
            }
            b
        })
        .collect();
    let tag = match mode {
        OneShape::Size => "size",
        OneShape::Range => "range",
        OneShape::Both => "both",
    };
    Problem::from_buffers(format!("one-shape-{tag}-{n}-{seed}"), bufs)
}

/// A random CSV-like problem (issue 29's "random 10^6-row CSV"): `n` buffers over `n / 4`
/// steps, each starting at a uniform step and live 1-64 steps (one in 100 up to a tenth of the
/// schedule), sizes log-uniform 64 B - 1 MiB.
pub fn random(n: usize, seed: u64) -> Problem {
    let mut r = Rng(seed ^ 0x5241_4E44);
    let steps = (n as u64 / 4).max(2);
    let bufs = (0..n)
        .map(|i| {
            let len = if r.below(100) == 0 {
                r.range(1, (steps / 10).max(1))
            } else {
                r.range(1, 64)
            };
            let start = r.below(steps);
            let end = (start + len - 1).min(steps - 1);
            Buffer::new(format!("r{i}"), r.log_size(6, 19, 64), start, end)
        })
        .collect();
    Problem::from_buffers(format!("random-{n}-{seed}"), bufs)
}

/// The problem as a MiniMalloc CSV (`id,lower,upper,size`; `upper` exclusive), for the CLI.
pub fn to_csv(p: &Problem) -> String {
    let mut s = String::from("id,lower,upper,size\n");
    for (i, b) in p.buffers.iter().enumerate() {
        s += &format!("{i},{},{},{}\n", b.start, b.end + 1, b.size);
    }
    s
}
