//! A `.tflite` model on the page: what TFLM's arena needs beyond a pane's plan, and a pane's
//! plan as files TFLM runs (the planned `.tflite` and the C header, made by core's
//! `report::tflm_export` as the CLI's `--emit-tflite` / `--emit-header` make them).

use memplan_core::import::load::{load_as, Format as CoreFormat};
use memplan_core::import::tflite::TfliteInfo;
use memplan_core::report::tflm_export;
use memplan_core::Plan;
use serde::{Deserialize, Serialize};

use crate::model::{load_options, Built, Lowering, Source};

/// What a `.tflite` file says about TFLM's arena beyond the head a plan needs (carried by
/// [`Built`], so it crosses from the parsing worker as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
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

impl TflmArena {
    /// The arena facts of a loaded file's TFLM info.
    pub fn of(info: &TfliteInfo) -> TflmArena {
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

    /// The arena size to write (`kTensorArenaSize`) for a plan whose head is `head` bytes, as
    /// sentences: the head (TFLM's non-persistent section = the plan's peak), the persistent
    /// tail as far as the file tells it, the scratch buffers the file cannot tell.
    pub fn advice(&self, head: u64) -> Vec<String> {
        let mut lines = vec![format!(
            "kTensorArenaSize: at least the head, {} B (this plan's peak), plus TFLM's persistent tail.",
            crate::format::grouped(head)
        )];
        lines.push(match (self.persistent_tensors, self.persistent_bytes) {
            (0, _) => "Persistent tail: no variable tensors; TFLM's own structures (tensor and node arrays, kernels' op data) depend on the TFLM build and are not known from the file.".to_string(),
            (n, Some(b)) => format!(
                "Persistent tail: {} B of {n} variable tensor{} (16 B each rounded), plus TFLM's own structures, which depend on the TFLM build and are not known from the file.",
                crate::format::grouped(b),
                if n == 1 { "" } else { "s" }
            ),
            (n, None) => format!(
                "Persistent tail: not known from the file ({n} variable tensor{} of unknown size, and TFLM's own structures).",
                if n == 1 { "" } else { "s" }
            ),
        });
        let (requests, ops, bytes) = self.scratch_planned;
        if requests > 0 {
            lines.push(format!(
                "Scratch buffers: {requests} request{} of TFLM's reference kernels ({ops} op{}, {} B in all) are in the head, planned like tensors, live during their op; CMSIS-NN and Xtensa kernels request other sizes.",
                if requests == 1 { "" } else { "s" },
                if ops == 1 { "" } else { "s" },
                crate::format::grouped(bytes)
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

/// Which TFLM file a pane's download button asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TflmFile {
    /// The planned `.tflite` (the plan as `OfflineMemoryAllocation` metadata).
    Model,
    /// The C header (arena head size, offsets, `BufferPlan`).
    Header,
}

/// A pane's plan as TFLM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TflmFiles {
    /// The model with the plan as its `OfflineMemoryAllocation` metadata.
    pub tflite: Vec<u8>,
    /// The C header: head size, every offset, TFLM's `BufferPlan`.
    pub header: String,
    /// The head TFLM computes for the plan, bytes: the plan's peak, or above it when TFLM
    /// places scratch buffers higher around the exported offsets.
    pub head: u64,
}

/// The planned `.tflite` and C header of `plan`, a pane's plan (by `strategy`) of `built`,
/// the model `source` built under `bindings`, `gears` and `lowering`. The file is loaded again
/// (TFLM's facts and the file's bytes are not kept with the model) and must lower to the same
/// problem.
///
/// # Errors
/// A sentence for the pane: not a `.tflite` model, a model that changed since the plan, or
/// core's refusal (e.g. sizes other than TFLM's, a block strategy's blocks, gears).
pub fn files(
    source: &Source,
    built: &Built,
    bindings: &memplan_core::Bindings,
    gears: &[u64],
    lowering: &Lowering,
    strategy: &str,
    plan: &Plan,
) -> Result<TflmFiles, String> {
    let refused = |e: memplan_core::Error| format!("Cannot export to TFLM: {e}");
    let opts = load_options(bindings, gears, lowering);
    let loaded =
        load_as(CoreFormat::Tflite, &source.name, &source.bytes, &opts).map_err(refused)?;
    let (Some(graph), Some(info)) = (loaded.graph.as_ref(), loaded.tflite.as_ref()) else {
        return Err("Cannot export to TFLM: the open model is not a .tflite file".to_string());
    };
    if loaded.lowered.problem != built.problem {
        return Err(
            "Cannot export to TFLM: the model changed since this plan; wait for the pane to plan again"
                .to_string(),
        );
    }
    let export = tflm_export::tflm_offsets(&loaded.lowered, info, plan).map_err(refused)?;
    let tflite = tflm_export::planned_tflite(&source.bytes, &export).map_err(refused)?;
    let header = tflm_export::c_header(&export, info, graph, &source.name, strategy);
    Ok(TflmFiles {
        tflite,
        header,
        head: export.head,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{build_with, Origin};
    use crate::settings::{PaneSettings, Rules};

    fn person_detect() -> Source {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/models/tflite/tflite-micro/person_detect.tflite"
        );
        let bytes =
            std::fs::read(path).expect("testdata/models/tflite/tflite-micro/person_detect.tflite");
        Source::new("person_detect.tflite", Origin::File, bytes).unwrap()
    }

    fn plan(built: &Built, s: &PaneSettings) -> Plan {
        memplan_core::find_strategy(&s.strategy)
            .unwrap()
            .run(&built.problem, &s.options())
            .unwrap()
    }

    #[test]
    fn a_tflm_greedy_pane_exports_tflms_head_and_a_block_pane_is_refused() {
        let src = person_detect();
        let lowering = Lowering::default();
        let built = build_with(&src, &Default::default(), &[], &lowering).unwrap();
        let arena = built
            .tflm
            .clone()
            .expect("a .tflite model carries TFLM's facts");
        assert_eq!(arena.persistent_tensors, 0);
        let s = PaneSettings::default_under(0, Rules::Tflm, &[]);
        let p = plan(&built, &s);
        // TFLM's head for person_detect, measured with the tflite-micro wheel (issue 25)
        assert_eq!(p.peak, 55_296);
        let f = files(
            &src,
            &built,
            &Default::default(),
            &[],
            &lowering,
            &s.strategy,
            &p,
        )
        .unwrap();
        assert_eq!(f.head, 55_296);
        assert_eq!(&f.tflite[4..8], b"TFL3");
        assert!(
            f.header.contains("#define MEMPLAN_ARENA_HEAD_BYTES 55296u"),
            "{}",
            f.header
        );
        assert!(
            arena.advice(f.head)[0].contains("55,296 B"),
            "{:?}",
            arena.advice(f.head)
        );
        // GE's 512 B blocks are not TFLM's 16 B sizes: refused with core's reason, no panic
        let mut ge = PaneSettings::default_for(0, true, &[]);
        ge.strategy = "ge-block".into();
        let p = plan(&built, &ge);
        let e = files(
            &src,
            &built,
            &Default::default(),
            &[],
            &lowering,
            "ge-block",
            &p,
        )
        .unwrap_err();
        assert!(e.starts_with("Cannot export to TFLM: "), "{e}");
    }
}
