//! One pane's settings: the knobs that change a plan, as data (printable, comparable, shareable).

use std::sync::OnceLock;

use memplan_core::simulate::{registry, tiered, SimSwitches, TierPolicy};
use memplan_core::{strategies, Padding, PlanOptions};
use serde::{Deserialize, Serialize};

/// Most panes a page shows (and a link may ask for).
pub const MAX_PANES: usize = 6;
/// Largest custom alignment accepted, bytes.
pub const MAX_ALIGNMENT: u64 = 1 << 30;
/// Alignments offered in the menu, bytes (16: TFLM's `MicroArenaBufferAlignment()`).
pub const ALIGNMENTS: [u64; 6] = [16, 32, 64, 128, 256, 512];

/// How the timeline compares the panes' plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareMode {
    /// One timeline: the focused pane's, on its own axes.
    #[default]
    Off,
    /// Every pane's timeline, one under another, on one shared step axis and one shared byte
    /// axis (up to the largest peak), so that heights compare by eye.
    Side,
    /// The focused pane's timeline with the tensors outlined whose offset differs in pane
    /// [`Compare::with`] (dashed: where that pane puts them), on the two panes' shared axes.
    Diff,
}

/// The compare view's state (in links as `cmp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Compare {
    /// What is drawn.
    #[serde(rename = "m")]
    pub mode: CompareMode,
    /// In [`CompareMode::Diff`]: the 0-based index of the pane the focused one is compared
    /// against.
    #[serde(rename = "w", default)]
    pub with: usize,
}

impl Compare {
    /// The pane a diff of pane `focus` is taken against among `panes` panes: [`Compare::with`]
    /// if it is another pane that exists, else the first other pane; `None` with one pane.
    pub fn other(&self, focus: usize, panes: usize) -> Option<usize> {
        if self.with < panes && self.with != focus {
            return Some(self.with);
        }
        (0..panes).find(|&j| j != focus)
    }
}

/// Settings of one comparison pane.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PaneSettings {
    /// Strategy name (from the core's registry).
    #[serde(rename = "s")]
    pub strategy: String,
    /// Block alignment in bytes.
    #[serde(rename = "a")]
    pub alignment: u64,
    /// `true`: GE padding `ceil32(bytes) + 32`; `false`: raw sizes.
    #[serde(rename = "g")]
    pub ge_padding: bool,
    /// Memory reuse on.
    #[serde(rename = "r")]
    pub reuse: bool,
    /// Graph inputs/outputs are zero-copy user buffers.
    #[serde(rename = "z")]
    pub zero_copy_io: bool,
    /// Atomic-clean outputs cleaned centrally (policy 0) rather than one by one (policy 1).
    #[serde(rename = "c")]
    pub atomic_centralised: bool,
    /// GE strategies with gears: cut the largest gear's region into virtual blocks of at
    /// most 400 MiB (expandable memory, GE `ge.exec.staticMemoryPolicy`,
    /// `kMaxSplitSizeForDynamicBatch`); left out of links when off.
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    pub expandable_memory: bool,
    /// GE strategies with zero-copy graph I/O: zero-copy blocks host other tensors by their
    /// real size and stay in the zero-copy region (GE `ge.exec.inputReuseMemIndexes` /
    /// `outputReuseMemIndexes`, [`PlanOptions::zero_copy_reuse`]); left out of links when off.
    #[serde(rename = "zr", default, skip_serializing_if = "std::ops::Not::not")]
    pub zero_copy_reuse: bool,
    /// Runtime panes: the allocator's knobs (left out of links when all default).
    #[serde(
        rename = "k",
        default,
        skip_serializing_if = "RuntimeKnobs::is_default"
    )]
    pub knobs: RuntimeKnobs,
    /// Anytime strategies (the exact search): the time limit in milliseconds (`None`: core's
    /// default, [`PlanOptions::time_limit_ms`]); carried by links so that an `optimal` pane is
    /// reproduced from its link.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ms: Option<u64>,
}

