//! The body of one run function: its frame's start, its nodes (in order,
//! or wave by wave, or one stage of a pipelined run), then its outputs and
//! state commits. [`Body`] (in [`super::site`]) is what the generator knows
//! of the function; each kind of step has its emitter — calls on the
//! calling thread in [`super::calls`], fused groups in [`super::groups`],
//! a parallel run's waves in [`super::jobs`] — a node's call is built in
//! [`super::node`], the outputs in [`super::outputs`] and the commits in
//! [`super::commit`].

use cortex_core::ir::{Endpoint, NodeId};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::shape::{node_local, Cx, Shape};
use super::site::Body;
use super::stages::{stage_a_fills, Part};
use super::waves::Parallel;
use crate::names::{local, ItemNames};

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
        steps,
    } = shape;
    let body = Body {
        cx,
        n,
        a_fills: stage_a_fills(cx.ir, bufs, part.stage_a()),
        flavor,
        bufs,
        part,
        fusion,
        rated,
        steps,
        obs: local("__obs", Span::call_site()),
        borrowed: Vec::new(),
    };
    body.generate(parallel, plan_expr, weights_expr)
}

impl Body<'_> {
    fn generate(
        &self,
        waves: bool,
        plan_expr: TokenStream,
        weights_expr: TokenStream,
    ) -> TokenStream {
        let c = self.cx.c;
        let obs = &self.obs;
        let weights = local("__weights_table", Span::call_site());
        let a_values = self.a_values();
        let this = self.this(Span::call_site());
        let mut stmts = Vec::new();
        stmts.push(quote! {
            let #weights: &#c::Weights = #weights_expr;
            #obs.frame_begin(Self::ir(), #plan_expr);
        });
        if let (Some(r), true) = (self.rated, self.commits()) {
            stmts.push(quote!(let __now: u64 = #this.__frame;));
            for (i, (rate, &slot)) in r.rates.iter().zip(&r.slots).enumerate() {
                let due = local(&format!("__due{i}"), Span::call_site());
                let every = rate.every;
                stmts.push(quote!(let #due: bool = !#this.__rates_on || #this.__holds[#slot].due(__now, #every);));
            }
        }
        let a_locals: Vec<&Ident> = a_values.iter().map(|(_, v)| v).collect();
        if waves {
            // The frame runs in a closure on the pool, which reads the
            // inputs and the pipeline's states: a failed check of one of
            // them, in that closure, is its one error, and the pool's
            // `Send` bound on the closure is not reported as well.
            let checks = self.declared_checks();
            stmts.push(quote!(let _ = #checks;));
        }
        if let Part::StreamB(_) = self.part {
            self.stage_a_values(&mut stmts, &a_locals);
        }
        self.nodes(&mut stmts, waves);
        if let Part::StreamA(_) = self.part {
            return self.stage_a_end(stmts, &a_values);
        }
        self.frame_end(&mut stmts);
        quote! {
            #(#stmts)*
            #obs.frame_end(true);
            ::core::result::Result::Ok(())
        }
    }

    /// Stage A's returned values (filled ones stay in `__a_bufs`), with
    /// their nodes.
    fn a_values(&self) -> Vec<(NodeId, Ident)> {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        self.part
            .stage_a()
            .map(|a| {
                ir.topo
                    .iter()
                    .copied()
                    .filter(|&id| self.live(id) && a[id as usize] && !self.fills(id))
                    .map(|id| (id, node_local(ir, id, ast.nodes[id as usize].name.span())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A pipelined run's second stage: the first stage's values of this
    /// frame bound to their nodes' locals (a filled one, a reference to the
    /// frame's own buffer).
    fn stage_a_values(&self, stmts: &mut Vec<TokenStream>, a_locals: &[&Ident]) {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        stmts.push(quote!(let (#(#a_locals,)*) = __a_values.values();));
        for &id in &self.a_fills {
            let v = node_local(ir, id, ast.nodes[id as usize].name.span());
            if let Some(f) = self.buffer(id, Span::call_site()) {
                stmts.push(if self.masked() {
                    // A run-time plan's value: there when the first
                    // stage ran its node.
                    quote! {
                        let mut #v = if __plan.is_live(#id) {
                            ::core::option::Option::Some(&#f)
                        } else {
                            ::core::option::Option::None
                        };
                    }
                } else {
                    quote!(let #v = &#f;)
                });
            }
        }
        stmts.extend(a_locals.iter().map(|v| {
            if self.masked() {
                quote!(let mut #v = #v.map(|__x| __x.into_inner());)
            } else {
                quote!(let #v = #v.into_inner();)
            }
        }));
    }

    /// The end of a pipelined run's first stage: its values, each checked
    /// to cross to the second stage's thread.
    fn stage_a_end(&self, stmts: Vec<TokenStream>, a_values: &[(NodeId, Ident)]) -> TokenStream {
        let c = self.cx.c;
        // Each value crosses to the second stage's thread once checked:
        // the engine's own `Send` bound then holds, and a value that is
        // not `Send + Sync` is the one error of its check.
        let crossing = a_values.iter().map(|(id, v)| {
            if self.masked() {
                // A run-time plan's value: `None` when it left the
                // node out.
                let proof = self.value_proof(*id, quote!(&__x));
                quote!(#v.map(|__x| #proof.cross(__x)))
            } else {
                let proof = self.value_proof(*id, quote!(&#v));
                quote!(#proof.cross(#v))
            }
        });
        // The inputs and the pipeline (its states) cross threads too:
        // their checks travel with the values, which is where the
        // engine asks for its bounds.
        let checks = self.declared_checks();
        quote! {
            #(#stmts)*
            ::core::result::Result::Ok(#c::__private::carried((#(#crossing,)*), #checks))
        }
    }

    /// Rated node `id`'s local `v` (its rate `i`), from `fresh` (an
    /// `Option` of what this frame computed): a reference either way, to
    /// the value computed or to the held one. `fresh` stays bound
    /// (`__fresh{i}`) for the held-value commit.
    pub(super) fn rated_local(
        &self,
        id: NodeId,
        i: usize,
        v: &Ident,
        fresh: TokenStream,
    ) -> TokenStream {
        let decl = &self.cx.ast.nodes[id as usize];
        let local = local(&format!("__fresh{i}"), decl.name.span());
        let slot = self
            .rated
            .and_then(|r| r.slots.get(i))
            .map_or(syn::Index::from(0), |&s| syn::Index::from(s));
        let ty = decl.ty.clone().unwrap_or_else(|| syn::parse_quote!(()));
        let this = self.this(Span::call_site());
        let computed = if self.fills(id) {
            quote!(#local)
        } else {
            quote!(&#local)
        };
        quote! {
            let #local = #fresh;
            let #v: &#ty = match #computed {
                ::core::option::Option::Some(__v) => __v,
                ::core::option::Option::None => &#this.__held.#slot,
            };
        }
    }

    /// The frame's phase, once its triggers are known: the statements
    /// deciding it, put before the first node that runs in some phases only.
    fn phase_mask(&self) -> Option<TokenStream> {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        let rated = self.rated;
        rated.map(|r| {
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
                            if self.is_ref(n) { quote_spanned!(at=> (*#v)) } else { quote_spanned!(at=> #v) }
                        }
                        Endpoint::State(st) => {
                            let f = &ast.states[st as usize].name;
                            let this = self.this(at);
                            quote_spanned!(at=> #this.state.#f)
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
        let bail = self.internal("a phase outside the mode's phase plans");
        quote! {
            let __held_mask: u64 = 0u64 #(| #bits)*;
            let ::core::option::Option::Some(__phase) = (#phases).get(__held_mask as usize) else #bail;
        }
    })
    }

    /// Node calls: a walk over the frame's steps in order (a group's
    /// members together, the phase decided at its step), or, wave by wave,
    /// each node's job gathered first and emitted by [`emit_waves`](Self::emit_waves).
    fn nodes(&self, stmts: &mut Vec<TokenStream>, waves: bool) {
        let mask = self.phase_mask();
        let mut e = Emitted {
            stmts,
            parallel: waves.then(Parallel::default),
            fallbacks: self
                .fusion
                .map_or_else(Vec::new, |f| vec![Vec::new(); f.plan.groups.len()]),
            mask_pending: mask.is_some() && self.commits(),
            mask,
        };
        if waves {
            self.gather_jobs(&mut e);
            if let Some(par) = e.parallel.take() {
                self.emit_waves(&mut e, &par);
            }
        } else {
            self.emit_in_order(&mut e);
        }
        if let (true, Some(m)) = (e.mask_pending, &e.mask) {
            e.stmts.push(m.clone());
        }
    }
}

/// What [`Body::nodes`] has emitted so far, and what it still owes.
pub(super) struct Emitted<'s> {
    pub(super) stmts: &'s mut Vec<TokenStream>,
    /// A parallel run's jobs and groups, emitted wave by wave at the end.
    pub(super) parallel: Option<Parallel>,
    /// Per fused group: its members' own calls, gathered in order.
    pub(super) fallbacks: Vec<Vec<(NodeId, TokenStream)>>,
    /// The statements deciding the frame's phase (a rated mode).
    pub(super) mask: Option<TokenStream>,
    /// Whether they are still to be emitted.
    pub(super) mask_pending: bool,
}

impl Emitted<'_> {
    /// The phase's statements, once, before the first work only some phases
    /// run.
    pub(super) fn phase_before(&mut self) {
        if let (true, Some(m)) = (self.mask_pending, &self.mask) {
            self.stmts.push(m.clone());
            self.mask_pending = false;
        }
    }
}
