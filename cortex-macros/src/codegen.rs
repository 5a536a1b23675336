//! Code generation for a valid pipeline: the bodies of the run functions in
//! the API of [`crate::api`] — one straight-line function per mode with its
//! plan's dead nodes already gone, and one plan-driven function for weights
//! and plans chosen at run time.

use cortex_core::ir::{Arg, EdgeKind, Endpoint, GraphIr, NodeId};
use cortex_core::plan::Plan;
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::api::Real;
use crate::ast::{NodeArg, PipelineAst};
use crate::names::{input_params, local, text, variant, ItemNames};

/// The real bodies of the API's run functions, and the private functions
/// they call.
pub struct Bodies {
    pub run_observed: TokenStream,
    pub run_weights_observed: TokenStream,
    pub run_plan_observed: TokenStream,
    pub private: TokenStream,
}

/// Everything the generator needs.
struct Cx<'a> {
    ast: &'a PipelineAst,
    ir: &'a GraphIr,
    /// The facade crate's path.
    c: &'a TokenStream,
}

/// The bodies of a valid pipeline's run functions.
pub fn bodies(ast: &PipelineAst, r: &Real<'_>, n: &ItemNames, c: &TokenStream) -> Bodies {
    let cx = Cx { ast, ir: r.ir, c };
    let mode_ty = &n.mode;
    let (params, args) = input_params(ast);
    let variants: Vec<proc_macro2::Ident> =
        r.ir.modes
            .iter()
            .map(|m| variant(&m.name).unwrap_or_else(|| format_ident!("Invalid")))
            .collect();
    let mode_fns: Vec<proc_macro2::Ident> = (0..variants.len())
        .map(|i| format_ident!("__run_mode_{}", i))
        .collect();
    let mode_bodies: Vec<TokenStream> = r
        .mode_plans
        .iter()
        .zip(&variants)
        .map(|(p, v)| {
            run_body(
                &cx,
                n,
                Flavor::Mode(p),
                quote!(#mode_ty::#v.plan()),
                quote!(#mode_ty::#v.weights()),
            )
        })
        .collect();
    let masked_body = run_body(&cx, n, Flavor::Masked, quote!(__plan), quote!(__weights));
    let outputs_ty = &n.outputs;
    let obs = local("__obs", Span::call_site());
    Bodies {
        run_observed: quote! {
            match mode {
                #(#mode_ty::#variants => self.#mode_fns(observer, #args),)*
            }
        },
        run_weights_observed: quote! {
            let __pattern = weights.zero_pattern(&Self::ir().weight_keys)?;
            let __plan = self.__plans.get(__pattern);
            if let ::core::option::Option::Some(&__missing) = __plan.missing_outputs.first() {
                let output: &'static str = Self::ir().nodes.get(__missing as usize).map_or("?", |n| n.name.as_ref());
                return ::core::result::Result::Err(#c::PipelineError::OutputEliminated { output });
            }
            self.__run_plan(&__plan, weights, observer, #args)
        },
        run_plan_observed: quote! {
            weights.zero_pattern(&Self::ir().weight_keys)?;
            plan.validate(Self::ir())?;
            self.__run_plan(plan, weights, observer, #args)
        },
        private: quote! {
            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #mode_fns<__O: #c::Observer>(&mut self, #obs: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                    #mode_bodies
                }
            )*

            /// Runs a plan already validated against this pipeline.
            #[allow(unused_variables, unused_mut)]
            fn __run_plan<__O: #c::Observer>(&mut self, __plan: &#c::plan::Plan, __weights: &#c::Weights, #obs: &mut __O, #params) -> ::core::result::Result<#outputs_ty, #c::PipelineError> {
                #masked_body
            }
        },
    }
}

/// How a run function chooses which nodes to run.
enum Flavor<'a> {
    /// A declared mode: only the plan's nodes are emitted, in order.
    Mode(&'a Plan),
    /// Weights chosen at run time: every node is emitted, guarded by the
    /// plan passed in, with node values held in `Option`s.
    Masked,
}

/// The doc comment of a mode variant: its weights and its plan.
pub fn mode_doc(ir: &GraphIr, plan: &Plan) -> String {
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

/// A constant argument as it is passed: a block holding one expression
/// (`{ None }`, the DSL's escape for a bare name) is passed as that
/// expression, so rustc's `unused_braces` lint has nothing to say.
fn const_arg(e: &syn::Expr) -> TokenStream {
    if let syn::Expr::Block(b) = e {
        if let ([syn::Stmt::Expr(inner, None)], true, None) =
            (b.block.stmts.as_slice(), b.attrs.is_empty(), &b.label)
        {
            return quote!(#inner);
        }
    }
    quote!(#e)
}

/// The body of a run function.
fn run_body(
    cx: &Cx<'_>,
    n: &ItemNames,
    flavor: Flavor<'_>,
    plan_expr: TokenStream,
    weights_expr: TokenStream,
) -> TokenStream {
    let (ir, ast, c) = (cx.ir, cx.ast, cx.c);
    let outputs_ty = &n.outputs;
    let obs = local("__obs", Span::call_site());
    let weights = local("__weights_table", Span::call_site());
    let internal = |what: &str| {
        let msg = format!("plan invariant broken: {what}");
        quote!({ #obs.frame_end(false); return ::core::result::Result::Err(#c::PipelineError::Internal(#msg)); })
    };
    let live = |id: NodeId| match &flavor {
        Flavor::Mode(p) => p.is_live(id),
        Flavor::Masked => true,
    };
    let masked = matches!(flavor, Flavor::Masked);

    let mut stmts = Vec::new();
    stmts.push(quote! {
        let #weights: &#c::Weights = #weights_expr;
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
                    let p = crate::names::local_like_at(&ast.inputs[*i as usize].name, sp);
                    quote_spanned!(sp=> #p)
                }
                Arg::Value(Endpoint::State(s)) => {
                    let f = &ast.states[*s as usize].name;
                    quote_spanned!(sp=> &self.state.#f)
                }
                Arg::Value(e @ Endpoint::Node(p)) => {
                    let v = node_local(ir, *p, sp);
                    let weighted = ir.out_edge_kind(*e) == EdgeKind::Weighted;
                    // Every weighted edge goes through one generic function,
                    // so a parameter of the wrong type is one error in the
                    // DSL's words, the same in every run function.
                    let value = match (&flavor, weighted) {
                        (Flavor::Mode(plan), true) if plan.is_live(*p) => quote_spanned!(sp=> ::core::option::Option::Some(&#v)),
                        (Flavor::Mode(_), true) => quote_spanned!(sp=> ::core::option::Option::None),
                        (Flavor::Mode(_), false) => return quote_spanned!(sp=> &#v),
                        (Flavor::Masked, true) => quote_spanned!(sp=> #v.as_ref()),
                        (Flavor::Masked, false) => {
                            let tmp = local(&format!("__arg{a}"), sp);
                            let bail = internal(&format!("`{}` runs without its input `{}`", node.name, ir.nodes[*p as usize].name));
                            guards.push(quote!(let ::core::option::Option::Some(#tmp) = #v.as_ref() else #bail;));
                            return quote_spanned!(sp=> #tmp);
                        }
                    };
                    // Bound to a local of the same name and span on every
                    // path, so the call's tokens are identical in every run
                    // function and rustc reports a type error once.
                    let edge = local(&format!("__edge{a}"), sp);
                    guards.push(quote!(let #edge = #value;));
                    let c = crate::krate::path_at(sp);
                    quote_spanned!(sp=> #c::__private::weighted(#edge))
                }
                Arg::Weights => {
                    let w = local("__weights_table", sp);
                    quote_spanned!(sp=> #w)
                }
                Arg::Const(_) => match arg_ast {
                    NodeArg::Const(e) => const_arg(e),
                    NodeArg::Name(i) => quote!(#i),
                },
            }
        });
        let args: Vec<TokenStream> = args.collect();
        let call_span = syn::spanned::Spanned::span(func);
        // The parentheses keep the user's span, so rustc's suggestions about
        // the arguments quote the call as written.
        let mut parens = Group::new(Delimiter::Parenthesis, quote!(#(#args),*));
        parens.set_span(decl.paren.join());
        let call = quote_spanned!(call_span=> #func #parens);
        let name_str: &str = &node.name;
        let value = local("__value", call_span);
        let compute = if node.fallible {
            let c = crate::krate::path_at(call_span);
            quote_spanned! {call_span=>
                let #value = match #call {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(e) => {
                        #obs.node_end(#id);
                        #obs.frame_end(false);
                        return ::core::result::Result::Err(#c::PipelineError::node(#name_str, e));
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
                #(#guards)*
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

    // State commits: only now, after every node succeeded. The assignment is
    // spanned at the state in its write (`gray -> _prev_gray`) with a local
    // of the same name and span on every path, so a type mismatch is one
    // error there, not one per run function.
    for (si, s) in ir.states.iter().enumerate() {
        let decl = &ast.states[si];
        let (f, init) = (&decl.name, &decl.init);
        let at = ast
            .writes
            .iter()
            .find(|w| text(&w.to) == *s.name)
            .map_or(f.span(), |w| w.to.span());
        let w = s.writer;
        let v = node_local(ir, w, at);
        let new = local("__new_state", at);
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
        // The field named at `at` too, so the error's span is one token.
        let mut f_at = f.clone();
        f_at.set_span(at);
        let assign = quote_spanned!(at=> self.state.#f_at = #new;);
        if masked {
            let take = if last {
                quote!(#v.take())
            } else {
                quote!(#v.clone())
            };
            let bail = internal(&format!("state `{}` written without its writer", s.name));
            stmts.push(quote! {
                if __plan.writes_state(#si as u32) {
                    let ::core::option::Option::Some(#new) = #take else #bail;
                    #assign
                    self.__fresh[#si] = true;
                } else #reset
            });
        } else {
            let value = if last {
                quote!(#v)
            } else {
                quote!(::core::clone::Clone::clone(&#v))
            };
            stmts.push(quote! {
                let #new = #value;
                #assign
                self.__fresh[#si] = true;
            });
        }
    }

    // Outputs, each checked against its declared type at that type, the same
    // way on every path.
    let fields = ir.outputs.iter().zip(&ast.outputs).map(|(o, decl)| {
        let name = &decl.name;
        let ty = &decl.ty;
        let at = syn::spanned::Spanned::span(ty);
        let v = node_local(ir, o.node, at);
        let x = local("__output", at);
        let typed = quote_spanned!(at=> { let __typed: #ty = #x; __typed });
        let value = match (&flavor, o.optional) {
            (Flavor::Mode(p), true) if p.is_live(o.node) => quote!({ let #x = #v; ::core::option::Option::Some(#typed) }),
            (Flavor::Mode(_), true) => quote!(::core::option::Option::None),
            (Flavor::Mode(_), false) => quote!({ let #x = #v; #typed }),
            (Flavor::Masked, true) => quote!(match #v.take() { ::core::option::Option::Some(#x) => ::core::option::Option::Some(#typed), ::core::option::Option::None => ::core::option::Option::None }),
            (Flavor::Masked, false) => {
                let bail = internal(&format!("output `{}` missing", text(name)));
                quote!(match #v.take() { ::core::option::Option::Some(#x) => #typed, ::core::option::Option::None => #bail })
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
