//! Lower bounds: no plan of a problem can use less than these.

use alloc::vec::Vec;

use crate::error::{add, Result};
use crate::problem::Problem;

/// The live-set lower bound and the no-reuse total of a problem, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Bounds {
    /// Max over steps of the sum of the sizes live at that step (the "LOAD"). With gears,
    /// the max over gears of (ungeared + that gear's buffers). It depends on the schedule:
    /// another topological order gives another bound.
    pub lower_bound: u64,
    /// First step at which the lower bound is reached.
    pub peak_step: u64,
    /// Sum of all sizes: the arena with no reuse at all. With gears, ungeared plus the
    /// largest gear's sum (gears overlay even without reuse inside them).
    pub no_reuse: u64,
}

/// Computes [`Bounds`] from raw buffer sizes (`size_of(i)` gives the size to count, so callers
/// can pass padded sizes).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if a sum exceeds `u64`; [`crate::ErrorKind::Invalid`] if a
/// counted buffer's live range starts after it ends.
pub fn bounds_with(problem: &Problem, size_of: impl Fn(usize) -> Result<u64>) -> Result<Bounds> {
    let sizes: Vec<u64> = (0..problem.buffers.len())
        .map(&size_of)
        .collect::<Result<_>>()?;
    let gears = problem.gears();
    let mut best = Bounds::default();
    let candidates: Vec<Option<u64>> = if gears.is_empty() {
        alloc::vec![None]
    } else {
        gears.into_iter().map(Some).collect()
    };
    for g in candidates {
        let keep = |i: usize| problem.buffers[i].gear.is_none() || problem.buffers[i].gear == g;
        let (lb, step) = live_peak(problem, &sizes, keep)?;
        if lb > best.lower_bound {
            best.lower_bound = lb;
            best.peak_step = step;
        }
        let total = (0..sizes.len())
            .filter(|&i| keep(i))
            .try_fold(0u64, |acc, i| add(acc, sizes[i], "no-reuse total"))?;
        best.no_reuse = best.no_reuse.max(total);
    }
    Ok(best)
}

/// [`bounds_with`] on the buffers' raw sizes.
///
/// # Errors
/// As [`bounds_with`].
pub fn lower_bound(problem: &Problem) -> Result<Bounds> {
    bounds_with(problem, |i| Ok(problem.buffers[i].size))
}

/// Live bytes at every step `0..steps` (raw sizes, all gears summed: use for plots of
/// problems without gears, or filter first).
///
/// # Errors
/// [`crate::ErrorKind::Overflow`] if a sum exceeds `u64`.
pub fn live_bytes(problem: &Problem) -> Result<Vec<u64>> {
    let steps = usize::try_from(problem.steps).unwrap_or(usize::MAX);
    let mut delta: Vec<i128> = alloc::vec![0; steps.saturating_add(1)];
    for b in &problem.buffers {
        let (s, e) = (clamp(b.start, steps), clamp(b.end.saturating_add(1), steps));
        delta[s] += i128::from(b.size);
        delta[e] -= i128::from(b.size);
    }
    let mut out = Vec::with_capacity(steps);
    let mut cur: i128 = 0;
    for d in delta.iter().take(steps) {
        cur += d;
        out.push(u64::try_from(cur).map_err(|_| crate::Error::overflow("live bytes"))?);
    }
    Ok(out)
}

fn clamp(x: u64, max: usize) -> usize {
    usize::try_from(x).map_or(max, |v| v.min(max))
}

/// Max over steps of the live sum of the kept buffers, and the first step reaching it.
fn live_peak(problem: &Problem, sizes: &[u64], keep: impl Fn(usize) -> bool) -> Result<(u64, u64)> {
    // Events: +size at start, -size after end. Sorted by step, frees (at end+1) before allocs.
    let mut events: Vec<(u64, bool, u64, usize)> = Vec::new();
    for (i, b) in problem.buffers.iter().enumerate() {
        if keep(i) && sizes[i] > 0 {
            // an inverted range would free before it allocates (and wrap the live sum)
            if b.start > b.end {
                return Err(crate::Error::invalid(alloc::format!(
                    "live range starts after it ends (start {}, end {})",
                    b.start,
                    b.end
                ))
                .at(alloc::format!("tensor '{}'", b.name)));
            }
            events.push((b.start, true, sizes[i], i));
            events.push((b.end.saturating_add(1), false, sizes[i], i));
        }
    }
    sort_live_events(&mut events);
    let (mut cur, mut best, mut at) = (0u64, 0u64, 0u64);
    for (t, is_alloc, s, i) in events {
        if is_alloc {
            cur = add(cur, s, "live bytes").map_err(|e| {
                e.at(alloc::format!(
                    "step {t}, tensor '{}'",
                    problem.buffers[i].name
                ))
            })?;
            if cur > best {
                best = cur;
                at = t;
            }
        } else {
            cur -= s;
        }
    }
    Ok((best, at))
}

