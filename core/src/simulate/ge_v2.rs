//! `ge-v2`: GE's V2 runtime caching allocator, `ScalableAllocator` (hicann/ge
//! `runtime/v2/kernel/memory/allocator/scalable_allocator.h` and `.cc`), replayed on the tensor
//! trace.
//!
//! Memory comes in pages of `2^page_idem_num` bytes; a *span* is a run of pages; idle spans sit
//! in *layers* indexed by their page count (`SpanLayerId` = pages). The rules, each with the
//! function it comes from:
//! 1. `Alloc`: a request larger than `page_mem_size_total_threshold` fails.
//! 2. `GetAllocSize`: the request is rounded up to whole pages (at least one page).
//! 3. `AllocImp` → `FetchLayerSpan`: an idle span of exactly that many pages is reused (the
//!    layer's most recently pushed span; memplan reads `SpanLayer::PopSpan` as a stack) — a
//!    cache hit.
//! 4. `FindFitLayerId(fix + 1, …)` + `FetchSplitedSpan` → `SplitSpan`: else the smallest layer
//!    above with an idle span gives one; it is split: the span keeps its first
//!    `fit − fix` pages and goes back to the idle layer of that size, the request gets the
//!    *upper* `fix` pages (`buddy_addr = span + (fit − fix) pages`) — also a cache hit.
//!    `span_layer_lift_max` (how far up to look) is unlimited by default
//!    (`SPAN_LAYER_LIFT_LEVEL_DEFAULT`).
//! 5. `FetchNewSpan` → `DevAlloc`: else new device memory of the rounded size. If the device
//!    memory held would exceed the total threshold and idle memory exists, the allocation
//!    returns NULL and the caller recycles (`Recycle`: idle spans go back to the device) and
//!    retries; memplan releases every idle span that is a whole device block, then allocates.
//!    New device blocks take the lowest free device address range that fits.
//! 6. `Free` → `TryMergeNext`, `TryMergePrev`, `FreeSpan`: a freed span merges with its idle
//!    buddies (the neighbouring spans cut from the same device block) and the merged span goes
//!    to the idle layer of its page count. Device memory is not returned on free (cached).
//!
//! Defaults: page `2^16` B and total threshold 30 GiB are `PAGE_SIZE_IDEM_DEFAULT` and
//! `PAGE_MEM_SIZE_THRESHOLD_DEFAULT[0]` of the allocator's `default_config.h` (read in the
//! hixl `llm_datadist/memory` copy of this allocator; GE derives the threshold from the
//! device's memory at run time, 95 % of it). Not simulated: the expandable / new-VA and
//! physical-page paths (`ProcessNewVaSpan`, `ProcessPaUsingSpan`, `PHYSICAL_MEM_USING`
//! retries), the delayed split of unsplittable spans, per-layer span-count limits, the span
//! object pools, and all locking and multi-stream borrowing (one thread, one stream here).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::allocators::Allocator;
use crate::error::{add, round_up, Error, Result};
use crate::problem::BufferId;

/// Default page size, bytes (`PAGE_SIZE_IDEM_DEFAULT` = 16 → 64 KiB).
pub const DEFAULT_PAGE: u64 = 1 << 16;
/// Default total threshold, bytes (`PAGE_MEM_SIZE_THRESHOLD_DEFAULT[0]` = 30 GiB).
pub const DEFAULT_THRESHOLD: u64 = 30 << 30;

#[derive(Debug, Clone, Copy)]
struct Span {
    pages: u64,
    holder: Option<BufferId>,
    /// Base of the device block it was cut from.
    dev: u64,
    /// While idle: when it was pushed to its layer (orders the layer's stack).
    pushed: u64,
}

/// The V2 scalable allocator (see the module rules).
#[derive(Debug, Clone)]
pub struct GeV2 {
    page: u64,
    threshold: u64,
    /// Span address → span.
    spans: BTreeMap<u64, Span>,
    /// Device block base → length.
    device: BTreeMap<u64, u64>,
    device_bytes: u64,
    /// End of the highest device block.
    device_end: u64,
    /// Free device address ranges below `device_end` (start → length), left by recycling.
    gaps: BTreeMap<u64, u64>,
    /// Page count → idle spans (push order → address), most recent last; a span leaves its
    /// layer in `O(log n)` (a scan of the layer made nested lifetimes quadratic).
    layers: BTreeMap<u64, BTreeMap<u64, u64>>,
    /// Pages of all idle spans.
    idle_pages: u64,
    pushes: u64,
    held: BTreeMap<BufferId, u64>,
    hits: u64,
    probes: u64,
    recycles: u64,
}

