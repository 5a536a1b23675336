//! The state and outputs structs: public fields with docs, and `Debug`,
//! `Clone`, `PartialEq` where every field has them.

use proc_macro2::{Ident, TokenStream};
use quote::{quote, quote_spanned};

use super::context::Api;
use crate::names::text;

/// The state struct, the outputs struct and their impls.
pub(super) fn items(cx: &Api<'_>) -> TokenStream {
    let ast = cx.ast;
    let (vis, state_ty, outputs_ty) = (&ast.vis, &cx.n.state, &cx.n.outputs);
    let state_docs: Vec<String> = ast
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| match cx.real.and_then(|r| r.ir.states.get(i)) {
            Some(st) => format!(
                "Last frame's value of `{}` (initially `{}`).",
                node_name(cx, st.writer),
                st.init
            ),
            None => format!("The state `{}`.", text(&s.name)),
        })
        .collect();
    let state_names: Vec<&Ident> = ast.states.iter().map(|s| &s.name).collect();
    let state_tys: Vec<&syn::Type> = ast.states.iter().map(|s| &s.ty).collect();
    let outputs = cx.outputs();
    let output_names: Vec<&Ident> = outputs.iter().map(|o| &o.name).collect();
    let output_tys: Vec<TokenStream> = outputs
        .iter()
        .map(|o| {
            let ty = &o.ty;
            if o.optional {
                quote!(::core::option::Option<#ty>)
            } else {
                quote!(#ty)
            }
        })
        .collect();
    let output_docs: Vec<String> = outputs
        .iter()
        .map(|o| {
            if o.optional {
                format!(
                    "The value of node `{}`; `None` when the plan eliminates it.",
                    text(&o.name)
                )
            } else {
                format!("The value of node `{}`.", text(&o.name))
            }
        })
        .collect();
    let state_impls = value_impls(state_ty, &state_names, &state_tys);
    let output_impls = value_impls(outputs_ty, &output_names, &output_tys);
    // Outputs to run into before any frame ran (`run_with`), where every
    // field has a default; the same higher-ranked bounds as above.
    // Not a derive: a derive would require `Default` of every field type.
    let output_default = quote_spanned! {outputs_ty.span()=>
        #[allow(clippy::derivable_impls)]
        impl ::core::default::Default for #outputs_ty where #(for<'__x> #output_tys: ::core::default::Default,)* {
            fn default() -> Self {
                #outputs_ty { #(#output_names: ::core::default::Default::default(),)* }
            }
        }
    };
    quote! {
        /// The temporal state of the pipeline, between frames.
        #vis struct #state_ty {
            #(#[doc = #state_docs] pub #state_names: #state_tys,)*
        }

        /// What one frame of the pipeline returns. A run that reads only
        /// some outputs (`run_with` with `Run::outputs`) leaves the others
        /// as they were.
        #vis struct #outputs_ty {
            #(#[doc = #output_docs] pub #output_names: #output_tys,)*
        }

        #state_impls
        #output_impls
        #output_default
    }
}

impl Api<'_> {
    /// The declared outputs; an output listed twice is one error (the
    /// DSL's), and the outputs struct keeps its first declaration only.
    pub(super) fn outputs(&self) -> Vec<&crate::ast::OutputDecl> {
        let all = &self.ast.outputs;
        all.iter()
            .enumerate()
            .filter(|(i, o)| !all[..*i].iter().any(|p| p.name == o.name))
            .map(|(_, o)| o)
            .collect()
    }
}

/// The name of node `id`, for docs.
fn node_name(cx: &Api<'_>, id: u32) -> String {
    cx.real
        .and_then(|r| r.ir.nodes.get(id as usize))
        .map_or_else(|| "?".to_string(), |n| n.name.to_string())
}

/// `Debug`, `Clone` and `PartialEq` for a struct of public fields, each
/// where every field has it. The bounds are higher-ranked (`for<'__x> T:
/// Trait`) so that a field type without the trait makes the impl not apply
/// instead of being an error: a derive would require the trait of every
/// field type.
fn value_impls(ty: &Ident, names: &[&Ident], tys: &[impl quote::ToTokens]) -> TokenStream {
    let ty_str = ty.to_string();
    let name_strs: Vec<String> = names.iter().map(|n| text(n)).collect();
    let span = ty.span();
    let eq = if names.is_empty() {
        quote!(true)
    } else {
        quote!(#(self.#names == other.#names)&&*)
    };
    quote_spanned! {span=>
        impl ::core::fmt::Debug for #ty where #(for<'__x> #tys: ::core::fmt::Debug,)* {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#ty_str)#(.field(#name_strs, &self.#names))*.finish()
            }
        }
        impl ::core::clone::Clone for #ty where #(for<'__x> #tys: ::core::clone::Clone,)* {
            fn clone(&self) -> Self {
                #ty { #(#names: ::core::clone::Clone::clone(&self.#names),)* }
            }
        }
        #[allow(unused_variables)]
        impl ::core::cmp::PartialEq for #ty where #(for<'__x> #tys: ::core::cmp::PartialEq,)* {
            fn eq(&self, other: &Self) -> bool {
                #eq
            }
        }
    }
}
