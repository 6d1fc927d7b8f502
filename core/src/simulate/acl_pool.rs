//! `acl-pool`: the acl-adapter article's fixed-block pool, as written.
//!
//! Rules (acl-adapter article, "memory pool"):
//! 1. One region of `num_blocks × block_size` bytes, its base aligned to 64 bytes
//!    ([`BASE_ALIGNMENT`]); it is obtained once with `aligned_alloc`, whose emulation asks the
//!    system for the region plus the alignment plus a pointer-sized header
//!    ([`aligned_alloc_overhead`]) — counted as the allocator's system overhead.
//! 2. A request gets exactly one block; a request larger than `block_size` fails (NULL).
//! 3. Free blocks form a stack: the block freed last is the next one handed out (O(1)). At
//!    the start the pool pushes blocks `0, 1, …, N−1` in that order, so block `N−1` is on top
//!    and the first allocation gets the pool's last block (offset `(N−1) × block_size`).
//! 4. With the stack empty the request fails (NULL); the pool never grows.
//!
//! memplan's reading: a failed request is a failed allocation in the statistics (the tensor
//! gets no memory), never an error; a 0-byte request takes no block.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::allocators::Allocator;
use crate::error::{mul, Error, Result};
use crate::problem::BufferId;

/// Alignment of the pool's base, bytes (acl-adapter article).
pub const BASE_ALIGNMENT: u64 = 64;
/// Size of the header `aligned_alloc`'s emulation stores before the aligned address, bytes
/// (a pointer on a 64-bit host).
pub const POINTER_BYTES: u64 = 8;

/// Bytes `aligned_alloc(alignment, size)` asks the system for beyond `size`: the alignment
/// (worst-case shift) plus the pointer-sized header that remembers the original address.
pub fn aligned_alloc_overhead(alignment: u64) -> u64 {
    alignment.saturating_add(POINTER_BYTES)
}

/// The fixed-block pool (see the module rules).
#[derive(Debug, Clone)]
pub struct AclPool {
    block: u64,
    blocks: u64,
    /// Blocks never handed out yet are `0..fresh` (the bottom of the initial stack, `fresh − 1`
    /// on top of them).
    fresh: u64,
    /// Freed blocks, top last: the stack above the untouched ones.
    freed: Vec<u64>,
    held: BTreeMap<BufferId, u64>,
    hits: u64,
    probes: u64,
}

impl AclPool {
    /// A pool of `num_blocks` blocks of `block_bytes` bytes.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] if `block_bytes` is 0; [`crate::ErrorKind::Overflow`]
    /// if the pool's size overflows `u64`.
    pub fn new(block_bytes: u64, num_blocks: u64) -> Result<Self> {
        if block_bytes == 0 {
            return Err(Error::bad_option(
                "acl-pool block size must be at least 1 byte",
            ));
        }
        mul(
            block_bytes,
            num_blocks,
            "acl-pool size (block size × blocks)",
        )?;
        Ok(AclPool {
            block: block_bytes,
            blocks: num_blocks,
            fresh: num_blocks,
            freed: Vec::new(),
            held: BTreeMap::new(),
            hits: 0,
            probes: 0,
        })
    }
}

impl Allocator for AclPool {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        if size == 0 {
            return Ok(Some((0, 0)));
        }
        if size > self.block {
            return Ok(None);
        }
        // one pop of the free stack, O(1)
        self.probes += 1;
        let idx = match self.freed.pop() {
            Some(i) => {
                self.hits += 1;
                i
            }
            None if self.fresh > 0 => {
                self.fresh -= 1;
                self.fresh
            }
            None => return Ok(None),
        };
        self.held.insert(id, idx);
        // idx < blocks and blocks × block fits in u64 (checked in `new`)
        Ok(Some((idx * self.block, self.block)))
    }

    fn free(&mut self, id: BufferId) {
        if let Some(idx) = self.held.remove(&id) {
            self.freed.push(idx);
        }
    }

    fn reserved(&self) -> u64 {
        self.blocks * self.block
    }

    fn free_space(&self) -> (u64, u64) {
        // Every request takes one block: any free block serves any request that fits, so the
        // free space is never split in the sense of external fragmentation.
        let free = (self.blocks - self.held.len() as u64) * self.block;
        (free, free)
    }

    fn system_overhead(&self) -> u64 {
        aligned_alloc_overhead(BASE_ALIGNMENT)
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }
}
