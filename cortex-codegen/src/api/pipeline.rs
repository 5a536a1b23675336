//! The pipeline struct (its state, plan cache, buffers, fused groups and
//! held values) and its inherent impl: construction, settings, the graph
//! and plans as `const` data, and the run methods ([`super::runs`],
//! [`super::parallel`]).

use proc_macro2::TokenStream;
use quote::quote;

use super::context::Api;
use crate::consts;

/// The pipeline struct.
pub(super) fn struct_item(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (pipeline, state_ty) = (&cx.n.pipeline, &cx.n.state);
    let (vis, attrs) = (&cx.ast.vis, &cx.ast.attrs);
    let n_states = cx.ast.states.len();
    let name_str = &cx.name_str;
    let buffer_types = cx.buffer_types();
    let fusion_slots: usize = cx.bodies.as_ref().map_or(0, |b| b.fusion_slots);
    let holds = cx.holds();
    let n_holds = holds.len();
    let hold_tys: Vec<&syn::Type> = holds.iter().map(|(_, t)| t).collect();
    let struct_doc = format!(
        "The `{name_str}` pipeline: owns its state between frames; implements `cortex::Pipeline`."
    );
    quote! {
        #(#attrs)*
        #[doc = #struct_doc]
        #vis struct #pipeline {
            state: #state_ty,
            /// Per state: whether it holds last frame's value (else its initial value).
            __fresh: [bool; #n_states],
            /// Plans of the zero-weight patterns met by `run_weights`.
            __plans: #c::PlanCache,
            /// The buffers that buffer-filling nodes write, kept across frames.
            __bufs: (#(#buffer_types,)*),
            /// The modes' fused groups, built on first use.
            __fusion: [#c::__private::FusionSlot; #fusion_slots],
            /// Whether plans run their fused groups (else every node alone).
            __fusion_on: bool,
            /// Successful frames since `new` or `reset`.
            __frame: u64,
            /// Whether modes run their rated nodes at their rates (else
            /// on every frame).
            __rates_on: bool,
            /// Per rated node: which frame its held value is from.
            __holds: [#c::hold::Hold; #n_holds],
            /// Per rated node: its held value.
            __held: (#(#hold_tys,)*),
        }
    }
}

/// `Default` and the inherent impl.
pub(super) fn impl_block(cx: &Api<'_>) -> TokenStream {
    let pipeline = &cx.n.pipeline;
    let consts = graph_consts(cx);
    let new_fn = new_fn(cx);
    let settings = settings(cx);
    let runs = super::runs::methods(cx);
    let memory = memory_methods(cx);
    let parallel_items = super::parallel::methods(cx);
    let state_init_items = cx.ast.states.iter().enumerate().map(|(i, s)| {
        let f = crate::names::state_init_fn(i);
        let (ty, init) = (&s.ty, &s.init);
        quote!(#[inline] fn #f() -> #ty { #init })
    });
    let private = cx.bodies.as_ref().map(|b| b.private.clone());
    quote! {
        impl ::core::default::Default for #pipeline {
            fn default() -> Self {
                Self::new()
            }
        }

        // `ptr_arg`: an input declared `Vec<T>` is taken as `&Vec<T>`, as declared.
        #[allow(unused_variables, unreachable_code, clippy::needless_borrow, clippy::redundant_clone, clippy::too_many_arguments, clippy::let_unit_value, clippy::unit_arg, clippy::ptr_arg)]
        impl #pipeline {
            #consts
            #new_fn
            #settings
            #runs
            #memory
            #parallel_items

            #(#state_init_items)*

            #private
        }
    }
}

/// `IR`, `MODE_PLANS` and `ir()`: the graph and the modes' plans as
/// `const` data.
fn graph_consts(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let pipeline = &cx.n.pipeline;
    let name_str = &cx.name_str;
    let n_modes = cx.modes.len();
    let mode_plans: Vec<&TokenStream> = cx.modes.iter().map(|m| &m.plan).collect();
    let ir_value = match cx.real {
        Some(r) => consts::ir(r.ir),
        None => quote!(#c::ir::GraphIr::empty(#name_str)),
    };
    quote! {
        /// The pipeline's graph, as `const` data.
        pub const IR: #c::ir::GraphIr = #ir_value;

        /// The plan of each mode (in the order of `ALL`), computed at compile time.
        pub const MODE_PLANS: [#c::plan::Plan; #n_modes] = [#(#mode_plans),*];

        /// The pipeline's graph.
        pub fn ir() -> &'static #c::ir::GraphIr {
            static IR: #c::ir::GraphIr = #pipeline::IR;
            &IR
        }
    }
}

/// The state's fields at their initial values. Each state's initial value
/// is written once, in a function of its own that `new`, `reset` and the
/// run functions call: a value of the wrong type is then one error, at the
/// value.
fn state_inits(cx: &Api<'_>) -> Vec<TokenStream> {
    cx.ast
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = &s.name;
            let f = crate::names::state_init_fn(i);
            quote!(#name: Self::#f())
        })
        .collect()
}

/// The held values' slots at construction: their `Hold`s and the values,
/// at the declared type, in the words of what the slot is (a filled node's
/// type is also a buffer's, checked — at the same place, so once — as one).
fn hold_inits(cx: &Api<'_>) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let holds = cx.holds();
    let news = holds
        .iter()
        .map(|(node, _)| {
            let c = &cx.c;
            quote!(#c::hold::Hold::new(#node))
        })
        .collect();
    let values = holds
        .iter()
        .map(|(node, ty)| {
            let at = syn::spanned::Spanned::span(ty);
            let c = crate::krate::path_at(at);
            let fills = cx.ast.nodes.get(*node as usize).is_some_and(|n| {
                n.args
                    .iter()
                    .any(|a| matches!(a, crate::ast::NodeArg::Buffer(_)))
            });
            if fills {
                quote::quote_spanned!(at=> #c::__private::new_buffer::<#ty>())
            } else {
                quote::quote_spanned!(at=> #c::__private::new_held::<#ty>())
            }
        })
        .collect();
    (news, values)
}

/// `new()`.
fn new_fn(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let (pipeline, state_ty) = (&cx.n.pipeline, &cx.n.state);
    let n_states = cx.ast.states.len();
    let state_inits = state_inits(cx);
    let (hold_news, hold_inits) = hold_inits(cx);
    // Spanned at the declared type, so a type without `Default` is one
    // error there, in the DSL's words.
    let buffer_inits: Vec<TokenStream> = cx
        .buffer_types()
        .iter()
        .map(|ty| {
            let at = syn::spanned::Spanned::span(ty);
            let c = crate::krate::path_at(at);
            quote::quote_spanned!(at=> #c::__private::new_buffer::<#ty>())
        })
        .collect();
    let new_body = cx.body(|| {
        quote! {
            #pipeline {
                state: #state_ty { #(#state_inits,)* },
                __fresh: [false; #n_states],
                __plans: #c::PlanCache::new(Self::ir()),
                __bufs: (#(#buffer_inits,)*),
                __fusion: ::core::array::from_fn(|_| ::core::default::Default::default()),
                __fusion_on: true,
                __frame: 0,
                __rates_on: true,
                __holds: [#(#hold_news),*],
                __held: (#(#hold_inits,)*),
            }
        }
    });
    quote! {
        /// A pipeline with every state at its initial value.
        pub fn new() -> Self {
            #new_body
        }
    }
}

/// The settings and what they read: fusion and rates on or off, the frame
/// index, the held values, the state and `reset`.
fn settings(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let state_ty = &cx.n.state;
    let n_states = cx.ast.states.len();
    let state_inits = state_inits(cx);
    let reset_body = cx.body(|| {
        quote! {
            self.state = #state_ty { #(#state_inits,)* };
            self.__fresh = [false; #n_states];
            self.__frame = 0;
            for __hold in self.__holds.iter_mut() {
                __hold.forget();
            }
        }
    });
    quote! {
        /// Runs each mode's fused groups strip by strip over every core
        /// (`true`, the default), or every node as its own whole-frame
        /// call (`false`: for comparing and debugging). The outputs and
        /// the state are the same either way. Plans chosen at run time
        /// (`run_weights` with a zero pattern no mode has, `run_plan`)
        /// run unfused.
        pub fn set_fusion(&mut self, on: bool) {
            self.__fusion_on = on;
        }

        /// Whether fused groups run (see [`Self::set_fusion`]).
        pub fn fusion(&self) -> bool {
            self.__fusion_on
        }

        /// Runs rated nodes at their modes' rates (`true`, the default), or
        /// on every frame (`false`: the every-frame plan, to compare what
        /// the rates cost in results and save in time). Held values are
        /// kept up to date either way.
        pub fn set_rates(&mut self, on: bool) {
            self.__rates_on = on;
        }

        /// How many frames have succeeded since `new` or `reset`: the index
        /// the next frame will have.
        pub fn frame_index(&self) -> u64 {
            self.__frame
        }

        /// The held values of the nodes the modes rate (`where node every
        /// k`), one per rated node: the frame each was computed on, and
        /// whether the last frame read it held.
        pub fn holds(&self) -> &[#c::hold::Hold] {
            &self.__holds
        }

        /// The state carried to the next frame.
        pub fn state(&self) -> &#state_ty {
            &self.state
        }

        /// Puts every state back to its initial value (e.g. at a cut).
        pub fn reset(&mut self) {
            #reset_body
        }
    }
}

/// `buffer_bytes` and `pattern_plan`: what the pipeline's buffers hold and
/// the plan cache.
fn memory_methods(cx: &Api<'_>) -> TokenStream {
    let c = &cx.c;
    let buffer_bytes: Vec<TokenStream> = cx
        .bodies
        .as_ref()
        .map_or_else(Vec::new, |b| b.buffer_keys.clone())
        .iter()
        .enumerate()
        .map(|(i, (ty, k))| {
            let i = syn::Index::from(i);
            quote! {{
                use #c::__private::{ViaHeapBytes as _, ViaInlineSize as _};
                (#ty, #k, (&#c::__private::Probe(&self.__bufs.#i)).bytes())
            }}
        })
        .collect();
    quote! {
        /// The buffers the pipeline owns for its buffer-filling nodes, each
        /// as (declared type, index among that type's buffers, bytes held
        /// now): see `cortex::memory::BufferPlan` for which values share
        /// each one in a plan.
        pub fn buffer_bytes(&self) -> ::std::vec::Vec<(&'static str, u32, usize)> {
            ::std::vec![#(#buffer_bytes),*]
        }

        /// The plan of a zero-weight pattern (bit `i` set: weight key `i`
        /// of `IR.weight_keys` is zero), computed once by the DCE pass and
        /// kept in a bounded cache (`cortex::PlanCache`). Pattern 0 is the
        /// full graph. Bits beyond the pipeline's weight keys name no key
        /// and are ignored: the plan's label shows the pattern it used
        /// (`pattern_plan(0b1000)` on a 3-key pipeline is `pattern 0b000`).
        pub fn pattern_plan(&mut self, pattern: u64) -> ::std::sync::Arc<#c::plan::Plan> {
            self.__plans.get(pattern)
        }
    }
}

impl Api<'_> {
    /// The types of the buffers the pipeline owns.
    pub(super) fn buffer_types(&self) -> Vec<syn::Type> {
        self.bodies
            .as_ref()
            .map_or_else(Vec::new, |b| b.buffer_types.clone())
    }

    /// Held values: one per rated node (its id and declared type).
    pub(super) fn holds(&self) -> Vec<(u32, syn::Type)> {
        self.bodies
            .as_ref()
            .map_or_else(Vec::new, |b| b.holds.clone())
    }
}
