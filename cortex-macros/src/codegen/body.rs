//! The body of one run function: its nodes (in order, or wave by wave, or
//! one stage of a pipelined run), then its outputs and state commits.

use cortex_core::ir::{Arg, EdgeKind, Endpoint, NodeId};
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::fused::{group_block, GroupSite};
use super::stages::{stage_a_fills, Part};
use super::waves::{wave_stmts, Parallel};
use super::{const_arg, node_local, state_written, Cx, Flavor, Shape};
use crate::ast::NodeArg;
use crate::names::{local, text, ItemNames};

/// The body of a run function.
pub(super) fn run_body(
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
        fusion,
        rated,
        forget,
    } = shape;
    let (ir, ast, c) = (cx.ir, cx.ast, cx.c);
    let mut parallel = parallel.map(|waves| Parallel {
        waves,
        jobs: std::collections::HashMap::new(),
        groups: std::collections::HashMap::new(),
    });
    // Per fused group: its members' own calls, gathered in order.
    let mut fallbacks: Vec<Vec<TokenStream>> =
        fusion.map_or_else(Vec::new, |f| vec![Vec::new(); f.plan.groups.len()]);
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
    // A rated mode: its rated nodes' locals are references (to the value
    // computed this frame, or to the held one); the work only some phases
    // run has `Option` locals.
    let rate_of = |id: NodeId| rated.and_then(|r| r.rates.iter().position(|x| x.node == id));
    let cond = |id: NodeId| {
        rated.is_some_and(|r| {
            r.info
                .conditional
                .get(id as usize)
                .copied()
                .unwrap_or(false)
        }) && rate_of(id).is_none()
    };
    let is_ref = |id: NodeId| fills(id) || rate_of(id).is_some();
    // Frames commit (states, holds, the frame count) where their outputs are
    // made: not in a pipelined run's first stage.
    let commits = !matches!(part, Part::StreamA(_));
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

    if let (Some(r), true) = (rated, commits) {
        stmts.push(quote!(let __now: u64 = self.__frame;));
        for (i, (rate, &slot)) in r.rates.iter().zip(&r.slots).enumerate() {
            let due = local(&format!("__due{i}"), Span::call_site());
            let every = rate.every;
            stmts.push(quote!(let #due: bool = !self.__rates_on || self.__holds[#slot].due(__now, #every);));
        }
    }
    // The frame's phase, once its triggers are known: before the first
    // node that runs in some phases only.
    let mask_stmts = rated.map(|r| {
        let bits = r.rates.iter().enumerate().map(|(i, rate)| {
            let due = local(&format!("__due{i}"), Span::call_site());
            let trigger = match (&rate.trigger, r.decls.get(i).and_then(|d| d.trigger.as_ref())) {
                (Some(t), Some(decl)) => {
                    let at = decl.source.span();
                    // The value itself (a place, not a reference), so a
                    // trigger of another type is "expected `bool`, found
                    // `T`" at the trigger.
                    let source = match t.source {
                        Endpoint::Node(n) => {
                            let v = node_local(ir, n, at);
                            if is_ref(n) { quote_spanned!(at=> (*#v)) } else { quote_spanned!(at=> #v) }
                        }
                        Endpoint::State(st) => {
                            let f = &ast.states[st as usize].name;
                            quote_spanned!(at=> self.state.#f)
                        }
                        Endpoint::Input(x) => {
                            let p = crate::names::local_like_at(&ast.inputs[x as usize].name, at);
                            quote_spanned!(at=> (*#p))
                        }
                    };
                    let fields = &decl.fields;
                    let t = local("__trigger", at);
                    quote_spanned!(at=> { let #t: bool = #source #(.#fields)*; #t })
                }
                _ => quote!(false),
            };
            quote!(if #due || #trigger { 0u64 } else { 1u64 << #i })
        });
        let phases = &r.phases;
        let bail = internal("a phase outside the mode's phase plans");
        quote! {
            let __held_mask: u64 = 0u64 #(| #bits)*;
            let ::core::option::Option::Some(__phase) = (#phases).get(__held_mask as usize) else #bail;
        }
    });
    let mut mask_pending = mask_stmts.is_some() && commits;

    if let Part::StreamB(_) = part {
        stmts.push(quote!(let (#(#a_values,)*) = __a_values;));
        for &id in &a_fills {
            let v = node_local(ir, id, ast.nodes[id as usize].name.span());
            if let Some(f) = buffer(id, Span::call_site()) {
                stmts.push(quote!(let #v = &#f;));
            }
        }
    }

    // Node calls, in the plan's order (a fused plan runs each group's
    // members together).
    let order: Vec<NodeId> = match &flavor {
        Flavor::Mode(p) => p.order.to_vec(),
        Flavor::Masked => ir.topo.to_vec(),
    };
    for &id in order.iter() {
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
                    let by_ref = if is_ref(*p) { quote_spanned!(sp=> #v) } else { quote_spanned!(sp=> &#v) };
                    let opt_ref = if fills(*p) { quote_spanned!(sp=> #v) } else { quote_spanned!(sp=> #v.as_ref()) };
                    // Every weighted edge goes through one generic function,
                    // so a parameter of the wrong type is one error in the
                    // DSL's words, the same in every run function.
                    let optional = masked || cond(*p);
                    let value = match (&flavor, weighted) {
                        (_, true) if optional => opt_ref,
                        (Flavor::Masked, true) => opt_ref,
                        (Flavor::Mode(plan), true) if plan.is_live(*p) => quote_spanned!(sp=> ::core::option::Option::Some(#by_ref)),
                        (Flavor::Mode(_), true) => quote_spanned!(sp=> ::core::option::Option::None),
                        (Flavor::Mode(_), false) if !optional => return by_ref,
                        (_, false) => {
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
        let cp = crate::krate::path_at(call_span);
        // The call's result goes through one generic function when the node
        // has `?` (it must return a `Result`) and when it fills a buffer (it
        // must return `()`), so a slip is one error at the call, in the
        // DSL's words. The result is first bound to a local spanned at the
        // call, so that error reads the same in every run function and
        // rustc reports it once.
        let fills_own = node.fills_buffer() && decl.ty.is_some();
        // Not mixed-site: an error at a mixed-site local is reported at the
        // whole invocation in some run functions and at the call in others.
        let returned = proc_macro2::Ident::new("__cortex_returned", call_span);
        let bind_call = quote_spanned!(call_span=> let #returned = #call;);
        let checked_call = if node.fallible {
            quote_spanned!(call_span=> { #bind_call #cp::__private::fallible(#returned) })
        } else if fills_own {
            quote_spanned!(call_span=> { #bind_call #cp::__private::filled(#returned) })
        } else {
            call.clone()
        };
        let ok = local("__ok", call_span);
        let ok_value = if fills_own {
            quote_spanned!(call_span=> #cp::__private::filled(#ok))
        } else {
            quote_spanned!(call_span=> #ok)
        };
        let compute = if node.fallible {
            let c = crate::krate::path_at(call_span);
            quote_spanned! {call_span=>
                let #value = match #checked_call {
                    ::core::result::Result::Ok(#ok) => #ok_value,
                    ::core::result::Result::Err(e) => {
                        #obs.node_end(#id);
                        #obs.frame_end(false);
                        return ::core::result::Result::Err(#c::PipelineError::node(#name_str, e));
                    }
                };
            }
        } else {
            quote!(let #value = #checked_call;)
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
        if let Some((f, k)) = fusion.and_then(|f| f.plan.group_of(id).map(|k| (f, k))) {
            // A fused group's member: its call is the group's unfused path;
            // the group is emitted once its last member is reached.
            fallbacks[k].push(quote! {
                #(#guards)*
                #obs.node_begin(#id);
                #compute
                #obs.node_end(#id);
                let #v = #result;
            });
            let group = &f.plan.groups[k];
            if group.nodes.last() == Some(&id) {
                // Stage A of a pipelined run has no `self`: its groups live in
                // the frame's own buffers, after the filled values.
                let (slot, on) = match part {
                    Part::StreamA(_) => {
                        let i = syn::Index::from(a_fills.len() + f.a_slot_of(k));
                        (quote!(__a_bufs.#i), quote!(__fusion_on))
                    }
                    _ => {
                        let i = f.slot_base + f.self_slot_of(k);
                        (quote!(self.__fusion[#i]), quote!(self.__fusion_on))
                    }
                };
                let block = group_block(
                    cx,
                    GroupSite {
                        group,
                        slot,
                        on,
                        fallback: std::mem::take(&mut fallbacks[k]),
                        live: &live,
                        buffer: &buffer,
                        is_ref: &is_ref,
                    },
                    &obs,
                );
                match parallel.as_mut() {
                    Some(par) => {
                        par.groups.insert(group.nodes[0], block);
                    }
                    None => stmts.push(block),
                }
            }
            continue;
        }
        if let Some(par) = parallel.as_mut() {
            // Emitted wave by wave below.
            let outcome = if node.fallible {
                let c = crate::krate::path_at(call_span);
                quote_spanned! {call_span=>
                    match __r {
                        ::core::result::Result::Ok(#ok) => ::core::result::Result::Ok(#ok_value),
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
                    let __r = #checked_call;
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
        // A node some frames leave out: its value is `Some` when `plan`
        // (an expression of type `&Plan`) runs it.
        let guarded = |plan: TokenStream| {
            quote! {
                if #plan.is_live(#id) {
                    #(#guards)*
                    #obs.node_begin(#id);
                    #compute
                    #obs.node_end(#id);
                    ::core::option::Option::Some(#result)
                } else {
                    ::core::option::Option::None
                }
            }
        };
        if masked {
            let run = guarded(quote!(__plan));
            stmts.push(quote!(let mut #v = #run;));
        } else if rate_of(id).is_some() || cond(id) {
            // Work only some phases run, decided once the triggers are known.
            if let (true, Some(m)) = (mask_pending, &mask_stmts) {
                stmts.push(m.clone());
                mask_pending = false;
            }
            let run = guarded(quote!(__phase));
            match (rate_of(id), rated) {
                (Some(i), Some(r)) => {
                    // A rated node's local is a reference either way: to
                    // what this frame computed, or to the held value.
                    let fresh = local(&format!("__fresh{i}"), decl.name.span());
                    let slot = syn::Index::from(r.slots[i]);
                    let ty = decl.ty.clone().unwrap_or_else(|| syn::parse_quote!(()));
                    let computed = if fills(id) {
                        quote!(#fresh)
                    } else {
                        quote!(&#fresh)
                    };
                    stmts.push(quote! {
                        let #fresh = #run;
                        let #v: &#ty = match #computed {
                            ::core::option::Option::Some(__v) => __v,
                            ::core::option::Option::None => &self.__held.#slot,
                        };
                    });
                }
                _ => stmts.push(quote!(let #v = #run;)),
            }
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
    if let (true, Some(m)) = (mask_pending, &mask_stmts) {
        stmts.push(m.clone());
    }

    if let Some(par) = parallel.take() {
        for wave in &par.waves {
            // A fused group runs alone (its strips use every core), before
            // the other units of its wave, which read none of its values.
            let mut singles = Vec::new();
            for unit in wave {
                match par.groups.get(&unit[0]) {
                    Some(block) => stmts.push(block.clone()),
                    None => singles.extend(unit.iter().copied()),
                }
            }
            stmts.push(wave_stmts(c, &obs, &singles, &par.jobs));
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
    // A rated node's value is kept last (its buffer traded into the hold),
    // so its outputs and states take copies.
    for rate in rated.iter().flat_map(|r| r.rates.iter()) {
        remaining[rate.node as usize] += 1;
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
        if is_ref(o.node) {
            // A filled value: `#v` is `&T` (or `Option<&T>` when masked);
            // a rated value too (a copy: the hold keeps the value).
            let buf = buffer(o.node, at).filter(|_| last);
            let get = if masked {
                quote!(match #v { ::core::option::Option::Some(#x) => ::core::option::Option::Some(#x), ::core::option::Option::None => ::core::option::Option::None })
            } else if is_live {
                quote!(::core::option::Option::Some(#v))
            } else {
                quote!(::core::option::Option::None::<&#ty>)
            };
            let (into, buf_arg) = match &buf {
                Some(buf) => (
                    quote_spanned!(at=> #c::__private::swap_into::<#ty>),
                    quote!(&mut #buf),
                ),
                None => (
                    quote_spanned!(at=> #c::__private::copy_into::<#ty>),
                    quote!(#x),
                ),
            };
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
        let f = &decl.name;
        let init_fn = crate::names::state_init_fn(si);
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
                self.state.#f = Self::#init_fn();
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
        if is_ref(w) {
            // Double-buffered: the state and the writer's buffer trade
            // places, so last frame's state becomes next frame's buffer.
            let commit = match buffer(w, at).filter(|_| last) {
                Some(buf) => {
                    quote_spanned!(at=> ::core::mem::swap(&mut self.state.#f_at, &mut #buf);)
                }
                None => {
                    quote_spanned!(at=> ::core::clone::Clone::clone_from(&mut self.state.#f_at, #new);)
                }
            };
            let get = if masked || cond(w) {
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
            } else if cond(w) {
                // A writer only some phases run: the state is kept on the
                // others.
                quote!(if #v.is_some() { #body })
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
        } else if cond(w) {
            let take = if last {
                quote!(#v)
            } else {
                quote!(::core::clone::Clone::clone(&#v))
            };
            stmts.push(quote! {
                if let ::core::option::Option::Some(#new) = #take {
                    #assign
                    self.__fresh[#si] = true;
                }
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

    // Held values: what a rated node computed this frame is kept (its
    // buffer traded in); a hold this mode does not rate is forgotten, so a
    // held value never spans a frame whose trigger was not checked.
    if let Some(r) = rated {
        for (i, &slot) in r.slots.iter().enumerate() {
            let id = r.rates[i].node;
            let decl = &ast.nodes[id as usize];
            let fresh = local(&format!("__fresh{i}"), decl.name.span());
            let s = syn::Index::from(slot);
            let keep = match buffer(id, Span::call_site()) {
                Some(buf) if fills(id) => quote! {
                    if #fresh.is_some() {
                        ::core::mem::swap(&mut self.__held.#s, &mut #buf);
                        self.__holds[#slot].computed_at = ::core::option::Option::Some(__now);
                    }
                },
                _ => quote! {
                    if let ::core::option::Option::Some(__v) = #fresh {
                        self.__held.#s = __v;
                        self.__holds[#slot].computed_at = ::core::option::Option::Some(__now);
                    }
                },
            };
            stmts.push(quote! {
                #keep
                self.__holds[#slot].held_last_frame = __held_mask & (1u64 << #i) != 0;
            });
        }
    }
    for &slot in forget {
        stmts.push(quote!(self.__holds[#slot].forget();));
    }
    stmts.push(quote!(self.__frame = self.__frame.wrapping_add(1);));

    quote! {
        #(#stmts)*
        #obs.frame_end(true);
        ::core::result::Result::Ok(())
    }
}
