//! One strategy run and its judgement, the same in every front end: plan, lower bound on the
//! planned sizes, independent validation, gear overlay, why the peak is above the bound, the
//! live-bytes curve, and whether the plan fits the memory budget.
//!
//! The CLI's `memplan plan` and the playground's panes both call [`analyse`] (or, for a plan
//! made otherwise, [`judge`]), so the two cannot drift apart. **One decision on the budget:**
//! the memory budget travels in the [`Ctx`] ([`Ctx::with_capacity`]) and reaches the strategy
//! in both front ends; a strategy with [`crate::strategy::Capabilities::capacity_search`] (the
//! exact search) stops at the first plan under it, as MiniMalloc's capacity mode does, and
//! every other strategy ignores it. The budget is also what [`Analysis::fits`] is judged by.

use alloc::string::String;
use alloc::vec::Vec;

use crate::bound::bounds_with;
use crate::error::Result;
use crate::explain::{explain_gap, Gap};
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;
use crate::strategy::{Ctx, StrategyInfo};
use crate::validate::{validate_with, Rules};

use super::{overlay_report, OverlayReport};

/// What one plan of a problem comes to (all sizes in bytes, steps in op steps).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Analysis {
    /// The plan.
    pub plan: Plan,
    /// Live-set lower bound on the planned (padded, aligned) sizes: what this plan's sizes
    /// cannot beat, bytes.
    pub lower_bound: u64,
    /// Sum of planned sizes: the arena without reuse, bytes.
    pub no_reuse: u64,
    /// Sum of raw sizes, bytes.
    pub raw_total: u64,
    /// Bytes added by padding and alignment over all buffers (planned − raw).
    pub padding_waste: u64,
    /// Step-wise live bytes on planned sizes as change points `(step, bytes)`, in step order
    /// ([`live_curve`]).
    pub curve: Vec<(u64, u64)>,
    /// First step where the live bytes (planned sizes) are largest.
    pub peak_step: u64,
    /// `Ok` when the independent validator ([`crate::validate`]) accepts the plan, else its
    /// violation, described with the tensors' names.
    pub valid: core::result::Result<(), String>,
    /// With dynamic-batch gears and a registered strategy: per-gear figures, overlay, side by
    /// side ([`overlay_report`]).
    pub overlay: Option<OverlayReport>,
    /// The options the plan was made with.
    pub options: PlanOptions,
    /// Why the peak is above the lower bound ([`explain_gap`]); `None` if it cannot be split
    /// (an overflow of the padded sizes).
    #[cfg_attr(feature = "serde", serde(default))]
    pub gap: Option<Gap>,
    /// The memory budget the plan was judged by, bytes (`None`: none given).
    #[cfg_attr(feature = "serde", serde(default))]
    pub budget: Option<u64>,
    /// Planning time in microseconds, by the context's clock (0 without one).
    #[cfg_attr(feature = "serde", serde(default))]
    pub time_us: u64,
}

impl Analysis {
    /// Whether the plan fits the budget: every arena together ([`Plan::device_bytes`]) at
    /// most the budget; `None` without a budget.
    pub fn fits(&self) -> Option<bool> {
        self.budget.map(|b| self.plan.device_bytes() <= b)
    }
}

/// Plans `problem` with `strategy` under `options` and `ctx` (clock, memory budget,
/// cancellation, search variant), then judges the plan ([`judge`]) by the rules the options
/// put in force and by the context's budget.
///
/// # Errors
/// The strategy's error (bad option, overflow, a budget no plan can meet, cancelled), or the
/// overlay's when planning a gear alone fails.
pub fn analyse(
    problem: &Problem,
    strategy: &StrategyInfo,
    options: &PlanOptions,
    ctx: &Ctx,
) -> Result<Analysis> {
    let clock = ctx.clock();
    let t0 = clock.now_us();
    let plan = strategy.run_in(problem, options, ctx)?;
    let time_us = clock.now_us().saturating_sub(t0);
    judge(
        problem,
        Planned {
            strategy: strategy.name,
            plan,
            options: options.clone(),
            time_us,
        },
        &Rules::from(options),
        ctx.capacity(),
    )
}

/// A plan made outside [`analyse`]: by several search threads (the CLI's `--threads`), or by
/// replaying a runtime allocator (the playground's runtime panes).
#[derive(Debug, Clone)]
pub struct Planned<'a> {
    /// The registry name of the strategy (or the allocator's name); a registered strategy's
    /// gears get an overlay report.
    pub strategy: &'a str,
    /// The plan of the problem.
    pub plan: Plan,
    /// The options it was made with.
    pub options: PlanOptions,
    /// Planning time, microseconds.
    pub time_us: u64,
}

