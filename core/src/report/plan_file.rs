//! The plan file `memplan.plan/1` (documented in `docs/formats.md`): one schema and one
//! writer for the CLI (`memplan plan --format json`) and the playground's export, so that
//! both write the same file, byte for byte, for the same model and settings.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::{GearReport, OverlayReport};
use crate::error::{Error, Result};
use crate::graph::views::AliasReport;
use crate::graph::{ScheduleOrder, UnknownTensor};
use crate::plan::{Arena, BlockLevel, GeStats, Padding, Plan, PlanOptions, Search};
use crate::problem::{Buffer, Problem};
use crate::strategy::semantics;

/// The `format` of every plan file.
pub const FORMAT: &str = "memplan.plan/1";

/// The document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanFile {
    /// Always `memplan.plan/1`.
    pub format: String,
    /// The input file as given.
    pub input: String,
    /// Problem figures.
    pub problem: ProblemSummary,
    /// One entry per strategy run.
    pub plans: Vec<PlanEntry>,
    /// From the playground: a link reopening the view the file was exported from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playground: Option<String>,
    /// Single-op mode, when asked for (`memplan plan --single-op`): each op alone, its inputs
    /// and outputs the caller's buffers, its workspaces GE's ([`PlanFile::add_single_op`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_op: Option<crate::report::single_op::SingleOpReport>,
    /// The training step beside inference, when asked for (`memplan plan --training OPT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<crate::report::training::TrainingSummary>,
    /// One flow, when asked for (`memplan plan --hybrid`): per strategy, the static plan of
    /// the tensors of known size and `ge-v2` at run time for those with a symbolic dim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hybrid: Vec<crate::report::hybrid::HybridReport>,
    /// Access cost per memory type, when asked for (`memplan plan --access-cost`): every
    /// buffer in its memory type at its planned size, written once and read once per reading
    /// op ([`PlanFile::add_access_cost`], [`crate::simulate::access`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_cost: Option<crate::simulate::access::AccessReport>,
}

/// Problem figures, bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProblemSummary {
    /// Number of buffers.
    pub buffers: usize,
    /// Number of op steps.
    pub steps: u64,
    /// Live-set lower bound on raw sizes (depends on the schedule).
    pub lower_bound_bytes: u64,
    /// Sum of raw sizes.
    pub no_reuse_bytes: u64,
    /// Constants and weights, not planned.
    #[serde(default)]
    pub weight_bytes: u64,
    /// The schedule's ops when they run on several streams: what `memplan validate` needs to
    /// check cross-stream reuse (absent for one stream, where step order is the whole rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpEntry>,
    /// Number of tensors of unknown size: not planned, not in any figure here.
    #[serde(default)]
    pub unknown_size_tensors: usize,
    /// Those tensors, each with the op that produced it and why its size is unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_size: Vec<UnknownEntry>,
    /// With `--alias-views`: view outputs merged into their input's buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aliased_views: Option<usize>,
    /// With `--alias-views`: their bytes (the no-reuse total is this much smaller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aliased_view_bytes: Option<u64>,
    /// The op order when it is not the file's: `ge-dfs` (`--schedule`, the graph's
    /// `"schedule"`, the playground's Op order); every lifetime above follows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// With `--schedule memory`: the op names in the order chosen (step = index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub op_order: Vec<String>,
    /// With `--schedule memory`: what the order search tried and proved (each plan's notes
    /// say it in one line too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_search: Option<crate::graph::order::OrderReport>,
    /// With `--fuse` or `--in-place`: the ops fused away and the outputs written over their
    /// input's buffer (`memplan validate --model` needs the same flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrites: Option<crate::graph::rewrite::RewriteReport>,
}

