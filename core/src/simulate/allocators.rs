//! The simulated runtime allocators. Each hands out offsets in one device region and can say
//! how its free space is split.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use super::max_tree::MaxTree;
use super::runs::BlockRuns;
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
    blocks: u64,
    /// Free runs, first fit in `O(log blocks)` (a scan from block 0 made nested lifetimes
    /// quadratic).
    runs: BlockRuns,
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
        let blocks = usize::try_from(n).map_err(|_| Error::bad_option("pool too large"))?;
        Ok(FixedBlockPool {
            block: block_bytes,
            blocks: n,
            runs: BlockRuns::new(blocks),
            touched: alloc::vec![false; blocks],
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
        let Some(first) = self.runs.first_fit(k) else {
            // the modelled first fit scans every block before giving up: one probe each
            self.probes += self.blocks;
            return Ok(None);
        };
        // the modelled allocator scans block by block up to the run's last block
        self.probes += (first + k) as u64;
        self.runs.set(first, k, true);
        if self.touched[first..first + k].iter().any(|&t| t) {
            self.hits += 1;
        }
        self.touched[first..first + k]
            .iter_mut()
            .for_each(|t| *t = true);
        self.held.insert(id, (first, k));
        let taken = k as u64 * self.block;
        Ok(Some((first as u64 * self.block, taken)))
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }

    fn free(&mut self, id: BufferId) {
        if let Some((first, k)) = self.held.remove(&id) {
            self.runs.set(first, k, false);
        }
    }

    fn reserved(&self) -> u64 {
        self.blocks * self.block
    }

    fn free_space(&self) -> (u64, u64) {
        let (largest, total) = self.runs.free_space();
        (largest * self.block, total * self.block)
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
    /// (offset, size, holder), in creation order.
    buffers: Vec<(u64, u64, Option<BufferId>)>,
    /// Creation index → size while free, 0 while held: the first free buffer large enough
    /// in `O(log n)`.
    free: MaxTree<usize>,
    held: BTreeMap<BufferId, usize>,
    /// Sum of the free buffers' sizes.
    free_bytes: u64,
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
            free: MaxTree::new(),
            held: BTreeMap::new(),
            free_bytes: 0,
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
        let found = self.free.first_at_least(size);
        // the modelled manager scans its table in creation order: one probe per entry looked at
        self.probes += found.map_or(self.buffers.len(), |(k, _)| k + 1) as u64;
        if let Some((k, _)) = found {
            let b = &mut self.buffers[k];
            b.2 = Some(id);
            self.free.set(&k, 0);
            self.held.insert(id, k);
            self.free_bytes -= b.1;
            self.hits += 1;
            return Ok(Some((b.0, b.1)));
        }
        if self.buffers.len() >= self.capacity {
            return Ok(None);
        }
        let s = round_up(size, self.alignment, "reuse-manager buffer size")?;
        let off = self.top;
        self.top = crate::error::add(self.top, s, "reuse-manager total")?;
        self.held.insert(id, self.buffers.len());
        self.free.insert(self.buffers.len(), 0);
        self.buffers.push((off, s, Some(id)));
        Ok(Some((off, s)))
    }

    fn free(&mut self, id: BufferId) {
        if let Some(k) = self.held.remove(&id) {
            if let Some(b) = self.buffers.get_mut(k) {
                b.2 = None;
                self.free.set(&k, b.1);
                self.free_bytes += b.1;
            }
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
        (self.free.max(), self.free_bytes)
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
    /// Sum of the free chunks' sizes.
    free_bytes: u64,
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
            free_bytes: 0,
            top: 0,
            hits: 0,
            probes: 0,
        }
    }

    fn take_free(&mut self, size: u64, off: u64) {
        self.free.remove(&(size, off));
        self.free_bytes -= size;
    }

    fn put_free(&mut self, size: u64, off: u64) {
        self.free.insert((size, off));
        self.free_bytes += size;
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
                self.take_free(csize, off);
                if csize > s {
                    self.chunks.insert(off + s, (csize - s, None));
                    self.put_free(csize - s, off + s);
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
                        self.take_free(cs, o);
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
            self.take_free(ns, off + size);
            size += ns;
        }
        // Merge with the previous chunk if free.
        if let Some((&po, &(ps, None))) = self.chunks.range(..off).next_back() {
            if po + ps == off {
                self.chunks.remove(&off);
                self.take_free(ps, po);
                off = po;
                size += ps;
            }
        }
        self.chunks.insert(off, (size, None));
        self.put_free(size, off);
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
        (largest, self.free_bytes)
    }
}
