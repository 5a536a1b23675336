//! The mode enum: one variant per declared mode, with its name, plan,
//! phase plans and weight table, and `cortex::PipelineMode`.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::context::Api;

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
