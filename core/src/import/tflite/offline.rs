//! TFLM's offline memory plan: a `Metadata` entry named `OfflineMemoryAllocation` whose
//! buffer holds little-endian int32 words `[version, subgraphs, n, offset_0 .. offset_n-1]`,
//! one offset per tensor of all subgraphs in subgraph order, in bytes from the start of the
//! arena head, -1 = planned online (tflite-micro `docs/memory_management.md`,
//! `micro_allocation_info.cc` `GetOfflinePlannedOffsets`: TFLM reads the last entry of that
//! name, ignores words 0 and 1, and fails allocation when n is not the tensor count).
//!
//! [`read_offline_plan`] reads and checks one; [`with_offline_plan`] writes a model with one.

use alloc::format;
use alloc::vec::Vec;

use super::{fb, flat_err, get, read_model};

use crate::{Error, Result};

/// The metadata name TFLM looks for.
pub const OFFLINE_PLAN_METADATA: &str = "OfflineMemoryAllocation";

/// An offline plan as stored in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfflinePlan {
    /// Word 0: the format version (0; TFLM ignores it).
    pub version: i32,
    /// Word 1: the number of subgraphs (TFLM ignores it).
    pub subgraphs: i32,
    /// One offset per tensor of all subgraphs in subgraph order (the graph's tensor ids),
    /// bytes from the start of TFLM's arena head; -1 = planned online by TFLM.
    pub offsets: Vec<i32>,
}

/// Reads the `OfflineMemoryAllocation` plan of a `.tflite` file, if it has one, checked
/// against the model.
///
/// # Errors
/// Those of [`super::parse`] for the header and the tables read; [`crate::ErrorKind::Invalid`]
/// when the entry's buffer index is out of range, its data is not whole int32 words or is
/// shorter than 3 words, n is not the model's tensor count (TFLM refuses such a plan), the
/// words are not `3 + n`, or an offset is negative other than -1.
pub fn read_offline_plan(bytes: &[u8]) -> Result<Option<OfflinePlan>> {
    let model = read_model(bytes)?;
    let mut total = 0usize;
    if let Some(list) = get!(model.subgraphs(), "Model.subgraphs") {
        for (s, sg) in list.iter().enumerate() {
            let at = format!("subgraph {s}");
            let sg = get!(sg, at);
            total += get!(sg.tensors(), at).map_or(0, |t| t.len());
        }
    }
    read_in(bytes, &model, total)
}

/// Whether a metadata entry's name (the planus getter's answer) is [`OFFLINE_PLAN_METADATA`]:
/// a name that is not UTF-8 is not (TFLM compares the bytes), and does not refuse the file.
fn names_offline_plan(
    got: core::result::Result<Option<&str>, planus::Error>,
    at: &str,
) -> Result<bool> {
    match got {
        Ok(name) => Ok(name == Some(OFFLINE_PLAN_METADATA)),
        Err(e) if matches!(e.error_kind, planus::errors::ErrorKind::InvalidUtf8 { .. }) => {
            Ok(false)
        }
        Err(e) => Err(flat_err(&e, at)),
    }
}

/// [`read_offline_plan`] on an opened model with `total` tensors.
pub(crate) fn read_in(
    _bytes: &[u8],
    model: &fb::ModelRef<'_>,
    total: usize,
) -> Result<Option<OfflinePlan>> {
    let Some(list) = get!(model.metadata(), "Model.metadata") else {
        return Ok(None);
    };
    let mut found = None;
    for (i, m) in list.iter().enumerate() {
        let at = format!("metadata {i}");
        let m = get!(m, at);
        if names_offline_plan(m.name(), &at)? {
            found = Some(get!(m.buffer(), at)); // TFLM keeps the last one
        }
    }
    let Some(b) = found else { return Ok(None) };
    let at = format!("metadata '{OFFLINE_PLAN_METADATA}'");
    let buffers = get!(model.buffers(), "Model.buffers");
    let n_buffers = buffers.as_ref().map_or(0, |v| v.len());
    let Some(buffer) = buffers.and_then(|v| v.get(b as usize)) else {
        return Err(
            Error::invalid(format!("buffer {b} out of range ({n_buffers} buffers)")).at(at),
        );
    };
    let buffer = get!(buffer, at);
    let data = get!(buffer.data(), at).unwrap_or(&[]);
    if data.len() % 4 != 0 || data.len() < 12 {
        return Err(Error::invalid(format!(
            "buffer {b} holds {} bytes: expected int32 words [version, subgraphs, n, n offsets]",
            data.len()
        ))
        .at(at));
    }
    let words: Vec<i32> = data
        .chunks_exact(4)
        .map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let n = words[2];
    if n < 0 || n as usize != total {
        return Err(Error::invalid(format!(
            "holds {n} offsets for {total} tensors (all subgraphs): TFLM refuses it (\"Nbr of offline buffer offsets ... not equal nbr tensors\")"
        ))
        .at(at));
    }
    if words.len() != 3 + total {
        return Err(Error::invalid(format!(
            "says {n} offsets but holds {} words after the 3 header words",
            words.len() - 3
        ))
        .at(at));
    }
    let offsets = words[3..].to_vec();
    if let Some((t, o)) = offsets.iter().enumerate().find(|(_, &o)| o < -1) {
        return Err(Error::invalid(format!(
            "offset {o} for tensor {t}: an offset is at least 0, or -1 (plan online)"
        ))
        .at(at));
    }
    Ok(Some(OfflinePlan {
        version: words[0],
        subgraphs: words[1],
        offsets,
    }))
}

