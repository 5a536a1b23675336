//! The graph model: a pipeline as written ([`spec`], built in code with
//! [`builder`]), resolved and validated ([`ir`]), the plans that run it
//! ([`plan`]), the outputs a caller reads ([`outputs`]), the weight tables that choose a plan ([`weights`]) and the
//! Rust names of generated items ([`naming`]), and how a strip kernel reads
//! its inputs ([`access`]). Shared by the macro (compile
//! time) and the runtime.

pub mod access;
pub mod builder;
pub mod ir;
pub mod naming;
pub mod outputs;
pub mod plan;
pub mod spec;
pub mod weights;
