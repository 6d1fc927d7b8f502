//! A plan of a `.tflite` model as TFLM runs it: the `OfflineMemoryAllocation` offsets written
//! into the model, and a C header with the arena head size, every offset and TFLM's
//! `BufferPlan` for its `NonPersistentMemoryPlannerShim`.
//!
//! What TFLM does with an offline plan (`micro_allocation_info.cc`, `micro_allocator.cc`,
//! `memory_planner/greedy_memory_planner.cc`): each planned tensor with an offset other than -1
//! is placed at that offset from the start of the arena head, unchecked; tensors with -1 and
//! every scratch buffer are then placed online around them; the head is the largest end.
//! So an exported plan must:
//! - give every tensor TFLM plans its own offset, and -1 to every other one (weights,
//!   `is_variable` tensors, which TFLM keeps in its persistent tail, tensors never used);
//! - use TFLM's buffer sizes: the tensor's bytes rounded up to 16 B (`CreatePlan`), so that the
//!   head TFLM computes from the offsets is the plan's peak;
//! - put every offset on a 16 B boundary (TFLM's `MicroArenaBufferAlignment()`: kernels may
//!   rely on it) and within `int32`;
//! - plan one arena with no gears (TFLM has one schedule).
//!
//! A plan that breaks one of these is refused, naming the tensor and the rule; the plan's
//! validity itself is [`crate::validate`]'s business, checked before export by every caller.
//!
//! Scratch buffers (the kernels' requests, workspaces of the problem) cannot be written into
//! the file: the offline array has one entry per tensor. TFLM places them online, by its
//! greedy rule (size descending, each at the lowest offset clear of everything placed), around
//! the pinned tensors. [`TflmExport::deployed`] is that placement: the plan TFLM runs, whose
//! peak is the head TFLM reports. For `tflm-greedy`'s own plan it is the same plan (each
//! scratch buffer's first fit among more buffers is still its old offset, which stays clear);
//! another plan's scratch can land higher. The C header's `BufferPlan` (for
//! `NonPersistentMemoryPlannerShim`, which takes every offset from the plan) carries the
//! deployed offsets of the tensors then the scratch buffers, so both routes run at one head.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Graph, Lowered};
use crate::import::tflite::{with_offline_plan, TfliteInfo, TFLM_ALIGNMENT};
use crate::plan::Plan;

/// An exported plan: one offset per tensor of all subgraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TflmExport {
    /// By global tensor index (all tensors of all subgraphs in order): bytes from the start of
    /// TFLM's arena head, or -1 (not planned by this plan).
    pub offsets: Vec<i32>,
    /// The arena head TFLM needs for this plan, bytes: the deployed plan's peak (the plan's own
    /// peak when the model has no scratch buffers).
    pub head: u64,
    /// Buffers of the problem that are not tensors (scratch buffers from a kernel table): TFLM
    /// requests and places them online, around the offsets; named here, in request order.
    pub online: Vec<String>,
    /// Their offsets in the deployed plan, in the same order (for the `BufferPlan`).
    pub online_offsets: Vec<i32>,
    /// The plan TFLM runs: the tensors at the exported offsets, the scratch buffers where
    /// TFLM's greedy planner puts them around those (see the module).
    pub deployed: Plan,
}

