//! Code generation for a valid pipeline: the pipeline struct owning its
//! state, the mode enum, the outputs struct, one straight-line run function
//! per mode with its plan's dead nodes already gone, and one plan-driven run
//! function for weights chosen at run time.

use cortex_core::ir::{Arg, EdgeKind, Endpoint, GraphIr, NodeId};
use cortex_core::plan::Plan;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::ast::PipelineAst;
use crate::consts;
use crate::names::{input_params, local, output_fields, variant_name, ItemNames};

/// Zero patterns are precomputed as `const` plans up to this many weight
/// keys (2^8 = 256 plans); beyond, plans are computed once per pattern at
/// run time by the same DCE code and cached.
pub const MAX_PRECOMPUTED_KEYS: usize = 8;

/// Everything the generator needs.
pub struct Input<'a> {
    pub ast: &'a PipelineAst,
    pub ir: &'a GraphIr,
    pub mode_plans: &'a [Plan],
    pub pattern_plans: Option<&'a [Plan]>,
}

/// How a run function chooses which nodes to run.
enum Flavor<'a> {
    /// A declared mode: only the plan's nodes are emitted, in order.
    Mode(&'a Plan),
    /// Weights chosen at run time: every node is emitted, guarded by the
    /// plan passed in, with node values held in `Option`s.
    Masked,
}

