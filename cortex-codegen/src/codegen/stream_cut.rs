//! The pipelined run of a plan chosen at run time: a stream reading only
//! some outputs runs its mode's plan cut down to them, over the full
//! graph's two stages, each node skipped when the plan leaves it out.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::forms::Forms;
use super::stages::{pipelined_call, stage_a_fills, Driven, Part};

impl Forms<'_> {
    /// The body of `__run_stream_cut` (`#[parallel]` pipelines): `__plan`
    /// (the cut plan), `__mode_plan` (the mode's whole plan), `__weights`
    /// and `__read` given. A frame with outputs of an earlier frame to run
    /// into runs the cut plan and stores the outputs read; a frame making
    /// new outputs (the stream's first ones, or every frame when the
    /// caller keeps each frame's outputs) makes them all, since the outputs
    /// not read have no earlier value to keep: its second stage runs the
    /// mode's whole plan from the first stage's values when the cut plan's
    /// first stage holds all of the mode's (else the whole mode runs anew,
    /// sequentially).
    pub(super) fn cut_stream_body(&self) -> Option<TokenStream> {
        let (ast, c) = (self.cx.ast, self.cx.c);
        let stages = self.plans.program.run_time.pipelined.as_ref()?;
        let (a, bufs) = (&stages.first_stage, &stages.first.buffers);
        let a_body = self.masked(&stages.first, false, Part::StreamA(a), None);
        let b_body = self.masked(&stages.second, true, Part::StreamB(a), None);
        let a_tys: Vec<syn::Type> = stage_a_fills(self.r.ir, bufs, Some(a))
            .iter()
            .filter_map(|&id| ast.nodes[id as usize].ty.clone())
            .collect();
        let input_names: Vec<Ident> = ast
            .inputs
            .iter()
            .map(|i| crate::names::local_like(&i.name))
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
        Some(pipelined_call(
            c,
            ast,
            &self.n.outputs,
            Driven {
                a_tys,
                a_body,
                b_body: quote! {
                    // A frame with no outputs to run into makes every output:
                    // the mode's whole second stage, from the first stage's
                    // values when the cut plan computed all of the mode's
                    // first-stage work (else the whole mode anew).
                    const __STAGE_A: &[bool] = &[#(#a),*];
                    let (__plan, __sink) = match __sink {
                        #c::__private::Sink::Into(__o, _) => (__plan, #c::__private::Sink::Into(__o, __read)),
                        #c::__private::Sink::Fresh(__slot) if __plan.runs_all_of(__mode_plan, __STAGE_A) => (__mode_plan, #c::__private::Sink::Fresh(__slot)),
                        #c::__private::Sink::Fresh(__slot) => return #whole,
                    };
                    #b_body
                },
                rerun: quote! {
                    match __sink {
                        #c::__private::Sink::Into(__o, _) => #cut,
                        #c::__private::Sink::Fresh(__slot) => #whole,
                    }
                },
                plan: quote!(__plan),
            },
        ))
    }
}
