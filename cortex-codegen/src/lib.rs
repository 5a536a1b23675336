//! The code generator behind `cortex_graph!`, as an ordinary library: parses
//! the pipeline DSL, builds the shared graph model, validates it with
//! `cortex-core`'s rules, and generates typed straight-line code and `const`
//! plans for every mode. The proc-macro crate `cortex-macros` only hands it
//! the tokens and returns what [`expand`] gives back, so the generator is
//! tested here as plain Rust, without a compiler round trip.
//!
//! Stages, one module each: `parse` (syntax, with recovery) → `to_spec`
//! (to `cortex_core::spec::GraphSpec`, and from its locations back to
//! spans) → `cortex_core::check` (validation and DCE, shared with the
//! runtime) → `api` (the generated items, declared once) with the bodies
//! of `codegen` and the data of `consts`, or placeholder bodies beside the
//! errors. `diagnostic` turns the core's diagnostics into compiler errors
//! and warnings.

mod api;
mod ast;
mod attrs;
mod codegen;
mod consts;
mod diagnostic;
#[cfg(test)]
mod expand_tests;
mod krate;
mod names;
mod parse;
#[cfg(test)]
mod tests;
mod to_spec;

use proc_macro2::TokenStream;

/// The expansion of one `cortex_graph!` invocation (`input` is what is
/// between its braces): the generated items, or the errors (as
/// `compile_error!`) with placeholder items beside them, so the rest of the
/// user's crate still type-checks against the pipeline's API. Never panics.
pub fn expand(input: TokenStream) -> TokenStream {
    let parsed: parse::Parsed = match syn::parse2(input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error(),
    };
    let Some(ast) = parsed.ast else {
        return parsed
            .errors
            .into_iter()
            .map(|e| e.to_compile_error())
            .collect();
    };
    let mut out = TokenStream::new();
    let mut failed = !parsed.errors.is_empty();
    out.extend(parsed.errors.into_iter().map(|e| e.to_compile_error()));
    // A malformed item was skipped: validating the rest would report its
    // consumers as dangling, a cascade of one mistake.
    if parsed.items_skipped {
        out.extend(api::generate(&ast, None));
        return out;
    }
    let spec = to_spec::graph_spec(&ast);
    let checked = cortex_core::check::check(&spec);
    for d in &checked.diagnostics {
        failed |= d.severity == cortex_core::diag::Severity::Error;
        out.extend(diagnostic::emit(&ast, d));
    }
    match checked.ir {
        Some(ir) if !failed => out.extend(api::generate(
            &ast,
            Some(&codegen::Real {
                ir: &ir,
                mode_plans: &checked.mode_plans,
            }),
        )),
        _ => out.extend(api::generate(&ast, None)),
    }
    out
}
