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

    /// Renders as the left operand of `+` or `-`: no parentheses needed (lowest precedence,
    /// left-associative), which keeps chains of shape arithmetic flat.
    fn left(&self) -> String {
        match self {
            V::E(e) => e.clone(),
            _ => self.atom(),
        }
    }

    pub(crate) fn add(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(a.checked_add(*b)?),
            (x, V::K(0)) | (V::K(0), x) => x.clone(),
            // fold constants: (A + c) + b = A + (c + b)
            (V::E(e), V::K(b)) | (V::K(b), V::E(e)) if split_const(e).is_some() => {
                let (rest, c) = split_const(e)?;
                let n = c.checked_add(i128::from(*b))?;
                match n.cmp(&0) {
                    core::cmp::Ordering::Equal => from_text(rest),
                    core::cmp::Ordering::Greater => V::E(format!("{rest}+{n}")),
                    core::cmp::Ordering::Less => V::E(format!("{rest}-{}", -n)),
                }
            }
            (x, V::K(b)) if *b < 0 => V::E(format!("{}-{}", x.left(), -i128::from(*b))),
            (V::K(_), x) => V::E(format!("{}+{}", x.left(), self.atom())),
            _ => V::E(format!("{}+{}", self.left(), o.atom())),
        })
    }

    pub(crate) fn sub(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(a.checked_sub(*b)?),
            (x, V::K(b)) => x.add(&V::K(b.checked_neg()?))?,
            (a, b) if a == b => V::K(0),
            _ => V::E(format!("{}-{}", self.left(), o.atom())),
        })
    }

    pub(crate) fn mul(&self, o: &V) -> Option<V> {
        Some(match (self, o) {
            (V::K(a), V::K(b)) => V::K(a.checked_mul(*b)?),
            (x, V::K(1)) | (V::K(1), x) => x.clone(),
            (_, V::K(0)) | (V::K(0), _) => V::K(0),
            // constants go on the right, where they fold
            (V::K(_), x) => x.mul(self)?,
            // (A * c) * b = A * (c * b)
            (V::E(e), V::K(b)) if split_mul(e).is_some() => {
                let (rest, c) = split_mul(e)?;
                from_text(rest).mul(&V::K(i64::try_from(c.checked_mul(i128::from(*b))?).ok()?))?
            }
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
            // (A * c) / d = A * (c / d) when d divides c (A is an integer)
            (V::E(e), V::K(d))
                if *d > 0 && split_mul(e).is_some_and(|(_, c)| c % i128::from(*d) == 0) =>
            {
                let (rest, c) = split_mul(e)?;
                from_text(rest).mul(&V::K(i64::try_from(c / i128::from(*d)).ok()?))?
            }
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

/// Splits `A op c`, where `c` is the trailing integer constant and `op` (one of `ops`) the
/// last top-level operation, into `A`, the operator and `c`. With `sums_in_a == false`, `A`
/// may hold no top-level `+` or `-` (so that `A*c` means `(A)*c`).
fn split_top<'e>(e: &'e str, ops: &[u8], sums_in_a: bool) -> Option<(&'e str, u8, i128)> {
    let digits = e.len() - e.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits >= e.len() {
        return None;
    }
    let at = e.len() - digits - 1;
    let op = e.as_bytes()[at];
    if !ops.contains(&op) {
        return None;
    }
    let rest = &e[..at];
    // the operator must be at the top level: brackets and parentheses closed before it
    let (mut paren, mut bracket) = (0i64, false);
    for c in rest.bytes() {
        match c {
            b'[' => bracket = true,
            b']' => bracket = false,
            b'(' if !bracket => paren += 1,
            b')' if !bracket => paren -= 1,
            b'+' | b'-' if !bracket && paren == 0 && !sums_in_a => return None,
            _ => {}
        }
    }
    if paren != 0 || bracket || rest.is_empty() || rest.ends_with(['+', '-', '*', '/', '(', ',']) {
        return None;
    }
    Some((rest, op, e[at + 1..].parse().ok()?))
}

/// `A*c` into `A` and `c` (see [`split_top`]).
fn split_mul(e: &str) -> Option<(&str, i128)> {
    split_top(e, b"*", false).map(|(a, _, c)| (a, c))
}

/// `A+c` / `A-c` into `A` and `±c` (see [`split_top`]).
fn split_const(e: &str) -> Option<(&str, i128)> {
    split_top(e, b"+-", true).map(|(a, op, c)| (a, if op == b'-' { -c } else { c }))
}

/// A value from its rendering: a plain or bracketed name becomes [`V::N`], else [`V::E`].
fn from_text(t: &str) -> V {
    if is_ident(t) {
        return V::N(t.to_string());
    }
    if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        if !inner.contains([']', '[']) {
            return V::N(inner.to_string());
        }
    }
    V::E(t.to_string())
}

/// Product of dims, checked.
pub(crate) fn product(dims: &[V]) -> Option<V> {
    dims.iter().try_fold(V::K(1), |acc, d| acc.mul(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> V {
        V::N(s.into())
    }

    #[test]
    fn constant_chains_fold() {
        // conv arithmetic: ((h + 2) - 3) / 2 + 1, then - 1 + 1
        let h = n("h");
        let v = h.add(&V::K(2)).unwrap().sub(&V::K(3)).unwrap();
        assert_eq!(v, V::E("h-1".into()));
        let v = v.div(&V::K(2)).unwrap().add(&V::K(1)).unwrap();
        assert_eq!(v, V::E("(h-1)/2+1".into()));
        assert_eq!(v.sub(&V::K(1)).unwrap().add(&V::K(1)).unwrap(), v);
        assert_eq!(h.add(&V::K(3)).unwrap().sub(&V::K(3)).unwrap(), h);
        assert_eq!(
            n("seq len").add(&V::K(1)).unwrap().sub(&V::K(1)).unwrap(),
            n("seq len")
        );
    }

    #[test]
    fn products_cancel_known_factors() {
        // Reshape's -1: (batch * 197 * 768) / (197 * 768) = batch
        let b = n("batch");
        let v = product(&[b.clone(), V::K(197), V::K(768)]).unwrap();
        assert_eq!(v, V::E("batch*151296".into()));
        assert_eq!(v.div(&V::K(151_296)).unwrap(), b);
        assert_eq!(v.div(&V::K(768)).unwrap(), V::E("batch*197".into()));
        // not a divisor: left alone
        assert_eq!(v.div(&V::K(5)).unwrap(), V::E("(batch*151296)/5".into()));
        // a parenthesised sum times a constant cancels too; a bare sum is not split
        let s = b.add(&V::K(1)).unwrap().mul(&V::K(4)).unwrap();
        assert_eq!(s.div(&V::K(4)).unwrap(), V::E("(batch+1)".into()));
        assert_eq!(split_mul("batch+1*4"), None);
    }

    #[test]
    fn folded_expressions_evaluate_as_before() {
        let mut bind = crate::graph::Bindings::new();
        bind.insert("h".into(), 224);
        let v = n("h")
            .add(&V::K(2))
            .unwrap()
            .sub(&V::K(3))
            .unwrap()
            .div(&V::K(2))
            .unwrap();
        let v = v.add(&V::K(1)).unwrap();
        let V::E(e) = v else { panic!("expression") };
        assert_eq!(
            crate::graph::eval_dim(&e, &bind),
            Some((224 + 2 - 3) / 2 + 1)
        );
    }
}
