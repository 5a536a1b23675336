//! Core of cortex: the graph model shared by the `cortex_graph!` macro and the
//! runtime, its validation rules, the dead-node-elimination pass and plans,
//! runtime support (observer, profiler, visualizer, exporters) and, behind the
//! `ops` feature, the vision kernels of the reference ROI pipeline.

pub mod check;
pub mod dce;
pub mod diag;
pub mod error;
pub mod export;
pub mod ir;
pub mod limits;
pub mod observe;
pub mod plan;
pub mod profile;
pub mod spec;
pub mod viz;
pub mod weights;

#[cfg(feature = "ops")]
pub mod ops;

pub use error::PipelineError;
pub use ir::GraphIr;
pub use limits::{FrameLimits, LimitError};
pub use observe::{NoopObserver, Observer};
pub use plan::Plan;
pub use profile::Profiler;
pub use viz::Timings;
pub use weights::Weights;
