//! Pipelined run functions: a plan split into its state-free first stage
//! and the rest, the second given the pipeline as a closure argument
//! (`__this`, the receiver its body is generated with).

use cortex_core::ir::{GraphIr, NodeId};
use cortex_core::memory::BufferPlan;
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ast::PipelineAst;
use crate::names::local;

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

/// What one pipelined run gives the engine's driver: the first stage's
/// buffer types and body, the second stage's body (given `__this`, the
/// inputs' names, `__a_values`, `__a_bufs` and `__sink`), the sequential
/// rerun of a failed frame (given `__this`, the inputs' names and
/// `__sink`) and the plan the observer is told of.
pub struct Driven {
    pub a_tys: Vec<syn::Type>,
    pub a_body: TokenStream,
    pub b_body: TokenStream,
    pub rerun: TokenStream,
    pub plan: TokenStream,
}

/// A stream function's body: `run` on the pipelined driver, its stages
/// reporting their nodes from their threads through a shared observer
/// (`__observer`), the driver the frames.
pub fn pipelined_call(
    c: &TokenStream,
    ast: &PipelineAst,
    outputs_ty: &Ident,
    run: Driven,
) -> TokenStream {
    let obs = local("__obs", Span::call_site());
    let sink = quote!(#c::__private::Sink<'_, #outputs_ty>);
    let (input_names, input_tys): (Vec<Ident>, Vec<&syn::Type>) = ast
        .inputs
        .iter()
        .map(|i| (crate::names::local_like(&i.name), &i.ty))
        .unzip();
    let Driven {
        a_tys,
        a_body,
        b_body,
        rerun,
        plan,
    } = run;
    quote! {
        let __fusion_on = self.__fusion_on;
        let __shared = __observer.map(#c::__private::SharedObserver::new);
        let __events = __shared.as_ref();
        let __stage_obs = #c::__private::StageObserver::new(__events);
        #c::__private::pipelined(
            self,
            frames,
            options,
            on_result,
            |__inputs: &(#(#input_tys,)*), __a_bufs: &mut (#(#a_tys,)*)| {
                let (#(#input_names,)*) = __inputs;
                let #obs = __stage_obs;
                #a_body
            },
            |__this: &mut Self, __inputs: &(#(#input_tys,)*), __a_values, __a_bufs: &mut (#(#a_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                let (#(#input_names,)*) = __inputs;
                let #obs = __stage_obs;
                #b_body
            },
            || (#(#c::__private::new_buffer::<#a_tys>(),)*),
            |__this: &mut Self, __inputs: &(#(#input_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                let (#(#input_names,)*) = __inputs;
                #rerun
            },
            |__inputs: &(#(#input_tys,)*)| -> u64 {
                #[allow(unused_imports)]
                use #c::__private::{ViaHeapBytes as _, ViaInlineSize as _};
                let (#(#input_names,)*) = __inputs;
                0u64 #(+ (&#c::__private::Probe(#input_names)).bytes() as u64)*
            },
            __events,
            #plan,
        )
    }
}
