//! The decision search: can the free buffers of an [`Inst`] be placed under `cap` bytes?
//!
//! A depth-first branch-and-bound over canonical placements in the manner of MiniMalloc
//! (Moffitt, ASPLOS 2023): buffers are placed in non-decreasing offset order, each on top of
//! the highest placed buffer it conflicts with (or at 0, lifted over pinned buffers), so a
//! placement is an ordering. Every technique can be switched off in [`SolverParams`].

use alloc::vec::Vec;

use super::instance::{to_u32, Inst};
use super::{Clock, Preorder, SolverParams};

const NONE: u64 = u64::MAX;

/// Node and time limits shared by every search of one solve.
pub(crate) struct Limits<'c> {
    pub clock: &'c dyn Clock,
    /// Absolute deadline on the clock, in ms.
    pub deadline: Option<u64>,
    /// Stop once `nodes` reaches this.
    pub node_cap: u64,
    /// Search nodes visited so far.
    pub nodes: u64,
    /// A limit (nodes, time or cancellation) was hit.
    pub stopped: bool,
    /// What the large-input searches tried and kept (reported in the plan's stats).
    pub counts: Counts,
    /// The slowest seed heuristic's name and time on the clock (ms): one started before the
    /// deadline runs to its end, so it is what a time limit is overrun by at most.
    pub slowest_seed: Option<(&'static str, u64)>,
}

/// Work of the large-input searches, for the plan's notes and stats.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Heuristics the seed ran (of `packing::PORTFOLIO`).
    pub seed_heuristics: u64,
    /// The race that ordered the seed's heuristics, if one ran.
    pub seed_race: Option<super::seed_race::RaceSummary>,
    /// Window re-solves tried, and those that fitted (committed).
    pub windows: u64,
    pub windows_ok: u64,
    /// Window re-solves searched to exhaustion without a fit (proven: nothing fits under
    /// the window's target with the rest where it is), and those cut by their node budget or
    /// a global limit (nothing proven).
    pub windows_exhausted: u64,
    pub windows_cut: u64,
    /// Band moves at the peak ([`super::window`]) tried, fitted, searched to exhaustion
    /// without a fit, and cut by a budget or limit.
    pub bands: u64,
    pub bands_ok: u64,
    pub bands_exhausted: u64,
    pub bands_cut: u64,
    /// The largest neighbourhood (freed buffers) searched to exhaustion at one byte under
    /// the peak `exhausted_peak` the search ended a window search with (0 for none).
    pub exhausted_peak: u64,
    pub exhausted_most: u64,
    /// Relocations of a buffer tried (spots), and those kept.
    pub relocations: u64,
    pub relocations_ok: u64,
    /// Moves of the long-buffer layout search tried, and those kept.
    pub layout_moves: u64,
    pub layout_moves_ok: u64,
    /// The certificate's band at the peak `certificate_peak` ([`super::window::certify`]):
    /// searched to exhaustion or cut.
    pub certificate: Option<super::window::Cert>,
    pub certificate_peak: u64,
}

#[cfg(test)]
impl Limits<'static> {
    /// Limits for tests: no clock, no deadline, at most `cap` nodes.
    pub(crate) fn nodes_only(cap: u64) -> Self {
        Limits {
            counts: Counts::default(),
            clock: &super::NoClock,
            deadline: None,
            node_cap: cap,
            nodes: 0,
            stopped: false,
            slowest_seed: None,
        }
    }
}

impl Limits<'_> {
    /// Counts a node; `false` once a limit is hit.
    pub fn tick(&mut self) -> bool {
        if self.stopped {
            return false;
        }
        if self.nodes >= self.node_cap {
            self.stopped = true;
            return false;
        }
        self.nodes += 1;
        if self.nodes % 128 == 0 {
            self.poll();
        }
        !self.stopped
    }

    /// [`Limits::poll`], and whether `ms` more milliseconds fit before the deadline: whether
    /// to start a step expected to take that long.
    pub fn room_for(&mut self, ms: u64) -> bool {
        self.poll()
            && self
                .deadline
                .is_none_or(|d| self.clock.now_ms().saturating_add(ms) < d)
    }

    /// Checks the clock and the cancellation flag now.
    pub fn poll(&mut self) -> bool {
        if self.clock.cancelled() || self.deadline.is_some_and(|d| self.clock.now_ms() >= d) {
            self.stopped = true;
        }
        !self.stopped
    }
}

