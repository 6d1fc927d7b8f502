//! The arena a TFLM user sizes (`kTensorArenaSize`) for a plan of a `.tflite` model, one
//! computation for the CLI's table and plan file and the page's TFLM pane.
//!
//! TFLM's arena is the **head** (its non-persistent section: activations and scratch buffers,
//! what a plan lays out; its size is the plan's peak) plus the **tail** (persistent: the
//! `is_variable` tensors, each rounded up to 16 B, `micro_allocator.cc` `AllocateVariables`,
//! and TFLM's own structures: tensor and node arrays, kernels' op data, which depend on the
//! TFLM build and are not in the file). So `kTensorArenaSize` is at least the head plus the
//! variable tensors' bytes; TFLM's own structures come on top.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use crate::units::grouped;

/// The most bytes of TFLM's head, `i32::MAX` = 2,147,483,647: the offline plan holds int32
/// offsets (`OfflineMemoryAllocation`, tflite-micro `docs/memory_management.md`), and TFLM's
/// memory planners take sizes and give offsets as `int` (`micro_memory_planner.h`
/// `AddBuffer(int size, ...)`, `GetOffsetForBuffer(int, int* offset)`). MCU arenas are far
/// smaller.
pub const TFLM_MAX_BYTES: u64 = 0x7fff_ffff;

/// A warning when a head of `peak` bytes passes [`TFLM_MAX_BYTES`], for a plan of `problem`
/// (a TFLite model's): it names its largest buffer, the likely cause (a shape, a dim bound too
/// large). `None` when the head fits.
pub fn head_limit_warning(problem: &crate::Problem, peak: u64) -> Option<String> {
    if peak <= TFLM_MAX_BYTES {
        return None;
    }
    let largest = problem
        .buffers
        .iter()
        .max_by_key(|b| b.size)
        .map(|b| {
            format!(
                " the largest tensor is '{}', {} B:",
                b.name,
                grouped(b.size)
            )
        })
        .unwrap_or_default();
    Some(format!(
        "the head is {} B, past {} B: TFLM cannot run it (its offline plan and planner hold int32 offsets and sizes) and MCU arenas are far smaller;{largest} check the shapes and --dim values",
        grouped(peak),
        grouped(TFLM_MAX_BYTES)
    ))
}

/// What a `.tflite` file says about TFLM's arena beyond the head a plan needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TflmArena {
    /// `is_variable` tensors: TFLM keeps them in its persistent tail.
    pub persistent_tensors: usize,
    /// Their bytes, each rounded up to 16 B (`micro_allocator.cc` `AllocateVariables`);
    /// `None` when one has an unknown size.
    pub persistent_bytes: Option<u64>,
    /// Ops whose TFLM reference kernel requests scratch buffers in the head
    /// (`RequestScratchBufferInArena`) of a size memplan cannot tell, `(op name, op type)`:
    /// not planned.
    pub scratch_ops: Vec<(String, String)>,
    /// Scratch requests of TFLM's reference kernels that memplan sizes and plans (as the ops'
    /// workspaces): how many, by how many ops, and their bytes (each rounded up to 16 B).
    pub scratch_planned: (usize, usize, u64),
}

/// The arena figures for one plan's head, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ArenaSize {
    /// The head: the plan's peak (TFLM's non-persistent section).
    pub head_bytes: u64,
    /// `is_variable` tensors in the persistent tail.
    pub persistent_tensors: usize,
    /// Their bytes, each rounded up to 16 B; `None` when one has an unknown size.
    pub persistent_tensor_bytes: Option<u64>,
    /// `head_bytes + persistent_tensor_bytes`: the least `kTensorArenaSize`, TFLM's own
    /// structures on top; `None` when the variable tensors' bytes are unknown (or the sum
    /// passes `u64`).
    pub at_least_bytes: Option<u64>,
}

impl ArenaSize {
    /// The `kTensorArenaSize` sentence: the head, the variable tensors of the tail and their
    /// sum, with TFLM's own structures on top.
    pub fn sentence(&self) -> String {
        let head = format!(
            "kTensorArenaSize: at least the head, {} B (this plan's peak), plus TFLM's persistent tail",
            grouped(self.head_bytes)
        );
        match (self.persistent_tensor_bytes, self.at_least_bytes) {
            (Some(tail), Some(sum)) => format!(
                "{head}: {} B of variable tensors ({} B in all) and TFLM's own structures.",
                grouped(tail),
                grouped(sum)
            ),
            _ => format!("{head} (variable tensors of unknown size, and TFLM's own structures)."),
        }
    }

