//! Reading inputs: format by extension or content, errors naming the file.

use std::path::Path;

use memplan_core::import::load::{load, Format, LoadOptions, Loaded};
use memplan_core::import::onnx::{self, OnnxOptions};
use memplan_core::{Error, PlanOptions};

/// `Some(first byte)` when the file starts (after whitespace) like JSON (`{`) or a CSV
/// header (`id,`), else `None`.
fn sniff_text(bytes: &[u8]) -> Option<u8> {
    let t = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &bytes[i..]);
    (t.first() == Some(&b'{') || t.starts_with(b"id,")).then(|| t[0])
}

/// Default plan options for what a file held: GE defaults (512 alignment, GE padding) for a
/// graph, TFLM's for a TFLite model ([`Format::default_plan_options`]: 16 B, no padding,
/// inputs and outputs in the arena), exact sizes for a bare buffer list (MiniMalloc CSV).
pub fn default_options(loaded: &Loaded) -> PlanOptions {
    match loaded.format {
        Format::Csv => PlanOptions::exact(),
        Format::GraphJson | Format::Onnx | Format::Tflite => loaded.format.default_plan_options(),
    }
}

/// The most bytes any input may have: 2 GiB, protobuf's limit on one message (an ONNX model),
/// far above any graph JSON, buffer CSV or plan file. An input with no end (a character
/// device such as `/dev/zero`, a pipe that never closes) is refused once it passes it, instead
/// of being read until memory runs out.
/// The environment variable `MEMPLAN_MAX_INPUT_BYTES` lowers (or raises) it.
pub const MAX_INPUT_BYTES: u64 = 2 << 30;

/// [`MAX_INPUT_BYTES`], or `MEMPLAN_MAX_INPUT_BYTES` when set to a number.
fn input_cap() -> u64 {
    std::env::var("MEMPLAN_MAX_INPUT_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(MAX_INPUT_BYTES)
}

/// Reads at most [`MAX_INPUT_BYTES`] (or `MEMPLAN_MAX_INPUT_BYTES`) of `path`.
///
/// # Errors
/// An unreadable file, or one larger than the cap, naming the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let shown = path.display().to_string();
    let cannot = |e: std::io::Error| Error::invalid(format!("cannot read: {e}")).at(&shown);
    let file = std::fs::File::open(path).map_err(cannot)?;
    let cap = input_cap();
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > cap {
        return Err(Error::invalid(format!(
            "larger than the input size cap of {} (protobuf's 2 GiB message limit; MEMPLAN_MAX_INPUT_BYTES changes it): is it a device or a pipe that never ends?",
            memplan_core::units::with_exact(cap)
        ))
        .at(&shown));
    }
    Ok(bytes)
}

/// The bytes [`read_bytes`] read from `path` as UTF-8 text, a leading byte-order mark dropped.
///
/// # Errors
/// Text that is not UTF-8, naming the file.
pub fn text_of(bytes: Vec<u8>, path: &Path) -> Result<String, Error> {
    let text = String::from_utf8(bytes)
        .map_err(|e| Error::parse(format!("not UTF-8: {e}")).at(path.display()))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Reads `path` and loads it with core's pipeline ([`memplan_core::import::load`]); errors
/// name the file. The command line asks nothing back: a setting the load could not apply
/// (a dim whose default of 1 is impossible, [`Loaded::refused`]) is the command's error, as
/// the importer words it (the warnings say which `--dim` to give).
pub fn read(path: &Path, opts: &LoadOptions) -> Result<Loaded, Error> {
    let shown = path.display().to_string();
    let bytes = read_bytes(path)?;
    let loaded = load(&shown, &bytes, opts).map_err(|e| e.at(&shown))?;
    match loaded.refused() {
        // the dims whose default of 1 broke the import, worded for the command line
        Some(e) => {
            let dims = loaded
                .diagnostics
                .iter()
                .map(|d| match &d.setting {
                    memplan_core::import::load::Setting::Dim(name) => name.clone(),
                })
                .collect();
            Err(e.clone().with_dims_to_set(dims).at(&shown))
        }
        None => Ok(loaded),
    }
}

/// Whether `path` is a TFLite model: by its extension when it has a known one, else by the
/// identifier `TFL3` at bytes 4..8 ([`Format::detect`]).
pub fn is_tflite(path: &Path) -> Result<bool, Error> {
    use std::io::Read;
    let shown = path.display().to_string();
    if let Some(f) = Format::by_extension(&shown) {
        return Ok(f == Format::Tflite);
    }
    let mut head = Vec::with_capacity(8);
    std::fs::File::open(path)
        .and_then(|f| f.take(8).read_to_end(&mut head))
        .map_err(|e| Error::invalid(format!("cannot read: {e}")).at(&shown))?;
    Ok(Format::sniff(&head) == Format::Tflite)
}

/// [`read`], also handing back the file's bytes (a TFLite model to export a plan into).
pub fn read_keeping_bytes(path: &Path, opts: &LoadOptions) -> Result<(Loaded, Vec<u8>), Error> {
    let shown = path.display().to_string();
    let bytes = read_bytes(path)?;
    let loaded = load(&shown, &bytes, opts).map_err(|e| e.at(&shown))?;
    Ok((loaded, bytes))
}

/// Reads an ONNX file for `memplan inspect`.
pub fn read_onnx(path: &Path, shapes: &LoadOptions) -> Result<onnx::OnnxModel, Error> {
    let shown = path.display().to_string();
    let bytes = read_bytes(path)?;
    if sniff_text(&bytes).is_some() {
        return Err(Error::parse(
            "inspect reads ONNX models; this is text (JSON or CSV): plan it with `memplan plan`, check a plan file with `memplan validate`",
        )
        .at(&shown));
    }
    let opts = OnnxOptions {
        dims: shapes.dims.clone(),
        inputs: shapes.inputs.clone(),
    };
    onnx::parse(&bytes, &opts).map_err(|e| e.at(&shown))
}
