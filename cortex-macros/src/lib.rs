//! The `cortex_graph!` procedural macro: parses the pipeline DSL, builds the
//! shared graph model, validates it with `cortex-core`'s rules, and generates
//! typed straight-line code and `const` plans for every mode.
//!
//! Stages, one module each: [`parse`] (syntax, with recovery) → [`lower`]
//! (to `cortex_core::spec::GraphSpec` and spans) → `cortex_core::check`
//! (validation and DCE, shared with the runtime) → [`codegen`] /
//! [`consts`], or [`fallback`] beside the errors.

mod ast;
mod attrs;
mod codegen;
mod consts;
mod fallback;
mod lower;
mod names;
mod parse;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;

/// Declares a pipeline. See the crate README for the grammar and an example.
#[proc_macro]
pub fn cortex_graph(input: TokenStream) -> TokenStream {
    expand(input.into()).into()
}

fn expand(input: TokenStream2) -> TokenStream2 {
    let parsed: parse::Parsed = match syn::parse2(input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error(),
    };
    let Some(ast) = parsed.ast else {
        return errors(parsed.errors);
    };
    let mut errs = parsed.errors;
    // A malformed item was skipped: validating the rest would report its
    // consumers as dangling, a cascade of one mistake.
    let items_complete = !parsed.items_skipped;
    let mut checked = None;
    if items_complete {
        let spec = lower::spec(&ast);
        let result = cortex_core::check::check(&spec);
        errs.extend(result.diagnostics.iter().map(|d| lower::to_error(&ast, d)));
        errs.extend(names::variant_collisions(&ast));
        checked = Some(result);
    }
    if !errs.is_empty() {
        let fallback = fallback::generate(&ast);
        let e = errors(errs);
        return quote::quote!(#e #fallback);
    }
    let Some(cortex_core::check::Checked {
        ir: Some(ir),
        mode_plans,
        ..
    }) = checked
    else {
        return fallback::generate(&ast);
    };
    let pattern_plans = (ir.weight_keys.len() <= codegen::MAX_PRECOMPUTED_KEYS)
        .then(|| cortex_core::dce::plans_for_all_patterns(&ir));
    codegen::generate(&codegen::Input {
        ast: &ast,
        ir: &ir,
        mode_plans: &mode_plans,
        pattern_plans: pattern_plans.as_deref(),
    })
}

fn errors(errs: Vec<syn::Error>) -> TokenStream2 {
    errs.into_iter().map(|e| e.to_compile_error()).collect()
}
