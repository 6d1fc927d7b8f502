//! The advisor (`memplan advise MODEL`): what it would take to need less. Every lever that
//! changes the problem or its placement, alone and all together: op order, fusion, views,
//! in-place ops, alignment, padding, graph I/O in the arena, the strategy. Each row is a plan
//! made exactly as `memplan plan MODEL FLAGS` makes it (the same load pipeline, the same
//! strategy run), so its peak is the figure the CLI prints for those flags; the row says what
//! the runtime must do for the saving to be real. Rows are sorted by saving, largest first.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::rewrite::{Fuse, InPlace};
use crate::graph::ScheduleOrder;
use crate::import::load::{load, Format, LoadOptions};
use crate::plan::{Padding, PlanOptions};

/// One lever (or all of them) and what it gives.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Lever {
    /// Short name: `op order`, `fuse pad,quantize`, `in-place depthwise`, `all combined`...
    pub name: String,
    /// The `memplan plan` flags that give this row's plan (strategy included).
    pub flags: Vec<String>,
    /// What the runtime must do for the saving to be real.
    pub requires: String,
    /// Peak of the plan, bytes (the CLI's `peak_bytes`).
    pub peak: u64,
    /// Live-set lower bound of the problem, bytes.
    pub lower_bound: u64,
    /// Baseline peak minus this peak, bytes (negative: the lever costs memory).
    pub saving_bytes: i64,
    /// The saving in per cent of the baseline peak.
    pub saving_percent: f64,
}

/// The advisor's answer for one model.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Advice {
    /// The baseline: the model planned with the settings given, `strategy`.
    pub baseline: Lever,
    /// Every lever alone, then all combined, sorted by saving (largest first).
    pub levers: Vec<Lever>,
    /// Levers that do not apply to this input, with why (`op order: a buffer list has no ops`).
    pub skipped: Vec<String>,
}

/// One configuration tried.
#[derive(Clone)]
struct Setting {
    load: LoadOptions,
    plan: PlanOptions,
    strategy: String,
    flags: Vec<String>,
}

fn s(x: &str) -> String {
    x.to_string()
}

/// The baseline strategy when none is given: for a TFLite model `tflm-greedy`, TFLM's own
/// planner (what the device runs unless a plan is exported into the model), so that every
/// saving is one over what TFLM does; otherwise `portfolio`, the best of the heuristics.
pub fn default_strategy(format: Format) -> &'static str {
    match format {
        Format::Tflite => "tflm-greedy",
        Format::GraphJson | Format::Csv | Format::Onnx => "portfolio",
    }
}

