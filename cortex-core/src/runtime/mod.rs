//! Running pipelines: the [`pipeline::Pipeline`] trait every generated
//! pipeline implements, errors of a frame ([`error`]), the per-node observer
//! hook ([`observe`]) and the profiler built on it ([`profile`]); with the
//! `runner` feature, a command-line runner for any pipeline ([`runner`]) and
//! the frame sources it reads ([`sources`]); flow control between a frame
//! source and a pipeline ([`stream`]).

pub mod error;
pub mod generated;
pub mod heap;
pub mod observe;
pub mod pipeline;
pub mod pipelined;
pub mod plan_cache;
pub mod profile;
#[cfg(feature = "runner")]
pub mod runner;
#[cfg(feature = "runner")]
pub mod sources;
pub mod stream;
