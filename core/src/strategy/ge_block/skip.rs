//! Level 2's index of the one-member candidates of a set, in the set's order, by lifetime:
//! the next candidate after a position whose lifetime misses a given span, in `O(log n)`
//! expected (a treap, Seidel & Aragon 1996, whose nodes keep the smallest last step and the
//! largest first step of their subtree).
//!
//! GE tests a candidate at the parent first (memory_block.cc `AddLifeReuseBlock`:
//! `CanBlockLifeReuse` or `CanIntervalLifeReuse`, else no search below): a one-member
//! candidate whose lifetime meets a parent whose members cover its span without a gap is
//! refused there, on any stream, and changes nothing. Level 2 offers each parent every later
//! block, so on shapes where most lifetimes meet (all live at once, nested, a chain of
//! streams whose tensors never return) those refusals were `O(n²)`; the index jumps over
//! them ([`super::level2`]).

use alloc::vec::Vec;
use core::ops::Bound;

use super::order::Key;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    key: Key,
    /// The candidate's first and last step; `(0, u64::MAX)` once it left the set (never
    /// found again).
    start: u64,
    end: u64,
    /// Largest `start` and smallest `end` in the subtree.
    max_start: u64,
    min_end: u64,
    prio: u64,
    l: u32,
    r: u32,
}

/// See the module.
#[derive(Debug, Clone)]
pub(super) struct Skip {
    nodes: Vec<Node>,
    root: u32,
    seed: u64,
}

impl Skip {
    pub(super) fn new() -> Self {
        Skip {
            nodes: Vec::new(),
            root: NIL,
            seed: 0x005E_ED0F_5C1F,
        }
    }

    fn node(&self, t: u32) -> Option<&Node> {
        self.nodes.get(t as usize)
    }

    fn pull(&mut self, t: u32) {
        let Some(&n) = self.node(t) else { return };
        let (mut s, mut e) = (n.start, n.end);
        for c in [n.l, n.r] {
            if let Some(x) = self.node(c) {
                s = s.max(x.max_start);
                e = e.min(x.min_end);
            }
        }
        if let Some(x) = self.nodes.get_mut(t as usize) {
            x.max_start = s;
            x.min_end = e;
        }
    }

    /// Splits `t` into keys `< key` and keys `>= key`.
    fn split(&mut self, t: u32, key: &Key) -> (u32, u32) {
        let Some(&n) = self.node(t) else {
            return (NIL, NIL);
        };
        if n.key < *key {
            let (a, b) = self.split(n.r, key);
            self.nodes[t as usize].r = a;
            self.pull(t);
            (t, b)
        } else {
            let (a, b) = self.split(n.l, key);
            self.nodes[t as usize].l = b;
            self.pull(t);
            (a, t)
        }
    }

    fn merge(&mut self, a: u32, b: u32) -> u32 {
        let (Some(&na), Some(&nb)) = (self.node(a), self.node(b)) else {
            return if a == NIL { b } else { a };
        };
        if na.prio > nb.prio {
            let r = self.merge(na.r, b);
            self.nodes[a as usize].r = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, nb.l);
            self.nodes[b as usize].l = l;
            self.pull(b);
            b
        }
    }

    /// Adds `key` (not in the index) with the lifetime `[start, end]`.
    pub(super) fn insert(&mut self, key: Key, start: u64, end: u64) {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let id = u32::try_from(self.nodes.len()).unwrap_or(NIL);
        self.nodes.push(Node {
            key,
            start,
            end,
            max_start: start,
            min_end: end,
            prio: z ^ (z >> 31),
            l: NIL,
            r: NIL,
        });
        let (a, b) = self.split(self.root, &key);
        let ab = self.merge(a, id);
        self.root = self.merge(ab, b);
    }

    /// Takes `key` out (it is never found again); no-op if absent.
    pub(super) fn remove(&mut self, key: &Key) {
        let mut path: Vec<u32> = Vec::new();
        let mut t = self.root;
        while let Some(n) = self.node(t) {
            path.push(t);
            t = match key.cmp(&n.key) {
                core::cmp::Ordering::Less => n.l,
                core::cmp::Ordering::Greater => n.r,
                core::cmp::Ordering::Equal => break,
            };
        }
        let Some(&hit) = path.last() else { return };
        if self.nodes[hit as usize].key != *key {
            return;
        }
        self.nodes[hit as usize].start = 0;
        self.nodes[hit as usize].end = u64::MAX;
        for &p in path.iter().rev() {
            self.pull(p);
        }
    }

    /// The first key after `from` whose lifetime misses `[s, e]` (ends before `s` or
    /// starts after `e`).
    pub(super) fn next_missing(&self, from: Bound<Key>, s: u64, e: u64) -> Option<Key> {
        self.first(self.root, &from, s, e)
    }

    fn first(&self, t: u32, from: &Bound<Key>, s: u64, e: u64) -> Option<Key> {
        let n = self.node(t)?;
        if n.min_end >= s && n.max_start <= e {
            return None;
        }
        let after = match from {
            Bound::Included(k) => n.key >= *k,
            Bound::Excluded(k) => n.key > *k,
            Bound::Unbounded => true,
        };
        if !after {
            return self.first(n.r, from, s, e);
        }
        if let Some(k) = self.first(n.l, from, s, e) {
            return Some(k);
        }
        if n.end < s || n.start > e {
            return Some(n.key);
        }
        self.first(n.r, from, s, e)
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod tests {
    use super::Skip;
    use alloc::vec::Vec;
    use core::cmp::Reverse;
    use core::ops::Bound;

    #[test]
    fn next_missing_matches_a_scan() {
        let mut x = 0xACE1_u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut skip = Skip::new();
        // (key, start, end, present)
        type Entry = ((Reverse<u64>, u64, usize), u64, u64, bool);
        let mut plain: Vec<Entry> = Vec::new();
        for id in 0..3000usize {
            match next(4) {
                0 | 1 => {
                    let key = (Reverse(next(20)), next(3), id);
                    let s = next(100);
                    let e = s + next(30);
                    skip.insert(key, s, e);
                    plain.push((key, s, e, true));
                }
                2 if !plain.is_empty() => {
                    let i = next(plain.len() as u64) as usize;
                    plain[i].3 = false;
                    skip.remove(&plain[i].0);
                }
                _ => {
                    let s = next(120);
                    let e = s + next(40);
                    let from = match (plain.first(), next(3)) {
                        (Some(p), 0) => Bound::Included(p.0),
                        (Some(p), 1) => Bound::Excluded(p.0),
                        _ => Bound::Unbounded,
                    };
                    let mut sorted = plain.clone();
                    sorted.sort_by_key(|p| p.0);
                    let want = sorted
                        .iter()
                        .filter(|p| p.3 && (p.2 < s || p.1 > e))
                        .find(|p| match from {
                            Bound::Included(k) => p.0 >= k,
                            Bound::Excluded(k) => p.0 > k,
                            Bound::Unbounded => true,
                        })
                        .map(|p| p.0);
                    assert_eq!(skip.next_missing(from, s, e), want);
                }
            }
        }
    }
}