/// The offline-plan offsets of a plan of a `.tflite` model's lowered problem: for each tensor
/// of all subgraphs (the graph's tensor ids), the offset of its buffer in `plan`, -1 for the
/// tensors the problem does not plan (weights, variables, empty tensors: TFLM keeps them out of
/// its head, or plans them online). `tensor_count` is [`super::TfliteInfo::tensor_count`];
/// `tensor_of` is [`crate::Lowered::tensor_of`] (one entry per buffer of the problem the plan
/// was made for).
///
/// # Errors
/// [`crate::ErrorKind::Invalid`] when the plan is not one offset per buffer of `tensor_of`, a
/// buffer's tensor is out of range or two buffers name one tensor (views aliased into one
/// buffer are fine: one buffer, one tensor), a planned buffer has no tensor (a workspace:
/// TFLM's scratch buffers have no place in an offline plan), or an offset does not fit
/// TFLM's int32.
pub fn offline_offsets(
    tensor_count: usize,
    tensor_of: &[Option<crate::graph::TensorId>],
    plan: &crate::plan::Plan,
) -> Result<Vec<i32>> {
    if plan.offsets.len() != tensor_of.len() {
        return Err(Error::invalid(format!(
            "the plan has {} offsets for {} buffers",
            plan.offsets.len(),
            tensor_of.len()
        )));
    }
    let mut out = alloc::vec![-1i32; tensor_count];
    for (b, (t, &offset)) in tensor_of.iter().zip(&plan.offsets).enumerate() {
        let Some(t) = t else {
            return Err(Error::invalid(format!(
                "buffer {b} is not a tensor (a workspace): an offline plan has offsets for tensors only"
            )));
        };
        let slot = out.get_mut(t.index()).ok_or_else(|| {
            Error::invalid(format!(
                "buffer {b} names tensor {}, out of range ({tensor_count} tensors)",
                t.index()
            ))
        })?;
        if *slot != -1 {
            return Err(Error::invalid(format!(
                "tensor {} has two buffers in the plan",
                t.index()
            )));
        }
        *slot = i32::try_from(offset).map_err(|_| {
            Error::overflow(format!(
                "offset {offset} of tensor {}: TFLM's offline plan holds int32 offsets",
                t.index()
            ))
        })?;
    }
    Ok(out)
}

