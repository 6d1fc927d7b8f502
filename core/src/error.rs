//! The one error type of the core: an opaque struct with a kind, a location and a message.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// What went wrong, coarsely; the message says precisely what and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Input text or bytes could not be parsed (bad CSV row, bad JSON, bad protobuf).
    Parse,
    /// Input parsed but is inconsistent (unknown tensor, duplicate id, cycle, lower >= upper).
    Invalid,
    /// A size or offset computation would overflow `u64`.
    Overflow,
    /// A strategy name that is not registered.
    UnknownStrategy,
    /// An option value out of range (alignment not a power of two, empty gear list, ...).
    BadOption,
    /// The request cannot be met (capacity below the lower bound, ...).
    Infeasible,
}

/// An error with a location (`file:line`, `op 'conv1'`, `tensor 'x'`) and a one-line message.
///
/// `Display` prints `location: message` (or just the message without a location), one line,
/// suitable as the CLI's final error line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    /// Context path, outermost first (`file`, `op 'If_3'`, `branch then`, ...).
    location: Vec<String>,
    message: String,
    /// Symbolic dims the load pipeline set to 1 by default that this error follows from
    /// ([`Error::dims_to_set`]).
    dims_to_set: Vec<String>,
}

/// Context levels shown in full; deeper paths (an ONNX `If` nested 40 deep) show their first
/// and last levels and count the rest, so a message stays readable.
const SHOWN_LEVELS: usize = 8;

impl Error {
    /// A new error of `kind` with `message` and no location.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            location: Vec::new(),
            message: message.into(),
            dims_to_set: Vec::new(),
        }
    }

    /// Shorthand for [`ErrorKind::Parse`].
    pub fn parse(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Parse, message)
    }

    /// Shorthand for [`ErrorKind::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }

    /// Shorthand for [`ErrorKind::Overflow`]; `what` names the computation.
    pub fn overflow(what: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Overflow, alloc::format!("{what} overflows u64"))
    }

    /// Shorthand for [`ErrorKind::BadOption`].
    pub fn bad_option(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadOption, message)
    }

    /// Sets the location, or prefixes it to an existing one (`file: op 'x'`).
    #[must_use]
    pub fn at(mut self, location: impl fmt::Display) -> Self {
        self.location.insert(0, location.to_string());
        self
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The location, if any (`file.csv:3`, `model.onnx: op 'conv1'`): every level, outermost
    /// first, joined by `: `.
    pub fn location(&self) -> Option<String> {
        (!self.location.is_empty()).then(|| self.location.join(": "))
    }

    /// The message without the location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// This error follows from symbolic dims left unbound and set to 1 by default: the
    /// message says so and which to give a value (`--dim NAME=VALUE`, the playground's dims
    /// form); [`Error::dims_to_set`] lists them. Without names, unchanged.
    #[must_use]
    pub fn with_dims_to_set(mut self, dims: Vec<String>) -> Self {
        if dims.is_empty() {
            return self;
        }
        let quoted: Vec<String> = dims.iter().map(|d| alloc::format!("'{d}'")).collect();
        let (were, them) = if dims.len() == 1 {
            ("dim", "give it a value")
        } else {
            ("dims", "give them values")
        };
        self.message = alloc::format!(
            "{} (the unbound {were} {} set to 1 by default: {them}, e.g. --dim {}=VALUE)",
            self.message,
            quoted.join(" and "),
            dims[0]
        );
        self.dims_to_set = dims;
        self
    }

    /// The symbolic dims set to 1 by default that this error follows from (empty when none
    /// does): what to bind to get past it.
    pub fn dims_to_set(&self) -> &[String] {
        &self.dims_to_set
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.location.len();
        for (k, level) in self.location.iter().enumerate() {
            if n > SHOWN_LEVELS && k >= SHOWN_LEVELS / 2 && k < n - SHOWN_LEVELS / 2 {
                if k == SHOWN_LEVELS / 2 {
                    write!(f, "({} more levels): ", n - SHOWN_LEVELS)?;
                }
                continue;
            }
            write!(f, "{level}: ")?;
        }
        f.write_str(&self.message)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Result with the core's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Checked `a + b` for byte sizes and offsets; the error names `what`.
pub fn add(a: u64, b: u64, what: impl fmt::Display) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| Error::overflow(what))
}

/// Checked `a * b`; the error names `what`.
pub fn mul(a: u64, b: u64, what: impl fmt::Display) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| Error::overflow(what))
}

/// Rounds `x` up to a multiple of `align` (`align` ≥ 1, not necessarily a power of two), checked.
pub fn round_up(x: u64, align: u64, what: impl fmt::Display) -> Result<u64> {
    let align = align.max(1);
    match x % align {
        0 => Ok(x),
        r => add(x, align - r, what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn display_has_location_then_message() {
        let e = Error::invalid("unknown tensor 'x'")
            .at("op 'conv1'")
            .at("m.json");
        assert_eq!(e.to_string(), "m.json: op 'conv1': unknown tensor 'x'");
        assert_eq!(e.kind(), ErrorKind::Invalid);
    }

    #[test]
    fn a_deep_path_shows_its_ends_and_counts_the_middle() {
        let mut e = Error::invalid("no such input");
        for k in (0..40).rev() {
            e = e.at(alloc::format!("If_{k}"));
        }
        let e = e.at("m.onnx");
        // 41 levels: m.onnx, If_0..If_2 shown; 33 counted; If_36..If_39 shown
        assert_eq!(
            e.to_string(),
            "m.onnx: If_0: If_1: If_2: (33 more levels): If_36: If_37: If_38: If_39: no such input"
        );
        assert_eq!(e.location().map(|l| l.matches(": ").count()), Some(40));
    }

    #[test]
    fn round_up_checks_overflow() {
        assert_eq!(round_up(513, 512, "x").unwrap(), 1024);
        assert_eq!(round_up(0, 512, "x").unwrap(), 0);
        assert_eq!(round_up(7, 3, "x").unwrap(), 9);
        assert_eq!(
            round_up(u64::MAX, 512, "size of 'x'").unwrap_err().kind(),
            ErrorKind::Overflow
        );
    }
}
