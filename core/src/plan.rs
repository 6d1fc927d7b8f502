//! Plans (an offset per buffer) and the options every strategy shares.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{round_up, Error, Result};
use crate::problem::{Buffer, BufferId};

/// How a tensor's raw byte size is padded before placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Padding {
    /// The raw size.
    #[default]
    None,
    /// GE's tensor size: `ceil32(bytes) + 32` (GE `TensorUtils::GetTensorMemorySizeInBytes`,
    /// `kDataMemAlignSize = 32`). A zero-element tensor gets 32 B (tensor_utils.cc: "if size
    /// is 0, align to 32 bytes"), so a block of one alignment unit.
    Ge,
}

/// Settings shared by every strategy, so plans compare on equal terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct PlanOptions {
    /// Offset and size granularity in bytes (>= 1). GE: 512 (`MEM_ALIGN_SIZE`). Every planned
    /// size is rounded up to it, every offset is a multiple of it.
    pub alignment: u64,
    /// Tensor padding rule applied before rounding to `alignment`.
    pub padding: Padding,
    /// Memory reuse on (default) or off. Off: every buffer gets its own bytes
    /// (GE `ge.exec.disableReuseMemory=1`).
    pub reuse: bool,
    /// Graph inputs and outputs are zero-copy user buffers, not reused, placed after feature
    /// maps (GE's default). When `false` they are not zero-copy and take part in reuse like
    /// activations: GE `ge.exec.graphIOMemAllocMode=ByGE` with `ge.exec.input_fusion_size=0`
    /// (block_mem_assigner.cc `IsZeroCopyBlock`: I/O the runtime allocates is not zero-copy;
    /// GE still never releases a Data output, so memplan's figure can be lower than GE's).
    /// The I/O reuse options are [`PlanOptions::zero_copy_reuse`], not this.
    pub zero_copy_io: bool,
    /// With `zero_copy_io`: graph inputs and outputs stay zero-copy user buffers placed after
    /// the feature maps, but take part in reuse over their live range (GE's I/O reuse options
    /// `ge.exec.inputReuseMemIndexes` / `outputReuseMemIndexes` for every index, and only
    /// those: `ge.exec.reuseZeroCopyMemory` is a run-time option; the user's
    /// buffers must then be 32-byte aligned). `ge-block` nests ordinary blocks inside a
    /// zero-copy block, side by side within its padded size (block_mem_assigner.cc level 2,
    /// memory_block.cc `AddZeroCopyLifeReuseBlock`), so they live in the zero-copy region;
    /// other strategies treat such buffers as activations. Default `false`.
    pub zero_copy_reuse: bool,
    /// Atomic-clean outputs are cleaned by one centralised memset and not reused
    /// (GE `ge.exec.atomicCleanPolicy=0`, default). When `false`, each is cleaned separately
    /// and reused like any tensor (policy 1).
    pub atomic_centralised: bool,
    /// GE only: cut the largest gear's region into virtual blocks of at most 400 MiB
    /// (expandable memory, `ge.exec.staticMemoryPolicy`).
    pub expandable_memory: bool,
    /// Search budget for anytime strategies, in milliseconds of the caller's clock.
    pub time_limit_ms: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            alignment: 512,
            padding: Padding::Ge,
            reuse: true,
            zero_copy_io: true,
            zero_copy_reuse: false,
            atomic_centralised: true,
            expandable_memory: false,
            time_limit_ms: 2000,
        }
    }
}

impl PlanOptions {
    /// Raw bytes, no padding, alignment 1: what bare buffer lists (MiniMalloc CSV) mean.
    pub fn exact() -> Self {
        PlanOptions {
            alignment: 1,
            padding: Padding::None,
            ..PlanOptions::default()
        }
    }

    /// Checks the options.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] if `alignment` is 0.
    pub fn check(&self) -> Result<()> {
        if self.alignment == 0 {
            return Err(Error::bad_option("alignment must be at least 1 byte"));
        }
        Ok(())
    }

