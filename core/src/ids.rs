//! Typed indices: a tensor id cannot be passed where an op id or a buffer id is meant.
//!
//! Each id is the position of its item in the one vector that owns it (`TensorId` in
//! `Graph::tensors`, `OpId` in `Graph::ops`). Vectors of those items can be indexed by their
//! id directly (`graph.tensors[t]`); `index()` gives the bare position for arithmetic and for
//! vectors kept alongside (`readers[t.index()]`). The modules owning the items declare the
//! ids with [`typed_id!`], so this module names no other.

/// Declares `$name`, a typed index. Any vector or slice can be indexed by it: the owning
/// vector and the per-item vectors kept alongside (`last_use[t]`).
macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(transparent))]
        pub struct $name(usize);

        impl $name {
            /// The largest id (a bound for range queries over ids).
            pub const MAX: Self = Self(usize::MAX);

            /// The id of the item at `index`.
            pub const fn new(index: usize) -> Self {
                Self(index)
            }

            /// The item's position in its owning vector.
            pub const fn index(self) -> usize {
                self.0
            }

            /// The ids of the items at `indices`, in that order (graph builders, tests).
            pub fn list(indices: &[usize]) -> alloc::vec::Vec<Self> {
                indices.iter().map(|&i| Self(i)).collect()
            }

            /// Ids `0..n`, in order.
            pub fn all(n: usize) -> impl DoubleEndedIterator<Item = Self> + ExactSizeIterator {
                (0..n).map(Self)
            }
        }

        impl From<usize> for $name {
            fn from(index: usize) -> Self {
                Self(index)
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl<T> core::ops::Index<$name> for alloc::vec::Vec<T> {
            type Output = T;
            fn index(&self, id: $name) -> &T {
                &self[id.0]
            }
        }

        impl<T> core::ops::IndexMut<$name> for alloc::vec::Vec<T> {
            fn index_mut(&mut self, id: $name) -> &mut T {
                &mut self[id.0]
            }
        }

        impl<T> core::ops::Index<$name> for [T] {
            type Output = T;
            fn index(&self, id: $name) -> &T {
                &self[id.0]
            }
        }

        impl<T> core::ops::IndexMut<$name> for [T] {
            fn index_mut(&mut self, id: $name) -> &mut T {
                &mut self[id.0]
            }
        }
    };
}

pub(crate) use typed_id;
