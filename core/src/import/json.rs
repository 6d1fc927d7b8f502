//! The memplan JSON graph format `memplan.graph/1` (documented in `docs/formats.md`).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Dim, Graph, Op, OpId, Tensor, TensorId};
use crate::problem::Flags;

/// The format tag this module reads.
pub const FORMAT: &str = "memplan.graph/1";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGraph {
    format: String,
    #[serde(default)]
    name: String,
    tensors: Vec<RawTensor>,
    ops: Vec<RawOp>,
    #[serde(default)]
    inputs: Vec<String>,
    #[serde(default)]
    outputs: Vec<String>,
    /// Schedule order ([`crate::graph::ScheduleOrder::from_name`]); file order if absent.
    #[serde(default)]
    schedule: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTensor {
    name: String,
    bytes: Option<u64>,
    dtype: Option<String>,
    /// Read as values and checked one by one, so that a bad dim is named with its tensor
    /// and axis (serde's untagged `Dim` says only "did not match any variant").
    shape: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    memory_type: u32,
    #[serde(default)]
    flags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    name: String,
    #[serde(default, rename = "type")]
    op_type: String,
    #[serde(default)]
    inputs: Vec<String>,
    #[serde(default)]
    outputs: Vec<String>,
    #[serde(default)]
    workspace_bytes: Vec<u64>,
    #[serde(default)]
    workspace_flags: Vec<Vec<String>>,
    #[serde(default)]
    stream: u32,
    #[serde(default)]
    after: Vec<String>,
    #[serde(default)]
    attrs: RawAttrs,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAttrs {
    #[serde(default)]
    continuous_inputs: bool,
    #[serde(default)]
    continuous_outputs: bool,
    #[serde(default, deserialize_with = "unique_map")]
    ref_outputs: BTreeMap<String, String>,
    #[serde(default)]
    no_reuse: bool,
}

/// A JSON object as a map, refusing a key given twice (serde keeps the last silently).
fn unique_map<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> core::result::Result<BTreeMap<String, String>, D::Error> {
    struct Unique;
    impl<'de> serde::de::Visitor<'de> for Unique {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
            f.write_str("an object of tensor names")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> core::result::Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((k, v)) = m.next_entry::<String, String>()? {
                if out.contains_key(&k) {
                    return Err(serde::de::Error::custom(alloc::format!(
                        "duplicate key '{k}' (which value is meant?)"
                    )));
                }
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Unique)
}

/// Reuse blockers from their names (`no_reuse`, `zero_copy`, `atomic_clean`).
fn parse_flags(names: &[String], at: &str) -> Result<Flags> {
    let mut flags = Flags::default();
    for f in names {
        match f.as_str() {
            "no_reuse" => flags.no_reuse = true,
            "zero_copy" => flags.zero_copy = true,
            "atomic_clean" => flags.atomic_clean = true,
            "zero_copy_reuse" => flags.zero_copy_reuse = true,
            other => {
                return Err(Error::invalid(alloc::format!(
                    "unknown flag '{other}' (known: no_reuse, zero_copy, atomic_clean, zero_copy_reuse)"
                ))
                .at(String::from(at)))
            }
        }
    }
    Ok(flags)
}

/// One dim of a JSON shape: a non-negative integer, or a symbol name.
fn dim_of(v: &serde_json::Value, axis: usize, at: &str) -> Result<Dim> {
    match v {
        serde_json::Value::Number(n) => n.as_u64().map(Dim::Known).ok_or_else(|| {
            Error::invalid(alloc::format!(
                "shape axis {axis}: {n} is not a dim (a non-negative integer, or a name bound with --dim)"
            ))
            .at(String::from(at))
        }),
        serde_json::Value::String(name) if !name.is_empty() => Ok(Dim::Sym(name.clone())),
        other => Err(Error::invalid(alloc::format!(
            "shape axis {axis}: {other} is not a dim (a non-negative integer, or a name bound with --dim)"
        ))
        .at(String::from(at))),
    }
}

/// Parses a `memplan.graph/1` document (a leading UTF-8 byte-order mark is ignored).
///
/// # Errors
/// [`crate::ErrorKind::Parse`] with line and column for malformed JSON or a wrong field type;
/// [`crate::ErrorKind::Invalid`] naming the op or tensor for an unknown tensor reference,
/// a duplicate name, an unknown dtype, kind or flag, or a tensor with neither `bytes` nor
/// `dtype` + `shape`.
pub fn parse(text: &str) -> Result<Graph> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.trim_start().starts_with('{') && !text.trim().is_empty() {
        return Err(Error::parse(
            "a memplan.graph/1 document is one JSON object ({\"format\": \"memplan.graph/1\", \"tensors\": [...], \"ops\": [...]}); docs/formats.md",
        ));
    }
    let raw: RawGraph =
        serde_json::from_str(text).map_err(|e| Error::parse(alloc::format!("{e}")))?;
    if raw.format != FORMAT {
        return Err(Error::invalid(alloc::format!(
            "format '{}' is not '{FORMAT}'",
            raw.format
        )));
    }
    let mut index: BTreeMap<String, TensorId> = BTreeMap::new();
    let mut tensors = Vec::with_capacity(raw.tensors.len());
    for rt in raw.tensors {
        let at = alloc::format!("tensor '{}'", rt.name);
        if index
            .insert(rt.name.clone(), TensorId::new(tensors.len()))
            .is_some()
        {
            return Err(Error::invalid("duplicate tensor name").at(at));
        }
        let dtype = match &rt.dtype {
            Some(d) => Some(DType::parse(d).ok_or_else(|| {
                Error::invalid(alloc::format!("unknown dtype '{d}'")).at(at.clone())
            })?),
            None => None,
        };
        if rt.bytes.is_none() && (dtype.is_none() || rt.shape.is_none()) {
            return Err(Error::invalid("needs \"bytes\", or \"dtype\" and \"shape\"").at(at));
        }
        let shape = match &rt.shape {
            Some(dims) => Some(
                dims.iter()
                    .enumerate()
                    .map(|(axis, v)| dim_of(v, axis, &at))
                    .collect::<Result<Vec<Dim>>>()?,
            ),
            None => None,
        };
        // both given: they must agree where the shape is known (one silently winning would
        // plan a size the file contradicts)
        if let (Some(b), Some(d), Some(dims)) = (rt.bytes, dtype, &shape) {
            let known: Option<Vec<u64>> = dims
                .iter()
                .map(|x| match x {
                    Dim::Known(n) => Some(*n),
                    Dim::Sym(_) => None,
                })
                .collect();
            if let Some(known) = known {
                let elements = known.iter().try_fold(1u64, |a, &n| a.checked_mul(n));
                let want = elements.map(|e| d.bytes(e, &at)).transpose()?;
                if want != Some(b) {
                    let dims: Vec<String> = known.iter().map(|n| alloc::format!("{n}")).collect();
                    return Err(Error::invalid(alloc::format!(
                        "\"bytes\": {b} disagrees with {} [{}] ({}); give one or make them agree",
                        d.name(),
                        dims.join(", "),
                        want.map_or_else(
                            || String::from("more than 2^64 bytes"),
                            |w| alloc::format!("{w} bytes")
                        )
                    ))
                    .at(at));
                }
            }
        }
        let flags = parse_flags(&rt.flags, &at)?;
        let constant = match rt.kind.as_deref() {
            None | Some("activation" | "input" | "output") => false,
            Some("constant" | "weight") => true,
            Some(other) => {
                return Err(Error::invalid(alloc::format!(
                    "unknown kind '{other}' (known: activation, input, output, constant, weight)"
                ))
                .at(at))
            }
        };
        tensors.push(Tensor {
            name: rt.name,
            dtype,
            shape,
            bytes: rt.bytes,
            constant,
            memory_type: rt.memory_type,
            flags,
            unknown_cause: None,
        });
    }
    let lookup = |name: &str, at: &str| -> Result<TensorId> {
        index.get(name).copied().ok_or_else(|| {
            Error::invalid(alloc::format!("unknown tensor '{name}'")).at(String::from(at))
        })
    };
    let mut op_names: BTreeMap<String, usize> = BTreeMap::new();
    for (k, ro) in raw.ops.iter().enumerate() {
        if op_names.insert(ro.name.clone(), k).is_some() {
            return Err(Error::invalid("duplicate op name").at(alloc::format!("op '{}'", ro.name)));
        }
    }
    let mut ops = Vec::with_capacity(raw.ops.len());
    for ro in raw.ops {
        let at = alloc::format!("op '{}'", ro.name);
        let after = ro
            .after
            .iter()
            .map(|n| {
                op_names.get(n).map(|&k| OpId::new(k)).ok_or_else(|| {
                    Error::invalid(alloc::format!("unknown op '{n}' in \"after\"")).at(at.clone())
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let inputs = ro
            .inputs
            .iter()
            .map(|n| lookup(n, &at))
            .collect::<Result<Vec<_>>>()?;
        let outputs = ro
            .outputs
            .iter()
            .map(|n| lookup(n, &at))
            .collect::<Result<Vec<_>>>()?;
        let ref_outputs = ro
            .attrs
            .ref_outputs
            .iter()
            .map(|(o, i)| Ok((lookup(o, &at)?, lookup(i, &at)?)))
            .collect::<Result<Vec<_>>>()?;
        if ro.workspace_flags.len() > ro.workspace_bytes.len() {
            return Err(Error::invalid(alloc::format!(
                "{} workspace_flags for {} workspaces",
                ro.workspace_flags.len(),
                ro.workspace_bytes.len()
            ))
            .at(at));
        }
        let workspace_flags = ro
            .workspace_flags
            .iter()
            .map(|f| parse_flags(f, &at))
            .collect::<Result<Vec<_>>>()?;
        // A weight or constant is loaded, never computed: an op writing one would be planned
        // as if it read a value it writes. Updating a weight in place is written as a new
        // output with `ref_outputs` onto the weight (GE: Assign onto a Variable).
        for (&o, name) in outputs.iter().zip(&ro.outputs) {
            let onto_constant = ref_outputs
                .iter()
                .any(|&(out, inp)| out == o && tensors[inp.index()].constant);
            if tensors[o.index()].constant && !onto_constant {
                return Err(Error::invalid(alloc::format!(
                    "writes tensor '{name}', which is a weight or constant (\"kind\"): an op cannot write a constant; to update a weight in place, write a new output with \"ref_outputs\" onto it"
                ))
                .at(at));
            }
        }
        ops.push(Op {
            name: ro.name,
            op_type: ro.op_type,
            inputs,
            outputs,
            workspace_bytes: ro.workspace_bytes,
            stream: ro.stream,
            continuous_inputs: ro.attrs.continuous_inputs,
            continuous_outputs: ro.attrs.continuous_outputs,
            ref_outputs,
            no_reuse: ro.attrs.no_reuse,
            after,
            workspace_flags,
        });
    }
    let listed = |names: &[String], what: &str| -> Result<Vec<TensorId>> {
        let mut seen = alloc::collections::BTreeSet::new();
        names
            .iter()
            .map(|n| {
                if !seen.insert(n.as_str()) {
                    return Err(
                        Error::invalid(alloc::format!("is listed twice among the {what}"))
                            .at(alloc::format!("{} '{n}'", what.trim_end_matches('s'))),
                    );
                }
                lookup(n, what)
            })
            .collect()
    };
    let inputs = listed(&raw.inputs, "graph inputs")?;
    let outputs = listed(&raw.outputs, "graph outputs")?;
    let order = match raw.schedule.as_deref() {
        None => crate::graph::ScheduleOrder::File,
        Some(n) => crate::graph::ScheduleOrder::from_name(n).map_err(|e| e.at("\"schedule\""))?,
    };
    Ok(Graph {
        name: raw.name,
        tensors,
        ops,
        inputs,
        outputs,
        order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Bindings;
    use alloc::string::ToString;

    #[test]
    fn small_graph_lowers() {
        let g = parse(
            r#"{"format":"memplan.graph/1","name":"t",
            "tensors":[{"name":"x","dtype":"float32","shape":["batch",4]},{"name":"y","bytes":100},
                       {"name":"w","bytes":64,"kind":"weight"}],
            "ops":[{"name":"A","type":"MatMul","inputs":["x","w"],"outputs":["y"],"workspace_bytes":[8]}],
            "inputs":["x"],"outputs":["y"]}"#,
        )
        .unwrap();
        let b: Bindings = [("batch".into(), 2u64)].into_iter().collect();
        let l = g.lower(&b).unwrap();
        assert_eq!(l.problem.buffers.len(), 3);
        assert_eq!(l.problem.buffers[0].size, 32);
        assert_eq!(l.problem.weight_bytes, 64);
    }

    /// A graph input or output listed twice is one tensor claimed twice: an error naming it
    /// (issue 30: a repeated output was accepted silently).
    #[test]
    fn a_graph_input_or_output_listed_twice_is_refused() {
        let text = |ins: &str, outs: &str| {
            alloc::format!(
                r#"{{"format":"memplan.graph/1","tensors":[{{"name":"x","bytes":64}},
                {{"name":"y","bytes":64}}],"ops":[{{"name":"A","inputs":["x"],"outputs":["y"]}}],
                "inputs":[{ins}],"outputs":[{outs}]}}"#
            )
        };
        let e = parse(&text(r#""x""#, r#""y","y""#)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "graph output 'y': is listed twice among the graph outputs"
        );
        let e = parse(&text(r#""x","x""#, r#""y""#)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "graph input 'x': is listed twice among the graph inputs"
        );
        assert!(parse(&text(r#""x""#, r#""y""#)).is_ok());
    }

    #[test]
    fn an_op_writing_a_weight_is_refused_unless_it_is_a_ref_onto_it() {
        // the reviewer's weight_written.json
        let e = parse(
            r#"{"format":"memplan.graph/1","tensors":[{"name":"x","bytes":64},
            {"name":"w","bytes":64,"kind":"weight"}],
            "ops":[{"name":"A","inputs":["x"],"outputs":["w"]}],
            "inputs":["x"],"outputs":["w"]}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "op 'A': writes tensor 'w', which is a weight or constant (\"kind\"): an op cannot write a constant; to update a weight in place, write a new output with \"ref_outputs\" onto it"
        );
        // docs/formats.md ref_outputs: Assign's output v onto the weight w is w's memory
        // (GE rule 9); v declared a weight too is still that documented case
        for kind in ["", r#","kind":"weight""#] {
            let text = alloc::format!(
                r#"{{"format":"memplan.graph/1","tensors":[{{"name":"x","bytes":64}},
                {{"name":"w","bytes":64,"kind":"weight"}},{{"name":"v","bytes":64{kind}}},
                {{"name":"y","bytes":64}}],
                "ops":[{{"name":"Assign","inputs":["w","x"],"outputs":["v"],
                         "attrs":{{"ref_outputs":{{"v":"w"}}}}}},
                       {{"name":"B","inputs":["v"],"outputs":["y"]}}],
                "inputs":["x"],"outputs":["y"]}}"#
            );
            let l = parse(&text).unwrap().lower(&Bindings::new()).unwrap();
            let names: Vec<&str> = l.problem.buffers.iter().map(|b| b.name.as_str()).collect();
            assert_eq!(names, ["x", "y"], "{kind}");
        }
    }

    /// x feeds A and B; C reads a, D reads b and c; `w_on_b` gives B a weight input.
    fn diamond(schedule: &str, w_on_b: bool) -> String {
        alloc::format!(
            r#"{{"format":"memplan.graph/1","schedule":"{schedule}",
            "tensors":[{{"name":"x","bytes":64}},{{"name":"w","bytes":64,"kind":"weight"}},
                       {{"name":"a","bytes":64}},{{"name":"b","bytes":64}},
                       {{"name":"c","bytes":64}},{{"name":"d","bytes":64}}],
            "ops":[{{"name":"A","inputs":["x"],"outputs":["a"]}},
                   {{"name":"B","inputs":[{}],"outputs":["b"]}},
                   {{"name":"C","inputs":["a"],"outputs":["c"]}},
                   {{"name":"D","inputs":["b","c"],"outputs":["d"]}}],
            "inputs":["x"],"outputs":["d"]}}"#,
            if w_on_b { r#""x","w""# } else { r#""x""# }
        )
    }

    #[test]
    fn ge_dfs_schedule_runs_the_last_ready_consumer_first() {
        // graph_metadef compute_graph.cc DFSTopologicalSorting: x's Data node pops first
        // (SortNodes puts Data nodes on top); GetOutNodesFromAnchor makes A and B ready in
        // x's peer order, both go on the stack, B (pushed last) pops: B; b leaves D one
        // edge short; A; C; c readies D: B, A, C, D (file order: A, B, C, D).
        let g = parse(&diamond("ge-dfs", false)).unwrap();
        assert_eq!(g.order, crate::graph::ScheduleOrder::GeDfs);
        assert_eq!(g.schedule().unwrap(), OpId::list(&[1, 0, 2, 3]));
        // B also reads weight w, a Const node: SortNodes puts it below the Data nodes, so
        // x readies only A: A, C (D still waits for b); then w pops and readies B: B, D.
        let g = parse(&diamond("ge-dfs", true)).unwrap();
        assert_eq!(g.schedule().unwrap(), OpId::list(&[0, 2, 1, 3]));
        let l = g.lower(&Bindings::new()).unwrap();
        let b = l.problem.buffers.iter().find(|x| x.name == "b").unwrap();
        assert_eq!((b.start, b.end), (2, 3));
        let g = parse(&diamond("file", true)).unwrap();
        assert_eq!(g.schedule().unwrap(), OpId::list(&[0, 1, 2, 3]));
        let e = parse(&diamond("bfs", true)).unwrap_err().to_string();
        assert!(e.contains("unknown schedule 'bfs'"), "{e}");
    }

    #[test]
    fn ge_dfs_takes_an_op_writing_a_graph_input_as_its_data_node() {
        // The diamond with its Data node written out as an op (as static/samples/ge-streams
        // does). It is the Data node of DFSTopologicalSorting: it pops first and readies A
        // and B, and x is no source of its own (released twice, A and B ran before it and
        // the order was refused): Data, B, A, C, D.
        let text = diamond("ge-dfs", false).replace(
            r#""ops":["#,
            r#""ops":[{"name":"Data","type":"Data","outputs":["x"]},"#,
        );
        let g = parse(&text).unwrap();
        assert_eq!(g.schedule().unwrap(), OpId::list(&[0, 2, 1, 3, 4]));
        let l = g.lower(&Bindings::new()).unwrap();
        let x = l.problem.buffers.iter().find(|b| b.name == "x").unwrap();
        assert_eq!(x.start, 0);
    }

    #[test]
    fn errors_name_the_place() {
        let e = parse(
            r#"{"format":"memplan.graph/1","tensors":[],"ops":[{"name":"A","inputs":["q"]}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "op 'A': unknown tensor 'q'");
        let e = parse("{\"format\":\"memplan.graph/1\",\n\"tensors\":[{\"name\":\"x\",\"bytes\":-1}],\"ops\":[]}")
            .unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn bad_dims_and_contradicting_sizes_are_named() {
        let one = |t: &str| {
            parse(&alloc::format!(
                r#"{{"format":"memplan.graph/1","tensors":[{t}],"ops":[{{"name":"A","outputs":["x"]}}]}}"#
            ))
        };
        let e = one(r#"{"name":"x","dtype":"float32","shape":[2,-1]}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor 'x': shape axis 1: -1 is not a dim (a non-negative integer, or a name bound with --dim)"
        );
        let e = one(r#"{"name":"x","dtype":"float32","shape":[2,1.5]}"#).unwrap_err();
        assert!(
            e.to_string().contains("shape axis 1: 1.5 is not a dim"),
            "{e}"
        );
        // float32 [8] is 32 bytes: a file saying 4 contradicts itself
        let e = one(r#"{"name":"x","bytes":4,"dtype":"float32","shape":[8]}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor 'x': \"bytes\": 4 disagrees with float32 [8] (32 bytes); give one or make them agree"
        );
        // agreeing, or a symbolic shape (bytes then decide): accepted
        assert!(one(r#"{"name":"x","bytes":32,"dtype":"float32","shape":[8]}"#).is_ok());
        assert!(one(r#"{"name":"x","bytes":32,"dtype":"float32","shape":["n"]}"#).is_ok());
    }
}
