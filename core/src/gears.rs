//! Dynamic batch ("gears"): one graph with a symbolic batch dim, planned for several batch
//! sizes at once. As GE's `MultiBatchClonePass` clones the graph per gear, every tensor except
//! the graph's inputs and outputs is copied once per gear and labelled with it
//! (GE: `_batch_label = "Batch_N"`), also those whose size does not depend on the batch; graph
//! inputs and outputs are one buffer each at the largest gear's size. Only one gear runs at a time, so buffers of different gears may overlap
//! ([`crate::Buffer::conflicts`]), and a plan's region costs the largest gear, not the sum.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::graph::{Bindings, Dim, Graph, Lowered};
use crate::plan::{Plan, PlanOptions};
use crate::problem::{Buffer, BufferKind, Problem};

/// The batch dim to use: `name` if given, else the leading symbolic dim of the first graph
/// input that has one.
///
/// # Errors
/// [`crate::ErrorKind::Invalid`] when no graph input has a symbolic dim, or `name` is not a
/// symbol of the graph.
pub fn batch_dim(graph: &Graph, name: Option<&str>) -> Result<String> {
    if let Some(n) = name {
        if graph.symbols().iter().any(|s| s == n) {
            return Ok(String::from(n));
        }
        return Err(Error::invalid(alloc::format!(
            "batch dim '{n}' is not a symbolic dim of the graph (symbols: {})",
            graph.symbols().join(", ")
        )));
    }
    graph
        .inputs
        .iter()
        .filter_map(|&t| graph.tensors[t].shape.as_ref())
        .find_map(|shape| {
            shape.iter().find_map(|d| match d {
                Dim::Sym(s) => Some(s.clone()),
                Dim::Known(_) => None,
            })
        })
        .ok_or_else(|| {
            Error::invalid(
                "no graph input has a symbolic dim to use as the batch; name one with --batch-dim",
            )
        })
}

/// Lowers `graph` once per gear (`batch_dim` bound to each value in `gears`, the other dims
/// from `bindings`) and merges the results: when some size differs between gears, every buffer
/// but the graph's inputs and outputs becomes one buffer per gear named `NAME@Batch_N` with
/// `gear = Some(N)` (GE clones the graph per gear); inputs and outputs appear once, without a
/// gear, at the largest gear's size. Every gear shares the schedule, so live ranges are those of the graph.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for an empty or zero gear list; errors of
/// [`Graph::lower`].
pub fn expand(
    graph: &Graph,
    bindings: &Bindings,
    batch_dim: &str,
    gears: &[u64],
) -> Result<Lowered> {
    expand_with(gears, batch_dim, |g| {
        let mut b = bindings.clone();
        b.insert(String::from(batch_dim), g);
        graph.lower(&b)
    })
}

/// [`expand`] with the per-gear lowering supplied by the caller, for importers that must see
/// the batch bound while inferring shapes (an ONNX `Slice` over a symbolic batch, say): `lower`
/// is called once per gear and must return the same buffers in the same order every time.
///
/// # Errors
/// [`crate::ErrorKind::BadOption`] for an empty or zero gear list; errors of `lower`, named
/// by gear; [`crate::ErrorKind::Invalid`] if two gears lower to different buffer lists.
pub fn expand_with(
    gears: &[u64],
    batch_dim: &str,
    lower: impl Fn(u64) -> Result<Lowered>,
) -> Result<Lowered> {
    let mut gears: Vec<u64> = gears.to_vec();
    gears.sort_unstable();
    gears.dedup();
    if gears.is_empty() || gears.contains(&0) {
        return Err(Error::bad_option(
            "gears must be a non-empty list of batch sizes >= 1",
        ));
    }
    let lowered: Vec<Lowered> = gears
        .iter()
        .map(|&g| lower(g).map_err(|e| e.at(alloc::format!("gear {g}"))))
        .collect::<Result<_>>()?;
    let first = &lowered[0];
    let n = first.problem.buffers.len();
    for (l, g) in lowered.iter().zip(&gears) {
        let same = l.problem.buffers.len() == n
            && l.problem
                .buffers
                .iter()
                .zip(&first.problem.buffers)
                .all(|(a, b)| a.name == b.name && a.start == b.start && a.end == b.end);
        if !same {
            return Err(Error::invalid(alloc::format!(
                "gear {g} lowers to other tensors or lifetimes than gear {}: the graph's structure depends on '{batch_dim}'",
                gears[0]
            )));
        }
    }
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut tensor_of = Vec::new();
    // Shared buffers first, then each gear's copies, gear by gear.
    let sized = |i: usize| {
        lowered
            .iter()
            .any(|l| l.problem.buffers[i].size != first.problem.buffers[i].size)
    };
    let any_sized = (0..n).any(sized);
    // GE MultiBatchClonePass clones the whole graph per gear and labels every node, so every
    // tensor inside a gear is per gear (even one whose size does not depend on the batch),
    // except the root graph's inputs and outputs: one zero-copy tensor each, at the largest
    // gear's size (ge-memory-planning.md §8.10).
    let io = |b: &Buffer| matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput);
    let depends: Vec<bool> = (0..n)
        .map(|i| any_sized && gears.len() > 1 && !io(&first.problem.buffers[i]))
        .collect();
    for i in (0..n).filter(|&i| !depends[i]) {
        let mut b = first.problem.buffers[i].clone();
        b.size = lowered
            .iter()
            .map(|l| l.problem.buffers[i].size)
            .max()
            .unwrap_or(b.size);
        buffers.push(b);
        tensor_of.push(first.tensor_of[i]);
    }
    for (l, &g) in lowered.iter().zip(&gears) {
        for i in (0..n).filter(|&i| depends[i]) {
            let mut b = l.problem.buffers[i].clone();
            b.name = alloc::format!("{}@Batch_{g}", b.name);
            b.gear = Some(g);
            buffers.push(b);
            tensor_of.push(l.tensor_of[i]);
        }
    }
    let mut warnings = first.warnings.clone();
    if gears.len() > 1 && !depends.iter().any(|&d| d) {
        warnings.push(alloc::format!(
            "no tensor size depends on '{batch_dim}': every gear is the same"
        ));
    }
    let problem = Problem {
        buffers,
        ..first.problem.clone()
    };
    Ok(Lowered {
        problem,
        schedule: first.schedule.clone(),
        tensor_of,
        warnings,
    })
}

