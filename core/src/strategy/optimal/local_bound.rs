//! A stronger lower bound for large inputs: the smallest peak of any subset of the buffers
//! bounds the peak of the whole problem (removing buffers never raises the optimum). The
//! subsets tried are the buffers live in a few steps around the heaviest time sections; each
//! is searched exactly ([`super::minimize`]) under a node budget, so an exhausted search
//! proves that no plan of the whole problem has a peak below what it proved for the subset.
//!
//! This is where the live-set bound is weakest: it sees one step at a time, while buffers of
//! neighbouring steps can force each other up (a buffer live at two heavy steps must sit
//! where both of them leave room).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::instance::{Inst, Item};
use super::search::Limits;
use super::window::with_budget;
use super::SolverParams;

/// Heaviest sections around which subsets are taken.
const CENTRES: usize = 4;
/// Half-widths (steps) of the subsets around a centre, smallest first.
const REACH: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Nodes one subset's exact search may spend.
const SUBSET_NODES: u64 = 200_000;

/// What [`raise`] proved.
pub(crate) struct Raised {
    /// The proven lower bound (at least the one given).
    pub lower_bound: u64,
    /// Says which subset proved it (`None` when nothing was raised).
    pub note: Option<String>,
    /// Subsets searched.
    pub subsets: u64,
}

impl Raised {
    /// Nothing tried: the bound `lb` as it was.
    pub(crate) fn none(lb: u64) -> Raised {
        Raised {
            lower_bound: lb,
            note: None,
            subsets: 0,
        }
    }
}

/// The steps of the heaviest sections of `items` (load = bytes of the non-empty buffers
/// live there), heaviest first, at most `k`, each from a different section.
pub(crate) fn heavy_steps(items: &[Item], k: usize) -> Vec<(u64, u64)> {
    // sweep: +size at start, -size after end; a section starts at each event step
    let mut ev: Vec<(u64, bool, u64)> = Vec::with_capacity(2 * items.len());
    for it in items.iter().filter(|it| it.size > 0) {
        ev.push((it.start, true, it.size));
        ev.push((it.end.saturating_add(1), false, it.size));
    }
    ev.sort_unstable();
    let mut load = 0u64;
    let mut sections: Vec<(u64, u64)> = Vec::new(); // (load, step)
    let mut i = 0;
    while i < ev.len() {
        let t = ev[i].0;
        while i < ev.len() && ev[i].0 == t {
            if ev[i].1 {
                load = load.saturating_add(ev[i].2);
            } else {
                load = load.saturating_sub(ev[i].2);
            }
            i += 1;
        }
        sections.push((load, t));
    }
    sections.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    sections.truncate(k);
    sections
}

/// Raises `lb` by exact searches on subsets around the heaviest sections of `items`, given a
/// valid plan `offsets` of peak `best` (which seeds each subset's search). Stops at `best`
/// (then `offsets` is proven optimal), at the limits, or when every subset is tried.
pub(crate) fn raise(
    items: &[Item],
    offsets: &[u64],
    lb: u64,
    best: u64,
    params: &SolverParams,
    limits: &mut Limits<'_>,
) -> Raised {
    let mut out = Raised::none(lb);
    // centres: the heaviest sections, then where the plan sticks out above the bound
    let mut tall: Vec<(u64, u64)> = (0..items.len())
        .filter(|&i| items[i].size > 0 && offsets[i].saturating_add(items[i].size) > lb)
        .map(|i| (offsets[i].saturating_add(items[i].size), items[i].start))
        .collect();
    tall.sort_unstable_by(|a, b| b.cmp(a));
    tall.truncate(CENTRES);
    let centres: Vec<u64> = heavy_steps(items, CENTRES)
        .into_iter()
        .chain(tall)
        .map(|c| c.1)
        .collect();
    for centre in centres {
        for reach in REACH {
            if out.lower_bound >= best || limits.stopped {
                return out;
            }
            let (a, b) = (centre.saturating_sub(reach), centre.saturating_add(reach));
            let pick: Vec<usize> = (0..items.len())
                .filter(|&i| items[i].size > 0 && items[i].start <= b && a <= items[i].end)
                .collect();
            let free = pick.iter().filter(|&&i| items[i].fixed.is_none()).count();
            if free > params.max_exact_buffers {
                break;
            }
            let sub: Vec<Item> = pick.iter().map(|&i| items[i]).collect();
            let inst = Inst::new(&sub);
            let seed: Vec<u64> = inst.free.iter().map(|&s| offsets[pick[s]]).collect();
            let seed_peak = super::peak_of(&inst, &seed);
            let sub_lb = out.lower_bound.min(seed_peak);
            out.subsets += 1;
            let (_, proven) = with_budget(limits, SUBSET_NODES, |l| {
                super::minimize(&inst, seed, seed_peak, sub_lb, params, l)
            });
            if proven > out.lower_bound {
                out.lower_bound = proven;
                out.note = Some(format!(
                    "lower bound {proven} B: the {} buffers live in steps {a}-{b} cannot be packed below it (exhaustive search of that subset; a subset's minimum peak bounds the whole problem's)",
                    pick.len()
                ));
            }
            if seed_peak <= sub_lb {
                // this subset already fits under the bound: a wider one may not
                continue;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{heavy_steps, raise, Item, Limits, SolverParams};

    fn item(size: u64, start: u64, end: u64) -> Item {
        Item {
            size,
            align: 1,
            start,
            end,
            fixed: None,
        }
    }

    #[test]
    fn heavy_steps_are_the_most_loaded_sections() {
        // loads: step 0: 2; steps 1-2: 2 + 3 = 5; step 3: 3 + 4 = 7; step 4: 4
        let items = [item(2, 0, 2), item(3, 1, 3), item(4, 3, 4)];
        assert_eq!(heavy_steps(&items, 2), [(7, 3), (5, 1)]);
    }

    #[test]
    fn a_subset_search_proves_what_a_weaker_bound_missed() {
        // a = 2 B at steps 0-1, b = 2 B at steps 1-2, c = 1 B at step 0, d = 1 B at step 2:
        // a and b are live together at step 1, so every plan peaks at 4 or more, and the plan
        // a@0, b@2, c@2, d@0 reaches 4. Given only the bound 3, the subset around the
        // heaviest section (step 1) is searched and proves 4.
        let items = [item(2, 0, 1), item(2, 1, 2), item(1, 0, 0), item(1, 2, 2)];
        let offsets = [0, 2, 2, 0];
        let mut limits = Limits::nodes_only(1_000_000);
        let r = raise(
            &items,
            &offsets,
            3,
            4,
            &SolverParams::default(),
            &mut limits,
        );
        assert_eq!(r.lower_bound, 4);
        assert_eq!(r.subsets, 1);
        assert!(r
            .note
            .is_some_and(|n| n.starts_with("lower bound 4 B: the 4 buffers")));
    }
}
