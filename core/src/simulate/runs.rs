//! Free runs of a fixed array of blocks, for the pool allocators' first fit in `O(log n)`:
//! a bitset (one bit a block, set = used) under a segment tree whose nodes keep the free
//! prefix, suffix and longest free run of their range. The longest run and the free count
//! (what `free_space` reports) are read at the root, in `O(1)`.
//!
//! Memory: `n / 8` bytes of bits plus 16 bytes per 64 blocks (a tree node per word, twice).

use alloc::vec::Vec;

/// Free prefix, free suffix, longest free run and length of a range, in blocks.
#[derive(Debug, Clone, Copy, Default)]
struct Node {
    pre: u32,
    suf: u32,
    max: u32,
    len: u32,
}

impl Node {
    fn of_word(w: u64) -> Self {
        // Bit `i` is block `64 * word + i`; a 0 bit is free.
        let mut free = !w;
        let mut max = 0;
        while free != 0 {
            free &= free << 1;
            max += 1;
        }
        Node {
            pre: w.trailing_zeros(),
            suf: w.leading_zeros(),
            max,
            len: 64,
        }
    }

    fn join(l: Node, r: Node) -> Self {
        Node {
            pre: if l.pre == l.len { l.len + r.pre } else { l.pre },
            suf: if r.suf == r.len { r.len + l.suf } else { r.suf },
            max: l.max.max(r.max).max(l.suf + r.pre),
            len: l.len + r.len,
        }
    }
}

/// `n` blocks, each free or used, with first fit of a run (see the module).
#[derive(Debug, Clone)]
pub struct BlockRuns {
    words: Vec<u64>,
    /// Heap order: node 1 is the root, the leaves (one per word) start at `leaves`.
    tree: Vec<Node>,
    leaves: usize,
    free: u64,
}

impl BlockRuns {
    /// `n` free blocks (`n < 2^31`).
    pub fn new(n: usize) -> Self {
        let nwords = n.div_ceil(64);
        let leaves = nwords.next_power_of_two().max(1);
        let mut words = alloc::vec![0u64; leaves];
        // Bits past `n` (and whole padding words) are used for good.
        for (k, w) in words.iter_mut().enumerate() {
            let first = k * 64;
            if first + 64 > n {
                let keep = n.saturating_sub(first);
                *w = if keep == 0 {
                    u64::MAX
                } else {
                    u64::MAX << keep
                };
            }
        }
        let mut tree = alloc::vec![Node::default(); 2 * leaves];
        for (k, &w) in words.iter().enumerate() {
            tree[leaves + k] = Node::of_word(w);
        }
        for i in (1..leaves).rev() {
            tree[i] = Node::join(tree[2 * i], tree[2 * i + 1]);
        }
        BlockRuns {
            words,
            tree,
            leaves,
            free: n as u64,
        }
    }

    /// The lowest first block of a run of `k >= 1` free blocks, if there is one.
    pub fn first_fit(&self, k: usize) -> Option<usize> {
        let k = u32::try_from(k).ok()?;
        if k == 0 || self.tree[1].max < k {
            return None;
        }
        let mut i = 1;
        let mut base = 0usize; // first block of node i
        while i < self.leaves {
            let (l, r) = (self.tree[2 * i], self.tree[2 * i + 1]);
            if l.max >= k {
                i *= 2;
            } else if l.suf + r.pre >= k {
                return Some(base + (l.len - l.suf) as usize);
            } else {
                base += l.len as usize;
                i = 2 * i + 1;
            }
        }
        // A run of `k` inside this word (`k <= 64`): the lowest one.
        let w = self.words[i - self.leaves];
        let mut run = 0;
        for b in 0..64 {
            run = if (w >> b) & 1 == 0 { run + 1 } else { 0 };
            if run == k {
                return Some(base + b + 1 - k as usize);
            }
        }
        None
    }

    /// Marks blocks `first..first + k` used (`used`) or free; they must be all the other.
    pub fn set(&mut self, first: usize, k: usize, used: bool) {
        if k == 0 {
            return;
        }
        let last = first + k - 1;
        for wi in first / 64..=last / 64 {
            let lo = if wi == first / 64 { first % 64 } else { 0 };
            let hi = if wi == last / 64 { last % 64 } else { 63 };
            let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
            if used {
                self.words[wi] |= mask;
            } else {
                self.words[wi] &= !mask;
            }
            self.tree[self.leaves + wi] = Node::of_word(self.words[wi]);
        }
        let (mut a, mut b) = (
            (self.leaves + first / 64) / 2,
            (self.leaves + last / 64) / 2,
        );
        while a >= 1 {
            for i in a..=b {
                self.tree[i] = Node::join(self.tree[2 * i], self.tree[2 * i + 1]);
            }
            a /= 2;
            b /= 2;
        }
        if used {
            self.free -= k as u64;
        } else {
            self.free += k as u64;
        }
    }

    /// `(longest free run, free blocks)`.
    pub fn free_space(&self) -> (u64, u64) {
        (u64::from(self.tree[1].max), self.free)
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
mod tests {
    use super::BlockRuns;
    use alloc::vec::Vec;

    /// The plain scan the tree replaces: lowest run of `k` free blocks.
    fn scan(used: &[bool], k: usize) -> Option<usize> {
        let mut run = 0;
        for (i, &u) in used.iter().enumerate() {
            run = if u { 0 } else { run + 1 };
            if run == k {
                return Some(i + 1 - k);
            }
        }
        None
    }

    #[test]
    fn first_fit_matches_a_scan() {
        let mut x = 0x1234_5678_u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for n in [1usize, 5, 63, 64, 65, 200, 1000] {
            let mut runs = BlockRuns::new(n);
            let mut used = alloc::vec![false; n];
            let mut held: Vec<(usize, usize)> = Vec::new();
            for _ in 0..2000 {
                if next(3) == 0 && !held.is_empty() {
                    let (f, k) = held.swap_remove(next(held.len() as u64) as usize);
                    runs.set(f, k, false);
                    used[f..f + k].iter_mut().for_each(|u| *u = false);
                } else {
                    let wide = next(4) == 0;
                    let k = 1 + next(if wide { 150 } else { 5 }) as usize;
                    let got = runs.first_fit(k);
                    assert_eq!(got, scan(&used, k), "n {n} k {k}");
                    if let Some(f) = got {
                        runs.set(f, k, true);
                        used[f..f + k].iter_mut().for_each(|u| *u = true);
                        held.push((f, k));
                    }
                }
                let free = used.iter().filter(|u| !**u).count() as u64;
                let mut longest = 0;
                let mut run = 0;
                for &u in &used {
                    run = if u { 0 } else { run + 1 };
                    longest = longest.max(run);
                }
                assert_eq!(runs.free_space(), (longest, free));
            }
        }
    }
}
