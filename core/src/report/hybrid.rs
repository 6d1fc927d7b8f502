//! One flow (GE's hybrid execution of a graph with unknown dims): tensors whose size is known
//! when the graph is compiled get a static plan; tensors whose shape has a symbolic dim are
//! allocated at run time by GE V2's caching allocator (`ge-v2`), once the dims are known.
//!
//! memplan's reading: a tensor is dynamic when its shape names a symbolic dim (and the file
//! gives no byte size); a buffer is dynamic when any of its tensors is. The static part is
//! planned with the caller's strategy and options; the dynamic part, at the sizes the given
//! dim values make, is replayed through `ge-v2` in the same schedule. The device holds both: the
//! static arena plus what `ge-v2` reserves. Both parts are planned as bare buffer lists (their
//! live ranges kept; the streams' reader lists are not carried over).

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::graph::{Dim, Graph, Lowered};
use crate::plan::{Plan, PlanOptions};
use crate::problem::{Buffer, Problem};
use crate::simulate::{registry::RuntimeOptions, SimReport};

/// The two parts of a hybrid run.
#[derive(Debug, Clone, PartialEq)]
pub struct Hybrid {
    /// Buffers whose size is known at compile time (bare buffers, live ranges kept).
    pub static_part: Problem,
    /// Buffers with a symbolic dim, at the bound sizes.
    pub dynamic_part: Problem,
}

/// Splits `lowered` (lowered from `graph` with the run-time dim values bound) into its static
/// and dynamic parts.
pub fn split(graph: &Graph, lowered: &Lowered) -> Hybrid {
    let dynamic: BTreeSet<&str> = graph
        .tensors
        .iter()
        .filter(|t| {
            t.bytes.is_none()
                && t.shape
                    .as_ref()
                    .is_some_and(|s| s.iter().any(|d| matches!(d, Dim::Sym(_))))
        })
        .map(|t| t.name.as_str())
        .collect();
    let is_dynamic = |b: &Buffer| {
        dynamic.contains(b.name.as_str()) || b.aliases.iter().any(|a| dynamic.contains(a.as_str()))
    };
    let bare = |b: &Buffer| {
        let mut x = b.clone();
        x.producer = None;
        x.readers.clear();
        x
    };
    let (mut s, mut d): (Vec<Buffer>, Vec<Buffer>) = (Vec::new(), Vec::new());
    for b in &lowered.problem.buffers {
        if is_dynamic(b) {
            d.push(bare(b));
        } else {
            s.push(bare(b));
        }
    }
    let name = &lowered.problem.name;
    let mut static_part = Problem::from_buffers(alloc::format!("{name} (static)"), s);
    let mut dynamic_part = Problem::from_buffers(alloc::format!("{name} (dynamic)"), d);
    static_part.steps = static_part.steps.max(lowered.problem.steps);
    dynamic_part.steps = dynamic_part.steps.max(lowered.problem.steps);
    Hybrid {
        static_part,
        dynamic_part,
    }
}

/// A hybrid run's figures.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HybridReport {
    /// The static plan's strategy.
    pub strategy: String,
    /// Buffers planned statically.
    pub static_buffers: usize,
    /// The static arena, bytes.
    pub static_bytes: u64,
    /// Buffers allocated at run time.
    pub dynamic_buffers: usize,
    /// Bytes `ge-v2` reserves for them.
    pub runtime_reserved_bytes: u64,
    /// Most bytes `ge-v2` hands out at once.
    pub runtime_in_use_bytes: u64,
    /// Device bytes: static arena plus run-time reserve.
    pub device_bytes: u64,
}

/// Plans the static part with `strategy` and replays the dynamic part through `ge-v2`.
///
/// # Errors
/// The strategy's or the simulation's errors; [`crate::ErrorKind::Invalid`] if the static plan
/// fails the validator; [`crate::ErrorKind::Overflow`].
pub fn run(
    h: &Hybrid,
    strategy: &str,
    options: &PlanOptions,
    runtime: &RuntimeOptions,
) -> Result<(Plan, SimReport, HybridReport)> {
    let plan = crate::strategy::plan(&h.static_part, strategy, options)?;
    crate::validate::validate_with(&h.static_part, &plan, &options.into()).map_err(|v| {
        crate::Error::invalid(alloc::format!(
            "the static part's plan is invalid: {}",
            v.describe(&h.static_part)
        ))
    })?;
    let sim = (crate::simulate::registry::find("ge-v2")
        .ok_or_else(|| crate::Error::bad_option("no ge-v2 allocator"))?
        .run)(&h.dynamic_part, runtime)?;
    let report = HybridReport {
        strategy: plan.strategy.clone(),
        static_buffers: h.static_part.buffers.len(),
        static_bytes: plan.device_bytes(),
        dynamic_buffers: h.dynamic_part.buffers.len(),
        runtime_reserved_bytes: sim.reserved_bytes,
        runtime_in_use_bytes: sim.peak_in_use_bytes,
        device_bytes: add(
            plan.device_bytes(),
            sim.reserved_bytes,
            "hybrid device bytes",
        )?,
    };
    Ok((plan, sim, report))
}
