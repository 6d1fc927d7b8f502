//! Level 2: nesting whole blocks inside larger ones by lifetime (GE
//! `BlockMemAssigner::ReuseBlocksByLifeTime`, `AddLifeReuseBlock`, `CanBlockLifeReuse`,
//! `CanIntervalLifeReuse`, block_mem_assigner.cc / memory_block.cc).
//!
//! Blocks are sorted largest `AlignSize` first (ties: fewer members, then earlier begin). Each
//! block that is not yet a child is a parent in turn and is offered every later block that is
//! neither a child nor a parent. A candidate is refused if either is not reusable, or gear or
//! memory type differ, or the nesting would be deeper than 100. It must be lifetime-disjoint
//! from the parent: the block test (same stream: one ends before the other begins; different
//! streams: a data-edge dependency orders them, see [`super::streams`]), or, on the same
//! stream, the member test, which moves the candidate's members that cross the block's into
//! a clone block placed right after the candidate ([`super::order`]). Then it is offered to
//! the block's children (depth-first, recursively), and otherwise appended at the block's
//! cursor if `cursor + AlignSize(child) <= AlignSize(parent) + slack`. As in GE
//! (memory_block.cc `AddLifeReuseBlock`), the member test runs at every block the walk
//! visits, before that block's children and its size check, and its splits stay even when
//! the walk then finds no place: the walk goes on with the members left.
//!
//! # Speed
//! The pairs are GE's, but most are refused without a test, by bounds that only skip
//! candidates `find` would refuse (so the plan is the same; the tests compare it with the old
//! one-scan-per-parent version kept in `reference.rs`): each subtree that starts a chain (see
//! below) keeps a [`Summary`] of the room left in its blocks (the largest few by name, a
//! bound for the rest, blocks below the depth limit left out), so a candidate larger than all
//! room, or crossing the lifetimes of the only blocks with room, skips the subtree; the
//! candidate loop reads a compact copy of each block ([`Lite`]) and, when all members of
//! every block have one size, jumps over the candidates larger than the parent's room.
//!
//! Nestings are deep (often 40 levels, up to GE's 100) and mostly one child per block, and a
//! taken candidate used to cost a recursive call per level on the way down and a summary
//! update per level on the way up. The search now walks a block's chain of first children
//! (the path GE's depth-first order takes first) from a contiguous copy of their spans, and
//! stops only at blocks whose lifetimes overlap the candidate's (member test) or that are on
//! another stream; only chain heads keep a summary, so attaching a block updates one per
//! chain above it. `ge-binary-block` on 100k generated buffers: 6.2 s at first, 0.23 s with
//! the summaries, 0.13 s with the chains (1k: 2.07 → 0.83 ms).
//!
//! GE's split order (rule 3 of issue 13: members split at every block a walk visits, before
//! its children and its size check) made walks of candidates too large to nest necessary
//! again (~320k walks at 100k buffers, ~40 chain links each, ~3 member tests per walk).
//! What keeps them cheap, all without changing a plan: the member tests read compact copies
//! of the member lifetimes kept per block in member order ([`Span`]); a chain keeps its
//! spans apart for the scan down and the room of each run of [`GROUP`] links for the way
//! up; the candidate loop makes one range query of its set per pass rather than one per
//! element; the covered lifetimes ([`Covered`]) are a sorted list searched by halving while
//! short (a tree once long), and a candidate that may nest is walked without that test.
//!
//! Of those walks two thirds changed nothing, and 1.7M of 2M member tests found no
//! crossing: a candidate crosses ~5 of the ~500 blocks of a parent's subtree. So the blocks
//! it crosses are now looked up first, in buckets of steps ([`Crossers`]): the way down a
//! chain goes from one of them to the next (every other block keeps all members), and a
//! subtree without room is searched only if one of them is inside (its head is marked).
//! `ge-block` at 100k buffers: 2770M → 2254M instructions (`greedy-size-first-fit`: 1241M).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::cell::Cell;
use core::cmp::Reverse;
use core::ops::Bound::{Excluded, Included, Unbounded};

use super::block::BlockData;
use super::crossers::Crossers;
use super::order::{self, Key};
use super::skip::Skip;
use super::streams::Deps;
use super::units::{UnitId, Units};

/// GE's limit on nesting depth (`AddLifeReuseBlock`).
pub(crate) const MAX_DEPTH: usize = 100;

struct Nester<'a> {
    blocks: &'a mut Vec<BlockData>,
    units: &'a Units,
    deps: &'a Deps,
    slack: u64,
    align: u64,
    /// What the search reads and writes of each block, one cache line each.
    node: Vec<Node>,
    /// Bounds of [`Nester::cap`] over each block's subtree ([`Summary`]), kept for the
    /// blocks that start a chain (the only ones read): extended when a block is attached
    /// below, rebuilt when [`Nester::find`] searched the whole subtree (a cell, so the search
    /// stays a read of the nesting).
    sub_cap: Vec<Cell<Summary>>,
    /// What the candidate loop reads of each block, kept apart from the blocks so that a
    /// pass over thousands of candidates stays in cache.
    lite: Vec<Lite>,
    /// The chains ([`Link`]) of more than one block; a block without children ends its
    /// chain.
    chains: Vec<Chain>,
    /// Each block's chain and position in it; `(usize::MAX, 0)` for a block alone in its
    /// chain (no parent whose first child it is, no children).
    at: Vec<(usize, usize)>,
    /// First start and last end over each block's subtree, kept for the blocks that start a
    /// chain: a candidate whose span misses it cannot be split there.
    hull: Vec<(u64, u64)>,
    /// The member lifetimes of every block in the current parent's subtree, merged, by
    /// `(stream, first step)` → last step: a walk splits a candidate only at a block of its
    /// stream one of whose members one of its own crosses. Kept only while
    /// [`Nester::crossers`] is off.
    covered: Covered,
    /// Each block's place in the list ([`order`]).
    keys: Vec<Key>,
    /// The lifetimes of each block's members, in member order.
    bspan: Vec<Vec<Span>>,
    /// The blocks of the current parent's subtree that a candidate crosses, when on (else
    /// [`Nester::covered`] says whether there is one).
    crossers: Crossers,
    /// The current parent.
    root: usize,
}

/// The lifetimes of `members`.
fn spans_of(members: &[UnitId], units: &Units) -> Vec<Span> {
    let mut v = Vec::with_capacity(members.len());
    set_spans(&mut v, members, units);
    v
}

/// Makes `v` the lifetimes of `members`, reusing its memory.
fn set_spans(v: &mut Vec<Span>, members: &[UnitId], units: &Units) {
    v.clear();
    v.extend(
        members
            .iter()
            .filter_map(|&u| units.list.get(u))
            .map(|u| Span {
                start: u.start,
                end: u.end,
            }),
    );
}

/// A member's first and last step live: the member tests read these compact copies, kept
/// in member order per block ([`Nester::bspan`]), so their binary searches stay in cache.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
}

/// The candidate during one `AddLifeReuseBlock` walk: GE's member test moves the members
/// crossing a visited block's into a clone for good (memory_block.cc `CanIntervalLifeReuse`),
/// so the walk goes on with the members left, whether or not it finds a place.
struct Walk {
    /// The members left, `None` while all of the block's.
    members: Option<Vec<UnitId>>,
    /// Their lifetimes.
    spans: Vec<Span>,
    /// The [`Cand`] of `members` (without the members).
    stat: Cand<'static>,
    /// The members each split moved out, in order (one clone each).
    removed: Vec<Vec<UnitId>>,
    /// [`Nester::crossers`] holds the blocks the candidate's members (all of the block's)
    /// cross.
    fast: bool,
}

impl Walk {
    fn new(k0: &Cand<'_>) -> Self {
        Walk {
            members: None,
            spans: Vec::new(),
            stat: Cand {
                units: &[],
                spans: &[],
                ..*k0
            },
            removed: Vec::new(),
            fast: false,
        }
    }

    /// The candidate as it is now.
    fn current<'m>(&'m self, k0: &Cand<'m>) -> Cand<'m> {
        match &self.members {
            None => *k0,
            Some(v) => Cand {
                units: v,
                spans: &self.spans,
                ..self.stat
            },
        }
    }

