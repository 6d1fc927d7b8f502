//! The figures of each section, from core's reports (the same calls `memplan plan --io`,
//! `--atomic-clean`, `--single-op`, `--hybrid`, `--training` and `memplan simulate` make).
//! Pure: no browser calls, unit-tested natively.

use std::rc::Rc;

use memplan_core::graph::{Graph, Lowered};
use memplan_core::import::load::load_as;
use memplan_core::report::atomic_clean::{atomic_clean, AtomicCleanReport};
use memplan_core::report::graph_io::{graph_io, GraphIo};
use memplan_core::report::hybrid::{self, HybridReport};
use memplan_core::report::single_op::{single_op, SingleOpReport};
use memplan_core::report::training::{training, Optimizer};
use memplan_core::simulate::access::{self, AccessCosts, AccessReport};
use memplan_core::simulate::registry::{self, RuntimeOptions};
use memplan_core::simulate::SimReport;
use memplan_core::{Bindings, Plan, PlanOptions, Problem};

use crate::model::{load_options, Built, Format, Lowering, Source};
use crate::settings::{self, PaneSettings};

/// The open model as the sections need it: the file (loaded again for the graph, as the TFLM
/// export does) and what it was built with. Compared by address (bytes and build) and by
/// the settings, so a pane re-renders its sections only when one of them changed.
#[derive(Clone)]
pub struct Model {
    /// The file.
    pub source: Source,
    /// The model built from it (its problem is what every pane planned).
    pub built: Rc<Built>,
    /// Its dims.
    pub bindings: Bindings,
    /// Its dynamic-batch gears.
    pub gears: Vec<u64>,
    /// Its lowering settings.
    pub lowering: Lowering,
}

impl PartialEq for Model {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.source.bytes, &o.source.bytes)
            && Rc::ptr_eq(&self.built, &o.built)
            && self.bindings == o.bindings
            && self.gears == o.gears
            && self.lowering == o.lowering
    }
}

/// What a section says when the model has no graph (a buffer list, a link's lowered problem).
pub const NEEDS_GRAPH: &str =
    "needs a graph (ONNX, .tflite or memplan.graph/1): this model is a bare buffer list";

impl Model {
    /// The graph and its lowering, loaded again from the file under the same settings (so
    /// the lowered problem is the one the panes planned).
    ///
    /// # Errors
    /// [`NEEDS_GRAPH`] for a model without a graph; the loader's message otherwise.
    pub fn graph(&self) -> Result<(Graph, Lowered), String> {
        let Some(format) = self.source.format.core() else {
            return Err(NEEDS_GRAPH.to_string());
        };
        if self.source.format == Format::Lowered || !self.built.is_graph {
            return Err(NEEDS_GRAPH.to_string());
        }
        let opts = load_options(&self.bindings, &self.gears, &self.lowering);
        let loaded = load_as(format, &self.source.name, &self.source.bytes, &opts)
            .map_err(|e| format!("{}: {e}", self.source.name))?;
        match loaded.graph {
            Some(g) => Ok((g, loaded.lowered)),
            None => Err(NEEDS_GRAPH.to_string()),
        }
    }
}

/// Graph I/O: per graph input and output (`memplan plan --io`).
///
/// # Errors
/// As [`Model::graph`].
pub fn io(model: &Model, plan: &Plan) -> Result<Vec<GraphIo>, String> {
    let (g, l) = model.graph()?;
    Ok(graph_io(&g, &l, plan))
}

/// Atomic clean by id (`memplan plan --atomic-clean`).
///
/// # Errors
/// Core's overflow message.
pub fn atomic(
    problem: &Problem,
    plan: &Plan,
    s: &PaneSettings,
) -> Result<AtomicCleanReport, String> {
    atomic_clean(problem, plan, &s.options()).map_err(|e| e.to_string())
}

/// Single-op mode (`memplan plan --single-op`).
///
/// # Errors
/// Core's overflow message.
pub fn single(problem: &Problem, s: &PaneSettings) -> Result<SingleOpReport, String> {
    single_op(problem, &s.options()).map_err(|e| e.to_string())
}

/// `problem` with the pane's planned sizes (padding), as a runtime pane replays it.
///
/// # Errors
/// Core's overflow message.
pub fn sized(problem: &Problem, options: &PlanOptions) -> Result<Problem, String> {
    let mut p = problem.clone();
    for b in &mut p.buffers {
        b.size = options.planned_size(b).map_err(|e| e.to_string())?;
    }
    Ok(p)
}

/// The runtime options of a pane (its knobs; a static pane's are the defaults at its
/// alignment).
///
/// # Errors
/// The knob's message.
pub fn runtime_options(s: &PaneSettings) -> Result<RuntimeOptions, String> {
    s.knobs.options(s.alignment.max(1))
}