/// The offsets of `plan` (a plan of `lowered.problem`) for a model of `info.tensor_count()`
/// tensors, checked against the rules of the module docs.
///
/// # Errors
/// [`ErrorKind::BadOption`] naming the tensor when the plan cannot run in TFLM as is: gears,
/// an offset off the 16 B grid or past `i32::MAX`, a planned size other than TFLM's (the
/// tensor's bytes rounded up to 16: plan with TFLM's default options), a peak above the head
/// TFLM would compute (a block strategy's blocks); [`ErrorKind::Invalid`] for a plan or a map
/// that does not fit the problem.
pub fn tflm_offsets(lowered: &Lowered, info: &TfliteInfo, plan: &Plan) -> Result<TflmExport> {
    let problem = &lowered.problem;
    let n = problem.buffers.len();
    if plan.offsets.len() != n || plan.sizes.len() != n || lowered.tensor_of.len() != n {
        return Err(Error::invalid(format!(
            "the plan has {} offsets for {n} buffers",
            plan.offsets.len()
        )));
    }
    if !problem.gears().is_empty() {
        return Err(Error::bad_option(
            "a plan with dynamic-batch gears cannot be exported to TFLM: it runs one schedule (drop --batch)",
        ));
    }
    let refuse = |name: &str, why: String| -> Result<TflmExport> {
        Err(Error::new(
            ErrorKind::BadOption,
            format!("cannot export '{name}' to TFLM: {why}"),
        ))
    };
    let mut offsets = alloc::vec![-1i32; info.tensor_count()];
    let mut online = Vec::new();
    let mut head = 0u64;
    // the tensor past TFLM's int32 limit that is the cause: the lowest offset (then the
    // largest) of those ending past it; the ones above it are only pushed up by it
    let mut past: Option<(u64, u64, &str)> = None;
    for (i, b) in problem.buffers.iter().enumerate() {
        let Some(t) = lowered.tensor_of[i] else {
            online.push(b.name.clone());
            continue;
        };
        if !b.aliases.is_empty() {
            return refuse(&b.name, format!("it shares its bytes with {:?}", b.aliases));
        }
        let want = crate::error::round_up(b.size, TFLM_ALIGNMENT, format_args!("'{}'", b.name))?;
        if want == 0 {
            continue; // TFLM plans no tensor of 0 bytes (needs_allocating)
        }
        let (off, size) = (plan.offsets[i], plan.sizes[i]);
        if size != want {
            return refuse(
                &b.name,
                format!(
                    "planned at {size} B, TFLM allocates {want} B ({} B rounded up to 16): plan with TFLM's sizes (no --padding, --align 16)",
                    b.size
                ),
            );
        }
        if off % TFLM_ALIGNMENT != 0 {
            return refuse(
                &b.name,
                format!("offset {off} is not a multiple of TFLM's 16 B arena alignment"),
            );
        }
        let end = crate::error::add(off, size, format_args!("end of '{}'", b.name))?;
        let Some(slot) = offsets.get_mut(t.index()) else {
            return Err(Error::invalid(format!(
                "tensor '{}' has index {}, the model has {} tensors",
                b.name,
                t.index(),
                info.tensor_count()
            )));
        };
        match (i32::try_from(off), i32::try_from(end)) {
            (Ok(o), Ok(_)) => *slot = o,
            _ => {
                if past.is_none_or(|(o, z, _)| {
                    (off, core::cmp::Reverse(size)) < (o, core::cmp::Reverse(z))
                }) {
                    past = Some((off, size, &b.name));
                }
            }
        }
        head = head.max(end);
    }
    if let Some((off, size, name)) = past {
        return refuse(
            name,
            format!(
                "bytes {off}..{} ({size} B) pass {} B, the int32 limit of TFLM's offline offsets and planner",
                off.saturating_add(size),
                crate::report::tflm_arena::TFLM_MAX_BYTES
            ),
        );
    }
    // every buffer's end: a block strategy's peak lies above it
    let mut all_end = head;
    for (&o, &z) in plan.offsets.iter().zip(&plan.sizes) {
        all_end = all_end.max(crate::error::add(o, z, "a buffer's end")?);
    }
    if plan.peak != all_end {
        return Err(Error::bad_option(format!(
            "the plan's peak is {} B but TFLM would need a head of {all_end} B for its offsets: export a packing plan planned with TFLM's sizes",
            plan.peak
        )));
    }
    let (deployed, online_offsets) = if online.is_empty() {
        (plan.clone(), Vec::new())
    } else {
        deploy(problem, &lowered.tensor_of, plan)?
    };
    Ok(TflmExport {
        offsets,
        head: deployed.peak,
        online,
        online_offsets,
        deployed,
    })
}