    /// Keeps only `kept` (a subsequence of the members now); the rest go to a clone.
    fn narrow(&mut self, kept: Vec<UnitId>, k0: &Cand<'_>, units: &Units) -> Option<()> {
        let k = Cand::new(&kept, k0.stream, units)?;
        let stat = Cand {
            units: &[],
            spans: &[],
            ..k
        };
        let mut removed = Vec::new();
        let mut ki = 0;
        for &u in self.current(k0).units {
            if kept.get(ki) == Some(&u) {
                ki += 1;
            } else {
                removed.push(u);
            }
        }
        self.stat = stat;
        self.removed.push(removed);
        set_spans(&mut self.spans, &kept, units);
        self.members = Some(kept);
        Some(())
    }
}

/// A block in a chain: a block, its first child, that one's first child, and so on, which
/// is the path GE's depth-first search takes first. [`Nester::find`] walks a chain through
/// these copies of the spans.
#[derive(Debug, Clone, Copy)]
struct Link {
    start: u64,
    end: u64,
    /// Room for one more child, slack included (0 if `size + slack` overflows); kept up to
    /// date by [`Nester::attach`], so the way back up reads no [`Node`].
    cap: u64,
    stream: u32,
    /// More than one child.
    many: bool,
    id: usize,
}

impl Link {
    fn of(n: &Node, id: usize, slack: u64) -> Self {
        Link {
            start: n.start,
            end: n.end,
            cap: n
                .size
                .checked_add(slack)
                .map_or(0, |l| l.saturating_sub(n.cursor)),
            stream: n.stream,
            many: n.many,
            id,
        }
    }
}

/// At most this many blocks crossed, and a walk down a chain goes from one to the next
/// ([`Nester::next_crossed`]) rather than scanning the links' spans.
const FEW_CROSSED: usize = 32;

/// Links per [`Group`].
const GROUP: usize = 8;

/// What [`Nester::find`] needs to know of [`GROUP`] consecutive links of a chain to pass them
/// all at once on the way up: links without other children whose room is below the
/// candidate need no look.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// The largest [`Link::cap`].
    cap: u64,
    /// A link with more than one child.
    many: bool,
}

/// A chain's links, a [`Group`] for each run of [`GROUP`] of them (the last maybe
/// shorter), and for the way down the links' spans apart (a scan for the next one the
/// candidate's span meets reads only these) with their stream if they have one.
#[derive(Debug, Clone, Default)]
struct Chain {
    links: Vec<Link>,
    groups: Vec<Group>,
    spans: Vec<(u64, u64)>,
    stream: Option<u32>,
}

impl Chain {
    fn push(&mut self, l: Link) {
        self.stream = if self.links.is_empty() || self.stream == Some(l.stream) {
            Some(l.stream)
        } else {
            None
        };
        self.links.push(l);
        self.spans.push((l.start, l.end));
        self.regroup(self.links.len() - 1);
    }

    /// Replaces the link at `pos` (same block: new cap, maybe a second child).
    fn set(&mut self, pos: usize, l: Link) {
        if let Some(x) = self.links.get_mut(pos) {
            *x = l;
            self.regroup(pos);
        }
    }

    /// Recomputes the group of the link at `pos`.
    fn regroup(&mut self, pos: usize) {
        let g = pos / GROUP;
        let from = g * GROUP;
        let links = self
            .links
            .get(from..(from + GROUP).min(self.links.len()))
            .unwrap_or(&[]);
        if links.is_empty() {
            return;
        }
        let mut grp = Group {
            cap: 0,
            many: false,
        };
        for l in links {
            grp.cap = grp.cap.max(l.cap);
            grp.many |= l.many;
        }
        if let Some(x) = self.groups.get_mut(g) {
            *x = grp;
        } else {
            self.groups.push(grp);
        }
    }
}

/// A block's first start, last end, smallest and largest member, stream, and whether it has
/// one member.
#[derive(Debug, Clone, Copy)]
struct Lite {
    start: u64,
    end: u64,
    min: u64,
    max: u64,
    stream: u32,
    one: bool,
}

/// What [`Nester::find`] and [`Nester::attach`] read of a block, in one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Node {
    /// First start and last end.
    start: u64,
    end: u64,
    size: u64,
    cursor: u64,
    /// Upper bound of `size + slack` anywhere in the subtree (kept for chain heads only).
    room: u64,
    /// Parent, `usize::MAX` for none.
    up: usize,
    /// First child, `usize::MAX` for none; all children are in the block.
    first: usize,
    stream: u32,
    /// Nesting depth, 1 for a block without a parent (saturating).
    depth: u16,
    /// More than one child.
    many: bool,
}

impl Node {
    fn of(b: &BlockData, units: &Units, slack: u64) -> Self {
        Node {
            start: b.begin(units),
            end: b.end(units),
            size: b.size,
            cursor: b.cursor,
            room: b.size.saturating_add(slack),
            up: b.parent.unwrap_or(usize::MAX),
            first: b.children.first().copied().unwrap_or(usize::MAX),
            stream: b.stream,
            depth: 1,
            many: b.children.len() > 1,
        }
    }

    /// Room for one more child, slack included (see [`Nester::cap`]).
    fn cap(&self, slack: u64) -> u64 {
        self.size.saturating_add(slack).saturating_sub(self.cursor)
    }
}

impl Lite {
    fn of(b: &BlockData, units: &Units) -> Self {
        let sizes = || {
            b.units
                .iter()
                .filter_map(|&u| units.list.get(u))
                .map(|u| u.size)
        };
        Lite {
            start: b.begin(units),
            end: b.end(units),
            min: sizes().min().unwrap_or(u64::MAX),
            max: sizes().max().unwrap_or(0),
            stream: b.stream,
            one: b.units.len() == 1,
        }
    }
}

/// The members of a candidate that [`Nester::find`] carries down one level (all of the
/// block's, or those the blocks above kept), with what it reads of them, computed once.
#[derive(Debug, Clone, Copy)]
struct Cand<'m> {
    units: &'m [UnitId],
    /// Their lifetimes.
    spans: &'m [Span],
    /// First start and last end.
    start: u64,
    end: u64,
    /// Smallest and largest member.
    min: u64,
    max: u64,
    stream: u32,
}

impl<'m> Cand<'m> {
    /// `None` if a member is unknown at either end (so no block can take it).
    fn new(members: &'m [UnitId], stream: u32, units: &Units) -> Option<Self> {
        let list = &units.list;
        let start = list.get(*members.first()?)?.start;
        let end = list.get(*members.last()?)?.end;
        let mut min = u64::MAX;
        let mut max = 0;
        for s in members.iter().filter_map(|&u| list.get(u)).map(|u| u.size) {
            min = min.min(s);
            max = max.max(s);
        }
        Some(Cand {
            units: members,
            spans: &[],
            start,
            end,
            min,
            max,
            stream,
        })
    }
}

