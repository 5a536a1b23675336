//! The cortex engine: the graph model shared by the `cortex_graph!` macro and
//! the runtime, its validation rules and passes, the runtime traits and
//! engines, and the tools that show a pipeline. It knows no image type: the
//! vision kernels, the runner and the GStreamer element are crates of their
//! own built on it.
//!
//! Layers, one folder each, each importing only from the ones before it:
//! [`model`] (spec, IR, plans, weights) → [`passes`] (checks, diagnostics,
//! DCE, islands, buffers, schedules) → [`lower`] (the program a pipeline
//! runs, as data) → [`tools`] (listing, DOT/Mermaid) →
//! `runtime` (traits, engines, flow control, observer, profiler; feature
//! `runtime`, on by default). [`limits`] is the resource policy every layer
//! may consult. The modules users name are re-exported at the crate root
//! (`cortex_core::ir`, `cortex_core::stream`, …), the paths the facade and
//! generated code use.

#![warn(missing_docs)]
#![warn(unsafe_op_in_unsafe_fn)]

pub mod limits;

#[cfg(test)]
mod fixtures;

pub mod lower;
pub mod model;
pub mod passes;
#[cfg(feature = "runtime")]
pub mod runtime;
pub mod tools;

pub use model::{access, ir, naming, outputs, plan, spec, weights};
pub use passes::{check, dce, diag, memory, rates, schedule};
#[cfg(feature = "runtime")]
pub use runtime::{
    autotune, dynamic, error, heap, hold, observe, pipeline, plan_cache, profile, run, stream,
    streams, strip, untrusted,
};
pub use tools::{export, viz};

/// Support for generated code; not public API.
#[cfg(feature = "runtime")]
#[doc(hidden)]
pub mod __private {
    pub use crate::runtime::form_check::*;
    pub use crate::runtime::generated::*;
    pub use crate::runtime::pipelined::pipelined;
}

pub use ir::GraphIr;
pub use limits::{FrameLimits, LimitError};
pub use outputs::{OutputSet, UnknownOutput};
pub use plan::{Plan, PlanError};
pub use viz::Timings;
pub use weights::Weights;
#[cfg(feature = "runtime")]
pub use {
    error::PipelineError,
    heap::HeapBytes,
    observe::{NoopObserver, Observer},
    pipeline::{CompiledPipeline, ParallelPipeline, Pipeline, PipelineMode},
    plan_cache::PlanCache,
    profile::Profiler,
    stream::{
        feed, Arrival, FeedReport, FrameQueue, Overflow, StreamError, StreamOptions, StreamReport,
    },
    streams::{LiveInput, LiveOptions, StreamId, StreamPool, StreamStats, StreamsError},
};
