//! The generated API, declared once: every item a pipeline has, with its
//! signature and docs. A valid pipeline gets the real bodies from
//! [`crate::codegen`]; an invalid one gets placeholder bodies beside its
//! errors, so the rest of the user's crate type-checks against exactly the
//! same API and only the real errors are reported (thiserror's `fallback`
//! idea). The two can never drift, because there is only one list.
//!
//! One file per item group: [`context`] (what every group reads, computed
//! once), [`data`] (the state and outputs structs), [`mode_items`] (each
//! mode as data), [`modes`] (the mode enum), [`pipeline`] (the pipeline
//! struct and its inherent impl, with the run methods in [`runs`] and the
//! `#[parallel]` ones in [`parallel`]) and [`traits`] (`cortex::Pipeline`).

mod context;
mod data;
mod mode_items;
mod modes;
mod parallel;
mod pipeline;
mod runs;
mod traits;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::PipelineAst;
use crate::codegen::Real;
use context::Api;

/// The pipeline's items.
pub fn generate(ast: &PipelineAst, real: Option<&Real<'_>>) -> TokenStream {
    let cx = Api::new(ast, real);
    let pipeline_struct = pipeline::struct_item(&cx);
    let data = data::items(&cx);
    let modes = modes::items(&cx);
    let inherent = pipeline::impl_block(&cx);
    let parallel_trait = parallel::trait_impl(&cx);
    let pipeline_trait = traits::pipeline_impl(&cx);
    let imports = match real {
        Some(_) => TokenStream::new(),
        None => imports_used(ast),
    };
    quote! {
        #imports
        #pipeline_struct
        #data
        #modes
        #inherent
        #parallel_trait
        #pipeline_trait
    }
}

/// Beside placeholder items: the first segment of every node's function
/// path, imported into an unnamed scope. The placeholders never call the
/// functions, so an import used only by the pipeline (`use cortex::ops;` for
/// `ops::to_gray_into`) would otherwise add an `unused import` warning — an
/// error under `-D warnings` — to the real one.
fn imports_used(ast: &PipelineAst) -> TokenStream {
    let mut seen: Vec<String> = Vec::new();
    let uses = ast.nodes.iter().filter_map(|n| {
        // `::x`, `crate::`, `self::`, `super::` and `Self::` paths name no import.
        if n.func.leading_colon.is_some() {
            return None;
        }
        let first = &n.func.segments.first()?.ident;
        let name = first.to_string();
        if ["crate", "self", "super", "Self"].contains(&name.as_str()) || seen.contains(&name) {
            return None;
        }
        seen.push(name);
        // At the name, so a misspelled function is reported there.
        Some(quote_spanned!(first.span()=> use #first as _;))
    });
    let uses: Vec<TokenStream> = uses.collect();
    if uses.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[allow(unused_imports)]
        const _: () = { #(#uses)* };
    }
}
