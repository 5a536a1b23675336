//! The graph model: a pipeline as written ([`spec`]), resolved and validated
//! ([`ir`]), the plans that run it ([`plan`]) and the weight tables that
//! choose a plan ([`weights`]). Shared by the macro (compile time) and the
//! runtime.

pub mod builder;
pub mod ir;
pub mod naming;
pub mod plan;
pub mod spec;
pub mod weights;