/// Longest time limit a pane may ask for, milliseconds (10 minutes: a browser tab that plans
/// for longer is most likely forgotten).
pub const MAX_TIME_LIMIT_MS: u64 = 600_000;

/// Pane kinds of the runtime allocators (`runtime-` + the core registry's name) with their
/// one-line summaries, in registry order.
pub fn runtime_kinds() -> &'static [(&'static str, &'static str)] {
    static KINDS: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    KINDS.get_or_init(|| {
        registry::allocators()
            .iter()
            .map(|a| {
                let name: &'static str = Box::leak(format!("runtime-{}", a.name).into_boxed_str());
                let summary: &'static str =
                    Box::leak(format!("runtime: {}", a.summary).into_boxed_str());
                (name, summary)
            })
            .collect()
    })
}

/// The core registry's entry for a `runtime-NAME` pane kind.
pub fn runtime_allocator(kind: &str) -> Option<&'static registry::RuntimeAllocator> {
    kind.strip_prefix("runtime-").and_then(registry::find)
}

/// The strategy names, in registry order, then the runtime allocators.
pub fn strategy_names() -> Vec<&'static str> {
    strategies()
        .iter()
        .map(|s| s.name)
        .chain(runtime_kinds().iter().map(|r| r.0))
        .collect()
}

/// Whether `name` is a registered strategy or a runtime allocator.
pub fn is_strategy(name: &str) -> bool {
    strategy_names().contains(&name)
}

/// Whether `name` is a GE block-reuse strategy (the registry's `Block` family).
pub fn is_block(name: &str) -> bool {
    strategies()
        .iter()
        .any(|s| s.name == name && s.family == memplan_core::strategy::Family::Block)
}

/// Whether `name` is an anytime strategy (the exact search): it stops at its time limit, so
/// the time it may take is known before it starts.
pub fn is_anytime(name: &str) -> bool {
    strategies()
        .iter()
        .any(|s| s.name == name && s.caps.anytime)
}

/// Whether `name` is a runtime allocator rather than a static plan.
pub fn is_runtime(name: &str) -> bool {
    runtime_allocator(name).is_some()
}

/// Largest byte figure a runtime knob accepts (1 TiB).
pub const MAX_KNOB_BYTES: u64 = 1 << 40;
/// Most blocks an `acl-pool` knob accepts.
pub const MAX_KNOB_BLOCKS: u64 = 1 << 32;
/// Longest text knob (levels, mapping), characters.
pub const MAX_KNOB_TEXT: usize = 1024;

/// A runtime pane's allocator knobs (the core's `RuntimeOptions`, as short shareable fields;
/// `None` / empty: the allocator's default). The block alignment of the pane is the
/// rounding of `reuse` and `bfc`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RuntimeKnobs {
    /// `pool`, `acl-pool`: block size, bytes.
    #[serde(rename = "bs", skip_serializing_if = "Option::is_none")]
    pub block: Option<u64>,
    /// `acl-pool`: number of blocks.
    #[serde(rename = "nb", skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    /// `pool`: pool size, bytes.
    #[serde(rename = "ps", skip_serializing_if = "Option::is_none")]
    pub pool: Option<u64>,
    /// `reuse`: table capacity.
    #[serde(rename = "tc", skip_serializing_if = "Option::is_none")]
    pub table: Option<u64>,
    /// `acl-tiered`: levels `NAME=BYTES,…` (empty: L1 1 MiB, L2 8 MiB, L3 32 MiB, DDR inf).
    #[serde(rename = "lv", skip_serializing_if = "String::is_empty")]
    pub levels: String,
    /// `acl-tiered`: block size of every level, bytes.
    #[serde(rename = "tb", skip_serializing_if = "Option::is_none")]
    pub tier_block: Option<u64>,
    /// `acl-tiered`: `frequency` (empty) or `fastest`.
    #[serde(rename = "po", skip_serializing_if = "String::is_empty")]
    pub policy: String,
    /// `acl-tiered`: `TENSOR=LEVEL,…`.
    #[serde(rename = "mp", skip_serializing_if = "String::is_empty")]
    pub map: String,
    /// `ge-v1`, `ge-v2`: page size, bytes.
    #[serde(rename = "pg", skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// `ge-v2`: total threshold, bytes.
    #[serde(rename = "th", skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    /// Statistics off.
    #[serde(rename = "ns", skip_serializing_if = "std::ops::Not::not")]
    pub no_stats: bool,
    /// Leak detector off.
    #[serde(rename = "nl", skip_serializing_if = "std::ops::Not::not")]
    pub no_leaks: bool,
}

