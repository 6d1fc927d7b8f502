//! TFLM's allocation scopes: `AllocationInfoBuilder::MarkAllocationLifetimes` and
//! `MarkSubgraphLifetimesIfNecessary` (tflite-micro `micro_allocation_info.cc`), replayed.
//!
//! Scope 0 is subgraph 0's start: its inputs are created and used there. Each operator opens
//! a scope; its outputs are created there; an IF/WHILE/CALL_ONCE then opens one more scope per
//! subgraph it calls and walks it (recursively); then the op's inputs and outputs are used at
//! the current scope (after its bodies). At a subgraph's end its outputs are created (if not
//! yet) and used at the current scope. `first` keeps the first creation, `last` the last use.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::FileSubgraph;
use crate::{Error, Result};

/// The most scopes a walk may take: subgraph calls nested so that each level calls the next
/// twice unfold exponentially; a file that does so is refused rather than walked for hours.
pub const MAX_SCOPES: usize = 1 << 20;

/// One allocation scope.
pub(crate) struct Scope {
    /// The walked op that opened it (index into [`Walk::op_names`]), or `None` for a
    /// subgraph's start.
    pub(crate) op: Option<usize>,
    /// The subgraph it belongs to.
    pub(crate) subgraph: usize,
}

/// The replay's result, by global tensor index and scope.
pub(crate) struct Walk {
    /// TFLM's `first_created` per tensor (`None`: never, TFLM's -1).
    pub(crate) first: Vec<Option<usize>>,
    /// TFLM's `last_used` per tensor (`None`: never, TFLM's -1).
    pub(crate) last: Vec<Option<usize>>,
    /// The tensors used (`UpdateLastUsed`) at each scope.
    pub(crate) reads: Vec<Vec<usize>>,
    /// The scopes in order.
    pub(crate) scopes: Vec<Scope>,
    /// Each walked op: its name in the graph, subgraph and index.
    pub(crate) op_names: Vec<(String, usize, usize)>,
}

struct Frame {
    subgraph: usize,
    /// The next op to open.
    next: usize,
    /// An op whose bodies are being walked: its index and the calls left.
    pending: Option<(usize, usize)>,
}

