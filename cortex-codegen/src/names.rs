//! Names of the generated items and hygienic locals.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;

use crate::ast::PipelineAst;

/// The generated items of a pipeline named `name`.
pub struct ItemNames {
    pub pipeline: Ident,
    pub mode: Ident,
    pub outputs: Ident,
    pub state: Ident,
}

impl ItemNames {
    pub fn new(name: &Ident) -> Self {
        // `format_ident!` drops a raw identifier's `r#`: `r#type` → `typeMode`.
        ItemNames {
            pipeline: name.clone(),
            mode: format_ident!("{}Mode", name),
            outputs: format_ident!("{}Outputs", name),
            state: format_ident!("{}State", name),
        }
    }
}

/// A DSL name as the model knows it: a raw identifier without its `r#`.
pub fn text(name: &Ident) -> String {
    name.unraw().to_string()
}

/// A local of the generated code: invisible to the user's expressions
/// (mixed-site hygiene), but reported at `at` in diagnostics. `name` is a
/// generated name (a prefix and a DSL name), never a keyword.
pub fn local(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::mixed_site().located_at(at))
}

/// A local named like the user's identifier (e.g. an input as a `run`
/// parameter, so rustdoc shows its name), raw if it was written raw.
pub fn local_like(name: &Ident) -> Ident {
    local_like_at(name, name.span())
}

/// [`local_like`], reported at `at`.
pub fn local_like_at(name: &Ident, at: Span) -> Ident {
    let span = Span::mixed_site().located_at(at);
    let plain = name.unraw().to_string();
    if name.to_string().starts_with("r#") {
        Ident::new_raw(&plain, span)
    } else {
        Ident::new(&plain, span)
    }
}

/// The variant of a mode; `None` when it would not be a valid identifier
/// (reported by the checks; the placeholder items leave it out).
pub fn variant(mode: &str) -> Option<Ident> {
    let v = cortex_core::naming::mode_variant(mode);
    cortex_core::naming::is_valid_variant(&v).then(|| format_ident!("{}", v))
}

/// The `run` parameters `name: &Type` of the pipeline's inputs, and their
/// names for forwarding calls.
pub fn input_params(ast: &PipelineAst) -> (TokenStream, TokenStream) {
    let names: Vec<Ident> = ast.inputs.iter().map(|i| local_like(&i.name)).collect();
    let types = ast.inputs.iter().map(|i| &i.ty);
    (quote!(#(#names: &#types),*), quote!(#(#names),*))
}

/// The function holding state `i`'s initial value (one per state, called
/// by `new`, `reset` and the run functions).
pub fn state_init_fn(i: usize) -> Ident {
    format_ident!("__initial_state_{}", i)
}
