//! What every emitter of a run function reads: the validated graph
//! ([`Real`]), the generator's context ([`Cx`]), the kind of function to
//! emit ([`Shape`]: its flavor, buffers, waves, stage, fused groups and
//! rates), and the locals and arguments every step names. The emitters are
//! siblings that import this, never each other's parent.

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::lower::Step;
use cortex_core::memory::BufferPlan;
use cortex_core::passes::fusion::FusionPlan;
use cortex_core::passes::rates::ModeRates;
use cortex_core::plan::Plan;
use proc_macro2::{Span, TokenStream};
use quote::quote;

use super::layout::BufferLayout;
use super::stages::Part;
use crate::ast::PipelineAst;
use crate::names::local;

/// What the real bodies are computed from: the validated graph.
pub struct Real<'a> {
    pub ir: &'a GraphIr,
    pub mode_plans: &'a [Plan],
}

/// Everything the generator needs.
pub struct Cx<'a> {
    pub ast: &'a PipelineAst,
    pub ir: &'a GraphIr,
    /// The facade crate's path.
    pub c: &'a TokenStream,
    /// Where the buffers live.
    pub layout: BufferLayout,
}

/// What kind of run function to emit.
pub struct Shape<'a> {
    /// Which nodes run, and how it is decided.
    pub flavor: Flavor<'a>,
    /// The plan's buffers.
    pub bufs: &'a BufferPlan,
    /// Each wave's units at once (parallel runs): the frame's
    /// [`Step::Wave`]s.
    pub parallel: bool,
    /// The whole plan, or a stage of a pipelined run.
    pub part: Part<'a>,
    /// The plan's fused groups, when it runs fused.
    pub fusion: Option<Fused<'a>>,
    /// The mode's rates, when it has some.
    pub rated: Option<&'a RatedMode<'a>>,
    /// The lowered frame's steps: its end (outputs, commits, held values)
    /// is read from them.
    pub steps: &'a [Step],
}

/// A rated mode's phases, as its run functions need them.
pub struct RatedMode<'a> {
    pub rates: &'a [cortex_core::ir::RateIr],
    /// Per rate: its node's held-value slot in the pipeline.
    pub slots: Vec<usize>,
    pub info: &'a ModeRates,
    /// The rates as written (for the triggers' spans).
    pub decls: &'a [crate::ast::RateDecl],
    /// The mode's phase plans (an expression of type `&'static [Plan]`).
    pub phases: TokenStream,
}

/// A plan's fused groups and where their slots live: in the pipeline from
/// `slot_base` on, or, for the groups of a pipelined run's first stage, in
/// each frame's own buffers.
#[derive(Clone, Copy)]
pub struct Fused<'a> {
    pub plan: &'a FusionPlan,
    pub slot_base: usize,
    /// Per node: in a pipelined run's first stage.
    pub stage_a: Option<&'a [bool]>,
}

impl Fused<'_> {
    /// Whether group `k` runs in a pipelined run's first stage.
    fn in_stage_a(&self, k: usize) -> bool {
        let first = self.plan.groups.get(k).and_then(|g| g.nodes.first());
        match (self.stage_a, first) {
            (Some(a), Some(&n)) => a.get(n as usize).copied().unwrap_or(false),
            _ => false,
        }
    }

    /// Group `k`'s index among the first stage's groups.
    pub fn a_slot_of(&self, k: usize) -> usize {
        (0..k).filter(|&j| self.in_stage_a(j)).count()
    }

    /// Group `k`'s index among the groups whose slots are the pipeline's.
    pub fn self_slot_of(&self, k: usize) -> usize {
        (0..k).filter(|&j| !self.in_stage_a(j)).count()
    }

    /// How many of its groups run in the first stage.
    pub fn a_slots(&self) -> usize {
        (0..self.plan.groups.len())
            .filter(|&j| self.in_stage_a(j))
            .count()
    }

    /// How many of its groups keep their slots in the pipeline.
    pub fn self_slots(&self) -> usize {
        self.plan.groups.len() - self.a_slots()
    }
}

/// How a run function chooses which nodes to run.
pub enum Flavor<'a> {
    /// A declared mode: only the plan's nodes are emitted, in order.
    Mode(&'a Plan),
    /// Weights or a plan chosen at run time: every node of the frame's
    /// plan (the full graph's) is emitted in its order, guarded by the plan
    /// passed in, with node values held in `Option`s.
    Masked(&'a Plan),
}

/// The local holding node `id`'s value, reported at `at`.
pub fn node_local(ir: &GraphIr, id: NodeId, at: Span) -> proc_macro2::Ident {
    local(&format!("__node_{}", ir.nodes[id as usize].name), at)
}

/// A constant argument as it is passed: a block holding one expression
/// (`{ None }`, the DSL's escape for a bare name) is passed as that
/// expression, so rustc's `unused_braces` lint has nothing to say.
pub fn const_arg(e: &syn::Expr) -> TokenStream {
    if let syn::Expr::Block(b) = e {
        if let ([syn::Stmt::Expr(inner, None)], true, None) =
            (b.block.stmts.as_slice(), b.attrs.is_empty(), &b.label)
        {
            return quote!(#inner);
        }
    }
    quote!(#e)
}
