//! `memplan simulate`: runtime allocators on the same tensor trace as the static plans.

use std::fmt::Write as _;

use memplan_core::simulate::registry::{self, RuntimeOptions};
use memplan_core::simulate::{access, tiered, SimReport, SimSwitches, TierPolicy};
use memplan_core::{units, Error, Problem};

use crate::load;
use crate::{parse_kv, SimArgs, SimFormat};

/// Runs the allocators and prints their report. `Ok(false)` when an allocation failed (or
/// the tiered placement left a tensor out): the caller exits with status 3, as `plan` does
/// for a plan over `--capacity`, so a script sees that the memory did not suffice.
pub fn run(args: &SimArgs) -> Result<bool, Error> {
    let shapes = args.shape.load_options()?;
    let shown = args.input.display().to_string();
    let loaded = load::read(&args.input, &shapes)?;
    for w in &loaded.lowered.warnings {
        errln!("warning: {shown}: {w}");
    }
    let mut problem = loaded.lowered.problem;
    if args.padding == crate::PaddingArg::Ge {
        // each request padded as GE pads a tensor; the allocators round to --align themselves
        let pad = memplan_core::PlanOptions {
            padding: memplan_core::Padding::Ge,
            alignment: 1,
            ..memplan_core::PlanOptions::default()
        };
        for b in &mut problem.buffers {
            b.size = pad.planned_size(b).map_err(|e| e.at(&shown))?;
        }
    }
    let bounds = memplan_core::lower_bound(&problem).map_err(|e| e.at(&shown))?;
    let names: Vec<String> = if args.allocators.is_empty() {
        ["pool", "reuse", "bfc"].map(String::from).to_vec()
    } else {
        args.allocators.clone()
    };
    let options = options(args)?;
    let costs = memplan_core::simulate::access::AccessCosts::parse(&args.access_cost)?;
    let mut reports = Vec::new();
    let mut tiers = None;
    for name in &names {
        if name == "tiered" {
            tiers = Some(tiered::place(&problem, &options.levels)?);
            continue;
        }
        reports.push(registry::run(&problem, name, &options).map_err(|e| e.at(&shown))?);
    }
    let text = match args.format {
        SimFormat::Json => {
            let v = serde_json::json!({
                "format": "memplan.simulation/1",
                "input": shown,
                "lower_bound_bytes": bounds.lower_bound,
                "no_reuse_bytes": bounds.no_reuse,
                "allocators": reports.iter().map(|r| summary_json(r, args.details, &costs)).collect::<Result<Vec<_>, Error>>()?,
                "tiered": tiers,
            });
            let text =
                serde_json::to_string_pretty(&v).map_err(|e| Error::invalid(e.to_string()))?;
            crate::term::json(&text).into_owned() + "\n"
        }
        _ => table(
            &shown,
            &problem,
            bounds.lower_bound,
            &reports,
            tiers.as_ref(),
            &costs,
        )?,
    };
    crate::term::out(&text)?;
    let mut ok = true;
    for r in reports.iter().filter(|r| r.failures > 0) {
        errln!(
            "{}: {} of {} allocation(s) failed (exit status 3)",
            r.allocator,
            r.failures,
            r.failures + r.allocations
        );
        ok = false;
    }
    if let Some(t) = tiers.as_ref().filter(|t| !t.unplaced.is_empty()) {
        errln!(
            "tiered: {} tensor(s) fit no level (exit status 3)",
            t.unplaced.len()
        );
        ok = false;
    }
    Ok(ok)
}