impl RuntimeKnobs {
    /// Whether every knob is at its default (then a link leaves them out).
    pub fn is_default(&self) -> bool {
        *self == RuntimeKnobs::default()
    }

    /// The knob called `name` (a core registry knob name) as the text its field shows.
    pub fn get(&self, name: &str) -> String {
        let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
        match name {
            "block-size" => n(self.block),
            "num-blocks" => n(self.blocks),
            "pool-size" => n(self.pool),
            "table-capacity" => n(self.table),
            "levels" => self.levels.clone(),
            "tier-block-size" => n(self.tier_block),
            "policy" => self.policy.clone(),
            "map" => self.map.clone(),
            "page-size" => n(self.page),
            "threshold" => n(self.threshold),
            "no-stats" => self.no_stats.to_string(),
            "no-leak-detector" => self.no_leaks.to_string(),
            _ => String::new(),
        }
    }

    /// Sets the knob called `name` from a field's text (empty: back to the default).
    ///
    /// # Errors
    /// A sentence naming the knob and the accepted range.
    pub fn set(&mut self, name: &str, text: &str) -> Result<(), String> {
        let t = text.trim();
        let num = |max: u64| -> Result<Option<u64>, String> {
            if t.is_empty() {
                return Ok(None);
            }
            match t.parse::<u64>() {
                Ok(v) if (1..=max).contains(&v) => Ok(Some(v)),
                _ => Err(format!("{name}: a whole number from 1 to {max}")),
            }
        };
        let text_knob = || -> Result<String, String> {
            if t.chars().count() > MAX_KNOB_TEXT {
                Err(format!("{name}: at most {MAX_KNOB_TEXT} characters"))
            } else {
                Ok(t.to_string())
            }
        };
        let mut n = self.clone();
        match name {
            "block-size" => n.block = num(MAX_KNOB_BYTES)?,
            "num-blocks" => n.blocks = num(MAX_KNOB_BLOCKS)?,
            "pool-size" => n.pool = num(MAX_KNOB_BYTES)?,
            "table-capacity" => n.table = num(MAX_KNOB_BLOCKS)?,
            "levels" => n.levels = text_knob()?,
            "tier-block-size" => n.tier_block = num(MAX_KNOB_BYTES)?,
            "policy" => n.policy = text_knob()?,
            "map" => n.map = text_knob()?,
            "page-size" => n.page = num(MAX_KNOB_BYTES)?,
            "threshold" => n.threshold = num(u64::MAX)?,
            "no-stats" => n.no_stats = t == "true",
            "no-leak-detector" => n.no_leaks = t == "true",
            _ => return Err(format!("unknown knob '{name}'")),
        }
        n.options(1)?;
        *self = n;
        Ok(())
    }

    /// Checks every knob's range and length (values may come from an untrusted link).
    ///
    /// # Errors
    /// A sentence naming the bad knob.
    pub fn validate(&self) -> Result<(), String> {
        const NAMES: [&str; 12] = [
            "block-size",
            "num-blocks",
            "pool-size",
            "table-capacity",
            "levels",
            "tier-block-size",
            "policy",
            "map",
            "page-size",
            "threshold",
            "no-stats",
            "no-leak-detector",
        ];
        let mut fresh = RuntimeKnobs::default();
        for n in NAMES {
            let v = self.get(n);
            if v.chars().count() > MAX_KNOB_TEXT {
                return Err(format!("{n}: at most {MAX_KNOB_TEXT} characters"));
            }
            fresh.set(n, &v)?;
        }
        Ok(())
    }