/// Runs level 2 on `blocks` (level-1 output, which it may extend with split-off clones).
/// `slack` is GE's 512 B allowance past the parent's size (see the module docs of
/// [`super`] for why it follows the block alignment); `align` is the block alignment.
/// Returns the number of member splits and every block's place in the final list.
pub(crate) fn reuse_by_lifetime(
    blocks: &mut Vec<BlockData>,
    units: &Units,
    deps: &Deps,
    slack: u64,
    align: u64,
) -> (usize, Vec<Key>) {
    let keys = order::initial(blocks, units);
    let mut groups: BTreeMap<(u32, Option<u64>), BTreeSet<Key>> = BTreeMap::new();
    for (id, b) in blocks.iter().enumerate() {
        if b.reusable || b.host.is_some() {
            if let Some(&k) = keys.get(id) {
                groups.entry((b.mem, b.gear)).or_default().insert(k);
            }
        }
    }
    let mut node: Vec<Node> = blocks.iter().map(|b| Node::of(b, units, slack)).collect();
    // Level 1 nests nothing, so this is 1 for all; counted anyway, up to past the limit.
    for (b, nd) in node.iter_mut().enumerate() {
        let mut d: u16 = 1;
        let mut a = blocks.get(b).and_then(|x| x.parent);
        while let Some(x) = a {
            d = d.saturating_add(1);
            if usize::from(d) > MAX_DEPTH {
                break;
            }
            a = blocks.get(x).and_then(|y| y.parent);
        }
        nd.depth = d;
    }
    let sub_cap = blocks
        .iter()
        .enumerate()
        .map(|(id, b)| {
            Cell::new(Summary::one(
                b.size.saturating_add(slack).saturating_sub(b.cursor),
                id,
            ))
        })
        .collect();
    let lite = blocks.iter().map(|b| Lite::of(b, units)).collect();
    // Level 1 nests nothing, so each block is a chain; built in general anyway.
    let mut chains: Vec<Chain> = Vec::new();
    let mut at = alloc::vec![(usize::MAX, 0); blocks.len()];
    for (b, blk) in blocks.iter().enumerate() {
        let first_child = blk
            .parent
            .and_then(|p| blocks.get(p))
            .and_then(|pb| pb.children.first())
            == Some(&b);
        if first_child || blk.children.is_empty() {
            continue;
        }
        let mut chain = Chain::default();
        let mut x = Some(b);
        while let (Some(y), Some(nd)) = (x, x.and_then(|y| node.get(y))) {
            if let Some(a) = at.get_mut(y) {
                *a = (chains.len(), chain.links.len());
            }
            chain.push(Link::of(nd, y, slack));
            x = blocks.get(y).and_then(|yb| yb.children.first().copied());
        }
        chains.push(chain);
    }
    // Level 1 nests nothing, so each subtree is its block.
    let hull = node.iter().map(|n| (n.start, n.end)).collect();
    let bspan = blocks.iter().map(|b| spans_of(&b.units, units)).collect();
    let last = units.list.iter().map(|u| u.end).max().unwrap_or(0);
    let crossers = Crossers::new(last, units.list.len());
    let mut n = Nester {
        blocks,
        units,
        deps,
        slack,
        align,
        node,
        sub_cap,
        lite,
        chains,
        at,
        hull,
        keys,
        covered: Covered::default(),
        bspan,
        crossers,
        root: usize::MAX,
    };
    let mut splits = 0;
    for set in groups.values_mut() {
        splits += n.run(set);
    }
    (splits, n.keys)
}

/// How a candidate may share a block's memory.
enum Fit {
    /// Lifetime-disjoint as a whole.
    Whole,
    /// Only these members are (the others cross the block's members).
    Part(Vec<UnitId>),
}

