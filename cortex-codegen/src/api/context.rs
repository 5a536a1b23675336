//! What every generated item group reads, computed once per pipeline: its
//! names, the crate path, its modes, its inputs as parameters, and the
//! real bodies (or none, for a pipeline with errors).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::mode_items::{mode_items, ModeItem};
use crate::ast::PipelineAst;
use crate::codegen::{self, Bodies, Real};
use crate::krate;
use crate::names::{input_params, local_like, text, ItemNames};

/// The expansion context of one pipeline.
pub(super) struct Api<'a> {
    pub(super) ast: &'a PipelineAst,
    pub(super) real: Option<&'a Real<'a>>,
    /// The path to the `cortex` crate.
    pub(super) c: TokenStream,
    pub(super) n: ItemNames,
    pub(super) name_str: String,
    pub(super) modes: Vec<ModeItem>,
    /// The real bodies; `None` for a pipeline with errors.
    pub(super) bodies: Option<Bodies>,
    /// The inputs as parameters (`frame: &RgbFrame, …`) and as arguments.
    pub(super) params: TokenStream,
    pub(super) args: TokenStream,
    /// The same with a trailing comma when there are inputs, for a
    /// parameter that follows them (`outputs`).
    pub(super) params_c: TokenStream,
    pub(super) args_c: TokenStream,
    pub(super) input_names: Vec<Ident>,
    pub(super) input_tys: Vec<&'a syn::Type>,
}

impl<'a> Api<'a> {
    pub(super) fn new(ast: &'a PipelineAst, real: Option<&'a Real<'a>>) -> Api<'a> {
        let c = krate::path();
        let n = ItemNames::new(&ast.name);
        let modes = mode_items(ast, real, &c);
        let bodies = real.map(|r| codegen::bodies(ast, r, &n, &c));
        let (params, args) = input_params(ast);
        let (params_c, args_c) = if ast.inputs.is_empty() {
            (TokenStream::new(), TokenStream::new())
        } else {
            (quote!(#params,), quote!(#args,))
        };
        Api {
            ast,
            real,
            name_str: text(&ast.name),
            n,
            modes,
            bodies,
            params,
            args,
            params_c,
            args_c,
            input_names: ast.inputs.iter().map(|i| local_like(&i.name)).collect(),
            input_tys: ast.inputs.iter().map(|i| &i.ty).collect(),
            c,
        }
    }

    pub(super) fn is_real(&self) -> bool {
        self.real.is_some()
    }

    /// A body: the real one, or a placeholder for an invalid pipeline
    /// (never run: such a pipeline cannot be constructed).
    pub(super) fn body(&self, code: impl FnOnce() -> TokenStream) -> TokenStream {
        if self.is_real() {
            code()
        } else {
            quote!(::core::unreachable!("this pipeline has compile errors"))
        }
    }

    /// One of the real bodies, or the placeholder.
    pub(super) fn pick(&self, f: fn(&Bodies) -> &TokenStream) -> TokenStream {
        match &self.bodies {
            Some(b) => f(b).clone(),
            None => quote!(::core::unreachable!("this pipeline has compile errors")),
        }
    }
}
