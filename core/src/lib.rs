//! # memplan-core
//!
//! A static memory planner for neural-network graphs. Input: a [`Graph`] of ops and tensors,
//! lowered to a [`Problem`] (buffers with byte sizes and inclusive live ranges in op steps), or
//! a bare list of buffers. Output: a [`Plan`] with an offset for every buffer in one arena,
//! the peak, and (for block strategies) the blocks that explain it.
//!
//! Every plan can be checked with [`validate`], which shares no code with any strategy, and
//! compared with the live-set [`lower_bound`].
//!
//! Sizes and offsets are `u64` bytes on every target; overflow is reported as an
//! [`Error`] of kind [`ErrorKind::Overflow`], never wrapped.
//!
//! ```
//! use memplan_core::{Buffer, Problem, PlanOptions, plan, validate, lower_bound};
//! let p = Problem::from_buffers("chain", vec![
//!     Buffer::new("a", 4, 0, 1), Buffer::new("b", 1, 1, 2), Buffer::new("c", 2, 2, 3),
//! ]);
//! let out = plan(&p, "greedy-size-best-fit", &PlanOptions::exact()).unwrap();
//! assert_eq!(validate(&p, &out), Ok(()));
//! assert_eq!(out.peak, lower_bound(&p).unwrap().lower_bound); // 5 bytes
//! ```
#![no_std]
#![deny(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod bound;
pub mod dtype;
pub mod error;
pub mod explain;
pub mod graph;
mod ids;
pub mod import;
pub mod plan;
pub mod problem;
pub mod report;
pub mod simulate;
pub mod strategy;
pub mod units;
pub mod validate;

pub use bound::{lower_bound, Bounds};
pub use dtype::DType;
pub use error::{Error, ErrorKind, Result};
pub use graph::{Bindings, Dim, Graph, Lowered, Op, OpId, Tensor, TensorId, UnknownTensor};
pub use plan::{
    memory_type_name, Arena, Block, BlockLevel, GeMemoryStats, GeStats, HybridTotals, Padding,
    Plan, PlanOptions,
};
pub use problem::{Buffer, BufferId, BufferKind, Continuous, Flags, OpInfo, Problem};
pub use strategy::{find as find_strategy, plan, strategies, StrategyInfo};
pub use validate::{validate, validate_with, Rules, Violation};
