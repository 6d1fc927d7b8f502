//! Exports: plan JSON in the CLI's `memplan.plan/1` schema, and a CSV of tensors.

use memplan_core::report::plan_file::{Extras, PlanFile, Run};
use memplan_core::Problem;

use crate::analysis::PaneResult;
use crate::model::{BufInfo, Built};
use crate::settings::PaneSettings;

/// The plan file `memplan.plan/1` for the panes' plans, written by core's one writer
/// ([`PlanFile`]): for the same model and settings, the same bytes as `memplan plan --format
/// json` (times aside), plus `playground`, a link reopening the view, when given.
pub fn plan_json(
    input: &str,
    built: &Built,
    plans: &[(&PaneSettings, &PaneResult)],
    playground: Option<&str>,
) -> Result<String, String> {
    let runs: Vec<Run> = plans
        .iter()
        .map(|(settings, r)| Run::of(&settings.strategy, &r.analysis))
        .collect();
    let extras = Extras {
        unknown: &built.unknown,
        views: built.views.as_ref(),
        order: built.order,
        search: built.search.as_ref(),
        rewrites: None,
    };
    let mut file =
        PlanFile::new(input, &built.problem, extras, &runs).map_err(|e| e.to_string())?;
    // a runtime replay obeys none of GE's rules (analysis::REPLAY_RULES): its entry lists
    // none, so that `memplan validate` checks it as the page does
    for (entry, (settings, _)) in file.plans.iter_mut().zip(plans) {
        if crate::settings::is_runtime(&settings.strategy) {
            for b in &mut entry.buffers {
                b.flags.clear();
            }
        }
    }
    if let Some(t) = &built.tflm {
        // kTensorArenaSize per plan, as `memplan plan MODEL.tflite --format json` writes it
        file.add_tflm_arena(t);
    }
    file.playground = playground.map(str::to_string);
    file.to_json().map_err(|e| e.to_string())
}

