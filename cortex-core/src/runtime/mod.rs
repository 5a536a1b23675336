//! Running pipelines: what one frame runs ([`run`]) and how a tool chooses it from user input ([`dispatch`]); graphs built at run time ([`dynamic`]); the [`pipeline::Pipeline`] trait every generated
//! pipeline implements, errors of a frame ([`error`]), the per-node observer
//! hook ([`observe`]) and the profiler built on it ([`profile`]); flow
//! control between a frame source and a pipeline ([`stream`]) and the
//! pipelined loop built on it ([`pipelined`]); many streams on one worker
//! pool ([`streams`]); the heap size of planned buffers ([`heap`]); decisions
//! measured on this machine, kept across runs ([`autotune`]); files and text
//! from the user read and echoed safely ([`untrusted`]).

pub mod autotune;
pub mod dispatch;
pub mod dynamic;
pub mod error;
pub(crate) mod form_check;
pub(crate) mod generated;
pub mod heap;
pub mod hold;
pub mod observe;
pub mod pipeline;
pub mod pipelined;
pub mod plan_cache;
pub mod profile;
pub mod run;
pub mod stream;
pub mod streams;
pub mod strip;
pub mod untrusted;
