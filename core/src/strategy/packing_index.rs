//! The conflict index of the packing strategies: the bytes occupied, at some time of a given
//! live range, by the already placed buffers.
//!
//! All live ranges are known before placement starts, only "placed or not" changes. Times are
//! compressed to ranks (`u32`) once. A placed buffer is live during a query range `[s, e]` iff
//! it is live at `s` or it starts in `(s, e]`. Two segment trees over time answer the two
//! parts: the *stabbing* tree holds, in each node, the placed buffers whose live range
//! canonically covers the node (found on the path from leaf `s` to the root); the *start* tree
//! holds, in each node, the placed buffers that start under it (found in the `O(log n)` nodes
//! covering `(s, e]`).
//!
//! Holes only depend on the union of the occupied bytes, so each node keeps (nearly) that
//! union: see `Node`. Packed buffers touch, so the lists stay short even in the nodes near
//! the root that see every buffer: a query reads `O(log n)` nodes of a few intervals each,
//! whatever the number of conflicting buffers, and an insertion appends to `O(log n)` nodes.

use alloc::vec::Vec;

use crate::error::{Error, Result};

/// Every buffer's live range as compressed time ranks, and the segment-tree shape.
struct Timeline {
    lo: Vec<u32>,
    hi: Vec<u32>,
    /// Number of segment-tree leaves (a power of two, at least the number of time ranks).
    leaves: usize,
}

impl Timeline {
    fn new(ranges: &[(u64, u64)]) -> Result<Self> {
        if u32::try_from(ranges.len()).map_or(true, |n| n == u32::MAX) {
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
        Ok(Timeline { lo, hi, leaves })
    }
}

/// The bytes of the placed buffers a tree node holds: appended as they come, and compacted
/// (sorted, overlapping and touching intervals merged) whenever the list doubles past the
/// size of its last compaction. Only the union matters to find holes, and packed buffers
/// touch, so lists near the root, which see many buffers, stay short; appending keeps an
/// insertion `O(1)` amortised plus `O(log)` for the compactions.
#[derive(Default)]
struct Node {
    v: Vec<(u64, u64)>,
    compacted: usize,
}

/// Lists shorter than this are never compacted.
const COMPACT_MIN: usize = 16;

impl Node {
    fn push(&mut self, lo: u64, hi: u64) {
        self.v.push((lo, hi));
        if self.v.len() >= COMPACT_MIN.max(2 * self.compacted) {
            self.compact();
        }
    }

    /// Sorts the list and merges overlapping and touching intervals.
    fn compact(&mut self) {
        if self.v.len() > 1 {
            self.v.sort_unstable();
            let mut w = 0;
            for r in 1..self.v.len() {
                if self.v[r].0 <= self.v[w].1 {
                    self.v[w].1 = self.v[w].1.max(self.v[r].1);
                } else {
                    w += 1;
                    self.v[w] = self.v[r];
                }
            }
            self.v.truncate(w + 1);
        }
        self.compacted = self.v.len();
    }
}

/// Placed buffers of one gear class. Tree nodes are allocated when they first hold something
/// (`u32` handles into one arena, `0` = none), so an index over `2^21` leaves costs 16 MiB of
/// handles, not a `Vec` per node.
struct Layer {
    /// Stabbing tree: the bytes of the placed buffers each node canonically covers.
    stab: Vec<u32>,
    /// Start tree: the bytes of the placed buffers whose start rank is under each node.
    /// Kept only in leaves and in the inner nodes a query has read (*materialised*: built
    /// once from below, then kept up to date by insertions), so an insertion costs one push
    /// plus a check per ancestor, and short-lived buffers, whose queries read leaves and low
    /// nodes only, never pay for the nodes near the root.
    starts: Vec<u32>,
    arena: Vec<Node>,
    /// Intervals pushed, copied or read so far: the work, counted for the tests.
    work: u64,
}

impl Layer {
    fn new(leaves: usize) -> Self {
        Layer {
            stab: alloc::vec![0; 2 * leaves],
            starts: alloc::vec![0; 2 * leaves],
            arena: alloc::vec![Node::default()],
            work: 0,
        }
    }

    fn node(arena: &mut Vec<Node>, handle: &mut u32) -> usize {
        if *handle == 0 {
            *handle = u32::try_from(arena.len()).unwrap_or(u32::MAX);
            arena.push(Node::default());
        }
        *handle as usize
    }

    fn insert(&mut self, t: &Timeline, id: usize, lo: u64, hi: u64) {
        let mut l = t.lo[id] as usize + t.leaves;
        let mut r = t.hi[id] as usize + t.leaves + 1;
        while l < r {
            if l & 1 == 1 {
                let h = Self::node(&mut self.arena, &mut self.stab[l]);
                self.arena[h].push(lo, hi);
                self.work += 1;
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                let h = Self::node(&mut self.arena, &mut self.stab[r]);
                self.arena[h].push(lo, hi);
                self.work += 1;
            }
            l >>= 1;
            r >>= 1;
        }
        let mut node = t.lo[id] as usize + t.leaves;
        let h = Self::node(&mut self.arena, &mut self.starts[node]);
        self.arena[h].push(lo, hi);
        node >>= 1;
        while node >= 1 {
            let h = self.starts[node] as usize;
            if h != 0 {
                self.arena[h].push(lo, hi);
                self.work += 1;
            }
            node >>= 1;
        }
    }