/// One allocator of the streams section.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRun {
    /// Registry name.
    pub name: &'static str,
    /// What it replayed.
    pub report: SimReport,
    /// Per stream: buffers, lowest offset, highest end (bytes) of its buffers.
    pub streams: Vec<(u32, usize, u64, u64)>,
}

/// Runtime allocators per stream: GE V1 (one allocator the streams share), GE V2 shared, and
/// GE V2 with one allocator per stream (`memplan simulate -a ge-v1 -a ge-v2 -a
/// ge-v2-streams`), on the pane's sizes and knobs.
///
/// # Errors
/// Core's or the knobs' message.
pub fn streams(problem: &Problem, s: &PaneSettings) -> Result<Vec<StreamRun>, String> {
    let p = sized(problem, &s.options())?;
    let o = runtime_options(s)?;
    let mut out = Vec::new();
    for name in ["ge-v1", "ge-v2", "ge-v2-streams"] {
        let report = registry::run(&p, name, &o).map_err(|e| format!("{name}: {e}"))?;
        let mut per: std::collections::BTreeMap<u32, (usize, u64, u64)> =
            std::collections::BTreeMap::new();
        for (b, off) in p.buffers.iter().zip(&report.offsets) {
            let Some(off) = *off else { continue };
            let e = per.entry(b.stream).or_insert((0, u64::MAX, 0));
            e.0 += 1;
            e.1 = e.1.min(off);
            e.2 = e.2.max(off.saturating_add(b.size));
        }
        out.push(StreamRun {
            name,
            report,
            streams: per
                .into_iter()
                .map(|(st, (n, lo, hi))| (st, n, lo, hi))
                .collect(),
        });
    }
    Ok(out)
}

/// One flow (`memplan plan --hybrid`): the pane's static strategy for tensors of known size,
/// `ge-v2` at run time for those with a symbolic dim.
///
/// # Errors
/// As [`Model::graph`]; a runtime or anytime pane (the static part needs a strategy that
/// answers at once); core's message.
pub fn hybrid(model: &Model, s: &PaneSettings) -> Result<HybridReport, String> {
    if settings::is_runtime(&s.strategy) {
        return Err("the static part is planned by the pane's strategy: choose a static one (e.g. ge-block)".to_string());
    }
    if settings::is_anytime(&s.strategy) {
        return Err(format!(
            "{} searches up to its time limit: the hybrid view plans with strategies that answer at once",
            s.strategy
        ));
    }
    let (g, l) = model.graph()?;
    let h = hybrid::split(&g, &l);
    let (_, _, r) = hybrid::run(&h, &s.strategy, &s.options(), &RuntimeOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(r)
}

/// The training view's figures (`memplan plan --training OPT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingView {
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Live-set lower bound of the training step's arena, bytes.
    pub lower_bound: u64,
    /// The training step planned by the pane's strategy, bytes (`None`: a runtime or
    /// anytime pane).
    pub peak: Option<u64>,
    /// Weights, bytes (kept apart).
    pub weights: u64,
    /// Weight gradients, bytes (in the arena).
    pub weight_grads: u64,
    /// Optimizer state, bytes (kept apart).
    pub state: u64,
}

/// The training step beside inference, with `optimizer` (`sgd`, `momentum`, `adam`).
///
/// # Errors
/// As [`Model::graph`]; core's message.
pub fn train(model: &Model, s: &PaneSettings, optimizer: &str) -> Result<TrainingView, String> {
    let (g, l) = model.graph()?;
    let opt = Optimizer::parse(optimizer).map_err(|e| e.to_string())?;
    let t = training(&g, &l, opt).map_err(|e| e.to_string())?;
    let lower_bound = memplan_core::lower_bound(&t.problem)
        .map_err(|e| e.to_string())?
        .lower_bound;
    let peak = if settings::is_runtime(&s.strategy) || settings::is_anytime(&s.strategy) {
        None
    } else {
        let p = memplan_core::plan(&t.problem, &s.strategy, &s.options())
            .map_err(|e| format!("training step: {e}"))?;
        Some(p.peak)
    };
    Ok(TrainingView {
        optimizer: opt,
        lower_bound,
        peak,
        weights: t.weight_bytes,
        weight_grads: t.weight_grad_bytes,
        state: t.optimizer_state_bytes,
    })
}

/// Allocator statistics and access cost: a runtime pane's allocator replayed again (as the
/// pane did, `memplan simulate -a NAME`), with its access cost per level at the default
/// prices; a static pane's access cost per memory type of its planned sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// The runtime allocator's report (`None`: a static pane).
    pub sim: Option<SimReport>,
    /// Access cost per level.
    pub access: AccessReport,
}

