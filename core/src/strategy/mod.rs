//! Strategies: name → plan. One contract for all of them: `run(&Problem, &PlanOptions, &Ctx)`
//! returns a [`Plan`] that [`crate::validate`] accepts; what a strategy does with the context
//! (clock, capacity) and with gears is declared in its [`Capabilities`], so callers (CLI, web,
//! property tests) iterate the registry and branch on capabilities, never on names.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Plan, PlanOptions};
use crate::problem::Problem;

pub(crate) mod boxing;
mod byte_union;
pub mod ctx;
pub mod ge_block;
mod graph_rules;
pub mod no_reuse;
pub mod optimal;
pub mod overlay;
pub mod packing;
mod packing_index;
pub mod semantics;
pub mod tflm;

pub use ctx::{Capabilities, Clock, Ctx, NoClock};

/// Which family a strategy belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// GE-style block reuse (blocks, level-1 / level-2 reuse).
    Block,
    /// Offset packing: each buffer gets any aligned offset.
    Packing,
    /// A baseline (no reuse).
    Baseline,
}

/// A registered strategy.
#[derive(Debug, Clone, Copy)]
pub struct StrategyInfo {
    /// Name used by the CLI, the UI and the plan JSON.
    pub name: &'static str,
    /// Family.
    pub family: Family,
    /// One line: what it does and where it comes from.
    pub summary: &'static str,
    /// What it does with the context and with gears.
    pub caps: Capabilities,
    run: fn(&Problem, &PlanOptions, &Ctx) -> Result<Plan>,
}

impl StrategyInfo {
    /// Runs the strategy untimed ([`Ctx::untimed`]).
    ///
    /// # Errors
    /// As [`plan`].
    pub fn run(&self, problem: &Problem, options: &PlanOptions) -> Result<Plan> {
        self.run_in(problem, options, &Ctx::untimed())
    }

    /// Runs the strategy in `ctx` (clock, capacity, cancellation).
    ///
    /// # Errors
    /// As [`plan`].
    pub fn run_in(&self, problem: &Problem, options: &PlanOptions, ctx: &Ctx) -> Result<Plan> {
        options.check()?;
        // GE's block strategies implement the flags as GE does (blocks placed apart); every
        // other strategy plans on live ranges that carry them (`semantics`).
        let normalised = semantics::normalise(problem, options);
        // pins that the rules make collide (e.g. a no-reuse buffer's) fail every family alike
        check_pins(&normalised, options)?;
        let problem = if self.family == Family::Block {
            problem
        } else {
            &*normalised
        };
        // Strategies that do not plan gears themselves get them overlaid at a common base;
        // those that do not honour a graph's streams and continuous groups themselves plan
        // with lifetimes safe across streams and each group as one buffer (graph_rules).
        let run = |p: &Problem| {
            if self.caps.plans_gears {
                (self.run)(p, options, ctx)
            } else {
                overlay::plan_overlaid(p, |q| (self.run)(q, options, ctx))
            }
        };
        let mut plan = if self.caps.graph_rules {
            run(problem)?
        } else {
            with_graph_rules(problem, options, run)?
        };
        if plan.strategy.is_empty() {
            plan.strategy = String::from(self.name);
        }
        Ok(plan)
    }
}

/// Runs a strategy that knows only steps and bytes so that its plan also honours a graph's
/// streams and continuous groups (what [`crate::validate`] checks): `run` gets `problem` with
/// lifetimes extended to be safe across streams and each continuous group merged into one
/// buffer; the members are then placed one after another inside it. [`StrategyInfo::run_in`]
/// does this for every strategy without [`Capabilities::graph_rules`].
///
/// # Errors
/// Errors of `run`; [`ErrorKind::Overflow`] for a group's size.
pub fn with_graph_rules(
    problem: &Problem,
    options: &PlanOptions,
    run: impl Fn(&Problem) -> Result<Plan>,
) -> Result<Plan> {
    let safe = graph_rules::stream_safe(problem);
    let problem = safe.as_ref().unwrap_or(problem);
    graph_rules::with_continuous_groups(problem, options, run)
}

