//! `run_with`'s private functions: a `Run`'s selection on its engine, into
//! the caller's outputs.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use crate::ast::PipelineAst;
use crate::names::ItemNames;

/// `__run_with` and `__run_plan_on`: a `Run`'s selection on its engine,
/// into the caller's outputs. Every output (or a rated mode, whose phases
/// only its own functions know) runs the selection's own function; a set
/// of outputs runs the selection's plan cut down to them, from the
/// pipeline's plan cache, through the plan-driven function.
pub(super) fn run_with_fn(
    c: &TokenStream,
    ast: &PipelineAst,
    mode_fns: &[Ident],
    variants: &[Ident],
    n: &ItemNames,
    (input_params, args): (&TokenStream, &TokenStream),
    sequential_only: bool,
) -> TokenStream {
    let (mode_ty, outputs_ty) = (&n.mode, &n.outputs);
    let name = ast.name.to_string();
    let not_parallel = quote! {
        ::core::result::Result::Err(#c::PipelineError::NotParallel { pipeline: #name })
    };
    let bound = if sequential_only {
        quote!(#c::Observer)
    } else {
        quote!(#c::Observer + ::core::marker::Send)
    };
    let sink = quote!(#c::__private::Sink::Into(outputs, __read));
    let (par_mode, par_weights, par_plan) = if sequential_only {
        (not_parallel.clone(), not_parallel.clone(), not_parallel)
    } else {
        (
            quote!(self.__run_parallel(mode, observer, #sink, #args)),
            quote!(self.__run_weights_parallel(weights, observer, #sink, #args)),
            quote!(self.__run_plan_parallel(plan, weights, observer, sink, #args)),
        )
    };
    let engine = quote!(#c::run::Engine);
    let select = quote!(#c::run::ChoiceRef);
    quote! {
        /// A `Run` with its observer taken out (see `run_with`).
        #[allow(clippy::too_many_arguments)]
        fn __run_with<__O: #bound>(&mut self, __select: #select<'_, #mode_ty>, __engine: #engine, __read: #c::OutputSet, observer: &mut __O, outputs: &mut #outputs_ty, #input_params) -> ::core::result::Result<(), #c::PipelineError> {
            let __ir = Self::ir();
            let __all = __read.covers(__ir);
            match __select {
                #select::Mode(mode) => {
                    if __all || <#mode_ty as #c::PipelineMode>::phase_plans(mode).len() > 1 {
                        return match __engine {
                            #engine::Sequential => match mode {
                                #(#mode_ty::#variants => self.#mode_fns(observer, #sink, #mode_ty::#variants.weights(), #args),)*
                            },
                            #engine::Parallel => #par_mode,
                        };
                    }
                    let __plan = self.__plans.get_for(<#mode_ty as #c::PipelineMode>::plan(mode).zero_pattern, __read);
                    self.__run_plan_on(__engine, &__plan, <#mode_ty as #c::PipelineMode>::weights(mode), observer, #sink, #args)
                }
                #select::Weights(weights) => {
                    if __all {
                        return match __engine {
                            #engine::Sequential => self.__run_weights(weights, observer, #sink, #args),
                            #engine::Parallel => #par_weights,
                        };
                    }
                    let __pattern = weights.zero_pattern(&__ir.weight_keys)?;
                    let __plan = self.__plans.get_for(__pattern, __read);
                    if let ::core::option::Option::Some(&__missing) = __plan.missing_outputs.first() {
                        let output: &'static str = __ir.nodes.get(__missing as usize).map_or("?", |n| n.name.as_ref());
                        return ::core::result::Result::Err(#c::PipelineError::OutputEliminated { output });
                    }
                    self.__run_plan_on(__engine, &__plan, weights, observer, #sink, #args)
                }
                #select::Plan(plan, weights) => {
                    weights.zero_pattern(&__ir.weight_keys)?;
                    plan.validate_for(__ir, __read)?;
                    self.__run_plan_on(__engine, plan, weights, observer, #sink, #args)
                }
            }
        }

        /// A plan already validated (or computed by the DCE pass) on
        /// `engine`.
        #[allow(clippy::too_many_arguments)]
        fn __run_plan_on<__O: #bound>(&mut self, engine: #engine, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, sink: #c::__private::Sink<'_, #outputs_ty>, #input_params) -> ::core::result::Result<(), #c::PipelineError> {
            match engine {
                #engine::Sequential => self.__run_plan(plan, weights, observer, sink, #args),
                #engine::Parallel => #par_plan,
            }
        }
    }
}
