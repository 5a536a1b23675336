//! `cortex`: per-frame processing pipelines declared as a dataflow graph,
//! checked and optimized at compile time.
//!
//! This facade re-exports [`cortex_core`] (graph model, validation, dead-node
//! elimination, runtime support, vision kernels) and the [`cortex_graph!`]
//! macro. See the README for the DSL grammar and a full example.
#![doc = include_str!("../README.md")]

pub use cortex_core::*;
pub use cortex_macros::cortex_graph;
