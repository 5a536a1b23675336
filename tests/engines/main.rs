//! Generated pipelines on every run path: the DSL's L2, run-time weights
//! and explicit plans, planned memory, the parallel and pipelined engines
//! against the sequential run, seeded random graphs, the blur baseline and
//! the text node inside a graph.

mod common;
#[cfg(feature = "ops")]
#[path = "../../cortex-vision/tests/mser/support/mod.rs"]
mod mser_support;

mod dsl_l2;
mod fusion;
mod l2_blur;
mod outputs_read;
mod parallel_engine;
mod pipelined_engine;
mod planned_memory;
mod random_graphs;
mod rates;
mod run_plan_validation;
mod state_buffers;
mod streams;
mod text_roi_graph;
