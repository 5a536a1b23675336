//! Core of cortex: the graph model shared by the `cortex_graph!` macro and the
//! runtime, its validation rules, the dead-node-elimination pass and plans,
//! runtime support (observer, profiler, visualizer, exporters) and, behind the
//! `ops` feature, the vision kernels of the reference ROI pipeline.

#[cfg(feature = "ops")]
pub mod ops;

pub mod weights;

pub use weights::Weights;