    /// Builds start-tree node `node` from its highest materialised descendants.
    fn materialise(&mut self, node: usize) -> usize {
        let mut v: Vec<(u64, u64)> = Vec::new();
        let mut stack = alloc::vec![node];
        while let Some(x) = stack.pop() {
            match self.starts[x] as usize {
                0 if x < self.starts.len() / 2 => {
                    stack.push(2 * x);
                    stack.push(2 * x + 1);
                }
                0 => {}
                h => v.extend_from_slice(&self.arena[h].v),
            }
        }
        self.work += v.len() as u64;
        let h = Self::node(&mut self.arena, &mut self.starts[node]);
        let n = &mut self.arena[h];
        n.v = v;
        n.compact();
        h
    }

    fn collect(&mut self, t: &Timeline, id: usize, out: &mut Vec<(u64, u64)>) {
        let before = out.len();
        let (lo, hi) = (t.lo[id] as usize, t.hi[id] as usize);
        let mut node = lo + t.leaves;
        while node >= 1 {
            let h = self.stab[node] as usize;
            if h != 0 {
                out.extend_from_slice(&self.arena[h].v);
            }
            node >>= 1;
        }
        // starts in (lo, hi]
        let mut l = lo + 1 + t.leaves;
        let mut r = hi + 1 + t.leaves;
        while l < r {
            if l & 1 == 1 {
                self.read_starts(l, out);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.read_starts(r, out);
            }
            l >>= 1;
            r >>= 1;
        }
        self.work += (out.len() - before) as u64;
    }

    fn read_starts(&mut self, node: usize, out: &mut Vec<(u64, u64)>) {
        let h = match self.starts[node] as usize {
            0 if node < self.starts.len() / 2 => self.materialise(node),
            0 => return,
            h => h,
        };
        out.extend_from_slice(&self.arena[h].v);
    }
}

/// The placed buffers, by gear class: buffers of different gears never conflict, ungeared
/// buffers conflict with every gear.
pub(crate) struct ConflictIndex {
    time: Timeline,
    /// Class of each buffer: 0 for ungeared, `1 + k` for the k-th gear.
    class: Vec<usize>,
    /// One layer per class, created when its first buffer is placed.
    layers: Vec<Option<Layer>>,
}

impl ConflictIndex {
    /// An empty index for buffers whose inclusive live ranges are `ranges[i] = (start, end)`,
    /// of gears `gears[i]` (same length).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Invalid`] with more than `u32::MAX - 1` buffers or a range with
    /// `start > end`.
    pub(crate) fn new(ranges: &[(u64, u64)], gears: &[Option<u64>]) -> Result<Self> {
        let time = Timeline::new(ranges)?;
        let mut distinct: Vec<u64> = gears.iter().filter_map(|g| *g).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let class = gears
            .iter()
            .map(|g| g.map_or(0, |g| 1 + distinct.partition_point(|&d| d < g)))
            .collect();
        let mut layers = Vec::new();
        layers.resize_with(distinct.len() + 1, || None);
        Ok(ConflictIndex {
            time,
            class,
            layers,
        })
    }

    /// Marks buffer `id` placed at bytes `[lo, hi)` (`lo < hi`).
    pub(crate) fn insert(&mut self, id: usize, lo: u64, hi: u64) {
        let leaves = self.time.leaves;
        self.layers[self.class[id]]
            .get_or_insert_with(|| Layer::new(leaves))
            .insert(&self.time, id, lo, hi);
    }

