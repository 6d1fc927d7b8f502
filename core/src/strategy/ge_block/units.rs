//! Allocation units: what GE hands to `ApplyMemory` one at a time, and which region each
//! goes to.
//!
//! A unit is one buffer (a GE symbol: ref and in-place tensors are already merged into one
//! buffer by graph lowering), or all outputs of a continuous-output op together
//! (GE `ApplyContinuousMemory`: one block sized to the sum of the outputs, each rounded to 512).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::plan::PlanOptions;
use crate::problem::{BufferKind, Problem};

/// Index of a unit in [`Units::list`].
pub(crate) type UnitId = usize;

/// Where a unit goes and whether it takes part in reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A feature map that takes part in level-1 and level-2 reuse.
    Reusable,
    /// A feature-map block of its own, never reused; the tag says why.
    NoReuse(&'static str),
    /// One input of a continuous-input op (GE `continuous_block_`): a block of its own, not
    /// reused, placed with the other inputs of its group in input order.
    ContinuousInput {
        /// Group id.
        group: u32,
        /// Input index.
        index: u32,
        /// GE lets the block host ordinary children at level 2 in its unaligned size
        /// (memory_block.cc `AddContinuousLifeReuseBlock`): that size (the padded size
        /// before rounding to the block alignment), or `None` if the buffer may not be
        /// reused (no-reuse flag, reuse off, zero-copy or atomic-clean).
        host: Option<u64>,
    },
    /// A zero-copy user buffer (GE: model I/O), placed after everything else.
    ZeroCopy {
        /// A graph input (placed after the outputs, sorted by size ascending).
        input: bool,
        /// Under GE's I/O reuse options ([`PlanOptions::zero_copy_reuse`]) the block hosts
        /// ordinary children at level 2 in its real size (memory_block.cc
        /// `AddZeroCopyLifeReuseBlock`): that size (padded, not rounded to the block
        /// alignment); `None` otherwise.
        host: Option<u64>,
    },
    /// Cleaned by the centralised memset (GE `atomicCleanPolicy=0`): no reuse, placed after
    /// the feature maps.
    Atomic,
}

/// One allocation unit.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// The buffers, in continuous index order for a group; one otherwise.
    pub buffers: Vec<usize>,
    /// Size in bytes: the buffer's planned size, or the sum of the group's planned sizes.
    pub size: u64,
    /// GE's real size (`real_size_list_`): the padded size before rounding to the block
    /// alignment; for a group, `size`.
    pub real: u64,
    /// First step live.
    pub start: u64,
    /// Last step live.
    pub end: u64,
    /// Stream of the producer.
    pub stream: u32,
    /// Gear (GE batch label).
    pub gear: Option<u64>,
    /// Memory type.
    pub mem: u32,
    /// A workspace (allocated after the step's outputs).
    pub workspace: bool,
    /// Offset alignment beyond the plan's, for standalone odd-aligned buffers.
    pub align: u64,
    /// Region and reuse.
    pub role: Role,
    /// Position of the unit among the inputs of the op at its last step (GE releases an op's
    /// freed inputs in input-anchor order); `usize::MAX` when that op does not read it.
    pub release_rank: usize,
}

/// Op types whose outputs may not take memory others freed (GE block_mem_assigner.cc,
/// pre-reuse false: life begin forced to the start): their outputs live from step 0.
const NO_PRE_REUSE: &[&str] = &[
    "Data",
    "AippData",
    "AnnData",
    "QueueData",
    "RefData",
    "Proposal",
    "Constant",
    "ConstantOp",
    "GetNext",
    "AdpGetNext",
    "DynamicGetNext",
    "DropOutGenMask",
];

/// Op types whose outputs are never released (GE post-reuse false: life end `kMaxLifeTime`):
/// their outputs live to the last step.
const NO_POST_REUSE: &[&str] = &[
    "Data",
    "AippData",
    "QueueData",
    "RefData",
    "Enter",
    "RefEnter",
    "NextIteration",
    "RefNextIteration",
    "GetNext",
    "AdpGetNext",
    "DynamicGetNext",
    "DropOutGenMask",
];