/// One gear's figures in a plan of an expanded problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GearReport {
    /// Batch size.
    pub batch: u64,
    /// Bytes used when this gear runs: the largest `offset + size` over the ungeared buffers
    /// and this gear's.
    pub peak_bytes: u64,
    /// Live-set lower bound of this gear (ungeared buffers plus this gear's), raw sizes.
    pub lower_bound_bytes: u64,
    /// Peak of this gear planned alone with the same strategy.
    pub alone_bytes: u64,
}

/// The overlay of gears in a plan: per-gear figures, the overlaid total, and what laying the
/// gears side by side would cost.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OverlayReport {
    /// Per gear, ascending.
    pub gears: Vec<GearReport>,
    /// The plan's peak: the region the gears share.
    pub overlay_bytes: u64,
    /// Sum over gears of each gear planned alone: the cost without overlaying.
    pub side_by_side_bytes: u64,
    /// `side_by_side_bytes - overlay_bytes` (0 if the overlay is larger).
    pub saving_bytes: u64,
}

/// The sub-problem of one gear: ungeared buffers plus that gear's. Returns it with the
/// original indices of its buffers.
pub fn gear_problem(problem: &Problem, gear: u64) -> (Problem, Vec<usize>) {
    let idx: Vec<usize> = (0..problem.buffers.len())
        .filter(|&i| problem.buffers[i].gear.is_none_or(|g| g == gear))
        .collect();
    let buffers = idx.iter().map(|&i| problem.buffers[i].clone()).collect();
    (
        Problem {
            buffers,
            ..problem.clone()
        },
        idx,
    )
}

/// Plans a problem with gears by overlaying per-gear plans at a common base, as GE overlays
/// gears: the largest gear (largest sum of sizes, GE `GetMaxBatchAllMemorySize`) is planned
/// first with the ungeared buffers; every other gear is then planned with the ungeared buffers
/// pinned where the largest gear put them. Each gear's region starts at offset 0, so the arena
/// costs the largest gear's region, not the sum. Problems with fewer than two gears are planned
/// directly.
///
/// # Errors
/// Errors of `run`; [`crate::ErrorKind::Overflow`].
pub fn plan_overlaid(problem: &Problem, run: impl Fn(&Problem) -> Result<Plan>) -> Result<Plan> {
    let gears = problem.gears();
    if gears.len() < 2 {
        return run(problem);
    }
    let mut by_size = Vec::with_capacity(gears.len());
    for &g in &gears {
        let total = problem
            .buffers
            .iter()
            .filter(|b| b.gear == Some(g))
            .try_fold(0u64, |acc, b| crate::error::add(acc, b.size, "gear total"))?;
        by_size.push((total, g));
    }
    by_size.sort_unstable_by(|a, b| b.cmp(a));
    let n = problem.buffers.len();
    let mut offsets = alloc::vec![0u64; n];
    let mut sizes = alloc::vec![0u64; n];
    let mut strategy = String::new();
    let mut alignment = 1;
    let mut notes = Vec::new();
    let mut pinned: Vec<Option<u64>> = alloc::vec![None; n];
    for (k, &(_, g)) in by_size.iter().enumerate() {
        let (mut sub, idx) = gear_problem(problem, g);
        for (j, &i) in idx.iter().enumerate() {
            if let Some(off) = pinned[i] {
                sub.buffers[j].fixed_offset = Some(off);
            }
        }
        let p = run(&sub)?;
        for (j, &i) in idx.iter().enumerate() {
            offsets[i] = p.offsets[j];
            sizes[i] = p.sizes[j];
            if k == 0 && problem.buffers[i].gear.is_none() {
                pinned[i] = Some(p.offsets[j]);
            }
        }
        notes.push(alloc::format!("gear {g}: peak {} B", p.peak));
        if k == 0 {
            strategy = p.strategy;
            alignment = p.alignment;
        }
    }
    let mut plan = Plan::new(strategy, alignment, offsets, sizes)?;
    plan.notes = notes;
    Ok(plan)
}

