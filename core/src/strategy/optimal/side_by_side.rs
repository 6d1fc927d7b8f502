//! The best of several `optimal` searches run side by side. Threads are the caller's (the CLI
//! and the `optimal` bench run one search per [`super::SolverParams::variant`] in `std`
//! threads); the core is `no_std` and runs one search, and wasm stays single-threaded.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cmp::Reverse;

use crate::plan::Plan;

/// The best of `plans`, each an `optimal` plan of the same problem and options made under
/// another search variant: the smallest peak; ties go to the higher proven lower bound, then
/// to the lower variant. Every lower bound is a proof for the problem, so the kept plan's
/// becomes the highest of them (and it is proven optimal when that meets its peak). Its
/// search figures count the searches (`side_by_side`) and keep its own `variant`; a note
/// names the winner and what each other search reached (peak, nodes). `None` for no plans.
#[must_use]
pub fn keep_best(mut plans: Vec<Plan>) -> Option<Plan> {
    let n = plans.len();
    let lb = |p: &Plan| p.search.as_ref().map_or(0, |s| s.lower_bound);
    let variant = |p: &Plan| p.search.as_ref().map_or(0, |s| s.counts.variant);
    let nodes = |p: &Plan| p.search.as_ref().map_or(0, |s| s.nodes);
    let won =
        (0..n).min_by_key(|&i| (plans[i].peak, Reverse(lb(&plans[i])), variant(&plans[i])))?;
    let (top_lb, top_by) = plans
        .iter()
        .map(|p| (lb(p), variant(p)))
        .max_by_key(|&(b, v)| (b, Reverse(v)))
        .unwrap_or((0, 0));
    let others: Vec<String> = plans
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != won)
        .map(|(_, p)| format!("variant {}: {} B, {} nodes", variant(p), p.peak, nodes(p)))
        .collect();
    let mut best = plans.swap_remove(won);
    let (v, peak, own_nodes, own_lb) = (variant(&best), best.peak, nodes(&best), lb(&best));
    if let Some(s) = best.search.as_mut() {
        s.counts.side_by_side = n as u64;
        if top_lb > s.lower_bound {
            s.lower_bound = top_lb.min(s.best_peak);
            s.proven_optimal = s.lower_bound == s.best_peak;
        }
        best.stats = s.stats();
    }
    let mut note = format!(
        "{n} searches side by side, one thread each: variant {v} kept ({peak} B, {own_nodes} nodes)"
    );
    if !others.is_empty() {
        note.push_str("; ");
        note.push_str(&others.join("; "));
    }
    // before the last note, which states the conclusion
    let at = best.notes.len().saturating_sub(1);
    best.notes.insert(at, note);
    if top_lb > own_lb {
        let proven = if top_lb >= peak {
            String::from("; with it the kept plan is proven optimal")
        } else {
            String::new()
        };
        best.notes.push(format!(
            "variant {top_by} proved a lower bound of {} B, above the {own_lb} B of the kept plan's own search{proven}",
            top_lb.min(peak)
        ));
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::keep_best;
    use crate::plan::{Plan, Search, SearchCounts, Stop};

    /// A one-buffer plan of `peak` bytes as variant `variant` with proven bound `lb`.
    fn plan(peak: u64, lb: u64, variant: u64) -> Plan {
        let mut p = Plan::new("optimal", 1, alloc::vec![0], alloc::vec![peak]).unwrap();
        let s = Search {
            lower_bound: lb,
            best_peak: peak,
            seed_peak: peak,
            proven_optimal: lb == peak,
            nodes: 10 + variant,
            stop: Stop::TimeLimit,
            counts: SearchCounts {
                variant,
                ..SearchCounts::default()
            },
        };
        p.stats = s.stats();
        p.search = Some(s);
        p.notes = alloc::vec![alloc::string::String::from("conclusion")];
        p
    }

    #[test]
    fn the_smallest_peak_wins_and_the_highest_bound_is_kept() {
        assert!(keep_best(Vec::new()).is_none());
        // variant 1 has the smaller peak; variant 0 proved the higher bound
        let best = keep_best(alloc::vec![plan(12, 9, 0), plan(10, 8, 1)]).unwrap();
        let s = best.search.unwrap();
        assert_eq!(
            (best.peak, s.counts.variant, s.counts.side_by_side),
            (10, 1, 2)
        );
        assert_eq!((s.lower_bound, s.proven_optimal), (9, false));
        assert!(best.stats.contains(&("lower_bound".into(), 9)));
        assert_eq!(best.notes.last().map(alloc::string::String::as_str), Some(
            "variant 0 proved a lower bound of 9 B, above the 8 B of the kept plan's own search"
        ));
        assert_eq!(
            best.notes[0],
            "2 searches side by side, one thread each: variant 1 kept (10 B, 11 nodes); variant 0: 12 B, 10 nodes"
        );
        // a bound that meets the kept peak proves it optimal
        let best = keep_best(alloc::vec![plan(11, 10, 0), plan(10, 7, 1)]).unwrap();
        assert!(best.search.unwrap().proven_optimal);
        // ties: the higher bound, then the lower variant
        let best = keep_best(alloc::vec![plan(10, 7, 0), plan(10, 8, 1)]).unwrap();
        assert_eq!(best.search.unwrap().counts.variant, 1);
        let best = keep_best(alloc::vec![plan(10, 8, 1), plan(10, 8, 0)]).unwrap();
        assert_eq!(best.search.unwrap().counts.variant, 0);
    }
}
