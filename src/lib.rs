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
//! This facade gathers the workspace's crates under one name, each thing at
//! one path: the root holds what a program names (the macro, the prelude,
//! the pipeline traits, [`PipelineError`], [`Run`], [`Weights`]) and the
//! modules; everything else is one level down.
//!
//! | path | crate | what |
//! |---|---|---|
//! | [`cortex_graph!`], [`prelude`] | `cortex-macros`, `cortex-core` | the DSL: a pipeline declared, checked, planned per mode, generated; what a program names (`use cortex::prelude::*`) |
//! | [`Pipeline`], [`ParallelPipeline`], [`PipelineError`], [`Run`], [`Weights`] | `cortex-core` | the traits every generated pipeline implements, its errors, one frame's run, weight tables |
//! | [`run`] | `cortex-core` | one frame's run ([`run::Run`], [`run::ChoiceRef`], [`run::Engine`], [`run::OutputSet`]), observers, the profiler, held values, buffers, plan caches, autotuning |
//! | [`stream`] | `cortex-core` | pipelined frames with flow control: `StreamOptions`, `Overflow`, `StreamReport` |
//! | [`streams`] | `cortex-core` | many streams, each its own pipeline, on one fixed worker pool: `StreamPool`, `LiveInput`, `StreamStats` |
//! | [`model`] | `cortex-core` | the graph as data: `spec` (graphs built in code), `ir`, `plan`, `weights`, `outputs` |
//! | [`passes`] | `cortex-core` | the checks and passes: `check`, `dce`, `memory`, `schedule`, `rates`, `fusion`, diagnostics |
//! | [`lower`] | `cortex-core` | the program a pipeline runs, as data |
//! | [`dynamic`] | `cortex-core` | pipelines built at run time from registered ops |
//! | [`strip`] | `cortex-core` | strip kernels and the executor of fused groups |
//! | [`tools`] | `cortex-core` | the listing and DCE diff (`viz`), DOT and Mermaid (`export`) |
//! | [`limits`] | `cortex-core` | the resource policy every kernel and source checks frames against |
//! | [`untrusted`] | `cortex-core` | reading files and echoing their text as untrusted input: regular files only, bounded; short, escaped echoes |
//! | `ops`, `library`, `views`, `registry`, `l2` (feature `ops`, default) | `cortex-vision` | vision kernels, the op library (every op by its descriptor: `vision.to_gray`, …), each output type's JSON view, the kernel registry, the L2 region-of-interest pipeline |
//! | `runner` (with `runner::sources`) (feature `runner`, default) | `cortex-runner` | a command-line program for any pipeline, frame sources |
//! | `gst` (with `gst::gst_roi_element!`) (feature `gstreamer`) | `cortex-gst` | GStreamer elements and the `gstcortex` plugin |
//! | `models` (feature `models`) | `cortex-models` | trained ONNX models as nodes: tract, OpenCV DNN, the PP-OCR text detector, L2 with the DNN text map |
//!
//! The DSL's grammar is on [`cortex_graph!`]. The guide is the repository's
//! `docs/` folder (start at `docs/README.md`); its Rust blocks are compiled
//! and run as this crate's doctests.

pub use cortex_core::run::Run;
pub use cortex_core::{
    dynamic, limits, lower, model, passes, stream, streams, strip, tools, untrusted,
    CompiledPipeline, ParallelPipeline, Pipeline, PipelineError, Weights,
};
pub use cortex_macros::cortex_graph;

/// One frame's run and what it reports to: [`Run`] with its [`ChoiceRef`] and
/// [`Engine`], the [`OutputSet`] it reads, observers and the profiler
/// ([`observe`], [`profile`]), held values of rated nodes ([`hold`]), the
/// buffers a pipeline owns ([`heap`]), plan caches ([`plan_cache`]), strip
/// autotuning ([`autotune`]), errors ([`error`]) and the pipeline traits
/// ([`pipeline`]).
pub mod run {
    pub use cortex_core::outputs::{OutputSet, UnknownOutput};
    pub use cortex_core::run::*;
    pub use cortex_core::{autotune, error, heap, hold, observe, pipeline, plan_cache, profile};
}

/// The engine crate whole, for generated code: `cortex_graph!` names its
/// items through this one path, whatever the root shows.
#[doc(hidden)]
pub mod __rt {
    pub use cortex_core::*;
}

#[cfg(feature = "ops")]
pub use cortex_vision::{library, ops, registry, views};

/// The L2 region-of-interest pipeline. Built at run time, it is a graph
/// file over [`library`] (`examples/graphs/l2.json`, written from it).
#[cfg(feature = "ops")]
pub mod l2 {
    pub use cortex_vision::l2::*;
}

#[cfg(feature = "models")]
pub use cortex_models as models;

#[cfg(feature = "runner")]
pub use cortex_runner as runner;

#[cfg(feature = "gstreamer")]
pub use gstcortex as gst;

/// What a program that declares and runs pipelines names: the macro, the
/// traits every generated pipeline implements, errors, weights, one
/// frame's run, observers.
pub mod prelude {
    pub use crate::cortex_graph;
    pub use cortex_core::run::Run;
    pub use cortex_core::{
        CompiledPipeline, NoopObserver, Observer, ParallelPipeline, Pipeline, PipelineError,
        PipelineMode, Plan, Profiler, Weights,
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
    #[doc = include_str!("../docs/ops.md")]
    mod ops {}
}

/// The models guide, compiled and run with the `models` feature.
#[cfg(all(doctest, feature = "models"))]
mod guide_models {
    #[doc = include_str!("../docs/models.md")]
    mod models {}
}