    /// The padded size of `raw` bytes under [`Self::padding`], before alignment.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] naming `name`.
    pub fn padded(&self, raw: u64, name: &str) -> Result<u64> {
        match self.padding {
            Padding::None => Ok(raw),
            Padding::Ge if raw == 0 => Ok(32),
            // `format_args!`: the name is formatted only if the sum overflows, not once per
            // buffer of every plan
            Padding::Ge => crate::error::add(
                round_up(raw, 32, format_args!("padded size of '{name}'"))?,
                32,
                format_args!("padded size of '{name}'"),
            ),
        }
    }

    /// The offset alignment buffer `b` needs, in bytes: the least common multiple of the plan's
    /// and its own (an offset must be a multiple of both; `max` is wrong for 3 and 4).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] naming the buffer if the multiple exceeds `u64`.
    pub fn alignment_of(&self, b: &Buffer) -> Result<u64> {
        lcm(self.alignment.max(1), b.alignment.max(1)).ok_or_else(|| {
            Error::overflow(alloc::format!(
                "alignment of '{}' (lcm of {} and {})",
                b.name,
                self.alignment,
                b.alignment
            ))
        })
    }

    /// The size a buffer occupies in the arena: padded, then rounded up to the plan's
    /// alignment (GE: a tensor of B raw bytes occupies `ceil512(ceil32(B) + 32)`). A buffer's
    /// own [`Buffer::alignment`] (MiniMalloc's column) constrains its offset only, not its size.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] naming the buffer.
    pub fn planned_size(&self, b: &Buffer) -> Result<u64> {
        let padded = self.padded(b.size, &b.name)?;
        round_up(
            padded,
            self.alignment.max(1),
            format_args!("aligned size of '{}'", b.name),
        )
    }
}

/// The least common multiple of two alignments (both >= 1), `None` if it exceeds `u64`.
pub fn lcm(a: u64, b: u64) -> Option<u64> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x.max(1)).checked_mul(b)
}

/// Where a block sits in GE's block tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BlockLevel {
    /// Laid out one after another in the arena.
    Top,
    /// Nested inside a parent block by level-2 reuse.
    Child,
}

/// A block of a block-reuse plan (GE `MemoryBlock`): buffers that share one region over time.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Block {
    /// Buffers placed in this block (not counting those of its child blocks).
    pub members: Vec<BufferId>,
    /// Block size in bytes (aligned).
    pub size: u64,
    /// Offset of the block in the arena, in bytes.
    pub offset: u64,
    /// Top-level or child.
    pub level: BlockLevel,
    /// Index of the parent block for children.
    pub parent: Option<usize>,
    /// Why the block is special, if it is ("zero-copy", "atomic-clean", "continuous", ...).
    pub tag: Option<String>,
}

/// One offset space of a plan: GE lays each memory type out from 0 (graph_mem_assigner.cc
/// `AddBlockMemOffset`) and reports each apart (`[IMAS]AfterAssignMemory` per type).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Arena {
    /// Memory type ([`crate::Buffer::memory_type`]).
    pub memory_type: u32,
    /// Its name ([`memory_type_name`]).
    pub name: String,
    /// Size in bytes: the end of the last buffer or region of this type.
    pub bytes: u64,
}

/// The name of a memory type: 0 `HBM`, 1 `P2P_DDR`, 2 `HOST`, 3 `HOST_SVM` (GE's
/// `RT_MEMORY_*` kinds in this crate's numbering), otherwise `TYPE_N`.
pub fn memory_type_name(t: u32) -> alloc::borrow::Cow<'static, str> {
    match t {
        0 => "HBM".into(),
        1 => "P2P_DDR".into(),
        2 => "HOST".into(),
        3 => "HOST_SVM".into(),
        n => alloc::format!("TYPE_{n}").into(),
    }
}

