//! The run methods every pipeline has: `run`, `run_into`, `run_with` and
//! `run_with_fresh`, and the private functions they call per selection.

use proc_macro2::TokenStream;
use quote::quote;

use super::context::Api;

/// The run methods of the inherent impl.
pub(super) fn methods(cx: &Api<'_>) -> TokenStream {
    let with = run_with_methods(cx);
    let modes = mode_methods(cx);
    quote! {
        #with
        #modes
    }
}

/// The engine's bound on the observer: `Send` too for a `#[parallel]`
/// pipeline, whose observer may see nodes from the pool's threads.
fn observer_bound(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    if cx.ast.parallel {
        quote!(#c::Observer + ::core::marker::Send)
    } else {
        quote!(#c::Observer)
    }
}

/// `__run_with_fresh`'s body: the private function of `run`'s selection
/// and engine.
fn fresh_dispatch(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let args = &cx.args;
    // The parallel engine's fresh forms, or the refusal of a pipeline
    // without `#[parallel]`.
    let fresh_parallel = if cx.ast.parallel {
        quote! {
            (#c::run::ChoiceRef::Mode(mode), #c::run::Engine::Parallel) => self.__run_parallel_fresh(mode, observer, #args),
            (#c::run::ChoiceRef::Weights(weights), #c::run::Engine::Parallel) => self.__run_weights_parallel_fresh(weights, observer, #args),
            (#c::run::ChoiceRef::Plan(plan, weights), #c::run::Engine::Parallel) => self.__run_plan_parallel_fresh(plan, weights, observer, #args),
        }
    } else {
        let name = &cx.name_str;
        quote! {
            (_, #c::run::Engine::Parallel) => ::core::result::Result::Err(#c::PipelineError::NotParallel { pipeline: #name }),
        }
    };
    cx.body(|| {
        quote! {
            match (select, engine) {
                (#c::run::ChoiceRef::Mode(mode), #c::run::Engine::Sequential) => self.__run_mode_fresh(mode, observer, #args),
                (#c::run::ChoiceRef::Weights(weights), #c::run::Engine::Sequential) => self.__run_weights_fresh(weights, observer, #args),
                (#c::run::ChoiceRef::Plan(plan, weights), #c::run::Engine::Sequential) => self.__run_plan_fresh(plan, weights, observer, #args),
                #fresh_parallel
            }
        }
    })
}

/// `run_with`, `run_with_fresh` and the private function the latter calls.
fn run_with_methods(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (mode_ty, outputs_ty) = (&cx.n.mode, &cx.n.outputs);
    let (params, args, params_c) = (&cx.params, &cx.args, &cx.params_c);
    let run_with = cx.pick(|b| &b.run_with);
    let fresh_dispatch = fresh_dispatch(cx);
    let bound = observer_bound(cx);
    quote! {
        /// Runs one frame as `run` says into `outputs` of an earlier
        /// frame (reusing their memory, as [`Self::run_into`] does):
        /// its selection (a mode, weights chosen at run time, or an
        /// explicit plan), its engine (sequential, or parallel for a
        /// `#[parallel]` pipeline, whose observer must then be `Send`),
        /// its observer, and the outputs it reads — only their producers
        /// run, and an output not read is left as it was in `outputs`
        /// (see [`Run::outputs`](#c::run::Run::outputs)). On error the
        /// state and `outputs` are left as they were.
        pub fn run_with<__O: #bound>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
            #run_with
        }

        /// [`Self::run_with`] into new outputs, each computed whatever
        /// `run`'s output set says (there are no earlier values to
        /// leave): for a first frame, or a pipeline whose outputs have
        /// no `Default`. It runs the same functions as the other forms,
        /// chosen once a frame. On error the state is left as it was.
        pub fn run_with_fresh<__O: #bound>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            let (__select, __engine) = (run.select, run.engine);
            match run.observer() {
                ::core::option::Option::Some(observer) => self.__run_with_fresh(__select, __engine, observer, #args),
                ::core::option::Option::None => self.__run_with_fresh(__select, __engine, &mut #c::NoopObserver, #args),
            }
        }

        /// [`Self::run_with_fresh`] with the observer taken out of the `Run`.
        fn __run_with_fresh<__O: #bound>(&mut self, select: #c::run::ChoiceRef<'_, #mode_ty>, engine: #c::run::Engine, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #fresh_dispatch
        }
    }
}

/// `run`, `run_into` and the private function of each selection.
fn mode_methods(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (mode_ty, outputs_ty) = (&cx.n.mode, &cx.n.outputs);
    let (params, args, params_c, args_c) = (&cx.params, &cx.args, &cx.params_c, &cx.args_c);
    let run_observed = cx.pick(|b| &b.run_observed);
    let run_into_observed = cx.pick(|b| &b.run_into_observed);
    let run_weights_observed = cx.pick(|b| &b.run_weights_observed);
    let run_plan_observed = cx.pick(|b| &b.run_plan_observed);
    quote! {
        /// Runs one frame in `mode`. On error the state is left as it was.
        pub fn run(&mut self, mode: #mode_ty, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            self.__run_mode_fresh(mode, &mut #c::NoopObserver, #args)
        }

        /// Runs one frame in `mode` into `outputs` from an earlier frame,
        /// reusing their memory: a filled output trades buffers with the
        /// pipeline instead of being allocated. With every node filling
        /// its own buffer, a steady stream of same-size frames allocates
        /// nothing. On error the state and `outputs` are left as they were.
        pub fn run_into(&mut self, mode: #mode_ty, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
            self.__run_mode_into(mode, &mut #c::NoopObserver, #args_c outputs)
        }

        /// A declared mode's frame into `outputs` of an earlier frame.
        fn __run_mode_into<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
            #run_into_observed
        }

        /// A declared mode's frame into new outputs.
        fn __run_mode_fresh<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #run_observed
        }

        /// A frame of weights chosen at run time into new outputs:
        /// validated, then the plan of their zero pattern is taken from
        /// a bounded cache (computed once per pattern by the DCE pass).
        fn __run_weights_fresh<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #run_weights_observed
        }

        /// A frame of an explicit plan into new outputs, the plan
        /// validated against this pipeline (`Plan::validate`) before
        /// anything runs.
        fn __run_plan_fresh<__O: #c::Observer>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
            #run_plan_observed
        }
    }
}
