//! The generated API, declared once: every item a pipeline has, with its
//! signature and docs. A valid pipeline gets the real bodies from
//! [`crate::codegen`]; an invalid one gets placeholder bodies beside its
//! errors, so the rest of the user's crate type-checks against exactly the
//! same API and only the real errors are reported (thiserror's `fallback`
//! idea). The two can never drift, because there is only one list.
//!
//! One file per item group: [`context`] (what every group reads, computed
//! once), [`data`] (the state and outputs structs), [`modes`] (the mode
//! enum), [`pipeline`] (the pipeline struct and its inherent impl, with the
//! run methods in [`runs`] and the `#[parallel]` ones in [`parallel`]) and
//! [`traits`] (`cortex::Pipeline`).

mod context;
mod data;
mod modes;
mod parallel;
mod pipeline;
mod runs;
mod traits;

use proc_macro2::TokenStream;
use quote::quote;

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
    quote! {
        #pipeline_struct
        #data
        #modes
        #inherent
        #parallel_trait
        #pipeline_trait
    }
}
