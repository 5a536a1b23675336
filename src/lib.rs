//! `cortex`: per-frame processing pipelines declared as a dataflow graph,
//! checked and optimized at compile time.
//!
//! This facade gathers the workspace's crates under one name:
//!
//! | path | crate | what |
//! |---|---|---|
//! | [`cortex_graph!`] | `cortex-macros` | the DSL: a pipeline declared, checked, planned per mode, generated |
//! | [`ir`], [`plan`], [`check`], [`dce`], [`memory`], [`schedule`], … | `cortex-core` | the engine: graph model, passes, runtime traits and engines |
//! | [`Pipeline`], [`stream`], [`Profiler`], [`viz`], [`export`] | `cortex-core` | running, streaming, profiling and showing any pipeline |
//! | `ops`, `registry`, `l2` (feature `ops`, default) | `cortex-vision` | vision kernels, the kernel registry, the L2 ROI pipeline |
//! | `runner`, `sources` (feature `runner`, default) | `cortex-runner` | a command-line program for any pipeline, frame sources |
//! | `gst`, `gst_roi_element!` (feature `gstreamer`) | `cortex-gst` | GStreamer elements and the `gstcortex` plugin |
//!
//! [`prelude`] holds what a program that declares and runs a pipeline
//! names. The DSL's grammar and semantics are on [`cortex_graph!`]; the
//! guide is the workspace's `docs/` folder.

pub use cortex_core::*;
pub use cortex_macros::cortex_graph;

#[cfg(feature = "ops")]
pub use cortex_vision::{l2, l2_registry, ops, registry};

#[cfg(feature = "runner")]
pub use cortex_runner as runner;
#[cfg(feature = "runner")]
pub use cortex_runner::sources;

#[cfg(feature = "gstreamer")]
pub use gstcortex as gst;
#[cfg(feature = "gstreamer")]
pub use gstcortex::gst_roi_element;

/// What a program that declares and runs pipelines names: the macro, the
/// traits every generated pipeline implements, errors, weights, observers.
pub mod prelude {
    pub use crate::cortex_graph;
    pub use cortex_core::{
        NoopObserver, Observer, ParallelPipeline, Pipeline, PipelineError, PipelineMode, Plan,
        Profiler, Weights,
    };
}