    /// The persistent tail as far as the file tells it, in one sentence.
    pub fn tail_sentence(&self) -> String {
        match (self.persistent_tensors, self.persistent_tensor_bytes) {
            (0, _) => "Persistent tail: no variable tensors; TFLM's own structures (tensor and node arrays, kernels' op data) depend on the TFLM build and are not known from the file.".to_string(),
            (n, Some(b)) => format!(
                "Persistent tail: {} B of {n} variable tensor{} (16 B each rounded), plus TFLM's own structures, which depend on the TFLM build and are not known from the file.",
                grouped(b),
                if n == 1 { "" } else { "s" }
            ),
            (n, None) => format!(
                "Persistent tail: not known from the file ({n} variable tensor{} of unknown size, and TFLM's own structures).",
                if n == 1 { "" } else { "s" }
            ),
        }
    }
}

impl TflmArena {
    /// The arena facts of a loaded file's TFLM info.
    #[cfg(feature = "tflite")]
    pub fn of(info: &crate::import::tflite::TfliteInfo) -> TflmArena {
        TflmArena {
            persistent_tensors: info.persistent.len(),
            persistent_bytes: info.persistent_bytes,
            scratch_ops: info
                .scratch_ops
                .iter()
                .filter(|s| s.unknown.is_some())
                .map(|s| (s.op.clone(), s.op_type.clone()))
                .collect(),
            scratch_planned: {
                let known = info.scratch_ops.iter().filter(|s| s.unknown.is_none());
                (
                    known.clone().map(|s| s.bytes.len()).sum(),
                    known.count(),
                    info.scratch_bytes(),
                )
            },
        }
    }

    /// The arena figures for a plan whose head (peak) is `head` bytes.
    pub fn size(&self, head: u64) -> ArenaSize {
        ArenaSize {
            head_bytes: head,
            persistent_tensors: self.persistent_tensors,
            persistent_tensor_bytes: self.persistent_bytes,
            at_least_bytes: self.persistent_bytes.and_then(|b| head.checked_add(b)),
        }
    }

    /// The arena size to write (`kTensorArenaSize`) for a plan whose head is `head` bytes, as
    /// sentences: [`ArenaSize::sentence`], [`ArenaSize::tail_sentence`], then the scratch
    /// buffers memplan plans and those the file cannot tell.
    pub fn advice(&self, head: u64) -> Vec<String> {
        let size = self.size(head);
        let mut lines = vec![size.sentence(), size.tail_sentence()];
        let (requests, ops, bytes) = self.scratch_planned;
        if requests > 0 {
            lines.push(format!(
                "Scratch buffers: {requests} request{} of TFLM's reference kernels ({ops} op{}, {} B in all) are in the head, planned like tensors, live during their op; CMSIS-NN and Xtensa kernels request other sizes.",
                if requests == 1 { "" } else { "s" },
                if ops == 1 { "" } else { "s" },
                grouped(bytes)
            ));
        }
        if !self.scratch_ops.is_empty() {
            let ops: Vec<String> = self
                .scratch_ops
                .iter()
                .take(6)
                .map(|(name, ty)| format!("{name} ({ty})"))
                .collect();
            let more = self.scratch_ops.len().saturating_sub(ops.len());
            lines.push(format!(
                "Scratch buffers not known: {} op{} request{} them in the head ({}{}) at sizes memplan cannot tell, so TFLM's head can exceed this plan's.",
                self.scratch_ops.len(),
                if self.scratch_ops.len() == 1 { "" } else { "s" },
                if self.scratch_ops.len() == 1 { "s" } else { "" },
                ops.join(", "),
                if more > 0 { format!(", {more} more") } else { String::new() }
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arena_is_the_head_plus_the_variable_tensors() {
        let t = TflmArena {
            persistent_tensors: 7,
            persistent_bytes: Some(10_240),
            ..TflmArena::default()
        };
        let s = t.size(672);
        assert_eq!(s.at_least_bytes, Some(10_912));
        assert_eq!(
            s.sentence(),
            "kTensorArenaSize: at least the head, 672 B (this plan's peak), plus TFLM's persistent tail: 10,240 B of variable tensors (10,912 B in all) and TFLM's own structures."
        );
        assert!(t.advice(672)[1].starts_with("Persistent tail: 10,240 B of 7 variable tensors"));
        // a variable of unknown size: no sum; a sum past u64: none either
        let u = TflmArena {
            persistent_tensors: 1,
            ..TflmArena::default()
        };
        assert_eq!(u.size(672).at_least_bytes, None);
        assert!(u
            .size(672)
            .sentence()
            .ends_with("(variable tensors of unknown size, and TFLM's own structures)."));
        assert_eq!(t.size(u64::MAX).at_least_bytes, None);
    }
}
