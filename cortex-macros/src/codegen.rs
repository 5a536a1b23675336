//! Code generation for a valid pipeline: the bodies of the run functions in
//! the API of [`crate::api`] — one straight-line function per mode with its
//! plan's dead nodes already gone, and one plan-driven function for weights
//! and plans chosen at run time.

use cortex_core::ir::{Arg, EdgeKind, Endpoint, GraphIr, NodeId};
use cortex_core::memory::BufferPlan;
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
    pub run_into_observed: TokenStream,
    pub run_weights_observed: TokenStream,
    pub run_plan_observed: TokenStream,
    /// `run_parallel_into_observed` (`#[parallel]` pipelines only).
    pub run_parallel_observed: TokenStream,
    /// `run_stream` (`#[parallel]` pipelines only).
    pub run_stream: TokenStream,
    pub private: TokenStream,
    /// The types of the buffers the pipeline owns (a tuple field).
    pub buffer_types: Vec<syn::Type>,
    /// Per buffer field: its type's text and index among that type's.
    pub buffer_keys: Vec<(String, u32)>,
}

/// Everything the generator needs.
struct Cx<'a> {
    ast: &'a PipelineAst,
    ir: &'a GraphIr,
    /// The facade crate's path.
    c: &'a TokenStream,
    /// Where the buffers live.
    layout: BufferLayout,
}