/// Every unit of a problem, plus the buffers placed outside units.
#[derive(Debug, Clone, Default)]
pub(crate) struct Units {
    /// The units, in buffer order of their first buffer.
    pub list: Vec<Unit>,
    /// Planned size of every buffer (padding, then alignment).
    pub sizes: Vec<u64>,
    /// Buffers with a fixed offset: placed there, below the arena GE lays out.
    pub pinned: Vec<usize>,
    /// Remarks for the plan's notes.
    pub notes: Vec<alloc::string::String>,
    /// Step of the last `AtomicAddrClean` or `MemSet` op (GE `atomic_addr_clean_id_`,
    /// `NodeUtils::IsLikeAtomicClean`): a continuous block hosts no child produced before it.
    pub last_atomic: Option<u64>,
    /// The live-set lower bound of each memory type's reusable buffers (GE `theory_min`
    /// before the no-reuse bytes), by memory type, once computed: it depends on the units
    /// only, so `ge-block`'s two variants share it.
    pub live_min: core::cell::RefCell<BTreeMap<u32, u64>>,
    /// Level 1's events in order ([`super::level1::events`]), once built: they depend on the
    /// units only, so `ge-block`'s two variants share them.
    pub events: core::cell::OnceCell<Vec<super::level1::Event>>,
}

