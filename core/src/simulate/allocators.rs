//! The simulated runtime allocators. Each hands out offsets in one device region and can say
//! how its free space is split.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use crate::error::{round_up, Error, Result};
use crate::problem::BufferId;

/// A runtime allocator driven by [`super::simulate`].
pub trait Allocator {
    /// Places `size` bytes for buffer `id`; `Ok(None)` is an allocation failure (counted, the
    /// tensor gets no memory). Returns the offset and the bytes actually taken.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`].
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>>;
    /// Releases buffer `id` (no-op if it holds nothing).
    fn free(&mut self, id: BufferId);
    /// Bytes held from the device now (pool size, sum of created buffers, arena top).
    fn reserved(&self) -> u64;
    /// `(largest free chunk, total free bytes)` inside [`Allocator::reserved`].
    fn free_space(&self) -> (u64, u64);
    /// Allocations served from memory an earlier allocation used and gave back (a reuse, or
    /// a cache hit), so far. Every allocator that reuses counts them.
    fn cache_hits(&self) -> u64 {
        0
    }
    /// Candidates the allocator's search examined so far, over all requests: its search cost
    /// (blocks of a linear scan, table entries, free extents, stack pops, bins).
    fn probes(&self) -> u64 {
        0
    }
    /// Bytes asked from the system beyond [`Allocator::reserved`] (`aligned_alloc`'s
    /// alignment and header), bytes.
    fn system_overhead(&self) -> u64 {
        0
    }
    /// Per memory level now (tiered allocators; empty otherwise).
    fn levels(&self) -> Vec<super::LevelUse> {
        Vec::new()
    }
    /// The level buffer `id` is held in (tiered allocators).
    fn level_of(&self, _id: BufferId) -> Option<usize> {
        None
    }
    /// The bytes this allocator's address ranges span, if not the largest `offset + size`
    /// (tiered allocators: the levels' highest used bytes, summed).
    fn extent(&self) -> Option<u64> {
        None
    }
    /// Whether the allocations of one step are requested largest first (GE V1's
    /// `MallocByActiveMemorys`) rather than in problem order.
    fn largest_first_per_step(&self) -> bool {
        false
    }
}

/// acl-adapter style fixed-block pool: `pool_bytes` cut into blocks of `block_bytes`. A request
/// takes `ceil(size / block)` consecutive free blocks, lowest first (first fit); when no run is
/// long enough the allocation fails (the pool never grows).
#[derive(Debug, Clone)]
pub struct FixedBlockPool {
    block: u64,
    used: Vec<bool>,
    /// Blocks some allocation has used: a run with one of them is a reuse.
    touched: Vec<bool>,
    held: BTreeMap<BufferId, (usize, usize)>,
    hits: u64,
    probes: u64,
}

/// Most blocks a simulated pool may have (keeps the simulation's memory bounded).
pub const MAX_POOL_BLOCKS: u64 = 1 << 24;

impl FixedBlockPool {
    /// A pool of `pool_bytes / block_bytes` blocks.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] if `block_bytes` is 0 or the pool has more than
    /// [`MAX_POOL_BLOCKS`] blocks.
    pub fn new(pool_bytes: u64, block_bytes: u64) -> Result<Self> {
        if block_bytes == 0 {
            return Err(Error::bad_option("pool block size must be at least 1 byte"));
        }
        let n = pool_bytes / block_bytes;
        if n > MAX_POOL_BLOCKS {
            return Err(Error::bad_option(alloc::format!(
                "pool of {n} blocks ({pool_bytes} B in blocks of {block_bytes} B) is more than the simulator's limit of {MAX_POOL_BLOCKS}: use larger blocks (--block-size) or a smaller pool (--pool-size)"
            )));
        }
        let n = usize::try_from(n).map_err(|_| Error::bad_option("pool too large"))?;
        Ok(FixedBlockPool {
            block: block_bytes,
            used: alloc::vec![false; n],
            touched: alloc::vec![false; n],
            held: BTreeMap::new(),
            hits: 0,
            probes: 0,
        })
    }
}

impl Allocator for FixedBlockPool {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        let k = usize::try_from(size.div_ceil(self.block)).unwrap_or(usize::MAX);
        if k == 0 {
            return Ok(Some((0, 0)));
        }
        let mut run = 0;
        for i in 0..self.used.len() {
            // first fit scans block by block: one probe each
            self.probes += 1;
            run = if self.used[i] { 0 } else { run + 1 };
            if run == k {
                let first = i + 1 - k;
                self.used[first..=i].iter_mut().for_each(|u| *u = true);
                if self.touched[first..=i].iter().any(|&t| t) {
                    self.hits += 1;
                }
                self.touched[first..=i].iter_mut().for_each(|t| *t = true);
                self.held.insert(id, (first, k));
                let taken = k as u64 * self.block;
                return Ok(Some((first as u64 * self.block, taken)));
            }
        }
        Ok(None)
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }

    fn free(&mut self, id: BufferId) {
        if let Some((first, k)) = self.held.remove(&id) {
            self.used[first..first + k]
                .iter_mut()
                .for_each(|u| *u = false);
        }
    }

    fn reserved(&self) -> u64 {
        self.used.len() as u64 * self.block
    }

    fn free_space(&self) -> (u64, u64) {
        let (mut largest, mut total, mut run) = (0u64, 0u64, 0u64);
        for &u in &self.used {
            if u {
                run = 0;
            } else {
                run += self.block;
                total += self.block;
                largest = largest.max(run);
            }
        }
        (largest, total)
    }
}