impl Nester<'_> {
    /// GE's loop: each block that is not a child is a parent in turn and is offered every
    /// later block of the set (as it is then: clones of split blocks join it right after the
    /// block they came from, nested blocks leave it).
    ///
    /// Candidates whose walk can change nothing are skipped without one, which changes
    /// nothing: a walk nests a candidate only if `cursor + max(kept) <= size + slack` at its
    /// target, and `max(kept)` is at least its smallest member, so a candidate whose smallest
    /// member exceeds the largest `size + slack - cursor` of the subtree (its [`Summary`]
    /// bounds it; blocks below the depth limit, never a target, left out) is nested nowhere
    /// whatever its lifetime; and a walk splits a candidate only at a block of its stream
    /// whose span its own crosses, so one of one member, or whose span misses the subtree's
    /// ([`Nester::hull`]), keeps its members. When every block's members have one size
    /// (level 1 with exact size classes, and clones of such blocks), the smallest member is
    /// the block's size, the set's order, so the candidates too large to nest are a run of
    /// the set: one range query jumps over them, and only those of several members
    /// (`multi`) are walked for their splits.
    fn run(&mut self, set: &mut BTreeSet<Key>) -> usize {
        let uniform = set.iter().all(|k| self.uniform(k.2));
        let mut multi: BTreeSet<Key> = set
            .iter()
            .filter(|k| self.lite.get(k.2).is_some_and(|l| !l.one))
            .copied()
            .collect();
        // The continuous blocks an ordinary parent may move into (GE's reverse case).
        let cont: BTreeSet<Key> = set
            .iter()
            .filter(|k| {
                self.blocks
                    .get(k.2)
                    .is_some_and(|b| b.continuous.is_some() && b.host.is_some())
            })
            .copied()
            .collect();
        // The one-member candidates by lifetime, to jump over those the parent refuses.
        let mut skip = Skip::new();
        for k in set.iter() {
            if let Some(l) = self.lite.get(k.2).filter(|l| l.one) {
                skip.insert(*k, l.start, l.end);
            }
        }
        let mut splits = 0;
        let mut pos: Option<Key> = None;
        loop {
            let next = match pos {
                None => set.first().copied(),
                Some(k) => set.range((Excluded(k), Unbounded)).next().copied(),
            };
            let Some(pk) = next else { break };
            pos = Some(pk);
            let p = pk.2;
            if self.node.get(p).is_none_or(|n| n.up != usize::MAX) {
                continue;
            }
            if self.blocks.get(p).is_some_and(|b| b.host.is_some()) {
                for c in hosted(self.blocks, self.units, self.deps, set, pk) {
                    self.attach_flat(c, p);
                    if let Some(&k) = self.keys.get(c) {
                        set.remove(&k);
                        multi.remove(&k);
                        skip.remove(&k);
                    }
                }
                continue;
            }
            // GE's reverse case: offered this block before it takes a child, p moves into it
            // and takes nothing more; candidates after it are not looked at meanwhile.
            let mut reverse = self.reverse_target(&cont, pk);
            // p's span when its members cover it without a gap ([`skip`]).
            let gate = self.solid_span(p);
            self.covered.clear();
            self.crossers.clear();
            self.root = p;
            self.cover(p);
            let mut ck = pk;
            loop {
                let fits = self.sum(p).max();
                // Keys of blocks larger than `fits` sort before `(Reverse(fits), 0, 0)`.
                let floor = (Reverse(fits), 0, 0);
                let jump = uniform && floor > ck;
                let mut taken = None;
                // The candidates jumped over nest nowhere; those of several members may
                // still split.
                if jump {
                    let mut from = ck;
                    // One pass over the range until a walk changes something.
                    loop {
                        let mut event = None;
                        for &k in multi.range((Excluded(from), Excluded(floor))) {
                            if reverse.is_some_and(|r| k >= r) {
                                break;
                            }
                            if let Some(e) = self.offer(p, k.2, fits) {
                                event = Some((k, e));
                                break;
                            }
                        }
                        let Some((k, (t, walk))) = event else { break };
                        from = k;
                        splits += self.apply(set, &mut multi, &mut skip, p, k, walk);
                        if let Some(t) = t {
                            taken = Some((k, t));
                            break;
                        }
                    }
                }
                let mut from = if jump { Included(floor) } else { Excluded(ck) };
                while taken.is_none() {
                    // Most walks change nothing, so one pass over the set runs until one
                    // does.
                    let mut event = None;
                    if let Some((ps, pe)) = gate {
                        // Only the candidates p's gate may let through: those of several
                        // members and those whose lifetime misses p's.
                        let mut at = from;
                        loop {
                            let one = skip.next_missing(at, ps, pe);
                            let several = multi.range((at, Unbounded)).next().copied();
                            let Some(k) = one.into_iter().chain(several).min() else {
                                break;
                            };
                            if reverse.is_some_and(|r| k >= r) {
                                break;
                            }
                            if let Some(e) = self.offer(p, k.2, fits) {
                                event = Some((k, e));
                                break;
                            }
                            at = Excluded(k);
                        }
                    } else {
                        for &k in set.range((from, Unbounded)) {
                            if reverse.is_some_and(|r| k >= r) {
                                break;
                            }
                            if let Some(e) = self.offer(p, k.2, fits) {
                                event = Some((k, e));
                                break;
                            }
                        }
                    }
                    let Some((k, (t, walk))) = event else { break };
                    splits += self.apply(set, &mut multi, &mut skip, p, k, walk);
                    taken = t.map(|t| (k, t));
                    from = Excluded(k);
                }
                let Some((k, target)) = taken else { break };
                ck = k;
                reverse = None;
                self.attach(k.2, target);
                set.remove(&k);
                multi.remove(&k);
                skip.remove(&k);
            }
            if let Some(r) = reverse {
                self.attach_flat(p, r.2);
                set.remove(&pk);
                multi.remove(&pk);
                skip.remove(&pk);
            }
        }
        splits
    }

    /// Block `p`'s first and last step when its members' lifetimes cover every step between
    /// them (in member order, each starting at most one step after the ones before end):
    /// then a one-member candidate meeting that span crosses a member, so GE refuses it at
    /// `p` on any stream (`CanBlockLifeReuse` needs disjoint lifetimes across streams,
    /// `CanIntervalLifeReuse` a member crossing none on the same stream).
    fn solid_span(&self, p: usize) -> Option<(u64, u64)> {
        let spans = self.bspan.get(p)?;
        let n = self.node.get(p)?;
        let first = spans.first()?;
        let mut reach = first.end;
        let mut prev = first.start;
        for m in spans.get(1..).unwrap_or(&[]) {
            if m.start < prev || m.start > reach.saturating_add(1) {
                return None;
            }
            prev = m.start;
            reach = reach.max(m.end);
        }
        (first.start == n.start && reach == n.end).then_some((n.start, n.end))
    }

    /// The first of the continuous blocks `cont` after the parent at `pk` that it would
    /// move into ([`moves_into`]). Only blocks sorted by the parent's size can take it.
    fn reverse_target(&self, cont: &BTreeSet<Key>, pk: Key) -> Option<Key> {
        let size = self.blocks.get(pk.2)?.size;
        let (lo, hi) = ((Reverse(size), 0, 0), (Reverse(size), u64::MAX, usize::MAX));
        if hi <= pk {
            return None;
        }
        let from = if lo > pk { Included(lo) } else { Excluded(pk) };
        cont.range((from, Included(hi)))
            .find(|k| moves_into(self.blocks, self.units, self.deps, pk.2, k.2))
            .copied()
    }

    /// Keeps the splits of `walk` (candidate at `k`, parent `p`): the candidate keeps the
    /// members left, each removed set becomes a clone placed after it ([`order`]). Returns
    /// the number of clones.
    fn apply(
        &mut self,
        set: &mut BTreeSet<Key>,
        multi: &mut BTreeSet<Key>,
        skip: &mut Skip,
        p: usize,
        k: Key,
        walk: Walk,
    ) -> usize {
        let clones = self.split(k.2, walk);
        if clones.is_empty() {
            return 0;
        }
        if let Some(l) = self.lite.get(k.2).filter(|l| l.one) {
            if multi.remove(&k) {
                skip.insert(k, l.start, l.end);
            }
        }
        let psize = self.blocks.get(p).map_or(0, |b| b.size);
        for ck in order::clone_keys(set, k, psize, &clones, self.blocks, self.units) {
            set.insert(ck);
            match self.lite.get(ck.2) {
                Some(l) if l.one => skip.insert(ck, l.start, l.end),
                Some(_) => {
                    multi.insert(ck);
                }
                None => {}
            }
            if let Some(x) = self.keys.get_mut(ck.2) {
                *x = ck;
            }
        }
        clones.len()
    }

    /// Offers candidate `c` to parent `p`, whose subtree's caps are at most `fits`: GE's
    /// walk, where it goes and what it split off, or `None` when the walk changed nothing.
    /// The tests before the walk only skip candidates it would leave as they are; the first
    /// ones read the compact [`Lite`] copy, not the block.
    fn offer(&mut self, p: usize, c: usize, fits: u64) -> Option<(Option<usize>, Walk)> {
        let lite = *self.lite.get(c)?;
        // One member: no split, so too large is the end of it (read from the copy).
        if lite.one && lite.min > fits {
            return None;
        }
        let cand = self.blocks.get(c)?;
        if cand.parent.is_some() || !cand.children.is_empty() || !cand.reusable {
            return None;
        }
        // With the index on, the blocks `c` crosses are found once, where first needed.
        let mut found = false;
        let too_large = lite.min > fits;
        if too_large && !self.may_split(p, c, &lite, &mut found) {
            return None;
        }
        // The summary of p's subtree (p included) may show that no block there can take
        // the candidate.
        let sum = self.sum(p);
        if lite.one && self.refused_lite(&sum, &lite) {
            return None;
        }
        let cand = self.blocks.get(c)?;
        // GE tests reusability, gear and memory type at every block of the search; p's
        // whole subtree comes from one set (one memory type and gear, reusable), so once
        // here is the same.
        let pb = self.blocks.get(p)?;
        if !pb.reusable || pb.gear != cand.gear || pb.mem != cand.mem {
            return None;
        }
        if cand.units.is_empty() {
            return None;
        }
        let k = Cand {
            units: &cand.units,
            spans: self.bspan.get(c)?,
            start: lite.start,
            end: lite.end,
            min: lite.min,
            max: lite.max,
            stream: lite.stream,
        };
        let refused = !too_large && self.refused_by(&sum, &k);
        let k = Cand {
            units: &[],
            spans: &[],
            ..k
        };
        // (`too_large` passed here only if it may split.)
        if refused && !self.may_split(p, c, &lite, &mut found) {
            return None;
        }
        let fast = self.crossers.on();
        if fast {
            if !found {
                self.find_crossed(c, lite.stream, p);
            }
            let (node, at, chains) = (&self.node, &self.at, &self.chains);
            self.crossers.mark_up(
                |y| {
                    at.get(y)
                        .and_then(|&(ci, _)| chains.get(ci))
                        .and_then(|ch| ch.links.first())
                        .map_or(y, |l| l.id)
                },
                |y| node.get(y).map_or(usize::MAX, |n| n.up),
            );
        }
        let cand = self.blocks.get(c)?;
        let k = Cand {
            units: &cand.units,
            spans: self.bspan.get(c)?,
            ..k
        };
        let mut walk = Walk::new(&k);
        walk.fast = fast;
        let t = self.find(p, &k, 1, &mut walk);
        (t.is_some() || !walk.removed.is_empty()).then_some((t, walk))
    }

    /// Whether the walk of candidate `c` (its copy `lite`) may split it in `p`'s subtree:
    /// several members, and one crosses a member of a block there (read only where it
    /// decides: a candidate that may nest by size and by the summary is walked either way).
    /// With the index on, `found` tells whether [`Crossers::find`] ran for `c`.
    fn may_split(&mut self, p: usize, c: usize, lite: &Lite, found: &mut bool) -> bool {
        if lite.one
            || !self
                .hull
                .get(p)
                .is_none_or(|&(s, e)| lite.start <= e && s <= lite.end)
            || !self.hull_meets(p, self.bspan.get(c).map_or(&[], |v| v))
        {
            return false;
        }
        if !self.crossers.on() {
            return self.meets_covered(c, lite.stream, p);
        }
        if !*found {
            self.find_crossed(c, lite.stream, p);
            *found = true;
        }
        self.crossers.any()
    }

    /// [`Crossers::find`] for the members of candidate `c` on stream `st` within `p`'s
    /// subtree span.
    fn find_crossed(&mut self, c: usize, st: u32, p: usize) {
        let Some(&(hs, he)) = self.hull.get(p) else {
            return;
        };
        let cs = self.bspan.get(c).map_or(&[][..], |v| v);
        let i = cs.partition_point(|m| m.end < hs);
        let rest = cs.get(i..).unwrap_or(&[]);
        let near = rest
            .get(..rest.partition_point(|m| m.start <= he))
            .unwrap_or(&[]);
        self.crossers
            .find(near.iter().map(|m| (m.start, m.end)), st, self.blocks.len());
    }

    /// Adds block `b` (not yet in the current parent's subtree) to [`Nester::crossers`],
    /// or to [`Nester::covered`] when that is off; when this turns it off, all of the
    /// subtree to [`Nester::covered`].
    fn cover(&mut self, b: usize) {
        let Some(blk) = self.blocks.get(b) else {
            return;
        };
        if self.crossers.on() {
            for m in blk.units.iter().filter_map(|&u| self.units.list.get(u)) {
                self.crossers.add(b, blk.stream, m.start, m.end);
            }
            if self.crossers.on() {
                return;
            }
            self.covered.clear();
            let mut stack = alloc::vec![self.root];
            while let Some(x) = stack.pop() {
                if x != b {
                    self.cover_merged(x);
                }
                if let Some(xb) = self.blocks.get(x) {
                    stack.extend_from_slice(&xb.children);
                }
            }
        }
        self.cover_merged(b);
    }

    /// Adds block `b`'s members to [`Nester::covered`].
    fn cover_merged(&mut self, b: usize) {
        let Some(blk) = self.blocks.get(b) else {
            return;
        };
        let stream = blk.stream;
        let members = blk.units.iter().filter_map(|&u| self.units.list.get(u));
        if let Some(t) = self.covered.tree.as_mut() {
            for m in members {
                cover_tree(t, stream, m.start, m.end);
            }
            return;
        }
        let v = &mut self.covered.flat;
        for m in members {
            let (mut s, mut e) = (m.start, m.end);
            // Merge with the intervals it meets: the last starting at or before `e`, and
            // earlier ones while they reach `s` (a run ending at `to`; they are disjoint, so
            // a merged end starts no new one).
            let to = v.partition_point(|x| x.0 <= (stream, e));
            let mut from = to;
            while let Some(&((st, a), z)) = from.checked_sub(1).and_then(|i| v.get(i)) {
                if st != stream || z < s {
                    break;
                }
                s = s.min(a);
                e = e.max(z);
                from -= 1;
            }
            if from < to {
                if let Some(x) = v.get_mut(from) {
                    *x = ((stream, s), e);
                }
                v.drain(from + 1..to);
            } else {
                v.insert(from, ((stream, s), e));
            }
        }
        // A long list costs a long move per insertion: a tree from here on.
        if v.len() > FLAT_COVERED {
            self.covered.tree = Some(v.drain(..).collect());
        }
    }

    /// Whether a member of candidate `c` within `p`'s subtree span crosses a member of a
    /// block of the current parent's subtree on its stream ([`Nester::covered`]).
    fn meets_covered(&self, c: usize, st: u32, p: usize) -> bool {
        let Some(&(hs, he)) = self.hull.get(p) else {
            return true;
        };
        let Some(cs) = self.bspan.get(c) else {
            return true;
        };
        let i = cs.partition_point(|m| m.end < hs);
        let rest = cs.get(i..).unwrap_or(&[]);
        let near = rest
            .get(..rest.partition_point(|m| m.start <= he))
            .unwrap_or(&[]);
        // A member crosses the covered interval that starts last at or before its end, if
        // any. From the last member back, those intervals come earlier and earlier, so each
        // search is of what is left before the last one found.
        if let Some(t) = &self.covered.tree {
            return meets_tree(t, st, near);
        }
        let flat = &self.covered.flat;
        let mut upto = flat.len();
        for m in near.iter().rev() {
            let head = flat.get(..upto).unwrap_or(&[]);
            upto = head.partition_point(|x| x.0 <= (st, m.end));
            match upto.checked_sub(1).and_then(|j| head.get(j)) {
                // No interval starts at or before this member's end, nor an earlier one's.
                None => return false,
                Some(&((s2, _), _)) if s2 != st => return false,
                Some(&(_, z)) if z >= m.start => return true,
                Some(_) => {}
            }
        }
        false
    }

    /// Whether a member of `members` (sorted, disjoint) meets the span of `b`'s subtree
    /// (`b` starts a chain): otherwise no block there crosses one, so none splits them.
    fn hull_meets(&self, b: usize, members: &[Span]) -> bool {
        let Some(&(s, e)) = self.hull.get(b) else {
            return true;
        };
        let i = members.partition_point(|m| m.end < s);
        members.get(i).is_some_and(|m| m.start <= e)
    }

    /// The [`Summary`] of block `b`'s subtree.
    fn sum(&self, b: usize) -> Summary {
        self.sub_cap.get(b).map_or(Summary::UNKNOWN, Cell::get)
    }

    /// [`Self::refused_by`] for a candidate of one member, from its [`Lite`] copy.
    fn refused_lite(&self, sum: &Summary, l: &Lite) -> bool {
        if sum.rest >= l.min {
            return false;
        }
        sum.best.iter().all(|&(cap, t)| {
            cap < l.min
                || self.lite.get(t).is_some_and(|tl| {
                    tl.stream == l.stream
                        && l.start <= tl.end
                        && tl.start <= l.end
                        && self
                            .bspan
                            .get(t)
                            .is_some_and(|tb| crosses(tb, l.start, l.end))
                })
        })
    }

    /// Whether all members of block `b` have one size.
    fn uniform(&self, b: usize) -> bool {
        let Some(blk) = self.blocks.get(b) else {
            return true;
        };
        let list = &self.units.list;
        blk.units
            .iter()
            .all(|&u| list.get(u).map(|m| m.size) == Some(blk.size))
    }

    /// Room for one more child in block `b`, slack included: an upper bound on the size of
    /// a child [`Self::find`] can place there.
    fn cap(&self, b: usize) -> u64 {
        self.node.get(b).map_or(0, |x| x.cap(self.slack))
    }

    /// GE `AddLifeReuseBlock` of candidate `k0` (its members now in `walk`) on block `q` at
    /// nesting `depth0`: the new parent, if any; the member splits on the way stay in
    /// `walk` either way.
    ///
    /// GE's depth-first search (the block's own test, then its children in order, then the
    /// block itself) goes down the first children first, so this walks `q`'s chain
    /// ([`Link`]) down, as long as the blocks pass [`Self::fit`] (on the same stream with
    /// disjoint spans, read from the chain, they do without a split), then back up,
    /// searching each block's other children and then the block itself. The first children
    /// are not tested against the summaries on the way down (the result is the same, the
    /// summaries only skip searches that change nothing), so only the summaries of blocks
    /// that start a chain are read and kept up to date. On the way down, a chain all on the
    /// candidate's stream is scanned in its spans ([`Chain::spans`]) for the next block the
    /// candidate's span meets (the others pass without a test); on the way up, blocks
    /// without other children and without room for the candidate are passed without a
    /// look, [`GROUP`] at a time where a [`Group`] shows it.
    fn find(&self, q: usize, k0: &Cand<'_>, depth0: usize, walk: &mut Walk) -> Option<usize> {
        let &(ci, pos) = self.at.get(q)?;
        let (alone, alone_span);
        let (links, groups, spans, one_stream, pos): (&[Link], &[Group], &[(u64, u64)], _, _) =
            if ci == usize::MAX {
                let l = Link::of(self.node.get(q)?, q, self.slack);
                alone = [l];
                alone_span = [(l.start, l.end)];
                (&alone[..], &[], &alone_span[..], Some(l.stream), 0)
            } else {
                let ch = self.chains.get(ci)?;
                (&ch.links, &ch.groups, &ch.spans, ch.stream, pos)
            };
        // Links `pos..end` of the chain, those within the depth limit.
        let len = links.len().checked_sub(pos)?;
        let end = pos + (MAX_DEPTH + 1).checked_sub(depth0)?.min(len);
        let mut i = pos;
        let same_stream = one_stream == Some(k0.stream);
        while let Some(l) = links.get(i).filter(|_| i < end) {
            let (start, stop) = (walk.stat.start, walk.stat.end);
            if same_stream {
                // All on the candidate's stream: on to the next link whose span meets its,
                // or that it crosses if that is known.
                let next = match walk.fast {
                    true if self.crossers.found().len() <= FEW_CROSSED => {
                        self.next_crossed(ci, q, i, end)
                    }
                    _ => spans
                        .get(i..end)
                        .unwrap_or(&[])
                        .iter()
                        .position(|&(a, b)| a <= stop && start <= b),
                };
                match next {
                    None => {
                        i = end;
                        break;
                    }
                    Some(0) => {}
                    Some(r) => {
                        i += r;
                        continue;
                    }
                }
            }
            if l.stream != k0.stream
                || (start <= l.end
                    && l.start <= stop
                    && (!walk.fast || self.crossers.crossed(l.id)))
            {
                let n = self.node.get(l.id)?;
                let fit = self.fit(l.id, n, &walk.current(k0));
                match fit {
                    None => break,
                    Some(Fit::Whole) => {}
                    Some(Fit::Part(v)) => walk.narrow(v, k0, self.units)?,
                }
            }
            i += 1;
        }
        // Links `pos..i` take the candidate's lifetime; back up from the deepest.
        // If the walk reached the end of the chain and `q` starts it, the search covers
        // `q`'s whole subtree, so its summary is rebuilt.
        let whole = pos == 0 && i == links.len();
        let mut bound = Summary::EMPTY;
        // `cursor + max <= size + slack`, and no slack for a child of one alignment unit
        // (GE: "no slack for a 512 B child"); `max` changes only where other children are
        // searched.
        let need_of = |max: u64| {
            if max > self.align {
                Some(max)
            } else {
                max.checked_add(self.slack)
            }
        };
        let mut need = need_of(walk.stat.max);
        while i > pos {
            // Links without other children and without room need no look (the summary,
            // when rebuilt, needs every link): a whole group, or one link.
            if !whole {
                if i % GROUP == 0 && i - GROUP >= pos {
                    if let Some(g) = groups.get(i / GROUP - 1) {
                        if !g.many && need.is_none_or(|v| v > g.cap) {
                            i -= GROUP;
                            continue;
                        }
                    }
                }
                if let Some(l) = links.get(i - 1) {
                    if !l.many && need.is_none_or(|v| v > l.cap) {
                        i -= 1;
                        continue;
                    }
                }
            }
            i -= 1;
            let l = links.get(i)?;
            let x = l.id;
            let others: &[usize] = if l.many {
                self.blocks
                    .get(x)
                    .and_then(|b| b.children.get(1..))
                    .unwrap_or(&[])
            } else {
                &[]
            };
            for &r in others {
                let skip = {
                    let k = walk.current(k0);
                    let nests_nowhere = self.node.get(r).is_none_or(|rn| rn.room < k.min)
                        || self.refused_by(&self.sum(r), &k);
                    nests_nowhere
                        && (k.units.len() < 2
                            || if walk.fast {
                                !self.crossers.holds(r)
                            } else {
                                !self.hull_meets(r, k.spans)
                            })
                };
                if !skip {
                    if let Some(t) = self.find(r, k0, depth0 + (i - pos) + 1, walk) {
                        return Some(t);
                    }
                }
                if whole {
                    bound.merge(&self.sum(r));
                }
            }
            if whole {
                bound.insert(l.cap, x);
            }
            if !others.is_empty() {
                need = need_of(walk.stat.max);
            }
            if need.is_some_and(|v| v <= l.cap) {
                return Some(x);
            }
        }
        if whole {
            if let Some(s) = self.sub_cap.get(q) {
                s.set(bound);
            }
        }
        None
    }

    /// The offset from link `i` of chain `ci` (`usize::MAX` for `q` alone) to the first
    /// link before `end` that [`Nester::crossers`] found crossed, if any.
    fn next_crossed(&self, ci: usize, q: usize, i: usize, end: usize) -> Option<usize> {
        if ci == usize::MAX {
            return (i < end && self.crossers.crossed(q)).then_some(0);
        }
        self.crossers
            .found()
            .iter()
            .filter_map(|&x| match self.at.get(x) {
                Some(&(cx, px)) if cx == ci && (i..end).contains(&px) => Some(px - i),
                _ => None,
            })
            .min()
    }

    /// Whether no block of a subtree with summary `sum` can take candidate `k`: every cap
    /// is below its smallest member except those of listed blocks that `k` crosses as a
    /// whole. Crossing is checked on the same stream only, where a block every member of `k`
    /// crosses is crossed by every subset of `k` too, so [`Self::fit`] refuses it however
    /// deep the search would narrow `k`.
    fn refused_by(&self, sum: &Summary, k: &Cand<'_>) -> bool {
        if sum.rest >= k.min {
            return false;
        }
        sum.best.iter().all(|&(cap, t)| {
            cap < k.min
                || self
                    .node
                    .get(t)
                    .is_some_and(|tn| tn.stream == k.stream && self.crossed_by_all(t, tn, k))
        })
    }

    /// Whether [`Self::fit`] refuses `k` for block `q` on the same stream (without building
    /// the kept members): the spans overlap and every member crosses one of `q`'s.
    fn crossed_by_all(&self, q: usize, ql: &Node, k: &Cand<'_>) -> bool {
        if k.start > ql.end || ql.start > k.end {
            return false;
        }
        let Some(qb) = self.bspan.get(q) else {
            return true;
        };
        k.spans.iter().all(|m| crosses(qb, m.start, m.end))
    }

    /// Block test, then member test (same stream only), for candidate `k` and block `q`
    /// (its compact copy `n`).
    fn fit(&self, q: usize, n: &Node, k: &Cand<'_>) -> Option<Fit> {
        if n.stream == k.stream {
            if k.start > n.end || n.start > k.end {
                return Some(Fit::Whole);
            }
            let qb = self.bspan.get(q)?;
            // Member test: keep the candidate's members that cross none of q's members.
            let Some(kept) = uncrossed(qb, k) else {
                // All kept: the same as `Whole` to `find` and `split` (nothing to split off),
                // without building the list.
                return Some(Fit::Whole);
            };
            return (!kept.is_empty()).then_some(Fit::Part(kept));
        }
        let after = |first: u64, other_stream: u32, other_end: u64| {
            self.deps
                .latest_on(first, other_stream)
                .is_some_and(|l| l > other_end)
        };
        (after(k.start, n.stream, n.end) || after(n.start, k.stream, k.end)).then_some(Fit::Whole)
    }

    /// Gives `c` the members left in `walk` and each removed set to a new clone block;
    /// returns the clones' ids in order.
    fn split(&mut self, c: usize, walk: Walk) -> Vec<usize> {
        let (Some(kept), false) = (walk.members, walk.removed.is_empty()) else {
            return Vec::new();
        };
        let size_of = |v: &[UnitId]| {
            v.iter()
                .filter_map(|&u| self.units.list.get(u))
                .map(|u| u.size)
                .max()
                .unwrap_or(0)
        };
        let Some(block) = self.blocks.get_mut(c) else {
            return Vec::new();
        };
        block.size = size_of(&kept);
        block.units = kept;
        // `c` has no children (only such blocks are candidates); the clones copy the rest.
        let template = BlockData {
            units: Vec::new(),
            children: Vec::new(),
            ..*block
        };
        self.refresh(c);
        let mut ids = Vec::new();
        for rest in walk.removed {
            let clone = BlockData {
                size: size_of(&rest),
                units: rest,
                parent: None,
                children: Vec::new(),
                cursor: 0,
                ..template
            };
            let id = self.blocks.len();
            let node = Node::of(&clone, self.units, self.slack);
            self.sub_cap.push(Cell::new(Summary::EMPTY));
            self.lite.push(Lite::of(&clone, self.units));
            self.bspan.push(Vec::new());
            self.at.push((usize::MAX, 0));
            self.hull.push((node.start, node.end));
            self.node.push(node);
            self.keys.push((Reverse(clone.size), 0, id));
            self.blocks.push(clone);
            self.refresh(id);
            ids.push(id);
        }
        ids
    }

    /// Recomputes the copies of block `b`, which has no children, from its members.
    fn refresh(&mut self, b: usize) {
        let Some(blk) = self.blocks.get(b) else {
            return;
        };
        let node = Node::of(blk, self.units, self.slack);
        let lite = Lite::of(blk, self.units);
        let room = block_size_room(Some(blk), self.slack);
        if let Some(x) = self.sub_cap.get(b) {
            x.set(Summary::one(room, b));
        }
        if let Some(h) = self.hull.get_mut(b) {
            *h = (node.start, node.end);
        }
        if let Some(n) = self.node.get_mut(b) {
            *n = node;
        }
        if let Some(l) = self.lite.get_mut(b) {
            *l = lite;
        }
        if let Some(v) = self.bspan.get_mut(b) {
            set_spans(v, &blk.units, self.units);
        }
    }

    /// Makes `c` a child of the continuous block `target`, which no walk searches.
    fn attach_flat(&mut self, c: usize, target: usize) {
        let size = self.blocks.get(c).map_or(0, |b| b.size);
        if let Some(b) = self.blocks.get_mut(c) {
            b.parent = Some(target);
        }
        if let Some(t) = self.blocks.get_mut(target) {
            t.children.push(c);
            t.cursor = t.cursor.saturating_add(size);
        }
        if let Some(n) = self.node.get_mut(c) {
            n.up = target;
        }
    }

    /// Makes `c` the last child of `target` (GE `AddChildBlock`, cursor += `AlignSize`).
    fn attach(&mut self, c: usize, target: usize) {
        self.cover(c);
        let size = self.blocks.get(c).map_or(0, |b| b.size);
        if let Some(b) = self.blocks.get_mut(c) {
            b.parent = Some(target);
        }
        if let Some(t) = self.blocks.get_mut(target) {
            t.children.push(c);
            t.cursor = t.cursor.saturating_add(size);
        }
        // `c`'s depth: a top-level block is searched at depth 1. Below `MAX_DEPTH`, `find`
        // never searches `c`, so it is no place for a child and stays out of the summaries.
        let mut depth = 1;
        let mut first = false;
        if let Some(t) = self.node.get_mut(target) {
            t.cursor = t.cursor.saturating_add(size);
            if t.first == usize::MAX {
                t.first = c;
                first = true;
            } else {
                t.many = true;
            }
            depth = t.depth.saturating_add(1);
        }
        if let Some(n) = self.node.get_mut(c) {
            n.up = target;
            n.depth = depth;
        }
        // A first child joins the chain of its parent, which it now ends (a chain of two
        // if the parent was alone).
        if first {
            let link = self.node.get(c).map(|n| Link::of(n, c, self.slack));
            let (ci, pos) = match self.at.get(target) {
                Some(&(ci, _)) if ci != usize::MAX => {
                    let ch = self.chains.get_mut(ci);
                    let pos = ch.as_ref().map_or(0, |ch| ch.links.len());
                    if let (Some(ch), Some(l)) = (ch, link) {
                        ch.push(l);
                    }
                    (ci, pos)
                }
                _ => {
                    let ci = self.chains.len();
                    let head = self
                        .node
                        .get(target)
                        .map(|n| Link::of(n, target, self.slack));
                    let mut ch = Chain::default();
                    for l in head.into_iter().chain(link) {
                        ch.push(l);
                    }
                    self.chains.push(ch);
                    if let Some(a) = self.at.get_mut(target) {
                        *a = (ci, 0);
                    }
                    (ci, 1)
                }
            };
            if let Some(a) = self.at.get_mut(c) {
                *a = (ci, pos);
            }
        }
        // The target's copy in its chain: a new cursor, maybe a second child.
        let fresh = self
            .node
            .get(target)
            .map(|n| Link::of(n, target, self.slack));
        if let (Some(&(ci, pos)), Some(f)) = (self.at.get(target), fresh) {
            if let Some(ch) = self.chains.get_mut(ci) {
                ch.set(pos, f);
            }
        }
        let reachable = usize::from(depth) <= MAX_DEPTH;
        if !reachable {
            if let Some(s) = self.sub_cap.get(c) {
                s.set(Summary::EMPTY);
            }
        }
        let room = size.saturating_add(self.slack);
        let cap = self.cap(c);
        let target_cap = self.cap(target);
        let span = self.node.get(c).map_or((0, u64::MAX), |n| (n.start, n.end));
        // Only the blocks that start a chain are tested against their room and summary
        // ([`Self::find`]): those above `c`.
        let mut x = target;
        while let Some(h) = self.at.get(x).map(|&(ci, _)| {
            self.chains
                .get(ci)
                .and_then(|ch| ch.links.first())
                .map_or(x, |l| l.id)
        }) {
            let (Some(n), Some(s)) = (self.node.get_mut(h), self.sub_cap.get(h)) else {
                break;
            };
            n.room = n.room.max(room);
            if let Some(hl) = self.hull.get_mut(h) {
                *hl = (hl.0.min(span.0), hl.1.max(span.1));
            }
            let mut sum = s.get();
            sum.lower(target, target_cap);
            if reachable {
                sum.insert(cap, c);
            }
            s.set(sum);
            x = n.up;
        }
    }
}

