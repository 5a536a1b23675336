//! The body of one run function: its nodes (in order, or wave by wave, or
//! one stage of a pipelined run), then its outputs and state commits.
//! [`Body`] (in [`super::site`]) is what the generator knows of the
//! function; a node's call is built in [`super::node`], the outputs and
//! commits in [`super::commit`].

use cortex_core::ir::{Endpoint, NodeId};
use cortex_core::lower::{Step, Unit};
use cortex_core::passes::fusion::{Group, ValueRole};
use cortex_core::plan::Plan;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::fused::{group_block, GroupSite};
use super::node::Call;
use super::shape::{node_local, Cx, Flavor, Fused, Shape};
use super::site::Body;
use super::stages::{stage_a_fills, Part};
use super::waves::{wave_stmts, Job, Parallel};
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

    /// Evidence that node `id`'s value, which `place` refers to, may cross
    /// threads (see [`parallel_check`]). A node that writes a state is
    /// checked as that state (the same type): a state that is not
    /// `Send + Sync` is then one error, at the state, not another at its
    /// writer.
    fn value_proof(&self, id: NodeId, place: TokenStream) -> TokenStream {
        let ast = self.cx.ast;
        let name = &ast.nodes[id as usize].name;
        let written = ast
            .writes
            .iter()
            .filter(|w| crate::names::text(&w.from) == crate::names::text(name))
            .find_map(|w| {
                ast.states
                    .iter()
                    .find(|st| crate::names::text(&st.name) == crate::names::text(&w.to))
            });
        match written {
            Some(st) => parallel_check(Probe::Value(place), Check::State, st.name.span()),
            None => parallel_check(Probe::Value(place), Check::Value, name.span()),
        }
    }

    /// The checks that every input and state of a `#[parallel]` pipeline
    /// may cross threads, chained into one value (`()` when there are
    /// none). A check that fails is one error, at the input's or state's
    /// name, and makes the chain the error type: the engine's bounds on
    /// the inputs and the pipeline, which a pipelined run asks of the
    /// values carrying this chain, and those of the pool's closures, are
    /// then not reported again.
    fn declared_checks(&self) -> TokenStream {
        let ast = self.cx.ast;
        // Checked by type, as the `ParallelPipeline` impl checks them
        // (`api::parallel`): the same check at the same span is one error.
        let inputs = ast.inputs.iter().map(|i| {
            let ty = &i.ty;
            parallel_check(Probe::Type(quote!(#ty)), Check::Input, i.name.span())
        });
        let states = ast.states.iter().map(|st| {
            let ty = &st.ty;
            parallel_check(Probe::Type(quote!(#ty)), Check::State, st.name.span())
        });
        inputs
            .chain(states)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .fold(quote!(()), |rest, check| quote!(#check.and(#rest)))
    }

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
    fn rated_local(&self, id: NodeId, i: usize, v: &Ident, fresh: TokenStream) -> TokenStream {
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

    /// The frame's steps on the calling thread: each call, each group
    /// (its members' calls its unfused path), the phase decided where the
    /// steps decide it.
    fn emit_in_order(&self, e: &mut Emitted<'_>) {
        let runs = |id: NodeId| self.live(id) && self.in_part(id);
        for step in self.steps {
            match *step {
                Step::DecidePhase => e.phase_before(),
                Step::Call { node, .. } if runs(node) => {
                    let call = self.call(node);
                    self.sequential_call(e, node, call);
                }
                Step::Group { group: k, .. } => {
                    let Some(f) = self.fusion else { continue };
                    let members = f.plan.groups.get(k).map_or(&[][..], |g| &g.nodes[..]);
                    for &id in members.iter().filter(|&&id| runs(id)) {
                        let call = self.call(id);
                        self.group_member(e, id, call, f, k);
                    }
                }
                _ => {}
            }
        }
    }

    /// A parallel run's jobs and group blocks, in the plan's order (a
    /// fused plan's groups' members together), for its waves to emit.
    fn gather_jobs(&self, e: &mut Emitted<'_>) {
        let order: Vec<NodeId> = match &self.flavor {
            Flavor::Mode(p) | Flavor::Masked(p) => p.order.to_vec(),
        };
        for &id in order.iter() {
            if !self.live(id) || !self.in_part(id) {
                continue;
            }
            let call = self.call(id);
            match self
                .fusion
                .and_then(|f| f.plan.group_of(id).map(|k| (f, k)))
            {
                Some((f, k)) => self.group_member(e, id, call, f, k),
                None => {
                    let job = self.job(id, call);
                    if let Some(par) = e.parallel.as_mut() {
                        par.jobs.insert(id, job);
                    }
                }
            }
        }
    }

    /// A fused group's member: its call is the group's unfused path; the
    /// group is emitted once its last member is reached.
    fn group_member(&self, e: &mut Emitted<'_>, id: NodeId, call: Call, f: Fused<'_>, k: usize) {
        let own = if self.masked() {
            self.guarded_call(id, &call, quote!(__plan))
        } else {
            self.inline_call(id, &call)
        };
        e.fallbacks[k].push((id, own));
        let group = &f.plan.groups[k];
        if group.nodes.last() != Some(&id) {
            return;
        }
        // Stage A of a pipelined run has no `self`: its groups live in
        // the frame's own buffers, after the filled values.
        let (slot, on) = match self.part {
            Part::StreamA(_) => {
                let i = syn::Index::from(self.a_fills.len() + f.a_slot_of(k));
                (quote!(__a_bufs.#i), quote!(__fusion_on))
            }
            _ => {
                let i = f.slot_base + f.self_slot_of(k);
                let this = self.this(Span::call_site());
                (quote!(#this.__fusion[#i]), quote!(#this.__fusion_on))
            }
        };
        let own = std::mem::take(&mut e.fallbacks[k]);
        let block = match self.flavor {
            Flavor::Masked(full) => self.plan_group(group, (slot, on), full, own),
            Flavor::Mode(_) => self.group_here(group, (slot, on), own),
        };
        match e.parallel.as_mut() {
            Some(par) => {
                par.groups.insert(group.nodes[0], block);
            }
            None => e.stmts.push(block),
        }
    }

    /// Group `group`'s block in this body: its slot `slot`, fused when `on`
    /// (both expressions), its members' own calls `own` its unfused path.
    fn group_here(
        &self,
        group: &Group,
        (slot, on): (TokenStream, TokenStream),
        own: Vec<(NodeId, TokenStream)>,
    ) -> TokenStream {
        let live = |id: NodeId| self.live(id);
        let buffer = |id: NodeId, at: Span| self.buffer(id, at);
        let is_ref = |id: NodeId| self.is_ref(id);
        group_block(
            self.cx,
            GroupSite {
                group,
                slot,
                on,
                fallback: own,
                this: self.this(Span::call_site()),
                live: &live,
                buffer: &buffer,
                is_ref: &is_ref,
            },
            &self.obs,
        )
    }

    /// A group of a plan-driven body (`full`: the frame's plan, every node
    /// of which the plan passed in may leave out). When that plan runs all
    /// its members and every node value they read from outside the group,
    /// the group runs as a declared mode's does (those values borrowed, the
    /// members' values then `Some`); else the members' guarded calls
    /// `guarded`, one after the other. A plan leaving out a weighted input
    /// of the group runs it unfused: the group is built with that input.
    fn plan_group(
        &self,
        group: &Group,
        at: (TokenStream, TokenStream),
        full: &Plan,
        guarded: Vec<(NodeId, TokenStream)>,
    ) -> TokenStream {
        let (ir, ast) = (self.cx.ir, self.cx.ast);
        let local = |id: NodeId| node_local(ir, id, ast.nodes[id as usize].name.span());
        let outside = group.read_nodes(ir);
        let all_run = Body {
            flavor: Flavor::Mode(full),
            borrowed: outside.clone(),
            a_fills: self.a_fills.clone(),
            obs: self.obs.clone(),
            ..*self
        };
        let own = group
            .nodes
            .iter()
            .map(|&m| (m, all_run.inline_call(m, &all_run.call(m))))
            .collect();
        let block = all_run.group_here(group, at, own);
        let leaving: Vec<Ident> = group
            .nodes
            .iter()
            .zip(&group.values)
            .filter(|(_, role)| matches!(role, ValueRole::Leaving { .. }))
            .map(|(&m, _)| local(m))
            .collect();
        let runs = group
            .whole_needs(ir)
            .into_iter()
            .map(|id| quote!(__plan.is_live(#id)));
        let reads = outside.iter().map(|&p| {
            let v = local(p);
            if self.fills(p) {
                quote!(#v)
            } else {
                quote!(#v.as_ref())
            }
        });
        let bound = outside.iter().map(|&p| {
            let v = local(p);
            quote!(::core::option::Option::Some(#v))
        });
        let guarded = guarded.iter().map(|(_, call)| call);
        quote! {
            #[allow(unused_mut)]
            let (#(mut #leaving,)*) = match (true #(&& #runs)*, #(#reads,)*) {
                (true, #(#bound,)*) => {
                    #block
                    (#(::core::option::Option::Some(#leaving),)*)
                }
                _ => {
                    #(#guarded)*
                    (#(#leaving,)*)
                }
            };
        }
    }

    /// What leaves node `id` out on some frames of a parallel run: the
    /// frame's plan (run-time plans) or its phase (rated modes); its job
    /// then returns an `Option`.
    fn skipped_by(&self, id: NodeId) -> Option<TokenStream> {
        if self.masked() {
            Some(quote!(__plan))
        } else if self.rate_of(id).is_some() || self.cond(id) {
            Some(quote!(__phase))
        } else {
            None
        }
    }

    /// Node `id`'s job in a parallel run: the closure running it on the
    /// pool and the statements binding its value.
    fn job(&self, id: NodeId, call: Call) -> Job {
        let skipped_by = self.skipped_by(id);
        let run = self.job_closure(id, &call, skipped_by.as_ref());
        let bind = self.job_bind(id, &call, skipped_by.is_some());
        Job {
            run,
            value: call.value,
            bind,
            optional: skipped_by.is_some(),
        }
    }

    /// The closure of node `id`'s job, returning its checked value (an
    /// `Option` of it when `skipped_by` may leave the node out).
    fn job_closure(
        &self,
        id: NodeId,
        call: &Call,
        skipped_by: Option<&TokenStream>,
    ) -> TokenStream {
        let (ir, c) = (self.cx.ir, self.cx.c);
        let obs = &self.obs;
        let Call {
            guards,
            checked_call,
            ok,
            ok_value,
            call_span,
            ..
        } = call;
        let call_span = *call_span;
        let node = &ir.nodes[id as usize];
        let name_str: &str = &node.name;
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
        // The value crosses back from the worker thread checked, so
        // the pool's own `Send` bound holds and a value that is not
        // `Send + Sync` is the one error of its check.
        let crossed = local("__crossed", Span::call_site());
        let proof = self.value_proof(id, quote!(&#crossed));
        if let Some(plan) = skipped_by {
            // A node the plan leaves out: `None`, its value too.
            quote! {
                || {
                    if !#plan.is_live(#id) {
                        return ::core::result::Result::Ok(::core::option::Option::None);
                    }
                    #(#guards)*
                    #obs.node_begin(#id);
                    let __r = #checked_call;
                    #obs.node_end(#id);
                    (#outcome).map(|#crossed| ::core::option::Option::Some(#proof.cross(#crossed)))
                }
            }
        } else {
            quote! {
                || {
                    #(#guards)*
                    #obs.node_begin(#id);
                    let __r = #checked_call;
                    #obs.node_end(#id);
                    (#outcome).map(|#crossed| #proof.cross(#crossed))
                }
            }
        }
    }

    /// The statements binding node `id`'s value once its job has run (a
    /// filled buffer's local is a reference to it: the buffer's type is
    /// checked).
    fn job_bind(&self, id: NodeId, call: &Call, optional: bool) -> TokenStream {
        let Call {
            value, result, v, ..
        } = call;
        if let Some(i) = self.rate_of(id) {
            let local = self.rated_local(id, i, v, quote! {
                match #value {
                    ::core::option::Option::Some(#value) => ::core::option::Option::Some(#result),
                    ::core::option::Option::None => ::core::option::Option::None,
                }
            });
            let proof = self.value_proof(id, quote!(#v));
            quote! {
                #local
                let _ = #proof;
            }
        } else if optional {
            // A value the job returned crossed with its proof; a
            // filled buffer's type is checked here.
            let check = self.is_ref(id).then(|| {
                let checked = local("__checked", Span::call_site());
                let proof = self.value_proof(id, quote!(#checked));
                quote! {
                    if let ::core::option::Option::Some(#checked) = #v {
                        let _ = #proof;
                    }
                }
            });
            quote! {
                let mut #v = match #value {
                    ::core::option::Option::Some(#value) => ::core::option::Option::Some(#result),
                    ::core::option::Option::None => ::core::option::Option::None,
                };
                #check
            }
        } else {
            let place = if self.is_ref(id) {
                quote!(#v)
            } else {
                quote!(&#v)
            };
            let proof = self.value_proof(id, place);
            quote! {
                let #v = #result;
                let _ = #proof;
            }
        }
    }

    /// Node `id`'s call on the calling thread: always, or (a node some
    /// frames leave out) when the frame's plan or phase runs it.
    fn sequential_call(&self, e: &mut Emitted<'_>, id: NodeId, call: Call) {
        if self.masked() {
            e.stmts.push(self.guarded_call(id, &call, quote!(__plan)));
        } else if self.rate_of(id).is_some() || self.cond(id) {
            // Work only some phases run, after the phase is decided.
            let run = self.guarded(id, &call, quote!(__phase));
            match self.rate_of(id) {
                Some(i) => e.stmts.push(self.rated_local(id, i, &call.v, run)),
                None => {
                    let v = &call.v;
                    e.stmts.push(quote!(let #v = #run;));
                }
            }
        } else {
            e.stmts.push(self.inline_call(id, &call));
        }
    }

    /// Node `id`'s call when `plan` (an expression of type `&Plan`) runs
    /// it, its value bound to its local as an `Option`.
    fn guarded_call(&self, id: NodeId, call: &Call, plan: TokenStream) -> TokenStream {
        let v = &call.v;
        let run = self.guarded(id, call, plan);
        quote!(let mut #v = #run;)
    }

    /// Node `id`'s call as an expression: `Some` of its value when `plan`
    /// (an expression of type `&Plan`) runs it.
    fn guarded(&self, id: NodeId, call: &Call, plan: TokenStream) -> TokenStream {
        let observed = self.observed(id, call);
        let result = &call.result;
        quote! {
            if #plan.is_live(#id) {
                #observed
                ::core::option::Option::Some(#result)
            } else {
                ::core::option::Option::None
            }
        }
    }

    /// Node `id`'s call on the calling thread, its value bound to its
    /// local.
    fn inline_call(&self, id: NodeId, call: &Call) -> TokenStream {
        let observed = self.observed(id, call);
        let (v, result) = (&call.v, &call.result);
        quote! {
            #observed
            let #v = #result;
        }
    }

    /// Node `id`'s checked arguments and its call, between the observer's
    /// `node_begin` and `node_end`: its result in `__value`.
    fn observed(&self, id: NodeId, call: &Call) -> TokenStream {
        let obs = &self.obs;
        let Call {
            guards, compute, ..
        } = call;
        quote! {
            #(#guards)*
            #obs.node_begin(#id);
            #compute
            #obs.node_end(#id);
        }
    }

    /// A parallel run's waves, one emitter per step of the frame: each
    /// [`Step::Wave`]'s units at once, the phase decided where its
    /// [`Step::DecidePhase`] is.
    fn emit_waves(&self, e: &mut Emitted<'_>, par: &Parallel) {
        let c = self.cx.c;
        for step in self.steps {
            let units = match step {
                Step::Wave(units) => units,
                Step::DecidePhase => {
                    e.phase_before();
                    continue;
                }
                _ => continue,
            };
            // A pipelined frame's second stage lets the next frame's first
            // stage have its turn before each wave.
            if matches!(self.part, Part::StreamB(_)) {
                e.stmts.push(quote!(#c::__private::yield_to_first_stage();));
            }
            // A fused group runs alone (its strips use every core), before
            // the other units of its wave, which read none of its values.
            let mut singles = Vec::new();
            for unit in units {
                match *unit {
                    Unit::Call(id) => singles.push(id),
                    Unit::Group(k) => {
                        let first = self
                            .fusion
                            .and_then(|f| f.plan.groups.get(k)?.nodes.first());
                        if let Some(block) = first.and_then(|id| par.groups.get(id)) {
                            e.stmts.push(block.clone());
                        }
                    }
                }
            }
            e.stmts.push(wave_stmts(c, &self.obs, &singles, &par.jobs));
        }
    }
}

/// What [`Body::nodes`] has emitted so far, and what it still owes.
struct Emitted<'s> {
    stmts: &'s mut Vec<TokenStream>,
    /// A parallel run's jobs and groups, emitted wave by wave at the end.
    parallel: Option<Parallel>,
    /// Per fused group: its members' own calls, gathered in order.
    fallbacks: Vec<Vec<(NodeId, TokenStream)>>,
    /// The statements deciding the frame's phase (a rated mode).
    mask: Option<TokenStream>,
    /// Whether they are still to be emitted.
    mask_pending: bool,
}

impl Emitted<'_> {
    /// The phase's statements, once, before the first work only some phases
    /// run.
    fn phase_before(&mut self) {
        if let (true, Some(m)) = (self.mask_pending, &self.mask) {
            self.stmts.push(m.clone());
            self.mask_pending = false;
        }
    }
}

/// What a check is given: a reference to a value, or a type.
pub(crate) enum Probe {
    /// An expression of type `&T`.
    Value(TokenStream),
    /// The type `T`.
    Type(TokenStream),
}

/// What a check is of: it says which in its error.
#[derive(Clone, Copy)]
pub(crate) enum Check {
    Value,
    Input,
    State,
}

/// Evidence (a `cortex::__private::Proof`) that the probed value or type
/// may cross threads, checked at `at` (the node's, input's or state's
/// name): one that is not `Send + Sync` is one error there, in the
/// pipeline's words. Every check of one declaration is spanned alike, so
/// rustc prints the error once.
pub(crate) fn parallel_check(probe: Probe, check: Check, at: Span) -> TokenStream {
    let cp = crate::krate::path_at(at);
    // Mixed-site like the locals it borrows, so the check keeps the
    // declaration's span instead of falling back to the whole invocation.
    let check_at = Span::mixed_site().located_at(at);
    let method = Ident::new(
        match check {
            Check::Value => "parallel_value",
            Check::Input => "parallel_input",
            Check::State => "parallel_state",
        },
        check_at,
    );
    let probe = match probe {
        Probe::Value(place) => quote_spanned!(check_at=> #cp::__private::ParallelProbe(#place)),
        Probe::Type(ty) => quote_spanned!(check_at=> #cp::__private::TypeProbe::<#ty>::new()),
    };
    quote_spanned! {check_at=>
        {
            #[allow(unused_imports)]
            use #cp::__private::{ParallelOk as _, ParallelRefused as _};
            (&#probe).#method()
        }
    }
}
