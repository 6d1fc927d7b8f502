//! The search instance: free buffers, pinned intervals, time sections and pairwise overlaps,
//! computed once by a sweep over time (MiniMalloc's "sweeper").
//!
//! Every item of an instance must be able to run with every other one (one gear, or none):
//! [`super::solve`] splits problems with several gears before building instances.

use alloc::vec::Vec;

/// One buffer handed to the search, already in planned bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Item {
    /// Bytes the buffer occupies (padded and aligned).
    pub size: u64,
    /// Offset alignment in bytes (>= 1).
    pub align: u64,
    /// First step live (inclusive).
    pub start: u64,
    /// Last step live (inclusive).
    pub end: u64,
    /// A pinned offset, if any.
    pub fixed: Option<u64>,
}

/// Compressed sparse rows: `rows[r]` is `data[idx[r]..idx[r + 1]]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr<T> {
    idx: Vec<usize>,
    data: Vec<T>,
}

impl<T: Copy> Csr<T> {
    fn from_rows(rows: usize, mut push: impl FnMut(&mut dyn FnMut(usize, T))) -> Self {
        // two passes: count, then fill
        let mut counts = alloc::vec![0usize; rows + 1];
        push(&mut |r, _| counts[r + 1] += 1);
        for r in 0..rows {
            counts[r + 1] += counts[r];
        }
        let mut fill = counts.clone();
        let mut data: Vec<Option<T>> = alloc::vec![None; counts[rows]];
        push(&mut |r, v| {
            data[fill[r]] = Some(v);
            fill[r] += 1;
        });
        Csr {
            idx: counts,
            data: data.into_iter().flatten().collect(),
        }
    }

    /// One row per vector, in order.
    fn from_vecs(rows: &[Vec<T>]) -> Self {
        let mut idx = Vec::with_capacity(rows.len() + 1);
        idx.push(0);
        let mut data = Vec::with_capacity(rows.iter().map(Vec::len).sum());
        for r in rows {
            data.extend_from_slice(r);
            idx.push(data.len());
        }
        Csr { idx, data }
    }

    pub fn row(&self, r: usize) -> &[T] {
        &self.data[self.idx[r]..self.idx[r + 1]]
    }
}

/// A built instance. Free buffers are numbered `0..n` in the order of `free`.
#[derive(Debug, Clone)]
pub(crate) struct Inst {
    /// Index into the items of each free buffer (size > 0, not pinned).
    pub free: Vec<usize>,
    /// Sizes, alignments of the free buffers.
    pub size: Vec<u64>,
    pub align: Vec<u64>,
    /// Lifetime width in steps and area (size x width) of the free buffers.
    pub width: Vec<u64>,
    pub area: Vec<u128>,
    /// Section range `[sec_lo, sec_hi)` of each free buffer.
    pub sec_lo: Vec<u32>,
    pub sec_hi: Vec<u32>,
    /// Number of sections.
    pub nsec: usize,
    /// Free buffers live in each section.
    pub sections: Csr<u32>,
    /// Free buffers whose lifetimes intersect each free buffer's.
    pub overlaps: Csr<u32>,
    /// The union of the pinned intervals `[lo, hi)` conflicting with each free buffer, as
    /// disjoint runs sorted by `lo` ([`merged`]).
    pub pinned_of: Csr<(u64, u64)>,
    /// The union of the pinned intervals `[lo, hi)` live at some step of each section, as
    /// disjoint runs sorted by `lo` (every free buffer of a section is live at all its steps,
    /// so each of them must clear all of these).
    pub sec_pinned: Csr<(u64, u64)>,
    /// Highest top of a pinned buffer (0 without any).
    pub pinned_top: u64,
}