/// One CSV cell (RFC 4180 quoting). A text starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return gets a leading `'` so that spreadsheets show it rather than run it as a
/// formula (OWASP, "CSV Injection").
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// One row per buffer: name, op, shape, dtype, raw and planned bytes, inclusive live range,
/// offset, and the dynamic-batch gear the tensor belongs to (empty: shared by all gears).
/// `r` is the whole plan, every gear's tensors with their planned sizes.
pub fn tensors_csv(problem: &Problem, info: &[BufInfo], r: &PaneResult) -> String {
    let mut s = String::from("name,op,shape,dtype,bytes,planned_bytes,start,end,offset,gear\n");
    for (i, b) in problem.buffers.iter().enumerate() {
        let inf = info.get(i).cloned().unwrap_or_default();
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            csv_field(&b.name),
            csv_field(&inf.op),
            csv_field(&inf.shape),
            csv_field(&inf.dtype),
            b.size,
            r.plan.sizes.get(i).copied().unwrap_or(0),
            b.start,
            b.end,
            r.plan.offsets.get(i).copied().unwrap_or(0),
            b.gear.map_or(String::new(), |g| g.to_string()),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::PaneSettings;
    use memplan_core::Buffer;

    #[test]
    fn plan_json_has_the_cli_schema() {
        let p = Problem::from_buffers(
            "p",
            vec![Buffer::new("a", 4, 0, 1), Buffer::new("b,\"x\"", 8, 1, 2)],
        );
        let s = PaneSettings::default_for(1, false, &[]);
        let r =
            crate::analysis::run(&p, &crate::analysis::PlanKey::new(&s, None), &|| 0.0).unwrap();
        let built = crate::model::Built::of_problem(p.clone());
        let json = plan_json("p.csv", &built, &[(&s, &r)], Some("https://x/#v=1")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["playground"], "https://x/#v=1");
        assert_eq!(v["plans"][0]["settings"]["strategy"], s.strategy.as_str());
        assert_eq!(v["plans"][0]["settings"]["alignment"], 1);
        assert_eq!(v["format"], "memplan.plan/1");
        assert_eq!(v["problem"]["buffers"], 2);
        assert_eq!(v["problem"]["steps"], 3);
        assert_eq!(v["problem"]["lower_bound_bytes"], 12);
        assert_eq!(v["plans"][0]["peak_bytes"], 12);
        assert_eq!(v["plans"][0]["buffers"][1]["end"], 2);
        let csv = tensors_csv(&p, &[], &r);
        assert!(csv.contains("\"b,\"\"x\"\"\""), "{csv}");
    }

    /// The page's export for a model and its default panes, and core's writer over core's
    /// load pipeline with the CLI's options (`memplan plan FILE --format json`, which
    /// cli/tests/plan_file.rs shows prints exactly that): the same bytes, times aside.
    fn page_writes_the_cli_file(file: &str, bindings: &[(&str, u64)], gears: &[u64]) {
        use memplan_core::import::load::{load, LoadOptions};
        let bytes = std::fs::read(format!(
            "{}/../static/samples/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("sample file");
        let bindings: memplan_core::Bindings =
            bindings.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        let src =
            crate::model::Source::new(file, crate::model::Origin::File, bytes.clone()).unwrap();
        let built = crate::model::build(&src, &bindings, gears).unwrap();
        // two static plans at GE's defaults (the CLI's `plan` has no runtime allocator)
        let mut packed = PaneSettings::default_for(1, true, &[]);
        packed.strategy = "greedy-size-best-fit".into();
        let panes = [PaneSettings::default_for(0, true, &[]), packed];
        let results: Vec<_> = panes
            .iter()
            .map(|s| {
                crate::analysis::run(
                    &built.problem,
                    &crate::analysis::PlanKey::new(s, None),
                    &|| 0.0,
                )
                .unwrap()
            })
            .collect();
        let pairs: Vec<_> = panes.iter().zip(&results).collect();
        let page = plan_json(file, &built, &pairs, None).unwrap();

        let opts = LoadOptions {
            dims: bindings,
            gears: gears.to_vec(),
            ..LoadOptions::default()
        };
        let loaded = load(file, &bytes, &opts).unwrap();
        let problem = &loaded.lowered.problem;
        let options = memplan_core::PlanOptions::default();
        let ctx = memplan_core::strategy::Ctx::default();
        let plans: Vec<_> = panes
            .iter()
            .map(|s| memplan_core::strategy::plan_in(problem, &s.strategy, &options, &ctx).unwrap())
            .collect();
        let overlays: Vec<_> = plans
            .iter()
            .zip(&panes)
            .map(|(p, s)| {
                (!problem.gears().is_empty()).then(|| {
                    memplan_core::report::overlay_report(problem, p, &s.strategy, &options).unwrap()
                })
            })
            .collect();
        let runs: Vec<Run> = (0..2)
            .map(|i| Run {
                strategy: &panes[i].strategy,
                plan: &plans[i],
                options: &options,
                time_us: results[i].time_us,
                overlay: overlays[i].as_ref(),
            })
            .collect();
        let extras = Extras {
            unknown: &loaded.lowered.unknown,
            views: None,
            order: loaded.lowered.order,
            search: loaded.lowered.search.as_ref(),
            rewrites: None,
        };
        let cli = PlanFile::new(file, problem, extras, &runs)
            .and_then(|f| f.to_json())
            .unwrap();
        assert_eq!(page, cli, "{file}");
        // the page adds only the link back to the view
        let linked = plan_json(file, &built, &pairs, Some("https://x/#v=1")).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&linked).unwrap();
        assert_eq!(v["playground"], "https://x/#v=1");
        v.as_object_mut().unwrap().remove("playground");
        assert_eq!(v, serde_json::from_str::<serde_json::Value>(&cli).unwrap());
    }

    #[test]
    fn the_page_writes_the_cli_plan_file() {
        page_writes_the_cli_file("mobilenet-v2-blocks.json", &[("batch", 1)], &[]);
        page_writes_the_cli_file("resnet50_randinit.stripped.onnx", &[("batch", 1)], &[1, 2]);
    }

    #[test]
    fn csv_cells_cannot_run_as_formulas() {
        // OWASP CSV injection: a leading = + - @ is neutralised with a quote mark
        assert_eq!(
            csv_field("=HYPERLINK(\"http://x\")"),
            "\"'=HYPERLINK(\"\"http://x\"\")\""
        );
        assert_eq!(csv_field("+1"), "'+1");
        assert_eq!(csv_field("-x"), "'-x");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("a\nb"), "\"a\nb\"");
        assert_eq!(csv_field("conv1"), "conv1");
    }

    #[test]
    fn csv_rows_keep_every_gear_planned_size() {
        // two gears: each tensor keeps its own planned size and names its gear
        let mut a = Buffer::new("x_b1", 100, 0, 1);
        a.gear = Some(1);
        let mut b = Buffer::new("x_b2", 200, 0, 1);
        b.gear = Some(2);
        let p = Problem::from_buffers("g", vec![a, b, Buffer::new("w", 8, 0, 1)]);
        let s = PaneSettings::default_for(1, false, &[]);
        let r =
            crate::analysis::run(&p, &crate::analysis::PlanKey::new(&s, None), &|| 0.0).unwrap();
        let csv = tensors_csv(&p, &[], &r);
        let rows: Vec<&str> = csv.lines().collect();
        assert!(rows[1].starts_with("x_b1,,,,100,100,0,1,"), "{csv}");
        assert!(rows[1].ends_with(",1"), "{csv}");
        assert!(rows[2].starts_with("x_b2,,,,200,200,0,1,"), "{csv}");
        assert!(rows[2].ends_with(",2"), "{csv}");
        assert!(rows[3].ends_with(','), "{csv}");
    }
}
