//! The core's layers point one way. Each top-level module of `core/src` has a layer; its code
//! (comments, doc links and test modules aside) may name only modules of lower layers. A
//! reference upwards is an import circle in the making (see ARCHITECTURE.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layer of each top-level module, lowest first. Same layer = may not name each other.
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("ids", 0),
    ("units", 1),
    ("dtype", 1),
    ("problem", 2),
    ("plan", 3),
    ("bound", 4),
    ("validate", 4),
    ("graph", 4),
    ("import", 5),
    ("strategy", 5),
    ("simulate", 5),
    ("explain", 4),
    ("report", 6),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read core/src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)]` modules (a test may
/// use anything).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth = 0i64;
    let mut pending_test = false;
    for line in text.lines() {
        let l = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let t = l.trim();
        if t.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        if pending_test && skip_depth.is_none() && t.starts_with("mod ") {
            if t.ends_with(';') {
                pending_test = false;
                continue;
            }
            skip_depth = Some(depth);
        }
        pending_test = pending_test && t.is_empty();
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        match skip_depth {
            Some(d) if depth <= d && l.contains('}') => skip_depth = None,
            Some(_) => {}
            None => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn core_modules_only_name_lower_layers() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "core/src has its modules");
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("name")
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let Some(&mine) = layer.get(top.as_str()) else {
            bad.push(format!(
                "{}: module '{top}' has no layer in LAYERS",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read");
        let body = code(&text);
        // `crate::name` and `use crate::{a, b}`
        let mut named = Vec::new();
        for (i, _) in body.match_indices("crate::") {
            let rest = &body[i + 7..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let m: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    named.push((m, false));
                }
            } else {
                let m: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // `crate::plan::Plan` is the module `plan`; `crate::plan(…)` the root function
                let is_path = rest[m.len()..].starts_with("::");
                named.push((m, is_path));
                continue;
            }
        }
        for (m, is_path) in named {
            if m == top {
                continue;
            }
            // re-exports at the crate root (`crate::Problem`, `crate::plan(…)`) are named by
            // their defining module's layer: look them up in lib.rs
            let target = if is_path && layer.contains_key(m.as_str()) {
                m.clone()
            } else {
                root_item(&src, &m).unwrap_or(m.clone())
            };
            match layer.get(target.as_str()) {
                Some(&theirs) if theirs < mine => {}
                Some(&theirs) => bad.push(format!(
                    "{}: '{top}' (layer {mine}) names crate::{m} ('{target}', layer {theirs})",
                    rel.display()
                )),
                None => bad.push(format!("{}: unknown crate::{m}", rel.display())),
            }
        }
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

/// The module a crate-root item (`pub use module::Item` in lib.rs) comes from.
fn root_item(src: &Path, name: &str) -> Option<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).ok()?;
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (module, items) = rest.split_once("::")?;
        let items = items.trim_end_matches(';');
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for it in items.split(',') {
            let it = it.trim();
            let (orig, alias) = match it.split_once(" as ") {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (it, it),
            };
            if alias == name || orig == name {
                return Some(module.to_string());
            }
        }
    }
    None
}
