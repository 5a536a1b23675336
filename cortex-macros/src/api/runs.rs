//! The run methods every pipeline has: `run`, `run_into` and `run_with`;
//! and, deprecated, `run_weights`, `run_plan` (and their `_into` forms) and
//! the `_observed` twins, which `run_with` replaces.

use proc_macro2::TokenStream;
use quote::quote;

use super::context::Api;

/// The run methods of the inherent impl.
pub(super) fn methods(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (mode_ty, outputs_ty) = (&cx.n.mode, &cx.n.outputs);
    let (params, args, params_c, args_c) = (&cx.params, &cx.args, &cx.params_c, &cx.args_c);
    let run_observed = cx.pick(|b| &b.run_observed);
    let run_into_observed = cx.pick(|b| &b.run_into_observed);
    let run_weights_observed = cx.pick(|b| &b.run_weights_observed);
    let run_plan_observed = cx.pick(|b| &b.run_plan_observed);
    let run_weights_into_observed = cx.pick(|b| &b.run_weights_into_observed);
    let run_plan_into_observed = cx.pick(|b| &b.run_plan_into_observed);
    let run_with = cx.pick(|b| &b.run_with);
    let dep_run_observed =
        cx.deprecated("use run_with_fresh(&mut Run::mode(mode).observed(observer), inputs…)");
    let dep_run_into_observed =
        cx.deprecated("use run_with(&mut Run::mode(mode).observed(observer), inputs…, outputs)");
    let dep_run_weights = cx.deprecated("use run_with_fresh(&mut Run::weights(weights), inputs…)");
    let dep_run_weights_observed =
        cx.deprecated("use run_with_fresh(&mut Run::weights(weights).observed(observer), inputs…)");
    let dep_run_plan = cx.deprecated("use run_with_fresh(&mut Run::plan(plan, weights), inputs…)");
    let dep_run_plan_observed = cx.deprecated(
        "use run_with_fresh(&mut Run::plan(plan, weights).observed(observer), inputs…)",
    );
    let dep_run_weights_into =
        cx.deprecated("use run_with(&mut Run::weights(weights), inputs…, outputs)");
    let dep_run_weights_into_observed = cx.deprecated(
        "use run_with(&mut Run::weights(weights).observed(observer), inputs…, outputs)",
    );
    let dep_run_plan_into =
        cx.deprecated("use run_with(&mut Run::plan(plan, weights), inputs…, outputs)");
    let dep_run_plan_into_observed = cx.deprecated(
        "use run_with(&mut Run::plan(plan, weights).observed(observer), inputs…, outputs)",
    );
    // The parallel engine's fresh forms, or the refusal of a pipeline
    // without `#[parallel]`.
    let fresh_parallel = if cx.ast.parallel {
        quote! {
            (#c::run::Select::Mode(mode), #c::run::Engine::Parallel) => self.run_parallel_observed(mode, observer, #args),
            (#c::run::Select::Weights(weights), #c::run::Engine::Parallel) => self.run_weights_parallel_observed(weights, observer, #args),
            (#c::run::Select::Plan(plan, weights), #c::run::Engine::Parallel) => self.run_plan_parallel_observed(plan, weights, observer, #args),
        }
    } else {
        let name = &cx.name_str;
        quote! {
            (_, #c::run::Engine::Parallel) => ::core::result::Result::Err(#c::PipelineError::NotParallel { pipeline: #name }),
        }
    };
    let fresh_dispatch = cx.body(|| {
        quote! {
            match (select, engine) {
                (#c::run::Select::Mode(mode), #c::run::Engine::Sequential) => self.run_observed(mode, observer, #args),
                (#c::run::Select::Weights(weights), #c::run::Engine::Sequential) => self.run_weights_observed(weights, observer, #args),
                (#c::run::Select::Plan(plan, weights), #c::run::Engine::Sequential) => self.run_plan_observed(plan, weights, observer, #args),
                #fresh_parallel
            }
        }
    });
    let bound = if cx.ast.parallel {
        quote!(#c::Observer + ::core::marker::Send)
    } else {
        quote!(#c::Observer)
    };
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
            #[allow(deprecated)]
            pub fn run_with_fresh<__O: #bound>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                let (__select, __engine) = (run.select, run.engine);
                match run.observer() {
                    ::core::option::Option::Some(observer) => self.__run_with_fresh(__select, __engine, observer, #args),
                    ::core::option::Option::None => self.__run_with_fresh(__select, __engine, &mut #c::NoopObserver, #args),
                }
            }

            /// [`Self::run_with_fresh`] with the observer taken out of the `Run`.
            #[allow(deprecated)]
            fn __run_with_fresh<__O: #bound>(&mut self, select: #c::run::Select<'_, #mode_ty>, engine: #c::run::Engine, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #fresh_dispatch
            }

            /// Runs one frame in `mode`. On error the state is left as it was.
            #[allow(deprecated)]
            pub fn run(&mut self, mode: #mode_ty, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_observed(mode, &mut #c::NoopObserver, #args)
            }

            /// Runs one frame in `mode`, reporting each node to `observer`.
            #dep_run_observed
            pub fn run_observed<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #run_observed
            }

            /// Runs one frame in `mode` into `outputs` from an earlier frame,
            /// reusing their memory: a filled output trades buffers with the
            /// pipeline instead of being allocated. With every node filling
            /// its own buffer, a steady stream of same-size frames allocates
            /// nothing. On error the state and `outputs` are left as they were.
            #[allow(deprecated)]
            pub fn run_into(&mut self, mode: #mode_ty, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_into_observed(mode, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_into`], reporting each node to `observer`.
            #dep_run_into_observed
            pub fn run_into_observed<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #run_into_observed
            }

            /// Runs one frame with weights chosen at run time: validated, then
            /// the plan of their zero pattern is taken from a bounded cache
            /// (computed once per pattern by the DCE pass).
            #dep_run_weights
            pub fn run_weights(&mut self, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_weights_observed(weights, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_weights`], reporting each node to `observer`.
            #dep_run_weights_observed
            pub fn run_weights_observed<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #run_weights_observed
            }

            /// Runs one frame with an explicit plan and weights, e.g. the full
            /// graph (`self.pattern_plan(0)`) with a mode's weights, to compare
            /// against that mode's plan. The plan is validated against this
            /// pipeline (`Plan::validate`) before anything runs: a plan of
            /// another pipeline, or one that eliminates a non-optional output,
            /// is an error and the state is untouched.
            #dep_run_plan
            pub fn run_plan(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_plan_observed(plan, weights, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_plan`], reporting each node to `observer`.
            #dep_run_plan_observed
            pub fn run_plan_observed<__O: #c::Observer>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #run_plan_observed
            }

            /// [`Self::run_weights`] into `outputs` from an earlier frame,
            /// reusing their memory as [`Self::run_into`] does. On error the
            /// state and `outputs` are left as they were.
            #dep_run_weights_into
            pub fn run_weights_into(&mut self, weights: &#c::Weights, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_weights_into_observed(weights, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_weights_into`], reporting each node to `observer`.
            #dep_run_weights_into_observed
            pub fn run_weights_into_observed<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #run_weights_into_observed
            }

            /// [`Self::run_plan`] into `outputs` from an earlier frame, reusing
            /// their memory as [`Self::run_into`] does. On error the state and
            /// `outputs` are left as they were.
            #dep_run_plan_into
            pub fn run_plan_into(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_plan_into_observed(plan, weights, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_plan_into`], reporting each node to `observer`.
            #dep_run_plan_into_observed
            pub fn run_plan_into_observed<__O: #c::Observer>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #run_plan_into_observed
            }
    }
}