    /// The core's options, `alignment` from the pane.
    ///
    /// # Errors
    /// A sentence naming the bad knob (levels, policy, mapping).
    pub fn options(&self, alignment: u64) -> Result<registry::RuntimeOptions, String> {
        let mut o = registry::RuntimeOptions {
            pool_bytes: self.pool,
            block_bytes: self.block,
            num_blocks: self.blocks,
            alignment,
            page_bytes: self.page,
            threshold_bytes: self.threshold,
            switches: SimSwitches {
                stats: !self.no_stats,
                leak_detector: !self.no_leaks,
                ..SimSwitches::default()
            },
            ..registry::RuntimeOptions::default()
        };
        if let Some(t) = self.table {
            o.table_capacity = t;
        }
        if let Some(b) = self.tier_block {
            o.tier_block_bytes = b;
        }
        if !self.levels.is_empty() {
            o.levels = tiered::parse_levels(&self.levels).map_err(|e| e.to_string())?;
        }
        if !self.policy.is_empty() {
            o.policy = TierPolicy::parse(&self.policy).map_err(|e| e.to_string())?;
        }
        for part in self.map.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (t, l) = part
                .split_once('=')
                .ok_or_else(|| format!("map: '{part}' is not TENSOR=LEVEL"))?;
            o.mapping.push((t.trim().to_string(), l.trim().to_string()));
        }
        // what the tiered manager refuses whatever the model (level order, mapped levels):
        // said under the field, before a plan fails on it
        memplan_core::simulate::acl_tiered::check_options(
            &o.levels,
            o.tier_block_bytes,
            &o.mapping,
        )
        .map_err(|e| e.to_string())?;
        Ok(o)
    }
}

/// The registry's one-line summary of a strategy or runtime allocator.
pub fn summary(name: &str) -> &'static str {
    strategies()
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.summary)
        .or_else(|| runtime_kinds().iter().find(|r| r.0 == name).map(|r| r.1))
        .unwrap_or("")
}

fn first_of(preferred: &[&str], avoid: &[&str]) -> String {
    let names = strategy_names();
    preferred
        .iter()
        .copied()
        .find(|p| names.contains(p) && !avoid.contains(p))
        .or_else(|| names.iter().copied().find(|n| !avoid.contains(n)))
        .or_else(|| names.first().copied())
        .unwrap_or("no-reuse")
        .to_string()
}

/// The size rules and comparison a model's panes start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// A graph: GE's (alignment 512, GE padding, zero-copy graph I/O); `ge-block` against
    /// `greedy-size-best-fit`.
    Ge,
    /// A `.tflite` model: TFLM's (core's `Format::Tflite.default_plan_options()`: 16 B, no
    /// padding, graph I/O in the arena), so that a plan exports to TFLM as is; TFLM's own
    /// `tflm-greedy` against the best packing memplan finds (`optimal`).
    Tflm,
    /// A bare buffer list: exact sizes.
    Exact,
}

impl Rules {
    /// The rules of a graph (`graph`) or a bare problem, `tflm` for a `.tflite` model.
    pub fn of(graph: bool, tflm: bool) -> Rules {
        match (graph, tflm) {
            (_, true) => Rules::Tflm,
            (true, false) => Rules::Ge,
            (false, false) => Rules::Exact,
        }
    }

    fn options(self) -> PlanOptions {
        match self {
            Rules::Ge => PlanOptions::default(),
            Rules::Tflm => memplan_core::import::load::Format::Tflite.default_plan_options(),
            Rules::Exact => PlanOptions::exact(),
        }
    }
}