/// The settings of one plan: the strategy asked for and the options in force (the
/// playground's link keys).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The registry name asked for (`portfolio`, where the plan says `portfolio:WINNER`).
    pub strategy: String,
    /// Plan-wide alignment, bytes.
    pub alignment: u64,
    /// GE padding `ceil32(bytes) + 32` (else raw sizes).
    pub ge_padding: bool,
    /// Memory reuse on.
    pub reuse: bool,
    /// Graph inputs and outputs are zero-copy user buffers.
    pub zero_copy_io: bool,
    /// Atomic-clean outputs cleaned centrally (GE policy 0).
    pub atomic_centralised: bool,
    /// Zero-copy graph I/O takes part in reuse (GE's I/O reuse options; `--zero-copy-reuse`);
    /// left out when off.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub zero_copy_reuse: bool,
    /// Gears' region cut into virtual blocks of at most 400 MiB (`--expandable-memory`); left
    /// out when off.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub expandable_memory: bool,
    /// Zero-copy blocks' alignment when not the block alignment (`--zero-copy-align`,
    /// [`PlanOptions::zero_copy_alignment`]); left out by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_copy_alignment: Option<u64>,
}

/// One op of the schedule, at step = its index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpEntry {
    /// Name.
    pub name: String,
    /// Stream it runs on.
    pub stream: u32,
    /// Steps of the ops it waits for (data and control edges).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preds: Vec<u64>,
}

/// Membership of a buffer in a continuous group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuousEntry {
    /// Group id.
    pub group: u32,
    /// Position in the group, from 0.
    pub index: u32,
}

/// A tensor of unknown size (not planned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnknownEntry {
    /// Tensor name.
    pub name: String,
    /// Producing op, `'name' (OpType)`; absent for graph inputs and weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Why the size is unknown.
    pub why: String,
}

/// One plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// Strategy name (portfolio: `portfolio:WINNER`).
    pub strategy: String,
    /// Plan-wide alignment, bytes.
    pub alignment: u64,
    /// Arena size, bytes.
    pub peak_bytes: u64,
    /// Wall time of planning, microseconds.
    pub plan_time_us: u64,
    /// The settings the plan was made with (absent in files of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Per-gear figures with dynamic batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gears: Option<Vec<GearReport>>,
    /// Overlaid size of the gears (= peak) with dynamic batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay_bytes: Option<u64>,
    /// Sum of the gears planned alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_by_side_bytes: Option<u64>,
    /// With several memory types (GE strategies): one arena per type, each from offset 0;
    /// `peak_bytes` is HBM's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arenas: Vec<Arena>,
    /// Strategy statistics (GE: memoffset, theory_min, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stats: Vec<(String, u64)>,
    /// What the strategy says about its plan, in words (optimal: proven or the gap left).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// An anytime search's figures (optimal): lower bound, best and seed peaks, proven, nodes,
    /// why it stopped, the large-input counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<Search>,
    /// GE's statistics as typed figures (GE strategies): per memory type memoffset,
    /// feature map, atomic and zero-copy regions, total_size, no_reuse, theory_min; streams,
    /// blocks, gear totals, the hybrid's two variants. `stats` carries the same by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge: Option<GeStats>,
    /// Blocks of a block-reuse plan (GE), in the plan's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockEntry>,
    /// Graph inputs and outputs as GE sees them at run time, when asked for
    /// ([`PlanFile::add_graph_io`], `memplan plan --io`): offset, size, the ops taking the
    /// address, zero-copy or copied and the bytes copied per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graph_io: Vec<crate::report::graph_io::GraphIo>,
    /// The memset ops and the ranges each zeroes, when asked for
    /// ([`PlanFile::add_atomic_clean`], `memplan plan --atomic-clean`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_clean: Option<crate::report::atomic_clean::AtomicCleanReport>,
    /// A TFLite model's arena for this plan ([`PlanFile::add_tflm_arena`]): the head (this
    /// plan's peak), the variable tensors of TFLM's persistent tail and their sum, the least
    /// `kTensorArenaSize` ([`crate::report::tflm_arena`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tflm_arena: Option<crate::report::tflm_arena::ArenaSize>,
    /// Every buffer.
    pub buffers: Vec<BufferEntry>,
}

impl PlanEntry {
    /// The bytes the device must hold for this plan, as [`Plan::device_bytes`] reckons them
    /// from the file: `peak_bytes` with one offset space, else the sum of `arenas`.
    pub fn device_bytes(&self) -> u64 {
        crate::plan::device_bytes(self.peak_bytes, self.arenas.iter().map(|a| a.bytes))
    }
}

