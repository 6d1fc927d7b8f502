//! The plan JSON schema `memplan.plan/1` (documented in `docs/formats.md`).

use memplan_core::{Buffer, Plan, Problem};
use serde::{Deserialize, Serialize};

/// The document.
#[derive(Serialize, Deserialize)]
pub struct PlanFile {
    /// Always `memplan.plan/1`.
    pub format: String,
    /// The input file as given.
    pub input: String,
    /// Problem figures.
    pub problem: ProblemSummary,
    /// One entry per strategy run.
    pub plans: Vec<PlanEntry>,
}

/// Problem figures, bytes.
#[derive(Serialize, Deserialize)]
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
}

/// One op of the schedule, at step = its index.
#[derive(Serialize, Deserialize)]
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
#[derive(Serialize, Deserialize, Clone, Copy)]
pub struct ContinuousEntry {
    /// Group id.
    pub group: u32,
    /// Position in the group, from 0.
    pub index: u32,
}

/// A tensor of unknown size (not planned).
#[derive(Serialize, Deserialize)]
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
#[derive(Serialize, Deserialize)]
pub struct PlanEntry {
    /// Strategy name (portfolio: `portfolio:WINNER`).
    pub strategy: String,
    /// Plan-wide alignment, bytes.
    pub alignment: u64,
    /// Arena size, bytes.
    pub peak_bytes: u64,
    /// Wall time of planning, microseconds.
    pub plan_time_us: u64,
    /// Per-gear figures with dynamic batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gears: Option<Vec<memplan_core::report::GearReport>>,
    /// Overlaid size of the gears (= peak) with dynamic batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay_bytes: Option<u64>,
    /// Sum of the gears planned alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_by_side_bytes: Option<u64>,
    /// With several memory types (GE strategies): one arena per type, each from offset 0;
    /// `peak_bytes` is HBM's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arenas: Vec<memplan_core::Arena>,
    /// Strategy statistics (GE: memoffset, theory_min, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stats: Vec<(String, u64)>,
    /// What the strategy says about its plan, in words (optimal: proven or the gap left).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Blocks of a block-reuse plan (GE), in the plan's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockEntry>,
    /// Every buffer.
    pub buffers: Vec<BufferEntry>,
}

/// One block of a block-reuse plan.
#[derive(Serialize, Deserialize)]
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
#[derive(Serialize, Deserialize)]
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

fn one() -> u64 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(x: &u64) -> bool {
    *x == 1
}

/// Checks one plan of a plan file against the file's problem figures and the independent
/// validator; the reason names the buffer (escaped).
pub fn check_entry(file: &PlanFile, e: &PlanEntry) -> Result<(), String> {
    let esc = |s: &str| -> String { s.escape_debug().collect() };
    let p = &file.problem;
    if e.buffers.len() != p.buffers {
        return Err(format!(
            "lists {} buffers, the problem has {}",
            e.buffers.len(),
            p.buffers
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
        x.continuous = b.continuous.map(|c| memplan_core::Continuous {
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
                    return Err(format!(
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
            .map(|o| memplan_core::OpInfo {
                name: o.name.clone(),
                stream: o.stream,
                preds: o.preds.clone(),
                ..memplan_core::OpInfo::default()
            })
            .collect(),
        ..Problem::default()
    };
    problem.check().map_err(|err| err.to_string())?;
    let mut plan = Plan::new(
        e.strategy.clone(),
        e.alignment,
        e.buffers.iter().map(|b| b.offset).collect(),
        e.buffers.iter().map(|b| b.bytes).collect(),
    )
    .map_err(|err| err.to_string())?;
    plan.arenas = e.arenas.clone();
    if plan.arenas.is_empty() && plan.peak > e.peak_bytes {
        return Err(format!(
            "buffers reach byte {} above peak_bytes {}",
            plan.peak, e.peak_bytes
        ));
    }
    if e.peak_bytes < p.lower_bound_bytes {
        return Err(format!(
            "peak_bytes {} is below the problem's lower bound {}: no plan can be that small",
            e.peak_bytes, p.lower_bound_bytes
        ));
    }
    plan.peak = e.peak_bytes;
    // the flags in the file are the rules in force: no options needed
    let rules = memplan_core::Rules {
        reuse: true,
        zero_copy_io: false,
        zero_copy_reuse: false,
        atomic_centralised: true,
    };
    memplan_core::validate_with(&problem, &plan, &rules).map_err(|v| v.describe(&problem))
}
