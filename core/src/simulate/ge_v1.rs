//! `ge-v1`: GE's V1 runtime allocator for feature-map memory, `ActiveMemoryAllocator`
//! (hicann/ge `runtime/v1/graph/manager/active_memory_allocator.h` and `.cc`), replayed on the
//! tensor trace.
//!
//! GE calls `ActiveMemoryAllocator::MallocMemory` with a list of logical memory blocks; memplan
//! calls it with the allocations of one op step (each tensor a logical block). The rules, each
//! with the function it comes from:
//! 1. `MallocByActiveMemorys`: the requests of one call are served largest first ("sorted large
//!    to small to waste less"); the existing active blocks are tried in their order, largest
//!    block first (`ActiveMemoryBlock::operator<` sorts by `total_size` descending).
//! 2. `ActiveMemoryBlock::Malloc`: inside a block, a bump cursor — a request fits if
//!    `size ≤ total_size − used_size` and takes `[used, used + size)`; there is no free list
//!    inside a block.
//! 3. `MallocActiveMemorys` + the file's `Malloc`: a request no block can take gets a new active
//!    block from the device (`rtMalloc`) of its own size, rounded up to the 2 MiB driver page
//!    (`kDrvPageSize`) only when larger than a page; the block list is re-sorted largest first.
//!    New blocks are laid out one after the other in memplan's address space.
//! 4. `ActiveMemoryBlock::Reset` (at the start of each `MallocMemory`): a block's cursor goes
//!    back to 0 when the memory it handed out is no longer needed. On a per-tensor trace memplan
//!    rewinds a block's cursor when the last live tensor in it is freed.
//! 5. `FreeMemory`: blocks go back to the device only when the allocator's use count drops to
//!    0 (the model unloads) — never during a run: the reserved bytes only grow.
//!
//! Not simulated: `MergeBlocks` (it merges logically adjacent blocks of one call; trace tensors
//! have no logical addresses), zero-copy blocks (`alloc = false`), the expandable (virtual
//! memory) path, the `rtMemset` of used memory, and the recursive mutex (one thread here).
//! A cache hit is an allocation served from an existing active block.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::allocators::Allocator;
use super::max_tree::MaxTree;
use crate::error::{add, round_up, Error, Result};
use crate::problem::BufferId;

/// GE's driver page, bytes (`kDrvPageSize`, 2 MiB).
pub const DRV_PAGE: u64 = 2 << 20;

#[derive(Debug, Clone)]
struct ActiveBlock {
    base: u64,
    total: u64,
    used: u64,
    live: u64,
}

/// A block's place in GE's order: largest first, ties in creation order.
type Order = (core::cmp::Reverse<u64>, usize);

/// The V1 active-memory allocator (see the module rules).
#[derive(Debug, Clone)]
pub struct GeV1 {
    page: u64,
    /// In creation order.
    blocks: Vec<ActiveBlock>,
    /// Each block's room behind its cursor, in GE's order: the first block with room for a
    /// request in `O(log n)` (a scan of the sorted list made nested lifetimes quadratic).
    room: MaxTree<Order>,
    top: u64,
    /// Buffer → (block index, bytes).
    held: BTreeMap<BufferId, (usize, u64)>,
    in_use: u64,
    hits: u64,
    probes: u64,
}

impl GeV1 {
    /// An empty allocator rounding device blocks larger than `page` bytes up to whole pages
    /// (GE: [`DRV_PAGE`]).
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] if `page` is 0.
    pub fn new(page: u64) -> Result<Self> {
        if page == 0 {
            return Err(Error::bad_option("ge-v1 page size must be at least 1 byte"));
        }
        Ok(GeV1 {
            page,
            blocks: Vec::new(),
            room: MaxTree::new(),
            top: 0,
            held: BTreeMap::new(),
            in_use: 0,
            hits: 0,
            probes: 0,
        })
    }
}

impl Allocator for GeV1 {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        if size == 0 {
            return Ok(Some((0, 0)));
        }
        // GE's V1 scans its active blocks largest first: one probe per block looked at
        let found = self.room.first_at_least_ranked(size);
        self.probes += found.map_or(self.blocks.len(), |(_, _, before)| before + 1) as u64;
        if let Some((key, _, _)) = found {
            let b = &mut self.blocks[key.1];
            let off = b.base + b.used;
            b.used += size;
            b.live += 1;
            self.room.set(&key, b.total - b.used);
            self.held.insert(id, (key.1, size));
            self.in_use += size;
            self.hits += 1;
            return Ok(Some((off, size)));
        }
        let total = if size > self.page {
            round_up(size, self.page, "ge-v1 active block")?
        } else {
            size
        };
        let base = self.top;
        self.top = add(self.top, total, "ge-v1 device memory")?;
        let k = self.blocks.len();
        self.blocks.push(ActiveBlock {
            base,
            total,
            used: size,
            live: 1,
        });
        self.room
            .insert((core::cmp::Reverse(total), k), total - size);
        self.held.insert(id, (k, size));
        self.in_use += size;
        Ok(Some((base, size)))
    }

    fn free(&mut self, id: BufferId) {
        if let Some((k, size)) = self.held.remove(&id) {
            self.in_use -= size;
            if let Some(b) = self.blocks.get_mut(k) {
                b.live -= 1;
                if b.live == 0 {
                    b.used = 0;
                    self.room.set(&(core::cmp::Reverse(b.total), k), b.total);
                }
            }
        }
    }

    fn reserved(&self) -> u64 {
        self.top
    }

    fn free_space(&self) -> (u64, u64) {
        // Only a block's tail (behind its cursor) can be handed out.
        (self.room.max(), self.top - self.in_use)
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }

    fn largest_first_per_step(&self) -> bool {
        true
    }
}