/// Entries of [`Covered`] kept in a sorted list (searched by halving, inserted by a move)
/// before a tree takes over.
const FLAT_COVERED: usize = 1024;

/// The merged member lifetimes of [`Nester::covered`], by `(stream, first step)` → last
/// step: a sorted list while short (most parents' subtrees), a tree once long.
#[derive(Debug, Default)]
struct Covered {
    flat: Vec<((u32, u64), u64)>,
    tree: Option<BTreeMap<(u32, u64), u64>>,
}

impl Covered {
    fn clear(&mut self) {
        self.flat.clear();
        self.tree = None;
    }
}

/// [`Nester::cover`] of one member `[s, e]` on `stream` into the tree: merged with the
/// intervals it meets (the last starting at or before `e`, and earlier ones while they
/// reach `s`).
fn cover_tree(t: &mut BTreeMap<(u32, u64), u64>, stream: u32, mut s: u64, mut e: u64) {
    while let Some((&(st, a), &z)) = t
        .range(..=(stream, e))
        .next_back()
        .filter(|(k, _)| k.0 == stream)
    {
        if z < s {
            break;
        }
        t.remove(&(st, a));
        s = s.min(a);
        e = e.max(z);
    }
    t.insert((stream, s), e);
}

/// [`Nester::meets_covered`] on the tree for the candidate's members `near` on stream `st`:
/// from the last member back, the interval that starts last at or before each one's end.
fn meets_tree(t: &BTreeMap<(u32, u64), u64>, st: u32, near: &[Span]) -> bool {
    let Some(last) = near.last() else {
        return false;
    };
    let mut it = t.range(..=(st, last.end));
    let mut cur = it.next_back().filter(|(k, _)| k.0 == st);
    for m in near.iter().rev() {
        let mut steps = 0;
        while let Some((&(_, a), _)) = cur {
            if a <= m.end {
                break;
            }
            steps += 1;
            if steps > 8 {
                // A long run of intervals between two members: search again.
                it = t.range(..=(st, m.end));
                cur = it.next_back().filter(|(k, _)| k.0 == st);
                break;
            }
            cur = it.next_back().filter(|(k, _)| k.0 == st);
        }
        match cur {
            // No interval starts at or before this member's end, nor an earlier one's.
            None => return false,
            Some((_, &z)) if z >= m.start => return true,
            Some(_) => {}
        }
    }
    false
}