impl GeV2 {
    /// An empty allocator with `page`-byte pages and a `threshold` on device bytes held.
    ///
    /// # Errors
    /// [`crate::ErrorKind::BadOption`] if `page` is 0.
    pub fn new(page: u64, threshold: u64) -> Result<Self> {
        if page == 0 {
            return Err(Error::bad_option("ge-v2 page size must be at least 1 byte"));
        }
        Ok(GeV2 {
            page,
            threshold,
            spans: BTreeMap::new(),
            device: BTreeMap::new(),
            device_bytes: 0,
            device_end: 0,
            gaps: BTreeMap::new(),
            layers: BTreeMap::new(),
            idle_pages: 0,
            pushes: 0,
            held: BTreeMap::new(),
            hits: 0,
            probes: 0,
            recycles: 0,
        })
    }

    /// How many times the caller recycled idle spans (rule 5).
    pub fn recycles(&self) -> u64 {
        self.recycles
    }

    /// Puts the span at `addr` (in `spans`) on top of the idle layer of `pages`.
    fn push_idle(&mut self, addr: u64, pages: u64) {
        self.pushes += 1;
        if let Some(s) = self.spans.get_mut(&addr) {
            s.pushed = self.pushes;
        }
        self.layers
            .entry(pages)
            .or_default()
            .insert(self.pushes, addr);
        self.idle_pages = self.idle_pages.saturating_add(pages);
    }

    /// Takes the idle span at `addr` (still in `spans`) out of its layer.
    fn remove_idle(&mut self, addr: u64, pages: u64) {
        let Some(pushed) = self.spans.get(&addr).map(|s| s.pushed) else {
            return;
        };
        if let Some(l) = self.layers.get_mut(&pages) {
            if l.remove(&pushed).is_some() {
                self.idle_pages -= pages;
            }
            if l.is_empty() {
                self.layers.remove(&pages);
            }
        }
    }

    fn pop_layer(&mut self, pages: u64) -> Option<u64> {
        let l = self.layers.get_mut(&pages)?;
        let a = l.pop_last().map(|(_, a)| a);
        if a.is_some() {
            self.idle_pages -= pages;
        }
        if l.is_empty() {
            self.layers.remove(&pages);
        }
        a
    }

    fn idle_bytes(&self) -> u64 {
        self.idle_pages.saturating_mul(self.page)
    }

    /// Rule 5's `Recycle`: idle spans that are whole device blocks go back to the device.
    fn recycle(&mut self) {
        self.recycles += 1;
        let whole: Vec<(u64, u64)> = self
            .spans
            .iter()
            .filter(|(&a, s)| {
                s.holder.is_none()
                    && a == s.dev
                    && self.device.get(&a) == Some(&(s.pages * self.page))
            })
            .map(|(&a, s)| (a, s.pages))
            .collect();
        for (a, pages) in whole {
            self.remove_idle(a, pages);
            self.spans.remove(&a);
            if let Some(len) = self.device.remove(&a) {
                self.device_bytes -= len;
                self.release_range(a, len);
            }
        }
    }

    /// Records `[a, a + len)` (a device block just released) as free address space.
    fn release_range(&mut self, mut a: u64, mut len: u64) {
        if let Some(l) = self.gaps.remove(&(a + len)) {
            len += l;
        }
        if let Some((&pa, &pl)) = self.gaps.range(..a).next_back() {
            if pa + pl == a {
                self.gaps.remove(&pa);
                a = pa;
                len += pl;
            }
        }
        if a + len >= self.device_end {
            self.device_end = a;
        } else {
            self.gaps.insert(a, len);
        }
    }

