//! Names of the generated items and hygienic locals.

use proc_macro2::{Ident, Span};
use quote::format_ident;

/// The generated items of a pipeline named `name`.
pub struct ItemNames {
    pub pipeline: Ident,
    pub mode: Ident,
    pub outputs: Ident,
    pub state: Ident,
}

impl ItemNames {
    pub fn new(name: &Ident) -> Self {
        ItemNames {
            pipeline: name.clone(),
            mode: format_ident!("{}Mode", name),
            outputs: format_ident!("{}Outputs", name),
            state: format_ident!("{}State", name),
        }
    }
}

/// A local of the generated code: invisible to the user's expressions
/// (mixed-site hygiene), but reported at `at` in diagnostics.
pub fn local(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::mixed_site().located_at(at))
}

/// `POWER_SAVE` → `PowerSave`; names with lowercase letters keep their case
/// and only get an uppercase first letter.
pub fn variant_name(mode: &str) -> String {
    let camel: String = if mode.chars().any(|c| c.is_lowercase()) {
        mode.to_string()
    } else {
        mode.split('_')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let mut cs = p.chars();
                cs.next()
                    .map(|f| {
                        f.to_uppercase()
                            .chain(cs.flat_map(char::to_lowercase))
                            .collect::<String>()
                    })
                    .unwrap_or_default()
            })
            .collect()
    };
    let mut cs = camel.chars();
    match cs.next() {
        Some(f) => f.to_uppercase().chain(cs).collect(),
        None => "Mode".to_string(),
    }
}

/// Modes whose generated variant names collide (e.g. `FAST` and `Fast`).
pub fn variant_collisions(ast: &crate::ast::PipelineAst) -> Vec<syn::Error> {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut errors = Vec::new();
    for m in &ast.modes {
        let declared = m.name.to_string();
        let variant = variant_name(&declared);
        match seen.iter().find(|(v, d)| *v == variant && *d != declared) {
            Some((_, first)) => errors.push(syn::Error::new(
                m.name.span(),
                format!("modes `{first}` and `{declared}` both become the variant `{variant}`; rename one"),
            )),
            None => seen.push((variant, declared)),
        }
    }
    errors
}

/// The `run` parameters `name: &Type` of the pipeline's inputs, and their
/// names for forwarding calls (shared by the real items and the fallback).
pub fn input_params(
    ast: &crate::ast::PipelineAst,
) -> (proc_macro2::TokenStream, proc_macro2::TokenStream) {
    let names: Vec<Ident> = ast
        .inputs
        .iter()
        .map(|i| local(&i.name.to_string(), i.name.span()))
        .collect();
    let types = ast.inputs.iter().map(|i| &i.ty);
    (
        quote::quote!(#(#names: &#types),*),
        quote::quote!(#(#names),*),
    )
}

/// The fields of the outputs struct; optional outputs are `Option`s.
pub fn output_fields(ast: &crate::ast::PipelineAst) -> Vec<proc_macro2::TokenStream> {
    ast.outputs
        .iter()
        .map(|d| {
            let (name, ty) = (&d.name, &d.ty);
            if d.optional {
                quote::quote!(#[doc = "Absent when the plan eliminates it."] pub #name: ::core::option::Option<#ty>)
            } else {
                quote::quote!(pub #name: #ty)
            }
        })
        .collect()
}
