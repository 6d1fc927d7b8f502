//! Dims and small integer values during inference: a number or a symbolic expression.

use alloc::format;
use alloc::string::{String, ToString};

use crate::graph::Dim;

/// A dim or an integer element: known, a symbol name, or an expression over symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum V {
    /// A known integer.
    K(i64),
    /// A symbol, by name (as in the file, or made up for anonymous dims).
    N(String),
    /// An expression over symbols (`+ - * /` with `/` flooring, `max(a,b)`), see
    /// [`crate::graph::eval_dim`].
    E(String),
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl V {
    /// The known value, if any.
    pub(crate) fn k(&self) -> Option<i64> {
        match self {
            V::K(n) => Some(*n),
            _ => None,
        }
    }

    /// Renders for use inside a larger expression.
    fn atom(&self) -> String {
        match self {
            V::K(n) if *n < 0 => format!("({n})"),
            V::K(n) => n.to_string(),
            V::N(s) if is_ident(s) => s.clone(),
            V::N(s) => format!("[{s}]"),
            V::E(e) => format!("({e})"),
        }
    }

    /// The graph's dim: known values must be non-negative (checked by the caller).
    pub(crate) fn to_dim(&self) -> Dim {
        match self {
            V::K(n) => Dim::Known(u64::try_from(*n).unwrap_or(0)),
            V::N(s) | V::E(s) => Dim::Sym(s.clone()),
        }
    }

    pub(crate) fn add(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(a.checked_add(*b)?),
            (x, V::K(0)) | (V::K(0), x) => x.clone(),
            (x, V::K(b)) if *b < 0 => V::E(format!("{}-{}", x.atom(), -(*b as i128))),
            _ => V::E(format!("{}+{}", self.atom(), o.atom())),
        })
    }

    pub(crate) fn sub(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(a.checked_sub(*b)?),
            (x, V::K(0)) => x.clone(),
            (a, b) if a == b => V::K(0),
            _ => V::E(format!("{}-{}", self.atom(), o.atom())),
        })
    }

    pub(crate) fn mul(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(a.checked_mul(*b)?),
            (x, V::K(1)) | (V::K(1), x) => x.clone(),
            (_, V::K(0)) | (V::K(0), _) => V::K(0),
            _ => V::E(format!("{}*{}", self.atom(), o.atom())),
        })
    }

    /// Floor division.
    pub(crate) fn div(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => {
                if *b == 0 {
                    return None;
                }
                V::K(a.checked_div_euclid(*b)?)
            }
            (x, V::K(1)) => x.clone(),
            (a, b) if a == b => V::K(1),
            _ => V::E(format!("{}/{}", self.atom(), o.atom())),
        })
    }

    /// Ceiling division (positive divisor).
    pub(crate) fn ceil_div(&self, o: &V) -> Option<V> {
        self.add(&o.sub(&V::K(1))?)?.div(o)
    }

    pub(crate) fn max(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(*a.max(b)),
            (a, b) if a == b => a.clone(),
            _ => V::E(format!("max({},{})", self.atom(), o.atom())),
        })
    }

    pub(crate) fn min(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(*a.min(b)),
            (a, b) if a == b => a.clone(),
            _ => V::E(format!("min({},{})", self.atom(), o.atom())),
        })
    }
}

/// Product of dims, checked.
pub(crate) fn product(dims: &[V]) -> Option<V> {
    dims.iter().try_fold(V::K(1), |acc, d| acc.mul(d))
}