    /// Lowest device address range of `len` bytes not held, taken: the first gap long
    /// enough (gaps come only from recycling), else the end.
    fn device_place(&mut self, len: u64) -> Result<u64> {
        let gap = self
            .gaps
            .iter()
            .find(|(_, &l)| l >= len)
            .map(|(&a, &l)| (a, l));
        if let Some((a, l)) = gap {
            self.gaps.remove(&a);
            if l > len {
                self.gaps.insert(a + len, l - len);
            }
            return Ok(a);
        }
        let at = self.device_end;
        self.device_end = add(at, len, "ge-v2 device address")?;
        Ok(at)
    }
}

impl Allocator for GeV2 {
    fn alloc(&mut self, id: BufferId, size: u64) -> Result<Option<(u64, u64)>> {
        if size == 0 {
            return Ok(Some((0, 0)));
        }
        if size > self.threshold {
            return Ok(None);
        }
        let bytes = if size < self.page {
            self.page
        } else {
            round_up(size, self.page, "ge-v2 span size")?
        };
        let pages = bytes / self.page;
        // rule 3: exact layer (one lookup of the page-count layers)
        self.probes += 1;
        if let Some(a) = self.pop_layer(pages) {
            if let Some(s) = self.spans.get_mut(&a) {
                s.holder = Some(id);
            }
            self.held.insert(id, a);
            self.hits += 1;
            return Ok(Some((a, bytes)));
        }
        // rule 4: smallest larger layer, split, the request takes the upper pages
        let mut looked = 0u64;
        let fit = self
            .layers
            .range(pages + 1..)
            .inspect(|_| looked += 1)
            .find(|(_, v)| !v.is_empty())
            .map(|(&p, _)| p);
        self.probes += looked;
        if let Some(fit) = fit {
            if let Some(a) = self.pop_layer(fit) {
                let left = fit - pages;
                let dev = self.spans.get(&a).map_or(a, |s| s.dev);
                if let Some(s) = self.spans.get_mut(&a) {
                    s.pages = left;
                }
                self.push_idle(a, left);
                let buddy = a + left * self.page;
                self.spans.insert(
                    buddy,
                    Span {
                        pages,
                        holder: Some(id),
                        dev,
                        pushed: 0,
                    },
                );
                self.held.insert(id, buddy);
                self.hits += 1;
                return Ok(Some((buddy, bytes)));
            }
        }
        // rule 5: threshold → recycle, then new device memory
        if self.device_bytes > self.threshold.saturating_sub(bytes) && self.idle_bytes() > 0 {
            self.recycle();
        }
        let base = self.device_place(bytes)?;
        self.device.insert(base, bytes);
        self.device_bytes = add(self.device_bytes, bytes, "ge-v2 device bytes")?;
        self.spans.insert(
            base,
            Span {
                pages,
                holder: Some(id),
                dev: base,
                pushed: 0,
            },
        );
        self.held.insert(id, base);
        Ok(Some((base, bytes)))
    }

    fn free(&mut self, id: BufferId) {
        let Some(mut a) = self.held.remove(&id) else {
            return;
        };
        let Some(mut s) = self.spans.get(&a).copied() else {
            return;
        };
        s.holder = None;
        // rule 6: merge with the next idle buddy, then the previous one
        let next = a + s.pages * self.page;
        if let Some(n) = self.spans.get(&next).copied() {
            if n.holder.is_none() && n.dev == s.dev {
                self.remove_idle(next, n.pages);
                self.spans.remove(&next);
                s.pages += n.pages;
            }
        }
        if let Some((&pa, &p)) = self.spans.range(..a).next_back() {
            if p.holder.is_none() && p.dev == s.dev && pa + p.pages * self.page == a {
                self.remove_idle(pa, p.pages);
                self.spans.remove(&a);
                a = pa;
                s.pages += p.pages;
            }
        }
        self.spans.insert(a, s);
        self.push_idle(a, s.pages);
    }

    fn reserved(&self) -> u64 {
        self.device_bytes
    }

    fn free_space(&self) -> (u64, u64) {
        let largest = self.layers.keys().next_back().map_or(0, |&p| p * self.page);
        (largest, self.idle_bytes())
    }

    fn cache_hits(&self) -> u64 {
        self.hits
    }

    fn probes(&self) -> u64 {
        self.probes
    }
}