/// The children the continuous-input or zero-copy block at `pk` takes from the later blocks
/// of `set`, in order (block_mem_assigner.cc `ReuseBlocksByLifeTime`, memory_block.cc
/// `AddLifeReuseBlock` → `AddContinuousLifeReuseBlock` / `AddZeroCopyLifeReuseBlock`):
/// ordinary blocks without children whose lifetime the block test (no member test) finds
/// disjoint, side by side from its head while the sum of their `AlignSize` stays within its
/// largest unaligned (real) size, no slack; a zero-copy block also takes, while empty, a
/// block whose largest real size equals its own. A continuous block takes none produced
/// before the last atomic-clean op (their memory would be cleaned under them). Never
/// another continuous or zero-copy block.
pub(crate) fn hosted(
    blocks: &[BlockData],
    units: &Units,
    deps: &Deps,
    set: &BTreeSet<Key>,
    pk: Key,
) -> Vec<usize> {
    let Some(pb) = blocks.get(pk.2) else {
        return Vec::new();
    };
    let Some(cap) = pb.host.filter(|_| !pb.units.is_empty()) else {
        return Vec::new();
    };
    let (ps, pe) = (pb.begin(units), pb.end(units));
    let mut cursor = pb.cursor;
    let mut out = Vec::new();
    for k in set.range((Excluded(pk), Unbounded)) {
        let Some(cb) = blocks.get(k.2) else { continue };
        if !cb.reusable
            || cb.host.is_some()
            || cb.parent.is_some()
            || !cb.children.is_empty()
            || cb.gear != pb.gear
            || cb.mem != pb.mem
            || cb.units.is_empty()
        {
            continue;
        }
        let (cs, ce) = (cb.begin(units), cb.end(units));
        if pb.continuous.is_some() && units.last_atomic.is_some_and(|a| cs < a) {
            continue;
        }
        let disjoint = if cb.stream == pb.stream {
            cs > pe || ps > ce
        } else {
            deps.latest_on(cs, pb.stream).is_some_and(|l| l > pe)
                || deps.latest_on(ps, cb.stream).is_some_and(|l| l > ce)
        };
        let same_real = || {
            cursor == 0
                && cb
                    .units
                    .iter()
                    .filter_map(|&u| units.list.get(u))
                    .map(|u| u.real)
                    .max()
                    == Some(cap)
        };
        let fits =
            cursor.checked_add(cb.size).is_some_and(|e| e <= cap) || (pb.zero_copy && same_real());
        if disjoint && fits {
            cursor = cursor.saturating_add(cb.size);
            out.push(k.2);
        }
    }
    out
}