/// The generated items.
pub fn generate(cx: &Input<'_>) -> TokenStream {
    let ast = cx.ast;
    let n = ItemNames::new(&ast.name);
    let (pipeline, mode_ty, outputs_ty, state_ty) = (&n.pipeline, &n.mode, &n.outputs, &n.state);
    let vis = &ast.vis;
    let attrs = &ast.attrs;
    let ir = cx.ir;

    let state_fields = ast.states.iter().zip(ir.states.iter()).map(|(decl, s)| {
        let (name, ty) = (&decl.name, &decl.ty);
        let doc = format!(
            "Last frame's value of `{}` (initially `{}`).",
            ir.nodes[s.writer as usize].name, s.init
        );
        quote!(#[doc = #doc] pub #name: #ty)
    });
    let state_inits: Vec<TokenStream> = ast
        .states
        .iter()
        .map(|s| {
            let (name, init) = (&s.name, &s.init);
            quote!(#name: #init)
        })
        .collect();
    let n_states = ast.states.len();

    // Validation resolved every output, so the IR's outputs are the declared
    // ones, in order.
    let output_fields = output_fields(ast);
    let (params_decl, param_list) = input_params(ast);

    // Modes.
    let variants: Vec<proc_macro2::Ident> = ir
        .modes
        .iter()
        .map(|m| format_ident!("{}", variant_name(&m.name)))
        .collect();
    let mode_names: Vec<&str> = ir.modes.iter().map(|m| m.name.as_ref()).collect();
    let mode_docs: Vec<String> = cx.mode_plans.iter().map(|p| mode_doc(ir, p)).collect();
    let n_modes = variants.len();
    let mode_plans: Vec<TokenStream> = cx.mode_plans.iter().map(consts::plan).collect();
    let weight_entries: Vec<TokenStream> = ir
        .modes
        .iter()
        .map(|m| {
            let entries = ir.weight_keys.iter().zip(m.weights.iter()).map(|(k, w)| {
                let k: &str = k;
                quote!((::std::borrow::Cow::Borrowed(#k), #w))
            });
            quote!(&[#(#entries),*])
        })
        .collect();
    let mode_fns: Vec<proc_macro2::Ident> = (0..n_modes)
        .map(|i| format_ident!("__run_mode_{}", i))
        .collect();
    let mode_bodies: Vec<TokenStream> = cx
        .mode_plans
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let variant = &variants[i];
            let plan_expr = quote!(#mode_ty::#variant.plan());
            let weights_expr = quote!(#mode_ty::#variant.weights());
            run_body(cx, &n, Flavor::Mode(p), plan_expr, weights_expr)
        })
        .collect();
    let masked_body = run_body(cx, &n, Flavor::Masked, quote!(__plan), quote!(__weights));

    let ir_tokens = consts::ir(ir);
    let k = ir.weight_keys.len();
    let (pattern_items, cache_field, cache_init, select_plan) = match cx.pattern_plans {
        Some(plans) => {
            let count = plans.len();
            let plans = plans.iter().map(consts::plan);
            (
                quote! {
                    /// The plan of every zero-weight pattern (index: bit `i` set when
                    /// weight key `i` is zero), computed at compile time.
                    pub const PATTERN_PLANS: [::cortex::plan::Plan; #count] = [#(#plans),*];

                    /// The precomputed plan of a zero-weight pattern.
                    pub fn pattern_plan(pattern: u64) -> ::core::option::Option<&'static ::cortex::plan::Plan> {
                        static PLANS: [::cortex::plan::Plan; #count] = #pipeline::PATTERN_PLANS;
                        PLANS.get(pattern as usize)
                    }
                },
                quote!(),
                quote!(),
                quote! {
                    let __plan: &::cortex::plan::Plan = match Self::pattern_plan(__pattern) {
                        ::core::option::Option::Some(p) => p,
                        ::core::option::Option::None => return ::core::result::Result::Err(::cortex::PipelineError::Internal("zero pattern out of range")),
                    };
                },
            )
        }
        None => (
            quote!(),
            quote!(__plan_cache: ::std::collections::HashMap<u64, ::std::sync::Arc<::cortex::plan::Plan>>,),
            quote!(__plan_cache: ::std::collections::HashMap::new(),),
            quote! {
                // Too many weight keys to precompute every pattern: compute
                // this one with the shared DCE pass, once, and cache it.
                let __plan = ::std::sync::Arc::clone(self.__plan_cache.entry(__pattern).or_insert_with(|| {
                    ::std::sync::Arc::new(::cortex::dce::plan_for_pattern(Self::ir(), __pattern, ::cortex::dce::pattern_label(__pattern, #k)))
                }));
                let __plan: &::cortex::plan::Plan = &__plan;
            },
        ),
    };
    let output_names: Vec<&str> = ir
        .outputs
        .iter()
        .map(|o| ir.nodes[o.node as usize].name.as_ref())
        .collect();
    let output_nodes: Vec<u32> = ir.outputs.iter().map(|o| o.node).collect();
    let obs = local("__obs", Span::call_site());

    quote! {
        #(#attrs)*
        #vis struct #pipeline {
            state: #state_ty,
            /// Per state: whether it holds last frame's value (else its initial value).
            __fresh: [bool; #n_states],
            #cache_field
        }

        /// The temporal state of the pipeline, between frames.
        #vis struct #state_ty {
            #(#state_fields,)*
        }

        /// What one frame of the pipeline returns.
        #vis struct #outputs_ty {
            #(#output_fields,)*
        }

        /// The pipeline's modes; each runs a plan with its dead nodes removed.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #vis enum #mode_ty {
            #(#[doc = #mode_docs] #variants,)*
        }

        impl #mode_ty {
            /// Every mode, in declaration order.
            pub const ALL: [#mode_ty; #n_modes] = [#(#mode_ty::#variants),*];

            /// The mode's name as declared.
            pub const fn name(self) -> &'static str {
                match self { #(#mode_ty::#variants => #mode_names,)* }
            }

            /// The mode with this declared name.
            pub fn from_name(name: &str) -> ::core::option::Option<Self> {
                match name { #(#mode_names => ::core::option::Option::Some(#mode_ty::#variants),)* _ => ::core::option::Option::None }
            }

            /// The mode's plan: what runs, in which order, and what is eliminated.
            pub fn plan(self) -> &'static ::cortex::plan::Plan {
                static PLANS: [::cortex::plan::Plan; #n_modes] = #pipeline::MODE_PLANS;
                &PLANS[self as usize]
            }

            /// The mode's weight table.
            pub fn weights(self) -> &'static ::cortex::Weights {
                static WEIGHTS: [::cortex::Weights; #n_modes] = [#({
                    const ENTRIES: &[::cortex::weights::WeightEntry] = #weight_entries;
                    ::cortex::Weights::from_static(ENTRIES)
                }),*];
                &WEIGHTS[self as usize]
            }
        }

        impl ::core::default::Default for #pipeline {
            fn default() -> Self {
                Self::new()
            }
        }

        #[allow(clippy::needless_borrow, clippy::redundant_clone, clippy::too_many_arguments, clippy::let_unit_value, clippy::unit_arg)]
        impl #pipeline {
            /// The pipeline's graph, as `const` data.
            pub const IR: ::cortex::ir::GraphIr = #ir_tokens;

            /// The plan of each mode (in the order of `ALL`), computed at compile time.
            pub const MODE_PLANS: [::cortex::plan::Plan; #n_modes] = [#(#mode_plans),*];

            #pattern_items

            /// The pipeline's graph.
            pub fn ir() -> &'static ::cortex::ir::GraphIr {
                static IR: ::cortex::ir::GraphIr = #pipeline::IR;
                &IR
            }

            /// A pipeline with every state at its initial value.
            pub fn new() -> Self {
                #pipeline {
                    state: #state_ty { #(#state_inits,)* },
                    __fresh: [false; #n_states],
                    #cache_init
                }
            }

            /// The state carried to the next frame.
            pub fn state(&self) -> &#state_ty {
                &self.state
            }

            /// Puts every state back to its initial value (e.g. at a cut).
            pub fn reset(&mut self) {
                self.state = #state_ty { #(#state_inits,)* };
                self.__fresh = [false; #n_states];
            }

            /// Runs one frame in `mode`. On error the state is left as it was.
            pub fn run(&mut self, mode: #mode_ty, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                self.run_observed(mode, &mut ::cortex::NoopObserver, #param_list)
            }

            /// Runs one frame in `mode`, reporting each node to `observer`.
            pub fn run_observed<__O: ::cortex::Observer>(&mut self, mode: #mode_ty, observer: &mut __O, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                match mode {
                    #(#mode_ty::#variants => self.#mode_fns(observer, #param_list),)*
                }
            }

            /// Runs one frame with weights chosen at run time: the plan of
            /// their zero pattern is looked up, not computed.
            pub fn run_weights(&mut self, weights: &::cortex::Weights, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                self.run_weights_observed(weights, &mut ::cortex::NoopObserver, #param_list)
            }

            /// [`Self::run_weights`], reporting each node to `observer`.
            pub fn run_weights_observed<__O: ::cortex::Observer>(&mut self, weights: &::cortex::Weights, observer: &mut __O, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                let __pattern = weights.zero_pattern(&Self::ir().weight_keys)?;
                #select_plan
                self.run_plan_observed(__plan, weights, observer, #param_list)
            }

            /// Runs one frame with an explicit plan and weights, e.g. the full
            /// graph (`Self::pattern_plan(0)`) with a mode's weights, to compare
            /// against that mode's plan. Fails if the plan eliminates a
            /// non-optional output.
            pub fn run_plan(&mut self, plan: &::cortex::plan::Plan, weights: &::cortex::Weights, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                self.run_plan_observed(plan, weights, &mut ::cortex::NoopObserver, #param_list)
            }

            /// [`Self::run_plan`], reporting each node to `observer`.
            pub fn run_plan_observed<__O: ::cortex::Observer>(&mut self, plan: &::cortex::plan::Plan, weights: &::cortex::Weights, observer: &mut __O, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                weights.zero_pattern(&Self::ir().weight_keys)?;
                for &missing in plan.missing_outputs.iter() {
                    let output = match missing { #(#output_nodes => #output_names,)* _ => "?" };
                    return ::core::result::Result::Err(::cortex::PipelineError::OutputEliminated { output });
                }
                self.__run_plan(plan, weights, observer, #param_list)
            }

            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #mode_fns<__O: ::cortex::Observer>(&mut self, #obs: &mut __O, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                    #mode_bodies
                }
            )*

            #[allow(unused_variables, unused_mut)]
            fn __run_plan<__O: ::cortex::Observer>(&mut self, __plan: &::cortex::plan::Plan, __weights: &::cortex::Weights, #obs: &mut __O, #params_decl) -> ::core::result::Result<#outputs_ty, ::cortex::PipelineError> {
                #masked_body
            }
        }
    }
}

/// The doc comment of a mode variant: its weights and its plan.
fn mode_doc(ir: &GraphIr, plan: &Plan) -> String {
    let names = |ids: &mut dyn Iterator<Item = NodeId>| {
        ids.map(|i| format!("`{}`", ir.nodes[i as usize].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let runs = names(&mut plan.order.iter().copied());
    let gone = plan
        .eliminated
        .iter()
        .map(|e| {
            format!(
                "`{}` ({})",
                ir.nodes[e.node as usize].name,
                e.reason.describe(ir)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Mode `{}`. Runs {}.{}",
        plan.label,
        if runs.is_empty() {
            "nothing".into()
        } else {
            runs
        },
        if gone.is_empty() {
            String::new()
        } else {
            format!(" Eliminates {gone}.")
        }
    )
}

/// The local holding node `id`'s value, reported at `at`.
fn node_local(ir: &GraphIr, id: NodeId, at: Span) -> proc_macro2::Ident {
    local(&format!("__node_{}", ir.nodes[id as usize].name), at)
}

/// The body of a run function.
fn run_body(
    cx: &Input<'_>,
    n: &ItemNames,
    flavor: Flavor<'_>,
    plan_expr: TokenStream,
    weights_expr: TokenStream,
) -> TokenStream {
    let ir = cx.ir;
    let ast = cx.ast;
    let outputs_ty = &n.outputs;
    let obs = local("__obs", Span::call_site());
    let weights = local("__weights_table", Span::call_site());
    let internal = |what: &str| {
        let msg = format!("plan invariant broken: {what}");
        quote!({ #obs.frame_end(false); return ::core::result::Result::Err(::cortex::PipelineError::Internal(#msg)); })
    };
    let live = |id: NodeId| match &flavor {
        Flavor::Mode(p) => p.is_live(id),
        Flavor::Masked => true,
    };
    let masked = matches!(flavor, Flavor::Masked);

    let mut stmts = Vec::new();
    stmts.push(quote! {
        let #weights: &::cortex::Weights = #weights_expr;
        #obs.frame_begin(Self::ir(), #plan_expr);
    });

    // Node calls, in topological order.
    for &id in ir.topo.iter() {
        if !live(id) {
            continue;
        }
        let node = &ir.nodes[id as usize];
        let decl = &ast.nodes[id as usize];
        let func = &decl.func;
        let mut guards = Vec::new();
        let args = node.args.iter().zip(&decl.args).enumerate().map(|(a, (arg, arg_ast))| {
            let sp = arg_ast.span();
            match arg {
                Arg::Value(Endpoint::Input(i)) => {
                    let p = local(&ast.inputs[*i as usize].name.to_string(), sp);
                    quote_spanned!(sp=> #p)
                }
                Arg::Value(Endpoint::State(s)) => {
                    let f = &ast.states[*s as usize].name;
                    quote_spanned!(sp=> &self.state.#f)
                }
                Arg::Value(e @ Endpoint::Node(p)) => {
                    let v = node_local(ir, *p, sp);
                    let weighted = ir.out_edge_kind(*e) == EdgeKind::Weighted;
                    match (&flavor, weighted) {
                        (Flavor::Mode(plan), true) if plan.is_live(*p) => quote_spanned!(sp=> ::core::option::Option::Some(&#v)),
                        (Flavor::Mode(_), true) => quote_spanned!(sp=> ::core::option::Option::None),
                        (Flavor::Mode(_), false) => quote_spanned!(sp=> &#v),
                        (Flavor::Masked, true) => quote_spanned!(sp=> #v.as_ref()),
                        (Flavor::Masked, false) => {
                            let tmp = local(&format!("__arg{a}"), sp);
                            let bail = internal(&format!("`{}` runs without its input `{}`", node.name, ir.nodes[*p as usize].name));
                            guards.push(quote!(let ::core::option::Option::Some(#tmp) = #v.as_ref() else #bail;));
                            quote_spanned!(sp=> #tmp)
                        }
                    }
                }
                Arg::Weights => {
                    let w = local("__weights_table", sp);
                    quote_spanned!(sp=> #w)
                }
                Arg::Const(_) => match arg_ast {
                    crate::ast::NodeArg::Const(e) => quote!(#e),
                    crate::ast::NodeArg::Name(i) => quote!(#i),
                },
            }
        });
        let args: Vec<TokenStream> = args.collect();
        let call_span = syn::spanned::Spanned::span(func);
        let call = quote_spanned!(call_span=> #func(#(#args),*));
        let name_str: &str = &node.name;
        let value = local("__value", call_span);
        let compute = if node.fallible {
            quote_spanned! {call_span=>
                let #value = match #call {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => {
                        #obs.node_end(#id);
                        #obs.frame_end(false);
                        return ::core::result::Result::Err(::cortex::PipelineError::node(#name_str, e));
                    }
                };
            }
        } else {
            quote!(let #value = #call;)
        };
        let v = node_local(ir, id, decl.name.span());
        if masked {
            stmts.push(quote! {
                let mut #v = if __plan.is_live(#id) {
                    #(#guards)*
                    #obs.node_begin(#id);
                    #compute
                    #obs.node_end(#id);
                    ::core::option::Option::Some(#value)
                } else {
                    ::core::option::Option::None
                };
            });
        } else {
            stmts.push(quote! {
                #obs.node_begin(#id);
                #compute
                #obs.node_end(#id);
                let #v = #value;
            });
        }
    }

    // Each live value's sinks: the states it writes, then the output. All
    // but the last take a clone; the last takes the value.
    let mut remaining: Vec<usize> = vec![0; ir.nodes.len()];
    for s in ir
        .states
        .iter()
        .enumerate()
        .filter(|(i, _)| state_written(&flavor, *i))
        .map(|(_, s)| s)
    {
        remaining[s.writer as usize] += 1;
    }
    for o in ir.outputs.iter() {
        if live(o.node) {
            remaining[o.node as usize] += 1;
        }
    }

    // State commits: only now, after every node succeeded.
    for (si, s) in ir.states.iter().enumerate() {
        let decl = &ast.states[si];
        let (f, init) = (&decl.name, &decl.init);
        let w = s.writer;
        let v = node_local(ir, w, f.span());
        let reset = quote! {
            if self.__fresh[#si] {
                self.state.#f = #init;
                self.__fresh[#si] = false;
            }
        };
        if !state_written(&flavor, si) {
            stmts.push(reset);
            continue;
        }
        remaining[w as usize] -= 1;
        let last = remaining[w as usize] == 0;
        if masked {
            let take = if last {
                quote!(#v.take())
            } else {
                quote!(#v.clone())
            };
            let bail = internal(&format!("state `{}` written without its writer", s.name));
            stmts.push(quote! {
                if __plan.writes_state(#si as u32) {
                    let ::core::option::Option::Some(__new) = #take else #bail;
                    self.state.#f = __new;
                    self.__fresh[#si] = true;
                } else #reset
            });
        } else {
            let value = if last {
                quote_spanned!(f.span()=> #v)
            } else {
                quote_spanned!(f.span()=> ::core::clone::Clone::clone(&#v))
            };
            stmts.push(quote! {
                self.state.#f = #value;
                self.__fresh[#si] = true;
            });
        }
    }

    // Outputs.
    let fields = ir.outputs.iter().map(|o| {
        let name = &ast.nodes[o.node as usize].name;
        let v = node_local(ir, o.node, name.span());
        let value = match (&flavor, o.optional) {
            (Flavor::Mode(p), true) if p.is_live(o.node) => quote!(::core::option::Option::Some(#v)),
            (Flavor::Mode(_), true) => quote!(::core::option::Option::None),
            (Flavor::Mode(_), false) => quote!(#v),
            (Flavor::Masked, true) => quote!(#v.take()),
            (Flavor::Masked, false) => {
                let bail = internal(&format!("output `{name}` missing"));
                quote!(match #v.take() { ::core::option::Option::Some(v) => v, ::core::option::Option::None => #bail })
            }
        };
        quote!(#name: #value)
    });
    quote! {
        #(#stmts)*
        let __outputs = #outputs_ty { #(#fields,)* };
        #obs.frame_end(true);
        ::core::result::Result::Ok(__outputs)
    }
}

fn state_written(flavor: &Flavor<'_>, state: usize) -> bool {
    match flavor {
        Flavor::Mode(p) => p.writes_state(state as u32),
        Flavor::Masked => true,
    }
}
