//! A `.tflite` model on the page: what TFLM's arena needs beyond a pane's plan, and a pane's
//! plan as files TFLM runs (the planned `.tflite` and the C header, made by core's
//! `report::tflm_export` as the CLI's `--emit-tflite` / `--emit-header` make them).

use memplan_core::import::load::{load_as, Format as CoreFormat};
use memplan_core::report::tflm_export;
use memplan_core::Plan;

use crate::model::{load_options, Built, Lowering, Source};

/// What a `.tflite` file says about TFLM's arena beyond the head a plan needs, and the
/// `kTensorArenaSize` sentences: core's, which the CLI's table and plan file use too (carried
/// by [`Built`], so it crosses from the parsing worker as JSON).
pub use memplan_core::report::tflm_arena::TflmArena;

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
