//! Text the CLI writes to stdout and stderr. Names come from the model file, and a control
//! character in one (ESC, BEL, CSI) would drive the terminal: set its title, clear it, recolour
//! what follows. Every table, inspect summary, warning and error goes through [`clean`]; JSON
//! through [`json`] (serde_json escapes C0 itself); CSV, data another program reads back, stays
//! exact unless stdout is a terminal ([`csv`]).

use std::borrow::Cow;
use std::io::IsTerminal;

/// Prints a line to stdout with [`clean`] applied (as `println!`), through [`out`]: a
/// `Result` to pass on with `?`, as a closed pipe is an error, not a panic.
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::term::out(&format!("{}\n", format_args!($($t)*)))
    };
}

/// Writes `text` to stdout with [`clean`] applied.
///
/// # Errors
/// The write's error, e.g. "Broken pipe" when the reader (`| head`) has gone: said in one
/// line and exit status 1, as `plan` does, where `print!` panicked.
pub fn out(text: &str) -> Result<(), memplan_core::Error> {
    use std::io::Write;
    std::io::stdout()
        .write_all(clean(text).as_bytes())
        .map_err(|e| memplan_core::Error::invalid(e.to_string()))
}

/// Prints a line to stderr with [`clean`] applied (as `eprintln!`).
macro_rules! errln {
    ($($t:tt)*) => {
        eprint!("{}", $crate::term::clean(&format!("{}\n", format_args!($($t)*))))
    };
}

/// A character that would reach the terminal as a command: a control character (Unicode `Cc`:
/// C0, DEL, C1) other than newline and tab.
fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with each control character but newline and tab written as its Rust escape
/// (`\u{1b}`, `\r`, `\0`), the form `memplan validate` and `Problem::check` write names in
/// (`str::escape_debug`).
pub fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c) {
            s.extend(c.escape_debug());
        } else {
            s.push(c);
        }
    }
    Cow::Owned(s)
}

/// JSON text from serde_json with the control characters it leaves raw (DEL and C1,
/// U+007F..U+009F; it escapes only those below U+0020) written as `\u00XX`: the same JSON
/// value, nothing for a terminal to act on. Outside strings JSON holds no such character.
pub fn json(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c) {
            s.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            s.push(c);
        }
    }
    Cow::Owned(s)
}

/// CSV for stdout: exact when redirected (names read back byte for byte), [`clean`] on a
/// terminal.
pub fn csv(text: &str) -> Cow<'_, str> {
    if std::io::stdout().is_terminal() {
        clean(text)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_but_newline_and_tab_are_escaped() {
        assert_eq!(
            clean("A\u{1b}]0;pwn\u{7}\tb\r\n\u{9b}2J\u{7f}"),
            "A\\u{1b}]0;pwn\\u{7}\tb\\r\n\\u{9b}2J\\u{7f}"
        );
        assert!(matches!(clean("plain\n"), Cow::Borrowed(_)));
        // serde_json leaves C1 raw; \u009b is the same JSON string
        let j = serde_json::to_string("a\u{9b}b\u{1b}").unwrap();
        assert_eq!(json(&j), "\"a\\u009bb\\u001b\"");
        let back: String = serde_json::from_str(&json(&j)).unwrap();
        assert_eq!(back, "a\u{9b}b\u{1b}");
    }
}
