//! One pane's numbers: plan, bounds on the same padded sizes, live-bytes curve, differences.

use memplan_core::report::analysis::{self, Analysis};
use memplan_core::{Plan, Problem};
use serde::{Deserialize, Serialize};

use crate::settings::PaneSettings;

/// Everything a pane shows, computed once per (model, [`PlanKey`]): core's [`Analysis`] of
/// the plan (the one judgement the CLI makes too), the page's planning time and, for a runtime
/// allocator pane, what the simulated allocator did. Reads as the analysis it holds
/// (`r.plan`, `r.curve`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneResult {
    /// Plan, bounds, validation, overlay, gap, curve, budget.
    pub analysis: Analysis,
    /// Planning time, milliseconds.
    pub time_ms: f64,
    /// For a runtime allocator pane: what the simulated allocator did.
    pub sim: Option<SimSummary>,
}

impl std::ops::Deref for PaneResult {
    type Target = Analysis;
    fn deref(&self) -> &Analysis {
        &self.analysis
    }
}

impl std::ops::DerefMut for PaneResult {
    fn deref_mut(&mut self) -> &mut Analysis {
        &mut self.analysis
    }
}

/// Why a pane has no plan, and whether planning again may help.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The message shown in the pane (the core's, or the page's about the worker).
    pub reason: String,
    /// Planning again may give a plan: the user cancelled it, or the worker stopped or
    /// crashed. A planner error (bad option, overflow) would only repeat.
    pub retry: bool,
}

impl Failure {
    /// A planner error: the same settings would fail the same way.
    pub fn planner(reason: impl Into<String>) -> Self {
        Failure {
            reason: reason.into(),
            retry: false,
        }
    }

    /// A failure that planning again may mend (cancelled, worker stopped or crashed).
    pub fn retryable(reason: impl Into<String>) -> Self {
        Failure {
            reason: reason.into(),
            retry: true,
        }
    }
}

/// Where a pane's plan is.
#[derive(Debug, Clone, PartialEq)]
pub enum PaneState {
    /// Waiting for the background worker (another plan is in flight).
    Queued,
    /// Planning in the background worker since this many milliseconds (page clock).
    Planning {
        /// When the worker was sent the job.
        since_ms: f64,
    },
    /// Planned (boxed: a plan is large beside the other states).
    Done(Box<PaneResult>),
    /// No plan.
    Failed(Failure),
}

impl PaneState {
    /// The plan, if there is one.
    pub fn done(&self) -> Option<&PaneResult> {
        match self {
            PaneState::Done(r) => Some(&**r),
            _ => None,
        }
    }
}

impl From<String> for Failure {
    fn from(reason: String) -> Self {
        Failure::planner(reason)
    }
}

impl From<Result<PaneResult, Failure>> for PaneState {
    fn from(r: Result<PaneResult, Failure>) -> Self {
        match r {
            Ok(r) => PaneState::Done(Box::new(r)),
            Err(f) => PaneState::Failed(f),
        }
    }
}

/// What a pane's plan depends on: its settings, and the memory budget when its strategy
/// searches under one. The budget reaches the strategy as in the CLI (one decision, core's
/// `report::analysis`), so a budget change plans such a pane again and no other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlanKey {
    /// The pane's settings.
    pub settings: PaneSettings,
    /// The budget the strategy searches under, bytes (`None`: none, or a strategy that
    /// ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
}

impl PlanKey {
    /// The key of a pane with `settings` under the page's `budget`.
    pub fn new(settings: &PaneSettings, budget: Option<u64>) -> Self {
        let searches =
            memplan_core::find_strategy(&settings.strategy).is_ok_and(|s| s.caps.capacity_search);
        PlanKey {
            settings: settings.clone(),
            budget: budget.filter(|_| searches),
        }
    }
}