/// A complete plan: an offset for every buffer of the problem.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Plan {
    /// Strategy that made it (for portfolios, the winner, e.g. `portfolio:best-fit-spatial`).
    pub strategy: String,
    /// Alignment in bytes the plan was made with.
    pub alignment: u64,
    /// Offset in bytes of each buffer, indexed like [`crate::Problem::buffers`].
    pub offsets: Vec<u64>,
    /// Size in bytes each buffer occupies (after padding and alignment), indexed like the buffers.
    pub sizes: Vec<u64>,
    /// Arena size in bytes: the largest `offset + size`; with [`Plan::arenas`], HBM's.
    pub peak: u64,
    /// With several memory types in separate offset spaces (GE): one arena per type, each from
    /// offset 0; buffers of different types never share bytes. Empty: one space for all.
    pub arenas: Vec<Arena>,
    /// GE blocks, for block-reuse strategies.
    pub blocks: Vec<Block>,
    /// Named figures a strategy reports (GE: `memoffset`, `theory_min`, `zero_copy`,
    /// `total_size`, `no_reuse`; hybrid: each variant's total), in bytes unless named otherwise.
    pub stats: Vec<(String, u64)>,
    /// Free-text remarks (which variant won, why a rule applied).
    pub notes: Vec<String>,
    /// For an anytime search (`optimal`): what it proved, as typed figures (its `stats` and
    /// `notes` render them); `None` for other strategies.
    #[cfg_attr(feature = "serde", serde(default))]
    pub search: Option<Search>,
    /// For GE's block-reuse strategies: GE's statistics as typed figures (its `stats`
    /// render them); `None` for other strategies.
    #[cfg_attr(feature = "serde", serde(default))]
    pub ge: Option<GeStats>,
}

/// GE's statistics of a block-reuse plan, as GE computes them (graph_mem_assigner.cc
/// `MemoryStat` and its `[IMAS]AfterAssignMemory` build-log line), bytes unless named
/// otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GeStats {
    /// One entry per memory type that holds anything, HBM (type 0) first, ascending.
    pub memory_types: Vec<GeMemoryStats>,
    /// Distinct streams of the problem's buffers (GE `streams[..]`).
    pub streams: u64,
    /// Top-level blocks of the reuse tree (levels 1 and 2: feature maps and continuous
    /// groups); the zero-copy, atomic-clean and fixed-offset blocks of [`Plan::blocks`] are
    /// not counted.
    pub blocks: u64,
    /// With dynamic batch: `(gear, bytes)` of each gear's feature maps (GE
    /// DynamicBatchMemAssigner), ascending by gear.
    pub gear_totals: Vec<(u64, u64)>,
    /// `ge-block` (GE HybridMemAssigner): both variants' arenas; `None` for one variant.
    pub hybrid: Option<HybridTotals>,
}

/// GE's figures of one memory type's offset space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GeMemoryStats {
    /// Memory type (0 = HBM; see [`memory_type_name`]).
    pub memory_type: u32,
    /// End of the space: GE `memoffset`, the arena size of this type.
    pub memoffset: u64,
    /// Feature-map region (ordinary and continuous-input blocks).
    pub feature_map: u64,
    /// Atomic-clean region.
    pub atomic: u64,
    /// Zero-copy region (graph inputs and outputs).
    pub zero_copy: u64,
    /// GE `total_size`: every tensor's planned size summed, as with no reuse.
    pub total_size: u64,
    /// GE `no_reuse`: the part that never takes part in reuse.
    pub no_reuse: u64,
    /// GE `theory_min`: live-set peak of the reusable part plus the no-reuse part.
    pub theory_min: u64,
}

/// The two variants' arenas that GE's hybrid compares (hybrid_mem_assigner.cc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HybridTotals {
    /// HBM arena of the binary-block variant.
    pub binary_block: u64,
    /// HBM arena of the max-block variant.
    pub max_block: u64,
}