/// One block of a block-reuse plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockEntry {
    /// Offset in the arena, bytes.
    pub offset: u64,
    /// Size, bytes (aligned).
    pub size: u64,
    /// `top` (laid out one after another) or `child` (nested by level-2 reuse).
    pub level: String,
    /// Index of the parent block, for children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    /// Why the block is special (zero-copy, atomic-clean, continuous...), if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Names of the buffers placed in it (not those of its children).
    pub members: Vec<String>,
}

/// One placed buffer; `start`/`end` inclusive op steps, `bytes` as planned (padded, aligned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferEntry {
    /// Name.
    pub name: String,
    /// Planned size, bytes.
    pub bytes: u64,
    /// First live step (inclusive).
    pub start: u64,
    /// Last live step (inclusive).
    pub end: u64,
    /// Offset, bytes.
    pub offset: u64,
    /// What it holds, when not an activation: `graph_input`, `graph_output`, `workspace` (an
    /// op's scratch, e.g. a TFLM kernel's request), `constant`.
    #[serde(default, skip_serializing_if = "is_activation")]
    pub kind: crate::problem::BufferKind,
    /// Gear (batch size) with dynamic batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gear: Option<u64>,
    /// The buffer's own offset alignment, bytes (the offset is a multiple of the least common
    /// multiple of this and the plan's `alignment`); 1 when absent.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub alignment: u64,
    /// The offset the input pins it to (MiniMalloc CSV `offset`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_offset: Option<u64>,
    /// Reuse rules in force for this buffer under the plan's options: `no_reuse` (flag or reuse
    /// off) and `zero_copy` (flag or graph I/O while zero-copy) share no byte with any buffer
    /// of a compatible gear; `atomic_clean` (centralised clean) owns its bytes from step 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Stream of the producer, when the problem has several streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<u32>,
    /// Producer's step (absent for graph inputs), when the problem has several streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<u64>,
    /// Steps of the readers, when the problem has several streams.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<u64>,
    /// Memory type (0 = HBM, omitted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub memory_type: u32,
    /// Continuous group membership: members must be adjacent in index order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuous: Option<ContinuousEntry>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_activation(k: &crate::problem::BufferKind) -> bool {
    *k == crate::problem::BufferKind::Activation
}

fn one() -> u64 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(x: &u64) -> bool {
    *x == 1
}

/// One strategy's run, what its entry of the file is made from.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// The registry name asked for.
    pub strategy: &'a str,
    /// The plan (of the file's problem).
    pub plan: &'a Plan,
    /// The options it was made with.
    pub options: &'a PlanOptions,
    /// Wall time of planning, microseconds.
    pub time_us: u64,
    /// With dynamic-batch gears: the overlay report ([`super::overlay_report`]).
    pub overlay: Option<&'a OverlayReport>,
}

impl<'a> Run<'a> {
    /// The run of `strategy` (the registry name asked for) that `analysis` judged.
    pub fn of(strategy: &'a str, analysis: &'a super::analysis::Analysis) -> Self {
        Run {
            strategy,
            plan: &analysis.plan,
            options: &analysis.options,
            time_us: analysis.time_us,
            overlay: analysis.overlay.as_ref(),
        }
    }
}

/// What the file says about the problem beyond its buffers (from [`crate::Lowered`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// Tensors of unknown size (not planned).
    pub unknown: &'a [UnknownTensor],
    /// What aliasing views saved, when asked for.
    pub views: Option<&'a AliasReport>,
    /// The op order the lifetimes follow ([`crate::Lowered::order`]).
    pub order: ScheduleOrder,
    /// With [`ScheduleOrder::Memory`]: the order search's report ([`crate::Lowered::search`]).
    pub search: Option<&'a crate::graph::order::OrderReport>,
    /// With `--fuse` or `--in-place`: what they did ([`crate::Lowered::rewrites`]).
    pub rewrites: Option<&'a crate::graph::rewrite::RewriteReport>,
}