/// See [`Stats`].
///
/// # Errors
/// Core's or the knobs' message.
pub fn stats(problem: &Problem, s: &PaneSettings) -> Result<Stats, String> {
    let p = sized(problem, &s.options())?;
    let costs = AccessCosts::default();
    match settings::runtime_allocator(&s.strategy) {
        Some(a) => {
            let r = (a.run)(&p, &runtime_options(s)?).map_err(|e| e.to_string())?;
            let access = access::price(&r.access, &costs).map_err(|e| e.to_string())?;
            Ok(Stats {
                sim: Some(r),
                access,
            })
        }
        None => {
            let bytes = access::by_memory_type(&p).map_err(|e| e.to_string())?;
            let access = access::price(&bytes, &costs).map_err(|e| e.to_string())?;
            Ok(Stats { sim: None, access })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Origin;

    fn model(path: &str) -> Model {
        let bytes = std::fs::read(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let source = Source::new(path, Origin::File, bytes).unwrap();
        let built =
            crate::model::build_with(&source, &Bindings::new(), &[], &Lowering::default()).unwrap();
        Model {
            source,
            built: Rc::new(built),
            bindings: Bindings::new(),
            gears: Vec::new(),
            lowering: Lowering::default(),
        }
    }

    fn ge(strategy: &str) -> PaneSettings {
        let mut s = PaneSettings::default_for(0, true, &[]);
        s.strategy = strategy.to_string();
        s
    }

    fn raw(strategy: &str) -> PaneSettings {
        let mut s = ge(strategy);
        s.ge_padding = false;
        s.alignment = 1;
        s
    }

    #[test]
    fn stats_match_the_cli_on_ge_chain() {
        // cli/tests/simulate.rs works these out: reuse on ge-chain, 4 hits, 7 probes, 64 B of
        // graph I/O, access cost 369,099,776 (all in HBM); acl-tiered 79,691,840
        let m = model("static/samples/ge-chain.json");
        let st = stats(&m.built.problem, &raw("runtime-reuse")).unwrap();
        let sim = st.sim.unwrap();
        assert_eq!(
            (sim.cache_hits, sim.probes, sim.io_transfer_bytes),
            (4, 7, 64)
        );
        assert_eq!(st.access.total_cost, 369_099_776);
        let st = stats(&m.built.problem, &raw("runtime-acl-tiered")).unwrap();
        assert_eq!(st.access.total_cost, 79_691_840);
        // a static pane: the same traffic, every buffer in HBM
        let st = stats(&m.built.problem, &raw("ge-block")).unwrap();
        assert_eq!(st.access.total_cost, 369_099_776);
    }

    #[test]
    fn graph_sections_match_the_cli_tests() {
        // cli/tests/ge_reports.rs: ref.json under ge-block with GE's defaults
        let m = model("cli/tests/io/ref.json");
        let s = ge("ge-block");
        let plan = memplan_core::plan(&m.built.problem, "ge-block", &s.options()).unwrap();
        let rows = io(&m, &plan).unwrap();
        assert_eq!(rows.iter().map(|r| r.copied_bytes).sum::<u64>(), 3000);
        assert_eq!((rows[0].offset, rows[0].size), (Some(2048), 1536));
        let m = model("cli/tests/io/single.json");
        assert_eq!(single(&m.built.problem, &s).unwrap().device_bytes, 8704);
        let m = model("cli/tests/io/cnn.json");
        let t = train(&m, &s, "momentum").unwrap();
        assert_eq!((t.lower_bound, t.weights, t.state), (6656, 2992, 2992));
        let m = model("cli/tests/io/atomic.json");
        let plan = memplan_core::plan(&m.built.problem, "ge-block", &s.options()).unwrap();
        let a = atomic(&m.built.problem, &plan, &s).unwrap();
        assert_eq!((a.memsets_centralised, a.memsets_per_op), (1, 3));
        assert_eq!(a.memsets[0].ranges[0].size, 5120);
        // cli/tests/simulate.rs runtime_allocators_per_stream_on_a_graph
        let m = model("cli/tests/io/streams.json");
        let runs = streams(&m.built.problem, &raw("ge-block")).unwrap();
        let got: Vec<(u64, u64)> = runs
            .iter()
            .map(|r| (r.report.reserved_bytes, r.report.cache_hits))
            .collect();
        assert_eq!(got, [(200, 2), (131_072, 2), (196_608, 1)]);
        // stream 0: a, c @0 and y @65536 (+100 B); stream 1: b @131072 (+100 B)
        assert_eq!(
            runs[2].streams,
            [(0, 3, 0, 65_636), (1, 1, 131_072, 131_172)]
        );
    }

    #[test]
    fn hybrid_matches_the_cli_test() {
        // cli/tests/ge_reports.rs hybrid_one_flow: batch 4, raw sizes, greedy-size-best-fit:
        // static 4040 B, ge-v2 reserves 131072 B, device 135112 B
        let mut m = model("cli/tests/io/hybrid.json");
        m.bindings.insert("batch".to_string(), 4);
        let r = hybrid(&m, &raw("greedy-size-best-fit")).unwrap();
        assert_eq!(
            (r.static_bytes, r.runtime_reserved_bytes, r.device_bytes),
            (4040, 131_072, 135_112)
        );
    }
}