impl Rules {
    /// Why pane `index` opens with `strategy` under these rules, in one line (shown in the
    /// pane while it keeps that strategy); `None` for panes past the first two or a strategy
    /// the user chose.
    pub fn why(self, index: usize, strategy: &str) -> Option<&'static str> {
        let why = match (index, self) {
            (0, Rules::Tflm) => "TFLM's own planner, as the runtime plans this model.",
            (1, Rules::Tflm) => "The best packing memplan can prove under TFLM's rules: what TFLM's planner leaves.",
            (0, Rules::Ge) => "GE's static plan: blocks reused under GE's rules (512 B, padding), decided before the graph runs.",
            (1, Rules::Ge) => "GE's own runtime allocator on the same tensors, allocating as the graph runs: what planning ahead saves.",
            (0, Rules::Exact) => "GE's block reuse on the buffer list, at exact sizes.",
            (1, Rules::Exact) => "A plain offset packing (largest first, best fit) to compare GE's blocks with.",
            _ => return None,
        };
        let default = PaneSettings::default_under(index, self, &[]);
        (default.strategy == strategy).then_some(why)
    }
}

impl PaneSettings {
    /// Default settings for pane `index` (0-based) given the strategies other panes use;
    /// `graph` selects GE defaults (alignment 512, GE padding), else exact sizes (CSV problems).
    pub fn default_for(index: usize, graph: bool, used: &[&str]) -> Self {
        Self::default_under(index, Rules::of(graph, false), used)
    }

    /// Default settings for pane `index` (0-based) under `rules`, given the strategies other
    /// panes use.
    pub fn default_under(index: usize, rules: Rules, used: &[&str]) -> Self {
        let strategy = match (index, rules) {
            (0, Rules::Tflm) => first_of(&["tflm-greedy"], &[]),
            (1, Rules::Tflm) => first_of(&["optimal"], &[]),
            (0, _) => first_of(&["ge-block"], &[]),
            // GE's static plan against GE's own runtime allocator on the same tensors: on
            // every graph sample they differ (MobileNetV2: 10,241,536 B against 13,603,328 B),
            // where a second static packing ties with ge-block at GE's 512 B rules
            (1, Rules::Ge) => first_of(&["runtime-ge-v2"], &[]),
            (1, _) => first_of(&["greedy-size-best-fit"], &[]),
            _ => first_of(&[], used),
        };
        let base = rules.options();
        PaneSettings {
            strategy,
            alignment: base.alignment,
            ge_padding: base.padding == Padding::Ge,
            reuse: base.reuse,
            zero_copy_io: base.zero_copy_io,
            atomic_centralised: base.atomic_centralised,
            expandable_memory: base.expandable_memory,
            zero_copy_reuse: base.zero_copy_reuse,
            knobs: RuntimeKnobs::default(),
            time_limit_ms: None,
        }
    }

    /// Switches size rules to the defaults of a graph (GE) or a bare problem (exact).
    pub fn retarget(&mut self, graph: bool) {
        let d = Self::default_for(0, graph, &[]);
        self.alignment = d.alignment;
        self.ge_padding = d.ge_padding;
    }

    /// Switches every setting to `rules`' defaults for pane `index` (a model of another kind
    /// opened: a `.tflite` model's panes compare TFLM's planner with the best packing).
    pub fn reset_to(&mut self, index: usize, rules: Rules, used: &[&str]) {
        *self = Self::default_under(index, rules, used);
    }

    /// The core's options for these settings.
    pub fn options(&self) -> PlanOptions {
        PlanOptions {
            alignment: self.alignment,
            padding: if self.ge_padding {
                Padding::Ge
            } else {
                Padding::None
            },
            reuse: self.reuse,
            zero_copy_io: self.zero_copy_io,
            atomic_centralised: self.atomic_centralised,
            expandable_memory: self.expandable_memory,
            zero_copy_reuse: self.zero_copy_reuse,
            // the playground has no zero-copy alignment field yet: GE's code's default
            zero_copy_alignment: None,
            time_limit_ms: self
                .time_limit_ms
                .unwrap_or(PlanOptions::default().time_limit_ms),
        }
    }

