//! What a strategy run may use besides the problem and the options: a clock (for the anytime
//! strategies' time limit), a memory budget, and cancellation. One [`Ctx`] is handed to every
//! strategy through the registry, so no caller needs to know which strategy uses what.

/// A millisecond clock supplied by the caller, and an optional cancellation flag.
///
/// Any `Fn() -> u64` returning milliseconds is a clock (`|| start.elapsed().as_millis() as u64`
/// natively, `performance.now()` on the web).
pub trait Clock {
    /// Milliseconds since any fixed origin; must not decrease.
    fn now_ms(&self) -> u64;
    /// Microseconds since the same origin, for timing a plan ([`crate::report::analysis`]);
    /// by default [`Clock::now_ms`] × 1000 (a clock with a finer tick says so).
    fn now_us(&self) -> u64 {
        self.now_ms().saturating_mul(1000)
    }
    /// `true` to stop as soon as possible (the exact search polls it every 128 nodes); the best
    /// plan found so far is returned.
    fn cancelled(&self) -> bool {
        false
    }
}

impl<F: Fn() -> u64> Clock for F {
    fn now_ms(&self) -> u64 {
        self()
    }
}

/// A clock that never moves: only node budgets stop a search.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoClock;

impl Clock for NoClock {
    fn now_ms(&self) -> u64 {
        0
    }
}

/// The context of one strategy run.
///
/// - Untimed ([`Ctx::untimed`], the default of [`crate::plan`]): anytime strategies replace
///   the wall clock by a deterministic work budget derived from
///   [`crate::PlanOptions::time_limit_ms`] (the same answer on every machine; `no_std` has no
///   clock).
/// - Timed ([`Ctx::with_clock`]): anytime strategies stop at `time_limit_ms` of the clock.
/// - With a capacity ([`Ctx::with_capacity`]): strategies that can search for a plan under a
///   budget ([`Capabilities::capacity_search`]) stop at the first plan that fits; the others
///   ignore it (the caller compares their peak with the budget).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    clock: &'a dyn Clock,
    timed: bool,
    capacity: Option<u64>,
    variant: u64,
}

impl core::fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ctx")
            .field("timed", &self.timed)
            .field("capacity", &self.capacity)
            .field("variant", &self.variant)
            .finish_non_exhaustive()
    }
}

impl Default for Ctx<'_> {
    fn default() -> Self {
        Ctx::untimed()
    }
}

impl<'a> Ctx<'a> {
    /// No clock, no capacity: deterministic work budgets.
    pub const fn untimed() -> Ctx<'static> {
        Ctx {
            clock: &NoClock,
            timed: false,
            capacity: None,
            variant: 0,
        }
    }

    /// Anytime strategies run for `time_limit_ms` of `clock`, and stop early when it reports
    /// a cancellation.
    pub fn with_clock(clock: &'a dyn Clock) -> Ctx<'a> {
        Ctx {
            clock,
            timed: true,
            capacity: None,
            variant: 0,
        }
    }

    /// The same context with a memory budget in bytes (`None`: minimise the peak).
    #[must_use]
    pub fn with_capacity(self, capacity: Option<u64>) -> Ctx<'a> {
        Ctx { capacity, ..self }
    }

    /// The same context for search variant `variant` (0, the default, is the usual search;
    /// strategies with [`Capabilities::variants`] vary their random seeds with it, the others
    /// ignore it).
    #[must_use]
    pub fn with_variant(self, variant: u64) -> Ctx<'a> {
        Ctx { variant, ..self }
    }

    /// The search variant ([`Ctx::with_variant`]).
    pub fn variant(&self) -> u64 {
        self.variant
    }

    /// The clock ([`NoClock`] when untimed).
    pub fn clock(&self) -> &'a dyn Clock {
        self.clock
    }

    /// Whether a wall clock bounds anytime strategies (else a work budget does).
    pub fn is_timed(&self) -> bool {
        self.timed
    }

    /// The memory budget in bytes, if any.
    pub fn capacity(&self) -> Option<u64> {
        self.capacity
    }

    /// Whether the caller asked to stop.
    pub fn cancelled(&self) -> bool {
        self.clock.cancelled()
    }
}

/// What a strategy does with the context and with gears, declared in the registry so that
/// callers branch on capabilities, never on names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// Improves with time: honours [`crate::PlanOptions::time_limit_ms`] under the context's
    /// clock, and its notes say what was proven (callers show them, and run it off the main
    /// thread in the browser).
    pub anytime: bool,
    /// Looks for a plan under [`Ctx::capacity`] instead of the smallest peak.
    pub capacity_search: bool,
    /// Plans dynamic-batch gears itself (blocks, baselines, strategies that compare whole
    /// plans); otherwise the registry overlays per-gear plans
    /// ([`crate::strategy::overlay::plan_overlaid`]).
    pub plans_gears: bool,
    /// Honours a graph's streams and continuous groups by its own rules (GE); otherwise the
    /// registry plans it with lifetimes safe across streams and each continuous group as
    /// one buffer ([`crate::strategy::with_graph_rules`]).
    pub graph_rules: bool,
    /// Searches differently under each [`Ctx::variant`] (other random seeds), so a caller
    /// with threads can run several side by side and keep the best
    /// ([`crate::strategy::optimal::keep_best`]); the core itself runs one (it has no
    /// threads: `no_std`, and wasm is single-threaded).
    pub variants: bool,
}