impl GeStats {
    /// The figures as named statistics ([`Plan::stats`], the plan file's `stats`): per memory
    /// type `memoffset`, `feature_map`, `atomic`, `zero_copy`, `total_size`, `no_reuse`,
    /// `theory_min` (suffixed `@P2P_DDR` etc. for types other than HBM), then `streams`,
    /// `blocks`, `gear_N` and, for the hybrid, `binary_block` and `max_block`.
    pub fn stats(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = Vec::new();
        for m in &self.memory_types {
            let suffix = if m.memory_type == 0 {
                String::new()
            } else {
                alloc::format!("@{}", memory_type_name(m.memory_type))
            };
            for (k, x) in [
                ("memoffset", m.memoffset),
                ("feature_map", m.feature_map),
                ("atomic", m.atomic),
                ("zero_copy", m.zero_copy),
                ("total_size", m.total_size),
                ("no_reuse", m.no_reuse),
                ("theory_min", m.theory_min),
            ] {
                v.push((alloc::format!("{k}{suffix}"), x));
            }
        }
        v.push(("streams".into(), self.streams));
        v.push(("blocks".into(), self.blocks));
        for (g, t) in &self.gear_totals {
            v.push((alloc::format!("gear_{g}"), *t));
        }
        if let Some(h) = self.hybrid {
            v.push(("binary_block".into(), h.binary_block));
            v.push(("max_block".into(), h.max_block));
        }
        v
    }

    /// GE's build-log line per memory type (graph_mem_assigner.cc:
    /// `[IMAS]AfterAssignMemory : <graph> memoffset[..] theory_min[..] zero_copy[..]
    /// total_size[..] no_reuse[..] streams[..]`, with ` memory_type[NAME]` for types other
    /// than HBM), so memplan's figures can be held against a GE build log.
    pub fn imas_lines(&self, graph: &str) -> Vec<String> {
        self.memory_types
            .iter()
            .map(|m| {
                let ty = if m.memory_type == 0 {
                    String::new()
                } else {
                    alloc::format!(" memory_type[{}]", memory_type_name(m.memory_type))
                };
                alloc::format!(
                    "[IMAS]AfterAssignMemory : {graph} memoffset[{}] theory_min[{}] zero_copy[{}] total_size[{}] no_reuse[{}] streams[{}]{ty}",
                    m.memoffset, m.theory_min, m.zero_copy, m.total_size, m.no_reuse, self.streams
                )
            })
            .collect()
    }
}

/// Why an anytime search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Stop {
    /// Nothing left to search: the answer is proven (or, in capacity mode, decided).
    Finished,
    /// The node budget ran out.
    NodeLimit,
    /// The time limit ran out.
    TimeLimit,
    /// The clock reported a cancellation.
    Cancelled,
}

/// What an anytime search proved about its plan, bytes unless named otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Search {
    /// Proven lower bound on the peak: the live-set bound of the planned sizes, raised by
    /// searches that proved smaller capacities infeasible.
    pub lower_bound: u64,
    /// Peak of the plan.
    pub best_peak: u64,
    /// Peak of the heuristic seed.
    pub seed_peak: u64,
    /// `best_peak == lower_bound`: no plan can be smaller.
    pub proven_optimal: bool,
    /// Search nodes visited.
    pub nodes: u64,
    /// Why the search stopped.
    pub stop: Stop,
    /// Work of the large-input searches (all 0 for an exact search).
    pub counts: SearchCounts,
}

