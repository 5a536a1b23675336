//! The generated API, declared once: every item a pipeline has, with its
//! signature and docs. A valid pipeline gets the real bodies from
//! [`crate::codegen`]; an invalid one gets placeholder bodies beside its
//! errors, so the rest of the user's crate type-checks against exactly the
//! same API and only the real errors are reported (thiserror's `fallback`
//! idea). The two can never drift, because there is only one list.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::ast::PipelineAst;
use crate::codegen::{self, Real};
use crate::names::{input_params, local_like, text, variant, ItemNames};
use crate::{consts, krate};

/// A body: the real one, or a placeholder for an invalid pipeline (never
/// run: such a pipeline cannot be constructed).
fn body(real: bool, code: impl FnOnce() -> TokenStream) -> TokenStream {
    if real {
        code()
    } else {
        quote!(::core::unreachable!("this pipeline has compile errors"))
    }
}

/// The pipeline's items.
pub fn generate(ast: &PipelineAst, real: Option<&Real<'_>>) -> TokenStream {
    let c = krate::path();
    let n = ItemNames::new(&ast.name);
    let (pipeline, mode_ty, outputs_ty, state_ty) = (&n.pipeline, &n.mode, &n.outputs, &n.state);
    let vis = &ast.vis;
    let attrs = &ast.attrs;
    let name_str = text(&ast.name);
    let is_real = real.is_some();

    // Modes: (variant, declared name, doc, plan, weights).
    let modes: Vec<ModeItem> = match real {
        Some(r) => {
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
        None => placeholder_modes(ast, &c),
    };
    let variants: Vec<&Ident> = modes.iter().map(|m| &m.variant).collect();
    let mode_names: Vec<&str> = modes.iter().map(|m| m.name.as_str()).collect();
    let mode_docs: Vec<&str> = modes.iter().map(|m| m.doc.as_str()).collect();
    let mode_plans: Vec<&TokenStream> = modes.iter().map(|m| &m.plan).collect();
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

    // State and outputs.
    let n_states = ast.states.len();
    let state_docs: Vec<String> = ast
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| match real.and_then(|r| r.ir.states.get(i)) {
            Some(st) => format!(
                "Last frame's value of `{}` (initially `{}`).",
                r_node_name(real, st.writer),
                st.init
            ),
            None => format!("The state `{}`.", text(&s.name)),
        })
        .collect();
    let state_names: Vec<&Ident> = ast.states.iter().map(|s| &s.name).collect();
    let state_tys: Vec<&syn::Type> = ast.states.iter().map(|s| &s.ty).collect();
    // Each state's initial value is written once, in a function of its own
    // that `new`, `reset` and the run functions call: a value of the wrong
    // type is then one error, at the value.
    let state_init_fns: Vec<Ident> = (0..ast.states.len())
        .map(crate::names::state_init_fn)
        .collect();
    let state_inits: Vec<TokenStream> = ast
        .states
        .iter()
        .zip(&state_init_fns)
        .map(|(s, f)| {
            let name = &s.name;
            quote!(#name: Self::#f())
        })
        .collect();
    let state_init_items = ast.states.iter().zip(&state_init_fns).map(|(s, f)| {
        let (ty, init) = (&s.ty, &s.init);
        quote!(#[inline] fn #f() -> #ty { #init })
    });
    let state_init_items: Vec<TokenStream> = state_init_items.collect();
    // An output listed twice is one error (the DSL's); the outputs struct
    // keeps its first declaration only.
    let outputs: Vec<&crate::ast::OutputDecl> = ast
        .outputs
        .iter()
        .enumerate()
        .filter(|(i, o)| !ast.outputs[..*i].iter().any(|p| p.name == o.name))
        .map(|(_, o)| o)
        .collect();
    let output_names: Vec<&Ident> = outputs.iter().map(|o| &o.name).collect();
    let output_tys: Vec<TokenStream> = outputs
        .iter()
        .map(|o| {
            let ty = &o.ty;
            if o.optional {
                quote!(::core::option::Option<#ty>)
            } else {
                quote!(#ty)
            }
        })
        .collect();
    let output_docs: Vec<String> = outputs
        .iter()
        .map(|o| {
            if o.optional {
                format!(
                    "The value of node `{}`; `None` when the plan eliminates it.",
                    text(&o.name)
                )
            } else {
                format!("The value of node `{}`.", text(&o.name))
            }
        })
        .collect();
    let state_impls = value_impls(state_ty, &state_names, &state_tys);
    let output_tys_ref: Vec<&TokenStream> = output_tys.iter().collect();
    let output_impls = value_impls(outputs_ty, &output_names, &output_tys_ref);

    // Inputs, as separate parameters and as the trait's tuple.
    let (params, args) = input_params(ast);
    // The same with a trailing comma when there are inputs, for a parameter
    // that follows them (`outputs`).
    let (params_c, args_c) = if ast.inputs.is_empty() {
        (TokenStream::new(), TokenStream::new())
    } else {
        (quote!(#params,), quote!(#args,))
    };
    let input_names: Vec<Ident> = ast.inputs.iter().map(|i| local_like(&i.name)).collect();
    let input_tys: Vec<&syn::Type> = ast.inputs.iter().map(|i| &i.ty).collect();

    // Real bodies.
    let bodies = real.map(|r| codegen::bodies(ast, r, &n, &c));
    let pick = |f: fn(&codegen::Bodies) -> &TokenStream| match &bodies {
        Some(b) => f(b).clone(),
        None => body(false, TokenStream::new),
    };
    let ir_value = match real {
        Some(r) => consts::ir(r.ir),
        None => quote!(#c::ir::GraphIr::empty(#name_str)),
    };
    let run_into_observed = pick(|b| &b.run_into_observed);
    let parallel_items = if ast.parallel {
        let dispatch = pick(|b| &b.run_parallel_observed);
        let fresh = body(is_real, || {
            quote! {
                let mut __slot = ::core::option::Option::None;
                self.__run_parallel(mode, observer, #c::__private::Sink::Fresh(&mut __slot), #args)?;
                match __slot {
                    ::core::option::Option::Some(__outputs) => ::core::result::Result::Ok(__outputs),
                    ::core::option::Option::None => ::core::result::Result::Err(#c::PipelineError::Internal("a run returned no outputs")),
                }
            }
        });
        let stream = pick(|b| &b.run_stream);
        let into = body(
            is_real,
            || quote!(self.__run_parallel(mode, observer, #c::__private::Sink::Into(outputs), #args)),
        );
        quote! {
            /// Runs one frame in `mode` with independent nodes at once on the
            /// engine's persistent worker pool (a wave of nodes whose inputs
            /// are ready runs together). The outputs and the state are
            /// bit-identical to [`Self::run`]'s. A failing frame leaves the
            /// state as it was and is run again sequentially (unobserved), so
            /// the error is exactly the one [`Self::run`] reports.
            pub fn run_parallel(&mut self, mode: #mode_ty, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_parallel_observed(mode, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_parallel`], reporting each node to `observer` from
            /// the thread that runs it (one event at a time, under a lock).
            pub fn run_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #fresh
            }

            /// [`Self::run_parallel`] into `outputs` of an earlier frame,
            /// reusing their memory (see [`Self::run_into`]).
            pub fn run_parallel_into(&mut self, mode: #mode_ty, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_parallel_into_observed(mode, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_parallel_into`], reporting each node to `observer`.
            pub fn run_parallel_into_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #into
            }

            /// Runs a stream of frames in `mode`, pipelined: while one frame's
            /// state readers and what follows them run, the next frame's
            /// state-free nodes already run on the pool. Frames come from
            /// `frames`, pulled on a producer thread into a bounded queue
            /// (`options`: frames in flight, queue length, and what to do when
            /// it is full: wait, or drop the oldest waiting frame or all but
            /// the latest, counted). Each result reaches `on_result` in order,
            /// with its inputs, index and the frames dropped before it;
            /// return `ControlFlow::Break(())` to stop. Outputs and state are
            /// bit-identical to [`Self::run`] on the frames that were not
            /// dropped; a failing frame fails alone, and later frames see the
            /// state of the last good one.
            pub fn run_stream<__I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
            where
                __I: ::core::iter::IntoIterator<Item = (#(#input_tys,)*)>,
                __I::IntoIter: ::core::marker::Send,
                __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty>) -> ::core::ops::ControlFlow<()>,
            {
                let frames = frames.into_iter();
                #stream
            }

            #[allow(clippy::needless_pass_by_value)]
            fn __run_parallel<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, __sink: #c::__private::Sink<'_, #outputs_ty>, #params) -> ::core::result::Result<(), #c::PipelineError> {
                #dispatch
            }
        }
    } else {
        // Spanned at the pipeline's name, where `#[parallel]` goes.
        let at = ast.name.span();
        quote_spanned! {at=>
            /// Only a `#[parallel]` pipeline runs frames in parallel: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_parallel<__M: #c::__private::DeclaredParallel>(&mut self, mode: __M, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                match mode.never() {}
            }

            /// Only a `#[parallel]` pipeline runs a stream pipelined: calling
            /// this is a compile error saying to add the attribute.
            #[doc(hidden)]
            pub fn run_stream<__M: #c::__private::DeclaredParallel, __I, __F>(&mut self, mode: __M, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError> {
                match mode.never() {}
            }
        }
    };
    let parallel_trait = if ast.parallel {
        quote! {
            impl #c::ParallelPipeline for #pipeline {
                type OwnedInputs = (#(#input_tys,)*);
                fn run_stream<__I, __F>(&mut self, mode: #mode_ty, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::IntoIterator<Item = (#(#input_tys,)*)>,
                    __I::IntoIter: ::core::marker::Send,
                    __F: ::core::ops::FnMut(#c::stream::StreamFrame<(#(#input_tys,)*), #outputs_ty>) -> ::core::ops::ControlFlow<()>,
                {
                    #pipeline::run_stream(self, mode, frames, options, on_result)
                }
                fn run_parallel_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                    let (#(#input_names,)*) = inputs;
                    #pipeline::run_parallel_observed(self, mode, observer, #args)
                }
                fn run_parallel_into_observed<__O: #c::Observer + ::core::marker::Send>(&mut self, mode: #mode_ty, observer: &mut __O, inputs: Self::Inputs<'_>, outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                    let (#(#input_names,)*) = inputs;
                    #pipeline::run_parallel_into_observed(self, mode, observer, #args_c outputs)
                }
            }
        }
    } else {
        TokenStream::new()
    };
    let buffer_types: Vec<syn::Type> = bodies
        .as_ref()
        .map_or_else(Vec::new, |b| b.buffer_types.clone());
    let buffer_bytes: Vec<TokenStream> = bodies
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
    let fusion_slots: usize = bodies.as_ref().map_or(0, |b| b.fusion_slots);
    // Held values: one per rated node, created like buffers (spanned at the
    // node's declared type).
    let holds: Vec<(u32, syn::Type)> = bodies.as_ref().map_or_else(Vec::new, |b| b.holds.clone());
    let n_holds = holds.len();
    let hold_tys: Vec<&syn::Type> = holds.iter().map(|(_, t)| t).collect();
    let hold_news = holds
        .iter()
        .map(|(node, _)| quote!(#c::hold::Hold::new(#node)));
    let hold_inits = holds.iter().map(|(_, ty)| {
        let at = syn::spanned::Spanned::span(ty);
        let c = crate::krate::path_at(at);
        quote::quote_spanned!(at=> #c::__private::new_buffer::<#ty>())
    });
    // Spanned at the declared type, so a type without `Default` is one
    // error there, in the DSL's words.
    let buffer_inits = buffer_types.iter().map(|ty| {
        let at = syn::spanned::Spanned::span(ty);
        let c = crate::krate::path_at(at);
        quote::quote_spanned!(at=> #c::__private::new_buffer::<#ty>())
    });
    let buffer_inits: Vec<TokenStream> = buffer_inits.collect();
    let new_body = body(is_real, || {
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
    let reset_body = body(is_real, || {
        quote! {
            self.state = #state_ty { #(#state_inits,)* };
            self.__fresh = [false; #n_states];
            self.__frame = 0;
            for __hold in self.__holds.iter_mut() {
                __hold.forget();
            }
        }
    });
    let run_observed = pick(|b| &b.run_observed);

    let run_weights_observed = pick(|b| &b.run_weights_observed);
    let run_plan_observed = pick(|b| &b.run_plan_observed);
    let run_weights_into_observed = pick(|b| &b.run_weights_into_observed);
    let run_plan_into_observed = pick(|b| &b.run_plan_into_observed);
    let private = bodies.as_ref().map(|b| b.private.clone());

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

        /// The temporal state of the pipeline, between frames.
        #vis struct #state_ty {
            #(#[doc = #state_docs] pub #state_names: #state_tys,)*
        }

        /// What one frame of the pipeline returns.
        #vis struct #outputs_ty {
            #(#[doc = #output_docs] pub #output_names: #output_tys,)*
        }

        #state_impls
        #output_impls

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

        impl ::core::default::Default for #pipeline {
            fn default() -> Self {
                Self::new()
            }
        }

        // `ptr_arg`: an input declared `Vec<T>` is taken as `&Vec<T>`, as declared.
        #[allow(unused_variables, unreachable_code, clippy::needless_borrow, clippy::redundant_clone, clippy::too_many_arguments, clippy::let_unit_value, clippy::unit_arg, clippy::ptr_arg)]
        impl #pipeline {
            /// The pipeline's graph, as `const` data.
            pub const IR: #c::ir::GraphIr = #ir_value;

            /// The plan of each mode (in the order of `ALL`), computed at compile time.
            pub const MODE_PLANS: [#c::plan::Plan; #n_modes] = [#(#mode_plans),*];

            /// The pipeline's graph.
            pub fn ir() -> &'static #c::ir::GraphIr {
                static IR: #c::ir::GraphIr = #pipeline::IR;
                &IR
            }

            /// A pipeline with every state at its initial value.
            pub fn new() -> Self {
                #new_body
            }

            /// Runs each mode's fused groups strip by strip over every core
            /// (`true`, the default), or every node as its own whole-frame
            /// call (`false`: for comparing and debugging). The outputs and
            /// the state are the same either way. Plans chosen at run time
            /// (`run_weights`, `run_plan`) always run unfused.
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

            /// Runs one frame in `mode`. On error the state is left as it was.
            pub fn run(&mut self, mode: #mode_ty, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_observed(mode, &mut #c::NoopObserver, #args)
            }

            /// Runs one frame in `mode`, reporting each node to `observer`.
            pub fn run_observed<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #run_observed
            }

            /// Runs one frame in `mode` into `outputs` from an earlier frame,
            /// reusing their memory: a filled output trades buffers with the
            /// pipeline instead of being allocated. With every node filling
            /// its own buffer, a steady stream of same-size frames allocates
            /// nothing. On error the state and `outputs` are left as they were.
            pub fn run_into(&mut self, mode: #mode_ty, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_into_observed(mode, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_into`], reporting each node to `observer`.
            pub fn run_into_observed<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #run_into_observed
            }

            /// Runs one frame with weights chosen at run time: validated, then
            /// the plan of their zero pattern is taken from a bounded cache
            /// (computed once per pattern by the DCE pass).
            pub fn run_weights(&mut self, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_weights_observed(weights, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_weights`], reporting each node to `observer`.
            pub fn run_weights_observed<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #run_weights_observed
            }

            /// Runs one frame with an explicit plan and weights, e.g. the full
            /// graph (`self.pattern_plan(0)`) with a mode's weights, to compare
            /// against that mode's plan. The plan is validated against this
            /// pipeline (`Plan::validate`) before anything runs: a plan of
            /// another pipeline, or one that eliminates a non-optional output,
            /// is an error and the state is untouched.
            pub fn run_plan(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                self.run_plan_observed(plan, weights, &mut #c::NoopObserver, #args)
            }

            /// [`Self::run_plan`], reporting each node to `observer`.
            pub fn run_plan_observed<__O: #c::Observer>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #run_plan_observed
            }

            /// [`Self::run_weights`] into `outputs` from an earlier frame,
            /// reusing their memory as [`Self::run_into`] does. On error the
            /// state and `outputs` are left as they were.
            pub fn run_weights_into(&mut self, weights: &#c::Weights, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_weights_into_observed(weights, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_weights_into`], reporting each node to `observer`.
            pub fn run_weights_into_observed<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #run_weights_into_observed
            }

            /// [`Self::run_plan`] into `outputs` from an earlier frame, reusing
            /// their memory as [`Self::run_into`] does. On error the state and
            /// `outputs` are left as they were.
            pub fn run_plan_into(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                self.run_plan_into_observed(plan, weights, &mut #c::NoopObserver, #args_c outputs)
            }

            /// [`Self::run_plan_into`], reporting each node to `observer`.
            pub fn run_plan_into_observed<__O: #c::Observer>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, #params_c outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                #run_plan_into_observed
            }

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

            #parallel_items

            #(#state_init_items)*

            #private
        }

        #parallel_trait

        impl #c::Pipeline for #pipeline {
            type Mode = #mode_ty;
            type Inputs<'__a> = (#(&'__a #input_tys,)*);
            type Outputs = #outputs_ty;
            type State = #state_ty;

            fn ir() -> &'static #c::ir::GraphIr { #pipeline::ir() }
            fn state(&self) -> &#state_ty { #pipeline::state(self) }
            fn reset(&mut self) { #pipeline::reset(self) }
            fn run_observed<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_observed(self, mode, observer, #args)
            }
            fn run_into_observed<__O: #c::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, inputs: Self::Inputs<'_>, outputs: &mut #outputs_ty) -> ::core::result::Result<(), #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_into_observed(self, mode, observer, #args_c outputs)
            }
            fn run_weights_observed<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_weights_observed(self, weights, observer, #args)
            }
            fn run_plan_observed<__O: #c::Observer>(&mut self, plan: &#c::plan::Plan, weights: &#c::Weights, observer: &mut __O, inputs: Self::Inputs<'_>) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                let (#(#input_names,)*) = inputs;
                #pipeline::run_plan_observed(self, plan, weights, observer, #args)
            }
            fn pattern_plan(&mut self, pattern: u64) -> ::std::sync::Arc<#c::plan::Plan> {
                #pipeline::pattern_plan(self, pattern)
            }
            fn buffer_bytes(&self) -> ::std::vec::Vec<(&'static str, u32, usize)> {
                #pipeline::buffer_bytes(self)
            }
            fn set_fusion(&mut self, on: bool) {
                #pipeline::set_fusion(self, on)
            }
            fn frame_index(&self) -> u64 {
                #pipeline::frame_index(self)
            }
            fn set_rates(&mut self, on: bool) {
                #pipeline::set_rates(self, on)
            }
            fn holds(&self) -> &[#c::hold::Hold] {
                #pipeline::holds(self)
            }
        }
    }
}

/// One variant of the mode enum.
struct ModeItem {
    variant: Ident,
    name: String,
    doc: String,
    plan: TokenStream,
    /// The phase plans of a rated mode (empty: its one phase is its plan).
    phases: Vec<TokenStream>,
    weights: Vec<TokenStream>,
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

/// The name of node `id`, for docs.
fn r_node_name(real: Option<&Real<'_>>, id: u32) -> String {
    real.and_then(|r| r.ir.nodes.get(id as usize))
        .map_or_else(|| "?".to_string(), |n| n.name.to_string())
}

/// `Debug`, `Clone` and `PartialEq` for a struct of public fields, each
/// where every field has it. The bounds are higher-ranked (`for<'__x> T:
/// Trait`) so that a field type without the trait makes the impl not apply
/// instead of being an error: a derive would require the trait of every
/// field type.
fn value_impls(ty: &Ident, names: &[&Ident], tys: &[impl quote::ToTokens]) -> TokenStream {
    let ty_str = ty.to_string();
    let name_strs: Vec<String> = names.iter().map(|n| text(n)).collect();
    let span = ty.span();
    let eq = if names.is_empty() {
        quote!(true)
    } else {
        quote!(#(self.#names == other.#names)&&*)
    };
    quote_spanned! {span=>
        impl ::core::fmt::Debug for #ty where #(for<'__x> #tys: ::core::fmt::Debug,)* {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(#ty_str)#(.field(#name_strs, &self.#names))*.finish()
            }
        }
        impl ::core::clone::Clone for #ty where #(for<'__x> #tys: ::core::clone::Clone,)* {
            fn clone(&self) -> Self {
                #ty { #(#names: ::core::clone::Clone::clone(&self.#names),)* }
            }
        }
        #[allow(unused_variables)]
        impl ::core::cmp::PartialEq for #ty where #(for<'__x> #tys: ::core::cmp::PartialEq,)* {
            fn eq(&self, other: &Self) -> bool {
                #eq
            }
        }
    }
}
