//! Core of cortex: the graph model shared by the `cortex_graph!` macro and the
//! runtime, its validation rules, the dead-node-elimination pass and plans,
//! runtime support (observer, profiler), tools (listing, exporters) and,
//! behind the `ops` feature, the vision kernels of the reference ROI pipeline.
//!
//! Layers, one folder each: [`model`] (spec, IR, plans, weights) ·
//! [`passes`] (checks, diagnostics, DCE) · [`runtime`] (errors, observer,
//! profiler) · [`tools`] (listing, DOT/Mermaid) · `ops` (kernels). Each
//! module is also re-exported at the crate root (`cortex_core::ir`, …), the
//! paths generated code and users name.

#![warn(missing_docs)]
#![warn(unsafe_op_in_unsafe_fn)]

pub mod limits;

pub mod model;
pub mod passes;
pub mod runtime;
pub mod tools;

pub use model::{ir, naming, plan, spec, weights};
pub use passes::{check, dce, diag, memory, schedule};
pub use runtime::{error, heap, observe, pipeline, plan_cache, profile, stream};
#[cfg(feature = "runner")]
pub use runtime::{runner, sources};

/// Support for generated code; not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::runtime::generated::*;
}
pub use tools::{export, viz};

// The kernels' AVX2 paths predate the `unsafe_op_in_unsafe_fn` rule; they
// are checked by their own tests against the scalar formulas.
#[cfg(feature = "ops")]
#[allow(unsafe_op_in_unsafe_fn)]
pub mod ops;

// The kernel registry (issue #10): kernels per op, selection, autotune cache.
#[cfg(feature = "ops")]
pub mod registry;

pub use error::PipelineError;
pub use heap::HeapBytes;
pub use ir::GraphIr;
pub use limits::{FrameLimits, LimitError};
pub use observe::{NoopObserver, Observer};
pub use pipeline::{ParallelPipeline, Pipeline, PipelineMode};
pub use plan::{Plan, PlanError};
pub use plan_cache::PlanCache;
pub use profile::Profiler;
pub use stream::{
    feed, Arrival, FeedReport, FrameQueue, Overflow, StreamError, StreamOptions, StreamReport,
};
pub use viz::Timings;
pub use weights::Weights;