/// A runtime allocator's statistics (see `memplan_core::simulate::SimReport`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimSummary {
    /// The allocator's own peak, `memplan simulate`'s `peak_bytes` (whole blocks; tiered:
    /// the levels' highest used bytes summed). The pane's plan peak is the top byte of the
    /// replay's layout instead (offset + tensor size, the levels laid end to end).
    pub peak: u64,
    /// Statistics were on (else only failures are known).
    pub stats: bool,
    /// The leak detector was on.
    pub leak_detector: bool,
    /// Allocations that succeeded.
    pub allocations: u64,
    /// Of those, served from memory the allocator already held.
    pub cache_hits: u64,
    /// Frees.
    pub frees: u64,
    /// Allocations that failed (their tensors get no memory and are drawn with size 0).
    pub failures: u64,
    /// Most bytes held from the device at once (the pool: its size), bytes.
    pub reserved: u64,
    /// Most bytes in use at once (as taken), bytes.
    pub peak_in_use: u64,
    /// `aligned_alloc` overhead (alignment + pointer header per system allocation), bytes.
    pub overhead: u64,
    /// `1 − largest free chunk / total free` at the step with most bytes in use.
    pub fragmentation: f64,
    /// Tensors never freed that are not graph outputs: name, producing op, bytes.
    pub leaks: Vec<(String, String, u64)>,
    /// Per-allocation records kept by the leak detector.
    pub records: usize,
    /// Tiered: per level name, capacity, peak in use, allocations, spilled in, failures.
    pub levels: Vec<(String, u64, u64, u64, u64, u64)>,
    /// Occupancy over time, at most [`MAX_OCCUPANCY_POINTS`] points: (step, in use, reserved,
    /// per level in use).
    pub occupancy: Vec<(u64, u64, u64, Vec<u64>)>,
}

/// Most points of a runtime pane's occupancy view (longer traces are sampled, keeping each
/// window's largest in-use point).
pub const MAX_OCCUPANCY_POINTS: usize = 400;

fn occupancy(steps: &[memplan_core::simulate::StepStat]) -> Vec<(u64, u64, u64, Vec<u64>)> {
    let window = steps.len().div_ceil(MAX_OCCUPANCY_POINTS).max(1);
    steps
        .chunks(window)
        .filter_map(|c| c.iter().max_by_key(|s| s.current))
        .map(|s| (s.step, s.current, s.reserved, s.levels.clone()))
        .collect()
}

/// Replays the tensor trace through a runtime allocator (from the core's registry) on the
/// pane's padded sizes, and turns its addresses into a plan (failed allocations get size 0).
fn simulate(
    problem: &Problem,
    settings: &PaneSettings,
    options: &memplan_core::PlanOptions,
) -> Result<(Plan, SimSummary), String> {
    let allocator = crate::settings::runtime_allocator(&settings.strategy)
        .ok_or_else(|| format!("unknown runtime allocator '{}'", settings.strategy))?;
    let mut sized = problem.clone();
    for b in &mut sized.buffers {
        b.size = options.planned_size(b).map_err(|e| e.to_string())?;
    }
    let align = settings.alignment.max(1);
    let o = settings.knobs.options(align)?;
    let r = (allocator.run)(&sized, &o).map_err(|e| e.to_string())?;
    let offsets: Vec<u64> = r.offsets.iter().map(|o| o.unwrap_or(0)).collect();
    let sizes: Vec<u64> = sized
        .buffers
        .iter()
        .zip(&r.offsets)
        .map(|(b, o)| if o.is_some() { b.size } else { 0 })
        .collect();
    let plan =
        Plan::new(settings.strategy.clone(), align, offsets, sizes).map_err(|e| e.to_string())?;
    let summary = SimSummary {
        peak: r.peak_bytes,
        stats: r.switches.stats,
        leak_detector: r.switches.leak_detector,
        allocations: r.allocations,
        cache_hits: r.cache_hits,
        frees: r.frees,
        failures: r.failures,
        reserved: r.reserved_bytes,
        peak_in_use: r.peak_in_use_bytes,
        overhead: r.system_overhead_bytes,
        fragmentation: r.fragmentation_at_peak,
        leaks: r
            .leaks
            .iter()
            .map(|l| {
                (
                    l.name.clone(),
                    l.producer_op.clone().unwrap_or_default(),
                    l.bytes,
                )
            })
            .collect(),
        records: r.records.len(),
        levels: r
            .levels
            .iter()
            .map(|l| {
                (
                    l.level.name.clone(),
                    l.level.capacity,
                    l.peak_in_use,
                    l.level.allocations,
                    l.level.spilled_in,
                    l.level.failures,
                )
            })
            .collect(),
        occupancy: occupancy(&r.steps),
    };
    Ok((plan, summary))
}