/// Sorts [`live_peak`]'s events by (step, frees before allocations), in buffer order within
/// one key: a counting sort when the steps are dense (linear, the usual case), a sort
/// otherwise.
fn sort_live_events(events: &mut Vec<(u64, bool, u64, usize)>) {
    let key = |e: &(u64, bool, u64, usize)| {
        usize::try_from(e.0)
            .ok()
            .and_then(|t| t.checked_mul(2))
            .map(|k| k + usize::from(e.1))
    };
    let max = events
        .iter()
        .map(key)
        .try_fold(0usize, |m, k| k.map(|k| m.max(k)));
    let Some(max) = max.filter(|&m| m / 4 <= events.len()) else {
        events.sort_by_key(|&(t, alloc, _, _)| (t, alloc));
        return;
    };
    // `next[k]`: where the next event of key k goes.
    let mut next = alloc::vec![0usize; max + 2];
    for k in events.iter().filter_map(key) {
        if let Some(c) = next.get_mut(k + 1) {
            *c += 1;
        }
    }
    for k in 1..next.len() {
        let prev = next.get(k - 1).copied().unwrap_or(0);
        if let Some(c) = next.get_mut(k) {
            *c += prev;
        }
    }
    let mut out = alloc::vec![(0, false, 0, 0); events.len()];
    for e in events.iter() {
        if let Some(n) = key(e).and_then(|k| next.get_mut(k)) {
            if let Some(slot) = out.get_mut(*n) {
                *slot = *e;
            }
            *n += 1;
        }
    }
    *events = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;
    use alloc::vec;

    #[test]
    fn an_inverted_live_range_is_an_error_naming_the_tensor() {
        // a (1 B, 0-3) and bad (1 B, starting at 6, ending at 5): freeing bad at step 6 before
        // allocating it would take the live sum below zero
        let mut bad = Buffer::new("bad", 1, 5, 5);
        bad.start = 6;
        let p = Problem::from_buffers("inverted", vec![Buffer::new("a", 1, 0, 3), bad]);
        let e = lower_bound(&p).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Invalid);
        let text = alloc::format!("{e}");
        assert!(
            text.contains("tensor 'bad'") && text.contains("start 6, end 5"),
            "{text}"
        );
        // a zero-size one takes no bytes and is not counted
        let mut empty = Buffer::new("empty", 0, 5, 5);
        empty.start = 6;
        let p = Problem::from_buffers("empty", vec![Buffer::new("a", 1, 0, 3), empty]);
        assert_eq!(lower_bound(&p).unwrap().lower_bound, 1);
    }

    #[test]
    fn diamond_live_set() {
        // the worked example of the GE doc, in MiB: a [1,3] 3, b [2,3] 3, c [3,5] 2, d [4,5] 4, e [5,6] 1
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
        let b = lower_bound(&p).unwrap();
        assert_eq!(b.lower_bound, 8 * m);
        assert_eq!(b.peak_step, 3);
        assert_eq!(b.no_reuse, 13 * m);
        assert_eq!(
            live_bytes(&p).unwrap(),
            vec![0, 3 * m, 6 * m, 8 * m, 6 * m, 7 * m, m]
        );
    }

    #[test]
    fn gears_take_the_largest() {
        let mut a = Buffer::new("a", 10, 0, 1);
        a.gear = Some(1);
        let mut b = Buffer::new("b", 30, 0, 1);
        b.gear = Some(4);
        let c = Buffer::new("c", 5, 1, 1);
        let p = Problem::from_buffers("g", vec![a, b, c]);
        let bd = lower_bound(&p).unwrap();
        assert_eq!(bd.lower_bound, 35);
        assert_eq!(bd.no_reuse, 35);
    }
}
