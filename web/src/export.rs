//! Exports: plan JSON in the CLI's `memplan.plan/1` schema, and a CSV of tensors.

use memplan_core::Problem;
use serde_json::{json, Value};

use crate::analysis::PaneResult;
use crate::model::BufInfo;

/// The CLI's plan document for the panes' plans (inclusive `start`/`end`, `bytes` = planned
/// size). `lower_bound_bytes` and `no_reuse_bytes` are on raw sizes, as the CLI reports them.
pub fn plan_json(input: &str, problem: &Problem, plans: &[&PaneResult]) -> String {
    let bounds = memplan_core::lower_bound(problem).unwrap_or_default();
    let plans: Vec<Value> = plans
        .iter()
        .map(|r| {
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
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// An RFC 4180 field; a cell that would start a spreadsheet formula (`=`, `+`, `-`, `@`, tab,
/// CR) gets a leading `'` (OWASP's CSV-injection rule), as the CLI's CSV does.
fn csv_field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let s = if formula {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if formula || s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// One row per buffer: name, op, shape, dtype, raw and planned bytes, inclusive live range,
/// offset.
pub fn tensors_csv(problem: &Problem, info: &[BufInfo], r: &PaneResult) -> String {
    let mut s = String::from("name,op,shape,dtype,bytes,planned_bytes,start,end,offset\n");
    for (i, b) in problem.buffers.iter().enumerate() {
        let inf = info.get(i).cloned().unwrap_or_default();
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{}\n",
            csv_field(&b.name),
            csv_field(&inf.op),
            csv_field(&inf.shape),
            csv_field(&inf.dtype),
            b.size,
            r.plan.sizes.get(i).copied().unwrap_or(0),
            b.start,
            b.end,
            r.plan.offsets.get(i).copied().unwrap_or(0),
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
        let v: Value = serde_json::from_str(&plan_json("p.csv", &p, &[&r])).unwrap();
        assert_eq!(v["format"], "memplan.plan/1");
        assert_eq!(v["problem"]["buffers"], 2);
        assert_eq!(v["problem"]["steps"], 3);
        assert_eq!(v["problem"]["lower_bound_bytes"], 12);
        assert_eq!(v["plans"][0]["peak_bytes"], 12);
        assert_eq!(v["plans"][0]["buffers"][1]["end"], 2);
        let csv = tensors_csv(&p, &[], &r);
        assert!(csv.contains("\"b,\"\"x\"\"\""), "{csv}");
    }
}
