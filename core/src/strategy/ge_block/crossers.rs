//! Which blocks of level 2's current parent subtree a candidate crosses: those with a member
//! whose lifetime crosses one of the candidate's on its stream (touching counts, GE
//! `CrossLifeTime`), so the only blocks where GE's member test (memory_block.cc
//! `CanIntervalLifeReuse`) can split the candidate or refuse it as a whole.
//!
//! A walk ([`super::level2`]) tests members only at these blocks and searches a subtree
//! without room for the candidate only if one of them is inside: elsewhere every member
//! test would keep all members. The members of the subtree's blocks are kept in buckets of
//! steps (one entry per bucket a member's lifetime meets), so a candidate's member reads
//! only the few entries near it. A member spanning many buckets is kept once in a short
//! list instead; when that list grows long the index gives up for the parent (the caller
//! then falls back to its merged lifetimes, which say only whether some block is crossed).

use alloc::vec::Vec;

/// Steps per bucket, at least. Measured on the bench's 100k problem (one buffer starting
/// per step): 256 costs fewer instructions than 128, 64 (+3%), 32 (+18%) or 16 (+31%), where
/// members of skip connections fill many buckets or the long list turns the index off.
const MIN_WIDTH: u64 = 256;

/// A member meeting more buckets than this is kept in [`Crossers::long`].
const LONG_BUCKETS: u64 = 32;

/// More long members than this in one parent's subtree, and the index is off for it.
const MAX_LONG: usize = 64;

/// One member of a block of the subtree.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u64,
    end: u64,
    block: usize,
    stream: u32,
}

impl Entry {
    fn crosses(&self, stream: u32, start: u64, end: u64) -> bool {
        self.stream == stream && self.start <= end && start <= self.end
    }
}

/// The index of one parent's subtree, and what the last query found.
#[derive(Debug)]
pub(super) struct Crossers {
    /// Steps per bucket.
    width: u64,
    buckets: Vec<Vec<Entry>>,
    /// The parent (a count, see `parent`) each bucket holds entries of: older ones are
    /// stale, cleared on first use.
    epoch: Vec<u32>,
    parent: u32,
    /// Members meeting more than [`LONG_BUCKETS`] buckets.
    long: Vec<Entry>,
    /// Given up for this parent ([`MAX_LONG`]).
    off: bool,
    /// Per block, the query (a count, see `query`) that found it crossed.
    hit: Vec<u32>,
    /// Per block that starts a chain of first children (see [`super::level2`]), the query
    /// that found a block below it crossed, or itself.
    holds: Vec<u32>,
    query: u32,
    /// The blocks the last query found crossed.
    found: Vec<usize>,
}

impl Crossers {
    /// An empty index for lifetimes up to step `last` of `units` units.
    pub(super) fn new(last: u64, units: usize) -> Self {
        // About two buckets per unit at most.
        let per = u64::try_from(units)
            .unwrap_or(u64::MAX)
            .saturating_mul(2)
            .max(1);
        let width = (last / per).saturating_add(1).max(MIN_WIDTH);
        let n = usize::try_from(last / width).map_or(0, |n| n.saturating_add(1));
        Crossers {
            width,
            buckets: (0..n).map(|_| Vec::new()).collect(),
            epoch: alloc::vec![0; n],
            parent: 1,
            long: Vec::new(),
            off: false,
            hit: Vec::new(),
            holds: Vec::new(),
            query: 0,
            found: Vec::new(),
        }
    }

    /// Whether the index is on for the current parent.
    pub(super) fn on(&self) -> bool {
        !self.off
    }

    /// Starts a new parent's subtree: empty.
    pub(super) fn clear(&mut self) {
        if self.parent == u32::MAX {
            self.epoch.iter_mut().for_each(|e| *e = 0);
            self.parent = 0;
        }
        self.parent += 1;
        self.long.clear();
        self.off = false;
    }

