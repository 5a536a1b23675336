//! The modes of one pipeline as data, computed once: each mode's variant,
//! name, doc, plan, phase plans and weight entries, from the checked graph
//! (or, for a pipeline with errors, its declared modes with empty plans).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::ast::PipelineAst;
use crate::codegen::{self, Real};
use crate::consts;
use crate::names::{text, variant};

/// One variant of the mode enum.
pub(super) struct ModeItem {
    pub(super) variant: Ident,
    pub(super) name: String,
    pub(super) doc: String,
    pub(super) plan: TokenStream,
    /// The phase plans of a rated mode (empty: its one phase is its plan).
    pub(super) phases: Vec<TokenStream>,
    pub(super) weights: Vec<TokenStream>,
}

/// The modes of a valid pipeline from its graph; of an invalid one, its
/// declared modes with empty plans.
pub(super) fn mode_items(
    ast: &PipelineAst,
    real: Option<&Real<'_>>,
    c: &TokenStream,
) -> Vec<ModeItem> {
    let Some(r) = real else {
        return placeholder_modes(ast, c);
    };
    r.ir.modes
        .iter()
        .zip(r.mode_plans)
        .enumerate()
        .map(|(i, (m, p))| ModeItem {
            variant: variant(&m.name).unwrap_or_else(|| format_ident!("Invalid")),
            name: m.name.to_string(),
            doc: codegen::mode_doc(r.ir, p),
            plan: consts::plan(p),
            phases: cortex_core::rates::mode_rates(r.ir, i)
                .map_or_else(Vec::new, |mr| mr.phases.iter().map(consts::plan).collect()),
            weights: r
                .ir
                .weight_keys
                .iter()
                .zip(m.weights.iter())
                .map(|(k, w)| {
                    let k: &str = k;
                    quote!((::std::borrow::Cow::Borrowed(#k), #w))
                })
                .collect(),
        })
        .collect()
}

/// The modes of an invalid pipeline: its declared modes that make valid,
/// distinct variants (or `FULL` when there are none), with empty plans.
fn placeholder_modes(ast: &PipelineAst, c: &TokenStream) -> Vec<ModeItem> {
    let mut out: Vec<ModeItem> = Vec::new();
    for m in &ast.modes {
        let name = text(&m.name);
        let Some(variant) = variant(&name) else {
            continue;
        };
        if out.iter().any(|x| x.variant == variant) {
            continue;
        }
        out.push(ModeItem {
            variant,
            plan: quote!(#c::plan::Plan::empty(#name)),
            name,
            doc: String::new(),
            phases: Vec::new(),
            weights: Vec::new(),
        });
    }
    if out.is_empty() {
        let name = cortex_core::check::IMPLICIT_MODE;
        out.push(ModeItem {
            variant: format_ident!("Full"),
            name: name.to_string(),
            doc: String::new(),
            plan: quote!(#c::plan::Plan::empty(#name)),
            phases: Vec::new(),
            weights: Vec::new(),
        });
    }
    out
}