    /// Appends to `out` the bytes occupied by placed buffers that conflict with buffer `id`
    /// (live at the same time, gears that can coexist), as intervals `[lo, hi)` in no order;
    /// touching intervals may come merged.
    /// Reading may build tree nodes, hence `&mut self`.
    pub(crate) fn busy(&mut self, id: usize, out: &mut Vec<(u64, u64)>) {
        let c = self.class[id];
        for (k, layer) in self.layers.iter_mut().enumerate() {
            if c == 0 || k == 0 || k == c {
                if let Some(layer) = layer {
                    layer.collect(&self.time, id, out);
                }
            }
        }
    }
}

#[cfg(test)]
impl ConflictIndex {
    /// Intervals pushed, copied and read so far, over every layer.
    fn work(&self) -> u64 {
        self.layers.iter().flatten().map(|l| l.work).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges of `n` buffers: 8 long ones over most of the schedule and short ones of one to
    /// three steps, two starting per step (issue 18's "few long over many short" shape).
    fn long_short(n: usize) -> Vec<(u64, u64)> {
        let steps = n as u64 / 2;
        let mut v: Vec<(u64, u64)> = (0..8u64).map(|k| (k, steps - 1 - k)).collect();
        v.extend((0..n as u64 - 8).map(|i| (i / 2, (i / 2 + i % 3).min(steps - 1))));
        v
    }

    #[test]
    fn queries_between_insertions_see_exactly_the_placed_conflicts() {
        // inserts interleaved with queries of every width, so materialised nodes must be
        // kept up to date; checked against a scan of all placed buffers
        let mut ranges = long_short(400);
        ranges.extend((0..40u64).map(|k| (5 * k, 5 * k + 3 * k)));
        let gears = alloc::vec![None; ranges.len()];
        let mut ix = ConflictIndex::new(&ranges, &gears).unwrap();
        let mut placed = Vec::new();
        // a fixed permutation: long, short and medium buffers mixed
        for step in 0..ranges.len() {
            let i = (step * 97) % ranges.len();
            for q in [i, (i * 31 + 7) % ranges.len(), 0] {
                let mut got = Vec::new();
                ix.busy(q, &mut got);
                got.sort_unstable();
                let mut want: Vec<(u64, u64)> = placed
                    .iter()
                    .filter(|&&j: &&usize| ranges[q].0 <= ranges[j].1 && ranges[j].0 <= ranges[q].1)
                    .map(|&j| (10 * j as u64, 10 * j as u64 + 5))
                    .collect();
                want.sort_unstable();
                assert_eq!(got, want, "query {q} after {step} insertions");
            }
            ix.insert(i, 10 * i as u64, 10 * i as u64 + 5);
            placed.push(i);
        }
    }

    #[test]
    fn short_buffers_cost_a_constant_work_each() {
        // placing and querying every buffer of the long-short shape, long ones first: the
        // work (intervals pushed, copied, read) per buffer stays flat as n grows 16x (a start
        // tree kept in every ancestor pushed about log2(2n) intervals per insertion alone)
        let per_buffer = |n: usize| {
            let ranges = long_short(n);
            let gears = alloc::vec![None; n];
            let mut ix = ConflictIndex::new(&ranges, &gears).unwrap();
            let mut out = Vec::new();
            for i in 0..n {
                out.clear();
                ix.busy(i, &mut out);
                // stack the buffers in 4 columns so that they do not all touch
                let lo = (i as u64 % 4) * 100 + out.len() as u64;
                ix.insert(i, lo, lo + 1);
            }
            ix.work() as f64 / n as f64
        };
        let (small, large) = (per_buffer(4_000), per_buffer(64_000));
        // measured: 13.7 at both sizes; the old start tree needed about 27 at 64k
        assert!(large < 20.0, "{large} intervals per buffer");
        assert!(large < small * 1.2, "{small} -> {large}");
    }

    #[test]
    fn reports_every_overlap() {
        let ranges = [(0, 10), (3, 4), (5, 20), (11, 12), (4, 4), (21, 30)];
        let gears = [None; 6];
        let mut ix = ConflictIndex::new(&ranges, &gears).unwrap();
        for i in 0..ranges.len() {
            let off = 10 * i as u64;
            ix.insert(i, off, off + 5);
        }
        for i in 0..ranges.len() {
            let mut got = Vec::new();
            ix.busy(i, &mut got);
            got.sort_unstable();
            let want: Vec<(u64, u64)> = (0..ranges.len())
                .filter(|&j| ranges[i].0 <= ranges[j].1 && ranges[j].0 <= ranges[i].1)
                .map(|j| (10 * j as u64, 10 * j as u64 + 5))
                .collect();
            assert_eq!(got, want, "buffer {i}");
        }
    }

    #[test]
    fn only_placed_buffers_of_coexisting_gears_are_reported() {
        let ranges = [(0, 10), (3, 4), (5, 20), (0, 20)];
        let gears = [Some(1), Some(2), Some(2), None];
        let mut ix = ConflictIndex::new(&ranges, &gears).unwrap();
        ix.insert(2, 5, 9);
        let mut got = Vec::new();
        ix.busy(0, &mut got);
        assert!(got.is_empty());
        ix.busy(1, &mut got);
        assert!(got.is_empty()); // same gear but not live together
        ix.busy(3, &mut got);
        assert_eq!(got, [(5, 9)]);
        assert!(ConflictIndex::new(&[(3, 2)], &[None]).is_err());
    }

    #[test]
    fn nodes_compact_to_the_union() {
        let mut n = Node::default();
        for k in 0..COMPACT_MIN as u64 {
            n.push(10 * k, 10 * k + 10); // all touching
        }
        assert_eq!(n.v, [(0, 10 * COMPACT_MIN as u64)]);
        for k in 0..COMPACT_MIN as u64 {
            n.push(1000 + 10 * k, 1000 + 10 * k + 5); // disjoint
            n.push(3, 4); // inside
        }
        let mut v = n.v.clone();
        v.sort_unstable();
        assert_eq!(v[0], (0, 10 * COMPACT_MIN as u64));
        assert!(v.len() <= 2 * COMPACT_MIN + 1);
    }
}