impl PlanFile {
    /// The file for `runs` over `problem`; `input` is the file as named to the user (the
    /// CLI's path, the playground's file name).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] when the problem's sizes overflow `u64`
    /// ([`crate::lower_bound`]).
    pub fn new(
        input: &str,
        problem: &Problem,
        extras: Extras<'_>,
        runs: &[Run<'_>],
    ) -> Result<Self> {
        let bounds = crate::bound::lower_bound(problem)?;
        let streams = multi_stream(problem);
        Ok(PlanFile {
            format: FORMAT.into(),
            input: input.into(),
            problem: ProblemSummary {
                buffers: problem.buffers.len(),
                steps: problem.steps,
                lower_bound_bytes: bounds.lower_bound,
                no_reuse_bytes: bounds.no_reuse,
                weight_bytes: problem.weight_bytes,
                ops: if streams {
                    problem
                        .ops
                        .iter()
                        .map(|o| OpEntry {
                            name: o.name.clone(),
                            stream: o.stream,
                            preds: o.preds.clone(),
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                unknown_size_tensors: extras.unknown.len(),
                unknown_size: extras
                    .unknown
                    .iter()
                    .map(|u| UnknownEntry {
                        name: u.name.clone(),
                        op: u.op.clone(),
                        why: u.why.clone(),
                    })
                    .collect(),
                aliased_views: extras.views.map(|v| v.tensors),
                aliased_view_bytes: extras.views.map(|v| v.bytes),
                schedule: (extras.order != ScheduleOrder::File)
                    .then(|| extras.order.name().to_string()),
                op_order: if extras.order == ScheduleOrder::Memory {
                    problem.ops.iter().map(|o| o.name.clone()).collect()
                } else {
                    Vec::new()
                },
                schedule_search: extras.search.cloned(),
                rewrites: extras.rewrites.cloned(),
            },
            plans: runs
                .iter()
                .map(|r| {
                    let mut e = entry(problem, r, streams);
                    e.notes.extend(extras.search.map(|s| s.note()));
                    e
                })
                .collect(),
            playground: None,
            single_op: None,
            training: None,
            hybrid: Vec::new(),
            access_cost: None,
        })
    }

    /// Adds the graph-I/O report ([`crate::report::graph_io::graph_io`]) to each plan:
    /// `plans[k]` is the plan of entry `k`, made on `lowered` (lowered from `graph`).
    pub fn add_graph_io(
        &mut self,
        graph: &crate::graph::Graph,
        lowered: &crate::graph::Lowered,
        plans: &[&Plan],
    ) {
        for (e, p) in self.plans.iter_mut().zip(plans) {
            e.graph_io = crate::report::graph_io::graph_io(graph, lowered, p);
        }
    }

    /// Adds the access cost per memory type of `problem` at `options`' planned sizes, priced
    /// with `costs` ([`crate::simulate::access`]). The traffic does not depend on the
    /// strategy: one report for every plan.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`].
    pub fn add_access_cost(
        &mut self,
        problem: &Problem,
        options: &PlanOptions,
        costs: &crate::simulate::access::AccessCosts,
    ) -> Result<()> {
        let mut sized = problem.clone();
        for b in &mut sized.buffers {
            b.size = options.planned_size(b)?;
        }
        let bytes = crate::simulate::access::by_memory_type(&sized)?;
        self.access_cost = Some(crate::simulate::access::price(&bytes, costs)?);
        Ok(())
    }

    /// Adds to each plan the arena TFLM needs for it (a TFLite model's): its peak as the head,
    /// `arena`'s variable tensors as the known tail ([`crate::report::tflm_arena`]).
    pub fn add_tflm_arena(&mut self, arena: &crate::report::tflm_arena::TflmArena) {
        for e in &mut self.plans {
            e.tflm_arena = Some(arena.size(e.peak_bytes));
        }
    }

    /// Adds the single-op view of `problem` ([`crate::report::single_op::single_op`]).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`].
    pub fn add_single_op(&mut self, problem: &Problem, options: &PlanOptions) -> Result<()> {
        self.single_op = Some(crate::report::single_op::single_op(problem, options)?);
        Ok(())
    }

    /// Adds the atomic-clean report ([`crate::report::atomic_clean::atomic_clean`]) to each
    /// plan: `plans[k]` is the plan of entry `k`, made on `problem` with `options`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] when a range overflows `u64`.
    pub fn add_atomic_clean(
        &mut self,
        problem: &Problem,
        plans: &[&Plan],
        options: &PlanOptions,
    ) -> Result<()> {
        for (e, p) in self.plans.iter_mut().zip(plans) {
            e.atomic_clean = Some(crate::report::atomic_clean::atomic_clean(
                problem, p, options,
            )?);
        }
        Ok(())
    }

    /// The file as pretty-printed JSON with a final newline: the bytes both front ends write.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] if serialisation fails (it does not for these types).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self)
            .map(|s| s + "\n")
            .map_err(|e| Error::invalid(e.to_string()))
    }
}

/// Whether the problem's ops run on more than one stream.
pub fn multi_stream(problem: &Problem) -> bool {
    let first = problem.ops.first().map(|o| o.stream);
    problem.ops.iter().any(|o| Some(o.stream) != first)
}

fn entry(problem: &Problem, r: &Run<'_>, streams: bool) -> PlanEntry {
    let (plan, opts) = (r.plan, r.options);
    PlanEntry {
        strategy: plan.strategy.clone(),
        alignment: plan.alignment,
        peak_bytes: plan.peak,
        plan_time_us: r.time_us,
        settings: Some(Settings {
            strategy: r.strategy.into(),
            alignment: opts.alignment,
            ge_padding: opts.padding == Padding::Ge,
            reuse: opts.reuse,
            zero_copy_io: opts.zero_copy_io,
            atomic_centralised: opts.atomic_centralised,
            zero_copy_reuse: opts.zero_copy_reuse,
            expandable_memory: opts.expandable_memory,
            zero_copy_alignment: opts.zero_copy_alignment,
        }),
        overlay_bytes: r.overlay.map(|o| o.overlay_bytes),
        side_by_side_bytes: r.overlay.map(|o| o.side_by_side_bytes),
        gears: r.overlay.map(|o| o.gears.clone()),
        arenas: plan.arenas.clone(),
        stats: plan.stats.clone(),
        notes: plan.notes.clone(),
        search: plan.search,
        ge: plan.ge.clone(),
        blocks: plan
            .blocks
            .iter()
            .map(|b| BlockEntry {
                offset: b.offset,
                size: b.size,
                level: match b.level {
                    BlockLevel::Top => "top".into(),
                    BlockLevel::Child => "child".into(),
                },
                parent: b.parent,
                tag: b.tag.clone(),
                members: b
                    .members
                    .iter()
                    .filter_map(|&m| problem.buffers.get(m.index()).map(|x| x.name.clone()))
                    .collect(),
            })
            .collect(),
        graph_io: Vec::new(),
        atomic_clean: None,
        tflm_arena: None,
        buffers: problem
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| BufferEntry {
                name: b.name.clone(),
                bytes: plan.sizes.get(i).copied().unwrap_or(0),
                start: b.start,
                end: b.end,
                offset: plan.offsets.get(i).copied().unwrap_or(0),
                kind: b.kind,
                gear: b.gear,
                alignment: b.alignment.max(1),
                fixed_offset: b.fixed_offset,
                // the rules in force, so that `validate` needs no options
                flags: semantics::flags_in_force(b, opts)
                    .into_iter()
                    .map(String::from)
                    .collect(),
                stream: streams.then_some(b.stream),
                producer: if streams { b.producer } else { None },
                readers: if streams {
                    b.readers.clone()
                } else {
                    Vec::new()
                },
                memory_type: b.memory_type,
                continuous: b.continuous.map(|c| ContinuousEntry {
                    group: c.group,
                    index: c.index,
                }),
            })
            .collect(),
    }
}

impl Settings {
    /// The core's options these settings stand for.
    pub fn options(&self) -> PlanOptions {
        PlanOptions {
            alignment: self.alignment,
            padding: if self.ge_padding {
                Padding::Ge
            } else {
                Padding::None
            },
            reuse: self.reuse,
            zero_copy_io: self.zero_copy_io,
            atomic_centralised: self.atomic_centralised,
            zero_copy_reuse: self.zero_copy_reuse,
            expandable_memory: self.expandable_memory,
            zero_copy_alignment: self.zero_copy_alignment,
            ..PlanOptions::default()
        }
    }
}

fn gear_text(g: Option<u64>) -> String {
    g.map_or_else(|| String::from("none"), |g| alloc::format!("{g}"))
}

/// Checks one plan of a plan file against the model it claims to plan, loaded again with
/// the same settings: the problem's steps, bounds and (several streams) ops; the same buffers
/// (by name, each once), each with the model's live range, gear, memory type, alignment, pin,
/// continuous group and (several streams) stream, producer and readers; with the plan's
/// settings, each buffer's bytes exactly the tensor's planned size and its flags the rules in
/// force. A plan file is self-consistent when [`check_entry`] passes; this catches one whose
/// buffers were renamed, resized, moved in time or stripped of their rules together with its
/// own figures, or that was made for other dims.
///
/// # Errors
/// The first difference, in words, naming the buffer (escaped).
pub fn check_against_model(
    file: &PlanFile,
    e: &PlanEntry,
    model: &Problem,
) -> core::result::Result<(), String> {
    let esc = |s: &str| -> String { s.escape_debug().collect() };
    if e.buffers.len() != model.buffers.len() {
        return Err(alloc::format!(
            "lists {} buffers, the model has {} (planned with other --dim, --input, --size or --batch?)",
            e.buffers.len(),
            model.buffers.len()
        ));
    }
    let p = &file.problem;
    if p.steps != model.steps {
        return Err(alloc::format!(
            "the problem has {} steps in the file, {} in the model",
            p.steps,
            model.steps
        ));
    }
    let bounds = crate::bound::lower_bound(model).map_err(|err| err.to_string())?;
    if (p.lower_bound_bytes, p.no_reuse_bytes) != (bounds.lower_bound, bounds.no_reuse) {
        return Err(alloc::format!(
            "the file's lower bound and no-reuse total are {} and {} bytes, the model's {} and {}",
            p.lower_bound_bytes,
            p.no_reuse_bytes,
            bounds.lower_bound,
            bounds.no_reuse
        ));
    }
    let streams = multi_stream(model);
    if streams {
        let same = p.ops.len() == model.ops.len()
            && p.ops
                .iter()
                .zip(&model.ops)
                .all(|(f, m)| f.name == m.name && f.stream == m.stream && f.preds == m.preds);
        if !same {
            return Err(String::from(
                "the ops' streams and edges in the file differ from the model's",
            ));
        }
    }
    let opts = e.settings.as_ref().map(Settings::options);
    let index: alloc::collections::BTreeMap<&str, usize> = model
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.as_str(), i))
        .collect();
    let mut seen = alloc::vec![false; model.buffers.len()];
    for b in &e.buffers {
        let Some(&i) = index.get(b.name.as_str()) else {
            return Err(alloc::format!(
                "buffer '{}' is not a tensor of the model",
                esc(&b.name)
            ));
        };
        if core::mem::replace(&mut seen[i], true) {
            return Err(alloc::format!("buffer '{}' is listed twice", esc(&b.name)));
        }
        let m = &model.buffers[i];
        let name = esc(&b.name);
        if (b.start, b.end) != (m.start, m.end) {
            return Err(alloc::format!(
                "buffer '{name}' lives in steps [{}, {}] in the plan, [{}, {}] in the model",
                b.start,
                b.end,
                m.start,
                m.end
            ));
        }
        if b.bytes < m.size {
            return Err(alloc::format!(
                "buffer '{name}' has {} bytes in the plan, the tensor needs {}",
                b.bytes,
                m.size
            ));
        }
        if b.gear != m.gear || b.memory_type != m.memory_type {
            return Err(alloc::format!(
                "buffer '{name}' is of gear {}, memory type {} in the plan, gear {}, memory type {} in the model",
                gear_text(b.gear),
                b.memory_type,
                gear_text(m.gear),
                m.memory_type
            ));
        }
        if b.alignment != m.alignment.max(1) || b.fixed_offset != m.fixed_offset {
            return Err(alloc::format!(
                "buffer '{name}': its alignment or pinned offset differs from the model's"
            ));
        }
        if b.continuous.map(|c| (c.group, c.index)) != m.continuous.map(|c| (c.group, c.index)) {
            return Err(alloc::format!(
                "buffer '{name}': its continuous group differs from the model's"
            ));
        }
        if streams
            && (b.stream != Some(m.stream) || b.producer != m.producer || b.readers != m.readers)
        {
            return Err(alloc::format!(
                "buffer '{name}': its stream, producer or readers differ from the model's"
            ));
        }
        if let Some(o) = &opts {
            let want = o.planned_size(m).map_err(|err| err.to_string())?;
            // under the zero-copy alignment option a zero-copy block of its own is the padded
            // size rounded to that alignment (GE block strategies), else the usual size
            let zero_copy_size = match o.zero_copy_alignment {
                Some(z) if b.flags.iter().any(|f| f == "zero_copy") => Some(
                    crate::error::round_up(
                        o.padded(m.size, &m.name).map_err(|err| err.to_string())?,
                        z.max(1),
                        "zero-copy block",
                    )
                    .map_err(|err| err.to_string())?,
                ),
                _ => None,
            };
            if b.bytes != want && Some(b.bytes) != zero_copy_size {
                return Err(alloc::format!(
                    "buffer '{name}' has {} bytes in the plan; under the plan's settings the tensor is planned at {want}",
                    b.bytes
                ));
            }
            let mut have: Vec<&str> = b.flags.iter().map(String::as_str).collect();
            let mut rules = semantics::flags_in_force(m, o);
            have.sort_unstable();
            rules.sort_unstable();
            if have != rules {
                return Err(alloc::format!(
                    "buffer '{name}' carries the rules {have:?} in the plan; the model under the plan's settings gives {rules:?}"
                ));
            }
        } else if (m.flags.no_reuse || m.flags.zero_copy)
            && !b.flags.iter().any(|f| f == "no_reuse" || f == "zero_copy")
        {
            // without settings the options are unknown, but a no_reuse or zero_copy tensor
            // (or one merged with such a ref output) is exclusive under any of them
            return Err(alloc::format!(
                "buffer '{name}' never shares memory in the model (no_reuse or zero_copy), but the plan does not say so"
            ));
        }
    }
    Ok(())
}

