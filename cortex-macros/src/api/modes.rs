//! The mode enum: one variant per declared mode, with its name, plan,
//! phase plans and weight table, and `cortex::PipelineMode`.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::context::Api;
use crate::ast::PipelineAst;
use crate::codegen::{self, Real};
use crate::consts;
use crate::names::{text, variant};

/// One variant of the mode enum.
pub(super) struct ModeItem {
    pub(super) variant: Ident,
    name: String,
    doc: String,
    pub(super) plan: TokenStream,
    /// The phase plans of a rated mode (empty: its one phase is its plan).
    phases: Vec<TokenStream>,
    weights: Vec<TokenStream>,
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

/// The mode enum and its impls.
pub(super) fn items(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (pipeline, mode_ty, vis) = (&cx.n.pipeline, &cx.n.mode, &cx.ast.vis);
    let modes = &cx.modes;
    let variants: Vec<&Ident> = modes.iter().map(|m| &m.variant).collect();
    let mode_names: Vec<&str> = modes.iter().map(|m| m.name.as_str()).collect();
    let mode_docs: Vec<&str> = modes.iter().map(|m| m.doc.as_str()).collect();
    let weight_entries = modes.iter().map(|m| {
        let e = &m.weights;
        quote!(&[#(#e),*])
    });
    let n_modes = modes.len();
    let phase_arms = modes.iter().map(|m| {
        let v = &m.variant;
        let phases = &m.phases;
        let k = phases.len();
        if phases.is_empty() {
            quote!(#mode_ty::#v => ::core::slice::from_ref(self.plan()))
        } else {
            quote!(#mode_ty::#v => {
                static PHASES: [#c::plan::Plan; #k] = [#(#phases),*];
                &PHASES
            })
        }
    });
    quote! {
        /// The pipeline's modes; each runs a plan with its dead nodes removed.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #vis enum #mode_ty {
            #(#[doc = #mode_docs] #variants,)*
        }

        impl #mode_ty {
            /// Every mode, in declaration order (a slice, like
            /// `PipelineMode::ALL`: `for &mode in Mode::ALL` reads the same
            /// on both).
            pub const ALL: &'static [#mode_ty] = &[#(#mode_ty::#variants),*];

            /// The mode's name as declared.
            pub const fn name(self) -> &'static str {
                match self { #(#mode_ty::#variants => #mode_names,)* }
            }

            /// The mode with this declared name.
            pub fn from_name(name: &str) -> ::core::option::Option<Self> {
                match name { #(#mode_names => ::core::option::Option::Some(#mode_ty::#variants),)* _ => ::core::option::Option::None }
            }

            /// The mode's plan: what runs, in which order, and what is eliminated.
            pub fn plan(self) -> &'static #c::plan::Plan {
                static PLANS: [#c::plan::Plan; #n_modes] = #pipeline::MODE_PLANS;
                &PLANS[self as usize]
            }

            /// The mode's phase plans, indexed by held mask (bit `i`: the node
            /// of the mode's rate `i` is held that frame, its consumers reading
            /// its value from an earlier frame); a mode without rates has one,
            /// its plan.
            pub fn phase_plans(self) -> &'static [#c::plan::Plan] {
                match self { #(#phase_arms,)* }
            }

            /// The mode's weight table.
            pub fn weights(self) -> &'static #c::Weights {
                static WEIGHTS: [#c::Weights; #n_modes] = [#({
                    const ENTRIES: &[#c::weights::WeightEntry] = #weight_entries;
                    #c::Weights::from_static(ENTRIES)
                }),*];
                &WEIGHTS[self as usize]
            }
        }

        impl #c::PipelineMode for #mode_ty {
            const ALL: &'static [Self] = #mode_ty::ALL;
            fn name(self) -> &'static str { #mode_ty::name(self) }
            fn from_name(name: &str) -> ::core::option::Option<Self> { #mode_ty::from_name(name) }
            fn plan(self) -> &'static #c::plan::Plan { #mode_ty::plan(self) }
            fn weights(self) -> &'static #c::Weights { #mode_ty::weights(self) }
            fn phase_plans(self) -> &'static [#c::plan::Plan] { #mode_ty::phase_plans(self) }
        }
    }
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