impl Inst {
    /// Builds the instance of `items`. Pinned items are not checked against each other here.
    pub fn new(items: &[Item]) -> Inst {
        let free: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].fixed.is_none() && items[i].size > 0)
            .collect();
        let pinned: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].fixed.is_some() && items[i].size > 0)
            .collect();
        let n = free.len();
        let it = |k: usize| &items[free[k]];
        // Section boundaries: every start and every end + 1 of a free buffer.
        let mut pts: Vec<u64> = Vec::with_capacity(2 * n);
        for k in 0..n {
            pts.push(it(k).start);
            pts.push(it(k).end.saturating_add(1));
        }
        pts.sort_unstable();
        pts.dedup();
        let nsec = pts.len().saturating_sub(1);
        let pos = |t: u64| -> u32 { to_u32(pts.partition_point(|&p| p < t)) };
        let sec_lo: Vec<u32> = (0..n).map(|k| pos(it(k).start)).collect();
        let sec_hi: Vec<u32> = (0..n).map(|k| pos(it(k).end.saturating_add(1))).collect();
        let sections = Csr::from_rows(nsec, |f| {
            for k in 0..n {
                for s in sec_lo[k]..sec_hi[k] {
                    f(s as usize, to_u32(k));
                }
            }
        });
        // Overlapping pairs: scan forward from each buffer in start order.
        let mut by_start: Vec<u32> = (0..to_u32(n)).collect();
        by_start.sort_unstable_by_key(|&k| (it(k as usize).start, k));
        let overlaps = Csr::from_rows(n, |f| {
            for (a, &i) in by_start.iter().enumerate() {
                let end = it(i as usize).end;
                for &j in &by_start[a + 1..] {
                    if it(j as usize).start > end {
                        break;
                    }
                    f(i as usize, j);
                    f(j as usize, i);
                }
            }
        });
        let interval = |p: usize| {
            let o = items[p].fixed.unwrap_or(0);
            (o, o.saturating_add(items[p].size))
        };
        let mut pinned_sorted = pinned.clone();
        pinned_sorted.sort_unstable_by_key(|&p| interval(p));
        // Each row holds the union of the pinned intervals that conflict, merged where they
        // overlap or touch: what `lift` and the section inference need, and a row costs the
        // gaps between obstacles rather than their number (a window's obstacles are packed
        // densely, so thousands of them merge into a few runs).
        let mut rows: Vec<Vec<(u64, u64)>> = Vec::with_capacity(n);
        for k in 0..n {
            let (s, e) = (it(k).start, it(k).end);
            rows.push(merged(
                pinned_sorted
                    .iter()
                    .filter(|&&p| items[p].start <= e && s <= items[p].end)
                    .map(|&p| interval(p)),
            ));
        }
        let pinned_of = Csr::from_vecs(&rows);
        rows.clear();
        if !pinned.is_empty() {
            for s in 0..nsec {
                let (t0, t1) = (pts[s], pts[s + 1] - 1);
                rows.push(merged(
                    pinned_sorted
                        .iter()
                        .filter(|&&p| items[p].start <= t1 && t0 <= items[p].end)
                        .map(|&p| interval(p)),
                ));
            }
        } else {
            rows.resize(nsec, Vec::new());
        }
        let sec_pinned = Csr::from_vecs(&rows);
        let width: Vec<u64> = (0..n)
            .map(|k| (it(k).end - it(k).start).saturating_add(1))
            .collect();
        Inst {
            size: (0..n).map(|k| it(k).size).collect(),
            align: (0..n).map(|k| it(k).align.max(1)).collect(),
            area: (0..n)
                .map(|k| u128::from(it(k).size) * u128::from(width[k]))
                .collect(),
            width,
            sec_lo,
            sec_hi,
            nsec,
            sections,
            overlaps,
            pinned_of,
            sec_pinned,
            pinned_top: pinned.iter().map(|&p| interval(p).1).max().unwrap_or(0),
            free,
        }
    }

    /// Number of free buffers.
    pub fn n(&self) -> usize {
        self.free.len()
    }

    /// The lowest offset `>= x` aligned for free buffer `k` that clears every pinned buffer
    /// it conflicts with; `u64::MAX` if none exists below `u64::MAX`.
    pub fn lift(&self, k: usize, x: u64) -> u64 {
        let (a, size) = (self.align[k], self.size[k]);
        let Some(mut x) = up(x, a) else {
            return u64::MAX;
        };
        for &(lo, hi) in self.pinned_of.row(k) {
            let Some(top) = x.checked_add(size) else {
                return u64::MAX;
            };
            if lo >= top {
                break;
            }
            if hi > x {
                match up(hi, a) {
                    Some(v) => x = v,
                    None => return u64::MAX,
                }
            }
        }
        if x.checked_add(size).is_none() {
            return u64::MAX;
        }
        x
    }
}

/// Intervals `[lo, hi)` sorted by `lo`, merged where they overlap or touch: the same union
/// of bytes, sorted, pairwise disjoint and apart.
pub(crate) fn merged(sorted: impl Iterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in sorted {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// `x` rounded up to a multiple of `a` (>= 1), `None` on overflow.
pub(crate) fn up(x: u64, a: u64) -> Option<u64> {
    match x % a.max(1) {
        0 => Some(x),
        r => x.checked_add(a.max(1) - r),
    }
}

/// `usize` to `u32`, saturating (instances never hold 2^32 buffers: the caller caps them).
pub(crate) fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::{merged, Inst, Item};

    #[test]
    fn merged_runs_are_the_union_of_overlapping_and_touching_intervals() {
        // [0,4) and [2,6) overlap, [6,8) touches: one run [0,8); [10,12) stands apart
        let runs = merged([(0, 4), (2, 6), (6, 8), (10, 12)].into_iter());
        assert_eq!(runs, [(0, 8), (10, 12)]);
        // a contained interval does not shorten the run
        assert_eq!(merged([(0, 10), (3, 4)].into_iter()), [(0, 10)]);
    }

    #[test]
    fn a_free_buffer_is_lifted_over_the_merged_obstacles_of_its_lifetime() {
        let pin = |size, start, end, o| Item {
            size,
            align: 1,
            start,
            end,
            fixed: Some(o),
        };
        // obstacles [0,4) at steps 0-1, [4,6) at step 1, [6,9) at step 3 (not live with the
        // free buffer), [10,12) at step 2; free buffer of 3 bytes live at steps 1-2: runs
        // [0,6) and [10,12) conflict, so its lowest spot is 6 (6 + 3 <= 10)
        let items = [
            pin(4, 0, 1, 0),
            pin(2, 1, 1, 4),
            pin(3, 3, 3, 6),
            pin(2, 2, 2, 10),
            Item {
                size: 3,
                align: 1,
                start: 1,
                end: 2,
                fixed: None,
            },
        ];
        let inst = Inst::new(&items);
        assert_eq!(inst.pinned_of.row(0), [(0, 6), (10, 12)]);
        assert_eq!(inst.lift(0, 0), 6);
        // 5 bytes do not fit in the gap [6,10): lifted to 12
        let mut big = items;
        big[4].size = 5;
        assert_eq!(Inst::new(&big).lift(0, 0), 12);
        // one section (steps 1-2): the same runs
        assert_eq!(inst.sec_pinned.row(0), [(0, 6), (10, 12)]);
    }
}