/// Checks one plan of a plan file against the file's problem figures and the independent
/// validator; the reason names the buffer (escaped).
///
/// # Errors
/// Why the plan is not valid, in words.
pub fn check_entry(file: &PlanFile, e: &PlanEntry) -> core::result::Result<(), String> {
    let esc = |s: &str| -> String { s.escape_debug().collect() };
    let p = &file.problem;
    if let Some(ge) = &e.ge {
        // GE's statistics are the plan's own figures: HBM's memoffset is the headline peak,
        // another type's its arena, and the named stats render the typed ones
        for m in &ge.memory_types {
            let arena = if m.memory_type == 0 {
                e.peak_bytes
            } else {
                e.arenas
                    .iter()
                    .find(|a| a.memory_type == m.memory_type)
                    .map_or(0, |a| a.bytes)
            };
            if m.memoffset != arena {
                return Err(alloc::format!(
                    "GE's memoffset of memory type {} is {} bytes, its arena {arena}",
                    m.memory_type,
                    m.memoffset
                ));
            }
        }
        if ge.stats() != e.stats {
            return Err(String::from(
                "the named stats differ from the typed GE statistics",
            ));
        }
    }
    if e.alignment == 0 {
        return Err(String::from("plan alignment 0 (must be >= 1)"));
    }
    if e.buffers.len() != p.buffers {
        return Err(alloc::format!(
            "lists {} buffers, the problem has {}",
            e.buffers.len(),
            p.buffers
        ));
    }
    // a buffer's planned bytes are at least its own: all of them together at least the
    // no-reuse total the problem summary states (catches a shrunk buffer)
    let planned = e
        .buffers
        .iter()
        .fold(0u64, |a, b| a.saturating_add(b.bytes));
    if planned < p.no_reuse_bytes {
        return Err(alloc::format!(
            "the buffers' bytes add up to {planned}, below the problem's no-reuse total {}: a buffer is smaller than its tensor",
            p.no_reuse_bytes
        ));
    }
    let mut buffers = Vec::with_capacity(e.buffers.len());
    for b in &e.buffers {
        let mut x = Buffer::new(b.name.clone(), b.bytes, b.start, b.end);
        x.gear = b.gear;
        x.alignment = b.alignment;
        x.fixed_offset = b.fixed_offset;
        x.stream = b.stream.unwrap_or(0);
        x.producer = b.producer;
        x.readers = b.readers.clone();
        x.memory_type = b.memory_type;
        x.continuous = b.continuous.map(|c| crate::Continuous {
            group: c.group,
            index: c.index,
            outputs: false,
        });
        for f in &b.flags {
            match f.as_str() {
                "no_reuse" => x.flags.no_reuse = true,
                "zero_copy" => x.flags.zero_copy = true,
                "atomic_clean" => x.flags.atomic_clean = true,
                other => {
                    return Err(alloc::format!(
                        "buffer '{}': unknown flag '{}' (known: no_reuse, zero_copy, atomic_clean)",
                        esc(&b.name),
                        esc(other)
                    ))
                }
            }
        }
        buffers.push(x);
    }
    let problem = Problem {
        name: file.input.clone(),
        buffers,
        steps: p.steps,
        // the ops' streams and edges: what the cross-stream check needs
        ops: p
            .ops
            .iter()
            .map(|o| crate::OpInfo {
                name: o.name.clone(),
                stream: o.stream,
                preds: o.preds.clone(),
                ..crate::OpInfo::default()
            })
            .collect(),
        ..Problem::default()
    };
    problem.check().map_err(|err| err.to_string())?;
    if let Some(b) = e
        .buffers
        .iter()
        .find(|b| b.offset.checked_add(b.bytes).is_none())
    {
        return Err(alloc::format!(
            "buffer '{}': offset {} + {} bytes overflows u64",
            esc(&b.name),
            b.offset,
            b.bytes
        ));
    }
    let mut plan = Plan::new(
        e.strategy.clone(),
        e.alignment,
        e.buffers.iter().map(|b| b.offset).collect(),
        e.buffers.iter().map(|b| b.bytes).collect(),
    )
    .map_err(|err| err.to_string())?;
    plan.arenas = e.arenas.clone();
    if plan.arenas.is_empty() && plan.peak > e.peak_bytes {
        // name the buffer that ends highest (Plan::new checked that no end overflows)
        let top = e
            .buffers
            .iter()
            .filter(|b| b.bytes > 0)
            .max_by_key(|b| b.offset.saturating_add(b.bytes))
            .map_or_else(String::new, |b| esc(&b.name));
        return Err(alloc::format!(
            "buffer '{top}' ends at byte {}, above peak_bytes {}",
            plan.peak,
            e.peak_bytes
        ));
    }
    // With one arena per memory type the headline is HBM's, and the bound counts every type:
    // the arenas together must reach it (the most live bytes of all types at one step is at
    // most the sum of each type's most).
    let covered = e.device_bytes();
    if covered < p.lower_bound_bytes {
        return Err(if e.arenas.is_empty() {
            alloc::format!(
                "peak_bytes {} is below the problem's lower bound {}: no plan can be that small",
                e.peak_bytes,
                p.lower_bound_bytes
            )
        } else {
            alloc::format!(
                "the arenas add up to {covered} bytes, below the problem's lower bound {}: no plan can be that small",
                p.lower_bound_bytes
            )
        });
    }
    plan.peak = e.peak_bytes;
    // the flags in the file are the rules in force: no options needed
    let rules = crate::Rules {
        reuse: true,
        zero_copy_io: false,
        zero_copy_reuse: false,
        atomic_centralised: true,
        zero_copy_alignment: e.settings.as_ref().and_then(|s| s.zero_copy_alignment),
    };
    crate::validate_with(&problem, &plan, &rules).map_err(|v| v.describe(&problem))
}
