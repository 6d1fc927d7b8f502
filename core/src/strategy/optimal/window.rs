//! Window search for large inputs (placeholder).

use alloc::vec::Vec;

use super::instance::Item;
use super::search::Limits;
use super::SolverParams;

/// Improves `offsets` (a valid plan of `items`) window by window; returns the offsets and the
/// proven lower bound.
pub(crate) fn improve(
    _items: &[Item],
    offsets: Vec<u64>,
    lb: u64,
    _capacity: Option<u64>,
    _params: &SolverParams,
    _limits: &mut Limits<'_>,
) -> (Vec<u64>, u64) {
    (offsets, lb)
}
