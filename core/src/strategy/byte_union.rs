//! A union of half-open byte intervals `[lo, hi)`, with insertion in `O(1)` amortised (small)
//! or `O(log m)` (large), and reads of the whole union or of the part inside a byte window
//! in `O(log m + k)` for `m` intervals, `k` read.
//!
//! Small unions are a `Vec` that insertions append to, sorted and merged (overlapping and
//! touching intervals become one) when it doubles: an insertion touches one cache line, and
//! a window is read by a scan of at most `2 * SMALL_MAX` entries. Past [`SMALL_MAX`] merged
//! intervals the union is an ordered map, always merged, so that a union of `10^5`
//! fragments is neither scanned nor re-sorted.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Largest number of merged intervals kept in a `Vec`.
const SMALL_MAX: usize = 32;

/// Lists shorter than this are never merged.
const COMPACT_MIN: usize = 16;

/// The union of the byte intervals inserted so far.
#[derive(Debug)]
pub(crate) enum ByteUnion {
    /// The intervals inserted, the first `merged` of them sorted by start and pairwise
    /// separated by a gap, the rest appended since.
    Small { v: Vec<(u64, u64)>, merged: usize },
    /// Start → end, pairwise separated by a gap.
    Big(BTreeMap<u64, u64>),
}

impl Default for ByteUnion {
    fn default() -> Self {
        ByteUnion::Small {
            v: Vec::new(),
            merged: 0,
        }
    }
}

impl ByteUnion {
    /// A union from intervals that are already sorted by start and merged.
    pub(crate) fn from_merged(v: Vec<(u64, u64)>) -> Self {
        if v.len() <= SMALL_MAX {
            let merged = v.len();
            ByteUnion::Small { v, merged }
        } else {
            ByteUnion::Big(v.into_iter().collect())
        }
    }

    /// Number of intervals kept: the separate intervals of the union, plus (small form) the
    /// ones appended since the last merge.
    pub(crate) fn len(&self) -> usize {
        match self {
            ByteUnion::Small { v, .. } => v.len(),
            ByteUnion::Big(m) => m.len(),
        }
    }

    /// Adds `[lo, hi)` (`lo < hi`), merging it with every interval it overlaps or touches.
    pub(crate) fn insert(&mut self, lo: u64, hi: u64) {
        match self {
            ByteUnion::Small { v, merged } => {
                v.push((lo, hi));
                if v.len() >= COMPACT_MIN.max(2 * *merged) {
                    self.merge();
                }
            }
            ByteUnion::Big(m) => {
                // the common cases in one lookup: the last interval starting at or before
                // `hi` is the only one that can overlap or touch `[lo, hi]` when it starts
                // at or before `lo` (the earlier ones end before it starts)
                match m.range_mut(..=hi).next_back() {
                    None => {
                        m.insert(lo, hi);
                        return;
                    }
                    Some((_, e)) if *e < lo => {
                        m.insert(lo, hi);
                        return;
                    }
                    Some((&s, e)) if s <= lo => {
                        *e = (*e).max(hi);
                        return;
                    }
                    Some(_) => {}
                }
                let (mut nlo, mut nhi) = (lo, hi);
                if let Some((&s, &e)) = m.range(..=lo).next_back() {
                    if e >= lo {
                        nlo = s;
                        nhi = nhi.max(e);
                    }
                }
                // every interval starting in [nlo, nhi] overlaps or touches the new one
                while let Some((&s, &e)) = m.range(nlo..=nhi).next() {
                    m.remove(&s);
                    nhi = nhi.max(e);
                }
                m.insert(nlo, nhi);
            }
        }
    }

    /// Sorts and merges the small form (to the map form past [`SMALL_MAX`] intervals).
    pub(crate) fn merge(&mut self) {
        if let ByteUnion::Small { v, merged } = self {
            if *merged < v.len() {
                *self = ByteUnion::from_merged(merge_sorted(core::mem::take(v)));
            }
        }
    }

    /// Appends every interval to `out`: in byte order, except the small form's appended ones.
    pub(crate) fn extend_into(&self, out: &mut Vec<(u64, u64)>) {
        match self {
            ByteUnion::Small { v, .. } => out.extend_from_slice(v),
            ByteUnion::Big(m) => out.extend(m.iter().map(|(&s, &e)| (s, e))),
        }
    }