/// Runs the advisor on the file `name` with `bytes`, the graph loaded with `base` (dims,
/// sizes...), planned with `strategy` (a registry name; anytime strategies are refused, their
/// figures depend on the clock) under the format's default plan options (as the CLI's).
///
/// A TFLite model is advised for TFLM: only the levers a TFLM user can apply (op order, fused
/// activations, another plan exported into the model), each saying what it takes; alignment
/// below TFLM's 16 B, views, in-place ops and TinyEngine's fusions are listed as skipped, with
/// why ([`default_strategy`] gives TFLM's own planner as the baseline).
///
/// # Errors
/// The baseline's load and plan errors; [`crate::ErrorKind::BadOption`] for an anytime or
/// unknown strategy.
pub fn advise(name: &str, bytes: &[u8], base: &LoadOptions, strategy: &str) -> Result<Advice> {
    let info = crate::strategy::find(strategy)?;
    if info.caps.anytime {
        return Err(Error::bad_option(alloc::format!(
            "advise -s {strategy}: an anytime strategy's figures depend on its clock; choose a heuristic (portfolio, greedy-size-best-fit...)"
        )));
    }
    let first = load(name, bytes, base)?;
    let graph = first.graph.is_some();
    let plan = match first.format {
        Format::Csv => PlanOptions::exact(),
        f => f.default_plan_options(),
    };
    let baseline_setting = Setting {
        load: base.clone(),
        plan: plan.clone(),
        strategy: s(strategy),
        flags: alloc::vec![s("--strategy"), s(strategy)],
    };
    let baseline = run(
        name,
        bytes,
        &baseline_setting,
        "baseline",
        if first.format == Format::Tflite && strategy == "tflm-greedy" {
            "nothing: TFLM's own planner on the file as it is"
        } else {
            "nothing: the settings given"
        },
        None,
    )?;
    let mut skipped = Vec::new();
    let mut rows: Vec<(Setting, &str, &str)> = Vec::new();
    let with = |f: &dyn Fn(&mut Setting), extra: &[&str]| {
        let mut st = baseline_setting.clone();
        f(&mut st);
        st.flags.extend(extra.iter().map(|x| s(x)));
        st
    };
    let tflm = first.format == Format::Tflite;
    if graph {
        if base.gears.is_empty() {
            rows.push((
                with(&|st| st.load.order = Some(ScheduleOrder::Memory), &["--schedule", "memory"]),
                "op order",
                if tflm {
                    "TFLM runs the operators in the order the file lists them: the model rewritten with its operators in this order (the plan file's problem.op_order); memplan does not rewrite it"
                } else {
                    "runs the ops in the order given (the plan file's problem.op_order); any runtime that executes a fixed op list (TFLM, TinyEngine, ONNX Runtime sequential)"
                },
            ));
        } else {
            skipped.push(s("op order: gears share one order (--batch)"));
        }
    }
    let fuse_activation = || {
        with(
            &|st| {
                st.load.fuse = Fuse {
                    activation: true,
                    ..Fuse::default()
                }
            },
            &["--fuse", "activation"],
        )
    };
    if graph && tflm {
        // what TFLM can do: activations fused by the converter (its kernels apply a
        // fused_activation_function); no aliasing, no padding inside a consumer, 16 B sizes
        rows.push((
            fuse_activation(),
            "fuse activation",
            "the model converted with each activation op fused into its producer's fused_activation_function (TFLM's kernels apply it; TFLM does not fuse at run time)",
        ));
        skipped.extend([
            s("fuse pad,quantize: TFLM's kernels do not pad inside their consumer (TinyEngine's do: memplan plan --fuse pad,quantize)"),
            s("views: TFLM plans every tensor in its own buffer, a RESHAPE's output too (its kernel copies into it)"),
            s("in-place elementwise, in-place depthwise: TFLM's kernels write every output to its own buffer"),
            s("alignment 1: TFLM rounds every buffer to 16 B (MicroArenaBufferAlignment())"),
        ]);
    } else if graph {
        let fuse_pq = Fuse {
            pad: true,
            quantize: true,
            activation: false,
        };
        rows.push((
            with(&|st| st.load.fuse = fuse_pq, &["--fuse", "pad,quantize"]),
            "fuse pad,quantize",
            "pads inside the consumer's kernel and takes the input already quantized (TinyEngine)",
        ));
        rows.push((
            fuse_activation(),
            "fuse activation",
            "applies activations in the producing kernel (TFLite fused activations, ONNX Runtime Conv+activation fusion)",
        ));
        rows.push((
            with(&|st| st.load.alias_views = true, &["--alias-views"]),
            "views",
            "lets Reshape/Flatten/Squeeze/Unsqueeze/Identity alias their input (ONNX Runtime .Alias, TFLite in-place reshape)",
        ));
        rows.push((
            with(
                &|st| {
                    st.load.in_place = InPlace {
                        elementwise: true,
                        depthwise: false,
                    }
                },
                &["--in-place", "elementwise"],
            ),
            "in-place elementwise",
            "lets element-wise kernels write over a dying input of the same size (ONNX Runtime MayInplace, TFLite)",
        ));
        rows.push((
            with(
                &|st| {
                    st.load.in_place = InPlace {
                        elementwise: false,
                        depthwise: true,
                    }
                },
                &["--in-place", "depthwise"],
            ),
            "in-place depthwise",
            "has depthwise convolution kernels that write over their input (TinyEngine)",
        ));
    } else {
        skipped.push(s(
            "op order, fusion, views, in-place: a buffer list has no graph",
        ));
    }
    if plan.alignment > 1 && !tflm {
        rows.push((
            with(&|st| st.plan.alignment = 1, &["--align", "1"]),
            "alignment 1",
            "accepts tensors at any byte offset (no alignment of buffers)",
        ));
    }
    if plan.padding == Padding::Ge {
        rows.push((
            with(
                &|st| st.plan.padding = Padding::None,
                &["--padding", "none"],
            ),
            "padding none",
            "allocates each tensor at its exact size (no GE ceil32 + 32)",
        ));
    }
    if plan.zero_copy_io {
        rows.push((
            with(&|st| st.plan.zero_copy_io = false, &["--io-reuse"]),
            "graph I/O in the arena",
            "copies graph inputs and outputs in and out of the arena instead of zero-copy user buffers",
        ));
    }
    let mut levers: Vec<Lever> = Vec::new();
    for (st, name_, req) in &rows {
        levers.push(run(name, bytes, st, name_, req, Some(baseline.peak))?);
    }
    // the strategy: the best heuristic of the registry on the baseline problem
    if let Some(best) = best_strategy(name, bytes, &baseline_setting)? {
        let mut st = baseline_setting.clone();
        st.flags = alloc::vec![s("--strategy"), best.clone()];
        st.strategy = best;
        levers.push(run(
            name,
            bytes,
            &st,
            "strategy",
            if tflm {
                "TFLM placing the tensors at this plan's offsets: the model with the plan as its OfflineMemoryAllocation metadata (memplan plan MODEL --strategy NAME --emit-tflite OUT.tflite; scratch buffers TFLM places online can raise the head, which the export says)"
            } else {
                "nothing: another placement of the same tensors"
            },
            Some(baseline.peak),
        )?);
    } else {
        skipped.push(alloc::format!(
            "strategy: no heuristic of the registry beats {strategy} here"
        ));
    }
    // every lever at once: levers taken greedily, largest saving alone first, each kept when
    // it lowers the peak of those kept before it (one that saves nothing alone may save after
    // another, as in-place depthwise after fusing PAD)
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(levers[i].saving_bytes));
    let mut all = baseline_setting.clone();
    let mut all_peak = baseline.peak;
    let mut any = false;
    for i in order {
        let st = &rows[i].0;
        let mut next = all.clone();
        next.load.order = st.load.order.or(next.load.order);
        next.load.fuse.pad |= st.load.fuse.pad;
        next.load.fuse.quantize |= st.load.fuse.quantize;
        next.load.fuse.activation |= st.load.fuse.activation;
        next.load.alias_views |= st.load.alias_views;
        next.load.in_place.elementwise |= st.load.in_place.elementwise;
        next.load.in_place.depthwise |= st.load.in_place.depthwise;
        next.plan.alignment = next.plan.alignment.min(st.plan.alignment);
        if st.plan.padding == Padding::None {
            next.plan.padding = Padding::None;
        }
        next.plan.zero_copy_io &= st.plan.zero_copy_io;
        let Ok(l) = run(name, bytes, &next, "", "", None) else {
            continue;
        };
        if l.peak < all_peak {
            all_peak = l.peak;
            all = next;
            any = true;
        }
    }
    if let Some(best) = best_strategy(name, bytes, &all)? {
        any |= best != all.strategy;
        all.strategy = best;
    }
    if any {
        all.flags = combined_flags(&all, &plan);
        levers.push(run(
            name,
            bytes,
            &all,
            "all combined",
            "everything the levers in its flags require",
            Some(baseline.peak),
        )?);
    }
    levers.sort_by_key(|l| core::cmp::Reverse(l.saving_bytes));
    Ok(Advice {
        baseline,
        levers,
        skipped,
    })
}

