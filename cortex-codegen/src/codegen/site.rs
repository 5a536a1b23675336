//! The run function being emitted, as its steps' emitters see it: which
//! plan and part of it runs, its buffers, groups and rates, and the
//! receiver it names. Kept apart from the emitters (the body, a node's
//! call, the outputs and commits) so each reads it without importing
//! another.

use cortex_core::ir::NodeId;
use cortex_core::lower::Step;
use cortex_core::memory::BufferPlan;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::shape::{Cx, Flavor, Fused, RatedMode};
use super::stages::Part;
use crate::names::ItemNames;

/// One run function being generated.
pub(super) struct Body<'a> {
    pub cx: &'a Cx<'a>,
    pub n: &'a ItemNames,
    /// Which nodes run, and how it is decided.
    pub flavor: Flavor<'a>,
    /// The plan's buffers.
    pub bufs: &'a BufferPlan,
    /// The whole plan, or a stage of a pipelined run.
    pub part: Part<'a>,
    /// The plan's fused groups, when it runs fused.
    pub fusion: Option<Fused<'a>>,
    /// The mode's rates, when it has some.
    pub rated: Option<&'a RatedMode<'a>>,
    /// The lowered frame's steps: its end (outputs, commits, held values)
    /// is read from them.
    pub steps: &'a [Step],
    /// The observer's local.
    pub obs: Ident,
    /// In a pipelined run, the state-free stage's filled values: they live
    /// in the frame's own buffers (`__a_bufs`), since the next frame's
    /// stage fills its own while this frame's second stage still reads
    /// them.
    pub a_fills: Vec<NodeId>,
    /// Nodes whose locals are references to their values where these
    /// steps run: the values a group of a plan-driven body reads from
    /// outside it, borrowed once the plan is seen to run them.
    pub borrowed: Vec<NodeId>,
}

impl Body<'_> {
    /// Whether node `id` runs in the plan.
    pub(super) fn live(&self, id: NodeId) -> bool {
        match &self.flavor {
            Flavor::Mode(p) => p.is_live(id),
            Flavor::Masked(_) => true,
        }
    }

    /// A plan chosen at run time: every node may or may not run.
    pub(super) fn masked(&self) -> bool {
        matches!(self.flavor, Flavor::Masked(_))
    }

    /// Whether node `id` fills a buffer the pipeline owns.
    pub(super) fn fills(&self, id: NodeId) -> bool {
        self.bufs.buffer_of(id).is_some()
    }

    /// Node `id`'s rate in a rated mode: its index among the mode's rates.
    pub(super) fn rate_of(&self, id: NodeId) -> Option<usize> {
        self.rated
            .and_then(|r| r.rates.iter().position(|x| x.node == id))
    }

    /// Work only some phases of a rated mode run (not a rated node itself):
    /// its local is an `Option`.
    pub(super) fn cond(&self, id: NodeId) -> bool {
        self.rated.is_some_and(|r| {
            r.info
                .conditional
                .get(id as usize)
                .copied()
                .unwrap_or(false)
        }) && self.rate_of(id).is_none()
    }

    /// Whether node `id`'s local is a reference to its value (a filled
    /// buffer, or a rated node's value or held value).
    pub(super) fn is_ref(&self, id: NodeId) -> bool {
        self.fills(id) || self.rate_of(id).is_some() || self.borrowed.contains(&id)
    }

    /// The pipeline as this function names it, spanned at `at`: `self` in
    /// a method; `__this`, the argument of a pipelined run's second stage
    /// (a closure, so that it can run on a worker while the calling thread
    /// holds the loop). Passed in rather than renamed afterwards, so a
    /// user's own `self::` paths stay as written.
    pub(super) fn this(&self, at: Span) -> Ident {
        match self.part {
            Part::StreamB(_) => Ident::new("__this", at),
            _ => Ident::new("self", at),
        }
    }

    /// Frames commit (states, holds, the frame count) where their outputs
    /// are made: not in a pipelined run's first stage.
    pub(super) fn commits(&self) -> bool {
        !matches!(self.part, Part::StreamA(_))
    }

    /// The buffer node `id` fills, as a place spanned at `at`.
    pub(super) fn buffer(&self, id: NodeId, at: Span) -> Option<TokenStream> {
        match self.a_fills.iter().position(|&a| a == id) {
            Some(i) => {
                let i = syn::Index {
                    index: i as u32,
                    span: at,
                };
                Some(quote_spanned!(at=> __a_bufs.#i))
            }
            None => self.cx.layout.field(self.bufs, id, &self.this(at), at),
        }
    }

    /// Whether node `id` runs in this part of the plan.
    pub(super) fn in_part(&self, id: NodeId) -> bool {
        match self.part {
            Part::Whole => true,
            Part::StreamA(a) => a[id as usize],
            Part::StreamB(a) => !a[id as usize],
        }
    }

    /// A broken plan invariant: the frame fails with an internal error.
    pub(super) fn internal(&self, what: &str) -> TokenStream {
        let (obs, c) = (&self.obs, self.cx.c);
        let msg = format!("plan invariant broken: {what}");
        quote!({ #obs.frame_end(false); return ::core::result::Result::Err(#c::PipelineError::Internal(#msg)); })
    }
}
