//! The pipelined run of a plan chosen at run time: a stream reading only
//! some outputs runs its mode's plan cut down to them, over the full
//! graph's two stages, each node skipped when the plan leaves it out.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::body::run_body;
use super::forms::Forms;
use super::shape::{Flavor, Shape};
use super::stages::{stage_a_fills, Part};
use crate::names::local;

impl Forms<'_> {
    /// The body of `__run_stream_cut` (`#[parallel]` pipelines): `__plan`
    /// (the cut plan), `__mode_plan` (the mode's whole plan), `__weights`
    /// and `__read` given. A frame with outputs of an earlier frame to run
    /// into runs the cut plan and stores the outputs read; a frame making
    /// new outputs (the stream's first ones) makes them all, running the
    /// mode's whole plan sequentially, since the outputs not read have no
    /// earlier value to keep.
    pub(super) fn cut_stream_body(&self) -> Option<TokenStream> {
        let (ast, c) = (self.cx.ast, self.cx.c);
        let stages = self.plans.program.run_time.pipelined.as_ref()?;
        let (a, bufs) = (&stages.first_stage, &stages.first.buffers);
        let waves = stages.second.waves();
        let outputs_ty = &self.n.outputs;
        let obs = local("__obs", Span::call_site());
        let sink = quote!(#c::__private::Sink<'_, #outputs_ty>);
        let (input_names, input_tys): (Vec<Ident>, Vec<&syn::Type>) = ast
            .inputs
            .iter()
            .map(|i| (crate::names::local_like(&i.name), &i.ty))
            .unzip();
        let stage = |part, parallel| {
            run_body(
                self.cx,
                self.n,
                Shape {
                    flavor: Flavor::Masked,
                    bufs,
                    parallel,
                    part,
                    fusion: None,
                    rated: None,
                    forget: &self.plans.forget_all,
                },
                quote!(__plan),
                quote!(__weights),
            )
        };
        let a_body = stage(Part::StreamA(a), None);
        let b_body = stage(Part::StreamB(a), Some(waves));
        let a_tys: Vec<syn::Type> = stage_a_fills(self.r.ir, bufs, Some(a))
            .iter()
            .filter_map(|&id| ast.nodes[id as usize].ty.clone())
            .collect();
        let run_plan = |plan: TokenStream, sink: TokenStream| quote!(__this.__run_plan(#plan, __weights, &mut #c::NoopObserver, #sink, #(#input_names),*));
        let whole = run_plan(
            quote!(__mode_plan),
            quote!(#c::__private::Sink::Fresh(__slot)),
        );
        let cut = run_plan(
            quote!(__plan),
            quote!(#c::__private::Sink::Into(__o, __read)),
        );
        Some(quote! {
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
                    let __sink = match __sink {
                        #c::__private::Sink::Into(__o, _) => #c::__private::Sink::Into(__o, __read),
                        #c::__private::Sink::Fresh(__slot) => return #whole,
                    };
                    let #obs = __stage_obs;
                    #b_body
                },
                || (#(#c::__private::new_buffer::<#a_tys>(),)*),
                |__this: &mut Self, __inputs: &(#(#input_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                    let (#(#input_names,)*) = __inputs;
                    match __sink {
                        #c::__private::Sink::Into(__o, _) => #cut,
                        #c::__private::Sink::Fresh(__slot) => #whole,
                    }
                },
                |__inputs: &(#(#input_tys,)*)| -> u64 {
                    #[allow(unused_imports)]
                    use #c::__private::{ViaHeapBytes as _, ViaInlineSize as _};
                    let (#(#input_names,)*) = __inputs;
                    0u64 #(+ (&#c::__private::Probe(#input_names)).bytes() as u64)*
                },
                __events,
                __plan,
            )
        })
    }
}
