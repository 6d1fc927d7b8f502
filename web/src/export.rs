//! Exports: plan JSON in the CLI's `memplan.plan/1` schema, and a CSV of tensors.

use memplan_core::Problem;
use serde_json::{json, Value};

use crate::analysis::PaneResult;
use crate::model::BufInfo;
use crate::settings::PaneSettings;

/// The CLI's plan document for the panes' plans (inclusive `start`/`end`, `bytes` = planned
/// size). `lower_bound_bytes` and `no_reuse_bytes` are on raw sizes, as the CLI reports them.
/// Each plan also carries the pane's `settings` (the link's short keys, see
/// [`PaneSettings`]), and the document a `playground` link reopening the view.
pub fn plan_json(
    input: &str,
    problem: &Problem,
    plans: &[(&PaneSettings, &PaneResult)],
    playground: &str,
) -> String {
    let bounds = memplan_core::lower_bound(problem).unwrap_or_default();
    let plans: Vec<Value> = plans
        .iter()
        .map(|(settings, r)| {
            let buffers: Vec<Value> = problem
                .buffers
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let mut v = json!({
                        "name": b.name,
                        "bytes": r.plan.sizes.get(i).copied().unwrap_or(0),
                        "start": b.start,
                        "end": b.end,
                        "offset": r.plan.offsets.get(i).copied().unwrap_or(0),
                    });
                    // what `memplan validate` checks beyond the ranges (the CLI writes the same)
                    if b.alignment > 1 {
                        v["alignment"] = json!(b.alignment);
                    }
                    if let Some(off) = b.fixed_offset {
                        v["fixed_offset"] = json!(off);
                    }
                    if let Some(g) = b.gear {
                        v["gear"] = json!(g);
                    }
                    let flags = memplan_core::strategy::semantics::flags_in_force(b, &r.options);
                    if !flags.is_empty() {
                        v["flags"] = json!(flags);
                    }
                    v
                })
                .collect();
            json!({
                "strategy": r.plan.strategy,
                "alignment": r.plan.alignment,
                "peak_bytes": r.plan.peak,
                "plan_time_us": micros(r.time_ms),
                "settings": {
                    "strategy": settings.strategy,
                    "alignment": settings.alignment,
                    "ge_padding": settings.ge_padding,
                    "reuse": settings.reuse,
                    "zero_copy_io": settings.zero_copy_io,
                    "atomic_centralised": settings.atomic_centralised,
                },
                "buffers": buffers,
            })
        })
        .collect();
    let doc = json!({
        "format": "memplan.plan/1",
        "input": input,
        "problem": {
            "buffers": problem.buffers.len(),
            "steps": problem.steps,
            "lower_bound_bytes": bounds.lower_bound,
            "no_reuse_bytes": bounds.no_reuse,
        },
        "plans": plans,
        "playground": playground,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
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

/// Milliseconds to whole microseconds (float-to-integer `as` saturates; times are small).
#[allow(clippy::cast_possible_truncation)]
fn micros(ms: f64) -> u64 {
    (ms * 1000.0).round().max(0.0) as u64
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
        let r = crate::analysis::run(&p, &s, &|| 0.0).unwrap();
        let v: Value =
            serde_json::from_str(&plan_json("p.csv", &p, &[(&s, &r)], "https://x/#v=1")).unwrap();
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
        let r = crate::analysis::run(&p, &s, &|| 0.0).unwrap();
        let csv = tensors_csv(&p, &[], &r);
        let rows: Vec<&str> = csv.lines().collect();
        assert!(rows[1].starts_with("x_b1,,,,100,100,0,1,"), "{csv}");
        assert!(rows[1].ends_with(",1"), "{csv}");
        assert!(rows[2].starts_with("x_b2,,,,200,200,0,1,"), "{csv}");
        assert!(rows[2].ends_with(",2"), "{csv}");
        assert!(rows[3].ends_with(','), "{csv}");
    }
}