/// Work of the large-input searches of `optimal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SearchCounts {
    /// Heuristics the seed ran (of the portfolio's).
    pub seed_heuristics: u64,
    /// Window re-solves tried.
    pub windows: u64,
    /// Window re-solves that fitted (committed).
    pub windows_accepted: u64,
    /// Window re-solves searched to exhaustion without a fit: each proves that its freed
    /// buffers do not fit under its target with the rest of the plan where it was.
    #[cfg_attr(feature = "serde", serde(default))]
    pub windows_exhausted: u64,
    /// Window re-solves cut by their node budget or a limit: nothing proven.
    #[cfg_attr(feature = "serde", serde(default))]
    pub windows_cut: u64,
    /// Band moves at the peak tried (every free buffer above a floor around a tall buffer's
    /// lifetime re-solved against the fixed rest).
    #[cfg_attr(feature = "serde", serde(default))]
    pub bands: u64,
    /// Band moves that fitted (committed).
    #[cfg_attr(feature = "serde", serde(default))]
    pub bands_accepted: u64,
    /// Band moves searched to exhaustion without a fit (proven, as for windows).
    #[cfg_attr(feature = "serde", serde(default))]
    pub bands_exhausted: u64,
    /// Band moves cut by their node budget or a limit.
    #[cfg_attr(feature = "serde", serde(default))]
    pub bands_cut: u64,
    /// The most buffers one window or band freed that was searched to exhaustion at one
    /// byte under the final peak (against the rest of the plan as it then was): no plan
    /// under the peak moves only those; 0 when none was.
    #[cfg_attr(feature = "serde", serde(default))]
    pub exhausted_under_peak: u64,
    /// Relocations of a buffer tried.
    pub relocations: u64,
    /// Relocations kept.
    pub relocations_accepted: u64,
    /// Moves of the long-buffer layout search tried.
    pub layout_moves: u64,
    /// Layout moves kept.
    pub layout_moves_accepted: u64,
    /// The certificate of a large-input search: a band of `certificate_buffers` buffers
    /// (those live at some step of `certificate_from_step..=certificate_to_step` at or above
    /// offset `certificate_floor` bytes) searched to exhaustion one byte under the plan's
    /// peak with every other buffer where the plan has it: no plan under the peak differs
    /// from this one only in those buffers (kept at or above the floor). All 0 for none.
    #[cfg_attr(feature = "serde", serde(default))]
    pub certificate_buffers: u64,
    /// First step of the certificate's band.
    #[cfg_attr(feature = "serde", serde(default))]
    pub certificate_from_step: u64,
    /// Last step of the certificate's band.
    #[cfg_attr(feature = "serde", serde(default))]
    pub certificate_to_step: u64,
    /// Floor of the certificate's band, in bytes (0: every buffer live during its steps).
    #[cfg_attr(feature = "serde", serde(default))]
    pub certificate_floor: u64,
    /// The search variant that made the plan (`SolverParams::variant`, 0 the default).
    #[cfg_attr(feature = "serde", serde(default))]
    pub variant: u64,
    /// How many searches (variants, one thread each) ran side by side, this plan the best of
    /// them (`optimal::keep_best`); 0 for a search run alone.
    #[cfg_attr(feature = "serde", serde(default))]
    pub side_by_side: u64,
}

impl Search {
    /// The figures as named statistics ([`Plan::stats`], the plan file's `stats`):
    /// `lower_bound`, `best_peak`, `proven_optimal` (0/1), `nodes`, `seed_peak`, and the
    /// counts when any is non-zero.
    pub fn stats(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = [
            ("lower_bound", self.lower_bound),
            ("best_peak", self.best_peak),
            ("proven_optimal", u64::from(self.proven_optimal)),
            ("nodes", self.nodes),
            ("seed_peak", self.seed_peak),
        ]
        .into_iter()
        .map(|(k, x)| (String::from(k), x))
        .collect();
        let c = self.counts;
        if c != SearchCounts::default() {
            v.extend(
                [
                    ("seed_heuristics", c.seed_heuristics),
                    ("windows", c.windows),
                    ("windows_accepted", c.windows_accepted),
                    ("windows_exhausted", c.windows_exhausted),
                    ("windows_cut", c.windows_cut),
                    ("bands", c.bands),
                    ("bands_accepted", c.bands_accepted),
                    ("bands_exhausted", c.bands_exhausted),
                    ("bands_cut", c.bands_cut),
                    ("exhausted_under_peak", c.exhausted_under_peak),
                    ("relocations", c.relocations),
                    ("relocations_accepted", c.relocations_accepted),
                    ("layout_moves", c.layout_moves),
                    ("layout_moves_accepted", c.layout_moves_accepted),
                    ("certificate_buffers", c.certificate_buffers),
                    ("certificate_from_step", c.certificate_from_step),
                    ("certificate_to_step", c.certificate_to_step),
                    ("certificate_floor", c.certificate_floor),
                    ("variant", c.variant),
                    ("side_by_side", c.side_by_side),
                ]
                .into_iter()
                .map(|(k, x)| (String::from(k), x)),
            );
        }
        v
    }
}