/// The bodies of a valid pipeline's run functions.
pub fn bodies(ast: &PipelineAst, r: &Real<'_>, n: &ItemNames, c: &TokenStream) -> Bodies {
    // Buffers: each mode's own assignment for its straight-line function;
    // the full graph's for the plan-driven one, which is valid for every
    // plan (a plan's values live no longer than in the full graph).
    let mode_bufs: Vec<BufferPlan> = r
        .mode_plans
        .iter()
        .map(|p| BufferPlan::sequential(r.ir, p))
        .collect();
    let full = cortex_core::dce::plan_for_pattern(r.ir, 0, "full");
    let full_bufs = BufferPlan::sequential(r.ir, &full);
    // Parallel runs: every node of a wave at once, so values of one wave
    // never share a buffer.
    let par_bufs: Vec<BufferPlan> = if ast.parallel {
        r.mode_plans
            .iter()
            .map(|p| BufferPlan::parallel(r.ir, p))
            .collect()
    } else {
        Vec::new()
    };
    let all: Vec<&BufferPlan> = mode_bufs
        .iter()
        .chain(&par_bufs)
        .chain([&full_bufs])
        .collect();
    let layout = BufferLayout::new(ast, r.ir, &all);
    let buffer_types = layout.types.clone();
    let buffer_keys = layout.keys();
    let cx = Cx {
        ast,
        ir: r.ir,
        c,
        layout,
    };
    let mode_ty = &n.mode;
    let outputs_ty = &n.outputs;
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
        .zip(&mode_bufs)
        .map(|((p, v), b)| {
            run_body(
                &cx,
                n,
                Shape {
                    flavor: Flavor::Mode(p),
                    bufs: b,
                    parallel: None,
                    part: Part::Whole,
                },
                quote!(#mode_ty::#v.plan()),
                quote!(#mode_ty::#v.weights()),
            )
        })
        .collect();
    let par_fns: Vec<proc_macro2::Ident> = (0..par_bufs.len())
        .map(|i| format_ident!("__run_parallel_mode_{}", i))
        .collect();
    let par_seq_fns = &mode_fns[..par_fns.len()];
    let par_bodies: Vec<TokenStream> = r
        .mode_plans
        .iter()
        .zip(&variants)
        .zip(&par_bufs)
        .map(|((p, v), b)| {
            run_body(
                &cx,
                n,
                Shape {
                    flavor: Flavor::Mode(p),
                    bufs: b,
                    parallel: Some(cortex_core::schedule::waves(r.ir, p)),
                    part: Part::Whole,
                },
                quote!(#mode_ty::#v.plan()),
                quote!(#mode_ty::#v.weights()),
            )
        })
        .collect();
    let obs = local("__obs", Span::call_site());
    let sink = quote!(#c::__private::Sink<'_, #outputs_ty>);
    // Pipelined runs: per mode, the state-free stage and the rest.
    let stream_fns: Vec<proc_macro2::Ident> = (0..par_bufs.len())
        .map(|i| format_ident!("__stream_mode_{}", i))
        .collect();
    let (input_names, input_tys): (Vec<proc_macro2::Ident>, Vec<&syn::Type>) = ast
        .inputs
        .iter()
        .map(|i| (crate::names::local_like(&i.name), &i.ty))
        .unzip();
    let stream_bodies: Vec<TokenStream> = r
        .mode_plans
        .iter()
        .zip(&variants)
        .zip(&mode_bufs)
        .take(par_bufs.len())
        .zip(&mode_fns)
        .map(|(((p, v), b), seq_fn)| {
            let a = cortex_core::schedule::state_free(r.ir, p);
            let stage = |part| {
                run_body(
                    &cx,
                    n,
                    Shape {
                        flavor: Flavor::Mode(p),
                        bufs: b,
                        parallel: None,
                        part,
                    },
                    quote!(#mode_ty::#v.plan()),
                    quote!(#mode_ty::#v.weights()),
                )
            };
            let a_body = stage(Part::StreamA(&a));
            let b_body = rename_self(stage(Part::StreamB(&a)));
            let a_tys: Vec<&syn::Type> = stage_a_fills(r.ir, b, Some(&a))
                .iter()
                .filter_map(|&id| ast.nodes[id as usize].ty.as_ref())
                .collect();
            quote! {
                #c::__private::pipelined(
                    self,
                    frames,
                    options,
                    on_result,
                    |__inputs: &(#(#input_tys,)*), __a_bufs: &mut (#(#a_tys,)*)| {
                        let (#(#input_names,)*) = __inputs;
                        let #obs = #c::__private::SilentObserver;
                        #a_body
                    },
                    |__this: &mut Self, __inputs: &(#(#input_tys,)*), __a_values, __a_bufs: &mut (#(#a_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                        let (#(#input_names,)*) = __inputs;
                        let #obs = #c::__private::SilentObserver;
                        #b_body
                    },
                    || (#(<#a_tys as ::core::default::Default>::default(),)*),
                    |__this: &mut Self, __inputs: &(#(#input_tys,)*), __sink: #sink| -> ::core::result::Result<(), #c::PipelineError> {
                        let (#(#input_names,)*) = __inputs;
                        __this.#seq_fn(&mut #c::NoopObserver, __sink, #(#input_names),*)
                    },
                )
            }
        })
        .collect();
    let masked_body = run_body(
        &cx,
        n,
        Shape {
            flavor: Flavor::Masked,
            bufs: &full_bufs,
            parallel: None,
            part: Part::Whole,
        },
        quote!(__plan),
        quote!(__weights),
    );
    let fresh = |call: TokenStream| {
        quote! {
            let mut __slot = ::core::option::Option::None;
            #call?;
            match __slot {
                ::core::option::Option::Some(__outputs) => ::core::result::Result::Ok(__outputs),
                ::core::option::Option::None => ::core::result::Result::Err(#c::PipelineError::Internal("a run returned no outputs")),
            }
        }
    };
    let fresh_sink = quote!(#c::__private::Sink::Fresh(&mut __slot));
    let run_observed = fresh(quote! {
        match mode {
            #(#mode_ty::#variants => self.#mode_fns(observer, #fresh_sink, #args),)*
        }
    });
    let weights_call = fresh(quote!(self.__run_weights(weights, observer, #fresh_sink, #args)));
    let plan_call = fresh(quote!(self.__run_plan(plan, weights, observer, #fresh_sink, #args)));
    let run_parallel_observed = quote! {
        match mode {
            #(#mode_ty::#variants => self.#par_fns(observer, __sink, #args),)*
        }
    };
    let in_tuple = quote!((#(#input_tys,)*));
    let run_stream = quote! {
        match mode {
            #(#mode_ty::#variants => self.#stream_fns(frames, options, on_result),)*
        }
    };
    Bodies {
        run_stream,
        run_parallel_observed,
        run_observed,
        run_into_observed: quote! {
            match mode {
                #(#mode_ty::#variants => self.#mode_fns(observer, #c::__private::Sink::Into(outputs), #args),)*
            }
        },
        run_weights_observed: weights_call,
        run_plan_observed: quote! {
            weights.zero_pattern(&Self::ir().weight_keys)?;
            plan.validate(Self::ir())?;
            #plan_call
        },
        private: quote! {
            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #mode_fns<__O: #c::Observer>(&mut self, #obs: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                    #mode_bodies
                }
            )*

            #(
                #[inline]
                #[allow(unused_variables, unused_mut)]
                fn #par_fns<__O: #c::Observer + ::core::marker::Send>(&mut self, __observer: &mut __O, mut __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                    let __parallel = {
                        let #obs = &#c::__private::SharedObserver::new(__observer);
                        let __sink = __sink.reborrow();
                        #c::__private::in_pool(|| { #par_bodies })
                    };
                    match __parallel {
                        ::core::result::Result::Ok(()) => ::core::result::Result::Ok(()),
                        // Nodes of later waves may precede the failing one in
                        // plan order: the frame runs again, sequentially and
                        // unobserved (the state is as it was), so the error is
                        // the one `run` reports.
                        ::core::result::Result::Err(_) => self.#par_seq_fns(&mut #c::NoopObserver, __sink, #args),
                    }
                }
            )*

            #(
                #[allow(unused_variables, unused_mut, clippy::type_complexity)]
                fn #stream_fns<__I, __F>(&mut self, frames: __I, options: &#c::stream::StreamOptions, on_result: __F) -> ::core::result::Result<#c::stream::StreamReport, #c::stream::StreamError>
                where
                    __I: ::core::iter::Iterator<Item = #in_tuple> + ::core::marker::Send,
                    __F: ::core::ops::FnMut(#c::stream::StreamFrame<#in_tuple, #outputs_ty>) -> ::core::ops::ControlFlow<()>,
                {
                    #stream_bodies
                }
            )*

            /// Runs with weights chosen at run time, through the plan of
            /// their zero pattern.
            fn __run_weights<__O: #c::Observer>(&mut self, weights: &#c::Weights, observer: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                let __pattern = weights.zero_pattern(&Self::ir().weight_keys)?;
                let __plan = self.__plans.get(__pattern);
                if let ::core::option::Option::Some(&__missing) = __plan.missing_outputs.first() {
                    let output: &'static str = Self::ir().nodes.get(__missing as usize).map_or("?", |n| n.name.as_ref());
                    return ::core::result::Result::Err(#c::PipelineError::OutputEliminated { output });
                }
                self.__run_plan(&__plan, weights, observer, __sink, #args)
            }

            /// Runs a plan already validated against this pipeline.
            #[allow(unused_variables, unused_mut)]
            fn __run_plan<__O: #c::Observer>(&mut self, __plan: &#c::plan::Plan, __weights: &#c::Weights, #obs: &mut __O, __sink: #sink, #params) -> ::core::result::Result<(), #c::PipelineError> {
                #masked_body
            }
        },
        buffer_types,
        buffer_keys,
    }
}

/// What kind of run function to emit.
struct Shape<'a> {
    /// Which nodes run, and how it is decided.
    flavor: Flavor<'a>,
    /// The plan's buffers.
    bufs: &'a BufferPlan,
    /// `Some(waves)`: each wave's nodes at once (parallel runs).
    parallel: Option<Vec<Vec<NodeId>>>,
    /// The whole plan, or a stage of a pipelined run.
    part: Part<'a>,
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

/// Where each buffer-filling node's buffer lives in the pipeline: one
/// tuple field per buffer, as many of each declared type as the hungriest
/// plan needs.
pub struct BufferLayout {
    /// The field types, in tuple order.
    pub types: Vec<syn::Type>,
    /// (type text, index among the plan's buffers of that type) → field.
    index: std::collections::HashMap<(String, u32), usize>,
}

impl BufferLayout {
    /// The layout serving every plan in `plans`.
    pub fn new(ast: &PipelineAst, ir: &GraphIr, plans: &[&BufferPlan]) -> BufferLayout {
        let mut counts: Vec<(String, u32)> = Vec::new();
        for bp in plans {
            for b in &bp.buffers {
                match counts.iter_mut().find(|(t, _)| *t == b.ty) {
                    Some((_, n)) => *n = (*n).max(b.index_in_type + 1),
                    None => counts.push((b.ty.clone(), b.index_in_type + 1)),
                }
            }
        }
        let mut types = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (ty, n) in counts {
            // The type as the user wrote it, at its first declaration.
            let written = ir
                .nodes
                .iter()
                .position(|node| node.ty.as_deref() == Some(ty.as_str()))
                .and_then(|i| ast.nodes[i].ty.clone());
            let Some(written) = written else { continue };
            for k in 0..n {
                index.insert((ty.clone(), k), types.len());
                types.push(written.clone());
            }
        }
        BufferLayout { types, index }
    }

    /// Per field: (type text, index among the buffers of that type).
    pub fn keys(&self) -> Vec<(String, u32)> {
        let mut keys = vec![(String::new(), 0); self.types.len()];
        for ((ty, k), &i) in &self.index {
            keys[i] = (ty.clone(), *k);
        }
        keys
    }

    /// The field of node `id`'s buffer in `bufs`, as `self.__bufs.N`.
    fn field(&self, bufs: &BufferPlan, id: NodeId, at: Span) -> Option<TokenStream> {
        let b = bufs.buffer_of(id)?;
        let i = *self.index.get(&(b.ty.clone(), b.index_in_type))?;
        let i = syn::Index {
            index: i as u32,
            span: at,
        };
        Some(quote_spanned!(at=> self.__bufs.#i))
    }
}

/// The body of a run function.
fn run_body(
    cx: &Cx<'_>,
    n: &ItemNames,
    shape: Shape<'_>,
    plan_expr: TokenStream,
    weights_expr: TokenStream,
) -> TokenStream {
    let Shape {
        flavor,
        bufs,
        parallel,
        part,
    } = shape;
    let (ir, ast, c) = (cx.ir, cx.ast, cx.c);
    let mut parallel = parallel.map(|waves| Parallel {
        waves,
        jobs: std::collections::HashMap::new(),
    });
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
    let fills = |id: NodeId| bufs.buffer_of(id).is_some();
    // In a pipelined run, the state-free stage's filled values live in the
    // frame's own buffers (`__a_bufs`), since the next frame's stage fills
    // its own while this frame's second stage still reads them.
    let stage_a = part.stage_a();
    let a_fills = stage_a_fills(ir, bufs, stage_a);
    let buffer = |id: NodeId, at: Span| match a_fills.iter().position(|&a| a == id) {
        Some(i) => {
            let i = syn::Index {
                index: i as u32,
                span: at,
            };
            Some(quote_spanned!(at=> __a_bufs.#i))
        }
        None => cx.layout.field(bufs, id, at),
    };
    let in_part = |id: NodeId| match part {
        Part::Whole => true,
        Part::StreamA(a) => a[id as usize],
        Part::StreamB(a) => !a[id as usize],
    };
    // Stage A's returned values (filled ones stay in `__a_bufs`).
    let a_values: Vec<proc_macro2::Ident> = stage_a
        .map(|a| {
            ir.topo
                .iter()
                .copied()
                .filter(|&id| live(id) && a[id as usize] && !fills(id))
                .map(|id| node_local(ir, id, ast.nodes[id as usize].name.span()))
                .collect()
        })
        .unwrap_or_default();

    let mut stmts = Vec::new();
    stmts.push(quote! {
        let #weights: &#c::Weights = #weights_expr;
        #obs.frame_begin(Self::ir(), #plan_expr);
    });

    if let Part::StreamB(_) = part {
        stmts.push(quote!(let (#(#a_values,)*) = __a_values;));
        for &id in &a_fills {
            let v = node_local(ir, id, ast.nodes[id as usize].name.span());
            if let Some(f) = buffer(id, Span::call_site()) {
                stmts.push(quote!(let #v = &#f;));
            }
        }
    }

    // Node calls, in topological order.
    for &id in ir.topo.iter() {
        if !live(id) || !in_part(id) {
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
                    // A filled value is already a reference to its buffer.
                    let by_ref = if fills(*p) { quote_spanned!(sp=> #v) } else { quote_spanned!(sp=> &#v) };
                    let opt_ref = if fills(*p) { quote_spanned!(sp=> #v) } else { quote_spanned!(sp=> #v.as_ref()) };
                    // Every weighted edge goes through one generic function,
                    // so a parameter of the wrong type is one error in the
                    // DSL's words, the same in every run function.
                    let value = match (&flavor, weighted) {
                        (Flavor::Mode(plan), true) if plan.is_live(*p) => quote_spanned!(sp=> ::core::option::Option::Some(#by_ref)),
                        (Flavor::Mode(_), true) => quote_spanned!(sp=> ::core::option::Option::None),
                        (Flavor::Mode(_), false) => return by_ref,
                        (Flavor::Masked, true) => opt_ref,
                        (Flavor::Masked, false) => {
                            let tmp = local(&format!("__arg{a}"), sp);
                            let bail = internal(&format!("`{}` runs without its input `{}`", node.name, ir.nodes[*p as usize].name));
                            guards.push(quote!(let ::core::option::Option::Some(#tmp) = #opt_ref else #bail;));
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
                Arg::Buffer => match buffer(id, sp) {
                    Some(f) => quote_spanned!(sp=> &mut #f),
                    None => quote_spanned!(sp=> ::core::unreachable!()),
                },
                Arg::Const(_) => match arg_ast {
                    NodeArg::Const(e) => const_arg(e),
                    NodeArg::Name(i) => quote!(#i),
                    NodeArg::Buffer(_) => quote!(::core::unreachable!()),
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
        // The node's value: a reference to the buffer it filled (its call
        // returns `()`), or what its call returned, checked against the
        // declared type when there is one.
        let result = match (buffer(id, call_span), &decl.ty) {
            (Some(f), Some(ty)) => {
                let at = syn::spanned::Spanned::span(ty);
                quote_spanned! {at=> {
                    let () = #value;
                    let __filled: &#ty = &#f;
                    __filled
                }}
            }
            (_, Some(ty)) => {
                let at = syn::spanned::Spanned::span(ty);
                quote_spanned!(at=> { let __typed: #ty = #value; __typed })
            }
            (_, None) => quote!(#value),
        };
        if let Some(par) = parallel.as_mut() {
            // Emitted wave by wave below.
            let outcome = if node.fallible {
                let c = crate::krate::path_at(call_span);
                quote_spanned! {call_span=>
                    match __r {
                        ::core::result::Result::Ok(v) => ::core::result::Result::Ok(v),
                        ::core::result::Result::Err(e) => ::core::result::Result::Err(#c::PipelineError::node(#name_str, e)),
                    }
                }
            } else {
                quote!(::core::result::Result::Ok::<_, #c::PipelineError>(__r))
            };
            let job = quote! {
                || {
                    #(#guards)*
                    #obs.node_begin(#id);
                    let __r = #call;
                    #obs.node_end(#id);
                    #outcome
                }
            };
            let safe_at = decl.name.span();
            let cp = crate::krate::path_at(safe_at);
            // Mixed-site like the local it borrows, so `&local` keeps the
            // node's span instead of falling back to the whole invocation.
            let check_at = Span::mixed_site().located_at(safe_at);
            let check = quote_spanned!(check_at=> #cp::__private::parallel_safe(&#v););
            let bind = quote! {
                let #v = #result;
                #check
            };
            par.jobs.insert(id, (job, value.clone(), bind));
            continue;
        }
        if masked {
            stmts.push(quote! {
                let mut #v = if __plan.is_live(#id) {
                    #(#guards)*
                    #obs.node_begin(#id);
                    #compute
                    #obs.node_end(#id);
                    ::core::option::Option::Some(#result)
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
                let #v = #result;
            });
        }
    }

    if let Some(par) = parallel.take() {
        for wave in &par.waves {
            stmts.push(wave_stmts(c, &obs, wave, &par.jobs));
        }
    }
    if let Part::StreamA(_) = part {
        return quote! {
            #(#stmts)*
            ::core::result::Result::Ok((#(#a_values,)*))
        };
    }

    // Each live value's sinks: its outputs, then the states it writes. All
    // but the last take a copy; the last takes the value (a filled value:
    // swaps buffers with its sink, so nothing is allocated).
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

    // Outputs, each checked against its declared type at that type, the same
    // way on every path: into the caller's outputs (reusing their buffers)
    // or into new ones.
    let mut into_stmts = Vec::new();
    let mut fresh_fields = Vec::new();
    let mut fresh_stmts = Vec::new();
    for (oi, (o, decl)) in ir.outputs.iter().zip(&ast.outputs).enumerate() {
        let name = &decl.name;
        let ty = &decl.ty;
        let at = syn::spanned::Spanned::span(ty);
        let v = node_local(ir, o.node, at);
        let x = local("__output", at);
        let fresh_local = local(&format!("__fresh_output{oi}"), at);
        let is_live = live(o.node);
        let last = if is_live {
            remaining[o.node as usize] -= 1;
            remaining[o.node as usize] == 0
        } else {
            false
        };
        let missing = internal(&format!("output `{}` missing", text(name)));
        if let (true, Some(buf)) = (fills(o.node), buffer(o.node, at)) {
            // A filled value: `#v` is `&T` (or `Option<&T>` when masked).
            let get = if masked {
                quote!(match #v { ::core::option::Option::Some(#x) => ::core::option::Option::Some(#x), ::core::option::Option::None => ::core::option::Option::None })
            } else if is_live {
                quote!(::core::option::Option::Some(#v))
            } else {
                quote!(::core::option::Option::None::<&#ty>)
            };
            let into = if last {
                quote_spanned!(at=> #c::__private::swap_into::<#ty>)
            } else {
                quote_spanned!(at=> #c::__private::copy_into::<#ty>)
            };
            let buf_arg = if last { quote!(&mut #buf) } else { quote!(#x) };
            let (into_call, fresh) = if o.optional {
                (
                    quote! {
                        match (#get) {
                            ::core::option::Option::Some(#x) => #c::__private::into_option(&mut __o.#name, |__slot| #into(__slot, #buf_arg)),
                            ::core::option::Option::None => __o.#name = ::core::option::Option::None,
                        }
                    },
                    quote!((#get).map(|#x: &#ty| ::core::clone::Clone::clone(#x))),
                )
            } else {
                (
                    quote! {
                        let ::core::option::Option::Some(#x) = (#get) else #missing;
                        #into(&mut __o.#name, #buf_arg);
                    },
                    quote! {{
                        let ::core::option::Option::Some(#x) = (#get) else #missing;
                        let __typed: &#ty = #x;
                        ::core::clone::Clone::clone(__typed)
                    }},
                )
            };
            into_stmts.push(quote!({ #into_call }));
            fresh_stmts.push(quote!(let #fresh_local = #fresh;));
            fresh_fields.push(quote!(#name: #fresh_local));
            continue;
        }
        let typed = quote_spanned!(at=> { let __typed: #ty = #x; __typed });
        let take = |v: &proc_macro2::Ident| {
            if last || !is_live {
                quote!(#v)
            } else {
                quote!(::core::clone::Clone::clone(&#v))
            }
        };
        let value = match (&flavor, o.optional) {
            (Flavor::Mode(p), true) if p.is_live(o.node) => {
                let t = take(&v);
                quote!({ let #x = #t; ::core::option::Option::Some(#typed) })
            }
            (Flavor::Mode(_), true) => quote!(::core::option::Option::None),
            (Flavor::Mode(_), false) => {
                let t = take(&v);
                quote!({ let #x = #t; #typed })
            }
            (Flavor::Masked, true) => {
                let t = if last {
                    quote!(#v.take())
                } else {
                    quote!(#v.clone())
                };
                quote!(match #t { ::core::option::Option::Some(#x) => ::core::option::Option::Some(#typed), ::core::option::Option::None => ::core::option::Option::None })
            }
            (Flavor::Masked, false) => {
                let t = if last {
                    quote!(#v.take())
                } else {
                    quote!(#v.clone())
                };
                quote!(match #t { ::core::option::Option::Some(#x) => #typed, ::core::option::Option::None => #missing })
            }
        };
        fresh_stmts.push(quote!(let #fresh_local = #value;));
        fresh_fields.push(quote!(#name: #fresh_local));
        // Into the caller's outputs: the value computed the same way, then
        // stored (a plain value is moved in; its old value dropped).
        into_stmts.push(quote!({ let #fresh_local = #value; __o.#name = #fresh_local; }));
    }
    stmts.push(quote! {
        match __sink {
            #c::__private::Sink::Into(__o) => { #(#into_stmts)* }
            #c::__private::Sink::Fresh(__slot) => {
                #(#fresh_stmts)*
                *__slot = ::core::option::Option::Some(#outputs_ty { #(#fresh_fields,)* });
            }
        }
    });

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
        let bail = internal(&format!("state `{}` written without its writer", s.name));
        if let (true, Some(buf)) = (fills(w), buffer(w, at)) {
            // Double-buffered: the state and the writer's buffer trade
            // places, so last frame's state becomes next frame's buffer.
            let commit = if last {
                quote_spanned!(at=> ::core::mem::swap(&mut self.state.#f_at, &mut #buf);)
            } else {
                quote_spanned!(at=> ::core::clone::Clone::clone_from(&mut self.state.#f_at, #new);)
            };
            let get = if masked {
                quote!(let ::core::option::Option::Some(#new) = #v else #bail;)
            } else {
                quote!(let #new = #v;)
            };
            let body = quote! {
                #get
                let _ = &#new;
                #commit
                self.__fresh[#si] = true;
            };
            stmts.push(if masked {
                quote!(if __plan.writes_state(#si as u32) { #body } else #reset)
            } else {
                body
            });
            continue;
        }
        let assign = quote_spanned!(at=> self.state.#f_at = #new;);
        if masked {
            let take = if last {
                quote!(#v.take())
            } else {
                quote!(#v.clone())
            };
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

    quote! {
        #(#stmts)*
        #obs.frame_end(true);
        ::core::result::Result::Ok(())
    }
}

/// The nodes of a parallel run function, gathered before they are emitted
/// wave by wave.
struct Parallel {
    waves: Vec<Vec<NodeId>>,
    /// Per node: its job (a closure returning its call's result), the local
    /// its result is bound to, and the statements binding its value.
    jobs: std::collections::HashMap<NodeId, (TokenStream, proc_macro2::Ident, TokenStream)>,
}

/// One wave of a parallel run: a lone node runs on the calling thread;
/// several run at once on the pool (nested `join`s, so nothing is
/// allocated), then their results are taken in plan order, so the error
/// reported is the first in plan order whatever finished first.
fn wave_stmts(
    c: &TokenStream,
    obs: &proc_macro2::Ident,
    wave: &[NodeId],
    jobs: &std::collections::HashMap<NodeId, (TokenStream, proc_macro2::Ident, TokenStream)>,
) -> TokenStream {
    let parts: Vec<&(TokenStream, proc_macro2::Ident, TokenStream)> =
        wave.iter().filter_map(|id| jobs.get(id)).collect();
    let results: Vec<proc_macro2::Ident> = (0..parts.len())
        .map(|i| format_ident!("__wave_result_{}", i))
        .collect();
    let Some((last_job, _, _)) = parts.last() else {
        return TokenStream::new();
    };
    let last_result = &results[parts.len() - 1];
    let (mut run, mut pattern) = (quote!((#last_job)()), quote!(#last_result));
    for i in (0..parts.len() - 1).rev() {
        let job = &parts[i].0;
        let r = &results[i];
        run = quote!(#c::__private::join(#job, || #run));
        pattern = quote!((#r, #pattern));
    }
    let takes = parts.iter().zip(&results).map(|((_, value, bind), r)| {
        quote! {
            let #value = match #r {
                ::core::result::Result::Ok(v) => v,
                ::core::result::Result::Err(e) => {
                    #obs.frame_end(false);
                    return ::core::result::Result::Err(e);
                }
            };
            #bind
        }
    });
    quote! {
        let #pattern = #run;
        #(#takes)*
    }
}

/// `tokens` with every `self` renamed `__this`: a pipelined run's second
/// stage is a closure given the pipeline as an argument, so that it can run
/// on a worker while the calling thread holds the loop.
fn rename_self(tokens: TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Ident(i) if i == "self" => {
                proc_macro2::TokenTree::Ident(proc_macro2::Ident::new("__this", i.span()))
            }
            proc_macro2::TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), rename_self(g.stream()));
                ng.set_span(g.span());
                proc_macro2::TokenTree::Group(ng)
            }
            other => other,
        })
        .collect()
}

/// Which nodes a run function emits.
#[derive(Clone, Copy)]
pub enum Part<'a> {
    /// The whole plan.
    Whole,
    /// A pipelined run's first stage: the state-free nodes (per node: in
    /// the stage), returning their values.
    StreamA(&'a [bool]),
    /// A pipelined run's second stage: the other nodes, given the first
    /// stage's values, then the outputs and the state commits.
    StreamB(&'a [bool]),
}

impl<'a> Part<'a> {
    fn stage_a(self) -> Option<&'a [bool]> {
        match self {
            Part::Whole => None,
            Part::StreamA(a) | Part::StreamB(a) => Some(a),
        }
    }
}

/// The filled nodes of a pipelined run's first stage, in order: the fields
/// of its per-frame buffers.
pub fn stage_a_fills(ir: &GraphIr, bufs: &BufferPlan, stage_a: Option<&[bool]>) -> Vec<NodeId> {
    let Some(a) = stage_a else {
        return Vec::new();
    };
    ir.topo
        .iter()
        .copied()
        .filter(|&id| a[id as usize] && bufs.buffer_of(id).is_some())
        .collect()
}

fn state_written(flavor: &Flavor<'_>, state: usize) -> bool {
    match flavor {
        Flavor::Mode(p) => p.writes_state(state as u32),
        Flavor::Masked => true,
    }
}