impl Units {
    /// Splits `problem` into units under `options`.
    ///
    /// Precedence when several blockers apply to one buffer: zero size (no block at all, GE
    /// `zero_memory_list_`), fixed offset, alignment the block alignment cannot give,
    /// continuous group, zero-copy, atomic clean, `no_reuse`, then reuse off.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] if a padded size or a group's sum exceeds `u64`.
    pub(crate) fn new(problem: &Problem, options: &PlanOptions) -> Result<Self> {
        let sizes = crate::strategy::planned_sizes(problem, options)?;
        let align = options.alignment.max(1);
        let mut out = Units {
            sizes,
            last_atomic: (0u64..)
                .zip(&problem.ops)
                .filter(|(_, o)| matches!(o.op_type.as_str(), "AtomicAddrClean" | "MemSet"))
                .map(|(k, _)| k)
                .last(),
            ..Units::default()
        };
        // (group, gear) -> unit: each gear's clone of a continuous-output op applies its own block
        // (GE clones the graph per gear, MultiBatchClonePass; ApplyContinuousMemory per clone)
        let mut groups: BTreeMap<(u32, Option<u64>), usize> = BTreeMap::new();
        let mut conflicting_continuous = 0usize;
        // GE rule: a block read on another stream stays alive on its own stream until an
        // edge returns (rule 1 of the module docs).
        let cross_ends = super::streams::cross_stream_ends(problem);
        let (mut extended, mut never_released) = (0usize, 0usize);
        for (i, b) in problem.buffers.iter().enumerate() {
            let size = out.sizes.get(i).copied().unwrap_or(0);
            let mut b_end = cross_ends
                .as_ref()
                .and_then(|e| e.get(i).copied())
                .unwrap_or(b.end);
            if b_end > b.end && size > 0 {
                extended += 1;
            }
            // GE's node-type rules, by the producer's op type.
            let op_type = b
                .producer
                .and_then(|p| usize::try_from(p).ok())
                .and_then(|p| problem.ops.get(p))
                .map_or("", |o| o.op_type.as_str());
            let b_start = if NO_PRE_REUSE.contains(&op_type) {
                0
            } else {
                b.start
            };
            // The root graph's inputs allow post-reuse under GE's input-reuse option
            // (`ge.exec.inputReuseMemIndexes`, here `zero_copy_io = false`).
            let io_reuse = b.kind == BufferKind::GraphInput && !options.zero_copy_io;
            if NO_POST_REUSE.contains(&op_type) && !io_reuse {
                let last = problem.steps.saturating_sub(1).max(b_end);
                never_released += usize::from(last > b_end && size > 0);
                b_end = last;
            }
            if b.fixed_offset.is_some() {
                out.pinned.push(i);
                continue;
            }
            if size == 0 {
                continue;
            }
            let odd = align % b.alignment.max(1) != 0;
            let zero_copy = b.flags.zero_copy
                || (options.zero_copy_io
                    && matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput));
            // a user buffer or a centrally cleaned one keeps its role (and its placement
            // apart) whatever its alignment: its block is aligned to both below
            let special = zero_copy || (b.flags.atomic_clean && options.atomic_centralised);
            let mut role = if odd && !(special && b.continuous.is_none()) {
                Role::NoReuse("alignment")
            } else if let Some(c) = b.continuous {
                if zero_copy || (b.flags.atomic_clean && options.atomic_centralised) {
                    conflicting_continuous += 1;
                }
                if c.outputs {
                    // One unit for the whole group.
                    if let Some(&u) = groups.get(&(c.group, b.gear)) {
                        let unit = &mut out.list[u];
                        unit.buffers.push(i);
                        unit.size = add(unit.size, size, "size of a continuous-output block")?;
                        unit.real = unit.size;
                        unit.start = unit.start.min(b_start);
                        unit.end = unit.end.max(b_end);
                        if special {
                            // adjacency first, but a user buffer or a cleaned one is never reused
                            unit.role = Role::NoReuse("continuous zero-copy or atomic-clean");
                        }
                        if b.flags.no_reuse || !options.reuse {
                            unit.role = Role::NoReuse(if b.flags.no_reuse {
                                "no-reuse"
                            } else {
                                "reuse-off"
                            });
                        }
                        continue;
                    }
                    groups.insert((c.group, b.gear), out.list.len());
                    if special {
                        Role::NoReuse("continuous zero-copy or atomic-clean")
                    } else {
                        Role::Reusable
                    }
                } else {
                    let host = if special || b.flags.no_reuse || !options.reuse {
                        None
                    } else {
                        Some(options.padded(b.size, &b.name)?)
                    };
                    Role::ContinuousInput {
                        group: c.group,
                        index: c.index,
                        host,
                    }
                }
            } else if zero_copy {
                let io = matches!(b.kind, BufferKind::GraphInput | BufferKind::GraphOutput);
                let host = if (options.zero_copy_reuse || b.flags.zero_copy_reuse)
                    && options.reuse
                    && io
                    && !b.flags.zero_copy
                    && !b.flags.no_reuse
                    // its bytes are cleaned before the graph runs (GE: a graph input and a
                    // centrally cleaned output never share a block, block_type_list.cc)
                    && !(b.flags.atomic_clean && options.atomic_centralised)
                {
                    Some(options.padded(b.size, &b.name)?)
                } else {
                    None
                };
                Role::ZeroCopy {
                    input: b.kind == BufferKind::GraphInput,
                    host,
                }
            } else if b.flags.atomic_clean && options.atomic_centralised {
                Role::Atomic
            } else if b.kind == BufferKind::Constant {
                Role::NoReuse("constant")
            } else {
                Role::Reusable
            };
            if role == Role::Reusable && b.flags.no_reuse {
                role = Role::NoReuse("no-reuse");
            }
            if role == Role::Reusable && !options.reuse {
                role = Role::NoReuse("reuse-off");
            }
            let real = if b.continuous.is_some_and(|c| c.outputs) {
                size
            } else {
                options.padded(b.size, &b.name)?.min(size)
            };
            out.list.push(Unit {
                buffers: alloc::vec![i],
                size,
                real,
                start: b_start,
                end: b_end,
                stream: b.stream,
                gear: b.gear,
                mem: b.memory_type,
                workspace: b.kind == BufferKind::Workspace,
                align: if odd { options.alignment_of(b)? } else { align },
                role,
                release_rank: usize::MAX,
            });
        }
        // Release order (rule 8): the rank of each unit's buffers among the inputs of the op
        // at the unit's last step.
        for u in &mut out.list {
            let inputs = usize::try_from(u.end)
                .ok()
                .and_then(|k| problem.ops.get(k))
                .map(|o| o.inputs.as_slice())
                .unwrap_or(&[]);
            u.release_rank = u
                .buffers
                .iter()
                .filter_map(|&b| inputs.iter().position(|x| x.index() == b))
                .min()
                .unwrap_or(usize::MAX);
        }
        // Members of a continuous-output group go in index order.
        for u in &mut out.list {
            if u.buffers.len() > 1 {
                u.buffers.sort_by_key(|&i| {
                    problem
                        .buffers
                        .get(i)
                        .and_then(|b| b.continuous)
                        .map_or(0, |c| c.index)
                });
            }
        }
        if conflicting_continuous > 0 {
            out.notes.push(alloc::format!(
                "{conflicting_continuous} buffer(s) are both continuous and zero-copy or atomic-clean; \
                 placed as continuous (adjacency first)"
            ));
        }
        if extended > 0 {
            out.notes.push(alloc::format!(
                "{extended} buffer(s) read on another stream stay alive on their own stream \
                 until an edge returns (GE GetDiffStreamMaxLifeTime)"
            ));
        }
        if never_released > 0 {
            out.notes.push(alloc::format!(
                "{never_released} output(s) of Data, Enter, NextIteration or GetNext-like ops stay \
                 allocated to the last step (GE: never released for reuse)"
            ));
        }
        if !out.pinned.is_empty() {
            out.notes.push(alloc::format!(
                "{} buffer(s) with a fixed offset kept there; GE's arena starts above them",
                out.pinned.len()
            ));
        }
        Ok(out)
    }
}
