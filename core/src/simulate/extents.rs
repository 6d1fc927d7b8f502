//! Free extents of a region (start → length), first fit, merged on release. Memory scales with
//! the number of extents (the live allocations), never with the region's size.

use alloc::collections::BTreeMap;

/// The free parts of `[0, capacity)`.
#[derive(Debug, Clone)]
pub struct FreeExtents {
    free: BTreeMap<u64, u64>,
}

impl FreeExtents {
    /// All of `[0, capacity)` free.
    pub fn new(capacity: u64) -> Self {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        FreeExtents { free }
    }

    /// Takes `len` units from the lowest free extent long enough (first fit); `None` if none is.
    /// The second value counts the extents looked at (the search's probes).
    pub fn take_first_fit(&mut self, len: u64) -> (Option<u64>, u64) {
        let mut probes = 0u64;
        let found = self
            .free
            .iter()
            .inspect(|_| probes += 1)
            .find(|(_, &l)| l >= len)
            .map(|(&s, &l)| (s, l));
        let Some((start, have)) = found else {
            return (None, probes);
        };
        self.free.remove(&start);
        if have > len {
            self.free.insert(start + len, have - len);
        }
        (Some(start), probes)
    }

    /// Gives `[start, start + len)` back, merging with free neighbours.
    pub fn give(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (mut s, mut l) = (start, len);
        if let Some(&nl) = self.free.get(&(s + l)) {
            self.free.remove(&(s + l));
            l += nl;
        }
        if let Some((&ps, &pl)) = self.free.range(..s).next_back() {
            if ps + pl == s {
                self.free.remove(&ps);
                s = ps;
                l += pl;
            }
        }
        self.free.insert(s, l);
    }

    /// `(largest free extent, total free)`.
    pub fn free_space(&self) -> (u64, u64) {
        self.free
            .values()
            .fold((0, 0), |(m, t), &l| (m.max(l), t.saturating_add(l)))
    }
}
