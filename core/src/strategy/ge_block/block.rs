//! A GE `MemoryBlock` as the planner builds it: units sharing one region over time, and the
//! child blocks nested in it by level-2 reuse.

use alloc::vec::Vec;

use super::units::{Role, Unit, UnitId, Units};

/// One block (GE `MemoryBlock`, memory_block.h).
#[derive(Debug, Clone)]
pub(crate) struct BlockData {
    /// Units in time order (level 1 only appends a unit after the previous one died, and
    /// level 2 only splits off subsets), so their live ranges are sorted and disjoint.
    pub units: Vec<UnitId>,
    /// GE `AlignSize()`: the largest unit's size (already a multiple of the block alignment).
    pub size: u64,
    /// Stream of the first unit (GE `stream_id_`).
    pub stream: u32,
    /// Gear (GE `batch_label_`).
    pub gear: Option<u64>,
    /// Memory type.
    pub mem: u32,
    /// GE `reuse_mem_`: may host children and be nested at level 2, may be overlaid by gear.
    pub reusable: bool,
    /// Why the block is special.
    pub tag: Option<&'static str>,
    /// Continuous-input position (group, index), GE `continuous_block_` with `input_index_`.
    pub continuous: Option<(u32, u32)>,
    /// A continuous-input block that may host ordinary children at level 2: its unaligned
    /// size, which is both its sort size and its capacity (GE `CompareLifeInterval` and
    /// `AddContinuousLifeReuseBlock` use the largest `no_align_size`).
    pub host: Option<u64>,
    /// Offset alignment (the block alignment, or a larger one for odd-aligned buffers).
    pub align: u64,
    /// Parent block, once nested by level 2.
    pub parent: Option<usize>,
    /// Children in placement order (GE `child_blocks_`).
    pub children: Vec<usize>,
    /// GE `child_offset_`: sum of the children's `AlignSize()` so far.
    pub cursor: u64,
}

impl BlockData {
    /// A new block holding `unit` (GE `ApplyMemory` creating a block).
    pub(crate) fn new(id: UnitId, unit: &Unit) -> Self {
        let (reusable, tag, continuous, host) = match unit.role {
            Role::Reusable => (true, None, None, None),
            Role::NoReuse(t) => (false, Some(t), None, None),
            Role::ContinuousInput { group, index, host } => {
                (false, Some("continuous-input"), Some((group, index)), host)
            }
            Role::ZeroCopy { .. } => (false, Some("zero-copy"), None, None),
            Role::Atomic => (false, Some("atomic-clean"), None, None),
        };
        let tag = tag.or(if unit.buffers.len() > 1 {
            Some("continuous-output")
        } else {
            None
        });
        BlockData {
            units: alloc::vec![id],
            size: unit.size,
            stream: unit.stream,
            gear: unit.gear,
            mem: unit.mem,
            reusable,
            tag,
            continuous,
            host,
            align: unit.align,
            parent: None,
            children: Vec::new(),
            cursor: 0,
        }
    }

    /// First step any own unit is live (GE `GetLifeBegin`).
    pub(crate) fn begin(&self, units: &Units) -> u64 {
        self.units
            .first()
            .and_then(|&u| units.list.get(u))
            .map_or(0, |u| u.start)
    }

    /// Last step any own unit is live (GE `GetLifeEnd`).
    pub(crate) fn end(&self, units: &Units) -> u64 {
        self.units
            .last()
            .and_then(|&u| units.list.get(u))
            .map_or(0, |u| u.end)
    }
}