/// `peak` with one offset space, else the sum of the arenas' bytes (saturating): what
/// [`Plan::device_bytes`] and the plan file's entries reckon alike.
pub(crate) fn device_bytes(peak: u64, arenas: impl ExactSizeIterator<Item = u64>) -> u64 {
    if arenas.len() == 0 {
        peak
    } else {
        arenas.fold(0u64, u64::saturating_add)
    }
}

impl Plan {
    /// The bytes the device must hold for this plan: [`Plan::peak`] with one offset space;
    /// with one arena per memory type ([`Plan::arenas`], GE), their sum (the headline peak
    /// is HBM's alone, so a P2P- or host-heavy plan would otherwise look free). What budgets,
    /// comparisons between plans and the ratio to the lower bound (which counts every type)
    /// use. Saturates at `u64::MAX` (arena sizes are checked when planned).
    pub fn device_bytes(&self) -> u64 {
        device_bytes(self.peak, self.arenas.iter().map(|a| a.bytes))
    }

    /// A plan from offsets and sizes; the peak is computed (the highest end of a buffer of at
    /// least one byte), checked.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`] if an `offset + size` exceeds `u64`.
    pub fn new(
        strategy: impl Into<String>,
        alignment: u64,
        offsets: Vec<u64>,
        sizes: Vec<u64>,
    ) -> Result<Self> {
        let mut peak = 0u64;
        for (o, s) in offsets.iter().zip(&sizes) {
            let end = crate::error::add(*o, *s, "offset + size")?;
            // a zero-size buffer takes no bytes: wherever it sits (a pin above the rest) it
            // does not raise the peak, as the validator's `offset + size <= peak` exempts it
            if *s > 0 {
                peak = peak.max(end);
            }
        }
        Ok(Plan {
            strategy: strategy.into(),
            alignment,
            offsets,
            sizes,
            peak,
            ..Plan::default()
        })
    }

    /// The value of a named statistic.
    pub fn stat(&self, name: &str) -> Option<u64> {
        self.stats.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn ge_padding_matches_ge_formula() {
        let o = PlanOptions::default();
        // floor((bytes + 63) / 32) * 32
        for bytes in [0u64, 1, 31, 32, 33, 1000, 1 << 20] {
            assert_eq!(
                o.padded(bytes, "t").unwrap(),
                (bytes + 63) / 32 * 32,
                "{bytes}"
            );
        }
        // tensor_utils.cc: "if size is 0, align to 32 bytes" (the formula gives it too)
        assert_eq!(o.padded(0, "t").unwrap(), 32);
        // an exact 1 MiB tensor costs 1 MiB + 512 in a 512-aligned arena
        let b = Buffer::new("t", 1 << 20, 0, 0);
        assert_eq!(o.planned_size(&b).unwrap(), (1 << 20) + 512);
    }

    #[test]
    fn planned_size_overflow_is_reported() {
        let b = Buffer::new("huge", u64::MAX - 3, 0, 0);
        let e = PlanOptions::default().planned_size(&b).unwrap_err();
        assert!(e.to_string().contains("'huge'"), "{e}");
    }
}