/// What a runtime allocator's replay obeys: reuse as soon as a tensor is freed; graph inputs
/// and outputs, no-reuse and atomic-clean flags are GE's planning rules, not a runtime's.
pub const REPLAY_RULES: memplan_core::Rules = memplan_core::Rules {
    reuse: true,
    zero_copy_io: false,
    zero_copy_reuse: false,
    atomic_centralised: false,
};

/// `problem` with every buffer's flags cleared: the trace a runtime replays.
pub fn without_flags(problem: &Problem) -> Problem {
    let mut p = problem.clone();
    for b in &mut p.buffers {
        b.flags = memplan_core::Flags::default();
    }
    p
}

/// The page's clock for core's context: `now` in milliseconds, with its sub-millisecond
/// part kept for timing a plan.
struct PageClock<'a>(&'a dyn Fn() -> f64);

impl memplan_core::strategy::Clock for PageClock<'_> {
    // whole milliseconds and microseconds of performance.now(): far below 2^53
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn now_ms(&self) -> u64 {
        (self.0)().max(0.0) as u64
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn now_us(&self) -> u64 {
        ((self.0)() * 1000.0).max(0.0) as u64
    }
}

/// Plans `problem` for the pane `key` and judges the plan with core's
/// [`memplan_core::report::analysis`] (a strategy under the key's budget, as the CLI does; a
/// runtime allocator's replay by the replay's rules); `now` is the caller's clock in
/// milliseconds.
///
/// # Errors
/// The core's message (unknown strategy, bad option, overflow, a budget no plan can meet), as
/// a [`Failure`] that planning again would not mend.
pub fn run(problem: &Problem, key: &PlanKey, now: &dyn Fn() -> f64) -> Result<PaneResult, Failure> {
    let settings = &key.settings;
    let options = settings.options();
    let clock = PageClock(now);
    let (analysis, sim) = if crate::settings::is_runtime(&settings.strategy) {
        let t0 = now();
        let (plan, sim) = simulate(problem, settings, &options)?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let time_us = ((now() - t0) * 1000.0).max(0.0) as u64;
        // a runtime allocator replays the trace (allocate at the producer, free after the
        // last reader): none of GE's rules is in force, only that no two live tensors share
        // a byte
        let planned = analysis::Planned {
            strategy: &settings.strategy,
            plan,
            options,
            time_us,
        };
        let a = analysis::judge(&without_flags(problem), planned, &REPLAY_RULES, key.budget)
            .map_err(|e| e.to_string())?;
        (a, Some(sim))
    } else {
        // anytime strategies (the exact search) run under the page's clock
        let strategy =
            memplan_core::find_strategy(&settings.strategy).map_err(|e| e.to_string())?;
        let ctx = memplan_core::strategy::Ctx::with_clock(&clock).with_capacity(key.budget);
        let a = analysis::analyse(problem, strategy, &options, &ctx).map_err(|e| e.to_string())?;
        (a, None)
    };
    #[allow(clippy::cast_precision_loss)]
    let time_ms = analysis.time_us as f64 / 1000.0;
    Ok(PaneResult {
        analysis,
        time_ms,
        sim,
    })
}

/// Live bytes at `step` from a curve.
pub fn live_at_step(curve: &[(u64, u64)], step: u64) -> u64 {
    match curve.partition_point(|p| p.0 <= step) {
        0 => 0,
        k => curve[k - 1].1,
    }
}

/// The buffers (by index) placed at another offset in plan `b` than in plan `a`, among those
/// both plans give bytes (a buffer of planned size 0 is not placed, so it cannot move). Plans
/// of one problem: indices beyond the shorter plan are ignored.
pub fn moved(a: &Plan, b: &Plan) -> Vec<usize> {
    (0..a.offsets.len().min(b.offsets.len()))
        .filter(|&i| {
            a.sizes.get(i).is_some_and(|&s| s > 0)
                && b.sizes.get(i).is_some_and(|&s| s > 0)
                && a.offsets[i] != b.offsets[i]
        })
        .collect()
}

