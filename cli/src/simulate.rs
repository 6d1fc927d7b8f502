//! `memplan simulate`: runtime allocators on the same tensor trace as the static plans.

use std::fmt::Write as _;

use memplan_core::simulate::{self, tiered, AllocatorKind, SimReport};
use memplan_core::{units, Error, Problem};

use crate::load::{self, Input};
use crate::{parse_kv, parse_shapes, AllocatorArg, Format, SimArgs};

pub fn run(args: &SimArgs) -> Result<(), Error> {
    let mut shapes = parse_shapes(&args.shape.dims, &args.shape.inputs, &args.shape.sizes)?;
    shapes.alias_views = args.shape.alias_views;
    let shown = args.input.display().to_string();
    let problem = match load::read(&args.input, &shapes)? {
        Input::Buffers(p) => p,
        Input::Graph {
            graph,
            warnings,
            onnx,
        } => {
            let l = load::lower_unbound_as_one(&graph, warnings, onnx.as_deref(), &shapes)
                .map_err(|e| e.at(&shown))?;
            for w in &l.warnings {
                eprintln!("warning: {shown}: {w}");
            }
            l.problem
        }
    };
    let bounds = memplan_core::lower_bound(&problem).map_err(|e| e.at(&shown))?;
    let kinds = if args.allocators.is_empty() {
        vec![AllocatorArg::Pool, AllocatorArg::Reuse, AllocatorArg::Bfc]
    } else {
        args.allocators.clone()
    };
    let mut reports = Vec::new();
    let mut tiers = None;
    for k in kinds {
        let kind = match k {
            AllocatorArg::Pool => {
                let pool = match args.pool_size {
                    Some(p) => p,
                    // Enough blocks for every tensor at once: the pool never fails.
                    None => problem.buffers.iter().try_fold(0u64, |acc, b| {
                        let blocks = memplan_core::error::round_up(
                            b.size,
                            args.block_size.max(1),
                            "pool size",
                        )?;
                        memplan_core::error::add(acc, blocks, "pool size")
                    })?,
                };
                AllocatorKind::Pool {
                    pool_bytes: pool,
                    block_bytes: args.block_size,
                }
            }
            AllocatorArg::Reuse => AllocatorKind::Reuse {
                alignment: args.align,
                capacity: args.table_capacity,
            },
            AllocatorArg::Bfc => AllocatorKind::Bfc {
                alignment: args.align,
            },
            AllocatorArg::Tiered => {
                tiers = Some(tiered::place(&problem, &levels(&args.levels)?)?);
                continue;
            }
        };
        reports.push(simulate::simulate(&problem, &kind)?);
    }
    let text = match args.format {
        Format::Json => {
            let v = serde_json::json!({
                "format": "memplan.simulation/1",
                "input": shown,
                "lower_bound_bytes": bounds.lower_bound,
                "no_reuse_bytes": bounds.no_reuse,
                "allocators": reports.iter().map(summary_json).collect::<Vec<_>>(),
                "tiered": tiers,
            });
            serde_json::to_string_pretty(&v).map_err(|e| Error::invalid(e.to_string()))? + "\n"
        }
        _ => table(
            &shown,
            &problem,
            bounds.lower_bound,
            &reports,
            tiers.as_ref(),
        ),
    };
    print!("{text}");
    Ok(())
}

fn summary_json(r: &SimReport) -> serde_json::Value {
    serde_json::json!({
        "allocator": r.allocator,
        "peak_bytes": r.peak_bytes,
        "reserved_bytes": r.reserved_bytes,
        "peak_in_use_bytes": r.peak_in_use_bytes,
        "total_allocated": r.total_allocated,
        "total_freed": r.total_freed,
        "current_bytes": r.current_bytes,
        "allocations": r.allocations,
        "frees": r.frees,
        "failures": r.failures,
        "fragmentation_at_peak": r.fragmentation_at_peak,
        "leaks": r.leaks,
    })
}

fn levels(spec: &str) -> Result<Vec<tiered::Level>, Error> {
    spec.split(',')
        .map(|part| {
            let (name, v) = parse_kv(part.trim(), "--levels")?;
            let capacity = if v == "inf" {
                u64::MAX
            } else {
                v.parse::<u64>().map_err(|_| {
                    Error::bad_option(format!(
                        "--levels {name}: '{v}' is not a byte count or 'inf'"
                    ))
                })?
            };
            Ok(tiered::Level {
                name: name.to_string(),
                capacity,
            })
        })
        .collect()
}

fn table(
    input: &str,
    p: &Problem,
    lb: u64,
    reports: &[SimReport],
    tiers: Option<&tiered::TierReport>,
) -> String {
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
            "{:<8} {:>12} {:>12} {:>9} {:>8} {:>8} {:>6} {:>7} {:>6}",
            "alloc", "peak", "reserved", "/ lower", "allocs", "frees", "fails", "frag", "leaks"
        );
    }
    for r in reports {
        let ratio = if lb == 0 {
            1.0
        } else {
            r.peak_bytes as f64 / lb as f64
        };
        let _ = writeln!(
            s,
            "{:<8} {:>12} {:>12} {:>9.4} {:>8} {:>8} {:>6} {:>6.1}% {:>6}",
            r.allocator,
            units::binary(r.peak_bytes),
            units::binary(r.reserved_bytes),
            ratio,
            r.allocations,
            r.frees,
            r.failures,
            r.fragmentation_at_peak * 100.0,
            r.leaks.len()
        );
        for l in &r.leaks {
            let _ = writeln!(
                s,
                "         leak: '{}' ({}) from op '{}'",
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
    s
}