    /// Checks values that may come from an untrusted link.
    ///
    /// # Errors
    /// A sentence naming the bad field.
    pub fn check(&self) -> Result<(), String> {
        if !is_strategy(&self.strategy) {
            return Err(format!(
                "unknown strategy '{}' (this version has: {})",
                self.strategy.chars().take(64).collect::<String>(),
                strategy_names().join(", ")
            ));
        }
        self.knobs.validate()?;
        if is_runtime(&self.strategy) {
            self.knobs.options(self.alignment)?;
        }
        if self.alignment == 0 || self.alignment > MAX_ALIGNMENT {
            return Err(format!(
                "alignment {} is out of range (1 to {MAX_ALIGNMENT} bytes)",
                self.alignment
            ));
        }
        if let Some(t) = self
            .time_limit_ms
            .filter(|t| *t == 0 || *t > MAX_TIME_LIMIT_MS)
        {
            return Err(format!(
                "time limit {t} ms is out of range (1 to {MAX_TIME_LIMIT_MS} ms)"
            ));
        }
        Ok(())
    }

    /// A short label: `ge-block · 512 B · GE pad`.
    pub fn label(&self) -> String {
        let mut s = format!("{} · align {}", self.strategy, self.alignment);
        if self.ge_padding {
            s.push_str(" · GE pad");
        }
        if !self.reuse {
            s.push_str(" · no reuse");
        }
        if self.expandable_memory {
            s.push_str(" · 400 MiB split");
        }
        if self.zero_copy_reuse {
            s.push_str(" · zero-copy reuse");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ge_switches_reach_the_options_and_stay_out_of_links_when_off() {
        let mut s = PaneSettings::default_for(0, true, &[]);
        let off = serde_json::to_string(&s).unwrap();
        assert!(!off.contains("\"zr\"") && !off.contains("\"x\""), "{off}");
        assert!(!s.options().zero_copy_reuse && !s.options().expandable_memory);
        s.zero_copy_reuse = true;
        s.expandable_memory = true;
        let on = serde_json::to_string(&s).unwrap();
        assert!(
            on.contains("\"zr\":true") && on.contains("\"x\":true"),
            "{on}"
        );
        let back: PaneSettings = serde_json::from_str(&on).unwrap();
        assert_eq!(back, s);
        assert!(back.options().zero_copy_reuse && back.options().expandable_memory);
        assert!(
            s.label().ends_with(" · 400 MiB split · zero-copy reuse"),
            "{}",
            s.label()
        );
    }

    #[test]
    fn a_tflite_model_starts_on_tflm_rules_comparing_its_planner_with_the_best_packing() {
        let a = PaneSettings::default_under(0, Rules::Tflm, &[]);
        let b = PaneSettings::default_under(1, Rules::Tflm, &["tflm-greedy"]);
        assert_eq!(
            (a.strategy.as_str(), b.strategy.as_str()),
            ("tflm-greedy", "optimal")
        );
        for s in [&a, &b] {
            // TFLM: micro_allocator.cc rounds to 16 B, no padding, graph I/O in the arena
            assert_eq!(s.alignment, 16);
            assert!(!s.ge_padding && !s.zero_copy_io && s.reuse);
            assert!(s.check().is_ok());
        }
        assert_eq!(Rules::of(true, true), Rules::Tflm);
        assert_eq!(Rules::of(true, false), Rules::Ge);
    }

    #[test]
    fn defaults_come_from_the_registry() {
        let a = PaneSettings::default_for(0, true, &[]);
        assert!(is_strategy(&a.strategy));
        assert_eq!(a.alignment, 512);
        assert!(a.ge_padding);
        // a graph's second pane is GE's runtime allocator; a buffer list's a plain packing
        let b = PaneSettings::default_for(1, true, &[]);
        assert_eq!(b.strategy, "runtime-ge-v2");
        assert!(is_runtime(&b.strategy));
        let b = PaneSettings::default_for(1, false, &[]);
        assert_eq!(b.strategy, "greedy-size-best-fit");
        let c = PaneSettings::default_for(2, false, &["greedy-size-best-fit"]);
        assert_ne!(c.strategy, "greedy-size-best-fit");
        assert_eq!(c.alignment, 1);
        assert!(c.check().is_ok());
        let mut bad = c.clone();
        bad.alignment = 0;
        assert!(bad.check().is_err());
        bad.alignment = 8;
        bad.strategy = "nope".into();
        assert!(bad.check().unwrap_err().contains("unknown strategy 'nope'"));
    }
}