/// A first-fit reuse manager: keeps every buffer it ever created; a request reuses the first
/// free buffer whose size is at least the request, else creates a new buffer of the request
/// rounded up to `alignment`, placed after the others. With `capacity` buffers in its table,
/// a request that needs a new one fails. Memory = sum of created buffers.
#[derive(Debug, Clone)]
pub struct ReuseManager {
    alignment: u64,
    capacity: usize,
    /// (offset, size, holder)
    buffers: Vec<(u64, u64, Option<BufferId>)>,
    top: u64,
    hits: u64,
    probes: u64,
}

impl ReuseManager {
    /// A manager with `capacity` table entries, creating buffers aligned to `alignment`.
    pub fn new(alignment: u64, capacity: usize) -> Self {
        ReuseManager {
            alignment: alignment.max(1),
            capacity,
            buffers: Vec::new(),
            top: 0,
            hits: 0,
            probes: 0,
        }
    }
}

impl Allocator for ReuseManager {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        if size == 0 {
            return Ok(Some((0, 0)));
        }
        // a linear scan of the table: one probe per entry looked at
        let found = self
            .buffers
            .iter()
            .position(|b| b.2.is_none() && b.1 >= size);
        self.probes += found.map_or(self.buffers.len(), |i| i + 1) as u64;
        if let Some(b) = found.and_then(|i| self.buffers.get_mut(i)) {
            b.2 = Some(id);
            self.hits += 1;
            return Ok(Some((b.0, b.1)));
        }
        if self.buffers.len() >= self.capacity {
            return Ok(None);
        }
        let s = round_up(size, self.alignment, "reuse-manager buffer size")?;
        let off = self.top;
        self.top = crate::error::add(self.top, s, "reuse-manager total")?;
        self.buffers.push((off, s, Some(id)));
        Ok(Some((off, s)))
    }

    fn free(&mut self, id: BufferId) {
        if let Some(b) = self.buffers.iter_mut().find(|b| b.2 == Some(id)) {
            b.2 = None;
        }
    }

    fn reserved(&self) -> u64 {
        self.top
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }

    fn free_space(&self) -> (u64, u64) {
        // Buffers are not merged: the largest free chunk is the largest free buffer.
        let free = self.buffers.iter().filter(|b| b.2.is_none());
        free.fold((0, 0), |(l, t), b| (l.max(b.1), t + b.1))
    }
}

/// A best-fit allocator with splitting and coalescing (like TensorFlow's BFC arena): the
/// smallest free chunk that fits (lowest offset on ties) is split; freed chunks merge with free
/// neighbours; with no chunk large enough the arena grows at its top (extending a free last
/// chunk first). Requests are rounded up to `alignment`.
#[derive(Debug, Clone)]
pub struct BestFitCoalescing {
    alignment: u64,
    /// offset -> (size, holder)
    chunks: BTreeMap<u64, (u64, Option<BufferId>)>,
    free: BTreeSet<(u64, u64)>,
    held: BTreeMap<BufferId, u64>,
    top: u64,
    hits: u64,
    probes: u64,
}

impl BestFitCoalescing {
    /// An empty arena rounding requests up to `alignment` bytes.
    pub fn new(alignment: u64) -> Self {
        BestFitCoalescing {
            alignment: alignment.max(1),
            chunks: BTreeMap::new(),
            free: BTreeSet::new(),
            held: BTreeMap::new(),
            top: 0,
            hits: 0,
            probes: 0,
        }
    }
}

impl Allocator for BestFitCoalescing {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        if size == 0 {
            return Ok(Some((0, 0)));
        }
        let s = round_up(size, self.alignment, "BFC chunk size")?;
        // the free chunks are kept ordered by size (BFC's bins): one lookup finds the best fit
        self.probes += 1;
        let found = self.free.range((s, 0)..).next().copied();
        let off = match found {
            Some((csize, off)) => {
                self.hits += 1;
                self.free.remove(&(csize, off));
                if csize > s {
                    self.chunks.insert(off + s, (csize - s, None));
                    self.free.insert((csize - s, off + s));
                }
                off
            }
            None => {
                // Grow: reuse a free chunk at the top if there is one.
                let last_free = self
                    .chunks
                    .last_key_value()
                    .and_then(|(&o, &(cs, h))| h.is_none().then_some((o, cs)));
                let off = match last_free {
                    Some((o, cs)) => {
                        self.free.remove(&(cs, o));
                        o
                    }
                    None => self.top,
                };
                self.top = crate::error::add(off, s, "BFC arena top")?;
                off
            }
        };
        self.chunks.insert(off, (s, Some(id)));
        self.held.insert(id, off);
        Ok(Some((off, s)))
    }

    fn free(&mut self, id: BufferId) {
        let Some(mut off) = self.held.remove(&id) else {
            return;
        };
        let Some(&(mut size, _)) = self.chunks.get(&off) else {
            return;
        };
        // Merge with the next chunk if free.
        if let Some(&(ns, None)) = self.chunks.get(&(off + size)) {
            self.chunks.remove(&(off + size));
            self.free.remove(&(ns, off + size));
            size += ns;
        }
        // Merge with the previous chunk if free.
        if let Some((&po, &(ps, None))) = self.chunks.range(..off).next_back() {
            if po + ps == off {
                self.chunks.remove(&off);
                self.free.remove(&(ps, po));
                off = po;
                size += ps;
            }
        }
        self.chunks.insert(off, (size, None));
        self.free.insert((size, off));
    }

    fn reserved(&self) -> u64 {
        self.top
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }

    fn free_space(&self) -> (u64, u64) {
        let largest = self.free.last().map_or(0, |&(s, _)| s);
        let total = self.free.iter().map(|&(s, _)| s).sum();
        (largest, total)
    }
}
