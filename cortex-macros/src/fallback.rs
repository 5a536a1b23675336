//! Placeholder items emitted beside the errors of an invalid pipeline, so the
//! rest of the user's crate still type-checks against the pipeline's API and
//! only the real errors are reported (the thiserror `fallback` idea).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::PipelineAst;
use crate::names::{input_params, output_fields, variant_name, ItemNames};

/// The pipeline's items with bodies that are never run.
pub fn generate(ast: &PipelineAst) -> TokenStream {
    let n = ItemNames::new(&ast.name);
    let (pipeline, mode_ty, outputs_ty, state_ty) = (&n.pipeline, &n.mode, &n.outputs, &n.state);
    let vis = &ast.vis;
    let attrs = &ast.attrs;
    let mut variants: Vec<_> = ast
        .modes
        .iter()
        .map(|m| format_ident!("{}", variant_name(&m.name.to_string())))
        .collect();
    variants.dedup();
    if variants.is_empty() {
        variants.push(format_ident!("Full"));
    }
    let states = ast.states.iter().map(|s| {
        let (name, ty) = (&s.name, &s.ty);
        quote!(pub #name: #ty)
    });
    let outputs = output_fields(ast);
    let (params, _) = input_params(ast);
    quote! {
        #(#attrs)*
        #vis struct #pipeline { state: #state_ty }
        #vis struct #state_ty { #(#states,)* }
        #vis struct #outputs_ty { #(#outputs,)* }
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #vis enum #mode_ty { #(#variants,)* }
        #[allow(unused_variables, dead_code, clippy::all)]
        impl #mode_ty {
            pub fn name(self) -> &'static str { ::core::unimplemented!() }
            pub fn from_name(name: &str) -> ::core::option::Option<Self> { ::core::unimplemented!() }
            pub fn plan(self) -> &'static ::cortex::plan::Plan { ::core::unimplemented!() }
            pub fn weights(self) -> &'static ::cortex::Weights { ::core::unimplemented!() }
        }
        #[allow(unused_variables, dead_code, clippy::all)]
        impl #pipeline {
            pub fn ir() -> &'static ::cortex::ir::GraphIr { ::core::unimplemented!() }
            pub fn new() -> Self { ::core::unimplemented!() }
            pub fn state(&self) -> &#state_ty { &self.state }
            pub fn reset(&mut self) {}
            pub fn run(&mut self, mode: #mode_ty, #params) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> { ::core::unimplemented!() }
            pub fn run_observed<__O: ::cortex::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> { ::core::unimplemented!() }
            pub fn run_weights(&mut self, weights: &::cortex::Weights, #params) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> { ::core::unimplemented!() }
            pub fn run_weights_observed<__O: ::cortex::Observer>(&mut self, weights: &::cortex::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> { ::core::unimplemented!() }
        }
        impl ::core::default::Default for #pipeline {
            fn default() -> Self { Self::new() }
        }
    }
}
