//! Passes over the model: validation rules with their diagnostics
//! ([`check`], [`diag`]), dead-node elimination ([`dce`]), the partition of
//! a plan into compilable islands ([`islands`]) and their fused groups
//! ([`fusion`]), its buffers ([`memory`])
//! and its schedules for the engine ([`schedule`]). The macro runs them at
//! compile time; the runtime runs the same code for plans chosen at run
//! time.

pub mod check;
pub mod dce;
pub mod diag;
pub mod fusion;
pub mod islands;
pub mod memory;
pub mod rates;
pub mod schedule;
