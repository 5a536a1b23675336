//! Vision for cortex pipelines: image kernels in pure Rust on `ndarray`
//! images ([`ops`], with OpenCV as an optional external backend), the
//! kernel registry that picks each op's fastest kernel for the machine
//! ([`registry`]), and the L2 region-of-interest pipeline declared with
//! `cortex_graph!` ([`l2`]), and the built-in synthetic
//! clip it runs on without input files ([`clip`]).

#![warn(missing_docs)]

// `cortex_graph!` names the engine `::cortex`: here that is cortex-core,
// which holds everything the generated code calls.
extern crate cortex_core as cortex;

// The kernels' AVX2 paths predate the `unsafe_op_in_unsafe_fn` rule; they
// are checked by their own tests against the scalar formulas.
#[allow(unsafe_op_in_unsafe_fn)]
pub mod ops;

pub mod clip;
mod heap;
pub mod l2;
pub mod library;
pub mod registry;
pub mod views;