/// Buffers live at `step` (with non-zero planned size), by index.
pub fn live_buffers(problem: &Problem, step: u64) -> Vec<usize> {
    problem
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.start <= step && step <= b.end)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplan_core::Buffer;

    /// a [0,1], b [1,2], c [2,3], 1000 B each.
    fn trio() -> Problem {
        Problem::from_buffers(
            "trio",
            vec![
                Buffer::new("a", 1000, 0, 1),
                Buffer::new("b", 1000, 1, 2),
                Buffer::new("c", 1000, 2, 3),
            ],
        )
    }

    #[test]
    fn moved_lists_the_tensors_two_plans_place_apart() {
        // static/samples/tetris.csv (MiniMalloc rows id,lower,upper,size; upper exclusive).
        let rows = [
            ("a", 0, 4, 32),
            ("b", 0, 2, 16),
            ("c", 2, 6, 16),
            ("d", 4, 8, 32),
            ("e", 6, 10, 16),
            ("f", 8, 12, 48),
            ("g", 10, 14, 16),
            ("h", 12, 16, 32),
        ];
        let p = Problem::from_buffers(
            "tetris",
            rows.iter()
                .map(|&(n, lo, up, sz)| Buffer::new(n, sz, lo, up - 1))
                .collect(),
        );
        let plan = |strategy: &str| {
            let mut s = PaneSettings::default_for(0, false, &[]);
            s.strategy = strategy.into();
            run(&p, &PlanKey::new(&s, None), &|| 0.0)
                .unwrap()
                .analysis
                .plan
        };
        // By hand. No reuse: running sums in row order: 0 32 48 64 96 112 160 176.
        // Best fit, largest first (ties by first use): f 48 B at 0; a, d, h (32 B) at 0, none
        // overlapping f [8,12) or each other; b [0,2) over a: 32; c [2,6) over a, d: 32;
        // e [6,10) over d (to 32) and f (to 48): 48; g [10,14) over f and h: 48.
        let (none, best) = (plan("no-reuse"), plan("greedy-size-best-fit"));
        assert_eq!(none.offsets, vec![0, 32, 48, 64, 96, 112, 160, 176]);
        assert_eq!(best.offsets, vec![0, 32, 32, 0, 48, 0, 48, 0]);
        // a and b stay; c..h move
        assert_eq!(moved(&none, &best), vec![2, 3, 4, 5, 6, 7]);
        assert_eq!(moved(&best, &none), vec![2, 3, 4, 5, 6, 7]);
        assert!(moved(&best, &best).is_empty());
        // a buffer one plan does not place (size 0) is not counted
        let mut dropped = best.clone();
        dropped.sizes[2] = 0;
        assert_eq!(moved(&none, &dropped), vec![3, 4, 5, 6, 7]);
    }

    #[test]
    fn a_runtime_pane_reuses_a_freed_buffer() {
        // a [0,1], b [1,2], c [2,3], 1000 B each, rounded to 512: the reuse manager creates
        // 1024 B for a and for b (both live at step 1); c comes after a's last use and takes
        // a's buffer. Arena 2048 B, 3 allocations, 3 frees, nothing leaked.
        let p = trio();
        let s = PaneSettings {
            strategy: "runtime-reuse".into(),
            alignment: 512,
            ge_padding: false,
            reuse: true,
            zero_copy_io: false,
            atomic_centralised: true,
            expandable_memory: false,
            zero_copy_reuse: false,
            knobs: Default::default(),
            time_limit_ms: None,
        };
        let r = run(&p, &PlanKey::new(&s, None), &|| 0.0).unwrap();
        assert_eq!(r.plan.peak, 2048);
        assert_eq!(r.plan.offsets[2], r.plan.offsets[0]);
        assert_ne!(r.plan.offsets[1], r.plan.offsets[0]);
        assert_eq!(r.valid, Ok(()));
        let sim = r.sim.clone().unwrap();
        assert_eq!((sim.allocations, sim.frees, sim.failures), (3, 3, 0));
        assert!(sim.leaks.is_empty());
    }

    #[test]
    fn every_runtime_pane_kind_runs_with_its_knobs() {
        // the same trio: acl-pool with 1024-byte blocks and 2 blocks (block 1 on top): a, b
        // take blocks 1, 0; a freed after step 1 (stack [1]); c gets block 1. Reserved 2048,
        // in use peak 2048.
        let p = trio();
        let mut s = PaneSettings::default_for(0, false, &[]);
        s.strategy = "runtime-acl-pool".into();
        s.knobs.set("block-size", "1024").unwrap();
        s.knobs.set("num-blocks", "2").unwrap();
        let r = run(&p, &PlanKey::new(&s, None), &|| 0.0).unwrap();
        let sim = r.sim.clone().unwrap();
        assert_eq!(r.plan.offsets, vec![1024, 0, 1024]);
        assert_eq!(
            (sim.reserved, sim.peak_in_use, sim.overhead),
            (2048, 2048, 72)
        );
        assert_eq!(sim.occupancy.len(), 4, "one point per step with events");
        // a third block is missing when only one is given: b fails
        s.knobs.set("num-blocks", "1").unwrap();
        let sim = run(&p, &PlanKey::new(&s, None), &|| 0.0)
            .unwrap()
            .sim
            .unwrap();
        assert_eq!(sim.failures, 1);
        // every registered kind runs on defaults; acl-tiered reports its levels
        for (kind, _) in crate::settings::runtime_kinds() {
            let mut s = PaneSettings::default_for(0, false, &[]);
            s.strategy = (*kind).into();
            let r = run(&p, &PlanKey::new(&s, None), &|| 0.0)
                .unwrap_or_else(|e| panic!("{kind}: {}", e.reason));
            let sim = r.sim.expect("a runtime pane has statistics");
            if *kind == "runtime-acl-tiered" {
                assert_eq!(sim.levels.len(), 4);
                assert_eq!(sim.occupancy[0].3.len(), 4, "per-level occupancy");
            }
        }
        // bad knobs are refused with the knob's name
        assert!(s
            .knobs
            .set("levels", "L1=x")
            .unwrap_err()
            .contains("levels"));
        assert!(s.knobs.set("policy", "hot").unwrap_err().contains("hot"));
    }

    #[test]
    fn runtime_panes_survive_lifetimes_reaching_u64_max() {
        // issue 18: this input panicked the page (capacity overflow in the per-step trace)
        let p = Problem::from_buffers(
            "max",
            vec![
                Buffer::new("x", 8, 0, u64::MAX),
                Buffer::new("y", 8, u64::MAX - 1, u64::MAX),
            ],
        );
        for (kind, _) in crate::settings::runtime_kinds() {
            let mut s = PaneSettings::default_for(0, false, &[]);
            s.strategy = (*kind).into();
            let r = run(&p, &PlanKey::new(&s, None), &|| 0.0)
                .unwrap_or_else(|e| panic!("{kind}: {}", e.reason));
            assert_eq!(r.sim.expect("statistics").failures, 0, "{kind}");
        }
    }

    #[test]
    fn curve_matches_the_core_live_bytes() {
        let m = 1u64 << 20;
        let p = Problem::from_buffers(
            "diamond",
            vec![
                Buffer::new("a", 3 * m, 1, 3),
                Buffer::new("b", 3 * m, 2, 3),
                Buffer::new("c", 2 * m, 3, 5),
                Buffer::new("d", 4 * m, 4, 5),
                Buffer::new("e", m, 5, 6),
            ],
        );
        let sizes: Vec<u64> = p.buffers.iter().map(|b| b.size).collect();
        let c = analysis::live_curve(&p, &sizes);
        let dense = memplan_core::bound::live_bytes(&p).unwrap();
        for (s, &v) in dense.iter().enumerate() {
            assert_eq!(live_at_step(&c, s as u64), v, "step {s}");
        }
        assert_eq!(live_at_step(&c, 7), 0);
        let s = PaneSettings::default_for(1, false, &[]);
        let r = run(&p, &PlanKey::new(&s, None), &|| 0.0).unwrap();
        assert_eq!(r.lower_bound, 8 * m);
        assert_eq!(r.peak_step, 3);
        assert_eq!(r.valid, Ok(()));
        assert_eq!(live_buffers(&p, 3), vec![0, 1, 2]);
    }
}
