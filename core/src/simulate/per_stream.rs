//! `ge-v2-streams`: GE's V2 runtime with one caching allocator per stream.
//!
//! GE V2 lowers every device output allocation to the L2 allocator of the op's logic stream
//! (graph_metadef exe_graph/lowering/lowering_global_data.cc `GetOrCreateDeviceL2Allocator`,
//! `GenL2AllocatorKey`: one key per placement and logic stream; `CreateL2Allocators` makes one
//! per stream), so a span freed on one stream is cached for that stream only. V1's
//! `ActiveMemoryAllocator` (`ge-v1`) is one allocator the streams share, as is memplan's
//! `ge-v2`.
//!
//! memplan's reading: each stream's allocator is a [`GeV2`] over the buffers produced on that
//! stream (`Buffer::stream`), replayed in the trace's order. GE's streams' L2 allocators draw
//! device memory from one shared L1 allocator; memplan gives each stream its own device range,
//! the streams' ranges laid one after another in stream order, which is GE's figure unless
//! one stream gives device blocks back (over the threshold) that another could take.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::allocators::Allocator;
use super::ge_v2::GeV2;
use crate::error::{add, Result};
use crate::problem::{BufferId, Problem};

/// One [`GeV2`] per stream (see the module rules).
#[derive(Debug, Clone)]
pub struct GeV2PerStream {
    page: u64,
    threshold: u64,
    stream_of: Vec<u32>,
    inner: BTreeMap<u32, GeV2>,
    /// Where each stream's device range starts in the combined address space.
    base: BTreeMap<u32, u64>,
    /// Per stream, the largest `offset + size` it handed out (its own range).
    extent: BTreeMap<u32, u64>,
}

impl GeV2PerStream {
    /// Allocators for `problem`'s streams, each stream's range starting at `base` (absent: 0).
    ///
    /// # Errors
    /// As [`GeV2::new`].
    pub fn new(
        problem: &Problem,
        page_bytes: u64,
        threshold_bytes: u64,
        base: BTreeMap<u32, u64>,
    ) -> Result<Self> {
        GeV2::new(page_bytes, threshold_bytes)?;
        Ok(GeV2PerStream {
            page: page_bytes,
            threshold: threshold_bytes,
            stream_of: problem.buffers.iter().map(|b| b.stream).collect(),
            inner: BTreeMap::new(),
            base,
            extent: BTreeMap::new(),
        })
    }

    /// The ranges of a second replay: each stream's range after the earlier streams' extents.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Overflow`].
    pub fn bases(&self) -> Result<BTreeMap<u32, u64>> {
        let mut at = 0u64;
        let mut out = BTreeMap::new();
        for (&s, &e) in &self.extent {
            out.insert(s, at);
            at = add(at, e, "ge-v2-streams ranges")?;
        }
        Ok(out)
    }

    fn stream(&self, id: BufferId) -> u32 {
        self.stream_of.get(id.index()).copied().unwrap_or(0)
    }
}

impl Allocator for GeV2PerStream {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        let s = self.stream(id);
        let a = match self.inner.entry(s) {
            alloc::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            alloc::collections::btree_map::Entry::Vacant(e) => {
                e.insert(GeV2::new(self.page, self.threshold)?)
            }
        };
        let Some((off, bytes)) = a.alloc(id, size)? else {
            return Ok(None);
        };
        let end = add(off, bytes, "ge-v2-streams offset")?;
        let x = self.extent.entry(s).or_insert(0);
        *x = (*x).max(end);
        let base = self.base.get(&s).copied().unwrap_or(0);
        Ok(Some((add(base, off, "ge-v2-streams offset")?, bytes)))
    }

    fn free(&mut self, id: BufferId) {
        let s = self.stream(id);
        if let Some(a) = self.inner.get_mut(&s) {
            a.free(id);
        }
    }

    fn reserved(&self) -> u64 {
        self.inner
            .values()
            .fold(0u64, |t, a| t.saturating_add(a.reserved()))
    }

    fn free_space(&self) -> (u64, u64) {
        self.inner.values().fold((0, 0), |(l, t), a| {
            let (al, at) = a.free_space();
            (l.max(al), t.saturating_add(at))
        })
    }

    fn cache_hits(&self) -> u64 {
        self.inner.values().map(|a| a.cache_hits()).sum()
    }

    fn probes(&self) -> u64 {
        self.inner.values().map(|a| a.probes()).sum()
    }
}