/// What a decision search concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Offsets of the free buffers (indexed like `Inst::free`), all tops `<= cap`.
    Found(Vec<u64>),
    /// Proven: no placement fits under `cap`.
    Infeasible,
    /// A limit was hit first.
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Found,
    NotFound,
    /// The attempt's own node limit (round robin) ran out.
    Aborted,
    /// A global limit ran out.
    Stopped,
}

struct Part {
    bufs: Vec<u32>,
    lo: u32,
    hi: u32,
}

struct Search<'a, 'c> {
    inst: &'a Inst,
    p: &'a SolverParams,
    cap: u64,
    limits: &'a mut Limits<'c>,
    local_left: u64,
    heuristic: Preorder,
    off: Vec<u64>,
    min_off: Vec<u64>,
    floor: Vec<u64>,
    total: Vec<u64>,
    cuts: Vec<u32>,
    sol: Vec<u64>,
    off_log: Vec<(u32, u64)>,
    sec_log: Vec<(u32, u64)>,
    affected: Vec<u32>,
    mark: Vec<bool>,
}

/// Decides whether `inst` fits under `cap` bytes within `limits`.
pub(crate) fn decide(inst: &Inst, p: &SolverParams, cap: u64, limits: &mut Limits<'_>) -> Decision {
    let n = inst.n();
    if inst.pinned_top > cap {
        return Decision::Infeasible;
    }
    let mut min_off = Vec::with_capacity(n);
    for k in 0..n {
        let m = inst.lift(k, 0);
        if m == NONE || m + inst.size[k] > cap {
            return Decision::Infeasible;
        }
        min_off.push(m);
    }
    if n == 0 {
        return Decision::Found(Vec::new());
    }
    let nsec = inst.nsec;
    let mut total = alloc::vec![0u64; nsec];
    let mut cuts = alloc::vec![0u32; nsec.saturating_sub(1)];
    for k in 0..n {
        let (lo, hi) = (inst.sec_lo[k] as usize, inst.sec_hi[k] as usize);
        for t in &mut total[lo..hi] {
            *t = t.saturating_add(inst.size[k]);
        }
        for c in &mut cuts[lo..hi - 1] {
            *c += 1;
        }
    }
    let mut floor = alloc::vec![0u64; nsec];
    if p.unallocated_floor {
        for (s, f) in floor.iter_mut().enumerate() {
            *f = inst
                .sections
                .row(s)
                .iter()
                .map(|&k| min_off[k as usize])
                .min()
                .unwrap_or(0);
        }
    }
    let mut s = Search {
        inst,
        p,
        cap,
        limits,
        local_left: u64::MAX,
        heuristic: Preorder::Taw,
        off: alloc::vec![NONE; n],
        min_off,
        floor,
        total,
        cuts,
        sol: alloc::vec![0; n],
        off_log: Vec::new(),
        sec_log: Vec::new(),
        affected: Vec::new(),
        mark: alloc::vec![false; nsec],
    };
    let heuristics: &[Preorder] = if p.round_robin {
        &Preorder::ALL
    } else {
        &Preorder::ALL[..1]
    };
    if heuristics.len() == 1 {
        s.heuristic = heuristics[0];
        let st = s.solve_all();
        return s.finish(st);
    }
    // Round robin: restart with every preordering under a node limit that doubles, so one
    // unlucky ordering cannot stall the search (MiniMalloc's RoundRobin).
    let mut node_limit = to_u64(n).max(16);
    loop {
        node_limit = node_limit.saturating_mul(2);
        for &h in heuristics {
            s.heuristic = h;
            s.local_left = node_limit;
            let st = s.solve_all();
            if st != St::Aborted {
                return s.finish(st);
            }
        }
    }
}

fn to_u64(x: usize) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

impl Search<'_, '_> {
    fn finish(&mut self, st: St) -> Decision {
        match st {
            St::Found => Decision::Found(core::mem::take(&mut self.sol)),
            St::NotFound => Decision::Infeasible,
            St::Aborted | St::Stopped => Decision::Unknown,
        }
    }

