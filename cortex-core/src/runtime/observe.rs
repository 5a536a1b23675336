//! The observer hook of generated run functions: called around every node.
//!
//! The default [`NoopObserver`] has empty inline methods, so a plain `run`
//! compiles to the same code as calling the node functions by hand.

use crate::model::ir::{GraphIr, NodeId};
use crate::model::plan::Plan;

/// Receives the events of a running frame.
pub trait Observer {
    /// A frame starts with this plan.
    #[inline(always)]
    fn frame_begin(&mut self, ir: &'static GraphIr, plan: &Plan) {
        let _ = (ir, plan);
    }
    /// Node `node` is about to run.
    #[inline(always)]
    fn node_begin(&mut self, node: NodeId) {
        let _ = node;
    }
    /// Node `node` returned (successfully or not).
    #[inline(always)]
    fn node_end(&mut self, node: NodeId) {
        let _ = node;
    }
    /// A fused group of these nodes (in order) is about to run strip by
    /// strip as one unit.
    #[inline(always)]
    fn group_begin(&mut self, members: &'static [NodeId]) {
        let _ = members;
    }
    /// The fused group that began last ended: `fused` is false when it
    /// declined the frame, which its members then run as whole-frame calls
    /// (each reported by `node_begin`/`node_end`).
    #[inline(always)]
    fn group_end(&mut self, fused: bool) {
        let _ = fused;
    }
    /// The frame ended; `ok` is false when a node failed.
    #[inline(always)]
    fn frame_end(&mut self, ok: bool) {
        let _ = ok;
    }
}

/// An observer that does nothing, at no cost.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopObserver;

impl Observer for NoopObserver {}

impl<O: Observer + ?Sized> Observer for &mut O {
    #[inline(always)]
    fn frame_begin(&mut self, ir: &'static GraphIr, plan: &Plan) {
        (**self).frame_begin(ir, plan)
    }
    #[inline(always)]
    fn node_begin(&mut self, node: NodeId) {
        (**self).node_begin(node)
    }
    #[inline(always)]
    fn node_end(&mut self, node: NodeId) {
        (**self).node_end(node)
    }
    #[inline(always)]
    fn group_begin(&mut self, members: &'static [NodeId]) {
        (**self).group_begin(members)
    }
    #[inline(always)]
    fn group_end(&mut self, fused: bool) {
        (**self).group_end(fused)
    }
    #[inline(always)]
    fn frame_end(&mut self, ok: bool) {
        (**self).frame_end(ok)
    }
}
