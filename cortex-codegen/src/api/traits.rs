//! `impl cortex::Pipeline`: the trait every pipeline implements, each
//! method calling the inherent one.

use proc_macro2::TokenStream;
use quote::quote;

use super::context::Api;

/// `impl cortex::Pipeline` for the pipeline.
pub(super) fn pipeline_impl(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (pipeline, mode_ty, outputs_ty, state_ty) =
        (&cx.n.pipeline, &cx.n.mode, &cx.n.outputs, &cx.n.state);
    let (args, args_c) = (&cx.args, &cx.args_c);
    let (input_names, input_tys) = (&cx.input_names, &cx.input_tys);
    quote! {
        // Each method calls the inherent one of the same name.
        impl #c::Pipeline for #pipeline {
            type Mode = #mode_ty;
            type Inputs<'__a> = (#(&'__a #input_tys,)*);
            type Outputs = #outputs_ty;
            type State = #state_ty;

            fn graph(&self) -> &'static #c::ir::GraphIr { #pipeline::ir() }
            fn mode(&self, index: usize) -> ::core::option::Option<#mode_ty> { #mode_ty::ALL.get(index).copied() }
            fn mode_index(&self, mode: #mode_ty) -> usize { mode as usize }
            fn mode_weights(&self, mode: #mode_ty) -> ::core::option::Option<&#c::Weights> { ::core::option::Option::Some(#mode_ty::weights(mode)) }
            fn mode_plan(&self, mode: #mode_ty) -> ::core::option::Option<&#c::plan::Plan> { ::core::option::Option::Some(#mode_ty::plan(mode)) }
            fn state(&self) -> &#state_ty { #pipeline::state(self) }
            fn reset(&mut self) { #pipeline::reset(self) }
            fn run(&mut self, mode: #mode_ty, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run(self, mode, #args)
            }
            fn run_into(&mut self, mode: #mode_ty, inputs: Self::Inputs<'_>, outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_into(self, mode, #args_c outputs)
            }
            fn run_with_fresh<__O: #c::Observer + ::core::marker::Send>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_with_fresh(self, run, #args)
            }
            fn run_with<__O: #c::Observer + ::core::marker::Send>(&mut self, run: &mut #c::run::Run<'_, #mode_ty, __O>, inputs: Self::Inputs<'_>, outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_with(self, run, #args_c outputs)
            }
            fn pattern_plan(&mut self, pattern: u64) -> ::std::sync::Arc<#c::plan::Plan> {
                #pipeline::pattern_plan(self, pattern)
            }
            fn buffer_bytes(&self) -> ::std::vec::Vec<(&'static str, u32, usize)> {
                #pipeline::buffer_bytes(self)
            }
            fn set_fusion(&mut self, on: bool) {
                #pipeline::set_fusion(self, on)
            }
            fn frame_index(&self) -> u64 {
                #pipeline::frame_index(self)
            }
            fn set_rates(&mut self, on: bool) {
                #pipeline::set_rates(self, on)
            }
            fn holds(&self) -> &[#c::hold::Hold] {
                #pipeline::holds(self)
            }
        }
        impl #c::CompiledPipeline for #pipeline {
            fn ir() -> &'static #c::ir::GraphIr { #pipeline::ir() }
        }
    }
}