/// The flags of a combined setting.
fn combined_flags(st: &Setting, base: &PlanOptions) -> Vec<String> {
    let mut f = alloc::vec![s("--strategy"), st.strategy.clone()];
    if st.load.order == Some(ScheduleOrder::Memory) {
        f.extend([s("--schedule"), s("memory")]);
    }
    if st.load.fuse.any() {
        f.extend([s("--fuse"), st.load.fuse.names()]);
    }
    if st.load.alias_views {
        f.push(s("--alias-views"));
    }
    if st.load.in_place.any() {
        f.extend([s("--in-place"), st.load.in_place.names()]);
    }
    if st.plan.alignment != base.alignment {
        f.extend([s("--align"), st.plan.alignment.to_string()]);
    }
    if st.plan.padding != base.padding {
        f.extend([s("--padding"), s("none")]);
    }
    if !st.plan.zero_copy_io && base.zero_copy_io {
        f.push(s("--io-reuse"));
    }
    f
}

/// The heuristic of the registry (not anytime, not `no-reuse`) with the lowest peak under
/// `st`; ties to `st`'s own strategy, then to the first in registry order.
fn best_strategy(name: &str, bytes: &[u8], st: &Setting) -> Result<Option<String>> {
    let loaded = load(name, bytes, &st.load)?;
    let own = crate::strategy::plan(&loaded.lowered.problem, &st.strategy, &st.plan)?.peak;
    let mut best: Option<(u64, &str)> = Some((own, st.strategy.as_str()));
    for info in crate::strategy::strategies() {
        if info.caps.anytime || info.name == "no-reuse" {
            continue;
        }
        let Ok(p) = info.run(&loaded.lowered.problem, &st.plan) else {
            continue;
        };
        if best.is_none_or(|(b, _)| p.peak < b) {
            best = Some((p.peak, info.name));
        }
    }
    Ok(best.map(|(_, n)| s(n)).filter(|n| *n != st.strategy))
}

fn run(
    name: &str,
    bytes: &[u8],
    st: &Setting,
    lever: &str,
    requires: &str,
    baseline: Option<u64>,
) -> Result<Lever> {
    let loaded = load(name, bytes, &st.load).map_err(|e| e.at(alloc::format!("lever {lever}")))?;
    let problem = &loaded.lowered.problem;
    let plan = crate::strategy::plan(problem, &st.strategy, &st.plan)
        .map_err(|e| e.at(alloc::format!("lever {lever}")))?;
    let lb = crate::bound::lower_bound(problem)?.lower_bound;
    let base = baseline.unwrap_or(plan.peak);
    let saving = i128::from(base) - i128::from(plan.peak);
    Ok(Lever {
        name: s(lever),
        flags: st.flags.clone(),
        requires: s(requires),
        peak: plan.peak,
        lower_bound: lb,
        saving_bytes: i64::try_from(saving).unwrap_or(if saving < 0 { i64::MIN } else { i64::MAX }),
        saving_percent: if base == 0 {
            0.0
        } else {
            saving as f64 * 100.0 / base as f64
        },
    })
}
