//! Running pipelines: the [`pipeline::Pipeline`] trait every generated
//! pipeline implements, errors of a frame ([`error`]), the per-node observer
//! hook ([`observe`]) and the profiler built on it ([`profile`]).

pub mod error;
pub mod generated;
pub mod observe;
pub mod pipeline;
pub mod plan_cache;
pub mod profile;
