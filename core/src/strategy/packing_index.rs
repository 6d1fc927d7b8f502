//! The conflict index of the packing strategies: which already placed buffers are live at the
//! same time as a given one, in time proportional to their number.
//!
//! All live ranges are known before placement starts, only "placed or not" changes. Times are
//! compressed to ranks (`u32`) once. A placed buffer is found by a query range `[s, e]` iff it
//! is live at `s` (a *stabbing* query: a segment tree over time whose nodes hold the placed
//! ranges they canonically cover, as flat linked lists) or it starts in `(s, e]` (an ordered set
//! of placed buffers by start). The two parts are disjoint, so every conflict is reported once.
//! Insertion is `O(log n)`, a query `O(log n + k)` for `k` reported buffers.

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use crate::error::{Error, Result};

const NIL: u32 = u32::MAX;

/// Placed buffers indexed by live range; ids are buffer indices.
pub(crate) struct ConflictIndex {
    /// Compressed inclusive live range of every buffer (placed or not).
    lo: Vec<u32>,
    hi: Vec<u32>,
    /// Number of segment-tree leaves (a power of two, at least the number of time ranks).
    leaves: usize,
    /// Head of each node's list of placed buffers (index into `next` / `item`).
    head: Vec<u32>,
    next: Vec<u32>,
    item: Vec<u32>,
    /// Placed buffers ordered by (start rank, id).
    by_start: BTreeSet<(u32, u32)>,
}

impl ConflictIndex {
    /// An empty index for buffers whose inclusive live ranges are `ranges[i] = (start, end)`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] with more than `u32::MAX - 1` buffers or a range with
    /// `start > end`.
    pub(crate) fn new(ranges: &[(u64, u64)]) -> Result<Self> {
        if u32::try_from(ranges.len()).map_or(true, |n| n == NIL) {
            return Err(Error::invalid("too many buffers for the packing index"));
        }
        if ranges.iter().any(|&(s, e)| s > e) {
            return Err(Error::invalid("a live range starts after it ends"));
        }
        let mut coords: Vec<u64> = Vec::with_capacity(ranges.len() * 2);
        for &(s, e) in ranges {
            coords.push(s);
            coords.push(e);
        }
        coords.sort_unstable();
        coords.dedup();
        // At most 2 * (u32::MAX - 1) coordinates: ranks may not fit u32 beyond that.
        let rank = |t: u64| -> Result<u32> {
            let r = coords.partition_point(|&c| c < t);
            u32::try_from(r).map_err(|_| Error::invalid("too many distinct times"))
        };
        let mut lo = Vec::with_capacity(ranges.len());
        let mut hi = Vec::with_capacity(ranges.len());
        for &(s, e) in ranges {
            lo.push(rank(s)?);
            hi.push(rank(e)?);
        }
        let leaves = coords.len().max(1).next_power_of_two();
        Ok(ConflictIndex {
            lo,
            hi,
            leaves,
            head: alloc::vec![NIL; 2 * leaves],
            next: Vec::new(),
            item: Vec::new(),
            by_start: BTreeSet::new(),
        })
    }

    /// Marks buffer `id` placed.
    pub(crate) fn insert(&mut self, id: usize) {
        let (lo, hi) = (self.lo[id] as usize, self.hi[id] as usize);
        // `id` < u32::MAX was checked in `new`.
        let id32 = u32::try_from(id).unwrap_or(NIL);
        let mut l = lo + self.leaves;
        let mut r = hi + self.leaves + 1;
        while l < r {
            if l & 1 == 1 {
                self.push(l, id32);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.push(r, id32);
            }
            l >>= 1;
            r >>= 1;
        }
        self.by_start.insert((self.lo[id], id32));
    }

    fn push(&mut self, node: usize, id: u32) {
        let slot = u32::try_from(self.item.len()).unwrap_or(NIL);
        self.item.push(id);
        self.next.push(self.head[node]);
        self.head[node] = slot;
    }

    /// Calls `f` once for every placed buffer whose live range intersects buffer `id`'s
    /// (`id` itself included if placed).
    pub(crate) fn for_each_overlapping(&self, id: usize, mut f: impl FnMut(usize)) {
        let (lo, hi) = (self.lo[id], self.hi[id]);
        let mut node = lo as usize + self.leaves;
        while node >= 1 {
            let mut e = self.head[node];
            while e != NIL {
                f(self.item[e as usize] as usize);
                e = self.next[e as usize];
            }
            node >>= 1;
        }
        if lo < hi {
            for &(_, j) in self.by_start.range((lo + 1, 0)..=(hi, NIL)) {
                f(j as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_each_overlap_once() {
        let ranges = [(0, 10), (3, 4), (5, 20), (11, 12), (4, 4), (21, 30)];
        let mut ix = ConflictIndex::new(&ranges).unwrap();
        for i in 0..ranges.len() {
            ix.insert(i);
        }
        for i in 0..ranges.len() {
            let mut got = Vec::new();
            ix.for_each_overlapping(i, |j| got.push(j));
            got.sort_unstable();
            let want: Vec<usize> = (0..ranges.len())
                .filter(|&j| ranges[i].0 <= ranges[j].1 && ranges[j].0 <= ranges[i].1)
                .collect();
            assert_eq!(got, want, "buffer {i}");
        }
    }

    #[test]
    fn only_placed_buffers_are_reported() {
        let ranges = [(0, 10), (3, 4), (5, 20)];
        let mut ix = ConflictIndex::new(&ranges).unwrap();
        ix.insert(2);
        let mut got = Vec::new();
        ix.for_each_overlapping(0, |j| got.push(j));
        assert_eq!(got, [2]);
        assert!(ConflictIndex::new(&[(3, 2)]).is_err());
    }
}