/// Whether the ordinary block `p`, a parent in GE's loop, moves into the continuous-input
/// block `c` offered to it (GE's reverse case: memory_block.cc `AddLifeReuseBlock` →
/// `AddContinuousLifeReuseBlock` with the ordinary block as `this`): `p` has no children,
/// `c` has none either, gear and memory type agree, the block test (no member test) finds
/// them lifetime-disjoint, `p`'s largest real size is at most `c`'s largest unaligned
/// size, `p` fits there at `c`'s cursor with no slack, and both have the same `AlignSize`.
/// So `c`'s unaligned size is a multiple of the alignment and equal to `p`'s size: `c` sorts
/// among `p`'s equals. No atomic-clean test: block_mem_assigner.cc `ReuseBlocksByLifeTime`
/// makes it only when the parent of the loop is continuous.
pub(crate) fn moves_into(
    blocks: &[BlockData],
    units: &Units,
    deps: &Deps,
    p: usize,
    c: usize,
) -> bool {
    let (Some(pb), Some(cb)) = (blocks.get(p), blocks.get(c)) else {
        return false;
    };
    let Some(cap) = cb.host.filter(|_| cb.continuous.is_some() && !cb.zero_copy) else {
        return false;
    };
    if !pb.reusable
        || pb.host.is_some()
        || pb.parent.is_some()
        || !pb.children.is_empty()
        || cb.parent.is_some()
        || !cb.children.is_empty()
        || pb.gear != cb.gear
        || pb.mem != cb.mem
        || pb.units.is_empty()
        || cb.units.is_empty()
        || pb.size != cb.size
        || cb.cursor.checked_add(pb.size).is_none_or(|e| e > cap)
    {
        return false;
    }
    let real = pb
        .units
        .iter()
        .filter_map(|&u| units.list.get(u))
        .map(|u| u.real)
        .max()
        .unwrap_or(0);
    if real > cap {
        return false;
    }
    let (ps, pe) = (pb.begin(units), pb.end(units));
    let (cs, ce) = (cb.begin(units), cb.end(units));
    if cb.stream == pb.stream {
        cs > pe || ps > ce
    } else {
        deps.latest_on(cs, pb.stream).is_some_and(|l| l > pe)
            || deps.latest_on(ps, cb.stream).is_some_and(|l| l > ce)
    }
}