/// The plan TFLM runs from `plan`'s tensor offsets: tensors pinned, the other buffers placed
/// by TFLM's greedy rule (`tflm-greedy` honours pins first); the online offsets in order.
fn deploy(
    problem: &crate::Problem,
    tensor_of: &[Option<crate::graph::TensorId>],
    plan: &Plan,
) -> Result<(Plan, Vec<i32>)> {
    let mut pinned = problem.clone();
    for (i, b) in pinned.buffers.iter_mut().enumerate() {
        b.fixed_offset = tensor_of[i].map(|_| plan.offsets[i]);
    }
    let o = crate::import::tflite::tflm_plan_options();
    let mut deployed = crate::strategy::plan(&pinned, "tflm-greedy", &o)?;
    deployed.strategy.clone_from(&plan.strategy);
    if deployed.peak > plan.peak {
        deployed.notes.push(format!(
            "TFLM places the scratch buffers online around the exported offsets: head {} B, {} B above this plan's own {} B",
            deployed.peak,
            deployed.peak - plan.peak,
            plan.peak
        ));
    }
    let mut online = Vec::new();
    for (i, t) in tensor_of.iter().enumerate() {
        if t.is_none() {
            let off = deployed.offsets[i];
            online.push(i32::try_from(off).map_err(|_| {
                Error::bad_option(format!(
                    "scratch buffer '{}' lands at {off} B, past TFLM's int32 offsets",
                    problem.buffers[i].name
                ))
            })?);
        }
    }
    Ok((deployed, online))
}

/// `model` (the `.tflite` bytes) with `export` as its `OfflineMemoryAllocation` entry (any
/// previous one replaced).
///
/// # Errors
/// Those of [`with_offline_plan`].
pub fn planned_tflite(model: &[u8], export: &TflmExport) -> Result<Vec<u8>> {
    with_offline_plan(model, &export.offsets)
}

/// Text safe inside a C block comment: no `*/` nor `/*`, no control characters, at most 80
/// chars.
fn comment_safe(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(80)
        .collect();
    // neither end a comment (`*/`) nor open one inside it (`/*`: -Wcomment, an error under
    // -Werror)
    while let Some(p) = out.find("*/").or_else(|| out.find("/*")) {
        let with = if out[p..].starts_with("*/") {
            "* /"
        } else {
            "/ *"
        };
        out.replace_range(p..p + 2, with);
    }
    out
}

