//! Dynamic batch ("gears"): one graph with a symbolic batch dim, planned for several batch
//! sizes at once. As GE's `MultiBatchClonePass` clones the graph per gear, every tensor except
//! the graph's inputs and outputs is copied once per gear and labelled with it
//! (GE: `_batch_label = "Batch_N"`), also those whose size does not depend on the batch; graph
//! inputs and outputs are one buffer each at the largest gear's size. Only one gear runs at a
//! time, so buffers of different gears may overlap ([`crate::Buffer::conflicts`]), and a
//! plan's region costs the largest gear, not the sum.

use alloc::string::String;
use alloc::vec::Vec;

use super::{Bindings, Dim, Graph, Lowered};
use crate::error::{Error, Result};
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
/// gear, at the largest gear's size, and so do the other members of a continuous group that
/// holds one (so the group stays one run in every gear). Every gear shares the schedule, so live ranges are those of the graph.
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
    let mut depends: Vec<bool> = (0..n)
        .map(|i| any_sized && gears.len() > 1 && !io(&first.problem.buffers[i]))
        .collect();
    // A continuous group must be one run in every gear. One with a graph input or output
    // (a single buffer for all gears) is not cloned per gear at all: every member is one
    // buffer at the largest gear's size, so the group stays adjacent.
    let one_run: alloc::collections::BTreeSet<u32> = (0..n)
        .filter(|&i| !depends[i])
        .filter_map(|i| first.problem.buffers[i].continuous.map(|c| c.group))
        .collect();
    for (i, d) in depends.iter_mut().enumerate() {
        if first.problem.buffers[i]
            .continuous
            .is_some_and(|c| one_run.contains(&c.group))
        {
            *d = false;
        }
    }
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
    if gears.len() > 1 && !any_sized {
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
        unknown: first.unknown.clone(),
        views: first.views.clone(),
        order: first.order,
        search: first.search.clone(),
        rewrites: first.rewrites.clone(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::graph::{Op, Tensor, TensorId};
    use crate::DType;
    use alloc::vec;

    /// x[batch,256] f32 -> A -> y[batch,256] -> B -> z[batch,256]; w[256] constant-size act.
    pub(crate) fn graph() -> Graph {
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
            inputs: TensorId::list(&i),
            outputs: TensorId::list(&o),
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
            inputs: TensorId::list(&[0]),
            outputs: TensorId::list(&[3]),
            order: Default::default(),
        }
    }

    /// A continuous group holding a graph output is one run for every gear: its other
    /// members are not cloned per gear either (else no gear's view of it could be adjacent).
    #[test]
    fn a_continuous_group_with_a_graph_output_is_not_cloned() {
        let g = crate::import::json::parse(
            r#"{"format":"memplan.graph/1","tensors":[
            {"name":"x","dtype":"float32","shape":["batch",64]},
            {"name":"a","dtype":"float32","shape":["batch",64]},
            {"name":"b","dtype":"float32","shape":["batch",128]},
            {"name":"y","dtype":"float32","shape":["batch",64]}],
            "ops":[{"name":"S","inputs":["x"],"outputs":["a","b"],
                    "attrs":{"continuous_outputs":true}},
                   {"name":"C","inputs":["a","b"],"outputs":["y"]}],
            "inputs":["x"],"outputs":["y","b"]}"#,
        )
        .unwrap();
        let l = expand(&g, &Bindings::new(), "batch", &[1, 4]).unwrap();
        let got: Vec<(&str, u64, Option<u64>)> = l
            .problem
            .buffers
            .iter()
            .map(|b| (b.name.as_str(), b.size, b.gear))
            .collect();
        // sizes at batch 4: x, a, y 1024 B, b 2048 B
        assert_eq!(
            got,
            vec![
                ("x", 1024, None),
                ("a", 1024, None),
                ("b", 2048, None),
                ("y", 1024, None)
            ]
        );
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    }

    #[test]
    fn batch_dim_defaults_to_first_input_symbol() {
        assert_eq!(batch_dim(&graph(), None).unwrap(), "batch");
        assert!(batch_dim(&graph(), Some("N")).is_err());
    }
}