    /// The intervals in byte order, merged: call [`ByteUnion::merge`] first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (small, big) = match self {
            ByteUnion::Small { v, .. } => (Some(v.iter().copied()), None),
            ByteUnion::Big(m) => (None, Some(m.iter().map(|(&s, &e)| (s, e)))),
        };
        small.into_iter().flatten().chain(big.into_iter().flatten())
    }

    /// Appends to `out` the parts of the union inside `[a, b)`, clipped to it (in byte order
    /// in the map form, in no order in the small one); returns how many.
    pub(crate) fn window_into(&self, a: u64, b: u64, out: &mut Vec<(u64, u64)>) -> usize {
        let before = out.len();
        if a >= b {
            return 0;
        }
        let clip = |(lo, hi): (u64, u64)| (lo.max(a), hi.min(b));
        match self {
            ByteUnion::Small { v, .. } => {
                out.extend(v.iter().filter(|&&(l, h)| l < b && h > a).map(|&r| clip(r)));
            }
            ByteUnion::Big(m) => {
                if let Some((&s, &e)) = m.range(..a).next_back() {
                    if e > a {
                        out.push(clip((s, e)));
                    }
                }
                out.extend(m.range(a..b).map(|(&s, &e)| clip((s, e))));
            }
        }
        out.len() - before
    }
}