/// The same model with an `OfflineMemoryAllocation` entry holding `offsets` (version 0, the
/// subgraph count, the tensor count, then `offsets`), replacing any such entry.
///
/// Sound by construction rather than by re-serialising: the file keeps every byte of the
/// original, moved up by `K` bytes (a multiple of 16, so every buffer keeps its 16-byte
/// alignment), and the `K` bytes inserted after the 8-byte header hold a new root `Model`
/// table (the original's fields, with a new `buffers` and `metadata` vector), the new entry
/// and the plan's words. Flatbuffer offsets are relative and point forward, so the original
/// tables are untouched; only the root offset and the absolute `offset` of buffers stored
/// past the flatbuffer (files over 2 GB) are rewritten. Fields of the original that a newer
/// schema adds (unknown here) make it refuse rather than drop them. The result is read back
/// and checked before it is returned.
///
/// # Errors
/// Those of [`read_offline_plan`] on the original; [`crate::ErrorKind::Invalid`] when
/// `offsets` does not hold one entry per tensor of all subgraphs, holds an offset below -1,
/// or the root table has fields this schema does not know; [`crate::ErrorKind::Overflow`]
/// when the file would exceed the flatbuffer's 2 GB.
// every position and count below is under 2 GB (checked first), so the casts to the
// flatbuffer's 32- and 16-bit fields are exact
#[allow(clippy::cast_possible_truncation)]
pub fn with_offline_plan(bytes: &[u8], offsets: &[i32]) -> Result<Vec<u8>> {
    let room = offsets
        .len()
        .checked_mul(4)
        .and_then(|w| w.checked_add(bytes.len()))
        .and_then(|n| n.checked_add(4096));
    if room.is_none_or(|n| n > i32::MAX as usize) {
        return Err(Error::overflow(
            "the planned model: a flatbuffer is at most 2 GB",
        ));
    }
    let model = read_model(bytes)?;
    let subgraphs = get!(model.subgraphs(), "Model.subgraphs")
        .ok_or_else(|| Error::invalid("the model has no subgraphs"))?;
    let mut total = 0usize;
    for (s, sg) in subgraphs.iter().enumerate() {
        let at = format!("subgraph {s}");
        let sg = get!(sg, at);
        total += get!(sg.tensors(), at).map_or(0, |t| t.len());
    }
    // the original must be a model we can read whole (its current plan too, if any)
    read_in(bytes, &model, total).map_err(|e| e.at("the model given"))?;
    if offsets.len() != total {
        return Err(Error::invalid(format!(
            "{} offsets for {total} tensors (all subgraphs): TFLM needs exactly one per tensor",
            offsets.len()
        )));
    }
    if let Some((t, o)) = offsets.iter().enumerate().find(|(_, &o)| o < -1) {
        return Err(Error::invalid(format!(
            "offset {o} for tensor {t}: an offset is at least 0, or -1 (plan online)"
        )));
    }
    let mut words: Vec<u8> = Vec::with_capacity(4 * (3 + total));
    let header = [0i32, subgraphs.len() as i32, total as i32];
    for w in header.iter().chain(offsets) {
        words.extend_from_slice(&w.to_le_bytes());
    }

    let raw = Raw { b: bytes };
    let root = raw.u32(0)? as usize;
    let fields = raw.table_fields(root, "the root Model table")?;
    if let Some((id, _)) = fields
        .iter()
        .enumerate()
        .find(|(id, f)| *id >= 10 && f.is_some())
    {
        return Err(Error::invalid(format!(
            "the root Model table has field {id}, unknown to this schema: it would be lost, so no plan is written"
        )));
    }
    let target = |id: usize| -> Result<Option<usize>> {
        match fields.get(id).copied().flatten() {
            Some(pos) => Ok(Some(raw.forward(pos, "a Model field")?)),
            None => Ok(None),
        }
    };
    // buffers and metadata: the original tables, by absolute position
    let buffer_tables = match target(4)? {
        Some(v) => raw.offset_vector(v, "Model.buffers")?,
        None => Vec::new(),
    };
    let metadata_tables = match target(6)? {
        Some(v) => raw.offset_vector(v, "Model.metadata")?,
        None => Vec::new(),
    };
    // keep the metadata entries but any offline plan; reuse its buffer when nothing else uses it
    let mut kept = Vec::new();
    let mut old_plan_buffer = None;
    let metadata = get!(model.metadata(), "Model.metadata");
    for (i, &pos) in metadata_tables.iter().enumerate() {
        let m = metadata
            .as_ref()
            .and_then(|v| v.get(i))
            .ok_or_else(|| Error::parse("Model.metadata changed under reading"))?;
        let m = get!(m, format!("metadata {i}"));
        if names_offline_plan(m.name(), &format!("metadata {i}"))? {
            old_plan_buffer.get_or_insert(get!(m.buffer(), format!("metadata {i}")));
        } else {
            kept.push((pos, get!(m.buffer(), format!("metadata {i}"))));
        }
    }
    let mut buffer_used = alloc::vec![false; buffer_tables.len()];
    for (s, sg) in subgraphs.iter().enumerate() {
        let at = format!("subgraph {s}");
        for t in get!(get!(sg, at).tensors(), at).into_iter().flatten() {
            let b = get!(get!(t, at).buffer(), at) as usize;
            if let Some(u) = buffer_used.get_mut(b) {
                *u = true;
            }
        }
    }
    for &(_, b) in &kept {
        if let Some(u) = buffer_used.get_mut(b as usize) {
            *u = true;
        }
    }
    let plan_buffer = match old_plan_buffer {
        Some(b) if (b as usize) < buffer_tables.len() && !buffer_used[b as usize] => b as usize,
        _ => buffer_tables.len(),
    };
    let n_buffers = buffer_tables.len().max(plan_buffer + 1);

    // The inserted region: positions are absolute (the region starts at byte 8), `shift` is
    // added to every original position once the region's length is known. Two passes: the
    // first measures, the second writes with the final shift.
    let mut shift = 0usize;
    for _ in 0..2 {
        let mut w = Writer { out: Vec::new() };
        let old = |p: usize| p + shift; // an original position, moved
                                        // Model: vtable, then table (version + 9 offset fields)
        let vt = w.pos();
        let mut slots = [0u16; 10];
        let present: Vec<usize> = (0..10)
            .filter(|&id| id == 4 || id == 6 || fields.get(id).copied().flatten().is_some())
            .collect();
        for (k, &id) in present.iter().enumerate() {
            slots[id] = 4 + 4 * k as u16;
        }
        w.u16(4 + 2 * 10);
        w.u16(4 + 4 * present.len() as u16);
        for s in slots {
            w.u16(s);
        }
        w.align(4);
        let table = w.pos();
        w.i32((table - vt) as i32);
        let mut fixups: Vec<(usize, usize)> = Vec::new(); // field pos, field id
        for &id in &present {
            let p = w.pos();
            if id == 0 {
                let at = fields[0].unwrap_or(0);
                w.u32(if at == 0 { 0 } else { raw.u32(at)? });
            } else {
                w.u32(0);
                fixups.push((p, id));
            }
        }
        // buffers vector
        let buffers_vec = w.pos();
        w.u32(n_buffers as u32);
        let mut plan_slot = 0;
        for i in 0..n_buffers {
            let p = w.pos();
            match buffer_tables.get(i) {
                Some(&table) if i != plan_buffer => w.u32(old(table).wrapping_sub(p) as u32),
                _ => {
                    plan_slot = p;
                    w.u32(0);
                }
            }
        }
        // metadata vector: the kept entries, then the plan
        let metadata_vec = w.pos();
        w.u32(kept.len() as u32 + 1);
        for &(pos, _) in &kept {
            let p = w.pos();
            w.u32(old(pos).wrapping_sub(p) as u32);
        }
        let meta_slot = w.pos();
        w.u32(0);
        // Metadata {name, buffer}
        let mvt = w.pos();
        w.u16(8);
        w.u16(12);
        w.u16(4);
        w.u16(8);
        let mtable = w.pos();
        w.i32((mtable - mvt) as i32);
        let name_slot = w.pos();
        w.u32(0);
        w.u32(plan_buffer as u32);
        let name = w.pos();
        w.u32(OFFLINE_PLAN_METADATA.len() as u32);
        w.out.extend_from_slice(OFFLINE_PLAN_METADATA.as_bytes());
        w.out.push(0);
        w.align(4);
        // Buffer {data}
        let bvt = w.pos();
        w.u16(6);
        w.u16(8);
        w.u16(4);
        w.align(4);
        let btable = w.pos();
        w.i32((btable - bvt) as i32);
        let data_slot = w.pos();
        w.u32(0);
        // data: 16-byte aligned (schema: force_align 16)
        while (w.pos() + 4) % 16 != 0 {
            w.out.push(0);
        }
        let data = w.pos();
        w.u32(words.len() as u32);
        w.out.extend_from_slice(&words);
        // the region's length is the shift of every original byte: a multiple of 16 keeps
        // every buffer's alignment
        while w.out.len() % 16 != 0 {
            w.out.push(0);
        }
        // links
        for (p, id) in fixups {
            let to = match id {
                4 => buffers_vec,
                6 => metadata_vec,
                _ => old(target(id)?.unwrap_or(0)),
            };
            w.set(p, to);
        }
        w.set(plan_slot, btable);
        w.set(meta_slot, mtable);
        w.set(name_slot, name);
        w.set(data_slot, data);
        if shift == w.out.len() {
            let mut out = Vec::with_capacity(bytes.len() + shift);
            out.extend_from_slice(&(table as u32).to_le_bytes());
            out.extend_from_slice(b"TFL3");
            out.extend_from_slice(&w.out);
            out.extend_from_slice(&bytes[8..]);
            // buffers stored past the flatbuffer: their absolute offsets move too
            if let Some(list) = get!(model.buffers(), "Model.buffers") {
                for (i, b) in list.iter().enumerate() {
                    let at = format!("buffer {i}");
                    let b = get!(b, at);
                    if get!(b.offset(), at) > 1 {
                        let pos = raw
                            .table_fields(buffer_tables[i], "a Buffer table")?
                            .get(1)
                            .copied()
                            .flatten()
                            .ok_or_else(|| Error::parse("Buffer.offset vanished"))?;
                        let at_new = pos + shift;
                        let v = u64::from_le_bytes(
                            out[at_new..at_new + 8]
                                .try_into()
                                .map_err(|_| Error::parse("Buffer.offset cut short"))?,
                        );
                        let v = crate::error::add(v, shift as u64, "Buffer.offset")?;
                        out[at_new..at_new + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
            }
            if out.len() > i32::MAX as usize {
                return Err(Error::overflow(
                    "the planned model: a flatbuffer is at most 2 GB",
                ));
            }
            let back = read_offline_plan(&out).map_err(|e| e.at("the written model"))?;
            if back.as_ref().map(|p| p.offsets.as_slice()) != Some(offsets) {
                return Err(Error::invalid(
                    "the written model does not read back with the plan written (a bug)",
                ));
            }
            return Ok(out);
        }
        shift = w.out.len();
    }
    Err(Error::invalid("the inserted region did not settle (a bug)"))
}

/// Bytes written at absolute positions from 8 on.
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn pos(&self) -> usize {
        8 + self.out.len()
    }
    fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn align(&mut self, a: usize) {
        while self.pos() % a != 0 {
            self.out.push(0);
        }
    }
    /// Sets the uoffset at `at` to point at `to` (both absolute, `to` after `at`).
    #[allow(clippy::cast_possible_truncation)] // positions are under 2 GB
    fn set(&mut self, at: usize, to: usize) {
        let v = to.wrapping_sub(at) as u32;
        self.out[at - 8..at - 8 + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// Checked reads of the raw flatbuffer (the positions the writer needs; planus has checked
/// the same tables already, these checks only keep a bug from panicking).
struct Raw<'a> {
    b: &'a [u8],
}

impl Raw<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> Result<[u8; N]> {
        self.b
            .get(at..at.saturating_add(N))
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| Error::parse(format!("the flatbuffer is cut short at byte {at}")))
    }
    fn u32(&self, at: usize) -> Result<u32> {
        self.bytes::<4>(at).map(u32::from_le_bytes)
    }
    fn u16(&self, at: usize) -> Result<u16> {
        self.bytes::<2>(at).map(u16::from_le_bytes)
    }
    /// The position a uoffset at `at` points to.
    fn forward(&self, at: usize, what: &str) -> Result<usize> {
        let to = at
            .checked_add(self.u32(at)? as usize)
            .filter(|&t| t < self.b.len())
            .ok_or_else(|| Error::parse(format!("{what} points outside the file")))?;
        Ok(to)
    }
    /// The absolute position of each field of the table at `table` (`None`: absent).
    fn table_fields(&self, table: usize, what: &str) -> Result<Vec<Option<usize>>> {
        let soff = i64::from(i32::from_le_bytes(self.bytes::<4>(table)?));
        let vt = usize::try_from(table as i64 - soff)
            .map_err(|_| Error::parse(format!("{what}: its vtable lies before the file")))?;
        let vt_len = self.u16(vt)? as usize;
        let t_len = self.u16(vt + 2)? as usize;
        let mut out = Vec::new();
        for i in 0..vt_len.saturating_sub(4) / 2 {
            let off = self.u16(vt + 4 + 2 * i)? as usize;
            if off != 0 && off >= t_len {
                return Err(Error::parse(format!(
                    "{what}: a field lies outside its table"
                )));
            }
            out.push((off != 0).then_some(table + off));
        }
        Ok(out)
    }
    /// The absolute positions a vector of uoffsets at `v` points to.
    fn offset_vector(&self, v: usize, what: &str) -> Result<Vec<usize>> {
        let n = self.u32(v)? as usize;
        if n > self.b.len() / 4 {
            return Err(Error::parse(format!("{what}: length {n} exceeds the file")));
        }
        (0..n).map(|i| self.forward(v + 4 + 4 * i, what)).collect()
    }
}