/// Judges `planned`, a plan of `problem`: bounds on its planned sizes, validation by `rules`,
/// overlay (with gears), gap, curve and budget.
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] when the sizes overflow `u64`; the strategy's error when
/// planning a gear alone for the overlay fails.
pub fn judge(
    problem: &Problem,
    planned: Planned<'_>,
    rules: &Rules,
    budget: Option<u64>,
) -> Result<Analysis> {
    let Planned {
        strategy,
        plan,
        options,
        time_us,
    } = planned;
    let sizes = &plan.sizes;
    let bounds = bounds_with(problem, |i| Ok(sizes.get(i).copied().unwrap_or(0)))?;
    let raw_total = problem.total_bytes()?;
    let planned_total = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
    let curve = live_curve(problem, sizes);
    let valid = validate_with(problem, &plan, rules).map_err(|v| v.describe(problem));
    let registered = crate::strategy::find(strategy).is_ok();
    let overlay = if registered && !problem.gears().is_empty() {
        Some(overlay_report(problem, &plan, strategy, &options)?)
    } else {
        None
    };
    Ok(Analysis {
        gap: explain_gap(problem, &plan, &options).ok(),
        lower_bound: bounds.lower_bound,
        no_reuse: bounds.no_reuse,
        raw_total,
        padding_waste: planned_total.saturating_sub(raw_total),
        peak_step: peak_step(&curve),
        curve,
        valid,
        overlay,
        options,
        budget,
        time_us,
        plan,
    })
}

/// Live bytes as change points: at `curve[k].0` the live sum of `sizes` (one per buffer of
/// `problem`, bytes; buffers of size 0 are left out) becomes `curve[k].1` and stays until the
/// next point. Starts at step 0; event-based, so huge step numbers cost nothing.
pub fn live_curve(problem: &Problem, sizes: &[u64]) -> Vec<(u64, u64)> {
    let mut events: Vec<(u64, i128)> = Vec::with_capacity(problem.buffers.len() * 2);
    for (b, &s) in problem.buffers.iter().zip(sizes) {
        if s == 0 {
            continue;
        }
        events.push((b.start, i128::from(s)));
        events.push((b.end.saturating_add(1), -i128::from(s)));
    }
    events.sort_unstable_by_key(|e| e.0);
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut cur: i128 = 0;
    let mut i = 0;
    while i < events.len() {
        let step = events[i].0;
        while i < events.len() && events[i].0 == step {
            cur += events[i].1;
            i += 1;
        }
        let v = u64::try_from(cur.max(0)).unwrap_or(u64::MAX);
        if out.last().is_none_or(|l| l.1 != v) {
            out.push((step, v));
        }
    }
    if out.first().is_none_or(|f| f.0 > 0) {
        out.insert(0, (0, 0));
    }
    out
}

/// The first step where a curve ([`live_curve`]) is highest.
pub fn peak_step(curve: &[(u64, u64)]) -> u64 {
    curve
        .iter()
        .fold(
            (0u64, 0u64),
            |best, &(s, b)| if b > best.1 { (s, b) } else { best },
        )
        .0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;

    #[test]
    fn analyse_judges_a_plan_and_its_budget() {
        // a [0,1] 1000 B, b [1,2] 1000 B, c [2,3] 1000 B; alignment 1, no padding: b overlaps
        // a and c, a and c share bytes. Lower bound 2000 B (steps 1 and 2), no reuse 3000 B.
        let p = Problem::from_buffers(
            "trio",
            alloc::vec![
                Buffer::new("a", 1000, 0, 1),
                Buffer::new("b", 1000, 1, 2),
                Buffer::new("c", 1000, 2, 3),
            ],
        );
        let o = PlanOptions {
            alignment: 1,
            padding: crate::plan::Padding::None,
            ..PlanOptions::default()
        };
        let s = crate::strategy::find("greedy-size-best-fit").unwrap();
        let a = analyse(&p, s, &o, &Ctx::untimed().with_capacity(Some(1999))).unwrap();
        assert_eq!(a.plan.peak, 2000);
        assert_eq!((a.lower_bound, a.no_reuse, a.raw_total), (2000, 3000, 3000));
        assert_eq!(a.padding_waste, 0);
        // live: a; a b; b c; c; none
        assert_eq!(
            a.curve,
            alloc::vec![(0, 1000), (1, 2000), (3, 1000), (4, 0)]
        );
        assert_eq!(a.peak_step, 1);
        assert_eq!(a.valid, Ok(()));
        assert_eq!(a.fits(), Some(false));
        assert!(a.overlay.is_none());
        let a = analyse(&p, s, &o, &Ctx::untimed().with_capacity(Some(2000))).unwrap();
        assert_eq!(a.fits(), Some(true));
        assert_eq!(analyse(&p, s, &o, &Ctx::untimed()).unwrap().fits(), None);
    }

    #[test]
    fn judge_reports_an_invalid_plan_by_name() {
        let p = Problem::from_buffers(
            "pair",
            alloc::vec![Buffer::new("a", 8, 0, 1), Buffer::new("b", 8, 1, 2)],
        );
        let plan = Plan::new("hand", 1, alloc::vec![0, 4], alloc::vec![8, 8]).unwrap();
        let o = PlanOptions::default();
        let planned = Planned {
            strategy: "hand",
            plan,
            options: o.clone(),
            time_us: 0,
        };
        let a = judge(&p, planned, &Rules::from(&o), None).unwrap();
        let e = a.valid.unwrap_err();
        assert!(e.contains('a') && e.contains('b'), "{e}");
    }

    #[test]
    fn huge_steps_cost_nothing() {
        let p = Problem::from_buffers("h", alloc::vec![Buffer::new("a", 1, 0, u64::MAX - 1)]);
        assert_eq!(live_curve(&p, &[1]), alloc::vec![(0, 1), (u64::MAX, 0)]);
    }
}
