//! Code generation for a valid pipeline: the bodies of the run functions in
//! the API of [`crate::api`] — one straight-line function per mode with its
//! plan's dead nodes already gone, one plan-driven function for weights and
//! plans chosen at run time, and for `#[parallel]` pipelines the parallel
//! and pipelined forms. The plans they follow are core's lowered program,
//! read in [`plans`]; each form's functions come from [`forms`]; what every
//! emitter reads is [`shape`] and [`site`]; a run function's body is
//! [`body`], one emitter per kind of step: calls on the calling thread
//! ([`calls`]), fused groups ([`groups`], their blocks in [`fused`]),
//! parallel waves of jobs ([`jobs`], the wave statements in [`waves`]);
//! what crosses threads is checked by [`checks`]; where buffers live is
//! [`layout`]; pipelined stages are [`stages`]. The entry points' bodies
//! (each API function's dispatch and the private functions it calls) are
//! [`entry`], `run_with`'s own in [`run_with`].

mod body;
mod calls;
mod checks;
mod commit;
mod entry;
mod forms;
mod fused;
mod groups;
mod jobs;
mod layout;
mod node;
mod outputs;
mod plans;
mod run_with;
mod shape;
mod site;
mod stages;
mod stream_cut;
mod waves;

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::plan::Plan;
use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::PipelineAst;
use crate::names::ItemNames;

pub(crate) use checks::{parallel_check, Check, Probe};
use entry::{Emit, Made};
use forms::Forms;
use layout::BufferLayout;
use plans::Plans;
use shape::Cx;
pub use shape::Real;

/// The real bodies of the API's run functions, and the private functions
/// they call.
pub struct Bodies {
    pub run_observed: TokenStream,
    pub run_into_observed: TokenStream,
    pub run_weights_observed: TokenStream,
    pub run_plan_observed: TokenStream,
    /// `__run_parallel`, a mode on the parallel engine (`#[parallel]`
    /// pipelines only).
    pub run_parallel_observed: TokenStream,
    /// `run_stream` (`#[parallel]` pipelines only).
    pub run_stream: TokenStream,
    /// `run_stream_with`'s dispatch after the mode, the outputs read and the
    /// observer are taken out of its `Run` (`#[parallel]` pipelines only).
    pub run_stream_with: TokenStream,
    /// Weights and a plan on the parallel engine, into `__sink`
    /// (`#[parallel]` pipelines only).
    pub run_weights_parallel: TokenStream,
    pub run_plan_parallel: TokenStream,
    /// `run_with`: a `Run` value's selection, engine, observer and outputs.
    pub run_with: TokenStream,
    pub private: TokenStream,
    /// The types of the buffers the pipeline owns (a tuple field).
    pub buffer_types: Vec<syn::Type>,
    /// Per buffer field: its type's text and index among that type's.
    pub buffer_keys: Vec<(String, u32)>,
    /// How many fused groups the modes' plans hold (one slot each).
    pub fusion_slots: usize,
    /// Per rated node (each once): its id and declared type, the pipeline's
    /// held values.
    pub holds: Vec<(NodeId, syn::Type)>,
}

/// The bodies of a valid pipeline's run functions.
pub fn bodies(ast: &PipelineAst, r: &Real<'_>, n: &ItemNames, c: &TokenStream) -> Bodies {
    let plans = Plans::new(ast, r);
    let holds: Vec<(NodeId, syn::Type)> = plans
        .hold_slots()
        .iter()
        .map(|&id| {
            let ty = ast.nodes[id as usize].ty.clone();
            (id, ty.unwrap_or_else(|| syn::parse_quote!(())))
        })
        .collect();
    let layout = BufferLayout::new(ast, r.ir, &plans.all_bufs());
    let buffer_types = layout.types.clone();
    let buffer_keys = layout.keys();
    let cx = Cx {
        ast,
        ir: r.ir,
        c,
        layout,
    };
    let forms = Forms::new(&cx, &plans, r, n);
    let made = Made {
        mode: forms.mode_bodies(),
        parallel: forms.parallel_bodies(),
        stream: forms.stream_bodies(),
        masked: forms.masked_body(),
        masked_parallel: forms.masked_parallel_body(),
        cut_stream: forms.cut_stream_body(),
    };
    let e = Emit::new(c, n, ast, forms);
    let (head, sequential_only, tail) = e.private(&plans, made);
    let run_with = e.run_with_fn(sequential_only);
    let args = &e.args;
    Bodies {
        run_with: e.run_with_entry(),
        run_weights_parallel: quote! {
            self.__run_weights_parallel(weights, observer, __sink, #args)
        },
        run_plan_parallel: e.checked_plan(quote! {
            self.__run_plan_parallel(plan, weights, observer, __sink, #args)
        }),
        run_stream_with: e.stream_with(),
        run_stream: e.run_stream(),
        run_parallel_observed: e.mode_match(&e.par_fns, quote!(__sink)),
        run_observed: e.fresh(e.mode_match(&e.mode_fns, e.fresh_sink())),
        run_into_observed: e.mode_match(&e.mode_fns, e.sink_all()),
        run_weights_observed: e.fresh(e.call_with(
            "__run_weights",
            quote!(weights),
            e.fresh_sink(),
        )),
        run_plan_observed: e.checked_plan(e.fresh(e.call_with(
            "__run_plan",
            quote!(plan, weights),
            e.fresh_sink(),
        ))),
        private: quote! {
            #head
            #run_with
            #tail
        },
        buffer_types,
        buffer_keys,
        fusion_slots: plans.fusion_slots,
        holds,
    }
}

/// The doc comment of a mode variant: its weights and its plan.
pub fn mode_doc(ir: &GraphIr, plan: &Plan) -> String {
    let names = |ids: &mut dyn Iterator<Item = NodeId>| {
        ids.map(|i| format!("`{}`", ir.nodes[i as usize].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let runs = names(&mut plan.order.iter().copied());
    let gone = plan
        .eliminated
        .iter()
        .map(|e| {
            format!(
                "`{}` ({})",
                ir.nodes[e.node as usize].name,
                e.reason.describe(ir)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Mode `{}`. Runs {}.{}",
        plan.label,
        if runs.is_empty() {
            "nothing".into()
        } else {
            runs
        },
        if gone.is_empty() {
            String::new()
        } else {
            format!(" Eliminates {gone}.")
        }
    )
}