/// Refuses pinned buffers ([`crate::Buffer::fixed_offset`]) whose bytes overlap while both are
/// live (in the problem [`semantics::normalise`]d: a no-reuse pin collides at any step): no
/// strategy can honour them, and every strategy must say so rather than plan.
///
/// # Errors
/// [`ErrorKind::Infeasible`] naming both buffers; [`ErrorKind::Overflow`].
fn check_pins(problem: &Problem, options: &PlanOptions) -> Result<()> {
    let mut pinned: Vec<(u64, u64, usize)> = Vec::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(off) = b.fixed_offset {
            let size = options.planned_size(b)?;
            if size > 0 {
                let end = crate::error::add(off, size, format_args!("end of '{}'", b.name))?;
                pinned.push((off, end, i));
            }
        }
    }
    // by offset: a pair overlaps in bytes only if the later one starts before the earlier ends
    pinned.sort_unstable();
    for (k, &(_, end, i)) in pinned.iter().enumerate() {
        for &(off2, _, j) in &pinned[k + 1..] {
            if off2 >= end {
                break;
            }
            let (a, b) = (&problem.buffers[i], &problem.buffers[j]);
            if a.conflicts(b) {
                return Err(Error::new(
                    ErrorKind::Infeasible,
                    alloc::format!(
                        "buffers '{}' and '{}' are pinned to overlapping bytes while both are live",
                        a.name,
                        b.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Every strategy, in the order the CLI lists them.
pub fn strategies() -> &'static [StrategyInfo] {
    STRATEGIES
}

impl Capabilities {
    /// A plain heuristic: no clock, no capacity search, gears overlaid by the registry.
    pub const NONE: Capabilities = Capabilities {
        anytime: false,
        capacity_search: false,
        plans_gears: false,
        graph_rules: false,
        variants: false,
    };
}

/// Strategies that plan gears themselves and use nothing of the context.
const GEARS_ITSELF: Capabilities = Capabilities {
    anytime: false,
    capacity_search: false,
    plans_gears: true,
    graph_rules: false,
    variants: false,
};

/// GE's strategies: gears, streams and continuous groups by GE's own rules.
const GE_RULES: Capabilities = Capabilities {
    anytime: false,
    capacity_search: false,
    plans_gears: true,
    graph_rules: true,
    variants: false,
};

static STRATEGIES: &[StrategyInfo] = &[
    StrategyInfo {
        name: "ge-block",
        family: Family::Block,
        summary: "Huawei CANN GE HybridMemAssigner: binary-block and max-block, keeps the smaller",
        caps: GE_RULES,
        run: |p, o, _| ge_block::hybrid(p, o),
    },
    StrategyInfo {
        name: "ge-binary-block",
        family: Family::Block,
        summary:
            "GE default BlockMemAssigner: exact 512-aligned size classes, LIFO, level-2 nesting",
        caps: GE_RULES,
        run: |p, o, _| ge_block::binary_block(p, o),
    },
    StrategyInfo {
        name: "ge-max-block",
        family: Family::Block,
        summary: "GE MaxBlockMemAssigner: one size class (lifetimes only), no level 2",
        caps: GE_RULES,
        run: |p, o, _| ge_block::max_block(p, o),
    },
    StrategyInfo {
        name: "greedy-size-best-fit",
        family: Family::Packing,
        summary: "TFLite ArenaPlanner: largest first (ties by first use), smallest gap that fits",
        caps: Capabilities::NONE,
        run: |p, o, _| packing::greedy_size_best_fit(p, o),
    },
    StrategyInfo {
        name: "greedy-size-first-fit",
        family: Family::Packing,
        summary: "TFLite Micro GreedyMemoryPlanner: largest first, lowest gap that fits",
        caps: Capabilities::NONE,
        run: |p, o, _| packing::greedy_size_first_fit(p, o),
    },
    StrategyInfo {
        name: "tflm-greedy",
        family: Family::Packing,
        summary: "TFLite Micro GreedyMemoryPlanner as TFLM runs it: offline offsets first, then largest first (ties: last added first), first gap in offset order",
        caps: Capabilities::NONE,
        run: |p, o, _| tflm::greedy(p, o),
    },
    StrategyInfo {
        name: "best-fit-spatial",
        family: Family::Packing,
        summary: "XLA GlobalDecreasingSizeBestFitHeap, spatial order: size, then lifetime; best-fit chunk",
        caps: Capabilities::NONE,
        run: |p, o, _| packing::best_fit_spatial(p, o),
    },
    StrategyInfo {
        name: "best-fit-temporal",
        family: Family::Packing,
        summary: "XLA GlobalDecreasingSizeBestFitHeap, temporal order: lifetime, then size; best-fit chunk",
        caps: Capabilities::NONE,
        run: |p, o, _| packing::best_fit_temporal(p, o),
    },
    StrategyInfo {
        name: "greedy-breadth",
        family: Family::Packing,
        summary: "Pisarchyk & Lee 2020 greedy by breadth: widest ops first, their tensors largest first",
        caps: Capabilities::NONE,
        run: |p, o, _| packing::greedy_breadth(p, o),
    },
    StrategyInfo {
        name: "peak-stack",
        family: Family::Packing,
        summary: "memplan: the buffers of the peak step stacked by birth or by death first, the rest by size; first fit",
        caps: Capabilities::NONE,
        run: |p, o, _| packing::peak_stack(p, o),
    },
    StrategyInfo {
        name: "portfolio",
        family: Family::Packing,
        summary: "every packing heuristic above, keeps the smallest peak (portfolio:<winner>)",
        caps: GEARS_ITSELF,
        run: |p, o, _| packing::portfolio(p, o),
    },
    StrategyInfo {
        name: "optimal",
        family: Family::Packing,
        summary: "exact anytime branch-and-bound over canonical placements (MiniMalloc, Moffitt 2023), seeded by the best heuristic; proves optimality or reports the gap",
        caps: Capabilities { anytime: true, capacity_search: true, plans_gears: true, graph_rules: false, variants: true },
        run: optimal::run_in,
    },
    StrategyInfo {
        name: "no-reuse",
        family: Family::Baseline,
        summary: "every buffer its own bytes, in buffer order (the no-reuse total)",
        caps: GEARS_ITSELF,
        run: |p, o, _| no_reuse::plan(p, o),
    },
    StrategyInfo {
        name: "tflm-linear",
        family: Family::Baseline,
        summary: "TFLite Micro LinearMemoryPlanner: every buffer at the running sum, in TFLM's buffer order",
        caps: GEARS_ITSELF,
        run: |p, o, _| tflm::linear(p, o),
    },
];

/// Looks a strategy up by name.
///
/// # Errors
/// [`ErrorKind::UnknownStrategy`] listing the known names.
pub fn find(name: &str) -> Result<&'static StrategyInfo> {
    STRATEGIES.iter().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = STRATEGIES.iter().map(|s| s.name).collect();
        Error::new(
            ErrorKind::UnknownStrategy,
            alloc::format!("unknown strategy '{name}' (known: {})", known.join(", ")),
        )
    })
}

/// Plans `problem` with the strategy called `name`.
///
/// # Errors
/// [`ErrorKind::UnknownStrategy`] for an unknown name, [`ErrorKind::BadOption`] for bad options,
/// [`ErrorKind::Overflow`] if a padded size or offset exceeds `u64`.
pub fn plan(problem: &Problem, name: &str, options: &PlanOptions) -> Result<Plan> {
    find(name)?.run(problem, options)
}

/// Plans `problem` with the strategy called `name` in `ctx` (clock, capacity, cancellation).
///
/// # Errors
/// As [`plan`].
pub fn plan_in(problem: &Problem, name: &str, options: &PlanOptions, ctx: &Ctx) -> Result<Plan> {
    find(name)?.run_in(problem, options, ctx)
}

/// The planned size of every buffer under `options` (see [`PlanOptions::planned_size`]).
///
/// # Errors
/// [`ErrorKind::Overflow`] naming the buffer.
pub fn planned_sizes(problem: &Problem, options: &PlanOptions) -> Result<Vec<u64>> {
    problem
        .buffers
        .iter()
        .map(|b| options.planned_size(b))
        .collect()
}