    fn solve_all(&mut self) -> St {
        let n = self.inst.n();
        let all = Part {
            bufs: (0..to_u32(n)).collect(),
            lo: 0,
            hi: to_u32(self.inst.nsec),
        };
        if !self.p.dynamic_decomposition {
            return self.subsolve(&all);
        }
        // Static decomposition: split where no buffer crosses a section boundary.
        let mut cutpoints = alloc::vec![0u32];
        for (s, &c) in self.cuts.iter().enumerate() {
            if c == 0 {
                cutpoints.push(to_u32(s + 1));
            }
        }
        cutpoints.push(all.hi);
        self.solve_windows(&all, &cutpoints)
    }

    /// Solves the unplaced buffers of `part` split at `cutpoints` (sorted section indices,
    /// first = `part.lo`, last = `part.hi`), each window on its own.
    fn solve_windows(&mut self, part: &Part, cutpoints: &[u32]) -> St {
        for w in cutpoints.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            let bufs: Vec<u32> = part
                .bufs
                .iter()
                .copied()
                .filter(|&k| {
                    let k = k as usize;
                    self.off[k] == NONE && self.inst.sec_lo[k] < hi && lo < self.inst.sec_hi[k]
                })
                .collect();
            if bufs.is_empty() {
                continue;
            }
            let st = self.subsolve(&Part { bufs, lo, hi });
            if st != St::Found {
                return st;
            }
        }
        St::Found
    }

    /// Orders the buffers of `part` statically, then searches.
    fn subsolve(&mut self, part: &Part) -> St {
        let mut pre = part.bufs.clone();
        if self.p.static_preordering {
            let inst = self.inst;
            let tot: Vec<(u32, u64)> = pre
                .iter()
                .map(|&k| {
                    let k = k as usize;
                    let t = (inst.sec_lo[k]..inst.sec_hi[k])
                        .map(|s| self.total[s as usize])
                        .max()
                        .unwrap_or(0);
                    (to_u32(k), t)
                })
                .collect();
            let mut keyed: Vec<(u32, u64)> = tot;
            let h = self.heuristic;
            keyed.sort_unstable_by(|a, b| {
                let (x, y) = (a.0 as usize, b.0 as usize);
                let by = |c: u8| match c {
                    b'T' => b.1.cmp(&a.1),
                    b'A' => inst.area[y].cmp(&inst.area[x]),
                    b'W' => inst.width[y].cmp(&inst.width[x]),
                    _ => inst.size[y].cmp(&inst.size[x]),
                };
                h.letters()
                    .iter()
                    .map(|&c| by(c))
                    .find(|o| o.is_ne())
                    .unwrap_or(core::cmp::Ordering::Equal)
                    .then(x.cmp(&y))
            });
            pre = keyed.into_iter().map(|(k, _)| k).collect();
        }
        self.search(part, &pre, 0, 0)
    }

    fn tick(&mut self) -> Option<St> {
        if !self.limits.tick() {
            return Some(St::Stopped);
        }
        if self.local_left == 0 {
            return Some(St::Aborted);
        }
        self.local_left -= 1;
        None
    }

    fn search(&mut self, part: &Part, pre: &[u32], last_off: u64, last_rank: usize) -> St {
        let inst = self.inst;
        let mut ord: Vec<(u64, usize)> = pre
            .iter()
            .enumerate()
            .filter(|&(_, &k)| self.off[k as usize] == NONE)
            .map(|(r, &k)| (self.min_off[k as usize], r))
            .collect();
        if ord.is_empty() {
            for &k in &part.bufs {
                self.sol[k as usize] = self.off[k as usize];
            }
            return St::Found;
        }
        if self.p.dynamic_ordering {
            ord.sort_unstable();
        }
        let min_height = ord
            .iter()
            .map(|&(o, r)| o.saturating_add(inst.size[pre[r] as usize]))
            .min()
            .unwrap_or(NONE);
        for &(o, r) in &ord {
            let b = pre[r] as usize;
            if self.p.canonical_only && (o < last_off || (o == last_off && r < last_rank)) {
                continue;
            }
            if self.p.check_dominance && o >= min_height {
                // A buffer could sit below this offset and never be disturbed: a gap.
                if self.p.dynamic_ordering {
                    break;
                }
                continue;
            }
            if o.saturating_add(inst.size[b]) > self.cap {
                continue;
            }
            // A node is one tried placement (its cost dominates the search).
            if let Some(st) = self.tick() {
                return st;
            }
            let (m_off, m_sec) = self.place(b, o);
            let st = if self.check(part, o) {
                if self.p.dynamic_decomposition {
                    self.decompose(part, pre, b, o, r)
                } else {
                    self.search(part, pre, o, r)
                }
            } else {
                St::NotFound
            };
            self.unplace(b, m_off, m_sec);
            if st != St::NotFound {
                return st;
            }
        }
        St::NotFound
    }

    fn place(&mut self, b: usize, o: u64) -> (usize, usize) {
        let inst = self.inst;
        let (m_off, m_sec) = (self.off_log.len(), self.sec_log.len());
        self.off[b] = o;
        let top = o + inst.size[b];
        self.affected.clear();
        for &j in inst.overlaps.row(b) {
            let j = j as usize;
            if self.off[j] != NONE || self.min_off[j] >= top {
                continue;
            }
            self.off_log.push((to_u32(j), self.min_off[j]));
            self.min_off[j] = inst.lift(j, top);
            if self.p.unallocated_floor {
                for s in inst.sec_lo[j]..inst.sec_hi[j] {
                    if !self.mark[s as usize] {
                        self.mark[s as usize] = true;
                        self.affected.push(s);
                    }
                }
            }
        }
        for s in inst.sec_lo[b] as usize..inst.sec_hi[b] as usize {
            self.sec_log.push((to_u32(s), self.floor[s]));
            self.floor[s] = self.floor[s].max(top);
            self.total[s] -= inst.size[b];
        }
        for a in 0..self.affected.len() {
            let s = self.affected[a] as usize;
            self.mark[s] = false;
            let m = inst
                .sections
                .row(s)
                .iter()
                .filter(|&&k| self.off[k as usize] == NONE)
                .map(|&k| self.min_off[k as usize])
                .min();
            if let Some(m) = m {
                if self.floor[s] < m {
                    self.sec_log.push((to_u32(s), self.floor[s]));
                    self.floor[s] = m;
                }
            }
        }
        (m_off, m_sec)
    }

    fn unplace(&mut self, b: usize, m_off: usize, m_sec: usize) {
        let inst = self.inst;
        while self.sec_log.len() > m_sec {
            if let Some((s, f)) = self.sec_log.pop() {
                self.floor[s as usize] = f;
            }
        }
        for s in inst.sec_lo[b] as usize..inst.sec_hi[b] as usize {
            self.total[s] += inst.size[b];
        }
        while self.off_log.len() > m_off {
            if let Some((j, m)) = self.off_log.pop() {
                self.min_off[j as usize] = m;
            }
        }
        self.off[b] = NONE;
    }

    /// Cross-section inference: in every section of `part`, the unplaced buffers stack above
    /// the section's floor (and above `o`, the monotonic floor) and clear pinned buffers.
    fn check(&self, part: &Part, o: u64) -> bool {
        for s in part.lo as usize..part.hi as usize {
            let need = if self.p.section_inference {
                self.total[s]
            } else {
                0
            };
            if need == 0 {
                continue;
            }
            let f = if self.p.monotonic_floor {
                self.floor[s].max(o)
            } else {
                self.floor[s]
            };
            if f >= self.cap {
                return false;
            }
            let mut avail = self.cap - f;
            for &(lo, hi) in self.inst.sec_pinned.row(s) {
                let (lo, hi) = (lo.max(f), hi.min(self.cap));
                if hi > lo {
                    avail = avail.saturating_sub(hi - lo);
                }
            }
            if need > avail {
                return false;
            }
        }
        true
    }

    /// Dynamic temporal decomposition: placing `b` may leave no unplaced buffer across some
    /// section boundaries; the two sides are then independent and searched one by one.
    fn decompose(&mut self, part: &Part, pre: &[u32], b: usize, o: u64, r: usize) -> St {
        // Sub-partitions store only their own buffers at their leaves: store `b` now.
        self.sol[b] = o;
        let (lo, hi) = (self.inst.sec_lo[b] as usize, self.inst.sec_hi[b] as usize);
        let mut cutpoints = alloc::vec![part.lo];
        for s in lo..hi - 1 {
            self.cuts[s] -= 1;
            if self.cuts[s] == 0 {
                cutpoints.push(to_u32(s + 1));
            }
        }
        let st = if cutpoints.len() == 1 {
            self.search(part, pre, o, r)
        } else {
            cutpoints.push(part.hi);
            self.solve_windows(part, &cutpoints)
        };
        for s in lo..hi - 1 {
            self.cuts[s] += 1;
        }
        st
    }
}
