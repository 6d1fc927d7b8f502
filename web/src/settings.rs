//! One pane's settings: the knobs that change a plan, as data (printable, comparable, shareable).

use memplan_core::{strategies, Padding, PlanOptions};
use serde::{Deserialize, Serialize};

/// Most panes a page shows (and a link may ask for).
pub const MAX_PANES: usize = 6;
/// Largest custom alignment accepted, bytes.
pub const MAX_ALIGNMENT: u64 = 1 << 30;
/// Alignments offered in the menu, bytes.
pub const ALIGNMENTS: [u64; 5] = [32, 64, 128, 256, 512];

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
}

/// Runtime allocators a pane can simulate beside the static plans (`memplan simulate`):
/// name and one-line summary.
pub const RUNTIME: &[(&str, &str)] = &[
    (
        "runtime-reuse",
        "runtime: first-fit reuse manager (acl-adapter style): reuse the first free buffer that is large enough, else create one",
    ),
    (
        "runtime-bfc",
        "runtime: best fit with coalescing (BFC-like arena): split and merge chunks",
    ),
    (
        "runtime-pool",
        "runtime: fixed-block pool, 2 MiB blocks; larger requests take consecutive free blocks",
    ),
];

/// The strategy names, in registry order, then the runtime allocators.
pub fn strategy_names() -> Vec<&'static str> {
    strategies()
        .iter()
        .map(|s| s.name)
        .chain(RUNTIME.iter().map(|r| r.0))
        .collect()
}

/// Whether `name` is a registered strategy or a runtime allocator.
pub fn is_strategy(name: &str) -> bool {
    strategy_names().contains(&name)
}

/// Whether `name` is a runtime allocator rather than a static plan.
pub fn is_runtime(name: &str) -> bool {
    RUNTIME.iter().any(|r| r.0 == name)
}

/// The registry's one-line summary of a strategy or runtime allocator.
pub fn summary(name: &str) -> &'static str {
    strategies()
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.summary)
        .or_else(|| RUNTIME.iter().find(|r| r.0 == name).map(|r| r.1))
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

impl PaneSettings {
    /// Default settings for pane `index` (0-based) given the strategies other panes use;
    /// `graph` selects GE defaults (alignment 512, GE padding), else exact sizes (CSV problems).
    pub fn default_for(index: usize, graph: bool, used: &[&str]) -> Self {
        let strategy = match index {
            0 => first_of(&["ge-block"], &[]),
            1 => first_of(&["greedy-size-best-fit"], &[]),
            _ => first_of(&[], used),
        };
        let base = if graph {
            PlanOptions::default()
        } else {
            PlanOptions::exact()
        };
        PaneSettings {
            strategy,
            alignment: base.alignment,
            ge_padding: base.padding == Padding::Ge,
            reuse: base.reuse,
            zero_copy_io: base.zero_copy_io,
            atomic_centralised: base.atomic_centralised,
        }
    }

    /// Switches size rules to the defaults of a graph (GE) or a bare problem (exact).
    pub fn retarget(&mut self, graph: bool) {
        let d = Self::default_for(0, graph, &[]);
        self.alignment = d.alignment;
        self.ge_padding = d.ge_padding;
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
            ..PlanOptions::default()
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
        if self.alignment == 0 || self.alignment > MAX_ALIGNMENT {
            return Err(format!(
                "alignment {} is out of range (1 to {MAX_ALIGNMENT} bytes)",
                self.alignment
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
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_registry() {
        let a = PaneSettings::default_for(0, true, &[]);
        assert!(is_strategy(&a.strategy));
        assert_eq!(a.alignment, 512);
        assert!(a.ge_padding);
        let b = PaneSettings::default_for(1, true, &[]);
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
