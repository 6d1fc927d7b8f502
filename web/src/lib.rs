//! The playground's pure modules (no browser calls): formats, model loading, settings and the
//! share-link codec. A library so that the app, its native unit tests and the fuzz targets
//! (`fuzz/fuzz_targets/share_fragment.rs`) share one copy.

pub mod format;
pub mod model;
pub mod samples;
pub mod settings;
pub mod share;
pub mod tflm;