/// Sorts `v` and merges overlapping and touching intervals.
pub(crate) fn merge_sorted(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut w = 0;
    for r in 1..v.len() {
        if v[r].0 <= v[w].1 {
            v[w].1 = v[w].1.max(v[r].1);
        } else {
            w += 1;
            v[w] = v[r];
        }
    }
    if !v.is_empty() {
        v.truncate(w + 1);
    }
    v
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The union of `v` by a plain sort and sweep.
    fn merged(v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut v = v;
        v.sort_unstable();
        for (lo, hi) in v {
            match out.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        out
    }

    #[test]
    fn insertions_keep_the_union_of_a_plain_sweep_in_both_forms() {
        // a fixed pseudo-random sequence, long enough to switch to the map form
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut u = ByteUnion::default();
        let mut all = Vec::new();
        for k in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lo = x % 100_000;
            let hi = lo + 1 + (x >> 40) % if k % 50 == 0 { 3000 } else { 40 };
            u.insert(lo, hi);
            all.push((lo, hi));
            if k % 97 == 0 || k == 1999 {
                let want = merged(all.clone());
                // before a merge, the small form may hold more than the union
                let mut raw = Vec::new();
                u.extend_into(&mut raw);
                assert_eq!(merged(raw), want);
                u.merge();
                let mut got = Vec::new();
                u.extend_into(&mut got);
                assert_eq!(got, want, "after {} insertions", k + 1);
                assert_eq!(u.iter().collect::<Vec<_>>(), want);
                assert_eq!(u.len(), want.len());
                // windows: clipped parts in order
                for (a, b) in [(0, 100_000), (5_000, 5_001), (31_337, 64_000), (7, 7)] {
                    let mut w = Vec::new();
                    let n = u.window_into(a, b, &mut w);
                    w.sort_unstable();
                    let clipped: Vec<(u64, u64)> = want
                        .iter()
                        .map(|&(l, h)| (l.max(a), h.min(b)))
                        .filter(|&(l, h)| l < h)
                        .collect();
                    assert_eq!(w, clipped, "window [{a}, {b})");
                    assert_eq!(n, clipped.len());
                }
            }
        }
        assert!(matches!(u, ByteUnion::Big(_)));
    }

    /// A deterministic xorshift64 stream (the index's tests use it too).
    pub(in crate::strategy) struct Rng(pub(in crate::strategy) u64);

    impl Rng {
        pub(in crate::strategy) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub(in crate::strategy) fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        /// An index below `n`.
        pub(in crate::strategy) fn pick(&mut self, n: usize) -> usize {
            usize::try_from(self.below(n as u64)).unwrap_or(0)
        }
    }

    /// The covered bytes of `v` over `[0, cap)` as a bitmap (the brute force).
    fn bits(v: &[(u64, u64)], cap: u64) -> Vec<bool> {
        let mut b = alloc::vec![false; usize::try_from(cap).unwrap()];
        for &(lo, hi) in v {
            for x in lo..hi {
                b[usize::try_from(x).unwrap()] = true;
            }
        }
        b
    }

    #[test]
    fn random_operations_match_a_bitmap_in_both_forms() {
        // interleaved insertions (overlapping, touching, nested, equal, disjoint), merges,
        // reads and windows, against a bitmap of every byte inserted; small byte spans make
        // touching and overlapping common, the map form is reached by many disjoint pieces
        const CAP: u64 = 600;
        for seed in 1..=300u64 {
            let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let start_big = r.below(4) == 0;
            let mut all: Vec<(u64, u64)> = Vec::new();
            let mut u = if start_big {
                // a merged, gapped start of 33..60 pieces: the map form from the outset
                let k = 33 + r.below(28);
                let v: Vec<(u64, u64)> = (0..k).map(|i| (i * 9, i * 9 + 1 + i % 7)).collect();
                all.extend_from_slice(&v);
                ByteUnion::from_merged(v)
            } else {
                ByteUnion::default()
            };
            let ops = 20 + r.below(200);
            for _ in 0..ops {
                match r.below(10) {
                    0..=5 => {
                        let (lo, hi) = match r.below(5) {
                            // a short one anywhere
                            0 | 1 => {
                                let lo = r.below(CAP - 10);
                                (lo, lo + 1 + r.below(8))
                            }
                            // one touching an interval already in
                            2 if !all.is_empty() => {
                                let &(l, h) = &all[r.pick(all.len())];
                                if r.below(2) == 0 || l == 0 {
                                    (h, (h + 1 + r.below(5)).min(CAP))
                                } else {
                                    (l.saturating_sub(1 + r.below(5)), l)
                                }
                            }
                            // equal to / nested in one already in
                            3 if !all.is_empty() => {
                                let &(l, h) = &all[r.pick(all.len())];
                                let a = l + r.below(h - l);
                                (a, a + 1 + r.below(h - a))
                            }
                            // a wide one
                            _ => {
                                let lo = r.below(CAP / 2);
                                (lo, lo + 1 + r.below(CAP / 2))
                            }
                        };
                        if lo < hi && hi <= CAP {
                            u.insert(lo, hi);
                            all.push((lo, hi));
                        }
                    }
                    6 => u.merge(),
                    _ => {
                        let want = bits(&all, CAP);
                        let mut raw = Vec::new();
                        u.extend_into(&mut raw);
                        assert_eq!(raw.len(), u.len(), "seed {seed}");
                        assert_eq!(bits(&raw, CAP), want, "seed {seed}: extend_into");
                        // windows, possibly empty, at and across interval ends
                        for _ in 0..4 {
                            let a = r.below(CAP + 1);
                            let b = if r.below(4) == 0 {
                                a
                            } else {
                                a + r.below(CAP + 1 - a)
                            };
                            let mut w = alloc::vec![(7, 8)]; // appended after what is there
                            let n = u.window_into(a, b, &mut w);
                            assert_eq!(w[0], (7, 8));
                            assert_eq!(n, w.len() - 1, "seed {seed}");
                            for &(l, h) in &w[1..] {
                                assert!(
                                    a <= l && l < h && h <= b,
                                    "seed {seed}: ({l}, {h}) in [{a}, {b})"
                                );
                            }
                            let clipped: Vec<bool> = (0..CAP)
                                .map(|x| x >= a && x < b && want[usize::try_from(x).unwrap()])
                                .collect();
                            assert_eq!(
                                bits(&w[1..], CAP),
                                clipped,
                                "seed {seed}: window [{a}, {b})"
                            );
                            if let ByteUnion::Big(_) = u {
                                assert!(w[1..].windows(2).all(|p| p[0].1 < p[1].0), "seed {seed}");
                            }
                        }
                        // merged: sorted, gapped, the same bytes, as iter and extend_into
                        u.merge();
                        let it: Vec<(u64, u64)> = u.iter().collect();
                        assert!(it.iter().all(|&(l, h)| l < h), "seed {seed}");
                        assert!(
                            it.windows(2).all(|p| p[0].1 < p[1].0),
                            "seed {seed}: {it:?}"
                        );
                        assert_eq!(bits(&it, CAP), want, "seed {seed}: iter");
                        assert_eq!(it, merged(all.clone()), "seed {seed}");
                        assert_eq!(u.len(), it.len());
                        let mut again = Vec::new();
                        u.extend_into(&mut again);
                        assert_eq!(again, it);
                    }
                }
            }
        }
    }

    #[test]
    fn touching_intervals_merge() {
        let mut u = ByteUnion::default();
        u.insert(10, 20);
        u.insert(30, 40);
        u.insert(20, 30);
        u.merge();
        assert_eq!(u.iter().collect::<Vec<_>>(), [(10, 40)]);
        let mut big = ByteUnion::from_merged((0..40).map(|k| (10 * k, 10 * k + 5)).collect());
        big.insert(5, 10); // touches (0, 5) and (10, 15)
        big.insert(392, 1000); // overlaps the last one
        let got: Vec<_> = big.iter().collect();
        assert_eq!(got[0], (0, 15));
        assert_eq!(*got.last().unwrap(), (390, 1000));
        assert_eq!(got.len(), 39); // 40, less the one (5, 10) joined
    }
}