/// A C header (C99 and C++) for `export` of the model `model_name` planned by `strategy`:
/// - `MEMPLAN_ARENA_HEAD_BYTES`: the head the plan needs (TFLM's arena must hold it plus its
///   persistent tail, `MEMPLAN_PERSISTENT_TENSOR_BYTES` of which are variable tensors when known);
/// - `memplan_offsets[MEMPLAN_TENSOR_COUNT]`: every tensor's offset (-1: not planned here),
///   each line naming its subgraph, index and name;
/// - `memplan_buffer_plan`: TFLM's `BufferPlan` (`memory_planner/memory_plan_struct.h`) for
///   `NonPersistentMemoryPlannerShim`: the planned offsets in TFLM's `AddBuffer` order (planned
///   tensors in global order; scratch buffers, which follow them in TFLM, are not in the file).
///   Its layout is `BufferPlan`'s (an `int32_t` count, then one `int32_t` offset per buffer):
///   cast its address to `const tflite::BufferPlan*`.
pub fn c_header(
    export: &TflmExport,
    info: &TfliteInfo,
    graph: &Graph,
    model_name: &str,
    strategy: &str,
) -> String {
    use core::fmt::Write;
    let mut h = String::new();
    // TFLM's AddBuffer order: the planned tensors, then the scratch buffers
    let planned: Vec<i32> = export
        .offsets
        .iter()
        .copied()
        .filter(|&o| o >= 0)
        .chain(export.online_offsets.iter().copied())
        .collect();
    // writing to a String cannot fail
    let _ = writeln!(
        h,
        "/* memplan: TFLM offline memory plan of '{}', strategy {}.\n * Offsets are bytes from the start of TFLM's arena head (its non-persistent section). */",
        comment_safe(model_name),
        comment_safe(strategy)
    );
    h.push_str(
        "#ifndef MEMPLAN_TFLM_PLAN_H\n#define MEMPLAN_TFLM_PLAN_H\n\n#include <stdint.h>\n\n",
    );
    let _ = writeln!(
        h,
        "/* The arena head this plan needs (bytes): the largest offset + size. */\n#define MEMPLAN_ARENA_HEAD_BYTES {}u",
        export.head
    );
    match info.persistent_bytes {
        Some(b) => {
            let _ = writeln!(
                h,
                "/* Variable tensors, kept in TFLM's persistent tail (bytes); the tail also holds\n * TFLM's own structures, which depend on the build. */\n#define MEMPLAN_PERSISTENT_TENSOR_BYTES {b}u"
            );
        }
        None => h.push_str(
            "/* Variable tensors of unknown size: the persistent tail is not known. */\n",
        ),
    }
    if !export.online.is_empty() {
        let _ = writeln!(
            h,
            "/* {} scratch buffer(s), placed by TFLM online around the offsets below (the head\n * counts them); the BufferPlan lists them after the tensors. First: {} */",
            export.online.len(),
            comment_safe(&export.online[0])
        );
    }
    let _ = writeln!(
        h,
        "\n/* All tensors of all subgraphs, in order: the OfflineMemoryAllocation array. */\n#define MEMPLAN_TENSOR_COUNT {}\nstatic const int32_t memplan_offsets[MEMPLAN_TENSOR_COUNT > 0 ? MEMPLAN_TENSOR_COUNT : 1] = {{",
        export.offsets.len()
    );
    for (t, &off) in export.offsets.iter().enumerate() {
        let (sg, idx) = info
            .origin
            .get(t)
            .map_or((0, t), |o| (o.subgraph, o.index as usize));
        let name = graph.tensors.get(t).map_or("", |x| x.name.as_str());
        let _ = writeln!(
            h,
            "    {off}, /* [{t}] subgraph {sg} tensor {idx} '{}' */",
            comment_safe(name)
        );
    }
    if export.offsets.is_empty() {
        h.push_str("    -1\n");
    }
    h.push_str("};\n\n");
    let _ = writeln!(
        h,
        "/* TFLM's BufferPlan for NonPersistentMemoryPlannerShim (memory_plan_struct.h), same layout:\n *   tflite::NonPersistentMemoryPlannerShim planner(\n *       reinterpret_cast<const tflite::BufferPlan*>(&memplan_buffer_plan));\n * Entries: the planned tensors above, then the scratch buffers: TFLM's AddBuffer order. */\n#define MEMPLAN_BUFFER_COUNT {}\nstruct memplan_buffer_plan_t {{\n    int32_t buffer_count;\n    struct {{ int32_t offset; }} buffer_plan_entries[MEMPLAN_BUFFER_COUNT > 0 ? MEMPLAN_BUFFER_COUNT : 1];\n}};\nstatic const struct memplan_buffer_plan_t memplan_buffer_plan = {{\n    MEMPLAN_BUFFER_COUNT,\n    {{",
        planned.len()
    );
    for off in &planned {
        let _ = writeln!(h, "        {{{off}}},");
    }
    if planned.is_empty() {
        h.push_str("        {0},\n");
    }
    h.push_str("    }\n};\n\n#endif /* MEMPLAN_TFLM_PLAN_H */\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::TensorId;
    use crate::import::tflite::TensorOrigin;
    use crate::problem::{Buffer, Problem};
    use alloc::vec;

    fn lowered(sizes: &[(u64, u64, u64)], tensor_of: &[Option<usize>]) -> Lowered {
        let buffers = sizes
            .iter()
            .enumerate()
            .map(|(i, &(s, a, b))| Buffer::new(format!("t{i}"), s, a, b))
            .collect();
        Lowered {
            problem: Problem::from_buffers("m", buffers),
            schedule: Vec::new(),
            tensor_of: tensor_of.iter().map(|t| t.map(TensorId::new)).collect(),
            warnings: Vec::new(),
            unknown: Vec::new(),
            views: None,
            order: Default::default(),
            ..Lowered::default()
        }
    }

    fn info(n: u32) -> TfliteInfo {
        TfliteInfo {
            origin: (0..n)
                .map(|i| TensorOrigin {
                    subgraph: 0,
                    index: i,
                })
                .collect(),
            subgraph_offsets: vec![0],
            ..TfliteInfo::default()
        }
    }

    #[test]
    fn comment_safe_neither_closes_nor_opens_a_comment() {
        // a tensor name from a hostile file: `*/` would end the comment, `/*` trips -Wcomment
        assert_eq!(comment_safe("a*/ #error x /* y"), "a* / #error x / * y");
        assert_eq!(comment_safe("/*/"), "/ * /");
        assert!(!comment_safe("x/*/*/").contains("/*"));
        assert!(!comment_safe("x/*/*/").contains("*/"));
    }

    #[test]
    fn offsets_by_tensor_index_minus_one_elsewhere() {
        // tensors 0 (weight), 1 (10 B -> 16), 2 (20 B -> 32), 3 (variable): buffers of 1 and 2
        let l = lowered(&[(10, 0, 1), (20, 1, 2)], &[Some(1), Some(2)]);
        let o = crate::import::tflite::tflm_plan_options();
        let plan = crate::strategy::plan(&l.problem, "tflm-greedy", &o).unwrap();
        let e = tflm_offsets(&l, &info(4), &plan).unwrap();
        // by hand: 32 B [1,2] first @0, 16 B [0,1] meets it @32; head 48
        assert_eq!(e.offsets, [-1, 32, 0, -1]);
        assert_eq!(e.head, 48);
        let g = Graph::default();
        let h = c_header(&e, &info(4), &g, "m*/x", "tflm-greedy");
        assert!(h.contains("#define MEMPLAN_ARENA_HEAD_BYTES 48u"));
        assert!(h.contains("    32, /* [1] subgraph 0 tensor 1 '' */"));
        assert!(h.contains("#define MEMPLAN_BUFFER_COUNT 2"));
        assert!(h.contains("        {32},\n        {0},\n"));
        assert!(h.contains("'m* /x'"));
    }

    #[test]
    fn past_int32_the_tensor_that_crosses_the_limit_is_named() {
        // t0 16 B, t1 32 GiB, both live at step 1: greedy puts t1 (larger) at 0 and t0 at
        // 2^35; both end past i32::MAX, but t1 is the cause (t0 is only pushed up by it)
        let l = lowered(&[(16, 0, 1), (1 << 35, 0, 1)], &[Some(0), Some(1)]);
        let o = crate::import::tflite::tflm_plan_options();
        let plan = crate::strategy::plan(&l.problem, "tflm-greedy", &o).unwrap();
        assert_eq!(plan.offsets, [1 << 35, 0]);
        let e = tflm_offsets(&l, &info(2), &plan).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadOption);
        assert_eq!(
            alloc::format!("{e}"),
            "cannot export 't1' to TFLM: bytes 0..34359738368 (34359738368 B) pass 2147483647 B, the int32 limit of TFLM's offline offsets and planner"
        );
        let w = crate::report::tflm_arena::head_limit_warning(&l.problem, plan.peak).unwrap();
        assert!(
            w.starts_with("the head is 34,359,738,384 B, past 2,147,483,647 B"),
            "{w}"
        );
        assert!(
            w.contains("the largest tensor is 't1', 34,359,738,368 B"),
            "{w}"
        );
        // at the limit exactly: no warning
        assert_eq!(
            crate::report::tflm_arena::head_limit_warning(&l.problem, 2_147_483_647),
            None
        );
    }

    #[test]
    fn plans_tflm_cannot_run_are_refused() {
        let l = lowered(&[(10, 0, 1), (20, 1, 2)], &[Some(0), Some(1)]);
        // GE padding: sizes are not TFLM's
        let plan = crate::strategy::plan(&l.problem, "tflm-greedy", &crate::PlanOptions::default())
            .unwrap();
        let e = tflm_offsets(&l, &info(2), &plan).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadOption);
        assert!(alloc::format!("{e}").contains("TFLM allocates 16 B"), "{e}");
        // an offset off the 16 B grid
        let mut plan = crate::strategy::plan(
            &l.problem,
            "tflm-greedy",
            &crate::import::tflite::tflm_plan_options(),
        )
        .unwrap();
        plan.offsets[1] += 8;
        plan.peak += 8;
        let e = tflm_offsets(&l, &info(2), &plan).unwrap_err();
        assert!(alloc::format!("{e}").contains("not a multiple of"), "{e}");
        // a peak above the head the offsets give
        plan.offsets[1] -= 8;
        let e = tflm_offsets(&l, &info(2), &plan).unwrap_err();
        assert!(alloc::format!("{e}").contains("head of 48 B"), "{e}");
    }
}