/// The registry's options from the flags.
fn options(args: &SimArgs) -> Result<RuntimeOptions, Error> {
    let mapping = args
        .mapping
        .iter()
        .map(|m| {
            let (t, l) = parse_kv(m, "--map")?;
            Ok((t.to_string(), l.to_string()))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    if args.align == 0 {
        return Err(Error::bad_option("--align must be at least 1"));
    }
    if args.num_blocks == Some(0) {
        return Err(Error::bad_option(
            "--num-blocks must be at least 1 (a pool of no blocks fails every allocation)",
        ));
    }
    Ok(RuntimeOptions {
        pool_bytes: args.pool_size,
        block_bytes: args.block_size,
        num_blocks: args.num_blocks,
        alignment: args.align,
        table_capacity: args.table_capacity,
        levels: tiered::parse_levels(&args.levels)?,
        tier_block_bytes: args.tier_block_size,
        policy: TierPolicy::parse(&args.policy)?,
        mapping,
        page_bytes: args.page_size,
        threshold_bytes: args.threshold,
        switches: SimSwitches {
            stats: !args.no_stats,
            leak_detector: !args.no_leak_detector,
            record_capacity: args.leak_records,
        },
    })
}

fn summary_json(
    r: &SimReport,
    details: bool,
    costs: &access::AccessCosts,
) -> Result<serde_json::Value, Error> {
    let mut v = serde_json::json!({
        "allocator": r.allocator,
        "stats": r.switches.stats,
        "leak_detector": r.switches.leak_detector,
        "peak_bytes": r.peak_bytes,
        "reserved_bytes": r.reserved_bytes,
        "system_overhead_bytes": r.system_overhead_bytes,
        "peak_in_use_bytes": r.peak_in_use_bytes,
        "total_requested": r.total_requested,
        "cache_hits": r.cache_hits,
        "probes": r.probes,
        "probes_per_allocation": per_allocation(r),
        "records_dropped": r.records_dropped,
        "io_transfer_bytes": r.io_transfer_bytes,
        "cross_type_transfer_bytes": r.cross_type_transfer_bytes,
        "total_allocated": r.total_allocated,
        "total_freed": r.total_freed,
        "current_bytes": r.current_bytes,
        "allocations": r.allocations,
        "frees": r.frees,
        "failures": r.failures,
        "fragmentation_at_peak": r.fragmentation_at_peak,
        "leaks": r.leaks,
        "levels": r.levels,
        "access_cost": access::price(&r.access, costs)?,
    });
    if details {
        v["records"] = serde_json::json!(r.records);
        v["steps"] = serde_json::json!(r.steps);
    }
    Ok(v)
}

/// Probes per request (successful or failed): each allocator's mean search cost.
fn per_allocation(r: &SimReport) -> f64 {
    let requests = r.allocations + r.failures;
    if requests == 0 {
        0.0
    } else {
        r.probes as f64 / requests as f64
    }
}

fn table(
    input: &str,
    p: &Problem,
    lb: u64,
    reports: &[SimReport],
    tiers: Option<&tiered::TierReport>,
    costs: &access::AccessCosts,
) -> Result<String, Error> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{input}: {} buffers, {} steps, lower bound {}\n",
        p.buffers.len(),
        p.steps,
        units::with_exact(lb)
    );
    if !reports.is_empty() {
        let _ = writeln!(
            s,
            "{:<13} {:>12} {:>12} {:>12} {:>9} {:>7} {:>7} {:>7} {:>6} {:>7} {:>6} {:>8}",
            "alloc",
            "peak",
            "reserved",
            "in use",
            "/ lower",
            "allocs",
            "hits",
            "frees",
            "fails",
            "frag",
            "leaks",
            "probes/a"
        );
    }
    for r in reports {
        let ratio = if lb == 0 {
            1.0
        } else {
            r.peak_bytes as f64 / lb as f64
        };
        if !r.switches.stats {
            let _ = writeln!(
                s,
                "{:<13} {:>12} {:>12} {:>12} {:>9.4} (statistics off) {:>6} fails",
                r.allocator,
                units::binary(r.peak_bytes),
                "-",
                "-",
                ratio,
                r.failures
            );
        } else {
            let _ = writeln!(
                s,
                "{:<13} {:>12} {:>12} {:>12} {:>9.4} {:>7} {:>7} {:>7} {:>6} {:>6.1}% {:>6} {:>8.2}",
                r.allocator,
                units::binary(r.peak_bytes),
                units::binary(r.reserved_bytes),
                units::binary(r.peak_in_use_bytes),
                ratio,
                r.allocations,
                r.cache_hits,
                r.frees,
                r.failures,
                r.fragmentation_at_peak * 100.0,
                if r.switches.leak_detector {
                    r.leaks.len().to_string()
                } else {
                    "off".into()
                },
                per_allocation(r)
            );
            if r.records_dropped > 0 {
                let _ = writeln!(
                    s,
                    "           leak records: {} allocation(s) not recorded (table full): their leaks are missed",
                    r.records_dropped
                );
            }
            if r.io_transfer_bytes > 0 || r.cross_type_transfer_bytes > 0 {
                let _ = writeln!(
                    s,
                    "           transfers per run: graph I/O {} (not zero-copy), host memory {}",
                    units::with_exact(r.io_transfer_bytes),
                    units::with_exact(r.cross_type_transfer_bytes)
                );
            }
        }
        if r.system_overhead_bytes > 0 {
            let _ = writeln!(
                s,
                "           aligned_alloc overhead: {} (alignment + pointer header per system allocation)",
                units::with_exact(r.system_overhead_bytes)
            );
        }
        if r.switches.stats && !r.access.is_empty() {
            let a = access::price(&r.access, costs)?;
            let _ = writeln!(s, "           {}", access_cost_summary(&a));
        }
        for l in &r.levels {
            let cap = if l.level.capacity >= u64::MAX / 2 {
                "inf".to_string()
            } else {
                units::binary(l.level.capacity)
            };
            let _ = writeln!(
                s,
                "           level {:<5} capacity {:>10}, peak in use {:>10}, {} allocs, {} spilled in, {} failed",
                l.level.name,
                cap,
                units::binary(l.peak_in_use),
                l.level.allocations,
                l.level.spilled_in,
                l.level.failures
            );
        }
        for l in &r.leaks {
            let _ = writeln!(
                s,
                "           leak: '{}' ({}) from op '{}'",
                l.name,
                units::binary(l.bytes),
                l.producer_op.as_deref().unwrap_or("?")
            );
        }
    }
    if let Some(t) = tiers {
        let _ = writeln!(
            s,
            "\ntiered: fastest level with room at every step of a tensor's life; 'spilled in' counts\n        the tensors a level took because a faster one was full\n        {:<6} {:>12} {:>12} {:>8} {:>10}",
            "level", "capacity", "peak", "tensors", "spilled in"
        );
        for l in &t.levels {
            let cap = if l.capacity == u64::MAX {
                "inf".to_string()
            } else {
                units::binary(l.capacity)
            };
            let _ = writeln!(
                s,
                "        {:<6} {:>12} {:>12} {:>8} {:>10}",
                l.name,
                cap,
                units::binary(l.peak_bytes),
                l.tensors,
                l.spilled_in
            );
        }
        if !t.unplaced.is_empty() {
            let _ = writeln!(s, "        {} tensors fit in no level", t.unplaced.len());
        }
    }
    Ok(s)
}

/// `access cost per run: TOTAL (units); LEVEL R B read + W B written x C/B = COST; ...`
pub(crate) fn access_cost_summary(a: &access::AccessReport) -> String {
    let per: Vec<String> = a
        .levels
        .iter()
        .map(|l| {
            format!(
                "{} {} B read + {} B written x {}/B = {}",
                l.level, l.bytes_read, l.bytes_written, l.cost_per_byte, l.cost
            )
        })
        .collect();
    format!(
        "access cost per run: {} (units); {}",
        a.total_cost,
        per.join("; ")
    )
}