    /// Adds a member `[start, end]` on `stream` of block `block`; may turn the index off.
    pub(super) fn add(&mut self, block: usize, stream: u32, start: u64, end: u64) {
        if self.off {
            return;
        }
        let e = Entry {
            start,
            end,
            block,
            stream,
        };
        let (from, to) = (start / self.width, end / self.width);
        let (Ok(f), Ok(t)) = (usize::try_from(from), usize::try_from(to)) else {
            self.off = true;
            return;
        };
        if to.saturating_sub(from) > LONG_BUCKETS || t >= self.buckets.len() {
            self.long.push(e);
            self.off = self.long.len() > MAX_LONG;
            return;
        }
        for i in f..=t {
            if let (Some(b), Some(ep)) = (self.buckets.get_mut(i), self.epoch.get_mut(i)) {
                if *ep != self.parent {
                    *ep = self.parent;
                    b.clear();
                }
                b.push(e);
            }
        }
    }

    /// Finds the blocks crossed by a member of `members` (on `stream`), for
    /// [`Self::crossed`], [`Self::holds`] and [`Self::any`]; `blocks` is the number of
    /// blocks now.
    pub(super) fn find(
        &mut self,
        members: impl Iterator<Item = (u64, u64)>,
        stream: u32,
        blocks: usize,
    ) {
        if self.hit.len() < blocks {
            self.hit.resize(blocks, 0);
            self.holds.resize(blocks, 0);
        }
        if self.query == u32::MAX {
            self.hit.iter_mut().for_each(|e| *e = 0);
            self.holds.iter_mut().for_each(|e| *e = 0);
            self.query = 0;
        }
        self.query += 1;
        self.found.clear();
        let q = self.query;
        for (s, e) in members {
            let from = usize::try_from(s / self.width).unwrap_or(usize::MAX);
            let to = usize::try_from(e / self.width).unwrap_or(usize::MAX);
            let to = to.min(self.buckets.len().saturating_sub(1));
            for i in from..=to {
                let (Some(b), Some(&ep)) = (self.buckets.get(i), self.epoch.get(i)) else {
                    break;
                };
                if ep != self.parent {
                    continue;
                }
                for x in b.iter().filter(|x| x.crosses(stream, s, e)) {
                    if let Some(h) = self.hit.get_mut(x.block) {
                        if *h != q {
                            *h = q;
                            self.found.push(x.block);
                        }
                    }
                }
            }
            for x in self.long.iter().filter(|x| x.crosses(stream, s, e)) {
                if let Some(h) = self.hit.get_mut(x.block) {
                    if *h != q {
                        *h = q;
                        self.found.push(x.block);
                    }
                }
            }
        }
    }

    /// Whether the last [`Self::find`] found a block.
    pub(super) fn any(&self) -> bool {
        !self.found.is_empty()
    }

    /// The blocks the last [`Self::find`] found, in no order.
    pub(super) fn found(&self) -> &[usize] {
        &self.found
    }

    /// Marks the blocks that start a chain above or at each block found, for
    /// [`Self::holds`]: `head` gives the block that starts a block's chain (itself if it
    /// is alone), `up` a block's parent (`usize::MAX` for none).
    pub(super) fn mark_up(&mut self, head: impl Fn(usize) -> usize, up: impl Fn(usize) -> usize) {
        let q = self.query;
        for &x in &self.found {
            let mut y = head(x);
            while let Some(h) = self.holds.get_mut(y) {
                if *h == q {
                    break;
                }
                *h = q;
                let u = up(y);
                if u == usize::MAX {
                    break;
                }
                y = head(u);
            }
        }
    }

    /// Whether the last [`Self::find`] found block `b`.
    pub(super) fn crossed(&self, b: usize) -> bool {
        self.hit.get(b) == Some(&self.query)
    }

    /// Whether block `b`, alone or starting a chain, or a block below it was found (after
    /// [`Self::mark_up`]).
    pub(super) fn holds(&self, b: usize) -> bool {
        self.holds.get(b) == Some(&self.query) || self.crossed(b)
    }
}
