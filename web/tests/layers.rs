//! The playground's layers, as `core/tests/layers.rs` checks the core's (ARCHITECTURE.md, "The
//! playground's state"): the pure modules (planning, settings, models, links, formats, the
//! worker's messages, exports, the timeline's drawing, and the page's state with its reducer,
//! `state.rs`) name neither Yew, the browser
//! (`platform`), nor the component (`app`), so native tests run them and no import circle can
//! come back through them; one pane (`pane.rs`) names no part of the component either.

use std::path::Path;

/// Modules that must stay plain Rust: no `yew`, no `platform`, no `app`.
const PURE: &[&str] = &[
    "state", "analysis", "settings", "model", "share", "format", "samples", "worker", "export",
    "timeline",
];

/// Modules that may use Yew but must not name the component (`app`).
const BELOW_THE_COMPONENT: &[&str] = &["pane", "occupancy"];

/// The code of a file: comments and `#[cfg(test)]` modules left out (a test may use anything).
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

fn read(module: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(format!("{module}.rs"));
    code(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn names(code: &str, what: &str) -> bool {
    code.match_indices(what).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + what.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn pure_modules_name_neither_yew_nor_the_browser_nor_the_component() {
    let mut leaks = Vec::new();
    for m in PURE {
        let c = read(m);
        for what in ["yew", "platform", "app", "web_sys", "js_sys", "gloo"] {
            if names(&c, &format!("crate::{what}")) || names(&c, &format!("{what}::")) {
                leaks.push(format!("{m}.rs names {what}"));
            }
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}

#[test]
fn a_pane_does_not_name_the_component() {
    for m in BELOW_THE_COMPONENT {
        let c = read(m);
        assert!(
            !names(&c, "crate::app") && !names(&c, "app::"),
            "{m}.rs names the component (app.rs): an import circle"
        );
    }
}