/// Replays TFLM's walk from subgraph 0.
///
/// # Errors
/// [`crate::ErrorKind::Invalid`] for a subgraph that calls itself through a chain of
/// IF/WHILE/CALL_ONCE ops (TFLM would recurse without end), or more than [`MAX_SCOPES`]
/// scopes.
pub(crate) fn walk(
    subgraphs: &[FileSubgraph],
    offsets: &[usize],
    op_type: &dyn Fn(usize, usize) -> String,
) -> Result<Walk> {
    let n = offsets.last().copied().unwrap_or(0) + subgraphs.last().map_or(0, |s| s.tensors.len());
    let mut w = Walk {
        first: alloc::vec![None; n],
        last: alloc::vec![None; n],
        reads: Vec::new(),
        scopes: Vec::new(),
        op_names: Vec::new(),
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut per_op_calls: Vec<Vec<usize>> = subgraphs
        .iter()
        .map(|s| alloc::vec![0usize; s.ops.len()])
        .collect();
    enter(&mut w, subgraphs, offsets, &mut stack, 0, None)?;
    while let Some(top) = stack.last() {
        let (s, pending, next) = (top.subgraph, top.pending, top.next);
        let i = stack.len() - 1;
        let sg = &subgraphs[s];
        if let Some((k, done)) = pending {
            let op = &sg.ops[k];
            if done < op.calls.len() {
                stack[i].pending = Some((k, done + 1));
                enter(
                    &mut w,
                    subgraphs,
                    offsets,
                    &mut stack,
                    op.calls[done],
                    Some((s, k)),
                )?;
                continue;
            }
            stack[i].pending = None;
            stack[i].next = k + 1;
            finish_op(&mut w, offsets[s], op);
            continue;
        }
        if next < sg.ops.len() {
            let k = next;
            let op = &sg.ops[k];
            let scope = open(&mut w, s)?;
            let count = &mut per_op_calls[s][k];
            *count += 1;
            let name = op_label(s, k, &op_type(s, k), *count);
            w.scopes[scope].op = Some(w.op_names.len());
            w.op_names.push((name, s, k));
            for &t in &op.outputs {
                create(&mut w, offsets[s] + t as usize, scope);
            }
            if op.calls.is_empty() {
                stack[i].next = k + 1;
                finish_op(&mut w, offsets[s], op);
            } else {
                stack[i].pending = Some((k, 0));
            }
            continue;
        }
        // the subgraph's end: outputs live to here
        let scope = current(&w);
        for &t in &sg.outputs {
            let g = offsets[s] + t as usize;
            create(&mut w, g, scope);
            use_at(&mut w, g, scope);
        }
        stack.pop();
    }
    Ok(w)
}

/// `#3 CONV_2D`, `subgraph 2 #0 ADD (call 2)`.
fn op_label(s: usize, k: usize, op_type: &str, call: usize) -> String {
    let base = if s == 0 {
        format!("#{k} {op_type}")
    } else {
        format!("subgraph {s} #{k} {op_type}")
    };
    if call > 1 {
        format!("{base} (call {call})")
    } else {
        base
    }
}

/// The current scope (there is one from the first `enter` on).
fn current(w: &Walk) -> usize {
    w.scopes.len().saturating_sub(1)
}

/// Opens a new scope of subgraph `s`.
fn open(w: &mut Walk, s: usize) -> Result<usize> {
    if w.scopes.len() >= MAX_SCOPES {
        return Err(Error::invalid(format!(
            "the subgraph calls unfold into more than {MAX_SCOPES} op steps (IF/WHILE/CALL_ONCE bodies calling the next ones several times each)"
        )));
    }
    w.scopes.push(Scope {
        op: None,
        subgraph: s,
    });
    w.reads.push(Vec::new());
    Ok(current(w))
}

/// Enters subgraph `s` (called by op `from`, or the main graph): a new scope where its inputs
/// are created and used.
fn enter(
    w: &mut Walk,
    subgraphs: &[FileSubgraph],
    offsets: &[usize],
    stack: &mut Vec<Frame>,
    s: usize,
    from: Option<(usize, usize)>,
) -> Result<()> {
    if let Some(pos) = stack.iter().position(|f| f.subgraph == s) {
        let mut chain: Vec<String> = stack[pos..]
            .iter()
            .map(|f| format!("{}", f.subgraph))
            .collect();
        chain.push(format!("{s}"));
        let (cs, ck) = from.unwrap_or((0, 0));
        return Err(Error::invalid(format!(
            "cyclic subgraph calls: subgraph {} (op {ck} of subgraph {cs} calls subgraph {s}, which is running); TFLM would recurse without end",
            chain.join(" → ")
        )));
    }
    let scope = open(w, s)?;
    for &t in &subgraphs[s].inputs {
        let g = offsets[s] + t as usize;
        create(w, g, scope);
        use_at(w, g, scope);
    }
    stack.push(Frame {
        subgraph: s,
        next: 0,
        pending: None,
    });
    Ok(())
}

fn create(w: &mut Walk, g: usize, scope: usize) {
    w.first[g].get_or_insert(scope);
}

fn use_at(w: &mut Walk, g: usize, scope: usize) {
    w.last[g] = Some(scope);
    w.reads[scope].push(g);
}

/// The end of an op: its inputs (-1 = omitted) and outputs are used at the current scope.
fn finish_op(w: &mut Walk, offset: usize, op: &super::FileOp) {
    let scope = current(w);
    for &t in op.inputs.iter().chain(&op.outputs) {
        if t >= 0 {
            use_at(w, offset + t as usize, scope);
        }
    }
}
