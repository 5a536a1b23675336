//! Pipelined run functions: a plan split into its state-free first stage
//! and the rest, the second given the pipeline as a closure argument
//! (`__this`, the receiver its body is generated with).

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::memory::BufferPlan;

/// Which nodes a run function emits.
#[derive(Clone, Copy)]
pub enum Part<'a> {
    /// The whole plan.
    Whole,
    /// A pipelined run's first stage: the state-free nodes (per node: in
    /// the stage), returning their values.
    StreamA(&'a [bool]),
    /// A pipelined run's second stage: the other nodes, given the first
    /// stage's values, then the outputs and the state commits.
    StreamB(&'a [bool]),
}

impl<'a> Part<'a> {
    pub(super) fn stage_a(self) -> Option<&'a [bool]> {
        match self {
            Part::Whole => None,
            Part::StreamA(a) | Part::StreamB(a) => Some(a),
        }
    }
}

/// The filled nodes of a pipelined run's first stage, in order: the fields
/// of its per-frame buffers.
pub fn stage_a_fills(ir: &GraphIr, bufs: &BufferPlan, stage_a: Option<&[bool]>) -> Vec<NodeId> {
    let Some(a) = stage_a else {
        return Vec::new();
    };
    ir.topo
        .iter()
        .copied()
        .filter(|&id| a[id as usize] && bufs.buffer_of(id).is_some())
        .collect()
}
