//! `cortex`: per-frame processing pipelines declared as a dataflow graph,
//! checked and optimized at compile time.
//!
//! A pipeline is one [`cortex_graph!`] block: inputs, states, nodes calling
//! ordinary Rust functions, modes (weight tables) and outputs. The macro
//! rejects an invalid graph with errors at the offending token, plans each
//! mode with its dead nodes removed, plans the buffers the pipeline owns,
//! and generates straight-line code for every mode, plus parallel and
//! pipelined engines for pipelines declared `#[parallel]`.
//!
//! ```
//! use cortex::cortex_graph;
//!
//! cortex_graph! {
//!     /// The sum of two readings, and their difference when `wd` > 0.
//!     pub pipeline Pair {
//!         input a: f32;
//!         input b: f32;
//!         mode BOTH     { wd: 1.0 }
//!         mode SUM_ONLY { wd: 0.0 }
//!         node sum = add(a, b);
//!         #[weight_key = "wd"] node diff = sub(a, b);
//!         output sum: f32, #[optional] diff: f32;
//!     }
//! }
//! fn add(a: &f32, b: &f32) -> f32 { a + b }
//! fn sub(a: &f32, b: &f32) -> f32 { a - b }
//!
//! let out = Pair::new().run(PairMode::SumOnly, &2.0, &0.5)?;
//! assert_eq!((out.sum, out.diff), (2.5, None));
//! # Ok::<(), cortex::PipelineError>(())
//! ```
//!
//! This facade gathers the workspace's crates under one name:
//!
//! | path | crate | what |
//! |---|---|---|
//! | [`cortex_graph!`], [`prelude`] | `cortex-macros` | the DSL: a pipeline declared, checked, planned per mode, generated; what a program names |
//! | [`Pipeline`], [`ParallelPipeline`], [`PipelineError`], [`Weights`] | `cortex-core` | the traits every generated pipeline implements, its errors, weight tables |
//! | [`stream`] | `cortex-core` | pipelined frames with flow control: [`StreamOptions`], [`Overflow`], [`StreamReport`] |
//! | [`streams`] | `cortex-core` | many streams, each its own pipeline, on one fixed worker pool: [`StreamPool`], [`LiveInput`], [`StreamStats`] |
//! | [`Profiler`], [`tools`] ([`viz`], [`export`]) | `cortex-core` | per-node times; the listing and DCE diff, DOT and Mermaid |
//! | [`spec`], [`check`], [`ir`], [`plan`], [`dce`], [`memory`], [`schedule`], [`passes`] | `cortex-core` | graphs built in code and validated with the macro's rules; the IR, plans and the passes behind them |
//! | [`strip`], [`passes::fusion`] | `cortex-core` | strip kernels and the executor of fused groups; which nodes of a plan form groups |
//! | [`limits`] | `cortex-core` | the resource policy every kernel and source checks frames against |
//! | `ops`, `registry`, `l2`, `l2_registry` (feature `ops`, default) | `cortex-vision` | vision kernels, the kernel registry, the L2 region-of-interest pipeline |
//! | `runner`, `sources` (feature `runner`, default) | `cortex-runner` | a command-line program for any pipeline, frame sources |
//! | `gst`, `gst_roi_element!` (feature `gstreamer`) | `cortex-gst` | GStreamer elements and the `gstcortex` plugin |
//! | `models` (feature `models`) | `cortex-models` | trained ONNX models as nodes: tract, OpenCV DNN, the PP-OCR text detector, L2 with the DNN text map |
//!
//! The DSL's grammar is on [`cortex_graph!`]. The guide is the repository's
//! `docs/` folder (start at `docs/README.md`); its Rust blocks are compiled
//! and run as this crate's doctests.

pub use cortex_core::*;
pub use cortex_macros::cortex_graph;

#[cfg(feature = "ops")]
pub use cortex_vision::{l2, l2_ops, l2_registry, ops, registry};

#[cfg(feature = "models")]
pub use cortex_models as models;

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

/// The guide's pages (`docs/`), compiled and run as doctests so their code
/// cannot drift from the library.
#[cfg(all(doctest, feature = "runner"))]
mod guide {
    #[doc = include_str!("../README.md")]
    mod readme {}
    #[doc = include_str!("../docs/api.md")]
    mod api {}
    #[doc = include_str!("../docs/engines.md")]
    mod engines {}
    #[doc = include_str!("../docs/examples.md")]
    mod examples {}
    #[doc = include_str!("../docs/grammar.md")]
    mod grammar {}
    #[doc = include_str!("../docs/kernels.md")]
    mod kernels {}
    #[doc = include_str!("../docs/l2.md")]
    mod l2 {}
    #[doc = include_str!("../docs/mser.md")]
    mod mser {}
    #[doc = include_str!("../docs/registry.md")]
    mod registry {}
    #[doc = include_str!("../docs/runner.md")]
    mod runner {}
    #[doc = include_str!("../docs/semantics.md")]
    mod semantics {}
    #[doc = include_str!("../docs/features.md")]
    mod features {}
    #[doc = include_str!("../docs/gstreamer.md")]
    mod gstreamer {}
    #[doc = include_str!("../docs/measurements.md")]
    mod measurements {}
    #[doc = include_str!("../docs/README.md")]
    mod index {}
    #[doc = include_str!("../docs/compiler.md")]
    mod compiler {}
    #[doc = include_str!("../docs/program.md")]
    mod program {}
}

/// The models guide, compiled and run with the `models` feature.
#[cfg(all(doctest, feature = "models"))]
mod guide_models {
    #[doc = include_str!("../docs/models.md")]
    mod models {}
}