/// How many blocks a [`Summary`] lists by name.
const LISTED: usize = 4;

/// Bounds of the caps in a subtree: every block of it is listed in `best` with at least its
/// cap, or has a cap of at most `rest`. Listed entries are distinct blocks, largest first;
/// empty slots are `(0, usize::MAX)`.
#[derive(Debug, Clone, Copy)]
struct Summary {
    best: [(u64, usize); LISTED],
    rest: u64,
}

impl Summary {
    /// Knows nothing: refuses no search.
    const UNKNOWN: Summary = Summary {
        best: [(0, usize::MAX); LISTED],
        rest: u64::MAX,
    };

    /// No block.
    const EMPTY: Summary = Summary {
        best: [(0, usize::MAX); LISTED],
        rest: 0,
    };

    /// An upper bound of every cap in the subtree (0 for none).
    fn max(&self) -> u64 {
        self.best[0].0.max(self.rest)
    }

    fn one(cap: u64, b: usize) -> Self {
        let mut s = Summary::EMPTY;
        s.insert(cap, b);
        s
    }

    /// Adds block `b` (not listed yet) with cap `cap`.
    fn insert(&mut self, cap: u64, b: usize) {
        let last = self.best[LISTED - 1];
        if cap <= last.0 {
            self.rest = self.rest.max(cap);
            return;
        }
        self.rest = self.rest.max(last.0);
        let mut i = LISTED - 1;
        while i > 0 && self.best[i - 1].0 < cap {
            self.best[i] = self.best[i - 1];
            i -= 1;
        }
        self.best[i] = (cap, b);
    }

    /// Block `b`'s cap is now `cap` (lower than before): lowers its entry if listed.
    fn lower(&mut self, b: usize, cap: u64) {
        if let Some(i) = self.best.iter().position(|e| e.1 == b && e.0 > cap) {
            let mut i = i;
            self.best[i].0 = cap;
            while i + 1 < LISTED && self.best[i + 1].0 > cap {
                self.best.swap(i, i + 1);
                i += 1;
            }
        }
    }

    /// Adds the blocks of another subtree, disjoint from this one.
    fn merge(&mut self, other: &Summary) {
        self.rest = self.rest.max(other.rest);
        if other.best[0].0 <= self.best[LISTED - 1].0 {
            // Nothing of `other` makes the list (its entries are largest first).
            self.rest = self.rest.max(other.best[0].0);
            return;
        }
        for &(cap, b) in &other.best {
            if b != usize::MAX {
                self.insert(cap, b);
            } else {
                self.rest = self.rest.max(cap);
            }
        }
    }
}

fn block_size_room(b: Option<&BlockData>, slack: u64) -> u64 {
    b.map_or(0, |b| b.size.saturating_add(slack))
}

/// The members of `k` that cross no member of the block whose member lifetimes are `b`
/// (touching counts, GE `CrossLifeTime`), or `None` if none crosses. Both lists are sorted
/// and disjoint, so only `b`'s members within `k`'s span and `k`'s within theirs are
/// visited, each of those by a binary search of the others.
fn uncrossed(b: &[Span], k: &Cand<'_>) -> Option<Vec<UnitId>> {
    let first = b.partition_point(|m| m.end < k.start);
    let rest = b.get(first..).unwrap_or(&[]);
    let near = rest
        .get(..rest.partition_point(|m| m.start <= k.end))
        .unwrap_or(&[]);
    // The candidate's members within reach of those.
    let (ks, ke) = (near.first()?.start, near.last()?.end);
    let k_first = k.spans.partition_point(|m| m.end < ks);
    let k_last = k_first
        + k.spans
            .get(k_first..)
            .unwrap_or(&[])
            .partition_point(|m| m.start <= ke);
    let crossing = |c: &Span| {
        let i = near.partition_point(|m| m.end < c.start);
        near.get(i).is_some_and(|m| m.start <= c.end)
    };
    let window = k.spans.get(k_first..k_last).unwrap_or(&[]);
    let i = k_first + window.iter().position(crossing)?;
    // Often every member crosses: nothing is allocated for an empty list.
    let mut kept = Vec::new();
    let mut keep = |part: &[UnitId]| {
        if !part.is_empty() {
            if kept.capacity() == 0 {
                kept.reserve(k.units.len());
            }
            kept.extend_from_slice(part);
        }
    };
    keep(k.units.get(..i).unwrap_or(&[]));
    for j in i + 1..k_last {
        if let (Some(u), Some(c)) = (k.units.get(j..=j), k.spans.get(j)) {
            if !crossing(c) {
                keep(u);
            }
        }
    }
    keep(k.units.get(k_last..).unwrap_or(&[]));
    Some(kept)
}

/// Whether `[start, end]` crosses one of the member lifetimes `b` (sorted, disjoint;
/// touching counts, GE `CrossLifeTime`): a binary search finds the only candidate.
fn crosses(b: &[Span], start: u64, end: u64) -> bool {
    let i = b.partition_point(|m| m.end < start);
    b.get(i).is_some_and(|m| m.start <= end)
}
