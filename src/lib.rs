//! `cortex`: per-frame processing pipelines declared as a dataflow graph,
//! checked and optimized at compile time.
//!
//! This facade re-exports [`cortex_core`] (graph model, validation, dead-node
//! elimination, runtime support, vision kernels) and the [`cortex_graph!`]
//! macro. See the README for the DSL grammar and a full example.

// Generated code names this crate `::cortex`; so can the crate itself.
extern crate self as cortex;

pub use cortex_core::*;
pub use cortex_macros::cortex_graph;

#[cfg(feature = "ops")]
pub mod l2;
#[cfg(feature = "ops")]
pub mod l2_registry;

// The GStreamer element: a generic video filter over any one-frame pipeline.
#[cfg(feature = "gstreamer")]
pub mod gst;