/// Reports the overlay of `plan` (a plan of `problem`, made by `strategy` with `options`).
///
/// # Errors
/// Errors of the strategy when planning each gear alone.
pub fn overlay_report(
    problem: &Problem,
    plan: &Plan,
    strategy: &str,
    options: &PlanOptions,
) -> Result<OverlayReport> {
    let mut gears = Vec::new();
    let mut side = 0u64;
    for g in problem.gears() {
        let (sub, idx) = gear_problem(problem, g);
        let peak_bytes = idx
            .iter()
            .filter(|&&i| plan.sizes[i] > 0)
            .map(|&i| plan.offsets[i].saturating_add(plan.sizes[i]))
            .max()
            .unwrap_or(0);
        let lower_bound_bytes = crate::bound::lower_bound(&sub)?.lower_bound;
        let alone_bytes = crate::strategy::plan(&sub, strategy, options)?.peak;
        side = crate::error::add(side, alone_bytes, "side-by-side total")?;
        gears.push(GearReport {
            batch: g,
            peak_bytes,
            lower_bound_bytes,
            alone_bytes,
        });
    }
    Ok(OverlayReport {
        gears,
        overlay_bytes: plan.peak,
        side_by_side_bytes: side,
        saving_bytes: side.saturating_sub(plan.peak),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Op, Tensor};
    use crate::DType;
    use alloc::vec;

    /// x[batch,256] f32 -> A -> y[batch,256] -> B -> z[batch,256]; w[256] constant-size act.
    fn graph() -> Graph {
        let t = |n: &str, shape: Vec<Dim>| Tensor {
            name: n.into(),
            dtype: Some(DType::Float32),
            shape: Some(shape),
            ..Tensor::default()
        };
        let b = || Dim::Sym("batch".into());
        let op = |n: &str, i: Vec<usize>, o: Vec<usize>| Op {
            name: n.into(),
            op_type: "Relu".into(),
            inputs: i,
            outputs: o,
            ..Op::default()
        };
        Graph {
            name: "g".into(),
            tensors: vec![
                t("x", vec![b(), Dim::Known(256)]),
                t("y", vec![b(), Dim::Known(256)]),
                t("s", vec![Dim::Known(256)]),
                t("z", vec![b(), Dim::Known(256)]),
            ],
            ops: vec![op("A", vec![0], vec![1, 2]), op("B", vec![1, 2], vec![3])],
            inputs: vec![0],
            outputs: vec![3],
        }
    }

    #[test]
    fn batch_dim_defaults_to_first_input_symbol() {
        assert_eq!(batch_dim(&graph(), None).unwrap(), "batch");
        assert!(batch_dim(&graph(), Some("N")).is_err());
    }

    #[test]
    fn hand_computed_overlay() {
        // Gears 1 and 4. x,y,z are 1 KiB per batch row; s (1 KiB) does not depend on the
        // batch but is per gear too (GE clones every op per gear); the graph input x and
        // output z are one buffer each at the largest gear (4 KiB).
        let l = expand(&graph(), &Bindings::new(), "batch", &[4, 1]).unwrap();
        let p = &l.problem;
        let names: Vec<&str> = p.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            names,
            ["x", "z", "y@Batch_1", "s@Batch_1", "y@Batch_4", "s@Batch_4"]
        );
        assert_eq!(p.buffers[0].size, 4 * 1024);
        assert_eq!(p.buffers[4].size, 4 * p.buffers[2].size);
        // Live sets (exact sizes, KiB): step 0: x,y,s; step 1: y,s,z. Gear 4: 4+4+1 = 9 KiB;
        // gear 1: 4+1+1 = 6 KiB.
        let o = PlanOptions::exact();
        let plan = crate::plan(p, "greedy-size-best-fit", &o).unwrap();
        crate::validate(p, &plan).unwrap();
        assert_eq!(plan.peak, 9 * 1024, "the region costs the largest gear");
        let r = overlay_report(p, &plan, "greedy-size-best-fit", &o).unwrap();
        assert_eq!(r.gears[0].lower_bound_bytes, 6 * 1024);
        assert_eq!(r.gears[1].lower_bound_bytes, 9 * 1024);
        assert_eq!(r.side_by_side_bytes, 15 * 1024);
        assert_eq!(r.saving_bytes, 6 * 1024);
        assert_eq!(crate::lower_bound(p).unwrap().lower_bound, 9 * 1024);
    }
}
