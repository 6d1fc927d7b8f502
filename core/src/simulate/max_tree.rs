//! An ordered map from unique keys to `u64` values that finds the first key (in key order)
//! whose value is at least `x` in `O(log n)` expected time: a treap (randomised binary search
//! tree, Seidel & Aragon 1996) whose nodes keep the largest value of their subtree. The
//! runtime allocators use it for "the first block in their order with room for `x` bytes".

use alloc::vec::Vec;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Node<K> {
    key: K,
    val: u64,
    max: u64,
    /// Keys in the subtree (its rank arithmetic: how many keys precede a found one).
    size: usize,
    prio: u64,
    l: u32,
    r: u32,
}

/// See the module.
#[derive(Debug, Clone)]
pub struct MaxTree<K> {
    nodes: Vec<Node<K>>,
    root: u32,
    seed: u64,
}

impl<K: Ord + Copy> MaxTree<K> {
    /// An empty map.
    pub fn new() -> Self {
        MaxTree {
            nodes: Vec::new(),
            root: NIL,
            seed: 0x9E37_79B9_7F4A_7C15,
        }
    }

    fn max_of(&self, t: u32) -> u64 {
        self.nodes.get(t as usize).map_or(0, |n| n.max)
    }

    fn size_of(&self, t: u32) -> usize {
        self.nodes.get(t as usize).map_or(0, |n| n.size)
    }

    fn pull(&mut self, t: u32) {
        let n = &self.nodes[t as usize];
        let m = n.val.max(self.max_of(n.l)).max(self.max_of(n.r));
        let size = 1 + self.size_of(n.l) + self.size_of(n.r);
        let n = &mut self.nodes[t as usize];
        n.max = m;
        n.size = size;
    }

    /// Splits `t` into keys `< key` and keys `>= key`.
    fn split(&mut self, t: u32, key: &K) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        if self.nodes[t as usize].key < *key {
            let (a, b) = self.split(self.nodes[t as usize].r, key);
            self.nodes[t as usize].r = a;
            self.pull(t);
            (t, b)
        } else {
            let (a, b) = self.split(self.nodes[t as usize].l, key);
            self.nodes[t as usize].l = b;
            self.pull(t);
            (a, t)
        }
    }

    /// Joins `a` and `b`, every key of `a` below every key of `b`.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].prio > self.nodes[b as usize].prio {
            let r = self.merge(self.nodes[a as usize].r, b);
            self.nodes[a as usize].r = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].l);
            self.nodes[b as usize].l = l;
            self.pull(b);
            b
        }
    }

    /// Inserts `key` (not yet present) with `val`.
    pub fn insert(&mut self, key: K, val: u64) {
        // SplitMix64 priorities: deterministic, balanced in expectation.
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let id = u32::try_from(self.nodes.len()).unwrap_or(NIL);
        self.nodes.push(Node {
            key,
            val,
            max: val,
            size: 1,
            prio: z ^ (z >> 31),
            l: NIL,
            r: NIL,
        });
        let (a, b) = self.split(self.root, &key);
        let ab = self.merge(a, id);
        self.root = self.merge(ab, b);
    }

    /// Sets the value of `key` (no-op if absent).
    pub fn set(&mut self, key: &K, val: u64) {
        let mut path: Vec<u32> = Vec::new();
        let mut t = self.root;
        while let Some(n) = self.nodes.get(t as usize) {
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
        self.nodes[hit as usize].val = val;
        for &p in path.iter().rev() {
            self.pull(p);
        }
    }

    /// The first key in order whose value is `>= x`, and that value.
    pub fn first_at_least(&self, x: u64) -> Option<(K, u64)> {
        let mut t = self.root;
        if self.max_of(t) < x {
            return None;
        }
        while let Some(n) = self.nodes.get(t as usize) {
            if n.l != NIL && self.max_of(n.l) >= x {
                t = n.l;
            } else if n.val >= x {
                return Some((n.key, n.val));
            } else {
                t = n.r;
            }
        }
        None
    }

    /// [`MaxTree::first_at_least`] with the number of keys before the found one (its rank), in
    /// `O(log n)`: what a scan in key order would have looked at first.
    pub fn first_at_least_ranked(&self, x: u64) -> Option<(K, u64, usize)> {
        let mut t = self.root;
        if self.max_of(t) < x {
            return None;
        }
        let mut before = 0;
        while let Some(n) = self.nodes.get(t as usize) {
            if n.l != NIL && self.max_of(n.l) >= x {
                t = n.l;
            } else if n.val >= x {
                return Some((n.key, n.val, before + self.size_of(n.l)));
            } else {
                before += self.size_of(n.l) + 1;
                t = n.r;
            }
        }
        None
    }

    /// The largest value (0 when empty).
    pub fn max(&self) -> u64 {
        self.max_of(self.root)
    }
}

impl<K: Ord + Copy> Default for MaxTree<K> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod tests {
    use super::MaxTree;
    use alloc::vec::Vec;

    #[test]
    fn first_at_least_matches_a_scan() {
        let mut x = 0xDEAD_BEEF_u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut t: MaxTree<(u64, u64)> = MaxTree::new();
        let mut plain: Vec<((u64, u64), u64)> = Vec::new();
        for seq in 0..3000u64 {
            match next(3) {
                0 => {
                    let key = (next(50), seq);
                    let v = next(1000);
                    t.insert(key, v);
                    let at = plain.partition_point(|e| e.0 < key);
                    plain.insert(at, (key, v));
                }
                1 if !plain.is_empty() => {
                    let i = next(plain.len() as u64) as usize;
                    let v = next(1000);
                    plain[i].1 = v;
                    t.set(&plain[i].0, v);
                }
                _ => {
                    let q = next(1100);
                    let want = plain.iter().find(|e| e.1 >= q).copied();
                    assert_eq!(t.first_at_least(q), want);
                }
            }
            assert_eq!(t.max(), plain.iter().map(|e| e.1).max().unwrap_or(0));
        }
    }
}
