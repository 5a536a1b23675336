//! The kernel registry and the L2 pipeline: selection and measurement, the
//! autotune cache, L2 through the registry against L2 direct, and L2's
//! modes and outputs.

mod cache;
mod l2;
mod l2_pipeline;
mod select;
